# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe pods, the judgement on what they printed, and the QoS audit.

The machine is the dgx-h100 sample (2 NUMA nodes of 56 SMT2 cores, 4 H100 on
each, the NVIDIA driver's information files), planned with the defaults; the
probe's own script runs under sh with its cgroup folder mapped to files this
test writes, as the rke2 stand-in runs it.
"""

from __future__ import annotations

import copy
import itertools
import subprocess

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import format_cpulist, parse_cpulist
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.prove import (
    PROBE_HOLD,
    PROBE_PATHS,
    PROBE_SCRIPT,
    audit_error,
    audit_pods,
    gpu_holders,
    kube_items,
    parse_probe_log,
    probe_expectations,
    probe_pods,
    probe_tolerations,
    prove_report,
)
from ansible_collections.maitred.rke2_numa.plugins.filter.prove import rke2_numa_probe_report
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.report import prove_fleet, render_prove_markdown
from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs

NODE = "gpu-worker-1"
IMAGE = "docker.io/library/busybox:1.36"


def probes_for(plan, topology, node=NODE, image=IMAGE, namespace="default", **kw):
    return probe_pods(plan, topology, node, image, namespace, "nvidia.com/gpu", "256Mi", **kw)


@pytest.fixture(scope="module")
def machine(tmp_path_factory):
    out = tmp_path_factory.mktemp("samples")
    gen_sysfs.main(["--out", str(out), "--machine", "dgx-h100"])
    topology = read_topology(str(out / "dgx-h100"))
    return topology, make_plan(topology, hugepages_per_node=4)


def gpus_on(topology, node):
    return [d for d in topology["pci_devices"] if d["kind"] == "gpu" and d["numa_node"] == node]


def isolated_core(topology, plan, node):
    """The first whole core of ``node`` that is not reserved, as a cpulist."""
    reserved = set(parse_cpulist(plan["reserved_cpus"]))
    node_cpus = set(parse_cpulist(topology["numa_nodes"][node]["cpus"]))
    for core in topology["cores"]:
        cpus = set(parse_cpulist(core) if isinstance(core, str) else core)
        if cpus <= node_cpus and not cpus & reserved:
            return format_cpulist(cpus)
    raise AssertionError("no free core")


def pod(probe, phase="Succeeded", uid="probe-uid", **status):
    return {"metadata": {"name": probe["name"], "uid": uid}, "status": dict({"phase": phase}, **status)}


def log(cpus, mems, visible="", bus=None, **more):
    text = "rke2-numa-probe cpus=%s\nrke2-numa-probe mems=%s\nrke2-numa-probe visible=%s\n" % (cpus, mems, visible)
    text += "".join("rke2-numa-probe %s=%s\n" % item for item in sorted(more.items()))
    return text + ("rke2-numa-probe bus=%s\n" % bus if bus is not None else "")


def judge(machine, output, status=None, entries=None, which=0, plan=None):
    topology, plan = machine[0], plan or machine[1]
    probes = probes_for(plan, topology)
    probe = probes[which]
    report = prove_report([probe], {probe["name"]: status or pod(probe)}, {probe["name"]: output}, plan, topology,
                          entries or {}, waited=120)
    return report, report["results"][0]


# ---------------------------------------------------------------- the probes

def test_one_guaranteed_probe_per_gpu_numa_node(machine):
    topology, plan = machine
    probes = probes_for(plan, topology, image="mirror.local/busybox:1.36", namespace="ops")
    assert [p["shape"]["name"] for p in probes] == ["numa0", "numa1"]
    for p in probes:
        spec = p["manifest"]["spec"]
        (container,) = spec["containers"]
        assert container["resources"]["requests"] == container["resources"]["limits"] == {
            "cpu": "2", "memory": "256Mi", "hugepages-1Gi": "1Gi", "nvidia.com/gpu": "1"}
        assert spec["nodeName"] == NODE and spec["restartPolicy"] == "Never"
        assert spec["tolerations"] == []   # nodeName: the cordon's NoSchedule does not keep them off; the plan has no taint
        assert container["image"] == "mirror.local/busybox:1.36" and p["manifest"]["metadata"]["namespace"] == "ops"
        assert len(p["name"]) <= 63


def test_the_probes_tolerate_the_plans_taints_exactly_never_every_taint():
    """Before, each probe tolerated every taint ({operator: Exists}), the control plane's among them."""
    assert probe_tolerations(["dedicated=gpu:NoExecute", "nvidia.com/gpu:NoSchedule", "dedicated=gpu:NoExecute"]) == [
        {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoExecute"},
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert probe_tolerations([]) == [] and probe_tolerations(None) == []


def test_where_no_pod_holds_a_gpu_each_probe_takes_its_numa_node_s_gpus_and_holds_them(machine):
    """The Topology Manager takes the lowest NUMA node with room: only probes that leave node 0 no free GPU send the
    next one to node 1. They print, then hold what they got while the kubelet admits the others."""
    topology, plan = machine
    one, whole = probes_for(plan, topology), probes_for(plan, topology, whole_nodes=True)
    assert [p["requests"]["nvidia.com/gpu"] for p in one] == ["1", "1"]
    assert [p["requests"]["nvidia.com/gpu"] for p in whole] == ["4", "4"]   # the dgx-h100's 4 H100 per node
    assert [p["shape"]["numa_node"] for p in whole] == [0, 1]
    env = [p["manifest"]["spec"]["containers"][0]["env"] for p in (one[0], whole[0])]
    assert env == [[{"name": "RKE2_NUMA_PROBE_HOLD", "value": "0"}], [{"name": "RKE2_NUMA_PROBE_HOLD", "value": str(PROBE_HOLD)}]]
    assert PROBE_SCRIPT.rstrip().endswith('sleep "${RKE2_NUMA_PROBE_HOLD:-0}"')


def test_the_gpu_holders_are_the_live_pods_that_ask_for_a_gpu_probes_aside(machine):
    topology, plan = machine
    probe = probes_for(plan, topology)[0]["manifest"]
    pods = [gpu_pod("vllm", NODE, "Guaranteed"), gpu_pod("done", NODE, "Guaranteed", phase="Succeeded"),
            gpu_pod("web", NODE, "Burstable", gpus=None), dict(probe, status={"phase": "Running"})]
    assert gpu_holders(pods) == ["ml/vllm"]
    assert gpu_holders(pods[1:]) == []


def test_a_long_node_name_still_makes_a_valid_pod_name(machine):
    topology, plan = machine
    names = [p["name"] for p in probes_for(plan, topology, "GPU-Worker." + "x" * 200 + ".example.com")]
    assert all(len(n) <= 63 and n == n.lower() and n[0].isalpha() for n in names)
    assert len(set(names)) == 2


def test_the_plan_s_pod_shapes_are_probed_when_it_has_some(machine):
    topology, _plan = machine
    shape = {"name": "tp4", "cpu": 32, "memory": "64Gi", "gpus": 4, "hugepages": "2Gi"}
    plan = make_plan(topology, hugepages_per_node=8, pod_shapes=[shape])
    (probe,) = probes_for(plan, topology)
    assert probe["requests"] == {"cpu": "32", "memory": "64Gi", "hugepages-1Gi": "2Gi", "nvidia.com/gpu": "4"}
    assert [p["shape"]["name"] for p in probes_for(plan, topology, use_pod_shapes=False)] == ["numa0", "numa1"]


def run_probe(tmp_path, cgroup=None, status=None, env=None, mounts=(), devices=(), procfs=()):
    """The probe's own script under sh, each path it reads mapped to a folder of the test (as the rke2
    stand-in maps them): ``cgroup`` {file: text} under /sys/fs/cgroup, ``status`` the text of
    /proc/self/status (None: none), the volume-mounts files, the /dev/nvidiaN minors, the procfs GPUs."""
    root = tmp_path / "container"
    folders = dict((path, root / path.strip("/").replace("/", "_")) for path in PROBE_PATHS)
    for folder in folders.values():
        folder.mkdir(parents=True)
    for name, text in (cgroup or {}).items():
        (folders["/sys/fs/cgroup"] / name).parent.mkdir(parents=True, exist_ok=True)
        (folders["/sys/fs/cgroup"] / name).write_text(text)
    status_file = root / "status"
    if status is not None:
        status_file.write_text(status)
    for ident in mounts:
        (folders["/var/run/nvidia-container-devices"] / ident).write_text("")
    for minor in devices:
        (folders["/dev/nvidia"] / ("nvidia%d" % minor)).write_text("")
    for address in procfs:
        (folders["/proc/driver/nvidia/gpus"] / address).mkdir()
    script = PROBE_SCRIPT
    for path in PROBE_PATHS:
        target = str(status_file) if path == "/proc/self/status" else \
            str(folders[path] / "nvidia") if path == "/dev/nvidia" else str(folders[path])
        script = script.replace(path, target)
    return subprocess.run(["sh", "-c", script], env=dict({"PATH": "/usr/bin:/bin"}, **(env or {})),
                          capture_output=True, text=True, check=True).stdout


STATUS = "Name:\tsh\nCpus_allowed:\tff\nCpus_allowed_list:\t2-3\nMems_allowed_list:\t0\n"


def test_the_probe_script_prints_what_its_cgroup_holds(tmp_path):
    """cgroup v2, then v1; the task's allowed lists beside them."""
    out = run_probe(tmp_path / "a", cgroup={"cpuset.cpus.effective": "2-3\n", "cpuset.mems.effective": "0\n"}, status=STATUS,
                    env={"NVIDIA_VISIBLE_DEVICES": "GPU-1"})
    assert parse_probe_log(out) == {"cpus": "2-3", "mems": "0", "allowed_cpus": "2-3", "allowed_mems": "0", "visible": "GPU-1",
                                    "mounts": "", "devices": "", "procfs": ""}
    out = run_probe(tmp_path / "b", cgroup={"cpuset/cpuset.effective_cpus": "4-5\n", "cpuset/cpuset.effective_mems": "1\n"})
    assert parse_probe_log(out) == {"cpus": "4-5", "mems": "1", "visible": "", "mounts": "", "devices": "", "procfs": ""}


def test_the_probe_script_reads_the_task_s_lists_when_the_cpuset_is_not_delegated(tmp_path):
    out = run_probe(tmp_path, cgroup={"cgroup.controllers": "memory pids\n"}, status=STATUS)
    found = parse_probe_log(out)
    assert (found["cpus"], found["mems"], found["allowed_cpus"], found["allowed_mems"]) == ("", "", "2-3", "0")


def test_the_probe_script_lists_the_gpus_each_device_plugin_strategy_hands_it(tmp_path):
    out = run_probe(tmp_path, status=STATUS, env={"NVIDIA_VISIBLE_DEVICES": "/var/run/nvidia-container-devices"},
                    mounts=("GPU-a", "GPU-b"), devices=(3, 5), procfs=("0000:18:00.0",))
    found = parse_probe_log(out)
    assert (found["visible"], found["mounts"], found["devices"], found["procfs"]) == (
        "/var/run/nvidia-container-devices", "GPU-a,GPU-b,", "3,5,", "0000:18:00.0,")


# ---------------------------------------------------------------- the judgement

def test_exclusive_cpus_memory_and_gpu_on_one_node_prove_it(machine):
    topology, plan = machine
    gpu = gpus_on(topology, 0)[0]
    report, result = judge(machine, log(isolated_core(topology, plan, 0), "0", gpu["uuid"]))
    assert report["ok"] and result["numa_node"] == 0 and result["gpus"] == [gpu["address"]], report
    assert report["reasons"] == []


def test_nvidia_smi_s_bus_id_maps_to_the_gpu(machine):
    topology, plan = machine
    gpu = gpus_on(topology, 1)[0]
    bus = "00000000:%s" % gpu["address"][5:].upper()
    report, result = judge(machine, log(isolated_core(topology, plan, 1), "1", "GPU-not-known-here", bus=bus + ","), which=1)
    assert report["ok"] and result["gpus"] == [gpu["address"]], report


def test_the_shared_pool_is_not_pinning(machine):
    """A pod the CPU Manager did not pin runs on the defaultCpuSet, reserved CPUs included, both nodes' memory."""
    topology, plan = machine
    report, result = judge(machine, log(topology["cpus_online"], "0-1", gpus_on(topology, 0)[0]["uuid"]))
    assert not report["ok"]
    text = result["summary"]
    assert "not exclusive CPUs" in text and "are reserved (reserved-cpus %s)" % plan["reserved_cpus"] in text
    assert "span NUMA nodes 0, 1" in text


def test_a_gpu_on_another_node_says_the_device_plugin_publishes_no_topology(machine):
    topology, plan = machine
    away = gpus_on(topology, 1)[0]
    report, result = judge(machine, log(isolated_core(topology, plan, 0), "0", away["uuid"]))
    assert not report["ok"] and result["numa_node"] == 0
    assert result["summary"].startswith("CPUs and memory are on NUMA node 0 but the GPU is not: the device plugin publishes no "
                                        "NUMA topology for nvidia.com/gpu")
    assert result["summary"].endswith("(%s on NUMA node 1)" % away["address"])


def test_memory_from_another_node(machine):
    topology, plan = machine
    report, result = judge(machine, log(isolated_core(topology, plan, 0), "0-1", gpus_on(topology, 0)[0]["uuid"]))
    assert not report["ok"] and "its memory comes from NUMA node(s) 0-1, its CPUs from node 0" in result["summary"]
    assert "device plugin" not in result["summary"]


def test_cpus_another_pod_holds(machine):
    topology, plan = machine
    core = isolated_core(topology, plan, 0)
    entries = {"probe-uid": {"probe": core}, "vllm-uid": {"vllm": core}}
    report, result = judge(machine, log(core, "0", gpus_on(topology, 0)[0]["uuid"]), entries=entries)
    assert not report["ok"] and result["summary"] == "CPUs %s are also assigned to pod vllm-uid container vllm" % core


def test_the_cpus_a_finished_probe_gave_back_to_the_next_probe_are_not_shared(machine):
    """Probe 0 ended, the kubelet gave its core to probe 1: both entries may be in the checkpoint."""
    topology, plan = machine
    probes = probes_for(plan, topology)
    core, gpu = isolated_core(topology, plan, 0), gpus_on(topology, 0)[0]["uuid"]
    pods = dict((p["name"], pod(p, uid="uid-%d" % i)) for i, p in enumerate(probes))
    report = prove_report(probes, pods, dict((p["name"], log(core, "0", gpu)) for p in probes), plan, topology,
                          {"uid-0": {"probe": core}, "uid-1": {"probe": core}})
    assert report["ok"], report["reasons"]


def test_a_gpu_the_node_does_not_know_is_inconclusive_not_a_failure(machine):
    topology, plan = machine
    report, result = judge(machine, log(isolated_core(topology, plan, 0), "0", "GPU-00000000-dead-beef-0000-000000000000"))
    assert report["ok"] and result["verdict"] == "inconclusive" and report["reasons"] == []
    assert "the probe's GPU could not be identified (NVIDIA_VISIBLE_DEVICES GPU-00000000-dead-beef-0000-000000000000)" in result["summary"]
    assert report["inconclusive"] == ["%s (numa0): %s" % (result["name"], result["summary"])]


def test_no_gpu_seen_is_inconclusive(machine):
    topology, plan = machine
    report, result = judge(machine, log(isolated_core(topology, plan, 0), "0", ""))
    assert report["ok"] and result["verdict"] == "inconclusive"
    assert "no NVIDIA_VISIBLE_DEVICES, no /dev/nvidiaN, no nvidia-smi" in result["summary"]


def test_more_gpus_than_requested_in_the_device_plugin_s_list_is_a_failure(machine):
    topology, plan = machine
    both = [d["uuid"] for d in gpus_on(topology, 0)[:2]]
    report, result = judge(machine, log(isolated_core(topology, plan, 0), "0", ",".join(both)))
    assert not report["ok"] and "the probe saw 2 GPU(s) for a request of 1 nvidia.com/gpu (NVIDIA_VISIBLE_DEVICES: " in result["summary"]


@pytest.mark.parametrize("how", ["index", "mig-index", "mig-legacy", "volume-mounts", "volume-mounts-index", "device-minor",
                                 "procfs-masked"])
def test_every_way_a_device_plugin_names_the_gpu_maps_to_its_pci_address(machine, how):
    """NVML indices are PCI bus order (the dgx-h100 sample: 4 GPUs on node 0, then 4 on node 1); MIG ids name their GPU."""
    topology, plan = machine
    gpu = gpus_on(topology, 1)[1]
    index = sorted(d["address"] for d in topology["pci_devices"] if d["kind"] == "gpu").index(gpu["address"])
    lines = {
        "index": {"visible": str(index)},
        "mig-index": {"visible": "%d:2" % index},
        "mig-legacy": {"visible": "MIG-%s/3/0" % gpu["uuid"]},
        "volume-mounts": {"visible": "/var/run/nvidia-container-devices", "mounts": gpu["uuid"] + ","},
        "volume-mounts-index": {"visible": "/var/run/nvidia-container-devices", "mounts": "%d,imex," % index},
        "device-minor": {"visible": "", "devices": "%d," % gpu["minor"]},
        "procfs-masked": {"visible": "void", "procfs": gpu["address"] + ","},
    }[how]
    report, result = judge(machine, log(isolated_core(topology, plan, 1), "1", **lines), which=1)
    assert report["ok"] and result["verdict"] == "proven" and result["gpus"] == [gpu["address"]], report


def test_a_new_style_mig_uuid_is_identified_by_other_evidence_or_not_at_all(machine):
    topology, plan = machine
    gpu = gpus_on(topology, 0)[0]
    core = isolated_core(topology, plan, 0)
    _report, result = judge(machine, log(core, "0", "MIG-30d00c09-8a98-59b8-8c1a-1d64b4ec3ad2", devices="%d," % gpu["minor"]))
    assert result["verdict"] == "proven" and result["gpus"] == [gpu["address"]] and result["gpu_source"] == "/dev/nvidia*"
    _report, result = judge(machine, log(core, "0", "MIG-30d00c09-8a98-59b8-8c1a-1d64b4ec3ad2"))
    assert result["verdict"] == "inconclusive" and "NVIDIA_VISIBLE_DEVICES MIG-30d00c09" in result["summary"]


def test_device_nodes_or_procfs_entries_of_every_gpu_are_not_evidence(machine):
    """A runtime that does not mask them (CDI, a privileged pod) shows every GPU of the machine."""
    topology, plan = machine
    everything = [d for d in topology["pci_devices"] if d["kind"] == "gpu"]
    _report, result = judge(machine, log(isolated_core(topology, plan, 0), "0", "", devices="".join("%d," % d["minor"] for d in everything),
                                         procfs="".join(d["address"] + "," for d in everything)))
    assert result["verdict"] == "inconclusive" and result["gpus"] == []


def test_the_task_s_lists_stand_in_for_a_cpuset_the_runtime_does_not_delegate(machine):
    topology, plan = machine
    core, gpu = isolated_core(topology, plan, 0), gpus_on(topology, 0)[0]["uuid"]
    _report, result = judge(machine, log("", "", gpu, allowed_cpus=core, allowed_mems="0"))
    assert result["verdict"] == "proven" and result["source"] == "/proc/self/status" and result["cpus"] == core
    _report, result = judge(machine, log("", "", gpu))
    assert result["verdict"] == "inconclusive" and result["ok"]
    assert "the probe could read no CPU list and no memory node list" in result["summary"] and "0 CPUs" not in result["summary"]


POLICIES = list(itertools.product(("none", "static"), ("None", "Static"), ("none", "best-effort", "restricted", "single-numa-node")))


@pytest.mark.parametrize("cpu,memory,alignment", POLICIES, ids=["-".join(p) for p in POLICIES])
def test_what_the_probe_expects_under_each_policy_combination(machine, cpu, memory, alignment):
    """What a node that runs the plan shows is proven; memory off the CPUs' node is judged as the policy says."""
    topology = machine[0]
    plan = make_plan(topology, hugepages_per_node=4, cpu_manager_policy=cpu, memory_manager_policy=memory,
                     topology_manager_policy=alignment)
    assert probe_expectations(plan) == {
        "cpu_manager_policy": cpu, "memory_manager_policy": memory, "topology_manager_policy": alignment,
        "exclusive_cpus": cpu == "static", "pinned_memory": memory == "Static",
        "alignment": {"none": None, "best-effort": "warn"}.get(alignment, "fail"), "dra": False}
    cpus = isolated_core(topology, plan, 0) if cpu == "static" else topology["cpus_online"]
    gpu = gpus_on(topology, 0)[0]["uuid"]
    good = judge(machine, log(cpus, "0" if memory == "Static" else "0-1", gpu), plan=plan)[1]
    assert good["verdict"] == "proven" and good["warnings"] == [], good
    assert good["numa_node"] == (0 if "Static" in (memory,) or cpu == "static" else None)
    off = judge(machine, log(cpus, "1" if memory == "Static" else "0-1", gpu), plan=plan)[1]
    if memory == "Static" and alignment != "none":
        assert ("failed" if alignment != "best-effort" else "proven") == off["verdict"]
        said = off["reasons"] if off["verdict"] == "failed" else off["warnings"]
        if cpu == "static":
            assert said == ["its memory comes from NUMA node(s) 1, its CPUs from node 0"], off
        elif alignment == "best-effort":
            assert said == ["GPU %s on NUMA node 0 is not on the NUMA node 1 of its memory" % gpus_on(topology, 0)[0]["address"]]
        else:
            assert said[0].startswith("memory is on NUMA node 1 but the GPU is not: the device plugin publishes "
                                      "no NUMA topology for nvidia.com/gpu, so the kubelet cannot align it under %s"
                                      % alignment), said
            assert said[0].endswith("(%s on NUMA node 0)" % gpus_on(topology, 0)[0]["address"]), said
    else:
        assert off["verdict"] == "proven" and off["warnings"] == [], off


def test_extra_kubelet_args_set_what_the_probe_expects(machine):
    topology = machine[0]
    plan = make_plan(topology, extra_kubelet_args=["memory-manager-policy=None", "reserved-memory="])
    assert probe_expectations(plan)["pinned_memory"] is False


def test_topology_affinity_error_names_what_does_not_fit(machine):
    topology, _plan = machine
    plan = make_plan(topology, pod_shapes=[{"name": "too-big", "cpu": 200, "memory": "1Gi", "gpus": 1}])
    (probe,) = probes_for(plan, topology)
    status = pod(probe, "Failed", reason="TopologyAffinityError",
                 message="Pod was rejected: Resources cannot be allocated with Topology locality")
    report = prove_report([probe], {probe["name"]: status}, {}, plan, topology, {})
    (reason,) = report["reasons"]
    assert "the kubelet refused the probe (cpu 200, memory 1Gi, nvidia.com/gpu 1): TopologyAffinityError" in reason
    assert "what does not fit on one NUMA node: cpu 200 > at most 110 on one node" in reason


def test_a_probe_left_pending_is_reported_with_its_waiting_reason(machine):
    topology, plan = machine
    probe = probes_for(plan, topology)[0]
    status = pod(probe, "Pending", containerStatuses=[{"name": "probe", "state": {"waiting": {
        "reason": "ImagePullBackOff", "message": 'Back-off pulling image "docker.io/library/busybox:1.36"'}}}])
    report, result = judge(machine, "", status=status)
    assert not report["ok"]
    assert result["summary"].startswith("the probe is still Pending after 120 s (ImagePullBackOff: Back-off pulling image")


def test_a_probe_that_exits_with_an_error(machine):
    report, result = judge(machine, "sh: not found\n", status={"metadata": {"name": "x"}, "status": {
        "phase": "Failed", "containerStatuses": [{"state": {"terminated": {"exitCode": 127, "reason": "Error"}}}]}})
    assert not report["ok"] and result["summary"].startswith("the probe failed (exit code 127; is docker.io/library/busybox:1.36")


def test_nothing_to_probe_is_not_proof(machine):
    topology, plan = machine
    report = prove_report([], {}, {}, plan, topology, {})
    assert not report["ok"] and "nothing to probe" in report["reasons"][0]


def two_probes(machine, lands_on):
    """The default probes of both GPU NUMA nodes, run together; ``lands_on``: where the kubelet put each (its
    exclusive core, memory and GPU on that node)."""
    topology, plan = machine
    probes = probes_for(plan, topology)
    pods, logs, used = {}, {}, {}
    for i, (probe, node) in enumerate(zip(probes, lands_on)):
        core = isolated_core(topology, plan, node)
        if used.get(node):   # the second probe on a node gets the next free core and GPU
            reserved = set(parse_cpulist(plan["reserved_cpus"])) | set(parse_cpulist(used[node]))
            node_cpus = set(parse_cpulist(topology["numa_nodes"][node]["cpus"]))
            core = next(format_cpulist(set(parse_cpulist(c) if isinstance(c, str) else c)) for c in topology["cores"]
                        if set(parse_cpulist(c) if isinstance(c, str) else c) <= node_cpus
                        and not set(parse_cpulist(c) if isinstance(c, str) else c) & reserved)
        used[node] = core
        gpu = gpus_on(topology, node)[i]
        pods[probe["name"]] = pod(probe, uid="uid-%d" % i)
        logs[probe["name"]] = log(core, str(node), gpu["uuid"])
    return probes, prove_report(probes, pods, logs, plan, topology, {}, waited=3)


def test_each_gpu_numa_node_is_proven_by_the_probe_that_landed_there(machine):
    probes, report = two_probes(machine, (0, 1))
    assert report["ok"] and report["inconclusive"] == []
    assert [(n["node"], n["verdict"], n["probes"]) for n in report["numa_nodes"]] == [
        (0, "proven", [probes[0]["name"]]), (1, "proven", [probes[1]["name"]])]
    assert report["numa_summary"] == "NUMA node 0: proven (%s); NUMA node 1: proven (%s)" % (probes[0]["name"], probes[1]["name"])
    assert prove_fleet({"gpu-worker-1": report})["proven"] == ["gpu-worker-1"]


def test_a_probe_that_landed_on_another_numa_node_is_not_proof_for_the_one_it_is_named_for(machine):
    """The kubelet put the probe meant for NUMA node 1 on node 0 (node 1's GPUs busy): node 0 is proven twice, node 1
    not at all - the host is not proven, and the report says which node was exercised."""
    probes, report = two_probes(machine, (0, 0))
    assert report["ok"], "nothing failed: the pinning on node 0 is right"
    numa1 = report["results"][1]
    assert numa1["numa_node"] == 0 and numa1["summary"].endswith("(meant for NUMA node 1: not evidence for it)")
    assert [(n["node"], n["verdict"]) for n in report["numa_nodes"]] == [(0, "proven"), (1, "not exercised")]
    assert report["inconclusive"] == [
        "NUMA node 1 not exercised: %s landed on NUMA node 0 (the kubelet takes the lowest NUMA node with room, or node "
        "1's GPUs were busy) - nothing proves its pinning" % probes[1]["name"]]
    fleet = prove_fleet({"gpu-worker-1": report})
    assert fleet["proven"] == [] and fleet["inconclusive"] == ["gpu-worker-1"]
    assert fleet["numa_nodes"] == {"gpu-worker-1": {"0": "proven", "1": "not exercised"}}
    markdown = render_prove_markdown({"gpu-worker-1": report})
    assert "- **gpu-worker-1**: NUMA node 0: proven \\(%s, %s\\); NUMA node 1: not exercised" % (
        probes[0]["name"], probes[1]["name"]) in markdown


def test_pod_shapes_claim_no_numa_node_so_none_is_left_unexercised(machine):
    topology, plan = machine
    plan = dict(plan, pod_shapes=[{"name": "vllm-tp1", "request": {"cpu": 2, "memory": 256 * 2 ** 20, "gpus": 1, "hugepages": 0}}])
    probe = probes_for(plan, topology)[0]
    gpu = gpus_on(topology, 0)[0]
    report = prove_report([probe], {probe["name"]: pod(probe)}, {probe["name"]: log(isolated_core(topology, plan, 0), "0", gpu["uuid"])},
                          plan, topology, {})
    assert report["ok"] and report["inconclusive"] == []
    assert [(n["node"], n["verdict"]) for n in report["numa_nodes"]] == [(0, "proven"), (1, "not exercised")]


# ---------------------------------------------------------------- the QoS audit

def gpu_pod(name, node, qos, cpu="2", phase="Running", reason=None, gpus="1"):
    resources = {"requests": {"cpu": cpu, "memory": "1Gi"}, "limits": {"cpu": cpu, "memory": "1Gi", "nvidia.com/gpu": gpus}}
    status = {"phase": phase, "qosClass": qos}
    if reason:
        status["reason"] = reason
    return {"metadata": {"namespace": "ml", "name": name}, "spec": {"nodeName": node, "containers": [
        {"name": "main", "resources": resources}]}, "status": status}


def test_audit_flags_the_qos_trap_and_topology_refusals():
    pods = {"items": [
        gpu_pod("vllm-ok", "n1", "Guaranteed"),
        gpu_pod("vllm-burstable", "n1", "Burstable"),
        gpu_pod("vllm-half", "n1", "Guaranteed", cpu="1500m"),
        gpu_pod("vllm-milli-whole", "n1", "Guaranteed", cpu="2000m"),
        gpu_pod("no-gpu", "n1", "Burstable", gpus="0"),
        gpu_pod("done", "n1", "Burstable", phase="Succeeded"),
        gpu_pod("tp8", "n2", "Guaranteed", phase="Failed", reason="TopologyAffinityError"),
        gpu_pod("elsewhere", "n9", "Burstable"),
    ]}
    audit = audit_pods(pods, ["n1", "n2", "n3"])
    assert [u.split(" ")[0] for u in audit["n1"]["unpinned"]] == ["ml/vllm-burstable", "ml/vllm-half"]
    assert "is Burstable (requests != limits): no exclusive CPUs" in audit["n1"]["unpinned"][0]
    assert "cpu 1500m: the CPU Manager pins only whole CPUs" in audit["n1"]["unpinned"][1]
    assert audit["n2"] == {"unpinned": [], "topology_errors": ["ml/tp8 was refused by the kubelet: TopologyAffinityError (no message)"]}
    assert audit["n3"] == {"unpinned": [], "topology_errors": []} and "n9" not in audit
    # without names (check.yml: one pass for the fleet): every node a pod is bound to, the same entries
    fleet = audit_pods(pods)
    assert sorted(fleet) == ["n1", "n2", "n9"]
    assert fleet["n1"] == audit["n1"] and fleet["n2"] == audit["n2"]
    assert [u.split(" ")[0] for u in fleet["n9"]["unpinned"]] == ["ml/elsewhere"]


def test_kubectl_s_reply_for_one_name_is_the_pod_itself(machine):
    """`kubectl get pod NAME -o json` prints the Pod, not a List, when there is one probe."""
    topology, plan = machine
    probe = probes_for(plan, topology)[0]
    alone = dict(pod(probe), kind="Pod")
    assert kube_items(alone) == [alone]
    assert kube_items({"kind": "List", "items": [alone]}) == [alone]
    assert kube_items({"kind": "PodList", "items": []}) == [] and kube_items(None) == []
    report = rke2_numa_probe_report([probe], alone, [], plan, topology, {})
    assert "is gone" not in " ".join(report["reasons"]), report


def test_the_audit_error_says_why_in_kubectls_words_or_that_kubectl_could_not_run():
    kubectl = "/var/lib/rancher/rke2/bin/kubectl"
    missing = {"failed": True, "rc": 2, "msg": "Error executing command.", "cmd": [kubectl, "get", "pods"]}
    assert audit_error(missing, kubectl, "server-1") == (
        "pods not audited: kubectl could not be run at /var/lib/rancher/rke2/bin/kubectl on server-1 "
        "(rke2_numa_kubectl: not found or not executable)")
    refused = {"rc": 1, "msg": "The command exited with a non-zero return code.",
               "stderr": "error: You must be logged in to the server (Unauthorized)\n"}
    assert audit_error(refused, kubectl, "server-1") == "pods not audited: You must be logged in to the server (Unauthorized)"
    # the roll's own reason rule (roll_outcome.failure_reason): kubectl's last words, not Ansible's
    assert audit_error({"rc": 1, "msg": "non-zero return code", "stderr": 'Error from server (NotFound): nodes "gpu-a" not found\n'},
                       kubectl, "h") == 'pods not audited: Error from server (NotFound): nodes "gpu-a" not found'
    assert audit_error({"rc": 1, "stderr": "x" * 400}, kubectl, "h").endswith("x...") and \
        len(audit_error({"rc": 1, "stderr": "x" * 400}, kubectl, "h")) == len("pods not audited: ") + 300
    assert audit_error({}, kubectl, "h") == "pods not audited: kubectl did not run"


def test_a_gpu_the_nvidia_driver_does_not_own_takes_no_nvml_index(machine):
    """A GPU bound to vfio-pci (passed to a VM) is not NVML's: the indices of the others do not shift."""
    topology, plan = copy.deepcopy(machine[0]), machine[1]
    vfio = dict(gpus_on(topology, 1)[0], address="0000:08:00.0", driver="vfio-pci", uuid=None, minor=None)
    topology["pci_devices"].append(vfio)
    first = sorted((d for d in topology["pci_devices"] if d["kind"] == "gpu" and d.get("driver") != "vfio-pci"),
                   key=lambda d: d["address"])[0]
    assert first["numa_node"] == 0
    _report, result = judge((topology, plan), log(isolated_core(topology, plan, 0), "0", "0"))
    assert result["verdict"] == "proven" and result["gpus"] == [first["address"]], result


def test_mig_instances_of_one_gpu_are_not_counted_by_nvidia_smi(machine):
    """Two MIG instances of one GPU: nvidia-smi lists the GPU once, which is not a GPU short."""
    topology, _plan = machine
    plan = make_plan(topology, hugepages_per_node=4, pod_shapes=[{"name": "two-slices", "cpu": 2, "memory": "1Gi", "gpus": 2}])
    gpu = gpus_on(topology, 0)[0]
    bus = "00000000:%s," % gpu["address"][5:].upper()
    probe = probes_for(plan, topology)[0]
    report = prove_report([probe], {probe["name"]: pod(probe)}, {probe["name"]: log(
        isolated_core(topology, plan, 0), "0", "MIG-30d00c09-8a98-59b8-8c1a-1d64b4ec3ad2,MIG-41e11d1a-9b09-6ac9-9d2b-3e1d4c5b6a70", bus=bus)},
        plan, topology, {})
    (result,) = report["results"]
    assert result["verdict"] == "proven" and result["gpus"] == [gpu["address"]] and result["gpu_source"] == "nvidia-smi", result["summary"]


# ---- the pod-level probe (KEP-5526): a pod Guaranteed by its own budget, where the node's kubelet pins such pods

def test_a_1_37_node_gets_one_pod_level_probe_a_1_35_node_none(machine):
    topology, dummy = machine
    plan37 = make_plan(topology, hugepages_per_node=4, kubernetes_version="1.37")
    probes = probes_for(plan37, topology)
    assert [p["shape"]["name"] for p in probes] == ["numa0", "numa1", "pod-level"]
    spec = probes[-1]["manifest"]["spec"]
    assert spec["resources"] == {"requests": {"cpu": "2", "memory": "256Mi"}, "limits": {"cpu": "2", "memory": "256Mi"}}
    assert "resources" not in spec["containers"][0], "its container asks for nothing: it runs on the pod's budget"
    assert probes[-1]["name"] == "rke2-numa-probe-%s-2" % NODE
    plan35 = make_plan(topology, hugepages_per_node=4, kubernetes_version="1.35")
    assert [p["shape"]["name"] for p in probes_for(plan35, topology)] == ["numa0", "numa1"]
    # 1.36 runs the managers only with the gate
    plan36 = make_plan(topology, hugepages_per_node=4, kubernetes_version="1.36",
                       extra_kubelet_args=["feature-gates=PodLevelResourceManagers=true"])
    assert [p["shape"]["name"] for p in probes_for(plan36, topology)][-1] == "pod-level"


def test_the_pod_level_probe_is_judged_by_the_rule_the_audit_assumes(machine):
    """Proven on one whole core of one NUMA node with that node's memory (what the 1.37 kubelet gives the pod's
    budget); failed on the shared pool, saying the kubelet did not pin a pod Guaranteed by spec.resources."""
    topology, dummy = machine
    plan = make_plan(topology, hugepages_per_node=4, kubernetes_version="1.37")
    probe = probes_for(plan, topology)[-1]
    pinned = prove_report([probe], {probe["name"]: pod(probe)}, {probe["name"]: log(isolated_core(topology, plan, 0), "0")},
                          plan, topology, {})
    assert pinned["ok"] and pinned["results"][0]["verdict"] == "proven", pinned
    shared = prove_report([probe], {probe["name"]: pod(probe)}, {probe["name"]: log(topology["cpus_online"], "0-1")},
                          plan, topology, {})
    assert not shared["ok"]
    assert "for its pod's own budget of 2: the kubelet did not pin a pod Guaranteed by spec.resources" in shared["reasons"][0]
