# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where node_check's inputs come from when its task takes them from the host's variables (read_from_vars,
check_from_vars; playbooks/tasks/node_check.yml): one table each, read on the controller - not a template per input
that every host's worker compiles anew (12 ms of a host's 55 ms of worker CPU in a check of 12 nodes)."""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.values import as_boolean

# node_state_info's option -> the variables whose values, joined with "/", give it (the common role's)
READ_VARIABLES = (
    ("sysfs_root", ("rke2_numa_sysfs_root",)),
    ("boot_root", ("rke2_numa_boot_root",)),
    ("boot_method", ("rke2_numa_boot_method",)),
    ("kubelet_dir", ("rke2_numa_kubelet_dir",)),
    ("config_path", ("rke2_numa_config_path",)),
    ("nfd_features_file", ("rke2_numa_nfd_features_dir", "__rke2_numa_nfd_features_file")),
    ("rancher_root", ("rke2_numa_boot_root",)),
)

# what the decision reads beside the node -> the common role's variable that says it
CHECK_VARIABLES = (
    ("config_mode", "rke2_numa_config_mode"),
    ("kubelet_config", "rke2_numa_kubelet_config"),
    ("dropin_path", "rke2_numa_config_dropin_path"),
    ("labels_via", "rke2_numa_labels_via"),
)

# what the decision reads beside the node -> the run's fact holding it for every Node, by the Node's name (the pod
# audit's one read of the cluster, roles/prove/tasks/audit.yml); a Node without an entry: null
CHECK_BY_NODE = (
    ("node_labels", "__rke2_numa_node_labels"),
    ("rancher_machine", "__rke2_numa_rancher_machines"),
    ("kubelet_version", "__rke2_numa_kubelet_versions"),
)

# the Node's entry of the pod audit (audit.yml), when rke2_numa_audit_pods: a Node without one gets the default entry
POD_AUDITS, POD_AUDIT_DEFAULT, AUDIT_PODS = "__rke2_numa_pod_audits", "__rke2_numa_pod_audit_default", "rke2_numa_audit_pods"
NODE_NAME = "rke2_numa_node_name"


def read_inputs(given, value):
    """node_state_info's options: ``given``'s, and each it leaves out from its variables (``value(name)``: the host's
    variable, templated; None when unset - the option is then left out, its default applies)."""
    out = dict(given)
    for option, names in READ_VARIABLES:
        if option not in out:
            parts = [value(name) for name in names]
            if all(part is not None for part in parts):
                out[option] = "/".join(str(part) for part in parts)
    return out


def check_inputs(given, value, entry):
    """What the decision reads beside the node: ``given``'s (a null given stays null), and each it leaves out from the
    common role's variables (``value(name)`` as for read_inputs) and the run's facts about the Node (``entry(name,
    node)``: the Node's entry of a fact held for every Node, templated; None when there is none - the fact is a
    fleet's, never templated whole for each host)."""
    out = dict(given)
    for key, name in CHECK_VARIABLES:
        if key not in out:
            out[key] = value(name)
    by_node = [(key, name) for key, name in CHECK_BY_NODE + (("pod_audit", POD_AUDITS),) if key not in out]
    node = (value(NODE_NAME) or value("inventory_hostname")) if by_node else None
    for key, name in by_node:
        if key != "pod_audit":
            out[key] = entry(name, node)
        elif as_boolean(value(AUDIT_PODS)):   # checked as a boolean before the first task (playbook_inputs)
            audit = entry(POD_AUDITS, node)
            out[key] = audit if audit is not None else value(POD_AUDIT_DEFAULT) or {}
        else:
            out[key] = {}
    return out
