# -*- coding: utf-8 -*-
"""The API stand-in's DRA allocator (kubeapi.py dra_allocate) against the structured allocator's rules: class and
request CEL selectors, matchAttribute (a device without the attribute is never picked, the first device fixes the
value, backtracking to the first full solution), firstAvailable, devices in use, and the scheduler's message when no
device set fits."""

from __future__ import annotations

import pytest

from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBEAPI_PATH, _load

KUBEAPI = _load("kubeapi_standin_for_dra", KUBEAPI_PATH)
pytestmark = pytest.mark.skipif(KUBEAPI.celpy is None, reason="cel-python (the stand-in's CEL)")
NODE = "gpu-a"
NUMA = "resource.kubernetes.io/numaNode"
NVIDIA = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '%s'"   # the driver's chart's classes
CLASSES = {
    "gpu.nvidia.com": {"spec": {"selectors": [{"cel": {"expression": NVIDIA % "gpu"}}]}},
    "dra.cpu": {"spec": {"selectors": [{"cel": {"expression": 'device.driver == "dra.cpu"'}}]}},
    "mig.nvidia.com": {"spec": {"selectors": [{"cel": {"expression": NVIDIA % "mig"}}]}},
}


def gpus(numa=(0, 1), with_numa=True, node=NODE):
    return {"spec": {"driver": "gpu.nvidia.com", "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-%d" % i, "attributes": dict({"type": {"string": "gpu"}}, **({NUMA: {"int": n}} if with_numa else {}))}
                                 for i, n in enumerate(numa)]}}


def cpus(node=NODE):
    return {"spec": {"driver": "dra.cpu", "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "cpudevnuma%03d" % n, "attributes": {NUMA: {"int": n}, "dra.cpu/numaNodeID": {"int": n}},
                                  "capacity": {"dra.cpu/cpu": {"value": "32"}}} for n in (0, 1)]}}


def claim(requests, constraint=None):
    spec = {"devices": {"requests": [dict({"name": name}, exactly=dict({"deviceClassName": cls}, **extra)) for name, cls, extra in requests]}}
    if constraint:
        spec["devices"]["constraints"] = [{"matchAttribute": constraint}]
    return {"spec": spec}


GPU_AND_CPU = [("gpu", "gpu.nvidia.com", {}), ("cpu", "dra.cpu", {})]


def picked(results):
    return [(r["request"], r["device"]) for r in results]


def test_without_a_constraint_each_request_takes_the_first_free_device_and_may_split_numa_nodes():
    got = KUBEAPI.dra_allocate(claim(GPU_AND_CPU), CLASSES, [gpus(), cpus()], NODE, in_use=[("dra.cpu", NODE, "cpudevnuma000")])
    assert picked(got) == [("gpu", "gpu-0"), ("cpu", "cpudevnuma001")]   # GPU on NUMA node 0, CPUs on 1
    assert got[0] == {"request": "gpu", "driver": "gpu.nvidia.com", "pool": NODE, "device": "gpu-0"}


def test_a_numa_node_constraint_backtracks_to_the_first_set_on_one_node():
    got = KUBEAPI.dra_allocate(claim(GPU_AND_CPU, NUMA), CLASSES, [gpus(), cpus()], NODE, in_use=[("dra.cpu", NODE, "cpudevnuma000")])
    assert picked(got) == [("gpu", "gpu-1"), ("cpu", "cpudevnuma001")]


def test_a_device_without_the_constrained_attribute_is_never_picked():
    """NVIDIA's released driver publishes no numaNode for full GPUs: a claim constrained on it does not schedule."""
    with pytest.raises(KUBEAPI.AllocationError) as refused:
        KUBEAPI.dra_allocate(claim(GPU_AND_CPU, NUMA), CLASSES, [gpus(with_numa=False), cpus()], NODE)
    assert str(refused.value) == "cannot allocate all claims" and refused.value.unschedulable


def test_a_shape_that_fits_no_single_numa_node_is_unschedulable_and_fits_without_the_constraint():
    two = [("gpu", "gpu.nvidia.com", {"count": 2}), ("cpu", "dra.cpu", {})]
    with pytest.raises(KUBEAPI.AllocationError):
        KUBEAPI.dra_allocate(claim(two, NUMA), CLASSES, [gpus(), cpus()], NODE)
    assert picked(KUBEAPI.dra_allocate(claim(two, NUMA), CLASSES, [gpus(numa=(0, 0, 1)), cpus()], NODE)) == [
        ("gpu", "gpu-0"), ("gpu", "gpu-1"), ("cpu", "cpudevnuma000")]
    assert len(KUBEAPI.dra_allocate(claim(two), CLASSES, [gpus(), cpus()], NODE)) == 3


def test_devices_of_another_node_or_an_older_pool_generation_are_not_offered():
    old = gpus(numa=(0, 0))
    new = gpus(numa=(1,))
    new["spec"]["pool"]["generation"] = 2
    got = KUBEAPI.dra_allocate(claim([("gpu", "gpu.nvidia.com", {})]), CLASSES, [old, new, gpus(node="gpu-b")], NODE)
    assert picked(got) == [("gpu", "gpu-0")] and KUBEAPI.dra_devices([old, new], NODE)[0]["device"]["attributes"][NUMA] == {"int": 1}


def test_first_available_takes_the_first_subrequest_that_fits_and_all_takes_every_device():
    spec = {"spec": {"devices": {"requests": [{"name": "acc", "firstAvailable": [
        {"name": "mig", "deviceClassName": "mig.nvidia.com"}, {"name": "full", "deviceClassName": "gpu.nvidia.com"}]}]}}}
    assert picked(KUBEAPI.dra_allocate(spec, CLASSES, [gpus()], NODE)) == [("acc/full", "gpu-0")]
    every = claim([("gpu", "gpu.nvidia.com", {"allocationMode": "All"})])
    assert picked(KUBEAPI.dra_allocate(every, CLASSES, [gpus()], NODE)) == [("gpu", "gpu-0"), ("gpu", "gpu-1")]


def test_a_request_selector_narrows_the_class_and_a_failing_expression_is_an_error_not_unschedulable():
    numa1 = [("gpu", "gpu.nvidia.com", {"selectors": [{"cel": {"expression": "device.attributes['resource.kubernetes.io'].numaNode == 1"}}]})]
    assert picked(KUBEAPI.dra_allocate(claim(numa1), CLASSES, [gpus()], NODE)) == [("gpu", "gpu-1")]
    broken = [("gpu", "gpu.nvidia.com", {"selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].nosuch == 1"}}]})]
    with pytest.raises(KUBEAPI.AllocationError) as failed:
        KUBEAPI.dra_allocate(claim(broken), CLASSES, [gpus()], NODE)
    assert not failed.value.unschedulable and str(failed.value).startswith("CEL runtime error")
    with pytest.raises(KUBEAPI.AllocationError) as missing:
        KUBEAPI.dra_allocate(claim([("gpu", "no.such.class", {})]), CLASSES, [gpus()], NODE)
    assert not missing.value.unschedulable
