# -*- coding: utf-8 -*-
"""The kubelet is healthy when its healthz stays ok for a window, by the wall clock."""

from __future__ import annotations

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.healthz import wait_healthy


class Clock(object):
    """A fake wall clock; each sleep advances it."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def kubelet(clock, answers):
    """A probe from a list of (until second, ok): what a kubelet answers over time."""
    def probe():
        t = clock() - 1000.0
        for until, ok in answers:
            if t < until:
                return ok, "200 ok" if ok else "no answer"
        return answers[-1][1], "end"
    return probe


def run(answers, window=15, timeout=60):
    clock = Clock()
    return wait_healthy(kubelet(clock, answers), window, timeout, 0.5, clock, clock.sleep)


def test_one_ok_is_not_healthy_a_kubelet_that_crash_loops_never_is():
    # RKE2's cycle: healthz ok for 2 s before the checkpoint is refused, 5 s down, again
    cycle = []
    for start in range(0, 120, 7):
        cycle += [(start + 2, True), (start + 7, False)]
    result = run(cycle, timeout=60)
    assert not result["healthy"] and result["drops"] >= 8 and result["ok_for"] < 15
    assert result["waited"] == pytest.approx(60, abs=1)


def test_ok_for_the_whole_window_is_healthy():
    result = run([(10, False), (1000, True)])
    assert result["healthy"] and result["waited"] == pytest.approx(25, abs=1) and result["drops"] == 0


def test_the_window_restarts_after_a_drop():
    result = run([(12, True), (13, False), (1000, True)])
    assert result["healthy"] and result["drops"] == 1 and result["waited"] == pytest.approx(28, abs=1)


def test_the_wait_is_by_wall_clock_not_by_tries():
    clock = Clock()

    def slow_probe():  # each answer takes 3 s (a kubelet under load)
        clock.now += 3
        return False, "no answer"
    result = wait_healthy(slow_probe, 15, 30, 0.5, clock, clock.sleep)
    assert not result["healthy"] and 30 <= result["waited"] <= 30 + 3 and result["polls"] <= 10
