# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fleet checked in slices (AWX's sliced jobs, --limit halves) is the fleet checked at once: six node copies, checked
and planned in one run and in two --limit runs of three; the per-host results are the same, each slice says it covers
a part of the fleet, and playbooks/report.yml assembles the slices' reports into the single run's page and summary.
plan.yml sliced as AWX slices a job (issue 53 item 4): each slice job gets an inventory of its own hosts only, its extra
vars as strings, under ansible-runner; each publishes its plans (rke2_numa_plans: the hosts planned and not, each plan's
fingerprint) and writes fleet.json and run.json beside its page; report.yml merges three slices' reports into the page,
summary and fleet.json of the run over the whole fleet, byte for byte."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.artifacts import merge
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures import fake_kubectl
from ansible_collections.maitred.rke2_numa.tests.fixtures.awx_job import run_job
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply, make_node

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
HOSTS = ["gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5", "gpu-6"]
SLICES = (HOSTS[0::2], HOSTS[1::2])   # AWX slices round-robin: every other host
AWX_SLICES = [HOSTS[i::3] for i in range(3)]   # a job_slice_count of 3
REFUSED = "gpu-5"   # in the AWX slices' inventories, a value the planner refuses: not planned, in every summary, with why

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """gpu-2 fresh, gpu-5 planned but not booted with it, the others compliant; two NUMA shapes."""
    base = tmp_path_factory.mktemp("sliced")
    hosts = {}
    for i, name in enumerate(HOSTS):
        root = make_node(base / name, sockets=2, cores_per_socket=4 if i % 2 else 8, threads=2, gpus_per_node=1)
        if name != "gpu-2":
            comply(root, make_plan(read_topology(str(root))), booted=name != "gpu-5")
        hosts[name] = {"rke2_numa_sysfs_root": str(root), "rke2_numa_boot_root": str(root),
                       "rke2_numa_kubelet_dir": str(root / "var/lib/kubelet"),
                       "rke2_numa_config_path": str(root / "etc/rancher/rke2/config.yaml")}
    kubectl = fake_kubectl.write(base / "kubectl")
    inventory = base / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"gpu": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                                                          "rke2_numa_kubectl": str(kubectl)}, "hosts": hosts}}))
    return str(inventory)


def play(inventory, playbook, *extra):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_DEPRECATION_WARNINGS="false")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory, os.path.join(REPO, "playbooks", playbook)]
    out = subprocess.run(cmd + list(extra), env=env, capture_output=True, text=True, check=False)
    assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]
    return out.stdout


def host_files(folder):
    return dict((name, json.loads((folder / name).read_text())) for name in sorted(os.listdir(folder))
                if name.endswith(".json") and name not in ("fleet.json", "run.json"))


def test_check_in_two_slices_is_the_check_at_once_and_report_yml_assembles_its_page(fleet, tmp_path):
    whole = play(fleet, "check.yml", "-e", "rke2_numa_report_dir=%s" % (tmp_path / "whole"))
    assert "4 of 6 compliant; to reconfigure: gpu-2, gpu-5 (2 need a reboot)" in whole, whole
    assert "hosts of the fleet" not in whole
    parts = []
    for index, hosts in enumerate(SLICES):
        out = play(fleet, "check.yml", "--limit", ",".join(hosts), "-e", "rke2_numa_report_dir=%s" % (tmp_path / str(index)))
        assert "This run checked 3 of the 6 hosts of the fleet" in out, out
        assert "This run checked 3 of the 6 hosts of the fleet" in (tmp_path / str(index) / "summary.md").read_text()
        assert json.loads((tmp_path / str(index) / "run.json").read_text())["fleet_hosts"] == 6
        parts.append(tmp_path / str(index))
    # per host, the same results
    sliced = dict(host_files(parts[0]), **host_files(parts[1]))
    assert sliced == host_files(tmp_path / "whole") and len(sliced) == 6
    # the slices' reports assembled: the single run's page and summary, and its fleet
    out = play(fleet, "report.yml", "-e", json.dumps({"rke2_numa_report_from": [str(p) for p in parts]}),
               "-e", "rke2_numa_report_dir=%s" % (tmp_path / "assembled"))
    assert "4 of 6 compliant; to reconfigure: gpu-2, gpu-5 (2 need a reboot)" in out, out
    for name in ("index.html", "summary.md"):
        assert (tmp_path / "assembled" / name).read_text() == (tmp_path / "whole" / name).read_text(), name
    whole_fleet = json.loads((tmp_path / "whole" / "fleet.json").read_text())
    assembled = json.loads((tmp_path / "assembled" / "fleet.json").read_text())
    run = json.loads((tmp_path / "assembled" / "run.json").read_text())
    assert run["runs"] == [str(p) for p in parts] and run["fleet_hosts"] == 6 and run["hosts"] == HOSTS
    for key in ("hosts", "compliant", "not_compliant", "blocked", "not_checked", "reboot", "managed_by"):
        assert assembled[key] == whole_fleet[key], key
    # report.yml as the gate of a workflow: a fleet with work to do passes, and says so in its artifacts
    assert re.search(r"^ok: \[localhost\]", out, re.M)


