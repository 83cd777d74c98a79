# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One way to call the cluster (controller side): the kubectl action's argv, the API requests it sends, what its
answer means.

Every kubectl call of the roles and playbooks is a ``maitred.rke2_numa.kubectl`` task: the verb, the object, the
options (each one VERBS allows for the verb) and the stdin. The object is given one of the ways VERBS allows the verb:
- its kind and names as separate arguments (a name is checked as a Kubernetes name, so it is never read as a flag,
  and passed as ``kind name`` to get and delete, ``kind/name`` to the other verbs);
- a stdin (``-f -``) that holds objects of the kind given - or of one of the kinds of a list (``role,rolebinding``):
  the kinds a List may hold;
- a raw path of the API (``get --raw PATH``, ``create --raw PATH -f -``): checked as a path (``/`` first, each
  segment a letter or digit first, no whitespace), so never a flag;
- ``config view``: the kubeconfig itself, no object.
From them come
- the argv (``call_argv``), run by the action on ``rke2_numa_kubectl_host`` with ``rke2_numa_kubeconfig`` (access.yml:
  with the admin kubeconfig, the identity's bootstrap);
- the API requests the call sends (``call_requests``: plugin_utils/rbac.py kubectl_requests, the one table of them),
  which the RBAC tests read from the tasks' arguments and the identity grants;
- the result (``call_result``): kubectl's own failure words (failure_reason), the failures kubectl reports with exit
  code 0 (cordon and uncordon print "error: unable to ..." when the API refuses the patch), the parsed object.
"""

from __future__ import annotations

import collections
import json
import re

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import rbac
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kube_names import dns1123_label_errors, dns1123_subdomain_errors
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.task_result import failure_reason

# How a call names its objects: KIND - its kind and names; STDIN - what its stdin holds (-f -), of the kind (or one of
# the kinds) given; RAW - a path of the API (--raw PATH; a write sends its stdin, -f -); VIEW - config view, no object.
KIND, STDIN, RAW, VIEW = "kind", "stdin", "raw", "view"
Verb = collections.namedtuple("Verb", "reads_only objects options")
# verb -> Verb(reads only: never changes the cluster, the ways it names its objects (the first: without stdin or raw),
# the options it takes besides the common ones). An option is written as kubectl takes it: "--name" (a switch) or
# "--name=" (with a value, given as "--name=value").
VERBS = {
    "get": Verb(True, (KIND, STDIN, RAW), ("--ignore-not-found",)),
    "wait": Verb(True, (KIND,), ("--for=", "--timeout=")),
    "logs": Verb(True, (KIND,), ("--container=",)),
    "config": Verb(True, (VIEW,), ("--minify", "--flatten", "--raw")),
    "annotate": Verb(False, (KIND,), ("--overwrite", "--resource-version=")),
    "label": Verb(False, (KIND,), ("--overwrite",)),
    "cordon": Verb(False, (KIND,), ()),
    # a merge patch the collection builds itself (plugins/filter: node_cordon_patch, node_release_patch), never input
    "patch": Verb(False, (KIND,), ("--type=", "--patch=")),
    "uncordon": Verb(False, (KIND,), ()),
    "drain": Verb(False, (KIND,), ("--ignore-daemonsets", "--delete-emptydir-data", "--timeout=", "--grace-period=", "--pod-selector=")),
    "delete": Verb(False, (KIND,), ("--ignore-not-found", "--wait=", "--timeout=")),
    "create": Verb(False, (STDIN, RAW), ("--validate=",)),
    "replace": Verb(False, (STDIN,), ("--validate=",)),
    "apply": Verb(False, (STDIN,), ("--server-side", "--force-conflicts", "--field-manager=", "--validate=")),
}
# the verbs that take their objects as TYPE NAME...; the others as TYPE/NAME (cordon, drain and logs take no TYPE word)
TYPE_NAMES = ("get", "delete")
# a raw path: /SEGMENT/..., each segment a letter or digit first (never a flag, no "..", no query, no whitespace)
_RAW_PATH = re.compile(r"(/[A-Za-z0-9][A-Za-z0-9._-]*)+")
OUTPUTS = ("json", "name")
# What kubectl prints on stderr with exit code 0 when the API refused the cordon's or uncordon's patch.
_UNABLE = "error: unable to"


class KubectlArgError(ValueError):
    """A call the action refuses before it runs anything."""


def _option_errors(verb, options):
    allowed = VERBS[verb].options
    errors = []
    for option in options:
        text = str(option)
        name = text.split("=", 1)[0] + ("=" if "=" in text else "")
        if not text.startswith("--") or name not in allowed:
            errors.append("%s is not an option of kubectl %s here (%s)" % (text, verb, ", ".join(allowed) or "none"))
    return errors


def objects_form(args):
    """How the call of ``args`` names its objects: RAW with a raw path, STDIN with a stdin (or for a verb that reads
    its objects from stdin alone), else the verb's first way (KIND, or VIEW for config). call_argv refuses a way the
    verb does not take (a stdin to wait, a raw path to delete)."""
    objects = VERBS[args["verb"]].objects
    if args.get("raw"):
        return RAW
    if args.get("stdin") or objects[0] == STDIN:
        return STDIN
    return objects[0]


def _kinds(kind):
    return str(kind).split(",") if kind else []


def _form_errors(verb, form, args, names):
    """What the way the call names its objects leaves out or needs."""
    objects = VERBS[verb].objects
    if form not in objects:
        return ["kubectl %s takes no %s here (its objects: %s)" % (verb, form, ", ".join(objects))]
    if form == KIND:
        return [] if args.get("kind") else ["kubectl %s needs a kind" % verb]
    if form == STDIN:
        if names or not args.get("stdin"):
            return ["kubectl %s reads its object from stdin: no names, and a stdin" % verb]
        return [] if args.get("kind") else ["kubectl %s needs a kind (what its stdin holds)" % verb]
    given = [key for key in ("kind", "names", "namespace", "all_namespaces", "selector", "field_selector", "arguments") if args.get(key)]
    if form == VIEW:
        return ["kubectl %s view takes no %s" % (verb, ", ".join(given))] if given else []
    given += ["output"] if args.get("output") else []
    errors = ["kubectl %s --raw takes no %s (the path names the object)" % (verb, ", ".join(given))] if given else []
    raw = str(args["raw"])
    if not _RAW_PATH.fullmatch(raw):
        errors.append("raw %r is not a path of the API (/ first, each segment a letter or digit first, then letters, digits, ., _, -)" % raw)
    if VERBS[verb].reads_only and args.get("stdin"):
        errors.append("kubectl %s --raw sends no stdin" % verb)
    elif not VERBS[verb].reads_only and not args.get("stdin"):
        errors.append("kubectl %s --raw sends its stdin: a stdin" % verb)
    return errors


def call_argv(args):
    """The argv of a call. ``args``: the action's arguments (verb, kind, names, raw, namespace, all_namespaces,
    selector, field_selector, output, options, arguments, stdin, kubectl, kubeconfig). Raises KubectlArgError naming
    every problem."""
    verb, kind, names = args["verb"], args.get("kind"), [str(n) for n in args.get("names") or []]
    if verb not in VERBS:
        raise KubectlArgError("verb %r: one of %s" % (verb, ", ".join(sorted(VERBS))))
    form = objects_form(args)
    errors = _form_errors(verb, form, args, names)
    if form in (KIND, STDIN):
        for word in _kinds(kind):
            try:
                rbac.kubectl_resource(word)
            except rbac.KubectlCallError as e:
                errors.append("kind %s: %s" % (word, e))
    if form == STDIN and kind and not errors:
        errors += _stdin_errors(str(kind), args["stdin"])
    for name in names:
        if dns1123_subdomain_errors(name):
            errors.append("%r is not a Kubernetes name: %s" % (name, "; ".join(dns1123_subdomain_errors(name))))
    namespace = args.get("namespace")
    if namespace and dns1123_label_errors(namespace):
        errors.append("namespace %r: %s" % (namespace, "; ".join(dns1123_label_errors(namespace))))
    if namespace and args.get("all_namespaces"):
        errors.append("a namespace and all_namespaces")
    errors += _option_errors(verb, args.get("options") or [])
    for word in args.get("arguments") or []:
        if str(word).startswith("-") or "=" not in str(word) and not str(word).endswith("-"):
            errors.append("%r is not a key=value or key- argument" % (word,))
    if args.get("output") not in (None, "") and args["output"] not in OUTPUTS:
        errors.append("output %r: one of %s" % (args["output"], ", ".join(OUTPUTS)))
    if errors:
        raise KubectlArgError("; ".join(errors))
    return shape_argv(args)


def shape_argv(args):
    """The argv of checked ``args`` (call_argv checks them first); tests/fixtures/kubectl_calls.py gives it the shape
    of each task's call, its values known by name only. In kubectl's order: the verb, its object (``view``,
    ``--raw PATH``, the kind and names; nothing for a stdin), then the flags, the output, ``-f -`` and the
    annotate/label words."""
    verb, kind, names = args["verb"], args.get("kind"), [str(n) for n in args.get("names") or []]
    form = objects_form(args)
    argv = [str(args.get("kubectl") or "kubectl"), "--kubeconfig", str(args["kubeconfig"]), verb]
    if form == VIEW:
        argv.append("view")
    elif form == RAW:
        argv += ["--raw", str(args["raw"])]
    elif form == STDIN:
        pass
    elif names and verb in TYPE_NAMES:
        argv += [str(kind)] + names
    elif names:
        argv += ["%s/%s" % (kind, name) for name in names]
    else:
        argv.append(str(kind))
    if args.get("namespace"):
        argv += ["--namespace", str(args["namespace"])]
    if args.get("all_namespaces"):
        argv.append("--all-namespaces")
    if args.get("selector"):
        argv.append("--selector=%s" % args["selector"])
    if args.get("field_selector"):
        argv.append("--field-selector=%s" % args["field_selector"])
    argv += [str(o) for o in args.get("options") or []]
    if args.get("output"):
        argv += ["-o", str(args["output"])]
    if form == STDIN or form == RAW and args.get("stdin"):
        argv += ["-f", "-"]
    argv += [str(a) for a in args.get("arguments") or []]
    return argv


def _stdin_errors(kind, stdin):
    """A stdin must hold what its kind says - one of the kinds of a list (a List: each item) -, so that the call's
    declared requests are the ones it sends."""
    try:
        obj = json.loads(stdin)
    except (TypeError, ValueError) as e:
        return ["stdin is not JSON: %s" % e]
    items = obj.get("items") if isinstance(obj, dict) and obj.get("kind") == "List" else [obj]
    wanted, found = {rbac.kubectl_resource(word) for word in _kinds(kind)}, set()
    for item in items or []:
        word = str(item.get("kind") or "").lower() if isinstance(item, dict) else ""
        try:
            resource = rbac.kubectl_resource(word)
        except rbac.KubectlCallError:
            resource = None
        if resource not in wanted:
            found.add(word or "an object without a kind")
    return ["stdin holds %s, not %s" % (", ".join(sorted(found)), kind)] if found else []


def call_requests(args):
    """[{verb, group, resource, namespace, named}]: the API requests the call of ``args`` sends - from its shape (verb,
    its objects: kind and names, the kinds its stdin holds, the raw path; namespace, options) through
    rbac.kubectl_requests, the one table of them."""
    stdin_kinds = [rbac.kubectl_resource(word) for word in _kinds(args.get("kind"))] if objects_form(args) == STDIN else []
    return [r._asdict() for r in rbac.kubectl_requests(shape_argv(args)[1:], stdin_kinds)]


def reads_only(verb):
    return VERBS[verb].reads_only


def ran_result(verb, output, ran):
    """call_result of ansible.builtin.command's answer ``ran`` with its rc, stdout and stderr; a failure when kubectl did
    not run at all (no rc: no kubectl there) - what a protocol action reads of each of its calls."""
    if "rc" not in ran:
        return {"failed": True, "changed": False, "msg": ran.get("msg") or "kubectl did not run", "object": None, "rc": None,
                "stdout": "", "stderr": ""}
    answer = call_result(verb, output, ran["rc"], ran.get("stdout"), ran.get("stderr"), ran.get("msg"))
    return dict(answer, rc=ran["rc"], stdout=ran.get("stdout") or "", stderr=ran.get("stderr") or "")


def call_result(verb, output, rc, stdout, stderr, msg=""):
    """{failed, changed, msg, object}: what the call's answer means. ``object``: the parsed JSON of
    ``-o json`` (None when it failed or printed nothing). ``msg``: what ansible.builtin.command said - kept when it
    says more than "non-zero return code" (kubectl could not be started: "[Errno 2] No such file or directory")."""
    failed = rc != 0 or (verb in ("cordon", "uncordon") and _UNABLE in (stderr or ""))
    if verb == "cordon":
        changed = "already cordoned" not in (stdout or "")
    elif verb == "uncordon":
        changed = "already uncordoned" not in (stdout or "")
    elif verb == "patch":
        changed = "(no change)" not in (stdout or "")
    else:
        changed = not reads_only(verb)
    obj = None
    if output == "json" and not failed and (stdout or "").strip():
        try:
            obj = json.loads(stdout)
        except ValueError:
            obj = None
    reason = ""
    if failed:
        reason = failure_reason({"msg": (msg or "non-zero return code") if rc != 0 else "", "stderr": stderr})
    return {"failed": failed, "changed": changed and not failed, "msg": reason, "object": obj}
