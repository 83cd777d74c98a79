# -*- coding: utf-8 -*-
"""The kubectl stand-in: node state in files, kubectl's messages and exit codes, a log of every call."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import threading
import time

import pytest

STANDINS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "standins")
KUBECTL_PATH = os.path.join(STANDINS, "kubectl", "kubectl.py")


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


kubectl = _load("kubectl_standin", KUBECTL_PATH)
rke2 = _load("rke2_standin_for_kubectl", os.path.join(STANDINS, "rke2", "rke2.py"))


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    """A state folder with node n1 (Ready, the pods the rke2 stand-in seeds) and n2 (not Ready)."""
    monkeypatch.setenv("KUBECTL_STANDIN_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("KUBECTL_STANDIN_POLL_SECONDS", "0.02")
    monkeypatch.delenv("KUBECTL_STANDIN_LOG", raising=False)
    for name, ready in (("n1", True), ("n2", False)):
        with rke2.locked_node(str(tmp_path), name) as box:
            node = rke2.new_node(name)
            node["ready"] = ready
            box["node"] = node
    return tmp_path


def run(capsys, *argv):
    code = kubectl.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def node_file(cluster, name):
    with open(os.path.join(str(cluster), "nodes", name + ".json")) as handle:
        return json.load(handle)


def calls(cluster):
    with open(os.path.join(str(cluster), "kubectl.log")) as handle:
        return [json.loads(line) for line in handle]


def test_get_node_json(cluster, capsys):
    code, out, dummy = run(capsys, "get", "node", "n1", "-o", "json")
    assert code == 0
    node = json.loads(out)
    assert node["kind"] == "Node" and node["metadata"]["name"] == "n1"
    assert "unschedulable" not in node["spec"], "the API server leaves false out"
    ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
    assert [(c["status"], c["reason"]) for c in ready] == [("True", "KubeletReady")]


@pytest.mark.parametrize("form", [
    ["-o", 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'],
    ['-o=jsonpath={.status.conditions[?(@.type=="Ready")].status}'],
    ['--output=jsonpath={.status.conditions[?(@.type=="Ready")].status}'],
    ["-o", "jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}'"],
])
def test_get_ready_with_jsonpath(cluster, capsys, form):
    assert run(capsys, "get", "node", "n1", *form)[:2] == (0, "True")
    assert run(capsys, "get", "node", "n2", *form)[:2] == (0, "Unknown")


def test_jsonpath_other_fields(cluster, capsys):
    run(capsys, "cordon", "n1")
    assert run(capsys, "get", "node/n1", "-o", "jsonpath={.spec.unschedulable}")[1] == "true"
    assert run(capsys, "get", "nodes", "-o", "jsonpath={.items[*].metadata.name}")[1] == "n1 n2"
    assert run(capsys, "get", "node", "n1", "-o", "jsonpath={.metadata.name}:{.status.nodeInfo.kubeletVersion}")[1] == "n1:v1.33.1+rke2r1"


def test_stale_ready_after_the_kubelet_stops(cluster, capsys):
    with rke2.locked_node(str(cluster), "n1") as box:
        box["node"].update(ready=False, notReadySince=time.time(), staleReadySeconds=30)
    path = ["-o", 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']
    assert run(capsys, "get", "node", "n1", *path)[1] == "True", "the node controller has not noticed yet"
    with rke2.locked_node(str(cluster), "n1") as box:
        box["node"]["notReadySince"] = time.time() - 31
    assert run(capsys, "get", "node", "n1", *path)[1] == "Unknown"


def test_cordon_and_uncordon(cluster, capsys):
    assert run(capsys, "cordon", "n1") == (0, "node/n1 cordoned\n", "")
    assert node_file(cluster, "n1")["unschedulable"] is True
    assert run(capsys, "cordon", "n1")[1] == "node/n1 already cordoned\n"
    node = json.loads(run(capsys, "get", "node", "n1", "-o", "json")[1])
    assert node["spec"]["unschedulable"] is True
    assert {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}.items() <= node["spec"]["taints"][0].items()
    assert run(capsys, "uncordon", "n1") == (0, "node/n1 uncordoned\n", "")
    assert run(capsys, "uncordon", "n1")[1] == "node/n1 already uncordoned\n"
    assert node_file(cluster, "n1")["unschedulable"] is False


def test_drain_needs_the_flags_for_daemonsets_and_emptydir(cluster, capsys):
    code, out, err = run(capsys, "drain", "n1", "--timeout=60s")
    assert code == 1
    assert out == "node/n1 cordoned\n"
    assert 'error: unable to drain node "n1" due to error: cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): ' \
           "kube-system/rke2-canal-n1" in err
    assert "cannot delete Pods with local storage (use --delete-emptydir-data to override): default/sample-workload-n1" in err
    node = node_file(cluster, "n1")
    assert node["unschedulable"] is True, "kubectl cordons before it evicts: a failed drain leaves the node cordoned"
    assert node["evictions"] == []


def test_drain_evicts_and_records(cluster, capsys):
    code, out, dummy = run(capsys, "drain", "n1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout", "120s")
    assert code == 0
    assert out.splitlines() == ["node/n1 cordoned", "Warning: ignoring DaemonSet-managed Pods: kube-system/rke2-canal-n1",
                                "evicting pod default/sample-workload-n1", "pod/sample-workload-n1 evicted", "node/n1 drained"]
    node = node_file(cluster, "n1")
    assert node["unschedulable"] is True
    assert [e["pods"] for e in node["evictions"]] == [["default/sample-workload-n1"]]
    assert sorted(p["name"] for p in node["pods"]) == ["kube-proxy-n1", "rke2-canal-n1"], "DaemonSet and static pods stay"
    code, out, dummy = run(capsys, "drain", "n1", "--ignore-daemonsets", "--delete-emptydir-data")
    assert code == 0 and out.splitlines()[0] == "node/n1 already cordoned"
    assert [e["pods"] for e in node_file(cluster, "n1")["evictions"]] == [["default/sample-workload-n1"], []]


def test_drain_unmanaged_pod_needs_force(cluster, capsys):
    with rke2.locked_node(str(cluster), "n1") as box:
        box["node"]["pods"].append({"namespace": "default", "name": "bare"})
    code, dummy, err = run(capsys, "drain", "n1", "--ignore-daemonsets", "--delete-emptydir-data")
    assert code == 1 and "cannot delete Pods that declare no controller (use --force to override): default/bare" in err
    assert run(capsys, "drain", "n1", "--ignore-daemonsets", "--delete-emptydir-data", "--force")[0] == 0


def test_drain_unknown_flag(cluster, capsys):
    code, dummy, err = run(capsys, "drain", "n1", "--ignore-daemonset")
    assert code == 1 and "unknown flag: --ignore-daemonset" in err
    assert node_file(cluster, "n1")["unschedulable"] is False


@pytest.mark.parametrize("argv", [
    ["get", "node", "x", "-o", "json"], ["cordon", "x"], ["uncordon", "x"], ["drain", "x", "--ignore-daemonsets"],
    ["wait", "--for=condition=Ready", "node/x", "--timeout=1s"],
])
def test_unknown_node(cluster, capsys, argv):
    assert run(capsys, *argv) == (1, "", 'Error from server (NotFound): nodes "x" not found\n')
    assert not os.path.exists(os.path.join(str(cluster), "nodes", "x.json"))


def test_wait_for_ready(cluster, capsys):
    assert run(capsys, "wait", "--for=condition=Ready", "node/n1", "--timeout=30s") == (0, "node/n1 condition met\n", "")
    code, dummy, err = run(capsys, "wait", "--for=condition=Ready", "node/n2", "--timeout=200ms")
    assert code == 1 and err == "error: timed out waiting for the condition on nodes/n2\n"

    def become_ready():
        time.sleep(0.2)
        with rke2.locked_node(str(cluster), "n2") as box:
            box["node"]["ready"] = True

    thread = threading.Thread(target=become_ready)
    thread.start()
    started = time.time()
    assert run(capsys, "wait", "node", "n2", "--for", "condition=Ready", "--timeout=5s")[0] == 0
    thread.join()
    assert 0.15 < time.time() - started < 3


def test_a_kubeconfig_that_does_not_exist_is_an_error(cluster, capsys, tmp_path):
    missing = str(tmp_path / "rke2.yaml")
    assert run(capsys, "--kubeconfig", missing, "get", "node", "n1") == (1, "", "error: stat %s: no such file or directory\n" % missing)
    open(missing, "w").close()
    assert run(capsys, "--kubeconfig=" + missing, "get", "node", "n1", "-o", "name") == (0, "node/n1\n", "")


def test_wait_for_not_ready(cluster, capsys):
    assert run(capsys, "wait", "--for=condition=Ready=Unknown", "node/n2", "--timeout=1s")[0] == 0


def test_get_name_table_and_list(cluster, capsys):
    assert run(capsys, "get", "node", "n1", "-o", "name")[1] == "node/n1\n"
    run(capsys, "cordon", "n2")
    table = run(capsys, "get", "nodes")[1].splitlines()
    assert table[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert table[1].split()[:2] == ["n1", "Ready"]
    assert table[2].split()[:2] == ["n2", "NotReady,SchedulingDisabled"]
    kubeconfig = os.path.join(str(cluster), "rke2.yaml")
    open(kubeconfig, "w").close()
    listing = json.loads(run(capsys, "get", "nodes", "-o", "json", "--kubeconfig", kubeconfig)[1])
    assert listing["kind"] == "List" and [i["metadata"]["name"] for i in listing["items"]] == ["n1", "n2"]


def test_every_call_is_logged_in_order(cluster, capsys, monkeypatch):
    run(capsys, "cordon", "n1")
    run(capsys, "drain", "n1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=60s")
    run(capsys, "get", "node", "missing")
    run(capsys, "uncordon", "n1")
    log = calls(cluster)
    assert [(c["argv"][0], c["rc"]) for c in log] == [("cordon", 0), ("drain", 0), ("get", 1), ("uncordon", 0)]
    assert log[1]["argv"] == ["drain", "n1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=60s"]
    assert all(c["time"] <= c["end"] for c in log)
    assert [c["time"] for c in log] == sorted(c["time"] for c in log)
    assert all(c["host"] for c in log)
    other = cluster / "elsewhere.log"
    monkeypatch.setenv("KUBECTL_STANDIN_LOG", str(other))
    run(capsys, "get", "node", "n1", "-o", "name")
    assert len(other.read_text().splitlines()) == 1


def test_kubectl_keeps_rke2s_ready_and_rke2_keeps_kubectls_cordon(cluster, capsys, monkeypatch):
    monkeypatch.setenv("RKE2_STANDIN_STATE_DIR", str(cluster))
    agent = rke2.Agent(str(cluster / "config.yaml"))
    agent.node_name, agent.config = "n1", {}
    run(capsys, "cordon", "n1")
    agent.set_node(ready=False)
    agent.set_node(ready=True, register=True)
    node = node_file(cluster, "n1")
    assert node["unschedulable"] is True and node["ready"] is True


@pytest.mark.parametrize("text, seconds", [("30s", 30), ("2m", 120), ("1m30s", 90), ("500ms", 0.5), ("1h", 3600), ("5", 5)])
def test_durations(text, seconds):
    assert kubectl.parse_duration(text) == seconds


def test_bad_duration(cluster, capsys):
    code, dummy, err = run(capsys, "wait", "--for=condition=Ready", "node/n1", "--timeout=soon")
    assert code == 1 and 'invalid duration "soon"' in err


def test_the_script_runs_through_its_shell_header(cluster):
    env = dict(os.environ, KUBECTL_STANDIN_STATE_DIR=str(cluster))
    out = subprocess.run([os.path.join(STANDINS, "kubectl", "kubectl"), "get", "node", "n1", "-o",
                          'jsonpath={.status.conditions[?(@.type=="Ready")].status}'],
                         env=env, capture_output=True, text=True, timeout=10, check=False)
    assert (out.returncode, out.stdout) == (0, "True")
    out = subprocess.run([sys.executable, KUBECTL_PATH, "get", "node", "zz"], env=env, capture_output=True, text=True, timeout=10, check=False)
    assert (out.returncode, out.stderr) == (1, 'Error from server (NotFound): nodes "zz" not found\n')
