# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What AWX sees of a run: check.yml under ansible-runner (the job runner of AWX and AAP), whose playbook_on_stats
event carries the set_stats data AWX keeps as the job's artifacts and hands to the next node of a workflow. The keys
are documented (docs/AWX.md), merge across slices, and never hold the join token."""

from __future__ import annotations

import glob
import json
import os
import re
import sys

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.artifacts import merge
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures import fake_kubectl
from ansible_collections.maitred.rke2_numa.tests.fixtures.awx_job import run_job
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import TOKEN, comply, make_node

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """gpu-a runs its plan, gpu-b is fresh; a kubectl that answers the access check and lists no pod."""
    base = tmp_path_factory.mktemp("awx")
    nodes = dict((name, make_node(base / name, sockets=2, cores_per_socket=4, threads=2, gpus_per_node=1)) for name in ("gpu-a", "gpu-b"))
    comply(nodes["gpu-a"], make_plan(read_topology(str(nodes["gpu-a"]))))
    kubectl = fake_kubectl.write(base / "kubectl")
    hosts = dict((name, {"rke2_numa_sysfs_root": str(root), "rke2_numa_boot_root": str(root),
                         "rke2_numa_kubelet_dir": str(root / "var/lib/kubelet"),
                         "rke2_numa_config_path": str(root / "etc/rancher/rke2/config.yaml")}) for name, root in nodes.items())
    inventory = base / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"gpu": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                                                          "rke2_numa_kubectl": str(kubectl)}, "hosts": hosts}}))
    return str(inventory)


def run(tmp_path, inventory, playbook, extravars, limit=None):
    """ansible-runner as AWX runs a job: its extra vars in env/extravars, the events in artifacts/<ident>/."""
    return run_job(tmp_path / "runner", inventory, playbook, extravars, limit=limit)


def test_the_check_s_summary_is_the_job_s_artifacts(fleet, tmp_path):
    # rke2_numa_audit_pods as AWX sends a survey's or a text field's value: the string "false"
    extravars = {"rke2_numa_audit_pods": "false", "awx_job_id": 4242, "rke2_numa_report_dir": str(tmp_path / "out")}
    result, artifacts = run(tmp_path, fleet, "check.yml", extravars)
    assert result.rc == 0, result.stdout.read()[-3000:]
    assert sorted(artifacts) == ["rke2_numa_fleet", "rke2_numa_fleet_4242"], artifacts
    summary = artifacts["rke2_numa_fleet"]
    assert summary == artifacts["rke2_numa_fleet_4242"]
    assert (summary["noncompliant"], summary["compliant"], summary["hosts"], summary["fleet_hosts"]) == (1, 1, 2, 2), summary
    assert summary["hosts_by_state"]["noncompliant"] == ["gpu-b"] and summary["playbook"] == "check" and summary["runs"] == ["4242"]
    assert summary["reports"] == [str(tmp_path / "out" / "index.html")]
    # what a workflow node would be given, merged: the same
    assert merge(artifacts)["hosts_by_state"] == summary["hosts_by_state"]
    # every key of the summary is documented where an AWX user looks for it
    with open(os.path.join(REPO, "docs", "AWX.md")) as f:
        doc = f.read()
    for key in list(summary) + list(summary["hosts_by_state"]):
        assert "`%s`" % key in doc, key
    # the join token in no event, no artifact, no file the runner kept
    for path in glob.glob(str(tmp_path / "runner" / "**"), recursive=True):
        if os.path.isfile(path):
            with open(path, errors="replace") as f:
                assert TOKEN not in f.read(), path


def test_without_awx_the_run_s_own_key_is_run(fleet, tmp_path):
    result, artifacts = run(tmp_path, fleet, "check.yml", {"rke2_numa_audit_pods": False})
    assert result.rc == 0, result.stdout.read()[-3000:]
    assert sorted(artifacts) == ["rke2_numa_fleet", "rke2_numa_fleet_run"] and artifacts["rke2_numa_fleet"]["reports"] == []
    assert not re.search(r"_ansible_no_log", json.dumps(artifacts))


def test_the_awx_project_s_playbook_runs_the_collection_s_check(fleet, tmp_path):
    """docs/awx/project as AWX runs it: the template's playbooks/check.yml, a file of the project importing the
    collection's check by name, under ansible-runner - the same artifacts as the collection's own playbook."""
    wrapper = os.path.join("..", "docs", "awx", "project", "playbooks", "check.yml")
    result, artifacts = run(tmp_path, fleet, wrapper, {"rke2_numa_audit_pods": "false", "awx_job_id": 77})
    assert result.rc == 0, result.stdout.read()[-3000:]
    assert artifacts["rke2_numa_fleet_77"]["hosts_by_state"]["noncompliant"] == ["gpu-b"], artifacts


def test_a_roll_s_artifacts_carry_the_check_s_run_report_and_fleet(fleet, tmp_path):
    """rolling.yml's summary adds the roll to what its check published (check.yml's registered set_stats): the check's run,
    report and fleet size, not a recount of the run's hosts. A roll over the compliant node alone (--limit): nothing to roll."""
    result, artifacts = run(tmp_path, fleet, "rolling.yml", {"awx_job_id": 4343, "rke2_numa_report_dir": str(tmp_path / "out")}, limit="gpu-a")
    assert result.rc == 0, result.stdout.read()[-3000:]
    assert sorted(artifacts) == ["rke2_numa_fleet", "rke2_numa_fleet_4343"], artifacts
    summary = artifacts["rke2_numa_fleet"]
    assert (summary["playbook"], summary["runs"], summary["reports"]) == ("rolling", ["4343"], [str(tmp_path / "out" / "index.html")]), summary
    assert (summary["hosts"], summary["fleet_hosts"], summary["compliant"]) == (1, 2, 1), summary
    assert summary["roll"]["failed"] is False and "progress" not in summary["roll"], summary["roll"]


def test_a_host_s_events_carry_its_result_not_its_node_s_files(fleet, tmp_path):
    """AWX keeps every event of a job: check.yml's one task per host returned the node's read (its topology, boot files,
    kubelet checkpoints: 12 KB a host, 12 MB a run at 1,000 hosts). Its result is now what the task says of the host -
    who read it and what could not be read; the facts (rke2_numa_topology, rke2_numa_plan, the decision) hold the rest."""
    result, artifacts = run(tmp_path, fleet, "check.yml", {"rke2_numa_audit_pods": "false", "rke2_numa_report_dir": str(tmp_path / "out")})
    assert result.rc == 0, result.stdout.read()[-3000:]
    reads = [e["event_data"] for e in result.events
             if e["event"] == "runner_on_ok" and e["event_data"].get("task_action") == "maitred.rke2_numa.node_check"]
    assert sorted(e["host"] for e in reads) == ["gpu-a", "gpu-b"], reads
    for event in reads:
        assert sorted(event["res"]) == ["access", "changed"], sorted(event["res"])
        assert len(json.dumps(event["res"])) < 200, event["res"]
    # what the reports needed of the read is still there: each host's topology and decision
    assert artifacts["rke2_numa_fleet"]["noncompliant"] == 1
    with open(str(tmp_path / "out" / "run.json")) as f:
        facts = json.load(f)["facts"]
    assert sorted(facts) == ["gpu-a", "gpu-b"] and all(entry["topology"]["numa_nodes"] and entry["plan"] for entry in facts.values())
