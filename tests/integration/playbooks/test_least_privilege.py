# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Least privilege against the API stand-in (which authenticates bearer tokens and authorizes them with RBAC, as the
API server does) and the real kubectl: access.yml creates the scoped identity and its kubeconfig; the roll runs with
it; a right taken away stops the roll before any node is cordoned, naming the right."""

from __future__ import annotations

import base64
import json
import os
import re
import stat

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import admission, rbac
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_markers import cordon_patch, release_patch
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBEAPI_PATH, _load, gpu_fleet, needs_kubectl
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply, make_node, tree
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_hostile_inventory import SPEC, drain_play, is_write, node_vars, run

pytestmark = needs_kubectl
KUBEAPI = _load("kubeapi_standin_for_least_privilege", KUBEAPI_PATH)
SA_USER = rbac.identity()


@pytest.fixture
def api(tmp_path):
    """gpu-a (the inventory's node) and another GPU Node; kured's DaemonSet where auto finds it."""
    yield from gpu_fleet(tmp_path, ("gpu-a", "other-1"))


def access(api, tmp_path, *extra, **variables):
    target = str(tmp_path / "rke2-numa.yaml")
    out = run(api, tmp_path, "access.yml", {"gpu-a": {}}, *extra,
              **dict({"rke2_numa_admin_kubeconfig": api.kubeconfig, "rke2_numa_access_kubeconfig": target}, **variables))
    return out, target


def writes(api, since=0):
    """The calls that change something (a SelfSubjectAccessReview is a question, not a write)."""
    return [c for c in api.calls()[since:] if is_write(c)]


def test_access_creates_the_identity_and_a_0600_kubeconfig_that_may_do_what_a_roll_does_and_no_more(api, tmp_path):
    out, target = access(api, tmp_path, "--check")
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    assert "create ClusterRole rke2-numa" in out.stdout and "would write" in out.stdout
    assert writes(api) == [] and not os.path.exists(target), "check mode writes nothing, asks for no token"

    out, target = access(api, tmp_path)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-3000:]
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    with open(target) as handle:
        content = handle.read()
    assert content.startswith(rbac.KUBECONFIG_MARK)
    token = yaml.safe_load(content)["users"][0]["user"]["token"]
    assert token and token not in text, "the token is never printed"
    assert "kubeapi-standin-admin" not in content, "the admin's credentials are not copied"
    for argv, answer in [(["auth", "can-i", "create", "pods", "--subresource=eviction", "-A"], "yes"), (["auth", "can-i", "patch", "nodes"], "yes"),
                         (["auth", "can-i", "list", "secrets", "-A"], "no"), (["auth", "can-i", "*", "*"], "no"),
                         (["auth", "can-i", "delete", "pods", "-n", "default"], "no"),
                         (["auth", "can-i", "delete", "pods", "-n", rbac.PROBE_NAMESPACE], "yes")]:
        got = api.kubectl("--kubeconfig", target, *argv)
        assert got.stdout.strip() == answer, (argv, got.stdout, got.stderr)
    namespace = json.loads(api.kubectl("get", "namespace", rbac.PROBE_NAMESPACE, "-o", "json").stdout)
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"

    # Again: nothing to apply (a new token only); a right widened by hand is taken back.
    since = len(api.calls())
    again, dummy = access(api, tmp_path)
    assert again.returncode == 0 and "the identity is as it should be" in again.stdout, again.stdout[-3000:]
    assert [c["path"] for c in writes(api, since)] == ["/api/v1/namespaces/rke2-numa-system/serviceaccounts/rke2-numa/token"]
    secrets = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}
    widened = api.kubectl("patch", "clusterrole", "rke2-numa", "--type=json", "-p", json.dumps([{"op": "add", "path": "/rules/-", "value": secrets}]))
    assert widened.returncode == 0, widened.stderr
    fixed, dummy = access(api, tmp_path)
    assert fixed.returncode == 0 and "update ClusterRole rke2-numa (rules)" in fixed.stdout, fixed.stdout[-3000:]
    assert api.kubectl("--kubeconfig", target, "auth", "can-i", "get", "secrets", "-n", "kube-system").stdout.strip() == "no"


def test_access_refuses_a_file_it_did_not_write_and_an_object_that_is_not_ours(api, tmp_path):
    target = tmp_path / "rke2-numa.yaml"
    target.write_text("apiVersion: v1\nkind: Config\n# someone's kubeconfig\n")
    out, dummy = access(api, tmp_path)
    assert out.returncode != 0
    assert "exists and was not written by access.yml (its first line is not our mark): nothing was changed" in out.stdout
    assert target.read_text() == "apiVersion: v1\nkind: Config\n# someone's kubeconfig\n" and writes(api) == []
    link = tmp_path / "link.yaml"
    link.symlink_to(api.kubeconfig)
    out, dummy = access(api, tmp_path, rke2_numa_access_kubeconfig=str(link))
    assert out.returncode != 0 and "(a symbolic link): nothing was changed" in out.stdout
    target.unlink()
    theirs = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": rbac.PROBE_NAMESPACE, "labels": {"team": "ml"}}}
    code, dummy = api.request("POST", "/api/v1/namespaces", theirs)
    assert code == 201
    out, dummy = access(api, tmp_path)
    assert out.returncode != 0
    assert "Namespace rke2-numa-probe exists and is not ours (no label app.kubernetes.io/managed-by=maitred.rke2_numa)" in out.stdout
    assert [c for c in writes(api) if c["path"] != "/api/v1/namespaces"] == [] and not target.exists()


def test_a_roll_whose_identity_lacks_one_verb_stops_naming_it_before_any_node_is_cordoned(api, tmp_path):
    out, scoped = access(api, tmp_path)
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    role = json.loads(api.kubectl("get", "clusterrole", "rke2-numa", "-o", "json").stdout)
    index = next(i for i, r in enumerate(role["rules"]) if r["resources"] == ["pods/eviction"])
    removed = api.kubectl("patch", "clusterrole", "rke2-numa", "--type=json", "-p", json.dumps([{"op": "remove", "path": "/rules/%d" % index}]))
    assert removed.returncode == 0, removed.stderr
    root = make_node(tmp_path / "gpu-a", **SPEC)   # not compliant: the roll would drain it
    before = tree(root)
    since = len(api.calls())
    out = run(api, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)}, rke2_numa_kubeconfig=scoped)
    text = out.stdout + out.stderr
    assert out.returncode != 0, text[-3000:]
    assert ("the kubeconfig %s may not create pods/eviction cluster-wide (needed to evict the workload pods (kubectl drain, "
            "PodDisruptionBudgets respected)) - nothing was changed" % scoped) in " ".join(text.split()), text[-3000:]
    assert writes(api, since) == [], "no cordon, no annotation, no lock"
    assert not api.node("gpu-a")["unschedulable"] and tree(root) == before
    assert {c.get("user") for c in api.calls()[since:]} == {SA_USER}, "the roll used the scoped identity only"


def _evictions(api, since=0):
    """The evictions the API stand-in accepted (a dry run's too), as namespace/name."""
    return [c["summary"]["pod"] for c in api.calls()[since:] if (c.get("summary") or {}).get("verb") == "evict" and c["code"] < 300]


def test_with_drain_namespaces_named_a_drain_outside_the_inventory_evicts_nothing_and_the_roll_refuses_before_its_cordon(api, tmp_path):
    """kubectl drain of a Node in no inventory, with the scoped kubeconfig: kubectl's cordon is denied (the policy) and
    kubectl goes on to evict every pod (pkg/cmd/drain/drain.go RunDrain). An Eviction names only its pod, so only RBAC's
    namespaces narrow it: with rke2_numa_drain_namespaces the token may evict there alone - this drain evicts nothing.
    The roll over a node with a pod elsewhere refuses before its cordon, naming the pod. Before, the identity's
    evictions were cluster-wide: the drain evicted team-b's pod."""
    with api.edit("other-1") as node:
        node["pods"].append({"namespace": "team-b", "name": "web-0", "owner": "ReplicaSet"})
    with api.edit("gpu-a") as node:
        node["pods"].append({"namespace": "team-b", "name": "batch-1", "owner": "Job", "phase": "Succeeded"})
    since = len(api.calls())
    out, scoped = access(api, tmp_path, rke2_numa_drain_namespaces=["ml"])
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode != 0 and "rke2_numa_drain_namespaces names ml, which the cluster does not have" in text, text[-3000:]
    assert writes(api, since) == []
    with api.edit("gpu-a") as node:
        node["pods"].append({"namespace": "ml", "name": "vllm-0", "owner": "ReplicaSet"})
    out, scoped = access(api, tmp_path, rke2_numa_drain_namespaces=["ml"])
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-3000:]
    for namespace, answer in (("ml", "yes"), ("team-b", "no"), ("default", "no")):
        got = api.kubectl("--kubeconfig", scoped, "auth", "can-i", "create", "pods", "--subresource=eviction", "-n", namespace)
        assert got.stdout.strip() == answer, (namespace, got.stdout, got.stderr)

    since = len(api.calls())
    drained = api.kubectl("drain", "other-1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=15s", kubeconfig=scoped)
    assert "unable to cordon node" in drained.stderr, drained.stderr
    assert _evictions(api, since) == [], "no eviction outside the drain namespaces"
    assert any(p["name"] == "web-0" for p in api.node("other-1")["pods"]) and not api.node("other-1").get("unschedulable")

    since = len(api.calls())
    out = drain_play(api, tmp_path, rke2_numa_kubeconfig=scoped, rke2_numa_drain_namespaces=["ml"])   # the roll's drain role
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode != 0, text[-3000:]
    assert "the drain of gpu-a would evict default/sample-workload-gpu-a (Running), team-b/batch-1 (Succeeded): a roll never evicts " \
        "the cluster's own pods (kube-system), " \
        "nor any outside rke2_numa_drain_namespaces (ml)" in text, text[-3000:]
    assert _evictions(api, since) == [] and not api.node("gpu-a").get("unschedulable")
    assert [c for c in api.calls()[since:] if c["code"] == 403] == [], "refused by the roll, not by the API"


def test_the_roll_runs_with_the_scoped_identity_and_the_check_warns_about_an_admin_kubeconfig(api, tmp_path):
    """A compliant node whose Node carries labels of an earlier plan: the roll (scoped identity) relabels it in place;
    every call it made was allowed. The same check with the admin kubeconfig warns that it may do everything."""
    out, scoped = access(api, tmp_path)
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    root = make_node(tmp_path / "gpu-a", **SPEC)
    comply(root, make_plan(read_topology(str(root))))
    with api.edit("gpu-a") as node:
        node["labels"]["rke2-numa.maitred.io/plan"] = "0123456789abcdef"
        node["annotations"] = {"rke2-numa.maitred.io/cordoned": "true"}   # a stale marker: cleared with annotate
    since = len(api.calls())
    out = run(api, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)}, rke2_numa_kubeconfig=scoped, rke2_numa_labels_via="kubectl",
              rke2_numa_prove=False)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-3000:]
    assert "may do everything in the cluster" not in text
    calls = api.calls()[since:]

    def proof(call):   # the access proof's trials: dry runs, and the reads kubectl makes before a write RBAC denies
        return (call.get("query") or {}).get("dryRun") == "All" or "rke2-numa-proof" in call["path"] \
            or call["path"].endswith("/configmaps/rke2-numa-nodes")
    assert {c.get("user") for c in calls} == {SA_USER} and [c for c in calls if c["code"] in (401, 403) and not proof(c)] == []
    assert api.node("gpu-a")["labels"]["rke2-numa.maitred.io/plan"] != "0123456789abcdef"
    admin = run(api, tmp_path, "check.yml", {"gpu-a": node_vars(root)})
    assert admin.returncode == 0
    assert "may do everything in the cluster (cluster-admin), more than check needs" in " ".join((admin.stdout + admin.stderr).split())


