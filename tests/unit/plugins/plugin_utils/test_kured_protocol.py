# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kured's lock as a protocol (plugin_utils/kured_protocol.py) against an API that behaves as the API server does for
``kubectl annotate --resource-version``: a write carrying a resourceVersion that is no longer the DaemonSet's is a 409
Conflict; between our read and our write, kured or the DaemonSet controller may write."""

from __future__ import annotations

import json

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kured_protocol import CALLS, call_args, kured_lock_step
from ansible_collections.maitred.rke2_numa.tests.unit.plugins.plugin_utils.test_maintainers import KEY, NOW, ds, single

CONFLICT = ('Error from server (Conflict): Operation cannot be fulfilled on daemonsets.apps "kured": the object has been '
            "modified; please apply your changes to the latest version and try again\n")


class Api(object):
    """kured's DaemonSet (kube-system/kured) and what happens to it between our read and our next write."""

    def __init__(self, annotations=None, meanwhile=()):
        self.ds = ds("kube-system", "kured", annotations or {}, image="ghcr.io/kubereboot/kured:1.17.1")
        self.ds["metadata"]["resourceVersion"] = "10"
        self.meanwhile = list(meanwhile)   # per write: a function of the DaemonSet run before it (another writer)
        self.calls = []

    def bump(self):
        meta = self.ds["metadata"]
        meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)

    def run(self, name, target=None):
        self.calls.append(name)
        if name == "read":
            return {"rc": 0, "stdout": json.dumps({"items": [self.ds]}), "stderr": ""}
        args = call_args(name, {}, target)
        if self.meanwhile:
            self.meanwhile.pop(0)(self)
        if "--resource-version=%s" % self.ds["metadata"]["resourceVersion"] not in args["options"]:
            return {"rc": 1, "stdout": "", "stderr": CONFLICT}
        key, sign, value = args["arguments"][0].partition("=")
        annotations = self.ds["metadata"].setdefault("annotations", {})
        if sign:
            annotations[key] = value
        else:
            annotations.pop(key[:-1], None)
        self.bump()
        return {"rc": 0, "stdout": "daemonset.apps/kured annotated\n", "stderr": ""}


def step(api, mode, roll="roll-a"):
    return kured_lock_step(mode, api.run, "auto", [roll], ttl=600, clock=lambda: NOW, sleep=lambda s: None, rand=lambda a, b: a)


def test_held_then_given_back_in_kureds_format():
    api = Api()
    out = step(api, "hold")
    assert not out["failed"] and out["done"] == [{"daemonset": "kube-system/kured", "namespace": "kube-system", "name": "kured",
                                                  "annotation": KEY}]
    assert json.loads(api.ds["metadata"]["annotations"][KEY])["nodeID"] == "rke2-numa.maitred.io/roll/roll-a"
    assert api.calls == ["read", "annotate"]
    out = step(api, "release")
    assert not out["failed"] and KEY not in api.ds["metadata"]["annotations"]


def test_a_status_update_in_between_is_read_again_and_the_lock_still_taken():
    """The DaemonSet controller wrote its status after our read (a new resourceVersion): before, the roll stopped."""
    api = Api(meanwhile=[Api.bump])
    out = step(api, "hold")
    assert not out["failed"] and out["attempts"] == 2 and api.calls == ["read", "annotate", "read", "annotate"]
    assert KEY in api.ds["metadata"]["annotations"]


def test_a_lock_kured_took_in_between_is_never_overwritten_and_the_hold_fails_naming_it():
    def kured_takes_it(api):
        api.ds["metadata"]["annotations"][KEY] = single("gpu-b")
        api.bump()

    api = Api(meanwhile=[kured_takes_it])
    out = step(api, "hold")
    assert out["failed"] and out["done"] == []
    assert out["msg"].startswith("kured's lock on kube-system/kured was taken by someone else since it was read; the roll stops")
    assert json.loads(api.ds["metadata"]["annotations"][KEY])["nodeID"] == "gpu-b"


def test_kureds_own_lock_is_left_alone_and_a_release_keeps_it():
    api = Api({KEY: single("gpu-b")})
    assert step(api, "hold") == {"failed": False, "msg": "", "done": [], "attempts": 1, "calls": ["read"]}
    assert step(api, "release")["done"] == [] and json.loads(api.ds["metadata"]["annotations"][KEY])["nodeID"] == "gpu-b"


def test_a_refused_write_and_an_unreadable_list_stop_naming_why():
    api = Api()
    api.run = lambda name, target=None: ({"rc": 0, "stdout": json.dumps({"items": [api.ds]}), "stderr": ""} if name == "read" else
                                         {"rc": 1, "stdout": "", "stderr": 'Error from server (Forbidden): daemonsets.apps "kured" is forbidden\n'})
    out = kured_lock_step("hold", api.run, "auto", ["roll-a"], ttl=600)
    assert out["failed"] and "kured's lock on kube-system/kured:" in out["msg"] and "forbidden" in out["msg"]
    out = kured_lock_step("release", lambda name, target=None: {"rc": 1, "stdout": "", "stderr": "Unable to connect to the server\n"},
                          "auto", ["roll-a"])
    assert out["failed"] and out["msg"].startswith("kured's DaemonSets could not be read: ")


def test_every_write_beaten_gives_up_after_the_attempts():
    api = Api(meanwhile=[Api.bump] * 20)
    out = kured_lock_step("release", api.run, "auto", ["roll-a"], attempts=3, sleep=lambda s: None)
    assert not out["failed"], "nothing of ours to give back: no write"
    api = Api(meanwhile=[Api.bump] * 20)
    out = kured_lock_step("hold", api.run, "auto", ["roll-a"], ttl=600, attempts=3, sleep=lambda s: None)
    assert out["failed"] and out["attempts"] == 3 and "written by someone else at each of 3 attempts" in out["msg"]


def test_the_calls_table_is_what_the_action_runs():
    assert sorted(CALLS) == ["annotate", "read"]
    args = call_args("annotate", {"kubeconfig": "/k"}, {"namespace": "n", "name": "d", "resource_version": "7", "annotation": "a/b", "value": None})
    assert args["arguments"] == ["a/b-"] and args["options"] == ["--overwrite", "--resource-version=7"] and args["kubeconfig"] == "/k"
