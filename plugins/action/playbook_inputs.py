# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbook_inputs: refuse a playbook's hostile or careless inputs (controller only)."""

from __future__ import annotations

import time

from ansible.plugins.action import ActionBase

from ansible_collections.maitred.rke2_numa.plugins.modules import playbook_inputs as playbook_inputs_doc
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.argspec import argument_spec
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.playbook_inputs import input_errors

# The variables and their types: as documented in plugins/modules/playbook_inputs.py.
ARGUMENT_SPEC = argument_spec(playbook_inputs_doc.DOCUMENTATION)


class ActionModule(ActionBase):
    """Check the inputs against the rules of plugin_utils/playbook_inputs; never touches the host."""

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        # suboptions not given come back as None: only the variables set are checked
        given = dict((k, v) for k, v in args["inputs"].items() if k in self._task.args.get("inputs", {}))
        groups = task_vars.get("groups") or {}
        errors = input_errors(args["playbook"], given, groups, groups.get("all", []), time.time())
        result.update(changed=False, errors=errors)
        if errors:
            result.update(failed=True, msg="%s: the inputs of %s are refused, nothing was read or written: %s"
                          % (task_vars.get("inventory_hostname", "?"), args["playbook"], "; ".join(errors)))
        return result
