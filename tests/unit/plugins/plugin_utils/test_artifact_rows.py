# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the fleet's page says of each host travels in the artifacts (issue 53 item 3): folded (a text once, with its
hosts), merged across slices, and read back into the page report.py draws - the rows, counts and fleet.json of the run
that had every host's facts, at 1,000 hosts in a few dozen bytes a host."""

from __future__ import annotations

import json
import re

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.filter.artifacts import fleet_stats, fleet_stats_merge, fleet_stats_report
from ansible_collections.maitred.rke2_numa.plugins.filter.fleet_report import fleet_report, fleet_summary
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.artifacts import ArtifactError, merge_rows
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.report_runs import fold_rows, row_entries
from ansible_collections.maitred.rke2_numa.tests.fixtures.sample_fleet import host_topology, sample_shapes

HOSTS = 1000
BLOCKED = "a drop-in overrides the plan: /etc/rancher/rke2/config.yaml.d/99-site.yaml sets cpu-manager-policy"
FINDINGS = [{"check": "boot", "text": "the running kernel does not run the plan's kernel args (reboot)"},
            {"check": "config", "text": "/etc/rancher/rke2/config.yaml does not hold the plan's kubelet args, labels and taints"}]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """1,000 hosts of the real machines' shapes, each GPU its own UUID: half compliant, NOT compliant (a reboot), BLOCKED by
    one drop-in, a Rancher-managed one, unpinned pods and a DRA path on some, one in a hundred not checked."""
    shapes, plans = sample_shapes(tmp_path_factory.mktemp("samples"))
    hosts, hostvars = ["gpu-%04d" % i for i in range(HOSTS)], {}
    for i, host in enumerate(hosts):
        topology = host_topology(shapes, i, host)
        plan = plans[i % len(plans)]
        compliance = {"compliant": i % 10 in (0, 2, 4, 6, 8), "reasons": [], "findings": [], "actions": [], "blocked": [],
                      "warnings": [], "plan_fingerprint": plan["fingerprint"], "managed_by": "none", "managed_by_evidence": [],
                      "config_mode": "merge"}
        if i % 10 in (1, 5, 9):
            compliance.update(findings=FINDINGS, reasons=[f["text"] for f in FINDINGS], actions=["rke2_config", "drain", "reboot"])
        elif i % 10 in (3, 7):
            compliance.update(blocked=[BLOCKED], findings=[{"check": "config", "text": "the drop-in 99-site.yaml"}],
                              reasons=["the drop-in 99-site.yaml"], warnings=["kubelet 1.33 is older than the plan's"])
        if i % 250 == 1:
            compliance.update(managed_by="rancher", managed_by_evidence=["machine label m-%d" % i])
        pods = {"unpinned": ["ml/train-%d" % i] if i % 50 == 5 else [], "topology_errors": []}
        if i % 200 == 9:
            pods["dra"] = {"gpu_path": "both", "findings": []}
        hostvars[host] = {"rke2_numa_topology": topology, "rke2_numa_plan": plan, "rke2_numa_compliance": compliance,
                          "rke2_numa_pod_audit": pods}
        if i % 100 == 11:   # unreachable: nothing of the check
            hostvars[host] = {}
        if i % 100 == 13:   # a value the planner refuses
            hostvars[host] = {"__rke2_numa_state": {"refused": "rke2_numa_reserved_cores 0: at least 1"}}
    return hosts, hostvars


def per_host(rows):
    """{host: ([(kind, text)] in the order read back, its plan row)}."""
    out = {}
    for kind, text, names in rows["texts"]:
        for host in names:
            out.setdefault(host, ([], {}))[0].append((kind, text))
    for row, names in rows["plans"]:
        for host in names:
            out.setdefault(host, ([], {}))[1].update(row)
    return out


def table(page):
    return page.split('<table id="fleet">', 1)[1].split("</table>", 1)[0]


def test_a_thousand_hosts_travel_in_a_few_dozen_bytes_each_and_draw_the_run_s_rows(fleet):
    hosts, hostvars = fleet
    whole = fleet_summary(hosts, hostvars)["fleet"]
    # three slices, as AWX makes them (round-robin), each its own artifacts; the next node is given them all
    given = {}
    for index in range(3):
        part = hosts[index::3]
        given.update(fleet_stats(fleet_summary(part, hostvars)["fleet"], "check", str(201 + index), fleet_hosts=HOSTS))
    size = len(json.dumps(given).encode("utf-8"))
    assert size / HOSTS <= 200, "%.0f bytes a host" % (size / HOSTS)   # AWX's budget: <= 2 KB of event data a host, all told
    merged = fleet_stats_merge(given)
    # each host's texts, in its order, and its plan: the whole run's, read back and folded again the same
    assert per_host(merged["rows"]) == per_host(whole["rows"]) == per_host(fold_rows(row_entries(merged, hosts)))
    out = fleet_stats_report(merged, hosts)
    fleet = json.loads(out["files"]["fleet.json"])
    assert fleet == whole
    page = out["files"]["index.html"]
    assert table(page) == table(fleet_report(hosts, hostvars, output="html", mode="check"))
    assert "<div data-map=" not in page and "Drawn from the artifacts of the runs 201, 202, 203" in page
    markdown = [line for line in fleet_report(hosts, hostvars, output="markdown", mode="check").splitlines() if line]
    assert [line for line in out["files"]["summary.md"].splitlines() if line and not line.startswith("**Drawn")] == markdown
    # the counts: the page, summary.md, fleet.json and the merged artifacts
    counts = "%d hosts: %d compliant, %d NOT compliant (%d blocked), %d not checked;" % (
        HOSTS, merged["compliant"], merged["noncompliant"], merged["blocked"], merged["not_checked"])
    assert re.search(r'<p class="summary">([^<]*)', page).group(1).startswith(counts)
    assert (len(fleet["compliant"]), len(fleet["not_compliant"]), len(fleet["blocked"]), len(fleet["not_checked"])) == (
        merged["compliant"], merged["noncompliant"], merged["blocked"], merged["not_checked"])
    assert counts.replace("(", "\\(").replace(")", "\\)") in out["files"]["summary.md"]
    assert json.loads(out["files"]["run.json"])["runs"] == ["201", "202", "203"] and out["line"].startswith("500 of 1000 compliant")


