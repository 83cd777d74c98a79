# -*- coding: utf-8 -*-
"""Pods through both stand-ins: the real kubectl creates a probe pod on the API stand-in, the rke2 stand-in's kubelet
admits it (resource fit, Topology/CPU/Memory/Device Managers), runs its command and reports its log.

Each test runs one `rke2 agent` on a generated DGX H100 (2 NUMA nodes, 56 cores x 2 threads each, 4 H100 per node).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBECTL, wait_for

STANDINS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "standins")
RKE2_PATH = os.path.join(STANDINS, "rke2", "rke2.py")
KUBEAPI_PATH = os.path.join(STANDINS, "kubeapi", "kubeapi.py")
PYTHON = os.environ.get("KUBEAPI_STANDIN_PYTHON") or sys.executable
ARGS = ("cpu-manager-policy=static", "cpu-manager-policy-options=full-pcpus-only=true", "reserved-cpus=0,112",
        "memory-manager-policy=Static", "topology-manager-policy=single-numa-node", "topology-manager-scope=pod",
        "kube-reserved=memory=1Gi", "eviction-hard=memory.available<500Mi", "reserved-memory=0:memory=1024Mi;1:memory=500Mi")
SCRIPT = ("echo cpus=$(cat /sys/fs/cgroup/cpuset.cpus.effective); echo mems=$(cat /sys/fs/cgroup/cpuset.mems.effective); "
          "echo visible=$NVIDIA_VISIBLE_DEVICES; echo host=$HOSTNAME; if command -v nvidia-smi-standin-absent >/dev/null; then echo bus=x; fi")


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rke2 = _load("rke2_standin_for_pods", RKE2_PATH)
kubeapi = _load("kubeapi_standin_for_pods", KUBEAPI_PATH)
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="no kubectl client on PATH (the test runs the real one against the stand-ins)")


class Cluster:
    """The API stand-in and (optionally) one rke2 stand-in for node n1 on a DGX H100, sharing a cluster folder."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.state = str(tmp_path / "cluster")
        self.root = gen_sysfs.write_tree(gen_sysfs.samples()["dgx-h100"], str(tmp_path / "dgx-h100"))
        self.kubelet_dir = str(tmp_path / "kubelet")
        self.agent = None
        self.agent_log = None
        port_file = tmp_path / "port"
        self.api_err = open(str(tmp_path / "kubeapi.err"), "w")
        self.api = subprocess.Popen([PYTHON, KUBEAPI_PATH, "serve", "--state-dir", self.state, "--port", "0", "--port-file", str(port_file)],
                                    stdout=subprocess.DEVNULL, stderr=self.api_err)
        assert wait_for(port_file.exists, 15), "the API stand-in did not start"
        self.kubeconfig = str(tmp_path / "kubeconfig")
        with open(self.kubeconfig, "w") as handle:
            handle.write(kubeapi.kubeconfig("http://127.0.0.1:%d" % int(port_file.read_text())))
        (tmp_path / "home").mkdir()
        self.env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "kubeconfig")}
        self.env.update(HOME=str(tmp_path / "home"), NO_PROXY="127.0.0.1,localhost")

    def start_agent(self, args=ARGS, **environ):
        config = str(self.tmp / "config.yaml")
        with open(config, "w") as handle:
            handle.write("kubelet-arg:\n" + "".join("- %s\n" % a for a in args))
        env = dict(os.environ, RKE2_STANDIN_CONFIG=config, RKE2_STANDIN_SYSFS_ROOT=self.root, RKE2_STANDIN_STATE_DIR=str(self.tmp / "node"),
                   RKE2_STANDIN_CLUSTER_DIR=self.state, RKE2_STANDIN_KUBELET_DIR=self.kubelet_dir, RKE2_STANDIN_DATA_DIR=str(self.tmp / "data"),
                   RKE2_STANDIN_HEALTHZ_PORT="0", RKE2_STANDIN_NODE_NAME="n1", RKE2_STANDIN_KUBELET_RESTART_SECONDS="0.2", **environ)
        self.agent_log = open(str(self.tmp / "journal"), "a")
        self.agent = subprocess.Popen([sys.executable, RKE2_PATH, "agent"], env=env, stdout=self.agent_log, stderr=subprocess.STDOUT)
        assert wait_for(lambda: self.node().get("ready")), "the rke2 stand-in did not come up: %s" % self.journal()

    def stop_agent(self):
        self.agent.send_signal(signal.SIGTERM)
        assert self.agent.wait(10) == 0
        self.agent_log.close()
        self.agent = None

    def journal(self):
        try:
            return (self.tmp / "journal").read_text()
        except OSError:
            return ""

    def node(self):
        try:
            with open(os.path.join(self.state, "nodes", "n1.json")) as handle:
                return json.load(handle)
        except (OSError, ValueError):
            return {}

    def checkpoint(self, name):
        with open(os.path.join(self.kubelet_dir, name)) as handle:
            return json.load(handle)

    def kubectl(self, *argv):
        return subprocess.run([KUBECTL, "--kubeconfig", self.kubeconfig, "--cache-dir", str(self.tmp / "kube-cache")] + list(argv),
                              env=self.env, capture_output=True, text=True, timeout=60, check=False)

    def create(self, name, cpu="2", memory="256Mi", gpu="1", requests=None, node="n1", script=SCRIPT, expect=0):
        """A probe as the collection's role writes it; requests overrides (Burstable) the requests."""
        limits = {"cpu": cpu, "memory": memory}
        if gpu:
            limits["nvidia.com/gpu"] = gpu
        spec = {"restartPolicy": "Never", "tolerations": [{"operator": "Exists"}],
                "containers": [{"name": "probe", "image": "registry.example/probe:1", "command": ["sh", "-c", script],
                                "resources": {"requests": dict(limits, **(requests or {})), "limits": limits}}]}
        if node:
            spec["nodeName"] = node
        pod = {"apiVersion": "v1", "kind": "Pod", "spec": spec,
               "metadata": {"name": name, "namespace": "default", "labels": {"app.kubernetes.io/name": "rke2-numa-probe"}}}
        path = str(self.tmp / (name + ".json"))
        with open(path, "w") as handle:
            json.dump(pod, handle)
        out = self.kubectl("create", "--validate=false", "-f", path, "-o", "json")
        assert out.returncode == expect, out.stderr
        return json.loads(out.stdout) if out.returncode == 0 else out.stderr

    def pod(self, name):
        out = self.kubectl("get", "pod", name, "-o", "json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    def finished(self, name, timeout=10):
        def done():
            pod = self.pod(name)
            return pod if pod["status"].get("phase") in ("Succeeded", "Failed") else None

        pod = wait_for(done, timeout)
        assert pod, "the pod did not finish: %s" % self.pod(name)["status"]
        return pod

    def log(self, name):
        out = self.kubectl("logs", name, "-n", "default")
        assert out.returncode == 0, out.stderr
        return dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)

    def close(self):
        if self.agent is not None:
            self.stop_agent()
        self.api.send_signal(signal.SIGTERM)
        assert self.api.wait(10) == 0
        self.api_err.close()
        assert "Traceback" not in (self.tmp / "kubeapi.err").read_text()
        assert "Traceback" not in self.journal()


