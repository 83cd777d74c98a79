# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One resolver for every output folder: relative to where ansible-playbook runs, and used by every playbook and role
that writes into one."""
from __future__ import annotations

import glob
import os
import re

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.paths import output_dir

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


def test_a_relative_folder_is_relative_to_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert output_dir("report/roll") == str(tmp_path.resolve() / "report" / "roll")
    assert output_dir("report/roll", cwd="/srv") == "/srv/report/roll"
    assert output_dir("/abs/../x") == "/x"
    assert output_dir("~/r") == os.path.join(os.path.expanduser("~"), "r")
    assert output_dir("") == "" and output_dir(None) == "" and output_dir("  ") == ""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert output_dir("link/x") == str((tmp_path / "real").resolve() / "x")


@pytest.mark.parametrize("bad", [3, ["a"], "a\x00b"])
def test_what_is_not_a_folder_is_refused(bad):
    with pytest.raises(ValueError):
        output_dir(bad)


def test_every_playbook_and_role_resolves_output_folders_with_the_one_resolver():
    """No YAML of the collection resolves a path itself (expanduser, realpath), and every output variable that reaches
    a task's path does so through maitred.rke2_numa.output_dir (the roll's fleet.json went to the raw relative path)."""
    offenders = []
    files = glob.glob(os.path.join(REPO, "playbooks", "**", "*.yml"), recursive=True) + \
        glob.glob(os.path.join(REPO, "roles", "**", "*.yml"), recursive=True)
    for path in files:
        with open(path) as f:
            for number, line in enumerate(f, 1):
                if re.search(r"\b(expanduser|realpath)\b", line):
                    offenders.append("%s:%d resolves a path itself" % (os.path.relpath(path, REPO), number))
                for found in re.finditer(r"\b(rke2_numa_(?:report|plan)_dir|rke2_numa_report_from)\b([^}]*)", line):
                    rest = found.group(2)
                    if re.match(r"\s*(\|\s*default\([^)]*\)\s*)?\|\s*(length|maitred\.rke2_numa\.output_dir|map\('maitred\.rke2_numa\.output_dir'\))", rest):
                        continue   # resolved, or asked whether it is set
                    if re.match(r"\s*\|\s*default\([^)]*\)\)\s*else\b", rest):
                        continue   # (x | default('')) else ...: whether it is set
                    if "{{" not in line or line.lstrip().startswith("#"):
                        continue
                    offenders.append("%s:%d %s" % (os.path.relpath(path, REPO), number, line.strip()))
    assert offenders == []
