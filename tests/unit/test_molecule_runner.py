# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/molecule_test.py: the test sequences start at create, so what an interrupted run left - a scenario's
containers or a Molecule state that says they were created - is what makes the runner destroy first; another
scenario's containers and a destroyed state are not."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts"))
import molecule_test  # noqa: E402  pylint: disable=wrong-import-position,import-error


def test_a_scenario_s_own_containers_are_leftovers_and_another_s_are_not(monkeypatch, tmp_path):
    monkeypatch.setattr(molecule_test, "REPO", str(tmp_path))
    names = ["rke2-numa-interop", "rke2-numa-rolling-n1", "rke2-numa-rollback", "rke2-numa-rolling", "other"]
    assert molecule_test.leftovers("rolling", names) == ["rke2-numa-rolling-n1", "rke2-numa-rolling"]
    assert molecule_test.leftovers("interrupted", names) == []
    assert molecule_test.leftovers("roll", names) == []


def test_a_state_that_says_created_is_a_leftover_and_a_destroyed_one_is_not(monkeypatch, tmp_path):
    monkeypatch.setattr(molecule_test, "REPO", str(tmp_path))
    folder = tmp_path / ".build" / "molecule" / "default"
    assert molecule_test.state_dir("default") == str(folder)
    folder.mkdir(parents=True)
    (folder / "state.yml").write_text("converged: false\ncreated: false\ndriver: podman\n")
    assert molecule_test.leftovers("default", []) == []
    (folder / "state.yml").write_text("converged: true\ncreated: true\ndriver: podman\n")
    assert molecule_test.leftovers("default", []) == ["state.yml: created"]
