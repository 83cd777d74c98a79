# -*- coding: utf-8 -*-
"""boot_grubby: grubby --info=ALL, what grubby makes of the args, and the grubby commands."""

from __future__ import annotations

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_grubby import (
    grubby_update_args,
    parse_grubby_info,
    plan_grubby,
)
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import (
    CmdlineError,
    added_removed,
    owned_tokens,
)
from ansible_collections.maitred.rke2_numa.tests.fixtures.kernel_args_cases import FULL, HP, M, WANTED, w


# ----------------------------------------------------------------- grubby


GRUBBY_INFO = """\
index=0
kernel="/boot/vmlinuz-5.14.0-427.13.1.el9_4.x86_64"
args="ro crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M resume=/dev/mapper/rl-swap rd.lvm.lv=rl/root isolcpus=1-3 hugepages=4"
root="/dev/mapper/rl-root"
initrd="/boot/initramfs-5.14.0-427.13.1.el9_4.x86_64.img $tuned_initrd"
title="Rocky Linux (5.14.0-427.13.1.el9_4.x86_64) 9.4 (Blue Onyx)"
id="3f9c-5.14.0-427.13.1.el9_4.x86_64"
index=1
kernel="/boot/vmlinuz-0-rescue-3f9c"
args="ro crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M isolcpus=2-7"
root="/dev/mapper/rl-root"
initrd="/boot/initramfs-0-rescue-3f9c.img"
title="Rocky Linux (0-rescue-3f9c) 9.4 (Blue Onyx)"
id="3f9c-0-rescue"
"""


def test_parse_grubby_info_real_and_old_format():
    entries = parse_grubby_info(GRUBBY_INFO)
    assert [e["index"] for e in entries] == [0, 1]
    assert entries[0]["kernel"] == "/boot/vmlinuz-5.14.0-427.13.1.el9_4.x86_64"
    assert entries[0]["root"] == "/dev/mapper/rl-root" and "isolcpus=1-3" in entries[0]["args"]
    old = parse_grubby_info('index=0\nkernel=/boot/vmlinuz-3.10.0\nargs="ro quiet isolcpus=1"\nroot=/dev/sda1\n'
                            "initrd=/boot/initramfs-3.10.0.img\ntitle=CentOS\nindex=1\nnon linux entry\n")
    assert old[0]["kernel"] == "/boot/vmlinuz-3.10.0" and old[0]["args"] == ["ro", "quiet", "isolcpus=1"]
    assert "kernel" not in old[1]


@pytest.mark.parametrize("before, add, remove, after", [
    ("ro isolcpus=1", ["isolcpus=2"], [], "ro isolcpus=2"),  # --args replaces a value
    ("ro isolcpus=1 quiet isolcpus=3", ["isolcpus=2"], [], "ro quiet isolcpus=2"),  # every value
    ("ro isolcpus quiet", ["isolcpus=2"], [], "ro quiet isolcpus=2"),  # and a bare flag
    ("ro isolcpus=1 isolcpus=1", ["isolcpus=1"], [], "ro isolcpus=1"),  # never duplicates
    ("ro hugepages=4 hugepages=8 hugepagesz=1G", [], ["hugepages"], "ro hugepagesz=1G"),  # bare name: every value
    ("ro isolcpus=1 isolcpus=1", [], ["isolcpus=1"], "ro isolcpus=1"),  # exact token: first one
    ("ro default_hugepagesz=1G", ["hugepagesz=2M"], [], "ro default_hugepagesz=1G hugepagesz=2M"),  # whole names
])
def test_grubby_update_args_semantics(before, add, remove, after):
    assert " ".join(grubby_update_args(before.split(), add, remove)) == after


def test_plan_grubby_adds_replaces_and_removes_over_every_entry():
    entries = parse_grubby_info(GRUBBY_INFO)
    plan = plan_grubby(entries, None, w("isolcpus=2-7", "nohz_full=2-7"), M)
    assert plan["commands"] == [["grubby", "--update-kernel=ALL", "--args=isolcpus=2-7 nohz_full=2-7",
                                 "--remove-args=isolcpus=1-3"]]
    for dummy, args in plan["entries"]:
        assert owned_tokens(args, w("isolcpus=2-7", "nohz_full=2-7"), M) == ["isolcpus=2-7", "nohz_full=2-7"]
        assert args[:2] == ["ro", "crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M"]
    assert "hugepages=4" in plan["entries"][0][1]  # the host's pool of the default size
    assert added_removed(plan["locations"], w("isolcpus=2-7", "nohz_full=2-7")) == (
        ["isolcpus=2-7", "nohz_full=2-7"], ["isolcpus=1-3"])
    done = [dict(e, args=args) for e, args in plan["entries"]]
    assert plan_grubby(done, None, w("isolcpus=2-7", "nohz_full=2-7"), M)["commands"] == []


