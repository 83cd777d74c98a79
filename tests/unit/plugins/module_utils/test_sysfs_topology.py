# -*- coding: utf-8 -*-
"""The topology reader against real machines (hwloc's dumps), our sample GPU
servers, and hand-made edge cases; hwloc's lstopo is the independent oracle:
its answers for the dumps and samples saved (tests/fixtures/lstopo, make
hwloc-refs), run live on the generated GB200 trees and two dumps."""

from __future__ import annotations

import os
import re
import shutil

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import parse_cpulist
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import (
    TopologyError,
    classify_pci,
    device_numa_node,
    parse_meminfo,
    read_topology,
)

from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs
from ansible_collections.maitred.rke2_numa.tests.fixtures import lstopo_refs
from ansible_collections.maitred.rke2_numa.tests.fixtures.hwloc_dumps import HWLOC_DUMPS

# Where lstopo and the kernel's own files disagree on purpose, and why we follow
# the kernel: the kubelet (cadvisor) reads the same sysfs files we do.
NODES_HWLOC_DROPS = {
    # Every node's cpulist says 0-7 (a BIOS bug); hwloc keeps one node, the kernel
    # (and the kubelet) see 8; we report 8 and warn that CPUs are on several nodes.
    "8em64t-2s2ca2c-buggynuma": {1, 2, 3, 4, 5, 6, 7},
    # Nodes 4 and 5 overlap nodes 1 and 3 in the kernel's cpulists; hwloc drops them.
    "fakeheterocpunuma": {4, 5},
}
CORES_DIFFER = {
    # AMD Bulldozer: the kernel lists both integer cores of a compute unit as
    # thread siblings (core_id equal); hwloc splits them from CPUID data. The
    # kubelet groups by the kernel's core ids, so we do too.
    "64amd64-4s2n4ca2co": "kernel siblings",
    # No core_id or thread_siblings at all: hwloc makes no Core objects; we make
    # each CPU a core of its own.
    "4fake-4gr1nu1pu": "no core info",
}


def lstopo(root):
    """Run hwloc's lstopo on a tree now (see tests/fixtures/lstopo_refs.py)."""
    if shutil.which(lstopo_refs.LSTOPO) is None:
        pytest.fail("lstopo-no-graphics is missing: install Debian's hwloc-nox (make deps does)")
    return lstopo_refs.lstopo(root)


def check_invariants(topo):
    online = set(parse_cpulist(topo["cpus_online"]))
    offline = set(parse_cpulist(topo["cpus_offline"]))
    assert online and not online & offline
    assert topo["cpu_count"] == len(online)
    in_cores = [c for core in topo["cores"] for c in core]
    assert sorted(in_cores) == sorted(online), "cores must partition the online CPUs"
    ids = [n["id"] for n in topo["numa_nodes"]]
    assert ids == sorted(set(ids))
    for node in topo["numa_nodes"]:
        cpus = set(parse_cpulist(node["cpus"]))
        assert cpus <= online
        assert node["has_cpu"] == bool(cpus) and node["cpu_count"] == len(cpus)
        assert node["memory_kb"] >= 0
    for dev in topo["pci_devices"]:
        assert dev["kind"] in ("gpu", "nic")
        assert dev["numa_node"] is None or dev["numa_node"] in ids


