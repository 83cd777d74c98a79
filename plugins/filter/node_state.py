# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters the kubelet_reset and verify roles decide with (logic in plugin_utils)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.compliance import assess, unread_reason
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_state import reset_reasons, reset_wait_errors, topology_at_next_start
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import ConfigError
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.verify import verify_node


def kubelet_reset_reasons(plan, topology, state):
    """Why the kubelet would refuse its checkpoints under ``plan`` (``state``: kubelet_state_info's result)."""
    return reset_reasons(plan, topology, state["cpu_manager"], state["memory_manager"])


def kubelet_start_topology(topology, plan):
    """The topology the kubelet will see at its next start under ``plan`` (runtime hugepages allocated)."""
    return topology_at_next_start(topology, plan)


def verify_plan(plan, state):
    """The verify report {ok, errors, warnings, findings} of ``state`` (node_state_info's result) against ``plan``."""
    try:
        return verify_node(plan, state)
    except ConfigError as e:
        raise AnsibleFilterError("cannot read RKE2's config as RKE2 does: %s" % e)


def node_compliance(plan, state, config_mode="auto", dropin_path=None, labels_via="nfd", node_labels=None, rancher_machine=None):
    """{compliant, runs_plan, reasons, actions, blocked, plan_fingerprint, warnings} for ``state`` (node_state_info's
    result); ``node_labels``: the Node's labels from the API (None when not read); ``rancher_machine``: the Node's
    rke.cattle.io/machine label (None when not read or not there)."""
    try:
        return assess(plan, state, config_mode, dropin_path, labels_via, node_labels, rancher_machine)
    except Exception as e:  # a rule's refusal (a kernel arg the plan should not hold...): the host fails, naming it
        raise AnsibleFilterError("cannot decide compliance: %s" % e)


def node_unread(state):
    """Why node_state_info could not read the node ('' when it could): ``cannot read <places> as <user> (run with
    become)``, from its result's ``access``."""
    return unread_reason(state)


class FilterModule(object):
    """maitred.rke2_numa node state filters."""

    def filters(self):
        return {
            "kubelet_reset_reasons": kubelet_reset_reasons,
            "kubelet_start_topology": kubelet_start_topology,
            "reset_wait_bounds": reset_wait_errors,
            "node_compliance": node_compliance,
            "node_unread": node_unread,
            "verify_plan": verify_plan,
        }
