# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet's report assembled from runs that each checked a part of it - the slices of a sliced AWX job, --limit
halves (playbooks/report.yml).

Each run's report folder holds fleet.json and a <host>.json per host it checked (check.yml's reports,
playbooks/tasks/check_report.yml). A <host>.json holds what the page is drawn from: the host's compliance decision (at
its top level, as before), its pod audit (``pods``), its topology and plan, and (``access``) who could not read what
when the node was not checked. ``host_report`` writes it, ``runs_hostvars`` reads the runs back into the shape of
hostvars the report filters (fleet_report, check_fleet, check_lines) read: the assembled page is drawn by the same
code as each run's.
"""

from __future__ import annotations

# <host>.json's keys beside the decision, and the host variables they come from and go back to
HOST_KEYS = {"pods": "rke2_numa_pod_audit", "topology": "rke2_numa_topology", "plan": "rke2_numa_plan"}


class RunsError(ValueError):
    """Reports that cannot be assembled (a host in two runs, a report that is not check.yml's)."""


def host_report(host, variables):
    """<host>.json of a checked host from its variables (hostvars[host]): its decision at the top level, then pods,
    topology, plan and, for a node that could not be read, ``access`` (the user and the places it could not read)."""
    report = {"host": str(host)}
    report.update(variables.get("rke2_numa_compliance") or {})
    for key, name in HOST_KEYS.items():
        report[key] = variables.get(name) or ({} if key == "pods" else None)
    read = variables.get("__rke2_numa_state")
    access = (read or {}).get("access") if isinstance(read, dict) else None
    if access and access.get("denied"):
        report["access"] = {"user": access.get("user"), "denied": list(access["denied"])}
    return report


def runs_hostvars(runs, order=None):
    """(hosts, hostvars) of the fleet from the runs' reports: ``runs`` [{fleet: fleet.json, hosts: {host: <host>.json}
    (or the <host>.json contents as a list, each naming its host)}];
    ``order``: the inventory's hosts, in its order (the page lists them so, as one run over the whole fleet would);
    hosts it does not name come after, by name. A host no run could check (unreachable, failed) is listed with no
    decision, as in the run that named it."""
    hostvars, seen = {}, {}
    for index, run in enumerate(runs):
        if isinstance(run.get("hosts"), list):
            run = dict(run, hosts=dict((str(r.get("host")), r) for r in run["hosts"] if isinstance(r, dict)))
        fleet = run.get("fleet")
        if not isinstance(fleet, dict) or "compliant" not in fleet or "not_checked" not in fleet:
            raise RunsError("run %d: fleet.json is not check.yml's (no compliant / not_checked lists)" % (index + 1))
        named = set(fleet["compliant"]) | set(fleet.get("not_compliant") or []) | set(fleet["not_checked"])
        for host in sorted(named | set(run.get("hosts") or {})):
            if host in seen:
                raise RunsError("%s is in the reports of run %d and run %d: each host in one run only" % (host, seen[host], index + 1))
            seen[host] = index + 1
            report = (run.get("hosts") or {}).get(host)
            hostvars[host] = _variables(report) if isinstance(report, dict) else {}
    position = dict((str(h), i) for i, h in enumerate(order or []))
    hosts = sorted(hostvars, key=lambda h: (position.get(h, len(position)), h))
    return hosts, hostvars


def _variables(report):
    """A host's variables (the report filters' view) from its <host>.json."""
    decision = dict((k, v) for k, v in report.items() if k not in HOST_KEYS and k not in ("host", "access"))
    variables = {"rke2_numa_compliance": decision}
    for key, name in HOST_KEYS.items():
        if report.get(key) is not None:
            variables[name] = report[key]
    if report.get("access"):
        variables["__rke2_numa_state"] = {"access": report["access"]}
    return variables
