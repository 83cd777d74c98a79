# -*- coding: utf-8 -*-
"""The collection's probe pods, run by the rke2 stand-in's kubelet, judged by the collection: under every
policy combination the planner allows, and every way the NVIDIA device plugin hands a container its GPU.

Each case runs the API stand-in and one `rke2 agent` on a generated DGX H100 (2 NUMA nodes, 56 cores x 2
threads each, 4 H100 per node) with the plan's own kubelet args, creates the role's probe pods with the
real kubectl, reads their logs and the CPU Manager checkpoint, and calls prove_report as the role does.
"""

from __future__ import annotations

import itertools
import json

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import parse_cpulist
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.prove import probe_pods, prove_report
from ansible_collections.maitred.rke2_numa.tests.integration.standins.test_pod_lifecycle import Cluster, needs_kubectl, wait_for

# best-effort and restricted admit and align as single-numa-node when the pod fits one node (the stand-in has no
# multi-node hints): they run in the misaligned-GPU test below; test_prove.py judges all 16 combinations.
POLICIES = list(itertools.product(("none", "static"), ("None", "Static"), ("none", "single-numa-node")))


@pytest.fixture
def cluster(tmp_path):
    api = Cluster(tmp_path)
    yield api
    api.close()


def prove_on(cluster, plan_options=None, whole_nodes=True, **environ):
    """Plan the machine, start the kubelet with the plan's args, run the default probes, judge them. ``whole_nodes``:
    as the prove role sizes them on a node where no pod holds a GPU (this one), each takes its NUMA node's GPUs."""
    topology = read_topology(cluster.root)
    plan = make_plan(topology, **(plan_options or {}))
    cluster.start_agent(args=plan["kubelet_args"], **environ)
    probes = probe_pods(plan, topology, "n1", "registry.example/busybox:1", "default", "nvidia.com/gpu", "256Mi",
                        whole_nodes=whole_nodes)
    path = cluster.tmp / "probes.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [p["manifest"] for p in probes]}))
    out = cluster.kubectl("create", "--validate=false", "-o", "name", "-f", str(path))
    assert out.returncode == 0, out.stderr
    pods = {}
    for probe in probes:
        pods[probe["name"]] = cluster.finished(probe["name"])
    logs = {}
    for probe in probes:
        out = cluster.kubectl("logs", probe["name"], "--container", "probe")
        assert out.returncode == 0, out.stderr
        logs[probe["name"]] = out.stdout
    entries = cluster.checkpoint("cpu_manager_state").get("entries") or {}
    return prove_report(probes, pods, logs, plan, topology, entries, "nvidia.com/gpu", 1), topology


def gpu_node(topology, address):
    return [d["numa_node"] for d in topology["pci_devices"] if d["address"] == address][0]


@needs_kubectl
@pytest.mark.parametrize("cpu,memory,alignment", POLICIES, ids=["-".join(p) for p in POLICIES])
def test_the_probe_proves_what_each_policy_combination_promises(cluster, cpu, memory, alignment):
    """Every combination the planner allows proves on a node that runs it: exclusive CPUs only under static,
    one memory node only under Memory Manager Static, the GPU judged only where the Topology Manager aligns."""
    report, topology = prove_on(cluster, {"cpu_manager_policy": cpu, "memory_manager_policy": memory,
                                          "topology_manager_policy": alignment})
    assert report["ok"] and report["reasons"] == [] and report["inconclusive"] == [], report["reasons"]
    assert [r["verdict"] for r in report["results"]] == ["proven", "proven"]
    for result in report["results"]:
        assert result["gpu_source"] == "NVIDIA_VISIBLE_DEVICES" and len(result["gpus"]) >= 1
        if cpu == "static":
            assert "exclusive CPUs %s" % result["cpus"] in result["summary"]
        else:
            assert "shared CPUs 0-223 (cpu-manager-policy none)" in result["summary"]
        if memory == "Static":
            assert "memory node %s" % result["mems"] in result["summary"] and len(result["mems"]) == 1
        else:
            assert "memory nodes 0-1 (memory-manager-policy None)" in result["summary"]
        if alignment != "none" and (cpu == "static" or memory == "Static"):
            assert gpu_node(topology, result["gpus"][0]) == result["numa_node"], result


