# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which distribution a host runs and which boot method holds its kernel arguments.

What a system is (os-release, a transactional system), for each boot method's detect (boot_plan.detect picks
one), and where the running system keeps what tells it (and its kernel command line).
Pure functions: boot_config and boot_params read the files.
"""

from __future__ import annotations

import shlex

# Paths under the module's root.
PROC_CMDLINE = "proc/cmdline"
PROC_MOUNTS = "proc/mounts"
OS_RELEASE = "etc/os-release"
TRANSACTIONAL_UPDATE = "usr/sbin/transactional-update"


def parse_os_release(text):
    """os-release KEY=value lines (shell quoting) -> dict."""
    out = {}
    for line in (text or "").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, dummy, value = line.partition("=")
        try:
            parts = shlex.split(value)
        except ValueError:
            continue
        out[key.strip()] = parts[0] if parts else ""
    return out


def is_transactional(mounts_text, has_transactional_update):
    """A transactional system: transactional-update installed and / a read-only btrfs.

    The same test community.general's zypper module uses.
    """
    if not has_transactional_update:
        return False
    for line in (mounts_text or "").splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[1] == "/":
            return fields[2] == "btrfs" and "ro" in fields[3].split(",")
    return False


def id_rank(os_release, ids, like=True):
    """detect's answer for os-release IDs: 3 when ID is one of ``ids``; with ``like``, 1 / (1 + its position) for the
    first ID_LIKE entry that is (the nearer relative wins); else 0."""
    if os_release.get("ID", "") in ids:
        return 3
    like_ids = os_release.get("ID_LIKE", "").split() if like else []
    return next((1.0 / (1 + i) for i, other in enumerate(like_ids) if other in ids), 0)
