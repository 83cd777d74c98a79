# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""check.yml on a node that serves its GPUs by Dynamic Resource Allocation, against the API stand-in (serving
resource.k8s.io/v1) and the real kubectl: the node's DRA devices with their NUMA nodes, matched with its sysfs; a
running pod whose GPU came from a ResourceClaim while its CPUs are pinned by the kubelet is flagged, naming where the
GPU (the claim's allocation) and the CPUs (the kubelet's checkpoint) landed; a pod whose claim keeps its GPU and its
CPUs (dra.cpu) on one NUMA node is not."""

from __future__ import annotations

import contextlib
import json
import uuid

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import format_cpulist, parse_cpulist
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import dra
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import (
    Cluster, StandinNode, claim_template, dra_objects, needs_kubectl, wait_for)
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply, make_node, rke2
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_first_roll import run
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_hostile_inventory import node_vars

pytestmark = needs_kubectl
NODE = "gpu-a"
SPEC = dict(sockets=2, cores_per_socket=4, threads=2, gpus_per_node=1)   # two NUMA nodes, a GPU on each
SERVER = "v1.35.2+rke2r1"   # resource.k8s.io/v1 is served from 1.34


def gpu_slice(gpus):
    """gpu.nvidia.com's ResourceSlice for the node's GPUs (sysfs), with KEP-6072's numaNode (the driver's main)."""
    devices = [{"name": "gpu-%d" % g["minor"], "attributes": {
        "type": {"string": "gpu"}, "uuid": {"string": g["uuid"]}, dra.PCI_BUS_ID: {"string": g["address"]},
        dra.PCIE_ROOT: {"string": "pci0000:00"}, dra.NUMA_NODE: {"int": g["numa_node"]}}} for g in gpus]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": NODE + "-gpu.nvidia.com-7xk2p"},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": NODE, "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}}


def cpu_slice():
    """dra.cpu v0.2.0, grouped by NUMA node."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": NODE + "-dra.cpu-2b9qz"},
            "spec": {"driver": "dra.cpu", "nodeName": NODE, "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "cpudevnuma%03d" % n, "attributes": {"dra.cpu/numaNodeID": {"int": n}, "dra.net/numaNode": {"int": n}},
                                  "capacity": {"dra.cpu/cpu": {"value": "8"}}, "allowMultipleAllocations": True} for n in (0, 1)]}}


def allocated_claim(name, results, constraints=()):
    """A claim as the scheduler left it: allocated on the node, reserved for its pod."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"namespace": "ml", "name": name},
            "spec": {"devices": {"requests": [{"name": r, "exactly": {"deviceClassName": c}} for r, c, d, dev in results],
                                 "constraints": [{"matchAttribute": a} for a in constraints]}},
            "status": {"allocation": {"devices": {"results": [{"request": r, "driver": d, "pool": NODE, "device": dev} for r, c, d, dev in results]},
                                      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                          {"key": "metadata.name", "operator": "In", "values": [NODE]}]}]}}}}


def running_pod(name, uid, claim):
    """A Guaranteed pod with 2 whole CPUs (the kubelet's static CPU Manager pins them) and a claim made from a template."""
    resources = {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}, "claims": [{"name": "devs"}]}
    return {"namespace": "ml", "name": name, "uid": uid, "phase": "Running", "admitted": "2026-12-06T08:00:00Z",
            "started": "2026-12-06T08:00:01Z", "resourceClaimStatuses": [{"name": "devs", "resourceClaimName": claim}],
            "spec": {"containers": [{"name": "vllm", "image": "vllm/vllm-openai:v0.12.0", "resources": resources}],
                     "resourceClaims": [{"name": "devs", "resourceClaimTemplateName": "one-gpu"}]}}


def pin(root, uid, cpus):
    """The kubelet's checkpoint with ``cpus`` given to the pod's container (out of the default set), as the static
    policy writes it."""
    path = root / "var/lib/kubelet/cpu_manager_state"
    state = json.loads(path.read_text())
    state["defaultCpuSet"] = format_cpulist(sorted(set(parse_cpulist(state["defaultCpuSet"])) - set(cpus)))
    state["entries"] = {uid: {"vllm": format_cpulist(cpus)}}
    state["checksum"] = rke2.checksum(state)
    path.write_text(json.dumps(state))


