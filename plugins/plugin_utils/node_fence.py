# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fence before a roll's destructive step on a node (playbooks/tasks/fence.yml): the roll_lease action reads the
Node just before the step and renews the Lease only when this says nothing keeps the step from happening."""

from __future__ import annotations

import json

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.maintainers import maintainers_at_work
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rancher import managed_by, rancher_at_work
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_markers import fence_findings


def node_fence(node_reply, node_name, roll, rancher=None, foreign_annotations=(), now=0.0, admin_cordon=False, markers_only=False):
    """Why the next destructive step must not happen on ``node_name`` ([] when it may), read just before it: the Node
    still cordoned under this roll's marker (plugin_utils/roll_markers.py fence_findings), no maintainer at work on it
    since the cordon - an autoscaler's taint, a foreign annotation (plugin_utils/maintainers.py), Rancher's interlock
    files on the host (``rancher``: rancher_agent_info's result; plugin_utils/rancher.py). ``node_reply``: ``kubectl
    get node NAME -o json`` (text or parsed). ``markers_only``: the first part alone - is the Node still this roll's
    (a maintainer at work on a Node that is: the roll may return it to service before its first write)."""
    node = node_reply
    if isinstance(node_reply, str):
        try:
            node = json.loads(node_reply) if node_reply.strip() else None
        except ValueError:
            node = None
    roll = roll or {}
    node = node if isinstance(node, dict) and (node.get("metadata") or {}).get("name") == str(node_name) else None
    findings = fence_findings(node, str(node_name), str(roll.get("id") or ""), str(roll.get("marker") or ""), bool(admin_cordon))
    if node is None or markers_only:   # not read as itself: nothing more to judge on it
        return findings
    findings += maintainers_at_work(node, [], [], "", list(foreign_annotations or []), float(now), str(roll.get("id") or ""))
    if rancher:
        labels = (node.get("metadata") or {}).get("labels") or {}
        managed = managed_by(rancher, labels)
        # on a node an admin had cordoned, the cordon without our marker is the admin's (the drain role's check before it
        # refused a Rancher node's): Rancher's interlock files only
        findings += list(managed.get("at_work") or []) if admin_cordon else rancher_at_work(managed, node, str(roll.get("marker") or ""))
    return findings
