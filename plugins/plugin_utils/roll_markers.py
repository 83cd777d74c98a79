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

import json


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


def fence_findings(node, node_name, roll_id, cordoned_key, admin_cordon=False):
    """Why the roll must not take its next destructive step on ``node_name`` (``[]``: it may): the Node read just
    before the step (``node``: the object, None when it is gone) must still be cordoned and carry this roll's marker -
    or, on a node an admin had cordoned (``admin_cordon``: the roll kept that cordon and wrote no marker), no marker at
    all. A roll that took the Lease over in between uncordoned it, or marked it as its own; an admin uncordoned it."""
    meta = (node or {}).get("metadata") or {}
    if not node or meta.get("name") != node_name:
        return ["the Node %s could not be read as itself" % node_name]
    findings = []
    marker = (meta.get("annotations") or {}).get(cordoned_key)
    if admin_cordon:
        if marker is not None:
            findings.append("the Node an admin had cordoned carries the marker of roll %s now (%s)" % (marker, cordoned_key))
    elif marker != roll_id:
        findings.append("the Node carries %s, not this roll's marker %s=%s" % (
            "the marker of roll %s" % marker if marker else "no marker of ours", cordoned_key, roll_id))
    if not (node.get("spec") or {}).get("unschedulable"):
        findings.append("the Node is schedulable again (uncordoned since this roll cordoned it)")
    return findings


def cordon_patch(roll_id, cordoned_key):
    """The one request that takes a Node out for a roll: a JSON merge patch (RFC 7386, ``kubectl patch --type=merge``)
    setting ``spec.unschedulable`` and our marker together - the API server applies a patch as one update, so no
    state exists where our cordon is unmarked (a roll killed between a cordon and an annotate left one, which the
    next roll took for an admin's: never returned to service) nor a marker without its cordon."""
    return json.dumps({"metadata": {"annotations": {cordoned_key: str(roll_id)}}, "spec": {"unschedulable": True}},
                      sort_keys=True, separators=(",", ":"))


def release_patch(cordoned_key, failed_key, uncordon):
    """The one request that returns a Node to service: our markers removed and - ``uncordon``: we cordoned it - the
    cordon lifted, as kubectl uncordon's patch does (pkg/drain/cordon.go PatchOrReplaceWithContext: a two-way merge
    patch of spec.unschedulable false, which omitempty turns into null)."""
    patch = {"metadata": {"annotations": {cordoned_key: None, failed_key: None}}}
    if uncordon:
        patch["spec"] = {"unschedulable": None}
    return json.dumps(patch, sort_keys=True, separators=(",", ":"))
