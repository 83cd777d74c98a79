# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render a plan (from numa_plan) as a readable report."""

from __future__ import annotations

DOCUMENTATION = r"""
name: plan_report
short_description: Render a NUMA plan as a readable report
version_added: 0.1.0
description:
  - Turns the C(plan) returned by M(maitred.rke2_numa.numa_plan) into plain text - the
    NUMA table (node, CPUs, reserved, isolated, memory, hugepages, GPUs, the biggest
    Guaranteed pod that fits), the kernel command line additions, the exact
    C(kubelet-arg) block, pod shape fits and warnings.
author:
  - maitred.rke2_numa contributors (@maitred)
positional: _input
options:
  _input:
    description: The plan dict.
    type: dict
    required: true
  warnings:
    description:
      - Whether to end with the plan's warnings. M(maitred.rke2_numa.numa_plan)
        already prints them as task warnings, so a play that shows the report right
        after it passes V(false) to print each warning once.
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Print the plan
  ansible.builtin.debug:
    msg: "{{ __plan.plan | maitred.rke2_numa.plan_report }}"

- name: Print it as a list of lines (readable with the default callback), warnings left to numa_plan
  ansible.builtin.debug:
    msg: "{{ (__plan.plan | maitred.rke2_numa.plan_report(warnings=false)).split('\\n') }}"
"""

RETURN = r"""
_value:
  description: The report, lines joined by newlines.
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.hostvars_view import facts_view
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import topology_table as topology_text
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.topology_table import cpus_cell, size, text_table
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import hugepage_resource


def plan_report(plan, warnings=True):
    """Return the plan as text; its warnings at the end unless warnings is false (numa_plan already
    printed them as task warnings)."""
    if not isinstance(plan, dict) or "numa_tables" not in plan or "kubelet_args" not in plan:
        raise AnsibleFilterError("plan_report expects the 'plan' dict returned by numa_plan")
    tables = plan["numa_tables"]
    isolated = sum(t["exclusive_cpus"] for t in tables)
    lines = ["plan %s: reserved CPUs %s, isolated CPUs %s%s" % (
        plan["fingerprint"], plan["reserved_cpus"], plan["isolated_cpus"] or "(none)",
        ", offline CPUs %s" % plan["offline_cpus"] if plan.get("offline_cpus") else "")]
    rows = [("node", "CPUs", "reserved", "isolated", "memory", "reserved-mem", "hugepages", "GPUs",
             "biggest pod: cpu/memory/hugepages/gpus")]
    for t in tables:
        pod = t["largest_pod"]
        rows.append((
            t["node"], cpus_cell(t["cpus"]) or "(no CPUs)", cpus_cell(t["reserved_cpus"]) or "-",
            cpus_cell(t["isolated_cpus"]) or "-",
            size(t["memory_bytes"]), size(t["reserved_memory_bytes"]), size(t["hugepages_bytes"]),
            len(t["gpus"]) or "-",
            "%d / %s / %s / %d" % (pod["cpu"], size(t["allocatable_memory_bytes"]), size(t["hugepages_bytes"]), pod["gpus"])
            if t["cpus"] else "-",
        ))
    lines += text_table(rows)
    lines.append("exclusive CPUs for Guaranteed pods: %d" % isolated)
    lines.append("kernel cmdline additions:")
    lines += ["  %s" % arg for arg in plan["kernel_args"]] or ["  (none)"]
    hugepages = plan.get("hugepages") or {}
    if hugepages.get("per_node") and hugepages.get("size_kb"):
        lines.append("hugepages: %s, %s (%s)" % (
            hugepage_resource(hugepages["size_kb"]),
            ", ".join("%s on node %s" % (n, nid) for nid, n in sorted(hugepages["per_node"].items(), key=lambda kv: int(kv[0]))),
            "allocated by the pre-kubelet unit, not the cmdline" if hugepages.get("method") == "runtime"
            else "from the kernel cmdline"))
    lines.append("kubelet-arg:")
    lines += ["  - %s" % arg for arg in plan["kubelet_args"]]
    for key, flag in (("node_labels", "node-label"), ("node_taints", "node-taint")):
        if plan.get(key):
            lines.append("%s:" % flag)
            lines += ["  - %s" % v for v in plan[key]]
    for fit in plan.get("pod_shapes", []):
        if fit["fits"]:
            where = "on nodes %s, %d at once" % (",".join(map(str, fit["nodes"])), fit["copies"]) if fit["nodes"] else fit["note"]
            lines.append("pod shape %s: fits %s" % (fit["name"], where))
        else:
            why = fit["note"] or fit.get("short")
            lines.append("pod shape %s: fits NOWHERE%s" % (fit["name"], " (%s)" % why if why else ""))
    claims = plan.get("dra") or {}
    if claims.get("templates"):   # the plan the DRA way (dra.yaml): only where dra-driver-cpu hands out the CPUs
        lines.append("DRA claim templates (dra-driver-cpu --reserved-cpus=%s):" % plan["reserved_cpus"])
        lines += ["  - %s: %d GPU, %d CPU%s, on NUMA node %s" % (
            t["name"], t["gpus"], t["cpu"], ", a NIC" if t["nic"] else "", ",".join(map(str, t["nodes"]))) for t in claims["templates"]]
    lines += ["WARNING: %s" % w for w in plan.get("warnings", []) if warnings]
    return "\n".join(lines)


def plan_text(hosts, hostvars, warnings=True, per_host=False):
    """The run's hosts as one text, in the order given (the inventory's): per host a heading, its topology table and
    its plan (with its warnings unless ``warnings`` is false); a host without a plan is named as not planned. A host
    whose table and plan are an earlier host's, word for word (identical machines), names that host in one line instead:
    a fleet of a few machine types prints a few texts, not one per host. ``per_host``: {host: its lines} instead, the
    topology's warnings left to the plan's (what the plan playbook shows under each host with Ansible's default
    callback)."""
    hostvars = facts_view(hostvars)   # the facts as stored (plugin_utils/hostvars_view.py)
    if per_host:
        return dict((host, text.split("\n")) for host, text in _host_texts(hosts, hostvars, False, warnings, "\n\n"))
    parts = []
    for host, text in _host_texts(hosts, hostvars, warnings, warnings, "\n"):
        parts += ["== %s ==" % host, text + "\n"]
    return "\n".join(parts)


def _host_texts(hosts, hostvars, topology_warnings, plan_warnings, between):
    """[(host, text)] in the order given: the host's topology table and plan (``between`` them), or why it has none, or
    the earlier host whose text it is."""
    out, first = [], {}
    for host in hosts or []:
        variables = hostvars[host] if host in hostvars else {}
        topology, plan = variables.get("rke2_numa_topology"), variables.get("rke2_numa_plan")
        if not isinstance(plan, dict) or not plan or not isinstance(topology, dict):
            refused = (variables.get("__rke2_numa_plan_result") or {}).get("refused")
            out.append((host, "not planned: %s" % refused if refused else "not planned (the run says why above)"))
            continue
        try:
            text = topology_text.topology_table(topology, topology_warnings) + between + plan_report(plan, plan_warnings)
        except ValueError as exc:
            raise AnsibleFilterError(str(exc)) from exc
        if text in first:
            text = "same topology and plan as %s (plan %s)" % (first[text], plan.get("fingerprint") or "")
        else:
            first[text] = host
        out.append((host, text))
    return out


class FilterModule(object):
    """maitred.rke2_numa plan filters."""

    def filters(self):
        return {"plan_report": plan_report, "plan_text": plan_text}
