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
                     rke2_runtime={"type": "dict"}, read={"type": "dict"}, return_plan={"type": "bool", "default": True},
                     topology=dict(PLANNER_SPEC["topology"], required=False))
READ_MODULE = "maitred.rke2_numa.topology_info"


class ActionModule(ControllerAction):
    """Run the pure planner on the topology given; never touches the host."""

    ARGUMENT_SPEC = ARGUMENT_SPEC
    _requires_connection = True   # with read, topology_info runs on the host (a persistent connection's concern only)
    NULL_IS_DEFAULT = frozenset(k for k in PLANNER_SPEC if k != "topology")
    FROM_VARIABLES = "options_from_vars"

    def decide(self, args, task_vars, result):
        topology, read, runtime = args.pop("topology"), args.pop("read"), args.pop("rke2_runtime")
        export = args.pop("export")
        args.pop("options_from_vars")
        warn = args.pop("warn")
        refused_fails = args.pop("refused_fails")
        return_plan = args.pop("return_plan")
        if (topology is None) == (read is None):
            return dict(result, failed=True, msg="numa_plan: give one of topology (a topology_info result's) and read (topology_info's options)")
        if read is not None:   # the host's topology_info, the one module call, then the plan here, in the same task
            found = self._execute_module(module_name=READ_MODULE, module_args=read, task_vars=task_vars)
            if found.get("failed"):
                return dict(result, failed=True, changed=False, msg=found.get("msg") or "the topology could not be read")
            topology = found["topology"]
            runtime = runtime if runtime is not None else found.get("rke2_runtime")
        kubelet = node_kubelet(runtime=runtime)
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
            if not return_plan:   # the facts hold it: a result is an event per host (plan.yml - AWX keeps every one)
                result.pop("plan", None)
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
