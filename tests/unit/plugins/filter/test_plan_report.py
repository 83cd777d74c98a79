# -*- coding: utf-8 -*-
"""The plan report: hugepage sizes named as the kubelet names them."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.filter.plan_report import plan_report
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
