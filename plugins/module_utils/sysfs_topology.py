# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read a host's NUMA topology from a sysfs/procfs root.

Runs on the target (live ``/``) or on any unpacked ``hwloc-gather-topology``
tree. Pure reads, no commands, no third-party imports: one module call per host.
The result is the ``topology`` dict of the collection's public contract
(see the topology_info module's RETURN: numa_nodes, cpus_online, cpus_offline, cores,
smt_active, pci_devices, cmdline, isolated, ...).

Sources: Documentation/ABI/stable/sysfs-devices-system-cpu,
Documentation/ABI/stable/sysfs-devices-node, Documentation/ABI/testing/sysfs-bus-pci,
Documentation/admin-guide/mm/numaperf.rst (access0/initiators), the NVIDIA driver's
procfs (nv-procfs.c: numa_status) and hwloc's linux backend (GPUMemory nodes).
"""

from __future__ import annotations

import os
import re

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import (
    CPU_ID_LIMIT,
    NODE_ID_LIMIT,
    CpusetError,
    format_cpulist,
    parse_cpulist,
    parse_cpumask,
)

# PCI vendor ids of GPU makers, and the PCI classes (base+subclass) that are
# GPUs or accelerators: 0x0300 VGA, 0x0302 3D controller, 0x1200 processing
# accelerator (pci_ids.h: PCI_CLASS_DISPLAY_VGA, _3D, PCI_CLASS_ACCELERATOR_PROCESSING).
GPU_VENDORS = {"0x10de": "nvidia", "0x1002": "amd", "0x8086": "intel"}
GPU_CLASSES = ("0x0300", "0x0302", "0x1200")
# 0x0200 Ethernet, 0x0207 InfiniBand.
NIC_CLASSES = ("0x0200", "0x0207")

_NODE_DIR = re.compile(r"^node(\d+)$")
_CPU_DIR = re.compile(r"^cpu(\d+)$")
_HUGEPAGES_DIR = re.compile(r"^hugepages-(\d+)kB$")
_MEMINFO_LINE = re.compile(r"^(?:Node\s+\d+\s+)?([A-Za-z_()0-9]+):\s+(\d+)")


class TopologyError(Exception):
    """The root cannot be read as a sysfs tree; names the path at fault."""


def _read(path):
    """Return the stripped content of a file (NUL bytes dropped), or None when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 1 << 20)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8").replace("\x00", "").strip()
    except UnicodeDecodeError:
        return None


def _read_int(path):
    text = _read(path)
    if text is None:
        return None
    try:
        return int(text, 0)
    except ValueError:
        return None


def _listdir(path):
    try:
        return os.listdir(path)
    except OSError:
        return []


def _numbered(path, pattern, limit=None, what="id"):
    """Entries of a directory matching ``pattern`` as a sorted list of (number, name).

    With ``limit``, an entry numbered at or above it (``node1024``, ``cpu8192``: no
    kernel makes one) is a TopologyError naming it.
    """
    out = []
    for name in _listdir(path):
        m = pattern.match(name)
        if m:
            number = int(m.group(1))
            if limit is not None and number >= limit:
                raise TopologyError("%s: %s %d is beyond the kernel's limit (ids < %d)"
                                    % (os.path.join(path, name), what, number, limit))
            out.append((number, name))
    return sorted(out)


def _cpulist_file(path, what):
    """Parse a cpulist file; None when missing; TopologyError naming the file when unparseable
    or when it names a CPU id no kernel has (CPU_ID_LIMIT)."""
    text = _read(path)
    if text is None:
        return None
    try:
        return parse_cpulist(text, limit=CPU_ID_LIMIT)
    except CpusetError as e:
        raise TopologyError("%s: %s (%s)" % (path, e, what))


def _cpumask_file(path, what):
    text = _read(path)
    if text is None:
        return None
    try:
        return parse_cpumask(text, limit=CPU_ID_LIMIT)
    except CpusetError as e:
        raise TopologyError("%s: %s (%s)" % (path, e, what))


