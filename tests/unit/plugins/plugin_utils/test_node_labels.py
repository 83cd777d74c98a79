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
    nfd_features,
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
    # agreement with the table
    assert labels[P + "numa-nodes"] == str(len(topology["numa_nodes"])) == str(len(tables))
    assert labels[P + "max-pod-gpus"] == str(max(len(t["gpus"]) for t in tables))
    assert labels[P + "max-pod-cpus"] == str(max(t["exclusive_cpus"] for t in tables))
    assert labels[P + "max-pod-memory-gi"] == str(max(t["allocatable_memory_bytes"] for t in tables) // GIB)
    assert labels[P + "plan"] == plan["fingerprint"]
    per_node = plan["hugepages"]["per_node"]
    if per_node:
        key = P + "hugepages-%s-per-node" % plan["hugepages"]["resource"].split("-", 1)[1].lower()
        assert labels[key] == str(max(per_node.values()))
        assert set(labels) == KEYS | {key}
    else:
        assert set(labels) == KEYS
    return labels


def check_fits(plan, topology, labels):
    """Under single-numa-node the planner's own fit agrees: the label's amount of one resource fits on some
    NUMA node, one more (GPU, core, GiB, hugepage) fits on none."""
    tables = plan["numa_tables"]
    per_core = kubelet_rules.cpus_per_core(topology)
    full_pcpus = "cpu-manager-policy-options=full-pcpus-only=true" in plan["kubelet_args"]
    page = (plan["hugepages"]["size_kb"] or 0) * 1024
    pages = int(labels.get(P + "hugepages-%s-per-node" % (plan["hugepages"]["resource"] or "").split("-", 1)[-1].lower(), 0))
    most = {"gpus": (int(labels[P + "max-pod-gpus"]), 1), "cpu": (int(labels[P + "max-pod-cpus"]), max(per_core, 1)),
            "memory": (int(labels[P + "max-pod-memory-gi"]) * GIB, GIB), "hugepages": (pages * page, page or 1)}
    for resource, (amount, step) in sorted(most.items()):
        shapes = [dict({"name": "most", "cpu": 0, "memory": 0, "gpus": 0, "hugepages": 0}, **{resource: amount}),
                  dict({"name": "more", "cpu": 0, "memory": 0, "gpus": 0, "hugepages": 0}, **{resource: amount + step})]
        fits, more = fit_pod_shapes(shapes, tables, per_core, full_pcpus, True)
        assert fits["fits"], (resource, amount, fits)
        assert not more["fits"], (resource, amount + step, more)


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
    assert numa_labels(plan) == {
        P + "numa-nodes": "2", P + "max-pod-cpus": "110", P + "max-pod-memory-gi": "1006", P + "max-pod-gpus": "4",
        P + "hugepages-1gi-per-node": "16", P + "plan": plan["fingerprint"]}


def test_grace_hopper_counts_its_cpu_less_nodes_and_names_2m_pages(samples):
    plan = make_plan(samples["grace-hopper"], **INTENTS["grace-hopper"])
    labels = numa_labels(plan)
    assert labels[P + "numa-nodes"] == "9" and labels[P + "hugepages-2mi-per-node"] == "8192"
    assert labels[P + "max-pod-gpus"] == "1" and labels[P + "max-pod-cpus"] == "71"


@pytest.mark.parametrize("size_kb, label", [(1048576, "hugepages-1gi-per-node"), (2048, "hugepages-2mi-per-node"),
                                            (524288, "hugepages-512mi-per-node"), (16777216, "hugepages-16gi-per-node"),
                                            (64, "hugepages-64ki-per-node")])
def test_hugepages_label_is_named_after_the_size(size_kb, label):
    assert hugepages_label(size_kb) == P + label
    assert owned_label(P + label)


def test_each_resource_is_the_most_of_one_node_on_its_own(samples):
    # dell-roundrobin with 4 reserved cores: the extra cores go to the GPU-poorest node; remove the GPUs
    # of node 1 so that the most GPUs and the most CPUs are on different NUMA nodes
    topology = copy.deepcopy(samples["dell-roundrobin"])
    plan = make_plan(topology, reserved_cores=4)
    tables = plan["numa_tables"]
    tables[1]["gpus"] = []
    tables[0]["exclusive_cpus"] -= 2
    labels = numa_labels(plan)
    assert labels[P + "max-pod-gpus"] == str(len(tables[0]["gpus"])) and labels[P + "max-pod-cpus"] == str(tables[1]["exclusive_cpus"])


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
