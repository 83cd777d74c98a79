# -*- coding: utf-8 -*-
"""The verify report, and the filters the kubelet_reset and verify roles decide with."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.filter.node_state import (
    kubelet_reset_reasons,
    verify_plan,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.verify import cmdline_args, verify

TOPO = {
    "cpus_online": "0-7", "cpus_offline": "", "cores": [[c, c + 4] for c in range(4)],
    "numa_nodes": [{"id": 0, "cpus": "0-7", "memory_kb": 32 * 1024 * 1024,
                    "hugepages": {"2048": {"total": 0}, "1048576": {"total": 2}}}],
    "pci_devices": [{"address": "0000:18:00.0", "kind": "gpu", "numa_node": None}],
    "hugepage_sizes_kb": [2048, 1048576], "kernel_release": "6.8.0",
}
PLAN = make_plan(TOPO, hugepages_per_node=2, hugepages_nodes="all")
STATE = {"cpu_manager": {"exists": True, "valid": True, "policy": "static", "default_cpu_set": "0-7", "assigned_cpus": ""},
         "memory_manager": {"exists": True, "valid": True, "policy": "Static", "machine_state": {}}}


def booted(topo, **extra):
    t = dict(topo, cmdline="BOOT_IMAGE=/vmlinuz ro quiet " + " ".join(PLAN["kernel_args"]), nohz_full=PLAN["isolated_cpus"])
    t.update(extra)
    return t


def test_a_node_that_runs_its_plan():
    report = verify(PLAN, booted(TOPO), STATE["cpu_manager"], STATE["memory_manager"], ["max-pods=110"] + PLAN["kubelet_args"])
    assert report["ok"] and report["errors"] == []
    assert report["warnings"] == ["GPU 0000:18:00.0 has no known NUMA node: the device plugin gives the kubelet no topology hint for it"]


@pytest.mark.parametrize(
    "topo, state, args, error",
    [
        (dict(TOPO, cmdline="ro quiet", nohz_full=""), STATE, PLAN["kubelet_args"], "is not on the running cmdline (reboot pending?)"),
        (booted(TOPO, cmdline="irqaffinity=0-1 " + " ".join(PLAN["kernel_args"][:3])), STATE, PLAN["kubelet_args"],
         "kernel arg irqaffinity=0,4 runs as irqaffinity=0-1"),
        (booted(TOPO, nohz_full=""), STATE, PLAN["kubelet_args"], "/sys/devices/system/cpu/nohz_full is"),
        (booted(dict(TOPO, numa_nodes=[dict(TOPO["numa_nodes"][0], hugepages={"1048576": {"total": 1}})])), STATE,
         PLAN["kubelet_args"], "NUMA node 0 has 1 hugepages-1Gi pages, the plan wants 2"),
        (booted(TOPO), dict(STATE, cpu_manager=dict(STATE["cpu_manager"], policy="none")), PLAN["kubelet_args"],
         "cpu_manager_state policy is none, the plan wants static"),
        (booted(TOPO), dict(STATE, memory_manager={"exists": False}), PLAN["kubelet_args"], "memory_manager_state does not exist"),
        (booted(TOPO), STATE, PLAN["kubelet_args"][1:], "kubelet flag cpu-manager-policy=static is missing"),
        (booted(TOPO), STATE, PLAN["kubelet_args"] + ["reserved-cpus=0"], "kubelet flag reserved-cpus=0,4 is reserved-cpus=0"),
    ],
)
def test_mismatches(topo, state, args, error):
    report = verify(PLAN, topo, state["cpu_manager"], state["memory_manager"], args)
    assert not report["ok"]
    assert any(error in e for e in report["errors"]), report["errors"]


def test_cmdline_args_handle_quotes_and_flags():
    assert cmdline_args('ro root=UUID=1 console="ttyS0,115200 x" quiet') == {
        "ro": None, "root": "UUID=1", "console": "ttyS0,115200 x", "quiet": None}


def node_state(topology, files):
    """node_state_info's result, as the verify role reads it: RKE2's files with only the keys that leave the node."""
    return {"topology": topology, "kubelet_state": STATE,
            "rke2": {"files": [{"path": path, "exists": values is not None, "values": values, "error": error}
                               for path, values, error in files]}}


def test_verify_reads_rke2s_effective_flags_from_the_node_state_config_first_then_its_drop_ins():
    config = ("/etc/rancher/rke2/config.yaml", {"kubelet-arg": ["max-pods=110"] + PLAN["kubelet_args"]}, None)
    report = verify_plan(PLAN, node_state(booted(TOPO), [config]))
    assert report["ok"], report
    # a drop-in's plain kubelet-arg replaces config.yaml's list (RKE2's order): the plan's flags are gone
    dropin = ("/etc/rancher/rke2/config.yaml.d/60-site.yaml", {"kubelet-arg": ["max-pods=250"]}, None)
    report = verify_plan(PLAN, node_state(booted(TOPO), [config, dropin]))
    assert not report["ok"] and all(f["check"] == "config" for f in report["findings"] if f["level"] == "error")
    with pytest.raises(AnsibleFilterError, match="cannot read RKE2's config as RKE2 does: .*not valid YAML"):
        verify_plan(PLAN, node_state(booted(TOPO), [("/etc/rancher/rke2/config.yaml", None, "config.yaml is not valid YAML")]))


@pytest.mark.parametrize("path, values", [
    ("/etc/rancher/rke2/config.yaml.d/95-site.yaml", {"kubelet-arg+": ["cpu-manager-policy+=none"]}),
    ("/etc/rancher/rke2/config.yaml.d/50-rancher.yaml", {"kubelet-arg+": ["cpu_manager_policy=none"]}),
])
def test_a_flag_spelled_as_the_kubelet_normalises_it_is_read_as_that_flag(path, values):
    """cpu-manager-policy+=none (RKE2 appends it: GetArgs trims the '+') and cpu_manager_policy=none (the kubelet reads
    '_' as '-', and RKE2 sorts it after cpu-manager-policy) both reach the kubelet as cpu-manager-policy=none: the node
    does not run its plan (it was read as another flag, and the node called compliant)."""
    config = ("/etc/rancher/rke2/config.yaml", {"kubelet-arg": PLAN["kubelet_args"]}, None)
    report = verify_plan(PLAN, node_state(booted(TOPO), [config, (path, values, None)]))
    assert not report["ok"]
    assert any(f["check"] == "config" and "kubelet flag cpu-manager-policy=static is cpu-manager-policy=none" in f["message"]
               for f in report["findings"]), report["findings"]


def test_each_finding_names_its_check_so_no_one_reads_the_wording():
    """compliance picks the hugepage findings by check (it matched the sentence " pages, the plan wants ")."""
    short = dict(booted(TOPO), numa_nodes=[dict(TOPO["numa_nodes"][0], hugepages={"1048576": {"total": 1}})])
    report = verify(PLAN, short, STATE["cpu_manager"], STATE["memory_manager"], PLAN["kubelet_args"])
    assert [(f["check"], f["level"]) for f in report["findings"]] == [("hugepages", "error"), ("gpus", "warning")]
    assert report["errors"] == [f["message"] for f in report["findings"] if f["level"] == "error"]


def test_filters_wrap_the_rules():
    stale = dict(STATE["memory_manager"], machine_state={"0": {"memoryMap": {"memory": {"total": 1}}}})
    assert kubelet_reset_reasons(PLAN, TOPO, dict(STATE, cpu_manager={"exists": False}, memory_manager=stale)) == [
        "[memorymanager] the expected machine state is different from the real one"]
    assert verify_plan(PLAN, node_state(booted(TOPO), [("/etc/rancher/rke2/config.yaml", {"kubelet-arg": PLAN["kubelet_args"]}, None)]))["ok"]


def test_checkpoints_with_the_right_policies_that_the_kubelet_would_refuse_fail_verify():
    """Policy names match, but the memory manager's machine state was written for other hugepages:
    the node runs now and crash-loops at its next kubelet restart."""
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_state import expected_machine_state
    gib = 1024 ** 3
    tables = expected_machine_state(TOPO, {"0": 0})
    stale = {"0": {"memoryMap": dict((name, {"total": t, "systemReserved": r, "allocatable": a})
                                     for name, (t, r, a) in tables["0"].items())}}
    stale["0"]["memoryMap"]["hugepages-1Gi"] = {"total": 1 * gib, "systemReserved": 0, "allocatable": 1 * gib}
    memory = dict(STATE["memory_manager"], machine_state=stale)
    report = verify(PLAN, booted(TOPO), STATE["cpu_manager"], memory, PLAN["kubelet_args"])
    assert "the kubelet would refuse its checkpoints at its next start: [memorymanager] the expected machine state" \
           " is different from the real one" in report["errors"]


def test_repeated_map_flags_are_merged_as_the_kubelet_merges_them():
    kube_reserved = [a for a in PLAN["kubelet_args"] if a.startswith("kube-reserved=")][0]
    args = ["kube-reserved=cpu=1,pid=100"] + PLAN["kubelet_args"]
    report = verify(PLAN, booted(TOPO), STATE["cpu_manager"], STATE["memory_manager"], args)
    assert any(e.startswith("kubelet flag %s is kube-reserved=" % kube_reserved) and "pid=100" in e for e in report["errors"])
