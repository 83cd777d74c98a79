# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nightly workflow of docs/awx/templates.yml run as AWX runs it (issue 53): each node's job template as written
there (playbook, extra vars, job_slice_count), from a copy of docs/awx/project, under `ansible-runner run` (as AWX's
worker runs a job), each slice with an inventory of its own hosts only, the workflow's artifacts handed to the next
node as extra vars, AWX's meta variables and its Kubernetes bearer-token credential in the environment - against the
API stand-in through the real kubectl, over node copies (ansible_connection=local).

What AWX does, and this emulation with it:
- a sliced job template is a workflow job of its own whose jobs each get every slice_count-th host of the inventory
  by name, from the slice's number (awx/main/models/inventory.py, Inventory.get_script_data / get_sliced_hosts), the
  groups cut down to those hosts; the slices' awx_workflow_job_id is that workflow job's id
  (awx/main/models/unified_jobs.py, awx_meta_vars);
- a node's job gets its ancestors' artifacts merged into its extra vars, a sliced job's being its slices' artifacts
  combined one after the other with a dict update (awx/main/models/workflow.py, WorkflowJobNode.get_job_kwargs,
  WorkflowJob._combined_artifacts) - so the check's per-slice keys rke2_numa_fleet_<job id> reach the gate and the roll;
- the "OpenShift or Kubernetes API Bearer Token" credential's injector sets K8S_AUTH_HOST, K8S_AUTH_API_KEY,
  K8S_AUTH_VERIFY_SSL and K8S_AUTH_SSL_CA_CERT (a file) in the job's environment;
- a survey's answers are text: every extra var goes as a string.

The fleet needs a roll that a node copy can take: every node runs its plan, but two Nodes carry our labels of an
earlier plan (published with kubectl, as the inventory says), which the roll fixes in place. The probe pods of the
proof need a kubelet (the Molecule prove scenario runs them): the inventory turns the proof off."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sys

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import numa_labels
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures.awx_job import credential_env, job_output, start_job
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import ADMIN_TOKEN, KUBECTL, Cluster, needs_kubectl
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply, make_node, tree
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_hostile_inventory import REPO, SPEC, node_vars

pytestmark = [pytest.mark.integration, needs_kubectl]
GPU = {"nvidia.com/gpu": "1", "cpu": "8"}
WORKERS = ("gpu-a", "gpu-b", "gpu-c", "gpu-d")
STALE = ("gpu-b", "gpu-d")
PLAN_LABEL = "rke2-numa.maitred.io/plan"


def workflow():
    """docs/awx/templates.yml: the job templates by name, and the nightly workflow's nodes in the order of its success
    edges."""
    with open(os.path.join(REPO, "docs", "awx", "templates.yml")) as handle:
        tasks = yaml.safe_load(handle)[0]["tasks"]
    templates = {t["awx.awx.job_template"]["name"]: t["awx.awx.job_template"] for t in tasks if "awx.awx.job_template" in t}
    (nightly,) = [t["awx.awx.workflow_job_template"] for t in tasks if "awx.awx.workflow_job_template" in t]
    nodes = {n["identifier"]: n for n in nightly["workflow_nodes"]}
    following = {child["identifier"] for n in nodes.values() for child in n.get("related", {}).get("success_nodes", [])}
    (node,) = [n for n in nodes.values() if n["identifier"] not in following]
    order = []
    while node is not None:
        order.append(templates[node["unified_job_template"]["name"]])
        after = node.get("related", {}).get("success_nodes", [])
        node = nodes[after[0]["identifier"]] if after else None
    return order


def sliced(inventory, number, count):
    """The inventory of slice ``number`` of ``count`` as AWX writes it: every count-th host by name from number - 1, each
    group with its hosts of the slice (its variables kept)."""
    hosts = sorted({h for group in inventory.values() for h in group.get("hosts", {})})[number - 1::count]
    return {name: dict(group, hosts={h: v for h, v in group.get("hosts", {}).items() if h in hosts})
            for name, group in inventory.items()}


class Awx:
    """Jobs run as AWX's worker runs them: `ansible-runner run` in a private data dir of their own."""

    def __init__(self, tmp_path, project, env):
        self.tmp, self.project, self.env, self.ids = tmp_path, project, env, itertools.count(100)

    def launch(self, template, inventory, artifacts):
        """The job template (sliced when it says so) with the ancestors' artifacts -> (the job's combined artifacts,
        [(slice's return code, its stdout)])."""
        count = int(template.get("job_slice_count", 1))
        workflow_job = next(self.ids) if count > 1 else None
        extra = {k: v if isinstance(v, str) else json.dumps(v) if isinstance(v, (list, dict)) else str(v).lower() if isinstance(v, bool) else str(v)
                 for k, v in (template.get("extra_vars") or {}).items()}   # a survey's answers: text
        runs = []
        for number in range(1, count + 1):
            job = str(next(self.ids))
            private = self.tmp / ("job-" + job)
            (private / "inventory").mkdir(parents=True)
            (private / "inventory" / "hosts.yml").write_text(yaml.safe_dump(sliced(inventory, number, count) if count > 1 else inventory))
            meta = {"awx_job_id": job, "tower_job_id": job, "awx_job_template_name": template["name"]}
            if workflow_job is not None:
                meta["awx_workflow_job_id"] = str(workflow_job)
            proc = start_job(private, job, os.path.join(self.project, template["playbook"]), self.env, dict(extra, **artifacts, **meta))
            runs.append((job, private, proc))
        combined, results = {}, []
        for job, private, proc in runs:   # the slices run side by side, as AWX runs them
            assert proc.wait(timeout=900) is not None
            out, published = job_output(private, job)
            results.append((proc.returncode, " ".join(out.split())))
            combined.update(published)
        return combined, results


