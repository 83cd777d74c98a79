# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A TLS handshake with an API server before any token goes there (host side, on the host that will run kubectl).

access.yml sends the scoped kubeconfig's token only to the admin kubeconfig's server, or to another https URL
whose certificate a CA verifies - the admin kubeconfig's, or ``rke2_numa_access_ca``. This checks the second case
before the token exists: a TCP connection and a TLS handshake, the certificate verified against that CA and the
host name (or ``tls-server-name``, as client-go's ServerName); no HTTP request, no credentials, nothing sent but
the ClientHello.
"""

from __future__ import annotations

import base64
import binascii
import socket
import ssl
import urllib.parse

PEM_BEGIN = "-----BEGIN CERTIFICATE-----"
CA_MAX_BYTES = 1024 * 1024   # a CA bundle, not a disk image


def ca_pem(data=None, path=None):
    """(PEM text, None) of the CA: the file at ``path`` when given, else ``data`` (a kubeconfig's
    certificate-authority-data: base64 of PEM); (None, why) when it is neither."""
    if path:
        try:
            with open(path, "rb") as handle:
                raw = handle.read(CA_MAX_BYTES + 1)
        except OSError as e:
            return None, "rke2_numa_access_ca %s cannot be read: %s" % (path, e.strerror or e)
        if len(raw) > CA_MAX_BYTES:
            return None, "rke2_numa_access_ca %s is larger than %d bytes: not a CA bundle" % (path, CA_MAX_BYTES)
        text = raw.decode("ascii", "replace")
        if PEM_BEGIN not in text:
            return None, "rke2_numa_access_ca %s holds no PEM certificate" % path
        return text, None
    if not data:
        return None, "the admin kubeconfig has no CA (certificate-authority-data) and rke2_numa_access_ca is empty"
    try:
        text = base64.b64decode(str(data), validate=True).decode("ascii")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None, "the admin kubeconfig's certificate-authority-data is not base64 of a PEM certificate"
    if PEM_BEGIN not in text:
        return None, "the admin kubeconfig's certificate-authority-data holds no PEM certificate"
    return text, None


def handshake_refusal(url, pem, server_name=None, timeout=10.0):
    """"" when a TLS handshake with ``url``'s host and port verifies the server's certificate with ``pem`` (and the
    name ``server_name`` or the URL's host); else why not, in words naming the URL."""
    try:
        parts = urllib.parse.urlsplit(url)
        host, port = parts.hostname, parts.port or 443
    except ValueError:
        return "rke2_numa_access_server %s is not a URL" % url
    if parts.scheme != "https" or not host:
        return "rke2_numa_access_server %s is not an https URL" % url
    try:
        context = ssl.create_default_context(cadata=pem)
    except (ssl.SSLError, ValueError) as e:
        return "the CA for %s cannot be loaded: %s" % (url, e)
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    try:
        with socket.create_connection((host, port), timeout=timeout) as raw:
            with context.wrap_socket(raw, server_hostname=server_name or host):
                pass
    except ssl.SSLCertVerificationError as e:
        return ("rke2_numa_access_server %s did not prove it is the cluster's API server: its certificate is not verified by the "
                "CA (%s)" % (url, e.verify_message or e.reason or e))
    except ssl.SSLError as e:
        return "rke2_numa_access_server %s: the TLS handshake failed (%s)" % (url, e.reason or e)
    except (OSError, socket.timeout) as e:
        return "rke2_numa_access_server %s cannot be reached from here: %s" % (url, e.strerror or e)
    return ""
