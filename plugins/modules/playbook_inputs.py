#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

# This is a documentation stub: the work is done by the action plugin of the
# same name (plugins/action/playbook_inputs.py), on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: playbook_inputs
short_description: Refuse a playbook's hostile or careless inputs before its first cluster call and its first write
version_added: 0.1.0
description:
  - The argument spec of the variables of the C(check), C(rolling), C(labels), C(prove) and C(access) playbooks, and the
    rules their values must meet. Each playbook runs it first, for every host, before it reads the cluster or
    writes anything; a refusal names the host, the variable and its value, and lists every problem at once.
  - Names that reach kubectl are names - a Node name is an RFC 1123 subdomain of at most 253 characters (one
    that starts with C(-) would be read as a flag), a namespace an RFC 1123 label, annotation keys qualified
    names, a pod selector a label selector as the API server parses it.
  - Numbers are bounded, and a value that would widen the run's reach is refused - C(rke2_numa_serial=0) (every
    host at once to Ansible), C(rke2_numa_drain_timeout=0) (forever to kubectl), a C(rke2_numa_server_group)
    that is not a group of the inventory (kubectl would silently run on the controller), and for a roll a
    C(rke2_numa_window_end) already past (it says how long ago it ended).
  - A variable not given is not checked here; its role's default applies.
  - Runs on the controller only (an action plugin); it never contacts the host.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.controller
