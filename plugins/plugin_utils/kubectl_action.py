# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of the actions that run kubectl where their task runs (kubectl, roll_lease, kured_lock): their arguments
checked against ARGUMENT_SPEC, then ``step``; and, for the protocol actions, their table of calls - every call checked
before the first one runs, a write skipped in check mode (a read runs), the API requests of the calls made."""

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubectl import KubectlArgError, call_argv, call_requests, reads_only
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.run_command import run_command


class KubectlAction(ActionBase):
    """``ARGUMENT_SPEC``: the action's argument spec; ``step(args, task_vars, result)`` returns the result."""

    TRANSFERS_FILES = False
    ARGUMENT_SPEC = {}

    def run(self, tmp=None, task_vars=None):
        result = super(KubectlAction, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=self.ARGUMENT_SPEC)
        return self.step(args, task_vars or {}, result)

    def step(self, args, task_vars, result):
        raise NotImplementedError

    def protocol(self, task_vars, table, call_args, context, sample=()):
        """(run, error) for a protocol's ``table`` (name -> kubectl action arguments): ``call_args(name, context,
        *extra)`` the arguments of one call; each is checked (``sample``: the extra it is checked with) before any
        runs - ``error`` says why one is refused. ``run(name, *extra)``: ansible.builtin.command's answer; a write in
        check mode answers rc 0 without running."""
        try:
            for name in table:
                call_argv(call_args(name, context, *sample))
        except KubectlArgError as e:
            return None, str(e)
        check = bool(self._task.check_mode)

        def run(name, *extra):
            args = call_args(name, context, *extra)
            if check and not reads_only(table[name]["verb"]):
                return {"rc": 0, "stdout": "", "stderr": ""}
            return run_command(self, task_vars, call_argv(args), args.get("stdin") or None, always=True)

        return run, None

    @staticmethod
    def requests(call_args, context, calls, sample=()):
        """The API requests of ``calls`` (the names of the calls made, repeats once), as the RBAC table declares them."""
        return [r for name in dict.fromkeys(calls) for r in call_requests(call_args(name, context, *sample))]

    @staticmethod
    def stop(result, msg, **more):
        result.update(failed=True, stopped=msg, msg=msg, **more)
        return result