@pytest.mark.parametrize("change, words", [
    ("remove", "the cluster allows the identity to run a probe pod on a Node outside the inventory (the control plane, another "
               "team's GPUs) (kubectl create --raw /api/v1/namespaces/rke2-numa-probe/pods?dryRun=All -f -, a server-side dry run): Pod "
               "rke2-numa-try-outside admitted (server dry run) - docs/ACCESS.md says it is denied by the policy rke2-numa-probes"),
    ("widen", "the cluster allows the identity to taint a Node NoExecute (the kubelet deletes every pod on it, PodDisruptionBudgets "
              "or not) (kubectl taint node gpu-a evict=all:NoExecute --dry-run=server"),
])
def test_the_roll_proves_the_identity_on_the_live_cluster_before_its_first_write(api, tmp_path, change, words):
    """access.yml, then each roll with the scoped kubeconfig, tries as the identity each escalation docs/ACCESS.md says is
    denied and each request a roll makes, with server-side dry runs (nothing stored): as access.yml left the cluster,
    proven; a policy binding removed, or a validation widened to true, and the roll stops before any write, naming the
    request and the cluster's answer. Before, nothing asked the cluster beyond RBAC's SubjectAccessReviews."""
    api.add_node("server-1", ready=True, labels={"node-role.kubernetes.io/control-plane": "true", "kubernetes.io/hostname": "server-1"})
    out, scoped = access(api, tmp_path)
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode == 0, text[-3000:]
    # admission.ESCALATIONS' but kured's (no kured here) and what RBAC alone denies (access_proof.trials)
    assert re.search(r"proved on the cluster with server-side dry runs: 10 requests denied as docs/ACCESS.md says, 5 a roll makes "
                     r"allowed", text), text[-3000:]
    assert "no control-plane Node visible" not in text
    root = make_node(tmp_path / "gpu-a", **SPEC)   # not compliant: the roll will write (it stops at the kubelet's preflight here)
    since = len(api.calls())
    out = run(api, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)}, rke2_numa_kubeconfig=scoped, rke2_numa_prove=False)
    text = " ".join((out.stdout + out.stderr).split())
    assert "the live cluster disagrees" not in text and "took the Lease" in text, text[-3000:]
    assert len([c for c in api.calls()[since:] if (c.get("query") or {}).get("dryRun") == "All"]) >= 10, "the proof's dry runs"

    if change == "remove":
        done = api.kubectl("delete", "validatingadmissionpolicybinding", "rke2-numa-probes")
    else:
        policy = json.loads(api.kubectl("get", "validatingadmissionpolicy", "rke2-numa-nodes", "-o", "json").stdout)
        index = next(i for i, v in enumerate(policy["spec"]["validations"]) if "spec.taints" in v["expression"])
        done = api.kubectl("patch", "validatingadmissionpolicy", "rke2-numa-nodes", "--type=json", "-p",
                           json.dumps([{"op": "replace", "path": "/spec/validations/%d/expression" % index, "value": "true"}]))
    assert done.returncode == 0, done.stderr
    since = len(api.calls())
    out = run(api, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)}, rke2_numa_kubeconfig=scoped, rke2_numa_prove=False)
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode != 0 and "the live cluster disagrees with what docs/ACCESS.md says of the kubeconfig %s" % scoped in text, text[-3000:]
    assert words in text, text[-3000:]
    assert writes(api, since) == [] and [c for c in api.calls()[since:] if c["method"] != "GET" and "leases" in c["path"]
                                         and not (c.get("summary") or {}).get("dryRun")] == [], "no write, no Lease taken"
    assert not api.node("gpu-a").get("taints") and not api.node("gpu-a").get("unschedulable")


