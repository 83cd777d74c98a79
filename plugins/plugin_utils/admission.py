# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the scoped identity may change inside the objects RBAC lets it write (controller side).

RBAC grants a verb on a resource; it cannot narrow a patch to fields. A Node patch may taint the node NoExecute
(every pod deleted, PodDisruptionBudgets or not) or label it control-plane; a patch on kured's DaemonSet may give it
a privileged pod template (root on every node). The API server narrows writes with ValidatingAdmissionPolicy
(admissionregistration.k8s.io/v1, GA in Kubernetes 1.30): CEL over ``object``, ``oldObject``, ``request`` and a
parameter object, evaluated in process before the write is stored. ``POLICIES`` is the one table of what the
identity may not do; ``objects()`` renders it (with the enrolment ConfigMap its Node policy reads) for
``playbooks/access.yml``, ``scripts/rbac_manifest.py`` writes it to files/rbac/ and docs/ACCESS.md, and
tests/integration/test_least_privilege.py tries each escalation against the API stand-in, which evaluates these
policies with a CEL library (tests/standins/kubeapi).

Why these, and what they cannot do (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy):
  - Nodes: an UPDATE (a patch is one) by the identity may change ``spec.unschedulable`` and keys under
    ``rke2-numa.maitred.io/`` of labels and annotations, on a Node access.yml enrolled (its name a key of the
    ConfigMap ``<namespace>/rke2-numa-nodes``, which the identity cannot write). Every other field of the spec
    (taints first), every other label or annotation, finalizers and owners: denied, the message naming the field.
  - kured's DaemonSet: only kured's lock annotation may change; its spec (the pod template) and labels may not.
  - Probe pods (a CREATE in the probe namespace, the only one RBAC lets the identity create pods in): only on an
    enrolled Node (``spec.nodeName``, the scheduler bypassed as the probes do; a DRA probe, which the scheduler must
    place to allocate its claim, names it as the one value of its one required node affinity term), with no toleration that lacks a key or
    names a control-plane taint, no device chosen by environment (``NVIDIA_*``, ``AMD_VISIBLE_DEVICES``, envFrom) and
    no init or ephemeral containers. The namespace's restricted Pod Security does the rest (no root, no host access).
  - Evictions: an Eviction names only the pod, never its node, and CEL cannot look the pod up; so no policy can
    narrow evictions to the pods of a node being drained. The policy denies evictions in kube-system (the cluster's
    own pods: DNS, metrics, the CNI's operators); elsewhere an eviction still honours the pod's
    PodDisruptionBudget, unlike a delete or a NoExecute taint. docs/ACCESS.md says so.
"""

from __future__ import annotations

import collections
import json

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kube_names import dns1123_subdomain_errors, qualified_name_errors
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.maintainers import KURED_LOCK_ANNOTATION
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import PREFIX
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rbac import NAME, _meta

API_VERSION = "admissionregistration.k8s.io/v1"
GROUP_VERSION = ("admissionregistration.k8s.io", "v1")
RESOURCE = "validatingadmissionpolicies"   # discovery names it when the cluster has the API (Kubernetes >= 1.30)
ENROLMENT = "rke2-numa-nodes"              # the ConfigMap: one key per Node the identity may change
PROTECTED_NAMESPACES = ("kube-system",)    # no evictions there
# Taints a probe pod may not tolerate: the control plane's (RKE2 pkg/daemons/agent and kubeadm's node-role taints; RKE2's
# CriticalAddonsOnly for servers that run only the cluster's add-ons). A toleration without a key tolerates them all.
CONTROL_PLANE_TAINTS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master", "node-role.kubernetes.io/etcd",
                        "CriticalAddonsOnly")
# Environment variables a container runtime reads to choose a container's devices: the NVIDIA Container Toolkit reads
# NVIDIA_VISIBLE_DEVICES (and its NVIDIA_MIG_* siblings) from the container's environment - from an unprivileged pod too
# while accept-nvidia-visible-devices-envvar-when-unprivileged is true, its default (nvidia-container-toolkit
# internal/config/image/cuda_image.go); AMD's container toolkit reads AMD_VISIBLE_DEVICES, Habana's HABANA_VISIBLE_DEVICES.
# A pod that sets one may see every GPU of its node, whatever the device plugin allocated.
DEVICE_ENV_PREFIXES = ("NVIDIA_",)
DEVICE_ENV = ("AMD_VISIBLE_DEVICES", "HABANA_VISIBLE_DEVICES")
NODE_SPEC_FIELDS = ("taints", "podCIDR", "podCIDRs", "providerID", "configSource", "externalID")   # v1 NodeSpec but unschedulable


class Validation(collections.namedtuple("Validation", "field expression message")):
    """One CEL expression that must be true; ``field`` names what it guards (docs/ACCESS.md, the test)."""


class Policy(collections.namedtuple("Policy", "name what group version resource operation params validations")):
    """A ValidatingAdmissionPolicy and its binding, matched to the identity's requests on one resource."""


def _unchanged(path):
    """``path`` (e.g. ``object.spec.taints``) is present in both or neither, and equal."""
    new, old = path, "oldObject" + path[len("object"):]
    parent, _sep, leaf = new.rpartition(".")
    old_parent = old.rpartition(".")[0]
    return "has(%s.%s) == has(%s.%s) && (!has(%s.%s) || %s == %s)" % (parent, leaf, old_parent, leaf, parent, leaf, new, old)


def _only_keys_change(map_name, key_test):
    """Of metadata.<map_name>, only keys passing ``key_test`` (CEL over ``k``) are added, changed or removed."""
    new, old = "object.metadata." + map_name, "oldObject.metadata." + map_name
    added_or_changed = "(!has(object.metadata.%s) || %s.all(k, %s || (has(oldObject.metadata.%s) && k in %s && %s[k] == %s[k])))" % (
        map_name, new, key_test, map_name, old, old, new)
    removed = "(!has(oldObject.metadata.%s) || %s.all(k, %s || (has(object.metadata.%s) && k in %s)))" % (
        map_name, old, key_test, map_name, new)
    return added_or_changed + " && " + removed


def _ours(prefix=PREFIX):
    return "k.startsWith('%s')" % prefix


_NODE = "may change a Node's spec.unschedulable and its %s labels and annotations only" % PREFIX
# kured's lock annotation in the kured policy: the key kured uses (its --lock-annotation flag, or KURED_LOCK_ANNOTATION),
# filled in when the policy is rendered (validations()); weave.works/kured-node-lock by default
LOCK = "{lock}"

# A DRA probe goes through the scheduler (only it allocates a claim): its Node is the one value of the one required
# nodeSelectorTerm's one matchFields expression on metadata.name (plugin_utils/prove.py dra_probe_pods); any other
# form could let it land elsewhere.
_AFFINITY = "object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
_DRA_PROBE_NODE = ("(has(object.spec.affinity) && has(object.spec.affinity.nodeAffinity) && has(%s) && %s.nodeSelectorTerms.size() == 1 "
                   "&& %s.nodeSelectorTerms.all(t, !has(t.matchExpressions) && has(t.matchFields) && t.matchFields.size() == 1 "
                   "&& t.matchFields.all(f, f.key == 'metadata.name' && f.operator == 'In' && size(f.values) == 1 "
                   "&& f.values.all(v, v in params.data))))" % (_AFFINITY, _AFFINITY, _AFFINITY))

POLICIES = (
    Policy("rke2-numa-nodes", "Nodes", "", "v1", "nodes", "UPDATE", True, (
        Validation("the Node's enrolment", "has(params.data) && object.metadata.name in params.data",
                   "may change only the Nodes playbooks/access.yml enrolled (the ConfigMap %s)" % ENROLMENT),
    ) + tuple(Validation("spec." + f, _unchanged("object.spec." + f), "may not change spec.%s (%s)" % (f, _NODE)) for f in NODE_SPEC_FIELDS) + (
        Validation("metadata.labels", _only_keys_change("labels", _ours()), "may not change metadata.labels outside %s (%s)" % (PREFIX, _NODE)),
        Validation("metadata.annotations", _only_keys_change("annotations", _ours()),
                   "may not change metadata.annotations outside %s (%s)" % (PREFIX, _NODE)),
        Validation("metadata.finalizers", _unchanged("object.metadata.finalizers"), "may not change metadata.finalizers (%s)" % _NODE),
        Validation("metadata.ownerReferences", _unchanged("object.metadata.ownerReferences"),
                   "may not change metadata.ownerReferences (%s)" % _NODE),
    )),
    Policy("rke2-numa-kured", "kured's DaemonSet", "apps", "v1", "daemonsets", "UPDATE", False, (
        Validation("spec", "object.spec == oldObject.spec",
                   "may not change a DaemonSet's spec (the pod template among it): only kured's lock annotation %s" % LOCK),
        Validation("metadata.labels", _unchanged("object.metadata.labels"),
                   "may not change a DaemonSet's metadata.labels: only kured's lock annotation %s" % LOCK),
        Validation("metadata.annotations", _only_keys_change("annotations", "k == '%s'" % LOCK),
                   "may change only kured's lock annotation %s of a DaemonSet's metadata.annotations" % LOCK),
        # an owner that does not exist lets the garbage collector delete kured's DaemonSet; a finalizer blocks its deletion
        Validation("metadata.ownerReferences", _unchanged("object.metadata.ownerReferences"),
                   "may not change a DaemonSet's metadata.ownerReferences: only kured's lock annotation %s" % LOCK),
        Validation("metadata.finalizers", _unchanged("object.metadata.finalizers"),
                   "may not change a DaemonSet's metadata.finalizers: only kured's lock annotation %s" % LOCK),
    )),
    # the probe pods (plugin_utils/prove.py probe_pods): on an enrolled Node, tolerating no control-plane taint, choosing
    # no device by environment, one kind of container (RBAC lets the identity create pods in the probe namespace only)
    Policy("rke2-numa-probes", "probe pods", "", "v1", "pods", "CREATE", True, (
        Validation("spec.nodeName", "has(params.data) && (has(object.spec.nodeName) ? object.spec.nodeName in params.data : %s)" % _DRA_PROBE_NODE,
                   "may run probe pods only on the Nodes playbooks/access.yml enrolled (the ConfigMap %s), named in spec.nodeName "
                   "or, for a DRA probe, as the one value of its one required node affinity term (matchFields metadata.name In)"
                   % ENROLMENT),
        Validation("spec.tolerations", "!has(object.spec.tolerations) || object.spec.tolerations.all(t, has(t.key) && t.key != '' && "
                   "!(t.key in [%s]))" % ", ".join("'%s'" % k for k in CONTROL_PLANE_TAINTS),
                   "may not give a probe pod a toleration without a key or of a control-plane taint (%s)" % ", ".join(CONTROL_PLANE_TAINTS)),
        Validation("spec.containers[*].env", "object.spec.containers.all(c, !has(c.envFrom) && (!has(c.env) || c.env.all(e, %s)))"
                   % " && ".join(["!e.name.startsWith('%s')" % p for p in DEVICE_ENV_PREFIXES] + ["e.name != '%s'" % n for n in DEVICE_ENV]),
                   "may not choose a probe pod's devices by its environment (%s, envFrom): the device plugin allocates them"
                   % ", ".join([p + "*" for p in DEVICE_ENV_PREFIXES] + list(DEVICE_ENV))),
        Validation("spec.initContainers", "!has(object.spec.initContainers) && !has(object.spec.ephemeralContainers)",
                   "may not give a probe pod init or ephemeral containers"),
    )),
    Policy("rke2-numa-evictions", "evictions", "", "v1", "pods/eviction", "CREATE", False, (
        Validation("the pod's namespace", " && ".join("request.namespace != '%s'" % n for n in PROTECTED_NAMESPACES),
                   "may not evict pods in %s (the cluster's own pods; a GPU node that runs one is not drained by the roll)"
                   % ", ".join(PROTECTED_NAMESPACES)),
    )),
)


def service_account_user(namespace):
    """The username the API server gives the identity's tokens."""
    return "system:serviceaccount:%s:%s" % (namespace, NAME)


def enrolment_errors(nodes):
    """What is wrong with the Node names to enrol (empty: fine)."""
    if not isinstance(nodes, (list, tuple)):
        return ["the Nodes to enrol are not a list"]
    errors = []
    for node in nodes:
        errors += ["Node name %r: %s" % (node, e) for e in dns1123_subdomain_errors(node)]
    return errors


def enrolment_nodes(nodes, current):
    """The Nodes to enrol: ``nodes`` and those the ConfigMap ``current`` (as kubectl gets it; anything else: none)
    lists already - a run over part of the fleet un-enrols nobody."""
    data = current.get("data") if isinstance(current, dict) else None
    return sorted(set(list(nodes or []) + list(data if isinstance(data, dict) else {})))


def enrolment(nodes, namespace):
    """The ConfigMap ``<namespace>/rke2-numa-nodes``: one key per Node the identity may change (a Node name is a valid
    ConfigMap key: a DNS subdomain)."""
    errors = enrolment_errors(nodes)
    if errors:
        raise ValueError("; ".join(errors))
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(ENROLMENT, namespace),
            "data": {str(n): "enrolled" for n in sorted(set(nodes))}}


