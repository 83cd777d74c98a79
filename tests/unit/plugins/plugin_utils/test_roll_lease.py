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


FAILED = "rke2-numa.maitred.io/failed"


def node(name, roll=None, cordoned=True, failed=False):
    meta = {"name": name, "annotations": dict({KEY: roll} if roll else {}, **({FAILED: "why"} if failed else {}))}
    return {"kind": "Node", "metadata": meta, "spec": {"unschedulable": cordoned}}


def settings(roll="roll-b", run="aaaa", cap=1, own=()):
    return {"id": roll, "run": run, "lease_seconds": 900, "namespace": NS, "name": NAME, "marker": KEY, "failed": FAILED,
            "max_unavailable": cap, "nodes": list(own)}


def step(mode, current, roll="roll-b", nodes=(), own=(), run="aaaa", cap=1, claim=None, observed=None, fence=None, known=None, now=NOW):
    roll = dict(settings(roll, run, cap, own), **({} if known is None else {"transitions": known}))
    return rl.lease_step(mode, current, roll, now, list(nodes), claim, observed, fence)


def with_slots(current, claims, roll="roll-b"):
    current["metadata"]["annotations"] = {rl.SLOTS_ANNOTATION: json.dumps({"roll": roll, "claims": claims}), "someone/else": "kept"}
    return current


def slots_of(out):
    text = out["object"]["metadata"].get("annotations", {}).get(rl.SLOTS_ANNOTATION)
    return None if text is None else json.loads(text)["claims"]


def claim(run, until=NOW + 100):
    return {"run": run, "since": rl.micro_time(NOW - 50), "until": rl.micro_time(until)}


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


WATCHED = {"resource_version": "7", "since": NOW - 601}   # this run has seen resourceVersion 7 for 601 s


@pytest.mark.parametrize("current, previous", [(lease("roll-a", renewed=NOW - 601), "roll-a"), (lease("roll-a"), "roll-a"),
                                               (lease(""), ""), (lease(None), "")])
def test_a_lease_watched_unchanged_for_its_duration_or_released_is_taken_with_the_resource_version_read(current, previous):
    out = step("take", current, observed=WATCHED)
    assert out["action"] == "update" and out["object"]["metadata"]["resourceVersion"] == "7"
    assert out["object"]["spec"]["holderIdentity"] == "roll-b" and out["object"]["spec"]["leaseTransitions"] == 4
    assert out["object"]["spec"]["acquireTime"] == rl.micro_time(NOW) and out["transitions"] == 4
    assert ("from the dead roll roll-a (unchanged for 601 s as this run watched it)" in out["msg"]) == bool(previous)


@pytest.mark.parametrize("observed", [None, {}, {"resource_version": "7", "since": NOW + 1}, {"resource_version": "6", "since": NOW - 6000}])
def test_another_rolls_lease_is_live_until_this_run_watched_it_unchanged_for_its_duration_whatever_its_renew_time(observed):
    """client-go's observedTime (leaderelection.go isLeaseValid): a controller whose clock runs 10 minutes ahead sees
    renewTime + leaseDurationSeconds in its past - the Lease is live all the same, until this run has watched the same
    record for leaseDurationSeconds by its own clock."""
    ahead = NOW + 600   # this controller's clock, 10 minutes ahead of the holder's
    out = step("take", lease("roll-a", renewed=NOW - 10), observed=observed, now=ahead)
    assert out["action"] == "refuse" and out["waits"] and out["object"] is None
    assert "but a Lease expires for this run only once it has seen it unchanged for its 600 s" in out["msg"], out["msg"]


def test_the_observation_of_a_lease_restarts_when_its_record_changes():
    first = rl.observation(lease("roll-a"), NOW - 100)
    assert first == {"resource_version": "7", "since": NOW - 100}
    assert rl.observation(lease("roll-a"), NOW, first) == first, "the same record: the first sight is kept"
    assert rl.observation(lease("roll-a", rv="8"), NOW, first) == {"resource_version": "8", "since": NOW}, "renewed: watched anew"


def test_a_renewal_never_takes_a_lease_it_does_not_hold_expired_or_not():
    """A renewal that finds another roll's expired Lease does not take it (it took it away from this run once)."""
    for current in (lease("roll-a", renewed=NOW - 6000), lease("roll-a")):
        assert step("renew", current)["action"] == "lost"
        assert step("renew", current, claim=["gpu-1"])["action"] == "lost"
        assert step("renew", current, fence="gpu-1", known=3)["action"] == "lost"


