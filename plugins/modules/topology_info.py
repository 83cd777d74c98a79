#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: topology_info
short_description: Read a host's NUMA topology from sysfs
version_added: 0.1.0
description:
  - Reads NUMA nodes, SMT sibling groups (physical cores), per-node memory and
    hugepages, online and offline CPUs, GPUs and NICs with their NUMA node,
    the kernel command line and the isolated CPUs, in one module call.
  - Works on a live host (O(sysfs_root=/)) and on any unpacked
    C(hwloc-gather-topology) tree or copied sysfs tree.
  - Only reads files; never changes anything.
  - The result is what M(maitred.rke2_numa.numa_plan) plans from.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.author
options:
  sysfs_root:
    description:
      - Directory that holds C(sys/) and C(proc/) of the machine to read.
      - The module reads C(<sysfs_root>/sys/devices/system/{cpu,node}),
        C(<sysfs_root>/sys/bus/pci/devices), C(<sysfs_root>/sys/kernel/mm/hugepages)
        and C(<sysfs_root>/proc/{cmdline,meminfo}), and where C(<sysfs_root>/var/lib/rancher/rke2/bin) points
        (RV(rke2_runtime)).
    type: path
    default: /
attributes:
  check_mode:
    support: full
    details: The module only reads; it behaves the same in check mode.
  diff_mode:
    support: none
  platform:
    platforms: linux
notes:
  - A GPU or NIC whose C(numa_node) is -1 or missing gets the NUMA node whose CPUs
    hold all of its C(local_cpulist); when that is not exactly one node, its
    C(numa_node) is null and a warning says so (the device plugin then gives
    the kubelet no topology hint for it).
  - CPUs and NUMA nodes are reported as the kernel lists them, which is what the
    kubelet sees. CPU-less memory nodes (GPU HBM, CXL) are nodes with C(has_cpu=false);
    those that hold a coherent GPU's memory have C(gpu_memory=true).
  - Fails, naming the file, rather than report a wrong topology - a NUMA node whose
    C(meminfo) cannot be read or has no C(Node N MemTotal) line (a node without memory
    says 0 there and is read as such), an unparseable CPU list, or a CPU or node id
    no kernel can have (CPU ids below 8192, NUMA node ids below 1024).
"""

EXAMPLES = r"""
- name: Read the topology of the target
  maitred.rke2_numa.topology_info:
  register: __topo

- name: Read an unpacked hwloc-gather-topology tarball on the controller
  maitred.rke2_numa.topology_info:
    sysfs_root: /tmp/dumps/dgx-a100
  delegate_to: localhost

- name: Show the NUMA nodes that hold GPUs
  ansible.builtin.debug:
    msg: "{{ __topo.topology.pci_devices | selectattr('kind', 'eq', 'gpu') | map(attribute='numa_node') | unique }}"
