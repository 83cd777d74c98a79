# -*- coding: utf-8 -*-
"""plugin_utils/dra.py: ResourceSlices as the released drivers publish them (NVIDIA's dra-driver-nvidia-gpu v25.12.0,
dranet v1.4.0, dra-driver-cpu v0.2.0, and KEP-6072's standard numaNode), matched with a node's sysfs; the claims a pod
holds and whether they keep a GPU on one NUMA node with its CPUs and NICs."""

from __future__ import annotations

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import dra

NODE = "gpu-a"


def nvidia_slice(node=NODE, generation=1, gpus=((0, "0000:3b:00.0", "pci0000:3a", None), (1, "0000:af:00.0", "pci0000:ae", None))):
    """gpu.nvidia.com as v25.12.0 publishes full GPUs (bare names in the driver's domain); a numa value adds the
    unreleased resource.kubernetes.io/numaNode."""
    devices = []
    for minor, bus, root, numa in gpus:
        attributes = {"type": {"string": "gpu"}, "uuid": {"string": "GPU-%04d" % minor}, "productName": {"string": "NVIDIA H100 80GB HBM3"},
                      "resource.kubernetes.io/pciBusID": {"string": bus}, "resource.kubernetes.io/pcieRoot": {"string": root}}
        if numa is not None:
            attributes["resource.kubernetes.io/numaNode"] = {"int": numa}
        devices.append({"name": "gpu-%d" % minor, "attributes": attributes, "capacity": {"memory": {"value": "80Gi"}}})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "%s-gpu.nvidia.com-x" % node},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": node, "pool": {"name": node, "generation": generation, "resourceSliceCount": 1},
                     "devices": devices}}


def dranet_slice(node=NODE):
    return {"kind": "ResourceSlice", "spec": {"driver": "dra.net", "nodeName": node, "pool": {"name": node, "generation": 3, "resourceSliceCount": 1},
                                              "devices": [{"name": "pci-0000-3c-00-0", "attributes": {
                                                  "dra.net/numaNode": {"int": 0}, "dra.net/pciAddress": {"string": "0000:3c:00.0"},
                                                  "dra.net/rdma": {"bool": True}, "resource.kubernetes.io/pcieRoot": {"string": "pci0000:3a"}}}]}}


def cpu_slice(node=NODE):
    """dra.cpu v0.2.0 grouped mode: one device per NUMA node."""
    return {"kind": "ResourceSlice", "spec": {"driver": "dra.cpu", "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                                              "devices": [{"name": "cpudevnuma%03d" % n, "attributes": {
                                                  "dra.cpu/numaNodeID": {"int": n}, "dra.cpu/socketID": {"int": n}, "dra.net/numaNode": {"int": n},
                                                  "dra.cpu/numCPUs": {"int": 32}}, "capacity": {"dra.cpu/cpu": {"value": "32"}},
                                                  "allowMultipleAllocations": True} for n in (0, 1)]}}


PCI = [{"address": "0000:3b:00.0", "kind": "gpu", "numa_node": 0, "uuid": "GPU-0000", "minor": 0},
       {"address": "0000:af:00.0", "kind": "gpu", "numa_node": 1, "uuid": "GPU-0001", "minor": 1},
       {"address": "0000:3c:00.0", "kind": "nic", "numa_node": 0, "uuid": None, "minor": None}]


def test_a_device_attribute_is_its_one_value_and_a_bare_name_is_in_the_driver_s_domain():
    attributes = dra.device_attributes("gpu.nvidia.com", nvidia_slice()["spec"]["devices"][0])
    assert attributes["gpu.nvidia.com/type"] == "gpu" and attributes["gpu.nvidia.com/uuid"] == "GPU-0000"
    assert attributes[dra.PCI_BUS_ID] == "0000:3b:00.0" and attributes[dra.PCIE_ROOT] == "pci0000:3a"
    assert dra.attribute_value({"ints": [1, 0]}) == [1, 0] and dra.attribute_value({}) is None and dra.attribute_value("x") is None
    # v1beta1's basic wrapper
    assert dra.device_attributes("dra.net", {"name": "n", "basic": {"attributes": {"numaNode": {"int": 1}}}}) == {"dra.net/numaNode": 1}


