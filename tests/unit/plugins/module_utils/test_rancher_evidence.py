# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rancher's evidence on a node's filesystem copy: each file rancher-system-agent or Rancher's planner leaves."""

from __future__ import annotations

import os

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.rancher import read_rancher


def config(root):
    path = root / "etc/rancher/rke2/config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("server: https://10.0.0.1:9345\n")
    return str(path)


def test_a_plain_rke2_node_is_managed_by_none(tmp_path):
    assert read_rancher(str(tmp_path), config(tmp_path)) == {"managed_by": "none", "evidence": [], "at_work": []}


@pytest.mark.parametrize("rel, what", [
    ("etc/rancher/rke2/config.yaml.d/50-rancher.yaml", "Rancher's RKE2 settings"),
    ("etc/systemd/system/rancher-system-agent.service", "rancher-system-agent's unit"),
    ("etc/rancher/agent/config.yaml", "rancher-system-agent's configuration"),
    ("var/lib/rancher/rke2/system-agent-installer/rke2_restart_stamp", "Rancher's restart stamp for rke2"),
])
def test_each_file_alone_is_evidence(tmp_path, rel, what):
    path = config(tmp_path)
    (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / rel).write_text("x\n")
    found = read_rancher(str(tmp_path), path)
    assert found["managed_by"] == "rancher" and len(found["evidence"]) == 1 and what in found["evidence"][0], found
    assert found["at_work"] == []


def test_rancher_s_file_is_looked_for_beside_the_config_path_not_under_the_root(tmp_path):
    elsewhere = tmp_path / "other"
    path = config(elsewhere)
    (elsewhere / "etc/rancher/rke2/config.yaml.d").mkdir()
    (elsewhere / "etc/rancher/rke2/config.yaml.d/50-rancher.yaml").write_text("node-label: []\n")
    assert read_rancher(str(tmp_path / "root"), path)["managed_by"] == "rancher"


@pytest.mark.parametrize("var", ["var/lib/rancher/agent", "etc/rancher/agent/var"])
def test_an_interlock_says_rancher_is_at_work_with_its_age(tmp_path, var):
    path = config(tmp_path)
    lock = tmp_path / var / "interlock/applyinator-active"
    lock.parent.mkdir(parents=True)
    lock.write_text("")
    os.utime(str(lock), (1000, 1000))
    found = read_rancher(str(tmp_path), path, now=1042)
    assert found["managed_by"] == "rancher", found
    assert found["at_work"] == ["rancher-system-agent is applying a plan (/%s/interlock/applyinator-active, for 42 s)" % var]
