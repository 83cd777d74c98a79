# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Other maintainers at work: may a roll take this node out of service now? (controller side)

A roll must not drain a node while another tool reboots, deletes or upgrades one: two nodes out at once is
what a maintenance window must never do to a GPU fleet. Read from the API just before the cordon:

- kured (kubereboot/kured, pkg/daemonsetlock): its lock is an annotation on its own DaemonSet (``--ds-name``,
  ``--ds-namespace``, ``--lock-annotation``; default kube-system/kured, weave.works/kured-node-lock), either one
  owner ``{"nodeID", "metadata", "created", "TTL"}`` or, with ``--concurrency`` > 1,
  ``{"maxOwners", "locks": [...]}``. ``TTL`` is a Go time.Duration (nanoseconds); 0 never expires (ttlExpired).
  While kured holds any live lock it is rebooting a node: no node of ours starts.
- The cluster autoscaler taints a node it is about to delete ``ToBeDeletedByClusterAutoscaler``; Karpenter
  ``karpenter.sh/disrupted`` (``karpenter.sh/disruption`` before v1).
- system-upgrade-controller (rancher/system-upgrade-controller) runs a Job per node and plan; its pods carry
  ``upgrade.cattle.io/node=<node>``. One that has not succeeded is an upgrade in progress.
- Node annotations other tools set while they work (``rke2_numa_foreign_node_annotations``).

Their cordons look like an admin's and are kept (never undone by a roll).

While a roll has nodes out, it holds kured's own lock (``kured_lock_claims``, released by
``kured_lock_releases``), in kured's format, written with the DaemonSet's resourceVersion (a lock kured took
meanwhile makes the write a 409, never overwritten): kured cannot start a reboot under the roll. Our entries are
named ``rke2-numa.maitred.io/roll/<roll id>[/<n>]`` - never a Node's name, so no kured pod takes the lock for its
own; with ``--concurrency`` N every one of kured's N slots is filled. Their TTL bounds a roll that dies without
releasing. A roll gives back only its own entries; another roll's are a held lock. A value in neither of kured's
formats is held, never free, and never rewritten.
"""

from __future__ import annotations

import datetime
import json

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.values import as_boolean, as_integer

KURED_LOCK_ANNOTATION = "weave.works/kured-node-lock"
KURED_DEFAULT = ("kube-system", "kured")
AUTO = "auto"
AUTOSCALER_TAINTS = {
    "ToBeDeletedByClusterAutoscaler": "the cluster autoscaler is deleting it",
    "karpenter.sh/disrupted": "Karpenter is disrupting it",
    "karpenter.sh/disruption": "Karpenter is disrupting it",
}
SUC_NODE_LABEL = "upgrade.cattle.io/node"
_KURED_LABELS = ("app.kubernetes.io/name", "app", "name", "k8s-app")
ROLL_LOCK_NODE = "rke2-numa.maitred.io/roll"


def _flag(argv, name):
    """The value of ``--name=value`` or ``--name value`` in a container's command line, or None."""
    for i, arg in enumerate(argv):
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
    return None


