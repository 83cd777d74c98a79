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
PROBE_NS, KURED_NS, KURED_DS = "<probe namespace>", "<kured namespace>", "<kured daemonset>"
# Values no task of the file defines: what they are at run time, for the calls' shape.
SYMBOLS = {
    "rke2_numa_kubectl": "kubectl",
    "rke2_numa_kubeconfig": "<kubeconfig>",
    "rke2_numa_probe_namespace": PROBE_NS,
    "__rke2_numa_audit_read": "nodes,pods",   # check.yml: 'nodes,pods' for rolling and kubectl labels, else 'pods'
    "item.namespace": KURED_NS,               # kured_hold.yml / kured_release.yml loop over kured's DaemonSets
    "rke2_numa_kured_hold.kubectl": "kubectl",
    "rke2_numa_kured_hold.kubeconfig": "<kubeconfig>",
}
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


def _plays_tasks(doc):
    for entry in doc or []:
        if isinstance(entry, dict) and ("hosts" in entry or "import_playbook" in entry or "ansible.builtin.import_playbook" in entry):
            for key in ("pre_tasks", "tasks", "post_tasks", "handlers"):
                yield from _tasks(entry.get(key))
        else:
            yield from _tasks([entry])


def kubectl_calls():
    calls = []
    for path in _yaml_files():
        with open(path) as handle:
            doc = yaml.safe_load(handle)
        tasks = list(_plays_tasks(doc))
        env = {}
        for task in tasks:   # list-valued facts the file builds its argv from (prove.yml's __rke2_numa_kubectl_ns)
            facts = task.get("ansible.builtin.set_fact") or {}
            for key, value in facts.items() if isinstance(facts, dict) else []:
                if isinstance(value, list):
                    env[key] = [Symbolic(env).template(v) for v in value]
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


CALLS = kubectl_calls()


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


def test_every_rule_is_used_by_a_call():
    used = set()
    for call in CALLS:
        for request in requests_of(call):
            scope = {None: rbac.CLUSTER, "*": rbac.CLUSTER, PROBE_NS: rbac.PROBE, KURED_NS: rbac.KURED}[request.namespace]
            used.add((scope, request.group, request.resource, request.verb))
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
    assert sorted((a["verb"], a["resource"]) for a in check) == [
        ("get", "nodes"), ("get", "pods"), ("list", "nodes"), ("list", "pods"), ("watch", "nodes")], "check.yml only reads"


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
