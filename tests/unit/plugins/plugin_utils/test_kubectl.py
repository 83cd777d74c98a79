# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One way to call the cluster: the kubectl action's argv, its declared API requests and what its answer means."""
from __future__ import annotations

import json

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import kubectl as k

BASE = {"kubectl": "/k", "kubeconfig": "/kc"}


def call(**args):
    return k.call_argv(dict(BASE, **args))


def test_names_are_passed_as_kind_slash_name_never_as_flags():
    assert call(verb="get", kind="node", names=["gpu-a"], output="json") == ["/k", "--kubeconfig", "/kc", "get", "node", "gpu-a", "-o", "json"]
    assert call(verb="cordon", kind="node", names=["gpu-a"]) == ["/k", "--kubeconfig", "/kc", "cordon", "node/gpu-a"]
    with pytest.raises(k.KubectlArgError, match="is not a Kubernetes name"):
        call(verb="cordon", kind="node", names=["--all"])
    with pytest.raises(k.KubectlArgError, match="is not a Kubernetes name"):
        call(verb="get", kind="node", names=["a b"])


def test_only_the_options_a_verb_takes_here_pass():
    argv = call(verb="drain", kind="node", names=["n1"], options=["--ignore-daemonsets", "--timeout=600s", "--grace-period=30"])
    assert argv[-3:] == ["--ignore-daemonsets", "--timeout=600s", "--grace-period=30"]
    with pytest.raises(k.KubectlArgError, match="--force is not an option of kubectl drain"):
        call(verb="drain", kind="node", names=["n1"], options=["--force"])
    with pytest.raises(k.KubectlArgError, match="--disable-eviction"):
        call(verb="drain", kind="node", names=["n1"], options=["--disable-eviction"])
    with pytest.raises(k.KubectlArgError, match="not a key=value"):
        call(verb="annotate", kind="node", names=["n1"], arguments=["--all"])


def test_namespaces_selectors_and_stdin():
    assert call(verb="get", kind="pods", all_namespaces=True, field_selector="spec.nodeName=n1", output="json")[3:] == [
        "get", "pods", "--all-namespaces", "--field-selector=spec.nodeName=n1", "-o", "json"]
    # the argv as the calls wrote it before the action (the tests' fake kubectls match it)
    assert " ".join(call(verb="get", kind="lease", names=["rke2-numa-roll"], namespace="rke2-numa-system",
                         options=["--ignore-not-found"], output="json")[1:]) == \
        "--kubeconfig /kc get lease rke2-numa-roll --namespace rke2-numa-system --ignore-not-found -o json"
    pods = json.dumps({"kind": "List", "items": [{"kind": "Pod", "apiVersion": "v1"}]})
    assert call(verb="create", kind="pod", stdin=pods, options=["--validate=false"], output="name")[3:] == [
        "create", "--validate=false", "-o", "name", "-f", "-"]
    with pytest.raises(k.KubectlArgError, match="reads its object from stdin"):
        call(verb="create", kind="pod", names=["a"], stdin=pods)
    with pytest.raises(k.KubectlArgError, match="stdin holds lease, not pod"):
        call(verb="create", kind="pod", stdin=json.dumps({"kind": "Lease"}))
    with pytest.raises(k.KubectlArgError, match="namespace"):
        call(verb="get", kind="pods", namespace="Bad_NS")
    with pytest.raises(k.KubectlArgError, match="unknown resource"):
        call(verb="get", kind="secrets")


def test_each_call_declares_the_requests_rbac_grants():
    drain = dict(BASE, verb="drain", kind="node", names=["n1"], options=["--ignore-daemonsets"])
    verbs = {(r["verb"], r["resource"]) for r in k.call_requests(drain)}
    assert ("create", "pods/eviction") in verbs and ("patch", "nodes") in verbs
    lease = json.dumps({"kind": "Lease", "apiVersion": "coordination.k8s.io/v1", "metadata": {"name": "l"}})
    create = dict(BASE, verb="create", kind="lease", namespace="ns", stdin=lease)
    k.call_argv(create)
    assert k.call_requests(create) == [{"verb": "create", "group": "coordination.k8s.io", "resource": "leases",
                                        "namespace": "ns", "named": False}]


@pytest.mark.parametrize("verb, rc, stdout, stderr, failed, changed", [
    ("cordon", 0, "node/n1 cordoned\n", "", False, True),
    ("cordon", 0, "node/n1 already cordoned\n", "", False, False),
    # kubectl cordon exits 0 when the API refuses its patch
    ("cordon", 0, "", "error: unable to cordon node \"n1\": nodes \"n1\" is forbidden\n", True, False),
    ("uncordon", 0, "", "error: unable to uncordon node \"n1\": ...\n", True, False),
    ("get", 0, "{}", "", False, False),
    ("get", 1, "", "Error from server (NotFound): nodes \"n1\" not found\n", True, False),
    ("annotate", 0, "node/n1 annotated\n", "", False, True),
])
def test_the_answer_in_kubectl_s_words(verb, rc, stdout, stderr, failed, changed):
    out = k.call_result(verb, "json" if verb == "get" else None, rc, stdout, stderr)
    assert (out["failed"], out["changed"]) == (failed, changed)
    if failed:
        assert out["msg"] == stderr.strip().removeprefix("error: ")
    if verb == "get" and not failed:
        assert out["object"] == {}


def test_when_kubectl_cannot_start_the_command_module_s_words_are_kept():
    """The pod audit names a kubectl that is not there from them (prove.audit_error)."""
    out = k.call_result("get", "json", 2, "", "", "[Errno 2] No such file or directory: b'/nonexistent/kubectl'")
    assert out["failed"] and out["msg"] == "[Errno 2] No such file or directory: b'/nonexistent/kubectl'"
    out = k.call_result("get", "json", 1, "", "error: Unauthorized\n", "non-zero return code")
    assert out["msg"] == "Unauthorized"
