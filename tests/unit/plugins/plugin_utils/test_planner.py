# -*- coding: utf-8 -*-
"""The planner, rule by rule (docs/ARCHITECTURE.md "Where a rule lives"), then the refusals,
then whole plans of the sample GPU servers checked the way the kubelet checks them."""

from __future__ import annotations

import json

import copy

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import format_cpulist, parse_cpulist
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import kubelet_rules
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import (
    MANAGED_KERNEL_ARGS,
    PlanError,
    apply_extra_args,
    cpu_manager_args,
    fingerprint,
    fit_pod_shapes,
    host_view,
    isolated_cpus,
    isolation_kernel_args,
    make_plan,
    memory_reservation_total,
    numa_tables,
    parse_version,
    pick_reserved_cpus,
    plan_hugepages,
    reserved_core_counts,
    split_reserved_memory,
    plan_version,
    topology_manager_args,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import GIB, MIB

from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs
from ansible_collections.maitred.rke2_numa.tests.fixtures.hwloc_dumps import HWLOC_DUMPS

KB_PER_GB = gen_sysfs.KB_PER_GB
DEFAULT_TOTAL = 2548 * MIB  # 1Gi kube-reserved + 1Gi system-reserved + 500Mi memory.available
# The small machine most tests use: 2 sockets x 4 cores x SMT2, one node per socket,
# 1 GPU per node, 64 GiB per node. Linear numbering: node 0 = 0-3,8-11, node 1 = 4-7,12-15.
SMALL = {"sockets": 2, "cores_per_socket": 4, "threads": 2, "gpus_per_node": 1}


@pytest.fixture(scope="module")
def machine(tmp_path_factory):
    """Return a function: make_spec keywords -> topology as read back from a written tree (cached)."""
    base = tmp_path_factory.mktemp("machines")
    cache = {}

    def build(hugepage_sizes=None, **kwargs):
        key = repr((hugepage_sizes, sorted(kwargs.items())))
        if key not in cache:
            spec = gen_sysfs.make_spec(**kwargs)
            if hugepage_sizes is not None:
                spec["hugepage_sizes"] = list(hugepage_sizes)
            cache[key] = read_topology(gen_sysfs.write_tree(spec, str(base / ("m%d" % len(cache)))))
        return copy.deepcopy(cache[key])

    return build


@pytest.fixture(scope="module")
def view(machine):
    """Return a function: make_spec keywords -> the planner's host_view of that machine."""
    return lambda **kwargs: host_view(machine(**kwargs))


def spec_cores(**kwargs):
    """The sibling groups of a make_spec machine, straight from the spec (online CPUs only)."""
    spec = gen_sysfs.make_spec(**kwargs)
    offline = set(spec["offline"])
    return [sorted(set(c["cpus"]) - offline) for c in spec["cores"] if set(c["cpus"]) - offline]


def refused(fn, *args, **kwargs):
    with pytest.raises(PlanError) as info:
        fn(*args, **kwargs)
    return info.value


# ====================================================================== rule 2: how many cores where


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        (SMALL, {0: 1, 1: 1}),
        (dict(SMALL, nodes_per_socket=2), {0: 1, 1: 1, 2: 1, 3: 1}),
        (dict(SMALL, sockets=1), {0: 1}),
        (dict(SMALL, gpus_per_node=0), {0: 1, 1: 1}),
    ],
)
def test_reserved_core_counts_default_one_per_cpu_node(view, kwargs, expected):
    assert reserved_core_counts(view(**kwargs)) == expected


@pytest.mark.parametrize(
    "gpus, total, expected",
    [
        # the GPU-less node 1 fills up first (to cores - 1), then node 2 with one GPU
        ({0: 2, 1: 0, 2: 1, 3: 4}, 5, {0: 1, 1: 2, 2: 1, 3: 1}),
        ({0: 2, 1: 0, 2: 1, 3: 4}, 6, {0: 1, 1: 3, 2: 1, 3: 1}),
        ({0: 2, 1: 0, 2: 1, 3: 4}, 7, {0: 1, 1: 3, 2: 2, 3: 1}),
        ({0: 2, 1: 0, 2: 1, 3: 4}, 9, {0: 2, 1: 3, 2: 3, 3: 1}),
        ({0: 2, 1: 0, 2: 1, 3: 4}, 12, {0: 3, 1: 3, 2: 3, 3: 3}),
        # equal GPUs: spread evenly, lowest id first
        ({0: 1, 1: 1, 2: 1, 3: 1}, 6, {0: 2, 1: 2, 2: 1, 3: 1}),
    ],
)
def test_reserved_core_counts_extras_go_to_fewest_gpu_nodes(view, gpus, total, expected):
    v = view(sockets=2, cores_per_socket=8, threads=2, nodes_per_socket=2, gpus_per_node=gpus)
    assert reserved_core_counts(v, total=total) == expected


def test_reserved_core_counts_none_on_cpuless_nodes(view):
    v = view(cpuless_nodes=3, cpuless_memory_kb=96 * KB_PER_GB, **SMALL)
    assert v["node_ids"] == [0, 1, 2, 3, 4]
    assert reserved_core_counts(v) == {0: 1, 1: 1}
    assert reserved_core_counts(v, total=5) == {0: 3, 1: 2}
    err = refused(reserved_core_counts, v, per_node={3: 1})
    assert err.rule == "reserved-cores"
    assert "NUMA node 3, which has no CPUs (CPU nodes: 0, 1)" in str(err)


@pytest.mark.parametrize(
    "gpus, total, expected",
    [
        # the boot CPU's core (CPU 0, node 0) is reserved whatever the GPUs; the rest concentrates
        ({0: 4, 1: 2}, None, {0: 1, 1: 0}),
        ({0: 4, 1: 2}, 3, {0: 1, 1: 2}),
        ({0: 4, 1: 2}, 4, {0: 1, 1: 3}),  # node 1 keeps one core to isolate; the rest spills over
        ({0: 2, 1: 2}, 2, {0: 2, 1: 0}),
    ],
)
def test_reserved_core_counts_split_false_concentrates(view, gpus, total, expected):
    v = view(sockets=2, cores_per_socket=4, threads=2, gpus_per_node=gpus)
    assert reserved_core_counts(v, total=total, split=False) == expected


@pytest.mark.parametrize(
    "per_node, split, expected",
    [
        ({0: 2}, True, {0: 2, 1: 1}),
        ({1: 3}, True, {0: 1, 1: 3}),
        ({0: 2}, False, {0: 2, 1: 0}),
        ({1: 1}, False, {0: 1, 1: 1}),  # node 0 holds the boot CPU: one core unless told otherwise
    ],
)
def test_reserved_core_counts_per_node(view, per_node, split, expected):
    assert reserved_core_counts(view(**SMALL), per_node=per_node, split=split) == expected


@pytest.mark.parametrize(
    "kwargs, fragments",
    [
        ({"per_node": {0: 4}}, ["4 reserved cores on NUMA node 0, which has only 4 cores"]),
        ({"per_node": {1: 9}}, ["9 reserved cores on NUMA node 1, which has only 4 cores"]),
        ({"per_node": {0: 0}}, ["NUMA node 0 has CPUs but 0 reserved cores"]),
        ({"per_node": {0: 0, 1: 0}, "split": False}, ["reserved_cores_per_node gives NUMA node 0 0 cores",
                                                      "holds CPU 0, the boot CPU"]),
        ({"per_node": {0: 0, 1: 1}, "split": False}, ["reserved_cores_per_node gives NUMA node 0 0 cores"]),
        ({"total": 1}, ["reserved_cores=1 is less than the 2 NUMA nodes with CPUs (0, 1)"]),
        ({"total": 7}, ["reserved_cores=7 leaves no core to isolate", "4 on node 0, 4 on node 1"]),
        ({"total": 7, "split": False}, ["reserved_cores=7 leaves no core to isolate"]),
    ],
)
def test_reserved_core_counts_refusals(view, kwargs, fragments):
    err = refused(reserved_core_counts, view(**SMALL), **kwargs)
    assert err.rule == "reserved-cores"
    for fragment in fragments:
        assert fragment in str(err)


def test_reserved_core_counts_refuses_a_node_of_one_core(view):
    err = refused(reserved_core_counts, view(sockets=2, cores_per_socket=2, nodes_per_socket=2, threads=2))
    assert err.rule == "reserved-cores"
    assert "1 reserved cores on NUMA node 0, which has only 1 cores" in str(err)


# ====================================================================== rule 1: whole cores


@pytest.mark.parametrize(
    "kwargs, counts, expected",
    [
        # linear: core 0 of socket 0 = 0,8; core 0 of socket 1 = 4,12
        (SMALL, {0: 1, 1: 1}, "0,4,8,12"),
        (SMALL, {0: 2, 1: 1}, "0-1,4,8-9,12"),
        # round-robin (Dell): 0 and 1 are different sockets; the core of 0 is 0,8
        (dict(SMALL, numbering="roundrobin"), {0: 1, 1: 0}, "0,8"),
        # the boot CPU's core comes along even when its node is given none
        (dict(SMALL, numbering="roundrobin"), {0: 0, 1: 1}, "0-1,8-9"),
        (dict(SMALL, numbering="roundrobin"), {0: 2, 1: 0}, "0,2,8,10"),
        # two whole cores, one per socket, that happen to print as 0-1
        (dict(SMALL, numbering="roundrobin"), {0: 1, 1: 1}, "0-1,8-9"),
        # compact (siblings adjacent): here 0-1 is one core
        (dict(SMALL, numbering="compact"), {0: 1, 1: 0}, "0-1"),
        (dict(SMALL, numbering="compact"), {0: 1, 1: 1}, "0-1,8-9"),
        (dict(SMALL, threads=1), {0: 1, 1: 1}, "0,4"),
        # an offline sibling: the core of 0 is just 0
        (dict(SMALL, offline=(8,)), {0: 1, 1: 1}, "0,4,12"),
    ],
)
def test_pick_reserved_cpus(view, kwargs, counts, expected):
    assert format_cpulist(pick_reserved_cpus(view(**kwargs), counts)) == expected


