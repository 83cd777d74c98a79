# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roll's Lease protocol, one step of it: read, decide, (wait,) write, and again when another writer beat the
write - what the roll_lease action runs (plugins/action/roll_lease.py); the decisions are plugin_utils/roll_lease.py's.

A step is client-go's tryAcquireOrRenew loop (k8s.io/client-go tools/leaderelection/leaderelection.go, v0.35.0:
``acquire``/``renew`` retry ``tryAcquireOrRenew`` on a jittered period; resourcelock/leaselock.go ``Create``/``Update``
carry the resourceVersion read): each write is a create (409 AlreadyExists when someone created it first) or a replace
carrying the resourceVersion just read (409 Conflict when someone wrote in between). A beaten write is tried again
from a fresh read after a random pause of 1 to 4 s, ATTEMPTS times at most (runs that share a roll renew it too: a
run that has just waited for a slot meets its sibling's burst of writes - uncordon, free, claim). The write's outcome
is read from the API's status reason, as kubectl prints it (k8s.io/kubectl pkg/cmd/util/helpers.go
``StandardErrorMessage``: "Error from server (<metav1.StatusReason>): ..."), never from the rest of its words.

The calls the protocol makes are CALLS (kubectl action arguments, the Lease's namespace and name filled in when it
runs): the RBAC fixture (tests/fixtures/kubectl_calls.py) and make rbac read their API requests from there, as they
read a kubectl task's. No I/O here: ``run(call, stdin)`` runs one of them (kubectl where the task runs), ``clock`` and
``sleep`` are the time.
"""

from __future__ import annotations

import json
import random
import re
import time

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubectl import ran_result
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_lease import (
    CREATE, FENCED, LOCK_POLL_SECONDS, LOST, REFUSE, UPDATE, LeaseError, lease_from_reply, lease_step, node_objects, observation)

ATTEMPTS = 10            # writes beaten in a row before a step gives up
PAUSE = (1, 4)           # s: the random pause before a write is tried again
LEASE = "<lease>"        # stands for the Lease's namespace and name in CALLS
NODE = "<node>"          # stands for the Node a fence reads (the roll's ``fence_node``) in CALLS
# The decisions (roll_lease.ACTIONS) that write, and those that stop the step.
WRITES = {CREATE: "create", UPDATE: "replace"}   # action -> the call that writes it
STOPS = (REFUSE, LOST, FENCED)
# The API status reasons (metav1.StatusReason) that say another writer was first: the step reads again.
BEATEN = ("AlreadyExists", "Conflict")
# step -> the kubectl action's arguments of the call (plugins/modules/kubectl.py; LEASE: the Lease's namespace/name).
CALLS = {
    "read": {"verb": "get", "kind": "lease", "namespace": LEASE, "names": [LEASE], "output": "json", "options": ["--ignore-not-found"]},
    "nodes": {"verb": "get", "kind": "nodes", "output": "json"},
    "node": {"verb": "get", "kind": "node", "names": [NODE], "output": "json"},   # a fence's: the Node read again first
    "create": {"verb": "create", "kind": "lease", "namespace": LEASE, "output": "json", "options": ["--validate=false"], "stdin": LEASE},
    "replace": {"verb": "replace", "kind": "lease", "namespace": LEASE, "output": "json", "options": ["--validate=false"], "stdin": LEASE},
}
_REASON = re.compile(r"^Error from server \((\w+)\):", re.MULTILINE)


def call_args(call, roll, stdin=None):
    """The kubectl action's arguments of CALLS[call] for the roll's Lease (``roll``: namespace, name, kubectl,
    kubeconfig)."""
    args = dict(CALLS[call], kubectl=roll.get("kubectl") or "kubectl", kubeconfig=roll.get("kubeconfig"))
    if args.get("namespace") == LEASE:
        args["namespace"] = roll["namespace"]
    if args.get("names") == [NODE]:
        args["names"] = [str(roll.get("fence_node") or "node")]   # checked with a stand-in name before the fence names it
    elif args.get("names"):
        args["names"] = [roll["name"]]
    if args.get("stdin") == LEASE:
        args["stdin"] = stdin
    return args


def status_reason(stderr):
    """The API status reason kubectl printed (``Conflict``, ``AlreadyExists``, ``Forbidden`` ...), '' when none."""
    found = _REASON.search(str(stderr or ""))
    return found.group(1) if found else ""


class _Step(object):
    """One protocol step's state across its attempts."""

    def __init__(self, mode, roll, run, clock, sleep, rand, note):
        self.mode, self.roll, self.run, self.clock, self.sleep, self.rand, self.note = mode, roll, run, clock, sleep, rand, note
        self.where = "%s/%s" % (roll["namespace"], roll["name"])
        self.calls = []

    def call(self, name, stdin=None):
        """{failed, msg, object, rc, stderr} of one call."""
        self.calls.append(name)
        return ran_result(CALLS[name]["verb"], "json", self.run(name, stdin))

    def read(self):
        """(the Lease's reply text, or a failure message)."""
        got = self.call("read")
        if got["failed"]:
            return None, "could not read the roll's Lease %s: %s; nothing was changed (the identity needs get on it: run access.yml)" % (
                self.where, got["msg"])
        return got["stdout"], None

    def read_nodes(self):
        got = self.call("nodes")
        if got["failed"]:
            return None, "could not read the Nodes after the roll's Lease %s: %s; nothing was changed" % (self.where, got["msg"])
        return node_objects(got["object"]), None

    def decide(self, text, nodes, claim, seen, fence):
        """(the decision, the observation) of the Lease ``text`` shows now."""
        now = self.clock()
        try:
            current = lease_from_reply(text, self.roll["name"])
        except LeaseError as e:
            raise LeaseError("could not read the roll's Lease %s: %s; nothing was changed" % (self.where, e)) from None
        seen_now = observation(current, now, seen) if current is not None else {}
        return lease_step(self.mode, current, self.roll, now, nodes or (), claim, seen_now or None, fence), seen_now


