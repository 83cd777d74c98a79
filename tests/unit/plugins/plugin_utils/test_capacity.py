# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Capacity-aware windows: the GPU pods a drain evicts must fit on the rest of the fleet."""
from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.capacity import capacity_check, free_capacity, is_idle

GPU = "nvidia.com/gpu"


def node(name, gpus=8, cpus="64", ready=True, unschedulable=False):
    return {"metadata": {"name": name}, "spec": {"unschedulable": unschedulable},
            "status": {"allocatable": {GPU: str(gpus), "cpu": cpus},
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def pod(name, node_name, gpus=0, cpu="1", kind="StatefulSet", qos="Guaranteed", phase="Running", limits_only=False):
    res = {"limits": {GPU: str(gpus), "cpu": cpu}} if limits_only else {"requests": {GPU: str(gpus), "cpu": cpu}, "limits": {GPU: str(gpus)}}
    return {"metadata": {"namespace": "ml", "name": name, "ownerReferences": [{"kind": kind, "name": "x", "controller": True}]},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "resources": res}]},
            "status": {"phase": phase, "qosClass": qos}}


def test_pods_that_fit_elsewhere_let_the_drain_go():
    nodes = [node("a"), node("b"), node("c")]
    pods = [pod("vllm-0", "a", gpus=4, cpu="16"), pod("vllm-1", "b", gpus=4, cpu="16"), pod("dcgm", "a", gpus=0, kind="DaemonSet")]
    out = capacity_check("a", ["a"], nodes, pods, GPU)
    assert out == {"pending": [], "moving": 1, "free_gpus": 12, "ok": True, "msg": None}
    assert not is_idle("a", pods, GPU) and is_idle("c", pods, GPU)


def test_pods_that_fit_nowhere_are_named_and_the_node_is_not_drained():
    nodes = [node("a"), node("b"), node("c", unschedulable=True), node("d", ready=False)]
    pods = [pod("train-0", "a", gpus=8, cpu="32"), pod("vllm-0", "a", gpus=1), pod("big", "b", gpus=7)]
    out = capacity_check("a", ["a"], nodes, pods, GPU)
    assert not out["ok"] and out["pending"] == ["ml/train-0 (8 GPUs)"] and out["free_gpus"] == 1 and out["moving"] == 2
    assert out["msg"].startswith("draining a would leave 1 GPU pod Pending: ml/train-0 (8 GPUs) - the rest of the fleet has 1 nvidia.com/gpu free")


def test_the_rest_of_the_batch_is_out_too_and_exclusive_cpus_count():
    nodes = [node("a"), node("b"), node("c", cpus="8")]
    pods = [pod("vllm-0", "a", gpus=1, cpu="16")]
    assert not capacity_check("a", ["a", "b"], nodes, pods, GPU)["ok"], "b is drained in the same batch; c has 8 CPUs"
    assert capacity_check("a", ["a"], nodes, pods, GPU)["ok"]
    burstable = [pod("vllm-0", "a", gpus=1, cpu="16", qos="Burstable")]
    assert capacity_check("a", ["a", "b"], nodes, burstable, GPU)["ok"], "no exclusive CPUs for a Burstable pod"


def test_ended_pods_daemonsets_and_limits_only_pods():
    nodes = [node("a"), node("b", gpus=1)]
    pods = [pod("done", "a", gpus=8, phase="Succeeded"), pod("agent", "a", gpus=1, kind="DaemonSet"),
            pod("lim", "a", gpus=1, limits_only=True), pod("old", "b", gpus=1, phase="Failed")]
    out = capacity_check("a", ["a"], nodes, pods, GPU)
    assert out["moving"] == 1 and out["ok"] and out["free_gpus"] == 1
    assert free_capacity(nodes, pods, {"a"}, GPU) == {"b": [1, 64.0]}


def test_idle_nodes_roll_first():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.capacity import roll_order
    pods = [pod("vllm-0", "a", gpus=1), pod("cpu-only", "b", gpus=0)]
    candidates = [{"host": "a", "node": "a"}, {"host": "b", "node": "b"}, {"host": "c", "node": "c"}]
    assert roll_order(candidates, pods, GPU) == ["b", "c", "a"]
    assert roll_order(candidates, pods, GPU, "sorted") == ["a", "b", "c"]
    assert roll_order([], pods, GPU) == []
