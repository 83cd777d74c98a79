# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A roll's summary and exit code: rc 0 only when every node it meant to roll is done."""
from __future__ import annotations

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_outcome import roll_outcome, roll_progress

FLEET = [{"host": "n1", "compliant": False}, {"host": "n2", "compliant": False}, {"host": "n3", "compliant": True},
         {"host": "n4", "compliant": None}]


def test_a_finished_roll_succeeds_and_lists_each_node():
    out = roll_outcome(FLEET, [{"host": "n2", "result": "rebooted", "seconds": 310.5}, {"host": "n1", "result": "reconfigured", "seconds": 80.0}])
    assert out == {"failed": False, "msg": None, "summary": [
        "compliant (skipped): n3", "not checked: n4", "blocked (not rolled, fix by hand): none", "fixed in place (no drain): none",
        "reconfigured: n1", "rebooted: n2", "pending reboot: none", "failed: none",
        "remaining: none", "seconds per node: n1 80.0, n2 310.5"],
        "hosts": {"reconfigured": ["n1"], "rebooted": ["n2"], "remaining": [], "blocked": []}}


def test_fleet_json_gets_each_results_hosts_and_the_nodes_left_without_a_slot_as_remaining():
    out = roll_outcome(FLEET, [{"host": "n2", "result": "failed", "reason": "drain failed"}, {"host": "n1", "result": "no_slot", "note": "no slot"},
                               {"host": "n4", "result": None}])
    assert out["hosts"] == {"failed": ["n2"], "remaining": ["n1", "n4"], "blocked": []}
    assert out["msg"] == "the roll stopped: n2: drain failed; 2 nodes not rolled: n1, n4; no slot"


def test_a_window_stop_is_not_success():
    out = roll_outcome(FLEET, [{"host": "n1", "result": "reconfigured", "seconds": 80.0}, {"host": "n2", "result": "window"}])
    assert out["failed"] and out["msg"] == "the roll stopped: 1 node not rolled: n2 (the maintenance window)"
    assert "remaining: n2" in out["summary"]


def test_a_failure_names_its_reason_and_the_nodes_never_reached():
    out = roll_outcome(FLEET, [{"host": "n1", "result": "failed", "reason": "drain of n1 failed"}, {"host": "n2", "result": None},
                               {"host": "n3", "result": "pending_reboot", "reason": "pending reboot: ..."}])
    assert out["msg"] == "the roll stopped: n1: drain of n1 failed; n3: pending reboot: ...; 1 node not rolled: n2"
    assert "failed: n1" in out["summary"] and "pending reboot: n3" in out["summary"] and "remaining: n2" in out["summary"]


def test_a_blocked_node_is_named_with_its_reason_and_fails_the_run():
    """The apply chain would refuse n2 (a drop-in overrides the plan): not rolled, and the run is not a success."""
    fleet = [{"host": "n1", "compliant": False}, {"host": "n2", "compliant": False, "blocked": ["50-site.yaml sets kubelet-arg"]}]
    out = roll_outcome(fleet, [{"host": "n1", "result": "reconfigured", "seconds": 80.0}])
    assert out["failed"] and out["msg"] == "the roll stopped: n2: blocked - 50-site.yaml sets kubelet-arg"
    assert "blocked (not rolled, fix by hand): n2" in out["summary"] and "reconfigured: n1" in out["summary"]


def test_check_mode_says_what_would_happen():
    out = roll_outcome(FLEET, [{"host": "n1", "result": "reconfigured", "seconds": 3.0}, {"host": "n2", "result": "rebooted", "seconds": 4.0}],
                       check_mode=True)
    assert "would reconfigure: n1" in out["summary"] and "would reboot: n2" in out["summary"] and not out["failed"]
    assert not any(line.startswith(("reconfigured:", "rebooted:")) for line in out["summary"])


