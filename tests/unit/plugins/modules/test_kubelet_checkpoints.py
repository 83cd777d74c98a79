# -*- coding: utf-8 -*-
"""kubelet_checkpoints in-process on real files: the reset's backup-and-delete and its way back,
with modes kept, a manifest that makes a restore remove only what the failed kubelet wrote, and
refusals that touch nothing."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.testing import patch_module_args

from ansible_collections.maitred.rke2_numa.plugins.module_utils import kubelet_checkpoints as kc
from ansible_collections.maitred.rke2_numa.plugins.modules import kubelet_checkpoints
from ansible_collections.maitred.rke2_numa.tests.fixtures.module_run import run_module

CPU = json.dumps({"policyName": "none", "defaultCpuSet": "", "checksum": 1})
MEMORY = json.dumps({"policyName": "None", "machineState": {}, "checksum": 2})


def run(capsys, **args):
    return run_module(kubelet_checkpoints, capsys, args)


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def kubelet_folder(tmp_path):
    """A kubelet's folder: both checkpoints (0644 and 0600) and what the module does not manage (pods/), which stays."""
    d = tmp_path / "kubelet"
    d.mkdir()
    (d / "cpu_manager_state").write_text(CPU)
    os.chmod(d / "cpu_manager_state", 0o644)
    (d / "memory_manager_state").write_text(MEMORY)
    os.chmod(d / "memory_manager_state", 0o600)
    (d / "pods").mkdir()
    return d


@pytest.fixture
def kubelet(tmp_path):
    return kubelet_folder(tmp_path)


def test_absent_backs_up_with_modes_then_deletes_and_restored_puts_them_back(kubelet, tmp_path, capsys):
    backups = tmp_path / "backup"
    code, result = run(capsys, kubelet_dir=str(kubelet), state="absent", backup_dir=str(backups))
    assert code == 0 and result["changed"]
    folder = result["backup_path"]
    assert os.path.dirname(folder) == str(backups) and mode(backups) == 0o700 and mode(folder) == 0o700
    assert sorted(os.listdir(folder)) == ["cpu_manager_state", "memory_manager_state", kc.MANIFEST]
    # the copies are 0600 (one backup layout); the manifest keeps the mode each comes back with
    assert mode(os.path.join(folder, "cpu_manager_state")) == 0o600 and mode(os.path.join(folder, "memory_manager_state")) == 0o600
    assert json.load(open(os.path.join(folder, kc.MANIFEST)))["previous"]["cpu_manager_state"]["mode"] == 0o644
    assert sorted(os.listdir(kubelet)) == ["pods"]
    # the kubelet that failed wrote new ones
    (kubelet / "cpu_manager_state").write_text(json.dumps({"policyName": "static", "defaultCpuSet": "0-3", "checksum": 9}))
    (kubelet / "memory_manager_state").write_text("{}")
    os.chmod(kubelet / "memory_manager_state", 0o644)
    code, result = run(capsys, kubelet_dir=str(kubelet), state="restored", backup_path=folder)
    assert code == 0 and result["changed"] and sorted(result["restored"]) == sorted(
        [str(kubelet / "cpu_manager_state"), str(kubelet / "memory_manager_state")]) and result["removed"] == []
    assert (kubelet / "cpu_manager_state").read_text() == CPU and (kubelet / "memory_manager_state").read_text() == MEMORY
    assert mode(kubelet / "cpu_manager_state") == 0o644 and mode(kubelet / "memory_manager_state") == 0o600
    assert sorted(os.listdir(kubelet)) == ["cpu_manager_state", "memory_manager_state", "pods"]   # no temporary file left
    code, again = run(capsys, kubelet_dir=str(kubelet), state="restored", backup_path=folder)
    assert code == 0 and not again["changed"]


def test_a_checkpoint_that_did_not_exist_before_is_removed_again_and_nothing_else(kubelet, tmp_path, capsys):
    os.unlink(kubelet / "memory_manager_state")
    code, result = run(capsys, kubelet_dir=str(kubelet), state="absent", backup_dir=str(tmp_path / "b"))
    assert result["removed"] == [str(kubelet / "cpu_manager_state")]
    (kubelet / "memory_manager_state").write_text(MEMORY)   # written by the kubelet that failed
    code, result = run(capsys, kubelet_dir=str(kubelet), state="restored", backup_path=result["backup_path"])
    assert code == 0 and result["removed"] == [str(kubelet / "memory_manager_state")]
    assert sorted(os.listdir(kubelet)) == ["cpu_manager_state", "pods"]


