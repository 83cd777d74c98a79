# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet's and the kernel's refusal rules, as checks on finished args.

The planner builds its args rule by rule; this module reads them back the way
the kubelet and the kernel parse them and reports what they would refuse, in
their own words. ``make_plan`` runs it on every plan (a refusal there is a
planner bug) and again after pass-through args (a refusal there is a warning
about the operator's override).

Sources: pkg/kubelet/cm/cpumanager/{cpu_manager,policy_static}.go,
pkg/kubelet/cm/memorymanager/memory_manager.go (validateReservedMemory),
pkg/kubelet/cm/topologymanager/topology_manager.go, kernel/sched/isolation.c.
"""

from __future__ import annotations

import struct

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import (
    CpusetError,
    format_cpulist,
    parse_cpulist,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import (
    QuantityError,
    parse_bytes,
)

DEFAULT_MAX_NUMA_NODES = 8


def parse_kubelet_args(args):
    """``name=value`` strings -> {name: value}; the last wins, except
    reserved-memory, which the kubelet accumulates across repeated flags."""
    out = {}
    for arg in args:
        name, dummy, value = arg.partition("=")
        if name == "reserved-memory" and name in out:
            out[name] = out[name] + ";" + value
        else:
            out[name] = value
    return out


def _pairs(value, sep="="):
    out = {}
    for item in filter(None, (value or "").split(",")):
        key, dummy, val = item.partition(sep)
        out[key.strip()] = val.strip()
    return out


def parse_reserved_memory(value):
    """``0:memory=1Gi;1:memory=512Mi`` -> {node: {type: bytes}} (kubelet ReservedMemoryVar syntax)."""
    out = {}
    for reservation in filter(None, (value or "").split(";")):
        node, sep, types = reservation.partition(":")
        if not sep:
            raise ValueError("the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], got %s"
                             % reservation)
        for kind, quantity in _pairs(types).items():
            out.setdefault(int(node), {})
            out[int(node)][kind] = out[int(node)].get(kind, 0) + parse_bytes(quantity, "reserved-memory")
    return out


def _float32(value):
    return struct.unpack("f", struct.pack("f", value))[0]


def eviction_reservation(threshold, capacity):
    """Bytes a hard ``memory.available`` threshold withholds from Node Allocatable
    (eviction parseThresholdStatement + GetThresholdQuantity): a quantity as is; a
    percentage of the memory capacity in float32, truncated; 0% and 100% are ignored."""
    if threshold.endswith("%"):
        if threshold in ("0%", "100%"):
            return 0
        return int(float(capacity) * _float32(_float32(float(threshold[:-1])) / 100))
    return parse_bytes(threshold)


def _kernel_value(kernel_args, name):
    for arg in kernel_args:
        key, dummy, value = arg.partition("=")
        if key == name:
            return value
    return None


def check(kubelet_args, kernel_args, topology):
    """Return what the kubelet or the kernel would refuse, as their messages (empty: accepted)."""
    errors = []
    flags = parse_kubelet_args(kubelet_args)
    online = set(parse_cpulist(topology["cpus_online"]))
    nodes = [n["id"] for n in topology["numa_nodes"]]
    siblings = {}
    for core in topology["cores"]:
        for cpu in core:
            siblings[cpu] = set(core)

    cpu_policy = flags.get("cpu-manager-policy", "none")
    try:
        reserved = set(parse_cpulist(flags.get("reserved-cpus", "")))
    except CpusetError as e:
        errors.append("invalid reserved-cpus: %s" % e)
        reserved = set()
    if cpu_policy not in ("none", "static"):
        errors.append('[cpumanager] unknown policy: "%s"' % cpu_policy)
    if cpu_policy == "static":
        if not reserved and "cpu" not in _pairs(flags.get("kube-reserved")) and "cpu" not in _pairs(flags.get("system-reserved")):
            # a zero CPU reservation is dropped before the "greater than zero" check can see it
            errors.append("[cpumanager] unable to determine reserved CPU resources for static policy")
        if not reserved <= online:
            errors.append("reserved-cpus: %s is not a subset of online-cpus %s"
                          % (format_cpulist(reserved), format_cpulist(online)))
        options = _pairs(flags.get("cpu-manager-policy-options"))
        if options.get("full-pcpus-only") == "true":
            split = sorted(c for c in reserved & online if not siblings.get(c, {c}) <= reserved)
            if split:
                errors.append("SMT Alignment Error: reserved-cpus %s split physical cores (CPUs %s lack their siblings)"
                              % (format_cpulist(reserved), format_cpulist(split)))

    topo_policy = flags.get("topology-manager-policy", "none")
    if topo_policy not in ("none", "best-effort", "restricted", "single-numa-node"):
        errors.append('unknown policy: "%s"' % topo_policy)
    if flags.get("topology-manager-scope", "container") not in ("container", "pod"):
        errors.append('unknown scope: "%s"' % flags.get("topology-manager-scope"))
    if topo_policy != "none":
        limit = _pairs(flags.get("topology-manager-policy-options")).get("max-allowable-numa-nodes", DEFAULT_MAX_NUMA_NODES)
        limit = int(limit)
        if len(nodes) > limit:
            errors.append("unsupported on machines with more than %v NUMA Nodes".replace("%v", str(limit)))

    eviction = _pairs(flags.get("eviction-hard"), "<")
    for signal, threshold in sorted(eviction.items()):
        try:
            zero = not threshold.endswith("%") and parse_bytes(threshold) == 0
        except QuantityError:
            zero = False
        if zero:
            errors.append("eviction threshold %s must be positive: 0" % signal)

    if flags.get("memory-manager-policy", "None") == "Static":
        before = len(errors)
        try:
            reservations = parse_reserved_memory(flags.get("reserved-memory"))
            allocatable_reservation = {"memory": sum(
                parse_bytes(_pairs(flags.get(name)).get("memory", 0)) for name in ("kube-reserved", "system-reserved"))}
            # --eviction-hard replaces the whole default map; without the flag RKE2 (1.32+) passes its
            # own evictionHard, which has no memory.available: nothing is withheld either way.
            mem_eviction = eviction.get("memory.available", "0")
            capacity = (topology.get("memory_kb") or sum(n.get("memory_kb", 0) for n in topology["numa_nodes"])) * 1024
            allocatable_reservation["memory"] += eviction_reservation(mem_eviction, capacity)
        except (ValueError, QuantityError) as e:
            errors.append(str(e))
            reservations, allocatable_reservation = {}, {}
        for node in sorted(reservations):
            if node not in nodes:
                errors.append("the reserved memory configuration references a NUMA node %d that does not exist" % node)
        kinds = set(allocatable_reservation) | set(k for r in reservations.values() for k in r)
        for kind in sorted(kinds):
            total = sum(r.get(kind, 0) for r in reservations.values())
            want = allocatable_reservation.get(kind, 0)
            if total != want:
                errors.append('the total amount "%d" of type "%s" is not equal to the value "%d" determined by Node '
                              "Allocatable feature" % (total, kind, want))
        # memorymanager NewPolicyStatic, after the sum rule passed: some memory must be reserved.
        if len(errors) == before and not sum(r.get("memory", 0) for r in reservations.values()):
            errors.append("[memorymanager] you should specify the system reserved memory")

    isolcpus = _kernel_value(kernel_args, "isolcpus")
    if isolcpus is not None:
        isolated = set(parse_cpulist(",".join(p for p in isolcpus.split(",") if p[:1].isdigit())))
        for name in ("nohz_full", "rcu_nocbs"):
            value = _kernel_value(kernel_args, name)
            if value is None or set(parse_cpulist(value)) != isolated:
                errors.append("Housekeeping: %s= must match isolcpus=" % name)
        irq = _kernel_value(kernel_args, "irqaffinity")
        if irq is None or set(parse_cpulist(irq)) != reserved:
            errors.append("irqaffinity=%s is not reserved-cpus=%s" % (irq, format_cpulist(reserved)))
        if isolated & reserved or (isolated | reserved) != online:
            errors.append("isolcpus=%s and reserved-cpus=%s do not split the online CPUs %s"
                          % (format_cpulist(isolated), format_cpulist(reserved), format_cpulist(online)))
    return errors
