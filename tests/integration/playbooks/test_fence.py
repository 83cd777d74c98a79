# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fence before a roll's destructive steps (playbooks/tasks/fence.yml), as the roles include it, against the real
kubectl and the API stand-in: the step (the task after it) happens only while the Node is still cordoned under this
roll's marker, no maintainer is at work on it, and the Lease is still this run's (holder, leaseTransitions, its slot on
the node) - renewed carrying the resourceVersion read. A run suspended past its Lease (SIGSTOP, a laptop lid) while
another roll took over meets this fence at its next step."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import time

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBECTL, gpu_fleet, needs_kubectl
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_coordinated_rolls import NAME, NS, hold, lease, writes
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_hostile_inventory import CORDONED, PLAYBOOKS, REPO

pytestmark = needs_kubectl


@pytest.fixture
def api(tmp_path):
    yield from gpu_fleet(tmp_path, ("gpu-a", "gpu-b", "other-1"))


FENCE = os.path.join(PLAYBOOKS, "tasks", "fence.yml")
ROLL_LEASE_SECONDS = 900


def fence_play(api, tmp_path, transitions=0, first=False, node="gpu-a"):
    """playbooks/tasks/fence.yml, as rolling.yml's roles include it before a destructive step, for Node gpu-a of roll
    roll-a (this run: token aaaa, last wrote leaseTransitions ``transitions``); then a task that stands for the step."""
    root = tmp_path / "node"
    (root / "etc/rancher/rke2").mkdir(parents=True, exist_ok=True)
    roll = {"id": "roll-a", "run": "aaaa", "lease_seconds": ROLL_LEASE_SECONDS, "namespace": NS, "name": NAME, "marker": CORDONED,
            "failed": "rke2-numa.maitred.io/failed", "max_unavailable": 1, "nodes": ["gpu-a"], "serial": 1, "transitions": transitions,
            "kubectl": KUBECTL, "kubeconfig": api.kubeconfig, "host": "localhost", "held": True, "lock_wait": 0}
    playbook = tmp_path / "fence.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Fence", "hosts": "localhost", "gather_facts": False,
        "vars": {"rke2_numa_node_name": node, "rke2_numa_kubectl": KUBECTL, "rke2_numa_kubeconfig": api.kubeconfig,
                 "rke2_numa_kubectl_host": "localhost", "rke2_numa_boot_root": str(root),
                 "rke2_numa_config_path": str(root / "etc/rancher/rke2/config.yaml"), "__rke2_numa_fence_tasks": FENCE},
        "tasks": [{"name": "Shared variables", "ansible.builtin.import_role": {"name": "maitred.rke2_numa.common", "rolespec_validate": False}},
                  {"name": "The roll", "ansible.builtin.set_fact": {"rke2_numa_roll": roll}},
                  {"name": "Fence and step", "block": [
                      {"name": "Fence", "ansible.builtin.include_tasks": FENCE,
                       "vars": {"__rke2_numa_fence_step": "the boot parameters" if first else "the agent stop", "__rke2_numa_fence_first": first}},
                      {"name": "The step", "ansible.builtin.debug": {"msg": "STEP TAKEN"}}],
                   "rescue": [{"name": "Say whether the roll returns the node to service",
                               "ansible.builtin.debug": {"msg": "RELEASE={{ __rke2_numa_fence_release | default('unset') }}"}},
                              {"name": "Say whether the node is fenced",
                               "ansible.builtin.debug": {"msg": "FENCED={{ __rke2_numa_fenced | default('unset') }}"}},
                              {"name": "Fail as the fence did", "ansible.builtin.fail": {"msg": "{{ ansible_failed_result.msg }}"}}]}]}]))
    env = dict(api.env, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_DEPRECATION_WARNINGS="false")
    out = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
                          "-e", "ansible_python_interpreter=%s" % sys.executable, str(playbook)], env=env, capture_output=True, text=True,
                         check=False)
    return out.returncode, " ".join((out.stdout + out.stderr).split()), root