def compare_with_lstopo(name, root, live=False):
    """read_topology against lstopo: its saved answer for a dump or sample (make hwloc-refs), or run now."""
    topo = read_topology(root)
    check_invariants(topo)
    hw = lstopo(root) if live else lstopo_refs.saved(name)
    assert hw["pus"] == set(parse_cpulist(topo["cpus_online"]))
    dropped = NODES_HWLOC_DROPS.get(name, set())
    mine = {n["id"]: n for n in topo["numa_nodes"]}
    assert set(hw["nodes"]) == set(mine) - dropped
    for nid, (cpus, memory_kb) in hw["nodes"].items():
        assert mine[nid]["memory_kb"] == memory_kb, "node %d memory" % nid
        if mine[nid]["has_cpu"]:
            assert set(parse_cpulist(mine[nid]["cpus"])) == cpus, "node %d CPUs" % nid
        # else: a CPU-less memory node. hwloc attaches it to the CPUs nearest to it
        # (a locality); the kernel's node holds no CPU, and that is what the kubelet sees.
    if dropped:
        assert any("more than one NUMA node" in w for w in topo["warnings"])
    if name in CORES_DIFFER:
        assert hw["cores"] != sorted(topo["cores"])
    else:
        assert hw["cores"] == sorted(topo["cores"])
    marked = {n["id"]: n["gpu_memory_source"] for n in topo["numa_nodes"] if n["gpu_memory"]}
    assert hw["gpu_memory"] <= set(marked), "hwloc's GPUMemory nodes"
    # beyond hwloc's rule (the NVIDIA driver's numa_status) only on other evidence
    assert all(marked[nid] != "nvidia_numa_status" for nid in set(marked) - hw["gpu_memory"])
    packaged = sorted(c for p in topo["packages"] for c in parse_cpulist(p["cpus"]))
    assert packaged == sorted(parse_cpulist(topo["cpus_online"])), "packages must partition the online CPUs"
    return topo


@pytest.mark.parametrize("name", HWLOC_DUMPS)
def test_hwloc_dump_agrees_with_lstopo(name, hwloc_root):
    compare_with_lstopo(name, hwloc_root(name))


def test_every_dump_and_sample_has_a_saved_lstopo_answer():
    assert sorted(f[:-len(".json")] for f in os.listdir(lstopo_refs.REFS_DIR) if f.endswith(".json")) == \
        sorted(HWLOC_DUMPS + list(gen_sysfs.samples())), "run make hwloc-refs"


@pytest.mark.parametrize("name", ["nvidiagpunumanodes", "256ppc-8n8s4t"])
def test_saved_lstopo_answers_are_what_lstopo_says_now(name, hwloc_root):
    """The live oracle, on a dump with GPU memory nodes and a big one: a new hwloc that answers
    differently fails here (then check and run make hwloc-refs)."""
    assert lstopo(hwloc_root(name)) == lstopo_refs.saved(name)


@pytest.fixture(scope="module")
def samples_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("samples")
    gen_sysfs.main(["--out", str(out)])
    return out


@pytest.mark.parametrize("name", sorted(gen_sysfs.samples()))
def test_sample_machine_agrees_with_lstopo(name, samples_dir):
    compare_with_lstopo(name, str(samples_dir / name))


def test_dgx_h100_sample(samples_dir):
    topo = read_topology(str(samples_dir / "dgx-h100"))
    assert [(n["id"], n["cpus"]) for n in topo["numa_nodes"]] == [(0, "0-55,112-167"), (1, "56-111,168-223")]
    assert topo["smt_active"] and len(topo["cores"]) == 112
    assert topo["cores"][0] == [0, 112]
    assert topo["packages"] == [{"id": 0, "cpus": "0-55,112-167"}, {"id": 1, "cpus": "56-111,168-223"}]
    gpus = [d for d in topo["pci_devices"] if d["kind"] == "gpu"]
    assert [d["numa_node"] for d in gpus] == [0] * 4 + [1] * 4
    assert all(d["vendor"] == "0x10de" for d in gpus)
    assert len([d for d in topo["pci_devices"] if d["kind"] == "nic"]) == 8
    assert topo["kernel_release"] == "6.8.0-45-generic" and topo["warnings"] == []


def test_roundrobin_siblings_are_not_adjacent(samples_dir):
    topo = read_topology(str(samples_dir / "dell-roundrobin"))
    assert topo["numa_nodes"][0]["cpus"].startswith("0,2,4,")
    assert topo["cores"][0] == [0, 48]
    assert topo["cores"][1] == [1, 49] and "1" in topo["numa_nodes"][1]["cpus"].split(",")
    assert topo["packages"][1]["cpus"].startswith("1,3,5,")
    derived = [d for d in topo["pci_devices"] if d["numa_node_source"] == "local_cpus"]
    assert [(d["address"], d["numa_node"]) for d in derived] == [("0000:48:00.0", 1)]


