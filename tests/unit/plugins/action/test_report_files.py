# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""report_files: the run's report files in one task - only what changed, atomically, links kept, names refused."""

from __future__ import annotations

import os

from ansible_collections.maitred.rke2_numa.plugins.action.report_files import name_errors, write_files


def test_only_new_or_changed_files_are_written_and_the_folder_keeps_its_mode(tmp_path):
    dest = tmp_path / "out"
    dest.mkdir(mode=0o700)
    dest.chmod(0o700)
    assert write_files(str(dest), {"a.json": "{}\n", "b.json": "[]\n"}) == (["a.json", "b.json"], 0, False)
    assert oct(dest.stat().st_mode & 0o777) == "0o700" and oct((dest / "a.json").stat().st_mode & 0o777) == "0o644"
    assert write_files(str(dest), {"a.json": "{}\n", "b.json": "[1]\n"}) == (["b.json"], 1, False)
    (dest / "a.json").chmod(0o600)
    assert write_files(str(dest), {"a.json": "{}\n"}) == (["a.json"], 0, False)   # its mode again
    assert (dest / "b.json").read_text() == "[1]\n" and not [n for n in os.listdir(dest) if n.startswith(".")]


def test_a_missing_folder_is_created_0755_and_check_mode_writes_nothing(tmp_path):
    dest = tmp_path / "new" / "out"
    assert write_files(str(dest), {"x.html": "<p>"}, check=True) == (["x.html"], 0, True)
    assert not (tmp_path / "new").exists()
    assert write_files(str(dest), {"x.html": "<p>"}) == (["x.html"], 0, True)
    assert oct(dest.stat().st_mode & 0o777) == "0o755" and oct((tmp_path / "new").stat().st_mode & 0o777) == "0o755"
    # no files (plan.yml with every host refused): no folder either
    assert write_files(str(tmp_path / "none"), {}) == ([], 0, False) and not (tmp_path / "none").exists()


def test_a_file_behind_a_symlink_is_written_at_its_target(tmp_path):
    target = tmp_path / "elsewhere.json"
    target.write_text("old")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "fleet.json").symlink_to(target)
    write_files(str(tmp_path / "out"), {"fleet.json": "new"})
    assert (tmp_path / "out" / "fleet.json").is_symlink() and target.read_text() == "new"


def test_names_that_are_not_one_plain_name_are_refused():
    assert name_errors(["gpu-01.json", "index.html", "gpu_a.b.config.yaml"]) == []
    assert len(name_errors(["../x", "a/b", ".", "..", "-rf", "", "x" * 256, 3])) == 8
