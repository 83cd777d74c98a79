# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet's report assembled from runs that each checked a part of it - the slices of a sliced AWX job, --limit
halves (playbooks/report.yml).

Each run's report folder holds check.yml's reports: fleet.json, a <host>.json per host it checked (the decision and
the pod audit) and run.json - which hosts the run covered of how many in the fleet, and what the page is drawn from
beside the decisions: each host's topology and plan, and (``access``) who could not read what on a node that was not
checked. Or plan.yml's: fleet.json (plugin_utils/plan_files.py plan_fleet) and run.json, each host's topology and plan
(``refused``: why the planner refused it), no <host>.json. The runs assembled are all check.yml's or all plan.yml's.
``host_reports`` writes the per-host files and run.json, ``runs_hostvars`` reads the runs back into the shape of
hostvars the report filters (fleet_report, check_fleet, check_lines, plan_fleet) read: the assembled page is drawn by
the same code as each run's.
"""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.artifacts import merge_rows
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.plan_files import json_text, refusal
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.report import (
    biggest_pod, check_fleet, check_fleet_line, render_html, render_markdown)

VERSION = 1
# run.json's per-host facts, and the host variables they come from and go back to
FACTS = {"topology": "rke2_numa_topology", "plan": "rke2_numa_plan"}


class RunsError(ValueError):
    """Reports that cannot be assembled (a host in two runs, a report that is neither check.yml's nor plan.yml's, check and
    plan runs together)."""


def host_report(host, variables):
    """<host>.json of a checked host: its decision at the top level, its pod audit under ``pods``."""
    report = {"host": str(host)}
    report.update(variables.get("rke2_numa_compliance") or {})
    report["pods"] = variables.get("rke2_numa_pod_audit") or {}
    return report


def host_facts(variables):
    """A host's entry of run.json: its topology and plan, why the planner refused it (plan.yml), and who could not read
    what when it was not checked."""
    facts = dict((key, variables.get(name)) for key, name in FACTS.items())
    refused = refusal(variables)
    if refused:
        facts["refused"] = refused
    read = variables.get("__rke2_numa_state")
    access = read.get("access") if isinstance(read, dict) else None
    if isinstance(access, dict) and access.get("denied"):
        facts["access"] = {"user": access.get("user"), "denied": list(access["denied"])}
    return facts


def host_reports(hosts, hostvars, playbook="check", fleet_hosts=None):
    """check.yml's per-host files and run.json for the run's ``hosts``: {file name: its JSON text}. A host that failed
    before its decision gets no <host>.json (fleet.json names it not checked). plan.yml's (``playbook`` plan): run.json
    only, every host's plan in it."""
    out, facts = {}, {}
    for host in hosts:
        variables = hostvars[host] if host in hostvars else {}
        if playbook == "plan":   # no decision: each host's plan (or why not) is its report
            facts[str(host)] = host_facts(variables)
        elif variables.get("rke2_numa_compliance") is not None:
            out["%s.json" % host] = json_text(host_report(host, variables))
            facts[str(host)] = host_facts(variables)
    out["run.json"] = json_text({"version": VERSION, "playbook": str(playbook), "hosts": [str(h) for h in hosts],
                                 "fleet_hosts": int(fleet_hosts or len(hosts)), "facts": facts})
    return out


def runs_hostvars(runs, order=None):
    """(hosts, hostvars) of the fleet from the runs' reports: ``runs`` [{fleet: fleet.json, run: run.json, hosts:
    the <host>.json contents (a list, each naming its host, or {host: content})}]; ``order``: the inventory's hosts,
    in its order (the page lists them so, as one run over the whole fleet would); hosts it does not name come after,
    by name. A host no run could check (unreachable, failed) is listed with no decision, as in the run that named it."""
    hostvars, seen, kinds = {}, {}, set()
    for index, run in enumerate(runs):
        reports = run.get("hosts") or {}
        if isinstance(reports, list):
            reports = dict((str(r.get("host")), r) for r in reports if isinstance(r, dict))
        fleet, meta = run.get("fleet"), run.get("run")
        kind = run_kind(fleet, meta)
        if kind is None:
            raise RunsError("run %d: fleet.json is neither check.yml's (compliant / not_checked lists) nor plan.yml's "
                            "(planned / not_planned)" % (index + 1))
        if not isinstance(meta, dict) or meta.get("version") != VERSION or not isinstance(meta.get("facts"), dict):
            raise RunsError("run %d: no run.json of %s.yml's (version %s) beside fleet.json" % (index + 1, kind, VERSION))
        kinds.add(kind)
        if len(kinds) > 1:
            raise RunsError("run %d is a %s run, the runs before it are not: the reports of check.yml or of plan.yml, not both"
                            % (index + 1, kind))
        for host in [str(h) for h in meta.get("hosts") or []]:
            if host in seen:
                raise RunsError("%s is in the reports of run %d and run %d: each host in one run only" % (host, seen[host], index + 1))
            seen[host] = index + 1
            facts = meta["facts"].get(host)
            hostvars[host] = _variables(reports.get(host), facts) if kind == "check" else _plan_variables(facts)
    position = dict((str(h), i) for i, h in enumerate(order or []))
    hosts = sorted(hostvars, key=lambda h: (position.get(h, len(position)), h))
    return hosts, hostvars


