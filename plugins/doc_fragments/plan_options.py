# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# The planner's options (maitred.rke2_numa.numa_plan): the plan role's variables of its group
# "The planner's options (numa_plan)", without their prefix - generated from meta/argument_specs.yml by scripts/gen_specs.py (make specs):
# do not edit here; roles/plan/meta/argument_specs.yml declares them.

from __future__ import annotations


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  reserved_cores:
    description:
      - Total number of whole physical cores to reserve for the OS, RKE2 and the kubelet (C(reserved-cpus)).
      - With O(split_reserved=true) every NUMA node with CPUs gets one, and the extra cores go first to the nodes with the fewest GPUs.
      - The core of the boot CPU (CPU 0, or the lowest online CPU when CPU 0 is offline) is always one of them - the kernel keeps timekeeping
        there and clears it from C(nohz_full).
      - Default (null) is one core per NUMA node that has CPUs. V(0) is refused, not read as the default - at least one whole core is always
        reserved.
      - Mutually exclusive with O(reserved_cores_per_node).
    type: int
    default: null
  reserved_cores_per_node:
    description:
      - Reserved cores per NUMA node id, for example V(0=2) and V(1=1) as a mapping. Nodes with CPUs that are not named get one when O(split_reserved=true).
      - The node of the boot CPU gets one when not named, and V(0) for it is refused.
    type: dict
    default: null
  split_reserved:
    description:
      - Keep at least one housekeeping core on every NUMA node that has CPUs.
      - When false, the reserved cores go to the node with the fewest GPUs, and the other nodes keep every core for pods (a warning says
        so) - except the boot CPU's core, which is always reserved, so its node keeps one.
    type: bool
    default: true
  cpu_manager_policy:
    description: CPU Manager policy (the kubelet's spelling).
    type: str
    choices: [static, none]
    default: static
  cpu_allocator:
    description:
      - Who hands out a pod's exclusive CPUs on this host. V(kubelet) - the kubelet's CPU Manager (O(cpu_manager_policy)).
      - V(dra-driver-cpu) - kubernetes-sigs/dra-driver-cpu, through a ResourceClaim, so that a DRA GPU and its CPUs share one NUMA node by
        the claim's C(matchAttribute) constraint (the Topology Manager does not align DRA devices). It and the kubelet's static CPU Manager
        are mutually incompatible, and the static Memory Manager would pin memory to a node of its own choosing - so V(dra-driver-cpu) is
        refused unless O(cpu_manager_policy=none) and O(memory_manager_policy=None), and for a host known to run a kubelet older than 1.34
        (its claim templates are C(resource.k8s.io/v1), served from 1.34 on).
      - Either way the plan writes C(dra.yaml) beside the plans (DeviceClasses and ResourceClaimTemplates per pod shape; output only, see
        docs/DRA.md).
    type: str
    choices: [kubelet, dra-driver-cpu]
    default: kubelet
  memory_manager_policy:
    description: Memory Manager policy (the kubelet's spelling).
    type: str
    choices: [Static, None]
    default: Static
  topology_manager_policy:
    description: Topology Manager policy. C(single-numa-node) also sets C(cpu-manager-policy-options=full-pcpus-only=true).
    type: str
    choices: [single-numa-node, restricted, best-effort, none]
    default: single-numa-node
  topology_manager_scope:
    description: Topology Manager scope.
    type: str
    choices: [pod, container]
    default: pod
  kube_reserved:
    description:
      - C(kube-reserved) resources by name, for example V(memory=1Gi). Hugepages keys are refused.
      - Default (null) is V(memory=1Gi).
    type: dict
    default: null
  system_reserved:
    description:
      - C(system-reserved) resources by name, for example V(memory=1Gi). Hugepages keys are refused.
      - Default (null) is V(memory=1Gi).
    type: dict
    default: null
  eviction_hard:
    description:
      - Hard eviction thresholds by signal; merged over the defaults C(memory.available<500Mi), C(nodefs.available<5%), C(nodefs.inodesFree<5%),
        C(imagefs.available<5%), C(imagefs.inodesFree<5%).
      - Every signal is always emitted (setting one zeroes the unset ones in the kubelet), and C(memory.available) must be absolute because
        C(reserved-memory) must sum to it.
    type: dict
    default: null
  hugepages_size:
    description: Hugepage size to reserve. With O(hugepages_per_node) above 0 it must be a size the kernel offers (C(hugepage_sizes_kb) of
      the topology); a kernel that offers none, or a topology that does not say, is refused.
    type: str
    choices: [1G, 2M]
    default: 1G
  hugepages_per_node: {description: Hugepages of O(hugepages_size) on each NUMA node chosen by O(hugepages_nodes). 0 reserves none., type: int,
    default: 0}
  hugepages_nodes:
    description: Which NUMA nodes get hugepages. C(gpu) - the nodes with CPUs and GPUs; C(all) - every node with CPUs; or a list of node
      ids. CPU-less nodes are refused.
    type: raw
    default: gpu
  hugepages_method:
    description: C(cmdline) - per-node kernel syntax C(hugepages=0:N,1:M) (Linux 5.16+); C(runtime) - a pre-kubelet oneshot unit writes each
      node's C(nr_hugepages); C(auto) - C(cmdline) when the running kernel is 5.16 or newer.
    type: str
    choices: [auto, cmdline, runtime]
    default: auto
  isolcpus_flags:
    description:
      - Flags in front of the isolated list in C(isolcpus=) - C(managed_irq), C(domain) or C(nohz), the kernel's (kernel-parameters.txt);
        another is refused. C(domain) stops scheduler load balancing on isolated CPUs, so a multi-threaded pod on exclusive CPUs piles onto
        one CPU; add it only on request.
      - Default (null) is C([managed_irq]).
    type: list
    elements: str
    default: null
  kubernetes_version:
    description:
      - The Kubernetes version the host is planned for, as a string, V("1.37") or V("v1.37.2+rke2r1"). Default (null) - each host is planned
        for the kubelet it runs - its Node's C(status.nodeInfo.kubeletVersion) where the check reads the cluster, else the version of the
        RKE2 runtime on the host (C(/var/lib/rancher/rke2/bin) points into C(data/v1.37.2-rke2r1-...)), else, where neither is known (a gathered
        sysfs tree), 1.33, whose flags every newer kubelet accepts. The plan says which minor it was made for and why (its C(kubernetes)
        key).
      - Given, it must be the minor the node runs (a plan for another kubelet is refused, naming both). The kubelet rules of 1.30 to 1.38
        are known (docs/KUBERNETES.md); a minor outside them is refused. An option the minor's kubelet lacks or keeps behind a feature gate
        that is off (C(max-allowable-numa-nodes) before 1.31, an alpha CPU Manager option in C(rke2_numa_extra_kubelet_args)) is refused
        with the kubelet's own message.
      - Quote it in YAML - an unquoted C(1.40) is the number 1.4; a number (or anything that is not a string) is refused, never guessed at.
    type: raw
    default: null
  extra_kubelet_args:
    description:
      - Extra C(name=value) kubelet args passed through, one flag per item without leading dashes or whitespace. One that names a managed
        flag replaces the planned value, with a warning.
      - The plan is refused when the kubelet would refuse the resulting args (for example C(max-allowable-numa-nodes) below 8), or when they
        no longer fit the planned kernel args (a C(reserved-cpus) that no longer matches C(isolcpus) and C(irqaffinity)); the message says
        whose rule it is. Reserved CPUs that split a core, which the kubelet accepts, are a warning.
    type: list
    elements: str
    default: []
  node_labels:
    description:
      - Node labels (C(key=value)) for RKE2's C(node-label), which the kubelet gets as C(--node-labels).
      - Each must be a valid Kubernetes label - key an optional DNS subdomain prefix (up to 253 characters) and C(/) and a name (up to 63),
        value up to 63 characters or empty - and a key in the C(kubernetes.io) or C(k8s.io) namespaces must be one the kubelet may set (for
        example under C(node.kubernetes.io/)); anything else is refused.
    type: list
    elements: str
    default: []
  node_taints:
    description: Node taints (C(key[=value]:Effect)) for RKE2's C(node-taint). Key and value follow the label rules; the effect is required
      and one of C(NoSchedule), C(PreferNoSchedule), C(NoExecute).
    type: list
    elements: str
    default: []
  pod_shapes:
    description:
      - Pod shapes to check against the plan; each a mapping with C(name), C(cpu) (whole CPUs), C(memory), C(gpus) and C(hugepages) (quantities
        like C(64Gi)).
      - The result says for each whether and where it fits and how many copies fit at once. A shape that fits nowhere is a warning, or a
        refusal with O(strict_fit=true) - also when it fits only because O(split_reserved) puts a housekeeping core on the node it needs.
    type: list
    elements: dict
    default: []
  strict_fit:
    description: Refuse the plan when a pod shape fits on no NUMA node (including the case where only the split housekeeping cores stand
      in the way). When false, each such shape is a warning.
    type: bool
    default: false
  allow_many_numa_nodes:
    description:
      - Plan a host with more than 16 NUMA nodes (CPU-less ones included, as the kubelet counts them; a GB200 tray without CDMM has 34) with
        NUMA alignment of pods turned off. Takes effect only together with O(topology_manager_policy=none) and O(memory_manager_policy=None)
        (the static Memory Manager enumerates the same 2^N node masks when the Topology Manager gives it no hint); the plan then carries
        a warning that NUMA alignment of pods is off.
      - When false (the default) such a host is refused, naming the 2^N cost, how many of its nodes are GPU memory, and NVIDIA's CDMM driver
        mode (GPU memory not exposed as NUMA nodes) as the way to keep NUMA alignment.
    type: bool
    default: false
"""
