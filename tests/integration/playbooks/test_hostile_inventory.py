# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rolling.yml against a hostile or careless inventory: the real kubectl against the API stand-in, node
filesystem copies (ansible_connection=local). Whatever the inventory says, nothing outside it is touched: a
refused input makes no API call and writes no file; a stale marker never drains a healthy node."""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import numa_labels
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBECTL, gpu_fleet, needs_kubectl
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply, make_node, tree

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAYBOOKS = os.path.join(REPO, "playbooks")
SPEC = dict(sockets=1, cores_per_socket=4, threads=2, gpus_per_node=1)
CORDONED, FAILED = "rke2-numa.maitred.io/cordoned", "rke2-numa.maitred.io/failed"

pytestmark = needs_kubectl


@pytest.fixture
def cluster(tmp_path):
    """gpu-a (the inventory's node) and two GPU Nodes outside the inventory, all labelled gpu=true."""
    yield from gpu_fleet(tmp_path, ("gpu-a", "other-1", "other-2"))


LEASE_PATH = "/apis/coordination.k8s.io/v1/namespaces/rke2-numa-system/leases"


def is_write(call):
    """A call that changes the fleet: not a read, not a (Self)SubjectAccessReview (the playbooks ask the API what their
    kubeconfig, or access.yml what the identity, may do before anything changes: a question, not a write), not a
    server-side dry run (authorized and admitted, never stored: the access proof's), and not the roll's Lease (a roll
    that may write takes it first and gives it back at its end: lease_given_back checks that)."""
    return (call["method"] != "GET" and "subjectaccessreviews" not in call["path"] and not call["path"].startswith(LEASE_PATH)
            and (call.get("query") or {}).get("dryRun") != "All" and not (call.get("summary") or {}).get("dryRun"))


def lease_writes(cluster):
    """The roll Lease's writes, in order: [(verb, code)]."""
    return [(c["summary"]["verb"], c["code"]) for c in sorted(cluster.calls(), key=lambda c: c["time"])
            if c["method"] != "GET" and c["path"].startswith(LEASE_PATH)]


def lease_given_back(cluster):
    """The roll took the Lease and gave it back: an empty holder now."""
    got = cluster.kubectl("get", "lease", "rke2-numa-roll", "-n", "rke2-numa-system", "-o", "json")
    return got.returncode == 0 and json.loads(got.stdout)["spec"].get("holderIdentity", "") == "" and lease_writes(cluster)[-1] == ("update", 200)


def run(cluster, tmp_path, playbook, hosts, *extra, **common):
    inv = {"gpu": {"vars": dict({"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                                 "rke2_numa_kubectl": KUBECTL, "rke2_numa_kubeconfig": cluster.kubeconfig}, **common),
                   "hosts": hosts}}
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump(inv))
    env = dict(cluster.env, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_DEPRECATION_WARNINGS="false")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(path),
           os.path.join(PLAYBOOKS, playbook)] + list(extra)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)


def node_vars(root, **more):
    return dict({"rke2_numa_sysfs_root": str(root), "rke2_numa_boot_root": str(root),
                 "rke2_numa_kubelet_dir": str(root / "var/lib/kubelet"),
                 "rke2_numa_config_path": str(root / "etc/rancher/rke2/config.yaml"),
                 "rke2_numa_nfd_features_dir": str(root / "etc/kubernetes/node-feature-discovery/features.d")}, **more)


