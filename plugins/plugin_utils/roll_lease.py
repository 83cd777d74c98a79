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
taken over.

Expiry is judged as client-go judges it, on times this controller observed itself, never against the holder's
``renewTime`` (leaderelection.go isLeaseValid: ``observedTime + observedRecord.LeaseDurationSeconds``, where
``observedTime`` is this process's clock when it first read the record as it is now - setObservedRecord;
"tolerant to arbitrary clock skew"). A run meets another roll's Lease for the first time when it starts: that
Lease is live for this run until it has watched the same record (its resourceVersion) for the record's
``leaseDurationSeconds`` (``observed``: {resource_version, since}, kept by the waiting loop,
``rke2_numa_roll_lock_wait``); a controller whose clock runs ahead never takes a live Lease. A dead roll is
picked up at once only by a run given its id (``rke2_numa_roll_resume``: the operator says it is gone).

Fencing (``fence``): a renewal that must prove the run still holds what it held at its last write - the holder
is this roll, ``leaseTransitions`` is the one this run last wrote or read as its own (``roll["transitions"]``:
another roll that took the Lease over in between, even if it gave it back, changed it), and, for a Node, this
run's live slot claim on it. A renewal without slot claims (the fence before each destructive step, the renewal
before an uncordon) never takes a Lease it does not hold; it is written carrying the resourceVersion it read, so
a write between the read and the step is a 409, not a silent success.
"""

from __future__ import annotations

import datetime
import itertools
import json
import re

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import specs
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.values import as_boolean, as_integer, as_percent, show

LEASE_API_VERSION = "coordination.k8s.io/v1"
ROLL_ID_MAX = 63                      # it is a Node annotation's value and a Lease's holderIdentity: short, readable
_ROLL_ID = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")
LEGACY_MARKER = "true"                # the marker before roll ids: a roll of unknown id
# s: rke2_numa_roll_lease_seconds' bounds (its spec says why)
LEASE_SECONDS_MIN, LEASE_SECONDS_MAX = specs.bounds("rke2_numa_roll_lease_seconds")
LEASE_MARGIN = 120                    # s: kubectl round trips and Ansible's own time between two renewals
LOCK_POLL_SECONDS = 10                # s: how often a waiting roll reads the Lease again
MANAGED_BY = {"app.kubernetes.io/name": "rke2-numa", "app.kubernetes.io/managed-by": "maitred.rke2_numa"}
MODES = ("take", "renew", "release")
# What a step's decision asks for (its "action"): write the Lease (create, update), nothing (none), or stop (refuse:
# another roll holds the Lease; lost: another roll took it; fenced: this run's slot on the node is gone).
CREATE, UPDATE, NONE, REFUSE, LOST, FENCED = "create", "update", "none", "refuse", "lost", "fenced"
ACTIONS = (CREATE, UPDATE, NONE, REFUSE, LOST, FENCED)
SLOTS_ANNOTATION = "rke2-numa.maitred.io/slots"   # on the Lease: {"roll": id, "claims": {node: {run, since, until[, waiting]}}}
MAX_UNAVAILABLE_MAX = specs.bounds("rke2_numa_max_unavailable")[1]   # nodes (a cap given as a number)


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
    """A whole number >= 0 (an AWX job id, a wait in seconds) from any source; None for anything else."""
    number = as_integer(value)
    return number if number is not None and number >= 0 else None


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
        digits = "".join(itertools.takewhile(str.isdigit, rest))
        value = head + "." + (digits[:6] or "0").ljust(6, "0") + rest[len(digits):]
    try:
        moment = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.timestamp()


# The stretches of a node's roll between two renewals of the Lease (the renewal before the batch's cordons, the fence
# before each destructive step - playbooks/tasks/fence.yml -, the renewal before the uncordon, the one freeing the
# slots), each bounded by the waits it holds; each wait: the variable and its role's default (from its argument spec).
# Each: what it is, its waits, and the switch without which it never happens (None: always).
LEASE_STRETCHES = (
    ("the drain", ("rke2_numa_drain_timeout",), None),                # cordon -> drain -> the writes -> the next fence
    ("the reboot", ("rke2_numa_reboot_timeout",), "rke2_numa_reboot_ok"),   # fence -> reboot -> the next fence
    ("the kubelet's start, its Node Ready, the probe pods and the labels",   # fence -> start -> ... -> renewal
     ("rke2_numa_kubelet_timeout", "rke2_numa_node_ready_timeout", "rke2_numa_probe_timeout", "rke2_numa_labels_timeout"), None),
    ("the Node Ready before the uncordon", ("rke2_numa_node_ready_timeout",), None),
)
LEASE_STRETCH = tuple((name, specs.default(name)) for name in sorted({n for dummy, names, dummy in LEASE_STRETCHES for n in names}))


def waves(serial, hosts, forks):
    """How many waves a batch's task runs in: Ansible's linear strategy runs a task on at most ``forks`` hosts at once,
    and the next task only when every host of the batch finished it - a host of the last wave starts its step
    (waves - 1) times the step's longest wait after its fence. ``serial``: the batch size (a list: its largest; a
    percentage or anything else: the run's ``hosts``)."""
    sizes = [as_integer(v) for v in (serial if isinstance(serial, list) else [serial])]
    size = max([v for v in sizes if v is not None and v > 0] or [max(int(hosts or 1), 1)])
    size = min(size, max(int(hosts or 1), 1))
    forks = max(as_integer(forks) or 1, 1)
    return -(-size // forks)


def lease_stretch(variables, batch_waves=1):
    """(seconds, what): the longest stretch between two renewals - the waits of LEASE_STRETCHES as ``variables``
    set them (their roles' defaults otherwise), times the batch's waves - and what it is."""
    longest = (0, "")
    for what, names, switch in LEASE_STRETCHES:
        if switch and as_boolean((variables or {}).get(switch, specs.default(switch))) is not True:
            continue
        total = 0
        for name in names:
            number = _int_text((variables or {}).get(name, specs.default(name)))
            total += number if number is not None and number > 0 else specs.default(name)
        longest = max(longest, (total * max(int(batch_waves), 1), what))
    return longest


def lease_seconds(variables, batch_waves=1):
    """leaseDurationSeconds: the longest stretch between two renewals (lease_stretch) plus a margin, bounded."""
    return max(LEASE_SECONDS_MIN, min(lease_stretch(variables, batch_waves)[0] + LEASE_MARGIN, LEASE_SECONDS_MAX))


def lease_seconds_errors(seconds, variables, batch_waves=1):
    """Why a Lease of ``seconds`` could expire while its roll works (refused before the roll's first write): shorter
    than the longest stretch between two renewals plus the margin - another roll would take it over mid-node."""
    stretch, what = lease_stretch(variables, batch_waves)
    if int(seconds) >= stretch + LEASE_MARGIN:
        return []
    waves_note = " (%d waves of a batch: rke2_numa_serial larger than --forks)" % batch_waves if batch_waves > 1 else ""
    fix = ("rke2_numa_roll_lease_seconds 0 computes it" if int(seconds) < LEASE_SECONDS_MAX and stretch + LEASE_MARGIN <= LEASE_SECONDS_MAX
           else "lower the timeouts, or raise --forks to rke2_numa_serial: a Lease lasts %d s at most" % LEASE_SECONDS_MAX)
    return ["the roll's Lease would last %d s, but %s may take %d s%s and the Lease is renewed only around it (plus %d s of "
            "round trips): it could expire while this roll works and another take it over; %s" % (
                int(seconds), what, stretch, waves_note, LEASE_MARGIN, fix)]


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


def _spec(holder, duration, acquired, renewed, transitions):
    return {"holderIdentity": holder, "leaseDurationSeconds": int(duration), "acquireTime": acquired, "renewTime": renewed,
            "leaseTransitions": transitions}


def _body(roll, spec, current=None, slots=None):
    """The Lease to write: our labels, the annotations it had (ours replaced by ``slots``: None drops them) and the
    resourceVersion read (none for a create)."""
    meta = {"name": roll["name"], "namespace": roll["namespace"], "labels": dict(MANAGED_BY)}
    current_meta = (current or {}).get("metadata") or {}
    annotations = {k: v for k, v in (current_meta.get("annotations") or {}).items() if k != SLOTS_ANNOTATION}
    if slots is not None:
        annotations[SLOTS_ANNOTATION] = slots
    if annotations:
        meta["annotations"] = annotations
    if current_meta.get("resourceVersion"):
        meta["resourceVersion"] = str(current_meta["resourceVersion"])
    return {"apiVersion": LEASE_API_VERSION, "kind": "Lease", "metadata": meta, "spec": spec}


def node_objects(reply):
    """The Nodes of ``kubectl get nodes[,pods] -o json`` (parsed), or of a list of Node objects."""
    items = reply if isinstance(reply, list) else (reply or {}).get("items") or []
    return [i for i in items if isinstance(i, dict) and i.get("kind", "Node") == "Node"]


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


def resume_hint(holder):
    """How to go on when another roll holds the Lease: wait for it, or - only when that run is known to be gone (its
    controller killed, its SSH session dropped, its AWX job cancelled) - pick it up at once under its id: a run given
    the holder's rke2_numa_roll_id holds the Lease as that roll (the same id is the same roll, as AWX slices share one)
    and rolls the Nodes it left cordoned first (roll_pick.roll_groups). Named only for an id this collection would
    take (roll_id_errors): the hint is pasted into a command line."""
    wait = "Wait for it (rke2_numa_roll_lock_wait)"
    if not holder or roll_id_errors(holder):
        return wait + ", or if that roll is dead and its Lease will not expire, see docs/ROLLING.md (a dead roll)"
    return ("%s; or, only when you know that run is gone (its controller killed, its AWX job cancelled), pick it up now: "
            "rerun with -e rke2_numa_roll_id=%s -e rke2_numa_roll_resume=true - it resumes that roll, the Nodes it left "
            "cordoned first (docs/ROLLING.md, a dead roll)" % (wait, holder))


def roll_in_progress(lease, nodes, cordoned_key, now, roll_id=""):
    """What a read-only run says of the Lease: {busy, holder, since, nodes, msg}. ``roll_id``: this run's own
    (a check of our own roll is not 'another roll')."""
    state = lease_state(lease, now)
    if not state["live"] or (roll_id and state["holder"] == roll_id):
        return {"busy": False, "holder": "", "since": "", "nodes": [], "msg": ""}
    held = held_nodes(nodes, cordoned_key, state["holder"]) if nodes else None
    return {"busy": True, "holder": state["holder"], "since": state.get("acquired") or "", "nodes": held or [],
            "msg": "a roll is in progress: " + describe_holder(state, held, now)}


# ---------------------------------------------------------------- slots: the cap on nodes out across the runs of a roll

def max_unavailable_errors(value):
    """What is wrong with ``rke2_numa_max_unavailable`` (an int >= 1, or a percentage 1%-100% of the cluster's Nodes)."""
    number = as_integer(value) if not isinstance(value, float) else None
    if number is not None and 1 <= number <= MAX_UNAVAILABLE_MAX:
        return []
    percent = as_percent(value)
    if percent is not None and 1 <= percent <= 100:
        return []
    return ["rke2_numa_max_unavailable %s must be a number of nodes from 1 to %d or a percentage from 1%% to 100%% of the cluster's "
            "Nodes" % (show(value), MAX_UNAVAILABLE_MAX)]


def default_max_unavailable(serial):
    """``rke2_numa_max_unavailable`` when unset: the batch size (a list of batch sizes: its last, the size Ansible
    keeps for the rest of the run)."""
    if isinstance(serial, list):
        serial = serial[-1] if serial else 1
    return serial if not max_unavailable_errors(serial) else 1


def unavailable_cap(max_unavailable, node_count):
    """The number of Nodes a roll may have out: the int, or the percentage of ``node_count`` rounded down, at least 1
    (as a Deployment's or an MCO pool's maxUnavailable)."""
    percent = as_percent(max_unavailable)
    if percent is not None:
        return max(1, percent * int(node_count) // 100)
    return int(max_unavailable)


def _claims(lease, roll_id):
    """This roll's slot claims on the Lease: ({node: {run, since, until}}, readable). Another roll's (a dead one whose
    Lease we took) are not ours: none."""
    text = (((lease or {}).get("metadata") or {}).get("annotations") or {}).get(SLOTS_ANNOTATION)
    if text is None:
        return {}, True
    try:
        value = json.loads(text)
    except ValueError:
        return {}, False
    if not isinstance(value, dict) or not isinstance(value.get("claims"), dict):
        return {}, False
    if value.get("roll") != roll_id:
        return {}, True
    claims = {}
    for node, claim in value["claims"].items():
        if not isinstance(claim, dict) or not isinstance(claim.get("run"), str) or parse_time(claim.get("until")) is None:
            return {}, False
        claims[str(node)] = {"run": claim["run"], "since": str(claim.get("since") or ""), "until": claim["until"]}
        if claim.get("waiting") is True:
            claims[str(node)]["waiting"] = True
    return claims, True


def nodes_out(nodes, cordoned_key, failed_key):
    """{node: why} of the Nodes our rolls have out: cordoned with our marker (any roll's), or left cordoned marked
    failed."""
    out = {}
    for node in nodes or []:
        meta = node.get("metadata") or {}
        annotations = meta.get("annotations") or {}
        if not (node.get("spec") or {}).get("unschedulable"):
            continue
        if failed_key and failed_key in annotations:
            out[str(meta.get("name"))] = "left cordoned, failed"
        elif cordoned_key and annotations.get(cordoned_key):
            out[str(meta.get("name"))] = "cordoned by roll %s" % annotations[cordoned_key]
    return out


def _slots(lease, roll, now, nodes, claim):
    """The slot claims to write and what each asked-for Node got: {claims (None: unreadable, keep them as they are),
    granted, waiting, busy, msg}. ``claim`` None: keep this run's claims (renewed); a list: this run's claims become
    the Nodes of the list that get a slot (the others of this run are freed)."""
    claims, readable = _claims(lease, roll["id"])
    none = {"claims": None, "granted": [], "waiting": [], "busy": [], "msg": ""}
    if not readable:
        return dict(none, waiting=list(claim or []),
                    msg="the Lease's %s annotation cannot be read: no Node gets a slot until an admin fixes or removes it "
                        "(docs/ROLLING.md)" % SLOTS_ANNOTATION)
    live = {n: c for n, c in claims.items() if parse_time(c["until"]) > now}
    # a run that resumes the roll (rke2_numa_roll_resume: the operator knows its other runs are gone) takes their
    # claims as its own: their Nodes are its to roll, not a sibling's at work
    others = {} if roll.get("resume") else {n: c for n, c in live.items() if c["run"] != roll["run"]}
    own = {n: c for n, c in live.items() if c["run"] == roll["run"] or roll.get("resume")}
    # a run waiting for a slot says so (an entry with waiting: true): no Node out, but a run of the roll still at work,
    # so a sibling's release keeps the Lease for it
    rolling = {n: c for n, c in others.items() if not c.get("waiting")}
    until = micro_time(now + int(roll["lease_seconds"]))
    if claim is None:
        kept = {n: dict(c, until=until) for n, c in own.items()}
        return dict(none, claims=dict(others, **kept), granted=sorted(n for n, c in kept.items() if not c.get("waiting")))
    cap = unavailable_cap(roll["max_unavailable"], len(nodes or []))
    out = nodes_out(nodes, roll["marker"], roll["failed"])
    for node, other in rolling.items():
        out.setdefault(node, "claimed by run %s of roll %s since %s" % (other["run"], roll["id"], other["since"]))
    granted, waiting, busy = [], [], []
    for node in claim:
        if node in rolling:
            busy.append(node)
        elif node in out or len(out) < cap:
            granted.append(node)
            out.setdefault(node, "claimed by this run")
        else:
            waiting.append(node)
    mine = {n: dict({"run": roll["run"], "since": (own.get(n) or {}).get("since") or micro_time(now), "until": until},
                    **({"waiting": True} if n in waiting else {})) for n in granted + waiting}
    notes = []
    if waiting:
        held = sorted(out)
        notes.append("no slot for %s: rke2_numa_max_unavailable %s allows %d Node%s out and %s %s out (%s)" % (
            ", ".join(waiting), roll["max_unavailable"], cap, "" if cap == 1 else "s", len(held), "is" if len(held) == 1 else "are",
            "; ".join("%s %s" % (n, out[n]) for n in held)))
    if busy:
        notes.append("%s: another run of roll %s is rolling %s" % (", ".join(busy), roll["id"], "it" if len(busy) == 1 else "them"))
    return {"claims": dict(others, **mine), "granted": granted, "waiting": waiting, "busy": busy, "msg": "; ".join(notes)}


def _slots_text(roll, slots, lease):
    """The slots annotation to write: the claims decided, none when there are none, or - unreadable - as it was."""
    if slots["claims"] is None:
        return lease["metadata"]["annotations"][SLOTS_ANNOTATION]
    return json.dumps({"roll": roll["id"], "claims": slots["claims"]}, sort_keys=True, separators=(",", ":")) if slots["claims"] else None


def lease_step(mode, lease, roll, now, nodes=(), claim=None, observed=None, fence=None):
    """What to do with the Lease now: {action, object, msg, holder, granted, waiting, busy, wait, waits, slots_msg}.

    ``roll``: {id, run (this run's token), lease_seconds, namespace, name, marker and failed (our Node annotations),
    max_unavailable, nodes (this run's Node names)}. ``mode``: ``take`` (before the roll's first write), ``renew``
    (each batch, before its cordons and before its uncordons), ``release`` (the end of the run). ``action``:
    ``create`` / ``update`` (write ``object``: kubectl create / replace, the latter carrying the resourceVersion
    read), ``none`` (nothing to write), ``refuse`` (take: another roll holds it), ``lost`` (renew: another roll took
    it). ``nodes``: the Node objects (to name what a holder has out, to count what is out, and for a release: another
    run of this roll with Nodes out keeps it). ``claim`` (renew): the Nodes of the batch, each given a slot while the
    roll has fewer than max_unavailable Nodes out across its runs (``granted``); ``waiting`` got none, ``busy`` are
    another run's; ``wait``: none got a slot, but one may free up; ``waits``: a run told to wait would wait (``wait``,
    or another roll's Lease to take).

    ``observed`` (take): {resource_version, since} - this run first read the Lease as it is now at ``since`` (its own
    clock): another roll's Lease is expired only once it stayed so for its leaseDurationSeconds (client-go's
    observedTime); without it, never. ``fence`` (renew without ``claim``): the Node whose destructive step follows -
    the Lease must hold this run's live slot claim on it; ``action`` ``fenced`` when it does not (the Node's part
    stops, the roll may go on). A renewal without ``claim`` (fence or not) is ``lost`` when the Lease is not this
    roll's or its leaseTransitions is no longer ``roll["transitions"]`` (when known). ``transitions``: the
    leaseTransitions the written object carries (the run keeps it as its own).
    """
    out = _lease_step(mode, lease, roll, now, nodes, claim, observed, fence)
    out["waits"] = out["action"] == REFUSE or out["wait"]
    out.setdefault("transitions", ((out.get("object") or {}).get("spec") or {}).get("leaseTransitions"))
    return out


def observation(lease, now, before=None):
    """{resource_version, since}: when this run first saw the Lease as it is now - ``before`` kept while the record
    is unchanged, a fresh one (``now``) when it changed (client-go setObservedRecord)."""
    version = str(((lease or {}).get("metadata") or {}).get("resourceVersion") or "")
    if before and str(before.get("resource_version") or "") == version and before.get("since") is not None:
        return {"resource_version": version, "since": float(before["since"])}
    return {"resource_version": version, "since": float(now)}


def _observed_expired(state, observed, now):
    """client-go's isLeaseValid turned around: this run watched the same record for its leaseDurationSeconds."""
    if not observed or not state["readable"] or str(observed.get("resource_version") or "") != state["resource_version"]:
        return False
    return float(now) >= float(observed.get("since")) + state["duration"]


def lease_free(lease, now, observed=None, roll_id=""):
    """Would a roll take the Lease now: none, given back (empty holder), this roll's own (``roll_id``), or another's
    that this run watched unchanged for its duration (``observed``, client-go's observedTime)? What a roll waits for
    before it reads the fleet (rke2_numa_roll_lock_wait), so that it decides on the fleet as the roll it waited for
    left it."""
    state = lease_state(lease, now)
    return not state["holder"] or bool(roll_id and state["holder"] == roll_id) or _observed_expired(state, observed, now)


def _fence_claim(lease, roll, now, node):
    """Why this run holds no live slot claim on ``node`` ('' when it does)."""
    claims, readable = _claims(lease, roll["id"])
    claim = claims.get(node)
    if not readable:
        return "the Lease's %s annotation cannot be read" % SLOTS_ANNOTATION
    if not claim or claim.get("waiting"):
        return "the Lease holds no slot of this run for %s" % node
    if claim["run"] != roll["run"] and not roll.get("resume"):
        return "the slot of %s is run %s's, not this run's (%s)" % (node, claim["run"], roll["run"])
    if parse_time(claim["until"]) <= now:
        return "this run's slot for %s expired at %s (the run was stopped past it)" % (node, claim["until"])
    return ""


def _lease_step(mode, lease, roll, now, nodes, claim, observed, fence):
    if mode not in MODES:
        raise ValueError("mode must be one of %s" % ", ".join(MODES))
    state = lease_state(lease, now)
    roll_id, where, stamp = roll["id"], "%s/%s" % (roll["namespace"], roll["name"]), micro_time(now)
    ours = state["holder"] == roll_id
    quiet = {"granted": [], "waiting": [], "busy": [], "wait": False, "slots_msg": ""}
    known = roll.get("transitions")
    # a renewal in the middle of a node's work (the fence before a destructive step, the renewal before an uncordon):
    # the Lease as this run last wrote it, or the node's part stops
    strict = mode == "renew" and claim is None
    if strict and state["exists"] and (not ours or (known is not None and state["transitions"] != int(known))):
        held = held_nodes(nodes, roll["marker"], state["holder"]) if state["holder"] and not ours else None
        who = describe_holder(state, held, now) if state["holder"] and not ours else (
            "leaseTransitions %d, was %s at this run's last write: another roll held it in between" % (state["transitions"], known)
            if ours else "nobody (given back)")
        return dict(quiet, action=LOST, object=None, holder=state["holder"],
                    msg="roll %s lost the Lease %s to %s; the roll stops before its next write" % (roll_id, where, who))
    if strict and fence and state["exists"]:
        why = _fence_claim(lease, roll, now, str(fence))
        if why:
            return dict(quiet, action=FENCED, object=None, holder=state["holder"],
                        msg="%s: %s; no further step on it" % (fence, why))
    if mode == "release":
        if not state["exists"] or not ours:
            return dict(quiet, action=NONE, object=None, holder=state["holder"],
                        msg="the Lease %s is not held by %s: nothing to give back" % (where, roll_id))
        slots = _slots(lease, roll, now, nodes, [])
        others = [n for n in held_nodes(nodes, roll["marker"], roll_id) if n not in set(roll.get("nodes") or ())]
        others += sorted(n for n, c in (slots["claims"] or {}).items() if n not in others and not c.get("waiting"))
        waiting = sorted(n for n, c in (slots["claims"] or {}).items() if c.get("waiting") and n not in others)
        if others or waiting or slots["claims"] is None:
            kept = _slots_text(roll, slots, lease)
            changed = kept != ((lease.get("metadata") or {}).get("annotations") or {}).get(SLOTS_ANNOTATION)
            why = "; ".join(w for w in ("%s out" % ", ".join(others) if others else "",
                                        "%s waiting for a slot" % ", ".join(waiting) if waiting else "") if w)
            return dict(quiet, action=UPDATE if changed else NONE, holder=roll_id,
                        object=_body(roll, dict(lease["spec"]), lease, kept) if changed else None,
                        msg="the Lease %s is kept: %s" % (where, ("another run of roll %s still has %s" % (roll_id, why))
                                                          if why else slots["msg"]))
        spec = _spec("", 1, stamp, stamp, state["transitions"])
        return dict(quiet, action=UPDATE, object=_body(roll, spec, lease), holder="", msg="roll %s gave the Lease %s back" % (roll_id, where))
    if not state["exists"]:
        if mode == "renew":
            return dict(quiet, action=LOST, object=None, holder="",
                        msg="roll %s lost the Lease %s: it is gone (deleted by hand?); the roll stops before its next write" % (roll_id, where))
        return dict(quiet, action=CREATE, object=_body(roll, _spec(roll_id, roll["lease_seconds"], stamp, stamp, 0)), holder=roll_id,
                    msg="roll %s took the Lease %s" % (roll_id, where))
    if ours:
        spec = _spec(roll_id, roll["lease_seconds"], lease["spec"].get("acquireTime") or stamp, stamp, state["transitions"])
        return _holding(mode, lease, roll, now, nodes, claim, spec, {"msg": "roll %s renewed the Lease %s" % (roll_id, where)})
    if state["holder"] and (mode == "renew" or not _observed_expired(state, observed, now)):
        held = held_nodes(nodes, roll["marker"], state["holder"])
        if mode == "renew":
            # never taken by a renewal, expired or not: the roll took it before its first write, and another roll
            # holds it now (client-go renews only what it holds)
            return dict(quiet, action=LOST, object=None, holder=state["holder"],
                        msg="roll %s lost the Lease %s to %s; the roll stops before its next write" % (
                            roll_id, where, describe_holder(state, held, now)))
        watched = ""
        if not state["live"] and state["readable"]:
            seen = observation(lease, now, observed)
            watched = (" - not renewed since %s by its holder's clock, but a Lease expires for this run only once it has seen "
                       "it unchanged for its %d s (client-go, whatever the clocks say): %d s watched" % (
                           state["renewed"] or state["acquired"] or "?", state["duration"], int(now - seen["since"])))
        return dict(quiet, action=REFUSE, object=None, holder=state["holder"],
                    msg="another roll holds the Lease %s: %s%s; nothing was changed. %s" % (
                        where, describe_holder(state, held, now), watched, resume_hint(state["holder"])))
    # released (empty holder: given back, by another run of this roll too) or expired for this run (its roll died,
    # watched unchanged for its duration): taken, as client-go takes an expired lease; a renewal with claims (between
    # batches) takes a released one; a dead roll's slots were that roll's (its Nodes still out count through their markers)
    spec = _spec(roll_id, roll["lease_seconds"], stamp, stamp, state["transitions"] + 1)
    before = ("from the dead roll %s (unchanged for %d s as this run watched it)" % (state["holder"], int(now - float(observed["since"]))
                                                                                     )) if state["holder"] else "(free)"
    return _holding(mode, lease, roll, now, nodes, claim, spec, {"previous": state["holder"],
                                                                 "msg": "roll %s took the Lease %s %s" % (roll_id, where, before)})


def _holding(mode, lease, roll, now, nodes, claim, spec, extra):
    """The update of a Lease this roll holds from now on, with its slot claims (a renewal's ``claim`` granted)."""
    asked = claim is not None and mode == "renew"
    slots = _slots(lease, roll, now, nodes, claim if asked else None)
    kept = _slots_text(roll, slots, lease)
    return dict(extra, action=UPDATE, object=_body(roll, spec, lease, kept), holder=roll["id"],
                granted=slots["granted"] if asked else [], waiting=slots["waiting"], busy=slots["busy"],
                wait=asked and not slots["granted"] and bool(slots["waiting"]) and slots["claims"] is not None,
                slots_msg=slots["msg"])
