# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Least privilege's filters: the identity's manifest, what applying it changes, its kubeconfig, and what the API
server says a kubeconfig may do (logic in plugin_utils/rbac.py)."""

from __future__ import annotations

import json

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import admission, rbac
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.maintainers import KURED_LOCK_ANNOTATION, find_kured
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.values import ValueRefused, boolean


def _json(value, what):
    if isinstance(value, (dict, list)):
        return value
    text = str(value or "").strip()
    try:
        return json.loads(text) if text else {}
    except ValueError:
        raise AnsibleFilterError("%s: not JSON: %s" % (what, text[:200])) from None


def _objects(value, what):
    """kubectl's -o json text (one object, a List, or several objects one after another) as a List."""
    if isinstance(value, dict):
        return value
    try:
        return rbac.kubectl_objects(value)
    except ValueError:
        raise AnsibleFilterError("%s: not kubectl's JSON: %s" % (what, str(value)[:200])) from None


LEASE = "/".join(rbac.LEASE_DEFAULT)


def rbac_manifest(namespace=rbac.IDENTITY_NAMESPACE, probe_namespace=rbac.PROBE_NAMESPACE, kured_daemonset=rbac.AUTO, lease=LEASE,
                  drain_namespaces=()):
    """The objects that give the ServiceAccount exactly the rights the playbooks use."""
    try:
        return rbac.manifest(namespace, probe_namespace, kured_daemonset, lease, drain_namespaces)
    except ValueError as e:
        raise AnsibleFilterError("rbac_manifest: %s" % e) from None


def identity_changes(current, wanted):
    """What applying the manifest changes: {changes, refused} (plugin_utils/rbac.py identity_changes)."""
    return rbac.identity_changes(_objects(current, "identity_changes"), wanted)


def scoped_kubeconfig(view, token_request, server="", ca_data=""):
    """The scoped kubeconfig's text, from the admin kubeconfig's view and the TokenRequest the API answered (and, for
    another server, the CA server_check verified it with)."""
    reply = _json(token_request, "scoped_kubeconfig")
    status = reply.get("status") or {} if isinstance(reply, dict) else {}
    try:
        return rbac.scoped_kubeconfig(_json(view, "scoped_kubeconfig"), status.get("token"), status.get("expirationTimestamp"), server or None,
                                      ca_data or None)
    except ValueError as e:
        raise AnsibleFilterError("scoped_kubeconfig: %s" % e) from None


def token_request(duration):
    """The TokenRequest body for a bound token of ``duration`` (bounded: 10m .. 7d)."""
    seconds, error = rbac.token_seconds(duration)
    if error:
        raise AnsibleFilterError(error)
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": seconds}}


def _prove(value):
    """rke2_numa_prove as the access_check action's argument spec reads it ("false" from -e is false)."""
    try:
        return boolean("rke2_numa_prove", value)
    except ValueRefused as e:
        raise AnsibleFilterError(str(e))


def _evict(value, what):
    try:
        return rbac.drain_namespaces(value)
    except ValueError as e:
        raise AnsibleFilterError("%s: %s" % (what, e)) from None


def access_reviews(playbook, probe_namespace=rbac.PROBE_NAMESPACE, kured_daemonset=rbac.AUTO, prove=True, labels_via="kubectl", lease=LEASE,
                   drain_namespaces=()):
    """The SelfSubjectAccessReviews to send (one kubectl create): everything, then each right the playbook needs."""
    return rbac.access_reviews(playbook, probe_namespace, kured_daemonset, _prove(prove), labels_via, lease,
                               _evict(drain_namespaces, "access_reviews"))


def access_findings(reply, playbook, probe_namespace=rbac.PROBE_NAMESPACE, kured_daemonset=rbac.AUTO, prove=True, lease=LEASE,
                    drain_namespaces=()):
    """{everything, missing, optional_missing, unreadable} from the API server's answers."""
    try:
        parsed = _objects(reply, "access_findings")
    except AnsibleFilterError:
        parsed = {}
    return rbac.access_findings(parsed, playbook, probe_namespace, kured_daemonset, _prove(prove), lease=lease,
                                evict=_evict(drain_namespaces, "access_findings"))


def server_refusal(view, server="", ca=""):
    """Why the token must not go to ``server`` ("" when it may), from the admin kubeconfig's view and the CA the
    operator names (rke2_numa_access_ca), if any (rbac.server_refusal)."""
    return rbac.server_refusal(_json(view, "server_refusal"), server or None, bool(ca))


