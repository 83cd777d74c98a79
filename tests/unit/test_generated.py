# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files generated from the roles' argument specs (scripts/gen_specs.py, make specs) are what it writes: a
variable, its default, bounds or choices changed in a spec and not regenerated fails here, naming the file."""

from __future__ import annotations

import glob
import importlib.util
import os
import re

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import specs

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


def test_the_kubectl_verbs_are_documented_from_the_table(monkeypatch):
    """The kubectl module's verb option is VERBS': each verb's requests, options and whether it writes; a request
    declared there is documented (the generator reads the table, not a copy)."""
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import kubectl
    text = " ".join(GEN.kubectl_verbs_fragment().split())
    assert "C(drain) - a write, skipped in check mode;" in text and "C(wait) - a read, run in check mode;" in text
    assert "C(create) C(pods/eviction) in every" in text
    monkeypatch.setitem(kubectl.VERBS, "logs", kubectl.VERBS["logs"]._replace(sends=(kubectl.Sends("patch", "pod"),)))
    assert "C(logs) - a write, skipped in check mode; objects: O(kind) and O(names); options: C(--container=); sends C(patch) C(pods)." \
        in " ".join(GEN.kubectl_verbs_fragment().split())


# Where the collection's code and docs live (the specs themselves, the generated files and the tests are not looked at).
SOURCES = ("plugins/**/*.py", "plugins/**/*.yml", "playbooks/**/*.yml", "roles/*/tasks/**/*.yml", "roles/*/templates/**/*",
           "roles/*/vars/**/*.yml", "meta/*.yml")
_LIST = re.compile(r"[\[(]([^\[\]()]*)[\])]")
# Where the same words are another fact: (file, variable) -> why.
OTHER_FACTS = {
    ("plugins/plugin_utils/kubelet_rules.py", "rke2_numa_cpu_manager_policy"): "the kubelet's own policy names (its refusal rule)",
    ("plugins/plugin_utils/kubelet_rules.py", "rke2_numa_topology_manager_policy"): "the kubelet's own policy names",
    ("plugins/plugin_utils/kubelet_rules.py", "rke2_numa_topology_manager_scope"): "the kubelet's own scope names",
    ("plugins/module_utils/kernel_args.py", "rke2_numa_hugepages_size"): "an example in the kernel's size syntax (2M, 1G)",
    ("plugins/modules/boot_params.py", "rke2_numa_labels_state"): "the module's own state option (present, absent)",
}


def _source_files():
    found = set()
    for pattern in SOURCES:
        found.update(os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, pattern), recursive=True) if os.path.isfile(p))
    return sorted(found - set(OUTPUTS))


def _spec_facts():
    """(variable, its choices (2 or more), its bounds (low, high)) of every declared variable."""
    facts = []
    for name in sorted(specs.declared()):
        spec = specs.option(name)
        choices = [str(c) for c in spec.get("choices") or []]
        facts.append((name, choices if len(choices) > 1 else [], specs.bounds(name)))
    return facts


def test_no_choice_or_bound_of_a_spec_is_written_again_outside_the_spec_and_the_generated_files():
    """A variable's choices (a list or tuple holding all of them) and bounds (its max, on a line that names the
    variable or the next three) are read from its spec, never restated: restated, they drift (rancher.CONFIG_MODES,
    roll_lease.MAX_UNAVAILABLE_MAX and playbook_inputs' hand-written bounds did)."""
    facts = _spec_facts()
    found = []
    for rel in _source_files():
        with open(os.path.join(REPO, rel), encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        for number, line in enumerate(lines, 1):
            items = [set(re.sub(r"[\"'\s]", "", item) for item in m.group(1).split(",")) for m in _LIST.finditer(line)]
            for name, choices, (low, high) in facts:
                if (rel, name) in OTHER_FACTS:
                    continue
                if choices and any(set(choices) <= group for group in items):
                    found.append("%s:%d: the choices of %s" % (rel, number, name))
                if high is not None and high >= 100 and name in line:
                    near = "\n".join(lines[number - 1:number + 3])
                    if re.search(r"(?<![\w.])%d(?![\w.])" % high, near):
                        found.append("%s:%d: the bound %d of %s" % (rel, number, high, name))
    assert not found, "read them from plugin_utils/specs.py (or generate the file with scripts/gen_specs.py): %s" % found
