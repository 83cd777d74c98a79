# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Least privilege: the API rights the collection's kubectl calls need, the identity that holds exactly those,
and what the API server says a kubeconfig may do (controller side).

Two facts live here, each once:

- ``RULES``: every right the collection uses, with where it applies (the whole cluster, the probe namespace,
  kured's DaemonSet) and, per verb, which playbooks need it. ``manifest()`` renders them as a ServiceAccount, a
  ClusterRole, namespaced Roles and their bindings (``files/rbac/rke2-numa.yaml`` is that rendering with the
  defaults); ``playbooks/access.yml`` applies it.
- ``access_reviews()`` / ``access_findings()``: one SelfSubjectAccessReview per right a playbook needs, plus one
  for everything (``kubectl auth can-i '*' '*'``), sent in one ``kubectl create``; the answer names each
  missing right and the calls that need it, before anything changes.

The API requests each kubectl call makes are plugin_utils/kubectl.py's (``VERBS``, ``call_requests``).
tests/unit/plugins/plugin_utils/test_rbac.py collects every kubectl call of the roles and playbooks and fails when one
is not covered by ``RULES``, or a rule is used by none (access.yml's calls with the admin kubeconfig declare their
requests too; the identity is not asked to hold them).

RBAC semantics (k8s.io/kubernetes pkg/apis/rbac/v1/evaluation_helpers.go, plugin/pkg/auth/authorizer/rbac):
rules are additive; a rule matches a request when its apiGroups, resources (``resource/subresource``) and verbs
contain the request's or ``*``; a rule with resourceNames matches only a request that names one of them (never a
list or a create); a RoleBinding grants its rules only in its own namespace. ``allowed()`` evaluates a manifest
that way, for the tests and ``access_findings``' wording.
"""

from __future__ import annotations

import collections
import json
import re
import urllib.parse

from ansible_collections.maitred.rke2_numa.plugins.module_utils.kubeconfig_file import MARK as KUBECONFIG_MARK
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kube_names import dns1123_label_errors, dns1123_subdomain_errors
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import specs
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubectl import DRA_GROUP
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.maintainers import AUTO, KURED_DEFAULT
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.values import as_integer, show

NAME = "rke2-numa"                      # the ServiceAccount, the ClusterRole and the bindings
IDENTITY_NAMESPACE = specs.default("rke2_numa_access_namespace")   # the ServiceAccount's namespace (nothing runs there)
PROBE_NAMESPACE = specs.default("rke2_numa_probe_namespace")
MANAGED_BY = "maitred.rke2_numa"
FIELD_MANAGER = "maitred.rke2_numa"
# Namespaces that hold other people's pods: the probe's create/delete rights never go there.
SHARED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# The probe pod meets the restricted Pod Security Standard (plugin_utils/prove.py: non-root, no privilege
# escalation, every capability dropped, RuntimeDefault seccomp); its namespace enforces exactly that.
PROBE_POD_SECURITY = {"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "restricted",
                      "pod-security.kubernetes.io/audit": "restricted"}
TOKEN_SECONDS_MIN = 600                  # the API server refuses a TokenRequest under 10 minutes
TOKEN_SECONDS_MAX = 7 * 24 * 3600        # ours: a bound token for a maintenance window, never "forever"
ADMIN_KUBECONFIG = specs.default("rke2_numa_admin_kubeconfig")   # RKE2's admin kubeconfig on a server (cluster-admin)
_DURATION = re.compile(r"(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?")

CLUSTER, PROBE, KURED, LEASE, EVICT = "cluster", "probe", "kured", "lease", "evict"
# EVICT: cluster-wide (the ClusterRole) while rke2_numa_drain_namespaces is empty; else a RoleBinding of the ClusterRole
# rke2-numa-evict in each namespace named - RBAC's only narrowing of evictions (an Eviction names only its pod)
DRAIN_NAMESPACES_MAX = 100
LEASE_DEFAULT = (IDENTITY_NAMESPACE, "rke2-numa-roll")   # the roll's Lease (plugin_utils/roll_lease.py), namespace/name
CHECK, ROLLING, LABELS, PROVE = "check", "rolling", "labels", "prove"


class Rule(collections.namedtuple("Rule", "scope group resource uses why optional")):
    """A right: ``uses`` pairs each verb with the playbooks whose calls need it; ``optional``: a run without it goes on
    without what it reads (said once), never refused - a right added in a release that an identity access.yml made
    before does not hold."""

    def __new__(cls, scope, group, resource, uses, why, optional=False):
        return super(Rule, cls).__new__(cls, scope, group, resource, uses, why, optional)

    @property
    def verbs(self):
        return tuple(verb for verb, dummy in self.uses)


_ALL = (CHECK, ROLLING, LABELS)   # labels and rolling import check.yml
_READERS = _ALL + (PROVE,)         # prove.yml reads the Lease too: no probe on a Node a roll in progress holds
# Every right the collection uses (kubectl.VERBS says which call needs which; rolling runs the drain,
# labels and prove roles; the test collects the calls each playbook reaches).
RULES = (
    Rule(CLUSTER, "", "nodes", (("get", (ROLLING, LABELS)), ("list", _READERS), ("watch", (ROLLING,)), ("patch", (ROLLING, LABELS))),
         "read the Nodes; cordon, uncordon, drain, label and annotate them; wait for Ready"),
    Rule(CLUSTER, "", "pods", (("get", (ROLLING,)), ("list", _READERS)),
         "audit the pods, plan the capacity, see the upgrades and the pods a drain leaves, and whether a pod holds a "
         "node's GPUs before it is probed"),
    Rule(EVICT, "", "pods/eviction", (("create", (ROLLING,)),),
         "evict the workload pods (kubectl drain, PodDisruptionBudgets respected)"),
    Rule(CLUSTER, "apps", "daemonsets", (("get", (ROLLING,)), ("list", (ROLLING,))),
         "read kured's lock; kubectl drain --ignore-daemonsets checks each pod's DaemonSet"),
    Rule(PROBE, "", "pods", tuple((verb, (ROLLING, PROVE)) for verb in ("create", "delete", "get", "list", "watch")),
         "create the probe pods, read them, delete them (and wait for it)"),
    Rule(PROBE, "", "pods/log", (("get", (ROLLING, PROVE)),),
         "read what each probe printed"),
    Rule(KURED, "apps", "daemonsets", (("patch", (ROLLING,)),),
         "hold and give back kured's reboot lock (its DaemonSet only)"),
    # create cannot be narrowed to a name (RBAC: a create request has none); get and update only on the roll's Lease
    Rule(LEASE, "coordination.k8s.io", "leases", (("create", (ROLLING,)), ("get", _READERS), ("update", (ROLLING,))),
         "take, renew and give back the roll's Lease (one roll at a time), and see which roll holds it"),
    Rule(LEASE, "", "namespaces", (("get", _READERS),),
         "kubectl get --ignore-not-found looks up the Lease's namespace when there is no Lease yet (its own namespace only)"),
    # Dynamic Resource Allocation (resource.k8s.io/v1): the check's one read of both kinds (plugin_utils/dra.py)
    Rule(CLUSTER, DRA_GROUP, "resourceslices", (("list", _ALL),),
         "see which GPUs, NICs and CPUs each node serves by DRA, and on which NUMA node", optional=True),
    Rule(CLUSTER, DRA_GROUP, "resourceclaims", (("list", _ALL),),
         "see the devices each pod holds by DRA, and whether its claim keeps them on one NUMA node", optional=True),
    # the DRA probes (a node planned with dra-driver-cpu, plugin_utils/prove.py dra_probe_pods): a claim template each,
    # deleted without waiting (a template has no finalizer; kubectl delete reads each named object first); the claims
    # made from them go with their pods
    Rule(PROBE, DRA_GROUP, "resourceclaimtemplates", (("create", (ROLLING, PROVE)), ("delete", (ROLLING, PROVE)), ("get", (ROLLING, PROVE))),
         "create and delete the DRA probes' claim templates (the plan's, under dra-driver-cpu)", optional=True),
)
LEASE_NAMED_VERBS = ("get", "update")


# ---------------------------------------------------------------- the identity

def _meta(name, namespace=None, labels=None):
    meta = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = dict({"app.kubernetes.io/name": NAME, "app.kubernetes.io/managed-by": MANAGED_BY}, **(labels or {}))
    return meta


def _rule(rule, names=None):
    out = {"apiGroups": [rule.group], "resources": [rule.resource], "verbs": list(rule.verbs)}
    if names:
        out["resourceNames"] = list(names)
    return out


def _binding(kind, name, namespace, role_kind, sa_namespace):
    """The binding ``name`` of the role (or ClusterRole) of the same name to the ServiceAccount sa_namespace/NAME."""
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": _meta(name, namespace),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": sa_namespace}]}


def _role(kind, name, namespace, rules):
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": _meta(name, namespace), "rules": rules}


def kured_target(setting):
    """(namespace, name) of the kured DaemonSet whose lock the roll may hold, or None (kured not checked)."""
    if not setting:
        return None
    if setting == AUTO:
        return KURED_DEFAULT
    namespace, _sep, name = str(setting).partition("/")
    return namespace, name


def lease_target(lease):
    """(namespace, name) of the roll's Lease from ``namespace/name`` (or a pair)."""
    if isinstance(lease, (list, tuple)):
        return tuple(lease)
    namespace, _sep, name = str(lease or "").partition("/")
    return namespace, name


