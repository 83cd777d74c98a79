# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The record of the methods that edit the boot configuration in place (grubby, transactional-update).

What boot_params last wrote there and every hugepage size it has written, so
that the next run replaces only its own args and reboot_required sees a
removed pool. Pure functions.
"""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import RECORD
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import (
    HUGEPAGE_ARGS,
    hugepage_history,
    norm_name,
    ownership,
    parse_arg,
    wanted_strings,
)


def parse_record(text):
    """The record boot_params keeps at RECORD -> {"written": [(name, value)], "history": [(name, value)]}.

    ``written``: the hugepage args it last put into the boot configuration; ``history``: every hugepage
    size it has put there (hugepage_history). A missing or unreadable record holds nothing.
    """
    out = {"written": [], "history": []}
    for line in (text or "").splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() in out:
            out[key.strip()] = [a for a in (parse_arg(t) for t in value.split()) if norm_name(a[0]) in HUGEPAGE_ARGS]
    return out


def render_record(written, history):
    return "\n".join([
        "# Managed by maitred.rke2_numa (module boot_params). Do not edit.",
        "# written: the hugepage kernel args boot_params last put into this host's boot configuration;",
        "# the next run replaces or removes them (and only them, with the pools of the sizes it plans).",
        "# history: every hugepage size it has put there; reboot_required counts a removed pool while",
        "# the running kernel still has it.",
        "written=" + " ".join(wanted_strings(written)),
        "history=" + " ".join(history),
    ]) + "\n"


def plan_record(record, wanted, managed):
    """For a method that edits the boot configuration in place: (ownership of the collection's args in
    it - the wanted pools and those ``record`` says were written -, the new history as [(name, value)],
    the record's file change or None). No record is created while there is nothing to record."""
    old = parse_record(record)
    own = ownership(wanted, managed, previous=old["written"])
    written = [(n, v) for n, v in wanted if own["hugepages"] and norm_name(n) in HUGEPAGE_ARGS]
    history = hugepage_history(old["history"], old["written"], written)
    text = render_record(written, history)
    change = None
    if text != record and (record is not None or written or history):
        change = {"path": RECORD, "before": record, "after": text, "mode": 0o644}
    return own, [parse_arg(a) for a in history], change
