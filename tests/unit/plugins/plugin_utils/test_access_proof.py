# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The proof's trials and verdicts (plugin_utils/access_proof.py); against the API stand-in and the real kubectl in
tests/integration/playbooks/test_least_privilege.py."""

from __future__ import annotations

import json

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import access_proof, admission
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.access_proof import ALLOWED, DENIED


def test_every_escalation_access_md_lists_is_tried_as_a_dry_run_and_every_step_of_a_roll_too():
    tried = access_proof.trials("gpu-a", "server-1", kured="kured/kured-release", evict=["ml"])
    denied = [t for t in tried if t.expect == DENIED]
    assert [t.what for t in denied[:len(admission.ESCALATIONS)]] == [e.what for e in admission.ESCALATIONS]
    assert {t.what for t in denied[len(admission.ESCALATIONS):]} == {
        "add a Node to the enrolment (the ConfigMap rke2-numa-nodes)", "take another roll's Lease",
        "evict a pod outside rke2_numa_drain_namespaces (namespace default)"}
    allowed = [t.what for t in tried if t.expect == ALLOWED]
    assert allowed == ["cordon gpu-a and mark it ours, in one patch", "label gpu-a with our labels",
                       "evict a pod where the roll drains (namespace ml)", "write the roll's Lease rke2-numa-system/rke2-numa-roll",
                       "hold kured's lock (weave.works/kured-node-lock)", "run a probe pod on gpu-a"]
    for t in tried:   # never a write: every request is a server-side dry run
        assert t.argv[-1] == "--dry-run=server" or any(a.endswith("?dryRun=All") for a in t.argv), t
        assert not any(p in w for p in ("{node}", "{outside}", "{pod}", "{probe}") for w in t.argv + [t.stdin or ""]), t
    kured = [t for t in tried if t.policy == "rke2-numa-kured"]
    assert kured and all(t.argv[:5] == ["patch", "daemonset", "kured-release", "--namespace", "kured"] for t in kured)
    probe = next(t for t in tried if t.what.startswith("run a probe pod on a Node outside"))
    assert json.loads(probe.stdin)["spec"]["nodeName"] == "server-1" and json.loads(probe.stdin)["metadata"]["namespace"] == "rke2-numa-probe"


def test_without_policies_kured_or_a_node_outside_those_trials_are_left_out():
    tried = access_proof.trials("gpu-a", "", policies=False, prove=False)
    assert [t.what for t in tried if t.expect == DENIED] == ["add a Node to the enrolment (the ConfigMap rke2-numa-nodes)",
                                                             "take another roll's Lease"]
    assert "run a probe pod on gpu-a" not in [t.what for t in tried]
    tried = access_proof.trials("gpu-a", "", kured="auto", kured_exists=False)
    assert not [t for t in tried if "outside" in " ".join(t.argv) or t.policy == "rke2-numa-kured" or "kured" in t.what]


@pytest.mark.parametrize("node, outside, words", [
    ("-lgpu=true", "", "node '-lgpu=true'"), ("gpu-a", "--all", "outside '--all'"),
])
def test_names_reach_kubectl_as_names(node, outside, words):
    with pytest.raises(access_proof.ProofError, match=words):
        access_proof.trials(node, outside)


@pytest.mark.parametrize("rc, stderr, got", [
    (1, 'Error from server (Forbidden): pods "x" is forbidden: ValidatingAdmissionPolicy \'rke2-numa-probes\' denied', DENIED),
    (0, 'error: unable to cordon node "server-1": nodes "server-1" is forbidden: ValidatingAdmissionPolicy', DENIED),
    (1, 'Error from server (Forbidden): leases.coordination.k8s.io "x" is forbidden: User "system:serviceaccount:a:b" cannot patch', DENIED),
    (0, "", ALLOWED),
    (1, 'Error from server (NotFound): pods "rke2-numa-proof" not found', ALLOWED),
    (1, 'Error from server (AlreadyExists): leases.coordination.k8s.io "rke2-numa-roll" already exists', ALLOWED),
    (1, 'Error from server (InternalError): an error on the server ("x") has prevented the request from succeeding', None),
    (1, "The connection to the server 10.0.0.1:6443 was refused - did you specify the right host or port?", None),
    (1, "error: failed to download openapi: unknown", access_proof.UNTRIED),   # an older kubectl: the request was never sent
])
def test_the_clusters_answer_is_read_as_kubectl_prints_it(rc, stderr, got):
    assert access_proof.outcome(rc, "", stderr) == got


def test_an_allowed_escalation_or_a_denied_step_is_named_with_the_request_and_the_answer():
    tried = access_proof.trials("gpu-a", "server-1")
    answers = [(1, "", 'Error from server (Forbidden): x is forbidden: y') if t.expect == DENIED else (0, "ok", "") for t in tried]
    assert access_proof.findings(tried, answers)["findings"] == []
    taint = next(i for i, t in enumerate(tried) if t.argv[0] == "taint")
    cordon = next(i for i, t in enumerate(tried) if t.what.startswith("cordon gpu-a"))
    answers[taint] = (0, "node/gpu-a modified (server dry run)", "")
    answers[cordon] = (1, "", 'Error from server (Forbidden): nodes "gpu-a" is forbidden: ValidatingAdmissionPolicy \'rke2-numa-nodes\' '
                              "with binding 'rke2-numa-nodes' denied request: rke2-numa may change only the Nodes playbooks/access.yml enrolled")
    found = access_proof.findings(tried, answers)["findings"]
    assert found == [
        "the cluster allows the identity to taint a Node NoExecute (the kubelet deletes every pod on it, PodDisruptionBudgets or not) "
        "(kubectl taint node gpu-a evict=all:NoExecute --dry-run=server, a server-side dry run): node/gpu-a modified (server dry run) - "
        "docs/ACCESS.md says it is denied by the policy rke2-numa-nodes",
        "the cluster denies the identity's cordon gpu-a and mark it ours, in one patch (kubectl patch node/gpu-a --type=merge "
        "--patch={\"metadata\":{\"annotations\":{\"rke2-numa.maitred.io/cordoned\":\"rke2-numa-proof\"}},\"spec\":{\"unschedulable\":true}} "
        "--dry-run=server, a server-side dry run): Error from server (Forbidden): nodes \"gpu-a\" is forbidden: ValidatingAdmissionPolicy "
        "'rke2-numa-nodes' with binding 'rke2-numa-nodes' denied request: rke2-numa may change only the Nodes playbooks/access.yml "
        "enrolled - a roll makes this request"]


def test_a_trial_the_kubectl_client_would_not_send_is_said_not_judged():
    tried = access_proof.trials("gpu-a", "")
    answers = [(1, "", "error: failed to download openapi: unknown") if t.argv[0] in ("patch", "label", "taint", "annotate")
               else (1, "", 'Error from server (Forbidden): x is forbidden: y') if t.expect == DENIED else (0, "ok", "") for t in tried]
    verdict = access_proof.findings(tried, answers)
    assert verdict["findings"] == [] and verdict["untried"] and all("failed to download openapi" in u for u in verdict["untried"])
