# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The coordinated plan: one set of kernel and kubelet settings both accept.

Pure functions, no I/O; runs on the controller (action plugin numa_plan).
Each domain rule (whole-core reservations, matching kernel CPU lists, reserved
memory per NUMA node, per-node hugepages, the NUMA node limit) lives in exactly
one function here; ``make_plan`` only strings them together, and
``kubelet_rules.check`` then checks the result the way the kubelet will.

Sources: kubelet pkg/kubelet/cm/{cpumanager,memorymanager,topologymanager},
kubernetes.io "Control CPU/Memory/Topology Management Policies on the Node",
kernel-parameters.txt (isolcpus, nohz_full, rcu_nocbs, irqaffinity, hugepages),
Documentation/admin-guide/mm/hugetlbpage.rst.
"""

from __future__ import annotations

import hashlib
import json
import re

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import (
    CPU_ID_LIMIT,
    CpusetError,
    format_cpulist,
    parse_cpulist,
)
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import (
    MANAGED_KERNEL_ARGS,  # the kernel args the plan owns
    size_key,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import dra_plan, kubelet_rules
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_rules import DEFAULT_MAX_NUMA_NODES
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import specs
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.argspec import options_argument_spec
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import MANAGED_KUBELET_FLAGS
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import (
    MIB,
    QuantityError,
    format_mib,
    hugepage_resource,
    human,
    parse_bytes,
)

# The options' names, types, choices and defaults are the plan role's variables (roles/plan/meta/argument_specs.yml,
# the planner's group; numa_plan documents them from there): the action validates against that, and so does
# normalize_options here (with the kubelet's spelling as a hint).
OPTIONS = specs.planner_options()
CPU_POLICIES = tuple(OPTIONS["cpu_manager_policy"]["choices"])
MEMORY_POLICIES = tuple(OPTIONS["memory_manager_policy"]["choices"])
CPU_ALLOCATORS = tuple(OPTIONS["cpu_allocator"]["choices"])
TOPOLOGY_POLICIES = tuple(OPTIONS["topology_manager_policy"]["choices"])
TOPOLOGY_SCOPES = tuple(OPTIONS["topology_manager_scope"]["choices"])
# The kernel's isolcpus= flags (Documentation/admin-guide/kernel-parameters.txt); a list option has no choices in the
# role's spec (Ansible checks them against its null default there).
ISOLCPUS_FLAGS = ("managed_irq", "domain", "nohz")
# The sizes the plan offers (the option's choices) in kB, read as the kernel reads hugepagesz=.
HUGEPAGE_SIZES = {size: size_key(size) // 1024 for size in OPTIONS["hugepages_size"]["choices"]}
HUGEPAGE_METHODS = tuple(OPTIONS["hugepages_method"]["choices"])
# Above this many NUMA nodes (every node the kubelet sees, CPU-less ones too) no NUMA-aligned plan is
# made: at every pod admission each Topology Manager hint provider enumerates every subset of the
# nodes (kubelet pkg/kubelet/cm/topologymanager/bitmask IterateBitMasks), 2^N masks, and KEP-4622
# (max-allowable-numa-nodes) calls the default limit of 8 a stop-gap against this "state explosion".
# 16 keeps GH200 (9-10 nodes) and 8-node x86 machines in, and GB200 trays in NUMA mode (34) out.
MANY_NUMA_NODES = 16
# The kubelet's NUMA affinity masks are 64-bit (topologymanager/bitmask: a bit number outside 0-63 is an error),
# so a NUMA node id above 63 cannot be named by any hint, however few nodes the host has.
MAX_NUMA_NODE_ID = 63
# The kernel takes per-node hugepages on the command line (hugepages=0:N,1:M) from 5.16.
NODE_HUGEPAGES_KERNEL = (5, 16)
EVICTION_SIGNALS = ("memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree")

# What an option left null (or unset) means: the documented default, or for
# the options documented as "Default (null) is ..." the value below.
DEFAULTS = dict((name, spec.get("default")) for name, spec in OPTIONS.items())
DEFAULTS.update({
    "kube_reserved": {"memory": "1Gi"},
    "system_reserved": {"memory": "1Gi"},
    "eviction_hard": {
        "memory.available": "500Mi",
        "nodefs.available": "5%",
        "nodefs.inodesFree": "5%",
        "imagefs.available": "5%",
        "imagefs.inodesFree": "5%",
    },
    "isolcpus_flags": ["managed_irq"],
})

# The options of the numa_plan action: the topology and the planner's options. The planner
# checks the policy, scope, method and flag choices itself (normalize_options),
# to name the kubelet's spelling of a near miss and the rule ("options").
ARGUMENT_SPEC = dict(options_argument_spec(OPTIONS, without_choices=(
    "cpu_manager_policy", "cpu_allocator", "memory_manager_policy", "topology_manager_policy", "topology_manager_scope",
    "hugepages_size", "hugepages_method", "isolcpus_flags")), topology={"type": "dict", "required": True})


class PlanError(Exception):
    """The intent cannot fit this host: names the rule and the numbers."""

    def __init__(self, rule, message):
        super(PlanError, self).__init__("%s: %s" % (rule, message))
        self.rule = rule


# ----------------------------------------------------------------- options


def _int(value, name, minimum=0):
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and re.match(r"^\d+$", value.strip()):
            value = int(value)
        else:
            raise PlanError("options", "%s must be a whole number, got %r" % (name, value))
    if minimum is not None and value < minimum:
        raise PlanError("options", "%s must be >= %d, got %d" % (name, minimum, value))
    return value


def _reserved_cores(value):
    """reserved_cores: a whole number >= 1. 0 is refused, never read as "the default"
    (null is the default): the kubelet needs at least one whole core reserved."""
    value = _int(value, "reserved_cores", None)
    if value < 1:
        raise PlanError("options", "reserved_cores must be >= 1, got %d: at least one whole core is reserved (one on "
                        "each NUMA node with CPUs when split_reserved is true); leave reserved_cores null for the "
                        "default of one per CPU node" % value)
    return value


def _choice(value, name, choices):
    if value not in choices:
        hint = [c for c in choices if c.lower() == str(value).lower()]
        raise PlanError("options", "%s must be one of %s, got %r%s" % (
            name, ", ".join(choices), value, " (the kubelet spells it %r)" % hint[0] if hint else ""))
    return value


def parse_version(value):
    """``"1.33"``, ``"v1.31.4+rke2r1"`` -> (1, 33).

    Only a string: YAML reads an unquoted ``1.40`` as the number 1.4 (and ``1.30``
    as 1.3), so a number is refused with a hint to quote it, never guessed at.
    """
    if not isinstance(value, str):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            raise PlanError("options", "kubernetes_version must be a string such as \"1.33\" or \"v1.33.2\", got the "
                            "number %r: quote it in YAML (an unquoted 1.40 is read as the number 1.4)" % (value,))
        raise PlanError("options", "kubernetes_version must be a string such as \"1.33\" or \"v1.33.2\", got %r" % (value,))
    m = re.match(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+][0-9A-Za-z.+-]*)?$", value.strip())
    if not m:
        raise PlanError("options", "kubernetes_version must look like 1.33 or v1.33.5+rke2r1, got %r" % (value,))
    return int(m.group(1)), int(m.group(2))


API_VERSION_SOURCE = "its Node's status.nodeInfo.kubeletVersion"


def node_kubelet(api_version=None, runtime=None):
    """The kubelet a node runs, as read ({"version", "source"}; None when nothing says): its Node's kubeletVersion
    from the API first (the kubelet that runs and reports), else the RKE2 runtime on the host (rke2_runtime of
    topology_info or node_state_info: the one RKE2 starts its kubelet from)."""
    if api_version:
        return {"version": str(api_version), "source": API_VERSION_SOURCE}
    if isinstance(runtime, dict) and runtime.get("version"):
        return {"version": str(runtime["version"]),
                "source": "the RKE2 runtime on the host (%s -> %s)" % (runtime.get("path"), runtime.get("link"))}
    return None


def plan_version(given, node=None):
    """The Kubernetes minor a host is planned for, and why: {"version", "minor" ("1.37"), "source"} (planned_minor's)."""
    return planned_minor(given, node)[0]


def planned_minor(given, node=None):
    """(plan_version's answer, its minor parsed, whether it is known - given or read, not the default) of the Kubernetes
    a host is planned for.

    ``given``: kubernetes_version (None: not given); ``node``: the kubelet the node runs as read - {"version":
    "v1.37.2+rke2r1", "source": where it was read} - or None. Not given, the host is planned for its own kubelet; given,
    it must be the node's minor (a plan for another kubelet is refused, naming both); neither, the oldest supported
    minor (kubelet_rules.DEFAULT_MINOR), which every kubelet of the table accepts. A minor outside the table
    (kubelet_rules.KUBELET_MINORS) is refused: its flags, gates and checkpoints are not modelled."""
    node_version = node_minor = None
    if node and node.get("version"):
        node_version = str(node["version"])
        try:
            node_minor = parse_version(node_version)
        except PlanError:
            raise PlanError("kubernetes-version", "the kubelet version %r read from %s is not a Kubernetes version "
                            "(v1.37.2+rke2r1); give rke2_numa_kubernetes_version for this host"
                            % (node_version, node.get("source") or "the node"))
    if given is not None:
        minor = parse_version(given)
        if node_minor is not None and node_minor != minor:
            raise PlanError("kubernetes-version", "kubernetes_version %s is not the kubelet this node runs: %s (%s). "
                            "Leave kubernetes_version unset to plan each node for the kubelet it runs"
                            % (given, node_version, node.get("source") or "read from the node"))
        version, source = str(given), "kubernetes_version"
    elif node_minor is not None:
        minor, version, source = node_minor, node_version, node.get("source") or "read from the node"
    else:
        minor, version = kubelet_rules.DEFAULT_MINOR, kubelet_rules.minor_text(kubelet_rules.DEFAULT_MINOR)
        source = ("no kubelet version known (no API read of its Node, no RKE2 runtime on the host): the oldest "
                  "supported minor, whose flags every newer kubelet accepts")
    if minor < kubelet_rules.OLDEST_MINOR:
        raise PlanError("kubernetes-version", "Kubernetes %s (%s) is older than the oldest kubelet whose rules this "
                        "collection knows (%s)" % (kubelet_rules.minor_text(minor), source, kubelet_rules.minor_text(kubelet_rules.OLDEST_MINOR)))
    if minor > kubelet_rules.NEWEST_MINOR:
        raise PlanError("kubernetes-version", "Kubernetes %s (%s) is newer than the newest kubelet whose rules this "
                        "collection knows (%s): its flags, feature gates and checkpoints are not modelled, so no plan "
                        "is made for it; use a release of maitred.rke2_numa that knows %s"
                        % (kubelet_rules.minor_text(minor), source, kubelet_rules.minor_text(kubelet_rules.NEWEST_MINOR), kubelet_rules.minor_text(minor)))
    return ({"version": version, "minor": kubelet_rules.minor_text(minor), "source": source}, minor,
            given is not None or node_minor is not None)


def _memory_map(value, name):
    """kube_reserved / system_reserved: {resource: quantity}; hugepages are refused (they are reserved as pages, not here)."""
    if not isinstance(value, dict):
        raise PlanError("options", "%s must be a mapping like {memory: 1Gi}, got %r" % (name, value))
    out = {}
    for key, quantity in value.items():
        if str(key).startswith("hugepages-"):
            raise PlanError("reserved-memory", "%s cannot hold %s: kube-reserved and system-reserved take no hugepages, "
                            "so any hugepages entry breaks the reserved-memory sum the kubelet checks" % (name, key))
        if key not in ("memory", "cpu", "ephemeral-storage", "pid"):
            raise PlanError("options", "%s: unknown resource %r (memory, cpu, ephemeral-storage, pid)" % (name, key))
        if key == "memory":
            try:
                parse_bytes(quantity, "%s.memory" % name)
            except QuantityError as e:
                raise PlanError("options", str(e))
        out[key] = str(quantity)
    return out


def _eviction(value):
    if not isinstance(value, dict):
        raise PlanError("options", "eviction_hard must be a mapping of signal -> threshold, got %r" % (value,))
    merged = dict(DEFAULTS["eviction_hard"])
    for signal, threshold in value.items():
        if signal not in EVICTION_SIGNALS and signal != "pid.available":
            raise PlanError("options", "eviction_hard: unknown signal %r (%s, pid.available)" % (signal, ", ".join(EVICTION_SIGNALS)))
        merged[signal] = str(threshold)
    mem = merged["memory.available"]
    if mem.endswith("%"):
        raise PlanError("reserved-memory", "eviction_hard memory.available must be an absolute quantity, not %s: "
                        "the reserved-memory sum must equal it exactly" % mem)
    try:
        parse_bytes(mem, "eviction_hard memory.available")
    except QuantityError as e:
        raise PlanError("options", str(e))
    for signal, threshold in merged.items():
        if signal != "memory.available" and not re.match(r"^(\d+(\.\d+)?%|\d+(\.\d+)?(Ki|Mi|Gi|Ti|k|M|G|T)?)$", threshold):
            raise PlanError("options", "eviction_hard %s: %r is neither a percentage nor a quantity" % (signal, threshold))
        zero = parse_bytes(threshold) == 0 if signal == "memory.available" else \
            not threshold.endswith("%") and float(re.match(r"^[\d.]+", threshold).group()) == 0
        if zero:
            raise PlanError("options", "eviction_hard %s: %r is zero, and the kubelet refuses a zero threshold "
                            "(\"eviction threshold %s must be positive: 0\")" % (signal, threshold, signal))
    return merged


def _pod_shapes(shapes):
    if not isinstance(shapes, list):
        raise PlanError("options", "pod_shapes must be a list, got %r" % (shapes,))
    out = []
    for i, shape in enumerate(shapes):
        if not isinstance(shape, dict):
            raise PlanError("options", "pod_shapes[%d] must be a mapping" % i)
        unknown = set(shape) - {"name", "cpu", "memory", "gpus", "hugepages"}
        if unknown:
            raise PlanError("options", "pod_shapes[%d]: unknown keys %s" % (i, ", ".join(sorted(unknown))))
        name = str(shape.get("name", "shape%d" % i))
        try:
            out.append({
                "name": name,
                "cpu": _int(shape.get("cpu", 0), "pod_shapes[%s].cpu" % name),
                "memory": parse_bytes(shape.get("memory", 0), "pod_shapes[%s].memory" % name),
                "gpus": _int(shape.get("gpus", 0), "pod_shapes[%s].gpus" % name),
                "hugepages": parse_bytes(shape.get("hugepages", 0), "pod_shapes[%s].hugepages" % name),
            })
        except QuantityError as e:
            raise PlanError("options", str(e))
    return out


def _flag_list(value, name):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PlanError("options", "%s must be a list of strings, got %r" % (name, value))
    return list(value)


def normalize_options(options):
    """Defaults filled in and every option validated; raises PlanError naming the option."""
    unknown = set(options) - set(DEFAULTS)
    if unknown:
        raise PlanError("options", "unknown options: %s" % ", ".join(sorted(unknown)))
    o = dict(DEFAULTS)
    o.update((k, v) for k, v in options.items() if v is not None)
    o["cpu_manager_policy"] = _choice(o["cpu_manager_policy"], "cpu_manager_policy", CPU_POLICIES)
    o["cpu_allocator"] = _choice(o["cpu_allocator"], "cpu_allocator", CPU_ALLOCATORS)
    o["memory_manager_policy"] = _choice(o["memory_manager_policy"], "memory_manager_policy", MEMORY_POLICIES)
    o["topology_manager_policy"] = _choice(o["topology_manager_policy"], "topology_manager_policy", TOPOLOGY_POLICIES)
    o["topology_manager_scope"] = _choice(o["topology_manager_scope"], "topology_manager_scope", TOPOLOGY_SCOPES)
    o["hugepages_size"] = _choice(str(o["hugepages_size"]), "hugepages_size", tuple(HUGEPAGE_SIZES))
    o["hugepages_method"] = _choice(o["hugepages_method"], "hugepages_method", HUGEPAGE_METHODS)
    o["hugepages_per_node"] = _int(o["hugepages_per_node"], "hugepages_per_node")
    if o["reserved_cores"] is not None:
        o["reserved_cores"] = _reserved_cores(o["reserved_cores"])
    if o["reserved_cores_per_node"] is not None:
        if not isinstance(o["reserved_cores_per_node"], dict):
            raise PlanError("options", "reserved_cores_per_node must map NUMA node id -> cores")
        o["reserved_cores_per_node"] = dict(
            (_int(k, "reserved_cores_per_node key"), _int(v, "reserved_cores_per_node[%s]" % k))
            for k, v in o["reserved_cores_per_node"].items())
        if o["reserved_cores"] is not None:
            raise PlanError("options", "give reserved_cores or reserved_cores_per_node, not both")
    nodes = o["hugepages_nodes"]
    if isinstance(nodes, list):
        o["hugepages_nodes"] = [_int(n, "hugepages_nodes item") for n in nodes]
    elif nodes not in ("gpu", "all"):
        raise PlanError("options", "hugepages_nodes must be gpu, all or a list of NUMA node ids, got %r" % (nodes,))
    flags = o["isolcpus_flags"]
    if not isinstance(flags, list):
        raise PlanError("options", "isolcpus_flags must be a list, got %r" % (flags,))
    for flag in flags:
        _choice(flag, "isolcpus_flags item", ISOLCPUS_FLAGS)
    o["split_reserved"] = bool(o["split_reserved"])
    o["strict_fit"] = bool(o["strict_fit"])
    if not isinstance(o["allow_many_numa_nodes"], bool):  # an opt-out of a safety rule is never guessed from "no"
        raise PlanError("options", "allow_many_numa_nodes must be true or false, got %r" % (o["allow_many_numa_nodes"],))
    o["kube_reserved"] = _memory_map(o["kube_reserved"], "kube_reserved")
    o["system_reserved"] = _memory_map(o["system_reserved"], "system_reserved")
    o["eviction_hard"] = _eviction(o["eviction_hard"])
    if o["kubernetes_version"] is not None:
        parse_version(o["kubernetes_version"])   # its form, before anything else (plan_version judges it)
    o["pod_shapes"] = _pod_shapes(o["pod_shapes"])
    for name in ("extra_kubelet_args", "node_labels", "node_taints"):
        o[name] = _flag_list(o[name], name)
    for name, error_of in (("extra_kubelet_args", kubelet_rules.kubelet_arg_error),
                           ("node_labels", kubelet_rules.node_label_error),
                           ("node_taints", kubelet_rules.node_taint_error)):
        for item in o[name]:
            error = error_of(item)
            if error:
                raise PlanError("options", "%s item %r: %s" % (name, item, error))
    return o


# ----------------------------------------------------------------- topology views


def host_view(topology):
    """The planner's view of a topology: CPUs, cores and GPUs per node; refuses what it cannot plan."""
    if not isinstance(topology, dict) or "numa_nodes" not in topology or "cores" not in topology:
        raise PlanError("topology", "not a topology from maitred.rke2_numa.topology_info")
    try:
        online = set(parse_cpulist(topology["cpus_online"], limit=CPU_ID_LIMIT))
        offline = set(parse_cpulist(topology.get("cpus_offline", ""), limit=CPU_ID_LIMIT))
        node_cpus = dict((int(n["id"]), set(parse_cpulist(n["cpus"], limit=CPU_ID_LIMIT))) for n in topology["numa_nodes"])
    except (CpusetError, KeyError, TypeError, ValueError) as e:
        raise PlanError("topology", "unparseable cpulist or node entry: %s" % e)
    if not online:
        raise PlanError("topology", "no online CPUs: nothing to reserve or isolate")
    refuse_overlapping_nodes(node_cpus)
    cores = {}
    for core in topology["cores"]:
        cpus = sorted(set(core))
        if not set(cpus) <= online:
            raise PlanError("topology", "core %s holds CPUs that are not online" % format_cpulist(cpus))
        nids = [nid for nid, node in node_cpus.items() if set(cpus) <= node]
        if len(nids) != 1:
            continue  # a core across nodes (or on none) cannot be placed; never reserved, reported by the reader
        cores.setdefault(nids[0], []).append(cpus)
    for nid in cores:
        cores[nid].sort(key=lambda c: c[0])
    boot = boot_core(topology["cores"], online)
    gpus = {}
    for dev in topology.get("pci_devices", []):
        if dev.get("kind") == "gpu" and dev.get("numa_node") is not None:
            gpus.setdefault(int(dev["numa_node"]), []).append(dev["address"])
    memory = node_memory(topology["numa_nodes"])
    return {
        "online": online,
        "offline": offline,
        "node_ids": sorted(node_cpus),
        "cpu_nodes": sorted(nid for nid, cpus in node_cpus.items() if cpus),
        "node_cpus": node_cpus,
        "gpu_memory_nodes": sorted(int(n["id"]) for n in topology["numa_nodes"] if n.get("gpu_memory") is True),
        "cores": cores,
        "boot_core": boot,
        "boot_node": next((nid for nid, cs in cores.items() if boot in cs), None),
        "gpus": gpus,
        "memory": memory,
        "hugepage_sizes_kb": topology.get("hugepage_sizes_kb"),
        "kernel_release": topology.get("kernel_release"),
        "cpus_per_core": kubelet_rules.cpus_per_core(topology),
    }


def refuse_overlapping_nodes(node_cpus):
    """Every CPU on one NUMA node: firmware with broken NUMA tables lists CPUs on several
    nodes, and neither the kubelet nor this plan can tell where they are. Refused naming
    the nodes and the CPUs they share (``node_cpus``: {node: set of CPUs})."""
    owners = {}
    for nid, cpus in sorted(node_cpus.items()):
        for cpu in cpus:
            owners.setdefault(cpu, []).append(nid)
    shared = {}
    for cpu, nids in owners.items():
        if len(nids) > 1:
            shared.setdefault(tuple(nids), set()).add(cpu)
    if not shared:
        return
    parts = []
    for nids, cpus in sorted(shared.items(), key=lambda kv: (min(kv[1]), kv[0])):
        names = ", ".join(map(str, nids[:-1])) + " and %d" % nids[-1]
        parts.append("NUMA nodes %s %s list CPUs %s (a firmware bug)"
                     % (names, "both" if len(nids) == 2 else "all", format_cpulist(cpus)))
    raise PlanError("topology", "%s; a CPU is on exactly one NUMA node, so neither the kubelet nor this plan can place "
                    "these: fix the firmware's NUMA tables (ACPI SRAT, BIOS NUMA settings) and read the topology again"
                    % "; ".join(parts))


def node_memory(numa_nodes):
    """Bytes of memory per NUMA node id. Every node must say how much it has (``memory_kb``,
    a whole number; 0 is a node without memory), and some node must have memory: a
    topology without it would put all reserved memory on the wrong nodes, or on none."""
    memory = {}
    for node in numa_nodes:
        kb = node.get("memory_kb")
        if isinstance(kb, bool) or not isinstance(kb, int) or kb < 0:
            raise PlanError("topology", "NUMA node %s has no usable memory_kb (got %r): read the topology with "
                            "maitred.rke2_numa.topology_info" % (node.get("id"), kb))
        memory[int(node["id"])] = kb * 1024
    if not any(memory.values()):
        raise PlanError("topology", "the topology reports no memory on any NUMA node (memory_kb 0 everywhere): "
                        "the node memory could not be read, and nothing can be reserved or placed")
    return memory


# ----------------------------------------------------------------- CPUs: reserved, isolated


def boot_core(cores, online):
    """The boot CPU's whole core (its online SMT siblings), which is always reserved.

    The kernel keeps timekeeping on the boot CPU and clears it from nohz_full
    ("NO_HZ: Clearing 0 from nohz_full range for timekeeping"), so a plan that
    isolates it never matches what the host runs. The boot CPU is CPU 0, or the
    lowest online CPU when CPU 0 is offline. Returns the core as a sorted list.
    """
    boot = 0 if 0 in online else min(online)
    for core in cores:
        if boot in core:
            return sorted(set(core) & set(online))
    return [boot]


def reserved_core_counts(view, total=None, per_node=None, split=True):
    """How many whole cores to reserve on each CPU NUMA node.

    At least one on every node with CPUs (when split), none on CPU-less nodes;
    extra cores go first to the nodes with the fewest GPUs (then the fewest
    reserved so far, then the lowest id), so GPU nodes keep the biggest tables.
    Without split, every reserved core goes to the node with the fewest GPUs,
    except the boot CPU's core (``boot_core``): its node always keeps at least one.
    Refuses a node left with no core to isolate.
    """
    cpu_nodes = view["cpu_nodes"]
    gpus = dict((nid, len(view["gpus"].get(nid, []))) for nid in cpu_nodes)
    cores = dict((nid, len(view["cores"].get(nid, []))) for nid in cpu_nodes)
    boot_node = view.get("boot_node")
    boot_cpu = view["boot_core"][0] if view.get("boot_core") else None
    floor = dict((nid, 1 if split or nid == boot_node else 0) for nid in cpu_nodes)
    if per_node is not None:
        for nid in per_node:
            if nid not in cores:
                raise PlanError("reserved-cores", "reserved_cores_per_node names NUMA node %d, which has no CPUs (CPU nodes: %s)"
                                % (nid, ", ".join(map(str, cpu_nodes))))
        counts = dict((nid, per_node.get(nid, floor[nid])) for nid in cpu_nodes)
        for nid, n in sorted(counts.items()):
            if n < 1 and split:
                raise PlanError("reserved-cores", "NUMA node %d has CPUs but 0 reserved cores: every CPU node keeps "
                                "at least one housekeeping core when split_reserved is true" % nid)
            if n < 1 and nid == boot_node:
                raise PlanError("reserved-cores", "reserved_cores_per_node gives NUMA node %d 0 cores, but NUMA node %d "
                                "holds CPU %d, the boot CPU: the kernel keeps timekeeping there and clears it from "
                                "nohz_full (\"NO_HZ: Clearing %d from nohz_full range for timekeeping\"), so its core "
                                "is always reserved; give node %d at least 1" % (nid, nid, boot_cpu, boot_cpu, nid))
    else:
        if total is None:
            total = len(cpu_nodes) if split else 1
        if split and total < len(cpu_nodes):
            raise PlanError("reserved-cores", "reserved_cores=%d is less than the %d NUMA nodes with CPUs (%s): with "
                            "split_reserved every CPU node needs one housekeeping core"
                            % (total, len(cpu_nodes), ", ".join(map(str, cpu_nodes))))
        counts = dict(floor)
        for dummy in range(total - sum(counts.values())):
            open_nodes = [nid for nid in cpu_nodes if counts[nid] < cores[nid] - 1]
            if not open_nodes:
                raise PlanError("reserved-cores", "reserved_cores=%d leaves no core to isolate: at most %d fit, one core "
                                "per node stays isolated (cores per NUMA node: %s)"
                                % (total, sum(cores[n] - 1 for n in cpu_nodes),
                                   ", ".join("%d on node %d" % (cores[n], n) for n in cpu_nodes)))
            key = (lambda n: (gpus[n], counts[n], n)) if split else (lambda n: (gpus[n], -counts[n], n))
            counts[min(open_nodes, key=key)] += 1
    if sum(counts.values()) < 1:
        raise PlanError("reserved-cores", "no reserved cores: the static CPU manager needs reserved-cpus")
    for nid, n in sorted(counts.items()):
        if n >= cores[nid]:
            raise PlanError("reserved-cores", "%d reserved cores on NUMA node %d, which has only %d cores: at least one "
                            "core must stay isolated%s" % (n, nid, cores[nid], (
                                " (NUMA node %d holds CPU %d, the boot CPU, whose core is always reserved: the kernel "
                                "keeps timekeeping there)" % (nid, boot_cpu)) if nid == boot_node else ""))
    return counts


def pick_reserved_cpus(view, counts):
    """Reserved CPUs are whole cores, every online SMT sibling of each,
    the lowest-numbered cores of each node (never "0-1" by position).

    The boot CPU's core (``boot_core``) is always among them: it is the
    first core of its node, and reserved as well when it is on no single node."""
    boot = view.get("boot_core") or []
    reserved = set(boot)
    for nid, n in counts.items():
        for core in sorted(view["cores"].get(nid, []), key=lambda c: (c != boot, c[0]))[:n]:
            reserved.update(core)
    return reserved


def isolated_cpus(online, reserved):
    """Isolated = online CPUs - reserved CPUs, exactly."""
    return set(online) - set(reserved)


def isolation_kernel_args(isolated, reserved, flags):
    """Isolcpus, nohz_full and rcu_nocbs carry the same list; irqaffinity = reserved."""
    iso = format_cpulist(isolated)
    return [
        "isolcpus=%s" % ",".join(list(flags) + [iso]),
        "nohz_full=%s" % iso,
        "rcu_nocbs=%s" % iso,
        "irqaffinity=%s" % format_cpulist(reserved),
    ]


def cpu_manager_args(policy, topology_policy, reserved):
    """reserved-cpus = reserved; under single-numa-node the static policy takes full-pcpus-only=true."""
    args = ["cpu-manager-policy=%s" % policy]
    if policy == "static" and topology_policy == "single-numa-node":
        args.append("cpu-manager-policy-options=full-pcpus-only=true")
    args.append("reserved-cpus=%s" % format_cpulist(reserved))
    return args


# ----------------------------------------------------------------- memory: reserved-memory per NUMA node


def memory_reservation_total(kube_reserved, system_reserved, eviction_hard):
    """Kube-reserved.memory + system-reserved.memory + eviction-hard memory.available, in bytes."""
    return (parse_bytes(kube_reserved.get("memory", 0)) + parse_bytes(system_reserved.get("memory", 0))
            + parse_bytes(eviction_hard["memory.available"]))


def split_reserved_memory(total, nodes, memory):
    """Split ``total`` bytes over ``nodes`` (those holding reserved CPUs) in whole MiB.

    Only type memory, no zero entries, nodes that exist; the sum is exact.
    Returns {node: bytes}.
    """
    if total % MIB:
        raise PlanError("reserved-memory", "kube-reserved + system-reserved + memory.available = %d bytes, not a whole "
                        "number of MiB: use Mi/Gi quantities" % total)
    if total == 0:
        raise PlanError("reserved-memory", "kube-reserved + system-reserved + memory.available = 0 bytes: the Static "
                        "memory manager refuses to start without reserved memory (\"[memorymanager] you should specify "
                        "the system reserved memory\"); reserve some or use memory_manager_policy None")
    nodes = sorted(nodes)
    if not nodes:
        raise PlanError("reserved-memory", "no NUMA node with reserved CPUs has memory, so the %s of reserved-memory "
                        "has no node to go to" % human(total))
    mib = total // MIB
    share, extra = divmod(mib, len(nodes))
    out = {}
    for i, nid in enumerate(nodes):
        amount = (share + (1 if i < extra else 0)) * MIB
        if amount:
            out[nid] = amount
    for nid, amount in out.items():
        if amount > memory.get(nid, 0):
            raise PlanError("reserved-memory", "NUMA node %d would reserve %s but has only %s of memory"
                            % (nid, human(amount), human(memory.get(nid, 0))))
    return out


def memory_kubelet_args(policy, kube_reserved, system_reserved, eviction_hard, per_node):
    """eviction-hard with every signal, and reserved-memory when the policy is Static."""
    args = [
        "memory-manager-policy=%s" % policy,
        "kube-reserved=%s" % ",".join("%s=%s" % kv for kv in sorted(kube_reserved.items())),
        "system-reserved=%s" % ",".join("%s=%s" % kv for kv in sorted(system_reserved.items())),
        "eviction-hard=%s" % ",".join("%s<%s" % (s, eviction_hard[s]) for s in sorted(eviction_hard)),
    ]
    if policy == "Static" and per_node:
        args.append("reserved-memory=%s" % ";".join("%d:memory=%s" % (nid, format_mib(b)) for nid, b in sorted(per_node.items())))
    return [a for a in args if not a.endswith("=")]


# ----------------------------------------------------------------- hugepages


def _kernel_version(release):
    m = re.match(r"^(\d+)\.(\d+)", release or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def hugepage_size_offered(size, offered):
    """The size must be one the kernel offers (its ``sys/kernel/mm/hugepages/hugepages-<kB>kB``
    folders, ``hugepage_sizes_kb`` of the topology); returns it in kB.

    Refused as well when the kernel offers none (no hugetlbfs) or the topology does
    not say (``offered`` None): on every machine, not only where some list exists.
    """
    size_kb = HUGEPAGE_SIZES[size]
    if offered is None:
        raise PlanError("hugepages", "the topology does not say which hugepage sizes the kernel offers (no "
                        "hugepage_sizes_kb), so %s (%d kB) pages cannot be checked: read it with "
                        "maitred.rke2_numa.topology_info" % (size, size_kb))
    if size_kb not in offered:
        have = ("%s (%s kB)" % (", ".join(hugepage_resource(kb) for kb in offered), ", ".join(map(str, offered)))
                if offered else "no hugepage sizes (no hugetlbfs)")
        raise PlanError("hugepages", "this kernel offers %s, not %s (%s, %d kB)"
                        % (have, size, hugepage_resource(size_kb), size_kb))
    return size_kb


def plan_hugepages(view, size, per_node, which, method, reserved_memory):
    """Per-node hugepages; never on CPU-less nodes; refused when they do not fit.

    Returns (pages {node: count}, method actually used, kernel args).
    """
    if per_node == 0:
        return {}, None, []
    size_kb = hugepage_size_offered(size, view["hugepage_sizes_kb"])
    if which == "all":
        nodes = list(view["cpu_nodes"])
    elif which == "gpu":
        nodes = [nid for nid in view["cpu_nodes"] if view["gpus"].get(nid)]
        if not nodes:
            raise PlanError("hugepages", "hugepages_nodes=gpu but no NUMA node with CPUs has a GPU of known locality")
    else:
        nodes = sorted(set(which))
        for nid in nodes:
            if nid not in view["node_cpus"]:
                raise PlanError("hugepages", "hugepages_nodes names NUMA node %d, which does not exist" % nid)
            if nid not in view["cpu_nodes"]:
                raise PlanError("hugepages", "NUMA node %d has no CPUs (GPU or CXL memory): hugepages there are "
                                "out of reach of a single-NUMA-node pod" % nid)
    pages = {}
    for nid in nodes:
        need = per_node * size_kb * 1024
        free = view["memory"].get(nid, 0) - reserved_memory.get(nid, 0)
        if need > free:
            raise PlanError("hugepages", "%d x %s hugepages = %s do not fit NUMA node %d: %s of memory, %s reserved, %s left"
                            % (per_node, size, human(need), nid, human(view["memory"].get(nid, 0)),
                               human(reserved_memory.get(nid, 0)), human(max(free, 0))))
        pages[nid] = per_node
    if method == "auto":
        kernel = _kernel_version(view["kernel_release"])
        method = "cmdline" if kernel is not None and kernel >= NODE_HUGEPAGES_KERNEL else "runtime"
    args = []
    if method == "cmdline":
        args = ["default_hugepagesz=%s" % size, "hugepagesz=%s" % size,
                "hugepages=%s" % ",".join("%d:%d" % (nid, n) for nid, n in sorted(pages.items()))]
    return pages, method, args


# ----------------------------------------------------------------- topology manager


def topology_manager_args(policy, scope, node_count, kubernetes):
    """Policy and scope; more than 8 NUMA nodes (all of them, CPU-less too) need max-allowable-numa-nodes, which
    the node's kubelet must have (``kubernetes``: plan_version's answer; kubelet_rules.KUBELET_MINORS)."""
    args = ["topology-manager-policy=%s" % policy, "topology-manager-scope=%s" % scope]
    if policy != "none" and node_count > DEFAULT_MAX_NUMA_NODES:
        minor = parse_version(kubernetes["minor"])
        if not kubelet_rules.option_usable("topology", "max-allowable-numa-nodes", minor):
            raise PlanError("numa-node-limit", "this host has %d NUMA nodes; the Topology Manager refuses more than %d "
                            "(\"unsupported on machines with more than %d NUMA Nodes\") unless "
                            "topology-manager-policy-options=max-allowable-numa-nodes is set, which the kubelet of "
                            "Kubernetes %s does not have (from %s), and %s is %s"
                            % (node_count, DEFAULT_MAX_NUMA_NODES, DEFAULT_MAX_NUMA_NODES, kubernetes["minor"],
                               kubelet_rules.minor_text(kubelet_rules.first_minor_with("topology", "max-allowable-numa-nodes")),
                               "kubernetes_version" if kubernetes["source"] == "kubernetes_version" else "its kubelet",
                               kubernetes["minor"]))
        args.append("topology-manager-policy-options=max-allowable-numa-nodes=%d" % node_count)
    return args


def many_numa_nodes(view, topology_policy, memory_policy, allow, context=""):
    """Above MANY_NUMA_NODES NUMA nodes (all of them, CPU-less ones too, as the kubelet
    counts them) refuse, naming the cost and the ways out, unless the operator turns NUMA
    alignment off: ``allow_many_numa_nodes`` with Topology Manager policy none (the kubelet then
    asks no hint provider) and Memory Manager policy None (the static Memory Manager enumerates
    the same masks itself when the Topology Manager gives it no hint: memorymanager
    policy_static.go, getDefaultHint -> calculateHints -> IterateBitMasks). Returns the plan's
    warnings; ``context`` prefixes a refusal (what the kubelet args were judged after).
    """
    high = [nid for nid in view["node_ids"] if nid > MAX_NUMA_NODE_ID]
    aligned = topology_policy != "none" or memory_policy == "Static"
    if high and aligned:
        raise PlanError("numa-node-id", (
            "%sNUMA node id%s %s: the kubelet's NUMA affinity masks are 64 bits wide (topologymanager bitmask: bit "
            "numbers 0-%d only), so no hint of the Topology Manager or the Memory Manager can name %s; plan without "
            "NUMA alignment of pods (topology_manager_policy: none and memory_manager_policy: None)")
            % (context, "s" if len(high) > 1 else "", format_cpulist(high), MAX_NUMA_NODE_ID, "them" if len(high) > 1 else "it"))
    warnings = (["NUMA node id%s %s above %d: planned with NUMA alignment of pods off (the kubelet's masks hold ids 0-%d)"
                 % ("s" if len(high) > 1 else "", format_cpulist(high), MAX_NUMA_NODE_ID, MAX_NUMA_NODE_ID)] if high else [])
    count = len(view["node_ids"])
    if count <= MANY_NUMA_NODES:
        return warnings
    cpu_nodes = len(view["cpu_nodes"])
    gpu_memory = view.get("gpu_memory_nodes") or []
    if allow and topology_policy == "none" and memory_policy == "None":
        return warnings + [
            "allow_many_numa_nodes: this host has %d NUMA nodes%s, more than %d: planned with "
            "topology-manager-policy=none and memory-manager-policy=None, so NUMA alignment of pods is off (no "
            "pod gets its CPUs, memory and GPUs from one NUMA node on purpose); NVIDIA's CDMM driver mode "
            "(Coherent Driver-based Memory Management) would keep GPU memory out of the NUMA nodes and let the "
            "Topology Manager align pods again"
            % (count, " (%d of them GPU memory nodes)" % len(gpu_memory) if gpu_memory else "", MANY_NUMA_NODES)]
    if allow and topology_policy != "none":
        missing = (" allow_many_numa_nodes takes effect only with topology_manager_policy none, and the policy is %s, "
                   "whose hint providers enumerate the masks." % topology_policy)
    elif allow:
        missing = (" allow_many_numa_nodes is set with topology_manager_policy none, but memory_manager_policy Static "
                   "enumerates the same masks for every Guaranteed container when the Topology Manager gives it no hint "
                   "(memorymanager policy_static.go getDefaultHint).")
    else:
        missing = ""
    if gpu_memory:
        found = " %d of these are GPU memory nodes (%s)." % (len(gpu_memory), format_cpulist(gpu_memory))
        cdmm = "NVIDIA's CDMM driver mode, the way for this host"
    else:
        found = ""
        cdmm = "if the CPU-less nodes are a coherent GPU's memory, NVIDIA's CDMM driver mode"
    raise PlanError("many-numa-nodes", (
        "%sthis host has %d NUMA nodes (%d with CPUs, %d without), more than %d: the kubelet counts every NUMA node, "
        "CPU-less ones too, and at every pod admission each hint provider of the Topology Manager (CPU, Memory and "
        "Device Manager) enumerates every subset of them, 2^%d = %d masks per hint provider (kubelet topologymanager "
        "bitmask.IterateBitMasks; KEP-4622 calls the Topology Manager's limit of 8 a stop-gap against this state "
        "explosion), so pods stall at admission.%s%s Ways out: (1) %s - CDMM (Coherent Driver-based Memory "
        "Management, NVIDIA driver R580+) keeps the GPU memory of GH200/GB200/GB300 out of the kernel's NUMA nodes, "
        "so the kubelet sees the CPU nodes only: switch the driver to it, reboot and read the topology again; or "
        "(2) plan without NUMA alignment of pods: topology_manager_policy: none and memory_manager_policy: None "
        "together with allow_many_numa_nodes: true (role variable rke2_numa_allow_many_numa_nodes)")
        % (context, count, cpu_nodes, count - cpu_nodes, MANY_NUMA_NODES, count, 2 ** count, found, missing, cdmm))


# ----------------------------------------------------------------- tables and fits


def numa_tables(view, reserved, reserved_memory, hugepages, size, full_pcpus):
    """Per NUMA node, what one Guaranteed pod can get at one "table": exclusive
    CPUs (whole cores under full-pcpus-only), allocatable memory, hugepages, GPUs."""
    size_bytes = HUGEPAGE_SIZES[size] * 1024
    tables = []
    for nid in view["node_ids"]:
        cpus = view["node_cpus"][nid]
        free_cores = [c for c in view["cores"].get(nid, []) if not set(c) & reserved]
        exclusive = sum(len(c) for c in free_cores) if full_pcpus else len(cpus - reserved)
        hp = hugepages.get(nid, 0) * size_bytes
        allocatable = max(view["memory"].get(nid, 0) - reserved_memory.get(nid, 0) - hp, 0)
        tables.append({
            "node": nid,
            "cpus": format_cpulist(cpus),
            "reserved_cpus": format_cpulist(cpus & reserved),
            "isolated_cpus": format_cpulist(cpus - reserved),
            "exclusive_cpus": exclusive,
            "memory_bytes": view["memory"].get(nid, 0),
            "reserved_memory_bytes": reserved_memory.get(nid, 0),
            "hugepages_bytes": hp,
            "allocatable_memory_bytes": allocatable,
            "gpus": list(view["gpus"].get(nid, [])),
            "largest_pod": {
                "cpu": exclusive,
                "memory": format_mib(allocatable // MIB * MIB) if allocatable else "0Mi",
                "hugepages": "%dMi" % (hp // MIB) if hp else "0Mi",
                "gpus": len(view["gpus"].get(nid, [])),
            },
        })
    return tables


def fit_pod_shapes(shapes, tables, cpus_per_core, full_pcpus, single_node):
    """Where each pod shape fits, and how many copies fit on this host at once.

    Under full-pcpus-only a CPU count that is not a multiple of the kubelet's
    CPUs per core (``kubelet_rules.cpus_per_core``, the machine's ratio) is
    refused by the kubelet (SMTAlignmentError): it fits nowhere.
    """
    results = []
    for shape in shapes:
        reasons = []
        if full_pcpus and cpus_per_core > 1 and shape["cpu"] % cpus_per_core:
            reasons.append("cpu=%d is not a multiple of the kubelet's %d CPUs per core (full-pcpus-only: SMTAlignmentError)"
                           % (shape["cpu"], cpus_per_core))
        fits_on, copies = [], 0
        for t in tables:
            limits = [
                (shape["cpu"], t["exclusive_cpus"]), (shape["memory"], t["allocatable_memory_bytes"]),
                (shape["gpus"], len(t["gpus"])), (shape["hugepages"], t["hugepages_bytes"]),
            ]
            if reasons or any(need > have for need, have in limits):
                continue
            fits_on.append(t["node"])
            copies += min([have // need for need, have in limits if need] or [1])
        if not single_node and not fits_on and not reasons:
            if (shape["cpu"] <= sum(t["exclusive_cpus"] for t in tables)
                    and shape["memory"] <= sum(t["allocatable_memory_bytes"] for t in tables)
                    and shape["gpus"] <= sum(len(t["gpus"]) for t in tables)
                    and shape["hugepages"] <= sum(t["hugepages_bytes"] for t in tables)):
                results.append({"name": shape["name"], "fits": True, "nodes": [], "copies": 1, "request": dict(shape),
                                "note": "spans NUMA nodes (allowed by the topology manager policy)"})
                continue
        results.append({"name": shape["name"], "fits": bool(fits_on), "nodes": fits_on, "copies": copies, "request": dict(shape),
                        "note": "; ".join(reasons), "short": "" if fits_on or reasons else shortfall(shape, tables)})
    return results


def shortfall(shape, tables):
    """Why a shape fits on no single NUMA node: the resources no node has enough of."""
    most = {
        "cpu": max(t["exclusive_cpus"] for t in tables),
        "memory": max(t["allocatable_memory_bytes"] for t in tables),
        "gpus": max(len(t["gpus"]) for t in tables),
        "hugepages": max(t["hugepages_bytes"] for t in tables),
    }
    short = []
    for key in ("cpu", "memory", "gpus", "hugepages"):
        if shape[key] > most[key]:
            show = human if key in ("memory", "hugepages") else str
            short.append("%s %s > at most %s on one node" % (key, show(shape[key]), show(most[key])))
    return ", ".join(short) or "no single node has all of it at once"


# ----------------------------------------------------------------- the whole plan


def fingerprint(values):
    """A stable hash of what forces a kubelet state reset when it changes."""
    return hashlib.sha256(json.dumps(values, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()[:16]


def apply_extra_args(planned, extra):
    """Pass-through kubelet args: new flags are appended; a managed flag given again replaces
    the planned value (last wins, as in the kubelet) and is reported."""
    args = list(planned)
    overridden = []
    for arg in extra:
        name = kubelet_rules.flag_name(arg)
        same = [i for i, a in enumerate(args) if kubelet_rules.flag_name(a) == name]
        if same and name in MANAGED_KUBELET_FLAGS:
            overridden.append(name)
            for i in reversed(same):
                del args[i]
        args.append(arg)
    return args, overridden


def housekeeping_warnings(view, counts, split_reserved):
    """With split_reserved false, the NUMA nodes left without a housekeeping core."""
    missing = [nid for nid in view["cpu_nodes"] if counts.get(nid, 0) == 0]
    if split_reserved or not missing:
        return []
    return ["split_reserved is false: NUMA nodes %s get no housekeeping core, so their IRQs and kernel threads run on "
            "another node" % ", ".join(map(str, missing))]


def runtime_hugepages_warnings(view, method, size, asked):
    """Runtime hugepages can fail on fragmented memory: say so, and why the method was chosen."""
    if method != "runtime":
        return []
    return ["hugepages are allocated at boot by the pre-kubelet unit (kernel %s%s): %s pages can fail on fragmented "
            "memory; the unit fails loudly then" % (view["kernel_release"] or "unknown",
                                                    "" if asked == "runtime" else " < 5.16", size)]


def check_planned_args(kubelet_args, kernel_args, topology, extra, minor=kubelet_rules.DEFAULT_MINOR):
    """The planned args as the kubelet of ``minor`` and the kernel will judge them, with extra_kubelet_args
    applied: (kubelet_args, overridden flags); PlanError when either would refuse them."""
    refused = kubelet_rules.check(kubelet_args, kernel_args, topology, minor)
    if refused:
        raise PlanError("kubelet-rules", "the planned settings would be refused (a planner bug, please report it): %s"
                        % "; ".join(refused))
    kubelet_args, overridden = apply_extra_args(kubelet_args, extra)
    refused = kubelet_rules.check(kubelet_args, kernel_args, topology, minor) if extra else []
    if refused:
        who = [what for prefix, what in (("kubelet: ", "the kubelet will refuse to start"),
                                         ("kernel: ", "the planned kernel args no longer fit the kubelet args"))
               if any(r.startswith(prefix) for r in refused)]
        raise PlanError("kubelet-rules", "with extra_kubelet_args %s: %s" % (" and ".join(who), "; ".join(refused)))
    return kubelet_args, overridden


def numa_limit_warnings(view, o, kubelet_args, overridden, planned):
    """many_numa_nodes judged on the policies the kubelet will run: ``planned`` (its verdict on the
    options), unless extra_kubelet_args replaced a policy."""
    if not set(overridden) & {"topology-manager-policy", "memory-manager-policy"}:
        return planned
    flags = kubelet_rules.parse_kubelet_args(kubelet_args)
    topology_policy = flags.get("topology-manager-policy", "none")
    memory_policy = flags.get("memory-manager-policy", "None")
    return many_numa_nodes(view, topology_policy, memory_policy, o["allow_many_numa_nodes"],
                           context="with extra_kubelet_args (topology-manager-policy=%s, memory-manager-policy=%s): "
                           % (topology_policy, memory_policy))


def pod_shape_warnings(o, tables, fits):
    """Each pod shape that fits no NUMA node, and why; PlanError instead under strict_fit."""
    warnings = []
    single = dra_plan.single_numa_shapes(o)
    for fit, shape in zip(fits, o["pod_shapes"]):
        if fit["fits"]:
            continue
        message = None
        if single and o["split_reserved"] and not fit["note"]:
            unsplit = [t for t in tables if shape["cpu"] <= t["exclusive_cpus"] + len(parse_cpulist(t["reserved_cpus"]))
                       and shape["memory"] <= t["allocatable_memory_bytes"] and shape["gpus"] <= len(t["gpus"])
                       and shape["hugepages"] <= t["hugepages_bytes"] and t["reserved_cpus"]]
            if unsplit:
                message = ("pod shape %s (cpu=%d) fits no NUMA node because split_reserved puts housekeeping cores on "
                           "node(s) %s; with single-numa-node it would fit there only without them: set "
                           "split_reserved: false or reserve the cores elsewhere"
                           % (shape["name"], shape["cpu"], ", ".join(str(t["node"]) for t in unsplit)))
        if message is None:
            message = "pod shape %s (cpu=%d, memory=%s, gpus=%d, hugepages=%s) fits on no NUMA node%s" % (
                shape["name"], shape["cpu"], human(shape["memory"]), shape["gpus"], human(shape["hugepages"]),
                ": " + (fit["note"] or fit["short"]) if fit["note"] or fit["short"] else "")
        if o["strict_fit"]:
            raise PlanError("pod-shapes", message)
        warnings.append(message)
    return warnings


def machine_warnings(view, topology):
    """Offline CPUs (bringing them online forces a reset) and GPUs without a NUMA node."""
    warnings = []
    if view["offline"]:
        warnings.append("offline CPUs %s are neither reserved nor isolated; bringing them online changes the CPU set "
                        "and forces a kubelet state reset" % format_cpulist(view["offline"]))
    unknown_gpus = [d["address"] for d in topology.get("pci_devices", []) if d.get("kind") == "gpu" and d.get("numa_node") is None]
    if unknown_gpus:
        warnings.append("GPUs %s have no known NUMA node: the device plugin gives no topology hint for them"
                        % ", ".join(unknown_gpus))
    return warnings


def _by_node(values, show=lambda v: v):
    return dict((str(k), show(v)) for k, v in sorted(values.items()))


def make_plan(topology, node_version=None, **options):
    """Plan one host; raises PlanError (rule + numbers) when the intent cannot fit. ``node_version``: the kubelet the
    node runs, as read ({"version", "source"}; plan_version), for the kubelet rules of its minor."""
    o = normalize_options(options)
    kubernetes, minor, known = planned_minor(o["kubernetes_version"], node_version)
    view = host_view(topology)
    # refuses too many NUMA nodes before any other rule can
    numa_warnings = many_numa_nodes(view, o["topology_manager_policy"], o["memory_manager_policy"],
                                    o["allow_many_numa_nodes"])
    static_cpu = o["cpu_manager_policy"] == "static"
    # the minor only when given or read: a host planned for the default minor may run a newer kubelet
    refusal = dra_plan.allocator_error(o, minor if known else None, kubernetes["source"])
    if refusal:
        raise PlanError("cpu-allocator", refusal)

    counts = reserved_core_counts(view, o["reserved_cores"], o["reserved_cores_per_node"], o["split_reserved"])
    reserved = pick_reserved_cpus(view, counts)
    isolated = isolated_cpus(view["online"], reserved)

    total_memory = memory_reservation_total(o["kube_reserved"], o["system_reserved"], o["eviction_hard"])
    # nodes that hold reserved CPUs and memory (a memory-less CPU node reserves nothing)
    memory_nodes = sorted(nid for nid in view["node_ids"] if view["node_cpus"][nid] & reserved and view["memory"].get(nid))
    reserved_memory = split_reserved_memory(total_memory, memory_nodes, view["memory"]) \
        if o["memory_manager_policy"] == "Static" else {}
    hugepages, hp_method, hp_args = plan_hugepages(view, o["hugepages_size"], o["hugepages_per_node"],
                                                   o["hugepages_nodes"], o["hugepages_method"], reserved_memory)

    kernel_args = (isolation_kernel_args(isolated, reserved, o["isolcpus_flags"]) if static_cpu else []) + hp_args
    kubelet_args = (cpu_manager_args(o["cpu_manager_policy"], o["topology_manager_policy"], reserved)
                    + topology_manager_args(o["topology_manager_policy"], o["topology_manager_scope"],
                                            len(view["node_ids"]), kubernetes)
                    + memory_kubelet_args(o["memory_manager_policy"], o["kube_reserved"], o["system_reserved"],
                                          o["eviction_hard"], reserved_memory))
    kubelet_args, overridden = check_planned_args(kubelet_args, kernel_args, topology, o["extra_kubelet_args"], minor)

    full_pcpus = static_cpu and o["topology_manager_policy"] == "single-numa-node"
    tables = numa_tables(view, reserved, reserved_memory, hugepages, o["hugepages_size"], full_pcpus)
    fits = fit_pod_shapes(o["pod_shapes"], tables, view["cpus_per_core"], full_pcpus, dra_plan.single_numa_shapes(o))
    warnings = (housekeeping_warnings(view, counts, o["split_reserved"])
                + runtime_hugepages_warnings(view, hp_method, o["hugepages_size"], o["hugepages_method"])
                + numa_limit_warnings(view, o, kubelet_args, overridden, numa_warnings)
                + ["extra_kubelet_args replaces the planned %s" % name for name in overridden]
                + kubelet_rules.warnings(kubelet_args, topology)
                + pod_shape_warnings(o, tables, fits)
                + machine_warnings(view, topology))

    size_kb = HUGEPAGE_SIZES[o["hugepages_size"]] if hugepages else None
    reset_inputs = {
        "cpu_manager_policy": o["cpu_manager_policy"],
        "reserved_cpus": format_cpulist(reserved),
        "online_cpus": format_cpulist(view["online"]),
        "memory_manager_policy": o["memory_manager_policy"],
        "reserved_memory": _by_node(reserved_memory),
        "hugepages": _by_node(hugepages),
        "hugepages_size": o["hugepages_size"] if hugepages else None,
        "node_memory": _by_node(view["memory"]),
    }
    return {
        "reserved_cpus": format_cpulist(reserved),
        "isolated_cpus": format_cpulist(isolated),
        "offline_cpus": format_cpulist(view["offline"]),
        "reserved_cores_per_node": _by_node(counts),
        "kernel_args": kernel_args,
        "kubelet_args": kubelet_args,
        "reserved_memory": _by_node(reserved_memory, format_mib),
        "hugepages": {
            "size": o["hugepages_size"] if hugepages else None,
            "size_kb": size_kb,
            "resource": hugepage_resource(size_kb) if hugepages else None,
            "method": hp_method,
            "per_node": _by_node(hugepages),
        },
        "numa_tables": tables,
        "pod_shapes": fits,
        "dra": dra_plan.plan_claims(o, topology, tables, fits, view["cpus_per_core"]),
        "node_labels": o["node_labels"],
        "node_taints": o["node_taints"],
        "warnings": warnings,
        "fingerprint": fingerprint(reset_inputs),
        "topology_fingerprint": fingerprint({"online": reset_inputs["online_cpus"], "memory": reset_inputs["node_memory"],
                                             "nodes": _by_node(view["node_cpus"], format_cpulist)}),
        "reset_inputs": reset_inputs,
        "managed_kubelet_flags": list(MANAGED_KUBELET_FLAGS),
        "managed_kernel_args": list(MANAGED_KERNEL_ARGS),
        "kubernetes": kubernetes,
    }


def plans_of(hosts, hostvars):
    """{host: its rke2_numa_plan} of the planned ``hosts`` (a host without one is left out), as plain types: Ansible hands
    filters its own (tagged) strings, which YAML cannot represent (the fleet-wide outputs: rancher.yaml, dra.yaml)."""
    return json.loads(json.dumps(dict((str(h), hostvars[h]["rke2_numa_plan"]) for h in hosts
                                      if isinstance((hostvars[h] if h in hostvars else {}).get("rke2_numa_plan"), dict))))


def foreign_plan_error(given, plan):
    """plan-host: why a plan given beside the one just made (an rke2_numa_plan extra var beats the fact the plan role
    sets, and would reach the roles that follow) must not be applied to this host ('' when it was made for this
    host's topology)."""
    if not isinstance(given, dict):
        given = {}
    if given.get("topology_fingerprint") == plan["topology_fingerprint"]:
        # identical machines share a fingerprint: a plan for another kubelet is another host's all the same
        theirs, ours = (given.get("kubernetes") or {}).get("minor"), plan["kubernetes"]["minor"]
        if theirs != ours:
            return ("plan-host: the rke2_numa_plan given was made for Kubernetes %s, and this host's kubelet is %s (%s): "
                    "its kubelet rules and checkpoints are another minor's. Refusing to apply it; plan this host instead "
                    "(drop the rke2_numa_plan extra var)." % (theirs or "an unknown minor (a plan from before plans "
                                                              "said)", ours, plan["kubernetes"]["source"]))
        return ""
    return ("plan-host: the rke2_numa_plan given (topology fingerprint %s, online CPUs %s, reserved CPUs %s) was made for "
            "another host: this host's topology fingerprint is %s (online CPUs %s). Refusing to apply it; plan this host "
            "instead (drop the rke2_numa_plan extra var)." % (
                given.get("topology_fingerprint") or "none", (given.get("reset_inputs") or {}).get("online_cpus", "?"),
                given.get("reserved_cpus", "?"), plan["topology_fingerprint"], plan["reset_inputs"]["online_cpus"]))
