# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fleet in the middle of an RKE2 upgrade: each node planned for the kubelet it runs - its Node's kubeletVersion (the
check's API read) or the RKE2 runtime on the host (plan.yml) - and judged by that minor's rules. Node filesystem copies
(ansible_connection=local), the real kubectl against the API stand-in."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import gpu_fleet, needs_kubectl
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import make_node
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_first_roll import run
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_hostile_inventory import SPEC, node_vars

pytestmark = needs_kubectl
KUBELETS = {"gpu-33": "v1.33.6+rke2r1", "gpu-35": "v1.35.3+rke2r1", "gpu-37": "v1.37.2+rke2r1"}
UNCORE = "cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true"


@pytest.fixture
def cluster(tmp_path):
    for server in gpu_fleet(tmp_path, ()):   # gpu_fleet's end (the server stopped, its log checked) after the test
        for name, version in KUBELETS.items():
            server.add_node(name, ready=True, labels={"gpu": "true", "kubernetes.io/hostname": name}, kubeletVersion=version)
        yield server


def test_the_check_plans_each_node_for_its_own_kubelet_and_says_so(cluster, tmp_path):
    """No version given: each node's plan is its Node's minor (fleet.json, the last line); an option only the 1.34+
    kubelets take without a gate leaves the 1.33 node not checked, in its kubelet's words, and plans the others."""
    hosts = dict((name, node_vars(make_node(tmp_path / name, **SPEC))) for name in KUBELETS)
    out, text = run(cluster, tmp_path, "check.yml", hosts, "-e", "rke2_numa_report_dir=report",
                    "-e", json.dumps({"rke2_numa_extra_kubelet_args": [UNCORE]}))
    assert out.returncode != 0, "a node not checked fails the run at its end"
    fleet = json.loads((tmp_path / "operator/report/fleet.json").read_text())
    assert fleet["kubernetes"] == {"1.35": ["gpu-35"], "1.37": ["gpu-37"]}, fleet["kubernetes"]
    assert list(fleet["refused"]) == ["gpu-33"]
    assert ('CPU Manager Policy Alpha-level Options not enabled, but option "prefer-align-cpus-by-uncorecache" provided'
            in fleet["refused"]["gpu-33"])
    assert "planned for their own kubelet: 1.35 (gpu-35); 1.37 (gpu-37)" in text
    facts = json.loads((tmp_path / "operator/report/run.json").read_text())["facts"]
    for name in ("gpu-35", "gpu-37"):
        plan = facts[name]["plan"]
        assert plan["kubernetes"] == {"version": KUBELETS[name], "minor": KUBELETS[name][1:5],
                                      "source": "its Node's status.nodeInfo.kubeletVersion"}
        assert UNCORE in plan["kubelet_args"]


def test_a_version_given_for_the_whole_fleet_is_refused_on_the_nodes_that_run_another(cluster, tmp_path):
    hosts = dict((name, node_vars(make_node(tmp_path / name, **SPEC))) for name in KUBELETS)
    out, text = run(cluster, tmp_path, "check.yml", hosts, "-e", "rke2_numa_report_dir=report", "-e", "rke2_numa_kubernetes_version=1.33")
    assert out.returncode != 0, "the hosts refused fail the run at its end"
    fleet = json.loads((tmp_path / "operator/report/fleet.json").read_text())
    assert sorted(fleet["refused"]) == ["gpu-35", "gpu-37"]
    assert ("rke2_numa_kubernetes_version 1.33 is not the kubelet this node runs: v1.37.2+rke2r1 (its Node's "
            "status.nodeInfo.kubeletVersion)") in fleet["refused"]["gpu-37"]
    assert fleet["kubernetes"] == {"1.33": ["gpu-33"]}


def test_plan_reads_the_rke2_runtime_of_the_host_where_there_is_no_api(cluster, tmp_path):
    """plan.yml reads no cluster: the host's RKE2 runtime (<data-dir>/bin -> data/v1.36.4-rke2r1-<hash>/bin) says the
    minor; a host without RKE2 (a gathered tree) is planned for the oldest supported one, and says why."""
    with_rke2, without = make_node(tmp_path / "gpu-36", **SPEC), make_node(tmp_path / "gathered", **SPEC)
    data = with_rke2 / "var/lib/rancher/rke2/data/v1.36.4-rke2r1-0123456789ab/bin"
    data.mkdir(parents=True)
    os.symlink(str(data), str(with_rke2 / "var/lib/rancher/rke2/bin"))
    hosts = {"gpu-36": node_vars(with_rke2), "gathered": node_vars(without)}
    out, text = run(cluster, tmp_path, "plan.yml", hosts, "-e", "rke2_numa_plan_dir=plans")
    assert out.returncode == 0, text[-3000:]
    plans = dict((name, json.loads((tmp_path / "operator/plans" / (name + ".json")).read_text())) for name in hosts)
    assert plans["gpu-36"]["kubernetes"]["version"] == "v1.36.4+rke2r1"
    assert plans["gpu-36"]["kubernetes"]["source"].startswith("the RKE2 runtime on the host (/var/lib/rancher/rke2/bin -> ")
    assert plans["gathered"]["kubernetes"]["minor"] == "1.33"
    assert plans["gathered"]["kubernetes"]["source"].startswith("no kubelet version known")