def drain_namespaces(value):
    """The namespaces named by rke2_numa_drain_namespaces, sorted and once each ([]: evictions cluster-wide);
    ValueError naming what is wrong."""
    errors = drain_namespace_errors(value)
    if errors:
        raise ValueError("; ".join(errors))
    return sorted(set(value or []))


def drain_namespace_errors(value):
    """What is wrong with rke2_numa_drain_namespaces (empty: fine): a list of at most DRAIN_NAMESPACES_MAX namespaces,
    none of the cluster's own (kube-*: kube-system's pods are never evicted)."""
    if value in (None, ""):
        return []
    if not isinstance(value, (list, tuple)):
        return ["rke2_numa_drain_namespaces %s must be a list of namespaces" % show(value)]
    errors = ["rke2_numa_drain_namespaces has %d namespaces: at most %d" % (len(value), DRAIN_NAMESPACES_MAX)] if len(value) > DRAIN_NAMESPACES_MAX else []
    for name in value:
        errors += ["rke2_numa_drain_namespaces entry %s: %s" % (show(name), e) for e in dns1123_label_errors(name)]
        if isinstance(name, str) and name.startswith("kube-"):
            errors.append("rke2_numa_drain_namespaces entry %s: the cluster's own namespace - a roll never evicts its pods" % show(name))
    return errors


