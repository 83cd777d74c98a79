# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Prove the pinning on a live node, and audit the pods that cannot be pinned (controller side).

The prove role creates probe pods (``probe_pods``): Guaranteed, whole CPUs,
memory, one GPU (and one hugepage when the plan has hugepages) on the node -
or one per pod shape of the plan.
Each prints what it got - its cgroup's ``cpuset.cpus.effective`` and
``cpuset.mems.effective``, ``NVIDIA_VISIBLE_DEVICES``, and nvidia-smi's PCI bus
id where the image has it - and exits. ``judge_probe`` decides from that
output, the pod's status and the node's CPU Manager checkpoint whether the
kubelet really gave the pod exclusive CPUs, memory and its GPU on one NUMA
node. ``audit_pods`` reads one ``kubectl get pods -A -o json`` for the QoS
trap: GPU pods that are not Guaranteed, or ask for a fraction of a CPU, are
never pinned, and nothing says so.

Kubelet facts used here (kubernetes/kubernetes, pkg/kubelet/cm):
- the CPU Manager's static policy gives exclusive CPUs only to a container of
  a Guaranteed pod whose CPU request is a whole number (policy_static.go
  ``guaranteedCPUs``); every other container runs on the shared pool, the
  ``defaultCpuSet``, which includes the reserved CPUs;
- the Memory Manager's Static policy pins only Guaranteed pods;
- a pod the Topology Manager cannot align is rejected with the reason
  ``TopologyAffinityError`` (topologymanager/topology_manager.go);
- the device manager aligns a device only when its device plugin reports the
  device's NUMA node (``TopologyInfo``); without it the GPU comes from anywhere.
"""

from __future__ import annotations

import hashlib
import re

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import CpusetError, format_cpulist, parse_cpulist
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import dra, dra_plan
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_rules import cpus_per_core, parse_kubelet_args
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_state import pod_level_resource_managers
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import shortfall
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import (
    QuantityError,
    binary_si,
    device_count,
    parse_bytes,
    parse_cpu,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.task_result import failure_reason

PROBE_LABELS = {"app.kubernetes.io/name": "rke2-numa-probe", "app.kubernetes.io/managed-by": "maitred.rke2_numa"}
MARK = "rke2-numa-probe"
# The probe's script: POSIX sh and cat (busybox has both). It prints what it got, each reading on its own
# line; judge_probe decides. CPUs and memory nodes: its cgroup's cpuset (cgroup v2: a container's
# /sys/fs/cgroup is its own cgroup; then cgroup v1's cpuset files), and the kernel's own view of the
# task, /proc/self/status Cpus_allowed_list / Mems_allowed_list, for a runtime that does not delegate
# the cpuset controller. GPUs, as each NVIDIA device-plugin strategy hands them (k8s-device-plugin
# internal/plugin/server.go getAllocateResponse): NVIDIA_VISIBLE_DEVICES (envvar: UUIDs, indices or
# MIG ids; volume-mounts: the folder below, one file per id), the /dev/nvidiaN nodes the runtime
# created (CDI too), the driver's /proc/driver/nvidia/gpus entries (the NVIDIA container runtime shows
# only the container's) and nvidia-smi's PCI bus ids where the image has it.
PROBE_SCRIPT = r"""r=/sys/fs/cgroup
c=; m=
if [ -r "$r/cpuset.cpus.effective" ]; then
  c=$(cat "$r/cpuset.cpus.effective"); m=$(cat "$r/cpuset.mems.effective")
elif [ -r "$r/cpuset/cpuset.effective_cpus" ]; then
  c=$(cat "$r/cpuset/cpuset.effective_cpus"); m=$(cat "$r/cpuset/cpuset.effective_mems")
fi
echo "MARK cpus=$c"
echo "MARK mems=$m"
if [ -r /proc/self/status ]; then
  while IFS= read -r l; do
    case "$l" in
      Cpus_allowed_list:*) echo "MARK allowed_cpus=${l#*:}" ;;
      Mems_allowed_list:*) echo "MARK allowed_mems=${l#*:}" ;;
    esac
  done < /proc/self/status
fi
echo "MARK visible=${NVIDIA_VISIBLE_DEVICES:-}"
s=; for f in /var/run/nvidia-container-devices/*; do [ -e "$f" ] && s="$s${f##*/},"; done
echo "MARK mounts=$s"
s=; for f in /dev/nvidia[0-9]*; do [ -e "$f" ] && s="$s${f##*/nvidia},"; done
echo "MARK devices=$s"
s=; for f in /proc/driver/nvidia/gpus/*; do [ -d "$f" ] && s="$s${f##*/},"; done
echo "MARK procfs=$s"
if command -v nvidia-smi >/dev/null 2>&1; then
  echo "MARK bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | tr '\n' ',')"