def test_a_node_fixed_in_place_is_done():
    out = roll_outcome(FLEET, [{"host": "n1", "result": "fixed_in_place"}, {"host": "n2", "result": "reconfigured", "seconds": 9.0}])
    assert not out["failed"] and "fixed in place (no drain): n1" in out["summary"] and "reconfigured: n2" in out["summary"]
    checked = roll_outcome(FLEET, [{"host": "n1", "result": "fixed_in_place"}], check_mode=True)
    assert "would fix in place (no drain): n1" in checked["summary"] and not checked["failed"]


def test_a_node_whose_probe_was_inconclusive_is_back_in_service_and_named():
    unsure = "rke2-numa-probe-n1-0 (numa0): inconclusive: the probe's GPU could not be identified (/dev/nvidia0)"
    out = roll_outcome(FLEET, [{"host": "n1", "result": "reconfigured", "seconds": 8.0, "unproven": [unsure]},
                               {"host": "n2", "result": "reconfigured", "seconds": 9.0, "unproven": []}])
    assert not out["failed"] and out["summary"][-1] == "not proven (back in service): n1: " + unsure
    assert sum(1 for line in out["summary"] if line.startswith("not proven")) == 1
    late = roll_outcome(FLEET, [{"host": "n1", "result": "reconfigured", "labels_note": "3 of our labels ... is Node Feature Discovery running"}])
    assert not late["failed"] and late["summary"][-1] == "labels not on the Node (back in service): n1: 3 of our labels ... is Node Feature Discovery running"
    failed = roll_outcome(FLEET, [{"host": "n1", "result": "failed", "reason": "the pinning is not proven", "unproven": [unsure],
                                   "labels_note": "late"}])
    assert not [line for line in failed["summary"] if "back in service" in line], "a node left cordoned is not back in service"


def test_nothing_to_roll():
    out = roll_outcome([{"host": "n3", "compliant": True}], [])
    assert not out["failed"] and out["summary"][:2] == ["compliant (skipped): n3", "not checked: none"]


def test_the_reason_is_kubectls_not_ansibles():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.task_result import failure_reason
    assert failure_reason({"msg": "non-zero return code", "stderr": 'Error from server (NotFound): nodes "gpu-a.example.com" not found\n'}) == \
        'Error from server (NotFound): nodes "gpu-a.example.com" not found'
    assert failure_reason({"msg": "non-zero return code", "stderr": "error: timed out waiting for the condition on nodes/gpu-a\n"}) == \
        "timed out waiting for the condition on nodes/gpu-a"
    # ansible-core 2.19+ spells the command module's message out
    assert failure_reason({"msg": "The command exited with a non-zero return code.", "rc": 1,
                           "stderr": "error: timed out waiting for the condition on nodes/gpu-a\n"}) == \
        "timed out waiting for the condition on nodes/gpu-a"
    assert failure_reason({"msg": "drain of gpu-a failed,\n  nothing changed", "stderr": "x"}) == "drain of gpu-a failed, nothing changed"
    assert failure_reason({}) == "failed" and failure_reason(None) == "failed"


def test_the_annotation_holds_our_first_sentence_never_the_kubelet_log():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_outcome import annotation_reason
    reason = ("rolled back to the previous config and checkpoints: the kubelet did not come back healthy within 20 s. "
              "The kubelet said: E1201 failed to parse kubelet flag | secret-ish log line. After the rollback ...")
    assert annotation_reason(reason) == "rolled back to the previous config and checkpoints: the kubelet did not come back healthy within 20 s"
    assert len(annotation_reason("x" * 1000)) == 300
    assert annotation_reason("pending reboot: the plan's kernel args are written") == "pending reboot: the plan's kernel args are written"


