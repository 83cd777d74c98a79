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


# Every case is a host of ONE ansible-playbook run (its values as host variables, strings as -e gives them):
# the preflight runs for all of them at once; each test reads its host's outcome.
BAD_VALUES = [
    (("rke2_numa_assume_drained", "maybe"), "rke2_numa_assume_drained"),
    (("rke2_numa_verify_strict", "perhaps"), "rke2_numa_verify_strict"),
    (("rke2_numa_reboot_ok", "sure"), "rke2_numa_reboot_ok"),
    (("rke2_numa_kubelet_timeout", "ten"), "rke2_numa_kubelet_timeout"),
    (("rke2_numa_kubelet_timeout", "100000000000000000000"), "out of bounds: rke2_numa_kubelet_timeout=100000000000000000000"),
    (("rke2_numa_kubelet_timeout", "0"), "out of bounds: rke2_numa_kubelet_timeout=0"),
    (("rke2_numa_reboot_timeout", "-5"), "rke2_numa_reboot_timeout=-5 (60 to 86400 s)"),
    (("rke2_numa_hugepages_retries", "0"), "rke2_numa_hugepages_retries=0 (1 to 100)"),
    (("rke2_numa_config_mode", "replace"), "rke2_numa_config_mode"),
    # the labels role runs late in a roll, on a drained node: its choice is checked up front
    (("rke2_numa_labels_via", "sometimes"), "rke2_numa_labels_via"),
]
GOOD = {"good-assumed": {"rke2_numa_assume_drained": "true"}, "good-drained": {"rke2_numa_node_drained": "yes"}}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """{host: (the task it failed in, its failure line, the whole output)} of one run over every case."""
    base = tmp_path_factory.mktemp("preflight")
    gen_sysfs.main(["--out", str(base / "samples"), "--machine", "l40s-offline"])
    kubelet = base / "kubelet"
    kubelet.mkdir()
    # the none policy's checkpoint: the plan's static policy needs a reset
    (kubelet / "cpu_manager_state").write_text(json.dumps({"policyName": "none", "defaultCpuSet": "", "checksum": 1}))
    playbook = base / "play.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Preflight", "hosts": "all", "gather_facts": False,
        "vars": {"rke2_numa_sysfs_root": str(base / "samples" / "l40s-offline"), "rke2_numa_kubelet_dir": str(kubelet),
                 "rke2_numa_agent_service": "rke2-numa-test-no-such.service"},
        "tasks": [{"name": "Topology", "ansible.builtin.include_role": {"name": "maitred.rke2_numa.topology"}},
                  {"name": "Plan", "ansible.builtin.include_role": {"name": "maitred.rke2_numa.plan"}},
                  {"name": "Preflight", "ansible.builtin.include_role": {"name": "maitred.rke2_numa.kubelet_reset",
                                                                         "tasks_from": "preflight.yml"}}],
    }]))
    hosts = {}
    for i, ((name, value), dummy) in enumerate(BAD_VALUES):
        hosts["bad-%d" % i] = dict({"rke2_numa_assume_drained": "true"} if name != "rke2_numa_assume_drained" else {}, **{name: value})
    hosts["not-drained"] = {"rke2_numa_assume_drained": "false"}
    for name, values in GOOD.items():
        hosts[name] = dict(values, rke2_numa_verify_strict="false", rke2_numa_reboot_ok="no", rke2_numa_kubelet_timeout="60")
    inventory = base / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
                                                 "hosts": hosts}}))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    out = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory), str(playbook)],
                         env=env, capture_output=True, text=True, check=False)
    output = out.stdout + out.stderr
    failed, task = {}, ""
    for line in output.splitlines():
        if line.startswith("TASK ["):
            task = line
        for host in hosts:
            if line.startswith(("fatal: [%s]" % host, "failed: [%s] " % host)) and host not in failed:
                failed[host] = (task, line, output)
    assert sorted(failed) == sorted(hosts), "every case fails somewhere: %s" % output[-3000:]
    return failed


@pytest.mark.parametrize("index", range(len(BAD_VALUES)), ids=[case[0][0] + "=" + case[0][1][:12] for case in BAD_VALUES])
def test_bad_values_are_refused_before_anything_else(results, index):
    task, line, output = results["bad-%d" % index]
    assert BAD_VALUES[index][1] in line, line
    # the preflight's checks, or earlier still: the shared variables' argument specs (the common role,
    # a dependency of the first role that runs)
    assert "Check the" in task or "maitred.rke2_numa.common : Validating arguments" in task, task


def test_a_reset_on_a_node_that_is_not_drained_is_refused(results):
    task, line, output = results["not-drained"]
    assert "Refuse to reset the state under running pods" in task
    assert "the kubelet state must be reset (configured policy" in line and "Nothing was written" in line


@pytest.mark.parametrize("host", sorted(GOOD))
def test_booleans_as_strings_from_extra_vars_are_accepted(results, host):
    task, line, output = results[host]
    assert "kubelet state reset needed" in output
    assert UNIT_CHECK in task, line  # only systemd is missing here
