# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scoped kubeconfig's file: ours or refused (what it is, never what it holds), replaced atomically, 0600, owned."""
from __future__ import annotations

import os
import pwd
import stat

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils import file_txn
from ansible_collections.maitred.rke2_numa.plugins.module_utils import kubeconfig_file as kf
from ansible_collections.maitred.rke2_numa.plugins.modules import kubeconfig_file
from ansible_collections.maitred.rke2_numa.tests.fixtures.module_run import run_module

ME = os.getuid()
OURS = kf.MARK + "\n# the token expires at ...\n{}\n"


def refusal(path):
    return kf.target_refusal(str(path), "me", ME)


def test_nothing_there_or_our_own_file_may_be_written(tmp_path):
    assert refusal(tmp_path / "k.yaml") == ""
    (tmp_path / "k.yaml").write_text(OURS)
    assert refusal(tmp_path / "k.yaml") == ""
    assert refusal(tmp_path / "no-such-dir" / "k.yaml") == "its folder %s does not exist" % (tmp_path / "no-such-dir")


@pytest.mark.parametrize("content", ["root:x:0:0:root:/root:/bin/bash\n", "K10abc::server:secret-join-token", "", kf.MARK,
                                     kf.MARK + " \n", "#" + kf.MARK + "\n"])
def test_any_other_file_is_refused_and_nothing_of_it_is_said(tmp_path, content):
    target = tmp_path / "k.yaml"
    target.write_text(content)
    why = refusal(target)
    assert why == "its first line is not our mark"
    assert not content.strip() or content.strip() not in why


def test_links_devices_fifos_folders_and_hard_links_are_refused(tmp_path):
    (tmp_path / "ours").write_text(OURS)
    (tmp_path / "link").symlink_to(tmp_path / "ours")
    os.mkfifo(str(tmp_path / "fifo"))
    os.link(str(tmp_path / "ours"), str(tmp_path / "hard"))
    assert refusal(tmp_path / "link") == "a symbolic link"
    assert refusal(tmp_path / "fifo") == "not a regular file", "never opened: a FIFO would block the read"
    assert refusal(tmp_path) == "not a regular file"
    assert refusal(tmp_path / "hard") == "a file with 2 hard links"
    assert kf.target_refusal("/dev/null", "me", ME) == "not a regular file"


def test_a_file_of_ours_owned_by_another_user_is_refused(tmp_path):
    target = tmp_path / "k.yaml"
    target.write_text(OURS)
    assert kf.target_refusal(str(target), "alice", ME + 1) == (
        "owned by uid %d, not alice (rke2_numa_access_kubeconfig_owner): a file another user may have put there" % ME)


def write(capsys, path, content, owner=None):
    """kubeconfig_file as Ansible runs it, state=written: (exit code, result)."""
    args = {"path": str(path), "state": "written", "content": content, "owner": owner or pwd.getpwuid(ME).pw_name}
    return run_module(kubeconfig_file, capsys, args)


def test_the_write_replaces_the_file_at_once_0600_and_leaves_no_temporary_file(tmp_path, capsys):
    target = tmp_path / "k.yaml"
    target.write_text(OURS)
    target.chmod(0o644)
    before = os.stat(str(target)).st_ino
    code, result = write(capsys, target, OURS + "new\n")
    info = os.stat(str(target))
    assert code == 0 and result["changed"]
    assert target.read_text() == OURS + "new\n" and stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == ME
    assert info.st_ino != before, "a new file renamed over the old one"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.yaml"], "no temporary file, no copy of the token"


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path, capsys, monkeypatch):
    target = tmp_path / "k.yaml"
    target.write_text(OURS)

    def broken(*args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(file_txn.os, "fsync", broken)
    code, result = write(capsys, target, OURS + "new\n")
    assert code == 1 and "No space left on device" in result["msg"] and result["refusal"] == ""
    assert target.read_text() == OURS and sorted(p.name for p in tmp_path.iterdir()) == ["k.yaml"]


def test_an_owner_the_host_does_not_have_is_named():
    assert kf.owner_ids("root") == (0, 0)
    with pytest.raises(ValueError, match="there is no user 'no-such-user-here' on this host"):
        kf.owner_ids("no-such-user-here")
