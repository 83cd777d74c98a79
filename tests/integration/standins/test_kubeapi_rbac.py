# -*- coding: utf-8 -*-
"""The kubeapi stand-in's authentication (the admin's token, ServiceAccount tokens from TokenRequest, anonymous) and
RBAC authorization, through the real kubectl: server-side apply of a manifest, kubectl create token, a ServiceAccount's
allowed and forbidden requests with the API server's messages, kubectl auth can-i and SelfSubjectAccessReviews.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import ssl
import stat
import subprocess
import time

import pytest

from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import ADMIN_TOKEN, KUBEAPI_PATH, PYTHON, Cluster, needs_kubectl
from ansible_collections.maitred.rke2_numa.tests.integration.standins.test_kubeapi_standin import kubectl_minor

SA = "system:serviceaccount:rke2-numa-system:rke2-numa"
APPLY = ("apply", "--server-side", "--force-conflicts", "--field-manager=rke2-numa", "--validate=false", "-f")
UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Unauthorized",
                "reason": "Unauthorized", "code": 401}
MANIFEST = """\
apiVersion: v1
kind: Namespace
metadata:
  name: rke2-numa-system
  labels:
    app.kubernetes.io/name: rke2-numa
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: rke2-numa
  namespace: rke2-numa-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: rke2-numa
rules:
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch, patch]
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list]
- apiGroups: [""]
  resources: ["*/eviction"]
  verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: rke2-numa
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: rke2-numa
subjects:
- kind: ServiceAccount
  name: rke2-numa
  namespace: rke2-numa-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: kured-lock
  namespace: kube-system
rules:
- apiGroups: [apps]
  resources: [daemonsets]
  verbs: [get]