@pytest.mark.parametrize("container", [{"args": ["--lock-annotation=example.com/reboot-lock"]},
                                       {"env": [{"name": "KURED_LOCK_ANNOTATION", "value": "example.com/reboot-lock"}]}])
def test_kureds_own_lock_key_is_the_one_the_policy_lets_the_identity_hold(api, tmp_path, container):
    """kured with a custom --lock-annotation (or KURED_LOCK_ANNOTATION): access.yml reads it as kured does and the kured
    policy lets the identity change that annotation alone; the proof holds the lock under it. Before, the policy named
    weave.works/kured-node-lock whatever kured used: every hold of the roll was denied."""
    (tmp_path / "state" / "daemonsets.json").write_text(json.dumps([{
        "namespace": "kube-system", "name": "kured", "labels": {"app.kubernetes.io/name": "kured"},
        "containers": [dict({"name": "kured", "image": "ghcr.io/kubereboot/kured:1.17.1", "command": ["/usr/bin/kured"]}, **container)]}]))
    out, scoped = access(api, tmp_path)
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode == 0, text[-3000:]
    assert "requests denied as docs/ACCESS.md says" in text
    held = api.kubectl("annotate", "daemonset", "kured", "-n", "kube-system", "--overwrite",
                       'example.com/reboot-lock={"maxOwners":1,"locks":[]}', kubeconfig=scoped)
    assert held.returncode == 0, held.stderr
    other = api.kubectl("annotate", "daemonset", "kured", "-n", "kube-system", "--overwrite", "weave.works/kured-node-lock={}", kubeconfig=scoped)
    assert other.returncode != 0 and "may change only kured's lock annotation example.com/reboot-lock" in other.stderr, other.stderr


