# -*- coding: utf-8 -*-
"""The rollback's restore steps through ansible-playbook on this machine, for
every branch: rke2_config in merge and drop-in mode with the config changed,
only its mode changed, or nothing changed (and a symlinked config), with the
checkpoints present or absent. After rke2_config, the reset's backup and
delete, and a failed kubelet that wrote checkpoints of its own, the rollback
must leave every file exactly as it was before the run: bytes, mode, owner,
symlinks, which files exist. (Stopping and starting the agent is Molecule's.)

Each config branch runs once, with the checkpoints present or absent in turn
(the checkpoint tasks never read the config's result, and each state meets both
config modes): 8 cases, not the 8 x 2 product, which cost twice the CPU for
no path more. All cases are hosts of one inventory (each local, with its own
files) and run in one ansible-playbook: one start-up and one compile of the
roles; each case's test then reads its host's recap and its files."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TOKEN = "K10feed::server:r0llback"
PLANNED = ["cpu-manager-policy=static", "reserved-cpus=0,2"]
CONFIG = "# owned by terraform\nserver: https://10.0.0.1:9345\ntoken: %s\nkubelet-arg:\n  - max-pods=250\n" % TOKEN
AS_PLANNED = CONFIG + "".join('  - "%s"\n' % a for a in PLANNED)
DROPIN = '# Managed by maitred.rke2_numa: kubelet args for NUMA-aligned GPU pods. Do not edit.\nkubelet-arg+:\n' + \
    "".join("- %s\n" % a for a in PLANNED)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="writes files as root:root, like on a node")


def snapshot(*dirs):
    """Every file below the folders: kind, bytes or link target, mode, owner."""
    out = {}
    for top in dirs:
        for base, subdirs, files in os.walk(top):
            for name in subdirs + files:
                path = os.path.join(base, name)
                st = os.lstat(path)
                if os.path.islink(path):
                    out[path] = ("link", os.readlink(path))
                elif os.path.isdir(path):
                    out[path] = ("dir", oct(st.st_mode & 0o7777), st.st_uid)
                else:
                    with open(path, "rb") as f:
                        out[path] = ("file", f.read(), oct(st.st_mode & 0o7777), st.st_uid, st.st_gid)
    return out


BRANCHES = {
    # name: (config mode, config.yaml text, its mode, symlinked, drop-in text or None)
    "merge-changed": ("merge", CONFIG, 0o644, False, None),
    "merge-mode-only": ("merge", AS_PLANNED, 0o644, False, None),
    "merge-nothing": ("merge", AS_PLANNED, 0o600, False, None),
    "merge-symlink-changed": ("merge", CONFIG, 0o640, True, None),
    "merge-new-file": ("merge", None, None, False, None),
    "dropin-created": ("dropin", CONFIG, 0o644, False, None),
    "dropin-changed": ("dropin", CONFIG, 0o600, False, "kubelet-arg+:\n- reserved-cpus=1\n"),
    "dropin-nothing": ("dropin", CONFIG, 0o600, False, DROPIN),
}


# Pairwise, not the product: present and absent alternate over the sorted branches, so that each
# checkpoint state meets both config modes (dropin: present, absent, present; merge: absent, present, ...).
CASES = ["%s-%s" % (branch, ("present", "absent")[i % 2]) for i, branch in enumerate(sorted(BRANCHES))]


def make_case(base, case):
    """The files of one case under base/case; returns (its host vars, its snapshot before the run)."""
    branch, checkpoints = case.rsplit("-", 1)
    mode, text, fmode, symlinked, dropin = BRANCHES[branch]
    etc = base / case / "etc"
    kubelet = base / case / "kubelet"
    os.makedirs(str(etc / "config.yaml.d"))
    os.makedirs(str(kubelet))
    config = etc / "config.yaml"
    if text is not None:
        real = etc / "real-config.yaml" if symlinked else config
        real.write_text(text)
        os.chmod(str(real), fmode)
        if symlinked:
            os.symlink("real-config.yaml", str(config))
    if dropin is not None:
        (etc / "config.yaml.d" / "50-rke2-numa.yaml").write_text(dropin)
        os.chmod(str(etc / "config.yaml.d" / "50-rke2-numa.yaml"), 0o600)
    if checkpoints == "present":
        (kubelet / "cpu_manager_state").write_text('{"policyName":"none","defaultCpuSet":"","checksum":1}')
        (kubelet / "memory_manager_state").write_text('{"policyName":"None","machineState":{},"checksum":2}')
    host_vars = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                 "rke2_numa_config_mode": mode, "rke2_numa_config_path": str(config),
                 "rke2_numa_config_dropin_path": str(etc / "config.yaml.d" / "50-rke2-numa.yaml"),
                 "rke2_numa_kubelet_dir": str(kubelet), "rke2_numa_backup_dir": str(base / case / "backup")}
    return host_vars, snapshot(str(etc), str(kubelet))


@pytest.fixture(scope="module")
def rollback_run(tmp_path_factory):
    """Every case's files, one ansible-playbook over all of them: (its output, {case: snapshot before})."""
    base = tmp_path_factory.mktemp("rollback")
    hosts, before = {}, {}
    for case in CASES:
        hosts[case], before[case] = make_case(base, case)
    (base / "inventory.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    kubelet = "{{ rke2_numa_kubelet_dir }}"
    playbook = base / "play.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Rollback", "hosts": "all", "gather_facts": False,
        "vars": {"rke2_numa_plan": {"kubelet_args": PLANNED, "node_labels": [], "node_taints": []}},
        "tasks": [
            {"name": "Merge", "ansible.builtin.include_role": {"name": "maitred.rke2_numa.rke2_config"}},
            {"name": "Back up and delete", "maitred.rke2_numa.kubelet_checkpoints": {
                "kubelet_dir": kubelet, "backup_dir": "{{ rke2_numa_backup_dir }}", "state": "absent"},
             "register": "__rke2_numa_checkpoints"},
            # One process for both files (a copy loop costs four module runs per host).
            {"name": "The failed kubelet wrote checkpoints of its own", "ansible.builtin.command": {"argv": [
                "sh", "-c", 'for f in cpu_manager_state memory_manager_state; do echo \'{"policyName":"static"}\' > "$1/$f"; done',
                "sh", kubelet]}},
            # as kubelet_reset/tasks/rollback.yml does
            {"name": "Restore the config", "maitred.rke2_numa.rke2_config": {
                "path": "{{ rke2_numa_config_path }}", "mode": "{{ rke2_numa_config_mode }}",
                "dropin_path": "{{ rke2_numa_config_dropin_path }}", "backup_dir": "{{ rke2_numa_backup_dir }}",
                "restore": "{{ rke2_numa_config_result }}"},
             "when": "rke2_numa_config_result.backup_file | default('') | length > 0 or rke2_numa_config_result.created | default(false)"},
            # as kubelet_reset/tasks/rollback.yml does
            {"name": "Restore the checkpoints", "maitred.rke2_numa.kubelet_checkpoints": {
                "kubelet_dir": kubelet, "state": "restored", "backup_path": "{{ __rke2_numa_checkpoints.backup_path }}"}},
        ],
    }]))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false", ANSIBLE_FORKS="8")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(base / "inventory.yml"),
           "--diff", str(playbook)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    return out, base, before


@pytest.mark.parametrize("case", CASES)
def test_rollback_restores_exactly_what_was_there(rollback_run, case):
    out, base, before = rollback_run
    output = out.stdout + out.stderr
    recap = re.search(r"^%s\s+: ok=\d+\s+changed=\d+\s+unreachable=(\d+)\s+failed=(\d+)" % re.escape(case), out.stdout, re.M)
    assert recap and recap.groups() == ("0", "0"), output
    assert TOKEN not in output
    assert snapshot(str(base / case / "etc"), str(base / case / "kubelet")) == before[case]
