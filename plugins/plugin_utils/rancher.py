# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rancher-managed nodes: who manages the node, and where the plan goes so that Rancher does not undo it (controller).

On a node Rancher provisions, rancher-system-agent applies Rancher's plans: the planner writes
``config.yaml.d/50-rancher.yaml`` (plain ``node-label``, ``node-taint`` and, once a Rancher user sets any kubelet
argument, ``kubelet-arg``; rancher/rancher pkg/capr/planner), read after config.yaml, where a plain key replaces
the earlier files' (k3s pkg/configfilearg). Rancher restarts rke2 whenever that file changes (the RKE2 installer's
restart stamp), re-applies its plans on upgrades and agent starts, drains only when its drain options say so, and
never deletes the kubelet's checkpoints. So on such a node the plan goes into our drop-in, named to sort after
Rancher's and appending (``kubelet-arg+``): Rancher's values stay, ours stay after every restart.

The host's evidence comes from module_utils/rancher.py (node_state_info, rancher_agent_info); the Node label
``rke.cattle.io/machine`` (which the planner puts in 50-rancher.yaml's node-label) is more evidence when the Node
was read. The config mode is decided from the host's evidence only: the files on the host decide what RKE2 reads.
"""

from __future__ import annotations

import hashlib
import json
import textwrap

import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils.rancher import rancher_signs

RANCHER_MACHINE_LABEL = "rke.cattle.io/machine"

MERGE_REFUSED = ("rke2_numa_config_mode=merge on a node Rancher manages (%s): Rancher's 50-rancher.yaml is read after "
                 "config.yaml, so its plain kubelet-arg and node-label replace what merge writes there, and Rancher "
                 "restarts rke2 whenever that file changes - the kubelet then runs without the plan and refuses its "
                 "checkpoint. Set rke2_numa_config_mode=auto (or dropin): the plan goes to %s, which appends after Rancher's")


def managed_by(rancher, node_labels=None):
    """{"managed_by": "rancher"|"none", "evidence": [...], "at_work": [...]} of a node: the host's read
    (node_state_info's ``rancher``; None when it was not read) and the Node's labels (None when not read)."""
    rancher = rancher or {}
    evidence = list(rancher.get("evidence") or [])
    machine = (node_labels or {}).get(RANCHER_MACHINE_LABEL)
    if machine:
        evidence.append("the Node's label %s=%s" % (RANCHER_MACHINE_LABEL, machine))
    at_work = list(rancher.get("at_work") or [])
    return {"managed_by": "rancher" if evidence or at_work else "none", "evidence": evidence, "at_work": at_work}


def config_mode(setting, rancher, dropin_path):
    """(mode, unmerge, refusal) for rke2_numa_config_mode ``setting`` on a host whose Rancher read is ``rancher``
    (module_utils/rancher.read_rancher's result): auto is dropin where Rancher manages the node - taking out of
    config.yaml what merge mode wrote there (``unmerge``) - and merge elsewhere; an explicit merge where Rancher manages
    the node is refused (``refusal``: why, and the way out)."""
    host = (rancher or {}).get("managed_by") == "rancher"
    if setting == "auto":
        return ("dropin", True, None) if host else ("merge", False, None)
    if setting == "merge" and host:
        why = "; ".join(rancher_signs(rancher))
        return "merge", False, MERGE_REFUSED % (why, dropin_path)
    return setting, False, None


def machine_labels(items):
    """{Node name: its rke.cattle.io/machine label} from the items of a ``kubectl get nodes[,pods] -o json`` reply (other
    kinds, and Nodes without the label, skipped)."""
    out = {}
    for item in items or []:
        if isinstance(item, dict) and item.get("kind") == "Node":
            meta = item.get("metadata") or {}
            machine = (meta.get("labels") or {}).get(RANCHER_MACHINE_LABEL)
            if machine:
                out[str(meta.get("name"))] = str(machine)
    return out


def rancher_at_work(managed, node, cordoned_key):
    """Why the roll must not take this node now because Rancher is at work on it ([] when it may): ``managed`` is
    managed_by's result (the host's interlocks fresh from the node), ``node`` the Node object, ``cordoned_key`` our
    cordon marker. Rancher's drain (its upgradeStrategy's drain options) cordons the Node and leaves no mark on it - its
    state lives on the management cluster's Machine - so on a node Rancher manages, a cordon without our marker is
    taken as Rancher's."""
    reasons = list(managed.get("at_work") or [])
    meta, spec = node.get("metadata") or {}, node.get("spec") or {}
    if managed.get("managed_by") == "rancher" and spec.get("unschedulable") and cordoned_key not in (meta.get("annotations") or {}):
        reasons.append("the Node is cordoned and Rancher manages it: Rancher's drain may be at work (it leaves no mark on the "
                       "Node) - wait for Rancher's plan to finish, or uncordon the node if the cordon is an admin's")
    return reasons


# ---- A Rancher-native path, as output only (plan.yml): Rancher owns the settings, we never patch its objects.

RANCHER_NAMESPACE = "fleet-default"
CHECKPOINT_WARNING = (
    "Rancher restarts rke2 with these settings but never deletes the kubelet's checkpoints: a node whose kubelet ran "
    "another CPU or Memory Manager policy refuses /var/lib/kubelet/cpu_manager_state or memory_manager_state and goes "
    "NotReady (\"configured policy ... differs from state checkpoint policy\", rancher/rancher#32783). Roll the nodes "
    "with maitred.rke2_numa.rolling (it drains, resets the checkpoints and proves the pinning), or drain each node and "
    "delete both files before Rancher applies the change.")


def hardware_classes(plans):
    """[(class id, [hosts], plan)] of ``plans`` ({host: plan}): hosts whose plans write the same kubelet args, labels
    and taints share a class; its id is the first 10 hex digits of their sha256 (a label value)."""
    classes = {}
    for host in sorted(plans):
        plan = plans[host]
        key = json.dumps([plan["kubelet_args"], plan.get("node_labels") or [], plan.get("node_taints") or []])
        classes.setdefault(key, (hashlib.sha256(key.encode()).hexdigest()[:10], [], plan))[1].append(host)
    return sorted(classes.values(), key=lambda c: c[1][0])


def rancher_selector_config(plans, machine_label, cluster, dropin_path, dropin_text):
    """The Rancher-native alternative for ``plans`` ({host: plan}), per hardware class: the ``machineSelectorConfig``
    entry (the whole kubelet-arg list, for the machines labelled ``machine_label=<class>``), and the
    ``machineSelectorFiles`` entry that carries our drop-in instead, with the Secret it reads (in fleet-default,
    authorized for ``cluster``). ``dropin_text(plan)``: the drop-in's text. Returns {"cluster_spec": {...},
    "secrets": [...], "classes": [{class, hosts}], "warning": CHECKPOINT_WARNING}."""
    selector_config, selector_files, secrets, classes = [], [], [], []
    for ident, hosts, plan in hardware_classes(plans):
        selector = {"matchLabels": {machine_label: ident}}
        config = {"kubelet-arg": list(plan["kubelet_args"])}
        if plan.get("node_labels"):
            config["node-label"] = list(plan["node_labels"])
        if plan.get("node_taints"):
            config["node-taint"] = list(plan["node_taints"])
        selector_config.append({"config": config, "machineLabelSelector": json.loads(json.dumps(selector))})
        name = "rke2-numa-%s" % ident
        key = dropin_path.rsplit("/", 1)[-1]
        selector_files.append({"fileSources": [{"secret": {"name": name, "items": [
            {"key": key, "path": dropin_path, "permissions": "0600"}]}}], "machineLabelSelector": selector})
        secrets.append({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                        "metadata": {"name": name, "namespace": RANCHER_NAMESPACE,
                                     "annotations": {"rke.cattle.io/object-authorized-for-clusters": cluster}},
                        "stringData": {key: dropin_text(plan)}})
        classes.append({"class": ident, "hosts": hosts})
    return {"classes": classes, "machine_label": machine_label, "warning": CHECKPOINT_WARNING,
            "machineSelectorConfig": selector_config, "machineSelectorFiles": selector_files, "secrets": secrets}


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (the drop-in in a Secret) as literal blocks."""


_BlockDumper.add_representer(str, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))


def rancher_selector_text(result):
    """rancher_selector_config's result as the file plan.yml writes (rancher.yaml): what to paste where, the
    checkpoint warning, then the Cluster spec's two lists and the Secrets, as YAML documents."""
    head = ["# Rancher-native alternative to the roll (rke2_numa_config_mode auto writes the same drop-in on each node):",
            "# Rancher then owns these settings. Nothing here was applied - this collection never patches provisioning.cattle.io",
            "# objects (they need the management cluster's credentials).",
            "#",
            "# 1. Label each machine pool (or custom node's registration) with %s=<class> below." % result["machine_label"],
            "# 2. Paste ONE of the two lists under spec.rkeConfig of the provisioning.cattle.io/v1 Cluster:",
            "#    machineSelectorConfig - the whole kubelet-arg list into Rancher's 50-rancher.yaml (visible in Rancher's UI;",
            "#      any kubelet-arg of machineGlobalConfig is replaced for these machines), or",
            "#    machineSelectorFiles - our drop-in, from the Secret below (create it first, in %s)." % RANCHER_NAMESPACE,
            "#"]
    head += ["# " + line for line in textwrap.wrap("WARNING: " + result["warning"], 110)]
    head += ["#", "# Hardware classes (hosts whose plans write the same kubelet args):"]
    head += ["#   %s: %s" % (c["class"], ", ".join(c["hosts"])) for c in result["classes"]]
    spec = {"machineSelectorConfig": result["machineSelectorConfig"], "machineSelectorFiles": result["machineSelectorFiles"]}
    docs = [yaml.dump(d, Dumper=_BlockDumper, default_flow_style=False, sort_keys=False, width=1000)
            for d in [spec] + result["secrets"]]
    return "\n".join(head) + "\n---\n" + "---\n".join(docs)