def parse_meminfo(text):
    """Parse /proc/meminfo or nodeN/meminfo content into {key: kB}."""
    out = {}
    for line in (text or "").splitlines():
        m = _MEMINFO_LINE.match(line.strip())
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def read_node_memory_kb(path, nid):
    """MemTotal in kB of NUMA node ``nid`` from its ``meminfo`` file at ``path``.

    The kernel writes ``nodeN/meminfo`` for every node, starting with a
    ``Node N MemTotal: <kB> kB`` line (drivers/base/node.c node_read_meminfo); a
    node without memory says 0 there. A file that is missing, unreadable or
    without that line is a TopologyError naming it: reading it as 0 would put all
    reserved memory on the other nodes and offer this one to pods.
    """
    text = _read(path)
    if text is None:
        raise TopologyError("%s: cannot be read (missing, unreadable or not text), so NUMA node %d's memory is unknown"
                            % (path, nid))
    m = re.search(r"^Node\s+%d\s+MemTotal:\s+(\d+)(?:\s*kB)?\s*$" % nid, text, re.M)
    if not m:
        raise TopologyError("%s: no 'Node %d MemTotal' line, so NUMA node %d's memory is unknown" % (path, nid, nid))
    return int(m.group(1))


def read_total_memory_kb(root, warnings):
    """MemTotal in kB of ``proc/meminfo``, for a kernel without NUMA (one node 0).

    Present but without a MemTotal line: TopologyError naming it. Missing: a
    warning and 0 (hwloc's dumps of old machines lack the file, and lstopo reads
    such a node's memory as unknown; a live kernel always has it, and the planner
    refuses a host without memory).
    """
    path = os.path.join(root, "proc", "meminfo")
    if not os.path.lexists(path):
        warnings.append("%s: missing, so the memory of NUMA node 0 is unknown and reported as 0" % path)
        return 0
    text = _read(path)
    if text is None:
        raise TopologyError("%s: cannot be read (unreadable or not text), so the memory is unknown" % path)
    memory = parse_meminfo(text).get("MemTotal")
    if memory is None:
        raise TopologyError("%s: no 'MemTotal' line, so the memory is unknown" % path)
    return memory


def read_cpus(cpu_dir):
    """Return (online, present) CPU id lists.

    ``cpu/online`` is authoritative when it exists. Without it (old kernels,
    some dumps), a ``cpuN`` directory is online unless its ``online`` file says 0.
    """
    dirs = [n for n, _name in _numbered(cpu_dir, _CPU_DIR, CPU_ID_LIMIT, "CPU id")]
    present = _cpulist_file(os.path.join(cpu_dir, "present"), "present CPUs")
    if present is None:
        present = dirs
    online = _cpulist_file(os.path.join(cpu_dir, "online"), "online CPUs")
    if online is None:
        online = [n for n in dirs if _read(os.path.join(cpu_dir, "cpu%d" % n, "online")) != "0"]
    present = sorted(set(present) | set(online))
    return online, present


def read_cores(cpu_dir, online):
    """Group online CPUs into physical cores (SMT sibling groups), sorted by first CPU.

    Siblings come from ``topology/thread_siblings_list`` (or ``core_cpus_list``,
    or the ``thread_siblings`` mask), restricted to online CPUs and merged
    transitively, so an inconsistent sibling file cannot split or duplicate a
    core; a CPU named by an earlier sibling is not read again. A CPU without
    topology files is a core of its own. These are the kernel's core groups,
    which the kubelet (cadvisor) uses too.
    """
    online_set = set(online)
    parent = dict((c, c) for c in online)

    def find(c):
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    for cpu in online:
        if find(cpu) != cpu:
            continue  # already named by an earlier sibling: its group is known
        topo = os.path.join(cpu_dir, "cpu%d" % cpu, "topology")
        sib = _cpulist_file(os.path.join(topo, "thread_siblings_list"), "SMT siblings")
        if sib is None:
            sib = _cpulist_file(os.path.join(topo, "core_cpus_list"), "SMT siblings")
        if sib is None:
            sib = _cpumask_file(os.path.join(topo, "thread_siblings"), "SMT siblings")
        for other in sib or ():
            if other in online_set:
                a, b = find(cpu), find(other)
                if a != b:
                    parent[max(a, b)] = min(a, b)

    groups = {}
    for cpu in online:
        groups.setdefault(find(cpu), []).append(cpu)
    return [groups[first] for first in sorted(groups)]


