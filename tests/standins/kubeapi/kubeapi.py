#!/bin/sh
""":"
exec python3 "$0" "$@"
":"""
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
#
# Stand-in for the Kubernetes API server, at the HTTP level: the real kubectl
# runs cordon, uncordon, drain, wait, get, label and annotate against it, and,
# for least privilege, apply --server-side / get -f / delete -f, create token,
# auth can-i and auth whoami. It serves what those commands ask for, shaped as
# the API reference describes: discovery (/api, /apis and the resource lists,
# legacy form: kubectl falls back to it from aggregated discovery), Nodes (get,
# list, watch, patch), Pods (get, list, watch, delete, the policy/v1 eviction
# subresource with PodDisruptionBudget refusals), the DaemonSets, ReplicaSets,
# PodDisruptionBudgets and Namespaces the pods imply, Namespaces,
# ServiceAccounts, ClusterRoles, ClusterRoleBindings, Roles, RoleBindings and
# coordination.k8s.io/v1 Leases stored through the API (create, get, list,
# watch, patch, server-side apply, update - a stale metadata.resourceVersion
# is 409 Conflict, a second create 409 AlreadyExists - delete), TokenRequest, the self access/rules/subject reviews,
# meta.k8s.io/v1 Tables for kubectl get, and Status objects for every error.
# README.md next to this file has the details.
#
# Every request is authenticated (a bearer token: ADMIN_TOKEN is system:admin
# in system:masters, a TokenRequest token its ServiceAccount; none is
# system:anonymous; a bad one is 401) and authorized as kube-apiserver does it
# (system:masters may do anything, then RBAC over the stored roles and
# bindings and the bootstrap ones; 403 Forbidden with the API server's
# message); a pod's creation passes Pod Security admission (a namespace's
# pod-security.kubernetes.io/enforce label). The port speaks TLS (a self-signed certificate it makes itself)
# and plain HTTP: kubectl sends a kubeconfig's credentials over https only.
#
# The cluster is the folder the rke2 stand-ins write: one file per
# Node, <state dir>/nodes/<name>.json, read fresh on every request (the rke2
# stand-in changes readiness under our feet) and read-modify-written under the
# same per-node lock file; <state dir>/daemonsets.json may declare DaemonSets
# (e.g. kured's, with its lock annotation). What the API stores goes into
# <state dir>/objects/<plural>.json, the tokens' digests into
# <state dir>/auth/tokens.json (0600). Every request is one JSON line in
# <state dir>/kubeapi.log (with the user who made it), so tests can assert the
# order of calls across nodes.
#
#   kubeapi.py serve --state-dir DIR [--address 127.0.0.1] [--port 6443|0] [--port-file FILE] [--log FILE] [--tls-dir DIR]
#   kubeapi.py kubeconfig --server https://127.0.0.1:PORT [--namespace NS] [--token TOKEN]
#
# The first lines make the file both a shell script and Python (see the rke2
# stand-in). Python 3.8+ standard library only; no import of the collection
# nor of the other stand-ins.

from __future__ import annotations

import argparse
import base64
import contextlib
import copy
import datetime
import fcntl
import hashlib
import hmac
import http.server
import json
import os
import re
import secrets
import select
import signal
import socket
import ssl
import sys
import threading
import time
import traceback
import urllib.parse
import uuid
from fractions import Fraction

try:   # cel-python (PyPI): the CEL of ValidatingAdmissionPolicy; without it the stand-in is a cluster without that API
    import celpy
    import celpy.celtypes
except ImportError:  # pragma: no cover - requirements-dev.txt installs it
    celpy = None

DEFAULT_STATE_DIR = "/var/lib/rke2-standin"
VERSION = "v1.33.1+rke2r1"
KUBELET_VERSION = VERSION
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
POLL_SECONDS = 0.1
UID_NAMESPACE = uuid.UUID("0f6d3a52-1c1e-4d8e-9a55-6b6e2a1d4c11")

# Taints the node controllers own: derived from spec.unschedulable and the Ready condition, never stored.
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
DERIVED_TAINTS = (UNSCHEDULABLE_TAINT, UNREACHABLE_TAINT, "node.kubernetes.io/not-ready")
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
OWNER_API_VERSIONS = {"DaemonSet": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "Deployment": "apps/v1",
                      "Job": "batch/v1", "CronJob": "batch/v1", "Node": "v1", "ReplicationController": "v1"}
PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json")
RBAC_GROUP = "rbac.authorization.k8s.io"
COORDINATION_GROUP = "coordination.k8s.io"
ADMISSION_GROUP = "admissionregistration.k8s.io"
DRA_GROUP = "resource.k8s.io"   # Dynamic Resource Allocation
DRA_V1_SINCE = 34   # resource.k8s.io/v1 served (GA, on by default) from Kubernetes 1.34 (KEP-4381 kep.yaml: stable v1.34)


# ---------------------------------------------------------------- errors: Status objects

class ApiError(Exception):
    """An error the API server answers with a Status object (kind Status, apiVersion v1, status Failure)."""

    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def status(self):
        doc = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": self.message,
               "reason": self.reason}
        if self.details is not None:
            doc["details"] = self.details
        doc["code"] = self.code
        return doc


def not_found_path():
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def not_found(kind, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (kind.qualified, name), kind.details(name))


def bad_request(message):
    return ApiError(400, "BadRequest", message)


def method_not_allowed():
    return ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})


def conflict(kind, name):
    return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the object has been modified; please apply your '
                    "changes to the latest version and try again" % (kind.qualified, name), kind.details(name))


def invalid(kind, name, causes):
    """422 Invalid; causes are (field, message, reason) as the API's field.ErrorList renders them."""
    return invalid_kind(kind.group, kind.kind, name, causes)


def invalid_kind(group, kind, name, causes):
    """apierrors.NewInvalid(GroupKind{group, kind}, name, errs): Kind.group "name" is invalid: ... (one error as is,
    several as [a, b])."""
    texts = []
    for field, message, dummy in causes:
        if "%s: %s" % (field, message) not in texts:
            texts.append("%s: %s" % (field, message))
    summary = texts[0] if len(texts) == 1 else "[%s]" % ", ".join(texts)
    listed = [{"reason": reason, "message": message, "field": field} for field, message, reason in causes]
    details = {"name": name} if name else {}
    if group:
        details["group"] = group
    details.update(kind=kind, causes=listed)
    qualified = "%s.%s" % (kind, group) if group else kind
    return ApiError(422, "Invalid", '%s "%s" is invalid: %s' % (qualified, name, summary), details)


# ---------------------------------------------------------------- time

