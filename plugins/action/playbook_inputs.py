# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbook_inputs: refuse a playbook's hostile or careless inputs (controller only)."""

from __future__ import annotations

import time

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.maitred.rke2_numa.plugins.doc_fragments import playbook_inputs as inputs_doc
from ansible_collections.maitred.rke2_numa.plugins.modules import playbook_inputs as playbook_inputs_doc
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.argspec import argument_spec
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.controller_action import ControllerAction, cannot_template
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.playbook_inputs import INPUTS, input_errors, role_errors, role_spec

# As documented: plugins/modules/playbook_inputs.py, and its inputs (the variables INPUTS names) in the doc fragment
# scripts/gen_specs.py writes from the specs.
ARGUMENT_SPEC = dict(argument_spec(playbook_inputs_doc.DOCUMENTATION), **argument_spec(inputs_doc.ModuleDocFragment.DOCUMENTATION))


class ActionModule(ControllerAction):
    """Check the inputs against the rules of plugin_utils/playbook_inputs; never touches the host."""

    ARGUMENT_SPEC = ARGUMENT_SPEC

    def decide(self, args, task_vars, result):
        # suboptions not given come back as None: only the variables set are checked
        given = dict((k, v) for k, v in args["inputs"].items() if k in (self._task.args.get("inputs") or {}))
        if args["from_vars"]:
            given = dict(self._from_vars(task_vars), **given)
        groups = task_vars.get("groups") or {}
        current = task_vars.get("inventory_hostname", "?")
        now = time.time()
        hostvars = task_vars.get("hostvars") or {}
        play_values = dict((role, self._play_values(role, task_vars, hostvars, current)) for role in args["roles"])
        refused = {}
        for host in args["hosts"] if args["hosts"] is not None else [current]:
            mine = None if host == current else hostvars[host]   # its variables, gathered once for both checks
            inputs = given if mine is None else _inputs_of(host, given, mine)
            errors = input_errors(args["playbook"], inputs, groups, groups.get("all", []), now)
            for role, (values, own) in play_values.items():
                problems = []
                if mine is not None:
                    values, problems = _role_values_of(role, values, own, mine)
                errors += ["the %s role's variables: %s" % (role, e) for e in problems + role_errors(role, values)]
            if errors:
                refused[host] = errors
        errors = [e for host in sorted(refused) for e in refused[host]] if args["hosts"] is None else \
            ["%s: %s" % (host, e) for host in sorted(refused) for e in refused[host]]
        result.update(changed=False, errors=errors, refused=refused)
        if refused:
            result.update(failed=True, msg=" | ".join(
                "%s: the inputs of %s are refused, nothing was read or written: %s" % (host, args["playbook"], "; ".join(refused[host]))
                for host in sorted(refused)))
        return result

    def _from_vars(self, task_vars):
        """{variable: value} of every input (but inventory_hostname) the task's variables define, templated as the
        task's own arguments would be; one that does not template stands as its error (refused, named)."""
        found = {}
        for name in INPUTS:
            if name != "inventory_hostname" and name in task_vars:
                found[name] = _value_or_refusal(lambda: self._templar.template(task_vars[name]))  # pylint: disable=cell-var-from-loop
        return found

    def _play_values(self, role, task_vars, hostvars, current):
        """({variable: value} of the role's variables for the current host, templated as ansible-core's role
        validation templates them; the names among them that are the current host's own (hostvars), not the play's)."""
        names = [name for name in role_spec(role) if name in task_vars]
        values = self._templar.template(dict((name, task_vars[name]) for name in names))
        mine = hostvars[current] if current in hostvars else {}
        own = frozenset(name for name in names if name in mine)
        return values, own


def _role_values_of(role, values, own, mine):
    """Another host's values of a role's variables, and the problems of those of its own that do not template: its
    own (``mine``: inventory, facts, -e - its hostvars) over the play's (the current host's values that are not its
    own: the role's defaults, the play's vars)."""
    found = dict((name, value) for name, value in values.items() if name not in own)
    problems = []
    for name in role_spec(role):
        if name in mine:
            try:
                found[name] = mine[name]
            except AnsibleError as e:  # a template of the inventory's that does not render
                found.pop(name, None)
                problems.append(cannot_template(name, e))
    return found, problems


def _value_or_refusal(read):
    """``read()``, or - a template that does not render - a value that names the error (refused by its rule, named)."""
    try:
        return read()
    except AnsibleError as e:
        return "<cannot template: %s>" % to_native(e).splitlines()[0]


def _inputs_of(host, given, own):
    """Another host's inputs: its own variables (``own``: inventory, facts, -e - its hostvars) over the play's
    (``given``)."""
    inputs = dict(given)
    for key in INPUTS:
        if key == "inventory_hostname":
            if key in given:
                inputs[key] = host
        elif key in own:
            inputs[key] = _value_or_refusal(lambda: own[key])  # pylint: disable=cell-var-from-loop
        elif key == "rke2_numa_node_name":
            inputs[key] = host  # the drain role's default: the inventory name
    return inputs
