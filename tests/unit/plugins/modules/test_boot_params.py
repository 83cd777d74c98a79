# -*- coding: utf-8 -*-
"""boot_params as Ansible runs it, per method, with the boot loader tools replaced by
the stand-ins in tests/standins/bootloader (update-grub, grubby, transactional-update, sdbootutil).

Each method goes check -> run -> check -> run (the kubernetes.core k8s_drain
pattern): check mode reports the change and writes nothing, the run makes it and
the state confirms it, then both report no change. A "reboot" copies what the
boot loader would boot into <root>/proc/cmdline."""

from __future__ import annotations

import os
import re
import stat

import pytest

from ansible_collections.maitred.rke2_numa.plugins.modules import boot_params
from ansible_collections.maitred.rke2_numa.tests.fixtures.module_run import run_module

RECORD = "etc/rke2-numa/boot_params.state"  # what boot_params wrote, for grubby and transactional-update
STANDINS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "standins", "bootloader")

WANTED = ["isolcpus=managed_irq,1-55,57-111", "nohz_full=1-55,57-111", "rcu_nocbs=1-55,57-111", "irqaffinity=0,56",
          "default_hugepagesz=1G", "hugepagesz=1G", "hugepages=0:16,1:16"]

DEBIAN_GRUB = """\
# If you change this file, run 'update-grub' afterwards to update
# /boot/grub/grub.cfg.
GRUB_DEFAULT=0
GRUB_TIMEOUT=5
GRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`
GRUB_CMDLINE_LINUX_DEFAULT="isolcpus=1-3 quiet"
GRUB_CMDLINE_LINUX=""
"""

SUSE_GRUB = """\
GRUB_DISTRIBUTOR=
GRUB_DEFAULT=saved
GRUB_TIMEOUT=10
GRUB_CMDLINE_LINUX_DEFAULT="splash=silent quiet security=selinux selinux=1 isolcpus=2-3 mitigations=auto"
GRUB_CMDLINE_LINUX=""
SUSE_BTRFS_SNAPSHOT_BOOTING="true"
"""

OS_RELEASE = {
    "debian": 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nID=debian\n',
    "rocky": 'NAME="Rocky Linux"\nVERSION="9.4 (Blue Onyx)"\nID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.4"\n',
    "sl-micro": 'NAME="SL-Micro"\nVERSION="6.0"\nID="sl-micro"\nID_LIKE="suse"\nVERSION_ID="6.0"\n',
    "sles": 'NAME="SLES"\nVERSION="15-SP6"\nID="sles"\nID_LIKE="suse"\n',
    "arch": 'NAME="Arch Linux"\nID=arch\n',
}

BLS = """\
title Rocky Linux ({ver}) 9.4 (Blue Onyx)
version {ver}
linux /vmlinuz-{ver}
initrd /initramfs-{ver}.img $tuned_initrd
options root=/dev/mapper/rl-root ro crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M rd.lvm.lv=rl/root {extra}
grub_users $grub_users
grub_arg --unrestricted
grub_class rocky
"""


def make_root(tmp_path, distro, cmdline="BOOT_IMAGE=/boot/vmlinuz root=UUID=2f0c ro quiet isolcpus=1-3", grub=None):
    root = tmp_path / "root"
    (root / "etc/default").mkdir(parents=True)
    (root / "proc").mkdir()
    (root / "etc/os-release").write_text(OS_RELEASE[distro])
    (root / "proc/cmdline").write_text(cmdline + "\n")
    if grub is not None:
        (root / "etc/default/grub").write_text(grub)
    return root


