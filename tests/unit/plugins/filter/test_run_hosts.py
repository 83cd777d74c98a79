# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run_pattern filter's module imports the rules of the actions that run once per host, in the process Ansible
forks its workers from: a worker then imports only the action itself (make bench's fleet section measures the cost)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

# What a worker may still import for node_check or numa_plan: the actions, node_check's documentation (its argument
# spec) and their base class. Anything else of ours is imported again in every host's worker.
OWN = {"ansible_collections.maitred.rke2_numa.plugins.action", "ansible_collections.maitred.rke2_numa.plugins.action.node_check",
       "ansible_collections.maitred.rke2_numa.plugins.action.numa_plan", "ansible_collections.maitred.rke2_numa.plugins.modules",
       "ansible_collections.maitred.rke2_numa.plugins.modules.node_check",
       "ansible_collections.maitred.rke2_numa.plugins.plugin_utils.controller_action"}

WORKER = r"""
import json, sys
import ansible.executor.task_executor, ansible.plugins.action
import ansible_collections.maitred.rke2_numa.plugins.filter.run_hosts
before = set(sys.modules)
import ansible_collections.maitred.rke2_numa.plugins.action.node_check
import ansible_collections.maitred.rke2_numa.plugins.action.numa_plan
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_a_per_host_action_imports_nothing_the_hosts_filter_did_not_import_first():
    # a fresh interpreter: this test process has imported everything already
    import ansible_collections  # pylint: disable=import-outside-toplevel
    paths = [os.path.dirname(p) for p in ansible_collections.__path__]
    out = subprocess.run([sys.executable, "-c", WORKER], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(paths + sys.path)))
    late = [name for name in json.loads(out.stdout) if name.startswith("ansible_collections.") and name not in OWN]
    assert late == [], "imported in each worker, not once by the run_pattern filter: %s" % late
