# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters the kubelet_reset and verify roles decide with (logic in plugin_utils)."""

from __future__ import annotations

import base64

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.compliance import assess
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_state import reset_reasons, topology_at_next_start
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import ConfigError, effective_config
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.verify import verify


def kubelet_reset_reasons(plan, topology, state):
    """Why the kubelet would refuse its checkpoints under ``plan`` (``state``: kubelet_state_info's result)."""
    return reset_reasons(plan, topology, state["cpu_manager"], state["memory_manager"])


def kubelet_start_topology(topology, plan):
    """The topology the kubelet will see at its next start under ``plan`` (runtime hugepages allocated)."""
    return topology_at_next_start(topology, plan)


def rke2_kubelet_args(slurped):
    """Effective ``kubelet-arg`` of RKE2 from slurp results, in RKE2's reading order."""
    files = []
    for item in slurped:
        if item.get("content") is None:
            continue
        files.append((item.get("source", "?"), base64.b64decode(item["content"]).decode("utf-8")))
    files.sort(key=lambda f: (not f[0].endswith("/config.yaml"), f[0]))
    try:
        value = effective_config(files).get("kubelet-arg", [])
    except ConfigError as e:
        raise AnsibleFilterError(str(e))
    return [value] if isinstance(value, str) else [str(v) for v in value]


def verify_plan(plan, topology, state, kubelet_args):
    """The verify report: {ok, errors, warnings}."""
    return verify(plan, topology, state["cpu_manager"], state["memory_manager"], kubelet_args)


def node_compliance(plan, state, config_mode="merge", dropin_path=None, labels_via="nfd", node_labels=None):
    """{compliant, runs_plan, reasons, actions, blocked, plan_fingerprint, warnings} for ``state`` (node_state_info's
    result); ``node_labels``: the Node's labels from the API (None when not read)."""
    try:
        return assess(plan, state, config_mode, dropin_path, labels_via, node_labels)
    except Exception as e:  # a rule's refusal (a kernel arg the plan should not hold...): the host fails, naming it
        raise AnsibleFilterError("cannot decide compliance: %s" % e)


class FilterModule(object):
    """maitred.rke2_numa node state filters."""

    def filters(self):
        return {
            "kubelet_reset_reasons": kubelet_reset_reasons,
            "kubelet_start_topology": kubelet_start_topology,
            "node_compliance": node_compliance,
            "rke2_kubelet_args": rke2_kubelet_args,
            "verify_plan": verify_plan,
        }
