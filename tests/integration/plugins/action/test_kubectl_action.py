# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubectl action where kubectl runs on the controller (plugin_utils/run_command.py): the answer is the one
ansible.builtin.command gives (a real module run is the reference), kubectl runs as the user running Ansible whatever
the play's become; in check mode a read verb runs, a write only where the task says check_mode=false."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import run_command as rc
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import ADMIN_TOKEN, KUBECTL, Cluster, needs_kubectl

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
BIN = os.path.dirname(sys.executable)
# every task's result as JSON (tests/fixtures/callback: not ansible.posix.json, which only make molecule installs)
RESULTS_JSON = {"ANSIBLE_CALLBACK_PLUGINS": os.path.join(REPO, "tests", "fixtures", "callback"), "ANSIBLE_STDOUT_CALLBACK": "results_json"}


def module_answer(tmp_path, argv, stdin=None, stdin_add_newline=True):
    """What ansible.builtin.command itself returns (ansible -m, a local connection; the json callback)."""
    args = {"argv": argv}
    if stdin is not None:
        args.update(stdin=stdin, stdin_add_newline=stdin_add_newline)
    out = subprocess.run([os.path.join(BIN, "ansible"), "localhost", "-i", "localhost,", "-c", "local", "-m", "ansible.builtin.command",
                          "-a", json.dumps(args), "-e", "ansible_python_interpreter=" + sys.executable],
                         capture_output=True, text=True, env=dict(os.environ, ANSIBLE_LOAD_CALLBACK_PLUGINS="1", **RESULTS_JSON),
                         check=False, cwd=str(tmp_path))
    return json.loads(out.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]


KEYS = ("rc", "stdout", "stderr", "stdout_lines", "stderr_lines", "failed", "msg")


@pytest.mark.parametrize("argv, stdin, newline", [
    (["/bin/sh", "-c", "printf 'a\\nb\\n\\n'; printf 'oops\\n' >&2"], None, True),
    (["/bin/sh", "-c", "cat; exit 3"], "line one\nline two", True),
    (["/bin/sh", "-c", "od -c | head -3"], "no newline added", False),
    (["/bin/echo", "~", "$HOME/x", "${NOT_SET_ANYWHERE}", "~nosuchuser/y"], None, True),
    (["/nonexistent/kubectl", "get", "nodes"], None, True),
])
def test_a_command_run_here_answers_as_ansible_builtin_command(tmp_path, argv, stdin, newline):
    module = module_answer(tmp_path, argv, stdin, newline)
    here = rc.run_here(argv, {}, stdin, newline)
    assert {k: here.get(k) for k in KEYS} == {k: module.get(k) for k in KEYS}


def play(cluster, tmp_path, tasks, *extra, module_defaults=None, environ=None, **play_vars):
    """A play on localhost (a local connection) with become, to this same user unless told; sudo is /bin/false, so a
    command ansible-core wraps in become fails."""
    book = [{"hosts": "localhost", "gather_facts": False, "become": True, "module_defaults": module_defaults or {},
             "vars": dict({"ansible_connection": "local", "ansible_become_exe": "/bin/false", "ansible_become_user": getpass.getuser(),
                           "ansible_python_interpreter": sys.executable,
                           "rke2_numa_kubectl": KUBECTL, "rke2_numa_kubeconfig": cluster.kubeconfig}, **play_vars),
             "tasks": tasks}]
    path = tmp_path / "play.yml"
    path.write_text(yaml.safe_dump(book))
    env = dict(cluster.env, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="false",
               **dict(RESULTS_JSON, **(environ or {})))
    out = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", str(path)] + list(extra), env=env,
                         capture_output=True, text=True, check=False)
    assert out.stdout.startswith("{"), out.stdout + out.stderr
    return [t["hosts"]["localhost"] for t in json.loads(out.stdout)["plays"][0]["tasks"]]


@pytest.fixture
def cluster(tmp_path):
    server = Cluster(tmp_path)
    server.add_node("gpu-a", ready=True, labels={"gpu": "true"})
    yield server
    assert server.stop() == 0


def kubectl_task(**args):
    return {"maitred.rke2_numa.kubectl": args, "delegate_to": "localhost", "ignore_errors": True}


@needs_kubectl
def test_kubectl_on_the_controller_runs_here_and_answers_as_the_module_did(cluster, tmp_path):
    """No module process (a become to the same user is one ansible-core skips); a read, a write from stdin, a program
    that is not there."""
    ns = json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "made-here"}})
    got, made, seen, missing = play(cluster, tmp_path, [
        kubectl_task(verb="get", kind="node", names=["gpu-a"], output="json"),
        kubectl_task(verb="create", raw="/api/v1/namespaces", stdin=ns),
        dict(kubectl_task(verb="get", kind="namespace", names=["made-here"], output="json"), check_mode=False),
        kubectl_task(kubectl="/nonexistent/kubectl", verb="get", kind="node", names=["gpu-a"])])
    assert not got.get("failed"), got
    assert got["object"]["metadata"]["name"] == "gpu-a" and got["rc"] == 0 and got["requests"]
    assert not made.get("failed") and made["changed"], made.get("msg")
    assert seen["object"]["metadata"]["name"] == "made-here"
    assert missing["failed"] and missing["rc"] == 2 and missing["msg"], missing


