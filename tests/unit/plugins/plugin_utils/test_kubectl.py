# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One way to call the cluster: the kubectl action's argv, its declared API requests and what its answer means."""
from __future__ import annotations

import json

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import kubectl as k

BASE = {"kubectl": "/k", "kubeconfig": "/kc"}


def call(**args):
    return k.call_argv(dict(BASE, **args))


def test_names_are_passed_as_kind_slash_name_never_as_flags():
    assert call(verb="get", kind="node", names=["gpu-a"], output="json") == ["/k", "--kubeconfig", "/kc", "get", "node", "gpu-a", "-o", "json"]
    assert call(verb="cordon", kind="node", names=["gpu-a"]) == ["/k", "--kubeconfig", "/kc", "cordon", "node/gpu-a"]
    with pytest.raises(k.KubectlArgError, match="is not a Kubernetes name"):
        call(verb="cordon", kind="node", names=["--all"])
    with pytest.raises(k.KubectlArgError, match="is not a Kubernetes name"):
        call(verb="get", kind="node", names=["a b"])


def test_only_the_options_a_verb_takes_here_pass():
    argv = call(verb="drain", kind="node", names=["n1"], options=["--ignore-daemonsets", "--timeout=600s", "--grace-period=30"])
    assert argv[-3:] == ["--ignore-daemonsets", "--timeout=600s", "--grace-period=30"]
    with pytest.raises(k.KubectlArgError, match="--force is not an option of kubectl drain"):
        call(verb="drain", kind="node", names=["n1"], options=["--force"])
    with pytest.raises(k.KubectlArgError, match="--disable-eviction"):
        call(verb="drain", kind="node", names=["n1"], options=["--disable-eviction"])
    with pytest.raises(k.KubectlArgError, match="not a key=value"):
        call(verb="annotate", kind="node", names=["n1"], arguments=["--all"])


def test_namespaces_selectors_and_stdin():
    assert call(verb="get", kind="pods", all_namespaces=True, field_selector="spec.nodeName=n1", output="json")[3:] == [
        "get", "pods", "--all-namespaces", "--field-selector=spec.nodeName=n1", "-o", "json"]
    # the argv as the calls wrote it before the action (the tests' fake kubectls match it)
    assert " ".join(call(verb="get", kind="lease", names=["rke2-numa-roll"], namespace="rke2-numa-system",
                         options=["--ignore-not-found"], output="json")[1:]) == \
        "--kubeconfig /kc get lease rke2-numa-roll --namespace rke2-numa-system --ignore-not-found -o json"
    pods = json.dumps({"kind": "List", "items": [{"kind": "Pod", "apiVersion": "v1"}]})
    assert call(verb="create", kind="pod", stdin=pods, options=["--validate=false"], output="name")[3:] == [
        "create", "--validate=false", "-o", "name", "-f", "-"]
    with pytest.raises(k.KubectlArgError, match="reads its object from stdin"):
        call(verb="create", kind="pod", names=["a"], stdin=pods)
    with pytest.raises(k.KubectlArgError, match="stdin holds lease, not pod"):
        call(verb="create", kind="pod", stdin=json.dumps({"kind": "Lease"}))
    with pytest.raises(k.KubectlArgError, match="namespace"):
        call(verb="get", kind="pods", namespace="Bad_NS")
    with pytest.raises(k.KubectlArgError, match="unknown resource"):
        call(verb="get", kind="secrets")


def test_each_call_declares_the_requests_rbac_grants():
    drain = dict(BASE, verb="drain", kind="node", names=["n1"], options=["--ignore-daemonsets"])
    verbs = {(r["verb"], r["resource"]) for r in k.call_requests(drain)}
    assert ("create", "pods/eviction") in verbs and ("patch", "nodes") in verbs
    lease = json.dumps({"kind": "Lease", "apiVersion": "coordination.k8s.io/v1", "metadata": {"name": "l"}})
    create = dict(BASE, verb="create", kind="lease", namespace="ns", stdin=lease)
    k.call_argv(create)
    assert k.call_requests(create) == [{"verb": "create", "group": "coordination.k8s.io", "resource": "leases",
                                        "namespace": "ns", "named": False}]