def test_each_driver_s_devices_are_read_with_their_kind_numa_node_and_pci_address():
    devices = dra.node_devices([nvidia_slice(), dranet_slice(), cpu_slice(), nvidia_slice(node="other")], NODE)
    by = dict((d["device"], d) for d in devices)
    assert sorted(by) == ["cpudevnuma000", "cpudevnuma001", "gpu-0", "gpu-1", "pci-0000-3c-00-0"]
    assert by["gpu-0"]["kind"] == "gpu" and by["gpu-0"]["numa_node"] is None and by["gpu-0"]["pci_address"] == "0000:3b:00.0"
    assert by["pci-0000-3c-00-0"]["kind"] == "nic" and by["pci-0000-3c-00-0"]["numa_node"] == 0
    assert by["pci-0000-3c-00-0"]["numa_attribute"] == "dra.net/numaNode"
    assert by["cpudevnuma001"]["kind"] == "cpu" and by["cpudevnuma001"]["numa_node"] == 1
    assert by["cpudevnuma001"]["numa_attribute"] == "dra.cpu/numaNodeID"


def test_the_standard_numa_node_comes_first_and_its_list_form_names_the_device_s_own_node_first():
    s = nvidia_slice(gpus=((0, "0000:3b:00.0", "pci0000:3a", 0),))
    s["spec"]["devices"][0]["attributes"]["gpu.nvidia.com/numa"] = {"int": 7}
    device = dra.node_devices([s], NODE)[0]
    assert device["numa_node"] == 0 and device["numa_attribute"] == dra.NUMA_NODE
    s["spec"]["devices"][0]["attributes"][dra.NUMA_NODE] = {"ints": [1, 0]}
    assert dra.node_devices([s], NODE)[0]["numa_node"] == 1


def test_only_each_pool_s_newest_generation_counts():
    old = nvidia_slice(generation=1)
    new = nvidia_slice(generation=2, gpus=((0, "0000:3b:00.0", "pci0000:3a", None),))
    assert [d["device"] for d in dra.node_devices([old, new], NODE)] == ["gpu-0"]


def test_an_unknown_driver_or_a_device_type_the_collection_does_not_count_is_no_gpu():
    s = nvidia_slice()
    s["spec"]["devices"][1]["attributes"]["type"] = {"string": "imex-channel"}
    other = {"spec": {"driver": "fpga.example.com", "nodeName": NODE, "pool": {"name": NODE}, "devices": [{"name": "f0"}]}}
    kinds = [(d["device"], d["kind"]) for d in dra.node_devices([s, other], NODE)]
    assert kinds == [("gpu-0", "gpu"), ("gpu-1", None), ("f0", None)]


@pytest.mark.parametrize("device, address", [
    ({"driver": "gpu.nvidia.com", "device": "gpu-9", "pci_address": "0000:af:00.0", "uuid": None}, "0000:af:00.0"),
    ({"driver": "gpu.nvidia.com", "device": "gpu-9", "pci_address": None, "uuid": "GPU-0000"}, "0000:3b:00.0"),
    ({"driver": "gpu.nvidia.com", "device": "gpu-1", "pci_address": None, "uuid": None}, "0000:af:00.0"),
    ({"driver": "dra.net", "device": "gpu-1", "pci_address": None, "uuid": None}, None),
    ({"driver": "gpu.nvidia.com", "device": "gpu-5", "pci_address": "0000:01:00.0", "uuid": "GPU-9"}, None),
])
def test_a_dra_device_is_matched_with_sysfs_by_pci_address_then_uuid_then_nvidia_minor(device, address):
    found = dra.match_sysfs(device, PCI)
    assert (found or {}).get("address") == address


