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

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.plan_files import json_text, refusal

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
