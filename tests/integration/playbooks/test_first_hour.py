# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The README's minimal inventory, as a newcomer runs it: the RKE2 server is where kubectl runs, never a node the
playbooks plan, check or roll; a pattern that takes it is refused; a check without the rights to read root's files
fails, naming them and the way out (become). Node filesystem copies (ansible_connection=local), the real kubectl
against the API stand-in."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBECTL, gpu_fleet, needs_kubectl
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import make_node, tree

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAYBOOKS = os.path.join(REPO, "playbooks")
SPEC = dict(sockets=2, cores_per_socket=4, threads=2, gpus_per_node=1)
NOBODY = 65534


def readme_inventory():
    """The README's minimal inventory: its ```yaml block that starts with ``# inventory.yml``."""
    with open(os.path.join(REPO, "README.md")) as f:
        text = f.read()
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if b.startswith("# inventory.yml\n")]
    assert len(blocks) == 1, "README.md shows one minimal inventory"
    return yaml.safe_load(blocks[0])


def local_inventory(path, nodes, common):
    """The README's inventory with its hosts made local: each worker a node copy, the server the kubectl host; every
    variable the README sets is kept but the connection's (ansible_user, ansible_host)."""
    inventory = readme_inventory()
    top = inventory["all"]
    top["vars"] = dict({k: v for k, v in top["vars"].items() if k != "ansible_user"},
                       ansible_connection="local", ansible_python_interpreter=sys.executable, **common)
    for group in top["children"].values():
        for host in group["hosts"]:
            group["hosts"][host] = dict(nodes.get(host, {}))
    path.write_text(yaml.safe_dump(inventory))
    return inventory


def node_vars(root):
    return {"rke2_numa_sysfs_root": str(root), "rke2_numa_boot_root": str(root),
            "rke2_numa_kubelet_dir": str(root / "var/lib/kubelet"),
            "rke2_numa_config_path": str(root / "etc/rancher/rke2/config.yaml"),
            "rke2_numa_nfd_features_dir": str(root / "etc/kubernetes/node-feature-discovery/features.d")}


def play(inventory, playbook, *extra, env=None, **kwargs):
    env = dict(env or os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_DEPRECATION_WARNINGS="false")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
           os.path.join(PLAYBOOKS, playbook)] + list(extra)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, **kwargs)
    return out, out.stdout + out.stderr


def host_results(text, host):
    """The task results Ansible printed for ``host`` after the first play (the one that leaves the servers out:
    controller work, run once on the play's first host): ``ok: [server1]``, ``changed: [server1 -> ...]``..."""
    after = text.split("PLAY [", 2)[2] if text.count("PLAY [") >= 2 else text
    return re.findall(r"^(?:ok|changed|skipping|fatal|failed|included): \[%s(?:\]| ->)" % re.escape(host), after, re.M)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """Two GPU workers (node copies) and the server (the kubectl host), in a folder every user may search."""
    base = tmp_path_factory.mktemp("first-hour")
    workers = {name: make_node(base / name, **SPEC) for name in ("gpu01", "gpu02")}
    return base, workers


