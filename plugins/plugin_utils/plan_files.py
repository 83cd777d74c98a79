# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What plan.yml leaves on the controller, made for the whole run at once (one report_files task, not a copy and a
template per host: at 100 hosts those cost ~1.1 s a host).

``plan_files``: rke2_numa_plan_dir's files - per planned host <host>.json (the plan), <host>.config.yaml (the RKE2
config snippet) and <host>.kubelet.conf (the KubeletConfiguration drop-in), and once rancher.yaml and dra.yaml.
``plan_fleet``: the run's fleet.json (rke2_numa_report_dir) - the hosts planned, those not planned and why, each plan's
fingerprint and the kubelet minor each was made for: what report.yml merges across slices and what the run's artifacts
(rke2_numa_plans, plugin_utils/artifacts.py) count.
"""

from __future__ import annotations

import json

import yaml

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.dra_plan import claim_templates_text
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_config import kubelet_config_text
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import plans_of
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rancher import rancher_selector_config, rancher_selector_text
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.report import kubernetes_minors
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import dropin_config

# The config snippet's first lines: what the plan role's template wrote ({{ ansible_managed | comment }} with
# ansible-core's default, whose setting is deprecated).
MANAGED_HEADER = "#\n# Ansible managed\n#\n"


def json_text(data):
    """As Ansible's to_nice_json(indent=2) writes it, and a newline: every JSON file of a run's report and plans."""
    return json.dumps(data, indent=2, sort_keys=True, separators=(",", ": ")) + "\n"


def _yaml(data):
    return yaml.safe_dump(data, indent=2, default_flow_style=False, width=1000, allow_unicode=True)


def config_snippet(host, plan):
    """<host>.config.yaml: the lines of /etc/rancher/rke2/config.yaml the plan manages (kubelet-arg, node-label,
    node-taint), under a header naming the host, the plan's fingerprint and its kernel arguments."""
    text = MANAGED_HEADER + "# Planned for %s (plan fingerprint %s).\n# Kernel command line additions: %s\n" % (
        host, plan["fingerprint"], " ".join(plan["kernel_args"]))
    text += _yaml({"kubelet-arg": plan["kubelet_args"]})
    for key, entry in (("node_labels", "node-label"), ("node_taints", "node-taint")):
        if plan.get(key):
            text += _yaml({entry: plan[key]})
    return text


def host_files(host, plan):
    """{file name: text} of one planned host."""
    return {"%s.json" % host: json_text(plan), "%s.config.yaml" % host: config_snippet(host, plan),
            "%s.kubelet.conf" % host: kubelet_config_text([str(a) for a in plan["kubelet_args"]],
                                                          [str(f) for f in plan.get("managed_kubelet_flags") or []] or None)}


def plan_files(hosts, hostvars, machine_label, cluster, dropin_path):
    """rke2_numa_plan_dir's files for the run's ``hosts`` (those with an rke2_numa_plan in ``hostvars`` the planner did
    not refuse - an extra-var plan made for another host stays unwritten): {file name: text}; none when no host was
    planned (no rancher.yaml or dra.yaml of nothing)."""
    plans = dict((h, p) for h, p in plans_of(hosts, hostvars).items() if not refusal(hostvars[h]))
    if not plans:
        return {}
    files = {}
    for host, plan in plans.items():
        files.update(host_files(host, plan))
    files["rancher.yaml"] = rancher_selector_text(rancher_selector_config(
        plans, str(machine_label), str(cluster or "CLUSTER-NAME"), str(dropin_path),
        lambda plan: dropin_config(plan["kubelet_args"], plan.get("node_labels") or [], plan.get("node_taints") or [])))
    files["dra.yaml"] = claim_templates_text(plans)
    return files


def refusal(variables):
    """Why the planner refused this host ('' when it did not): numa_plan's result with refused_fails false."""
    result = variables.get("__rke2_numa_plan_result")
    return str(result.get("refused") or "") if isinstance(result, dict) else ""


def plan_fleet(hosts, hostvars):
    """plan.yml's fleet.json for the run's ``hosts``."""
    hosts = [str(h) for h in hosts]
    plans = plans_of(hosts, hostvars)
    refused = dict((h, refusal(hostvars[h])) for h in hosts if h in hostvars and refusal(hostvars[h]))
    planned = [h for h in hosts if h in plans and h not in refused]
    entries = [{"host": h, "plan": plans[h]} for h in planned]
    return {"hosts": len(hosts), "planned": planned, "not_planned": [h for h in hosts if h not in planned], "refused": refused,
            "fingerprints": dict((h, str(plans[h].get("fingerprint") or "")) for h in planned),
            "kubernetes": kubernetes_minors(entries)}


def plan_fleet_line(fleet):
    """plan.yml's (and report.yml's, over plan runs) summary line; a refused host's reason is its own line's."""
    return "%d of %d planned; not planned: %s" % (len(fleet["planned"]), fleet["hosts"], ", ".join(fleet["not_planned"]) or "none")