@pytest.mark.parametrize("numbering", ["linear", "roundrobin", "compact"])
@pytest.mark.parametrize("counts", [{0: 1, 1: 0}, {0: 1, 1: 1}, {0: 3, 1: 2}])
def test_pick_reserved_cpus_takes_whole_cores_only(view, numbering, counts):
    kwargs = dict(SMALL, numbering=numbering)
    reserved = pick_reserved_cpus(view(**kwargs), counts)
    cores = spec_cores(**kwargs)
    taken = [c for c in cores if set(c) & reserved]
    assert all(set(c) <= reserved for c in taken)
    assert sum(len(c) for c in taken) == len(reserved) == 2 * sum(counts.values())


@pytest.mark.parametrize("split", [True, False])
def test_round_robin_never_reserves_0_1_as_one_core(view, machine, split):
    kwargs = dict(SMALL, numbering="roundrobin")
    v = view(**kwargs)
    reserved = pick_reserved_cpus(v, reserved_core_counts(v, split=split))
    assert {0, 1} != reserved
    assert reserved == ({0, 1, 8, 9} if split else {0, 8})
    plan = make_plan(machine(**kwargs), split_reserved=split)
    assert plan["reserved_cpus"] == ("0-1,8-9" if split else "0,8")
    tables = dict((t["node"], t["reserved_cpus"]) for t in plan["numa_tables"])
    assert tables == ({0: "0,8", 1: "1,9"} if split else {0: "0,8", 1: ""})


# ====================================================================== rule 3: isolation


@pytest.mark.parametrize(
    "online, reserved, expected",
    [
        ({0, 1, 2, 3}, {0}, {1, 2, 3}),
        ({0, 1, 2, 3}, set(), {0, 1, 2, 3}),
        ({0, 1, 2, 3}, {0, 1, 2, 3}, set()),
        ({0, 2, 4}, {0, 1}, {2, 4}),  # 1 is not online: not isolated either
        (range(16), [0, 4, 8, 12], set(range(16)) - {0, 4, 8, 12}),
    ],
)
def test_isolated_cpus_is_the_complement(online, reserved, expected):
    isolated = isolated_cpus(online, reserved)
    assert isolated == expected
    assert not isolated & set(reserved)


@pytest.mark.parametrize(
    "flags, isolcpus",
    [
        (["managed_irq"], "isolcpus=managed_irq,1-3,5-7"),
        (["managed_irq", "domain"], "isolcpus=managed_irq,domain,1-3,5-7"),
        ([], "isolcpus=1-3,5-7"),
    ],
)
def test_isolation_kernel_args(flags, isolcpus):
    args = isolation_kernel_args({1, 2, 3, 5, 6, 7}, {0, 4}, flags)
    assert args == [isolcpus, "nohz_full=1-3,5-7", "rcu_nocbs=1-3,5-7", "irqaffinity=0,4"]
    values = dict(a.split("=", 1) for a in args)
    assert values["isolcpus"].split(",")[len(flags):] == values["nohz_full"].split(",") == values["rcu_nocbs"].split(",")


# ====================================================================== rules 4 and 8: CPU manager


@pytest.mark.parametrize(
    "policy, topology_policy, expected",
    [
        ("static", "single-numa-node",
         ["cpu-manager-policy=static", "cpu-manager-policy-options=full-pcpus-only=true", "reserved-cpus=0,4,8,12"]),
        ("static", "restricted", ["cpu-manager-policy=static", "reserved-cpus=0,4,8,12"]),
        ("static", "best-effort", ["cpu-manager-policy=static", "reserved-cpus=0,4,8,12"]),
        ("none", "single-numa-node", ["cpu-manager-policy=none", "reserved-cpus=0,4,8,12"]),
    ],
)
def test_cpu_manager_args(policy, topology_policy, expected):
    assert cpu_manager_args(policy, topology_policy, {0, 4, 8, 12}) == expected


@pytest.mark.parametrize(
    "options, full_pcpus, scope",
    [
        ({}, True, "pod"),
        ({"topology_manager_policy": "restricted"}, False, "pod"),
        ({"topology_manager_scope": "container"}, True, "container"),
        ({"cpu_manager_policy": "none"}, False, "pod"),
    ],
)
def test_single_numa_node_implies_full_pcpus_only(machine, options, full_pcpus, scope):
    args = make_plan(machine(**SMALL), **options)["kubelet_args"]
    assert ("cpu-manager-policy-options=full-pcpus-only=true" in args) is full_pcpus
    assert "topology-manager-scope=%s" % scope in args


# ====================================================================== rule 5: reserved memory


@pytest.mark.parametrize(
    "kube, system, eviction, total",
    [
        ({"memory": "1Gi"}, {"memory": "1Gi"}, {"memory.available": "500Mi"}, DEFAULT_TOTAL),
        ({}, {}, {"memory.available": "100Mi"}, 100 * MIB),
        ({"memory": "2Gi", "cpu": "1"}, {}, {"memory.available": "1Gi"}, 3 * GIB),
        ({"memory": "1G"}, {"memory": "512Mi"}, {"memory.available": "0"}, 10 ** 9 + 512 * MIB),
    ],
)
def test_memory_reservation_total(kube, system, eviction, total):
    assert memory_reservation_total(kube, system, eviction) == total


@pytest.mark.parametrize(
    "total, nodes, expected",
    [
        (DEFAULT_TOTAL, [0, 1], {0: 1274 * MIB, 1: 1274 * MIB}),
        (DEFAULT_TOTAL, [0], {0: DEFAULT_TOTAL}),
        (DEFAULT_TOTAL, [1], {1: DEFAULT_TOTAL}),
        # 2548 MiB over 8 nodes: 4 x 319 + 4 x 318, the extra MiB to the lowest ids
        (DEFAULT_TOTAL, range(8), dict([(n, 319 * MIB) for n in range(4)] + [(n, 318 * MIB) for n in range(4, 8)])),
        (DEFAULT_TOTAL, [3, 1], {1: 1274 * MIB, 3: 1274 * MIB}),
        # fewer MiB than nodes: no zero entries
        (MIB, [0, 1], {0: MIB}),
        (3 * MIB, [0, 1, 2, 3, 4], {0: MIB, 1: MIB, 2: MIB}),
    ],
)
def test_split_reserved_memory(total, nodes, expected):
    memory = dict((n, 64 * GIB) for n in range(8))
    out = split_reserved_memory(total, nodes, memory)
    assert out == expected
    assert sum(out.values()) == total
    assert all(v > 0 and v % MIB == 0 for v in out.values())
    assert set(out) <= set(nodes)


@pytest.mark.parametrize(
    "total, memory, fragments",
    [
        (DEFAULT_TOTAL + 1, {0: 64 * GIB}, ["= 2671771649 bytes, not a whole number of MiB"]),
        (10 ** 9, {0: 64 * GIB}, ["= 1000000000 bytes"]),
        (4 * GIB, {0: GIB}, ["NUMA node 0 would reserve 4.0Gi but has only 1.0Gi"]),
        (DEFAULT_TOTAL, {0: 0}, ["NUMA node 0 would reserve 2.5Gi but has only 0Mi"]),
        # the Static memory manager refuses to start with nothing reserved
        (0, {0: 64 * GIB}, ["= 0 bytes", "you should specify the system reserved memory"]),
    ],
)
def test_split_reserved_memory_refusals(total, memory, fragments):
    err = refused(split_reserved_memory, total, list(memory), memory)
    assert err.rule == "reserved-memory"
    for fragment in fragments:
        assert fragment in str(err)


def test_reserved_memory_goes_to_nodes_holding_reserved_cpus(machine):
    plan = make_plan(machine(**SMALL), split_reserved=False, reserved_cores=2)
    assert plan["reserved_cores_per_node"] == {"0": 2, "1": 0}
    assert plan["reserved_memory"] == {"0": "2548Mi"}
    assert "reserved-memory=0:memory=2548Mi" in plan["kubelet_args"]


@pytest.mark.parametrize(
    "options, reserved_memory, eviction",
    [
        ({}, "0:memory=1274Mi;1:memory=1274Mi", "memory.available<500Mi"),
        ({"eviction_hard": {"memory.available": "1Gi"}}, "0:memory=1536Mi;1:memory=1536Mi", "memory.available<1Gi"),
        ({"kube_reserved": {"memory": "2Gi", "cpu": "1"}, "system_reserved": {}},
         "0:memory=1274Mi;1:memory=1274Mi", "memory.available<500Mi"),
    ],
)
def test_memory_flags(machine, options, reserved_memory, eviction):
    args = make_plan(machine(**SMALL), **options)["kubelet_args"]
    assert "reserved-memory=%s" % reserved_memory in args
    hard = [a for a in args if a.startswith("eviction-hard=")]
    assert len(hard) == 1
    signals = hard[0].split("=", 1)[1].split(",")
    # every signal set, so RKE2's defaults for the others do not fall to zero
    assert sorted(s.split("<")[0] for s in signals) == [
        "imagefs.available", "imagefs.inodesFree", "memory.available", "nodefs.available", "nodefs.inodesFree"]
    assert eviction in signals


def test_memory_policy_none_sets_no_reserved_memory(machine):
    plan = make_plan(machine(**SMALL), memory_manager_policy="None")
    assert plan["reserved_memory"] == {}
    assert not [a for a in plan["kubelet_args"] if a.startswith("reserved-memory=")]
    assert "memory-manager-policy=None" in plan["kubelet_args"]


# ====================================================================== rule 6: hugepages


@pytest.mark.parametrize(
    "size, per_node, which, pages, args",
    [
        ("1G", 4, "gpu", {0: 4, 1: 4}, ["default_hugepagesz=1G", "hugepagesz=1G", "hugepages=0:4,1:4"]),
        ("2M", 1024, "all", {0: 1024, 1: 1024}, ["default_hugepagesz=2M", "hugepagesz=2M", "hugepages=0:1024,1:1024"]),
        ("1G", 8, [1], {1: 8}, ["default_hugepagesz=1G", "hugepagesz=1G", "hugepages=1:8"]),
        ("1G", 0, "all", {}, []),
    ],
)
def test_plan_hugepages_per_node_cmdline(view, size, per_node, which, pages, args):
    got_pages, method, got_args = plan_hugepages(view(**SMALL), size, per_node, which, "auto", {})
    assert got_pages == pages
    assert got_args == args
    assert method == ("cmdline" if per_node else None)
    assert not [a for a in got_args if a.startswith("hugepages=") and ":" not in a]  # never plain hugepages=N


