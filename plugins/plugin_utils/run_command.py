# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One command (kubectl) run where an action's task runs, with ansible.builtin.command's answer.

On a remote host (or in an async task, or with a become to another user) the command goes through
``ansible.builtin.command``, as it always did. Where the task runs on the controller itself as the user running
Ansible - a ``local`` connection, which is where kubectl runs when ``rke2_numa_kubectl_host`` is the controller (no
server group, an execution environment), with no become or a become to that same user, which ansible-core skips - the
action starts the program itself: the same argv and stdin, the same environment (the controller's, the task's
``environment`` on top), the same answer, and no module process in between (a module round trip costs about 0.25 s of
CPU on the controller, most of a kubectl read; a roll makes dozens).

What ``ansible.builtin.command`` does, and the direct path does the same (ansible-core 2.21,
lib/ansible/modules/command.py ``main`` and lib/ansible/module_utils/basic.py ``AnsibleModule.run_command``):
- check mode: the command is not run; ``skipped``, ``rc`` 0, "Command would have run if not in check mode";
- each argv item has ``~`` and ``$VARS`` expanded (``expand_argument_vars``, on by default), no shell;
- ``stdin`` gets a newline added unless ``stdin_add_newline`` is false;
- ``stdout`` and ``stderr`` lose their trailing newlines (``strip_empty_ends``); ``stdout_lines``/``stderr_lines``
  are added as ActionBase._parse_returned_data adds them;
- a program that cannot start: failed, ``rc`` its errno, "Error executing command." (the OS error in ``exception``);
- rc != 0: "The command exited with a non-zero return code.".

A ``--kubeconfig env:K8S_AUTH`` (AWX's Kubernetes bearer-token credential, plugin_utils/kube_credential.py) runs on the
controller only - the credential is in its environment: the kubeconfig is written from it for the call and removed.
"""

from __future__ import annotations

import os
import pwd
import re
import subprocess

from ansible import constants as C

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import kube_credential

COMMAND = "ansible.builtin.command"
NONZERO = "The command exited with a non-zero return code."
CHECK_MODE = "Command would have run if not in check mode"
EXEC_ERROR = "Error executing command."


def runs_here(action):
    """Whether ``action``'s task runs on the controller as this process's user: a local connection, not async (an
    async task's module outlives the worker), and no become that would switch user - ansible-core's own rule for when
    a command is wrapped in become (lib/ansible/plugins/action/__init__.py ``ActionBase._low_level_execute_command``:
    become, unless become_user is the connection's user and DEFAULT_BECOME_ALLOW_SAME_USER is off)."""
    connection = getattr(action, "_connection", None)
    if getattr(connection, "transport", None) != "local" or getattr(action._task, "async_val", 0):
        return False
    if not getattr(connection, "become", None):
        return True
    ruser, buser = action._get_remote_user(), action.get_become_option("become_user")
    return not (C.BECOME_ALLOW_SAME_USER or buser != ruser or not any((ruser, buser)))


def command_answer(rc, stdout, stderr, argv, msg=None):
    """ansible.builtin.command's result for a command that ran (or could not start: ``msg``)."""
    out = _text(stdout).rstrip("\r\n")
    err = _text(stderr).rstrip("\r\n")
    answer = {"changed": True, "rc": rc, "cmd": list(argv), "stdout": out, "stderr": err,
              "stdout_lines": out.splitlines(), "stderr_lines": err.splitlines(), "msg": ""}
    if msg is not None:
        answer.update(failed=True, changed=False, msg=msg)
    elif rc != 0:
        answer.update(failed=True, msg=NONZERO)
    return answer


def _text(data):
    return data.decode("utf-8", "surrogateescape") if isinstance(data, bytes) else (data or "")


_VARIABLE = re.compile(r"\$(\w+|\{[^}]*\})", re.ASCII)   # posixpath.expandvars's


def expand(arg, env):
    """``os.path.expanduser(os.path.expandvars(arg))`` as the module process does it - its environment is ``env``
    (the task's ``environment`` included), not this process's."""
    def variable(match):
        name = match.group(1).strip("{}") if match.group(1).startswith("{") else match.group(1)
        return env.get(name, match.group(0))
    arg = _VARIABLE.sub(variable, arg) if "$" in arg else arg
    if not arg.startswith("~"):
        return arg
    user, sep, rest = arg[1:].partition("/")
    try:
        home = (env.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir) if not user else pwd.getpwnam(user).pw_dir
    except KeyError:
        return arg
    return (home.rstrip("/") or "/") + sep + rest


def run_here(argv, environment, stdin=None, stdin_add_newline=True):
    """Run ``argv`` in this process's environment with ``environment`` on top, as ansible.builtin.command would."""
    env = dict(os.environ)
    env.update({str(k): str(v) for k, v in (environment or {}).items()})
    expanded = [expand(str(a), env) for a in argv if a is not None]
    data = None
    if stdin:
        data = (stdin + ("\n" if stdin_add_newline else "")).encode("utf-8", "surrogateescape")
    try:
        done = subprocess.run(expanded, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=None if data is not None else subprocess.DEVNULL, env=env, check=False)
    except OSError as e:
        return dict(command_answer(e.errno or 1, b"", b"", expanded, msg=EXEC_ERROR), exception=str(e))
    return command_answer(done.returncode, done.stdout, done.stderr, expanded)


def run_command(action, task_vars, argv, stdin=None, stdin_add_newline=True, always=False):
    """``argv`` run where ``action``'s task runs; the answer ansible.builtin.command gives. ``always``: run in check
    mode too - a read, as a task with ``check_mode: false`` runs it (the module is told it is not in check mode)."""
    check = bool(action._task.check_mode)
    uses_env = kube_credential.FROM_ENV in [str(a) for a in argv]
    if uses_env and not runs_here(action):
        return {"failed": True, "changed": False, "cmd": list(argv), "msg": "rke2_numa_kubeconfig %s: the credential is in the "
                "controller's environment, so kubectl runs there only (rke2_numa_kubectl_host localhost), not on %s"
                % (kube_credential.FROM_ENV, action._task.delegate_to or task_vars.get("inventory_hostname"))}
    if not runs_here(action):
        command = {"argv": list(argv)}
        if stdin is not None:
            command["stdin"] = stdin
            command["stdin_add_newline"] = stdin_add_newline
        action._task.check_mode = check and not always
        try:
            return action._execute_module(module_name=COMMAND, module_args=command, task_vars=task_vars)
        finally:
            action._task.check_mode = check
    if check and not always:
        return {"changed": False, "skipped": True, "rc": 0, "stdout": "", "stderr": "", "msg": CHECK_MODE}
    environment = {}
    action._compute_environment_string(environment)
    if not uses_env:
        return run_here(argv, environment, stdin, stdin_add_newline)
    try:
        with kube_credential.argv_with_credential(argv, dict(os.environ, **environment)) as ran:
            answer = run_here(ran, environment, stdin, stdin_add_newline)
    except kube_credential.CredentialError as e:
        return {"failed": True, "changed": False, "cmd": list(argv), "msg": str(e)}
    return dict(answer, cmd=list(argv))   # the argv as given: the kubeconfig written for the call is gone
