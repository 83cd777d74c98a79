# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/check.yml end to end on node filesystem copies (ansible_connection=local): one compliant
node, one fresh, one waiting for its reboot. Reports per host and for the fleet; changes nothing."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import stat
import subprocess
import sys

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import nfd_features, numa_labels
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures import fake_kubectl
from ansible_collections.maitred.rke2_numa.tests.fixtures.inventories import with_host_vars
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import TOKEN, comply, make_node, tree

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAYBOOK = os.path.join(REPO, "playbooks", "check.yml")
SPEC = dict(sockets=2, cores_per_socket=4, threads=2, gpus_per_node=1)
# The playbooks first ask the API what their kubeconfig may do (one kubectl create of SelfSubjectAccessReviews): these
# kubectls answer as a kubeconfig with exactly the rights asked for (not everything) does; no roll's Lease yet.
ASKED, LEASE_READ, ACCESS_ANSWERS, NO_LEASE = fake_kubectl.ASKED, fake_kubectl.LEASE_READ, fake_kubectl.ACCESS_ANSWERS, fake_kubectl.NO_LEASE


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    base = tmp_path_factory.mktemp("fleet")
    nodes = {}
    for name in ("gpu-a", "gpu-b", "gpu-c"):
        nodes[name] = make_node(base / name, **SPEC)
    plan = make_plan(read_topology(str(nodes["gpu-a"])))
    comply(nodes["gpu-a"], plan)
    comply(nodes["gpu-c"], plan, booted=False)
    hosts = {name: {"rke2_numa_sysfs_root": str(root), "rke2_numa_boot_root": str(root),
                    "rke2_numa_kubelet_dir": str(root / "var/lib/kubelet"),
                    "rke2_numa_config_path": str(root / "etc/rancher/rke2/config.yaml")} for name, root in nodes.items()}
    # The cluster's pods, as `kubectl get nodes,pods,resourceslices,resourceclaims -A -o json` lists them: a Burstable GPU
    # pod on gpu-b (no DRA device anywhere).
    (base / "pods.json").write_text(json.dumps({"items": [
        {"metadata": {"namespace": "ml", "name": "vllm-0"}, "spec": {"nodeName": "gpu-b", "containers": [
            {"name": "vllm", "resources": {"requests": {"cpu": "4"}, "limits": {"nvidia.com/gpu": "1"}}}]},
         "status": {"phase": "Running", "qosClass": "Burstable"}}]}))
    kubectl = base / "kubectl"
    kubectl.write_text('#!/bin/sh\necho "$*" >> %s\n%scase "$*" in *"%s") cat %s ;; %s *) exit 1 ;; esac\n'
                       % (base / "kubectl.calls", ACCESS_ANSWERS, ONE_READ.split(" ", 2)[2], base / "pods.json", NO_LEASE))
    kubectl.chmod(0o755)
    inv = {"gpu": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                            "rke2_numa_kubectl": str(kubectl)}, "hosts": hosts}}
    path = base / "inventory.yml"
    path.write_text(yaml.safe_dump(inv))
    return str(path), nodes, plan


# A node without DRA devices, from a read that included the cluster's ResourceSlices and ResourceClaims.
NO_DRA = {"dra": {"devices": [], "counts": {"gpu": 0, "nic": 0, "cpu": 0}, "gpu_path": "none", "findings": []}, "dra_unaligned": [], "dra_claims": []}
# The check's one read of the cluster: Nodes, pods and DRA.
ONE_READ = "--kubeconfig /etc/rancher/rke2/rke2.yaml get nodes,pods,resourceslices,resourceclaims --all-namespaces -o json"


