# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet's report assembled from runs that each checked a part of it - the slices of a sliced AWX job, --limit
halves (playbooks/report.yml).

Each run's report folder holds check.yml's reports: fleet.json, a <host>.json per host it checked (the decision and
the pod audit) and run.json - which hosts the run covered of how many in the fleet, and what the page is drawn from
beside the decisions: each host's topology and plan, and (``access``) who could not read what on a node that was not
checked. ``host_reports`` writes the per-host files and run.json, ``runs_hostvars`` reads the runs back into the shape
of hostvars the report filters (fleet_report, check_fleet, check_lines) read: the assembled page is drawn by the
same code as each run's.
"""

from __future__ import annotations

import json

VERSION = 1
# run.json's per-host facts, and the host variables they come from and go back to
FACTS = {"topology": "rke2_numa_topology", "plan": "rke2_numa_plan"}


class RunsError(ValueError):
    """Reports that cannot be assembled (a host in two runs, a report that is not check.yml's)."""


def _json(data):
    return json.dumps(data, indent=2, sort_keys=True, separators=(",", ": ")) + "\n"


def host_report(host, variables):
    """<host>.json of a checked host: its decision at the top level, its pod audit under ``pods``."""
    report = {"host": str(host)}
    report.update(variables.get("rke2_numa_compliance") or {})
    report["pods"] = variables.get("rke2_numa_pod_audit") or {}
    return report


def host_facts(variables):
    """A host's entry of run.json: its topology and plan, and who could not read what when it was not checked."""
    facts = dict((key, variables.get(name)) for key, name in FACTS.items())
    read = variables.get("__rke2_numa_state")
    access = read.get("access") if isinstance(read, dict) else None
    if isinstance(access, dict) and access.get("denied"):
        facts["access"] = {"user": access.get("user"), "denied": list(access["denied"])}
    return facts


def host_reports(hosts, hostvars, playbook="check", fleet_hosts=None):
    """check.yml's per-host files and run.json for the run's ``hosts``: {file name: its JSON text}. A host that failed
    before its decision gets no <host>.json (fleet.json names it not checked)."""
    out, facts = {}, {}
    for host in hosts:
        variables = hostvars[host] if host in hostvars else {}
        if variables.get("rke2_numa_compliance") is not None:
            out["%s.json" % host] = _json(host_report(host, variables))
            facts[str(host)] = host_facts(variables)
    out["run.json"] = _json({"version": VERSION, "playbook": str(playbook), "hosts": [str(h) for h in hosts],
                             "fleet_hosts": int(fleet_hosts or len(hosts)), "facts": facts})
    return out


def runs_hostvars(runs, order=None):
    """(hosts, hostvars) of the fleet from the runs' reports: ``runs`` [{fleet: fleet.json, run: run.json, hosts:
    the <host>.json contents (a list, each naming its host, or {host: content})}]; ``order``: the inventory's hosts,
    in its order (the page lists them so, as one run over the whole fleet would); hosts it does not name come after,
    by name. A host no run could check (unreachable, failed) is listed with no decision, as in the run that named it."""
    hostvars, seen = {}, {}
    for index, run in enumerate(runs):
        reports = run.get("hosts") or {}
        if isinstance(reports, list):
            reports = dict((str(r.get("host")), r) for r in reports if isinstance(r, dict))
        fleet, meta = run.get("fleet"), run.get("run")
        if not isinstance(fleet, dict) or "compliant" not in fleet or "not_checked" not in fleet:
            raise RunsError("run %d: fleet.json is not check.yml's (no compliant / not_checked lists)" % (index + 1))
        if not isinstance(meta, dict) or meta.get("version") != VERSION or not isinstance(meta.get("facts"), dict):
            raise RunsError("run %d: no run.json of check.yml's (version %s) beside fleet.json" % (index + 1, VERSION))
        for host in [str(h) for h in meta.get("hosts") or []]:
            if host in seen:
                raise RunsError("%s is in the reports of run %d and run %d: each host in one run only" % (host, seen[host], index + 1))
            seen[host] = index + 1
            hostvars[host] = _variables(reports.get(host), meta["facts"].get(host))
    position = dict((str(h), i) for i, h in enumerate(order or []))
    hosts = sorted(hostvars, key=lambda h: (position.get(h, len(position)), h))
    return hosts, hostvars


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
