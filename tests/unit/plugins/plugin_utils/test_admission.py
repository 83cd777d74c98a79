# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The admission policies, evaluated by the API stand-in's ValidatingAdmissionPolicy (cel-python's CEL) on the
objects a write would store: what a roll writes passes, every other change of a Node or kured's DaemonSet is denied
naming its field, evictions in kube-system are denied, the identity's name alone is matched."""

from __future__ import annotations

import copy
import os

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import admission
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBEAPI_PATH, _load

kubeapi = _load("kubeapi_standin_for_admission", KUBEAPI_PATH)
NS = "rke2-numa-system"
SA = kubeapi.User(admission.service_account_user(NS), ["system:serviceaccounts", "system:serviceaccounts:" + NS, "system:authenticated"])
OBJECTS = admission.objects(NS, ["gpu-a"])
POLICIES = [o for o in OBJECTS if o["kind"] == "ValidatingAdmissionPolicy"]
BINDINGS = [o for o in OBJECTS if o["kind"] == "ValidatingAdmissionPolicyBinding"]
CONFIGMAPS = [dict(o, metadata=dict(o["metadata"], namespace=NS)) for o in OBJECTS if o["kind"] == "ConfigMap"]

NODE = {"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-a", "labels": {"kubernetes.io/hostname": "gpu-a", admission.PREFIX + "plan": "abc"},
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
        "spec": {"podCIDR": "10.42.1.0/24", "podCIDRs": ["10.42.1.0/24"], "providerID": "rke2://gpu-a",
                 "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}}
KURED = {"apiVersion": "apps/v1", "kind": "DaemonSet",
         "metadata": {"name": "kured", "namespace": "kube-system", "labels": {"app": "kured"},
                      "annotations": {"deprecated.daemonset.template.generation": "1"}},
         "spec": {"template": {"spec": {"containers": [{"name": "kured", "image": "ghcr.io/kubereboot/kured:1.17.1"}]}}}}


def deny(kind, obj, old, user=SA, operation="UPDATE", namespace=None, resource=None, configmaps=None, name=None):
    error = kubeapi.admission_denial(POLICIES, BINDINGS, CONFIGMAPS if configmaps is None else configmaps, user, operation, kind, namespace,
                                     name or obj["metadata"]["name"], obj, old, resource, False)
    return None if error is None else error.message


def node_change(change):
    new = copy.deepcopy(NODE)
    change(new)
    return deny(kubeapi.NODES, new, NODE)


@pytest.mark.parametrize("change", [
    lambda n: n["spec"].__setitem__("unschedulable", True),
    lambda n: n["metadata"]["annotations"].__setitem__(admission.PREFIX + "cordoned", "roll-1"),
    lambda n: n["metadata"]["labels"].__setitem__(admission.PREFIX + "numa0-gpus", "4"),
    lambda n: n["metadata"]["labels"].pop(admission.PREFIX + "plan"),
    lambda n: None,
], ids=["cordon", "marker", "label", "label-removed", "nothing"])
def test_what_a_roll_writes_on_an_enrolled_node_is_admitted(change):
    assert node_change(change) is None


@pytest.mark.parametrize("change, field", [
    (lambda n: n["spec"]["taints"].append({"key": "evict", "value": "all", "effect": "NoExecute"}), "spec.taints"),
    (lambda n: n["spec"].pop("taints"), "spec.taints"),
    (lambda n: n["spec"].__setitem__("podCIDR", "10.42.9.0/24"), "spec.podCIDR"),
    (lambda n: n["spec"].__setitem__("providerID", "x"), "spec.providerID"),
    (lambda n: n["metadata"]["labels"].__setitem__("node-role.kubernetes.io/control-plane", "true"), "metadata.labels"),
    (lambda n: n["metadata"]["labels"].pop("kubernetes.io/hostname"), "metadata.labels"),
    (lambda n: n["metadata"]["annotations"].__setitem__("node.alpha.kubernetes.io/ttl", "30"), "metadata.annotations"),
    (lambda n: n["metadata"].__setitem__("finalizers", ["x/y"]), "metadata.finalizers"),
], ids=["taint", "untaint", "podcidr", "providerid", "control-plane", "label-removed", "annotation", "finalizer"])
def test_every_other_node_change_is_denied_naming_the_field(change, field):
    message = node_change(change)
    assert message is not None and message.startswith('nodes "gpu-a" is forbidden: ValidatingAdmissionPolicy \'rke2-numa-nodes\' with binding')
    assert (" change %s " % field) in message or (" change %s" % field) in message, message


def test_a_node_outside_the_enrolment_or_without_it_is_denied_and_the_admin_is_not_matched():
    other = copy.deepcopy(NODE)
    other["metadata"]["name"] = "other-1"
    cordoned = copy.deepcopy(other)
    cordoned["spec"]["unschedulable"] = True
    assert "may change only the Nodes playbooks/access.yml enrolled" in deny(kubeapi.NODES, cordoned, other)
    cordon = copy.deepcopy(NODE)
    cordon["spec"]["unschedulable"] = True
    assert "no params found for policy binding with `Deny` parameterNotFoundAction" in deny(kubeapi.NODES, cordon, NODE, configmaps=[])
    tainted = copy.deepcopy(NODE)
    tainted["spec"]["taints"] = []
    assert deny(kubeapi.NODES, tainted, NODE, user=kubeapi.ADMIN) is None, "the policies match the identity alone"


def test_kured_s_daemonset_only_its_lock_annotation():
    locked = copy.deepcopy(KURED)
    locked["metadata"]["annotations"]["weave.works/kured-node-lock"] = '{"nodeID":"rke2-numa.maitred.io/roll/r1"}'
    assert deny(kubeapi.DAEMONSETS, locked, KURED, namespace="kube-system") is None
    assert deny(kubeapi.DAEMONSETS, KURED, locked, namespace="kube-system") is None, "given back"
    privileged = copy.deepcopy(KURED)
    privileged["spec"]["template"]["spec"]["hostPID"] = True
    assert "may not change a DaemonSet's spec" in deny(kubeapi.DAEMONSETS, privileged, KURED, namespace="kube-system")
    relabelled = copy.deepcopy(KURED)
    relabelled["metadata"]["labels"]["app"] = "x"
    assert "metadata.labels" in deny(kubeapi.DAEMONSETS, relabelled, KURED, namespace="kube-system")
    annotated = copy.deepcopy(KURED)
    annotated["metadata"]["annotations"]["other"] = "x"
    assert "may change only kured's lock annotation" in deny(kubeapi.DAEMONSETS, annotated, KURED, namespace="kube-system")


@pytest.mark.parametrize("namespace, denied", [("kube-system", True), ("ml", False), ("default", False)])
def test_evictions_in_kube_system_are_denied(namespace, denied):
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p-1", "namespace": namespace}}
    message = deny(kubeapi.PODS, eviction, None, operation="CREATE", namespace=namespace, resource="pods/eviction")
    assert (message is not None) == denied
    if denied:
        assert message.startswith('pods "p-1" is forbidden: ValidatingAdmissionPolicy \'rke2-numa-evictions\'')
    assert deny(kubeapi.PODS, {"metadata": {"name": "p-1"}}, None, operation="DELETE", namespace=namespace) is None, "a delete is not matched"


def test_the_enrolment_takes_node_names_only():
    assert admission.enrolment(["gpu-b", "gpu-a", "gpu-a"], NS)["data"] == {"gpu-a": "enrolled", "gpu-b": "enrolled"}
    for bad in (["-x"], ["a b"], "gpu-a", [None]):
        with pytest.raises(ValueError):
            admission.enrolment(bad, NS)


def test_each_escalation_names_a_validation_of_its_policy():
    for escalation in admission.ESCALATIONS:
        assert admission.denial(escalation).startswith("ValidatingAdmissionPolicy '%s'" % escalation.policy)


def test_served_reads_discovery():
    assert admission.served('{"resources": [{"name": "validatingadmissionpolicies"}]}')
    assert not admission.served("") and not admission.served("Error") and not admission.served('{"resources": [{"name": "x"}]}')


def test_without_cel_the_stand_in_is_a_cluster_without_the_api(tmp_path):
    api = kubeapi.Api(str(tmp_path), os.path.join(str(tmp_path), "log"), policies=False)
    assert kubeapi.ADMISSION_GROUP not in [g for g, _v in api.groups()]


def _probe_policy_denial(pod):
    return deny(kubeapi.PODS, pod, None, operation="CREATE", namespace="rke2-numa-probe", name=pod["metadata"]["name"])


def test_the_probes_prove_makes_pass_and_a_dra_probe_that_could_land_elsewhere_is_denied(tmp_path):
    """Both kinds of probe prove.yml makes on gpu-a (nodeName; a DRA probe's one matchFields value) are admitted; a DRA
    probe whose affinity allows another Node, or adds a term, or names none, is denied as a probe outside the enrolment."""
    from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import prove
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
    from ansible_collections.maitred.rke2_numa.tests.fixtures.gen_sysfs import make_spec, write_tree
    write_tree(make_spec(sockets=2, cores_per_socket=4, threads=2, gpus_per_node=1), str(tmp_path))
    topology = read_topology(str(tmp_path))
    plugin = prove.probe_pods(make_plan(topology), topology, "gpu-a", "busybox:1.37", "rke2-numa-probe", "nvidia.com/gpu", "64Mi")
    dra = prove.probe_pods(make_plan(topology, cpu_allocator="dra-driver-cpu", cpu_manager_policy="none", memory_manager_policy="None"),
                           topology, "gpu-a", "busybox:1.37", "rke2-numa-probe", "nvidia.com/gpu", "64Mi")
    assert "nodeName" in plugin[0]["manifest"]["spec"] and "nodeName" not in dra[0]["manifest"]["spec"]
    for probe in plugin + dra:
        assert _probe_policy_denial(probe["manifest"]) is None, probe["name"]
    base = dra[0]["manifest"]
    terms = base["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    for change in (lambda t: t[0]["matchFields"][0].__setitem__("values", ["gpu-a", "other-1"]),
                   lambda t: t[0]["matchFields"][0].__setitem__("values", ["other-1"]),
                   lambda t: t.append({"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "Exists"}]}),
                   lambda t: t[0]["matchFields"][0].__setitem__("operator", "NotIn"),
                   lambda t: t.clear()):
        pod = copy.deepcopy(base)
        change(pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"])
        assert "may run probe pods only on the Nodes playbooks/access.yml enrolled" in (_probe_policy_denial(pod) or ""), terms
    del base["spec"]["affinity"]
    assert "may run probe pods only on the Nodes" in (_probe_policy_denial(base) or "")