def test_a_finding_on_many_hosts_is_said_once_with_its_hosts(fleet):
    hosts, hostvars = fleet
    rows = fleet_summary(hosts[:20], hostvars)["fleet"]["rows"]
    texts = dict(((kind, text), names) for kind, text, names in rows["texts"])
    assert texts[("blocked", BLOCKED)] == ["gpu-0003", "gpu-0007", "gpu-0017"]   # gpu-0013: refused
    assert texts[("finding/boot", FINDINGS[0]["text"])] == ["gpu-0001", "gpu-0005", "gpu-0009", "gpu-0015", "gpu-0019"]
    assert not [kind for kind, text in texts if "gpu-0011" in texts[(kind, text)]]   # unreachable: no text, its state says it
    assert texts[("refused", "rke2_numa_reserved_cores 0: at least 1")] == ["gpu-0013"]
    assert texts[("unpinned", "ml/train-5")] == ["gpu-0005"] and texts[("managed_by", "rancher")] == ["gpu-0001"]
    # a plan row per plan (the hosts of one shape share it), its fingerprint and biggest pod; no topology, no UUID
    assert sum(len(names) for row, names in rows["plans"]) == 18 and len(rows["plans"]) <= 5
    assert "GPU-gpu-" not in json.dumps(rows)


def test_each_host_s_texts_come_back_in_its_order():
    # h1 names b alone first, h2 names a then b: a list in the order first seen (b, a) would give h2 (b, a)
    parts = [{"texts": [["warning", "b", ["h1"]]]}, {"texts": [["warning", "a", ["h2"]], ["warning", "b", ["h2"]]]}]
    assert [text for kind, text, names in merge_rows(parts)["texts"]] == ["a", "b"]
    # opposite orders on two hosts: the order first seen
    parts = [{"texts": [["warning", "b", ["h1"]], ["warning", "a", ["h1"]]]}, {"texts": [["warning", "a", ["h2"]], ["warning", "b", ["h2"]]]}]
    assert [text for kind, text, names in merge_rows(parts)["texts"]] == ["b", "a"]


def test_merged_rows_unite_the_hosts_of_each_text_in_the_order_first_seen():
    a = {"texts": [["blocked", "x", ["h1"]], ["action", "reboot", ["h1"]]], "plans": [[{"fingerprint": "f"}, ["h1"]]]}
    b = {"texts": [["action", "reboot", ["h2", "h1"]], ["blocked", "y", ["h2"]]], "plans": [[{"fingerprint": "f"}, ["h2"]]]}
    assert merge_rows([a, b]) == {"texts": [["blocked", "x", ["h1"]], ["action", "reboot", ["h1", "h2"]], ["blocked", "y", ["h2"]]],
                                  "plans": [[{"fingerprint": "f"}, ["h1", "h2"]]]}


@pytest.mark.parametrize("rows, why", [
    ("texts", "rows is a mapping"),
    ({"texts": [["finding/boot", "x", "h1"]]}, "the hosts of an entry are a list"),
    ({"texts": [["finding/boot", ["x"], ["h1"]]]}, "a text is [kind, text, [hosts]]"),
    ({"plans": [["f", ["h1"]]]}, "a plan is [plan row, [hosts]]"),
])
def test_rows_of_another_shape_are_refused(rows, why):
    with pytest.raises(ArtifactError, match=re.escape(why)):
        merge_rows([rows])


def test_artifacts_without_rows_draw_the_states_and_say_so():
    summary = {"version": 1, "playbook": "check", "runs": ["9"], "hosts": 2, "fleet_hosts": 4, "reports": [],
               "hosts_by_state": {"compliant": ["b"], "noncompliant": ["a"], "blocked": [], "reboot": [], "not_checked": []}}
    out = fleet_stats_report(summary, ["b", "a"])
    assert json.loads(out["files"]["fleet.json"])["not_compliant"] == ["a"]
    page = out["files"]["index.html"]
    assert "2 hosts: 1 compliant, 1 NOT compliant (0 blocked), 0 not checked" in page
    assert "These runs checked 2 of the 4 hosts of the fleet" in page and "states only" in page


@pytest.mark.parametrize("pod", [[0, 8, 1, 0, 10 ** 9], [0, 8, 1, 0], [0, "8", 1, 0, 1], [0, 8, 1, 0, -1]])
def test_a_plan_row_s_pod_of_another_shape_is_refused(pod):
    summary = {"version": 1, "playbook": "check", "runs": ["9"], "hosts": 1, "fleet_hosts": 1, "reports": [],
               "hosts_by_state": {"compliant": ["a"], "noncompliant": [], "blocked": [], "reboot": [], "not_checked": []},
               "rows": {"texts": [], "plans": [[{"fingerprint": "f", "pod": pod, "shapes": []}, ["a"]]]}}
    with pytest.raises(AnsibleFilterError, match=re.escape("a plan's pod is [node, CPUs")):
        fleet_stats_report(summary, ["a"])
