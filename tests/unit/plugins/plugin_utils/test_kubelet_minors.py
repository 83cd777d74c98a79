# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each node planned for the kubelet it runs, judged by the rules of that kubelet's minor (kubelet_rules.KUBELET_MINORS):
the version read from the API or the host, the refusals that changed between 1.30 and 1.38, and the CPU Manager
checkpoints of 1.36 (V3, podEntries) and 1.37 (V4, data)."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils import kubelet_checkpoints
from ansible_collections.maitred.rke2_numa.plugins.module_utils.rke2_runtime import runtime_version
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import kubelet_rules
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_state import reset_reasons
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import (
    API_VERSION_SOURCE,
    PlanError,
    make_plan,
    node_kubelet,
    plan_version,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.playbook_inputs import kubelet_versions
from ansible_collections.maitred.rke2_numa.tests.fixtures.hwloc_dumps import HWLOC_DUMPS
from ansible_collections.maitred.rke2_numa.tests.unit.plugins.plugin_utils.test_kubelet_state import TOPO, mem

LEVELS = {None: 0, "alpha": 1, "beta": 2, "stable": 3}


def refusal(fn, *args, **kwargs):
    with pytest.raises(PlanError) as info:
        fn(*args, **kwargs)
    return info.value


# ---------------------------------------------------------------- the table


def test_the_table_has_every_minor_from_the_oldest_to_the_newest_and_no_option_ever_goes_back():
    minors = sorted(kubelet_rules.KUBELET_MINORS)
    assert minors == [(1, m) for m in range(30, 39)]
    assert kubelet_rules.OLDEST_MINOR <= kubelet_rules.DEFAULT_MINOR <= kubelet_rules.NEWEST_MINOR
    for kind in ("cpu_options", "topology_options"):
        names = set(o for m in minors for o in kubelet_rules.KUBELET_MINORS[m][kind])
        for name in names:
            levels = [LEVELS[kubelet_rules.KUBELET_MINORS[m][kind].get(name)] for m in minors]
            assert levels == sorted(levels), (kind, name, levels)
    for earlier, later in zip(minors, minors[1:]):
        gone = set(kubelet_rules.KUBELET_MINORS[earlier]["gates"]) - set(kubelet_rules.KUBELET_MINORS[later]["gates"])
        assert not gone, (later, gone)
    assert [kubelet_rules.KUBELET_MINORS[m]["checkpoint"] for m in minors] == ["v2"] * 6 + ["v3", "v4", "v4"]


# ---------------------------------------------------------------- each rule that changed, per minor

# (minor, kubelet args beside the static policy, the kubelet's refusal or None) - one case per change of the table
OPTION_CASES = [
    # max-allowable-numa-nodes: unknown before 1.31, beta 1.31-1.34 (off with the beta gate off), stable from 1.35
    ((1, 30), ["topology-manager-policy-options=max-allowable-numa-nodes=8"],
     'unknown Topology Manager Policy option: "max-allowable-numa-nodes"'),
    ((1, 31), ["topology-manager-policy-options=max-allowable-numa-nodes=8"], None),
    ((1, 34), ["topology-manager-policy-options=max-allowable-numa-nodes=8", "feature-gates=TopologyManagerPolicyBetaOptions=false"],
     'Topology Manager Policy Beta-level Options not enabled, but option "max-allowable-numa-nodes" provided'),
    ((1, 35), ["topology-manager-policy-options=max-allowable-numa-nodes=8", "feature-gates=TopologyManagerPolicyBetaOptions=false"], None),
    # prefer-closest-numa-nodes: beta until 1.31, stable from 1.32
    ((1, 31), ["topology-manager-policy-options=prefer-closest-numa-nodes=true", "feature-gates=TopologyManagerPolicyBetaOptions=false"],
     'Topology Manager Policy Beta-level Options not enabled, but option "prefer-closest-numa-nodes" provided'),
    ((1, 32), ["topology-manager-policy-options=prefer-closest-numa-nodes=true", "feature-gates=TopologyManagerPolicyBetaOptions=false"], None),
    # full-pcpus-only: beta until 1.32, stable from 1.33
    ((1, 32), ["feature-gates=CPUManagerPolicyBetaOptions=false"],
     'CPU Manager Policy Beta-level Options not enabled, but option "full-pcpus-only" provided'),
    ((1, 33), ["feature-gates=CPUManagerPolicyBetaOptions=false"], None),
    # strict-cpu-reservation: unknown before 1.32, alpha 1.32, beta 1.33-1.34, stable from 1.35
    ((1, 31), ["cpu-manager-policy-options=strict-cpu-reservation=true"], 'unknown CPU Manager Policy option: "strict-cpu-reservation"'),
    ((1, 32), ["cpu-manager-policy-options=strict-cpu-reservation=true"],
     'CPU Manager Policy Alpha-level Options not enabled, but option "strict-cpu-reservation" provided'),
    ((1, 32), ["cpu-manager-policy-options=strict-cpu-reservation=true", "feature-gates=CPUManagerPolicyAlphaOptions=true"], None),
    ((1, 34), ["cpu-manager-policy-options=strict-cpu-reservation=true", "feature-gates=CPUManagerPolicyBetaOptions=false"],
     'CPU Manager Policy Beta-level Options not enabled, but option "strict-cpu-reservation" provided'),
    ((1, 35), ["cpu-manager-policy-options=strict-cpu-reservation=true", "feature-gates=CPUManagerPolicyBetaOptions=false"], None),
    # prefer-align-cpus-by-uncorecache: alpha 1.32-1.33, beta 1.34-1.35, stable from 1.36
    ((1, 33), ["cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true"],
     'CPU Manager Policy Alpha-level Options not enabled, but option "prefer-align-cpus-by-uncorecache" provided'),
    ((1, 34), ["cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true"], None),
    ((1, 35), ["cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true", "feature-gates=CPUManagerPolicyBetaOptions=false"],
     'CPU Manager Policy Beta-level Options not enabled, but option "prefer-align-cpus-by-uncorecache" provided'),
    ((1, 36), ["cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true", "feature-gates=CPUManagerPolicyBetaOptions=false"], None),
    # distribute-cpus-across-numa: alpha until 1.32, beta from 1.33
    ((1, 32), ["cpu-manager-policy-options=distribute-cpus-across-numa=true"],
     'CPU Manager Policy Alpha-level Options not enabled, but option "distribute-cpus-across-numa" provided'),
    ((1, 33), ["cpu-manager-policy-options=distribute-cpus-across-numa=true"], None),
    # distribute-cpus-across-cores: from 1.31 (KEP-4176 said 1.30; v1.30.0-beta.0's constants lack it)
    ((1, 30), ["cpu-manager-policy-options=distribute-cpus-across-cores=true", "feature-gates=CPUManagerPolicyAlphaOptions=true"],
     'unknown CPU Manager Policy option: "distribute-cpus-across-cores"'),
    # a gate the minor's kubelet does not have yet (featuregate Set)
    ((1, 35), ["feature-gates=PodLevelResourceManagers=true"], "unrecognized feature gate: PodLevelResourceManagers"),
    ((1, 36), ["feature-gates=PodLevelResourceManagers=true"], None),
    # every minor: an option no kubelet knows, a value ParseBool refuses, options that exclude each other
    ((1, 37), ["cpu-manager-policy-options=pin-harder=true"], 'unknown CPU Manager Policy option: "pin-harder"'),
    ((1, 37), ["cpu-manager-policy-options=full-pcpus-only=yes"],
     'bad value for option "full-pcpus-only": strconv.ParseBool: parsing "yes": invalid syntax'),
    ((1, 37), ["cpu-manager-policy-options=distribute-cpus-across-cores=true", "feature-gates=CPUManagerPolicyAlphaOptions=true"],
     "static policy options full-pcpus-only and distribute-cpus-across-cores can not be used at the same time"),
]


@pytest.mark.parametrize("minor, extra, refused", OPTION_CASES, ids=["%d.%d-%d" % (c[0] + (i,)) for i, c in enumerate(OPTION_CASES)])
def test_each_minor_refuses_what_its_kubelet_refuses_in_its_words(minor, extra, refused):
    args = ["cpu-manager-policy=static", "cpu-manager-policy-options=full-pcpus-only=true", "reserved-cpus=0,8",
            "topology-manager-policy=single-numa-node"] + extra
    found = kubelet_rules.kubelet_refusals(args, TOPO, minor)
    assert found == ([refused] if refused else []), found


def test_a_plan_with_an_option_the_minor_lacks_is_refused_with_that_minor_s_message_and_made_where_it_has_it():
    option = ["cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true"]
    err = refusal(make_plan, TOPO, kubernetes_version="1.33", extra_kubelet_args=option)
    assert err.rule == "kubelet-rules"
    assert 'CPU Manager Policy Alpha-level Options not enabled, but option "prefer-align-cpus-by-uncorecache" provided' in str(err)
    for version in ("1.34", "1.37"):
        plan = make_plan(TOPO, kubernetes_version=version, extra_kubelet_args=option)
        assert option[0] in plan["kubelet_args"] and plan["kubernetes"]["minor"] == version


# ---------------------------------------------------------------- which kubelet a host is planned for


def test_a_fleet_in_the_middle_of_an_upgrade_plans_each_node_for_its_own_minor():
    """1.33, 1.35 and 1.37 nodes, no version given: each plan is its node's minor, the source said; an option only
    the newer kubelets have (here prefer-align-cpus-by-uncorecache without the alpha gate: 1.34+) is planned for
    1.35 and 1.37 and refused for 1.33 with that kubelet's words."""
    option = ["cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true"]
    fleet = {"gpu-33": "v1.33.6+rke2r1", "gpu-35": "v1.35.3+rke2r1", "gpu-37": "v1.37.2+rke2r1"}
    plans = {}
    for node, version in fleet.items():
        kubelet = node_kubelet(api_version=version)
        plans[node] = make_plan(TOPO, node_version=kubelet)
        assert plans[node]["kubernetes"] == {"version": version, "minor": version[1:5], "source": API_VERSION_SOURCE}
    assert plans["gpu-33"]["kubelet_args"] == plans["gpu-37"]["kubelet_args"], "the defaults every kubelet takes"
    assert option[0] in make_plan(TOPO, node_version=node_kubelet(fleet["gpu-35"]), extra_kubelet_args=option)["kubelet_args"]
    assert option[0] in make_plan(TOPO, node_version=node_kubelet(fleet["gpu-37"]), extra_kubelet_args=option)["kubelet_args"]
    err = refusal(make_plan, TOPO, node_version=node_kubelet(fleet["gpu-33"]), extra_kubelet_args=option)
    assert "Alpha-level Options not enabled" in str(err)


def test_a_given_version_that_is_not_the_node_s_is_refused_naming_both():
    err = refusal(make_plan, TOPO, kubernetes_version="1.33", node_version=node_kubelet("v1.37.2+rke2r1"))
    assert err.rule == "kubernetes-version"
    assert str(err) == ("kubernetes-version: kubernetes_version 1.33 is not the kubelet this node runs: v1.37.2+rke2r1 (its "
                        "Node's status.nodeInfo.kubeletVersion). Leave kubernetes_version unset to plan each node for the "
                        "kubelet it runs")
    plan = make_plan(TOPO, kubernetes_version="v1.37.0", node_version=node_kubelet("v1.37.2+rke2r1"))
    assert plan["kubernetes"] == {"version": "v1.37.0", "minor": "1.37", "source": "kubernetes_version"}


def test_the_api_s_kubelet_comes_before_the_host_s_runtime_and_neither_means_the_default():
    runtime = {"version": "v1.36.4+rke2r1", "path": "/var/lib/rancher/rke2/bin",
               "link": "/var/lib/rancher/rke2/data/v1.36.4-rke2r1-0123456789ab/bin"}
    assert node_kubelet("v1.37.2+rke2r1", runtime)["version"] == "v1.37.2+rke2r1", "the kubelet that runs and reports"
    assert node_kubelet(None, runtime) == {"version": "v1.36.4+rke2r1", "source": "the RKE2 runtime on the host "
                                           "(/var/lib/rancher/rke2/bin -> /var/lib/rancher/rke2/data/v1.36.4-rke2r1-0123456789ab/bin)"}
    assert node_kubelet(None, {"version": None, "error": "no RKE2"}) is None
    default = plan_version(None, None)
    assert default["minor"] == "1.33" and default["source"].startswith("no kubelet version known")


@pytest.mark.parametrize("version, words", [("1.29", "older than the oldest kubelet whose rules this collection knows (1.30)"),
                                            ("v1.39.0", "newer than the newest kubelet whose rules this collection knows (1.38)")])
def test_a_minor_outside_the_table_is_refused(version, words):
    for given, node in ((version, None), (None, node_kubelet(version))):
        err = refusal(plan_version, given, node)
        assert err.rule == "kubernetes-version" and words in str(err)


def test_the_kubelet_of_each_node_is_read_from_the_api_reply():
    reply = {"kind": "List", "items": [
        {"kind": "Node", "metadata": {"name": "gpu-a"}, "status": {"nodeInfo": {"kubeletVersion": "v1.37.2+rke2r1"}}},
        {"kind": "Node", "metadata": {"name": "gpu-b"}, "status": {"nodeInfo": {}}},
        {"kind": "Pod", "metadata": {"name": "vllm"}, "status": {"nodeInfo": {"kubeletVersion": "v9.9.9"}}}]}
    assert kubelet_versions(reply) == {"gpu-a": "v1.37.2+rke2r1"}


def test_the_rke2_runtime_is_read_from_where_its_bin_points(tmp_path):
    data = tmp_path / "var/lib/rancher/rke2/data"
    (data / "v1.37.2-rke2r1-0123456789ab/bin").mkdir(parents=True)
    os.symlink(str(data / "v1.37.2-rke2r1-0123456789ab/bin"), str(tmp_path / "var/lib/rancher/rke2/bin"))
    found = runtime_version(root=str(tmp_path))
    assert found["version"] == "v1.37.2+rke2r1" and found["error"] is None
    os.unlink(str(tmp_path / "var/lib/rancher/rke2/bin"))
    os.symlink("/var/lib/rancher/rke2/data/4f0a55c0ffee0123456789abcdef0123456789abcdef0123456789abcdef0123/bin",
               str(tmp_path / "var/lib/rancher/rke2/bin"))
    found = runtime_version(root=str(tmp_path))
    assert found["version"] is None and "holds no version (a runtime image given by digest)" in found["error"]
    assert "RKE2 is not installed there" in runtime_version(root=str(tmp_path / "elsewhere"))["error"]


# ---------------------------------------------------------------- the checkpoints of 1.36 and 1.37

V3 = {"policyName": "static", "defaultCpuSet": "0-1,4-5,8-9,12-13", "entries": {"pod-b": {"app": "6-7"}},
      "podEntries": {"pod-a": {"cpuSet": "2-3,10-11"}, "pod-b": {"cpuSet": "6-7,14-15"}}, "checksum": 1234}


def _read(tmp_path, data):
    path = tmp_path / "cpu_manager_state"
    path.write_text(json.dumps(data))
    return kubelet_checkpoints.cpu_manager(str(path))


def _plan(version, *extra):
    return make_plan(TOPO, hugepages_per_node=4, hugepages_nodes="all", kubernetes_version=version, extra_kubelet_args=list(extra))


def test_a_v4_checkpoint_is_read_from_its_data_as_the_kubelet_reads_it(tmp_path):
    inline = dict(V3, defaultCpuSet="0-15", podEntries={}, entries={}, checksum=0)
    state = _read(tmp_path, dict(inline, data=json.dumps(dict((k, V3[k]) for k in ("policyName", "defaultCpuSet", "entries", "podEntries"))),
                                 dataChecksum=42))
    assert (state["format"], state["valid"], state["default_cpu_set"], state["assigned_cpus"], state["pod_cpus"]) == \
        ("v4", True, "0-1,4-5,8-9,12-13", "6-7", "2-3,6-7,10-11,14-15")
    assert state["pod_entries"] == {"pod-a": "2-3,10-11", "pod-b": "6-7,14-15"}
    broken = _read(tmp_path, dict(inline, data="{not json", dataChecksum=1))
    assert not broken["valid"] and "failed to deserialize cpu manager checkpoint data" in broken["error"]


def test_pod_level_cpus_are_in_state_only_where_the_kubelet_counts_them(tmp_path):
    """1.37 (PodLevelResourceManagers on): the pods' CPU sets complete the CPUs in state - nothing to reset (the old
    code saw 2-3,10-11,14-15 missing and reset a healthy node). 1.36 (the gate off by default) counts them only with
    --feature-gates=PodLevelResourceManagers=true."""
    state = _read(tmp_path, dict(V3, data=json.dumps(dict((k, V3[k]) for k in ("policyName", "defaultCpuSet", "entries", "podEntries"))),
                                 checksum=0, dataChecksum=1))
    memory = mem(exists=False)
    assert reset_reasons(_plan("1.37"), TOPO, state, memory) == []
    assert reset_reasons(_plan("1.37", "feature-gates=PodLevelResourceManagers=false"), TOPO, state, memory) == [
        'current set of available CPUs "0-15" doesn\'t match with CPUs in state "0-1,4-9,12-13"']
    assert reset_reasons(_plan("1.36", "feature-gates=PodLevelResourceManagers=true"), TOPO, state, memory) == []


def test_a_v3_checkpoint_before_the_kubelet_that_writes_it_is_corrupted_to_it(tmp_path):
    state = _read(tmp_path, V3)
    assert state["format"] == "v3"
    memory = mem(exists=False)
    assert reset_reasons(_plan("1.35"), TOPO, state, memory) == ["could not restore state from checkpoint: checkpoint is corrupted"]
    assert reset_reasons(_plan("1.36", "feature-gates=PodLevelResourceManagers=true"), TOPO, state, memory) == []


# ---------------------------------------------------------------- pods with their own budget (pod.spec.resources)

POD_LEVEL_POD = {"metadata": {"namespace": "ml", "name": "vllm-0"},
                 "spec": {"nodeName": "gpu-a", "resources": {"requests": {"cpu": "8", "memory": "32Gi"}, "limits": {"cpu": "8", "memory": "32Gi"}},
                          "containers": [{"name": "vllm", "resources": {"limits": {"nvidia.com/gpu": "1"}}},
                                         {"name": "metrics", "resources": {"requests": {"cpu": "500m"}}},
                                         {"name": "log-shipper"}]},
                 "status": {"phase": "Running", "qosClass": "Guaranteed"}}


def _audit(pod, version, *extra):
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.compliance import finish_pod_audit, pod_level_resource_managers
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.prove import audit_pods
    plan = make_plan(TOPO, kubernetes_version=version, extra_kubelet_args=list(extra))
    return finish_pod_audit(audit_pods({"items": [pod]})["gpu-a"], pod_level_resource_managers(plan))


def test_a_gpu_pod_guaranteed_by_its_own_budget_is_pinned_where_the_kubelet_pins_it_and_flagged_where_not():
    """1.37 (PodLevelResourceManagers on): the pod's 8 whole CPUs are one NUMA-aligned set its containers share - a
    sidecar with 500m or none is no trap (the old code flagged metrics' 500m). 1.35 and 1.36 (off): the managers skip
    the pod - flagged with why (the old code said nothing)."""
    assert _audit(POD_LEVEL_POD, "1.37") == {"unpinned": [], "topology_errors": [], "pod_level": ["ml/vllm-0"]}
    for version, extra in (("1.35", ()), ("1.36", ()), ("1.37", ("feature-gates=PodLevelResourceManagers=false",))):
        audit = _audit(POD_LEVEL_POD, version, *extra)
        assert len(audit["unpinned"]) == 1, (version, audit)
        assert audit["unpinned"][0].startswith("ml/vllm-0 requests nvidia.com/gpu with pod-level resources (spec.resources), which this "
                                               "node's kubelet does not pin: PodLevelResourceManagers is off")
    assert _audit(POD_LEVEL_POD, "1.36", "feature-gates=PodLevelResourceManagers=true")["unpinned"] == []
    fraction = json.loads(json.dumps(POD_LEVEL_POD))
    fraction["spec"]["resources"] = {"requests": {"cpu": "7500m", "memory": "32Gi"}, "limits": {"cpu": "7500m", "memory": "32Gi"}}
    assert _audit(fraction, "1.37")["unpinned"] == [
        "ml/vllm-0 requests nvidia.com/gpu with pod-level cpu 7500m: the CPU Manager pins a pod-level budget only of whole CPUs, "
        "the pod runs on the shared pool"]
    burstable = json.loads(json.dumps(POD_LEVEL_POD))
    burstable["status"]["qosClass"] = "Burstable"
    assert "is Burstable (requests != limits)" in _audit(burstable, "1.37")["unpinned"][0]


def test_a_pod_s_own_budget_is_what_a_drain_must_find_room_for():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.capacity import gpu_pods
    assert gpu_pods("gpu-a", [POD_LEVEL_POD], "nvidia.com/gpu") == [("ml/vllm-0", 1, 8)]


# ---------------------------------------------------------------- the kubelet's configuration file

@pytest.mark.parametrize("name", HWLOC_DUMPS)
def test_the_drop_in_holds_the_plans_settings_as_the_kubelet_reads_its_file(hwloc_root, name):
    """Every managed flag has its KubeletConfiguration field; the file's settings, read back as flags, are the plan's
    (the same kubelet rules judge both) - real machines."""
    import yaml
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_config import config_kubelet_args, kubelet_config, kubelet_config_text
    assert set(kubelet_rules.MANAGED_KUBELET_FIELDS) == set(kubelet_rules.MANAGED_KUBELET_FLAGS)
    topology = read_topology(hwloc_root(name))
    try:
        plan = make_plan(topology, allow_many_numa_nodes=True)
    except PlanError:
        pytest.skip("no plan for %s" % name)
    config = kubelet_config(plan["kubelet_args"])
    assert yaml.safe_load(kubelet_config_text(plan["kubelet_args"])) == config
    assert config["apiVersion"] == "kubelet.config.k8s.io/v1beta1" and config["kind"] == "KubeletConfiguration"
    planned = kubelet_rules.parse_kubelet_args(plan["kubelet_args"])
    assert kubelet_rules.parse_kubelet_args(config_kubelet_args(config)) == dict(
        (f, v) for f, v in planned.items() if f in kubelet_rules.MANAGED_KUBELET_FIELDS)
    if "reserved-memory" in planned:
        assert all(set(r) == {"numaNode", "limits"} and isinstance(r["numaNode"], int) for r in config["reservedMemory"])
    if "eviction-hard" in planned:
        assert config["evictionHard"]["memory.available"] == "500Mi", "keyed by signal, the flag's < gone"


def test_topology_options_are_not_read_under_policy_none():
    """topologymanager NewManager returns before NewPolicyOptions when the policy is none (the rke2 stand-in agrees)."""
    args = ["topology-manager-policy=none", "topology-manager-policy-options=max-allowable-numa-nodes=8"]
    assert kubelet_rules.kubelet_refusals(args, TOPO, (1, 30)) == []
    assert kubelet_rules.kubelet_refusals(args[:1] + ["topology-manager-policy-options=max-allowable-numa-nodes=4"], TOPO, (1, 37)) == []


def test_a_plan_given_for_another_kubelet_is_another_host_s_plan():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import foreign_plan_error
    given = make_plan(TOPO, kubernetes_version="1.37")
    here = make_plan(TOPO, node_version=node_kubelet("v1.33.6+rke2r1"))
    error = foreign_plan_error(given, here)
    assert error.startswith("plan-host: the rke2_numa_plan given was made for Kubernetes 1.37, and this host's kubelet is 1.33")
    assert foreign_plan_error(make_plan(TOPO, kubernetes_version="1.33"), here) == ""


def test_a_node_version_that_is_not_one_is_named_as_the_node_s():
    err = refusal(make_plan, TOPO, node_version={"version": "unknown", "source": API_VERSION_SOURCE})
    assert err.rule == "kubernetes-version" and "'unknown' read from its Node's status.nodeInfo.kubeletVersion" in str(err)
    assert "rke2_numa_kubernetes_version must look like" not in str(err)


def test_a_release_candidate_s_runtime_is_read(tmp_path):
    data = tmp_path / "var/lib/rancher/rke2/data/v1.38.0-rc1-rke2r1-0123456789ab/bin"
    data.mkdir(parents=True)
    os.symlink(str(data), str(tmp_path / "var/lib/rancher/rke2/bin"))
    assert runtime_version(root=str(tmp_path))["version"] == "v1.38.0-rc1+rke2r1"


def test_the_gates_rke2_passes_today_count_beside_the_plan_s(tmp_path):
    """A 1.36 node whose config.yaml turns PodLevelResourceManagers on (a kubelet-arg the plan does not manage): its
    V3 checkpoint's pod CPU sets are in state, and its pod-level GPU pods pinned - the plan alone says neither."""
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.compliance import finish_pod_audit, pod_level_resource_managers
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.prove import audit_pods
    state = _read(tmp_path, V3)
    plan = _plan("1.36")
    running = ["--feature-gates=PodLevelResourceManagers=true", "--max-pods=250"]
    assert reset_reasons(plan, TOPO, state, mem(exists=False)) != []
    assert reset_reasons(plan, TOPO, state, mem(exists=False), running) == []
    audit = audit_pods({"items": [POD_LEVEL_POD]})["gpu-a"]
    assert finish_pod_audit(audit, pod_level_resource_managers(plan, running))["unpinned"] == []


def test_all_alpha_and_all_beta_set_the_gates_of_their_stage_not_named_themselves():
    """--feature-gates=AllAlpha=true enables every alpha gate (featuregate setUnsetAlphaGates): an alpha option of 1.33
    is taken; AllBeta=false turns the beta gates off - a beta option of 1.35 is refused - unless its gate is named."""
    option = "cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true"
    topology = {"cpus_online": "0-15", "cores": [[c, c + 8] for c in range(8)],
                "numa_nodes": [{"id": 0, "memory_kb": 8 * 1024 * 1024}, {"id": 1, "memory_kb": 8 * 1024 * 1024}]}
    base = ["cpu-manager-policy=static", "reserved-cpus=0,8", option]
    assert kubelet_rules.kubelet_refusals(base, topology, (1, 33))
    assert kubelet_rules.kubelet_refusals(base + ["feature-gates=AllAlpha=true"], topology, (1, 33)) == []
    assert kubelet_rules.kubelet_refusals(base + ["feature-gates=AllAlpha=true,CPUManagerPolicyAlphaOptions=false"], topology, (1, 33))
    assert kubelet_rules.kubelet_refusals(base, topology, (1, 35)) == []
    assert kubelet_rules.kubelet_refusals(base + ["feature-gates=AllBeta=false"], topology, (1, 35)) == [
        'CPU Manager Policy Beta-level Options not enabled, but option "prefer-align-cpus-by-uncorecache" provided']
    assert kubelet_rules.kubelet_refusals(base + ["feature-gates=AllBeta=false,CPUManagerPolicyBetaOptions=true"], topology, (1, 35)) == []
    assert kubelet_rules.feature_gates({"feature-gates": "AllBeta=true"}, (1, 36))["PodLevelResourceManagers"] is False
    assert kubelet_rules.feature_gates({"feature-gates": "AllAlpha=true"}, (1, 36))["PodLevelResourceManagers"] is True


def _stage(gate, minor):
    """Each tracked gate's pre-release stage by minor (pkg/features/kube_features.go at each release tag; KEP-2837
    PodLevelResources alpha 1.32, beta 1.34; KEP-5526 PodLevelResourceManagers alpha 1.36, beta 1.37)."""
    if gate.endswith("AlphaOptions"):
        return "alpha"
    if gate.endswith("BetaOptions"):
        return "beta"
    first_beta = {"PodLevelResources": (1, 34), "PodLevelResourceManagers": (1, 37)}[gate]
    return "beta" if minor >= first_beta else "alpha"


def test_each_tracked_gate_is_off_by_default_exactly_while_it_is_alpha():
    """What feature_gates' AllAlpha/AllBeta reading rests on: the table's defaults are the gates' stages."""
    for minor, entry in kubelet_rules.KUBELET_MINORS.items():
        for gate, default in entry["gates"].items():
            assert default == (_stage(gate, minor) == "beta"), (minor, gate)
