# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The proof on the live cluster: what docs/ACCESS.md says the scoped identity may and may not do, tried as that
identity with server-side dry runs (controller side).

A SubjectAccessReview asks RBAC; it says nothing of admission. A server-side dry run (``kubectl --dry-run=server``,
``?dryRun=All``) goes through authentication, authorization and every admission plugin - ValidatingAdmissionPolicy
among them - and stores nothing (k8s.io/apiserver pkg/endpoints/handlers: create.go, patch.go and the eviction
subresource's storage, pkg/registry/core/pod/storage/eviction.go EvictionREST.Create, which runs createValidation
before it looks the pod up and deletes nothing with dryRun). So each escalation admission.ESCALATIONS lists, and the
other writes RBAC alone denies (the enrolment ConfigMap, another roll's Lease, evictions outside the drain
namespaces), must be answered Forbidden; each write a roll makes (its cordon and marker, our labels, kured's lock, an
eviction where the roll may evict, the Lease, a probe pod) must not be. A cluster that answers otherwise - a policy
removed or widened, a binding that grants more, an admission webhook that refuses a roll's own step - is named here,
with the request and the cluster's answer, before anything changes.

Names that do not exist make a trial cheaper, not weaker: an eviction of a pod that is not there is authorized and
admitted before the 404 (NotFound means allowed); a create of a Lease that exists is admitted before the 409.
"""

from __future__ import annotations

import collections
import json

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import admission, rbac
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kube_names import dns1123_label_errors, dns1123_subdomain_errors
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.maintainers import KURED_LOCK_ANNOTATION
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import PREFIX
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_markers import cordon_patch

DENIED, ALLOWED, UNTRIED = "denied", "allowed", "untried"
# kubectl clients that verify dry-run support in the server's OpenAPI v2 document first (resource.QueryParamVerifier)
# stop here when they cannot read it; the request never reached the server: the trial is not tried, said, not judged
_NO_OPENAPI = "failed to download openapi"
PROOF_POD = "rke2-numa-proof"            # a pod name nobody uses: the eviction trials' (NotFound after admission)
OTHER_LEASE = "rke2-numa-proof-other"    # another roll's Lease, as far as RBAC's resourceNames go
CORDONED = PREFIX + "cordoned"
Trial = collections.namedtuple("Trial", "what argv stdin expect policy")


class ProofError(ValueError):
    """Arguments the proof refuses before it runs anything."""


# where a create of each kind we try goes (a raw POST: kubectl create -f with --dry-run=server first asks the server's
# OpenAPI document whether the kind takes dryRun - kubectl pkg/cmd/create, resource.QueryParamVerifier - which older
# clients need the v2 document for; a raw POST with ?dryRun=All is the same request without that read)
_COLLECTIONS = {("v1", "Pod"): "/api/v1/namespaces/%s/pods", ("coordination.k8s.io/v1", "Lease"): "/apis/coordination.k8s.io/v1/namespaces/%s/leases"}


def _raw_create(stdin):
    """``create --raw COLLECTION -f -`` for the object in ``stdin`` (one of _COLLECTIONS)."""
    obj = json.loads(stdin)
    path = _COLLECTIONS[(obj.get("apiVersion"), obj.get("kind"))] % obj["metadata"]["namespace"]
    return ["create", "--raw", path, "-f", "-"]


def _dry(argv, stdin=None):
    """kubectl's words with the server-side dry run: ``--dry-run=server``, or ``?dryRun=All`` on a raw path (a create
    from stdin becomes a raw POST to its collection)."""
    argv = list(argv)
    if argv[:1] == ["create"] and "-f" in argv and "--raw" not in argv and stdin:
        argv = _raw_create(stdin)
    if "--raw" in argv:
        at = argv.index("--raw") + 1
        argv[at] += "?dryRun=All"
        return argv
    return argv + ["--dry-run=server"]


def _fill(text, names):
    for key, value in names.items():
        text = text.replace(key, value)
    return text


def _probe_pod(node, namespace):
    """A pod as the probes make them (restricted, no toleration, no device env), on ``node``."""
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": PROOF_POD, "namespace": namespace},
                       "spec": {"nodeName": node, "restartPolicy": "Never", "automountServiceAccountToken": False,
                                "securityContext": {"runAsNonRoot": True, "runAsUser": 65534, "seccompProfile": {"type": "RuntimeDefault"}},
                                "containers": [{"name": "probe", "image": "registry.k8s.io/pause:3.10",
                                                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}]}})


def _lease(namespace, name):
    return json.dumps({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name, "namespace": namespace},
                       "spec": {"holderIdentity": "", "leaseDurationSeconds": 120}})


def _eviction(namespace):
    return ("create", "--raw", "/api/v1/namespaces/%s/pods/%s/eviction" % (namespace, PROOF_POD), "-f", "-"), json.dumps(
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": PROOF_POD, "namespace": namespace}})


def errors(node, outside, access_namespace, probe_namespace, kured, lease, evict):
    """What is wrong with the proof's names (empty: fine); every name reaches kubectl as a name."""
    out = ["node %r: %s" % (node, e) for e in dns1123_subdomain_errors(node)]
    if outside:
        out += ["outside %r: %s" % (outside, e) for e in dns1123_subdomain_errors(outside)]
    for what, value in (("access namespace", access_namespace), ("probe namespace", probe_namespace)):
        out += ["%s %r: %s" % (what, value, e) for e in dns1123_label_errors(value)]
    out += rbac.manifest_errors(access_namespace, probe_namespace, kured or "", lease, evict)
    return out


