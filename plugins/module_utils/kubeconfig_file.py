# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scoped kubeconfig's file on the kubectl host (host side): ours or refused, and never read aloud.

access.yml writes a bearer token there, as root. So the file it replaces must be one it wrote: a regular file (not
a link, not a device or FIFO), one link only, owned by the user who runs kubectl with it, whose first line is our
mark. Only that first line's bytes are read, compared and forgotten: nothing of the file is ever returned (a
``head`` whose output ``-v`` shows printed root's line of /etc/passwd, or a one-line join token). The new file is
written through module_utils/file_txn.FileTransaction: beside the old one (0600, chowned before a byte is written),
synced, and renamed over it - a reader sees the old file or the new one, never half of one, and a failed run puts
the old one back as it was.
"""

from __future__ import annotations

import os
import pwd
import stat

MARK = "# maitred.rke2_numa: the scoped identity's kubeconfig, written by playbooks/access.yml"
MODE = 0o600


def owner_ids(owner):
    """(uid, gid) of the user ``owner`` on this host; ValueError naming it when there is no such user."""
    try:
        entry = pwd.getpwnam(owner)
    except (KeyError, TypeError, ValueError):
        raise ValueError("there is no user %r on this host (rke2_numa_access_kubeconfig_owner)" % (owner,))
    return entry.pw_uid, entry.pw_gid


def _starts_with_mark(path):
    """Whether the file's first line is our mark: reads len(MARK) + 1 bytes, never follows a link, never blocks."""
    want = (MARK + "\n").encode("utf-8")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        got = b""
        while len(got) < len(want):
            chunk = os.read(fd, len(want) - len(got))
            if not chunk:
                break
            got += chunk
        return got == want
    finally:
        os.close(fd)


def target_refusal(path, owner, uid):
    """Why the kubeconfig must not be written at ``path`` ("" when it may: no file there, or one access.yml wrote
    for ``owner`` (uid ``uid``)). Says what the file is, never what it holds."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        parent = os.path.dirname(path) or "/"
        if not os.path.isdir(parent):
            return "its folder %s does not exist" % parent
        return ""
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_nlink != 1:
        return "a file with %d hard links" % info.st_nlink
    if info.st_uid != uid:
        return "owned by uid %d, not %s (rke2_numa_access_kubeconfig_owner): a file another user may have put there" % (info.st_uid, owner)
    try:
        ours = _starts_with_mark(path)
    except OSError as e:
        return "it cannot be read (%s)" % (e.strerror or e.__class__.__name__)
    return "" if ours else "its first line is not our mark"