def test_grace_hopper_cpuless_nodes(samples_dir):
    topo = read_topology(str(samples_dir / "grace-hopper"))
    nodes = topo["numa_nodes"]
    assert len(nodes) == 9 and [n["has_cpu"] for n in nodes] == [True] + [False] * 8
    assert nodes[1]["memory_kb"] == 96 * 1024 * 1024 and not nodes[2]["has_memory"]
    assert topo["smt_active"] is False and len(topo["cores"]) == 72
    assert topo["hugepage_sizes_kb"] == [2048, 524288, 16777216]


def test_nvidia_gpu_memory_nodes_are_marked(hwloc_root):
    # POWER9 + 6 V100 over NVLink 2.0: each GPU's HBM is a CPU-less node (250-255) that the
    # NVIDIA driver names in /proc/driver/nvidia/gpus/<address>/numa_status
    topo = compare_with_lstopo("nvidiagpunumanodes", hwloc_root("nvidiagpunumanodes"), live=True)
    marks = dict((n["id"], (n["gpu_memory"], n["gpu_memory_source"])) for n in topo["numa_nodes"])
    assert marks == dict([(0, (False, None)), (8, (False, None))]
                         + [(nid, (True, "nvidia_numa_status")) for nid in range(250, 256)])


@pytest.mark.parametrize("name", ["nvidia-dgx-gb10", "fakememinitiators-1np2c+1npp+gi", "memorysidecaches",
                                  "32em64t-2n8c+dax+nvme+mic+dimms", "fakeheteromemtiers"])
def test_cpuless_nodes_without_gpu_evidence_are_not_gpu_memory(hwloc_root, name):
    # GB10 runs its GPU memory driver-managed (one node); the others have CPU-less HBM, NVDIMM,
    # CXL or generic-initiator memory but no GPU: none of it is a GPU's memory
    topo = read_topology(hwloc_root(name))
    assert [n["id"] for n in topo["numa_nodes"] if n["gpu_memory"]] == []
    assert all(n["gpu_memory_source"] is None for n in topo["numa_nodes"])


def _gb200(tmp_path, evidence):
    # 2 Grace CPU nodes + 4 GPUs x 8 CPU-less nodes (HBM on the first of each, the rest for MIG)
    spec = gen_sysfs.make_spec(sockets=2, cores_per_socket=4, threads=1, gpus_per_node=2, gpu_memory_nodes=8,
                               gpu_memory_kb=180 * gen_sysfs.KB_PER_GB, gpu=gen_sysfs.GPU_GH200,
                               gpu_memory_evidence=evidence)
    return gen_sysfs.write_tree(spec, str(tmp_path / "gb200"))


@pytest.mark.parametrize(
    "evidence, marked",
    [
        (("numa_status", "generic_initiator"),
         dict((nid, "nvidia_numa_status" if nid in (2, 10, 18, 26) else "generic_initiator") for nid in range(2, 34))),
        (("numa_status",), dict((nid, "nvidia_numa_status") for nid in (2, 10, 18, 26))),
        (("generic_initiator",), dict((nid, "generic_initiator") for nid in range(2, 34))),
        (("numa_node",), dict((nid, "gpu_numa_node") for nid in (2, 10, 18, 26))),
        ((), {}),
    ],
    ids=["driver-and-srat", "driver", "srat", "gpu-numa-node", "none"],
)
def test_coherent_gpu_memory_nodes_are_marked_from_sysfs(tmp_path, evidence, marked):
    root = _gb200(tmp_path, evidence)
    topo = compare_with_lstopo("gb200", root, live=True)
    assert len(topo["numa_nodes"]) == 34
    assert dict((n["id"], n["gpu_memory_source"]) for n in topo["numa_nodes"] if n["gpu_memory"]) == marked
    assert not [n for n in topo["numa_nodes"] if n["has_cpu"] and n["gpu_memory"]]