def lease_protocol_step(mode, roll, run, nodes=None, claim=None, fence=None, wait=0, seen=None, attempts=ATTEMPTS,
                        clock=time.time, sleep=time.sleep, rand=random.randint, note=None):
    """Run one step of the Lease protocol (``mode``: take, renew or release; plugin_utils/roll_lease.py lease_step).

    ``roll``: the rke2_numa_roll fact (id, run, namespace, name, lock_wait, kubectl, kubeconfig ...); ``run(call,
    stdin)``: runs CALLS[call] and returns ansible.builtin.command's answer; ``nodes``: the Node objects read already
    (a take names what another roll has out) - a release or a renewal with ``claim`` reads them after the Lease;
    ``claim``: the Nodes of the batch (a renewal claiming slots; [] frees them); ``fence``: the Node whose destructive
    step follows; ``wait``: s to wait for a slot; ``seen``: this run's earlier observation of the Lease.

    Returns {failed, msg, step (the decision that ended it), seen, written (the action written or ''), attempts, calls,
    lost (the message when the roll no longer holds the Lease), roll (the fact as this run holds it now, or None)}.
    """
    state = _Step(mode, roll, run, clock, sleep, rand, note or (lambda text: None))
    counts = mode == "release" or claim is not None
    out = {"failed": False, "msg": "", "step": None, "seen": seen or {}, "written": "", "attempts": 0, "lost": None, "roll": None}
    try:
        done = _attempts(state, out, counts, nodes, claim, fence, wait, attempts)
    except LeaseError as e:
        out.update(failed=True, msg=str(e))
        return dict(out, calls=state.calls)
    if not done and not out["failed"]:
        out.update(failed=True, msg="the roll's Lease %s was written by someone else at each of %d attempts; nothing more was changed%s" % (
            state.where, attempts, "" if mode == "release" else " - the roll stops before its next write"))
    return dict(out, calls=state.calls)