def test_a_renewal_in_the_middle_of_a_node_stops_when_the_lease_changed_hands_since_this_runs_last_write():
    """Another roll took the Lease over (leaseTransitions 4) and a run of this roll took it back (5): the holder is this
    roll's id again, but the run that comes back from a suspend must not act - its node may be another roll's now."""
    back = lease("roll-b", transitions=5)
    lost = step("renew", back, known=4)
    assert lost["action"] == "lost" and "leaseTransitions 5, was 4 at this run's last write: another roll held it in between" in lost["msg"]
    assert step("renew", lease("", transitions=4), known=4)["action"] == "lost", "given back under a run's feet: nobody's to renew"
    assert step("renew", back, known=5)["action"] == "update"
    between = step("renew", lease("", transitions=4), known=4, claim=["gpu-2"])
    assert between["action"] == "update" and between["transitions"] == 5, "between batches a released Lease is taken again"


def test_the_fence_holds_only_with_this_runs_live_claim_on_the_node():
    claims = {"gpu-1": claim("aaaa"), "gpu-2": claim("bbbb"), "gpu-3": dict(claim("aaaa"), waiting=True),
              "gpu-4": claim("aaaa", until=NOW - 1)}
    current = with_slots(lease("roll-b"), claims)
    ok = step("renew", current, fence="gpu-1", known=3)
    assert ok["action"] == "update" and ok["object"]["metadata"]["resourceVersion"] == "7", "a renewal carrying what it read"
    assert ok["object"]["spec"]["renewTime"] == rl.micro_time(NOW)
    for node, why in (("gpu-2", "the slot of gpu-2 is run bbbb's, not this run's (aaaa)"), ("gpu-3", "holds no slot of this run"),
                      ("gpu-4", "this run's slot for gpu-4 expired at"), ("gpu-5", "holds no slot of this run for gpu-5")):
        out = step("renew", current, fence=node, known=3)
        assert out["action"] == "fenced" and out["object"] is None and why in out["msg"], out["msg"]


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


def test_the_lease_covers_the_longest_stretch_between_renewals_and_its_table_matches_the_roles_defaults():
    assert rl.lease_seconds({}) == 180 + 300 + 120 + 180 + 120, "no reboot: the kubelet's start to the labels"
    assert rl.lease_seconds({"rke2_numa_reboot_ok": True}) == 1800 + 120, "the reboot"
    assert rl.lease_seconds({"rke2_numa_reboot_ok": "true", "rke2_numa_reboot_timeout": 0}) == 1800 + 120, "0: its default"
    assert rl.lease_seconds({"rke2_numa_drain_timeout": "3000"}) == 3000 + 120
    assert rl.lease_seconds({name: 1 for name, dummy in rl.LEASE_STRETCH}) == 4 + rl.LEASE_MARGIN
    assert rl.lease_seconds({"rke2_numa_drain_timeout": 10 ** 6}) == rl.LEASE_SECONDS_MAX
    assert rl.lease_seconds({}, 3) == 3 * 780 + 120, "three waves of a batch"
    defaults = {}
    for role in ("common", "drain", "kubelet_reset", "prove", "labels"):
        with open(os.path.join(REPO, "roles", role, "defaults", "main.yml")) as handle:
            defaults.update(yaml.safe_load(handle) or {})
    assert {name: defaults.get(name) for name, dummy in rl.LEASE_STRETCH} == dict(rl.LEASE_STRETCH)


def test_a_batch_claims_slots_up_to_the_cap_across_the_runs_of_a_roll():
    current = with_slots(lease("roll-b"), {"gpu-1": claim("bbbb")})
    out = step("renew", current, claim=["gpu-2", "gpu-3"], cap=2)
    assert out["action"] == "update" and out["granted"] == ["gpu-2"] and out["waiting"] == ["gpu-3"] and not out["wait"]
    assert sorted(slots_of(out)) == ["gpu-1", "gpu-2", "gpu-3"] and slots_of(out)["gpu-2"]["run"] == "aaaa"
    assert slots_of(out)["gpu-3"]["waiting"] is True and "waiting" not in slots_of(out)["gpu-2"]
    assert slots_of(out)["gpu-2"]["until"] == rl.micro_time(NOW + 900)
    assert out["object"]["metadata"]["annotations"]["someone/else"] == "kept", "annotations we do not manage are kept"
    assert "no slot for gpu-3: rke2_numa_max_unavailable 2 allows 2 Nodes out and 2 are out" in out["slots_msg"]
    full = step("renew", current, claim=["gpu-2"], cap=1)
    assert full["granted"] == [] and full["wait"] and full["waits"], "the sibling's node holds the only slot: wait for it"
    assert "gpu-1 claimed by run bbbb of roll roll-b" in full["slots_msg"]


