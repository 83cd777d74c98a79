# -*- coding: utf-8 -*-
"""The rke2 stand-in against the documented behaviour of RKE2 and the kubelet.

Most tests load tests/standins/rke2/rke2.py as a module (it is a script, not a
package) and call its pieces on temporary folders; the last ones run it as
`rke2 agent` in the background, as systemd does, to check healthz, the crash
loop and SIGTERM.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from fractions import Fraction

import pytest

from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import wait_for

STANDINS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "standins")
RKE2_PATH = os.path.join(STANDINS, "rke2", "rke2.py")
GIB = 1024 ** 3
MIB = 1024 ** 2


def _load():
    spec = importlib.util.spec_from_file_location("rke2_standin", RKE2_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rke2 = _load()

# 2 sockets x 4 cores x 2 threads, linear numbering: node 0 = 0-3,8-11, node 1 = 4-7,12-15; siblings c and c+8.
SMALL = dict(sockets=2, cores_per_socket=4, threads=2, memory_per_node_kb=8 * 1024 * 1024)
GOOD = ["--cpu-manager-policy=static", "--reserved-cpus=0,8", "--memory-manager-policy=Static", "--kube-reserved=memory=1Gi",
        "--eviction-hard=memory.available<500Mi", "--reserved-memory=0:memory=1024Mi;1:memory=500Mi"]


@pytest.fixture
def machine(tmp_path):
    """A small 2-node machine; returns (sysfs root, kubelet dir)."""
    root = gen_sysfs.write_tree(gen_sysfs.make_spec(**SMALL), str(tmp_path / "root"))
    return root, str(tmp_path / "kubelet")


def start(machine, args, eviction_defaults="rke2", **options):
    root, kdir = machine
    cfg = rke2.parse_kubelet_flags(args, eviction_defaults)
    return rke2.start_kubelet(cfg, rke2.read_topology(root), kdir, options)


def refusal(machine, args, **kwargs):
    with pytest.raises(rke2.KubeletRefusal) as info:
        start(machine, args, **kwargs)
    assert info.value.lines, "the kubelet logs what made it exit"
    assert any(info.value.err.replace('"', '\\"') in line for line in info.value.lines), "the error is in a klog line, quoted like klog"
    return info.value.err


def state(machine, name):
    with open(os.path.join(machine[1], name)) as handle:
        return json.load(handle)


# ---------------------------------------------------------------- building blocks

@pytest.mark.parametrize("text, cpus, back", [
    ("", set(), ""), ("0", {0}, "0"), ("0-3,8-11", {0, 1, 2, 3, 8, 9, 10, 11}, "0-3,8-11"), ("3,1,2", {1, 2, 3}, "1-3"),
    ("0-1", {0, 1}, "0-1"), ("5-5", {5}, "5"),
])
def test_cpulist_round_trip(text, cpus, back):
    assert rke2.parse_cpulist(text) == cpus
    assert rke2.format_cpulist(cpus) == back


@pytest.mark.parametrize("text, message", [
    ("a", 'strconv.Atoi: parsing "a": invalid syntax'), ("3-1", 'invalid range "3-1" (3 > 1)'), ("0,", 'strconv.Atoi: parsing "": invalid syntax'),
])
def test_cpulist_errors_are_the_kubelets(text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        rke2.parse_cpulist(text)


@pytest.mark.parametrize("text, value, shown", [
    ("1Gi", GIB, "1Gi"), ("1524Mi", 1524 * MIB, "1524Mi"), ("1.5Gi", 1536 * MIB, "1536Mi"), ("2048Mi", 2 * GIB, "2Gi"),
    ("500M", 500 * 10 ** 6, "500M"), ("1000", 1000, "1k"), ("1500", 1500, "1500"), ("0", 0, "0"), ("100m", Fraction(1, 10), "100m"),
    ("1e3", 1000, "1e3"), ("1000Ki", 1024000, "1000Ki"), ("512", 512, "512"),
])
def test_quantities_parse_and_print_like_kubernetes(text, value, shown):
    quantity = rke2.parse_quantity(text)
    assert quantity.value == value
    assert str(quantity) == shown


def test_quantity_sum_keeps_the_first_nonzero_format():
    total = rke2.Quantity(0).add(rke2.parse_quantity("1Gi")).add(rke2.parse_quantity("500Mi"))
    assert str(total) == "1524Mi"
    assert str(rke2.Quantity(0).add(rke2.parse_quantity("1G")).add(rke2.parse_quantity("1Gi"))) == "2073741824"
    with pytest.raises(ValueError):
        rke2.parse_quantity("1GB")


def test_hugepage_resource_names():
    assert rke2.hugepage_resource(2048) == "hugepages-2Mi"
    assert rke2.hugepage_resource(1048576) == "hugepages-1Gi"
    assert rke2.hugepage_resource(524288) == "hugepages-512Mi"
    assert rke2.hugepage_resource(64) == "hugepages-64Ki"
    # arm64 64K-page kernels: 512M and 16G pages; BinarySI takes the largest exact suffix
    assert rke2.hugepage_resource(16777216) == "hugepages-16Gi"
    assert rke2.hugepage_resource(32768) == "hugepages-32Mi"
    assert rke2.hugepage_resource(1536) == "hugepages-1536Ki"
    assert rke2.hugepage_resource(1024 ** 3) == "hugepages-1Ti"


def test_topology_is_read_from_the_sysfs_root(machine):
    topo = rke2.read_topology(machine[0])
    assert rke2.format_cpulist(topo["online"]) == "0-15"
    assert sorted(topo["nodes"]) == [0, 1]
    assert rke2.format_cpulist(topo["nodes"][1]["cpus"]) == "4-7,12-15"
    assert topo["nodes"][0]["memory"] == 8 * GIB
    assert topo["nodes"][0]["hugepages"] == {2048: 0, 1048576: 0}
    assert topo["siblings"][3] == {3, 11}
    assert topo["memory_capacity"] == 16 * GIB


def test_topology_without_node_directories_is_one_node(tmp_path):
    root = gen_sysfs.write_tree(gen_sysfs.make_spec(**SMALL), str(tmp_path / "root"))
    import shutil
    shutil.rmtree(os.path.join(root, "sys", "devices", "system", "node"))
    topo = rke2.read_topology(root)
    assert list(topo["nodes"]) == [0]
    assert topo["nodes"][0]["memory"] == 16 * GIB


# ---------------------------------------------------------------- RKE2's configuration

def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)
    return path


def test_config_yaml_d_merge_last_wins_and_plus_appends(tmp_path):
    config = write(str(tmp_path / "config.yaml"), "token: first\nnode-label: [a=1]\nkubelet-arg:\n- cpu-manager-policy=none\n")
    write(str(tmp_path / "config.yaml.d" / "20-second.yaml"), "kubelet-arg+:\n- cpu-manager-policy=static\ntoken: second\n")
    write(str(tmp_path / "config.yaml.d" / "10-first.yml"), "node-label: [b=2]\nkubelet-arg+: reserved-cpus=0\n")
    write(str(tmp_path / "config.yaml.d" / "30-ignored.txt"), "token: not-read\n")
    write(str(tmp_path / "config.yaml.d" / "40-plus-first.yaml"), "node-taint+: [x=y:NoSchedule]\n")
    os.makedirs(str(tmp_path / "config.yaml.d" / "50-dir.yaml"))
    files = rke2.config_files(config, config + ".d")
    assert [os.path.basename(f) for f in files] == ["config.yaml", "10-first.yml", "20-second.yaml", "40-plus-first.yaml"]
    values = rke2.load_config(files)
    assert values["token"] == "second"
    assert values["node-label"] == ["b=2"]
    assert values["kubelet-arg"] == ["cpu-manager-policy=none", "reserved-cpus=0", "cpu-manager-policy=static"]
    assert values["node-taint"] == ["x=y:NoSchedule"]


def test_config_dir_without_config_yaml(tmp_path):
    write(str(tmp_path / "config.yaml.d" / "10.yaml"), "kubelet-arg: [a=b]\n")
    config = str(tmp_path / "config.yaml")
    assert rke2.load_config(rke2.config_files(config, config + ".d")) == {"kubelet-arg": ["a=b"]}


@pytest.mark.parametrize("text, message", [
    ("kubelet-arg: [a\ntoken: x\n", "yaml:"),
    ("- a\n- b\n", "cannot unmarshal !!seq into yaml.MapSlice"),
    ("just a string\n", "cannot unmarshal !!str"),
])
def test_invalid_config_is_refused(tmp_path, text, message):
    config = write(str(tmp_path / "config.yaml"), text)
    with pytest.raises(rke2.ConfigError, match=message):
        rke2.load_config([config])


def test_empty_config_is_fine(tmp_path):
    assert rke2.load_config([write(str(tmp_path / "config.yaml"), "")]) == {}


def test_kubelet_args_like_rke2_get_args():
    defaults = {"kubeconfig": "/k", "hostname-override": "n1"}
    args = rke2.kubelet_args(["reserved-memory=0:memory=1Gi", "--cpu-manager-policy=static", "reserved-memory=1:memory=1Gi",
                              "kubeconfig=/mine", "hostname-override+=x", "fail-swap-on"], defaults)
    assert args == ["--cpu-manager-policy=static", "--fail-swap-on=true", "--hostname-override=n1", "--hostname-override=x",
                    "--kubeconfig=/mine", "--reserved-memory=0:memory=1Gi", "--reserved-memory=1:memory=1Gi"]
    assert rke2.kubelet_args(["a-=first"], {"a": "default"}) == ["--a=first", "--a=default"]


# ---------------------------------------------------------------- the kubelet's flags

def test_flags_last_wins_maps_merge_reserved_memory_accumulates():
    cfg = rke2.parse_kubelet_flags(["--cpu-manager-policy=none", "--cpu-manager-policy=static", "--kube-reserved=cpu=1",
                                    "--kube-reserved=memory=1Gi", "--eviction-hard=memory.available<1Gi",
                                    "--reserved-memory=0:memory=1Gi", "--reserved-memory=1:memory=2Gi,hugepages-1Gi=1Gi"])
    assert cfg["cpu-manager-policy"] == "static"
    assert cfg["kube-reserved"] == {"cpu": "1", "memory": "1Gi"}
    assert cfg["eviction-hard"] == {"memory.available": "1Gi"}, "the flag replaces RKE2's evictionHard, other signals are gone"
    assert [(r["numaNode"], sorted(r["limits"])) for r in cfg["reserved-memory"]] == [(0, ["memory"]), (1, ["hugepages-1Gi", "memory"])]


def test_the_kubelet_reads_underscores_as_dashes_and_rke2_sorts_by_the_written_name():
    """RKE2 groups kubelet-arg by the name as written and sorts the groups (GetArgs), the kubelet then reads '_' as '-'
    (WordSepNormalizeFunc): cpu_manager_policy=none comes after cpu-manager-policy=static and wins."""
    args = rke2.kubelet_args(["cpu_manager_policy=none", "cpu-manager-policy=static"], {})
    assert args == ["--cpu-manager-policy=static", "--cpu_manager_policy=none"]
    assert rke2.parse_kubelet_flags(args)["cpu-manager-policy"] == "none"
    assert rke2.parse_kubelet_flags(rke2.kubelet_args(["cpu-manager-policy=static", "cpu-manager-policy+=none"], {}))[
        "cpu-manager-policy"] == "none"


def test_rke2_eviction_defaults_have_no_memory_available():
    assert "memory.available" not in rke2.parse_kubelet_flags([])["eviction-hard"]
    assert rke2.parse_kubelet_flags([], "kubelet")["eviction-hard"]["memory.available"] == "100Mi"


@pytest.mark.parametrize("flag, message", [
    ("--kube-reserved=memory", 'invalid argument "memory" for "--kube-reserved" flag: malformed pair, expect string=string'),
    ("--eviction-hard=memory.available=1Gi", "malformed pair, expect string<string"),
    ("--reserved-memory=0memory=1Gi", "the reserved memory has incorrect format"),
    ("--reserved-memory=0:cpu=1", 'memory type conversion error, unknown type: "cpu"'),
    ("--reserved-memory=x:memory=1Gi", "failed to convert the NUMA node ID, exptected integer, got x"),
    ("--healthz-port=abc", 'strconv.ParseInt: parsing "abc": invalid syntax'),
])
def test_malformed_flags_stop_the_kubelet(machine, flag, message):
    err = refusal(machine, [flag])
    assert err.startswith("failed to parse kubelet flag: ")
    assert message in err


# ---------------------------------------------------------------- a good start

def test_good_start_writes_the_checkpoints(machine):
    result = start(machine, GOOD)
    assert result["reserved_cpus"] == "0,8"
    assert result["node_allocatable_reservation"] == {"cpu": "2", "memory": "1524Mi"}
    cpu = state(machine, "cpu_manager_state")
    assert cpu == {"policyName": "static", "defaultCpuSet": "0-15", "checksum": rke2.checksum(cpu)}
    memory = state(machine, "memory_manager_state")
    assert memory["policyName"] == "Static"
    assert set(memory["machineState"]) == {"0", "1"}
    node0 = memory["machineState"]["0"]
    assert node0["cells"] == [0] and node0["numberOfAssignments"] == 0
    assert node0["memoryMap"]["memory"] == {"total": 8 * GIB, "systemReserved": GIB, "allocatable": 7 * GIB, "reserved": 0, "free": 7 * GIB}
    assert node0["memoryMap"]["hugepages-1Gi"] == {"total": 0, "systemReserved": 0, "allocatable": 0, "reserved": 0, "free": 0}
    assert memory["machineState"]["1"]["memoryMap"]["memory"]["systemReserved"] == 500 * MIB
    assert oct(os.stat(os.path.join(machine[1], "cpu_manager_state")).st_mode & 0o777) == "0o600"


def test_restart_with_the_same_config_keeps_the_checkpoints(machine):
    start(machine, GOOD)
    paths = [os.path.join(machine[1], n) for n in ("cpu_manager_state", "memory_manager_state")]
    before = [open(p).read() for p in paths]
    start(machine, GOOD)
    assert [open(p).read() for p in paths] == before


def test_none_policies_write_the_kubelets_none_checkpoints(machine):
    start(machine, [])
    cpu = state(machine, "cpu_manager_state")
    assert (cpu["policyName"], cpu["defaultCpuSet"]) == ("none", "")
    assert "entries" not in cpu
    memory = state(machine, "memory_manager_state")
    assert (memory["policyName"], memory["machineState"]) == ("None", {})


def test_hugepages_are_part_of_the_machine_state(machine):
    root = machine[0]
    with open(os.path.join(root, "sys/devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages"), "w") as handle:
        handle.write("2\n")
    start(machine, GOOD)
    table = state(machine, "memory_manager_state")["machineState"]["1"]["memoryMap"]
    assert table["hugepages-1Gi"]["total"] == 2 * GIB
    assert table["memory"]["allocatable"] == 8 * GIB - 500 * MIB - 2 * GIB


# ---------------------------------------------------------------- rule 9: checkpoints the kubelet refuses

def test_cpu_policy_change_is_refused_until_the_checkpoint_goes(machine):
    start(machine, [])
    err = refusal(machine, ["--cpu-manager-policy=static", "--reserved-cpus=0,8"])
    assert 'configured policy "static" differs from state checkpoint policy "none"' in err
    assert err == ('start cpu manager error: could not restore state from checkpoint: configured policy "static" differs from state '
                   'checkpoint policy "none", please drain this node and delete the CPU manager checkpoint file "%s" before restarting Kubelet'
                   % os.path.join(machine[1], "cpu_manager_state"))
    os.remove(os.path.join(machine[1], "cpu_manager_state"))
    start(machine, ["--cpu-manager-policy=static", "--reserved-cpus=0,8"])
    assert state(machine, "cpu_manager_state")["policyName"] == "static", "a new checkpoint, of the configured policy"


def test_static_back_to_none_is_refused_too(machine):
    start(machine, GOOD)
    assert 'configured policy "none" differs from state checkpoint policy "static"' in refusal(machine, [])


def test_memory_policy_change_is_refused(machine):
    start(machine, [])
    os.remove(os.path.join(machine[1], "cpu_manager_state"))
    err = refusal(machine, GOOD)
    assert '[memorymanager] configured policy "Static" differs from state checkpoint policy "None"' in err
    assert err.startswith("start memory manager error: could not restore state from checkpoint: ")
    assert state(machine, "cpu_manager_state")["policyName"] == "static", "the CPU Manager started before the Memory Manager refused"


def test_reserved_cpus_not_in_default_cpu_set(machine):
    cpu = rke2.cpu_checkpoint("static", "0-3,8-15", {"pod-1": {"app": "4-7"}})
    rke2.write_checkpoint(os.path.join(machine[1], "cpu_manager_state"), cpu)
    err = refusal(machine, ["--cpu-manager-policy=static", "--reserved-cpus=4,12"])
    assert err == 'start cpu manager error: not all reserved cpus: "4,12" are present in defaultCpuSet: "0-3,8-15"'


def test_online_cpu_set_change(machine, tmp_path):
    start(machine, ["--cpu-manager-policy=static", "--reserved-cpus=0,8"])
    spec = gen_sysfs.make_spec(offline=(7, 15), **SMALL)
    gen_sysfs.write_tree(spec, machine[0])
    err = refusal(machine, ["--cpu-manager-policy=static", "--reserved-cpus=0,8"])
    assert err == 'start cpu manager error: current set of available CPUs "0-6,8-14" doesn\'t match with CPUs in state "0-15"'


def test_assigned_cpus_count_as_known(machine):
    # defaultCpuSet 0-3,8-15 and pod-1's 4-7: with the assignment every online CPU is known (16 of 16
    # without 4-7 would be "doesn't match with CPUs in state"); the kubelet starts and keeps the checkpoint.
    cpu = rke2.cpu_checkpoint("static", "0-3,8-15", {"pod-1": {"app": "4-7"}})
    rke2.write_checkpoint(os.path.join(machine[1], "cpu_manager_state"), cpu)
    result = start(machine, ["--cpu-manager-policy=static", "--reserved-cpus=0,8"])
    assert result["reserved_cpus"] == "0,8"
    kept = state(machine, "cpu_manager_state")
    assert (kept["defaultCpuSet"], kept["entries"]) == ("0-3,8-15", {"pod-1": {"app": "4-7"}}), "the assignment survives the restart"


@pytest.mark.parametrize("change", ["reservation", "hugepages", "memory"])
def test_memory_machine_state_change(machine, change):
    start(machine, GOOD)
    args = list(GOOD)
    if change == "reservation":
        args[-1] = "--reserved-memory=0:memory=762Mi;1:memory=762Mi"
    elif change == "hugepages":
        with open(os.path.join(machine[0], "sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages"), "w") as handle:
            handle.write("16\n")
    else:
        bigger = dict(SMALL)
        bigger["memory_per_node_kb"] = 16 * 1024 * 1024
        spec = gen_sysfs.make_spec(**bigger)
        gen_sysfs.write_tree(spec, machine[0])
    err = refusal(machine, args)
    assert err == "start memory manager error: [memorymanager] the expected machine state is different from the real one"


def test_memory_assignments_are_accounted(machine):
    start(machine, GOOD)
    path = os.path.join(machine[1], "memory_manager_state")
    data = rke2.read_checkpoint(path)
    data["entries"] = {"pod-1": {"app": [{"numaAffinity": [1], "type": "memory", "size": GIB}]}}
    rke2.write_checkpoint(path, data)
    # an assignment the machine state does not account for: the state the checkpoint holds is not the real one
    assert refusal(machine, GOOD) == "start memory manager error: [memorymanager] the expected machine state is different from the real one"
    table = data["machineState"]["1"]
    table["numberOfAssignments"] = 1
    table["memoryMap"]["memory"]["reserved"] = GIB
    table["memoryMap"]["memory"]["free"] -= GIB
    rke2.write_checkpoint(path, data)
    assert start(machine, GOOD)["memory_manager_policy"] == "Static"
    kept = state(machine, "memory_manager_state")
    assert kept["entries"] == data["entries"], "the assignment survives the restart"
    assert kept["machineState"]["1"]["memoryMap"]["memory"]["free"] == 8 * GIB - 500 * MIB - GIB


def test_corrupted_checkpoint(machine):
    start(machine, GOOD)
    path = os.path.join(machine[1], "cpu_manager_state")
    data = state(machine, "cpu_manager_state")
    data["defaultCpuSet"] = "0-14"
    with open(path, "w") as handle:
        json.dump(data, handle)
    assert "checkpoint is corrupted" in refusal(machine, GOOD)
    assert rke2.main(["standin-fix-checksum", path]) == 0
    assert "doesn't match with CPUs in state" in refusal(machine, GOOD)
    with open(path, "w") as handle:
        handle.write("")
    assert "unexpected end of JSON input" in refusal(machine, GOOD)


# ---------------------------------------------------------------- rule 5: reserved-memory and node allocatable

def test_reserved_memory_sum_must_equal_node_allocatable(machine):
    args = [a for a in GOOD if not a.startswith("--reserved-memory")] + ["--reserved-memory=0:memory=1Gi"]
    err = refusal(machine, args)
    assert err == ('failed to run Kubelet: the total amount "1Gi" of type "memory" is not equal to the value "1524Mi" '
                   'determined by Node Allocatable feature')


def test_hugepages_in_reserved_memory_never_add_up(machine):
    err = refusal(machine, GOOD[:-1] + ["--reserved-memory=0:memory=1524Mi,hugepages-1Gi=1Gi"])
    assert 'the total amount "1Gi" of type "hugepages-1Gi" is not equal to the value "0" determined by Node Allocatable feature' in err


def test_reserved_memory_on_a_missing_numa_node(machine):
    err = refusal(machine, GOOD[:-1] + ["--reserved-memory=0:memory=1024Mi;5:memory=500Mi"])
    assert "the reserved memory configuration references a NUMA node 5 that does not exist on this machine" in err


def test_without_eviction_flag_rke2_withholds_no_memory(machine):
    args = [a for a in GOOD if not a.startswith(("--eviction-hard", "--reserved-memory"))] + ["--reserved-memory=0:memory=1Gi"]
    assert start(machine, args)["node_allocatable_reservation"]["memory"] == "1Gi"


def test_plain_kubelet_defaults_withhold_100mi(machine):
    args = [a for a in GOOD if not a.startswith(("--eviction-hard", "--reserved-memory"))] + ["--reserved-memory=0:memory=1Gi"]
    err = refusal(machine, args, eviction_defaults="kubelet")
    assert 'the total amount "1Gi" of type "memory" is not equal to the value "1124Mi"' in err


def test_percentage_threshold_counts_against_memtotal(machine):
    args = [a for a in GOOD if not a.startswith(("--eviction-hard", "--reserved-memory"))]
    err = refusal(machine, args + ["--eviction-hard=memory.available<10%", "--reserved-memory=0:memory=1Gi"])
    # 16 GiB * float32(10)/100, truncated, plus 1Gi: not a whole KiB, so printed in bytes.
    assert 'is not equal to the value "2791728768"' in err
    result = start(machine, args + ["--eviction-hard=memory.available<10%", "--reserved-memory=0:memory=2791728768"])
    assert result["node_allocatable_reservation"]["memory"] == "2791728768"


@pytest.mark.parametrize("threshold", ["0%", "100%"])
def test_zero_and_hundred_percent_thresholds_are_ignored(machine, threshold):
    # parseThresholdStatement skips "0%" and "100%": nothing is withheld but kube-reserved's 1Gi (a 100%
    # threshold counted would withhold all 16Gi, and reserved-memory would have to say 17Gi).
    args = [a for a in GOOD if not a.startswith(("--eviction-hard", "--reserved-memory"))]
    result = start(machine, args + ["--eviction-hard=memory.available<" + threshold, "--reserved-memory=0:memory=1Gi"])
    assert result["node_allocatable_reservation"]["memory"] == "1Gi"
    assert state(machine, "memory_manager_state")["machineState"]["0"]["memoryMap"]["memory"]["systemReserved"] == GIB


@pytest.mark.parametrize("value, message", [
    ("memory.available<0", "eviction threshold memory.available must be positive: 0"),
    ("memory.available<-1Mi", "eviction threshold memory.available must be positive: -1Mi"),
    ("memory.available<101%", "eviction percentage threshold memory.available must be <= 100%: 101%"),
    ("memory.free<1Gi", "unsupported eviction signal memory.free"),
])
def test_bad_eviction_thresholds(machine, value, message):
    assert refusal(machine, GOOD[:4] + ["--eviction-hard=" + value]) == "failed to run Kubelet: " + message


def test_static_memory_manager_needs_a_reservation(machine):
    err = refusal(machine, ["--cpu-manager-policy=static", "--reserved-cpus=0,8", "--memory-manager-policy=Static"])
    assert err == "failed to run Kubelet: [memorymanager] you should specify the system reserved memory"


def test_zero_reserved_memory_entry_is_invalid(machine):
    err = refusal(machine, GOOD[:-1] + ["--reserved-memory=0:memory=1524Mi;1:memory=0"])
    assert err == ('failed to validate kubelet configuration, error: invalid configuration: reserved memory may not be zero '
                   'for NUMA node 1 and resource "memory"')


def test_duplicate_reserved_memory_entry_is_invalid(machine):
    err = refusal(machine, GOOD[:-1] + ["--reserved-memory=0:memory=1000Mi", "--reserved-memory=0:memory=524Mi"])
    assert 'the reserved memory has a duplicate value for NUMA node 0 and resource "memory"' in err


def test_reservation_larger_than_capacity(machine):
    err = refusal(machine, ["--kube-reserved=memory=20Gi"])
    assert err == ('invalid Node Allocatable configuration. Resource "memory" has a reservation of 20Gi but capacity of 16Gi. '
                   'Expected capacity >= reservation.')


# ---------------------------------------------------------------- rules 4, 7, 8: CPUs and NUMA nodes

def test_reserved_cpus_must_be_online(machine):
    assert refusal(machine, ["--cpu-manager-policy=static", "--reserved-cpus=0,99"]) == \
        "failed to run Kubelet: reserved-cpus: 0,99 is not a subset of online-cpus: 0-15"


def test_unparsable_reserved_cpus(machine):
    err = refusal(machine, ["--reserved-cpus=0-x"])
    assert err.startswith("failed to validate kubelet configuration, error: invalid configuration: unable to parse reservedSystemCPUs "
                          '(--reserved-cpus) 0-x, error: strconv.Atoi: parsing "x"')


@pytest.mark.parametrize("args", [["--cpu-manager-policy=static"], ["--cpu-manager-policy=static", "--kube-reserved=cpu=0"]])
def test_static_policy_without_cpu_reservation(machine, args):
    # The kubelet leaves zero reservations out of node allocatable, so a zero sum reads as "no reservation".
    assert refusal(machine, args) == "failed to run Kubelet: [cpumanager] unable to determine reserved CPU resources for static policy"


def test_static_policy_with_a_cpu_quantity_takes_whole_low_cores(machine):
    result = start(machine, ["--cpu-manager-policy=static", "--kube-reserved=cpu=1500m"])
    assert result["reserved_cpus"] == "0,8"


def test_kube_reserved_cpu_gives_way_to_reserved_cpus(machine):
    result = start(machine, ["--cpu-manager-policy=static", "--kube-reserved=cpu=4", "--reserved-cpus=0,8"])
    assert result["node_allocatable_reservation"]["cpu"] == "2"


@pytest.mark.parametrize("args, message", [
    (["--cpu-manager-policy=Static"], 'failed to run Kubelet: unknown policy: "Static"'),
    (["--memory-manager-policy=static"], 'failed to run Kubelet: unknown policy: "static"'),
    (["--cpu-manager-policy-options=full-pcpus-only=true"], "failed to run Kubelet: new none policy error: None policy: cannot accept options"),
    (["--cpu-manager-policy=static", "--reserved-cpus=0,8", "--cpu-manager-policy-options=full-pcpu-only=true"],
     'failed to run Kubelet: new static policy error: unknown CPU Manager Policy option: "full-pcpu-only"'),
    (["--topology-manager-policy=single-numa"],
     'failed to validate kubelet configuration, error: invalid configuration: topologyManagerPolicy (--topology-manager-policy) '
     '"single-numa" must be one of: ["none" "best-effort" "restricted" "single-numa-node"]'),
    (["--topology-manager-scope=node"],
     'failed to validate kubelet configuration, error: invalid configuration: topologyManagerScope (--topology-manager-scope) '
     '"node" must be one of: "container", or "pod"'),
    (["--topology-manager-policy=restricted", "--topology-manager-policy-options=max-allowable-numa-nodes=4"],
     'failed to run Kubelet: the minimum value of "max-allowable-numa-nodes" should not be less than 8'),
    (["--topology-manager-policy=restricted", "--topology-manager-policy-options=foo=1"],
     'failed to run Kubelet: unknown Topology Manager Policy option: "foo"'),
])
def test_unknown_names(machine, args, message):
    assert refusal(machine, args) == message


def test_full_pcpus_only_with_a_split_core(machine):
    args = ["--cpu-manager-policy=static", "--reserved-cpus=0,1", "--cpu-manager-policy-options=full-pcpus-only=true"]
    result = start(machine, args)  # the kubelet starts: the siblings 8,9 just never go to a pod exclusively
    assert result["warnings"] == ["reserved cpus 0-1 split physical cores: their siblings 8-9 cannot be allocated exclusively (full-pcpus-only)"]
    os.remove(os.path.join(machine[1], "cpu_manager_state"))
    assert "new static policy error: SMT Alignment Error: reserved cpus 0-1 split physical cores" in refusal(machine, args, strict_smt=True)
    assert start(machine, args[:1] + ["--reserved-cpus=0,8"] + args[2:], strict_smt=True)["warnings"] == []


def test_strict_cpu_reservation_keeps_reserved_out_of_the_default_set(machine):
    args = ["--cpu-manager-policy=static", "--reserved-cpus=0,8", "--cpu-manager-policy-options=strict-cpu-reservation=true"]
    start(machine, args)
    assert state(machine, "cpu_manager_state")["defaultCpuSet"] == "1-7,9-15"
    start(machine, args)
    rke2.write_checkpoint(os.path.join(machine[1], "cpu_manager_state"), rke2.cpu_checkpoint("static", "0-15"))
    assert refusal(machine, args) == 'start cpu manager error: some of strictly reserved cpus: "0,8" are present in defaultCpuSet: "0-15"'


@pytest.fixture
def nine_nodes(tmp_path):
    """One socket, 4 cores, and 8 CPU-less memory nodes (GH200-like): 9 NUMA nodes."""
    spec = gen_sysfs.make_spec(sockets=1, cores_per_socket=4, threads=1, cpuless_nodes=8, cpuless_memory_kb=1024 * 1024,
                               memory_per_node_kb=8 * 1024 * 1024)
    return gen_sysfs.write_tree(spec, str(tmp_path / "root")), str(tmp_path / "kubelet")


def test_more_than_eight_numa_nodes(nine_nodes):
    args = ["--topology-manager-policy=single-numa-node", "--cpu-manager-policy=static", "--reserved-cpus=0"]
    assert refusal(nine_nodes, args) == "failed to run Kubelet: unsupported on machines with more than 8 NUMA Nodes"
    result = start(nine_nodes, args + ["--topology-manager-policy-options=max-allowable-numa-nodes=9"])
    assert result["numa_nodes"] == 9
    assert refusal(nine_nodes, args + ["--topology-manager-policy-options=max-allowable-numa-nodes=8"]).endswith("more than 8 NUMA Nodes")


def test_more_than_eight_numa_nodes_is_fine_without_topology_manager(nine_nodes):
    # the limit is the Topology Manager's (NewManager), checked only when its policy is not none
    result = start(nine_nodes, ["--cpu-manager-policy=static", "--reserved-cpus=0"])
    assert (result["topology_manager_policy"], result["numa_nodes"]) == ("none", 9)
    assert state(nine_nodes, "cpu_manager_state")["defaultCpuSet"] == "0-3"


# ---------------------------------------------------------------- the Node object

def test_rke2_never_clobbers_unschedulable(tmp_path, monkeypatch):
    monkeypatch.setenv("RKE2_STANDIN_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("RKE2_STANDIN_NODE_NAME", "n1")
    agent = rke2.Agent(str(tmp_path / "config.yaml"))
    agent.node_name = "n1"
    agent.config = {"node-label": ["a=b"]}
    agent.set_node(ready=False, register=True)
    with rke2.locked_node(str(tmp_path), "n1") as box:
        box["node"]["unschedulable"] = True
    agent.set_node(ready=True)
    with open(tmp_path / "nodes" / "n1.json") as handle:
        node = json.load(handle)
    assert node["unschedulable"] is True and node["ready"] is True
    assert node["labels"]["a"] == "b" and node["labels"]["kubernetes.io/hostname"] == "n1"
    agent.set_node(ready=False)
    with open(tmp_path / "nodes" / "n1.json") as handle:
        node = json.load(handle)
    assert node["ready"] is False and node["notReadySince"] and node["unschedulable"] is True


# ---------------------------------------------------------------- as `rke2 agent`

def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def healthz(port, host="127.0.0.1"):
    try:
        with urllib.request.urlopen("http://%s:%d/healthz" % (host, port), timeout=1) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""
    except OSError:
        return None, ""


class Running:
    """`rke2 agent` in the background with its paths under a temporary folder."""

    def __init__(self, tmp_path, root, config_text, restart="0.2"):
        self.tmp = tmp_path
        self.port = free_port()
        self.config = write(str(tmp_path / "etc" / "config.yaml"), config_text)
        self.env = dict(os.environ, RKE2_STANDIN_CONFIG=self.config, RKE2_STANDIN_SYSFS_ROOT=root,
                        RKE2_STANDIN_STATE_DIR=str(tmp_path / "state"), RKE2_STANDIN_KUBELET_DIR=str(tmp_path / "kubelet"),
                        RKE2_STANDIN_DATA_DIR=str(tmp_path / "data"), RKE2_STANDIN_HEALTHZ_PORT=str(self.port),
                        RKE2_STANDIN_KUBELET_RESTART_SECONDS=restart, RKE2_STANDIN_NODE_NAME="n1")
        self.log = str(tmp_path / "data" / "agent" / "logs" / "kubelet.log")
        self.journal = open(str(tmp_path / "journal"), "w+")
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([sys.executable, RKE2_PATH, "agent"], env=self.env, stdout=self.journal, stderr=subprocess.STDOUT)
        return self

    def kubelet_log(self):
        try:
            with open(self.log) as handle:
                return handle.read()
        except OSError:
            return ""

    def node(self):
        try:
            with open(str(self.tmp / "state" / "nodes" / "n1.json")) as handle:
                return json.load(handle)
        except (OSError, ValueError):
            return {}

    def status(self):
        with open(str(self.tmp / "state" / "rke2-status.json")) as handle:
            return json.load(handle)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=5)
        self.journal.seek(0)
        return code, self.journal.read()


def test_agent_serves_healthz_while_healthy_and_stops_on_sigterm(tmp_path, machine):
    config = "token: secret\nkubelet-arg:\n" + "".join("- %s\n" % a[2:] for a in GOOD)
    agent = Running(tmp_path, machine[0], config).start()
    try:
        assert wait_for(lambda: healthz(agent.port) == (200, "ok"))
        assert healthz(agent.port) == (200, "ok")
        # healthz is served before the Node turns Ready and the status is written (as the real kubelet's
        # status loop posts Ready after its server is up): waited for, not read at once (a loaded CI machine)
        assert wait_for(lambda: agent.node().get("ready") is True)
        assert wait_for(lambda: agent.status().get("healthy") is True)
        assert "Started kubelet" in agent.kubelet_log()
        assert json.load(open(str(tmp_path / "kubelet" / "cpu_manager_state")))["policyName"] == "static"
    finally:
        code, journal = agent.stop()
    assert code == 0
    assert healthz(agent.port)[0] is None, "nothing listens once the agent is gone"
    assert agent.node()["ready"] is False
    assert "Running kubelet --config-dir=" in journal and "--reserved-cpus=0,8" in journal
    assert "secret" not in journal


def test_an_ipv6_node_ip_binds_healthz_to_the_ipv6_loopback(tmp_path, machine):
    """k3s binds the kubelet's healthz to ::1 when the (first) node-ip is IPv6 (agent_linux.go)."""
    config = "token: secret\nnode-ip: fd00:10::5,10.0.0.5\nkubelet-arg:\n" + "".join("- %s\n" % a[2:] for a in GOOD)
    agent = Running(tmp_path, machine[0], config).start()
    try:
        assert wait_for(lambda: healthz(agent.port, "[::1]") == (200, "ok"))
        assert healthz(agent.port) == (None, ""), "nothing on 127.0.0.1"
    finally:
        agent.stop()
    cfg = rke2.parse_kubelet_flags([], node_ip="10.0.0.5,fd00:10::5")
    assert cfg["healthz-bind-address"] == "127.0.0.1"
    assert rke2.parse_kubelet_flags(["--healthz-bind-address=0.0.0.0"], node_ip="fd00::5")["healthz-bind-address"] == "0.0.0.0"


