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
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_rules import cpus_per_core
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import shortfall
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import (
    QuantityError,
    binary_si,
    parse_bytes,
    parse_cpu,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_outcome import failure_reason

PROBE_LABELS = {"app.kubernetes.io/name": "rke2-numa-probe", "app.kubernetes.io/managed-by": "maitred.rke2_numa"}
MARK = "rke2-numa-probe"
# The probe's script: POSIX sh and cat (busybox has both). cgroup v2 first (a
# container's /sys/fs/cgroup is its own cgroup), then cgroup v1's cpuset files.
PROBE_SCRIPT = r"""r=/sys/fs/cgroup
if [ -r "$r/cpuset.cpus.effective" ]; then
  c=$(cat "$r/cpuset.cpus.effective"); m=$(cat "$r/cpuset.mems.effective")
else
  c=$(cat "$r/cpuset/cpuset.effective_cpus"); m=$(cat "$r/cpuset/cpuset.effective_mems")
fi
echo "MARK cpus=$c"
echo "MARK mems=$m"
echo "MARK visible=${NVIDIA_VISIBLE_DEVICES:-}"
if command -v nvidia-smi >/dev/null 2>&1; then
  echo "MARK bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | tr '\n' ',')"
fi
""".replace("MARK", MARK)
TERMINAL = ("Succeeded", "Failed")


class ProveError(ValueError):
    pass


def _probe_base(node_name):
    """A DNS-label-safe pod name stem for the node: its name when short, else a cut plus a hash."""
    base = re.sub(r"[^a-z0-9-]", "-", node_name.lower()).strip("-") or "node"
    if len(base) > 30:
        base = base[:21].rstrip("-") + "-" + hashlib.sha256(node_name.encode("utf-8")).hexdigest()[:8]
    return "%s-%s" % (MARK, base)


def probe_shapes(plan, topology, memory, use_pod_shapes=True):
    """What to probe: the plan's pod shapes (rke2_numa_pod_shapes) when it has some and
    ``use_pod_shapes``, else per NUMA node that holds GPUs one pod of a whole core,
    ``memory``, one GPU and one hugepage of the plan's size when the plan reserves
    hugepages on that node. [{name, cpu, memory, gpus, hugepages}] (bytes)."""
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
        out.append({"name": "numa%d" % table["node"], "cpu": cpu, "memory": memory_bytes, "gpus": 1,
                    "hugepages": page * 1024 if per_node.get(str(table["node"])) else 0})
    return out


def probe_pods(plan, topology, node_name, image, namespace, gpu_resource, memory, use_pod_shapes=True):
    """The probe pods for one node: [{name, namespace, shape, requests, manifest}] (the
    arguments are the prove role's variables, whose defaults live there)."""
    hugepage_resource = (plan.get("hugepages") or {}).get("resource")
    probes = []
    base = _probe_base(node_name)
    for i, shape in enumerate(probe_shapes(plan, topology, memory, use_pod_shapes)):
        if shape["hugepages"] and not hugepage_resource:
            raise ProveError("pod shape %s asks for hugepages, and the plan has none" % shape["name"])
        requests = {"cpu": str(shape["cpu"]), "memory": binary_si(shape["memory"])}
        if shape["hugepages"]:
            requests[hugepage_resource] = binary_si(shape["hugepages"])
        if shape["gpus"]:
            requests[gpu_resource] = str(shape["gpus"])
        name = "%s-%d" % (base, i)
        manifest = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(PROBE_LABELS),
                         "annotations": {"rke2-numa.maitred.io/shape": shape["name"]}},
            "spec": {
                "nodeName": node_name,   # the scheduler is bypassed: the node is cordoned
                "restartPolicy": "Never",
                "tolerations": [{"operator": "Exists"}],
                "terminationGracePeriodSeconds": 1,
                "automountServiceAccountToken": False,
                "securityContext": {"runAsNonRoot": True, "runAsUser": 65534, "runAsGroup": 65534,
                                    "seccompProfile": {"type": "RuntimeDefault"}},
                "containers": [{
                    "name": "probe", "image": image, "imagePullPolicy": "IfNotPresent",
                    "command": ["sh", "-c", PROBE_SCRIPT],
                    "resources": {"requests": dict(requests), "limits": dict(requests)},
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                }],
            },
        }
        probes.append({"name": name, "namespace": namespace, "shape": shape, "requests": requests, "manifest": manifest})
    return probes


