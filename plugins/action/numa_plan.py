# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""numa_plan: plan a host's NUMA alignment on the controller (no round trip to the host)."""

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import (
    ARGUMENT_SPEC,
    PlanError,
    make_plan,
)


class ActionModule(ActionBase):
    """Run the pure planner on the topology given; never touches the host."""

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        del validation
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