def test_crash_loop_keeps_the_agent_up_until_the_checkpoint_goes(tmp_path, machine):
    start(machine, [])  # a node that ran with the none policies: their checkpoints are in place
    config = "kubelet-arg:\n" + "".join("- %s\n" % a[2:] for a in GOOD)
    agent = Running(tmp_path, machine[0], config).start()
    try:
        wanted = 'configured policy \\"static\\" differs from state checkpoint policy \\"none\\"'
        assert wait_for(lambda: agent.kubelet_log().count(wanted) >= 3, timeout=10)
        assert agent.proc.poll() is None, "rke2 stays up while its kubelet crash-loops"
        assert healthz(agent.port)[0] is None
        assert agent.node().get("ready") is False
        assert 'configured policy "static" differs' in agent.status()["error"]
        # config.yaml is read once, at rke2's start: fixing it now changes nothing...
        write(agent.config, "kubelet-arg: []\n")
        time.sleep(0.5)
        assert healthz(agent.port)[0] is None
        # ...but each kubelet restart reads the checkpoints again.
        os.remove(str(tmp_path / "kubelet" / "cpu_manager_state"))
        os.remove(str(tmp_path / "kubelet" / "memory_manager_state"))
        assert wait_for(lambda: healthz(agent.port) == (200, "ok"))
        assert wait_for(lambda: agent.node().get("ready") is True), "Ready follows healthz"
        assert agent.status()["attempts"] >= 3
    finally:
        code, journal = agent.stop()
    assert code == 0
    assert journal.count("Kubelet exited: exit status 1") >= 3


