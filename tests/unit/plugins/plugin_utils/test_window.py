# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.window import WindowError, parse_iso8601, roll_window_end, window_check

END = "2026-12-01T06:00:00Z"
T_END = 1796104800.0  # 2026-12-01T06:00:00Z


def test_iso8601_with_z_or_an_offset():
    assert parse_iso8601(END) == T_END
    assert parse_iso8601("2026-12-01T07:00:00+01:00") == T_END


@pytest.mark.parametrize("bad", ["2026-12-01T06:00:00", "tomorrow", "2026-13-01T06:00:00Z"])
def test_a_time_without_an_offset_or_not_a_time_is_refused(bad):
    with pytest.raises(WindowError, match="rke2_numa_window_end"):
        window_check(bad, T_END - 3600, 30)


def test_the_estimate_is_the_setting_until_a_node_finished_then_the_slowest():
    first = window_check(END, T_END - 31 * 60, 30)
    assert first["start"] and first["estimate_seconds"] == 1800
    assert not window_check(END, T_END - 29 * 60, 30)["start"]
    refined = window_check(END, T_END - 29 * 60, 30, [300.0, 600.0])
    assert refined["start"] and refined["estimate_seconds"] == 600
    late = window_check(END, T_END - 5 * 60, 30, [300.0, 600.0])
    assert not late["start"]
    assert late["reason"] == ("the maintenance window ends in 5 min (%s) and a node takes about 10 min (the slowest so far): "
                              "not starting another" % END)


def test_a_closed_window_starts_nothing():
    assert not window_check(END, T_END + 60, 1)["start"]
    with pytest.raises(WindowError):
        window_check(END, T_END - 3600, 0)


def test_a_window_by_duration_ends_that_many_minutes_after_the_roll_starts_every_night():
    assert roll_window_end("", 240, T_END) == "2026-12-01T10:00:00Z"
    assert roll_window_end("", 240, T_END + 86400) == "2026-12-02T10:00:00Z"   # the next night: its own window
    assert parse_iso8601(roll_window_end("", 1, T_END)) == T_END + 60
    assert roll_window_end(END, 0, T_END) == END and roll_window_end(END, None, T_END) == END
    assert roll_window_end(None, 0, T_END) == ""
