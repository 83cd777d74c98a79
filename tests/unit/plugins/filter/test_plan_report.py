# -*- coding: utf-8 -*-
"""The plan report: hugepage sizes named as the kubelet names them."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.filter.plan_report import plan_report, plan_text
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan

TOPO = {
    "cpus_online": "0-7", "cpus_offline": "", "cores": [[c, c + 4] for c in range(4)],
    "numa_nodes": [{"id": 0, "cpus": "0-7", "memory_kb": 32 * 1024 * 1024, "hugepages": {}}],
    "pci_devices": [], "hugepage_sizes_kb": [2048, 1048576], "kernel_release": "5.15.0",
}


@pytest.mark.parametrize(
    "options, line",
    [
        ({"hugepages_per_node": 2, "hugepages_nodes": "all"},
         "hugepages: hugepages-1Gi, 2 on node 0 (allocated by the pre-kubelet unit, not the cmdline)"),
        ({"hugepages_per_node": 512, "hugepages_size": "2M", "hugepages_nodes": "all", "hugepages_method": "cmdline"},
         "hugepages: hugepages-2Mi, 512 on node 0 (from the kernel cmdline)"),
    ],
)
def test_report_names_the_hugepage_resource(options, line):
    lines = plan_report(make_plan(TOPO, **options)).splitlines()
    assert line in lines


def test_report_without_hugepages_has_no_hugepage_line():
    assert not [line for line in plan_report(make_plan(TOPO)).splitlines() if line.startswith("hugepages:")]


def test_rejects_what_is_not_a_plan():
    with pytest.raises(AnsibleFilterError, match="expects the 'plan' dict"):
        plan_report({"failed": True})


def test_warnings_can_be_left_to_numa_plan():
    # plan.yml printed each warning twice: numa_plan's task warning and the report's WARNING line
    plan = make_plan(TOPO, pod_shapes=[{"name": "huge", "cpu": 64, "memory": "1Gi"}])
    assert plan["warnings"]
    assert [line for line in plan_report(plan).splitlines() if line.startswith("WARNING: pod shape huge")]
    assert "WARNING" not in plan_report(plan, warnings=False)
    assert "pod shape huge: fits NOWHERE" in plan_report(plan, warnings=False)


def test_round_robin_columns_are_compressed():
    topo = {"cpus_online": "0-31", "cpus_offline": "", "cores": [[c, c + 16] for c in range(16)],
            "numa_nodes": [{"id": n, "cpus": ",".join(str(c) for c in range(n, 32, 2)), "memory_kb": 32 * 1024 * 1024,
                            "hugepages": {}} for n in (0, 1)],
            "pci_devices": [], "hugepage_sizes_kb": [2048], "kernel_release": "6.8.0"}
    rows = [line.split() for line in plan_report(make_plan(topo)).splitlines()[2:4]]
    assert [row[:4] for row in rows] == [["0", "0,2,...,30", "0,16", "2,4,...,14,18,20,...,30"],
                                         ["1", "1,3,...,31", "1,17", "3,5,...,15,19,21,...,31"]]


def _fleet():
    """Two identical machines, one of another kernel, one the planner refused."""
    topology = dict(TOPO, numa_nodes=[dict(TOPO["numa_nodes"][0], has_cpu=True)])
    plan = make_plan(topology)
    other = dict(topology, kernel_release="6.8.0")
    return {"a": {"rke2_numa_topology": topology, "rke2_numa_plan": plan},
            "b": {"rke2_numa_topology": dict(topology), "rke2_numa_plan": dict(plan)},
            "c": {"rke2_numa_topology": other, "rke2_numa_plan": make_plan(other)},
            "d": {"__rke2_numa_plan_result": {"refused": "no CPU left"}}}


def test_identical_machines_print_one_text_the_others_name_it():
    """A thousand hosts of a few machine types: a few texts in the run's output (AWX's events), each other host one line
    naming the first host whose topology and plan it has, word for word."""
    hostvars = _fleet()
    lines = plan_text(["a", "b", "c", "d"], hostvars, per_host=True)
    fingerprint = hostvars["a"]["rke2_numa_plan"]["fingerprint"]
    assert lines["b"] == ["same topology and plan as a (plan %s)" % fingerprint]
    assert lines["a"][0].startswith("1 NUMA node") and "" in lines["a"] and "plan %s: reserved CPUs" % fingerprint in "\n".join(lines["a"])
    assert lines["c"] != lines["a"] and "6.8.0" in lines["c"][0] and lines["d"] == ["not planned: no CPU left"]
    # a host listed before its twin carries the text: the order given decides
    assert plan_text(["b", "a"], hostvars, per_host=True)["a"] == ["same topology and plan as b (plan %s)" % fingerprint]
    text = plan_text(["a", "b", "c", "d"], hostvars)
    assert text.count("plan %s: reserved CPUs" % fingerprint) == 2 and text.count("NUMA node (1 with CPUs)") == 2   # a and c
    assert "== b ==\nsame topology and plan as a (plan %s)\n" % fingerprint in text and "== d ==\nnot planned: no CPU left" in text