@needs_kubectl
@pytest.mark.parametrize("alignment,verdict", [("single-numa-node", "failed"), ("restricted", "failed"),
                                               ("best-effort", "warned"), ("none", "proven")])
def test_a_gpu_the_kubelet_cannot_align_fails_only_where_the_policy_promises_alignment(cluster, alignment, verdict):
    """The device plugin publishes no topology: the GPU comes from the other NUMA node."""
    report, _topology = prove_on(cluster, {"topology_manager_policy": alignment}, RKE2_STANDIN_GPU_TOPOLOGY="false")
    away = [r for r in report["results"] if r["numa_node"] == 0]
    assert away, report
    if verdict == "failed":
        assert not report["ok"]
        assert "the device plugin publishes no NUMA topology for nvidia.com/gpu, so the kubelet cannot align it under %s" % alignment \
            in report["reasons"][0]
    else:
        assert report["ok"] and report["reasons"] == []
        assert bool(report["warnings"]) == (verdict == "warned"), report
        if verdict == "warned":
            assert "is not on the NUMA node 0 of its CPUs and memory" in report["warnings"][0]


STRATEGIES = [
    ("envvar-uuid", {}, "NVIDIA_VISIBLE_DEVICES"),
    ("envvar-index", {"RKE2_STANDIN_DEVICE_ID_STRATEGY": "index"}, "NVIDIA_VISIBLE_DEVICES"),
    ("volume-mounts", {"RKE2_STANDIN_DEVICE_LIST_STRATEGY": "volume-mounts"}, "/var/run/nvidia-container-devices"),
    ("volume-mounts-index", {"RKE2_STANDIN_DEVICE_LIST_STRATEGY": "volume-mounts", "RKE2_STANDIN_DEVICE_ID_STRATEGY": "index"},
     "/var/run/nvidia-container-devices"),
    ("cdi-cri", {"RKE2_STANDIN_DEVICE_LIST_STRATEGY": "cdi-cri"}, "/dev/nvidia*"),
    ("cpuset-not-delegated", {"RKE2_STANDIN_CPUSET_DELEGATED": "false"}, "NVIDIA_VISIBLE_DEVICES"),
]


@needs_kubectl
@pytest.mark.parametrize("environ,source", [s[1:] for s in STRATEGIES], ids=[s[0] for s in STRATEGIES])
def test_the_probe_identifies_its_gpu_under_every_device_plugin_strategy(cluster, environ, source):
    report, topology = prove_on(cluster, {}, **environ)
    assert report["ok"] and report["inconclusive"] == [], report
    for result in report["results"]:
        assert result["verdict"] == "proven" and result["gpu_source"] == source, result
        assert gpu_node(topology, result["gpus"][0]) == result["numa_node"]
        assert result["source"] == ("/proc/self/status" if "RKE2_STANDIN_CPUSET_DELEGATED" in environ else "cgroup")


