# -*- coding: utf-8 -*-
"""Property tests: every plan of every generated machine keeps every domain rule,
or is refused by a rule that really applies.

Machines are written as sysfs trees (gen_sysfs) and read back (read_topology),
so the planner sees exactly what it sees on a host. The invariants are checked
here from the machine's description, independently of the planner's helpers.
"""

from __future__ import annotations

import os
import tempfile

from hypothesis import HealthCheck, event, given, settings, strategies as st

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import parse_cpulist
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import kubelet_rules
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import PlanError, make_plan, split_reserved_memory

from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs

MIB = 1024 * 1024
# Quantities the strategies use, in MiB, written out here rather than parsed by the code under test.
MEMORY_MIB = {"0": 0, "256Mi": 256, "512Mi": 512, "500Mi": 500, "100Mi": 100, "1Gi": 1024, "2Gi": 2048}
HUGEPAGE_MIB = {"1G": 1024, "2M": 2}
# Every rule a refusal may name. "kubelet-rules" is not among them: it means the
# planner built something the kubelet would refuse, which is a planner bug.
KNOWN_RULES = {"options", "topology", "reserved-cores", "reserved-memory", "hugepages", "numa-node-limit", "pod-shapes",
               "many-numa-nodes"}

# Thousands of small files per example: tmpfs when there is one (much faster than a disk-backed /tmp).
FAST_TMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def machines(draw):
    """make_spec keyword arguments of a machine (small enough to write fast)."""
    sockets = draw(st.integers(1, 4))
    nodes_per_socket = draw(st.integers(1, 4))
    cpu_nodes = sockets * nodes_per_socket
    # one core per node leaves no core to isolate once one is reserved: keep it rare
    # (hypothesis favours the first choices; 1 goes last)
    cores_per_node = draw(st.sampled_from(list(range(2, max(2, min(4, 32 // cpu_nodes)) + 1)) * 4 + [1]))
    threads = draw(st.integers(1, 2))
    cores_per_socket = nodes_per_socket * cores_per_node
    ncpus = sockets * cores_per_socket * threads
    offline = set()
    if ncpus > 1 and draw(st.integers(0, 3)) == 3:  # about one machine in four; CPU 0 never goes offline
        offline = draw(st.sets(st.integers(1, ncpus - 1), min_size=1, max_size=min(3, ncpus - 1)))
    return {
        "sockets": sockets,
        "cores_per_socket": cores_per_socket,
        "threads": threads,
        "nodes_per_socket": nodes_per_socket,
        "numbering": draw(st.sampled_from(["linear", "roundrobin", "compact"])),
        "offline": tuple(sorted(offline)),
        "cpuless_nodes": draw(st.integers(0, 8)),
        "cpuless_memory_kb": draw(st.sampled_from([0, 16 * 1024 * 1024])),
        "gpus_per_node": dict(enumerate(draw(st.lists(st.integers(0, 4), min_size=cpu_nodes, max_size=cpu_nodes)))),
        "memory_per_node_kb": draw(st.sampled_from([1, 4, 16, 64, 64])) * 1024 * 1024,
        "kernel": draw(st.sampled_from(["6.8.0-45-generic", "5.15.0-105-generic"])),
    }


@st.composite
def intents(draw, cpu_nodes=1):
    """numa_plan options, valid by themselves (whether they fit the machine is the planner's call)."""
    options = {
        "split_reserved": draw(st.sampled_from([True, True, True, False])),
        "cpu_manager_policy": draw(st.sampled_from(["static", "static", "static", "none"])),
        "memory_manager_policy": draw(st.sampled_from(["Static", "Static", "None"])),
        "topology_manager_policy": draw(st.sampled_from(["single-numa-node", "single-numa-node", "restricted",
                                                         "best-effort", "none"])),
        "topology_manager_scope": draw(st.sampled_from(["pod", "container"])),
        "kubernetes_version": draw(st.sampled_from(["1.33", "v1.31.2+rke2r1", "1.33", "1.30"])),
        "isolcpus_flags": draw(st.sampled_from([["managed_irq"], ["managed_irq", "domain"], []])),
        "kube_reserved": {"memory": draw(st.sampled_from(["1Gi", "512Mi", "256Mi"]))},
        "system_reserved": draw(st.sampled_from([{"memory": "1Gi"}, {"memory": "0"}, {}])),
        "eviction_hard": {"memory.available": draw(st.sampled_from(["500Mi", "100Mi", "1Gi"]))},
        "node_labels": draw(st.sampled_from([[], ["gpu=true"]])),
        "extra_kubelet_args": draw(st.sampled_from([[], ["max-pods=110"]])),
        "allow_many_numa_nodes": draw(st.sampled_from([False, False, False, True])),
    }
    if draw(st.booleans()):
        # mostly around the node count (one housekeeping core each, a few extra), sometimes anything
        options["reserved_cores"] = draw(st.one_of(st.integers(cpu_nodes, cpu_nodes + 3), st.integers(1, 12)))
    size = draw(st.sampled_from(["1G", "2M"]))
    options["hugepages_size"] = size
    options["hugepages_per_node"] = draw(st.sampled_from([0, 0, 1, 2, 4, 8])) * (1 if size == "1G" else 256)
    options["hugepages_nodes"] = draw(st.sampled_from(["gpu", "all"]))
    options["hugepages_method"] = draw(st.sampled_from(["auto", "auto", "cmdline", "runtime"]))
    if draw(st.integers(0, 3)) == 0:
        options["pod_shapes"] = [{"name": "p", "cpu": draw(st.integers(1, 8)), "gpus": draw(st.integers(0, 2))}]
    return options


# ------------------------------------------------------------------ the machine, described independently


def describe(spec):
    """What the machine is, from its description: online cores per node, CPU nodes, GPUs."""
    offline = set(spec["offline"])
    cores = {}
    for core in spec["cores"]:
        online = frozenset(core["cpus"]) - offline
        if online:
            cores.setdefault(core["node"], []).append(online)
    cpus = set(c for core in spec["cores"] for c in core["cpus"])
    gpus = {}
    for dev in spec["pci"]:
        if dev["ids"][2].startswith(("0x0302", "0x1200")):
            gpus[dev["numa_node"]] = gpus.get(dev["numa_node"], 0) + 1
    return {
        "node_ids": [n["id"] for n in spec["nodes"]],
        "memory_mib": dict((n["id"], n["memory_kb"] // 1024) for n in spec["nodes"]),
        "cores": cores,
        "cpu_nodes": sorted(cores),
        "online": cpus - offline,
        "offline": offline & cpus,
        "gpus": gpus,
        "kernel": spec["kernel"],
    }


def kubelet_flag(args, name):
    values = [a.split("=", 1)[1] for a in args if a.split("=", 1)[0] == name]
    assert len(values) <= 1, "%s given %d times" % (name, len(values))
    return values[0] if values else None


def kernel_arg(args, name):
    return kubelet_flag(args, name)


def reserved_counts(machine, reserved):
    """Whole reserved cores per CPU node."""
    return dict((nid, sum(1 for core in cores if core <= reserved)) for nid, cores in machine["cores"].items())


def reservation_mib(options):
    """kube-reserved + system-reserved + memory.available, in MiB."""
    return (MEMORY_MIB[options["kube_reserved"]["memory"]] + MEMORY_MIB[options["system_reserved"].get("memory", "0")]
            + MEMORY_MIB[options["eviction_hard"]["memory.available"]])


def hugepage_targets(machine, options):
    if options["hugepages_nodes"] == "all":
        return list(machine["cpu_nodes"])
    return [n for n in machine["cpu_nodes"] if machine["gpus"].get(n)]


def boot_node(machine):
    """The NUMA node of CPU 0 (the strategies never take CPU 0 offline)."""
    (node,) = [nid for nid, cores in machine["cores"].items() if any(0 in core for core in cores)]
    return node


def cores_refusal_expected(machine, options):
    """Rule 2's refusals, from the description: a node with no core left to isolate, too few or too many.
    The node of CPU 0 always keeps its boot core reserved, so it needs a second core to isolate."""
    room = dict((nid, len(cores) - 1) for nid, cores in machine["cores"].items())
    split = options["split_reserved"]
    total = options.get("reserved_cores")
    if split:
        if any(r < 1 for r in room.values()):
            return True
        if total is not None and (total < len(room) or total > sum(room.values())):
            return True
        return False
    return room[boot_node(machine)] < 1 or (total or 1) > sum(room.values())


# ------------------------------------------------------------------ the invariants


def check_plan(machine, topology, options, plan):
    kubelet, kernel = plan["kubelet_args"], plan["kernel_args"]
    online, offline = machine["online"], machine["offline"]
    static = options["cpu_manager_policy"] == "static"
    reserved = set(parse_cpulist(plan["reserved_cpus"]))
    isolated = set(parse_cpulist(plan["isolated_cpus"]))

    # rule 1: whole cores, every online sibling
    all_cores = [core for cores in machine["cores"].values() for core in cores]
    for core in all_cores:
        assert core <= reserved or not core & reserved, "core %s split by reserved %s" % (sorted(core), sorted(reserved))
    assert reserved <= set().union(*all_cores)

    # rule 2: the boot CPU's core always (the kernel keeps CPU 0 for timekeeping, whatever the options);
    # housekeeping on every CPU node when split; the count asked for; extras to the fewest GPUs
    assert 0 in reserved and 0 not in isolated, plan["reserved_cpus"]
    (boot_core,) = [core for core in all_cores if 0 in core]
    assert boot_core <= reserved
    counts = reserved_counts(machine, reserved)
    assert plan["reserved_cores_per_node"] == dict((str(n), c) for n, c in sorted(counts.items()))
    if options["split_reserved"]:
        assert all(c >= 1 for c in counts.values()), counts
    total = options.get("reserved_cores") or (len(machine["cpu_nodes"]) if options["split_reserved"] else 1)
    assert sum(counts.values()) == total
    floor = dict((n, 1 if options["split_reserved"] or n == boot_node(machine) else 0) for n in counts)
    for a in counts:
        for b in counts:
            if machine["gpus"].get(a, 0) < machine["gpus"].get(b, 0) and counts[b] > floor[b]:
                assert counts[a] == len(machine["cores"][a]) - 1, "node %d (fewer GPUs) not filled before node %d" % (a, b)
    assert all(c < len(machine["cores"][n]) for n, c in counts.items())

    # rule 3: isolated is the complement; offline CPUs in neither
    assert isolated == online - reserved
    assert not isolated & reserved
    assert not (isolated | reserved) & offline
    assert set(parse_cpulist(plan["offline_cpus"])) == offline
    if static:
        iso = kernel_arg(kernel, "isolcpus").split(",")
        flags = [p for p in iso if not p[:1].isdigit()]
        assert flags == options["isolcpus_flags"]
        iso_list = ",".join(p for p in iso if p[:1].isdigit())
        assert iso_list == kernel_arg(kernel, "nohz_full") == kernel_arg(kernel, "rcu_nocbs")
        assert set(parse_cpulist(iso_list)) == isolated
        assert set(parse_cpulist(kernel_arg(kernel, "irqaffinity"))) == reserved
    else:
        assert not [a for a in kernel if a.split("=")[0] in ("isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity")]

    # rule 4: reserved-cpus = reserved, within the online CPUs
    assert set(parse_cpulist(kubelet_flag(kubelet, "reserved-cpus"))) == reserved
    assert reserved and reserved <= online

    # rule 5: reserved-memory
    reservation = kubelet_flag(kubelet, "reserved-memory")
    if options["memory_manager_policy"] == "Static":
        want = reservation_mib(options)
        assert "memory.available<%s" % options["eviction_hard"]["memory.available"] in kubelet_flag(kubelet, "eviction-hard")
        per_node = {}
        for entry in reservation.split(";"):
            node, dummy, kinds = entry.partition(":")
            kind, dummy, quantity = kinds.partition("=")
            assert kind == "memory", entry
            assert "," not in quantity and quantity.endswith("Mi") and quantity[:-2].isdigit(), entry
            assert int(node) not in per_node
            per_node[int(node)] = int(quantity[:-2])
        assert all(v > 0 for v in per_node.values())
        assert sum(per_node.values()) == want
        holders = set(n for n, c in counts.items() if c)
        assert set(per_node) <= holders and set(per_node) <= set(machine["node_ids"])
        assert all(per_node[n] <= machine["memory_mib"][n] for n in per_node)
        assert plan["reserved_memory"] == dict((str(n), "%dMi" % v) for n, v in sorted(per_node.items()))
    else:
        assert reservation is None and plan["reserved_memory"] == {}
    assert "hugepages" not in (reservation or "")

    # rule 6: hugepages per node, never on CPU-less nodes, never plain hugepages=N
    pages = dict((int(n), c) for n, c in plan["hugepages"]["per_node"].items())
    assert set(pages) <= set(machine["cpu_nodes"])
    if options["hugepages_per_node"]:
        assert pages == dict((n, options["hugepages_per_node"]) for n in hugepage_targets(machine, options))
        page_mib = HUGEPAGE_MIB[options["hugepages_size"]]
        for n, c in pages.items():
            assert c * page_mib + int(plan["reserved_memory"].get(str(n), "0Mi")[:-2]) <= machine["memory_mib"][n]
    else:
        assert pages == {}
    hp = kernel_arg(kernel, "hugepages")
    if pages:
        new_kernel = machine["kernel"].startswith("6.")
        method = options["hugepages_method"]
        assert plan["hugepages"]["method"] == ("cmdline" if method == "cmdline" or (method == "auto" and new_kernel)
                                               else "runtime")
    if plan["hugepages"]["method"] == "cmdline":
        assert kernel_arg(kernel, "hugepagesz") == kernel_arg(kernel, "default_hugepagesz") == options["hugepages_size"]
        assert dict((int(n), int(c)) for n, c in (p.split(":") for p in hp.split(","))) == pages
    else:
        assert hp is None and kernel_arg(kernel, "hugepagesz") is None

    # rule 7: more than 8 NUMA nodes, CPU-less ones too
    option = kubelet_flag(kubelet, "topology-manager-policy-options")
    nodes = len(machine["node_ids"])
    if nodes > 8 and options["topology_manager_policy"] != "none":
        assert option == "max-allowable-numa-nodes=%d" % nodes
    else:
        assert option is None

    # rule 8: single-numa-node -> full-pcpus-only
    full = kubelet_flag(kubelet, "cpu-manager-policy-options")
    if static and options["topology_manager_policy"] == "single-numa-node":
        assert full == "full-pcpus-only=true"
    else:
        assert full is None
    assert kubelet_flag(kubelet, "topology-manager-scope") == options["topology_manager_scope"]

    # managed args appear once each
    for args in (kubelet, kernel):
        names = [a.split("=", 1)[0] for a in args]
        assert len(names) == len(set(names)), args

    # and the kubelet's own checks
    assert kubelet_rules.check(kubelet, kernel, topology) == []


def check_refusal(machine, options, err):
    message = str(err)
    assert err.rule in KNOWN_RULES, message
    assert message.startswith(err.rule + ": ") and len(message) > len(err.rule) + 10
    if err.rule == "reserved-cores":
        assert cores_refusal_expected(machine, options), message
    elif err.rule == "numa-node-limit":
        assert len(machine["node_ids"]) > 8 and options["kubernetes_version"] == "1.30", message
    elif err.rule == "many-numa-nodes":
        assert len(machine["node_ids"]) > 16 and not opted_out(options), message
        assert "2^%d = %d masks" % (len(machine["node_ids"]), 2 ** len(machine["node_ids"])) in message, message
    elif err.rule == "hugepages":
        need = options["hugepages_per_node"] * HUGEPAGE_MIB[options["hugepages_size"]]
        targets = hugepage_targets(machine, options)
        reserve = reservation_mib(options) if options["memory_manager_policy"] == "Static" else 0
        assert need and (not targets or any(need > machine["memory_mib"][n] - reserve for n in targets)), message
    elif err.rule == "pod-shapes":
        assert options.get("pod_shapes"), message
    elif err.rule == "reserved-memory":
        assert options["memory_manager_policy"] == "Static", message
        assert min(machine["memory_mib"][n] for n in machine["cpu_nodes"]) < reservation_mib(options), message
    else:
        raise AssertionError("unexpected refusal for valid options on a readable machine: %s" % message)


def opted_out(options):
    """Rule 7 above 16 NUMA nodes: planned only with NUMA alignment off, on the operator's word."""
    return (options["allow_many_numa_nodes"] and options["topology_manager_policy"] == "none"
            and options["memory_manager_policy"] == "None")


@st.composite
def cases(draw):
    spec_kwargs = draw(machines())
    return spec_kwargs, draw(intents(spec_kwargs["sockets"] * spec_kwargs["nodes_per_socket"]))


@SETTINGS
@given(case=cases())
def test_every_plan_keeps_every_rule(case):
    spec_kwargs, options = case
    spec = gen_sysfs.make_spec(**spec_kwargs)
    machine = describe(spec)
    with tempfile.TemporaryDirectory(prefix="rke2-numa-prop-", dir=FAST_TMP) as root:
        topology = read_topology(gen_sysfs.write_tree(spec, root + "/fs"))
    try:
        plan = make_plan(topology, **options)
    except PlanError as err:
        event("refused: %s" % err.rule)
        check_refusal(machine, options, err)
        return
    event("planned")
    assert not cores_refusal_expected(machine, options)
    assert not (len(machine["node_ids"]) > 8 and options["kubernetes_version"] == "1.30"
                and options["topology_manager_policy"] != "none")
    assert len(machine["node_ids"]) <= 16 or opted_out(options)
    assert any("NUMA alignment of pods is off" in w for w in plan["warnings"]) == (len(machine["node_ids"]) > 16)
    check_plan(machine, topology, options, plan)
    assert make_plan(topology, **options) == plan  # deterministic


@settings(max_examples=300, deadline=None)
@given(
    total_mib=st.integers(1, 1 << 20),
    nodes=st.sets(st.integers(0, 31), min_size=1, max_size=24),
)
def test_split_reserved_memory_is_exact(total_mib, nodes):
    memory = dict((n, 1 << 50) for n in range(32))
    out = split_reserved_memory(total_mib * MIB, nodes, memory)
    assert sum(out.values()) == total_mib * MIB
    assert set(out) <= nodes
    assert all(v > 0 and v % MIB == 0 for v in out.values())
    assert max(out.values()) - min(out.values()) <= MIB  # as even as whole MiB allow
    assert len(out) == min(len(nodes), total_mib)


# ------------------------------------------------------------------ odd input: a refusal, never a traceback

_SMALL_TOPOLOGY = []


def _small_topology():
    if not _SMALL_TOPOLOGY:
        spec = gen_sysfs.make_spec(sockets=2, cores_per_socket=4, threads=2, gpus_per_node=1)
        with tempfile.TemporaryDirectory(prefix="rke2-numa-prop-", dir=FAST_TMP) as root:
            _SMALL_TOPOLOGY.append(read_topology(gen_sysfs.write_tree(spec, root + "/fs")))
    return _SMALL_TOPOLOGY[0]


_FLAG_NAMES = ["reserved-cpus", "reserved-memory", "eviction-hard", "kube-reserved", "topology-manager-policy-options",
               "cpu-manager-policy", "memory-manager-policy", "topology-manager-policy", "max-pods"]
_TEXT = st.text(alphabet=st.sampled_from(list("0123456789-,;:=<%.abcGiMx /")), max_size=30)


@settings(max_examples=300, deadline=None)
@given(
    extra=st.lists(st.one_of(st.builds(lambda n, v: "%s=%s" % (n, v), st.sampled_from(_FLAG_NAMES), _TEXT), st.text(max_size=20)),
                   max_size=3),
    labels=st.lists(st.text(max_size=20), max_size=2),
    taints=st.lists(st.text(max_size=20), max_size=2),
    version=st.one_of(st.text(max_size=12), st.floats(allow_nan=False), st.integers(), st.none()),
)
def test_odd_input_is_refused_by_a_rule_never_raised(extra, labels, taints, version):
    try:
        plan = make_plan(_small_topology(), extra_kubelet_args=extra, node_labels=labels, node_taints=taints,
                         kubernetes_version=version)
    except PlanError as err:
        assert err.rule in KNOWN_RULES | {"kubelet-rules"}, str(err)
        return
    # what is planned the kubelet accepts, extra args included
    assert kubelet_rules.check(plan["kubelet_args"], plan["kernel_args"], _small_topology()) == []
