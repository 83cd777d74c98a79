# -*- coding: utf-8 -*-
"""Fixtures of the controller-side tests that judge a node copy (test_compliance, test_kubelet_config_file)."""

from __future__ import annotations

import json

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.maitred.rke2_numa.plugins.modules import node_state_info
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import TOKEN, make_node


@pytest.fixture
def node(tmp_path, capsys):
    """A fresh RKE2 GPU worker (2 x 4 cores, SMT, 2 GPUs) on a filesystem copy, and its plan."""
    root = make_node(tmp_path / "node", sockets=2, cores_per_socket=4, threads=2, gpus_per_node=1)

    def state(**more):
        with patch_module_args(dict(dict(sysfs_root=str(root), boot_root=str(root), boot_method="auto",
                                         kubelet_dir=str(root / "var/lib/kubelet"),
                                         config_path=str(root / "etc/rancher/rke2/config.yaml"), units_root=str(root),
                                         rancher_root=str(root)), **more)):
            with pytest.raises(SystemExit) as exc:
                node_state_info.main()
        out = capsys.readouterr().out
        assert exc.value.code == 0, out
        assert TOKEN not in out and "server" not in json.loads(out)["rke2"]["files"][0]["values"]
        result = json.loads(out)
        for f in result["rke2"]["files"]:  # the tests do not run as root everywhere: the owner is the module's truth
            if f["exists"] and f["mode"] == "0600":
                f.update(owner="root", group="root")
        return result

    topology = state()["topology"]
    plan = make_plan(topology)
    return root, plan, state
