# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The first real roll, as a newcomer types it: every documented command works as typed and nothing is silently
green - a relative report folder, a dry run that reaches its summary, a host pattern that matches nothing, a
misspelled variable. Node filesystem copies (ansible_connection=local), the real kubectl against the API stand-in."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBECTL, gpu_fleet, needs_kubectl
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply, make_node, tree
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_hostile_inventory import PLAYBOOKS, REPO, SPEC, node_vars

pytestmark = needs_kubectl


@pytest.fixture
def cluster(tmp_path):
    yield from gpu_fleet(tmp_path, ("gpu-a", "gpu-b"))


def run(cluster, tmp_path, playbook, hosts, *extra, cwd=None, group_vars=None):
    """ansible-playbook in ``cwd`` (by default a folder of its own, not the playbooks' nor the inventory's), with the
    cluster's kubectl (Cluster.kubectl_path) and ``group_vars`` beside the inventory's own."""
    inv = {"gpu": {"vars": dict({"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                                 "rke2_numa_kubectl": getattr(cluster, "kubectl_path", None) or KUBECTL,
                                 "rke2_numa_kubeconfig": cluster.kubeconfig, "rke2_numa_prove": False,
                                 "rke2_numa_labels_via": "kubectl"}, **(group_vars or {})),
                   "hosts": hosts}}
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump(inv))
    env = dict(cluster.env, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_DEPRECATION_WARNINGS="false")
    if cwd is None:
        cwd = tmp_path / "operator"
        cwd.mkdir(exist_ok=True)
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(path),
           os.path.join(PLAYBOOKS, playbook)] + list(extra)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, cwd=str(cwd))
    return out, out.stdout + out.stderr


def compliant(tmp_path, *names):
    roots = {}
    for name in names:
        roots[name] = make_node(tmp_path / name, **SPEC)
        comply(roots[name], make_plan(read_topology(str(roots[name]))))
    return roots


def test_a_relative_report_folder_is_relative_to_where_the_roll_runs(cluster, tmp_path):
    """rolling.yml -e rke2_numa_report_dir=report/roll on a compliant fleet, run from a folder of the operator's: rc 0,
    the summary said, fleet.json with the roll under that folder (the old code copied to the raw relative path:
    'Destination directory report/roll does not exist', rc 2, no summary)."""
    roots = compliant(tmp_path, "gpu-a", "gpu-b")
    hosts = dict((n, node_vars(r)) for n, r in roots.items())
    out, text = run(cluster, tmp_path, "rolling.yml", hosts, "-e", "rke2_numa_report_dir=report/roll")
    assert out.returncode == 0, text[-4000:]
    assert "does not exist" not in text
    folder = tmp_path / "operator" / "report" / "roll"
    fleet = json.loads((folder / "fleet.json").read_text())
    assert fleet["roll"]["failed"] is False and fleet["roll"]["check_mode"] is False
    assert (folder / "index.html").is_file()
    assert "TASK [Show the summary]" in text


def test_a_dry_run_over_a_node_to_roll_reaches_its_summary_and_cordons_nothing(cluster, tmp_path):
    """rolling.yml --check --diff over a node that needs a roll (and a reboot, rke2_numa_reboot_ok false): the summary
    printed, no templating error in it ('object of type dict has no attribute line': the check-mode summary read the
    failure guard's fact), nothing said cordoned, nothing written on the node or in the cluster."""
    root = make_node(tmp_path / "gpu-a", **SPEC)
    before = tree(root)
    calls = len(cluster.calls())
    out, text = run(cluster, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)}, "--check", "--diff",
                    "-e", "rke2_numa_report_dir=report/dry")
    summary = text.split("PLAY [Summarise the roll]", 1)[1]
    assert "has no attribute" not in text, summary[-3000:]
    assert "TASK [Show the summary]" in summary, summary[-3000:]
    assert "left cordoned:" not in text
    assert tree(root) == before
    assert [c for c in cluster.calls()[calls:] if c["method"] not in ("GET",) and "subjectaccessreviews" not in c["path"]] == []
    assert cluster.node("gpu-a").get("unschedulable") in (None, False)
    assert (tmp_path / "operator" / "report" / "dry" / "fleet.json").is_file()