def test_nodes_out_count_whoever_claimed_them_a_failed_or_a_dead_rolls_node_holds_a_slot():
    nodes = [node("gpu-7", "roll-a"), node("gpu-8", failed=True), node("gpu-9", "roll-a", cordoned=False)]
    out = step("renew", lease("roll-b"), nodes=nodes, claim=["gpu-2"], cap=2)
    assert out["granted"] == [] and out["waiting"] == ["gpu-2"], "gpu-7 (a dead roll's, cordoned) and gpu-8 (failed) are out"
    resumed = step("renew", lease("roll-b"), nodes=nodes, claim=["gpu-7"], cap=2)
    assert resumed["granted"] == ["gpu-7"], "a node already out takes no further slot"
    pct = step("renew", lease("roll-b"), nodes=nodes + [node("n%d" % i, cordoned=False) for i in range(37)], claim=["gpu-2"], cap="10%")
    assert pct["granted"] == ["gpu-2"], "10% of 40 Nodes: 4"


def test_a_node_another_run_claimed_is_never_claimed_twice_and_expired_claims_are_free():
    current = with_slots(lease("roll-b"), {"gpu-1": claim("bbbb"), "gpu-2": claim("cccc", until=NOW - 1)})
    out = step("renew", current, claim=["gpu-1", "gpu-2"], cap=5)
    assert out["busy"] == ["gpu-1"] and out["granted"] == ["gpu-2"]
    assert "gpu-1: another run of roll roll-b is rolling it" in out["slots_msg"]
    assert slots_of(out)["gpu-2"]["run"] == "aaaa" and slots_of(out)["gpu-1"]["run"] == "bbbb"


def test_renewals_keep_or_free_this_runs_slots():
    current = with_slots(lease("roll-b"), {"gpu-1": claim("aaaa"), "gpu-5": claim("bbbb")})
    kept = step("renew", current)
    assert sorted(slots_of(kept)) == ["gpu-1", "gpu-5"] and slots_of(kept)["gpu-1"]["until"] == rl.micro_time(NOW + 900)
    assert slots_of(kept)["gpu-5"] == claim("bbbb"), "another run's claim is not ours to renew"
    freed = step("renew", current, claim=[])
    assert sorted(slots_of(freed)) == ["gpu-5"]
    # the release frees ours and keeps the Lease while another run has a slot
    out = step("release", current)
    assert out["action"] == "update" and out["object"]["spec"]["holderIdentity"] == "roll-b" and sorted(slots_of(out)) == ["gpu-5"]
    assert "is kept: another run of roll roll-b still has gpu-5 out" in out["msg"]
    last = step("release", with_slots(lease("roll-b"), {"gpu-1": claim("aaaa")}))
    assert last["object"]["spec"]["holderIdentity"] == "" and slots_of(last) is None


@pytest.mark.parametrize("broken", ["{", '{"roll": "roll-b", "claims": {"gpu-1": {"run": "bbbb"}}}', '[]'])
def test_slots_that_cannot_be_read_give_no_slot_and_are_never_rewritten(broken):
    current = lease("roll-b")
    current["metadata"]["annotations"] = {rl.SLOTS_ANNOTATION: broken}
    out = step("renew", current, claim=["gpu-2"], cap=9)
    assert out["granted"] == [] and out["waiting"] == ["gpu-2"] and not out["wait"] and "cannot be read" in out["slots_msg"]
    assert out["object"]["metadata"]["annotations"][rl.SLOTS_ANNOTATION] == broken
    assert step("release", current)["action"] == "none"


def test_another_rolls_slots_are_not_ours_when_its_lease_is_taken_over():
    current = with_slots(lease("roll-a", renewed=NOW - 2000), {"gpu-1": claim("zzzz")}, roll="roll-a")
    out = step("take", current, observed=WATCHED)
    assert out["action"] == "update" and slots_of(out) is None


@pytest.mark.parametrize("value, ok", [(1, True), ("3", True), ("25%", True), ("100%", True), (0, False), ("0%", False),
                                       ("101%", False), (True, False), ("-1", False), ([2], False)])
