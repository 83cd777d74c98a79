# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rolling play's maintenance-window guard and the markers earlier rolls left (logic in plugin_utils)."""

from __future__ import annotations

import json
import re

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.capacity import capacity_check, roll_order
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.drain import drain_failure_message, evicted_pods, pods_left
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.maintainers import kured_hold, kured_lock_claims, kured_lock_releases, maintainers_at_work
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_lease import (
    LEASE_MARGIN, LeaseError, default_max_unavailable, default_roll_id, lease_from_reply, lease_seconds, lease_step, max_unavailable_errors, roll_in_progress)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_markers import node_markers, stale_nodes
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_outcome import annotation_reason, failure_reason, roll_outcome, roll_progress
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.window import WindowError, window_check


def maintenance_window(window_end, now, node_minutes, done_seconds=()):
    """{start, estimate_seconds, left_seconds, reason}: may a node start at ``now`` (epoch seconds)?"""
    try:
        return window_check(window_end, float(now), float(node_minutes), [float(s) for s in done_seconds or ()])
    except WindowError as e:
        raise AnsibleFilterError(str(e))


def _node(hostvars, host):
    """The Node name of an inventory host: rke2_numa_node_name (the drain role's default: the host's name)."""
    return hostvars[host].get("rke2_numa_node_name") or host


def _compliant(hostvars, host):
    compliance = hostvars[host].get("rke2_numa_compliance")
    return None if not isinstance(compliance, dict) else bool(compliance.get("compliant"))


def _in_place(hostvars, host):
    """Not compliant, but nothing to do that needs a drain (config.yaml's mode, our labels): fixed in place."""
    compliance = hostvars[host].get("rke2_numa_compliance")
    return isinstance(compliance, dict) and not compliance.get("compliant") and bool(compliance.get("runs_plan"))


def _blocked(hostvars, host):
    """Why the apply chain would refuse the host ([] when it would not): compliance's ``blocked``."""
    compliance = hostvars[host].get("rke2_numa_compliance")
    return list(compliance.get("blocked") or []) if isinstance(compliance, dict) else []


def maintainers(node, daemonsets, suc_pods, kured_daemonset, foreign_annotations, now, roll_id=""):
    """Why another maintainer keeps the roll off ``node`` now (plugin_utils/maintainers.py); [] when none does."""
    return maintainers_at_work(node, daemonsets, suc_pods, kured_daemonset, foreign_annotations or [], float(now), str(roll_id or ""))


def kured_claims(reply, kured_daemonset, now, ttl_seconds, roll_id):
    """What holds kured's lock for the roll (plugin_utils/maintainers.py); ``reply``: ``kubectl get daemonsets -A -o json``."""
    return kured_lock_claims((reply or {}).get("items") or [], kured_daemonset, float(now), int(ttl_seconds), str(roll_id))


def kured_releases(reply, kured_daemonset, roll_id):
    """What gives kured's lock back after the roll: this roll's entries removed, kured's and other rolls' kept."""
    return kured_lock_releases((reply or {}).get("items") or [], kured_daemonset, str(roll_id))


def _node_objects(reply):
    """The Nodes of ``kubectl get nodes[,pods] -o json`` (parsed), or of a list of Node objects."""
    items = reply if isinstance(reply, list) else (reply or {}).get("items") or []
    return [i for i in items if isinstance(i, dict) and i.get("kind", "Node") == "Node"]


def _lease(text, name):
    try:
        return lease_from_reply(text, name)
    except LeaseError as e:
        raise AnsibleFilterError("could not read the roll's Lease %s: %s; nothing was changed" % (name, e))