def test_hostile_or_careless_inputs_are_refused_before_any_api_call_and_any_write(cluster, tmp_path):
    """Each host carries one bad value; the run stops at its first task: no API call at all, no file anywhere."""
    root = make_node(tmp_path / "gpu-a", **SPEC)   # not compliant: the old code rolled it
    past = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=95)).strftime("%Y-%m-%dT%H:%M:%SZ")
    bad = {
        "h-flag": {"rke2_numa_node_name": "-lgpu=true"},                 # kubectl drain -lgpu=true: every GPU Node
        "h-long-flag": {"rke2_numa_node_name": "--selector=gpu=true"},
        "h-two": {"rke2_numa_node_name": "gpu-a,other-1"},
        "h-other": {"rke2_numa_node_name": "node/other-1"},
        "h-serial": {"rke2_numa_serial": 0},                             # serial 0: every host at once
        "h-percent": {"rke2_numa_serial": "0%"},
        "h-forever": {"rke2_numa_drain_timeout": 0},                     # kubectl drain --timeout=0s: forever
        "h-group": {"rke2_numa_server_group": "server"},                 # a typo: kubectl on the controller
        "h-window": {"rke2_numa_window_end": past},
        "h-fail": {"rke2_numa_max_fail_percentage": 101},
        "h-selector": {"rke2_numa_drain_pod_selector": "app=vllm --force"},
        "h-digits": {"rke2_numa_drain_timeout": "9" * 5000},          # int() of it: "Exceeds the limit (4300 digits)"
        "h-super": {"rke2_numa_drain_timeout": "\u00b2"},               # "2".isdigit() is True, int() of it raises
        "h-cap": {"rke2_numa_max_unavailable": "9" * 5000},
        "h-prove": {"rke2_numa_prove": "maybe"},
        "h-template": {"rke2_numa_drain_timeout": "{{ rke2_numa_no_such_variable }}"},   # a template that does not render
        "fleet": {},                                                     # its report would overwrite fleet.json
    }
    hosts = {name: node_vars(root, **dict({"rke2_numa_node_name": "gpu-a"}, **values)) for name, values in bad.items()}
    hosts["Gpu_B"] = node_vars(root)   # no rke2_numa_node_name: its inventory name is its Node name, and not a valid one
    before = tree(root)
    reports = tmp_path / "reports"
    out = run(cluster, tmp_path, "rolling.yml", hosts, "-e", "rke2_numa_report_dir=%s" % reports)
    text = out.stdout + out.stderr
    assert out.returncode != 0, text
    for host, words in [
            ("h-flag", "rke2_numa_node_name '-lgpu=true' is not a Node name"),
            ("h-long-flag", "rke2_numa_node_name '--selector=gpu=true' is not a Node name"),
            ("h-two", "rke2_numa_node_name 'gpu-a,other-1' is not a Node name"),
            ("h-other", "rke2_numa_node_name 'node/other-1' is not a Node name"),
            ("h-serial", "rke2_numa_serial 0 must be a number of nodes >= 1"),
            ("h-percent", "rke2_numa_serial '0%' must be a number of nodes >= 1"),
            ("h-forever", "rke2_numa_drain_timeout 0 must be an integer from 1 to 14400 s (0 would let kubectl drain wait forever)"),
            ("h-group", "rke2_numa_server_group 'server' is not a group of the inventory"),
            ("h-window", "rke2_numa_window_end %s ended 95 min ago" % past),
            ("h-fail", "rke2_numa_max_fail_percentage 101 must be an integer from 0 to 100"),
            ("h-selector", "rke2_numa_drain_pod_selector 'app=vllm --force' is not a label selector"),
            ("h-digits", "rke2_numa_drain_timeout '99999"),
            ("h-super", "rke2_numa_drain_timeout '\u00b2' must be an integer from 1 to 14400 s"),
            ("h-cap", "rke2_numa_max_unavailable '99999"),
            ("h-prove", "rke2_numa_prove 'maybe' must be true or false"),
            ("h-template", 'rke2_numa_drain_timeout "<cannot template: '),
            ("fleet", "inventory host name 'fleet' cannot name its report files"),
            ("Gpu_B", "rke2_numa_node_name 'Gpu_B' is not a Node name")]:
        assert "%s: the inputs of rolling are refused, nothing was read or written: " % host in text, host
        assert words in text, (host, re.findall(r"%s: .{0,400}" % re.escape(host), text)[:2] or text[-3000:])
    assert "Traceback" not in text and "4300 digits" not in text and "Exceeds the limit" not in text
    assert re.search(r"h-template: [^\n]*rke2_numa_drain_timeout \"<cannot template: [^\n]*rke2_numa_no_such_variable", text), \
        "the template's error named, with its variable"
    assert "rke2_numa_drain_timeout '%s... must be an integer from 1 to 14400 s" % ("9" * 76) in text, "shown short, named"
    assert "rke2_numa_max_unavailable '%s... must be a number of nodes from 1 to 10000" % ("9" * 76) in text
    assert cluster.calls() == [], "not one API call"
    assert tree(root) == before and not reports.exists()
    for name in ("gpu-a", "other-1", "other-2"):
        node = cluster.node(name)
        assert not node["unschedulable"] and not node.get("annotations") and len(node["pods"]) == 3


