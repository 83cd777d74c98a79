# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shipped identity holds exactly what the collection's kubectl calls need.

Every kubectl call the roles and playbooks can make (each command task whose argv starts with kubectl and uses
the kubeconfig of the run) is read from the YAML, its Jinja evaluated symbolically (every optional flag in), and
turned into API requests by plugin_utils/rbac.py kubectl_requests. The test fails when a request is not allowed
by the manifest we ship, when a rule of it is used by no call, or when files/rbac/rke2-numa.yaml is not the
rendering of RULES."""

from __future__ import annotations

import collections
import glob
import os

import jinja2
import jinja2.nodes as jn
import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import rbac

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
PROBE_NS, KURED_NS = "<probe namespace>", "<kured namespace>"
# Values no task of the file defines: what they are at run time, for the calls' shape.
SYMBOLS = {
    "rke2_numa_kubectl": "kubectl",
    "rke2_numa_kubeconfig": "<kubeconfig>",
    "rke2_numa_access_kubeconfig": "<kubeconfig>",   # access.yml writes the scoped kubeconfig there and asks what it may do
    "rke2_numa_admin_kubeconfig": "<admin kubeconfig>",
    "rke2_numa_probe_namespace": PROBE_NS,
    "__rke2_numa_audit_read": "nodes,pods",   # check.yml: 'nodes,pods' for rolling and kubectl labels, else 'pods'
    "item.namespace": KURED_NS,               # kured_hold.yml / kured_release.yml loop over kured's DaemonSets
    "rke2_numa_kured_hold.kubectl": "kubectl",
    "rke2_numa_kured_hold.kubeconfig": "<kubeconfig>",
}
SCOPES = {None: rbac.CLUSTER, "*": rbac.CLUSTER, PROBE_NS: rbac.PROBE, KURED_NS: rbac.KURED}
RUN_KUBECONFIGS = ("rke2_numa_kubeconfig", "rke2_numa_kured_hold.kubeconfig")
Call = collections.namedtuple("Call", "file task words stdin")

_ENV = jinja2.Environment()


def _name(node):
    if isinstance(node, jn.Name):
        return node.name
    if isinstance(node, jn.Getattr):
        return "%s.%s" % (_name(node.node), node.attr)
    return None


class Symbolic:
    """Evaluates a Jinja expression to the words it makes, every optional part included."""

    def __init__(self, env):
        self.env = env

    def value(self, node):
        name = _name(node)
        if name is not None:
            if name in self.env:
                return self.env[name]
            return SYMBOLS.get(name, "<%s>" % name)
        if isinstance(node, jn.Const):
            return node.value
        if isinstance(node, (jn.List, jn.Tuple)):
            return [self.value(i) for i in node.items]
        if isinstance(node, jn.Concat):
            return "".join(str(self.value(n)) for n in node.nodes)
        if isinstance(node, jn.Add):
            left, right = self.value(node.left), self.value(node.right)
            if isinstance(left, list):   # a list + a value we only know by name: its words
                return left + (right if isinstance(right, list) else [right])
            return str(left) + str(right)
        if isinstance(node, jn.CondExpr):   # the branch with the optional words
            return self.value(node.expr1)
        if isinstance(node, jn.Filter):
            inner = self.value(node.node) if node.node is not None else None
            if node.name == "default":
                return inner if _name(node.node) in self.env or _name(node.node) in SYMBOLS else self.value(node.args[0])
            if node.name in ("map", "list", "select", "reject", "selectattr", "rejectattr"):
                return inner if isinstance(inner, list) else ["<%s>" % (_name(node.node) or "item")]
            return inner
        return "<expr>"

    def template(self, text):
        """A string with {{ }}: its words; a whole-string expression may be a list."""
        if "{{" not in str(text):
            return text
        body = _ENV.parse(str(text)).body[0]
        parts = [self.value(n) if not isinstance(n, jn.TemplateData) else n.data for n in body.nodes]
        if len(parts) == 1:
            return parts[0]
        return "".join(str(p) for p in parts)


def _tasks(entries):
    for task in entries or []:
        if not isinstance(task, dict):
            continue
        yield task
        for key in ("block", "rescue", "always"):
            yield from _tasks(task.get(key))


def _yaml_files():
    for pattern in ("roles/*/tasks/*.yml", "playbooks/*.yml", "playbooks/tasks/*.yml"):
        yield from sorted(glob.glob(os.path.join(REPO, pattern)))


def _is_play(entry):
    return isinstance(entry, dict) and ("hosts" in entry or "import_playbook" in entry or "ansible.builtin.import_playbook" in entry)


def _plays_tasks(doc):
    for entry in doc or []:
        if _is_play(entry):
            for key in ("pre_tasks", "tasks", "post_tasks", "handlers"):
                yield from _tasks(entry.get(key))
        else:
            yield from _tasks([entry])


def _list_vars(doc, tasks):
    """List-valued variables the file builds argv from: its plays' vars, its set_facts (prove.yml's __rke2_numa_kubectl_ns)."""
    env = {}
    sources = [e.get("vars") or {} for e in doc or [] if _is_play(e)]
    sources += [t.get("ansible.builtin.set_fact") or {} for t in tasks]
    for values in sources:
        for key, value in values.items() if isinstance(values, dict) else []:
            if isinstance(value, list):
                env[key] = [Symbolic(env).template(v) for v in value]
    return env


def kubectl_calls():
    calls = []
    for path in _yaml_files():
        with open(path) as handle:
            doc = yaml.safe_load(handle)
        tasks = list(_plays_tasks(doc))
        env = _list_vars(doc, tasks)
        for task in tasks:
            command = task.get("ansible.builtin.command") or task.get("command")
            if not isinstance(command, dict) or "argv" not in command:
                continue
            argv = command["argv"]
            words = Symbolic(env).template(argv) if isinstance(argv, str) else [Symbolic(env).template(a) for a in argv]
            flat = []
            for word in words:
                flat += word if isinstance(word, list) else [word]
            if not flat or "kubectl" not in str(flat[0]) or "kubeapi" in str(flat[0]):
                continue
            calls.append(Call(os.path.relpath(path, REPO), task.get("name"), [str(w) for w in flat[1:]], command.get("stdin")))
    return calls


ALL_CALLS = kubectl_calls()
# access.yml creates the identity with the admin kubeconfig; every other call runs with the run's kubeconfig
ADMIN_CALLS = [c for c in ALL_CALLS if "<admin kubeconfig>" in c.words]
CALLS = [c for c in ALL_CALLS if c not in ADMIN_CALLS]


def requests_of(call):
    created = ("", "pods") if call.stdin and "__rke2_numa_probes" in call.stdin else ("authorization.k8s.io", "selfsubjectaccessreviews")
    return rbac.kubectl_requests(call.words, created=created)


def _where(request):
    """(namespace, name) of a request as the API server sees it, with the shipped defaults."""
    namespace = {None: None, "*": None, PROBE_NS: rbac.PROBE_NAMESPACE, KURED_NS: rbac.KURED_DEFAULT[0]}[request.namespace]
    name = None
    if request.named:
        name = rbac.KURED_DEFAULT[1] if request.namespace == KURED_NS else "some-name"
    return namespace, name


def _granted_by_default(request):
    """system:basic-user lets every authenticated user create SelfSubjectAccessReviews."""
    return (request.group, request.resource, request.verb) == ("authorization.k8s.io", "selfsubjectaccessreviews", "create")


def test_only_access_yml_uses_the_admin_kubeconfig():
    assert {c.file for c in ADMIN_CALLS} == {"playbooks/access.yml"}
    assert sorted(rbac._words(c.words)[0] for c in ADMIN_CALLS) == ["apply", "config", "create", "get"]  # pylint: disable=protected-access
    access = [c for c in CALLS if c.file == "playbooks/access.yml"]
    assert [[(r.verb, r.resource) for r in requests_of(c)] for c in access] == [[("create", "selfsubjectaccessreviews")]], \
        "with the scoped kubeconfig access.yml only asks what it may do"


def test_the_calls_are_found():
    files = {c.file for c in CALLS}
    assert {"roles/drain/tasks/main.yml", "roles/prove/tasks/prove.yml", "roles/labels/tasks/kubectl.yml", "playbooks/rolling.yml",
            "playbooks/tasks/kured_hold.yml", "roles/kubelet_reset/tasks/wait_node_ready.yml", "roles/prove/tasks/audit.yml"} <= files
    assert len(CALLS) >= 25, [c.task for c in CALLS]
    commands = {rbac._words(c.words)[0] for c in CALLS}  # pylint: disable=protected-access
    assert {"get", "annotate", "label", "cordon", "uncordon", "drain", "wait", "delete", "create", "logs"} <= commands


@pytest.mark.parametrize("call", CALLS, ids=lambda c: "%s:%s" % (c.file, c.task))
def test_each_call_runs_with_the_run_kubeconfig_and_is_allowed_by_the_shipped_identity(call):
    flags = dict(zip(call.words, call.words[1:]))
    assert flags.get("--kubeconfig") == "<kubeconfig>", "every cluster call of a run uses the run's kubeconfig (%s)" % (RUN_KUBECONFIGS,)
    objects = rbac.manifest()
    for request in requests_of(call):
        if _granted_by_default(request):
            continue
        namespace, name = _where(request)
        assert rbac.allowed(objects, rbac.identity(), request.verb, request.group, request.resource, namespace, name), \
            "%s (%s): %s is not granted by plugin_utils/rbac.py RULES" % (call.file, call.task, request)


def rule_key(request):
    """(scope, group, resource, verb) of the rule that grants the request: one of its namespace's Role, else the ClusterRole
    (kubectl annotate GETs kured's DaemonSet: the cluster-wide read)."""
    scope = SCOPES[request.namespace]
    key = (scope, request.group, request.resource, request.verb)
    if any((r.scope, r.group, r.resource) == key[:3] and request.verb in r.verbs for r in rbac.RULES):
        return key
    return (rbac.CLUSTER,) + key[1:]


def test_every_rule_is_used_by_a_call():
    used = {rule_key(r) for call in CALLS for r in requests_of(call) if not _granted_by_default(r)}
    unused = [(r.scope, r.group, r.resource, verb) for r in rbac.RULES for verb in r.verbs if (r.scope, r.group, r.resource, verb) not in used]
    assert unused == [], "rules no kubectl call needs: drop them from RULES"


def test_the_shipped_manifest_file_is_the_rendering_of_the_rules():
    with open(os.path.join(REPO, "files", "rbac", "rke2-numa.yaml")) as handle:
        shipped = [d for d in yaml.safe_load_all(handle) if d]
    assert shipped == rbac.manifest(), "run: make rbac"


def test_a_missing_right_is_found_by_the_coverage_check():
    """The check above can fail: without pods/eviction create, the drain is not covered."""
    objects = rbac.manifest()
    cluster_role = next(o for o in objects if o["kind"] == "ClusterRole")
    cluster_role["rules"] = [r for r in cluster_role["rules"] if r["resources"] != ["pods/eviction"]]
    drain = next(c for c in CALLS if rbac._words(c.words)[0] == "drain")  # pylint: disable=protected-access
    refused = [r for r in requests_of(drain) if not rbac.allowed(objects, rbac.identity(), r.verb, r.group, r.resource, *_where(r))]
    assert [(r.verb, r.resource) for r in refused] == [("create", "pods/eviction")]


# ---------------------------------------------------------------- kubectl's requests

@pytest.mark.parametrize("argv, expected", [
    (["get", "nodes,pods", "--all-namespaces", "-o", "json"], [("list", "nodes", None), ("list", "pods", "*")]),
    (["--kubeconfig", "k", "get", "node/n1", "-o", "json"], [("get", "nodes", None)]),
    (["annotate", "--overwrite", "--namespace", "ops", "--resource-version=7", "daemonset/kured", "a=b"],
     [("get", "daemonsets", "ops"), ("patch", "daemonsets", "ops")]),
    (["cordon", "node/n1"], [("get", "nodes", None), ("patch", "nodes", None)]),
    (["drain", "node/n1", "--ignore-daemonsets", "--timeout=5s"],
     [("get", "nodes", None), ("patch", "nodes", None), ("list", "pods", "*"), ("get", "daemonsets", "*"),
      ("create", "pods/eviction", "*"), ("get", "pods", "*")]),
    (["wait", "--for=condition=Ready", "node/n1"], [("get", "nodes", None), ("list", "nodes", None), ("watch", "nodes", None)]),
    (["--namespace", "p", "delete", "pod", "--wait=false", "a", "b"], [("get", "pods", "p"), ("delete", "pods", "p")]),
    (["--namespace", "p", "logs", "a", "--container", "probe"], [("get", "pods", "p"), ("get", "pods/log", "p")]),
])
def test_kubectl_requests(argv, expected):
    assert [(r.verb, r.resource, r.namespace) for r in rbac.kubectl_requests(argv)] == expected


def test_an_unknown_command_is_an_error_not_a_guess():
    with pytest.raises(rbac.KubectlCallError, match="kubectl exec: its requests are not written down"):
        rbac.kubectl_requests(["exec", "pod/a", "--", "sh"])
    with pytest.raises(rbac.KubectlCallError, match="unknown resource 'secrets'"):
        rbac.kubectl_requests(["get", "secrets"])


# ---------------------------------------------------------------- the manifest and RBAC

def test_the_manifest_grants_no_secret_no_delete_of_workloads_and_no_escalation():
    objects = rbac.manifest()
    user = rbac.identity()
    for verb, group, resource, namespace, name in [
            ("get", "", "secrets", "kube-system", "rke2-serving"), ("list", "", "secrets", None, None),
            ("delete", "", "pods", "default", "vllm-0"), ("delete", "", "nodes", None, "n1"), ("create", "", "pods", "default", None),
            ("patch", "apps", "daemonsets", "kube-system", "rke2-canal"), ("escalate", "rbac.authorization.k8s.io", "clusterroles", None, None),
            ("create", "", "serviceaccounts/token", "rke2-numa-system", "rke2-numa"), ("update", "", "nodes", None, "n1"),
            ("create", "", "pods/exec", rbac.PROBE_NAMESPACE, "p")]:
        assert not rbac.allowed(objects, user, verb, group, resource, namespace, name), (verb, resource, namespace)
    assert rbac.allowed(objects, user, "patch", "apps", "daemonsets", "kube-system", "kured")
    assert not rbac.allowed(objects, user, "patch", "apps", "daemonsets", "kube-system", None), "resourceNames never match a nameless request"
    assert rbac.allowed(objects, user, "create", "", "pods", rbac.PROBE_NAMESPACE, None)
    assert not rbac.allowed(objects, "system:serviceaccount:other:rke2-numa", "list", "", "nodes"), "another namespace's account"


def test_manifest_names_are_checked_and_the_probe_namespace_is_our_own():
    assert rbac.manifest_errors() == []
    assert "holds other pods" in rbac.manifest_errors(probe_namespace="default")[0]
    assert "holds other pods" in rbac.manifest_errors(probe_namespace="kube-flannel")[0]
    assert "rke2_numa_access_namespace '-n'" in rbac.manifest_errors(namespace="-n")[0]
    assert rbac.manifest_errors(kured="ops/kured-2") == []
    assert "is not namespace/name" in rbac.manifest_errors(kured="ops")[0]
    with pytest.raises(ValueError, match="must differ"):
        rbac.manifest(namespace="rke2-numa-probe")
    kinds = [(o["kind"], o["metadata"].get("namespace")) for o in rbac.manifest(kured="")]
    assert ("Role", "kube-system") not in kinds, "kured not checked: no right on its DaemonSet"
    kured = [o for o in rbac.manifest(kured="ops/kured") if o["kind"] == "Role" and o["metadata"]["namespace"] == "ops"]
    assert kured[0]["rules"] == [{"apiGroups": ["apps"], "resources": ["daemonsets"], "verbs": ["patch"], "resourceNames": ["kured"]}]
    probe_ns = [o for o in rbac.manifest() if o["kind"] == "Namespace" and o["metadata"]["name"] == rbac.PROBE_NAMESPACE][0]
    assert probe_ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


# ---------------------------------------------------------------- what the API says a kubeconfig may do

def _answers(playbook, refused=(), everything=False, **kwargs):
    reviews = rbac.access_reviews(playbook, **kwargs)["items"]
    out = []
    for i, review in enumerate(reviews):
        attrs = review["spec"]["resourceAttributes"]
        key = (attrs["verb"], attrs["resource"] + ("/" + attrs["subresource"] if attrs.get("subresource") else ""))
        out.append(dict(review, status={"allowed": everything if i == 0 else (everything or key not in refused)}))
    return {"apiVersion": "v1", "kind": "List", "items": out}


def test_the_reviews_ask_for_everything_first_then_each_right_the_playbook_needs():
    items = rbac.access_reviews("rolling")["items"]
    assert items[0]["spec"]["resourceAttributes"] == {"verb": "*", "group": "*", "resource": "*"}
    attrs = [i["spec"]["resourceAttributes"] for i in items[1:]]
    assert {"verb": "create", "group": "", "resource": "pods", "subresource": "eviction"} in attrs
    assert {"verb": "patch", "group": "apps", "resource": "daemonsets", "namespace": "kube-system", "name": "kured"} in attrs
    assert {"verb": "create", "group": "", "resource": "pods", "namespace": "rke2-numa-probe"} in attrs
    check = [i["spec"]["resourceAttributes"] for i in rbac.access_reviews("check")["items"][1:]]
    assert sorted((a["verb"], a["resource"]) for a in check) == [("list", "nodes"), ("list", "pods")], "check.yml only reads"


def test_findings_name_the_missing_right_and_what_needs_it():
    found = rbac.access_findings(_answers("rolling", refused=[("create", "pods/eviction")]), "rolling")
    assert found["everything"] is False and found["unreadable"] is False
    assert found["missing"] == ["may not create pods/eviction cluster-wide (needed to evict the workload pods (kubectl drain, "
                                "PodDisruptionBudgets respected))"]
    found = rbac.access_findings(_answers("rolling", refused=[("patch", "daemonsets")]), "rolling")
    assert found["missing"] == [] and found["optional_missing"] == [
        "may not patch daemonsets kured (API group apps) in namespace kube-system (needed to hold and give back kured's reboot lock "
        "(its DaemonSet only))"]
    assert rbac.access_findings(_answers("prove", everything=True), "prove")["everything"] is True
    assert rbac.access_findings({"kind": "Status"}, "prove")["unreadable"] is True
    assert rbac.access_findings(_answers("check"), "rolling")["unreadable"] is True, "answers to another question"


# ---------------------------------------------------------------- each playbook asks for what its calls need

def _task_files(path):
    """The task files and playbooks ``path`` includes or imports (statically named, as all of ours are)."""
    with open(path) as handle:
        doc = yaml.safe_load(handle)
    here = os.path.dirname(path)
    found = []
    for entry in doc or []:
        if isinstance(entry, dict) and _is_play(entry):
            target = entry.get("ansible.builtin.import_playbook") or entry.get("import_playbook")
            if target:
                found.append(os.path.join(here, target))
    for task in _plays_tasks(doc):
        for key in ("ansible.builtin.include_tasks", "ansible.builtin.import_tasks"):
            value = task.get(key)
            if value:
                found.append(os.path.join(here, value if isinstance(value, str) else value["file"]))
        for key in ("ansible.builtin.include_role", "ansible.builtin.import_role"):
            value = task.get(key)
            if value:
                role = value["name"].split(".")[-1]
                tasks_from = value.get("tasks_from", "main.yml")
                found.append(os.path.join(REPO, "roles", role, "tasks", tasks_from if tasks_from.endswith(".yml") else tasks_from + ".yml"))
    return [f for f in found if os.path.exists(f)]


def reachable(playbook):
    seen, todo = set(), [os.path.join(REPO, "playbooks", playbook + ".yml")]
    while todo:
        path = os.path.normpath(todo.pop())
        if path not in seen:
            seen.add(path)
            todo += _task_files(path)
    return {os.path.relpath(p, REPO) for p in seen}


@pytest.mark.parametrize("playbook", [rbac.CHECK, rbac.ROLLING, rbac.LABELS, rbac.PROVE])
def test_each_playbook_asks_the_api_for_exactly_what_its_calls_need(playbook):
    files = reachable(playbook)
    calls = {rule_key(r) for c in CALLS if c.file in files for r in requests_of(c) if not _granted_by_default(r)}
    asked = set()
    for need in rbac.needed(playbook):
        scope = rbac.PROBE if need["namespace"] == rbac.PROBE_NAMESPACE else rbac.KURED if need["name"] else rbac.CLUSTER
        asked.add((scope, need["group"], need["resource"] + ("/" + need["subresource"] if need["subresource"] else ""), need["verb"]))
    assert (sorted(calls - asked), sorted(asked - calls)) == ([], []), "(needed but not asked for, asked for but not needed)"
    assert "playbooks/tasks/access_check.yml" in files, "the playbook asks before its first change"


# ---------------------------------------------------------------- access.yml's pieces

@pytest.mark.parametrize("value, seconds", [("8h", 28800), ("90m", 5400), ("1d12h", 129600), (600, 600), ("604800", 604800), ("7d", 604800)])
def test_token_lifetimes_in_bounds(value, seconds):
    assert rbac.token_seconds(value) == (seconds, None)


@pytest.mark.parametrize("value", [0, 599, "9m", "8d", "forever", "", None, True, "1y", "-1h", 10 ** 9])
def test_token_lifetimes_out_of_bounds_or_unreadable_are_refused(value):
    seconds, error = rbac.token_seconds(value)
    assert seconds is None and "must be from 10m to 7d" in error and "not forever" in error


def test_identity_changes_create_update_and_refuse_what_is_not_ours():
    wanted = rbac.manifest()
    assert [c["action"] for c in rbac.identity_changes({}, wanted)["changes"]] == ["create"] * len(wanted)
    current = {"kind": "List", "items": [dict(o, metadata=dict(o["metadata"], uid="u", resourceVersion="1")) for o in wanted]}
    same = rbac.identity_changes(current, wanted)
    assert [c["action"] for c in same["changes"]] == ["none"] * len(wanted) and same["summary"] == [] and same["refused"] == []
    role = next(o for o in current["items"] if o["kind"] == "ClusterRole")
    role["rules"] = role["rules"] + [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]   # widened by hand
    assert rbac.identity_changes(current, wanted)["summary"] == ["update ClusterRole rke2-numa (rules)"]
    ns = next(o for o in current["items"] if o["kind"] == "Namespace" and o["metadata"]["name"] == "rke2-numa-probe")
    ns["metadata"]["labels"] = {"team": "ml"}
    binding = next(o for o in current["items"] if o["kind"] == "RoleBinding")
    binding["roleRef"] = dict(binding["roleRef"], name="admin")
    refused = rbac.identity_changes(current, wanted)["refused"]
    assert refused[0].startswith("Namespace rke2-numa-probe exists and is not ours")
    assert refused[1].startswith("RoleBinding rke2-numa-probe/rke2-numa-probe refers to another role (admin)")
    one = rbac.identity_changes(dict(wanted[0], metadata=dict(wanted[0]["metadata"])), wanted)["changes"]
    assert [c["action"] for c in one][:2] == ["none", "create"], "kubectl prints a single object without a List"


def test_the_scoped_kubeconfig_copies_the_cluster_never_the_admins_credentials():
    view = {"clusters": [{"name": "default", "cluster": {"server": "https://127.0.0.1:6443", "certificate-authority-data": "Q0E="}}],
            "users": [{"name": "default", "user": {"client-certificate-data": "Q0VSVA==", "client-key-data": "S0VZ"}}]}
    text = rbac.scoped_kubeconfig(view, "tok.en", "2026-12-03T17:00:00Z")
    assert text.startswith(rbac.KUBECONFIG_MARK + "\n")
    doc = yaml.safe_load(text)
    assert doc["users"] == [{"name": "rke2-numa", "user": {"token": "tok.en"}}]
    assert doc["clusters"][0]["cluster"] == {"server": "https://127.0.0.1:6443", "certificate-authority-data": "Q0E="}
    assert "S0VZ" not in text and "Q0VSVA==" not in text
    assert yaml.safe_load(rbac.scoped_kubeconfig(view, "t", "x", "https://api.example:6443"))["clusters"][0]["cluster"]["server"] == \
        "https://api.example:6443"
    for bad_view, token, words in [({"clusters": []}, "t", "names no cluster"), (view, "", "no token"), (view, "a b", "no token"),
                                   ({"clusters": [{"cluster": {}}]}, "t", "no server address")]:
        with pytest.raises(ValueError, match=words):
            rbac.scoped_kubeconfig(bad_view, token, "x")
