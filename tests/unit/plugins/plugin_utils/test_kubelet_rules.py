# -*- coding: utf-8 -*-
"""The kubelet's and the kernel's refusal rules: each check passes a good set of
args and refuses a bad one in the component's own words."""

from __future__ import annotations

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_rules import (
    check,
    cpus_per_core,
    node_label_error,
    node_taint_error,
    parse_kubelet_args,
    parse_reserved_memory,
    warnings,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import MIB, QuantityError


def topology(nodes=2, cores_per_node=4, threads=2, cpuless=0):
    """A hand-made topology dict: linear numbering, ``cpuless`` extra nodes without CPUs."""
    total = nodes * cores_per_node
    cores, numa = [], []
    for n in range(nodes):
        cpus = []
        for c in range(cores_per_node):
            index = n * cores_per_node + c
            core = [t * total + index for t in range(threads)]
            cores.append(core)
            cpus.extend(core)
        numa.append({"id": n, "cpus": ",".join(map(str, sorted(cpus))), "memory_kb": 64 * 1024 * 1024, "has_cpu": True})
    for i in range(cpuless):
        numa.append({"id": nodes + i, "cpus": "", "memory_kb": 0, "has_cpu": False})
    return {
        "numa_nodes": numa,
        "memory_kb": nodes * 64 * 1024 * 1024,  # MemTotal: the kubelet's memory capacity
        "cpus_online": "0-%d" % (total * threads - 1),
        "cpus_offline": "",
        "cores": cores,
    }


TOPO = topology()  # 2 nodes x 4 cores x 2 threads: node 0 = 0-3,8-11; node 1 = 4-7,12-15

GOOD_KUBELET = [
    "cpu-manager-policy=static",
    "cpu-manager-policy-options=full-pcpus-only=true",
    "reserved-cpus=0,4,8,12",
    "topology-manager-policy=single-numa-node",
    "topology-manager-scope=pod",
    "memory-manager-policy=Static",
    "kube-reserved=memory=1Gi",
    "system-reserved=memory=1Gi",
    "eviction-hard=imagefs.available<5%,imagefs.inodesFree<5%,memory.available<500Mi,nodefs.available<5%,nodefs.inodesFree<5%",
    "reserved-memory=0:memory=1274Mi;1:memory=1274Mi",
]
GOOD_KERNEL = [
    "isolcpus=managed_irq,1-3,5-7,9-11,13-15",
    "nohz_full=1-3,5-7,9-11,13-15",
    "rcu_nocbs=1-3,5-7,9-11,13-15",
    "irqaffinity=0,4,8,12",
]


def replace(args, *new):
    """``args`` with the flags named in ``new`` replaced or appended (``name=value``) or dropped (``name``)."""
    out = list(args)
    for arg in new:
        name = arg.split("=", 1)[0]
        keep = [a for a in out if a.split("=", 1)[0] != name]
        out = keep + ([arg] if "=" in arg else [])
    return out


def test_a_good_plan_passes():
    assert check(GOOD_KUBELET, GOOD_KERNEL, TOPO) == []


def test_map_flags_repeated_are_merged_as_the_kubelet_merges_them():
    """kube-reserved split over two flags: the kubelet reserves both keys, so the reserved-memory sum holds."""
    split = replace(GOOD_KUBELET, "kube-reserved") + ["kube-reserved=memory=1Gi", "kube-reserved=cpu=500m"]
    assert check(split, GOOD_KERNEL, TOPO) == []
    lost = replace(GOOD_KUBELET, "kube-reserved") + ["kube-reserved=memory=1Gi", "kube-reserved=memory=2Gi"]
    assert any("determined by Node Allocatable" in e for e in check(lost, GOOD_KERNEL, TOPO))


def test_no_flags_at_all_pass():
    # kubelet defaults: cpu policy none, topology none, memory None; no kernel isolation.
    assert check([], [], TOPO) == []


# ------------------------------------------------------------------ parsing


@pytest.mark.parametrize(
    "args, expected",
    [
        (["a=1", "b=x=y"], {"a": "1", "b": "x=y"}),
        (["a=1", "a=2"], {"a": "2"}),
        # map flags merge their keys across repeats, as the kubelet's MapStringString does
        (["kube-reserved=memory=1Gi", "kube-reserved=cpu=1"], {"kube-reserved": "cpu=1,memory=1Gi"}),
        (["eviction-hard=memory.available<1Gi", "eviction-hard=nodefs.available<5%,memory.available<500Mi"],
         {"eviction-hard": "memory.available<500Mi,nodefs.available<5%"}),
        (["reserved-memory=0:memory=1Gi", "reserved-memory=1:memory=2Gi"], {"reserved-memory": "0:memory=1Gi;1:memory=2Gi"}),
        (["flag"], {"flag": "true"}),   # RKE2 passes a bare name as --flag=true (k3s GetArgs)
        # the kubelet's names: '_' is '-' (WordSepNormalizeFunc); RKE2's '+' / '-' suffixes are not part of the name
        (["cpu-manager-policy=static", "cpu-manager-policy+=none"], {"cpu-manager-policy": "none"}),
        (["cpu-manager-policy=static", "cpu_manager_policy=none"], {"cpu-manager-policy": "none"}),
        (["cpu_manager_policy=none", "cpu-manager-policy=static"], {"cpu-manager-policy": "none"}),   # sorted by written name
        (["cpu-manager-policy=static", "cpu-manager-policy-=none"], {"cpu-manager-policy": "static"}),   # prepended
    ],
)
def test_parse_kubelet_args(args, expected):
    assert parse_kubelet_args(args) == expected


def test_the_kubelet_gets_rke2s_args_grouped_by_written_name_sorted_with_its_own_names():
    """k3s pkg/util/args.go GetArgs, then the kubelet's WordSepNormalizeFunc: the order decides which value wins."""
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_rules import flag_name, kubelet_argv
    got = kubelet_argv([("a", "--max-pods=110"), ("b", "cpu_manager_policy=none"), ("c", "cpu-manager-policy+=static"),
                        ("d", "cpu-manager-policy-=none"), ("e", "feature-gates")])
    assert got == [("d", "cpu-manager-policy=none"), ("c", "cpu-manager-policy=static"), ("b", "cpu-manager-policy=none"),
                   ("e", "feature-gates=true"), ("a", "max-pods=110")]
    assert [flag_name(a) for a in ("--cpu_manager_policy=x", "cpu-manager-policy+=x", "reserved-cpus-=0", "a")] == [
        "cpu-manager-policy", "cpu-manager-policy", "reserved-cpus", "a"]


@pytest.mark.parametrize(
    "value, expected",
    [
        ("", {}),
        (None, {}),
        ("0:memory=1Gi", {0: {"memory": 1024 * MIB}}),
        ("0:memory=1Gi;1:memory=512Mi", {0: {"memory": 1024 * MIB}, 1: {"memory": 512 * MIB}}),
        ("0:memory=1Gi,hugepages-1Gi=2Gi", {0: {"memory": 1024 * MIB, "hugepages-1Gi": 2048 * MIB}}),
        ("0:memory=1Gi;0:memory=1Gi", {0: {"memory": 2048 * MIB}}),
    ],
)
def test_parse_reserved_memory(value, expected):
    assert parse_reserved_memory(value) == expected


@pytest.mark.parametrize("value, error", [("memory=1Gi", ValueError), ("0:memory=lots", QuantityError), ("x:memory=1Gi", ValueError)])
def test_parse_reserved_memory_refuses(value, error):
    with pytest.raises(error):
        parse_reserved_memory(value)


# ------------------------------------------------------------------ CPU manager


@pytest.mark.parametrize(
    "kubelet, fragment",
    [
        (["cpu-manager-policy=Static"], '[cpumanager] unknown policy: "Static"'),
        (["reserved-cpus=0-"], "invalid reserved-cpus"),
        (["reserved-cpus"], "[cpumanager] unable to determine reserved CPU resources for static policy"),
        (["reserved-cpus=0,4,8,12,16"], "reserved-cpus: 0,4,8,12,16 is not a subset of online-cpus 0-15"),
    ],
)
def test_cpu_manager_refusals(kubelet, fragment):
    kubelet = replace(GOOD_KUBELET, *kubelet)
    errors = check(kubelet, [], TOPO)
    assert any(fragment in e for e in errors), errors


@pytest.mark.parametrize(
    "kubelet",
    [
        # the cpu part of kube/system-reserved satisfies the static policy without reserved-cpus
        ["reserved-cpus", "system-reserved=cpu=1,memory=1Gi"],
        ["reserved-cpus", "kube-reserved=cpu=500m,memory=1Gi"],
        # split cores are the kubelet's business only under full-pcpus-only
        ["reserved-cpus=0,4", "cpu-manager-policy-options"],
        ["reserved-cpus=0-1", "cpu-manager-policy-options=full-pcpus-only=false"],
        # 0-1,8-9 is two whole cores
        ["reserved-cpus=0-1,8-9"],
        # the none policy checks nothing about reserved-cpus
        ["cpu-manager-policy=none", "reserved-cpus=0,4,8,12,16"],
    ],
)
def test_cpu_manager_accepts(kubelet):
    assert check(replace(GOOD_KUBELET, *kubelet), [], TOPO) == []


# "It's legal to reserve CPUs which are not core siblings" (cpumanager policy_static.go): the kubelet
# starts with a split core, also under full-pcpus-only, and keeps the siblings out of exclusive use.
@pytest.mark.parametrize("reserved, siblings", [("0-1", "8-9"), ("0,4", "8,12")])
def test_a_split_core_is_accepted_with_a_warning(reserved, siblings):
    kubelet = replace(GOOD_KUBELET, "reserved-cpus=" + reserved)
    assert check(kubelet, [], TOPO) == []
    (warning,) = warnings(kubelet, TOPO)
    assert warning.startswith("reserved-cpus %s split physical cores: their siblings %s " % (reserved, siblings))
    assert "full-pcpus-only" in warning
    assert "share a core" in warnings(replace(kubelet, "cpu-manager-policy-options"), TOPO)[0]
    assert warnings(replace(kubelet, "cpu-manager-policy=none"), TOPO) == []
    assert warnings(GOOD_KUBELET, TOPO) == []


def test_split_core_is_judged_on_online_siblings_only():
    # A core whose sibling is offline is a whole core of one CPU.
    topo = topology(nodes=1, cores_per_node=2)
    topo["cpus_online"], topo["cpus_offline"] = "0-2", "3"
    topo["cores"][1] = [1]
    kubelet = ["cpu-manager-policy=static", "cpu-manager-policy-options=full-pcpus-only=true", "reserved-cpus=1"]
    assert check(kubelet, [], topo) == []


# ------------------------------------------------------------------ Topology Manager


@pytest.mark.parametrize(
    "kubelet, fragment",
    [
        (["topology-manager-policy=single-numa"], 'unknown policy: "single-numa"'),
        (["topology-manager-scope=Pod"], 'unknown scope: "Pod"'),
    ],
)
def test_topology_manager_names(kubelet, fragment):
    errors = check(replace(GOOD_KUBELET, *kubelet), [], TOPO)
    assert any(fragment in e for e in errors), errors


@pytest.mark.parametrize(
    "cpuless, kubelet, fragment",
    [
        (7, [], "unsupported on machines with more than 8 NUMA Nodes"),
        (7, ["topology-manager-policy=best-effort"], "unsupported on machines with more than 8 NUMA Nodes"),
        (7, ["topology-manager-policy-options=max-allowable-numa-nodes=8"], "unsupported on machines with more than 8 NUMA Nodes"),
        (9, ["topology-manager-policy-options=max-allowable-numa-nodes=10"], "unsupported on machines with more than 10 NUMA Nodes"),
        (7, ["topology-manager-policy-options=max-allowable-numa-nodes=9"], None),
        (7, ["topology-manager-policy=none"], None),
        (6, [], None),  # exactly 8 nodes: the default limit holds
    ],
)
def test_more_than_8_numa_nodes(cpuless, kubelet, fragment):
    topo = topology(cpuless=cpuless)
    errors = check(replace(GOOD_KUBELET, *kubelet), GOOD_KERNEL, topo)
    if fragment is None:
        assert errors == []
    else:
        assert any(fragment in e for e in errors), errors


@pytest.mark.parametrize(
    "kubelet, error",
    [
        # topologymanager NewPolicyOptions: the option may only raise the limit
        (["topology-manager-policy-options=max-allowable-numa-nodes=4"],
         'kubelet: the minimum value of "max-allowable-numa-nodes" should not be less than 8'),
        (["topology-manager-policy-options=max-allowable-numa-nodes=-1"],
         'kubelet: the minimum value of "max-allowable-numa-nodes" should not be less than 8'),
        (["topology-manager-policy-options=max-allowable-numa-nodes=lots"],
         'kubelet: unable to convert policy option to integer "max-allowable-numa-nodes": strconv.Atoi: parsing "lots": '
         "invalid syntax"),
        (["topology-manager-policy-options=max-allowable-numa-nodes=8"], None),
        (["topology-manager-policy-options=max-allowable-numa-nodes=+12"], None),
        # with the none policy the kubelet never reads the options
        (["topology-manager-policy=none", "topology-manager-policy-options=max-allowable-numa-nodes=4"], None),
    ],
)
def test_max_allowable_numa_nodes_is_at_least_8(kubelet, error):
    errors = check(replace(GOOD_KUBELET, *kubelet), GOOD_KERNEL, TOPO)
    assert errors == ([error] if error else [])


# ------------------------------------------------------------------ CPUs per core


@pytest.mark.parametrize(
    "cores, online, expected",
    [
        ([[c, c + 8] for c in range(8)], "0-15", 2),
        ([[c] for c in range(8)], "0-7", 1),
        # a hybrid CPU: 6 P-cores with SMT, 8 E-cores without: 20 CPUs / 14 cores = 1 (not the widest core's 2)
        ([[2 * c, 2 * c + 1] for c in range(6)] + [[12 + c] for c in range(8)], "0-19", 1),
        # a sibling offline: 15 CPUs / 8 cores = 1
        ([[0]] + [[c, c + 8] for c in range(1, 8)], "0-7,9-15", 1),
        ([[c, c + 16, c + 32, c + 48] for c in range(16)], "0-63", 4),  # SMT4 (POWER)
        ([], "0-3", 0),
    ],
)
def test_cpus_per_core_is_the_kubelets_machine_ratio(cores, online, expected):
    assert cpus_per_core({"cores": cores, "cpus_online": online}) == expected


# ------------------------------------------------------------------ Memory Manager


@pytest.mark.parametrize(
    "kubelet, fragment",
    [
        (["reserved-memory=0:memory=1274Mi;1:memory=1273Mi"],
         'the total amount "2670723072" of type "memory" is not equal to the value "2671771648" determined by Node '
         "Allocatable feature"),
        (["kube-reserved=memory=2Gi"], "is not equal to the value"),
        (["eviction-hard=memory.available<100Mi"], "is not equal to the value"),
        (["reserved-memory"], 'the total amount "0" of type "memory" is not equal to the value "2671771648"'),
        (["reserved-memory=0:memory=1274Mi;5:memory=1274Mi"], "references a NUMA node 5 that does not exist"),
        (["reserved-memory=0:memory=1274Mi,hugepages-1Gi=1Gi;1:memory=1274Mi"],
         'the total amount "1073741824" of type "hugepages-1Gi" is not equal to the value "0" determined by Node '
         "Allocatable feature"),
        (["reserved-memory=0=memory=1274Mi"], "the reserved memory has incorrect format"),
        (["reserved-memory=0:memory=lots"], "is not a memory quantity"),
    ],
)
def test_memory_manager_refusals(kubelet, fragment):
    errors = check(replace(GOOD_KUBELET, *kubelet), GOOD_KERNEL, TOPO)
    assert any(fragment in e for e in errors), errors


@pytest.mark.parametrize(
    "kubelet",
    [
        # without eviction-hard, RKE2's own evictionHard has no memory.available: nothing withheld
        ["eviction-hard", "reserved-memory=0:memory=1Gi;1:memory=1Gi"],
        # repeated reserved-memory flags accumulate
        ["reserved-memory=0:memory=1274Mi", "reserved-memory=1:memory=1274Mi"],
        # one node may carry it all
        ["reserved-memory=1:memory=2548Mi"],
        # no kube/system-reserved: only the eviction threshold
        ["kube-reserved", "system-reserved", "reserved-memory=0:memory=500Mi"],
        # the None policy ignores reserved-memory
        ["memory-manager-policy=None", "reserved-memory=7:memory=1Gi"],
    ],
)
def test_memory_manager_accepts(kubelet):
    base = [a for a in GOOD_KUBELET if not a.startswith("reserved-memory=")]
    flags = [a for a in kubelet if not a.startswith("reserved-memory=")]
    kubelet = replace(base, *flags) + [a for a in kubelet if a.startswith("reserved-memory=")]
    assert check(kubelet, GOOD_KERNEL, TOPO) == []


# --eviction-hard replaces the kubelet's whole default map: a flag without
# memory.available withholds no memory (it is not the default 100Mi).
# A percentage withholds that share of MemTotal, as float32 like the kubelet
# (128 GiB x float32(5)/100 = 6871947776 bytes); 0% and 100% are ignored.
@pytest.mark.parametrize(
    "eviction, reserved_memory, ok",
    [
        ("eviction-hard=nodefs.available<5%", "0:memory=1Gi;1:memory=1Gi", True),
        ("eviction-hard=nodefs.available<5%", "0:memory=1074Mi;1:memory=1074Mi", False),
        ("eviction-hard=", "0:memory=2Gi", True),
        ("eviction-hard=memory.available<5%", "0:memory=%d" % (2 * 1024 * MIB + 6871947776), True),
        ("eviction-hard=memory.available<5%", "0:memory=2Gi", False),
        ("eviction-hard=memory.available<0%", "0:memory=2Gi", True),
        ("eviction-hard=memory.available<100%", "0:memory=2Gi", True),
    ],
)
def test_eviction_part_of_the_memory_sum(eviction, reserved_memory, ok):
    kubelet = replace(GOOD_KUBELET, eviction, "reserved-memory=" + reserved_memory)
    errors = check(kubelet, GOOD_KERNEL, TOPO)
    if ok:
        assert errors == []
    else:
        assert any("is not equal to the value" in e for e in errors), errors


@pytest.mark.parametrize(
    "eviction, fragment",
    [
        ("eviction-hard=memory.available<0,nodefs.available<5%", "eviction threshold memory.available must be positive: 0"),
        ("eviction-hard=memory.available<500Mi,nodefs.available<0Gi", "eviction threshold nodefs.available must be positive: 0"),
        ("eviction-hard=memory.available<500Mi,imagefs.inodesFree<0", "eviction threshold imagefs.inodesFree must be positive: 0"),
    ],
)
def test_zero_eviction_thresholds_are_refused(eviction, fragment):
    errors = check(replace(GOOD_KUBELET, eviction, "memory-manager-policy=None"), GOOD_KERNEL, TOPO)
    assert errors == ["kubelet: " + fragment]


def test_static_memory_policy_needs_some_reserved_memory():
    kubelet = replace(GOOD_KUBELET, "kube-reserved", "system-reserved", "eviction-hard=nodefs.available<5%",
                      "reserved-memory")
    errors = check(kubelet, GOOD_KERNEL, TOPO)
    assert errors == ["kubelet: [memorymanager] you should specify the system reserved memory"]
    assert check(replace(kubelet, "memory-manager-policy=None"), GOOD_KERNEL, TOPO) == []


# ------------------------------------------------------------------ kernel isolation


@pytest.mark.parametrize(
    "kernel, fragment",
    [
        (["nohz_full=1-3,5-7,9-11"], "Housekeeping: nohz_full= must match isolcpus="),
        (["nohz_full="], "Housekeeping: nohz_full= must match isolcpus="),
        (["rcu_nocbs=1-15"], "Housekeeping: rcu_nocbs= must match isolcpus="),
        (["irqaffinity=0"], "irqaffinity=0 is not reserved-cpus=0,4,8,12"),
        (["isolcpus=managed_irq,2-3,5-7,9-11,13-15", "nohz_full=2-3,5-7,9-11,13-15", "rcu_nocbs=2-3,5-7,9-11,13-15"],
         "isolcpus=2-3,5-7,9-11,13-15 and reserved-cpus=0,4,8,12 do not split the online CPUs 0-15"),
        (["isolcpus=managed_irq,0-3,5-7,9-11,13-15", "nohz_full=0-3,5-7,9-11,13-15", "rcu_nocbs=0-3,5-7,9-11,13-15"],
         "do not split the online CPUs 0-15"),
    ],
)
def test_kernel_isolation_refusals(kernel, fragment):
    errors = check(GOOD_KUBELET, replace(GOOD_KERNEL, *kernel), TOPO)
    assert any(fragment in e for e in errors), errors


def test_missing_nohz_full_is_a_mismatch():
    kernel = [a for a in GOOD_KERNEL if not a.startswith("nohz_full=")]
    assert check(GOOD_KUBELET, kernel, TOPO) == ["kernel: Housekeeping: nohz_full= must match isolcpus="]


# Each message says whose rule it is: the kubelet's own words, or the kernel's.
@pytest.mark.parametrize(
    "kubelet, kernel, expected",
    [
        (["cpu-manager-policy=Static"], [], ['kubelet: [cpumanager] unknown policy: "Static"']),
        ([], ["rcu_nocbs=1-15"], ["kernel: Housekeeping: rcu_nocbs= must match isolcpus="]),
        ([], ["irqaffinity=0"], ["kernel: irqaffinity=0 is not reserved-cpus=0,4,8,12"]),
        # the kernel keeps the boot CPU for timekeeping: it never stays in nohz_full
        (["reserved-cpus=4,8,12"], ["isolcpus=managed_irq,0-3,5-7,9-11,13-15", "nohz_full=0-3,5-7,9-11,13-15",
                                    "rcu_nocbs=0-3,5-7,9-11,13-15", "irqaffinity=4,8,12"],
         ["kernel: NO_HZ: Clearing 0 from nohz_full range for timekeeping"]),
    ],
)
def test_refusals_name_the_component(kubelet, kernel, expected):
    kubelet_args = replace(GOOD_KUBELET, *kubelet)
    if kubelet == ["reserved-cpus=4,8,12"]:
        kubelet_args = replace(kubelet_args, "reserved-memory=1:memory=2548Mi")
    assert check(kubelet_args, replace(GOOD_KERNEL, *kernel), TOPO) == expected


@pytest.mark.parametrize(
    "kernel",
    [
        GOOD_KERNEL,
        replace(GOOD_KERNEL, "isolcpus=managed_irq,domain,1-3,5-7,9-11,13-15"),
        replace(GOOD_KERNEL, "isolcpus=1-3,5-7,9-11,13-15"),
        # the same set, written differently
        replace(GOOD_KERNEL, "nohz_full=1,2,3,5-7,9-11,13-15", "irqaffinity=0,4,8,12"),
        # no isolcpus: the isolation checks do not apply
        ["irqaffinity=0"],
    ],
)
def test_kernel_isolation_accepts(kernel):
    assert check(GOOD_KUBELET, kernel, TOPO) == []


# ====================================================================== node labels and taints
# Kubernetes validation (apimachinery IsQualifiedName, IsValidLabelValue; taints ParseTaint)
# and the kubelet's own rule for --node-labels in the kubernetes.io / k8s.io namespaces.

LONG_PREFIX = ".".join(["a" * 63] * 4)  # 255 characters: a DNS subdomain is at most 253
OK_PREFIX = ".".join(["a" * 63] * 3 + ["a" * 61])  # 253


@pytest.mark.parametrize(
    "label",
    [
        "gpu=true",
        "nvidia.com/gpu.present=true",
        "example.com/empty=",
        "a=b",
        "A_b.c-D=E_f.g-H",
        "x" * 63 + "=" + "y" * 63,
        OK_PREFIX + "/name=v",
        "node.kubernetes.io/role=gpu",
        "feature.node.kubernetes.io/pci-10de.present=true",
        "kubelet.kubernetes.io/x=y",
        "kubernetes.io/arch=amd64",
        "topology.kubernetes.io/zone=z1",
        "beta.kubernetes.io/instance-type=h100",
    ],
)
def test_valid_node_labels(label):
    assert node_label_error(label) is None


@pytest.mark.parametrize(
    "label, fragment",
    [
        ("bad label=x", "name part must consist of alphanumeric characters"),
        ("gpu", "must be key=value"),
        ("", "must be key=value"),
        ("=x", "name part must be non-empty"),
        ("-gpu=x", "name part must consist of alphanumeric characters"),
        ("gpu-=x", "name part must consist of alphanumeric characters"),
        ("x" * 64 + "=y", "name part must be no more than 63 characters"),
        (LONG_PREFIX + "/name=v", "prefix part must be no more than 253 characters"),
        ("Example.com/name=v", "prefix part a lowercase RFC 1123 subdomain"),
        ("/name=v", "prefix part must be non-empty"),
        ("a/b/c=v", "a qualified name must consist of"),
        ("gpu=" + "y" * 64, "must be no more than 63 characters"),
        ("gpu=a b", "a valid label must be an empty string or consist of alphanumeric characters"),
        ("gpu=a=b", "a valid label must be an empty string or consist of alphanumeric characters"),
        ("gpu=-x", "a valid label must be an empty string or consist of alphanumeric characters"),
        ("gpu=x,y=z", "a valid label must be an empty string or consist of alphanumeric characters"),
        ("node-role.kubernetes.io/worker=true", "unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels"),
        ("example.k8s.io/x=y", "unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels"),
    ],
)
def test_invalid_node_labels(label, fragment):
    error = node_label_error(label)
    assert error is not None and fragment in error, error


@pytest.mark.parametrize(
    "taint",
    [
        "nvidia.com/gpu=present:NoSchedule",
        "dedicated:NoExecute",
        "dedicated=:PreferNoSchedule",
        "CriticalAddonsOnly=true:NoExecute",
        "x" * 63 + "=" + "y" * 63 + ":NoSchedule",
    ],
)
def test_valid_node_taints(taint):
    assert node_taint_error(taint) is None


@pytest.mark.parametrize(
    "taint, fragment",
    [
        ("gpu=true", "no effect"),
        ("gpu", "no effect"),
        ("", "no effect"),
        ("gpu=true:", "effect '' is not one of NoSchedule, PreferNoSchedule, NoExecute"),
        ("gpu=true:noschedule", "effect 'noschedule' is not one of NoSchedule, PreferNoSchedule, NoExecute"),
        ("gpu=true:NoSchedule:NoExecute", "invalid taint spec"),
        ("gpu=a=b:NoSchedule", "invalid taint spec"),
        ("bad key=x:NoSchedule", "name part must consist of alphanumeric characters"),
        ("gpu=bad value:NoSchedule", "a valid label must be an empty string"),
        ("gpu=" + "v" * 64 + ":NoSchedule", "must be no more than 63 characters"),
        (LONG_PREFIX + "/k=v:NoSchedule", "prefix part must be no more than 253 characters"),
        (":NoSchedule", "name part must be non-empty"),
    ],
)
def test_invalid_node_taints(taint, fragment):
    error = node_taint_error(taint)
    assert error is not None and fragment in error, error


def test_a_garbled_policy_option_is_reported_not_raised():
    kubelet = GOOD_KUBELET + ["topology-manager-policy-options=max-allowable-numa-nodes=lots"]
    errors = check(kubelet, GOOD_KERNEL, TOPO)
    assert any("max-allowable-numa-nodes" in e and "lots" in e for e in errors), errors


def test_an_absurd_reserved_cpus_is_refused_fast(cost):
    with cost() as spent:
        errors = check(GOOD_KUBELET + ["reserved-cpus=0-4194303"], GOOD_KERNEL, TOPO)
    assert spent.bytes < 16 * 2 ** 20 and spent.cpu < 1.0, "the range was expanded (%d bytes, %.2f s)" % (spent.bytes, spent.cpu)
    assert any(e.startswith("kubelet: invalid reserved-cpus") for e in errors), errors