@pytest.mark.parametrize(
    "kernel, method, expected",
    [
        ("6.8.0-45-generic", "auto", "cmdline"),
        ("5.16.0", "auto", "cmdline"),
        ("5.15.0-105-generic", "auto", "runtime"),
        ("4.18.0-553.el8_10.x86_64", "auto", "runtime"),
        ("6.8.0-45-generic", "runtime", "runtime"),
        ("4.18.0-553.el8_10.x86_64", "cmdline", "cmdline"),
    ],
)
def test_plan_hugepages_method(view, kernel, method, expected):
    pages, used, args = plan_hugepages(view(kernel=kernel, **SMALL), "1G", 2, "all", method, {})
    assert pages == {0: 2, 1: 2}
    assert used == expected
    assert (args != []) is (expected == "cmdline")


def test_runtime_hugepages_warn_in_the_plan(machine):
    plan = make_plan(machine(kernel="5.15.0-105-generic", **SMALL), hugepages_per_node=2)
    assert plan["hugepages"] == {"size": "1G", "size_kb": 1048576, "resource": "hugepages-1Gi", "method": "runtime",
                                 "per_node": {"0": 2, "1": 2}}
    assert not [a for a in plan["kernel_args"] if a.startswith(("hugepages", "default_hugepagesz"))]
    assert any("kernel 5.15.0-105-generic < 5.16" in w for w in plan["warnings"])


def test_plan_hugepages_never_on_cpuless_nodes(view):
    v = view(cpuless_nodes=2, cpuless_memory_kb=96 * KB_PER_GB, **SMALL)
    for which in ("all", "gpu"):
        pages, _method, args = plan_hugepages(v, "1G", 4, which, "auto", {})
        assert pages == {0: 4, 1: 4}
        assert args[-1] == "hugepages=0:4,1:4"
    err = refused(plan_hugepages, v, "1G", 4, [0, 2], "auto", {})
    assert err.rule == "hugepages"
    assert "NUMA node 2 has no CPUs" in str(err)


@pytest.mark.parametrize(
    "kwargs, per_node, which, reserved, fragments",
    [
        # 8 GiB node, 1274 MiB reserved: 6 x 1G fit, 7 do not
        ({"memory_per_node_kb": 8 * KB_PER_GB}, 7, "all", {0: 1274 * MIB, 1: 1274 * MIB},
         ["7 x 1G hugepages = 7.0Gi do not fit NUMA node 0: 8.0Gi of memory, 1.2Gi reserved, 6.8Gi left"]),
        ({}, 65, "all", {}, ["65 x 1G hugepages = 65.0Gi do not fit NUMA node 0: 64.0Gi of memory, 0Mi reserved, 64.0Gi left"]),
        ({"gpus_per_node": 0}, 1, "gpu", {}, ["hugepages_nodes=gpu but no NUMA node with CPUs has a GPU"]),
        ({}, 1, [7], {}, ["hugepages_nodes names NUMA node 7, which does not exist"]),
        ({"hugepage_sizes": [2048, 524288, 16777216]}, 1, "all", {},
         ["this kernel offers hugepages-2Mi, hugepages-512Mi, hugepages-16Gi (2048, 524288, 16777216 kB), not 1G "
          "(hugepages-1Gi, 1048576 kB)"]),
    ],
)
def test_plan_hugepages_refusals(view, kwargs, per_node, which, reserved, fragments):
    err = refused(plan_hugepages, view(**dict(SMALL, **kwargs)), "1G", per_node, which, "auto", reserved)
    assert err.rule == "hugepages"
    for fragment in fragments:
        assert fragment in str(err)


def test_plan_hugepages_fit_after_reservations(view):
    v = view(memory_per_node_kb=8 * KB_PER_GB, **SMALL)
    pages, _method, _args = plan_hugepages(v, "1G", 6, "all", "auto", {0: 1274 * MIB, 1: 1274 * MIB})
    assert pages == {0: 6, 1: 6}


def test_unsupported_hugepage_size_is_an_option_error(machine):
    err = refused(make_plan, machine(**SMALL), hugepages_size="16G", hugepages_per_node=1)
    assert err.rule == "options"
    assert "hugepages_size must be one of 1G, 2M, got '16G'" in str(err)


def test_hugepages_stay_out_of_reserved_memory(machine):
    plan = make_plan(machine(**SMALL), hugepages_per_node=8)
    reserved = [a for a in plan["kubelet_args"] if a.startswith("reserved-memory=")]
    assert reserved == ["reserved-memory=0:memory=1274Mi;1:memory=1274Mi"]
    assert "hugepages=0:8,1:8" in plan["kernel_args"]


# ====================================================================== rules 7 and 8: topology manager


@pytest.mark.parametrize(
    "policy, nodes, version, expected",
    [
        ("single-numa-node", 2, (1, 33), []),
        ("single-numa-node", 8, (1, 30), []),
        ("single-numa-node", 9, (1, 31), ["topology-manager-policy-options=max-allowable-numa-nodes=9"]),
        ("restricted", 16, (1, 33), ["topology-manager-policy-options=max-allowable-numa-nodes=16"]),
        ("none", 9, (1, 30), []),
        ("none", 9, (1, 33), []),
    ],
)
def test_topology_manager_args(policy, nodes, version, expected):
    args = topology_manager_args(policy, "pod", nodes, plan_version("%d.%d" % version))
    assert args == ["topology-manager-policy=%s" % policy, "topology-manager-scope=pod"] + expected


@pytest.mark.parametrize("policy", ["single-numa-node", "best-effort"])
def test_topology_manager_refuses_9_nodes_before_1_31(policy):
    err = refused(topology_manager_args, policy, "pod", 9, plan_version("1.30"))
    assert err.rule == "numa-node-limit"
    for fragment in ("this host has 9 NUMA nodes", "refuses more than 8",
                     "unsupported on machines with more than 8 NUMA Nodes", "kubernetes_version is 1.30"):
        assert fragment in str(err)


def test_cpuless_nodes_count_toward_the_limit(machine):
    topo = machine(cpuless_nodes=7, **SMALL)  # 2 CPU nodes + 7 CPU-less = 9
    plan = make_plan(topo, kubernetes_version="v1.31.4+rke2r1")
    assert "topology-manager-policy-options=max-allowable-numa-nodes=9" in plan["kubelet_args"]
    err = refused(make_plan, topo, kubernetes_version="1.30")
    assert err.rule == "numa-node-limit"
    assert "9 NUMA nodes" in str(err)
    plan = make_plan(machine(cpuless_nodes=6, **SMALL))
    assert not [a for a in plan["kubelet_args"] if a.startswith("topology-manager-policy-options=")]


# A GB200 tray in NUMA mode: 2 Grace CPUs (one NUMA node each) and 4 Blackwell GPUs, each GPU's
# memory exposed as 8 CPU-less NUMA nodes (the first holds its HBM, the rest wait for MIG): 34 nodes.
GB200 = {"sockets": 2, "cores_per_socket": 4, "threads": 1, "gpus_per_node": 2, "gpu_memory_nodes": 8,
         "gpu_memory_kb": 180 * KB_PER_GB}
OPT_OUT = {"allow_many_numa_nodes": True, "topology_manager_policy": "none", "memory_manager_policy": "None"}


def _renumbered(topo, old, new):
    """The host with NUMA node ``old`` named ``new`` (sparse ids: firmware that numbers nodes per socket or per board)."""
    topo = json.loads(json.dumps(topo))
    for node in topo["numa_nodes"]:
        if node["id"] == old:
            node["id"] = new
    for device in topo.get("pci_devices") or []:
        if device.get("numa_node") == old:
            device["numa_node"] = new
    return topo


def test_a_numa_node_id_above_63_is_refused_even_on_a_two_node_host(machine):
    topo = _renumbered(machine(sockets=2, cores_per_socket=4, threads=2, gpus_per_node=1), 1, 64)
    err = refused(make_plan, topo)
    assert err.rule == "numa-node-id"
    assert "NUMA node id 64: the kubelet's NUMA affinity masks are 64 bits wide" in str(err)
    assert "topology_manager_policy: none and memory_manager_policy: None" in str(err)
    assert refused(make_plan, topo, topology_manager_policy="none").rule == "numa-node-id"  # Memory Manager Static still aligns
    plan = make_plan(topo, topology_manager_policy="none", memory_manager_policy="None")
    assert [w for w in plan["warnings"] if w.startswith("NUMA node id 64 above 63: planned with NUMA alignment of pods off")]
    assert make_plan(_renumbered(topo, 64, 63))["numa_tables"][1]["node"] == 63


def test_many_numa_nodes_are_refused_naming_the_cost_and_the_ways_out(machine):
    topo = machine(**GB200)
    assert len(topo["numa_nodes"]) == 34
    err = refused(make_plan, topo)
    assert err.rule == "many-numa-nodes"
    for fragment in ("this host has 34 NUMA nodes (2 with CPUs, 32 without)", "more than 16",
                     "2^34 = 17179869184 masks per hint provider", "at every pod admission",
                     "bitmask.IterateBitMasks", "KEP-4622",
                     "32 of these are GPU memory nodes (2-33)", "CDMM", "Coherent Driver-based Memory Management",
                     "topology_manager_policy: none", "memory_manager_policy: None", "allow_many_numa_nodes: true",
                     "NUMA alignment of pods"):
        assert fragment in str(err), (fragment, str(err))
    # not the 1.31 rule: the node count is the problem, whatever the version
    assert refused(make_plan, topo, kubernetes_version="1.30").rule == "many-numa-nodes"


