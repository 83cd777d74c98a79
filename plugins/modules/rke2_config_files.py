#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rke2_config_files
short_description: Change the RKE2 config files the rke2_config action planned, as one transaction (internal)
version_added: 0.3.0
description:
  - The host side of M(maitred.rke2_numa.rke2_config), which reads and plans on the controller and runs this module
    once (module_utils/file_txn.py). Use that action, not this module.
  - O(state=written) backs up every file (a 0600 copy in O(backup_dir), or only its snapshot), then writes each 0600
    root:root or removes it; when one fails, every file changed before it is put back and the task fails.
  - O(state=restored) puts an earlier run's files back from their backups (mode, owner, group), or removes those it created.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.node
options:
  state:
    description: V(written) - the planned files; V(restored) - an earlier run's files put back.
    type: str
    choices: [written, restored]
    default: written
  files:
    description: The files, in the order they change.
    type: list
    elements: dict
    required: true
    suboptions:
      path: {description: The file (a symlink's target is written)., type: path, required: true}
      content: {description: "V(written): its text, never logged (the join token); null removes it.", type: str}
      backup: {description: "V(written): keep a copy in O(backup_dir).", type: bool, default: false}
      backup_file: {description: "V(restored): the copy to put back; empty removes the file.", type: path}
      mode: {description: "V(restored): its mode (octal).", type: str}
      owner: {description: "V(restored): its owner.", type: str}
      group: {description: "V(restored): its group.", type: str}
  backup_dir: {description: 'Where the copies go (0700 root:root).', type: path, default: /var/lib/rke2-numa/backup}
"""

EXAMPLES = r"""
- name: Written by the rke2_config action, not by hand
  maitred.rke2_numa.rke2_config:
    kubelet_args: "{{ rke2_numa_plan.kubelet_args }}"
"""

RETURN = r"""
backups:
  description: Each file's copy in O(backup_dir) ("" when none was kept), in the order of O(files).
  returned: state=written
  type: list
  elements: str
"""

import grp
import pwd

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.maitred.rke2_numa.plugins.module_utils.file_txn import backup_record, restore_recorded, write_planned


def record(f):
    """A file as an earlier run recorded it (file_txn.backup_record), its backup read before anything is written."""
    if not f["backup_file"]:
        return backup_record(f["path"], "")
    return backup_record(f["path"], f["backup_file"], int(str(f["mode"]), 8), pwd.getpwnam(f["owner"]).pw_uid, grp.getgrnam(f["group"]).gr_gid)


def main():
    module = AnsibleModule(
        argument_spec={
            "state": {"type": "str", "choices": ["written", "restored"], "default": "written"},
            "files": {"type": "list", "elements": "dict", "required": True, "options": {
                "path": {"type": "path", "required": True}, "content": {"type": "str", "no_log": True},
                "backup": {"type": "bool", "default": False}, "backup_file": {"type": "path"},
                "mode": {"type": "str"}, "owner": {"type": "str"}, "group": {"type": "str"}}},
            "backup_dir": {"type": "path", "default": "/var/lib/rke2-numa/backup"},
        },
        supports_check_mode=True,
    )
    files = module.params["files"]
    if module.check_mode:
        module.exit_json(changed=bool(files), backups=[])
    if module.params["state"] == "written":
        module.exit_json(changed=bool(files), backups=write_planned(module, files, module.params["backup_dir"]))
    try:
        files = [record(f) for f in files]
    except (IOError, OSError, KeyError, TypeError, ValueError) as e:
        module.fail_json(msg="cannot read a backup, or its recorded mode, owner or group: %s; nothing written" % e)
    module.exit_json(changed=bool(restore_recorded(module, files)))


if __name__ == "__main__":
    main()
