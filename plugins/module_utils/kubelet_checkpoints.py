# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet's CPU and Memory Manager checkpoints, read and summarised (module_utils: runs on the host).

Used by kubelet_state_info and node_state_info; the controller decides with
plugin_utils/kubelet_state.py whether the kubelet would refuse them.
"""

from __future__ import annotations

import json
import os

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import (
    CpusetError,
    format_cpulist,
    parse_cpulist,
)

CPU_STATE = "cpu_manager_state"
MEMORY_STATE = "memory_manager_state"


def _load(path):
    """Return (exists, data or None, error or None)."""
    if not os.path.exists(path):
        return False, None, None
    try:
        with open(path) as f:
            data = json.load(f)
    except (IOError, OSError, ValueError) as e:
        return True, None, "cannot read %s: %s" % (path, e)
    if not isinstance(data, dict) or "policyName" not in data:
        return True, None, "%s is not a kubelet checkpoint (no policyName)" % path
    return True, data, None


def cpu_manager(path):
    exists, data, error = _load(path)
    out = {"path": path, "exists": exists, "valid": data is not None, "policy": None, "default_cpu_set": "",
           "assigned_cpus": "", "entries": {}, "error": error}
    if data is None:
        return out
    try:
        assigned, entries = set(), {}
        for pod_uid, containers in (data.get("entries") or {}).items():
            for container, cpus in containers.items():
                cpus = parse_cpulist(cpus)
                assigned.update(cpus)
                entries.setdefault(str(pod_uid), {})[str(container)] = format_cpulist(cpus)
        out.update(policy=data["policyName"], default_cpu_set=format_cpulist(parse_cpulist(data.get("defaultCpuSet", ""))),
                   assigned_cpus=format_cpulist(assigned), entries=entries)
    except (CpusetError, AttributeError, TypeError) as e:
        out.update(valid=False, error="%s: %s" % (path, e))
    return out


def memory_manager(path):
    exists, data, error = _load(path)
    out = {"path": path, "exists": exists, "valid": data is not None, "policy": None, "machine_state": None,
           "error": error}
    if data is not None:
        out.update(policy=data["policyName"], machine_state=data.get("machineState") or {})
    return out


def read_checkpoints(kubelet_dir):
    """{"cpu_manager": ..., "memory_manager": ...} as kubelet_state_info returns them."""
    return {"cpu_manager": cpu_manager(os.path.join(kubelet_dir, CPU_STATE)),
            "memory_manager": memory_manager(os.path.join(kubelet_dir, MEMORY_STATE))}