def test_a_gate_fails_when_every_node_runs_its_plan(fleet, tmp_path):
    compliant = ["gpu-1", "gpu-3", "gpu-4"]
    play(fleet, "check.yml", "--limit", ",".join(compliant), "-e", "rke2_numa_report_dir=%s" % (tmp_path / "c"))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="false")
    out = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", fleet,
                          os.path.join(REPO, "playbooks", "report.yml"), "-e", json.dumps({"rke2_numa_report_from": [str(tmp_path / "c")]}),
                          "-e", "rke2_numa_report_dir=%s" % (tmp_path / "r"), "-e", "rke2_numa_report_require=noncompliant"],
                         env=env, capture_output=True, text=True, check=False)
    assert out.returncode != 0 and "nothing to roll: 3 of 3 nodes run their plan" in out.stdout, out.stdout[-3000:]


def test_plan_in_two_slices_writes_the_same_plans(fleet, tmp_path):
    play(fleet, "plan.yml", "-e", "rke2_numa_plan_dir=%s" % (tmp_path / "whole"))
    for index, hosts in enumerate(SLICES):
        play(fleet, "plan.yml", "--limit", ",".join(hosts), "-e", "rke2_numa_plan_dir=%s" % (tmp_path / str(index)))
    whole = dict((n, (tmp_path / "whole" / n).read_text()) for n in os.listdir(tmp_path / "whole") if n not in ("rancher.yaml", "dra.yaml"))
    sliced = {}
    for index in range(2):
        sliced.update((n, (tmp_path / str(index) / n).read_text()) for n in os.listdir(tmp_path / str(index)) if n not in ("rancher.yaml", "dra.yaml"))
    assert sliced == whole and len(whole) == 18   # per host: the plan, its config snippet, its kubelet drop-in


@pytest.fixture(scope="module")
def awx_inventories(fleet, tmp_path_factory):
    """The whole fleet's inventory and one per AWX slice (its own hosts only), REFUSED given reserved_cores 0."""
    base = tmp_path_factory.mktemp("awx-slices")
    with open(fleet) as f:
        group = yaml.safe_load(f)["gpu"]
    group["hosts"][REFUSED]["rke2_numa_reserved_cores"] = 0

    def inventory(name, names):
        path = base / ("%s.yml" % name)
        path.write_text(yaml.safe_dump({"gpu": {"vars": group["vars"], "hosts": dict((h, group["hosts"][h]) for h in names)}}))
        return str(path)

    return {"whole": inventory("whole", HOSTS), "slices": [inventory("slice-%d" % i, s) for i, s in enumerate(AWX_SLICES)]}


def test_plan_in_three_awx_slices_merged_by_report_yml_is_the_whole_run(awx_inventories, tmp_path):
    result, whole = run_job(tmp_path / "r-whole", awx_inventories["whole"], "plan.yml",
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
    for index, inventory in enumerate(awx_inventories["slices"]):
        folder = tmp_path / ("slice-%d" % index)
        result, artifacts = run_job(tmp_path / ("r-%d" % index), inventory, "plan.yml", {"rke2_numa_report_dir": str(folder), "awx_job_id": str(201 + index)})
        assert result.rc == (2 if REFUSED in AWX_SLICES[index] else 0), result.stdout.read()[-3000:]
        assert json.loads((folder / "run.json").read_text())["hosts"] == AWX_SLICES[index]
        given["rke2_numa_plans_%d" % (201 + index)] = artifacts["rke2_numa_plans_%d" % (201 + index)]
        parts.append(str(folder))
    # what the next node of a workflow is given (AWX: one dict.update per slice job), merged: the whole run's plans
    merged = merge(given, "rke2_numa_plans")
    assert (merged["hosts_by_state"], merged["fingerprints"], merged["hosts"]) == (plans["hosts_by_state"], plans["fingerprints"], 6)
    # report.yml over the slices' report folders: the whole run's page, summary and fleet.json
    result, artifacts = run_job(tmp_path / "r-report", awx_inventories["whole"], "report.yml",
                                {"rke2_numa_report_from": parts, "rke2_numa_report_dir": str(tmp_path / "assembled")})
    assert result.rc == 0, result.stdout.read()[-3000:]
    for name in ("index.html", "summary.md", "fleet.json"):
        assert (tmp_path / "assembled" / name).read_text() == (tmp_path / "whole" / name).read_text(), name
    assembled = artifacts["rke2_numa_plans"]
    assert (assembled["hosts_by_state"], assembled["fingerprints"]) == (plans["hosts_by_state"], plans["fingerprints"]), assembled
    assert json.loads((tmp_path / "assembled" / "run.json").read_text())["runs"] == parts


def test_report_yml_refuses_check_and_plan_reports_together(awx_inventories, tmp_path):
    result, dummy = run_job(tmp_path / "r-plan", awx_inventories["slices"][0], "plan.yml", {"rke2_numa_report_dir": str(tmp_path / "plan")})
    assert result.rc == 0
    check = tmp_path / "check"
    check.mkdir()
    (check / "fleet.json").write_text(json.dumps({"hosts": 1, "compliant": ["gpu-2"], "not_checked": []}))
    (check / "run.json").write_text(json.dumps({"version": 1, "playbook": "check", "hosts": ["gpu-2"], "fleet_hosts": 1, "facts": {}}))
    result, dummy = run_job(tmp_path / "r-report", awx_inventories["whole"], "report.yml",
                            {"rke2_numa_report_from": [str(tmp_path / "plan"), str(check)], "rke2_numa_report_dir": str(tmp_path / "out")})
    out = result.stdout.read()
    assert result.rc != 0 and "the reports of check.yml or of plan.yml, not both" in out, out[-3000:]
    assert not (tmp_path / "out").exists()
