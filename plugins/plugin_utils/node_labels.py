# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node labels for scheduling: a node's NUMA capacity, read from its plan (controller side).

Under the Topology Manager's ``single-numa-node`` policy a pod must fit on one
NUMA node, so a label is a single-NUMA promise: any pod whose requests stay
within what the labels say must fit on one NUMA node of the host. ``numa_labels``
reads the plan's ``numa_tables`` (one row per NUMA node: exclusive CPUs,
allocatable memory, hugepages, GPUs) and publishes

- ``max-pod-*``: the biggest GPU pod of the host, all of it from ONE NUMA node -
  the node with the most GPUs, then the most exclusive CPUs, memory and hugepages.
  Taken together they never describe a pod no node can hold (independent maxima
  would: on a host whose GPUs sit on a CPU-poor node, the most GPUs and the most
  CPUs come from different nodes). One more of any of them fits nowhere with the
  others at their label values;
- ``numa<N>-*``: each NUMA node's own capacity (nodes that offer exclusive CPUs or
  GPUs), for a pod that does not fit the biggest GPU pod's shape (a CPU-only pod
  on the CPU-rich node): one nodeSelectorTerm per NUMA node.

With these a Deployment asks for a node where its pod fits (nodeAffinity
``max-pod-gpus Gt 3`` and ``max-pod-cpus Gt 31`` for a 4-GPU, 32-CPU pod).

The labels are published either as a feature file of Node Feature Discovery's
``local`` source (``nfd_features``: one ``<prefix>/<name>=<value>`` a line,
``#`` comments) or with ``kubectl label`` (``label_changes``: only what differs,
only the keys this collection owns).

