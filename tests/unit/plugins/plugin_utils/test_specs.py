# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The variables as the roles' argument specs declare them: read once, bounds and choices included."""
from __future__ import annotations

import glob
import json
import os

import jsonschema
import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import kubelet_state, playbook_inputs, roll_lease, specs

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


def _schema():
    """ansible-lint's schema of meta/argument_specs.yml (make lint checks it too; this names the file)."""
    import ansiblelint
    with open(os.path.join(os.path.dirname(ansiblelint.__file__), "schemas", "role-arg-spec.json")) as f:
        return json.load(f)


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(REPO, "roles", "*", "meta", "argument_specs.yml"))))
def test_every_spec_is_valid_as_ansible_lint_reads_it(path):
    """The bounds are a sentence of the description, not a key of ours: every schema takes the specs as they are."""
    with open(path) as f:
        jsonschema.validate(yaml.safe_load(f), _schema())


def test_the_bounds_are_read_from_their_sentence_and_hold_their_default():
    assert specs.description_bounds({"description": ["Seconds.", "From 1 to 14400."]}) == (1, 14400)
    assert specs.description_bounds({"description": "At most 1440."}) == (None, 1440)
    assert specs.description_bounds({"description": ["from 1 to 2 s, roughly."]}) == (None, None)
    bounded = [name for name in specs.declared() if specs.bounds(name) != (None, None)]
    assert len(bounded) >= 11
    for name in bounded:
        spec = specs.option(name)
        low, high = specs.bounds(name)
        assert spec["type"] in ("int", "raw"), name
        assert low is None or high is None or low <= high, name
        value = spec.get("default")
        if name == "rke2_numa_roll_lease_seconds":
            assert value == 0, "0: computed from the timeouts (its description says so)"
        elif isinstance(value, int):
            assert (low is None or low <= value) and (high is None or value <= high), (name, value, low, high)


def test_one_declaration_owns_each_variable():
    assert specs.owner("rke2_numa_drain_timeout") == "drain"
    assert specs.owner("rke2_numa_plan") == "boot_params"   # set by the plan role at run time: declared where read
    assert specs.owner("rke2_numa_serial") == "common"
    assert specs.choices("rke2_numa_roll_order") == ("idle_first", "sorted")
    assert specs.bounds("rke2_numa_drain_timeout") == (1, 14400)
    with pytest.raises(KeyError):
        specs.option("rke2_numa_no_such_thing")


def test_the_rules_read_their_bounds_and_choices_from_the_specs(monkeypatch):
    """A bound or a choice changed in the spec changes what the input check accepts - it is not written again."""
    assert playbook_inputs.input_errors("rolling", {"rke2_numa_drain_timeout": 14400}, {}, [], 0) == []
    assert playbook_inputs.input_errors("rolling", {"rke2_numa_roll_order": "sorted"}, {}, [], 0) == []
    drain = dict(specs.option("rke2_numa_drain_timeout"), description=["Seconds.", "From 1 to 600."])
    order = dict(specs.option("rke2_numa_roll_order"), choices=["idle_first"])
    table = dict(specs._declarations(), rke2_numa_drain_timeout=("drain", drain), rke2_numa_roll_order=("common", order))
    monkeypatch.setattr(specs, "_declarations", lambda: table)
    assert playbook_inputs.input_errors("rolling", {"rke2_numa_drain_timeout": 14400}, {}, [], 0) == [
        "rke2_numa_drain_timeout 14400 must be an integer from 1 to 600 s (0 would let kubectl drain wait forever)"]
    assert playbook_inputs.input_errors("rolling", {"rke2_numa_roll_order": "sorted"}, {}, [], 0) == [
        "rke2_numa_roll_order 'sorted' must be one of idle_first"]


def test_the_lease_reads_its_bounds_and_the_timeouts_defaults_from_the_specs():
    assert (roll_lease.LEASE_SECONDS_MIN, roll_lease.LEASE_SECONDS_MAX) == specs.bounds("rke2_numa_roll_lease_seconds")
    assert dict(roll_lease.LEASE_STRETCH)["rke2_numa_reboot_timeout"] == specs.default("rke2_numa_reboot_timeout") == 1800


@pytest.mark.parametrize("values, errors", [
    ({"rke2_numa_kubelet_timeout": 180, "rke2_numa_health_window": 15, "rke2_numa_reboot_timeout": 1800, "rke2_numa_hugepages_retries": 5}, []),
    ({"rke2_numa_kubelet_timeout": "0", "rke2_numa_health_window": 15},
     ["rke2_numa_kubelet_timeout=0 (10 to 3600 s, at least the window)",
      "rke2_numa_health_window=15 (more than RKE2's 5 s restart cycle, at most rke2_numa_kubelet_timeout)"]),
    ({"rke2_numa_reboot_timeout": "-5", "rke2_numa_hugepages_retries": "0"},
     ["rke2_numa_reboot_timeout=-5 (60 to 86400 s)", "rke2_numa_hugepages_retries=0 (1 to 100)"]),
    ({"rke2_numa_kubelet_timeout": 180, "rke2_numa_health_window": 5},
     ["rke2_numa_health_window=5 (more than RKE2's 5 s restart cycle, at most rke2_numa_kubelet_timeout)"]),
    ({"rke2_numa_kubelet_timeout": 20, "rke2_numa_health_window": 30},
     ["rke2_numa_health_window=30 (more than RKE2's 5 s restart cycle, at most rke2_numa_kubelet_timeout)"]),
    ({"rke2_numa_kubelet_timeout": "100000000000000000000"}, ["rke2_numa_kubelet_timeout=100000000000000000000 (10 to 3600 s, at least the window)"]),
])
def test_the_reset_waits_are_held_to_their_specs_and_to_rke2_s_restart_cycle(values, errors):
    assert kubelet_state.reset_wait_errors(values) == errors
