#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

# This is a documentation stub: the work is done by the action plugin of the
# same name (plugins/action/rke2_config.py), which merges on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rke2_config
short_description: Merge planned kubelet args into RKE2's config.yaml, keeping everything else
version_added: 0.1.0
description:
  - Merges the kubelet flags of a M(maitred.rke2_numa.numa_plan) plan into
    C(/etc/rancher/rke2/config.yaml) - every key it does not manage (server, token,
    node-label, ...) and every kubelet flag it does not manage are kept; managed flags
    are replaced by name, duplicates of them are normalised to one and reported.
  - Or, with O(mode=dropin), writes a C(config.yaml.d) file that appends with
    C(kubelet-arg+) and leaves C(config.yaml) alone, for clusters where another tool owns it.
  - The file is written atomically, mode 0600 root:root; the backup is 0600 too.
  - The join token never appears in the output - the diff is masked and the merge runs on
    the controller, so the node needs no PyYAML.
  - Comments in C(config.yaml) are not kept when it is rewritten (values and key order are).
author:
  - maitred.rke2_numa contributors (@maitred)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: Secret-looking values (keys ending in token, secret, password, key) are masked.
  platform:
    platforms: posix
options:
  path:
    description: RKE2's config file.
    type: path
    default: /etc/rancher/rke2/config.yaml
  mode:
    description: V(merge) edits O(path); V(dropin) writes O(dropin_path) and only reads O(path).
    type: str
    default: merge
    choices: [merge, dropin]
  dropin_path:
    description: The drop-in file for O(mode=dropin).
    type: path
    default: /etc/rancher/rke2/config.yaml.d/50-rke2-numa.yaml
  kubelet_args:
    description: The plan's C(kubelet_args), C(name=value) strings as they go under C(kubelet-arg).
    type: list
    elements: str
    required: true
  node_labels:
    description: Labels to add to C(node-label) (an entry with the same key is replaced).
    type: list
    elements: str
    default: []
  node_taints:
    description: Taints to add to C(node-taint) (an entry with the same key and effect is replaced).
    type: list
    elements: str
    default: []
  managed_flags:
    description: Kubelet flag names this module owns and replaces by name.
    type: list
    elements: str
    default: [cpu-manager-policy, cpu-manager-policy-options, topology-manager-policy, topology-manager-scope,
              topology-manager-policy-options, memory-manager-policy, reserved-cpus, kube-reserved,
              system-reserved, eviction-hard, reserved-memory]
  backup:
    description: Keep a timestamped 0600 copy of the previous file next to it.
    type: bool
    default: true
notes:
  - RKE2 reads C(config.yaml), then C(config.yaml.d/*.yaml) in lexical order; a later
    key replaces an earlier one and C(key+) appends to a list.
seealso:
  - module: maitred.rke2_numa.numa_plan
"""

EXAMPLES = r"""
- name: Merge the plan's kubelet args into config.yaml
  maitred.rke2_numa.rke2_config:
    kubelet_args: "{{ rke2_numa_plan.kubelet_args }}"
    node_labels: "{{ rke2_numa_plan.node_labels }}"

- name: Leave config.yaml to another tool and use a drop-in
  maitred.rke2_numa.rke2_config:
    mode: dropin
    kubelet_args: "{{ rke2_numa_plan.kubelet_args }}"
"""

RETURN = r"""
path:
  description: The file written (or that would be written).
  returned: always
  type: str
  sample: /etc/rancher/rke2/config.yaml
mode:
  description: merge or dropin.
  returned: always
  type: str
backup_file:
  description: The backup of the previous file, when one was made.
  returned: changed and backup
  type: str
report:
  description:
    - In merge mode - C(normalised) (managed flags that appeared more than once), C(replaced)
      (managed flags whose entries were replaced), C(kept_kubelet_args) (the user's other flags),
      C(other_keys) (the other top-level keys kept, names only).
    - In drop-in mode - C(config_sets_managed_flags), managed flags C(config.yaml) sets too.
  returned: always
  type: dict
"""
