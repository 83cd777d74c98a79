# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The labels role through ansible-playbook on localhost: with nfd it writes the feature
file into a folder of the test's (check mode writes nothing, a rerun changes nothing, none
removes it); with kubectl the real kubectl labels a Node of the API stand-in, touching only
the collection's labels, and a rerun makes no API write."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import threading
import time

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import nfd_features, numa_labels
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBECTL, Cluster, needs_kubectl, rke2

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLE = os.path.join(REPO, "roles", "labels")
P = "rke2-numa.maitred.io/"


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    """The l40s-offline sample's plan with 1G hugepages on its GPU node."""
    base = tmp_path_factory.mktemp("l40s")
    root = gen_sysfs.write_tree(gen_sysfs.samples()["l40s-offline"], str(base / "l40s-offline"))
    return make_plan(read_topology(root), hugepages_per_node=4)


def test_the_role_takes_the_plan_and_chooses_how_to_publish():
    """(tests/unit/roles/test_role_specs.py keeps every default and its spec in step.)"""
    with open(os.path.join(ROLE, "meta", "argument_specs.yml")) as f:
        specs = yaml.safe_load(f)["argument_specs"]["main"]["options"]
    assert [name for name, spec in specs.items() if spec.get("required")] == ["rke2_numa_plan"]
    # how the labels go, and where NFD reads them, are shared (the check reads them too): the common role's
    with open(os.path.join(REPO, "roles", "common", "meta", "argument_specs.yml")) as f:
        specs = yaml.safe_load(f)["argument_specs"]["main"]["options"]
    assert (specs["rke2_numa_labels_via"]["choices"], specs["rke2_numa_labels_via"]["default"]) == (["nfd", "kubectl", "none"], "nfd")
    assert specs["rke2_numa_nfd_features_dir"]["default"] == "/etc/kubernetes/node-feature-discovery/features.d"


def make_play(tmp_path, plan, env=None, tasks_from=None, **variables):
    """ansible-playbook with the role (or its ``tasks_from`` entry point) on localhost; returns
    run(*extra, rc=0) -> (changed, stdout)."""
    playbook = tmp_path / "play.yml"
    play = {"name": "Labels", "hosts": "localhost", "gather_facts": False, "vars": dict(variables, rke2_numa_plan=plan)}
    if tasks_from:
        play["tasks"] = [{"name": "The entry point", "ansible.builtin.include_role": {"name": "maitred.rke2_numa.labels", "tasks_from": tasks_from}},
                         {"name": "Show the note", "ansible.builtin.debug": {"msg": "NOTE={{ rke2_numa_labels_note | default('unset') }}"}}]
    else:
        play["roles"] = [{"role": "maitred.rke2_numa.labels"}]
    playbook.write_text(yaml.safe_dump([play]))
    env = dict(env or os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_DEPRECATION_WARNINGS="false")

    def run(*extra, rc=0):
        cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
               "-e", "ansible_python_interpreter=%s" % sys.executable, str(playbook)] + list(extra)
        result = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        assert result.returncode == rc, result.stdout + result.stderr
        return int(re.search(r"changed=(\d+)", result.stdout).group(1)), result.stdout

    return run