@pytest.fixture
def cluster(tmp_path):
    api = Cluster(tmp_path)
    yield api
    api.close()


def gpus_by_node(root):
    """GPU UUID -> NUMA node, from the sample's driver files and sysfs."""
    out = {}
    base = os.path.join(root, "proc", "driver", "nvidia", "gpus")
    for address in os.listdir(base):
        with open(os.path.join(base, address, "information")) as handle:
            uuid = re.search(r"GPU UUID:\s*(\S+)", handle.read()).group(1)
        with open(os.path.join(root, "sys", "bus", "pci", "devices", address, "numa_node")) as handle:
            out[uuid] = int(handle.read())
    return out


def node_cpus(root, node):
    with open(os.path.join(root, "sys", "devices", "system", "node", "node%d" % node, "cpulist")) as handle:
        return rke2.parse_cpulist(handle.read().strip())


def fresh_machine_state(cluster):
    topology = rke2.read_topology(cluster.root)
    return rke2.default_machine_state(topology, {0: {"memory": 1024 * 1024 ** 2}, 1: {"memory": 500 * 1024 ** 2}})


# ---------------------------------------------------------------- with a running kubelet

@needs_kubectl
def test_guaranteed_gpu_probe_is_numa_aligned_and_freed_on_delete(cluster):
    cluster.start_agent()
    created = cluster.create("rke2-numa-probe-n1-0")
    assert created["status"]["phase"] == "Pending" and created["status"]["qosClass"] == "Guaranteed"
    assert created["spec"]["dnsPolicy"] == "ClusterFirst" and created["spec"]["schedulerName"] == "default-scheduler"
    pod = cluster.finished("rke2-numa-probe-n1-0")
    assert pod["status"]["phase"] == "Succeeded"
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] == 0 and terminated["reason"] == "Completed"
    log = cluster.log("rke2-numa-probe-n1-0")
    cpus = rke2.parse_cpulist(log["cpus"])
    assert len(cpus) == 2 and cpus <= node_cpus(cluster.root, 0) and not cpus & {0, 112}, log
    assert len({frozenset(rke2.read_topology(cluster.root)["siblings"][c]) for c in cpus}) == 1, "one whole core"
    assert log["mems"] == "0" and log["host"] == "rke2-numa-probe-n1-0"
    assert gpus_by_node(cluster.root)[log["visible"]] == 0
    uid = pod["metadata"]["uid"]
    assert cluster.checkpoint("cpu_manager_state")["entries"] == {uid: {"probe": log["cpus"]}}
    memory = cluster.checkpoint("memory_manager_state")
    assert memory["entries"][uid]["probe"] == [{"numaAffinity": [0], "type": "memory", "size": 256 * 1024 ** 2}]
    assert memory["machineState"]["0"]["memoryMap"]["memory"]["reserved"] == 256 * 1024 ** 2
    record = [p for p in cluster.node()["pods"] if p["name"] == "rke2-numa-probe-n1-0"][0]
    assert record["assignment"]["numaNode"] == 0 and record["assignment"]["containers"]["probe"]["devices"] == [log["visible"]]
    node = json.loads(cluster.kubectl("get", "node", "n1", "-o", "json").stdout)
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "8" and node["status"]["allocatable"]["cpu"] == "222"

    out = cluster.kubectl("delete", "pod", "rke2-numa-probe-n1-0", "-n", "default", "--ignore-not-found", "--wait=true", "--timeout=60s")
    assert out.returncode == 0, out.stderr
    assert wait_for(lambda: "entries" not in cluster.checkpoint("cpu_manager_state"), 5), "the kubelet frees what the pod held"
    assert cluster.checkpoint("cpu_manager_state")["defaultCpuSet"] == "0-223"
    assert wait_for(lambda: "entries" not in cluster.checkpoint("memory_manager_state"), 5)
    assert rke2.machine_states_equal(cluster.checkpoint("memory_manager_state")["machineState"], fresh_machine_state(cluster))
    assert not os.listdir(str(cluster.tmp / "node" / "pods"))


