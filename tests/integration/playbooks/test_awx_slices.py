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

import os
import sys

import ansible_runner
import pytest
import yaml

from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import ADMIN_TOKEN, KUBECTL, Cluster, needs_kubectl
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
    env = dict(cluster.env, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_LOCALHOST_WARNING="false",
               ANSIBLE_DEPRECATION_WARNINGS="false", PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
               K8S_AUTH_HOST=cluster.url.replace("http://", "https://"), K8S_AUTH_API_KEY=ADMIN_TOKEN, K8S_AUTH_VERIFY_SSL="True",
               K8S_AUTH_SSL_CA_CERT=os.path.join(cluster.state, "auth", "tls.crt"))
    extravars = {"rke2_numa_kubeconfig": "env:K8S_AUTH", "rke2_numa_server_group": "servers", "rke2_numa_audit_pods": "true",
                 "awx_job_id": "11"}
    (tmp_path / "runner").mkdir()
    result = ansible_runner.run(private_data_dir=str(tmp_path / "runner"), playbook=os.path.join(REPO, "playbooks", "check.yml"),
                                inventory=str(inventory), extravars=extravars, envvars=env, quiet=True)
    out = " ".join(result.stdout.read().split())
    assert result.rc == 0, out[-4000:]
    assert "This run checked 1 of the 3 hosts of the fleet" in out, out[-4000:]
    stats = [e for e in result.events if e["event"] == "playbook_on_stats"][0]["event_data"]["artifact_data"]
    summary = stats["rke2_numa_fleet_11"]
    assert (summary["hosts"], summary["fleet_hosts"], summary["noncompliant"]) == (1, 3, 1), summary
    # the cluster was read with the credential (the admin's token here), through the EE's kubectl
    assert any(c["user"] == "system:admin" and "/nodes" in c["path"] for c in cluster.calls())
    assert ADMIN_TOKEN not in out