def test_the_inventory_counts_per_kind_and_finds_a_slice_that_disagrees_with_sysfs_and_a_gpu_no_claim_can_align():
    s = nvidia_slice(gpus=((0, "0000:3b:00.0", "pci0000:3a", 1), (1, "0000:af:00.0", "", None)))
    seen = dra.inventory(dra.node_devices([s, dranet_slice(), cpu_slice()], NODE), PCI, plugin_gpus=0)
    assert seen["counts"] == {"gpu": 2, "nic": 1, "cpu": 2} and seen["gpu_path"] == "dra"
    assert seen["findings"] == [
        "gpu.nvidia.com gpu-a/gpu-0: its ResourceSlice says NUMA node 1 (resource.kubernetes.io/numaNode), sysfs says 0 (0000:3b:00.0) "
        "- a claim constrained on it aligns with the wrong node",
        "gpu.nvidia.com gpu-a/gpu-1: publishes neither resource.kubernetes.io/numaNode nor resource.kubernetes.io/pcieRoot - no claim "
        "constraint can keep it on one NUMA node with CPUs or NICs"]
    by = dict((d["device"], d) for d in seen["devices"])
    assert by["gpu-1"]["sysfs_numa_node"] == 1 and by["pci-0000-3c-00-0"]["sysfs_address"] == "0000:3c:00.0"
    assert "attributes" not in by["gpu-0"]


@pytest.mark.parametrize("plugin, dra_gpus, path", [(8, 0, "device-plugin"), (0, 2, "dra"), (4, 4, "both"), (0, 0, "none")])
def test_the_gpu_path_is_how_the_node_serves_its_gpus(plugin, dra_gpus, path):
    assert dra.gpu_path(plugin, dra_gpus) == path


# ---------------------------------------------------------------- claims

def pod(name="vllm-0", claims=(("devs", None, "one-gpu"),), statuses=(("devs", "vllm-0-devs-x7k2p"),)):
    return {"metadata": {"namespace": "ml", "name": name, "uid": "uid-" + name},
            "spec": {"nodeName": NODE, "resourceClaims": [dict({"name": n}, **({"resourceClaimName": c} if c else {"resourceClaimTemplateName": t}))
                                                          for n, c, t in claims]},
            "status": {"resourceClaimStatuses": [{"name": n, "resourceClaimName": c} for n, c in statuses]}}


def test_a_pod_s_claims_are_named_directly_or_by_its_status_for_a_template():
    assert dra.pod_claims(pod()) == {"devs": "vllm-0-devs-x7k2p"}
    assert dra.pod_claims(pod(claims=(("shared", "team-gpus", None), ("devs", None, "t")), statuses=())) == {"shared": "team-gpus"}
    assert dra.pod_claims({"spec": {}}) == {}


def claim(results, constraints=(), name="vllm-0-devs-x7k2p"):
    return {"metadata": {"namespace": "ml", "name": name},
            "spec": {"devices": {"requests": [{"name": r, "exactly": {"deviceClassName": "x"}} for r in sorted(set(r.split("/")[0] for r, d in results))],
                                 "constraints": [dict({"matchAttribute": a}, **({"requests": list(q)} if q else {})) for a, q in constraints]}},
            "status": {"allocation": {"devices": {"results": [{"request": r, "driver": d.split("|")[0], "pool": NODE, "device": d.split("|")[1]}
                                                              for r, d in results]}}}}


def devices(*slices):
    return dict(((d["driver"], d["pool"], d["device"]), d) for d in dra.node_devices(list(slices), NODE))


ALL = devices(nvidia_slice(gpus=((0, "0000:3b:00.0", "pci0000:3a", 0), (1, "0000:af:00.0", "pci0000:ae", 1))), dranet_slice(), cpu_slice())


