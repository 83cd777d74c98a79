# -*- coding: utf-8 -*-
"""plugin_utils/dra_plan.py through the planner: the CPU allocator's rules (dra-driver-cpu refused beside the kubelet's
static CPU Manager or the static Memory Manager), the ResourceClaimTemplates per pod shape (one NUMA node each, the
same fit rule as the kubelet path), the default shapes, NICs, and dra.yaml's text."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import dra_plan
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import PlanError, make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures.gen_sysfs import make_spec, write_tree

DRA = dict(cpu_allocator="dra-driver-cpu", cpu_manager_policy="none", memory_manager_policy="None")


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory):
    """2 sockets x 8 cores x 2 threads, two GPUs per NUMA node, no NIC."""
    root = tmp_path_factory.mktemp("two-nodes")
    write_tree(make_spec(sockets=2, cores_per_socket=8, threads=2, gpus_per_node=2), str(root))
    return read_topology(str(root))


@pytest.fixture(scope="module")
def with_nics(tmp_path_factory):
    root = tmp_path_factory.mktemp("with-nics")
    write_tree(make_spec(sockets=2, cores_per_socket=8, threads=2, gpus_per_node=2, nics_per_node=1), str(root))
    return read_topology(str(root))


@pytest.mark.parametrize("given, broken", [
    ({}, ("rke2_numa_cpu_manager_policy=none, and it is static", "rke2_numa_memory_manager_policy=None, and it is Static")),
    ({"cpu_manager_policy": "none"}, ("rke2_numa_memory_manager_policy=None, and it is Static",)),
    ({"memory_manager_policy": "None"}, ("rke2_numa_cpu_manager_policy=none, and it is static",)),
])
def test_dra_driver_cpu_beside_a_kubelet_that_would_compete_for_the_cpus_or_pin_memory_elsewhere_is_refused(two_nodes, given, broken):
    with pytest.raises(PlanError) as refused:
        make_plan(two_nodes, cpu_allocator="dra-driver-cpu", **given)
    assert refused.value.rule == "cpu-allocator"
    for text in broken:
        assert text in str(refused.value)
    assert ("mutually incompatible" in str(refused.value)) == ("cpu_manager_policy=none" in " ".join(broken))


@pytest.mark.parametrize("given, node, refused", [
    ({}, {"version": "v1.33.5+rke2r1", "source": "its Node's status.nodeInfo.kubeletVersion"}, True),
    ({"kubernetes_version": "1.33"}, None, True),
    ({}, {"version": "v1.34.1+rke2r1", "source": "the RKE2 runtime"}, False),
    ({}, None, False),   # no kubelet known: the default minor says nothing of the node
])
def test_dra_driver_cpu_on_a_kubernetes_without_resource_k8s_io_v1_is_refused(two_nodes, given, node, refused):
    """The plan's claim templates and DeviceClasses are resource.k8s.io/v1, served from 1.34 on: a host known to run an
    older kubelet (read, or the minor given) gets no plan a 1.33 API server would refuse to store."""
    if not refused:
        assert make_plan(two_nodes, node_version=node, **dict(DRA, **given))["dra"]["templates"]
        return
    with pytest.raises(PlanError) as error:
        make_plan(two_nodes, node_version=node, **dict(DRA, **given))
    assert error.value.rule == "cpu-allocator"
    assert "needs Kubernetes 1.34 or later, and this host is planned for 1.33" in str(error.value)
    assert "resource.k8s.io/v1" in str(error.value)


def test_with_the_kubelet_allocating_cpus_no_template_is_planned_and_the_plan_says_why(two_nodes):
    plan = make_plan(two_nodes)
    assert plan["dra"]["cpu_allocator"] == "kubelet" and plan["dra"]["templates"] == []
    assert "the Topology Manager takes no DRA hints" in plan["dra"]["note"]


def test_without_pod_shapes_each_gpu_numa_node_gets_a_one_gpu_and_a_whole_node_template(two_nodes):
    plan = make_plan(two_nodes, **DRA)
    assert "cpu-manager-policy=none" in plan["kubelet_args"]
    # 16 CPUs a node, one reserved core (2 CPUs) each: 14 exclusive; one GPU's share is 7, 6 in whole cores
    got = [(t["name"], t["gpus"], t["cpu"], t["nodes"]) for t in plan["dra"]["templates"]]
    assert got == [("rke2-numa-1gpu-6cpu", 1, 6, [0, 1]), ("rke2-numa-2gpu-14cpu", 2, 14, [0, 1])]
    spec = plan["dra"]["templates"][0]["template"]["spec"]["spec"]["devices"]
    assert spec["constraints"] == [{"matchAttribute": "resource.kubernetes.io/numaNode"}]
    assert spec["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "rke2-numa-gpu", "count": 1}},
        {"name": "cpu", "exactly": {"deviceClassName": "rke2-numa-cpu", "capacity": {"requests": {"dra.cpu/cpu": "6"}}}}]


def test_a_pod_shape_that_fits_no_single_numa_node_gets_no_template_and_is_refused_under_strict_fit(two_nodes):
    shapes = [{"name": "vllm", "cpu": 4, "memory": "8Gi", "gpus": 1}, {"name": "big", "cpu": 8, "memory": "8Gi", "gpus": 3},
              {"name": "cpu-only", "cpu": 2, "memory": "1Gi"}]
    plan = make_plan(two_nodes, pod_shapes=shapes, **DRA)
    assert [t["name"] for t in plan["dra"]["templates"]] == ["rke2-numa-vllm"]   # no GPU: no claim needed
    assert any(w.startswith("pod shape big (cpu=8") and "fits on no NUMA node" in w for w in plan["warnings"])
    with pytest.raises(PlanError) as refused:
        make_plan(two_nodes, pod_shapes=shapes, strict_fit=True, **DRA)
    assert refused.value.rule == "pod-shapes" and "pod shape big" in str(refused.value)


def test_a_shape_the_kubelet_path_splits_over_nodes_must_fit_one_node_on_the_dra_path(two_nodes):
    """Without single-numa-node the kubelet path lets a shape span nodes; a claim's constraint never does."""
    shape = [{"name": "wide", "cpu": 20, "memory": "8Gi", "gpus": 1}]
    assert make_plan(two_nodes, pod_shapes=shape, topology_manager_policy="best-effort")["pod_shapes"][0]["fits"]
    plan = make_plan(two_nodes, pod_shapes=shape, topology_manager_policy="best-effort", **DRA)
    assert not plan["pod_shapes"][0]["fits"] and plan["dra"]["templates"] == []


