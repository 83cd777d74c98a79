#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

# This is a documentation stub: the work is done by the action plugin of the
# same name (plugins/action/numa_plan.py), on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: numa_plan
short_description: Plan coordinated kernel and kubelet settings for NUMA-aligned GPU pods
version_added: 0.1.0
description:
  - From a host's topology (M(maitred.rke2_numa.topology_info)) and the operator's
    intent, computes ONE set of kernel boot parameters and kubelet flags that the
    kernel and the kubelet both accept - reserved and isolated CPUs as whole cores,
    C(isolcpus)/C(nohz_full)/C(rcu_nocbs)/C(irqaffinity), CPU, Memory and Topology
    Manager flags, C(reserved-memory) that sums exactly to kube-reserved +
    system-reserved + the hard eviction threshold, and per-NUMA-node hugepages.
  - Runs on the controller only (an action plugin); it never contacts the host.
  - Refuses, as a failed task whose message names the rule and the numbers, an
    intent that cannot fit (for example more reserved cores than a node has, or
    hugepages that do not fit a node's memory); nothing is planned then.
  - Refuses a host with more than 16 NUMA nodes, CPU-less ones included (rule C(many-numa-nodes)), since the
    Topology Manager's hint providers enumerate every subset of the nodes, 2^N masks, at every pod
    admission. The message says how many nodes are a coherent GPU's memory and the ways out -
    NVIDIA's CDMM driver mode, or O(allow_many_numa_nodes) with NUMA alignment off. A host with
    9 to 16 nodes (GH200 has 9 or 10) is planned with C(max-allowable-numa-nodes) instead.
  - Refuses a host with a NUMA node id above 63, however few nodes it has (rule C(numa-node-id)), since the kubelet's
    NUMA affinity masks are 64 bits wide. With C(topology_manager_policy) none and C(memory_manager_policy)
    None (NUMA alignment of pods off) it is planned with a warning.
  - Refuses input that would make a wrong plan rather than guess - a topology without
    usable per-node memory or whose NUMA nodes list the same CPUs (a firmware bug; the
    message names the nodes and CPUs), node labels or taints the kubelet would refuse, pass-through
    kubelet args that are not one C(name=value) word or that the kubelet would refuse,
    and a O(kubernetes_version) that is not a string.
  - Checks its own result with the kubelet's refusal rules before returning it.
author:
  - maitred.rke2_numa contributors (@maitred)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Planning changes nothing anywhere; check mode plans the same.
  diff_mode:
    support: none
  platform:
    platforms: all
options:
  topology:
    description: The C(topology) returned by M(maitred.rke2_numa.topology_info) for this host.
    type: dict
    required: true
  reserved_cores:
    description:
      - Total number of whole physical cores to reserve for the OS, RKE2 and the kubelet (C(reserved-cpus)).
      - With O(split_reserved=true) every NUMA node with CPUs gets one, and the extra cores go first
        to the nodes with the fewest GPUs.
      - The core of the boot CPU (CPU 0, or the lowest online CPU when CPU 0 is offline) is always
        one of them - the kernel keeps timekeeping there and clears it from C(nohz_full).
      - Default (null) is one core per NUMA node that has CPUs. V(0) is refused, not read as
        the default - at least one whole core is always reserved.
      - Mutually exclusive with O(reserved_cores_per_node).
    type: int
  reserved_cores_per_node:
    description:
      - Reserved cores per NUMA node id, for example V(0=2) and V(1=1) as a mapping. Nodes with
        CPUs that are not named get one when O(split_reserved=true).
      - The node of the boot CPU gets one when not named, and V(0) for it is refused.
    type: dict
  split_reserved:
    description:
      - Keep at least one housekeeping core on every NUMA node that has CPUs.
      - When false, the reserved cores go to the node with the fewest GPUs, and the other
        nodes keep every core for pods (a warning says so) - except the boot CPU's core, which
        is always reserved, so its node keeps one.
    type: bool
    default: true
  cpu_manager_policy:
    description: CPU Manager policy (the kubelet's spelling).
    type: str
    default: static
    choices: [static, none]
  memory_manager_policy:
    description: Memory Manager policy (the kubelet's spelling).
    type: str
    default: Static
    choices: [Static, None]
  topology_manager_policy:
    description:
      - Topology Manager policy. C(single-numa-node) also sets
        C(cpu-manager-policy-options=full-pcpus-only=true).
    type: str
    default: single-numa-node
    choices: [single-numa-node, restricted, best-effort, none]
  topology_manager_scope:
    description: Topology Manager scope.
    type: str
    default: pod
    choices: [pod, container]
  kube_reserved:
    description:
      - C(kube-reserved) resources by name, for example V(memory=1Gi). Hugepages keys are refused.
      - Default (null) is V(memory=1Gi).
    type: dict
  system_reserved:
    description:
      - C(system-reserved) resources by name, for example V(memory=1Gi). Hugepages keys are refused.
      - Default (null) is V(memory=1Gi).
    type: dict
  eviction_hard:
    description:
      - Hard eviction thresholds by signal; merged over the defaults
        C(memory.available<500Mi), C(nodefs.available<5%), C(nodefs.inodesFree<5%),
        C(imagefs.available<5%), C(imagefs.inodesFree<5%).
      - Every signal is always emitted (setting one zeroes the unset ones in the kubelet),
        and C(memory.available) must be absolute because C(reserved-memory) must sum to it.
    type: dict
  hugepages_size:
    description:
      - Hugepage size to reserve. With O(hugepages_per_node) above 0 it must be a size the
        kernel offers (C(hugepage_sizes_kb) of the topology); a kernel that offers none, or a
        topology that does not say, is refused.
    type: str
    default: 1G
    choices: [1G, 2M]
  hugepages_per_node:
    description: Hugepages of O(hugepages_size) on each NUMA node chosen by O(hugepages_nodes). 0 reserves none.
    type: int
    default: 0
  hugepages_nodes:
    description:
      - Which NUMA nodes get hugepages. C(gpu) - the nodes with CPUs and GPUs; C(all) - every
        node with CPUs; or a list of node ids. CPU-less nodes are refused.
    type: raw
    default: gpu
  hugepages_method:
    description:
      - C(cmdline) - per-node kernel syntax C(hugepages=0:N,1:M) (Linux 5.16+);
        C(runtime) - a pre-kubelet oneshot unit writes each node's C(nr_hugepages);
        C(auto) - C(cmdline) when the running kernel is 5.16 or newer.
    type: str
    default: auto
    choices: [auto, cmdline, runtime]
  isolcpus_flags:
    description:
      - Flags in front of the isolated list in C(isolcpus=). C(domain) stops scheduler load
        balancing on isolated CPUs, so a multi-threaded pod on exclusive CPUs piles onto one
        CPU; add it only on request.
      - Default (null) is C([managed_irq]).
    type: list
    elements: str
    choices: [managed_irq, domain, nohz]
  kubernetes_version:
    description:
      - Kubernetes version of the cluster as a string, V("1.33") or V("v1.33.2+rke2r1"). Options
        that need 1.31+ (C(max-allowable-numa-nodes)) are refused only when an older version is given.
      - Quote it in YAML - an unquoted C(1.40) is the number 1.4; a number (or anything that is
        not a string) is refused, never guessed at.
    type: raw
    default: "1.33"
  extra_kubelet_args:
    description:
      - Extra C(name=value) kubelet args passed through, one flag per item without leading dashes
        or whitespace. One that names a managed flag replaces the planned value, with a warning.
      - The plan is refused when the kubelet would refuse the resulting args (for example
        C(max-allowable-numa-nodes) below 8), or when they no longer fit the planned kernel args
        (a C(reserved-cpus) that no longer matches C(isolcpus) and C(irqaffinity)); the message
        says whose rule it is. Reserved CPUs that split a core, which the kubelet accepts, are a warning.
    type: list
    elements: str
    default: []
  node_labels:
    description:
      - Node labels (C(key=value)) for RKE2's C(node-label), which the kubelet gets as C(--node-labels).
      - Each must be a valid Kubernetes label - key an optional DNS subdomain prefix (up to 253
        characters) and C(/) and a name (up to 63), value up to 63 characters or empty - and a key in the
        C(kubernetes.io) or C(k8s.io) namespaces must be one the kubelet may set (for example under
        C(node.kubernetes.io/)); anything else is refused.
    type: list
    elements: str
    default: []
  node_taints:
    description:
      - Node taints (C(key[=value]:Effect)) for RKE2's C(node-taint). Key and value follow the label
        rules; the effect is required and one of C(NoSchedule), C(PreferNoSchedule), C(NoExecute).
    type: list
    elements: str
    default: []
  pod_shapes:
    description:
      - Pod shapes to check against the plan; each a mapping with C(name), C(cpu) (whole CPUs),
        C(memory), C(gpus) and C(hugepages) (quantities like C(64Gi)).
      - The result says for each whether and where it fits and how many copies fit at once.
        A shape that fits nowhere is a warning, or a refusal with O(strict_fit=true) - also when
        it fits only because O(split_reserved) puts a housekeeping core on the node it needs.
    type: list
    elements: dict
    default: []
  strict_fit:
    description:
      - Refuse the plan when a pod shape fits on no NUMA node (including the case where only
        the split housekeeping cores stand in the way). When false, each such shape is a warning.
    type: bool
    default: false
  allow_many_numa_nodes:
    description:
      - Plan a host with more than 16 NUMA nodes (CPU-less ones included, as the kubelet counts
        them; a GB200 tray without CDMM has 34) with NUMA alignment of pods turned off. Takes effect
        only together with O(topology_manager_policy=none) and O(memory_manager_policy=None) (the
        static Memory Manager enumerates the same 2^N node masks when the Topology Manager gives it
        no hint); the plan then carries a warning that NUMA alignment of pods is off.
      - When false (the default) such a host is refused, naming the 2^N cost, how many of its nodes
        are GPU memory, and NVIDIA's CDMM driver mode (GPU memory not exposed as NUMA nodes) as the
        way to keep NUMA alignment.
    type: bool
    default: false
notes:
  - Sources of the rules - the kubelet (pkg/kubelet/cm/{cpumanager,memorymanager,topologymanager}),
    the kubernetes.io CPU/Memory/Topology Manager task pages, KEP-4622 (max-allowable-numa-nodes),
    kernel-parameters.txt and hugetlbpage.rst.
seealso:
  - module: maitred.rke2_numa.topology_info
"""

EXAMPLES = r"""
- name: Read the topology
  maitred.rke2_numa.topology_info:
  register: __topo

- name: Plan with two reserved cores and 16 x 1G hugepages on every GPU node
  maitred.rke2_numa.numa_plan:
    topology: "{{ __topo.topology }}"
    reserved_cores: 2
    hugepages_per_node: 16
    pod_shapes:
      - name: vllm-4gpu
        cpu: 32
        memory: 256Gi
        gpus: 4
        hugepages: 8Gi
  register: __plan

- name: Show the kubelet args
  ansible.builtin.debug:
    var: __plan.plan.kubelet_args
"""

RETURN = r"""
plan:
  description: The coordinated plan.
  returned: success
  type: dict
  contains:
    reserved_cpus:
      description: Reserved CPUs (whole cores) as a kernel cpulist; the value of C(reserved-cpus) and C(irqaffinity).
      type: str
      sample: "0,56,112,168"
    isolated_cpus:
      description: Online CPUs minus reserved CPUs, as a kernel cpulist.
      type: str
      sample: "1-55,57-111,113-167,169-223"
    offline_cpus:
      description: Offline CPUs, neither reserved nor isolated.
      type: str
    reserved_cores_per_node:
      description: Reserved whole cores per NUMA node id.
      type: dict
    kernel_args:
      description: Kernel boot parameters the plan owns, as C(name=value) strings.
      type: list
      elements: str
      sample: ["isolcpus=managed_irq,1-55", "nohz_full=1-55", "rcu_nocbs=1-55", "irqaffinity=0"]
    kubelet_args:
      description: Kubelet flags exactly as they go under RKE2's C(kubelet-arg).
      type: list
      elements: str
      sample: ["cpu-manager-policy=static", "reserved-cpus=0,56,112,168"]
    reserved_memory:
      description: C(reserved-memory) per NUMA node id (type memory, whole MiB).
      type: dict
      sample: {"0": "1274Mi", "1": "1274Mi"}
    hugepages:
      description:
        - C(size) (the kernel's spelling, V(1G)), C(size_kb), C(resource) (the kubelet's resource name,
          V(hugepages-1Gi)), C(method) (cmdline or runtime) and C(per_node) page counts; all but
          C(per_node) are null without hugepages.
      type: dict
    numa_tables:
      description:
        - Per NUMA node - CPUs, reserved and isolated CPUs, exclusive CPUs a pod can get, memory,
          reserved and allocatable memory, hugepages, GPUs, and the largest Guaranteed pod that fits there.
      type: list
      elements: dict
    pod_shapes:
      description: For each requested pod shape - C(fits), C(nodes) where it fits, C(copies) that fit at once, C(note).
      type: list
      elements: dict
    node_labels:
      description: Node labels for RKE2.
      type: list
      elements: str
    node_taints:
      description: Node taints for RKE2.
      type: list
      elements: str
    warnings:
      description: Findings that do not stop the plan.
      type: list
      elements: str
    fingerprint:
      description: Hash of everything whose change forces a kubelet CPU/Memory Manager state reset.
      type: str
    topology_fingerprint:
      description: Hash of the host's CPU and memory layout the plan was made for.
      type: str
    reset_inputs:
      description: The values behind C(fingerprint).
      type: dict
    managed_kubelet_flags:
      description: Kubelet flag names the plan owns.
      type: list
      elements: str
    managed_kernel_args:
      description: Kernel argument names the plan owns.
      type: list
      elements: str
rule:
  description: On refusal, the rule that refused.
  returned: failure
  type: str
  sample: reserved-cores
"""