def test_many_numa_nodes_with_the_opt_in_and_policy_none_are_planned_with_a_warning(machine):
    topo = machine(**GB200)
    plan = make_plan(topo, **OPT_OUT)
    assert "topology-manager-policy=none" in plan["kubelet_args"]
    assert "memory-manager-policy=None" in plan["kubelet_args"]
    assert not [a for a in plan["kubelet_args"] if a.startswith("topology-manager-policy-options=")]
    assert kubelet_rules.check(plan["kubelet_args"], plan["kernel_args"], topo) == []
    warning = [w for w in plan["warnings"] if "allow_many_numa_nodes" in w]
    assert len(warning) == 1, plan["warnings"]
    for fragment in ("34 NUMA nodes", "NUMA alignment of pods is off", "32 of them GPU memory nodes", "CDMM"):
        assert fragment in warning[0], (fragment, warning[0])


@pytest.mark.parametrize(
    "options, fragments",
    [
        # the opt-in alone does not change the policy: the explosion would stay
        ({"allow_many_numa_nodes": True}, ["allow_many_numa_nodes takes effect only with topology_manager_policy none",
                                           "single-numa-node"]),
        ({"allow_many_numa_nodes": True, "topology_manager_policy": "best-effort", "memory_manager_policy": "None"},
         ["only with topology_manager_policy none", "best-effort"]),
        # policy none without the opt-in: the operator has not said NUMA alignment may go
        ({"topology_manager_policy": "none", "memory_manager_policy": "None"}, ["allow_many_numa_nodes: true"]),
        # the static Memory Manager enumerates the same masks when the Topology Manager gives it no hint
        ({"allow_many_numa_nodes": True, "topology_manager_policy": "none"},
         ["memory_manager_policy Static", "getDefaultHint", "memory_manager_policy: None"]),
        # an override that brings the Topology Manager back is judged as the kubelet will run it
        (dict(OPT_OUT, extra_kubelet_args=["topology-manager-policy=single-numa-node",
                                           "topology-manager-policy-options=max-allowable-numa-nodes=34"]),
         ["with extra_kubelet_args", "2^34"]),
    ],
    ids=["opt-in-alone", "opt-in-best-effort", "none-without-opt-in", "static-memory-manager", "override"],
)
def test_many_numa_nodes_refusals_name_what_is_missing(machine, options, fragments):
    err = refused(make_plan, machine(**GB200), **options)
    assert err.rule == "many-numa-nodes"
    for fragment in fragments:
        assert fragment in str(err), (fragment, str(err))


@pytest.mark.parametrize("name, nodes, planned", [("fakecpuid1f-64intel64-2p4d2n2c2t", 16, True),
                                                  ("128ia64-17n4s2c", 17, False),
                                                  ("256ia64-64n2s2c", 64, False)])
def test_the_many_numa_nodes_threshold_on_real_machines(hwloc_root, name, nodes, planned):
    topo = read_topology(hwloc_root(name))
    assert len(topo["numa_nodes"]) == nodes
    if planned:
        plan = make_plan(topo)
        assert "topology-manager-policy-options=max-allowable-numa-nodes=%d" % nodes in plan["kubelet_args"]
        return
    err = refused(make_plan, topo)
    assert err.rule == "many-numa-nodes" and "%d NUMA nodes" % nodes in str(err) and "2^%d" % nodes in str(err)
    assert "GPU memory nodes" not in str(err)  # no GPU here: CDMM is named, not recommended for these nodes
    assert make_plan(topo, **OPT_OUT)["kubelet_args"]


def test_gh200_is_planned_as_before(samples):
    # 9 NUMA nodes (CPU + HBM + 7 MIG nodes): above 8, well below 16
    plan = make_plan(samples["grace-hopper"])
    assert "topology-manager-policy-options=max-allowable-numa-nodes=9" in plan["kubelet_args"]
    assert not [w for w in plan["warnings"] if "NUMA nodes" in w]


@pytest.mark.parametrize(
    "text, version",
    [("1.33", (1, 33)), ("v1.31.4+rke2r1", (1, 31)), (" 1.30.0 ", (1, 30)), ("v2.0", (2, 0))],
)
def test_parse_version(text, version):
    assert parse_version(text) == version


@pytest.mark.parametrize("text", ["", "latest", "1", "one.two"])
def test_parse_version_refuses(text):
    err = refused(parse_version, text)
    assert err.rule == "options"
    assert repr(text) in str(err)


# ====================================================================== numa tables


def test_numa_tables(view):
    v = view(cpuless_nodes=1, cpuless_memory_kb=96 * KB_PER_GB, **SMALL)
    reserved_memory = {0: 1274 * MIB, 1: 1274 * MIB}
    tables = numa_tables(v, {0, 8, 4, 12}, reserved_memory, {0: 2}, "1G", True)
    assert [t["node"] for t in tables] == [0, 1, 2]
    t0, t1, t2 = tables
    assert (t0["cpus"], t0["reserved_cpus"], t0["isolated_cpus"], t0["exclusive_cpus"]) == ("0-3,8-11", "0,8", "1-3,9-11", 6)
    assert t0["memory_bytes"] == 64 * GIB
    assert t0["reserved_memory_bytes"] == 1274 * MIB
    assert t0["hugepages_bytes"] == 2 * GIB
    assert t0["allocatable_memory_bytes"] == 64 * GIB - 1274 * MIB - 2 * GIB
    assert t0["largest_pod"] == {"cpu": 6, "memory": "%dMi" % (62 * 1024 - 1274), "hugepages": "2048Mi", "gpus": 1}
    assert len(t0["gpus"]) == 1
    assert (t1["hugepages_bytes"], t1["largest_pod"]["hugepages"]) == (0, "0Mi")
    assert t1["allocatable_memory_bytes"] == 64 * GIB - 1274 * MIB
    # the CPU-less node: memory but no CPUs, nothing reserved
    assert (t2["cpus"], t2["exclusive_cpus"], t2["reserved_memory_bytes"], t2["hugepages_bytes"]) == ("", 0, 0, 0)
    assert t2["allocatable_memory_bytes"] == 96 * GIB
    assert t2["gpus"] == []


def test_numa_tables_full_pcpus_counts_whole_free_cores(view):
    v = view(**SMALL)
    # 0 and 1 reserved: under full-pcpus-only the cores of 0 (0,8) and 1 (1,9) are gone
    assert [t["exclusive_cpus"] for t in numa_tables(v, {0, 1}, {}, {}, "1G", True)] == [4, 8]
    assert [t["exclusive_cpus"] for t in numa_tables(v, {0, 1}, {}, {}, "1G", False)] == [6, 8]


# ====================================================================== pod shapes


def _table(node, cpus, memory_gib, gpus, hugepages_gib=0):
    return {"node": node, "exclusive_cpus": cpus, "allocatable_memory_bytes": memory_gib * GIB,
            "gpus": ["gpu%d.%d" % (node, i) for i in range(gpus)], "hugepages_bytes": hugepages_gib * GIB}


TABLES = [_table(0, 54, 500, 4, 16), _table(1, 54, 500, 4, 16), _table(2, 110, 500, 0)]


def _shape(name="s", cpu=0, memory=0, gpus=0, hugepages=0):
    return {"name": name, "cpu": cpu, "memory": memory, "gpus": gpus, "hugepages": hugepages}


@pytest.mark.parametrize(
    "shape, threads, full_pcpus, single, fits, nodes, copies",  # threads: the kubelet's CPUs per core
    [
        (_shape(cpu=16, memory=64 * GIB, gpus=1), 2, True, True, True, [0, 1], 6),
        (_shape(cpu=16, memory=64 * GIB, gpus=2, hugepages=8 * GIB), 2, True, True, True, [0, 1], 4),
        (_shape(cpu=100, memory=GIB), 2, True, True, True, [2], 1),
        (_shape(cpu=8, gpus=5), 2, True, True, False, [], 0),
        (_shape(cpu=200), 2, True, True, False, [], 0),
        # SMT alignment: 3 CPUs on SMT2 under full-pcpus-only fits nowhere
        (_shape(cpu=3), 2, True, True, False, [], 0),
        (_shape(cpu=3), 2, False, True, True, [0, 1, 2], 18 + 18 + 36),
        (_shape(cpu=3), 1, True, True, True, [0, 1, 2], 18 + 18 + 36),
        (_shape(cpu=3), 0, True, True, True, [0, 1, 2], 18 + 18 + 36),  # no core known: nothing to align to
        # without single-numa-node a pod may span nodes
        (_shape(cpu=200), 2, False, False, True, [], 1),
        (_shape(cpu=300), 2, False, False, False, [], 0),
    ],
)
def test_fit_pod_shapes(shape, threads, full_pcpus, single, fits, nodes, copies):
    (result,) = fit_pod_shapes([shape], TABLES, threads, full_pcpus, single)
    assert (result["fits"], result["nodes"], result["copies"]) == (fits, nodes, copies)
    if full_pcpus and threads > 1 and shape["cpu"] % threads:
        assert "cpu=3 is not a multiple of the kubelet's 2 CPUs per core (full-pcpus-only: SMTAlignmentError)" in result["note"]


def test_pod_shapes_in_the_plan(machine):
    plan = make_plan(machine(**SMALL), pod_shapes=[
        {"name": "trainer", "cpu": 6, "memory": "32Gi", "gpus": 1},
        {"name": "odd", "cpu": 3},
        {"name": "huge", "cpu": 2, "memory": "1Ti"},
    ])
    fits = dict((f["name"], f) for f in plan["pod_shapes"])
    assert (fits["trainer"]["fits"], fits["trainer"]["nodes"], fits["trainer"]["copies"]) == (True, [0, 1], 2)
    assert fits["odd"]["fits"] is False
    assert fits["huge"]["fits"] is False
    assert any("pod shape odd (cpu=3" in w and "SMTAlignmentError" in w for w in plan["warnings"])
    assert any("pod shape huge (cpu=2, memory=1024.0Gi" in w for w in plan["warnings"])


# ====================================================================== pass-through args


