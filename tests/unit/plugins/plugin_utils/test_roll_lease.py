# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roll's id and its Lease: client-go's take / renew / release, decided on what the API returned."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import roll_lease as rl

NOW = 1796112000.0   # 2026-12-01T08:00:00Z
NS, NAME, KEY = "rke2-numa-system", "rke2-numa-roll", "rke2-numa.maitred.io/cordoned"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


def lease(holder, renewed=NOW - 10, duration=600, rv="7", transitions=3, acquired=None):
    spec = {"holderIdentity": holder, "leaseDurationSeconds": duration, "renewTime": rl.micro_time(renewed) if renewed else None,
            "acquireTime": acquired or rl.micro_time(NOW - 1000), "leaseTransitions": transitions}
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": NAME, "namespace": NS, "resourceVersion": rv},
            "spec": spec}


def node(name, roll=None, cordoned=True):
    meta = {"name": name, "annotations": {KEY: roll} if roll else {}}
    return {"kind": "Node", "metadata": meta, "spec": {"unschedulable": cordoned}}


def step(mode, current, roll="roll-b", nodes=(), own=()):
    return rl.lease_step(mode, current, roll, NOW, 900, NS, NAME, list(nodes), KEY, list(own))


def test_no_lease_is_created_and_a_concurrent_create_would_be_alreadyexists():
    out = step("take", None)
    assert out["action"] == "create" and "resourceVersion" not in out["object"]["metadata"]
    assert out["object"]["spec"] == {"holderIdentity": "roll-b", "leaseDurationSeconds": 900, "acquireTime": rl.micro_time(NOW),
                                     "renewTime": rl.micro_time(NOW), "leaseTransitions": 0}
    assert out["object"]["spec"]["renewTime"].endswith(".000000Z"), "MicroTime: six fractional digits, as the API server parses it"


def test_a_live_lease_of_another_roll_is_a_refusal_naming_it_since_when_and_its_nodes():
    out = step("take", lease("roll-a"), nodes=[node("gpu-2", "roll-a"), node("gpu-1", "roll-a"), node("gpu-3", "roll-b"),
                                               node("gpu-4", "roll-a", cordoned=False)])
    assert out["action"] == "refuse" and out["object"] is None
    assert out["msg"].startswith("another roll holds the Lease rke2-numa-system/rke2-numa-roll: roll-a since %s (renewed %s, expires in 590 s), "
                                 "on gpu-1, gpu-2; nothing was changed" % (rl.micro_time(NOW - 1000), rl.micro_time(NOW - 10)))


@pytest.mark.parametrize("current, previous", [(lease("roll-a", renewed=NOW - 601), "roll-a"), (lease(""), ""), (lease(None), "")])
def test_an_expired_or_released_lease_is_taken_with_the_resource_version_read(current, previous):
    out = step("take", current)
    assert out["action"] == "update" and out["object"]["metadata"]["resourceVersion"] == "7"
    assert out["object"]["spec"]["holderIdentity"] == "roll-b" and out["object"]["spec"]["leaseTransitions"] == 4
    assert out["object"]["spec"]["acquireTime"] == rl.micro_time(NOW)
    assert ("from the dead roll roll-a" in out["msg"]) == bool(previous)


@pytest.mark.parametrize("broken", [{"renewTime": "yesterday"}, {"leaseDurationSeconds": 0}, {"leaseDurationSeconds": "600"},
                                    {"renewTime": None, "acquireTime": None}])
def test_a_lease_whose_timing_cannot_be_read_is_held_never_taken(broken):
    current = lease("roll-a")
    current["spec"].update(broken)
    out = step("take", current)
    assert out["action"] == "refuse" and "cannot be read: held until an admin frees it" in out["msg"]


def test_renewal_keeps_acquire_time_and_a_lost_lease_stops_the_roll():
    out = step("renew", lease("roll-b", acquired="2026-12-01T05:00:00.000000Z"))
    assert out["action"] == "update" and out["object"]["spec"]["acquireTime"] == "2026-12-01T05:00:00.000000Z"
    assert out["object"]["spec"]["renewTime"] == rl.micro_time(NOW) and out["object"]["spec"]["leaseTransitions"] == 3
    lost = step("renew", lease("someone"))
    assert lost["action"] == "lost" and lost["msg"].startswith("roll roll-b lost the Lease rke2-numa-system/rke2-numa-roll to someone since")
    assert step("renew", None)["action"] == "lost"
    assert step("take", lease("roll-b"))["action"] == "update", "runs that share a roll id hold it together"


