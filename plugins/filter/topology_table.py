# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render a topology (from topology_info) as a readable NUMA table."""

from __future__ import annotations

DOCUMENTATION = r"""
name: topology_table
short_description: Render a topology as a readable NUMA table
version_added: 0.1.0
description:
  - Turns the C(topology) returned by M(maitred.rke2_numa.topology_info) into
    a plain-text table, one line per NUMA node, with its CPUs, physical cores,
    memory, hugepages, GPUs and NICs, followed by the GPUs and NICs themselves
    and any warnings.
author:
  - maitred.rke2_numa contributors
positional: _input
options:
  _input:
    description: The topology dict.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Print the NUMA table
  ansible.builtin.debug:
    msg: "{{ __topo.topology | maitred.rke2_numa.topology_table }}"
"""

RETURN = r"""
_value:
  description: The table, lines joined by newlines.
  type: str
"""

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.collections import is_string

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import parse_cpulist
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import binary_si, human


def size(nbytes):
    """Bytes for a table cell: "-" for none, else like 1.2Gi or 319Mi."""
    return human(nbytes) if nbytes else "-"


def _hugepages(per_size):
    """Pages per size, the size as the kubelet names it (hugepages-<size>): 4x1Gi 512x2Mi 8x64Ki."""
    parts = []
    for size in sorted(per_size, key=int):
        total = per_size[size].get("total", 0)
        if total:
            parts.append("%dx%s" % (total, binary_si(int(size) * 1024)))
    return " ".join(parts) or "-"


def text_table(rows):
    """Left-aligned columns, two spaces apart; rows are tuples of cells."""
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(str(cell).ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def topology_table(topology):
    """Return the topology as text: a summary line, the NUMA table, devices, warnings."""
    if not isinstance(topology, dict) or "numa_nodes" not in topology:
        raise AnsibleFilterError("topology_table expects the 'topology' dict returned by topology_info")
    devices = topology.get("pci_devices", [])
    node_cpus = dict((node["id"], set(parse_cpulist(node["cpus"]))) for node in topology["numa_nodes"])
    cores_per_node = dict((nid, sum(1 for core in topology.get("cores", []) if set(core) <= cpus))
                          for nid, cpus in node_cpus.items())
    rows = [("node", "CPUs", "cores", "memory", "hugepages", "GPUs", "NICs")]
    for node in topology["numa_nodes"]:
        nid = node["id"]
        gpus = [d for d in devices if d["kind"] == "gpu" and d["numa_node"] == nid]
        nics = [d for d in devices if d["kind"] == "nic" and d["numa_node"] == nid]
        rows.append((
            nid,
            node["cpus"] or "(no CPUs)",
            cores_per_node[nid] if node["cpus"] else 0,
            size(node["memory_kb"] * 1024),
            _hugepages(node.get("hugepages", {})),
            len(gpus) or "-",
            " ".join(n for d in nics for n in (d.get("interfaces") or [d["address"]])) or "-",
        ))
    online = len(parse_cpulist(topology["cpus_online"]))
    lines = [
        "%d NUMA nodes (%d with CPUs), %d CPUs online in %d cores (SMT %s)%s, %s, kernel %s" % (
            len(topology["numa_nodes"]),
            len([n for n in topology["numa_nodes"] if n["has_cpu"]]),
            online,
            len(topology.get("cores", [])),
            "on" if topology.get("smt_active") else "off",
            ", offline CPUs " + topology["cpus_offline"] if topology.get("cpus_offline") else "",
            size(topology.get("memory_kb", 0) * 1024),
            topology.get("kernel_release") or "unknown",
        )
    ]
    lines += text_table(rows)
    for dev in devices:
        if dev["kind"] == "gpu":
            where = "node %s" % dev["numa_node"] if dev["numa_node"] is not None else "node UNKNOWN"
            if dev.get("numa_node_source") == "local_cpus":
                where += " (from local_cpulist; the kernel says -1)"
            lines.append("GPU %s vendor %s device %s driver %s: %s" % (
                dev["address"], dev["vendor"], dev.get("device"), dev.get("driver") or "-", where))
    if topology.get("isolated"):
        lines.append("isolated now: %s" % topology["isolated"])
    for warning in topology.get("warnings", []):
        if not is_string(warning):
            continue
        lines.append("WARNING: %s" % warning)
    return "\n".join(lines)


class FilterModule(object):
    """maitred.rke2_numa topology filters."""

    def filters(self):
        return {"topology_table": topology_table}
