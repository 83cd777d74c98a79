# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a roll did, and whether its exit code may be 0 (controller side).

Each rolled host ends with ``rke2_numa_roll_result``: ``reconfigured``, ``rebooted``, ``pending_reboot``,
``failed``, ``window`` (the maintenance-window guard stopped before it) or none (the roll ended before its
batch). A roll succeeds only when every node it meant to roll is done: a node failed, waiting for its reboot,
or left for a later window makes the run fail, saying which and why, so that a scheduler or an on-call
engineer never reads "ok" over nodes still to do. In check mode the results are what the roll would do.
"""

from __future__ import annotations

# summary line -> the results it lists, in the order shown
_LINES = (
    ("reconfigured", ("reconfigured",)),
    ("rebooted", ("rebooted",)),
    ("pending reboot", ("pending_reboot",)),
    ("failed", ("failed",)),
    ("remaining", ("window", "started", None)),
)


def roll_outcome(fleet, rolled, check_mode=False):
    """``fleet``: [{host, compliant (bool, or None when not checked)}]; ``rolled``: [{host, result, reason, seconds}]
    (hosts the roll picked, any order). Returns {summary: [str], failed: bool, msg: str or None}."""
    by_result = {}
    for item in sorted(rolled, key=lambda i: i["host"]):
        by_result.setdefault(item.get("result"), []).append(item)
    summary = ["compliant (skipped): %s" % (", ".join(f["host"] for f in fleet if f.get("compliant")) or "none"),
               "not checked: %s" % (", ".join(f["host"] for f in fleet if f.get("compliant") is None) or "none")]
    for line, results in _LINES:
        hosts = [i["host"] for r in results for i in by_result.get(r, [])]
        label = ("would " + {"reconfigured": "reconfigure", "rebooted": "reboot"}[line]) if check_mode and line in ("reconfigured", "rebooted") else line
        summary.append("%s: %s" % (label, ", ".join(sorted(hosts)) or "none"))
    timed = [i for i in sorted(rolled, key=lambda i: i["host"]) if i.get("seconds") is not None]
    summary.append("seconds per node: %s" % (", ".join("%s %s" % (i["host"], i["seconds"]) for i in timed) or "none"))
    stopped = [i for i in sorted(rolled, key=lambda i: i["host"]) if i.get("reason")]
    remaining = sorted(i["host"] for r in ("window", "started", None) for i in by_result.get(r, []))
    parts = ["%s: %s" % (i["host"], i["reason"]) for i in stopped]
    if remaining:
        parts.append("%d node%s not rolled: %s%s" % (
            len(remaining), "" if len(remaining) == 1 else "s", ", ".join(remaining),
            " (the maintenance window)" if by_result.get("window") else ""))
    msg = ("the roll stopped: " + "; ".join(parts)) if parts else None
    return {"summary": summary, "failed": bool(parts), "msg": msg}
