# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node labels for scheduling: on every sample machine `make demo` plans (with the
intent of inventory/sample.yml) and on every real hwloc dump, each label is a valid
Kubernetes label and says what the plan's NUMA table says - the biggest pod one NUMA
node takes fits, one more GPU, CPU core, GiB or hugepage fits nowhere. Then the NFD
feature file as NFD's local source reads it, and the kubectl label arguments."""

from __future__ import annotations

import copy
import os
import re

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.filter.node_labels import rke2_numa_numa_labels
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import kubelet_rules
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import (
    NFD_FILE_LIMIT,
    LabelError,
    hugepages_label,
    label_changes,
    labels_missing,
    nfd_features,
    nfd_held_labels,
    numa_labels,
    owned_label,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import PlanError, fit_pod_shapes, make_plan
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import GIB
from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs
from ansible_collections.maitred.rke2_numa.tests.fixtures.hwloc_dumps import HWLOC_DUMPS

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
P = "rke2-numa.maitred.io/"
KEYS = {P + "numa-nodes", P + "max-pod-cpus", P + "max-pod-memory-gi", P + "max-pod-gpus", P + "plan"}


def sample_intents():
    """host -> numa_plan options, as inventory/sample.yml gives them to `make demo` (group vars, then host vars)."""
    with open(os.path.join(REPO, "inventory", "sample.yml")) as f:
        group = yaml.safe_load(f)["rke2_numa_samples"]

    def options(variables):
        return dict((k[len("rke2_numa_"):], v) for k, v in (variables or {}).items()
                    if k.startswith("rke2_numa_") and k != "rke2_numa_sysfs_root")

    return dict((host, dict(options(group["vars"]), **options(hv))) for host, hv in group["hosts"].items())


INTENTS = sample_intents()


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    base = tmp_path_factory.mktemp("samples")
    return dict((name, read_topology(gen_sysfs.write_tree(spec, str(base / name))))
                for name, spec in gen_sysfs.samples().items())


def test_the_inventory_plans_every_sample():
    assert sorted(INTENTS) == sorted(gen_sysfs.samples())


def check_labels(plan, topology):
    """The labels of ``plan`` are valid and agree with its NUMA table; returns them."""
    labels = numa_labels(plan)
    tables = plan["numa_tables"]
    # valid: the kubelet's (apimachinery's) rules, and the plain limits spelled out
    for key, value in labels.items():
        assert isinstance(value, str)
        assert kubelet_rules.node_label_error("%s=%s" % (key, value)) is None, (key, value)
        prefix, name = key.split("/")
        assert prefix == "rke2-numa.maitred.io" and len(name) <= 63 and len(value) <= 63
        assert re.match(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", name) and re.match(r"^[0-9a-f]+$", value), (key, value)
        assert owned_label(key), key
    # agreement with the table: max-pod-* all from the one NUMA node with the most GPUs (then CPUs, memory, pages)
    best = max(tables, key=lambda t: (len(t["gpus"]), t["exclusive_cpus"], t["allocatable_memory_bytes"], t["hugepages_bytes"], -t["node"]))
    assert labels[P + "numa-nodes"] == str(len(topology["numa_nodes"])) == str(len(tables))
    assert labels[P + "max-pod-gpus"] == str(len(best["gpus"]))
    assert labels[P + "max-pod-cpus"] == str(best["exclusive_cpus"])
    assert labels[P + "max-pod-memory-gi"] == str(best["allocatable_memory_bytes"] // GIB)
    assert labels[P + "plan"] == plan["fingerprint"]
    size = (plan["hugepages"]["resource"] or "-").split("-", 1)[1].lower()
    keys = set(KEYS)
    if plan["hugepages"]["per_node"] and best["hugepages_bytes"]:
        keys.add(P + "hugepages-%s-per-node" % size)
        assert labels[P + "hugepages-%s-per-node" % size] == str(best["hugepages_bytes"] // (plan["hugepages"]["size_kb"] * 1024))
    for t in tables:
        if t["exclusive_cpus"] or t["gpus"]:
            node = P + "numa%d-" % t["node"]
            keys |= {node + "gpus", node + "cpus", node + "memory-gi"}
            assert (labels[node + "gpus"], labels[node + "cpus"], labels[node + "memory-gi"]) == (
                str(len(t["gpus"])), str(t["exclusive_cpus"]), str(t["allocatable_memory_bytes"] // GIB))
            if t["hugepages_bytes"]:
                keys.add(node + "hugepages-" + size)
    assert set(labels) == keys
    return labels


def _pod(labels, plan, gpus, cpus, memory_gi, pages_key):
    page = (plan["hugepages"]["size_kb"] or 0) * 1024
    return {"name": "pod", "gpus": int(labels[gpus]), "cpu": int(labels[cpus]), "memory": int(labels[memory_gi]) * GIB,
            "hugepages": int(labels.get(pages_key, 0)) * page}


def check_fits(plan, topology, labels):
    """A label promise is a single-NUMA promise, judged by the planner's own fit (single-numa-node): the pod the
    max-pod labels describe, all of them at once, fits on one NUMA node, and one more of any resource (GPU, core,
    GiB, hugepage) with the others at their label values fits on none; each numa<N> pod fits on node N."""
    tables = plan["numa_tables"]
    per_core = kubelet_rules.cpus_per_core(topology)
    full_pcpus = "cpu-manager-policy-options=full-pcpus-only=true" in plan["kubelet_args"]
    size = (plan["hugepages"]["resource"] or "-").split("-", 1)[1].lower()
    page = (plan["hugepages"]["size_kb"] or 0) * 1024
    biggest = _pod(labels, plan, P + "max-pod-gpus", P + "max-pod-cpus", P + "max-pod-memory-gi", P + "hugepages-%s-per-node" % size)
    steps = {"gpus": 1, "cpu": max(per_core, 1), "memory": GIB, "hugepages": page or 1}
    shapes = [biggest] + [dict(biggest, name="more-" + key, **{key: biggest[key] + step}) for key, step in sorted(steps.items())]
    fits = fit_pod_shapes(shapes, tables, per_core, full_pcpus, True)
    assert fits[0]["fits"], fits[0]
    for more in fits[1:]:
        assert not more["fits"], more
    for t in tables:
        node = P + "numa%d-" % t["node"]
        if node + "cpus" in labels:
            (fit,) = fit_pod_shapes([_pod(labels, plan, node + "gpus", node + "cpus", node + "memory-gi", node + "hugepages-" + size)],
                                    tables, per_core, full_pcpus, True)
            assert t["node"] in fit["nodes"], fit


VARIANTS = [{}, {"hugepages_per_node": 0}, {"hugepages_size": "2M", "hugepages_per_node": 512, "hugepages_nodes": "all"}]


@pytest.mark.parametrize("name", sorted(INTENTS))
@pytest.mark.parametrize("variant", VARIANTS, ids=["demo", "no-hugepages", "2M-all"])
def test_sample_labels_are_valid_and_agree_with_the_numa_table(samples, name, variant):
    topology = samples[name]
    plan = make_plan(topology, **dict(INTENTS[name], **variant))
    labels = check_labels(plan, topology)
    check_fits(plan, topology, labels)


@pytest.mark.parametrize("name", HWLOC_DUMPS)
@pytest.mark.parametrize("options", [{}, {"hugepages_per_node": 2, "hugepages_size": "2M", "hugepages_nodes": "all"}],
                         ids=["defaults", "2M-all"])
def test_real_machine_labels_are_valid_and_agree_with_the_numa_table(hwloc_root, name, options):
    topology = read_topology(hwloc_root(name))
    try:
        plan = make_plan(topology, **options)
    except PlanError:
        return  # refused by a rule: test_planner says which; no plan, no labels
    labels = check_labels(plan, topology)
    check_fits(plan, topology, labels)


def test_dgx_h100_demo_labels(samples):
    plan = make_plan(samples["dgx-h100"], **INTENTS["dgx-h100"])
    numa = dict((P + "numa%d-%s" % (n, what), value) for n in (0, 1)
                for what, value in (("gpus", "4"), ("cpus", "110"), ("memory-gi", "1006"), ("hugepages-1gi", "16")))
    assert numa_labels(plan) == dict(numa, **{
        P + "numa-nodes": "2", P + "max-pod-cpus": "110", P + "max-pod-memory-gi": "1006", P + "max-pod-gpus": "4",
        P + "hugepages-1gi-per-node": "16", P + "plan": plan["fingerprint"]})


def test_grace_hopper_counts_its_cpu_less_nodes_and_names_2m_pages(samples):
    plan = make_plan(samples["grace-hopper"], **INTENTS["grace-hopper"])
    labels = numa_labels(plan)
    assert labels[P + "numa-nodes"] == "9" and labels[P + "hugepages-2mi-per-node"] == "8192"
    assert labels[P + "max-pod-gpus"] == "1" and labels[P + "max-pod-cpus"] == "71"
    assert not [k for k in labels if re.match(re.escape(P) + r"numa[1-8]-", k)], "CPU-less GPU memory nodes offer no pod"


@pytest.mark.parametrize("size_kb, label", [(1048576, "hugepages-1gi-per-node"), (2048, "hugepages-2mi-per-node"),
                                            (524288, "hugepages-512mi-per-node"), (16777216, "hugepages-16gi-per-node"),
                                            (64, "hugepages-64ki-per-node")])
def test_hugepages_label_is_named_after_the_size(size_kb, label):
    assert hugepages_label(size_kb) == P + label
    assert owned_label(P + label)


def cpu_poor_gpu_node(samples):
    """dell-roundrobin with 4 reserved cores, its GPUs moved to a CPU-poor node: node 0 holds every GPU and few
    exclusive CPUs, node 1 no GPU and many CPUs."""
    topology = copy.deepcopy(samples["dell-roundrobin"])
    plan = make_plan(topology, reserved_cores=4)
    tables = plan["numa_tables"]
    tables[0]["gpus"] = tables[0]["gpus"] + tables[1]["gpus"]
    tables[1]["gpus"] = []
    tables[0]["exclusive_cpus"] = 4
    return plan, topology


def test_the_max_pod_labels_never_promise_a_pod_no_numa_node_holds(samples):
    """The independent maxima (most GPUs from node 0, most CPUs from node 1) described a pod no node could hold."""
    plan, topology = cpu_poor_gpu_node(samples)
    tables = plan["numa_tables"]
    labels = numa_labels(plan)
    assert labels[P + "max-pod-gpus"] == str(len(tables[0]["gpus"])) and labels[P + "max-pod-cpus"] == "4"
    assert labels[P + "numa1-cpus"] == str(tables[1]["exclusive_cpus"]) and labels[P + "numa1-gpus"] == "0"
    check_fits(plan, topology, labels)


README_DEPLOYMENT = re.compile(r"```yaml\n(apiVersion: apps/v1\nkind: Deployment\n.*?)```", re.S)


def _selects(expressions, labels):
    for e in expressions:
        value = labels.get(e["key"])
        if e["operator"] == "Gt" and not (value is not None and int(value) > int(e["values"][0])):
            return False
        if e["operator"] == "Exists" and value is None:
            return False
    return True


def test_the_readme_s_node_affinity_sends_its_pod_only_where_it_fits(samples):
    """Every sample (and the CPU-poor GPU node) whose labels satisfy the documented nodeAffinity (docs/PROVE_AND_LABELS.md) holds its pod on one
    NUMA node; the dgx-h100 demo is one of them."""
    with open(os.path.join(REPO, "docs", "PROVE_AND_LABELS.md")) as f:
        (text,) = README_DEPLOYMENT.findall(f.read())
    pod = yaml.safe_load(text)["spec"]["template"]["spec"]
    (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    requests = pod["containers"][0]["resources"]["requests"]
    assert requests == pod["containers"][0]["resources"]["limits"]
    shape = {"name": "readme", "cpu": int(requests["cpu"]), "memory": int(requests["memory"][:-2]) * GIB,
             "gpus": int(requests["nvidia.com/gpu"]), "hugepages": int(requests["hugepages-1Gi"][:-2]) * GIB}
    planned = [(name, make_plan(samples[name], **INTENTS[name]), samples[name]) for name in sorted(INTENTS)]
    planned.append(("cpu-poor-gpu-node",) + cpu_poor_gpu_node(samples))
    selected = []
    for name, plan, topology in planned:
        if not _selects(term["matchExpressions"], numa_labels(plan)):
            continue
        selected.append(name)
        (fit,) = fit_pod_shapes([shape], plan["numa_tables"], kubelet_rules.cpus_per_core(topology),
                                "cpu-manager-policy-options=full-pcpus-only=true" in plan["kubelet_args"], True)
        assert fit["fits"], (name, fit)
    assert "dgx-h100" in selected


@pytest.mark.parametrize("plan, fragment", [
    ({}, "expects the 'plan' dict"),
    ({"numa_tables": [], "fingerprint": "ab"}, "expects the 'plan' dict"),
    ("a plan", "expects the 'plan' dict"),
])
def test_not_a_plan_is_refused(plan, fragment):
    with pytest.raises(LabelError, match=fragment):
        numa_labels(plan)


def test_a_label_the_api_server_would_refuse_is_refused_naming_it(samples):
    plan = make_plan(samples["l40s-offline"])
    for fingerprint, why in (("not valid!", "a valid label must be"), ("f" * 64, "no more than 63 characters")):
        broken = dict(plan, fingerprint=fingerprint)
        with pytest.raises(LabelError) as info:
            numa_labels(broken)
        assert "rke2-numa.maitred.io/plan=%s" % fingerprint in str(info.value) and why in str(info.value)
    with pytest.raises(Exception, match="numa_labels: not valid Kubernetes labels"):
        rke2_numa_numa_labels(dict(plan, fingerprint="not valid!"))


# ---------------------------------------------------------------- the NFD feature file


def nfd_read(text):
    """What NFD's local source makes of a feature file: comment lines skipped, ``# +`` directives
    recognised, ``<key>[=<value>]`` (the value defaults to "true"), a key without a namespace put
    under feature.node.kubernetes.io; files over 64 kB ignored."""
    if len(text.encode("utf-8")) > 64 * 1024:
        return {}, []
    labels, directives = {}, []
    for line in text.splitlines():
        if line.startswith("# +"):
            directives.append(line)
            continue
        if not line.strip() or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        labels[key if "/" in key else "feature.node.kubernetes.io/" + key] = value if sep else "true"
    return labels, directives


def test_the_feature_file_is_what_nfd_reads_as_the_labels(samples):
    plan = make_plan(samples["dgx-h100"], **INTENTS["dgx-h100"])
    labels = numa_labels(plan)
    text = nfd_features(labels)
    assert nfd_read(text) == (labels, [])
    lines = text.splitlines()
    assert text.endswith("\n") and lines[0].startswith("# ") and lines[1].startswith("# ")
    body = lines[2:]
    assert body == sorted(body) and len(body) == len(labels)
    assert all(re.match(r"^rke2-numa\.maitred\.io/[a-z0-9-]+=[0-9a-f]+$", line) for line in body), body
    assert nfd_features(labels) == text, "the same labels, the same bytes (no rewrite on a rerun)"


def test_a_feature_file_nfd_would_ignore_is_refused():
    labels = dict(("%s%05d" % (P, i), "1") for i in range(NFD_FILE_LIMIT // 20))
    with pytest.raises(LabelError, match="NFD ignores one above 65536"):
        nfd_features(labels)


# ---------------------------------------------------------------- kubectl label arguments


WANTED = {P + "numa-nodes": "2", P + "max-pod-gpus": "4", P + "hugepages-1gi-per-node": "16", P + "plan": "abc"}


@pytest.mark.parametrize("current, changes", [
    ({}, [P + "hugepages-1gi-per-node=16", P + "max-pod-gpus=4", P + "numa-nodes=2", P + "plan=abc"]),
    (None, [P + "hugepages-1gi-per-node=16", P + "max-pod-gpus=4", P + "numa-nodes=2", P + "plan=abc"]),
    (dict(WANTED), []),
    (dict(WANTED, **{P + "plan": "old"}), [P + "plan=abc"]),
    # another hugepage size before: its label goes; labels not ours stay, also under our prefix
    (dict(WANTED, **{P + "hugepages-2mi-per-node": "512", P + "team": "ml", "kubernetes.io/hostname": "n1",
                     "rke2-numa.maitred.io/failed": "x"}), [P + "hugepages-2mi-per-node-"]),
    ({P + "max-pod-cpus": "8", P + "plan": "abc", "gpu": "yes"},
     [P + "hugepages-1gi-per-node=16", P + "max-pod-gpus=4", P + "numa-nodes=2", P + "max-pod-cpus-"]),
])
def test_label_changes(current, changes):
    assert label_changes(current, WANTED) == changes


@pytest.mark.parametrize("key, owned", [
    (P + "plan", True), (P + "max-pod-memory-gi", True), (P + "hugepages-2mi-per-node", True),
    (P + "hugepages-per-node", False), (P + "failed", False), (P + "plans", False), ("x." + P + "plan", False),
    ("maitred.io/plan", False),
])
def test_owned_labels(key, owned):
    assert owned_label(key) is owned


def test_nfd_held_labels_are_ours_among_the_keys_nfd_tracks():
    annotations = {"nfd.node.kubernetes.io/feature-labels": "cpu-cpuid.AVX512F,%splan,%smax-pod-gpus,other.io/x" % (P, P),
                   "gpu.nfd.node.kubernetes.io/feature-labels": "%snuma0-gpus" % P, "unrelated": "%sx" % P}
    assert nfd_held_labels(annotations) == [P + "max-pod-gpus", P + "numa0-gpus", P + "plan"]
    assert nfd_held_labels({}) == [] and nfd_held_labels(None) == []
    assert nfd_held_labels({"nfd.node.kubernetes.io/feature-labels": "cpu-cpuid.AVX512F"}) == []


def test_labels_missing_names_what_the_node_lacks_or_holds_otherwise():
    node = {P + "plan": "a", P + "max-pod-gpus": "4", "x": "y"}
    wanted = {P + "plan": "a", P + "max-pod-gpus": "8", P + "numa-nodes": "2"}
    assert labels_missing(node, wanted) == [P + "max-pod-gpus", P + "numa-nodes"]
    assert labels_missing(None, {}) == []


def test_the_labels_kubectl_wrote_are_ours_nfd_does_not_track_and_those_not_published_now_go():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import kubectl_leftovers, kubectl_written
    labels = {P + "plan": "a", P + "max-pod-gpus": "4", P + "numa0-gpus": "2", "team": "ml"}
    annotations = {"nfd.node.kubernetes.io/feature-labels": "%snuma0-gpus" % P}
    assert kubectl_written(labels, annotations) == {P + "plan": "a", P + "max-pod-gpus": "4"}, "NFD's own and not ours: kept out"
    assert kubectl_leftovers(labels, annotations, {}) == [P + "max-pod-gpus-", P + "plan-"]
    assert kubectl_leftovers(labels, annotations, {P + "plan": "b"}) == [P + "max-pod-gpus-"], "nfd publishes plan now: its key is NFD's"
    assert kubectl_leftovers({}, None, {}) == []


def test_nfd_worker_pods_are_told_apart_as_nfd_deploys_them():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import nfd_worker_nodes

    def pod(node, labels=None, command=None, phase="Running"):
        return {"kind": "Pod", "metadata": {"name": "p", "labels": labels or {}}, "status": {"phase": phase},
                "spec": {"nodeName": node, "containers": [{"name": "c", "command": command or ["/bin/sh"]}]}}

    nodes = [{"kind": "Node", "metadata": {"name": n}} for n in ("kustomize", "helm", "gpu-operator", "none", "pending", "master")]
    items = nodes + [
        pod("kustomize", {"app": "nfd-worker"}),
        pod("helm", {"app.kubernetes.io/name": "node-feature-discovery", "role": "worker"}),
        pod("gpu-operator", {"app.kubernetes.io/name": "gpu-operator-node-feature-discovery"}, ["nfd-worker"]),
        pod("none", {"app": "vllm"}),
        pod("pending", {"app": "nfd-worker"}, phase="Pending"),
        pod("master", {"app.kubernetes.io/name": "node-feature-discovery", "role": "master"}, ["nfd-master"]),
    ]
    assert nfd_worker_nodes(items) == {"kustomize": True, "helm": True, "gpu-operator": True, "none": False,
                                       "pending": False, "master": False}
