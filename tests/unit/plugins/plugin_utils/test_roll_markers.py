# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What earlier rolls left on the Nodes: a marker counts only together with the cordon it stands for."""
from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_markers import node_markers, stale_nodes

C, F = "rke2-numa.maitred.io/cordoned", "rke2-numa.maitred.io/failed"


def node(name, unschedulable=False, **annotations):
    return {"kind": "Node", "metadata": {"name": name, "annotations": annotations}, "spec": {"unschedulable": unschedulable}}


def test_our_marker_on_a_cordoned_node_is_an_earlier_roll_and_on_a_schedulable_one_is_stale():
    reply = {"items": [node("left", True, **{C: "true"}), node("uncordoned", False, **{C: "true"}),
                       node("failed", True, **{C: "true", F: "pending reboot"}), node("stale-failed", False, **{F: "x"}),
                       node("admin", True), node("plain"), {"metadata": {}}]}
    marks = node_markers(reply, C, F)
    assert marks["left"] == {"unschedulable": True, "cordoned_by_us": True, "roll": "true", "failed": None, "stale": False}
    assert marks["uncordoned"] == {"unschedulable": False, "cordoned_by_us": False, "roll": "true", "failed": None, "stale": True}
    assert marks["failed"]["cordoned_by_us"] and marks["failed"]["failed"] == "pending reboot"
    assert marks["stale-failed"]["stale"] and not marks["stale-failed"]["cordoned_by_us"]
    assert marks["admin"] == {"unschedulable": True, "cordoned_by_us": False, "roll": None, "failed": None, "stale": False}
    assert not marks["plain"]["stale"] and sorted(marks) == ["admin", "failed", "left", "plain", "stale-failed", "uncordoned"]


def test_an_empty_or_odd_reply():
    assert node_markers({}, C, F) == {} and node_markers(None, C, F) == {} and node_markers({"items": None}, C, F) == {}


def test_the_pods_of_a_nodes_and_pods_read_are_not_nodes():
    pod = {"kind": "Pod", "metadata": {"name": "gpu-a", "annotations": {C: "true"}}, "spec": {"nodeName": "gpu-a"}}
    assert sorted(node_markers({"items": [node("gpu-a", True, **{C: "true"}), pod]}, C, F)) == ["gpu-a"]
    assert node_markers({"items": [pod]}, C, F) == {}


def test_stale_markers_are_cleared_only_on_nodes_that_run_their_plan():
    marks = node_markers({"items": [node("a", False, **{C: "true"}), node("b", False, **{F: "x"}), node("c", True, **{C: "true"}),
                                    node("d")]}, C, F)
    hosts = [{"node": "b", "compliant": True}, {"node": "a", "compliant": True}, {"node": "c", "compliant": True},
             {"node": "d", "compliant": True}, {"node": "e", "compliant": True}]
    assert stale_nodes(hosts, marks) == ["a", "b"]
    assert stale_nodes([{"node": "a", "compliant": False}, {"node": "b", "compliant": None}], marks) == [], "those are rolled"
    assert stale_nodes(hosts, {}) == [] and stale_nodes([], marks) == []
