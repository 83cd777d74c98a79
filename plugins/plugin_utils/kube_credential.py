# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""AWX's Kubernetes bearer-token credential as kubectl's kubeconfig (rke2_numa_kubeconfig ``env:K8S_AUTH``).

An AWX job has no server of the cluster in a slice of a sliced job, so kubectl runs in the execution environment
(the controller) with the cluster's credential. AWX's "OpenShift or Kubernetes API Bearer Token" credential puts it
in the job's environment (awx/main/models/credential/injectors.py ``kubernetes_bearer_token``): K8S_AUTH_HOST (the
API server), K8S_AUTH_API_KEY (the token), K8S_AUTH_VERIFY_SSL ``True`` with K8S_AUTH_SSL_CA_CERT (a file of the CA
certificate) when the credential verifies the server, else ``False``. kubectl reads no such variable: for each call a
kubeconfig is written from them into a private folder (0700, the file 0600) and removed when the call is done - the
token never in an argv, a log or a result. A credential that does not verify the API server's certificate is refused
(the token would go to whoever answers).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile

import yaml

FROM_ENV = "env:K8S_AUTH"


class CredentialError(ValueError):
    """The environment holds no usable credential; the message never holds the token."""


def env_kubeconfig(environ):
    """The kubeconfig text of the K8S_AUTH_* credential in ``environ``."""
    host, token = (environ.get("K8S_AUTH_HOST") or "").strip(), environ.get("K8S_AUTH_API_KEY") or ""
    verify, ca = (environ.get("K8S_AUTH_VERIFY_SSL") or "").strip().lower(), environ.get("K8S_AUTH_SSL_CA_CERT") or ""
    errors = []
    if not host.startswith("https://") or any(c in host for c in " \t\r\n@?#"):
        errors.append("K8S_AUTH_HOST %s is not the https URL of an API server" % ("is not set" if not host else repr(host)))
    if not token.strip() or any(c in token for c in " \t\r\n"):
        errors.append("K8S_AUTH_API_KEY is %s" % ("not set" if not token.strip() else "not one bearer token (it has white space)"))
    if verify not in ("true", "1", "yes"):
        errors.append("the credential does not verify the API server's certificate (K8S_AUTH_VERIFY_SSL %s): give it the cluster's CA "
                      "certificate and Verify SSL" % (verify or "not set"))
    elif not os.path.isabs(ca) or not os.path.isfile(ca):
        errors.append("K8S_AUTH_SSL_CA_CERT %s is not a file of the CA certificate" % (repr(ca) if ca else "is not set"))
    if errors:
        raise CredentialError("rke2_numa_kubeconfig %s: %s" % (FROM_ENV, "; ".join(errors)))
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "awx", "preferences": {},
        "clusters": [{"name": "awx", "cluster": {"server": host, "certificate-authority": ca}}],
        "users": [{"name": "awx", "user": {"token": token}}],
        "contexts": [{"name": "awx", "context": {"cluster": "awx", "user": "awx"}}],
    }, default_flow_style=False, sort_keys=False)


@contextlib.contextmanager
def argv_with_credential(argv, environ):
    """``argv`` as it runs: a ``--kubeconfig env:K8S_AUTH`` pair points at a kubeconfig written from ``environ`` for the
    time of the call, then removed (with its private folder). Other argvs as they are."""
    argv = list(argv)
    at = [i for i in range(len(argv) - 1) if argv[i] == "--kubeconfig" and argv[i + 1] == FROM_ENV]
    if not at:
        yield argv
        return
    text = env_kubeconfig(environ)
    folder = tempfile.mkdtemp(prefix="rke2-numa-kube-")   # 0700
    try:
        path = os.path.join(folder, "kubeconfig")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        for i in at:
            argv[i + 1] = path
        yield argv
    finally:
        shutil.rmtree(folder, ignore_errors=True)
