# -*- coding: utf-8 -*-
from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.filter.topology_table import topology_table
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
