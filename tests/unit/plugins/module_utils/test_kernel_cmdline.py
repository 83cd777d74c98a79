# -*- coding: utf-8 -*-
"""kernel_cmdline: kernel quoting, the managed-args rules, and each boot method's rewrite.

The Debian drop-in is checked against real grub files the way grub-mkconfig
uses them: /etc/default/grub and then every /etc/default/grub.d/*.cfg sourced
by sh (and by dash and bash when they are installed)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils import kernel_cmdline as kc
from ansible_collections.maitred.rke2_numa.plugins.modules import boot_params
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import planner

M = kc.MANAGED_KERNEL_ARGS
ISO = "isolcpus=managed_irq,1-55,57-111"
WANTED = [ISO, "nohz_full=1-55,57-111", "rcu_nocbs=1-55,57-111", "irqaffinity=0,56",
          "default_hugepagesz=1G", "hugepagesz=1G", "hugepages=0:16,1:16"]


def w(*args):
    return kc.validate_args(list(args), M)


# Debian 12 (bookworm) /etc/default/grub as installed, plus a hand-set isolcpus.
DEBIAN12_GRUB = """\
# If you change this file, run 'update-grub' afterwards to update
# /boot/grub/grub.cfg.
# For full documentation of the options in this file, see:
#   info -f grub -n 'Simple configuration'

GRUB_DEFAULT=0
GRUB_TIMEOUT=5
GRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`
GRUB_CMDLINE_LINUX_DEFAULT="isolcpus=1-3 quiet"
GRUB_CMDLINE_LINUX=""

# If your computer has a touchscreen, you may want to enable the
# OS prober to detect other OSes
#GRUB_DISABLE_OS_PROBER=false

# Uncomment to enable BadRAM filtering, modify to suit your needs
# This works with Linux (no patch required) and with any kernel that obtains
# the memory map information from GRUB (GNU Mach, kernel of FreeBSD ...)
#GRUB_BADRAM="0x01234567,0xfefefefe,0x89abcdef,0xefefefef"

# Uncomment to disable graphical terminal (grub-pc only)
#GRUB_TERMINAL=console

# The resolution used on graphical terminal
# note that you can use only modes which your graphic card supports via VBE
# you can see them in real GRUB with the command `vbeinfo'
#GRUB_GFXMODE=640x480

# Uncomment if you don't want GRUB to pass "root=UUID=xxx" parameter to Linux
#GRUB_DISABLE_LINUX_UUID=true

# Uncomment to disable generation of recovery mode menu entries
#GRUB_DISABLE_RECOVERY="true"

# Uncomment to get a beep at grub start
#GRUB_INIT_TUNE="480 440 1"
"""

# SLE Micro 5.5 /etc/default/grub (as installed by the pre-built images).
SLE_MICRO_GRUB = """\
# If you change this file, run 'grub2-mkconfig -o /boot/grub2/grub.cfg' afterwards to update
# /boot/grub2/grub.cfg.