def test_invalid_config_yaml_stops_rke2(tmp_path, machine):
    agent = Running(tmp_path, machine[0], "kubelet-arg: [\n").start()
    code = agent.proc.wait(timeout=10)
    agent.journal.seek(0)
    journal = agent.journal.read()
    assert code == 1
    assert "level=fatal" in journal and "failed to parse config file" in journal
    assert not os.path.exists(str(tmp_path / "kubelet" / "cpu_manager_state"))


def test_the_script_runs_through_its_shell_header():
    out = subprocess.run([os.path.join(STANDINS, "rke2", "rke2"), "--version"], capture_output=True, text=True, timeout=10, check=True)
    assert out.stdout.startswith("rke2 version v1.33")


def test_a_kubelet_that_fails_after_its_checkpoints_answers_healthz_first(tmp_path, machine):
    """The fault the health window is for: with the planned static policy the kubelet writes its
    checkpoints, answers healthz, and then the container manager fails; RKE2 restarts it."""
    config = "kubelet-arg:\n" + "".join("- %s\n" % a[2:] for a in GOOD)
    agent = Running(tmp_path, machine[0], config)
    agent.env.update(RKE2_STANDIN_HEALTHZ_BLIP_SECONDS="0.5", RKE2_STANDIN_FAIL_AFTER_START="root container [kubepods] doesn't exist",
                     RKE2_STANDIN_FAIL_AFTER_START_FLAG="--cpu-manager-policy=static")
    agent.start()
    try:
        assert wait_for(lambda: healthz(agent.port) == (200, "ok"), timeout=10), "healthz answers before the failure"
        assert wait_for(lambda: agent.kubelet_log().count("Failed to start ContainerManager") >= 2, timeout=10)
        assert agent.proc.poll() is None and agent.node().get("ready") is False
        with open(str(tmp_path / "kubelet" / "cpu_manager_state")) as f:
            assert json.load(f)["policyName"] == "static", "the checkpoints were written before the failure"
    finally:
        agent.stop()


