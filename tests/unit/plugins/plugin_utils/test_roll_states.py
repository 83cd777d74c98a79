# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Roll states are names decided in one place: rolling.yml hands over the step and what it gave."""
from __future__ import annotations

import glob
import os
import re

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.filter.roll import FilterModule
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import roll_states as rs

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
FAILED_TASK = {"failed": True, "msg": "drain of gpu-a failed"}


@pytest.mark.parametrize("step, failed, actions, stopped, state", [
    ("window_closed", None, None, False, rs.WINDOW),
    ("slot_refused", None, None, False, rs.NO_SLOT),
    ("slot_refused", FAILED_TASK, None, False, rs.FAILED),
    ("node_begun", None, None, False, rs.STARTED),
    ("fixed", None, None, False, rs.FIXED_IN_PLACE),
    ("fixed", FAILED_TASK, None, False, rs.FAILED),
    ("taken_out", FAILED_TASK, ["drain", "reboot"], False, rs.FAILED),
    ("converged", None, ["drain", "rke2_config", "restart"], False, rs.RECONFIGURED),
    ("converged", None, ["drain", "boot_params", "reboot"], False, rs.REBOOTED),
    ("converged", FAILED_TASK, ["drain", "boot_params", "reboot"], True, rs.PENDING_REBOOT),
    ("converged", FAILED_TASK, ["drain", "boot_params", "reboot"], False, rs.FAILED),
])
def test_each_step_ends_in_one_state(step, failed, actions, stopped, state):
    assert rs.roll_state(step, failed, actions or (), stopped) == state
    assert FilterModule().filters()["roll_state"](step, failed, actions, stopped) == state


def test_a_pending_reboot_is_never_read_from_a_message():
    """The chain's own words name it, but only the fact converge_node.yml sets makes it pending_reboot: a reboot that
    failed with a message that happens to start the same way is a failure."""
    msg = {"failed": True, "msg": "pending reboot: the plan's kernel args are written but not booted"}
    assert rs.roll_state("converged", msg, ["reboot"], stopped_for_reboot=False) == rs.FAILED
    assert rs.roll_state("converged", msg, ["reboot"], stopped_for_reboot=True) == rs.PENDING_REBOOT


@pytest.mark.parametrize("step", ["taken_out", "converge", "", "failed"])
def test_a_step_that_is_not_an_end_or_not_a_step_is_refused(step):
    with pytest.raises(rs.RollStateError):
        rs.roll_state(step)
    with pytest.raises(AnsibleFilterError):
        FilterModule().filters()["roll_state"](step)


def test_the_states_are_the_ones_the_outcome_and_its_summary_know():
    assert set(rs.STATES) == set(rs.DONE) | {rs.PENDING_REBOOT, rs.FAILED} | (set(rs.REMAINING) - {None})
    assert set(rs.STEPS.values()) - {None} <= set(rs.STATES)


def _yaml_files():
    for pattern in ("playbooks/**/*.yml", "roles/**/*.yml", "extensions/molecule/**/*.yml"):
        yield from glob.glob(os.path.join(REPO, pattern), recursive=True)


def _set_facts(node):
    if isinstance(node, dict):
        facts = node.get("ansible.builtin.set_fact") or node.get("set_fact")
        if isinstance(facts, dict):
            yield facts
        for value in node.values():
            yield from _set_facts(value)
    elif isinstance(node, list):
        for value in node:
            yield from _set_facts(value)


def test_yaml_never_writes_or_compares_a_state():
    """Every rke2_numa_roll_result a play sets comes from the roll_state filter, and no YAML compares one."""
    states = "|".join(re.escape(s) for s in rs.STATES)
    compared = re.compile(r"rke2_numa_roll_result\s*(==|!=|in\b|is\b)|['\"](%s)['\"]\s*(==|!=|in\b)" % states)
    written, seen = [], 0
    for path in _yaml_files():
        with open(path) as f:
            text = f.read()
        assert not compared.search(text), "%s compares a roll state" % os.path.relpath(path, REPO)
        for facts in _set_facts(yaml.safe_load(text)):
            if "rke2_numa_roll_result" in facts:
                seen += 1
                if "maitred.rke2_numa.roll_state" not in str(facts["rke2_numa_roll_result"]):
                    written.append((os.path.relpath(path, REPO), facts["rke2_numa_roll_result"]))
    assert seen >= 9, "rolling.yml and tasks/window.yml set the result at each end of a node's part"
    assert not written, written
