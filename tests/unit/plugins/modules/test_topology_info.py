# -*- coding: utf-8 -*-
"""topology_info as Ansible runs it: argument handling, check mode, failures."""

from __future__ import annotations

import os

import yaml

import pytest

from ansible_collections.maitred.rke2_numa.plugins.modules import topology_info
from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs
from ansible_collections.maitred.rke2_numa.tests.fixtures.module_run import run_module


def run(capsys, **args):
    return run_module(topology_info, capsys, args)


@pytest.mark.parametrize("check_mode", [False, True])
def test_reads_a_tree_and_never_changes(tmp_path, capsys, check_mode):
    root = gen_sysfs.write_tree(gen_sysfs.make_spec(sockets=2, cores_per_socket=4, gpus_per_node=1), str(tmp_path / "r"))
    code, result = run(capsys, sysfs_root=root, _ansible_check_mode=check_mode)
    assert code == 0 and result["changed"] is False
    topo = result["topology"]
    assert [n["cpus"] for n in topo["numa_nodes"]] == ["0-3,8-11", "4-7,12-15"]
    assert [d["numa_node"] for d in topo["pci_devices"] if d["kind"] == "gpu"] == [0, 1]


def test_warnings_reach_ansible(tmp_path, capsys, monkeypatch):
    spec = gen_sysfs.make_spec(sockets=2, cores_per_socket=2, threads=1, gpus_per_node=1)
    spec["pci"][0]["numa_node"] = -1
    spec["pci"][0]["local_cpus"] = [0, 1, 2, 3]
    root = gen_sysfs.write_tree(spec, str(tmp_path / "r"))
    warned = []
    monkeypatch.setattr(topology_info.AnsibleModule, "warn", lambda self, msg: warned.append(msg))
    code, result = run(capsys, sysfs_root=root)
    assert code == 0
    assert [w for w in warned if "no topology hint" in w] == [w for w in result["topology"]["warnings"] if "no topology hint" in w]
    assert len(warned) == 1


def test_bad_root_fails_naming_the_path(tmp_path, capsys):
    code, result = run(capsys, sysfs_root=str(tmp_path / "nowhere"))
    assert code == 1 and result["failed"] is True
    assert "nowhere/sys/devices/system/cpu does not exist" in result["msg"]
    assert "topology" not in result


@pytest.mark.parametrize(
    "path, text, fragment",
    [
        ("sys/devices/system/node/node1/meminfo", "Node 1 MemFree:  100 kB\n", "node1/meminfo: no 'Node 1 MemTotal' line"),
        ("sys/devices/system/node/node1/meminfo", None, "node1/meminfo: cannot be read"),
        ("sys/devices/system/cpu/online", "0-4194303\n", "cpu/online: "),
    ],
    ids=["no-memtotal", "missing-meminfo", "huge-online"],
)
def test_unusable_files_fail_the_task_naming_the_file(tmp_path, capsys, path, text, fragment):
    root = gen_sysfs.write_tree(gen_sysfs.make_spec(sockets=2, cores_per_socket=2, threads=1), str(tmp_path / "r"))
    if text is None:
        os.unlink(os.path.join(root, path))
    else:
        with open(os.path.join(root, path), "w") as f:
            f.write(text)
    code, result = run(capsys, sysfs_root=root)
    assert code == 1 and result["failed"] is True
    assert result["msg"].startswith("cannot read the topology: ") and fragment in result["msg"]
    assert "Traceback" not in result["msg"] and "topology" not in result


def test_gpu_memory_nodes_are_returned_and_documented(tmp_path, capsys):
    spec = gen_sysfs.make_spec(sockets=1, cores_per_socket=2, threads=1, gpus_per_node=1, gpu_memory_nodes=2,
                               gpu_memory_kb=1024 * 1024)
    code, result = run(capsys, sysfs_root=gen_sysfs.write_tree(spec, str(tmp_path / "r")))
    assert code == 0
    nodes = result["topology"]["numa_nodes"]
    assert [(n["id"], n["gpu_memory"], n["gpu_memory_source"]) for n in nodes] == [
        (0, False, None), (1, True, "nvidia_numa_status"), (2, True, "generic_initiator")]
    documented = yaml.safe_load(topology_info.RETURN)["topology"]["contains"]["numa_nodes"]["contains"]
    assert set(nodes[0]) == set(documented)
    assert documented["gpu_memory"]["type"] == "bool" and documented["gpu_memory_source"]["type"] == "str"
