# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each branch of the roll's Lease protocol (plugin_utils/lease_protocol.py, what the roll_lease action runs), with the
real kubectl against the API stand-in: its 409s (AlreadyExists on a create someone beat, Conflict on a replace whose
resourceVersion is stale) come from the server, as kubectl prints them. Races are made by a writer that writes the
Lease between the protocol's read and its write; time (pauses, waits) is a fake clock."""

from __future__ import annotations

import json

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import lease_protocol
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubectl import call_argv
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_lease import micro_time
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.run_command import run_here
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBECTL, gpu_fleet, needs_kubectl

pytestmark = needs_kubectl
NS = "rke2-numa-system"
NAME = "rke2-numa-roll"


@pytest.fixture
def api(tmp_path):
    yield from gpu_fleet(tmp_path, ("gpu-a", "gpu-b"))


class Clock(object):
    """The protocol's time: ``sleep`` moves it on, nothing waits."""

    def __init__(self, api, start):
        self.api, self.now, self.slept = api, start, []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def roll(api, roll_id="roll-a", run="aaaa1111", **extra):
    return dict({"id": roll_id, "run": run, "namespace": NS, "name": NAME, "kubectl": KUBECTL, "kubeconfig": api.kubeconfig,
                 "lease_seconds": 900, "lock_wait": 0, "marker": "rke2-numa.maitred.io/cordoned", "failed": "rke2-numa.maitred.io/failed",
                 "max_unavailable": 1, "nodes": ["gpu-a"], "resume": False}, **extra)


def lease(api):
    got = api.kubectl("get", "lease", NAME, "-n", NS, "--ignore-not-found", "-o", "json")
    return json.loads(got.stdout) if got.stdout.strip() else None


def write(api, holder, now, duration=600):
    """Another writer: the Lease held by ``holder`` (renewed at ``now``), created or replaced with the version read."""
    current = lease(api)
    spec = {"holderIdentity": holder, "leaseDurationSeconds": duration, "acquireTime": micro_time(now), "renewTime": micro_time(now),
            "leaseTransitions": (current or {}).get("spec", {}).get("leaseTransitions", 0)}
    body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": NAME, "namespace": NS}, "spec": spec}
    if current:
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    done = api.kubectl("replace" if current else "create", "--validate=false", "-f", "-", stdin=json.dumps(body))
    assert done.returncode == 0, done.stderr


def runner(api, the_roll, before_write=None):
    """run(call, stdin): the call's argv (the kubectl action's, plugin_utils/kubectl.py) run as the action runs it on
    the controller; ``before_write(call)``: another writer's turn just before each write."""
    def run(call, stdin=None):
        if before_write and call in lease_protocol.WRITES.values():
            before_write(call)
        argv = call_argv(lease_protocol.call_args(call, the_roll, stdin))
        return run_here(argv, api.env, stdin)
    return run


def step(api, the_roll, mode, clock, before_write=None, **kwargs):
    return lease_protocol.lease_protocol_step(mode, the_roll, runner(api, the_roll, before_write), clock=clock.clock, sleep=clock.sleep,
                                              rand=lambda low, high: low, **kwargs)


def test_take_creates_renew_updates_release_gives_back(api):
    clock, mine = Clock(api, 1_800_000_000.0), roll(api)
    took = step(api, mine, "take", clock)
    assert not took["failed"] and took["written"] == "create" and took["calls"] == ["read", "create"], took
    assert lease(api)["spec"]["holderIdentity"] == "roll-a"
    assert took["roll"]["transitions"] == 0 and took["seen"] == {}
    mine = took["roll"]
    renewed = step(api, mine, "renew", clock, claim=["gpu-a"])
    assert renewed["written"] == "update" and renewed["step"]["granted"] == ["gpu-a"], renewed
    assert renewed["calls"] == ["read", "nodes", "replace"]
    given = step(api, mine, "release", clock)
    assert given["written"] == "update" and given["roll"] is None and given["step"]["msg"] == "roll roll-a gave the Lease %s/%s back" % (NS, NAME)
    assert lease(api)["spec"]["holderIdentity"] == ""


def test_a_create_someone_beat_is_read_again_and_refused_naming_the_winner(api):
    """409 AlreadyExists from the server: the next attempt reads the Lease the other roll created, and refuses."""
    clock = Clock(api, 1_800_000_000.0)
    got = step(api, roll(api), "take", clock, before_write=lambda call: write(api, "roll-b", clock.now))
    assert got["failed"] and got["attempts"] == 2 and got["calls"] == ["read", "create", "read"], got
    assert got["lost"] == got["msg"] and got["msg"].startswith("another roll holds the Lease %s/%s: roll-b since" % (NS, NAME)), got["msg"]
    assert clock.slept == [lease_protocol.PAUSE[0]], "a pause before the second attempt"
    assert lease(api)["spec"]["holderIdentity"] == "roll-b"