def test_apply_extra_args():
    planned = ["cpu-manager-policy=static", "reserved-cpus=0,4"]
    args, overridden = apply_extra_args(planned, ["max-pods=200", "reserved-cpus=0-1", "node-ip=10.0.0.1"])
    assert args == ["cpu-manager-policy=static", "max-pods=200", "reserved-cpus=0-1", "node-ip=10.0.0.1"]
    assert overridden == ["reserved-cpus"]
    assert apply_extra_args(planned, []) == (planned, [])


def test_extra_args_that_are_not_managed_are_appended_quietly(machine):
    plan = make_plan(machine(**SMALL), extra_kubelet_args=["max-pods=200"])
    assert plan["kubelet_args"][-1] == "max-pods=200"
    assert plan["warnings"] == []


def test_overriding_a_managed_flag_warns(machine):
    plan = make_plan(machine(**SMALL), extra_kubelet_args=["topology-manager-scope=container"])
    assert plan["warnings"] == ["extra_kubelet_args replaces the planned topology-manager-scope"]
    assert "topology-manager-scope=container" in plan["kubelet_args"]
    assert "topology-manager-scope=pod" not in plan["kubelet_args"]


def test_an_override_the_kubelet_would_refuse_is_refused(machine):
    # max-allowable-numa-nodes may only raise the Topology Manager's limit of 8
    err = refused(make_plan, machine(**SMALL), extra_kubelet_args=["topology-manager-policy-options=max-allowable-numa-nodes=4"])
    assert err.rule == "kubelet-rules"
    assert str(err) == ('kubelet-rules: with extra_kubelet_args the kubelet will refuse to start: kubelet: the minimum '
                        'value of "max-allowable-numa-nodes" should not be less than 8')
    # (an override the kubelet accepts stays a warning: test_overriding_a_managed_flag_warns)


def test_an_override_of_reserved_cpus_is_refused_as_the_kernel_args_rule(machine):
    # 0-1 is half of two cores here (siblings 0,8 and 1,9): the kubelet accepts that, but the planned
    # isolcpus/irqaffinity no longer fit reserved-cpus, and the message says whose rule it is
    err = refused(make_plan, machine(**SMALL), extra_kubelet_args=["reserved-cpus=0-1"])
    assert err.rule == "kubelet-rules"
    assert str(err).startswith("kubelet-rules: with extra_kubelet_args the planned kernel args no longer fit the kubelet "
                               "args: kernel: irqaffinity=0,4,8,12 is not reserved-cpus=0-1; kernel: ")
    assert "kubelet: " not in str(err) and "SMT" not in str(err)


# ====================================================================== fingerprint


def test_fingerprint_is_stable_and_order_free():
    assert fingerprint({"a": 1, "b": [1, 2]}) == fingerprint({"b": [1, 2], "a": 1})
    assert len(fingerprint({})) == 16
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})


@pytest.mark.parametrize(
    "options, changes",
    [
        ({}, False),
        ({"node_labels": ["gpu=h100"]}, False),
        ({"node_taints": ["gpu=true:NoSchedule"]}, False),
        ({"extra_kubelet_args": ["max-pods=200"]}, False),
        ({"pod_shapes": [{"cpu": 2}]}, False),
        ({"topology_manager_scope": "container"}, False),
        ({"reserved_cores": 4}, True),
        ({"reserved_cores_per_node": {0: 2}}, True),
        ({"split_reserved": False}, True),
        ({"cpu_manager_policy": "none"}, True),
        ({"memory_manager_policy": "None"}, True),
        ({"kube_reserved": {"memory": "2Gi"}}, True),
        ({"hugepages_per_node": 2}, True),
    ],
)
def test_fingerprint_follows_what_forces_a_state_reset(machine, options, changes):
    topo = machine(**SMALL)
    base = make_plan(topo)
    assert make_plan(topo)["fingerprint"] == base["fingerprint"]
    plan = make_plan(topo, **options)
    assert (plan["fingerprint"] != base["fingerprint"]) is changes
    assert plan["topology_fingerprint"] == base["topology_fingerprint"]


def test_topology_fingerprint_changes_with_the_online_cpus(machine):
    a = make_plan(machine(**SMALL))
    b = make_plan(machine(offline=(15,), **SMALL))
    assert a["topology_fingerprint"] != b["topology_fingerprint"]
    assert a["fingerprint"] != b["fingerprint"]


# ====================================================================== refusals: bad input


def _no_online_cpus(topo):
    topo["cpus_online"] = ""
    return topo


def _bad_cpulist(topo):
    topo["numa_nodes"][1]["cpus"] = "4-7,12-x"
    return topo


def _bad_online_list(topo):
    topo["cpus_online"] = "0-15,"
    return topo


def _not_a_topology(topo):
    return {"failed": True}


SHAPE_THAT_NEEDS_THE_WHOLE_NODE = [{"name": "full", "cpu": 8, "gpus": 1, "memory": "16Gi"}]


@pytest.mark.parametrize(
    "machine_kwargs, tweak, options, rule, fragments",
    [
        # reserved cores >= cores on a node
        ({}, None, {"reserved_cores_per_node": {0: 4}}, "reserved-cores",
         ["4 reserved cores on NUMA node 0, which has only 4 cores"]),
        ({}, None, {"reserved_cores": 9}, "reserved-cores",
         ["reserved_cores=9 leaves no core to isolate", "4 on node 0, 4 on node 1"]),
        # fewer reserved cores than CPU NUMA nodes when split
        ({"nodes_per_socket": 2}, None, {"reserved_cores": 3}, "reserved-cores",
         ["reserved_cores=3 is less than the 4 NUMA nodes with CPUs (0, 1, 2, 3)"]),
        # hugepages that do not fit
        ({}, None, {"hugepages_per_node": 63}, "hugepages",
         ["63 x 1G hugepages = 63.0Gi do not fit NUMA node 0: 64.0Gi of memory, 1.2Gi reserved, 62.8Gi left"]),
        ({"memory_per_node_kb": 4 * KB_PER_GB}, None, {"hugepages_per_node": 1500, "hugepages_size": "2M"}, "hugepages",
         ["1500 x 2M hugepages = 2.9Gi do not fit NUMA node 0: 4.0Gi of memory, 1.2Gi reserved, 2.8Gi left"]),
        # negative or non-integer counts
        ({}, None, {"reserved_cores": -1}, "options", ["reserved_cores must be >= 1, got -1"]),
        ({}, None, {"reserved_cores": 0}, "options", ["reserved_cores must be >= 1, got 0"]),
        ({}, None, {"reserved_cores": 1.5}, "options", ["reserved_cores must be a whole number, got 1.5"]),
        ({}, None, {"reserved_cores": "two"}, "options", ["reserved_cores must be a whole number, got 'two'"]),
        ({}, None, {"reserved_cores": True}, "options", ["reserved_cores must be a whole number, got True"]),
        ({}, None, {"hugepages_per_node": -2}, "options", ["hugepages_per_node must be >= 0, got -2"]),
        ({}, None, {"hugepages_per_node": 0.5}, "options", ["hugepages_per_node must be a whole number, got 0.5"]),
        ({}, None, {"reserved_cores_per_node": {0: -1}}, "options", ["reserved_cores_per_node[0] must be >= 0, got -1"]),
        ({}, None, {"reserved_cores_per_node": {"x": 1}}, "options", ["reserved_cores_per_node key must be a whole number, got 'x'"]),
        ({}, None, {"pod_shapes": [{"name": "p", "cpu": 2.5}]}, "options", ["pod_shapes[p].cpu must be a whole number, got 2.5"]),
        ({}, None, {"pod_shapes": [{"name": "p", "cpu": 2, "memory": "1.5"}]}, "options",
         ["pod_shapes[p].memory: '1.5' is not a whole number of bytes"]),
        # unknown policy or scope names, with the kubelet's casing as a hint
        ({}, None, {"memory_manager_policy": "static"}, "options",
         ["memory_manager_policy must be one of Static, None, got 'static'", "(the kubelet spells it 'Static')"]),
        ({}, None, {"cpu_manager_policy": "Static"}, "options",
         ["cpu_manager_policy must be one of static, none, got 'Static'", "(the kubelet spells it 'static')"]),
        ({}, None, {"topology_manager_policy": "single_numa_node"}, "options",
         ["topology_manager_policy must be one of single-numa-node, restricted, best-effort, none, got 'single_numa_node'"]),
        ({}, None, {"topology_manager_scope": "Pod"}, "options", ["got 'Pod' (the kubelet spells it 'pod')"]),
        ({}, None, {"topology_manager_scope": "node"}, "options", ["topology_manager_scope must be one of pod, container"]),
        ({}, None, {"hugepages_method": "boot"}, "options", ["hugepages_method must be one of auto, cmdline, runtime"]),
        ({}, None, {"isolcpus_flags": ["managed_irq", "dom"]}, "options", ["isolcpus_flags item must be one of"]),
        ({}, None, {"hugepages_nodes": "cpu"}, "options", ["hugepages_nodes must be gpu, all or a list"]),
        ({}, None, {"colour": "blue"}, "options", ["unknown options: colour"]),
        ({}, None, {"kubernetes_version": "latest"}, "options", ["kubernetes_version must look like 1.33"]),
        ({}, None, {"reserved_cores": 2, "reserved_cores_per_node": {0: 1}}, "options",
         ["give reserved_cores or reserved_cores_per_node, not both"]),
        ({}, None, {"extra_kubelet_args": ["--max-pods=10"]}, "options", ["must be name=value without leading dashes"]),
        # kube/system-reserved cannot hold hugepages
        ({}, None, {"kube_reserved": {"memory": "1Gi", "hugepages-1Gi": "2Gi"}}, "reserved-memory",
         ["kube_reserved cannot hold hugepages-1Gi"]),
        ({}, None, {"system_reserved": {"hugepages-2Mi": "512Mi"}}, "reserved-memory",
         ["system_reserved cannot hold hugepages-2Mi"]),
        # memory.available must be absolute: the sum rule needs a number
        ({}, None, {"eviction_hard": {"memory.available": "10%"}}, "reserved-memory",
         ["memory.available must be an absolute quantity, not 10%"]),
        # a total that is not whole MiB, more than a node has, or nothing at all
        ({}, None, {"kube_reserved": {"memory": "1000k"}}, "reserved-memory",
         ["= 1599029824 bytes, not a whole number of MiB"]),
        ({"memory_per_node_kb": KB_PER_GB}, None, {}, "reserved-memory",
         ["NUMA node 0 would reserve 1.2Gi but has only 1.0Gi"]),
        # the kubelet refuses a zero eviction threshold, so nothing at all cannot be reserved either
        ({}, None, {"kube_reserved": {}, "system_reserved": {}, "eviction_hard": {"memory.available": "0"}},
         "options", ["eviction_hard memory.available: '0' is zero", "eviction threshold memory.available must be positive: 0"]),
        ({}, None, {"eviction_hard": {"nodefs.available": "0Gi"}}, "options",
         ["eviction_hard nodefs.available: '0Gi' is zero", "eviction threshold nodefs.available must be positive: 0"]),
        ({}, None, {"eviction_hard": {"nodefs.available": "lots"}}, "options", ["'lots' is neither a percentage nor a quantity"]),
        # the topology itself
        ({}, _no_online_cpus, {}, "topology", ["no online CPUs"]),
        ({}, _bad_cpulist, {}, "topology", ["unparseable cpulist", "'4-7,12-x'"]),
        ({}, _bad_online_list, {}, "topology", ["unparseable cpulist", "'0-15,'"]),
        ({}, _not_a_topology, {}, "topology", ["not a topology from maitred.rke2_numa.topology_info"]),
        # more than 8 nodes on a kubelet without max-allowable-numa-nodes
        ({"cpuless_nodes": 7}, None, {"kubernetes_version": "1.30"}, "numa-node-limit",
         ["this host has 9 NUMA nodes", "kubernetes_version is 1.30"]),
        # conflicting options: split housekeeping + single-numa-node + a shape needing the whole node
        # (a warning without strict_fit: test_split_reserved_shape_conflict_follows_strict_fit)
        ({}, None, {"pod_shapes": SHAPE_THAT_NEEDS_THE_WHOLE_NODE, "strict_fit": True}, "pod-shapes",
         ["pod shape full (cpu=8) fits no NUMA node because split_reserved puts housekeeping cores on node(s) 0, 1",
          "set split_reserved: false"]),
        # strict_fit turns a shape that fits nowhere into a refusal
        ({}, None, {"strict_fit": True, "pod_shapes": [{"name": "big", "cpu": 64}]}, "pod-shapes",
         ["pod shape big (cpu=64, memory=0Mi, gpus=0, hugepages=0Mi) fits on no NUMA node"]),
        ({}, None, {"strict_fit": True, "pod_shapes": [{"name": "odd", "cpu": 3}]}, "pod-shapes",
         ["pod shape odd (cpu=3", "cpu=3 is not a multiple of the kubelet's 2 CPUs per core"]),
    ],
)
def test_bad_input_is_refused(machine, machine_kwargs, tweak, options, rule, fragments):
    topo = machine(**dict(SMALL, **machine_kwargs))
    if tweak is not None:
        topo = tweak(topo)
    err = refused(make_plan, topo, **options)
    assert err.rule == rule, str(err)
    assert str(err).startswith(rule + ": ")
    for fragment in fragments:
        assert fragment in str(err)


