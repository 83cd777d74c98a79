# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A slice of a sliced AWX job as AWX makes it (issue 53 item 2): its inventory holds only its own hosts - no RKE2
server among them - its extra vars are strings, it runs under ansible-runner, and kubectl runs in the execution
environment with AWX's Kubernetes bearer-token credential (rke2_numa_kubeconfig env:K8S_AUTH, the K8S_AUTH_* variables
AWX's injector sets). Against the API stand-in through the real kubectl, which verifies the stand-in's CA: the check
reads the cluster, counts the fleet by the cluster's GPU workers (not by the slice's inventory) and says it checked
1 of 3 - in its output and in its artifacts."""

from __future__ import annotations

import json
import os
import sys

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.tests.fixtures.awx_job import credential_env, run_job, start_job
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import ADMIN_TOKEN, KUBECTL, Cluster, lease_logging_kubectl, needs_kubectl, wait_for
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import make_node
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_hostile_inventory import REPO, SPEC, node_vars

pytestmark = [pytest.mark.integration, needs_kubectl]
GPU = {"nvidia.com/gpu": "1", "cpu": "8"}


@pytest.fixture
def cluster(tmp_path):
    """Three GPU workers, a server with a GPU, a worker without one."""
    server = Cluster(tmp_path, lease_namespace=True)
    for name in ("gpu-a", "gpu-b", "gpu-c"):
        server.add_node(name, ready=True, labels={"kubernetes.io/hostname": name}, allocatable=GPU, capacity=GPU)
    server.add_node("server-1", ready=True, labels={"node-role.kubernetes.io/control-plane": "true"}, allocatable=GPU, capacity=GPU)
    server.add_node("cpu-1", ready=True, labels={"kubernetes.io/hostname": "cpu-1"})
    yield server
    assert server.stop() == 0


def test_a_slice_without_a_server_checks_its_host_through_the_ee_and_counts_the_cluster_s_fleet(cluster, tmp_path):
    root = make_node(tmp_path / "gpu-a", **SPEC)
    inventory = tmp_path / "slice-1.yml"   # AWX's inventory of one slice: its own hosts, no server, no servers group
    inventory.write_text(yaml.safe_dump({"gpu": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                                                          "rke2_numa_kubectl": KUBECTL}, "hosts": {"gpu-a": node_vars(root)}}}))
    env = credential_env(cluster)
    extravars = {"rke2_numa_kubeconfig": "env:K8S_AUTH", "rke2_numa_server_group": "servers", "rke2_numa_audit_pods": "true",
                 "awx_job_id": "11"}
    result, stats = run_job(tmp_path / "runner", str(inventory), "check.yml", extravars, env=env)
    out = " ".join(result.stdout.read().split())
    assert result.rc == 0, out[-4000:]
    assert "This run checked 1 of the 3 hosts of the fleet" in out, out[-4000:]
    summary = stats["rke2_numa_fleet_11"]
    assert (summary["hosts"], summary["fleet_hosts"], summary["noncompliant"]) == (1, 3, 1), summary
    # the cluster was read with the credential (the admin's token here), through the EE's kubectl
    assert any(c["user"] == "system:admin" and "/nodes" in c["path"] for c in cluster.calls())
    assert ADMIN_TOKEN not in out


def test_two_slices_of_a_sliced_roll_share_one_lease_and_never_have_two_nodes_out(tmp_path):
    """The roll template sliced in two, as AWX runs it: two jobs of one workflow job (awx_workflow_job_id shared, an
    awx_job_id each), each with an inventory of its own GPU worker and no server, kubectl in the EE with the bearer
    token, extra vars as strings, rke2_numa_max_unavailable "1". They are one roll (awx-workflow-500) sharing its Lease
    and its cap exactly as two --limit halves do (test_coordinated_rolls::test_two_limit_halves_of_one_roll_never_have_two_nodes_out):
    while the first slice holds gpu-a's slot (stalled after its claim) the second slice's gpu-b waits; once the first
    ends the second takes the Lease and gpu-b gets the slot. Every Lease write the API accepted holds at most one slot;
    both slices start their node, say they checked 1 of the fleet, and the Lease is given back."""
    cluster, runs = Cluster(tmp_path, lease_namespace=True), {}
    try:
        for name in ("gpu-a", "gpu-b"):
            cluster.add_node(name, ready=True, labels={"kubernetes.io/hostname": name}, allocatable=GPU, capacity=GPU)
        writes_log, gate = tmp_path / "lease-writes", tmp_path / "gate"
        env = credential_env(cluster)
        for job, name, stall in (("501", "gpu-a", True), ("502", "gpu-b", False)):
            # the EE's kubectl, logging each Lease write the API answered (and its exit code); the first slice's stalls in
            # its second fleet read (the capacity read after its claim) until the gate opens
            count = tmp_path / (name + ".reads")
            script = lease_logging_kubectl(tmp_path / (name + "-kubectl"), writes_log, count, gate if stall else None)
            root = make_node(tmp_path / name, **SPEC)
            inventory = tmp_path / ("slice-%s.yml" % job)
            inventory.write_text(yaml.safe_dump({"gpu": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
                                                         "hosts": {name: node_vars(root)}}}))
            extravars = {"rke2_numa_kubeconfig": "env:K8S_AUTH", "rke2_numa_server_group": "servers", "rke2_numa_kubectl": script,
                         "rke2_numa_max_unavailable": "1", "rke2_numa_prove": "false", "awx_workflow_job_id": "500", "awx_job_id": job}
            # as AWX's worker runs a job: `ansible-runner run` in a private data dir of its own (env/extravars, env/envvars)
            private = tmp_path / ("runner-" + job)
            runs[job] = (start_job(private, job, os.path.join(REPO, "playbooks", "rolling.yml"), env, extravars, inventory),
                         private / "artifacts" / job / "stdout")
            if stall:   # the first slice claims gpu-a's slot and stalls in its capacity read
                assert wait_for(lambda: count.exists() and len(count.read_text().split()) >= 2, timeout=180), "the first slice reached its capacity read"

        def text(job):
            path = runs[job][1]
            return " ".join(path.read_text().split()) if path.exists() else ""

        assert wait_for(lambda: "waiting up to" in text("502"), timeout=240), text("502")[-3000:]
        assert ("waiting up to 780 s for the roll's Lease rke2-numa-system/rke2-numa-roll (read every 10 s): no slot for gpu-b: "
                "rke2_numa_max_unavailable 1 allows 1 Node out and 1 is out") in text("502"), text("502")[-3000:]
        held = json.loads(cluster.kubectl("get", "lease", "rke2-numa-roll", "-n", "rke2-numa-system", "-o", "json").stdout)
        slots = json.loads(held["metadata"]["annotations"]["rke2-numa.maitred.io/slots"])
        assert slots["roll"] == "awx-workflow-500" and list(slots["claims"]) == ["gpu-a"], "gpu-b waits: one slot, gpu-a's"
        assert not cluster.node("gpu-b")["unschedulable"]
        gate.write_text("go")
        for proc, dummy in runs.values():
            proc.wait(timeout=400)
        for job, name in (("501", "gpu-a"), ("502", "gpu-b")):
            out = text(job)
            assert name + ": starting - " in out, out[-3000:]
            assert "This run checked 1 of the 2 hosts of the fleet" in out, out[-3000:]
            assert "roll awx-workflow-500: held the Lease rke2-numa-system/rke2-numa-roll" in out, out[-3000:]
            assert ADMIN_TOKEN not in out
        accepted = [json.loads(line.split("\t", 1)[1]) for line in writes_log.read_text().splitlines() if line.startswith("0\t")]
        claimed = [sorted(json.loads((w["metadata"].get("annotations") or {}).get("rke2-numa.maitred.io/slots", '{"claims": {}}'))["claims"])
                   for w in accepted]
        assert ["gpu-a"] in claimed and ["gpu-b"] in claimed and max(len(c) for c in claimed) == 1, claimed
        assert claimed.index(["gpu-b"]) > claimed.index(["gpu-a"])
        final = json.loads(cluster.kubectl("get", "lease", "rke2-numa-roll", "-n", "rke2-numa-system", "-o", "json").stdout)
        assert final["spec"]["holderIdentity"] == "" and not (final["metadata"].get("annotations") or {}).get("rke2-numa.maitred.io/slots")
    finally:
        (tmp_path / "gate").write_text("go")
        for proc, dummy in runs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert cluster.stop() == 0