@needs_kubectl
def test_checkpoints_with_running_pods_survive_a_restart(cluster):
    cluster.start_agent()
    cluster.create("long", script="echo started; sleep 60")
    assert wait_for(lambda: cluster.pod("long")["status"].get("phase") == "Running")
    assert wait_for(lambda: "started" in cluster.kubectl("logs", "long").stdout, 5), "the log grows while the container runs"
    cluster.stop_agent()
    pod = cluster.pod("long")
    assert pod["status"]["phase"] == "Failed", "the stand-in's containers stop with it"
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 137
    assert "entries" in cluster.checkpoint("cpu_manager_state") and "entries" in cluster.checkpoint("memory_manager_state")
    cfg = rke2.parse_kubelet_flags(["--" + a for a in ARGS])
    rke2.start_kubelet(cfg, rke2.read_topology(cluster.root), cluster.kubelet_dir, {})  # the restart checks accept them
    cluster.start_agent()
    cluster.create("next")
    assert cluster.finished("next")["status"]["phase"] == "Succeeded"
    assert list(cluster.checkpoint("cpu_manager_state")["entries"]) == [cluster.pod("next")["metadata"]["uid"]], \
        "the next allocation dropped the finished pod's entries"
    for name in ("long", "next"):
        assert cluster.kubectl("delete", "pod", name, "--wait=true", "--timeout=60s").returncode == 0
    assert wait_for(lambda: "entries" not in cluster.checkpoint("memory_manager_state"), 5)
    assert rke2.machine_states_equal(cluster.checkpoint("memory_manager_state")["machineState"], fresh_machine_state(cluster))


