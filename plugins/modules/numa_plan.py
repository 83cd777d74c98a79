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
  - Runs on the controller only (an action plugin); it never contacts the host - unless O(read) asks it to run
    M(maitred.rke2_numa.topology_info) there first (plan.yml - the read and the plan in one task per host).
  - An option given as null is left out - its default applies - so that a task may pass a variable that is null or
    undefined (C("{{ var | default(none) }}")).
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
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.controller
  - maitred.rke2_numa.plan_options
# The other options are the plan role's variables without their prefix (plugins/doc_fragments/plan_options.py,
# generated from roles/plan/meta/argument_specs.yml by make specs).
options:
  topology:
    description:
      - The C(topology) returned by M(maitred.rke2_numa.topology_info) for this host.
      - Required unless O(read) is given; not with it.
    type: dict
  read:
    description:
      - M(maitred.rke2_numa.topology_info)'s options - run it on the host first, in the same task (the one module call),
        and plan the topology it returns, for the RKE2 it finds (unless O(rke2_runtime) is given). One task per host for
        what were two (plan.yml). A failed read fails the task with its message.
    type: dict
  return_plan:
    description:
      - Whether the result holds the plan (RV(plan)). False with O(export) - the host's fact C(rke2_numa_plan) holds it; a
        result is a callback's and an event per host, which AWX keeps (plan.yml - not a plan's 4 KB a host).
    type: bool
    default: true
  export:
    description:
      - Also set the host's facts C(rke2_numa_plan) (the plan) and C(rke2_numa_topology) (O(topology)), as
        M(ansible.builtin.set_fact) would (the plan role).
      - Refuses (rule C(foreign-plan)) an C(rke2_numa_plan) extra var made for another topology - it would beat the fact
        and reach the roles that follow - naming both topologies.
    type: bool
    default: false
  refused_fails:
    description:
      - Whether a topology the planner refuses (a value it refuses, a plan an extra var gives for another topology) fails
        the task. Its message names the variable a refused option came from.
      - False - it does not; RV(refused) says why and the caller names the host in its summary and fails the run at its
        end (plan.yml) - a run whose every host is refused still says so.
    type: bool
    default: true
  rke2_runtime:
    description:
      - The RKE2 the host runs, as M(maitred.rke2_numa.topology_info) returns it (its
        RV(maitred.rke2_numa.topology_info#module:rke2_runtime)). When O(kubernetes_version) is not given, the host is planned
        for that kubelet's minor; given, it must be that minor. Neither - the oldest supported minor (the plan's
        RV(plan.kubernetes) says which and why).
    type: dict
  warn:
    description:
      - Also return the plan's warnings (a pod shape that fits on no NUMA node, offline CPUs...) as the task's warnings,
        which Ansible prints apart from the host, without its name.
      - False when the caller shows them under the host's plan (plan.yml), so that each is said once, under its host;
        they stay in RV(plan.warnings).
    type: bool
    default: true
  options_from_vars:
    description:
      - Take each planner option the task leaves unset or null from the host's variable of its name with the prefix
        C(rke2_numa_) (the plan role's variables, C(rke2_numa_reserved_cores) for O(reserved_cores)), templated for this
        host; unset or null there too, the planner's default applies. An option the task sets wins. A variable whose
        template does not render fails the host, naming it.
      - Replaces a template per option (C({{ rke2_numa_reserved_cores | default(none) }}) for O(reserved_cores), and so on),
        which every host's worker would compile anew (the plan role's call and plan.yml's).
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
  returned: success, unless O(return_plan) is false and O(export) true
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
    kubernetes:
      description:
        - The kubelet the plan was made for - C(version) (as given or read), C(minor) (V(1.37)) and C(source) (the
          variable, the Node's C(status.nodeInfo.kubeletVersion), the RKE2 runtime on the host, or the default when none
          is known). The kubelet rules of that minor judged the plan (docs/KUBERNETES.md).
      type: dict
      sample: {version: v1.37.2+rke2r1, minor: "1.37", source: "its Node's status.nodeInfo.kubeletVersion"}
rule:
  description: On refusal, the rule that refused.
  returned: failure, or a refusal with O(refused_fails=false)
  type: str
  sample: reserved-cores
refused:
  description: Why the host has no plan, with O(refused_fails=false) (the task does not fail).
  returned: a refusal with O(refused_fails=false)
  type: str
  sample: "no plan for this host: reserved-cores: rke2_numa_reserved_cores=40 leaves no core to isolate: at most 30 fit"
"""