def test_the_check_sees_dra_gpus_with_their_numa_node_and_flags_a_pinned_pod_whose_dra_gpu_is_on_another_node(tmp_path):
    root = make_node(tmp_path / NODE, **SPEC)
    topology = read_topology(str(root))
    comply(root, make_plan(topology))
    gpus = sorted((d for d in topology["pci_devices"] if d["kind"] == "gpu"), key=lambda d: d["numa_node"])
    assert [g["numa_node"] for g in gpus] == [0, 1]
    numa0 = list(parse_cpulist(topology["numa_nodes"][0]["cpus"]))[2:4]
    pinned, aligned = str(uuid.uuid4()), str(uuid.uuid4())
    pin(root, pinned, numa0)

    (tmp_path / "api").mkdir()
    cluster = Cluster(tmp_path / "api", lease_namespace=True, version=SERVER)
    try:
        cluster.add_node(NODE, ready=True, labels={"kubernetes.io/hostname": NODE},
                         pods=[running_pod("pinned", pinned, "pinned-devs-x7k2p"), running_pod("aligned", aligned, "aligned-devs-q8w3m")])
        cluster.add_object("resourceslices", gpu_slice(gpus))
        cluster.add_object("resourceslices", cpu_slice())
        gpu0, gpu1 = [("gpu", "gpu.nvidia.com", "gpu.nvidia.com", "gpu-%d" % g["minor"]) for g in gpus]
        cluster.add_object("resourceclaims", allocated_claim("pinned-devs-x7k2p", [gpu1]))
        cluster.add_object("resourceclaims", allocated_claim("aligned-devs-q8w3m", [gpu0, ("cpu", "dra.cpu", "dra.cpu", "cpudevnuma000")],
                                                             constraints=(dra.NUMA_NODE,)))
        report = tmp_path / "report"
        out, text = run(cluster, tmp_path, "check.yml", {NODE: node_vars(root)}, "-e", "rke2_numa_report_dir=%s" % report)
        assert out.returncode == 0, text[-3000:]
        pods = json.loads((report / (NODE + ".json")).read_text())["pods"]
        seen = pods["dra"]
        assert seen["gpu_path"] == "dra" and seen["counts"] == {"gpu": 2, "nic": 0, "cpu": 2}
        # dra.cpu beside the kubelet's static CPU Manager (this node's plan): both would hand out the CPUs
        assert [f.split(":")[0] for f in seen["findings"]] == [
            "dra.cpu publishes 2 CPU device(s) on this node while its kubelet's CPU Manager is static, not none"]
        assert [(d["device"], d["numa_node"], d["sysfs_address"], d["sysfs_numa_node"]) for d in seen["devices"] if d["kind"] == "gpu"] == [
            ("gpu-%d" % g["minor"], g["numa_node"], g["address"], g["numa_node"]) for g in gpus]
        assert pods["dra_unaligned"] == [
            "ml/pinned holds gpu.nvidia.com gpu-%d from ResourceClaim ml/pinned-devs-x7k2p on NUMA node 1 while the kubelet pins its CPUs: "
            "the Topology Manager does not align DRA devices, this pod's GPU may sit on another NUMA node than its CPUs; its CPUs %s are "
            "on NUMA node 0 - not its GPU's (align them in one claim: a dra.cpu request with a matchAttribute resource.kubernetes.io/numaNode "
            "constraint)" % (gpus[1]["minor"], format_cpulist(numa0))]
        assert pods["dra_claims"] == []
        fleet = json.loads((report / "fleet.json").read_text())
        assert fleet["dra_gpus"] == {NODE: "dra"} and len(fleet["dra_unaligned_gpu_pods"]) == 1
        assert "%s: NOT ALIGNED (DRA): ml/pinned holds" % NODE in text
        assert "DRA devices and claims not read" not in text
    finally:
        assert cluster.stop() == 0