@needs_kubectl
def test_without_gpu_topology_the_gpu_comes_from_the_other_node(cluster):
    cluster.start_agent(RKE2_STANDIN_GPU_TOPOLOGY="false")
    cluster.create("probe")
    cluster.finished("probe")
    log = cluster.log("probe")
    assert rke2.parse_cpulist(log["cpus"]) <= node_cpus(cluster.root, 0) and log["mems"] == "0"
    assert gpus_by_node(cluster.root)[log["visible"]] == 1, "misaligned, as a node whose device plugin publishes no topology"


@needs_kubectl
def test_admission_refusals_and_the_shared_pool(cluster):
    cluster.start_agent()
    started = time.time()
    cluster.create("too-big", cpu="200")
    cluster.create("odd", cpu="1")
    cluster.create("burstable", requests={"memory": "128Mi"})
    big = cluster.finished("too-big", timeout=5)
    assert time.time() - started < 5
    assert big["status"]["reason"] == "TopologyAffinityError"
    assert big["status"]["message"] == "Pod was rejected: Resources cannot be allocated with Topology locality"
    assert "containerStatuses" not in big["status"]
    odd = cluster.finished("odd")
    assert (odd["status"]["reason"], odd["status"]["message"]) == (
        "SMTAlignmentError", "Pod was rejected: SMT Alignment Error: requested 1 cpus not multiple cpus per core = 2")
    out = cluster.kubectl("logs", "odd")
    assert out.returncode != 0 and 'container "probe" in pod "odd" is not available' in out.stderr
    burst = cluster.finished("burstable")
    assert burst["status"]["qosClass"] == "Burstable" and burst["status"]["phase"] == "Succeeded"
    log = cluster.log("burstable")
    assert log["cpus"] == "0-223" and log["mems"] == "0-1", "the shared pool, reserved CPUs included"
    assert gpus_by_node(cluster.root)[log["visible"]] == 0
    table = cluster.kubectl("get", "pods").stdout
    assert re.search(r"too-big\s+0/1\s+TopologyAffinityError", table) and re.search(r"burstable\s+0/1\s+Completed", table)
    audit = json.loads(cluster.kubectl("get", "pods", "-A", "-o", "json").stdout)
    classes = {p["metadata"]["name"]: p["status"].get("qosClass") for p in audit["items"]}
    assert classes["too-big"] == "Guaranteed" and classes["burstable"] == "Burstable"
    huge = cluster.create("huge", cpu="2", memory="3000Gi", gpu="")
    assert huge["status"]["qosClass"] == "Guaranteed"
    huge = cluster.finished("huge")
    assert huge["status"]["reason"] == "OutOfmemory"
    assert huge["status"]["message"].startswith("Pod was rejected: Node didn't have enough resource: memory, requested: 3221225472000, used: 0, capacity: ")


# ---------------------------------------------------------------- the API alone

