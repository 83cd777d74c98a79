# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One test for every module that writes files on the host through module_utils/file_txn.FileTransaction: a run whose
second file change fails (its rename, replace or unlink raises, as on a full or read-only disk) leaves the file it
changed first exactly as before - bytes, mode, owner - and fails saying it put it back. kubeconfig_file changes one
file only: its one write fails and the file is as it was."""

from __future__ import annotations

import json
import os
import stat

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils import kubeconfig_file as kf
from ansible_collections.maitred.rke2_numa.plugins.modules import boot_params, kubeconfig_file, kubelet_checkpoints, rke2_config_files
from ansible_collections.maitred.rke2_numa.tests.fixtures.module_run import run_module
from ansible_collections.maitred.rke2_numa.tests.unit.plugins.modules.test_kubelet_checkpoints import kubelet_folder


def state(paths):
    """Each file's bytes, mode and owner (None when it does not exist)."""
    out = {}
    for path in paths:
        if os.path.lexists(path):
            st = os.lstat(path)
            with open(path, "rb") as f:
                out[path] = (f.read(), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid)
        else:
            out[path] = None
    return out


def fail_changes_to(monkeypatch, target):
    """Every rename or replace onto ``target``, and its unlink, raise EIO (whatever the module calls)."""
    def failing(real, to):
        def call(*args, **kwargs):
            if os.path.abspath(os.fsdecode(args[to])) == target:
                raise OSError(5, "Input/output error")
            return real(*args, **kwargs)
        return call
    monkeypatch.setattr(os, "rename", failing(os.rename, 1))
    monkeypatch.setattr(os, "replace", failing(os.replace, 1))
    monkeypatch.setattr(os, "unlink", failing(os.unlink, 0))


def boot(tmp_path, capsys):
    """SL Micro: /etc/default/grub first, then the record boot_params keeps of what it wrote."""
    root = tmp_path / "root"
    (root / "etc/default").mkdir(parents=True)
    (root / "proc").mkdir()
    (root / "etc/os-release").write_text('NAME="SL-Micro"\nID="sl-micro"\nID_LIKE="suse"\nVERSION_ID="6.0"\n')
    (root / "proc/cmdline").write_text("BOOT_IMAGE=/boot/vmlinuz root=UUID=2f0c ro quiet\n")
    (root / "etc/default/grub").write_text('GRUB_CMDLINE_LINUX_DEFAULT="quiet isolcpus=2-3"\nGRUB_CMDLINE_LINUX=""\n')
    os.chmod(root / "etc/default/grub", 0o640)
    args = {"args": ["isolcpus=1-3", "nohz_full=1-3", "hugepagesz=1G", "hugepages=4"], "root": str(root), "method": "transactional_update",
            "update_bootloader": False}
    return boot_params, args, str(root / "etc/default/grub"), str(root / "etc/rke2-numa/boot_params.state")


def rke2(tmp_path, capsys):
    """The rke2_config action's host side: config.yaml (the token, 0644 as someone left it) unmerged, then our drop-in."""
    config, dropin = tmp_path / "config.yaml", tmp_path / "config.yaml.d" / "90-rke2-numa.yaml"
    config.write_text("token: K10secret\nkubelet-arg:\n  - reserved-cpus=1\n")
    os.chmod(config, 0o644)
    dropin.parent.mkdir()
    dropin.write_text("# ours\nkubelet-arg+: [a=1]\n")
    files = [{"path": str(config), "content": "token: K10secret\n", "backup": True},
             {"path": str(dropin), "content": "# ours\nkubelet-arg+: [a=2]\n", "backup": True}]
    return rke2_config_files, {"files": files, "backup_dir": str(tmp_path / "backup")}, str(config), str(dropin)


def checkpoints_absent(tmp_path, capsys):
    """The reset: both checkpoints deleted (backed up first) - the second delete fails."""
    folder = kubelet_folder(tmp_path)
    args = {"kubelet_dir": str(folder), "state": "absent", "backup_dir": str(tmp_path / "backup")}
    return kubelet_checkpoints, args, str(folder / "cpu_manager_state"), str(folder / "memory_manager_state")


def checkpoints_restored(tmp_path, capsys):
    """The way back: both checkpoints put back from the reset's folder - the second write fails."""
    folder = kubelet_folder(tmp_path)
    code, result = run_module(kubelet_checkpoints, capsys, {"kubelet_dir": str(folder), "state": "absent", "backup_dir": str(tmp_path / "b")})
    assert code == 0
    (folder / "cpu_manager_state").write_text(json.dumps({"policyName": "static", "defaultCpuSet": "0-3", "checksum": 9}))
    (folder / "memory_manager_state").write_text("{}")
    args = {"kubelet_dir": str(folder), "state": "restored", "backup_path": result["backup_path"]}
    return kubelet_checkpoints, args, str(folder / "cpu_manager_state"), str(folder / "memory_manager_state")


def kubeconfig(tmp_path, capsys):
    """One file: its only write fails."""
    path = tmp_path / "rke2-numa.yaml"
    path.write_text(kf.MARK + "\n# old\n")
    os.chmod(path, 0o600)
    args = {"path": str(path), "state": "written", "content": kf.MARK + "\n# new\n", "owner": "root"}
    return kubeconfig_file, args, str(path), str(path)


@pytest.mark.skipif(os.geteuid() != 0, reason="the files are written root:root, like on a node")
@pytest.mark.parametrize("setup", [boot, rke2, checkpoints_absent, checkpoints_restored, kubeconfig],
                         ids=["boot_params", "rke2_config", "kubelet_checkpoints-absent", "kubelet_checkpoints-restored", "kubeconfig_file"])
def test_a_failed_second_write_puts_back_the_first(tmp_path, capsys, monkeypatch, setup):
    module, args, first, second = setup(tmp_path, capsys)
    before = state([first, second])
    fail_changes_to(monkeypatch, second)
    code, result = run_module(module, capsys, args)
    assert code == 1 and result["failed"], result
    assert result["msg"].startswith(tuple("cannot %s %s: " % (what, second) for what in ("write", "remove", "put back"))), result["msg"]
    assert "put back %s" % first in result["msg"], result["msg"]
    assert state([first, second]) == before
    assert not [name for name in os.listdir(os.path.dirname(first)) if name.startswith(".")], "a temporary file was left"