@needs_kubectl
def test_in_check_mode_a_read_runs_and_a_write_never_unless_the_task_says_check_mode_false(cluster, tmp_path):
    """plugin_utils/kubectl.py VERBS: a verb whose requests are all reads runs in check mode (no check_mode=false on
    the task), a write is skipped - and runs where the task says check_mode=false, as ansible.builtin.command does."""
    ns = json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "never-made"}})
    forced = json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "made-anyway"}})
    made, read, waited, anyway = play(cluster, tmp_path, [
        kubectl_task(verb="create", raw="/api/v1/namespaces", stdin=ns),
        kubectl_task(verb="get", kind="node", names=["gpu-a"], output="json"),
        kubectl_task(verb="wait", kind="node", names=["gpu-a"], options=["--for=condition=Ready", "--timeout=10s"]),
        dict(kubectl_task(verb="create", raw="/api/v1/namespaces", stdin=forced), check_mode=False)], "--check")
    assert made.get("skipped") and not made.get("changed") and made["requests"], made.get("msg")
    assert not read.get("skipped") and read["object"]["metadata"]["name"] == "gpu-a" and not read["changed"], read
    assert not waited.get("skipped") and waited["rc"] == 0, waited
    assert cluster.kubectl("get", "namespace", "never-made").returncode != 0
    assert anyway["changed"] and cluster.kubectl("get", "namespace", "made-anyway").returncode == 0, anyway


@needs_kubectl
def test_a_become_to_another_user_on_the_controller_still_goes_through_the_module_and_its_become(cluster, tmp_path):
    """sudo (here /bin/false) is what runs kubectl as another user; the direct path never bypasses it."""
    got, = play(cluster, tmp_path, [kubectl_task(verb="get", kind="node", names=["gpu-a"], output="json")], ansible_become_user="nobody")
    assert got.get("failed") and "object" not in got, got
    assert [c for c in cluster.calls() if "/nodes/gpu-a" in c["path"]] == []


@needs_kubectl
def test_the_kubectl_group_s_module_defaults_set_kubectl_and_the_kubeconfig_once(cluster, tmp_path):
    """meta/runtime.yml action_groups: module_defaults for group/maitred.rke2_numa.kubectl reach the action - here over
    variables that name neither a kubectl nor a kubeconfig that works; a task's own argument still wins."""
    defaults = {"group/maitred.rke2_numa.kubectl": {"kubectl": KUBECTL, "kubeconfig": cluster.kubeconfig}}
    got, own = play(cluster, tmp_path, [kubectl_task(verb="get", kind="node", names=["gpu-a"], output="json"),
                                        kubectl_task(verb="get", kind="node", names=["gpu-a"], kubeconfig=str(tmp_path / "none"))],
                    module_defaults=defaults, rke2_numa_kubectl="/nonexistent/kubectl", rke2_numa_kubeconfig=str(tmp_path / "none"))
    assert not got.get("failed") and got["object"]["metadata"]["name"] == "gpu-a", got
    assert got["cmd"][:3] == [KUBECTL, "--kubeconfig", cluster.kubeconfig]
    assert own.get("failed") and own["cmd"][:3] == [KUBECTL, "--kubeconfig", str(tmp_path / "none")], own


@needs_kubectl
def test_awx_s_bearer_token_credential_reaches_the_cluster_verified_and_leaves_nothing_behind(cluster, tmp_path):
    """rke2_numa_kubeconfig env:K8S_AUTH (plugin_utils/kube_credential.py): the K8S_AUTH_* variables AWX's Kubernetes
    bearer-token credential sets, the API stand-in's own CA - the real kubectl verifies the server's certificate and sends
    the token; the kubeconfig written for the call is gone after it, and the token is in no result. A credential that
    would not verify the server is refused before kubectl runs."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    environ = {"K8S_AUTH_HOST": cluster.url.replace("http://", "https://"), "K8S_AUTH_API_KEY": ADMIN_TOKEN, "K8S_AUTH_VERIFY_SSL": "True",
               "K8S_AUTH_SSL_CA_CERT": os.path.join(cluster.state, "auth", "tls.crt"), "TMPDIR": str(temp)}
    before = len(cluster.calls())
    got, insecure = play(cluster, tmp_path, [
        kubectl_task(verb="get", kind="node", names=["gpu-a"], output="json"),
        dict(kubectl_task(verb="get", kind="node", names=["gpu-a"]), environment={"K8S_AUTH_VERIFY_SSL": "False"})],
        environ=environ, rke2_numa_kubeconfig="env:K8S_AUTH")
    assert not got.get("failed") and got["object"]["metadata"]["name"] == "gpu-a", got
    assert got["cmd"][:3] == [KUBECTL, "--kubeconfig", "env:K8S_AUTH"] and os.listdir(str(temp)) == []
    assert [c["user"] for c in cluster.calls()[before:] if "/nodes/gpu-a" in c["path"]] == ["system:admin"]
    assert insecure.get("failed") and "does not verify the API server's certificate" in insecure["msg"], insecure
    assert len([c for c in cluster.calls()[before:] if "/nodes/gpu-a" in c["path"]]) == 1   # the refused one never ran
    assert ADMIN_TOKEN not in json.dumps([got, insecure])
