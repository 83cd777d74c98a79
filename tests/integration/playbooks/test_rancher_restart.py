# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rancher's 3 a.m. restart, on a node copy: the rke2 stand-in's Rancher mode (its system-agent writes
50-rancher.yaml as the planner does and restarts rke2 when the restart stamp changes, never touching the
checkpoints), then one start of `rke2 agent` reading RKE2's files as RKE2 does.

- merge mode (the old default) left the plan in config.yaml: the first kubelet argument a Rancher user sets replaces
  it, and the kubelet refuses its static checkpoint - the node goes NotReady without a drain;
- rke2_numa_config_mode auto (the default) moved the plan into our drop-in after Rancher's: the kubelet starts with
  our policy on the same restart, Rancher's argument kept;
- an explicit merge on the Rancher node is refused before any write.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import TOKEN, comply, make_node, rke2, tree

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="the rke2_config action writes root:root files, as on a node")]


@pytest.fixture
def merged(tmp_path):
    """A Rancher-provisioned worker that merge mode configured: the plan in config.yaml, the kubelet running it
    (static checkpoints), Rancher's system-agent installed and its plan applied once."""
    root = make_node(tmp_path / "node", sockets=2, cores_per_socket=4, threads=2, gpus_per_node=1)
    topology = __import__("ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology",
                          fromlist=["x"]).read_topology(str(root))
    plan = make_plan(topology)
    comply(root, plan)
    (root / "etc/systemd/system").mkdir(parents=True)
    (root / "etc/systemd/system/rancher-system-agent.service").write_text("[Service]\nExecStart=/usr/local/bin/rancher-system-agent sentinel\n")
    assert rke2.rancher_apply(str(root / "etc/rancher/rke2/config.yaml"), str(root), "m-1") is True
    return root, plan


def rke2_config(tmp_path, root, plan, *extra, **args):
    playbook = tmp_path / "play.yml"
    task = dict(path=str(root / "etc/rancher/rke2/config.yaml"), dropin_path=str(root / "etc/rancher/rke2/config.yaml.d/90-rke2-numa.yaml"),
                kubelet_args=plan["kubelet_args"], backup_dir=str(tmp_path / "backup"), rancher_root=str(root), **args)
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False,
                                         "tasks": [{"maitred.rke2_numa.rke2_config": task}]}]))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
           "-e", "ansible_python_interpreter=%s" % sys.executable, str(playbook)] + list(extra)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    assert TOKEN not in out.stdout + out.stderr
    return out


def restart_by_rancher(root):
    """A Rancher user sets a kubelet argument: the system-agent rewrites 50-rancher.yaml and, the stamp changed,
    restarts rke2 - one start of the agent on the checkpoints the kubelet left."""
    config = str(root / "etc/rancher/rke2/config.yaml")
    assert rke2.rancher_apply(config, str(root), "m-1", kubelet_args=["max-pods=200"]) is True
    return rke2.kubelet_start(config, str(root), str(root / "var/lib/kubelet"))


def test_merge_mode_s_plan_is_replaced_by_rancher_s_first_kubelet_arg_and_the_kubelet_refuses_its_checkpoint(merged):
    """What the old default leaves behind (and what the check now says before it happens)."""
    root, plan = merged
    with pytest.raises(rke2.KubeletRefusal) as refused:
        restart_by_rancher(root)
    assert 'configured policy "none" differs from state checkpoint policy "static"' in refused.value.err


def test_auto_moves_the_plan_after_rancher_s_file_and_the_kubelet_starts_with_it_after_rancher_s_restart(tmp_path, merged):
    root, plan = merged
    config = root / "etc/rancher/rke2/config.yaml"
    before = config.read_text()
    out = rke2_config(tmp_path, root, plan)
    assert out.returncode == 0 and "changed=1" in out.stdout, out.stdout + out.stderr
    assert sorted(os.listdir(str(root / "etc/rancher/rke2/config.yaml.d"))) == ["50-rancher.yaml", "90-rke2-numa.yaml"]
    assert "max-pods=250" in config.read_text() and TOKEN in config.read_text() and config.read_text() != before
    assert not any(a in config.read_text() for a in plan["kubelet_args"])
    # the move changes nothing the kubelet reads: it still starts on its checkpoints
    assert rke2.kubelet_start(str(config), str(root), str(root / "var/lib/kubelet"))["cpu_manager_policy"] == "static"
    # Rancher's restart with a kubelet argument of its own: ours still there, appended after Rancher's
    started = restart_by_rancher(root)
    assert started["cpu_manager_policy"] == "static" and started["memory_manager_policy"] == "Static", started
    merged_args = rke2.load_config(rke2.config_files(str(config), str(config) + ".d"))["kubelet-arg"]
    assert merged_args[0] == "max-pods=200" and merged_args[1:] == plan["kubelet_args"], merged_args


def test_an_explicit_merge_on_the_rancher_node_is_refused_before_any_write(tmp_path, merged):
    root, plan = merged
    before = tree(root)
    out = rke2_config(tmp_path, root, plan, mode="merge")
    assert out.returncode != 0 and "rke2_numa_config_mode=merge on a node Rancher manages" in out.stdout, out.stdout
    assert tree(root) == before