def _attempts(state, out, counts, nodes, claim, fence, wait, attempts):
    """True when an attempt ended the step (written, nothing to write, or a stop); False when every write was beaten."""
    for attempt in range(1, max(1, int(attempts)) + 1):
        out["attempts"] = attempt
        if attempt > 1:   # the writer that beat the last attempt is often in a burst of writes
            state.sleep(state.rand(*PAUSE))
        text, error = state.read()
        now_nodes = node_objects(nodes)
        if error is None and counts:
            now_nodes, error = state.read_nodes()
        if error:
            out.update(failed=True, msg=error)
            return True
        step, out["seen"] = state.decide(text, now_nodes, claim, out["seen"] or None, fence)
        if _waits(state, step, wait):
            step, now_nodes, error = _wait(state, out, step, now_nodes, counts, claim, fence, wait)
            if error:
                out.update(failed=True, msg=error)
                return True
        out["step"] = step
        if step["action"] in STOPS:
            out.update(failed=True, msg=step["msg"], lost=step["msg"] if step["action"] in (REFUSE, LOST) else None)
            return True
        if step["action"] in WRITES:
            got = state.call(WRITES[step["action"]], json.dumps(step["object"], sort_keys=True))
            if got["failed"]:
                if status_reason(got["stderr"]) in BEATEN:
                    continue
                out.update(failed=True, msg="could not write the Lease %s (its namespace and the rights on it come with access.yml): %s%s" % (
                    state.where, got["msg"], "" if state.mode == "release" else "; the roll stops before its next write"))
                return True
            out["written"] = step["action"]
        out["roll"] = _held(state, step)
        return True
    return False


def _waits(state, step, wait):
    """Whether this step waits: another roll's Lease (the roll's lock_wait), or no slot for the batch (``wait``) - at
    least one poll's worth of seconds."""
    if step["action"] == REFUSE:
        return int(state.roll.get("lock_wait") or 0) >= LOCK_POLL_SECONDS
    return bool(step["wait"]) and int(wait or 0) >= LOCK_POLL_SECONDS


def _wait(state, out, step, nodes, counts, claim, fence, wait):
    """Read the Lease every LOCK_POLL_SECONDS until it is free or a slot is (as many polls as the wait holds), then
    the Nodes again, and decide on what they show then: (decision, nodes, error)."""
    seconds = int(state.roll.get("lock_wait") or 0) if step["action"] == REFUSE else int(wait or 0)
    state.note("waiting up to %d s for the roll's Lease %s (read every %d s): %s" % (
        seconds, state.where, LOCK_POLL_SECONDS, step["msg"] if step["action"] == REFUSE else step["slots_msg"]))
    text = None
    for dummy in range(seconds // LOCK_POLL_SECONDS):
        state.sleep(LOCK_POLL_SECONDS)
        text, error = state.read()
        if error:
            return step, nodes, error
        step, out["seen"] = state.decide(text, nodes, claim, out["seen"] or None, fence)
        if not step["waits"]:
            break
    if text is None:
        return step, nodes, None
    if counts:
        nodes, error = state.read_nodes()
        if error:
            return step, nodes, error
    step, out["seen"] = state.decide(text, nodes, claim, out["seen"] or None, fence)
    return step, nodes, None


def _held(state, step):
    """The rke2_numa_roll fact as this run holds the Lease after ``step`` (None: unchanged): its leaseTransitions
    (a later renewal that finds another lost it in between), and a dead roll it took over (its kured entries are this
    roll's to replace and give back)."""
    roll = state.roll
    if state.mode == "release" or step.get("transitions") is None or step.get("holder") != roll["id"]:
        return None
    adopted = list(roll.get("adopted") or [])
    if step.get("previous") and step["previous"] not in adopted:
        adopted.append(step["previous"])
    return dict(roll, transitions=step["transitions"], adopted=adopted)