fi
sleep "${RKE2_NUMA_PROBE_HOLD:-0}"
""".replace("MARK", MARK)
# Whole-node probes hold what they got this long after printing it, so that the kubelet admits the other probes
# while they do: what one holds, the next cannot take (PROBE_HOLD seconds; the kubelet admits a List's pods at once).
PROBE_HOLD = 5
# The paths the script reads, which a runtime maps into the container (the rke2 stand-in maps each to
# a folder of its own, as a mount namespace would).
PROBE_PATHS = ("/sys/fs/cgroup", "/proc/self/status", "/var/run/nvidia-container-devices", "/dev/nvidia",
               "/proc/driver/nvidia/gpus")
VOLUME_MOUNTS_ROOT = "/var/run/nvidia-container-devices"
TERMINAL = ("Succeeded", "Failed")
# A DRA probe (dra_probe_pods): its claim entry, and the toleration that lets the scheduler place it on the cordoned node
# (pkg/scheduler/framework/plugins/nodeunschedulable Filter: a pod that tolerates this taint goes to an unschedulable
# Node) - a DRA probe cannot bypass the scheduler as the others do: only the scheduler allocates a claim (a pod with a
# nodeName and an unallocated claim never starts).
DRA_PROBE_CLAIM = "numa"
UNSCHEDULABLE_TOLERATION = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}


class ProveError(ValueError):
    pass


def _probe_base(node_name):
    """A DNS-label-safe pod name stem for the node: its name when short, else a cut plus a hash."""
    base = re.sub(r"[^a-z0-9-]", "-", node_name.lower()).strip("-") or "node"
    if len(base) > 30:
        base = base[:21].rstrip("-") + "-" + hashlib.sha256(node_name.encode("utf-8")).hexdigest()[:8]
    return "%s-%s" % (MARK, base)


def probe_shapes(plan, topology, memory, use_pod_shapes=True, whole_nodes=False):
    """What to probe: the plan's pod shapes (rke2_numa_pod_shapes) when it has some and
    ``use_pod_shapes``, else per NUMA node that holds GPUs one pod of a whole core,
    ``memory``, one GPU and one hugepage of the plan's size when the plan reserves
    hugepages on that node. [{name, cpu, memory, gpus, hugepages}] (bytes), and ``numa_node`` for a
    probe of a NUMA node: the kubelet places it where it finds room, so it is evidence for that node
    only if it landed there (prove_report's ``numa_nodes``).

    The Topology Manager takes the lowest NUMA node with room: one-GPU probes all land on node 0 of a
    node with free GPUs there. ``whole_nodes`` (no pod holds a GPU of the node: drained, or idle): each
    probe asks for every GPU of its NUMA node, and they run together - while the first holds node 0's
    GPUs the next can only go to node 1, and so on - so that each GPU NUMA node is really used."""
    if use_pod_shapes and plan.get("pod_shapes"):
        return [dict(fit["request"], name=fit["name"]) for fit in plan["pod_shapes"]]
    try:
        memory_bytes = parse_bytes(memory, "rke2_numa_probe_memory")
    except QuantityError as e:
        raise ProveError(str(e))
    cpu = max(cpus_per_core(topology), 1)
    page = (plan.get("hugepages") or {}).get("size_kb") or 0
    per_node = (plan.get("hugepages") or {}).get("per_node") or {}
    out = []
    for table in plan["numa_tables"]:
        if not table["gpus"]:
            continue
        # numa_node: the node this probe is meant to exercise - evidence for it only if the kubelet put it there
        out.append({"name": "numa%d" % table["node"], "cpu": cpu, "memory": memory_bytes,
                    "gpus": len(table["gpus"]) if whole_nodes else 1,
                    "hugepages": page * 1024 if per_node.get(str(table["node"])) else 0, "numa_node": table["node"]})
    return out


def probe_tolerations(taints):
    """The probes' tolerations: the taints the plan gives the node (``key[=value]:Effect``, RKE2's node-taint), each
    exactly - never a toleration without a key, which would tolerate the control plane's taints too (the identity's
    admission policy refuses that, plugin_utils/admission.py). The scheduler is bypassed (nodeName), so a NoSchedule
    taint, the cordon's among them, does not keep a probe off; the kubelet admits a pod only when it tolerates the
    node's NoExecute taints (pkg/kubelet/lifecycle/predicate.go), so a NoExecute taint the plan does not know of shows
    as a rejected probe."""
    out = []
    for taint in taints or []:
        pair, _sep, effect = str(taint).rpartition(":")
        key, has_value, value = pair.partition("=")
        toleration = {"key": key, "operator": "Equal", "value": value} if has_value else {"key": key, "operator": "Exists"}
        toleration["effect"] = effect
        if toleration not in out:
            out.append(toleration)
    return out


def pod_level_shape(plan, topology, memory):
    """The pod-level probe's shape, where the node's kubelet runs the pod-level resource managers (KEP-5526:
    PodLevelResourceManagers, on from 1.37 - kubelet_state.pod_level_resource_managers) and pins CPUs: a pod Guaranteed
    by its own budget (``spec.resources``: a whole core and ``memory``), its container without requests - what the
    kubelet gives such a pod (one NUMA-aligned set of the budget's CPUs, its container on it) is what the audit assumes
    (finish_pod_audit). No GPU: extended resources stay per container, and the node's GPU probes prove those. None
    where the node's kubelet would not pin such a pod."""
    if not (pod_level_resource_managers(plan) and probe_expectations(plan)["exclusive_cpus"]):
        return None
    try:
        memory_bytes = parse_bytes(memory, "rke2_numa_probe_memory")
    except QuantityError as e:
        raise ProveError(str(e))
    return {"name": "pod-level", "cpu": max(cpus_per_core(topology), 1), "memory": memory_bytes, "gpus": 0, "hugepages": 0,
            "pod_level": True}


def _probe_manifest(name, namespace, image, shape, requests, hold, tolerations, placement):
    """A probe pod: restricted Pod Security, the probe script, ``requests`` as its requests and limits, placed by
    ``placement`` (nodeName, or the DRA probe's node affinity and claim)."""
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(PROBE_LABELS),
                     "annotations": {"rke2-numa.maitred.io/shape": shape["name"]}},
        "spec": dict({
            "restartPolicy": "Never",
            "tolerations": tolerations,
            "terminationGracePeriodSeconds": 1,
            "automountServiceAccountToken": False,
            "securityContext": {"runAsNonRoot": True, "runAsUser": 65534, "runAsGroup": 65534,
                                "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{
                "name": "probe", "image": image, "imagePullPolicy": "IfNotPresent",
                "command": ["sh", "-c", PROBE_SCRIPT],
                "resources": {"requests": dict(requests), "limits": dict(requests)},
                "env": [{"name": "RKE2_NUMA_PROBE_HOLD", "value": str(hold)}],
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
            }],
        }, **placement),
    }


def dra_probe_pods(plan, node_name, image, namespace, memory):
    """The DRA probes of a node planned with dra-driver-cpu: per claim template of its plan, a ResourceClaimTemplate of
    the probe's own (the plan's spec, named as the probe) and a pod that takes it - its GPUs and CPUs come from the claim,
    its memory is a request. The pod does not bypass the scheduler: required node affinity on the Node's name (matchFields
    metadata.name, the form the admission policy accepts) and a toleration of the cordon's taint. All run together (each
    holds what it got a moment), so that the allocator spreads them over the NUMA nodes. [{name, namespace, shape,
    requests, manifest, template}]."""
    try:
        memory_bytes = parse_bytes(memory, "rke2_numa_probe_memory")
    except QuantityError as e:
        raise ProveError(str(e))
    base = _probe_base(node_name)
    templates = (plan.get("dra") or {}).get("templates") or []
    hold = PROBE_HOLD if len(templates) > 1 else 0
    tolerations = probe_tolerations(plan.get("node_taints")) + [dict(UNSCHEDULABLE_TOLERATION)]
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}}
    probes = []
    for i, entry in enumerate(templates):
        name = "%s-%d" % (base, i)
        shape = {"name": entry["shape"], "cpu": entry["cpu"], "memory": memory_bytes, "gpus": entry["gpus"], "hugepages": 0,
                 "dra_template": entry["name"]}
        requests = {"memory": binary_si(memory_bytes)}
        manifest = _probe_manifest(name, namespace, image, shape, requests, hold, tolerations, {
            "affinity": affinity, "resourceClaims": [{"name": DRA_PROBE_CLAIM, "resourceClaimTemplateName": name}]})
        manifest["spec"]["containers"][0]["resources"]["claims"] = [{"name": DRA_PROBE_CLAIM}]
        template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                    "metadata": {"name": name, "namespace": namespace, "labels": dict(PROBE_LABELS)},
                    "spec": entry["template"]["spec"]}
        probes.append({"name": name, "namespace": namespace, "shape": shape, "manifest": manifest, "template": template,
                       "requests": dict(requests, **{"claim %s" % entry["name"]: "%d GPU, %d CPU" % (entry["gpus"], entry["cpu"])})})
    return probes


