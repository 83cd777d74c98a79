# -*- coding: utf-8 -*-
"""run_command: on the controller itself the command runs here, with the task's environment, skipped in check mode;
elsewhere (and async) it is ansible.builtin.command (tests/integration/plugins/action/test_kubectl_action.py compares
the answers with the module's own)."""

from __future__ import annotations

import os
import types

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import run_command as rc


def test_the_task_environment_reaches_the_program_and_its_arguments(tmp_path):
    here = rc.run_here(["/bin/sh", "-c", "echo $RKE2_NUMA_T; echo \"$1\"", "sh", "$RKE2_NUMA_T/x"], {"RKE2_NUMA_T": "from-task"})
    assert here["stdout_lines"] == ["from-task", "from-task/x"]


def test_expand_is_expandvars_then_expanduser_over_the_given_environment():
    env = {"HOME": "/home/op", "A": "1"}
    assert rc.expand("~/k.yaml", env) == "/home/op/k.yaml"
    assert rc.expand("~", env) == "/home/op"
    assert rc.expand("$A-${A}-$B-${B}", env) == "1-1-$B-${B}"
    assert rc.expand("~root/x", env) == os.path.expanduser("~root/x")
    assert rc.expand("x~/y", env) == "x~/y"


def fake_action(transport, check_mode=False, async_val=0, environment=None, become=False, become_user="root", remote_user="root"):
    ran = []
    task = types.SimpleNamespace(check_mode=check_mode, async_val=async_val)

    def execute(module_name, module_args, task_vars):
        ran.append((module_name, module_args))
        return {"rc": 0, "stdout": "from the module"}

    def compute(out):
        out.clear()
        out.update(environment or {})
        return ""
    action = types.SimpleNamespace(_connection=types.SimpleNamespace(transport=transport, become=become), _task=task,
                                   _execute_module=execute, _compute_environment_string=compute,
                                   _get_remote_user=lambda: remote_user, get_become_option=lambda name: {"become_user": become_user}[name])
    return action, ran


def test_a_remote_or_async_task_or_a_become_to_another_user_runs_ansible_builtin_command_with_the_same_arguments():
    for action, ran in (fake_action("ssh"), fake_action("local", async_val=60), fake_action("local", become=True, become_user="nobody"),
                        fake_action("local", become=True, become_user="root", remote_user="op")):
        assert rc.run_command(action, {}, ["kubectl", "get"], "x", stdin_add_newline=False) == {"rc": 0, "stdout": "from the module"}
        assert ran == [("ansible.builtin.command", {"argv": ["kubectl", "get"], "stdin": "x", "stdin_add_newline": False})]
    action, ran = fake_action("podman")
    rc.run_command(action, {}, ["kubectl"])
    assert ran == [("ansible.builtin.command", {"argv": ["kubectl"]})]


def test_on_the_controller_it_runs_here_with_the_task_environment_and_skips_in_check_mode():
    action, ran = fake_action("local", environment={"RKE2_NUMA_T": "yes"})
    answer = rc.run_command(action, {}, ["/bin/sh", "-c", "echo $RKE2_NUMA_T"])
    assert ran == [] and answer["rc"] == 0 and answer["stdout"] == "yes"
    action, ran = fake_action("local", check_mode=True)
    answer = rc.run_command(action, {}, ["/bin/sh", "-c", "touch should-not-exist"])
    assert ran == [] and answer["skipped"] and answer["rc"] == 0 and answer["msg"] == rc.CHECK_MODE
    assert not os.path.exists("should-not-exist")


def test_a_become_ansible_core_skips_runs_here(monkeypatch):
    """ansible-core wraps a command in become unless become_user is the connection's user (and
    DEFAULT_BECOME_ALLOW_SAME_USER is off): then it runs here; with the setting on, through the module."""
    action, ran = fake_action("local", become=True, become_user="op", remote_user="op")
    assert rc.runs_here(action)
    monkeypatch.setattr(rc.C, "BECOME_ALLOW_SAME_USER", True)
    assert not rc.runs_here(action)
