# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is the node drained? DaemonSet, mirror and ended pods may stay; anything else may not."""
from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.drain import pods_left


def pod(name, kind=None, node="gpu-a", phase="Running", mirror=False, namespace="ml"):
    meta = {"namespace": namespace, "name": name}
    if kind:
        meta["ownerReferences"] = [{"kind": "Node" if mirror else kind, "name": "x", "controller": True}]
    if mirror:
        meta["annotations"] = {"kubernetes.io/config.mirror": "abc"}
    return {"metadata": meta, "spec": {"nodeName": node}, "status": {"phase": phase}}


def test_only_daemonset_mirror_and_ended_pods_may_stay():
    pods = [pod("canal", "DaemonSet"), pod("kube-proxy", "Node", mirror=True), pod("job-done", "Job", phase="Succeeded"),
            pod("crashed", "Job", phase="Failed"), pod("vllm-0", "StatefulSet"), pod("debug"), pod("web-1", "ReplicaSet", node="gpu-b"),
            pod("starting", "ReplicaSet", phase="Pending")]
    assert pods_left(pods, "gpu-a") == ["ml/debug (no controller)", "ml/starting (ReplicaSet)", "ml/vllm-0 (StatefulSet)"]
    assert pods_left([], "gpu-a") == [] and pods_left(None, "gpu-a") == []
