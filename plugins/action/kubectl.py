# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubectl: one kubectl call, checked and declared on the controller, run where the task runs as ansible.builtin.command
runs it (plugin_utils/run_command.py: on the controller itself, without a module process). In check mode a read verb
runs, a write is skipped (plugin_utils/kubectl.py VERBS: a verb whose requests are all reads is a read)."""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.doc_fragments import kubectl_verbs as verbs_doc
from ansible_collections.maitred.rke2_numa.plugins.modules import kubectl as kubectl_doc
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.argspec import argument_spec
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubectl import KubectlArgError, call_argv, call_requests, call_result, reads_only
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubectl_action import KubectlAction
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.run_command import run_command


class ActionModule(KubectlAction):
    """Build the argv (plugin_utils/kubectl.py), run it where the task runs, read the answer."""

    # the verb option's choices: its doc fragment, generated from VERBS (scripts/gen_specs.py)
    ARGUMENT_SPEC = argument_spec(kubectl_doc.DOCUMENTATION, fragments=(verbs_doc.ModuleDocFragment.DOCUMENTATION,))

    def step(self, args, task_vars, result):
        for key, variable in (("kubectl", "rke2_numa_kubectl"), ("kubeconfig", "rke2_numa_kubeconfig")):
            if not args.get(key):
                args[key] = self._templar.template(task_vars.get(variable)) if variable in task_vars else None
        if not args.get("kubeconfig"):
            result.update(failed=True, msg="kubectl: no kubeconfig (set rke2_numa_kubeconfig); nothing was run")
            return result
        try:
            argv = call_argv(args)
            requests = call_requests(args)
        except KubectlArgError as e:
            result.update(failed=True, msg="kubectl %s refused, nothing was run: %s" % (args["verb"], e))
            return result
        # a read runs in check mode (it changes nothing), a write never - unless the task says check_mode=false
        ran = run_command(self, task_vars, argv, args.get("stdin") or None, always=reads_only(args["verb"]))
        result["requests"] = requests
        if ran.get("skipped"):   # a write in check mode, as ansible.builtin.command has it
            result.update(skipped=True, changed=False, msg=ran.get("msg") or "skipped in check mode")
            return result
        if "rc" not in ran:   # the command did not run (no kubectl there ...)
            result.update(failed=True, msg=ran.get("msg") or "kubectl did not run", cmd=argv)
            return result
        answer = call_result(args["verb"], args.get("output"), ran["rc"], ran.get("stdout"), ran.get("stderr"), ran.get("msg"))
        result.update(cmd=argv, rc=ran["rc"], stdout=ran.get("stdout", ""), stderr=ran.get("stderr", ""),
                      stdout_lines=ran.get("stdout_lines", []), stderr_lines=ran.get("stderr_lines", []),
                      object=answer["object"], changed=answer["changed"])
        if answer["failed"]:
            result.update(failed=True, msg=answer["msg"])
        return result
