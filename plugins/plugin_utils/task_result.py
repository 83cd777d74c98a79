# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a failed task's result says, in words a person reads (controller side; the roll, the proof and the
access check all name a failure this way)."""

from __future__ import annotations

# What Ansible's command module says when the command failed: it says nothing of why (older and 2.19+ spellings).
_NO_REASON = ("", "non-zero return code", "The command exited with a non-zero return code.")


def failure_reason(result):
    """The reason a failed task gives: its message, or kubectl's own words when the message is only Ansible's
    "non-zero return code" (e.g. ``nodes "gpu-a" not found``), on one line."""
    result = result or {}
    msg = str(result.get("msg") or "")
    stderr = [line.strip() for line in str(result.get("stderr") or "").splitlines() if line.strip()]
    if msg in _NO_REASON and stderr:
        msg = "; ".join(line[len("error: "):] if line.startswith("error: ") else line for line in stderr[-2:])
    return " ".join((msg or "failed").split())