def test_a_nic_request_joins_the_claim_where_every_gpu_numa_node_has_a_nic(with_nics):
    plan = make_plan(with_nics, **DRA)
    names = [t["name"] for t in plan["dra"]["templates"]]
    assert names == ["rke2-numa-1gpu-6cpu-nic", "rke2-numa-2gpu-14cpu-nic"]
    requests = plan["dra"]["templates"][0]["template"]["spec"]["spec"]["devices"]["requests"]
    assert requests[-1] == {"name": "nic", "exactly": {"deviceClassName": "rke2-numa-nic", "count": 1}}


def test_dra_yaml_holds_the_classes_and_each_template_once_and_says_what_each_host_takes(two_nodes, with_nics):
    plans = {"gpu-a": make_plan(two_nodes, **DRA), "gpu-b": make_plan(two_nodes, **DRA), "gpu-c": make_plan(two_nodes),
             "gpu-d": make_plan(with_nics, **DRA)}
    text = dra_plan.claim_templates_text(plans)
    docs = [d for d in yaml.safe_load_all(text) if d]
    assert [d["metadata"]["name"] for d in docs if d["kind"] == "DeviceClass"] == ["rke2-numa-gpu", "rke2-numa-cpu", "rke2-numa-nic"]
    assert [d["metadata"]["name"] for d in docs if d["kind"] == "ResourceClaimTemplate"] == [
        "rke2-numa-1gpu-6cpu", "rke2-numa-1gpu-6cpu-nic", "rke2-numa-2gpu-14cpu", "rke2-numa-2gpu-14cpu-nic"]
    assert all("namespace" not in d["metadata"] for d in docs)
    assert "#   gpu-a: dra-driver-cpu --reserved-cpus=%s; rke2-numa-1gpu-6cpu (NUMA node 0, 1)" % plans["gpu-a"]["reserved_cpus"] in text
    assert "#   gpu-c: no templates -\n#     the kubelet hands out exclusive CPUs" in text


def test_two_hosts_whose_shapes_share_a_name_and_differ_get_a_template_each(two_nodes):
    plans = {"gpu-a": make_plan(two_nodes, pod_shapes=[{"name": "vllm", "cpu": 4, "memory": "8Gi", "gpus": 1}], **DRA),
             "gpu-b": make_plan(two_nodes, pod_shapes=[{"name": "vllm", "cpu": 6, "memory": "8Gi", "gpus": 1}], **DRA)}
    got = dra_plan.fleet_templates(plans)
    assert len(got) == 2 and sorted(h for t, hosts in got for h in hosts) == ["gpu-a", "gpu-b"]
    assert all(t["metadata"]["name"].startswith("rke2-numa-vllm-") and len(t["metadata"]["name"]) == len("rke2-numa-vllm-") + 6
               for t, hosts in got)


