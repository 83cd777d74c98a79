# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rolling playbook's filters: thin adapters over plugin_utils (roll_pick: which hosts; roll_states: what each
ended as; roll_outcome: the summary; roll_lease, maintainers, window, drain, capacity)."""

from __future__ import annotations

import json
import re

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import roll_pick
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.capacity import capacity_check
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.admission import PROTECTED_NAMESPACES
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rbac import drain_namespaces as drain_namespaces_of
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.drain import drain_failure_message, evicted_pods, pods_left, protected_evictions
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.maintainers import kured_hold, maintainers_at_work
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_lease import (
    LEASE_MARGIN, LeaseError, default_max_unavailable, default_roll_id, lease_free, lease_from_reply, lease_seconds, lease_seconds_errors,
    max_unavailable_errors, node_objects, observation, roll_in_progress, waves)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_markers import cordon_patch, node_markers, release_patch
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_outcome import annotation_reason, roll_eta, roll_outcome, roll_progress
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_states import RollStateError, roll_state
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.task_result import failure_reason
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.values import as_boolean, as_integer
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.window import WindowError, roll_window_end, window_check


def maintenance_window(window_end, now, node_minutes, done_seconds=()):
    """{start, estimate_seconds, left_seconds, reason}: may a node start at ``now`` (epoch seconds)?"""
    try:
        return window_check(window_end, float(now), float(node_minutes), [float(s) for s in done_seconds or ()])
    except WindowError as e:
        raise AnsibleFilterError(str(e))


def _roll_ids(roll_id):
    """A roll id, or [this roll's id, the dead rolls' whose Lease it took over] (their kured entries are its own)."""
    if isinstance(roll_id, (list, tuple)):
        return [str(i) for i in roll_id if i]
    return str(roll_id or "")


def maintainers(node, daemonsets, suc_pods, kured_daemonset, foreign_annotations, now, roll_id=""):
    """Why another maintainer keeps the roll off ``node`` now (plugin_utils/maintainers.py); [] when none does."""
    return maintainers_at_work(node, daemonsets, suc_pods, kured_daemonset, foreign_annotations or [], float(now), _roll_ids(roll_id))


def roll_settings(hostvars, host, hosts, now, token="", forks=5):
    """{id, run, lease_seconds, max_unavailable, nodes, serial, window_end} of this run: ``rke2_numa_roll_id`` or a
    default (AWX's workflow or job id, else a fresh one), this run's own token (the runs of one roll tell their slot
    claims apart by it), the Lease's duration (``rke2_numa_roll_lease_seconds`` or the longest stretch between
    renewals), the cap on Nodes out across the roll's runs (``rke2_numa_max_unavailable``, default the batch size), the
    end of its window (``rke2_numa_window_end``, or ``rke2_numa_window_minutes`` from ``now``), all as ``host``'s
    variables set them (what the inventory and -e set), and the Node names of the run's ``hosts``."""
    variables = hostvars[host]
    roll_id = variables.get("rke2_numa_roll_id") or default_roll_id(
        variables.get("awx_workflow_job_id"), variables.get("awx_job_id"), float(now), token)
    # the roll play's batch size: the value the inputs check validated, wherever the operator set it (group_vars
    # too, which a play's serial keyword does not see); one roll has one batch size
    serials = {json.dumps(hostvars[h].get("rke2_numa_serial", 1), sort_keys=True) for h in hosts or [host]}
    if len(serials) > 1:
        raise AnsibleFilterError("rke2_numa_serial differs between the hosts of the roll (%s): a roll has one batch size; set it "
                                 "once for the run (group_vars/all, or -e)" % ", ".join(sorted(serials)))
    serial = json.loads(serials.pop())
    # 0 computes it, as a number or as the text -e gives ("0" is a true value to Python); either way it must outlast the
    # longest stretch between two renewals, a batch's waves included (--forks smaller than the batch)
    batch_waves = waves(serial, len(hosts or [host]), forks)
    seconds = as_integer(variables.get("rke2_numa_roll_lease_seconds")) or lease_seconds(variables, batch_waves)
    errors = lease_seconds_errors(seconds, variables, batch_waves)
    if errors:
        raise AnsibleFilterError("; ".join(errors) + "; nothing was changed")
    cap = variables.get("rke2_numa_max_unavailable") or default_max_unavailable(serial)
    if max_unavailable_errors(cap):
        raise AnsibleFilterError("; ".join(max_unavailable_errors(cap)))
    cap = cap.strip() if isinstance(cap, str) and cap.strip().endswith("%") else int(cap)
    if isinstance(cap, int) and isinstance(serial, int) and serial > cap:
        serial = cap   # a batch larger than the cap would leave its last nodes without a slot, every batch
    return {"id": str(roll_id), "run": re.sub(r"[^0-9a-f]", "", str(token).lower())[:8] or "0", "lease_seconds": int(seconds),
            "resume": bool(variables.get("rke2_numa_roll_id")) and as_boolean(variables.get("rke2_numa_roll_resume")) is True,
            "slot_wait": max(0, int(seconds) - LEASE_MARGIN),
            "max_unavailable": cap, "nodes": sorted(roll_pick.node_name(hostvars, h) for h in hosts or []), "serial": serial,
            "window_end": roll_window_end(variables.get("rke2_numa_window_end"), as_integer(variables.get("rke2_numa_window_minutes")),
                                          float(now))}


def lease_observed(text, name, now, before=None):
    """{resource_version, since}: when this run first saw the Lease ``text`` shows (plugin_utils/roll_lease.py
    observation); {} when there is none or it cannot be read."""
    try:
        current = lease_from_reply(text, name)
    except LeaseError:
        return {}
    return observation(current, float(now), before or None) if current is not None else {}


