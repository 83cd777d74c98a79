# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_check's inputs from the host's variables (read_from_vars, check_from_vars): the tables and their reading."""
from __future__ import annotations

import os
import re

from ansible_collections.maitred.rke2_numa.plugins.modules import node_state_info
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import node_inputs, specs
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.compliance import CHECK_FACTS
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_inputs import check_inputs, read_inputs

COMMON = {"rke2_numa_sysfs_root": "/", "rke2_numa_boot_root": "/host", "rke2_numa_boot_method": "auto",
          "rke2_numa_kubelet_dir": "/var/lib/kubelet", "rke2_numa_config_path": "/etc/rancher/rke2/config.yaml",
          "rke2_numa_nfd_features_dir": "/etc/nfd/features.d", "__rke2_numa_nfd_features_file": "rke2-numa",
          "rke2_numa_config_mode": "dropin", "rke2_numa_kubelet_config": "flags",
          "rke2_numa_config_dropin_path": "/etc/rancher/rke2/config.yaml.d/90-rke2-numa.yaml", "rke2_numa_labels_via": "kubectl",
          "rke2_numa_node_name": "node-a", "inventory_hostname": "gpu-a", "rke2_numa_audit_pods": "yes",
          "__rke2_numa_node_labels": {"node-a": {"k": "v"}}, "__rke2_numa_rancher_machines": {"node-a": "m-1"},
          "__rke2_numa_kubelet_versions": {"node-a": "v1.35.2+rke2r1", "node-b": "v1.34.0"},
          "__rke2_numa_pod_audits": {"node-a": {"unpinned": ["ns/p"], "topology_errors": []}},
          "__rke2_numa_pod_audit_default": {"unpinned": [], "topology_errors": []}}


def value_of(variables):
    return variables.get


def entry_of(variables):
    return lambda name, node: (variables.get(name) or {}).get(node)


def check(given=None, **changes):
    variables = dict(COMMON, **changes)
    return check_inputs(given or {}, value_of(variables), entry_of(variables))


COMMON_VARS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "common", "vars", "main.yml")


def test_each_input_is_an_option_of_node_state_info_or_the_decision_from_a_variable_of_the_collection():
    with open(node_state_info.__file__, encoding="utf-8") as f:   # its argument_spec, as main() declares it
        declared = set(re.findall(r"^ {12}(\w+)=dict\(", f.read(), re.M))
    assert "sysfs_root" in declared and set(dict(node_inputs.READ_VARIABLES)) <= declared
    with open(COMMON_VARS, encoding="utf-8") as f:
        private = f.read()
    names = [n for dummy, ns in node_inputs.READ_VARIABLES for n in ns] + [n for dummy, n in node_inputs.CHECK_VARIABLES]
    for name in names + [node_inputs.NODE_NAME, node_inputs.AUDIT_PODS]:
        assert (name + ":" in private) if name.startswith("__") else specs.owner(name) in ("common", "prove"), name


def test_the_read_from_the_common_roles_variables_the_tasks_own_options_first():
    assert read_inputs({}, value_of(COMMON)) == {
        "sysfs_root": "/", "boot_root": "/host", "boot_method": "auto", "kubelet_dir": "/var/lib/kubelet",
        "config_path": "/etc/rancher/rke2/config.yaml", "nfd_features_file": "/etc/nfd/features.d/rke2-numa", "rancher_root": "/host"}
    assert read_inputs({"sysfs_root": "/copy"}, value_of(COMMON))["sysfs_root"] == "/copy"
    # an unset variable leaves its option out (node_state_info's default), a file without its folder too
    without = dict(COMMON)
    del without["rke2_numa_kubelet_dir"], without["rke2_numa_nfd_features_dir"]
    read = read_inputs({}, value_of(without))
    assert "kubelet_dir" not in read and "nfd_features_file" not in read and read["config_path"] == COMMON["rke2_numa_config_path"]


def test_the_decision_reads_the_common_roles_variables_and_the_nodes_entries_of_the_clusters_read():
    assert check() == {"config_mode": "dropin", "kubelet_config": "flags", "dropin_path": COMMON["rke2_numa_config_dropin_path"],
                       "labels_via": "kubectl", "node_labels": {"k": "v"}, "rancher_machine": "m-1",
                       "kubelet_version": "v1.35.2+rke2r1", "pod_audit": {"unpinned": ["ns/p"], "topology_errors": []}}


def test_a_node_the_read_has_no_entry_for_gets_nulls_and_the_audits_default_entry():
    found = check(rke2_numa_node_name="node-z")
    assert (found["node_labels"], found["rancher_machine"], found["kubelet_version"]) == (None, None, None)
    assert found["pod_audit"] == COMMON["__rke2_numa_pod_audit_default"]
    # no node name of its own: the inventory's
    assert check(rke2_numa_node_name=None, inventory_hostname="node-b")["kubelet_version"] == "v1.34.0"


def test_pods_not_audited_give_an_empty_entry_and_an_unread_cluster_nulls():
    assert check(rke2_numa_audit_pods="false")["pod_audit"] == {}
    unread = dict(COMMON)
    for name in ("__rke2_numa_node_labels", "__rke2_numa_rancher_machines", "__rke2_numa_kubelet_versions", "__rke2_numa_pod_audits"):
        del unread[name]
    found = check_inputs({}, value_of(unread), entry_of(unread))
    assert (found["node_labels"], found["kubelet_version"]) == (None, None)
    assert found["pod_audit"] == COMMON["__rke2_numa_pod_audit_default"]


def test_what_the_caller_gives_wins_a_null_too():
    """rolling.yml's read after the roll (node_labels null, pod_audit {}), prove.yml's (nothing of the cluster's read)."""
    found = check({"node_labels": None, "pod_audit": {}})
    assert found["node_labels"] is None and found["pod_audit"] == {} and found["kubelet_version"] == "v1.35.2+rke2r1"
    given = {"labels_via": "none", "node_labels": None, "rancher_machine": None, "kubelet_version": None, "pod_audit": {}}
    assert check(given) == dict(given, config_mode="dropin", kubelet_config="flags", dropin_path=COMMON["rke2_numa_config_dropin_path"])


def test_the_node_name_is_read_only_when_an_input_needs_it():
    asked = []
    given = {"node_labels": None, "rancher_machine": None, "kubelet_version": None, "pod_audit": {}}
    check_inputs(given, lambda name: asked.append(name) or COMMON.get(name), entry_of(COMMON))
    assert node_inputs.NODE_NAME not in asked and node_inputs.AUDIT_PODS not in asked


def test_the_inputs_are_what_the_decision_reads():
    keys = [k for k, dummy in node_inputs.CHECK_VARIABLES + node_inputs.CHECK_BY_NODE] + ["pod_audit"]
    assert set(check()) == set(keys) and "rke2_numa_pod_audit" in CHECK_FACTS


def test_checks_task_per_host_compiles_one_template_not_one_per_input():
    """Each host's worker compiles every template of its task anew: the inputs come from the tables above."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "playbooks", "tasks", "node_check.yml")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert text.count("{{") == 1 and "read_from_vars: true" in text and "check_from_vars: true" in text
