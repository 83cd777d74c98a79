# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rolling play's filters over hostvars: one ``get nodes,pods`` reply serves the markers and the roll order."""
from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.filter.roll import FilterModule
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import roll_pick

F = FilterModule().filters()
C = "rke2-numa.maitred.io/cordoned"
FAILED = "rke2-numa.maitred.io/failed"


def node(name, unschedulable=False, **annotations):
    return {"kind": "Node", "metadata": {"name": name, "annotations": annotations}, "spec": {"unschedulable": unschedulable}}


def gpu_pod(name, node_name):
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "ml"}, "spec": {"nodeName": node_name, "containers": [
        {"name": "c", "resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}}]},
        "status": {"phase": "Running"}}


ROLL = {"compliant": False, "actions": ["drain", "rke2_config", "restart", "verify", "uncordon", "label"]}
HOSTVARS = {
    "a": {"rke2_numa_compliance": ROLL},                                   # busy: a GPU pod runs there
    "b": {"rke2_numa_compliance": ROLL, "rke2_numa_node_name": "node-b"},  # idle
    "c": {"rke2_numa_compliance": {"compliant": True, "actions": []}},     # stale markers
    "d": {"rke2_numa_compliance": {"compliant": True, "actions": []}},     # left cordoned by an earlier roll
    "e": {"rke2_numa_compliance": {"compliant": True, "actions": []}},
    "f": {"rke2_numa_compliance": {"compliant": False, "runs_plan": True, "actions": ["rke2_config"]}},  # config.yaml 0644: fixed in place
    "g": {"rke2_numa_compliance": {"compliant": False, "runs_plan": True, "actions": ["rke2_config"]}},  # the same, left cordoned: rolled
    "i": {"rke2_numa_compliance": {"compliant": False, "runs_plan": True, "actions": ["label"]}},  # labels of another plan: in place
    "h": {"rke2_numa_compliance": {"compliant": False, "actions": [], "blocked": ["a drop-in overrides the plan"]}},  # never rolled
}
REPLY = {"kind": "List", "items": [node("a"), node("node-b"), node("c", False, **{C: "true", FAILED: "x"}),
                                   node("d", True, **{C: "true"}), node("e"), node("f", False, **{C: "true"}),
                                   node("g", True, **{C: "true"}), node("h", True, **{C: "true"}), gpu_pod("train", "a")]}


def test_one_nodes_and_pods_read_gives_the_markers_the_order_and_the_stale_nodes():
    markers = F["node_markers"](REPLY, C, FAILED)
    assert sorted(markers) == ["a", "c", "d", "e", "f", "g", "h", "node-b"], "the pod is not a Node"
    hosts = sorted(HOSTVARS)
    # the nodes an earlier (dead) roll left cordoned first - they are out already -, then idle first, each by name
    pods = [i for i in REPLY["items"] if i["kind"] == "Pod"]
    assert roll_pick.to_roll(HOSTVARS, hosts, markers, pods, "nvidia.com/gpu") == ["d", "g", "b", "a"]
    assert roll_pick.to_roll(HOSTVARS, hosts, markers, pods, "nvidia.com/gpu", "sorted") == ["d", "g", "a", "b"]
    assert roll_pick.to_fix(HOSTVARS, hosts, markers) == ["f", "i"], "only its mode or labels to fix: never drained"
    assert roll_pick.blocked(HOSTVARS, hosts) == ["h"], "blocked: never rolled, even when an earlier roll left it cordoned"
    assert F["roll_stale_markers"](HOSTVARS, hosts, markers) == ["c", "f"]
    assert F["roll_stale_markers"](HOSTVARS, ["a", "b", "e"], markers) == []
    # the pick play's one add_host task: the three groups, the hosts to roll first and in their order
    assert F["roll_groups"](HOSTVARS, hosts, markers, REPLY, "nvidia.com/gpu") == (
        [{"host": h, "group": "rke2_numa_to_roll"} for h in ("d", "g", "b", "a")]
        + [{"host": h, "group": "rke2_numa_to_fix"} for h in ("f", "i")] + [{"host": "h", "group": "rke2_numa_blocked"}])


def test_roll_settings_read_the_runs_own_values_wherever_the_operator_set_them():
    hostvars = {"a": {"rke2_numa_serial": 2, "rke2_numa_drain_timeout": 60, "awx_workflow_job_id": 42},
                "b": {"rke2_numa_serial": 2, "rke2_numa_node_name": "node-b"}}
    got = F["roll_settings"](hostvars, "a", ["a", "b"], 1796112000, "ab12")
    seconds = 180 + 300 + 120 + 180 + 120   # the longest stretch between two renewals: the kubelet's start to the labels
    assert got == {"id": "awx-workflow-42", "run": "ab12", "lease_seconds": seconds, "slot_wait": seconds - 120, "max_unavailable": 2,
                   "nodes": ["a", "node-b"], "serial": 2, "resume": False, "window_end": ""}
    # the window: its end as given, or its duration from the roll's start (a nightly schedule's)
    assert F["roll_settings"]({"a": {"rke2_numa_window_end": "2026-12-01T06:00:00Z"}}, "a", ["a"], 0)["window_end"] == "2026-12-01T06:00:00Z"
    assert F["roll_settings"]({"a": {"rke2_numa_window_minutes": "240"}}, "a", ["a"], 1796112000)["window_end"] == "2026-12-01T12:00:00Z"
    assert F["roll_settings"]({"a": {"rke2_numa_roll_id": "mine"}}, "a", ["a"], 0)["serial"] == 1
    # resuming a dead roll: only with its id
    assert F["roll_settings"]({"a": {"rke2_numa_roll_id": "mine", "rke2_numa_roll_resume": "true"}}, "a", ["a"], 0)["resume"] is True
    assert F["roll_settings"]({"a": {"rke2_numa_roll_resume": True}}, "a", ["a"], 0)["resume"] is False
    # 0 and "0" compute the Lease's duration (a Lease of 0 s is one the API server refuses)
    for zero in (0, "0", " 0 ", None, ""):
        assert F["roll_settings"]({"a": {"rke2_numa_roll_lease_seconds": zero}}, "a", ["a"], 0)["lease_seconds"] > 0, zero
    # a Lease shorter than the work between two renewals: refused before the first write
    with pytest.raises(AnsibleFilterError, match="the roll's Lease would last 300 s, but the drain may take 3600 s"):
        F["roll_settings"]({"a": {"rke2_numa_roll_lease_seconds": "300", "rke2_numa_drain_timeout": 3600}}, "a", ["a"], 0)
    # a batch of 10 in waves of 5 (--forks): twice the stretch
    ten = {h: {"rke2_numa_serial": 10} for h in "abcdefghij"}
    assert F["roll_settings"](ten, "a", list(ten), 0, "", 5)["lease_seconds"] == 2 * 780 + 120
    # the fleet-wide cap: its own value, a percentage, and never a batch larger than a number of nodes
    capped = F["roll_settings"]({"a": {"rke2_numa_serial": 4, "rke2_numa_max_unavailable": "2"}}, "a", ["a"], 0, "cd")
    assert (capped["serial"], capped["max_unavailable"]) == (2, 2)
    share = F["roll_settings"]({"a": {"rke2_numa_serial": "50%", "rke2_numa_max_unavailable": "10%"}}, "a", ["a"], 0, "cd")
    assert (share["serial"], share["max_unavailable"]) == ("50%", "10%")
    hostvars["b"]["rke2_numa_serial"] = "50%"
    try:
        F["roll_settings"](hostvars, "a", ["a", "b"], 0)
    except Exception as e:   # AnsibleFilterError
        assert "rke2_numa_serial differs between the hosts of the roll" in str(e)
    else:
        raise AssertionError("two batch sizes in one roll")
