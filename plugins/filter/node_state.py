# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters the kubelet_reset and verify roles decide with (logic in plugin_utils)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.compliance import unread_reason
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
            "node_unread": node_unread,
            "verify_plan": verify_plan,
        }
