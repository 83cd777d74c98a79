#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writes files/rbac/rke2-numa.yaml: plugins/plugin_utils/rbac.py's manifest with the default names
(tests/unit/plugins/plugin_utils/test_rbac.py checks that the file is that rendering).

    python scripts/rbac_manifest.py [OUT]    (make rbac)
"""

import os
import sys

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, ".build"))

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import rbac  # noqa: E402  pylint: disable=wrong-import-position

HEADER = """\
# The identity maitred.rke2_numa's playbooks need in the cluster, and nothing more:
# the ServiceAccount {ns}/{name}, a ClusterRole (Nodes, pods, evictions, DaemonSets read),
# a Role in the probe namespace {probe} (restricted Pod Security) and a Role on kured's
# DaemonSet kube-system/kured alone (its reboot lock). Each rule and the kubectl call that
# needs it: docs/ACCESS.md.
#
# Generated from plugins/plugin_utils/rbac.py by scripts/rbac_manifest.py (make rbac): do
# not edit. playbooks/access.yml applies it with the names of your inventory (another
# probe namespace, kured installed elsewhere) and writes a kubeconfig with a bound token;
# by hand: kubectl apply --server-side --field-manager={manager} -f rke2-numa.yaml
"""


def render():
    docs = rbac.manifest()
    text = HEADER.format(ns=rbac.IDENTITY_NAMESPACE, name=rbac.NAME, probe=rbac.PROBE_NAMESPACE, manager=rbac.FIELD_MANAGER)
    return text + "".join("---\n" + yaml.safe_dump(d, sort_keys=False, default_flow_style=False) for d in docs)


def main(argv):
    out = argv[1] if len(argv) > 1 else os.path.join(REPO, "files", "rbac", "rke2-numa.yaml")
    with open(out, "w", encoding="utf-8") as handle:
        handle.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
