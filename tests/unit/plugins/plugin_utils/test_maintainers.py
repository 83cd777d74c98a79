# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Other maintainers at work: kured's two lock formats and TTL (kubereboot/kured pkg/daemonsetlock), autoscaler and
Karpenter taints, system-upgrade-controller pods."""
from __future__ import annotations

import json

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.maintainers import (
    find_kured,
    is_kured,
    kured_locks,
    maintainers_at_work,
)

NOW = 1796104800.0            # 2026-12-01T06:00:00Z
HOUR_NS = 3600 * 10 ** 9
KEY = "weave.works/kured-node-lock"


def ds(namespace, name, annotations=None, labels=None, image="registry/pause:3.9", command=(), args=()):
    return {"kind": "DaemonSet", "metadata": {"namespace": namespace, "name": name, "annotations": annotations or {},
                                              "labels": labels or {}},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": image, "command": list(command), "args": list(args)}]}}}}


def node(name="gpu-a", taints=(), annotations=None):
    return {"kind": "Node", "metadata": {"name": name, "annotations": annotations or {}}, "spec": {"taints": list(taints)}}


def single(node_id, created="2026-12-01T05:30:00.123456789Z", ttl=0):
    return json.dumps({"nodeID": node_id, "metadata": {"unschedulable": False}, "created": created, "TTL": ttl})


def multi(*locks):
    return json.dumps({"maxOwners": 2, "locks": [json.loads(single(*lock)) for lock in locks]})


def test_both_lock_formats_and_the_ttl():
    assert [lock["node"] for lock in kured_locks(single("gpu-b"), NOW)] == ["gpu-b"]
    assert kured_locks(single("gpu-b", ttl=HOUR_NS), NOW)[0]["ttl_seconds"] == 3600   # 30 min old, 1 h TTL: live
    assert kured_locks(single("gpu-b", created="2026-12-01T04:00:00Z", ttl=HOUR_NS), NOW) == []   # expired
    assert kured_locks(single("gpu-b", created="2026-11-01T04:00:00Z", ttl=0), NOW) != []         # TTL 0: never expires
    assert [lock["node"] for lock in kured_locks(multi(("gpu-b",), ("gpu-c", "2026-12-01T04:00:00Z", HOUR_NS)), NOW)] == ["gpu-b"]
    assert kured_locks(json.dumps({"maxOwners": 2, "locks": []}), NOW) == []
    assert kured_locks("not json", NOW)[0]["unreadable"] and kured_locks("[1]", NOW)[0]["unreadable"]


def test_kured_is_found_wherever_it_was_installed():
    chart = ds("kured", "kured-release", labels={"app.kubernetes.io/name": "kured"}, image="ghcr.io/kubereboot/kured:1.17.1",
               command=["/usr/bin/kured"], args=["--ds-name=kured-release", "--ds-namespace=kured", "--lock-annotation=example.com/lock"])
    by_image = ds("ops", "reboots", image="ghcr.io/kubereboot/kured@sha256:abc")
    other = ds("kube-system", "rke2-canal", labels={"k8s-app": "canal"})
    assert is_kured(chart) and is_kured(by_image) and not is_kured(other)
    found, error = find_kured([chart, by_image, other], "auto")
    assert error is None and [(i, k) for i, k, dummy in found] == [("kured/kured-release", "example.com/lock"), ("ops/reboots", KEY)]
    assert find_kured([other], "auto") == ([], None)
    assert find_kured([ds("kube-system", "kured")], "auto")[0][0][0] == "kube-system/kured", "kured's own defaults"
    assert find_kured([chart], "") == ([], None)


def test_a_named_kured_that_is_not_there_fails_closed():
    found, error = find_kured([ds("kube-system", "rke2-canal")], "kube-system/kured")
    assert found == [] and "rke2_numa_kured_daemonset kube-system/kured: no such DaemonSet" in error
    assert maintainers_at_work(node(), [], [], "kube-system/kured", [], NOW) == [error]


@pytest.mark.parametrize("lock, words", [
    (single("gpu-a"), "kured holds its reboot lock on it (kube-system/kured)"),
    (single("gpu-b"), "kured holds its reboot lock on gpu-b (kube-system/kured): one node out of service at a time"),
    (multi(("gpu-c",), ("gpu-b",)), "kured holds its reboot lock on gpu-c"),
    ("{", "kured's lock on kube-system/kured (weave.works/kured-node-lock) cannot be read; treated as held"),
])
def test_any_live_kured_lock_keeps_every_node_waiting(lock, words):
    reasons = maintainers_at_work(node(), [ds("kube-system", "kured", {KEY: lock})], [], "auto", [], NOW)
    assert reasons and reasons[0] == words or words in reasons[0], reasons


def test_an_expired_or_released_lock_lets_the_node_start():
    expired = single("gpu-b", created="2026-12-01T04:00:00Z", ttl=HOUR_NS)
    assert maintainers_at_work(node(), [ds("kube-system", "kured", {KEY: expired})], [], "auto", [], NOW) == []
    assert maintainers_at_work(node(), [ds("kube-system", "kured")], [], "auto", [], NOW) == []


def test_autoscaler_karpenter_upgrades_and_foreign_annotations():
    tainted = node(taints=[{"key": "ToBeDeletedByClusterAutoscaler", "value": "1796104000", "effect": "NoSchedule"},
                           {"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}, {"key": "nvidia.com/gpu", "effect": "NoSchedule"}])
    assert maintainers_at_work(tainted, [], [], "", [], NOW) == [
        "the cluster autoscaler is deleting it (taint ToBeDeletedByClusterAutoscaler)",
        "Karpenter is disrupting it (taint karpenter.sh/disrupted)"]
    assert maintainers_at_work(node(taints=[{"key": "karpenter.sh/disruption", "value": "disrupting"}]), [], [], "", [], NOW) == [
        "Karpenter is disrupting it (taint karpenter.sh/disruption)"]
    suc = [{"metadata": {"namespace": "cattle-system", "name": "apply-agent-plan-on-gpu-a-xyz"}, "status": {"phase": "Running"}},
           {"metadata": {"namespace": "cattle-system", "name": "apply-agent-plan-on-gpu-a-old"}, "status": {"phase": "Succeeded"}}]
    assert maintainers_at_work(node(), [], suc, "", [], NOW) == [
        "system-upgrade-controller is upgrading it (cattle-system/apply-agent-plan-on-gpu-a-xyz)"]
    annotated = node(annotations={"weave.works/kured-reboot-in-progress": "x"})
    assert maintainers_at_work(annotated, [], [], "", ["weave.works/kured-reboot-in-progress"], NOW) == [
        "the Node has weave.works/kured-reboot-in-progress"]
    assert maintainers_at_work(node(), [], [], "", ["weave.works/kured-reboot-in-progress"], NOW) == []