@pytest.mark.parametrize("playbook", ["prove.yml", "labels.yml"])
def test_prove_and_labels_refuse_a_kubeconfig_without_their_rights_before_anything(api, tmp_path, playbook):
    root = make_node(tmp_path / "gpu-a", **SPEC)
    comply(root, make_plan(read_topology(str(root))))
    nobody = tmp_path / "nobody.yaml"
    nobody.write_text(open(api.kubeconfig).read().replace("kubeapi-standin-admin", "not-a-token"))
    out = run(api, tmp_path, playbook, {"gpu-a": node_vars(root)}, rke2_numa_kubeconfig=str(nobody), rke2_numa_labels_via="kubectl")
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode != 0
    assert "could not ask the API what the kubeconfig %s may do" % nobody in text, text[-3000:]
    assert "the server has asked for the client to provide credentials" in text, "kubectl's words for a 401"
    assert writes(api) == []


TOKEN_PATH = "/api/v1/namespaces/%s/serviceaccounts/rke2-numa/token" % rbac.IDENTITY_NAMESPACE


def token_requests(api, since=0):
    return [c for c in api.calls()[since:] if c["path"] == TOKEN_PATH]


def test_access_refuses_an_identity_that_may_do_more_before_any_token_and_leaves_the_old_kubeconfig(api, tmp_path):
    """Another binding of our ServiceAccount (cluster-admin; a role with pods/exec), or an aggregationRule on our
    ClusterRole: refused, naming it, before the token request; the kubeconfig written before is as it was, byte for byte."""
    out, target = access(api, tmp_path)
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    with open(target, "rb") as handle:
        before = handle.read()
    sa = "--serviceaccount=%s:rke2-numa" % rbac.IDENTITY_NAMESPACE
    exec_role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "debugger"},
                 "rules": [{"apiGroups": [""], "resources": ["pods/exec", "serviceaccounts/token"], "verbs": ["create"]},
                           {"apiGroups": [""], "resources": ["pods"], "verbs": ["delete"]}]}
    assert api.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", exec_role)[0] == 201
    cases = [
        (["create", "clusterrolebinding", "extra-admin", "--clusterrole=cluster-admin", sa],
         "ClusterRoleBinding extra-admin binds the ServiceAccount rke2-numa-system/rke2-numa to ClusterRole cluster-admin"),
        (["create", "rolebinding", "debug", "-n", "default", "--clusterrole=debugger", sa],
         "RoleBinding default/debug binds the ServiceAccount rke2-numa-system/rke2-numa to ClusterRole debugger"),
        (["create", "clusterrolebinding", "all-sas", "--clusterrole=debugger", "--group=system:serviceaccounts:%s" % rbac.IDENTITY_NAMESPACE],
         "may create pods/exec cluster-wide"),
    ]
    for argv, words in cases:
        made = api.kubectl(*argv)
        assert made.returncode == 0, made.stderr
        since = len(api.calls())
        out, dummy = access(api, tmp_path)
        text = " ".join((out.stdout + out.stderr).split())
        assert out.returncode != 0 and words in text, (argv, text[-3000:])
        assert token_requests(api, since) == [], "refused before any token exists"
        with open(target, "rb") as handle:
            assert handle.read() == before, "the old kubeconfig, byte for byte"
        kind, name = argv[1], argv[2]
        assert api.kubectl("delete", kind, name, *(["-n", "default"] if kind == "rolebinding" else [])).returncode == 0
    aggregated = [{"op": "add", "path": "/aggregationRule", "value": {"clusterRoleSelectors": [{"matchLabels": {"team": "ml"}}]}}]
    assert api.kubectl("patch", "clusterrole", "rke2-numa", "--type=json", "-p", json.dumps(aggregated)).returncode == 0
    since = len(api.calls())
    out, dummy = access(api, tmp_path)
    assert out.returncode != 0 and "ClusterRole rke2-numa has an aggregationRule nobody here wrote" in out.stdout, out.stdout[-3000:]
    assert token_requests(api, since) == [] and writes(api, since) == []


