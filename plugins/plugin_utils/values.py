# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One way to read a boolean or a number from any source (controller side).

An inventory gives YAML values (true, 2), ``-e name=value`` and AWX surveys give strings ("false", "2"), a JSON
``-e`` gives either. Every filter, action and check reads them here, so that "false" is false everywhere (Python's
``bool("false")`` is True) and a number is bounded before ``int()`` (a string of 5000 digits makes ``int()`` raise
"Exceeds the limit (4300 digits)"; ``"²".isdigit()`` is True but ``int("²")`` raises). A refusal names the variable.

The spellings are Ansible's own (ansible.module_utils.parsing.convert_bool: BOOLEANS_TRUE, BOOLEANS_FALSE), the
ones the ``bool`` filter the roles test these variables with reads.
"""

from __future__ import annotations

import re

TRUE = frozenset(("y", "yes", "on", "1", "true", "t"))
FALSE = frozenset(("n", "no", "off", "0", "false", "f"))
DIGITS_MAX = 18          # longer strings are never a bounded number here (and int() is never asked to read them)
_INT = re.compile(r"[+-]?[0-9]{1,%d}" % DIGITS_MAX)   # ASCII digits only: "²" or "٣" are not numbers here
SHOW_MAX = 80


class ValueRefused(ValueError):
    """A value that is not what its variable takes; the message names the variable."""


def show(value, limit=SHOW_MAX):
    """A short, safe picture of a value for a message: never fails (``repr`` of an int past 4300 digits does)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** DIGITS_MAX:
        return "(a number of more than %d digits)" % DIGITS_MAX
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        text = "(a value that cannot be shown)"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def is_boolean(value):
    """Whether ``value`` reads as a boolean (a bool, 0 or 1, or one of Ansible's spellings in any case)."""
    return as_boolean(value) is not None


def as_boolean(value):
    """True, False, or None when ``value`` is neither."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, float) and value in (0.0, 1.0):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in TRUE:
            return True
        if text in FALSE:
            return False
    return None


def boolean(name, value):
    """``value`` as a bool; ValueRefused naming ``name`` when it is not one."""
    read = as_boolean(value)
    if read is None:
        raise ValueRefused("%s %s must be true or false" % (name, show(value)))
    return read


def as_integer(value):
    """An int from an int (not a bool) or a string of at most DIGITS_MAX ASCII digits with an optional sign and
    spaces around; a float only when whole. None for anything else (never an exception, never a long int())."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if abs(value) < 10 ** DIGITS_MAX else None
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 10 ** DIGITS_MAX else None
    if isinstance(value, str) and len(value) <= DIGITS_MAX + 40 and _INT.fullmatch(value.strip()):
        return int(value.strip())
    return None


_PERCENT = re.compile(r"\s*([0-9]{1,3})\s*%\s*")


def as_percent(value):
    """N from a percentage string ``N%`` (at most three digits, spaces around), as Ansible's serial and a
    maxUnavailable take it; None for anything else (a bare number is no percentage)."""
    match = _PERCENT.fullmatch(value) if isinstance(value, str) else None
    return int(match.group(1)) if match else None
