# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Capacity-aware maintenance windows: will the pods a drain evicts find room elsewhere? (controller side)

A drained GPU node whose pods cannot be scheduled anywhere else is an outage, not maintenance. Before a
node of the batch is drained, the GPU pods it would evict (and the whole exclusive CPUs of the Guaranteed
ones) are placed, largest first, on what the rest of the fleet has free: allocatable minus the requests of
the pods bound there, on Nodes that are Ready, schedulable and not in the batch. A pod that fits nowhere
would be left Pending. Neither kured, the system-upgrade-controller nor MCO looks.

The model is the scheduler's resource fit only (requests against allocatable, one pod on one Node); taints,
affinity and topology spread can only make it worse, so a refusal here is certain and a pass is
necessary, not sufficient. Quantities: plugin_utils/quantity.py.
"""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.drain import MIRROR_ANNOTATION
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import QuantityError, device_count, parse_cpu


def _number(value, cpu=False):
    if not cpu or value is None:
        return device_count(value)
    try:
        return parse_cpu(str(value))
    except QuantityError:
        return 0


def _requests(pod, resource, cpu=False):
    """The pod's effective request of ``resource``: its own budget (``spec.resources``, CPU and memory) when it sets one
    - what the scheduler and the kubelet count then (component-helpers resource.PodRequests) -, else the larger of the
    sum over containers and the largest init container."""
    spec = pod.get("spec") or {}
    budget = spec.get("resources") or {}
    if resource in ("cpu", "memory"):
        value = (budget.get("requests") or {}).get(resource, (budget.get("limits") or {}).get(resource))
        if value is not None:
            return _number(value, cpu)

    def one(container):
        res = container.get("resources") or {}
        value = (res.get("requests") or {}).get(resource)
        if value is None:   # a limit without a request requests the limit (extended resources always)
            value = (res.get("limits") or {}).get(resource)
        return _number(value, cpu)

    main = sum(one(c) for c in spec.get("containers") or [])
    init = max([one(c) for c in spec.get("initContainers") or []] or [0])
    return max(main, init)


def _guaranteed_whole_cpus(pod):
    """Exclusive CPUs the static CPU Manager gives the pod: Guaranteed QoS with an integer CPU request, else 0."""
    if (pod.get("status") or {}).get("qosClass") not in (None, "Guaranteed"):
        return 0
    cpus = _requests(pod, "cpu", cpu=True)
    return int(cpus) if cpus and float(cpus).is_integer() else 0


def _active(pod):
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def _evicted(pod):
    """Would kubectl drain --ignore-daemonsets evict it? Every pod but DaemonSet and mirror pods."""
    meta = pod.get("metadata") or {}
    if MIRROR_ANNOTATION in (meta.get("annotations") or {}):
        return False
    return not any(ref.get("controller") and ref.get("kind") == "DaemonSet" for ref in meta.get("ownerReferences") or [])


def _ready(node):
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (node.get("status") or {}).get("conditions") or [])


def gpu_pods(node_name, pods, gpu_resource):
    """The pods a drain of ``node_name`` would evict that request GPUs: [(ns/name, gpus, exclusive cpus)]."""
    out = []
    for pod in pods:
        if (pod.get("spec") or {}).get("nodeName") != node_name or not _active(pod) or not _evicted(pod):
            continue
        gpus = _requests(pod, gpu_resource)
        if gpus:
            meta = pod.get("metadata") or {}
            out.append(("%s/%s" % (meta.get("namespace"), meta.get("name")), gpus, _guaranteed_whole_cpus(pod)))
    return out


def is_idle(node_name, pods, gpu_resource):
    """No GPU pod would move: rolling this node first spends the window where no workload moves."""
    return not gpu_pods(node_name, pods, gpu_resource)


def free_capacity(nodes, pods, exclude, gpu_resource):
    """{Node name: [free GPUs, free CPUs]} of the Ready, schedulable Nodes not in ``exclude``."""
    used = {}
    for pod in pods:
        name = (pod.get("spec") or {}).get("nodeName")
        if name and _active(pod):
            gpus, cpus = used.get(name, (0, 0.0))
            used[name] = (gpus + _requests(pod, gpu_resource), cpus + _requests(pod, "cpu", cpu=True))
    free = {}
    for node in nodes:
        name = (node.get("metadata") or {}).get("name")
        if not name or name in exclude or (node.get("spec") or {}).get("unschedulable") or not _ready(node):
            continue
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        gpus = _number(allocatable.get(gpu_resource))
        if not gpus:
            continue
        used_gpus, used_cpus = used.get(name, (0, 0.0))
        free[name] = [gpus - used_gpus, _number(allocatable.get("cpu"), cpu=True) - used_cpus]
    return free


EXACT_PODS = 12      # up to this many GPU pods to move, every placement is searched: a refusal is certain
EXACT_STEPS = 200000  # and the search is bounded (a placement search is exponential in the worst case)


def _fits(pods, free, steps):
    """A placement of every pod (largest first) on ``free`` ({node: [gpus, cpus]}): True, False (none exists), or
    None when the search ran out of ``steps`` (a list with one counter). Nodes with the same free capacity are
    tried once (they are interchangeable)."""
    if not pods:
        return True
    name, gpus, cpus = pods[0]
    seen = set()
    for node in sorted(free):
        room = tuple(free[node])
        if room in seen or room[0] < gpus or room[1] < cpus:
            continue
        seen.add(room)
        steps[0] -= 1
        if steps[0] < 0:
            return None
        free[node][0] -= gpus
        free[node][1] -= cpus
        found = _fits(pods[1:], free, steps)
        free[node][0] += gpus
        free[node][1] += cpus
        if found is not False:
            return found
    return False


def _first_fit(pods, free):
    """Largest first, each on the first Node by name with room: the pods left over."""
    left = []
    for name, gpus, cpus in pods:
        target = next((n for n in sorted(free) if free[n][0] >= gpus and free[n][1] >= cpus), None)
        if target is None:
            left.append((name, gpus, cpus))
        else:
            free[target][0] -= gpus
            free[target][1] -= cpus
    return left


def _label(pod):
    return "%s (%d GPU%s)" % (pod[0], pod[1], "" if pod[1] == 1 else "s")


def capacity_check(node_name, batch, nodes, pods, gpu_resource):
    """Would draining ``node_name`` leave GPU pods Pending, with the nodes of ``batch`` before it (in batch order)
    drained too? Their evicted pods and this node's must fit together on the rest of the fleet (Ready, schedulable
    Nodes outside the batch): each node of a batch is not judged as if the free GPUs were its alone.

    Up to EXACT_PODS pods every placement is searched (first fit can miss one: a 2-GPU/5-CPU pod and a 1-GPU/50-CPU
    one fit on 2 GPU/10 CPU and 2 GPU/60 CPU only one way), and a refusal says "would leave ... Pending"; beyond
    that, first fit decides and a refusal says "may leave ... Pending" (no placement was found, not proven none).
    Returns {pending: [ns/name (N GPUs)], moving: int, free_gpus: int, ok: bool, certain: bool, msg: str or None}."""
    batch = list(batch or [])
    before = batch[:batch.index(node_name)] if node_name in batch else [n for n in batch if n != node_name]
    own = gpu_pods(node_name, pods, gpu_resource)
    earlier = [p for n in before for p in gpu_pods(n, pods, gpu_resource)]
    moving = sorted(earlier + own, key=lambda p: (-p[1], -p[2], p[0]))
    free = free_capacity(nodes, pods, set(batch) | {node_name}, gpu_resource)
    total = sum(max(gpus, 0) for gpus, dummy in free.values())
    certain = len(moving) <= EXACT_PODS
    found = _fits(moving, {n: list(v) for n, v in free.items()}, [EXACT_STEPS]) if certain else None
    certain = found is not None
    if found:
        return {"pending": [], "moving": len(own), "free_gpus": total, "ok": True, "certain": True, "msg": None}
    # no placement (or none found): name what first fit leaves over, the earlier nodes' pods placed first
    left = _first_fit(sorted(earlier, key=lambda p: (-p[1], -p[2], p[0])), free)
    left += _first_fit(sorted(own, key=lambda p: (-p[1], -p[2], p[0])), free)
    if not left and not certain:
        return {"pending": [], "moving": len(own), "free_gpus": total, "ok": True, "certain": False, "msg": None}
    if not left:   # first fit placed every pod, so a placement exists: the search cannot have proven none
        left = list(own)
    pending = [_label(p) for p in left]
    with_batch = (" with %s drained in the same batch" % ", ".join(before)) if before else ""
    msg = ("draining %s%s %s leave %d GPU pod%s Pending: %s - the rest of the fleet has %d %s free on Ready, schedulable "
           "Nodes%s; not drained (rke2_numa_allow_pending_pods=true drains it anyway)"
           % (node_name, with_batch, "would" if certain else "may", len(pending), "" if len(pending) == 1 else "s", ", ".join(pending),
              total, gpu_resource, "" if certain else " (no placement found among too many pods to try them all)"))
    return {"pending": pending, "moving": len(own), "free_gpus": total, "ok": False, "certain": certain, "msg": msg}


def roll_order(candidates, pods, gpu_resource, order="idle_first"):
    """The hosts to roll, in the order to roll them. ``candidates``: [{host, node}]; ``order``: ``idle_first`` (nodes
    no GPU pod would leave first, then the others, each by name) or ``sorted`` (by name)."""
    if order == "sorted":
        return sorted(c["host"] for c in candidates)
    return [c["host"] for c in sorted(candidates, key=lambda c: (not is_idle(c["node"], pods, gpu_resource), c["host"]))]
