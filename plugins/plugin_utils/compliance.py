# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is a node compliant with its plan, and if not, what must the rolling play do? (controller side)

Input: the plan (planner.make_plan) and node_state_info's result. A node is
compliant when it runs its plan (the verify rules, checkpoints the kubelet
accepts included) and its boot configuration and RKE2 config files already
hold it, so that nothing the apply chain would do changes anything. The
rules are the ones the apply chain and verify use (the boot methods' plan_*,
rke2_config's merge, kubelet_state's reset rule, verify), called here on the
state read in one module call; none is re-implemented.
"""

from __future__ import annotations

import json
import os

import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils.host_access import denied_reason
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kubelet_conf import conf_path
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_plan import plan_from_inputs
from ansible_collections.maitred.rke2_numa.plugins.module_utils.rancher import rancher_signs
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import (
    MANAGED_KERNEL_ARGS,
    added_removed,
    needs_reboot,
    running_ownership,
    split_cmdline,
    validate_args,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_config import (
    file_mode_args,
    kubelet_config as config_of,
    kubelet_config_text,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_state import (
    pod_level_resource_managers,
    reset_reasons,
    restart_refusals,
    topology_at_next_start,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import LabelError, label_changes, nfd_features, numa_labels, owned_label
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import dra, dra_plan
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.prove import finish_dra_audit, finish_pod_audit
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import rancher
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import (
    SECURE,
    ConfigError,
    effective_config,
    flag_name,
    plan_write,
    state_files,
    state_kubelet_args,
    state_text,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.verify import verify

# The order the rolling play takes them in; drain first and verify/uncordon/label last whenever
# anything is to be done.
ACTIONS = ("drain", "boot_params", "reboot", "hugepages", "rke2_config", "reset", "restart", "verify", "uncordon", "label")
# Each check a finding names ({check, text}), in the order a report shows them, with its title (report.py's groups).
# verify.py's checks (cmdline, isolation, hugepages, checkpoints, config) are among them.
CHECKS = (("blocked", "refused by the apply chain"), ("boot", "boot configuration"), ("cmdline", "running kernel args"),
          ("isolation", "CPU isolation"), ("hugepages", "hugepages"), ("hugepages_unit", "hugepages unit"),
          ("config", "RKE2 config"), ("restart", "kubelet restart"), ("checkpoints", "kubelet checkpoints"),
          ("labels", "labels"))
_CHECK_NAMES = frozenset(name for name, dummy in CHECKS)


def unread_reason(state):
    """Why node_state_info could not read the node ('' when it could): ``cannot read <places> as <user> (run with
    become)``, from its result's ``access`` (a node is never judged on files it could not read)."""
    access = (state or {}).get("access") or {}
    return denied_reason(access["denied"], access.get("user") or "?") if access.get("denied") else ""


def boot_findings(plan, state, managed=MANAGED_KERNEL_ARGS):
    """(files_change, reboot, reasons) for the plan's kernel args on this boot configuration."""
    boot = state["boot"]
    if boot.get("error"):
        return True, False, ["boot configuration: %s" % boot["error"]]
    wanted = validate_args(plan["kernel_args"], list(managed))
    change = plan_from_inputs(boot, wanted, list(managed))
    own = running_ownership(wanted, list(managed), change["history"], change["after"])
    running = split_cmdline(state["topology"].get("cmdline") or "")
    reboot = needs_reboot(running, wanted, list(managed), own)
    reasons = []
    if change["files"] or change["commands"]:
        added, removed = added_removed(change["locations"], wanted)
        what = ["add " + " ".join(added)] if added else []
        what += ["remove " + " ".join(removed)] if removed else []
        reasons.append("the boot configuration does not hold the plan's kernel args: %s"
                       % ("; ".join(what) or "would rewrite " + ", ".join("/" + f["path"] for f in change["files"])))
    if reboot:
        reasons.append("the running kernel does not run the plan's kernel args (reboot)")
    return bool(change["files"] or change["commands"]), reboot, reasons


def _refusal(error):
    """A refusal's text as a finding: the action's "nothing written" is about a write check.yml never makes."""
    return str(error).replace(": nothing written", "", 1)


def _effective(files):
    """What RKE2 passes of the keys the plan writes, over [(path, text)] in its order."""
    config = effective_config(files)
    return dict((k, config.get(k)) for k in ("kubelet-arg", "node-label", "node-taint"))