def read_packages(cpu_dir, online):
    """Return the sockets: [{id, cpus}] with their online CPUs, sorted by id.

    One read of ``physical_package_id`` and ``package_cpus_list`` (or
    ``core_siblings_list``) per package, not per CPU. CPUs without topology
    files go to package -1.
    """
    online_set = set(online)
    packages = {}
    assigned = set()
    for cpu in online:
        if cpu in assigned:
            continue
        topo = os.path.join(cpu_dir, "cpu%d" % cpu, "topology")
        pid = _read_int(os.path.join(topo, "physical_package_id"))
        members = _cpulist_file(os.path.join(topo, "package_cpus_list"), "package CPUs")
        if members is None:
            members = _cpulist_file(os.path.join(topo, "core_siblings_list"), "package CPUs")
        if members is None:
            members = _cpumask_file(os.path.join(topo, "core_siblings"), "package CPUs")
        members = (set(members or ()) & online_set) | {cpu}
        members -= assigned
        assigned |= members
        packages.setdefault(-1 if pid is None else pid, set()).update(members)
    return [{"id": pid, "cpus": format_cpulist(cpus)} for pid, cpus in sorted(packages.items())]


def read_numa_nodes(root, online, warnings):
    """Return the NUMA nodes as a list of dicts, sorted by id.

    A kernel without NUMA (no ``sys/devices/system/node``) is one node 0 that
    holds every online CPU and MemTotal of /proc/meminfo, as the kubelet sees it.
    """
    node_dir = os.path.join(root, "sys", "devices", "system", "node")
    online_set = set(online)
    numbered = _numbered(node_dir, _NODE_DIR, NODE_ID_LIMIT, "NUMA node id")
    if not numbered:
        return [_node_dict(0, online, read_total_memory_kb(root, warnings), {}, None)]

    nodes = []
    for nid, name in numbered:
        path = os.path.join(node_dir, name)
        cpus = _cpulist_file(os.path.join(path, "cpulist"), "CPUs of NUMA node %d" % nid)
        if cpus is None:
            cpus = _cpumask_file(os.path.join(path, "cpumap"), "CPUs of NUMA node %d" % nid)
        if cpus is None:
            cpus = [c for c, n in _numbered(path, _CPU_DIR, CPU_ID_LIMIT, "CPU id")]
        cpus = [c for c in cpus if c in online_set]
        memory_kb = read_node_memory_kb(os.path.join(path, "meminfo"), nid)
        hugepages = {}
        for size, hname in _numbered(os.path.join(path, "hugepages"), _HUGEPAGES_DIR):
            hp = os.path.join(path, "hugepages", hname)
            hugepages[str(size)] = {
                "total": _read_int(os.path.join(hp, "nr_hugepages")) or 0,
                "free": _read_int(os.path.join(hp, "free_hugepages")) or 0,
            }
        distance = _read(os.path.join(path, "distance"))
        try:
            distance = [int(d) for d in distance.split()] if distance else None
        except ValueError:
            warnings.append("%s: unparseable distance row %r ignored" % (os.path.join(path, "distance"), distance))
            distance = None
        nodes.append(_node_dict(nid, cpus, memory_kb, hugepages, distance))

    seen = set()
    for node in nodes:
        cpus = parse_cpulist(node["cpus"])
        dup = seen.intersection(cpus)
        if dup:
            warnings.append("CPUs %s are listed on more than one NUMA node" % format_cpulist(dup))
        seen.update(cpus)
    orphans = online_set - seen
    if orphans:
        warnings.append("online CPUs %s are on no NUMA node" % format_cpulist(orphans))
    return nodes