def lock_key_errors(key):
    """What is wrong with kured's lock annotation key as the kured policy would name it (empty: fine)."""
    return ["kured's lock annotation %r: %s" % (key, e) for e in qualified_name_errors(key)]


def validations(policy, kured_lock=KURED_LOCK_ANNOTATION):
    """The policy's validations with kured's lock annotation key filled in (a qualified name: it goes into CEL quoted)."""
    errors = lock_key_errors(kured_lock)
    if errors:
        raise ValueError("; ".join(errors))
    return tuple(Validation(v.field, v.expression.replace(LOCK, kured_lock), v.message.replace(LOCK, kured_lock)) for v in policy.validations)


def policy_objects(namespace, kured=True, kured_lock=KURED_LOCK_ANNOTATION):
    """The ValidatingAdmissionPolicies and their bindings, in the order to apply them (a binding names its policy).
    ``kured``: False when the identity holds no right on kured's DaemonSet (no policy to bind); ``kured_lock``: the
    annotation key kured holds its lock under (its --lock-annotation)."""
    user = service_account_user(namespace)
    out = []
    for policy in POLICIES:
        if policy.resource == "daemonsets" and not kured:
            continue
        spec = {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": [policy.group], "apiVersions": [policy.version],
                                                    "operations": [policy.operation], "resources": [policy.resource]}]},
            "matchConditions": [{"name": "the-scoped-identity", "expression": "request.userInfo.username == '%s'" % user}],
            "validations": [{"expression": v.expression, "message": "rke2-numa " + v.message, "reason": "Forbidden"}
                            for v in validations(policy, kured_lock)],
        }
        if policy.params:
            spec["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
        binding = {"policyName": policy.name, "validationActions": ["Deny"]}
        if policy.params:
            binding["paramRef"] = {"name": ENROLMENT, "namespace": namespace, "parameterNotFoundAction": "Deny"}
        out.append({"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": _meta(policy.name), "spec": spec})
        out.append({"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicyBinding", "metadata": _meta(policy.name), "spec": binding})
    return out


def objects(namespace, nodes, kured=True, kured_lock=KURED_LOCK_ANNOTATION):
    """Everything access.yml applies where the cluster serves ValidatingAdmissionPolicy: the enrolment ConfigMap,
    then the policies and bindings."""
    return [enrolment(nodes, namespace)] + policy_objects(namespace, kured, kured_lock)


def served(discovery):
    """Does the cluster serve ValidatingAdmissionPolicy? ``discovery``: the APIResourceList of
    /apis/admissionregistration.k8s.io/v1 (a dict or its JSON text; anything else: no)."""
    if isinstance(discovery, str):
        try:
            discovery = json.loads(discovery) if discovery.strip() else None
        except ValueError:
            return False
    if not isinstance(discovery, dict):
        return False
    return any(isinstance(r, dict) and r.get("name") == RESOURCE for r in discovery.get("resources") or [])


class Escalation(collections.namedtuple("Escalation", "what argv stdin policy field")):
    """A write RBAC lets the identity make that a roll never makes: ``argv`` (kubectl's, with ``{node}`` an enrolled
    Node, ``{outside}`` a Node in no inventory, ``{pod}`` a pod in kube-system, ``{probe}`` the probe namespace) succeeds on a cluster without the
    policies and is denied by ``policy``'s validation of ``field`` with them. docs/ACCESS.md lists them;
    tests/integration/playbooks/test_least_privilege.py runs each against the API stand-in, with and without."""


_EVICTION = '{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "{pod}", "namespace": "kube-system"}}'


def _probe_like(name, node, **spec):
    """A pod that meets the probe namespace's restricted Pod Security, on ``node``, with ``spec`` added."""
    container = {"name": "probe", "image": "registry.k8s.io/pause:3.10", "env": spec.pop("env", []),
                 "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "{probe}"},
                       "spec": dict(dict({"nodeName": node} if node else {}, restartPolicy="Never", containers=[container],
                                         securityContext={"runAsNonRoot": True, "runAsUser": 65534, "seccompProfile": {"type": "RuntimeDefault"}}),
                                    **spec)})


