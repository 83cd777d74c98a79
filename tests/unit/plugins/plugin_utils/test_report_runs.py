# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet's report from the reports of runs that each checked a part of it: what <host>.json holds is read back as
the hostvars the report filters read, so the assembled page is the one a single run draws."""

from __future__ import annotations

import json

import pytest

from ansible_collections.maitred.rke2_numa.plugins.filter.fleet_report import fleet_report, fleet_summary
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.plan_files import plan_fleet
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.report_runs import RunsError, host_reports, runs_hostvars
from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan


@pytest.fixture(scope="module")
def hostvars(tmp_path_factory):
    """Six hosts as check.yml leaves them: compliant, not compliant, blocked, one not readable, one failed."""
    out = tmp_path_factory.mktemp("samples")
    gen_sysfs.main(["--out", str(out)])
    names = sorted(gen_sysfs.samples())[:3]
    topologies = [read_topology(str(out / name)) for name in names]
    result = {}
    for i, host in enumerate(["h1", "h2", "h3", "h4", "h5", "h6"]):
        topology = topologies[i % len(topologies)]
        plan = make_plan(topology)
        compliance = {"compliant": i % 2 == 0, "runs_plan": i % 2 == 0, "reasons": [] if i % 2 == 0 else ["kernel args: isolcpus missing"],
                      "actions": [] if i % 2 == 0 else ["drain", "boot_params", "reboot"], "blocked": ["a drop-in overrides the plan"] if i == 3 else [],
                      "plan_fingerprint": plan["fingerprint"], "warnings": [], "managed_by": "none", "managed_by_evidence": []}
        result[host] = {"rke2_numa_topology": topology, "rke2_numa_plan": plan, "rke2_numa_compliance": compliance,
                        "rke2_numa_pod_audit": {"unpinned": [], "topology_errors": []}, "__rke2_numa_state": {"topology": topology}}
    result["h5"] = {"rke2_numa_topology": topologies[0], "rke2_numa_compliance": {}, "rke2_numa_pod_audit": {},
                    "__rke2_numa_state": {"topology": topologies[0], "access": {"user": "ops", "denied": ["/var/lib/kubelet"]}}}
    result["h6"] = {}   # unreachable: no variables of the check
    return result


def run_of(hosts, hostvars):
    """What a run over ``hosts`` leaves in its folder, read back: fleet.json, run.json and the <host>.json of the hosts
    it checked."""
    files = dict((name, json.loads(text)) for name, text in host_reports(hosts, hostvars, fleet_hosts=6).items())
    run = files.pop("run.json")
    assert run["hosts"] == hosts and run["fleet_hosts"] == 6
    return {"fleet": json.loads(json.dumps(fleet_summary(hosts, hostvars)["fleet"])), "run": run, "hosts": list(files.values())}


def test_two_slices_assemble_into_the_single_run_s_page_summary_and_fleet(hostvars):
    hosts = ["h1", "h2", "h3", "h4", "h5", "h6"]
    runs = [run_of(["h1", "h3", "h5"], hostvars), run_of(["h2", "h4", "h6"], hostvars)]
    assembled_hosts, assembled = runs_hostvars(runs, order=hosts)
    assert assembled_hosts == hosts
    for output in ("html", "markdown"):
        assert fleet_report(assembled_hosts, assembled, output=output, mode="check") == fleet_report(hosts, hostvars, output=output, mode="check")
    assert fleet_summary(assembled_hosts, assembled) == fleet_summary(hosts, hostvars)
    assert "cannot read /var/lib/kubelet as ops" in fleet_report(assembled_hosts, assembled, output="markdown", mode="check")


def test_a_host_in_two_runs_or_a_report_not_of_the_check_is_refused(hostvars):
    one = run_of(["h1", "h2"], hostvars)
    with pytest.raises(RunsError, match="h2 is in the reports of run 1 and run 2"):
        runs_hostvars([one, run_of(["h2", "h3"], hostvars)])
    with pytest.raises(RunsError, match="run 1: fleet.json is neither check.yml's"):
        runs_hostvars([{"fleet": {"proven": []}, "hosts": {}}])
    with pytest.raises(RunsError, match="run 1: no run.json"):
        runs_hostvars([dict(one, run=None)])


def test_a_host_report_is_the_decision_and_the_pods_as_before(hostvars):
    files = host_reports(["h1", "h5", "h6"], hostvars)
    assert sorted(files) == ["h1.json", "h5.json", "run.json"]   # h6 failed before its decision: no file
    h1 = json.loads(files["h1.json"])
    assert h1 == dict(hostvars["h1"]["rke2_numa_compliance"], host="h1", pods={"unpinned": [], "topology_errors": []})
    run = json.loads(files["run.json"])
    assert run["facts"]["h5"]["access"] == {"user": "ops", "denied": ["/var/lib/kubelet"]} and "access" not in run["facts"]["h1"]
    assert run["facts"]["h1"]["plan"] == hostvars["h1"]["rke2_numa_plan"] and run["fleet_hosts"] == 3


def test_hosts_the_inventory_does_not_name_come_last_by_name(hostvars):
    hosts, dummy = runs_hostvars([run_of(["h3", "h1", "h2"], hostvars)], order=["h2"])
    assert hosts == ["h2", "h1", "h3"]


def plan_run_of(hosts, hostvars):
    """What plan.yml over ``hosts`` leaves beside its page: fleet.json and run.json (no <host>.json)."""
    files = dict((name, json.loads(text)) for name, text in host_reports(hosts, hostvars, "plan", fleet_hosts=6).items())
    assert sorted(files) == ["run.json"] and sorted(files["run.json"]["facts"]) == sorted(hosts)
    return {"fleet": json.loads(json.dumps(plan_fleet(hosts, hostvars))), "run": files["run.json"], "hosts": []}


def test_plan_slices_assemble_into_the_single_plan_run_with_its_refusals(hostvars):
    planned = dict((h, dict(v, __rke2_numa_plan_result={"changed": False})) for h, v in hostvars.items() if v.get("rke2_numa_plan"))
    planned["h5"] = {"rke2_numa_topology": hostvars["h1"]["rke2_numa_topology"],
                     "__rke2_numa_plan_result": {"refused": "reserved_cores: 0 leaves nothing to the system"}}
    planned["h6"] = {}   # unreachable
    hosts = ["h1", "h2", "h3", "h4", "h5", "h6"]
    assembled_hosts, assembled = runs_hostvars([plan_run_of(["h1", "h3", "h5"], planned), plan_run_of(["h2", "h4", "h6"], planned)], order=hosts)
    for output in ("html", "markdown"):
        assert fleet_report(assembled_hosts, assembled, output=output, mode="plan") == fleet_report(hosts, planned, output=output, mode="plan")
    fleet = plan_fleet(assembled_hosts, assembled)
    assert fleet == plan_fleet(hosts, planned)
    assert fleet["refused"] == {"h5": "reserved_cores: 0 leaves nothing to the system"} and fleet["not_planned"] == ["h5", "h6"]
    # check and plan reports are not one fleet's
    with pytest.raises(RunsError, match="run 2 is a check run, the runs before it are not"):
        runs_hostvars([plan_run_of(["h1"], planned), run_of(["h2"], hostvars)])
    with pytest.raises(RunsError, match="run 1: fleet.json is neither"):   # plan's fleet.json without plan's run.json
        runs_hostvars([dict(plan_run_of(["h1"], planned), run={"playbook": "check"})])
