# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's page and summary, read back with an HTML parser: a box per NUMA node and a cell per CPU in
the state the plan gives it, every host string escaped, statuses per mode, a big fleet collapsed, wrapped maps."""

from __future__ import annotations

import copy
import re
from collections import Counter
from html.parser import HTMLParser

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import parse_cpulist
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import report
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs

SHAPES = [{"name": "tp1", "cpu": 8, "memory": "96Gi", "gpus": 1, "hugepages": "4Gi"}]


class Page(HTMLParser):
    """What the tests count: per host section, its node boxes and CPU cells, and every tag seen."""

    def __init__(self, text):
        HTMLParser.__init__(self)
        self.hosts, self.tags, self.host, self.node = {}, Counter(), None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        self.tags[tag] += 1
        if tag == "details":
            self.host = self.hosts.setdefault(attrs["data-host"], {"open": "open" in attrs, "nodes": {}, "cells": Counter()})
        elif "numa-node" in classes:
            node = {"memory_only": "memory-only" in classes, "cells": Counter(), "width": attrs["style"]}
            self.node = self.host["nodes"].setdefault(int(attrs["data-node"]), node)
        elif "offline-cpus" in classes:
            self.node = None
        elif tag == "rect" and "cpu" in classes:
            state = [c for c in classes if c != "cpu"][0]
            self.host["cells"][state] += 1
            if self.node is not None:
                self.node["cells"][state] += 1


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """{name: (topology, plan)} of the bundled sample machines."""
    base = tmp_path_factory.mktemp("samples")
    out = {}
    for name, spec in sorted(gen_sysfs.samples().items()):
        topology = read_topology(gen_sysfs.write_tree(spec, str(base / name)))
        size = {"hugepages_size": "2M", "hugepages_per_node": 1024} if name == "grace-hopper" else {"hugepages_per_node": 4}
        out[name] = (topology, make_plan(topology, pod_shapes=SHAPES, **size))
    return out


def entries(samples):
    return [{"host": name, "topology": topology, "plan": plan} for name, (topology, plan) in samples.items()]


def test_each_node_is_a_box_and_each_cpu_a_cell_in_its_state(samples):
    page = Page(report.render_html(entries(samples)))
    assert sorted(page.hosts) == sorted(samples)
    for name, (topology, plan) in samples.items():
        host = page.hosts[name]
        assert sorted(host["nodes"]) == [t["node"] for t in plan["numa_tables"]], name
        for t in plan["numa_tables"]:
            node = host["nodes"][t["node"]]
            assert node["memory_only"] == (not t["cpus"]), (name, t["node"])
            assert node["cells"] == Counter(reserved=len(parse_cpulist(t["reserved_cpus"])),
                                            isolated=len(parse_cpulist(t["isolated_cpus"]))) - Counter(), (name, t["node"])
        assert host["cells"]["offline"] == len(parse_cpulist(plan["offline_cpus"])), name
        assert sum(host["cells"].values()) == len(parse_cpulist(topology["cpus_online"])) + len(parse_cpulist(plan["offline_cpus"]))
    # the offline machine: CPUs 31 and 63 in a box of their own, neither reserved nor isolated
    assert page.hosts["l40s-offline"]["cells"]["offline"] == 2
    # GH200: one CPU node and 8 memory-only nodes (GPU HBM, empty MIG nodes)
    assert sum(1 for n in page.hosts["grace-hopper"]["nodes"].values() if n["memory_only"]) == 8


def test_cells_are_grouped_by_core(samples):
    topology, plan = samples["dgx-h100"]
    html = report.render_html([{"host": "dgx-h100", "topology": topology, "plan": plan}])
    assert html.count('<g class="core">') == len(topology["cores"]) == 112
    assert "<title>core, CPUs 0,112</title>" in html


def test_devices_sit_on_their_node(samples):
    topology, plan = samples["dgx-h100"]
    page = report.render_html([{"host": "dgx-h100", "topology": topology, "plan": plan}])
    boxes = page.split('<div class="numa-node')[1:]
    for nid, box in enumerate(boxes):
        gpus = [d["address"] for d in topology["pci_devices"] if d["kind"] == "gpu" and d["numa_node"] == nid]
        assert re.findall(r'class="dev gpu"[^>]*>GPU ([^<]+)<', box) == gpus
        assert box.count('class="dev nic"') == 4


def test_a_big_machine_wraps_its_nodes_and_cores(tmp_path):
    spec = gen_sysfs.make_spec(sockets=2, cores_per_socket=112, threads=2, nodes_per_socket=8, gpus_per_node=1)
    topology = read_topology(gen_sysfs.write_tree(spec, str(tmp_path)))
    plan = make_plan(topology)
    page = Page(report.render_html([{"host": "big", "topology": topology, "plan": plan}]))
    nodes = page.hosts["big"]["nodes"]
    assert len(nodes) == 16 and sum(sum(n["cells"].values()) for n in nodes.values()) == 448
    # 14 cores per node: two rows of 7, a narrow box the page wraps (flex-wrap) 16 times over
    widths = set(int(re.match(r"width:(\d+)px", n["width"]).group(1)) for n in nodes.values())
    assert widths == {report.NODE_WIDTH}


@pytest.mark.parametrize("count, expected", [(56, 14), (24, 8), (72, 15), (31, 11), (1, 1), (4, 4)])
def test_cores_per_row_fills_rows_evenly(count, expected):
    assert report.cores_per_row(count) == expected


def test_every_host_string_is_escaped(samples):
    topology, plan = copy.deepcopy(samples["l40s-offline"])
    evil = '<script>alert("x")</script>'
    topology["pci_devices"][-1]["interfaces"] = ['eth0"><img src=x onerror=alert(1)>']
    plan["warnings"] = [evil + " & more"]
    plan["pod_shapes"][0]["name"] = "<b>shape</b>"
    plan["node_labels"] = ["a=<i>"]
    entry = {"host": "<img src=x onerror=alert(2)>", "topology": topology, "plan": plan, "labels": plan["node_labels"]}
    page = report.render_html([entry])
    assert page.count("<script>") == 1  # the filter box's own
    assert "<img" not in page and "<b>shape" not in page and "<i>" not in page.replace('<i class="', "")
    # Jinja2's autoescape writes a double quote as &#34;
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; more" in page
    assert "NIC eth0&#34;&gt;&lt;img src=x onerror=alert(1)&gt;</span>" in page
    summary = report.render_markdown([entry])
    assert "<img" not in summary and "&lt;img src=x onerror=alert\\(2\\)&gt;" in summary


def test_markdown_renders_no_link_image_or_emphasis_from_untrusted_text(samples):
    topology, plan = copy.deepcopy(samples["dgx-h100"])
    plan["warnings"] = ["see ![x](https://evil.example/p.png) and [docs](http://evil.example) **now** `x` ~~y~~ <b>"]
    text = report.render_markdown([{"host": "gpu-a_[x](https://evil.example)", "topology": topology, "plan": plan},
                                   {"host": "www.evil.example"}, {"host": "root@evil.example"}])
    assert "![x](" not in text and "[docs](" not in text and "](" not in text and "**now**" not in text
    assert "https://" not in text and "http://" not in text and "www.evil" not in text and "@evil" not in text
    assert "\\!\\[x\\]\\(https:\u200b//evil.example/p.png\\)" in text and "\\*\\*now\\*\\*" in text and "&lt;b&gt;" in text
    assert "| gpu-a\\_\\[x\\]\\(https:\u200b//evil.example\\) | planned |" in text


def test_check_mode_says_compliant_or_why_not(samples):
    topology, plan = samples["dgx-h100"]
    hosts = [
        {"host": "a", "topology": topology, "plan": plan,
         "compliance": {"compliant": True, "reasons": [], "actions": [], "plan_fingerprint": plan["fingerprint"]}},
        {"host": "b", "topology": topology, "plan": plan,
         "compliance": {"compliant": False, "reasons": ["kernel args missing: nohz_full=1-55"], "actions": ["drain", "reboot"],
                        "plan_fingerprint": plan["fingerprint"], "warnings": []},
         "pods": {"unpinned": ["ml/vllm-0 is Burstable"], "topology_errors": []}},
        {"host": "c"},
    ]
    rows = report.summarize(hosts, "check")
    assert [(r["status"], r["label"]) for r in rows] == [("compliant", "compliant"), ("not-compliant", "NOT compliant"),
                                                         ("failed", "not checked")]
    blocked = dict(hosts[1], host="d", compliance=dict(hosts[1]["compliance"], actions=[], blocked=["50-site.yaml sets kubelet-arg"]))
    row = report.summarize([blocked], "check")[0]
    assert (row["status"], row["label"]) == ("blocked", "BLOCKED")
    assert row["detail"] == "50-site.yaml sets kubelet-arg - the roll skips it until this is fixed by hand"
    # the blocked among the NOT compliant, as fleet.json and the artifacts count them
    assert report.summary_line([row], "check") == "1 host: 0 compliant, 1 NOT compliant (1 blocked), 0 not checked; warnings on 1 host"
    assert report.check_lines([blocked])[0] == "d: BLOCKED: 50-site.yaml sets kubelet-arg - the roll skips it until this is fixed by hand"
    assert rows[1]["detail"] == "kernel args missing: nohz_full=1-55 -> drain, reboot"
    assert rows[1]["warnings"] == ["NOT PINNED: ml/vllm-0 is Burstable"]
    assert report.summary_line(rows, "check") == "3 hosts: 1 compliant, 1 NOT compliant (0 blocked), 1 not checked; warnings on 1 host"
    page = report.render_html(hosts, "check")
    # the page groups the findings by check (a decision without them: its reasons as one group) and names the command
    assert "<li>findings (1): kernel args missing: nohz_full=1-55</li>" in page
    # one command for the fleet above the table, each host's own in its details
    assert '<code class="cmd">ansible-playbook -i inventory.yml maitred.rke2_numa.rolling -e rke2_numa_reboot_ok=true</code>' in page
    assert ("<p>to roll it: <code>ansible-playbook -i inventory.yml maitred.rke2_numa.rolling -e rke2_numa_hosts=b -e rke2_numa_reboot_ok=true"
            "</code></p>") in page
    assert "a roll would: drain, reboot" in page
    assert '<p class="no-map">no topology was read</p>' in page
    assert "(check.yml)" in page
    hosts[0]["compliance"]["warnings"] = ["config.yaml is 0644"]
    hosts[0]["pods"] = {"error": "pods not audited: Unauthorized"}
    hosts[1]["pods"]["topology_errors"] = ["ml/x was refused by the kubelet: TopologyAffinityError (no fit)"]
    hosts.append({"host": "d", "compliance": hosts[0]["compliance"], "pods": {"error": "pods not audited: Unauthorized"}})
    assert report.check_lines(hosts) == [
        "a: compliant, plan %s" % plan["fingerprint"], "a: WARNING: config.yaml is 0644",
        "b: NOT compliant: kernel args missing: nohz_full=1-55 -> drain, reboot", "b: NOT PINNED: ml/vllm-0 is Burstable",
        "b: REFUSED: ml/x was refused by the kubelet: TopologyAffinityError (no fit)",
        "c: not checked: unreachable, or failed before its compliance was decided",
        "d: compliant, plan %s" % plan["fingerprint"], "d: WARNING: config.yaml is 0644",
        "pods not audited: Unauthorized (a, d)"], "the cluster's error once, not per host"


def test_plan_mode_shows_planned_and_a_host_without_plan(samples):
    topology, plan = samples["l40s-offline"]
    hosts = [{"host": "ok", "topology": topology, "plan": plan}, {"host": "refused", "topology": topology}]
    rows = report.summarize(hosts, "plan")
    assert [r["label"] for r in rows] == ["planned", "not planned"]
    assert rows[0]["pod"] == "60 / 505.5Gi / 4.0Gi / 2" and rows[0]["shapes"] == ["tp1: 1 (node 0)"]
    page = Page(report.render_html(hosts))
    # without a plan the CPUs are only online: neither reserved nor isolated
    assert page.hosts["refused"]["cells"] == Counter(online=62, offline=2)


def test_a_big_fleet_starts_collapsed(samples):
    topology, plan = samples["dgx-h100"]
    small = Page(report.render_html([{"host": "h%d" % i, "topology": topology, "plan": plan} for i in range(report.OPEN_HOSTS)]))
    assert all(h["open"] for h in small.hosts.values())
    big = report.render_html([{"host": "h%d" % i, "topology": topology, "plan": plan} for i in range(report.OPEN_HOSTS + 1)])
    page = Page(big)
    assert not any(h["open"] for h in page.hosts.values())
    # the summary and the filter box come before the first host
    assert big.index('class="summary"') < big.index('id="filter"') < big.index('id="fleet"') < big.index("<details")
    assert page.tags["link"] == 0 and "http" not in big.replace("http-equiv", "")  # nothing to fetch


def test_markdown_is_one_table_row_per_host_and_caps_the_warnings(samples):
    topology, plan = copy.deepcopy(samples["dgx-h100"])
    plan["warnings"] = ["w%d | with a pipe" % i for i in range(report.MARKDOWN_WARNINGS + 5)]
    text = report.render_markdown([{"host": "gpu|1", "topology": topology, "plan": plan}, {"host": "gpu2"}])
    lines = text.splitlines()
    assert lines[0] == "# RKE2 NUMA fleet report"
    assert lines[2] == "2 hosts: 1 planned, 1 not planned; warnings on 1 host (plan.yml)."
    # worst first: the host not planned before the planned one
    assert lines[6].startswith("| gpu2 | not planned: ")
    assert lines[7].startswith("| gpu\\|1 | planned | `%s` | 110 / 1018.8Gi / 4.0Gi / 4 |" % plan["fingerprint"])
    assert "- **gpu\\|1**: w0 \\| with a pipe" in lines
    assert lines[-1] == "- ... 5 more in index.html"


@pytest.mark.parametrize("hosts, mode, message", [
    ([{"host": "a"}], "apply", "mode must be one of plan, check"),
    ([{"plan": {}}], "plan", "needs a 'host' name"),
])
def test_bad_input_is_refused(hosts, mode, message):
    with pytest.raises(report.ReportError, match=message):
        report.render_html(hosts, mode)


def test_a_map_shared_by_identical_hosts_is_drawn_once(samples):
    topology, plan = samples["dgx-h100"]
    other = samples["l40s-offline"]
    hosts = [{"host": "gpu-%d" % i, "topology": topology, "plan": plan} for i in range(3)]
    hosts.append({"host": "other", "topology": other[0], "plan": other[1]})
    page = report.render_html(hosts)
    assert page.count('<div class="map">') == 2 and page.count('class="numa-node"') == 3
    assert page.count('<div class="same-map" data-same="0">same NUMA map as <a href="#host-0">gpu-0</a></div>') == 2


# ---------------------------------------------------------------- prove.yml's reports

def _probe(name, verdict, summary, ok=None):
    return {"name": name, "verdict": verdict, "ok": verdict != "failed" if ok is None else ok, "summary": summary, "warnings": []}


PROVE_REPORTS = {
    "gpu-a": {"ok": True, "results": [_probe("p-a-0", "proven", "NUMA node 0: exclusive CPUs 2-3, memory node 0, GPU 0000:18:00.0")],
              "reasons": [], "inconclusive": [], "warnings": []},
    "gpu-b": {"ok": False, "results": [_probe("p-b-0", "failed", "GPU 0000:c8:00.0 on NUMA node 1 *is* [not](http://x) aligned")],
              "reasons": ["p-b-0 (numa0): ..."], "inconclusive": [], "warnings": []},
    "gpu-c": {"ok": True, "results": [_probe("p-c-0", "inconclusive", "inconclusive: the probe's GPU could not be identified")],
              "reasons": [], "inconclusive": ["p-c-0 (numa0): inconclusive: ..."], "warnings": []},
    "gpu-d": None,
}


def test_prove_fleet_sorts_hosts_by_their_worst_probe():
    fleet = report.prove_fleet(PROVE_REPORTS)
    assert fleet == {"hosts": 4, "proven": ["gpu-a"], "failed": ["gpu-b"], "inconclusive": ["gpu-c"], "not_run": ["gpu-d"], "numa_nodes": {}}


def test_prove_markdown_has_a_row_per_probe_and_renders_no_link_or_emphasis():
    text = report.render_prove_markdown(PROVE_REPORTS)
    assert "4 hosts: 1 proven, 1 failed, 1 inconclusive, 1 not run (prove.yml)." in text
    assert "| gpu-a | p-a-0 | proven | NUMA node 0: exclusive CPUs 2-3, memory node 0, GPU 0000:18:00.0 |" in text
    assert "| gpu-c | p-c-0 | inconclusive | inconclusive: the probe's GPU could not be identified |" in text
    assert "| gpu-d | - | not run |" in text
    row = [line for line in text.splitlines() if line.startswith("| gpu-b")][0]
    assert "\\*is\\*" in row and "\\[not\\]\\(http:\u200b//x\\)" in row and "](http" not in row


def test_the_check_fleet_summary_sorts_the_hosts_and_totals_the_pod_audit():
    """fleet.json and the check's last line, from the same entries as the report (they were Jinja chains in check.yml)."""
    entries = [
        {"host": "a", "compliance": {"compliant": True, "actions": []}, "pods": None},
        {"host": "b", "compliance": {"compliant": False, "actions": ["reboot", "rke2_config"]},
         "pods": {"unpinned": ["ml/x", "ml/y"], "topology_errors": ["ml/z"]}},
        {"host": "c", "compliance": {"compliant": False, "actions": [], "blocked": ["50-site.yaml sets kubelet-arg"]},
         "pods": {"error": "kubectl: forbidden"}},
        {"host": "d", "compliance": None, "pods": None},
    ]
    fleet = report.check_fleet(entries)
    assert fleet == {"hosts": 4, "compliant": ["a"], "not_compliant": ["b", "c"], "blocked": ["c"], "not_checked": ["d"], "not_readable": [], "refused": {},
                     "reboot": ["b"], "unpinned_gpu_pods": ["ml/x", "ml/y"], "topology_errors": ["ml/z"], "pods_not_audited": ["c"],
                     "managed_by_rancher": [], "managed_by": dict((h, {"managed_by": "none", "evidence": []}) for h in "abc"), "kubernetes": {},
                     "dra_gpus": {}, "dra_unaligned_gpu_pods": [], "dra_unaligned_claims": []}
    assert report.check_fleet_line(fleet) == (
        "1 of 4 compliant; to reconfigure: b (1 need a reboot); blocked (fix by hand first, never rolled): c; "
        "not checked (unreachable or failed): d; GPU pods that cannot be pinned: 2; pods refused with TopologyAffinityError: 1"
        "; pods not audited on: c")
    quiet = report.check_fleet(entries[:1])
    assert report.check_fleet_line(quiet) == (
        "1 of 1 compliant; to reconfigure: none (0 need a reboot); blocked (fix by hand first, never rolled): none; "
        "not checked (unreachable or failed): none; GPU pods that cannot be pinned: 0; pods refused with TopologyAffinityError: 0")


