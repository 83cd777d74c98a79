# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""prove.yml on a node whose GPUs are DRA devices and whose CPUs dra-driver-cpu hands out (planned with
rke2_numa_cpu_allocator=dra-driver-cpu), through both stand-ins for real: the probe takes a claim template of its own
(the plan's), goes through the scheduler (node affinity on its Node, the cordon tolerated), which allocates its claim;
the kubelet prepares it (dra.cpu's cpuset, the GPU's device node). Proven where the claim keeps GPU and CPUs on one
NUMA node; NOT PROVEN, naming both nodes, where a plan without the template's constraint lets them split. Node 0's GPU
is held by another workload's claim, so that the allocator's first choices split without the constraint."""

from __future__ import annotations

import json

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import dra_plan
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import dra_objects, kubeapi, needs_kubectl
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import make_node
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_dra_check import NODE, SPEC, numa_gpus, standin_node
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_first_roll import run
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_hostile_inventory import node_vars

pytestmark = needs_kubectl
DRA = {"cpu_allocator": "dra-driver-cpu", "cpu_manager_policy": "none", "memory_manager_policy": "None"}


def test_a_dra_probe_is_proven_with_the_plan_s_template_and_not_proven_naming_both_numa_nodes_without_its_constraint(tmp_path):
    root = make_node(tmp_path / NODE, **SPEC)
    topology = read_topology(str(root))
    plan = make_plan(topology, **DRA)   # prove.yml plans without the Node's version: the oldest minor, as here
    assert [t["name"] for t in plan["dra"]["templates"]] == ["rke2-numa-1gpu-6cpu"]
    gpus = numa_gpus(topology)
    with standin_node(tmp_path, root, plan, "all") as (cluster, node):
        # what the drivers publish (dra.cpu: the CPUs of each NUMA node but the reserved) and the classes dra.yaml names
        for plural, obj in dra_objects(root, NODE, cpu_capacity=6):
            if plural == "resourceslices":
                cluster.add_object(plural, obj)
        for obj in dra_plan.device_classes():
            cluster.add_object("deviceclasses", obj)
        assert cluster.kubectl("create", "namespace", "rke2-numa-probe").returncode == 0
        # another workload holds node 0's GPU
        cluster.add_object("resourceclaims", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "other-workload", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "rke2-numa-gpu"}}]}},
            "status": {"allocation": kubeapi.allocation_for(NODE, [
                {"request": "gpu", "driver": "gpu.nvidia.com", "pool": NODE, "device": "gpu-%d" % gpus[0]["minor"]}])}})
        hosts = {NODE: node_vars(root, rke2_numa_kubelet_dir=node.kubelet_dir, rke2_numa_prove=True, **dict(("rke2_numa_" + k, v) for k, v in DRA.items()))}

        out, text = run(cluster, tmp_path, "prove.yml", hosts)
        assert out.returncode == 0, text[-4000:]
        assert "proven: NUMA node 1: exclusive CPUs " in text and "(dra.cpu, by its claim)" in text, text[-4000:]
        assert "GPU %s" % gpus[1]["address"] in text
        created = [c for c in cluster.calls() if c["method"] == "POST" and "resourceclaimtemplates" in c["path"]]
        assert len(created) == 1 and "/namespaces/rke2-numa-probe/" in created[0]["path"]
        left = json.loads(cluster.kubectl("get", "pods,resourceclaims,resourceclaimtemplates", "-n", "rke2-numa-probe", "-o", "json").stdout)
        assert left["items"] == []   # the probe, its template and the claim made from it are gone

        # the same plan without its template's constraint: the allocator takes node 1's GPU and node 0's CPUs
        loose = json.loads(json.dumps(plan))
        for entry in loose["dra"]["templates"]:
            entry["template"]["spec"]["spec"]["devices"]["constraints"] = []
        (tmp_path / "loose.json").write_text(json.dumps({"rke2_numa_plan": loose}))
        out, text = run(cluster, tmp_path, "prove.yml", hosts, "-e", "@%s" % (tmp_path / "loose.json"))
        assert out.returncode != 0, text[-4000:]
        assert ("its CPUs (dra.cpu) are on NUMA node 0 and its GPU is not (%s on NUMA node 1): its claim did not keep them on one "
                "NUMA node" % gpus[1]["address"]) in text, text[-4000:]

        # a plan made for another minor is refused as not proven, saying why (the old prove.yml stopped at an
        # undefined rke2_numa_compliance)
        (tmp_path / "other.json").write_text(json.dumps({"rke2_numa_plan": make_plan(topology, kubernetes_version="1.35", **DRA)}))
        out, text = run(cluster, tmp_path, "prove.yml", hosts, "-e", "@%s" % (tmp_path / "other.json"))
        assert out.returncode != 0 and "is undefined" not in text, text[-4000:]
        assert "not proven: plan-host: the rke2_numa_plan given was made for Kubernetes 1.35, and this host's kubelet is 1.33" in text
