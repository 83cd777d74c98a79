# -*- coding: utf-8 -*-
"""plan.yml the DRA way: the claim templates it writes (dra.yaml) make the API stand-in's allocator - the scheduler's
structured allocator, tests/standins/kubeapi dra_allocate - put a pod's GPUs and CPUs on one NUMA node for every pod
shape that fits, also when the first node's devices are taken; a shape that fits no single node gets no template (a
warning), and is refused under strict fit, as on the kubelet path."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.tests.fixtures.gen_sysfs import make_spec, write_tree
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBEAPI_PATH, _load

KUBEAPI = _load("kubeapi_standin_for_dra_plan_playbook", KUBEAPI_PATH)
pytestmark = pytest.mark.skipif(KUBEAPI.celpy is None, reason="cel-python (the stand-in's CEL)")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAYBOOK = os.path.join(REPO, "playbooks", "plan.yml")
NUMA = "resource.kubernetes.io/numaNode"
HOST = "gpu-a"
DRA = {"rke2_numa_cpu_allocator": "dra-driver-cpu", "rke2_numa_cpu_manager_policy": "none", "rke2_numa_memory_manager_policy": "None"}
SHAPES = [{"name": "vllm-1", "cpu": 4, "memory": "16Gi", "gpus": 1}, {"name": "vllm-2", "cpu": 12, "memory": "32Gi", "gpus": 2},
          {"name": "too-wide", "cpu": 8, "memory": "8Gi", "gpus": 3}]


def plan(tmp_path, root, *extra, **variables):
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {HOST: dict(variables, rke2_numa_sysfs_root=str(root))}, "vars": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}))
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith("ANSIBLE_"))
    env.update(ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory), PLAYBOOK,
           "-e", "rke2_numa_plan_dir=%s" % (tmp_path / "plans")] + list(extra)
    return subprocess.run(cmd, env=env, cwd=str(tmp_path), capture_output=True, text=True, check=False)


def slices(topology):
    """What the drivers publish for the host: gpu.nvidia.com with KEP-6072's numaNode (sysfs'), dra.cpu grouped by NUMA
    node (its CPUs a consumable capacity, the reserved ones left out, v0.2.0 --reserved-cpus)."""
    gpus = [d for d in topology["pci_devices"] if d["kind"] == "gpu"]
    gpu = {"spec": {"driver": "gpu.nvidia.com", "nodeName": HOST, "pool": {"name": HOST, "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": "gpu-%d" % i, "attributes": {"type": {"string": "gpu"}, NUMA: {"int": g["numa_node"]}}}
                                for i, g in enumerate(gpus)]}}
    cpu = {"spec": {"driver": "dra.cpu", "nodeName": HOST, "pool": {"name": HOST, "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": "cpudevnuma%03d" % int(n["id"]), "allowMultipleAllocations": True,
                                 "attributes": {NUMA: {"int": int(n["id"])}, "dra.cpu/numaNodeID": {"int": int(n["id"])}},
                                 "capacity": {"dra.cpu/cpu": {"value": "14"}}} for n in topology["numa_nodes"]]}}
    return [gpu, cpu]


def numa_of(result, published):
    device = next(d for s in published for d in s["spec"]["devices"] if d["name"] == result["device"] and s["spec"]["driver"] == result["driver"])
    return device["attributes"][NUMA]["int"]


@pytest.fixture(scope="module")
def machine(tmp_path_factory):
    """2 sockets x 8 cores x 2 threads, two GPUs on each NUMA node."""
    root = tmp_path_factory.mktemp("machine")
    write_tree(make_spec(sockets=2, cores_per_socket=8, threads=2, gpus_per_node=2), str(root))
    return root


def test_every_template_keeps_gpus_and_cpus_on_one_numa_node_and_a_shape_that_fits_none_has_none(tmp_path, machine):
    result = plan(tmp_path, machine, rke2_numa_pod_shapes=SHAPES, **DRA)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING: pod shape too-wide (cpu=8, memory=8.0Gi, gpus=3, hugepages=0Mi) fits on no NUMA node" in result.stdout
    assert "rke2-numa-vllm-1: 1 GPU, 4 CPU, on NUMA node 0,1" in result.stdout
    docs = [d for d in yaml.safe_load_all((tmp_path / "plans" / "dra.yaml").read_text()) if d]
    classes = dict((d["metadata"]["name"], d) for d in docs if d["kind"] == "DeviceClass")
    templates = dict((d["metadata"]["name"], d) for d in docs if d["kind"] == "ResourceClaimTemplate")
    assert sorted(templates) == ["rke2-numa-vllm-1", "rke2-numa-vllm-2"]
    published = slices(read_topology(str(machine)))
    gpus_on_0 = [("gpu.nvidia.com", HOST, "gpu-0"), ("gpu.nvidia.com", HOST, "gpu-1")]
    for name, template in sorted(templates.items()):
        claim = {"spec": template["spec"]["spec"]}
        for in_use, expected in (((), 0), (gpus_on_0[:1], 0 if name == "rke2-numa-vllm-1" else 1), (gpus_on_0, 1)):
            got = KUBEAPI.dra_allocate(claim, classes, published, HOST, in_use=list(in_use))
            assert sorted(r["request"] for r in got) == ["cpu"] + ["gpu"] * (1 if name == "rke2-numa-vllm-1" else 2), (name, got)
            assert set(numa_of(r, published) for r in got) == {expected}, (name, in_use, got)
        # the same requests without the constraint: the allocator takes the first free devices, on two nodes
        loose = {"spec": {"devices": dict(template["spec"]["spec"]["devices"], constraints=[])}}
        split = KUBEAPI.dra_allocate(loose, classes, published, HOST, in_use=gpus_on_0[:1])
        if name == "rke2-numa-vllm-1":
            assert set(numa_of(r, published) for r in split) == {0}
        else:
            assert set(numa_of(r, published) for r in split) == {0, 1}, split


def test_strict_fit_refuses_the_shape_that_fits_no_single_numa_node_and_the_kubelet_allocator_plans_no_template(tmp_path, machine):
    refused = plan(tmp_path, machine, "-e", "rke2_numa_strict_fit=true", rke2_numa_pod_shapes=SHAPES, **DRA)
    assert refused.returncode != 0
    assert "pod-shapes: pod shape too-wide (cpu=8, memory=8.0Gi, gpus=3, hugepages=0Mi) fits on no NUMA node" in refused.stdout
    kubelet = plan(tmp_path, machine, rke2_numa_pod_shapes=SHAPES)
    assert kubelet.returncode == 0, kubelet.stdout + kubelet.stderr
    text = (tmp_path / "plans" / "dra.yaml").read_text()
    assert [d for d in yaml.safe_load_all(text) if d] == []
    assert "#   gpu-a: no templates -\n#     the kubelet hands out exclusive CPUs (rke2_numa_cpu_allocator=kubelet)" in text


def test_dra_driver_cpu_beside_the_static_cpu_manager_is_refused_before_any_file_is_written(tmp_path, machine):
    refused = plan(tmp_path, machine, rke2_numa_cpu_allocator="dra-driver-cpu", rke2_numa_memory_manager_policy="None")
    assert refused.returncode != 0
    assert "cpu-allocator: rke2_numa_cpu_allocator=dra-driver-cpu needs rke2_numa_cpu_manager_policy=none, and it is static" in refused.stdout
    assert not (tmp_path / "plans").exists()
