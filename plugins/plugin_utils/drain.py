# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is the node drained? Decided from the API after the drain, not from the drain's exit code (controller side).

``kubectl drain --pod-selector`` evicts only the pods it selects and exits 0; pods it never touched keep
running. The kubelet reset stops rke2-agent (KillMode=process: the pods go on running) and deletes the CPU
and Memory Manager checkpoints under them, which corrupts their pinning. What may stay on a node whose
kubelet state is reset: DaemonSet pods (kubectl drain --ignore-daemonsets leaves them; the kubelet
re-admits them) and mirror pods of static pods (``kubernetes.io/config.mirror``; the kubelet owns them),
and pods that have ended (Succeeded or Failed).
"""

from __future__ import annotations

import re

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


def _controller_kind(pod):
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref.get("kind")
    return None


def pods_left(pods, node_name):
    """The pods on ``node_name`` that a kubelet reset must not run under: ["ns/name (kind)", ...], sorted."""
    left = []
    for pod in pods or []:
        meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
        if spec.get("nodeName") != node_name or status.get("phase") in ("Succeeded", "Failed"):
            continue
        kind = _controller_kind(pod)
        if kind == "DaemonSet" or MIRROR_ANNOTATION in (meta.get("annotations") or {}):
            continue
        left.append("%s/%s (%s)" % (meta.get("namespace"), meta.get("name"), kind or "no controller"))
    return sorted(left)


def pods_drain_evicts(pods, node_name):
    """The pods of ``node_name`` ``kubectl drain --ignore-daemonsets --delete-emptydir-data`` would evict: ["ns/name"],
    sorted. kubectl's filters (k8s.io/kubectl pkg/drain/filters.go): DaemonSet pods are left (daemonSetFilter, with
    --ignore-daemonsets), mirror pods are left (mirrorPodFilter); every other pod is evicted - emptyDir ones
    (localStorageFilter, with --delete-emptydir-data) and finished ones too ("any finished pod can be removed": a
    Succeeded or Failed pod passes unreplicatedFilter and localStorageFilter). ``pods``: what the list of the node's pods
    returned (the --pod-selector already applied by the API, as kubectl's own list does)."""
    out = []
    for pod in pods or []:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        if spec.get("nodeName") != node_name or _controller_kind(pod) == "DaemonSet" or MIRROR_ANNOTATION in (meta.get("annotations") or {}):
            continue
        out.append("%s/%s" % (meta.get("namespace"), meta.get("name")))
    return sorted(out)


def protected_evictions(pods, node_name, protected, allowed=()):
    """The pods the drain of ``node_name`` would evict that the roll may not: in ``protected`` namespaces (the cluster's
    own: kube-system) or, with ``allowed`` (rke2_numa_drain_namespaces) named, outside them - ["ns/name (Succeeded)",
    ...]. kubectl evicts them alongside every other pod of the node and the identity's RBAC or policy refuses them - the
    drain would fail with the node's workloads moved for nothing - and a roll never evicts the cluster's own pods with
    any kubeconfig: the node is refused before its cordon."""
    phases = {"%s/%s" % ((p.get("metadata") or {}).get("namespace"), (p.get("metadata") or {}).get("name")):
              (p.get("status") or {}).get("phase") or "Pending" for p in pods or []}
    return ["%s (%s)" % (name, phases[name]) for name in pods_drain_evicts(pods, node_name)
            if name.split("/", 1)[0] in protected or (allowed and name.split("/", 1)[0] not in allowed)]


# kubectl drain's own words (k8s.io/kubectl pkg/drain/drain.go, pkg/cmd/drain/drain.go; checked against the real
# kubectl and the API stand-in in tests/unit/plugins/plugin_utils/test_drain.py).
_EVICTING = re.compile(r'^evicting pod ([^/\s]+)/(\S+)$')                      # stdout, at each attempt
_EVICTED = re.compile(r'^pod/(\S+) (?:evicted|deleted)$')                       # stdout, once the pod is gone
_RETRY = re.compile(r'error when evicting pods/"([^"]+)" -n "([^"]+)" \(will retry after \d+s\): ([^\n]*)')
_EVICT_ERROR = re.compile(r'error when evicting pods/"([^"]+)" -n "([^"]+)": (.*?)(?=, error when |, continuing command|\]?$)', re.M)
_TERMINATE = re.compile(r'error when waiting for pod "([^"]+)" in namespace "([^"]+)" to terminate: (.*?)'
                        r'(?=, error when |, continuing command|\]?$)', re.M)
# 1.27+: "cannot delete Pods that declare no controller"; older: "Pods not managed by ReplicationController, ...".
_UNMANAGED = re.compile(r'cannot delete Pods (?:that declare no controller |not managed by [^(]*)\(use --force to override\): '
                        r'((?:[^\s,/]+/[^\s,]+)(?:, [^\s,/]+/[^\s,]+)*)')
_LAST_ERROR = re.compile(r'^(?:error: )?(.*)$')


def _lines(text):
    return [line.strip() for line in str(text or "").splitlines() if line.strip()]


def evicted_pods(stdout, not_evicted=()):
    """The pods ("ns/name", sorted) kubectl drain's output says it evicted (or deleted): gone from the node.

    ``pod/NAME evicted`` carries no namespace: it is taken from the ``evicting pod NS/NAME`` lines. When pods of
    the same name in several namespaces were tried, a namespace counts only as often as the name was evicted, and
    never for a pod in ``not_evicted`` (named by an error of the drain): ambiguous leftovers read ``?/NAME``."""
    out = _lines(stdout)
    namespaces, count = {}, {}
    for line in out:
        m = _EVICTING.match(line)
        if m and m.group(1) not in namespaces.setdefault(m.group(2), []):
            namespaces[m.group(2)].append(m.group(1))
        m = _EVICTED.match(line)
        if m:
            count[m.group(1)] = count.get(m.group(1), 0) + 1
    evicted = set()
    for name, times in count.items():
        candidates = [ns for ns in namespaces.get(name, []) if "%s/%s" % (ns, name) not in set(not_evicted)]
        if candidates and len(candidates) <= times:
            evicted.update("%s/%s" % (ns, name) for ns in candidates)
        else:  # no evicting line, or more namespaces than evictions: which one is not known
            evicted.add("?/%s" % name)
    return sorted(evicted)


def drain_failure(stdout, stderr):
    """What a failed ``kubectl drain`` did and what stopped it, from its own output.

    Returns {"evicted": ["ns/name"], "terminating": [{"pod", "why"}], "blocked": [{"pod", "why"}], "error": str}:
    the pods it evicted (gone), those whose eviction was accepted but that were still terminating when it gave
    up, the pods it could not evict with kubectl's reason, and its last error line. A pod refused with a 429 (its
    PodDisruptionBudget) and evicted on a later retry is evicted, not a blocker."""
    err = str(stderr or "")
    named = set("%s/%s" % (m.group(2), m.group(1)) for m in _EVICT_ERROR.finditer(err)) \
        | set("%s/%s" % (m.group(2), m.group(1)) for m in _TERMINATE.finditer(err))
    evicted = set(evicted_pods(stdout, named))
    refused = set("%s/%s" % (m.group(2), m.group(1)) for m in _RETRY.finditer(err))
    blocked, terminating = {}, {}
    for m in _TERMINATE.finditer(err):
        terminating.setdefault("%s/%s" % (m.group(2), m.group(1)), m.group(3).strip())
    for m in _EVICT_ERROR.finditer(err):
        pod, why = "%s/%s" % (m.group(2), m.group(1)), m.group(3).strip()
        if pod in terminating:
            continue
        if pod in refused and "global timeout reached" in why:
            why = "its PodDisruptionBudget refused the eviction until the drain timed out, %s" % why
        blocked.setdefault(pod, why)
    for m in _UNMANAGED.finditer(err):
        for pod in m.group(1).split(", "):
            blocked.setdefault(pod, "no controller: kubectl drain removes such a pod only with --force, which this collection "
                                    "never passes (the pod would be gone for good)")
    errors = _lines(err)
    last = _LAST_ERROR.match(errors[-1]).group(1) if errors else ""
    return {"evicted": sorted(evicted - set(terminating)),
            "terminating": [{"pod": p, "why": terminating[p]} for p in sorted(terminating)],
            "blocked": [{"pod": p, "why": blocked[p]} for p in sorted(blocked)], "error": last}


def drain_failure_message(node_name, stdout, stderr, admin_cordon, fallback=""):
    """The drain role's failure message: the pods that stopped the drain and why, and what it did before (the pods
    it evicted, those still terminating) - "nothing on the node was changed" only when it evicted nothing."""
    found = drain_failure(stdout, stderr)
    cordon = "left cordoned: an admin had cordoned it" if admin_cordon else "uncordoned again"
    moved = found["evicted"] or found["terminating"]
    parts = []
    if found["blocked"]:
        parts.append("blocked by " + "; ".join("%s - %s" % (b["pod"], b["why"]) for b in found["blocked"]))
    if found["terminating"]:
        parts.append("still terminating when the drain timed out: " + "; ".join(
            "%s - %s" % (t["pod"], t["why"]) for t in found["terminating"]))
    if not parts:
        parts.append(found["error"] or fallback or "kubectl drain failed")
    if found["evicted"]:
        parts.append("evicted before it stopped: %s (rescheduled elsewhere)" % ", ".join(found["evicted"]))
    if moved:
        parts.append("the node's files and the kubelet were not touched")
        return "drain of %s failed (%s): %s" % (node_name, cordon, "; ".join(parts))
    return "drain of %s failed, nothing on the node was changed (%s): %s" % (node_name, cordon, "; ".join(parts))