@pytest.mark.parametrize("extra, limit", [(("-e", "rke2_numa_hosts=gpu_workers"), False),
                                          (("-e", "rke2_numa_hosts=gpu-b", "--limit", "gpu-a"), True)])
def test_a_host_pattern_that_matches_nothing_fails_naming_the_groups(cluster, tmp_path, extra, limit):
    """The old code: '[WARNING]: Could not match supplied host pattern', 'skipping: no hosts matched', rc 0."""
    roots = compliant(tmp_path, "gpu-a", "gpu-b")
    hosts = dict((n, node_vars(r)) for n, r in roots.items())
    calls = len(cluster.calls())
    out, text = run(cluster, tmp_path, "check.yml", hosts, *extra)
    assert out.returncode != 0, text[-3000:]
    if limit:
        assert "rke2_numa_hosts 'gpu-b' and --limit 'gpu-a' share no host of the inventory (its groups: gpu)" in text, text[-3000:]
    else:
        assert "rke2_numa_hosts 'gpu_workers' matches no host of the inventory (its groups: gpu)" in text, text[-3000:]
    assert len(cluster.calls()) == calls, "nothing was read"


def test_a_misspelled_variable_is_refused_naming_the_declared_one(cluster, tmp_path):
    """plan.yml -e rke2_numa_hugepage_per_node=16 (or in the inventory): the old code planned without hugepages, rc 0.
    rke2_numa_unknown_variables=warn lets the run go on, saying so."""
    roots = compliant(tmp_path, "gpu-a")
    hosts = {"gpu-a": node_vars(roots["gpu-a"])}
    out, text = run(cluster, tmp_path, "plan.yml", hosts, "-e", "rke2_numa_hugepage_per_node=16")
    assert out.returncode != 0, text[-3000:]
    assert ("rke2_numa_hugepage_per_node is not a variable of this collection; did you mean "
            "rke2_numa_hugepages_per_node? (set for gpu-a)") in text
    assert "TASK [maitred.rke2_numa.topology" not in text and "Read the host's NUMA topology" not in text
    hosts["gpu-a"]["rke2_numa_reserved_corez"] = 2   # in the inventory, not -e
    out, text = run(cluster, tmp_path, "check.yml", hosts)
    assert out.returncode != 0
    assert "rke2_numa_reserved_corez is not a variable of this collection; did you mean rke2_numa_reserved_cores?" in text
    out, text = run(cluster, tmp_path, "plan.yml", hosts, "-e", "rke2_numa_unknown_variables=warn")
    assert out.returncode == 0, text[-3000:]
    assert "rke2_numa_reserved_corez is not a variable of this collection" in text and "ignored (rke2_numa_unknown_variables=warn)" in text
    # what AWX gives a workflow node (the check's artifacts as extra vars) is the collection's own, never unknown
    out, text = run(cluster, tmp_path, "plan.yml", {"gpu-a": node_vars(roots["gpu-a"])},
                    "-e", json.dumps({"rke2_numa_fleet": {"hosts": 1}, "rke2_numa_fleet_1234": {"hosts": 1}}))
    assert out.returncode == 0, text[-3000:]


