# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""numa_plan: plan a host's NUMA alignment on the controller (no round trip to the host); with ``export``, set the
host's facts rke2_numa_topology and rke2_numa_plan as set_fact would (the plan role: one task per host, not three)."""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.controller_action import ControllerAction
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import (
    ARGUMENT_SPEC as PLANNER_SPEC,
    PlanError,
    foreign_plan_error,
    make_plan,
    node_kubelet,
)

ARGUMENT_SPEC = dict(PLANNER_SPEC, export={"type": "bool", "default": False}, options_from_vars={"type": "bool", "default": False},
                     warn={"type": "bool", "default": True}, refused_fails={"type": "bool", "default": True},
                     rke2_runtime={"type": "dict"})


class ActionModule(ControllerAction):
    """Run the pure planner on the topology given; never touches the host."""

    ARGUMENT_SPEC = ARGUMENT_SPEC
    NULL_IS_DEFAULT = frozenset(k for k in PLANNER_SPEC if k != "topology")
    FROM_VARIABLES = "options_from_vars"

    def decide(self, args, task_vars, result):
        topology = args.pop("topology")
        export = args.pop("export")
        args.pop("options_from_vars")
        warn = args.pop("warn")
        refused_fails = args.pop("refused_fails")
        kubelet = node_kubelet(runtime=args.pop("rke2_runtime"))
        try:
            plan = make_plan(topology, node_version=kubelet, **args)
        except PlanError as e:
            return _refused(result, "no plan for this host: %s" % self.as_variables(str(e)), e.rule, refused_fails)
        result.update(changed=False, plan=plan)
        if plan["warnings"] and warn:
            result["warnings"] = list(plan["warnings"])
        if export:
            given = self.extra_var_plan(task_vars)
            error = foreign_plan_error(given, plan) if given is not None else ""
            if error:
                result.pop("plan", None)
                return _refused(result, error, "foreign-plan", refused_fails)
            self.set_host_facts({"rke2_numa_topology": topology, "rke2_numa_plan": plan}, result)
        return result


def _refused(result, msg, rule, refused_fails):
    """A host the planner refuses: failed, or with refused_fails false a result that says why (``refused``) for the
    caller's summary (plan.yml names the host and fails the run at its end)."""
    result.update(changed=False, rule=rule)
    if refused_fails:
        result.update(failed=True, msg=msg)
    else:
        result["refused"] = msg
    return result