def play(inventory, *extra, **kwargs):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_DEPRECATION_WARNINGS="false")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory, kwargs.get("playbook", PLAYBOOK)] + list(extra)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("extra", [[], ["--check"]], ids=["run", "check"])
def test_check_reports_each_host_and_the_fleet_and_changes_nothing(fleet, tmp_path, extra):
    inventory, nodes, plan = fleet
    before = {name: tree(root) for name, root in nodes.items()}
    tmp_path.chmod(0o700)   # an operator's folder (-e rke2_numa_report_dir=$HOME): it keeps its mode
    out = play(inventory, "-e", "rke2_numa_report_dir=%s" % tmp_path, "-vvv", *extra)
    assert out.returncode == 0, out.stdout + out.stderr
    assert oct(tmp_path.stat().st_mode & 0o777) == "0o700"
    assert TOKEN not in out.stdout + out.stderr, "the join token never leaves the node"
    assert "changed=0" in out.stdout and "changed=1" not in out.stdout
    assert {name: tree(root) for name, root in nodes.items()} == before
    reports = {name: json.loads((tmp_path / (name + ".json")).read_text()) for name in nodes}
    assert reports["gpu-a"] == {"host": "gpu-a", "compliant": True, "runs_plan": True, "reasons": [], "findings": [], "actions": [], "blocked": [],
                                "plan_fingerprint": plan["fingerprint"], "warnings": [], "pods": dict(NO_DRA, unpinned=[], topology_errors=[]),
                                "config_mode": "merge", "managed_by": "none", "managed_by_evidence": []}
    unpinned = ("ml/vllm-0 requests nvidia.com/gpu but is Burstable (requests != limits): no exclusive CPUs, no NUMA-local memory, "
                "and the GPU is not aligned with its CPUs")
    assert reports["gpu-b"]["pods"] == dict(NO_DRA, unpinned=[unpinned], topology_errors=[])
    assert "NOT PINNED: " + unpinned in out.stdout
    assert reports["gpu-b"]["actions"] == ["drain", "boot_params", "reboot", "rke2_config", "reset", "verify", "uncordon", "label"]
    assert reports["gpu-c"]["actions"] == ["drain", "reboot", "verify", "uncordon", "label"]
    fleet_json = json.loads((tmp_path / "fleet.json").read_text())
    assert fleet_json.pop("roll_in_progress")["busy"] is False, "no roll holds the Lease"
    assert sorted(fleet_json.pop("rows")) == ["plans", "texts"]   # what the page says of each host, folded (test_artifact_rows)
    assert fleet_json == {
        "hosts": 3, "compliant": ["gpu-a"], "not_compliant": ["gpu-b", "gpu-c"], "blocked": [], "not_checked": [], "not_readable": [], "refused": {},
        "reboot": ["gpu-b", "gpu-c"],
        "unpinned_gpu_pods": [unpinned], "topology_errors": [], "pods_not_audited": [], "managed_by_rancher": [],
        "managed_by": dict((h, {"managed_by": "none", "evidence": []}) for h in ("gpu-a", "gpu-b", "gpu-c")),
        "kubernetes": {"1.33": ["gpu-a", "gpu-b", "gpu-c"]}, "dra_gpus": {}, "dra_unaligned_gpu_pods": [], "dra_unaligned_claims": []}
    assert ("1 of 3 compliant; to reconfigure: gpu-b, gpu-c (2 need a reboot); blocked (fix by hand first, never rolled): none; "
            "not checked (unreachable or failed): none; "
            "GPU pods that cannot be pinned: 1; pods refused with TopologyAffinityError: 0") in out.stdout
    with open(os.path.join(os.path.dirname(inventory), "kubectl.calls")) as calls:
        assert "--kubeconfig /etc/rancher/rke2/rke2.yaml get nodes,pods,resourceslices,resourceclaims --all-namespaces -o json\n" in calls.readlines()
    # the fleet report beside the JSON (its page is tested in a browser by test_report_browser)
    page, summary = (tmp_path / "index.html").read_text(), (tmp_path / "summary.md").read_text()
    assert "3 hosts: 1 compliant, 2 NOT compliant (0 blocked), 0 not checked; warnings on 1 host (check.yml)" in page
    # one map drawn for the three (one shape; each GPU's identity in its host's text)
    assert page.count('<details class="host"') == 3 and page.count('class="numa-node"') == 2 and page.count("same NUMA map as") == 2
    assert "| gpu-a | compliant | `%s` |" % plan["fingerprint"] in summary
    assert "- **gpu-b**: NOT PINNED: ml/vllm-0 requests nvidia.com/gpu but is Burstable" in summary
    assert oct((tmp_path / "index.html").stat().st_mode & 0o777) == "0o644"


def test_check_without_cluster_access_still_checks_and_says_the_pods_were_not_audited(fleet, tmp_path):
    inventory, nodes, _plan = fleet
    out = play(inventory, "-e", "rke2_numa_report_dir=%s" % tmp_path, "-e", "rke2_numa_kubectl=/nonexistent/kubectl")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads((tmp_path / "gpu-a.json").read_text())
    why = "pods not audited: kubectl could not be run at /nonexistent/kubectl on localhost (rke2_numa_kubectl: not found or not executable)"
    assert report["compliant"] and report["pods"]["error"] == why
    assert "pods not audited on: gpu-a, gpu-b, gpu-c" in out.stdout
    assert out.stdout.count(why) == 1 and "Error executing command" not in out.stdout, "why, once - not Ansible's words per host"


