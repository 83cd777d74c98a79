# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kured's reboot lock as the roll holds and gives it back, one step: read kured's DaemonSets, decide (the entries
plugin_utils/maintainers.py ``kured_lock_claims`` / ``kured_lock_releases`` write), annotate each DaemonSet carrying
the resourceVersion read - what the kured_lock action runs (plugins/action/kured_lock.py).

kured takes and gives back its lock the same way (kubereboot/kured pkg/daemonsetlock/daemonsetlock.go, v1.17:
``Acquire``/``Release`` read the DaemonSet, change the annotation and ``Update`` it; a 409 Conflict - someone wrote the
DaemonSet in between, kured or the DaemonSet controller's status - reads it again). So here: a write the API refuses
with Conflict (read from its status reason, lease_protocol.status_reason) is decided again from a fresh read after a
random pause of 1 to 4 s, ATTEMPTS times at most. A hold never overwrites: when the fresh read shows kured (or
another roll) holding a lock this step meant to take, the step fails naming it - the roll stops before its first
cordon. A release removes only this roll's entries (and those of the dead rolls it took over).

The calls are CALLS (kubectl action arguments; KURED stands for the DaemonSet's namespace, name, annotation and
resourceVersion, filled in per DaemonSet): the RBAC fixture (tests/fixtures/kubectl_calls.py) and make rbac read their
API requests from there. No I/O here: ``run(call, target)`` runs one of them.
"""

from __future__ import annotations

import random
import time

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubectl import ran_result
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.lease_protocol import ATTEMPTS, PAUSE, status_reason
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.maintainers import kured_lock_claims, kured_lock_releases

HOLD = "hold"           # the other mode, release, gives back
KURED = "<kured>"        # stands for the DaemonSet's namespace, name, resourceVersion and annotation in CALLS
CALLS = {
    "read": {"verb": "get", "kind": "daemonsets", "all_namespaces": True, "output": "json"},
    "annotate": {"verb": "annotate", "kind": "daemonset", "namespace": KURED, "names": [KURED],
                 "options": ["--overwrite", KURED], "arguments": [KURED]},
}


def call_args(call, lock, target=None):
    """The kubectl action's arguments of CALLS[call] (``lock``: kubectl, kubeconfig; ``target``: one entry of
    kured_lock_claims/kured_lock_releases - namespace, name, resource_version, annotation, value (None: remove it))."""
    args = dict(CALLS[call], kubectl=lock.get("kubectl") or "kubectl", kubeconfig=lock.get("kubeconfig"))
    if call == "annotate":
        target = target or {"namespace": "kube-system", "name": "kured", "resource_version": "1", "annotation": "kured/lock", "value": "{}"}
        value = target["annotation"] + ("-" if target.get("value") is None else "=" + target["value"])
        args.update(namespace=target["namespace"], names=[target["name"]], arguments=[value],
                    options=["--overwrite", "--resource-version=%s" % target["resource_version"]])
    return args


def kured_lock_step(mode, run, daemonset, roll_ids, ttl=0, attempts=ATTEMPTS, clock=time.time, sleep=time.sleep, rand=random.randint):
    """Hold (``mode`` hold: every free lock, for ``ttl`` s) or give back (release) kured's lock for the roll ``roll_ids``
    (this roll's id first, then the dead rolls it took over); ``daemonset``: rke2_numa_kured_daemonset (auto, ns/name,
    '' for none); ``run(call, target)`` runs CALLS[call] and returns ansible.builtin.command's answer.

    Returns {failed, msg, done: [{daemonset, namespace, name, annotation}] written, attempts, calls}."""
    out = {"failed": False, "msg": "", "done": [], "attempts": 0, "calls": []}
    wanted = None
    for attempt in range(1, max(1, int(attempts)) + 1):
        out["attempts"] = attempt
        if attempt > 1:
            sleep(rand(*PAUSE))
        got = _call(run, out, "read")
        if got["failed"]:
            return _fail(out, "kured's DaemonSets could not be read: %s" % got["msg"], mode)
        items = (got["object"] or {}).get("items") or []
        todo = _todo(mode, items, daemonset, roll_ids, clock(), ttl, out["done"])
        if mode == HOLD:
            wanted = set(t["daemonset"] for t in todo) if wanted is None else wanted
            taken = sorted(wanted - set(t["daemonset"] for t in todo) - set(d["daemonset"] for d in out["done"]))
            if taken:
                return _fail(out, "kured's lock on %s was taken by someone else since it was read" % ", ".join(taken), mode)
        beaten = False
        for target in todo:
            got = _call(run, out, "annotate", target)
            if not got["failed"]:
                out["done"].append(dict((k, target[k]) for k in ("daemonset", "namespace", "name", "annotation")))
            elif status_reason(got["stderr"]) == "Conflict":
                beaten = True
            else:
                return _fail(out, "kured's lock on %s: %s" % (target["daemonset"], got["msg"]), mode)
        if not beaten:
            return out
    return _fail(out, "kured's DaemonSet was written by someone else at each of %d attempts" % out["attempts"], mode)


def _todo(mode, items, daemonset, roll_ids, now, ttl, done):
    written = set(d["daemonset"] for d in done)
    if mode == HOLD:
        found = kured_lock_claims(items, daemonset, now, int(ttl), roll_ids)
    else:
        found = kured_lock_releases(items, daemonset, roll_ids)
    return [t for t in found if t["daemonset"] not in written]


def _call(run, out, name, target=None):
    out["calls"].append(name)
    return ran_result(CALLS[name]["verb"], CALLS[name].get("output"), run(name, target))


def _fail(out, why, mode):
    tail = ("; the roll stops before its first cordon (kured's lock is held while nodes are out)" if mode == HOLD
            else "; this roll's entries may still be there: kured reads them as held until their TTL")
    out.update(failed=True, msg=why + tail)
    return out