def manifest_errors(namespace=IDENTITY_NAMESPACE, probe_namespace=PROBE_NAMESPACE, kured=AUTO, lease=LEASE_DEFAULT, evict=()):
    """What is wrong with the names the identity would get (empty: fine), in the API server's words."""
    errors = drain_namespace_errors(evict)
    for what, value in (("rke2_numa_access_namespace", namespace), ("rke2_numa_probe_namespace", probe_namespace)):
        errors += ["%s %r: %s" % (what, value, e) for e in dns1123_label_errors(value)]
    if probe_namespace in SHARED_NAMESPACES or str(probe_namespace).startswith("kube-"):
        errors.append("rke2_numa_probe_namespace %r holds other pods: the identity may create and delete any pod of the "
                      "probe namespace, so it must be one of its own (e.g. %s)" % (probe_namespace, PROBE_NAMESPACE))
    if probe_namespace == namespace:
        errors.append("rke2_numa_probe_namespace and rke2_numa_access_namespace must differ (%r)" % namespace)
    target = kured_target(kured)
    if target is not None:
        ns, name = target
        if dns1123_label_errors(ns) or dns1123_subdomain_errors(name):
            errors.append("rke2_numa_kured_daemonset %r is not namespace/name, auto or empty" % (kured,))
    lease_ns, lease_name = lease_target(lease)
    if dns1123_label_errors(lease_ns) or dns1123_subdomain_errors(lease_name):
        errors.append("the roll's Lease %r is not namespace/name (rke2_numa_roll_lease_namespace, rke2_numa_roll_lease_name)" % ("/".join(
            lease_target(lease)),))
    elif lease_ns == probe_namespace:
        errors.append("rke2_numa_roll_lease_namespace must not be the probe namespace (%r)" % probe_namespace)
    return errors


def manifest(namespace=IDENTITY_NAMESPACE, probe_namespace=PROBE_NAMESPACE, kured=AUTO, lease=LEASE_DEFAULT, evict=()):
    """The objects that give the ServiceAccount ``namespace``/rke2-numa exactly ``RULES``, in the order to apply them:
    its Namespace, the ServiceAccount, the ClusterRole and its binding, the probe Namespace (restricted Pod Security)
    with its Role and RoleBinding, the roll's Lease rights (create in its namespace; get and update on its name)
    with their RoleBinding, (kured checked) a Role on kured's DaemonSet alone with its RoleBinding, and (``evict``:
    rke2_numa_drain_namespaces named) the ClusterRole rke2-numa-evict with a RoleBinding in each of them - else the
    evictions are the ClusterRole's."""
    errors = manifest_errors(namespace, probe_namespace, kured, lease, evict)
    if errors:
        raise ValueError("; ".join(errors))
    evict = drain_namespaces(evict)
    cluster = [_rule(r) for r in RULES if r.scope == CLUSTER or (r.scope == EVICT and not evict)]
    probe = [_rule(r) for r in RULES if r.scope == PROBE]
    objects = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(namespace)},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(NAME, namespace), "automountServiceAccountToken": False},
        _role("ClusterRole", NAME, None, cluster), _binding("ClusterRoleBinding", NAME, None, "ClusterRole", namespace),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(probe_namespace, labels=PROBE_POD_SECURITY)},
        _role("Role", NAME + "-probe", probe_namespace, probe), _binding("RoleBinding", NAME + "-probe", probe_namespace, "Role", namespace),
    ]
    lease_ns, lease_name = lease_target(lease)
    if lease_ns not in (namespace, probe_namespace):
        objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(lease_ns)})
    lease_rules = []
    for rule in (r for r in RULES if r.scope == LEASE):
        unnamed = tuple(v for v in rule.verbs if v not in LEASE_NAMED_VERBS)
        named = tuple(v for v in rule.verbs if v in LEASE_NAMED_VERBS)
        if unnamed:
            lease_rules.append(dict(_rule(rule), verbs=list(unnamed)))
        if named:
            lease_rules.append(dict(_rule(rule, [_rule_name(rule, named[0], None, (lease_ns, lease_name))]), verbs=list(named)))
    objects += [_role("Role", NAME + "-roll-lease", lease_ns, lease_rules), _binding("RoleBinding", NAME + "-roll-lease", lease_ns, "Role", namespace)]
    target = kured_target(kured)
    if target is not None:
        ns, name = target
        objects += [_role("Role", NAME + "-kured-lock", ns, [_rule(r, [name]) for r in RULES if r.scope == KURED]),
                    _binding("RoleBinding", NAME + "-kured-lock", ns, "Role", namespace)]
    if evict:
        objects.append(_role("ClusterRole", NAME + "-evict", None, [_rule(r) for r in RULES if r.scope == EVICT]))
        objects += [_binding("RoleBinding", NAME + "-evict", ns, "ClusterRole", namespace) for ns in evict]
    return objects


