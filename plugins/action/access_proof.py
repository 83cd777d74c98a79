# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""access_proof: the scoped identity's claims tried on the live cluster with server-side dry runs (the trials and
their verdicts: plugin_utils/access_proof.py); kubectl runs where the task runs."""

from __future__ import annotations

import json

from ansible_collections.maitred.rke2_numa.plugins.modules import access_proof as access_proof_doc
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import access_proof, admission, rbac, roll_pick
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.argspec import argument_spec
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.controller_action import ControllerAction
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.maintainers import KURED_LOCK_ANNOTATION, kured_settings
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.playbook_inputs import SERVER_ROLE_LABELS
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.run_command import run_command

ARGUMENT_SPEC = argument_spec(access_proof_doc.DOCUMENTATION)


class ActionModule(ControllerAction):
    """Three reads, then one kubectl per trial, each a dry run."""

    _requires_connection = True
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def _kubectl(self, args, task_vars, argv, stdin=None):
        ran = run_command(self, task_vars, [args["kubectl"], "--kubeconfig", args["kubeconfig"]] + list(argv), stdin, stdin_add_newline=False)
        if "rc" not in ran:
            return 127, "", str(ran.get("msg") or "kubectl did not run")
        return ran["rc"], ran.get("stdout", ""), ran.get("stderr", "")

    def _outside(self, args, task_vars):
        """A control-plane Node (never enrolled: access.yml enrols the workers) not among ``exclude``; "" for none."""
        for label in SERVER_ROLE_LABELS:
            rc, out, dummy = self._kubectl(args, task_vars, ["get", "nodes", "--selector", label, "-o", "name"])
            names = [line.split("/", 1)[1] for line in out.splitlines() if rc == 0 and line.startswith("node/")]
            found = [n for n in names if n not in args["exclude"] and n != args["node"]]
            if found:
                return sorted(found)[0]
        return ""

    def decide(self, args, task_vars, result):
        nodes = [str(roll_pick.node_name(task_vars["hostvars"], h)) for h in args["hosts"]]
        args["exclude"] = list(args["exclude"]) + nodes
        args["node"] = args.get("node") or (nodes[0] if nodes else "")
        if not args.get("kubectl"):
            args["kubectl"] = self._templar.template(task_vars.get("rke2_numa_kubectl") or "kubectl")
        rc, out, dummy = self._kubectl(args, task_vars, ["get", "--raw", "/apis/%s/%s" % admission.GROUP_VERSION])
        policies = rc == 0 and admission.served(out)
        outside = self._outside(args, task_vars)
        kured_exists, kured_lock = False, KURED_LOCK_ANNOTATION
        if args["kured"]:
            namespace, name = rbac.kured_target(args["kured"])
            # the namespace's DaemonSets listed, not kured's got: a get of one that is not there makes kubectl look the
            # namespace up, which the identity may not
            rc, out, dummy = self._kubectl(args, task_vars, ["get", "daemonsets", "--namespace", namespace, "-o", "json"])
            try:
                found = [d for d in json.loads(out).get("items") or [] if (d.get("metadata") or {}).get("name") == name] if rc == 0 else []
            except (ValueError, AttributeError):
                found = []
            kured_exists = bool(found)
            settings = kured_settings(found[0]) if found else {}
            kured_lock = settings.get("lock_annotation") or KURED_LOCK_ANNOTATION   # as kured reads it: its flag, then KURED_*
        try:
            tried = access_proof.trials(args["node"], outside, args["access_namespace"], args["probe_namespace"], args["kured"], args["lease"],
                                        args["drain_namespaces"], policies, args["prove"], kured_exists, kured_lock)
        except access_proof.ProofError as e:
            result.update(failed=True, changed=False, msg="access_proof refused, nothing was run: %s" % e)
            return result
        answers = [self._kubectl(args, task_vars, t.argv, t.stdin) for t in tried]
        verdict = access_proof.findings(tried, answers)
        result.update(changed=False, policies=policies, outside=outside, **verdict)
        if verdict["untried"]:
            result["warnings"] = ["%d of the proof's requests were not sent: this kubectl would not do a server-side dry run without the "
                                  "server's OpenAPI document (%s); a newer kubectl tries them" % (len(verdict["untried"]), verdict["untried"][0])]
        if verdict["findings"]:
            message = ("the live cluster disagrees with what docs/ACCESS.md says of the kubeconfig %s: %s"
                       % (args["kubeconfig"], "; ".join(verdict["findings"])))
            if args["strict"]:
                result.update(failed=True, msg=message + " - nothing was changed")
            else:
                result.setdefault("warnings", []).append(message)
        return result
