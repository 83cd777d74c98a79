# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for Rancher-managed nodes (logic in plugin_utils/rancher.py)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kube_names import dns1123_label_errors, qualified_name_errors
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import plans_of
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rancher import (
    machine_labels, managed_by, rancher_at_work, rancher_selector_config, rancher_selector_text)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import dropin_config


def rke2_numa_rancher_machines(reply):
    """{Node name: rke.cattle.io/machine} from a ``kubectl get nodes[,pods] -o json`` reply."""
    return machine_labels((reply or {}).get("items"))


def rke2_numa_rancher_at_work(node, rancher, cordoned_key):
    """Why Rancher's work on this node keeps the roll away from it: ``rancher`` is rancher_agent_info's result."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    return rancher_at_work(managed_by(rancher, labels), node, cordoned_key)


def rke2_numa_rancher_selector_config(hosts, hostvars, machine_label, cluster, dropin_path):
    """rancher.yaml's text for the planned ``hosts`` (their rke2_numa_plan in ``hostvars``; a host without one is left
    out): per hardware class, Rancher's machineSelectorConfig and machineSelectorFiles entries and the Secret."""
    errors = qualified_name_errors(machine_label) + (dns1123_label_errors(cluster) if cluster else [])
    if errors:
        raise AnsibleFilterError("rancher_selector_config: %s" % "; ".join(errors))
    plans = plans_of(hosts, hostvars)
    result = rancher_selector_config(plans, str(machine_label), str(cluster or "CLUSTER-NAME"), str(dropin_path),
                                     lambda plan: dropin_config(plan["kubelet_args"], plan.get("node_labels") or [], plan.get("node_taints") or []))
    return rancher_selector_text(result)


class FilterModule(object):
    """maitred.rke2_numa Rancher filters."""

    def filters(self):
        return {"rancher_machines": rke2_numa_rancher_machines, "rancher_at_work": rke2_numa_rancher_at_work,
                "rancher_selector_config": rke2_numa_rancher_selector_config}