"""

RETURN = r"""
topology:
  description: The host's topology.
  returned: success
  type: dict
  contains:
    numa_nodes:
      description: NUMA nodes, sorted by id (ids can be sparse, for example 0 and 8).
      type: list
      elements: dict
      contains:
        id:
          description: Kernel NUMA node id.
          type: int
        cpus:
          description: Online CPUs of the node as a kernel cpulist; empty for CPU-less nodes.
          type: str
        cpu_count:
          description: Number of online CPUs on the node.
          type: int
        has_cpu:
          description: Whether the node has online CPUs.
          type: bool
        memory_kb:
          description: MemTotal of the node (C(nodeN/meminfo)) in kB.
          type: int
        has_memory:
          description: Whether the node has memory.
          type: bool
        hugepages:
          description: Per hugepage size in kB (as a string key), the node's C(total) and C(free) pages.
          type: dict
        distance:
          description: The node's SLIT distance row, or null when the kernel gives none.
          type: list
          elements: int
        gpu_memory:
          description:
            - Whether the node is a CPU-less node that holds a coherent GPU's memory (GH200, GB200 and GB300
              without NVIDIA's CDMM driver mode, POWER9 with NVLink), empty MIG partition nodes included.
              Nodes with CPUs are never GPU memory.
            - Marked only on evidence from sysfs (see C(gpu_memory_source)); other CPU-less nodes (CXL,
              NVDIMM, on-package HBM) are not GPU memory.
          type: bool
        gpu_memory_source:
          description:
            - Why the node is GPU memory, or null when it is not.
            - V(nvidia_numa_status) - the NVIDIA driver names it in C(/proc/driver/nvidia/gpus/<address>/numa_status)
              (as hwloc does for its C(GPUMemory) nodes);
              V(gpu_numa_node) - a GPU's own PCI C(numa_node) is this CPU-less node;
              V(generic_initiator) - on a host with a GPU, the kernel lists the node in
              C(node/has_generic_initiator) (ACPI SRAT Generic Initiator), or its nearest
              initiators (C(access0/initiators)) are such device-only nodes.
          type: str
      sample:
        - {id: 0, cpus: "0-55,112-167", cpu_count: 112, has_cpu: true, memory_kb: 1056589312,
           has_memory: true, hugepages: {"2048": {total: 0, free: 0}}, distance: [10, 21],
           gpu_memory: false, gpu_memory_source: null}
    cpus_online:
      description: Online CPUs as a kernel cpulist.
      type: str
      sample: "0-223"
    cpus_offline:
      description: Present but offline CPUs as a kernel cpulist; they belong to no core and no node.
      type: str
      sample: ""
    cpu_count:
      description: Number of online CPUs.
      type: int
    cores:
      description:
        - Physical cores as the kernel groups them - lists of online SMT sibling CPU ids, sorted by
          their first CPU. CPU 0 and CPU 1 are often on different cores, even different sockets.
      type: list
      elements: list
      sample: [[0, 112], [1, 113]]
    packages:
      description: Sockets (physical packages) with their online CPUs as a kernel cpulist; id -1 holds CPUs without topology files.
      type: list
      elements: dict
      sample:
        - {id: 0, cpus: "0-55,112-167"}
    smt_active:
      description: Whether any core has more than one online thread (or C(cpu/smt/active) when present).
      type: bool
    pci_devices:
      description:
        - GPUs (vendors 0x10de, 0x1002, 0x8086; classes 0x0300, 0x0302, 0x1200) and NICs (classes 0x0200, 0x0207).
        - C(uuid) is the GPU UUID the NVIDIA driver reports in C(proc/driver/nvidia/gpus/<address>/information)
          (what the NVIDIA device plugin puts in a container's C(NVIDIA_VISIBLE_DEVICES)), else null;
          C(minor) its C(Device Minor) there (the N of the C(/dev/nvidiaN) a container gets), else null.
      type: list
      elements: dict
      sample:
        - {address: "0000:18:00.0", kind: gpu, vendor: "0x10de", device: "0x2330", class: "0x030200",
           numa_node: 0, numa_node_source: numa_node, local_cpus: "0-55,112-167", driver: nvidia, interfaces: [],
           uuid: GPU-5a4bc2a4-0e0c-5d4b-9c6c-2b1f0f7b9f1e, minor: 0}
    memory_kb:
      description: MemTotal from C(proc/meminfo) in kB.
      type: int
    hugepage_sizes_kb:
      description: Hugepage sizes the kernel supports, in kB.
      type: list
      elements: int
      sample: [2048, 1048576]
    default_hugepage_kb:
      description: The default hugepage size (C(Hugepagesize) of C(proc/meminfo)) in kB, or null.
      type: int
    cmdline:
      description: The running kernel command line.
      type: str
    isolated:
      description: C(/sys/devices/system/cpu/isolated) as a kernel cpulist (CPUs isolated from scheduler domains).
      type: str
    nohz_full:
      description: C(/sys/devices/system/cpu/nohz_full) as a kernel cpulist; empty when C(nohz_full=) is not in effect.
      type: str
    kernel_release:
      description: The running kernel release, or null when the tree does not say.
      type: str
    warnings:
      description: Findings that do not stop the read (also emitted as module warnings).
      type: list
      elements: str
rke2_runtime:
  description:
    - The RKE2 the machine runs - C(version) (V(v1.37.2+rke2r1)), C(path), C(link), C(error) - from where
      C(<sysfs_root>/var/lib/rancher/rke2/bin) points (RKE2 extracts its runtime, the kubelet with it, into
      C(data/v1.37.2-rke2r1-<hash>/bin) and links C(bin) there; nothing is run). C(version) null, with why in C(error),
      where there is none (a gathered sysfs tree, RKE2 with another C(data-dir), a runtime image given by digest).
    - M(maitred.rke2_numa.numa_plan) plans for this kubelet's minor when C(rke2_numa_kubernetes_version) is not given.
  returned: success
  type: dict
  sample: {version: v1.37.2+rke2r1, path: /var/lib/rancher/rke2/bin,
           link: /var/lib/rancher/rke2/data/v1.37.2-rke2r1-0123456789ab/bin, error: null}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.maitred.rke2_numa.plugins.module_utils.rke2_runtime import runtime_version
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import (
    TopologyError,
    read_topology,
)


def main():
    module = AnsibleModule(
        argument_spec=dict(sysfs_root=dict(type="path", default="/")),
        supports_check_mode=True,
    )
    try:
        topology = read_topology(module.params["sysfs_root"])
    except TopologyError as e:
        module.fail_json(msg="cannot read the topology: %s" % e)
    for warning in topology["warnings"]:
        module.warn(warning)
    module.exit_json(changed=False, topology=topology, rke2_runtime=runtime_version(root=module.params["sysfs_root"]))


if __name__ == "__main__":
    main()
