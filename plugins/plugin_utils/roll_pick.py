# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which hosts a roll takes, and how (controller side): from each host's variables (hostvars: the check's
``rke2_numa_compliance``, ``rke2_numa_node_name``) and the markers earlier rolls left on the Nodes.

- to roll (drain, reconfigure, return): not compliant, or left cordoned by an earlier roll - those first (they are
  out already), then in ``rke2_numa_roll_order`` (plugin_utils/capacity.py roll_order);
- to fix in place (no drain): not compliant, but it runs its plan (only config.yaml's mode or our labels to fix);
- blocked: the apply chain would refuse it (compliance's ``blocked``): never rolled, whatever its markers say.
"""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.capacity import roll_order
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_markers import stale_nodes

# The rolling playbook's groups, in the order roll_groups lists them.
TO_ROLL, TO_FIX, BLOCKED = "rke2_numa_to_roll", "rke2_numa_to_fix", "rke2_numa_blocked"


def node_name(hostvars, host):
    """The Node name of an inventory host: rke2_numa_node_name (the drain role's default: the host's name)."""
    return hostvars[host].get("rke2_numa_node_name") or host


def _compliance(hostvars, host):
    compliance = hostvars[host].get("rke2_numa_compliance")
    return compliance if isinstance(compliance, dict) else None


def compliant(hostvars, host):
    """True or False as the check found the host; None when it was not checked."""
    compliance = _compliance(hostvars, host)
    return None if compliance is None else bool(compliance.get("compliant"))


def fixable_in_place(hostvars, host):
    """Not compliant, but nothing to do that needs a drain (config.yaml's mode, our labels): fixed in place."""
    compliance = _compliance(hostvars, host)
    return compliance is not None and not compliance.get("compliant") and bool(compliance.get("runs_plan"))


def blocked_reasons(hostvars, host):
    """Why the apply chain would refuse the host ([] when it would not): compliance's ``blocked``."""
    compliance = _compliance(hostvars, host)
    return list(compliance.get("blocked") or []) if compliance is not None else []


def _cordoned_by_us(markers, node):
    return bool((markers or {}).get(node, {}).get("cordoned_by_us"))


def to_roll(hostvars, hosts, markers, pods, gpu_resource, how="idle_first"):
    """The hosts to roll in the order to roll them. ``pods``: the cluster's Pod objects."""
    candidates = []
    for host in hosts or []:
        node = node_name(hostvars, host)
        if blocked_reasons(hostvars, host):
            continue
        if (not compliant(hostvars, host) and not fixable_in_place(hostvars, host)) or _cordoned_by_us(markers, node):
            candidates.append({"host": host, "node": node})
    # the nodes an earlier roll (a dead one: this roll holds the Lease now) left cordoned first: they are out already
    left = [c for c in candidates if _cordoned_by_us(markers, c["node"])]
    return roll_order(left, pods, gpu_resource, how) + roll_order([c for c in candidates if c not in left], pods, gpu_resource, how)


def to_fix(hostvars, hosts, markers):
    """The hosts fixed in place, in the order given - unless an earlier roll left their Node cordoned (rolled then)."""
    return [h for h in hosts or [] if fixable_in_place(hostvars, h) and not _cordoned_by_us(markers, node_name(hostvars, h))]


def blocked(hostvars, hosts):
    """The hosts the apply chain would refuse: never rolled, their labels withdrawn."""
    return [h for h in hosts or [] if blocked_reasons(hostvars, h)]


def roll_groups(hostvars, hosts, markers, pods, gpu_resource, how="idle_first"):
    """[{host, group}]: the hosts to roll (in their order), to fix in place and blocked, for one add_host task."""
    return ([{"host": h, "group": TO_ROLL} for h in to_roll(hostvars, hosts, markers, pods, gpu_resource, how)]
            + [{"host": h, "group": TO_FIX} for h in to_fix(hostvars, hosts, markers)]
            + [{"host": h, "group": BLOCKED} for h in blocked(hostvars, hosts)])


def fleet_entries(hostvars, hosts):
    """roll_outcome's ``fleet``: [{host, compliant, blocked}]."""
    return [{"host": h, "compliant": compliant(hostvars, h), "blocked": blocked_reasons(hostvars, h)} for h in hosts or []]


def rolled_entries(hostvars, hosts):
    """The roll's entry of each host it picked: {host, result, reason, seconds, unproven, labels_note, note}."""
    rolled = []
    for host in hosts or []:
        facts = hostvars[host]
        proof = facts.get("rke2_numa_prove_report") or {}
        rolled.append({"host": host, "result": facts.get("rke2_numa_roll_result"), "reason": facts.get("rke2_numa_roll_reason"),
                       "seconds": facts.get("rke2_numa_roll_seconds"),
                       "unproven": list(proof.get("inconclusive") or []) + list(proof.get("warnings") or []),
                       "labels_note": facts.get("rke2_numa_labels_note") or None, "note": facts.get("rke2_numa_roll_note") or None})
    return rolled


def stale_marked(hostvars, hosts, markers):
    """The Nodes of ``hosts`` that run their plan but carry stale markers of an earlier roll: to clear, not to roll."""
    return stale_nodes([{"node": node_name(hostvars, h), "compliant": compliant(hostvars, h) or fixable_in_place(hostvars, h)}
                        for h in hosts or []], markers)
