#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

# This is a documentation stub: the work is done by the action plugin of the
# same name (plugins/action/roll_lease.py), which runs kubectl as the kubectl action does.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: roll_lease
short_description: One step of the roll's Lease protocol - take, renew, fence or give back the Lease
version_added: 0.1.0
description:
  - One roll at a time per cluster (playbooks/rolling.yml); the runs of one roll (AWX slices, C(--limit) halves) share
    its Lease and never have more than C(rke2_numa_max_unavailable) Nodes out together. The Lease is
    C(rke2_numa_roll_lease_namespace)/C(rke2_numa_roll_lease_name) (coordination.k8s.io/v1), held the way client-go's
    leader election holds one (tools/leaderelection/leaderelection.go C(tryAcquireOrRenew)).
  - A step reads the Lease (and, for a release or a renewal that claims slots, the Nodes after it), decides what to
    write (plugins/plugin_utils/roll_lease.py C(lease_step)), waits when told to (another roll's Lease, no free slot),
    and writes it - C(kubectl create), or C(kubectl replace) carrying the resourceVersion read. A write the API refuses
    with 409 (C(AlreadyExists), C(Conflict) - another writer was first) is tried again from a fresh read after a random
    pause of 1 to 4 s, O(attempts) times at most.
  - Fails naming why when another roll holds the Lease (V(take)), took it (V(renew), C(lost)), or this run's slot on
    the node O(fence) names is gone (C(fenced)); when the Lease cannot be read or written; and when every write was
    beaten.
  - Runs kubectl on the host the task runs on (delegate it to C(rke2_numa_kubectl_host)), as M(maitred.rke2_numa.kubectl)
    does - on the controller itself without a module process. Its calls and their API requests are a fixed table
    (plugins/plugin_utils/lease_protocol.py C(CALLS)), from which the identity's rights are derived.
  - In check mode it reads and decides, and writes nothing.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.author
attributes:
  check_mode:
    support: full
    details: Reads the Lease and the Nodes, decides; writes nothing (C(changed) is false, C(written) says what it would write).
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  mode:
    description:
      - V(take) - before the roll's first write; V(renew) - before a batch's cordons (with O(claim)), before a
        destructive step (with O(fence)), before an uncordon, after the batch (O(claim) C([]), its slots freed);
        V(release) - the end of the run (the Lease given back unless another run of the roll still has a Node out).
    type: str
    required: true
    choices: [take, renew, release]
  roll:
    description:
      - The C(rke2_numa_roll) fact (the roll's id, this run's token, the Lease's namespace and name, C(kubectl),
        C(kubeconfig), C(lock_wait), the cap on Nodes out, the Nodes of this run, the leaseTransitions it holds).
    type: dict
    required: true
  nodes:
    description:
      - The Nodes already read - C(kubectl get nodes -o json)'s reply or a list of Node objects (a V(take) names the
        Nodes another roll has out from them).
    type: raw
  claim:
    description: V(renew) - the Node names of the batch, each claiming a slot; an empty list frees this run's slots.
    type: list
    elements: str
  fence:
    description: V(renew) - the Node whose destructive step follows; the Lease must hold this run's live slot on it.
    type: str
  fence_check:
    description:
      - With O(fence) - the fence's first part, before the renewal (playbooks/tasks/fence.yml) - the Node read again
        (C(kubectl get node)), still cordoned under this roll's marker with no maintainer at work on it since the cordon
        (plugins/plugin_utils/node_fence.py). When it is not, the step stops naming why (C(fenced)) and the Lease is not
        renewed; a Node that cannot be read stops it too (C(node_unread)), not as a fence.
      - C(rancher) - M(maitred.rke2_numa.rancher_agent_info)'s result on the node; C(foreign_annotations) -
        C(rke2_numa_foreign_node_annotations); C(admin_cordon) - an admin had cordoned the node; C(first) - the step is the
        node's first write (a Node still this roll's may then go back to service, C(fence_release)).
    type: dict
  wait:
    description: Seconds to wait for a slot when none is free (read every 10 s); under 10 - no wait.
    type: int
    default: 0
  seen:
    description: This run's earlier observation of the Lease (C(resource_version), C(since)), which client-go's expiry needs.
    type: dict
  attempts:
    description: Writes beaten by another writer before the step gives up.
    type: int
    default: 10
"""

EXAMPLES = r"""
- name: Take the roll's Lease
  maitred.rke2_numa.roll_lease:
    mode: take
    roll: "{{ hostvars['localhost'].rke2_numa_roll }}"
  delegate_to: "{{ rke2_numa_kubectl_host }}"
  run_once: true
  register: __lease

- name: Renew it before the batch's cordons, claiming a slot for each node (waiting up to 5 minutes for one)
  maitred.rke2_numa.roll_lease:
    mode: renew
    roll: "{{ hostvars['localhost'].rke2_numa_roll }}"
    claim: "{{ ansible_play_batch | map('extract', hostvars, 'rke2_numa_node_name') | list }}"
    wait: 300
  delegate_to: "{{ rke2_numa_kubectl_host }}"
  run_once: true
"""

RETURN = r"""
action:
  description: What the decision that ended the step asked for - C(create), C(update), C(none), C(refuse), C(lost), C(fenced).
  returned: when the Lease was read
  type: str
written:
  description: The write made (C(create), C(update); in check mode - would make); empty when none.
  returned: always
  type: str
step:
  description:
    - The decision (plugins/plugin_utils/roll_lease.py C(lease_step)) - C(msg), C(holder), C(granted), C(waiting),
      C(busy), C(transitions), C(previous).
  returned: always
  type: dict
seen:
  description: This run's observation of the Lease after the step (pass it to the next O(seen)).
  returned: always
  type: dict
lost:
  description: Why the roll does not hold the Lease (another roll holds it, or took it); null otherwise.
  returned: always
  type: str
roll:
  description: The O(roll) fact as this run holds the Lease now (C(transitions), C(adopted)); null when unchanged.
  returned: always
  type: dict
slots:
  description: With O(claim) - the Nodes that got a slot (C(granted)) and what the others wait for (C(msg)).
  returned: when O(claim) was given and the step did not fail
  type: dict
fenced:
  description: With O(fence_check) - why the step must not happen on the node (the Lease was not renewed); empty when it may.
  returned: always
  type: list
  elements: str
fence_release:
  description: With O(fence_check) - fenced before the node's first write on a Node still this roll's (back to service).
  returned: always
  type: bool
node_unread:
  description: With O(fence_check) - why the Node could not be read (the step stopped, not as a fence); empty when it was.
  returned: always
  type: str
stopped:
  description: Why the step stopped without doing its work (the failure's C(msg)); empty when it did its work.
  returned: always
  type: str
attempts:
  description: The attempts made.
  returned: always
  type: int
calls:
  description: The calls made, in order (C(node), C(read), C(nodes), C(create), C(replace)).
  returned: always
  type: list
  elements: str
requests:
  description: The API requests those calls send (verb, group, resource, namespace, named).
  returned: always
  type: list
  elements: dict
"""