@needs_kubectl
def test_the_minimal_inventory_plans_checks_and_rolls_the_workers_never_the_server(fleet, tmp_path):
    base, workers = fleet
    cluster_gen = gpu_fleet(tmp_path, ("gpu01", "gpu02"))
    cluster = next(cluster_gen)
    try:
        inventory = tmp_path / "inventory.yml"
        local_inventory(inventory, dict((n, node_vars(r)) for n, r in workers.items()),
                        {"rke2_numa_kubectl": KUBECTL, "rke2_numa_kubeconfig": cluster.kubeconfig})
        before = dict((n, tree(r)) for n, r in workers.items())
        env = dict(cluster.env)
        out, text = play(inventory, "plan.yml", env=env)
        assert out.returncode == 0, text[-3000:]
        assert "gpu01" in text and "gpu02" in text
        assert "server1: an RKE2 server, left out" in text
        assert host_results(text, "server1") == [], text
        out, text = play(inventory, "check.yml", env=env)
        assert out.returncode == 0, text[-3000:]
        assert re.search(r"0 of 2 compliant; to reconfigure: gpu01, gpu02 ", text), text[-3000:]
        assert host_results(text, "server1") == [], "kubectl runs there only as a delegate (gpu01 -> server1)"
        # the roll stops at the kubelet_reset preflight here (no systemd on the test host: Molecule rolls for real);
        # what matters is whom it takes
        out, text = play(inventory, "rolling.yml", "--check", env=env)
        summary = text.split("PLAY [Summarise the roll]", 1)[1].split("PLAY RECAP", 1)[0]
        assert "gpu01" in summary and "server1" not in summary, "the server is not among the nodes"
        assert "Could not match supplied host pattern" not in text
        assert host_results(text, "server1") == [], text
        assert dict((n, tree(r)) for n, r in workers.items()) == before
        # a pattern that takes the server: refused before anything is read, the way out named
        out, text = play(inventory, "plan.yml", "-e", "rke2_numa_hosts=all", env=env)
        assert out.returncode != 0
        assert ("server1 is an RKE2 server (rke2_numa_server_group servers): plan.yml would plan it; its hosts are the "
                "GPU workers. Name them (-e rke2_numa_hosts=gpu_workers), or add -e rke2_numa_include_servers=true to "
                "plan the server too") in text
        assert "TASK [maitred.rke2_numa.topology" not in text
        # asked for: the server is planned too (its topology is this machine's: it has no copy)
        out, text = play(inventory, "plan.yml", "-e", "rke2_numa_hosts=all", "-e", "rke2_numa_include_servers=true", env=env)
        assert out.returncode == 0, text[-3000:]
        assert host_results(text, "server1"), text[-3000:]
        assert [c for c in cluster.calls() if c["method"] not in ("GET",) and "subjectaccessreviews" not in c["path"]
                and "/leases" not in c["path"]] == [], "the check and the roll in check mode change nothing"
    finally:
        next(cluster_gen, None)


def test_a_check_without_the_rights_to_read_roots_files_fails_and_names_become(fleet, tmp_path):
    """The node read as a user who cannot read config.yaml (0600 root), become off: each worker is "not checked",
    with the files and the hint, and the run's exit code is not 0 - never BLOCKED, never "fix by hand". As root, the
    module runs as nobody (its interpreter drops the rights: setpriv); otherwise as the user running the test, its
    config.yaml made unreadable to it."""
    base, workers = fleet
    shared = tempfile.mkdtemp(prefix="rke2-numa-user-")   # reachable by the other user (tmp_path is root's, 0700)
    try:
        os.chmod(shared, 0o755)
        nodes = {}
        for name, root in workers.items():
            copy = os.path.join(shared, name)
            shutil.copytree(str(root), copy, symlinks=True)
            for folder, dirs, files in os.walk(copy):
                os.chmod(folder, 0o755)
                for f in files:
                    os.chmod(os.path.join(folder, f), 0o644)
            os.chmod(os.path.join(copy, "etc/rancher/rke2/config.yaml"), 0o600 if os.geteuid() == 0 else 0)
            nodes[name] = node_vars(type(root)(copy))
        common = {}
        user = __import__("pwd").getpwuid(os.geteuid()).pw_name
        if os.geteuid() == 0:
            python = os.path.join(shared, "python-as-nobody")
            with open(python, "w") as f:
                f.write("#!/bin/sh\nexec setpriv --reuid=%d --regid=%d --clear-groups /usr/bin/python3 \"$@\"\n" % (NOBODY, NOBODY))
            os.chmod(python, 0o755)
            common, user = {"ansible_python_interpreter": python}, "nobody"
        inventory = tmp_path / "inventory.yml"
        local_inventory(inventory, nodes, {})
        if common:   # the nodes' interpreter: the module runs as nobody (its code piped in, no root-only temp file)
            data = yaml.safe_load(inventory.read_text())
            data["all"]["children"]["gpu_workers"]["vars"] = common
            inventory.write_text(yaml.safe_dump(data))
        env = dict(os.environ, ANSIBLE_PIPELINING="true")
        out, text = play(inventory, "check.yml", "-e", "ansible_become=false", "-e", "rke2_numa_audit_pods=false", env=env)
        assert out.returncode != 0, text[-3000:]
        for name in nodes:
            assert re.search(r"%s: not checked: cannot read %s(, \S+)* as %s \(run with become\)" % (
                name, re.escape(nodes[name]["rke2_numa_config_path"]), user), text), text[-3000:]
        assert "BLOCKED" not in text and "fix by hand" not in text.split("compliant; to reconfigure", 1)[0]
        assert "not readable without become (run with become to check them): gpu01, gpu02" in text
    finally:
        shutil.rmtree(shared, ignore_errors=True)
