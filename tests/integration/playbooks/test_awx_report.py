# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Results that outlive the execution environment (issue 53 item 3): a check sliced as AWX slices a job - each slice
job an inventory of its own hosts, under ansible-runner, no report folder (an execution environment's filesystem goes
with its job) - leaves its results in its artifacts only. AWX hands them to the workflow's next node as extra vars
(one dict.update per slice job); report.yml, given nothing else, draws the fleet's page, summary.md, fleet.json and
run.json from them: the rows and counts of the page of the whole fleet checked at once (with its maps), no NUMA map,
and a notice saying where the maps are."""

from __future__ import annotations

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
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply, make_node

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
HOSTS = ["gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5", "gpu-6", "gpu-7"]
AWX_SLICES = [HOSTS[i::3] for i in range(3)]   # a job_slice_count of 3: AWX slices round-robin
FRESH, UNBOOTED, REFUSED = "gpu-2", "gpu-5", "gpu-7"
SITE_DROPIN = ("gpu-3", "gpu-6")   # a site drop-in of their own: the same finding on two hosts

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def inventories(tmp_path_factory):
    """The whole fleet's inventory and one per slice: two NUMA shapes, a fresh node, one planned but not booted with it,
    two with a site drop-in, one whose value the planner refuses (not checked), the others compliant."""
    base = tmp_path_factory.mktemp("awx-report")
    hosts = {}
    for i, name in enumerate(HOSTS):
        root = make_node(base / name, sockets=2, cores_per_socket=4 if i % 2 else 8, threads=2, gpus_per_node=1)
        if name != FRESH:
            comply(root, make_plan(read_topology(str(root))), booted=name != UNBOOTED)
        if name in SITE_DROPIN:
            (root / "etc/rancher/rke2/config.yaml.d").mkdir(exist_ok=True)
            (root / "etc/rancher/rke2/config.yaml.d/50-site.yaml").write_text("kubelet-arg:\n  - cpu-manager-policy=none\n")
        hosts[name] = {"rke2_numa_sysfs_root": str(root), "rke2_numa_boot_root": str(root),
                       "rke2_numa_kubelet_dir": str(root / "var/lib/kubelet"),
                       "rke2_numa_config_path": str(root / "etc/rancher/rke2/config.yaml")}
    hosts[REFUSED]["rke2_numa_reserved_cores"] = 0
    group = {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                      "rke2_numa_kubectl": str(fake_kubectl.write(base / "kubectl"))}}

    def inventory(name, names):
        path = base / ("%s.yml" % name)
        path.write_text(yaml.safe_dump({"gpu": dict(group, hosts=dict((h, hosts[h]) for h in names))}))
        return str(path)

    return {"whole": inventory("whole", HOSTS), "slices": [inventory("slice-%d" % i, s) for i, s in enumerate(AWX_SLICES)]}


def runner(folder, inventory, playbook, extravars):
    """ansible-runner as AWX runs a job: (rc, stdout, its artifacts - the custom stats of its playbook_on_stats event)."""
    result, stats = run_job(folder, inventory, playbook, extravars)
    return result.rc, result.stdout.read(), stats


def table_rows(page):
    """The fleet table of a page, row by row."""
    return re.findall(r"<tr data-host=.*?</tr>", page.split('<table id="fleet">', 1)[1].split("</table>", 1)[0], re.S)


def test_three_slices_artifacts_draw_the_whole_fleet_s_page_without_a_shared_folder(inventories, tmp_path):
    # the fleet checked at once, with its report folder: the page to match
    rc, out, whole_stats = runner(tmp_path / "r-whole", inventories["whole"], "check.yml",
                                  {"rke2_numa_report_dir": str(tmp_path / "whole"), "awx_job_id": "100", "rke2_numa_audit_pods": "false"})
    assert rc == 2 and "the check did not complete: %s: " % REFUSED in out, out[-3000:]   # the refused host fails the run
    whole = dict((name, (tmp_path / "whole" / name).read_text()) for name in ("index.html", "summary.md", "fleet.json"))
    whole_fleet = json.loads(whole["fleet.json"])
    assert whole_fleet["blocked"] == list(SITE_DROPIN) and whole_fleet["not_checked"] == [REFUSED], whole_fleet
    # three slice jobs, each its own hosts, no report folder: what is left of each is its artifacts
    given = {}
    for index, inventory in enumerate(inventories["slices"]):
        rc, out, stats = runner(tmp_path / ("r-%d" % index), inventory, "check.yml", {"awx_job_id": str(201 + index), "rke2_numa_audit_pods": "false"})
        assert rc == (2 if REFUSED in AWX_SLICES[index] else 0), out[-3000:]
        assert sorted(stats) == ["rke2_numa_fleet", "rke2_numa_fleet_%d" % (201 + index)], stats
        given.update(stats)   # AWX: the workflow node's extra vars, one dict.update per slice job
    assert not list(tmp_path.glob("r-*/**/index.html"))
    merged = merge(given)
    assert merged["hosts_by_state"] == merge(whole_stats)["hosts_by_state"]
    # the next node: report.yml over the whole inventory, given the artifacts only
    rc, out, stats = runner(tmp_path / "r-report", inventories["whole"], "report.yml",
                            dict(given, rke2_numa_report_dir=str(tmp_path / "assembled"), awx_job_id="300"))
    assert rc == 0, out[-3000:]
    assembled = dict((name, (tmp_path / "assembled" / name).read_text()) for name in ("index.html", "summary.md", "fleet.json", "run.json"))
    # the rows of the whole run's page and summary.md, worst first, repeats folded; its summary line and fleet command
    assert table_rows(assembled["index.html"]) == table_rows(whole["index.html"]) and len(table_rows(whole["index.html"])) == 7
    summary = re.search(r'<p class="summary">([^<]*)', whole["index.html"]).group(1)
    assert '<p class="summary">%s' % summary in assembled["index.html"]
    lines = [line for line in whole["summary.md"].splitlines() if line.startswith(("|", "To roll", "- **"))]
    assert lines and lines == [line for line in assembled["summary.md"].splitlines() if line.startswith(("|", "To roll", "- **"))]
    # fleet.json: the whole run's (its roll_in_progress is the check's read of the Lease)
    fleet = json.loads(assembled["fleet.json"])
    assert dict((k, v) for k, v in whole_fleet.items() if k != "roll_in_progress") == fleet
    # the counts: the page, summary.md, fleet.json and the merged artifacts say the same
    published = stats["rke2_numa_fleet"]
    counts = (len(fleet["compliant"]), len(fleet["not_compliant"]), len(fleet["blocked"]), len(fleet["not_checked"]))
    assert counts == (published["compliant"], published["noncompliant"], published["blocked"], published["not_checked"]) == (2, 4, 2, 1)
    assert summary.startswith("7 hosts: 2 compliant, 4 NOT compliant (2 blocked), 1 not checked;"), summary
    assert "7 hosts: 2 compliant, 4 NOT compliant \\(2 blocked\\), 1 not checked;" in assembled["summary.md"]
    # no map, and the page says why and where they are
    assert '<div data-map="' in whole["index.html"] and '<div data-map="' not in assembled["index.html"]
    assert "Drawn from the artifacts of the runs 201, 202, 203" in assembled["index.html"]
    assert json.loads(assembled["run.json"])["runs"] == ["201", "202", "203"] and json.loads(assembled["run.json"])["source"] == "artifacts"
    assert "drawn from the artifacts" in out


def test_report_yml_refuses_rows_of_another_shape(inventories, tmp_path):
    given = {"rke2_numa_fleet_7": {"version": 1, "playbook": "check", "runs": ["7"], "hosts": 1, "fleet_hosts": 1,
                                   "hosts_by_state": {"compliant": [], "noncompliant": ["gpu-1"], "blocked": [], "reboot": [], "not_checked": []},
                                   "reports": [], "rows": {"texts": [["finding/boot", "<script>", "gpu-1"]], "plans": []}}}
    rc, out, dummy = runner(tmp_path / "r", inventories["whole"], "report.yml", dict(given, rke2_numa_report_dir=str(tmp_path / "out")))
    assert rc != 0 and "the hosts of an entry are a list" in out, out[-3000:]
    assert not (tmp_path / "out").exists()
