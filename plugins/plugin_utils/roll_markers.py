# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What earlier rolls left on the Nodes, read once per roll from ``kubectl get nodes,pods -A -o json`` (controller side).

A Node carries our ``cordoned`` marker while a roll of ours holds it cordoned, and our ``failed`` reason while a
failed node waits for an admin. A marker is trusted only together with what it stands for: a node is "left
cordoned by an earlier roll" only while it is still ``spec.unschedulable`` (someone may have uncordoned it since,
or the cordon never happened); on a schedulable node the markers are stale, and are cleared rather than acted on.
"""

from __future__ import annotations


def node_markers(reply, cordoned_key, failed_key):
    """{Node name: {unschedulable, cordoned_by_us, roll, failed, stale}} for every Node of the reply.

    ``cordoned_by_us``: our marker is there and the Node is still cordoned (an earlier roll left it so); ``roll``: the
    id of the roll that cordoned it (the marker's value; ``"true"`` from a roll before roll ids);
    ``stale``: one of our markers is there but the Node is schedulable.
    """
    out = {}
    for item in (reply or {}).get("items") or []:
        if item.get("kind", "Node") != "Node":  # the read that serves the pod audit and the roll order too
            continue
        meta = item.get("metadata") or {}
        name = meta.get("name")
        if not isinstance(name, str):
            continue
        annotations = meta.get("annotations") or {}
        unschedulable = bool((item.get("spec") or {}).get("unschedulable"))
        marked = cordoned_key in annotations
        out[name] = {
            "unschedulable": unschedulable,
            "cordoned_by_us": marked and unschedulable,
            "roll": str(annotations.get(cordoned_key)) if marked else None,
            "failed": annotations.get(failed_key),
            "stale": (marked or failed_key in annotations) and not unschedulable,
        }
    return out


def stale_nodes(hosts, markers):
    """The Nodes whose markers to clear, sorted: ``hosts`` [{node, compliant}] that run their plan and whose Node is
    schedulable but still carries our markers (an interrupted run, or an admin uncordoned it). Nothing to roll there."""
    return sorted(set(h["node"] for h in hosts if h.get("compliant") and (markers or {}).get(h["node"], {}).get("stale")))
