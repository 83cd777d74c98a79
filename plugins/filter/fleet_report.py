# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report of a plan or check run (logic in plugin_utils/report.py)."""

from __future__ import annotations


DOCUMENTATION = r"""
name: fleet_report
short_description: Render the fleet report of a run as one HTML page or a Markdown summary
version_added: 0.1.0
description:
  - Turns the plans (and, after a check, the compliance decisions and pod audits) of all hosts of a run into one
    self-contained HTML page - no network, no external script or style sheet - or a Markdown summary for CI job
    summaries and change tickets.
  - The page starts with the fleet's summary and a filter box, then a table with a row per host (compliant or why
    not, the plan's fingerprint, the biggest single-NUMA Guaranteed pod as cpu / memory / hugepages / GPUs, the pod
    shapes and how many copies fit), then per host, collapsed in fleets of more than 8 hosts, a NUMA map in the
    spirit of lstopo - a box per NUMA node (CPU-less nodes as memory only) with its CPUs as cells grouped by core
    and coloured reserved, isolated or offline, its memory with the reserved and hugepage parts, its GPUs and NICs -
    and the host's labels (its RKE2 node-label entries and the NUMA capacity labels of the
    C(maitred.rke2_numa.labels) role) and warnings.
  - Reads, for each host, C(rke2_numa_topology) and C(rke2_numa_plan) (set by the C(maitred.rke2_numa.topology) and
    C(maitred.rke2_numa.plan) roles), and in O(mode=check) C(rke2_numa_compliance) and C(rke2_numa_pod_audit) (set
    by the check playbook). A host without them is shown as not planned or not checked.
author:
  - maitred.rke2_numa contributors (@maitred)
positional: _input, hostvars
options:
  _input:
    description: The hosts of the run, in the order to show them (for example C(ansible_play_hosts_all)).
    type: list
    elements: str
    required: true
  hostvars:
    description: Ansible's C(hostvars).
    type: dict
    required: true
  output:
    description: V(html) for the page, V(markdown) for the summary.
    type: str
    default: html
    choices: [html, markdown]
  mode:
    description:
      - V(plan) - the hosts were planned (the plan playbook); each is planned or not.
      - V(check) - the hosts were checked (the check playbook); each is compliant or not, and why.
    type: str
    default: plan
    choices: [plan, check]
  title:
    description: The report's title.
    type: str
    default: RKE2 NUMA fleet report
  notice:
    description: A line said under the summary, in bold (the check says so when another roll holds the roll's Lease).
    type: str
    default: ""
  inventory:
    description: The inventory the commands the report gives name (C(ansible-playbook -i <inventory> ... -e rke2_numa_hosts=<host>)).
    type: str
    default: inventory.yml
  kubeconfig:
    description: The kubeconfig the run used, carried by the commands the report gives (empty - none named).
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Write the fleet report on the controller
  ansible.builtin.copy:
    content: "{{ ansible_play_hosts_all | maitred.rke2_numa.fleet_report(hostvars, mode='check') }}"
    dest: report/index.html
    mode: "0644"
  delegate_to: localhost
  run_once: true

- name: Write the Markdown summary beside it
  ansible.builtin.copy:
    content: "{{ ansible_play_hosts_all | maitred.rke2_numa.fleet_report(hostvars, output='markdown', mode='check') }}"
    dest: report/summary.md
    mode: "0644"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
_value:
  description: The HTML page, or the Markdown summary.
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.compliance import unread_reason
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.hostvars_view import facts_view
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import LabelError, numa_labels
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.report_runs import RunsError, fold_rows, host_reports, runs_hostvars
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.report import (
    ReportError, check_fleet, check_fleet_line, check_lines, render_html, render_markdown)

# What the report reads of each host, by the entry's key.
HOST_VARS = {
    "topology": "rke2_numa_topology",
    "plan": "rke2_numa_plan",
    "compliance": "rke2_numa_compliance",
    "pods": "rke2_numa_pod_audit",
}


def host_entry(host, variables):
    """{host, topology, plan, compliance, pods, labels} of one host from its hostvars."""
    entry = {"host": host}
    for key, name in HOST_VARS.items():
        value = variables.get(name)
        entry[key] = value if isinstance(value, dict) and value else None
    # a node read as a user who could not read root's files (node_state_info failed, naming them), or one that could not
    # be planned or judged (node_check's refused: a value the planner refuses): not checked, and why
    read = variables.get("__rke2_numa_state")
    refused = str(read.get("refused") or "") if isinstance(read, dict) else ""
    entry["not_checked"] = (unread_reason(read) or refused) if isinstance(read, dict) else ""
    entry["refused"] = bool(refused) and not unread_reason(read)
    # labels per host: the plan's RKE2 node-label entries, then the NUMA capacity labels the labels role publishes
    entry["labels"] = list((entry["plan"] or {}).get("node_labels") or [])
    if entry["plan"]:
        try:
            entry["labels"] += sorted("%s=%s" % item for item in numa_labels(entry["plan"], (entry["pods"] or {}).get("dra")).items())
        except LabelError as e:
            entry["labels"].append("(no capacity labels: %s)" % e)
    return entry


def fleet_report(hosts, hostvars, output="html", mode="plan", title="RKE2 NUMA fleet report", notice="", inventory="inventory.yml",
                 kubeconfig=""):
    """The page (output=html) or the summary (output=markdown) of the run's ``hosts``."""
    if output not in ("html", "markdown"):
        raise AnsibleFilterError("fleet_report: output must be html or markdown, got %r" % (output,))
    hostvars = facts_view(hostvars)   # the facts as stored: not every host's plan templated anew (hostvars_view.py)
    try:
        entries = [host_entry(str(host), hostvars[host] if host in hostvars else {}) for host in hosts]
        render = render_html if output == "html" else render_markdown
        return render(entries, mode, title, notice or "", str(inventory or "inventory.yml"), str(kubeconfig or ""))
    except ReportError as e:
        raise AnsibleFilterError("fleet_report: %s" % e)