def test_no_dra_plan_writes_no_documents():
    assert [d for d in yaml.safe_load_all(dra_plan.claim_templates_text({})) if d] == []


def test_the_check_names_a_node_where_dra_cpu_publishes_cpus_beside_the_kubelet_s_static_cpu_manager():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import compliance, dra
    devices = [dra.read_device("dra.cpu", "gpu-a", {"name": "cpudevnuma%03d" % n, "attributes": {"numaNodeID": {"int": n}}}) for n in (0, 1)]
    for policy, expected in (("static", True), ("none", False), (None, False)):
        state = {"kubelet_state": {"cpu_manager": {"policy": policy}} if policy else {}, "topology": {}}
        plan = None if policy else {"reset_inputs": {"cpu_manager_policy": "none"}}
        out = compliance.finish_dra({"dra_devices": [dict(d) for d in devices], "plugin_gpus": 0}, plan, state)
        found = [f for f in out["dra"]["findings"] if f.startswith("dra.cpu publishes 2 CPU device(s) on this node while its kubelet's "
                                                                   "CPU Manager is static, not none: dra-driver-cpu and the kubelet's")]
        assert bool(found) == expected, (policy, out["dra"]["findings"])


def _inventory(topology, path, served=None):
    """The check's DRA inventory of a node (dra.inventory) whose ResourceSlices publish ``served`` (sysfs addresses;
    every GPU when None) - ``path`` as the check derives it from those and the device plugin's count."""
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import dra
    gpus = [d for d in topology["pci_devices"] if d["kind"] == "gpu"]
    served = [g["address"] for g in gpus] if served is None else served
    devices = [dra.read_device("gpu.nvidia.com", "gpu-a", {"name": "gpu-%d" % i, "attributes": {
        "type": {"string": "gpu"}, "resource.kubernetes.io/pciBusID": {"string": g["address"]},
        "resource.kubernetes.io/numaNode": {"int": g["numa_node"]}}}) for i, g in enumerate(gpus) if g["address"] in served]
    found = dra.inventory(devices, topology["pci_devices"], plugin_gpus=0 if path == "dra" else len(gpus) - len(devices))
    assert found["gpu_path"] == path
    return found


def test_a_node_whose_gpus_are_dra_only_promises_no_kubelet_aligned_gpu_and_says_what_the_dra_path_guarantees(two_nodes):
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import numa_labels
    prefix = "rke2-numa.maitred.io/"
    for options, alignment in (({}, "none"), (DRA, "claim")):
        plan = make_plan(two_nodes, **options)
        plugin = numa_labels(plan)
        assert plugin[prefix + "max-pod-gpus"] == "2" and prefix + "dra-gpus" not in plugin   # device-plugin: as before
        assert numa_labels(plan, None) == plugin == numa_labels(plan, {"gpu_path": "device-plugin", "devices": []})
        only = numa_labels(plan, _inventory(two_nodes, "dra"))
        assert only[prefix + "max-pod-gpus"] == "0" and only[prefix + "numa0-gpus"] == only[prefix + "numa1-gpus"] == "0"
        assert only[prefix + "dra-gpus"] == "4" and only[prefix + "dra-alignment"] == alignment
        assert only[prefix + "max-pod-cpus"] == plugin[prefix + "max-pod-cpus"]


def test_a_node_with_both_paths_counts_only_its_device_plugin_gpus_per_numa_node(two_nodes):
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import numa_labels, owned_label
    prefix = "rke2-numa.maitred.io/"
    gpus = [d for d in two_nodes["pci_devices"] if d["kind"] == "gpu"]
    on_0 = [g["address"] for g in gpus if g["numa_node"] == 0]
    both = numa_labels(make_plan(two_nodes), _inventory(two_nodes, "both", served=on_0))
    assert (both[prefix + "numa0-gpus"], both[prefix + "numa1-gpus"], both[prefix + "max-pod-gpus"]) == ("0", "2", "2")
    assert both[prefix + "dra-gpus"] == "2" and both[prefix + "dra-alignment"] == "none"
    assert owned_label(prefix + "dra-gpus") and owned_label(prefix + "dra-alignment")
