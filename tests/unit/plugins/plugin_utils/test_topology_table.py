# -*- coding: utf-8 -*-
from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.filter.topology_table import topology_table
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.topology_table import cpus_cell
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs


def test_table_of_a_gpu_server(tmp_path):
    spec = gen_sysfs.make_spec(sockets=2, cores_per_socket=4, threads=2, gpus_per_node=2, nics_per_node=1,
                               gpu_numa_unknown=(1,), cpuless_nodes=1, cpuless_memory_kb=96 * 1024 * 1024)
    spec["nodes"][0]["hugepages"] = {1048576: 4}
    text = topology_table(read_topology(gen_sysfs.write_tree(spec, str(tmp_path / "r"))))
    lines = text.splitlines()
    assert lines[0].startswith("3 NUMA nodes (2 with CPUs), 16 CPUs online in 8 cores (SMT on)")
    assert lines[1].split() == ["node", "CPUs", "cores", "memory", "hugepages", "GPUs", "NICs"]
    assert lines[2].split()[:5] == ["0", "0-3,8-11", "4", "64.0Gi", "4x1Gi"]
    assert lines[4].split()[:5] == ["2", "(no", "CPUs)", "0", "96.0Gi"]
    assert "(from local_cpulist; the kernel says -1)" in text


def test_rejects_what_is_not_a_topology():
    with pytest.raises(AnsibleFilterError, match="expects the 'topology' dict"):
        topology_table({"failed": True})


def test_hugepage_sizes_are_named_like_the_kubelet(tmp_path):
    # arm64: 64K pages on a 4K kernel, 512M and 16G pages on a 64K kernel
    spec = gen_sysfs.make_spec(sockets=1, cores_per_socket=4, threads=1)
    spec["hugepage_sizes"] = [64, 2048, 524288, 1048576, 16777216]
    spec["nodes"][0]["hugepages"] = {64: 8, 2048: 512, 524288: 2, 1048576: 4, 16777216: 1}
    text = topology_table(read_topology(gen_sysfs.write_tree(spec, str(tmp_path / "r"))))
    assert text.splitlines()[2].split()[4:9] == ["8x64Ki", "512x2Mi", "2x512Mi", "4x1Gi", "1x16Gi"]


def test_one_node_one_cpu_is_singular(tmp_path):
    # used to say "1 NUMA nodes (1 with CPUs), 2 CPUs online in 1 cores"
    spec = gen_sysfs.make_spec(sockets=1, cores_per_socket=1, threads=2)
    line = topology_table(read_topology(gen_sysfs.write_tree(spec, str(tmp_path / "r")))).splitlines()[0]
    assert line.startswith("1 NUMA node (1 with CPUs), 2 CPUs online in 1 core (SMT on)"), line


def test_round_robin_cpus_are_compressed(tmp_path):
    # a round-robin BIOS numbers the CPUs of a node 0,2,4,...: the column used to be 140 characters wide
    topo = {"cpus_online": "0-95", "cores": [[c, c + 48] for c in range(48)],
            "numa_nodes": [{"id": n, "has_cpu": True, "memory_kb": 1024,
                            "cpus": ",".join(str(c) for c in range(n, 96, 2))} for n in (0, 1)],
            "pci_devices": []}
    lines = topology_table(topo).splitlines()
    assert lines[2].split()[:3] == ["0", "0,2,...,94", "24"]
    assert lines[3].split()[:2] == ["1", "1,3,...,95"]
    assert max(len(line) for line in lines) < 100


@pytest.mark.parametrize("cpus, cell", [
    ("0-55,112-167", "0-55,112-167"), ("0,2,48,50", "0,2,48,50"), ("1,3,5,7,9-12", "1,3,5,7,9-12"),
    ("0,24,48,72,96", "0,24,...,96"), ("", ""),
    (",".join(str(c) for c in list(range(4, 47, 2)) + list(range(52, 95, 2))), "4,6,...,46,52,54,...,94"),
])
def test_cpus_cell_keeps_the_set(cpus, cell):
    assert cpus_cell(cpus) == cell


def test_gpu_without_device_id_or_driver(tmp_path):
    # used to print "device None driver -"
    topo = {"cpus_online": "0-1", "cores": [[0], [1]],
            "numa_nodes": [{"id": 0, "has_cpu": True, "memory_kb": 1024, "cpus": "0-1"}],
            "pci_devices": [{"kind": "gpu", "address": "0000:18:00.0", "vendor": "0x10de", "device": None,
                             "driver": None, "numa_node": 0}]}
    text = topology_table(topo)
    assert "GPU 0000:18:00.0 (0x10de, no driver bound): node 0" in text.splitlines()
    assert "None" not in text


def test_warnings_can_be_left_to_the_module():
    topo = {"cpus_online": "0", "cores": [[0]], "warnings": ["GPU x: numa_node -1"],
            "numa_nodes": [{"id": 0, "has_cpu": True, "memory_kb": 1024, "cpus": "0"}], "pci_devices": []}
    assert "WARNING: GPU x: numa_node -1" in topology_table(topo)
    assert "WARNING" not in topology_table(topo, warnings=False)