def test_check_mode_changes_nothing(kubelet, tmp_path, capsys):
    code, result = run(capsys, kubelet_dir=str(kubelet), state="absent", backup_dir=str(tmp_path / "b"), _ansible_check_mode=True)
    assert code == 0 and result["changed"] and result["backup_path"] == "" and len(result["removed"]) == 2
    assert not (tmp_path / "b").exists() and sorted(os.listdir(kubelet)) == ["cpu_manager_state", "memory_manager_state", "pods"]


def test_a_reset_with_no_checkpoint_still_records_that_so_the_way_back_removes_what_the_failed_kubelet_wrote(tmp_path, capsys):
    empty = tmp_path / "kubelet"
    empty.mkdir()
    code, result = run(capsys, kubelet_dir=str(empty), state="absent", backup_dir=str(tmp_path / "b"))
    assert code == 0 and result["removed"] == [] and os.listdir(result["backup_path"]) == [kc.MANIFEST]
    (empty / "cpu_manager_state").write_text(CPU)
    (empty / "memory_manager_state").write_text(MEMORY)
    code, back = run(capsys, kubelet_dir=str(empty), state="restored", backup_path=result["backup_path"])
    assert code == 0 and len(back["removed"]) == 2 and os.listdir(empty) == []


def module():
    with patch_module_args({}):
        return AnsibleModule(argument_spec={})


def test_two_resets_in_one_second_get_two_folders(kubelet, tmp_path):
    first = kc.backup_and_remove(module(), str(kubelet), str(tmp_path / "b"), "20261203T000000Z")
    (kubelet / "cpu_manager_state").write_text(CPU)
    second = kc.backup_and_remove(module(), str(kubelet), str(tmp_path / "b"), "20261203T000000Z")
    assert first["backup_path"] != second["backup_path"] and second["backup_path"].endswith(".2")


@pytest.mark.parametrize("case", ["no-manifest", "other-kubelet", "copy-missing"])
def test_restore_trusts_only_its_own_backup_and_then_touches_nothing(kubelet, tmp_path, capsys, case):
    folder = kc.backup_and_remove(module(), str(kubelet), str(tmp_path / "b"), "s")["backup_path"]
    (kubelet / "memory_manager_state").write_text("written by the failed kubelet")
    target = kubelet
    if case == "no-manifest":
        os.unlink(os.path.join(folder, kc.MANIFEST))
    elif case == "other-kubelet":
        target = tmp_path / "other"
        target.mkdir()
    else:
        os.unlink(os.path.join(folder, "cpu_manager_state"))
    before = sorted(os.listdir(target))
    code, result = run(capsys, kubelet_dir=str(target), state="restored", backup_path=folder)
    assert code == 1 and "nothing was restored" in result["msg"]
    assert sorted(os.listdir(target)) == before


def test_a_checkpoint_that_is_a_symlink_is_refused_before_anything_is_written(kubelet, tmp_path, capsys):
    os.unlink(kubelet / "cpu_manager_state")
    os.symlink("/etc/passwd", kubelet / "cpu_manager_state")
    code, result = run(capsys, kubelet_dir=str(kubelet), state="absent", backup_dir=str(tmp_path / "b"))
    assert code == 1 and "not a regular file" in result["msg"]
    assert not (tmp_path / "b").exists() and os.path.islink(kubelet / "cpu_manager_state")
    assert (kubelet / "memory_manager_state").read_text() == MEMORY


def test_a_backup_made_before_the_manifest_kept_modes_restores_with_the_copies_own(kubelet, tmp_path, capsys):
    """An earlier reset's folder (copies with their modes kept, a manifest without ``previous``) still restores."""
    folder = kc.backup_and_remove(module(), str(kubelet), str(tmp_path / "b"), "s")["backup_path"]
    manifest = os.path.join(folder, kc.MANIFEST)
    data = json.load(open(manifest))
    del data["previous"]
    json.dump(data, open(manifest, "w"))
    os.chmod(os.path.join(folder, "cpu_manager_state"), 0o644)
    code, result = run(capsys, kubelet_dir=str(kubelet), state="restored", backup_path=folder)
    assert code == 0 and mode(kubelet / "cpu_manager_state") == 0o644 and mode(kubelet / "memory_manager_state") == 0o600


def test_the_checkpoint_read_compiles_no_file_transaction(tmp_path):
    """node_state_info and kubelet_state_info read the checkpoints: file_txn, which only the reset's writes need, is
    not imported (a module call compiles its module_utils anew on every host)."""
    code = """
import json, sys
from ansible_collections.maitred.rke2_numa.plugins.module_utils import kubelet_checkpoints
kubelet_checkpoints.read_checkpoints(sys.argv[1])
print(json.dumps(sorted(m.rpartition(".")[2] for m in sys.modules if ".module_utils." in m)))
"""
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))).stdout
    loaded = set(json.loads(out))
    assert "kubelet_checkpoints" in loaded
    assert "file_txn" not in loaded, loaded