- apiGroups: [apps]
  resources: [daemonsets]
  resourceNames: [kured]
  verbs: [list, watch, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: kured-lock
  namespace: kube-system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: kured-lock
subjects:
- kind: ServiceAccount
  name: rke2-numa
  namespace: rke2-numa-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: probes
  namespace: default
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [create, delete]
- apiGroups: [""]
  resources: [pods/log]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: probes
  namespace: default
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: probes
subjects:
- kind: ServiceAccount
  name: rke2-numa
  namespace: rke2-numa-system
"""
KINDS = ["namespace/rke2-numa-system", "serviceaccount/rke2-numa", "clusterrole.rbac.authorization.k8s.io/rke2-numa",
         "clusterrolebinding.rbac.authorization.k8s.io/rke2-numa", "role.rbac.authorization.k8s.io/kured-lock",
         "rolebinding.rbac.authorization.k8s.io/kured-lock", "role.rbac.authorization.k8s.io/probes", "rolebinding.rbac.authorization.k8s.io/probes"]


def _kubeapi():
    spec = importlib.util.spec_from_file_location("kubeapi_standin_for_rbac", KUBEAPI_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


kubeapi = _kubeapi()


def documents(text):
    """kubectl create -o json prints one JSON document per object created."""
    decoder, out, index = json.JSONDecoder(), [], 0
    while text[index:].strip():
        while text[index].isspace():
            index += 1
        doc, index = decoder.raw_decode(text, index)
        out.append(doc)
    return out


@pytest.fixture
def cluster(tmp_path):
    """Node n1 with the seed pods, kured's and another declared DaemonSet in kube-system, and (cluster.apply()) the
    manifest above applied by the admin."""
    api = Cluster(tmp_path)
    api.add_node("n1", ready=True)
    with open(os.path.join(api.state, "daemonsets.json"), "w") as handle:
        json.dump([{"namespace": "kube-system", "name": "kured"}, {"namespace": "kube-system", "name": "other"}], handle)
    api.manifest = str(tmp_path / "rbac.yaml")
    with open(api.manifest, "w") as handle:
        handle.write(MANIFEST)
    yield api
    api.stop()
    assert "Traceback" not in (api.tmp / "kubeapi.err").read_text()
    assert [c for c in api.calls() if c["code"] >= 500] == []


def applied(cluster):
    out = cluster.kubectl(*APPLY, cluster.manifest)
    assert out.returncode == 0, out.stderr
    return out


def token_for(cluster, duration="2h"):
    out = cluster.kubectl("create", "token", "rke2-numa", "-n", "rke2-numa-system", "--duration=" + duration)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def sa_kubeconfig(cluster):
    applied(cluster)
    return cluster.kubeconfig_for(token_for(cluster), "sa")


# ---------------------------------------------------------------- authentication

def test_the_kubeconfig_carries_the_admin_token_over_https(cluster):
    with open(cluster.kubeconfig) as handle:
        text = handle.read()
    assert "    token: %s\n" % ADMIN_TOKEN in text and "    server: https://127.0.0.1:%d\n" % cluster.port in text
    assert "    insecure-skip-tls-verify: true\n" in text, "the certificate is self-signed"
    out = subprocess.run([PYTHON, KUBEAPI_PATH, "kubeconfig", "--server", cluster.url, "--namespace", "ns1", "--token", "0123"],
                         capture_output=True, text=True, check=True, timeout=20).stdout
    assert '    token: "0123"\n' in out and "    namespace: ns1\n" in out, "a token YAML would read as a number is quoted"
    out = subprocess.run([PYTHON, KUBEAPI_PATH, "kubeconfig", "--server", cluster.url, "--token=-x_1"], capture_output=True, text=True,
                         check=True, timeout=20).stdout
    assert '    token: "-x_1"\n' in out, "token_urlsafe may start with -"
    assert stat.S_IMODE(os.stat(os.path.join(cluster.state, "auth", "tls.key")).st_mode) == 0o600


@needs_kubectl
def test_the_admin_may_do_anything(cluster):
    if kubectl_minor() >= 28:  # kubectl auth whoami reads authentication.k8s.io/v1 from 1.28 (before: v1alpha1, v1beta1, not served)
        out = cluster.kubectl("auth", "whoami", "-o", "json")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["status"]["userInfo"] == {"username": "system:admin",
                                                                "groups": ["system:masters", "system:authenticated"]}
    out = cluster.kubectl("auth", "can-i", "*", "*")
    assert (out.returncode, out.stdout.strip()) == (0, "yes")
    code, review = cluster.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes", "name": "n1"}}})
    assert (code, review["status"]) == (201, {"allowed": True}), "the privileged group authorizer gives no reason"
    assert cluster.kubectl("label", "node", "n1", "x=y").returncode == 0
    assert {c["user"] for c in cluster.calls(agent=cluster.calls()[-1]["agent"])} == {"system:admin"}


@needs_kubectl
def test_anonymous_requests_get_only_health_and_version(cluster):
    for path in ("/version", "/version/", "/healthz", "/livez", "/readyz"):
        assert cluster.request("GET", path, token=None)[0] == 200, path
    code, status = cluster.request("GET", "/api", token=None)
    assert (code, status) == (403, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                    "message": 'forbidden: User "system:anonymous" cannot get path "/api"', "reason": "Forbidden",
                                    "details": {}, "code": 403})
    code, status = cluster.request("GET", "/api/v1/namespaces/default/pods/p1", token=None)
    assert (code, status["message"], status["details"]) == (403, 'pods "p1" is forbidden: User "system:anonymous" cannot get resource "pods" '
                                                                 'in API group "" in the namespace "default"', {"name": "p1", "kind": "pods"})
    assert cluster.request("GET", "/api/v1/foos", token=None)[0] == 403, "authorization comes before routing"
    assert cluster.request("GET", "/api/v1/foos")[0] == 404
    assert cluster.request("GET", "/version", token=None)[1]["gitVersion"] == kubeapi.VERSION
    assert cluster.calls(path="/version/")[0]["user"] == "system:anonymous"
    # kubectl sends no credentials to an http:// server: anonymous.
    out = cluster.kubectl("get", "nodes", kubeconfig=cluster.kubeconfig_for(None, "anonymous"))
    assert out.returncode == 1 and "Error from server (Forbidden)" in out.stderr, "discovery (GET /api) is forbidden"
    assert cluster.calls(path="/api")[-1]["user"] == "system:anonymous"


@needs_kubectl
def test_an_unknown_or_expired_token_is_unauthorized(cluster):
    assert cluster.request("GET", "/version", token="nope") == (401, UNAUTHORIZED), "authentication comes first, even for /version"
    assert cluster.calls(code=401)[0]["user"] is None
    bad = cluster.kubeconfig_for("not-a-token", "bad")
    out = cluster.kubectl("get", "nodes", "--cache-dir", str(cluster.tmp / "fresh-cache"), kubeconfig=bad)
    assert out.returncode == 1 and out.stderr.endswith("error: You must be logged in to the server (the server has asked for the client to "
                                                       "provide credentials)\n"), "the 401 of discovery"
    assert cluster.kubectl("get", "nodes").returncode == 0, "the admin: discovery cached"
    out = cluster.kubectl("get", "nodes", kubeconfig=bad)
    assert (out.returncode, out.stderr) == (1, "error: You must be logged in to the server (Unauthorized)\n")
    assert cluster.request("GET", "/version", token="")[0] == 200, "an empty bearer token is anonymous"
    applied(cluster)
    token = token_for(cluster)
    assert cluster.request("GET", "/api/v1/nodes", token=token)[0] == 200
    path = os.path.join(cluster.state, "auth", "tokens.json")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with open(path) as handle:
        tokens = json.load(handle)
    assert token not in json.dumps(tokens), "only the token's digest is kept"
    (entry,) = tokens.values()
    assert (entry["namespace"], entry["name"], round(entry["expires"] - entry["issued"])) == ("rke2-numa-system", "rke2-numa", 7200)
    entry["expires"] = time.time() - 1
    with open(path, "w") as handle:
        json.dump(tokens, handle)
    assert cluster.request("GET", "/api/v1/nodes", token=token) == (401, UNAUTHORIZED)


@needs_kubectl
def test_tokens_survive_a_restart(cluster):
    applied(cluster)
    token = token_for(cluster)
    assert cluster.stop() == 0
    port_file = cluster.tmp / "port2"
    with subprocess.Popen([PYTHON, KUBEAPI_PATH, "serve", "--state-dir", cluster.state, "--port", "0", "--port-file", str(port_file)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as server:
        try:
            deadline = time.time() + 15
            while not port_file.exists() and time.time() < deadline:
                time.sleep(0.02)
            cluster.port = int(port_file.read_text())
            code, nodes = cluster.request("GET", "/api/v1/nodes", token=token)
            assert code == 200 and [n["metadata"]["name"] for n in nodes["items"]] == ["n1"]
        finally:
            server.send_signal(signal.SIGTERM)
            assert server.wait(10) == 0


# ---------------------------------------------------------------- the stored objects, server-side apply

@needs_kubectl
def test_server_side_apply_get_and_delete_of_a_manifest(cluster):
    out = cluster.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=rke2-numa", "-f", cluster.manifest)
    assert out.returncode == 1 and cluster.calls(method="PATCH") == [], "the default validation needs the OpenAPI documents"
    if kubectl_minor() >= 30:
        assert "error validating data: failed to download openapi" in out.stderr
    out = applied(cluster)
    assert out.stdout.splitlines() == [k + " serverside-applied" for k in KINDS]
    creates = [(c["method"], c["path"], c["code"], c["query"].get("fieldManager")) for c in cluster.calls(method="PATCH")]
    assert creates[0] == ("PATCH", "/api/v1/namespaces/rke2-numa-system", 201, "rke2-numa")
    assert creates[5] == ("PATCH", "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings/kured-lock", 201, "rke2-numa")
    out = cluster.kubectl("get", "-f", cluster.manifest, "-o", "json", "--ignore-not-found")
    listed = json.loads(out.stdout)
    assert [(i["kind"], i["metadata"]["name"]) for i in listed["items"]][:3] == [
        ("Namespace", "rke2-numa-system"), ("ServiceAccount", "rke2-numa"), ("ClusterRole", "rke2-numa")]
    namespace, account, role = listed["items"][:3]
    assert namespace["metadata"]["labels"] == {"app.kubernetes.io/name": "rke2-numa", "kubernetes.io/metadata.name": "rke2-numa-system"}
    assert namespace["status"] == {"phase": "Active"} and namespace["metadata"]["uid"] and namespace["metadata"]["creationTimestamp"]
    assert account["metadata"]["namespace"] == "rke2-numa-system" and int(account["metadata"]["resourceVersion"]) > 0
    assert role["rules"][2] == {"verbs": ["create"], "apiGroups": [""], "resources": ["*/eviction"]}
    binding = listed["items"][3]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "rke2-numa", "namespace": "rke2-numa-system"}]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "rke2-numa"}
    with open(os.path.join(cluster.state, "objects", "clusterroles.json")) as handle:
        assert [r["metadata"]["name"] for r in json.load(handle)] == ["rke2-numa"]
    # Applying again changes the applied fields in place (200), keeping uid and creationTimestamp.
    changed = MANIFEST.replace("verbs: [get, list]\n", "verbs: [get, list, watch]\n")
    with open(cluster.manifest, "w") as handle:
        handle.write(changed)
    assert cluster.kubectl(*APPLY, cluster.manifest).returncode == 0
    assert [c["code"] for c in cluster.calls(method="PATCH")][-8:] == [200] * 8
    again = json.loads(cluster.kubectl("get", "clusterrole", "rke2-numa", "-o", "json").stdout)
    assert again["rules"][1]["verbs"] == ["get", "list", "watch"] and again["metadata"]["uid"] == role["metadata"]["uid"]
    assert cluster.kubectl("get", "clusterroles", "-o", "name").stdout.split() == [
        "clusterrole.rbac.authorization.k8s.io/" + n for n in ("cluster-admin", "rke2-numa", "system:basic-user", "system:discovery",
                                                               "system:public-info-viewer")]
    out = cluster.kubectl("delete", "-f", cluster.manifest, "--ignore-not-found")
    assert out.returncode == 0, out.stderr
    # kubectl 1.33+ says where a namespaced object was deleted from ('... deleted from kube-system namespace')
    said = [re.sub(r" from \S+ namespace$", "", line) for line in out.stdout.splitlines()]
    assert said == ['namespace "rke2-numa-system" deleted'] + ['%s "%s" deleted' % tuple(k.split("/")) for k in KINDS[2:]], \
        "the namespace's deletion took its ServiceAccount along (404, ignored)"
    deleted = [(c["method"], c["code"]) for c in cluster.calls() if c["method"] == "DELETE"]
    assert deleted == [("DELETE", 200), ("DELETE", 404)] + [("DELETE", 200)] * 6
    assert cluster.calls()[-1]["method"] == "GET" and cluster.calls()[-1]["code"] == 404, "--wait: a GET of each until it is 404"
    out = cluster.kubectl("get", "-f", cluster.manifest, "-o", "json", "--ignore-not-found")
    assert (out.returncode, out.stdout) == (0, "")
    assert cluster.kubectl("delete", "-f", cluster.manifest, "--ignore-not-found").returncode == 0
    code, status = cluster.request("PATCH", "/api/v1/namespaces/x/serviceaccounts/y?fieldManager=m", {"metadata": {"name": "y"}},
                                   "application/apply-patch+yaml")
    assert (code, status["message"]) == (404, 'namespaces "x" not found')
    code, status = cluster.request("PATCH", "/apis/rbac.authorization.k8s.io/v1/clusterroles/y", {"metadata": {"name": "y"}},
                                   "application/apply-patch+yaml")
    assert (code, status["message"]) == (422, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch')


@needs_kubectl
def test_the_bootstrap_policy_and_object_validation(cluster):
    code, role = cluster.request("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:discovery")
    assert code == 200 and "/version" in role["rules"][0]["nonResourceURLs"]
    out = cluster.kubectl("delete", "clusterrolebinding", "cluster-admin")
    assert out.returncode == 1 and "(MethodNotAllowed)" in out.stderr
    assert cluster.kubectl("get", "clusterrolebinding", "cluster-admin").returncode == 0
    code, status = cluster.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
        "metadata": {"name": "bad"},
        "rules": [{"apiGroups": [""], "resources": ["pods"]}, {"verbs": ["get"], "nonResourceURLs": ["/x"], "resources": ["pods"]}]})
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["message"] == ('ClusterRole.rbac.authorization.k8s.io "bad" is invalid: [rules[0].verbs: Required value: verbs must contain '
                                 'at least one value, rules[1].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both '
                                 'regular resources and non-resource URLs]')
    code, status = cluster.request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/nowhere/roles", {"metadata": {"name": "r"}})
    assert (code, status["message"]) == (404, 'namespaces "nowhere" not found')
    code, status = cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": "Bad_Name"}})
    assert code == 422 and status["message"].startswith('Namespace "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
                                                        "a lowercase RFC 1123 label must consist of")
    assert cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": "default"}})[1]["message"] == 'namespaces "default" already exists'
    code, status = cluster.request("DELETE", "/api/v1/namespaces/kube-system")
    assert (code, status["message"]) == (403, 'namespaces "kube-system" is forbidden: this namespace may not be deleted')
    assert cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": "scratch"}})[0] == 201
    assert cluster.request("POST", "/api/v1/namespaces/scratch/serviceaccounts", {"metadata": {"name": "a"}})[0] == 201
    code, account = cluster.request("PATCH", "/api/v1/namespaces/scratch/serviceaccounts/a", {"metadata": {"labels": {"k": "v"}}},
                                    "application/merge-patch+json")
    assert code == 200 and account["metadata"]["labels"] == {"k": "v"}
    code, status = cluster.request("DELETE", "/api/v1/namespaces/scratch/serviceaccounts/a")
    assert (code, status["status"], status["details"]["kind"]) == (200, "Success", "serviceaccounts")


@needs_kubectl
def test_a_binding_s_role_ref_cannot_change(cluster):
    applied(cluster)
    with open(cluster.manifest, "w") as handle:
        handle.write(MANIFEST.replace("  kind: ClusterRole\n  name: rke2-numa\nsubjects", "  kind: ClusterRole\n  name: view\nsubjects"))
    out = cluster.kubectl(*APPLY, cluster.manifest)
    assert out.returncode == 1
    assert ('The ClusterRoleBinding "rke2-numa" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", '
            'Kind:"ClusterRole", Name:"view"}: cannot change roleRef') in out.stderr
    code, status = cluster.request("PATCH", "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings/kured-lock",
                                   {"roleRef": {"kind": "ClusterRole", "name": "rke2-numa"}}, "application/merge-patch+json")
    assert (code, status["details"]["causes"]) == (422, [{"reason": "FieldValueInvalid", "field": "roleRef", "message": (
        'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"rke2-numa"}: cannot change roleRef')}])


@needs_kubectl
def test_kubectl_create_of_each_kind_sends_protobuf(cluster):
    for argv in (("namespace", "psa"), ("serviceaccount", "a", "-n", "psa"),
                 ("clusterrole", "cr", "--verb=get,list", "--resource=pods,nodes"),
                 ("role", "r", "-n", "psa", "--verb=patch", "--resource=daemonsets.apps", "--resource-name=kured"),
                 ("rolebinding", "rb", "-n", "psa", "--clusterrole=cr", "--serviceaccount=psa:a", "--user=bob", "--group=g"),
                 ("clusterrolebinding", "crb", "--clusterrole=cr", "--serviceaccount=psa:a")):
        out = cluster.kubectl("create", *argv)
        assert out.returncode == 0, out.stderr
    binding = json.loads(cluster.kubectl("get", "rolebinding", "rb", "-n", "psa", "-o", "json").stdout)
    assert binding["subjects"] == [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "bob"},
                                   {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "g"},
                                   {"kind": "ServiceAccount", "name": "a", "namespace": "psa"}]
    role = json.loads(cluster.kubectl("get", "role", "r", "-n", "psa", "-o", "json").stdout)
    assert role["rules"] == [{"verbs": ["patch"], "apiGroups": ["apps"], "resources": ["daemonsets"], "resourceNames": ["kured"]}]
    token = cluster.kubectl("create", "token", "a", "-n", "psa").stdout.strip()
    code, nodes = cluster.request("GET", "/api/v1/nodes", token=token)
    assert code == 200 and [n["metadata"]["name"] for n in nodes["items"]] == ["n1"], "crb grants list nodes"


@needs_kubectl
def test_pod_security_admission_enforces_the_namespace_level(cluster, tmp_path):
    assert cluster.kubectl("create", "namespace", "psa").returncode == 0
    assert cluster.kubectl("label", "namespace", "psa", "pod-security.kubernetes.io/enforce=restricted").returncode == 0
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "psa"}, "spec": {
        "nodeName": "n1", "hostNetwork": True, "volumes": [{"name": "sys", "hostPath": {"path": "/sys"}}],
        "containers": [{"name": "probe", "image": "registry.example/probe:1", "ports": [{"containerPort": 80, "hostPort": 8080}],
                        "securityContext": {"privileged": True, "capabilities": {"add": ["SYS_ADMIN"]}}}]}}
    path = tmp_path / "pod.json"
    path.write_text(json.dumps(pod))
    out = cluster.kubectl("create", "--validate=false", "-f", str(path))
    assert out.stderr.strip() == (
        'Error from server (Forbidden): error when creating "%s": pods "p1" is forbidden: violates PodSecurity "restricted:latest": '
        'host namespaces (hostNetwork), hostPort (container "probe" uses hostPort 8080), privileged (container "probe" must not set '
        'securityContext.privileged=true), allowPrivilegeEscalation != false (container "probe" must set '
        'securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "probe" must set '
        'securityContext.capabilities.drop=["ALL"]; container "probe" must not include "SYS_ADMIN" in securityContext.capabilities.add), '
        'restricted volume types (volumes ["sys"] have restricted types), runAsNonRoot != true (pod or container "probe" must set '
        'securityContext.runAsNonRoot=true), seccompProfile (pod or container "probe" must set securityContext.seccompProfile.type to '
        '"RuntimeDefault" or "Localhost")' % path)
    assert cluster.kubectl("label", "namespace", "psa", "pod-security.kubernetes.io/enforce=baseline", "--overwrite").returncode == 0
    out = cluster.kubectl("create", "--validate=false", "-f", str(path))
    assert out.stderr.strip().endswith(
        'violates PodSecurity "baseline:latest": non-default capabilities (container "probe" must not include "SYS_ADMIN" in '
        'securityContext.capabilities.add), host namespaces (hostNetwork), hostPath volumes (volume "sys"), hostPort (container "probe" uses '
        'hostPort 8080), privileged (container "probe" must not set securityContext.privileged=true)')
    assert cluster.summaries("create")[-1] == {"verb": "create", "pod": "psa/p1", "podSecurity": "baseline", "code": 403}
    assert cluster.kubectl("label", "namespace", "psa", "pod-security.kubernetes.io/enforce=restricted", "--overwrite").returncode == 0
    pod["spec"] = {"nodeName": "n1", "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                   "containers": [{"name": "probe", "image": "registry.example/probe:1",
                                   "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}]}
    path.write_text(json.dumps(pod))
    out = cluster.kubectl("create", "--validate=false", "-f", str(path))
    assert out.returncode == 0, out.stderr
    pod["metadata"]["namespace"] = "default"
    pod["spec"] = {"nodeName": "n1", "hostPID": True, "containers": [{"name": "probe", "image": "registry.example/probe:1"}]}
    path.write_text(json.dumps(pod))
    assert cluster.kubectl("create", "--validate=false", "-f", str(path)).returncode == 0, "no label: nothing enforced"


# ---------------------------------------------------------------- TokenRequest

@needs_kubectl
def test_token_requests(cluster):
    applied(cluster)
    assert token_for(cluster)
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 900}}
    out = cluster.kubectl("create", "--raw", "/api/v1/namespaces/rke2-numa-system/serviceaccounts/rke2-numa/token", "-f", "-",
                          stdin=json.dumps(request))
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert (answer["kind"], answer["apiVersion"], answer["spec"]["expirationSeconds"]) == ("TokenRequest", "authentication.k8s.io/v1", 900)
    assert answer["spec"]["audiences"] == kubeapi.TOKEN_AUDIENCES and answer["metadata"]["name"] == "rke2-numa"
    assert round(kubeapi._epoch(answer["status"]["expirationTimestamp"]) - time.time()) in range(895, 901)
    assert cluster.request("GET", "/api/v1/nodes", token=answer["status"]["token"])[0] == 200
    assert [s["expirationSeconds"] for s in cluster.summaries("token")] == [7200, 900], "kubectl create token --duration=2h"
    out = cluster.kubectl("create", "token", "rke2-numa", "-n", "rke2-numa-system", "--duration=1m")
    assert (out.returncode, out.stderr) == (1, 'error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: '
                                               "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes\n")
    code, status = cluster.request("POST", "/api/v1/namespaces/rke2-numa-system/serviceaccounts/rke2-numa/token",
                                   dict(request, spec={"expirationSeconds": 2 ** 32 + 1}))
    assert (code, status["message"]) == (422, 'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: '
                                              "4294967297: may not specify a duration larger than 2^32 seconds")
    code, answer = cluster.request("POST", "/api/v1/namespaces/rke2-numa-system/serviceaccounts/rke2-numa/token", {})
    assert code == 201 and answer["spec"]["expirationSeconds"] == 3600
    out = cluster.kubectl("create", "token", "nope", "-n", "rke2-numa-system")
    assert out.returncode == 1 and 'serviceaccounts "nope" not found' in out.stderr
    code, status = cluster.request("POST", "/api/v1/namespaces/rke2-numa-system/serviceaccounts/rke2-numa/token",
                                   dict(request, metadata={"name": "other"}))
    assert (code, status["message"]) == (422, 'TokenRequest.authentication.k8s.io "rke2-numa" is invalid: metadata.name: Invalid value: '
                                              '"other": must match the service account name if specified')


@needs_kubectl
def test_deleting_the_service_account_invalidates_its_token(cluster):
    config = sa_kubeconfig(cluster)
    assert cluster.kubectl("get", "nodes", kubeconfig=config).returncode == 0
    assert cluster.kubectl("delete", "serviceaccount", "rke2-numa", "-n", "rke2-numa-system").returncode == 0
    out = cluster.kubectl("get", "nodes", kubeconfig=config)
    assert out.returncode == 1 and "error: You must be logged in to the server (Unauthorized)" in out.stderr
    assert cluster.kubectl(*APPLY, cluster.manifest).returncode == 0, "the same name again: another uid"
    assert "(Unauthorized)" in cluster.kubectl("get", "nodes", kubeconfig=config).stderr


# ---------------------------------------------------------------- a ServiceAccount's rights

@needs_kubectl
def test_what_the_service_account_may_and_may_not_do(cluster, tmp_path):
    config = sa_kubeconfig(cluster)
    token = token_for(cluster)

    def kubectl(*argv, **kwargs):
        return cluster.kubectl(*argv, kubeconfig=config, **kwargs)

    assert kubectl("get", "nodes", "-o", "name").stdout.split() == ["node/n1"]
    assert kubectl("get", "node", "n1", "-o", "name").returncode == 0
    assert kubectl("get", "pods", "-A", "-o", "name").returncode == 0
    out = kubectl("label", "node", "n1", "rke2-numa.maitred.io/plan=p1")
    assert out.returncode == 0, out.stderr
    assert {c["user"] for c in cluster.calls(method="PATCH", path="/api/v1/nodes/n1")} == {SA}
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "sample-workload-n1", "namespace": "default"}}
    assert cluster.request("POST", "/api/v1/namespaces/default/pods/sample-workload-n1/eviction", eviction, token=token)[0] == 201, \
        "pods/eviction through */eviction"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe-1", "namespace": "default"},
           "spec": {"nodeName": "n1", "restartPolicy": "Never", "containers": [{"name": "probe", "image": "registry.example/probe:1"}]}}
    (tmp_path / "pod.json").write_text(json.dumps(pod))
    out = kubectl("create", "--validate=false", "-f", str(tmp_path / "pod.json"))
    assert out.returncode == 0, out.stderr
    # Forbidden: the API server's message on kubectl's stderr.
    out = kubectl("delete", "pod", "rke2-canal-n1", "-n", "kube-system")
    assert out.returncode == 1 and out.stderr.strip() == (
        'Error from server (Forbidden): pods "rke2-canal-n1" is forbidden: User "%s" cannot delete resource "pods" in API group "" '
        'in the namespace "kube-system"' % SA)
    out = kubectl("get", "namespaces")
    assert out.stderr.strip() == ('Error from server (Forbidden): namespaces is forbidden: User "%s" cannot list resource "namespaces" '
                                  'in API group "" at the cluster scope' % SA)
    # A Role's rights only in its namespace.
    pod["metadata"]["namespace"] = "kube-system"
    (tmp_path / "pod.json").write_text(json.dumps(pod))
    out = kubectl("create", "--validate=false", "-f", str(tmp_path / "pod.json"))
    assert out.stderr.strip() == ('Error from server (Forbidden): error when creating "%s": pods is forbidden: User "%s" cannot create '
                                  'resource "pods" in API group "" in the namespace "kube-system"' % (tmp_path / "pod.json", SA))
    code, status = cluster.request("POST", "/api/v1/namespaces/kube-system/pods/rke2-canal-n1/log", token=token)
    assert code == 403 and status["message"].endswith('cannot create resource "pods/log" in API group "" in the namespace "kube-system"')
    # resourceNames: kured's DaemonSet, no other.
    out = kubectl("annotate", "daemonset", "kured", "-n", "kube-system", "weave.works/kured-node-lock=n1")
    assert out.returncode == 0, out.stderr
    out = kubectl("patch", "daemonset", "other", "-n", "kube-system", "--type=merge", "-p", '{"metadata":{"annotations":{"a":"b"}}}')
    assert out.stderr.strip() == ('Error from server (Forbidden): daemonsets.apps "other" is forbidden: User "%s" cannot patch resource '
                                  '"daemonsets" in API group "apps" in the namespace "kube-system"' % SA)
    # A list names its object through fieldSelector metadata.name.
    base = "/apis/apps/v1/namespaces/kube-system/daemonsets"
    code, found = cluster.request("GET", base + "?fieldSelector=metadata.name%3Dkured", token=token)
    assert code == 200 and [d["metadata"]["name"] for d in found["items"]] == ["kured"]
    code, status = cluster.request("GET", base, token=token)
    assert (code, status["message"]) == (403, 'daemonsets.apps is forbidden: User "%s" cannot list resource "daemonsets" in API group "apps" '
                                              'in the namespace "kube-system"' % SA)
    code, status = cluster.request("GET", base + "?watch=1&fieldSelector=metadata.name%3Dother", token=token)
    assert (code, status["details"]) == (403, {"name": "other", "group": "apps", "kind": "daemonsets"})
    assert 'cannot watch resource "daemonsets"' in status["message"]
    out = kubectl("wait", "--for=jsonpath={.metadata.name}=kured", "daemonset/kured", "-n", "kube-system", "--timeout=10s")
    assert out.returncode == 0, out.stderr


@needs_kubectl
def test_a_binding_to_a_missing_role_says_so(cluster):
    config = sa_kubeconfig(cluster)
    assert cluster.request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", {
        "metadata": {"name": "dangling"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "missing"},
        "subjects": [{"kind": "ServiceAccount", "name": "rke2-numa", "namespace": "rke2-numa-system"}]})[0] == 201
    out = cluster.kubectl("get", "serviceaccounts", "-n", "default", kubeconfig=config)
    assert out.stderr.strip() == ('Error from server (Forbidden): serviceaccounts is forbidden: User "%s" cannot list resource '
                                  '"serviceaccounts" in API group "" in the namespace "default": RBAC: role.rbac.authorization.k8s.io '
                                  '"missing" not found' % SA)


@needs_kubectl
def test_auth_can_i_and_access_reviews(cluster):
    config = sa_kubeconfig(cluster)

    def can_i(*argv):
        out = cluster.kubectl("auth", "can-i", *argv, kubeconfig=config)
        return out.returncode, out.stdout.strip()

    assert can_i("list", "pods", "-A") == (0, "yes")
    assert can_i("*", "*") == (1, "no"), "'*' is matched only by a rule's '*'"
    assert can_i("create", "pods", "-n", "default") == (0, "yes")
    assert can_i("create", "pods", "-n", "kube-system") == (1, "no")
    assert can_i("create", "pods", "--subresource=eviction", "-n", "kube-system") == (0, "yes")
    assert can_i("patch", "daemonsets/kured", "-n", "kube-system") == (0, "yes")
    assert can_i("patch", "daemonsets/other", "-n", "kube-system") == (1, "no")
    assert can_i("patch", "daemonsets", "-n", "kube-system") == (1, "no"), "a rule with resourceNames needs a name"
    assert can_i("get", "daemonsets/other", "-n", "kube-system") == (0, "yes")
    out = cluster.kubectl("auth", "can-i", "--list", "-n", "kube-system", kubeconfig=config)
    assert out.returncode == 0 and "daemonsets.apps" in out.stdout and "[kured]" in out.stdout
    reviews = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {"resourceAttributes": attributes}}
        for attributes in ({"verb": "list", "resource": "nodes"}, {"verb": "delete", "resource": "pods", "namespace": "default", "name": "p1"},
                           {"verb": "delete", "resource": "nodes", "name": "n1"})] + [
        {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {"nonResourceAttributes": {"verb": "get",
                                                                                                                        "path": "/version"}}}]}
    out = cluster.kubectl("create", "--validate=false", "-f", "-", "-o", "json", kubeconfig=config, stdin=json.dumps(reviews))
    assert out.returncode == 0, out.stderr
    answers = documents(out.stdout)
    assert [a["status"]["allowed"] for a in answers] == [True, True, False, True]
    assert answers[0]["status"]["reason"] == ('RBAC: allowed by ClusterRoleBinding "rke2-numa" of ClusterRole "rke2-numa" to ServiceAccount '
                                              '"rke2-numa/rke2-numa-system"')
    assert answers[1]["status"]["reason"] == ('RBAC: allowed by RoleBinding "probes/default" of Role "probes" to ServiceAccount '
                                              '"rke2-numa/rke2-numa-system"')
    assert answers[2]["status"] == {"allowed": False}
    assert answers[3]["status"]["reason"].startswith('RBAC: allowed by ClusterRoleBinding "system:discovery"')
    out = cluster.kubectl("create", "-f", "-", "-o", "json", kubeconfig=config, stdin=json.dumps(reviews))
    assert out.returncode == 1, "the default validation of a List needs the OpenAPI documents"
    if kubectl_minor() >= 30:
        assert "error validating data: the server could not find the requested resource" in out.stderr
    code, status = cluster.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {"spec": {}})
    assert (code, status["message"]) == (422, 'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid '
                                              'value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified')


# ---------------------------------------------------------------- the pieces

def _attributes(method, path, query=None):
    attrs = kubeapi.request_attributes(kubeapi.ANONYMOUS, method, path, query or {})
    return (attrs.verb, attrs.resource_request, attrs.group, attrs.namespace, attrs.resource, attrs.subresource, attrs.name)


@pytest.mark.parametrize("method, path, query, expected", [
    ("GET", "/api/v1/nodes", {}, ("list", True, "", "", "nodes", "", "")),
    ("GET", "/api/v1/nodes", {"watch": "true", "fieldSelector": "metadata.name=n1"}, ("watch", True, "", "", "nodes", "", "n1")),
    ("GET", "/api/v1/nodes", {"watch": "false", "fieldSelector": "metadata.name==n1,spec.unschedulable=true"},
     ("list", True, "", "", "nodes", "", "n1")),
    ("GET", "/api/v1/nodes", {"fieldSelector": "metadata.name!=n1"}, ("list", True, "", "", "nodes", "", "")),
    ("GET", "/api/v1/nodes/n1/status", {}, ("get", True, "", "", "nodes", "status", "n1")),
    ("POST", "/api/v1/namespaces/default/pods/p1/eviction", {}, ("create", True, "", "default", "pods", "eviction", "p1")),
    ("GET", "/api/v1/namespaces/default/pods/p1/log", {}, ("get", True, "", "default", "pods", "log", "p1")),
    ("GET", "/api/v1/namespaces/ns1", {}, ("get", True, "", "ns1", "namespaces", "", "ns1")),
    ("DELETE", "/apis/apps/v1/namespaces/kube-system/daemonsets", {}, ("deletecollection", True, "apps", "kube-system", "daemonsets", "", "")),
    ("PATCH", "/apis/apps/v1/namespaces/kube-system/daemonsets/kured", {}, ("patch", True, "apps", "kube-system", "daemonsets", "", "kured")),
    ("PUT", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/b", {}, ("update", True, "policy", "default", "poddisruptionbudgets", "",
                                                                              "b")),
    ("GET", "/apis/apps/v1", {}, ("get", False, "", "", "", "", "")),
    ("POST", "/version", {}, ("post", False, "", "", "", "", "")),
])
def test_request_attributes(method, path, query, expected):
    assert _attributes(method, path, query) == expected


@pytest.mark.parametrize("rule, method, path, allowed", [
    ({"verbs": ["create"], "apiGroups": [""], "resources": ["pods/eviction"]}, "POST", "/api/v1/namespaces/d/pods/p/eviction", True),
    ({"verbs": ["create"], "apiGroups": [""], "resources": ["*/eviction"]}, "POST", "/api/v1/namespaces/d/pods/p/eviction", True),
    ({"verbs": ["create"], "apiGroups": ["policy"], "resources": ["pods/eviction"]}, "POST", "/api/v1/namespaces/d/pods/p/eviction", False),
    ({"verbs": ["create"], "apiGroups": [""], "resources": ["pods"]}, "POST", "/api/v1/namespaces/d/pods/p/eviction", False),
    ({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, "DELETE", "/apis/apps/v1/namespaces/d/daemonsets/x", True),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p"]}, "GET", "/api/v1/namespaces/d/pods", False),
    ({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p"]}, "GET", "/api/v1/namespaces/d/pods/p", True),
    ({"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}, "GET", "/apis/apps/v1", True),
    ({"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}, "GET", "/apis", False),
    ({"verbs": ["get"], "nonResourceURLs": ["/version"]}, "GET", "/version/", False),
])
def test_rule_matching(rule, method, path, allowed):
    attrs = kubeapi.request_attributes(kubeapi.ANONYMOUS, method, path, {})
    assert kubeapi.rule_allows(attrs, rule) is allowed
    star = kubeapi.Attributes(kubeapi.ANONYMOUS, "*", "", True, "", "*", "", "*")
    assert kubeapi.rule_allows(star, {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}) is False


def test_the_self_signed_certificate_is_valid_der():
    certificate, key = kubeapi.self_signed_certificate()
    der = ssl.PEM_cert_to_DER_cert(certificate)
    assert der[0] == 0x30 and key.startswith("-----BEGIN EC PRIVATE KEY-----\n")
