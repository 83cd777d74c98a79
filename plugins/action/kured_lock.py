# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kured_lock: hold or give back kured's reboot lock (plugin_utils/kured_protocol.py), its kubectl calls run where the
task runs as the kubectl action runs them (plugin_utils/run_command.py)."""

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.maitred.rke2_numa.plugins.modules import kured_lock as kured_lock_doc
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.argspec import argument_spec
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubectl import KubectlArgError, call_argv, call_requests, reads_only
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kured_protocol import CALLS, call_args, kured_lock_step
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.run_command import run_command

ARGUMENT_SPEC = argument_spec(kured_lock_doc.DOCUMENTATION)


class ActionModule(ActionBase):
    """Read kured's DaemonSets, decide, annotate; again from a fresh read when another writer was first."""

    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        lock = {"kubectl": args["kubectl"], "kubeconfig": args.get("kubeconfig")}
        roll_ids = [str(i) for i in args["roll_id"] if str(i or "").strip()]
        if not roll_ids:
            return self._stop(result, "kured_lock: no roll id (roll_id); nothing was run")
        calls = {}
        try:
            for name in CALLS:
                calls[name] = call_args(name, lock)
                call_argv(calls[name])
        except KubectlArgError as e:
            return self._stop(result, "kured_lock refused, nothing was run: %s" % e)
        check = bool(self._task.check_mode)

        def run(name, target=None):
            argv = call_argv(call_args(name, lock, target))
            if check and not reads_only(CALLS[name]["verb"]):   # check mode: decided, not written
                return {"rc": 0, "stdout": "", "stderr": ""}
            return run_command(self, task_vars, argv, None, always=True)

        out = kured_lock_step(args["mode"], run, args["daemonset"], roll_ids, ttl=args["ttl"], attempts=args["attempts"])
        result.update(failed=out["failed"], stopped=out["msg"], msg=out["msg"], changed=bool(out["done"]) and not check,
                      done=out["done"], attempts=out["attempts"], calls=out["calls"],
                      requests=[r for name in dict.fromkeys(out["calls"]) for r in call_requests(calls[name])])
        return result

    @staticmethod
    def _stop(result, msg):
        result.update(failed=True, stopped=msg, msg=msg, done=[])
        return result