def test_release_writes_an_empty_holder_unless_another_run_of_the_roll_has_a_node_out():
    out = step("release", lease("roll-b"), nodes=[node("gpu-1", "roll-b")], own=["gpu-1"])
    assert out["action"] == "update" and out["object"]["spec"]["holderIdentity"] == "" and out["object"]["spec"]["leaseDurationSeconds"] == 1
    kept = step("release", lease("roll-b"), nodes=[node("gpu-1", "roll-b"), node("gpu-9", "roll-b")], own=["gpu-1"])
    assert kept["action"] == "none" and "another run of roll roll-b still has gpu-9 out" in kept["msg"]
    assert step("release", lease("roll-a"))["action"] == "none", "never another roll's"
    assert step("release", None)["action"] == "none"


def test_a_roll_in_progress_is_named_for_read_only_runs():
    busy = rl.roll_in_progress(lease("roll-a"), [node("gpu-1", "roll-a")], KEY, NOW)
    assert busy["busy"] and busy["nodes"] == ["gpu-1"] and busy["msg"].startswith("a roll is in progress: roll-a since ")
    assert busy["msg"].endswith(", on gpu-1")
    assert not rl.roll_in_progress(lease("roll-a", renewed=NOW - 700), [], KEY, NOW)["busy"], "expired: its roll died"
    assert not rl.roll_in_progress(lease("roll-a"), [], KEY, NOW, "roll-a")["busy"], "our own"
    assert ", on" not in rl.roll_in_progress(lease("roll-a"), [], KEY, NOW)["msg"], "the Nodes were not read: none named"


def test_the_lease_read_from_kubectl():
    assert rl.lease_from_reply("", NAME) is None and rl.lease_from_reply('{"items": []}', NAME) is None
    assert rl.lease_from_reply(json.dumps(lease("a")), NAME)["spec"]["holderIdentity"] == "a"
    for bad in ("Error", "[]", '{"kind": "Node"}'):
        with pytest.raises(rl.LeaseError):
            rl.lease_from_reply(bad, NAME)


@pytest.mark.parametrize("value, ok", [("roll-20261201-080000-1a2b", True), ("awx-workflow-42", True), ("-flag", False),
                                       ("Roll", False), ("a/b", False), ("x" * 64, False), ("true", False), ("", False), (7, False)])
def test_roll_ids_are_names(value, ok):
    assert (rl.roll_id_errors(value) == []) is ok


def test_default_roll_ids_follow_awx_slices_then_jobs_then_a_fresh_one():
    assert rl.default_roll_id("42", "7", NOW, "ab") == "awx-workflow-42", "the slices of a sliced job share the workflow job"
    assert rl.default_roll_id(None, 7, NOW, "ab") == "awx-job-7"
    assert rl.default_roll_id(None, None, NOW, "C0FFEE-zz") == "roll-20261201-080000-c0ffee"
    assert rl.roll_id_errors(rl.default_roll_id(None, None, NOW, "0123456789abcdef")) == []
    assert rl.default_roll_id("4" * 40, None, NOW, "") .startswith("roll-"), "a number no AWX writes is not trusted"


def test_the_lease_covers_the_longest_stretch_and_its_table_matches_the_roles_defaults():
    assert rl.lease_seconds({}) == 600 + 1800 + 180 + 300 + 120 + 180 + 120
    assert rl.lease_seconds({"rke2_numa_drain_timeout": "60", "rke2_numa_reboot_timeout": 0}) == rl.lease_seconds({}) - 540
    assert rl.lease_seconds({name: 1 for name, dummy in rl.LEASE_STRETCH}) == rl.LEASE_SECONDS_MIN + 6
    assert rl.lease_seconds({"rke2_numa_drain_timeout": 10 ** 6}) == rl.LEASE_SECONDS_MAX
    defaults = {}
    for role in ("common", "drain", "kubelet_reset", "prove", "labels"):
        with open(os.path.join(REPO, "roles", role, "defaults", "main.yml")) as handle:
            defaults.update(yaml.safe_load(handle) or {})
    assert {name: defaults.get(name) for name, dummy in rl.LEASE_STRETCH} == dict(rl.LEASE_STRETCH)
