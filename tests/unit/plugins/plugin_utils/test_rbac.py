# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shipped identity holds exactly what the collection's kubectl calls need.

Every kubectl call the roles and playbooks can make (each maitred.rke2_numa.kubectl task with the kubeconfig of
the run) is read from the YAML, its shape declared by the task's arguments (tests/fixtures/kubectl_calls.py), and
turned into API requests by plugin_utils/kubectl.py call_requests (from VERBS, the one table of them). The test
fails when a request is not allowed by the manifest we ship, when a rule of it is used by no call, when
files/rbac/rke2-numa.yaml is not the rendering of RULES, or when a task runs kubectl another way."""

from __future__ import annotations

import glob
import importlib.util
import json
import os

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import admission, kubectl, rbac
from ansible_collections.maitred.rke2_numa.tests.fixtures import kubectl_calls as kc
from ansible_collections.maitred.rke2_numa.tests.fixtures.kubectl_calls import ADMIN_CALLS, CALLS, REPO, requests_of


def test_only_access_yml_uses_the_admin_kubeconfig():
    assert {c.file for c in ADMIN_CALLS} == {"playbooks/access.yml"}
    assert sorted(c.verb for c in ADMIN_CALLS) == [
        "apply", "config", "create", "create", "delete", "get", "get", "get", "get", "get", "get"]
    access = [c for c in CALLS if c.file == "playbooks/access.yml"]
    assert [[(r.verb, r.resource) for r in requests_of(c)] for c in access] == [[("create", "selfsubjectaccessreviews")]], \
        "with the scoped kubeconfig access.yml only asks what it may do"


def test_access_yml_reads_and_applies_every_kind_of_the_identity():
    """The admin calls declare the kinds their stdin holds (the action refuses another): every kind of the identity,
    with the admission policies, the kured lock and the enrolment."""
    kinds = {kubectl.kubectl_resource(o["kind"].lower()) for o in rbac.manifest(kured="/".join(rbac.KURED_DEFAULT))
             + admission.objects(rbac.IDENTITY_NAMESPACE, ["gpu-a"])}
    by_command = {}
    for call in ADMIN_CALLS:
        by_command.setdefault(call.verb, []).append({(r.group, r.resource) for r in requests_of(call)})
    assert kinds in by_command["get"], "the read of the identity's objects as the API server has them"
    assert by_command["apply"] == [kinds], "server-side apply: a patch, or a create, of each"
    assert {("rbac.authorization.k8s.io", "roles"), ("rbac.authorization.k8s.io", "rolebindings")} in by_command["delete"]
    assert [("create", "", "serviceaccounts/token", "<access namespace>", True)] in [
        [tuple(r) for r in requests_of(c)] for c in ADMIN_CALLS], "the TokenRequest, for the ServiceAccount alone"


# the modules that run a program the way a kubectl task must not: outside the maitred.rke2_numa.kubectl action
_COMMAND_MODULES = ("ansible.builtin.command", "command", "ansible.builtin.shell", "shell", "ansible.builtin.raw", "raw")


def _command_tasks(entries, variables):
    """(task, its words with the play's and the task's variables it names written out) of each command task."""
    for task in entries or []:
        if not isinstance(task, dict):
            continue
        scope = dict(variables, **(task.get("vars") or {}))
        for module in _COMMAND_MODULES:
            if module in task:
                text = json.dumps(task[module], default=str) + json.dumps(task.get("args"), default=str)
                text += "".join(json.dumps(value, default=str) for name, value in scope.items() if name in text)
                yield task, text
        for key in ("block", "rescue", "always"):
            yield from _command_tasks(task.get(key), scope)


def test_no_task_runs_kubectl_through_a_command_module():
    """Every call of the cluster goes through the kubectl action (its argv checked, its requests declared): none is a
    command, shell or raw task - not even one whose argv comes from a variable of the play (access.yml's admin calls
    were ``__rke2_numa_admin + [...]``)."""
    found = []
    for pattern in ("roles/*/tasks/*.yml", "roles/*/handlers/*.yml", "playbooks/*.yml", "playbooks/tasks/*.yml"):
        for path in sorted(glob.glob(os.path.join(REPO, pattern))):
            with open(path) as handle:
                doc = yaml.safe_load(handle) or []
            for entry in doc:
                plays = entry if isinstance(entry, dict) and "hosts" in entry else None
                variables = (plays or {}).get("vars") or {}
                lists = [plays.get(k) for k in ("pre_tasks", "tasks", "post_tasks", "handlers")] if plays else [[entry]]
                for tasks in lists:
                    found += ["%s: %s" % (os.path.relpath(path, REPO), task.get("name"))
                              for task, text in _command_tasks(tasks, variables) if "kubectl" in text]
    assert found == [], "a kubectl call is a maitred.rke2_numa.kubectl task"


def test_the_calls_are_found():
    files = {c.file for c in CALLS}
    assert {"roles/drain/tasks/main.yml", "roles/prove/tasks/prove.yml", "roles/labels/tasks/kubectl.yml", "playbooks/rolling.yml",
            "playbooks/tasks/kured_hold.yml", "roles/kubelet_reset/tasks/wait_node_ready.yml", "roles/prove/tasks/audit.yml"} <= files
    assert len(CALLS) >= 25, [c.task for c in CALLS]
    commands = {c.verb for c in CALLS}
    assert {"get", "annotate", "label", "patch", "drain", "wait", "delete", "create", "logs"} <= commands


@pytest.mark.parametrize("call", CALLS, ids=lambda c: "%s:%s" % (c.file, c.task))
def test_each_call_runs_with_the_run_kubeconfig_and_is_allowed_by_the_shipped_identity(call):
    flags = dict(zip(call.words, call.words[1:]))
    assert flags.get("--kubeconfig") == "<kubeconfig>", "every cluster call of a run uses the run's kubeconfig (%s)" % (kc.RUN_KUBECONFIGS,)
    objects = rbac.manifest()
    for request in requests_of(call):
        if kc.granted_by_default(request):
            continue
        namespace, name = kc.where(request)
        assert rbac.allowed(objects, rbac.identity(), request.verb, request.group, request.resource, namespace, name), \
            "%s (%s): %s is not granted by plugin_utils/rbac.py RULES" % (call.file, call.task, request)


def test_every_rule_is_used_by_a_call():
    used = {kc.rule_key(r) for call in CALLS for r in requests_of(call) if not kc.granted_by_default(r)}
    unused = [(r.scope, r.group, r.resource, verb) for r in rbac.RULES for verb in r.verbs if (r.scope, r.group, r.resource, verb) not in used]
    assert unused == [], "rules no kubectl call needs: drop them from RULES"


def test_the_shipped_manifest_file_is_the_rendering_of_the_rules_and_the_doc_is_current():
    with open(os.path.join(REPO, "files", "rbac", "rke2-numa.yaml")) as handle:
        shipped = yaml.safe_load(handle)
    assert shipped == {"apiVersion": "v1", "kind": "List", "items": rbac.manifest()}, "run: make rbac"
    script = importlib.util.spec_from_file_location("rbac_manifest", os.path.join(REPO, "scripts", "rbac_manifest.py"))
    module = importlib.util.module_from_spec(script)
    script.loader.exec_module(module)
    for path, make in module.OUTPUTS.items():
        with open(os.path.join(REPO, path)) as handle:
            assert handle.read() == make(), "%s is stale: run make rbac" % path


def test_a_missing_right_is_found_by_the_coverage_check():
    """The check above can fail: without pods/eviction create, the drain is not covered."""
    objects = rbac.manifest()
    cluster_role = next(o for o in objects if o["kind"] == "ClusterRole")
    cluster_role["rules"] = [r for r in cluster_role["rules"] if r["resources"] != ["pods/eviction"]]
    drain = next(c for c in CALLS if c.verb == "drain")
    refused = [r for r in requests_of(drain) if not rbac.allowed(objects, rbac.identity(), r.verb, r.group, r.resource, *kc.where(r))]
    assert [(r.verb, r.resource) for r in refused] == [("create", "pods/eviction")]


# ---------------------------------------------------------------- kubectl's requests

@pytest.mark.parametrize("args, expected", [
    (dict(verb="get", kind="nodes,pods", all_namespaces=True, output="json"), [("list", "nodes", None), ("list", "pods", "*")]),
    (dict(verb="get", kind="node", names=["n1"], output="json"), [("get", "nodes", None)]),
    (dict(verb="get", kind="lease", names=["l"], namespace="ops", options=["--ignore-not-found"]),
     [("get", "leases", "ops"), ("get", "namespaces", "ops")]),
    (dict(verb="annotate", kind="daemonset", names=["kured"], namespace="ops", options=["--overwrite", "--resource-version=7"],
          arguments=["a=b"]), [("get", "daemonsets", "ops"), ("patch", "daemonsets", "ops")]),
    (dict(verb="cordon", kind="node", names=["n1"]), [("get", "nodes", None), ("patch", "nodes", None)]),
    (dict(verb="drain", kind="node", names=["n1"], options=["--ignore-daemonsets", "--timeout=5s"]),
     [("get", "nodes", None), ("patch", "nodes", None), ("list", "pods", "*"), ("get", "daemonsets", "*"),
      ("create", "pods/eviction", "*"), ("get", "pods", "*")]),
    (dict(verb="wait", kind="node", names=["n1"], options=["--for=condition=Ready"]),
     [("get", "nodes", None), ("list", "nodes", None), ("watch", "nodes", None)]),
    (dict(verb="delete", kind="pod", names=["a", "b"], namespace="p", options=["--wait=false"]), [("get", "pods", "p"), ("delete", "pods", "p")]),
    (dict(verb="delete", kind="pod", names=["a"], namespace="p"),
     [("get", "pods", "p"), ("delete", "pods", "p"), ("list", "pods", "p"), ("watch", "pods", "p")]),
    (dict(verb="logs", kind="pod", names=["a"], namespace="p", options=["--container=probe"]), [("get", "pods", "p"), ("get", "pods/log", "p")]),
])
def test_kubectl_requests(args, expected):
    args = dict(args, kubeconfig="k")
    kubectl.call_argv(args)
    assert [(r["verb"], r["resource"], r["namespace"]) for r in kubectl.call_requests(args)] == expected


def test_an_unknown_command_is_an_error_not_a_guess():
    with pytest.raises(kubectl.KubectlCallError, match="kubectl exec: its requests are not written down"):
        kubectl.call_requests({"verb": "exec", "kind": "pod", "names": ["a"], "kubeconfig": "k"})
    with pytest.raises(kubectl.KubectlCallError, match="unknown resource 'secrets'"):
        kubectl.call_requests({"verb": "get", "kind": "secrets", "kubeconfig": "k"})


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
    assert sorted((a["verb"], a["resource"]) for a in check) == [("get", "leases"), ("get", "namespaces"), ("list", "nodes"), ("list", "pods"),
                                                                 ("list", "resourceclaims"), ("list", "resourceslices")], \
        "check.yml only reads (the roll's Lease: is a roll in progress? and its namespace, which kubectl reads when there is none; DRA)"
    assert [a for a in check if a["resource"] == "namespaces"] == [
        {"verb": "get", "group": "", "resource": "namespaces", "namespace": "rke2-numa-system", "name": "rke2-numa-system"}]
    lease = [a for a in check if a["resource"] == "leases"]
    assert lease == [{"verb": "get", "group": "coordination.k8s.io", "resource": "leases", "namespace": "rke2-numa-system", "name": "rke2-numa-roll"}]


def test_findings_name_the_missing_right_and_what_needs_it():
    found = rbac.access_findings(_answers("rolling", refused=[("create", "pods/eviction")]), "rolling")
    assert found["everything"] is False and found["unreadable"] is False
    assert found["missing"] == ["may not create pods/eviction cluster-wide (needed to evict the workload pods (kubectl drain, "
                                "PodDisruptionBudgets respected))"]
    found = rbac.access_findings(_answers("rolling", refused=[("patch", "daemonsets")]), "rolling")
    assert found["missing"] == [] and found["optional_missing"] == [
        "may not patch daemonsets kured (API group apps) in namespace kube-system (needed to hold and give back kured's reboot lock "
        "(its DaemonSet only))"]
    found = rbac.access_findings(_answers("rolling", refused=[("list", "resourceslices")]), "rolling")
    assert found["missing"] == [] and found["optional_missing"] == [
        "may not list resourceslices (API group resource.k8s.io) cluster-wide (needed to see which GPUs, NICs and CPUs each node serves "
        "by DRA, and on which NUMA node)"], "an identity made before the DRA reads still rolls"
    assert rbac.access_findings(_answers("prove", everything=True), "prove")["everything"] is True
    assert rbac.access_findings({"kind": "Status"}, "prove")["unreadable"] is True
    assert rbac.access_findings(_answers("check"), "rolling")["unreadable"] is True, "answers to another question"


# ---------------------------------------------------------------- each playbook asks for what its calls need
@pytest.mark.parametrize("playbook", [rbac.CHECK, rbac.ROLLING, rbac.LABELS, rbac.PROVE])
def test_each_playbook_asks_the_api_for_exactly_what_its_calls_need(playbook):
    files = kc.reachable(playbook)
    calls = {kc.rule_key(r) for c in CALLS if c.file in files for r in requests_of(c) if not kc.granted_by_default(r)}
    asked = set()
    for need in rbac.needed(playbook):
        scope = need["scope"]
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


def test_kubectl_objects_reads_one_a_list_or_several_documents():
    one = {"kind": "SelfSubjectAccessReview", "status": {"allowed": True}}
    assert rbac.kubectl_objects(json.dumps(one))["items"] == [one]
    assert rbac.kubectl_objects(json.dumps(one, indent=4) + "\n" + json.dumps(one, indent=4))["items"] == [one, one], "kubectl create -o json"
    assert rbac.kubectl_objects(json.dumps({"kind": "List", "items": [one]}))["items"] == [one]
    assert rbac.kubectl_objects("")["items"] == []
    with pytest.raises(ValueError):
        rbac.kubectl_objects("error: the server doesn't have a resource type")


def test_labels_through_nfd_read_and_remove_kubectls_labels_and_a_roll_without_probes_asks_for_no_probe_right():
    assert sorted((n["verb"], n["resource"]) for n in rbac.needed("labels", labels_via="nfd")) == [
        ("get", "leases"), ("get", "namespaces"), ("list", "nodes"), ("list", "pods"), ("list", "resourceclaims"), ("list", "resourceslices"),
        ("patch", "nodes")], "the Lease: a roll in progress"
    assert ("patch", "nodes") in [(n["verb"], n["resource"]) for n in rbac.needed("labels")]
    assert not [n for n in rbac.needed("rolling", prove=False) if n["namespace"] == rbac.PROBE_NAMESPACE]
    assert [n for n in rbac.needed("rolling", labels_via="nfd") if (n["verb"], n["resource"]) == ("patch", "nodes")], "the cordon"


def _view(**cluster):
    return {"clusters": [{"name": "default", "cluster": dict({"server": "https://127.0.0.1:6443", "certificate-authority-data": "Q0E="},
                                                             **cluster)}]}


@pytest.mark.parametrize("server, view, words", [
    ("", _view(), ""),
    ("https://127.0.0.1:6443", _view(insecure_skip=None), ""),
    ("https://rke2.example.com:6443/", _view(), ""),
    ("https://127.0.0.1:1", _view(**{"insecure-skip-tls-verify": True}), "is not the admin kubeconfig's server"),
    ("https://10.0.0.9:6443", {"clusters": [{"name": "d", "cluster": {"server": "https://127.0.0.1:6443"}}]}, "has no CA"),
    ("http://127.0.0.1:6443", _view(), "must be an https URL"),
    ("https://u:p@127.0.0.1:6443", _view(), "must be an https URL"),
    ("https://127.0.0.1:6443?x=1", _view(), "must be an https URL"),
    ("https://127.0.0.1:99999", _view(), "is not a URL"),
    ("", {"clusters": []}, "names no cluster"),
    ("", _view(server="http://127.0.0.1:6443"), "the admin kubeconfig's server 'http://127.0.0.1:6443' must be an https URL"),
])
def test_the_token_goes_only_to_a_server_the_admin_kubeconfig_verifies(server, view, words):
    got = rbac.server_refusal(view, server or None)
    assert (words in got) if words else got == "", got
    if words:
        with pytest.raises(ValueError):
            rbac.scoped_kubeconfig(view, "tok", "2026-12-04T00:00:00Z", server or None)


def test_a_ca_named_by_the_operator_verifies_another_server_and_goes_into_the_kubeconfig():
    insecure = _view(**{"insecure-skip-tls-verify": True})
    assert "is not the admin kubeconfig's server" in rbac.server_refusal(insecure, "https://10.0.0.9:6443")
    assert rbac.server_refusal(insecure, "https://10.0.0.9:6443", ca_given=True) == ""
    assert rbac.server_check_args(_view(), None) == {"check": False, "url": "https://127.0.0.1:6443", "ca_data": "", "tls_server_name": ""}
    assert rbac.server_check_args(_view(**{"tls-server-name": "api"}), "https://10.0.0.9:6443") == {
        "check": True, "url": "https://10.0.0.9:6443", "ca_data": "Q0E=", "tls_server_name": "api"}
    assert rbac.server_check_args(_view(), None, ca_given=True)["check"], "a CA named: checked on the admin's server too"
    text = rbac.scoped_kubeconfig(insecure, "tok", "2026-12-04T00:00:00Z", "https://10.0.0.9:6443", "T1RIRVI=")
    cluster = json.loads(text.split("\n", 2)[2])["clusters"][0]["cluster"]
    assert cluster == {"server": "https://10.0.0.9:6443", "certificate-authority-data": "T1RIRVI="}


def _binding(kind, name, subjects, role="cluster-admin", namespace=None, ours=False):
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if ours:
        meta["labels"] = {"app.kubernetes.io/managed-by": rbac.MANAGED_BY}
    return {"kind": kind, "metadata": meta, "subjects": subjects, "roleRef": {"kind": "ClusterRole" if kind == "ClusterRoleBinding" else "Role",
                                                                              "name": role}}


def test_bindings_of_our_service_account_that_are_not_ours_are_refused_and_ours_left_behind_are_removed():
    wanted = rbac.manifest()
    sa = {"kind": "ServiceAccount", "name": "rke2-numa", "namespace": rbac.IDENTITY_NAMESPACE}
    reply = {"kind": "List", "items": [o for o in wanted if o["kind"].endswith("Binding")] + [
        _binding("ClusterRoleBinding", "extra", [sa]),
        _binding("RoleBinding", "as-user", [{"kind": "User", "name": rbac.identity()}], role="edit", namespace="default"),
        _binding("ClusterRoleBinding", "discovery", [{"kind": "Group", "name": "system:serviceaccounts"}]),   # RBAC's own: the reviews judge
        _binding("ClusterRoleBinding", "other-sa", [dict(sa, namespace="elsewhere")]),
        _binding("RoleBinding", "rke2-numa-probe", [sa], role="rke2-numa-probe", namespace="old-probe", ours=True)]}
    found = rbac.binding_findings(reply, wanted)
    assert [f.split(":")[0] for f in found["foreign"]] == [
        "ClusterRoleBinding extra binds the ServiceAccount rke2-numa-system/rke2-numa to ClusterRole cluster-admin",
        "RoleBinding default/as-user binds the ServiceAccount rke2-numa-system/rke2-numa to Role edit"]
    assert found["leftovers"] == [{"kind": "RoleBinding", "namespace": "old-probe", "name": "rke2-numa-probe"},
                                  {"kind": "Role", "namespace": "old-probe", "name": "rke2-numa-probe"}]
    assert rbac.binding_findings({"kind": "Status"}, wanted)["unreadable"]


def test_the_subject_reviews_ask_for_the_service_account_and_name_what_it_must_not_do():
    asked = rbac.subject_reviews()
    assert {i["kind"] for i in asked["items"]} == {"SubjectAccessReview"}
    assert asked["items"][0]["spec"]["user"] == rbac.identity() and "system:serviceaccounts" in asked["items"][0]["spec"]["groups"]
    answers = [dict(i, status={"allowed": n > len(rbac.FORBIDDEN)}) for n, i in enumerate(asked["items"])]
    assert rbac.subject_findings({"items": answers}) == {"unreadable": False, "everything": False, "forbidden": [], "missing": [],
                                                         "optional_missing": []}
    answers[3]["status"]["allowed"] = True
    found = rbac.subject_findings({"items": answers})
    assert found["forbidden"] == ["may create pods/exec cluster-wide (it could run commands in any pod)"]
    answers[-1]["status"]["allowed"] = False
    assert rbac.subject_findings({"items": answers})["missing"] or rbac.subject_findings({"items": answers})["optional_missing"]
    assert rbac.subject_findings({"items": answers[:-1]})["unreadable"]


def test_an_aggregation_rule_on_our_cluster_role_is_refused():
    wanted = rbac.manifest()
    have = [dict(o, metadata=dict(o["metadata"], labels=dict(o["metadata"].get("labels") or {}))) for o in wanted]
    role = next(o for o in have if o["kind"] == "ClusterRole")
    role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}
    refused = rbac.identity_changes({"kind": "List", "items": have}, wanted)["refused"]
    assert refused and refused[0].startswith("ClusterRole rke2-numa has an aggregationRule nobody here wrote")


def test_drain_namespaces_narrow_the_evictions_to_them_and_nowhere_else():
    """An Eviction names only its pod: RBAC's namespaces are the only narrowing the API has. Named, the ClusterRole
    loses the eviction right and a RoleBinding of rke2-numa-evict grants it in each namespace; the reviews ask for each,
    and the subject reviews call a cluster-wide eviction right one the identity must not hold."""
    user = rbac.identity()
    wide = rbac.manifest()
    assert rbac.allowed(wide, user, "create", "", "pods/eviction", "monitoring", "x")
    narrow = rbac.manifest(evict=["ml", "batch", "ml"])
    for namespace, answer in (("ml", True), ("batch", True), ("monitoring", False), ("kube-system", False), (None, False)):
        assert rbac.allowed(narrow, user, "create", "", "pods/eviction", namespace, "x") is answer, namespace
    bindings = [(o["metadata"]["namespace"], o["roleRef"]["name"]) for o in narrow if o["kind"] == "RoleBinding" and o["metadata"]["name"] == "rke2-numa-evict"]
    assert bindings == [("batch", "rke2-numa-evict"), ("ml", "rke2-numa-evict")]
    evictions = [n["namespace"] for n in rbac.needed("rolling", evict=["ml", "batch"]) if n["subresource"] == "eviction"]
    assert evictions == ["batch", "ml"] and [n["namespace"] for n in rbac.needed("rolling") if n["subresource"] == "eviction"] == [None]
    reviews = rbac.subject_reviews(evict=["ml"])["items"]
    assert any(r["spec"]["resourceAttributes"] == {"verb": "create", "group": "", "resource": "pods", "subresource": "eviction"} for r in reviews)
    answers = {"items": [{"status": {"allowed": r["spec"]["resourceAttributes"].get("subresource") == "eviction"}} for r in reviews]}
    found = rbac.subject_findings(answers, evict=["ml"])
    assert found["forbidden"] == ["may create pods/eviction cluster-wide (it could evict pods in every namespace (rke2_numa_drain_namespaces "
                                  "names where))"], found


@pytest.mark.parametrize("value, words", [
    ("ml", "must be a list of namespaces"), (["kube-system"], "the cluster's own namespace"), (["Ml"], "entry 'Ml'"),
    (["n%d" % i for i in range(101)], "at most 100"), ([7], "entry 7"),
])
def test_drain_namespaces_are_bounded_names_never_the_clusters_own(value, words):
    errors = rbac.drain_namespace_errors(value)
    assert errors and words in "; ".join(errors), errors
    with pytest.raises(ValueError):
        rbac.manifest(evict=value)
