# -*- coding: utf-8 -*-
"""What a newcomer sees from playbooks/plan.yml with Ansible's defaults: a report per host as a list
of lines (no JSON string full of \\n), each warning once, plan files reported changed when they are
new and ok when they are the same, a relative rke2_numa_plan_dir relative to where ansible-playbook runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAYBOOK = os.path.join(REPO, "playbooks", "plan.yml")


@pytest.fixture(scope="module")
def inventory(tmp_path_factory):
    base = tmp_path_factory.mktemp("out")
    gen_sysfs.main(["--out", str(base / "samples"), "--machine", "l40s-offline", "--machine", "dell-roundrobin"])
    inv = {"gpu": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                            "rke2_numa_pod_shapes": [{"name": "too-big", "cpu": 8, "memory": "96Gi", "gpus": 4}]},
                   "hosts": {name: {"rke2_numa_sysfs_root": str(base / "samples" / name)}
                             for name in ("l40s-offline", "dell-roundrobin")}}}
    path = base / "inventory.yml"
    path.write_text(yaml.safe_dump(inv))
    return str(path)


def play(inventory, cwd, *extra):
    # Ansible's defaults: no ANSIBLE_CALLBACK_RESULT_FORMAT, no ANSIBLE_STDOUT_CALLBACK
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith("ANSIBLE_"))
    env.update(ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory, PLAYBOOK] + list(extra)
    result = subprocess.run(cmd, env=env, cwd=str(cwd), capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def recap(stdout, host):
    return dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", re.search(r"^%s +:(.*)$" % host, stdout, re.M).group(1)))


def test_default_callback_output_and_plan_files(inventory, tmp_path):
    result = play(inventory, tmp_path, "-e", "rke2_numa_plan_dir=plans")
    out = result.stdout
    # the report is a list of lines, not one string of "\n"s
    assert "\\n" not in out, out
    report = re.search(r'^ok: \[dell-roundrobin\] => (\{\n.*?\n\})$', out, re.M | re.S).group(1)
    lines = json.loads(report)["msg"]
    assert lines[0].startswith("2 NUMA nodes (2 with CPUs), 96 CPUs online in 48 cores")
    assert any(line.split()[:2] == ["0", "0,2,...,94"] for line in lines), lines
    assert max(len(line) for line in lines) < 160
    assert "None" not in "\n".join(lines)
    single = json.loads(re.search(r'^ok: \[l40s-offline\] => (\{\n.*?\n\})$', out, re.M | re.S).group(1))["msg"]
    assert single[0].startswith("1 NUMA node (1 with CPUs)"), single[0]
    # each warning once, under its host's plan - not again as a task warning without the host's name
    assert "[WARNING]: pod shape" not in out + result.stderr and "[WARNING]: offline CPUs" not in out + result.stderr
    for text, hosts in (("WARNING: pod shape too-big (cpu=8", 2), ("WARNING: offline CPUs 31,63 are neither reserved nor isolated", 1)):
        assert (out + result.stderr).count(text) == hosts, text
    assert "WARNING: offline CPUs 31,63" in single[-1] or any("WARNING: offline CPUs 31,63" in line for line in single)
    # relative to where ansible-playbook runs, not to playbooks/
    assert sorted(os.listdir(tmp_path / "plans")) == [
        "dell-roundrobin.config.yaml", "dell-roundrobin.json", "dell-roundrobin.kubelet.conf", "dra.yaml",
        "l40s-offline.config.yaml", "l40s-offline.json", "l40s-offline.kubelet.conf", "rancher.yaml"]
    rancher = list(yaml.safe_load_all((tmp_path / "plans" / "rancher.yaml").read_text()))
    assert len(rancher[0]["machineSelectorConfig"]) == 2 and len(rancher) == 3   # two hardware classes, their Secrets
    assert not os.path.exists(os.path.join(REPO, "playbooks", "plans"))
    # new files: changed; the same files again: ok
    hosts = ("l40s-offline", "dell-roundrobin")
    # one task for the run writes the 8 files (3 per host, rancher.yaml, dra.yaml) and the folder
    assert sum(recap(out, host)["changed"] for host in hosts) == 1
    again = play(inventory, tmp_path, "-e", "rke2_numa_plan_dir=%s" % (tmp_path / "plans"))
    assert sum(recap(again.stdout, host)["changed"] for host in hosts) == 0


def test_identical_machines_show_one_text(tmp_path):
    """Two hosts of one machine type: the second names the first in one line, not its 3 KB text again (a thousand such
    hosts were a thousand texts in AWX's job events)."""
    gen_sysfs.main(["--out", str(tmp_path / "samples"), "--machine", "dell-roundrobin"])
    root = str(tmp_path / "samples" / "dell-roundrobin")
    inv = {"gpu": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, "rke2_numa_sysfs_root": root},
                   "hosts": {"gpu-a": {}, "gpu-b": {}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inv))
    out = play(str(tmp_path / "inventory.yml"), tmp_path).stdout
    first = json.loads(re.search(r'^ok: \[gpu-a\] => (\{\n.*?\n\})$', out, re.M | re.S).group(1))["msg"]
    second = json.loads(re.search(r'^ok: \[gpu-b\] => (\{\n.*?\n\})$', out, re.M | re.S).group(1))["msg"]
    fingerprint = re.search(r"^plan (\w+): reserved CPUs", "\n".join(first), re.M).group(1)
    assert first[0].startswith("2 NUMA nodes") and second == ["same topology and plan as gpu-a (plan %s)" % fingerprint]