@pytest.mark.parametrize("verb, rc, stdout, stderr, failed, changed", [
    ("cordon", 0, "node/n1 cordoned\n", "", False, True),
    ("cordon", 0, "node/n1 already cordoned\n", "", False, False),
    # kubectl cordon exits 0 when the API refuses its patch
    ("cordon", 0, "", "error: unable to cordon node \"n1\": nodes \"n1\" is forbidden\n", True, False),
    ("uncordon", 0, "", "error: unable to uncordon node \"n1\": ...\n", True, False),
    ("get", 0, "{}", "", False, False),
    ("get", 1, "", "Error from server (NotFound): nodes \"n1\" not found\n", True, False),
    ("annotate", 0, "node/n1 annotated\n", "", False, True),
])
def test_the_answer_in_kubectl_s_words(verb, rc, stdout, stderr, failed, changed):
    out = k.call_result(verb, "json" if verb == "get" else None, rc, stdout, stderr)
    assert (out["failed"], out["changed"]) == (failed, changed)
    if failed:
        assert out["msg"] == stderr.strip().removeprefix("error: ")
    if verb == "get" and not failed:
        assert out["object"] == {}


def test_when_kubectl_cannot_start_the_command_module_s_words_are_kept():
    """The pod audit names a kubectl that is not there from them (prove.audit_error)."""
    out = k.call_result("get", "json", 2, "", "", "[Errno 2] No such file or directory: b'/nonexistent/kubectl'")
    assert out["failed"] and out["msg"] == "[Errno 2] No such file or directory: b'/nonexistent/kubectl'"
    out = k.call_result("get", "json", 1, "", "error: Unauthorized\n", "non-zero return code")
    assert out["msg"] == "Unauthorized"


# access.yml's calls with the admin kubeconfig (the identity's bootstrap): the action's argv is the one the command
# tasks built before, word for word (the API stand-in's tests and the kubectl fakes match these strings)
IDENTITY_KINDS = ("namespace,serviceaccount,clusterrole,clusterrolebinding,role,rolebinding,configmap,validatingadmissionpolicy,"
                  "validatingadmissionpolicybinding")
IDENTITY = json.dumps({"apiVersion": "v1", "kind": "List", "items": [
    {"kind": "Namespace"}, {"kind": "ServiceAccount"}, {"kind": "ClusterRole"}, {"kind": "ClusterRoleBinding"}, {"kind": "Role"},
    {"kind": "RoleBinding"}, {"kind": "ConfigMap"}, {"kind": "ValidatingAdmissionPolicy"}, {"kind": "ValidatingAdmissionPolicyBinding"}]})
REVIEWS = json.dumps({"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview"}]})
TOKEN = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}})


@pytest.mark.parametrize("args, argv", [
    (dict(verb="config", options=["--minify", "--flatten", "--raw"], output="json"),
     "config view --minify --flatten --raw -o json"),
    (dict(verb="get", raw="/apis/admissionregistration.k8s.io/v1"),
     "get --raw /apis/admissionregistration.k8s.io/v1"),
    (dict(verb="get", kind="configmap", names=["rke2-numa-nodes"], namespace="rke2-numa-system", options=["--ignore-not-found"], output="json"),
     "get configmap rke2-numa-nodes --namespace rke2-numa-system --ignore-not-found -o json"),
    (dict(verb="get", kind=IDENTITY_KINDS, options=["--ignore-not-found"], output="json", stdin=IDENTITY),
     "get --ignore-not-found -o json -f -"),
    (dict(verb="get", kind="clusterrolebindings,rolebindings", all_namespaces=True, output="json"),
     "get clusterrolebindings,rolebindings --all-namespaces -o json"),
    (dict(verb="apply", kind=IDENTITY_KINDS, options=["--server-side", "--force-conflicts", "--field-manager=maitred.rke2_numa", "--validate=false"],
          stdin=IDENTITY),
     "apply --server-side --force-conflicts --field-manager=maitred.rke2_numa --validate=false -f -"),
    (dict(verb="delete", kind="rolebinding", names=["rke2-numa-probe"], namespace="old-probe", options=["--ignore-not-found"]),
     "delete rolebinding rke2-numa-probe --namespace old-probe --ignore-not-found"),
    (dict(verb="create", kind="subjectaccessreview", options=["--validate=false"], output="json", stdin=REVIEWS),
     "create --validate=false -o json -f -"),
    (dict(verb="create", raw="/api/v1/namespaces/rke2-numa-system/serviceaccounts/rke2-numa/token", stdin=TOKEN),
     "create --raw /api/v1/namespaces/rke2-numa-system/serviceaccounts/rke2-numa/token -f -"),
], ids=lambda value: value if isinstance(value, str) else None)
def test_the_admin_calls_argv_is_the_command_tasks(args, argv):
    args = dict(args, kubeconfig="/etc/rancher/rke2/rke2.yaml")
    assert " ".join(k.call_argv(dict(BASE, **args))) == "/k --kubeconfig /etc/rancher/rke2/rke2.yaml " + argv
    k.call_requests(dict(BASE, **args))   # declared, never an unknown command


