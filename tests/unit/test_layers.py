# -*- coding: utf-8 -*-
"""The layers of docs/ARCHITECTURE.md, one way only: module_utils (the host) imports only
module_utils; plugin_utils (the controller's rules) imports module_utils and plugin_utils,
never a filter, an action or a module (the adapters sit on top of it): what a module's
documentation and the rules share is declared in plugin_utils or the roles' argument specs,
and the documentation generated from it (make specs). Controller code opens the collection's
own files only through plugin_utils/collection_files.py."""

from __future__ import annotations

import glob
import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ALLOWED = {"module_utils": {"module_utils"}, "plugin_utils": {"module_utils", "plugin_utils"}}


def imports(path):
    with open(path) as f:
        return re.findall(r"ansible_collections\.maitred\.rke2_numa\.plugins\.(\w+)", f.read())


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_each_layer_imports_only_the_layers_below_it(layer):
    wrong = {}
    for path in sorted(glob.glob(os.path.join(REPO, "plugins", layer, "*.py"))):
        bad = sorted(set(imports(path)) - ALLOWED[layer])
        if bad:
            wrong[os.path.relpath(path, REPO)] = bad
    assert not wrong, "imports against the layers: %s" % wrong


def test_only_collection_files_walks_the_collection_s_tree():
    """No plugin finds a file by climbing from its own location (``__file__``, ``os.pardir``): report.py read its
    page template through ``../../playbooks/templates``; the collection's files are declared in collection_files.py."""
    walkers = []
    for path in sorted(glob.glob(os.path.join(REPO, "plugins", "**", "*.py"), recursive=True)):
        with open(path) as f:
            text = f.read()
        if re.search(r"__file__|os\.pardir", text) and not path.endswith(os.path.join("plugin_utils", "collection_files.py")):
            walkers.append(os.path.relpath(path, REPO))
    assert walkers == []


def test_every_declared_collection_file_is_there():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.collection_files import FILES, collection_file
    assert FILES and all(os.path.exists(collection_file(name)) for name in FILES)
