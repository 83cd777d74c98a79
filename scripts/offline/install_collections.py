# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Put the collections Molecule needs into this Python's site-packages.

Galaxy is unreachable from our machines and CI, so the collections that
molecule-plugins' podman driver needs (``containers.podman``) and our callback
(``ansible.posix.profile_tasks``) are taken out of the ``ansible`` community
wheel on PyPI, without installing that whole package. They land in
``<site-packages>/ansible_collections``, which ansible-core searches by itself.

Work already done is skipped: a stamp next to them names the wheel they came
from. The wheel is the newest ``ansible`` of the ansible-core line in the venv
(requirements-dev.txt: core 2.21 -> ansible 14; the Python 3.11 fallback:
core 2.19 -> ansible 12).

Usage: ``.venv/bin/python scripts/offline/install_collections.py [COLLECTION ...]``
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

# ansible-core minor -> the `ansible` release that ships with it.
ANSIBLE_WHEEL = {"2.19": "ansible==12.3.0", "2.20": "ansible==13.8.0", "2.21": "ansible==14.5.0"}
DEFAULT_COLLECTIONS = ("containers.podman", "ansible.posix")


def wheel_spec():
    """The ``ansible`` requirement that matches the installed ansible-core."""
    from ansible.release import __version__ as core  # pylint: disable=import-outside-toplevel

    minor = ".".join(core.split(".")[:2])
    if minor not in ANSIBLE_WHEEL:
        raise SystemExit("install_collections: no ansible wheel known for ansible-core %s; add it to ANSIBLE_WHEEL" % core)
    return ANSIBLE_WHEEL[minor]


def extract(wheel, dest, collections):
    """Extract each collection's files from the wheel into dest; return their versions."""
    versions = {}
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        for coll in collections:
            namespace, name = coll.split(".")
            prefix = "ansible_collections/%s/%s/" % (namespace, name)
            members = [m for m in names if m.startswith(prefix)]
            if not members:
                raise SystemExit("install_collections: %s is not in %s" % (coll, os.path.basename(wheel)))
            z.extractall(dest, members)
            versions[coll] = json.loads(z.read(prefix + "MANIFEST.json"))["collection_info"]["version"]
    return versions


def main():
    collections = sys.argv[1:] or list(DEFAULT_COLLECTIONS)
    spec = wheel_spec()
    dest = sysconfig.get_paths()["purelib"]
    stamp = os.path.join(dest, "ansible_collections", ".rke2-numa-collections")
    want = "%s %s" % (spec, " ".join(sorted(collections)))
    try:
        with open(stamp, encoding="utf-8") as f:
            if f.read().strip() == want:
                print("collections: %s from %s already installed" % (", ".join(collections), spec))
                return
    except OSError:
        pass

    with tempfile.TemporaryDirectory() as tmp:
        # -qq: this machine's index prints a warning per missing mirror folder.
        subprocess.run([sys.executable, "-m", "pip", "download", "-qq", "--no-deps", "-d", tmp, spec], check=True)
        wheels = [f for f in os.listdir(tmp) if f.startswith("ansible-") and f.endswith(".whl")]
        if len(wheels) != 1:
            raise SystemExit("install_collections: expected one ansible wheel, pip downloaded %s" % wheels)
        versions = extract(os.path.join(tmp, wheels[0]), dest, collections)
    with open(stamp, "w", encoding="utf-8") as f:
        f.write(want + "\n")
    print("collections: %s from %s into %s" % (", ".join("%s %s" % kv for kv in versions.items()), spec, dest))


if __name__ == "__main__":
    main()