@pytest.mark.parametrize("where", ["extra var", "gpu-a", "gpu-b"])
def test_check_refuses_the_common_role_s_variables_its_argument_specs_refuse_once_for_every_host(fleet, tmp_path, where):
    """The common role's variables are checked against its argument specs once for every host (not a task per host):
    a host's own bad value names that host only - the first host's (the run_once task's) too - and an extra var every
    host; one of its own that does not template is named. Nothing is read: no kubectl call, no report."""
    inventory, nodes, _plan = fleet
    (tmp_path / "kubectl.calls").unlink(missing_ok=True)
    extra, host_vars = [], {}
    if where == "extra var":
        extra = ["-e", "rke2_numa_boot_method=lilo"]
    else:
        host_vars = {where: {"rke2_numa_boot_method": "lilo"}, "gpu-c": {"rke2_numa_kubelet_dir": "{{ no_such_variable_anywhere }}"}}
    path = with_host_vars(inventory, tmp_path / "inventory.yml", host_vars)
    calls = os.path.join(os.path.dirname(inventory), "kubectl.calls")
    before = open(calls).read() if os.path.exists(calls) else ""
    out = play(path, "-e", "rke2_numa_report_dir=%s" % (tmp_path / "out"), *extra)
    assert out.returncode != 0, out.stdout
    named = set(nodes) if where == "extra var" else {where}
    for host in sorted(nodes):
        refusal = "%s: the inputs of check are refused, nothing was read or written: the common role's variables: " \
                  "value of rke2_numa_boot_method must be one of: auto, grub_d, grubby, transactional_update, got: lilo" % host
        assert (refusal in out.stdout) == (host in named), (host, out.stdout)
    if where != "extra var":
        assert "gpu-c: the inputs of check are refused, nothing was read or written: the common role's variables: " \
               "rke2_numa_kubelet_dir cannot be templated" in out.stdout, out.stdout
    assert "Read the node, plan it" not in out.stdout and not (tmp_path / "out").exists()
    assert (open(calls).read() if os.path.exists(calls) else "") == before, "no kubectl call"


def test_each_host_is_planned_with_its_own_planner_variables(fleet, tmp_path):
    """node_check's plan_from_vars: a host's rke2_numa_<option> variables plan it, templated for that host (a template
    naming another of its variables); null is the planner's default; the other hosts keep the default plan."""
    inventory, nodes, plan = fleet
    path = with_host_vars(inventory, tmp_path / "inventory.yml", {
        "gpu-a": {"kube_memory": "2Gi", "rke2_numa_kube_reserved": "{{ {'memory': kube_memory} }}"},
        "gpu-c": {"rke2_numa_kube_reserved": None, "rke2_numa_reserved_cores": None}})
    out = play(path, "-e", "rke2_numa_report_dir=%s" % (tmp_path / "out"))
    assert out.returncode == 0, out.stdout + out.stderr
    reports = {name: json.loads((tmp_path / "out" / (name + ".json")).read_text()) for name in nodes}
    own = make_plan(read_topology(str(nodes["gpu-a"])), kube_reserved={"memory": "2Gi"})
    assert reports["gpu-a"]["plan_fingerprint"] == own["fingerprint"] != plan["fingerprint"]
    assert not reports["gpu-a"]["compliant"] and reports["gpu-a"]["actions"][0] == "drain", "its config holds the default plan"
    assert reports["gpu-b"]["plan_fingerprint"] == reports["gpu-c"]["plan_fingerprint"] == plan["fingerprint"]
    assert reports["gpu-c"]["actions"] == ["drain", "reboot", "verify", "uncordon", "label"]


def test_a_planner_variable_that_does_not_template_leaves_its_host_not_checked_naming_it(fleet, tmp_path):
    """Not the default plan, silently (what "{{ var | default(none) }}" made of it): the host is not checked, the
    variable named, the node not read; the others are checked."""
    inventory, nodes, _plan = fleet
    path = with_host_vars(inventory, tmp_path / "inventory.yml", {"gpu-b": {"rke2_numa_node_taints": "{{ no_such_variable_anywhere }}"}})
    out = play(path, "-e", "rke2_numa_report_dir=%s" % (tmp_path / "out"))
    assert out.returncode != 0
    assert "gpu-b: not checked" in out.stdout and "rke2_numa_node_taints cannot be templated: 'no_such_variable_anywhere' is undefined" in out.stdout
    fleet_json = json.loads((tmp_path / "out" / "fleet.json").read_text())
    assert fleet_json["not_checked"] == ["gpu-b"] and fleet_json["compliant"] == ["gpu-a"]


