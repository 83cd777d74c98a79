"""ansible-doc renders every plugin and role the collection ships."""
import glob
import importlib
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PREFIX = "maitred.rke2_numa."


def ansible_doc(*args):
    bin_dir = os.path.dirname(sys.executable)
    out = subprocess.run([os.path.join(bin_dir, "ansible-doc")] + list(args), capture_output=True, text=True,
                         check=True, env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build")))
    return json.loads(out.stdout)


def names(kind):
    if kind == "module":
        return sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(REPO, "plugins", "modules", "*.py")))
    if kind == "role":
        return sorted(os.path.basename(p) for p in glob.glob(os.path.join(REPO, "roles", "*")))
    found = set()
    for path in glob.glob(os.path.join(REPO, "plugins", "filter", "*.py")):
        module = importlib.import_module("ansible_collections.maitred.rke2_numa.plugins.filter."
                                         + os.path.basename(path)[:-3])
        found.update(module.FilterModule().filters())
    return sorted(found)


@pytest.mark.parametrize("kind", ["module", "filter", "role"])
def test_every_plugin_and_role_has_docs(kind):
    shipped = names(kind)
    assert shipped
    docs = ansible_doc("--json", "-t", kind, *[PREFIX + name for name in shipped])
    assert sorted(docs) == [PREFIX + name for name in shipped]
    for name, doc in docs.items():
        if kind == "role":
            assert doc["entry_points"]["main"]["short_description"], name
        else:
            assert doc["doc"]["short_description"] and doc["examples"] and doc["return"], name