def test_plan_grubby_state_absent_and_kernel_cmdline():
    entries = parse_grubby_info(GRUBBY_INFO)
    plan = plan_grubby(entries, "root=/dev/mapper/rl-root ro isolcpus=1-3\n", [], M)
    assert plan["commands"] == [["grubby", "--update-kernel=ALL", "--remove-args=isolcpus"]]  # hugepages=4 is the host's
    assert plan["files"] == [{"path": "etc/kernel/cmdline", "before": "root=/dev/mapper/rl-root ro isolcpus=1-3\n",
                              "after": "root=/dev/mapper/rl-root ro\n", "mode": None}]
    assert plan_grubby([], None, [], M) == {"files": [], "commands": [], "locations": [], "entries": [], "after": [],
                                            "history": []}


def test_plan_grubby_only_passes_exact_tokens_grubby_can_match():
    entries = [{"kernel": "/boot/vmlinuz", "args": ["ro", "isolcpus=1-3", "irqaffinity=0(x)"]}]
    plan = plan_grubby(entries, None, w("isolcpus=2", "irqaffinity=0"), M)
    assert plan["commands"] == [["grubby", "--update-kernel=ALL", "--args=isolcpus=2 irqaffinity=0", "--remove-args=isolcpus=1-3"]]
    assert plan["entries"][0][1] == ["ro", "isolcpus=2", "irqaffinity=0"]


def test_plan_grubby_puts_every_wanted_arg_back_in_order_and_fixes_spelling():
    entries = [{"kernel": "/boot/vmlinuz", "args": ["ro", "hugepagesz=1G", "hugepages=0:4", "nohz-full=1"]}]
    plan = plan_grubby(entries, None, w("nohz_full=1", "hugepagesz=1G", "hugepages=0:16"), M)
    assert plan["commands"] == [["grubby", "--update-kernel=ALL", "--args=nohz_full=1 hugepagesz=1G hugepages=0:16",
                                 "--remove-args=nohz-full"]]
    assert plan["entries"][0][1] == ["ro", "nohz_full=1", "hugepagesz=1G", "hugepages=0:16"]
    in_order = [{"kernel": "/boot/vmlinuz", "args": ["ro", "nohz-full=1", "quiet", "hugepagesz=1G", "hugepages=0:16"]}]
    assert plan_grubby(in_order, None, w("nohz_full=1", "hugepagesz=1G", "hugepages=0:16"), M)["commands"] == []


# ----------------------------------------------------------------- hugepage pools the host already has


def test_plan_grubby_keeps_the_hosts_other_pools():
    entries = [{"kernel": "/boot/vmlinuz", "args": ["ro", "hugepagesz=2M", "hugepages=1024", "isolcpus=1-3", "quiet"]}]
    plan = plan_grubby(entries, None, w(*WANTED), M)
    assert plan["entries"][0][1] == ["ro", "quiet", "hugepagesz=2M", "hugepages=1024"] + WANTED
    assert plan["commands"] == [["grubby", "--update-kernel=ALL", "--args=hugepagesz=2M hugepages=1024 " + " ".join(WANTED),
                                 "--remove-args=isolcpus=1-3"]]


def test_plan_grubby_gives_each_entry_its_own_pools():
    entries = [{"index": 0, "kernel": "/boot/vmlinuz-a", "args": ["ro", "hugepagesz=2M", "hugepages=64", "isolcpus=1"]},
               {"index": 1, "kernel": "/boot/vmlinuz-b", "args": ["ro", "isolcpus=1"]}]
    plan = plan_grubby(entries, None, w(*WANTED), M)
    assert plan["commands"] == [
        ["grubby", "--update-kernel=0", "--args=hugepagesz=2M hugepages=64 " + " ".join(WANTED), "--remove-args=isolcpus=1"],
        ["grubby", "--update-kernel=1", "--args=" + " ".join(WANTED), "--remove-args=isolcpus=1"]]
    assert [args for dummy, args in plan["entries"]] == [["ro", "hugepagesz=2M", "hugepages=64"] + WANTED, ["ro"] + WANTED]
    done = [dict(e, args=args) for e, args in plan["entries"]]
    assert plan_grubby(done, None, w(*WANTED), M)["commands"] == []
    # the hugepage args stay as they are: one command for every entry, whatever their pools
    plan = plan_grubby(done, None, w(*(FULL[:3] + HP)), M)
    assert plan["commands"] == [["grubby", "--update-kernel=ALL", "--args=" + " ".join(FULL[:3]), "--remove-args=irqaffinity"]]
    assert plan_grubby([dict(e, args=args) for e, args in plan["entries"]], None, w(*(FULL[:3] + HP)), M)["commands"] == []


def test_plan_grubby_refuses_to_put_back_a_host_pool_with_characters_grubby_cannot_take():
    entries = [{"index": 0, "kernel": "/boot/vmlinuz", "args": ["ro", 'hugepagesz="2M"', "hugepages=64"]}]
    with pytest.raises(CmdlineError, match="grubby cannot put back the host's hugepage arg hugepagesz=\"2M\""):
        plan_grubby(entries, None, w(*WANTED), M)