def test_a_claim_with_a_gpu_and_cpus_without_a_numa_constraint_is_a_finding_naming_where_they_landed():
    seen = dra.claim_alignment(claim([("gpu", "gpu.nvidia.com|gpu-1"), ("cpu", "dra.cpu|cpudevnuma000")]), ALL)
    assert seen["aligned_by"] is None and seen["numa_nodes"] == [0, 1]
    assert seen["finding"] == (
        "ResourceClaim ml/vllm-0-devs-x7k2p asks for a GPU (gpu) with cpu (cpu) without a matchAttribute constraint on "
        "resource.kubernetes.io/numaNode or resource.kubernetes.io/pcieRoot across them: the allocator may place them on different NUMA "
        "nodes; they landed on NUMA nodes 0 (cpudevnuma000), 1 (gpu-1)")


@pytest.mark.parametrize("constraints, aligned", [
    (((dra.NUMA_NODE, ()),), dra.NUMA_NODE),                       # no requests named: every request of the claim
    (((dra.NUMA_NODE, ("gpu", "nic")),), dra.NUMA_NODE),
    (((dra.PCIE_ROOT, ("gpu", "nic")),), dra.PCIE_ROOT),
    ((("dra.net/numaNode", ()),), "dra.net/numaNode"),
    (((dra.NUMA_NODE, ("gpu",)),), None),                          # covers the GPU only
    ((("gpu.nvidia.com/productName", ()),), None),                 # not an attribute that aligns
])
def test_a_constraint_aligns_when_its_attribute_keeps_one_numa_node_and_it_covers_the_gpu_and_the_others(constraints, aligned):
    seen = dra.claim_alignment(claim([("gpu", "gpu.nvidia.com|gpu-0"), ("nic", "dra.net|pci-0000-3c-00-0")], constraints), ALL)
    assert seen["aligned_by"] == aligned
    assert (seen["finding"] is None) == (aligned is not None)


def test_a_gpu_alone_or_a_first_available_subrequest_is_judged_by_its_request():
    alone = dra.claim_alignment(claim([("gpus", "gpu.nvidia.com|gpu-0"), ("gpus", "gpu.nvidia.com|gpu-1")]), ALL)
    assert alone["finding"] is None and [d["device"] for d in alone["gpus"]] == ["gpu-0", "gpu-1"]
    sub = dra.claim_alignment(claim([("gpu/h100", "gpu.nvidia.com|gpu-0"), ("cpu", "dra.cpu|cpudevnuma000")], ((dra.NUMA_NODE, ("gpu", "cpu")),)), ALL)
    assert sub["aligned_by"] == dra.NUMA_NODE and sub["numa_nodes"] == [0]


def test_an_unallocated_claim_holds_nothing():
    seen = dra.claim_alignment({"metadata": {"namespace": "ml", "name": "c"}, "spec": {}, "status": {}}, ALL)
    assert seen["gpus"] == [] and seen["finding"] is None


# ---------------------------------------------------------------- the audit (plugin_utils/prove.py dra_audit, finish_dra_audit)

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import prove  # noqa: E402

TOPOLOGY = {"numa_nodes": [{"id": 0, "cpus": "0-31"}, {"id": 1, "cpus": "32-63"}]}


def gpu_pod(name, claims, cpu="4", qos="Guaranteed", phase="Running"):
    p = pod(name, claims=claims, statuses=[(n, "%s-%s" % (name, n)) for n, c, t in claims if t])
    p["spec"]["containers"] = [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "8Gi"}, "limits": {"cpu": cpu, "memory": "8Gi"},
                                                           "claims": [{"name": n} for n, c, t in claims]}}]
    p["status"].update(qosClass=qos, phase=phase)
    return p


def reply(*items):
    return {"kind": "List", "items": list(items)}


def one_reply(*replies):
    """The replies as kubectl's one reply of several kinds holds them."""
    return {"kind": "List", "items": [i for r in replies for i in prove.kube_items(r)]}