def per_host_tasks(stdout):
    """The tasks that reported on more than one host (the default callback: ``ok: [host]`` under ``TASK [name]``)."""
    hosts, task = {}, None
    for line in stdout.splitlines():
        if line.startswith("TASK ["):
            task = line[len("TASK ["):line.rindex("]")]
        elif task and re.match(r"^(ok|changed|skipping|failed|fatal): \[", line):
            hosts.setdefault(task, set()).add(re.match(r"^\w+: \[([^\] ]+)", line).group(1))
    return sorted(name for name, seen in hosts.items() if len(seen) > 1)


@pytest.mark.parametrize("playbook, tasks", [
    ("check.yml", ["Read the node, plan it and decide whether it runs its plan"]),
    ("plan.yml", ["Read the host's NUMA topology and plan it, in one task", "Show the topology and the plan"]),
])
def test_a_fleet_costs_one_read_per_host_and_the_rest_once(fleet, playbook, tasks):
    """A task per host is a worker, a templating and a callback per host: check.yml has one (the read, its plan and
    its decision), plan.yml its read, its plan and its JSON lines. The common role's variables are checked once for
    every host, not by a role's validation task per host (it was one per host in both)."""
    inventory, dummy, _plan = fleet
    out = play(inventory, playbook=os.path.join(REPO, "playbooks", playbook))
    assert out.returncode == 0, out.stdout + out.stderr
    assert per_host_tasks(out.stdout) == sorted(tasks), out.stdout


ROLLING = os.path.join(REPO, "playbooks", "rolling.yml")


def test_rolling_over_a_compliant_fleet_changes_nothing_and_makes_one_kubectl_read(tmp_path):
    nodes = {}
    for name in ("gpu-a", "gpu-b"):
        nodes[name] = make_node(tmp_path / name, **SPEC)
        comply(nodes[name], make_plan(read_topology(str(nodes[name]))))
    kubectl = tmp_path / "kubectl"
    calls = tmp_path / "kubectl.calls"
    # A kubectl that can only list Nodes (none of them cordoned by an earlier roll): any other call fails.
    kubectl.write_text('#!/bin/sh\necho "$*" >> %s\n%scase "$*" in %s *" -o json") echo \'{"items": []}\' ;; *) exit 1 ;; esac\n'
                       % (calls, ACCESS_ANSWERS, NO_LEASE))
    kubectl.chmod(0o755)
    hosts = {name: {"rke2_numa_sysfs_root": str(root), "rke2_numa_boot_root": str(root),
                    "rke2_numa_kubelet_dir": str(root / "var/lib/kubelet"),
                    "rke2_numa_config_path": str(root / "etc/rancher/rke2/config.yaml")} for name, root in nodes.items()}
    inv = {"gpu": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                            "rke2_numa_kubectl": str(kubectl)}, "hosts": hosts}}
    inv["gpu"]["vars"]["rke2_numa_backup_dir"] = str(tmp_path / "backup")
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inv))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_DEPRECATION_WARNINGS="false")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"), ROLLING]

    # gpu-b's config.yaml holds its plan but is 0644 (the join token readable by all): fixed in place - no cordon,
    # no drain, no restart, not one write to the cluster; backed up first (it used to drain and restart the node).
    # gpu-a's NFD feature file holds the labels of another plan (they would send pods where they do not fit): the
    # labels role rewrites it in place, nothing else (the old code called gpu-a compliant and left them).
    config = nodes["gpu-b"] / "etc/rancher/rke2/config.yaml"
    text = config.read_text()
    config.chmod(0o644)
    features = nodes["gpu-a"] / "etc/kubernetes/node-feature-discovery/features.d"
    hosts["gpu-a"]["rke2_numa_nfd_features_dir"] = str(features)
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inv))
    features.mkdir(parents=True)
    wanted = nfd_features(numa_labels(make_plan(read_topology(str(nodes["gpu-a"])))))
    (features / "rke2-numa").write_text(wanted.replace("plan=", "plan=0"))
    (features / "rke2-numa").chmod(0o644)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert '"fixed in place (no drain): gpu-a, gpu-b",' in out.stdout and '"reconfigured: none",' in out.stdout, out.stdout
    assert stat.S_IMODE(config.stat().st_mode) == 0o600 and config.read_text() == text
    assert (features / "rke2-numa").read_text() == wanted
    assert [open(b).read() for b in glob.glob(str(tmp_path / "backup" / "*~"))] == [text]
    # fixing in place writes the nodes' files: the roll takes the Lease first (one roll at a time), and gives it back
    lines = calls.read_text().splitlines()
    assert lines[:5] == [ASKED, ONE_READ, LEASE_READ, LEASE_READ,
                         "--kubeconfig /etc/rancher/rke2/rke2.yaml create --namespace rke2-numa-system --validate=false -o json -f -"], lines
    # the give-back reads the Lease, then the Nodes (what another run of the roll has out: counted after the Lease)
    assert lines[5:] == [LEASE_READ, "--kubeconfig /etc/rancher/rke2/rke2.yaml get nodes -o json"], lines
    calls.unlink()
    shutil.rmtree(str(tmp_path / "backup"))

    before = {name: tree(root) for name, root in nodes.items()}
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "changed=1" not in out.stdout
    # the pod audit's read returns the Nodes too: the pick play finds its markers there
    assert calls.read_text().splitlines() == [ASKED, ONE_READ, LEASE_READ], \
        "one question (what may this kubeconfig do), the Lease's read (a roll in progress?), one read, no change"
    assert {name: tree(root) for name, root in nodes.items()} == before
    assert "skipping: no hosts matched" in out.stdout
    assert '"compliant (skipped): gpu-a, gpu-b",' in out.stdout and '"reconfigured: none",' in out.stdout, out.stdout


