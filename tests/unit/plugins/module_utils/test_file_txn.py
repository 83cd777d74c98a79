# -*- coding: utf-8 -*-
"""The host's file transaction on real files: atomic writes that leave the file as it was when they fail, symlinks
written through, backups beside the file or in 0700 folders, and the way back (bytes, mode, created files and
folders)."""

from __future__ import annotations

import os
import stat

import pytest

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.testing import patch_module_args

from ansible_collections.maitred.rke2_numa.plugins.module_utils import file_txn
from ansible_collections.maitred.rke2_numa.plugins.module_utils.file_txn import FileTransaction, new_folder, replace_file


class Failed(Exception):
    pass


class Module(AnsibleModule):
    """AnsibleModule (its atomic_move, backup_local and SELinux calls) with fail_json raising the result, and a
    rename that fails at the given call."""

    def __init__(self, fail_move_at=None):
        with patch_module_args({}):
            super(Module, self).__init__(argument_spec={})
        self.moves = 0
        self.fail_move_at = fail_move_at

    def atomic_move(self, src, dest, unsafe_writes=False, keep_dest_attrs=True):
        self.moves += 1
        if self.moves == self.fail_move_at:
            raise OSError(28, "No space left on device")
        super(Module, self).atomic_move(src, dest, unsafe_writes, keep_dest_attrs)

    def fail_json(self, msg, **result):
        raise Failed(dict(result, msg=msg))


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def listing(folder):
    return sorted(os.listdir(folder))


def test_a_failed_rename_leaves_the_original_bytes_and_mode_and_no_temporary_file(tmp_path):
    path = tmp_path / "grub"
    path.write_bytes(b"old\n")
    os.chmod(path, 0o640)

    def move(src, dest):
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        replace_file(str(path), b"new\n", move=move)
    assert path.read_bytes() == b"old\n" and mode(path) == 0o640 and listing(tmp_path) == ["grub"]


def test_a_replaced_file_takes_the_mode_it_is_given(tmp_path):
    path = tmp_path / "cpu_manager_state"
    path.write_bytes(b"old")
    os.chmod(path, 0o600)
    like = tmp_path / "backup"
    like.write_bytes(b"")
    os.chmod(like, 0o644)
    replace_file(str(path), b"new", like=os.stat(like))
    assert path.read_bytes() == b"new" and mode(path) == 0o644 and listing(tmp_path) == ["backup", "cpu_manager_state"]


def test_in_a_backup_dir_every_file_is_backed_up_0600_in_a_0700_folder_under_one_name(tmp_path):
    """The one backup layout: <backup_dir>/<real path with _>.<stamp>~, 0600 whatever the file's mode, in a 0700
    folder; a second backup of the same name in the same second gets .2 before the ~, never overwrites."""
    path = tmp_path / "etc" / "config.yaml"
    path.parent.mkdir()
    path.write_bytes(b"token: x\n")
    os.chmod(path, 0o644)
    backups = tmp_path / "backup"
    first = FileTransaction(Module(), backup_dir=str(backups))
    first.write(str(path), b"new\n", 0o600, (os.getuid(), os.getgid()))
    second = FileTransaction(Module(), backup_dir=str(backups))
    second._stamp = first._stamp
    second.backup(str(path))
    name = "%s.%s" % (str(path).strip("/").replace("/", "_"), first._stamp)
    assert first.backups == [str(backups / (name + "~"))] and second.backups == [str(backups / (name + ".2~"))]
    assert mode(backups) == 0o700 and mode(first.backups[0]) == 0o600 and mode(second.backups[0]) == 0o600
    assert open(first.backups[0], "rb").read() == b"token: x\n" and open(second.backups[0], "rb").read() == b"new\n"
    assert mode(path) == 0o600


