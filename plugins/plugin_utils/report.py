# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report: one self-contained HTML page and a Markdown summary for a whole run.

Runs on the controller (filter fleet_report). The page's data is prepared
here (page_view); its HTML, CSS, SVG and script are the Jinja2 template
playbooks/templates/fleet_report.html.j2, rendered with autoescaping on, so
every string a host provides (names, addresses, warnings, reasons) is escaped.
The page needs no network.

Each host is an entry ``{host, plan, topology, compliance, pods, labels}``;
only ``host`` is required (a host that failed before its plan has none).
``mode`` is ``plan`` (plan.yml: a planned host is "planned") or ``check``
(check.yml: compliant or not, and why).

The DOM says what the maps show (see the template's header).
"""

from __future__ import annotations

import functools
import json
import shlex
from html import escape

import jinja2

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.collection_files import collection_file
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.compliance import CHECKS
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_rules import minor_of
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.topology_table import cpus_cell, plural, size
from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import parse_cpulist
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import human

MODES = ("plan", "check")
# At most this many hosts are shown open; a bigger fleet starts collapsed (the table comes first).
OPEN_HOSTS = 8
# Markdown: at most this many warning lines (CI job summaries are limited in size); the page has them all.
MARKDOWN_WARNINGS = 100
# The map's geometry, in px: a CPU cell, the gap between a core's threads, between cores, the memory bar.
CELL, GAP, CORE_GAP, BAR = 10, 1, 4, 14
# The narrowest node box (a memory-only node, a node of a few cores), in px: room for its captions.
NODE_WIDTH = 260


class ReportError(Exception):
    """Input the report cannot be made from."""


# ----------------------------------------------------------------- one host, as the report sees it


def _cpus(cpulist):
    return set(parse_cpulist(cpulist or ""))


def host_status(entry, mode):
    """(css class, short text, detail) of a host: planned / compliant / NOT compliant / BLOCKED (the apply chain
    would refuse it) / not planned / not checked."""
    plan, compliance = entry.get("plan"), entry.get("compliance")
    if mode == "check":
        if not compliance:
            return "failed", "not checked", entry.get("not_checked") or "unreachable, or failed before its compliance was decided"
        if compliance.get("compliant"):
            return "compliant", "compliant", ""
        if compliance.get("blocked"):
            return "blocked", "BLOCKED", "; ".join(compliance["blocked"]) + " - the roll skips it until this is fixed by hand"
        detail = "; ".join(compliance.get("reasons") or [])
        if compliance.get("actions"):
            detail += " -> " + ", ".join(compliance["actions"])
        return "not-compliant", "NOT compliant", detail
    if not plan:
        return "failed", "not planned", "unreachable, or its plan was refused (the play's output says why)"
    return "planned", "planned", ""


# The checks of compliance.assess's findings, as the report names them, in the order it lists them.
CHECK_TITLES = CHECKS   # compliance.py names the checks and their titles
FIRST_EXAMPLE = 160   # characters of a group's first finding in the fleet table (the host's details show it whole)


def finding_groups(compliance):
    """The host's findings grouped by the check that made them: [{check, title, count, first, texts}], one per check,
    in CHECK_TITLES' order - one line per check with a count and the first example, not one per kernel arg."""
    findings = (compliance or {}).get("findings")
    if findings is None:   # a decision without findings (older fleet.json): its reasons, as one group
        findings = [{"check": "findings", "text": t} for t in (compliance or {}).get("reasons") or []]
    titles = dict(CHECK_TITLES)
    order = [c for c, dummy in CHECK_TITLES]
    groups = {}
    for finding in findings:
        groups.setdefault(finding.get("check") or "findings", []).append(str(finding.get("text") or ""))
    ranked = sorted(groups, key=lambda c: (order.index(c) if c in order else len(order), c))
    return [{"check": c, "title": titles.get(c, c), "count": len(groups[c]), "first": groups[c][0], "texts": groups[c]}
            for c in ranked]


def roll_command(host, compliance, inventory="inventory.yml", kubeconfig=""):
    """What to run for a checked host that does not run its plan: the roll of that host alone, in the README's form
    (``-e rke2_numa_hosts=<host>``), with the kubeconfig the run used (else the roll would fall back to the admin's) and
    ``rke2_numa_reboot_ok`` when its kernel args need a reboot; '' for a compliant, blocked or unchecked host. Each
    value quoted for a POSIX shell."""
    if not compliance or compliance.get("compliant") or compliance.get("blocked"):
        return ""
    words = ["ansible-playbook", "-i", shlex.quote(inventory or "inventory.yml"), "maitred.rke2_numa.rolling"]
    if kubeconfig:
        words += ["-e", shlex.quote("rke2_numa_kubeconfig=%s" % kubeconfig)]
    words += ["-e", shlex.quote("rke2_numa_hosts=%s" % host)]
    if "reboot" in (compliance.get("actions") or []):
        words += ["-e", "rke2_numa_reboot_ok=true"]
    return " ".join(words)


def biggest_pod(plan):
    """The NUMA table row of the biggest single-NUMA Guaranteed pod (most GPUs, then CPUs, then memory), or None."""
    rows = [t for t in (plan or {}).get("numa_tables") or [] if t.get("exclusive_cpus")]
    if not rows:
        return None
    return max(rows, key=lambda t: (len(t["gpus"]), t["exclusive_cpus"], t["allocatable_memory_bytes"]))


def pod_text(table):
    """cpu / memory / hugepages / GPUs of a NUMA table row."""
    return "%d / %s / %s / %d" % (table["exclusive_cpus"], size(table["allocatable_memory_bytes"]),
                                  size(table["hugepages_bytes"]), len(table["gpus"]))


def shape_text(fit):
    """vllm-tp4: 2 (nodes 0,1) / vllm-tp4: spans NUMA nodes / vllm-tp4: none."""
    if not fit.get("fits"):
        return "%s: none" % fit["name"]
    if not fit.get("nodes"):
        return "%s: %d (%s)" % (fit["name"], fit.get("copies", 1), fit.get("note") or "spans NUMA nodes")
    return "%s: %d (node%s %s)" % (fit["name"], fit["copies"], "s" if len(fit["nodes"]) > 1 else "",
                                   ",".join(str(n) for n in fit["nodes"]))


def host_warnings(entry):
    """The host's warnings, each once: topology, plan, compliance, and the pod audit's findings."""
    plan, topology = entry.get("plan") or {}, entry.get("topology") or {}
    compliance, pods = entry.get("compliance") or {}, entry.get("pods") or {}
    found = []
    for text in (list(topology.get("warnings") or []) + list(plan.get("warnings") or [])
                 + list(compliance.get("warnings") or [])
                 + ["NOT PINNED: %s" % p for p in pods.get("unpinned") or []]
                 + ["REFUSED: %s" % p for p in pods.get("topology_errors") or []]
                 + dra_lines(pods)
                 + ([pods["error"]] if pods.get("error") else [])):
        if isinstance(text, str) and text not in found:
            found.append(text)
    return found


def dra_lines(pods):
    """The pod audit's DRA findings (compliance.finish_dra), each with its label: a DRA GPU pod whose CPUs the kubelet
    pins, a claim that does not keep its GPU with its CPUs or NICs, a device whose slice disagrees with sysfs."""
    return (["NOT ALIGNED (DRA): %s" % p for p in pods.get("dra_unaligned") or []]
            + ["DRA CLAIM: %s" % c for c in pods.get("dra_claims") or []]
            + ["DRA: %s" % f for f in (pods.get("dra") or {}).get("findings") or []])


def managed_text(compliance):
    """``managed by Rancher (<evidence>), config in <mode> mode`` for a node Rancher manages, else ''."""
    if (compliance or {}).get("managed_by") != "rancher":
        return ""
    evidence = "; ".join(compliance.get("managed_by_evidence") or [])
    return "managed by Rancher (%s), config in %s mode" % (evidence, compliance.get("config_mode") or "?")


def compact_reasons(reasons):
    """The reasons as a person reads them on one line: the findings that differ only in the thing they name (``kernel
    arg X is not on the running cmdline``, ``kubelet flag X is missing in RKE2's config``, one per argument) said once,
    naming each by its name (``kernel arg isolcpus, nohz_full is not on ...``) - its value is in the finding that adds
    it (``add isolcpus=...``) or in the report; every other reason as it is, in order."""
    reasons = [str(r) for r in reasons or []]
    keys, clusters = [], {}
    for text in reasons:
        words = text.split(" ")
        key = (words[0], words[1], " ".join(words[3:])) if len(words) >= 4 else (text,)
        if key not in clusters:
            keys.append(key)
            clusters[key] = []
        clusters[key].append(words[2] if len(key) == 3 else text)
    out = []
    for key in keys:
        things = clusters[key]
        if len(key) == 1:
            out.append(key[0])
        elif len(things) == 1:
            out.append(" ".join((key[0], key[1], things[0], key[2])))
        else:
            rest = "are " + key[2][3:] if key[2].startswith("is ") else key[2]
            out.append(" ".join((key[0], key[1] + "s", ", ".join(t.split("=", 1)[0] for t in things), rest)))
    return out


def check_lines(entries):
    """The check play's output, a line per host and finding: ``<host>: compliant, plan <fingerprint>`` or
    ``<host>: NOT compliant: <reasons> -> <actions>`` (``not checked`` for a host that failed before), then
    ``<host>: WARNING: ...`` per compliance warning and the pod audit's ``NOT PINNED:`` and ``REFUSED:`` lines (the
    topology's and the plan's warnings were shown by their own tasks); last, each pod audit error once, with its hosts."""
    lines = []
    for entry in entries:
        host = str(entry["host"])
        status, label, detail = host_status(entry, "check")
        compliance, pods = entry.get("compliance") or {}, entry.get("pods") or {}
        rancher = managed_text(compliance)
        if status == "compliant":
            lines.append("%s: compliant, plan %s%s" % (host, compliance.get("plan_fingerprint") or "", rancher and "; " + rancher))
        elif status == "not-compliant":
            detail = "; ".join(compact_reasons(compliance.get("reasons")))
            actions = compliance.get("actions") or []
            then = " -> " + ", ".join(actions) if actions else ""
            lines.append("%s: %s: %s%s%s" % (host, label, detail, then, rancher and "; " + rancher))
        else:
            lines.append("%s: %s: %s%s" % (host, label, detail, rancher and "; " + rancher))
        lines += ["%s: WARNING: %s" % (host, w) for w in compliance.get("warnings") or []]
        lines += ["%s: NOT PINNED: %s" % (host, p) for p in pods.get("unpinned") or []]
        lines += ["%s: REFUSED: %s" % (host, p) for p in pods.get("topology_errors") or []]
        lines += ["%s: %s" % (host, line) for line in dra_lines(pods)]
    # the pod audit's error is the cluster's, not the host's: said once, with the hosts it concerns
    errors = {}
    for entry in entries:
        error = (entry.get("pods") or {}).get("error")
        if error:
            errors.setdefault(error, []).append(str(entry["host"]))
    lines += ["%s (%s)" % (error, ", ".join(hosts)) for error, hosts in errors.items()]
    return lines


def check_fleet(entries):
    """check.yml's fleet summary (fleet.json): the hosts by what the check found, and the pod audit's totals.
    A host without a compliance decision (it failed before) is not checked; blocked hosts are among the not compliant."""
    checked = [e for e in entries if e.get("compliance")]
    names = [str(e["host"]) for e in checked]

    def hosts(test):
        return [str(e["host"]) for e in checked if test(e["compliance"], e.get("pods") or {})]

    return {
        "hosts": len(entries),
        "compliant": hosts(lambda c, p: bool(c.get("compliant"))),
        "not_compliant": hosts(lambda c, p: not c.get("compliant")),
        "blocked": hosts(lambda c, p: bool(c.get("blocked"))),
        "not_checked": [str(e["host"]) for e in entries if str(e["host"]) not in names],
        # among them, those read as a user who could not read root's files: become would check them
        "not_readable": [str(e["host"]) for e in entries if str(e["host"]) not in names and e.get("not_checked") and not e.get("refused")],
        # and those that could not be planned or judged (a value the planner refuses): fixed in the inventory
        "refused": dict((str(e["host"]), str(e["not_checked"])) for e in entries if str(e["host"]) not in names and e.get("refused")),
        "reboot": hosts(lambda c, p: "reboot" in (c.get("actions") or [])),
        "unpinned_gpu_pods": [pod for e in checked for pod in (e.get("pods") or {}).get("unpinned") or []],
        "topology_errors": [pod for e in checked for pod in (e.get("pods") or {}).get("topology_errors") or []],
        "pods_not_audited": hosts(lambda c, p: "error" in p),
        # Dynamic Resource Allocation: how each host with DRA GPUs serves them (dra or both), the pods and claims that
        # do not keep a DRA GPU with their CPUs
        "dra_gpus": dict((str(e["host"]), (e.get("pods") or {})["dra"]["gpu_path"]) for e in checked
                         if ((e.get("pods") or {}).get("dra") or {}).get("gpu_path") in ("dra", "both")),
        "dra_unaligned_gpu_pods": [pod for e in checked for pod in (e.get("pods") or {}).get("dra_unaligned") or []],
        "dra_unaligned_claims": [c for e in checked for c in (e.get("pods") or {}).get("dra_claims") or []],
        "managed_by_rancher": hosts(lambda c, p: c.get("managed_by") == "rancher"),
        "managed_by": dict((str(e["host"]), {"managed_by": e["compliance"].get("managed_by") or "none",
                                             "evidence": e["compliance"].get("managed_by_evidence") or []}) for e in checked),
        "kubernetes": kubernetes_minors(entries),
    }


def kubernetes_minors(entries):
    """{minor: [hosts]} - the kubelet each host's plan was made for (its plan's ``kubernetes``; planner.plan_version)."""
    minors = {}
    for entry in entries:
        minor = ((entry.get("plan") or {}).get("kubernetes") or {}).get("minor")
        if minor:
            minors.setdefault(str(minor), []).append(str(entry["host"]))
    return dict(sorted(minors.items(), key=lambda kv: minor_of(kv[0])))


def check_fleet_line(fleet):
    """The check's last line: counts, the hosts to reconfigure, blocked and not checked, the pod audit's totals."""
    def names(hosts):
        return ", ".join(hosts) or "none"

    line = ("%d of %d compliant; to reconfigure: %s (%d need a reboot); blocked (fix by hand first, never rolled): %s; "
            "not checked (unreachable or failed): %s; GPU pods that cannot be pinned: %d; pods refused with TopologyAffinityError: %d" % (
                len(fleet["compliant"]), fleet["hosts"], names([h for h in fleet["not_compliant"] if h not in fleet["blocked"]]),
                len(fleet["reboot"]), names(fleet["blocked"]), names(fleet["not_checked"]), len(fleet["unpinned_gpu_pods"]),
                len(fleet["topology_errors"])))
    if fleet.get("not_readable"):
        line += "; not readable without become (run with become to check them): " + ", ".join(fleet["not_readable"])
    if fleet.get("refused"):
        line += "; refused (fix the value and run again; each host's line says why): " + ", ".join(sorted(fleet["refused"]))
    if fleet["pods_not_audited"]:
        line += "; pods not audited on: " + ", ".join(fleet["pods_not_audited"])
    if fleet.get("managed_by_rancher"):
        line += "; managed by Rancher (the plan in the drop-in): " + ", ".join(fleet["managed_by_rancher"])
    if fleet.get("dra_gpus"):   # DRA GPUs: the Topology Manager does not align them; the claim must
        line += "; GPUs by DRA on: %s (DRA GPU pods the kubelet does not align: %d, claims without a NUMA constraint: %d)" % (
            ", ".join(sorted(fleet["dra_gpus"])), len(fleet.get("dra_unaligned_gpu_pods") or []), len(fleet.get("dra_unaligned_claims") or []))
    if len(fleet.get("kubernetes") or {}) > 1:   # a fleet in the middle of an upgrade: each node planned for its kubelet
        line += "; planned for their own kubelet: " + "; ".join(
            "%s (%s)" % (minor, ", ".join(hosts)) for minor, hosts in fleet["kubernetes"].items())
    return line


def summarize(entries, mode, inventory="inventory.yml", kubeconfig=""):
    """Per host the fleet table's row: {host, status, label, detail, groups, command, actions, fingerprint, pod, shapes,
    warnings}; ``inventory``: the inventory the commands name."""
    if mode not in MODES:
        raise ReportError("mode must be one of %s, got %r" % (", ".join(MODES), mode))
    rows = []
    for entry in entries:
        if not isinstance(entry, dict) or not entry.get("host"):
            raise ReportError("each host entry needs a 'host' name, got %r" % (entry,))
        status, label, detail = host_status(entry, mode)
        plan = entry.get("plan") or {}
        table = biggest_pod(plan)
        compliance = entry.get("compliance") or {}
        rows.append({
            "host": str(entry["host"]),
            "status": status,
            "label": label,
            "detail": detail,
            # a NOT compliant host: its findings grouped by check, the command that rolls it and what the roll would do
            "groups": finding_groups(compliance) if status == "not-compliant" else [],
            "command": roll_command(str(entry["host"]), compliance, inventory, kubeconfig) if mode == "check" else "",
            "actions": list(compliance.get("actions") or []) if status == "not-compliant" else [],
            "fingerprint": plan.get("fingerprint") or (entry.get("compliance") or {}).get("plan_fingerprint") or "",
            "pod": pod_text(table) if table else "",
            "pod_node": table["node"] if table else None,
            "shapes": [shape_text(fit) for fit in plan.get("pod_shapes") or []],
            "warnings": host_warnings(entry),
            "managed": managed_text(entry.get("compliance")),
            # the kubelet the plan was made for (planner.plan_version): a fleet in the middle of an upgrade shows it
            "kubernetes": (plan.get("kubernetes") or {}).get("minor") or "",
        })
    return rows


# The fleet table's order, the worst first: hosts not checked (or not planned), blocked, NOT compliant, then those that
# run (or got) their plan; the inventory's order within each.
STATUS_ORDER = ("failed", "blocked", "not-compliant", "compliant", "planned")


def worst_first(entries, rows):
    """(entries, rows) in STATUS_ORDER, the inventory's order kept within a status."""
    rank = dict((status, i) for i, status in enumerate(STATUS_ORDER))
    order = sorted(range(len(rows)), key=lambda i: rank[rows[i]["status"]])
    return [entries[i] for i in order], [rows[i] for i in order]


def fold_repeats(rows):
    """A host whose findings are word for word an earlier host's (twenty machines BLOCKED by the same drop-in) says
    ``same as <that host>`` in the fleet table (``same_as``: {host, index}); its details keep them whole."""
    first = {}
    for i, row in enumerate(rows):
        row["same_as"] = None
        if row["status"] not in ("failed", "blocked", "not-compliant"):
            continue
        key = (row["status"], row["detail"], tuple(tuple(g["texts"]) for g in row["groups"]), tuple(row["actions"]))
        if key in first:
            row["same_as"] = {"host": rows[first[key]]["host"], "index": first[key]}
        else:
            first[key] = i
    return rows


def fleet_command(entries, inventory="inventory.yml", kubeconfig=""):
    """The one command that rolls every checked host that does not run its plan (the roll takes only those; blocked
    ones never), with the kubeconfig the run used and ``rke2_numa_reboot_ok`` when one of them needs a reboot; '' when
    none needs a roll. Each value quoted for a POSIX shell."""
    commands = [(e.get("compliance") or {}) for e in entries if roll_command(str(e["host"]), e.get("compliance"), inventory, kubeconfig)]
    if not commands:
        return ""
    words = ["ansible-playbook", "-i", shlex.quote(inventory or "inventory.yml"), "maitred.rke2_numa.rolling"]
    if kubeconfig:
        words += ["-e", shlex.quote("rke2_numa_kubeconfig=%s" % kubeconfig)]
    if any("reboot" in (c.get("actions") or []) for c in commands):
        words += ["-e", "rke2_numa_reboot_ok=true"]
    return " ".join(words)


def fleet_counts(rows):
    """{status: number of hosts}, in the order the summary line names them."""
    counts = {}
    for status in ("compliant", "not-compliant", "blocked", "planned", "failed"):
        counts[status] = sum(1 for r in rows if r["status"] == status)
    return counts


def summary_line(rows, mode):
    """5 hosts: 3 compliant, 2 NOT compliant (1 blocked), 0 not checked; warnings on 2 hosts."""
    counts = fleet_counts(rows)
    if mode == "check":   # the blocked among the NOT compliant, as fleet.json and the artifacts count them
        not_compliant = counts["not-compliant"] + counts["blocked"]
        parts = ["%d compliant" % counts["compliant"], "%d NOT compliant (%d blocked)" % (not_compliant, counts["blocked"]),
                 "%d not checked" % counts["failed"]]
    else:
        parts = ["%d planned" % counts["planned"], "%d not planned" % counts["failed"]]
    return "%s: %s; warnings on %s" % (plural(len(rows), "host"), ", ".join(parts),
                                       plural(sum(1 for r in rows if r["warnings"]), "host"))


# ----------------------------------------------------------------- the NUMA map of one host (HTML + SVG)


def node_layout(topology, plan):
    """Per NUMA node: {id, cores (lists of CPUs), memory, reserved, hugepages, gpus, nics, gpu_memory}."""
    tables = dict((t["node"], t) for t in (plan or {}).get("numa_tables") or [])
    devices = topology.get("pci_devices") or []
    cores = [sorted(core) for core in topology.get("cores") or []]
    nodes = []
    for node in topology.get("numa_nodes") or []:
        nid = int(node["id"])
        cpus = _cpus(node.get("cpus"))
        mine = [core for core in cores if set(core) <= cpus]
        placed = set(cpu for core in mine for cpu in core)
        mine += [[cpu] for cpu in sorted(cpus - placed)]  # CPUs of no known core: a core each
        table = tables.get(nid, {})
        nodes.append({
            "id": nid,
            "cores": sorted(mine, key=lambda c: c[0]),
            "memory": table.get("memory_bytes", int(node.get("memory_kb") or 0) * 1024),
            "reserved_memory": table.get("reserved_memory_bytes", 0),
            "hugepages": table.get("hugepages_bytes", 0),
            "table": table,
            "gpus": [d for d in devices if d.get("kind") == "gpu" and d.get("numa_node") == nid],
            "nics": [d for d in devices if d.get("kind") == "nic" and d.get("numa_node") == nid],
            "gpu_memory": node.get("gpu_memory") is True,
        })
    return nodes


def cpu_state(cpu, reserved, planned):
    """The class of an online CPU's cell."""
    if not planned:
        return "online"
    return "reserved" if cpu in reserved else "isolated"


def cores_per_row(count):
    """Cores on one row of a node's grid: rows about 3.5 times as wide as the grid is tall, evenly
    filled (56 cores: 4 rows of 14; 24: 3 of 8; 72: 5 of 15)."""
    width = 1
    while width * width < count * 3.5:
        width += 1
    rows = (count + width - 1) // width
    return max(1, (count + rows - 1) // rows)


def cores_grid(cores, reserved, planned, offline=False):
    """The cells of some cores, wrapped into rows: {width, height, cores: [{title, cells: [{x, y, state}]}]} (px)."""
    threads = max(len(c) for c in cores)
    per_row = cores_per_row(len(cores))
    core_w = threads * CELL + (threads - 1) * GAP
    rows = (len(cores) + per_row - 1) // per_row
    grid = {"width": per_row * core_w + (per_row - 1) * CORE_GAP, "height": rows * CELL + (rows - 1) * CORE_GAP, "cores": []}
    for i, core in enumerate(cores):
        x0, y = (i % per_row) * (core_w + CORE_GAP), (i // per_row) * (CELL + CORE_GAP)
        grid["cores"].append({
            "title": "%s %s" % ("CPU" if len(core) == 1 else "core, CPUs", ",".join(str(c) for c in core)),
            "cells": [{"x": x0 + j * (CELL + GAP), "y": y, "state": "offline" if offline else cpu_state(cpu, reserved, planned)}
                      for j, cpu in enumerate(core)]})
    return grid


def memory_bar(node, width):
    """The node's memory as a bar - reserved, hugepages, the rest - and its caption: {width, height, total, parts, caption}."""
    total, x, parts, caption = node["memory"], 0.0, [], []
    # reserved memory has a colour of its own (reserved-mem), not the reserved CPUs' one
    for cls, what, nbytes in (("reserved-mem", "reserved", node["reserved_memory"]), ("hugepages", "hugepages", node["hugepages"])):
        if nbytes:
            caption.append({"cls": cls, "text": "%s %s" % (human(nbytes), what)})
            if total:
                w = max(2.0, width * float(nbytes) / total)
                parts.append({"cls": cls, "x": "%.1f" % x, "w": "%.1f" % w, "title": "%s %s" % (human(nbytes), what)})
                x += w
    return {"width": width, "height": BAR, "total": human(total), "parts": parts, "caption": caption}


def node_view(node, reserved, planned, gpu_count):
    """One NUMA node's box: its cores' cells, its memory bar, its devices and its biggest pod."""
    if node["cores"]:
        grid = cores_grid(node["cores"], reserved, planned)
        head = "%s, %s" % (plural(sum(len(c) for c in node["cores"]), "CPU"), plural(len(node["cores"]), "core"))
    else:
        grid, head = None, "memory only"
        if node["gpu_memory"]:
            head += ", GPU memory" + (" (the host's only GPU)" if gpu_count == 1 else "")
    width = max(grid["width"] if grid else 0, NODE_WIDTH)
    table = node["table"]
    pod = ""
    if table.get("exclusive_cpus"):
        pod = "%s, %s memory, %s hugepages, %s" % (plural(table["exclusive_cpus"], "CPU"), size(table["allocatable_memory_bytes"]),
                                                   size(table["hugepages_bytes"]), plural(len(table["gpus"]), "GPU"))
    return {
        "id": node["id"], "memory_only": not node["cores"], "width": width, "head": head, "grid": grid,
        "memory": memory_bar(node, width) if node["memory"] else None,
        # vendor, device and driver only: a GPU's identity (its UUID) is the host's own, in its text (gpu_identities),
        # so that machines of one shape share one drawn map
        "gpus": [{"title": " ".join(str(dev.get(k)) for k in ("vendor", "device", "driver") if dev.get(k)),
                  "name": str(dev.get("address", "?"))} for dev in node["gpus"]],
        "nics": [{"title": str(dev.get("address", "?")), "name": " ".join(dev.get("interfaces") or []) or str(dev.get("address", "?"))}
                 for dev in node["nics"]],
        "pod": pod,
    }


def map_view(topology, plan):
    """The host's NUMA map: a box per node, then the offline CPUs (they belong to no NUMA node while offline);
    None when no topology was read."""
    if not topology or not topology.get("numa_nodes"):
        return None
    reserved = _cpus((plan or {}).get("reserved_cpus"))
    gpu_count = sum(1 for d in topology.get("pci_devices") or [] if d.get("kind") == "gpu")
    offline = _cpus(topology.get("cpus_offline")) | _cpus((plan or {}).get("offline_cpus"))
    return {"nodes": [node_view(node, reserved, bool(plan), gpu_count) for node in node_layout(topology, plan)],
            "offline": {"head": plural(len(offline), "CPU"), "grid": cores_grid([[cpu] for cpu in sorted(offline)], set(), False, True)}
            if offline else None}


def host_facts(topology):
    """One line: nodes, CPUs, cores, SMT, kernel ("" without a topology)."""
    if not topology:
        return ""
    nodes = topology.get("numa_nodes") or []
    return "%s (%d with CPUs), %s in %s, SMT %s, kernel %s" % (
        plural(len(nodes), "NUMA node"), sum(1 for n in nodes if n.get("has_cpu")),
        plural(len(_cpus(topology.get("cpus_online"))), "online CPU"), plural(len(topology.get("cores") or []), "core"),
        "on" if topology.get("smt_active") else "off", topology.get("kernel_release") or "unknown")


def gpu_identities(topology):
    """Each GPU with an identity, as a line of the host's text: ``GPU <address> (NUMA node <n>): <uuid>``."""
    return ["GPU %s (NUMA node %s): %s" % (dev.get("address", "?"), dev.get("numa_node"), dev["uuid"])
            for dev in (topology or {}).get("pci_devices") or [] if dev.get("kind") == "gpu" and dev.get("uuid")]


def shared_maps(entries, rows):
    """Each host's map, every distinct map drawn once: a fleet of identical machines would otherwise repeat
    the same hundreds of cells per host. A later host with the same map says which host shows it, and the
    page's script copies that map in when the host is opened."""
    first, out = {}, []
    for i, entry in enumerate(entries):
        view = map_view(entry.get("topology"), entry.get("plan"))
        if view is None:
            out.append({"kind": "none"})
            continue
        owner = first.setdefault(json.dumps(view, sort_keys=True), i)
        out.append(dict(view, kind="own") if owner == i else {"kind": "same", "owner": owner, "owner_host": rows[owner]["host"]})
    return out


def filter_text(row):
    """What the filter box matches: host name, status, plan fingerprint (lower case)."""
    return " ".join((row["host"], row["label"], row["fingerprint"])).lower()


def page_view(entries, mode="plan", title="RKE2 NUMA fleet report", notice="", inventory="inventory.yml", kubeconfig=""):
    """What the page shows, as data: the summary (and ``notice``: a roll in progress), a row per host, each host's
    details and map."""
    entries, rows = worst_first(entries, summarize(entries, mode, inventory, kubeconfig))
    fold_repeats(rows)
    is_open = len(rows) <= OPEN_HOSTS
    hosts = []
    for entry, row, view in zip(entries, rows, shared_maps(entries, rows)):
        plan = entry.get("plan") or {}
        hosts.append(dict(
            row, filter=filter_text(row), open=is_open, map=view, labels=entry.get("labels") or [],
            facts=host_facts(entry.get("topology") or {}), gpu_identities=gpu_identities(entry.get("topology")),
            warnings_text=plural(len(row["warnings"]), "warning") if row["warnings"] else "",
            # the line doubles as the map's legend
            legend={"reserved": cpus_cell(plan.get("reserved_cpus", "")) or "none", "isolated": cpus_cell(plan.get("isolated_cpus", "")) or "none",
                    "offline": cpus_cell(plan["offline_cpus"]) if plan.get("offline_cpus") else ""} if plan else None))
    return {
        "title": title, "summary": summary_line(rows, mode), "source": "check.yml" if mode == "check" else "plan.yml", "notice": notice or "",
        "fleet_command": fleet_command(entries, inventory, kubeconfig) if mode == "check" else "",
        "rows": [dict(row, filter=filter_text(row), pod="%s (node %s)" % (row["pod"], row["pod_node"]) if row["pod"] else "",
                      groups=[dict(g, first=shorten(g["first"], FIRST_EXAMPLE)) for g in row["groups"]],
                      warnings=[shorten(w, FIRST_EXAMPLE) for w in row["warnings"][:TABLE_WARNINGS]],
                      more_warnings=max(0, len(row["warnings"]) - TABLE_WARNINGS))
                 for row in rows],
        "hosts": hosts,
    }


# The page's template: HTML, CSS, SVG and script in one Jinja2 file, rendered here with autoescaping on.
PAGE_TEMPLATE = collection_file("fleet_report_page")


@functools.lru_cache(maxsize=1)
def _page_template():
    with open(PAGE_TEMPLATE, encoding="utf-8") as f:
        source = f.read()
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(source)


def render_html(entries, mode="plan", title="RKE2 NUMA fleet report", notice="", inventory="inventory.yml", kubeconfig=""):
    """The whole page for the run: summary, filter box, fleet table, then each host's details and map."""
    return _page_template().render(page_view(entries, mode, title, notice, inventory, kubeconfig))


TABLE_WARNINGS = 3   # warnings listed in a host's row of the fleet table; the rest in its details


def shorten(text, limit):
    """``text`` cut to ``limit`` characters, with an ellipsis when cut."""
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "\u2026"


# ----------------------------------------------------------------- Markdown


# Inline Markdown: emphasis, code, links and images ([text](url), ![alt](url)), strikethrough, table cells.
_MD_INLINE = frozenset("\\`*_[]()!|~")
# GFM autolinks bare URLs, www. names and e-mail addresses: a zero-width space keeps them text.
_AUTOLINKS = (("://", ":\u200b//"), ("www.", "www\u200b."), ("@", "@\u200b"))


def md_cell(text):
    """Untrusted text (host, pod and warning text) for a Markdown line or table cell, on one line: HTML-escaped, and
    nothing in it renders as a link, an image, emphasis or a cell break, so the summary is safe to paste into a CI
    job summary or a ticket."""
    flat = escape(" ".join(str(text).split()), quote=False)
    for old, new in _AUTOLINKS:
        flat = flat.replace(old, new)
    return "".join("\\" + c if c in _MD_INLINE else c for c in flat)


def render_markdown(entries, mode="plan", title="RKE2 NUMA fleet report", notice="", inventory="inventory.yml", kubeconfig=""):
    """The summary beside the page: the summary line (and ``notice``: a roll in progress), the one command that rolls
    the fleet, the fleet table worst first (a NOT compliant host's findings grouped by check; a host with an earlier
    host's findings names it), the warnings (capped)."""
    entries, rows = worst_first(entries, summarize(entries, mode, inventory, kubeconfig))
    fold_repeats(rows)
    playbook = "check.yml" if mode == "check" else "plan.yml"
    lines = ["# %s" % md_cell(title), "", "%s (%s)." % (md_cell(summary_line(rows, mode)), playbook), ""]
    if notice:
        lines += ["**%s**" % md_cell(notice), ""]
    command = fleet_command(entries, inventory, kubeconfig) if mode == "check" else ""
    if command:
        lines += ["To roll every host that needs it (the roll takes only those): `%s`" % md_cell(command), ""]
    lines += ["| host | status | plan | biggest single-NUMA pod (cpu / memory / hugepages / GPUs) | pod shapes: copies | warnings |",
              "|---|---|---|---|---|---|"]
    for row in rows:
        status = row["label"] + (": " + row["detail"] if row["detail"] and not row["groups"] else "")
        if row["same_as"]:
            status = "%s: the same as %s" % (row["label"], row["same_as"]["host"])
        elif row["groups"]:
            status += ": " + "; ".join("%s (%d, e.g. %s)" % (g["title"], g["count"], shorten(g["first"], FIRST_EXAMPLE))
                                       for g in row["groups"])
        lines.append("| %s | %s | %s | %s | %s | %d |" % (
            md_cell(row["host"]), md_cell(status),
            "`%s`" % md_cell(row["fingerprint"]) if row["fingerprint"] else "-",
            md_cell(row["pod"]) if row["pod"] else "-", md_cell(", ".join(row["shapes"])) if row["shapes"] else "-",
            len(row["warnings"])))
    warnings = [(row["host"], w) for row in rows for w in row["warnings"]]
    if warnings:
        lines += ["", "## Warnings", ""]
        lines += ["- **%s**: %s" % (md_cell(host), md_cell(w)) for host, w in warnings[:MARKDOWN_WARNINGS]]
        if len(warnings) > MARKDOWN_WARNINGS:
            lines.append("- ... %d more in index.html" % (len(warnings) - MARKDOWN_WARNINGS))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- prove.yml's reports

def prove_fleet(reports):
    """prove.yml's fleet.json from each host's report ({host: rke2_numa_prove_report, or None when the host did not
    get to judge its probes}): {hosts, proven, failed, inconclusive, not_run} - a host is failed when a probe
    failed, inconclusive when none failed and one could not tell, proven when every probe was."""
    fleet = {"hosts": len(reports), "proven": [], "failed": [], "inconclusive": [], "not_run": [], "numa_nodes": {}}
    for host in sorted(reports):
        report = reports[host]
        if report and report.get("numa_nodes"):
            # per GPU NUMA node what was proven there: a probe is evidence only for the node it landed on
            fleet["numa_nodes"][host] = dict((str(n["node"]), n["verdict"]) for n in report["numa_nodes"])
        if not report:
            fleet["not_run"].append(host)
        elif not report.get("ok"):
            fleet["failed"].append(host)
        elif report.get("inconclusive"):
            fleet["inconclusive"].append(host)
        else:
            fleet["proven"].append(host)
    return fleet


def render_prove_markdown(reports, title="RKE2 NUMA proof"):
    """prove.yml's summary.md: the fleet line, then a row per probe (host, probe, verdict, what it got or why not);
    every untrusted text through md_cell."""
    fleet = prove_fleet(reports)
    lines = ["# %s" % md_cell(title), "",
             "%d hosts: %d proven, %d failed, %d inconclusive, %d not run (prove.yml)." % (
                 fleet["hosts"], len(fleet["proven"]), len(fleet["failed"]), len(fleet["inconclusive"]), len(fleet["not_run"])),
             "", "| host | probe | verdict | what it got, or why not |", "|---|---|---|---|"]
    for host in sorted(reports):
        report = reports[host] or {}
        results = report.get("results") or []
        if not results:
            why = "; ".join(report.get("reasons") or []) or "the host did not get to judge its probes (see the run)"
            lines.append("| %s | - | %s | %s |" % (md_cell(host), "failed" if report else "not run", md_cell(why)))
        for result in results:
            verdict = result.get("verdict") or ("proven" if result.get("ok") else "failed")
            lines.append("| %s | %s | %s | %s |" % (md_cell(host), md_cell(result.get("name", "")), verdict,
                                                    md_cell(result.get("summary") or "")))
    nodes = [(host, (reports[host] or {}).get("numa_summary")) for host in sorted(reports)]
    if any(text for host, text in nodes):
        lines += ["", "## GPU NUMA nodes", "", "A probe is evidence for the NUMA node it landed on only.", ""]
        lines += ["- **%s**: %s" % (md_cell(host), md_cell(text)) for host, text in nodes if text]
    return "\n".join(lines) + "\n"