def test_the_admin_calls_declare_their_requests():
    def requests(**args):
        return [(r["verb"], r["group"], r["resource"], r["namespace"], r["named"]) for r in k.call_requests(dict(BASE, **args))]
    assert requests(verb="config", options=["--minify"]) == [], "config view reads the kubeconfig"
    assert requests(verb="get", raw="/apis/admissionregistration.k8s.io/v1") == [
        ("get", "", "/apis/admissionregistration.k8s.io/v1", None, False)], "discovery: a non-resource URL"
    assert requests(verb="create", raw="/api/v1/namespaces/ns/serviceaccounts/rke2-numa/token", stdin=TOKEN) == [
        ("create", "", "serviceaccounts/token", "ns", True)]
    assert requests(verb="create", raw="/apis/policy/v1/namespaces/kube-system/pods/p/eviction", stdin="{}") == [
        ("create", "policy", "pods/eviction", "kube-system", True)]
    assert requests(verb="get", kind="role,rolebinding", options=["--ignore-not-found"], stdin=IDENTITY) == [
        ("get", "rbac.authorization.k8s.io", "roles", None, True), ("get", "rbac.authorization.k8s.io", "rolebindings", None, True)]
    assert requests(verb="apply", kind="clusterrole", options=["--server-side"], stdin=IDENTITY) == [
        ("patch", "rbac.authorization.k8s.io", "clusterroles", None, True),
        ("create", "rbac.authorization.k8s.io", "clusterroles", None, True)], "an apply that makes the object is a create too"


@pytest.mark.parametrize("raw", ["-f", "--raw", "apis/x", "/apis/x y", "/apis/../secrets", "/api/v1/secrets?watch=1", "//x", "/apis/-x", "/", "/api\n"])
def test_a_raw_path_is_a_path_never_a_flag(raw):
    with pytest.raises(k.KubectlArgError, match="is not a path of the API"):
        call(verb="get", raw=raw)


@pytest.mark.parametrize("args, words", [
    (dict(verb="config", options=["--context=other"]), "--context=other is not an option of kubectl config"),
    (dict(verb="config", options=["--server-side"]), "--server-side is not an option of kubectl config"),
    (dict(verb="apply", kind="role", options=["--prune"], stdin=IDENTITY), "--prune is not an option of kubectl apply"),
    (dict(verb="apply", kind="role", options=["--force"], stdin=IDENTITY), "--force is not an option of kubectl apply"),
    (dict(verb="get", raw="/api", options=["--server-side"]), "--server-side is not an option of kubectl get"),
    (dict(verb="create", kind="subjectaccessreview", options=["--raw"], stdin=REVIEWS), "--raw is not an option of kubectl create"),
    (dict(verb="delete", kind="role", names=["r"], options=["--force", "--grace-period=0"]), "--force is not an option of kubectl delete"),
])
def test_options_are_the_verbs_own(args, words):
    with pytest.raises(k.KubectlArgError, match=words):
        call(**args)


@pytest.mark.parametrize("args, words", [
    (dict(verb="delete", raw="/api/v1/namespaces/x"), "kubectl delete takes no raw here"),
    (dict(verb="wait", kind="node", names=["n1"], stdin="{}"), "kubectl wait takes no stdin here"),
    (dict(verb="config", kind="node"), "kubectl config view takes no kind"),
    (dict(verb="config", stdin="{}"), "kubectl config takes no stdin"),
    (dict(verb="get", raw="/api", kind="node", namespace="ns", output="json"), "kubectl get --raw takes no kind, namespace, output"),
    (dict(verb="get", raw="/api", stdin="{}"), "kubectl get --raw sends no stdin"),
    (dict(verb="create", raw="/api/v1/namespaces/ns/serviceaccounts/sa/token"), "kubectl create --raw sends its stdin"),
    (dict(verb="apply", kind="role", options=["--server-side"]), "reads its object from stdin"),
    (dict(verb="get", options=["--ignore-not-found"], stdin=IDENTITY), "kubectl get needs a kind \\(what its stdin holds\\)"),
    (dict(verb="get", kind="role,rolebinding", stdin=IDENTITY), "stdin holds clusterrole, clusterrolebinding, configmap, namespace"),
    (dict(verb="apply", kind="role,secret", stdin=IDENTITY), "kind secret: unknown resource"),
])
def test_each_verb_names_its_objects_its_own_ways(args, words):
    with pytest.raises(k.KubectlArgError, match=words):
        call(**args)


