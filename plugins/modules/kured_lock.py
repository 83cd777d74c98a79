#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

# This is a documentation stub: the work is done by the action plugin of the
# same name (plugins/action/kured_lock.py), which runs kubectl as the kubectl action does.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kured_lock
short_description: Hold kured's reboot lock while a roll has Nodes out, and give it back
version_added: 0.1.0
description:
  - kured (kubereboot/kured) reboots one node at a time (or C(--concurrency)) under a lock it keeps in an annotation of
    its own DaemonSet. While a roll has Nodes out it holds that lock in kured's own format, so that kured starts no
    reboot meanwhile; it gives back only its own entries after (plugins/plugin_utils/maintainers.py
    C(kured_lock_claims), C(kured_lock_releases)).
  - A step reads kured's DaemonSets, decides, and annotates each one carrying the resourceVersion read. A write the API
    refuses with 409 C(Conflict) (kured or the DaemonSet controller wrote in between) is decided again from a fresh
    read after a random pause of 1 to 4 s, O(attempts) times at most - as kured's own C(Acquire) and C(Release) do
    (pkg/daemonsetlock/daemonsetlock.go).
  - V(hold) never overwrites a lock kured or another roll holds. It fails naming the DaemonSet when a lock it meant to
    take was taken meanwhile, or a write was refused for another reason; what it did hold is in RV(done) (give it back).
  - Runs kubectl on the host the task runs on (delegate it to C(rke2_numa_kubectl_host)), as M(maitred.rke2_numa.kubectl)
    does. Its calls and their API requests are a fixed table (plugins/plugin_utils/kured_protocol.py C(CALLS)), from
    which the identity's rights are derived.
  - In check mode it reads and decides, and writes nothing.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.node
attributes:
  check_mode:
    details: Reads kured's DaemonSets and decides; writes nothing (RV(done) lists what it would write).
options:
  mode: {description: V(hold) - before the roll's first cordon; V(release) - at the end of the run., type: str, required: true, choices: [hold, release]}
  daemonset: {description: 'C(rke2_numa_kured_daemonset) - V(auto) (kured found by its image), C(namespace/name), or empty for none.', type: str, default: auto}
  roll_id:
    description: The roll's id first, then the ids of the dead rolls whose Lease it took over (their entries are its own).
    type: list
    elements: str
    required: true
  ttl: {description: 'V(hold) - seconds kured keeps reading the entries as held, should the roll die without giving them back.', type: int, default: 3600}
  kubectl: {description: The kubectl to run., type: str, default: kubectl}
  kubeconfig: {description: The kubeconfig it runs with., type: str}
  attempts: {description: Writes beaten by another writer before the step gives up., type: int, default: 10}
"""

EXAMPLES = r"""
- name: Hold kured's lock while the roll has Nodes out
  maitred.rke2_numa.kured_lock:
    mode: hold
    roll_id: ["{{ hostvars['localhost'].rke2_numa_roll.id }}"]
    kubeconfig: "{{ rke2_numa_kubeconfig }}"
    ttl: 5400
  delegate_to: "{{ rke2_numa_kubectl_host }}"
  run_once: true
  register: __kured

- name: Give it back
  maitred.rke2_numa.kured_lock:
    mode: release
    roll_id: ["{{ hostvars['localhost'].rke2_numa_roll.id }}"]
    kubeconfig: "{{ rke2_numa_kubeconfig }}"
  delegate_to: "{{ rke2_numa_kubectl_host }}"
  run_once: true
"""

RETURN = r"""
done:
  description: The DaemonSets whose lock was written (in check mode - would be), each C(daemonset), C(namespace), C(name), C(annotation).
  returned: always
  type: list
  elements: dict
stopped: {description: Why the step stopped before its work was done (the failure's C(msg)); empty when it did its work., returned: always, type: str}
attempts: {description: The attempts made (reads of kured's DaemonSets)., returned: always, type: int}
calls: {description: 'The calls made, in order (C(read), C(annotate)).', returned: always, type: list, elements: str}
requests: {description: 'The API requests those calls send (verb, group, resource, namespace, named).', returned: always, type: list, elements: dict}
"""