def probe_pods(plan, topology, node_name, image, namespace, gpu_resource, memory, use_pod_shapes=True, whole_nodes=False):
    """The probe pods for one node: [{name, namespace, shape, requests, manifest}] (the
    arguments are the prove role's variables, whose defaults live there; ``whole_nodes``: see probe_shapes), and on a
    node whose kubelet runs the pod-level resource managers one pod-level probe (pod_level_shape). A node planned with
    dra-driver-cpu gets its DRA probes instead (dra_probe_pods)."""
    if dra.claims_planned(plan):
        return dra_probe_pods(plan, node_name, image, namespace, memory)
    hugepage_resource = (plan.get("hugepages") or {}).get("resource")
    probes = []
    base = _probe_base(node_name)
    shapes = probe_shapes(plan, topology, memory, use_pod_shapes, whole_nodes)
    pod_level = pod_level_shape(plan, topology, memory)
    shapes = shapes + [pod_level] if pod_level and shapes else shapes
    hold = PROBE_HOLD if whole_nodes and sum(1 for shape in shapes if "numa_node" in shape) > 1 else 0
    for i, shape in enumerate(shapes):
        if shape["hugepages"] and not hugepage_resource:
            raise ProveError("pod shape %s asks for hugepages, and the plan has none" % shape["name"])
        requests = {"cpu": str(shape["cpu"]), "memory": binary_si(shape["memory"])}
        if shape["hugepages"]:
            requests[hugepage_resource] = binary_si(shape["hugepages"])
        if shape["gpus"]:
            requests[gpu_resource] = str(shape["gpus"])
        name = "%s-%d" % (base, i)
        # the scheduler is bypassed (nodeName): the node is cordoned
        manifest = _probe_manifest(name, namespace, image, shape, requests, hold, probe_tolerations(plan.get("node_taints")),
                                   {"nodeName": node_name})
        if shape.get("pod_level"):   # the pod's own budget; its container asks for nothing (the pod's shared pool)
            manifest["spec"]["resources"] = manifest["spec"]["containers"][0].pop("resources")
        probes.append({"name": name, "namespace": namespace, "shape": shape, "requests": requests, "manifest": manifest})
    return probes


def parse_probe_log(text):
    """{cpus, mems, allowed_cpus, allowed_mems, visible, mounts, devices, procfs, bus} from the probe's
    output (the lines it marks; a reading the script did not make is absent)."""
    found = {}
    for line in (text or "").splitlines():
        m = re.match(r"^%s (cpus|mems|allowed_cpus|allowed_mems|visible|mounts|devices|procfs|bus)=(.*)$" % MARK, line.strip())
        if m:
            found[m.group(1)] = m.group(2).strip()
    return found


def _pci_address(bus_id):
    """nvidia-smi's ``00000000:18:00.0`` as sysfs names it: ``0000:18:00.0``."""
    m = re.match(r"^([0-9A-Fa-f]+):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])$", bus_id.strip())
    if not m:
        return None
    return "%04x:%s:%s.%s" % (int(m.group(1), 16) & 0xFFFF, m.group(2).lower(), m.group(3).lower(), m.group(4))


def _ids(text):
    return [item.strip() for item in (text or "").split(",") if item.strip()]


def _gpu_tables(topology):
    """The node's GPUs by UUID, PCI address, NVML index and device minor. NVML numbers the NVIDIA
    GPUs it sees in PCI bus order: the index the device plugin's ``index`` strategy hands out."""
    gpus = [d for d in topology.get("pci_devices") or [] if d.get("kind") == "gpu"]
    # NVML sees only the GPUs the NVIDIA driver owns: not one bound to vfio-pci or left unbound.
    nvidia = sorted((d for d in gpus if (d.get("vendor") or "").lower() == "0x10de" and (
        d.get("driver") == "nvidia" or (not d.get("driver") and (d.get("uuid") or d.get("minor") is not None)))),
        key=lambda d: d["address"])
    return {
        "uuid": dict((d["uuid"].lower(), d) for d in gpus if d.get("uuid")),
        "address": dict((d["address"], d) for d in gpus),
        "index": dict((str(i), d) for i, d in enumerate(nvidia)),
        "minor": dict((str(d["minor"]), d) for d in gpus if d.get("minor") is not None),
    }


def _device_for_id(ident, tables):
    """The GPU a device plugin id names: a GPU UUID, an NVML index, a MIG index (``<gpu>:<mig>``), or a
    MIG id of the older form that names its GPU (``MIG-GPU-<uuid>/<gi>/<ci>``). A MIG UUID of the newer
    form (``MIG-<uuid>``) does not name its GPU: None."""
    lowered = ident.lower()
    if lowered.startswith("gpu-"):
        return tables["uuid"].get(lowered)
    if lowered.startswith("mig-gpu-"):
        return tables["uuid"].get(lowered[4:].split("/")[0])
    m = re.match(r"^([0-9]+)(?::[0-9]+)?$", ident)
    return tables["index"].get(str(int(m.group(1)))) if m else None


IGNORED_VISIBLE = ("all", "none", "void", "")


def identify_gpus(found, topology, requested):
    """How the probe's GPUs are identified: {devices, ids, source, exact, unknown} from the first
    evidence that names them all, in this order (``exact``: the evidence lists only the container's
    GPUs, so a count that differs from the request is a finding):

    - NVIDIA_VISIBLE_DEVICES: UUIDs, indices, MIG ids (exact); with the volume-mounts strategy it
      names the folder, whose files are the ids;
    - nvidia-smi's PCI bus ids (exact, unless the ids are MIG instances: nvidia-smi lists their GPU once);
    - the /dev/nvidiaN nodes, by the driver's device minor, and the driver's /proc/driver/nvidia/gpus
      entries, by PCI address: counted only when they are as many as the request (a runtime that does
      not mask them shows every GPU of the machine).

    None when no evidence names them; ``unknown`` then lists what was seen and not mapped."""
    tables = _gpu_tables(topology)
    visible = (found.get("visible") or "").strip()
    visible_ids = _ids(found.get("mounts")) if visible == VOLUME_MOUNTS_ROOT else \
        [v for v in _ids(visible) if v.lower() not in IGNORED_VISIBLE]
    visible_ids = [v for v in visible_ids if v != "imex"]
    # MIG instances share their GPU: nvidia-smi lists the GPU once for several instances, so its count is not the
    # request's then.
    mig = any(v.upper().startswith("MIG-") or re.match(r"^[0-9]+:[0-9]+$", v) for v in visible_ids)
    sources = [
        ("NVIDIA_VISIBLE_DEVICES" if visible != VOLUME_MOUNTS_ROOT else VOLUME_MOUNTS_ROOT, visible_ids,
         lambda v: _device_for_id(v, tables), True),
        ("nvidia-smi", _ids(found.get("bus")), lambda b: tables["address"].get(_pci_address(b) or ""), not mig),
        ("/dev/nvidia*", _ids(found.get("devices")), tables["minor"].get, False),
        ("/proc/driver/nvidia/gpus", _ids(found.get("procfs")), lambda a: tables["address"].get(a.lower()), False),
    ]
    unknown = []
    for source, ids, lookup, exact in sources:
        # a list that is not exact is evidence when it is as long as the request (MIG instances: up to as long,
        # their GPU listed once); a longer one is every GPU of the machine (an unmasked runtime)
        if not ids or (not exact and (len(ids) > requested if mig else len(ids) != requested)):
            continue
        devices = [lookup(i) for i in ids]
        if all(devices):
            return {"devices": sorted(dict((d["address"], d) for d in devices).values(), key=lambda d: d["address"]),
                    "ids": ids, "source": source, "exact": exact, "unknown": []}
        unknown.extend(("/dev/nvidia%s" % i) if source == "/dev/nvidia*" else "%s %s" % (source, i)
                       for i, d in zip(ids, devices) if not d)
    return {"devices": [], "ids": [], "source": None, "exact": False, "unknown": unknown}


