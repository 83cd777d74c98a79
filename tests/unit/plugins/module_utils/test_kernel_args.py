# -*- coding: utf-8 -*-
"""kernel_args: kernel quoting, the managed-args rules, the hugepage pools and what needs a reboot."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import (
    MANAGED_KERNEL_ARGS,
    CmdlineError,
    added_removed,
    needs_reboot,
    owned_tokens,
    parse_arg,
    rewrite_tokens,
    running_ownership,
    size_key,
    split_cmdline,
    validate_args,
    validate_names,
    wanted_strings,
)
from ansible_collections.maitred.rke2_numa.plugins.modules import boot_params
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import planner
from ansible_collections.maitred.rke2_numa.tests.fixtures.kernel_args_cases import FULL, ISO, M, SHELL_CHARS, WANTED, w


# ----------------------------------------------------------------- one home


def test_the_planner_uses_the_one_managed_list():
    assert planner.MANAGED_KERNEL_ARGS is MANAGED_KERNEL_ARGS
    doc = yaml.safe_load(boot_params.DOCUMENTATION)["options"]
    assert doc["managed"]["default"] == list(MANAGED_KERNEL_ARGS) == boot_params.ARGUMENT_SPEC["managed"]["default"]


# ----------------------------------------------------------------- parsing


@pytest.mark.parametrize("text, tokens", [
    ("", []),
    ("BOOT_IMAGE=/vmlinuz ro  quiet\n", ["BOOT_IMAGE=/vmlinuz", "ro", "quiet"]),
    ('foo="a b" bar', ['foo="a b"', "bar"]),
    ('"foo=a b" bar', ['"foo=a b"', "bar"]),
    ("isolcpus=1 isolcpus=2", ["isolcpus=1", "isolcpus=2"]),
    ("a\tb\nc", ["a", "b", "c"]),
])
def test_split_cmdline_as_the_kernel(text, tokens):
    assert split_cmdline(text) == tokens


@pytest.mark.parametrize("token, parsed", [
    ("quiet", ("quiet", None)),
    ("isolcpus=managed_irq,1-3", ("isolcpus", "managed_irq,1-3")),
    ('foo="a b"', ("foo", "a b")),
    ('"foo=a b"', ("foo", "a b")),
    ('"flag"', ("flag", None)),
    ("foo=a=b", ("foo", "a=b")),
    ("foo=", ("foo", "")),
])
def test_parse_arg_strips_quotes_like_next_arg(token, parsed):
    assert parse_arg(token) == parsed


# ----------------------------------------------------------------- validation


def test_validate_args_keeps_order_and_flags():
    assert w(ISO, "hugepagesz=1G", "hugepages=0:16,1:16", "nohz_full") == [
        ("isolcpus", "managed_irq,1-55,57-111"), ("hugepagesz", "1G"), ("hugepages", "0:16,1:16"), ("nohz_full", None)]


@pytest.mark.parametrize("char", SHELL_CHARS, ids=repr)
@pytest.mark.parametrize("template", ["isolcpus=1-3{}reboot", "isolcpus={}", "isol{}cpus=1-3", "nohz_full{}"])
def test_validate_args_refuses_every_character_kernel_args_do_not_use(char, template):
    item = template.format(char)
    with pytest.raises(CmdlineError) as e:
        validate_args(WANTED[1:] + [item], M)
    assert str(e.value).startswith("kernel arg %r: character %r is not allowed" % (item, char))


@pytest.mark.parametrize("item", [
    "isolcpus=managed_irq,domain,1-3,5,8-15:2/4", "isolcpus=nohz,managed_irq,1-55,57-111", "nohz_full=1-55,57-111",
    "rcu_nocbs=1-3,5", "irqaffinity=0,56", "default_hugepagesz=1G", "hugepagesz=2M", "hugepages=0:16,1:16",
    "hugepages=512", "nohz_full", "irqaffinity=0.5_a=b",
])
def test_validate_args_allows_what_managed_kernel_args_use(item):
    args = ["hugepagesz=2M", item] if item.startswith("hugepages=") else [item]  # a count follows its size
    assert wanted_strings(validate_args(args, M)) == args


@pytest.mark.parametrize("item, fragment", [
    ("isolcpus=", "has an empty value"),
    ("=1-3", "does not start with a kernel parameter name"),
    ("", "is not a name=value string"),
    ("mitigations=off", "mitigations is not a kernel argument this collection manages"),
])
def test_validate_args_refuses(item, fragment):
    with pytest.raises(CmdlineError) as e:
        validate_args([item], M)
    assert fragment in str(e.value)


def test_validate_args_refuses_a_name_given_twice_even_spelled_with_a_dash():
    with pytest.raises(CmdlineError, match="nohz-full is given twice"):
        validate_args(["nohz_full=1", "nohz-full=2"], M)


def test_validate_names():
    assert validate_names(["isolcpus", "nohz_full"]) == ["isolcpus", "nohz_full"]
    for bad in ([], ["iso cpus"], ["a|b"]):
        with pytest.raises(CmdlineError):
            validate_names(bad)


# ----------------------------------------------------------------- the rules


RUNNING = "BOOT_IMAGE=/boot/vmlinuz-6.1.0-28-amd64 root=UUID=2f0c ro quiet " + " ".join(WANTED)


@pytest.mark.parametrize("running, reboot", [
    (RUNNING, False),
    (RUNNING + " mitigations=off", False),  # other args are not ours
    (RUNNING.replace("nohz_full=1-55,57-111", ""), True),  # wanted arg missing
    (RUNNING.replace("irqaffinity=0,56", "irqaffinity=0"), True),  # another value
    (RUNNING + " isolcpus=1-3", True),  # a second value
    (RUNNING + " " + ISO, True),  # given twice, even with the wanted value
    (RUNNING.replace("hugepages=0:16,1:16", 'hugepages="0:16,1:16"'), False),  # quotes are not part of the value
    (RUNNING.replace("nohz_full=", "nohz-full="), False),  # - and _ alike
    (RUNNING + " -- isolcpus=1-3", False),  # after -- it is init's
    (RUNNING.replace("hugepagesz=1G hugepages=0:16,1:16", "hugepages=0:16,1:16 hugepagesz=1G"), True),  # order
    (RUNNING.replace("quiet " + ISO, ISO + " quiet"), False),  # other args in between
])
def test_needs_reboot(running, reboot):
    assert needs_reboot(split_cmdline(running), w(*WANTED), M) is reboot


def test_needs_reboot_when_a_stale_managed_arg_runs():
    assert needs_reboot(split_cmdline("ro isolcpus=1-3"), [], M) is True
    assert needs_reboot(split_cmdline("ro quiet"), [], M) is False


@pytest.mark.parametrize("before, after", [
    ("ro quiet", "ro quiet isolcpus=2-7 nohz_full=2-7"),  # add
    ("ro isolcpus=1-3 quiet", "ro quiet isolcpus=2-7 nohz_full=2-7"),  # replace
    ("ro isolcpus=1-3 isolcpus=2-7 quiet", "ro quiet isolcpus=2-7 nohz_full=2-7"),  # never duplicate
    ("ro hugepages=4 quiet", "ro hugepages=4 quiet isolcpus=2-7 nohz_full=2-7"),  # the host's pool (default size)
    ("ro nohz-full=1 quiet mitigations=off", "ro quiet mitigations=off isolcpus=2-7 nohz_full=2-7"),  # others stay
    ("ro quiet -- single", "ro quiet isolcpus=2-7 nohz_full=2-7 -- single"),
])
def test_rewrite_tokens(before, after):
    assert " ".join(rewrite_tokens(split_cmdline(before), w("isolcpus=2-7", "nohz_full=2-7"), M)) == after


def test_added_removed_over_locations():
    locations = [["isolcpus=1-3", "hugepages=4"], ["isolcpus=2-7"]]
    assert added_removed(locations, w("isolcpus=2-7", "nohz_full=2-7")) == (
        ["isolcpus=2-7", "nohz_full=2-7"], ["isolcpus=1-3", "hugepages=4"])
    assert added_removed([["isolcpus=2-7"]], w("isolcpus=2-7")) == ([], [])


# ----------------------------------------------------------------- hugepage pools the host already has


@pytest.mark.parametrize("running, reboot", [
    (RUNNING.replace("quiet", "hugepagesz=2M hugepages=1024 quiet"), False),  # the host's pool is not ours
    (RUNNING.replace("quiet", "default_hugepagesz=2M quiet").replace(" default_hugepagesz=1G", ""), True),  # our default is not set
    (RUNNING.replace("hugepages=0:16,1:16", "hugepagesz=2M hugepages=0:16,1:16"), True),  # our count runs on a 2M pool
])
def test_needs_reboot_looks_only_at_the_pools_we_own(running, reboot):
    assert needs_reboot(split_cmdline(running), w(*WANTED), M) is reboot


def test_needs_reboot_without_hugepages_ignores_the_hosts_pool_and_default():
    running = split_cmdline("ro default_hugepagesz=2M hugepagesz=2M hugepages=1024 " + " ".join(FULL))
    assert needs_reboot(running, w(*FULL), M) is False


def test_validate_args_refuses_a_count_without_its_size():
    with pytest.raises(CmdlineError, match="hugepages=0:16 counts pages of the hugepagesz= before it"):
        validate_args(["isolcpus=1", "hugepages=0:16"], M)
    with pytest.raises(CmdlineError, match="hugepagesz=huge is not a size"):
        validate_args(["hugepagesz=huge", "hugepages=0:16"], M)
    assert w("default_hugepagesz=1G", "hugepages=0:16") == [("default_hugepagesz", "1G"), ("hugepages", "0:16")]


@pytest.mark.parametrize("size, key", [("1G", 1 << 30), ("1g", 1 << 30), ("1024M", 1 << 30), ("1GB", 1 << 30),
                                       ("2048k", 2 << 20), ("2097152", 2 << 20), ("foo", "?foo"), ("", "?")])
def test_size_key_reads_sizes_as_memparse(size, key):
    assert size_key(size) == key


def test_running_ownership_counts_a_removed_pool_until_the_host_keeps_one_of_that_size():
    history = [("hugepagesz", "1G"), ("default_hugepagesz", "1G")]
    running = split_cmdline("ro hugepagesz=2M hugepages=1024 " + " ".join(WANTED))
    own = running_ownership(w(*FULL), M, history, [split_cmdline("ro hugepagesz=2M hugepages=1024")])
    assert owned_tokens(running, w(*FULL), M, own) == WANTED and needs_reboot(running, w(*FULL), M, own)
    own = running_ownership(w(*FULL), M, history, [split_cmdline("ro default_hugepagesz=1G hugepagesz=1G hugepages=2")])
    assert owned_tokens(running, w(*FULL), M, own) == FULL and not needs_reboot(running, w(*FULL), M, own)


def test_validate_names_keeps_the_hugepage_names_together():
    assert validate_names(["isolcpus", "hugepagesz", "hugepages"]) == ["isolcpus", "hugepagesz", "hugepages"]
    for bad in (["hugepages"], ["hugepagesz"], ["default_hugepagesz"], ["default_hugepagesz", "hugepages"]):
        with pytest.raises(CmdlineError, match="the collection manages hugepagesz and hugepages together"):
            validate_names(bad)
