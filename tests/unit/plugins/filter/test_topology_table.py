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
    assert lines[2].split()[:5] == ["0", "0-3,8-11", "4", "64.0Gi", "4x1G"]
    assert lines[4].split()[:5] == ["2", "(no", "CPUs)", "0", "96.0Gi"]
    assert "(from local_cpulist; the kernel says -1)" in text


def test_rejects_what_is_not_a_topology():
    with pytest.raises(AnsibleFilterError, match="expects the 'topology' dict"):
        topology_table({"failed": True})