def test_access_never_shows_the_target_file_and_refuses_one_planted_by_another_user(api, tmp_path):
    secret = tmp_path / "token"
    secret.write_text("K10abcdef0123456789::server:joinsecret\n")
    for path in ("/etc/passwd", str(secret)):
        out, dummy = access(api, tmp_path, "-vvv", rke2_numa_access_kubeconfig=path)
        text = out.stdout + out.stderr
        assert out.returncode != 0 and "exists and was not written by access.yml (its first line is not our mark)" in text, text[-2000:]
        assert "root:x:0:0" not in text and "joinsecret" not in text and "K10abcdef" not in text
    assert secret.read_text() == "K10abcdef0123456789::server:joinsecret\n"
    planted = tmp_path / "planted.yaml"
    planted.write_text(rbac.KUBECONFIG_MARK + "\n{}\n")
    os.chown(str(planted), 65534, 65534)
    since = len(api.calls())
    out, dummy = access(api, tmp_path, rke2_numa_access_kubeconfig=str(planted))
    assert out.returncode != 0 and "(owned by uid 65534, not root (rke2_numa_access_kubeconfig_owner)" in out.stdout, out.stdout[-2000:]
    assert planted.read_text() == rbac.KUBECONFIG_MARK + "\n{}\n" and os.stat(str(planted)).st_uid == 65534
    assert token_requests(api, since) == [] and writes(api, since) == []


