# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The check and the roll with the kubectl operators run today: the pinned release clients of 1.34 to 1.37
(scripts/kubectl_clients.py, make kubectl-clients), each against the API stand-in serving its own minor (the version
skew kubectl supports), on node filesystem copies (ansible_connection=local). The oldest client the machine has (the
one on PATH) runs every other playbook test."""

from __future__ import annotations

import json
import os
import stat

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import KUBECTL_CLIENTS, gpu_fleet
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply, make_node
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_first_roll import run as first_roll_run
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_hostile_inventory import SPEC, node_vars

# The minors operators run (README's support table); scripts/kubectl_clients.py CLIENTS pins one client of each.
MINORS = ("1.34", "1.35", "1.36", "1.37")


def client(minor):
    """The pinned client of ``minor``: a test that cannot run it is skipped on a workstation, and fails in CI (CI=true),
    where make test installs them (make kubectl-clients)."""
    if minor not in KUBECTL_CLIENTS:
        if os.environ.get("CI"):
            pytest.fail("kubectl %s is missing under .build/kubectl: make kubectl-clients" % minor)
        pytest.skip("kubectl %s is not installed (make kubectl-clients)" % minor)
    return KUBECTL_CLIENTS[minor]


def run(cluster, tmp_path, playbook, hosts, *extra):
    """test_first_roll's run with the cluster's client, backups in the test's folder."""
    return first_roll_run(cluster, tmp_path, playbook, hosts, *extra, group_vars={"rke2_numa_backup_dir": str(tmp_path / "backup")})


@pytest.mark.parametrize("minor", MINORS)
def test_each_kubectl_operators_run_checks_and_rolls_the_fleet(tmp_path, minor):
    """kubectl <minor> against a <minor> API: the check audits the pods and names the node to roll; the roll fixes a
    node in place (its Lease taken and given back, no cordon)."""
    kubectl = client(minor)
    fleet = gpu_fleet(tmp_path, ("gpu-a", "gpu-b"), kubectl=kubectl, version="v%s.1+rke2r1" % minor)
    cluster = next(fleet)
    try:
        roots = {name: make_node(tmp_path / name, **SPEC) for name in ("gpu-a", "gpu-b")}
        comply(roots["gpu-a"], make_plan(read_topology(str(roots["gpu-a"]))))
        hosts = dict((name, node_vars(root)) for name, root in roots.items())
        out, text = run(cluster, tmp_path, "check.yml", hosts, "-e", "rke2_numa_report_dir=report/check")
        assert out.returncode == 0, text[-4000:]
        assert "1 of 2 compliant; to reconfigure: gpu-b" in text, text[-3000:]
        fleet_json = json.loads((tmp_path / "operator/report/check/fleet.json").read_text())
        assert "pods not audited" not in json.dumps(fleet_json), "the pod audit read the cluster with this client"

        # gpu-a's config.yaml holds its plan but is 0644: fixed in place under the roll's Lease, nothing cordoned
        config = roots["gpu-a"] / "etc/rancher/rke2/config.yaml"
        config.chmod(0o644)
        calls = len(cluster.calls())
        out, text = run(cluster, tmp_path, "rolling.yml", {"gpu-a": hosts["gpu-a"]})
        assert out.returncode == 0, text[-4000:]
        assert '"fixed in place (no drain): gpu-a",' in text, text[-3000:]
        assert stat.S_IMODE(config.stat().st_mode) == 0o600
        writes = [(c["method"], c["path"].split("?")[0]) for c in cluster.calls()[calls:]
                  if c["method"] not in ("GET",) and "accessreviews" not in c["path"]]
        assert [w for w in writes if "/leases" in w[1]], "the roll took its Lease with this client"
        assert not [w for w in writes if "/nodes/" in w[1]], "nothing cordoned, labelled or annotated: %s" % writes
        assert cluster.node("gpu-a").get("unschedulable") in (None, False)
    finally:
        next(fleet, None)