def fleet_dra():
    s = [nvidia_slice(gpus=((0, "0000:3b:00.0", "pci0000:3a", 0), (1, "0000:af:00.0", "pci0000:ae", 1))), dranet_slice(), cpu_slice()]
    for x in s:
        x["kind"] = "ResourceSlice"
    claims = [dict(claim([("gpu", "gpu.nvidia.com|gpu-1")], name="pinned-devs"), kind="ResourceClaim"),
              dict(claim([("gpu", "gpu.nvidia.com|gpu-0"), ("cpu", "dra.cpu|cpudevnuma000")], ((dra.NUMA_NODE, ()),), name="aligned-devs"),
                   kind="ResourceClaim"),
              dict(claim([("gpu", "gpu.nvidia.com|gpu-1"), ("nic", "dra.net|pci-0000-3c-00-0")], name="loose-devs"), kind="ResourceClaim")]
    return reply(*(s + claims))


def test_the_dra_audit_lists_each_running_pod_holding_a_dra_gpu_and_each_claim_that_does_not_align_it():
    pods = reply(gpu_pod("pinned", [("devs", None, "one-gpu")]), gpu_pod("aligned", [("devs", None, "gpu-and-cpus")]),
                 gpu_pod("loose", [("devs", None, "gpu-and-nic")]), gpu_pod("burstable", [("devs", None, "t")], qos="Burstable"),
                 gpu_pod("done", [("devs", None, "t")], phase="Succeeded"), {"metadata": {"name": "plain", "namespace": "ml"}, "spec": {"nodeName": NODE}})
    audit = prove.dra_audit(one_reply(pods, fleet_dra()))[NODE]
    assert [(e["pod"], e["kubelet_cpus"], e["aligned_by"], [g["device"] for g in e["gpus"]]) for e in audit["dra_pods"]] == [
        ("ml/pinned", True, None, ["gpu-1"]), ("ml/aligned", True, dra.NUMA_NODE, ["gpu-0"]), ("ml/loose", True, None, ["gpu-1"])]
    assert audit["dra_claims"] == [
        "ResourceClaim ml/loose-devs asks for a GPU (gpu) with nic (nic) without a matchAttribute constraint on resource.kubernetes.io/numaNode "
        "or resource.kubernetes.io/pcieRoot across them: the allocator may place them on different NUMA nodes; they landed on NUMA nodes "
        "0 (pci-0000-3c-00-0), 1 (gpu-1)"]


def test_a_dra_gpu_pod_whose_cpus_the_kubelet_pins_is_flagged_naming_where_both_landed_and_an_aligned_claim_is_not():
    pods = reply(gpu_pod("pinned", [("devs", None, "one-gpu")]), gpu_pod("aligned", [("devs", None, "gpu-and-cpus")]))
    audit = prove.dra_audit(one_reply(pods, fleet_dra()))[NODE]["dra_pods"]
    uid = audit[0]["uid"]
    found = prove.finish_dra_audit(audit, True, {uid: {"c": "2-5"}}, TOPOLOGY)
    assert found == [
        "ml/pinned holds gpu.nvidia.com gpu-1 from ResourceClaim ml/pinned-devs on NUMA node 1 while the kubelet pins its CPUs: the "
        "Topology Manager does not align DRA devices, this pod's GPU may sit on another NUMA node than its CPUs; its CPUs 2-5 are on "
        "NUMA node 0 - not its GPU's (align them in one claim: a dra.cpu request with a matchAttribute resource.kubernetes.io/numaNode "
        "constraint)"]
    by_chance = prove.finish_dra_audit(audit, True, {uid: {"c": "40-43"}}, TOPOLOGY)
    assert "its CPUs 40-43 are on NUMA node 1 - its GPU's now, by chance" in by_chance[0]
    unknown = prove.finish_dra_audit(audit, True, {}, TOPOLOGY)
    assert len(unknown) == 1 and "are on NUMA node" not in unknown[0]