def test_a_stale_marker_on_a_healthy_node_is_cleared_not_rolled(cluster, tmp_path):
    """Our cordoned/failed markers on a compliant, schedulable Node (an interrupted run that never cordoned, or an admin
    who uncordoned it): the roll clears them and neither cordons nor drains the node."""
    root = make_node(tmp_path / "gpu-a", **SPEC)
    comply(root, make_plan(read_topology(str(root))))
    with cluster.edit("gpu-a") as node:
        node["annotations"] = {CORDONED: "true", FAILED: "drain of gpu-a failed", "team": "ml"}
    before = tree(root)
    out = run(cluster, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)})
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    node = cluster.node("gpu-a")
    assert node["annotations"] == {"team": "ml"} and not node["unschedulable"]
    assert node["evictions"] == [] and len(node["pods"]) == 3, "not drained"
    writes = [c["summary"] for c in cluster.calls() if is_write(c)]
    assert writes == [{"verb": "patch", "node": "gpu-a", "patchType": "merge", "annotations": {CORDONED: None, FAILED: None},
                       "code": 200}], writes
    assert "compliant (skipped): gpu-a" in text
    assert tree(root) == before


def drain_play(cluster, tmp_path, **variables):
    """The drain role (its main entry point: the checks, the cordon, the drain) on localhost, for Node gpu-a."""
    playbook = tmp_path / "drain.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Drain", "hosts": "localhost", "gather_facts": False,
        "vars": dict({"rke2_numa_node_name": "gpu-a", "rke2_numa_kubectl": KUBECTL, "rke2_numa_kubeconfig": cluster.kubeconfig,
                      "rke2_numa_drain_timeout": 20}, **variables),
        "roles": [{"role": "maitred.rke2_numa.drain"}]}]))
    env = dict(cluster.env, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_DEPRECATION_WARNINGS="false")
    return subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           "-e", "ansible_python_interpreter=%s" % sys.executable, str(playbook)],
                          env=env, capture_output=True, text=True, check=False)


def kured_lock(*nodes):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    locks = [{"nodeID": n, "metadata": {"unschedulable": False}, "created": now, "TTL": 0} for n in nodes]
    return json.dumps({"maxOwners": 2, "locks": locks})


@pytest.mark.parametrize("case, words", [
    ("kured", "gpu-a is being maintained by another tool: kured holds its reboot lock on other-1 (kured/kured-release): "
              "one node out of service at a time"),
    ("autoscaler", "gpu-a is being maintained by another tool: the cluster autoscaler is deleting it (taint ToBeDeletedByClusterAutoscaler)"),
    ("upgrade", "gpu-a is being maintained by another tool: system-upgrade-controller is upgrading it "
                "(cattle-system/apply-rke2-agent-on-gpu-a-1a2b3)"),
    ("named-kured-missing", "rke2_numa_kured_daemonset ops/kured: no such DaemonSet"),
    ("rancher-applying", "gpu-a is being maintained by another tool: rancher-system-agent is applying a plan "
                         "(/var/lib/rancher/agent/interlock/applyinator-active, for "),
    ("rancher-cordon", "gpu-a is being maintained by another tool: the Node is cordoned and Rancher manages it: Rancher's drain "
                       "may be at work"),
])
def test_no_node_is_taken_out_while_another_maintainer_is_at_work(cluster, tmp_path, case, words):
    """kured rebooting another node (its multi-node lock, installed by a chart in its own namespace), the autoscaler
    deleting the node, an upgrade in progress: refused before the cordon, nothing written to the API."""
    variables = {}
    if case == "kured":
        (tmp_path / "state" / "daemonsets.json").write_text(json.dumps([
            {"namespace": "kured", "name": "kured-release", "labels": {"app.kubernetes.io/name": "kured"},
             "annotations": {"weave.works/kured-node-lock": kured_lock("other-1")}}]))
    elif case == "autoscaler":
        with cluster.edit("gpu-a") as node:
            node["taints"] = [{"key": "ToBeDeletedByClusterAutoscaler", "value": "1796104000", "effect": "NoSchedule"}]
    elif case == "upgrade":
        with cluster.edit("gpu-a") as node:
            node["pods"].append({"namespace": "cattle-system", "name": "apply-rke2-agent-on-gpu-a-1a2b3", "owner": "Job",
                                 "labels": {"upgrade.cattle.io/node": "gpu-a", "upgrade.cattle.io/plan": "rke2-agent"}})
    elif case.startswith("rancher"):
        # a Rancher-provisioned node: its files under the node's root, where the drain role's read looks
        root = tmp_path / "node"
        (root / "etc/rancher/rke2/config.yaml.d").mkdir(parents=True)
        (root / "etc/rancher/rke2/config.yaml.d/50-rancher.yaml").write_text('{"node-label": ["rke.cattle.io/machine=m-1"]}')
        variables.update(rke2_numa_boot_root=str(root), rke2_numa_config_path=str(root / "etc/rancher/rke2/config.yaml"))
        if case == "rancher-applying":
            (root / "var/lib/rancher/agent/interlock").mkdir(parents=True)
            (root / "var/lib/rancher/agent/interlock/applyinator-active").write_text("")
        else:
            with cluster.edit("gpu-a") as node:
                node["unschedulable"] = True
    else:
        variables["rke2_numa_kured_daemonset"] = "ops/kured"
    out = drain_play(cluster, tmp_path, **variables)
    text = out.stdout + out.stderr
    assert out.returncode != 0 and words in text, text[-3000:]
    assert [c for c in cluster.calls() if is_write(c)] == [], "no API write"
    assert cluster.node("gpu-a")["unschedulable"] is (case == "rancher-cordon")