def test_dra_findings_are_in_the_host_s_lines_its_warnings_fleet_json_and_the_last_line():
    pods = {"unpinned": [], "topology_errors": [], "dra_unaligned": ["ml/vllm holds gpu.nvidia.com gpu-1 ..."],
            "dra_claims": ["ResourceClaim ml/c asks for a GPU ..."], "dra": {"gpu_path": "dra", "findings": ["gpu.nvidia.com n/gpu-0: ..."]}}
    entries = [{"host": "g", "compliance": {"compliant": True, "plan_fingerprint": "f"}, "pods": pods},
               {"host": "p", "compliance": {"compliant": True, "plan_fingerprint": "f"}, "pods": {"dra": {"gpu_path": "device-plugin", "findings": []}}}]
    assert report.check_lines(entries)[1:4] == ["g: NOT ALIGNED (DRA): ml/vllm holds gpu.nvidia.com gpu-1 ...",
                                                "g: DRA CLAIM: ResourceClaim ml/c asks for a GPU ...", "g: DRA: gpu.nvidia.com n/gpu-0: ..."]
    assert report.host_warnings(entries[0]) == ["NOT ALIGNED (DRA): ml/vllm holds gpu.nvidia.com gpu-1 ...",
                                                "DRA CLAIM: ResourceClaim ml/c asks for a GPU ...", "DRA: gpu.nvidia.com n/gpu-0: ..."]
    fleet = report.check_fleet(entries)
    assert fleet["dra_gpus"] == {"g": "dra"} and len(fleet["dra_unaligned_gpu_pods"]) == 1 and len(fleet["dra_unaligned_claims"]) == 1
    assert report.check_fleet_line(fleet).endswith(
        "; GPUs by DRA on: g (DRA GPU pods the kubelet does not align: 1, claims without a NUMA constraint: 1)")


