# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The labels role's filters: a node's NUMA capacity as Node labels (logic in plugin_utils/node_labels.py)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import (
    LabelError,
    kubectl_leftovers,
    label_changes,
    labels_by_node,
    labels_missing,
    nfd_features,
    nfd_held_labels,
    nfd_worker_nodes,
    numa_labels,
    owned_labels,
)


def rke2_numa_numa_labels(plan, dra=None):
    """{label: value}: the node's NUMA capacity and plan fingerprint, valid Kubernetes labels; ``dra``: the node's DRA
    inventory as the check read it (rke2_numa_pod_audit.dra), its DRA GPUs then counted apart."""
    try:
        return numa_labels(plan, dra if isinstance(dra, dict) else None)
    except LabelError as e:
        raise AnsibleFilterError("numa_labels: %s" % e)


def rke2_numa_nfd_features(labels):
    """The text of a feature file of Node Feature Discovery's local source holding ``labels``."""
    try:
        return nfd_features(labels)
    except LabelError as e:
        raise AnsibleFilterError("nfd_features: %s" % e)


def rke2_numa_node_label_changes(current, wanted):
    """kubectl label arguments that take the Node's labels ``current`` to ``wanted`` (the collection's keys only)."""
    return label_changes(current, wanted)


def rke2_numa_node_labels_by_name(reply, kubectl_only=False):
    """{Node name: labels} from a ``kubectl get nodes[,pods] -o json`` reply (``kubectl_only``: only our labels NFD does
    not track - kubectl wrote them)."""
    return labels_by_node((reply or {}).get("items"), bool(kubectl_only))


def rke2_numa_kubectl_label_leftovers(reply, wanted):
    """``key-`` for each of our labels kubectl wrote on the Node (``kubectl get nodes -o json`` of that one Node) that
    ``wanted`` does not hold: what a run with rke2_numa_labels_via nfd or none removes."""
    items = [i for i in (reply or {}).get("items") or [] if isinstance(i, dict)]
    meta = (items[0].get("metadata") or {}) if items else {}
    return kubectl_leftovers(meta.get("labels"), meta.get("annotations"), wanted or {})


def rke2_numa_nfd_held_labels(annotations):
    """Our label keys Node Feature Discovery still tracks on the Node (its feature-labels annotation)."""
    return nfd_held_labels(annotations)


def rke2_numa_node_labels_missing(current, wanted):
    """The keys of ``wanted`` the Node's labels ``current`` lack or hold with another value."""
    return labels_missing(current, wanted)


def rke2_numa_owned_labels(labels):
    """The labels of a Node this collection sets (plugin_utils/node_labels.py owned_labels)."""
    return owned_labels(labels)


def rke2_numa_nfd_worker_nodes(reply):
    """{Node name: whether an nfd-worker pod runs there} from a ``kubectl get nodes,pods -A -o json`` reply."""
    return nfd_worker_nodes((reply or {}).get("items"))


class FilterModule(object):
    """maitred.rke2_numa node label filters."""

    def filters(self):
        return {"numa_labels": rke2_numa_numa_labels, "nfd_features": rke2_numa_nfd_features,
                "node_label_changes": rke2_numa_node_label_changes, "node_labels_by_name": rke2_numa_node_labels_by_name,
                "nfd_held_labels": rke2_numa_nfd_held_labels, "node_labels_missing": rke2_numa_node_labels_missing,
                "kubectl_label_leftovers": rke2_numa_kubectl_label_leftovers, "nfd_worker_nodes": rke2_numa_nfd_worker_nodes,
                "owned_labels": rke2_numa_owned_labels}
