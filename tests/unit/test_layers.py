# -*- coding: utf-8 -*-
"""The layers of docs/ARCHITECTURE.md, one way only: module_utils (the host) imports only
module_utils; plugin_utils (the controller's rules) imports module_utils and plugin_utils,
never a filter or an action (the adapters sit on top of it). It may read a module's
DOCUMENTATION: a module's options (choices, defaults) are written there once."""

from __future__ import annotations

import glob
import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ALLOWED = {"module_utils": {"module_utils"}, "plugin_utils": {"module_utils", "plugin_utils", "modules"}}


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