def test_a_replace_someone_beat_is_tried_again_from_a_fresh_read(api):
    """409 Conflict (the resourceVersion read is stale): read again, decide again, written on the second attempt."""
    clock, mine = Clock(api, 1_800_000_000.0), roll(api)
    mine = step(api, mine, "take", clock)["roll"]
    beaten = []

    def sibling(call):   # another run of the same roll renews it once, between this run's read and its write
        if not beaten:
            beaten.append(call)
            write(api, "roll-a", clock.now, duration=900)
    got = step(api, mine, "renew", clock, before_write=sibling, claim=["gpu-a"])
    assert not got["failed"] and got["attempts"] == 2 and got["calls"] == ["read", "nodes", "replace", "read", "nodes", "replace"], got
    assert json.loads(lease(api)["metadata"]["annotations"]["rke2-numa.maitred.io/slots"])["claims"]["gpu-a"]["run"] == "aaaa1111"


def test_every_write_beaten_gives_up_after_the_attempts_naming_them(api):
    clock, mine = Clock(api, 1_800_000_000.0), roll(api)
    mine = step(api, mine, "take", clock)["roll"]
    got = step(api, mine, "renew", clock, before_write=lambda call: write(api, "roll-a", clock.now, duration=900), attempts=3)
    assert got["failed"] and got["attempts"] == 3 and got["calls"].count("replace") == 3, got
    assert got["msg"] == ("the roll's Lease %s/%s was written by someone else at each of 3 attempts; nothing more was changed - "
                          "the roll stops before its next write" % (NS, NAME))
    assert got["lost"] is None


def test_a_renewal_after_another_roll_took_the_lease_is_lost(api):
    clock, mine = Clock(api, 1_800_000_000.0), roll(api)
    mine = step(api, mine, "take", clock)["roll"]
    write(api, "roll-thief", clock.now)
    got = step(api, mine, "renew", clock)
    assert got["failed"] and got["step"]["action"] == "lost" and got["calls"] == ["read"], got
    assert got["lost"].startswith("roll roll-a lost the Lease %s/%s to roll-thief since" % (NS, NAME)), got["lost"]


def test_a_fence_without_this_runs_slot_is_fenced_not_lost(api):
    clock, mine = Clock(api, 1_800_000_000.0), roll(api)
    mine = step(api, mine, "take", clock)["roll"]
    got = step(api, mine, "renew", clock, fence="gpu-a")
    assert got["failed"] and got["step"]["action"] == "fenced" and got["lost"] is None, got
    assert got["msg"] == "gpu-a: the Lease holds no slot of this run for gpu-a; no further step on it"
    claimed = step(api, mine, "renew", clock, claim=["gpu-a"])
    assert step(api, dict(mine, transitions=claimed["roll"]["transitions"]), "renew", clock, fence="gpu-a")["written"] == "update"


def test_an_expired_lease_is_taken_only_after_this_run_watched_it_for_its_duration(api):
    """client-go's observedTime: the dead roll's Lease is refused at first sight, watched (lock_wait) and taken."""
    clock = Clock(api, 1_800_000_000.0)
    write(api, "roll-dead", clock.now - 10_000, duration=60)
    first = step(api, roll(api), "take", clock)
    assert first["failed"] and first["step"]["action"] == "refuse" and first["seen"]["since"] == clock.now, first
    waited = step(api, roll(api, lock_wait=60), "take", clock, seen=first["seen"])
    assert not waited["failed"] and waited["written"] == "update" and waited["roll"]["adopted"] == ["roll-dead"], waited
    assert clock.slept == [10] * 6 and waited["calls"] == ["read"] * 7 + ["replace"], (clock.slept, waited["calls"])
    assert lease(api)["spec"]["leaseTransitions"] == 1 and lease(api)["spec"]["holderIdentity"] == "roll-a"


def test_a_release_while_another_run_has_a_node_out_keeps_the_lease(api):
    clock, mine = Clock(api, 1_800_000_000.0), roll(api)
    mine = step(api, mine, "take", clock)["roll"]
    with api.edit("gpu-b") as node:
        node["unschedulable"] = True
        node["annotations"] = {"rke2-numa.maitred.io/cordoned": "roll-a"}
    got = step(api, mine, "release", clock)
    assert not got["failed"] and got["step"]["msg"].startswith("the Lease %s/%s is kept: another run of roll roll-a still has gpu-b out" % (NS, NAME))
    assert lease(api)["spec"]["holderIdentity"] == "roll-a"


def test_an_unreadable_lease_and_a_refused_write_stop_naming_the_servers_words(api, tmp_path):
    clock = Clock(api, 1_800_000_000.0)
    broken = roll(api, kubeconfig=str(tmp_path / "missing"))
    got = step(api, broken, "take", clock)
    assert got["failed"] and got["calls"] == ["read"] and got["msg"].startswith("could not read the roll's Lease %s/%s: " % (NS, NAME)), got
    elsewhere = roll(api, namespace="not-there")
    got = step(api, elsewhere, "take", clock)
    assert got["failed"] and got["calls"] == ["read", "create"], got
    assert got["msg"].startswith("could not write the Lease not-there/%s (its namespace and the rights on it come with access.yml): " % NAME)
    assert 'namespaces "not-there" not found' in got["msg"], got["msg"]


def test_the_status_reason_is_read_from_kubectls_rendering_of_the_api_status():
    assert lease_protocol.status_reason('Error from server (Conflict): Operation cannot be fulfilled on leases "x"') == "Conflict"
    assert lease_protocol.status_reason("Error from server (AlreadyExists): leases \"x\" already exists") == "AlreadyExists"
    assert lease_protocol.status_reason("error: the body says (Conflict) somewhere") == ""
