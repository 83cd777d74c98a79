# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""May the next node start before the maintenance window ends? (controller side)

The estimate for a node is rke2_numa_node_minutes until a node has finished,
then the slowest node so far (a reboot or a long drain on one node is the
best guess for the next; the mean would start nodes that overrun).
"""

from __future__ import annotations

import datetime


class WindowError(ValueError):
    pass


def parse_iso8601(text):
    """ISO 8601 date-time with a UTC offset or Z -> epoch seconds. A time without an offset is refused
    (the controller's local time zone is not the window's)."""
    value = str(text).strip()
    try:
        moment = datetime.datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value)
    except ValueError:
        raise WindowError("rke2_numa_window_end %r is not an ISO 8601 date-time (2026-12-01T06:00:00Z)" % value)
    if moment.tzinfo is None:
        raise WindowError("rke2_numa_window_end %r has no UTC offset: write Z or +01:00" % value)
    return moment.timestamp()


def roll_window_end(end, minutes, now):
    """The end of this roll's window, as rolling.yml keeps it in rke2_numa_roll.window_end: ``minutes`` after ``now``
    (the roll's start, epoch seconds) as ISO 8601 UTC when above 0 - a nightly schedule's window, never a date that is
    past by the next night - else ``end`` as given ('' - no window). playbook_inputs refuses both set."""
    if minutes and minutes > 0:
        moment = datetime.datetime.fromtimestamp(now + minutes * 60, tz=datetime.timezone.utc)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(end or "")


def window_check(window_end, now, node_minutes, done_seconds=()):
    if node_minutes <= 0:
        raise WindowError("rke2_numa_node_minutes must be positive, not %s" % node_minutes)
    end = parse_iso8601(window_end)
    estimate = max(done_seconds) if done_seconds else node_minutes * 60.0
    left = end - now
    start = estimate <= left
    reason = None if start else (
        "the maintenance window ends in %d min (%s) and a node takes about %d min (%s): not starting another"
        % (max(left, 0) // 60, window_end, -(-estimate // 60), "the slowest so far" if done_seconds else "rke2_numa_node_minutes"))
    return {"start": start, "estimate_seconds": estimate, "left_seconds": left, "reason": reason}