def run_kind(fleet, meta):
    """check or plan: which playbook's report a run's fleet.json and run.json are (None: neither)."""
    if not isinstance(fleet, dict):
        return None
    if "compliant" in fleet and "not_checked" in fleet:
        return "check"
    if "planned" in fleet and "not_planned" in fleet and isinstance(meta, dict) and meta.get("playbook") == "plan":
        return "plan"
    return None


def _plan_variables(facts):
    """A host's variables from plan.yml's run.json entry, as the run that planned it had them."""
    variables = dict((name, facts[key]) for key, name in FACTS.items() if (facts or {}).get(key) is not None)
    if (facts or {}).get("refused"):
        variables["__rke2_numa_plan_result"] = {"refused": facts["refused"]}
    return variables


def _variables(report, facts):
    """A host's variables (the report filters' view) from its <host>.json and its run.json entry (None: not checked)."""
    if not isinstance(report, dict):
        return {}
    variables = {"rke2_numa_compliance": dict((k, v) for k, v in report.items() if k not in ("host", "pods")),
                 "rke2_numa_pod_audit": report.get("pods") or {}}
    for key, name in FACTS.items():
        if (facts or {}).get(key) is not None:
            variables[name] = facts[key]
    if (facts or {}).get("access"):
        variables["__rke2_numa_state"] = {"access": facts["access"]}
    return variables


# ----------------------------------------------------------------- the fleet's page from the runs' artifacts
#
# An AWX job's filesystem is thrown away with its execution environment; its artifacts (plugin_utils/artifacts.py) are
# what is left. ``fold_rows`` sums up what the fleet's page says of each host as short texts, each said once with the
# hosts it concerns ([kind, text, [hosts]]: twenty machines BLOCKED by the same drop-in are one entry), and each host's
# plan by what the page shows of it (fingerprint, biggest single-NUMA pod, pod shapes, warnings, kubelet minor), each
# distinct plan once with its hosts. fleet.json carries it as ``rows``, the artifacts copy it, report.yml unfolds the
# runs' rows back into the hosts' entries (``row_entries``) and draws the page with report.py - no topology, so no map.
# A host's texts of one kind come back in the order of the fleet's first sight of each (a fleet's hosts name their
# findings in the check's order, so that is theirs).

# The texts of a checked host's decision (rke2_numa_compliance) and pod audit (rke2_numa_pod_audit), by kind: the
# field a list kind comes from and goes back to. finding/<check> kinds carry the decision's findings, by check.
COMPLIANCE_LISTS = {"action": "actions", "blocked": "blocked", "warning": "warnings", "managed_evidence": "managed_by_evidence"}
POD_LISTS = {"unpinned": "unpinned", "topology_error": "topology_errors", "dra_unaligned": "dra_unaligned", "dra_claim": "dra_claims"}
# A pod shape's fields the page reads (report.shape_text); a table row's (report.biggest_pod, pod_text).
SHAPE_FIELDS = ("name", "fits", "nodes", "copies", "note")
MAX_GPUS = 1024   # a plan row's GPUs on one NUMA node, read back: more is not a machine's