def test_an_expired_kured_lock_does_not_hold_the_roll(cluster, tmp_path):
    old = json.dumps({"nodeID": "other-1", "created": "2026-01-01T00:00:00Z", "TTL": 3600 * 10 ** 9})
    (tmp_path / "state" / "daemonsets.json").write_text(json.dumps([
        {"namespace": "kube-system", "name": "kured", "annotations": {"weave.works/kured-node-lock": old}}]))
    out = drain_play(cluster, tmp_path)
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    node = cluster.node("gpu-a")
    assert node["unschedulable"] and node["annotations"] == {CORDONED: "true"}
    assert [p["name"] for p in node["pods"]] == ["rke2-canal-gpu-a", "kube-proxy-gpu-a"], "drained: DaemonSet and mirror pods stay"


def test_a_roll_holds_kureds_lock_while_it_works_and_gives_it_back(cluster, tmp_path):
    """kured installed, its lock free: the roll takes kured's lock (kured's format, with the DaemonSet's
    resourceVersion) before it touches any Node, and gives it back at the end - whatever became of the node (here
    it stops before the drain: the unit-test host has no systemd). kured's own live lock is never overwritten
    (test_maintainers: no claim while kured holds it)."""
    root = make_node(tmp_path / "gpu-a", **SPEC)   # not compliant: to roll
    declared = tmp_path / "state" / "daemonsets.json"
    declared.write_text(json.dumps([{"namespace": "kube-system", "name": "kured", "labels": {"app.kubernetes.io/name": "kured"}}]))
    out = run(cluster, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)}, rke2_numa_prove=False)
    text = out.stdout + out.stderr
    writes = [c["summary"] for c in sorted(cluster.calls(), key=lambda c: c["time"]) if is_write(c)]
    ds_writes = [w for w in writes if w.get("daemonset") == "kube-system/kured"]
    assert len(ds_writes) == 2, (writes, text[-3000:])
    held = json.loads(ds_writes[0]["annotations"]["weave.works/kured-node-lock"])
    roll = re.search(r"roll (roll-[0-9]{8}-[0-9]{6}-[0-9a-f]{8}) took the Lease", text).group(1)
    assert held["nodeID"] == "rke2-numa.maitred.io/roll/" + roll and held["TTL"] == (30 * 60 + 600) * 10 ** 9, held
    assert "roll %s:" % roll in text, "the summary names the roll"
    assert ds_writes[1]["annotations"] == {"weave.works/kured-node-lock": None}, "given back"
    assert writes.index(ds_writes[0]) == 0 and writes.index(ds_writes[1]) == len(writes) - 1, writes
    assert "annotations" not in json.loads(declared.read_text())[0]