def token_seconds(value):
    """(seconds, None) of a token lifetime - seconds, or a duration like ``8h``, ``90m``, ``1d12h`` - bounded to
    10 minutes (the API server's floor) .. 7 days; (None, message) otherwise."""
    seconds = as_integer(value)
    if seconds is None and isinstance(value, str) and value.strip() and len(value) <= 40:
        match = _DURATION.fullmatch(value.strip())
        if match and any(match.groups()):
            d, h, m, s = (int(g or 0) for g in match.groups())
            seconds = ((d * 24 + h) * 60 + m) * 60 + s
    if seconds is None or not TOKEN_SECONDS_MIN <= seconds <= TOKEN_SECONDS_MAX:
        return None, ("rke2_numa_access_token_duration %s must be from 10m to 7d (seconds, or a duration such as 8h or 90m): "
                      "the token is for a maintenance window, not forever" % show(value))
    return seconds, None


def identity(namespace=IDENTITY_NAMESPACE):
    """The user name the API server gives the ServiceAccount's tokens."""
    return "system:serviceaccount:%s:%s" % (namespace, NAME)


# ---------------------------------------------------------------- RBAC, as the API server evaluates it

def _has(values, value):
    return "*" in values or value in values


def _rule_allows(rule, verb, group, resource, name):
    resources = rule.get("resources") or []
    if not (_has(rule.get("verbs") or [], verb) and _has(rule.get("apiGroups") or [], group)):
        return False
    if not (_has(resources, resource) or ("/" in resource and "*/" + resource.split("/", 1)[1] in resources)):
        return False
    names = rule.get("resourceNames") or []
    return not names or (name is not None and name in names)


def _subject_is(subject, user, groups):
    kind = subject.get("kind")
    if kind == "ServiceAccount":
        return user == "system:serviceaccount:%s:%s" % (subject.get("namespace"), subject.get("name"))
    if kind == "User":
        return subject.get("name") == user
    return kind == "Group" and subject.get("name") in groups


def allowed(objects, user, verb, group, resource, namespace=None, name=None):
    """Whether the RBAC objects let ``user`` (a ServiceAccount user name) do ``verb`` on group/resource (with
    its subresource) in ``namespace`` (None: a cluster-scoped object, or a request across every namespace)."""
    sa_ns = user.split(":")[2] if user.startswith("system:serviceaccount:") else None
    groups = ["system:authenticated"] + (["system:serviceaccounts", "system:serviceaccounts:" + sa_ns] if sa_ns else [])
    roles = {(o["kind"], (o["metadata"].get("namespace") or ""), o["metadata"]["name"]): o.get("rules") or []
             for o in objects if o.get("kind") in ("ClusterRole", "Role")}
    for binding in objects:
        kind = binding.get("kind")
        if kind not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        where = binding["metadata"].get("namespace") if kind == "RoleBinding" else None
        if where is not None and where != namespace:
            continue
        if not any(_subject_is(s, user, groups) for s in binding.get("subjects") or []):
            continue
        ref = binding.get("roleRef") or {}
        rules = roles.get((ref.get("kind"), (where or "") if ref.get("kind") == "Role" else "", ref.get("name")), [])
        if any(_rule_allows(r, verb, group, resource, name) for r in rules):
            return True
    return False


# ---------------------------------------------------------------- what a kubeconfig may do

def _rule_namespace(rule, probe_namespace, kured, lease):
    if rule.scope == PROBE:
        return probe_namespace
    if rule.scope == KURED:
        return kured[0]
    if rule.scope == LEASE:
        return lease[0]
    return None


def _rule_name(rule, verb, kured, lease):
    if rule.scope == KURED:
        return kured[1]
    if rule.scope == LEASE and verb in LEASE_NAMED_VERBS:
        return lease[0] if rule.resource == "namespaces" else lease[1]
    return None


def needed(playbook, probe_namespace=PROBE_NAMESPACE, kured_setting=AUTO, prove=True, labels_via="kubectl", lease=LEASE_DEFAULT,
           evict=()):
    """[{verb, group, resource, subresource, namespace, name, why, required}] the playbook's calls need (a roll
    without probes, ``prove`` false, needs no probe rights; labels.yml without ``kubectl`` labels gets no Node by name:
    it lists them, and patches one only to remove what an earlier run wrote with kubectl; the evictions cluster-wide,
    or in each of ``evict``, the drain namespaces).
    kured's lock is not required: without it the roll still refuses a node while kured holds its lock; nor is an
    ``optional`` rule's right (the DRA reads: the check goes on without them)."""
    out = []
    kured = kured_target(kured_setting)
    evict = drain_namespaces(evict)
    for rule in RULES:
        if (rule.scope == KURED and kured is None) or (rule.scope == PROBE and playbook == ROLLING and not prove):
            continue
        resource, _sep, sub = rule.resource.partition("/")
        for verb, playbooks in rule.uses:
            if playbook not in playbooks or (playbook == LABELS and labels_via != "kubectl" and (rule.scope, verb) == (CLUSTER, "get")):
                continue
            for where in (evict or [None]) if rule.scope == EVICT else [_rule_namespace(rule, probe_namespace, kured, lease_target(lease))]:
                out.append({"verb": verb, "group": rule.group, "resource": resource, "subresource": sub, "scope": rule.scope,
                            "namespace": where, "name": _rule_name(rule, verb, kured, lease_target(lease)), "why": rule.why,
                            "required": rule.scope != KURED and not rule.optional})
    return out


