# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A topology (from topology_info) as a readable NUMA table, and the table cells the plan
report and the fleet report share (controller side)."""

from __future__ import annotations

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


def plural(count, noun):
    """1 NUMA node, 2 NUMA nodes."""
    return "%d %s%s" % (count, noun, "" if count == 1 else "s")


def cpus_cell(cpulist):
    """A CPU list short enough for a table cell: a run of 4 or more CPUs a fixed step apart (2 or more)
    is written first,second,...,last (when that is shorter), as round-robin machines number their NUMA nodes' CPUs
    (0,2,4,...,94 instead of 48 numbers). Ranges and short lists stay as the kernel writes them."""
    if not cpulist:
        return cpulist
    cpus = sorted(parse_cpulist(cpulist))
    parts, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        if j > i:
            parts.append("%d-%d" % (cpus[i], cpus[j]) if j > i + 1 else "%d,%d" % (cpus[i], cpus[j]))
            i = j + 1
            continue
        step = cpus[i + 1] - cpus[i] if i + 1 < len(cpus) else 0
        j = i
        while step > 1 and j + 1 < len(cpus) and cpus[j + 1] - cpus[j] == step \
                and not (j + 2 < len(cpus) and cpus[j + 2] == cpus[j + 1] + 1):
            j += 1
        short = "%d,%d,...,%d" % (cpus[i], cpus[i + 1], cpus[j]) if j - i >= 3 else ""
        if short and len(short) < len(",".join(map(str, cpus[i:j + 1]))):
            parts.append(short)
            i = j + 1
        else:
            parts.append(str(cpus[i]))
            i += 1
    return ",".join(parts)


def text_table(rows):
    """Left-aligned columns, two spaces apart; rows are tuples of cells."""
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(str(cell).ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def gpu_line(dev):
    """GPU <address> (<vendor> <device>, driver <driver>): node N; unknown ids and an unbound driver said so."""
    ids = " ".join(str(dev[k]) for k in ("vendor", "device") if dev.get(k))
    where = "node %s" % dev["numa_node"] if dev.get("numa_node") is not None else "node UNKNOWN"
    if dev.get("numa_node_source") == "local_cpus":
        where += " (from local_cpulist; the kernel says -1)"
    driver = "driver %s" % dev["driver"] if dev.get("driver") else "no driver bound"
    return "GPU %s (%s%s): %s" % (dev["address"], ids + ", " if ids else "", driver, where)


def topology_table(topology, warnings=True):
    """Return the topology as text: a summary line, the NUMA table, devices, warnings (unless
    warnings is false: topology_info already printed them as task warnings)."""
    if not isinstance(topology, dict) or "numa_nodes" not in topology:
        raise ValueError("topology_table expects the 'topology' dict returned by topology_info")
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
            cpus_cell(node["cpus"]) or "(no CPUs)",
            cores_per_node[nid] if node["cpus"] else 0,
            size(node["memory_kb"] * 1024),
            _hugepages(node.get("hugepages", {})),
            len(gpus) or "-",
            " ".join(n for d in nics for n in (d.get("interfaces") or [d["address"]])) or "-",
        ))
    online = len(parse_cpulist(topology["cpus_online"]))
    lines = [
        "%s (%d with CPUs), %s online in %s (SMT %s)%s, %s, kernel %s" % (
            plural(len(topology["numa_nodes"]), "NUMA node"),
            len([n for n in topology["numa_nodes"] if n["has_cpu"]]),
            plural(online, "CPU"),
            plural(len(topology.get("cores", [])), "core"),
            "on" if topology.get("smt_active") else "off",
            ", offline CPUs " + topology["cpus_offline"] if topology.get("cpus_offline") else "",
            size(topology.get("memory_kb", 0) * 1024),
            topology.get("kernel_release") or "unknown",
        )
    ]
    lines += text_table(rows)
    lines += [gpu_line(dev) for dev in devices if dev["kind"] == "gpu"]
    if topology.get("isolated"):
        lines.append("isolated now: %s" % topology["isolated"])
    for warning in topology.get("warnings", []) if warnings else []:
        if not is_string(warning):
            continue
        lines.append("WARNING: %s" % warning)
    return "\n".join(lines)
