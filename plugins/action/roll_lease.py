# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roll_lease: one step of the roll's Lease protocol (plugin_utils/lease_protocol.py), its kubectl calls run where the
task runs as the kubectl action runs them (plugin_utils/kubectl_action.py)."""

from __future__ import annotations

from ansible.utils.display import Display

from ansible_collections.maitred.rke2_numa.plugins.modules import roll_lease as roll_lease_doc
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.argspec import argument_spec
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubectl_action import KubectlAction
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.lease_protocol import CALLS, call_args, lease_protocol_step

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
        run, error = self.protocol(task_vars, CALLS, call_args, roll, (STDIN_SHAPE,))
        if error:
            return self.stop(result, "roll_lease refused, nothing was run: %s" % error)
        out = lease_protocol_step(args["mode"], roll, run, nodes=args.get("nodes"), claim=args.get("claim"), fence=args.get("fence"),
                                  wait=args["wait"], seen=args.get("seen"), attempts=args["attempts"],
                                  note=lambda text: display.display("%s: %s" % (self._task.get_name(), text)))
        step = out["step"] or {}
        result.update(failed=out["failed"], stopped=out["msg"] if out["failed"] else "", msg=out["msg"] or step.get("msg", ""),
                      changed=bool(out["written"]) and not self._task.check_mode,
                      step=step, action=step.get("action", ""), written=out["written"], attempts=out["attempts"], seen=out["seen"],
                      lost=out["lost"], roll=out["roll"], calls=out["calls"],
                      requests=self.requests(call_args, roll, out["calls"], (STDIN_SHAPE,)))
        if args.get("claim") is not None and not out["failed"]:
            result["slots"] = {"granted": step.get("granted", []), "msg": step.get("slots_msg", "")}
        return result
