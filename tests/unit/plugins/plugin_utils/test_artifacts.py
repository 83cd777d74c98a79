# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The set_stats artifacts: the summary's keys, and a merge that is right however AWX combined the slices' artifacts
(dict.update, the last slice's value of a key they all write)."""

from __future__ import annotations

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.artifacts import (
    KEY, PROOF_KEY, STATES, ArtifactError, check_summary, merge, run_key, stats, with_roll)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.report import check_fleet


def fleet(compliant=(), noncompliant=(), blocked=(), unread=()):
    entries = [{"host": h, "compliance": {"compliant": True, "actions": []}} for h in compliant]
    entries += [{"host": h, "compliance": {"compliant": False, "actions": ["drain", "reboot"], "blocked": []}} for h in noncompliant]
    entries += [{"host": h, "compliance": {"compliant": False, "actions": [], "blocked": ["a drop-in overrides the plan"]}} for h in blocked]
    entries += [{"host": h} for h in unread]
    return check_fleet(entries)


def awx_combined(*artifact_sets):
    """What AWX gives the next workflow node: the slices' artifacts merged with dict.update, in slice order."""
    combined = {}
    for artifacts in artifact_sets:
        combined.update(artifacts)
    return combined


def test_the_summary_counts_each_state_and_names_its_hosts():
    summary = check_summary(fleet(["a", "b"], ["c"], ["d"], ["e"]), "check", "123", report="/out/index.html")
    assert summary["noncompliant"] == 2 and summary["compliant"] == 2 and summary["blocked"] == 1 and summary["not_checked"] == 1
    assert summary["reboot"] == 1 and summary["hosts"] == 5 and summary["fleet_hosts"] == 5
    assert summary["hosts_by_state"] == {"compliant": ["a", "b"], "noncompliant": ["c", "d"], "blocked": ["d"], "reboot": ["c"],
                                         "not_checked": ["e"]}
    assert summary["reports"] == ["/out/index.html"] and summary["runs"] == ["123"]
    assert set(STATES[KEY]) <= set(summary)
    assert check_summary(fleet(["a"]), "check", "1", fleet_hosts=48)["fleet_hosts"] == 48   # a slice: a part of the fleet


def test_a_run_publishes_its_summary_under_the_shared_key_and_its_own():
    summary = check_summary(fleet(["a"]), "check", "77")
    assert stats(summary, "77") == {KEY: summary, "rke2_numa_fleet_77": summary}
    for bad in ("", "7-7", "x" * 65, "a b", "{{ x }}"):
        with pytest.raises(ArtifactError):
            run_key(bad)


def test_slices_merge_right_where_awx_s_update_keeps_only_the_last_slice():
    one = check_summary(fleet(["a"], ["b"]), "check", "101", report="/s1/index.html", fleet_hosts=4)
    two = check_summary(fleet(["c", "d"]), "check", "102", report="/s2/index.html", fleet_hosts=4)
    combined = awx_combined(stats(one, "101"), stats(two, "102"))
    assert combined[KEY]["noncompliant"] == 0, "the shared key holds the last slice's summary only"
    merged = merge(combined)
    assert merged["noncompliant"] == 1 and merged["compliant"] == 3 and merged["hosts"] == 4 and merged["fleet_hosts"] == 4
    assert merged["hosts_by_state"]["noncompliant"] == ["b"] and merged["runs"] == ["101", "102"]
    assert merged["reports"] == ["/s1/index.html", "/s2/index.html"]
    # the same either way round, and a job that is not sliced is its own summary
    assert merge(awx_combined(stats(two, "102"), stats(one, "101")))["hosts_by_state"] == merged["hosts_by_state"]
    alone = merge(stats(one, "101"))
    assert {k: alone[k] for k in STATES[KEY]} == {k: one[k] for k in STATES[KEY]}
    assert merge({KEY: one}) == merge(stats(one, "101")) and merge({"other": 1}) is None


def test_a_merge_refuses_what_is_not_a_summary_of_ours():
    with pytest.raises(ArtifactError, match="is not a summary"):
        merge({"rke2_numa_fleet_9": {"noncompliant": 3}})


def test_the_rolls_of_the_slices_merge_and_one_failure_fails_the_whole():
    base = check_summary(fleet([], ["a"]), "rolling", "5")
    one = with_roll(base, {"failed": False, "msg": None, "hosts": {"converged": ["a"]}}, "r1",
                    {"done": 1, "failed": 0, "remaining": 0, "line": "progress: ..."})
    two = with_roll(check_summary(fleet([], ["b"]), "rolling", "6"), {"failed": True, "msg": "b failed", "hosts": {"failed": ["b"]}}, "r1")
    assert "line" not in one["roll"]["progress"] and one["roll"]["progress"]["done"] == 1
    merged = merge(awx_combined(stats(one, "5"), stats(two, "6")))
    assert merged["roll"] == {"ids": ["r1"], "failed": True, "msg": "b failed", "hosts": {"converged": ["a"], "failed": ["b"]}}


def test_the_proof_has_its_own_key_and_states():
    proof = {"hosts": 3, "proven": ["a"], "failed": ["b"], "inconclusive": [], "not_run": ["c"], "numa_nodes": {}}
    summary = check_summary(proof, "prove", "8")
    assert (summary["proven"], summary["failed"], summary["not_run"]) == (1, 1, 1) and "noncompliant" not in summary
    data = stats(summary, "8")
    assert sorted(data) == [PROOF_KEY, "rke2_numa_proof_8"]
    assert merge(data, PROOF_KEY)["hosts_by_state"]["failed"] == ["b"] and merge(data) is None
