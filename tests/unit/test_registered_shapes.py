# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One shape per registered name: a variable the collection's plays and roles register comes from one module
everywhere, so a filter that reads it (kubelet_reset_reasons, verify_plan ...) never meets a second shape
under the same name (__rke2_numa_state was node_state_info's result in check.yml and kubelet_state_info's in
decide.yml)."""

from __future__ import annotations

import collections
import glob
import os

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# task keys that are not the action
_NOT_ACTIONS = {"name", "register", "when", "vars", "loop", "loop_control", "delegate_to", "run_once", "become", "become_user",
                "changed_when", "failed_when", "until", "retries", "delay", "check_mode", "no_log", "ignore_errors", "tags",
                "environment", "args", "notify", "listen", "timeout", "throttle", "any_errors_fatal", "diff", "delegate_facts",
                "with_items", "with_dict", "async", "poll", "ignore_unreachable", "module_defaults", "debugger", "collections"}


# actions whose result is another module's, as they return it: node_check runs node_state_info on the host and returns
# its result (plans and judges on the controller besides, setting facts)
_SAME_RESULT = {"maitred.rke2_numa.node_check": "maitred.rke2_numa.node_state_info"}


def _registers(node, path, out):
    if isinstance(node, dict):
        if isinstance(node.get("register"), str):
            actions = sorted(k for k in node if k not in _NOT_ACTIONS)
            action = actions[0] if len(actions) == 1 else "?%s" % actions
            out[node["register"]].add((_SAME_RESULT.get(action, action), path))
        for value in node.values():
            _registers(value, path, out)
    elif isinstance(node, list):
        for value in node:
            _registers(value, path, out)


def registered(patterns=("playbooks/**/*.yml", "roles/**/*.yml")):
    out = collections.defaultdict(set)
    for pattern in patterns:
        for path in glob.glob(os.path.join(REPO, pattern), recursive=True):
            with open(path) as f:
                _registers(yaml.safe_load(f), os.path.relpath(path, REPO), out)
    return out


def test_each_registered_name_has_one_source():
    out = registered()
    assert "__rke2_numa_state" in out and len(out) > 20
    mixed = {name: sorted(where) for name, where in out.items() if len({action for action, dummy in where}) > 1}
    assert not mixed, mixed


def test_the_node_state_is_node_state_info_s_result():
    assert {action for action, dummy in registered()["__rke2_numa_state"]} == {"maitred.rke2_numa.node_state_info"}
    assert {path for dummy, path in registered()["__rke2_numa_state"]} == {"playbooks/tasks/node_check.yml"}
