# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The README's steps are a test: its command block ("Plan, access, check, roll, prove"), parsed from README.md (not a
copy), run as typed against a sandbox of its own (scripts/sandbox.py: podman systemd containers, the RKE2 and API
stand-ins, Debian's real kubectl and GRUB) - each exits as documented, and a failure names the README line. Then a
roll killed with SIGKILL at a random point is picked up again the way its refusal says. make sandbox-test (make test's
background lane, beside Molecule: the same images); needs root and podman."""

from __future__ import annotations

import datetime
import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
os.environ.setdefault("RKE2_NUMA_SANDBOX_PREFIX", "rke2-numa-readme-")   # never a user's own sandbox
import sandbox  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("podman"), reason="root and podman (make sandbox-test)")
KUBECONFIG = "/etc/rancher/rke2/rke2-numa.yaml"
CORDONED, FAILED = "rke2-numa.maitred.io/cordoned", "rke2-numa.maitred.io/failed"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sandbox")
    sandbox.SANDBOX = str(folder / "sandbox")
    up = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "sandbox.py"), "up"], capture_output=True, text=True,
                        env=dict(os.environ, RKE2_NUMA_SANDBOX_DIR=sandbox.SANDBOX), check=False)
    try:
        assert up.returncode == 0, (up.stdout + up.stderr)[-4000:]
        assert "The README's steps, as typed" in up.stdout
        yield sandbox.SANDBOX
    finally:
        subprocess.run([sys.executable, os.path.join(REPO, "scripts", "sandbox.py"), "down"], capture_output=True,
                       env=dict(os.environ, RKE2_NUMA_SANDBOX_DIR=sandbox.SANDBOX), check=False)


def shell(command, folder, **kwargs):
    return subprocess.run(command, shell=True, cwd=folder, env=sandbox.env(), capture_output=True, text=True, check=False, **kwargs)


def kubectl(*argv):
    """Debian's kubectl on server1 with the admin kubeconfig, as an admin looks at the cluster."""
    out = subprocess.run(["podman", "exec", sandbox.PREFIX + sandbox.SERVER, "kubectl", "--kubeconfig", "/etc/rancher/rke2/rke2.yaml"]
                         + list(argv), capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def nodes():
    """{name: (schedulable, our annotations)} of the workers' Nodes."""
    found = {}
    for item in json.loads(kubectl("get", "nodes", "-o", "json"))["items"]:
        meta = item["metadata"]
        ours = dict((k, v) for k, v in (meta.get("annotations") or {}).items() if k in (CORDONED, FAILED))
        found[meta["name"]] = (not item["spec"].get("unschedulable"), ours)
    return found


def all_in_service_and_compliant(folder, *extra):
    """check.yml: every worker runs its plan; every Node schedulable, none of our markers left."""
    out = shell("ansible-playbook -i inventory.yml maitred.rke2_numa.check -e rke2_numa_kubeconfig=%s %s"
                % (KUBECONFIG, " ".join(extra)), folder)
    workers = sandbox.workers()
    assert out.returncode == 0, out.stdout[-3000:]
    assert "%d of %d compliant" % (len(workers), len(workers)) in out.stdout, out.stdout[-3000:]
    assert dict((n, s) for n, s in nodes().items() if n in workers) == dict((n, (True, {})) for n in workers)


def resume(folder, roll, roll_id, plan, note=""):
    """The roll ``roll_id`` picked up by its id, as its refusal says: it finishes, every node compliant and in service.
    Returns its output."""
    out = shell(roll + " -e rke2_numa_roll_id=%s -e rke2_numa_roll_resume=true" % roll_id, folder)
    assert out.returncode == 0, (note, (out.stdout + out.stderr)[-4000:])
    assert "TASK [Show the summary]" in out.stdout, note
    all_in_service_and_compliant(folder, plan)
    return out


def scoped_identity(folder):
    """The identity and kubeconfig the README's access step gives: the README's test made them; a test run alone (or
    after that one failed before its access step) runs the step itself."""
    there = subprocess.run(["podman", "exec", sandbox.PREFIX + sandbox.SERVER, "test", "-s", KUBECONFIG], check=False)
    if there.returncode != 0:
        access = [c for dummy, c in sandbox.readme_steps() if "maitred.rke2_numa.access" in c]
        assert shell(access[0], folder).returncode == 0


def wrapped_kubectl(text):
    """``text`` as a kubectl on server1 (/usr/local/bin/kubectl-wrapped), its flag files under /run cleared."""
    put = subprocess.run(["podman", "exec", "-i", sandbox.PREFIX + sandbox.SERVER, "sh", "-c", "cat > %s && chmod 0755 %s && rm -f "
                          "/run/rke2-numa-*" % (WRAPPED, WRAPPED)], input=text, capture_output=True, text=True, check=False)
    assert put.returncode == 0, put.stderr
    return WRAPPED


def wait_for(flag, process, seconds=300):
    """Until server1 has /run/<flag> (the wrapped kubectl reached its call), while ``process`` runs. Looked for through
    /proc/<its init's PID>/root (the container's mount namespace, its /run included): no ``podman exec`` per look (a
    podman client, conmon and runc exec each time, 1-2 s apart on a busy machine, beside the roll it waits on)."""
    pid = subprocess.run(["podman", "inspect", "-f", "{{.State.Pid}}", sandbox.PREFIX + sandbox.SERVER], capture_output=True, text=True,
                         check=True).stdout.strip()
    path = "/proc/%s/root/run/%s" % (pid, flag)
    assert pid.isdigit() and int(pid) > 0 and os.path.isdir("/proc/%s/root/run" % pid), pid
    deadline = time.time() + seconds
    while time.time() < deadline and process.poll() is None:
        if os.path.exists(path):
            return
        time.sleep(0.2)
    assert process.poll() is None, "the roll reached /run/%s (exit %s)" % (flag, process.returncode)


WRAPPED = "/usr/local/bin/kubectl-wrapped"


def pending_reboot_dry_run(folder, command):
    """The README's dry run without rke2_numa_reboot_ok: the roll would stop at the first node's pending reboot - said in
    the summary (the old code failed there: "object of type 'dict' has no attribute 'line'", and said the node was
    left cordoned), nothing cordoned or marked, the run failed as a real one would."""
    out = shell(command.replace(" -e rke2_numa_reboot_ok=true", ""), folder)
    assert out.returncode != 0 and "has no attribute" not in out.stdout, out.stdout[-3000:]
    summary = out.stdout.split("TASK [Show the summary]", 1)[1]
    assert "pending reboot: gpu01" in summary and "took no Lease (check mode)" in summary, summary[:2000]
    assert "would stop here (check mode: nothing was cordoned): pending reboot" in out.stdout
    assert "left cordoned:" not in out.stdout
    assert all(schedulable and not ours for schedulable, ours in nodes().values())


def test_the_readme_steps_run_as_typed(cluster):
    steps = sandbox.readme_steps()
    assert [re.search(r"maitred\.rke2_numa\.(\w+)", c).group(1) for dummy, c in steps] == [
        "plan", "access", "check", "rolling", "rolling", "prove", "labels"], "the README's steps, in order"
    for line, command in steps:
        if "--check" in command:
            pending_reboot_dry_run(cluster, command)
        started = time.time()
        out = shell(command, cluster)
        assert out.returncode == 0, "README.md line %d: `%s` exited %d after %.0f s:\n%s" % (
            line, command, out.returncode, time.time() - started, (out.stdout + out.stderr)[-4000:])
        text = out.stdout
        assert "failed_when" not in text, "README.md line %d" % line
        if "maitred.rke2_numa.rolling" in command:
            assert "TASK [Show the summary]" in text, "README.md line %d: every run ends with its summary" % line
            summary = text.split("TASK [Show the summary]", 1)[1]
            if "--check" in command:
                assert "would reboot: %s" % ", ".join(sandbox.workers()) in summary, summary[:2000]
                assert "left cordoned:" not in text
            else:
                assert "rebooted: %s" % ", ".join(sandbox.workers()) in summary and "compliant (skipped): none" in summary, summary[:2000]
    # the relative report folders are where ansible-playbook ran; the roll's report is the fleet after it
    for folder in ("report/plan", "report/check", "report/roll", "plans"):
        assert os.path.isdir(os.path.join(cluster, folder)), folder
    fleet = json.loads(open(os.path.join(cluster, "report", "roll", "fleet.json")).read())
    assert fleet["roll"]["failed"] is False and fleet["not_compliant"] == [], fleet
    page = open(os.path.join(cluster, "report", "roll", "index.html")).read()
    assert "%d compliant, 0 NOT compliant" % len(sandbox.workers()) in page and "to roll it" not in page
    check_page = open(os.path.join(cluster, "report", "check", "index.html")).read()
    assert "-e rke2_numa_kubeconfig=%s -e rke2_numa_hosts=gpu01" % KUBECONFIG in check_page, "the README's form"
    all_in_service_and_compliant(cluster)


def test_a_roll_killed_anywhere_is_picked_up_at_once_by_its_id_and_finishes(cluster):
    """Another plan (one more reserved core per node: other kernel args, a reboot) rolled and SIGKILLed at a random
    point - the whole process group, as a dropped SSH session or a Ctrl-C would leave it. Another roll is refused,
    naming the dead roll's id and the way to pick it up; the rerun given it finishes: every node runs the new plan,
    schedulable, unmarked."""
    scoped_identity(cluster)
    seed = int(os.environ.get("RKE2_NUMA_KILL_SEED") or time.time())
    kill_after = random.Random(seed).uniform(8.0, 80.0)
    plan = "-e rke2_numa_reserved_cores=2"
    roll = ("ansible-playbook -i inventory.yml maitred.rke2_numa.rolling -e rke2_numa_kubeconfig=%s -e rke2_numa_reboot_ok=true %s"
            % (KUBECONFIG, plan))
    dying = subprocess.Popen(shlex.split(roll + " -e rke2_numa_roll_id=roll-killed"), cwd=cluster, env=sandbox.env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(kill_after)
    finished = dying.poll() is not None
    if not finished:
        os.killpg(dying.pid, signal.SIGKILL)
    dying.wait()
    note = "seed %d: killed after %.1f s%s" % (seed, kill_after, " (it had finished)" if finished else "")
    lease = json.loads(kubectl("get", "lease", "-n", "rke2-numa-system", "rke2-numa-roll", "-o", "json"))
    if not finished and lease["spec"].get("holderIdentity") == "roll-killed":
        out = shell(roll, cluster)
        assert out.returncode != 0, note
        assert "rerun with -e rke2_numa_roll_id=roll-killed -e rke2_numa_roll_resume=true" in out.stdout + out.stderr, \
            (note, (out.stdout + out.stderr)[-3000:])
    resume(cluster, roll, "roll-killed", plan, note)


# kubectl on server1 that stops the roll right after the cordon's patch is answered: the patch goes through, then the
# call never returns (the harness kills the roll's process group meanwhile, as a dropped SSH session would)
def kubectl_then(pattern, action):
    """A kubectl for server1: the real one, then - when its words match ``pattern`` (a sh case pattern), and it is not a
    server-side dry run (the roll's proof of its identity sends the same requests as dry runs first) - ``action``."""
    return ('#!/bin/sh\n/usr/bin/kubectl "$@"\nrc=$?\ncase " $* " in\n  *" --dry-run=server "*) ;;\n  %s) %s ;;\nesac\nexit $rc\n'
            % (pattern, action))


STUCK_AFTER_CORDON = kubectl_then("""*'patch node/'*'"unschedulable":true'*""", "touch /run/rke2-numa-cordoned; sleep 600")


def test_a_roll_killed_right_after_its_cordon_leaves_a_marked_node_that_the_next_roll_returns_to_service(cluster):
    """SIGKILL right after the cordon's request, before any other: the cordon and our marker went in one patch, so the
    node is out as this roll's (never an unmarked cordon that the next roll takes for an admin's and never returns to
    service); the check names the roll at work; the roll that picks it up starts with that node - one node out at a time -
    and returns every node to service. Before, cordon and marker were two calls: a kill between them left gpu01 cordoned
    forever and two nodes out with a cap of 1."""
    wrapper = wrapped_kubectl(STUCK_AFTER_CORDON)
    scoped_identity(cluster)
    plan = "-e rke2_numa_reserved_cores=3"   # another plan than the README's and the random kill's: each node rolls
    roll = ("ansible-playbook -i inventory.yml maitred.rke2_numa.rolling -e rke2_numa_kubeconfig=%s -e rke2_numa_reboot_ok=true %s"
            % (KUBECONFIG, plan))
    dying = subprocess.Popen(shlex.split(roll + " -e rke2_numa_roll_id=roll-cordon -e rke2_numa_kubectl=" + wrapper), cwd=cluster,
                             env=sandbox.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for("rke2-numa-cordoned", dying)
    os.killpg(dying.pid, signal.SIGKILL)
    dying.wait()
    out_now = dict((n, s) for n, s in nodes().items() if n in sandbox.workers())
    first = sandbox.workers()[0]
    assert out_now[first] == (False, {CORDONED: "roll-cordon"}), ("cordon and marker together, as one patch", out_now)
    assert [n for n, (schedulable, dummy) in out_now.items() if not schedulable] == [first], out_now

    check = shell("ansible-playbook -i inventory.yml maitred.rke2_numa.check -e rke2_numa_kubeconfig=%s %s" % (KUBECONFIG, plan), cluster)
    assert "roll-cordon" in check.stdout, ("the check names the roll at work", check.stdout[-3000:])

    out = resume(cluster, roll, "roll-cordon", plan)
    started = re.findall(r"(gpu\d+): (?:starting|resuming)", out.stdout)
    assert started and started[0] == first, ("the dead roll's node first", started)


# kubectl on server1 that holds the roll right after its drain returns, until the harness lets it go on
HELD_AFTER_DRAIN = kubectl_then("*' drain '*", "touch /run/rke2-numa-drained; while [ ! -e /run/rke2-numa-go ]; do sleep 0.2; done")
# what a destructive step would change on a worker: the boot configuration, RKE2's config files, the kubelet's
# checkpoints, rke2-agent's last start
NODE_STATE = ("sha256sum /etc/default/grub /etc/default/grub.d/* /etc/rancher/rke2/config.yaml /etc/rancher/rke2/config.yaml.d/* "
              "/var/lib/kubelet/cpu_manager_state /var/lib/kubelet/memory_manager_state 2>/dev/null; "
              "systemctl show -p ActiveEnterTimestampMonotonic -p NRestarts rke2-agent")


def node_state(name):
    out = subprocess.run(["podman", "exec", sandbox.PREFIX + name, "sh", "-c", NODE_STATE], capture_output=True, text=True, check=False)
    return out.stdout


def test_a_roll_suspended_after_its_drain_while_another_takes_its_lease_takes_no_step_once_resumed(cluster):
    """SIGSTOP right after the drain of the first node (a laptop lid, a stopped AWX runner); meanwhile another roll
    takes the Lease (its holder and leaseTransitions change); SIGCONT: the resumed roll's fence before the node's first
    write finds the Lease lost - no boot configuration, RKE2 config or checkpoint touched, rke2-agent not restarted -
    and the node keeps this roll's marker for whoever rolls next. Before, the resumed roll went on 23-25 s later: it
    stopped rke2-agent and deleted the checkpoints under the other roll's Lease."""
    server = sandbox.PREFIX + sandbox.SERVER
    wrapper = wrapped_kubectl(HELD_AFTER_DRAIN)
    scoped_identity(cluster)
    plan = "-e rke2_numa_reserved_cores=4"
    roll = ("ansible-playbook -i inventory.yml maitred.rke2_numa.rolling -e rke2_numa_kubeconfig=%s -e rke2_numa_reboot_ok=true %s"
            % (KUBECONFIG, plan))
    log = open(os.path.join(cluster, "roll-stopped.log"), "w")
    held = subprocess.Popen(shlex.split(roll + " -e rke2_numa_roll_id=roll-stopped -e rke2_numa_kubectl=" + wrapper), cwd=cluster,
                            env=sandbox.env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    first = sandbox.workers()[0]
    try:
        wait_for("rke2-numa-drained", held)
        os.killpg(held.pid, signal.SIGSTOP)
        before = node_state(first)
        lease = json.loads(kubectl("get", "lease", "-n", "rke2-numa-system", "rke2-numa-roll", "-o", "json"))
        assert lease["spec"]["holderIdentity"] == "roll-stopped"
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        kubectl("patch", "lease", "-n", "rke2-numa-system", "rke2-numa-roll", "--type=merge", "-p", json.dumps({"spec": {
            "holderIdentity": "roll-other", "acquireTime": now, "renewTime": now,
            "leaseTransitions": int(lease["spec"].get("leaseTransitions") or 0) + 1}}))
        subprocess.run(["podman", "exec", server, "touch", "/run/rke2-numa-go"], check=True)
        os.killpg(held.pid, signal.SIGCONT)
        held.wait(timeout=600)
    finally:
        if held.poll() is None:
            os.killpg(held.pid, signal.SIGKILL)
            held.wait()
        log.close()
    text = " ".join(open(os.path.join(cluster, "roll-stopped.log")).read().split())
    assert held.returncode != 0 and "roll roll-stopped lost the Lease rke2-numa-system/rke2-numa-roll to roll-other" in text, text[-3000:]
    assert node_state(first) == before, "no step on the node after the other roll took the Lease"
    assert dict(nodes())[first] == (False, {CORDONED: "roll-stopped"}), "left as this roll's, for whoever rolls next"

    # the other roll gives the Lease back; the stopped roll, picked up by its id, finishes
    kubectl("patch", "lease", "-n", "rke2-numa-system", "rke2-numa-roll", "--type=merge", "-p", json.dumps({"spec": {"holderIdentity": ""}}))
    resume(cluster, roll, "roll-stopped", plan)