def test_a_cluster_before_kubernetes_1_34_is_checked_as_before_saying_once_that_dra_was_not_read(tmp_path):
    """A 1.33 server serves no resource.k8s.io/v1: the one read with DRA is refused, the Nodes and pods are read alone
    (an identity access.yml made before the DRA rights is refused the same way), no DRA entry, the audit goes on."""
    root = make_node(tmp_path / NODE, **SPEC)
    (tmp_path / "api").mkdir()
    cluster = Cluster(tmp_path / "api", lease_namespace=True, version="v1.33.1+rke2r1")
    try:
        cluster.add_node(NODE, ready=True, labels={"kubernetes.io/hostname": NODE})
        report = tmp_path / "report"
        out, text = run(cluster, tmp_path, "check.yml", {NODE: node_vars(root)}, "-e", "rke2_numa_report_dir=%s" % report)
        assert out.returncode == 0, text[-3000:]
        pods = json.loads((report / (NODE + ".json")).read_text())["pods"]
        assert pods == {"unpinned": [], "topology_errors": []}
        assert text.count('DRA devices and claims not read (the audit goes on without them): the server doesn\'t have a resource type '
                          '\\"resourceslices\\"') == 1, text[-3000:]   # (the debug task's JSON)
        assert [c["path"] for c in cluster.calls() if c["path"].startswith("/api/v1/pods")] == ["/api/v1/pods"]
    finally:
        assert cluster.stop() == 0


def test_labels_on_a_node_whose_gpus_are_dra_only_promise_no_kubelet_aligned_gpu(tmp_path):
    """labels.yml (the check, then the labels role) on a node serving its two GPUs by DRA alone: the capacity labels count
    no GPU (the Topology Manager does not align DRA GPUs), dra-gpus and dra-alignment say what the DRA path gives; the
    check then finds the labels as the role wrote them."""
    root = make_node(tmp_path / NODE, **SPEC)
    topology = read_topology(str(root))
    comply(root, make_plan(topology))
    gpus = sorted((d for d in topology["pci_devices"] if d["kind"] == "gpu"), key=lambda d: d["numa_node"])
    (tmp_path / "api").mkdir()
    cluster = Cluster(tmp_path / "api", lease_namespace=True, version=SERVER)
    try:
        cluster.add_node(NODE, ready=True, labels={"kubernetes.io/hostname": NODE})
        cluster.add_object("resourceslices", gpu_slice(gpus))
        out, text = run(cluster, tmp_path, "labels.yml", {NODE: node_vars(root)}, "-e", "rke2_numa_labels_via=kubectl")
        assert out.returncode == 0, text[-3000:]
        labels = cluster.node(NODE)["labels"]
        prefix = "rke2-numa.maitred.io/"
        assert (labels[prefix + "max-pod-gpus"], labels[prefix + "numa0-gpus"], labels[prefix + "numa1-gpus"]) == ("0", "0", "0")
        assert (labels[prefix + "dra-gpus"], labels[prefix + "dra-alignment"]) == ("2", "none")
        report = tmp_path / "report"
        out, text = run(cluster, tmp_path, "check.yml", {NODE: node_vars(root)}, "-e", "rke2_numa_labels_via=kubectl",
                        "-e", "rke2_numa_report_dir=%s" % report)
        assert out.returncode == 0, text[-3000:]
        decision = json.loads((report / (NODE + ".json")).read_text())
        assert not [f for f in decision["findings"] if f["check"] == "labels"], decision["findings"]
    finally:
        assert cluster.stop() == 0


@contextlib.contextmanager
def standin_node(tmp_path, root, plan, dra_gpus):
    """The API stand-in (1.35) and gpu-a's rke2 stand-in running ``plan`` (its kubelet args; the rest of the node made
    to comply), the GPUs ``dra_gpus`` (RKE2_STANDIN_DRA_GPUS) served by DRA: yields (cluster, node), both stopped after."""
    comply(root, plan, kubelet=False)
    (tmp_path / "api").mkdir()
    cluster = Cluster(tmp_path / "api", lease_namespace=True, version=SERVER)
    node = None
    try:
        node = StandinNode(cluster, root, NODE, plan["kubelet_args"], RKE2_STANDIN_DRA_GPUS=dra_gpus, RKE2_STANDIN_VERSION=SERVER)
        node.start()
        yield cluster, node
    finally:
        if node is not None:
            node.stop()
        assert cluster.stop() == 0