def test_conflicting_shape_fits_without_split(machine):
    plan = make_plan(machine(**SMALL), split_reserved=False, pod_shapes=SHAPE_THAT_NEEDS_THE_WHOLE_NODE)
    (fit,) = plan["pod_shapes"]
    assert (fit["fits"], fit["nodes"]) == (True, [1])
    assert any("split_reserved is false: NUMA nodes 1 get no housekeeping core" in w for w in plan["warnings"])


def test_strict_fit_off_only_warns(machine):
    plan = make_plan(machine(**SMALL), pod_shapes=[{"name": "big", "cpu": 64}])
    assert plan["pod_shapes"][0]["fits"] is False
    (message,) = plan["warnings"]
    assert message.startswith("pod shape big (cpu=64, memory=0Mi, gpus=0, hugepages=0Mi) fits on no NUMA node: cpu 64 > at most ")
    assert plan["pod_shapes"][0]["short"] == message.split(": ", 1)[1]


# ====================================================================== whole plans of the sample machines


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    base = tmp_path_factory.mktemp("samples")
    return dict((name, read_topology(gen_sysfs.write_tree(spec, str(base / name))))
                for name, spec in gen_sysfs.samples().items())


SAMPLE_OPTIONS = [
    {},
    {"hugepages_per_node": 4},
    {"hugepages_per_node": 256, "hugepages_size": "2M", "hugepages_nodes": "all"},
    {"reserved_cores": 8},
    {"split_reserved": False},
    {"topology_manager_policy": "restricted", "isolcpus_flags": ["managed_irq", "domain"]},
    {"memory_manager_policy": "None", "cpu_manager_policy": "none", "topology_manager_policy": "best-effort"},
]


@pytest.mark.parametrize("name", sorted(gen_sysfs.samples()))
@pytest.mark.parametrize("options", SAMPLE_OPTIONS, ids=lambda o: ",".join(sorted(o)) or "defaults")
def test_sample_plans_pass_the_kubelet_rules(samples, name, options):
    topo = samples[name]
    if name == "grace-hopper" and options.get("hugepages_size", "1G") == "1G" and options.get("hugepages_per_node"):
        err = refused(make_plan, topo, **options)  # a 64k-page kernel offers 2M, 512M and 16G only
        assert err.rule == "hugepages"
        return
    plan = make_plan(topo, **options)
    assert kubelet_rules.check(plan["kubelet_args"], plan["kernel_args"], topo) == []
    names = [a.split("=", 1)[0] for a in plan["kernel_args"]]
    assert len(names) == len(set(names)) and set(names) <= set(MANAGED_KERNEL_ARGS)
    flags = [a.split("=", 1)[0] for a in plan["kubelet_args"]]
    assert len(flags) == len(set(flags)) and set(flags) <= set(plan["managed_kubelet_flags"])
    online = set(parse_cpulist(topo["cpus_online"]))
    reserved, isolated = set(parse_cpulist(plan["reserved_cpus"])), set(parse_cpulist(plan["isolated_cpus"]))
    assert reserved | isolated == online and not reserved & isolated
    for core in topo["cores"]:
        assert set(core) <= reserved or not set(core) & reserved


def test_dgx_h100_defaults(samples):
    plan = make_plan(samples["dgx-h100"])
    assert plan["reserved_cpus"] == "0,56,112,168"
    assert plan["isolated_cpus"] == "1-55,57-111,113-167,169-223"
    assert plan["kernel_args"] == [
        "isolcpus=managed_irq,1-55,57-111,113-167,169-223",
        "nohz_full=1-55,57-111,113-167,169-223",
        "rcu_nocbs=1-55,57-111,113-167,169-223",
        "irqaffinity=0,56,112,168",
    ]
    assert plan["kubelet_args"] == [
        "cpu-manager-policy=static",
        "cpu-manager-policy-options=full-pcpus-only=true",
        "reserved-cpus=0,56,112,168",
        "topology-manager-policy=single-numa-node",
        "topology-manager-scope=pod",
        "memory-manager-policy=Static",
        "kube-reserved=memory=1Gi",
        "system-reserved=memory=1Gi",
        "eviction-hard=imagefs.available<5%,imagefs.inodesFree<5%,memory.available<500Mi,nodefs.available<5%,"
        "nodefs.inodesFree<5%",
        "reserved-memory=0:memory=1274Mi;1:memory=1274Mi",
    ]
    assert plan["reserved_memory"] == {"0": "1274Mi", "1": "1274Mi"}
    assert [t["exclusive_cpus"] for t in plan["numa_tables"]] == [110, 110]
    assert [len(t["gpus"]) for t in plan["numa_tables"]] == [4, 4]
    assert plan["warnings"] == []


def test_dgx_h100_hugepages(samples):
    plan = make_plan(samples["dgx-h100"], hugepages_per_node=16)
    assert plan["kernel_args"][-3:] == ["default_hugepagesz=1G", "hugepagesz=1G", "hugepages=0:16,1:16"]
    assert plan["hugepages"] == {"size": "1G", "size_kb": 1048576, "resource": "hugepages-1Gi", "method": "cmdline",
                                 "per_node": {"0": 16, "1": 16}}


def test_grace_hopper(samples):
    topo = samples["grace-hopper"]
    assert len(topo["numa_nodes"]) == 9
    plan = make_plan(topo, hugepages_size="2M", hugepages_per_node=1024, hugepages_nodes="all")
    assert "topology-manager-policy-options=max-allowable-numa-nodes=9" in plan["kubelet_args"]
    assert plan["reserved_cpus"] == "0"
    assert plan["reserved_cores_per_node"] == {"0": 1}
    # no reserved memory or hugepages on the CPU-less nodes (HBM and the empty MIG nodes)
    assert plan["reserved_memory"] == {"0": "2548Mi"}
    assert "reserved-memory=0:memory=2548Mi" in plan["kubelet_args"]
    assert plan["hugepages"]["per_node"] == {"0": 1024}
    assert "hugepages=0:1024" in plan["kernel_args"]
    for table in plan["numa_tables"][1:]:
        assert (table["reserved_cpus"], table["reserved_memory_bytes"], table["hugepages_bytes"]) == ("", 0, 0)
    assert kubelet_rules.check(plan["kubelet_args"], plan["kernel_args"], topo) == []
    err = refused(make_plan, topo, kubernetes_version="1.30")
    assert err.rule == "numa-node-limit" and "9 NUMA nodes" in str(err)


def test_dell_round_robin(samples):
    plan = make_plan(samples["dell-roundrobin"])
    # one whole core per socket: 0,48 (socket 0) and 1,49 (socket 1); never "0-1" alone
    assert plan["reserved_cpus"] == "0-1,48-49"
    assert [t["reserved_cpus"] for t in plan["numa_tables"]] == ["0,48", "1,49"]
    plan = make_plan(samples["dell-roundrobin"], split_reserved=False)
    assert plan["reserved_cpus"] == "0,48"


