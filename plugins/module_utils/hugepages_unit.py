# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-NUMA hugepages unit the hugepages role installs, as found on a node (host side).

The role (roles/hugepages) installs ``/usr/local/sbin/rke2-numa-hugepages`` from its template, the unit
``rke2-numa-hugepages.service`` that runs it before the RKE2 agent, and enables it (``WantedBy=...
multi-user.target``: a link in ``multi-user.target.wants``). What the script sets is read from the two lines of
the template that hold the plan - ``size_kb=N`` and ``for want in NODE:PAGES ...; do`` - never anything else; a
script without them is not ours (or not this version's), and reads as "outdated".
"""

from __future__ import annotations

import os
import re

UNIT = "etc/systemd/system/rke2-numa-hugepages.service"
WANTS = "etc/systemd/system/multi-user.target.wants/rke2-numa-hugepages.service"
SCRIPT = "usr/local/sbin/rke2-numa-hugepages"

_SIZE = re.compile(r"^size_kb=(\d+)$", re.M)
_WANT = re.compile(r"^for want in ((?:\d+:\d+ )*); do$", re.M)


def parse_script(text):
    """{"size_kb": int, "per_node": {"0": pages, ...}} from the script's text, or None when it does not hold the
    template's two lines."""
    size, want = _SIZE.search(text or ""), _WANT.search(text or "")
    if not size or not want:
        return None
    per_node = {}
    for item in want.group(1).split():
        node, pages = item.split(":")
        per_node[node] = int(pages)
    return {"size_kb": int(size.group(1)), "per_node": per_node}


def read_unit(root="/"):
    """{"unit", "enabled", "script" (bools), "sets" (parse_script's result or None), "error"} under ``root``."""
    out = {"unit": os.path.exists(os.path.join(root, UNIT)), "enabled": os.path.lexists(os.path.join(root, WANTS)),
           "script": os.path.exists(os.path.join(root, SCRIPT)), "sets": None, "error": None}
    if out["script"]:
        try:
            with open(os.path.join(root, SCRIPT), "rb") as handle:
                out["sets"] = parse_script(handle.read(65536).decode("utf-8", "replace"))
        except (IOError, OSError) as e:
            out["error"] = "cannot read %s: %s" % (os.path.join(root, SCRIPT), e.strerror)
    return out
