# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What earlier rolls left on the Nodes: a marker counts only together with the cordon it stands for."""
from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_markers import node_markers

C, F = "rke2-numa.maitred.io/cordoned", "rke2-numa.maitred.io/failed"


def node(name, unschedulable=False, **annotations):
    return {"kind": "Node", "metadata": {"name": name, "annotations": annotations}, "spec": {"unschedulable": unschedulable}}


def test_our_marker_on_a_cordoned_node_is_an_earlier_roll_and_on_a_schedulable_one_is_stale():
    reply = {"items": [node("left", True, **{C: "true"}), node("uncordoned", False, **{C: "true"}),
                       node("failed", True, **{C: "true", F: "pending reboot"}), node("stale-failed", False, **{F: "x"}),
                       node("admin", True), node("plain"), {"metadata": {}}]}
    marks = node_markers(reply, C, F)
    assert marks["left"] == {"unschedulable": True, "cordoned_by_us": True, "failed": None, "stale": False}
    assert marks["uncordoned"] == {"unschedulable": False, "cordoned_by_us": False, "failed": None, "stale": True}
    assert marks["failed"]["cordoned_by_us"] and marks["failed"]["failed"] == "pending reboot"
    assert marks["stale-failed"]["stale"] and not marks["stale-failed"]["cordoned_by_us"]
    assert marks["admin"] == {"unschedulable": True, "cordoned_by_us": False, "failed": None, "stale": False}
    assert not marks["plain"]["stale"] and sorted(marks) == ["admin", "failed", "left", "plain", "stale-failed", "uncordoned"]


def test_an_empty_or_odd_reply():
    assert node_markers({}, C, F) == {} and node_markers(None, C, F) == {} and node_markers({"items": None}, C, F) == {}