def _argv(daemonset):
    containers = ((((daemonset.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")) or []
    out = []
    for c in containers:
        out += [str(a) for a in (c.get("command") or []) + (c.get("args") or [])]
    return out, [str(c.get("image") or "") for c in containers]


def is_kured(daemonset):
    """A DaemonSet that runs kured: its labels, its image, or its command say so."""
    meta = daemonset.get("metadata") or {}
    labels = meta.get("labels") or {}
    argv, images = _argv(daemonset)
    image_names = [i.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0] for i in images]
    return (any(labels.get(k) == "kured" for k in _KURED_LABELS) or "kured" in image_names
            or any(a.rsplit("/", 1)[-1] == "kured" for a in argv))


def _time(text):
    value = str(text or "")
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    # Go's RFC 3339 has up to 9 fractional digits; Python reads 6
    if "." in value:
        head, dummy, rest = value.partition(".")
        digits = "".join(c for c in rest if c.isdigit())
        value = head + "." + (digits[:6] or "0") + rest[len(digits):]
    try:
        moment = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.timestamp()


_SINGLE_KEYS = {"nodeID", "metadata", "created", "TTL"}
_MULTI_KEYS = {"maxOwners", "locks"}
TTL_MAX = 10 ** 18   # ns (about 31 years): a Go time.Duration is an int64; beyond it is no TTL kured wrote
MAX_OWNERS = 1000   # kured's --concurrency: more is no real fleet's, and a bound on what a hostile value costs


def _entry_ok(entry):
    """A lockAnnotationValue as kured writes it (pkg/daemonsetlock): nodeID a string, TTL an integer (a Go
    time.Duration), created a time, metadata anything; no other key."""
    return (isinstance(entry, dict) and set(entry) <= _SINGLE_KEYS and isinstance(entry.get("nodeID"), str)
            and (entry.get("TTL") is None or (isinstance(entry.get("TTL"), int) and not isinstance(entry.get("TTL"), bool)
                                              and 0 <= entry.get("TTL") <= TTL_MAX))
            and (entry.get("created") is None or _time(entry.get("created")) is not None))


def kured_lock_value(text):
    """(shape, value) of a kured lock annotation: ("single", the entry), ("multi", {maxOwners, locks}) - kured's two
    formats, strictly (a multi lock's ``locks`` is a list of entries, or null once its last owner released it) - or
    ("unreadable", None) for anything else: held, never free, never rewritten."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return "unreadable", None
    if isinstance(value, dict) and value and set(value) <= _MULTI_KEYS and "maxOwners" in value:
        owners, locks = value.get("maxOwners"), value.get("locks")
        if (isinstance(owners, int) and not isinstance(owners, bool) and 1 <= owners <= MAX_OWNERS
                and (locks is None or (isinstance(locks, list) and all(_entry_ok(e) for e in locks)))):
            return "multi", {"maxOwners": owners, "locks": list(locks or [])}
        return "unreadable", None
    if _entry_ok(value) and value:
        return "single", value
    return "unreadable", None


def kured_locks(text, now):
    """The live locks of a kured lock annotation: [{node, created, ttl_seconds}]; expired ones left out.

    A value neither format has counts as one live lock of an unknown node (fail closed)."""
    shape, value = kured_lock_value(text)
    if shape == "unreadable":
        return [{"node": "?", "created": None, "ttl_seconds": 0, "unreadable": True}]
    entries = value["locks"] if shape == "multi" else [value]
    live = []
    for entry in entries:
        ttl = entry.get("TTL") or 0
        ttl_seconds = ttl / 1e9
        created = _time(entry.get("created"))
        if ttl_seconds > 0 and created is not None and now - created >= ttl_seconds:
            continue   # kured's ttlExpired: the lock is free
        live.append({"node": entry["nodeID"] or "?", "created": entry.get("created"), "ttl_seconds": ttl_seconds})
    return live


def find_kured(daemonsets, setting):
    """[(namespace/name, lock annotation key, DaemonSet)] of kured's DaemonSets, and an error or None.

    ``setting``: ``auto`` (every DaemonSet that runs kured, wherever installed), ``namespace/name`` (that
    one, which must exist), or empty (not checked)."""
    if not setting:
        return [], None
    found = []
    for ds in daemonsets:
        meta = ds.get("metadata") or {}
        ident = "%s/%s" % (meta.get("namespace"), meta.get("name"))
        if (setting == AUTO and (is_kured(ds) or ident == "%s/%s" % KURED_DEFAULT)) or ident == setting:
            argv, dummy = _argv(ds)
            found.append((ident, _flag(argv, "--lock-annotation") or KURED_LOCK_ANNOTATION, ds))
    if setting != AUTO and not found:
        return [], ("rke2_numa_kured_daemonset %s: no such DaemonSet, so kured's reboot lock cannot be read; "
                    "set it to kured's namespace/name, auto (find it), or empty if kured is not installed" % setting)
    return found, None


def _roll_entry(roll_id):
    return "%s/%s" % (ROLL_LOCK_NODE, roll_id)


def _ours(node_id, roll_id):
    """An entry this roll wrote: ``rke2-numa.maitred.io/roll/<id>`` or ``.../<id>/<n>``. Another roll's entries (and
    those of rolls before roll ids, ``.../roll`` and ``.../roll-<n>``) are held locks."""
    node_id, mine = str(node_id), _roll_entry(roll_id)
    return bool(roll_id) and (node_id == mine or node_id.startswith(mine + "/"))


def _roll_of(node_id):
    """The roll id in an entry of any roll of ours, or "" (an entry of a roll before roll ids), or None (kured's)."""
    node_id = str(node_id)
    if node_id.startswith(ROLL_LOCK_NODE + "/"):
        return node_id[len(ROLL_LOCK_NODE) + 1:].split("/", 1)[0]
    if node_id == ROLL_LOCK_NODE or node_id.startswith(ROLL_LOCK_NODE + "-"):
        return ""
    return None


def _rfc3339(epoch):
    return datetime.datetime.fromtimestamp(float(epoch), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _target(ident, key, ds, value):
    meta = ds.get("metadata") or {}
    return {"daemonset": ident, "namespace": meta.get("namespace"), "name": meta.get("name"), "annotation": key,
            "resource_version": str(meta.get("resourceVersion") or ""), "value": value}


def kured_lock_claims(daemonsets, kured_setting, now, ttl_seconds, roll_id):
    """Per kured DaemonSet whose lock is free (readable, and no live entry but this roll's): the annotation value that
    holds it for roll ``roll_id``, in its format - one owner, or ``maxOwners`` entries when kured runs with
    ``--concurrency`` > 1 or already wrote that format. A DaemonSet whose lock kured or another roll holds, or whose
    value neither format has, is left alone (maintainers_at_work refuses the node). Returns [{daemonset, namespace,
    name, annotation, resource_version, value}]."""
    kureds, error = find_kured(daemonsets, kured_setting)
    if error or not roll_id:
        return []
    out = []
    for ident, key, ds in kureds:
        text = ((ds.get("metadata") or {}).get("annotations") or {}).get(key)
        shape, current = kured_lock_value(text) if text is not None else ("absent", None)
        if shape == "unreadable" or any(not _ours(lock["node"], roll_id) for lock in kured_locks(text, now) if text is not None):
            continue
        argv, dummy = _argv(ds)
        owners = min(max(as_integer(_flag(argv, "--concurrency") or 1) or 1, 1), MAX_OWNERS)
        if shape == "multi":
            owners, multi = current["maxOwners"], True
        else:
            multi = owners > 1

        def entry(suffix):
            return {"nodeID": _roll_entry(roll_id) + suffix, "metadata": {"unschedulable": False}, "created": _rfc3339(now),
                    "TTL": int(ttl_seconds) * 10 ** 9}

        value = {"maxOwners": owners, "locks": [entry("/%d" % i) for i in range(1, owners + 1)]} if multi else entry("")
        out.append(_target(ident, key, ds, json.dumps(value, sort_keys=True, separators=(",", ":"))))
    return out


def kured_hold(setting, allowed):
    """Does a roll hold kured's lock? ``setting``: rke2_numa_kured_hold - ``auto`` holds when ``allowed`` (access.yml:
    the cluster has the admission policies that narrow the patch to the lock; a roll: its kubeconfig may patch
    kured's DaemonSet), true always, false never; anything else (refused by the inputs check) never."""
    return as_boolean(allowed if setting == AUTO else setting) is True


def kured_lock_releases(daemonsets, kured_setting, roll_id):
    """Per kured DaemonSet whose lock holds entries of roll ``roll_id``: the value without them (``value`` None: remove
    the annotation, as kured's own release does for its one-owner lock). Entries kured or another roll wrote are
    kept; a value neither format has is never rewritten."""
    kureds, dummy = find_kured(daemonsets, kured_setting)
    out = []
    for ident, key, ds in kureds:
        text = ((ds.get("metadata") or {}).get("annotations") or {}).get(key)
        if text is None or not roll_id:
            continue
        shape, current = kured_lock_value(text)
        if shape == "multi":
            rest = [lock for lock in current["locks"] if not _ours(lock.get("nodeID"), roll_id)]
            if len(rest) != len(current["locks"]):
                value = dict(json.loads(text), locks=rest)
                out.append(_target(ident, key, ds, json.dumps(value, sort_keys=True, separators=(",", ":"))))
        elif shape == "single" and _ours(current.get("nodeID"), roll_id):
            out.append(_target(ident, key, ds, None))
    return out


def maintainers_at_work(node, daemonsets, suc_pods, kured_setting, foreign_annotations, now, roll_id=""):
    """Why the roll must not start this node now (empty: it may). ``node``: the Node object; ``daemonsets``: every
    DaemonSet; ``suc_pods``: the pods labelled upgrade.cattle.io/node=<this node>; ``now``: epoch seconds;
    ``roll_id``: this roll's (its own kured entries hold nothing against it; another roll's do)."""
    name = (node.get("metadata") or {}).get("name")
    annotations = (node.get("metadata") or {}).get("annotations") or {}
    reasons = []
    kureds, error = find_kured(daemonsets, kured_setting)
    if error:
        reasons.append(error)
    for ident, key, ds in kureds:
        text = ((ds.get("metadata") or {}).get("annotations") or {}).get(key)
        if text is None:
            continue
        for lock in kured_locks(text, now):
            if _ours(lock["node"], roll_id):
                continue   # this roll's own hold on kured's lock
            other = _roll_of(lock["node"])
            if lock.get("unreadable"):
                reasons.append("kured's lock on %s (%s) cannot be read; treated as held" % (ident, key))
            elif other is not None:
                reasons.append("another roll (%s) holds kured's reboot lock (%s): one roll at a time" % (other or "one before roll ids", ident))
            elif lock["node"] == name:
                reasons.append("kured holds its reboot lock on it (%s)" % ident)
            else:
                reasons.append("kured holds its reboot lock on %s (%s): one node out of service at a time" % (lock["node"], ident))
    for taint in (node.get("spec") or {}).get("taints") or []:
        why = AUTOSCALER_TAINTS.get(taint.get("key"))
        if why:
            reasons.append("%s (taint %s)" % (why, taint.get("key")))
    running = sorted("%s/%s" % ((p.get("metadata") or {}).get("namespace"), (p.get("metadata") or {}).get("name"))
                     for p in suc_pods if (p.get("status") or {}).get("phase") != "Succeeded")
    if running:
        reasons.append("system-upgrade-controller is upgrading it (%s)" % ", ".join(running))
    present = [a for a in foreign_annotations if a in annotations]
    if present:
        reasons.append("the Node has %s" % ", ".join(present))
    return reasons