def test_generic_initiators_without_a_gpu_are_not_gpu_memory(tmp_path):
    root = _gb200(tmp_path, ("generic_initiator",))
    for address in ("0000:18:00.0", "0000:28:00.0", "0000:38:00.0", "0000:48:00.0"):
        os.unlink(os.path.join(root, "sys/bus/pci/devices", address))
    assert [n["id"] for n in read_topology(root)["numa_nodes"] if n["gpu_memory"]] == []


def test_offline_cpus_are_reported_not_counted(samples_dir):
    topo = read_topology(str(samples_dir / "l40s-offline"))
    assert topo["cpus_offline"] == "31,63"
    assert topo["cpus_online"] == "0-30,32-62"
    assert "31" not in topo["numa_nodes"][0]["cpus"].split(",")


def _tree(tmp_path, **kw):
    cpulist_files = kw.pop("cpulist_files", True)
    distance_files = kw.pop("distance_files", True)
    spec = gen_sysfs.make_spec(**kw)
    return gen_sysfs.write_tree(spec, str(tmp_path / "root"), cpulist_files=cpulist_files,
                                distance_files=distance_files), spec


def test_sparse_node_ids(tmp_path):
    root, _spec = _tree(tmp_path, sockets=2, cores_per_socket=4, threads=2, node_ids=(0, 8))
    topo = read_topology(root)
    assert [n["id"] for n in topo["numa_nodes"]] == [0, 8]
    assert topo["numa_nodes"][1]["cpus"] == "4-7,12-15"
    assert topo["numa_nodes"][0]["distance"] == [10, 20]


def test_cpumap_only_and_no_distance(tmp_path):
    root, _spec = _tree(tmp_path, sockets=2, cores_per_socket=20, threads=2, cpulist_files=False, distance_files=False)
    assert not os.path.exists(os.path.join(root, "sys/devices/system/node/node0/cpulist"))
    topo = read_topology(root)
    assert [n["cpus"] for n in topo["numa_nodes"]] == ["0-19,40-59", "20-39,60-79"]
    assert [n["distance"] for n in topo["numa_nodes"]] == [None, None]


def test_offline_sibling_leaves_a_single_thread_core(tmp_path):
    root, _spec = _tree(tmp_path, sockets=1, cores_per_socket=4, threads=2, offline=(5,))
    topo = read_topology(root)
    assert topo["cores"] == [[0, 4], [1], [2, 6], [3, 7]]
    assert topo["cpus_offline"] == "5" and topo["numa_nodes"][0]["cpus"] == "0-4,6-7"


def test_no_online_file_uses_cpu_dirs(tmp_path):
    root, _spec = _tree(tmp_path, sockets=1, cores_per_socket=4, threads=1, offline=(2,))
    for name in ("online", "present", "offline"):
        os.unlink(os.path.join(root, "sys/devices/system/cpu", name))
    topo = read_topology(root)
    assert topo["cpus_online"] == "0-1,3" and topo["cpus_offline"] == "2"


def test_no_node_directory_is_one_node(tmp_path):
    root, _spec = _tree(tmp_path, sockets=1, cores_per_socket=2, threads=2)
    shutil.rmtree(os.path.join(root, "sys/devices/system/node"))
    topo = read_topology(root)
    assert [(n["id"], n["cpus"], n["memory_kb"]) for n in topo["numa_nodes"]] == [(0, "0-3", 64 * 1024 * 1024)]


def test_gpu_without_numa_node_or_locality_is_unknown_and_warned(tmp_path):
    root, _spec = _tree(tmp_path, sockets=2, cores_per_socket=2, threads=1, gpus_per_node=1)
    gpu = os.path.join(root, "sys/bus/pci/devices/0000:28:00.0")
    with open(os.path.join(gpu, "numa_node"), "w") as f:
        f.write("-1\n")
    with open(os.path.join(gpu, "local_cpulist"), "w") as f:
        f.write("0-3\n")  # every CPU: maps to two nodes
    topo = read_topology(root)
    dev = [d for d in topo["pci_devices"] if d["address"] == "0000:28:00.0"][0]
    assert dev["numa_node"] is None and dev["numa_node_source"] is None
    assert any("0000:28:00.0" in w and "no topology hint" in w for w in topo["warnings"])