def _node_of_cpus(topology):
    return dict((cpu, node["id"]) for node in topology["numa_nodes"] for cpu in parse_cpulist(node.get("cpus") or ""))


def _waiting(pod):
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        waiting = (status.get("state") or {}).get("waiting")
        if waiting:
            return ("%s: %s" % (waiting.get("reason"), waiting.get("message"))) if waiting.get("message") else waiting.get("reason")
    conditions = [c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("status") == "False" and c.get("message")]
    return conditions[0]["message"] if conditions else None


def judge_probe(probe, pod, log, plan, topology, cpu_entries, gpu_resource="nvidia.com/gpu", waited=None):
    """{name, shape, ok, numa_node, cpus, mems, gpus, reasons, summary} for one probe.

    ``pod``: the pod as the API served it last (None: gone); ``log``: its output;
    ``cpu_entries``: the node's CPU Manager checkpoint entries {pod uid: {container: cpulist}}
    of the pods other than the probes, read after the probes ran; ``waited``: seconds
    waited for a Pending pod.
    """
    shape = probe["shape"]
    result = {"name": probe["name"], "shape": shape["name"], "ok": False, "verdict": "failed", "numa_node": None,
              "shape_node": shape.get("numa_node"), "cpus": "", "mems": "", "gpus": [], "reasons": [], "warnings": []}
    reasons = result["reasons"]
    wants = ", ".join("%s %s" % item for item in sorted(probe["requests"].items()))
    status = (pod or {}).get("status") or {}
    phase = status.get("phase") if pod else None
    if pod is None:
        reasons.append("the probe pod is gone before it finished (deleted by someone else?)")
    elif phase == "Failed" and status.get("reason"):
        reasons.append("the kubelet refused the probe (%s): %s: %s" % (
            wants, status["reason"], status.get("message") or "(no message)"))
        if status["reason"] == "TopologyAffinityError":
            reasons.append("what does not fit on one NUMA node: " + shortfall(shape, plan["numa_tables"]))
    elif phase == "Failed":
        codes = [((c.get("state") or {}).get("terminated") or {}).get("exitCode") for c in status.get("containerStatuses") or []]
        reasons.append("the probe failed (exit code %s; is %s an image with sh and cat?): %s" % (
            ", ".join(str(c) for c in codes if c is not None) or "unknown",
            probe["manifest"]["spec"]["containers"][0]["image"], (log or "").strip()[:300] or "no output"))
    elif phase not in TERMINAL:
        why = _waiting(pod) or "no container status"
        reasons.append("the probe is still %s after %s s (%s), asking for %s" % (phase or "unknown", waited if waited is not None else "?", why, wants))
        short = shortfall(shape, plan["numa_tables"])
        if not short.startswith("no single"):
            reasons.append("what does not fit on one NUMA node: " + short)
    found = parse_probe_log(log) if not reasons else {}
    if not reasons and ("cpus" not in found or "mems" not in found):
        reasons.append("the probe ended without printing its cpuset (log: %s)" % ((log or "").strip()[:300] or "empty"))
    if reasons:
        return _verdict(result)
    return _judge_output(result, probe, pod, found, plan, topology, cpu_entries, gpu_resource)


# What a misaligned probe is under each Topology Manager policy: the kubelet refuses a pod it cannot
# align under single-numa-node and restricted, so an admitted probe off one node is a failure there;
# best-effort admits it anyway (a warning); none asks no hint provider (not judged).
ALIGNMENT = {"single-numa-node": "fail", "restricted": "fail", "best-effort": "warn"}


def probe_expectations(plan):
    """What the probe may expect under the policies the kubelet runs (the plan's kubelet args,
    extra_kubelet_args included; the kubelet's defaults where a flag is absent):

    - ``exclusive_cpus``: CPU Manager ``static`` gives a Guaranteed container with whole CPUs its own
      CPUs; ``none`` runs it on the shared pool;
    - ``pinned_memory``: Memory Manager ``Static`` sets the container's cpuset.mems to its NUMA
      node(s); under ``None`` the kubelet leaves CpusetMems empty and the container sees every node;
    - ``alignment``: ``fail``, ``warn`` or None (above);
    - ``dra``: the probes are DRA probes (dra.claims_planned) - dra-driver-cpu gives them exclusive CPUs from their claim, which
      keeps the GPUs on the CPUs' NUMA node whatever the Topology Manager's policy (a probe off one node is a failure);
      nothing pins their memory (the kernel allocates it on the node of the CPUs they run on)."""
    flags = parse_kubelet_args(plan.get("kubelet_args") or [])
    cpu = flags.get("cpu-manager-policy", "none")
    memory = flags.get("memory-manager-policy", "None")
    topology = flags.get("topology-manager-policy", "none")
    if dra.claims_planned(plan):
        return {"cpu_manager_policy": cpu, "memory_manager_policy": memory, "topology_manager_policy": topology,
                "exclusive_cpus": True, "pinned_memory": False, "alignment": "fail", "dra": True}
    return {"cpu_manager_policy": cpu, "memory_manager_policy": memory, "topology_manager_policy": topology,
            "exclusive_cpus": cpu == "static", "pinned_memory": memory == "Static", "alignment": ALIGNMENT.get(topology), "dra": False}


def _reading(found, cgroup_key, status_key):
    """(cpulist text, where from): the cgroup's cpuset, else the task's allowed list (cpuset not delegated)."""
    if (found.get(cgroup_key) or "").strip():
        return found[cgroup_key].strip(), "cgroup"
    if (found.get(status_key) or "").strip():
        return found[status_key].strip(), "/proc/self/status"
    return "", None