def test_a_node_rancher_manages_is_named_so_in_its_line_fleet_json_and_the_page():
    managed = {"compliant": True, "actions": [], "plan_fingerprint": "f1", "managed_by": "rancher", "config_mode": "dropin",
               "managed_by_evidence": ["/etc/rancher/rke2/config.yaml.d/50-rancher.yaml (Rancher's RKE2 settings)"]}
    entries = [{"host": "r", "compliance": managed, "pods": None}, {"host": "p", "compliance": {"compliant": True}, "pods": None}]
    assert report.check_lines(entries)[0] == (
        "r: compliant, plan f1; managed by Rancher (/etc/rancher/rke2/config.yaml.d/50-rancher.yaml (Rancher's RKE2 settings)), "
        "config in dropin mode")
    assert report.check_lines(entries)[1] == "p: compliant, plan "
    fleet = report.check_fleet(entries)
    assert fleet["managed_by_rancher"] == ["r"] and fleet["managed_by"]["r"]["evidence"] == managed["managed_by_evidence"]
    assert report.check_fleet_line(fleet).endswith("; managed by Rancher (the plan in the drop-in): r")
    page = report.render_html(entries, "check")
    assert 'class="managed"' in page and "config in dropin mode" in page


def test_the_check_page_groups_findings_by_check_and_gives_the_command_to_run(samples):
    """One line per check with a count and the first example - not a paragraph of twenty findings, one per kernel arg -
    and the command that rolls the host instead of the roll's role names; reserved memory in a colour of its own;
    the warnings listed; the labels a table."""
    topology, plan = samples["dgx-h100"]
    args = ["isolcpus=managed_irq,1-55", "nohz_full=1-55", "rcu_nocbs=1-55", "irqaffinity=0"]
    findings = ([{"check": "boot", "text": "the boot configuration does not hold the plan's kernel args: add %s" % " ".join(args)}]
                + [{"check": "cmdline", "text": "kernel arg %s is not on the running cmdline (reboot pending?)" % a} for a in args]
                + [{"check": "config", "text": "kubelet flag cpu-manager-policy=static is missing in RKE2's config"}])
    compliance = {"compliant": False, "reasons": [f["text"] for f in findings], "findings": findings,
                  "actions": ["drain", "boot_params", "reboot", "rke2_config", "reset", "verify", "uncordon", "label"],
                  "plan_fingerprint": plan["fingerprint"], "warnings": ["w%d" % i for i in range(5)]}
    host = {"host": "gpu07", "topology": topology, "plan": plan, "compliance": compliance,
            "labels": ["maitred.io/numa-aligned=true", "rke2-numa.maitred.io/numa-nodes=2"]}
    groups = report.finding_groups(compliance)
    assert [(g["title"], g["count"]) for g in groups] == [("boot configuration", 1), ("running kernel args", 4), ("RKE2 config", 1)]
    assert groups[1]["first"] == "kernel arg isolcpus=managed_irq,1-55 is not on the running cmdline (reboot pending?)"
    page = report.render_html([host], "check", inventory="/srv/ops/inventory.yml", kubeconfig="/etc/rancher/rke2/rke2-numa.yaml")
    assert "<li>running kernel args (4): kernel arg isolcpus=managed_irq,1-55 is not on the running cmdline (reboot pending?)</li>" in page
    assert page.count("is not on the running cmdline") == 4 + 1, "all four in the host's details, the first in its row"
    # the README's form, with the kubeconfig the run used (the roll would fall back to the admin's)
    command = ("ansible-playbook -i /srv/ops/inventory.yml maitred.rke2_numa.rolling -e rke2_numa_kubeconfig=/etc/rancher/rke2/rke2-numa.yaml "
               "-e rke2_numa_hosts=gpu07 -e rke2_numa_reboot_ok=true")
    assert "<p>to roll it: <code>%s</code></p>" % command in page
    fleet = ("ansible-playbook -i /srv/ops/inventory.yml maitred.rke2_numa.rolling -e rke2_numa_kubeconfig=/etc/rancher/rke2/rke2-numa.yaml "
             "-e rke2_numa_reboot_ok=true")
    assert '<code class="cmd">%s</code>' % fleet in page.split('<table id="fleet">', 1)[0], "one command for the fleet, above the table"
    assert "boot_params" not in page.split('<table id="fleet">', 1)[1].split("</table>", 1)[0], "no role names in the table"
    # reserved CPUs and reserved memory: two colours
    assert '<i class="reserved"></i>reserved CPU' in page and '<i class="reserved-mem"></i>reserved memory' in page
    assert ".cpu.reserved,i.reserved{fill:#e8743b" in page and ".mem.reserved-mem,i.reserved-mem{fill:#d4b84a" in page
    assert 'class="mem reserved-mem"' in page and 'class="mem reserved"' not in page
    # the warnings listed in the row (3, then a link to the rest), the labels a table
    row = page.split('<tr data-host="gpu07"', 1)[1].split("</tr>", 1)[0]
    assert "<li>w0</li><li>w1</li><li>w2</li></ul>" in row and ">2 more</a>" in row
    assert "<tr><td>rke2-numa.maitred.io/numa-nodes</td><td>2</td></tr>" in page
    markdown = report.render_markdown([host], "check", inventory="/srv/ops/inventory.yml")
    assert "running kernel args \\(4, e.g. kernel arg isolcpus=managed\\_irq,1-55" in markdown
    assert ("To roll every host that needs it (the roll takes only those): `ansible-playbook -i /srv/ops/inventory.yml maitred.rke2\\_numa.rolling "
            "-e rke2\\_numa\\_reboot\\_ok=true`") in markdown
    assert report.roll_command("gpu 1", {"compliant": False}, "my inv.yml") == \
        "ansible-playbook -i 'my inv.yml' maitred.rke2_numa.rolling -e 'rke2_numa_hosts=gpu 1'"
    # a compliant host and a blocked one get no command
    assert report.roll_command("a", {"compliant": True}) == "" and report.roll_command("a", {"compliant": False, "blocked": ["x"]}) == ""