def plan_row(entry):
    """What the page shows of a host's plan ({} without one): its fingerprint, the CPUs of its legend, its biggest
    single-NUMA pod ([node, CPUs, memory bytes, hugepage bytes, GPUs]), its pod shapes, the kubelet minor it was made for
    and the topology's and the plan's warnings."""
    plan, compliance = entry.get("plan") or {}, entry.get("compliance") or {}
    if not plan and not compliance.get("plan_fingerprint"):
        return {}
    row = {"fingerprint": str(plan.get("fingerprint") or compliance.get("plan_fingerprint") or "")}
    if plan:
        table = biggest_pod(plan)
        row.update((name, str(plan.get(name) or "")) for name in ("reserved_cpus", "isolated_cpus", "offline_cpus"))
        row["pod"] = [table["node"], table["exclusive_cpus"], table["allocatable_memory_bytes"], table["hugepages_bytes"],
                      len(table["gpus"])] if table else None
        row["shapes"] = [dict((k, fit.get(k)) for k in SHAPE_FIELDS) for fit in plan.get("pod_shapes") or []]
        row["kubernetes"] = str((plan.get("kubernetes") or {}).get("minor") or "")
    warnings = []
    for text in list((entry.get("topology") or {}).get("warnings") or []) + list(plan.get("warnings") or []):
        if isinstance(text, str) and text not in warnings:
            warnings.append(text)
    row["warnings"] = warnings
    return row


def host_texts(entry):
    """[(kind, text)] of one host, in its order: why it was not checked (``not_checked``, or ``refused``: a value the
    planner refuses), else its findings by check, actions, blocks, warnings, who manages it, its pod audit."""
    if not entry.get("compliance"):
        reason = str(entry.get("not_checked") or "")
        return [("refused" if entry.get("refused") else "not_checked", reason)] if reason else []
    compliance, pods = entry["compliance"], entry.get("pods") or {}
    findings = compliance.get("findings")
    if findings is None:   # a decision without findings: its reasons
        findings = [{"check": "findings", "text": t} for t in compliance.get("reasons") or []]
    out = [("finding/%s" % (f.get("check") or "findings"), str(f.get("text") or "")) for f in findings]
    for kind, name in COMPLIANCE_LISTS.items():
        out += [(kind, str(t)) for t in compliance.get(name) or []]
    for name in ("managed_by", "config_mode"):
        if compliance.get(name) and compliance.get("managed_by") not in (None, "none"):
            out.append((name, str(compliance[name])))
    for kind, name in POD_LISTS.items():
        out += [(kind, str(t)) for t in pods.get(name) or []]
    dra = pods.get("dra") or {}
    if dra.get("gpu_path"):
        out.append(("dra_gpu_path", str(dra["gpu_path"])))
    out += [("dra_finding", str(t)) for t in dra.get("findings") or []]
    if "error" in pods:
        out.append(("pod_error", str(pods["error"])))
    return out


def fold_rows(entries):
    """{texts: [[kind, text, [hosts]]], plans: [[plan row, [hosts]]]} of the hosts' entries (report.py's): each text and
    each plan once, with the hosts it concerns, in the order first seen (plugin_utils/artifacts.py merge_rows)."""
    return merge_rows([{"texts": [[kind, text, [str(entry["host"])]] for kind, text in host_texts(entry)],
                        "plans": [[plan_row(entry), [str(entry["host"])]]] if plan_row(entry) else []} for entry in entries])


def row_entries(summary, order=None):
    """The hosts' entries (report.py's) from a summary of the artifacts (plugin_utils/artifacts.py, merged): every host of
    hosts_by_state, its decision and pod audit from ``rows``' texts, its plan from its plan row; no topology (no map, no
    GPU identities) and no labels. ``order``: the inventory's hosts (the page lists them so); the others after, by name."""
    states = summary.get("hosts_by_state") or {}
    rows = summary.get("rows") or {}
    checked = set(states.get("compliant") or []) | set(states.get("noncompliant") or [])
    hosts = set(checked) | set(states.get("not_checked") or [])
    texts = dict((h, []) for h in hosts)
    for kind, text, names in rows.get("texts") or []:
        for host in names:
            texts.setdefault(str(host), []).append((str(kind), str(text)))
    plans = {}
    for row, names in rows.get("plans") or []:
        plans.update((str(h), row) for h in names)
    hosts |= set(texts) | set(plans)
    position = dict((str(h), i) for i, h in enumerate(order or []))
    entries = []
    for host in sorted(hosts, key=lambda h: (position.get(h, len(position)), h)):
        entry = {"host": host, "topology": None, "plan": _plan(plans.get(host)), "compliance": None, "pods": None,
                 "labels": [], "not_checked": "", "refused": False}
        mine = texts.get(host) or []
        if host in checked:
            entry["compliance"], entry["pods"] = _decision(host in set(states.get("compliant") or []), mine, plans.get(host))
        else:
            for kind, text in mine:
                if kind in ("not_checked", "refused"):
                    entry.update(not_checked=text, refused=kind == "refused")
        entries.append(entry)
    return entries