def fleet_host_reports(hosts, hostvars, playbook="check", fleet_hosts=None):
    """check.yml's <host>.json files and run.json for the run's ``hosts`` (plugin_utils/report_runs.py host_reports)."""
    return host_reports(list(hosts), facts_view(hostvars), str(playbook), fleet_hosts)


def fleet_report_runs(runs, order=None):
    """{hosts, hostvars} of the fleet from the reports of runs that each checked a part of it (report.yml;
    plugin_utils/report_runs.py runs_hostvars)."""
    try:
        hosts, hostvars = runs_hostvars(list(runs or []), list(order or []))
    except RunsError as e:
        raise AnsibleFilterError("report_runs: %s" % e)
    return {"hosts": hosts, "hostvars": hostvars}


def fleet_check_lines(hosts, hostvars):
    """The check play's lines for the run's ``hosts`` (plugin_utils/report.py check_lines), in the order given."""
    hostvars = facts_view(hostvars)
    return check_lines([host_entry(str(host), hostvars[host] if host in hostvars else {}) for host in hosts])


def fleet_summary(hosts, hostvars):
    """check.yml's fleet summary of the run's ``hosts`` (plugin_utils/report.py check_fleet), with its line."""
    hostvars = facts_view(hostvars)
    entries = [host_entry(str(host), hostvars[host] if host in hostvars else {}) for host in hosts]
    fleet = check_fleet(entries)
    fleet["rows"] = fold_rows(entries)   # what the page says of each host, folded: the artifacts carry it (docs/AWX.md)
    return {"fleet": fleet, "line": check_fleet_line(fleet)}


class FilterModule(object):
    """maitred.rke2_numa report filters."""

    def filters(self):
        return {"fleet_report": fleet_report, "check_lines": fleet_check_lines, "check_fleet": fleet_summary,
                "host_reports": fleet_host_reports, "report_runs": fleet_report_runs}
