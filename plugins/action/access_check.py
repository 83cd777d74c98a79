# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""access_check: what the API server says a kubeconfig may do, against what the playbook needs (controller only)."""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.modules import access_check as access_check_doc
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.argspec import argument_spec
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.controller_action import ControllerAction
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rbac import access_findings, kubectl_objects
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.task_result import failure_reason

ARGUMENT_SPEC = argument_spec(access_check_doc.DOCUMENTATION)
GRANT = "run maitred.rke2_numa.access once and use the kubeconfig it writes (docs/LEAST_PRIVILEGE.md)"


def _parsed(text):
    try:
        return kubectl_objects(text)
    except ValueError:
        return {}


class ActionModule(ControllerAction):
    """Decide from the reviews' answers; never touches the host."""

    ARGUMENT_SPEC = ARGUMENT_SPEC

    def decide(self, args, task_vars, result):
        reply, kubeconfig, playbook = args["reply"], args["kubeconfig"], args["playbook"]
        found = access_findings(_parsed(str(reply.get("stdout") or "")) if reply.get("rc", 1) == 0 else {}, playbook,
                                args["probe_namespace"], args["kured_daemonset"], args["prove"], args["labels_via"],
                                args["lease"], evict=args["drain_namespaces"])
        warnings = []
        if found["everything"]:
            warnings.append("the kubeconfig %s may do everything in the cluster (cluster-admin), more than %s needs: a mistake or a "
                            "hostile inventory could do as much; %s" % (kubeconfig, playbook, GRANT))
        warnings += ["the kubeconfig %s %s: the roll goes on without it and still refuses a node while kured holds its lock"
                     % (kubeconfig, m) for m in found["optional_missing"]]
        problem = None
        if found["unreadable"]:
            why = failure_reason(reply) if reply.get("rc", 1) != 0 else "its answer was not the reviews asked for"
            problem = "could not ask the API what the kubeconfig %s may do: %s" % (kubeconfig, why)
        elif found["missing"]:
            problem = "the kubeconfig %s %s" % (kubeconfig, "; ".join(found["missing"]))
        result.update(changed=False, **found)
        if problem and args["strict"]:
            result.update(failed=True, msg="%s - nothing was changed; %s (its identity holds exactly these rights)" % (problem, GRANT))
        elif problem:
            warnings.append(problem)
        if warnings:
            result["warnings"] = warnings
        return result
