# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who manages the node, and the config mode that follows from it."""

from __future__ import annotations

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rancher import config_mode, managed_by

DROPIN = "/etc/rancher/rke2/config.yaml.d/90-rke2-numa.yaml"
HOST = {"managed_by": "rancher", "evidence": ["/etc/rancher/rke2/config.yaml.d/50-rancher.yaml (Rancher's RKE2 settings)"],
        "at_work": []}
NONE = {"managed_by": "none", "evidence": [], "at_work": []}


@pytest.mark.parametrize("setting, host, expected", [
    ("auto", HOST, ("dropin", True, None)),
    ("auto", NONE, ("merge", False, None)),
    ("auto", None, ("merge", False, None)),
    ("dropin", HOST, ("dropin", False, None)),
    ("dropin", NONE, ("dropin", False, None)),
    ("merge", NONE, ("merge", False, None)),
])
def test_auto_is_the_drop_in_where_rancher_manages_the_node_and_merge_elsewhere(setting, host, expected):
    assert config_mode(setting, host, DROPIN) == expected


def test_an_explicit_merge_where_rancher_manages_the_node_is_refused_with_the_evidence_and_the_way_out():
    mode, unmerge, refusal = config_mode("merge", HOST, DROPIN)
    assert mode == "merge" and not unmerge
    assert "50-rancher.yaml (Rancher's RKE2 settings)" in refusal and "rke2_numa_config_mode=auto" in refusal and DROPIN in refusal


def test_the_node_label_is_evidence_beside_the_host_s():
    assert managed_by(NONE, {"rke.cattle.io/machine": "m-1"}) == {
        "managed_by": "rancher", "evidence": ["the Node's label rke.cattle.io/machine=m-1"], "at_work": []}
    assert managed_by(HOST, None)["evidence"] == HOST["evidence"]
    assert managed_by(None, None) == NONE
    assert managed_by(dict(NONE, at_work=["rancher-system-agent is applying a plan (...)"]), {})["managed_by"] == "rancher"


MARKER = "rke2-numa.maitred.io/cordoned"


def _node(unschedulable=False, annotations=None, labels=None):
    return {"kind": "Node", "metadata": {"name": "gpu-1", "annotations": annotations or {}, "labels": labels or {}},
            "spec": {"unschedulable": unschedulable}}


def test_rancher_at_work_keeps_the_roll_away_interlock_or_unmarked_cordon():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rancher import rancher_at_work
    assert rancher_at_work(managed_by(HOST), _node(), MARKER) == []
    busy = dict(HOST, at_work=["rancher-system-agent is applying a plan (/var/lib/rancher/agent/interlock/applyinator-active, for 3 s)"])
    assert rancher_at_work(managed_by(busy), _node(), MARKER) == busy["at_work"]
    # a cordon that is not ours on a node Rancher manages: Rancher's drain leaves no mark
    reasons = rancher_at_work(managed_by(HOST), _node(unschedulable=True), MARKER)
    assert len(reasons) == 1 and "Rancher's drain may be at work" in reasons[0]
    assert rancher_at_work(managed_by(HOST), _node(True, {MARKER: "roll-1"}), MARKER) == []      # ours
    assert rancher_at_work(managed_by(NONE), _node(unschedulable=True), MARKER) == []            # an admin's, no Rancher
    by_label = managed_by(NONE, {"rke.cattle.io/machine": "m-1"})
    assert rancher_at_work(by_label, _node(unschedulable=True), MARKER), by_label


def test_machine_labels_from_the_cluster_s_reply():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rancher import machine_labels
    items = [_node(labels={"rke.cattle.io/machine": "m-1"}), dict(_node(), metadata={"name": "gpu-2"}),
             {"kind": "Pod", "metadata": {"name": "p", "labels": {"rke.cattle.io/machine": "x"}}}, "junk"]
    assert machine_labels(items) == {"gpu-1": "m-1"}


def test_the_rancher_native_alternative_has_one_entry_per_hardware_class_and_the_checkpoint_warning():
    import yaml
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rancher import rancher_selector_config, rancher_selector_text
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import dropin_config
    same = {"kubelet_args": ["cpu-manager-policy=static", "reserved-cpus=0,8"], "node_labels": [], "node_taints": []}
    other = {"kubelet_args": ["cpu-manager-policy=static", "reserved-cpus=0,1"], "node_labels": ["gpu=1"], "node_taints": []}
    result = rancher_selector_config({"b": same, "a": dict(same), "c": other}, "example.com/class", "gpu-prod", DROPIN,
                                     lambda p: dropin_config(p["kubelet_args"], p["node_labels"], p["node_taints"]))
    assert [c["hosts"] for c in result["classes"]] == [["a", "b"], ["c"]]
    first, second = result["machineSelectorConfig"]
    assert first["config"] == {"kubelet-arg": same["kubelet_args"]}
    assert second["config"] == {"kubelet-arg": other["kubelet_args"], "node-label": ["gpu=1"]}
    assert first["machineLabelSelector"] == {"matchLabels": {"example.com/class": result["classes"][0]["class"]}}
    files = result["machineSelectorFiles"][0]["fileSources"][0]["secret"]
    assert files["items"] == [{"key": "90-rke2-numa.yaml", "path": DROPIN, "permissions": "0600"}]
    secret = result["secrets"][0]
    assert secret["metadata"]["namespace"] == "fleet-default" and secret["metadata"]["name"] == files["name"]
    assert secret["metadata"]["annotations"] == {"rke.cattle.io/object-authorized-for-clusters": "gpu-prod"}
    assert yaml.safe_load(secret["stringData"]["90-rke2-numa.yaml"]) == {"kubelet-arg+": same["kubelet_args"]}
    text = rancher_selector_text(result)
    docs = list(yaml.safe_load_all(text))
    assert list(docs[0]) == ["machineSelectorConfig", "machineSelectorFiles"] and len(docs) == 3
    assert "never deletes the kubelet's checkpoints" in text and "&id" not in text and text.startswith("# Rancher-native")
    assert "# Managed by maitred.rke2_numa" in docs[1]["stringData"]["90-rke2-numa.yaml"]
