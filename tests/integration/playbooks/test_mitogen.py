# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection under Mitogen for Ansible (issue 53 item 6; docs/AWX.md, "Mitogen"): check.yml with Mitogen's
mitogen_linear strategy finds what the stock strategy finds, host by host and in its reports - the node read, the
controller-side plan and decision, the kubectl read, the report files. Mitogen is a strategy plugin from outside
ansible-core (deprecated as a kind: "Use of strategy plugins not included in ansible.builtin are deprecated"), so the
collection never needs it; this keeps it working for those who choose it."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures import fake_kubectl
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply, make_node

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MITOGEN = importlib.util.find_spec("ansible_mitogen")

pytestmark = [pytest.mark.integration, pytest.mark.skipif(MITOGEN is None, reason="mitogen is not installed (requirements-dev.txt)")]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    base = tmp_path_factory.mktemp("mitogen")
    hosts = {}
    for name in ("gpu-a", "gpu-b", "gpu-c"):
        root = make_node(base / name, sockets=2, cores_per_socket=4, threads=2, gpus_per_node=1)
        if name != "gpu-b":
            comply(root, make_plan(read_topology(str(root))), booted=name == "gpu-a")
        hosts[name] = {"rke2_numa_sysfs_root": str(root), "rke2_numa_boot_root": str(root), "rke2_numa_kubelet_dir": str(root / "var/lib/kubelet"),
                       "rke2_numa_config_path": str(root / "etc/rancher/rke2/config.yaml")}
    inventory = base / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"gpu": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                                                          "rke2_numa_kubectl": str(fake_kubectl.write(base / "kubectl"))},
                                                 "hosts": hosts}}))
    return str(inventory)


def check(inventory, report_dir, mitogen):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="false")
    if mitogen:
        env.update(ANSIBLE_STRATEGY="mitogen_linear",
                   ANSIBLE_STRATEGY_PLUGINS=os.path.join(os.path.dirname(MITOGEN.origin), "plugins", "strategy"))
    out = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory,
                          # become off (-e: the tasks delegated to localhost too): Mitogen runs become itself, with sudo,
                          # even as root where the stock local connection needs none - and this machine has no sudo
                          os.path.join(REPO, "playbooks", "check.yml"), "-e", "rke2_numa_report_dir=%s" % report_dir, "-e", "ansible_become=false"],
                         env=env, capture_output=True, text=True, check=False)
    assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]
    return out


def test_the_check_under_mitogen_finds_what_the_stock_strategy_finds(fleet, tmp_path):
    stock, mitogen = check(fleet, tmp_path / "stock", False), check(fleet, tmp_path / "mitogen", True)
    assert "strategy plugins not included in ansible.builtin are deprecated" in mitogen.stderr   # it did run under Mitogen

    def lines(out):
        return re.findall(r'^\s+"(gpu-[abc]: [^"]*|\d+ of 3 compliant[^"]*)"', out.stdout, re.M)

    assert lines(stock) == lines(mitogen) and len(lines(stock)) == 4, lines(mitogen)
    assert "1 of 3 compliant; to reconfigure: gpu-b, gpu-c (2 need a reboot)" in mitogen.stdout
    for name in ("gpu-a.json", "gpu-b.json", "gpu-c.json", "fleet.json", "summary.md"):
        assert (tmp_path / "mitogen" / name).read_text() == (tmp_path / "stock" / name).read_text(), name
    assert json.loads((tmp_path / "mitogen" / "fleet.json").read_text())["compliant"] == ["gpu-a"]
