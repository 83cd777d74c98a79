# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for Rancher-managed nodes (logic in plugin_utils/rancher.py)."""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rancher import machine_labels, managed_by, rancher_at_work


def rke2_numa_rancher_machines(reply):
    """{Node name: rke.cattle.io/machine} from a ``kubectl get nodes[,pods] -o json`` reply."""
    return machine_labels((reply or {}).get("items"))


def rke2_numa_rancher_at_work(node, rancher, cordoned_key):
    """Why Rancher's work on this node keeps the roll away from it: ``rancher`` is rancher_agent_info's result."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    return rancher_at_work(managed_by(rancher, labels), node, cordoned_key)


class FilterModule(object):
    """maitred.rke2_numa Rancher filters."""

    def filters(self):
        return {"rancher_machines": rke2_numa_rancher_machines, "rancher_at_work": rke2_numa_rancher_at_work}