def _conf_state(state, kubelet_config, plan):
    """plan_write's ``conf`` from node_state_info's ``kubelet_conf`` (values, not texts): our file's text stands for
    what it holds - the planned text when its fields are the plan's, else a text that differs; a file the kubelet
    could not load, a text it cannot load either."""
    found = state.get("kubelet_conf") or {}
    path = found.get("path") or conf_path(state["rke2"]["files"][0]["path"])
    folder = found.get("folder") or os.path.dirname(path)
    files = [f for f in found.get("files") or [] if f.get("exists")]
    ours = [f for f in files if os.path.normpath(f["path"]) == os.path.normpath(path)]
    before = None
    if ours:
        in_file = file_mode_args(plan["kubelet_args"], folder)[1]
        planned = dict((k, v) for k, v in config_of(in_file).items() if k not in ("apiVersion", "kind"))
        same = kubelet_config == "file" and not ours[0].get("error") and ours[0].get("ours") and \
            json.loads(json.dumps(ours[0].get("values") or {})) == planned
        before = kubelet_config_text(in_file) if same else "# (not the plan's)\n"
    others = [(f["path"], "{" if f.get("error") else state_text(f.get("values") or {})) for f in files
              if os.path.normpath(f["path"]) != os.path.normpath(path)]
    return {"mode": kubelet_config, "path": path, "folder": folder, "before": before,
            "ours": bool(ours and ours[0].get("ours")), "others": others}


def config_decision(plan, state, setting="auto", dropin_path=None, kubelet_config="flags"):
    """What the rke2_config action would do on this node's files, decided with its rules (rancher.config_mode, then
    rke2_config.plan_write: the parse, the merge or the drop-in with the move out of merge mode, the drop-in's folder,
    what RKE2 would pass after the write), run on the keys node_state_info read. Returns {"mode", "blocked" (why the
    action would refuse: a roll must not drain a node for a write that will be refused), "change", "reasons",
    "quiet" (the write changes nothing RKE2 passes - only a file's mode or owner, or where the plan is written: fixed in
    place, no restart)}."""
    files = state["rke2"]["files"]
    by_path = dict((f["path"], f) for f in files)
    path = files[0]["path"]
    if kubelet_config == "file":  # the rke2_config action's choice: config.yaml left to its owner
        mode, unmerge, refusal = ("merge" if setting == "merge" else "dropin"), True, None
    else:
        mode, unmerge, refusal = rancher.config_mode(setting, state.get("rancher"), dropin_path)
    target = path if mode == "merge" else dropin_path
    out = {"mode": mode, "blocked": [], "change": False, "reasons": [], "quiet": True}
    if refusal:
        out["blocked"] = [refusal]
        return out
    for f in files:
        # in drop-in mode the action rewrites its own drop-in without reading it
        if f.get("error") and not (mode != "merge" and f["path"] == target):
            out["blocked"] = [_refusal(f["error"])]
            return out
    current = by_path.get(target)
    if current and current.get("link") and not current["exists"]:
        out["blocked"] = ["%s is a symlink to %s, which does not exist (the rke2_config action refuses to write through it)"
                          % (target, current["link"])]
        return out
    edited = ["kubelet-arg"] + (["node-label"] if plan["node_labels"] else []) + (["node-taint"] if plan["node_taints"] else [])
    edit_file = by_path.get(path) if mode == "merge" or unmerge else None
    shared = [k for k in (edit_file or {}).get("shared") or [] if k in edited]
    if shared:
        out["blocked"] = ["%s: %s shares a YAML node with another place of the file (an anchor and its alias): the "
                          "merge cannot edit it in place without changing the other (rewrite it as a plain block list)"
                          % (path if unmerge else target, ", ".join(shared))]
        return out
    before = state_text(current["values"]) if current and current["exists"] else None

    def read(other):
        found = by_path.get(other)
        return state_text(found["values"]) if found and found["exists"] else None

    dropins = [f["path"] for f in files[1:] if f["exists"]]
    ours = [f["path"] for f in files[1:] if f["exists"] and f.get("ours") and f["path"] != target]
    try:
        conf = _conf_state(state, kubelet_config, plan)
        new_text, report = plan_write(path, mode, target, before, read, dropins, plan["kubelet_args"], plan["node_labels"],
                                      plan["node_taints"], unmerge=unmerge, ours=ours, conf=conf)
    except ConfigError as e:
        out["blocked"] = [_refusal(e)]
        return out
    try:
        now = _effective(state_files(state))
    except ConfigError:  # our own drop-in, unreadable: rewritten
        now = None
    reasons = []
    if current is None or not current["exists"]:
        reasons.append("%s does not exist yet" % target)
    elif new_text is not None and (mode == "merge" or json.loads(json.dumps(current["values"] or {})) != yaml.safe_load(new_text)):
        reasons.append("%s does not hold the plan's kubelet args, labels and taints" % target)
    if report["unmerged"] is not None and kubelet_config == "file":
        reasons.append("%s still holds kubelet-args merge mode wrote: with rke2_numa_kubelet_config=file they move to %s"
                       % (path, conf["path"]))
    elif report["unmerged"] is not None:
        reasons.append("%s still holds what merge mode wrote, which moves to %s: Rancher manages the node, and its "
                       "50-rancher.yaml, read after config.yaml, would replace it" % (path, target))
    moved = report["kubelet_config"]["change"]
    if moved == "written":
        reasons.append("%s %s" % (conf["path"], "does not hold the plan's kubelet settings" if conf["before"] is not None
                                  else "does not exist yet (rke2_numa_kubelet_config=file)"))
    elif moved == "removed":
        reasons.append("%s is left from rke2_numa_kubelet_config=file: with flags the plan's settings are kubelet-args, "
                       "and it goes" % conf["path"])
    for old in report["removed"]:
        reasons.append("%s is an earlier drop-in of ours; %s replaces it" % (old, target))
    if current and current["exists"]:
        actual = dict((k, current[k]) for k in SECURE)
        if actual != SECURE:
            reasons.append("%s is %s %s:%s, not 0600 root:root (it holds the join token)"
                           % (target, actual["mode"], actual["owner"], actual["group"]))
    # the kubelet's settings change with file mode's drop-in too: RKE2 must restart for it
    out.update(change=bool(reasons), reasons=reasons, quiet=_effective(report["files"]) == now and moved is None)
    return out


