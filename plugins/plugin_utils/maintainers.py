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


def _containers(daemonset):
    return ((((daemonset.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")) or []


def _argv(daemonset):
    containers = _containers(daemonset)
    out = []
    for c in containers:
        out += [str(a) for a in (c.get("command") or []) + (c.get("args") or [])]
    return out, [str(c.get("image") or "") for c in containers]


# kured's flags that decide where its lock is and how many owners it takes, with kured's defaults (cmd/kured/main.go)
KURED_SETTINGS = (("lock-annotation", KURED_LOCK_ANNOTATION), ("concurrency", "1"), ("ds-name", None), ("ds-namespace", None))
KURED_ENV_PREFIX = "KURED"   # cmd/kured/main.go EnvPrefix


def kured_settings(daemonset):
    """{lock_annotation, concurrency, ds_name, ds_namespace, unreadable} as kured reads its own: its flags
    (cmd/kured/main.go flag.Parse), then - overriding them - the environment variable of each flag,
    ``KURED_<FLAG NAME, upper case, '-' as '_'>`` (LoadFromEnv, called after flag.Parse; an int that strconv.Atoi
    refuses makes kured exit). The environment is the pod template's: ``env`` entries (the last of a name wins, over
    ``envFrom``). A KURED_ variable whose value this read cannot know - ``valueFrom``, or any ``envFrom`` (a ConfigMap or
    Secret may set one) - makes the settings unreadable (``unreadable``: why): kured's lock then counts as held, never
    written. ``ds_name``/``ds_namespace``: None when neither flag nor variable names them (the lock is read on kured's own
    DaemonSet: kured's manifests and chart always pass both)."""
    argv, dummy = _argv(daemonset)
    values = {name: _flag(argv, "--" + name) for name, dummy in KURED_SETTINGS}
    unreadable = []
    env = {}
    for container in _containers(daemonset):
        if container.get("envFrom"):
            sources = ["%s %s" % ("ConfigMap" if s.get("configMapRef") else "Secret" if s.get("secretRef") else "source",
                                  ((s.get("configMapRef") or s.get("secretRef") or {}).get("name") or "?"))
                       for s in container.get("envFrom") or [] if isinstance(s, dict)]
            unreadable.append("its container %s takes environment variables from %s (envFrom): its KURED_ settings cannot be "
                              "read here" % (container.get("name") or "?", ", ".join(sources) or "a source"))
        for entry in container.get("env") or []:
            if isinstance(entry, dict) and str(entry.get("name") or "").startswith(KURED_ENV_PREFIX + "_"):
                env[str(entry["name"])] = entry
    for name, dummy in KURED_SETTINGS:
        variable = "%s_%s" % (KURED_ENV_PREFIX, name.upper().replace("-", "_"))
        entry = env.get(variable)
        if entry is None:
            continue
        if "valueFrom" in entry and "value" not in entry:
            unreadable.append("%s comes from valueFrom: its value cannot be read here" % variable)
        else:
            values[name] = str(entry.get("value") or "")
    concurrency = as_integer(values["concurrency"] if values["concurrency"] is not None else "1")
    if concurrency is None:
        unreadable.append("its concurrency %r is no number: kured exits" % values["concurrency"])
    return {"lock_annotation": values["lock-annotation"] or KURED_LOCK_ANNOTATION,
            "concurrency": min(max(concurrency or 1, 1), MAX_OWNERS), "ds_name": values["ds-name"] or None,
            "ds_namespace": values["ds-namespace"] or None, "unreadable": "; ".join(unreadable)}


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
    """[(namespace/name of the DaemonSet that holds the lock, lock annotation key, that DaemonSet, kured's settings)] of
    kured's DaemonSets (kured_settings: its flags, then its KURED_ environment), and an error or None. The lock is on
    the DaemonSet kured's ds-namespace/ds-name name, else on kured's own.

    ``setting``: ``auto`` (every DaemonSet that runs kured, wherever installed), ``namespace/name`` (that
    one, which must exist), or empty (not checked)."""
    if not setting:
        return [], None
    found = []
    by_ident = {"%s/%s" % ((d.get("metadata") or {}).get("namespace"), (d.get("metadata") or {}).get("name")): d for d in daemonsets}
    for ds in daemonsets:
        meta = ds.get("metadata") or {}
        ident = "%s/%s" % (meta.get("namespace"), meta.get("name"))
        if (setting == AUTO and (is_kured(ds) or ident == "%s/%s" % KURED_DEFAULT)) or ident == setting:
            settings = kured_settings(ds)
            lock_ident = "%s/%s" % (settings["ds_namespace"] or meta.get("namespace"), settings["ds_name"] or meta.get("name"))
            found.append((lock_ident, settings["lock_annotation"], by_ident.get(lock_ident, {"metadata": {}}), settings))
    if setting != AUTO and not found:
        return [], ("rke2_numa_kured_daemonset %s: no such DaemonSet, so kured's reboot lock cannot be read; "
                    "set it to kured's namespace/name, auto (find it), or empty if kured is not installed" % setting)
    return found, None


def _roll_entry(roll_id):
    return "%s/%s" % (ROLL_LOCK_NODE, roll_id)


def _ids(roll_id):
    """A roll id, or this roll's id and the dead rolls whose Lease it took over (their entries are its to replace)."""
    return tuple(str(i) for i in (roll_id if isinstance(roll_id, (list, tuple)) else [roll_id]) if i)


def _ours(node_id, roll_id):
    """An entry this roll wrote: ``rke2-numa.maitred.io/roll/<id>`` or ``.../<id>/<n>`` - or one of a dead roll whose
    Lease this roll took over (``roll_id`` a list: its id first, then theirs). Another roll's entries (and those of
    rolls before roll ids, ``.../roll`` and ``.../roll-<n>``) are held locks."""
    node_id = str(node_id)
    for one in _ids(roll_id):
        mine = _roll_entry(one)
        if node_id == mine or node_id.startswith(mine + "/"):
            return True
    return False


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
    """Per kured DaemonSet whose lock is free (readable, and no live entry but this roll's - or a dead roll's whose Lease
    it took over: ``roll_id`` a list, this roll's id first): the annotation value that holds it for the roll, in the
    format kured reads (pkg/daemonsetlock): one owner when kured runs with concurrency 1, else a multi lock with as
    many live entries as kured's own concurrency - kured compares the entries with its concurrency, not with the
    annotation's maxOwners (canAcquireMultiple), and reads a one-owner value as a multi lock with no entries: free.
    kured's concurrency is its flag or its KURED_CONCURRENCY (kured_settings). A DaemonSet whose lock kured or another
    roll holds, whose value neither format has, or whose kured settings cannot be read, is left alone
    (maintainers_at_work refuses the node). Returns [{daemonset, namespace, name, annotation, resource_version, value}]."""
    kureds, error = find_kured(daemonsets, kured_setting)
    if error or not _ids(roll_id):
        return []
    own = _ids(roll_id)[0]
    out = []
    for ident, key, ds, settings in kureds:
        if settings["unreadable"] or not (ds.get("metadata") or {}).get("name"):
            continue
        text = ((ds.get("metadata") or {}).get("annotations") or {}).get(key)
        shape, current = kured_lock_value(text) if text is not None else ("absent", None)
        if shape == "unreadable" or any(not _ours(lock["node"], roll_id) for lock in kured_locks(text, now) if text is not None):
            continue
        owners = settings["concurrency"]
        multi = owners > 1 or shape == "multi"
        if shape == "multi":
            owners = max(owners, current["maxOwners"])

        def entry(suffix):
            return {"nodeID": _roll_entry(own) + suffix, "metadata": {"unschedulable": False}, "created": _rfc3339(now),
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
    """Per kured DaemonSet whose lock holds entries of roll ``roll_id`` (a list: also the dead rolls whose Lease it
    took over): the value without them (``value`` None: remove the annotation, as kured's own release does for its
    one-owner lock). Entries kured or another roll wrote are kept; a value neither format has is never rewritten."""
    kureds, dummy = find_kured(daemonsets, kured_setting)
    out = []
    for ident, key, ds, settings in kureds:
        text = ((ds.get("metadata") or {}).get("annotations") or {}).get(key)
        if text is None or not _ids(roll_id) or not (ds.get("metadata") or {}).get("name"):
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
    ``roll_id``: this roll's (its own kured entries hold nothing against it, nor those of a dead roll whose Lease it
    took over - a list, its id first; another roll's do)."""
    name = (node.get("metadata") or {}).get("name")
    annotations = (node.get("metadata") or {}).get("annotations") or {}
    reasons = []
    kureds, error = find_kured(daemonsets, kured_setting)
    if error:
        reasons.append(error)
    for ident, key, ds, settings in kureds:
        if settings["unreadable"]:
            reasons.append("kured's settings cannot be read (%s): its reboot lock is treated as held; give kured its "
                           "settings as flags or plain env values, or set rke2_numa_kured_daemonset to \"\" if the roll "
                           "need not keep kured off" % settings["unreadable"])
            continue
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
