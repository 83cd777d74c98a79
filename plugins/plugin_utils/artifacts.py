# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a run gives AWX: its fleet summary as ``set_stats`` artifacts, under keys that merge right across the slices of
a sliced job (docs/AWX.md).

AWX hands a workflow node's job its parents' artifacts as extra vars, merged with ``dict.update``
(awx/main/models/workflow.py, WorkflowJobNode.get_job_kwargs), and a sliced job's workflow combines its slices'
artifacts the same way (WorkflowJob._combined_artifacts: one ``update`` per slice job). A key every slice writes
holds the last slice's value there, whatever the others found. So a run publishes its summary twice:

- ``rke2_numa_fleet``: this run's summary - the whole fleet's when the job is not sliced;
- ``rke2_numa_fleet_<run>``: the same under a key of its own (``<run>``: AWX's job id, one per slice; else the run's
  id), which no other slice overwrites.

prove.yml publishes its proof the same way, under ``rke2_numa_proof``; plan.yml its plans under ``rke2_numa_plans``
(the hosts planned and not, each plan's fingerprint). The node that follows merges every
``rke2_numa_fleet_<run>`` it is given (``merge``; playbooks/report.yml publishes the
merged summary as ``rke2_numa_fleet``, for a workflow to branch on). Never the join token nor any value of a
config file: host names, counts, states, each host's findings and plan as its report says them (``rows``: what
report.yml draws the fleet's page from when no report folder outlived the runs), a report's path and the roll's
outcome only.
"""

from __future__ import annotations

import heapq
import json
import re

KEY = "rke2_numa_fleet"
PROOF_KEY = "rke2_numa_proof"
PLANS_KEY = "rke2_numa_plans"
VERSION = 1
# Per key, the states a host is counted in, and their names in the run's fleet.json (plugin_utils/report.py
# check_fleet, prove_fleet; plugin_utils/plan_files.py plan_fleet). A host can be in more than one: blocked and reboot
# are among the noncompliant, refused among the not planned.
STATES = {
    KEY: {"compliant": "compliant", "noncompliant": "not_compliant", "blocked": "blocked", "reboot": "reboot",
          "not_checked": "not_checked"},
    PROOF_KEY: {"proven": "proven", "failed": "failed", "inconclusive": "inconclusive", "not_run": "not_run"},
    PLANS_KEY: {"planned": "planned", "not_planned": "not_planned", "refused": "refused"},
}
# Per key, the playbook that publishes under it (the others publish the fleet's state under KEY).
PLAYBOOK_KEYS = {"prove": PROOF_KEY, "plan": PLANS_KEY}
_RUN = re.compile(r"^[A-Za-z0-9_]{1,64}$")


class ArtifactError(ValueError):
    """A run id or an artifact that cannot be published or merged."""


def is_artifact(name):
    """Whether ``name`` is one of the keys a run publishes (rke2_numa_fleet, rke2_numa_proof, rke2_numa_plans, and their
    <key>_<run> copies): AWX gives them to the next workflow node's job as extra vars - a variable the next run is
    given by the collection itself, never an unknown one (playbook_inputs.unknown_variables)."""
    name = str(name)
    for key in STATES:
        if name == key or (name.startswith(key + "_") and _RUN.match(name[len(key) + 1:])):
            return True
    return False


def key_of(playbook):
    """The key a playbook publishes under: prove.yml its proof, plan.yml its plans, the others (check, rolling, labels)
    the fleet's state."""
    return PLAYBOOK_KEYS.get(playbook, KEY)


def run_key(run, key=KEY):
    """The key of this run's own copy: <key>_<run> (a variable name: letters, digits, _)."""
    run = str(run)
    if not _RUN.match(run):
        raise ArtifactError("a run id is 1 to 64 letters, digits or _, got %r" % run)
    return "%s_%s" % (key, run)


def check_summary(fleet, playbook, run, report=None, fleet_hosts=None):
    """The summary of a run from its fleet.json content ``fleet`` (check_fleet's; prove_fleet's for prove.yml);
    ``fleet_hosts``: how many hosts the fleet has when this run covers a part of it (a slice, --limit), else None.
    Counts at the top (``rke2_numa_fleet.noncompliant``), the hosts per state beside them."""
    states = STATES[key_of(playbook)]
    hosts_by_state = dict((state, sorted(str(h) for h in fleet.get(name) or [])) for state, name in states.items())
    summary = {"version": VERSION, "playbook": str(playbook), "runs": [str(run)], "hosts": int(fleet["hosts"]),
               "fleet_hosts": int(fleet_hosts) if fleet_hosts else int(fleet["hosts"]), "hosts_by_state": hosts_by_state,
               "reports": [str(report)] if report else []}
    if key_of(playbook) == KEY:
        summary.update(unpinned_gpu_pods=len(fleet.get("unpinned_gpu_pods") or []), topology_errors=len(fleet.get("topology_errors") or []))
        if isinstance(fleet.get("rows"), dict):
            summary["rows"] = fleet["rows"]
    if key_of(playbook) == PLANS_KEY:
        summary["fingerprints"] = dict((str(h), str(f)) for h, f in sorted((fleet.get("fingerprints") or {}).items()))
    summary.update((state, len(hosts)) for state, hosts in hosts_by_state.items())
    return summary


def with_roll(summary, outcome, roll_id, progress=None):
    """The summary with what the roll did (rolling.yml): roll_outcome's {failed, msg, hosts} and the progress figures
    (roll_eta's, without its line)."""
    roll = {"id": roll_id, "failed": bool(outcome.get("failed")), "msg": outcome.get("msg") or "",
            "hosts": outcome.get("hosts") or {}}
    if progress:
        roll["progress"] = dict((k, v) for k, v in progress.items() if k != "line")
    return dict(summary, roll=roll)


def stats(summary, run):
    """The set_stats data: the summary under its key (rke2_numa_fleet; rke2_numa_proof for prove.yml) and under this
    run's own."""
    key = key_of(summary["playbook"])
    return {key: summary, run_key(run, key): summary}


def merge(variables, key=KEY):
    """One summary of every run whose copy ``variables`` holds (the rke2_numa_fleet_<run> keys AWX gave a workflow
    node; rke2_numa_fleet alone when there is none): hosts per state united, counts from them, runs and reports listed.
    None when there is no summary at all."""
    if key not in STATES:
        raise ArtifactError("the key is one of %s, got %r" % (", ".join(sorted(STATES)), key))
    copies = [(k, v) for k, v in sorted(variables.items()) if k.startswith(key + "_") and _RUN.match(k[len(key) + 1:])]
    if not copies and isinstance(variables.get(key), dict):
        copies = [(key, variables[key])]
    if not copies:
        return None
    counted = ("unpinned_gpu_pods", "topology_errors") if key == KEY else ()
    merged = {"version": VERSION, "playbook": None, "runs": [], "hosts": 0, "fleet_hosts": 0,
              "hosts_by_state": dict((state, set()) for state in STATES[key]), "reports": []}
    merged.update((name, 0) for name in counted)
    rolls, rows = [], []
    for name, summary in copies:
        if not isinstance(summary, dict) or summary.get("version") != VERSION:
            raise ArtifactError("%s is not a summary of this collection's (version %s): %r" % (name, VERSION, summary))
        merged["playbook"] = merged["playbook"] or summary.get("playbook")
        merged["runs"] += [r for r in summary.get("runs") or [] if r not in merged["runs"]]
        merged["hosts"] += int(summary.get("hosts") or 0)
        merged["fleet_hosts"] = max(merged["fleet_hosts"], int(summary.get("fleet_hosts") or 0))
        merged["reports"] += [r for r in summary.get("reports") or [] if r not in merged["reports"]]
        for count in counted:
            merged[count] += int(summary.get(count) or 0)
        for state in STATES[key]:
            merged["hosts_by_state"][state].update((summary.get("hosts_by_state") or {}).get(state) or [])
        if summary.get("roll"):
            rolls.append(summary["roll"])
        if key == KEY and isinstance(summary.get("rows"), dict):
            rows.append(summary["rows"])
        if key == PLANS_KEY:
            merged.setdefault("fingerprints", {}).update(summary.get("fingerprints") or {})
    merged["hosts_by_state"] = dict((state, sorted(hosts)) for state, hosts in merged["hosts_by_state"].items())
    if "fingerprints" in merged:
        merged["fingerprints"] = dict(sorted(merged["fingerprints"].items()))
    merged["fleet_hosts"] = max(merged["fleet_hosts"], merged["hosts"])
    merged.update((state, len(hosts)) for state, hosts in merged["hosts_by_state"].items())
    if rows:
        merged["rows"] = merge_rows(rows)
    if rolls:
        merged["roll"] = {"ids": sorted(set(str(r.get("id")) for r in rolls)), "failed": any(r.get("failed") for r in rolls),
                          "msg": "; ".join(r["msg"] for r in rolls if r.get("msg")),
                          "hosts": _merge_roll_hosts([r.get("hosts") or {} for r in rolls])}
    return merged


def _merge_roll_hosts(parts):
    """roll_outcome's hosts of each run ({state: [hosts]}), united."""
    merged = {}
    for part in parts:
        for state, hosts in part.items():
            merged.setdefault(state, set()).update(hosts or [])
    return dict((state, sorted(hosts)) for state, hosts in sorted(merged.items()))


def merge_rows(parts):
    """The rows of several runs (plugin_utils/report_runs.py fold_rows: {texts: [[kind, text, [hosts]]], plans:
    [[plan row, [hosts]]]}) as one: each text and plan once, its hosts united. A host's texts are read back in the order
    of the list, so the list keeps each host's order: the texts in the order first seen, but after every text a host
    names before them (a topological order of the hosts' sequences). Given as extra vars, they are checked as any
    input is: a part of another shape is refused."""
    texts, plans, seen, seen_plans, after = [], [], {}, {}, {}

    def add(have, hosts, into):
        if not isinstance(hosts, list):
            raise ArtifactError("rows: the hosts of an entry are a list, got %r" % (hosts,))
        for host in hosts:
            if str(host) not in have:
                have.add(str(host))
                into.append(str(host))

    for part in parts:
        if not isinstance(part, dict):
            raise ArtifactError("rows is a mapping of texts and plans, got %r" % (part,))
        last = {}   # per host, its previous text in this part
        for item in part.get("texts") or []:
            if not (isinstance(item, list) and len(item) == 3 and all(isinstance(v, str) for v in item[:2])):
                raise ArtifactError("rows: a text is [kind, text, [hosts]], got %r" % (item,))
            key = tuple(item[:2])
            if key not in seen:
                seen[key] = (set(), [item[0], item[1], []])
                texts.append(key)
                after[key] = set()
            add(seen[key][0], item[2], seen[key][1][2])
            for host in item[2]:
                if str(host) in last and last[str(host)] != key:
                    after[key].add(last[str(host)])
                last[str(host)] = key
        for item in part.get("plans") or []:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], dict)):
                raise ArtifactError("rows: a plan is [plan row, [hosts]], got %r" % (item,))
            key = json.dumps(item[0], sort_keys=True)
            if key not in seen_plans:
                seen_plans[key] = (set(), [item[0], []])
                plans.append(seen_plans[key][1])
            add(seen_plans[key][0], item[1], seen_plans[key][1][1])
    return {"texts": [seen[key][1] for key in _first_seen_after(texts, after)], "plans": plans}


def _first_seen_after(keys, after):
    """``keys`` (in the order first seen) each after the keys ``after`` names for it, else in the order first seen; a
    cycle (two hosts naming two texts in opposite orders) is broken in the order first seen."""
    rank = dict((key, i) for i, key in enumerate(keys))
    waiting = dict((key, set(after[key])) for key in keys)
    before = dict((key, []) for key in keys)
    for key, earlier in waiting.items():
        for other in earlier:
            before[other].append(key)
    ready = [rank[key] for key in keys if not waiting[key]]
    heapq.heapify(ready)
    out, done = [], set()
    while len(out) < len(keys):
        if not ready:   # a cycle: the first seen of those left goes first
            ready = [min(rank[key] for key in keys if key not in done)]
        key = keys[heapq.heappop(ready)]
        if key in done:
            continue
        done.add(key)
        out.append(key)
        for later in before[key]:
            waiting[later].discard(key)
            if not waiting[later] and later not in done:
                heapq.heappush(ready, rank[later])
    return out