def roll_a_holds(api, transitions=0, claim_until=600.0, holder="roll-a"):
    """The Lease as roll-a's run aaaa left it (renewed 5 s ago, its slot on gpu-a), and gpu-a cordoned under its marker."""
    hold(api, holder, duration=ROLL_LEASE_SECONDS, cordon=["gpu-a"])
    current = lease(api)
    current["spec"]["leaseTransitions"] = transitions
    until = datetime.datetime.fromtimestamp(time.time() + claim_until, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    current["metadata"]["annotations"] = {"rke2-numa.maitred.io/slots": json.dumps(
        {"roll": "roll-a", "claims": {"gpu-a": {"run": "aaaa", "since": until, "until": until}}})}
    assert api.kubectl("replace", "--validate=false", "-f", "-", stdin=json.dumps(current)).returncode == 0
    with api.edit("gpu-a") as node:
        node["annotations"] = {CORDONED: "roll-a"}


@pytest.mark.parametrize("case, words", [
    ("ours", None),
    ("taken-over", "roll roll-a lost the Lease rke2-numa-system/rke2-numa-roll to roll-b since"),
    ("taken-back", "leaseTransitions 2, was 0 at this run's last write: another roll held it in between"),
    ("expired-slot", "this run's slot for gpu-a expired at"),
    ("node-other-roll", "the Node carries the marker of roll roll-b, not this roll's marker"),
    ("uncordoned", "the Node is schedulable again"),
    ("rancher", "rancher-system-agent is applying a plan"),
    ("autoscaler", "the cluster autoscaler is deleting it"),
])
def test_the_fence_before_a_destructive_step_lets_it_happen_only_while_the_node_and_the_lease_are_still_this_runs(api, tmp_path, case, words):
    """A run suspended (SIGSTOP, a laptop lid) past its Lease while another roll took over, a roll that took the Lease
    back in between, a slot that expired, a Node another roll marked or an admin uncordoned, a maintainer at work since
    the cordon: the fence stops the step (its next task) and writes nothing; otherwise it renews the Lease - carrying the
    resourceVersion read - and the step follows."""
    roll_a_holds(api, transitions=2 if case == "taken-back" else 0, claim_until=-5 if case == "expired-slot" else 600,
                 holder="roll-b" if case == "taken-over" else "roll-a")
    if case == "node-other-roll":
        with api.edit("gpu-a") as node:
            node["annotations"] = {CORDONED: "roll-b"}
    elif case == "uncordoned":
        with api.edit("gpu-a") as node:
            node["unschedulable"] = False
    elif case == "autoscaler":
        with api.edit("gpu-a") as node:
            node["taints"] = [{"key": "ToBeDeletedByClusterAutoscaler", "value": "1796104000", "effect": "NoSchedule"}]
    before, since = lease(api), len(api.calls())
    if case == "rancher":
        (tmp_path / "node" / "var/lib/rancher/agent/interlock").mkdir(parents=True)
        (tmp_path / "node" / "var/lib/rancher/agent/interlock/applyinator-active").write_text("")
        (tmp_path / "node" / "etc/rancher/rke2/config.yaml.d").mkdir(parents=True)
        (tmp_path / "node" / "etc/rancher/rke2/config.yaml.d/50-rancher.yaml").write_text('{"node-label": ["rke.cattle.io/machine=m-1"]}')
    code, text, dummy = fence_play(api, tmp_path)
    if words is None:
        assert code == 0 and "STEP TAKEN" in text, text[-3000:]
        after = lease(api)
        assert after["spec"]["renewTime"] > before["spec"]["renewTime"] and after["spec"]["holderIdentity"] == "roll-a"
        return
    assert code != 0 and "STEP TAKEN" not in text and words in text, text[-3000:]
    assert writes(api, since) == [] and [c for c in api.calls()[since:] if c["method"] != "GET"] == [], "nothing written"
    assert lease(api)["spec"] == before["spec"]


@pytest.mark.parametrize("case, first, release", [
    ("rancher", True, "True"),            # a maintainer before the first write, the Node still this roll's: back to service
    ("rancher", False, "False"),          # after writes on the node: left cordoned under our marker, the next roll resumes it
    ("node-other-roll", True, "False"),   # another roll's Node now: never ours to return
])
def test_a_node_a_maintainer_fenced_before_the_first_write_goes_back_to_service(api, tmp_path, case, first, release):
    """Rancher's interlock appearing after the cordon, seen by the fence before the boot parameters (the node's first
    write): nothing of ours is on it but the cordon, so the roll returns it to service (rolling.yml's rescue) - never a
    Node another roll marked, nor one the roll already wrote to. Before, such a node stayed cordoned until the next roll."""
    roll_a_holds(api)
    if case == "node-other-roll":
        with api.edit("gpu-a") as node:
            node["annotations"] = {CORDONED: "roll-b"}
    else:
        (tmp_path / "node" / "var/lib/rancher/agent/interlock").mkdir(parents=True)
        (tmp_path / "node" / "var/lib/rancher/agent/interlock/applyinator-active").write_text("")
        (tmp_path / "node" / "etc/rancher/rke2/config.yaml.d").mkdir(parents=True)
        (tmp_path / "node" / "etc/rancher/rke2/config.yaml.d/50-rancher.yaml").write_text('{"node-label": ["rke.cattle.io/machine=m-1"]}')
    code, text, dummy = fence_play(api, tmp_path, first=first)
    assert code != 0 and "STEP TAKEN" not in text and "RELEASE=%s" % release in text, text[-3000:]


def test_a_node_the_fence_cannot_read_fails_the_step_without_fencing_the_node(api, tmp_path):
    """A Node read that fails (here: not there) is a failed step, not a fence: the node is not marked fenced, so the
    roll's rescue may still write its failed annotation and roll it back; the Lease is not renewed."""
    roll_a_holds(api)
    before, since = lease(api), len(api.calls())
    code, text, dummy = fence_play(api, tmp_path, node="gpu-gone")
    assert code != 0 and "STEP TAKEN" not in text and "FENCED=unset" in text and "RELEASE=unset" in text, text[-3000:]
    assert 'nodes "gpu-gone" not found' in text, text[-3000:]
    assert writes(api, since) == [] and lease(api)["spec"] == before["spec"]
