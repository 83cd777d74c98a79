# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a run's output goes on the controller: one resolver for every output folder of every playbook.

A relative folder (rke2_numa_plan_dir=plans, rke2_numa_report_dir=report/roll) is relative to the directory
``ansible-playbook`` runs in - the controller's working directory, which every task templated on the controller
shares. A module (``copy``, ``file``) delegated to localhost would resolve it against its own temporary directory
instead, so every task that writes into such a folder is given the path this function returns (the filter
maitred.rke2_numa.output_dir); tests/unit/plugins/filter/test_paths.py fails on a playbook or role that resolves a
folder another way.
"""

from __future__ import annotations

import os


def output_dir(path, cwd=None):
    """The absolute, symlink-resolved folder ``path`` names ('~' expanded; relative to ``cwd``, by default the
    controller's working directory); '' for an empty or unset one (no output asked for)."""
    if path is None:
        return ""
    if not isinstance(path, str):
        raise ValueError("an output folder is a path, not %s %r" % (type(path).__name__, path))
    if not path.strip():
        return ""
    if "\x00" in path:
        raise ValueError("an output folder cannot hold a NUL character")
    expanded = os.path.expanduser(path)
    if not os.path.isabs(expanded):
        expanded = os.path.join(cwd or os.getcwd(), expanded)
    return os.path.realpath(expanded)