def _iso(epoch=None):
    moment = datetime.datetime.fromtimestamp(time.time() if epoch is None else epoch, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _epoch(text):
    """RFC 3339 (as the stand-ins write it) -> seconds since the epoch; None when absent or unreadable."""
    if not text:
        return None
    text = str(text).strip().replace("Z", "+00:00")
    text = re.sub(r"(\.\d{6})\d+", r"\1", text)
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.timestamp()


def human_duration(seconds):
    """An age as kubectl's tables show it: 45s, 5m30s, 3h10m, 2d4h, 40d, 2y10d."""
    sec = int(seconds)
    if sec < -1:
        return "<invalid>"
    if sec < 0:
        return "0s"
    if sec < 120:
        return "%ds" % sec
    minutes = sec // 60
    if minutes < 10:
        return "%dm%ds" % (minutes, sec % 60) if sec % 60 else "%dm" % minutes
    if minutes < 180:
        return "%dm" % minutes
    hours = sec // 3600
    if hours < 8:
        return "%dh%dm" % (hours, minutes % 60) if minutes % 60 else "%dh" % hours
    if hours < 48:
        return "%dh" % hours
    if hours < 24 * 8:
        return "%dd%dh" % (hours // 24, hours % 24) if hours % 24 else "%dd" % (hours // 24)
    if hours < 24 * 365 * 2:
        return "%dd" % (hours // 24)
    years, days = hours // 24 // 365, hours // 24 % 365
    if hours < 24 * 365 * 8 and days:
        return "%dy%dd" % (years, days)
    return "%dy" % years


def _age(timestamp, now):
    created = _epoch(timestamp)
    return "<unknown>" if created is None else human_duration(now - created)


# ---------------------------------------------------------------- the state folder (shared with the rke2 stand-in)

NAME_RE = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


class Store:
    """<state dir>/nodes/<name>.json, each read-modify-written under nodes/.<name>.lock as the rke2 stand-in does."""

    def __init__(self, directory):
        self.directory = directory
        self.nodes_dir = os.path.join(directory, "nodes")

    def path(self, name):
        return os.path.join(self.nodes_dir, name + ".json")

    def locked(self, name):
        """box["node"] is the record (None when absent); it is written back when changed."""
        os.makedirs(self.nodes_dir, exist_ok=True)
        return self._locked(self.path(name), os.path.join(self.nodes_dir, "." + name + ".lock"))

    def locked_pending(self):
        """<state dir>/pending-pods.json: pods no kubelet will run (no spec.nodeName, or a node that has no file), kept as a
        record {"name": "", "pods": [...]} like a node's; box["node"] is never None."""
        os.makedirs(self.directory, exist_ok=True)
        return self._locked(os.path.join(self.directory, PENDING_FILE), os.path.join(self.directory, ".pending-pods.lock"),
                            {"name": "", "pods": []})

    def pending(self):
        if not os.path.exists(os.path.join(self.directory, PENDING_FILE)):
            return {"name": "", "pods": []}
        with self.locked_pending() as box:
            finish_deletions(box["node"])
            return copy.deepcopy(box["node"])

    def locked_file(self, path, lock_path, empty, mode=None):
        """Any JSON file of the state folder read-modify-written under its lock file: box["node"] is its content (empty
        when absent), written back (atomically, with this mode) when changed."""
        return self._locked(path, lock_path, empty, mode)

    @contextlib.contextmanager
    def _locked(self, path, lock_path, empty=None, mode=None):
        with open(lock_path, "a", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                try:
                    with open(path, encoding="utf-8") as handle:
                        node = json.load(handle)
                except (OSError, ValueError):
                    node = None
                if node is None and empty is not None:
                    node = copy.deepcopy(empty)
                box = {"node": node}
                before = json.dumps(node, sort_keys=True)
                yield box
                if box["node"] is not None and json.dumps(box["node"], sort_keys=True) != before:
                    tmp = "%s.tmp.%d.%d" % (path, os.getpid(), threading.get_ident())
                    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666 if mode is None else mode), "w",
                                   encoding="utf-8") as handle:
                        if mode is not None:
                            os.fchmod(handle.fileno(), mode)
                        json.dump(box["node"], handle, indent=2, sort_keys=True)
                        handle.write("\n")
                    os.replace(tmp, path)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def names(self):
        try:
            entries = os.listdir(self.nodes_dir)
        except OSError:
            return []
        return sorted(n[:-5] for n in entries if n.endswith(".json") and not n.startswith(".") and NAME_RE.match(n[:-5]))

    def exists(self, name):
        return bool(NAME_RE.match(name)) and os.path.exists(self.path(name))

    def read(self, name):
        """The record as it is now (pods whose deletion has finished are dropped, and the file says so)."""
        if not self.exists(name):
            return None
        with self.locked(name) as box:
            if box["node"] is not None:
                finish_deletions(box["node"])
            return copy.deepcopy(box["node"])

    def nodes(self):
        return [node for node in (self.read(name) for name in self.names()) if node is not None]

    def declared(self, plural):
        """<state dir>/<plural>.json: objects a test declares beside what the nodes imply (a list; absent: none)."""
        try:
            with open(os.path.join(self.directory, plural + ".json"), encoding="utf-8") as handle:
                records = json.load(handle)
        except (OSError, ValueError):
            return []
        return records if isinstance(records, list) else []


def finish_deletions(node, now=None):
    """Pods accepted for deletion linger deleteSeconds (their containers stopping); then they are gone."""
    now = time.time() if now is None else now
    pods = node.get("pods") or []
    kept = [p for p in pods if not (p.get("deleteAt") is not None and float(p["deleteAt"]) <= now)]
    if len(kept) != len(pods):
        node["pods"] = kept


def ready_status(node, now=None):
    """The Ready condition's status, the rule of the node lifecycle controller: True while the kubelet posts Ready; after it
    stops, True for staleReadySeconds more (the node controller's grace period), then Unknown."""
    if node.get("ready"):
        return "True"
    since, grace = node.get("notReadySince"), float(node.get("staleReadySeconds") or 0)
    if since is not None and grace > 0 and (time.time() if now is None else now) - float(since) < grace:
        return "True"
    return "Unknown"


def uid_for(resource, namespace, name):
    return str(uuid.uuid5(UID_NAMESPACE, "%s/%s/%s" % (resource, namespace or "", name)))


# ---------------------------------------------------------------- objects, as the API server renders them

def node_object(node, now=None):
    name = node["name"]
    status = ready_status(node, now)
    meta = {"name": name, "uid": uid_for("nodes", "", name)}
    if node.get("created"):
        meta["creationTimestamp"] = node["created"]
    labels = {str(k): "" if v is None else str(v) for k, v in (node.get("labels") or {}).items()}
    if labels:
        meta["labels"] = labels
    annotations = {str(k): "" if v is None else str(v) for k, v in (node.get("annotations") or {}).items()}
    if annotations:
        meta["annotations"] = annotations
    spec = {"providerID": "rke2://" + name}
    taints = [dict(t) for t in node.get("taints") or [] if isinstance(t, dict) and t.get("key") not in DERIVED_TAINTS]
    if node.get("unschedulable"):
        spec["unschedulable"] = True
        taint = {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}
        if node.get("cordonedAt"):
            taint["timeAdded"] = node["cordonedAt"]
        taints.append(taint)
    if status == "Unknown":
        taints += [{"key": UNREACHABLE_TAINT, "effect": "NoSchedule"}, {"key": UNREACHABLE_TAINT, "effect": "NoExecute"}]
    if taints:
        spec["taints"] = taints

    def condition(kind, value, reason, message):
        entry = {"type": kind, "status": value}
        if node.get("lastHeartbeatTime"):
            entry["lastHeartbeatTime"] = node["lastHeartbeatTime"]
        if node.get("lastTransitionTime"):
            entry["lastTransitionTime"] = node["lastTransitionTime"]
        entry.update(reason=reason, message=message)
        return entry

    if status == "True":
        conditions = [condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                      condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                      condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                      condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")]
    else:
        conditions = [condition(kind, "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
                      for kind in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")]
    node_info = {"machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "", "osImage": "", "containerRuntimeVersion": "",
                 "kubeletVersion": node.get("kubeletVersion") or KUBELET_VERSION, "kubeProxyVersion": "",
                 "operatingSystem": "linux", "architecture": "amd64"}
    status = {}
    for field in ("capacity", "allocatable"):  # what the rke2 stand-in's kubelet reports
        if isinstance(node.get(field), dict) and node[field]:
            status[field] = {str(k): str(v) for k, v in sorted(node[field].items())}
    status.update({"conditions": conditions, "addresses": [{"type": "Hostname", "address": name}],
                   "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}, "nodeInfo": node_info})
    return {"kind": "Node", "apiVersion": "v1", "metadata": meta, "spec": spec, "status": status}


def as_admitted_node(after, before):
    """The Node admission sees for an update: the patched object with the controller-owned taints as they were
    (the node controllers add or remove theirs after the write, as another user; the patch itself did not)."""
    admitted = copy.deepcopy(after)
    spec = admitted.setdefault("spec", {})
    own = [t for t in spec.get("taints") or [] if t.get("key") not in DERIVED_TAINTS]
    derived = [t for t in (before.get("spec") or {}).get("taints") or [] if t.get("key") in DERIVED_TAINTS]
    if own + derived:
        spec["taints"] = own + derived
    else:
        spec.pop("taints", None)
    return admitted


def owner_name(node, pod):
    """The controller's name: ownerName when the record has one, else the pod name less its last part
    (rke2-canal-n1 -> rke2-canal), as controllers name their pods; a static pod's owner is its Node."""
    if pod.get("ownerName"):
        return str(pod["ownerName"])
    if pod.get("owner") == "Node":
        return node["name"]
    base, sep, dummy = str(pod["name"]).rpartition("-")
    return base if sep and base else str(pod["name"])


def pod_object(node, pod):
    namespace, name = str(pod["namespace"]), str(pod["name"])
    created = pod.get("created") or node.get("created")
    meta = {"name": name, "namespace": namespace, "uid": str(pod.get("uid") or uid_for("pods", namespace, node["name"] + "/" + name))}
    if created:
        meta["creationTimestamp"] = created
    if pod.get("labels"):
        meta["labels"] = {str(k): str(v) for k, v in pod["labels"].items()}
    if pod.get("mirror"):
        digest = hashlib.md5(("%s/%s" % (namespace, name)).encode()).hexdigest()  # nosec - a config hash, not security
        meta["annotations"] = {MIRROR_ANNOTATION: digest, "kubernetes.io/config.hash": digest, "kubernetes.io/config.source": "file"}
    owner = pod.get("owner")
    if owner:
        reference = {"apiVersion": OWNER_API_VERSIONS.get(owner, "v1"), "kind": owner, "name": owner_name(node, pod),
                     "controller": True}
        if owner == "Node":
            reference["uid"] = uid_for("nodes", "", node["name"])
        else:
            reference["uid"] = uid_for(owner.lower() + "s", namespace, reference["name"])
            reference["blockOwnerDeletion"] = True
        meta["ownerReferences"] = [reference]
    if pod.get("deletionTimestamp"):
        meta["deletionTimestamp"] = pod["deletionTimestamp"]
        meta["deletionGracePeriodSeconds"] = int(pod.get("deletionGracePeriodSeconds") or 0)
    if isinstance(pod.get("spec"), dict):  # a pod created through the API (or a test's record with a spec)
        spec = copy.deepcopy(pod["spec"])
        if node.get("name"):
            spec["nodeName"] = node["name"]
        if pod.get("annotations"):
            meta["annotations"] = {str(k): str(v) for k, v in pod["annotations"].items()}
        return {"kind": "Pod", "apiVersion": "v1", "metadata": meta, "spec": spec, "status": spec_pod_status(pod, created, bool(node.get("name")))}
    spec = {"nodeName": node["name"], "containers": [{"name": "app", "image": PAUSE_IMAGE}], "restartPolicy": "Always",
            "schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 30}
    if pod.get("emptyDir"):
        spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
        spec["containers"][0]["volumeMounts"] = [{"name": "scratch", "mountPath": "/scratch"}]
    phase = pod.get("phase") or "Running"
    running = phase == "Running"
    status = {"phase": phase, "startTime": created,
              "conditions": [{"type": "Ready", "status": "True" if running else "False"}],
              "containerStatuses": [{"name": "app", "image": PAUSE_IMAGE, "imageID": "", "ready": running, "started": running,
                                     "restartCount": 0, "state": {"running": {"startedAt": created}} if running else
                                     {"terminated": {"exitCode": 0 if phase == "Succeeded" else 1, "reason": "Completed"
                                                     if phase == "Succeeded" else "Error"}}}]}
    return {"kind": "Pod", "apiVersion": "v1", "metadata": meta, "spec": spec, "status": status}


def _common_labels(pods):
    common = None
    for pod in pods:
        labels = {str(k): str(v) for k, v in (pod.get("labels") or {}).items()}
        common = labels if common is None else {k: v for k, v in common.items() if labels.get(k) == v}
    return common or {}


def _owned(nodes, kind):
    """(namespace, owner name) -> [(node, pod)] for the pods a controller of this kind owns."""
    groups = {}
    for node in nodes:
        for pod in node.get("pods") or []:
            if pod.get("owner") == kind:
                groups.setdefault((str(pod["namespace"]), owner_name(node, pod)), []).append((node, pod))
    return groups


def _earliest(entries):
    stamps = sorted(s for s in ((p.get("created") or n.get("created")) for n, p in entries) if s)
    return stamps[0] if stamps else None


def kured_acquires(value, concurrency, node_id, now):
    """Would kured (kubereboot/kured 1.17, pkg/daemonsetlock/daemonsetlock.go) on ``node_id`` take its lock now, given
    the lock annotation's ``value`` (None: absent) and the concurrency it runs with (its --concurrency, or
    KURED_CONCURRENCY: cmd/kured/main.go LoadFromEnv)? Reproduced from its source, for the tests to ask kured's own
    question: concurrency 1 - DaemonSetSingleLock.Acquire: the value unmarshalled into one lockAnnotationValue (a
    multi value gives an empty nodeID, a zero created time and TTL 0), taken when absent or ttlExpired(created, TTL)
    (TTL > 0 and that long since created), else held by its nodeID; more - DaemonSetMultiLock.Acquire and
    canAcquireMultiple: free while fewer entries than kured's own concurrency (a one-owner value unmarshals to no
    entries), or when an entry's TTL expired."""
    def expired(entry):
        ttl = entry.get("TTL") or 0
        created = _epoch(entry.get("created")) if entry.get("created") else None
        return ttl > 0 and created is not None and now - created >= ttl / 1e9

    data = json.loads(value) if value else None
    if int(concurrency) <= 1:
        if not isinstance(data, dict):
            return data is None
        return expired(data) or data.get("nodeID") == node_id
    locks = (data or {}).get("locks") or [] if isinstance(data, dict) else []
    return len(locks) < int(concurrency) or any(expired(lock) for lock in locks)


def daemonset_objects(nodes, declared=()):
    """The DaemonSets that own pods, and those <state dir>/daemonsets.json declares (with their labels and
    annotations, e.g. kured's lock, and their pod template's containers - kured's flags and environment; a declared
    DaemonSet may have no pod)."""
    out = []
    owned = _owned(nodes, "DaemonSet")
    records = {}
    for record in declared:
        if isinstance(record, dict) and record.get("name"):
            records[(str(record.get("namespace") or "default"), str(record["name"]))] = record
            owned.setdefault((str(record.get("namespace") or "default"), str(record["name"])), [])
    for (namespace, name), entries in sorted(owned.items()):
        selector = _common_labels([p for dummy, p in entries])
        count, ready = len(entries), sum(1 for n, dummy in entries if ready_status(n) == "True")
        meta = {"name": name, "namespace": namespace, "uid": uid_for("daemonsets", namespace, name), "generation": 1}
        record = records.get((namespace, name)) or {}
        created = record.get("created") or _earliest(entries)
        if created:
            meta["creationTimestamp"] = created
        for field in ("labels", "annotations"):
            if record.get(field):
                meta[field] = {str(k): str(v) for k, v in record[field].items()}
        out.append({"kind": "DaemonSet", "apiVersion": "apps/v1", "metadata": meta,
                    "spec": {"selector": {"matchLabels": selector},
                             "template": {"metadata": {"labels": selector},
                                          "spec": {"containers": record.get("containers") or [{"name": "app", "image": PAUSE_IMAGE}]}},
                             "updateStrategy": {"type": "RollingUpdate"}},
                    "status": {"currentNumberScheduled": count, "desiredNumberScheduled": count, "numberMisscheduled": 0,
                               "numberReady": ready, "numberAvailable": ready, "updatedNumberScheduled": count, "observedGeneration": 1}})
    return out


def replicaset_objects(nodes):
    out = []
    for (namespace, name), entries in sorted(_owned(nodes, "ReplicaSet").items()):
        selector = _common_labels([p for dummy, p in entries])
        count = len(entries)
        meta = {"name": name, "namespace": namespace, "uid": uid_for("replicasets", namespace, name), "generation": 1}
        if _earliest(entries):
            meta["creationTimestamp"] = _earliest(entries)
        out.append({"kind": "ReplicaSet", "apiVersion": "apps/v1", "metadata": meta,
                    "spec": {"replicas": count, "selector": {"matchLabels": selector},
                             "template": {"metadata": {"labels": selector}, "spec": {"containers": [{"name": "app", "image": PAUSE_IMAGE}]}}},
                    "status": {"replicas": count, "fullyLabeledReplicas": count, "readyReplicas": count, "availableReplicas": count,
                               "observedGeneration": 1}})
    return out


def pdb_entries(nodes):
    """(namespace, PodDisruptionBudget name) -> [(node, pod)] for pods whose `pdb` forbids their eviction."""
    groups = {}
    for node in nodes:
        for pod in node.get("pods") or []:
            if pod.get("pdb") and not pod.get("deletionTimestamp"):
                groups.setdefault((str(pod["namespace"]), str(pod["pdb"])), []).append((node, pod))
    return groups


def pdb_objects(nodes):
    out = []
    for (namespace, name), entries in sorted(pdb_entries(nodes).items()):
        count = len(entries)
        meta = {"name": name, "namespace": namespace, "uid": uid_for("poddisruptionbudgets", namespace, name), "generation": 1}
        if _earliest(entries):
            meta["creationTimestamp"] = _earliest(entries)
        out.append({"kind": "PodDisruptionBudget", "apiVersion": "policy/v1", "metadata": meta,
                    "spec": {"maxUnavailable": 0, "selector": {"matchLabels": _common_labels([p for dummy, p in entries])}},
                    "status": {"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": count, "desiredHealthy": count,
                               "expectedPods": count,
                               "conditions": [{"type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods",
                                               "message": "", "observedGeneration": 1}]}})
    return out


def pod_objects(nodes):
    return [pod_object(node, pod) for node in nodes for pod in node.get("pods") or []]


SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


def namespace_objects(nodes, declared=()):
    """The namespaces every cluster has, those of the pods, and those of the declared DaemonSets (kubectl 1.30+
    asks for the namespace when a namespaced object is not found, to say which of the two is missing)."""
    names = set(SYSTEM_NAMESPACES)
    names.update(str(p["namespace"]) for n in nodes for p in n.get("pods") or [])
    names.update(str(r.get("namespace") or "default") for r in declared if isinstance(r, dict))
    stamps = sorted(n["created"] for n in nodes if n.get("created"))
    out = []
    for name in sorted(names):
        meta = {"name": name, "uid": uid_for("namespaces", "", name), "labels": {"kubernetes.io/metadata.name": name}}
        if stamps:
            meta["creationTimestamp"] = stamps[0]
        out.append({"kind": "Namespace", "apiVersion": "v1", "metadata": meta, "spec": {"finalizers": ["kubernetes"]},
                    "status": {"phase": "Active"}})
    return out


# ---------------------------------------------------------------- pods created through the API

QUANTITY_RE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?")
QUANTITY_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
PENDING_FILE = "pending-pods.json"


class Quantity:
    """A resource.Quantity: its exact value and the form String() prints it in (the API server's canonical form)."""

    def __init__(self, value, binary=False):
        self.value, self.binary = Fraction(value), binary

    def __str__(self):
        value = self.value
        if self.binary and value.denominator == 1 and abs(value) >= 1024:
            number, power = int(value), 0
            while power < 6 and number % 1024 == 0:
                number //= 1024
                power += 1
            return "%d%s" % (number, ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")[power])
        if value == 0:
            return "0"
        scale = 0
        while (value * 10 ** scale).denominator != 1 and scale < 30:
            scale += 1
        amount, exponent = int(value * 10 ** scale), -scale
        while amount % 10 == 0:
            amount //= 10
            exponent += 1
        amount, exponent = amount * 10 ** (exponent % 3), exponent - exponent % 3
        if exponent < -9:  # below nano: rounded up to 1n, as the API server does
            return "1n"
        names = {v: k for k, v in _DECIMAL.items()}
        return "%d%s" % (amount, names.get(exponent, "e%d" % exponent))


def parse_quantity(raw):
    """resource.ParseQuantity (numbers in JSON are quantities too); ValueError with its message."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise ValueError(QUANTITY_ERROR)
    text = str(raw) if not isinstance(raw, float) else repr(raw)
    match = QUANTITY_RE.fullmatch(text)
    if not text or not match or not (match.group(2) or match.group(3)):
        raise ValueError(QUANTITY_ERROR)
    sign, whole, frac, suffix = match.groups()
    number = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
    number = -number if sign == "-" else number
    suffix = suffix or ""
    if suffix in _BINARY:
        return Quantity(number * 1024 ** _BINARY[suffix], True)
    if suffix in _DECIMAL:
        return Quantity(number * Fraction(10) ** _DECIMAL[suffix])
    return Quantity(number * Fraction(10) ** int(suffix[1:]))


def _is_hugepages(name):
    return name.startswith("hugepages-")


def _is_native(name):
    return "/" not in name or name.split("/", 1)[0].endswith("kubernetes.io")


def _is_extended(name):
    return not _is_native(name) and not name.startswith("requests.")


def pod_qos(spec):
    """GetPodQOS (pkg/apis/core/helper/qos ComputePodQOS): cpu and memory only; requests default to limits. A pod with
    its own budget (``spec.resources``, PodLevelResources: beta and on from 1.34) is judged by it alone: Guaranteed when
    it limits cpu and memory and requests what it limits."""
    pod_level = spec.get("resources") if isinstance(spec.get("resources"), dict) else None
    if pod_level and (pod_level.get("requests") or pod_level.get("limits")):
        limits = {}
        for name, raw in (pod_level.get("limits") or {}).items():
            with contextlib.suppress(ValueError):
                if name in ("cpu", "memory") and parse_quantity(raw).value > 0:
                    limits[name] = parse_quantity(raw).value
        requests = dict(limits)
        for name, raw in (pod_level.get("requests") or {}).items():
            with contextlib.suppress(ValueError):
                if name in ("cpu", "memory") and parse_quantity(raw).value > 0:
                    requests[name] = parse_quantity(raw).value
        if not requests and not limits:
            return "BestEffort"
        guaranteed = set(limits) >= {"cpu", "memory"} and all(limits.get(k) == v for k, v in requests.items())
        return "Guaranteed" if guaranteed and len(requests) == len(limits) else "Burstable"
    requests, limits, guaranteed = {}, {}, True
    for container in list(spec.get("initContainers") or []) + list(spec.get("containers") or []):
        resources = (container or {}).get("resources") or {}
        clim = {}
        for name, raw in (resources.get("limits") or {}).items():
            with contextlib.suppress(ValueError):
                clim[name] = parse_quantity(raw).value
        creq = dict(clim)
        for name, raw in (resources.get("requests") or {}).items():
            with contextlib.suppress(ValueError):
                creq[name] = parse_quantity(raw).value
        for name in ("cpu", "memory"):
            if creq.get(name):
                requests[name] = requests.get(name, 0) + creq[name]
            if clim.get(name):
                limits[name] = limits.get(name, 0) + clim[name]
        if not (clim.get("cpu") and clim.get("memory")):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and len(requests) == len(limits) and all(limits.get(k) == v for k, v in requests.items()):
        return "Guaranteed"
    return "Burstable"


def _resource_causes(resources, path):
    """ValidateContainerResourceRequirements, for what a probe pod uses (field, message, reason) as field.ErrorList renders."""
    causes = []
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    parsed = {}
    for kind, values in (("limits", limits), ("requests", requests)):
        for name in sorted(values):
            parsed[(kind, name)] = parse_quantity(values[name])
    found = {"limits": set(), "requests": set()}
    hugepages = False
    for kind in ("limits", "requests"):
        for name in sorted((limits, requests)[kind == "requests"]):
            field = "%s.%s[%s]" % (path, kind, name)
            quantity = parsed[(kind, name)]
            if quantity.value < 0:
                causes.append((field, 'Invalid value: "%s": must be greater than or equal to 0' % quantity, "FieldValueInvalid"))
            if _is_extended(name) and quantity.value.denominator != 1:  # IsIntegerResourceName
                causes.append((field, 'Invalid value: "%s": must be an integer' % quantity, "FieldValueInvalid"))
            if _is_hugepages(name):
                hugepages = True
                size = parse_quantity(name[len("hugepages-"):]) if re.fullmatch(r"hugepages-[0-9]+(Ki|Mi|Gi|Ti|Pi|Ei)?", name) else None
                if size is not None and size.value > 0 and (quantity.value / size.value).denominator != 1:
                    causes.append((field, 'Invalid value: "%s": %s is not positive integer multiple of %s' % (quantity, quantity, name),
                                   "FieldValueInvalid"))
            if name in ("cpu", "memory"):
                found[kind].add(name)
            if kind == "requests":
                overcommit = _is_native(name) and not _is_hugepages(name)
                if name in limits:
                    limit = parsed[("limits", name)]
                    if quantity.value != limit.value and not overcommit:
                        causes.append(("%s.requests" % path, 'Invalid value: "%s": must be equal to %s limit of %s' % (quantity, name, limit),
                                       "FieldValueInvalid"))
                    elif quantity.value > limit.value:
                        causes.append(("%s.requests" % path, 'Invalid value: "%s": must be less than or equal to %s limit of %s'
                                       % (quantity, name, limit), "FieldValueInvalid"))
                elif not overcommit:
                    causes.append(("%s.limits" % path, "Required value: Limit must be set for non overcommitable resources",
                                   "FieldValueRequired"))
    if hugepages and not found["limits"] and not found["requests"]:
        causes.append((path, "Forbidden: HugePages require cpu or memory", "FieldValueForbidden"))
    return causes


def pod_causes(pod):
    """The part of ValidatePodCreate a probe exercises; BadRequest (ApiError) when a quantity does not even decode."""
    causes = []
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    name = meta.get("name") or ""
    if not name:
        causes.append(("metadata.name", "Required value: name or generateName is required", "FieldValueRequired"))
    elif len(name) > 253 or not _DNS_SUBDOMAIN.fullmatch(name):
        causes.append(("metadata.name", 'Invalid value: "%s": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric '
                       "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
                       "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')" % name, "FieldValueInvalid"))
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    causes += metadata_causes(labels, {str(k): str(v) for k, v in (meta.get("annotations") or {}).items()})
    containers = spec.get("containers")
    if not containers:
        causes.append(("spec.containers", "Required value", "FieldValueRequired"))
    seen = set()
    for index, container in enumerate(containers or []):
        path = "spec.containers[%d]" % index
        if not isinstance(container, dict):
            raise bad_request("Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal into Go struct field PodSpec.spec.containers")
        cname = container.get("name") or ""
        if not cname:
            causes.append((path + ".name", "Required value", "FieldValueRequired"))
        elif cname in seen:
            causes.append((path + ".name", 'Duplicate value: "%s"' % cname, "FieldValueDuplicate"))
        seen.add(cname)
        if not container.get("image"):
            causes.append((path + ".image", "Required value", "FieldValueRequired"))
        try:
            causes += _resource_causes(container.get("resources") or {}, path + ".resources")
        except ValueError as exc:
            raise bad_request('Pod in version "v1" cannot be handled as a Pod: %s' % exc) from None
    policy = spec.get("restartPolicy")
    if policy not in (None, "", "Always", "OnFailure", "Never"):
        causes.append(("spec.restartPolicy", 'Unsupported value: "%s": supported values: "Always", "OnFailure", "Never"' % policy,
                       "FieldValueNotSupported"))
    unique = []
    for cause in causes:
        if cause not in unique:
            unique.append(cause)
    return unique


def default_pod(pod, namespace):
    """SetDefaults_Pod and friends, for what kubectl shows: restartPolicy, dnsPolicy, schedulerName, grace period,
    requests from limits, imagePullPolicy, termination message, the not-ready/unreachable tolerations."""
    pod = copy.deepcopy(pod)
    meta = pod.setdefault("metadata", {})
    meta["namespace"] = namespace
    spec = pod.setdefault("spec", {})
    for key, value in (("restartPolicy", "Always"), ("dnsPolicy", "ClusterFirst"), ("schedulerName", "default-scheduler"),
                       ("terminationGracePeriodSeconds", 30), ("securityContext", {}), ("enableServiceLinks", True),
                       ("preemptionPolicy", "PreemptLowerPriority"), ("priority", 0), ("serviceAccountName", "default"),
                       ("serviceAccount", "default")):
        if spec.get(key) in (None, ""):
            spec[key] = value
    for container in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        resources = container.setdefault("resources", {})
        if resources.get("limits"):
            requests = resources.setdefault("requests", {})
            for name, value in resources["limits"].items():
                requests.setdefault(name, value)
        image = str(container.get("image") or "")
        if not container.get("imagePullPolicy"):
            tagged = ":" in image.rsplit("/", 1)[-1] or "@" in image
            container["imagePullPolicy"] = "Always" if not tagged or image.endswith(":latest") else "IfNotPresent"
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
    tolerations = spec.setdefault("tolerations", [])
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):  # DefaultTolerationSeconds
        if not any(t.get("operator") == "Exists" and not t.get("key") and t.get("effect") in (None, "", "NoExecute") or
                   t.get("key") == key and t.get("effect") in (None, "", "NoExecute") for t in tolerations if isinstance(t, dict)):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
    return pod


def spec_pod_status(pod, created, kubelet=True):
    """The status of a pod the API created (the rke2 stand-in's kubelet fills the record in); kubelet: a node file
    holds the pod (else no kubelet will ever report on it)."""
    spec = pod["spec"]
    phase = pod.get("phase") or "Pending"
    status = {"phase": phase}
    containers = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    started, finished = pod.get("started"), pod.get("finished")
    running = phase == "Running" and started and "exitCode" not in pod
    if pod.get("admitted"):
        status["conditions"] = [
            {"type": "PodReadyToStartContainers", "status": "True" if started else "False", "lastProbeTime": None,
             "lastTransitionTime": started or pod["admitted"]},
            {"type": "Initialized", "status": "True", "lastProbeTime": None, "lastTransitionTime": pod["admitted"]},
            {"type": "Ready", "status": "True" if running else "False", "lastProbeTime": None,
             "lastTransitionTime": finished or started or pod["admitted"]},
            {"type": "ContainersReady", "status": "True" if running else "False", "lastProbeTime": None,
             "lastTransitionTime": finished or started or pod["admitted"]},
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": created}]
        if pod.get("reason") and not started:
            del status["conditions"]
    if pod.get("unschedulable") and not spec.get("nodeName"):   # the scheduler's FitError (a pod with claims it could not place)
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                 "lastTransitionTime": pod.get("unschedulableSince") or created, "reason": "Unschedulable",
                                 "message": pod["unschedulable"]}]
    if pod.get("reason"):
        status["reason"] = pod["reason"]
    if pod.get("message"):
        status["message"] = pod["message"]
    status["qosClass"] = pod_qos(spec)
    if pod.get("resourceClaimStatuses"):   # the resourceclaim controller's: the claim it made from each template
        status["resourceClaimStatuses"] = copy.deepcopy(pod["resourceClaimStatuses"])
    if pod.get("startTime") or pod.get("admitted"):
        status["startTime"] = pod.get("startTime") or pod["admitted"]
    if pod.get("reason") and not started:
        return status  # rejected at admission: no container ever existed
    if not pod.get("admitted") and (not kubelet or not spec.get("nodeName")):
        return status
    statuses = []
    for index, container in enumerate(containers):
        entry = {"name": container.get("name", ""), "image": container.get("image", ""), "imageID": "", "ready": bool(running),
                 "restartCount": 0, "started": bool(running)}
        if index == 0 and started:
            entry["containerID"] = pod.get("containerID") or ""
            entry["imageID"] = container.get("image", "")
            if "exitCode" in pod:
                entry["state"] = {"terminated": {"exitCode": int(pod["exitCode"]), "reason": pod.get("containerReason") or
                                                 ("Completed" if int(pod["exitCode"]) == 0 else "Error"),
                                                 "startedAt": started, "finishedAt": finished or started,
                                                 "containerID": pod.get("containerID") or ""}}
                if pod.get("containerMessage"):
                    entry["state"]["terminated"]["message"] = pod["containerMessage"]
            else:
                entry["state"] = {"running": {"startedAt": started}}
        else:
            entry["state"] = {"waiting": {"reason": "ContainerCreating"}}
        entry["lastState"] = {}
        statuses.append(entry)
    status["containerStatuses"] = statuses
    return status


def container_log(pod, node_exists, container):
    """GET .../pods/NAME/log: the API server picks the container (ValidateContainer), the kubelet answers
    (validateContainerLogStatus) with the record's log, or its error for a container that has not run."""
    spec = pod.get("spec") or {}
    names = [str(c.get("name")) for c in spec.get("containers") or [] if isinstance(c, dict)]
    name = str(pod["name"])
    if not container:
        if len(names) != 1:
            raise bad_request("a container name must be specified for pod %s, choose one of: [%s]" % (name, " ".join(names)))
        container = names[0]
    elif container not in names:
        raise bad_request("container %s is not valid for pod %s" % (container, name))
    if not spec.get("nodeName"):
        return ""
    if not node_exists:
        raise not_found(NODES, spec["nodeName"])
    status = spec_pod_status(pod, pod.get("created"))
    for entry in status.get("containerStatuses") or []:
        if entry["name"] != container:
            continue
        state = entry.get("state") or {}
        if "running" in state or ("terminated" in state and state["terminated"].get("containerID")):
            return str(pod.get("log") or "")
        if "terminated" in state:
            raise bad_request('container "%s" in pod "%s" is terminated' % (container, name))
        if "waiting" in state:
            raise bad_request('container "%s" in pod "%s" is waiting to start: %s' % (container, name, state["waiting"].get("reason", "")))
        raise bad_request('container "%s" in pod "%s" is waiting to start - no logs yet' % (container, name))
    raise bad_request('container "%s" in pod "%s" is not available' % (container, name))


# ---------------------------------------------------------------- resource versions

class Versions:
    """resourceVersion: one counter for the server; an object gets a new version when its rendering changes
    (a write to its file, or the Ready condition going Unknown when the grace period ends)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.counter = int(time.time() * 1000)  # keeps growing across restarts of the server
        self.seen = {}

    def stamp(self, key, obj):
        meta = obj["metadata"]
        meta.pop("resourceVersion", None)
        digest = hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()
        with self.lock:
            entry = self.seen.get(key)
            if entry is None or entry[0] != digest:
                self.counter += 1
                entry = (digest, self.counter, entry[2] if entry else self.counter)
                self.seen[key] = entry
        meta["resourceVersion"] = str(entry[1])
        return obj

    def created(self, key):
        with self.lock:
            entry = self.seen.get(key)
        return entry[2] if entry else 0

    def bump(self):
        with self.lock:
            self.counter += 1
            return self.counter

    def current(self):
        with self.lock:
            return self.counter


# ---------------------------------------------------------------- the resources served

def _fields_common(obj):
    meta = obj["metadata"]
    return {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "")}


def _fields_node(obj):
    fields = _fields_common(obj)
    del fields["metadata.namespace"]
    fields["spec.unschedulable"] = "true" if obj["spec"].get("unschedulable") else "false"
    return fields


def _fields_pod(obj):
    fields = _fields_common(obj)
    fields.update({"spec.nodeName": obj["spec"].get("nodeName", ""), "spec.restartPolicy": obj["spec"].get("restartPolicy", ""),
                   "spec.schedulerName": obj["spec"].get("schedulerName", ""), "spec.serviceAccountName": "",
                   "spec.hostNetwork": "false", "status.phase": obj["status"].get("phase", ""), "status.podIP": "",
                   "status.nominatedNodeName": ""})
    return fields


def _fields_cluster(obj):
    """generic.DefaultClusterScopedAttr: a cluster-scoped object's only field label."""
    return {"metadata.name": obj["metadata"].get("name", "")}


class Kind:
    def __init__(self, group, version, plural, singular, kind, namespaced, verbs, short=(), categories=(), lister=None, fields=None,
                 stored=False):
        self.group, self.version, self.plural, self.singular, self.kind = group, version, plural, singular, kind
        self.namespaced, self.verbs, self.short, self.categories = namespaced, verbs, list(short), list(categories)
        self.lister, self.fields, self.stored = lister, fields or (_fields_common if namespaced else _fields_cluster), stored
        self.api_version = "%s/%s" % (group, version) if group else version
        self.qualified = "%s.%s" % (plural, group) if group else plural

    def details(self, name):
        details = {"name": name}
        if self.group:
            details["group"] = self.group
        details["kind"] = self.plural
        return details

    def resource(self):
        entry = {"name": self.plural, "singularName": self.singular, "namespaced": self.namespaced, "kind": self.kind,
                 "verbs": sorted(self.verbs)}
        if self.short:
            entry["shortNames"] = self.short
        if self.categories:
            entry["categories"] = self.categories
        return entry


STORED_VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]
KINDS = [
    Kind("", "v1", "namespaces", "namespace", "Namespace", False, STORED_VERBS, ["ns"], lister=namespace_objects, fields=_fields_common),
    Kind("", "v1", "nodes", "node", "Node", False, ["get", "list", "watch", "patch"], ["no"],
         lister=lambda nodes: [node_object(n) for n in nodes], fields=_fields_node),
    Kind("", "v1", "pods", "pod", "Pod", True, ["create", "get", "list", "watch", "delete"], ["po"], ["all"], lister=pod_objects,
         fields=_fields_pod),
    Kind("apps", "v1", "daemonsets", "daemonset", "DaemonSet", True, ["get", "list", "watch", "patch"], ["ds"], ["all"],
         lister=daemonset_objects),
    Kind("apps", "v1", "replicasets", "replicaset", "ReplicaSet", True, ["get", "list", "watch"], ["rs"], ["all"], lister=replicaset_objects),
    Kind("policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", True, ["get", "list", "watch"], ["pdb"],
         lister=pdb_objects),
    Kind("", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", True, STORED_VERBS, ["sa"], stored=True),
    Kind(RBAC_GROUP, "v1", "clusterroles", "clusterrole", "ClusterRole", False, STORED_VERBS, stored=True),
    Kind(RBAC_GROUP, "v1", "clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", False, STORED_VERBS, stored=True),
    Kind(RBAC_GROUP, "v1", "roles", "role", "Role", True, STORED_VERBS, stored=True),
    Kind(RBAC_GROUP, "v1", "rolebindings", "rolebinding", "RoleBinding", True, STORED_VERBS, stored=True),
    Kind(COORDINATION_GROUP, "v1", "leases", "lease", "Lease", True, STORED_VERBS, stored=True),
    Kind("", "v1", "configmaps", "configmap", "ConfigMap", True, STORED_VERBS, ["cm"], stored=True),
    Kind(ADMISSION_GROUP, "v1", "validatingadmissionpolicies", "validatingadmissionpolicy", "ValidatingAdmissionPolicy", False, STORED_VERBS,
         categories=["api-extensions"], stored=True),
    Kind(ADMISSION_GROUP, "v1", "validatingadmissionpolicybindings", "validatingadmissionpolicybinding", "ValidatingAdmissionPolicyBinding",
         False, STORED_VERBS, categories=["api-extensions"], stored=True),
    # resource.k8s.io/v1 (staging/src/k8s.io/api/resource/v1/types.go, v1.34): stored; a claim's status is the
    # scheduler's (its allocation) and the kubelet's (reservedFor), written beside the API here
    Kind(DRA_GROUP, "v1", "deviceclasses", "deviceclass", "DeviceClass", False, STORED_VERBS, stored=True),
    Kind(DRA_GROUP, "v1", "resourceslices", "resourceslice", "ResourceSlice", False, STORED_VERBS, stored=True),
    Kind(DRA_GROUP, "v1", "resourceclaims", "resourceclaim", "ResourceClaim", True, STORED_VERBS, stored=True),
    Kind(DRA_GROUP, "v1", "resourceclaimtemplates", "resourceclaimtemplate", "ResourceClaimTemplate", True, STORED_VERBS, stored=True),
    Kind("authentication.k8s.io", "v1", "selfsubjectreviews", "selfsubjectreview", "SelfSubjectReview", False, ["create"]),
    Kind("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "selfsubjectaccessreview", "SelfSubjectAccessReview", False, ["create"]),
    Kind("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "selfsubjectrulesreview", "SelfSubjectRulesReview", False, ["create"]),
    Kind("authorization.k8s.io", "v1", "subjectaccessreviews", "subjectaccessreview", "SubjectAccessReview", False, ["create"]),
]
KIND_BY_PATH = {(k.group, k.version, k.plural): k for k in KINDS}
NODES = KIND_BY_PATH[("", "v1", "nodes")]
DAEMONSETS = KIND_BY_PATH[("apps", "v1", "daemonsets")]
PODS = KIND_BY_PATH[("", "v1", "pods")]
NAMESPACES = KIND_BY_PATH[("", "v1", "namespaces")]
SERVICEACCOUNTS = KIND_BY_PATH[("", "v1", "serviceaccounts")]
REVIEWS = [k for k in KINDS if k.plural.startswith("selfsubject") or k.plural == "subjectaccessreviews"]
STORED = {k.plural: k for k in KINDS if k.stored}
# Subresources in discovery: (group, version) -> entries after the resource's own.
SUBRESOURCES = {
    ("", "v1"): [{"name": "nodes/status", "singularName": "", "namespaced": False, "kind": "Node", "verbs": ["get"]},
                 {"name": "pods/eviction", "singularName": "", "namespaced": True, "group": "policy", "version": "v1",
                  "kind": "Eviction", "verbs": ["create"]},
                 {"name": "pods/log", "singularName": "", "namespaced": True, "kind": "Pod", "verbs": ["get"]},
                 {"name": "serviceaccounts/token", "singularName": "", "namespaced": True, "group": "authentication.k8s.io",
                  "version": "v1", "kind": "TokenRequest", "verbs": ["create"]}],
}
GROUPS = [(ADMISSION_GROUP, "v1"), ("apps", "v1"), ("authentication.k8s.io", "v1"), ("authorization.k8s.io", "v1"), (COORDINATION_GROUP, "v1"),
          ("policy", "v1"), (RBAC_GROUP, "v1"), (DRA_GROUP, "v1")]


def resource_list(group, version):
    entries = []
    for kind in KINDS:
        if (kind.group, kind.version) == (group, version):
            entries.append(kind.resource())
            entries += [dict(s) for s in SUBRESOURCES.get((group, version), []) if s["name"].startswith(kind.plural + "/")]
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "%s/%s" % (group, version) if group else version,
            "resources": entries}


def api_group(name, version):
    gv = {"groupVersion": "%s/%s" % (name, version), "version": version}
    return {"kind": "APIGroup", "apiVersion": "v1", "name": name, "versions": [gv], "preferredVersion": gv}


# ---------------------------------------------------------------- selectors

def _split_terms(text):
    terms, depth, current = [], 0, ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    terms.append(current)
    return [t.strip() for t in terms if t.strip()]


_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"


def parse_label_selector(text):
    """key=value, key==value, key!=value, key, !key, key in (a,b), key notin (a,b): a list of (key, op, values)."""
    requirements = []
    for term in _split_terms(text or ""):
        match = re.fullmatch(r"(!?)\s*(%s)" % _KEY, term)
        if match:
            requirements.append((match.group(2), "!" if match.group(1) else "exists", ()))
            continue
        match = re.fullmatch(r"(%s)\s*(==|=|!=)\s*([-A-Za-z0-9_.]*)" % _KEY, term)
        if match:
            requirements.append((match.group(1), "!=" if match.group(2) == "!=" else "=", (match.group(3),)))
            continue
        match = re.fullmatch(r"(%s)\s+(in|notin)\s*\(([^()]*)\)" % _KEY, term)
        if match:
            values = tuple(v.strip() for v in match.group(3).split(",") if v.strip())
            requirements.append((match.group(1), match.group(2), values))
            continue
        raise bad_request("unable to parse requirement: %r" % term)
    return requirements


def labels_match(requirements, labels):
    for key, op, values in requirements:
        present, value = key in labels, labels.get(key)
        if (op == "exists" and not present) or (op == "!" and present) or (op == "=" and value != values[0]) \
                or (op == "!=" and present and value == values[0]) or (op == "in" and (not present or value not in values)) \
                or (op == "notin" and present and value in values):
            return False
    return True


def parse_field_selector(text):
    requirements = []
    for term in _split_terms(text or ""):
        match = re.fullmatch(r"([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*)", term)
        if not match:
            raise bad_request("invalid selector: '%s'; can't understand '%s'" % (text, term))
        requirements.append((match.group(1), match.group(2) != "!=", match.group(3)))
    return requirements


def fields_match(kind, requirements, obj):
    fields = kind.fields(obj)
    for name, equal, value in requirements:
        if name not in fields:
            raise bad_request("field label not supported: %s" % name)
        if (fields[name] == value) != equal:
            return False
    return True


# ---------------------------------------------------------------- patches

class PatchError(Exception):
    pass


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


_DELETE = object()


def strategic_merge_patch(target, patch):
    """Strategic merge patch for the Node fields this server keeps: maps merge, null deletes, lists are replaced
    (NodeSpec.taints has no patch strategy), and the directives $patch (replace, delete), $retainKeys,
    $setElementOrder/... (order only) and $deleteFromPrimitiveList/... are honoured."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    directive = patch.get("$patch")
    if directive == "delete":
        return _DELETE
    if directive == "replace":
        return {k: strategic_merge_patch(None, v) for k, v in patch.items() if not k.startswith("$")}
    if directive not in (None, "merge"):
        raise PatchError("unknown patch type: %s" % directive)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            result[field] = [v for v in result.get(field) or [] if v not in (value or [])]
        elif key.startswith("$"):
            continue
        elif value is None:
            result.pop(key, None)
        else:
            merged = strategic_merge_patch(result.get(key), value)
            if merged is _DELETE:
                result.pop(key, None)
            else:
                result[key] = merged
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _pointer(path):
    if not isinstance(path, str) or (path and not path.startswith("/")):
        raise PatchError("invalid JSON pointer: %r" % (path,))
    return [] if path == "" else [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _resolve(doc, parts):
    current = doc
    for part in parts:
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            raise PatchError("path /%s does not exist" % "/".join(parts))
    return current


def _add(doc, parts, value):
    if not parts:
        return value
    parent, last = _resolve(doc, parts[:-1]), parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list) and last == "-":
        parent.append(value)
    elif isinstance(parent, list) and last.isdigit() and int(last) <= len(parent):
        parent.insert(int(last), value)
    else:
        raise PatchError("cannot add at /%s" % "/".join(parts))
    return doc


def _remove(doc, parts):
    if not parts:
        raise PatchError("cannot remove the whole document")
    parent, last = _resolve(doc, parts[:-1]), parts[-1]
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent.pop(int(last))
    raise PatchError("path /%s does not exist" % "/".join(parts))


def json_patch(doc, operations):
    """RFC 6902: add, remove, replace, move, copy, test."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch is a list of operations")
    doc = copy.deepcopy(doc)
    for operation in operations:
        if not isinstance(operation, dict):
            raise PatchError("a JSON patch operation is an object")
        kind, path = operation.get("op"), _pointer(operation.get("path"))
        if kind in ("add", "replace", "test") and "value" not in operation:
            raise PatchError("%s needs a value" % kind)
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(operation["value"]))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            _resolve(doc, path)
            if path:
                _remove(doc, path)
            doc = _add(doc, path, copy.deepcopy(operation["value"]))
        elif kind in ("move", "copy"):
            source = _pointer(operation.get("from"))
            value = _remove(doc, source) if kind == "move" else copy.deepcopy(_resolve(doc, source))
            doc = _add(doc, path, value)
        elif kind == "test":
            if _resolve(doc, path) != operation["value"]:
                raise PatchError("testing value /%s failed" % "/".join(path))
        else:
            raise PatchError("unexpected kind of operation: %r" % (kind,))
    return doc


# ---------------------------------------------------------------- validation of metadata

_NAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_NAME_PART_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                  "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
_PREFIX_MSG = ("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
               "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
               "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
              "an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
              "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def qualified_name_errors(key):
    parts = key.split("/")
    if len(parts) > 2:
        return ["a qualified name " + _NAME_PART_MSG[len("name part "):] + " with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"]
    errors = []
    if len(parts) == 2:
        if not parts[0]:
            errors.append("prefix part must be non-empty")
        elif len(parts[0]) > 253:
            errors.append("prefix part must be no more than 253 characters")
        elif not _DNS_SUBDOMAIN.fullmatch(parts[0]):
            errors.append(_PREFIX_MSG)
    name = parts[-1]
    if not name:
        errors.append("name part must be non-empty")
    else:
        if len(name) > 63:
            errors.append("name part must be no more than 63 characters")
        if not _NAME_PART.fullmatch(name):
            errors.append(_NAME_PART_MSG)
    return errors


def metadata_causes(labels, annotations):
    causes = []
    for key, value in sorted(labels.items()):
        for message in qualified_name_errors(key):
            causes.append(("metadata.labels", 'Invalid value: "%s": %s' % (key, message), "FieldValueInvalid"))
        if len(value) > 63:
            causes.append(("metadata.labels", 'Invalid value: "%s": must be no more than 63 characters' % value, "FieldValueInvalid"))
        if not _LABEL_VALUE.fullmatch(value):
            causes.append(("metadata.labels", 'Invalid value: "%s": %s' % (value, _VALUE_MSG), "FieldValueInvalid"))
    for key in sorted(annotations):
        for message in qualified_name_errors(key):
            causes.append(("metadata.annotations", 'Invalid value: "%s": %s' % (key, message), "FieldValueInvalid"))
    size = sum(len(k) + len(v) for k, v in annotations.items())
    if size > 256 * 1024:
        causes.append(("metadata.annotations", "Too long: may not be more than 262144 bytes", "FieldValueTooLong"))
    return causes


def _string_map(value, field):
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise bad_request("json: cannot unmarshal %s into Go struct field ObjectMeta.%s of type map[string]string"
                          % (type(value).__name__, field))
    return dict(value)


def patch_type(request):
    """The patch's media type (JSON, JSON merge or strategic merge patch); 415 for any other."""
    content_type = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if content_type not in PATCH_TYPES:
        raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types include: "
                       + ", ".join(PATCH_TYPES), {})
    return content_type


def apply_patch(before, patch, content_type, kind):
    """The object after the patch; 422 Invalid when the patch cannot apply (a merge patch must be a JSON object)."""
    try:
        if content_type == "application/json-patch+json":
            return json_patch(before, patch)
        if not isinstance(patch, dict):
            raise PatchError("a merge patch of a %s is a JSON object" % kind)
        if content_type == "application/merge-patch+json":
            return merge_patch(before, patch)
        return strategic_merge_patch(before, patch)
    except PatchError as exc:
        raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request: %s" % exc, {}) from None


def node_update(before, after):
    """What a patched Node changes in the record; ApiError when the result is not a valid Node update.
    The server keeps metadata.labels, metadata.annotations, spec.unschedulable and spec.taints; status is the
    kubelet's (a patch of the main resource leaves it alone, as the real server does)."""
    name = before["metadata"]["name"]
    if not isinstance(after, dict) or not isinstance(after.get("metadata", {}), dict) or not isinstance(after.get("spec", {}), dict):
        raise bad_request("the patched object is not a Node")
    meta, spec = after.get("metadata") or {}, after.get("spec") or {}
    if meta.get("name", name) != name:
        raise bad_request("the name of the object (%s) does not match the name on the URL (%s)" % (meta.get("name"), name))
    version = meta.get("resourceVersion")
    if version not in (None, "") and str(version) != before["metadata"]["resourceVersion"]:
        raise conflict(NODES, name)
    labels = _string_map(meta.get("labels"), "labels")
    annotations = _string_map(meta.get("annotations"), "annotations")
    causes = metadata_causes(labels, annotations)
    unschedulable = spec.get("unschedulable")
    if unschedulable is not None and not isinstance(unschedulable, bool):
        raise bad_request("json: cannot unmarshal %s into Go struct field NodeSpec.spec.unschedulable of type bool" % type(unschedulable).__name__)
    taints = spec.get("taints") or []
    if not isinstance(taints, list) or not all(isinstance(t, dict) for t in taints):
        raise bad_request("json: cannot unmarshal spec.taints into Go struct field NodeSpec.spec.taints of type []v1.Taint")
    for index, taint in enumerate(taints):
        if not taint.get("key"):
            causes.append(("spec.taints[%d].key" % index, "Required value", "FieldValueRequired"))
        if taint.get("effect") not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            causes.append(("spec.taints[%d].effect" % index, 'Unsupported value: "%s": supported values: "NoSchedule", "PreferNoSchedule", '
                           '"NoExecute"' % taint.get("effect", ""), "FieldValueNotSupported"))
    old_spec = before.get("spec") or {}
    for key in sorted(set(old_spec) | set(spec)):
        if key not in ("unschedulable", "taints") and old_spec.get(key) != spec.get(key):
            causes.append(("spec.%s" % key, "Forbidden: the stand-in API server keeps only spec.unschedulable and spec.taints of a Node",
                           "FieldValueForbidden"))
    if causes:
        raise invalid(NODES, name, causes)
    return {"labels": labels, "annotations": annotations, "unschedulable": bool(unschedulable),
            "taints": [t for t in taints if t.get("key") not in DERIVED_TAINTS]}


def _map_changes(old, new):
    changes = {k: new.get(k) for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)}
    return changes


# ---------------------------------------------------------------- authentication

ADMIN_TOKEN = "kubeapi-standin-admin"
ADMIN_USER = "system:admin"
MASTERS_GROUP = "system:masters"
AUTHENTICATED_GROUP = "system:authenticated"
UNAUTHENTICATED_GROUP = "system:unauthenticated"
ANONYMOUS_USER = "system:anonymous"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"
TOKEN_AUDIENCES = ["https://kubernetes.default.svc.cluster.local", "rke2"]  # RKE2's --api-audiences
TOKEN_MIN_SECONDS = 10 * 60  # pkg/apis/authentication/validation MinTokenAgeSec
TOKEN_MAX_SECONDS = 1 << 32
TOKEN_DEFAULT_SECONDS = 60 * 60  # SetDefaults_TokenRequestSpec


def _q(text):
    """Go's %q for the names in messages."""
    return json.dumps(str(text), ensure_ascii=False)


class User:
    """user.Info: a name, groups, a uid (a ServiceAccount's) and extra values."""

    def __init__(self, name, groups, uid="", extra=None):
        self.name, self.groups, self.uid, self.extra = name, list(groups), uid, dict(extra or {})

    def info(self):
        """authentication.k8s.io/v1 UserInfo."""
        doc = {"username": self.name}
        if self.uid:
            doc["uid"] = self.uid
        doc["groups"] = list(self.groups)
        if self.extra:
            doc["extra"] = {k: list(v) for k, v in self.extra.items()}
        return doc


# RKE2's admin kubeconfig is a client certificate, CN=system:admin, O=system:masters; the authenticated group adder adds
# system:authenticated. Anonymous requests (no Authorization header) are system:anonymous in system:unauthenticated.
ADMIN = User(ADMIN_USER, [MASTERS_GROUP, AUTHENTICATED_GROUP])
ANONYMOUS = User(ANONYMOUS_USER, [UNAUTHENTICATED_GROUP])


def unauthorized():
    """The authentication filter's answer to a bearer token it cannot verify (responsewriters: NewUnauthorized("Unauthorized"))."""
    return ApiError(401, "Unauthorized", "Unauthorized")


def service_account_user(namespace, name, uid, jti):
    """serviceaccount.UserInfo: system:serviceaccount:NS:NAME in system:serviceaccounts, system:serviceaccounts:NS (and
    system:authenticated); the token's credential id in extra."""
    return User("%s%s:%s" % (SERVICE_ACCOUNT_PREFIX, namespace, name),
                ["system:serviceaccounts", "system:serviceaccounts:" + namespace, AUTHENTICATED_GROUP], uid,
                {CREDENTIAL_ID: ["JTI=" + jti]} if jti else None)


class Tokens:
    """<state dir>/auth/tokens.json (mode 0600, folder 0700): the ServiceAccount tokens TokenRequest issued, keyed by
    the SHA-256 of the token (the token itself is not kept): {"namespace", "name", "uid" (the ServiceAccount's),
    "jti", "audiences", "issued", "expires" (epoch seconds)}; read-modify-written under auth/.tokens.lock. Expired
    entries are dropped when the next token is issued."""

    def __init__(self, store):
        self.store = store
        self.directory = os.path.join(store.directory, "auth")
        self.path = os.path.join(self.directory, "tokens.json")

    @staticmethod
    def digest(token):
        return hashlib.sha256(token.encode("utf-8")).hexdigest()

    def issue(self, namespace, name, uid, seconds, audiences):
        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        token = secrets.token_urlsafe(32)
        now = time.time()
        entry = {"namespace": namespace, "name": name, "uid": uid, "jti": str(uuid.uuid4()), "audiences": list(audiences),
                 "issued": now, "expires": now + seconds}
        with self.store.locked_file(self.path, os.path.join(self.directory, ".tokens.lock"), {}, mode=0o600) as box:
            tokens = box["node"] if isinstance(box["node"], dict) else {}
            tokens = {k: v for k, v in tokens.items() if isinstance(v, dict) and float(v.get("expires") or 0) > now}
            tokens[self.digest(token)] = entry
            box["node"] = tokens
        return token, entry

    def lookup(self, token):
        """The entry for a token (None when unknown); written by os.replace, so read without the lock."""
        try:
            with open(self.path, encoding="utf-8") as handle:
                tokens = json.load(handle)
        except (OSError, ValueError):
            return None
        entry = tokens.get(self.digest(token)) if isinstance(tokens, dict) else None
        return entry if isinstance(entry, dict) else None


# ---------------------------------------------------------------- authorization: request attributes, RBAC

SPECIAL_VERBS = ("proxy", "watch")
NAMESPACE_SUBRESOURCES = ("status", "finalize")
METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


class Attributes:
    """authorizer.Attributes: who asks for what (a resource request, or a non-resource path)."""

    def __init__(self, user, verb, path="", resource_request=False, group="", version="", namespace="", resource="",
                 subresource="", name=""):
        self.user, self.verb, self.path, self.resource_request = user, verb, path, resource_request
        self.group, self.version, self.namespace, self.resource = group, version, namespace, resource
        self.subresource, self.name = subresource, name


def _path_segment_errors(name):
    """path.IsValidPathSegmentName."""
    if name in (".", ".."):
        return ["may not be '%s'" % name]
    return ["may not contain '%s'" % c for c in ("/", "%") if c in name]


def request_attributes(user, method, path, query):
    """RequestInfoFactory.NewRequestInfo (apiserver/pkg/endpoints/request/requestinfo.go): /api/v1/... and
    /apis/GROUP/VERSION/... are resource requests (verb from the method; get without a name is list, or watch with
    ?watch; delete without a name is deletecollection; a list's or a watch's fieldSelector metadata.name=X names X);
    anything else is a non-resource request whose verb is the method in lower case."""
    attrs = Attributes(user, method.lower(), path)
    parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")] if path.strip("/") else []
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return attrs
    prefix, parts = parts[0], parts[1:]
    group = ""
    if prefix == "apis":
        if len(parts) < 3:
            return attrs
        group, parts = parts[0], parts[1:]
    version, parts = parts[0], parts[1:]
    verb = METHOD_VERBS.get(method, "")
    if parts[0] in SPECIAL_VERBS:
        if len(parts) < 2:
            return attrs
        verb, parts = parts[0], parts[1:]
    namespace = ""
    if parts[0] == "namespaces" and len(parts) > 1:
        namespace = parts[1]
        if len(parts) > 2 and parts[2] not in NAMESPACE_SUBRESOURCES:
            parts = parts[2:]
    subresource = parts[2] if len(parts) >= 3 and verb != "proxy" else ""
    name = parts[1] if len(parts) >= 2 else ""
    if not name and verb == "get":
        verb = "watch" if "watch" in query and str(query["watch"]).lower() not in ("false", "0") else "list"
        try:
            parse_label_selector(query.get("labelSelector", ""))
            for field, equal, value in parse_field_selector(query.get("fieldSelector", "")):
                if field == "metadata.name" and equal:
                    if not _path_segment_errors(value):
                        name = value
                    break
        except ApiError:  # ListOptions that do not decode: list (or watch), no name
            name = ""
    if not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(user, verb, path, True, group, version, namespace, parts[0], subresource, name)


def forbidden(attrs, reason=""):
    """responsewriters.Forbidden: forbiddenMessage's text (and the authorizer's reason, when it gave one) wrapped by
    NewForbidden for the request's GroupResource and name."""
    user = _q(attrs.user.name)
    if not attrs.resource_request:
        text = "User %s cannot %s path %s" % (user, attrs.verb, _q(attrs.path))
    else:
        resource = attrs.resource + ("/" + attrs.subresource if attrs.subresource else "")
        if attrs.namespace:
            text = "User %s cannot %s resource %s in API group %s in the namespace %s" % (
                user, attrs.verb, _q(resource), _q(attrs.group), _q(attrs.namespace))
        else:
            text = "User %s cannot %s resource %s in API group %s at the cluster scope" % (user, attrs.verb, _q(resource), _q(attrs.group))
    if reason:
        text = "%s: %s" % (text, reason)
    return forbidden_error(attrs.group if attrs.resource_request else "", attrs.resource if attrs.resource_request else "", attrs.name, text)


def forbidden_error(group, resource, name, text):
    """apierrors.NewForbidden(GroupResource{group, resource}, name, err)."""
    qualified = "%s.%s" % (resource, group) if group else resource
    if not group and not resource:
        message = "forbidden: %s" % text
    elif not name:
        message = "%s is forbidden: %s" % (qualified, text)
    else:
        message = "%s %s is forbidden: %s" % (qualified, _q(name), text)
    details = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if resource:
        details["kind"] = resource
    return ApiError(403, "Forbidden", message, details)


def rule_allows(attrs, rule):
    """RuleAllows (plugin/pkg/auth/authorizer/rbac/rbac.go) with VerbMatches, APIGroupMatches, ResourceMatches,
    ResourceNameMatches and NonResourceURLMatches (pkg/apis/rbac/v1/evaluation_helpers.go): '*' in a rule matches
    anything, a requested '*' only a rule's '*'; a rule with resourceNames only requests naming one of them."""
    verbs = rule.get("verbs") or []
    if "*" not in verbs and attrs.verb not in verbs:
        return False
    if not attrs.resource_request:
        for url in rule.get("nonResourceURLs") or []:
            if url == "*" or url == attrs.path or (url.endswith("*") and attrs.path.startswith(url.rstrip("*"))):
                return True
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and attrs.group not in groups:
        return False
    combined = attrs.resource + ("/" + attrs.subresource if attrs.subresource else "")
    matched = False
    for resource in rule.get("resources") or []:
        if resource in ("*", combined) or (attrs.subresource and resource == "*/" + attrs.subresource):
            matched = True
            break
    if not matched:
        return False
    names = rule.get("resourceNames") or []
    return not names or attrs.name in names


def aggregate(errors):
    """utilerrors.NewAggregate(errs).Error(): one message as is, several (deduplicated) as [a, b]."""
    seen = []
    for error in errors:
        if error not in seen:
            seen.append(error)
    return seen[0] if len(seen) == 1 else "[%s]" % ", ".join(seen)


def _describe_subject(subject, namespace):
    if subject.get("kind") == "ServiceAccount":
        return "%s %s" % (subject["kind"], _q("%s/%s" % (subject.get("name", ""), subject.get("namespace") or namespace)))
    return "%s %s" % (subject.get("kind", ""), _q(subject.get("name", "")))


def applies_to(user, subjects, namespace):
    """appliesTo (pkg/registry/rbac/validation/rule.go): the first subject that is the user, one of its groups, or its
    ServiceAccount (a RoleBinding's ServiceAccount subject without a namespace is in the binding's); None if none."""
    for subject in subjects or []:
        if not isinstance(subject, dict):
            continue
        kind, name = subject.get("kind"), subject.get("name", "")
        if kind == "User" and user.name == name:
            return subject
        if kind == "Group" and name in user.groups:
            return subject
        if kind == "ServiceAccount":
            account_namespace = subject.get("namespace") or namespace
            if account_namespace and user.name == "%s%s:%s" % (SERVICE_ACCOUNT_PREFIX, account_namespace, name):
                return subject
    return None


# ---------------------------------------------------------------- ValidatingAdmissionPolicy
# As staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating (dispatcher.go, validator.go) does it for
# what the collection ships: a binding (validationActions Deny) names a policy; the policy's matchConstraints
# resourceRules match the request (group, version, operation, resource[/subresource]); every matchCondition is true;
# the params (paramKind + the binding's paramRef name/namespace) are found, or parameterNotFoundAction Deny denies;
# then each validation is evaluated and the first false one denies, with its message (or "failed expression: ...").
# An expression that fails to evaluate counts as the policy's failurePolicy (Fail: denied). The CEL is cel-python's
# (PyPI), not a hand-written evaluator.
_CEL_PROGRAMS = {}
_CEL_LOCK = threading.Lock()


def cel_program(expression):
    """A compiled CEL program (cached); raises ValueError with the parser's message for an invalid expression."""
    with _CEL_LOCK:
        program = _CEL_PROGRAMS.get(expression)
        if program is None:
            env = celpy.Environment()
            try:
                program = env.program(env.compile(expression))
            except Exception as exc:  # celpy.CELParseError and lark's errors  # pylint: disable=broad-except
                raise ValueError("compilation failed: %s" % str(exc).splitlines()[0]) from exc
            _CEL_PROGRAMS[expression] = program
        return program


# The variables a ValidatingAdmissionPolicy's expressions are compiled against (k8s.io/apiserver pkg/admission/plugin/
# cel compile.go buildRequestEnv/OptionalVariableDeclarations; pkg/apis/admissionregistration/validation validation.go
# validateValidation compiles each with HasParams only when spec.paramKind is set): a reference to any other name -
# params without a paramKind - is refused when the policy is written, "compilation failed: ERROR: <input>:L:C:
# undeclared reference to 'params' (in container '')".
CEL_DECLARED = ("object", "oldObject", "request", "namespaceObject", "authorizer", "variables")
_CEL_MACROS = ("all", "exists", "exists_one", "map", "filter")   # their first argument binds a name


def cel_undeclared(expression, declared):
    """The names ``expression`` references that are neither ``declared`` nor bound by a macro (``k`` in ``m.all(k, ...)``),
    sorted; [] when it does not parse (cel_program says why)."""
    try:
        tree = celpy.Environment().compile(expression)
    except Exception:  # pylint: disable=broad-except
        return []
    bound = set()
    for node in tree.iter_subtrees():
        if node.data == "member_dot_arg" and len(node.children) > 2 and str(node.children[1]) in _CEL_MACROS:
            first = node.children[2].children[0] if node.children[2].children else None
            names = [t for t in first.iter_subtrees() if t.data == "ident"] if first is not None else []
            if names:
                bound.add(str(names[0].children[0]))
    refs = {str(t.children[0]) for t in tree.iter_subtrees() if t.data == "ident"}
    return sorted(refs - bound - set(declared))


def cel_true(expression, activation):
    """(True/False, None) of a boolean CEL expression over activation (plain JSON values), or (None, error text)."""
    try:
        result = cel_program(expression).evaluate({k: celpy.json_to_cel(v) for k, v in activation.items()})
    except ValueError as exc:
        return None, str(exc)
    except Exception as exc:  # celpy.CELEvalError raised  # pylint: disable=broad-except
        return None, str(exc)
    if isinstance(result, celpy.celtypes.BoolType):
        return bool(result), None
    return None, "expression did not evaluate to a bool: %s" % type(result).__name__


def _rule_matches(rule, operation, group, version, resource):
    def has(values, value):
        values = values or []
        return "*" in values or value in values
    return (has(rule.get("apiGroups"), group) and has(rule.get("apiVersions"), version) and has(rule.get("operations"), operation)
            and has(rule.get("resources"), resource))


def _resources_match(match, operation, group, version, resource):
    rules = (match or {}).get("resourceRules")
    if rules is None:
        return True
    return any(isinstance(r, dict) and _rule_matches(r, operation, group, version, resource) for r in rules)


def admission_denial(policies, bindings, configmaps, user, operation, kind, namespace, name, obj, old, resource, dry_run):
    """The ApiError a bound ValidatingAdmissionPolicy answers the request with, or None (admitted). ``resource``:
    the resource[/subresource] the request is for (default the kind's plural)."""
    group, version = kind.group, kind.version
    resource = resource or kind.plural
    plural, _sep, sub = resource.partition("/")
    by_name = {p["metadata"]["name"]: p for p in policies}
    # the request's kind is the object's: an eviction (the pods/eviction subresource) is a policy/v1 Eviction, not a Pod
    # (k8s.io/apiserver pkg/endpoints/handlers/create.go: admission.NewAttributesRecord(obj, ..., scope.Kind, ...), the
    # Kind of the subresource's storage - pkg/registry/core/pod/storage/eviction.go EvictionREST.New: &policy.Eviction{})
    request_kind = {"group": group, "version": version, "kind": kind.kind}
    if sub == "eviction":
        request_kind = {"group": "policy", "version": "v1", "kind": "Eviction"}
    request = {"kind": request_kind,
               "resource": {"group": group, "version": version, "resource": plural}, "subResource": sub,
               "name": name or "", "namespace": namespace or "", "operation": operation, "userInfo": user.info(), "dryRun": bool(dry_run)}
    for binding in sorted(bindings, key=lambda b: b["metadata"]["name"]):
        spec = binding.get("spec") or {}
        policy = by_name.get(spec.get("policyName"))
        if policy is None or "Deny" not in (spec.get("validationActions") or []):
            continue
        pspec = policy.get("spec") or {}
        if not _resources_match(pspec.get("matchConstraints"), operation, group, version, resource):
            continue
        if spec.get("matchResources") and not _resources_match(spec["matchResources"], operation, group, version, resource):
            continue
        prefix = "ValidatingAdmissionPolicy '%s' with binding '%s' denied request: " % (policy["metadata"]["name"], binding["metadata"]["name"])
        fail = (pspec.get("failurePolicy") or "Fail") == "Fail"

        def denied(text):
            return forbidden_error(group, plural, name, prefix + text)

        activation = {"object": obj, "oldObject": old, "request": request, "params": None}
        matched = True
        for condition in pspec.get("matchConditions") or []:
            ok, error = cel_true(condition.get("expression", ""), activation)
            if error is not None:
                if fail:
                    return denied("expression '%s' resulted in error: %s" % (condition.get("expression"), error))
                matched = False
                break
            if not ok:
                matched = False
                break
        if not matched:
            continue
        if pspec.get("paramKind"):
            ref = spec.get("paramRef") or {}
            param_kind = pspec["paramKind"]
            found = None
            if (param_kind.get("apiVersion"), param_kind.get("kind")) == ("v1", "ConfigMap"):
                found = next((c for c in configmaps if c["metadata"].get("name") == ref.get("name")
                              and c["metadata"].get("namespace") == (ref.get("namespace") or namespace)), None)
            if found is None:
                if ref.get("parameterNotFoundAction") == "Deny":
                    return denied("failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction")
                continue
            activation["params"] = found
        for validation in pspec.get("validations") or []:
            ok, error = cel_true(validation.get("expression", ""), activation)
            if error is not None:
                if fail:
                    return denied("expression '%s' resulted in error: %s" % (validation.get("expression"), error))
                continue
            if not ok:
                return denied(validation.get("message") or "failed expression: %s" % validation.get("expression"))
    return None


class Rbac:
    """The authorizers in kube-apiserver's order: the privileged-group one (system:masters may do anything, reason
    ""), then RBAC (plugin/pkg/auth/authorizer/rbac) over the ClusterRoles, Roles and bindings records(plural)
    gives (the stored ones and the bootstrap ones)."""

    def __init__(self, records):
        self.records = records

    def _role_rules(self, ref, namespace, cluster_roles, roles):
        """GetRoleReferenceRules: (rules, None) or (None, the error a lister would give)."""
        kind, name = ref.get("kind"), ref.get("name", "")
        if kind == "Role":
            if name not in roles:
                return None, 'role.%s %s not found' % (RBAC_GROUP, _q(name))
            return roles[name].get("rules") or [], None
        if kind == "ClusterRole":
            if name not in cluster_roles:
                return None, 'clusterrole.%s %s not found' % (RBAC_GROUP, _q(name))
            return cluster_roles[name].get("rules") or [], None
        return None, "unsupported role reference kind: %s" % _q(kind or "")

    def visit(self, user, namespace):
        """VisitRulesFor: (source, rule, None) for each rule the user's ClusterRoleBindings grant, then (namespace given)
        its RoleBindings in the namespace; (None, None, error) for a role reference that does not resolve."""
        cluster_roles = {r["metadata"]["name"]: r for r in self.records("clusterroles")}
        for binding in self.records("clusterrolebindings"):
            subject = applies_to(user, binding.get("subjects"), "")
            if subject is None:
                continue
            ref = binding.get("roleRef") or {}
            rules, error = self._role_rules(ref, "", cluster_roles, {})
            if error:
                yield None, None, error
                continue
            source = "ClusterRoleBinding %s of %s %s to %s" % (
                _q(binding["metadata"]["name"]), ref.get("kind", ""), _q(ref.get("name", "")), _describe_subject(subject, ""))
            for rule in rules:
                yield source, rule, None
        if not namespace:
            return
        roles = {r["metadata"]["name"]: r for r in self.records("roles") if r["metadata"].get("namespace") == namespace}
        for binding in self.records("rolebindings"):
            if binding["metadata"].get("namespace") != namespace:
                continue
            subject = applies_to(user, binding.get("subjects"), namespace)
            if subject is None:
                continue
            ref = binding.get("roleRef") or {}
            rules, error = self._role_rules(ref, namespace, cluster_roles, roles)
            if error:
                yield None, None, error
                continue
            source = "RoleBinding %s of %s %s to %s" % (
                _q("%s/%s" % (binding["metadata"]["name"], namespace)), ref.get("kind", ""), _q(ref.get("name", "")),
                _describe_subject(subject, namespace))
            for rule in rules:
                yield source, rule, None

    def authorize(self, attrs):
        """(allowed, reason): "RBAC: allowed by <source>" when a rule allows; denied, the role references that did not
        resolve ("RBAC: ..."), else ""."""
        if MASTERS_GROUP in attrs.user.groups:
            return True, ""
        errors = []
        for source, rule, error in self.visit(attrs.user, attrs.namespace):
            if rule is not None and isinstance(rule, dict) and rule_allows(attrs, rule):
                return True, "RBAC: allowed by %s" % source
            if error:
                errors.append(error)
        return False, ("RBAC: " + aggregate(errors)) if errors else ""

    def rules_for(self, user, namespace):
        """RulesFor, as SelfSubjectRulesReview shows it: (resourceRules, nonResourceRules, evaluation error)."""
        resource_rules, non_resource_rules, errors = [], [], []
        for dummy, rule, error in self.visit(user, namespace):
            if error:
                errors.append(error)
            if not isinstance(rule, dict):
                continue
            if rule.get("resources"):
                entry = {"verbs": list(rule.get("verbs") or [])}
                for key in ("apiGroups", "resources", "resourceNames"):
                    if rule.get(key):
                        entry[key] = list(rule[key])
                resource_rules.append(entry)
            if rule.get("nonResourceURLs"):
                non_resource_rules.append({"verbs": list(rule.get("verbs") or []), "nonResourceURLs": list(rule["nonResourceURLs"])})
        return resource_rules, non_resource_rules, aggregate(errors) if errors else ""


def _bootstrap(kind, name, **fields):
    obj = {"kind": kind, "apiVersion": RBAC_GROUP + "/v1",
           "metadata": {"name": name, "uid": uid_for(kind.lower() + "s", "", name),
                        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}}
    obj.update(fields)
    return obj


def _group_subjects(*groups):
    return [{"kind": "Group", "apiGroup": RBAC_GROUP, "name": g} for g in groups]


def _cluster_role_ref(name):
    return {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name}


# The bootstrap policy the stand-in always has (plugin/pkg/auth/authorizer/rbac/bootstrappolicy), of which only these:
# cluster-admin for system:masters, discovery and self reviews for every authenticated user, the health and version
# paths for everyone. They cannot be changed or deleted here.
BOOTSTRAP = {
    "clusterroles": [
        _bootstrap("ClusterRole", "cluster-admin", rules=[{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                                                          {"verbs": ["*"], "nonResourceURLs": ["*"]}]),
        _bootstrap("ClusterRole", "system:basic-user", rules=[
            {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
            {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]}]),
        _bootstrap("ClusterRole", "system:discovery", rules=[
            {"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*",
                                                   "/readyz", "/version", "/version/"]}]),
        _bootstrap("ClusterRole", "system:public-info-viewer", rules=[
            {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"]}]),
    ],
    "clusterrolebindings": [
        _bootstrap("ClusterRoleBinding", "cluster-admin", subjects=_group_subjects(MASTERS_GROUP), roleRef=_cluster_role_ref("cluster-admin")),
        _bootstrap("ClusterRoleBinding", "system:basic-user", subjects=_group_subjects(AUTHENTICATED_GROUP),
                   roleRef=_cluster_role_ref("system:basic-user")),
        _bootstrap("ClusterRoleBinding", "system:discovery", subjects=_group_subjects(AUTHENTICATED_GROUP),
                   roleRef=_cluster_role_ref("system:discovery")),
        _bootstrap("ClusterRoleBinding", "system:public-info-viewer", subjects=_group_subjects(AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP),
                   roleRef=_cluster_role_ref("system:public-info-viewer")),
    ],
}


# ---------------------------------------------------------------- Pod Security admission (enforce)

PSA_ENFORCE = "pod-security.kubernetes.io/enforce"
PSA_ENFORCE_VERSION = "pod-security.kubernetes.io/enforce-version"
_DEFAULT_CAPABILITIES = ("AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID",
                         "SETPCAP", "SETUID", "SYS_CHROOT")
_ALLOWED_VOLUMES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret")


def _plural(single, plural, count):
    return single if count == 1 else plural


def _join_quote(items):
    return ", ".join(_q(i) for i in items)


def _containers(spec):
    """visitContainers: the init containers, then the containers."""
    return [c for c in list(spec.get("initContainers") or []) + list(spec.get("containers") or []) if isinstance(c, dict)]


def _security(holder):
    context = holder.get("securityContext")
    return context if isinstance(context, dict) else {}


def _named(word, names):
    return "%s %s" % (_plural(word, word + "s", len(names)), _join_quote(names))


def _psa_setters(spec, field, bad_value, good_value=None):
    """(explicitly bad setters ["pod", 'container "c"'], containers left unset while the pod is not good): the shape of
    runAsNonRoot, runAsUser and seccompProfile's checks."""
    pod_value = _security(spec).get(field)
    setters = ["pod"] if pod_value is not None and bad_value(pod_value) else []
    pod_good = pod_value is not None and not bad_value(pod_value) and (good_value is None or good_value(pod_value))
    explicit, implicit = [], []
    for container in _containers(spec):
        value = _security(container).get(field)
        if value is not None:
            if bad_value(value):
                explicit.append(str(container.get("name", "")))
        elif not pod_good:
            implicit.append(str(container.get("name", "")))
    if explicit:
        setters.append(_named("container", explicit))
    return setters, implicit


def _check_capabilities_baseline(spec):
    bad, added = [], set()
    for container in _containers(spec):
        extra = [str(c) for c in (_security(container).get("capabilities") or {}).get("add") or [] if str(c) not in _DEFAULT_CAPABILITIES]
        if extra:
            bad.append(str(container.get("name", "")))
            added.update(extra)
    if bad:
        return "non-default capabilities", "%s must not include %s in securityContext.capabilities.add" % (
            _named("container", bad), _join_quote(sorted(added)))
    return None


def _check_host_namespaces(spec):
    used = sorted(k for k in ("hostIPC", "hostNetwork", "hostPID") if spec.get(k) is True)
    return ("host namespaces", ", ".join(used)) if used else None


def _check_host_path_volumes(spec):
    names = [str(v.get("name", "")) for v in spec.get("volumes") or [] if isinstance(v, dict) and v.get("hostPath") is not None]
    return ("hostPath volumes", _named("volume", names)) if names else None


def _check_host_ports(spec):
    bad, ports = [], set()
    for container in _containers(spec):
        used = [str(p.get("hostPort")) for p in container.get("ports") or [] if isinstance(p, dict) and p.get("hostPort") not in (None, 0)]
        if used:
            bad.append(str(container.get("name", "")))
            ports.update(used)
    if bad:
        return "hostPort", "%s %s %s %s" % (_named("container", bad), _plural("uses", "use", len(bad)),
                                            _plural("hostPort", "hostPorts", len(ports)), ", ".join(sorted(ports)))
    return None


def _check_privileged(spec):
    bad = [str(c.get("name", "")) for c in _containers(spec) if _security(c).get("privileged") is True]
    return ("privileged", "%s must not set securityContext.privileged=true" % _named("container", bad)) if bad else None


def _check_allow_privilege_escalation(spec):
    bad = [str(c.get("name", "")) for c in _containers(spec) if _security(c).get("allowPrivilegeEscalation") is not False]
    return ("allowPrivilegeEscalation != false", "%s must set securityContext.allowPrivilegeEscalation=false" % _named("container", bad)) \
        if bad else None


def _check_capabilities_restricted(spec):
    missing, adding, added = [], [], set()
    for container in _containers(spec):
        capabilities = _security(container).get("capabilities")
        if not isinstance(capabilities, dict):
            missing.append(str(container.get("name", "")))
            continue
        if "ALL" not in (capabilities.get("drop") or []):
            missing.append(str(container.get("name", "")))
        extra = [str(c) for c in capabilities.get("add") or [] if c != "NET_BIND_SERVICE"]
        if extra:
            adding.append(str(container.get("name", "")))
            added.update(extra)
    details = []
    if missing:
        details.append('%s must set securityContext.capabilities.drop=["ALL"]' % _named("container", missing))
    if adding:
        details.append("%s must not include %s in securityContext.capabilities.add" % (_named("container", adding), _join_quote(sorted(added))))
    return ("unrestricted capabilities", "; ".join(details)) if details else None


def _check_restricted_volumes(spec):
    names = sorted({str(v.get("name", "")) for v in spec.get("volumes") or []
                    if isinstance(v, dict) and not any(v.get(kind) is not None for kind in _ALLOWED_VOLUMES)})
    return ("restricted volume types", "volumes [%s] have restricted types" % " ".join(_q(n) for n in names)) if names else None


def _check_run_as_non_root(spec):
    if spec.get("hostUsers") is False:  # a user-namespaced pod (KEP-127)
        return None
    setters, implicit = _psa_setters(spec, "runAsNonRoot", lambda v: v is not True)
    if setters:
        return "runAsNonRoot != true", "%s must not set securityContext.runAsNonRoot=false" % " and ".join(setters)
    if implicit:
        return "runAsNonRoot != true", "pod or %s must set securityContext.runAsNonRoot=true" % _named("container", implicit)
    return None


def _check_run_as_user(spec):
    setters = _psa_setters(spec, "runAsUser", lambda v: v == 0, lambda v: True)[0]
    return ("runAsUser=0", "%s must not set runAsUser=0" % " and ".join(setters)) if setters else None


def _check_seccomp_restricted(spec):
    def bad(profile):
        return not isinstance(profile, dict) or profile.get("type") not in ("RuntimeDefault", "Localhost")

    setters, implicit = _psa_setters(spec, "seccompProfile", bad)
    if setters:
        values = sorted({str((p or {}).get("type", "")) for p in [_security(spec).get("seccompProfile")]
                         + [_security(c).get("seccompProfile") for c in _containers(spec)] if p is not None and bad(p)})
        return "seccompProfile", "%s must not set securityContext.seccompProfile.type to %s" % (" and ".join(setters), _join_quote(values))
    if implicit:
        return "seccompProfile", 'pod or %s must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"' % _named(
            "container", implicit)
    return None


# (id, level, check, ids it overrides at the restricted level): pod-security-admission's checks (policy/check_*.go) that
# the stand-in evaluates; a level's checks run baseline ids first, then restricted ids, each sorted (policy/registry.go).
PSA_CHECKS = [
    ("capabilities_baseline", "baseline", _check_capabilities_baseline, ()),
    ("hostNamespaces", "baseline", _check_host_namespaces, ()),
    ("hostPathVolumes", "baseline", _check_host_path_volumes, ()),
    ("hostPorts", "baseline", _check_host_ports, ()),
    ("privileged", "baseline", _check_privileged, ()),
    ("allowPrivilegeEscalation", "restricted", _check_allow_privilege_escalation, ()),
    ("capabilities_restricted", "restricted", _check_capabilities_restricted, ("capabilities_baseline",)),
    ("restrictedVolumes", "restricted", _check_restricted_volumes, ("hostPathVolumes",)),
    ("runAsNonRoot", "restricted", _check_run_as_non_root, ()),
    ("runAsUser", "restricted", _check_run_as_user, ()),
    ("seccompProfile_restricted", "restricted", _check_seccomp_restricted, ()),
]


def pod_security_violation(namespace_labels, pod):
    """The PodSecurity admission plugin's refusal of a pod (403, `pods "x" is forbidden: violates PodSecurity
    "restricted:latest": ...`) when the namespace's pod-security.kubernetes.io/enforce level is baseline or restricted;
    None when the pod passes (or the namespace enforces nothing, or privileged)."""
    level = (namespace_labels or {}).get(PSA_ENFORCE, "")
    if level not in ("baseline", "restricted"):
        return None
    version = (namespace_labels or {}).get(PSA_ENFORCE_VERSION) or "latest"
    spec = pod.get("spec") or {}
    overridden = {o for dummy, lvl, dummy2, overrides in PSA_CHECKS if level == "restricted" and lvl == "restricted" for o in overrides}
    reasons = []
    for check_id, check_level, check, dummy in PSA_CHECKS:
        if check_id in overridden or (check_level == "restricted" and level == "baseline"):
            continue
        found = check(spec)
        if found:
            reasons.append("%s (%s)" % found if found[1] else found[0])
    if not reasons:
        return None
    name = str((pod.get("metadata") or {}).get("name") or "")
    return forbidden_error("", "pods", name, "violates PodSecurity %s: %s" % (_q("%s:%s" % (level, version)), ", ".join(reasons)))


# ---------------------------------------------------------------- objects stored through the API

OBJECTS_DIR = "objects"
APPLY_PATCH = "application/apply-patch+yaml"
IMMORTAL_NAMESPACES = ("default", "kube-public", "kube-system")  # the NamespaceLifecycle admission plugin's
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an "
                  "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
_DNS_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and "
                      "end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
# The fields of each stored kind beside metadata: what create, update and apply keep.
OBJECT_FIELDS = {
    "namespaces": ("spec",),
    "serviceaccounts": ("secrets", "imagePullSecrets", "automountServiceAccountToken"),
    "clusterroles": ("rules", "aggregationRule"),
    "roles": ("rules",),
    "clusterrolebindings": ("subjects", "roleRef"),
    "rolebindings": ("subjects", "roleRef"),
    "leases": ("spec",),
    "configmaps": ("data",),
    "validatingadmissionpolicies": ("spec",),
    "validatingadmissionpolicybindings": ("spec",),
    "deviceclasses": ("spec",),
    "resourceslices": ("spec",),
    "resourceclaims": ("spec",),
    "resourceclaimtemplates": ("spec",),
}
_CONFIGMAP_KEY = re.compile(r"[-._a-zA-Z0-9]+")


class ObjectFiles:
    """<state dir>/objects/<plural>.json: the objects created through the API, a list of them as served (less
    resourceVersion), each file read-modify-written under objects/.<plural>.lock as the nodes' files are."""

    def __init__(self, store):
        self.store = store
        self.directory = os.path.join(store.directory, OBJECTS_DIR)

    def locked(self, plural):
        """box["node"] is the list, written back when changed."""
        os.makedirs(self.directory, exist_ok=True)
        return self.store.locked_file(os.path.join(self.directory, plural + ".json"), os.path.join(self.directory, "." + plural + ".lock"), [])

    def read(self, plural):
        """The records now (written by os.replace, so read without the lock)."""
        try:
            with open(os.path.join(self.directory, plural + ".json"), encoding="utf-8") as handle:
                records = json.load(handle)
        except (OSError, ValueError):
            return []
        return [r for r in records if isinstance(r, dict) and isinstance(r.get("metadata"), dict)] if isinstance(records, list) else []


def find_record(records, namespace, name):
    """The index of the record with this namespace (None: cluster-scoped) and name; None when there is none."""
    for index, record in enumerate(records):
        meta = record.get("metadata") or {}
        if meta.get("name") == name and (namespace is None or meta.get("namespace") == namespace):
            return index
    return None


def _cannot_decode(kind, detail):
    return bad_request('%s in version "%s" cannot be handled as a %s: %s' % (kind.kind, kind.version, kind.kind, detail))


def _string_list(kind, value, field):
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _cannot_decode(kind, "json: cannot unmarshal %s into Go struct field %s of type []string" % (type(value).__name__, field))
    return list(value)


def _decode_rules(kind, rules):
    if rules is None:
        return []
    if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
        raise _cannot_decode(kind, "json: cannot unmarshal %s into Go struct field %s.rules of type []v1.PolicyRule" % (type(rules).__name__, kind.kind))
    out = []
    for rule in rules:
        entry = {}
        for key in ("verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs"):
            values = _string_list(kind, rule.get(key), "PolicyRule.rules.%s" % key)
            if values:
                entry[key] = values
        out.append(entry)
    return out


def _decode_subjects(kind, subjects):
    if subjects is None:
        return []
    if not isinstance(subjects, list) or not all(isinstance(s, dict) for s in subjects):
        raise _cannot_decode(kind, "json: cannot unmarshal %s into Go struct field %s.subjects of type []v1.Subject"
                             % (type(subjects).__name__, kind.kind))
    out = []
    for subject in subjects:
        entry = {k: str(subject[k]) for k in ("kind", "apiGroup", "name", "namespace") if subject.get(k) not in (None, "")}
        if "apiGroup" not in entry and entry.get("kind") in ("User", "Group"):  # SetDefaults_Subject
            entry["apiGroup"] = RBAC_GROUP
        out.append(entry)
    return out


# metav1.MicroTime.UnmarshalJSON: time.Parse(RFC3339Micro, s) - exactly six fractional digits
_MICRO_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}(Z|[+-][0-9]{2}:[0-9]{2})")
_LEASE_INTS = ("leaseDurationSeconds", "leaseTransitions")
_LEASE_STRINGS = ("holderIdentity", "strategy", "preferredHolder")


def _decode_lease_spec(kind, spec):
    """A LeaseSpec as decoding reads it (400 for a field of the wrong type or a time that is not RFC3339Micro), then
    pkg/apis/coordination/validation ValidateLeaseSpec: (spec, causes)."""
    if spec is None:
        return {}, []
    if not isinstance(spec, dict):
        raise _cannot_decode(kind, "json: cannot unmarshal %s into Go struct field Lease.spec of type v1.LeaseSpec" % type(spec).__name__)
    out = {}
    for field in _LEASE_STRINGS:
        if spec.get(field) is not None:
            if not isinstance(spec[field], str):
                raise _cannot_decode(kind, "json: cannot unmarshal %s into Go struct field LeaseSpec.spec.%s of type string"
                                     % (type(spec[field]).__name__, field))
            out[field] = spec[field]
    for field in _LEASE_INTS:
        value = spec.get(field)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int) or not -2 ** 31 <= value < 2 ** 31:
                raise _cannot_decode(kind, "json: cannot unmarshal %s into Go struct field LeaseSpec.spec.%s of type int32"
                                     % ("number " + str(value) if isinstance(value, (int, float)) and not isinstance(value, bool)
                                        else type(value).__name__, field))
            out[field] = value
    for field in ("acquireTime", "renewTime"):
        value = spec.get(field)
        if value is not None:
            if not isinstance(value, str) or not _MICRO_TIME.fullmatch(value):
                raise _cannot_decode(kind, 'parsing time "%s" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "%s" as "2006"'
                                     % (value, value))
            out[field] = value
    causes = []
    if out.get("leaseDurationSeconds") is not None and out["leaseDurationSeconds"] <= 0:
        causes.append(("spec.leaseDurationSeconds", "Invalid value: %d: must be greater than 0" % out["leaseDurationSeconds"],
                       "FieldValueInvalid"))
    if out.get("leaseTransitions") is not None and out["leaseTransitions"] < 0:
        causes.append(("spec.leaseTransitions", "Invalid value: %d: must be greater than or equal to 0" % out["leaseTransitions"],
                       "FieldValueInvalid"))
    if out.get("preferredHolder") and not out.get("strategy"):
        causes.append(("spec.preferredHolder", "Forbidden: may only be specified if `strategy` is defined", "FieldValueForbidden"))
    return out, causes


def _policy_rule_causes(rule, namespaced, path):
    """validatePolicyRule (pkg/apis/rbac/validation)."""
    causes = []
    if not rule.get("verbs"):
        causes.append(("%s.verbs" % path, "Required value: verbs must contain at least one value", "FieldValueRequired"))
    if rule.get("nonResourceURLs"):
        value = "[]string{%s}" % ", ".join(_q(u) for u in rule["nonResourceURLs"])
        if namespaced:
            causes.append(("%s.nonResourceURLs" % path, "Invalid value: %s: namespaced rules cannot apply to non-resource URLs" % value,
                           "FieldValueInvalid"))
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            causes.append(("%s.nonResourceURLs" % path, "Invalid value: %s: rules cannot apply to both regular resources and non-resource URLs"
                           % value, "FieldValueInvalid"))
        return causes
    if not rule.get("apiGroups"):
        causes.append(("%s.apiGroups" % path, "Required value: resource rules must supply at least one api group", "FieldValueRequired"))
    if not rule.get("resources"):
        causes.append(("%s.resources" % path, "Required value: resource rules must supply at least one resource", "FieldValueRequired"))
    if rule.get("resourceNames") and len(rule.get("resources") or []) > 1:
        causes.append(("%s.resourceNames" % path, "Required value: resource names cannot apply to multiple resources", "FieldValueRequired"))
    return causes


def _role_ref_repr(ref):
    """%#v of the internal rbac.RoleRef, as field.Invalid prints it."""
    return "rbac.RoleRef{APIGroup:%s, Kind:%s, Name:%s}" % (_q(ref.get("apiGroup", "")), _q(ref.get("kind", "")), _q(ref.get("name", "")))


def _binding_causes(record, namespaced, old):
    """ValidateRoleBinding / ValidateClusterRoleBinding, and the Update's "cannot change roleRef"."""
    causes = []
    ref = record.get("roleRef") or {}
    if ref.get("apiGroup", "") != RBAC_GROUP:
        causes.append(("roleRef.apiGroup", 'Unsupported value: %s: supported values: "%s"' % (_q(ref.get("apiGroup", "")), RBAC_GROUP),
                       "FieldValueNotSupported"))
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)
    if ref.get("kind", "") not in kinds:
        causes.append(("roleRef.kind", "Unsupported value: %s: supported values: %s" % (_q(ref.get("kind", "")), ", ".join(_q(k) for k in kinds)),
                       "FieldValueNotSupported"))
    if not ref.get("name"):
        causes.append(("roleRef.name", "Required value", "FieldValueRequired"))
    else:
        for message in _path_segment_errors(ref["name"]):
            causes.append(("roleRef.name", "Invalid value: %s: %s" % (_q(ref["name"]), message), "FieldValueInvalid"))
    for index, subject in enumerate(record.get("subjects") or []):
        path = "subjects[%d]" % index
        if not subject.get("name"):
            causes.append(("%s.name" % path, "Required value", "FieldValueRequired"))
        kind = subject.get("kind", "")
        if kind == "ServiceAccount":
            if subject.get("name") and (len(subject["name"]) > 253 or not _DNS_SUBDOMAIN.fullmatch(subject["name"])):
                causes.append(("%s.name" % path, "Invalid value: %s: %s" % (_q(subject["name"]), _DNS_SUBDOMAIN_MSG), "FieldValueInvalid"))
            if subject.get("apiGroup"):
                causes.append(("%s.apiGroup" % path, 'Unsupported value: %s: supported values: ""' % _q(subject["apiGroup"]), "FieldValueNotSupported"))
            if not namespaced and not subject.get("namespace"):
                causes.append(("%s.namespace" % path, "Required value", "FieldValueRequired"))
        elif kind in ("User", "Group"):
            if not subject.get("name"):
                causes.append(("%s.name" % path, 'Invalid value: "": %s name cannot be empty' % kind.lower(), "FieldValueInvalid"))
            if subject.get("apiGroup", "") != RBAC_GROUP:
                causes.append(("%s.apiGroup" % path, 'Unsupported value: %s: supported values: "%s"' % (_q(subject.get("apiGroup", "")), RBAC_GROUP),
                               "FieldValueNotSupported"))
        else:
            causes.append(("%s.kind" % path, 'Unsupported value: %s: supported values: "ServiceAccount", "User", "Group"' % _q(kind),
                           "FieldValueNotSupported"))
    if old is not None and (old.get("roleRef") or {}) != ref:
        causes.append(("roleRef", "Invalid value: %s: cannot change roleRef" % _role_ref_repr(ref), "FieldValueInvalid"))
    return causes


def _name_causes(plural, name):
    if not name:
        return [("metadata.name", "Required value: name or generateName is required", "FieldValueRequired")]
    if plural == "namespaces":  # ValidateNamespaceName: a DNS-1123 label
        causes = []
        if len(name) > 63:
            causes.append(("metadata.name", "Invalid value: %s: must be no more than 63 characters" % _q(name), "FieldValueInvalid"))
        if not _DNS_LABEL.fullmatch(name):
            causes.append(("metadata.name", "Invalid value: %s: %s" % (_q(name), _DNS_LABEL_MSG), "FieldValueInvalid"))
        return causes
    if plural in ("serviceaccounts", "leases"):  # ValidateServiceAccountName, ValidateLease (NameIsDNSSubdomain)
        causes = []
        if len(name) > 253:
            causes.append(("metadata.name", "Invalid value: %s: must be no more than 253 characters" % _q(name), "FieldValueInvalid"))
        if not _DNS_SUBDOMAIN.fullmatch(name):
            causes.append(("metadata.name", "Invalid value: %s: %s" % (_q(name), _DNS_SUBDOMAIN_MSG), "FieldValueInvalid"))
        return causes
    return [("metadata.name", "Invalid value: %s: %s" % (_q(name), m), "FieldValueInvalid") for m in _path_segment_errors(name)]


def _policy_causes(kind, spec):
    """The registry's checks of a ValidatingAdmissionPolicy (each CEL expression compiles; failurePolicy) or a binding
    (policyName, validationActions), as far as the collection's objects go."""
    causes = []
    if kind.plural == "validatingadmissionpolicybindings":
        if not spec.get("policyName"):
            causes.append(("spec.policyName", "Required value", "FieldValueRequired"))
        actions = spec.get("validationActions")
        if not actions:
            causes.append(("spec.validationActions", "Required value: at least one validation action is required", "FieldValueRequired"))
        for index, action in enumerate(actions or []):
            if action not in ("Deny", "Warn", "Audit"):
                causes.append(("spec.validationActions[%d]" % index, 'Unsupported value: %s: supported values: "Audit", "Deny", "Warn"'
                               % _q(action), "FieldValueNotSupported"))
        return causes
    if spec.setdefault("failurePolicy", "Fail") not in ("Fail", "Ignore"):
        causes.append(("spec.failurePolicy", 'Unsupported value: %s: supported values: "Fail", "Ignore"' % _q(spec["failurePolicy"]),
                       "FieldValueNotSupported"))
    if not spec.get("matchConstraints"):
        causes.append(("spec.matchConstraints", "Required value", "FieldValueRequired"))
    for field in ("matchConditions", "validations"):
        for index, entry in enumerate(spec.get(field) or []):
            expression = entry.get("expression") if isinstance(entry, dict) else None
            if not expression:
                causes.append(("spec.%s[%d].expression" % (field, index), "Required value", "FieldValueRequired"))
                continue
            if celpy is not None:
                try:
                    cel_program(expression)
                except ValueError as exc:
                    causes.append(("spec.%s[%d].expression" % (field, index), "Invalid value: %s: %s" % (_q(expression), exc),
                                   "FieldValueInvalid"))
                    continue
                declared = CEL_DECLARED + (("params",) if spec.get("paramKind") else ())
                for name in cel_undeclared(expression, declared)[:1]:
                    causes.append(("spec.%s[%d].expression" % (field, index), "Invalid value: %s: compilation failed: ERROR: <input>: "
                                   "undeclared reference to '%s' (in container '')" % (_q(expression), name), "FieldValueInvalid"))
    return causes


def admit_object(kind, namespace, name, body, old):
    """The record to store for a Namespace, ServiceAccount, ClusterRole, Role or binding from the object a client sent
    (create, update, or the result of a patch or an apply): defaults as decoding applies them, then validation (422
    with the registry's messages); old is the object it replaces (uid and creationTimestamp are kept, roleRef may not
    change)."""
    meta = body.get("metadata") or {}
    if not isinstance(meta, dict):
        raise _cannot_decode(kind, "json: cannot unmarshal %s into Go struct field %s.metadata of type v1.ObjectMeta" % (type(meta).__name__, kind.kind))
    labels = _string_map(meta.get("labels"), "labels")
    annotations = _string_map(meta.get("annotations"), "annotations")
    record_meta = {"name": name}
    if kind.namespaced:
        record_meta["namespace"] = namespace
    if old is not None:
        record_meta["uid"] = old["metadata"].get("uid") or str(uuid.uuid4())
        if old["metadata"].get("creationTimestamp"):
            record_meta["creationTimestamp"] = old["metadata"]["creationTimestamp"]
    else:
        record_meta["uid"] = str(uuid.uuid4())
        record_meta["creationTimestamp"] = _iso()
    if kind.plural == "namespaces" and name:
        labels["kubernetes.io/metadata.name"] = name  # the apiserver keeps this label on every namespace
    if labels:
        record_meta["labels"] = labels
    if annotations:
        record_meta["annotations"] = annotations
    record = {"kind": kind.kind, "apiVersion": kind.api_version, "metadata": record_meta}
    causes = _name_causes(kind.plural, name) + metadata_causes(labels, annotations)
    if kind.plural == "namespaces":
        record["spec"] = {"finalizers": ["kubernetes"]}
        record["status"] = {"phase": "Active"}
    elif kind.plural == "serviceaccounts":
        for field in ("secrets", "imagePullSecrets"):
            value = body.get(field)
            if value is not None:
                if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                    raise _cannot_decode(kind, "json: cannot unmarshal %s into Go struct field ServiceAccount.%s" % (type(value).__name__, field))
                if value:
                    record[field] = copy.deepcopy(value)
        if body.get("automountServiceAccountToken") is not None:
            if not isinstance(body["automountServiceAccountToken"], bool):
                raise _cannot_decode(kind, "json: cannot unmarshal into Go struct field ServiceAccount.automountServiceAccountToken of type bool")
            record["automountServiceAccountToken"] = body["automountServiceAccountToken"]
    elif kind.plural == "leases":
        record["spec"], spec_causes = _decode_lease_spec(kind, body.get("spec"))
        causes += spec_causes
    elif kind.plural == "configmaps":
        data = _string_map(body.get("data"), "data")
        for key in data:
            if not _CONFIGMAP_KEY.fullmatch(key) or len(key) > 253:
                causes.append(("data[%s]" % key, "Invalid value: %s: a valid config key must consist of alphanumeric characters, '-', "
                               "'_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
                               "'[-._a-zA-Z0-9]+')" % _q(key), "FieldValueInvalid"))
        if data:
            record["data"] = data
    elif kind.group == DRA_GROUP:
        spec = body.get("spec")
        if not isinstance(spec, dict):
            raise _cannot_decode(kind, "json: cannot unmarshal %s into Go struct field %s.spec" % (type(spec).__name__, kind.kind))
        record["spec"] = copy.deepcopy(spec)
        if old is not None and old.get("status"):   # the status is the scheduler's and the kubelet's, never the client's
            record["status"] = copy.deepcopy(old["status"])
    elif kind.plural in ("validatingadmissionpolicies", "validatingadmissionpolicybindings"):
        spec = body.get("spec")
        if not isinstance(spec, dict):
            raise _cannot_decode(kind, "json: cannot unmarshal %s into Go struct field %s.spec" % (type(spec).__name__, kind.kind))
        record["spec"] = copy.deepcopy(spec)
        causes += _policy_causes(kind, record["spec"])
    elif kind.plural in ("clusterroles", "roles"):
        record["rules"] = _decode_rules(kind, body.get("rules"))
        if kind.plural == "clusterroles" and isinstance(body.get("aggregationRule"), dict):
            record["aggregationRule"] = copy.deepcopy(body["aggregationRule"])
        for index, rule in enumerate(record["rules"]):
            causes += _policy_rule_causes(rule, kind.plural == "roles", "rules[%d]" % index)
    else:
        subjects = _decode_subjects(kind, body.get("subjects"))
        if subjects:
            record["subjects"] = subjects
        ref = body.get("roleRef")
        if ref is not None and not isinstance(ref, dict):
            raise _cannot_decode(kind, "json: cannot unmarshal %s into Go struct field %s.roleRef of type v1.RoleRef" % (type(ref).__name__, kind.kind))
        ref = {k: str(v) for k, v in (ref or {}).items() if k in ("apiGroup", "kind", "name") and v is not None}
        record["roleRef"] = {"apiGroup": ref.get("apiGroup") or RBAC_GROUP,  # SetDefaults_RoleBinding: the RBAC group
                             "kind": ref.get("kind", ""), "name": ref.get("name", "")}
        causes += _binding_causes(record, kind.plural == "rolebindings", old)
    if causes:
        raise invalid(kind, name, causes)
    return record


def success_status(kind, name, uid):
    """What a DELETE of an object without finalizers answers (genericregistry Store.finalizeDelete)."""
    details = {"name": name}
    if kind.group:
        details["group"] = kind.group
    details["kind"] = kind.plural
    if uid:
        details["uid"] = uid
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


# ---------------------------------------------------------------- Dynamic Resource Allocation: the scheduler's allocator

# kube-scheduler's DynamicResources plugin, Filter: a claim no device set on the node satisfies
# (pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go)
DRA_UNSCHEDULABLE = "cannot allocate all claims"
DRA_MAX_RESULTS = 32   # resource/v1 AllocationResultsMaxSize


class AllocationError(Exception):
    """The allocator gives up: ``unschedulable`` (no device set fits: the scheduler's Filter message) or an error of
    the claim (a CEL expression that fails, a class that is not there): the scheduler's event text."""

    def __init__(self, message, unschedulable=True):
        super(AllocationError, self).__init__(message)
        self.unschedulable = unschedulable


def dra_devices(slices, node_name):
    """The devices ``node_name``'s ResourceSlices publish (``spec.nodeName``; each pool's newest generation, as
    structured GatherPools keeps it), in a fixed order: by driver and pool, then as the driver listed them. The real
    allocator walks pools in Go map order; the stand-in's order is fixed so that a test sees one allocation."""
    mine = [s for s in slices if (s.get("spec") or {}).get("nodeName") == node_name]
    newest = {}
    for s in mine:
        pool = s["spec"].get("pool") or {}
        key = (s["spec"].get("driver"), pool.get("name"))
        newest[key] = max(newest.get(key, 0), int(pool.get("generation") or 0))
    out = []
    for s in sorted(mine, key=lambda s: (s["spec"].get("driver") or "", (s["spec"].get("pool") or {}).get("name") or "")):
        spec, pool = s["spec"], s["spec"].get("pool") or {}
        if int(pool.get("generation") or 0) != newest[(spec.get("driver"), pool.get("name"))]:
            continue
        for device in spec.get("devices") or []:
            out.append({"driver": spec.get("driver"), "pool": pool.get("name"), "name": device.get("name"), "device": device})
    return out


def _attribute(value):
    for key in ("int", "bool", "string", "version", "ints", "bools", "strings", "versions"):
        if isinstance(value, dict) and key in value:
            return value[key]
    return None


def dra_device_attributes(driver, device):
    """{domain: {id: value}} as CEL sees ``device.attributes`` (a name without a domain is in the driver's)."""
    out = {}
    raw = device.get("attributes") if "attributes" in device else (device.get("basic") or {}).get("attributes")
    for name, value in (raw or {}).items():
        domain, dummy, ident = name.rpartition("/")
        out.setdefault(domain or driver, {})[ident] = _attribute(value)
    return out


def _lookup(entry, qualified):
    """structured lookupAttribute: the fully qualified name, or the bare id when the domain is the device's driver."""
    domain, dummy, ident = qualified.rpartition("/")
    return dra_device_attributes(entry["driver"], entry["device"]).get(domain or entry["driver"], {}).get(ident)


def _selectable(entry, selectors, cache):
    """Every CEL selector (the class's, then the request's) true for the device; a failing expression aborts."""
    for selector in selectors:
        expression = ((selector or {}).get("cel") or {}).get("expression") or ""
        key = (expression, entry["driver"], entry["pool"], entry["name"])
        if key not in cache:
            capacity = {}
            for name, value in (entry["device"].get("capacity") or {}).items():
                domain, dummy, ident = name.rpartition("/")
                capacity.setdefault(domain or entry["driver"], {})[ident] = str((value or {}).get("value"))
            device = {"driver": entry["driver"], "attributes": dra_device_attributes(entry["driver"], entry["device"]),
                      "capacity": capacity, "allowMultipleAllocations": bool(entry["device"].get("allowMultipleAllocations"))}
            ok, error = cel_true(expression, {"device": device})
            if error is not None:
                raise AllocationError("CEL runtime error: %s: %s" % (expression, error), unschedulable=False)
            cache[key] = ok
        if not cache[key]:
            return False
    return True


def _slots(claim, classes):
    """The claim's requests as allocation slots: [(request name, [selectors], count or None for All, {capacity name:
    requested amount})] per request, with firstAvailable's subrequests as alternatives tried in order."""
    out = []
    for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
        options = []
        subs = request.get("firstAvailable") or []
        for sub in subs or [request.get("exactly") or {}]:
            cls = classes.get(sub.get("deviceClassName"))
            if cls is None:
                raise AllocationError("request %s: device class %s does not exist" % (request.get("name"), sub.get("deviceClassName")),
                                      unschedulable=False)
            selectors = list((cls.get("spec") or {}).get("selectors") or []) + list(sub.get("selectors") or [])
            count = None if sub.get("allocationMode") == "All" else int(sub.get("count") or 1)
            name = "%s/%s" % (request.get("name"), sub.get("name")) if subs else request.get("name")
            wanted = {}
            for cap, amount in (((sub.get("capacity") or {}).get("requests")) or {}).items():
                wanted[str(cap)] = parse_quantity(amount).value
            options.append((name, selectors, count, wanted))
        out.append(options)
    return out


def _qualified(driver, name):
    """A capacity's QualifiedName as results and requests spell it: a bare name is in the driver's domain."""
    return name if "/" in name else "%s/%s" % (driver, name)


def _round_up(requested, policy):
    """roundUpRange / roundUpValidValues (structured consumable_capacity.go): the request rounded up to the device's
    requestPolicy - at least validRange.min, then min + a whole number of steps; or the smallest valid value not below
    it (None when there is none: the device does not fit)."""
    valid_range = policy.get("validRange") or {}
    if valid_range.get("min") is not None:
        low = parse_quantity(valid_range["min"]).value
        if requested <= low:
            return low
        step = parse_quantity(valid_range["step"]).value if valid_range.get("step") is not None else None
        if step:
            steps = -(-(requested - low) // step)
            requested = low + steps * step
        if valid_range.get("max") is not None and requested > parse_quantity(valid_range["max"]).value:
            return None
        return requested
    if policy.get("validValues"):
        fitting = sorted(v for v in (parse_quantity(x).value for x in policy["validValues"]) if v >= requested)
        return fitting[0] if fitting else None
    return requested


def dra_consumption(entry, wanted):
    """What a request takes of a device's capacity (KEP-5075 consumable capacity; structured
    consumable_capacity.go ``calculateConsumedCapacity`` and ``fillEmptyRequest``): {qualified capacity name: amount}
    for every capacity the device has - the requested amount rounded up to the capacity's requestPolicy, or, for a
    capacity the request does not name, the policy's default, else the whole capacity. None when the request names
    a capacity the device does not have (``requestsContainNonExistCapacity``) or one no valid value covers."""
    capacity = {_qualified(entry["driver"], str(k)): v or {} for k, v in (entry["device"].get("capacity") or {}).items()}
    wanted = {_qualified(entry["driver"], k): v for k, v in wanted.items()}
    if any(name not in capacity for name in wanted):
        return None
    out = {}
    for name, cap in capacity.items():
        policy = cap.get("requestPolicy") or {}
        if name not in wanted:
            out[name] = parse_quantity(policy["default"] if policy.get("default") is not None else cap.get("value", 0)).value
            continue
        amount = _round_up(wanted[name], policy) if policy else wanted[name]
        if amount is None:
            return None
        out[name] = amount
    return out


def _capacity_value(entry, name):
    for key, cap in (entry["device"].get("capacity") or {}).items():
        if _qualified(entry["driver"], str(key)) == name:
            return parse_quantity((cap or {}).get("value", 0)).value
    return Fraction(0)


def dra_in_use(claims, node_name=None):
    """What the allocated claims hold (structured ``AllocatedState``): ([(driver, pool, device)] allocated whole -
    ``AllocatedDevices`` - and {(driver, pool, device): {capacity: amount}} consumed of the devices that allow multiple
    allocations - ``AggregatedCapacity``, from each result's consumedCapacity). node_name: only claims allocated there."""
    whole, consumed = [], {}
    for claim in claims:
        allocation = (claim.get("status") or {}).get("allocation")
        if not allocation:
            continue
        if node_name is not None and claim_node(claim) not in (None, node_name):
            continue
        for result in (allocation.get("devices") or {}).get("results") or []:
            key = (result.get("driver"), result.get("pool"), result.get("device"))
            if result.get("shareID") is None and not result.get("consumedCapacity"):
                whole.append(key)
                continue
            held = consumed.setdefault(key, {})
            for name, amount in (result.get("consumedCapacity") or {}).items():
                held[name] = held.get(name, 0) + parse_quantity(amount).value
    return whole, consumed


def claim_node(claim):
    """The node an allocation is for: its nodeSelector's matchFields metadata.name In [node] (the allocator writes
    one such term for a node-local pool); None when the allocation has no such selector."""
    selector = (((claim.get("status") or {}).get("allocation") or {}).get("nodeSelector") or {})
    for term in selector.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and field.get("values"):
                return field["values"][0]
    return None


def dra_allocate(claim, classes, slices, node_name, in_use=(), consumed=None):
    """The devices the scheduler allocates ``claim`` on ``node_name``: [{request, driver, pool, device}, plus
    consumedCapacity and shareID for a device that allows multiple allocations]
    (staging/src/k8s.io/dynamic-resource-allocation structured, allocator_incubating.go ``allocateOne``: requests in
    order, each slot a device that is not in use, not taken by this claim, selectable by the class's and the request's
    CEL selectors, and that every matchAttribute constraint accepts - ``matchAttributeConstraint.add``: a device
    without the attribute is refused, the first device of the constraint's requests (all requests when it names none)
    fixes the value; the search backtracks and takes the first full solution; firstAvailable's subrequests in order;
    allocationMode All takes every selectable device and fails when a constraint refuses one). ``classes``:
    {name: DeviceClass}; ``in_use``: (driver, pool, device) other claims hold.

    Consumable capacity (KEP-5075, v1.34 ``Device.allowMultipleAllocations``, ``ExactDeviceRequest.capacity``,
    ``DeviceRequestAllocationResult.consumedCapacity`` and ``shareID``; allocator_experimental.go): a device that allows
    multiple allocations is never in use as a whole; each request it serves consumes dra_consumption of it, and it fits
    while ``consumed`` (what other claims took: {(driver, pool, device): {capacity: amount}}, see dra_in_use) plus this
    claim's shares stay within each capacity's value (``CmpRequestOverCapacity``). Such a result gets its
    consumedCapacity (every capacity of the device) and a fresh shareID (a UUID). Raises AllocationError."""
    consumed = consumed or {}
    busy = set(tuple(k) for k in in_use)

    def multi(entry):
        return bool(entry["device"].get("allowMultipleAllocations"))

    devices = [e for e in dra_devices(slices, node_name) if multi(e) or (e["driver"], e["pool"], e["name"]) not in busy]
    constraints = [(c["matchAttribute"], set(c.get("requests") or [])) for c in ((claim.get("spec") or {}).get("devices") or {}).get("constraints") or []
                   if c.get("matchAttribute")]
    slots = _slots(claim, classes)
    cache, taken, values = {}, [], [None] * len(constraints)

    def covers(names, request):
        return not names or request.split("/", 1)[0] in names or request in names

    def add(entry, request):
        fixed = []
        for index, (attribute, names) in enumerate(constraints):
            if not covers(names, request):
                continue
            value = _lookup(entry, attribute)
            if value is None or (values[index] is not None and values[index] != value):
                for i in fixed:
                    values[i] = None
                return None
            if values[index] is None:
                values[index] = value
                fixed.append(index)
        return fixed

    def count_of(request):
        return sum(1 for t in taken if t[0] == request)

    def fits(entry, wanted):
        """The share this request would take of the device ({} for a device allocated whole), or None."""
        share = dra_consumption(entry, wanted)
        if share is None:
            return None
        if not multi(entry):   # a device allocated whole: a named capacity must not ask for more than it has
            return {} if all(_capacity_value(entry, _qualified(entry["driver"], k)) >= v for k, v in wanted.items()) else None
        key = (entry["driver"], entry["pool"], entry["name"])
        for name, amount in share.items():
            used = (consumed.get(key) or {}).get(name, 0) + sum(t[2].get(name, 0) for t in taken if t[1] is entry)
            if used + amount > _capacity_value(entry, name):
                return None
        return share

    def place(slot):
        if slot == len(slots):
            return True
        for name, selectors, count, wanted in slots[slot]:
            want = count if count is not None else len([e for e in devices if _selectable(e, selectors, cache)])
            if count is None and want == 0:
                continue
            if fill(slot, name, selectors, want, wanted):
                return True
        return False

    def fill(slot, name, selectors, want, wanted):
        if count_of(name) == want:
            return place(slot + 1)
        for entry in devices:
            if (not multi(entry) and any(t[1] is entry for t in taken)) or not _selectable(entry, selectors, cache):
                continue
            share = fits(entry, wanted)
            if share is None:
                continue
            fixed = add(entry, name)
            if fixed is None:
                continue
            taken.append((name, entry, share))
            if len(taken) <= DRA_MAX_RESULTS and fill(slot, name, selectors, want, wanted):
                return True
            taken.pop()
            for i in fixed:
                values[i] = None
        return False

    if not place(0):
        raise AllocationError(DRA_UNSCHEDULABLE)
    out = []
    for name, entry, share in taken:
        result = {"request": name, "driver": entry["driver"], "pool": entry["pool"], "device": entry["name"]}
        if multi(entry):
            result["consumedCapacity"] = {k: str(Quantity(v)) for k, v in sorted(share.items())}
            result["shareID"] = str(uuid.uuid4())
        out.append(result)
    return out


# ---------------------------------------------------------------- DRA: the resourceclaim controller and kube-scheduler

POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"   # pkg/controller/resourceclaim controller.go podResourceClaimAnnotation
NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"   # k8s.io/apimachinery pkg/util/rand: the alphabet of generated names
# Filter reasons (pkg/scheduler/framework/plugins, v1.34): nodeunschedulable ErrReasonUnschedulable, tainttoleration
# ErrReasonNotMatch, nodeaffinity ErrReasonPod, dynamicresources Filter; True: UnschedulableAndUnresolvable
# (preemption cannot help), False: Unschedulable.
REASON_UNSCHEDULABLE = ("node(s) were unschedulable", True)
REASON_TAINT = ("node(s) had untolerated taint(s)", True)
REASON_AFFINITY = ("node(s) didn't match Pod's node affinity/selector", True)
REASON_CLAIM_ELSEWHERE = ("resourceclaim not available on the node", True)
REASON_CLAIMS = (DRA_UNSCHEDULABLE, False)


class Unschedulable(Exception):
    """No node fits the pod: the FitError message the scheduler puts in the PodScheduled condition."""


def claim_generate_name(pod_name, entry_name):
    """handlePod (pkg/controller/resourceclaim/controller.go, v1.34): the claim's generateName is <pod>-<entry>-; over
    maxBaseLen 57 both parts are cut in proportion to their length (and the trailing hyphen goes)."""
    base = pod_name + "-" + entry_name + "-"
    if len(base) > 57:
        base = pod_name[:len(pod_name) * 57 // len(base)] + "-" + entry_name[:len(entry_name) * 57 // len(base)]
    return base


def generated_name(base):
    """The API server's SimpleNameGenerator (apiserver pkg/storage/names): the base cut to 58 characters, then 5
    random characters of NAME_CHARS."""
    return base[:58] + "".join(secrets.choice(NAME_CHARS) for dummy in range(5))


def claim_from_template(pod, entry_name, template):
    """The ResourceClaim handlePod creates from a template: generateName, the pod as controlling owner
    (blockOwnerDeletion), the template's labels and annotations plus resource.kubernetes.io/pod-claim-name, its spec."""
    meta = (template.get("spec") or {}).get("metadata") or {}
    base = claim_generate_name(str(pod["name"]), entry_name)
    annotations = dict(meta.get("annotations") or {})
    annotations[POD_CLAIM_ANNOTATION] = entry_name
    claim_meta = {"name": generated_name(base), "generateName": base, "namespace": pod["namespace"], "uid": str(uuid.uuid4()),
                  "creationTimestamp": _iso(), "annotations": annotations,
                  "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod["name"], "uid": pod["uid"], "controller": True,
                                       "blockOwnerDeletion": True}]}
    if meta.get("labels"):
        claim_meta["labels"] = dict(meta["labels"])
    return {"kind": "ResourceClaim", "apiVersion": "%s/v1" % DRA_GROUP, "metadata": claim_meta,
            "spec": copy.deepcopy((template.get("spec") or {}).get("spec") or {})}


def owning_pod(claim):
    """The (name, uid) of the pod a claim was generated for (its controlling owner reference), else None."""
    for ref in (claim.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("kind") == "Pod" and ref.get("controller") and ref.get("apiVersion") == "v1":
            return ref.get("name"), ref.get("uid")
    return None


def pod_claim_names(pod):
    """resourceclaim.Name for each spec.resourceClaims entry: [(entry, claim name or None while the controller has not
    made it, from a template)]."""
    statuses = {s.get("name"): s.get("resourceClaimName") for s in pod.get("resourceClaimStatuses") or [] if isinstance(s, dict)}
    out = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
        if entry.get("resourceClaimName"):
            out.append((entry.get("name"), entry["resourceClaimName"], False))
        else:
            out.append((entry.get("name"), statuses.get(entry.get("name")), True))
    return out


def tolerates(tolerations, taint):
    """v1 Toleration.ToleratesTaint: the effect matches (empty tolerates every effect), the key matches (an empty key
    with Exists tolerates every taint), Exists or an Equal value."""
    for toleration in tolerations or []:
        if not isinstance(toleration, dict):
            continue
        if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
            continue
        if toleration.get("key") and toleration["key"] != taint.get("key"):
            continue
        operator = toleration.get("operator") or "Equal"
        if operator == "Exists" or (operator == "Equal" and toleration.get("key") and (toleration.get("value") or "") == (taint.get("value") or "")):
            return True
    return False


def _expression_matches(expression, values_of):
    operator, values = expression.get("operator"), [str(v) for v in expression.get("values") or []]
    present, value = values_of(expression.get("key"))
    if operator == "In":
        return present and value in values
    if operator == "NotIn":
        return not present or value not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and values:
        try:
            return int(value) > int(values[0]) if operator == "Gt" else int(value) < int(values[0])
        except ValueError:
            return False
    return False


def node_affinity_matches(spec, node):
    """nodeaffinity Filter (GetRequiredNodeAffinity.Match): every spec.nodeSelector label, and one of the required
    nodeSelectorTerms (each: its matchExpressions on the labels and matchFields on metadata.name, all true)."""
    labels = node["metadata"].get("labels") or {}
    if any(labels.get(k) != str(v) for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms")
    if not terms:
        return True
    for term in terms:
        expressions, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
        if not expressions and not fields:
            continue   # an empty term matches nothing
        if all(_expression_matches(e, lambda k: (k in labels, labels.get(k))) for e in expressions) and \
                all(_expression_matches(f, lambda k: (k == "metadata.name", node["metadata"]["name"])) for f in fields):
            return True
    return False


def fit_error(count, reasons, prefilter=None):
    """FitError.Error (pkg/scheduler/framework/types.go, v1.34): "0/N nodes are available:" then the PreFilter message or
    the sorted histogram of the nodes' Filter reasons, then the PostFilter plugins' - DynamicResources' "no new claims
    to deallocate" and DefaultPreemption's own "0/N nodes are available:" histogram (a node rejected as
    UnschedulableAndUnresolvable: "Preemption is not helpful for scheduling"; else, every pod here having priority 0,
    "No preemption victims found for incoming pod")."""
    def histogram(items):
        counts = {}
        for item in items:
            counts[item] = counts.get(item, 0) + 1
        return ", ".join(sorted("%d %s" % (n, k) for k, n in counts.items()))
    text = "0/%d nodes are available: %s." % (count, prefilter if prefilter else histogram(r[0] for r in reasons))
    verdicts = ["Preemption is not helpful for scheduling" if prefilter or r[1] else "No preemption victims found for incoming pod"
                for r in (reasons if not prefilter else [None] * count)]
    return text + " no new claims to deallocate, preemption: 0/%d nodes are available: %s." % (count, histogram(verdicts))


def dra_schedule(pod, nodes, claims, classes, slices):
    """kube-scheduler's cycle for a pod with ResourceClaims: DynamicResources PreFilter (each claim exists - one from a
    template must have been made for this pod), then per node, in the default plugins' order, NodeUnschedulable (a
    cordoned node only for a pod tolerating node.kubernetes.io/unschedulable:NoSchedule), TaintToleration (every
    NoSchedule/NoExecute taint tolerated), NodeAffinity (nodeSelector, required node affinity), DynamicResources Filter
    (an allocated claim's node is this one; the others allocated here by dra_allocate, devices other claims hold in
    use, one claim after another). Nodes are tried by name and the first that fits is taken (no scoring). Returns
    (node name, {claim name: allocation results or None when already allocated}); raises Unschedulable with the
    scheduler's message. ``nodes``: node_object()s; ``claims``: the namespace's claims."""
    if not nodes:
        raise Unschedulable("no nodes available to schedule pods")
    spec = pod.get("spec") or {}
    by_name = {c["metadata"]["name"]: c for c in claims if c["metadata"].get("namespace") == pod["namespace"]}
    wanted = []
    for entry, name, generated in pod_claim_names(pod):
        claim = by_name.get(name) if name else None
        if claim is None:
            text = ('waiting for dynamic resource controller to create the resourceclaim "%s-%s"' % (pod["name"], entry) if generated
                    else 'resourceclaim "%s" not found' % name)
            raise Unschedulable(fit_error(len(nodes), [], text))
        if generated and owning_pod(claim) != (pod["name"], pod["uid"]):
            raise Unschedulable(fit_error(len(nodes), [], "ResourceClaim %s was not created for pod %s/%s (pod is not owner)"
                                          % (name, pod["namespace"], pod["name"])))
        wanted.append(claim)
    others = [c for c in claims if c["metadata"].get("uid") not in {w["metadata"].get("uid") for w in wanted}]
    tolerations = spec.get("tolerations") or []
    reasons = []
    for node in sorted(nodes, key=lambda n: n["metadata"]["name"]):
        name = node["metadata"]["name"]
        if node["spec"].get("unschedulable") and not tolerates(tolerations, {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}):
            reasons.append(REASON_UNSCHEDULABLE)
            continue
        if any(t.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, t) for t in node["spec"].get("taints") or []):
            reasons.append(REASON_TAINT)
            continue
        if not node_affinity_matches(spec, node):
            reasons.append(REASON_AFFINITY)
            continue
        whole, consumed = dra_in_use(others, name)
        results, refused = {}, None
        for claim in wanted:
            if (claim.get("status") or {}).get("allocation"):
                if claim_node(claim) not in (None, name):
                    refused = REASON_CLAIM_ELSEWHERE
                    break
                results[claim["metadata"]["name"]] = None
                continue
            try:
                got = dra_allocate(claim, classes, slices, name, whole, consumed)
            except AllocationError as exc:
                refused = REASON_CLAIMS if exc.unschedulable else (str(exc), True)
                break
            results[claim["metadata"]["name"]] = got
            more_whole, more_consumed = dra_in_use([{"status": {"allocation": {"devices": {"results": got}}}}])
            whole = whole + more_whole
            for key, held in more_consumed.items():
                for cap, amount in held.items():
                    consumed.setdefault(key, {})[cap] = consumed.get(key, {}).get(cap, 0) + amount
        if refused is not None:
            reasons.append(refused)
            continue
        return name, results
    raise Unschedulable(fit_error(len(nodes), reasons))


def allocation_for(node_name, results):
    """AllocationResult as the scheduler writes it: the devices and a node selector for the node (node-local pools)."""
    return {"devices": {"results": results},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}


# ---------------------------------------------------------------- tables (kubectl get)

def _column(name, description, priority=0, kind="string", fmt=""):
    return {"name": name, "type": kind, "format": fmt, "description": description, "priority": priority}


NAME_COLUMN = _column("Name", "Name must be unique within a namespace.", fmt="name")
AGE_COLUMN = _column("Age", "CreationTimestamp is a timestamp representing the server time when this object was created.")
CREATED_COLUMN = _column("Created At", "CreationTimestamp is a timestamp representing the server time when this object was created.",
                         kind="date")
BINDING_COLUMNS = [NAME_COLUMN, _column("Role", "RoleRef is the Role or ClusterRole to bind to."), AGE_COLUMN,
                   _column("Users", "Users in the binding", 1), _column("Groups", "Groups in the binding", 1),
                   _column("ServiceAccounts", "ServiceAccounts in the binding", 1)]


def _roles(labels):
    roles = set()
    for key, value in labels.items():
        if key.startswith("node-role.kubernetes.io/") and key[len("node-role.kubernetes.io/"):]:
            roles.add(key[len("node-role.kubernetes.io/"):])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return ",".join(sorted(roles)) or "<none>"


def _node_row(obj, now):
    ready = [c for c in obj["status"]["conditions"] if c["type"] == "Ready"]
    status = [("Ready" if c["status"] == "True" else "NotReady") for c in ready] or ["Unknown"]
    if obj["spec"].get("unschedulable"):
        status.append("SchedulingDisabled")
    info = obj["status"]["nodeInfo"]
    addresses = obj["status"].get("addresses") or []
    internal = [a["address"] for a in addresses if a["type"] == "InternalIP"]
    external = [a["address"] for a in addresses if a["type"] == "ExternalIP"]
    return [obj["metadata"]["name"], ",".join(status), _roles(obj["metadata"].get("labels") or {}),
            _age(obj["metadata"].get("creationTimestamp"), now), info.get("kubeletVersion", ""),
            internal[0] if internal else "<none>", external[0] if external else "<none>", info.get("osImage") or "<unknown>",
            info.get("kernelVersion") or "<unknown>", info.get("containerRuntimeVersion") or "<unknown>"]


def _pod_row(obj, now):
    statuses = obj["status"].get("containerStatuses") or []
    status = "Terminating" if obj["metadata"].get("deletionTimestamp") else obj["status"].get("phase", "")
    if obj["status"].get("phase") == "Succeeded":
        status = "Completed"
    waiting = [s["state"]["waiting"].get("reason") for s in statuses if "waiting" in (s.get("state") or {})]
    terminated = [s["state"]["terminated"].get("reason") for s in statuses if "terminated" in (s.get("state") or {})]
    if obj["status"].get("reason"):
        status = obj["status"]["reason"]
    elif waiting and waiting[0]:
        status = waiting[0]
    elif terminated and terminated[0] and obj["status"].get("phase") == "Failed":
        status = terminated[0]
    return [obj["metadata"]["name"], "%d/%d" % (sum(1 for s in statuses if s.get("ready")), len(obj["spec"]["containers"])), status,
            str(sum(s.get("restartCount", 0) for s in statuses)), _age(obj["metadata"].get("creationTimestamp"), now),
            "<none>", obj["spec"].get("nodeName") or "<none>", "<none>", "<none>"]


def _ds_row(obj, now):
    status = obj["status"]
    return [obj["metadata"]["name"], status["desiredNumberScheduled"], status["currentNumberScheduled"], status["numberReady"],
            status["updatedNumberScheduled"], status["numberAvailable"], "<none>", _age(obj["metadata"].get("creationTimestamp"), now)]


def _rs_row(obj, now):
    return [obj["metadata"]["name"], obj["spec"]["replicas"], obj["status"]["replicas"], obj["status"]["readyReplicas"],
            _age(obj["metadata"].get("creationTimestamp"), now)]


def _namespace_row(obj, now):
    return [obj["metadata"]["name"], obj["status"]["phase"], _age(obj["metadata"].get("creationTimestamp"), now)]


def _serviceaccount_row(obj, now):
    return [obj["metadata"]["name"], len(obj.get("secrets") or []), _age(obj["metadata"].get("creationTimestamp"), now)]


def _role_row(obj, _now):
    return [obj["metadata"]["name"], obj["metadata"].get("creationTimestamp") or ""]


def _binding_row(obj, now):
    """printRoleBinding / printClusterRoleBinding: the role, then (wide) the subjects by kind."""
    ref = obj.get("roleRef") or {}
    subjects = obj.get("subjects") or []

    def named(kind):
        return ", ".join(("%s/%s" % (s.get("namespace", ""), s.get("name", ""))) if kind == "ServiceAccount" else s.get("name", "")
                         for s in subjects if s.get("kind") == kind)

    return [obj["metadata"]["name"], "%s/%s" % (ref.get("kind", ""), ref.get("name", "")), _age(obj["metadata"].get("creationTimestamp"), now),
            named("User"), named("Group"), named("ServiceAccount")]


def _lease_row(obj, now):
    """printLease: the holder and the age."""
    return [obj["metadata"]["name"], (obj.get("spec") or {}).get("holderIdentity") or "", _age(obj["metadata"].get("creationTimestamp"), now)]


def _default_row(obj, _now):
    return [obj["metadata"]["name"], obj["metadata"].get("creationTimestamp") or ""]


def _pdb_row(obj, now):
    return [obj["metadata"]["name"], "N/A", str(obj["spec"]["maxUnavailable"]), obj["status"]["disruptionsAllowed"],
            _age(obj["metadata"].get("creationTimestamp"), now)]


TABLES = {
    "nodes": ([NAME_COLUMN, _column("Status", "The status of the node"), _column("Roles", "The roles of the node"), AGE_COLUMN,
               _column("Version", "Kubelet Version reported by the node."), _column("Internal-IP", "List of internal IPs for the node.", 1),
               _column("External-IP", "List of external IPs for the node.", 1), _column("OS-Image", "OS image reported by the node.", 1),
               _column("Kernel-Version", "Kernel version reported by the node.", 1),
               _column("Container-Runtime", "Container runtime and version reported by the node.", 1)], _node_row),
    "pods": ([NAME_COLUMN, _column("Ready", "The aggregate readiness state of this pod for accepting traffic."),
              _column("Status", "The aggregate status of the containers in this pod."),
              _column("Restarts", "The number of times the containers in this pod have been restarted and when the last container "
                                  "in this pod has restarted."), AGE_COLUMN,
              _column("IP", "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.", 1),
              _column("Node", "NodeName is a request to schedule this pod onto a specific node.", 1),
              _column("Nominated Node", "nominatedNodeName is set only when this pod preempts other pods on the node.", 1),
              _column("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness.", 1)], _pod_row),
    "daemonsets": ([NAME_COLUMN, _column("Desired", "The total number of nodes that should be running the daemon pod.", kind="integer"),
                    _column("Current", "The number of nodes running at least one daemon pod.", kind="integer"),
                    _column("Ready", "The number of nodes that should be running the daemon pod and have one or more running and ready.",
                            kind="integer"),
                    _column("Up-to-date", "The total number of nodes that are running updated daemon pod", kind="integer"),
                    _column("Available", "The number of nodes that should be running the daemon pod and have one or more available.",
                            kind="integer"),
                    _column("Node Selector", "NodeSelector is a selector which must be true for the pod to fit on a node."), AGE_COLUMN],
                   _ds_row),
    "replicasets": ([NAME_COLUMN, _column("Desired", "Replicas is the number of desired replicas.", kind="integer"),
                     _column("Current", "Replicas is the most recently observed number of replicas.", kind="integer"),
                     _column("Ready", "readyReplicas is the number of pods targeted by this ReplicaSet with a Ready Condition.",
                             kind="integer"), AGE_COLUMN], _rs_row),
    "namespaces": ([NAME_COLUMN, _column("Status", "The status of the namespace"), AGE_COLUMN], _namespace_row),
    "poddisruptionbudgets": ([NAME_COLUMN, _column("Min Available", "The minimum number of pods that must be available."),
                              _column("Max Unavailable", "The maximum number of pods that may be unavailable."),
                              _column("Allowed Disruptions", "Calculated number of pods that may be disrupted at this time.",
                                      kind="integer"), AGE_COLUMN], _pdb_row),
    "serviceaccounts": ([NAME_COLUMN, _column("Secrets", "Secrets is a list of the secrets in the same namespace that pods running using "
                                              "this ServiceAccount are allowed to use.", kind="integer"), AGE_COLUMN], _serviceaccount_row),
    "clusterroles": ([NAME_COLUMN, CREATED_COLUMN], _role_row),
    "roles": ([NAME_COLUMN, CREATED_COLUMN], _role_row),
    "clusterrolebindings": (BINDING_COLUMNS, _binding_row),
    "rolebindings": (BINDING_COLUMNS, _binding_row),
    "leases": ([NAME_COLUMN, _column("Holder", "HolderIdentity is the identity of the holder of a current lease."), AGE_COLUMN], _lease_row),
}
DEFAULT_TABLE = ([NAME_COLUMN, CREATED_COLUMN], _default_row)  # the apiserver's default table convertor


def partial_metadata(obj, version="v1"):
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/" + version, "metadata": obj["metadata"]}


def table(kind, objects, version, include, resource_version, columns=True):
    definitions, row = TABLES.get(kind.plural, DEFAULT_TABLE)
    now = time.time()
    rows = []
    for obj in objects:
        entry = {"cells": row(obj, now)}
        if include == "Object":
            entry["object"] = obj
        elif include != "None":
            entry["object"] = partial_metadata(obj, version)
        rows.append(entry)
    doc = {"kind": "Table", "apiVersion": "meta.k8s.io/" + version, "metadata": {"resourceVersion": resource_version}}
    if columns:
        doc["columnDefinitions"] = definitions
    doc["rows"] = rows
    return doc


def negotiate(accept):
    """What an Accept header asks for: ("table"|"partial"|"json", meta.k8s.io version); None when JSON is not acceptable.
    Aggregated discovery (as=APIGroupDiscoveryList) is not served: the plain JSON that follows it in the header is."""
    if not accept:
        return ("json", None)
    for clause in accept.split(","):
        parts = [p.strip() for p in clause.split(";")]
        media = parts[0].lower()
        params = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
        if media not in ("application/json", "application/*", "*/*"):
            continue
        wanted = params.get("as")
        if wanted is None:
            return ("json", None)
        if params.get("g") == "meta.k8s.io" and params.get("v") in ("v1", "v1beta1"):
            if wanted == "Table":
                return ("table", params["v"])
            if wanted in ("PartialObjectMetadata", "PartialObjectMetadataList"):
                return ("partial", params["v"])
    return None


# ---------------------------------------------------------------- the API

class Request:
    def __init__(self, method, path, query, headers, body):
        self.method, self.path, self.query, self.headers, self.body = method, path, query, headers, body
        self.summary = None
        self.received = time.time()
        self.user = None  # the authenticated User


class Response:
    def __init__(self, code, doc=None, stream=None, content_type="application/json", text=None):
        self.code, self.doc, self.stream, self.content_type, self.text = code, doc, stream, content_type, text


def _truthy(value):
    return str(value).lower() in ("true", "1")


def _json_body(request, what):
    """The request's body: JSON, or protobuf for the few kinds decode_protobuf knows; None when empty."""
    if not request.body:
        return None
    if (request.headers.get("Content-Type") or "").split(";")[0].strip().lower() == PROTOBUF:
        return decode_protobuf(request.body)
    try:
        return json.loads(request.body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise bad_request("error decoding %s: %s" % (what, exc)) from None


class Api:
    def __init__(self, state_dir, log_path, policies=None):
        self.version = VERSION
        self.policies = celpy is not None if policies is None else bool(policies) and celpy is not None
        self.store = Store(state_dir)
        self.versions = Versions()
        self.log_path = log_path
        self.log_lock = threading.Lock()
        self.stopping = threading.Event()
        self.address = "127.0.0.1:6443"
        self.create_lock = threading.Lock()
        self.dra_lock = threading.RLock()   # the resourceclaim controller's and the scheduler's work, one at a time
        self.sequence = 0
        self.objfiles = ObjectFiles(self.store)
        self.tokens = Tokens(self.store)
        self.rbac = Rbac(self.records)
        self.started = _iso()  # the bootstrap policy's creationTimestamp

    def groups(self):
        """The API groups served: admissionregistration.k8s.io only with ValidatingAdmissionPolicy at work,
        resource.k8s.io/v1 from Kubernetes 1.34 (a 1.33 server serves DRA only as beta, off by default)."""
        minor = int(re.match(r"v\d+\.(\d+)", self.version).group(1))
        return [gv for gv in GROUPS if (self.policies or gv[0] != ADMISSION_GROUP) and (gv[0] != DRA_GROUP or minor >= DRA_V1_SINCE)]

    def admit(self, request, operation, kind, namespace, name, obj, old, resource=None):
        """ValidatingAdmissionPolicy: every binding whose policy matches the request denies it when a validation is
        false (after RBAC, before the write; see admission_denial)."""
        if not self.policies:
            return
        denial = admission_denial(self.records("validatingadmissionpolicies"), self.records("validatingadmissionpolicybindings"),
                                  self.records("configmaps"), request.user, operation, kind, namespace, name, obj, old, resource,
                                  request.query.get("dryRun") == "All")
        if denial is not None:
            raise denial

    # -- the call log
    def record(self, request, response):
        entry = {"time": datetime.datetime.fromtimestamp(request.received, datetime.timezone.utc).isoformat(timespec="microseconds"),
                 "method": request.method, "path": request.path, "query": request.query, "code": response.code,
                 "agent": request.headers.get("User-Agent", ""), "user": request.user.name if request.user is not None else None}
        if response.stream is not None:
            entry["watch"] = True
        if request.summary is not None:
            entry["summary"] = dict(request.summary, code=response.code)
        line = json.dumps(entry, sort_keys=True) + "\n"
        with self.log_lock:
            os.makedirs(os.path.dirname(self.log_path) or ".", exist_ok=True)
            with open(self.log_path, "a", encoding="utf-8") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                handle.write(line)
                fcntl.flock(handle, fcntl.LOCK_UN)

    # -- reading
    def objects(self, kind, namespace=None, name=None):
        """The objects of a kind as they are now (stamped with their resourceVersion), sorted by namespace and name."""
        if kind is PODS or kind.plural == "resourceclaims":
            self.dra_reconcile()
        if kind is NODES and name is not None:
            node = self.store.read(name)
            found = [node_object(node)] if node is not None else []
        elif kind is NAMESPACES:
            found = self.namespaces()
        elif kind.stored:
            found = self.records(kind.plural)
        elif kind.plural == "daemonsets":
            found = kind.lister(self.store.nodes(), self.store.declared("daemonsets"))
        elif kind is PODS:
            pending = self.store.pending()
            found = kind.lister(self.store.nodes()) + [pod_object(pending, p) for p in pending.get("pods") or []]
        else:
            found = kind.lister(self.store.nodes())
        out = []
        for obj in found:
            meta = obj["metadata"]
            if (namespace is not None and meta.get("namespace") != namespace) or (name is not None and meta["name"] != name):
                continue
            out.append(self.versions.stamp("%s/%s/%s" % (kind.plural, meta.get("namespace", ""), meta["name"]), obj))
        out.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        return out

    def get(self, kind, namespace, name):
        found = self.objects(kind, namespace, name)
        if not found:
            raise not_found(kind, name)
        return found[0]

    def records(self, plural):
        """The objects of a stored kind as they are now (copies, without resourceVersion): the bootstrap ones, then the
        ones created through the API."""
        out = []
        for obj in BOOTSTRAP.get(plural, []):
            obj = copy.deepcopy(obj)
            obj["metadata"]["creationTimestamp"] = self.started
            out.append(obj)
        taken = {(o["metadata"].get("namespace"), o["metadata"]["name"]) for o in out}
        out += [copy.deepcopy(r) for r in self.objfiles.read(plural) if (r["metadata"].get("namespace"), r["metadata"].get("name")) not in taken]
        return out

    def namespaces(self):
        """The namespaces the nodes' pods (and the system) imply, overlaid by the ones stored through the API."""
        found = {o["metadata"]["name"]: o for o in namespace_objects(self.store.nodes(), self.store.declared("daemonsets"))}
        for record in self.objfiles.read("namespaces"):
            found[record["metadata"].get("name")] = copy.deepcopy(record)
        return [found[name] for name in sorted(found)]

    def namespace_names(self):
        return {o["metadata"]["name"] for o in self.namespaces()}

    # -- authentication
    def authenticate(self, request):
        """The bearer token authenticator (ADMIN_TOKEN, or a token TokenRequest issued for a ServiceAccount that still
        exists with the same uid, not expired), then anonymous: no Authorization header, or one that is not a bearer
        token, is system:anonymous; a bearer token that does not verify is 401."""
        header = (request.headers.get("Authorization") or "").strip()
        parts = header.split(" ", 2)
        if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
            return ANONYMOUS
        token = parts[1]
        if hmac.compare_digest(token.encode("utf-8"), ADMIN_TOKEN.encode("utf-8")):
            return ADMIN
        entry = self.tokens.lookup(token)
        if entry is None or float(entry.get("expires") or 0) <= time.time():
            raise unauthorized()
        namespace, name = str(entry.get("namespace")), str(entry.get("name"))
        records = self.objfiles.read("serviceaccounts")
        index = find_record(records, namespace, name)
        if index is None or records[index]["metadata"].get("uid") != entry.get("uid"):
            raise unauthorized()  # the ServiceAccount was deleted (or deleted and created again)
        return service_account_user(namespace, name, str(entry.get("uid")), str(entry.get("jti") or ""))

    # -- routing
    def handle(self, request):
        request.user = self.authenticate(request)
        attrs = request_attributes(request.user, request.method, request.path, request.query)
        allowed, reason = self.rbac.authorize(attrs)
        if not allowed:
            raise forbidden(attrs, reason)
        segments = [urllib.parse.unquote(s) for s in request.path.strip("/").split("/")] if request.path.strip("/") else []
        if request.method == "GET":
            simple = self.non_resource(segments)
            if simple is not None:
                return simple
        if len(segments) >= 2 and segments[0] == "api":
            group, version, rest = "", segments[1], segments[2:]
        elif len(segments) >= 3 and segments[0] == "apis":
            group, version, rest = segments[1], segments[2], segments[3:]
        else:
            raise not_found_path()
        if (group, version) != ("", "v1") and (group, version) not in self.groups():
            raise not_found_path()
        if not rest:
            if request.method != "GET":
                raise method_not_allowed()
            return Response(200, resource_list(group, version))
        namespace = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        if len(rest) > 3:
            raise not_found_path()
        kind = KIND_BY_PATH.get((group, version, rest[0]))
        if kind is None or (namespace is not None and not kind.namespaced):
            raise not_found_path()
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        return self.resource(request, kind, namespace, name, sub)

    def non_resource(self, segments):
        if segments == ["version"]:
            major, minor = re.match(r"v(\d+)\.(\d+)", self.version).groups()
            return Response(200, {"major": major, "minor": minor, "emulationMajor": major, "emulationMinor": minor,
                                  "minCompatibilityMajor": major, "minCompatibilityMinor": str(int(minor) - 1), "gitVersion": self.version,
                                  "gitCommit": "0" * 40, "gitTreeState": "clean", "buildDate": "2025-05-15T00:00:00Z",
                                  "goVersion": "go1.24.2", "compiler": "gc", "platform": "linux/amd64"})
        if segments == ["api"]:
            return Response(200, {"kind": "APIVersions", "versions": ["v1"],
                                  "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": self.address}]})
        if segments == ["apis"]:
            return Response(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [api_group(g, v) for g, v in self.groups()]})
        if len(segments) == 2 and segments[0] == "apis":
            for group, version in self.groups():
                if segments[1] == group:
                    return Response(200, api_group(group, version))
        if segments in (["healthz"], ["livez"], ["readyz"]):
            return Response(200, content_type="text/plain; charset=utf-8", text="ok")
        return None

    def resource(self, request, kind, namespace, name, sub):
        method = request.method
        if sub is not None:
            if kind is NODES and sub == "status" and method == "GET":
                return self.read(request, kind, namespace, name)
            if kind is PODS and sub == "eviction" and method == "POST" and namespace is not None:
                return self.evict(request, namespace, name)
            if kind is PODS and sub == "log" and method == "GET" and namespace is not None:
                return self.pod_log(request, namespace, name)
            if kind is SERVICEACCOUNTS and sub == "token" and method == "POST" and namespace is not None:
                return self.token_request(request, namespace, name)
            if (kind is PODS and sub in ("eviction", "log")) or (kind is NODES and sub == "status") or (kind is SERVICEACCOUNTS and sub == "token"):
                raise method_not_allowed()
            raise not_found_path()
        if kind in REVIEWS:
            if name is None and method == "POST":
                return self.review(request, kind)
            raise method_not_allowed()
        writable = kind.stored or kind is NAMESPACES
        if name is None:
            if method == "POST" and kind is PODS and namespace is not None:
                return self.create_pod(request, namespace)
            if method == "POST" and writable and (namespace is not None or not kind.namespaced):
                return self.create_object(request, kind, namespace)
            if method != "GET":
                raise method_not_allowed()
            return self.collection(request, kind, namespace)
        if kind.namespaced and namespace is None:
            raise not_found_path()
        if method == "GET":
            return self.read(request, kind, namespace, name)
        if method == "PATCH" and kind is NODES:
            return self.patch_node(request, name)
        if method == "PATCH" and kind is DAEMONSETS:
            return self.patch_daemonset(request, namespace, name)
        if method == "DELETE" and kind is PODS:
            return self.delete_pod(request, namespace, name)
        if writable and method == "PATCH":
            return self.patch_object(request, kind, namespace, name)
        if writable and method == "PUT":
            return self.update_object(request, kind, namespace, name)
        if writable and method == "DELETE":
            return self.delete_object(request, kind, namespace, name)
        raise method_not_allowed()

    def _render(self, request, kind, objects, single):
        wanted = negotiate(request.headers.get("Accept", ""))
        if wanted is None:
            raise ApiError(406, "NotAcceptable", "only the following media types are accepted: application/json", {})
        form, version = wanted
        resource_version = objects[0]["metadata"]["resourceVersion"] if single else str(self.versions.current())
        if form == "table":
            return table(kind, objects, version, request.query.get("includeObject", "Metadata"), resource_version)
        if form == "partial":
            if single:
                return partial_metadata(objects[0], version)
            return {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/" + version,
                    "metadata": {"resourceVersion": resource_version}, "items": [partial_metadata(o, version) for o in objects]}
        if single:
            return objects[0]
        items = []
        for obj in objects:  # list items carry no kind/apiVersion, as the API server sends them
            item = dict(obj)
            item.pop("kind", None)
            item.pop("apiVersion", None)
            items.append(item)
        return {"kind": kind.kind + "List", "apiVersion": kind.api_version, "metadata": {"resourceVersion": resource_version},
                "items": items}

    def read(self, request, kind, namespace, name):
        return Response(200, self._render(request, kind, [self.get(kind, namespace, name)], True))

    def select(self, kind, namespace, labels, fields):
        return [o for o in self.objects(kind, namespace) if labels_match(labels, o["metadata"].get("labels") or {})
                and fields_match(kind, fields, o)]

    def collection(self, request, kind, namespace):
        labels = parse_label_selector(request.query.get("labelSelector", ""))
        fields = parse_field_selector(request.query.get("fieldSelector", ""))
        if _truthy(request.query.get("watch", "")):
            if negotiate(request.headers.get("Accept", "")) is None:
                raise ApiError(406, "NotAcceptable", "only the following media types are accepted: application/json", {})
            fields_match(kind, fields, self._probe())  # an unsupported field label is a 400 before the stream starts
            return Response(200, stream=self.watch(request, kind, namespace, labels, fields))
        found = self.select(kind, namespace, labels, fields)
        return Response(200, self._render(request, kind, found, False))

    @staticmethod
    def _probe():
        """An empty object, to check a field selector's labels before a watch starts."""
        return {"metadata": {"name": "", "namespace": ""}, "spec": {"containers": []}, "status": {}}

    # -- watch
    def watch(self, request, kind, namespace, labels, fields):
        """JSON watch events: the objects already there (ADDED; with a resourceVersion, only what changed since),
        then ADDED, MODIFIED, DELETED as the files change, polled every POLL_SECONDS. The handler checks between
        events (a None) whether the client is still there."""
        query = request.query
        try:
            timeout = float(query.get("timeoutSeconds") or 1800)
        except ValueError:
            timeout = 1800
        deadline = time.time() + max(0.0, timeout)
        since = query.get("resourceVersion", "")
        since = int(since) if since.isdigit() and since != "0" else None
        initial = _truthy(query.get("sendInitialEvents", ""))
        wanted = negotiate(request.headers.get("Accept", "")) or ("json", None)
        first_table = [True]

        def event(kind_of_event, obj):
            if wanted[0] == "table":
                doc = table(kind, [obj], wanted[1], query.get("includeObject", "Metadata"), obj["metadata"]["resourceVersion"],
                            columns=first_table[0])
                first_table[0] = False
                return {"type": kind_of_event, "object": doc}
            return {"type": kind_of_event, "object": obj}

        def key(obj):
            return "%s/%s/%s" % (kind.plural, obj["metadata"].get("namespace", ""), obj["metadata"]["name"])

        known = {}
        for obj in self.select(kind, namespace, labels, fields):
            version = int(obj["metadata"]["resourceVersion"])
            if initial or since is None:
                yield event("ADDED", obj)
            elif version > since:
                yield event("ADDED" if self.versions.created(key(obj)) > since else "MODIFIED", obj)
            known[key(obj)] = obj
        if initial and _truthy(query.get("allowWatchBookmarks", "")):
            yield {"type": "BOOKMARK", "object": {"kind": kind.kind, "apiVersion": kind.api_version, "metadata": {
                "resourceVersion": str(self.versions.current()), "annotations": {"k8s.io/initial-events-end": "true"}}}}
        while not self.stopping.is_set() and time.time() < deadline:
            yield None
            current = {key(o): o for o in self.select(kind, namespace, labels, fields)}
            for name, obj in current.items():
                old = known.get(name)
                if old is None:
                    yield event("ADDED", obj)
                elif old["metadata"]["resourceVersion"] != obj["metadata"]["resourceVersion"]:
                    yield event("MODIFIED", obj)
            for name in sorted(set(known) - set(current)):
                gone = copy.deepcopy(known[name])
                gone["metadata"]["resourceVersion"] = str(self.versions.bump())
                yield event("DELETED", gone)
            known = current

    # -- writes
    def patch_node(self, request, name):
        content_type = patch_type(request)
        patch = _json_body(request, "patch")
        dry_run = request.query.get("dryRun") == "All"
        request.summary = {"verb": "patch", "node": name, "patchType": content_type.split("/")[1].split("-patch")[0]}
        if dry_run:
            request.summary["dryRun"] = True
        if not self.store.exists(name):
            raise not_found(NODES, name)
        with self.store.locked(name) as box:
            node = box["node"]
            if node is None:
                raise not_found(NODES, name)
            before = self.versions.stamp("nodes//" + name, node_object(node))
            after = apply_patch(before, patch, content_type, "Node")
            update = node_update(before, after)
            changes = {}
            old_labels = {str(k): "" if v is None else str(v) for k, v in (node.get("labels") or {}).items()}
            if _map_changes(old_labels, update["labels"]):
                changes["labels"] = _map_changes(old_labels, update["labels"])
            if _map_changes(node.get("annotations") or {}, update["annotations"]):
                changes["annotations"] = _map_changes(node.get("annotations") or {}, update["annotations"])
            if bool(node.get("unschedulable")) != update["unschedulable"]:
                changes["unschedulable"] = update["unschedulable"]
            old_taints = [t for t in node.get("taints") or [] if t.get("key") not in DERIVED_TAINTS]
            if old_taints != update["taints"]:
                changes["taints"] = update["taints"]
            request.summary.update(changes)
            changed = dict(node)
            if "labels" in changes:
                changed["labels"] = update["labels"]
            if "annotations" in changes or "annotations" not in changed:
                changed["annotations"] = update["annotations"]
            if "unschedulable" in changes:
                changed["unschedulable"] = update["unschedulable"]
                changed["cordonedAt"] = _iso() if update["unschedulable"] else None
            if "taints" in changes:
                changed["taints"] = update["taints"]
            result = node_object(changed)
            self.admit(request, "UPDATE", NODES, None, name, as_admitted_node(result, before), before)
            if dry_run:
                result["metadata"]["resourceVersion"] = before["metadata"]["resourceVersion"]
                return Response(200, result)
            box["node"] = changed
        return Response(200, self.versions.stamp("nodes//" + name, result))

    def patch_daemonset(self, request, namespace, name):
        """PATCH of a DaemonSet that daemonsets.json declares (kured's lock is an annotation on it): its labels and
        annotations change, in the record, under <state dir>/.daemonsets.lock; a stale metadata.resourceVersion in
        the patch is 409 Conflict, as the real server answers kured's Update and kubectl annotate
        --resource-version. A DaemonSet only implied by pods is not patched here (405)."""
        content_type = patch_type(request)
        patch = _json_body(request, "patch")
        request.summary = {"verb": "patch", "daemonset": "%s/%s" % (namespace, name)}
        dry_run = request.query.get("dryRun") == "All"   # authorized and admitted, never stored (kubectl --dry-run=server)
        if dry_run:
            request.summary["dryRun"] = True
        path = os.path.join(self.store.directory, "daemonsets.json")
        with open(os.path.join(self.store.directory, ".daemonsets.lock"), "a", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                records = self.store.declared("daemonsets")
                record = next((r for r in records if isinstance(r, dict) and str(r.get("namespace") or "default") == namespace
                               and str(r.get("name")) == name), None)
                found = self.get(DAEMONSETS, namespace, name)
                if record is None:
                    raise method_not_allowed()
                before = found
                after = apply_patch(before, patch, content_type, "DaemonSet")
                meta = after.get("metadata") if isinstance(after, dict) else None
                if not isinstance(meta, dict):
                    raise bad_request("the patched object is not a DaemonSet")
                version = meta.get("resourceVersion")
                if version not in (None, "") and str(version) != before["metadata"]["resourceVersion"]:
                    raise conflict(DAEMONSETS, name)
                self.admit(request, "UPDATE", DAEMONSETS, namespace, name, after, before)
                if dry_run:
                    return Response(200, after)
                for field in ("labels", "annotations"):
                    values = _string_map(meta.get(field), field)
                    if values:
                        record[field] = values
                    else:
                        record.pop(field, None)
                request.summary["annotations"] = _map_changes((before["metadata"].get("annotations") or {}),
                                                              record.get("annotations") or {})
                tmp = "%s.tmp.%d.%d" % (path, os.getpid(), threading.get_ident())
                with open(tmp, "w", encoding="utf-8") as handle:
                    json.dump(records, handle, indent=2, sort_keys=True)
                    handle.write("\n")
                os.replace(tmp, path)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        return Response(200, self.get(DAEMONSETS, namespace, name))

    def _find_pod(self, namespace, name):
        """The node whose record holds the pod; "" for the pending pods' file; None when there is no such pod."""
        for node in self.store.nodes():
            for pod in node.get("pods") or []:
                if str(pod.get("namespace")) == namespace and str(pod.get("name")) == name:
                    return node["name"]
        for pod in self.store.pending().get("pods") or []:
            if str(pod.get("namespace")) == namespace and str(pod.get("name")) == name:
                return ""
        return None

    def create_pod(self, request, namespace):
        """POST .../pods: validation (422), defaults, AlreadyExists (409); the record goes into its node's file (the
        rke2 stand-in's kubelet admits and runs it) or, without a node to run it, into pending-pods.json."""
        body = _json_body(request, "Pod")
        if not isinstance(body, dict) or body.get("kind") not in (None, "Pod") or not isinstance(body.get("metadata", {}), dict) \
                or not isinstance(body.get("spec", {}), dict):
            raise bad_request("the body is not a v1 Pod")
        meta = body.setdefault("metadata", {})
        if meta.get("namespace") not in (None, "", namespace):
            raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = str(meta["generateName"]) + uuid.uuid4().hex[:5]
        name = str(meta.get("name") or "")
        request.summary = {"verb": "create", "pod": "%s/%s" % (namespace, name)}
        dry_run = request.query.get("dryRun") == "All"
        if dry_run:
            request.summary["dryRun"] = True
        if namespace not in self.namespace_names():
            raise not_found(NAMESPACES, namespace)
        pod = default_pod(body, namespace)  # defaulting comes with decoding, before validation (requests from limits)
        causes = pod_causes(pod)
        if causes:
            raise invalid(PODS, name, causes)
        labels = next((o["metadata"].get("labels") or {} for o in self.namespaces() if o["metadata"]["name"] == namespace), {})
        refusal = pod_security_violation(labels, pod)  # a validating admission plugin: after validation, before storage
        if refusal is not None:
            request.summary["podSecurity"] = labels.get(PSA_ENFORCE)
            raise refusal
        # ValidatingAdmissionPolicy runs after PodSecurity (kube-apiserver's plugin order, pkg/kubeapiserver/options
        # plugins.go AllOrderedPlugins), on the defaulted pod, dry run or not
        admitted = {"apiVersion": "v1", "kind": "Pod", "metadata": dict(meta, namespace=namespace), "spec": pod["spec"]}
        self.admit(request, "CREATE", PODS, namespace, name, admitted, None)
        node_name = str(pod["spec"].get("nodeName") or "")
        request.summary["node"] = node_name
        with self.create_lock:
            if self._find_pod(namespace, name) is not None:
                raise ApiError(409, "AlreadyExists", 'pods "%s" already exists' % name, PODS.details(name))
            self.sequence += 1
            record = {"namespace": namespace, "name": name, "uid": str(uuid.uuid4()), "created": _iso(), "phase": "Pending",
                      "spec": pod["spec"], "seq": self.sequence}
            for field in ("labels", "annotations"):
                if meta.get(field):
                    record[field] = {str(k): str(v) for k, v in meta[field].items()}
            if pod["spec"].get("resourceClaims") and not dry_run and self.dra_served():
                with self.dra_lock:
                    self.dra_make_claims(record)
                    if not node_name:
                        node_name = self.dra_bind(record) or ""
                        request.summary["node"] = node_name
            on_node = bool(node_name) and self.store.exists(node_name)
            holder = {"name": node_name if on_node else ""}
            if not dry_run:
                with (self.store.locked(node_name) if on_node else self.store.locked_pending()) as box:
                    box["node"].setdefault("pods", []).append(record)
        obj = pod_object(holder, record)
        if dry_run:
            del obj["metadata"]["uid"]
            return Response(201, obj)
        return Response(201, self.versions.stamp("pods/%s/%s" % (namespace, name), obj))

    # -- Dynamic Resource Allocation: the resourceclaim controller, kube-scheduler for pods with claims, the GC
    def dra_served(self):
        return (DRA_GROUP, "v1") in self.groups()

    def dra_make_claims(self, record):
        """The resourceclaim controller's handlePod (pkg/controller/resourceclaim/controller.go, v1.34): for each
        spec.resourceClaims entry naming a resourceClaimTemplateName and not yet in status.resourceClaimStatuses, the
        claim it owns (found again by owner and pod-claim-name annotation, else made from the template), recorded as
        {name, resourceClaimName}. A template that is not there: nothing (the controller's error, retried later)."""
        done = {s.get("name") for s in record.get("resourceClaimStatuses") or []}
        entries = [e for e in (record.get("spec") or {}).get("resourceClaims") or []
                   if isinstance(e, dict) and e.get("resourceClaimTemplateName") and e.get("name") not in done]
        if not entries:
            return
        templates = {(t["metadata"].get("namespace"), t["metadata"]["name"]): t for t in self.objfiles.read("resourceclaimtemplates")}
        with self.objfiles.locked("resourceclaims") as box:
            claims = box["node"] if isinstance(box["node"], list) else []
            for entry in entries:
                mine = [c for c in claims if owning_pod(c) == (record["name"], record["uid"])
                        and ((c["metadata"].get("annotations") or {}).get(POD_CLAIM_ANNOTATION) == entry["name"])]
                if not mine:
                    template = templates.get((record["namespace"], entry["resourceClaimTemplateName"]))
                    if template is None:
                        record["claimError"] = 'resource claim template "%s": resourceclaimtemplate.resource.k8s.io "%s" not found' % (
                            entry["resourceClaimTemplateName"], entry["resourceClaimTemplateName"])
                        continue
                    mine = [claim_from_template(record, entry["name"], template)]
                    claims.append(mine[0])
                record.setdefault("resourceClaimStatuses", []).append({"name": entry["name"], "resourceClaimName": mine[0]["metadata"]["name"]})
                record.pop("claimError", None)
            box["node"] = claims

    def dra_bind(self, record):
        """kube-scheduler for a pod with claims and no node (dra_schedule): on success each claim it allocated gets
        status.allocation, every claim of the pod status.reservedFor [{resource: pods, name, uid}] (Reserve/PreBind),
        and the node's name is returned for the bind; else the record gets "unschedulable" (the PodScheduled False
        condition's message) and None."""
        nodes = [node_object(n) for n in self.store.nodes()]
        classes = {c["metadata"]["name"]: c for c in self.objfiles.read("deviceclasses")}
        slices = self.objfiles.read("resourceslices")
        try:
            node_name, results = dra_schedule(record, nodes, self.objfiles.read("resourceclaims"), classes, slices)
        except (Unschedulable, AllocationError) as exc:
            record["unschedulable"] = str(exc)
            record.setdefault("unschedulableSince", _iso())
            return None
        with self.objfiles.locked("resourceclaims") as box:
            claims = box["node"] if isinstance(box["node"], list) else []
            for claim in claims:
                if claim["metadata"].get("namespace") != record["namespace"] or claim["metadata"]["name"] not in results:
                    continue
                status = claim.setdefault("status", {})
                if results[claim["metadata"]["name"]] is not None:
                    status["allocation"] = allocation_for(node_name, results[claim["metadata"]["name"]])
                reserved = status.setdefault("reservedFor", [])
                if not any(r.get("uid") == record["uid"] for r in reserved):
                    reserved.append({"resource": "pods", "name": record["name"], "uid": record["uid"]})
            box["node"] = claims
        record["spec"]["nodeName"] = node_name
        record.pop("unschedulable", None)
        record.pop("unschedulableSince", None)
        record["scheduled"] = _iso()
        return node_name

    def dra_reconcile(self):
        """What the controllers do between requests, before pods or claims are served (the stand-in has no loops of
        its own): the garbage collector deletes a claim whose owning pod is gone (or was replaced: another uid); the
        resourceclaim controller's syncClaim drops reservedFor entries of pods that are gone or done, deallocates a
        claim it so left without consumers, and deletes such a claim when it was generated for a pod that is done;
        then handlePod again for pending pods with claims (a template may exist now) and the scheduler retries them
        (a claim freed, a node uncordoned), binding a pod that now fits to its node."""
        if not self.dra_served():
            return
        claims = self.objfiles.read("resourceclaims")
        pending = self.store.pending().get("pods") or []
        waiting = [p for p in pending if isinstance(p.get("spec"), dict) and p["spec"].get("resourceClaims") and not p["spec"].get("nodeName")
                   and not p.get("deletionTimestamp")]
        if not waiting and not any(owning_pod(c) or (c.get("status") or {}).get("reservedFor") for c in claims):
            return
        with self.dra_lock:
            pods = {}
            for node in self.store.nodes() + [self.store.pending()]:
                for pod in node.get("pods") or []:
                    pods[str(pod.get("uid") or pod_object(node, pod)["metadata"]["uid"])] = pod
            with self.objfiles.locked("resourceclaims") as box:
                kept = []
                for claim in box["node"] if isinstance(box["node"], list) else []:
                    owner = owning_pod(claim)
                    if owner is not None and owner[1] not in pods:
                        continue   # garbage collection: the owner is gone
                    status = claim.get("status") or {}
                    reserved = status.get("reservedFor") or []
                    valid = [r for r in reserved if r.get("resource") != "pods" or (r.get("uid") in pods and pods[r["uid"]].get("phase") not in
                                                                                    ("Succeeded", "Failed"))]
                    if len(valid) != len(reserved):
                        status["reservedFor"] = valid
                        if not valid:
                            status.pop("reservedFor", None)
                            status.pop("allocation", None)
                            if owner is not None:
                                continue   # generated for a pod that is done: deleted
                    kept.append(claim)
                box["node"] = kept
            if not waiting:
                return
            with self.store.locked_pending() as box:
                for record in list(box["node"].get("pods") or []):
                    if not any(record is p or record.get("uid") == p.get("uid") for p in waiting):
                        continue
                    self.dra_make_claims(record)
                    node_name = self.dra_bind(record)
                    if not node_name or not self.store.exists(node_name):
                        continue
                    with self.store.locked(node_name) as node_box:
                        node_box["node"].setdefault("pods", []).append(record)
                    box["node"]["pods"] = [p for p in box["node"]["pods"] if p is not record]

    def pod_log(self, request, namespace, name):
        request.summary = None
        node_name = self._find_pod(namespace, name)
        if node_name is None:
            raise not_found(PODS, name)
        record = self.store.read(node_name) if node_name else self.store.pending()
        pods = [p for p in (record or {}).get("pods") or [] if str(p.get("namespace")) == namespace and str(p.get("name")) == name]
        if not pods:
            raise not_found(PODS, name)
        pod = dict(pods[0])
        if not isinstance(pod.get("spec"), dict):  # a seed pod: its pause container prints nothing
            return Response(200, content_type="text/plain", text="")
        pod["spec"] = dict(pod["spec"], nodeName=node_name or pod["spec"].get("nodeName") or "")
        text = container_log(pod, bool(node_name), request.query.get("container", ""))
        return Response(200, content_type="text/plain", text=text)

    def _remove_pod(self, request, namespace, name, options, check):
        """Delete a pod from its node's record (after its deleteSeconds, when it has some); check(node, pod, dry_run) may refuse.
        dryRun=All, as a query parameter or in the DeleteOptions (kubectl drain --dry-run=server), changes nothing."""
        verb = request.summary["verb"]
        dry_run = request.query.get("dryRun") == "All" or "All" in (options.get("dryRun") or [])
        if dry_run:
            request.summary["dryRun"] = True
        node_name = self._find_pod(namespace, name)
        if node_name is None:
            raise not_found(PODS, name)
        request.summary["node"] = node_name
        with (self.store.locked(node_name) if node_name else self.store.locked_pending()) as box:
            node = box["node"]
            if node is None:
                raise not_found(PODS, name)
            finish_deletions(node)
            pods = node.get("pods") or []
            matches = [p for p in pods if str(p.get("namespace")) == namespace and str(p.get("name")) == name]
            if not matches:
                raise not_found(PODS, name)
            pod = matches[0]
            try:
                grace = check(node, pod, dry_run)
            except ApiError as e:
                refusal = e  # raised once the record is written back (a refusal may count down pdbRefusals)
            else:
                refusal = None
            if refusal is None and (dry_run or pod.get("deletionTimestamp")):
                return node, pod
            if refusal is None:
                return self._removed(node, pods, pod, namespace, name, grace, verb)
        raise refusal

    @staticmethod
    def _removed(node, pods, pod, namespace, name, grace, verb):
        """Take an accepted eviction or deletion into the node's record: the pod lingers deleteSeconds, or goes."""
        linger = float(pod.get("deleteSeconds") or 0) if grace is None else min(float(grace), float(pod.get("deleteSeconds") or 0))
        node.setdefault("evictions", []).append({"time": _iso(), "pods": ["%s/%s" % (namespace, name)], "via": verb})
        if linger > 0:
            pod["deletionTimestamp"] = _iso()
            pod["deletionGracePeriodSeconds"] = int(-(-linger // 1))
            pod["deleteAt"] = time.time() + linger
        else:
            node["pods"] = [p for p in pods if p is not pod]
        return copy.deepcopy(node), copy.deepcopy(pod)

    def evict(self, request, namespace, name):
        request.summary = {"verb": "evict", "pod": "%s/%s" % (namespace, name)}
        body = _json_body(request, "Eviction")
        if body is not None:
            if not isinstance(body, dict) or body.get("kind") not in (None, "Eviction"):
                raise bad_request("the body is not a policy/v1 Eviction")
            body_name = (body.get("metadata") or {}).get("name")
            if body_name not in (None, "", name):
                raise bad_request("name in URL does not match name in Eviction object")
        options = (body or {}).get("deleteOptions") or {}
        if not isinstance(options, dict):
            raise bad_request("deleteOptions is not DeleteOptions")
        eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace}}
        if options:
            eviction["deleteOptions"] = options
        self.admit(request, "CREATE", PODS, namespace, name, eviction, None, "pods/eviction")
        grace = options.get("gracePeriodSeconds")
        budgets = pdb_entries(self.store.nodes())

        def check(_node, pod, dry_run):
            if pod.get("pdb") and not pod.get("deletionTimestamp") and pod.get("phase") not in ("Succeeded", "Failed"):
                count = len(budgets.get((namespace, str(pod["pdb"])), [])) or 1
                request.summary["pdb"] = str(pod["pdb"])
                budget = str(pod["pdb"])
                # pdbRefusals: the budget refuses this many evictions, then allows them (another replica became
                # healthy meanwhile): kubectl drain's 5 s retry after a 429 then succeeds. A dry run counts nothing.
                if "pdbRefusals" in pod:
                    refusals = int(pod["pdbRefusals"] or 0)
                    if refusals <= 0:
                        return grace
                    if not dry_run:
                        pod["pdbRefusals"] = refusals - 1
                raise ApiError(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.", {
                    "causes": [{"reason": "DisruptionBudget", "message": "The disruption budget %s needs %d healthy pods and has %d currently"
                                % (budget, count, count)}]})
            return grace

        self._remove_pod(request, namespace, name, options, check)
        self.dra_reconcile()
        return Response(201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})

    def delete_pod(self, request, namespace, name):
        request.summary = {"verb": "delete", "pod": "%s/%s" % (namespace, name)}
        options = _json_body(request, "DeleteOptions") or {}
        if not isinstance(options, dict):
            raise bad_request("the body is not DeleteOptions")
        grace = options.get("gracePeriodSeconds", request.query.get("gracePeriodSeconds"))
        uid = (options.get("preconditions") or {}).get("uid")

        def check(node, pod, _dry_run):
            current = pod_object(node, pod)["metadata"]["uid"]
            if uid and uid != current:
                raise ApiError(409, "Conflict", "Operation cannot be fulfilled on Pod \"%s\": Precondition failed: UID in precondition: %s, "
                               "UID in object meta: %s" % (name, uid, current), PODS.details(name))
            return None if grace is None else float(grace)

        node, pod = self._remove_pod(request, namespace, name, options, check)
        self.dra_reconcile()   # the garbage collector: the claims the pod owned go with it
        return Response(200, self.versions.stamp("pods/%s/%s" % (namespace, name), pod_object(node, pod)))

    # -- objects stored through the API: namespaces, serviceaccounts, RBAC
    def _summary(self, request, verb, kind, namespace, name, dry_run=False):
        """The call log's summary of a write; True when it is a dry run (?dryRun=All, or the DeleteOptions')."""
        request.summary = {"verb": verb, kind.singular: "%s/%s" % (namespace, name) if kind.namespaced else name}
        dry_run = dry_run or request.query.get("dryRun") == "All"
        if dry_run:
            request.summary["dryRun"] = True
        return dry_run

    @staticmethod
    def _refuse_bootstrap(kind, name):
        if any(o["metadata"]["name"] == name for o in BOOTSTRAP.get(kind.plural, [])):
            raise ApiError(405, "MethodNotAllowed", "%s %s is bootstrap policy: the stand-in API server does not change or delete it"
                           % (kind.qualified, _q(name)), kind.details(name))

    def _change(self, kind, namespace, name, change, dry_run, missing_ok=False):
        """Read-modify-write of one stored object under objects/.<plural>.lock: change(current) gets the object as served
        (the stored record, or for a namespace the one the nodes imply; None when there is none and missing_ok, else
        404) and returns the record to store. (created, the object as served after)."""
        key = "%s/%s/%s" % (kind.plural, namespace or "", name)
        implied = None
        if kind is NAMESPACES:
            implied = next((o for o in namespace_objects(self.store.nodes(), self.store.declared("daemonsets")) if o["metadata"]["name"] == name),
                           None)
        with self.objfiles.locked(kind.plural) as box:
            records = box["node"] if isinstance(box["node"], list) else []
            index = find_record(records, namespace if kind.namespaced else None, name)
            current = copy.deepcopy(records[index]) if index is not None else implied
            if current is None and not missing_ok:
                raise not_found(kind, name)
            if current is not None:
                current = self.versions.stamp(key, current)
            record = change(current)
            if not dry_run:
                if index is None:
                    records.append(record)
                else:
                    records[index] = record
                box["node"] = records
        obj = copy.deepcopy(record)
        if dry_run:  # answered as if, without taking a resourceVersion
            if current is not None:
                obj["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            return current is None, obj
        return current is None, self.versions.stamp(key, obj)

    def create_object(self, request, kind, namespace):
        """POST of a Namespace, ServiceAccount, ClusterRole, ClusterRoleBinding, Role or RoleBinding: the namespace must
        exist (404), validation (422), AlreadyExists (409)."""
        body = _json_body(request, kind.kind)
        if not isinstance(body, dict) or body.get("kind") not in (None, "", kind.kind) or not isinstance(body.get("metadata") or {}, dict):
            raise bad_request("the body is not a %s %s" % (kind.api_version, kind.kind))
        meta = body.setdefault("metadata", {}) or {}
        if kind.namespaced and meta.get("namespace") not in (None, "", namespace):
            raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = str(meta["generateName"]) + uuid.uuid4().hex[:5]
        name = str(meta.get("name") or "")
        dry_run = self._summary(request, "create", kind, namespace, name)
        if kind.namespaced and namespace not in self.namespace_names():
            raise not_found(NAMESPACES, namespace)
        record = admit_object(kind, namespace, name, body, None)
        exists = ApiError(409, "AlreadyExists", "%s %s already exists" % (kind.qualified, _q(name)), kind.details(name))
        if any(o["metadata"]["name"] == name for o in BOOTSTRAP.get(kind.plural, [])):
            raise exists

        def change(current):
            if current is not None:
                raise exists
            return record

        obj = self._change(kind, namespace, name, change, dry_run, missing_ok=True)[1]
        return Response(201, obj)

    @staticmethod
    def _replacement(kind, namespace, name, after, current):
        """The record for an update or a patch's result: the name and namespace are the URL's (400), a
        metadata.resourceVersion is a precondition (409), then admission as for a create."""
        if not isinstance(after, dict) or after.get("kind") not in (None, "", kind.kind) or not isinstance(after.get("metadata") or {}, dict):
            raise bad_request("the object is not a %s %s" % (kind.api_version, kind.kind))
        meta = after.get("metadata") or {}
        if meta.get("name") not in (None, "", name):
            raise bad_request("the name of the object (%s) does not match the name on the URL (%s)" % (meta.get("name"), name))
        if kind.namespaced and meta.get("namespace") not in (None, "", namespace):
            raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
        version = meta.get("resourceVersion")
        if version not in (None, "") and str(version) != current["metadata"]["resourceVersion"]:
            raise conflict(kind, name)
        return admit_object(kind, namespace, name, after, current)

    def patch_object(self, request, kind, namespace, name):
        """PATCH: JSON, JSON merge and strategic merge patches (lists are replaced: rules and subjects have no patch
        strategy), and server-side apply (apply_object)."""
        content_type = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type == APPLY_PATCH:
            return self.apply_object(request, kind, namespace, name)
        if content_type not in PATCH_TYPES:
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types include: "
                           + ", ".join(PATCH_TYPES + (APPLY_PATCH,)), {})
        patch = _json_body(request, "patch")
        dry_run = self._summary(request, "patch", kind, namespace, name)
        request.summary["patchType"] = content_type.split("/")[1].split("-patch")[0]
        self._refuse_bootstrap(kind, name)

        def change(current):
            return self._replacement(kind, namespace, name, apply_patch(current, patch, content_type, kind.kind), current)

        return Response(200, self._change(kind, namespace, name, change, dry_run)[1])

    def update_object(self, request, kind, namespace, name):
        """PUT: the whole object (an absent one is 404)."""
        body = _json_body(request, kind.kind)
        dry_run = self._summary(request, "update", kind, namespace, name)
        self._refuse_bootstrap(kind, name)
        return Response(200, self._change(kind, namespace, name, lambda current: self._replacement(kind, namespace, name, body, current),
                                          dry_run)[1])

    def apply_object(self, request, kind, namespace, name):
        """Server-side apply (application/apply-patch+yaml; kubectl sends JSON, which is YAML): fieldManager is required
        (422); an absent object is created (201); else the applied metadata.labels and annotations are merged into the
        object's and its other applied fields (rules, subjects, roleRef, ...) replace the stored ones (200). No
        managedFields are kept, so there are never conflicts (--force-conflicts changes nothing)."""
        manager = request.query.get("fieldManager", "")
        dry_run = self._summary(request, "apply", kind, namespace, name)
        request.summary["fieldManager"] = manager
        if not manager:
            raise invalid_kind("meta.k8s.io", "PatchOptions", "", [("fieldManager", "Required value: is required for apply patch",
                                                                    "FieldValueRequired")])
        body = _json_body(request, "apply patch")
        if not isinstance(body, dict) or body.get("kind") not in (None, "", kind.kind) or not isinstance(body.get("metadata") or {}, dict):
            raise bad_request("the applied object is not a %s %s" % (kind.api_version, kind.kind))
        meta = body.get("metadata") or {}
        if meta.get("name") not in (None, "", name):
            raise bad_request("the name of the object (%s) does not match the name on the URL (%s)" % (meta.get("name"), name))
        if kind.namespaced and meta.get("namespace") not in (None, "", namespace):
            raise bad_request("the namespace of the provided object does not match the namespace sent on the request")
        self._refuse_bootstrap(kind, name)
        namespace_missing = kind.namespaced and namespace not in self.namespace_names()

        def change(current):
            if current is None:
                if namespace_missing:
                    raise not_found(NAMESPACES, namespace)
                return admit_object(kind, namespace, name, body, None)
            merged = copy.deepcopy(current)
            merged_meta = merged.setdefault("metadata", {})
            for field in ("labels", "annotations"):
                applied = _string_map(meta.get(field), field)
                if applied:
                    merged_meta[field] = dict(merged_meta.get(field) or {}, **applied)
            for field in OBJECT_FIELDS[kind.plural]:
                if field in body:
                    merged[field] = copy.deepcopy(body[field])
            return admit_object(kind, namespace, name, merged, current)

        created, obj = self._change(kind, namespace, name, change, dry_run, missing_ok=True)
        return Response(201 if created else 200, obj)

    def delete_object(self, request, kind, namespace, name):
        """DELETE: the record goes (a namespace with what is stored in it: its ServiceAccounts, Roles and RoleBindings);
        a Status Success, or for a namespace the Namespace, Terminating. default, kube-system and kube-public may not
        be deleted (403, the NamespaceLifecycle admission plugin's); nor may a namespace only the pods imply (405)."""
        options = _json_body(request, "DeleteOptions") or {}
        if not isinstance(options, dict):
            raise bad_request("the body is not DeleteOptions")
        dry_run = self._summary(request, "delete", kind, namespace, name, "All" in (options.get("dryRun") or []))
        self._refuse_bootstrap(kind, name)
        if kind is NAMESPACES and name in IMMORTAL_NAMESPACES:
            raise forbidden_error("", "namespaces", name, "this namespace may not be deleted")
        uid = (options.get("preconditions") or {}).get("uid")
        with self.objfiles.locked(kind.plural) as box:
            records = box["node"] if isinstance(box["node"], list) else []
            index = find_record(records, namespace if kind.namespaced else None, name)
            if index is None:
                if kind is NAMESPACES and name in self.namespace_names():
                    raise ApiError(405, "MethodNotAllowed", "namespaces %s holds pods the nodes run: the stand-in API server does not delete it"
                                   % _q(name), kind.details(name))
                raise not_found(kind, name)
            record = records[index]
            if uid and uid != record["metadata"].get("uid"):
                raise ApiError(409, "Conflict", "Operation cannot be fulfilled on %s %s: Precondition failed: UID in precondition: %s, UID in "
                               "object meta: %s" % (kind.qualified, _q(name), uid, record["metadata"].get("uid")), kind.details(name))
            if not dry_run:
                del records[index]
                box["node"] = records
        if kind is not NAMESPACES:
            return Response(200, success_status(kind, name, record["metadata"].get("uid")))
        if not dry_run:
            for plural in ("serviceaccounts", "roles", "rolebindings"):
                with self.objfiles.locked(plural) as box:
                    box["node"] = [r for r in box["node"] or [] if r["metadata"].get("namespace") != name]
        obj = copy.deepcopy(record)
        obj["metadata"]["resourceVersion"] = str(self.versions.bump())
        obj["metadata"]["deletionTimestamp"] = _iso()
        obj["status"] = {"phase": "Terminating"}
        return Response(200, obj)

    # -- TokenRequest, the self reviews
    def token_request(self, request, namespace, name):
        """POST .../serviceaccounts/NAME/token (TokenREST.Create, pkg/registry/core/serviceaccount/storage/token.go):
        the body's name and namespace must match (422), the ServiceAccount must exist (404), expirationSeconds
        (default 3600) at least 600 and at most 2^32 (422, ValidateTokenRequest); a random token, kept as its digest
        in auth/tokens.json."""
        request.summary = {"verb": "token", "serviceaccount": "%s/%s" % (namespace, name)}
        body = _json_body(request, "TokenRequest") or {}
        if not isinstance(body, dict) or body.get("kind") not in (None, "", "TokenRequest") or not isinstance(body.get("metadata") or {}, dict) \
                or not isinstance(body.get("spec") or {}, dict):
            raise bad_request("the body is not an authentication.k8s.io/v1 TokenRequest")
        meta, spec = body.get("metadata") or {}, body.get("spec") or {}
        for field, value, wanted in (("name", meta.get("name"), name), ("namespace", meta.get("namespace"), namespace)):
            if value not in (None, "") and value != wanted:
                raise invalid_kind("authentication.k8s.io", "TokenRequest", name, [
                    ("metadata." + field, "Invalid value: %s: must match the service account %s if specified" % (_q(value), field), "FieldValueInvalid")])
        records = self.objfiles.read("serviceaccounts")
        index = find_record(records, namespace, name)
        if index is None:
            raise not_found(SERVICEACCOUNTS, name)
        seconds = spec.get("expirationSeconds")
        if seconds is None:
            seconds = TOKEN_DEFAULT_SECONDS
        if isinstance(seconds, bool) or not isinstance(seconds, int):
            raise bad_request('TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot unmarshal %s into Go struct field '
                              "TokenRequestSpec.spec.expirationSeconds of type int64" % type(seconds).__name__)
        causes = []
        if seconds < TOKEN_MIN_SECONDS:
            causes.append(("spec.expirationSeconds", "Invalid value: %d: may not specify a duration less than 10 minutes" % seconds, "FieldValueInvalid"))
        if seconds > TOKEN_MAX_SECONDS:
            causes.append(("spec.expirationSeconds", "Invalid value: %d: may not specify a duration larger than 2^32 seconds" % seconds,
                           "FieldValueInvalid"))
        if causes:
            raise invalid_kind("authentication.k8s.io", "TokenRequest", "", causes)
        audiences = spec.get("audiences") or list(TOKEN_AUDIENCES)
        if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
            raise bad_request('TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot unmarshal into Go struct field '
                              "TokenRequestSpec.spec.audiences of type []string")
        bound = spec.get("boundObjectRef")
        if isinstance(bound, dict) and bound.get("kind") not in ("Pod", "Secret", "Node"):
            raise bad_request("cannot bind token to object of type %s, Kind=%s" % (bound.get("apiVersion", ""), bound.get("kind", "")))
        request.summary["expirationSeconds"] = seconds
        token, entry = self.tokens.issue(namespace, name, str(records[index]["metadata"].get("uid")), seconds, audiences)
        return Response(201, {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                              "metadata": {"name": name, "namespace": namespace, "creationTimestamp": _iso(entry["issued"])},
                              "spec": {"audiences": audiences, "expirationSeconds": seconds, "boundObjectRef": bound if isinstance(bound, dict) else None},
                              "status": {"token": token, "expirationTimestamp": _iso(entry["expires"])}})

    def review(self, request, kind):
        """POST of a SelfSubjectAccessReview (the caller's access, by the same authorizers as its requests), a
        SelfSubjectRulesReview (the rules RBAC grants it in a namespace) or a SelfSubjectReview (who it is): 201."""
        body = _json_body(request, kind.kind) or {}
        if not isinstance(body, dict) or body.get("kind") not in (None, "", kind.kind) or not isinstance(body.get("spec") or {}, dict):
            raise bad_request("the body is not a %s %s" % (kind.api_version, kind.kind))
        spec, user = body.get("spec") or {}, request.user
        doc = {"kind": kind.kind, "apiVersion": kind.api_version, "metadata": {"creationTimestamp": None}}
        if kind.plural == "subjectaccessreviews":
            # another user's access, asked by one allowed to create subjectaccessreviews (the request's own RBAC check
            # ran before): validation.ValidateSubjectAccessReviewSpec wants a user or a group
            if not spec.get("user") and not spec.get("groups"):
                raise invalid_kind("authorization.k8s.io", "SubjectAccessReview", "", [
                    ("spec.user", 'Invalid value: "": at least one of user or group must be specified', "FieldValueInvalid")])
            user = User(str(spec.get("user") or ""), [str(g) for g in spec.get("groups") or []], str(spec.get("uid") or ""),
                        spec.get("extra") if isinstance(spec.get("extra"), dict) else None)
        if kind.plural == "selfsubjectreviews":
            doc["status"] = {"userInfo": user.info()}
            return Response(201, doc)
        if kind.plural == "selfsubjectrulesreviews":
            namespace = str(spec.get("namespace") or "")
            if not namespace:
                raise bad_request("no namespace on request")
            resource_rules, non_resource_rules, error = self.rbac.rules_for(user, namespace)
            doc["spec"] = {"namespace": namespace}
            doc["status"] = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": False}
            if error:
                doc["status"]["evaluationError"] = error
            return Response(201, doc)
        resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        causes = []
        if resource is not None and non_resource is not None:
            shown = "authorization.NonResourceAttributes{Path:%s, Verb:%s}" % (_q((non_resource or {}).get("path", "")),
                                                                               _q((non_resource or {}).get("verb", "")))
            causes.append(("spec.nonResourceAttributes", "Invalid value: %s: cannot be specified in combination with resourceAttributes" % shown,
                           "FieldValueInvalid"))
        if resource is None and non_resource is None:
            causes.append(("spec.resourceAttributes", 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be '
                           "specified", "FieldValueInvalid"))
        if causes:
            raise invalid_kind("authorization.k8s.io", kind.kind, "", causes)
        if not isinstance(resource or non_resource, dict):
            raise bad_request("the body is not a %s %s" % (kind.api_version, kind.kind))
        if resource is not None:  # authorizationutil.ResourceAttributesFrom
            attrs = Attributes(user, str(resource.get("verb") or ""), "", True, str(resource.get("group") or ""), str(resource.get("version") or "*"),
                               str(resource.get("namespace") or ""), str(resource.get("resource") or ""), str(resource.get("subresource") or ""),
                               str(resource.get("name") or ""))
        else:
            attrs = Attributes(user, str(non_resource.get("verb") or ""), str(non_resource.get("path") or ""))
        allowed, reason = self.rbac.authorize(attrs)
        doc["spec"] = spec
        doc["status"] = {"allowed": allowed}
        if reason:
            doc["status"]["reason"] = reason
        return Response(201, doc)


# ---------------------------------------------------------------- protobuf request bodies
#
# kubectl's typed clients (auth can-i, auth whoami, create token, create namespace / serviceaccount / clusterrole /
# role / clusterrolebinding / rolebinding) send application/vnd.kubernetes.protobuf: the magic "k8s\0", then a
# runtime.Unknown {typeMeta {apiVersion, kind}, raw} whose raw is the object. The objects those commands send are
# decoded here, by their generated.proto field numbers; answers are JSON (the clients accept it).

PROTOBUF = "application/vnd.kubernetes.protobuf"
PROTO_MAGIC = b"k8s\x00"
_S = "string"
PROTO_MESSAGES = {
    "Unknown": {1: ("typeMeta", "TypeMeta"), 2: ("raw", "bytes")},
    "TypeMeta": {1: ("apiVersion", _S), 2: ("kind", _S)},
    "ObjectMeta": {1: ("name", _S), 2: ("generateName", _S), 3: ("namespace", _S), 5: ("uid", _S), 11: ("labels", "map"),
                   12: ("annotations", "map")},
    "StringEntry": {1: ("key", _S), 2: ("value", _S)},
    "Namespace": {1: ("metadata", "ObjectMeta"), 2: ("spec", "NamespaceSpec")},
    "NamespaceSpec": {1: ("finalizers", "repeated string")},
    "ServiceAccount": {1: ("metadata", "ObjectMeta"), 2: ("secrets", "repeated ObjectReference"), 3: ("automountServiceAccountToken", "bool"),
                       4: ("imagePullSecrets", "repeated LocalObjectReference")},
    "ObjectReference": {1: ("kind", _S), 2: ("namespace", _S), 3: ("name", _S), 4: ("uid", _S), 5: ("apiVersion", _S),
                        6: ("resourceVersion", _S), 7: ("fieldPath", _S)},
    "LocalObjectReference": {1: ("name", _S)},
    "ClusterRole": {1: ("metadata", "ObjectMeta"), 2: ("rules", "repeated PolicyRule"), 3: ("aggregationRule", "AggregationRule")},
    "Role": {1: ("metadata", "ObjectMeta"), 2: ("rules", "repeated PolicyRule")},
    "PolicyRule": {1: ("verbs", "repeated string"), 2: ("apiGroups", "repeated string"), 3: ("resources", "repeated string"),
                   4: ("resourceNames", "repeated string"), 5: ("nonResourceURLs", "repeated string")},
    "AggregationRule": {1: ("clusterRoleSelectors", "repeated LabelSelector")},
    "LabelSelector": {1: ("matchLabels", "map"), 2: ("matchExpressions", "repeated LabelSelectorRequirement")},
    "LabelSelectorRequirement": {1: ("key", _S), 2: ("operator", _S), 3: ("values", "repeated string")},
    "ClusterRoleBinding": {1: ("metadata", "ObjectMeta"), 2: ("subjects", "repeated Subject"), 3: ("roleRef", "RoleRef")},
    "RoleBinding": {1: ("metadata", "ObjectMeta"), 2: ("subjects", "repeated Subject"), 3: ("roleRef", "RoleRef")},
    "Subject": {1: ("kind", _S), 2: ("apiGroup", _S), 3: ("name", _S), 4: ("namespace", _S)},
    "RoleRef": {1: ("apiGroup", _S), 2: ("kind", _S), 3: ("name", _S)},
    "SelfSubjectAccessReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SelfSubjectAccessReviewSpec")},
    "SelfSubjectAccessReviewSpec": {1: ("resourceAttributes", "ResourceAttributes"), 2: ("nonResourceAttributes", "NonResourceAttributes")},
    "ResourceAttributes": {1: ("namespace", _S), 2: ("verb", _S), 3: ("group", _S), 4: ("version", _S), 5: ("resource", _S),
                           6: ("subresource", _S), 7: ("name", _S)},
    "NonResourceAttributes": {1: ("path", _S), 2: ("verb", _S)},
    "SelfSubjectRulesReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SelfSubjectRulesReviewSpec")},
    "SelfSubjectRulesReviewSpec": {1: ("namespace", _S)},
    "SelfSubjectReview": {1: ("metadata", "ObjectMeta")},
    "TokenRequest": {1: ("metadata", "ObjectMeta"), 2: ("spec", "TokenRequestSpec")},
    "TokenRequestSpec": {1: ("audiences", "repeated string"), 3: ("boundObjectRef", "BoundObjectReference"), 4: ("expirationSeconds", "int64")},
    "BoundObjectReference": {1: ("kind", _S), 2: ("apiVersion", _S), 3: ("name", _S), 4: ("uid", _S)},
}


# The kinds a protobuf body may carry (the other messages are their parts).
PROTO_OBJECTS = ("SelfSubjectAccessReview", "SelfSubjectRulesReview", "SelfSubjectReview", "TokenRequest", "Namespace", "ServiceAccount",
                 "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding")


def _varint(data, offset):
    value, shift = 0, 0
    while True:
        if offset >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[offset]
        offset += 1
        value |= (byte & 0x7f) << shift
        shift += 7
        if not byte & 0x80:
            return value, offset


def proto_decode(data, message):
    """A message of PROTO_MESSAGES as JSON would carry it (a present sub-message is a dict, even empty); fields not
    listed are skipped. ValueError when the bytes are not protobuf."""
    fields, out, offset = PROTO_MESSAGES[message], {}, 0
    while offset < len(data):
        key, offset = _varint(data, offset)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, offset = _varint(data, offset)
        elif wire == 2:
            size, offset = _varint(data, offset)
            if offset + size > len(data):
                raise ValueError("truncated field")
            value, offset = data[offset:offset + size], offset + size
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value, offset = data[offset:offset + size], offset + size
        else:
            raise ValueError("unsupported wire type %d" % wire)
        if number not in fields:
            continue
        name, kind = fields[number]
        if kind == "int64":
            out[name] = value - (1 << 64) if value >= 1 << 63 else value
        elif kind == "bool":
            out[name] = bool(value)
        elif kind == "bytes":
            out[name] = value
        elif kind == _S:
            out[name] = value.decode("utf-8")
        elif kind == "repeated string":
            out.setdefault(name, []).append(value.decode("utf-8"))
        elif kind == "map":  # map<string, string>: repeated {key = 1, value = 2}
            entry = proto_decode(value, "StringEntry")
            out.setdefault(name, {})[entry.get("key", "")] = entry.get("value", "")
        elif kind.startswith("repeated "):
            out.setdefault(name, []).append(proto_decode(value, kind[len("repeated "):]))
        else:
            out[name] = proto_decode(value, kind)
    return out


def decode_protobuf(body):
    """The object a protobuf body carries, as JSON would (kind and apiVersion from its envelope); 415 for the kinds this
    server does not decode."""
    unsupported = ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types include: "
                           "application/json, application/yaml, " + PROTOBUF, {})
    if not body.startswith(PROTO_MAGIC):
        raise unsupported
    try:
        envelope = proto_decode(body[len(PROTO_MAGIC):], "Unknown")
        kind = (envelope.get("typeMeta") or {}).get("kind", "")
        if kind not in PROTO_OBJECTS:
            raise unsupported
        obj = proto_decode(envelope.get("raw") or b"", kind)
    except (ValueError, UnicodeDecodeError) as exc:
        raise bad_request("error decoding protobuf: %s" % exc) from None
    obj.update(kind=kind, apiVersion=(envelope.get("typeMeta") or {}).get("apiVersion", ""))
    return obj


# ---------------------------------------------------------------- TLS (kubectl sends credentials over https only)
#
# client-go reads a kubeconfig's credentials only when the server is https (clientcmd's DirectClientConfig.ClientConfig:
# "only try to read the auth information if we are secure"), so the port speaks TLS as well as plain HTTP (the first
# byte of a connection tells them apart). The certificate is a self-signed ECDSA P-256 one made here with the
# standard library (no openssl): <tls dir>/tls.crt and tls.key (0600), made once and kept (default tls dir:
# <state dir>/auth).

_P256_P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffff
_P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551
_P256_G = (0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296,
           0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5)


def _ec_add(first, second):
    if first is None:
        return second
    if second is None:
        return first
    (x1, y1), (x2, y2) = first, second
    if x1 == x2 and (y1 + y2) % _P256_P == 0:
        return None
    if first == second:
        slope = (3 * x1 * x1 - 3) * pow(2 * y1, -1, _P256_P) % _P256_P
    else:
        slope = (y2 - y1) * pow(x2 - x1, -1, _P256_P) % _P256_P
    x3 = (slope * slope - x1 - x2) % _P256_P
    return x3, (slope * (x1 - x3) - y1) % _P256_P


def _ec_mul(scalar, point):
    result = None
    while scalar:
        if scalar & 1:
            result = _ec_add(result, point)
        point = _ec_add(point, point)
        scalar >>= 1
    return result


def _der(tag, content):
    size = len(content)
    if size < 0x80:
        return bytes([tag, size]) + content
    encoded = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(encoded)]) + encoded + content


