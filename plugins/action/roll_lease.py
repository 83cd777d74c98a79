# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roll_lease: one step of the roll's Lease protocol (plugin_utils/lease_protocol.py), its kubectl calls run where the
task runs as the kubectl action runs them (plugin_utils/kubectl_action.py)."""

from __future__ import annotations

import time

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.utils.display import Display

from ansible_collections.maitred.rke2_numa.plugins.modules import roll_lease as roll_lease_doc
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.argspec import argument_spec
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubectl import ran_result
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubectl_action import KubectlAction
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.lease_protocol import CALLS, call_args, lease_protocol_step
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_fence import node_fence

display = Display()
ROLL_KEYS = ("id", "run", "namespace", "name", "kubeconfig")
STDIN_SHAPE = '{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease"}'   # what a write's stdin holds: its calls checked up front


class ActionModule(KubectlAction):
    """Read, decide, (wait,) write the Lease; the roll fact as this run holds it after."""

    ARGUMENT_SPEC = argument_spec(roll_lease_doc.DOCUMENTATION)

    def step(self, args, task_vars, result):
        roll = dict(args["roll"])
        missing = [k for k in ROLL_KEYS if not roll.get(k)]
        if missing:
            return self.stop(result, "roll_lease: the roll has no %s (the rke2_numa_roll fact); nothing was run" % ", ".join(missing))
        # the calls' context: the roll, and the Node a fence reads (never part of the roll fact the step returns)
        context = dict(roll, fence_node=args["fence"]) if args.get("fence") else roll
        run, error = self.protocol(task_vars, CALLS, call_args, context, (STDIN_SHAPE,))
        if error:
            return self.stop(result, "roll_lease refused, nothing was run: %s" % error)
        result.update(fenced=[], fence_release=False, node_unread="")
        fencing = bool(args.get("fence")) and args.get("fence_check") is not None
        if fencing and self._fenced(args, roll, context, run, result):
            return result
        out = lease_protocol_step(args["mode"], roll, run, nodes=args.get("nodes"), claim=args.get("claim"), fence=args.get("fence"),
                                  wait=args["wait"], seen=args.get("seen"), attempts=args["attempts"],
                                  note=lambda text: display.display("%s: %s" % (self._task.get_name(), text)))
        step = out["step"] or {}
        calls = (["node"] if fencing else []) + out["calls"]
        result.update(failed=out["failed"], stopped=out["msg"] if out["failed"] else "", msg=out["msg"] or step.get("msg", ""),
                      changed=bool(out["written"]) and not self._task.check_mode,
                      step=step, action=step.get("action", ""), written=out["written"], attempts=out["attempts"], seen=out["seen"],
                      lost=out["lost"], roll=out["roll"], calls=calls, requests=self.requests(call_args, context, calls, (STDIN_SHAPE,)))
        if args.get("claim") is not None and not out["failed"]:
            result["slots"] = {"granted": step.get("granted", []), "msg": step.get("slots_msg", "")}
        return result

    def _fenced(self, args, roll, context, run, result):
        """A fence's first part (plugin_utils/node_fence.py): the Node read again; True (the result says why, nothing
        written) when it cannot be read, or when it is no longer this roll's to change - the Lease is then not renewed."""
        check = args["fence_check"]
        answer = ran_result("get", "json", run("node"))
        more = dict(seen=args.get("seen") or {}, step={}, action="", written="", attempts=0, lost=None, roll=None, calls=["node"],
                    requests=self.requests(call_args, context, ["node"], (STDIN_SHAPE,)))
        if answer["failed"]:
            self.stop(result, answer["msg"], node_unread=answer["msg"], **more)
            return True
        admin_cordon = boolean(check.get("admin_cordon") or False)
        findings = node_fence(answer.get("object"), args["fence"], roll, check.get("rancher"), check.get("foreign_annotations") or [],
                              time.time(), admin_cordon)
        if not findings:
            return False
        # before the node's first write, a maintainer at work on a Node still this roll's: nothing of ours on it but the
        # cordon - the roll may return it to service (rolling.yml's rescue)
        release = boolean(check.get("first") or False) and not admin_cordon and not node_fence(
            answer.get("object"), args["fence"], roll, markers_only=True)
        self.stop(result, "; ".join(findings), fenced=findings, fence_release=release, **more)
        return True
