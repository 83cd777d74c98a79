# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One roll at a time per cluster: the roll's identity and its Lease (controller side, no I/O).

A roll has an id (``rke2_numa_roll_id``): written in our Node marker (``rke2-numa.maitred.io/cordoned=<id>``), in
our kured lock entries, the summary and fleet.json. Before its first cluster write a roll takes the Lease
``rke2-numa-system/rke2-numa-roll`` (coordination.k8s.io/v1), the way client-go's leader election does
(k8s.io/client-go tools/leaderelection/leaderelection.go tryAcquireOrRenew, resourcelock/leaselock.go):

- no Lease: ``create`` it (a concurrent create is 409 AlreadyExists: someone else has it);
- a Lease whose holder is empty (released) or expired (``renewTime + leaseDurationSeconds`` passed: its roll
  died): ``update`` it carrying the resourceVersion just read (a concurrent writer makes it 409 Conflict),
  ``acquireTime`` now, ``leaseTransitions`` + 1;
- a live Lease of another roll: refused, naming the holder, since when, and the Nodes it holds;
- our own id: renewed (``renewTime`` now), never taken twice. Runs that share an id (AWX slices, ``--limit`` halves)
  hold it together.

Renewals check the holder is still us (a roll that lost its Lease stops before its next write); the release
writes an empty holder with ``leaseDurationSeconds`` 1, as client-go's ``release()`` does - but only when no other
run of the same roll still has a Node out. A Lease whose fields cannot be read is held (fail closed), never
taken over. Expiry is judged by the controller's clock against the holder's ``renewTime`` (keep controllers'
clocks in sync: NTP).
"""

from __future__ import annotations

import datetime
import json
import re

LEASE_API_VERSION = "coordination.k8s.io/v1"
DEFAULT_NAMESPACE = "rke2-numa-system"
DEFAULT_NAME = "rke2-numa-roll"
ROLL_ID_MAX = 63                      # it is a Node annotation's value and a Lease's holderIdentity: short, readable
_ROLL_ID = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")
LEGACY_MARKER = "true"                # the marker before roll ids: a roll of unknown id
LEASE_SECONDS_MIN = 120               # s: a lease shorter than a node's cordon-to-drain stretch would expire under it
LEASE_SECONDS_MAX = 8 * 3600          # s: a dead roll never holds the cluster longer than this
LEASE_MARGIN = 120                    # s: kubectl round trips and Ansible's own time between two renewals
LOCK_WAIT_MAX = 12 * 3600             # s: rke2_numa_roll_lock_wait
LOCK_POLL_SECONDS = 10                # s: how often a waiting roll reads the Lease again
MANAGED_BY = {"app.kubernetes.io/name": "rke2-numa", "app.kubernetes.io/managed-by": "maitred.rke2_numa"}
MODES = ("take", "renew", "release")


class LeaseError(ValueError):
    """The API's answer is not a Lease read (a kubectl error, another object)."""


def roll_id_errors(value):
    """What is wrong with a roll id (empty: fine): lowercase letters, digits, '-' and '.', at most 63, starting and
    ending with a letter or digit - never a flag, never a path."""
    if not isinstance(value, str) or not value:
        return ["must be a non-empty string"]
    errors = []
    if len(value) > ROLL_ID_MAX:
        errors.append("must be no more than %d characters" % ROLL_ID_MAX)
    if not _ROLL_ID.fullmatch(value):
        errors.append("must consist of lower case letters, digits, '-' or '.', and start and end with a letter or digit")
    if value == LEGACY_MARKER:
        errors.append("'true' is the marker of rolls without an id")
    return errors


