# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which RKE2 (and so which kubelet) a host runs, read from files only - nothing is executed.

RKE2 runs the kubelet from the runtime image it extracted: rancher/rke2 pkg/bootstrap/bootstrap.go ``Stage`` extracts
the image's ``/bin`` into ``<data-dir>/data/<refDigest>/bin`` and points the symlink ``<data-dir>/bin`` at it
(``symlinkBinDir``); ``releaseRefDigest`` names the folder after the image's tag when the tag is a version
(``releasePattern`` ``^v[0-9]``) - ``v1.37.2-rke2r1`` (an image tag cannot hold the ``+`` of ``v1.37.2+rke2r1``)
- followed by ``-`` and 12 hex digits; a runtime image given by digest leaves no version in the name (then None).
The kubelet in that folder is RKE2's own build: its ``--version`` is the RKE2 version (``Kubernetes v1.37.2+rke2r1``).
"""

from __future__ import annotations

import os
import re

DEFAULT_DATA_DIR = "/var/lib/rancher/rke2"
# releaseRefDigest of a version tag: "<tag>-<12 hex>", the tag "v1.37.2-rke2r1" (rke2-runtime's tags)
# (a release candidate's too: v1.37.0-rc1-rke2r1, the release v1.37.0-rc1+rke2r1)
_RUNTIME_FOLDER = re.compile(r"^(v\d+\.\d+\.\d+(?:-rc\d+)?)-(rke2r\d+)-[0-9a-f]{12}$")


def runtime_version(data_dir=DEFAULT_DATA_DIR, root="/"):
    """{"version", "path", "link", "error"}: the RKE2 version of the runtime ``<data-dir>/bin`` points at
    (``v1.37.2+rke2r1``), or None with why in ``error`` (no RKE2 there, or a runtime image given by digest)."""
    path = os.path.join(root, data_dir.lstrip("/"))
    out = {"version": None, "path": os.path.join(data_dir, "bin"), "link": None, "error": None}
    try:
        out["link"] = os.readlink(os.path.join(path, "bin"))
    except (IOError, OSError) as e:
        out["error"] = "%s: %s" % (out["path"], "no such symlink (RKE2 is not installed there)" if e.errno == 2 else e.strerror)
        return out
    folder = os.path.basename(os.path.dirname(out["link"].rstrip("/")))
    match = _RUNTIME_FOLDER.match(folder)
    if not match:
        out["error"] = ("%s -> %s: the runtime folder %r holds no version (a runtime image given by digest)"
                        % (out["path"], out["link"], folder))
        return out
    out["version"] = "%s+%s" % match.groups()
    return out
