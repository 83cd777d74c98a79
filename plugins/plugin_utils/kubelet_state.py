# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When the kubelet would refuse its own checkpoints, so they must go.

``reset_reasons`` answers with the kubelet's own messages, from the
checkpoints (kubelet_state_info), the plan and the topology the kubelet will
see at its next start. An empty answer means: keep the checkpoints.

Sources: pkg/kubelet/cm/cpumanager/policy_static.go (validateState, with the strict-cpu-reservation option and, from
1.36, the pod-level CPU sets of PodLevelResourceManagers), cpumanager/state/checkpoint.go (V2, V3, V4),
pkg/kubelet/cm/memorymanager/policy_static.go (getDefaultMachineState,
validateState), state/state_checkpoint.go of both.
"""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import format_cpulist, parse_cpulist
from ansible_collections.maitred.rke2_numa.plugins.module_utils.healthz import RKE2_RESTART_SECONDS
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import specs
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_rules import (
    DEFAULT_MINOR,
    KUBELET_MINORS,
    feature_gates,
    kubelet_flag_values,
    minor_of,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import hugepage_resource, parse_bytes
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.values import as_integer


def expected_machine_state(topology, reserved_memory):
    """The Memory Manager's default machine state for this topology and reservation:
    {node: {resource: (total, systemReserved, allocatable)}} in bytes.

    Every hugepage size the node has appears, even with 0 pages, under the
    kubelet's name for it (hugepages-16Gi, never -16384Mi); memory
    allocatable is MemTotal - systemReserved - all hugepages of the node.
    """
    state = {}
    for node in topology["numa_nodes"]:
        nid = node["id"]
        tables = {}
        hugepages = 0
        for size, pages in sorted(node.get("hugepages", {}).items(), key=lambda kv: int(kv[0])):
            total = int(pages.get("total", 0)) * int(size) * 1024
            tables[hugepage_resource(int(size))] = (total, 0, total)
            hugepages += total
        total = int(node.get("memory_kb", 0)) * 1024
        reserved = int(reserved_memory.get(str(nid), reserved_memory.get(nid, 0)))
        tables["memory"] = (total, reserved, max(total - reserved - hugepages, 0))
        state[str(nid)] = tables
    return state


def topology_at_next_start(topology, plan):
    """The topology the kubelet will read at its next start, once the plan's runtime hugepages are
    allocated (the hugepages role writes each planned node's nr_hugepages before rke2-agent starts).

    The Memory Manager builds its expected machine state from the hugepages
    cadvisor reads at kubelet start (policy_static.go getDefaultMachineState),
    so the reset decision must be judged on this, not on the topology read
    before the pages changed. Kernel-cmdline pages need a reboot first: until
    then the kubelet side does not run, and after it the topology is read anew.
    """
    hugepages = plan.get("hugepages") or {}
    if hugepages.get("method") != "runtime" or not hugepages.get("per_node"):
        return topology
    size = str(hugepages["size_kb"])
    nodes = []
    for node in topology["numa_nodes"]:
        pages = hugepages["per_node"].get(str(node["id"]))
        if pages is not None:
            sizes = dict(node.get("hugepages") or {})
            sizes[size] = dict(sizes.get(size) or {}, total=int(pages))
            node = dict(node, hugepages=sizes)
        nodes.append(node)
    return dict(topology, numa_nodes=nodes)


def _checkpoint_tables(machine_state):
    out = {}
    for nid, node in (machine_state or {}).items():
        out[str(nid)] = dict(
            (name, (int(t.get("total", 0)), int(t.get("systemReserved", 0)), int(t.get("allocatable", 0))))
            for name, t in (node.get("memoryMap") or {}).items())
    return out


def strict_cpu_reservation(plan):
    """Whether the kubelet runs the CPU Manager option strict-cpu-reservation (passed through
    rke2_numa_extra_kubelet_args; the planner never sets it): the reserved CPUs are then out of the
    shared pool, and the checkpoint's defaultCpuSet must not hold them."""
    flags = kubelet_flag_values(("", a) for a in plan.get("kubelet_args") or [])
    options = dict((str(k).strip(), str(v).strip()) for k, v in ((flags.get("cpu-manager-policy-options") or ({}, None))[0]).items())
    # the kubelet reads the value with strconv.ParseBool
    return options.get("strict-cpu-reservation", "").lower() in ("1", "t", "true")


def plan_minor(plan):
    """The Kubernetes minor a plan was made for ((1, 37); a plan from before plans said: the default)."""
    minor = (plan.get("kubernetes") or {}).get("minor")
    return minor_of(minor) if minor else DEFAULT_MINOR


def pod_level_resource_managers(plan, running_args=()):
    """Whether the node's kubelet runs the pod-level resource managers (PodLevelResourceManagers: the default of the
    plan's minor, then the --feature-gates RKE2 passes it - ``running_args``, the node's kubelet-arg entries, which the
    plan keeps unless it names the gate itself -, then the plan's): its CPU Manager then counts the checkpoint's
    podEntries as CPUs in state (policy_static.go validateState)."""
    running = [str(a).lstrip("-") for a in running_args or [] if str(a).lstrip("-").startswith("feature-gates")]
    flags = kubelet_flag_values(("", a) for a in running + list(plan.get("kubelet_args") or []))
    given = dict((k, v) for k, (v, dummy) in flags.items())
    minor = plan_minor(plan)
    return minor in KUBELET_MINORS and feature_gates(given, minor).get("PodLevelResourceManagers", False)


def _checkpoint_format_refusal(plan, cpu_state):
    """A V3 checkpoint (podEntries, checksum over them) before the kubelet that writes it: "older Kubelets cannot parse
    V3 checkpoints and fail to start with a checkpoint is corrupted error" (kubernetes/website reference/node/
    pod-level-resource-managers.md; cpumanager/state/checkpoint.go CPUManagerCheckpointV2.VerifyChecksum). A V4
    checkpoint keeps checksum 0 inline for them, which they accept."""
    minor = plan_minor(plan)
    if cpu_state.get("format") == "v3" and KUBELET_MINORS.get(minor, {}).get("checkpoint") == "v2":
        return "could not restore state from checkpoint: checkpoint is corrupted"
    return None


def _static_cpu_refusals(plan, online, cpu_state, running_args=()):
    """The static policy's validateState on a checkpoint that is not empty, in its order and words."""
    reasons = []
    default = set(parse_cpulist(cpu_state["default_cpu_set"]))
    reserved = set(parse_cpulist(plan["reset_inputs"]["reserved_cpus"]))
    entries = cpu_state.get("entries") or {}
    strict = strict_cpu_reservation(plan)
    expected = online - reserved if strict else online
    if not default:
        return ["default cpuset cannot be empty"]
    if strict and reserved & default:
        reasons.append('some of strictly reserved cpus: "%s" are present in defaultCpuSet: "%s"'
                       % (format_cpulist(reserved & default), format_cpulist(default)))
    elif not strict and not reserved <= default:
        reasons.append('not all reserved cpus: "%s" are present in defaultCpuSet: "%s"'
                       % (format_cpulist(reserved), format_cpulist(default)))
    for pod in sorted(entries):
        for container, cpus in sorted((entries[pod] or {}).items()):
            if set(parse_cpulist(cpus)) & default:
                reasons.append('pod: %s, container: %s cpuset: "%s" overlaps with default cpuset "%s"'
                               % (pod, container, format_cpulist(parse_cpulist(cpus)), format_cpulist(default)))
    in_state = default | set(parse_cpulist(cpu_state["assigned_cpus"]))
    if pod_level_resource_managers(plan, running_args):   # the pods' CPU sets count only with the gate on
        in_state |= set(parse_cpulist(cpu_state.get("pod_cpus") or ""))
    if in_state != expected:
        reasons.append('current set of available CPUs "%s" doesn\'t match with CPUs in state "%s"'
                       % (format_cpulist(expected), format_cpulist(in_state)))
    return reasons


def _cpu_policy_refusal(policy, cpu_state):
    if not cpu_state.get("exists"):
        return None
    if not cpu_state.get("valid"):
        return "could not restore state from checkpoint: %s" % cpu_state.get("error")
    if cpu_state["policy"] != policy:
        return 'configured policy "%s" differs from state checkpoint policy "%s"' % (policy, cpu_state["policy"])
    return None


def _memory_policy_refusal(policy, memory_state):
    if not memory_state.get("exists"):
        return None
    if not memory_state.get("valid"):
        return "could not restore state from checkpoint: %s" % memory_state.get("error")
    if memory_state["policy"] != policy:
        return '[memorymanager] configured policy "%s" differs from state checkpoint policy "%s"' % (policy, memory_state["policy"])
    return None


def restart_refusals(kubelet_args, cpu_state, memory_state):
    """What the kubelet would refuse if it started now with ``kubelet_args`` (``--name=value``, what RKE2's files pass
    today) on the checkpoints it left: a policy that differs from the checkpoint's (the kubelet's defaults: CPU Manager
    none, Memory Manager None), or a checkpoint it cannot read. What a restart of rke2 by anyone else (Rancher's plans)
    would meet."""
    flags = kubelet_flag_values([("", str(a).lstrip("-")) for a in kubelet_args])
    found = [_cpu_policy_refusal(flags.get("cpu-manager-policy", ("none",))[0], cpu_state),
             _memory_policy_refusal(flags.get("memory-manager-policy", ("None",))[0], memory_state)]
    return [r for r in found if r]


def reset_reasons(plan, topology, cpu_state, memory_state, running_args=()):
    """The kubelet's refusals of its current checkpoints under the plan, as its messages (``running_args``: the
    node's kubelet-arg entries today, for the feature gates the plan leaves as they are)."""
    reasons = []
    inputs = plan["reset_inputs"]
    online = set(parse_cpulist(topology["cpus_online"]))
    if cpu_state.get("exists"):
        refusal = _checkpoint_format_refusal(plan, cpu_state) or _cpu_policy_refusal(inputs["cpu_manager_policy"], cpu_state)
        if refusal:
            reasons.append(refusal)
        elif inputs["cpu_manager_policy"] == "static" and (cpu_state["default_cpu_set"] or cpu_state["assigned_cpus"]
                                                           or cpu_state.get("pod_cpus")):
            # (an empty static checkpoint is one the kubelet sets up afresh)
            reasons += _static_cpu_refusals(plan, online, cpu_state, running_args)
    if memory_state.get("exists"):
        refusal = _memory_policy_refusal(inputs["memory_manager_policy"], memory_state)
        if refusal:
            reasons.append(refusal)
        elif inputs["memory_manager_policy"] == "Static" and memory_state["machine_state"]:
            # (an empty machine state is one the kubelet sets up afresh)
            reserved = dict((k, parse_bytes(v)) for k, v in plan.get("reserved_memory", {}).items())
            if _checkpoint_tables(memory_state["machine_state"]) != expected_machine_state(topology, reserved):
                reasons.append("[memorymanager] the expected machine state is different from the real one")
    return reasons


# The waits of the apply chain's preflight (roles/kubelet_reset/tasks/preflight.yml): what follows each spec's bounds.
_WAIT_NOTES = {"rke2_numa_kubelet_timeout": " s, at least the window", "rke2_numa_reboot_timeout": " s"}


def reset_wait_errors(values):
    """Why the apply chain's waits and retries are out of bounds ([] when none is): ``values`` {variable: value} of
    rke2_numa_kubelet_timeout, rke2_numa_health_window, rke2_numa_reboot_timeout and rke2_numa_hugepages_retries.
    Each is held to its spec's bounds; the health window, which has none of its own, must outlast RKE2's kubelet
    restart cycle (a shorter one proves nothing: the kubelet answers healthz before it validates its checkpoints)
    and fit in the kubelet timeout."""
    values = dict(values)
    window = values.pop("rke2_numa_health_window", None)
    errors = specs.bound_errors(values, _WAIT_NOTES)
    number, timeout = as_integer(window), as_integer(values.get("rke2_numa_kubelet_timeout"))
    if window is not None and (number is None or number <= RKE2_RESTART_SECONDS or (timeout is not None and number > timeout)):
        errors.append("rke2_numa_health_window=%s (more than RKE2's %d s restart cycle, at most rke2_numa_kubelet_timeout)"
                      % (window, RKE2_RESTART_SECONDS))
    return errors
