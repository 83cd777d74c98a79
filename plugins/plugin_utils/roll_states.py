# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The states a rolled node ends in, and the one place that decides which (controller side).

rolling.yml never writes or compares a state: at each place a node's part of the roll ends it names the
step it reached and hands over what the step gave (the failed task's result, the plan's actions, whether the
chain stopped for a reboot), and the ``roll_state`` filter answers with one of these names. roll_outcome
(the summary), the fleet report and the artifacts read the same names.
"""

from __future__ import annotations

# What ``rke2_numa_roll_result`` holds.
FIXED_IN_PLACE = "fixed_in_place"   # only config.yaml's mode or our labels to fix: no drain
RECONFIGURED = "reconfigured"       # drained, reconfigured, returned to service
REBOOTED = "rebooted"               # the same, with a reboot into new kernel args
PENDING_REBOOT = "pending_reboot"   # the kernel args are written but not booted (rke2_numa_reboot_ok false): left cordoned
FAILED = "failed"                   # a step failed: the node is as the step left it (cordoned after the drain)
WINDOW = "window"                   # the maintenance-window guard stopped before the node
NO_SLOT = "no_slot"                 # the roll's other runs had rke2_numa_max_unavailable Nodes out: for the next run
STARTED = "started"                 # the roll began the node and ended before it got further (not rolled)

DONE = (FIXED_IN_PLACE, RECONFIGURED, REBOOTED)
# not rolled: the node is as it was (None: the roll ended before its batch)
REMAINING = (WINDOW, NO_SLOT, STARTED, None)
STATES = (FIXED_IN_PLACE, RECONFIGURED, REBOOTED, PENDING_REBOOT, FAILED, WINDOW, NO_SLOT, STARTED)

# Where a node's part of the roll ends (what rolling.yml hands to roll_state) -> its state when the step did not fail.
# A failed step is FAILED, or PENDING_REBOOT where the apply chain stopped for a reboot it may not do.
STEPS = {
    "window_closed": WINDOW,        # tasks/window.yml: no time left for the node
    "slot_refused": NO_SLOT,        # the Lease gave the node no slot
    "node_begun": STARTED,          # the node is the roll's now (set before its drain)
    "fixed": FIXED_IN_PLACE,        # the fix-in-place play
    "taken_out": None,              # cordon and drain: only ever handed over when it failed
    "converged": None,              # the apply chain, proof, labels and uncordon: REBOOTED or RECONFIGURED by the plan
}


class RollStateError(ValueError):
    """A step the roll does not have (a typo in rolling.yml)."""


def roll_state(step, failed=None, actions=(), stopped_for_reboot=False):
    """The state a node ends in at ``step`` (one of STEPS). ``failed``: the failed task's result (rescue's
    ansible_failed_result) or None/empty when the step did not fail; ``actions``: the node's compliance actions
    (a converged node that needed a reboot is REBOOTED); ``stopped_for_reboot``: the apply chain stopped at a
    pending reboot (converge_node.yml sets it before it fails the node)."""
    if step not in STEPS:
        raise RollStateError("roll_state: unknown step %r (one of %s)" % (step, ", ".join(sorted(STEPS))))
    if failed:
        return PENDING_REBOOT if step == "converged" and stopped_for_reboot else FAILED
    if step == "converged":
        return REBOOTED if "reboot" in (actions or ()) else RECONFIGURED
    if STEPS[step] is None:
        raise RollStateError("roll_state: the step %s ends a node only when it fails (no failed result given)" % step)
    return STEPS[step]