def test_restore_puts_an_earlier_runs_backup_back_with_the_mode_it_had(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_bytes(b"old\n")
    os.chmod(path, 0o644)
    txn = FileTransaction(Module(), backup_dir=str(tmp_path / "backup"))
    backup = txn.backup(str(path))
    txn.write(str(path), b"new\n", 0o600, (os.getuid(), os.getgid()))
    with open(backup, "rb") as f:
        record = file_txn.recorded(str(path), f.read(), 0o644, os.getuid(), os.getgid())
    assert file_txn.restore_recorded(Module(), [record]) == [str(path)]
    assert path.read_bytes() == b"old\n" and mode(path) == 0o644 and listing(tmp_path) == ["backup", "config.yaml"]


def test_a_failed_remove_puts_back_the_file_removed_before_it(tmp_path, monkeypatch):
    (tmp_path / "a").write_bytes(b"a\n")
    (tmp_path / "b").write_bytes(b"b\n")
    os.chmod(tmp_path / "a", 0o640)
    txn = FileTransaction(Module(), backup=False)
    txn.remove(str(tmp_path / "a"))
    real_unlink = os.unlink

    def unlink(path, *args, **kwargs):
        if str(path) == str(tmp_path / "b"):
            raise OSError(1, "Operation not permitted")
        return real_unlink(path, *args, **kwargs)
    monkeypatch.setattr(file_txn.os, "unlink", unlink)
    with pytest.raises(Failed) as info:
        txn.remove(str(tmp_path / "b"))
    assert info.value.args[0]["msg"].startswith("cannot remove %s: [Errno 1] Operation not permitted; put back" % (tmp_path / "b"))
    assert (tmp_path / "a").read_bytes() == b"a\n" and mode(tmp_path / "a") == 0o640 and listing(tmp_path) == ["a", "b"]


def test_a_backup_folder_is_0700_whatever_the_umask_and_never_reused(tmp_path):
    old = os.umask(0o100)  # mkdir alone would make it 0600: the owner could not enter it
    try:
        first = new_folder(str(tmp_path / "backup"), "20261204T000000Z")
        second = new_folder(str(tmp_path / "backup"), "20261204T000000Z")
    finally:
        os.umask(old)
    assert mode(first) == 0o700 and mode(second) == 0o700 and second == first + ".2"


def test_a_symlink_is_written_through_not_replaced(tmp_path):
    (tmp_path / "usr").mkdir()
    target = tmp_path / "usr" / "grub"
    target.write_bytes(b"old\n")
    os.chmod(target, 0o600)
    link = tmp_path / "grub"
    os.symlink("usr/grub", str(link))
    txn = FileTransaction(Module())
    txn.write(str(link), b"new\n")
    assert os.readlink(str(link)) == "usr/grub" and target.read_bytes() == b"new\n" and mode(target) == 0o600
    assert len(txn.backups) == 1 and txn.backups[0].startswith(str(link) + ".") and txn.backups[0].endswith("~")
    with open(txn.backups[0], "rb") as f:
        assert f.read() == b"old\n"


def test_restore_puts_back_bytes_and_mode_removes_created_files_and_folders_and_then_the_backups(tmp_path):
    kept = tmp_path / "etc" / "default" / "grub"
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"GRUB_CMDLINE_LINUX=\"quiet\"\n")
    os.chmod(kept, 0o640)
    link = tmp_path / "etc" / "kernel-cmdline"
    os.symlink("default/grub", str(link))
    created = tmp_path / "etc" / "default" / "grub.d" / "deep" / "99-rke2-numa.cfg"
    before = {p: (os.lstat(p).st_mode, os.readlink(p) if os.path.islink(p) else open(p, "rb").read())
              for p in (str(kept), str(link))}
    module = Module()
    txn = FileTransaction(module)
    txn.write(str(kept), b"changed\n", mode=0o644)
    txn.write(str(created), b"new\n", mode=0o644)
    txn.write(str(link), b"changed again\n")
    # one snapshot and one backup per real file: the second write through the link keeps the first (the state before)
    assert kept.read_bytes() == b"changed again\n" and mode(kept) == 0o644 and len(txn.backups) == 1
    with pytest.raises(Failed) as info:
        txn.fail("cannot update the boot loader: update-grub exited 5", rc=5)
    result = info.value.args[0]
    assert result["msg"] == ("cannot update the boot loader: update-grub exited 5; put back %s, %s as before this run, so the"
                             " next run tries again" % (kept, created)) and result["rc"] == 5 and result["backup_files"] == []
    assert {p: (os.lstat(p).st_mode, os.readlink(p) if os.path.islink(p) else open(p, "rb").read())
            for p in (str(kept), str(link))} == before
    assert listing(tmp_path / "etc" / "default") == ["grub"] and listing(tmp_path / "etc") == ["default", "kernel-cmdline"]