def test_without_a_static_cpu_manager_or_exclusive_cpus_the_kubelet_pins_nothing_to_misalign():
    pods = reply(gpu_pod("pinned", [("devs", None, "one-gpu")]), gpu_pod("shared", [("devs", "pinned-devs", None)], cpu="1500m"))
    audit = prove.dra_audit(one_reply(pods, fleet_dra()))[NODE]["dra_pods"]
    assert [e["kubelet_cpus"] for e in audit] == [True, False]
    assert prove.finish_dra_audit(audit, False, {}, TOPOLOGY) == []
    assert [f.split(" ")[0] for f in prove.finish_dra_audit(audit, True, {}, TOPOLOGY)] == ["ml/pinned"]


def test_a_pod_with_its_own_whole_cpu_budget_is_pinned_and_a_claim_not_found_holds_nothing():
    p = gpu_pod("podlevel", [("devs", None, "one-gpu")], cpu="500m")
    p["spec"]["resources"] = {"requests": {"cpu": "4", "memory": "8Gi"}, "limits": {"cpu": "4", "memory": "8Gi"}}
    assert prove._kubelet_pins_cpus(p)
    ghost = gpu_pod("ghost", [("devs", "no-such-claim", None)])
    audit = prove.dra_audit(one_reply(reply(ghost), fleet_dra()))
    assert audit[NODE]["dra_pods"] == [] and audit[NODE]["dra_claims"] == []


def test_the_dra_audit_carries_each_node_s_devices_and_its_device_plugin_gpus_from_the_same_reads():
    nodes_and_pods = reply({"kind": "Node", "metadata": {"name": NODE}, "status": {"allocatable": {"nvidia.com/gpu": "4"}}},
                           {"kind": "Node", "metadata": {"name": "cpu-only"}, "status": {"allocatable": {}}})
    audit = prove.dra_audit(one_reply(nodes_and_pods, fleet_dra()))
    assert sorted(audit) == ["cpu-only", NODE]
    assert audit[NODE]["plugin_gpus"] == 4 and audit["cpu-only"]["plugin_gpus"] == 0 and audit["cpu-only"]["dra_devices"] == []
    assert [d["device"] for d in audit[NODE]["dra_devices"]] == ["gpu-0", "gpu-1", "pci-0000-3c-00-0", "cpudevnuma000", "cpudevnuma001"]
    assert all("attributes" not in d for d in audit[NODE]["dra_devices"])


def test_the_fleet_s_gpu_workers_are_counted_from_the_check_s_one_read():
    """A slice of a sliced AWX job holds only its own hosts; the cluster's Nodes say how big the fleet is: each worker
    offering a GPU - by the device plugin or by DRA - and neither a server nor a worker without a GPU."""
    from ansible_collections.maitred.rke2_numa.plugins.filter.prove import rke2_numa_gpu_worker_nodes

    def node(name, gpus=None, **labels):
        return {"kind": "Node", "metadata": {"name": name, "labels": labels},
                "status": {"allocatable": dict({"cpu": "64"}, **({"nvidia.com/gpu": gpus} if gpus is not None else {}))}}

    reply = {"kind": "List", "items": [
        node("gpu-b", "8"), node("gpu-a", "4"), node("dra-1"), node("cpu-only"), node("no-gpus-left", "0"),
        node("server-1", "2", **{"node-role.kubernetes.io/control-plane": "true"}),
        nvidia_slice("dra-1"), dranet_slice("cpu-only"), cpu_slice("cpu-only"),
        {"kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}, "spec": {"nodeName": "gpu-a"}}]}
    assert rke2_numa_gpu_worker_nodes(reply) == ["dra-1", "gpu-a", "gpu-b"]
    assert rke2_numa_gpu_worker_nodes(reply, "amd.com/gpu") == ["dra-1"]
    assert rke2_numa_gpu_worker_nodes(None) == []