# ---------------------------------------------------------------- Rancher's system-agent

def test_rancher_s_plan_file_is_the_planner_s_json_and_restarts_only_when_it_changes(tmp_path):
    config = tmp_path / "etc/rancher/rke2/config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("token: t\n")
    held = []

    def look():
        held.append(os.path.exists(str(tmp_path / "var/lib/rancher/agent/interlock/applyinator-active")))

    assert rke2.rancher_apply(str(config), str(tmp_path), "m-1", hold=look) is True
    assert held == [True] and not os.path.exists(str(tmp_path / "var/lib/rancher/agent/interlock/applyinator-active"))
    text = (tmp_path / "etc/rancher/rke2/config.yaml.d/50-rancher.yaml").read_text()
    assert json.loads(text) == {"node-label": ["rke.cattle.io/machine=m-1"]} and text.startswith('{\n  "node-label"')
    assert rke2.rancher_apply(str(config), str(tmp_path), "m-1") is False          # same plan: no restart
    # the planner's restartStamp hashes more than the plan file: the provisioning generation (bumped in the UI), the
    # installer image (an RKE2 upgrade), the config generation - each restarts rke2 with 50-rancher.yaml unchanged
    for change in ({"provision_generation": 1}, {"provision_generation": 1, "image": "rancher/system-agent-installer-rke2:v1.36.0-rke2r1"},
                   {"provision_generation": 1, "image": "rancher/system-agent-installer-rke2:v1.36.0-rke2r1", "config_generation": 2}):
        assert rke2.rancher_apply(str(config), str(tmp_path), "m-1", **change) is True, change
        assert rke2.rancher_apply(str(config), str(tmp_path), "m-1", **change) is False, change
    assert rke2.rancher_apply(str(config), str(tmp_path), "m-1", kubelet_args=["max-pods=200"], node_taints=["gpu=1:NoSchedule"]) is True
    data = json.loads((tmp_path / "etc/rancher/rke2/config.yaml.d/50-rancher.yaml").read_text())
    assert list(data) == ["kubelet-arg", "node-label", "node-taint"] and data["kubelet-arg"] == ["max-pods=200"]
    # RKE2 reads it after config.yaml: a plain key that replaces
    assert rke2.load_config(rke2.config_files(str(config), str(config) + ".d"))["kubelet-arg"] == ["max-pods=200"]