options:
  playbook:
    description: The playbook whose inputs these are; C(rolling) also refuses a window that has ended.
    type: str
    required: true
    choices: [check, rolling, labels, prove, plan, access]
  hosts:
    description:
      - Check these hosts in one run (with C(run_once), the play's hosts) instead of the current host only. Each
        host's variables are read from C(hostvars) (inventory, facts, C(-e)) over the values given in O(inputs)
        (the play's, the same for every host); a host without its own C(rke2_numa_node_name) is checked under its
        inventory name (the drain role's default), and O(inputs.inventory_hostname) stands for each host's own.
      - One task instead of one per host - a fleet's check starts a worker once, not once per host.
    type: list
    elements: str
  roles:
    description:
      - Also check every host's values of these roles' variables against the role's argument spec (its
        C(meta/argument_specs.yml), entry point C(main)), as ansible-core's role validation does before a role's first
        task - once for every host, not a task per host. The playbooks that import a role without its own validation
        (C(rolespec_validate=false)) name it here.
      - The current host's values are templated as ansible-core templates them; another host's are its own (C(hostvars))
        over the current host's that are not its own (the role's defaults, the play's vars). One of its own that does not
        template is a problem of that host, named.
    type: list
    elements: str
    choices: [common]
    default: []
  inputs:
    description: The playbook's variables set for this host, by name (pass C(omit) for one that is not set).
    type: dict
    required: true
    suboptions:
      inventory_hostname:
        description:
          - The host's inventory name, given when it names report or plan files (C(<dir>/<host>.json)) - letters,
            digits, C(-), C(_), C(.) and C(@), no C(/) or leading C(.), and not C(fleet) (the fleet's own file).
        type: raw
      rke2_numa_node_name:
        description: The Node's name in the cluster - an RFC 1123 subdomain, at most 253 characters.
        type: raw
      rke2_numa_kubectl:
        description: The kubectl program - an absolute path or a command name.
        type: raw
      rke2_numa_kubeconfig:
        description: The kubeconfig kubectl uses - an absolute path.
        type: raw
      rke2_numa_server_group:
        description: The inventory group of the RKE2 servers - empty, or a group of the inventory with a host.
        type: raw
      rke2_numa_kubectl_host:
        description: The host that runs kubectl - a host of the inventory or C(localhost).
        type: raw
      rke2_numa_kured_daemonset:
        description: C(namespace/name) of kured's DaemonSet, or empty (not checked).
        type: raw
      rke2_numa_kured_hold:
        description: C(auto), or true or false - hold kured's reboot lock during a roll.
        type: raw
      rke2_numa_foreign_node_annotations:
        description: Node annotation keys (qualified names) that say another tool maintains the node.
        type: raw
      rke2_numa_probe_namespace:
        description:
          - The namespace of the probe pods - an RFC 1123 label; for C(access), the collection's own (not C(default)
            nor C(kube-*)).
        type: raw
      rke2_numa_drain_namespaces:
        description: The namespaces whose pods a roll may evict - at most 100 RFC 1123 labels, none C(kube-*); empty - every one.
        type: raw
      rke2_numa_drain_pod_selector:
        description: C(kubectl drain --pod-selector) - empty, or a label selector.
        type: raw
      rke2_numa_drain_timeout:
        description: Seconds C(kubectl drain) may take - 1 to 14400 (kubectl waits forever on 0).
        type: raw
      rke2_numa_drain_grace_period:
        description: C(kubectl drain --grace-period) - 1 to 3600 s, or null (each pod's own).
        type: raw
      rke2_numa_node_ready_timeout:
        description: Seconds to wait for the Node Ready - 1 to 3600.
        type: raw
      rke2_numa_serial:
        description: Nodes rolled at a time - an integer of at least 1, a percentage from 1% to 100%, or a list of those.
        type: raw
      rke2_numa_max_fail_percentage:
        description: The failed nodes, in percent of those to roll, past which no batch starts - 0 to 100.
        type: raw
      rke2_numa_node_minutes:
        description: Minutes one node is expected to take in the window - above 0, at most 1440.
        type: raw
      rke2_numa_window_end:
        description: The end of the maintenance window - empty, or ISO 8601 with a UTC offset; for a roll, not past.
        type: raw
      rke2_numa_roll_order:
        description: The order of a roll - C(idle_first) or C(sorted).
        type: raw
      rke2_numa_roll_id:
        description: The roll's id - empty, or lowercase letters, digits, C(-) and C(.), at most 63.
        type: raw
      rke2_numa_roll_lease_namespace:
        description: The roll Lease's namespace - an RFC 1123 label.
        type: raw
      rke2_numa_roll_lease_name:
        description: The roll Lease's name - an RFC 1123 subdomain.
        type: raw
      rke2_numa_roll_resume:
        description: Whether this run resumes the roll C(rke2_numa_roll_id) whose runs are gone - only with that id.
        type: raw
      rke2_numa_roll_lock_wait:
        description: Seconds to wait for another roll's Lease - 0 to 43200.
        type: raw
      rke2_numa_roll_lease_seconds:
        description: The Lease's duration - 0 (computed) or 120 to 28800.
        type: raw
      rke2_numa_max_unavailable:
        description: The most Nodes a roll's runs have out together - empty, 1 to 10000, or 1% to 100%.
        type: raw
      rke2_numa_allow_pending_pods:
        description: Whether a roll may drain a node whose GPU pods fit nowhere else - a boolean.
        type: raw
      rke2_numa_labels_via:
        description: How the NUMA labels are published - C(nfd), C(kubectl) or C(none).
        type: raw
      rke2_numa_nfd_features_dir:
        description: The folder of NFD's feature files - an absolute path.
        type: raw
      rke2_numa_labels_timeout:
        description: Seconds to wait for the labels on the Node, or for NFD to let go of them - 1 to 3600.
        type: raw
      rke2_numa_reboot_ok:
        description: Whether a roll may reboot a node - a boolean.
        type: raw
      rke2_numa_audit_pods:
        description: Whether the check audits the pods - a boolean.
        type: raw
      rke2_numa_prove:
        description: Whether a roll proves the pinning with probe pods - a boolean.
        type: raw
      rke2_numa_admin_kubeconfig:
        description: (access) The admin kubeconfig the identity is created with - an absolute path.
        type: raw
      rke2_numa_access_kubeconfig:
        description:
          - (access) Where the scoped kubeconfig is written - required, the absolute path of a file, never the admin
            kubeconfig.
        type: raw
      rke2_numa_access_token_duration:
        description: (access) The bound token's lifetime - 10m to 7d (seconds, or C(8h), C(90m)); never forever.
        type: raw
      rke2_numa_access_kubeconfig_owner:
        description: (access) The user who owns the scoped kubeconfig (it runs kubectl with it) - a user name.
        type: raw
      rke2_numa_access_server:
        description: (access) Another API server address for the scoped kubeconfig - an https URL, or empty.
        type: raw
      rke2_numa_access_ca:
        description: (access) The PEM CA file that verifies that server - an absolute path, or empty (the admin kubeconfig's).
        type: raw
      rke2_numa_access_namespace:
        description: (access) The ServiceAccount's namespace - an RFC 1123 label; not the probe namespace.
        type: raw
"""

EXAMPLES = r"""
- name: Refuse hostile or careless inputs before anything else, for every host of the play at once
  maitred.rke2_numa.playbook_inputs:
    playbook: rolling
    hosts: "{{ ansible_play_hosts }}"
    inputs:
      rke2_numa_node_name: "{{ rke2_numa_node_name | default(omit) }}"
      rke2_numa_serial: "{{ rke2_numa_serial | default(omit) }}"
      rke2_numa_window_end: "{{ rke2_numa_window_end | default(omit) }}"
  run_once: true
  any_errors_fatal: true

- name: The same, and every host's values of the common role's variables against its argument spec
  maitred.rke2_numa.playbook_inputs:
    playbook: check
    hosts: "{{ ansible_play_hosts }}"
    roles: [common]
    inputs:
      rke2_numa_audit_pods: "{{ rke2_numa_audit_pods | default(omit) }}"
  run_once: true
  any_errors_fatal: true
"""

RETURN = r"""
errors:
  description: Every problem found, one message each (empty when the inputs are valid).
  returned: always
  type: list
  elements: str
  sample: ["rke2_numa_serial 0 must be a number of nodes >= 1 or a percentage from 1% to 100% (or a list of those)"]
refused:
  description: With O(hosts), each refused host and its problems (empty when every host's inputs are valid).
  returned: always
  type: dict
  sample: {"gpu-07": ["rke2_numa_node_name '-lgpu=true' is not a Node name: ..."]}
"""