def test_nfd_feature_file_check_run_rerun_none(tmp_path, plan):
    features = tmp_path / "nfd" / "features.d"
    run = make_play(tmp_path, plan, rke2_numa_nfd_features_dir=str(features))
    expected = nfd_features(numa_labels(plan))

    changed, out = run("--check", "--diff")
    assert changed == 2 and not (tmp_path / "nfd").exists(), "check mode writes nothing"
    assert "+%shugepages-1gi-per-node=4" % P in out and "+%splan=%s" % (P, plan["fingerprint"]) in out

    changed, out = run()
    assert changed == 2
    feature_file = features / "rke2-numa"
    assert feature_file.read_text() == expected
    assert stat.S_IMODE(feature_file.stat().st_mode) == 0o644 and stat.S_IMODE(features.stat().st_mode) == 0o755
    assert sorted(os.listdir(str(features))) == ["rke2-numa"], "no temporary file left behind"

    for extra in ((), ("--check", "--diff")):
        changed, out = run(*extra)
        assert changed == 0, out
    assert feature_file.read_text() == expected

    # another plan: the file follows it; an existing folder keeps its own mode
    features.chmod(0o750)
    other = make_play(tmp_path, dict(plan, fingerprint="0123456789abcdef"), rke2_numa_nfd_features_dir=str(features))
    assert other()[0] == 1 and "%splan=0123456789abcdef\n" % P in feature_file.read_text()
    assert stat.S_IMODE(features.stat().st_mode) == 0o750

    # absent (the node lost its plan): the feature file goes (NFD then removes its labels), nothing else in the folder
    (features / "other-tool").write_text("vendor.io/x=1\n")
    absent = make_play(tmp_path, plan, rke2_numa_nfd_features_dir=str(features), rke2_numa_labels_state="absent")
    assert absent("--check")[0] == 1 and feature_file.exists()
    assert absent()[0] == 1 and sorted(os.listdir(str(features))) == ["other-tool"]

    # none: the same file goes (make_play rewrites the one playbook file: the present play again first)
    assert make_play(tmp_path, plan, rke2_numa_nfd_features_dir=str(features))()[0] == 1 and feature_file.exists()
    none = make_play(tmp_path, plan, rke2_numa_nfd_features_dir=str(features), rke2_numa_labels_via="none")
    assert none()[0] == 1 and sorted(os.listdir(str(features))) == ["other-tool"]
    assert none()[0] == 0


@pytest.fixture
def cluster(tmp_path):
    api = Cluster(tmp_path, lease_namespace=True)
    api.add_node("n1", ready=True, labels={"kubernetes.io/hostname": "n1", P + "team": "ml",
                                           P + "hugepages-2mi-per-node": "512", P + "plan": "old"})
    api.add_node("n2", ready=True)
    yield api
    assert api.stop() == 0
    assert [c for c in api.calls() if c["code"] >= 500] == []


@needs_kubectl
def test_kubectl_sets_only_our_labels_and_a_rerun_writes_nothing(tmp_path, plan, cluster):
    features = tmp_path / "features.d"
    features.mkdir()
    (features / "rke2-numa").write_text("%splan=old\n" % P)  # an earlier nfd run's
    run = make_play(tmp_path, plan, env=cluster.env, rke2_numa_labels_via="kubectl", rke2_numa_kubectl=KUBECTL,
                    rke2_numa_kubeconfig=cluster.kubeconfig, rke2_numa_kubectl_host="localhost", rke2_numa_node_name="n1",
                    rke2_numa_nfd_features_dir=str(features))
    before_n2 = cluster.node("n2")["labels"]

    changed, out = run()
    assert changed == 2, out  # the feature file removed, the Node labelled
    assert os.listdir(str(features)) == []
    wanted = numa_labels(plan)
    assert cluster.node("n1")["labels"] == dict(wanted, **{"kubernetes.io/hostname": "n1", P + "team": "ml"})
    assert cluster.node("n2")["labels"] == before_n2
    (patch,) = cluster.summaries("patch")
    assert patch["node"] == "n1" and patch["labels"] == dict(wanted, **{P + "hugepages-2mi-per-node": None})

    changed, out = run()
    assert changed == 0, out
    assert len(cluster.summaries("patch")) == 1, "a rerun makes no API write"

    # a label changed by hand is put back, alone
    with cluster.edit("n1") as node:
        node["labels"][P + "max-pod-gpus"] = "8"
    assert run()[0] == 1
    assert cluster.summaries("patch")[-1]["labels"] == {P + "max-pod-gpus": wanted[P + "max-pod-gpus"]}

    # the node lost its plan: every label of ours goes, the others stay
    absent = make_play(tmp_path, plan, env=cluster.env, rke2_numa_labels_via="kubectl", rke2_numa_kubectl=KUBECTL,
                       rke2_numa_kubeconfig=cluster.kubeconfig, rke2_numa_kubectl_host="localhost", rke2_numa_node_name="n1",
                       rke2_numa_nfd_features_dir=str(features), rke2_numa_labels_state="absent")
    assert absent()[0] == 1
    assert cluster.node("n1")["labels"] == {"kubernetes.io/hostname": "n1", P + "team": "ml"}
    assert cluster.summaries("patch")[-1]["labels"] == dict((key, None) for key in wanted)
    assert absent()[0] == 0


