# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is the node drained? Decided from the API after the drain, not from the drain's exit code (controller side).

``kubectl drain --pod-selector`` evicts only the pods it selects and exits 0; pods it never touched keep
running. The kubelet reset stops rke2-agent (KillMode=process: the pods go on running) and deletes the CPU
and Memory Manager checkpoints under them, which corrupts their pinning. What may stay on a node whose
kubelet state is reset: DaemonSet pods (kubectl drain --ignore-daemonsets leaves them; the kubelet
re-admits them) and mirror pods of static pods (``kubernetes.io/config.mirror``; the kubelet owns them),
and pods that have ended (Succeeded or Failed).
"""

from __future__ import annotations

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def _controller_kind(pod):
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref.get("kind")
    return None


def pods_left(pods, node_name):
    """The pods on ``node_name`` that a kubelet reset must not run under: ["ns/name (kind)", ...], sorted."""
    left = []
    for pod in pods or []:
        meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
        if spec.get("nodeName") != node_name or status.get("phase") in ("Succeeded", "Failed"):
            continue
        kind = _controller_kind(pod)
        if kind == "DaemonSet" or MIRROR_ANNOTATION in (meta.get("annotations") or {}):
            continue
        left.append("%s/%s (%s)" % (meta.get("namespace"), meta.get("name"), kind or "no controller"))
    return sorted(left)