EVERYTHING = {"verb": "*", "group": "*", "resource": "*", "subresource": "", "namespace": None, "name": None,
              "why": "everything (cluster-admin)", "required": False}


def _review(need):
    attributes = {"verb": need["verb"], "group": need["group"], "resource": need["resource"]}
    for key in ("subresource", "namespace", "name"):
        if need.get(key):
            attributes[key] = need[key]
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {"resourceAttributes": attributes}}


def access_reviews(playbook, probe_namespace=PROBE_NAMESPACE, kured_setting=AUTO, prove=True, labels_via="kubectl", lease=LEASE_DEFAULT,
                   evict=()):
    """A v1 List of SelfSubjectAccessReviews (``kubectl create -f - -o json``): everything first (does the
    kubeconfig hold cluster-admin?), then one per right the playbook needs."""
    return {"apiVersion": "v1", "kind": "List",
            "items": [_review(n) for n in [EVERYTHING] + needed(playbook, probe_namespace, kured_setting, prove, labels_via, lease, evict)]}


def _describe(need):
    what = need["resource"] + ("/" + need["subresource"] if need.get("subresource") else "")
    group = " (API group %s)" % need["group"] if need["group"] else ""
    if need.get("name"):
        what = "%s %s" % (what, need["name"])
    where = "in namespace %s" % need["namespace"] if need.get("namespace") else "cluster-wide"
    return "may not %s %s%s %s (needed to %s)" % (need["verb"], what, group, where, need["why"])


def kubectl_objects(text):
    """The objects kubectl printed with ``-o json``: one object, a List, or (``kubectl create`` of several objects)
    one JSON document after another. Returns a v1 List; ValueError when the text is not that."""
    decoder = json.JSONDecoder()
    docs, at, text = [], 0, str(text or "")
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            break
        doc, at = decoder.raw_decode(text, at)
        docs.append(doc)
    items = []
    for doc in docs:
        if not isinstance(doc, dict):
            raise ValueError("not a Kubernetes object: %r" % (doc,))
        items += doc.get("items") or [] if doc.get("kind", "").endswith("List") and "items" in doc else [doc]
    return {"apiVersion": "v1", "kind": "List", "items": items}


def access_findings(reply, playbook, probe_namespace=PROBE_NAMESPACE, kured_setting=AUTO, prove=True, labels_via="kubectl",
                    lease=LEASE_DEFAULT, evict=()):
    """{everything, missing, optional_missing, unreadable}: from the reply to ``access_reviews`` (the created
    reviews, a List or one object). ``missing`` names each required right the API refused, with what needs it."""
    items = (reply or {}).get("items") if isinstance(reply, dict) and "items" in reply else [reply] if reply else []
    needs = [EVERYTHING] + needed(playbook, probe_namespace, kured_setting, prove, labels_via, lease, evict)
    if len(items) != len(needs) or any(not isinstance(i, dict) or "status" not in i for i in items):
        return {"everything": False, "missing": [], "optional_missing": [], "unreadable": True}
    answers = [bool((i.get("status") or {}).get("allowed")) for i in items]
    return {"everything": answers[0],
            "missing": [_describe(n) for n, ok in zip(needs[1:], answers[1:]) if not ok and n["required"]],
            "optional_missing": [_describe(n) for n, ok in zip(needs[1:], answers[1:]) if not ok and not n["required"]],
            "unreadable": False}


# ---------------------------------------------------------------- rights the identity must never hold

# (verb, group, resource, subresource, namespace or None for cluster-wide, what it would let a holder do). access.yml
# asks the API server (SubjectAccessReviews for the ServiceAccount, with the admin kubeconfig, before any token
# exists) and refuses when one is allowed, whatever grants it: another binding, an aggregated role, a group binding.
FORBIDDEN = (
    ("list", "", "secrets", "", None, "read every Secret of the cluster"),
    ("get", "", "secrets", "", "kube-system", "read kube-system's Secrets"),
    ("create", "", "pods", "exec", None, "run commands in any pod"),
    ("create", "", "pods", "exec", "kube-system", "run commands in kube-system's pods"),
    ("delete", "", "pods", "", "kube-system", "delete kube-system's pods"),
    ("delete", "", "pods", "", "default", "delete pods outside the probe namespace"),
    ("create", "", "pods", "", "kube-system", "run pods in kube-system"),
    ("create", "", "serviceaccounts", "token", None, "mint tokens for any ServiceAccount"),
    ("create", "", "serviceaccounts", "token", "kube-system", "mint tokens for kube-system's ServiceAccounts"),
    ("delete", "", "nodes", "", None, "delete Nodes"),
    ("update", "", "nodes", "", None, "replace Nodes whole"),
    ("patch", "apps", "daemonsets", "", None, "change any DaemonSet's pod template"),
    ("escalate", "rbac.authorization.k8s.io", "clusterroles", "", None, "grant itself rights it does not hold"),
    ("bind", "rbac.authorization.k8s.io", "clusterroles", "", None, "bind any ClusterRole"),
    ("create", "rbac.authorization.k8s.io", "clusterrolebindings", "", None, "bind roles cluster-wide"),
    ("impersonate", "", "users", "", None, "act as any user"),
    ("impersonate", "", "serviceaccounts", "", None, "act as any ServiceAccount"),
)


