# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""make bench must not break silently: its no-op roll (rolling.yml over compliant node copies, against plan.yml) runs
to its figures with the fake kubectl the playbooks' calls need (tests/fixtures/fake_kubectl.py) - it broke once when
the access check was added and nobody ran it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = pytest.mark.integration


def test_the_no_op_roll_benchmark_runs_to_its_figures():
    out = subprocess.run([sys.executable, os.path.join(REPO, "bench", "bench.py"), "--only", "rolling", "--rounds", "1", "--fleet", "2"],
                         cwd=REPO, capture_output=True, text=True, check=False,
                         env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build")))
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    assert "compliant fleet of 2 nodes, 1 rounds" in out.stdout and "ratio rolling/plan: " in out.stdout, out.stdout


def test_the_fleet_benchmark_runs_to_its_ratios_and_its_memory_figure():
    """make bench's fleet section (ping, plan.yml, check.yml at two fleet sizes; the controller's memory) on tiny
    fleets: it runs to its figures, and the check it times found every node compliant."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"))
    out = subprocess.run([sys.executable, os.path.join(REPO, "bench", "bench.py"), "--only", "fleet", "--rounds", "1", "--fleet-sizes", "2,3",
                          "--plan-hosts", "30"], cwd=REPO, capture_output=True, text=True, check=False, env=env)
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    assert "a fleet of 2 then 3 compliant nodes, 1 rounds, forks 5" in out.stdout, out.stdout
    assert "ratio plan/ping per extra host: " in out.stdout and "ratio check/ping per extra host: " in out.stdout
    assert "controller peak memory for 30 hosts" in out.stdout, out.stdout