def _judge_output(result, probe, pod, found, plan, topology, cpu_entries, gpu_resource):
    shape, reasons, warnings = probe["shape"], result["reasons"], result["warnings"]
    expect = probe_expectations(plan)
    result["expected"] = expect
    cpus_text, cpus_from = _reading(found, "cpus", "allowed_cpus")
    mems_text, mems_from = _reading(found, "mems", "allowed_mems")
    if not cpus_from or not mems_from:
        result["inconclusive"] = ["the probe could read no %s (no cpuset in its cgroup, no /proc/self/status)"
                                  % " and no ".join(n for n, f in (("CPU list", cpus_from), ("memory node list", mems_from)) if not f)]
        return _verdict(result)
    try:
        cpus, mems = set(parse_cpulist(cpus_text)), set(parse_cpulist(mems_text))
    except CpusetError as e:
        reasons.append("the probe printed a cpuset that is not a cpulist: %s" % e)
        return _verdict(result)
    result.update(cpus=format_cpulist(cpus), mems=format_cpulist(mems), source=cpus_from)
    node_of = _node_of_cpus(topology)
    cpu_nodes = sorted(set(node_of.get(c, -1) for c in cpus))
    align = expect["alignment"]

    def misaligned(text):
        (reasons if align == "fail" else warnings).append(text) if align else None

    node = None
    if expect["exclusive_cpus"]:
        reserved = set(parse_cpulist(plan["reserved_cpus"]))
        if len(cpus) != shape["cpu"] and shape.get("pod_level"):
            reasons.append("the probe runs on %d CPUs (%s) for its pod's own budget of %d: the kubelet did not pin a pod "
                           "Guaranteed by spec.resources (PodLevelResourceManagers) - the audit would take such GPU pods "
                           "for pinned" % (len(cpus), format_cpulist(cpus), shape["cpu"]))
        elif len(cpus) != shape["cpu"]:
            reasons.append("the probe runs on %d CPUs (%s) for a request of %d: not exclusive CPUs (the shared pool)"
                           % (len(cpus), format_cpulist(cpus), shape["cpu"]))
        if cpus & reserved:
            reasons.append("CPUs %s are reserved (reserved-cpus %s): the %s did not pin the probe"
                           % (format_cpulist(cpus & reserved), plan["reserved_cpus"], "DRA driver dra.cpu" if expect["dra"] else "CPU Manager"))
        for other_uid, containers in sorted((cpu_entries or {}).items()):
            for container, assigned in sorted(containers.items()):
                both = cpus & set(parse_cpulist(assigned))
                if both:
                    reasons.append("CPUs %s are also assigned to pod %s container %s" % (format_cpulist(both), other_uid, container))
        if len(cpu_nodes) == 1 and cpu_nodes[0] >= 0:
            node = cpu_nodes[0]
        elif reasons:
            reasons.append("the CPUs span NUMA nodes %s" % ", ".join(str(n) for n in cpu_nodes))
        else:
            misaligned("the exclusive CPUs %s span NUMA nodes %s (topology-manager-policy %s)"
                       % (result["cpus"], ", ".join(str(n) for n in cpu_nodes), expect["topology_manager_policy"]))
    if expect["pinned_memory"]:
        if node is not None and mems != {node}:
            misaligned("its memory comes from NUMA node(s) %s, its CPUs from node %d" % (result["mems"], node))
        elif node is None and len(mems) == 1:
            node = next(iter(mems))
        elif node is None:
            misaligned("its memory comes from NUMA nodes %s (topology-manager-policy %s)" % (result["mems"], expect["topology_manager_policy"]))
    result["numa_node"] = node
    if shape["gpus"]:
        _judge_gpus(result, found, topology, shape, node, expect, gpu_resource, misaligned)
    return _verdict(result)


def _judge_gpus(result, found, topology, shape, node, expect, gpu_resource, misaligned):
    reasons = result["reasons"]
    got = identify_gpus(found, topology, shape["gpus"])
    result["gpus"] = [d["address"] for d in got["devices"]]
    result["gpu_source"] = got["source"]
    if not got["source"]:
        seen = ", ".join(got["unknown"]) or "no NVIDIA_VISIBLE_DEVICES, no /dev/nvidiaN, no nvidia-smi"
        result.setdefault("inconclusive", []).append(
            "the probe's GPU could not be identified (%s): nothing maps it to a GPU of the node" % seen)
        return
    if got["exact"] and len(got["ids"]) != shape["gpus"]:
        reasons.append("the probe saw %d GPU(s) for a request of %d %s (%s: %s)"
                       % (len(got["ids"]), shape["gpus"], gpu_resource, got["source"], ", ".join(got["ids"])))
    if node is None:
        return  # nothing pins CPUs or memory to a node: nothing for the GPU to be aligned with
    away = [d for d in got["devices"] if d.get("numa_node") != node]
    if away:
        where = ", ".join("%s on NUMA node %s" % (d["address"], d.get("numa_node")) for d in away)
        pinned = " and ".join(n for n, on in (("CPUs", expect["exclusive_cpus"]), ("memory", expect["pinned_memory"])) if on)
        if not reasons and expect["dra"]:
            reasons.append("its CPUs (dra.cpu) are on NUMA node %d and its GPU is not (%s): its claim did not keep them on one "
                           "NUMA node - does the claim template %s carry the matchAttribute %s constraint across its requests?"
                           % (node, where, shape.get("dra_template"), dra_plan.CONSTRAINT))
        elif not reasons and expect["alignment"] == "fail":
            # the cause first: the Node's failed annotation keeps a reason's first 200 characters or so
            reasons.append("%s %s on NUMA node %d but the GPU is not: the device plugin publishes "
                           "no NUMA topology for %s, so the kubelet cannot align it under %s - "
                           "verify that the GPU Operator's device plugin publishes the topology (%s)"
                           % (pinned, "are" if " and " in pinned or pinned == "CPUs" else "is", node, gpu_resource,
                              expect["topology_manager_policy"], where))
        else:
            misaligned("GPU %s is not on the NUMA node %d of its %s" % (where, node, pinned))


def _verdict(result):
    """proven, failed (a reason), or inconclusive (nothing failed, something could not be read)."""
    reasons, warnings, unsure = result["reasons"], result["warnings"], result.get("inconclusive") or []
    result["verdict"] = "failed" if reasons else ("inconclusive" if unsure else "proven")
    result["ok"] = not reasons
    if reasons:
        result["summary"] = "; ".join(reasons)
        return result
    if unsure:
        result["summary"] = "inconclusive: " + "; ".join(unsure + warnings)
        return result
    expect = result.get("expected") or {}
    parts = [("exclusive CPUs %s" if expect.get("exclusive_cpus") else "shared CPUs %s (cpu-manager-policy %s)")
             % ((result["cpus"],) if expect.get("exclusive_cpus") else (result["cpus"], expect.get("cpu_manager_policy"))),
             ("memory node %s" if expect.get("pinned_memory") else "memory nodes %s (memory-manager-policy %s)")
             % ((result["mems"],) if expect.get("pinned_memory") else (result["mems"], expect.get("memory_manager_policy")))]
    if expect.get("dra"):   # the claim's: dra.cpu's CPUs; nothing pins memory (the kernel's local allocation)
        parts = ["exclusive CPUs %s (dra.cpu, by its claim)" % result["cpus"],
                 "memory not pinned (nodes %s: the kernel allocates on its CPUs' node)" % result["mems"]]
    if result["gpus"]:
        parts.append("GPU " + ", ".join(result["gpus"]))
    result["summary"] = ("NUMA node %d: " % result["numa_node"] if result["numa_node"] is not None else "") + ", ".join(parts)
    asked = (result.get("shape_node"), result["numa_node"])
    if asked[0] is not None and asked[1] is not None and asked[0] != asked[1]:
        result["summary"] += " (meant for NUMA node %d: not evidence for it)" % asked[0]
    if warnings:
        result["summary"] += " (warning: %s)" % "; ".join(warnings)
    return result


