# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A no-op roll stays nearly free (issue 52 item 6): over a compliant fleet rolling.yml writes nothing to the API - no
Lease, no kured lock, no Node - and asks nothing of any one Node beyond what the check reads of the whole fleet. The
API stand-in logs every request the real kubectl sends; make bench measures the same roll's time against plan.yml."""

from __future__ import annotations

import collections
import re

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures.kube_cluster import gpu_fleet, needs_kubectl
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply, make_node
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_coordinated_rolls import run, writes
from ansible_collections.maitred.rke2_numa.tests.integration.playbooks.test_hostile_inventory import SPEC, node_vars

pytestmark = needs_kubectl
DISCOVERY = re.compile(r"^/apis?(/[^/]+(/v[^/]+)?)?$")   # /api, /apis, /api/v1, /apis/GROUP/VERSION: kubectl's discovery
NODES = tuple("gpu-%02d" % i for i in range(12))


@pytest.fixture
def api(tmp_path):
    yield from gpu_fleet(tmp_path, NODES)


def per_node_calls(calls):
    """The requests that name one Node (its object, or a namespaced object named after it), by Node."""
    out = collections.defaultdict(list)
    for call in calls:
        for name in re.findall(r"gpu-\d\d", call["path"]):
            out[name].append("%s %s" % (call["method"], call["path"]))
    return dict(out)


def test_a_roll_over_twelve_compliant_nodes_writes_nothing_and_reads_no_node_alone(api, tmp_path):
    hosts = {}
    for name in NODES:
        root = make_node(tmp_path / name, **SPEC)
        comply(root, make_plan(read_topology(str(root))))
        hosts[name] = node_vars(root)
    since = len(api.calls())
    code, text = run(api, tmp_path, "rolling.yml", hosts)
    assert code == 0, text[-3000:]
    assert "compliant (skipped): " + ", ".join(NODES) in text, text[-3000:]
    calls = api.calls()[since:]
    assert writes(api, since) == [], "a no-op roll writes nothing: %s" % writes(api, since)
    assert per_node_calls(calls) == {}, "no request for one Node: %s" % per_node_calls(calls)
    # beyond kubectl's discovery and the access check's reviews: the fleet's Nodes and pods (the check's one read), the
    # roll's Lease and its namespace - as many for 12 nodes as for one
    reads = sorted({"%s %s" % (c["method"], c["path"]) for c in calls
                    if not DISCOVERY.match(c["path"]) and not c["path"].endswith("/selfsubjectaccessreviews")})
    assert reads == ["GET /api/v1/namespaces/rke2-numa-system", "GET /api/v1/nodes", "GET /api/v1/pods",
                     "GET /apis/coordination.k8s.io/v1/namespaces/rke2-numa-system/leases/rke2-numa-roll"], reads