def roll_settings(hostvars, host, hosts, now, token=""):
    """{id, run, lease_seconds, max_unavailable, nodes, serial} of this run: ``rke2_numa_roll_id`` or a default (AWX's
    workflow or job id, else a fresh one), this run's own token (the runs of one roll tell their slot claims apart by
    it), the Lease's duration (``rke2_numa_roll_lease_seconds`` or the longest stretch between renewals), the cap on
    Nodes out across the roll's runs (``rke2_numa_max_unavailable``, default the batch size), all as ``host``'s
    variables set them (what the inventory and -e set), and the Node names of the run's ``hosts``."""
    variables = hostvars[host]
    roll_id = variables.get("rke2_numa_roll_id") or default_roll_id(
        variables.get("awx_workflow_job_id"), variables.get("awx_job_id"), float(now), token)
    seconds = variables.get("rke2_numa_roll_lease_seconds") or lease_seconds(variables)
    # the roll play's batch size: the value the inputs check validated, wherever the operator set it (group_vars
    # too, which a play's serial keyword does not see); one roll has one batch size
    serials = {json.dumps(hostvars[h].get("rke2_numa_serial", 1), sort_keys=True) for h in hosts or [host]}
    if len(serials) > 1:
        raise AnsibleFilterError("rke2_numa_serial differs between the hosts of the roll (%s): a roll has one batch size; set it "
                                 "once for the run (group_vars/all, or -e)" % ", ".join(sorted(serials)))
    serial = json.loads(serials.pop())
    cap = variables.get("rke2_numa_max_unavailable") or default_max_unavailable(serial)
    if max_unavailable_errors(cap):
        raise AnsibleFilterError("; ".join(max_unavailable_errors(cap)))
    cap = cap.strip() if isinstance(cap, str) and cap.strip().endswith("%") else int(cap)
    if isinstance(cap, int) and isinstance(serial, int) and serial > cap:
        serial = cap   # a batch larger than the cap would leave its last nodes without a slot, every batch
    return {"id": str(roll_id), "run": re.sub(r"[^0-9a-f]", "", str(token).lower())[:8] or "0", "lease_seconds": int(seconds),
            "slot_wait": max(0, int(seconds) - LEASE_MARGIN),
            "max_unavailable": cap, "nodes": sorted(_node(hostvars, h) for h in hosts or []), "serial": serial}


def lease(text, mode, roll, now, nodes_reply=None, claim=None):
    """What to do with the roll's Lease (plugin_utils/roll_lease.py lease_step); ``text``: what
    ``kubectl get lease NAME --ignore-not-found -o json`` printed; ``roll``: the rke2_numa_roll fact."""
    try:
        return lease_step(mode, _lease(text, roll["name"]), roll, float(now), _node_objects(nodes_reply),
                          None if claim is None else [str(n) for n in claim])
    except (KeyError, TypeError, ValueError) as e:
        raise AnsibleFilterError("could not decide what to write to the roll's Lease: %s" % e)


def in_progress(text, name, nodes_reply, cordoned_key, now, roll_id=""):
    """{busy, holder, since, nodes, msg}: is another roll at work (a live Lease)? For the read-only runs; an answer that
    is not a Lease read is not known (busy None, msg says why) - a roll reads it again and stops there."""
    try:
        current = lease_from_reply(text, name)
    except LeaseError as e:
        return {"busy": None, "holder": "", "since": "", "nodes": [], "msg": "could not read the roll's Lease %s: %s" % (name, e)}
    return roll_in_progress(current, _node_objects(nodes_reply), cordoned_key, float(now), str(roll_id or ""))


def _rolled(hostvars, hosts):
    """The roll's entry of each host it picked: {host, result, reason, seconds, unproven, labels_note}."""
    rolled = []
    for host in hosts or []:
        facts = hostvars[host]
        proof = facts.get("rke2_numa_prove_report") or {}
        rolled.append({"host": host, "result": facts.get("rke2_numa_roll_result"), "reason": facts.get("rke2_numa_roll_reason"),
                       "seconds": facts.get("rke2_numa_roll_seconds"),
                       "unproven": list(proof.get("inconclusive") or []) + list(proof.get("warnings") or []),
                       "labels_note": facts.get("rke2_numa_labels_note") or None, "note": facts.get("rke2_numa_roll_note") or None})
    return rolled


def outcome(hostvars, fleet_hosts, rolled_hosts, check_mode=False):
    """The roll's summary and whether it failed, from the hosts' facts (plugin_utils/roll_outcome.py)."""
    fleet = [{"host": host, "compliant": _compliant(hostvars, host), "blocked": _blocked(hostvars, host)} for host in fleet_hosts or []]
    return roll_outcome(fleet, _rolled(hostvars, rolled_hosts), bool(check_mode))


def progress(hostvars, rolled_hosts, max_fail_percentage=0):
    """Where the roll stands between batches (plugin_utils/roll_outcome.py roll_progress)."""
    return roll_progress(_rolled(hostvars, rolled_hosts), max_fail_percentage)


def drain_failure(result, node_name, admin_cordon=False):
    """The failure message of a failed ``kubectl drain`` task result (plugin_utils/drain.py)."""
    result = result or {}
    return drain_failure_message(node_name, result.get("stdout"), result.get("stderr"), bool(admin_cordon), str(result.get("msg") or ""))


def drain_evicted(result):
    """The pods ("ns/name") a ``kubectl drain`` task result says it evicted."""
    result = result or {}
    return evicted_pods(result.get("stdout"))


