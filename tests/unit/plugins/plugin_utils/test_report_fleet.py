# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet page at 1,000 hosts as a real fleet is (issue 53 item 5): each GPU has its own UUID, so a map that carried
them was one per host (18 MB); the maps are shared by shape and the identities are text. Rows are grouped worst first,
a finding repeated word for word is said once, one command rolls the fleet, and the page counts what fleet.json counts."""

from __future__ import annotations

import re

import pytest

from ansible_collections.maitred.rke2_numa.plugins.filter.fleet_report import fleet_report, fleet_summary
from ansible_collections.maitred.rke2_numa.tests.fixtures.sample_fleet import host_topology, sample_shapes

HOSTS = 1000
BLOCKED = "a drop-in overrides the plan: /etc/rancher/rke2/config.yaml.d/99-site.yaml sets cpu-manager-policy"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    shapes, plans = sample_shapes(tmp_path_factory.mktemp("samples"))
    hosts, hostvars = ["gpu-%04d" % i for i in range(HOSTS)], {}
    for i, host in enumerate(hosts):
        topology = host_topology(shapes, i, host)
        plan = plans[i % len(plans)]
        compliance = {"compliant": i % 10 in (0, 2, 4, 6, 8), "reasons": [], "actions": [], "blocked": [], "warnings": [],
                      "plan_fingerprint": plan["fingerprint"], "managed_by": "none", "managed_by_evidence": []}
        if i % 10 in (1, 5, 9):
            compliance.update(reasons=["kernel arg nohz_full is not on the running cmdline (reboot pending?)"], actions=["drain", "reboot"])
        elif i % 10 in (3, 7):
            compliance.update(blocked=[BLOCKED], reasons=["the drop-in 99-site.yaml"])
        hostvars[host] = {"rke2_numa_topology": topology, "rke2_numa_plan": plan, "rke2_numa_compliance": compliance,
                          "rke2_numa_pod_audit": {"unpinned": [], "topology_errors": []}}
        if i % 100 == 11:   # unreachable: nothing of the check
            hostvars[host] = {}
    return hosts, hostvars, len(shapes)


def test_a_thousand_hosts_share_a_map_per_shape_and_count_what_fleet_json_counts(fleet):
    hosts, hostvars, shapes = fleet
    page = fleet_report(hosts, hostvars, output="html", mode="check")
    assert len(page.encode("utf-8")) <= 3e6, "%.1f MB" % (len(page.encode("utf-8")) / 1e6)
    assert len(re.findall(r'<div data-map="\d+">', page)) == shapes   # one drawn map per shape, not per host
    # each GPU's identity once, in its host's text
    uuids = [dev["uuid"] for h in hosts for dev in (hostvars[h].get("rke2_numa_topology") or {}).get("pci_devices") or [] if dev.get("uuid")]
    assert uuids and all(page.count(u) == 1 for u in uuids[:50] + uuids[-50:])
    # the counts of the page are fleet.json's: the blocked among the NOT compliant
    fleet_json = fleet_summary(hosts, hostvars)["fleet"]
    summary = re.search(r'<p class="summary">([^<]*)', page).group(1)
    assert summary.startswith("%d hosts: %d compliant, %d NOT compliant (%d blocked), %d not checked;" % (
        HOSTS, len(fleet_json["compliant"]), len(fleet_json["not_compliant"]), len(fleet_json["blocked"]), len(fleet_json["not_checked"]))), summary
    # worst first: not checked, BLOCKED, NOT compliant, compliant - the inventory's order within each
    table = page.split('<table id="fleet">', 1)[1].split("</table>", 1)[0]
    labels = re.findall(r'<td class="status [a-z-]+">([A-Za-z ]+)', table)
    order = ["not checked", "BLOCKED", "NOT compliant", "compliant"]
    assert labels == sorted(labels, key=order.index) and len(labels) == HOSTS
    rows = re.findall(r'<tr data-host="([^"]+)"', table)
    assert rows[:len(fleet_json["not_checked"])] == fleet_json["not_checked"]
    # a finding repeated word for word: in the table once, the others name its host (one each of BLOCKED, NOT compliant
    # and not checked said in full); one command for the fleet
    assert table.count(BLOCKED) == 1
    assert table.count("the same as <a") == len(fleet_json["not_compliant"]) - 2 + len(fleet_json["not_checked"]) - 1
    assert "maitred.rke2_numa.rolling" not in table and page.count('<code class="cmd">') == 1
    assert "#fleet td:first-child{white-space:nowrap}" in page


def test_the_summary_md_of_a_thousand_hosts_is_short_and_counts_the_same(fleet):
    hosts, hostvars, dummy = fleet
    text = fleet_report(hosts, hostvars, output="markdown", mode="check")
    fleet_json = fleet_summary(hosts, hostvars)["fleet"]
    assert "%d NOT compliant \\(%d blocked\\)" % (len(fleet_json["not_compliant"]), len(fleet_json["blocked"])) in text
    assert text.count(BLOCKED.replace("_", "\\_")) == 1 and len(text.encode("utf-8")) < 200e3
