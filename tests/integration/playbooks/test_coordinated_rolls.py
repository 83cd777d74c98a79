# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Many hands, one fleet: the roll's Lease through the real kubectl against the API stand-in (which stores Leases as
the API server does: AlreadyExists, 409 on a stale resourceVersion, RBAC), node copies (ansible_connection=local).

A roll in these tests cannot get past the kubelet_reset preflight (the test host has no systemd: the Molecule
``rolling`` scenario rolls real nodes); what another roll leaves in the cluster while it works - its Lease, its
marker on a cordoned Node - is written here through the API as that roll writes it, or left by a real roll that
was killed with SIGKILL."""

from __future__ import annotations

import datetime
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import rbac
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBECTL, gpu_fleet, lease_logging_kubectl, needs_kubectl
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import make_node, tree
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_hostile_inventory import (
    CORDONED, PLAYBOOKS, REPO, SPEC, is_write, lease_writes, node_vars)

pytestmark = needs_kubectl
NS, NAME = rbac.LEASE_DEFAULT
SA_USER = rbac.identity()


@pytest.fixture
def api(tmp_path):
    yield from gpu_fleet(tmp_path, ("gpu-a", "gpu-b", "other-1"))


def stamp(seconds_ago=0.0):
    moment = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=seconds_ago)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def hold(api, holder, seconds_ago=5.0, duration=600, cordon=()):
    """The cluster as a live roll ``holder`` leaves it while it works: its Lease, and its marker on the Nodes it has out."""
    got = api.kubectl("get", "lease", NAME, "-n", NS, "--ignore-not-found", "-o", "json")
    spec = {"holderIdentity": holder, "leaseDurationSeconds": duration, "acquireTime": stamp(seconds_ago + 60),
            "renewTime": stamp(seconds_ago), "leaseTransitions": 0}
    body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": NAME, "namespace": NS}, "spec": spec}
    if got.stdout.strip():
        body["metadata"]["resourceVersion"] = json.loads(got.stdout)["metadata"]["resourceVersion"]
    done = api.kubectl("replace" if got.stdout.strip() else "create", "--validate=false", "-f", "-", stdin=json.dumps(body))
    assert done.returncode == 0, done.stderr
    for name in cordon:
        with api.edit(name) as node:
            node["unschedulable"] = True
            node["annotations"] = {CORDONED: holder}


def lease(api):
    got = api.kubectl("get", "lease", NAME, "-n", NS, "-o", "json")
    return json.loads(got.stdout) if got.returncode == 0 else None


def inventory(api, tmp_path, hosts, kubectl=None, **common):
    inv = {"gpu": {"vars": dict({"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                                 "rke2_numa_kubectl": kubectl or KUBECTL, "rke2_numa_kubeconfig": api.kubeconfig,
                                 "rke2_numa_prove": False}, **common), "hosts": hosts}}
    path = tmp_path / ("inventory-%d.yml" % time.monotonic_ns())
    path.write_text(yaml.safe_dump(inv))
    return str(path)


def command(api, inventory_path, playbook, *extra):
    env = dict(api.env, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_DEPRECATION_WARNINGS="false")
    return [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory_path,
            os.path.join(PLAYBOOKS, playbook)] + list(extra), env


def run(api, tmp_path, playbook, hosts, *extra, **common):
    argv, env = command(api, inventory(api, tmp_path, hosts, **common), playbook, *extra)
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    return out.returncode, " ".join((out.stdout + out.stderr).split())


def writes(api, since=0):
    return [c for c in api.calls()[since:] if is_write(c)]


def test_a_second_roll_refuses_before_any_write_naming_the_roll_at_work_and_the_check_names_it(api, tmp_path):
    """Another roll holds the Lease and has gpu-b out: this roll writes nothing (no Lease write, no Node, no file),
    fails, and names it - its id, since when, its Node. check.yml and rolling.yml --check read the Lease only and say
    a roll is in progress."""
    root = make_node(tmp_path / "gpu-a", **SPEC)   # not compliant: it would be rolled
    hold(api, "roll-other-engineer", cordon=["gpu-b"])
    before, since = tree(root), len(api.calls())
    code, text = run(api, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)})
    assert code != 0, text[-3000:]
    assert re.search(r"another roll holds the Lease rke2-numa-system/rke2-numa-roll: roll-other-engineer since \S+ \(renewed \S+, "
                     r"expires in 5[0-9][0-9] s\), on gpu-b; nothing was changed", text), text[-3000:]
    assert "a roll is in progress: roll-other-engineer since" in text, "the check before it says so"
    assert writes(api, since) == [] and lease_writes(api) == [("create", 201)], "only the other roll's own create, by hand"
    assert not api.node("gpu-a")["unschedulable"] and tree(root) == before
    assert lease(api)["spec"]["holderIdentity"] == "roll-other-engineer"

    for playbook, extra in (("check.yml", ["-e", "rke2_numa_report_dir=%s" % (tmp_path / "report")]), ("rolling.yml", ["--check"])):
        since = len(api.calls())
        code, text = run(api, tmp_path, playbook, {"gpu-a": node_vars(root)}, *extra)
        assert "a roll is in progress: roll-other-engineer since" in text and ", on gpu-b" in text, (playbook, text[-3000:])
        assert [c for c in api.calls()[since:] if c["method"] != "GET" and "selfsubject" not in c["path"]] == [], "read-only: no Lease write"
    fleet = json.loads((tmp_path / "report" / "fleet.json").read_text())
    assert fleet["roll_in_progress"]["busy"] and fleet["roll_in_progress"]["holder"] == "roll-other-engineer"
    assert fleet["roll_in_progress"]["nodes"] == ["gpu-b"]
    page, summary = (tmp_path / "report" / "index.html").read_text(), (tmp_path / "report" / "summary.md").read_text()
    assert '<p class="notice" id="roll-in-progress"><b>a roll is in progress: roll-other-engineer since ' in page
    assert "**a roll is in progress: roll-other-engineer since " in summary


def test_a_roll_told_to_wait_takes_the_lease_once_the_other_roll_gives_it_back(api, tmp_path):
    root = make_node(tmp_path / "gpu-a", **SPEC)
    hold(api, "roll-scheduled", cordon=["gpu-b"])
    argv, env = command(api, inventory(api, tmp_path, {"gpu-a": node_vars(root)}, rke2_numa_roll_lock_wait=120,
                                       rke2_numa_roll_id="roll-manual", rke2_numa_report_dir=str(tmp_path / "report")), "rolling.yml")
    waiting = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 90
    while time.time() < deadline and len([c for c in api.calls() if c["path"].endswith("/leases/" + NAME) and c["method"] == "GET"]) < 3:
        time.sleep(0.5)   # the hold's own read, the check's, then the roll's first attempt
    assert waiting.poll() is None, "it waits"
    assert lease(api)["spec"]["holderIdentity"] == "roll-scheduled"
    # the other roll ends: gpu-b back in service, its marker gone, the Lease given back (an empty holder)
    with api.edit("gpu-b") as node:
        node["unschedulable"] = False
        node["annotations"] = {}
    hold(api, "", duration=1)
    out, dummy = waiting.communicate(timeout=300)
    text = " ".join(out.split())
    assert "roll roll-manual took the Lease rke2-numa-system/rke2-numa-roll (free)" in text, text[-3000:]
    assert "roll roll-manual: held the Lease rke2-numa-system/rke2-numa-roll" in text
    assert lease(api)["spec"]["holderIdentity"] == "", "given back at the end"
    assert lease(api)["spec"]["leaseTransitions"] == 1
    # fleet.json: the fleet as the check saw it, and what the roll did, under its id
    roll = json.loads((tmp_path / "report" / "fleet.json").read_text())["roll"]
    assert roll["id"] == "roll-manual" and roll["lease"] == "rke2-numa-system/rke2-numa-roll" and not roll["check_mode"], roll
    assert roll["hosts"] == {"failed": ["gpu-a"], "remaining": [], "blocked": []}, "a node copy has no rke2-agent to restart"
    assert roll["failed"] and roll["msg"].startswith("the roll stopped: gpu-a: "), roll


def test_a_killed_roll_holds_until_its_lease_expires_then_the_next_roll_takes_over_and_starts_with_its_nodes(api, tmp_path):
    """A roll killed with SIGKILL while it holds the Lease: before expiry the next roll refuses; after it (renewTime +
    leaseDurationSeconds in the past), the next roll takes the Lease over from the dead roll and starts with the
    Node the dead roll left cordoned (its marker), before any other."""
    roots = {name: make_node(tmp_path / name, **SPEC) for name in ("gpu-a", "gpu-b")}
    hosts = {name: node_vars(root) for name, root in roots.items()}
    # a kubectl whose capacity read (the roll play's, after the Lease is taken) hangs: the roll is killed there
    slow = tmp_path / "slow-kubectl"
    count = tmp_path / "reads"
    slow.write_text('#!/bin/sh\ncase "$*" in *"get nodes,pods --all-namespaces -o json")\n  echo x >> %s\n'
                    '  if [ "$(wc -l < %s)" -ge 2 ]; then sleep 600; fi ;;\nesac\nexec %s "$@"\n' % (count, count, KUBECTL))
    slow.chmod(0o755)
    argv, env = command(api, inventory(api, tmp_path, hosts, kubectl=str(slow), rke2_numa_roll_id="roll-dies"), "rolling.yml")
    dying = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and not (count.exists() and len(count.read_text().split()) >= 2):
        time.sleep(0.5)
    assert count.exists() and len(count.read_text().split()) >= 2, "the roll reached its capacity read"
    os.killpg(dying.pid, signal.SIGKILL)
    dying.wait()
    assert lease(api)["spec"]["holderIdentity"] == "roll-dies", "a dead roll gives nothing back"
    # what it had out: gpu-b, cordoned with its marker
    with api.edit("gpu-b") as node:
        node["unschedulable"] = True
        node["annotations"] = {CORDONED: "roll-dies"}

    since = len(api.calls())
    code, text = run(api, tmp_path, "rolling.yml", hosts, rke2_numa_roll_id="roll-next")
    assert code != 0 and "another roll holds the Lease rke2-numa-system/rke2-numa-roll: roll-dies since" in text, text[-3000:]
    assert ", on gpu-b; nothing was changed" in text and writes(api, since) == []
    assert "only when you know that run is gone (its controller killed, its AWX job cancelled), pick it up now: rerun with " \
        "-e rke2_numa_roll_id=roll-dies -e rke2_numa_roll_resume=true - it resumes that roll, the Nodes it left cordoned " \
        "first" in text, text[-3000:]

    # the way back the refusal names, at once (the Lease still live): the same id holds it and starts with its node
    code, text = run(api, tmp_path, "rolling.yml", hosts, rke2_numa_roll_id="roll-dies", rke2_numa_roll_resume=True)
    assert "another roll holds the Lease rke2-numa-system" not in text, text[-3000:]
    assert "roll roll-dies renewed the Lease rke2-numa-system/rke2-numa-roll" in text, text[-3000:]
    started = re.findall(r"(gpu-[ab]): (?:starting|resuming)", text)
    assert started and started[0] == "gpu-b", text[-3000:]
    assert lease(api)["spec"]["holderIdentity"] == "", "given back at its end"
    # as the dead roll left it, for the takeover after expiry below
    with api.edit("gpu-b") as node:
        node["unschedulable"] = True
        node["annotations"] = {CORDONED: "roll-dies"}
    spec = lease(api)["spec"]
    hold(api, "roll-dies", seconds_ago=5, duration=spec["leaseDurationSeconds"] or 3300)

    # its Lease expires: renewed long ago by its holder's clock, yet live for the next roll until that roll has watched it
    # unchanged for its leaseDurationSeconds (client-go's observedTime) - a roll that waits (rke2_numa_roll_lock_wait)
    # takes it over then, and starts with the dead roll's node
    hold(api, "roll-dies", seconds_ago=3600, duration=12)
    code, text = run(api, tmp_path, "rolling.yml", hosts, rke2_numa_roll_id="roll-next")
    assert code != 0 and "another roll holds the Lease rke2-numa-system/rke2-numa-roll: roll-dies since" in text, text[-3000:]
    assert "but a Lease expires for this run only once it has seen it unchanged for its 12 s" in text, text[-3000:]
    code, text = run(api, tmp_path, "rolling.yml", hosts, rke2_numa_roll_id="roll-next", rke2_numa_roll_lock_wait=60)
    assert "roll roll-next took the Lease rke2-numa-system/rke2-numa-roll from the dead roll roll-dies (unchanged for " in text, text[-3000:]
    started = re.findall(r"(gpu-[ab]): (?:starting|resuming)", text)
    assert started and started[0] == "gpu-b", text[-3000:]
    assert lease(api)["spec"]["leaseTransitions"] == 1 and lease(api)["spec"]["holderIdentity"] == ""


def test_a_controller_whose_clock_runs_ahead_never_takes_a_live_lease(api, tmp_path):
    """The holder renewed its Lease 5 s ago; this controller's clock runs 10 minutes ahead of the holder's - written
    here as the holder's renewTime 10 minutes and 5 s back, the difference such a controller sees: renewTime +
    leaseDurationSeconds (300 s) is in this controller's past. The roll refuses all the same and writes nothing; the
    Lease stays the holder's (the old rule, the holder's renewTime against this clock, took it over)."""
    root = make_node(tmp_path / "gpu-a", **SPEC)
    hold(api, "roll-live", seconds_ago=600 + 5, duration=300, cordon=["gpu-b"])
    since = len(api.calls())
    code, text = run(api, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)}, rke2_numa_roll_id="roll-fast-clock")
    assert code != 0 and "another roll holds the Lease rke2-numa-system/rke2-numa-roll: roll-live since" in text, text[-3000:]
    assert "nothing was changed" in text and writes(api, since) == []
    assert lease(api)["spec"]["holderIdentity"] == "roll-live"


def test_a_roll_that_lost_its_lease_stops_before_its_next_batch(api, tmp_path):
    """The Lease taken away while a batch works (another holder written by hand): before the next batch's cordon the
    renewal sees it, the roll stops there and says so, writes nothing more, and leaves kured and the Lease alone."""
    roots = {name: make_node(tmp_path / name, **SPEC) for name in ("gpu-a", "gpu-b")}
    hosts = {name: node_vars(root) for name, root in roots.items()}
    # gpu-a's batch stalls in its capacity read until the Lease is taken away, then goes on (and fails at the preflight)
    gate = tmp_path / "gate"
    count = tmp_path / "reads"
    slow = tmp_path / "slow-kubectl"
    slow.write_text('#!/bin/sh\ncase "$*" in *"get nodes,pods --all-namespaces -o json")\n  echo x >> %s\n'
                    '  if [ "$(wc -l < %s)" -eq 2 ]; then while [ ! -e %s ]; do sleep 0.2; done; fi ;;\nesac\nexec %s "$@"\n'
                    % (count, count, gate, KUBECTL))
    slow.chmod(0o755)
    argv, env = command(api, inventory(api, tmp_path, hosts, kubectl=str(slow), rke2_numa_roll_id="roll-loser",
                                       rke2_numa_max_fail_percentage=100, rke2_numa_roll_order="sorted"), "rolling.yml")
    rolling = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not (count.exists() and len(count.read_text().split()) >= 2):
        time.sleep(0.5)
    hold(api, "roll-thief")
    gate.write_text("go")
    out, dummy = rolling.communicate(timeout=300)
    text = " ".join(out.split())
    assert rolling.returncode != 0
    assert "roll roll-loser lost the Lease rke2-numa-system/rke2-numa-roll to roll-thief since" in text, text[-3000:]
    assert "the roll stops before its next write" in text
    assert "gpu-b: starting" not in text and not api.node("gpu-b")["unschedulable"], "the next batch never started"
    assert lease(api)["spec"]["holderIdentity"] == "roll-thief", "never given back: it is not ours"


def test_the_batch_size_set_in_group_vars_is_the_one_the_roll_uses(api, tmp_path):
    """rke2_numa_serial: 2 in the inventory's group vars: validated by the inputs check and used by the roll play (its
    serial keyword alone does not see group vars: the batch was 1) - both nodes start in the first batch."""
    roots = {name: make_node(tmp_path / name, **SPEC) for name in ("gpu-a", "gpu-b")}
    code, text = run(api, tmp_path, "rolling.yml", {name: node_vars(root) for name, root in roots.items()}, rke2_numa_serial=2)
    assert code != 0   # both stop at the preflight: no systemd here
    assert "gpu-a: starting - " in text and "gpu-b: starting - " in text, text[-3000:]
    assert '"progress: 0 of 2 nodes done, 2 failed, 0 remaining; no node done yet (30 min per node assumed)"' in text, \
        "the progress line at the end of the roll"
    code, text = run(api, tmp_path, "rolling.yml", {name: node_vars(root) for name, root in roots.items()},
                     "-e", "rke2_numa_max_fail_percentage=100", "-e", "rke2_numa_window_end=2099-01-01T00:00:00Z")
    assert "gpu-a: starting - " in text and "gpu-b: starting - " in text, "serial 1, every failure allowed: two batches"
    assert re.search(r'"progress: 0 of 2 nodes done, 1 failed, 1 remaining; no node done yet \(30 min per node assumed\); '
                     r'estimated end \S+ \(the window ends 2099-01-01T00:00Z: fits\)"', text), "the line before the second batch"
    code, text = run(api, tmp_path, "rolling.yml", {name: node_vars(root) for name, root in roots.items()})
    assert "gpu-a: starting - " in text and "gpu-b: starting - " not in text, "serial 1: the first failure stops the roll"
    assert "progress: 0 of 2 nodes done, 1 failed, 1 remaining" in text


def test_a_write_a_sibling_run_beat_is_tried_again_not_a_stop(api, tmp_path):
    """Runs that share a roll id (AWX slices) renew one Lease: another run's write between this run's read and its write
    makes the write a 409 Conflict; the run reads again and writes again instead of stopping."""
    from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
    from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply
    root = make_node(tmp_path / "gpu-a", **SPEC)
    comply(root, make_plan(read_topology(str(root))))
    with api.edit("gpu-a") as node:
        node["annotations"] = {CORDONED: "roll-shared"}   # schedulable: a stale marker, cleared (a write: the Lease first)
    hold(api, "roll-shared")
    flag = tmp_path / "sibling-wrote"
    racing = tmp_path / "racing-kubectl"
    racing.write_text('#!/bin/sh\ncase "$*" in *" replace "*)\n  if [ ! -e %s ]; then touch %s; %s --kubeconfig %s annotate lease %s -n %s '
                      '--overwrite sibling=renewed >/dev/null; fi ;;\nesac\nexec %s "$@"\n'
                      % (flag, flag, KUBECTL, api.kubeconfig, NAME, NS, KUBECTL))
    racing.chmod(0o755)
    argv, env = command(api, inventory(api, tmp_path, {"gpu-a": node_vars(root)}, kubectl=str(racing), rke2_numa_roll_id="roll-shared"),
                        "rolling.yml")
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    code, text = out.returncode, " ".join((out.stdout + out.stderr).split())
    assert code == 0, text[-3000:]
    assert flag.exists() and ("update", 409) in lease_writes(api), "the sibling's write made ours a conflict"
    assert lease_writes(api)[-1] == ("update", 200) and lease(api)["spec"]["holderIdentity"] == "", "taken again, then given back"
    assert api.node("gpu-a")["annotations"] == {}


def test_two_limit_halves_of_one_roll_never_have_two_nodes_out(api, tmp_path):
    """Two runs of one roll id started by hand with --limit (no localhost in it: their summaries still run) and
    rke2_numa_max_unavailable 1: while the first has gpu-a's slot (stalled after its claim), the second's gpu-b waits
    for a slot; once the first ends (its slot freed, the Lease given back) the second takes the Lease again and gpu-b
    gets the slot. Every Lease write the API accepted holds at most one slot; both runs start their node; the Lease
    is given back at the end."""
    roots = {name: make_node(tmp_path / name, **SPEC) for name in ("gpu-a", "gpu-b")}
    hosts = {name: node_vars(root) for name, root in roots.items()}
    path = inventory(api, tmp_path, hosts, rke2_numa_roll_id="roll-halves", rke2_numa_max_unavailable=1)
    writes_log, gate = tmp_path / "lease-writes", tmp_path / "gate"

    def wrapper(name, stall):
        count = tmp_path / (name + ".reads")
        return lease_logging_kubectl(tmp_path / name, writes_log, count, gate if stall else None), count

    first_kubectl, first_reads = wrapper("first-kubectl", True)
    second_kubectl, dummy = wrapper("second-kubectl", False)
    outputs = {}
    procs = {}
    for half, kubectl in (("gpu-a", first_kubectl), ("gpu-b", second_kubectl)):
        argv, env = command(api, path, "rolling.yml", "--limit", half, "-e", "rke2_numa_kubectl=%s" % kubectl)
        outputs[half] = open(tmp_path / (half + ".out"), "w")
        procs[half] = subprocess.Popen(argv, env=env, stdout=outputs[half], stderr=subprocess.STDOUT, text=True)
        if half == "gpu-a":   # the first run claims gpu-a's slot and stalls in its capacity read
            deadline = time.time() + 120
            while time.time() < deadline and not (first_reads.exists() and len(first_reads.read_text().split()) >= 2):
                time.sleep(0.5)
            assert first_reads.exists() and len(first_reads.read_text().split()) >= 2, "the first run reached its capacity read"
    deadline = time.time() + 180
    while time.time() < deadline and "waiting up to" not in (tmp_path / "gpu-b.out").read_text():
        time.sleep(0.5)
    waiting = " ".join((tmp_path / "gpu-b.out").read_text().split())
    assert ("waiting up to 780 s for the roll's Lease rke2-numa-system/rke2-numa-roll (read every 10 s): no slot for gpu-b: "
            "rke2_numa_max_unavailable 1 allows 1 Node out and 1 is out") in waiting, waiting[-3000:]
    slots = json.loads(lease(api)["metadata"]["annotations"]["rke2-numa.maitred.io/slots"])
    assert slots["roll"] == "roll-halves" and list(slots["claims"]) == ["gpu-a"], "gpu-b waits: one slot, gpu-a's"
    assert not api.node("gpu-b")["unschedulable"]
    gate.write_text("go")
    for half, proc in procs.items():
        proc.wait(timeout=400)
        outputs[half].close()
    texts = {half: " ".join((tmp_path / (half + ".out")).read_text().split()) for half in procs}
    assert "gpu-a: starting - " in texts["gpu-a"] and "gpu-b: starting - " in texts["gpu-b"], texts["gpu-b"][-3000:]
    for half, text in texts.items():
        assert "roll roll-halves: held the Lease rke2-numa-system/rke2-numa-roll" in text, (half, text[-3000:])
    accepted = [json.loads(line.split("\t", 1)[1]) for line in writes_log.read_text().splitlines() if line.startswith("0\t")]
    claimed = [sorted(json.loads((w["metadata"].get("annotations") or {}).get("rke2-numa.maitred.io/slots", '{"claims": {}}'))["claims"])
               for w in accepted]
    assert ["gpu-a"] in claimed and ["gpu-b"] in claimed and max(len(c) for c in claimed) == 1, claimed
    assert claimed.index(["gpu-b"]) > claimed.index(["gpu-a"])
    assert lease(api)["spec"]["holderIdentity"] == "" and not (lease(api)["metadata"].get("annotations") or {}).get("rke2-numa.maitred.io/slots")


def test_labels_and_prove_refuse_to_write_on_a_node_a_live_roll_holds(api, tmp_path):
    """Another roll holds the Lease and has gpu-a out (its marker, cordoned): labels.yml and prove.yml write nothing on
    gpu-a (no label, no probe pod) and fail naming the roll; gpu-b, which no roll holds, is labelled."""
    from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
    from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply
    roots = {name: make_node(tmp_path / name, **SPEC) for name in ("gpu-a", "gpu-b")}
    for root in roots.values():
        comply(root, make_plan(read_topology(str(root))))
    hosts = {name: node_vars(root) for name, root in roots.items()}
    hold(api, "roll-at-work", cordon=["gpu-a"])
    since = len(api.calls())
    code, text = run(api, tmp_path, "labels.yml", hosts, rke2_numa_labels_via="kubectl")
    assert code != 0, text[-3000:]
    assert "gpu-a: not labelled, nothing written on it - a roll is in progress: roll-at-work since" in text, text[-3000:]
    node_writes = [c for c in writes(api, since) if "/nodes/" in c["path"]]
    assert node_writes and all("/nodes/gpu-b" in c["path"] for c in node_writes), node_writes
    assert "rke2-numa.maitred.io/plan" in api.node("gpu-b")["labels"] and "rke2-numa.maitred.io/plan" not in api.node("gpu-a")["labels"]

    since = len(api.calls())
    code, text = run(api, tmp_path, "prove.yml", {"gpu-a": hosts["gpu-a"]}, rke2_numa_prove=True)
    assert code != 0 and "gpu-a: not probed, nothing written - a roll is in progress: roll-at-work since" in text, text[-3000:]
    assert writes(api, since) == [], "no probe pod"


def test_labels_kubectl_wrote_are_withdrawn_whichever_way_labels_go_now_and_the_check_flags_them(api, tmp_path):
    """gpu-a (runs its plan) and gpu-b (does not) carry our labels kubectl wrote. With rke2_numa_labels_via none (or
    nfd) check.yml flags them; labels.yml removes them from both (gpu-b's are withdrawn: it does not run its plan;
    gpu-a's: none publishes nothing) and keeps every label that is not ours; the check is then clean of them."""
    from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
    from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply
    roots = {name: make_node(tmp_path / name, **SPEC) for name in ("gpu-a", "gpu-b")}
    comply(roots["gpu-a"], make_plan(read_topology(str(roots["gpu-a"]))))
    hosts = {name: node_vars(root) for name, root in roots.items()}
    code, text = run(api, tmp_path, "labels.yml", {"gpu-a": hosts["gpu-a"]}, rke2_numa_labels_via="kubectl")
    assert code == 0 and "rke2-numa.maitred.io/plan" in api.node("gpu-a")["labels"], text[-3000:]
    ours = {k: v for k, v in api.node("gpu-a")["labels"].items() if k.startswith("rke2-numa.maitred.io/")}
    with api.edit("gpu-b") as node:   # an earlier plan's labels, written with kubectl
        node["labels"] = dict(node.get("labels") or {}, **ours, team="ml")
    report = tmp_path / "report"
    code, text = run(api, tmp_path, "check.yml", hosts, "-e", "rke2_numa_report_dir=%s" % report, rke2_numa_labels_via="none")
    assert "the Node carries NUMA labels kubectl wrote (an earlier rke2_numa_labels_via=kubectl) that rke2_numa_labels_via=none does not " \
           "publish: rke2-numa.maitred.io/" in text, text[-3000:]
    assert "gpu-a: compliant" not in text

    code, text = run(api, tmp_path, "labels.yml", hosts, rke2_numa_labels_via="none")
    assert code == 0, text[-3000:]
    for name in ("gpu-a", "gpu-b"):
        assert not [k for k in api.node(name)["labels"] if k.startswith("rke2-numa.maitred.io/")], name
    assert api.node("gpu-b")["labels"]["team"] == "ml"
    code, text = run(api, tmp_path, "check.yml", hosts, rke2_numa_labels_via="none")
    assert "gpu-a: compliant" in text and "kubectl wrote" not in text, text[-3000:]