def _int_text(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit() and len(value) <= 18:
        return int(value)
    return None


def default_roll_id(awx_workflow_job_id=None, awx_job_id=None, now=0.0, token=""):
    """The roll id when none is set. AWX gives each job of a workflow - the slices of a sliced job template are
    the jobs of one workflow job - ``awx_workflow_job_id`` (awx/main/models/unified_jobs.py awx_meta_vars): the
    slices share it, so they share one roll. A lone AWX job: its ``awx_job_id``. Elsewhere: a fresh id per run
    (the UTC time and ``token``, a few random hex digits)."""
    workflow, job = _int_text(awx_workflow_job_id), _int_text(awx_job_id)
    if workflow is not None:
        return "awx-workflow-%d" % workflow
    if job is not None:
        return "awx-job-%d" % job
    stamp = datetime.datetime.fromtimestamp(float(now), datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    suffix = re.sub(r"[^0-9a-f]", "", str(token).lower())[:8]
    return "roll-%s%s" % (stamp, "-" + suffix if suffix else "")


def micro_time(epoch):
    """A metav1.MicroTime as the API server writes it (RFC 3339, six fractional digits, UTC)."""
    return datetime.datetime.fromtimestamp(float(epoch), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text):
    """Epoch seconds of an RFC 3339 time (MicroTime or Time, up to nine fractional digits); None when unreadable."""
    if not isinstance(text, str) or not text:
        return None
    value = text.strip()
    if value[-1:] in ("Z", "z"):
        value = value[:-1] + "+00:00"
    if "." in value:
        head, dummy, rest = value.partition(".")
        digits = ""
        for char in rest:
            if not char.isdigit():
                break
            digits += char
        value = head + "." + (digits[:6] or "0").ljust(6, "0") + rest[len(digits):]
    try:
        moment = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.timestamp()


# The longest stretch between two renewals (before the cordon, before the uncordon) is bounded by these waits;
# each entry: the variable and its role's default (tests/unit/.../test_roll_lease.py checks them against the roles).
LEASE_STRETCH = (
    ("rke2_numa_drain_timeout", 600),        # drain: kubectl drain --timeout
    ("rke2_numa_reboot_timeout", 1800),      # common: the reboot
    ("rke2_numa_kubelet_timeout", 180),      # kubelet_reset: a healthy kubelet
    ("rke2_numa_node_ready_timeout", 300),   # drain: the Node Ready
    ("rke2_numa_probe_timeout", 120),        # prove: the probe pods
    ("rke2_numa_labels_timeout", 180),       # labels: NFD's labels
)


def lease_seconds(variables):
    """leaseDurationSeconds: the longest stretch between two renewals of a roll - the waits of LEASE_STRETCH as
    ``variables`` set them (their roles' defaults otherwise) - plus a margin, bounded."""
    total = LEASE_MARGIN
    for name, default in LEASE_STRETCH:
        value = (variables or {}).get(name, default)
        number = _int_text(value)
        total += number if number is not None and number > 0 else default
    return max(LEASE_SECONDS_MIN, min(total, LEASE_SECONDS_MAX))


def lease_from_reply(text, name):
    """The Lease ``kubectl get lease NAME --ignore-not-found -o json`` printed (None: there is none). A List is
    read for its item of that name. LeaseError when the answer is something else."""
    text = str(text or "").strip()
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        raise LeaseError("the answer is not JSON") from None
    if not isinstance(value, dict):
        raise LeaseError("the answer is not an object")
    if isinstance(value.get("items"), list):
        found = [i for i in value["items"] if isinstance(i, dict) and (i.get("metadata") or {}).get("name") == name]
        value = found[0] if found else None
        if value is None:
            return None
    if value.get("kind") != "Lease":
        raise LeaseError("the answer is a %s, not a Lease" % (value.get("kind") or "thing without a kind"))
    return value


def lease_state(lease, now):
    """{holder, acquired, renewed, duration, expires_at, live, readable, transitions, resource_version} of a Lease
    (None: no Lease). A holder whose renewTime or leaseDurationSeconds cannot be read is live: held, fail closed."""
    if lease is None:
        return {"exists": False, "holder": "", "live": False, "readable": True, "transitions": 0, "resource_version": ""}
    spec = lease.get("spec") if isinstance(lease.get("spec"), dict) else {}
    holder = spec.get("holderIdentity")
    holder = holder if isinstance(holder, str) else ("" if holder is None else "?")
    duration = spec.get("leaseDurationSeconds")
    duration = duration if isinstance(duration, int) and not isinstance(duration, bool) and duration > 0 else None
    renewed = parse_time(spec.get("renewTime") if spec.get("renewTime") is not None else spec.get("acquireTime"))
    transitions = spec.get("leaseTransitions")
    transitions = transitions if isinstance(transitions, int) and not isinstance(transitions, bool) and transitions >= 0 else 0
    readable = duration is not None and renewed is not None
    expires = renewed + duration if readable else None
    return {"exists": True, "holder": holder, "acquired": spec.get("acquireTime"), "renewed": spec.get("renewTime"),
            "duration": duration, "expires_at": expires, "readable": readable,
            "live": bool(holder) and (not readable or expires > now), "transitions": transitions,
            "resource_version": str((lease.get("metadata") or {}).get("resourceVersion") or "")}


def _body(namespace, name, spec, resource_version=None):
    meta = {"name": name, "namespace": namespace, "labels": dict(MANAGED_BY)}
    if resource_version:
        meta["resourceVersion"] = resource_version
    return {"apiVersion": LEASE_API_VERSION, "kind": "Lease", "metadata": meta, "spec": spec}


def held_nodes(nodes, cordoned_key, roll_id):
    """The Nodes (sorted) whose cordon marker names ``roll_id`` and that are still cordoned: what that roll has out.
    ``nodes``: Node objects."""
    out = []
    for node in nodes or []:
        meta = node.get("metadata") or {}
        if (meta.get("annotations") or {}).get(cordoned_key) == roll_id and (node.get("spec") or {}).get("unschedulable"):
            out.append(str(meta.get("name")))
    return sorted(out)


def describe_holder(state, nodes, now):
    """'<id> since <acquireTime> (renewed <renewTime>, expires in N s), on <nodes>' for a live Lease (``nodes`` None:
    the Nodes were not read)."""
    if state["readable"]:
        left = int(state["expires_at"] - now)
        timing = "renewed %s, expires in %d s" % (state["renewed"], max(left, 0))
    else:
        timing = "its renewTime or leaseDurationSeconds cannot be read: held until an admin frees it"
    where = "" if nodes is None else ", on %s" % (", ".join(nodes) if nodes else "no Node yet")
    return "%s since %s (%s)%s" % (state["holder"], state.get("acquired") or "?", timing, where)


def roll_in_progress(lease, nodes, cordoned_key, now, roll_id=""):
    """What a read-only run says of the Lease: {busy, holder, since, nodes, msg}. ``roll_id``: this run's own
    (a check of our own roll is not 'another roll')."""
    state = lease_state(lease, now)
    if not state["live"] or (roll_id and state["holder"] == roll_id):
        return {"busy": False, "holder": "", "since": "", "nodes": [], "msg": ""}
    held = held_nodes(nodes, cordoned_key, state["holder"]) if nodes else None
    return {"busy": True, "holder": state["holder"], "since": state.get("acquired") or "", "nodes": held or [],
            "msg": "a roll is in progress: " + describe_holder(state, held, now)}


def lease_step(mode, lease, roll_id, now, duration, namespace, name, nodes=(), cordoned_key="", own_nodes=()):
    """What to do with the Lease now: {action, object, msg, holder}.

    ``mode``: ``take`` (before the roll's first write), ``renew`` (each batch, before each cordon and uncordon),
    ``release`` (the end of the run). ``action``: ``create`` / ``update`` (write ``object``: kubectl create /
    replace, the latter carrying the resourceVersion read), ``none`` (nothing to write), ``refuse`` (take: another
    roll holds it), ``lost`` (renew: another roll took it). ``nodes``: the Node objects (to name what a holder
    has out, and for a release: another run of this roll with Nodes out keeps it); ``own_nodes``: this run's Node
    names.
    """
    if mode not in MODES:
        raise ValueError("mode must be one of %s" % ", ".join(MODES))
    state = lease_state(lease, now)
    where = "%s/%s" % (namespace, name)
    stamp = micro_time(now)
    ours = state["holder"] == roll_id
    if mode == "release":
        if not state["exists"] or not ours:
            return {"action": "none", "object": None, "holder": state["holder"],
                    "msg": "the Lease %s is not held by %s: nothing to give back" % (where, roll_id)}
        others = [n for n in held_nodes(nodes, cordoned_key, roll_id) if n not in set(own_nodes or ())]
        if others:
            return {"action": "none", "object": None, "holder": roll_id,
                    "msg": "the Lease %s is kept: another run of roll %s still has %s out" % (where, roll_id, ", ".join(others))}
        spec = {"holderIdentity": "", "leaseDurationSeconds": 1, "acquireTime": stamp, "renewTime": stamp,
                "leaseTransitions": state["transitions"]}
        return {"action": "update", "object": _body(namespace, name, spec, state["resource_version"]), "holder": "",
                "msg": "roll %s gave the Lease %s back" % (roll_id, where)}
    if not state["exists"]:
        if mode == "renew":
            return {"action": "lost", "object": None, "holder": "",
                    "msg": "roll %s lost the Lease %s: it is gone (deleted by hand?); the roll stops before its next write" % (roll_id, where)}
        spec = {"holderIdentity": roll_id, "leaseDurationSeconds": int(duration), "acquireTime": stamp, "renewTime": stamp,
                "leaseTransitions": 0}
        return {"action": "create", "object": _body(namespace, name, spec), "holder": roll_id,
                "msg": "roll %s took the Lease %s" % (roll_id, where)}
    if ours:
        spec = {"holderIdentity": roll_id, "leaseDurationSeconds": int(duration), "acquireTime": lease["spec"].get("acquireTime") or stamp,
                "renewTime": stamp, "leaseTransitions": state["transitions"]}
        return {"action": "update", "object": _body(namespace, name, spec, state["resource_version"]), "holder": roll_id,
                "msg": "roll %s renewed the Lease %s" % (roll_id, where)}
    if state["live"]:
        held = held_nodes(nodes, cordoned_key, state["holder"])
        if mode == "renew":
            return {"action": "lost", "object": None, "holder": state["holder"],
                    "msg": "roll %s lost the Lease %s to %s; the roll stops before its next write" % (
                        roll_id, where, describe_holder(state, held, now))}
        return {"action": "refuse", "object": None, "holder": state["holder"],
                "msg": "another roll holds the Lease %s: %s; nothing was changed. Wait for it (rke2_numa_roll_lock_wait), or if "
                       "that roll is dead and its Lease will not expire, see the README (Rolling reconfiguration: a dead roll)" % (
                           where, describe_holder(state, held, now))}
    # released (empty holder) or expired (its roll died): taken, as client-go takes an expired lease
    spec = {"holderIdentity": roll_id, "leaseDurationSeconds": int(duration), "acquireTime": stamp, "renewTime": stamp,
            "leaseTransitions": state["transitions"] + 1}
    before = ("from the dead roll %s (expired %s)" % (state["holder"], micro_time(state["expires_at"]))) if state["holder"] else "(free)"
    return {"action": "update", "object": _body(namespace, name, spec, state["resource_version"]), "holder": roll_id,
            "previous": state["holder"], "msg": "roll %s took the Lease %s %s" % (roll_id, where, before)}