def prove_report(probes, pods, logs, plan, topology, cpu_entries, gpu_resource="nvidia.com/gpu", waited=None):
    """{ok, results, reasons, inconclusive, warnings} for a node's probes (``pods``: name -> pod or None;
    ``logs``: name -> text). ``ok`` is false only when a probe failed (an inconclusive probe is reported,
    never a failed node; so is a misalignment the Topology Manager policy allows).

    The probes' own checkpoint entries are left out of ``cpu_entries``: a probe that ended
    gave its CPUs back, and the next may have them (the kubelet reclaims them at its next
    allocation)."""
    probe_uids = set(((pod or {}).get("metadata") or {}).get("uid") for pod in (pods or {}).values())
    others = dict((uid, containers) for uid, containers in (cpu_entries or {}).items() if uid not in probe_uids)
    results = [judge_probe(p, (pods or {}).get(p["name"]), (logs or {}).get(p["name"], ""), plan, topology,
                           others, gpu_resource, waited) for p in probes]

    def said(verdict):
        return ["%s (%s): %s" % (r["name"], r["shape"], r["summary"]) for r in results if r["verdict"] == verdict]

    nodes = numa_node_verdicts(plan, results)
    # a NUMA node left unexercised is a gap in the proof only where the policies pin a probe to one node and the
    # Topology Manager aligns (elsewhere no probe claims a node)
    expect = probe_expectations(plan)
    claims = expect["alignment"] is not None and (expect["exclusive_cpus"] or expect["pinned_memory"])
    return {"ok": bool(results) and all(r["ok"] for r in results),
            "results": results,
            "reasons": said("failed") or ([] if results else ["nothing to probe: no NUMA node of the plan holds a GPU and no pod shape is given"]),
            "inconclusive": said("inconclusive") + [n["why"] for n in nodes if n["verdict"] == "not exercised" and n["meant"] and claims],
            "warnings": ["%s (%s): %s" % (r["name"], r["shape"], w) for r in results if r["verdict"] == "proven" for w in r["warnings"]],
            "numa_nodes": nodes, "numa_summary": numa_summary(nodes)}


def numa_summary(nodes):
    """``NUMA node 0: proven (<probe>); NUMA node 1: not exercised`` - what the run says of each GPU NUMA node."""
    return "; ".join("NUMA node %d: %s%s" % (n["node"], n["verdict"], " (%s)" % ", ".join(n["probes"]) if n["probes"] else "")
                     for n in nodes)


def numa_node_verdicts(plan, results):
    """Per NUMA node of the plan that holds GPUs, what the probes proved there: [{node, verdict (proven, failed,
    inconclusive or not exercised), probes (those that landed there), meant (the probes meant for it), why}]. Only a probe that landed on
    a node is evidence for it, whatever it was meant for: a probe meant for node 1 that the kubelet put on node 0
    (node 1's GPUs busy, or not published) proves node 0, and leaves node 1 not exercised - said as inconclusive."""
    out = []
    for table in plan.get("numa_tables") or []:
        if not table.get("gpus"):
            continue
        node = table["node"]
        landed = [r for r in results if r.get("numa_node") == node]
        meant = [r for r in results if r.get("shape_node") == node]
        if any(r["verdict"] == "failed" for r in landed):
            verdict = "failed"
        elif any(r["verdict"] == "proven" for r in landed):
            verdict = "proven"
        elif landed:   # its probe could not tell (said as the probe's own inconclusive)
            verdict = "inconclusive"
        else:
            verdict = "not exercised"
        elsewhere = ["%s landed on NUMA node %s" % (r["name"], r["numa_node"] if r.get("numa_node") is not None else "?")
                     for r in meant if r.get("numa_node") != node]
        why = ("NUMA node %d not exercised: %s (the kubelet takes the lowest NUMA node with room, or node %d's GPUs were "
               "busy) - nothing proves its pinning" % (node, "; ".join(elsewhere) or "no probe landed there", node)
               if verdict == "not exercised" else "")
        out.append({"node": node, "verdict": verdict, "probes": [r["name"] for r in landed], "meant": [r["name"] for r in meant],
                    "why": why})
    return out


def gpu_holders(pods, gpu_resource="nvidia.com/gpu"):
    """``namespace/name`` of the pods (a ``kubectl get pods`` reply's items) that hold or wait for a GPU of the node:
    not ended, asking for ``gpu_resource``, not our probes. None: the probes may take whole NUMA nodes' GPUs."""
    held = []
    for pod in pods or []:
        meta = pod.get("metadata") or {}
        probe = (meta.get("labels") or {}).get("app.kubernetes.io/name") == PROBE_LABELS["app.kubernetes.io/name"]
        if (pod.get("status") or {}).get("phase") in TERMINAL or probe:
            continue
        if _gpu_count(pod, gpu_resource):
            held.append("%s/%s" % (meta.get("namespace"), meta.get("name")))
    return sorted(held)


# ---------------------------------------------------------------- the QoS audit

def _container_resources(container):
    resources = container.get("resources") or {}
    return resources.get("requests") or {}, resources.get("limits") or {}


def _gpu_count(pod, gpu_resource):
    total = 0
    for container in (pod.get("spec") or {}).get("containers") or []:
        requests, limits = _container_resources(container)
        total += device_count(limits.get(gpu_resource, requests.get(gpu_resource)), unreadable=1)
    return total


def _fractional_cpus(pod):
    """[(container, cpu)] of containers whose CPU request is not a whole number of CPUs."""
    out = []
    for container in (pod.get("spec") or {}).get("containers") or []:
        requests, limits = _container_resources(container)
        value = requests.get("cpu", limits.get("cpu"))
        if value is None:
            continue
        try:
            cpus = parse_cpu(value)
        except QuantityError:
            continue
        if cpus.denominator != 1:
            out.append((container.get("name"), str(value)))
    return out