# ---------------------------------------------------------------- Node Feature Discovery (the rke2 stand-in's model of it)

class NFD(threading.Thread):
    """NFD on node n1: a pass (nfd-worker reads the features.d folder, nfd-master updates the Node) every 0.3 s;
    with ``late``, the first pass after our feature file is gone comes that many seconds later (nfd-worker's
    next pass is up to a minute away on a real node)."""

    def __init__(self, cluster, features, late=0):
        super().__init__(daemon=True)
        self.cluster, self.features, self.late, self.done = cluster, str(features), late, threading.Event()

    def run(self):
        while not self.done.wait(0.3):
            if self.late and not os.path.exists(os.path.join(self.features, "rke2-numa")):
                self.done.wait(self.late)
                self.late = 0
            rke2.nfd_pass(self.cluster.state, "n1", self.features)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.join(5)


def nfd_labelled(tmp_path, cluster, labels):
    """n1 as NFD left it after an earlier nfd run: our feature file, the Node labelled, the keys tracked."""
    features = tmp_path / "features.d"
    features.mkdir()
    (features / "rke2-numa").write_text(nfd_features(labels))
    rke2.nfd_pass(cluster.state, "n1", str(features))
    node = cluster.node("n1")
    assert all(node["labels"][k] == v for k, v in labels.items())
    assert P + "plan" in node["annotations"][rke2.NFD_FEATURE_LABELS].split(",")
    return features


def kubectl_play(tmp_path, plan, cluster, features, **more):
    return make_play(tmp_path, plan, env=cluster.env, rke2_numa_labels_via="kubectl", rke2_numa_kubectl=KUBECTL,
                     rke2_numa_kubeconfig=cluster.kubeconfig, rke2_numa_kubectl_host="localhost", rke2_numa_node_name="n1",
                     rke2_numa_nfd_features_dir=str(features), **more)


@pytest.fixture(scope="module")
def old_plan(tmp_path_factory):
    base = tmp_path_factory.mktemp("l40s-old")
    root = gen_sysfs.write_tree(gen_sysfs.samples()["l40s-offline"], str(base / "l40s-offline"))
    return make_plan(read_topology(root), hugepages_per_node=2)


@needs_kubectl
def test_a_switch_from_nfd_to_kubectl_waits_for_nfd_to_let_go_before_it_labels(tmp_path, plan, old_plan, cluster):
    """nfd-master removes the keys it tracks once our feature file is gone: labelled before that, kubectl's labels
    would go at NFD's next pass (the old code's outcome: none of our labels left on the Node)."""
    features = nfd_labelled(tmp_path, cluster, numa_labels(old_plan))
    with NFD(cluster, features, late=6):
        changed, out = kubectl_play(tmp_path, plan, cluster, features, rke2_numa_labels_timeout=30)()

        def nfd_let_go():
            tracked = (cluster.node("n1").get("annotations") or {}).get(rke2.NFD_FEATURE_LABELS, "")
            return not [k for k in tracked.split(",") if k.startswith(P)]

        deadline = time.time() + 15
        while not nfd_let_go() and time.time() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)  # and NFD's next passes
        node = cluster.node("n1")
    assert os.listdir(str(features)) == []
    wanted = numa_labels(plan)
    assert dict((k, node["labels"].get(k)) for k in wanted) == wanted, node["labels"]
    assert not [k for k in (node.get("annotations") or {}).get(rke2.NFD_FEATURE_LABELS, "").split(",") if k.startswith(P)]
    assert "Wait for Node Feature Discovery to let go of our labels" in out