def parse_probe_log(text):
    """{cpus, mems, visible, bus} from the probe's output (the lines it marks)."""
    found = {}
    for line in (text or "").splitlines():
        m = re.match(r"^%s (cpus|mems|visible|bus)=(.*)$" % MARK, line.strip())
        if m:
            found[m.group(1)] = m.group(2).strip()
    return found


def _pci_address(bus_id):
    """nvidia-smi's ``00000000:18:00.0`` as sysfs names it: ``0000:18:00.0``."""
    m = re.match(r"^([0-9A-Fa-f]+):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])$", bus_id.strip())
    if not m:
        return None
    return "%04x:%s:%s.%s" % (int(m.group(1), 16) & 0xFFFF, m.group(2).lower(), m.group(3).lower(), m.group(4))


def probe_gpus(found, topology):
    """The node's GPUs the probe got, as pci_devices entries, and what could not be mapped."""
    gpus = [d for d in topology.get("pci_devices") or [] if d.get("kind") == "gpu"]
    by_uuid = dict((d["uuid"].lower(), d) for d in gpus if d.get("uuid"))
    by_address = dict((d["address"], d) for d in gpus)
    got, unknown = {}, []
    for bus in [b for b in (found.get("bus") or "").split(",") if b.strip()]:
        device = by_address.get(_pci_address(bus) or "")
        if device:
            got[device["address"]] = device
        else:
            unknown.append(bus.strip())
    if not got:
        for item in [v.strip() for v in (found.get("visible") or "").split(",") if v.strip()]:
            if item.lower() in ("all", "none", "void"):
                continue
            device = by_uuid.get(item.lower())
            if device:
                got[device["address"]] = device
            else:
                unknown.append(item)
    return sorted(got.values(), key=lambda d: d["address"]), unknown


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
    result = {"name": probe["name"], "shape": shape["name"], "ok": False, "numa_node": None,
              "cpus": "", "mems": "", "gpus": [], "reasons": []}
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
        result["summary"] = "; ".join(reasons)
        return result
    return _judge_output(result, probe, pod, found, plan, topology, cpu_entries, gpu_resource)