def test_access_sends_no_token_to_a_server_the_admin_kubeconfig_cannot_verify(api, tmp_path):
    for server, words in [("https://127.0.0.1:1", "is not the admin kubeconfig's server"),
                          ("http://127.0.0.1:6443", "must be an https URL"),
                          ("https://user:pw@127.0.0.1:6443", "must be an https URL")]:
        since = len(api.calls())
        out, target = access(api, tmp_path, rke2_numa_access_server=server)
        text = " ".join((out.stdout + out.stderr).split())
        assert out.returncode != 0 and words in text, (server, text[-2000:])
        assert token_requests(api, since) == [] and not os.path.exists(target)


def test_a_probe_namespace_left_behind_keeps_no_rights_and_prove_false_from_e_runs_the_roll(api, tmp_path):
    out, target = access(api, tmp_path)
    assert out.returncode == 0
    assert api.kubectl("--kubeconfig", target, "auth", "can-i", "delete", "pods", "-n", rbac.PROBE_NAMESPACE).stdout.strip() == "yes"
    out, dummy = access(api, tmp_path, rke2_numa_probe_namespace="rke2-numa-probe2")
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    assert "delete RoleBinding rke2-numa-probe/rke2-numa-probe (a namespace the identity no longer uses)" in out.stdout
    for namespace, answer in ((rbac.PROBE_NAMESPACE, "no"), ("rke2-numa-probe2", "yes")):
        got = api.kubectl("--kubeconfig", target, "auth", "can-i", "delete", "pods", "-n", namespace)
        assert got.stdout.strip() == answer, (namespace, got.stdout, got.stderr)
    # a roll without probes, told so as a string (-e, an AWX survey): the access check asks for no probe right
    root = make_node(tmp_path / "gpu-a", **SPEC)
    comply(root, make_plan(read_topology(str(root))))
    out = run(api, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)}, "-e", "rke2_numa_prove=false", rke2_numa_kubeconfig=target,
              rke2_numa_probe_namespace="rke2-numa-probe2")
    text = out.stdout + out.stderr
    assert out.returncode == 0 and "its answer was not the reviews asked for" not in text, text[-3000:]


