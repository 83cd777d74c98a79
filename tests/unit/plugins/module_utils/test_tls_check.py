# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The TLS handshake before a token goes to another server: a real TLS server on 127.0.0.1 (the API stand-in's
self-signed certificate), verified with its own CA, refused with another CA, another name, or nobody listening."""

from __future__ import annotations

import base64
import socket
import ssl
import threading

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.tls_check import ca_pem, handshake_refusal
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBEAPI_PATH, _load

kubeapi = _load("kubeapi_standin_for_tls", KUBEAPI_PATH)
CERT, KEY = kubeapi.self_signed_certificate()
OTHER_CERT, _OTHER_KEY = kubeapi.self_signed_certificate()


@pytest.fixture
def server(tmp_path):
    """A TLS listener that completes handshakes and reads nothing (the check sends no request); its received bytes."""
    (tmp_path / "tls.crt").write_text(CERT)
    (tmp_path / "tls.key").write_text(KEY)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"))
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(5)
    received = []

    def serve():
        while True:
            try:
                conn, _addr = listener.accept()
            except OSError:
                return
            try:
                with context.wrap_socket(conn, server_side=True) as tls:
                    tls.settimeout(1)
                    try:
                        received.append(tls.recv(100))
                    except (OSError, ssl.SSLError):
                        pass
            except (OSError, ssl.SSLError):
                conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield "https://127.0.0.1:%d" % listener.getsockname()[1], received
    listener.close()


def test_a_server_whose_certificate_the_ca_verifies_passes_and_gets_no_request(server):
    url, received = server
    assert handshake_refusal(url, CERT) == ""
    assert handshake_refusal(url + "/k8s/clusters/c-1", CERT, server_name="localhost") == "", "a path, and tls-server-name"
    assert all(r in (b"", None) for r in received), "nothing but the handshake: no request, no credentials"


def test_another_ca_or_name_or_nobody_is_refused_naming_the_url(server):
    url, _received = server
    assert "did not prove it is the cluster's API server" in handshake_refusal(url, OTHER_CERT)
    assert "did not prove it" in handshake_refusal(url, CERT, server_name="api.example.com")
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    assert "cannot be reached from here" in handshake_refusal("https://127.0.0.1:%d" % port, CERT, timeout=2)
    assert "not an https URL" in handshake_refusal("http://127.0.0.1:1", CERT)


def test_the_ca_comes_from_the_file_or_the_admin_kubeconfig(tmp_path):
    path = tmp_path / "ca.pem"
    path.write_text(CERT)
    assert ca_pem("ignored", str(path)) == (CERT, None)
    assert ca_pem(base64.b64encode(CERT.encode()).decode(), None) == (CERT, None)
    assert "no CA" in ca_pem("", None)[1]
    assert "not base64" in ca_pem("%%%", None)[1]
    assert "cannot be read" in ca_pem(None, str(tmp_path / "missing.pem"))[1]
    (tmp_path / "key.pem").write_text("not a certificate")
    assert "holds no PEM certificate" in ca_pem(None, str(tmp_path / "key.pem"))[1]