@pytest.mark.parametrize("by", ["end", "duration"])
def test_a_roll_the_window_stops_is_not_a_success(cluster, tmp_path, by):
    """Too little time left for a node - the window's end 5 min away, or a window of 5 min from the roll's start (a
    nightly schedule's rke2_numa_window_minutes): no node starts, nothing is written, and the run fails naming what is
    left."""
    root = make_node(tmp_path / "gpu-a", **SPEC)   # not compliant: it needs a roll
    end = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    window = {"rke2_numa_window_end": end} if by == "end" else {"rke2_numa_window_minutes": 5}
    before = tree(root)
    out = run(cluster, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)}, rke2_numa_node_minutes=30, **window)
    text = out.stdout + out.stderr
    assert out.returncode == 2, text[-3000:]
    assert "stopping: the maintenance window ends in" in text
    assert "the roll stopped: 1 node not rolled: gpu-a (the maintenance window)" in text and "remaining: gpu-a" in text
    assert [c for c in cluster.calls() if is_write(c)] == [] and tree(root) == before
    assert lease_given_back(cluster), lease_writes(cluster)


def test_a_node_the_apply_chain_would_refuse_is_not_drained(cluster, tmp_path):
    """A drop-in whose plain kubelet-arg replaces config.yaml's: the merge can never reach the kubelet, so the
    rke2_config write would be refused after the drain. The roll skips the node as blocked, saying why, before any
    cordon - no API write, node files unchanged - and the run is not a success."""
    root = make_node(tmp_path / "gpu-a", **SPEC)
    (root / "etc/rancher/rke2/config.yaml.d").mkdir()
    (root / "etc/rancher/rke2/config.yaml.d/50-site.yaml").write_text("kubelet-arg:\n  - max-pods=250\n")
    before = tree(root)
    out = run(cluster, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)})
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode == 2, text[-6000:]
    assert "gpu-a: BLOCKED: " in text and "50-site.yaml sets kubelet-arg, which replaces the earlier files'" in text, text[-6000:]
    assert "blocked (not rolled, fix by hand): gpu-a" in text and "the roll stopped: gpu-a: blocked - " in text
    writes = [c["summary"] for c in cluster.calls() if is_write(c)]
    assert not [w for w in writes if w.get("verb") in ("evict", "delete") or "unschedulable" in json.dumps(w)], writes
    assert not cluster.node("gpu-a").get("unschedulable") and cluster.node("gpu-a")["evictions"] == []
    assert tree(root) == before


def test_a_partial_drain_is_not_a_drain(cluster, tmp_path):
    """--pod-selector evicts only the pods it selects and kubectl exits 0: the GPU pod it did not select still runs, so
    the node is not drained (the kubelet reset must not run under it): refused, left cordoned with the reason."""
    with cluster.edit("gpu-a") as node:
        node["pods"].append({"namespace": "ml", "name": "vllm-0", "owner": "StatefulSet", "labels": {"app": "vllm"}})
        for pod in node["pods"]:
            if pod["name"].startswith("sample-workload"):
                pod["labels"] = {"app": "batch"}
    out = drain_play(cluster, tmp_path, rke2_numa_drain_pod_selector="app=batch")
    text = out.stdout + out.stderr
    assert out.returncode != 0, text[-3000:]
    assert ("the drain of gpu-a left pods that are neither DaemonSet nor mirror pods: ml/vllm-0 (StatefulSet) - the kubelet "
            "state is not reset under running pods") in text
    node = cluster.node("gpu-a")
    assert node["unschedulable"] and node["annotations"][FAILED] == "drained partially: workload pods are still on the node"
    assert [p["name"] for p in node["pods"]] == ["rke2-canal-gpu-a", "kube-proxy-gpu-a", "vllm-0"], "only the selected pod was evicted"
    assert "TASK [maitred.rke2_numa.drain : The node is drained]" not in text, "rke2_numa_node_drained is never set"


def test_a_failed_drain_says_what_it_evicted_and_names_only_the_real_blocker(cluster, tmp_path):
    """kubectl drain evicts web-abc, retries vllm-1 after its budget's 429 and evicts it, and gives up on vllm-0 at the
    timeout: the failure names vllm-0 alone as the blocker and says which pods were evicted - never "nothing on the
    node was changed" after evictions; the node is uncordoned again and carries no marker of ours."""
    with cluster.edit("gpu-a") as node:
        node["pods"] += [{"namespace": "ml", "name": "web-abc", "owner": "ReplicaSet"},
                         {"namespace": "ml", "name": "vllm-1", "owner": "StatefulSet", "pdb": "vllm", "pdbRefusals": 1},
                         {"namespace": "ml", "name": "vllm-0", "owner": "StatefulSet", "pdb": "vllm"}]
    out = drain_play(cluster, tmp_path, rke2_numa_drain_timeout=6)
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode != 0, text[-3000:]
    assert ("drain of gpu-a failed (uncordoned again): blocked by ml/vllm-0 - its PodDisruptionBudget refused the eviction until "
            "the drain timed out, global timeout reached: 6s; evicted before it stopped:") in text, text[-3000:]
    moved = ["default/sample-workload-gpu-a", "ml/vllm-1", "ml/web-abc"]
    assert ", ".join(moved) + " (rescheduled elsewhere)" in text and "nothing on the node was changed" not in text
    node = cluster.node("gpu-a")
    assert sorted(p for e in node["evictions"] for p in e["pods"]) == moved
    assert not node.get("unschedulable") and CORDONED not in (node.get("annotations") or {})


