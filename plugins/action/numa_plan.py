# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""numa_plan: plan a host's NUMA alignment on the controller (no round trip to the host)."""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.controller_action import ControllerAction
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import (
    ARGUMENT_SPEC,
    PlanError,
    make_plan,
)


class ActionModule(ControllerAction):
    """Run the pure planner on the topology given; never touches the host."""

    ARGUMENT_SPEC = ARGUMENT_SPEC

    def decide(self, args, task_vars, result):
        topology = args.pop("topology")
        try:
            plan = make_plan(topology, **args)
        except PlanError as e:
            result.update(failed=True, changed=False, rule=e.rule, msg="no plan for this host: %s" % e)
            return result
        result.update(changed=False, plan=plan)
        if plan["warnings"]:
            result["warnings"] = list(plan["warnings"])
        return result
