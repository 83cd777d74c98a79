# -*- coding: utf-8 -*-
"""Rule 9: reset exactly when the kubelet would refuse its checkpoints."""

from __future__ import annotations

import json

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.maitred.rke2_numa.plugins.modules import kubelet_state_info
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_state import (
    expected_machine_state,
    reset_reasons,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan

GIB = 1024 ** 3
TOPO = {
    "cpus_online": "0-15",
    "cpus_offline": "",
    "cores": [[c, c + 8] for c in range(8)],
    "numa_nodes": [
        {"id": 0, "cpus": "0-3,8-11", "memory_kb": 64 * 1024 * 1024, "hugepages": {"2048": {"total": 0}, "1048576": {"total": 4}}},
        {"id": 1, "cpus": "4-7,12-15", "memory_kb": 64 * 1024 * 1024, "hugepages": {"2048": {"total": 0}, "1048576": {"total": 4}}},
    ],
    "pci_devices": [],
    "hugepage_sizes_kb": [2048, 1048576],
    "kernel_release": "6.8.0",
}
PLAN = make_plan(TOPO, hugepages_per_node=4, hugepages_nodes="all")


def cpu(policy="static", default="0-15", assigned="", exists=True, valid=True, entries=None):
    return {"exists": exists, "valid": valid, "policy": policy, "default_cpu_set": default, "assigned_cpus": assigned,
            "entries": entries if entries is not None else ({"pod-1": {"vllm": assigned}} if assigned else {}),
            "error": None if valid else "bad json"}


def machine_state(reserved_mib=1274, hugepages_1g=4, node_memory=64 * GIB):
    state = {}
    for nid in ("0", "1"):
        hp = hugepages_1g * GIB
        reserved = reserved_mib * 1024 * 1024
        state[nid] = {"numberOfAssignments": 0, "cells": [int(nid)], "memoryMap": {
            "hugepages-2Mi": {"total": 0, "systemReserved": 0, "allocatable": 0, "reserved": 0, "free": 0},
            "hugepages-1Gi": {"total": hp, "systemReserved": 0, "allocatable": hp, "reserved": 0, "free": hp},
            "memory": {"total": node_memory, "systemReserved": reserved, "allocatable": node_memory - reserved - hp,
                       "reserved": 0, "free": node_memory - reserved - hp}}}
    return state


def mem(policy="Static", state=None, exists=True, valid=True):
    return {"exists": exists, "valid": valid, "policy": policy,
            "machine_state": machine_state() if state is None else state, "error": None if valid else "bad json"}


def test_plan_assumed_by_these_fixtures():
    assert PLAN["reserved_cpus"] == "0,4,8,12"
    assert PLAN["reserved_memory"] == {"0": "1274Mi", "1": "1274Mi"}


def test_matching_checkpoints_are_kept():
    assert reset_reasons(PLAN, TOPO, cpu(), mem()) == []


def test_no_checkpoints_nothing_to_reset():
    assert reset_reasons(PLAN, TOPO, cpu(exists=False, valid=False), mem(exists=False, valid=False)) == []


@pytest.mark.parametrize(
    "cpu_state, reason",
    [
        (cpu(policy="none"), 'configured policy "static" differs from state checkpoint policy "none"'),
        (cpu(default="1-3,5-7,9-11,13-15", assigned="0,4,8,12"),
         'not all reserved cpus: "0,4,8,12" are present in defaultCpuSet: "1-3,5-7,9-11,13-15"'),
        (cpu(default="0-14"), 'current set of available CPUs "0-15" doesn\'t match with CPUs in state "0-14"'),
        (cpu(valid=False), "could not restore state from checkpoint: bad json"),
    ],
)
def test_cpu_manager_refusals(cpu_state, reason):
    assert reset_reasons(PLAN, TOPO, cpu_state, mem()) == [reason]


def test_an_assignment_that_overlaps_the_shared_pool_is_refused():
    """validateState's consistency check: no assigned CPU may also be in defaultCpuSet."""
    state = cpu(default="0-2,4,8-9,12", assigned="2-3", entries={"pod-1": {"vllm": "2-3"}})
    assert reset_reasons(PLAN, TOPO, state, mem()) == [
        'pod: pod-1, container: vllm cpuset: "2-3" overlaps with default cpuset "0-2,4,8-9,12"',
        'current set of available CPUs "0-15" doesn\'t match with CPUs in state "0-4,8-9,12"']


def test_assignments_with_an_empty_shared_pool_are_refused():
    assert reset_reasons(PLAN, TOPO, cpu(default="", assigned="0-15"), mem()) == ["default cpuset cannot be empty"]


STRICT = make_plan(TOPO, hugepages_per_node=4, hugepages_nodes="all",
                   extra_kubelet_args=["cpu-manager-policy-options=strict-cpu-reservation=true"])


def test_strict_cpu_reservation_keeps_the_reserved_cpus_out_of_the_shared_pool():
    """With strict-cpu-reservation (through extra_kubelet_args) the kubelet's rule is the other way round."""
    assert reset_reasons(STRICT, TOPO, cpu(default="1-3,5-7,9-11,13-15"), mem()) == []
    assert reset_reasons(STRICT, TOPO, cpu(default="0-15"), mem()) == [
        'some of strictly reserved cpus: "0,4,8,12" are present in defaultCpuSet: "0-15"',
        'current set of available CPUs "1-3,5-7,9-11,13-15" doesn\'t match with CPUs in state "0-15"']
    assert reset_reasons(PLAN, TOPO, cpu(default="1-3,5-7,9-11,13-15"), mem())[0].startswith("not all reserved cpus")


def test_pods_on_exclusive_cpus_are_not_a_reason():
    assert reset_reasons(PLAN, TOPO, cpu(default="0-1,4,8-9,12", assigned="2-3,5-7,10-11,13-15"), mem()) == []


@pytest.mark.parametrize(
    "mem_state",
    [
        mem(policy="None"),
        mem(state=machine_state(reserved_mib=1024)),  # kube/system-reserved changed
        mem(state=machine_state(hugepages_1g=2)),  # hugepages changed
        mem(state=machine_state(node_memory=63 * GIB)),  # memory changed (DIMM lost)
    ],
)
def test_memory_manager_refusals(mem_state):
    (reason,) = reset_reasons(PLAN, TOPO, cpu(), mem_state)
    assert reason.startswith("[memorymanager]")


def test_expected_machine_state_lists_every_hugepage_size():
    state = expected_machine_state(TOPO, {"0": 100})
    assert state["0"]["hugepages-2Mi"] == (0, 0, 0)
    assert state["0"]["memory"] == (64 * GIB, 100, 64 * GIB - 100 - 4 * GIB)
    assert state["1"]["memory"][1] == 0


def test_kubelet_state_info_reads_checkpoints(tmp_path, capsys):
    (tmp_path / "cpu_manager_state").write_text(json.dumps({
        "policyName": "static", "defaultCpuSet": "0-1,4,8-9,12",
        "entries": {"pod-uid": {"vllm": "2-3,5-7,10-11,13-15"}}, "checksum": 1}))
    (tmp_path / "memory_manager_state").write_text("{not json")
    with patch_module_args({"kubelet_dir": str(tmp_path), "_ansible_check_mode": True}):
        with pytest.raises(SystemExit):
            kubelet_state_info.main()
    result = json.loads(capsys.readouterr().out)
    assert result["changed"] is False
    assert result["cpu_manager"] == {"exists": True, "valid": True, "policy": "static", "default_cpu_set": "0-1,4,8-9,12",
                                     "assigned_cpus": "2-3,5-7,10-11,13-15", "error": None,
                                     "entries": {"pod-uid": {"vllm": "2-3,5-7,10-11,13-15"}}, "pod_cpus": "", "pod_entries": {},
                                     "format": "v2", "path": str(tmp_path / "cpu_manager_state")}
    assert result["memory_manager"]["exists"] and not result["memory_manager"]["valid"]
    # the roles back up, delete and restore the files by these paths: the names live only in the module
    assert result["memory_manager"]["path"] == str(tmp_path / "memory_manager_state")
    assert "cannot read" in result["memory_manager"]["error"]
    with_plan = reset_reasons(PLAN, TOPO, result["cpu_manager"], result["memory_manager"])
    assert len(with_plan) == 1 and with_plan[0].startswith("could not restore state from checkpoint")


def test_missing_checkpoints(tmp_path, capsys):
    with patch_module_args({"kubelet_dir": str(tmp_path)}):
        with pytest.raises(SystemExit):
            kubelet_state_info.main()
    result = json.loads(capsys.readouterr().out)
    assert result["cpu_manager"]["exists"] is False and result["memory_manager"]["exists"] is False
    assert result["cpu_manager"]["valid"] is False and result["memory_manager"]["policy"] is None


def test_empty_checkpoints_are_set_up_afresh_by_the_kubelet():
    assert reset_reasons(PLAN, TOPO, cpu(default=""), mem(state={})) == []


# A GH200 on a 64K-page kernel: the kernel offers 2M, 512M and 16G pages, and the
# kubelet names every size as a BinarySI quantity (hugepages-16Gi, never -16384Mi).
GH200_TOPO = {
    "cpus_online": "0-71",
    "cpus_offline": "",
    "cores": [[c] for c in range(72)],
    "numa_nodes": [{"id": 0, "cpus": "0-71", "memory_kb": 480 * 1024 * 1024,
                    "hugepages": {"2048": {"total": 0}, "524288": {"total": 0}, "16777216": {"total": 2}}}],
    "pci_devices": [],
    "hugepage_sizes_kb": [2048, 524288, 16777216],
    "kernel_release": "6.8.0-1013-nvidia-64k",
}


def test_a_64k_kernel_checkpoint_is_kept():
    plan = make_plan(GH200_TOPO, hugepages_size="2M")
    hp = 2 * 16 * GIB
    reserved = 2548 * 1024 * 1024
    checkpoint = {"0": {"numberOfAssignments": 0, "cells": [0], "memoryMap": {
        "hugepages-2Mi": {"total": 0, "systemReserved": 0, "allocatable": 0, "reserved": 0, "free": 0},
        "hugepages-512Mi": {"total": 0, "systemReserved": 0, "allocatable": 0, "reserved": 0, "free": 0},
        "hugepages-16Gi": {"total": hp, "systemReserved": 0, "allocatable": hp, "reserved": 0, "free": hp},
        "memory": {"total": 480 * GIB, "systemReserved": reserved, "allocatable": 480 * GIB - reserved - hp,
                   "reserved": 0, "free": 480 * GIB - reserved - hp}}}}
    assert sorted(expected_machine_state(GH200_TOPO, {"0": reserved})["0"]) == [
        "hugepages-16Gi", "hugepages-2Mi", "hugepages-512Mi", "memory"]
    assert reset_reasons(plan, GH200_TOPO, cpu(default="0-71"), mem(state=checkpoint)) == []


def test_a_runtime_hugepages_change_under_unchanged_kubelet_args_is_judged_at_the_next_start():
    """The kubelet started with 2 x 1G per node and wrote that machine state; the plan now allocates 4
    at runtime, with the same kubelet args. Judged on the topology read before the pages change, the
    checkpoint looks fine; at the kubelet's next start the Memory Manager refuses it."""
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_state import topology_at_next_start
    now = dict(TOPO, numa_nodes=[dict(n, hugepages={"2048": {"total": 0}, "1048576": {"total": 2}}) for n in TOPO["numa_nodes"]])
    plan = make_plan(now, hugepages_per_node=4, hugepages_nodes="all", hugepages_method="runtime")
    assert plan["kubelet_args"] == make_plan(now, hugepages_per_node=2, hugepages_nodes="all",
                                             hugepages_method="runtime")["kubelet_args"]
    running = mem(state=machine_state(hugepages_1g=2))
    assert reset_reasons(plan, now, cpu(), running) == []
    at_start = topology_at_next_start(now, plan)
    assert [n["hugepages"]["1048576"]["total"] for n in at_start["numa_nodes"]] == [4, 4]
    assert [n["hugepages"]["1048576"]["total"] for n in now["numa_nodes"]] == [2, 2]  # not changed in place
    assert reset_reasons(plan, at_start, cpu(), running) == [
        "[memorymanager] the expected machine state is different from the real one"]
    # once the kubelet has started on the new pages, its new checkpoint is accepted
    assert reset_reasons(plan, at_start, cpu(), mem(state=machine_state(hugepages_1g=4))) == []


def test_cmdline_hugepages_wait_for_the_reboot():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_state import topology_at_next_start
    assert PLAN["hugepages"]["method"] == "cmdline"
    assert topology_at_next_start(TOPO, PLAN) is TOPO


@pytest.mark.parametrize("option", ["strict-cpu-reservation=1", "strict-cpu-reservation=t", "full-pcpus-only=true,strict-cpu-reservation=TRUE"])
def test_strict_cpu_reservation_is_read_as_the_kubelet_parses_it(option):
    strict = make_plan(TOPO, hugepages_per_node=4, hugepages_nodes="all", extra_kubelet_args=["cpu-manager-policy-options=" + option])
    assert reset_reasons(strict, TOPO, cpu(default="1-3,5-7,9-11,13-15"), mem()) == []