def test_the_checks_and_their_titles_are_compliance_s():
    """One table names each check a finding carries and its title: the report groups by compliance.CHECKS."""
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import compliance, report
    assert report.CHECK_TITLES is compliance.CHECKS
    groups = report.finding_groups({"findings": [{"check": "labels", "text": "l"}, {"check": "boot", "text": "b"}]})
    assert [(g["check"], g["title"]) for g in groups] == [("boot", "boot configuration"), ("labels", "labels")]


def test_a_check_line_names_each_kernel_arg_and_kubelet_flag_once():
    """The old line said each kernel argument three times (the boot finding, the running kernel, one finding per
    argument) and each kubelet flag twice: some 2,000 characters for one DGX."""
    reasons = ["the boot configuration does not hold the plan's kernel args: add isolcpus=managed_irq,1-3 nohz_full=1-3",
               "kernel arg isolcpus=managed_irq,1-3 is not on the running cmdline (reboot pending?)",
               "kernel arg nohz_full=1-3 is not on the running cmdline (reboot pending?)",
               "kubelet flag reserved-cpus=0,4 is missing in RKE2's config", "kubelet flag cpu-manager-policy=static is missing in RKE2's config",
               "cpu_manager_state policy is none, the plan wants static"]
    assert report.compact_reasons(reasons) == [
        reasons[0], "kernel args isolcpus, nohz_full are not on the running cmdline (reboot pending?)",
        "kubelet flags reserved-cpus, cpu-manager-policy are missing in RKE2's config", reasons[-1]]
    assert report.compact_reasons(reasons[1:2]) == reasons[1:2]
    line = report.check_lines([{"host": "dgx", "compliance": {"compliant": False, "reasons": reasons, "actions": ["reboot"]}}])[0]
    assert line.count("isolcpus=") == 1 and line.count("reserved-cpus") == 1 and line.endswith("-> reboot"), line
