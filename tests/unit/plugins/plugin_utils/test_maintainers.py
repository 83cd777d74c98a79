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
    kured_hold,
    kured_lock_claims,
    kured_lock_releases,
    kured_locks,
    kured_settings,
    maintainers_at_work,
)
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import kubeapi

NOW = 1796104800.0            # 2026-12-01T06:00:00Z
HOUR_NS = 3600 * 10 ** 9
KEY = "weave.works/kured-node-lock"


def ds(namespace, name, annotations=None, labels=None, image="registry/pause:3.9", command=(), args=(), env=None, env_from=None):
    container = {"name": "c", "image": image, "command": list(command), "args": list(args)}
    container.update({"env": env} if env is not None else {}, **({"envFrom": env_from} if env_from is not None else {}))
    return {"kind": "DaemonSet", "metadata": {"namespace": namespace, "name": name, "annotations": annotations or {},
                                              "labels": labels or {}},
            "spec": {"template": {"spec": {"containers": [container]}}}}


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
    assert error is None and [(i, k) for i, k, dummy, dummy in found] == [("kured/kured-release", "example.com/lock"), ("ops/reboots", KEY)]
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
    ('{"maxOwners": "two", "locks": []}', "cannot be read; treated as held"),
    ('{"maxOwners": Infinity, "locks": []}', "cannot be read; treated as held"),
    ('{"maxOwners": 1000000, "locks": []}', "cannot be read; treated as held"),
    ('{"nodeID": 7}', "cannot be read; treated as held"),
    ('{"maxOwners": [2], "locks": []}', "cannot be read; treated as held"),
    ('{"maxOwners": 2, "locks": 5}', "cannot be read; treated as held"),
    ('{"maxOwners": 1e6, "locks": []}', "cannot be read; treated as held"),
    ('{"maxOwners": 2, "locks": [{"nodeID": "x", "TTL": %d}]}' % 10 ** 300, "cannot be read; treated as held"),   # ttl/1e9 overflowed
    ('{"nodeID": "x", "TTL": -1}', "cannot be read; treated as held"),
    ('{"maxOwners": %s, "locks": []}' % ("9" * 5000), "cannot be read; treated as held"),
    ("{}", "cannot be read; treated as held"),
    (single("rke2-numa.maitred.io/roll"), "another roll (one before roll ids) holds kured's reboot lock"),
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


