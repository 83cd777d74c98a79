# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files generated from the roles' argument specs (scripts/gen_specs.py, make specs) are what it writes: a
variable, its default, bounds or choices changed in a spec and not regenerated fails here, naming the file."""

from __future__ import annotations

import importlib.util
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _script():
    spec = importlib.util.spec_from_file_location("gen_specs", os.path.join(REPO, "scripts", "gen_specs.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _script()
OUTPUTS = GEN.outputs()


@pytest.mark.parametrize("rel", sorted(OUTPUTS))
def test_the_generated_file_is_up_to_date(rel):
    with open(os.path.join(REPO, rel), encoding="utf-8") as f:
        assert f.read() == OUTPUTS[rel], "%s is stale: run make specs" % rel


def test_every_role_s_defaults_and_readme_are_generated():
    roles = sorted(os.listdir(os.path.join(REPO, "roles")))
    assert {os.path.join("roles", r, "README.md") for r in roles} <= set(OUTPUTS)
    with_defaults = {r for r in roles if os.path.exists(os.path.join(REPO, "roles", r, "defaults", "main.yml"))}
    assert {os.path.join("roles", r, "defaults", "main.yml") for r in with_defaults} <= set(OUTPUTS)


def test_a_changed_spec_changes_the_generated_files(monkeypatch):
    """The generator reads the spec, not a copy: a new default and bound show in the defaults and the tables."""
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import specs
    options = dict(specs.role_options("drain"))
    options["rke2_numa_drain_timeout"] = dict(options["rke2_numa_drain_timeout"], default=900,
                                              description=["Seconds `kubectl drain` may take.", "From 1 to 7200."])
    original = specs.role_options
    monkeypatch.setattr(specs, "role_options", lambda role, entry=None: options if role == "drain" and entry is None
                        else original(role, entry))
    assert "rke2_numa_drain_timeout: 900\n" in GEN.defaults("drain")
    assert "| `rke2_numa_drain_timeout` | `900` | Seconds `kubectl drain` may take. From 1 to 7200. |" in GEN.role_readme_section("drain")