def _node_dict(nid, cpus, memory_kb, hugepages, distance):
    return {
        "id": nid,
        "cpus": format_cpulist(cpus),
        "cpu_count": len(cpus),
        "has_cpu": bool(cpus),
        "memory_kb": memory_kb,
        "has_memory": memory_kb > 0,
        "hugepages": hugepages,
        "distance": distance,
        "gpu_memory": False,  # set by mark_gpu_memory_nodes
        "gpu_memory_source": None,
    }


def _node_list_file(path):
    """A node list file (``has_generic_initiator``) as a set of node ids; empty when missing or unparseable."""
    try:
        return set(parse_cpulist(_read(path) or "", limit=NODE_ID_LIMIT))
    except CpusetError:
        return set()


def nvidia_numa_status_nodes(root):
    """{node id: GPU PCI address} from the NVIDIA driver's ``proc/driver/nvidia/gpus/<address>/numa_status``.

    The driver writes that file only when it onlines (or may online) the GPU's
    coherent memory as a NUMA node - POWER9 with NVLink 2.0, Grace Hopper and Grace
    Blackwell without CDMM - and its ``Node:`` line names the node. This is how
    hwloc's linux backend finds its ``GPUMemory`` NUMA nodes.
    """
    base = os.path.join(root, "proc", "driver", "nvidia", "gpus")
    found = {}
    for address in sorted(_listdir(base)):
        m = re.search(r"^Node:\s*(\d+)\s*$", _read(os.path.join(base, address, "numa_status")) or "", re.M)
        if m:
            found.setdefault(int(m.group(1)), address)
    return found


def nvidia_gpu_info(root, address):
    """(uuid, minor) the NVIDIA driver gives the GPU at ``address``, from
    ``proc/driver/nvidia/gpus/<address>/information``: ``GPU UUID:`` is the id the NVIDIA
    device plugin hands a container in NVIDIA_VISIBLE_DEVICES, ``Device Minor:`` the N of
    the ``/dev/nvidiaN`` node a container gets. None for what is not there."""
    text = _read(os.path.join(root, "proc", "driver", "nvidia", "gpus", address, "information")) or ""
    uuid = re.search(r"^GPU UUID:\s*(GPU-[0-9A-Fa-f-]+)\s*$", text, re.M)
    minor = re.search(r"^Device Minor:\s*([0-9]+)\s*$", text, re.M)
    return (uuid.group(1) if uuid else None), (int(minor.group(1)) if minor else None)


def mark_gpu_memory_nodes(root, nodes, pci_devices):
    """Mark the CPU-less NUMA nodes that hold a coherent GPU's memory (``gpu_memory``), saying
    from which evidence (``gpu_memory_source``), in this order:

    - ``nvidia_numa_status``: the NVIDIA driver names the node in a GPU's ``numa_status``
      (``nvidia_numa_status_nodes``; hwloc's rule);
    - ``gpu_numa_node``: a GPU's own PCI ``numa_node`` is the CPU-less node (the firmware
      puts the GPU in its memory's proximity domain);
    - ``generic_initiator``, on a host with a GPU: the kernel lists the node in
      ``node/has_generic_initiator`` (ACPI SRAT Generic Initiator Affinity: the node's
      initiator is a device, not a CPU - how Grace firmware describes each GPU's memory
      partitions, 8 per GPU for MIG, most of them empty until MIG uses them), or the node's
      nearest initiators (``access0/initiators``, from ACPI HMAT) are such device nodes.

    A CPU-less node is not GPU memory by itself: CXL memory, NVDIMMs, Xeon Max HBM and
    KNL MCDRAM are CPU-less nodes too, and distances or a memory-side cache say only
    where memory is, not whose. Nodes with CPUs are never marked.
    """
    node_dir = os.path.join(root, "sys", "devices", "system", "node")
    cpuless = set(n["id"] for n in nodes if not n["has_cpu"])
    sources = {}
    for nid in nvidia_numa_status_nodes(root):
        if nid in cpuless:
            sources.setdefault(nid, "nvidia_numa_status")
    gpus = [d for d in pci_devices if d["kind"] == "gpu"]
    for dev in gpus:
        if dev["numa_node_source"] == "numa_node" and dev["numa_node"] in cpuless:
            sources.setdefault(dev["numa_node"], "gpu_numa_node")
    if gpus:
        # device-only initiator nodes: a node with CPUs initiates for its CPUs as well
        devices = _node_list_file(os.path.join(node_dir, "has_generic_initiator")) & cpuless
        for nid in sorted(cpuless):
            access0 = os.path.join(node_dir, "node%d" % nid, "access0", "initiators")
            nearest = set(int(m.group(1)) for m in (_NODE_DIR.match(name) for name in _listdir(access0)) if m)
            if nid in devices or (nearest and nearest <= devices):
                sources.setdefault(nid, "generic_initiator")
    for node in nodes:
        node["gpu_memory"] = node["id"] in sources
        node["gpu_memory_source"] = sources.get(node["id"])
    return nodes