def trials(node, outside="", access_namespace=rbac.IDENTITY_NAMESPACE, probe_namespace=rbac.PROBE_NAMESPACE, kured="",
           lease=rbac.LEASE_DEFAULT, evict=(), policies=True, prove=True, kured_exists=True, kured_lock=KURED_LOCK_ANNOTATION):
    """[Trial] for the live cluster: ``node`` an enrolled Node (the run's first), ``outside`` a Node that is not (a
    control plane; empty: those trials are left out), ``kured`` kured's DaemonSet ``namespace/name`` the identity may
    hold the lock of (empty: none), ``kured_exists`` whether it is there (a patch of a missing object is a 404 before
    admission: nothing proven), ``kured_lock`` the annotation key kured holds its lock under, ``policies`` whether the
    cluster serves ValidatingAdmissionPolicy (without, the escalations only a policy denies are RBAC's to allow:
    docs/ACCESS.md says so, and they are not tried)."""
    problems = errors(node, outside, access_namespace, probe_namespace, kured, lease, evict) + admission.lock_key_errors(kured_lock)
    if problems:
        raise ProofError("; ".join(problems))
    evict = rbac.drain_namespaces(evict)
    lease_ns, lease_name = rbac.lease_target(lease)
    kured_ns, kured_name = rbac.kured_target(kured) if kured else ("", "")
    names = {"{node}": node, "{outside}": outside, "{pod}": PROOF_POD, "{probe}": probe_namespace}
    out = []
    for e in admission.ESCALATIONS:
        if not policies or ("{outside}" in " ".join(e.argv) + (e.stdin or "") and not outside):
            continue
        if e.policy == "rke2-numa-kured" and not (kured and kured_exists):
            continue
        if e.policy == "rke2-numa-kured":   # kured's DaemonSet where it is (kube-system/kured in the table)
            argv = [kured_ns if a == "kube-system" else kured_name if a == "kured" else _fill(a, names) for a in e.argv]
        else:
            argv = [_fill(a, names) for a in e.argv]
        stdin = _fill(e.stdin, names) if e.stdin else None
        out.append(Trial(e.what, _dry(argv, stdin), stdin, DENIED, e.policy))
    # what RBAC alone denies
    out.append(Trial("add a Node to the enrolment (the ConfigMap %s)" % admission.ENROLMENT,
                     _dry(["patch", "configmap", admission.ENROLMENT, "--namespace", access_namespace, "--type=merge",
                           "--patch=" + json.dumps({"data": {"rke2-numa-proof": "enrolled"}})]), None, DENIED, None))
    out.append(Trial("take another roll's Lease", _dry(["patch", "lease", OTHER_LEASE, "--namespace", lease_ns, "--type=merge",
                                                        "--patch=" + json.dumps({"spec": {"holderIdentity": "rke2-numa-proof"}})]),
                     None, DENIED, None))
    if evict:
        elsewhere = next(n for n in ("default", "rke2-numa-proof-elsewhere") if n not in evict)
        argv, body = _eviction(elsewhere)
        out.append(Trial("evict a pod outside rke2_numa_drain_namespaces (namespace %s)" % elsewhere, _dry(argv), body, DENIED, None))
    # each step a roll makes
    out.append(Trial("cordon %s and mark it ours, in one patch" % node,
                     _dry(["patch", "node/" + node, "--type=merge", "--patch=" + cordon_patch("rke2-numa-proof", CORDONED)]),
                     None, ALLOWED, None))
    out.append(Trial("label %s with our labels" % node, _dry(["label", "node", node, PREFIX + "proof=true", "--overwrite"]), None, ALLOWED, None))
    argv, body = _eviction(evict[0] if evict else "default")
    out.append(Trial("evict a pod where the roll drains (namespace %s)" % (evict[0] if evict else "default"), _dry(argv), body, ALLOWED, None))
    out.append(Trial("write the roll's Lease %s/%s" % (lease_ns, lease_name), _dry(["create", "-f", "-"], _lease(lease_ns, lease_name)),
                     _lease(lease_ns, lease_name), ALLOWED, None))
    if kured and kured_exists:
        out.append(Trial("hold kured's lock (%s)" % kured_lock,
                         _dry(["annotate", "daemonset", kured_name, "--namespace", kured_ns, "--overwrite",
                               "%s=%s" % (kured_lock, json.dumps({"maxOwners": 1, "locks": []}, separators=(",", ":")))]),
                         None, ALLOWED, None))
    if prove:
        out.append(Trial("run a probe pod on %s" % node, _dry(["create", "-f", "-"], _probe_pod(node, probe_namespace)),
                         _probe_pod(node, probe_namespace), ALLOWED, None))
    return out


