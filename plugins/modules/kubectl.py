#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

# This is a documentation stub: the work is done by the action plugin of the
# same name (plugins/action/kubectl.py), which runs kubectl through ansible.builtin.command.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kubectl
short_description: One kubectl call, its object and options checked, its API requests declared
version_added: 0.1.0
description:
  - The one way the collection's roles and playbooks call the cluster. Runs C(kubectl --kubeconfig KUBECONFIG VERB ...)
    on the host the task runs on (delegate it to C(rke2_numa_kubectl_host), where RKE2 servers have kubectl) through
    M(ansible.builtin.command) - no Python Kubernetes client anywhere.
  - The object is given as its kind and its names, separately - each name is checked as a Kubernetes name, so a name
    is never read as a flag, and passed as C(kind name) to C(get) and C(delete), C(kind/name) to the other verbs. Each option must be one this verb takes here.
  - Or as what O(stdin) holds (C(-f -); C(get), C(create), C(replace), C(apply)) - of the O(kind) given, or of one of
    the kinds of a list - or as a path of the API (O(raw); C(get --raw PATH), C(create --raw PATH -f -)). C(config)
    takes no object - C(config view), the kubeconfig as kubectl reads it.
  - playbooks/access.yml calls it with the admin kubeconfig (O(kubeconfig)) to give the collection its identity; every
    other call runs with C(rke2_numa_kubeconfig).
  - Returns the API requests the call sends (RV(requests), from the collection's one table of them, VERBS in
    plugins/plugin_utils/kubectl.py - what the scoped identity grants; O(verb) says what each verb sends), the parsed
    object of C(-o json), and a failure in kubectl's own words; C(kubectl cordon) and C(uncordon), which exit 0 when the API refuses their patch, fail.
  - In check mode a read verb runs (each request it sends is a read - see O(verb)), a write is skipped unless the task
    says C(check_mode=false), as M(ansible.builtin.command) is.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.kubectl_verbs
  - maitred.rke2_numa.shared.author
attributes:
  check_mode:
    support: partial
    details: A read verb runs in check mode; a write is skipped, like M(ansible.builtin.command), unless the task sets
      C(check_mode=false).
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  kind:
    description:
      - The kind as kubectl takes it (C(node), C(pods), C(lease), C(nodes,pods) ...). With O(stdin) (always for
        C(create), C(replace) and C(apply)), the kind of what it holds - of each item of a C(List), one of the kinds of
        a list such as C(role,rolebinding) - checked, since the call's requests follow from it; it is not passed.
      - Not with O(raw), nor for C(config).
    type: str
  names:
    description: The objects' names (each an RFC 1123 subdomain); none - every object of O(kind).
    type: list
    elements: str
    default: []
  raw:
    description:
      - A path of the API, as C(get --raw PATH) reads it and C(create --raw PATH -f -) sends O(stdin) to it - in place
        of O(kind) and O(names). Starts with C(/), each segment a letter or digit first, then letters, digits, C(.),
        C(_), C(-) - never a flag, no whitespace, no query.
    type: str
  namespace:
    description: The namespace (C(--namespace)).
    type: str
  all_namespaces:
    description: Every namespace (C(--all-namespaces)).
    type: bool
    default: false
  selector:
    description: A label selector (C(--selector)).
    type: str
  field_selector:
    description: A field selector (C(--field-selector)).
    type: str
  output:
    description: C(-o json) (the result's C(object) is the parsed reply) or C(-o name).
    type: str
    choices: [json, name]
  options:
    description:
      - Further options of the verb, each as kubectl takes it (C(--overwrite), C(--timeout=60s)) and one this verb takes
        here (O(verb) lists them for each verb).
    type: list
    elements: str
    default: []
  arguments:
    description: C(annotate) and C(label) - the C(key=value) and C(key-) words.
    type: list
    elements: str
    default: []
  stdin:
    description:
      - The objects C(create), C(replace), C(apply) and C(get) read (C(-f -)), as JSON; the body C(create) sends to a
        O(raw) path. Never returned.
    type: str
  kubectl:
    description: The kubectl program; not set - C(rke2_numa_kubectl).
    type: str
  kubeconfig:
    description: The kubeconfig; not set - C(rke2_numa_kubeconfig).
    type: str
"""

EXAMPLES = r"""
- name: Read the Node
  maitred.rke2_numa.kubectl:
    verb: get
    kind: node
    names: ["{{ rke2_numa_node_name }}"]
    output: json
  delegate_to: "{{ rke2_numa_kubectl_host }}"
  register: __node

- name: Ask for a token with the admin kubeconfig (a raw path; the body from stdin)
  maitred.rke2_numa.kubectl:
    kubeconfig: "{{ rke2_numa_admin_kubeconfig }}"
    verb: create
    raw: /api/v1/namespaces/rke2-numa-system/serviceaccounts/rke2-numa/token
    stdin: '{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}}'
  delegate_to: "{{ rke2_numa_kubectl_host }}"
  register: __token
  no_log: true

- name: Cordon it
  maitred.rke2_numa.kubectl:
    verb: cordon
    kind: node
    names: ["{{ rke2_numa_node_name }}"]
  delegate_to: "{{ rke2_numa_kubectl_host }}"
"""

RETURN = r"""
cmd:
  description: The argv run.
  returned: when it ran
  type: list
  elements: str
rc:
  description: kubectl's exit code.
  returned: when it ran
  type: int
stdout:
  description: What kubectl printed.
  returned: when it ran
  type: str
stderr:
  description: What kubectl printed on stderr.
  returned: when it ran
  type: str
object:
  description: The parsed reply of C(-o json); null when the call failed or printed nothing.
  returned: when it ran
  type: raw
requests:
  description: The API requests the call sends (verb, group, resource, namespace - C(*) for every one - and named).
  returned: always
  type: list
  elements: dict
  sample: [{verb: get, group: "", resource: nodes, namespace: null, named: true}]
"""
