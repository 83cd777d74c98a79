# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writes files/rbac/rke2-numa.yaml (plugins/plugin_utils/rbac.py's manifest with the default names) and
docs/ACCESS.md (each rule, and the kubectl calls of the roles and playbooks that need it, as
tests/fixtures/kubectl_calls.py reads them). tests/unit/plugins/plugin_utils/test_rbac.py checks that both files
are these renderings.

    python scripts/rbac_manifest.py    (make rbac)
"""

import os
import sys

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, ".build"))

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import admission, rbac  # noqa: E402  pylint: disable=wrong-import-position
from ansible_collections.maitred.rke2_numa.tests.fixtures import kubectl_calls  # noqa: E402  pylint: disable=wrong-import-position

HEADER = """\
# The identity maitred.rke2_numa's playbooks need in the cluster, and nothing more:
# the ServiceAccount {ns}/{name}, a ClusterRole (Nodes, pods, evictions, DaemonSets read),
# a Role in the probe namespace {probe} (restricted Pod Security) and a Role on kured's
# DaemonSet kube-system/kured alone (its reboot lock). Each rule and the kubectl call that
# needs it: docs/ACCESS.md.
#
# Generated from plugins/plugin_utils/rbac.py by scripts/rbac_manifest.py (make rbac): do
# not edit. playbooks/access.yml applies it with the names of your inventory (another
# probe namespace, kured installed elsewhere) and writes a kubeconfig with a bound token;
# by hand: kubectl apply --server-side --field-manager={manager} -f rke2-numa.yaml
"""


class _Dumper(yaml.SafeDumper):  # pylint: disable=too-many-ancestors
    """Lists indented under their key, as yamllint and ansible-lint want them."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def render():
    docs = rbac.manifest()
    text = HEADER.format(ns=rbac.IDENTITY_NAMESPACE, name=rbac.NAME, probe=rbac.PROBE_NAMESPACE, manager=rbac.FIELD_MANAGER)
    # One document (a v1 List, as kubectl apply -f takes it): ansible-test's yamllint wants one per file.
    listed = {"apiVersion": "v1", "kind": "List", "items": docs}
    return text + "---\n" + yaml.dump(listed, Dumper=_Dumper, sort_keys=False, default_flow_style=False)


POLICY_HEADER = """\
# What the identity may change inside the objects its RBAC lets it write, for clusters
# with ValidatingAdmissionPolicy (Kubernetes >= 1.30): on the Nodes enrolled in the
# ConfigMap {ns}/{enrolment} only spec.unschedulable and {prefix} labels and
# annotations; on kured's DaemonSet only its lock annotation; no eviction in {protected}.
# Each policy and the writes it denies: docs/ACCESS.md.
#
# Generated from plugins/plugin_utils/admission.py by scripts/rbac_manifest.py (make rbac):
# do not edit. playbooks/access.yml applies it where the cluster serves
# admissionregistration.k8s.io/v1, with the Nodes of your inventory in the ConfigMap
# (empty here: the identity may change no Node until one is listed, one key per Node).
"""

ACCESS_HEAD = """
## What the identity can and cannot do

RBAC grants a verb on a resource, never a field: `patch` on Nodes is also a NoExecute taint, `patch` on kured's
DaemonSet is also a privileged pod template. Where the cluster serves ValidatingAdmissionPolicy
(`admissionregistration.k8s.io/v1`, Kubernetes 1.30 and later), `playbooks/access.yml` applies the policies of
`plugins/plugin_utils/admission.py` (`files/rbac/rke2-numa-policies.yaml`) with the ConfigMap
`{ns}/{enrolment}`: one key per Node of its inventory (servers never; Nodes enrolled before stay - remove one with
`kubectl -n {ns} edit configmap {enrolment}`). On a cluster without them it says so, and the identity can do
everything in the left column.

An Eviction names only its pod, never the pod's node, and CEL cannot look the pod up: no admission policy can narrow
evictions to the node being drained. What stays possible with the policies: evicting a pod outside kube-system,
which still honours the pod's PodDisruptionBudget (unlike a delete or a NoExecute taint); a GPU node that runs a
kube-system pod other than a DaemonSet's (CoreDNS, metrics-server) cannot be drained by the roll - keep them off GPU
nodes (a taint they do not tolerate). The policies match the ServiceAccount's user name alone: the admin and every
other tool are unaffected.

What else the token can do, said plainly (narrowing these is open work):
- `kubectl drain` of a Node that is not enrolled: kubectl's drain cordons first and, when that patch is denied, prints
  `error: unable to cordon node` and goes on to evict the node's pods (pkg/cmd/drain/drain.go RunDrain). Those
  evictions name only their pods. With `rke2_numa_drain_namespaces` empty (the default) they are allowed outside
  kube-system, each honouring its PodDisruptionBudget; name the namespaces your GPU workloads run in and the token may
  evict there only - a drain of any Node evicts nothing elsewhere (what remains: the pods of those namespaces, on any
  Node). The roll's own drain never gets there: it takes the node out with one patch (cordon and marker), stops when
  that patch is refused, and refuses before the cordon a node whose drain would evict a pod the token may not evict.
- The roll's Lease (`rke2-numa-system/rke2-numa-roll`): the identity may update it, so any holder of the token can
  rewrite its holder. A roll notices at its next renewal - before each batch, each destructive step on a node (the
  fence) and each uncordon - and stops; nothing stops a holder of the token from taking it.
- Probe pods in the probe namespace (`rke2_numa_probe_namespace`): created with `nodeName` set, they bypass the
  scheduler. Pod Security `restricted` refuses privileged, hostPath and root pods there; the policy `rke2-numa-probes`
  refuses a probe pod on a Node that is not enrolled, one that tolerates every taint or a control-plane taint, one
  that chooses its devices by environment (`NVIDIA_*`, `AMD_VISIBLE_DEVICES`, `HABANA_VISIBLE_DEVICES`, envFrom) and
  init or ephemeral containers. What remains: a restricted pod on an enrolled Node that asks the device plugin for its
  GPUs, as the probes do - GPUs a workload may be waiting for while it runs.

`tests/integration/playbooks/test_least_privilege.py` tries each of these with the scoped kubeconfig against the API
stand-in, with and without the policies.

| the identity tries to | RBAC alone (no policies) | with the policies: the API server answers |
|---|---|---|
"""