UNIT_NAME = "rke2-numa-hugepages.service"


def hugepages_unit_findings(plan, state):
    """What the hugepages role would change in its unit: installed, enabled and setting the plan's pages when the
    plan sets its pools at run time; gone when it does not (a unit left from an earlier plan would set pools the
    kubelet does not expect at the next boot). [] when node_state_info did not read it."""
    found = state.get("hugepages_unit")
    if not found:
        return []
    if found.get("error"):
        return ["hugepages unit: %s" % found["error"]]
    hugepages = plan.get("hugepages") or {}
    if hugepages.get("method") != "runtime":
        if found["unit"]:  # what the hugepages role removes (the unit, and its script with it)
            return ["the hugepages unit %s of an earlier plan is still installed; this plan sets no pools at run time, "
                    "so it would set pools the kubelet does not expect at the next boot" % UNIT_NAME]
        return []
    if not (found["unit"] and found["script"]):
        return ["the hugepages unit %s is not installed: the plan's pools would not be set again at the next boot" % UNIT_NAME]
    wanted = {"size_kb": int(hugepages["size_kb"]),
              "per_node": dict((str(n), int(p)) for n, p in (hugepages.get("per_node") or {}).items())}
    reasons = []
    if found["sets"] != wanted:
        sets = found["sets"]
        reasons.append("the hugepages unit sets %s, the plan wants %s" % (
            _pools(sets) if sets else "no pools this version of the role knows", _pools(wanted)))
    if not found["enabled"]:
        reasons.append("the hugepages unit %s is not enabled: the pools would not be set again at the next boot" % UNIT_NAME)
    return reasons


def _pools(sets):
    return ", ".join("node %s: %d x %d kB" % (n, p, sets["size_kb"]) for n, p in sorted(sets["per_node"].items())) or "none"


FEATURE_MODE = "0644"  # the labels role's copy task


