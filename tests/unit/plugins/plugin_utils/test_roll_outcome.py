# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A roll's summary and exit code: rc 0 only when every node it meant to roll is done."""
from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_outcome import roll_outcome

FLEET = [{"host": "n1", "compliant": False}, {"host": "n2", "compliant": False}, {"host": "n3", "compliant": True},
         {"host": "n4", "compliant": None}]


def test_a_finished_roll_succeeds_and_lists_each_node():
    out = roll_outcome(FLEET, [{"host": "n2", "result": "rebooted", "seconds": 310.5}, {"host": "n1", "result": "reconfigured", "seconds": 80.0}])
    assert out == {"failed": False, "msg": None, "summary": [
        "compliant (skipped): n3", "not checked: n4", "reconfigured: n1", "rebooted: n2", "pending reboot: none", "failed: none",
        "remaining: none", "seconds per node: n1 80.0, n2 310.5"]}


def test_a_window_stop_is_not_success():
    out = roll_outcome(FLEET, [{"host": "n1", "result": "reconfigured", "seconds": 80.0}, {"host": "n2", "result": "window"}])
    assert out["failed"] and out["msg"] == "the roll stopped: 1 node not rolled: n2 (the maintenance window)"
    assert "remaining: n2" in out["summary"]


def test_a_failure_names_its_reason_and_the_nodes_never_reached():
    out = roll_outcome(FLEET, [{"host": "n1", "result": "failed", "reason": "drain of n1 failed"}, {"host": "n2", "result": None},
                               {"host": "n3", "result": "pending_reboot", "reason": "pending reboot: ..."}])
    assert out["msg"] == "the roll stopped: n1: drain of n1 failed; n3: pending reboot: ...; 1 node not rolled: n2"
    assert "failed: n1" in out["summary"] and "pending reboot: n3" in out["summary"] and "remaining: n2" in out["summary"]


def test_check_mode_says_what_would_happen():
    out = roll_outcome(FLEET, [{"host": "n1", "result": "reconfigured", "seconds": 3.0}, {"host": "n2", "result": "rebooted", "seconds": 4.0}],
                       check_mode=True)
    assert "would reconfigure: n1" in out["summary"] and "would reboot: n2" in out["summary"] and not out["failed"]
    assert not any(line.startswith(("reconfigured:", "rebooted:")) for line in out["summary"])


def test_nothing_to_roll():
    out = roll_outcome([{"host": "n3", "compliant": True}], [])
    assert not out["failed"] and out["summary"][:2] == ["compliant (skipped): n3", "not checked: none"]