@needs_kubectl
def test_a_switch_while_nfd_does_not_let_go_is_refused_and_writes_no_label(tmp_path, plan, old_plan, cluster):
    features = nfd_labelled(tmp_path, cluster, numa_labels(old_plan))
    patches = len(cluster.summaries("patch"))
    changed, out = kubectl_play(tmp_path, plan, cluster, features, rke2_numa_labels_timeout=5)(rc=2)
    assert "Node Feature Discovery still tracks rke2-numa.maitred.io/" in out and "so no label was written" in out
    assert "Is nfd-worker running on this node" in out
    assert len(cluster.summaries("patch")) == patches, "no label written"
    assert cluster.node("n1")["labels"][P + "plan"] == old_plan["fingerprint"]


@needs_kubectl
def test_the_roll_waits_for_nfd_to_label_the_node_and_says_so_when_it_does_not(tmp_path, plan, cluster):
    """The wait entry point: with NFD running the labels appear and there is no note; without, a note names NFD
    after the timeout and the play does not fail (the node still returns to service)."""
    features = tmp_path / "features.d"
    common = dict(env=cluster.env, rke2_numa_kubectl=KUBECTL, rke2_numa_kubeconfig=cluster.kubeconfig,
                  rke2_numa_kubectl_host="localhost", rke2_numa_node_name="n1", rke2_numa_nfd_features_dir=str(features))
    assert make_play(tmp_path, plan, **common)()[0] == 2  # the folder and the feature file
    wait = make_play(tmp_path, plan, tasks_from="wait.yml", rke2_numa_labels_timeout=5, **common)
    started = time.time()
    changed, out = wait()
    assert "NOTE=3 of our labels" not in out and re.search(r"NOTE=\d+ of our labels \(.*\) are not on Node n1 5 s after the feature "
                                                           r"file was written: is Node Feature Discovery running", out), out
    assert time.time() - started >= 5
    with NFD(cluster, features):
        changed, out = wait()
    assert '"msg": "NOTE="' in out, out
    node = cluster.node("n1")
    assert dict((k, node["labels"].get(k)) for k in numa_labels(plan)) == numa_labels(plan)
    # with kubectl (NFD lets go of them first) the labels are there at once
    with NFD(cluster, features):
        make_play(tmp_path, plan, rke2_numa_labels_via="kubectl", rke2_numa_labels_timeout=30, **common)()
    started = time.time()
    changed, out = make_play(tmp_path, plan, tasks_from="wait.yml", rke2_numa_labels_via="kubectl", **common)()
    assert '"msg": "NOTE="' in out and time.time() - started < 30


def test_where_the_check_saw_no_nfd_worker_the_roll_says_so_at_once_and_goes_on(tmp_path, plan, cluster):
    """labels_via nfd on a node without Node Feature Discovery (no nfd-worker pod there in the check's read): no wait
    (the old code retried rke2_numa_labels_timeout / 5 times: three minutes a node), a note naming NFD and the way out;
    where the read saw one, or did not read the pods, the wait is as before."""
    features = tmp_path / "features.d"
    common = dict(env=cluster.env, rke2_numa_kubectl=KUBECTL, rke2_numa_kubeconfig=cluster.kubeconfig,
                  rke2_numa_kubectl_host="localhost", rke2_numa_node_name="n1", rke2_numa_nfd_features_dir=str(features))
    assert make_play(tmp_path, plan, **common)()[0] == 2
    started = time.time()
    changed, out = make_play(tmp_path, plan, tasks_from="wait.yml", rke2_numa_labels_timeout=60,
                             __rke2_numa_nfd_nodes={"n1": False, "n2": True}, **common)()
    assert time.time() - started < 30, "no retries"
    assert "TASK [maitred.rke2_numa.labels : Wait for the node's labels on its Node]" in out
    assert re.search(r"Wait for the node's labels on its Node\] \*+\nskipping: \[localhost\]", out), out
    assert ("NOTE=our labels are not on Node n1: Node Feature Discovery does not run on it (no nfd-worker pod there in the "
            "cluster read of the check)") in out, out
    started = time.time()
    changed, out = make_play(tmp_path, plan, tasks_from="wait.yml", rke2_numa_labels_timeout=5,
                             __rke2_numa_nfd_nodes={"n1": True}, **common)()
    assert time.time() - started >= 5 and "is Node Feature Discovery running" in out, out
