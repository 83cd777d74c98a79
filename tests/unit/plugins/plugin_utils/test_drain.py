# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is the node drained? DaemonSet, mirror and ended pods may stay; anything else may not. What a failed drain did,
from kubectl's own output (captured from kubectl 1.33 against the API stand-in; the drain role's test runs it live)."""
from __future__ import annotations

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.drain import drain_failure, drain_failure_message, evicted_pods, pods_left


def pod(name, kind=None, node="gpu-a", phase="Running", mirror=False, namespace="ml"):
    meta = {"namespace": namespace, "name": name}
    if kind:
        meta["ownerReferences"] = [{"kind": "Node" if mirror else kind, "name": "x", "controller": True}]
    if mirror:
        meta["annotations"] = {"kubernetes.io/config.mirror": "abc"}
    return {"metadata": meta, "spec": {"nodeName": node}, "status": {"phase": phase}}


def test_only_daemonset_mirror_and_ended_pods_may_stay():
    pods = [pod("canal", "DaemonSet"), pod("kube-proxy", "Node", mirror=True), pod("job-done", "Job", phase="Succeeded"),
            pod("crashed", "Job", phase="Failed"), pod("vllm-0", "StatefulSet"), pod("debug"), pod("web-1", "ReplicaSet", node="gpu-b"),
            pod("starting", "ReplicaSet", phase="Pending")]
    assert pods_left(pods, "gpu-a") == ["ml/debug (no controller)", "ml/starting (ReplicaSet)", "ml/vllm-0 (StatefulSet)"]
    assert pods_left([], "gpu-a") == [] and pods_left(None, "gpu-a") == []


# kubectl drain node/gpu-a --ignore-daemonsets --delete-emptydir-data --timeout=7s: web-abc evicted at once, vllm-1
# refused once (429) then evicted, vllm-0 refused until the timeout, triton-x accepted but still terminating.
MIXED_OUT = """node/gpu-a cordoned
evicting pod ml/web-abc
evicting pod ml/vllm-0
evicting pod ml/triton-x
evicting pod ml/vllm-1
pod/web-abc evicted
evicting pod ml/vllm-0
evicting pod ml/vllm-1
pod/vllm-1 evicted
evicting pod ml/vllm-0
"""
MIXED_ERR = """Warning: ignoring DaemonSet-managed Pods: kube-system/rke2-canal-n1
error when evicting pods/"vllm-0" -n "ml" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.
error when evicting pods/"vllm-1" -n "ml" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.
error when evicting pods/"vllm-0" -n "ml" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.
There are pending pods in node "gpu-a" when an error occurred: [error when waiting for pod "triton-x" in namespace "ml" to terminate: \
context deadline exceeded, error when evicting pods/"vllm-0" -n "ml": global timeout reached: 7s]
pod/triton-x
pod/vllm-0
error: unable to drain node "gpu-a" due to error: [error when waiting for pod "triton-x" in namespace "ml" to terminate: context \
deadline exceeded, error when evicting pods/"vllm-0" -n "ml": global timeout reached: 7s], continuing command...
There are pending nodes to be drained:
 gpu-a
error when waiting for pod "triton-x" in namespace "ml" to terminate: context deadline exceeded
error when evicting pods/"vllm-0" -n "ml": global timeout reached: 7s
"""
BARE_ERR = """error: unable to drain node "gpu-a" due to error: cannot delete cannot delete Pods that declare no controller (use --force \
to override): default/debug, ml/scratch, continuing command...
There are pending nodes to be drained:
 gpu-a
