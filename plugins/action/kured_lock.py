# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kured_lock: hold or give back kured's reboot lock (plugin_utils/kured_protocol.py), its kubectl calls run where the
task runs as the kubectl action runs them (plugin_utils/kubectl_action.py)."""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.modules import kured_lock as kured_lock_doc
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.argspec import argument_spec
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubectl_action import KubectlAction
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kured_protocol import CALLS, call_args, kured_lock_step


class ActionModule(KubectlAction):
    """Read kured's DaemonSets, decide, annotate; again from a fresh read when another writer was first."""

    ARGUMENT_SPEC = argument_spec(kured_lock_doc.DOCUMENTATION)

    def step(self, args, task_vars, result):
        lock = {"kubectl": args["kubectl"], "kubeconfig": args.get("kubeconfig")}
        roll_ids = [str(i) for i in args["roll_id"] if str(i or "").strip()]
        if not roll_ids:
            return self.stop(result, "kured_lock: no roll id (roll_id); nothing was run", done=[])
        run, error = self.protocol(task_vars, CALLS, call_args, lock)
        if error:
            return self.stop(result, "kured_lock refused, nothing was run: %s" % error, done=[])
        out = kured_lock_step(args["mode"], run, args["daemonset"], roll_ids, ttl=args["ttl"], attempts=args["attempts"])
        result.update(failed=out["failed"], stopped=out["msg"], msg=out["msg"], changed=bool(out["done"]) and not self._task.check_mode,
                      done=out["done"], attempts=out["attempts"], calls=out["calls"], requests=self.requests(call_args, lock, out["calls"]))
        return result