@needs_kubectl
def test_a_gpu_nothing_identifies_is_inconclusive_not_a_failed_node(cluster):
    """CDI (no NVIDIA_VISIBLE_DEVICES, every GPU in the driver's procfs) on a host whose driver files discovery
    could not read (no UUID, no device minor): the probe cannot say which GPU it got."""
    topology = read_topology(cluster.root)
    plan = make_plan(topology)
    for device in topology["pci_devices"]:
        device["uuid"] = device["minor"] = None
    cluster.start_agent(args=plan["kubelet_args"], RKE2_STANDIN_DEVICE_LIST_STRATEGY="cdi-cri")
    probes = probe_pods(plan, topology, "n1", "registry.example/busybox:1", "default", "nvidia.com/gpu", "256Mi", whole_nodes=True)
    path = cluster.tmp / "probes.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [p["manifest"] for p in probes]}))
    assert cluster.kubectl("create", "--validate=false", "-f", str(path)).returncode == 0
    pods = dict((p["name"], cluster.finished(p["name"])) for p in probes)
    logs = dict((p["name"], cluster.kubectl("logs", p["name"]).stdout) for p in probes)
    assert wait_for(lambda: all(logs.values()))
    report = prove_report(probes, pods, logs, plan, topology, cluster.checkpoint("cpu_manager_state").get("entries") or {})
    assert report["ok"] and report["reasons"] == [] and len(report["inconclusive"]) == 2
    assert all(r["verdict"] == "inconclusive" for r in report["results"])
    # each probe took its NUMA node's four GPUs (no pod holds one here), and none of them is identified
    assert "inconclusive: the probe's GPU could not be identified (/dev/nvidia0, /dev/nvidia1, /dev/nvidia2, /dev/nvidia3): nothing maps " \
        "it to a GPU of the node" in report["inconclusive"][0]


@needs_kubectl
def test_one_gpu_probes_on_an_idle_node_all_land_on_node_0_and_the_report_says_node_1_was_not_exercised(cluster):
    """What the kubelet does with one-GPU probes where node 0 has room (a node whose GPUs are partly busy gets them
    too): the probe meant for node 1 lands on node 0. It is proof for node 0 only - node 1 is named not exercised."""
    report, topology = prove_on(cluster, {}, whole_nodes=False)
    assert report["ok"] and [r["numa_node"] for r in report["results"]] == [0, 0]
    assert [(n["node"], n["verdict"]) for n in report["numa_nodes"]] == [(0, "proven"), (1, "not exercised")]
    assert report["inconclusive"] == [report["numa_nodes"][1]["why"]]
    assert report["numa_nodes"][1]["why"].startswith("NUMA node 1 not exercised: rke2-numa-probe-n1-1 landed on NUMA node 0")


@needs_kubectl
def test_whole_node_probes_run_together_use_every_gpu_numa_node(cluster):
    report, topology = prove_on(cluster, {})
    assert report["ok"] and report["inconclusive"] == [], report
    assert [(n["node"], n["verdict"]) for n in report["numa_nodes"]] == [(0, "proven"), (1, "proven")]
    for result in report["results"]:
        assert len(result["gpus"]) == len([d for d in topology["pci_devices"] if d["kind"] == "gpu" and d["numa_node"] == result["numa_node"]])


@needs_kubectl
def test_a_1_37_node_proves_a_pod_with_its_own_budget_pinned(cluster):
    """On a 1.37 kubelet (PodLevelResourceManagers on) the pod-level probe - Guaranteed by spec.resources, its container
    without requests - gets one whole core of one NUMA node and that node's memory: proven beside the GPU probes."""
    report, dummy = prove_on(cluster, {"kubernetes_version": "1.37"}, RKE2_STANDIN_VERSION="v1.37.2+rke2r1")
    assert report["ok"], report["reasons"]
    result = [r for r in report["results"] if r["shape"] == "pod-level"][0]
    assert result["verdict"] == "proven" and result["numa_node"] is not None, result
    assert len(parse_cpulist(result["cpus"])) == 2 and result["mems"] == str(result["numa_node"]), "one whole core, its node's memory"


@needs_kubectl
def test_the_pod_level_probe_fails_where_the_kubelet_does_not_pin_such_pods(cluster):
    """A plan made for 1.37 on a kubelet that runs 1.36 (the gate off by default): the pod's budget is not pinned - the
    probe runs on the shared pool, and the report says so instead of trusting the audit's assumption."""
    report, dummy = prove_on(cluster, {"kubernetes_version": "1.37"}, RKE2_STANDIN_VERSION="v1.36.4+rke2r1")
    result = [r for r in report["results"] if r["shape"] == "pod-level"][0]
    assert result["verdict"] == "failed" and "the kubelet did not pin a pod Guaranteed by spec.resources" in result["summary"], result
    assert all(r["verdict"] == "proven" for r in report["results"] if r["shape"] != "pod-level"), report["results"]
