# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A faster ``podman`` connection for Molecule's local containers: nsenter instead of ``podman exec``.

Molecule's podman driver writes ``ansible_connection: podman`` for every
instance; with ``connection_plugins`` pointing here (../../config.yml) this
plugin answers that name. Each task used to start ``podman exec`` (a Go
program, then runc), about 0.3 s of CPU on our 2-core machines, for every
module call of every scenario: most of Molecule's time. nsenter enters the
container's namespaces directly (a few ms) with the environment ``podman
exec`` gives (the container's PATH, HOME, ``container``, HOSTNAME), as root,
in its root folder. Files go in and out through the same namespaces (cat).

The container's PID is asked of podman once and kept under
$XDG_RUNTIME_DIR or /tmp, with the container's ID: a kept PID is used only
while /proc/<pid>/cgroup still names that container (a restarted container
has a new PID).

Local, rootful podman only (as our Molecule recipe); not part of the collection.
"""

from __future__ import annotations

DOCUMENTATION = r"""
name: podman
short_description: Run tasks in a local rootful podman container through nsenter
description:
  - Runs commands and copies files in a local podman container by entering its namespaces with nsenter.
author:
  - maitred.rke2_numa contributors (@maitred)
options:
  remote_addr:
    description: The container's name.
    default: inventory_hostname
    vars:
      - name: inventory_hostname
      - name: ansible_host
  podman_executable:
    description: The podman program, asked for the container's PID.
    default: podman
    vars:
      - name: ansible_podman_executable
"""

import os
import shlex
import subprocess

from ansible.errors import AnsibleConnectionFailure
from ansible.module_utils.common.text.converters import to_bytes, to_text
from ansible.plugins.connection import ConnectionBase

# What `podman exec` gives a command (the image's environment; molecule's containers have no other).
_ENV = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "container=oci"]
_CACHE = os.path.join(os.environ.get("XDG_RUNTIME_DIR") or "/tmp", "rke2-numa-molecule-nsenter")


def _runs_in(pid, cid):
    """Whether process ``pid`` still runs in container ``cid``: its cgroup names the container and it is no zombie. A
    removed container's init can linger as a zombie, its /proc entry and cgroup still there, its namespaces gone: kept
    for a new container of the same name, nsenter failed at every task ("cannot open /proc/<pid>/ns/ipc")."""
    with open("/proc/%s/stat" % pid) as handle:
        state = handle.read().rsplit(")", 1)[-1].split()[0]
    if state in ("Z", "X"):
        return False
    with open("/proc/%s/cgroup" % pid) as handle:
        if cid not in handle.read():
            return False
    os.stat("/proc/%s/ns/mnt" % pid)
    return True


class Connection(ConnectionBase):
    """nsenter into a local podman container."""

    transport = "podman"
    has_pipelining = True

    def __init__(self, *args, **kwargs):
        super(Connection, self).__init__(*args, **kwargs)
        self._pid = None

    def _container(self):
        return self.get_option("remote_addr") or self._play_context.remote_addr

    def _ask_podman(self, name):
        out = subprocess.run([self.get_option("podman_executable"), "container", "inspect", "-f", "{{.State.Pid}} {{.Id}}", name],
                             capture_output=True, text=True, check=False)
        fields = out.stdout.split()
        if out.returncode != 0 or len(fields) != 2 or fields[0] == "0":
            raise AnsibleConnectionFailure("container %s is not running: %s" % (name, out.stderr.strip() or out.stdout.strip()))
        return fields

    def _container_pid(self):
        if self._pid:
            return self._pid
        name = self._container()
        kept = os.path.join(_CACHE, name)
        try:
            with open(kept) as handle:
                pid, cid = handle.read().split()
            if not _runs_in(pid, cid):
                raise ValueError("another process, or none")
        except (OSError, ValueError):
            pid, cid = self._ask_podman(name)
            os.makedirs(_CACHE, mode=0o700, exist_ok=True)
            with open(kept + ".tmp", "w") as handle:
                handle.write("%s %s\n" % (pid, cid))
            os.replace(kept + ".tmp", kept)
        self._pid = pid
        return pid

    def _nsenter(self, argv):
        return (["nsenter", "--target", self._container_pid(), "--mount", "--uts", "--ipc", "--net", "--pid", "--root", "--wd", "--",
                 "env", "-i"] + _ENV + ["HOSTNAME=%s" % self._container()] + argv)

    def _connect(self):
        super(Connection, self)._connect()
        self._connected = True
        return self

    def exec_command(self, cmd, in_data=None, sudoable=True):
        super(Connection, self).exec_command(cmd, in_data=in_data, sudoable=sudoable)
        argv = [to_bytes(a, errors="surrogate_or_strict") for a in self._nsenter(shlex.split(to_text(cmd, errors="surrogate_or_strict")))]
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        stdout, stderr = proc.communicate(in_data)
        return proc.returncode, stdout, stderr

    def _pipe(self, argv, stdin, stdout):
        proc = subprocess.run(self._nsenter(argv), stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, check=False)
        if proc.returncode != 0:
            raise AnsibleConnectionFailure("%s in %s failed: %s" % (" ".join(argv), self._container(), to_text(proc.stderr).strip()))

    def put_file(self, in_path, out_path):
        super(Connection, self).put_file(in_path, out_path)
        with open(to_bytes(in_path, errors="surrogate_or_strict"), "rb") as source:
            self._pipe(["/bin/sh", "-c", 'cat > "$1"', "put_file", out_path], source, subprocess.DEVNULL)

    def fetch_file(self, in_path, out_path):
        super(Connection, self).fetch_file(in_path, out_path)
        with open(to_bytes(out_path, errors="surrogate_or_strict"), "wb") as dest:
            self._pipe(["cat", "--", in_path], subprocess.DEVNULL, dest)

    def close(self):
        self._connected = False
        self._pid = None   # asked again (and checked) at the next connection: a reboot gives the container a new PID
