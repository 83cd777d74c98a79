# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A local sandbox to try the README's steps on: a small simulated RKE2 GPU cluster on this machine (make sandbox).

A SIMULATION - no real kubelet, no real GPU, no real RKE2: podman systemd containers from the Molecule node image
(make image) play the cluster.

- server1: the API stand-in (tests/standins/kubeapi) behind Debian's real kubectl, with the admin kubeconfig an RKE2
  server has (/etc/rancher/rke2/rke2.yaml);
- gpu01, gpu02 (RKE2_NUMA_SANDBOX_WORKERS: how many, 1 to 4): GPU workers - the RKE2 stand-in in a real
  rke2-agent.service over the dgx-h100 sample machine (2 sockets, 8 GPUs; its sysfs tree at /opt/topology), Debian's
  real GRUB as boot loader, a reboot that boots grub.cfg's default entry; each joined the cluster, its kubelet on
  cpu-manager-policy none, as a worker nobody planned yet;
- .sandbox/inventory.yml: the README's minimal inventory for them (the servers group, gpu_workers) with what a
  simulation needs (the podman connection, the sample machine's tree, short timeouts); .sandbox/ansible.cfg points
  Ansible at this clone's collection and at the connection plugin.

The README's steps then run as typed from .sandbox (``cd .sandbox``): ``python3 scripts/sandbox.py steps`` prints them,
taken from README.md itself (tests/integration/test_sandbox.py runs them the same way).

    python3 scripts/sandbox.py up      (make sandbox: the containers, the prepare, the steps)
    python3 scripts/sandbox.py steps   (the README's steps, ready to paste)
    python3 scripts/sandbox.py rancher gpu02   (that worker Rancher-provisioned: Rancher mode)
    python3 scripts/sandbox.py down    (make sandbox-clean: every container, the volume and .sandbox/)

Needs root and podman (rootful, as the Molecule recipe), and the images of make image.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SANDBOX = os.environ.get("RKE2_NUMA_SANDBOX_DIR") or os.path.join(REPO, ".sandbox")
PREFIX = os.environ.get("RKE2_NUMA_SANDBOX_PREFIX") or "rke2-numa-sandbox-"   # the containers' names (a test's own)
VOLUME = PREFIX + "cluster"
NODE_IMAGE = os.environ.get("MOLECULE_NODE_IMAGE", "localhost/rke2-numa-node:latest")
BASE_IMAGE = os.environ.get("MOLECULE_IMAGE", "localhost/rke2-numa-debian12-systemd:latest")
SERVER = "server1"
CLUSTER_DIR = "/var/lib/rke2-cluster"
README_SECTION = "## Plan, access, check, roll, prove"

# What the simulation needs beside the README's inventory (the Molecule scenarios' values: extensions/molecule).
SIMULATION_VARS = {
    "ansible_connection": "podman",               # extensions/molecule/shared/connection_plugins/podman.py (ansible.cfg)
    "ansible_become_method": "ansible.builtin.su",
    "rke2_numa_kubectl": "/usr/bin/kubectl",     # Debian's, on server1
    "rke2_numa_sysfs_root": "/opt/topology",     # the sample machine's tree (its running kernel too)
    "rke2_numa_hugepages_sysfs_root": "/opt/topology",
    "rke2_numa_hugepages_per_node": 2,           # one 1G page per GPU node: the probe pods ask for one
    "rke2_numa_hugepages_method": "runtime",     # the boot stand-in allocates no boot-time pages
    "rke2_numa_reboot_command": "/usr/local/sbin/rke2-numa-molecule-boot",   # boots grub.cfg's default entry
    "rke2_numa_boot_time_command": "cat /run/rke2-numa-molecule-boot-id",
    "rke2_numa_kubelet_timeout": 45,
    "rke2_numa_health_window": 6,
    "rke2_numa_drain_timeout": 30,
    "rke2_numa_node_ready_timeout": 30,
    "rke2_numa_probe_timeout": 60,
}


def workers():
    count = int(os.environ.get("RKE2_NUMA_SANDBOX_WORKERS") or 2)
    if not 1 <= count <= 4:
        raise SystemExit("sandbox: RKE2_NUMA_SANDBOX_WORKERS is 1 to 4, got %d" % count)
    return ["gpu%02d" % (i + 1) for i in range(count)]


def run(argv, check=True, **kwargs):
    return subprocess.run(argv, check=check, text=True, **kwargs)


def podman(*argv, check=True, quiet=False):
    kwargs = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL} if quiet else {}
    return run(["podman"] + list(argv), check=check, **kwargs)


def containers():
    out = run(["podman", "ps", "-a", "--format", "{{.Names}}", "--filter", "name=^" + PREFIX], stdout=subprocess.PIPE)
    return sorted(n for n in out.stdout.split() if n.startswith(PREFIX))


def yaml_text(value, indent=0):
    """A small YAML writer for the inventory (keeps its comments and order; PyYAML is not needed here)."""
    pad = " " * indent
    lines = []
    for key, item in value.items():
        if isinstance(item, dict):
            lines.append("%s%s:" % (pad, key))
            lines.append(yaml_text(item, indent + 2))
        elif isinstance(item, int) and not isinstance(item, bool):
            lines.append("%s%s: %d" % (pad, key, item))
        else:
            lines.append("%s%s: %s" % (pad, key, '"%s"' % item if re.search(r"[:#{}\[\],&*?|<>=!%@`' ]", str(item)) else item))
    return "\n".join(lines)


def inventory(names):
    body = {"all": {"vars": dict({"rke2_numa_server_group": "servers"}, **SIMULATION_VARS),
                    "children": {"servers": {"hosts": {SERVER: {"ansible_host": PREFIX + SERVER}}},
                                 "gpu_workers": {"hosts": dict((n, {"ansible_host": PREFIX + n}) for n in names)}}}}
    return ("# inventory.yml of the sandbox (make sandbox): a SIMULATION - podman containers, the RKE2 and API stand-ins,\n"
            "# no real kubelet or GPU. The README's inventory, with what a simulation needs (scripts/sandbox.py).\n"
            + yaml_text(body) + "\n")


def ansible_cfg():
    return textwrap.dedent("""\
        # The sandbox's (make sandbox): this clone's collection, the podman connection of the Molecule recipe.
        [defaults]
        collections_path = {build}
        connection_plugins = {plugins}
        interpreter_python = /usr/bin/python3
        host_key_checking = False
        [connection]
        pipelining = True
        """).format(build=os.path.join(REPO, ".build"), plugins=os.path.join(REPO, "extensions", "molecule", "shared", "connection_plugins"))


def readme_steps(readme=None):
    """The README's steps: the commands of the ```sh block of its section "Plan, access, check, roll, prove", each a
    (line number in README.md, command) - continuation lines joined, comments dropped."""
    path = readme or os.path.join(REPO, "README.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.index(README_SECTION)
    block_start = text.index("```sh\n", start) + len("```sh\n")
    block = text[block_start:text.index("```", block_start)]
    first_line = text.count("\n", 0, block_start) + 1
    steps, pending, pending_line = [], "", 0
    for number, line in enumerate(block.splitlines(), first_line):
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if not pending:
            pending_line = number
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        steps.append((pending_line, (pending + line.strip()).strip()))
        pending = ""
    return steps


def env():
    """The environment the steps run in from .sandbox: its ansible.cfg, this venv's tools first."""
    venv = os.path.join(REPO, ".venv", "bin")
    return dict(os.environ, ANSIBLE_CONFIG=os.path.join(SANDBOX, "ansible.cfg"),
                PATH=venv + os.pathsep + os.environ.get("PATH", ""), MOLECULE_PROJECT_DIRECTORY=REPO)


def steps_text():
    lines = ["The sandbox is up: a SIMULATION (podman containers, the RKE2 and API stand-ins; no real kubelet or GPU).",
             "Its inventory: %s; its nodes: %s (and %s, the server)." % (os.path.join(SANDBOX, "inventory.yml"), ", ".join(workers()), SERVER),
             "",
             "The README's steps, as typed (README.md, \"%s\"):" % README_SECTION[3:],
             "",
             "  cd %s && export ANSIBLE_CONFIG=$PWD/ansible.cfg PATH=%s:$PATH" % (SANDBOX, os.path.join(REPO, ".venv", "bin"))]
    for dummy, command in readme_steps():
        lines.append("  " + command)
    lines += ["", "Then try: a variable (-e rke2_numa_hugepages_per_node=4, -e rke2_numa_reserved_cores=2); a second roll in another",
              "terminal while one runs (refused, naming the first); Ctrl-C in a roll, then the rerun its refusal names;",
              "Rancher mode: python3 %s rancher %s (then check and roll again; docs/ROLLING.md)."
              % (os.path.relpath(os.path.abspath(__file__)), workers()[-1]),
              "Remove it all: make sandbox-clean"]
    return "\n".join(lines)


def up():
    if os.geteuid() != 0:
        raise SystemExit("sandbox: run as root (rootful podman, as the Molecule recipe)")
    for image in (NODE_IMAGE, BASE_IMAGE):
        if podman("image", "exists", image, check=False, quiet=True).returncode != 0:
            raise SystemExit("sandbox: the image %s is missing: make image" % image)
    down(quiet=True)
    os.makedirs(SANDBOX, exist_ok=True)
    names = workers()
    podman("volume", "create", VOLUME, quiet=True)
    common = ["--systemd=always", "--network", "none", "--ulimit", "nofile=20000:20000", "--ulimit", "nproc=32768:32768",
              "--runtime=runc", "-v", "%s:%s:rw" % (VOLUME, CLUSTER_DIR)]
    if os.path.isdir("/sys/fs/cgroup/unified"):   # a hybrid cgroup host: systemd in the container needs the v2 tree
        common += ["-v", "/sys/fs/cgroup/unified:/sys/fs/cgroup/unified:rw"]
    for name, image in [(SERVER, BASE_IMAGE)] + [(n, NODE_IMAGE) for n in names]:
        podman("run", "-d", "--name", PREFIX + name, "--hostname", name, *common, image, "/lib/systemd/systemd", quiet=True)
    with open(os.path.join(SANDBOX, "inventory.yml"), "w", encoding="utf-8") as f:
        f.write(inventory(names))
    with open(os.path.join(SANDBOX, "ansible.cfg"), "w", encoding="utf-8") as f:
        f.write(ansible_cfg())
    done = run([os.path.join(REPO, ".venv", "bin", "ansible-playbook"), "-i", "inventory.yml",
                os.path.join(REPO, "scripts", "sandbox", "prepare.yml"), "-e", "__rke2_numa_molecule_cluster_dir=%s" % CLUSTER_DIR],
               check=False, cwd=SANDBOX, env=env())
    if done.returncode != 0:
        raise SystemExit("sandbox: the prepare failed (above); make sandbox-clean removes what was made")
    print(steps_text())


def down(quiet=False):
    for name in containers():
        podman("rm", "-f", "-t", "2", name, check=False, quiet=True)
    podman("volume", "rm", "-f", VOLUME, check=False, quiet=True)
    if os.path.isdir(SANDBOX):
        shutil.rmtree(SANDBOX)
    if not quiet:
        print("sandbox: removed (its containers, the volume %s and %s)" % (VOLUME, SANDBOX))


def rancher(name):
    """Make a worker Rancher-provisioned, as the Molecule rolling scenario's n1: rancher-system-agent's unit (not
    started), and Rancher's first plan applied by the RKE2 stand-in's system-agent (50-rancher.yaml with the machine's
    label, then a restart of rke2-agent, as Rancher does). check.yml then says the node is managed by Rancher and the
    roll writes the plan in its drop-in (docs/ROLLING.md)."""
    if name not in workers():
        raise SystemExit("sandbox: %s is not one of the workers (%s)" % (name, ", ".join(workers())))
    container = PREFIX + name
    unit = "[Unit]\nDescription=Rancher System Agent (sandbox stand-in: not started)\n[Service]\nExecStart=/bin/true\n"
    podman("exec", container, "sh", "-c", "printf '%s' > /etc/systemd/system/rancher-system-agent.service" % unit)
    podman("exec", container, "/usr/local/bin/rke2", "standin-rancher-apply", "--machine", "m-sandbox-" + name)
    print("sandbox: %s is Rancher-provisioned now (its 50-rancher.yaml, rke2-agent restarted): run the check again" % name)


def main(argv):
    command = argv[1] if len(argv) > 1 else "up"
    if command == "up":
        up()
    elif command == "down":
        down()
    elif command == "steps":
        print(steps_text())
    elif command == "rancher" and len(argv) == 3:
        rancher(argv[2])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