# Uncomment to set your own custom distributor. If you leave it unset or empty, the default
# policy is to determine the value from /etc/os-release
GRUB_DISTRIBUTOR=
GRUB_DEFAULT=saved
GRUB_HIDDEN_TIMEOUT=0
GRUB_HIDDEN_TIMEOUT_QUIET=true
GRUB_TIMEOUT=10
GRUB_CMDLINE_LINUX_DEFAULT="splash=silent quiet security=selinux selinux=1 isolcpus=2-3 mitigations=auto"
GRUB_CMDLINE_LINUX=""
GRUB_TERMINAL=console
GRUB_USE_LINUXEFI=true
GRUB_DISABLE_OS_PROBER="true"
GRUB_ENABLE_CRYPTODISK="n"
SUSE_BTRFS_SNAPSHOT_BOOTING="true"
"""

SHELLS = [s for s in ("sh", "dash", "bash") if shutil.which(s)]


def source_grub(root, shell):
    """What grub-mkconfig sees: /etc/default/grub, then every grub.d/*.cfg that exists, sourced in order."""
    script = ('. ./etc/default/grub; for f in ./etc/default/grub.d/*.cfg; do if [ -e "$f" ]; then . "$f"; fi; done; '
              'printf "%s\\n" "$GRUB_CMDLINE_LINUX" "$GRUB_CMDLINE_LINUX_DEFAULT"')
    out = subprocess.run([shell, "-c", script], cwd=str(root), capture_output=True, text=True, check=True).stdout
    linux, default = out.split("\n")[:2]
    return linux, default


def write_root(tmp_path, grub=DEBIAN12_GRUB, dropins=None):
    root = tmp_path / "root"
    (root / "etc/default/grub.d").mkdir(parents=True)
    (root / "etc/default/grub").write_text(grub)
    for name, text in (dropins or {}).items():
        (root / "etc/default/grub.d" / name).write_text(text)
    return root


# ----------------------------------------------------------------- one home


def test_the_planner_uses_the_one_managed_list():
    assert planner.MANAGED_KERNEL_ARGS is kc.MANAGED_KERNEL_ARGS
    doc = yaml.safe_load(boot_params.DOCUMENTATION)["options"]
    assert doc["managed"]["default"] == list(kc.MANAGED_KERNEL_ARGS) == boot_params.ARGUMENT_SPEC["managed"]["default"]


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
    assert kc.split_cmdline(text) == tokens


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
    assert kc.parse_arg(token) == parsed


def test_managed_tokens_by_name_with_dashes_and_repeats_until_init_args():
    tokens = kc.split_cmdline('BOOT_IMAGE=/vmlinuz ro isolcpus=1 nohz-full=1 quiet hugepages="0:2" isolcpus=2 -- isolcpus=9')
    assert kc.managed_tokens(tokens, M) == ["isolcpus=1", "nohz-full=1", "hugepages=0:2", "isolcpus=2"]
    assert kc.values_by_name(tokens, M) == {"isolcpus": ["1", "2"], "nohz_full": ["1"], "hugepages": ["0:2"]}


def test_parse_os_release():
    text = 'NAME="SL Micro"\nVERSION="6.0"\nID="sl-micro"\nID_LIKE="suse"\n# comment\nPRETTY_NAME=\'SUSE Linux Micro 6.0\'\n'
    assert kc.parse_os_release(text) == {"NAME": "SL Micro", "VERSION": "6.0", "ID": "sl-micro", "ID_LIKE": "suse",
                                         "PRETTY_NAME": "SUSE Linux Micro 6.0"}


@pytest.mark.parametrize("mounts, tu, expected", [
    ("/dev/vda3 / btrfs ro,relatime,subvol=/@/.snapshots/1/snapshot 0 0\n", True, True),
    ("/dev/vda3 / btrfs rw,relatime 0 0\n", True, False),
    ("/dev/vda3 / btrfs ro,relatime 0 0\n", False, False),
    ("/dev/vda3 / ext4 ro 0 0\n", True, False),
    ("", True, False),
])
def test_is_transactional(mounts, tu, expected):
    assert kc.is_transactional(mounts, tu) is expected


@pytest.mark.parametrize("release, transactional, method", [
    ({"ID": "debian"}, False, "grub_d"),
    ({"ID": "ubuntu", "ID_LIKE": "debian"}, False, "grub_d"),
    ({"ID": "linuxmint", "ID_LIKE": "ubuntu debian"}, False, "grub_d"),
    ({"ID": "rhel", "ID_LIKE": "fedora"}, False, "grubby"),
    ({"ID": "rocky", "ID_LIKE": "rhel centos fedora"}, False, "grubby"),
    ({"ID": "almalinux"}, False, "grubby"),
    ({"ID": "centos"}, False, "grubby"),
    ({"ID": "fedora"}, False, "grubby"),
    ({"ID": "ol", "ID_LIKE": "fedora"}, False, "grubby"),
    ({"ID": "sle-micro", "ID_LIKE": "suse"}, False, "transactional_update"),
    ({"ID": "sl-micro", "ID_LIKE": "suse"}, False, "transactional_update"),
    ({"ID": "opensuse-microos", "ID_LIKE": "suse opensuse opensuse-tumbleweed"}, True, "transactional_update"),
    ({"ID": "opensuse-leap-micro", "ID_LIKE": "suse opensuse"}, True, "transactional_update"),
    ({"ID": "sles", "ID_LIKE": "suse"}, True, "transactional_update"),
])
def test_detect_method(release, transactional, method):
    assert kc.detect_method(release, transactional) == method


@pytest.mark.parametrize("release, transactional", [
    ({"ID": "arch"}, False),
    ({"ID": "sles", "ID_LIKE": "suse"}, False),
    ({}, False),
])
def test_unsupported_distro_is_named(release, transactional):
    with pytest.raises(kc.CmdlineError) as e:
        kc.detect_method(release, transactional)
    msg = str(e.value)
    assert "unsupported distribution: os-release ID=%r" % release.get("ID", "") in msg
    assert "debian, ubuntu (grub_d)" in msg and "rhel, centos, rocky, almalinux, fedora (grubby)" in msg
    assert "sle-micro" in msg and "transactional_update" in msg


# ----------------------------------------------------------------- validation


def test_validate_args_keeps_order_and_flags():
    assert w(ISO, "hugepagesz=1G", "hugepages=0:16,1:16", "nohz_full") == [
        ("isolcpus", "managed_irq,1-55,57-111"), ("hugepagesz", "1G"), ("hugepages", "0:16,1:16"), ("nohz_full", None)]


# Every character a shell (grub-mkconfig sources the drop-in and /etc/default/grub as
# root), the kernel's splitting, grubby's sed patterns or a glob would treat specially.
SHELL_CHARS = [";", "|", "&", "#", ">", "<", "(", ")", "*", "~", "!", "?", "[", "]", "{", "}", "^", "$", "`",
               "\\", '"', "'", " ", "\t", "\n", "\r", "\x00", "+", "@", "%", "\u00e9"]


@pytest.mark.parametrize("char", SHELL_CHARS, ids=repr)
@pytest.mark.parametrize("template", ["isolcpus=1-3{}reboot", "isolcpus={}", "isol{}cpus=1-3", "nohz_full{}"])
def test_validate_args_refuses_every_character_kernel_args_do_not_use(char, template):
    item = template.format(char)
    with pytest.raises(kc.CmdlineError) as e:
        kc.validate_args(WANTED[1:] + [item], M)
    assert str(e.value).startswith("kernel arg %r: character %r is not allowed" % (item, char))


@pytest.mark.parametrize("char", SHELL_CHARS, ids=repr)
def test_no_writer_renders_an_unvalidated_shell_character(char):
    bad = [("isolcpus", "1-3%sreboot" % char)]
    for render in (lambda: kc.render_grub_dropin(bad, M), lambda: kc.rewrite_default_grub(SLE_MICRO_GRUB, bad, M),
                   lambda: kc.rewrite_kernel_cmdline("ro quiet\n", bad, M),
                   lambda: kc.plan_grubby([{"kernel": "/boot/vmlinuz", "args": ["ro"]}], None, bad, M)):
        with pytest.raises(kc.CmdlineError, match="is not allowed"):
            render()


@pytest.mark.parametrize("item", [
    "isolcpus=managed_irq,domain,1-3,5,8-15:2/4", "isolcpus=nohz,managed_irq,1-55,57-111", "nohz_full=1-55,57-111",
    "rcu_nocbs=1-3,5", "irqaffinity=0,56", "default_hugepagesz=1G", "hugepagesz=2M", "hugepages=0:16,1:16",
    "hugepages=512", "nohz_full", "irqaffinity=0.5_a=b",
])
def test_validate_args_allows_what_managed_kernel_args_use(item):
    args = ["hugepagesz=2M", item] if item.startswith("hugepages=") else [item]  # a count follows its size
    assert kc.wanted_strings(kc.validate_args(args, M)) == args


@pytest.mark.parametrize("item, fragment", [
    ("isolcpus=", "has an empty value"),
    ("=1-3", "does not start with a kernel parameter name"),
    ("", "is not a name=value string"),
    ("mitigations=off", "mitigations is not a kernel argument this collection manages"),
])
def test_validate_args_refuses(item, fragment):
    with pytest.raises(kc.CmdlineError) as e:
        kc.validate_args([item], M)
    assert fragment in str(e.value)


def test_validate_args_refuses_a_name_given_twice_even_spelled_with_a_dash():
    with pytest.raises(kc.CmdlineError, match="nohz-full is given twice"):
        kc.validate_args(["nohz_full=1", "nohz-full=2"], M)


def test_validate_names():
    assert kc.validate_names(["isolcpus", "nohz_full"]) == ["isolcpus", "nohz_full"]
    for bad in ([], ["iso cpus"], ["a|b"]):
        with pytest.raises(kc.CmdlineError):
            kc.validate_names(bad)


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
    assert kc.needs_reboot(kc.split_cmdline(running), w(*WANTED), M) is reboot


def test_needs_reboot_when_a_stale_managed_arg_runs():
    assert kc.needs_reboot(kc.split_cmdline("ro isolcpus=1-3"), [], M) is True
    assert kc.needs_reboot(kc.split_cmdline("ro quiet"), [], M) is False


@pytest.mark.parametrize("before, after", [
    ("ro quiet", "ro quiet isolcpus=2-7 nohz_full=2-7"),  # add
    ("ro isolcpus=1-3 quiet", "ro quiet isolcpus=2-7 nohz_full=2-7"),  # replace
    ("ro isolcpus=1-3 isolcpus=2-7 quiet", "ro quiet isolcpus=2-7 nohz_full=2-7"),  # never duplicate
    ("ro hugepages=4 quiet", "ro hugepages=4 quiet isolcpus=2-7 nohz_full=2-7"),  # the host's pool (default size)
    ("ro nohz-full=1 quiet mitigations=off", "ro quiet mitigations=off isolcpus=2-7 nohz_full=2-7"),  # others stay
    ("ro quiet -- single", "ro quiet isolcpus=2-7 nohz_full=2-7 -- single"),
])
def test_rewrite_tokens(before, after):
    assert " ".join(kc.rewrite_tokens(kc.split_cmdline(before), w("isolcpus=2-7", "nohz_full=2-7"), M)) == after


def test_added_removed_over_locations():
    locations = [["isolcpus=1-3", "hugepages=4"], ["isolcpus=2-7"]]
    assert kc.added_removed(locations, w("isolcpus=2-7", "nohz_full=2-7")) == (
        ["isolcpus=2-7", "nohz_full=2-7"], ["isolcpus=1-3", "hugepages=4"])
    assert kc.added_removed([["isolcpus=2-7"]], w("isolcpus=2-7")) == ([], [])


# ----------------------------------------------------------------- grub_d against real grub files


def install_dropin(root, wanted, managed=M):
    (root / kc.DROPIN).write_text(kc.render_grub_dropin(wanted, managed))


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_replaces_the_hand_set_isolcpus_and_leaves_the_rest(tmp_path, shell):
    root = write_root(tmp_path)
    install_dropin(root, w(*WANTED))
    linux, default = source_grub(root, shell)
    cmdline = kc.split_cmdline(linux + " " + default)
    for arg in WANTED:
        name = arg.partition("=")[0]
        assert [t for t in cmdline if t.partition("=")[0] == name] == [arg], name
    assert linux == " ".join(WANTED)
    assert default == "quiet"


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_against_other_dropins_user_args_and_globs(tmp_path, shell):
    cloud = 'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT console=tty1 console=ttyS0"\n'
    user = 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX foo=* nohz-full=5 hugepages=4 mitigations=off"\n'
    root = write_root(tmp_path, dropins={"50-cloudimg-settings.cfg": cloud, "60-user.cfg": user})
    (root / "x-would-match-a-glob").write_text("")
    install_dropin(root, w("isolcpus=2-7", "nohz_full=2-7"))
    linux, default = source_grub(root, shell)
    assert linux == "foo=* hugepages=4 mitigations=off isolcpus=2-7 nohz_full=2-7"  # hugepages=4: the host's pool
    assert default == "quiet console=tty1 console=ttyS0"


@pytest.mark.parametrize("shell", SHELLS)
def test_absent_dropin_removes_every_managed_arg_it_owns(tmp_path, shell):
    grub = DEBIAN12_GRUB.replace('GRUB_CMDLINE_LINUX=""', 'GRUB_CMDLINE_LINUX="nohz_full=8 hugepagesz=2M hugepages=8 rootdelay=5"')
    root = write_root(tmp_path, grub=grub)
    install_dropin(root, [])
    assert source_grub(root, shell) == ("hugepagesz=2M hugepages=8 rootdelay=5", "quiet")  # a pool it does not plan stays


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_leaves_the_shell_as_it_found_it(tmp_path, shell):
    root = write_root(tmp_path)
    install_dropin(root, w("isolcpus=2-7"))
    script = ('. ./etc/default/grub; set -f; . ./etc/default/grub.d/99-rke2-numa.cfg; echo "[$-]"; set +f; '
              '. ./etc/default/grub.d/99-rke2-numa.cfg; echo "[$-]"; set | grep -c "^__rke2_numa" || true')
    out = subprocess.run([shell, "-c", script], cwd=str(root), capture_output=True, text=True, check=True).stdout.split()
    assert "f" in out[0] and "f" not in out[1]
    assert out[2] == "0"


def test_dropin_is_posix_sh_without_bashisms():
    text = kc.render_grub_dropin(w(*WANTED), M)
    assert text.startswith("# Managed by maitred.rke2_numa")
    for bashism in ("[[", "local ", "function ", "$'", "<<<", "${!"):
        assert bashism not in text
    if shutil.which("dash"):
        subprocess.run(["dash", "-n"], input=text, text=True, check=True)
    assert kc.dropin_args(text) == WANTED


def test_plan_grub_d_reports_what_changes_and_is_idempotent():
    plan = kc.plan_grub_d(DEBIAN12_GRUB, [], None, w("isolcpus=2-7"), M)
    assert plan["commands"] == [["update-grub"]]
    assert plan["files"][0]["path"] == "etc/default/grub.d/99-rke2-numa.cfg" and plan["files"][0]["mode"] == 0o644
    assert plan["locations"] == [["isolcpus=1-3"]]
    again = kc.plan_grub_d(DEBIAN12_GRUB, [], plan["files"][0]["after"], w("isolcpus=2-7"), M)
    assert again["files"] == [] and again["commands"] == []
    assert again["locations"] == [["isolcpus=2-7"]]
    other = kc.plan_grub_d(DEBIAN12_GRUB, [], plan["files"][0]["after"], w("isolcpus=2-5"), M)
    assert other["commands"] == [["update-grub"]] and kc.added_removed(other["locations"], w("isolcpus=2-5")) == (
        ["isolcpus=2-5"], ["isolcpus=2-7"])


def test_static_grub_cmdline_follows_simple_assignments():
    env = kc.static_grub_cmdline([DEBIAN12_GRUB, 'GRUB_CMDLINE_LINUX="${GRUB_CMDLINE_LINUX} hugepages=2" # note\n',
                                  "GRUB_CMDLINE_LINUX_DEFAULT=\"unbalanced\n"], M)
    assert env == {"GRUB_CMDLINE_LINUX": " hugepages=2", "GRUB_CMDLINE_LINUX_DEFAULT": "isolcpus=1-3 quiet"}


# ----------------------------------------------------------------- /etc/default/grub (SLE Micro) and /etc/kernel/cmdline


def test_rewrite_default_grub_puts_the_args_in_linux_default_only():
    new = kc.rewrite_default_grub(SLE_MICRO_GRUB, w("isolcpus=managed_irq,2-7", "nohz_full=2-7"), M)
    changed = [(a, b) for a, b in zip(SLE_MICRO_GRUB.splitlines(), new.splitlines()) if a != b]
    assert changed == [(
        'GRUB_CMDLINE_LINUX_DEFAULT="splash=silent quiet security=selinux selinux=1 isolcpus=2-3 mitigations=auto"',
        'GRUB_CMDLINE_LINUX_DEFAULT="splash=silent quiet security=selinux selinux=1 mitigations=auto '
        'isolcpus=managed_irq,2-7 nohz_full=2-7"')]
    assert kc.rewrite_default_grub(new, w("isolcpus=managed_irq,2-7", "nohz_full=2-7"), M) == new
    assert kc.rewrite_default_grub(new, [], M) == SLE_MICRO_GRUB.replace(" isolcpus=2-3", "")


@pytest.mark.parametrize("shell", SHELLS)
def test_rewritten_default_grub_still_sources(tmp_path, shell):
    text = SLE_MICRO_GRUB.replace('GRUB_CMDLINE_LINUX=""', "export GRUB_CMDLINE_LINUX='hugepagesz=1G hugepages=4 rd.shell=0' # note")
    root = write_root(tmp_path, grub=kc.rewrite_default_grub(text, w("hugepagesz=1G", "hugepages=0:8"), M))
    linux, default = source_grub(root, shell)
    assert linux == "rd.shell=0"
    assert default == "splash=silent quiet security=selinux selinux=1 mitigations=auto hugepagesz=1G hugepages=0:8"


def test_rewrite_default_grub_without_a_default_line_appends_one():
    assert kc.rewrite_default_grub('GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX="isolcpus=1"', w("isolcpus=2"), M) == (
        'GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX=""\nGRUB_CMDLINE_LINUX_DEFAULT="isolcpus=2"\n')
    assert kc.rewrite_default_grub("GRUB_TIMEOUT=5\n", [], M) == "GRUB_TIMEOUT=5\n"


@pytest.mark.parametrize("line", [
    'GRUB_CMDLINE_LINUX_DEFAULT="quiet\nsplash"',
    "GRUB_CMDLINE_LINUX_DEFAULT=$(cat /etc/cmdline)",
    'GRUB_CMDLINE_LINUX_DEFAULT="$(cat /etc/cmdline)"',
    "GRUB_CMDLINE_LINUX_DEFAULT=quiet splash",
])
def test_rewrite_default_grub_refuses_what_it_cannot_rewrite_safely(line):
    with pytest.raises(kc.CmdlineError, match="etc/default/grub line 1: cannot rewrite GRUB_CMDLINE_LINUX_DEFAULT"):
        kc.rewrite_default_grub(line + "\n", w("isolcpus=2"), M)


def test_rewrite_kernel_cmdline():
    text = "root=UUID=0a1b ro quiet isolcpus=1-3 hugepages=4\n"
    new = kc.rewrite_kernel_cmdline(text, w("isolcpus=2-7"), M)
    assert new == "root=UUID=0a1b ro quiet hugepages=4 isolcpus=2-7\n"  # hugepages=4: the host's pool
    assert kc.rewrite_kernel_cmdline(new, w("isolcpus=2-7"), M) is new
    assert kc.rewrite_kernel_cmdline("ro  quiet", [], M) == "ro  quiet"


def test_plan_transactional_grub_and_bls():
    plan = kc.plan_transactional(SLE_MICRO_GRUB, None, w("isolcpus=2-7"), M)
    assert plan["commands"] == [["transactional-update", "--continue", "grub.cfg"]]
    assert [f["path"] for f in plan["files"]] == ["etc/default/grub"]
    assert plan["locations"] == [["isolcpus=2-3"]]
    assert kc.plan_transactional(plan["files"][0]["after"], None, w("isolcpus=2-7"), M)["commands"] == []
    bls = kc.plan_transactional(SLE_MICRO_GRUB, "root=UUID=1 ro isolcpus=1\n", w("isolcpus=2-7"), M)
    assert bls["commands"] == [["sdbootutil", "update-all-entries"]]
    assert [f["path"] for f in bls["files"]] == ["etc/kernel/cmdline"]
    with pytest.raises(kc.CmdlineError, match="neither etc/default/grub nor etc/kernel/cmdline"):
        kc.plan_transactional(None, None, [], M)


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
    entries = kc.parse_grubby_info(GRUBBY_INFO)
    assert [e["index"] for e in entries] == [0, 1]
    assert entries[0]["kernel"] == "/boot/vmlinuz-5.14.0-427.13.1.el9_4.x86_64"
    assert entries[0]["root"] == "/dev/mapper/rl-root" and "isolcpus=1-3" in entries[0]["args"]
    old = kc.parse_grubby_info('index=0\nkernel=/boot/vmlinuz-3.10.0\nargs="ro quiet isolcpus=1"\nroot=/dev/sda1\n'
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
    assert " ".join(kc.grubby_update_args(before.split(), add, remove)) == after


def test_plan_grubby_adds_replaces_and_removes_over_every_entry():
    entries = kc.parse_grubby_info(GRUBBY_INFO)
    plan = kc.plan_grubby(entries, None, w("isolcpus=2-7", "nohz_full=2-7"), M)
    assert plan["commands"] == [["grubby", "--update-kernel=ALL", "--args=isolcpus=2-7 nohz_full=2-7",
                                 "--remove-args=isolcpus=1-3"]]
    for dummy, args in plan["entries"]:
        assert kc.owned_tokens(args, w("isolcpus=2-7", "nohz_full=2-7"), M) == ["isolcpus=2-7", "nohz_full=2-7"]
        assert args[:2] == ["ro", "crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M"]
    assert "hugepages=4" in plan["entries"][0][1]  # the host's pool of the default size
    assert kc.added_removed(plan["locations"], w("isolcpus=2-7", "nohz_full=2-7")) == (
        ["isolcpus=2-7", "nohz_full=2-7"], ["isolcpus=1-3"])
    done = [dict(e, args=args) for e, args in plan["entries"]]
    assert kc.plan_grubby(done, None, w("isolcpus=2-7", "nohz_full=2-7"), M)["commands"] == []


def test_plan_grubby_state_absent_and_kernel_cmdline():
    entries = kc.parse_grubby_info(GRUBBY_INFO)
    plan = kc.plan_grubby(entries, "root=/dev/mapper/rl-root ro isolcpus=1-3\n", [], M)
    assert plan["commands"] == [["grubby", "--update-kernel=ALL", "--remove-args=isolcpus"]]  # hugepages=4 is the host's
    assert plan["files"] == [{"path": "etc/kernel/cmdline", "before": "root=/dev/mapper/rl-root ro isolcpus=1-3\n",
                              "after": "root=/dev/mapper/rl-root ro\n", "mode": None}]
    assert kc.plan_grubby([], None, [], M) == {"files": [], "commands": [], "locations": [], "entries": [], "after": [],
                                               "history": []}


def test_plan_grubby_only_passes_exact_tokens_grubby_can_match():
    entries = [{"kernel": "/boot/vmlinuz", "args": ["ro", "isolcpus=1-3", "irqaffinity=0(x)"]}]
    plan = kc.plan_grubby(entries, None, w("isolcpus=2", "irqaffinity=0"), M)
    assert plan["commands"] == [["grubby", "--update-kernel=ALL", "--args=isolcpus=2 irqaffinity=0", "--remove-args=isolcpus=1-3"]]
    assert kc.managed_tokens(plan["entries"][0][1], M) == ["isolcpus=2", "irqaffinity=0"]


def test_plan_grubby_puts_every_wanted_arg_back_in_order_and_fixes_spelling():
    entries = [{"kernel": "/boot/vmlinuz", "args": ["ro", "hugepagesz=1G", "hugepages=0:4", "nohz-full=1"]}]
    plan = kc.plan_grubby(entries, None, w("nohz_full=1", "hugepagesz=1G", "hugepages=0:16"), M)
    assert plan["commands"] == [["grubby", "--update-kernel=ALL", "--args=nohz_full=1 hugepagesz=1G hugepages=0:16",
                                 "--remove-args=nohz-full"]]
    assert plan["entries"][0][1] == ["ro", "nohz_full=1", "hugepagesz=1G", "hugepages=0:16"]
    in_order = [{"kernel": "/boot/vmlinuz", "args": ["ro", "nohz-full=1", "quiet", "hugepagesz=1G", "hugepages=0:16"]}]
    assert kc.plan_grubby(in_order, None, w("nohz_full=1", "hugepagesz=1G", "hugepages=0:16"), M)["commands"] == []


# ----------------------------------------------------------------- hugepage pools the host already has

HP = WANTED[4:]  # the plan's pool: default_hugepagesz=1G hugepagesz=1G hugepages=0:16,1:16
FULL = WANTED[:4]


def dropin_line(tmp_path, linux, default="quiet", wanted=tuple(WANTED), shell="sh"):
    """The brief's check: sh -c '. /etc/default/grub; . drop-in; echo "$GRUB_CMDLINE_LINUX"' (and _DEFAULT)."""
    grub = DEBIAN12_GRUB.replace('GRUB_CMDLINE_LINUX=""', 'GRUB_CMDLINE_LINUX="%s"' % linux)
    root = write_root(tmp_path, grub=grub.replace('"isolcpus=1-3 quiet"', '"%s"' % default))
    install_dropin(root, w(*wanted))
    script = '. ./etc/default/grub; . ./etc/default/grub.d/99-rke2-numa.cfg; echo "$GRUB_CMDLINE_LINUX"; echo "$GRUB_CMDLINE_LINUX_DEFAULT"'
    out = subprocess.run([shell, "-c", script], cwd=str(root), capture_output=True, text=True, check=True).stdout
    return out.split("\n")[:2]


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_keeps_the_hosts_2m_pool_and_adds_the_1g_pool_once(tmp_path, shell):
    linux, default = dropin_line(tmp_path, "hugepagesz=2M hugepages=1024 isolcpus=1-3", shell=shell)
    assert linux == "hugepagesz=2M hugepages=1024 " + " ".join(WANTED)
    assert default == "quiet"


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_without_hugepages_leaves_the_hosts_pool_and_default_alone(tmp_path, shell):
    linux, default = dropin_line(tmp_path, "default_hugepagesz=2M hugepagesz=2M hugepages=1024", default="hugepagesz=1G hugepages=2 quiet",
                                 wanted=FULL, shell=shell)
    assert linux == "default_hugepagesz=2M hugepagesz=2M hugepages=1024 " + " ".join(FULL)
    assert default == "hugepagesz=1G hugepages=2 quiet"


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_replaces_the_hosts_1g_pool_and_keeps_the_2m_pool_in_either_variable(tmp_path, shell):
    linux, default = dropin_line(tmp_path, "hugepagesz=1G hugepages=4 mitigations=off", default="quiet hugepagesz=2M hugepages=512", shell=shell)
    assert linux == "mitigations=off " + " ".join(WANTED)
    assert default == "quiet hugepagesz=2M hugepages=512"


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_keeps_the_pool_a_replaced_default_hugepagesz_sized(tmp_path, shell):
    # default_hugepagesz=2M hugepages=512: 512 pages of 2M. The plan's default_hugepagesz=1G replaces the
    # default, so the count gets its size written out: hugepagesz=2M hugepages=512.
    linux, default = dropin_line(tmp_path, "default_hugepagesz=2M hugepages=512", shell=shell)
    assert linux == "hugepagesz=2M hugepages=512 " + " ".join(WANTED)


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_keeps_a_pool_split_across_the_two_variables_paired(tmp_path, shell):
    linux, default = dropin_line(tmp_path, "hugepagesz=2M", default="hugepages=512 quiet", shell=shell)
    assert linux == "hugepagesz=2M " + " ".join(WANTED)
    assert default == "hugepagesz=2M hugepages=512 quiet"  # not counted as 1G pages after ours


@pytest.mark.parametrize("running, reboot", [
    (RUNNING.replace("quiet", "hugepagesz=2M hugepages=1024 quiet"), False),  # the host's pool is not ours
    (RUNNING.replace("quiet", "default_hugepagesz=2M quiet").replace(" default_hugepagesz=1G", ""), True),  # our default is not set
    (RUNNING.replace("hugepages=0:16,1:16", "hugepagesz=2M hugepages=0:16,1:16"), True),  # our count runs on a 2M pool
])
def test_needs_reboot_looks_only_at_the_pools_we_own(running, reboot):
    assert kc.needs_reboot(kc.split_cmdline(running), w(*WANTED), M) is reboot


def test_needs_reboot_without_hugepages_ignores_the_hosts_pool_and_default():
    running = kc.split_cmdline("ro default_hugepagesz=2M hugepagesz=2M hugepages=1024 " + " ".join(FULL))
    assert kc.needs_reboot(running, w(*FULL), M) is False


@pytest.mark.parametrize("before, wanted, after", [
    ("ro hugepagesz=2M hugepages=1024 quiet", WANTED, "ro hugepagesz=2M hugepages=1024 quiet " + " ".join(WANTED)),
    ("ro default_hugepagesz=2M hugepagesz=2M hugepages=1024", FULL, "ro default_hugepagesz=2M hugepagesz=2M hugepages=1024 " + " ".join(FULL)),
    ("ro hugepagesz=1G hugepages=4 hugepagesz=2M hugepages=8", WANTED, "ro hugepagesz=2M hugepages=8 " + " ".join(WANTED)),
    ("ro default_hugepagesz=2M quiet hugepages=8", WANTED, "ro quiet hugepagesz=2M hugepages=8 " + " ".join(WANTED)),
])
def test_rewrite_kernel_cmdline_keeps_the_hosts_other_pools(before, wanted, after):
    assert kc.rewrite_kernel_cmdline(before + "\n", w(*wanted), M) == after + "\n"


def test_rewrite_default_grub_keeps_the_hosts_other_pools():
    text = SLE_MICRO_GRUB.replace("isolcpus=2-3", "hugepagesz=2M hugepages=1024 isolcpus=2-3")
    new = kc.rewrite_default_grub(text, w(*WANTED), M)
    assert ('GRUB_CMDLINE_LINUX_DEFAULT="splash=silent quiet security=selinux selinux=1 hugepagesz=2M hugepages=1024 '
            'mitigations=auto %s"' % " ".join(WANTED)) in new.splitlines()


def test_plan_grubby_keeps_the_hosts_other_pools():
    entries = [{"kernel": "/boot/vmlinuz", "args": ["ro", "hugepagesz=2M", "hugepages=1024", "isolcpus=1-3", "quiet"]}]
    plan = kc.plan_grubby(entries, None, w(*WANTED), M)
    assert plan["entries"][0][1] == ["ro", "quiet", "hugepagesz=2M", "hugepages=1024"] + WANTED
    assert plan["commands"] == [["grubby", "--update-kernel=ALL", "--args=hugepagesz=2M hugepages=1024 " + " ".join(WANTED),
                                 "--remove-args=isolcpus=1-3"]]


def test_an_unsized_count_is_refused_when_the_plan_sets_the_default_size():
    # hugepages=1024 before any hugepagesz= counts pages of the default size (2M on x86-64): with the plan's
    # default_hugepagesz=1G they would become 1024 x 1G.
    for rewrite in (lambda: kc.rewrite_kernel_cmdline("ro hugepages=1024\n", w(*WANTED), M),
                    lambda: kc.plan_grubby([{"kernel": "/boot/vmlinuz", "args": ["ro", "hugepages=1024"]}], None, w(*WANTED), M)):
        with pytest.raises(kc.CmdlineError, match=r"hugepages=1024 comes before any hugepagesz="):
            rewrite()
    assert kc.rewrite_kernel_cmdline("ro hugepages=1024\n", w(*FULL), M) == "ro hugepages=1024 %s\n" % " ".join(FULL)


def test_validate_args_refuses_a_count_without_its_size():
    with pytest.raises(kc.CmdlineError, match="hugepages=0:16 counts pages of the hugepagesz= before it"):
        kc.validate_args(["isolcpus=1", "hugepages=0:16"], M)
    with pytest.raises(kc.CmdlineError, match="hugepagesz=huge is not a size"):
        kc.validate_args(["hugepagesz=huge", "hugepages=0:16"], M)
    assert w("default_hugepagesz=1G", "hugepages=0:16") == [("default_hugepagesz", "1G"), ("hugepages", "0:16")]


ONE_G = ["isolcpus=2-7", "hugepagesz=1G", "hugepages=0:2"]  # a 1G pool without a default size

# (GRUB_CMDLINE_LINUX, GRUB_CMDLINE_LINUX_DEFAULT, wanted) -> (the drop-in's GRUB_CMDLINE_LINUX, _DEFAULT)
POOL_CASES = [
    ("hugepagesz=2M hugepages=1024 isolcpus=1-3", "quiet", WANTED,
     ("hugepagesz=2M hugepages=1024 " + " ".join(WANTED), "quiet")),
    ("default_hugepagesz=2M hugepages=512", "quiet", WANTED, ("hugepagesz=2M hugepages=512 " + " ".join(WANTED), "quiet")),
    ("hugepages=256 default_hugepagesz=2M", "quiet", WANTED, ("hugepagesz=2M hugepages=256 " + " ".join(WANTED), "quiet")),
    ("hugepagesz=2M", "hugepages=512 quiet", WANTED, ("hugepagesz=2M " + " ".join(WANTED), "hugepagesz=2M hugepages=512 quiet")),
    ("hugepages=256", "quiet", FULL, ("hugepages=256 " + " ".join(FULL), "quiet")),
    ("hugepages=256", "quiet", WANTED, (" ".join(WANTED), "quiet")),  # refused by plan_grub_d; the sh drops it
    ("rd.shell=0", "quiet hugepages=256", ONE_G, ("rd.shell=0 " + " ".join(ONE_G), "quiet")),  # idem
    ("default_hugepagesz=1G hugepagesz=1G hugepages=4 hugepagesz=2M hugepages=8", "", WANTED,
     ("hugepagesz=2M hugepages=8 " + " ".join(WANTED), "")),
    ("hugepagesz=1024M hugepages=4 hugepagesz=2048k hugepages=8", "default-hugepagesz=2M quiet", WANTED,
     ("hugepagesz=2048k hugepages=8 " + " ".join(WANTED), "quiet")),
    ("hugepagesz=1GB hugepages=2 hugepagesz=01g hugepages=3", "", WANTED, (" ".join(WANTED), "")),
    ("hugepagesz=foo hugepages=3 hugepagesz= hugepages", "", WANTED,
     ("hugepagesz=foo hugepages=3 hugepagesz= hugepages " + " ".join(WANTED), "")),
    ("default_hugepagesz=2M", "hugepages=64 quiet", FULL, ("default_hugepagesz=2M " + " ".join(FULL), "hugepages=64 quiet")),
    ("hugepagesz=2M hugepages=64", "default_hugepagesz=2M hugepagesz=1G hugepages=9", ONE_G,
     ("hugepagesz=2M hugepages=64 " + " ".join(ONE_G), "default_hugepagesz=2M")),
    ("default_hugepagesz=1G hugepages=4", "hugepages=5", ONE_G, ("default_hugepagesz=1G " + " ".join(ONE_G), "")),  # counts of our size
    ("nohz-full=3 hugepagesz=2M hugepages=1 hugepages=2", "irqaffinity=0", [],
     ("hugepagesz=2M hugepages=1 hugepages=2", "")),
]


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("linux, default, wanted, expected", POOL_CASES)
def test_dropin_as_real_shell_under_set_e_and_its_static_read_agree(tmp_path, shell, linux, default, wanted, expected):
    grub = DEBIAN12_GRUB.replace('GRUB_CMDLINE_LINUX=""', 'GRUB_CMDLINE_LINUX="%s"' % linux)
    grub = grub.replace('"isolcpus=1-3 quiet"', '"%s"' % default)
    root = write_root(tmp_path, grub=grub)
    install_dropin(root, w(*wanted), M)
    script = ('set -e; . ./etc/default/grub; . ./etc/default/grub.d/99-rke2-numa.cfg; '
              'printf "%s\\n" "$GRUB_CMDLINE_LINUX" "$GRUB_CMDLINE_LINUX_DEFAULT"')
    out = subprocess.run([shell, "-c", script], cwd=str(root), capture_output=True, text=True, check=True).stdout
    assert tuple(out.split("\n")[:2]) == expected
    env = kc.static_grub_cmdline([grub, (root / kc.DROPIN).read_text()], M)
    assert (env["GRUB_CMDLINE_LINUX"], env["GRUB_CMDLINE_LINUX_DEFAULT"]) == expected


@pytest.mark.parametrize("linux, default, refused", [
    ("hugepages=256", "quiet", [WANTED]),  # the plan's default_hugepagesz=1G would make them 1G pages
    ("rd.shell=0", "quiet hugepages=256", [WANTED, ONE_G]),  # after the planned pool in GRUB_CMDLINE_LINUX: 1G pages
])
def test_plan_grub_d_refuses_a_count_of_an_unnamed_default_size_the_plan_would_change(linux, default, refused):
    grub = DEBIAN12_GRUB.replace('GRUB_CMDLINE_LINUX=""', 'GRUB_CMDLINE_LINUX="%s"' % linux).replace('"isolcpus=1-3 quiet"', '"%s"' % default)
    for wanted in (WANTED, ONE_G, FULL):
        if wanted in refused:
            with pytest.raises(kc.CmdlineError, match=r"^kernel arg hugepages=256 comes before any hugepagesz=.*hugepagesz=<size> hugepages=256"):
                kc.plan_grub_d(grub, [], None, w(*wanted), M)
        else:
            assert kc.plan_grub_d(grub, [], None, w(*wanted), M)["commands"] == [["update-grub"]]


def test_the_drop_in_keeps_the_hugepage_history_and_reports_a_removed_pool():
    first = kc.plan_grub_d(DEBIAN12_GRUB, [], None, w(*WANTED), M)
    text = first["files"][0]["after"]
    assert "\n# hugepage history: hugepagesz=1G default_hugepagesz=1G\n" in text
    assert first["history"] == [("hugepagesz", "1G"), ("default_hugepagesz", "1G")]
    second = kc.plan_grub_d(DEBIAN12_GRUB, [], text, w(*FULL), M)
    assert kc.added_removed(second["locations"], w(*FULL)) == ([], HP)
    assert "\n# hugepage history: hugepagesz=1G default_hugepagesz=1G\n" in second["files"][0]["after"]
    assert kc.plan_grub_d(DEBIAN12_GRUB, [], second["files"][0]["after"], w(*FULL), M)["files"] == []


@pytest.mark.parametrize("size, key", [("1G", 1 << 30), ("1g", 1 << 30), ("1024M", 1 << 30), ("1GB", 1 << 30),
                                       ("2048k", 2 << 20), ("2097152", 2 << 20), ("foo", "?foo"), ("", "?")])
def test_size_key_reads_sizes_as_memparse(size, key):
    assert kc.size_key(size) == key


def test_a_pool_written_before_is_removed_where_the_record_says_so():
    record = kc.render_record(w(*HP), ["hugepagesz=1G", "default_hugepagesz=1G"])
    text = "root=UUID=1 ro hugepagesz=2M hugepages=1024 %s\n" % " ".join(WANTED)
    own = kc.ownership(w(*FULL), M, previous=kc.parse_record(record)["written"])
    assert kc.rewrite_kernel_cmdline(text, w(*FULL), M, own) == "root=UUID=1 ro hugepagesz=2M hugepages=1024 %s\n" % " ".join(FULL)
    assert kc.rewrite_kernel_cmdline(text, w(*FULL), M) == text.replace("\n", "").replace(" ".join(WANTED), " ".join(HP + FULL)) + "\n"
    bls = kc.plan_transactional(None, text, w(*FULL), M, record)
    assert bls["files"][0]["after"] == "root=UUID=1 ro hugepagesz=2M hugepages=1024 %s\n" % " ".join(FULL)
    assert bls["files"][1] == {"path": kc.RECORD, "before": record, "after": kc.render_record([], ["hugepagesz=1G", "default_hugepagesz=1G"]),
                               "mode": 0o644}
    assert kc.added_removed(bls["locations"], w(*FULL)) == ([], HP)


def test_the_record_is_written_only_when_there_is_something_to_record():
    assert kc.plan_record(None, w(*FULL), M)[2] is None
    own, history, change = kc.plan_record(None, w(*WANTED), M)
    assert change["path"] == "etc/rke2-numa/boot_params.state" and kc.parse_record(change["after"]) == {
        "written": w(*HP), "history": [("hugepagesz", "1G"), ("default_hugepagesz", "1G")]}
    assert kc.plan_record(change["after"], w(*WANTED), M)[2] is None
    assert kc.parse_record("written=isolcpus=1 hugepagesz=2M\ngarbage\n")["written"] == [("hugepagesz", "2M")]


def test_running_ownership_counts_a_removed_pool_until_the_host_keeps_one_of_that_size():
    history = [("hugepagesz", "1G"), ("default_hugepagesz", "1G")]
    running = kc.split_cmdline("ro hugepagesz=2M hugepages=1024 " + " ".join(WANTED))
    own = kc.running_ownership(w(*FULL), M, history, [kc.split_cmdline("ro hugepagesz=2M hugepages=1024")])
    assert kc.owned_tokens(running, w(*FULL), M, own) == WANTED and kc.needs_reboot(running, w(*FULL), M, own)
    own = kc.running_ownership(w(*FULL), M, history, [kc.split_cmdline("ro default_hugepagesz=1G hugepagesz=1G hugepages=2")])
    assert kc.owned_tokens(running, w(*FULL), M, own) == FULL and not kc.needs_reboot(running, w(*FULL), M, own)


def test_plan_grubby_gives_each_entry_its_own_pools():
    entries = [{"index": 0, "kernel": "/boot/vmlinuz-a", "args": ["ro", "hugepagesz=2M", "hugepages=64", "isolcpus=1"]},
               {"index": 1, "kernel": "/boot/vmlinuz-b", "args": ["ro", "isolcpus=1"]}]
    plan = kc.plan_grubby(entries, None, w(*WANTED), M)
    assert plan["commands"] == [
        ["grubby", "--update-kernel=0", "--args=hugepagesz=2M hugepages=64 " + " ".join(WANTED), "--remove-args=isolcpus=1"],
        ["grubby", "--update-kernel=1", "--args=" + " ".join(WANTED), "--remove-args=isolcpus=1"]]
    assert [args for dummy, args in plan["entries"]] == [["ro", "hugepagesz=2M", "hugepages=64"] + WANTED, ["ro"] + WANTED]
    done = [dict(e, args=args) for e, args in plan["entries"]]
    assert kc.plan_grubby(done, None, w(*WANTED), M)["commands"] == []
    # the hugepage args stay as they are: one command for every entry, whatever their pools
    plan = kc.plan_grubby(done, None, w(*(FULL[:3] + HP)), M)
    assert plan["commands"] == [["grubby", "--update-kernel=ALL", "--args=" + " ".join(FULL[:3]), "--remove-args=irqaffinity"]]
    assert kc.plan_grubby([dict(e, args=args) for e, args in plan["entries"]], None, w(*(FULL[:3] + HP)), M)["commands"] == []


def test_plan_grubby_refuses_to_put_back_a_host_pool_with_characters_grubby_cannot_take():
    entries = [{"index": 0, "kernel": "/boot/vmlinuz", "args": ["ro", 'hugepagesz="2M"', "hugepages=64"]}]
    with pytest.raises(kc.CmdlineError, match="grubby cannot put back the host's hugepage arg hugepagesz=\"2M\""):
        kc.plan_grubby(entries, None, w(*WANTED), M)


def test_validate_names_keeps_the_hugepage_names_together():
    assert kc.validate_names(["isolcpus", "hugepagesz", "hugepages"]) == ["isolcpus", "hugepagesz", "hugepages"]
    for bad in (["hugepages"], ["hugepagesz"], ["default_hugepagesz"], ["default_hugepagesz", "hugepages"]):
        with pytest.raises(kc.CmdlineError, match="the collection manages hugepagesz and hugepages together"):
            kc.validate_names(bad)