def classify_pci(vendor, pci_class):
    """Return "gpu", "nic" or None for a PCI vendor id and class (both "0x..." strings)."""
    pci_class = (pci_class or "").lower()
    if pci_class.startswith(NIC_CLASSES):
        return "nic"
    if pci_class.startswith(GPU_CLASSES) and (vendor or "").lower() in GPU_VENDORS:
        return "gpu"
    return None


def device_numa_node(sysfs_node, local_cpus, node_cpus):
    """Return (numa_node, source) for a PCI device.

    ``node_cpus`` maps every NUMA node id to its set of online CPUs. The
    kernel's ``numa_node`` when it names an existing node; else the one node
    whose CPUs contain all of the device's online local CPUs; else (None, None):
    unknown, and the device plugin gives the kubelet no topology hint for it.
    """
    if sysfs_node is not None and sysfs_node in node_cpus:
        return sysfs_node, "numa_node"
    local = set(local_cpus or ())
    if local:
        matches = [nid for nid, cpus in sorted(node_cpus.items()) if cpus and local <= cpus]
        if len(matches) == 1:
            return matches[0], "local_cpus"
    return None, None


def read_pci_devices(root, online, node_cpus, warnings):
    """Return the GPUs and NICs under sys/bus/pci/devices with their NUMA node."""
    pci_dir = os.path.join(root, "sys", "bus", "pci", "devices")
    nvidia_procfs = set(_listdir(os.path.join(root, "proc", "driver", "nvidia", "gpus")))
    online_set = set(online)
    devices = []
    for address in sorted(_listdir(pci_dir)):
        path = os.path.join(pci_dir, address)
        pci_class = _read(os.path.join(path, "class"))
        if not (pci_class or "").lower().startswith(GPU_CLASSES + NIC_CLASSES):
            continue  # most devices (bridges, storage, USB): one read each
        vendor = _read(os.path.join(path, "vendor"))
        if vendor is None and address in nvidia_procfs:
            vendor = "0x10de"  # the NVIDIA driver lists its GPUs in /proc/driver/nvidia/gpus
        kind = classify_pci(vendor, pci_class)
        if kind is None:
            continue
        local = _cpulist_file(os.path.join(path, "local_cpulist"), "local CPUs of %s" % address)
        if local is None:
            local = _cpumask_file(os.path.join(path, "local_cpus"), "local CPUs of %s" % address)
        local = [c for c in (local or ()) if c in online_set]
        sysfs_node = _read_int(os.path.join(path, "numa_node"))
        numa_node, source = device_numa_node(sysfs_node, local, node_cpus)
        if numa_node is None:
            warnings.append(
                "%s %s (vendor %s) has no known NUMA node (numa_node=%s, local CPUs %s): "
                "the device plugin gives the kubelet no topology hint for it"
                % (kind.upper(), address, vendor, sysfs_node, format_cpulist(local) or "none")
            )
        driver = os.path.join(path, "driver")
        uuid, minor = nvidia_gpu_info(root, address) if address in nvidia_procfs else (None, None)
        devices.append({
            "address": address,
            "kind": kind,
            "vendor": vendor,
            "device": _read(os.path.join(path, "device")),
            "class": pci_class,
            "numa_node": numa_node,
            "numa_node_source": source,
            "local_cpus": format_cpulist(local),
            "driver": os.path.basename(os.path.realpath(driver)) if os.path.islink(driver) else None,
            "interfaces": sorted(_listdir(os.path.join(path, "net"))),
            "uuid": uuid,
            "minor": minor,
        })
    return devices