def finish_pod_audit(audit, pod_level_managers):
    """A node's entry of audit_pods as its kubelet judges it: each pod-level GPU pod's verdict for the node's
    pod-level resource managers (on or off: kubelet_state.pod_level_resource_managers of its plan) joins the
    unpinned pods; ``pod_level`` keeps the pods that set their own budget ([pod])."""
    if not isinstance(audit, dict) or "pod_level" not in audit:
        return audit
    out = dict(audit)
    verdicts = out.pop("pod_level") or []
    key = "on" if pod_level_managers else "off"
    out["unpinned"] = list(out.get("unpinned") or []) + [v[key] for v in verdicts if v.get(key)]
    out["pod_level"] = [v["pod"] for v in verdicts]
    return out


def kube_items(reply):
    """The objects of a ``kubectl get -o json`` reply: a List's items, or the one object kubectl
    prints alone when it was asked for a single name."""
    reply = reply or {}
    if "items" in reply or reply.get("kind", "List").endswith("List"):
        return list(reply.get("items") or [])
    return [reply]


AUDIT_ERROR_MAX = 300


def audit_error(result, kubectl, kubectl_host):
    """Why check.yml could not audit the pods, in one line (said once for the fleet): kubectl that could not be
    run at its path, or kubectl's own words (``nodes "x" not found``, ``Unauthorized``), never Ansible's
    "Error executing command." or "non-zero return code" alone."""
    result = result or {}
    msg = str(result.get("msg") or "")
    if msg.startswith("Error executing command") or "No such file or directory" in msg:
        return ("pods not audited: kubectl could not be run at %s on %s (rke2_numa_kubectl: not found or not executable)"
                % (kubectl, kubectl_host))
    why = failure_reason(result) if (msg.strip() or str(result.get("stderr") or "").strip()) else "kubectl did not run"
    if len(why) > AUDIT_ERROR_MAX:
        why = why[:AUDIT_ERROR_MAX - 3] + "..."
    return "pods not audited: %s" % why


# The resources a pod may set for itself (pod.spec.resources; component-helpers resource.IsPodLevelResourcesSet:
# cpu and memory, hugepages with them).
POD_LEVEL_RESOURCES = ("cpu", "memory")


def pod_level_resources(pod):
    """The pod's own budget (``spec.resources``: {requests, limits}) when it sets one for CPU or memory, else None
    (component-helpers resource.IsPodLevelResourcesSet)."""
    resources = (pod.get("spec") or {}).get("resources") or {}
    requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
    if any(name in requests or name in limits for name in POD_LEVEL_RESOURCES):
        return {"requests": requests, "limits": limits}
    return None


def pod_level_verdicts(pod, ident, gpu_resource):
    """How the kubelet pins a Guaranteed GPU pod that sets its own budget (``spec.resources``), by whether its
    pod-level resource managers are on: {"on": why not pinned or None, "off": why not pinned}.

    pkg/kubelet/cm/cpumanager/policy_static.go (Kubernetes 1.36+): with PodLevelResourceManagers off, ``Allocate``
    skips such a pod ("CPU Manager allocation skipped, pod is using pod-level resources but the
    PodLevelResourceManagers feature gate is not enabled") - no exclusive CPUs, and the Memory Manager does the same;
    on, ``podGuaranteedCPUs`` gives the pod one NUMA-aligned set of its whole pod-level CPUs (``AllocatePod``) whose
    containers share what their own requests do not take - a sidecar without requests included."""
    budget = pod_level_resources(pod)
    cpu = budget["requests"].get("cpu", budget["limits"].get("cpu"))
    off = ("%s requests %s with pod-level resources (spec.resources), which this node's kubelet does not pin: "
           "PodLevelResourceManagers is off (Kubernetes 1.36 alpha, on from 1.37), so the CPU and Memory Managers skip "
           "the pod - no exclusive CPUs, no NUMA-local memory, and the GPU is not aligned with its CPUs" % (ident, gpu_resource))
    on = None
    try:
        whole = cpu is not None and parse_cpu(cpu).denominator == 1
    except QuantityError:
        whole = False
    if not whole:
        on = ("%s requests %s with pod-level cpu %s: the CPU Manager pins a pod-level budget only of whole CPUs, the pod "
              "runs on the shared pool" % (ident, gpu_resource, cpu if cpu is not None else "unset"))
    return {"on": on, "off": off}


def audit_pods(pod_list, node_names=None, gpu_resource="nvidia.com/gpu"):
    """Per node name: {unpinned: [...], topology_errors: [...], pod_level: [...]} from ``kubectl get pods -A -o json``:
    for each of ``node_names``, or (None) for every node a pod is bound to - one pass over the list
    for a whole fleet. ``pod_level`` (only where there are some): the Guaranteed GPU pods that set their own budget,
    with the verdict of a kubelet
    whose pod-level resource managers are on and off (pod_level_verdicts) - the node's plan decides which holds
    (finish_pod_audit)."""
    pods = [p for p in kube_items(pod_list) if p.get("kind", "Pod") == "Pod"]   # not the Nodes, slices, claims of one read
    if node_names is None:
        node_names = sorted(set((pod.get("spec") or {}).get("nodeName") for pod in pods) - {None, ""})
    audit = dict((name, {"unpinned": [], "topology_errors": []}) for name in node_names)
    for pod in pods:
        spec, status, meta = pod.get("spec") or {}, pod.get("status") or {}, pod.get("metadata") or {}
        node = spec.get("nodeName")
        if node not in audit:
            continue
        ident = "%s/%s" % (meta.get("namespace"), meta.get("name"))
        if status.get("reason") == "TopologyAffinityError":
            audit[node]["topology_errors"].append(
                "%s was refused by the kubelet: TopologyAffinityError (%s)" % (ident, status.get("message") or "no message"))
            continue
        if status.get("phase") in TERMINAL or not _gpu_count(pod, gpu_resource):
            continue
        qos = status.get("qosClass")
        if qos != "Guaranteed":
            audit[node]["unpinned"].append(
                "%s requests %s but is %s (requests != limits): no exclusive CPUs, no NUMA-local memory, "
                "and the GPU is not aligned with its CPUs" % (ident, gpu_resource, qos or "not Guaranteed"))
            continue
        if pod_level_resources(pod):   # its own budget: a fraction in a container shares the pod's whole CPUs
            audit[node].setdefault("pod_level", []).append(dict(pod_level_verdicts(pod, ident, gpu_resource), pod=ident))
            continue
        for container, value in _fractional_cpus(pod):
            audit[node]["unpinned"].append(
                "%s container %s requests %s but cpu %s: the CPU Manager pins only whole CPUs, it runs on the shared pool"
                % (ident, container, gpu_resource, value))
    return audit


# ---------------------------------------------------------------- DRA GPUs (plugin_utils/dra.py)

def _kubelet_pins_cpus(pod):
    """Whether a static CPU Manager gives the pod exclusive CPUs: Guaranteed, with whole CPUs (its containers', or its
    own pod-level budget)."""
    if (pod.get("status") or {}).get("qosClass") != "Guaranteed":
        return False
    budget = pod_level_resources(pod)
    if budget:
        try:
            return parse_cpu(budget["requests"].get("cpu", budget["limits"].get("cpu"))).denominator == 1
        except (QuantityError, TypeError):
            return False
    return not _fractional_cpus(pod)


