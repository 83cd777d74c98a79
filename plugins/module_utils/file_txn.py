# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Files changed on the host as one transaction: backed up first, written atomically, put back on failure.

The one way a module writes a file on the host: boot_params (the boot configuration), rke2_config_files (RKE2's
config files the rke2_config action planned), kubelet_checkpoints (the checkpoints, their backup folder) and
kubeconfig_file (the scoped kubeconfig). A file is never half written: its new bytes go to a temporary file in the same
folder (a rename does not cross file systems), which is synced and then renamed over it. A file behind a symlink
is written at the link's target, so the link stays. A folder of backups is 0700: what it holds may be secret.
"""

from __future__ import annotations

import collections
import os
import stat
import tempfile
import time


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
    """Write ``data`` over ``dest`` atomically: a temporary file beside it (0600 while it is written), given the owner
    and mode of ``like`` (a stat, or Attrs) before its first byte when given, synced, then moved over ``dest`` by
    ``move(tmp, dest)`` - os.rename, or AnsibleModule.atomic_move, which gives it an existing dest's mode, owner and
    SELinux context -, and the folder synced. When anything fails, dest is as it was and the temporary file is gone."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(dest), prefix=".%s." % os.path.basename(dest))
    try:
        with os.fdopen(fd, "wb") as f:
            if like is not None:
                _keep_owner_and_mode(tmp, like)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        (move or os.rename)(tmp, dest)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    try:  # the rename on disk too; best effort where the folder cannot be opened
        fd = os.open(os.path.dirname(dest) or ".", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# The mode and owner a file is written with (what replace_file's ``like`` reads of a stat).
Attrs = collections.namedtuple("Attrs", "st_mode st_uid st_gid")


def backup_folder(folder):
    """``folder`` made ready for backups: created when missing, 0700 whatever the umask, root's when run as root."""
    if not os.path.isdir(folder):
        os.makedirs(folder, 0o700)
    if os.geteuid() == 0:
        os.chown(folder, 0, 0)
    os.chmod(folder, 0o700)
    return folder


def _new(folder, name, make):
    """``make(path)`` at <folder>/<name>, or - when that exists - at the first free name with ``.2``, ``.3`` ... (before
    a final ``~``); never over an existing one. Returns (path, what make returned)."""
    base, tail = (name[:-1], "~") if name.endswith("~") else (name, "")
    path, n = os.path.join(folder, name), 1
    while True:
        try:
            return path, make(path)
        except FileExistsError:
            n += 1
            path = os.path.join(folder, "%s.%d%s" % (base, n, tail))


def write_backup(folder, name, data):
    """``data`` as a new backup <folder>/<name> (_new): 0600, the module's user's, never readable by others."""
    path, fd = _new(folder, name, lambda p: os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    with os.fdopen(fd, "wb") as f:
        os.fchmod(f.fileno(), 0o600)
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return path


def new_folder(backup_dir, name):
    """A new folder <backup_dir>/<name> (_new) for backups, 0700 whatever the umask, in backup_folder(backup_dir)."""
    path = _new(backup_folder(backup_dir), name, lambda p: os.mkdir(p, 0o700))[0]
    os.chmod(path, 0o700)
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


def is_as_saved(saved):
    """Whether the file still is as its snapshot (or record) says: the same bytes, mode and owner, or absent."""
    if saved["data"] is None:
        return not os.path.lexists(saved["real"])
    try:
        st = os.lstat(saved["real"])
        with open(saved["real"], "rb") as f:
            data = f.read()
    except (IOError, OSError):
        return False
    old = saved["stat"]
    return data == saved["data"] and (st.st_mode, st.st_uid, st.st_gid) == (old.st_mode, old.st_uid, old.st_gid)


def put_back(saved, module=None):
    """Put one file back as ``saved`` holds it (bytes, mode and owner of its stat, SELinux context) - the one way back,
    for a failed run (its snapshot) and for undoing an earlier run (its backup); a file the transaction created
    (data None) is removed, with the folders it created."""
    real = saved["real"]
    if saved["data"] is None:
        if os.path.lexists(real):
            os.unlink(real)
    elif not is_as_saved(saved):  # a change that failed left it as it was: nothing to put back
        replace_file(real, saved["data"], like=saved["stat"])
        if saved["context"] is not None:
            module.set_context_if_different(real, saved["context"], False)
    for folder in saved["dirs"]:
        try:
            os.rmdir(folder)
        except OSError:
            break


class FileTransaction(object):
    """The files one module run writes or removes: each backed up before its first change, changed atomically;
    ``fail`` puts every one back and fails the task.

    The one backup layout: with ``backup_dir``, a 0600 copy in that folder (0700, root's), named after the file's
    real path and the time (or the name the module gives); without, beside the file (AnsibleModule.backup_local,
    ``<path>.<pid>.<date>@<time>~``, its mode kept: boot_params' contract); ``backup=False`` keeps no copy on disk
    (the snapshot in memory still puts a failed run back). Every file's snapshot is taken before it changes.

    Put back, the files differ from the wanted state again, so the next run makes the same change (and runs what
    follows it, such as a boot loader update) again; left written, the next run would find nothing to do.
    """

    def __init__(self, module, backup_dir=None, backup=True, result=None):
        self.module = module
        self.backup_dir, self.backup_on = backup_dir, backup
        self.result = result or {}  # what fail returns besides the message
        self.saved = []  # snapshots, in the order first changed or backed up
        self.backups = []
        self._stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())

    def _snapshot(self, path, name=None, copy=True):
        """The snapshot of ``path`` (taken, and the file backed up unless ``copy`` is false, on the first call)."""
        real = os.path.realpath(path)
        for saved in self.saved:
            if saved["real"] == real:
                return saved
        saved = snapshot(path, self.module)
        saved["backup"] = ""
        if saved["data"] is not None and self.backup_on and copy:
            if self.backup_dir is None:
                saved["backup"] = self.module.backup_local(path)
            else:
                name = name or "%s.%s~" % (real.strip("/").replace("/", "_"), self._stamp)   # its real path, / as _, and when
                saved["backup"] = write_backup(backup_folder(self.backup_dir), name, saved["data"])
            self.backups.append(saved["backup"])
        self.saved.append(saved)
        return saved

    def _step(self, path, what, change):
        try:
            return change()
        except Exception as e:  # backup_local and atomic_move raise Exception; the rest IOError/OSError
            self.fail("cannot %s %s: %s" % (what, path, e))

    def backup(self, path, name=None, copy=True):
        """Back up ``path`` now (before any file of the transaction changes; ``copy`` false: its snapshot only, no copy on
        disk); its backup's path ("" when it does not exist or no copy is kept)."""
        return self._step(path, "back up", lambda: self._snapshot(path, name, copy))["backup"]

    def write(self, path, data, mode=None, owner=None):
        """Write ``data`` at the real path of ``path`` (backed up first; its folder created). ``owner`` (uid, gid)
        with ``mode``: the new file has them before its first byte (a secret is never readable by others); ``mode``
        alone is set after the write; neither: an existing file keeps its mode and owner. A failure fails the task,
        every file put back."""
        self._step(path, "write", lambda: self._apply(self._snapshot(path), data, mode, owner))

    def remove(self, path):
        """Remove ``path`` (backed up first); a failure fails the task, every file put back."""
        self._step(path, "remove", lambda: self._apply(self._snapshot(path), None))

    def put_back(self, record):
        """Undo an earlier run: one file put back as its ``record`` (see recorded) says it was; a failure fails the task,
        every file put back as it was before this run."""
        def change():
            self._snapshot(record["path"])["touched"] = True
            put_back(record, self.module)
        self._step(record["path"], "put back", change)

    def _apply(self, saved, data, mode=None, owner=None):
        """The one step that changes a file of the transaction (from here on, a failure puts it back)."""
        real = saved["real"]
        saved["touched"] = True
        if data is None:
            if os.path.lexists(real):
                os.unlink(real)
            return
        missing = missing_dirs(os.path.dirname(real))
        if missing:
            os.makedirs(os.path.dirname(real), 0o755)
            saved["dirs"].extend(missing)
        if owner is not None:
            replace_file(real, data, like=Attrs(mode if mode is not None else 0o600, owner[0], owner[1]))
            self._keep_context(saved)
            return
        replace_file(real, data, move=self.module.atomic_move)
        if mode is not None:
            os.chmod(real, mode)

    def _keep_context(self, saved):
        """After a plain rename: the SELinux context the file had (a new one: the default for its path)."""
        if self.module.selinux_enabled():
            context = saved["context"] or self.module.selinux_default_context(saved["real"])
            self.module.set_context_if_different(saved["real"], context, False)

    def touched(self):
        """The snapshots of the files a change was made to (or tried), in that order."""
        return [saved for saved in self.saved if saved.get("touched")]

    def roll_back(self):
        """Put back every file changed, last first; backups beside the files go once all are back. Returns the files that could
        not be put back, each with its error (their backups stay)."""
        problems = []
        for saved in reversed(self.touched()):
            try:
                put_back(saved, self.module)
            except (IOError, OSError) as e:
                problems.append("%s (%s)" % (saved["path"], e))
        if not problems and self.backup_dir is None:  # beside the file they would litter its folder; in a backup folder they stay
            for backup in self.backups:
                try:
                    os.unlink(backup)
                except OSError:
                    pass
        return problems

    def fail(self, msg, **kwargs):
        """Put back every file changed, then fail the task with ``msg`` and what was put back (or, when a file could
        not be, where its backup is: RV(backup_files))."""
        problems = self.roll_back()
        kwargs = dict(self.result, **kwargs)
        if problems:
            self.module.fail_json(msg="%s; could not put back %s: the backups are %s" % (msg, ", ".join(problems), ", ".join(self.backups) or "none"),
                                  backup_files=self.backups, **kwargs)
        if self.touched():
            msg += "; put back %s as before this run, so the next run tries again" % ", ".join(s["path"] for s in self.touched())
        self.module.fail_json(msg=msg, backup_files=[], **kwargs)


# ---- Files planned elsewhere (the rke2_config action plans RKE2's files on the controller), written as one transaction.

def write_planned(module, files, backup_dir, owner=(0, 0), mode=0o600):
    """``files``: [{path, content (None: remove), backup}] in the order they change. Every file is backed up (a copy in
    ``backup_dir`` when ``backup``, else its snapshot only) before the first changes; each is then written ``mode``,
    owned by ``owner``, or removed. Returns each file's backup ("" when none). A failure puts every file back and fails
    the task."""
    txn = FileTransaction(module, backup_dir=backup_dir)
    backups = [txn.backup(f["path"], copy=bool(f.get("backup"))) for f in files]
    for f in files:
        if f.get("content") is None:
            txn.remove(f["path"])
        else:
            txn.write(f["path"], f["content"].encode("utf-8"), mode, owner)
    return backups


def recorded(path, data, mode=None, uid=None, gid=None):
    """A file as an earlier run recorded it, which put_back gives back: ``data`` (its backup's bytes) with ``mode`` and
    owner, or None - the run created it, so it goes."""
    return {"path": path, "real": os.path.realpath(path), "data": data, "context": None, "dirs": [],
            "stat": None if data is None else Attrs(stat.S_IFREG | mode, uid, gid)}


def backup_record(path, backup, mode=None, uid=None, gid=None):
    """The record of a file an earlier run backed up at ``backup`` (recorded): the backup's bytes, with ``mode`` and
    owner as recorded (each the backup's own when not); no ``backup`` - the run created the file."""
    if not backup:
        return recorded(path, None)
    st = os.stat(backup)
    with open(backup, "rb") as f:
        data = f.read()
    return recorded(path, data, stat.S_IMODE(st.st_mode) if mode is None else mode, st.st_uid if uid is None else uid,
                    st.st_gid if gid is None else gid)


def restore_recorded(module, records):
    """Undo an earlier run: every file of ``records`` (recorded) that is not as recorded is put back, as one transaction
    (no copy kept: the backups are the way back; in check mode nothing). Returns the paths put back."""
    txn = FileTransaction(module, backup=False)
    changed = [record for record in records if not is_as_saved(record)]
    for record in changed if not module.check_mode else []:
        txn.put_back(record)
    return [record["path"] for record in changed]