def label_findings(plan, state, labels_via="nfd", node_labels=None, dra=None):
    """(reasons, warnings) for the node's NUMA labels, as the labels role would publish them for ``plan``.

    A reason - the role would change something the node already carries, fixed in place (no drain): our NFD feature
    file holds other labels (another plan, another capacity) or another mode; it is still there although
    ``labels_via`` is not nfd (the role removes it); with kubectl, the Node (``node_labels``: its labels from the
    API, None when not read) carries some of our labels with other values. Labels that lie send pods where they
    do not fit. With nfd or none, ``node_labels`` are our labels kubectl wrote (NFD does not track them): those the
    plan does not publish that way stay on the Node until the labels role removes them - a reason.
    Neither - the node carries none of our labels (never labelled, or withdrawn, or labels are not used): pods that
    select them only miss this node, and labels.yml labels it. Warnings: only a plan that cannot be published."""
    found = state.get("nfd_features")
    present = bool(found and found["exists"])
    try:
        wanted = numa_labels(plan, dra) if labels_via != "none" else {}
    except LabelError as e:  # the labels role refuses the same way, naming the label
        return [], ["the plan cannot be published as labels: %s" % e]
    # with nfd or none, ``node_labels`` are our labels kubectl wrote (NFD does not track them): nothing removes them
    # but the labels role
    leftovers = sorted(k for k in node_labels or {} if labels_via != "kubectl" and owned_label(k) and k not in wanted)
    left = ["the Node carries NUMA labels kubectl wrote (an earlier rke2_numa_labels_via=kubectl) that "
            "rke2_numa_labels_via=%s does not publish: %s - labels.yml removes them" % (labels_via, ", ".join(leftovers))] if leftovers else []
    if labels_via == "none" and not present:
        return left, []
    if found and found.get("error"):
        return ["NFD feature file: %s" % found["error"]], []
    reasons = []
    if present and labels_via != "nfd":
        reasons.append("%s is left from an earlier run with rke2_numa_labels_via=nfd (now %s): NFD still publishes "
                       "its labels" % (found["path"], labels_via))
    elif present and found["text"] != nfd_features(wanted):
        reasons.append("%s does not hold this plan's NUMA labels (another plan or capacity: the labels would "
                       "send pods where they do not fit)" % found["path"])
    elif present and found["mode"] != FEATURE_MODE:
        reasons.append("%s is %s, not %s" % (found["path"], found["mode"], FEATURE_MODE))
    if labels_via == "kubectl" and any(owned_label(k) for k in node_labels or {}):
        changes = label_changes(node_labels, wanted)
        if changes:
            reasons.append("the Node's NUMA labels differ from this plan's: %s"
                           % ", ".join(sorted(c.split("=")[0].rstrip("-") for c in changes)))
    return reasons + left, []


REWRITTEN = ("%s was rewritten without this collection's kubelet args after they were applied (the kubelet's "
             "checkpoint still holds CPU Manager policy static): a tool that templates config.yaml wholesale "
             "(lablabs' ansible-role-rke2, rke2-ansible) undoes the merge at each of its runs - feed "
             "rke2_numa_plan.kubelet_args into its rke2_kubelet_arg, or set rke2_numa_config_mode=dropin")


def rewritten_warning(plan, state):
    """A warning when config.yaml holds none of the plan's kubelet flags while the kubelet's CPU Manager
    checkpoint shows it ran with them: another tool rewrote the file after a run of ours."""
    target = state["rke2"]["files"][0]
    if not target["exists"] or target.get("error") or state["kubelet_state"]["cpu_manager"].get("policy") != "static":
        return []
    value = (target["values"] or {}).get("kubelet-arg") or []
    present = set(flag_name(str(a)) for a in ([value] if isinstance(value, str) else value))
    if present & set(flag_name(a) for a in plan["kubelet_args"]):
        return []
    return [REWRITTEN % target["path"]]