def numa_gpus(topology):
    """The machine's GPUs in NUMA node order."""
    return sorted((d for d in topology["pci_devices"] if d["kind"] == "gpu"), key=lambda d: d["numa_node"])


def test_a_node_with_both_paths_judges_each_pod_by_the_path_its_gpu_came_from(tmp_path):
    """Both stand-ins for real: node gpu-a serves its NUMA node 0 GPU by the device plugin and its node 1 GPU by DRA
    (RKE2_STANDIN_DRA_GPUS), its kubelet pins CPUs (static, single-numa-node, pod scope). A Guaranteed pod asking for
    nvidia.com/gpu gets the device plugin's GPU with its CPUs (the Topology Manager aligns it); one whose GPU comes from
    a claim gets its CPUs where the Topology Manager puts them (node 0) and the DRA GPU on node 1. The check flags the
    second only, with where each landed, as read from the kubelet's checkpoint and the claim's allocation."""
    root = make_node(tmp_path / NODE, **SPEC)
    topology = read_topology(str(root))
    plan = make_plan(topology)
    gpus = numa_gpus(topology)
    with standin_node(tmp_path, root, plan, gpus[1]["address"]) as (cluster, node):
        for plural, obj in dra_objects(root, NODE):
            if plural == "resourceslices" and obj["spec"]["driver"] == "dra.cpu":
                continue   # no dra.cpu beside the static CPU Manager
            if plural == "resourceslices":   # the DRA driver publishes only the GPU the device plugin does not serve
                obj["spec"]["devices"] = [d for d in obj["spec"]["devices"] if d["attributes"][dra.PCI_BUS_ID]["string"] == gpus[1]["address"]]
            cluster.add_object(plural, obj)
        assert cluster.kubectl("create", "namespace", "ml").returncode == 0
        cluster.add_object("resourceclaimtemplates", claim_template("one-gpu", [("gpu", "gpu.nvidia.com", {})], namespace="ml"))
        two = {"cpu": "2", "memory": "256Mi"}
        for name, extra, spec in (
                ("plugin-gpu", {"nvidia.com/gpu": "1"}, {"nodeName": NODE}),
                ("dra-gpu", {}, {"nodeSelector": {"kubernetes.io/hostname": NODE},
                                 "resourceClaims": [{"name": "devs", "resourceClaimTemplateName": "one-gpu"}]})):
            resources = {"requests": dict(two, **extra), "limits": dict(two, **extra)}
            if extra == {}:
                resources["claims"] = [{"name": "devs"}]
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml"},
                   "spec": dict(spec, containers=[{"name": "vllm", "image": "vllm/vllm-openai:v0.12.0", "resources": resources,
                                                   "command": ["sleep", "60"]}])}
            out = cluster.kubectl("create", "--validate=false", "-f", "-", stdin=json.dumps(pod))
            assert out.returncode == 0, out.stderr
        assert wait_for(lambda: all((node.pod(n, "ml") or {}).get("started") for n in ("plugin-gpu", "dra-gpu"))), (
            cluster.kubectl("get", "pods", "-A", "-o", "json").stdout[-3000:], node.journal()[-1000:])
        report = tmp_path / "report"
        out, text = run(cluster, tmp_path, "check.yml", {NODE: node_vars(root, rke2_numa_kubelet_dir=node.kubelet_dir)},
                        "-e", "rke2_numa_report_dir=%s" % report)
        assert out.returncode == 0, text[-3000:]
        pods = json.loads((report / (NODE + ".json")).read_text())["pods"]
        assert pods["dra"]["gpu_path"] == "both"
        assert len(pods["dra_unaligned"]) == 1 and pods["dra_unaligned"][0].startswith(
            "ml/dra-gpu holds gpu.nvidia.com gpu-%d from ResourceClaim ml/dra-gpu-devs-" % gpus[1]["minor"]), pods["dra_unaligned"]
        assert " on NUMA node 1 while the kubelet pins its CPUs" in pods["dra_unaligned"][0]
        assert "are on NUMA node 0 - not its GPU's" in pods["dra_unaligned"][0]
        assert not [t for t in pods["topology_errors"] + pods["unpinned"] if "plugin-gpu" in json.dumps(t)]