def server_check_args(view, server="", ca=""):
    """What the server_check module needs to shake hands with ``server``: {check (another server than the admin
    kubeconfig's: shake hands), ca_data, tls_server_name} - the CA and name only, never the admin's credentials."""
    return rbac.server_check_args(_json(view, "server_check_args"), server or None, bool(ca))


def subject_reviews(namespace=rbac.IDENTITY_NAMESPACE, probe_namespace=rbac.PROBE_NAMESPACE, kured_daemonset=rbac.AUTO, lease=LEASE,
                    drain_namespaces=()):
    """The SubjectAccessReviews to ask with the admin kubeconfig, before any token: may the ServiceAccount do
    everything, any right it must not hold, and each right a roll needs?"""
    return rbac.subject_reviews(namespace, probe_namespace, kured_daemonset, lease, _evict(drain_namespaces, "subject_reviews"))


def subject_findings(reply, namespace=rbac.IDENTITY_NAMESPACE, probe_namespace=rbac.PROBE_NAMESPACE, kured_daemonset=rbac.AUTO, lease=LEASE,
                     drain_namespaces=()):
    """{unreadable, everything, forbidden, missing, optional_missing} from the answers to subject_reviews."""
    try:
        parsed = _objects(reply, "subject_findings")
    except AnsibleFilterError:
        parsed = {}
    return rbac.subject_findings(parsed, namespace, probe_namespace, kured_daemonset, lease, _evict(drain_namespaces, "subject_findings"))


def binding_findings(reply, wanted, namespace=rbac.IDENTITY_NAMESPACE):
    """{unreadable, foreign, leftovers} from ``kubectl get clusterrolebindings,rolebindings -A -o json``."""
    try:
        parsed = _objects(reply, "binding_findings")
    except AnsibleFilterError:
        parsed = {}
    return rbac.binding_findings(parsed, wanted, namespace)


def kured_lock_key(daemonsets, kured_daemonset=rbac.AUTO):
    """The annotation key kured holds its lock under, as kured reads its own settings (its --lock-annotation flag, then
    KURED_LOCK_ANNOTATION: plugin_utils/maintainers.py kured_settings), from ``kubectl get daemonsets -A -o json`` -
    kured's default when kured is not found or its settings cannot be read (the roll then counts its lock as held)."""
    found, dummy = find_kured(_objects(daemonsets, "kured_lock_key").get("items") or [], kured_daemonset)
    keys = [key for dummy_ident, key, dummy_ds, settings in found if key and not settings.get("unreadable")]
    return keys[0] if keys else KURED_LOCK_ANNOTATION


def admission_policies(discovery, namespace=rbac.IDENTITY_NAMESPACE, nodes=(), enrolled="", kured_daemonset=rbac.AUTO,
                       kured_lock=KURED_LOCK_ANNOTATION):
    """{served, objects, nodes}: where the cluster serves ValidatingAdmissionPolicy (``discovery``: the text of
    /apis/admissionregistration.k8s.io/v1, empty when not served), the enrolment ConfigMap (``nodes`` and those
    ``enrolled`` already: the ConfigMap's JSON as kubectl gets it) and the policies with their bindings
    (plugin_utils/admission.py)."""
    if not admission.served(discovery):
        return {"served": False, "objects": [], "nodes": []}
    wanted = admission.enrolment_nodes(nodes, _json(enrolled, "admission_policies"))
    try:
        objects = admission.objects(namespace, wanted, kured=rbac.kured_target(kured_daemonset) is not None,
                                    kured_lock=kured_lock or KURED_LOCK_ANNOTATION)
    except ValueError as e:
        raise AnsibleFilterError("admission_policies: %s" % e) from None
    return {"served": True, "objects": objects, "nodes": wanted}


class FilterModule:
    def filters(self):
        return {"rbac_manifest": rbac_manifest, "identity_changes": identity_changes, "scoped_kubeconfig": scoped_kubeconfig,
                "token_request": token_request, "server_refusal": server_refusal, "subject_reviews": subject_reviews,
                "subject_findings": subject_findings, "binding_findings": binding_findings, "access_reviews": access_reviews,
                "access_findings": access_findings, "admission_policies": admission_policies, "kured_lock_key": kured_lock_key,
                "server_check_args": server_check_args}
