# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""roll_lease: one step of the roll's Lease protocol (plugin_utils/lease_protocol.py), its kubectl calls run where the
task runs as the kubectl action runs them (plugin_utils/run_command.py)."""

from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.maitred.rke2_numa.plugins.modules import roll_lease as roll_lease_doc
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.argspec import argument_spec
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubectl import KubectlArgError, call_argv, call_requests, reads_only
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.lease_protocol import CALLS, call_args, lease_protocol_step
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.run_command import run_command

ARGUMENT_SPEC = argument_spec(roll_lease_doc.DOCUMENTATION)
display = Display()
ROLL_KEYS = ("id", "run", "namespace", "name", "kubeconfig")
STDIN_SHAPE = '{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease"}'   # what a write's stdin holds: its calls checked up front


class ActionModule(ActionBase):
    """Read, decide, (wait,) write the Lease; the roll fact as this run holds it after."""

    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        roll = dict(args["roll"])
        missing = [k for k in ROLL_KEYS if not roll.get(k)]
        if missing:
            return self._stop(result, "roll_lease: the roll has no %s (the rke2_numa_roll fact); nothing was run" % ", ".join(missing))
        calls = {}
        try:
            for name in CALLS:
                calls[name] = call_args(name, roll, STDIN_SHAPE)
                call_argv(calls[name])
        except KubectlArgError as e:
            return self._stop(result, "roll_lease refused, nothing was run: %s" % e)
        check = bool(self._task.check_mode)

        def run(name, stdin=None):
            argv = call_argv(call_args(name, roll, stdin))
            if check and not reads_only(CALLS[name]["verb"]):   # check mode: decided, not written
                return {"rc": 0, "stdout": "", "stderr": ""}
            return run_command(self, task_vars, argv, stdin, always=True)

        out = lease_protocol_step(args["mode"], roll, run, nodes=args.get("nodes"), claim=args.get("claim"), fence=args.get("fence"),
                                  wait=args["wait"], seen=args.get("seen"), attempts=args["attempts"],
                                  note=lambda text: display.display("%s: %s" % (self._task.get_name(), text)))
        step = out["step"] or {}
        result.update(failed=out["failed"], stopped=out["msg"] if out["failed"] else "", msg=out["msg"] or step.get("msg", ""),
                      changed=bool(out["written"]) and not check,
                      step=step, action=step.get("action", ""), written=out["written"], attempts=out["attempts"], seen=out["seen"],
                      lost=out["lost"], roll=out["roll"], calls=out["calls"],
                      requests=[r for name in dict.fromkeys(out["calls"]) for r in call_requests(calls[name])])
        if args.get("claim") is not None and not out["failed"]:
            result["slots"] = {"granted": step.get("granted", []), "msg": step.get("slots_msg", "")}
        return result

    @staticmethod
    def _stop(result, msg):
        result.update(failed=True, stopped=msg, msg=msg)
        return result
