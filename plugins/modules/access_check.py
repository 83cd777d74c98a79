#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# This is a documentation stub: the work is done by the action plugin of the
# same name (plugins/action/access_check.py), on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: access_check
short_description: Refuse a kubeconfig that lacks a right the playbook needs, and warn about one that may do everything
version_added: 0.1.0
description:
  - Reads the API server's answers to the SelfSubjectAccessReviews of P(maitred.rke2_numa.access_reviews#filter) (one
    C(kubectl create), a M(maitred.rke2_numa.kubectl) task the playbook ran with its kubeconfig) - whether the
    kubeconfig may do everything (C(kubectl auth can-i '*' '*'), cluster-admin), and each right the playbook's kubectl
    calls need (C(plugins/plugin_utils/rbac.py)).
  - With O(strict) (a roll, labels, prove), a missing right fails the task before anything changes, naming each right
    and the calls that need it; a kubeconfig the API does not answer for fails too, with kubectl's words.
  - Warns (an Ansible warning) when the kubeconfig may do everything - more than any playbook here uses - and when kured's
    lock cannot be held (the roll still refuses a node while kured holds it).
  - Runs on the controller only (an action plugin); it never contacts the host.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.controller
options:
  reply:
    description:
      - The registered result of the M(maitred.rke2_numa.kubectl) task (C(create -o json -f -)) of the reviews; its
        C(stdout) is read, its C(rc), C(stderr) and C(msg) when kubectl failed.
    type: dict
    required: true
  playbook:
    description: The playbook the reviews were made for.
    type: str
    required: true
    choices: [check, rolling, labels, prove]
  kubeconfig:
    description: The kubeconfig that was asked about (named in the messages).
    type: str
    required: true
  probe_namespace:
    description: The probe pods' namespace, as given to the reviews.
    type: str
    default: rke2-numa-probe
  kured_daemonset:
    description: kured's DaemonSet, as given to the reviews.
    type: str
    default: auto
  prove:
    description: Whether the roll runs the probes, as given to the reviews.
    type: bool
    default: true
  labels_via:
    description: How labels are published, as given to the reviews.
    type: str
    default: kubectl
  lease:
    description: The roll's Lease (C(namespace/name)), as given to the reviews.
    type: str
    default: rke2-numa-system/rke2-numa-roll
  drain_namespaces:
    description: The namespaces whose pods a roll may evict (C(rke2_numa_drain_namespaces)), as given to the reviews.
    type: list
    elements: str
    default: []
  strict:
    description: Fail when a right is missing or the API gave no answer (the check only warns).
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Ask the API what the kubeconfig may do (one SelfSubjectAccessReview per right the run needs)
  maitred.rke2_numa.kubectl:
    verb: create
    kind: selfsubjectaccessreview
    output: json
    options: [--validate=false]
    stdin: "{{ 'rolling' | maitred.rke2_numa.access_reviews(rke2_numa_probe_namespace, rke2_numa_kured_daemonset,
               rke2_numa_prove, rke2_numa_labels_via) | to_json }}"
  delegate_to: "{{ rke2_numa_kubectl_host }}"
  register: reviews
  run_once: true
  changed_when: false
  check_mode: false
  failed_when: false   # access_check says why, in kubectl's words

- name: Refuse a kubeconfig that lacks a right, before anything changes
  maitred.rke2_numa.access_check:
    reply: "{{ reviews }}"
    playbook: rolling
    kubeconfig: "{{ rke2_numa_kubeconfig }}"
    probe_namespace: "{{ rke2_numa_probe_namespace }}"
    kured_daemonset: "{{ rke2_numa_kured_daemonset }}"
    prove: "{{ rke2_numa_prove }}"
    labels_via: "{{ rke2_numa_labels_via }}"
  run_once: true
  any_errors_fatal: true
"""

RETURN = r"""
everything:
  description: The kubeconfig may do everything (cluster-admin).
  returned: always
  type: bool
missing:
  description: Each required right the API refused, with what needs it.
  returned: always
  type: list
  elements: str
  sample: ["may not create pods/eviction cluster-wide (needed to evict the workload pods (kubectl drain, PodDisruptionBudgets respected))"]
optional_missing:
  description: Rights the playbook goes on without (kured's lock).
  returned: always
  type: list
  elements: str
unreadable:
  description: The API gave no usable answer (kubectl failed, or another reply).
  returned: always
  type: bool
"""
