# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A roll that meets a transient API error, dies, or is raced: whatever happens after it took the Lease, it gives back
what it holds (the Lease, kured's lock) through one release path and says so - never a run that ends with the cluster
locked while nothing runs. The real kubectl (through a wrapper that fails one chosen call the way kube-apiserver's 5xx
reaches kubectl) against the API stand-in, node copies (ansible_connection=local: a roll stops at the kubelet_reset
preflight, no systemd here; the Molecule and sandbox scenarios roll real nodes)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBECTL, gpu_fleet, kubeapi, needs_kubectl
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply, make_node
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_coordinated_rolls import command, hold, inventory, lease, run, writes
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_hostile_inventory import SPEC, node_vars

pytestmark = needs_kubectl
KURED_KEY = "weave.works/kured-node-lock"
# what kubectl prints for a 500 from the API server (k8s.io/apimachinery pkg/api/errors: StatusReasonInternalError)
SERVER_ERROR = 'Error from server (InternalError): an error on the server ("injected") has prevented the request from succeeding'


@pytest.fixture
def api(tmp_path):
    yield from gpu_fleet(tmp_path, ("gpu-a", "gpu-b", "other-1"))


def wrapper(tmp_path, fail_at=0):
    """A kubectl that logs each call's words (one line each; ``[Lease]`` first when its stdin is a Lease) and fails the
    ``fail_at``-th (1-based; 0: none) with a server error, as kubectl reports a 5xx (exit 1)."""
    log, script = tmp_path / "kubectl-calls", tmp_path / "kubectl-wrapper"
    log.write_text("")
    script.write_text("""#!%s
import os, sys
argv = sys.argv[1:]
body = sys.stdin.buffer.read() if "-f" in argv else None
with open(%r, "a") as handle:
    handle.write(("[Lease] " if body and b'"kind": "Lease"' in body else "") + " ".join(argv) + "\\n")
with open(%r) as handle:
    count = len(handle.read().splitlines())
if count == %d:
    sys.stderr.write(%r + "\\n")
    sys.exit(1)
if body is None:
    os.execv(%r, [%r] + argv)
import subprocess
sys.exit(subprocess.run([%r] + argv, input=body).returncode)
""" % (sys.executable, str(log), str(log), fail_at, SERVER_ERROR, KUBECTL, KUBECTL, KUBECTL))
    script.chmod(0o755)
    return str(script), log


def after_take(lines, words):
    """The 1-based index of the first call holding ``words`` after the roll took its Lease (the first write of one)."""
    taken = next(i for i, line in enumerate(lines) if line.startswith("[Lease] "))
    return next(i + 1 for i, line in enumerate(lines) if i > taken and words in line)


PREFIX = "rke2-numa.maitred.io/"
LABELS = {PREFIX + "plan": "0123456789abcdef", PREFIX + "numa-nodes": "2"}   # an earlier plan's, on gpu-a


def with_labels(api):
    """gpu-a with our labels of an earlier plan (the roll withdraws them first: the node does not run its plan)."""
    with api.edit("gpu-a") as node:
        node["labels"] = dict({k: v for k, v in (node.get("labels") or {}).items() if not k.startswith(PREFIX)}, **LABELS)


def kured_annotation(api):
    got = api.kubectl("get", "daemonset", "kured", "-n", "kube-system", "-o", "json")
    return (json.loads(got.stdout)["metadata"].get("annotations") or {}).get(KURED_KEY)


@pytest.mark.parametrize("read", [
    "get daemonsets --all-namespaces -o json",        # kured's lock, in the pick play
    "get lease rke2-numa-roll",                        # the renewal before the batch's cordons
    "get nodes,pods --all-namespaces -o json",        # the capacity read of the batch
])
def test_one_server_error_after_the_lease_is_taken_gives_everything_back_and_says_so(api, tmp_path, read):
    """One 5xx on a read after the Lease was taken: the Lease and kured's lock are given back, the labels withdrawn from
    a node the roll did not reach are given back as they were, the summary is said, the run fails naming the error, and
    the next roll starts at once (no "another roll holds the Lease"). Before, a read
    without a rescue failed the hosts: the summary play never ran, the Lease stayed 2,590 s and kured's lock 70 min."""
    kured = [{"namespace": "kube-system", "name": "kured", "labels": {"app.kubernetes.io/name": "kured"}}]
    (tmp_path / "state" / "daemonsets.json").write_text(json.dumps(kured))
    hosts = {"gpu-a": node_vars(make_node(tmp_path / "gpu-a", **SPEC), rke2_numa_labels_via="kubectl")}
    kubectl, log = wrapper(tmp_path)
    with_labels(api)
    code, text = run(api, tmp_path, "rolling.yml", hosts, kubectl=kubectl, rke2_numa_roll_id="roll-count")
    assert "roll roll-count took the Lease" in text, text[-3000:]
    fail_at = after_take(log.read_text().splitlines(), read)

    kubectl, log = wrapper(tmp_path, fail_at)
    with_labels(api)
    code, text = run(api, tmp_path, "rolling.yml", hosts, kubectl=kubectl, rke2_numa_roll_id="roll-hit")
    calls = log.read_text().splitlines()
    assert "injected" in text and code != 0, (fail_at, calls[max(fail_at - 3, 0):fail_at + 2], text[-3000:])
    assert log.read_text().splitlines()[fail_at - 1].find(read) >= 0, "the call that failed is the read named"
    assert "roll roll-hit: held the Lease rke2-numa-system/rke2-numa-roll" in text, "the summary is said: " + text[-3000:]
    assert lease(api)["spec"]["holderIdentity"] == "", "the Lease is given back"
    assert kured_annotation(api) is None, "kured's lock is given back"
    assert {k: v for k, v in api.node("gpu-a")["labels"].items() if k.startswith(PREFIX)} == LABELS, \
        "the labels withdrawn from gpu-a, which the roll did not reach, are given back: " + text[-2000:]

    code, text = run(api, tmp_path, "rolling.yml", hosts, rke2_numa_roll_id="roll-after")
    assert "another roll holds the Lease rke2-numa-system" not in text and "roll roll-after took the Lease" in text, text[-3000:]


def test_a_roll_that_waits_for_the_lease_reads_the_fleet_after_the_wait_and_drains_nothing_the_other_finished(api, tmp_path):
    """Roll B given rke2_numa_roll_lock_wait starts while roll A has gpu-a out; A finishes gpu-a (it runs its plan, back
    in service, the Lease given back). B reads the fleet after its wait: gpu-a is compliant - no cordon, no label
    withdrawn, no write at all. Before, B's check ran before the wait and was never redone: it withdrew gpu-a's labels
    and started it again."""
    root = make_node(tmp_path / "gpu-a", **SPEC)
    hold(api, "roll-first", cordon=["gpu-a"])
    argv, env = command(api, inventory(api, tmp_path, {"gpu-a": node_vars(root)}, rke2_numa_roll_id="roll-waits",
                                       rke2_numa_roll_lock_wait=120), "rolling.yml")
    since = len(api.calls())
    waiting = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and len([c for c in api.calls()[since:] if "/leases/" in c["path"]]) < 2:
        time.sleep(0.5)
    # roll A finishes gpu-a: it runs its plan, A returns it to service and gives the Lease back
    comply(root, make_plan(read_topology(str(root))))
    with api.edit("gpu-a") as node:
        node["unschedulable"] = False
        node["annotations"] = {}
    hold(api, "")
    released = len(api.calls())
    out, dummy = waiting.communicate(timeout=300)
    text = " ".join(out.split())
    assert waiting.returncode == 0, text[-3000:]
    assert "waiting up to 120 s before reading the fleet" in text and "compliant (skipped): gpu-a" in text, text[-3000:]
    assert writes(api, released) == [], "nothing written after the wait: " + text[-2000:]
    assert not api.node("gpu-a")["unschedulable"]


@pytest.mark.parametrize("container, key, concurrency", [
    ({"env": [{"name": "KURED_CONCURRENCY", "value": "2"}]}, KURED_KEY, 2),
    ({"env": [{"name": "KURED_LOCK_ANNOTATION", "value": "example.com/reboot-lock"}]}, "example.com/reboot-lock", 1),
    ({"args": ["--concurrency=3"]}, KURED_KEY, 3),
])
def test_kured_read_as_kured_reads_itself_finds_no_free_slot_while_the_roll_holds_its_lock(api, tmp_path, container, key, concurrency):
    """kured's settings from its pod template - flags, then KURED_ environment (cmd/kured/main.go LoadFromEnv) - decide
    the key and the number of entries the roll writes; kured's own Acquire (reproduced in the API stand-in) finds no
    free slot while the roll holds it (a stale maxOwners 1 on the DaemonSet included). Before, the roll read argv only:
    with KURED_CONCURRENCY=2 it wrote the one-owner format, which kured reads as a multi lock with no entries - free."""
    (tmp_path / "state" / "daemonsets.json").write_text(json.dumps([{
        "namespace": "kube-system", "name": "kured", "labels": {"app.kubernetes.io/name": "kured"},
        "annotations": {key: json.dumps({"maxOwners": 1, "locks": []})} if concurrency > 1 else {},
        "containers": [dict({"name": "kured", "image": "ghcr.io/kubereboot/kured:1.17.1", "command": ["/usr/bin/kured"]}, **container)]}]))
    hosts = {"gpu-a": node_vars(make_node(tmp_path / "gpu-a", **SPEC))}
    kubectl, log = wrapper(tmp_path)
    code, text = run(api, tmp_path, "rolling.yml", hosts, kubectl=kubectl, rke2_numa_roll_id="roll-kured")
    held = [c["summary"]["annotations"][key] for c in sorted(api.calls(), key=lambda c: c["time"])
            if c["method"] == "PATCH" and c["summary"].get("daemonset") == "kube-system/kured"]
    assert held and held[0] is not None, text[-3000:]
    assert not kubeapi.kured_acquires(held[0], concurrency, "gpu-b", time.time()), held[0]
    assert held[-1] is None or json.loads(held[-1]).get("locks") == [], "given back at the end"
