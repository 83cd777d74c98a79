# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a roll did, and whether its exit code may be 0 (controller side).

Each rolled host ends with ``rke2_numa_roll_result``, one of plugin_utils/roll_states.py's states, or none
(the roll ended before its batch); a ``no_slot`` node's ``note`` says why it got no slot. A roll succeeds only
when every node it meant to roll is done: a node failed, waiting for its reboot,
left for a later window, or blocked (the apply chain would refuse it: never rolled) makes the run fail, saying
which and why, so that a scheduler or an on-call engineer never reads "ok" over nodes still to do. In check mode the results are what the roll would do.
"""

from __future__ import annotations

import datetime
import math

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_states import (
    DONE, FAILED, FIXED_IN_PLACE, NO_SLOT, PENDING_REBOOT, REBOOTED, RECONFIGURED, REMAINING, WINDOW)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.window import WindowError, parse_iso8601

# summary line -> the results it lists, in the order shown
_LINES = (
    ("fixed in place (no drain)", (FIXED_IN_PLACE,)),
    ("reconfigured", (RECONFIGURED,)),
    ("rebooted", (REBOOTED,)),
    ("pending reboot", (PENDING_REBOOT,)),
    ("failed", (FAILED,)),
    ("remaining", REMAINING),
)


def roll_outcome(fleet, rolled, check_mode=False):
    """``fleet``: [{host, compliant (bool, or None when not checked), blocked ([reasons]: the apply chain would refuse
    the node, so it was not rolled)}]; ``rolled``: [{host, result, reason, seconds, unproven, note}]
    (hosts the roll picked, any order; ``unproven``: what the probes of a node returned to service could not
    prove - inconclusive probes, misalignment the Topology Manager policy allows - and ``labels_note``: its
    labels did not reach the Node in time; both listed in the summary, not a failure). Returns {summary: [str], failed: bool,
    msg: str or None, hosts: {result: [host]}} (hosts: what fleet.json keeps, each result's hosts sorted; ``remaining``
    for the nodes not rolled, ``blocked`` for those never rolled)."""
    by_result = {}
    for item in sorted(rolled, key=lambda i: i["host"]):
        by_result.setdefault(item.get("result"), []).append(item)
    blocked = [f for f in fleet if f.get("blocked")]
    # a node the roll took is said under what the roll did with it, not as skipped: after its roll it is read again
    # (compliant then), for the fleet after the roll
    taken = set(i["host"] for i in rolled if i.get("result") is not None)
    summary = ["compliant (skipped): %s" % (", ".join(f["host"] for f in fleet if f.get("compliant") and f["host"] not in taken) or "none"),
               "not checked: %s" % (", ".join(f["host"] for f in fleet if f.get("compliant") is None) or "none"),
               "blocked (not rolled, fix by hand): %s" % (", ".join(f["host"] for f in blocked) or "none")]
    for line, results in _LINES:
        hosts = [i["host"] for r in results for i in by_result.get(r, [])]
        would = {"reconfigured": "would reconfigure", "rebooted": "would reboot", "fixed in place (no drain)": "would fix in place (no drain)"}
        label = would.get(line, line) if check_mode else line
        summary.append("%s: %s" % (label, ", ".join(sorted(hosts)) or "none"))
    timed = [i for i in sorted(rolled, key=lambda i: i["host"]) if i.get("seconds") is not None]
    summary.append("seconds per node: %s" % (", ".join("%s %s" % (i["host"], i["seconds"]) for i in timed) or "none"))
    in_service = [i for i in sorted(rolled, key=lambda i: i["host"]) if i.get("result") in (RECONFIGURED, REBOOTED)]
    summary += ["not proven (back in service): %s: %s" % (i["host"], line) for i in in_service for line in i.get("unproven") or []]
    summary += ["labels not on the Node (back in service): %s: %s" % (i["host"], i["labels_note"])
                for i in in_service if i.get("labels_note")]
    stopped = [i for i in sorted(rolled, key=lambda i: i["host"]) if i.get("reason")]
    remaining = sorted(i["host"] for r in REMAINING for i in by_result.get(r, []))
    parts = ["%s: %s" % (i["host"], i["reason"]) for i in stopped]
    notes = sorted({i["note"] for i in by_result.get(NO_SLOT, []) if i.get("note")})
    parts += ["%s: blocked - %s" % (f["host"], "; ".join(f["blocked"])) for f in blocked]
    if remaining:
        parts.append("%d node%s not rolled: %s%s" % (
            len(remaining), "" if len(remaining) == 1 else "s", ", ".join(remaining),
            " (the maintenance window)" if by_result.get(WINDOW) else ""))
    parts += notes
    msg = ("the roll stopped: " + "; ".join(parts)) if parts else None
    hosts = {r: sorted(i["host"] for i in by_result[r]) for r in by_result if r not in REMAINING}
    hosts.update(remaining=remaining, blocked=[f["host"] for f in blocked])
    return {"summary": summary, "failed": bool(parts), "msg": msg, "hosts": hosts}


ANNOTATION_REASON_MAX = 300


def roll_progress(rolled, max_fail_percentage=0):
    """Where a roll stands between two batches, from the same entries as roll_outcome: {failed (the hosts with a
    reason: failed or waiting for their reboot), seconds (of the nodes done, for the window's estimate), stop (more
    than max_fail_percentage of the hosts to roll failed: no further batch), msg}."""
    failed = [i["host"] for i in rolled if i.get("reason") is not None]
    seconds = [float(i["seconds"]) for i in rolled if i.get("seconds") is not None]
    stop = len(failed) * 100 > int(max_fail_percentage) * len(rolled)
    msg = "stopping: %s failed (rke2_numa_max_fail_percentage %d)" % (", ".join(failed), int(max_fail_percentage)) if stop else ""
    return {"failed": failed, "seconds": seconds, "stop": stop, "msg": msg}


def _utc(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")


def roll_eta(rolled, now, serial=1, node_minutes=30, window_end=""):
    """The progress line a person follows through a long window, after each batch: {done, failed, remaining (counts),
    minutes_per_node (the mean of the nodes done so far; None before the first), estimated_end (ISO 8601, UTC: the
    batches left at the minutes per node so far - rke2_numa_node_minutes before the first node is done - each batch
    of ``serial`` nodes side by side), window_end, past_window_minutes (how far the estimate overruns the window; 0
    when it fits, None without a window), line}. ``rolled``: roll_pick.rolled_entries of the hosts to roll; a host
    with a reason failed or waits for its reboot (the summary says which); one without a result is still to do."""
    if int(serial) < 1 or float(node_minutes) <= 0:
        raise ValueError("roll_eta: serial %r and node_minutes %r must be positive" % (serial, node_minutes))
    done = [i for i in rolled if i.get("result") in DONE and i.get("reason") is None]
    failed = [i for i in rolled if i.get("reason") is not None]
    remaining = len(rolled) - len(done) - len(failed)
    seconds = [float(i["seconds"]) for i in done if i.get("seconds") is not None]
    per_node = sum(seconds) / len(seconds) / 60.0 if seconds else None
    end = float(now) + math.ceil(remaining / float(serial)) * (per_node if per_node is not None else float(node_minutes)) * 60.0
    line = "progress: %d of %d node%s done, %d failed, %d remaining" % (
        len(done), len(rolled), "" if len(rolled) == 1 else "s", len(failed), remaining)
    line += "; %.1f min per node so far" % per_node if per_node is not None else "; no node done yet (%g min per node assumed)" % float(node_minutes)
    past = None
    if window_end:
        try:
            window = parse_iso8601(window_end)
        except WindowError:
            window = None
        if window is not None:
            past = max(0, int(math.ceil((end - window) / 60.0)))
    if remaining:
        line += "; estimated end %s" % _utc(end)
        if past is not None:
            verdict = "fits" if past == 0 else "%d min past it - the window guard starts no node that cannot finish" % past
            line += " (the window ends %s: %s)" % (_utc(parse_iso8601(window_end)), verdict)
    return {"done": len(done), "failed": len(failed), "remaining": remaining, "minutes_per_node": None if per_node is None else round(per_node, 1),
            "estimated_end": _utc(end), "window_end": window_end or None, "past_window_minutes": past, "line": line}


def annotation_reason(reason):
    """The short reason the Node's ``failed`` annotation holds: our first sentence, never the kubelet's log lines that
    follow it (annotations are readable by anyone who can read Nodes), at most ANNOTATION_REASON_MAX characters."""
    text = " ".join(str(reason or "failed").split())
    head = text.split(". ", 1)[0].rstrip(".")
    return head if len(head) <= ANNOTATION_REASON_MAX else head[:ANNOTATION_REASON_MAX - 3] + "..."