def test_a_roll_holds_kureds_lock_in_its_own_format_and_gives_only_its_own_back():
    """One owner (kured's default): our entry, never a Node's name, with a TTL; --concurrency=2: both slots filled
    (kured takes a free slot while fewer than maxOwners locks are held); kured's own live lock: left alone; another
    roll's entries: a held lock, never given back by this roll."""
    plain = ds("kube-system", "kured", image="ghcr.io/kubereboot/kured:1.17.1")
    plain["metadata"]["resourceVersion"] = "41"
    claim, = kured_lock_claims([plain], "auto", NOW, 5400, "roll-a")
    assert claim == {"daemonset": "kube-system/kured", "namespace": "kube-system", "name": "kured", "annotation": KEY,
                     "resource_version": "41", "value": claim["value"]}
    value = json.loads(claim["value"])
    assert value == {"nodeID": "rke2-numa.maitred.io/roll/roll-a", "metadata": {"unschedulable": False}, "created": "2026-12-01T06:00:00Z",
                     "TTL": 5400 * 10 ** 9}
    held = ds("kube-system", "kured", {KEY: claim["value"]}, image="ghcr.io/kubereboot/kured:1.17.1")
    assert maintainers_at_work(node(), [held], [], "auto", [], NOW + 60, "roll-a") == [], "our own hold does not stop our own roll"
    assert maintainers_at_work(node(), [held], [], "auto", [], NOW + 60, "roll-b") == [
        "another roll (roll-a) holds kured's reboot lock (kube-system/kured): one roll at a time"], "another roll's hold does"
    assert kured_locks(claim["value"], NOW + 60)[0]["node"] == "rke2-numa.maitred.io/roll/roll-a", "kured reads it as a live lock"
    assert kured_lock_releases([held], "auto", "roll-b") == [], "another roll's entry is never given back"
    assert kured_lock_claims([held], "auto", NOW, 600, "roll-b") == [], "nor overwritten"
    assert kured_lock_releases([held], "auto", "roll-a") == [dict(claim, resource_version="", value=None)], "removed, as kured's release does"

    chart = ds("kured", "kured-release", command=["/usr/bin/kured"], args=["--concurrency=2", "--lock-annotation=example.com/lock"])
    claim, = kured_lock_claims([chart], "auto", NOW, 600, "roll-a")
    assert claim["annotation"] == "example.com/lock"
    value = json.loads(claim["value"])
    assert value["maxOwners"] == 2 and [lock["nodeID"] for lock in value["locks"]] == ["rke2-numa.maitred.io/roll/roll-a/1",
                                                                                       "rke2-numa.maitred.io/roll/roll-a/2"]
    # kured wrote its multi-owner format with an expired lock: the slots are ours; given back, kured's entry stays
    expired = json.loads(multi(("gpu-b", "2026-12-01T00:00:00Z", HOUR_NS)))
    chart["metadata"]["annotations"] = {"example.com/lock": json.dumps(expired)}
    value = json.loads(kured_lock_claims([chart], "auto", NOW, 600, "roll-a")[0]["value"])
    assert len(value["locks"]) == 2 and all(lock["nodeID"].startswith("rke2-numa.maitred.io/roll/roll-a/") for lock in value["locks"])
    mixed = dict(expired, locks=expired["locks"] + value["locks"])
    chart["metadata"]["annotations"] = {"example.com/lock": json.dumps(mixed)}
    back = json.loads(kured_lock_releases([chart], "auto", "roll-a")[0]["value"])
    assert back == expired, "only our entries go"
    # two rolls' entries (a slot each): neither gives back the other's
    two = {"maxOwners": 2, "locks": [dict(value["locks"][0]), dict(value["locks"][1], nodeID="rke2-numa.maitred.io/roll/roll-b/2")]}
    chart["metadata"]["annotations"] = {"example.com/lock": json.dumps(two)}
    assert [lock["nodeID"] for lock in json.loads(kured_lock_releases([chart], "auto", "roll-a")[0]["value"])["locks"]] == [
        "rke2-numa.maitred.io/roll/roll-b/2"]
    assert [lock["nodeID"] for lock in json.loads(kured_lock_releases([chart], "auto", "roll-b")[0]["value"])["locks"]] == [
        "rke2-numa.maitred.io/roll/roll-a/1"]

    busy = ds("kube-system", "kured", {KEY: single("gpu-b")}, image="ghcr.io/kubereboot/kured:1.17.1")
    assert kured_lock_claims([busy], "auto", NOW, 600, "roll-a") == [], "kured holds it: never overwritten"
    assert kured_lock_releases([busy], "auto", "roll-a") == [], "not ours: kept"
    assert kured_lock_claims([busy], "", NOW, 600, "roll-a") == [] and kured_lock_claims([], "ops/kured", NOW, 600, "roll-a") == []


def test_a_lock_in_neither_format_is_never_claimed_nor_rewritten():
    """{"maxOwners":2,"locks":{...}} and {"nodeID":...,"locks":null} read as free before: the node was drained and, at
    release, the other node's entry destroyed."""
    for text in ('{"maxOwners":2,"locks":{"x":{"nodeID":"other-1","TTL":0}}}', '{"nodeID":"other-1","TTL":0,"locks":null}'):
        held = ds("kube-system", "kured", {KEY: text})
        assert kured_lock_claims([held], "auto", NOW, 600, "roll-a") == []
        assert kured_lock_releases([held], "auto", "roll-a") == []
        assert "cannot be read; treated as held" in maintainers_at_work(node(), [held], [], "auto", [], NOW, "roll-a")[0]
    released = ds("kube-system", "kured", {KEY: '{"maxOwners":2,"locks":null}'})   # kured's multi lock after its last release
    assert maintainers_at_work(node(), [released], [], "auto", [], NOW) == []
    assert json.loads(kured_lock_claims([released], "auto", NOW, 600, "roll-a")[0]["value"])["maxOwners"] == 2


@pytest.mark.parametrize("setting, allowed, held", [
    ("auto", True, True), ("auto", False, False), (True, False, True), ("true", False, True), ("yes", False, True),
    (False, True, False), ("false", True, False), ("no", True, False), ("0", True, False), ("maybe", True, False), (None, True, False),
])
def test_kured_hold_is_one_rule_for_access_and_the_roll(setting, allowed, held):
    assert kured_hold(setting, allowed) is held