def assess(plan, state, config_mode="auto", dropin_path=None, labels_via="nfd", node_labels=None, rancher_machine=None,
           kubelet_config="flags", dra=None):
    """{"compliant", "runs_plan", "reasons", "findings", "actions", "blocked", "plan_fingerprint", "warnings", "config_mode",
    "managed_by", "managed_by_evidence"} for one node (``rancher_machine``: the Node's rke.cattle.io/machine label, when
    the Node was read - evidence of Rancher beside the host's; the config mode is decided from the host's only).
    ``runs_plan``: compliant, or only the config file's mode and the labels are to fix (in place, no drain:
    ``actions`` is ``["rke2_config"]``, ``["label"]`` or both) - the kubelet runs the plan, its labels may stay.
    ``labels_via``, ``node_labels`` (the Node's labels from the API, None when not read) and ``dra`` (the node's DRA
    inventory, finish_dra; None when not read): label_findings.
    ``blocked``: why the apply chain would refuse the node (its files, its boot configuration) - then no action at
    all: a roll skips it, saying why, and never drains it for a write that would be refused. ``findings``: the reasons,
    each with the check that found it ({check, text}: boot, restart, config, cmdline, isolation, hugepages,
    checkpoints, hugepages_unit, labels, blocked), for the report to group."""
    topology = state["topology"]
    reasons, actions, findings = [], set(), []

    def found(check, texts):
        """Each reason once, and which check found it (``findings``: the report groups them by check)."""
        if check not in _CHECK_NAMES:
            raise ValueError("a finding of the check %r, which compliance.CHECKS does not name" % check)
        for text in texts:
            if text not in reasons:
                reasons.append(text)
                findings.append({"check": check, "text": text})
    # What the apply chain would refuse: a roll must not take the node out for it (blocked, not a plan of actions).
    config = config_decision(plan, state, config_mode, dropin_path, kubelet_config)
    blocked = (["boot configuration: %s" % state["boot"]["error"]] if state["boot"].get("error") else []) + config["blocked"]
    files_change, reboot, boot_reasons = boot_findings(plan, state)
    found("boot", boot_reasons)
    if files_change:
        actions.add("boot_params")
    if reboot:
        actions.add("reboot")
    host_rancher = (state.get("rancher") or {}).get("managed_by") == "rancher"
    try:
        effective = state_kubelet_args(state)
        found("restart", ["at the next restart of rke2%s the kubelet would refuse its checkpoint with the flags RKE2's files pass "
                          "today: %s" % (" (Rancher restarts it at its next plan change, upgrade or agent start, and never resets "
                                         "the checkpoint)" if host_rancher else "", refusal)
                          for refusal in restart_refusals(effective, state["kubelet_state"]["cpu_manager"],
                                                          state["kubelet_state"]["memory_manager"])])
    except ConfigError as e:
        effective = []
        found("config", [str(e)])
    config_change = config["change"]
    found("config", config["reasons"])
    if config_change:
        actions.add("rke2_config")
    report = verify(plan, topology, state["kubelet_state"]["cpu_manager"], state["kubelet_state"]["memory_manager"], effective)
    hugepages = [f for f in report["findings"] if f["check"] == "hugepages" and f["level"] == "error"]
    for finding in report["findings"]:
        if finding["level"] == "error":
            found(finding["check"], [finding["message"]])
    unit_reasons = hugepages_unit_findings(plan, state)
    found("hugepages_unit", unit_reasons)
    if unit_reasons or (hugepages and plan["hugepages"].get("method") == "runtime"):
        actions.add("hugepages")
    if reset_reasons(plan, topology_at_next_start(topology, plan), state["kubelet_state"]["cpu_manager"],
                     state["kubelet_state"]["memory_manager"], effective):
        actions.add("reset")
    elif config_change and not config["quiet"]:
        actions.add("restart")
    label_reasons, label_warnings = label_findings(plan, state, labels_via, node_labels, dra)
    found("labels", label_reasons)
    if label_reasons:
        actions.add("label")
    found("blocked", blocked)
    compliant = not reasons
    # Only the config file's mode and owner, and the labels, to fix: the node runs its plan, the kubelet would see
    # nothing new - fixed in place, without a drain or a restart (the rolling play's "fixed in place").
    in_place = (not compliant and not blocked and bool(actions) and actions <= {"rke2_config", "label"}
                and ("rke2_config" not in actions or config["quiet"]))
    if not compliant and not in_place:
        actions.update(("drain", "verify", "uncordon", "label"))
    if blocked:
        actions = set()
    warnings = report["warnings"] + (rewritten_warning(plan, state) if config["mode"] == "merge" and config_change else []) \
        + label_warnings
    managed = rancher.managed_by(state.get("rancher"), {rancher.RANCHER_MACHINE_LABEL: rancher_machine} if rancher_machine else None)
    warnings += ["Rancher is at work on the node: %s - a roll does not take it until Rancher has finished" % "; ".join(managed["at_work"])] \
        if managed["at_work"] else []
    if managed["managed_by"] == "rancher" and not state.get("rancher", {}).get("managed_by") == "rancher":
        warnings.append("the Node carries Rancher's label %s but the node shows no sign of Rancher (no 50-rancher.yaml beside %s, no "
                        "rancher-system-agent): its config is written in %s mode" % (rancher.RANCHER_MACHINE_LABEL,
                                                                                     state["rke2"]["files"][0]["path"], config["mode"]))
    return {"compliant": compliant, "runs_plan": compliant or in_place, "reasons": reasons, "findings": findings,
            "actions": [a for a in ACTIONS if a in actions], "blocked": blocked,
            "plan_fingerprint": plan["fingerprint"], "warnings": warnings, "config_mode": config["mode"],
            "managed_by": managed["managed_by"], "managed_by_evidence": rancher_signs(managed)}


