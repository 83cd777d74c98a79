#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rke2_config_files
short_description: Write the RKE2 config files the rke2_config action planned, or put an earlier run's back (internal)
version_added: 0.3.0
description:
  - The host side of M(maitred.rke2_numa.rke2_config) - that action reads and plans on the controller, then runs this
    module once to change every file of the run as one transaction (module_utils/file_txn.py). Use that action, not
    this module.
  - O(state=written) backs up every file of O(files) before the first changes - a 0600 copy in O(backup_dir) (0700,
    root's), or only its snapshot when its C(backup) is false - then writes each (0600 root:root, beside it and
    renamed; a symlink's target) or removes it (C(content) null). When one fails, every file changed before it is put
    back and the task fails saying so.
  - O(state=restored) undoes an earlier run from what it recorded - each file of O(files) gets its C(backup_file)'s
    bytes back with its C(mode), C(owner) and C(group), or is removed when C(backup_file) is empty (the run created
    it); as one transaction too.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.author
attributes:
  check_mode:
    support: full
    details: Changes nothing (the rke2_config action does not run it in check mode).
  diff_mode:
    support: none
  platform:
    platforms: posix
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
      path:
        description: The file (a symlink's target is written).
        type: path
        required: true
      content:
        description: With O(state=written), its text (it may hold the join token - never logged); null removes the file.
        type: str
      backup:
        description: With O(state=written), keep a copy in O(backup_dir).
        type: bool
        default: false
      backup_file:
        description: With O(state=restored), the copy to put back; empty - remove the file (the undone run created it).
        type: path
      mode:
        description: With O(state=restored), the mode it had (octal, as C(ansible.builtin.stat) gives it).
        type: str
      owner:
        description: With O(state=restored), its owner's name.
        type: str
      group:
        description: With O(state=restored), its group's name.
        type: str
  backup_dir:
    description: The folder (made 0700 root:root) the copies go to, with O(state=written).
    type: path
    default: /var/lib/rke2-numa/backup
"""

EXAMPLES = r"""
- name: Written by the rke2_config action, not by hand
  maitred.rke2_numa.rke2_config:
    kubelet_args: "{{ rke2_numa_plan.kubelet_args }}"
"""

RETURN = r"""
backups:
  description: With O(state=written), each file's copy in O(backup_dir) ("" when none was kept), in the order of O(files).
  returned: state=written
  type: list
  elements: str
"""

import grp
import pwd

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.maitred.rke2_numa.plugins.module_utils.file_txn import restore_recorded, write_planned


def recorded(files):
    """The restored files with their mode and owner as numbers (names as the stat module gave them)."""
    return [dict(f, mode=int(str(f["mode"]), 8), uid=pwd.getpwnam(f["owner"]).pw_uid, gid=grp.getgrnam(f["group"]).gr_gid)
            if f.get("backup_file") else dict(f) for f in files]


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
        files = recorded(files)
    except (KeyError, TypeError, ValueError) as e:
        module.fail_json(msg="the recorded mode, owner or group is not one of this host: %s; nothing written" % e)
    module.exit_json(changed=restore_recorded(module, files))


if __name__ == "__main__":
    main()
