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

import subprocess

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import format_cpulist, parse_cpulist
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.prove import (
    PROBE_SCRIPT,
    audit_error,
    audit_pods,
    kube_items,
    parse_probe_log,
    probe_pods,
    prove_report,
)
from ansible_collections.maitred.rke2_numa.plugins.filter.prove import rke2_numa_probe_report
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


def log(cpus, mems, visible="", bus=None):
    text = "rke2-numa-probe cpus=%s\nrke2-numa-probe mems=%s\nrke2-numa-probe visible=%s\n" % (cpus, mems, visible)
    return text + ("rke2-numa-probe bus=%s\n" % bus if bus is not None else "")


def judge(machine, output, status=None, entries=None, which=0):
    topology, plan = machine
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
        assert spec["tolerations"] == [{"operator": "Exists"}]   # the node is cordoned
        assert container["image"] == "mirror.local/busybox:1.36" and p["manifest"]["metadata"]["namespace"] == "ops"
        assert len(p["name"]) <= 63


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


def test_the_probe_script_prints_what_its_cgroup_holds(tmp_path):
    """The script itself, under sh, with /sys/fs/cgroup mapped to a folder (cgroup v2, then v1)."""
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "cpuset.cpus.effective").write_text("2-3\n")
    (v2 / "cpuset.mems.effective").write_text("0\n")
    out = subprocess.run(["sh", "-c", PROBE_SCRIPT.replace("/sys/fs/cgroup", str(v2))], env={"PATH": "/usr/bin:/bin",
                         "NVIDIA_VISIBLE_DEVICES": "GPU-1"}, capture_output=True, text=True, check=True).stdout
    assert parse_probe_log(out) == {"cpus": "2-3", "mems": "0", "visible": "GPU-1"}
    v1 = tmp_path / "v1" / "cpuset"
    v1.mkdir(parents=True)
    (v1 / "cpuset.effective_cpus").write_text("4-5\n")
    (v1 / "cpuset.effective_mems").write_text("1\n")
    out = subprocess.run(["sh", "-c", PROBE_SCRIPT.replace("/sys/fs/cgroup", str(tmp_path / "v1"))], env={"PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, check=True).stdout
    assert parse_probe_log(out) == {"cpus": "4-5", "mems": "1", "visible": ""}


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
    assert ("CPUs and memory are on NUMA node 0 but the GPU is not (%s on NUMA node 1): the device plugin publishes no NUMA "
            "topology for nvidia.com/gpu" % away["address"]) in result["summary"]


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


def test_a_gpu_the_node_does_not_know(machine):
    topology, plan = machine
    report, result = judge(machine, log(isolated_core(topology, plan, 0), "0", "GPU-00000000-dead-beef-0000-000000000000"))
    assert not report["ok"] and "GPU-00000000-dead-beef-0000-000000000000, which no GPU of the node matches" in result["summary"]


def test_no_gpu_seen(machine):
    topology, plan = machine
    report, result = judge(machine, log(isolated_core(topology, plan, 0), "0", ""))
    assert not report["ok"] and "saw 0 GPU(s) for a request of 1 nvidia.com/gpu (NVIDIA_VISIBLE_DEVICES=unset)" in result["summary"]


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
