#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# This is a documentation stub: the work is done by the action plugin of the
# same name (plugins/action/access_proof.py).

from __future__ import annotations

DOCUMENTATION = r"""
---
module: access_proof
short_description: Prove on the live cluster what the scoped identity may and may not do, with server-side dry runs
version_added: 0.1.0
description:
  - Tries, with the kubeconfig given and C(kubectl --dry-run=server) (or C(?dryRun=All) on a raw path), each escalation
    C(docs/ACCESS.md) says is denied - a NoExecute taint, a foreign label, a cordon of a Node that is not enrolled, an
    eviction in C(kube-system) or outside O(drain_namespaces), probe pods off the enrolment, with every toleration or
    with C(NVIDIA_VISIBLE_DEVICES), kured's pod template, owners and finalizers, the enrolment ConfigMap, another roll's
    Lease - and each request a roll makes (its cordon and marker, our labels, an eviction where it drains, its Lease,
    kured's lock, a probe pod).
  - A server-side dry run goes through authorization and every admission plugin, ValidatingAdmissionPolicy among them,
    and stores nothing. A denied step or an allowed escalation fails the task (with O(strict)), naming the request and
    the cluster's answer (C(plugins/plugin_utils/access_proof.py)).
  - Reads first, as the identity - whether the cluster serves ValidatingAdmissionPolicy (without it the escalations only
    a policy denies are not tried - RBAC alone allows them, as C(access.yml) says), a control-plane Node to stand for a
    Node outside the inventory (none visible - those trials are left out), and whether kured's DaemonSet is there.
  - Runs kubectl where the task runs (delegate it to C(rke2_numa_kubectl_host)); writes nothing, in check mode too.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Every request is a server-side dry run.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  kubeconfig:
    description: The scoped kubeconfig to prove (C(access.yml) writes it).
    type: str
    required: true
  kubectl:
    description: The kubectl binary (default C(rke2_numa_kubectl)).
    type: str
  node:
    description:
      - An enrolled Node, for the steps a roll makes and the escalations on a Node of the roll; unset - the Node of the
        first of O(hosts).
    type: str
  hosts:
    description: The run's inventory hosts - their Nodes (C(rke2_numa_node_name)) may be enrolled, so never stand for a Node outside.
    type: list
    elements: str
    default: []
  exclude:
    description: Other Nodes that may be enrolled - never chosen to stand for a Node outside the inventory.
    type: list
    elements: str
    default: []
  access_namespace:
    description: The identity's namespace (C(rke2_numa_access_namespace)), where the enrolment ConfigMap is.
    type: str
    default: rke2-numa-system
  probe_namespace:
    description: The probe pods' namespace (C(rke2_numa_probe_namespace)).
    type: str
    default: rke2-numa-probe
  kured:
    description: kured's DaemonSet C(namespace/name) (or C(auto) - C(kube-system/kured)) the identity may hold the lock of; empty - none.
    type: str
    default: ""
  lease:
    description: The roll's Lease, C(namespace/name).
    type: str
    default: rke2-numa-system/rke2-numa-roll
  drain_namespaces:
    description: The namespaces whose pods a roll may evict (C(rke2_numa_drain_namespaces)); empty - every one but C(kube-*).
    type: list
    elements: str
    default: []
  prove:
    description: Whether the roll runs probe pods (then a probe pod on O(node) must be allowed).
    type: bool
    default: true
  strict:
    description: Fail when the cluster disagrees with the claim (else a warning).
    type: bool
    default: true
author:
  - maitred.rke2_numa contributors (@maitred)
"""

EXAMPLES = r"""
- name: Prove what the scoped identity may and may not do (server-side dry runs)
  maitred.rke2_numa.access_proof:
    kubeconfig: /etc/rancher/rke2/rke2-numa.yaml
    node: gpu-a
    drain_namespaces: [ml]
  delegate_to: "{{ rke2_numa_kubectl_host }}"
  run_once: true
  check_mode: false
"""

RETURN = r"""
findings:
  description: Each request the cluster answered against the claim, with the request and the answer.
  type: list
  elements: str
  returned: always
untried:
  description:
    - The trials the kubectl client would not send - an older kubectl reads the server's OpenAPI document to check
      dry-run support first, and stops when it cannot (a warning says so; they are not judged).
  type: list
  elements: str
  returned: always
results:
  description: Each trial - what, expect (denied or allowed), got (denied, allowed, untried or unclear), answer, command.
  type: list
  elements: dict
  returned: always
policies:
  description: Whether the cluster serves ValidatingAdmissionPolicy.
  type: bool
  returned: always
outside:
  description: The Node that stood for one outside the inventory (empty - none visible).
  type: str
  returned: always
"""
