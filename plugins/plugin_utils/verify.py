# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compare what a host really runs with its plan (the verify role's report).

Each check returns findings: ``(level, message)`` with level ``error`` (the
host does not run the plan) or ``warning``; the report names each finding's
check (``cmdline``, ``isolation``, ``hugepages``, ``checkpoints``, ``config``,
``gpus``), so that compliance reads them by check, never by their wording.
Like ``tuned-adm verify``, kernel args are compared as sets of ``name=value``.
"""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import parse_cpulist
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import parse_arg, split_cmdline
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_state import reset_reasons
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import hugepage_resource
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import state_kubelet_args
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_rules import (
    kernel_arg_value,
    kubelet_flag_values,
    show_flag_value,
    split_isolcpus,
)


def cmdline_args(cmdline):
    """The kernel command line as {name: value} (last wins, as the kernel's __setup handlers mostly do)."""
    return dict(parse_arg(token) for token in split_cmdline(cmdline))


def check_cmdline(plan, topology):
    running = cmdline_args(topology.get("cmdline"))
    findings = []
    for arg in plan["kernel_args"]:
        name, dummy, value = arg.partition("=")
        if name not in running:
            findings.append(("error", "kernel arg %s is not on the running cmdline (reboot pending?)" % arg))
        elif running[name] != value:
            findings.append(("error", "kernel arg %s runs as %s=%s" % (arg, name, running[name])))
    return findings


def check_isolation(plan, topology):
    findings = []
    isolated = set(parse_cpulist(plan["isolated_cpus"]))
    isolcpus = kernel_arg_value(plan["kernel_args"], "isolcpus") or ""
    if not isolcpus:
        return findings
    if set(parse_cpulist(topology.get("nohz_full", ""))) != isolated:
        findings.append(("error", "/sys/devices/system/cpu/nohz_full is %r, the plan isolates %s"
                         % (topology.get("nohz_full", ""), plan["isolated_cpus"])))
    flags = split_isolcpus(isolcpus)[0]
    if "domain" in flags and set(parse_cpulist(topology.get("isolated", ""))) != isolated:
        findings.append(("error", "/sys/devices/system/cpu/isolated is %r, the plan isolates %s"
                         % (topology.get("isolated", ""), plan["isolated_cpus"])))
    return findings


def check_hugepages(plan, topology):
    """Pages of the planned size per node, the size named as the kubelet names it (hugepages-1Gi)."""
    findings = []
    size_kb = plan["hugepages"].get("size_kb")
    if not size_kb:
        return findings
    name = hugepage_resource(size_kb)
    nodes = dict((str(n["id"]), n) for n in topology["numa_nodes"])
    for nid, pages in sorted(plan["hugepages"]["per_node"].items()):
        have = nodes.get(nid, {}).get("hugepages", {}).get(str(size_kb), {}).get("total", 0)
        if have != pages:
            findings.append(("error", "NUMA node %s has %d %s pages, the plan wants %d" % (nid, have, name, pages)))
    return findings


def check_checkpoints(plan, topology, cpu_state, memory_state):
    """The checkpoints exist with the planned policies, and the kubelet would accept them at its next
    start on this topology (the reset decision's rule: a node whose hugepages changed under an
    unchanged config runs now and crash-loops at its next restart)."""
    findings = []
    inputs = plan["reset_inputs"]
    for what, state, want in (("cpu_manager_state", cpu_state, inputs["cpu_manager_policy"]),
                              ("memory_manager_state", memory_state, inputs["memory_manager_policy"])):
        if not state.get("exists"):
            findings.append(("error", "%s does not exist: the kubelet has not started with the plan" % what))
        elif state.get("policy") != want:
            findings.append(("error", "%s policy is %s, the plan wants %s" % (what, state.get("policy"), want)))
    if not findings:
        findings += [("error", "the kubelet would refuse its checkpoints at its next start: %s" % reason)
                     for reason in reset_reasons(plan, topology, cpu_state, memory_state)]
    return findings


def check_config(plan, effective_kubelet_args):
    """The planned flags as the kubelet will read RKE2's args (repeated map flags merged, reserved-memory added up)."""
    running = kubelet_flag_values(("", arg.lstrip("-")) for arg in effective_kubelet_args)
    wanted = kubelet_flag_values(("", arg) for arg in plan["kubelet_args"])
    findings = []
    for name, (value, dummy) in wanted.items():
        if name not in running:
            findings.append(("error", "kubelet flag %s=%s is missing in RKE2's config" % (name, show_flag_value(value, name))))
        elif running[name][0] != value:
            findings.append(("error", "kubelet flag %s=%s is %s=%s in RKE2's config"
                             % (name, show_flag_value(value, name), name, show_flag_value(running[name][0], name))))
    return findings


def check_gpus(topology):
    return [("warning", "GPU %s has no known NUMA node: the device plugin gives the kubelet no topology hint for it" % d["address"])
            for d in topology.get("pci_devices", []) if d.get("kind") == "gpu" and d.get("numa_node") is None]


def verify(plan, topology, cpu_state, memory_state, effective_kubelet_args):
    """All checks: {"ok": bool, "errors": [...], "warnings": [...], "findings": [{check, level, message}]}."""
    findings = []
    for check, found in (("cmdline", check_cmdline(plan, topology)), ("isolation", check_isolation(plan, topology)),
                         ("hugepages", check_hugepages(plan, topology)),
                         ("checkpoints", check_checkpoints(plan, topology, cpu_state, memory_state)),
                         ("config", check_config(plan, effective_kubelet_args)), ("gpus", check_gpus(topology))):
        findings += [{"check": check, "level": level, "message": message} for level, message in found]
    errors = [f["message"] for f in findings if f["level"] == "error"]
    return {"ok": not errors, "errors": errors, "warnings": [f["message"] for f in findings if f["level"] == "warning"],
            "findings": findings}


def verify_node(plan, state):
    """verify() on node_state_info's result: the topology, the checkpoints and RKE2's effective kubelet flags as the
    node has them now (the same read check.yml makes; ConfigError when RKE2's config cannot be read as RKE2 reads it)."""
    return verify(plan, state["topology"], state["kubelet_state"]["cpu_manager"], state["kubelet_state"]["memory_manager"],
                  state_kubelet_args(state))