def test_labels_playbook_labels_only_the_nodes_that_run_their_plan(fleet, tmp_path):
    inventory, nodes, plan = fleet
    features = {name: root / "etc/kubernetes/node-feature-discovery/features.d" for name, root in nodes.items()}
    host_vars = tmp_path / "host_vars"
    host_vars.mkdir()
    for name, path in features.items():
        (host_vars / (name + ".yml")).write_text(yaml.safe_dump({"rke2_numa_nfd_features_dir": str(path)}))
    local = tmp_path / "inventory.yml"
    local.write_text(open(inventory).read())  # host_vars/ beside the inventory
    labels = os.path.join(REPO, "playbooks", "labels.yml")
    # gpu-b was labelled while it ran its plan; it lost it since: its feature file must go, NFD's other files stay
    features["gpu-b"].mkdir(parents=True)
    (features["gpu-b"] / "rke2-numa").write_text(nfd_features(numa_labels(plan)))
    (features["gpu-b"] / "vendor").write_text("vendor.io/x=1\n")
    try:
        out = play(str(local), "-e", "ansible_become=false", playbook=labels)
        assert out.returncode == 0, out.stdout + out.stderr
        assert (features["gpu-a"] / "rke2-numa").read_text() == nfd_features(numa_labels(plan))
        assert os.listdir(str(features["gpu-b"])) == ["vendor"] and not features["gpu-c"].exists()
        assert out.stdout.count("not labelled (our labels withdrawn): the node does not run its plan yet") == 2
        again = play(str(local), "-e", "ansible_become=false", playbook=labels)
        assert again.returncode == 0 and "changed=1" not in again.stdout, again.stdout
    finally:
        for name in ("gpu-a", "gpu-b"):  # the node copies as the other tests expect them
            if features[name].exists():
                shutil.rmtree(str(nodes[name] / "etc/kubernetes"))


def test_check_with_the_pod_audit_off_reads_no_pod(fleet, tmp_path):
    """rke2_numa_audit_pods=false: no cluster access at all (kubectl host variables are not needed), the check goes on."""
    inventory, nodes, _plan = fleet
    calls = os.path.join(os.path.dirname(inventory), "kubectl.calls")
    before = open(calls).read() if os.path.exists(calls) else ""
    out = play(inventory, "-e", "rke2_numa_report_dir=%s" % tmp_path, "-e", "rke2_numa_audit_pods=false")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (open(calls).read() if os.path.exists(calls) else "") == before, "no kubectl call"
    assert json.loads((tmp_path / "gpu-b.json").read_text())["pods"] == {}
    assert "pods not audited" not in out.stdout