def _forbidden(evict=()):
    """FORBIDDEN, and with drain namespaces named the evictions everywhere else (a cluster-wide review: allowed only
    by a ClusterRoleBinding)."""
    return FORBIDDEN + ((("create", "", "pods", "eviction", None, "evict pods in every namespace (rke2_numa_drain_namespaces names where)"),)
                        if drain_namespaces(evict) else ())


def service_account_groups(namespace=IDENTITY_NAMESPACE):
    """The groups the API server gives a ServiceAccount's tokens (serviceaccount.MakeGroupNames, plus authenticated)."""
    return ["system:serviceaccounts", "system:serviceaccounts:%s" % namespace, "system:authenticated"]


def _subject_needs(probe_namespace, kured_setting, lease, evict=()):
    """Everything, each right of _forbidden (which the identity must not hold), then each right a roll needs."""
    forbidden = [{"verb": v, "group": g, "resource": r, "subresource": sub, "namespace": ns, "name": None, "why": why, "required": False}
                 for v, g, r, sub, ns, why in _forbidden(evict)]
    return [EVERYTHING] + forbidden + needed(ROLLING, probe_namespace, kured_setting, True, "kubectl", lease, evict)


def subject_reviews(namespace=IDENTITY_NAMESPACE, probe_namespace=PROBE_NAMESPACE, kured_setting=AUTO, lease=LEASE_DEFAULT, evict=()):
    """A v1 List of SubjectAccessReviews for the ServiceAccount, asked with the admin kubeconfig before any token
    exists: everything first, then each right of FORBIDDEN, then each right a roll needs."""
    user, groups = identity(namespace), service_account_groups(namespace)
    items = []
    for need in _subject_needs(probe_namespace, kured_setting, lease, evict):
        review = _review(need)
        review["kind"] = "SubjectAccessReview"
        review["spec"].update(user=user, groups=groups)
        items.append(review)
    return {"apiVersion": "v1", "kind": "List", "items": items}


def subject_findings(reply, namespace=IDENTITY_NAMESPACE, probe_namespace=PROBE_NAMESPACE, kured_setting=AUTO, lease=LEASE_DEFAULT,
                     evict=()):
    """{unreadable, everything, forbidden: [what it may do that it must not], missing: [what a roll needs that it may
    not do], optional_missing} from the answers to subject_reviews (the same arguments)."""
    items = (reply or {}).get("items") if isinstance(reply, dict) and "items" in reply else [reply] if reply else []
    needs = _subject_needs(probe_namespace, kured_setting, lease, evict)
    if len(items) != len(needs) or any(not isinstance(i, dict) or "status" not in i for i in items):
        return {"unreadable": True, "everything": False, "forbidden": [], "missing": [], "optional_missing": []}
    allowed = [(i.get("status") or {}).get("allowed") is True for i in items]
    bad = len(_forbidden(evict)) + 1
    return {"unreadable": False, "everything": allowed[0],
            "forbidden": [_describe(n).replace("may not ", "may ", 1).replace(" (needed to ", " (it could ", 1)
                          for n, ok in zip(needs[1:bad], allowed[1:bad]) if ok],
            "missing": [_describe(n) for n, ok in zip(needs[bad:], allowed[bad:]) if not ok and n["required"]],
            "optional_missing": [_describe(n) for n, ok in zip(needs[bad:], allowed[bad:]) if not ok and not n["required"]]}


def _names_us(subject, namespace):
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "ServiceAccount":
        return name == NAME and subject.get("namespace") == namespace
    return kind == "User" and name == identity(namespace)


def binding_findings(reply, wanted, namespace=IDENTITY_NAMESPACE):
    """From ``kubectl get clusterrolebindings,rolebindings -A -o json``: {foreign: [refusals], leftovers: [objects]}.
    ``foreign``: each binding that is not one of ``wanted`` (the manifest's) and names our ServiceAccount (or its
    user name) - its role's rights would be the identity's. ``leftovers``: our own RoleBindings of it (our label) that
    the manifest no longer has (a probe namespace left behind): [{kind, namespace, name}] to delete, with their Roles;
    ``summary``: a line for each."""
    items = (reply or {}).get("items") if isinstance(reply, dict) else None
    if not isinstance(items, list):
        return {"unreadable": True, "foreign": [], "leftovers": [], "summary": []}
    mine = {_key(o) for o in wanted}
    foreign, leftovers = [], []
    for item in items:
        if not isinstance(item, dict) or item.get("kind") not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        key, meta = _key(item), item.get("metadata") or {}
        if key in mine:
            continue
        if not any(isinstance(s, dict) and _names_us(s, namespace) for s in item.get("subjects") or []):
            continue
        role = item.get("roleRef") or {}
        ours = (meta.get("labels") or {}).get("app.kubernetes.io/managed-by") == MANAGED_BY
        if ours and item["kind"] == "RoleBinding":
            leftovers.append({"kind": "RoleBinding", "namespace": meta.get("namespace"), "name": meta.get("name")})
            if role.get("kind") == "Role" and role.get("name"):
                leftovers.append({"kind": "Role", "namespace": meta.get("namespace"), "name": role["name"]})
        else:
            where = "%s %s" % (item["kind"], "/".join(x for x in (meta.get("namespace"), meta.get("name")) if x))
            foreign.append("%s binds the ServiceAccount %s/%s to %s %s: its rights would be the identity's; remove it (or the "
                           "subject) and run again" % (where, namespace, NAME, role.get("kind") or "a role", role.get("name")))
    return {"unreadable": False, "foreign": foreign, "leftovers": leftovers,
            "summary": ["delete %s %s/%s (a namespace the identity no longer uses)" % (o["kind"], o["namespace"], o["name"]) for o in leftovers]}


