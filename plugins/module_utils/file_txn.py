# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Files changed on the host as one transaction: backed up first, written atomically, put back on failure.

Used by boot_params (the boot configuration: FileTransaction) and kubelet_checkpoints (the checkpoints' backup
folder: copy_file, new_folder). A file is never half written: its new bytes go to a temporary file in the same
folder (a rename does not cross file systems), which is synced and then renamed over it. A file behind a symlink
is written at the link's target, so the link stays. A folder of backups is 0700: what it holds may be secret.
"""

from __future__ import annotations

import os
import stat
import tempfile


def missing_dirs(folder):
    """The folders makedirs would create for ``folder``, deepest first."""
    out = []
    while folder and not os.path.isdir(folder):
        out.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return out


def _keep_owner_and_mode(path, st):
    """Give ``path`` the owner and mode of the stat ``st`` (owner first: a chown may clear the set-id bits)."""
    try:
        os.chown(path, st.st_uid, st.st_gid)
    except PermissionError:
        if os.geteuid() == 0:
            raise  # a user who is not root cannot give a file away: it stays theirs
    os.chmod(path, stat.S_IMODE(st.st_mode))


def replace_file(dest, data, like=None, move=None):
    """Write ``data`` over ``dest`` atomically: a temporary file beside it (0600 while it is written), synced, given
    the owner and mode of ``like`` (a stat) when given, then moved over ``dest`` by ``move(tmp, dest)`` - os.rename,
    or AnsibleModule.atomic_move, which gives it an existing dest's mode, owner and SELinux context. When anything
    fails, dest is as it was and the temporary file is gone."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(dest), prefix=".%s." % os.path.basename(dest))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if like is not None:
            _keep_owner_and_mode(tmp, like)
        (move or os.rename)(tmp, dest)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def copy_file(src, dest):
    """Copy src to dest atomically (see replace_file), keeping src's mode and owner."""
    st = os.stat(src)
    with open(src, "rb") as f:
        replace_file(dest, f.read(), like=st)


def new_folder(backup_dir, name):
    """A new folder <backup_dir>/<name> for backups (0700, a suffix .2, .3 ... when that exists already);
    backup_dir is created 0700 when missing."""
    if not os.path.isdir(backup_dir):
        os.makedirs(backup_dir, 0o700)
    path, n = os.path.join(backup_dir, name), 1
    while os.path.lexists(path):
        n += 1
        path = os.path.join(backup_dir, "%s.%d" % (name, n))
    os.mkdir(path, 0o700)
    os.chmod(path, 0o700)  # whatever the umask
    return path


def snapshot(path, module=None):
    """What a file is before a transaction writes it: the real path behind any symlink (written there, so the
    link stays), its bytes, stat and SELinux context (with ``module``, when SELinux is on); data None when it does
    not exist. ``dirs``: the folders the write creates, deepest first."""
    real = os.path.realpath(path)
    saved = {"path": path, "real": real, "data": None, "stat": None, "context": None, "dirs": []}
    try:
        with open(real, "rb") as f:
            saved["data"] = f.read()
    except FileNotFoundError:
        return saved
    saved["stat"] = os.stat(real)
    if module is not None and module.selinux_enabled():
        saved["context"] = module.selinux_context(real)
    return saved


def put_back(saved, module=None):
    """Put one file back exactly as snapshot found it (bytes, mode, owner, SELinux context); a file the transaction
    created is removed, with the folders it created."""
    real = saved["real"]
    if saved["data"] is None:
        if os.path.lexists(real):
            os.unlink(real)
    else:
        replace_file(real, saved["data"], like=saved["stat"])
        if saved["context"] is not None:
            module.set_context_if_different(real, saved["context"], False)
    for folder in saved["dirs"]:
        try:
            os.rmdir(folder)
        except OSError:
            break


class FileTransaction(object):
    """The files one module run writes: each backed up beside itself before it is written (AnsibleModule.backup_local,
    ``<path>.<pid>.<date>@<time>~``, its mode kept), written atomically; ``fail`` puts every one back and fails
    the task.

    Put back, the files differ from the wanted state again, so the next run makes the same change (and runs what
    follows it, such as a boot loader update) again; left written, the next run would find nothing to do.
    """

    def __init__(self, module):
        self.module = module
        self.saved = []  # snapshots, in the order written
        self.backups = []

    def write(self, path, data, mode=None):
        """Back up ``path`` when it exists, then write ``data`` at its real path (creating its folder). ``mode`` is
        set when given; otherwise an existing file keeps its mode and owner. A failure fails the task, every file
        put back."""
        try:
            saved = snapshot(path, self.module)
            if saved["data"] is not None:
                self.backups.append(self.module.backup_local(path))
            self.saved.append(saved)
            folder = os.path.dirname(saved["real"])
            missing = missing_dirs(folder)
            if missing:
                os.makedirs(folder, 0o755)
                saved["dirs"].extend(missing)
            replace_file(saved["real"], data, move=self.module.atomic_move)
            if mode is not None:
                os.chmod(saved["real"], mode)
        except Exception as e:  # backup_local raises Exception; the rest IOError/OSError
            self.fail("cannot write %s: %s" % (path, e))

    def roll_back(self):
        """Put back every file written, last first; the backups go once all are back. Returns the files that could
        not be put back, each with its error (their backups stay)."""
        problems = []
        for saved in reversed(self.saved):
            try:
                put_back(saved, self.module)
            except (IOError, OSError) as e:
                problems.append("%s (%s)" % (saved["path"], e))
        if not problems:
            for backup in self.backups:
                try:
                    os.unlink(backup)
                except OSError:
                    pass
        return problems

    def fail(self, msg, **kwargs):
        """Put back every file written, then fail the task with ``msg`` and what was put back (or, when a file could
        not be, where its backup is: RV(backup_files))."""
        problems = self.roll_back()
        if problems:
            self.module.fail_json(msg="%s; could not put back %s: the backups are %s" % (msg, ", ".join(problems), ", ".join(self.backups) or "none"),
                                  backup_files=self.backups, **kwargs)
        if self.saved:
            msg += "; put back %s as before this run, so the next run tries again" % ", ".join(s["path"] for s in self.saved)
        self.module.fail_json(msg=msg, backup_files=[], **kwargs)