POLICY_TABLE_HEAD = """
Each policy's validations (every one must hold for a write by the identity; the first that does not denies it):

| policy | matches | what it guards | CEL | message |
|---|---|---|---|---|
"""


def render_policies():
    text = POLICY_HEADER.format(ns=rbac.IDENTITY_NAMESPACE, enrolment=admission.ENROLMENT, prefix=admission.PREFIX,
                                protected=", ".join(admission.PROTECTED_NAMESPACES))
    enrolment = admission.enrolment([], rbac.IDENTITY_NAMESPACE)
    listed = {"apiVersion": "v1", "kind": "List", "items": [enrolment] + admission.policy_objects(rbac.IDENTITY_NAMESPACE)}
    return text + "---\n" + yaml.dump(listed, Dumper=_Dumper, sort_keys=False, default_flow_style=False)


def _cell(text):
    return str(text).replace("|", "\\|")


def render_access():
    head = ACCESS_HEAD.format(ns=rbac.IDENTITY_NAMESPACE, enrolment=admission.ENROLMENT)
    rows = ["| %s (`kubectl %s`) | %s | denied: %s |" % (
        e.what, _cell(" ".join(e.argv)), "allowed with `rke2_numa_kured_hold: true`; `auto`: no right on kured's DaemonSet (RBAC)"
        if e.policy == "rke2-numa-kured" else "allowed", _cell(admission.denial(e))) for e in admission.ESCALATIONS]
    table = [POLICY_TABLE_HEAD]
    for policy in admission.POLICIES:
        for v in admission.validations(policy):
            cells = (policy.name, policy.operation, policy.resource, v.field, _cell(v.expression), _cell(v.message))
            table.append("| `%s` | %s %s | %s | `%s` | rke2-numa %s |\n" % cells)
    return head + "\n".join(rows) + "\n" + "".join(table)


DOC_HEAD = """\
# The rights of maitred.rke2_numa, and the calls that need them

Generated by `make rbac` (scripts/rbac_manifest.py) from `plugins/plugin_utils/rbac.py` (the rules) and the
kubectl calls of the roles and playbooks (`tests/fixtures/kubectl_calls.py` reads them from the YAML; the requests
each kubectl verb sends are `kubectl.VERBS`). `make test` fails when a call needs a right that is not
here, when a rule is needed by no call, or when this page or `files/rbac/rke2-numa.yaml` is stale.

The identity: the ServiceAccount `{ns}/{name}` (`playbooks/access.yml` applies it and writes a kubeconfig with a
bound token). *cluster*: the ClusterRole `{name}`; *probe*: the Role `{name}-probe` in the probe namespace
(`{probe}` by default; restricted Pod Security); *kured*: the Role `{name}-kured-lock` on kured's DaemonSet alone
(`kube-system/kured` by default); *lease*: the Role `{name}-roll-lease` in the roll Lease's namespace (`{lease_ns}`: create
Leases - RBAC cannot narrow a create to a name -, get and update the Lease `{lease}` alone, get that namespace alone);
*evict*: the ClusterRole `{name}` (every namespace) while `rke2_numa_drain_namespaces` is empty, else the ClusterRole
`{name}-evict` bound by a RoleBinding in each namespace it names - and nowhere else.
Every authenticated user may also create SelfSubjectAccessReviews
(`system:basic-user`): the playbooks ask with them what their kubeconfig may do, before their first change.

| where | API group | resource | verb | playbooks | why | the calls that need it |
|---|---|---|---|---|---|---|
"""


def render_doc():
    uses = kubectl_calls.uses()
    rows = []
    for rule in rbac.RULES:
        for verb, playbooks in rule.uses:
            calls = uses[(rule.scope, rule.group, rule.resource, verb)]
            where = "<br>".join("`%s` %s (kubectl %s)" % (c.file, c.task, c.verb) for c in calls)
            resource = rule.resource + (" (`kured` only)" if rule.scope == rbac.KURED else "")
            if rule.scope == rbac.LEASE and verb in rbac.LEASE_NAMED_VERBS:
                resource += " (`%s` only)" % (rbac.LEASE_DEFAULT[0] if rule.resource == "namespaces" else rbac.LEASE_DEFAULT[1])
            cells = (rule.scope, rule.group or "core", resource, verb, ", ".join(playbooks), rule.why, where)
            rows.append("| %s |" % " | ".join(cells))
    head = DOC_HEAD.format(ns=rbac.IDENTITY_NAMESPACE, name=rbac.NAME, probe=rbac.PROBE_NAMESPACE, lease_ns=rbac.LEASE_DEFAULT[0],
                           lease=rbac.LEASE_DEFAULT[1])
    return head + "\n".join(rows) + "\n" + render_access()


OUTPUTS = {os.path.join("files", "rbac", "rke2-numa.yaml"): render, os.path.join("files", "rbac", "rke2-numa-policies.yaml"): render_policies,
           os.path.join("docs", "ACCESS.md"): render_doc}


def main(dummy_argv):
    for path, make in OUTPUTS.items():
        with open(os.path.join(REPO, path), "w", encoding="utf-8") as handle:
            handle.write(make())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
