# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A pod with ResourceClaims through both stand-ins, end to end, with the real kubectl: the API stand-in's
resourceclaim controller makes its claim from the template, its scheduler filters the nodes and allocates the claim,
binds the pod; the rke2 stand-in's kubelet admits it, prepares the claim as the DRA drivers do (gpu.nvidia.com's CDI
devices, dra.cpu's cpuset) and runs it.

The machine: 2 NUMA nodes of 4 cores x 2 threads, one NVIDIA GPU on each, served by the DRA driver
(RKE2_STANDIN_DRA_GPUS=all)."""

from __future__ import annotations

import json
import re
import time

import pytest

from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import (
    NUMA_NODE, Cluster, StandinNode, claim_template, dra_objects, kubeapi, needs_kubectl, rke2, wait_for)

pytestmark = [needs_kubectl, pytest.mark.skipif(kubeapi.celpy is None, reason="cel-python (the stand-in's CEL)")]
SERVER = "v1.35.2+rke2r1"   # resource.k8s.io/v1 is served from 1.34
SCRIPT = ("echo cpus=$(cat /sys/fs/cgroup/cpuset.cpus.effective); echo status=$(grep Cpus_allowed_list /proc/self/status | cut -f2); "
          "for f in /dev/nvidia*; do echo dev=${f##*/}; done; env | grep -E '^(NVIDIA_VISIBLE_DEVICES|DRA_CPUSET_)' | sort; "
          "echo done; exec sleep 60")   # bash: dash drops DRA_CPUSET_<claim UID> from the environment (a name with "-")


@pytest.fixture
def machine(tmp_path):
    return gen_sysfs.write_tree(gen_sysfs.make_spec(sockets=2, cores_per_socket=4, threads=2, gpus_per_node=1), str(tmp_path / "machine"))


@pytest.fixture
def cluster(tmp_path):
    (tmp_path / "api").mkdir()
    server = Cluster(tmp_path / "api", version=SERVER)
    nodes = []
    server.nodes = nodes
    yield server
    for node in nodes:
        node.stop()
    assert server.stop() == 0
    assert [c for c in server.calls() if c["code"] >= 500] == []


def start(cluster, machine, kubelet_args=()):
    node = StandinNode(cluster, machine, "n1", kubelet_args, RKE2_STANDIN_DRA_GPUS="all", RKE2_STANDIN_VERSION=SERVER)
    cluster.nodes.append(node)
    node.start()
    for plural, obj in dra_objects(machine, "n1"):
        cluster.add_object(plural, obj)
    return node


def hold(cluster, name, gpu):
    """A claim another workload holds: the GPU allocated on n1 (no owner, so nothing reclaims it)."""
    cluster.add_object("resourceclaims", {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default"},
                                          "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
                                          "status": {"allocation": kubeapi.allocation_for("n1", [
                                              {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "n1", "device": "gpu-%d" % gpu["minor"]}])}})


def create(cluster, name, template, cpu=None, tolerations=None, node_name=None, selector="n1"):
    resources = {"claims": [{"name": "devs"}]}
    if cpu:
        resources.update(limits={"cpu": cpu, "memory": "256Mi"}, requests={"cpu": cpu, "memory": "256Mi"})
    spec = {"restartPolicy": "Never", "resourceClaims": [{"name": "devs", "resourceClaimTemplateName": template}],
            "containers": [{"name": "probe", "image": "registry.example/probe:1", "command": ["bash", "-c", SCRIPT], "resources": resources}]}
    if selector:
        spec["nodeSelector"] = {"kubernetes.io/hostname": selector}
    if tolerations:
        spec["tolerations"] = tolerations
    if node_name:
        spec["nodeName"] = node_name
    out = cluster.kubectl("create", "--validate=false", "-f", "-", "-o", "json",
                          stdin=json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def get(cluster, *argv):
    out = cluster.kubectl("get", *(list(argv) + ["-o", "json"]))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def probe_output(node, name):
    pod = wait_for(lambda: (node.pod(name) or {}).get("log", "").endswith("done\n") and node.pod(name))
    assert pod, "the probe did not run: %s\n%s" % (node.pod(name), node.journal()[-2000:])
    return dict(line.split("=", 1) for line in pod["log"].splitlines() if "=" in line), pod


def cpus_of(machine, nid):
    return rke2.read_topology(machine)["nodes"][nid]["cpus"]


def test_a_guaranteed_pod_s_cpus_land_on_one_numa_node_and_its_dra_gpu_on_the_other_under_single_numa_node(cluster, machine):
    topology = rke2.read_topology(machine)
    reserved = sorted(topology["siblings"][0])
    node = start(cluster, machine, ("cpu-manager-policy=static", "reserved-cpus=%s" % ",".join(map(str, reserved)),
                                    "topology-manager-policy=single-numa-node", "topology-manager-scope=pod"))
    gpu0, gpu1 = sorted(node.gpus(), key=lambda g: g["numa"])
    assert (gpu0["numa"], gpu1["numa"]) == (0, 1)
    assert "nvidia.com/gpu" not in node.node()["allocatable"]   # the DRA driver's GPUs are not the device plugin's
    hold(cluster, "other-workload", gpu0)
    cluster.add_object("resourceclaimtemplates", claim_template("one-gpu", [("gpu", "gpu.nvidia.com", {})]))
    created = create(cluster, "split", "one-gpu", cpu="2")
    assert created["spec"]["nodeName"] == "n1"
    claim_name = created["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    assert created["status"]["resourceClaimStatuses"] == [{"name": "devs", "resourceClaimName": claim_name}]
    assert re.fullmatch(r"split-devs-[bcdfghjklmnpqrstvwxz2456789]{5}", claim_name)
    claim = get(cluster, "resourceclaim", claim_name)
    assert claim["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "split", "uid": created["metadata"]["uid"],
                                                     "controller": True, "blockOwnerDeletion": True}]
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "devs"}
    assert claim["status"]["allocation"] == kubeapi.allocation_for("n1", [
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "n1", "device": "gpu-%d" % gpu1["minor"]}])
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "split", "uid": created["metadata"]["uid"]}]
    seen, record = probe_output(node, "split")
    cpus = rke2.parse_cpulist(seen["cpus"])
    assert len(cpus) == 2 and cpus <= cpus_of(machine, 0) and seen["status"] == seen["cpus"]   # the kubelet's choice: NUMA node 0
    assert seen["dev"] == "nvidia%d" % gpu1["minor"] and seen["NVIDIA_VISIBLE_DEVICES"] == "void"   # the claim's GPU: NUMA node 1
    assert record["assignment"]["numaNode"] == 0 and record["dra"]["gpus"] == [gpu1["address"]]
    pod = get(cluster, "pod", "split")
    assert pod["status"]["phase"] == "Running" and pod["status"]["qosClass"] == "Guaranteed"


def test_a_claim_with_a_gpu_and_dra_cpus_on_one_numa_node_gets_both_there_and_its_cpuset_from_the_cpu_driver(cluster, machine):
    node = start(cluster, machine)   # cpuManagerPolicy none: the CPU driver pins
    gpu0, gpu1 = sorted(node.gpus(), key=lambda g: g["numa"])
    hold(cluster, "other-workload", gpu0)
    cluster.add_object("resourceclaimtemplates", claim_template("gpu-and-cpus", [
        ("gpu", "gpu.nvidia.com", {}), ("cpu", "dra.cpu", {"capacity": {"requests": {"dra.cpu/cpu": "2"}}})], NUMA_NODE))
    created = create(cluster, "aligned", "gpu-and-cpus")
    claim = get(cluster, "resourceclaim", created["status"]["resourceClaimStatuses"][0]["resourceClaimName"])
    results = claim["status"]["allocation"]["devices"]["results"]
    assert [(r["request"], r["device"]) for r in results] == [("gpu", "gpu-%d" % gpu1["minor"]), ("cpu", "cpudevnuma001")]
    assert results[1]["consumedCapacity"] == {"dra.cpu/cpu": "2"} and re.fullmatch(r"[0-9a-f-]{36}", results[1]["shareID"])
    seen, record = probe_output(node, "aligned")
    cpus = rke2.parse_cpulist(seen["cpus"])
    assert len(cpus) == 2 and cpus <= cpus_of(machine, 1) and len({rke2.read_topology(machine)["siblings"][c] for c in cpus}) == 1   # one whole core
    assert seen["DRA_CPUSET_%s" % claim["metadata"]["uid"]] == seen["cpus"] == seen["status"]
    assert seen["dev"] == "nvidia%d" % gpu1["minor"]
    # a second pod's share of the same CPU device: other CPUs of NUMA node 1
    create(cluster, "aligned-2", "gpu-and-cpus")
    pending = get(cluster, "pod", "aligned-2")
    assert pending["status"]["phase"] == "Pending" and pending["status"]["conditions"][0]["message"] == (
        "0/1 nodes are available: 1 cannot allocate all claims. no new claims to deallocate, preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod.")   # no GPU left on node 1 (gpu-0 is held)


def test_with_the_static_cpu_manager_the_cpu_driver_fails_to_prepare_and_the_pod_does_not_start(cluster, machine):
    reserved = sorted(rke2.read_topology(machine)["siblings"][0])
    node = start(cluster, machine, ("cpu-manager-policy=static", "reserved-cpus=%s" % ",".join(map(str, reserved))))
    cluster.add_object("resourceclaimtemplates", claim_template("cpus", [("cpu", "dra.cpu", {"capacity": {"requests": {"dra.cpu/cpu": "2"}}})]))
    created = create(cluster, "pinned", "cpus", cpu="2")
    claim_name = created["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    record = wait_for(lambda: (node.pod("pinned") or {}).get("event") and node.pod("pinned"))
    assert record["event"] == ("Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources failed for ResourceClaim "
                               "%s: not enough cpus available to satisfy request" % claim_name)
    time.sleep(1)   # retried at each sync, never started
    pod = get(cluster, "pod", "pinned")
    assert pod["status"]["phase"] == "Pending" and not node.pod("pinned").get("started")
    assert pod["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}


def test_a_cordoned_node_takes_only_a_pod_that_tolerates_its_taint_and_the_other_is_scheduled_once_it_is_uncordoned(cluster, machine):
    node = start(cluster, machine)
    cluster.add_object("resourceclaimtemplates", claim_template("one-gpu", [("gpu", "gpu.nvidia.com", {})]))
    assert cluster.kubectl("cordon", "n1").returncode == 0
    create(cluster, "tolerant", "one-gpu", tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}])
    create(cluster, "plain", "one-gpu")
    assert get(cluster, "pod", "tolerant")["spec"]["nodeName"] == "n1"
    plain = get(cluster, "pod", "plain")
    assert "nodeName" not in plain["spec"] and plain["status"]["phase"] == "Pending"
    condition = plain["status"]["conditions"][0]
    assert (condition["type"], condition["status"], condition["reason"]) == ("PodScheduled", "False", "Unschedulable")
    assert condition["message"] == ("0/1 nodes are available: 1 node(s) were unschedulable. no new claims to deallocate, preemption: "
                                    "0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
    claim = get(cluster, "resourceclaim", plain["status"]["resourceClaimStatuses"][0]["resourceClaimName"])
    assert "allocation" not in claim.get("status", {})   # made by the controller, not allocated
    probe_output(node, "tolerant")
    assert cluster.kubectl("uncordon", "n1").returncode == 0
    assert wait_for(lambda: get(cluster, "pod", "plain")["spec"].get("nodeName") == "n1", 5)
    seen, dummy = probe_output(node, "plain")
    assert seen["dev"] != probe_output(node, "tolerant")[0]["dev"]   # the other GPU


def test_deleting_the_pod_deletes_its_generated_claim_and_frees_its_gpu(cluster, machine):
    node = start(cluster, machine)
    cluster.add_object("resourceclaimtemplates", claim_template("two-gpus", [("gpu", "gpu.nvidia.com", {"count": 2})]))
    first = create(cluster, "first", "two-gpus")
    probe_output(node, "first")
    second = create(cluster, "second", "two-gpus")
    assert get(cluster, "pod", "second")["status"]["phase"] == "Pending" and "nodeName" not in second["spec"]
    out = cluster.kubectl("delete", "pod", "first", "--wait=false")
    assert out.returncode == 0, out.stderr
    names = [c["metadata"]["name"] for c in get(cluster, "resourceclaims")["items"]]
    assert first["status"]["resourceClaimStatuses"][0]["resourceClaimName"] not in names
    assert names == [second["status"]["resourceClaimStatuses"][0]["resourceClaimName"]]
    assert wait_for(lambda: get(cluster, "pod", "second")["spec"].get("nodeName") == "n1", 5)
    seen, dummy = probe_output(node, "second")
    assert sorted(line for line in node.pod("second")["log"].splitlines() if line.startswith("dev=")) == sorted(
        "dev=nvidia%d" % g["minor"] for g in node.gpus())


def test_a_pod_with_a_node_name_bypasses_the_scheduler_and_its_unallocated_claim_keeps_it_from_starting(cluster, machine):
    node = start(cluster, machine)
    cluster.add_object("resourceclaimtemplates", claim_template("one-gpu", [("gpu", "gpu.nvidia.com", {})]))
    created = create(cluster, "direct", "one-gpu", node_name="n1")
    claim_name = created["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    record = wait_for(lambda: (node.pod("direct") or {}).get("event") and node.pod("direct"))
    assert record["event"] == ("Failed to prepare dynamic resources: prepare dynamic resources: pod direct(%s) is not allowed to use "
                               "resource claim %s(%s)" % (created["metadata"]["uid"], claim_name, get(cluster, "resourceclaim", claim_name)["metadata"]["uid"]))
    assert not record.get("started") and "allocation" not in get(cluster, "resourceclaim", claim_name).get("status", {})