Every key and value is checked with the kubelet's own label rules
(``kubelet_rules.node_label_error``: apimachinery IsQualifiedName and
IsValidLabelValue).
"""

from __future__ import annotations

import re

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.dra import claims_planned
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_rules import node_label_error
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import GIB, hugepage_resource

PREFIX = "rke2-numa.maitred.io/"
NUMA_NODES = PREFIX + "numa-nodes"
MAX_POD_GPUS = PREFIX + "max-pod-gpus"
MAX_POD_CPUS = PREFIX + "max-pod-cpus"
MAX_POD_MEMORY_GI = PREFIX + "max-pod-memory-gi"
PLAN = PREFIX + "plan"
# GPUs a node serves by DRA (labels_gpus): how many, and what keeps them with a pod's CPUs - "claim" (the plan's
# ResourceClaimTemplates under dra-driver-cpu: one matchAttribute constraint) or "none" (the kubelet pins the CPUs and
# its Topology Manager takes no DRA hints).
DRA_GPUS = PREFIX + "dra-gpus"
DRA_ALIGNMENT = PREFIX + "dra-alignment"
# The keys the collection owns under PREFIX: the ones above (dra-gpus, dra-alignment too), one hugepages-<size>-per-node
# (hugepages-1gi-per-node, hugepages-2mi-per-node, ...) and each NUMA node's numa<N>-gpus, -cpus, -memory-gi
# and -hugepages-<size>. Any other key under PREFIX is left alone.
_SIZE = r"hugepages-\d+(ki|mi|gi|ti|pi|ei)?"
_OWNED = re.compile(r"^%s(numa-nodes|max-pod-gpus|max-pod-cpus|max-pod-memory-gi|plan|dra-gpus|dra-alignment|%s-per-node|numa\d+-(gpus|cpus|memory-gi|%s))$"
                    % (re.escape(PREFIX), _SIZE, _SIZE))
# NFD's local source ignores a feature file above 64 kB; a line "# +..." is one of its directives.
NFD_FILE_LIMIT = 64 * 1024
# nfd-master records the label keys it wrote in this Node annotation (prefixed with "<instance>." when it runs
# with -instance), names in its default namespace without their prefix, and removes a tracked key from the Node
# when its feature set no longer has it (node-feature-discovery pkg/nfd-master/nfd-master.go updateNodeObject).
NFD_FEATURE_LABELS = "nfd.node.kubernetes.io/feature-labels"
NFD_DEFAULT_NS = "feature.node.kubernetes.io"


class LabelError(ValueError):
    """The plan cannot be published as labels (not a plan, or a label the API server would refuse)."""


def hugepages_label(size_kb):
    """The label of a hugepage size, from the kubelet's resource name in lower case:
    1G -> ``rke2-numa.maitred.io/hugepages-1gi-per-node``, 2M -> ``.../hugepages-2mi-per-node``."""
    return "%s%s-per-node" % (PREFIX, hugepage_resource(size_kb).lower())


def owned_label(key):
    """Whether ``key`` is one of the labels this collection sets (and may therefore remove)."""
    return bool(_OWNED.match(key))


def owned_labels(labels):
    """The labels of ``labels`` (a Node's) this collection sets: {key: value}, what a withdrawal removes and a roll that
    then does not reach the node gives back."""
    return {str(k): str(v) for k, v in sorted((labels or {}).items()) if owned_label(str(k))}


def _tables(plan):
    tables = plan.get("numa_tables") if isinstance(plan, dict) else None
    if not tables or not plan.get("fingerprint"):
        raise LabelError("expects the 'plan' dict returned by numa_plan (with numa_tables and fingerprint)")
    return tables


def biggest_gpu_pod_node(tables):
    """The NUMA node whose whole capacity the ``max-pod-*`` labels publish: the most GPUs, then the most
    exclusive CPUs, allocatable memory and hugepages (then the lowest id). Lexicographic, so one more of any
    resource, with the others at this node's amounts, fits on no NUMA node."""
    return max(tables, key=lambda t: (len(t["gpus"]), t["exclusive_cpus"], t["allocatable_memory_bytes"], t["hugepages_bytes"], -t["node"]))


def numa_node_label(node, what):
    """``rke2-numa.maitred.io/numa<N>-<what>``: one NUMA node's capacity (gpus, cpus, memory-gi, hugepages-1gi...)."""
    return "%snuma%d-%s" % (PREFIX, node, what)


def kubelet_gpu_tables(tables, dra):
    """The NUMA tables with only the GPUs the kubelet aligns: those the device plugin serves. ``dra``: the node's DRA
    inventory as the check read it (dra.inventory: gpu_path, devices with their sysfs_address; None when not read) -
    a node that serves its GPUs by DRA alone keeps none, one that serves both loses the GPUs its slices publish.
    Returns (tables, the number of DRA GPUs)."""
    path = (dra or {}).get("gpu_path")
    if path not in ("dra", "both"):
        return tables, 0
    devices = [d for d in dra.get("devices") or [] if d.get("kind") == "gpu"]
    served = set(d.get("sysfs_address") for d in devices if d.get("sysfs_address"))
    keep = (lambda gpu: False) if path == "dra" else (lambda gpu: gpu not in served)
    return [dict(t, gpus=[g for g in t["gpus"] if keep(g)]) for t in tables], len(devices)


def numa_labels(plan, dra=None):
    """``{label: value}`` (strings) for a node running ``plan``; ``dra``: its DRA inventory as the check read it
    (kubelet_gpu_tables), None when not read - then every GPU is the device plugin's.

    - ``numa-nodes``: NUMA nodes, as the kubelet counts them (CPU-less ones too);
    - ``max-pod-gpus``, ``max-pod-cpus``, ``max-pod-memory-gi`` (whole GiB, rounded down) and
      ``hugepages-<size>-per-node`` (absent without hugepages): the biggest GPU pod one NUMA node takes,
      every resource from that same node (``biggest_gpu_pod_node``);
    - ``numa<N>-gpus``, ``numa<N>-cpus``, ``numa<N>-memory-gi``, ``numa<N>-hugepages-<size>``: each NUMA node
      that offers exclusive CPUs or GPUs, its own capacity;
    - ``plan``: the plan's fingerprint;
    - where the node serves GPUs by DRA: ``dra-gpus`` (how many) and ``dra-alignment`` (``claim``: the plan's claim
      templates keep them with their CPUs, dra-driver-cpu; ``none``: nothing does). The GPU counts above then count
      only the device plugin's GPUs - the Topology Manager's single-NUMA promise holds for those alone, so a node whose
      GPUs are all DRA says ``max-pod-gpus=0``.

    Raises LabelError naming every label the API server would refuse.
    """
    tables, dra_gpus = kubelet_gpu_tables(_tables(plan), dra)
    size_kb = (plan.get("hugepages") or {}).get("size_kb")
    size_name = hugepage_resource(size_kb).lower() if size_kb else None

    def pages(table):
        return table["hugepages_bytes"] // (size_kb * 1024) if size_kb else 0

    best = biggest_gpu_pod_node(tables)
    labels = {
        NUMA_NODES: len(tables),
        MAX_POD_CPUS: best["exclusive_cpus"],
        MAX_POD_MEMORY_GI: best["allocatable_memory_bytes"] // GIB,
        MAX_POD_GPUS: len(best["gpus"]),
    }
    if pages(best):
        labels[hugepages_label(size_kb)] = pages(best)
    for table in tables:
        if not table["exclusive_cpus"] and not table["gpus"]:
            continue
        labels[numa_node_label(table["node"], "gpus")] = len(table["gpus"])
        labels[numa_node_label(table["node"], "cpus")] = table["exclusive_cpus"]
        labels[numa_node_label(table["node"], "memory-gi")] = table["allocatable_memory_bytes"] // GIB
        if pages(table):
            labels[numa_node_label(table["node"], size_name)] = pages(table)
    if dra_gpus:
        labels[DRA_GPUS] = dra_gpus
        labels[DRA_ALIGNMENT] = "claim" if claims_planned(plan) else "none"
    labels[PLAN] = plan["fingerprint"]
    labels = dict((key, str(value)) for key, value in labels.items())
    errors = ["%s=%s: %s" % (key, value, node_label_error("%s=%s" % (key, value))) for key, value in sorted(labels.items())
              if node_label_error("%s=%s" % (key, value))]
    if errors:
        raise LabelError("not valid Kubernetes labels: %s" % "; ".join(errors))
    return labels


def nfd_features(labels):
    """The feature file of NFD's local source (``features.d``): a comment, then ``<key>=<value>`` a line, sorted.

    The keys carry their prefix (NFD would put an unprefixed name under feature.node.kubernetes.io).
    """
    lines = ["# NUMA capacity of this node for Node Feature Discovery's local source, from the plan it runs",
             "# (maitred.rke2_numa.labels); rewritten on every run."]
    lines += ["%s=%s" % (key, value) for key, value in sorted(labels.items())]
    text = "\n".join(lines) + "\n"
    if len(text.encode("utf-8")) > NFD_FILE_LIMIT:
        raise LabelError("the feature file would be %d bytes; NFD ignores one above %d" % (len(text.encode("utf-8")), NFD_FILE_LIMIT))
    return text


def label_changes(current, wanted):
    """The ``kubectl label --overwrite`` arguments that take a Node's labels (``current``) to ``wanted``:
    ``key=value`` for each label missing or different, ``key-`` for a label this collection owns that
    ``wanted`` no longer has (another hugepage size, hugepages gone). No other label is touched.
    Empty when the Node already has them."""
    current = current or {}
    changes = ["%s=%s" % (key, value) for key, value in sorted(wanted.items()) if current.get(key) != value]
    changes += ["%s-" % key for key in sorted(current) if owned_label(key) and key not in wanted]
    return changes


def nfd_tracked_labels(annotations):
    """The label keys nfd-master tracks on a Node (it will remove each one its feature set no longer has)."""
    keys = set()
    for name, value in (annotations or {}).items():
        if name == NFD_FEATURE_LABELS or str(name).endswith("." + NFD_FEATURE_LABELS):
            for key in str(value or "").split(","):
                key = key.strip()
                if key:
                    keys.add(key if "/" in key else "%s/%s" % (NFD_DEFAULT_NS, key))
    return keys


def nfd_held_labels(annotations):
    """Our label keys nfd-master still tracks: while it does, a label kubectl writes under that key is removed
    at NFD's next pass once our feature file is gone. Sorted."""
    return sorted(key for key in nfd_tracked_labels(annotations) if owned_label(key))


def labels_missing(current, wanted):
    """The keys of ``wanted`` the Node (``current`` labels) does not carry with that value, sorted."""
    current = current or {}
    return sorted(key for key, value in (wanted or {}).items() if current.get(key) != value)


def kubectl_written(labels, annotations):
    """Our labels on a Node that Node Feature Discovery does not track: kubectl wrote them (an earlier run with
    rke2_numa_labels_via=kubectl), and nothing but kubectl removes them. {key: value}."""
    tracked = nfd_tracked_labels(annotations)
    return {key: value for key, value in (labels or {}).items() if owned_label(key) and key not in tracked}


def kubectl_leftovers(labels, annotations, wanted):
    """The ``kubectl label`` arguments (``key-``) that remove what kubectl wrote and ``wanted`` (what NFD will publish
    now; {} with rke2_numa_labels_via none, or labels withdrawn) does not hold. NFD's own labels are NFD's: they go
    when our feature file goes. Sorted."""
    return ["%s-" % key for key in sorted(kubectl_written(labels, annotations)) if key not in (wanted or {})]


def labels_by_node(items, kubectl_only=False):
    """``{Node name: its labels}`` from the items of a ``kubectl get nodes[,pods] -o json`` reply (other kinds skipped);
    ``kubectl_only``: only our labels NFD does not track (kubectl_written)."""
    out = {}
    for item in items or []:
        if isinstance(item, dict) and item.get("kind") == "Node":
            meta = item.get("metadata") or {}
            labels = dict(meta.get("labels") or {})
            out[str(meta.get("name"))] = kubectl_written(labels, meta.get("annotations")) if kubectl_only else labels
    return out


# How an nfd-worker pod is told apart, as NFD deploys it: its kustomize base and the NFD operator label the worker
# DaemonSet's pods app=nfd-worker (kubernetes-sigs/node-feature-discovery deployment/base/worker-daemonset); its Helm
# chart (deployment/helm/node-feature-discovery templates/worker.yaml, and the copies the GPU operator and
# gpu-feature-discovery ship as a subchart) labels them with the chart's selectorLabels (app.kubernetes.io/name:
# node-feature-discovery unless nameOverride) and role: worker; every one runs the nfd-worker command.
NFD_WORKER_APP = "nfd-worker"
NFD_CHART_NAME = "node-feature-discovery"
NFD_WORKER_COMMAND = "nfd-worker"


def is_nfd_worker(pod):
    """Whether ``pod`` (a Pod object) is one of NFD's worker pods."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    if labels.get("app") == NFD_WORKER_APP:
        return True
    if labels.get("role") == "worker" and NFD_CHART_NAME in str(labels.get("app.kubernetes.io/name") or ""):
        return True
    for container in (pod.get("spec") or {}).get("containers") or []:
        argv = list(container.get("command") or []) + list(container.get("args") or [])
        if argv and str(argv[0]).rsplit("/", 1)[-1] == NFD_WORKER_COMMAND:
            return True
    return False


def nfd_worker_nodes(items):
    """``{Node name: True | False}`` for every Node of a ``kubectl get nodes,pods -A -o json`` reply's ``items``: whether
    an nfd-worker pod runs there (phase Running) - the NFD that would turn our feature file into labels. Node Feature
    Discovery labels a Node only through its worker on that Node (nfd-worker reads the local source's features.d and
    sends them to nfd-master, or writes a NodeFeature object): without one, the labels never come."""
    nodes = dict((str((i.get("metadata") or {}).get("name")), False) for i in items or []
                 if isinstance(i, dict) and i.get("kind") == "Node")
    for item in items or []:
        if not isinstance(item, dict) or item.get("kind") != "Pod" or not is_nfd_worker(item):
            continue
        node = (item.get("spec") or {}).get("nodeName")
        if node and (item.get("status") or {}).get("phase") == "Running":
            nodes[str(node)] = True
    return nodes