@needs_kubectl
def test_logs_before_the_container_starts_and_pods_no_kubelet_runs(cluster):
    with rke2.locked_node(cluster.state, "n1") as box:
        box["node"] = dict(rke2.new_node("n1"), ready=True)  # a node file, no kubelet running
    cluster.create("waiting")
    pod = cluster.pod("waiting")
    assert pod["status"]["phase"] == "Pending"
    assert pod["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    out = cluster.kubectl("logs", "waiting")
    assert out.returncode != 0
    assert 'container "probe" in pod "waiting" is waiting to start: ContainerCreating' in out.stderr
    cluster.create("unbound", node=None)
    cluster.create("elsewhere", node="n9")
    with open(os.path.join(cluster.state, "pending-pods.json")) as handle:
        assert sorted(p["name"] for p in json.load(handle)["pods"]) == ["elsewhere", "unbound"]
    assert cluster.pod("unbound")["status"] == {"phase": "Pending", "qosClass": "Guaranteed"}
    assert cluster.kubectl("logs", "unbound").stdout == ""
    assert 'nodes "n9" not found' in cluster.kubectl("logs", "elsewhere").stderr
    names = cluster.kubectl("get", "pods", "-o", "name").stdout.split()
    assert {"pod/waiting", "pod/unbound", "pod/elsewhere"} <= set(names)
    for name in ("unbound", "elsewhere", "waiting"):
        assert cluster.kubectl("delete", "pod", name, "--wait=true", "--timeout=30s").returncode == 0
    assert cluster.kubectl("get", "pod", "unbound").returncode != 0


@needs_kubectl
def test_the_api_servers_validation(cluster):
    with rke2.locked_node(cluster.state, "n1") as box:
        box["node"] = dict(rke2.new_node("n1"), ready=True)
    err = cluster.create("fraction", gpu="0.5", expect=1)
    assert ('spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer' in err
            and 'spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "500m": must be an integer' in err)
    err = cluster.create("unequal", requests={"nvidia.com/gpu": "2"}, expect=1)
    assert 'spec.containers[0].resources.requests: Invalid value: "2": must be equal to nvidia.com/gpu limit of 1' in err
    err = cluster.create("more", requests={"cpu": "2500m"}, expect=1)
    assert 'spec.containers[0].resources.requests: Invalid value: "2500m": must be less than or equal to cpu limit of 2' in err
    err = cluster.create("garbled", cpu="2x", expect=1)
    assert "quantities must match the regular expression" in err and "(BadRequest)" in err
    cluster.create("once")
    err = cluster.create("once", expect=1)
    assert 'pods "once" already exists' in err and "(AlreadyExists)" in err
    status, body = request(cluster, "POST", "/api/v1/namespaces/default/pods", {
        "metadata": {"name": "pages"}, "spec": {"containers": [{"name": "c", "image": "i", "resources": {
            "limits": {"hugepages-2Mi": "2Mi"}}}]}})
    assert status == 422 and body["details"]["causes"] == [
        {"reason": "FieldValueForbidden", "message": "Forbidden: HugePages require cpu or memory", "field": "spec.containers[0].resources"}]
    status, body = request(cluster, "POST", "/api/v1/namespaces/default/pods?dryRun=All", {
        "metadata": {"name": "dry"}, "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]}})
    assert status == 201 and body["status"]["qosClass"] == "BestEffort" and body["spec"]["restartPolicy"] == "Always"
    assert "dry" not in json.dumps(cluster.node()["pods"])


def request(cluster, method, path, body):
    import http.client
    port = int((cluster.tmp / "port").read_text())
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request(method, path, body=json.dumps(body), headers={"Content-Type": "application/json", "Accept": "application/json",
                                                                     "Authorization": "Bearer " + kubeapi.ADMIN_TOKEN})
    response = connection.getresponse()
    data = json.loads(response.read().decode())
    connection.close()
    return response.status, data


def create_pod_level(cluster, name, cpu="4", memory="256Mi"):
    """A Guaranteed pod by its own budget (spec.resources), its container without requests - the pod-level probe."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
           "spec": {"nodeName": "n1", "restartPolicy": "Never",
                    "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}},
                    "containers": [{"name": "probe", "image": "registry.example/probe:1", "command": ["sh", "-c", SCRIPT]}]}}
    path = str(cluster.tmp / (name + ".json"))
    with open(path, "w") as handle:
        json.dump(pod, handle)
    out = cluster.kubectl("create", "--validate=false", "-f", path, "-o", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@needs_kubectl
@pytest.mark.parametrize("version, pinned", [("v1.37.2+rke2r1", True), ("v1.35.3+rke2r1", False)])
def test_a_pod_with_its_own_budget_is_pinned_where_the_pod_level_managers_run(cluster, version, pinned):
    """KEP-5526: on 1.37 (PodLevelResourceManagers on) the pod's budget is one NUMA-aligned set of whole CPUs - the
    pod's entry in the checkpoint, its container on it (the pod's shared pool); on 1.35 the pod is Guaranteed by its
    budget but the CPU and Memory Managers skip it: the shared pool, every memory node."""
    cluster.start_agent(RKE2_STANDIN_VERSION=version)
    created = create_pod_level(cluster, "pod-level")
    assert created["status"]["qosClass"] == "Guaranteed", "the budget alone decides the QoS class"
    pod = cluster.finished("pod-level")
    assert pod["status"]["phase"] == "Succeeded", pod["status"]
    log = cluster.log("pod-level")
    cpus, uid = rke2.parse_cpulist(log["cpus"]), pod["metadata"]["uid"]
    state = rke2.read_cpu_checkpoint(os.path.join(cluster.kubelet_dir, "cpu_manager_state"), True, "v4" if pinned else "v2")
    if pinned:
        assert len(cpus) == 4 and cpus <= node_cpus(cluster.root, 0) and not cpus & {0, 112}, log
        assert state["podEntries"] == {uid: {"cpuSet": log["cpus"]}} and state["entries"] == {uid: {"probe": log["cpus"]}}
        assert log["mems"] == "0"
        assert not cpus & rke2.parse_cpulist(state["defaultCpuSet"])
    else:
        assert len(cpus) > 100 and log["mems"] == "0-1", log
        assert not state.get("podEntries") and not state.get("entries")
    # the next admission frees what the finished pod held (removeStaleState), its pod entry with it
    cluster.create("after", cpu="2", gpu=None)
    cluster.finished("after")
    state = rke2.read_cpu_checkpoint(os.path.join(cluster.kubelet_dir, "cpu_manager_state"), True, "v4" if pinned else "v2")
    assert uid not in (state.get("podEntries") or {}) and uid not in (state.get("entries") or {})


# ---------------------------------------------------------------- pieces

@pytest.mark.parametrize("resources, qos", [
    ({}, "BestEffort"),
    ({"limits": {"cpu": "2", "memory": "1Gi"}}, "Guaranteed"),
    ({"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": "1"}}, "Guaranteed"),
    ({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}}, "Burstable"),
    ({"limits": {"cpu": "2"}}, "Burstable"),
    ({"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}, "BestEffort"),
])
def test_qos_class_as_the_api_server_computes_it(resources, qos):
    spec = {"containers": [{"name": "c", "resources": resources}]}
    assert kubeapi.pod_qos(spec) == qos
    assert rke2.pod_qos(spec) == qos


@pytest.mark.parametrize("budget, qos", [
    ({"limits": {"cpu": "4", "memory": "1Gi"}}, "Guaranteed"),
    ({"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "4", "memory": "1Gi"}}, "Burstable"),
    ({"limits": {"cpu": "4"}}, "Burstable"),
])
def test_a_pod_s_own_budget_alone_decides_its_qos_class(budget, qos, monkeypatch):
    """ComputePodQOS with pod-level resources: the containers' (a sidecar without requests here) do not count - from
    1.34, where PodLevelResources is on; a 1.33 kubelet reads the containers' only."""
    spec = {"resources": budget, "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}, {"name": "sidecar"}]}
    assert kubeapi.pod_qos(spec) == qos
    monkeypatch.setattr(rke2, "MINOR", 34)
    assert rke2.pod_qos(spec) == qos
    monkeypatch.setattr(rke2, "MINOR", 33)
    assert rke2.pod_qos(spec) == "BestEffort"


# ---------------------------------------------------------------- Node Feature Discovery on the node

@needs_kubectl
def test_nfd_labels_the_node_from_its_features_and_removes_what_it_no_longer_has(cluster):
    features = cluster.tmp / "features.d"
    features.mkdir()
    (features / "rke2-numa").write_text("# a comment\nrke2-numa.maitred.io/max-pod-gpus=4\nrke2-numa.maitred.io/plan=abc\nplain\n")
    (features / ".hidden").write_text("rke2-numa.maitred.io/hidden=1\n")
    cluster.start_agent(RKE2_STANDIN_NFD_FEATURES_DIR=str(features), RKE2_STANDIN_NFD_INTERVAL="0.5")

    def labels():
        node = json.loads(cluster.kubectl("get", "node", "n1", "-o", "json").stdout)["metadata"]
        return node.get("labels") or {}, (node.get("annotations") or {}).get("nfd.node.kubernetes.io/feature-labels")

    assert wait_for(lambda: labels()[0].get("rke2-numa.maitred.io/plan") == "abc", 10), labels()
    found, tracked = labels()
    assert found["rke2-numa.maitred.io/max-pod-gpus"] == "4" and found["feature.node.kubernetes.io/plain"] == "true"
    assert "rke2-numa.maitred.io/hidden" not in found
    assert tracked == "plain,rke2-numa.maitred.io/max-pod-gpus,rke2-numa.maitred.io/plan"
    assert cluster.kubectl("label", "node", "n1", "team=ml").returncode == 0
    (features / "rke2-numa").unlink()
    assert wait_for(lambda: "rke2-numa.maitred.io/plan" not in labels()[0], 10), labels()
    found, tracked = labels()
    assert found["team"] == "ml" and tracked is None and not [k for k in found if k.startswith("rke2-numa.maitred.io/")]