def kernel_release(root):
    release = _read(os.path.join(root, "proc", "sys", "kernel", "osrelease"))
    if release:
        return release
    version = _read(os.path.join(root, "proc", "version")) or ""
    m = re.match(r"Linux version (\S+)", version)
    return m.group(1) if m else None


def read_topology(root="/"):
    """Read the whole topology under ``root``; raise TopologyError, never return a partial result."""
    cpu_dir = os.path.join(root, "sys", "devices", "system", "cpu")
    if not os.path.isdir(cpu_dir):
        raise TopologyError("%s does not exist or is not a directory: %s is not a sysfs root" % (cpu_dir, root))
    warnings = []
    online, present = read_cpus(cpu_dir)
    if not online:
        raise TopologyError("%s: no online CPUs found (neither an 'online' file nor cpuN directories)" % cpu_dir)
    offline = sorted(set(present) - set(online))
    cores = read_cores(cpu_dir, online)
    nodes = read_numa_nodes(root, online, warnings)
    node_cpus = dict((node["id"], set(parse_cpulist(node["cpus"]))) for node in nodes)
    node_of = {}
    for nid in sorted(node_cpus):
        for cpu in node_cpus[nid]:
            node_of.setdefault(cpu, nid)
    for core in cores:
        core_nodes = sorted(set(node_of[c] for c in core if c in node_of))
        if len(core_nodes) > 1:
            warnings.append("core of CPUs %s spans NUMA nodes %s" % (format_cpulist(core), core_nodes))
    smt_active = _read(os.path.join(cpu_dir, "smt", "active"))
    smt_active = smt_active == "1" if smt_active in ("0", "1") else any(len(c) > 1 for c in cores)
    meminfo = parse_meminfo(_read(os.path.join(root, "proc", "meminfo")))
    isolated = _cpulist_file(os.path.join(cpu_dir, "isolated"), "isolated CPUs")
    nohz_full = _read(os.path.join(cpu_dir, "nohz_full"))  # "(null)" when nohz_full= is not in effect
    try:
        nohz_full = parse_cpulist(nohz_full, limit=CPU_ID_LIMIT) if nohz_full and nohz_full != "(null)" else []
    except CpusetError as e:
        warnings.append("%s: unparseable, ignored: %s" % (os.path.join(cpu_dir, "nohz_full"), e))
        nohz_full = []
    sizes = [s for s, _name in _numbered(os.path.join(root, "sys", "kernel", "mm", "hugepages"), _HUGEPAGES_DIR)]
    pci_devices = read_pci_devices(root, online, node_cpus, warnings)
    mark_gpu_memory_nodes(root, nodes, pci_devices)
    return {
        "numa_nodes": nodes,
        "cpus_online": format_cpulist(online),
        "cpus_offline": format_cpulist(offline),
        "cpu_count": len(online),
        "cores": cores,
        "packages": read_packages(cpu_dir, online),
        "smt_active": smt_active,
        "pci_devices": pci_devices,
        "memory_kb": meminfo.get("MemTotal", sum(n["memory_kb"] for n in nodes)),
        "hugepage_sizes_kb": sizes,
        "default_hugepage_kb": meminfo.get("Hugepagesize"),
        "cmdline": _read(os.path.join(root, "proc", "cmdline")) or "",
        "isolated": format_cpulist(isolated or ()),
        "nohz_full": format_cpulist(nohz_full),
        "kernel_release": kernel_release(root),
        "warnings": warnings,
    }