# ---------------------------------------------------------------- access.yml

_KEYS = ("kind", "namespace", "name")


def _key(obj):
    meta = obj.get("metadata") or {}
    return obj.get("kind"), meta.get("namespace"), meta.get("name")


def _norm_rules(rules):
    out = []
    for rule in rules or []:
        out.append({k: sorted(rule.get(k) or []) for k in ("apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs")})
    return sorted(out, key=repr)


def _contains(have, want):
    """``have`` holds everything ``want`` says (the API server adds defaults to a spec: they are not a difference)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(_contains(have.get(k), v) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(have, list) and len(have) == len(want) and all(_contains(h, w) for h, w in zip(have, want))
    return have == want


def _differs(current, wanted):
    """The fields of ``wanted`` that ``current`` does not have as we want them."""
    out = []
    labels = (current.get("metadata") or {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in wanted["metadata"].get("labels", {}).items()):
        out.append("labels")
    if "rules" in wanted and _norm_rules(current.get("rules")) != _norm_rules(wanted["rules"]):
        out.append("rules")
    if "subjects" in wanted and sorted(map(repr, current.get("subjects") or [])) != sorted(map(repr, wanted["subjects"])):
        out.append("subjects")
    if "automountServiceAccountToken" in wanted and current.get("automountServiceAccountToken") != wanted["automountServiceAccountToken"]:
        out.append("automountServiceAccountToken")
    for field in ("spec", "data"):   # the admission policies, their bindings and the enrolment ConfigMap
        if field in wanted and not (_contains(current.get(field), wanted[field]) if field == "spec" else current.get(field) == wanted[field]):
            out.append(field)
    return out


def identity_changes(current, wanted):
    """What ``kubectl apply`` of the manifest ``wanted`` would change, from ``kubectl get -f - -o json
    --ignore-not-found`` (a List, one object, or nothing): {changes: [{kind, namespace, name, action, fields}],
    refused: [reasons], summary: ["create Namespace rke2-numa-probe", "update ClusterRole rke2-numa (rules)"]}.
    Refused (nothing is applied): an object of that name that is not ours (no
    ``app.kubernetes.io/managed-by: maitred.rke2_numa`` label: we never take over another tool's object), and a
    binding whose roleRef differs (the API server cannot change it)."""
    if isinstance(current, dict) and current.get("kind") == "List" or isinstance(current, dict) and "items" in current:
        found = current.get("items") or []
    elif isinstance(current, dict) and current.get("kind"):
        found = [current]
    else:
        found = []
    by_key = {_key(o): o for o in found if isinstance(o, dict)}
    changes, refused = [], []
    for obj in wanted:
        key = _key(obj)
        where = "%s %s" % (key[0], "/".join(k for k in key[1:] if k))
        have = by_key.get(key)
        if have is None:
            changes.append(dict(zip(_KEYS, key), action="create", fields=[]))
            continue
        labels = (have.get("metadata") or {}).get("labels") or {}
        if labels.get("app.kubernetes.io/managed-by") != MANAGED_BY:
            refused.append("%s exists and is not ours (no label app.kubernetes.io/managed-by=%s): it is left alone; "
                           "remove it, or choose other names (rke2_numa_access_namespace, rke2_numa_probe_namespace)" % (where, MANAGED_BY))
            continue
        if "roleRef" in obj and have.get("roleRef") != obj["roleRef"]:
            refused.append("%s refers to another role (%s): the API server cannot change a roleRef; delete it and run again"
                           % (where, (have.get("roleRef") or {}).get("name")))
            continue
        if have.get("aggregationRule") and not obj.get("aggregationRule"):
            refused.append("%s has an aggregationRule nobody here wrote: the API server would add the rules of every ClusterRole it "
                           "selects; remove it (kubectl edit) and run again" % where)
            continue
        fields = _differs(have, obj)
        changes.append(dict(zip(_KEYS, key), action="update" if fields else "none", fields=fields))
    summary = ["%s %s %s%s" % (c["action"], c["kind"], "/".join(x for x in (c["namespace"], c["name"]) if x),
                               " (%s)" % ", ".join(c["fields"]) if c["fields"] else "") for c in changes if c["action"] != "none"]
    return {"changes": changes, "refused": refused, "summary": summary}


_CLUSTER_KEYS = ("server", "certificate-authority-data", "tls-server-name", "insecure-skip-tls-verify", "proxy-url")


def _admin_cluster(view):
    clusters = (view or {}).get("clusters") if isinstance(view, dict) else None
    if not isinstance(clusters, list) or len(clusters) != 1 or not isinstance((clusters[0] or {}).get("cluster"), dict):
        raise ValueError("the admin kubeconfig's current context names no cluster")
    return clusters[0]["cluster"]


def server_url_refusal(url, what="rke2_numa_access_server"):
    """Why ``url`` is no address a token may go to ("" when it is): an https URL, no user, query or fragment, at most
    2048 characters. ``what``: how the message names it. The inputs check and server_refusal both ask here."""
    shown = "%s %s" % (what, show(url))
    if not isinstance(url, str):
        return "%s is not a URL" % shown
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return "%s is not a URL" % shown
    if (parts.scheme != "https" or not parts.hostname or parts.username is not None or parts.password is not None or parts.query
            or parts.fragment or any(c.isspace() or c in "\x00\\" for c in url) or len(url) > 2048 or port == 0):
        return "%s must be an https URL (https://HOST[:PORT][/PATH], no user, query or fragment): a token goes nowhere else" % shown
    return ""


def server_refusal(view, server=None, ca_given=False):
    """Why the scoped kubeconfig's token must not be sent to ``server`` ("" when it may): the admin kubeconfig's own
    server, or an https URL (no user, query or fragment) verified with the admin kubeconfig's CA, or with the CA the
    operator gives (``ca_given``: rke2_numa_access_ca) - never one nothing would verify (the admin kubeconfig skips
    TLS verification, or has no CA, and no CA is given). Decided before any token exists; the server_check module
    then shakes hands with it (module_utils/tls_check.py)."""
    try:
        cluster = _admin_cluster(view)
    except ValueError as e:
        return str(e)
    admin = str(cluster.get("server") or "")
    if not server and not admin:
        return "the admin kubeconfig's cluster has no server address"
    refusal = server_url_refusal(server, "rke2_numa_access_server") if server else server_url_refusal(admin, "the admin kubeconfig's server")
    if refusal:
        return refusal
    if _other_server(admin, server) and not ca_given:
        if cluster.get("insecure-skip-tls-verify") or not cluster.get("certificate-authority-data"):
            return ("rke2_numa_access_server %s is not the admin kubeconfig's server (%s), and the admin kubeconfig %s: nothing could "
                    "tell that server from an impostor; leave rke2_numa_access_server empty, or name its CA (rke2_numa_access_ca)"
                    % (show(server), show(admin), "skips TLS verification" if cluster.get("insecure-skip-tls-verify") else "has no CA"))
    return ""


def server_check_args(view, server, ca_given=False):
    """{check, url, ca_data, tls_server_name}: whether to shake hands with the server the token will go to (another
    than the admin kubeconfig's, or any when the operator names a CA: ``ca_given``), its URL, and the admin
    kubeconfig's CA and TLS name for it - never its credentials."""
    try:
        cluster = _admin_cluster(view)
    except ValueError:
        cluster = {}
    admin = str(cluster.get("server") or "")
    url = server or admin
    if not (_other_server(admin, server) or ca_given):
        return {"check": False, "url": url, "ca_data": "", "tls_server_name": ""}
    return {"check": True, "url": url, "ca_data": str(cluster.get("certificate-authority-data") or ""),
            "tls_server_name": str(cluster.get("tls-server-name") or "")}


def _other_server(admin, server):
    """Is ``server`` given and another address than the admin kubeconfig's ``admin``? (Then it must prove itself with
    a CA.)"""
    return bool(server) and str(server).rstrip("/") != admin.rstrip("/")


def scoped_kubeconfig(view, token, expires, server=None, ca_data=None):
    """The text of a kubeconfig for the ServiceAccount's bound ``token``: the cluster (server, CA) of the admin
    kubeconfig's current context (``kubectl config view --minify --flatten -o json``), or ``server`` instead of
    its address and ``ca_data`` (base64 of PEM: the CA server_check verified it with) instead of its CA; the admin's
    own credentials are never copied."""
    refusal = server_refusal(view, server, bool(ca_data))
    if refusal:
        raise ValueError(refusal)
    if not isinstance(token, str) or not token or any(c.isspace() for c in token):
        raise ValueError("the API server returned no token")
    cluster = {k: v for k, v in _admin_cluster(view).items() if k in _CLUSTER_KEYS}
    if server:
        cluster["server"] = server
    if ca_data:
        cluster.pop("insecure-skip-tls-verify", None)
        cluster["certificate-authority-data"] = ca_data
    doc = {"apiVersion": "v1", "kind": "Config", "clusters": [{"name": NAME, "cluster": cluster}],
           "users": [{"name": NAME, "user": {"token": token}}],
           "contexts": [{"name": NAME, "context": {"cluster": NAME, "user": NAME}}], "current-context": NAME, "preferences": {}}
    return "%s\n# the token expires at %s; run access.yml again for a new one\n%s\n" % (KUBECONFIG_MARK, expires, json.dumps(doc, indent=2))