def test_the_progress_between_batches_stops_past_the_failure_share_and_times_the_nodes_done():
    """The guard of each batch (it was a Jinja chain in playbooks/tasks/stop.yml and window.yml)."""
    rolled = [{"host": "a", "result": "reconfigured", "reason": None, "seconds": "61.5"},
              {"host": "b", "result": "failed", "reason": "the drain timed out", "seconds": None},
              {"host": "c", "result": "pending_reboot", "reason": "pending reboot: ...", "seconds": None},
              {"host": "d", "result": None, "reason": None, "seconds": None}]
    first = roll_progress(rolled)
    assert first == {"failed": ["b", "c"], "seconds": [61.5], "stop": True,
                     "msg": "stopping: b, c failed (rke2_numa_max_fail_percentage 0)"}
    assert not roll_progress(rolled, 50)["stop"]   # 2 of 4 is not more than half
    assert roll_progress(rolled, 49)["stop"]
    assert roll_progress(rolled[:1]) == {"failed": [], "seconds": [61.5], "stop": False, "msg": ""}


def test_the_progress_line_counts_the_nodes_and_estimates_the_end_from_the_pace_so_far():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_outcome import roll_eta
    now = 1796428800.0   # 2026-12-05T00:00Z
    rolled = [{"host": "a", "result": "reconfigured", "reason": None, "seconds": 600},
              {"host": "b", "result": "rebooted", "reason": None, "seconds": 1200},
              {"host": "c", "result": "failed", "reason": "drain timed out", "seconds": None},
              {"host": "d", "result": None, "reason": None, "seconds": None},
              {"host": "e", "result": None, "reason": None, "seconds": None},
              {"host": "f", "result": None, "reason": None, "seconds": None}]
    got = roll_eta(rolled, now, serial=2, node_minutes=30, window_end="2026-12-05T01:00:00Z")
    # 3 remaining in batches of 2: two batches at 15 min (the mean of 10 and 20) -> 00:30
    assert (got["done"], got["failed"], got["remaining"], got["minutes_per_node"]) == (2, 1, 3, 15.0)
    assert got["estimated_end"] == "2026-12-05T00:30Z" and got["past_window_minutes"] == 0
    assert got["line"] == ("progress: 2 of 6 nodes done, 1 failed, 3 remaining; 15.0 min per node so far; estimated end "
                           "2026-12-05T00:30Z (the window ends 2026-12-05T01:00Z: fits)")
    late = roll_eta(rolled, now, serial=1, node_minutes=30, window_end="2026-12-05T00:40:00Z")   # 3 x 15 min: 00:45
    assert late["past_window_minutes"] == 5 and "5 min past it - the window guard starts no node that cannot finish" in late["line"]
    first = roll_eta([dict(r, result=None, seconds=None, reason=None) for r in rolled[:2]], now, node_minutes=20)
    assert first["minutes_per_node"] is None and first["estimated_end"] == "2026-12-05T00:40Z"
    assert first["line"] == "progress: 0 of 2 nodes done, 0 failed, 2 remaining; no node done yet (20 min per node assumed); estimated end 2026-12-05T00:40Z"
    assert first["window_end"] is None and first["past_window_minutes"] is None
    end = roll_eta(rolled[:2], now)
    assert end["remaining"] == 0 and end["line"] == "progress: 2 of 2 nodes done, 0 failed, 0 remaining; 15.0 min per node so far"
    with pytest.raises(ValueError):
        roll_eta(rolled, now, serial=0)


def test_a_node_the_roll_took_is_said_under_its_result_not_as_skipped():
    """After its roll a node is read again (compliant then): the sandbox's first roll said 'compliant (skipped): gpu01,
    gpu02' above 'rebooted: gpu01, gpu02'."""
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_outcome import roll_outcome
    out = roll_outcome([{"host": "gpu01", "compliant": True}, {"host": "gpu02", "compliant": True}, {"host": "gpu03", "compliant": True}],
                       [{"host": "gpu01", "result": "rebooted", "seconds": 40}, {"host": "gpu02", "result": "reconfigured", "seconds": 30}])
    assert out["summary"][0] == "compliant (skipped): gpu03"
    assert "rebooted: gpu01" in out["summary"] and "reconfigured: gpu02" in out["summary"] and not out["failed"]