def test_bmc_vga_is_not_a_gpu_and_nvidia_procfs_names_vendor(tmp_path):
    root, _spec = _tree(tmp_path, sockets=1, cores_per_socket=2, threads=1, gpus_per_node=1)
    topo = read_topology(root)
    assert [d["address"] for d in topo["pci_devices"] if d["kind"] == "gpu"] == ["0000:18:00.0"]
    os.unlink(os.path.join(root, "sys/bus/pci/devices/0000:18:00.0/vendor"))
    shutil.rmtree(os.path.join(root, "proc/driver/nvidia"))
    assert [d for d in read_topology(root)["pci_devices"] if d["kind"] == "gpu"] == []
    os.makedirs(os.path.join(root, "proc/driver/nvidia/gpus/0000:18:00.0"))
    assert [d["vendor"] for d in read_topology(root)["pci_devices"] if d["kind"] == "gpu"] == ["0x10de"]


def test_nvidia_gpus_carry_the_driver_s_uuid_and_device_minor(tmp_path):
    root, _spec = _tree(tmp_path, sockets=2, cores_per_socket=2, threads=1, gpus_per_node=1, nics_per_node=1)
    info = os.path.join(root, "proc/driver/nvidia/gpus/0000:18:00.0/information")
    with open(info) as f:
        text = f.read()
    with open(info, "w") as f:  # the driver's own layout: tabs after the colon
        f.write(re.sub(r"Device Minor:.*", "Device Minor: \t 7", re.sub(r"GPU UUID:.*", "GPU UUID: \t GPU-0a1b2c3d-0000-1111-2222-333344445555", text)))
    devices = dict((d["address"], d) for d in read_topology(root)["pci_devices"])
    assert devices["0000:18:00.0"]["uuid"] == "GPU-0a1b2c3d-0000-1111-2222-333344445555"
    assert devices["0000:18:00.0"]["minor"] == 7 and devices["0000:38:00.0"]["minor"] == 1
    assert devices["0000:38:00.0"]["uuid"].startswith("GPU-")  # the second socket's GPU (after its NIC)
    assert devices["0000:28:00.0"]["uuid"] is None and devices["0000:28:00.0"]["minor"] is None  # a NIC
    os.unlink(info)
    assert [(d["uuid"], d["minor"]) for d in read_topology(root)["pci_devices"] if d["address"] == "0000:18:00.0"] == [(None, None)]


def test_nul_bytes_in_files_are_ignored(tmp_path):
    root, _spec = _tree(tmp_path, sockets=1, cores_per_socket=2, threads=2)
    with open(os.path.join(root, "sys/devices/system/cpu/cpu0/topology/thread_siblings_list"), "w") as f:
        f.write("0,2\n\x00")
    assert read_topology(root)["cores"][0] == [0, 2]


def test_missing_cpu_directory_names_the_path(tmp_path):
    with pytest.raises(TopologyError, match=r"sys/devices/system/cpu does not exist"):
        read_topology(str(tmp_path))


def test_unparseable_cpulist_names_the_file(tmp_path):
    root, _spec = _tree(tmp_path, sockets=1, cores_per_socket=2, threads=1)
    with open(os.path.join(root, "sys/devices/system/node/node0/cpulist"), "w") as f:
        f.write("0-x\n")
    with pytest.raises(TopologyError, match=r"node0/cpulist: invalid cpulist"):
        read_topology(root)


def test_no_online_cpus_is_an_error(tmp_path):
    root, _spec = _tree(tmp_path, sockets=1, cores_per_socket=2, threads=1)
    with open(os.path.join(root, "sys/devices/system/cpu/online"), "w") as f:
        f.write("\n")
    with pytest.raises(TopologyError, match="no online CPUs"):
        read_topology(root)


