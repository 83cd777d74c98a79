# -*- coding: utf-8 -*-
"""apply.yml's preflight (kubelet_reset/tasks/preflight.yml) through ansible-playbook:
every variable of the roles that write is checked, booleans as ``-e`` gives them
(strings) are accepted, bad values and unbounded waits are refused, and the reset
decision refuses a node that is not drained - all before the first write. The
last step, the agent unit check, needs systemd: here it is where a good run stops."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
UNIT_CHECK = "Read the RKE2 agent unit"


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    base = tmp_path_factory.mktemp("preflight")
    gen_sysfs.main(["--out", str(base / "samples"), "--machine", "l40s-offline"])
    kubelet = base / "kubelet"
    kubelet.mkdir()
    # the none policy's checkpoint: the plan's static policy needs a reset
    (kubelet / "cpu_manager_state").write_text(json.dumps({"policyName": "none", "defaultCpuSet": "", "checksum": 1}))
    playbook = base / "play.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Preflight", "hosts": "localhost", "gather_facts": False,
        "vars": {"rke2_numa_sysfs_root": str(base / "samples" / "l40s-offline"), "rke2_numa_kubelet_dir": str(kubelet),
                 "rke2_numa_agent_service": "rke2-numa-test-no-such.service"},
        "tasks": [{"name": "Topology", "ansible.builtin.include_role": {"name": "maitred.rke2_numa.topology"}},
                  {"name": "Plan", "ansible.builtin.include_role": {"name": "maitred.rke2_numa.plan"}},
                  {"name": "Preflight", "ansible.builtin.include_role": {"name": "maitred.rke2_numa.kubelet_reset",
                                                                         "tasks_from": "preflight.yml"}}],
    }]))
    return str(playbook)


def run(playbook, *extra):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
           "-e", "ansible_python_interpreter=%s" % sys.executable, playbook] + list(extra)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    return out.returncode, out.stdout + out.stderr


def failed_task(output):
    """The name of the task that failed."""
    tasks = [line for line in output.splitlines() if line.startswith("TASK [")]
    return tasks[-1] if tasks else ""


@pytest.mark.parametrize(
    "extra, message",
    [
        (["rke2_numa_assume_drained=maybe"], "rke2_numa_assume_drained"),
        (["rke2_numa_verify_strict=perhaps"], "rke2_numa_verify_strict"),
        (["rke2_numa_reboot_ok=sure"], "rke2_numa_reboot_ok"),
        (["rke2_numa_kubelet_timeout=ten"], "rke2_numa_kubelet_timeout"),
        (["rke2_numa_kubelet_timeout=100000000000000000000"], "out of bounds: rke2_numa_kubelet_timeout=100000000000000000000"),
        (["rke2_numa_kubelet_timeout=0"], "out of bounds: rke2_numa_kubelet_timeout=0"),
        (["rke2_numa_reboot_timeout=-5"], "rke2_numa_reboot_timeout=-5 (60 to 86400 s)"),
        (["rke2_numa_hugepages_retries=0"], "rke2_numa_hugepages_retries=0 (1 to 100)"),
        (["rke2_numa_config_mode=replace"], "rke2_numa_config_mode"),
        # the labels role runs late in a roll, on a drained node: its choice is checked up front
        (["rke2_numa_labels_via=sometimes"], "rke2_numa_labels_via"),
    ],
)
def test_bad_values_are_refused_before_anything_else(setup, extra, message):
    args = [a for e in extra for a in ("-e", e)] + ["-e", "rke2_numa_assume_drained=true"] * ("assume" not in extra[0])
    rc, output = run(setup, *args)
    assert rc == 2 and message in output, output
    assert "Check the" in failed_task(output), failed_task(output)


def test_a_reset_on_a_node_that_is_not_drained_is_refused(setup):
    rc, output = run(setup, "-e", "rke2_numa_assume_drained=false")
    assert rc == 2 and "Refuse to reset the state under running pods" in failed_task(output)
    assert "the kubelet state must be reset (configured policy" in output and "Nothing was written" in output


@pytest.mark.parametrize("drained", ["rke2_numa_assume_drained=true", "rke2_numa_node_drained=yes"])
def test_booleans_as_strings_from_extra_vars_are_accepted(setup, drained):
    rc, output = run(setup, "-e", drained, "-e", "rke2_numa_verify_strict=false", "-e", "rke2_numa_reboot_ok=no",
                     "-e", "rke2_numa_kubelet_timeout=60")
    assert "kubelet state reset needed" in output
    assert rc == 2 and UNIT_CHECK in failed_task(output), output  # only systemd is missing here
