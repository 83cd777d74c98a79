# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of the actions that decide on the controller and never contact the host (numa_plan, playbook_inputs,
access_check): their arguments checked against ARGUMENT_SPEC, then ``decide``."""

from __future__ import annotations

from ansible.plugins.action import ActionBase


class ControllerAction(ActionBase):
    """``ARGUMENT_SPEC``: the action's argument spec; ``decide(args, task_vars, result)`` returns the result."""

    TRANSFERS_FILES = False
    _requires_connection = False
    ARGUMENT_SPEC = {}

    def run(self, tmp=None, task_vars=None):
        result = super(ControllerAction, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=self.ARGUMENT_SPEC)
        return self.decide(args, task_vars or {}, result)

    def decide(self, args, task_vars, result):
        raise NotImplementedError