def test_offline_cpus_are_neither_reserved_nor_isolated(samples):
    plan = make_plan(samples["l40s-offline"])
    assert plan["offline_cpus"] == "31,63"
    assert not {31, 63} & set(parse_cpulist(plan["reserved_cpus"]) + parse_cpulist(plan["isolated_cpus"]))
    assert any("offline CPUs 31,63 are neither reserved nor isolated" in w for w in plan["warnings"])


def test_memoryless_cpu_node_reserves_no_memory(machine):
    topo = copy.deepcopy(machine(**SMALL))
    topo["numa_nodes"][1]["memory_kb"] = 0  # a CPU node without memory (seen with some NPS/SNC settings)
    plan = make_plan(topo)
    assert plan["reserved_cores_per_node"] == {"0": 1, "1": 1}
    assert plan["reserved_memory"] == {"0": "2548Mi"}
    assert kubelet_rules.check(plan["kubelet_args"], plan["kernel_args"], topo) == []


def test_smt_alignment_uses_the_kubelets_cpus_per_core(hwloc_root):
    # hwloc's hybrid dump: 6 P-cores with SMT2 and 8 E-cores: 20 CPUs / 14 cores = 1 CPU per core for
    # the kubelet (NumCPUs / NumCores), so an odd CPU count is no SMTAlignmentError under full-pcpus-only
    topo = read_topology(hwloc_root("20em64t-hybrid-1p6c2t+2ca4co1t"))
    assert (len(parse_cpulist(topo["cpus_online"])), len(topo["cores"])) == (20, 14)
    plan = make_plan(topo, pod_shapes=[{"name": "odd", "cpu": 3}])
    assert "cpu-manager-policy-options=full-pcpus-only=true" in plan["kubelet_args"]
    (fit,) = plan["pod_shapes"]
    assert fit["fits"] and fit["nodes"] == [0] and fit["note"] == "", fit


def test_shape_shortfall_names_the_scarce_resource(machine):
    plan = make_plan(machine(**SMALL), pod_shapes=[{"name": "tp2", "cpu": 2, "gpus": 2}])
    (fit,) = plan["pod_shapes"]
    assert fit["fits"] is False and fit["short"] == "gpus 2 > at most 1 on one node"


# The boot CPU stays housekeeping: the kernel keeps timekeeping on it and clears it
# from nohz_full ("NO_HZ: Clearing 0 from nohz_full range for timekeeping"), so a
# plan that isolates CPU 0 never verifies. Its whole core is always reserved.
BOOT_OPTIONS = [
    {},
    {"split_reserved": False},
    {"split_reserved": False, "reserved_cores": 3},
    # every reserved core asked for on the last CPU node
    {"split_reserved": False, "reserved_cores_per_node": "last"},
    {"reserved_cores_per_node": "last"},
]


@pytest.mark.parametrize("name", sorted(gen_sysfs.samples()))
@pytest.mark.parametrize("options", BOOT_OPTIONS, ids=lambda o: ",".join("%s=%s" % kv for kv in sorted(o.items())) or "defaults")
def test_the_boot_cpu_core_is_always_reserved(samples, name, options):
    topo = samples[name]
    options = dict(options)
    if options.get("reserved_cores_per_node") == "last":
        last = max(n["id"] for n in topo["numa_nodes"] if n["cpus"])
        options["reserved_cores_per_node"] = {last: 2}
    plan = make_plan(topo, **options)
    reserved = set(parse_cpulist(plan["reserved_cpus"]))
    (boot_core,) = [set(core) for core in topo["cores"] if 0 in core]
    assert boot_core <= reserved, plan["reserved_cpus"]
    assert 0 not in set(parse_cpulist(plan["isolated_cpus"]))
    nohz = [a for a in plan["kernel_args"] if a.startswith("nohz_full=")]
    assert nohz and 0 not in parse_cpulist(nohz[0].split("=", 1)[1])


@pytest.mark.parametrize(
    "gpus, options, reserved, counts",
    [
        # split_reserved false puts housekeeping on the node with the fewest GPUs, but CPU 0 is on node 0
        ({0: 2, 1: 0}, {"split_reserved": False}, "0,8", {"0": 1, "1": 0}),
        # extra cores still go to the node with the fewest GPUs
        ({0: 2, 1: 0}, {"split_reserved": False, "reserved_cores": 3}, "0,4-5,8,12-13", {"0": 1, "1": 2}),
        ({0: 2, 1: 0}, {"split_reserved": False, "reserved_cores_per_node": {1: 2}}, "0,4-5,8,12-13", {"0": 1, "1": 2}),
        ({0: 2, 1: 0}, {}, "0,4,8,12", {"0": 1, "1": 1}),
    ],
)
def test_the_boot_core_is_reserved_on_a_gpu_node(machine, gpus, options, reserved, counts):
    plan = make_plan(machine(**dict(SMALL, gpus_per_node=gpus)), **options)
    assert plan["reserved_cpus"] == reserved
    assert plan["reserved_cores_per_node"] == counts


def test_the_boot_core_cannot_be_given_zero_cores(machine):
    err = refused(make_plan, machine(**SMALL), split_reserved=False, reserved_cores_per_node={0: 0, 1: 1})
    assert err.rule == "reserved-cores"
    assert "NUMA node 0 holds CPU 0" in str(err) and "NO_HZ: Clearing 0 from nohz_full range for timekeeping" in str(err)


def test_the_boot_core_leaves_its_node_a_core_to_isolate(machine):
    # node 0 has a single core (CPUs 0 and 4): reserving it leaves node 0 nothing to isolate
    err = refused(make_plan, machine(sockets=2, cores_per_socket=1, threads=2, gpus_per_node={0: 1, 1: 0}),
                  split_reserved=False)
    assert err.rule == "reserved-cores"
    assert "NUMA node 0" in str(err) and "CPU 0" in str(err)


def test_with_cpu_0_offline_the_lowest_online_cpu_is_housekeeping(hwloc_root):
    # hwloc's dump: CPUs 0-3 offline, 4-20 online, the even ones on no NUMA node
    topo = read_topology(hwloc_root("offline-cpu0-node0"))
    assert min(parse_cpulist(topo["cpus_online"])) == 4
    for options in ({}, {"split_reserved": False}):
        plan = make_plan(topo, **options)
        assert 4 in parse_cpulist(plan["reserved_cpus"]), plan["reserved_cpus"]
        assert 4 not in parse_cpulist(plan["isolated_cpus"])
        assert kubelet_rules.check(plan["kubelet_args"], plan["kernel_args"], topo) == []


# ====================================================================== topologies the planner cannot place: a refusal, never a traceback


@pytest.mark.parametrize(
    "name, fragments",
    [
        # every node's cpulist says 0-7 (a BIOS bug)
        ("8em64t-2s2ca2c-buggynuma", ["topology: NUMA nodes 0, 1, 2, 3, 4, 5, 6 and 7 all list CPUs 0-7 (a firmware bug)"]),
        # nodes 3, 4 and 5 overlap: 12-23, 16-23, 20-23
        ("fakeheterocpunuma", ["topology: NUMA nodes 4 and 5 both list CPUs 16-19 (a firmware bug)",
                               "NUMA nodes 3, 4 and 5 all list CPUs 20-23 (a firmware bug)"]),
    ],
)
@pytest.mark.parametrize("split", [True, False])
def test_overlapping_numa_nodes_are_refused_naming_them(hwloc_root, name, fragments, split):
    topo = read_topology(hwloc_root(name))
    err = refused(make_plan, topo, split_reserved=split)
    assert err.rule == "topology", str(err)
    for fragment in fragments:
        assert fragment in str(err), str(err)
    assert "reserved-cores" not in str(err) and "0 cores" not in str(err)


@pytest.mark.parametrize("name", HWLOC_DUMPS)
@pytest.mark.parametrize("split", [True, False])
def test_every_real_machine_is_planned_or_refused_by_a_rule(hwloc_root, name, split):
    topo = read_topology(hwloc_root(name))
    try:
        plan = make_plan(topo, split_reserved=split)
    except PlanError as err:
        assert err.rule in ("topology", "reserved-cores", "reserved-memory", "many-numa-nodes", "numa-node-id"), str(err)
        assert err.rule != "many-numa-nodes" or len(topo["numa_nodes"]) > 16, str(err)
        assert err.rule != "numa-node-id" or max(n["id"] for n in topo["numa_nodes"]) > 63, str(err)
        assert " 0 cores" not in str(err) and "at most -" not in str(err), str(err)
        return
    assert kubelet_rules.check(plan["kubelet_args"], plan["kernel_args"], topo) == []
    boot = min(parse_cpulist(topo["cpus_online"]))
    assert boot in parse_cpulist(plan["reserved_cpus"])


def test_two_nodes_listing_the_same_cpus(machine):
    topo = machine(**SMALL)
    topo["numa_nodes"][1]["cpus"] = "2-7,12-15"  # node 0 is 0-3,8-11
    err = refused(make_plan, topo)
    assert str(err).startswith("topology: NUMA nodes 0 and 1 both list CPUs 2-3 (a firmware bug); ")


@pytest.mark.parametrize("gpus", [{0: 1, 1: 0}, {0: 0, 1: 1}, {0: 1, 1: 1}])
@pytest.mark.parametrize("empty", [0, 1])
@pytest.mark.parametrize("options", [
    {}, {"split_reserved": False}, {"split_reserved": False, "reserved_cores": 2},
    {"split_reserved": False, "memory_manager_policy": "None"},
    {"split_reserved": False, "hugepages_per_node": 1, "hugepages_nodes": "all"},
    {"split_reserved": False, "pod_shapes": [{"cpu": 2, "memory": "1Gi"}]},
], ids=lambda o: ",".join(sorted(o)) or "defaults")
def test_a_cpu_node_without_memory_is_planned_or_refused(machine, gpus, empty, options):
    topo = machine(**dict(SMALL, gpus_per_node=gpus))
    topo["numa_nodes"][empty]["memory_kb"] = 0
    try:
        plan = make_plan(topo, **options)
    except PlanError as err:
        assert err.rule in ("reserved-memory", "hugepages"), str(err)
        return
    assert str(empty) not in plan["reserved_memory"]
    assert kubelet_rules.check(plan["kubelet_args"], plan["kernel_args"], topo) == []