cannot delete cannot delete Pods that declare no controller (use --force to override): default/debug, ml/scratch
"""
OLD_BARE_ERR = ("error: cannot delete Pods not managed by ReplicationController, ReplicaSet, Job, DaemonSet or StatefulSet "
                "(use --force to override): default/debug\n")


def test_a_failed_drain_names_its_blockers_and_what_it_evicted():
    found = drain_failure(MIXED_OUT, MIXED_ERR)
    assert found["evicted"] == ["ml/vllm-1", "ml/web-abc"], "vllm-1 was refused once (429), then evicted: not a blocker"
    assert found["terminating"] == [{"pod": "ml/triton-x", "why": "context deadline exceeded"}]
    why = "its PodDisruptionBudget refused the eviction until the drain timed out, global timeout reached: 7s"
    assert found["blocked"] == [{"pod": "ml/vllm-0", "why": why}]
    msg = drain_failure_message("gpu-a", MIXED_OUT, MIXED_ERR, False)
    assert msg == ("drain of gpu-a failed (uncordoned again): blocked by ml/vllm-0 - its PodDisruptionBudget refused the eviction "
                   "until the drain timed out, global timeout reached: 7s; still terminating when the drain timed out: ml/triton-x - "
                   "context deadline exceeded; evicted before it stopped: ml/vllm-1, ml/web-abc (rescheduled elsewhere); the node's "
                   "files and the kubelet were not touched")
    assert "nothing on the node was changed" not in msg


@pytest.mark.parametrize("err", [BARE_ERR, OLD_BARE_ERR], ids=["1.27+", "older"])
def test_pods_without_a_controller_are_named_and_force_is_never_implied(err):
    found = drain_failure("node/gpu-a cordoned\n", err)
    assert [b["pod"] for b in found["blocked"]] == (["default/debug", "ml/scratch"] if err is BARE_ERR else ["default/debug"])
    assert all(b["why"].startswith("no controller: kubectl drain removes such a pod only with --force, which this collection never "
                                   "passes") for b in found["blocked"])
    msg = drain_failure_message("gpu-a", "node/gpu-a cordoned\n", err, True)
    assert msg.startswith("drain of gpu-a failed, nothing on the node was changed (left cordoned: an admin had cordoned it): "
                          "blocked by default/debug - no controller")


def test_a_drain_that_failed_otherwise_says_kubectls_last_words():
    err = 'error: nodes "gpu-a" not found\n'
    assert drain_failure("", err) == {"evicted": [], "terminating": [], "blocked": [], "error": 'nodes "gpu-a" not found'}
    head = "drain of gpu-a failed, nothing on the node was changed (uncordoned again): "
    assert drain_failure_message("gpu-a", "", err, False) == head + 'nodes "gpu-a" not found'
    assert drain_failure_message("gpu-a", None, None, False, "timeout") == head + "timeout"


def test_evicted_pods_take_their_namespace_from_the_evicting_lines():
    out = "evicting pod ml/web\nevicting pod batch/web\npod/web evicted\npod/other evicted\n"
    assert evicted_pods(out) == ["?/other", "?/web"], "one of two namespaces: which one is not known"
    assert evicted_pods(out + "pod/web evicted\n") == ["?/other", "batch/web", "ml/web"]
    assert evicted_pods(out, ["ml/web"]) == ["?/other", "batch/web"]
    assert evicted_pods(None) == []


def test_a_blocker_that_shares_its_name_with_an_evicted_pod_is_still_the_blocker():
    out = "evicting pod ml/vllm-0\nevicting pod staging/vllm-0\npod/vllm-0 evicted\nevicting pod ml/vllm-0\n"
    err = ('error when evicting pods/"vllm-0" -n "ml" (will retry after 5s): Cannot evict pod as it would violate the pod\'s '
           'disruption budget.\nerror when evicting pods/"vllm-0" -n "ml": global timeout reached: 7s\n')
    found = drain_failure(out, err)
    assert found["evicted"] == ["staging/vllm-0"] and [b["pod"] for b in found["blocked"]] == ["ml/vllm-0"], found


def test_the_pods_a_drain_evicts_are_kubectls_and_the_clusters_own_are_named():
    """k8s.io/kubectl pkg/drain/filters.go: DaemonSet and mirror pods stay; every other pod goes, finished ones too."""
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.drain import pods_drain_evicts, protected_evictions

    def pod(ns, name, kind=None, phase="Running", mirror=False, node="gpu-a"):
        meta = {"namespace": ns, "name": name, "annotations": {"kubernetes.io/config.mirror": "x"} if mirror else {}}
        if kind:
            meta["ownerReferences"] = [{"kind": kind, "name": "o", "controller": True}]
        return {"metadata": meta, "spec": {"nodeName": node}, "status": {"phase": phase}}

    pods = [pod("kube-system", "canal-1", "DaemonSet"), pod("kube-system", "kube-proxy-gpu-a", mirror=True),
            pod("kube-system", "helm-install-x", "Job", "Succeeded"), pod("ml", "vllm-0", "StatefulSet"),
            pod("ml", "done", "Job", "Failed"), pod("kube-system", "coredns-1", "ReplicaSet", node="gpu-b")]
    assert pods_drain_evicts(pods, "gpu-a") == ["kube-system/helm-install-x", "ml/done", "ml/vllm-0"]
    assert protected_evictions(pods, "gpu-a", ("kube-system",)) == ["kube-system/helm-install-x (Succeeded)"]


def test_with_drain_namespaces_named_a_pod_elsewhere_is_one_the_roll_may_not_evict():
    """rke2_numa_drain_namespaces: the identity may evict only there; a drain that would evict elsewhere fails on a 403
    after the rest of the node moved - refused before the cordon instead, naming the pod."""
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.drain import protected_evictions
    pods = [{"metadata": {"namespace": ns, "name": name}, "spec": {"nodeName": "gpu-a"}, "status": {"phase": "Running"}}
            for ns, name in (("ml", "vllm-0"), ("monitoring", "exporter"), ("kube-system", "coredns"))]
    assert protected_evictions(pods, "gpu-a", ("kube-system",), ("ml",)) == ["kube-system/coredns (Running)", "monitoring/exporter (Running)"]
    assert protected_evictions(pods, "gpu-a", ("kube-system",), ()) == ["kube-system/coredns (Running)"]
