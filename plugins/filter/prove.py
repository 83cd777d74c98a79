# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The prove role's probe pods and their judgement, and check.yml's pod audit (logic in plugin_utils/prove.py)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.prove import (
    ProveError, audit_error, audit_pods, dra_audit, gpu_holders, gpu_worker_nodes, kube_items, probe_pods, prove_report)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.playbook_inputs import SERVER_ROLE_LABELS
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.report import prove_fleet, render_prove_markdown


def rke2_numa_probe_pods(plan, topology, node_name, image, namespace, gpu_resource, memory, use_pod_shapes=True, whole_nodes=False):
    """[{name, namespace, shape, requests, manifest}]: the probe pods for a node."""
    try:
        return probe_pods(plan, topology, node_name, image, namespace, gpu_resource, memory, use_pod_shapes, whole_nodes)
    except ProveError as e:
        raise AnsibleFilterError("cannot make the probe pods: %s" % e)


def rke2_numa_probe_report(probes, pod_list, logs, plan, topology, cpu_state, gpu_resource="nvidia.com/gpu", waited=None):
    """{ok, results, reasons}: did each probe get exclusive CPUs, memory and its GPU on one NUMA node?

    ``pod_list``: ``kubectl get pods ... -o json`` of the probes; ``logs``: [{item: {name}, stdout}] (a
    registered loop); ``cpu_state``: kubelet_state_info's cpu_manager."""
    pods = dict((p["metadata"]["name"], p) for p in kube_items(pod_list))
    texts = dict((r["item"]["name"], r.get("stdout", "")) for r in logs or [] if isinstance(r.get("item"), dict))
    return prove_report(probes, pods, texts, plan, topology, (cpu_state or {}).get("entries") or {}, gpu_resource, waited)


def rke2_numa_gpu_holders(pod_list, gpu_resource="nvidia.com/gpu"):
    """namespace/name of the pods of a ``kubectl get pods -o json`` reply that hold or wait for a GPU (probes aside)."""
    return gpu_holders(kube_items(pod_list), gpu_resource)


def rke2_numa_pod_audit(pod_list, node_names=None, gpu_resource="nvidia.com/gpu", dra=False):
    """{node: {unpinned, topology_errors}}: GPU pods that cannot be pinned, pods refused by the Topology Manager; with
    ``dra`` (the reply holds the cluster's ResourceSlices and ResourceClaims too: ``kubectl get
    nodes,pods,resourceslices,resourceclaims -A -o json``) each node's DRA devices and the pods holding a GPU by DRA
    (plugin_utils/prove.py dra_audit)."""
    audit = audit_pods(pod_list, node_names, gpu_resource)
    if dra:
        for node, entry in dra_audit(pod_list, node_names, gpu_resource).items():
            audit.setdefault(node, {"unpinned": [], "topology_errors": []}).update(entry)
    return audit


def rke2_numa_gpu_worker_nodes(reply, gpu_resource="nvidia.com/gpu"):
    """The cluster's GPU workers (Node names) in the check's one read (plugin_utils/prove.py gpu_worker_nodes)."""
    return gpu_worker_nodes(reply or {}, gpu_resource, SERVER_ROLE_LABELS)


def rke2_numa_pod_audit_error(result, kubectl, kubectl_host):
    """Why the pods were not audited, in one line (plugin_utils/prove.py audit_error)."""
    return audit_error(result, kubectl, kubectl_host)


def rke2_numa_kube_items(reply):
    """The objects of a ``kubectl get -o json`` reply, a List or the single object asked for by name."""
    return kube_items(reply)


def rke2_numa_prove_outputs(hosts, hostvars):
    """prove.yml's reports: {reports: {host: its rke2_numa_prove_report or None}, fleet: fleet.json, markdown: summary.md}."""
    reports = dict((host, (hostvars[host] or {}).get("rke2_numa_prove_report")) for host in hosts or [])
    return {"reports": reports, "fleet": prove_fleet(reports), "markdown": render_prove_markdown(reports)}


class FilterModule(object):
    """maitred.rke2_numa prove filters."""

    def filters(self):
        return {"probe_pods": rke2_numa_probe_pods, "probe_report": rke2_numa_probe_report, "pod_audit": rke2_numa_pod_audit,
                "kube_items": rke2_numa_kube_items, "pod_audit_error": rke2_numa_pod_audit_error,
                "prove_outputs": rke2_numa_prove_outputs, "gpu_holders": rke2_numa_gpu_holders, "gpu_worker_nodes": rke2_numa_gpu_worker_nodes}