def test_a_failed_write_puts_back_what_was_written_before_it(tmp_path):
    (tmp_path / "a").write_bytes(b"a\n")
    (tmp_path / "b").write_bytes(b"b\n")
    txn = FileTransaction(Module(fail_move_at=2))
    txn.write(str(tmp_path / "a"), b"A\n")
    with pytest.raises(Failed) as info:
        txn.write(str(tmp_path / "b"), b"B\n")
    assert info.value.args[0]["msg"] == ("cannot write %s: [Errno 28] No space left on device; put back %s, %s as before this run,"
                                         " so the next run tries again" % (tmp_path / "b", tmp_path / "a", tmp_path / "b"))
    assert (tmp_path / "a").read_bytes() == b"a\n" and (tmp_path / "b").read_bytes() == b"b\n" and listing(tmp_path) == ["a", "b"]


def test_a_file_that_cannot_be_put_back_keeps_every_backup_and_names_them(tmp_path, monkeypatch):
    (tmp_path / "a").write_bytes(b"a\n")
    txn = FileTransaction(Module())
    txn.write(str(tmp_path / "a"), b"A\n")

    def read_only(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(file_txn, "replace_file", read_only)
    with pytest.raises(Failed) as info:
        txn.fail("update-grub failed")
    result = info.value.args[0]
    assert result["msg"] == "update-grub failed; could not put back %s ([Errno 30] Read-only file system): the backups are %s" % (
        tmp_path / "a", txn.backups[0])
    assert result["backup_files"] == txn.backups and os.path.exists(txn.backups[0])


def test_planned_files_are_all_backed_up_first_then_written_0600_or_removed_and_a_recorded_run_comes_back(tmp_path):
    """write_planned (the rke2_config action's files) and restore_recorded (its restore): the way there and back."""
    config, ours, old = tmp_path / "config.yaml", tmp_path / "d" / "90.yaml", tmp_path / "d" / "50.yaml"
    config.write_bytes(b"token: x\n")
    os.chmod(config, 0o644)
    ours.parent.mkdir()
    old.write_bytes(b"# ours, old name\n")
    me = (os.getuid(), os.getgid())
    files = [{"path": str(ours), "content": "new\n", "backup": True}, {"path": str(config), "content": "token: x\nmore\n", "backup": True},
             {"path": str(old), "content": None, "backup": True}]
    backups = file_txn.write_planned(Module(), files, str(tmp_path / "backup"), owner=me)
    assert backups[0] == "" and open(backups[1], "rb").read() == b"token: x\n" and open(backups[2], "rb").read() == b"# ours, old name\n"
    assert mode(config) == 0o600 and ours.read_bytes() == b"new\n" and mode(ours) == 0o600 and not old.exists()
    record = [file_txn.recorded(str(ours), None), file_txn.recorded(str(config), open(backups[1], "rb").read(), 0o644, *me),
              file_txn.recorded(str(old), open(backups[2], "rb").read(), 0o600, *me)]
    assert file_txn.restore_recorded(Module(), record) == [str(ours), str(config), str(old)]
    assert config.read_bytes() == b"token: x\n" and mode(config) == 0o644 and not ours.exists() and old.read_bytes() == b"# ours, old name\n"
    assert file_txn.restore_recorded(Module(), record) == []


@pytest.mark.parametrize("through", ["rename", "atomic_move"])
def test_a_replaced_file_has_its_folder_synced_after_the_rename(tmp_path, monkeypatch, through):
    """The rename is on disk too, not only the bytes: the folder is synced once the new file is in it."""
    path, synced, fsync = tmp_path / "kubeconfig", [], os.fsync

    def spy(fd):
        st = os.fstat(fd)
        synced.append((stat.S_ISDIR(st.st_mode) and st.st_ino == os.stat(tmp_path).st_ino, path.exists()))
        fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    replace_file(str(path), b"new\n", move=Module().atomic_move if through == "atomic_move" else None)
    assert path.read_bytes() == b"new\n"
    assert synced[-1] == (True, True), synced


def test_a_folder_that_cannot_be_opened_is_not_synced_and_the_file_is_written(tmp_path, monkeypatch):
    path, opened = tmp_path / "grub", os.open

    def refuse_folders(name, flags, *args):
        if flags & os.O_DIRECTORY:
            raise PermissionError(13, "Permission denied")
        return opened(name, flags, *args)

    monkeypatch.setattr(os, "open", refuse_folders)
    replace_file(str(path), b"new\n")
    assert path.read_bytes() == b"new\n"