# ====================================================================== input that would make a wrong plan


def _no_memory_anywhere(topo):
    for node in topo["numa_nodes"]:
        node["memory_kb"] = 0
    return topo


def _reserved_cpus_without_memory(topo):
    # CPUs on memory-less node 0, memory only on a CPU-less node 1
    topo["numa_nodes"][0]["memory_kb"] = 0
    topo["numa_nodes"][1].update(cpus="", cpu_count=0, has_cpu=False)
    topo["cpus_online"] = topo["numa_nodes"][0]["cpus"]
    online = set(parse_cpulist(topo["cpus_online"]))
    topo["cores"] = [c for c in topo["cores"] if set(c) <= online]
    return topo


def _memory_missing(topo):
    del topo["numa_nodes"][1]["memory_kb"]
    return topo


def _memory_garbled(topo):
    topo["numa_nodes"][1]["memory_kb"] = "lots"
    return topo


def _huge_online_list(topo):
    topo["cpus_online"] = "0-4194303"
    return topo


@pytest.mark.parametrize(
    "tweak, options, rule, fragments",
    [
        # memory: all zero used to end in "integer division or modulo by zero"
        (_no_memory_anywhere, {}, "topology", ["no memory on any NUMA node"]),
        (_reserved_cpus_without_memory, {}, "reserved-memory", ["no NUMA node with reserved CPUs has memory",
                                                                "2.5Gi of reserved-memory has no node to go to"]),
        (_memory_missing, {}, "topology", ["NUMA node 1", "memory_kb"]),
        (_memory_garbled, {}, "topology", ["NUMA node 1", "memory_kb", "'lots'"]),
        (_huge_online_list, {}, "topology", ["unparseable cpulist", "8192"]),
        # 0 reserved cores is not "the default"
        (None, {"reserved_cores": 0}, "options", ["reserved_cores must be >= 1, got 0", "at least one whole core"]),
        (None, {"reserved_cores": 0, "split_reserved": False}, "options", ["reserved_cores must be >= 1, got 0"]),
        # an unquoted YAML version is a float: 1.40 arrives as 1.4
        (None, {"kubernetes_version": 1.4}, "options", ["kubernetes_version must be a string", "got the number 1.4",
                                                        "quote it"]),
        (None, {"kubernetes_version": 1.33}, "options", ["got the number 1.33", "quote it"]),
        (None, {"kubernetes_version": 1}, "options", ["kubernetes_version must be a string"]),
        (None, {"kubernetes_version": True}, "options", ["kubernetes_version must be a string"]),
        (None, {"kubernetes_version": "1.33garbage"}, "options", ["kubernetes_version must look like 1.33"]),
        # labels and taints that the kubelet (RKE2 passes them on) refuses
        (None, {"node_labels": ["bad label=x"]}, "options", ["node_labels item 'bad label=x'", "name part must consist"]),
        (None, {"node_labels": ["gpu=true", "gpu=" + "v" * 64]}, "options", ["must be no more than 63 characters"]),
        (None, {"node_labels": ["node-role.kubernetes.io/worker=true"]}, "options", ["unknown 'kubernetes.io' or 'k8s.io'"]),
        (None, {"node_taints": ["gpu=true"]}, "options", ["node_taints item 'gpu=true'", "no effect"]),
        (None, {"node_taints": ["gpu=true:NoScheduled"]}, "options",
         ["effect 'NoScheduled' is not one of NoSchedule, PreferNoSchedule, NoExecute"]),
        # pass-through kubelet args: one name=value word each
        (None, {"extra_kubelet_args": [""]}, "options", ["extra_kubelet_args item ''"]),
        (None, {"extra_kubelet_args": ["max-pods= 200"]}, "options", ["extra_kubelet_args item 'max-pods= 200'", "whitespace"]),
        (None, {"extra_kubelet_args": ["max-pods=200 node-ip=10.0.0.1"]}, "options", ["whitespace"]),
        (None, {"extra_kubelet_args": ["max pods=200"]}, "options", ["whitespace"]),
        (None, {"extra_kubelet_args": ["max-pods=200\n"]}, "options", ["whitespace"]),
        (None, {"extra_kubelet_args": ["max-pods"]}, "options", ["must be name=value"]),
        (None, {"extra_kubelet_args": ["Max.Pods=1"]}, "options", ["flag name 'Max.Pods'"]),
        # an override the kubelet would refuse fails the plan (0-1 splits two cores here)
        (None, {"extra_kubelet_args": ["reserved-cpus=0-1"]}, "kubelet-rules",
         ["with extra_kubelet_args the planned kernel args no longer fit the kubelet args", "kernel: irqaffinity"]),
        (None, {"extra_kubelet_args": ["topology-manager-policy-options=max-allowable-numa-nodes=lots"]}, "kubelet-rules",
         ["the kubelet will refuse to start", 'unable to convert policy option to integer "max-allowable-numa-nodes"',
          '"lots"']),
        (None, {"extra_kubelet_args": ["topology-manager-policy-options=max-allowable-numa-nodes=7"]}, "kubelet-rules",
         ['the minimum value of "max-allowable-numa-nodes" should not be less than 8']),
        (None, {"extra_kubelet_args": ["reserved-cpus=0-4194303"]}, "kubelet-rules", ["invalid reserved-cpus"]),
        # a hugepage size the kernel does not offer, on every machine
        (None, {"hugepages_per_node": 1, "hugepages_size": "1G", "_sizes": [2048]}, "hugepages",
         ["this kernel offers hugepages-2Mi (2048 kB), not 1G (hugepages-1Gi, 1048576 kB)"]),
        (None, {"hugepages_per_node": 1, "hugepages_size": "1G", "_sizes": []}, "hugepages",
         ["this kernel offers no hugepage sizes", "not 1G (hugepages-1Gi, 1048576 kB)"]),
        (None, {"hugepages_per_node": 1, "hugepages_size": "2M", "_sizes": []}, "hugepages",
         ["this kernel offers no hugepage sizes", "not 2M (hugepages-2Mi, 2048 kB)"]),
        (None, {"hugepages_per_node": 1, "hugepages_size": "2M", "_sizes": None}, "hugepages",
         ["the topology does not say which hugepage sizes the kernel offers"]),
    ],
)
def test_input_that_would_make_a_wrong_plan_is_refused(machine, tweak, options, rule, fragments):
    options = dict(options)
    topo = machine(**SMALL)
    if "_sizes" in options:
        sizes = options.pop("_sizes")
        if sizes is None:
            del topo["hugepage_sizes_kb"]
        else:
            topo["hugepage_sizes_kb"] = sizes
    if tweak is not None:
        topo = tweak(topo)
    err = refused(make_plan, topo, **options)
    assert err.rule == rule, str(err)
    assert str(err).startswith(rule + ": ")
    for fragment in fragments:
        assert fragment in str(err), str(err)


@pytest.mark.parametrize("sizes", [[2048], []], ids=["2M-only", "none"])
def test_hugepage_size_check_on_a_machine_without_1g(machine, sizes):
    # the machine fixture's kernel writes the sizes it is given: 1G absent, or no hugetlbfs at all
    topo = machine(hugepage_sizes=sizes, **SMALL)
    assert topo["hugepage_sizes_kb"] == sizes
    err = refused(make_plan, topo, hugepages_per_node=2)
    assert err.rule == "hugepages" and "1G (hugepages-1Gi, 1048576 kB)" in str(err)
    if sizes:
        assert make_plan(topo, hugepages_per_node=2, hugepages_size="2M")["hugepages"]["per_node"] == {"0": 2, "1": 2}
    else:
        assert refused(make_plan, topo, hugepages_per_node=2, hugepages_size="2M").rule == "hugepages"
    assert make_plan(topo)["hugepages"]["per_node"] == {}  # no hugepages asked: nothing to refuse


@pytest.mark.parametrize(
    "options",
    [
        {"node_labels": ["gpu=true", "nvidia.com/gpu.present=true", "example.com/empty="],
         "node_taints": ["nvidia.com/gpu=present:NoSchedule", "dedicated:NoExecute"]},
        {"extra_kubelet_args": ["max-pods=200", "resolv-conf=", "feature-gates=A=true,B=false", "v=2", "log_file=/x"]},
        {"kubernetes_version": "v1.33.2"},
        {"kubernetes_version": "1.31.4+rke2r1"},
    ],
)
def test_valid_labels_taints_args_and_versions_plan(machine, options):
    plan = make_plan(machine(**SMALL), **options)
    assert plan["node_labels"] == options.get("node_labels", [])
    assert plan["node_taints"] == options.get("node_taints", [])


def test_split_reserved_shape_conflict_follows_strict_fit(machine):
    # strict_fit: true refuses; false (the default) plans and warns with the same advice
    for strict in (True, None):
        options = {"pod_shapes": SHAPE_THAT_NEEDS_THE_WHOLE_NODE}
        if strict:
            options["strict_fit"] = True
            err = refused(make_plan, machine(**SMALL), **options)
            assert err.rule == "pod-shapes" and "split_reserved puts housekeeping cores on node(s) 0, 1" in str(err)
            continue
        plan = make_plan(machine(**SMALL), **options)
        assert plan["pod_shapes"][0]["fits"] is False
        (warning,) = plan["warnings"]
        assert warning.startswith("pod shape full (cpu=8) fits no NUMA node because split_reserved puts housekeeping "
                                  "cores on node(s) 0, 1")
        assert "set split_reserved: false" in warning
    plan = make_plan(machine(**SMALL), strict_fit=False, pod_shapes=SHAPE_THAT_NEEDS_THE_WHOLE_NODE)
    assert len(plan["warnings"]) == 1
