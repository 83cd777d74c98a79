# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""extensions/molecule/shared/connection_plugins/podman.py (Molecule's and the sandbox's connection): a PID kept for a
container name is used only while that process still runs in that container. A removed container's init lingering as
a zombie kept its /proc entry and cgroup: the kept PID passed, and every task of the next container of that name failed
("nsenter: cannot open /proc/3020/ns/ipc", make test's sandbox-test in CI)."""

from __future__ import annotations

import importlib.util
import os
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PATH = os.path.join(REPO, "extensions", "molecule", "shared", "connection_plugins", "podman.py")


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("rke2_numa_molecule_podman_connection", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "_CACHE", str(tmp_path))
    return module


def connection(plugin, asked):
    conn = plugin.Connection.__new__(plugin.Connection)   # no play context needed for the PID lookup
    conn._pid = None
    conn._container = lambda: "rke2-numa-readme-server1"
    conn._ask_podman = lambda name: asked.append(name) or [str(os.getpid()), "::"]
    return conn


def own_cgroup_word():
    with open("/proc/self/cgroup") as handle:
        return handle.read().split(":")[-1].strip() or "/"


def test_a_zombie_kept_for_the_name_is_not_used(plugin, tmp_path):
    pid = os.fork()
    if pid == 0:
        os._exit(0)   # the child exits; unreaped, it is a zombie with our cgroup
    try:
        # until the child has exited (a zombie), by the clock: on a busy machine 200 yields were not always enough, and a
        # child still running is a live process of our cgroup, which the connection rightly takes
        deadline = time.time() + 10
        while time.time() < deadline:
            with open("/proc/%d/stat" % pid) as handle:
                if handle.read().rsplit(")", 1)[-1].split()[0] == "Z":
                    break
            time.sleep(0.01)
        (tmp_path / "rke2-numa-readme-server1").write_text("%d %s\n" % (pid, own_cgroup_word()))
        asked = []
        assert connection(plugin, asked)._container_pid() == str(os.getpid()), "asked podman again"
        assert asked == ["rke2-numa-readme-server1"]
    finally:
        os.waitpid(pid, 0)


def test_a_live_process_of_the_container_is_used_without_asking(plugin, tmp_path):
    (tmp_path / "rke2-numa-readme-server1").write_text("%d %s\n" % (os.getpid(), own_cgroup_word()))
    asked = []
    assert connection(plugin, asked)._container_pid() == str(os.getpid()) and asked == []


def test_a_process_of_another_container_or_none_is_not_used(plugin, tmp_path):
    for kept in ("%d not-this-container-id" % os.getpid(), "999999999 ::"):
        (tmp_path / "rke2-numa-readme-server1").write_text(kept + "\n")
        asked = []
        connection(plugin, asked)._container_pid()
        assert asked == ["rke2-numa-readme-server1"], kept
