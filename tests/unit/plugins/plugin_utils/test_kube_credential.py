# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""AWX's Kubernetes bearer-token credential as kubectl's kubeconfig (plugin_utils/kube_credential.py): written from
the K8S_AUTH_* variables AWX's injector sets, only for a call, 0600 in a private folder; refused when it would not
verify the API server; the token in no message."""

from __future__ import annotations

import os
import stat

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kube_credential import (
    FROM_ENV, CredentialError, argv_with_credential, env_kubeconfig)

TOKEN = "eyJhbGciOiJSUzI1NiJ9.secret-part"


@pytest.fixture
def environ(tmp_path):
    ca = tmp_path / "ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    # as AWX's injector (awx/main/models/credential/injectors.py kubernetes_bearer_token) sets them
    return {"K8S_AUTH_HOST": "https://10.0.0.1:6443", "K8S_AUTH_API_KEY": TOKEN, "K8S_AUTH_VERIFY_SSL": "True",
            "K8S_AUTH_SSL_CA_CERT": str(ca)}


def test_the_kubeconfig_names_the_server_its_ca_and_the_token(environ):
    config = yaml.safe_load(env_kubeconfig(environ))
    cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
    assert (cluster, user) == ({"server": "https://10.0.0.1:6443", "certificate-authority": environ["K8S_AUTH_SSL_CA_CERT"]}, {"token": TOKEN})
    assert config["current-context"] == config["contexts"][0]["name"] and "insecure-skip-tls-verify" not in str(config)


@pytest.mark.parametrize("change, message", [
    ({"K8S_AUTH_VERIFY_SSL": "False"}, "does not verify the API server's certificate (K8S_AUTH_VERIFY_SSL false)"),
    ({"K8S_AUTH_SSL_CA_CERT": "/nonexistent/ca.crt"}, "K8S_AUTH_SSL_CA_CERT '/nonexistent/ca.crt' is not a file"),
    ({"K8S_AUTH_HOST": "http://10.0.0.1:6443"}, "is not the https URL of an API server"),
    ({"K8S_AUTH_HOST": ""}, "K8S_AUTH_HOST is not set"),
    ({"K8S_AUTH_API_KEY": ""}, "K8S_AUTH_API_KEY is not set"),
    ({"K8S_AUTH_API_KEY": TOKEN + " more"}, "not one bearer token"),
])
def test_a_credential_that_would_not_verify_the_server_or_is_incomplete_is_refused_without_its_token(environ, change, message):
    with pytest.raises(CredentialError) as caught:
        env_kubeconfig(dict(environ, **change))
    assert message in str(caught.value) and "secret-part" not in str(caught.value)


def test_the_kubeconfig_lives_for_the_call_only_0600_in_a_private_folder(environ, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    with argv_with_credential(["kubectl", "--kubeconfig", FROM_ENV, "get", "nodes"], environ) as argv:
        path = argv[2]
        assert argv[:2] + argv[3:] == ["kubectl", "--kubeconfig", "get", "nodes"] and path.startswith(str(tmp_path / "tmp"))
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
        assert yaml.safe_load(open(path).read())["users"][0]["user"]["token"] == TOKEN
    assert os.listdir(str(tmp_path / "tmp")) == []
    with pytest.raises(RuntimeError):   # removed when the call fails too
        with argv_with_credential(["kubectl", "--kubeconfig", FROM_ENV], environ):
            raise RuntimeError("kubectl failed")
    assert os.listdir(str(tmp_path / "tmp")) == []
    with argv_with_credential(["kubectl", "--kubeconfig", "/etc/rancher/rke2/rke2.yaml"], {}) as argv:   # a path: as given
        assert argv == ["kubectl", "--kubeconfig", "/etc/rancher/rke2/rke2.yaml"]