def _plan(row):
    """A plan as the page reads it, from its plan row (None: no plan)."""
    if not row or "pod" not in row:
        return None
    plan = dict((name, row.get(name) or "") for name in ("fingerprint", "reserved_cpus", "isolated_cpus", "offline_cpus"))
    plan.update(pod_shapes=list(row.get("shapes") or []), warnings=list(row.get("warnings") or []),
                kubernetes={"minor": row["kubernetes"]} if row.get("kubernetes") else {})
    pod = row.get("pod")
    if pod is not None and not (isinstance(pod, list) and len(pod) == 5 and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in pod)
                                and pod[4] <= MAX_GPUS):
        raise RunsError("rows: a plan's pod is [node, CPUs, memory bytes, hugepage bytes, GPUs (at most %d)], got %r" % (MAX_GPUS, pod))
    plan["numa_tables"] = [{"node": pod[0], "exclusive_cpus": pod[1], "allocatable_memory_bytes": pod[2], "hugepages_bytes": pod[3],
                            "gpus": [None] * int(pod[4])}] if pod else []
    return plan


def _decision(compliant, texts, plan):
    """(rke2_numa_compliance, rke2_numa_pod_audit) of a checked host from its texts."""
    compliance = dict((name, []) for name in COMPLIANCE_LISTS.values())
    compliance.update(compliant=compliant, findings=[], reasons=[], plan_fingerprint=(plan or {}).get("fingerprint") or "",
                      managed_by="none")
    pods, dra = {}, {}
    for kind, text in texts:
        if kind.startswith("finding/"):
            compliance["findings"].append({"check": kind.split("/", 1)[1], "text": text})
            compliance["reasons"].append(text)
        elif kind in COMPLIANCE_LISTS:
            compliance[COMPLIANCE_LISTS[kind]].append(text)
        elif kind in ("managed_by", "config_mode"):
            compliance[kind] = text
        elif kind in POD_LISTS:
            pods.setdefault(POD_LISTS[kind], []).append(text)
        elif kind == "dra_gpu_path":
            dra["gpu_path"] = text
        elif kind == "dra_finding":
            dra.setdefault("findings", []).append(text)
        elif kind == "pod_error":
            pods["error"] = text
    if dra:
        pods["dra"] = dra
    return compliance, pods


def artifact_report(summary, order=None, inventory="inventory.yml", kubeconfig=""):
    """The fleet's report from a summary of the runs' artifacts (no report folder): {fleet: fleet.json's content, line:
    the check's last line, files: {index.html, summary.md, fleet.json, run.json}} - the page and summary.md drawn by
    report.py as each run's, saying that the maps are in each run's own report."""
    entries = row_entries(summary, order)
    fleet = check_fleet(entries)
    fleet["rows"] = fold_rows(entries)
    hosts = [e["host"] for e in entries]
    runs = [str(r) for r in summary.get("runs") or []]
    fleet_hosts = max(int(summary.get("fleet_hosts") or 0), len(hosts))
    notice = ("Drawn from the artifacts of the runs %s (AWX's job ids), not from their report folders: the artifacts carry each "
              "host's state, findings and plan, not its topology, so no host has its NUMA map here; each run's own report "
              "has them (%s)." % (", ".join(runs) or "none",
                                  ", ".join(str(r) for r in summary.get("reports") or []) or "no run wrote one: rke2_numa_report_dir"))
    if fleet_hosts > len(hosts):
        notice += " These runs checked %d of the %d hosts of the fleet." % (len(hosts), fleet_hosts)
    if not summary.get("rows"):
        notice += " The artifacts name no host's findings (a run of an older collection): states only."
    files = {
        "index.html": render_html(entries, "check", notice=notice, inventory=inventory, kubeconfig=kubeconfig),
        "summary.md": render_markdown(entries, "check", notice=notice, inventory=inventory, kubeconfig=kubeconfig),
        "fleet.json": json_text(fleet),
        "run.json": json_text({"version": VERSION, "playbook": "report", "hosts": hosts, "fleet_hosts": fleet_hosts, "runs": runs,
                               "reports": [str(r) for r in summary.get("reports") or []], "source": "artifacts"}),
    }
    return {"fleet": fleet, "line": check_fleet_line(fleet), "files": files}