def test_the_modules_verb_choices_are_the_verbs_the_action_takes():
    """The module's documented choices are what Ansible validates a task's verb against before the action runs: a verb
    VERBS has but the choices lack is refused on a real roll only (the cordon patch was, at its first real cordon). They
    are the verb option of its doc fragment, generated from VERBS (scripts/gen_specs.py; tests/unit/test_generated.py
    fails when it is stale)."""
    import yaml
    from ansible_collections.maitred.rke2_numa.plugins.action.kubectl import ActionModule
    from ansible_collections.maitred.rke2_numa.plugins.doc_fragments import kubectl_verbs
    from ansible_collections.maitred.rke2_numa.plugins.modules import kubectl as module
    assert "maitred.rke2_numa.kubectl_verbs" in yaml.safe_load(module.DOCUMENTATION)["extends_documentation_fragment"]
    choices = yaml.safe_load(kubectl_verbs.ModuleDocFragment.DOCUMENTATION)["options"]["verb"]["choices"]
    assert choices == list(k.VERBS) == ActionModule.ARGUMENT_SPEC["verb"]["choices"]


def test_the_cordon_patch_is_one_merge_patch_call():
    argv = k.call_argv({"verb": "patch", "kind": "node", "names": ["gpu-1"], "kubeconfig": "/k",
                        "options": ["--type=merge", '--patch={"spec":{"unschedulable":true}}']})
    assert argv == ["kubectl", "--kubeconfig", "/k", "patch", "node/gpu-1", "--type=merge", '--patch={"spec":{"unschedulable":true}}']
    assert k.call_requests({"verb": "patch", "kind": "node", "names": ["gpu-1"], "kubeconfig": "/k", "options": ["--type=merge"]}) == [
        {"verb": "get", "group": "", "resource": "nodes", "namespace": None, "named": True},
        {"verb": "patch", "group": "", "resource": "nodes", "namespace": None, "named": True}]
    assert k.call_result("patch", None, 0, "node/gpu-1 patched (no change)\n", "")["changed"] is False
    assert k.call_result("patch", None, 0, "node/gpu-1 patched\n", "")["changed"] is True


def test_a_verb_reads_only_when_each_request_it_sends_is_a_read():
    """VERBS is the one table: whether a verb writes (it runs in check mode only when it does not) follows from the
    requests it declares."""
    reads = sorted(verb for verb in k.VERBS if k.reads_only(verb))
    assert reads == ["config", "get", "logs", "wait"]
    for verb, entry in k.VERBS.items():
        assert entry.reads_only == all(send.verb in ("get", "list", "watch") for send in entry.sends), verb
    entry = k.VERBS["wait"]
    assert not entry._replace(sends=entry.sends + (k.Sends("patch"),)).reads_only, "a write among its requests makes it a write"


def test_a_call_s_requests_follow_its_verb_s_declared_requests(monkeypatch):
    """call_requests reads VERBS, not a table of its own: a request declared there is a request of the call."""
    args = dict(BASE, verb="logs", kind="pod", names=["p"], namespace="ns")
    assert ("get", "pods/log") in {(r["verb"], r["resource"]) for r in k.call_requests(args)}
    monkeypatch.setitem(k.VERBS, "logs", k.VERBS["logs"]._replace(sends=(k.Sends("get", "pod", "log"), k.Sends("watch", "pod"))))
    assert k.call_requests(args) == [{"verb": "get", "group": "", "resource": "pods/log", "namespace": "ns", "named": True},
                                     {"verb": "watch", "group": "", "resource": "pods", "namespace": "ns", "named": True}]


def test_apply_is_server_side_the_apply_whose_requests_are_written_down():
    with pytest.raises(k.KubectlArgError, match="kubectl apply needs --server-side here"):
        call(verb="apply", kind="role", stdin=IDENTITY)
    call(verb="apply", kind="role,rolebinding", options=["--server-side"], stdin=json.dumps({"kind": "Role"}))


def test_every_action_of_the_kubectl_group_takes_the_program_and_the_kubeconfig():
    """module_defaults for group/maitred.rke2_numa.kubectl hand kubectl and kubeconfig to each action of the group
    (meta/runtime.yml): one that did not document both would refuse them as unsupported parameters."""
    import importlib
    import os
    import yaml
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
    with open(os.path.join(repo, "meta", "runtime.yml")) as handle:
        group = yaml.safe_load(handle)["action_groups"]["kubectl"]
    assert {"kubectl", "kured_lock"} <= set(group)
    for name in group:
        module = importlib.import_module("ansible_collections.maitred.rke2_numa.plugins.modules." + name)
        assert {"kubectl", "kubeconfig"} <= set(yaml.safe_load(module.DOCUMENTATION)["options"]), name