def gpu_pod(name, gpus):
    return {"namespace": "ml", "name": name, "owner": "StatefulSet",
            "spec": {"containers": [{"name": "vllm", "image": "vllm",
                                     "resources": {"requests": {"cpu": "4", "nvidia.com/gpu": str(gpus)},
                                                   "limits": {"cpu": "4", "nvidia.com/gpu": str(gpus)}}}]}}


@pytest.mark.parametrize("free", [1, 2], ids=["no-room", "room"])
def test_a_drain_that_would_leave_gpu_pods_pending_is_not_started(cluster, tmp_path, free):
    """gpu-a runs a 2-GPU pod; the rest of the fleet has `free` GPUs: with 1 the roll stops before the cordon, naming
    the pod; with 2 it goes on (to the preflight, which needs a real node: not asserted here)."""
    root = make_node(tmp_path / "gpu-a", **SPEC)
    for name in ("gpu-a", "other-1", "other-2"):
        with cluster.edit(name) as node:
            node["allocatable"] = {"cpu": "32", "nvidia.com/gpu": "2" if name != "other-2" else "0"}
            node["capacity"] = dict(node["allocatable"])
    with cluster.edit("gpu-a") as node:
        node["pods"].append(gpu_pod("vllm-0", 2))
    with cluster.edit("other-1") as node:
        node["pods"].append(gpu_pod("vllm-1", 2 - free))
    out = run(cluster, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)}, rke2_numa_prove=False)
    text = out.stdout + out.stderr
    words = ("draining gpu-a would leave 1 GPU pod Pending: ml/vllm-0 (2 GPUs) - the rest of the fleet has 1 nvidia.com/gpu free "
             "on Ready, schedulable Nodes; not drained (rke2_numa_allow_pending_pods=true drains it anyway)")
    assert out.returncode == 2, text[-3000:]
    if free == 1:
        assert words in text and "failed: gpu-a" in text
        assert [c for c in cluster.calls() if is_write(c)] == [] and not cluster.node("gpu-a")["unschedulable"]
        assert lease_writes(cluster) == [("create", 201), ("update", 200), ("update", 200)], "taken, renewed for the batch, given back"
        assert lease_given_back(cluster)
    else:
        assert "draining gpu-a would leave" not in text and "TASK [maitred.rke2_numa.kubelet_reset : " in text


def test_a_node_that_does_not_run_its_plan_loses_our_labels_even_when_it_is_not_rolled(cluster, tmp_path):
    """gpu-a lost its pinning (not compliant) and its GPU pod would find no room elsewhere: the roll stops before the
    cordon, but our capacity labels go first - a nodeAffinity on them must stop sending pods there. Other labels stay."""
    root = make_node(tmp_path / "gpu-a", **SPEC)
    ours = {"rke2-numa.maitred.io/plan": "0123456789abcdef", "rke2-numa.maitred.io/max-pod-gpus": "1",
            "rke2-numa.maitred.io/hugepages-1gi-per-node": "4"}
    for name in ("gpu-a", "other-1", "other-2"):
        with cluster.edit(name) as node:
            node["allocatable"] = {"cpu": "32", "nvidia.com/gpu": "2" if name == "gpu-a" else "0"}
            node["capacity"] = dict(node["allocatable"])
    with cluster.edit("gpu-a") as node:
        node["labels"].update(ours)
        node["pods"].append(gpu_pod("vllm-0", 2))
    others = {name: cluster.node(name)["labels"] for name in ("other-1", "other-2")}
    out = run(cluster, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)}, rke2_numa_labels_via="kubectl", rke2_numa_prove=False)
    text = out.stdout + out.stderr
    assert out.returncode == 2 and "draining gpu-a would leave 1 GPU pod Pending" in text, text[-3000:]
    assert cluster.node("gpu-a")["labels"] == {"gpu": "true", "kubernetes.io/hostname": "gpu-a"}
    assert {name: cluster.node(name)["labels"] for name in others} == others
    (patch,) = [c for c in cluster.calls() if is_write(c)]
    assert patch["path"] == "/api/v1/nodes/gpu-a" and not cluster.node("gpu-a")["unschedulable"]


