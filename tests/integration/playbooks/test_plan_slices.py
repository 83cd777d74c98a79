# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plan.yml sliced as AWX slices a job (issue 53 item 4): each slice job gets an inventory of its own hosts only, its
extra vars as strings, under ansible-runner. Each slice publishes its plans (rke2_numa_plans: the hosts planned and
not, each plan's fingerprint) and writes fleet.json and run.json beside its page; playbooks/report.yml merges the three
slices' reports into the page, summary and fleet.json of the run over the whole fleet, byte for byte."""

from __future__ import annotations

import json
import os
import sys

import ansible_runner
import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.artifacts import merge
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import make_node

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
HOSTS = ["gpu-%d" % i for i in range(1, 7)]
SLICES = [HOSTS[i::3] for i in range(3)]   # AWX slices round-robin
REFUSED = "gpu-5"   # a value the planner refuses: not planned, in every summary, with its reason

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    base = tmp_path_factory.mktemp("plan-slices")
    hosts = {}
    for i, name in enumerate(HOSTS):
        root = make_node(base / name, sockets=2, cores_per_socket=4 if i % 2 else 8, threads=2, gpus_per_node=1)
        hosts[name] = {"rke2_numa_sysfs_root": str(root)}
    hosts[REFUSED]["rke2_numa_reserved_cores"] = 0
    group_vars = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}

    def inventory(name, names):
        path = base / ("%s.yml" % name)
        path.write_text(yaml.safe_dump({"gpu": {"vars": group_vars, "hosts": dict((h, hosts[h]) for h in names)}}))
        return str(path)

    return {"whole": inventory("whole", HOSTS), "slices": [inventory("slice-%d" % i, s) for i, s in enumerate(SLICES)], "base": base}


def run(folder, inventory, playbook, extravars):
    """ansible-runner as AWX runs a job; (rc, the artifacts of its playbook_on_stats event)."""
    env = {"ANSIBLE_COLLECTIONS_PATH": os.path.join(REPO, ".build"), "ANSIBLE_LOCALHOST_WARNING": "false",
           "ANSIBLE_DEPRECATION_WARNINGS": "false", "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    folder.mkdir()
    result = ansible_runner.run(private_data_dir=str(folder), playbook=os.path.join(REPO, "playbooks", playbook),
                                inventory=inventory, extravars=extravars, envvars=env, quiet=True)
    stats = [e for e in result.events if e["event"] == "playbook_on_stats"]
    return result, (stats[0]["event_data"].get("artifact_data") if stats else None) or {}


def test_plan_in_three_awx_slices_merged_by_report_yml_is_the_whole_run(fleet, tmp_path):
    result, whole = run(tmp_path / "r-whole", fleet["whole"], "plan.yml",
                        {"rke2_numa_report_dir": str(tmp_path / "whole"), "awx_job_id": "100"})
    out = result.stdout.read()
    assert result.rc == 2 and "the plan did not complete: %s: " % REFUSED in out, out[-3000:]   # the refusal fails the run
    assert sorted(whole) == ["rke2_numa_plans", "rke2_numa_plans_100"], whole
    plans = whole["rke2_numa_plans"]
    assert plans["hosts_by_state"] == {"planned": [h for h in HOSTS if h != REFUSED], "not_planned": [REFUSED], "refused": [REFUSED]}
    assert (plans["planned"], plans["not_planned"], plans["hosts"], plans["playbook"]) == (5, 1, 6, "plan")
    fleet_json = json.loads((tmp_path / "whole" / "fleet.json").read_text())
    assert plans["fingerprints"] == fleet_json["fingerprints"] and len(plans["fingerprints"]) == 5
    assert "reserved" in fleet_json["refused"][REFUSED]
    parts, given = [], {}
    for index, inventory in enumerate(fleet["slices"]):
        folder = tmp_path / ("slice-%d" % index)
        result, artifacts = run(tmp_path / ("r-%d" % index), inventory, "plan.yml", {"rke2_numa_report_dir": str(folder), "awx_job_id": str(201 + index)})
        assert result.rc == (2 if REFUSED in SLICES[index] else 0), result.stdout.read()[-3000:]
        assert json.loads((folder / "run.json").read_text())["hosts"] == SLICES[index]
        given["rke2_numa_plans_%d" % (201 + index)] = artifacts["rke2_numa_plans_%d" % (201 + index)]
        parts.append(str(folder))
    # what the next node of a workflow is given (AWX: one dict.update per slice job), merged: the whole run's plans
    merged = merge(given, "rke2_numa_plans")
    assert (merged["hosts_by_state"], merged["fingerprints"], merged["hosts"]) == (plans["hosts_by_state"], plans["fingerprints"], 6)
    # report.yml over the slices' report folders: the whole run's page, summary and fleet.json
    result, artifacts = run(tmp_path / "r-report", fleet["whole"], "report.yml",
                            {"rke2_numa_report_from": parts, "rke2_numa_report_dir": str(tmp_path / "assembled")})
    assert result.rc == 0, result.stdout.read()[-3000:]
    for name in ("index.html", "summary.md", "fleet.json"):
        assert (tmp_path / "assembled" / name).read_text() == (tmp_path / "whole" / name).read_text(), name
    assembled = artifacts["rke2_numa_plans"]
    assert (assembled["hosts_by_state"], assembled["fingerprints"]) == (plans["hosts_by_state"], plans["fingerprints"]), assembled
    assert json.loads((tmp_path / "assembled" / "run.json").read_text())["runs"] == parts


def test_report_yml_refuses_check_and_plan_reports_together(fleet, tmp_path):
    result, dummy = run(tmp_path / "r-plan", fleet["slices"][0], "plan.yml", {"rke2_numa_report_dir": str(tmp_path / "plan")})
    assert result.rc == 0
    check = tmp_path / "check"
    check.mkdir()
    (check / "fleet.json").write_text(json.dumps({"hosts": 1, "compliant": ["gpu-2"], "not_checked": []}))
    (check / "run.json").write_text(json.dumps({"version": 1, "playbook": "check", "hosts": ["gpu-2"], "fleet_hosts": 1, "facts": {}}))
    result, dummy = run(tmp_path / "r-report", fleet["whole"], "report.yml",
                        {"rke2_numa_report_from": [str(tmp_path / "plan"), str(check)], "rke2_numa_report_dir": str(tmp_path / "out")})
    out = result.stdout.read()
    assert result.rc != 0 and "the reports of check.yml or of plan.yml, not both" in out, out[-3000:]
    assert not (tmp_path / "out").exists()
