# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rke2_numa_kubelet_config=file through the playbooks: check.yml and rolling.yml read a node in the mode it is in
(node_state_info's kubelet_conf, the same rules as flags), a flag that would win over the file blocks the node before
any write. Node filesystem copies (ansible_connection=local), the real kubectl against the API stand-in."""

from __future__ import annotations

import json

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import gpu_fleet, needs_kubectl
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply, make_node, tree
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_first_roll import run
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_hostile_inventory import SPEC, node_vars

pytestmark = needs_kubectl


@pytest.fixture
def cluster(tmp_path):
    yield from gpu_fleet(tmp_path, ("gpu-a",))


def file_node(tmp_path):
    root = make_node(tmp_path / "gpu-a", **SPEC)
    comply(root, make_plan(read_topology(str(root))), config="file")
    rke2 = root / "etc/rancher/rke2"
    return root, {"gpu-a": node_vars(root, rke2_numa_config_dropin_path=str(rke2 / "config.yaml.d" / "90-rke2-numa.yaml"))}


def test_a_node_in_file_mode_is_compliant_in_file_mode_and_a_roll_leaves_it_alone(cluster, tmp_path):
    root, hosts = file_node(tmp_path)
    out, text = run(cluster, tmp_path, "check.yml", hosts, "-e", "rke2_numa_report_dir=report", "-e", "rke2_numa_kubelet_config=file")
    assert out.returncode == 0, text[-4000:]
    report = json.loads((tmp_path / "operator/report/gpu-a.json").read_text())
    assert report["compliant"], report["reasons"]
    before = tree(root)
    out, text = run(cluster, tmp_path, "rolling.yml", hosts, "-e", "rke2_numa_kubelet_config=file")
    assert out.returncode == 0, text[-4000:]
    assert tree(root) == before
    # the same node judged for flags: its config moves back (a drain and a restart), file mode's drop-in named
    out, text = run(cluster, tmp_path, "check.yml", hosts, "-e", "rke2_numa_report_dir=flags")
    report = json.loads((tmp_path / "operator/flags/gpu-a.json").read_text())
    assert "rke2_config" in report["actions"] and "drain" in report["actions"], report
    assert any("is left from rke2_numa_kubelet_config=file" in r for r in report["reasons"])


def test_a_managed_flag_in_rancher_s_file_blocks_file_mode_before_any_write(cluster, tmp_path):
    root, hosts = file_node(tmp_path)
    (root / "etc/rancher/rke2/config.yaml.d/50-rancher.yaml").write_text("kubelet-arg:\n- cpu-manager-policy=none\n")
    before = tree(root)
    out, text = run(cluster, tmp_path, "rolling.yml", hosts, "-e", "rke2_numa_kubelet_config=file", "-e", "rke2_numa_report_dir=report")
    assert tree(root) == before
    fleet = json.loads((tmp_path / "operator/report/fleet.json").read_text())
    blocked = json.dumps(fleet)
    assert "Rancher sets cpu-manager-policy=none" in blocked and "kubelet.conf.d/90-rke2-numa.conf" in blocked, blocked[:3000]
