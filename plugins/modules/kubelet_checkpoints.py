#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kubelet_checkpoints
short_description: Back up and delete the kubelet's CPU and Memory Manager checkpoints, or put them back
version_added: 0.1.0
description:
  - The kubelet state reset as one transaction on the host, with the RKE2 agent stopped (the
    C(maitred.rke2_numa.kubelet_reset) role stops it).
  - O(state=absent) copies each of C(cpu_manager_state) and C(memory_manager_state) that exists into a new
    folder under O(backup_dir) (0700; each copy 0600, named as the checkpoint), writes a manifest of which existed
    with their mode and owner, and only then deletes them. Returns the folder as RV(backup_path). The folder and its
    manifest are made even when neither exists, so that the way back removes what a failed kubelet writes. When a
    delete fails, the checkpoints deleted before it are put back and the task fails.
  - O(state=restored) undoes that from O(backup_path) - each checkpoint that was backed up is copied back
    (mode and owner as the manifest says, written beside it and renamed), and one that did not exist before is
    removed (the kubelet that failed wrote it); when one fails, those changed before it are put back. Only a folder
    with this module's manifest, made for the same O(kubelet_dir), is trusted; nothing else is ever removed.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.node
  - maitred.rke2_numa.shared.kubelet_dir
options:
  state:
    description: V(absent) - backed up, then deleted; V(restored) - put back from O(backup_path).
    type: str
    choices: [absent, restored]
    required: true
  backup_dir:
    description: With O(state=absent), the folder (created 0700 when missing) the backup folder is made in.
    type: path
    default: /var/lib/rke2-numa/backup
  backup_path: {description: 'With O(state=restored), the RV(backup_path) an earlier O(state=absent) returned.', type: path}
"""

EXAMPLES = r"""
- name: Back up and delete the checkpoints (rke2-agent stopped)
  maitred.rke2_numa.kubelet_checkpoints:
    state: absent
  register: __checkpoints

- name: Put them back (rke2-agent stopped)
  maitred.rke2_numa.kubelet_checkpoints:
    state: restored
    backup_path: "{{ __checkpoints.backup_path }}"
  when: __checkpoints.backup_path | default('') | length > 0
"""

RETURN = r"""
backup_path:
  description: The backup folder (empty in check mode).
  returned: state=absent (also when deleting failed - restoring from it changes nothing once the checkpoints are put back)
  type: str
  sample: /var/lib/rke2-numa/backup/20261203T064000Z
backed_up: {description: The copies written., returned: state=absent, type: list, elements: str}
removed:
  description: The checkpoints deleted (V(absent)), or written by the kubelet that failed and removed again (V(restored)).
  returned: always
  type: list
  elements: str
restored: {description: The checkpoints copied back., returned: state=restored, type: list, elements: str}
"""

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.maitred.rke2_numa.plugins.module_utils.kubelet_checkpoints import CheckpointError, backup_and_remove, restore


def main():
    module = AnsibleModule(
        argument_spec=dict(
            kubelet_dir=dict(type="path", default="/var/lib/kubelet"),
            state=dict(type="str", choices=["absent", "restored"], required=True),
            backup_dir=dict(type="path", default="/var/lib/rke2-numa/backup"),
            backup_path=dict(type="path"),
        ),
        required_if=[("state", "restored", ("backup_path",))],
        supports_check_mode=True,
    )
    params = module.params
    try:
        if params["state"] == "absent":
            result = backup_and_remove(module, params["kubelet_dir"], params["backup_dir"], time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))
        else:
            result = restore(module, params["kubelet_dir"], params["backup_path"])
    except CheckpointError as e:
        module.fail_json(msg=str(e))
    except (IOError, OSError) as e:
        module.fail_json(msg="%s: %s; no checkpoint was deleted" % (params["state"], e) if params["state"] == "absent"
                         else "restored: %s" % e)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
