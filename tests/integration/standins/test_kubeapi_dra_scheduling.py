# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The API stand-in's DRA pieces without a server: consumable capacity in the allocator (KEP-5075: a device that
allows multiple allocations serves several claims while their consumedCapacity fits, the request's amount rounded up
to the requestPolicy, the default or the whole capacity when the request names none), the resourceclaim controller's
claim names, and the scheduler's node filters and FitError message."""

from __future__ import annotations

import pytest

from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBEAPI_PATH, _load

KUBEAPI = _load("kubeapi_standin_for_dra_scheduling", KUBEAPI_PATH)
pytestmark = pytest.mark.skipif(KUBEAPI.celpy is None, reason="cel-python (the stand-in's CEL)")
NODE = "gpu-a"
NUMA = "resource.kubernetes.io/numaNode"
CLASSES = {
    "gpu.nvidia.com": {"spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}},
    "dra.cpu": {"spec": {"selectors": [{"cel": {"expression": 'device.driver == "dra.cpu"'}}]}},
}


def cpus(capacity="8", policy=None, node=NODE):
    capacity_entry = dict({"value": capacity}, **({"requestPolicy": policy} if policy else {}))
    return {"spec": {"driver": "dra.cpu", "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "cpudevnuma%03d" % n, "allowMultipleAllocations": True, "attributes": {NUMA: {"int": n}},
                                  "capacity": {"dra.cpu/cpu": capacity_entry}} for n in (0, 1)]}}


def gpus(node=NODE):
    return {"spec": {"driver": "gpu.nvidia.com", "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-%d" % n, "attributes": {NUMA: {"int": n}}, "capacity": {"memory": {"value": "80Gi"}}}
                                 for n in (0, 1)]}}


def cpu_claim(amount=None, name="cpu", constraint=None, extra=()):
    exactly = {"deviceClassName": "dra.cpu"}
    if amount is not None:
        exactly["capacity"] = {"requests": {"dra.cpu/cpu": amount}}
    spec = {"devices": {"requests": [{"name": name, "exactly": exactly}] + list(extra)}}
    if constraint:
        spec["devices"]["constraints"] = [{"matchAttribute": constraint}]
    return {"spec": spec}


def shares(results):
    return [(r["device"], r.get("consumedCapacity")) for r in results]


def test_a_device_that_allows_multiple_allocations_serves_claims_while_their_consumed_capacity_fits():
    first = KUBEAPI.dra_allocate(cpu_claim("3"), CLASSES, [cpus()], NODE)
    assert shares(first) == [("cpudevnuma000", {"dra.cpu/cpu": "3"})] and len(first[0]["shareID"]) == 36
    whole, consumed = KUBEAPI.dra_in_use([{"status": {"allocation": KUBEAPI.allocation_for(NODE, first)}}])
    assert whole == [] and consumed == {("dra.cpu", NODE, "cpudevnuma000"): {"dra.cpu/cpu": 3}}
    second = KUBEAPI.dra_allocate(cpu_claim("5"), CLASSES, [cpus()], NODE, whole, consumed)   # 3 + 5 = 8: still fits
    assert shares(second) == [("cpudevnuma000", {"dra.cpu/cpu": "5"})] and second[0]["shareID"] != first[0]["shareID"]
    third = KUBEAPI.dra_allocate(cpu_claim("1"), CLASSES, [cpus()], NODE, whole, {("dra.cpu", NODE, "cpudevnuma000"): {"dra.cpu/cpu": 8}})
    assert shares(third) == [("cpudevnuma001", {"dra.cpu/cpu": "1"})]   # the full device is passed over
    with pytest.raises(KUBEAPI.AllocationError):
        KUBEAPI.dra_allocate(cpu_claim("9"), CLASSES, [cpus()], NODE)