# The facts check.yml sets on each host (numa_plan with ``check``), by name: the plays that follow read them.
CHECK_FACTS = ("rke2_numa_topology", "rke2_numa_compliance", "rke2_numa_managed_by", "rke2_numa_managed_by_evidence",
               "rke2_numa_pod_audit")


def _running_args(state):
    """The kubelet-arg entries RKE2 passes on the node today ([] when its files were not read or cannot be parsed)."""
    try:
        return state_kubelet_args(state) if state and state.get("rke2") else []
    except (ConfigError, ValueError, TypeError, AttributeError):
        return []


def finish_dra(audit, plan, state):
    """A node's pod audit with its DRA part judged (when the check read DRA: dra_devices there): ``dra`` - what it
    serves by DRA, matched with its sysfs (dra.inventory: gpu_path, counts, devices, findings); ``dra_unaligned`` - the
    pods holding a DRA GPU whose CPUs its kubelet pins (the checkpoint's policy, else the plan's: static), with where
    both landed (prove.finish_dra_audit); ``dra_claims`` as read."""
    if not isinstance(audit, dict) or "dra_devices" not in audit:
        return audit
    out = dict(audit)
    topology = state.get("topology") or {}
    cpu_state = (state.get("kubelet_state") or {}).get("cpu_manager") or {}
    policy = cpu_state.get("policy") or ((plan or {}).get("reset_inputs") or {}).get("cpu_manager_policy")
    out["dra"] = dra.inventory(out.pop("dra_devices"), topology.get("pci_devices"), out.pop("plugin_gpus", 0))
    conflict = dra_plan.cpu_driver_conflict(policy, out["dra"]["counts"][dra.CPU])
    if conflict:
        out["dra"]["findings"].append(conflict)
    out["dra_unaligned"] = finish_dra_audit(out.pop("dra_pods", []), policy == "static", cpu_state.get("entries") or {},
                                            topology if topology.get("numa_nodes") else None)
    out.setdefault("dra_claims", [])
    return out


def check_facts(plan, check):
    """check.yml's facts of one host (CHECK_FACTS) from its plan and ``check``: {state: node_state_info's result,
    config_mode, dropin_path, labels_via, node_labels: the Node's labels from the API (None when not read),
    rancher_machine: its rke.cattle.io/machine label (None when not read or not there), pod_audit: its entry of the
    pod audit ({} when the pods were not audited)}. A node whose root's files could not be read is not judged:
    compliance {} and managed_by unknown (the check names it "not checked")."""
    state = check["state"]
    # the pod audit as this node's kubelet judges it: pods with their own budget by its pod-level resource managers
    # (the minor's default, the feature gates RKE2 passes it today, the plan's)
    audit = finish_pod_audit(check.get("pod_audit") or {}, pod_level_resource_managers(plan, _running_args(state)))
    facts = {"rke2_numa_topology": state.get("topology"), "rke2_numa_pod_audit": finish_dra(audit, plan, state)}
    if unread_reason(state):
        facts.update(rke2_numa_compliance={}, rke2_numa_managed_by="unknown", rke2_numa_managed_by_evidence=[])
        return facts
    compliance = assess(plan, state, check.get("config_mode") or "auto", check.get("dropin_path"), check.get("labels_via") or "nfd",
                        check.get("node_labels"), check.get("rancher_machine"), check.get("kubelet_config") or "flags",
                        facts["rke2_numa_pod_audit"].get("dra") if isinstance(facts["rke2_numa_pod_audit"], dict) else None)
    facts.update(rke2_numa_compliance=compliance, rke2_numa_managed_by=compliance["managed_by"],
                 rke2_numa_managed_by_evidence=compliance["managed_by_evidence"])
    return facts
