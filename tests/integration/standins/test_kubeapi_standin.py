# -*- coding: utf-8 -*-
"""The kubeapi stand-in: the real kubectl (cordon, uncordon, drain, wait, get, label, annotate) against it, and its HTTP API.

KUBEAPI_STANDIN_KUBECTL picks another kubectl binary (e.g. Debian 12's kubernetes-client 1.20) than the one on PATH,
KUBEAPI_STANDIN_PYTHON another interpreter for the server (e.g. python3.8, the oldest it supports).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import threading
import time

import pytest

from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import ADMIN_TOKEN, KUBEAPI_PATH, KUBECTL, Cluster, needs_kubectl, rke2

PLAN = "rke2-numa.maitred.io/plan"
READY = 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'
_VERSIONS = {}
ADMIN = {"Authorization": "Bearer " + ADMIN_TOKEN}


def kubectl_minor():
    """The kubectl client's minor version (the gcloud dispatcher says 32+)."""
    if KUBECTL not in _VERSIONS:
        out = subprocess.run([KUBECTL, "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=30, check=False)
        _VERSIONS[KUBECTL] = int(re.match(r"\d+", json.loads(out.stdout)["clientVersion"]["minor"]).group())
    return _VERSIONS[KUBECTL]


@pytest.fixture
def cluster(tmp_path):
    """Nodes n1 (Ready) and n2 (not Ready), each with the pods the rke2 stand-in seeds: a canal DaemonSet pod, the
    kube-proxy mirror pod and a ReplicaSet pod with an emptyDir."""
    api = Cluster(tmp_path)
    api.add_node("n1", ready=True)
    api.add_node("n2", ready=False)
    yield api
    assert api.stop() == 0, "SIGTERM stops the server cleanly"
    assert "Traceback" not in (api.tmp / "kubeapi.err").read_text()
    assert [c for c in api.calls() if c["code"] >= 500] == []


# ---------------------------------------------------------------- the HTTP API

def test_discovery(cluster):
    code, version = cluster.request("GET", "/version")
    assert code == 200 and version["gitVersion"].startswith("v1.") and version["major"] == "1"
    assert cluster.request("GET", "/api")[1]["versions"] == ["v1"]
    groups = cluster.request("GET", "/apis")[1]
    assert groups["kind"] == "APIGroupList"
    assert [(g["name"], g["preferredVersion"]["groupVersion"]) for g in groups["groups"]] == [
        ("admissionregistration.k8s.io", "admissionregistration.k8s.io/v1"), ("apps", "apps/v1"),
        ("authentication.k8s.io", "authentication.k8s.io/v1"), ("authorization.k8s.io", "authorization.k8s.io/v1"),
        ("coordination.k8s.io", "coordination.k8s.io/v1"), ("policy", "policy/v1"), ("rbac.authorization.k8s.io", "rbac.authorization.k8s.io/v1")]
    core = {r["name"]: r for r in cluster.request("GET", "/api/v1")[1]["resources"]}
    assert (core["nodes"]["kind"], core["nodes"]["namespaced"], core["nodes"]["shortNames"]) == ("Node", False, ["no"])
    assert {"get", "list", "watch", "patch"} <= set(core["nodes"]["verbs"])
    assert (core["pods"]["namespaced"], core["pods"]["shortNames"]) == (True, ["po"])
    assert (core["pods/eviction"]["group"], core["pods/eviction"]["version"], core["pods/eviction"]["kind"]) == ("policy", "v1", "Eviction")
    assert "nodes/status" in core and core["namespaces"]["shortNames"] == ["ns"]
    assert set(core["namespaces"]["verbs"]) == {"create", "delete", "get", "list", "patch", "update", "watch"}
    assert (core["serviceaccounts"]["shortNames"], core["serviceaccounts/token"]["kind"], core["serviceaccounts/token"]["verbs"]) == (
        ["sa"], "TokenRequest", ["create"])
    rbac = {r["name"]: r for r in cluster.request("GET", "/apis/rbac.authorization.k8s.io/v1")[1]["resources"]}
    assert sorted(rbac) == ["clusterrolebindings", "clusterroles", "rolebindings", "roles"] and rbac["roles"]["namespaced"] is True
    reviews = cluster.request("GET", "/apis/authorization.k8s.io/v1")[1]["resources"]
    assert [(r["name"], r["verbs"]) for r in reviews] == [("selfsubjectaccessreviews", ["create"]), ("selfsubjectrulesreviews", ["create"]),
                                                          ("subjectaccessreviews", ["create"])]
    admission = cluster.request("GET", "/apis/admissionregistration.k8s.io/v1")[1]["resources"]
    assert [(r["name"], r["kind"], r["namespaced"]) for r in admission] == [
        ("validatingadmissionpolicies", "ValidatingAdmissionPolicy", False),
        ("validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding", False)]
    assert (core["configmaps"]["shortNames"], core["configmaps"]["namespaced"]) == (["cm"], True)
    apps = {r["name"]: r for r in cluster.request("GET", "/apis/apps/v1")[1]["resources"]}
    assert apps["daemonsets"]["shortNames"] == ["ds"] and apps["daemonsets"]["kind"] == "DaemonSet"
    policy = {r["name"]: r for r in cluster.request("GET", "/apis/policy/v1")[1]["resources"]}
    assert policy["poddisruptionbudgets"]["shortNames"] == ["pdb"]
    for path in ("/api/v1/foos", "/apis/batch/v1", "/openapi/v2", "/api/v1/namespaces/default/nodes/n1"):
        code, status = cluster.request("GET", path)
        assert code == 404, path
        assert (status["kind"], status["apiVersion"], status["status"], status["reason"]) == ("Status", "v1", "Failure", "NotFound")
    code, status = cluster.request("GET", "/api/v1/nodes/missing")
    assert (code, status["message"], status["details"]) == (404, 'nodes "missing" not found', {"name": "missing", "kind": "nodes"})
    code, status = cluster.request("GET", "/apis/apps/v1/namespaces/kube-system/daemonsets/nope")
    assert status["message"] == 'daemonsets.apps "nope" not found'
    assert cluster.request("PUT", "/api/v1/nodes/n1", {})[1]["reason"] == "MethodNotAllowed"
    assert cluster.request("GET", "/api/v1/pods?fieldSelector=spec.foo%3Dx")[0] == 400


def test_node_and_pod_objects(cluster):
    code, node = cluster.request("GET", "/api/v1/nodes/n1")
    assert code == 200 and node["kind"] == "Node" and node["metadata"]["uid"]
    assert "unschedulable" not in node["spec"], "the API server leaves false out"
    assert [(c["type"], c["status"]) for c in node["status"]["conditions"] if c["type"] == "Ready"] == [("Ready", "True")]
    assert node["status"]["nodeInfo"]["kubeletVersion"] == rke2.KUBELET_VERSION
    down = cluster.request("GET", "/api/v1/nodes/n2")[1]
    assert {c["status"] for c in down["status"]["conditions"]} == {"Unknown"}
    assert [t["key"] for t in down["spec"]["taints"]] == ["node.kubernetes.io/unreachable"] * 2
    listing = cluster.request("GET", "/api/v1/nodes?labelSelector=kubernetes.io%2Fos%21%3Dwindows&fieldSelector=metadata.name%3Dn2")[1]
    assert listing["kind"] == "NodeList" and [i["metadata"]["name"] for i in listing["items"]] == ["n2"]
    assert int(listing["metadata"]["resourceVersion"]) >= int(listing["items"][0]["metadata"]["resourceVersion"])
    pods = cluster.request("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1")[1]
    byname = {p["metadata"]["name"]: p for p in pods["items"]}
    assert sorted(byname) == ["kube-proxy-n1", "rke2-canal-n1", "sample-workload-n1"]
    canal = byname["rke2-canal-n1"]["metadata"]["ownerReferences"]
    assert [(o["kind"], o["name"], o["controller"]) for o in canal] == [("DaemonSet", "rke2-canal", True)]
    assert "kubernetes.io/config.mirror" in byname["kube-proxy-n1"]["metadata"]["annotations"]
    assert byname["sample-workload-n1"]["spec"]["volumes"] == [{"name": "scratch", "emptyDir": {}}]
    assert {p["spec"]["nodeName"] for p in pods["items"]} == {"n1"} and {p["status"]["phase"] for p in pods["items"]} == {"Running"}
    daemonset = cluster.request("GET", "/apis/apps/v1/namespaces/kube-system/daemonsets/rke2-canal")[1]
    assert daemonset["metadata"]["uid"] == canal[0]["uid"] and daemonset["status"]["desiredNumberScheduled"] == 2
    table = cluster.request("GET", "/api/v1/nodes", accept="application/json;as=Table;v=v1;g=meta.k8s.io,application/json")[1]
    assert table["kind"] == "Table" and [c["name"] for c in table["columnDefinitions"] if c["priority"] == 0] == \
        ["Name", "Status", "Roles", "Age", "Version"]
    assert [r["cells"][:2] for r in table["rows"]] == [["n1", "Ready"], ["n2", "NotReady"]]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_patch_forms_and_their_errors(cluster):
    merge, strategic, jsonp = "application/merge-patch+json", "application/strategic-merge-patch+json", "application/json-patch+json"
    code, node = cluster.request("PATCH", "/api/v1/nodes/n1", {"metadata": {"labels": {PLAN: "p1"}}}, merge)
    assert code == 200 and node["metadata"]["labels"][PLAN] == "p1"
    code, node = cluster.request("PATCH", "/api/v1/nodes/n1", [{"op": "add", "path": "/metadata/annotations", "value": {"a.io/x": "1"}}], jsonp)
    assert code == 200 and node["metadata"]["annotations"] == {"a.io/x": "1"}
    code, node = cluster.request("PATCH", "/api/v1/nodes/n1", {"spec": {"unschedulable": True}}, strategic)
    assert code == 200 and node["spec"]["unschedulable"] is True
    assert {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}.items() <= node["spec"]["taints"][0].items()
    stored = cluster.node("n1")
    assert (stored["labels"][PLAN], stored["annotations"], stored["unschedulable"]) == ("p1", {"a.io/x": "1"}, True)
    assert stored["taints"] == [], "the unschedulable taint is the controller's, not stored"
    old = node["metadata"]["resourceVersion"]
    node = cluster.request("PATCH", "/api/v1/nodes/n1", {"metadata": {"annotations": {"a.io/x": None}}}, merge)[1]
    assert "annotations" not in node["metadata"] and int(node["metadata"]["resourceVersion"]) > int(old)
    code, status = cluster.request("PATCH", "/api/v1/nodes/n1", {"metadata": {"resourceVersion": old, "labels": {"x": "y"}}}, merge)
    assert (code, status["reason"]) == (409, "Conflict")
    code, status = cluster.request("PATCH", "/api/v1/nodes/n1", {"metadata": {"labels": {PLAN: "not valid!"}}}, merge)
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["message"].startswith('Node "n1" is invalid: metadata.labels: Invalid value: "not valid!": a valid label must be')
    code, status = cluster.request("PATCH", "/api/v1/nodes/n1", {"metadata": {"labels": {PLAN: "x" * 64}}}, merge)
    assert code == 422 and "must be no more than 63 characters" in status["message"]
    code, status = cluster.request("PATCH", "/api/v1/nodes/n1", {"spec": {"unschedulable": False}}, "application/json")
    assert (code, status["reason"]) == (415, "UnsupportedMediaType")
    assert cluster.request("PATCH", "/api/v1/nodes/nope", {}, merge)[0] == 404
    code, node = cluster.request("PATCH", "/api/v1/nodes/n1?dryRun=All", {"spec": {"unschedulable": None}}, strategic)
    assert code == 200 and "unschedulable" not in node["spec"] and cluster.node("n1")["unschedulable"] is True
    assert cluster.node("n1")["labels"][PLAN] == "p1", "refused patches change nothing"
    changes = [(s.get("unschedulable"), s.get("dryRun", False)) for s in cluster.summaries("patch") if "unschedulable" in s]
    assert changes == [(True, False), (False, True)]


def test_eviction_and_delete(cluster):
    with cluster.edit("n1") as node:
        node["pods"][2]["pdb"] = "workload-pdb"
        node["pods"].append({"namespace": "default", "name": "slow-1", "owner": "ReplicaSet", "deleteSeconds": 1.5})
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "sample-workload-n1", "namespace": "default"}}
    code, status = cluster.request("POST", "/api/v1/namespaces/default/pods/sample-workload-n1/eviction", eviction)
    assert (code, status["reason"], status["message"]) == (429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.")
    assert status["details"]["causes"] == [{"reason": "DisruptionBudget",
                                            "message": "The disruption budget workload-pdb needs 1 healthy pods and has 1 currently"}]
    pdb = cluster.request("GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets")[1]
    assert [(p["metadata"]["name"], p["status"]["disruptionsAllowed"]) for p in pdb["items"]] == [("workload-pdb", 0)]
    code, status = cluster.request("POST", "/api/v1/namespaces/default/pods/slow-1/eviction", dict(eviction, metadata={"name": "other"}))
    assert code == 400
    assert cluster.request("POST", "/api/v1/namespaces/default/pods/slow-1/eviction", dict(eviction, metadata={"name": "slow-1"}))[0] == 201
    code, pod = cluster.request("GET", "/api/v1/namespaces/default/pods/slow-1")
    assert code == 200 and pod["metadata"]["deletionTimestamp"], "the pod lingers deleteSeconds"
    deadline = time.time() + 10
    while cluster.request("GET", "/api/v1/namespaces/default/pods/slow-1")[0] == 200 and time.time() < deadline:
        time.sleep(0.1)
    code, status = cluster.request("GET", "/api/v1/namespaces/default/pods/slow-1")
    assert (code, status["message"]) == (404, 'pods "slow-1" not found')
    assert cluster.request("POST", "/api/v1/namespaces/default/pods/slow-1/eviction", dict(eviction, metadata={"name": "slow-1"}))[0] == 404
    code, pod = cluster.request("DELETE", "/api/v1/namespaces/kube-system/pods/rke2-canal-n1", {"gracePeriodSeconds": 0})
    assert code == 200 and pod["metadata"]["name"] == "rke2-canal-n1"
    assert cluster.request("DELETE", "/api/v1/namespaces/kube-system/pods/rke2-canal-n1")[0] == 404
    assert [p["name"] for p in cluster.node("n1")["pods"]] == ["kube-proxy-n1", "sample-workload-n1"]
    assert [e["pods"] for e in cluster.node("n1")["evictions"]] == [["default/slow-1"], ["kube-system/rke2-canal-n1"]]
    assert [(s["pod"], s["code"]) for s in cluster.summaries("evict")] == [
        ("default/sample-workload-n1", 429), ("default/slow-1", 400), ("default/slow-1", 201), ("default/slow-1", 404)]


def _read_event(response):
    line = response.fp.readline()  # one chunk-size line, then the event
    while line.strip() == b"":
        line = response.fp.readline()
    size = int(line.strip(), 16)
    data = response.fp.read(size)
    response.fp.readline()
    return json.loads(data)


def test_watch_streams_node_changes(cluster):
    connection = http.client.HTTPConnection("127.0.0.1", cluster.port, timeout=10)
    connection.request("GET", "/api/v1/nodes?watch=true&fieldSelector=metadata.name%3Dn2", headers=ADMIN)
    response = connection.getresponse()
    assert response.status == 200 and response.getheader("Transfer-Encoding") == "chunked"
    event = _read_event(response)
    assert (event["type"], event["object"]["kind"], event["object"]["metadata"]["name"]) == ("ADDED", "Node", "n2")
    first = int(event["object"]["metadata"]["resourceVersion"])
    agent = rke2.Agent(os.path.join(cluster.state, "config.yaml"))
    agent.state_dir = agent.cluster_dir = cluster.state  # RKE2_STANDIN_CLUSTER_DIR: where nodes/ go
    agent.node_name, agent.config = "n2", {}
    agent.set_node(ready=True)
    event = _read_event(response)
    assert event["type"] == "MODIFIED" and int(event["object"]["metadata"]["resourceVersion"]) > first
    assert [c["status"] for c in event["object"]["status"]["conditions"] if c["type"] == "Ready"] == ["True"]
    assert cluster.request("PATCH", "/api/v1/nodes/n1", {"spec": {"unschedulable": True}}, "application/merge-patch+json")[0] == 200
    cluster.request("PATCH", "/api/v1/nodes/n2", {"spec": {"unschedulable": True}}, "application/merge-patch+json")
    event = _read_event(response)
    assert event["type"] == "MODIFIED" and event["object"]["spec"]["unschedulable"] is True, "n1's change is filtered out"
    # From a resourceVersion: only what changed since.
    version = event["object"]["metadata"]["resourceVersion"]
    cluster.request("PATCH", "/api/v1/nodes/n1", {"metadata": {"labels": {PLAN: "x"}}}, "application/merge-patch+json")
    later = http.client.HTTPConnection("127.0.0.1", cluster.port, timeout=10)
    later.request("GET", "/api/v1/nodes?watch=1&resourceVersion=%s&timeoutSeconds=1" % version, headers=ADMIN)
    stream = later.getresponse()
    event = _read_event(stream)
    assert (event["type"], event["object"]["metadata"]["name"]) == ("MODIFIED", "n1"), "n1 changed after that version, n2 did not"
    assert stream.fp.readline().strip() == b"0", "timeoutSeconds ends the stream"
    later.close()
    started = time.time()
    assert cluster.stop() == 0 and time.time() - started < 5, "SIGTERM stops the server with a watch open"
    connection.close()


# ---------------------------------------------------------------- the real kubectl

@needs_kubectl
def test_get_node_with_jsonpath(cluster):
    assert (cluster.kubectl("get", "node", "n1", "-o", "jsonpath={.spec.unschedulable}").stdout) == ""
    assert cluster.kubectl("get", "node", "n1", "-o", READY).stdout == "True"
    assert cluster.kubectl("get", "node", "n2", "-o", READY).stdout == "Unknown"
    with cluster.edit("n1") as node:
        node.update(ready=False, notReadySince=time.time(), staleReadySeconds=30)
    assert cluster.kubectl("get", "node", "n1", "-o", READY).stdout == "True", "the node controller has not noticed yet"
    with cluster.edit("n1") as node:
        node["notReadySince"] = time.time() - 31
    assert cluster.kubectl("get", "node/n1", "-o", READY).stdout == "Unknown"
    out = cluster.kubectl("get", "nodes", "-o", "jsonpath={.items[*].metadata.name}")
    assert (out.returncode, out.stdout) == (0, "n1 n2")
    out = cluster.kubectl("get", "node", "missing")
    assert (out.returncode, out.stdout, out.stderr.strip()) == (1, "", 'Error from server (NotFound): nodes "missing" not found')
    assert not os.path.exists(os.path.join(cluster.state, "nodes", "missing.json"))
    assert not os.path.exists(os.path.join(cluster.state, "nodes", ".missing.lock"))


@needs_kubectl
def test_cordon_and_uncordon(cluster):
    out = cluster.kubectl("cordon", "n1")
    assert (out.returncode, out.stdout) == (0, "node/n1 cordoned\n")
    assert cluster.node("n1")["unschedulable"] is True
    assert cluster.kubectl("cordon", "n1").stdout == "node/n1 already cordoned\n"
    assert cluster.kubectl("get", "node", "n1", "-o", "jsonpath={.spec.unschedulable}").stdout == "true"
    node = json.loads(cluster.kubectl("get", "node", "n1", "-o", "json").stdout)
    assert [t["key"] for t in node["spec"]["taints"]] == ["node.kubernetes.io/unschedulable"]
    table = cluster.kubectl("get", "nodes").stdout.splitlines()
    assert table[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert table[1].split()[:3] == ["n1", "Ready,SchedulingDisabled", "<none>"]
    assert table[2].split()[:2] == ["n2", "NotReady"]
    out = cluster.kubectl("uncordon", "n1")
    assert (out.returncode, out.stdout) == (0, "node/n1 uncordoned\n")
    assert cluster.kubectl("uncordon", "n1").stdout == "node/n1 already uncordoned\n"
    assert cluster.node("n1")["unschedulable"] is False and cluster.node("n1")["ready"] is True
    patches = cluster.summaries("patch")
    assert [(p["node"], p["unschedulable"], p["code"]) for p in patches] == [("n1", True, 200), ("n1", False, 200)], \
        "kubectl patches only when the node is not already so"


@needs_kubectl
def test_label_and_annotate(cluster):
    out = cluster.kubectl("label", "node", "n1", PLAN + "=abc", "--overwrite")
    assert (out.returncode, out.stdout) == (0, "node/n1 labeled\n")
    out = cluster.kubectl("annotate", "node", "n1", "rke2-numa.maitred.io/failed=reason", "--overwrite")
    assert out.returncode == 0 and out.stdout in ("node/n1 annotated\n", "node/n1 annotate\n"), "kubectl 1.27 says annotate"
    node = cluster.node("n1")
    assert node["labels"][PLAN] == "abc" and node["annotations"] == {"rke2-numa.maitred.io/failed": "reason"}
    table = cluster.kubectl("get", "nodes", "-L", PLAN).stdout.splitlines()
    assert table[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "PLAN"]
    assert table[1].split()[0] == "n1" and table[1].split()[-1] == "abc"
    assert table[2].split()[-1] != "abc"
    assert cluster.kubectl("label", "node", "n1", PLAN + "=def", "--overwrite").returncode == 0
    assert cluster.kubectl("get", "node", "n1", "-o", "jsonpath={.metadata.labels.rke2-numa\\.maitred\\.io/plan}").stdout == "def"
    assert cluster.kubectl("annotate", "node", "n1", "rke2-numa.maitred.io/failed-").returncode == 0
    out = cluster.kubectl("label", "node", "n1", PLAN + "-")
    assert out.returncode == 0 and out.stdout in ("node/n1 unlabeled\n", "node/n1 labeled\n"), "kubectl < 1.28 says labeled"
    node = cluster.node("n1")
    assert PLAN not in node["labels"] and node["annotations"] == {}
    assert [s.get("labels") or s.get("annotations") for s in cluster.summaries("patch")] == [
        {PLAN: "abc"}, {"rke2-numa.maitred.io/failed": "reason"}, {PLAN: "def"}, {"rke2-numa.maitred.io/failed": None}, {PLAN: None}]


DRAIN = ("--ignore-daemonsets", "--delete-emptydir-data")


@needs_kubectl
def test_drain_evicts_the_workload_and_keeps_daemonset_and_mirror_pods(cluster):
    cluster.add_node("n3", ready=True)
    if kubectl_minor() >= 26:  # older ones first check the server's OpenAPI v2 (protobuf) for dryRun: not served
        out = cluster.kubectl("drain", "n1", *DRAIN, "--dry-run=server")
        assert out.returncode == 0 and "evicting pod default/sample-workload-n1 (server dry run)" in out.stdout, out.stderr
        assert (cluster.node("n1")["unschedulable"], len(cluster.node("n1")["pods"])) == (False, 3), "a server dry run changes nothing"
        assert [(s["pod"], s["code"], s["dryRun"]) for s in cluster.summaries("evict")] == [("default/sample-workload-n1", 201, True)]
    for name in ("n1", "n3"):
        out = cluster.kubectl("drain", name, *DRAIN, "--timeout=20s")
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        assert lines[0] == "node/%s cordoned" % name
        assert "evicting pod default/sample-workload-%s" % name in lines and "pod/sample-workload-%s evicted" % name in lines
        assert lines[-1] in ("node/%s drained" % name, "node/%s evicted" % name), "kubectl 1.20 says evicted"
        assert "ignoring DaemonSet-managed Pods: kube-system/rke2-canal-%s" % name in out.stderr
        node = cluster.node(name)
        assert node["unschedulable"] is True
        assert sorted(p["name"] for p in node["pods"]) == ["kube-proxy-%s" % name, "rke2-canal-%s" % name]
        assert [e["pods"] for e in node["evictions"]] == [["default/sample-workload-%s" % name]]
    assert cluster.calls(path="/apis/apps/v1/namespaces/kube-system/daemonsets/rke2-canal", code=200), \
        "kubectl checks that the DaemonSet exists"
    assert [(s["node"], s["pod"], s["code"]) for s in cluster.summaries("evict") if not s.get("dryRun")] == [
        ("n1", "default/sample-workload-n1", 201), ("n3", "default/sample-workload-n3", 201)], "the call log keeps the order"
    out = cluster.kubectl("drain", "n1", *DRAIN, "--timeout=20s")
    assert out.returncode == 0 and out.stdout.splitlines()[0] == "node/n1 already cordoned"
    assert len([s for s in cluster.summaries("evict") if not s.get("dryRun")]) == 2


@needs_kubectl
def test_drain_without_delete_emptydir_data_refuses(cluster):
    out = cluster.kubectl("drain", "n1", "--ignore-daemonsets", "--timeout=20s")
    assert out.returncode != 0
    assert out.stdout.splitlines()[0] == "node/n1 cordoned"
    assert "cannot delete Pods with local storage (use --delete-emptydir-data to override): default/sample-workload-n1" in out.stderr
    node = cluster.node("n1")
    assert node["unschedulable"] is True, "kubectl cordons before it looks at the pods"
    assert len(node["pods"]) == 3 and node["evictions"] == [] and cluster.summaries("evict") == []


@needs_kubectl
def test_drain_retries_a_disruption_budget_until_its_timeout(cluster):
    with cluster.edit("n1") as node:
        node["pods"][2]["pdb"] = "workload-pdb"
    started = time.time()
    out = cluster.kubectl("drain", "n1", *DRAIN, "--timeout=6s")
    assert out.returncode != 0 and time.time() - started >= 6
    assert 'error when evicting pods/"sample-workload-n1" -n "default" (will retry after 5s): ' \
           "Cannot evict pod as it would violate the pod's disruption budget." in out.stderr
    assert "global timeout reached: 6s" in out.stderr and "sample-workload-n1" in out.stderr.splitlines()[-1]
    refused = cluster.summaries("evict")
    assert len(refused) >= 2 and {(s["pod"], s["code"], s["pdb"]) for s in refused} == {("default/sample-workload-n1", 429, "workload-pdb")}
    assert "sample-workload-n1" in [p["name"] for p in cluster.node("n1")["pods"]]


@needs_kubectl
def test_drain_goes_on_once_the_budget_allows_it(cluster):
    with cluster.edit("n1") as node:
        node["pods"][2]["pdb"] = "workload-pdb"

    def allow():
        deadline = time.time() + 10
        while not cluster.summaries("evict") and time.time() < deadline:
            time.sleep(0.05)
        with cluster.edit("n1") as node:
            del node["pods"][2]["pdb"]

    thread = threading.Thread(target=allow)
    thread.start()
    out = cluster.kubectl("drain", "n1", *DRAIN, "--timeout=20s")
    thread.join()
    assert out.returncode == 0, out.stderr
    assert "pod/sample-workload-n1 evicted" in out.stdout
    assert [s["code"] for s in cluster.summaries("evict")] == [429, 201]


@needs_kubectl
def test_drain_waits_while_an_evicted_pod_terminates(cluster):
    with cluster.edit("n1") as node:
        node["pods"][2]["deleteSeconds"] = 1.5
    started = time.time()
    out = cluster.kubectl("drain", "n1", *DRAIN, "--timeout=20s")
    assert out.returncode == 0, out.stderr
    assert time.time() - started >= 1.4
    polls = [c["code"] for c in cluster.calls(method="GET", path="/api/v1/namespaces/default/pods/sample-workload-n1")]
    assert polls[0] == 200 and polls[-1] == 404, "kubectl polls the pod until it is gone"
    assert [p["name"] for p in cluster.node("n1")["pods"]] == ["rke2-canal-n1", "kube-proxy-n1"]


@needs_kubectl
def test_wait_for_ready(cluster):
    out = cluster.kubectl("wait", "--for=condition=Ready", "node/n1", "--timeout=5s")
    assert (out.returncode, out.stdout) == (0, "node/n1 condition met\n")
    agent = rke2.Agent(os.path.join(cluster.state, "config.yaml"))
    agent.state_dir = agent.cluster_dir = cluster.state  # RKE2_STANDIN_CLUSTER_DIR: where nodes/ go
    agent.node_name, agent.config = "n2", {}

    def become_ready():
        time.sleep(1)
        agent.set_node(ready=True)

    thread = threading.Thread(target=become_ready)
    thread.start()
    started = time.time()
    out = cluster.kubectl("wait", "--for=condition=Ready", "node/n2", "--timeout=5s")
    thread.join()
    assert (out.returncode, out.stdout) == (0, "node/n2 condition met\n"), out.stderr
    assert time.time() - started > 0.9
    assert cluster.calls(path="/api/v1/nodes", watch=True), "kubectl waits with a watch"


@needs_kubectl
def test_wait_times_out(cluster):
    started = time.time()
    out = cluster.kubectl("wait", "--for=condition=Ready", "node/n2", "--timeout=2s")
    assert out.returncode == 1 and out.stderr.strip().endswith("timed out waiting for the condition on nodes/n2")
    assert time.time() - started > 1.9
    out = cluster.kubectl("wait", "--for=condition=Ready", "node/missing", "--timeout=2s")
    assert out.returncode == 1 and 'nodes "missing" not found' in out.stderr


@needs_kubectl
def test_get_pods_daemonsets_and_budgets(cluster):
    out = cluster.kubectl("get", "pods", "-A", "--field-selector", "spec.nodeName=n1", "-o", "name")
    assert out.stdout.split() == ["pod/sample-workload-n1", "pod/kube-proxy-n1", "pod/rke2-canal-n1"]
    table = cluster.kubectl("get", "po", "-n", "default").stdout.splitlines()
    assert table[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"] and table[1].split()[:3] == ["sample-workload-n1", "1/1", "Running"]
    assert cluster.kubectl("get", "ds", "-n", "kube-system", "rke2-canal", "-o", "jsonpath={.status.desiredNumberScheduled}").stdout == "2"
    out = cluster.kubectl("get", "pdb", "-A")
    assert out.returncode == 0 and "No resources found" in out.stderr
    lock = "jsonpath={.metadata.annotations.weave\\.works/kured-node-lock}"
    out = cluster.kubectl("get", "daemonset", "-n", "kube-system", "kured", "-o", lock, "--ignore-not-found")
    assert (out.returncode, out.stdout) == (0, "")
    out = cluster.kubectl("get", "daemonset", "-n", "kube-system", "kured")
    assert out.returncode == 1 and 'daemonsets.apps "kured" not found' in out.stderr, "kubectl 1.30+ asks whether the namespace exists"
    with open(os.path.join(cluster.state, "daemonsets.json"), "w") as handle:
        json.dump([{"namespace": "kube-system", "name": "kured", "annotations": {"weave.works/kured-node-lock": '{"nodeID":"n1"}'}}], handle)
    out = cluster.kubectl("get", "daemonset", "-n", "kube-system", "kured", "-o", lock, "--ignore-not-found")
    assert (out.returncode, json.loads(out.stdout)) == (0, {"nodeID": "n1"}), "a DaemonSet declared in daemonsets.json, with no pod"
    # kured's lock is written with the resourceVersion read: a stale one is 409 Conflict, as the real server answers
    version = cluster.kubectl("get", "daemonset", "-n", "kube-system", "kured", "-o", "jsonpath={.metadata.resourceVersion}").stdout
    key = "weave.works/kured-node-lock"
    out = cluster.kubectl("annotate", "--overwrite", "-n", "kube-system", "--resource-version=" + version, "daemonset/kured", key + '={"nodeID":"n2"}')
    assert out.returncode == 0 and "daemonset.apps/kured annotated" in out.stdout, out.stderr
    out = cluster.kubectl("annotate", "--overwrite", "-n", "kube-system", "--resource-version=" + version, "daemonset/kured", key + "-")
    assert out.returncode == 1 and ('Error from server (Conflict): Operation cannot be fulfilled on daemonsets.apps "kured": the object '
                                    "has been modified") in out.stderr
    assert json.loads(cluster.kubectl("get", "daemonset", "-n", "kube-system", "kured", "-o", lock).stdout) == {"nodeID": "n2"}
    assert cluster.kubectl("annotate", "-n", "kube-system", "daemonset/kured", key + "-").returncode == 0
    with open(os.path.join(cluster.state, "daemonsets.json")) as handle:
        assert "annotations" not in json.load(handle)[0]
    out = cluster.kubectl("annotate", "-n", "kube-system", "daemonset/rke2-canal", "x=1")
    assert out.returncode == 1 and "(MethodNotAllowed)" in out.stderr, ("a DaemonSet the pods imply is read-only", out.stderr)


def test_the_script_runs_through_its_shell_header():
    out = subprocess.run([KUBEAPI_PATH, "kubeconfig", "--server", "http://127.0.0.1:6443"], capture_output=True, text=True, timeout=20,
                         check=False)
    assert out.returncode == 0 and "    server: https://127.0.0.1:6443\n" in out.stdout and "current-context: default" in out.stdout


def test_a_subject_access_review_judges_another_user_by_the_same_rbac(cluster):
    """The admin asks for a ServiceAccount (access.yml, before its token exists); neither user nor group is invalid."""
    path = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
    attrs = {"verb": "get", "group": "", "resource": "secrets", "namespace": "kube-system"}
    spec = {"user": "system:serviceaccount:x:y", "groups": ["system:serviceaccounts"], "resourceAttributes": attrs}
    code, doc = cluster.request("POST", path, {"kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "spec": spec})
    assert code == 201 and doc["status"]["allowed"] is False
    code, doc = cluster.request("POST", path, {"kind": "SubjectAccessReview", "spec": {"groups": ["system:masters"], "resourceAttributes": attrs}})
    assert code == 201 and doc["status"]["allowed"] is True
    code, doc = cluster.request("POST", path, {"kind": "SubjectAccessReview", "spec": {"resourceAttributes": attrs}})
    assert code == 422 and "at least one of user or group must be specified" in doc["message"], doc


def test_a_policy_whose_expression_names_an_undeclared_variable_is_refused_when_written(cluster):
    """The real apiserver compiles each expression of a ValidatingAdmissionPolicy against the variables it declares
    (params only with a paramKind) and refuses the write (pkg/apis/admissionregistration/validation validateValidation);
    the stand-in parsed them only, so a policy the real server would refuse was served and enforced here."""
    path = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"

    def policy(name, expression, params=False):
        spec = {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"],
                                                        "resources": ["nodes"]}]},
                "validations": [{"expression": expression}]}
        if params:
            spec["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
        return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name}, "spec": spec}

    code, doc = cluster.request("POST", path, policy("p1", "has(params.data) && object.metadata.name in params.data"))
    assert code == 422 and "undeclared reference to 'params'" in doc["message"], doc
    code, doc = cluster.request("POST", path, policy("p2", "objekt.spec == oldObject.spec"))
    assert code == 422 and "undeclared reference to 'objekt'" in doc["message"], doc
    code, doc = cluster.request("POST", path, policy("p3", "has(params.data) && object.metadata.labels.all(k, k in params.data)", True))
    assert code == 201, doc
