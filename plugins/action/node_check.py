# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_check: read the node (node_state_info, the one module call), then plan it and judge the read against the plan
on the controller, in the same task (check.yml: one task per host, not four)."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.maitred.rke2_numa.plugins.modules import node_check as node_check_doc
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.argspec import argument_spec
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.compliance import check_facts
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.controller_action import ControllerAction, without_nulls
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_inputs import check_inputs, read_inputs
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import (
    ARGUMENT_SPEC as PLANNER_SPEC,
    PlanError,
    foreign_plan_error,
    make_plan,
    node_kubelet,
)

ARGUMENT_SPEC = argument_spec(node_check_doc.DOCUMENTATION)
READ_MODULE = "maitred.rke2_numa.node_state_info"


class ActionModule(ControllerAction):
    """node_state_info on the host, numa_plan and the compliance decision on the controller."""

    _requires_connection = True
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def decide(self, args, task_vars, result):
        # the planner's variables first: one that does not template fails the host, naming it, before any read
        given = self.with_variables(args["plan"], _PLAN_OPTIONS, task_vars) if args["plan_from_vars"] else args["plan"]
        args = self._inputs_from_vars(args, task_vars)
        read = self._execute_module(module_name=READ_MODULE, module_args=args["read"], task_vars=task_vars)
        result.update(read)
        # a node whose root's files this user cannot read fails its read, naming them: it is not judged on what
        # could not be seen (compliance {}; the check says "not checked"); with denied_fails false it is not a failed
        # task (no failed_when over it: that would put "A 'failed_when' expression evaluated to 'True'" before the
        # message), and the caller says so
        denied = (read.get("access") or {}).get("denied")
        if read.get("failed") and denied and not args["denied_fails"]:
            result["failed"] = False
        if read.get("failed") and not denied:
            return _failure(result, read.get("msg") or "the node could not be read")
        try:
            options = planner_options(given)
        except TypeError as e:   # a value of the wrong type (named as the variable it came from: run)
            return self._refused(args, result, "no plan for this host: %s" % e)
        try:
            # the kubelet the node runs: its Node's, from the check's API read, else the RKE2 runtime on the host
            kubelet = node_kubelet(args["check"].get("kubelet_version"), read.get("rke2_runtime"))
            plan = make_plan(read["topology"], node_version=kubelet, **options)
        except PlanError as e:
            return self._refused(args, result, "no plan for this host: %s" % e, e.rule)
        except TypeError as e:   # an option the planner does not take
            return self._refused(args, result, "no plan for this host: %s" % e)
        given = self.extra_var_plan(task_vars)
        error = foreign_plan_error(given, plan) if given is not None else ""
        if error:
            return self._refused(args, result, error, "foreign-plan")
        facts = {"rke2_numa_plan": plan}
        try:
            facts.update(check_facts(plan, dict(args["check"], state=read)))
        except Exception as e:  # a rule's refusal (a kernel arg the plan should not hold...): the host fails, naming it
            return self._refused(args, result, "cannot decide compliance: %s" % e)
        if plan["warnings"]:
            result["warnings"] = list(result.get("warnings") or []) + list(plan["warnings"])
        self.set_host_facts(facts, result)
        return result if args["return_read"] else without_read(result)

    def _inputs_from_vars(self, args, task_vars):
        """``args`` with the read's options and the decision's inputs each leaves out taken from the host's variables
        (read_from_vars, check_from_vars; plugin_utils/node_inputs.py), templated here; a variable whose template does
        not render fails the host, naming it, before the node is read."""
        problems = []

        def value(name):
            return self.templated(task_vars[name], name, problems) if name in task_vars else None

        def entry(name, node):   # the Node's entry only: the fleet's fact is not templated whole for each host
            by_node = task_vars.get(name)
            if not isinstance(by_node, dict) or node not in by_node:
                return None
            return self.templated(by_node[node], "%s[%s]" % (name, node), problems)

        args = dict(args)
        if args["read_from_vars"]:
            args["read"] = read_inputs(args["read"], value)
        if args["check_from_vars"]:
            args["check"] = check_inputs(args["check"], value, entry)
        if problems:
            raise AnsibleActionFail("; ".join(problems))
        return args

    def _refused(self, args, result, msg, rule=None):
        """A node that cannot be planned or judged: a failure (its message named as the operator's variables), or with
        refused_fails false a result that says why (``refused``), for the caller's summary."""
        result = _failure(result, self.as_variables(msg), rule)
        if not args["refused_fails"]:
            result.update(failed=False, refused=result.pop("msg"))
        return result if args["return_read"] else without_read(result)


def _failure(result, msg, rule=None):
    """The result of a host that fails here: its message first, without the read (a node's whole topology and files,
    printed after the message, buried it) - what stays is what the operator needs: the message and the rule."""
    for key in list(result):
        if key not in ("changed", "warnings", "deprecations", "invocation"):
            del result[key]
    result.update(failed=True, changed=False, msg=msg)
    if rule:
        result["rule"] = rule
    return result


# what a result keeps of the read with return_read false: the task's own keys and who could not read what
RESULT_KEYS = ("changed", "failed", "msg", "warnings", "deprecations", "refused", "rule", "ansible_facts")


def without_read(result):
    """``result`` without the read but its ``access`` ({user, denied}): what a caller that keeps the facts needs of it
    (check.yml's events, one per host, were the node's files - 12 KB a host)."""
    access = result.get("access") or {}
    for key in list(result):
        if key not in RESULT_KEYS:
            del result[key]
    result["access"] = dict((k, access[k]) for k in ("user", "denied") if k in access)
    return result


def planner_options(given):
    """numa_plan's options from the plan role's variables, checked against the planner's argument spec (TypeError
    naming every problem); null leaves an option out (the planner's default), as numa_plan does (NULL_IS_DEFAULT)."""
    given = without_nulls(given, _PLAN_OPTIONS)
    validated = ArgumentSpecValidator(_PLAN_OPTIONS).validate(given)
    if validated.error_messages:
        raise TypeError("; ".join(validated.error_messages))
    return dict((k, v) for k, v in validated.validated_parameters.items() if v is not None)


_PLAN_OPTIONS = dict((k, v) for k, v in PLANNER_SPEC.items() if k != "topology")