def test_max_unavailable_is_bounded(value, ok):
    assert (rl.max_unavailable_errors(value) == []) is ok
    assert rl.default_max_unavailable([1, 5, "20%"]) == "20%" and rl.default_max_unavailable(3) == 3


def test_a_number_too_long_to_print_is_refused_by_name():
    assert rl.max_unavailable_errors(10 ** 5000) == [
        "rke2_numa_max_unavailable (a number of more than 18 digits) must be a number of nodes from 1 to 10000 or a percentage from 1% to 100% of "
        "the cluster's Nodes"]


def test_a_run_waiting_for_a_slot_keeps_the_roll_s_lease_when_its_sibling_ends():
    """Two --limit halves of one roll, one slot: run bbbb rolls gpu-1, run aaaa waits for gpu-2. When bbbb ends, the
    Lease stays the roll's (the old code gave it back: a second roll took it between, and the waiting half lost it)."""
    waiting = step("renew", with_slots(lease("roll-b"), {"gpu-1": claim("bbbb")}), claim=["gpu-2"], cap=1)
    assert waiting["granted"] == [] and waiting["wait"]
    assert slots_of(waiting)["gpu-2"]["run"] == "aaaa" and slots_of(waiting)["gpu-2"]["waiting"] is True
    assert slots_of(waiting)["gpu-2"]["until"] == rl.micro_time(NOW + 900)
    current = waiting["object"]
    ended = step("release", current, run="bbbb")
    assert ended["object"]["spec"]["holderIdentity"] == "roll-b", "kept for the waiting run"
    assert "another run of roll roll-b still has gpu-2 waiting for a slot" in ended["msg"]
    assert sorted(slots_of(ended)) == ["gpu-2"]
    # a waiting entry is no Node out: the waiting run gets the slot the sibling freed
    granted = step("renew", ended["object"], claim=["gpu-2"], cap=1)
    assert granted["granted"] == ["gpu-2"] and "waiting" not in slots_of(granted)["gpu-2"]
    # and another run asking for a Node some run waits for is not "busy": both wait, the first granted takes it
    other = step("renew", current, run="cccc", claim=["gpu-2"], cap=2)
    assert other["busy"] == [] and other["granted"] == ["gpu-2"]
    # the waiting run that gives up drops its entry: the last release gives the Lease back
    gave_up = step("release", with_slots(lease("roll-b"), {"gpu-2": dict(claim("aaaa"), waiting=True)}))
    assert gave_up["object"]["spec"]["holderIdentity"] == "" and slots_of(gave_up) is None


def test_a_renewal_keeps_a_waiting_entry_waiting_and_renewed():
    current = with_slots(lease("roll-b"), {"gpu-1": claim("aaaa"), "gpu-2": dict(claim("aaaa"), waiting=True)})
    kept = step("renew", current)
    assert kept["granted"] == [] and slots_of(kept)["gpu-2"]["waiting"] is True and "waiting" not in slots_of(kept)["gpu-1"]
    assert slots_of(kept)["gpu-2"]["until"] == rl.micro_time(NOW + 900)


def test_a_lease_shorter_than_the_work_between_two_renewals_is_refused():
    assert rl.lease_seconds_errors(900, {}) == []
    short = rl.lease_seconds_errors(900, {"rke2_numa_drain_timeout": 3600})
    assert short and "the roll's Lease would last 900 s, but the drain may take 3600 s" in short[0], short
    assert "rke2_numa_roll_lease_seconds 0 computes it" in short[0]
    big = rl.lease_seconds_errors(rl.LEASE_SECONDS_MAX, {"rke2_numa_reboot_ok": True, "rke2_numa_reboot_timeout": 86400})
    assert big and "a Lease lasts 28800 s at most" in big[0]
    waves = rl.lease_seconds_errors(1000, {}, 2)
    assert waves and "(2 waves of a batch: rke2_numa_serial larger than --forks)" in waves[0]


@pytest.mark.parametrize("serial, hosts, forks, expected", [
    (1, 5, 5, 1), (10, 40, 5, 2), (11, 40, 5, 3), (10, 4, 2, 2), ([1, 5, 20], 40, 5, 4), ("25%", 8, 5, 2), ("x", 3, "0", 3)])
def test_a_batch_runs_in_waves_of_forks(serial, hosts, forks, expected):
    assert rl.waves(serial, hosts, forks) == expected
