# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which of the files a read needs the user it runs as cannot read (module_utils: runs on the host).

RKE2's config.yaml (0600: it holds the join token), the kubelet's checkpoints under /var/lib/kubelet and Rancher's
agent folders are root's. Read as another user, a file that is there looks absent (its folder cannot be searched) or
fails to open, and the node would be judged on what could not be read. The read asks first: a path that exists and
cannot be read, or a folder on its way that cannot be searched, is named, and nothing is judged from it.
"""

from __future__ import annotations

import os
import pwd


def _can(path, mode):
    if os.access in os.supports_effective_ids:
        return os.access(path, mode, effective_ids=True)
    return os.access(path, mode)


def blocked_at(path, folder=False):
    """The first place on ``path``'s way the effective user cannot pass (a folder it cannot search, or the path
    itself: a file it cannot read, a ``folder`` it cannot list), or None when it can - or when the path is not there."""
    path = os.path.abspath(path)
    parts = [p for p in path.split(os.sep) if p]
    for depth in range(len(parts)):   # /, then each folder down to the path's own
        place = os.sep + os.sep.join(parts[:depth])
        if not os.path.isdir(place):
            return None
        if not _can(place, os.X_OK):
            return place
    if not os.path.exists(path):
        return None
    return None if _can(path, os.R_OK | (os.X_OK if folder else 0)) else path


def denied(files=(), folders=()):
    """The places (in the order given, each once) the effective user cannot read on the way to ``files`` and
    ``folders``; [] as root, or when every one can be read."""
    found = []
    for path, folder in [(f, False) for f in files if f] + [(d, True) for d in folders if d]:
        place = blocked_at(path, folder)
        if place and place not in found:
            found.append(place)
    return found


def user_name():
    """The effective user's name (its uid when it has none)."""
    uid = os.geteuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def denied_reason(places, user):
    """Why a node read as ``user`` is not checked, and how to check it."""
    return "cannot read %s as %s (run with become)" % (", ".join(places), user)