def gpu_worker_nodes(reply, gpu_resource="nvidia.com/gpu", server_labels=()):
    """The names, sorted, of the cluster's GPU workers in the reply of ``kubectl get nodes,pods,resourceslices,
    resourceclaims -A -o json`` (the check's one read): each Node without a server role label (``server_labels``) that
    offers a GPU - ``gpu_resource`` allocatable by the device plugin, or a GPU device in its ResourceSlices (DRA). The
    fleet a slice of a sliced job is part of, which its own inventory cannot tell."""
    objects = kube_items(reply)
    slices = [i for i in objects if i.get("kind") == "ResourceSlice"]
    found = []
    for node in (i for i in objects if i.get("kind") == "Node"):
        meta = node.get("metadata") or {}
        name, labels = meta.get("name"), meta.get("labels") or {}
        if not name or any(label in labels for label in server_labels):
            continue
        plugin = device_count(((node.get("status") or {}).get("allocatable") or {}).get(gpu_resource))
        if plugin or any(d["kind"] == dra.GPU for d in dra.node_devices(slices, name)):
            found.append(str(name))
    return sorted(found)


def dra_audit(reply, node_names=None, gpu_resource="nvidia.com/gpu"):
    """Per node name: {dra_devices, plugin_gpus, dra_pods, dra_claims} from the one reply of ``kubectl get
    nodes,pods,resourceslices,resourceclaims -A -o json``. dra_devices: what the node publishes in its
    ResourceSlices (dra.node_devices, without the raw attributes); plugin_gpus: its Node's allocatable ``gpu_resource``
    (the device plugin's). dra_pods: each running pod holding a GPU through a ResourceClaim, with its GPUs (device,
    driver, NUMA node from the slice, claim), whether the kubelet would pin its CPUs (``kubelet_cpus``: Guaranteed with
    whole CPUs) and the claim attribute that aligns them with CPUs from DRA (``aligned_by``: a dra.cpu device in one
    constrained claim; None) - finish_dra_audit judges it with the node's CPU Manager policy and checkpoint.
    dra_claims: each claim of those pods that asks for a GPU with CPUs or NICs without a constraint that keeps them on
    one NUMA node (dra.claim_alignment)."""
    objects = kube_items(reply)
    slices = [i for i in objects if i.get("kind") == "ResourceSlice"]
    claims = dict((("%s/%s" % ((c.get("metadata") or {}).get("namespace"), (c.get("metadata") or {}).get("name"))), c)
                  for c in objects if c.get("kind") == "ResourceClaim")
    pods = [p for p in objects if p.get("kind", "Pod") == "Pod"]
    allocatable = dict(((n.get("metadata") or {}).get("name"), ((n.get("status") or {}).get("allocatable") or {}).get(gpu_resource))
                       for n in objects if n.get("kind") == "Node")
    if node_names is None:
        node_names = sorted((set((p.get("spec") or {}).get("nodeName") for p in pods) | set(allocatable)
                             | set((s.get("spec") or {}).get("nodeName") for s in slices)) - {None, ""})
    out = {}
    for name in node_names:
        devices = dra.node_devices(slices, name)
        out[name] = {"dra_devices": [dict((k, v) for k, v in d.items() if k != "attributes") for d in devices],
                     "plugin_gpus": device_count(allocatable.get(name)), "dra_pods": [], "dra_claims": [],
                     "_by_id": dict(((d["driver"], d["pool"], d["device"]), d) for d in devices)}
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if node in out and (pod.get("status") or {}).get("phase") not in TERMINAL:
            _audit_dra_pod(pod, claims, out[node])
    for entry in out.values():
        entry.pop("_by_id")
    return out


def _audit_dra_pod(pod, claims, entry):
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace")
    gpus, aligned = [], []
    for dummy, name in sorted(dra.pod_claims(pod).items()):
        claim = claims.get("%s/%s" % (namespace, name))
        if claim is None:
            continue
        seen = dra.claim_alignment(claim, entry["_by_id"])
        gpus += [dict(device=d["device"], driver=d["driver"], numa_node=d["numa_node"], claim=seen["claim"]) for d in seen["gpus"]]
        if seen["gpus"] and any(d["kind"] == dra.CPU for d in seen["others"]) and seen["aligned_by"]:
            aligned.append(seen["aligned_by"])
        if seen["finding"] and seen["finding"] not in entry["dra_claims"]:
            entry["dra_claims"].append(seen["finding"])
    if gpus:
        entry["dra_pods"].append({"pod": "%s/%s" % (namespace, meta.get("name")), "uid": meta.get("uid"), "gpus": gpus,
                                  "kubelet_cpus": _kubelet_pins_cpus(pod), "aligned_by": aligned[0] if aligned else None})


def finish_dra_audit(audit, cpu_static, cpu_entries, topology):
    """A node's DRA entries as its kubelet judges them: [finding] for each pod whose GPU came from a ResourceClaim
    while the kubelet pins its CPUs (``cpu_static``: the node's CPU Manager policy is static, and the pod is one it
    pins): the Topology Manager takes no hint from DRA, so the GPU may sit on another NUMA node than the CPUs. Where
    the pod's CPUs are in the node's checkpoint (``cpu_entries`` {pod uid: {container: cpus}}), the finding says on
    which NUMA nodes (``topology``) they and the GPUs landed."""
    findings = []
    node_of = _node_of_cpus(topology) if topology else {}
    for entry in audit or []:
        if entry.get("aligned_by") or not (cpu_static and entry.get("kubelet_cpus")):
            continue
        gpus = "; ".join("%s %s from ResourceClaim %s on NUMA node %s"
                         % (g["driver"], g["device"], g["claim"], g["numa_node"] if g["numa_node"] is not None else "unknown")
                         for g in entry["gpus"])
        cpus = sorted(set(c for cpus in ((cpu_entries or {}).get(entry.get("uid")) or {}).values() for c in parse_cpulist(cpus)))
        where = ""
        if cpus:
            nodes = sorted(set(node_of[c] for c in cpus if c in node_of))
            gpu_nodes = sorted(set(g["numa_node"] for g in entry["gpus"] if g["numa_node"] is not None))
            where = "; its CPUs %s are on NUMA node %s" % (format_cpulist(cpus), ",".join(str(n) for n in nodes) or "unknown")
            if gpu_nodes and nodes and not set(gpu_nodes) <= set(nodes):
                where += " - not its GPU's"
            elif gpu_nodes and nodes:
                where += " - its GPU's now, by chance"
        findings.append("%s holds %s while the kubelet pins its CPUs: the Topology Manager does not align DRA devices, this pod's "
                        "GPU may sit on another NUMA node than its CPUs%s (align them in one claim: a dra.cpu request with a "
                        "matchAttribute %s constraint)" % (entry["pod"], gpus, where, dra.NUMA_NODE))
    return findings
