# -*- coding: utf-8 -*-
"""The boot_params role through ansible-playbook on a fake Debian root, with the
boot loader stand-ins on PATH: check mode, a run, an idempotent second run, the
exported rke2_numa_reboot_required; and its variables kept in step with the
module's options. (The reboot itself is never run here.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.modules import boot_params

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLE = os.path.join(REPO, "roles", "boot_params")
STANDINS = os.path.join(REPO, "tests", "standins", "bootloader")
ARGS = ["isolcpus=managed_irq,1-3", "nohz_full=1-3", "rcu_nocbs=1-3", "irqaffinity=0"]


def test_role_variables_match_their_specs_and_the_module():
    with open(os.path.join(ROLE, "defaults", "main.yml")) as f:
        defaults = yaml.safe_load(f)
    with open(os.path.join(ROLE, "meta", "argument_specs.yml")) as f:
        specs = yaml.safe_load(f)["argument_specs"]["main"]["options"]
    # the inputs set by earlier roles (rke2_numa_plan) are required and have no default here
    inputs = {name for name, spec in specs.items() if spec.get("required")}
    assert inputs == {"rke2_numa_plan"}
    assert sorted(defaults) == sorted(set(specs) - inputs)
    for name, spec in specs.items():
        assert name.startswith("rke2_numa_")
        if name not in inputs:
            assert spec.get("default") == defaults[name], name
    # the boot root and method are shared with the check (node_state_info): the common role's
    with open(os.path.join(REPO, "roles", "common", "defaults", "main.yml")) as f:
        shared = yaml.safe_load(f)
    with open(os.path.join(REPO, "roles", "common", "meta", "argument_specs.yml")) as f:
        shared_specs = yaml.safe_load(f)["argument_specs"]["main"]["options"]
    specs, defaults = dict(specs, **shared_specs), dict(defaults, **shared)
    module = boot_params.ARGUMENT_SPEC
    assert specs["rke2_numa_boot_method"]["choices"] == module["method"]["choices"]
    assert defaults["rke2_numa_boot_method"] == module["method"]["default"]
    assert defaults["rke2_numa_boot_root"] == module["root"]["default"]
    assert defaults["rke2_numa_bootloader_update"] is module["update_bootloader"]["default"]
    assert defaults["rke2_numa_reboot_ok"] is False


def make_play(tmp_path, args=tuple(ARGS), linux=""):
    """ansible-playbook with the role on a fake Debian root whose GRUB_CMDLINE_LINUX is ``linux``."""
    root = tmp_path / "root"
    (root / "etc/default").mkdir(parents=True)
    (root / "proc").mkdir()
    (root / "etc/os-release").write_text("ID=debian\nVERSION_ID=12\n")
    (root / "etc/default/grub").write_text('GRUB_CMDLINE_LINUX_DEFAULT="isolcpus=1-3 quiet"\nGRUB_CMDLINE_LINUX="%s"\n' % linux)
    (root / "proc/cmdline").write_text("BOOT_IMAGE=/boot/vmlinuz ro %s quiet isolcpus=1-3\n" % linux)
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Boot params", "hosts": "localhost", "gather_facts": False,
        "vars": {"rke2_numa_plan": {"kernel_args": list(args)}, "rke2_numa_boot_root": str(root)},
        "roles": [{"role": "maitred.rke2_numa.boot_params"}],
        "post_tasks": [{"name": "Show", "ansible.builtin.debug": {"msg": "reboot_required={{ rke2_numa_reboot_required }}"}}],
    }]))
    log = tmp_path / "calls.log"
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_DEPRECATION_WARNINGS="false",
               PATH=STANDINS + os.pathsep + os.environ.get("PATH", ""),
               RKE2_NUMA_STANDIN_ROOT=str(root), RKE2_NUMA_STANDIN_LOG=str(log))

    def run(*extra):
        cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
               "-e", "ansible_python_interpreter=%s" % sys.executable, str(playbook)] + list(extra)
        result = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stdout + result.stderr
        changed = int(re.search(r"changed=(\d+)", result.stdout).group(1))
        return changed, result.stdout, log.read_text().splitlines() if log.exists() else []

    run.root = root
    return run


@pytest.fixture
def play(tmp_path):
    return make_play(tmp_path)


def test_role_check_run_run(play):
    changed, out, calls = play("--check")
    assert changed == 1 and "reboot_required=True" in out and calls == []
    assert not (play.root / "etc/default/grub.d").exists()

    changed, out, calls = play()
    assert changed == 1 and "reboot_required=True" in out and calls == ["update-grub "]
    assert re.search(r"TASK \[maitred\.rke2_numa\.boot_params : Reboot the host\] \**\nskipping: \[localhost\]", out), out
    grub_cfg = (play.root / "boot/grub/grub.cfg").read_text()
    assert grub_cfg.count("isolcpus=") == 2 and "isolcpus=1-3" not in grub_cfg

    changed, out, calls = play()
    assert changed == 0 and calls == ["update-grub "]
    booted = [line.strip() for line in grub_cfg.splitlines() if line.strip().startswith("linux") and "single" not in line][0]
    (play.root / "proc/cmdline").write_text("BOOT_IMAGE=" + booted[len("linux"):].strip() + "\n")
    changed, out, calls = play()
    assert changed == 0 and "reboot_required=False" in out


def test_role_keeps_the_hosts_hugepage_pool_next_to_the_planned_one(tmp_path):
    planned = ARGS + ["default_hugepagesz=1G", "hugepagesz=1G", "hugepages=0:16,1:16"]
    play = make_play(tmp_path, args=planned, linux="hugepagesz=2M hugepages=1024")
    changed, out, calls = play()
    assert changed == 1 and calls == ["update-grub "]
    normal, recovery = [line.split() for line in (play.root / "boot/grub/grub.cfg").read_text().splitlines() if line.strip().startswith("linux")]
    for line in (normal, recovery):
        hugepages = [t for t in line if t.partition("=")[0] in ("hugepagesz", "hugepages", "default_hugepagesz")]
        assert hugepages == ["hugepagesz=2M", "hugepages=1024", "default_hugepagesz=1G", "hugepagesz=1G", "hugepages=0:16,1:16"]
    (play.root / "proc/cmdline").write_text("BOOT_IMAGE=" + " ".join(normal[1:]) + "\n")
    changed, out, calls = play()
    assert changed == 0 and "reboot_required=False" in out