@pytest.fixture
def tools(tmp_path, monkeypatch):
    """Stand-ins first on PATH; returns a function giving the calls logged so far."""
    log = tmp_path / "calls.log"
    monkeypatch.setenv("PATH", STANDINS + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("RKE2_NUMA_STANDIN_ROOT", str(tmp_path / "root"))
    monkeypatch.setenv("RKE2_NUMA_STANDIN_LOG", str(log))
    return lambda: log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def warnings(monkeypatch):
    warned = []
    monkeypatch.setattr(boot_params.AnsibleModule, "warn", lambda self, msg: warned.append(msg))
    return warned


def run(capsys, **args):
    return run_module(boot_params, capsys, args)


def reboot(root, boot_line):
    """Boot what the boot loader holds: its linux line becomes /proc/cmdline."""
    (root / "proc/cmdline").write_text("BOOT_IMAGE=" + boot_line.split(None, 2)[1] + " " + boot_line.split(None, 2)[2] + "\n")


def linux_lines(path):
    return [line.strip() for line in path.read_text().splitlines() if line.strip().startswith("linux")]


def once_each(cmdline, wanted):
    tokens = cmdline.split()
    for arg in wanted:
        name = arg.partition("=")[0]
        assert [t for t in tokens if t.partition("=")[0] == name] == [arg], (name, cmdline)


def tree(root):
    """Every path under root: a link's target, a file's bytes and mode, or a folder (byte-identity checks)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            out[rel] = ("link", os.readlink(path))
        elif path.is_dir():
            out[rel] = ("dir", stat.S_IMODE(path.stat().st_mode))
        else:
            out[rel] = ("file", path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
    return out


@pytest.fixture
def failing(tmp_path, monkeypatch, tools):
    """failing(tool, when): put a <tool> first on PATH that logs the call and fails (rc 5) when its
    arguments match the sh case pattern ``when``, and otherwise runs the stand-in. Returns a function
    that puts the working stand-ins back."""
    bad = tmp_path / "failing"
    bad.mkdir()
    path = os.environ["PATH"]

    def make(tool, when="*"):
        script = bad / tool
        script.write_text(
            "#!/bin/sh\n"
            'case "$*" in\n'
            "    %s)\n"
            '        printf \'%s %%s\\n\' "$*" >> "$RKE2_NUMA_STANDIN_LOG"\n'
            '        echo "%s: cannot write /boot: No space left on device" >&2\n'
            "        exit 5 ;;\n"
            "esac\n"
            'exec "%s" "$@"\n' % (when, tool, tool, os.path.join(STANDINS, tool)))
        script.chmod(0o755)
        monkeypatch.setenv("PATH", str(bad) + os.pathsep + path)
        return lambda: monkeypatch.setenv("PATH", path)
    return make


# ----------------------------------------------------------------- Debian / Ubuntu


def test_grub_d_check_run_check_run(tmp_path, capsys, tools):
    root = make_root(tmp_path, "debian", grub=DEBIAN_GRUB)
    dropin = root / "etc/default/grub.d/99-rke2-numa.cfg"

    code, check = run(capsys, args=WANTED, root=str(root), _ansible_check_mode=True)
    assert code == 0 and check["changed"] is True and check["method"] == "grub_d"
    assert check["commands"] == [["update-grub"]] and check["bootloader_updated"] is False
    assert check["reboot_required"] is True and check["running"] == ["isolcpus=1-3"]
    assert check["added"] == WANTED and check["removed"] == ["isolcpus=1-3"]
    assert not dropin.exists() and tools() == []

    code, done = run(capsys, args=WANTED, root=str(root))
    assert code == 0 and done["changed"] is True and done["bootloader_updated"] is True
    assert done["files"] == ["/etc/default/grub.d/99-rke2-numa.cfg"]
    assert stat.S_IMODE(dropin.stat().st_mode) == 0o644
    assert tools() == ["update-grub "]
    normal, recovery = linux_lines(root / "boot/grub/grub.cfg")
    once_each(normal, WANTED + ["quiet"])
    once_each(recovery, WANTED + ["single"])
    assert "isolcpus=1-3" not in normal and done["reboot_required"] is True

    for check_mode in (True, False):
        code, again = run(capsys, args=WANTED, root=str(root), _ansible_check_mode=check_mode)
        assert code == 0 and again["changed"] is False and again["commands"] == [] and again["added"] == []
        assert again["reboot_required"] is True  # still the old kernel
    assert tools() == ["update-grub "]

    reboot(root, normal)
    code, booted = run(capsys, args=WANTED, root=str(root))
    assert booted["changed"] is False and booted["reboot_required"] is False and booted["running"] == WANTED


def test_grub_d_replaces_a_changed_value_and_removes_a_stale_arg(tmp_path, capsys, tools):
    root = make_root(tmp_path, "debian", grub=DEBIAN_GRUB)
    run(capsys, args=WANTED, root=str(root))
    reboot(root, linux_lines(root / "boot/grub/grub.cfg")[0])
    fewer = [a for a in WANTED if not a.startswith("hugepages=")]
    fewer[3] = "irqaffinity=0"
    code, result = run(capsys, args=fewer, root=str(root), _ansible_diff=True)
    assert code == 0 and result["changed"] is True and result["reboot_required"] is True
    assert result["added"] == ["irqaffinity=0"] and result["removed"] == ["irqaffinity=0,56", "hugepages=0:16,1:16"]
    assert [d["before_header"] for d in result["diff"]] == [str(root / "etc/default/grub.d/99-rke2-numa.cfg")]
    assert "irqaffinity=0,56" in result["diff"][0]["before"] and "irqaffinity=0 " in result["diff"][0]["after"]
    normal = linux_lines(root / "boot/grub/grub.cfg")[0]
    once_each(normal, fewer)
    assert "hugepages=" not in normal.replace("default_hugepagesz", "")


def test_grub_d_without_update_bootloader_writes_and_reports(tmp_path, capsys, tools):
    root = make_root(tmp_path, "debian", grub=DEBIAN_GRUB)
    code, result = run(capsys, args=WANTED, root=str(root), update_bootloader=False)
    assert code == 0 and result["changed"] is True and result["bootloader_updated"] is False
    assert result["commands"] == [["update-grub"]]
    assert (root / "etc/default/grub.d/99-rke2-numa.cfg").exists() and tools() == []


def test_grub_d_state_absent(tmp_path, capsys, tools):
    root = make_root(tmp_path, "debian", grub=DEBIAN_GRUB)
    run(capsys, args=WANTED, root=str(root))
    code, result = run(capsys, state="absent", root=str(root))
    assert code == 0 and result["changed"] is True and result["wanted"] == []
    assert result["removed"] == WANTED and result["added"] == []
    normal, recovery = linux_lines(root / "boot/grub/grub.cfg")
    assert normal.endswith(" ro  quiet") and recovery.endswith(" ro single")  # the hand-set isolcpus=1-3 went too
    assert result["reboot_required"] is True  # proc/cmdline still runs isolcpus=1-3
    reboot(root, normal)
    code, result = run(capsys, state="absent", root=str(root))
    assert result["changed"] is False and result["reboot_required"] is False and result["running"] == []


def test_update_grub_failure_fails_the_task(tmp_path, capsys, tools, monkeypatch):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "update-grub").write_text("#!/bin/sh\necho '/usr/sbin/grub-mkconfig: not found' >&2\nexit 127\n")
    (bad / "update-grub").chmod(0o755)
    monkeypatch.setenv("PATH", str(bad) + os.pathsep + os.environ["PATH"])
    root = make_root(tmp_path, "debian", grub=DEBIAN_GRUB)
    code, result = run(capsys, args=WANTED, root=str(root))
    assert code == 1 and result["failed"] is True
    assert re.match(r"cannot update the boot loader: \S+/update-grub exited 127: /usr/sbin/grub-mkconfig: not found", result["msg"])


# ----------------------------------------------------------------- refusals


def test_unsupported_distro_fails_naming_it(tmp_path, capsys, tools):
    root = make_root(tmp_path, "arch")
    code, result = run(capsys, args=WANTED, root=str(root))
    assert code == 1 and "unsupported distribution: os-release ID='arch'" in result["msg"]
    assert "debian, ubuntu (grub_d)" in result["msg"]


def test_sles_without_transactional_root_is_unsupported(tmp_path, capsys, tools):
    root = make_root(tmp_path, "sles", grub=SUSE_GRUB)
    code, result = run(capsys, args=WANTED, root=str(root))
    assert code == 1 and "ID='sles'" in result["msg"]


def test_an_arg_the_collection_does_not_own_is_refused(tmp_path, capsys, tools):
    root = make_root(tmp_path, "debian", grub=DEBIAN_GRUB)
    code, result = run(capsys, args=WANTED + ["mitigations=off"], root=str(root))
    assert code == 1 and "mitigations is not a kernel argument this collection manages" in result["msg"]
    assert not (root / "etc/default/grub.d").exists() and tools() == []


def test_args_are_required_unless_absent(tmp_path, capsys, tools):
    root = make_root(tmp_path, "debian", grub=DEBIAN_GRUB)
    code, result = run(capsys, root=str(root))
    assert code == 1 and "state is present but all of the following are missing: args" in result["msg"]
    code, result = run(capsys, args=[], root=str(root), update_bootloader=False)
    assert code == 0 and result["wanted"] == [] and result["removed"] == ["isolcpus=1-3"]


def test_missing_proc_cmdline_fails(tmp_path, capsys, tools):
    root = make_root(tmp_path, "debian", grub=DEBIAN_GRUB)
    (root / "proc/cmdline").unlink()
    code, result = run(capsys, args=WANTED, root=str(root))
    assert code == 1 and result["msg"] == "cannot read the running kernel command line %s/proc/cmdline" % root


def test_the_running_kernel_is_read_from_proc_root(tmp_path, capsys, tools):
    """A system whose boot files are in one tree while its running kernel shows in another (an image
    tree on a host, a container whose /proc cannot be written): cmdline and mounts come from proc_root."""
    root = make_root(tmp_path, "debian", grub=DEBIAN_GRUB)
    (root / "proc/cmdline").unlink()
    kernel = tmp_path / "kernel"
    (kernel / "proc").mkdir(parents=True)
    (kernel / "proc/cmdline").write_text("BOOT_IMAGE=/boot/vmlinuz ro quiet %s\n" % " ".join(WANTED))
    code, result = run(capsys, args=WANTED, root=str(root), proc_root=str(kernel), update_bootloader=False)
    assert code == 0 and result["changed"] and not result["reboot_required"], result
    assert result["running"] == WANTED
    (kernel / "proc/cmdline").unlink()
    code, result = run(capsys, args=WANTED, root=str(root), proc_root=str(kernel))
    assert code == 1 and result["msg"] == "cannot read the running kernel command line %s/proc/cmdline" % kernel


# ----------------------------------------------------------------- RHEL family


def rocky_root(tmp_path, extra="isolcpus=1-3 hugepagesz=1G hugepages=4 quiet", kernel_cmdline=True):
    root = make_root(tmp_path, "rocky", cmdline="BOOT_IMAGE=(hd0,gpt2)/vmlinuz-5.14.0-427.el9.x86_64 root=/dev/mapper/rl-root ro "
                     "crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M rd.lvm.lv=rl/root " + extra)
    entries = root / "boot/loader/entries"
    entries.mkdir(parents=True)
    for ver in ("5.14.0-427.el9.x86_64", "5.14.0-362.el9.x86_64", "0-rescue-3f9c"):
        (entries / ("3f9c-%s.conf" % ver)).write_text(BLS.format(ver=ver, extra=extra))
    if kernel_cmdline:
        (root / "etc/kernel").mkdir()
        (root / "etc/kernel/cmdline").write_text("root=/dev/mapper/rl-root ro crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M "
                                                 "rd.lvm.lv=rl/root %s\n" % extra)
    return root


def bls_options(root):
    out = {}
    for conf in sorted((root / "boot/loader/entries").iterdir()):
        out[conf.name] = [line[len("options "):] for line in conf.read_text().splitlines() if line.startswith("options ")][0]
    return out


def test_grubby_check_run_check_run(tmp_path, capsys, tools):
    root = rocky_root(tmp_path)
    before = bls_options(root)
    grubby = ["grubby", "--update-kernel=ALL", "--args=" + " ".join(WANTED), "--remove-args=isolcpus=1-3"]

    code, check = run(capsys, args=WANTED, root=str(root), _ansible_check_mode=True, _ansible_diff=True)
    assert code == 0 and check["changed"] is True and check["method"] == "grubby"
    assert check["commands"] == [grubby] and check["files"] == ["/etc/kernel/cmdline", "/" + RECORD]
    # hugepagesz=1G hugepages=4: a pool of the planned size, replaced by the plan's
    assert check["added"] == [a for a in WANTED if a != "hugepagesz=1G"] and check["removed"] == ["isolcpus=1-3", "hugepages=4"]
    assert bls_options(root) == before and tools() == ["grubby --info=ALL"]
    entries_diff = check["diff"][-1]
    assert entries_diff["before_header"].startswith("grubby --info=ALL")
    assert entries_diff["before"].count("isolcpus=1-3") == 3 and entries_diff["after"].count(WANTED[0]) == 3

    code, done = run(capsys, args=WANTED, root=str(root))
    assert code == 0 and done["changed"] is True and done["bootloader_updated"] is True
    assert tools()[1:] == ["grubby --info=ALL", "grubby " + " ".join(grubby[1:]), "grubby --info=ALL"]
    for name, options in bls_options(root).items():
        once_each(options, WANTED + ["quiet", "ro"])
        assert "isolcpus=1-3" not in options and "hugepages=4" not in options, name
        assert options.startswith("root=/dev/mapper/rl-root ro crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M rd.lvm.lv=rl/root quiet ")
    once_each((root / "etc/kernel/cmdline").read_text(), WANTED)
    assert (check["diff"][0]["after"] == (root / "etc/kernel/cmdline").read_text())
    assert done["reboot_required"] is True

    calls = len(tools())
    for check_mode in (True, False):
        code, again = run(capsys, args=WANTED, root=str(root), _ansible_check_mode=check_mode)
        assert code == 0 and again["changed"] is False and again["commands"] == [] and again["files"] == []
    assert tools()[calls:] == ["grubby --info=ALL", "grubby --info=ALL"]

    (root / "proc/cmdline").write_text("BOOT_IMAGE=(hd0,gpt2)/vmlinuz root=/dev/mapper/rl-root " + list(bls_options(root).values())[0] + "\n")
    code, booted = run(capsys, args=WANTED, root=str(root))
    assert booted["reboot_required"] is False and booted["running"] == WANTED


def test_grubby_state_absent_removes_every_managed_arg_it_owns(tmp_path, capsys, tools):
    root = rocky_root(tmp_path, kernel_cmdline=False)
    code, result = run(capsys, state="absent", root=str(root))
    assert code == 0 and result["commands"] == [["grubby", "--update-kernel=ALL", "--remove-args=isolcpus"]]
    for options in bls_options(root).values():
        assert options.endswith("rd.lvm.lv=rl/root hugepagesz=1G hugepages=4 quiet")  # a pool it never wrote stays


def test_grubby_missing_without_update_bootloader_checks_files_only(tmp_path, capsys, monkeypatch, warnings):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(boot_params.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: None)
    root = rocky_root(tmp_path)
    code, result = run(capsys, args=WANTED, root=str(root), update_bootloader=False)
    assert code == 0 and result["files"] == ["/etc/kernel/cmdline", "/" + RECORD] and result["commands"] == []
    assert warnings == ["grubby not found: the kernel entries were not read; only files are checked"]


# ----------------------------------------------------------------- SLE Micro (transactional-update)


def test_transactional_grub_check_run_check_run(tmp_path, capsys, tools):
    root = make_root(tmp_path, "sl-micro", cmdline="BOOT_IMAGE=/boot/vmlinuz-6.4.0 root=UUID=0a1b splash=silent quiet "
                     "security=selinux selinux=1 isolcpus=2-3 mitigations=auto", grub=SUSE_GRUB)
    tu = ["transactional-update", "--continue", "grub.cfg"]

    code, check = run(capsys, args=WANTED, root=str(root), _ansible_check_mode=True)
    assert code == 0 and check["changed"] is True and check["method"] == "transactional_update"
    assert check["commands"] == [tu] and check["reboot_required"] is True
    assert (root / "etc/default/grub").read_text() == SUSE_GRUB and tools() == []

    code, done = run(capsys, args=WANTED, root=str(root), _ansible_diff=True)
    assert code == 0 and done["changed"] is True and done["bootloader_updated"] is True and done["reboot_required"] is True
    assert tools() == ["transactional-update --continue grub.cfg"]
    assert done["diff"][0]["before"] == SUSE_GRUB
    grub = (root / "etc/default/grub").read_text()
    assert 'GRUB_CMDLINE_LINUX_DEFAULT="splash=silent quiet security=selinux selinux=1 mitigations=auto %s"' % " ".join(WANTED) in grub
    snapshot = (root / ".snapshots/default").read_text().strip()
    staged = linux_lines(root / ".snapshots" / snapshot / "grub.cfg")[0]
    once_each(staged, WANTED + ["quiet"])

    for check_mode in (True, False):
        code, again = run(capsys, args=WANTED, root=str(root), _ansible_check_mode=check_mode)
        assert code == 0 and again["changed"] is False and again["commands"] == []
        assert again["reboot_required"] is True  # the staged snapshot is not booted yet
    assert tools() == ["transactional-update --continue grub.cfg"]

    reboot(root, staged)
    code, booted = run(capsys, args=WANTED, root=str(root))
    assert booted["changed"] is False and booted["reboot_required"] is False


def test_transactional_continues_a_pending_snapshot(tmp_path, capsys, tools):
    root = make_root(tmp_path, "sl-micro", grub=SUSE_GRUB)
    run(capsys, args=WANTED[:1], root=str(root))
    run(capsys, args=WANTED, root=str(root))
    assert tools() == ["transactional-update --continue grub.cfg"] * 2
    assert (root / ".snapshots/default").read_text().strip() == "3"
    once_each(linux_lines(root / ".snapshots/3/grub.cfg")[0], WANTED)


def test_transactional_bls_uses_kernel_cmdline_and_sdbootutil(tmp_path, capsys, tools):
    root = make_root(tmp_path, "sl-micro", grub=SUSE_GRUB)
    (root / "etc/kernel").mkdir()
    (root / "etc/kernel/cmdline").write_text("root=UUID=0a1b splash=silent quiet isolcpus=2-3\n")
    code, result = run(capsys, args=WANTED, root=str(root))
    assert code == 0 and result["commands"] == [["sdbootutil", "update-all-entries"]] and result["reboot_required"] is True
    assert tools() == ["sdbootutil update-all-entries"]
    assert (root / "boot/efi/loader/entries/cmdline").read_text() == "root=UUID=0a1b splash=silent quiet %s\n" % " ".join(WANTED)
    assert (root / "etc/default/grub").read_text() == SUSE_GRUB


def test_auto_detects_a_transactional_suse_system(tmp_path, capsys, tools):
    root = make_root(tmp_path, "sles", grub=SUSE_GRUB)
    (root / "usr/sbin").mkdir(parents=True)
    (root / "usr/sbin/transactional-update").write_text("")
    (root / "proc/mounts").write_text("/dev/vda3 / btrfs ro,relatime,ssd,space_cache=v2,subvol=/@/.snapshots/1/snapshot 0 0\n")
    code, result = run(capsys, args=WANTED, root=str(root), update_bootloader=False)
    assert code == 0 and result["method"] == "transactional_update"
    assert result["reboot_required"] is True  # isolcpus=1-3 runs; nothing staged without update_bootloader
    assert result["commands"] == [["transactional-update", "--continue", "grub.cfg"]] and tools() == []


def test_method_overrides_detection(tmp_path, capsys, tools):
    root = make_root(tmp_path, "arch", grub=DEBIAN_GRUB)
    code, result = run(capsys, args=WANTED, root=str(root), method="grub_d", update_bootloader=False)
    assert code == 0 and result["method"] == "grub_d" and result["changed"] is True


# ----------------------------------------------------------------- no shell characters reach a file

DROPIN = "etc/default/grub.d/99-rke2-numa.cfg"
SHELL_CHARS = [";", "|", "&", "#", ">", "<", "(", ")", "*", "~", "!", "?", "[", "]", "{", "}", "^", "$", "`",
               "\\", '"', "'", " ", "\t", "\n", "\x00"]


def debian_new(tmp_path, capsys):
    return make_root(tmp_path, "debian", grub=DEBIAN_GRUB)


def debian_changed(tmp_path, capsys):
    """A drop-in an earlier run wrote (other args), with a mode an admin chose."""
    root = debian_new(tmp_path, capsys)
    assert run(capsys, args=WANTED[:2], root=str(root), update_bootloader=False)[0] == 0
    (root / DROPIN).chmod(0o640)
    return root


def debian_symlinked(tmp_path, capsys):
    """The drop-in is a relative symlink into another folder."""
    root = debian_changed(tmp_path, capsys)
    (root / "srv/boot").mkdir(parents=True)
    (root / DROPIN).rename(root / "srv/boot/99-rke2-numa.cfg")
    (root / DROPIN).symlink_to("../../../srv/boot/99-rke2-numa.cfg")
    return root


def debian_dangling(tmp_path, capsys):
    """The drop-in is a symlink to a file that does not exist yet."""
    root = debian_new(tmp_path, capsys)
    (root / "srv/boot").mkdir(parents=True)
    (root / "etc/default/grub.d").mkdir()
    (root / DROPIN).symlink_to(root / "srv/boot/99-rke2-numa.cfg")
    return root


def rocky(tmp_path, capsys):
    return rocky_root(tmp_path)


def suse_grub(tmp_path, capsys):
    root = make_root(tmp_path, "sl-micro", grub=SUSE_GRUB)
    (root / "etc/default/grub").chmod(0o600)
    return root


def suse_grub_symlinked(tmp_path, capsys):
    """/etc/default/grub is a link into /usr/etc (as on systems with a vendor /usr/etc)."""
    root = suse_grub(tmp_path, capsys)
    (root / "usr/etc/default").mkdir(parents=True)
    (root / "etc/default/grub").rename(root / "usr/etc/default/grub")
    (root / "etc/default/grub").symlink_to("../../usr/etc/default/grub")
    return root


def suse_bls(tmp_path, capsys):
    root = make_root(tmp_path, "sl-micro", grub=SUSE_GRUB)
    (root / "etc/kernel").mkdir()
    (root / "etc/kernel/cmdline").write_text("root=UUID=0a1b splash=silent quiet isolcpus=2-3\n")
    return root


METHOD_ROOTS = [pytest.param(debian_changed, id="grub_d"), pytest.param(rocky, id="grubby"),
                pytest.param(suse_grub, id="transactional_update-grub"), pytest.param(suse_bls, id="transactional_update-bls")]


@pytest.mark.parametrize("char", SHELL_CHARS, ids=repr)
@pytest.mark.parametrize("setup", METHOD_ROOTS)
def test_a_shell_character_is_refused_before_anything_is_written(tmp_path, capsys, tools, setup, char):
    root = setup(tmp_path, capsys)
    before, calls = tree(root), tools()
    item = "isolcpus=1-3%sreboot" % char
    for check_mode in (True, False):
        code, result = run(capsys, args=[item] + WANTED[1:], root=str(root), _ansible_check_mode=check_mode)
        assert code == 1 and result["failed"] is True
        assert result["msg"].startswith("kernel arg %r: character %r is not allowed" % (item, char))
        assert tree(root) == before and tools() == calls


# ----------------------------------------------------------------- a failed boot loader update is retried

FAILURES = [
    pytest.param(debian_new, "update-grub", "*", "update-grub ", id="grub_d-new"),
    pytest.param(debian_changed, "update-grub", "*", "update-grub ", id="grub_d-changed"),
    pytest.param(debian_symlinked, "update-grub", "*", "update-grub ", id="grub_d-symlink"),
    pytest.param(debian_dangling, "update-grub", "*", "update-grub ", id="grub_d-dangling-symlink"),
    pytest.param(rocky, "grubby", "--update-kernel*", "grubby --update-kernel=ALL --args=", id="grubby"),
    pytest.param(suse_grub, "transactional-update", "*", "transactional-update --continue grub.cfg", id="transactional_update-grub"),
    pytest.param(suse_grub_symlinked, "transactional-update", "*", "transactional-update --continue grub.cfg",
                 id="transactional_update-grub-symlink"),
    pytest.param(suse_bls, "sdbootutil", "*", "sdbootutil update-all-entries", id="transactional_update-bls"),
]


@pytest.mark.parametrize("setup, tool, when, call", FAILURES)
def test_a_failed_boot_loader_update_restores_the_files_and_is_retried(tmp_path, capsys, tools, failing, setup, tool, when, call):
    root = setup(tmp_path, capsys)
    before = tree(root)
    working = failing(tool, when)

    code, result = run(capsys, args=WANTED, root=str(root))
    assert code == 1 and result["failed"] is True and result["rc"] == 5
    assert re.match(r"cannot update the boot loader: \S+/%s .*exited 5: %s: cannot write /boot: No space left on device"
                    % (re.escape(tool), re.escape(tool)), result["msg"])
    assert "No space left on device" in result["stderr"] and result["msg"].endswith("so the next run tries again")
    assert [c for c in tools() if c.startswith(call)] == [tools()[-1]]  # it ran, once, and nothing after it
    assert tree(root) == before  # same bytes, modes and links; a created file is gone, no backup left behind

    working()
    calls = len(tools())
    code, again = run(capsys, args=WANTED, root=str(root))
    assert code == 0 and again["changed"] is True and again["bootloader_updated"] is True
    assert [c for c in tools()[calls:] if c.startswith(call)] != []
    after = tree(root)
    assert {k: v for k, v in after.items() if v[0] == "link"} == {k: v for k, v in before.items() if v[0] == "link"}
    code, third = run(capsys, args=WANTED, root=str(root))
    assert code == 0 and third["changed"] is False


def test_a_grubby_that_changes_nothing_fails_the_task_and_puts_the_files_back(tmp_path, capsys, tools, monkeypatch):
    """grubby's verify (boot_method_grubby): the entries read again after grubby ran must need nothing more."""
    root = rocky_root(tmp_path)
    before = tree(root)
    lazy = tmp_path / "lazy"
    lazy.mkdir()
    (lazy / "grubby").write_text('#!/bin/sh\ncase "$*" in --update-kernel*) exit 0 ;; esac\nexec "%s" "$@"\n'
                                 % os.path.join(STANDINS, "grubby"))
    (lazy / "grubby").chmod(0o755)
    monkeypatch.setenv("PATH", str(lazy) + os.pathsep + os.environ["PATH"])
    code, result = run(capsys, args=WANTED, root=str(root))
    assert code == 1 and result["msg"].startswith("grubby ran but the kernel entries still differ; grubby would still need: "
                                                  "grubby --update-kernel=ALL --args=" + " ".join(WANTED))
    assert tree(root) == before and tools() == ["grubby --info=ALL", "grubby --info=ALL"]


@pytest.mark.parametrize("setup", [pytest.param(debian_new, id="grub_d-new"), pytest.param(suse_grub_symlinked, id="transactional_update")])
def test_a_failed_write_puts_the_file_back_and_runs_nothing(tmp_path, capsys, tools, monkeypatch, setup):
    root = setup(tmp_path, capsys)
    before = tree(root)
    moved = []

    def atomic_move(self, src, dest, unsafe_writes=False, keep_dest_attrs=True):
        os.rename(src, dest)
        moved.append(dest)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(boot_params.AnsibleModule, "atomic_move", atomic_move)
    code, result = run(capsys, args=WANTED, root=str(root))
    assert code == 1 and re.match(r"cannot write %s/etc/\S+: \[Errno 28\] No space left on device; put back " % re.escape(str(root)), result["msg"])
    assert len(moved) == 1 and tree(root) == before and tools() == []


def test_a_missing_boot_loader_tool_fails_before_anything_is_written(tmp_path, capsys, tools, monkeypatch):
    real = boot_params.AnsibleModule.get_bin_path

    def get_bin_path(self, name, required=False, opt_dirs=None):
        if name == "update-grub":
            if required:
                self.fail_json(msg="Failed to find required executable \"update-grub\" in paths: /nowhere")
            return None
        return real(self, name, required=required, opt_dirs=opt_dirs)

    monkeypatch.setattr(boot_params.AnsibleModule, "get_bin_path", get_bin_path)
    root = debian_changed(tmp_path, capsys)
    before = tree(root)
    code, result = run(capsys, args=WANTED, root=str(root))
    assert code == 1 and "update-grub" in result["msg"]
    assert tree(root) == before and tools() == []


# ----------------------------------------------------------------- symlinks and backups


@pytest.mark.parametrize("setup, link, target", [
    pytest.param(debian_symlinked, DROPIN, "srv/boot/99-rke2-numa.cfg", id="grub_d"),
    pytest.param(debian_dangling, DROPIN, "srv/boot/99-rke2-numa.cfg", id="grub_d-dangling"),
    pytest.param(suse_grub_symlinked, "etc/default/grub", "usr/etc/default/grub", id="transactional_update"),
])
def test_a_symlinked_file_is_written_through_its_link(tmp_path, capsys, tools, setup, link, target):
    root = setup(tmp_path, capsys)
    points_to = os.readlink(root / link)
    code, result = run(capsys, args=WANTED, root=str(root), _ansible_diff=True)
    assert code == 0 and result["changed"] is True and result["bootloader_updated"] is True
    assert result["files"][0] == "/" + link and result["diff"][0]["after_header"] == str(root / link)
    assert (root / link).is_symlink() and os.readlink(root / link) == points_to
    assert " ".join(WANTED) in (root / target).read_text()
    code, again = run(capsys, args=WANTED, root=str(root))
    assert code == 0 and again["changed"] is False


@pytest.mark.parametrize("setup, rel", [
    pytest.param(debian_changed, DROPIN, id="grub_d"),
    pytest.param(rocky, "etc/kernel/cmdline", id="grubby"),
    pytest.param(suse_grub, "etc/default/grub", id="transactional_update-grub"),
    pytest.param(suse_grub_symlinked, "etc/default/grub", id="transactional_update-grub-symlink"),
    pytest.param(suse_bls, "etc/kernel/cmdline", id="transactional_update-bls"),
])
def test_every_file_a_run_changes_is_backed_up_first(tmp_path, capsys, tools, setup, rel):
    root = setup(tmp_path, capsys)
    old, mode = (root / rel).read_bytes(), stat.S_IMODE((root / rel).stat().st_mode)
    code, check = run(capsys, args=WANTED, root=str(root), _ansible_check_mode=True)
    assert code == 0 and check["changed"] is True and check["backup_files"] == []
    assert (root / rel).read_bytes() == old
    code, result = run(capsys, args=WANTED, root=str(root))
    assert code == 0 and result["changed"] is True and len(result["backup_files"]) == 1
    backup = result["backup_files"][0]
    assert backup.startswith(str(root / rel) + ".") and backup.endswith("~")
    with open(backup, "rb") as f:
        assert f.read() == old
    assert stat.S_IMODE(os.stat(backup).st_mode) == mode
    assert (root / rel).read_bytes() != old
    assert stat.S_IMODE((root / rel).stat().st_mode) == (0o644 if rel == DROPIN else mode)  # the drop-in is ours: 0644
    code, again = run(capsys, args=WANTED, root=str(root))
    assert again["changed"] is False and again["backup_files"] == []


def test_a_new_drop_in_needs_no_backup(tmp_path, capsys, tools):
    root = debian_new(tmp_path, capsys)
    code, result = run(capsys, args=WANTED, root=str(root))
    assert code == 0 and result["changed"] is True and result["backup_files"] == []
    assert sorted(os.listdir(root / "etc/default/grub.d")) == ["99-rke2-numa.cfg"]


# ----------------------------------------------------------------- hugepage pools the host already has

FULL = WANTED[:4]  # a plan without hugepages
HOST_2M = "hugepagesz=2M hugepages=1024"


def host_pool_root(tmp_path, method, pool=HOST_2M):
    """A host of each method whose boot configuration and running kernel hold its own hugepage pool ``pool``
    (and a hand-set isolcpus the plan replaces)."""
    running = "isolcpus=1-3 %s quiet" % pool
    if method == "grub_d":
        grub = DEBIAN_GRUB.replace('GRUB_CMDLINE_LINUX=""', 'GRUB_CMDLINE_LINUX="%s"' % pool)
        return make_root(tmp_path, "debian", cmdline="BOOT_IMAGE=/boot/vmlinuz root=UUID=2f0c ro %s isolcpus=1-3 quiet" % pool, grub=grub)
    if method == "grubby":
        return rocky_root(tmp_path, extra=running)
    cmdline = "BOOT_IMAGE=/boot/vmlinuz-6.4.0 root=UUID=0a1b splash=silent " + running
    root = make_root(tmp_path, "sl-micro", cmdline=cmdline, grub=SUSE_GRUB.replace("isolcpus=2-3", "isolcpus=1-3 " + pool))
    if method == "transactional_update-bls":
        (root / "etc/kernel").mkdir()
        (root / "etc/kernel/cmdline").write_text("root=UUID=0a1b splash=silent %s\n" % running)
    return root


def boot_lines(root, method):
    """The kernel command lines the boot loader would boot next (every entry)."""
    if method == "grub_d":
        return [line.split(None, 2)[2] for line in linux_lines(root / "boot/grub/grub.cfg")]
    if method == "grubby":
        return list(bls_options(root).values()) + [(root / "etc/kernel/cmdline").read_text().strip()]
    if method == "transactional_update-bls":
        return [(root / "boot/efi/loader/entries/cmdline").read_text().strip()]
    snapshot = (root / ".snapshots/default").read_text().strip()
    return [linux_lines(root / ".snapshots" / snapshot / "grub.cfg")[0].split(None, 2)[2]]


def boot_into(root, method):
    """Reboot: the first boot line becomes /proc/cmdline."""
    (root / "proc/cmdline").write_text("BOOT_IMAGE=/boot/vmlinuz " + boot_lines(root, method)[0] + "\n")


def pools(line):
    """The hugepage args of a command line, in order."""
    return [t for t in line.split() if t.partition("=")[0] in ("hugepagesz", "hugepages", "default_hugepagesz")]


HOST_POOL_METHODS = ["grub_d", "grubby", "transactional_update-grub", "transactional_update-bls"]


@pytest.mark.parametrize("method", HOST_POOL_METHODS)
def test_the_hosts_other_hugepage_pool_stays_next_to_the_planned_one(tmp_path, capsys, tools, method):
    root = host_pool_root(tmp_path, method)
    code, check = run(capsys, args=WANTED, root=str(root), _ansible_check_mode=True)
    assert code == 0 and check["changed"] is True and check["running"] == ["isolcpus=1-3"]
    assert check["removed"] == ["isolcpus=1-3"] and check["added"] == WANTED

    code, done = run(capsys, args=WANTED, root=str(root))
    assert code == 0 and done["changed"] is True and done["reboot_required"] is True
    assert done["removed"] == ["isolcpus=1-3"]
    for line in boot_lines(root, method):
        assert pools(line) == HOST_2M.split() + WANTED[4:], line  # the 2M pair untouched, the 1G pool once, after it
        once_each(line, WANTED[:4])

    boot_into(root, method)
    for check_mode in (True, False):
        code, again = run(capsys, args=WANTED, root=str(root), _ansible_check_mode=check_mode)
        assert code == 0 and again["changed"] is False and again["commands"] == []
        assert again["reboot_required"] is False and again["running"] == WANTED


@pytest.mark.parametrize("method", HOST_POOL_METHODS)
def test_a_plan_without_hugepages_leaves_the_hosts_pool_and_default_alone(tmp_path, capsys, tools, method):
    pool = "default_hugepagesz=2M " + HOST_2M
    root = host_pool_root(tmp_path, method, pool=pool)
    code, done = run(capsys, args=FULL, root=str(root))
    assert code == 0 and done["changed"] is True
    assert done["removed"] == ["isolcpus=1-3"] and done["running"] == ["isolcpus=1-3"]
    for line in boot_lines(root, method):
        assert pools(line) == pool.split(), line
        once_each(line, FULL)
    boot_into(root, method)
    code, again = run(capsys, args=FULL, root=str(root))
    assert code == 0 and again["changed"] is False and again["reboot_required"] is False and again["running"] == FULL


@pytest.mark.parametrize("method", HOST_POOL_METHODS)
def test_a_size_planned_before_is_removed_and_the_hosts_pool_stays(tmp_path, capsys, tools, method):
    root = host_pool_root(tmp_path, method)
    assert run(capsys, args=WANTED, root=str(root))[0] == 0
    boot_into(root, method)

    code, done = run(capsys, args=FULL, root=str(root), _ansible_diff=True)
    assert code == 0 and done["changed"] is True and done["reboot_required"] is True
    assert done["removed"] == WANTED[4:] and done["added"] == []
    for line in boot_lines(root, method):
        assert pools(line) == HOST_2M.split(), line
        once_each(line, FULL)

    code, again = run(capsys, args=FULL, root=str(root))
    assert code == 0 and again["changed"] is False
    assert again["reboot_required"] is True and again["running"] == WANTED  # the 1G pool still runs
    boot_into(root, method)
    code, booted = run(capsys, args=FULL, root=str(root))
    assert code == 0 and booted["changed"] is False and booted["reboot_required"] is False and booted["running"] == FULL


@pytest.mark.parametrize("method", HOST_POOL_METHODS)
def test_an_unsized_host_count_the_planned_default_would_resize_is_refused_before_anything_is_written(tmp_path, capsys, tools, method):
    root = host_pool_root(tmp_path, method, pool="hugepages=1024")
    before, calls = tree(root), tools()
    for check_mode in (True, False):
        code, result = run(capsys, args=WANTED, root=str(root), _ansible_check_mode=check_mode)
        assert code == 1 and result["msg"].startswith(
            "kernel arg hugepages=1024 comes before any hugepagesz=, so it counts pages of the default huge page size")
        assert "the plan's default_hugepagesz=1G" in result["msg"] and "(hugepagesz=<size> hugepages=1024)" in result["msg"]
        assert tree(root) == before and [c for c in tools()[len(calls):] if c != "grubby --info=ALL"] == []
    code, result = run(capsys, args=FULL + ["hugepagesz=1G", "hugepages=0:16,1:16"], root=str(root))  # no default: it stays
    assert code == 0 and all(pools(line)[:1] == ["hugepages=1024"] for line in boot_lines(root, method))


@pytest.mark.parametrize("method", ["grubby", "transactional_update-grub", "transactional_update-bls"])
def test_the_record_follows_check_mode_and_diff(tmp_path, capsys, tools, method):
    root = host_pool_root(tmp_path, method)
    code, check = run(capsys, args=WANTED, root=str(root), _ansible_check_mode=True, _ansible_diff=True)
    assert code == 0 and "/" + RECORD in check["files"] and not (root / RECORD).exists()
    diff = [d for d in check["diff"] if d["after_header"] == str(root / RECORD)]
    assert diff[0]["before"] == "" and "\nwritten=%s\n" % " ".join(WANTED[4:]) in diff[0]["after"]
    code, done = run(capsys, args=WANTED, root=str(root))
    assert (root / RECORD).read_text() == diff[0]["after"]
    assert stat.S_IMODE((root / RECORD).stat().st_mode) == 0o644
    code, fewer = run(capsys, args=FULL, root=str(root), _ansible_diff=True)
    assert "\nwritten=\nhistory=hugepagesz=1G default_hugepagesz=1G\n" in (root / RECORD).read_text()
    assert len(fewer["backup_files"]) == len(fewer["files"])  # the record is backed up like the rest


def test_grubby_gives_each_entry_its_own_pools(tmp_path, capsys, tools):
    root = rocky_root(tmp_path, extra="isolcpus=1-3 quiet")
    entries = sorted((root / "boot/loader/entries").iterdir())
    entries[0].write_text(entries[0].read_text().replace(" quiet", " hugepagesz=2M hugepages=64 quiet"))
    before = bls_options(root)
    code, done = run(capsys, args=WANTED, root=str(root))
    assert code == 0 and done["changed"] is True
    assert [c.split()[1] for c in tools() if "--update-kernel" in c] == ["--update-kernel=0", "--update-kernel=1", "--update-kernel=2"]
    for name, options in bls_options(root).items():
        host = ["hugepagesz=2M", "hugepages=64"] if "hugepagesz=2M" in before[name] else []
        assert pools(options) == host + WANTED[4:], name
    code, again = run(capsys, args=WANTED, root=str(root))
    assert code == 0 and again["changed"] is False and again["commands"] == []