def _der_int(value):
    return _der(0x02, value.to_bytes(value.bit_length() // 8 + 1, "big"))


def _der_oid(dotted):
    numbers = [int(n) for n in dotted.split(".")]
    body = bytes([numbers[0] * 40 + numbers[1]])
    for number in numbers[2:]:
        chunk = [number & 0x7f]
        number >>= 7
        while number:
            chunk.insert(0, 0x80 | (number & 0x7f))
            number >>= 7
        body += bytes(chunk)
    return _der(0x06, body)


def _der_seq(*items):
    return _der(0x30, b"".join(items))


def _der_time(epoch):
    moment = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc)
    if moment.year < 2050:
        return _der(0x17, moment.strftime("%y%m%d%H%M%SZ").encode())
    return _der(0x18, moment.strftime("%Y%m%d%H%M%SZ").encode())


def _pem(label, der):
    text = base64.b64encode(der).decode()
    return "-----BEGIN %s-----\n%s\n-----END %s-----\n" % (label, "\n".join(text[i:i + 64] for i in range(0, len(text), 64)), label)


def self_signed_certificate(names=("localhost",), addresses=("127.0.0.1", "::1"), days=3650):
    """(certificate PEM, EC private key PEM): a self-signed X.509 v3 certificate, ECDSA P-256 with SHA-256, CN
    kubeapi-standin, the names and addresses as subjectAltName, a CA (basicConstraints) so that it may be its own
    certificate-authority."""
    secret = secrets.randbelow(_P256_N - 1) + 1
    public = _ec_mul(secret, _P256_G)
    point = b"\x04" + public[0].to_bytes(32, "big") + public[1].to_bytes(32, "big")
    ecdsa_sha256 = _der_seq(_der_oid("1.2.840.10045.4.3.2"))
    name = _der_seq(_der(0x31, _der_seq(_der_oid("2.5.4.3"), _der(0x0c, b"kubeapi-standin"))))
    now = time.time()
    alt = b"".join([_der(0x82, n.encode()) for n in names]
                   + [_der(0x87, socket.inet_pton(socket.AF_INET6 if ":" in a else socket.AF_INET, a)) for a in addresses])
    extensions = _der_seq(_der_seq(_der_oid("2.5.29.17"), _der(0x04, _der_seq(alt))),
                          _der_seq(_der_oid("2.5.29.19"), _der(0x01, b"\xff"), _der(0x04, _der_seq(_der(0x01, b"\xff")))),
                          _der_seq(_der_oid("2.5.29.15"), _der(0x01, b"\xff"), _der(0x04, _der(0x03, b"\x02\x84"))))
    tbs = _der_seq(_der(0xa0, _der_int(2)), _der_int(secrets.randbits(120) | 1 << 120), ecdsa_sha256, name,
                   _der_seq(_der_time(now - 3600), _der_time(now + days * 86400)), name,
                   _der_seq(_der_seq(_der_oid("1.2.840.10045.2.1"), _der_oid("1.2.840.10045.3.1.7")), _der(0x03, b"\x00" + point)),
                   _der(0xa3, extensions))
    digest = int.from_bytes(hashlib.sha256(tbs).digest(), "big")
    while True:
        nonce = secrets.randbelow(_P256_N - 1) + 1
        r = _ec_mul(nonce, _P256_G)[0] % _P256_N
        s = pow(nonce, -1, _P256_N) * (digest + r * secret) % _P256_N
        if r and s:
            break
    certificate = _der_seq(tbs, ecdsa_sha256, _der(0x03, b"\x00" + _der_seq(_der_int(r), _der_int(s))))
    key = _der_seq(_der_int(1), _der(0x04, secret.to_bytes(32, "big")), _der(0xa0, _der_oid("1.2.840.10045.3.1.7")),
                   _der(0xa1, _der(0x03, b"\x00" + point)))
    return _pem("CERTIFICATE", certificate), _pem("EC PRIVATE KEY", key)


def tls_context(directory, address):
    """An ssl context serving <directory>/tls.crt and tls.key, made (under .tls.lock) when absent."""
    os.makedirs(directory, mode=0o700, exist_ok=True)
    cert_path, key_path = os.path.join(directory, "tls.crt"), os.path.join(directory, "tls.key")
    with open(os.path.join(directory, ".tls.lock"), "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (os.path.exists(cert_path) and os.path.exists(key_path)):
                addresses = ["127.0.0.1", "::1"]
                if address not in addresses and re.fullmatch(r"[0-9.]+|[0-9a-fA-F:]+", address or "") and address not in ("0.0.0.0", "::"):
                    addresses.append(address)
                certificate, key = self_signed_certificate(addresses=addresses)
                for path, text, mode in ((key_path, key, 0o600), (cert_path, certificate, 0o644)):
                    tmp = "%s.tmp.%d" % (path, os.getpid())
                    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "w", encoding="utf-8") as handle:
                        os.fchmod(handle.fileno(), mode)
                        handle.write(text)
                    os.replace(tmp, path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_path, key_path)
    return context


# ---------------------------------------------------------------- HTTP

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    close_connection = True  # the base class sets it per request (keep-alive with HTTP/1.1)
    server_version = "kubeapi-standin"
    sys_version = ""
    # TCP_NODELAY, as the API server's sockets have it (Go's net package: a TCPConn's "default is true (no delay)",
    # net/tcpsock.go SetNoDelay): without it the body written after the headers waited for the client's delayed ACK,
    # 40 ms a response - a kubectl create of 26 SelfSubjectAccessReviews took 1.2 s here, not the API server's tens of ms
    disable_nagle_algorithm = True

    def do_GET(self):
        self.serve("GET")

    def do_POST(self):
        self.serve("POST")

    def do_PUT(self):
        self.serve("PUT")

    def do_PATCH(self):
        self.serve("PATCH")

    def do_DELETE(self):
        self.serve("DELETE")

    def do_HEAD(self):
        self.serve("HEAD")

    def do_OPTIONS(self):
        self.serve("OPTIONS")

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        return

    def setup(self):
        """TLS or plain HTTP, as the connection's first byte says (22: a TLS handshake record); the handshake happens here,
        in the connection's thread. A connection that ends or fails its handshake is a ConnectionError (no traceback)."""
        context = getattr(self.server, "ssl_context", None)
        if context is not None:
            try:
                self.request.settimeout(60)
                first = self.request.recv(1, socket.MSG_PEEK)
                if not first:
                    raise ConnectionAbortedError("closed before a request")
                if first[0] == 0x16:
                    self.request = context.wrap_socket(self.request, server_side=True)
                self.request.settimeout(None)
            except (ssl.SSLError, OSError) as exc:
                raise ConnectionAbortedError(str(exc)) from None
        super().setup()

    def finish(self):
        try:
            super().finish()
        finally:
            if isinstance(self.request, ssl.SSLSocket):
                with contextlib.suppress(OSError):
                    self.request.close()

    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def serve(self, method):
        api = self.server.api
        url = urllib.parse.urlsplit(self.path)
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
        request = Request(method, url.path, query, self.headers, b"")
        try:
            request.body = self.read_body()
            response = api.handle(request)
        except ApiError as exc:
            response = Response(exc.code, exc.status())
        except Exception as exc:  # pylint: disable=broad-except
            traceback.print_exc()
            response = Response(500, ApiError(500, "InternalError", "Internal error occurred: %s" % exc, {}).status())
        api.record(request, response)
        try:
            if response.stream is not None:
                self.send_stream(response)
            else:
                self.send_document(response)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _headers(self, code, content_type):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Audit-Id", str(uuid.uuid4()))

    def send_document(self, response):
        data = response.text.encode() if response.text is not None else json.dumps(response.doc).encode()
        self._headers(response.code, response.content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def client_gone(self, timeout):
        """Waits up to timeout; True when the client has closed its end (kubectl wait ends, a context is cancelled)."""
        try:
            readable = select.select([self.connection], [], [], timeout)[0]
            if not readable:
                return False
            if isinstance(self.connection, ssl.SSLSocket):  # no MSG_PEEK through TLS: a watch's client sends nothing more
                self.connection.setblocking(False)
                try:
                    if self.connection.recv(1) == b"":
                        return True
                except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                    pass
                finally:
                    self.connection.setblocking(True)
            elif not self.connection.recv(1, socket.MSG_PEEK):
                return True
            time.sleep(timeout)
            return False
        except (OSError, ValueError):
            return True

    def send_stream(self, response):
        self._headers(200, "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        stream = response.stream
        try:
            for event in stream:
                if event is None:
                    if self.client_gone(POLL_SECONDS):
                        self.close_connection = True
                        return
                    continue
                data = (json.dumps(event) + "\n").encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True
        finally:
            stream.close()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    api = None
    ssl_context = None  # TLS beside plain HTTP on the same port (Handler.setup)

    def handle_error(self, request, client_address):
        """A client that went away (kubectl ends, a watch is cancelled) is no error worth a traceback."""
        if isinstance(sys.exc_info()[1], (ConnectionError, socket.timeout)):
            return
        super().handle_error(request, client_address)


class Server6(Server):
    address_family = socket.AF_INET6


# ---------------------------------------------------------------- commands

def kubeconfig(server, namespace=None, token=ADMIN_TOKEN):
    """A kubeconfig for kubectl: a bearer token (by default the admin's: system:admin in system:masters) over https with
    insecure-skip-tls-verify (the certificate is self-signed). An http:// server is written https://: the port speaks
    both, and kubectl sends a kubeconfig's credentials over https only."""
    if server.startswith("http://"):
        server = "https://" + server[len("http://"):]
    lines = ["apiVersion: v1", "kind: Config", "clusters:", "- name: default", "  cluster:", "    server: %s" % server,
             "    insecure-skip-tls-verify: true", "contexts:", "- name: default", "  context:", "    cluster: default", "    user: default"]
    if namespace:
        lines.append("    namespace: %s" % namespace)
    plain = re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]*", token) and token.lower() not in ("true", "false", "yes", "no", "on", "off", "null", "y", "n")
    lines += ["current-context: default", "preferences: {}", "users:", "- name: default", "  user:",
              "    token: %s" % (token if plain else json.dumps(token))]
    return "\n".join(lines) + "\n"


def _git_version(text):
    """--version: a gitVersion as a Kubernetes build names itself (v1.37.2, v1.37.2+rke2r1)."""
    if not re.match(r"^v\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]+)?$", text):
        raise argparse.ArgumentTypeError("not a Kubernetes gitVersion such as v1.37.2+rke2r1: %r" % text)
    return text


def serve(args):
    state_dir = args.state_dir or os.environ.get("KUBEAPI_STANDIN_STATE_DIR") or DEFAULT_STATE_DIR
    log_path = args.log or os.environ.get("KUBEAPI_STANDIN_LOG") or os.path.join(state_dir, "kubeapi.log")
    os.makedirs(os.path.join(state_dir, "nodes"), exist_ok=True)
    server = (Server6 if ":" in args.address else Server)((args.address, args.port), Handler)
    server.api = Api(state_dir, log_path, policies=not args.without_admission_policies)
    server.api.version = args.version
    global KUBELET_VERSION  # pylint: disable=global-statement  # one server per process: its Nodes' default
    KUBELET_VERSION = args.version
    server.ssl_context = tls_context(args.tls_dir or os.path.join(state_dir, "auth"), args.address)
    host, port = server.server_address[:2]
    server.api.address = ("[%s]:%d" if ":" in host else "%s:%d") % (host, port)
    stop = threading.Event()

    def stopping(_signum, _frame):
        stop.set()

    signal.signal(signal.SIGTERM, stopping)
    signal.signal(signal.SIGINT, stopping)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    url = "https://%s (and http)" % server.api.address
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    sys.stderr.write("kubeapi stand-in %s: serving %s for %s, log %s%s\n" % (args.version, url, state_dir, log_path,
                     "" if server.api.policies else ", without ValidatingAdmissionPolicy"))
    sys.stderr.flush()
    while not stop.wait(1):
        pass
    server.api.stopping.set()
    server.shutdown()
    server.server_close()
    sys.stderr.write("kubeapi stand-in: stopped\n")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="kubeapi", description="Stand-in for the Kubernetes API server (what kubectl needs)")
    commands = parser.add_subparsers(dest="command")
    serving = commands.add_parser("serve", help="serve the API over plain HTTP")
    serving.add_argument("--state-dir", help="the state folder shared with the rke2 stand-in (default $KUBEAPI_STANDIN_STATE_DIR or %s)"
                         % DEFAULT_STATE_DIR)
    serving.add_argument("--address", default="127.0.0.1")
    serving.add_argument("--port", type=int, default=6443, help="0 picks a free port")
    serving.add_argument("--port-file", help="write the port here once listening")
    serving.add_argument("--log", help="the call log (default <state dir>/kubeapi.log)")
    serving.add_argument("--without-admission-policies", action="store_true",
                         help="serve no admissionregistration.k8s.io (a cluster before Kubernetes 1.30); also without cel-python")
    serving.add_argument("--version", default=os.environ.get("KUBEAPI_STANDIN_VERSION") or VERSION, type=_git_version,
                         help="the version /version serves, and a Node's kubeletVersion where the rke2 stand-in wrote none "
                              "(default $KUBEAPI_STANDIN_VERSION or %s)" % VERSION)
    serving.add_argument("--tls-dir", help="where tls.crt and tls.key are (made when absent; default <state dir>/auth)")
    config = commands.add_parser("kubeconfig", help="print a kubeconfig for the server")
    config.add_argument("--server", required=True, help="e.g. http://127.0.0.1:6443")
    config.add_argument("--namespace")
    config.add_argument("--token", default=ADMIN_TOKEN, help="the user's bearer token (default: the admin's, %s)" % ADMIN_TOKEN)
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve(args)
    if args.command == "kubeconfig":
        sys.stdout.write(kubeconfig(args.server, args.namespace, args.token))
        return 0
    parser.print_usage(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
