# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The API server's naming rules (apimachinery validation.go, labels/selector.go)."""
from __future__ import annotations

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kube_names import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_selector_errors,
    qualified_name_errors,
)


@pytest.mark.parametrize("name", ["gpu-a", "gpu-a.example.com", "0", "a" * 253, "n1.rack-2.dc3"])
def test_node_names_the_api_server_accepts(name):
    assert dns1123_subdomain_errors(name) == []


@pytest.mark.parametrize("name", [
    "-l", "--selector=gpu=true", "-lgpu=true", "gpu-a/b", "gpu-a,gpu-b", "GPU-A", "gpu_a", "gpu a", "gpu-a.", ".gpu",
    "a" * 254, "", "node/gpu-a", "gpu-a\n", None, 7, ["gpu-a"]])
def test_anything_else_is_not_a_node_name(name):
    assert dns1123_subdomain_errors(name)


def test_a_namespace_is_a_label_of_at_most_63():
    assert dns1123_label_errors("kube-system") == []
    assert dns1123_label_errors("a" * 64) == ["must be no more than 63 characters"]
    assert dns1123_label_errors("kube.system")


@pytest.mark.parametrize("key", ["weave.works/kured-reboot-in-progress", "plain", "a.b/C_d.e-f"])
def test_qualified_names(key):
    assert qualified_name_errors(key) == []


@pytest.mark.parametrize("key", ["a/b/c", "/x", "-x", "x-", "Example.com/x", "a" * 64])
def test_not_qualified_names(key):
    assert qualified_name_errors(key)


@pytest.mark.parametrize("selector", [
    "app=vllm", "app==vllm", "app!=vllm", "app", "!app", "app in (a, b)", "app notin (a,b,)",
    "app=vllm,tier!=batch", "  app = vllm , !legacy ", "example.com/gpu=true", "prio>1", "prio<-2", "app="])
def test_label_selectors_kubectl_accepts(selector):
    assert label_selector_errors(selector) == []


@pytest.mark.parametrize("selector, words", [
    ("app=vllm tier=x", "expected: ',' or 'end of string'"),
    ("app in vllm", "expected: '(' after in"),
    ("app in (a b)", "expected: ',' or ')'"),
    ("tier in ()", "values set can't be empty"),
    ("app>x", "must be an integer"),
    ("=x", "expected: !, identifier"),
    ("app,", "expected: !, identifier"),
    ("App-/x=1", "prefix part"),
    ("app=-x", "value '-x'"),
    ("!", "identifier after '!'"),
    ("", "must not be empty"),
])
def test_label_selectors_kubectl_refuses(selector, words):
    errors = label_selector_errors(selector)
    assert errors and words in "; ".join(errors), errors
