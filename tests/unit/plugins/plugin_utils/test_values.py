# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One way to read booleans and numbers: "false" is false, a number is bounded before int(), refusals name the variable."""
from __future__ import annotations

import pytest

from ansible.module_utils.parsing.convert_bool import BOOLEANS_FALSE, BOOLEANS_TRUE

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.values import (
    FALSE, TRUE, ValueRefused, as_boolean, as_integer, as_percent, boolean, is_boolean, show)


def test_the_spellings_are_ansibles_own():
    """The bool filter the roles use reads these; ours must read the same strings the same way."""
    assert TRUE == {v for v in BOOLEANS_TRUE if isinstance(v, str)}
    assert FALSE == {v for v in BOOLEANS_FALSE if isinstance(v, str)}


@pytest.mark.parametrize("value", ["false", "False", "FALSE", "no", "off", "0", "n", " f ", False, 0, 0.0])
def test_false_is_false_from_any_source(value):
    assert boolean("rke2_numa_prove", value) is False and is_boolean(value)


@pytest.mark.parametrize("value", ["true", "Yes", "on", "1", "y", True, 1])
def test_true_is_true(value):
    assert boolean("rke2_numa_prove", value) is True


@pytest.mark.parametrize("value", ["", "maybe", 2, -1, None, [], {}, "²", 0.5])
def test_anything_else_is_refused_naming_the_variable(value):
    assert as_boolean(value) is None and not is_boolean(value)
    with pytest.raises(ValueRefused, match=r"^rke2_numa_prove .* must be true or false$"):
        boolean("rke2_numa_prove", value)


@pytest.mark.parametrize("value, expected", [(5, 5), ("5", 5), (" -3 ", -3), ("+7", 7), (2.0, 2), ("0", 0)])
def test_integers(value, expected):
    assert as_integer(value) == expected


@pytest.mark.parametrize("value", [True, False, None, "", "²", "٣", "1e6", "0x10", "2.5", 2.5, [2], "two", "5" * 5000,
                                   float("inf"), float("nan"), 10 ** 30, "Infinity"])
def test_anything_else_is_no_integer_and_never_raises(value):
    assert as_integer(value) is None


def test_show_never_fails_and_stays_short():
    assert show(int("9" * 4000)) == "(a number of more than 18 digits)"
    assert show("x" * 500).endswith("...") and len(show("x" * 500)) == 80
    assert show("false") == "'false'"


def test_the_roll_reads_its_numbers_here_too():
    """"²".isdigit() is True: the cap, AWX's ids and the Lease's waits once raised on it; now refused or ignored."""
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_lease import default_roll_id, lease_seconds, max_unavailable_errors
    assert max_unavailable_errors("\u00b2") and max_unavailable_errors("\u00b2%") and max_unavailable_errors("9" * 5000)
    assert max_unavailable_errors("2") == [] and max_unavailable_errors(" 50% ") == [] and max_unavailable_errors("-1%")
    assert default_roll_id("\u00b2", "7", 0.0) == "awx-job-7" and default_roll_id("-3", None, 0.0).startswith("roll-")
    assert lease_seconds({"rke2_numa_drain_timeout": "\u00b2"}) == lease_seconds({})


@pytest.mark.parametrize("value, percent", [("10%", 10), (" 5 % ", 5), ("100%", 100), ("0%", 0), ("1000%", None), ("%", None),
                                            ("5", None), (5, None), ("-5%", None), ("5.5%", None), ("5%%", None), (None, None),
                                            (["5%"], None), ("٥%", None)])
def test_a_percentage_is_read_in_one_place(value, percent):
    assert as_percent(value) == percent
