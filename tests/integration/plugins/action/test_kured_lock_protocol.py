# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kured's lock as the kured_lock action holds and gives it back (plugin_utils/kured_protocol.py), with the real kubectl
against the API stand-in: its 409 Conflict on an annotate whose --resource-version is stale comes from the server, as
kubectl prints it. Races are made by a writer that writes kured's DaemonSet between the protocol's read and its
write: the DaemonSet controller (a label, a new resourceVersion) or kured itself (its own lock)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import kured_protocol
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubectl import call_argv
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.run_command import run_here
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBECTL, gpu_fleet, needs_kubectl

pytestmark = needs_kubectl
KEY = "weave.works/kured-node-lock"
KURED_LOCK = json.dumps({"nodeID": "gpu-b", "metadata": {"unschedulable": False}, "created": "2026-12-07T03:00:00Z", "TTL": 0})


@pytest.fixture
def api(tmp_path):
    for cluster in gpu_fleet(tmp_path, ("gpu-a", "gpu-b")):
        (tmp_path / "state" / "daemonsets.json").write_text(json.dumps([{
            "namespace": "kube-system", "name": "kured", "labels": {"app.kubernetes.io/name": "kured"},
            "containers": [{"name": "kured", "image": "ghcr.io/kubereboot/kured:1.17.1", "command": ["/usr/bin/kured"]}]}]))
        yield cluster


def kured(api):
    got = api.kubectl("get", "daemonset", "kured", "-n", "kube-system", "-o", "json")
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)["metadata"]


def step(api, mode, before_write=None, roll_id="roll-a", **kwargs):
    """The protocol step as the action runs it on the controller: each call's argv (plugin_utils/kubectl.py) run here;
    ``before_write()``: another writer's turn just before each annotate."""
    lock = {"kubectl": KUBECTL, "kubeconfig": api.kubeconfig}

    def run(name, target=None):
        if before_write and name == "annotate":
            before_write()
        return run_here(call_argv(kured_protocol.call_args(name, lock, target)), api.env)

    return kured_protocol.kured_lock_step(mode, run, "auto", [roll_id], ttl=600, sleep=lambda s: None, **kwargs)


def test_held_in_kureds_format_and_given_back(api):
    held = step(api, "hold")
    assert not held["failed"] and held["calls"] == ["read", "annotate"], held
    assert json.loads(kured(api)["annotations"][KEY])["nodeID"] == "rke2-numa.maitred.io/roll/roll-a"
    given = step(api, "release")
    assert not given["failed"] and given["done"] == held["done"] and KEY not in (kured(api).get("annotations") or {})


def test_a_write_of_the_daemonset_in_between_is_a_409_read_again_and_the_lock_still_held(api):
    """The DaemonSet changed between the read and the annotate (a new resourceVersion, not kured's lock): the server's
    Conflict, then a fresh read and the lock taken at attempt 2 - before, the roll stopped there."""
    writes = []

    def controller():
        if not writes:
            writes.append(api.kubectl("label", "daemonset", "kured", "-n", "kube-system", "--overwrite", "pod-template-generation=2"))
            assert writes[0].returncode == 0, writes[0].stderr

    held = step(api, "hold", controller)
    assert not held["failed"] and held["attempts"] == 2 and held["calls"] == ["read", "annotate", "read", "annotate"], held
    assert json.loads(kured(api)["annotations"][KEY])["nodeID"] == "rke2-numa.maitred.io/roll/roll-a"


def test_a_lock_kured_took_in_between_is_never_overwritten(api):
    def kured_takes_it():
        got = api.kubectl("annotate", "daemonset", "kured", "-n", "kube-system", "--overwrite", "%s=%s" % (KEY, KURED_LOCK))
        assert got.returncode == 0, got.stderr

    held = step(api, "hold", kured_takes_it)
    assert held["failed"] and held["done"] == [], held
    assert held["msg"].startswith("kured's lock on kube-system/kured was taken by someone else since it was read; the roll stops")
    assert kured(api)["annotations"][KEY] == KURED_LOCK
    given = step(api, "release")
    assert not given["failed"] and given["done"] == [] and kured(api)["annotations"][KEY] == KURED_LOCK, "kured's own lock is kept"