def test_a_refused_value_is_its_host_s_first_error_line_naming_the_variable(cluster, tmp_path):
    """rke2_numa_hugepages_per_node: -1 in rolling.yml --check: the old code printed "A 'failed_when' expression
    evaluated to 'True'" and failed_when_suppressed_exception first, the planner's message 77 lines further down in a
    dump of the node's read, naming hugepages_per_node without its prefix."""
    root = make_node(tmp_path / "gpu-a", **SPEC)
    out, text = run(cluster, tmp_path, "rolling.yml", {"gpu-a": node_vars(root)}, "--check", "-e", "rke2_numa_hugepages_per_node=-1")
    assert out.returncode != 0
    assert "failed_when" not in text, text[-3000:]
    errors = [line for line in text.splitlines() if line.startswith("[ERROR]")]
    assert errors and errors[0] == ("[ERROR]: Task failed: Action failed: the check did not complete: gpu-a: no plan for this "
                                    "host: options: rke2_numa_hugepages_per_node must be >= 0, got -1"), errors
    fatal = [line for line in text.splitlines() if line.startswith("fatal: [gpu-a]")]
    assert fatal and len(fatal[0]) < 300 and "topology" not in fatal[0], fatal
    # in the run's summary too, with the host's line - also when it is the run's every host
    assert "gpu-a: not checked: no plan for this host: options: rke2_numa_hugepages_per_node must be >= 0, got -1" in text
    assert "refused (fix the value and run again; each host's line says why): gpu-a" in text
    # a value of the wrong type too: named as the variable, after the host's read
    out, text = run(cluster, tmp_path, "check.yml", {"gpu-a": node_vars(root)}, "-e", "rke2_numa_reserved_cores_per_node=2")
    errors = [line for line in text.splitlines() if line.startswith("[ERROR]")]
    assert errors and errors[0].startswith("[ERROR]: Task failed: Action failed: the check did not complete: gpu-a: no plan for "
                                           "this host: argument 'rke2_numa_reserved_cores_per_node' is of type str"), errors


def test_a_host_whose_node_is_a_control_plane_is_left_out_without_a_server_group(cluster, tmp_path):
    """No rke2_numa_server_group, and the inventory holds the server too: its Node's labels (RKE2's control-plane and
    etcd) say what it is. The old code: 'to reconfigure: server1, gpu-a', and rolling.yml --check took it to roll."""
    cluster.add_node("server1", ready=True, labels={"kubernetes.io/hostname": "server1", "node-role.kubernetes.io/control-plane": "true",
                                                    "node-role.kubernetes.io/etcd": "true"})
    roots = {"gpu-a": make_node(tmp_path / "gpu-a", **SPEC), "server1": make_node(tmp_path / "server1", **SPEC)}
    hosts = dict((n, node_vars(r)) for n, r in roots.items())
    out, text = run(cluster, tmp_path, "check.yml", hosts, "-e", "rke2_numa_report_dir=report")
    assert out.returncode == 0, text[-3000:]
    assert ("server1: an RKE2 server (its Node has node-role.kubernetes.io/control-plane, node-role.kubernetes.io/etcd), "
            "left out") in text, text[-3000:]
    assert "0 of 1 compliant; to reconfigure: gpu-a " in text, text[-3000:]
    fleet = json.loads((tmp_path / "operator" / "report" / "fleet.json").read_text())
    assert "server1" not in json.dumps(fleet)
    before = tree(roots["server1"])
    out, text = run(cluster, tmp_path, "rolling.yml", hosts, "--check")
    assert "rke2_numa_to_roll: server1" not in text and "server1: starting" not in text, text[-3000:]
    summary = text.split("PLAY [Summarise the roll]", 1)[1]
    assert "server1" not in summary.split("TASK [Show the summary]", 1)[1].split("TASK [", 1)[0].split("PLAY RECAP", 1)[0]
    assert tree(roots["server1"]) == before
    # prove.yml reads the Nodes' roles too: never probed
    out, text = run(cluster, tmp_path, "prove.yml", hosts, "-e", "rke2_numa_report_dir=proof")
    assert "server1: an RKE2 server (its Node has node-role.kubernetes.io/control-plane" in text, text[-3000:]
    assert not (tmp_path / "operator" / "proof" / "server1.json").exists()
    assert [c for c in cluster.calls() if c["method"] == "POST" and "/pods" in c["path"]] == [], "no probe anywhere"
    # asked for: the server is checked too
    out, text = run(cluster, tmp_path, "check.yml", hosts, "-e", "rke2_numa_include_servers=true")
    assert "0 of 2 compliant" in text, text[-3000:]