@pytest.fixture
def fleet(tmp_path):
    cluster = Cluster(tmp_path, lease_namespace=True)
    for name in WORKERS:
        cluster.add_node(name, ready=True, labels={"kubernetes.io/hostname": name}, allocatable=GPU, capacity=GPU)
    cluster.add_node("server-1", ready=True, labels={"node-role.kubernetes.io/control-plane": "true"})
    roots = {}
    for name in WORKERS:
        roots[name] = root = make_node(tmp_path / name, **SPEC)
        plan = make_plan(read_topology(str(root)))
        comply(root, plan)
        with cluster.edit(name) as node:
            node["labels"].update(numa_labels(plan))
            if name in STALE:   # labels of an earlier plan
                node["labels"][PLAN_LABEL] = "0123456789abcdef"
    yield cluster, roots
    assert cluster.stop() == 0
    assert [c for c in cluster.calls() if c["code"] >= 500] == []


def test_the_nightly_workflow_runs_as_documented_under_real_slicing(fleet, tmp_path):
    """check (4 slices) -> anything to roll (the gate: report.yml over the slices' artifacts) -> roll (2 slices sharing
    one roll, one Lease): every job succeeds, each check slice says which part of the fleet it checked, the gate sees
    the two nodes to roll, the roll fixes both in place without a drain and leaves every file as it was; no job's
    output nor artifact holds the token."""
    cluster, roots = fleet
    project = tmp_path / "project"
    shutil.copytree(os.path.join(REPO, "docs", "awx", "project"), project)
    inventory = {
        "gpu": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, "rke2_numa_kubectl": KUBECTL,
                         "rke2_numa_labels_via": "kubectl", "rke2_numa_prove": False},
                "hosts": {name: node_vars(root) for name, root in roots.items()}},
        "servers": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}, "hosts": {"server-1": {}}},
    }
    awx = Awx(tmp_path, str(project), credential_env(cluster))
    before = {name: tree(root) for name, root in roots.items()}
    check, gate, roll = workflow()

    artifacts, results = awx.launch(check, inventory, {})
    assert len(results) == int(check["job_slice_count"]) == 4
    for code, out in results:
        assert code == 0, out[-4000:]
        assert "This run checked 1 of the 4 hosts of the fleet" in out, out[-4000:]
    merged = [v for k, v in artifacts.items() if k.startswith("rke2_numa_fleet_")]
    assert len(merged) == 4 and sum(v["hosts"] for v in merged) == 4
    assert sorted(h for v in merged for h in v["hosts_by_state"]["noncompliant"]) == list(STALE)

    found, results = awx.launch(gate, inventory, artifacts)
    ((code, out),) = results
    assert code == 0, out[-4000:]   # a node to roll: the success edge leads to the roll
    artifacts.update(found)
    assert artifacts["rke2_numa_fleet"]["noncompliant"] == 2 and artifacts["rke2_numa_fleet"]["hosts"] == 4, artifacts["rke2_numa_fleet"]

    done, results = awx.launch(roll, inventory, artifacts)
    assert len(results) == int(roll["job_slice_count"]) == 2
    texts = " ".join(out for code, out in results)
    for code, out in results:
        assert code == 0, out[-4000:]
    # AWX's slices by name: gpu-a, gpu-c and server-1 in the first, gpu-b and gpu-d (the stale ones) in the second
    assert "fixed in place (no drain): gpu-b, gpu-d" in results[1][1] and "fixed in place (no drain): none" in results[0][1], texts[-4000:]
    for name in STALE:
        assert PLAN_LABEL in cluster.node(name)["labels"] and cluster.node(name)["labels"][PLAN_LABEL] != "0123456789abcdef"
    for name, root in roots.items():
        assert tree(root) == before[name] and not cluster.node(name)["unschedulable"] and cluster.node(name)["evictions"] == []
    rolls = {v["roll"]["id"] for k, v in done.items() if k.startswith("rke2_numa_fleet_") and "roll" in v}
    assert len(rolls) == 1 and rolls.pop().startswith("awx-workflow-"), done
    lease = json.loads(cluster.kubectl("get", "lease", "rke2-numa-roll", "-n", "rke2-numa-system", "-o", "json").stdout)
    assert lease["spec"]["holderIdentity"] == ""
    for path in tmp_path.glob("job-*/artifacts/*/stdout"):
        assert ADMIN_TOKEN not in path.read_text(), path
    for path in tmp_path.glob("job-*/artifacts/*/job_events/*.json"):
        assert ADMIN_TOKEN not in path.read_text(), path