def _kinds(reply, kind):
    return [i for i in (reply or {}).get("items") or [] if i.get("kind") == kind]


def capacity(reply, node_name, batch_hosts, gpu_resource, hostvars):
    """Would draining ``node_name`` leave GPU pods Pending? ``reply``: ``kubectl get nodes,pods -A -o json``;
    ``batch_hosts``: the inventory hosts of this batch (their Nodes are out too)."""
    batch = [_node(hostvars, h) for h in batch_hosts or []]
    return capacity_check(node_name, batch, _kinds(reply, "Node"), _kinds(reply, "Pod"), gpu_resource)


def order(hostvars, hosts, markers, pods_reply, gpu_resource, how="idle_first"):
    """The hosts to roll (not compliant, or left cordoned by an earlier roll), in the order to roll them - never
    one the apply chain would refuse (blocked: its files or boot configuration need a hand first).
    ``pods_reply``: ``kubectl get pods -A -o json`` or ``get nodes,pods -A -o json`` (its Nodes are left out)."""
    candidates = []
    for host in hosts or []:
        node = _node(hostvars, host)
        if _blocked(hostvars, host):
            continue
        if (not _compliant(hostvars, host) and not _in_place(hostvars, host)) or (markers or {}).get(node, {}).get("cordoned_by_us"):
            candidates.append({"host": host, "node": node})
    pods = [i for i in (pods_reply or {}).get("items") or [] if i.get("kind", "Pod") == "Pod"]
    # the nodes an earlier roll (a dead one: this roll holds the Lease now) left cordoned first: they are out already
    left = [c for c in candidates if (markers or {}).get(c["node"], {}).get("cordoned_by_us")]
    return roll_order(left, pods, gpu_resource, how) + roll_order([c for c in candidates if c not in left], pods, gpu_resource, how)


def stale_marked(hostvars, hosts, markers):
    """The Nodes of ``hosts`` that run their plan but carry stale markers of an earlier roll: to clear, not to roll."""
    return stale_nodes([{"node": _node(hostvars, h), "compliant": _compliant(hostvars, h) or _in_place(hostvars, h)}
                        for h in hosts or []], markers)


def blocked_hosts(hostvars, hosts):
    """The hosts the apply chain would refuse (compliance's ``blocked``): never rolled, their labels withdrawn."""
    return [h for h in hosts or [] if _blocked(hostvars, h)]


def in_place(hostvars, hosts, markers):
    """The hosts that are not compliant but need no drain (only config.yaml's mode or our labels to fix), in the order given -
    unless an earlier roll left their Node cordoned (those are rolled: roll_order)."""
    return [h for h in hosts or [] if _in_place(hostvars, h) and not (markers or {}).get(_node(hostvars, h), {}).get("cordoned_by_us")]


GROUPS = ("rke2_numa_to_roll", "rke2_numa_to_fix", "rke2_numa_blocked")


def groups(hostvars, hosts, markers, pods_reply, gpu_resource, how="idle_first"):
    """[{host, group}]: the hosts to roll (roll_order, in its order), to fix in place (roll_in_place) and blocked
    (roll_blocked), for one add_host task (the pick play's groups rke2_numa_to_roll, _to_fix and _blocked)."""
    return ([{"host": h, "group": GROUPS[0]} for h in order(hostvars, hosts, markers, pods_reply, gpu_resource, how)]
            + [{"host": h, "group": GROUPS[1]} for h in in_place(hostvars, hosts, markers)]
            + [{"host": h, "group": GROUPS[2]} for h in blocked_hosts(hostvars, hosts)])


class FilterModule(object):
    """maitred.rke2_numa rolling filters."""

    def filters(self):
        return {"maintenance_window": maintenance_window, "node_markers": node_markers, "maintainers_at_work": maintainers,
                "kured_lock_claims": kured_claims, "kured_lock_releases": kured_releases, "kured_hold": kured_hold,
                "roll_outcome": outcome, "roll_progress": progress, "drain_pods_left": pods_left, "drain_failure": drain_failure,
                "drain_evicted": drain_evicted, "failure_reason": failure_reason,
                "annotation_reason": annotation_reason,
                "roll_capacity": capacity, "roll_order": order, "roll_stale_markers": stale_marked,
                "roll_in_place": in_place, "roll_blocked": blocked_hosts, "roll_groups": groups,
                "roll_settings": roll_settings, "roll_lease": lease, "roll_in_progress": in_progress}