def test_a_request_that_names_no_capacity_consumes_the_policy_default_else_the_whole_capacity():
    assert shares(KUBEAPI.dra_allocate(cpu_claim(), CLASSES, [cpus()], NODE)) == [("cpudevnuma000", {"dra.cpu/cpu": "8"})]
    assert shares(KUBEAPI.dra_allocate(cpu_claim(), CLASSES, [cpus(policy={"default": "1"})], NODE)) == [("cpudevnuma000", {"dra.cpu/cpu": "1"})]
    with pytest.raises(KUBEAPI.AllocationError):   # another claim took one CPU of each: a whole device is no longer there
        KUBEAPI.dra_allocate(cpu_claim(), CLASSES, [cpus()], NODE, consumed={
            ("dra.cpu", NODE, "cpudevnuma000"): {"dra.cpu/cpu": 1}, ("dra.cpu", NODE, "cpudevnuma001"): {"dra.cpu/cpu": 1}})


def test_the_requested_amount_is_rounded_up_to_the_request_policy():
    step = {"validRange": {"min": "2", "step": "2", "max": "6"}}
    assert shares(KUBEAPI.dra_allocate(cpu_claim("3"), CLASSES, [cpus(policy=step)], NODE)) == [("cpudevnuma000", {"dra.cpu/cpu": "4"})]
    assert shares(KUBEAPI.dra_allocate(cpu_claim("1"), CLASSES, [cpus(policy=step)], NODE)) == [("cpudevnuma000", {"dra.cpu/cpu": "2"})]
    with pytest.raises(KUBEAPI.AllocationError):
        KUBEAPI.dra_allocate(cpu_claim("7"), CLASSES, [cpus(policy=step)], NODE)
    values = {"validValues": ["2", "4"]}
    assert shares(KUBEAPI.dra_allocate(cpu_claim("3"), CLASSES, [cpus(policy=values)], NODE)) == [("cpudevnuma000", {"dra.cpu/cpu": "4"})]


def test_a_capacity_the_device_lacks_or_a_device_allocated_whole_that_is_too_small_is_not_picked():
    with pytest.raises(KUBEAPI.AllocationError):
        KUBEAPI.dra_allocate({"spec": {"devices": {"requests": [{"name": "cpu", "exactly": {
            "deviceClassName": "dra.cpu", "capacity": {"requests": {"dra.cpu/memory": "1Gi"}}}}]}}}, CLASSES, [cpus()], NODE)
    big = {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "capacity": {"requests": {"memory": "90Gi"}}}}
    with pytest.raises(KUBEAPI.AllocationError):
        KUBEAPI.dra_allocate({"spec": {"devices": {"requests": [big]}}}, CLASSES, [gpus()], NODE)
    fits = dict(big, exactly=dict(big["exactly"], capacity={"requests": {"memory": "40Gi"}}))
    got = KUBEAPI.dra_allocate({"spec": {"devices": {"requests": [fits]}}}, CLASSES, [gpus()], NODE)
    assert shares(got) == [("gpu-0", None)] and "shareID" not in got[0]   # a GPU is allocated whole, no share


def test_two_requests_of_one_claim_share_a_device_and_a_numa_constraint_moves_both():
    gpu = {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}
    claim = cpu_claim("6", "a", NUMA, [gpu, {"name": "b", "exactly": {"deviceClassName": "dra.cpu", "capacity": {"requests": {"dra.cpu/cpu": "2"}}}}])
    got = KUBEAPI.dra_allocate(claim, CLASSES, [cpus(), gpus()], NODE, in_use=[("gpu.nvidia.com", NODE, "gpu-0")])
    assert [(r["request"], r["device"]) for r in got] == [("a", "cpudevnuma001"), ("gpu", "gpu-1"), ("b", "cpudevnuma001")]
    claim = cpu_claim("6", "a", None, [{"name": "b", "exactly": {"deviceClassName": "dra.cpu", "capacity": {"requests": {"dra.cpu/cpu": "3"}}}}])
    assert shares(KUBEAPI.dra_allocate(claim, CLASSES, [cpus()], NODE)) == [("cpudevnuma000", {"dra.cpu/cpu": "6"}), ("cpudevnuma001", {"dra.cpu/cpu": "3"})]