def _escalate(api, kubeconfig, escalation):
    names = {"{node}": "gpu-a", "{outside}": "other-1", "{pod}": "coredns-5d4f8b7c9-x2k4q", "{probe}": rbac.PROBE_NAMESPACE}

    def fill(text):
        for key, value in names.items():
            text = text.replace(key, value)
        return text
    return api.kubectl(*[fill(a) for a in escalation.argv], kubeconfig=kubeconfig,
                       stdin=fill(escalation.stdin) if escalation.stdin else None)


def _other_writers(api, tmp_path):
    """kured's DaemonSet (kube-system/kured, where auto finds it) and a DNS pod of kube-system on gpu-a."""
    (tmp_path / "state" / "daemonsets.json").write_text(json.dumps([
        {"namespace": "kube-system", "name": "kured", "labels": {"app.kubernetes.io/name": "kured"}}]))
    with api.edit("gpu-a") as node:
        node["pods"].append({"namespace": "kube-system", "name": "coredns-5d4f8b7c9-x2k4q", "owner": "ReplicaSet",
                             "labels": {"k8s-app": "kube-dns"}})


@pytest.mark.parametrize("policies", [True, False], ids=["with-policies", "without-policies"])
def test_what_the_identity_can_and_cannot_do_is_what_access_md_says(tmp_path, policies):
    """Each escalation docs/ACCESS.md lists, with the scoped kubeconfig: denied by its policy (the message naming the
    field) where the cluster has ValidatingAdmissionPolicy, allowed by RBAC alone where it has not (access.yml says
    so); with the policies, the roll's own writes (cordon, our annotations and labels, uncordon) still pass."""
    fleet = gpu_fleet(tmp_path, ("gpu-a", "other-1"), policies=policies)
    api = next(fleet)
    try:
        _other_writers(api, tmp_path)
        out, target = access(api, tmp_path)
        text = out.stdout + out.stderr
        assert out.returncode == 0, text[-3000:]
        if policies:
            assert "ValidatingAdmissionPolicy: the identity may change spec.unschedulable" in text and "1 enrolled Node(s)" in text
            enrolled = json.loads(api.kubectl("get", "configmap", admission.ENROLMENT, "-n", rbac.IDENTITY_NAMESPACE, "-o", "json").stdout)
            assert enrolled["data"] == {"gpu-a": "enrolled"}, "the inventory's Node only"
        else:
            assert "this cluster has no ValidatingAdmissionPolicy" in text and "rolls do not hold kured's lock" in text, text[-4000:]
        for escalation in admission.ESCALATIONS:
            done = _escalate(api, target, escalation)
            if policies:   # kubectl cordon says "error: unable to cordon node" and exits 0: the Node is looked at below
                assert admission.denial(escalation) in done.stderr, (escalation.what, done.stderr)
                assert done.returncode != 0 or escalation.argv[0] == "cordon", (escalation.what, done.stdout)
            elif escalation.policy == "rke2-numa-kured":   # no policies, rke2_numa_kured_hold auto: no right on kured's DaemonSet
                assert done.returncode != 0 and "cannot patch resource \"daemonsets\"" in done.stderr, done.stderr
            else:
                assert done.returncode == 0 and "error" not in done.stderr, (escalation.what, done.stderr)
        if not policies:   # the operator turns the hold on: RBAC alone, the pod template with it (access.yml says so)
            out, target = access(api, tmp_path, "-e", "rke2_numa_kured_hold=true")
            assert out.returncode == 0 and "and change kured's pod template (rke2_numa_kured_hold: true)" in out.stdout, out.stdout[-3000:]
            kured = next(e for e in admission.ESCALATIONS if e.policy == "rke2-numa-kured")
            assert _escalate(api, target, kured).returncode == 0
            out, target = access(api, tmp_path)
            assert out.returncode == 0 and "delete RoleBinding kube-system/rke2-numa-kured-lock" in out.stdout, out.stdout[-3000:]
            assert _escalate(api, target, kured).returncode != 0, "auto again: the right is taken back"
        if policies:
            node = api.node("gpu-a")
            assert not node.get("taints") and "node-role.kubernetes.io/control-plane" not in (node.get("labels") or {})
            assert not api.node("other-1").get("unschedulable")
            assert any(p["name"].startswith("coredns") for p in node["pods"])
            # what a roll writes on its own Node still passes
            for argv in (("patch", "node/gpu-a", "--type=merge", "--patch=%s" % cordon_patch("r1", "rke2-numa.maitred.io/cordoned")),
                         ("patch", "node/gpu-a", "--type=merge",
                          "--patch=%s" % release_patch("rke2-numa.maitred.io/cordoned", "rke2-numa.maitred.io/failed", True)),
                         ("cordon", "gpu-a"), ("annotate", "node", "gpu-a", "rke2-numa.maitred.io/cordoned=r1"),
                         ("label", "node", "gpu-a", "rke2-numa.maitred.io/plan=abc"),
                         ("annotate", "node", "gpu-a", "rke2-numa.maitred.io/cordoned-"), ("uncordon", "gpu-a"),
                         ("annotate", "daemonset", "kured", "-n", "kube-system", "weave.works/kured-node-lock={}")):
                done = api.kubectl(*argv, kubeconfig=target)
                assert done.returncode == 0, (argv, done.stderr)
    finally:
        for dummy in fleet:   # the fixture's end: the server stopped, no request answered with a server error
            pass