def test_labels_of_another_plan_are_fixed_in_place_without_a_drain(cluster, tmp_path):
    """gpu-a runs its plan, but its Node still carries our labels of an earlier plan (labels published with kubectl):
    they would send pods where they do not fit. The check reads them with the pods (one read), calls the node not
    compliant, and the roll relabels it in place: one label patch, no cordon, no drain, its files untouched. (The old
    code never looked at the Node's labels: compliant, skipped, the stale labels kept.)"""
    root = make_node(tmp_path / "gpu-a", **SPEC)
    plan = make_plan(read_topology(str(root)))
    comply(root, plan)
    wanted = numa_labels(plan)
    with cluster.edit("gpu-a") as node:
        node["labels"].update(wanted, **{"rke2-numa.maitred.io/plan": "0123456789abcdef",
                                         "rke2-numa.maitred.io/hugepages-2mi-per-node": "512"})
    before = tree(root)
    out = run(cluster, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)}, rke2_numa_labels_via="kubectl", rke2_numa_prove=False)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-3000:]
    assert "the Node's NUMA labels differ from this plan's: rke2-numa.maitred.io/hugepages-2mi-per-node, rke2-numa.maitred.io/plan" in text
    assert "fixed in place (no drain): gpu-a" in text, text[-3000:]
    node = cluster.node("gpu-a")
    assert node["labels"] == dict(wanted, gpu="true", **{"kubernetes.io/hostname": "gpu-a"})
    assert not node["unschedulable"] and node["evictions"] == [] and tree(root) == before
    writes = [c["path"] for c in cluster.calls() if is_write(c)]
    assert writes == ["/api/v1/nodes/gpu-a"], writes
    again = run(cluster, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)}, rke2_numa_labels_via="kubectl", rke2_numa_prove=False)
    assert again.returncode == 0 and "compliant (skipped): gpu-a" in again.stdout, again.stdout[-3000:]


def test_kured_not_checked_when_set_empty(cluster, tmp_path):
    """rke2_numa_kured_daemonset: "" (kured is not installed): no DaemonSet read, the drain goes on."""
    out = drain_play(cluster, tmp_path, rke2_numa_kured_daemonset="")
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    assert not [c for c in cluster.calls() if c["path"] == "/apis/apps/v1/daemonsets"] and cluster.node("gpu-a")["unschedulable"]


@pytest.mark.parametrize("pod, words", [
    ({"namespace": "kube-system", "name": "helm-install-rke2-ingress-nginx-x7k2p", "owner": "Job", "phase": "Succeeded"},
     "kube-system/helm-install-rke2-ingress-nginx-x7k2p (Succeeded)"),
    ({"namespace": "kube-system", "name": "coredns-5d4f8b7c9-x2k4q", "owner": "ReplicaSet", "labels": {"k8s-app": "kube-dns"}},
     "kube-system/coredns-5d4f8b7c9-x2k4q (Running)"),
])
def test_a_node_whose_drain_would_evict_the_clusters_own_pods_is_refused_before_its_cordon(cluster, tmp_path, pod, words):
    """kubectl drain evicts a kube-system pod - a finished one too ("any finished pod can be removed") - after every
    other pod of the node, and the identity's policy refuses it: the drain failed with the workloads moved for nothing.
    Refused before the cordon, naming the pod; nothing written."""
    with cluster.edit("gpu-a") as node:
        node["pods"].append(pod)
    out = drain_play(cluster, tmp_path)
    text = out.stdout + out.stderr
    assert out.returncode != 0 and "the drain of gpu-a would evict %s: a roll never evicts the cluster's own pods" % words in text, \
        text[-3000:]
    assert [c for c in cluster.calls() if is_write(c)] == [] and not cluster.node("gpu-a")["unschedulable"]
    assert cluster.node("gpu-a")["evictions"] == []
