# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of the actions that decide on the controller (numa_plan, node_check, playbook_inputs, access_check): their
arguments checked against ARGUMENT_SPEC, then ``decide``; and what two of them share: the host's facts set as
set_fact sets them, and the plan an extra var gives."""

from __future__ import annotations

import re

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.module_utils.common.text.converters import to_native
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.utils.vars import load_extra_vars

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.specs import PREFIX

try:  # ansible-core 2.21+: the layer set_fact writes (its precedence), not the fact cache's
    from ansible.plugins.action import VariableLayer
except ImportError:  # pragma: no cover - older ansible-core: the result's ansible_facts
    VariableLayer = None


class ControllerAction(ActionBase):
    """``ARGUMENT_SPEC``: the action's argument spec; ``decide(args, task_vars, result)`` returns the result."""

    TRANSFERS_FILES = False
    _requires_connection = False
    ARGUMENT_SPEC = {}
    # Options whose null leaves them out - their default applies - so that a task may pass a variable that is null or
    # undefined ("{{ var | default(none) }}") instead of a template that omits it.
    NULL_IS_DEFAULT = frozenset()
    # The boolean option that takes each option of NULL_IS_DEFAULT the task leaves unset from its variable (with_variables).
    FROM_VARIABLES = None

    def run(self, tmp=None, task_vars=None):
        result = super(ControllerAction, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        self._from_variables = frozenset()
        if self.NULL_IS_DEFAULT:
            self._task.args = without_nulls(self._task.args, self.NULL_IS_DEFAULT)
        if self.FROM_VARIABLES and boolean(self._task.args.get(self.FROM_VARIABLES, False), strict=False):
            self._task.args = self.with_variables(self._task.args, self.NULL_IS_DEFAULT, task_vars)
        try:
            dummy, args = self.validate_argument_spec(argument_spec=self.ARGUMENT_SPEC)
        except AnsibleActionFail as e:   # the argument a type check names, as the variable it came from
            raise AnsibleActionFail(self.as_variables(to_native(e), quoted=True)) from None
        result = self.decide(args, task_vars, result)
        if result.get("failed") and isinstance(result.get("msg"), str):
            result["msg"] = self.as_variables(result["msg"])
        return result

    def as_variables(self, message, quoted=False):
        """``message`` with each option that came from its variable (with_variables) named as that variable - the name
        the operator set (rke2_numa_hugepages_per_node, not hugepages_per_node); ``quoted``: only where the message
        names it as ``argument 'name'`` (ansible-core's type checks; not the list of supported parameters)."""
        for name in sorted(getattr(self, "_from_variables", ()), key=len, reverse=True):
            if quoted:
                message = message.replace("argument '%s'" % name, "argument '%s%s'" % (PREFIX, name))
            else:
                message = re.sub(r"(?<![\w.])%s(?!\w)" % re.escape(name), PREFIX + name, message)
        return message

    def decide(self, args, task_vars, result):
        raise NotImplementedError

    def set_host_facts(self, facts, result):
        """Set the host's ``facts`` at set_fact's precedence where ansible-core says which layer (2.21+)."""
        if VariableLayer is not None:
            self.register_host_variables({}, VariableLayer.CACHEABLE_FACT)
            self.register_host_variables(facts, VariableLayer.EPHEMERAL_FACT)
        else:
            result["ansible_facts"] = facts

    def with_variables(self, given, names, task_vars):
        """``given`` (its nulls among ``names`` left out), and each of ``names`` it leaves unset from the host's
        variable of that name with the collection's prefix, templated here; unset or null there too: left out (its
        default applies). What a task passing ``name: "{{ rke2_numa_name | default(none) }}"`` for each would pass,
        without a template per option for every host's worker to compile - except that a variable whose template does
        not render fails the task, naming it (``default(none)`` took it for unset: the default, silently)."""
        given = without_nulls(given, names)
        found, problems = {}, []
        for name in sorted(names):
            if name not in given and PREFIX + name in task_vars:
                found[name] = self.templated(task_vars[PREFIX + name], PREFIX + name, problems)
        if problems:
            raise AnsibleActionFail("; ".join(problems))
        self._from_variables = frozenset(found)
        return dict(without_nulls(found, names), **given)

    def templated(self, value, name, problems):
        """``value`` (the variable ``name``'s) templated for this host; None, and the problem added to ``problems``
        naming the variable, when its template does not render (a template of the inventory's)."""
        try:
            return self._templar.template(value)
        except AnsibleError as e:
            problems.append(cannot_template(name, e))
            return None

    def extra_var_plan(self, task_vars):
        """The rke2_numa_plan an extra var gives (-e @plan.json; None when none does): it beats the fact the plan
        role sets. A plan the host was given earlier in the run (a fact) is replaced, not refused."""
        if "rke2_numa_plan" not in task_vars or "rke2_numa_plan" not in load_extra_vars(self._loader):
            return None
        return self._templar.template(task_vars["rke2_numa_plan"])


def cannot_template(name, error):
    """The problem of a variable whose template does not render: its name and the first line of Ansible's error."""
    return "%s cannot be templated: %s" % (name, to_native(error).splitlines()[0])


def without_nulls(options, names):
    """``options`` without those of ``names`` that are null: left out, so that their default applies."""
    return dict((name, value) for name, value in options.items() if not (value is None and name in names))