def test_another_server_proves_itself_with_the_ca_named_before_any_token(api, tmp_path):
    """rke2_numa_access_server over https with rke2_numa_access_ca: a TLS handshake verifies it before the token
    request, and the kubeconfig carries that CA; a CA that does not verify it is refused - no token, no file."""
    server = "https://127.0.0.1:%d" % api.port
    own_ca = os.path.join(api.state, "auth", "tls.crt")
    other_ca = tmp_path / "other-ca.pem"
    other_ca.write_text(KUBEAPI.self_signed_certificate()[0])
    since = len(api.calls())
    out, target = access(api, tmp_path, rke2_numa_access_server=server, rke2_numa_access_ca=str(other_ca))
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode != 0 and "did not prove it is the cluster's API server" in text, text[-2000:]
    assert token_requests(api, since) == [] and not os.path.exists(target)

    out, target = access(api, tmp_path, rke2_numa_access_server=server, rke2_numa_access_ca=own_ca)
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    with open(target) as handle:
        cluster = yaml.safe_load(handle)["clusters"][0]["cluster"]
    with open(own_ca) as handle:
        assert cluster["server"] == server and cluster["certificate-authority-data"] == base64.b64encode(handle.read().encode()).decode()
    assert "insecure-skip-tls-verify" not in cluster
    done = api.kubectl("get", "nodes", "-o", "name", kubeconfig=target)
    assert done.returncode == 0 and "node/gpu-a" in done.stdout, done.stderr
