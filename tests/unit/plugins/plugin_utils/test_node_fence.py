# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fence before a roll's destructive step (plugin_utils/node_fence.py; the roll_lease action runs it first)."""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_fence import node_fence


def test_the_fence_on_a_node_an_admin_had_cordoned_wants_no_marker_at_all():
    """An admin's cordon is kept and never marked: the fence there wants no marker (another roll's is a takeover), the
    Node still cordoned, and Rancher's interlock files all the same (the Molecule roll fenced such a node: no marker)."""
    roll = {"id": "roll-a", "marker": "rke2-numa.maitred.io/cordoned"}

    def node(marker=None, cordoned=True):
        return {"metadata": {"name": "gpu-a", "annotations": {roll["marker"]: marker} if marker else {}}, "spec": {"unschedulable": cordoned}}

    assert node_fence(node(), "gpu-a", roll, admin_cordon=True) == []
    assert "no marker of ours" in node_fence(node(), "gpu-a", roll)[0], "a node the roll cordoned must carry its marker"
    assert "carries the marker of roll roll-b now" in node_fence(node("roll-b"), "gpu-a", roll, admin_cordon=True)[0]
    assert "schedulable again" in " ".join(node_fence(node(cordoned=False), "gpu-a", roll, admin_cordon=True))
    busy = {"managed_by": "rancher", "evidence": [], "at_work": ["rancher-system-agent is applying a plan (x)"]}
    assert node_fence(node(), "gpu-a", roll, busy, admin_cordon=True) == ["rancher-system-agent is applying a plan (x)"]
    assert node_fence(node("roll-a"), "gpu-a", roll) == []
