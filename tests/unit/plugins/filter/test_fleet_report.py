# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet_report filter: what it reads of each host's variables, and its refusals."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.filter.fleet_report import fleet_report, host_entry
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import numa_labels
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan

TOPO = {
    "cpus_online": "0-7", "cpus_offline": "", "cores": [[c, c + 4] for c in range(4)],
    "numa_nodes": [{"id": 0, "cpus": "0-7", "memory_kb": 32 * 1024 * 1024, "hugepages": {}}],
    "pci_devices": [], "hugepage_sizes_kb": [2048, 1048576], "kernel_release": "6.8.0",
}
PLAN = make_plan(TOPO, node_labels=["maitred.io/numa-aligned=true"])


def test_each_host_is_read_from_its_variables():
    hostvars = {"a": {"rke2_numa_topology": TOPO, "rke2_numa_plan": PLAN, "unrelated": 1},
                "b": {"rke2_numa_topology": TOPO, "rke2_numa_plan": {}}}
    # the labels per host: the plan's RKE2 node-label entries, then the NUMA capacity labels the labels role publishes
    capacity = sorted("%s=%s" % item for item in numa_labels(PLAN).items())
    assert "rke2-numa.maitred.io/max-pod-cpus=6" in capacity
    assert host_entry("a", hostvars["a"]) == {"host": "a", "topology": TOPO, "plan": PLAN, "compliance": None, "pods": None, "not_checked": "",
                                              "refused": False,
                                              "labels": ["maitred.io/numa-aligned=true"] + capacity}
    # an empty plan (a role default) is no plan
    assert host_entry("b", hostvars["b"])["plan"] is None
    text = fleet_report(["a", "b", "gone"], hostvars, output="markdown")
    assert "3 hosts: 1 planned, 2 not planned" in text
    assert "| gone | not planned: " in text


def test_check_mode_reads_the_compliance():
    hostvars = {"a": {"rke2_numa_topology": TOPO, "rke2_numa_plan": PLAN,
                      "rke2_numa_compliance": {"compliant": True, "plan_fingerprint": PLAN["fingerprint"]},
                      "rke2_numa_pod_audit": {"unpinned": [], "topology_errors": ["ml/x: TopologyAffinityError"]}}}
    page = fleet_report(["a"], hostvars, mode="check")
    assert page.startswith("<!DOCTYPE html>") and "1 host: 1 compliant" in page
    assert "REFUSED: ml/x: TopologyAffinityError" in page


@pytest.mark.parametrize("kwargs, message", [
    ({"output": "pdf"}, "output must be html or markdown"),
    ({"mode": "apply"}, "mode must be one of plan, check"),
])
def test_refusals_name_the_option(kwargs, message):
    with pytest.raises(AnsibleFilterError, match=message):
        fleet_report(["a"], {}, **kwargs)