# ---------------------------------------------------------------- kured as kured reads itself

def kured_acquires(value, concurrency, node_id="gpu-x", now=NOW):
    """kured's own decision, reproduced from its source in the API stand-in (tests/standins/kubeapi kured_acquires)."""
    return kubeapi.kured_acquires(value, concurrency, node_id, now)


@pytest.mark.parametrize("template, concurrency, key", [
    ({"args": ["--concurrency=2"]}, 2, KEY),
    ({"env": [{"name": "KURED_CONCURRENCY", "value": "2"}]}, 2, KEY),   # env after flags: kured's LoadFromEnv
    ({"args": ["--concurrency=3"], "env": [{"name": "KURED_CONCURRENCY", "value": "2"}]}, 2, KEY),
    ({"env": [{"name": "KURED_LOCK_ANNOTATION", "value": "example.com/reboot"}]}, 1, "example.com/reboot"),
    ({"args": ["--lock-annotation", "a.b/c"]}, 1, "a.b/c"),
])
def test_kured_settings_are_its_flags_then_its_environment(template, concurrency, key):
    kured = ds("kube-system", "kured", args=template.get("args", ()), env=template.get("env"))
    got = kured_settings(kured)
    assert (got["concurrency"], got["lock_annotation"], got["unreadable"]) == (concurrency, key, "")


def test_kured_settings_that_cannot_be_read_hold_the_lock():
    from_map = ds("kube-system", "kured", env_from=[{"configMapRef": {"name": "kured-env"}}])
    secret = ds("kube-system", "kured", env=[{"name": "KURED_CONCURRENCY", "valueFrom": {"configMapKeyRef": {"name": "k", "key": "c"}}}])
    junk = ds("kube-system", "kured", env=[{"name": "KURED_CONCURRENCY", "value": "two"}])
    for kured in (from_map, secret, junk):
        assert kured_settings(kured)["unreadable"]
        assert kured_lock_claims([kured], "auto", NOW, 600, "roll-1") == [], "never written"
        assert "kured's settings cannot be read" in " ".join(maintainers_at_work(node(), [kured], [], "auto", [], NOW, "roll-1"))


@pytest.mark.parametrize("kured, stale", [
    (ds("kube-system", "kured", env=[{"name": "KURED_CONCURRENCY", "value": "2"}]), None),
    (ds("kube-system", "kured", args=["--concurrency=3"]), json.dumps({"maxOwners": 1, "locks": []})),   # a stale maxOwners
    (ds("kube-system", "kured", args=["--concurrency=2"]), json.dumps({"maxOwners": 2, "locks": None})),
    (ds("kube-system", "kured"), None),
])
def test_kureds_own_acquire_never_finds_a_free_slot_under_the_roll(kured, stale):
    """The hold as kured will read it: no free slot for kured's concurrency, in the format kured parses."""
    if stale is not None:
        kured["metadata"]["annotations"][KEY] = stale
    claims = kured_lock_claims([kured], "auto", NOW, 600, "roll-1")
    assert len(claims) == 1
    concurrency = kured_settings(kured)["concurrency"]
    assert not kured_acquires(claims[0]["value"], concurrency), claims[0]["value"]


def test_a_dead_rolls_kured_entries_are_taken_over_with_its_lease():
    """The roll that took over a dead roll's Lease replaces that roll's kured entries (they would hold every node of
    it until their TTL) and gives them back at its end; another live roll's entries still hold."""
    dead = single("rke2-numa.maitred.io/roll/roll-dead", ttl=24 * HOUR_NS)
    kured = ds("kube-system", "kured", annotations={KEY: dead})
    assert kured_lock_claims([kured], "auto", NOW, 600, "roll-next") == [], "another roll's entries hold"
    assert "another roll (roll-dead) holds kured's reboot lock" in " ".join(maintainers_at_work(node(), [kured], [], "auto", [], NOW, "roll-next"))
    claims = kured_lock_claims([kured], "auto", NOW, 600, ["roll-next", "roll-dead"])
    assert len(claims) == 1 and json.loads(claims[0]["value"])["nodeID"] == "rke2-numa.maitred.io/roll/roll-next"
    assert maintainers_at_work(node(), [kured], [], "auto", [], NOW, ["roll-next", "roll-dead"]) == []
    assert kured_lock_releases([kured], "auto", ["roll-next", "roll-dead"])[0]["value"] is None
