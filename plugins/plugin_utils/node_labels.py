# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node labels for scheduling: a node's NUMA capacity, read from its plan (controller side).

Under the Topology Manager's ``single-numa-node`` policy a pod must fit on one
NUMA node, so what a scheduler needs to know is the biggest pod one NUMA node
can take. ``numa_labels`` reads it from the plan's ``numa_tables`` (one row per
NUMA node: exclusive CPUs, allocatable memory, hugepages, GPUs), each resource
on its own: ``max-pod-gpus`` is the most GPUs any one node has, ``max-pod-cpus``
the most exclusive CPUs, and so on. With these a Deployment asks for a node
where its pod fits (nodeAffinity ``max-pod-gpus Gt 3`` for a 4-GPU pod).

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

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_rules import node_label_error
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import GIB, hugepage_resource

PREFIX = "rke2-numa.maitred.io/"
NUMA_NODES = PREFIX + "numa-nodes"
MAX_POD_GPUS = PREFIX + "max-pod-gpus"
MAX_POD_CPUS = PREFIX + "max-pod-cpus"
MAX_POD_MEMORY_GI = PREFIX + "max-pod-memory-gi"
PLAN = PREFIX + "plan"
# The keys the collection owns under PREFIX: the ones above and one hugepages-<size>-per-node
# (hugepages-1gi-per-node, hugepages-2mi-per-node, ...). Any other key under PREFIX is left alone.
_OWNED = re.compile(r"^%s(numa-nodes|max-pod-gpus|max-pod-cpus|max-pod-memory-gi|plan|hugepages-\d+(ki|mi|gi|ti|pi|ei)?-per-node)$"
                    % re.escape(PREFIX))
# NFD's local source ignores a feature file above 64 kB; a line "# +..." is one of its directives.
NFD_FILE_LIMIT = 64 * 1024


class LabelError(ValueError):
    """The plan cannot be published as labels (not a plan, or a label the API server would refuse)."""


def hugepages_label(size_kb):
    """The label of a hugepage size, from the kubelet's resource name in lower case:
    1G -> ``rke2-numa.maitred.io/hugepages-1gi-per-node``, 2M -> ``.../hugepages-2mi-per-node``."""
    return "%s%s-per-node" % (PREFIX, hugepage_resource(size_kb).lower())


def owned_label(key):
    """Whether ``key`` is one of the labels this collection sets (and may therefore remove)."""
    return bool(_OWNED.match(key))


def _tables(plan):
    tables = plan.get("numa_tables") if isinstance(plan, dict) else None
    if not tables or not plan.get("fingerprint"):
        raise LabelError("expects the 'plan' dict returned by numa_plan (with numa_tables and fingerprint)")
    return tables


def numa_labels(plan):
    """``{label: value}`` (strings) for a node running ``plan``.

    - ``numa-nodes``: NUMA nodes, as the kubelet counts them (CPU-less ones too);
    - ``max-pod-cpus``: the most exclusive CPUs one NUMA node offers a pod;
    - ``max-pod-memory-gi``: the most allocatable memory of one NUMA node, in whole GiB (rounded down);
    - ``max-pod-gpus``: the most GPUs on one NUMA node;
    - ``hugepages-<size>-per-node``: the most planned hugepages of one NUMA node, absent without hugepages;
    - ``plan``: the plan's fingerprint.

    Raises LabelError naming every label the API server would refuse.
    """
    tables = _tables(plan)
    labels = {
        NUMA_NODES: len(tables),
        MAX_POD_CPUS: max(t["exclusive_cpus"] for t in tables),
        MAX_POD_MEMORY_GI: max(t["allocatable_memory_bytes"] for t in tables) // GIB,
        MAX_POD_GPUS: max(len(t["gpus"]) for t in tables),
    }
    size_kb = (plan.get("hugepages") or {}).get("size_kb")
    pages = max(t["hugepages_bytes"] for t in tables) // (size_kb * 1024) if size_kb else 0
    if pages:
        labels[hugepages_label(size_kb)] = pages
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


def labels_by_node(items):
    """``{Node name: its labels}`` from the items of a ``kubectl get nodes[,pods] -o json`` reply (other kinds skipped)."""
    out = {}
    for item in items or []:
        if isinstance(item, dict) and item.get("kind") == "Node":
            meta = item.get("metadata") or {}
            out[str(meta.get("name"))] = dict(meta.get("labels") or {})
    return out