@pytest.mark.parametrize(
    "vendor, pci_class, kind",
    [
        ("0x10de", "0x030200", "gpu"),
        ("0x10de", "0x030000", "gpu"),
        ("0x1002", "0x120000", "gpu"),
        ("0x8086", "0x038000", None),  # display controller "other": not a compute GPU class
        ("0x1a03", "0x030000", None),  # ASPEED BMC
        ("0x15b3", "0x020700", "nic"),
        ("0x8086", "0x020000", "nic"),
        ("0x10de", "0x060400", None),  # PCIe bridge
        (None, None, None),
    ],
)
def test_classify_pci(vendor, pci_class, kind):
    assert classify_pci(vendor, pci_class) == kind


NODE_CPUS = {0: {0, 1, 2, 3}, 1: {4, 5, 6, 7}, 2: set()}


@pytest.mark.parametrize(
    "sysfs_node, local, expected",
    [
        (1, [0], (1, "numa_node")),  # the kernel's word wins
        (2, [], (2, "numa_node")),  # a CPU-less node is a real node
        (-1, [4, 5], (1, "local_cpus")),
        (None, [0, 1, 2, 3], (0, "local_cpus")),
        (7, [0], (0, "local_cpus")),  # a node id that does not exist
        (-1, [3, 4], (None, None)),  # spans two nodes
        (-1, [], (None, None)),
    ],
)
def test_device_numa_node(sysfs_node, local, expected):
    assert device_numa_node(sysfs_node, local, NODE_CPUS) == expected


def test_parse_meminfo():
    text = "Node 3 MemTotal:       16777216 kB\nNode 3 MemFree:  100 kB\nNode 3 HugePages_Total:     4\n"
    assert parse_meminfo(text) == {"MemTotal": 16777216, "MemFree": 100, "HugePages_Total": 4}
    assert parse_meminfo("MemTotal:  2048 kB\nHugepagesize:  2048 kB\n") == {"MemTotal": 2048, "Hugepagesize": 2048}
    assert parse_meminfo(None) == {}


# ---------------------------------------------------------------- memory that cannot be read is refused
# A node whose meminfo cannot be read used to count as 0 bytes: the planner then put all
# reserved memory on the other node, or divided by zero. The kernel always writes
# nodeN/meminfo with a "Node N MemTotal:" line (drivers/base/node.c), so anything else
# is a broken tree.


def _meminfo_dir(path):
    os.unlink(path)
    os.mkdir(path)  # read() fails with EISDIR: unreadable, as a file without permission is for root too


def _meminfo_text(text):
    def write(path):
        with open(path, "wb") as f:
            f.write(text)
    return write


@pytest.mark.parametrize(
    "damage, fragment",
    [
        (os.unlink, "node1/meminfo: cannot be read"),
        (_meminfo_dir, "node1/meminfo: cannot be read"),
        (_meminfo_text(b""), "node1/meminfo: no 'Node 1 MemTotal' line"),
        (_meminfo_text(b"Node 1 MemFree:  100 kB\n"), "node1/meminfo: no 'Node 1 MemTotal' line"),
        (_meminfo_text(b"Node 1 MemTotal:  lots kB\n"), "node1/meminfo: no 'Node 1 MemTotal' line"),
        (_meminfo_text(b"\xff\xfe garbage \x00\x01"), "node1/meminfo: cannot be read"),
        (_meminfo_text(b"Node 0 MemTotal:  67108864 kB\n"), "node1/meminfo: no 'Node 1 MemTotal' line"),
    ],
    ids=["missing", "unreadable", "empty", "no-memtotal", "garbage-number", "binary", "other-node"],
)
def test_node_meminfo_that_cannot_be_read_is_refused(tmp_path, damage, fragment):
    root, _spec = _tree(tmp_path, sockets=2, cores_per_socket=2, threads=1)
    damage(os.path.join(root, "sys/devices/system/node/node1/meminfo"))
    with pytest.raises(TopologyError) as info:
        read_topology(root)
    assert fragment in str(info.value)


