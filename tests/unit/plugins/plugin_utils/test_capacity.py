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
    assert out == {"pending": [], "moving": 1, "free_gpus": 12, "ok": True, "certain": True, "msg": None}
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


def test_the_nodes_of_one_batch_do_not_count_the_same_free_gpus_twice():
    """serial 2: a and b each run a 2-GPU pod, c has 2 GPUs free. Each passed alone before (both counted c's GPUs);
    now a goes (its pod fits on c) and b, drained with a in the same batch, is refused."""
    nodes = [node("a", gpus=2), node("b", gpus=2), node("c", gpus=2)]
    pods = [pod("vllm-a", "a", gpus=2, cpu="4"), pod("vllm-b", "b", gpus=2, cpu="4")]
    assert capacity_check("a", ["a", "b"], nodes, pods, GPU)["ok"]
    out = capacity_check("b", ["a", "b"], nodes, pods, GPU)
    assert not out["ok"] and out["certain"] and out["pending"] == ["ml/vllm-b (2 GPUs)"]
    assert out["msg"].startswith("draining b with a drained in the same batch would leave 1 GPU pod Pending: ml/vllm-b (2 GPUs)")


def test_a_placement_first_fit_misses_is_found_and_a_refusal_is_certain_only_when_none_exists():
    """x (2 GPUs, 5 CPUs) and y (1 GPU, 50 CPUs) on n; other-a has 2 GPUs and 60 CPUs free, other-b 2 GPUs and 10 CPUs:
    first fit puts x on other-a and finds no room for y - but x on other-b, y on other-a fits."""
    nodes = [node("n"), node("other-a", gpus=2, cpus="60"), node("other-b", gpus=2, cpus="10")]
    pods = [pod("x", "n", gpus=2, cpu="5"), pod("y", "n", gpus=1, cpu="50")]
    out = capacity_check("n", ["n"], nodes, pods, GPU)
    assert out["ok"] and out["certain"], out
    pods.append(pod("z", "n", gpus=2, cpu="8"))   # 5 GPUs to place on 4: none exists
    out = capacity_check("n", ["n"], nodes, pods, GPU)
    assert not out["ok"] and out["certain"] and " would leave " in out["msg"]


def test_beyond_the_exact_search_a_refusal_says_may():
    nodes = [node("n", gpus=16)] + [node("o%02d" % i, gpus=1, cpus="4") for i in range(13)]
    pods = [pod("p%02d" % i, "n", gpus=1, cpu="2") for i in range(14)]   # 14 pods, 13 GPUs elsewhere
    out = capacity_check("n", ["n"], nodes, pods, GPU)
    assert not out["ok"] and not out["certain"] and out["pending"] == ["ml/p13 (1 GPU)"]
    assert "draining n may leave 1 GPU pod Pending" in out["msg"] and "too many pods to try them all" in out["msg"]
    assert capacity_check("n", ["n"], nodes, pods[:13], GPU)["ok"], "13 pods on 13 GPUs: first fit places them"


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
