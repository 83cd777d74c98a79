#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kubeconfig_file
short_description: Check, or atomically replace, the scoped kubeconfig access.yml writes
version_added: 0.3.0
description:
  - The file access.yml writes its bearer token to must be ours or is refused - a regular file with one link,
    owned by O(owner), whose first line is access.yml's mark - or not exist yet (its folder must).
  - Reads only the first line's bytes and returns nothing of the file (never a line C(-v) would show).
  - With O(state=written), checks again and replaces the file atomically - a new file in the same folder,
    mode 0600 and owned by O(owner) before its first byte, synced, renamed over the old one. A refusal writes
    nothing; a failure leaves the old file as it was.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.node
attributes:
  check_mode:
    details: O(state=written) says it would write, and writes nothing.
options:
  path: {description: The kubeconfig's absolute path., type: path, required: true}
  owner: {description: 'The user who runs kubectl with it (the file is 0600, so only this user and root can read it).', type: str, default: root}
  state: {description: C(checked) decides only; C(written) writes O(content)., type: str, choices: [checked, written], default: checked}
  content: {description: "The kubeconfig's text, for O(state=written). Holds a token - never logged.", type: str}
"""

EXAMPLES = r"""
- name: Refuse a file access.yml did not write
  maitred.rke2_numa.kubeconfig_file:
    path: /etc/rancher/rke2/rke2-numa.yaml
  register: __target
  failed_when: __target.refusal | length > 0
"""

RETURN = r"""
exists: {description: Something is at O(path) (before any write)., returned: always, type: bool}
refusal: {description: 'Why the file must not be written ("" when it may), naming what it is, never what it holds.', returned: always, type: str}
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.maitred.rke2_numa.plugins.module_utils.file_txn import FileTransaction
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kubeconfig_file import MARK, MODE, owner_ids, target_refusal


def main():
    module = AnsibleModule(
        argument_spec={
            "path": {"type": "path", "required": True},
            "owner": {"type": "str", "default": "root"},
            "state": {"type": "str", "choices": ["checked", "written"], "default": "checked"},
            "content": {"type": "str", "no_log": True},
        },
        required_if=[("state", "written", ["content"])],
        supports_check_mode=True,
    )
    path, owner = module.params["path"], module.params["owner"]
    if not os.path.isabs(path):
        module.fail_json(msg="path %r must be absolute" % path)
    try:
        uid, gid = owner_ids(owner)
    except ValueError as e:
        module.fail_json(msg=str(e), exists=os.path.lexists(path), refusal=str(e))
    exists = os.path.lexists(path)
    refusal = target_refusal(path, owner, uid)
    result = {"changed": False, "exists": exists, "refusal": refusal}
    if refusal:
        module.fail_json(msg="%s exists and was not written by access.yml (%s): nothing was changed; name another file in "
                             "rke2_numa_access_kubeconfig" % (path, refusal), **result)
    if module.params["state"] == "written":
        content = module.params["content"]
        if not content.startswith(MARK + "\n"):
            module.fail_json(msg="the kubeconfig to write does not start with access.yml's mark: nothing was written", **result)
        result["changed"] = True
        if not module.check_mode:  # no copy of the token on disk: the snapshot puts a failed write back
            FileTransaction(module, backup=False, result=result).write(path, content.encode("utf-8"), MODE, (uid, gid))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