def lease_is_free(text, name, now, observed=None, roll_id=""):
    """Would a roll take the Lease ``text`` shows now (plugin_utils/roll_lease.py lease_free)? An answer that is not a
    Lease read is not free (the roll reads it again and stops there)."""
    try:
        current = lease_from_reply(text, name)
    except LeaseError:
        return False
    return lease_free(current, float(now), observed or None, str(roll_id or ""))


def in_progress(text, name, nodes_reply, cordoned_key, now, roll_id=""):
    """{busy, holder, since, nodes, msg}: is another roll at work (a live Lease)? For the read-only runs; an answer that
    is not a Lease read is not known (busy None, msg says why) - a roll reads it again and stops there."""
    try:
        current = lease_from_reply(text, name)
    except LeaseError as e:
        return {"busy": None, "holder": "", "since": "", "nodes": [], "msg": "could not read the roll's Lease %s: %s" % (name, e)}
    return roll_in_progress(current, node_objects(nodes_reply), cordoned_key, float(now), str(roll_id or ""))


def outcome(hostvars, fleet_hosts, rolled_hosts, check_mode=False):
    """The roll's summary and whether it failed, from the hosts' facts (plugin_utils/roll_outcome.py)."""
    return roll_outcome(roll_pick.fleet_entries(hostvars, fleet_hosts), roll_pick.rolled_entries(hostvars, rolled_hosts), bool(check_mode))


def progress(hostvars, rolled_hosts, max_fail_percentage=0):
    """Where the roll stands between batches (plugin_utils/roll_outcome.py roll_progress)."""
    return roll_progress(roll_pick.rolled_entries(hostvars, rolled_hosts), max_fail_percentage)


def eta(hostvars, rolled_hosts, now, serial=1, node_minutes=30, window_end=""):
    """The roll's progress line after a batch (plugin_utils/roll_outcome.py roll_eta)."""
    try:
        return roll_eta(roll_pick.rolled_entries(hostvars, rolled_hosts), float(now), int(serial), float(node_minutes), str(window_end or ""))
    except (TypeError, ValueError) as e:
        raise AnsibleFilterError("roll_eta: %s" % e)


def state(step, failed=None, actions=None, stopped_for_reboot=False):
    """The state a node ends in at ``step`` (plugin_utils/roll_states.py roll_state)."""
    try:
        return roll_state(step, failed, list(actions or []), bool(stopped_for_reboot))
    except RollStateError as e:
        raise AnsibleFilterError(str(e))


def drain_failure(result, node_name, admin_cordon=False):
    """The failure message of a failed ``kubectl drain`` task result (plugin_utils/drain.py)."""
    result = result or {}
    return drain_failure_message(node_name, result.get("stdout"), result.get("stderr"), bool(admin_cordon), str(result.get("msg") or ""))


def drain_protected(reply, node_name, drain_namespaces=()):
    """The pods ``kubectl drain`` would evict from ``node_name`` that the roll may not evict: the cluster's own namespaces
    (kube-system), and outside ``drain_namespaces`` when it names some (plugin_utils/drain.py protected_evictions);
    ``reply``: ``kubectl get pods -A --field-selector spec.nodeName=NODE -o json``, parsed."""
    try:
        allowed = drain_namespaces_of(drain_namespaces)
    except ValueError as e:
        raise AnsibleFilterError("drain_protected: %s" % e) from None
    return protected_evictions((reply or {}).get("items") or [], str(node_name), PROTECTED_NAMESPACES, allowed)


def drain_evicted(result):
    """The pods ("ns/name") a ``kubectl drain`` task result says it evicted."""
    result = result or {}
    return evicted_pods(result.get("stdout"))


def _kinds(reply, kind):
    return [i for i in (reply or {}).get("items") or [] if i.get("kind") == kind]


def capacity(reply, node_name, batch_hosts, gpu_resource, hostvars):
    """Would draining ``node_name`` leave GPU pods Pending? ``reply``: ``kubectl get nodes,pods -A -o json``;
    ``batch_hosts``: the inventory hosts of this batch (their Nodes are out too)."""
    batch = [roll_pick.node_name(hostvars, h) for h in batch_hosts or []]
    return capacity_check(node_name, batch, _kinds(reply, "Node"), _kinds(reply, "Pod"), gpu_resource)


def groups(hostvars, hosts, markers, pods_reply, gpu_resource, how="idle_first"):
    """[{host, group}] for the pick play's one add_host task (plugin_utils/roll_pick.py roll_groups). ``pods_reply``:
    ``kubectl get pods -A -o json`` or ``get nodes,pods -A -o json`` (its Nodes are left out)."""
    pods = [i for i in (pods_reply or {}).get("items") or [] if i.get("kind", "Pod") == "Pod"]
    return roll_pick.roll_groups(hostvars, hosts, markers, pods, gpu_resource, how)


class FilterModule(object):
    """maitred.rke2_numa rolling filters."""

    def filters(self):
        return {"maintenance_window": maintenance_window, "node_markers": node_markers, "maintainers_at_work": maintainers,
                "kured_hold": kured_hold,
                "roll_outcome": outcome, "roll_progress": progress, "roll_eta": eta, "drain_pods_left": pods_left, "drain_failure": drain_failure,
                "drain_evicted": drain_evicted, "drain_protected": drain_protected, "failure_reason": failure_reason,
                "annotation_reason": annotation_reason,
                "roll_capacity": capacity, "roll_stale_markers": roll_pick.stale_marked, "roll_groups": groups, "roll_state": state,
                "roll_settings": roll_settings, "roll_lease_observed": lease_observed, "roll_lease_free": lease_is_free,
                "node_cordon_patch": cordon_patch, "node_release_patch": release_patch,
                "roll_in_progress": in_progress}
