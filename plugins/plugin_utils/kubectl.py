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
- the API requests the call sends (``call_requests``: VERBS, the one table of what each verb sends), which the RBAC
  tests read from the tasks' arguments and the identity grants (plugin_utils/rbac.py RULES); whether it writes
  (``reads_only``: a read runs in check mode, a write never); the module's documentation of each verb (its doc
  fragment, written by scripts/gen_specs.py from VERBS);
- the result (``call_result``): kubectl's own failure words (failure_reason), the failures kubectl reports with exit
  code 0 (cordon and uncordon print "error: unable to ..." when the API refuses the patch), the parsed object.
"""

from __future__ import annotations

import collections
import json
import re

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kube_names import dns1123_label_errors, dns1123_subdomain_errors
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.task_result import failure_reason

DRA_GROUP = "resource.k8s.io"   # Dynamic Resource Allocation (resource.k8s.io/v1)
# kubectl's resource words, as our calls write them -> (API group, resource): the plural and the words listed. The last
# ones are access.yml's, with the admin kubeconfig (the identity's bootstrap; the identity holds none of them): the
# identity's objects - its namespaces, ServiceAccount, roles and bindings, the admission policies and the enrolment
# ConfigMap - and the SubjectAccessReviews that ask what its ServiceAccount may do
_RESOURCES = {word: (group, plural) for group, plural, words in (
    ("", "nodes", ("node", "no")), ("", "pods", ("pod", "po")), ("apps", "daemonsets", ("daemonset", "ds")),
    ("authorization.k8s.io", "selfsubjectaccessreviews", ("selfsubjectaccessreview",)), ("coordination.k8s.io", "leases", ("lease",)),
    (DRA_GROUP, "resourceslices", ()), (DRA_GROUP, "resourceclaims", ()), (DRA_GROUP, "resourceclaimtemplates", ("resourceclaimtemplate",)),
    ("", "namespaces", ("namespace",)), ("", "serviceaccounts", ("serviceaccount",)), ("", "configmaps", ("configmap",)),
    ("rbac.authorization.k8s.io", "clusterroles", ("clusterrole",)),
    ("rbac.authorization.k8s.io", "clusterrolebindings", ("clusterrolebinding",)),
    ("rbac.authorization.k8s.io", "roles", ("role",)), ("rbac.authorization.k8s.io", "rolebindings", ("rolebinding",)),
    ("admissionregistration.k8s.io", "validatingadmissionpolicies", ("validatingadmissionpolicy",)),
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings", ("validatingadmissionpolicybinding",)),
    ("authorization.k8s.io", "subjectaccessreviews", ("subjectaccessreview",))) for word in (plural,) + words}
# The cluster-scoped resource our calls name beside namespaced ones (get nodes,pods --all-namespaces; drain): its requests
# go to no namespace whatever the call's. (The others' requests keep the call's: RBAC authorizes a GET of a namespace in
# that namespace, and a list with --all-namespaces of a cluster-scoped kind is a cluster-wide one either way.)
CLUSTER_SCOPED = ("nodes",)
Request = collections.namedtuple("Request", "verb group resource namespace named")


class KubectlCallError(ValueError):
    """A kubectl call whose requests are not written down here (a verb VERBS lacks, a kind _RESOURCES lacks)."""


def kubectl_resource(word):
    """(group, resource) of a kind as kubectl takes it (node, pods, lease, ...); KubectlCallError for one not known here."""
    try:
        return _RESOURCES[word]
    except KeyError:
        raise KubectlCallError("unknown resource %r" % word) from None


# How a call names its objects: KIND - its kind and names; STDIN - what its stdin holds (-f -), of the kind (or one of
# the kinds) given; RAW - a path of the API (--raw PATH; a write sends its stdin, -f -); VIEW - config view, no object.
KIND, STDIN, RAW, VIEW = "kind", "stdin", "raw", "view"
# What a request of a verb is about: OBJECT - the call's objects (each kind of its kind: of its names, or of what its
# stdin holds); PATH - the raw path (its resource, namespace and name; a path that names no resource: itself, a
# non-resource URL); else a kind as kubectl takes it (node, pod, ...).
OBJECT, PATH = "object", "path"
EVERY = "*"   # every namespace
# When a request is sent (Sends.when: each must hold; none - always): the way the call names its objects (KIND, STDIN,
# RAW), NAMED or UNNAMED, IN_NAMESPACE (its object's request goes to one namespace), WAITS (no --wait=false), or an
# option of the call ("--ignore-not-found"). Each with its words for the module's documentation.
NAMED, UNNAMED, IN_NAMESPACE, WAITS = "named", "unnamed", "in_namespace", "waits"
CONDITIONS = {
    KIND: ("by kind", lambda call, ns: call["form"] == KIND),
    STDIN: ("from stdin", lambda call, ns: call["form"] == STDIN),
    RAW: ("with raw", lambda call, ns: call["form"] == RAW),
    NAMED: ("with names", lambda call, ns: call["named"]),
    UNNAMED: ("without names", lambda call, ns: not call["named"]),
    IN_NAMESPACE: ("in a namespace", lambda call, ns: ns not in (None, EVERY)),
    WAITS: ("unless C(--wait=false)", lambda call, ns: "--wait=false" not in call["options"]),
}
# The API's verbs that change nothing: a kubectl verb whose requests are all of them is a read - it runs in check mode.
READS = ("get", "list", "watch")


class Sends(collections.namedtuple("Sends", "verb resource subresource namespaced named when")):
    """One API request of a kubectl verb, as kubectl 1.20 to 1.33 send it (k8s.io/kubectl pkg/cmd, pkg/drain; the API
    stand-in's call log shows them): ``verb`` the API's; ``resource`` OBJECT, PATH or a kind; ``subresource``;
    ``namespaced`` True - in the call's namespace (every one with --all-namespaces; none for a cluster-scoped kind),
    False - cluster-scoped, EVERY - in every namespace whatever the call says; ``named`` - the request names its object;
    ``when`` - CONDITIONS (or an option of the call) that must hold for it to be sent."""

    def __new__(cls, verb, resource=OBJECT, subresource="", namespaced=True, named=True, when=()):
        return super(Sends, cls).__new__(cls, verb, resource, subresource, namespaced, named, tuple(when))


class Verb(collections.namedtuple("Verb", "objects options sends needs")):
    """A kubectl verb: the ways it names its objects (the first: without stdin or raw), the options it takes besides the
    common ones - "--name" (a switch) or "--name=" (with a value, given as "--name=value") -, the API requests it sends
    (Sends), and the options a call must give (the requests written down are those of a call with them)."""

    def __new__(cls, objects, options, sends, needs=()):
        return super(Verb, cls).__new__(cls, objects, options, sends, needs)

    @property
    def reads_only(self):
        """Never changes the cluster: each of its requests is a read (READS)."""
        return all(send.verb in READS for send in self.sends)


# the builder GETs the object, then one PATCH of what changes (annotate, label, patch TYPE/NAME: pkg/cmd/patch RunPatch's
# GET - its copy tells "patched" from "patched (no change)" - then resource.Helper.Patch)
_READ_PATCH = (Sends("get"), Sends("patch"))
_NODE_PATCH = (Sends("get", "node", namespaced=False), Sends("patch", "node", namespaced=False))
# verb -> Verb: the one table of what each kubectl verb of ours takes and sends.
VERBS = {
    "get": Verb((KIND, STDIN, RAW), ("--ignore-not-found",), (
        Sends("get", when=(KIND, NAMED)), Sends("list", named=False, when=(KIND, UNNAMED)),
        # after a 404, kubectl looks up the namespace (a missing namespace is not ignored)
        Sends("get", "namespace", when=(KIND, NAMED, "--ignore-not-found", IN_NAMESPACE)),
        # the builder GETs each object of the stdin by its name (--ignore-not-found: a 404 is fine)
        Sends("get", when=(STDIN,)), Sends("get", PATH, when=(RAW,)))),
    # the builder's GET, then (1.20) a watch, (1.27+) a list and a watch, both with fieldSelector metadata.name
    "wait": Verb((KIND,), ("--for=", "--timeout="), (Sends("get"), Sends("list"), Sends("watch"))),
    "logs": Verb((KIND,), ("--container=",), (Sends("get", "pod"), Sends("get", "pod", "log"))),
    "config": Verb((VIEW,), ("--minify", "--flatten", "--raw"), ()),   # config view reads the kubeconfig: no request
    "annotate": Verb((KIND,), ("--overwrite", "--resource-version="), _READ_PATCH),
    "label": Verb((KIND,), ("--overwrite",), _READ_PATCH),
    "cordon": Verb((KIND,), (), _NODE_PATCH),
    # a merge patch the collection builds itself (plugins/filter: node_cordon_patch, node_release_patch), never input
    "patch": Verb((KIND,), ("--type=", "--patch="), _READ_PATCH),
    "uncordon": Verb((KIND,), (), _NODE_PATCH),
    # pkg/drain: the cordon, the node's pods (list, fieldSelector spec.nodeName), each DaemonSet-owned pod's DaemonSet
    # (--ignore-daemonsets), the evictions (policy/v1, a subresource of the core pod), a GET per evicted pod until it is gone
    "drain": Verb((KIND,), ("--ignore-daemonsets", "--delete-emptydir-data", "--timeout=", "--grace-period=", "--pod-selector="),
                  _NODE_PATCH + (Sends("list", "pod", namespaced=EVERY, named=False), Sends("get", "daemonset", namespaced=EVERY),
                                 Sends("create", "pod", "eviction", namespaced=EVERY), Sends("get", "pod", namespaced=EVERY))),
    # GET then DELETE per name (--ignore-not-found: a 404 is fine); --wait (the default) waits for each to go: a list and
    # a watch with fieldSelector metadata.name while it lingers
    "delete": Verb((KIND,), ("--ignore-not-found", "--wait=", "--timeout="),
                   (Sends("get"), Sends("delete"), Sends("list", when=(WAITS,)), Sends("watch", when=(WAITS,)))),
    # create -f: one POST per object (no name: RBAC cannot narrow a create); create --raw sends its stdin to the path
    "create": Verb((STDIN, RAW), ("--validate=",), (Sends("create", named=False, when=(STDIN,)), Sends("create", PATH, when=(RAW,)))),
    # the object read from stdin carries its metadata.resourceVersion: one PUT (without it kubectl would GET first)
    "replace": Verb((STDIN,), ("--validate=",), (Sends("update"),)),
    # server-side apply: one PATCH (application/apply-patch+yaml) per object, no read first; an object it makes anew is
    # authorized as a create of that name too (apiserver handlers/patch.go)
    "apply": Verb((STDIN,), ("--server-side", "--force-conflicts", "--field-manager=", "--validate="), (Sends("patch"), Sends("create")),
                  needs=("--server-side",)),
}
# the verbs that take their objects as TYPE NAME...; the others as TYPE/NAME (cordon, drain and logs take no TYPE word)
TYPE_NAMES = ("get", "delete")
# a raw path: /SEGMENT/..., each segment a letter or digit first (never a flag, no "..", no query, no whitespace)
_RAW_PATH = re.compile(r"(/[A-Za-z0-9][A-Za-z0-9._-]*)+")
OUTPUTS = ("json", "name")
# What kubectl prints on stderr with exit code 0 when the API refused the cordon's or uncordon's patch.
_UNABLE = "error: unable to"
# What a write prints on stdout when it changed nothing (any other write changed something).
_UNCHANGED = {"cordon": "already cordoned", "uncordon": "already uncordoned", "patch": "(no change)"}


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
                kubectl_resource(word)
            except KubectlCallError as e:
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
    errors += ["kubectl %s needs %s here (its requests are those of a call with it)" % (verb, o)
               for o in VERBS[verb].needs if o not in [str(x) for x in args.get("options") or []]]
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
    wanted, found = {kubectl_resource(word) for word in _kinds(kind)}, set()
    for item in items or []:
        word = str(item.get("kind") or "").lower() if isinstance(item, dict) else ""
        try:
            resource = kubectl_resource(word)
        except KubectlCallError:
            resource = None
        if resource not in wanted:
            found.add(word or "an object without a kind")
    return ["stdin holds %s, not %s" % (", ".join(sorted(found)), kind)] if found else []


def call_requests(args):
    """[{verb, group, resource, namespace, named}]: the API requests the call of ``args`` sends - VERBS' for its verb,
    each of its objects (its kind, the kinds its stdin holds), its namespace, names, options and raw path. ``namespace``:
    None for a cluster-scoped object, EVERY for --all-namespaces or a command that follows pods into every namespace
    (drain); objects read from stdin carry the call's namespace. A request sent twice is listed once."""
    verb = args["verb"]
    if verb not in VERBS:
        raise KubectlCallError("kubectl %s: its requests are not written down in plugin_utils/kubectl.py VERBS" % verb)
    form = objects_form(args)
    call = {"verb": verb, "form": form, "named": bool(args.get("names")), "raw": args.get("raw"),
            "namespace": EVERY if args.get("all_namespaces") else args.get("namespace") or None,
            "options": {str(o).lower() for o in args.get("options") or []}}
    objects = [kubectl_resource(word) for word in _kinds(args.get("kind"))] if form in (KIND, STDIN) else []
    out = []
    for obj in objects or [None]:
        for send in VERBS[verb].sends:
            request = _request(send, obj, call)
            if request is not None and request not in out:
                out.append(request)
    return [r._asdict() for r in out]


def _request(send, obj, call):
    """The Request ``send`` makes for the object ``obj`` ((group, resource) of one of the call's kinds) of ``call``, or
    None when one of its conditions does not hold."""
    own = _namespace(True, obj[1] if obj else "", call)
    if not all(CONDITIONS[c][1](call, own) if c in CONDITIONS else c in call["options"] for c in send.when):
        return None
    if send.resource == OBJECT and obj is None:
        raise KubectlCallError("kubectl %s: no kind (its requests are about the call's objects)" % call["verb"])
    if send.resource == PATH:
        return _raw_request(send.verb, call["raw"])
    group, resource = obj if send.resource == OBJECT else kubectl_resource(send.resource)
    return Request(send.verb, group, resource + ("/" + send.subresource if send.subresource else ""),
                   _namespace(send.namespaced, resource, call), send.named)


def _namespace(namespaced, resource, call):
    if namespaced == EVERY:
        return EVERY
    return call["namespace"] if namespaced and resource not in CLUSTER_SCOPED else None


def _raw_request(verb, path):
    """The request of ``kubectl get --raw PATH`` / ``create --raw PATH``: a resource path
    (/api/v1/[namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]], /apis/GROUP/VERSION/...) as a resource request; any other
    (discovery: /api, /apis/GROUP/VERSION) as a non-resource one - its path for the resource (RBAC's nonResourceURLs),
    its HTTP verb lowercased (get, post)."""
    parts = str(path).strip("/").split("/")
    if parts[:2] == ["api", "v1"]:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) > 3:
        group, rest = parts[1], parts[3:]
    else:
        return Request(verb if verb == "get" else "post", "", path, None, False)
    namespace = None
    if len(rest) > 2 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    resource = "/".join([rest[0]] + rest[2:3])
    return Request(verb, group, resource, namespace, len(rest) > 1)


def reads_only(verb):
    """Whether kubectl ``verb`` never changes the cluster (VERBS: each of its requests a read): it runs in check mode,
    a write never."""
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
    changed = _UNCHANGED[verb] not in (stdout or "") if verb in _UNCHANGED else not reads_only(verb)
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