ESCALATIONS = (
    Escalation("taint a Node NoExecute (the kubelet deletes every pod on it, PodDisruptionBudgets or not)",
               ("taint", "node", "{node}", "evict=all:NoExecute"), None, "rke2-numa-nodes", "spec.taints"),
    Escalation("label a Node control-plane (workloads that select it move there)",
               ("label", "node", "{node}", "node-role.kubernetes.io/control-plane=true"), None, "rke2-numa-nodes", "metadata.labels"),
    Escalation("evict a pod of kube-system (the cluster's DNS, say)",
               ("create", "--raw", "/api/v1/namespaces/kube-system/pods/{pod}/eviction", "-f", "-"), _EVICTION,
               "rke2-numa-evictions", "the pod's namespace"),
    Escalation("cordon, and so drain, a Node outside the inventory",
               ("cordon", "{outside}"), None, "rke2-numa-nodes", "the Node's enrolment"),
    Escalation("run a probe pod on a Node outside the inventory (the control plane, another team's GPUs)",
               ("create", "--validate=false", "-f", "-"), _probe_like("rke2-numa-try-outside", "{outside}"), "rke2-numa-probes", "spec.nodeName"),
    Escalation("run a DRA probe pod whose node affinity lets the scheduler put it on a Node outside the inventory",
               ("create", "--validate=false", "-f", "-"), _probe_like("rke2-numa-try-affinity", None, affinity={"nodeAffinity": {
                   "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                       {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["{node}", "{outside}"]}]}]}}}),
               "rke2-numa-probes", "spec.nodeName"),
    Escalation("run a probe pod that tolerates every taint, the control plane's among them",
               ("create", "--validate=false", "-f", "-"), _probe_like("rke2-numa-try-tolerations", "{node}", tolerations=[{"operator": "Exists"}]),
               "rke2-numa-probes", "spec.tolerations"),
    Escalation("run a probe pod that asks the runtime for every GPU of its node (NVIDIA_VISIBLE_DEVICES=all)",
               ("create", "--validate=false", "-f", "-"),
               _probe_like("rke2-numa-try-devices", "{node}", env=[{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]),
               "rke2-numa-probes", "spec.containers[*].env"),
    Escalation("give kured's DaemonSet another pod template (root on every node)",
               ("patch", "daemonset", "kured", "--namespace", "kube-system", "--type", "merge", "-p",
                '{"spec": {"template": {"spec": {"hostPID": true}}}}'), None, "rke2-numa-kured", "spec"),
    Escalation("give kured's DaemonSet an owner that does not exist (the garbage collector deletes it)",
               ("patch", "daemonset", "kured", "--namespace", "kube-system", "--type", "merge", "-p",
                '{"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", '
                '"uid": "0b9f4a4e-0000-4000-8000-000000000000"}]}}'), None, "rke2-numa-kured", "metadata.ownerReferences"),
    Escalation("give kured's DaemonSet a finalizer (its deletion never finishes)",
               ("patch", "daemonset", "kured", "--namespace", "kube-system", "--type", "merge", "-p",
                '{"metadata": {"finalizers": ["example.com/hold"]}}'), None, "rke2-numa-kured", "metadata.finalizers"),
)


def denial(escalation, kured_lock=KURED_LOCK_ANNOTATION):
    """The message the API server answers ``escalation`` with when the policies are there."""
    policy = next(p for p in POLICIES if p.name == escalation.policy)
    validation = next(v for v in validations(policy, kured_lock) if v.field == escalation.field)
    return "ValidatingAdmissionPolicy '%s' with binding '%s' denied request: rke2-numa %s" % (policy.name, policy.name, validation.message)