def test_the_generated_claim_name_cuts_the_pod_and_entry_names_in_proportion():
    assert KUBEAPI.claim_generate_name("vllm", "devs") == "vllm-devs-"
    pod, entry = "p" * 50, "e" * 20
    base = KUBEAPI.claim_generate_name(pod, entry)
    assert base == "p" * (50 * 57 // 72) + "-" + "e" * (20 * 57 // 72) and len(base) == 55
    name = KUBEAPI.generated_name(base)
    assert name.startswith(base) and len(name) == 60 and set(name[-5:]) <= set(KUBEAPI.NAME_CHARS)


def node(name, unschedulable=False, taints=(), labels=None):
    record = {"name": name, "ready": True, "unschedulable": unschedulable, "taints": list(taints), "labels": labels or {"kubernetes.io/hostname": name}}
    return KUBEAPI.node_object(record)


def pod(**spec):
    return {"namespace": "ml", "name": "p", "uid": "u1", "resourceClaimStatuses": [{"name": "devs", "resourceClaimName": "p-devs-abcde"}],
            "spec": dict({"resourceClaims": [{"name": "devs", "resourceClaimTemplateName": "t"}]}, **spec)}


CLAIM = {"metadata": {"namespace": "ml", "name": "p-devs-abcde", "uid": "c1",
                      "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u1", "controller": True}]},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}


def test_the_scheduler_filters_nodes_in_plugin_order_and_words_its_fit_error_as_kube_scheduler():
    nodes = [node("a", unschedulable=True), node("b", taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]),
             node("c", labels={"kubernetes.io/hostname": "c", "zone": "z2"}), node(NODE)]
    both = [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": NODE, "device": "gpu-%d" % n} for n in (0, 1)]
    busy = dict(CLAIM, metadata=dict(CLAIM["metadata"], name="held", uid="c2", ownerReferences=[]),
                status={"allocation": KUBEAPI.allocation_for(NODE, both)})
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["z2"]}]}]}}}
    with pytest.raises(KUBEAPI.Unschedulable) as refused:
        KUBEAPI.dra_schedule(pod(affinity=affinity), nodes, [CLAIM, busy], CLASSES, [gpus()])
    assert str(refused.value) == (
        "0/4 nodes are available: 1 cannot allocate all claims, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated "
        "taint(s), 1 node(s) were unschedulable. no new claims to deallocate, preemption: 0/4 nodes are available: 1 No preemption victims "
        "found for incoming pod, 3 Preemption is not helpful for scheduling.")
    everything = [{"operator": "Exists"}]   # an Exists toleration without a key tolerates every taint, the cordon's too
    assert KUBEAPI.dra_schedule(pod(tolerations=everything), nodes, [CLAIM], CLASSES, [gpus(node="a")])[0] == "a"
    by_field = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE]}]}]}}}
    name, results = KUBEAPI.dra_schedule(pod(affinity=by_field, tolerations=everything), nodes, [CLAIM], CLASSES, [gpus()])
    assert name == NODE and [r["device"] for r in results["p-devs-abcde"]] == ["gpu-0"]


def test_a_claim_not_made_yet_or_made_for_another_pod_fails_the_prefilter_for_every_node():
    waiting = dict(pod(), resourceClaimStatuses=[])
    with pytest.raises(KUBEAPI.Unschedulable) as refused:
        KUBEAPI.dra_schedule(waiting, [node(NODE), node("b")], [], CLASSES, [gpus()])
    assert str(refused.value) == ('0/2 nodes are available: waiting for dynamic resource controller to create the resourceclaim "p-devs". '
                                  "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    stranger = dict(CLAIM, metadata=dict(CLAIM["metadata"], ownerReferences=[dict(CLAIM["metadata"]["ownerReferences"][0], uid="u9")]))
    with pytest.raises(KUBEAPI.Unschedulable):
        KUBEAPI.dra_schedule(pod(), [node(NODE)], [stranger], CLASSES, [gpus()])
    allocated = dict(CLAIM, status={"allocation": KUBEAPI.allocation_for("b", [])})
    with pytest.raises(KUBEAPI.Unschedulable) as elsewhere:
        KUBEAPI.dra_schedule(pod(), [node(NODE)], [allocated], CLASSES, [gpus()])
    assert "1 resourceclaim not available on the node" in str(elsewhere.value)