def test_node_meminfo_of_zero_is_a_node_without_memory(tmp_path):
    # a real state (memory hot-removed, fake dumps, CPU-only nodes): read as 0, not refused
    root, _spec = _tree(tmp_path, sockets=2, cores_per_socket=2, threads=1)
    with open(os.path.join(root, "sys/devices/system/node/node1/meminfo"), "w") as f:
        f.write("Node 1 MemTotal:              0 kB\nNode 1 MemFree:               0 kB\n")
    node = read_topology(root)["numa_nodes"][1]
    assert (node["memory_kb"], node["has_memory"]) == (0, False)


def test_proc_meminfo_without_memtotal_is_refused_without_numa(tmp_path):
    root, _spec = _tree(tmp_path, sockets=1, cores_per_socket=2, threads=2)
    shutil.rmtree(os.path.join(root, "sys/devices/system/node"))
    with open(os.path.join(root, "proc/meminfo"), "w") as f:
        f.write("MemFree:  100 kB\n")
    with pytest.raises(TopologyError, match=r"proc/meminfo: no 'MemTotal' line"):
        read_topology(root)


def test_missing_proc_meminfo_without_numa_is_warned(tmp_path):
    # hwloc's 2ps3-2t dump holds no proc/meminfo (lstopo: memory unknown); a live kernel always has it
    root, _spec = _tree(tmp_path, sockets=1, cores_per_socket=2, threads=2)
    shutil.rmtree(os.path.join(root, "sys/devices/system/node"))
    os.unlink(os.path.join(root, "proc/meminfo"))
    topo = read_topology(root)
    assert topo["numa_nodes"][0]["memory_kb"] == 0
    assert any("proc/meminfo: missing" in w for w in topo["warnings"])


# ---------------------------------------------------------------- kernel limits
# cpu/online = 0-4194303 used to keep the reader busy for minutes (a file read per CPU).


def _write(root, rel, text):
    with open(os.path.join(root, rel), "w") as f:
        f.write(text)


def _node_dir(root, rel):
    os.rename(os.path.join(root, "sys/devices/system/node/node1"), os.path.join(root, "sys/devices/system/node", rel))


@pytest.mark.parametrize(
    "damage, fragment",
    [
        (lambda r: _write(r, "sys/devices/system/cpu/online", "0-4194303\n"), "cpu/online: "),
        (lambda r: _write(r, "sys/devices/system/cpu/online", "0-3,8192\n"), "cpu/online: "),
        (lambda r: _write(r, "sys/devices/system/cpu/present", "0-65535\n"), "cpu/present: "),
        (lambda r: _write(r, "sys/devices/system/cpu/isolated", "9000\n"), "cpu/isolated: "),
        (lambda r: _write(r, "sys/devices/system/node/node1/cpulist", "2-4194303\n"), "node1/cpulist: "),
        (lambda r: (os.unlink(os.path.join(r, "sys/devices/system/node/node1/cpulist")),
                    _write(r, "sys/devices/system/node/node1/cpumap", "ffffffff," * 300 + "0000000c\n")), "node1/cpumap: "),
        (lambda r: _write(r, "sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "0-4194303\n"),
         "cpu0/topology/thread_siblings_list: "),
        (lambda r: _node_dir(r, "node1024"), "node1024: NUMA node id 1024 is beyond the kernel's limit"),
        (lambda r: os.mkdir(os.path.join(r, "sys/devices/system/cpu/cpu8192")), "cpu8192: CPU id 8192 is beyond the kernel's limit"),
    ],
    ids=["online-huge", "online-8192", "present", "isolated", "node-cpulist", "node-cpumap", "siblings", "node-dir", "cpu-dir"],
)
def test_ids_beyond_the_kernel_limits_are_refused_fast(tmp_path, damage, fragment, cost):
    root, _spec = _tree(tmp_path, sockets=2, cores_per_socket=2, threads=1)
    damage(root)
    with cost() as spent, pytest.raises(TopologyError) as info:
        read_topology(root)
    assert spent.bytes < 16 * 2 ** 20 and spent.cpu < 1.0, "the ids were expanded (%d bytes, %.2f s)" % (spent.bytes, spent.cpu)
    assert fragment in str(info.value)