def _answer(rc, stdout, stderr):
    """The cluster's answer in one line: kubectl's error, or what it printed (an object a raw POST returned: its kind
    and name)."""
    if rc == 0 and not str(stderr or "").strip() and str(stdout or "").lstrip().startswith("{"):
        try:
            obj = json.loads(stdout)
            return "%s %s admitted (server dry run)" % (obj.get("kind"), (obj.get("metadata") or {}).get("name"))
        except (ValueError, AttributeError):
            pass
    text = (str(stderr or "").strip() or str(stdout or "").strip()).splitlines()
    return text[0][:400] if text else "(nothing printed, exit %s)" % rc


def outcome(rc, stdout, stderr):
    """DENIED (Forbidden: RBAC or admission), ALLOWED (done; or NotFound/AlreadyExists, which come after authorization
    and admission), or None (another error: nothing proven). kubectl cordon and uncordon print "error: unable to" and
    exit 0 when the API refuses (pkg/cmd/drain RunCordonOrUncordon)."""
    err = str(stderr or "")
    if _NO_OPENAPI in err:
        return UNTRIED
    if "(Forbidden)" in err or " is forbidden: " in err:
        return DENIED
    if rc == 0 and "error:" not in err:
        return ALLOWED
    if "(NotFound)" in err or "(AlreadyExists)" in err:
        return ALLOWED
    return None


def findings(tried, answers):
    """{findings: [what the cluster answered against the claim], untried: [trials kubectl could not send], results:
    [{what, expect, got, answer, command}]}. ``tried``: the trials; ``answers``: [(rc, stdout, stderr)] in their
    order. A trial with no clear answer (a 5xx, a connection refused) is a finding too: the claim is not proven. One the
    kubectl client would not send (it could not read the server's OpenAPI document to check dry-run support) is
    untried: said, not judged."""
    results, found, untried = [], [], []
    for trial, (rc, stdout, stderr) in zip(tried, answers):
        got = outcome(rc, stdout, stderr)
        answer = _answer(rc, stdout, stderr)
        command = "kubectl " + " ".join(trial.argv)
        results.append({"what": trial.what, "expect": trial.expect, "got": got or "unclear", "answer": answer, "command": command})
        if got == trial.expect:
            continue
        if got == UNTRIED:
            untried.append("%s (%s)" % (trial.what, answer))
            continue
        if got is None:
            found.append("the cluster gives no clear answer to the identity's attempt to %s (%s, a server-side dry run): %s - %s"
                         % (trial.what, command, answer, "docs/ACCESS.md says it is denied" if trial.expect == DENIED
                            else "a roll makes this request"))
        elif trial.expect == DENIED:
            found.append("the cluster allows the identity to %s (%s, a server-side dry run): %s - docs/ACCESS.md says it is denied%s"
                         % (trial.what, command, answer, " by the policy %s" % trial.policy if trial.policy else ""))
        else:
            found.append("the cluster denies the identity's %s (%s, a server-side dry run): %s - a roll makes this request"
                         % (trial.what, command, answer))
    return {"findings": found, "untried": untried, "results": results}