def _judge_output(result, probe, pod, found, plan, topology, cpu_entries, gpu_resource):
    shape, reasons = probe["shape"], result["reasons"]
    try:
        cpus, mems = set(parse_cpulist(found["cpus"])), set(parse_cpulist(found["mems"]))
    except CpusetError as e:
        reasons.append("the probe printed a cpuset that is not a cpulist: %s" % e)
        result["summary"] = "; ".join(reasons)
        return result
    result.update(cpus=format_cpulist(cpus), mems=format_cpulist(mems))
    reserved = set(parse_cpulist(plan["reserved_cpus"]))
    node_of = _node_of_cpus(topology)
    cpu_nodes = sorted(set(node_of.get(c, -1) for c in cpus))
    if len(cpus) != shape["cpu"]:
        reasons.append("the probe runs on %d CPUs (%s) for a request of %d: not exclusive CPUs (the shared pool)"
                       % (len(cpus), format_cpulist(cpus), shape["cpu"]))
    if cpus & reserved:
        reasons.append("CPUs %s are reserved (reserved-cpus %s): the CPU Manager did not pin the probe"
                       % (format_cpulist(cpus & reserved), plan["reserved_cpus"]))
    for other_uid, containers in sorted((cpu_entries or {}).items()):
        for container, assigned in sorted(containers.items()):
            both = cpus & set(parse_cpulist(assigned))
            if both:
                reasons.append("CPUs %s are also assigned to pod %s container %s" % (format_cpulist(both), other_uid, container))
    if len(cpu_nodes) != 1 or cpu_nodes[0] < 0:
        reasons.append("the CPUs span NUMA nodes %s" % ", ".join(str(n) for n in cpu_nodes))
        result["summary"] = "; ".join(reasons)
        return result
    node = cpu_nodes[0]
    result["numa_node"] = node
    if mems != {node}:
        reasons.append("its memory comes from NUMA node(s) %s, its CPUs from node %d" % (format_cpulist(mems), node))
    if shape["gpus"]:
        gpus, unknown = probe_gpus(found, topology)
        result["gpus"] = [d["address"] for d in gpus]
        if unknown:
            reasons.append("the probe got GPU(s) %s, which no GPU of the node matches (by the driver's UUID or PCI address)"
                           % ", ".join(unknown))
        elif len(gpus) != shape["gpus"]:
            reasons.append("the probe saw %d GPU(s) for a request of %d %s (NVIDIA_VISIBLE_DEVICES=%s)"
                           % (len(gpus), shape["gpus"], gpu_resource, found.get("visible") or "unset"))
        away = [d for d in gpus if d.get("numa_node") != node]
        if away:
            where = ", ".join("%s on NUMA node %s" % (d["address"], d.get("numa_node")) for d in away)
            if not reasons:
                reasons.append("CPUs and memory are on NUMA node %d but the GPU is not (%s): the device plugin publishes "
                               "no NUMA topology for %s, so the kubelet cannot align it under single-numa-node - "
                               "verify that the GPU Operator's device plugin publishes the topology" % (node, where, gpu_resource))
            else:
                reasons.append("GPU %s is not on the CPUs' NUMA node %d" % (where, node))
    result["ok"] = not reasons
    result["summary"] = "; ".join(reasons) if reasons else (
        "NUMA node %d: exclusive CPUs %s, memory node %s%s" % (
            node, result["cpus"], result["mems"],
            (", GPU " + ", ".join(result["gpus"])) if result["gpus"] else ""))
    return result


def prove_report(probes, pods, logs, plan, topology, cpu_entries, gpu_resource="nvidia.com/gpu", waited=None):
    """{ok, results, reasons} for a node's probes (``pods``: name -> pod or None; ``logs``: name -> text).

    The probes' own checkpoint entries are left out of ``cpu_entries``: a probe that ended
    gave its CPUs back, and the next may have them (the kubelet reclaims them at its next
    allocation)."""
    probe_uids = set(((pod or {}).get("metadata") or {}).get("uid") for pod in (pods or {}).values())
    others = dict((uid, containers) for uid, containers in (cpu_entries or {}).items() if uid not in probe_uids)
    results = [judge_probe(p, (pods or {}).get(p["name"]), (logs or {}).get(p["name"], ""), plan, topology,
                           others, gpu_resource, waited) for p in probes]
    return {"ok": bool(results) and all(r["ok"] for r in results),
            "results": results,
            "reasons": ["%s (%s): %s" % (r["name"], r["shape"], r["summary"]) for r in results if not r["ok"]]
            or ([] if results else ["nothing to probe: no NUMA node of the plan holds a GPU and no pod shape is given"])}


# ---------------------------------------------------------------- the QoS audit

def _container_resources(container):
    resources = container.get("resources") or {}
    return resources.get("requests") or {}, resources.get("limits") or {}


def _gpu_count(pod, gpu_resource):
    total = 0
    for container in (pod.get("spec") or {}).get("containers") or []:
        requests, limits = _container_resources(container)
        value = limits.get(gpu_resource, requests.get(gpu_resource))
        try:
            total += int(str(value)) if value is not None else 0
        except ValueError:
            total += 1
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


def audit_pods(pod_list, node_names=None, gpu_resource="nvidia.com/gpu"):
    """Per node name: {unpinned: [...], topology_errors: [...]} from ``kubectl get pods -A -o json``:
    for each of ``node_names``, or (None) for every node a pod is bound to - one pass over the list
    for a whole fleet."""
    pods = kube_items(pod_list)
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
        for container, value in _fractional_cpus(pod):
            audit[node]["unpinned"].append(
                "%s container %s requests %s but cpu %s: the CPU Manager pins only whole CPUs, it runs on the shared pool"
                % (ident, container, gpu_resource, value))
    return audit
