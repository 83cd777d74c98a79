# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filters of what a run gives AWX (plugins/plugin_utils/artifacts.py): fleet_stats, fleet_stats_merge, and the fleet's
report drawn from them (plugins/plugin_utils/report_runs.py): fleet_stats_report."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.artifacts import ArtifactError, check_summary, merge, stats, with_roll
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.report import ReportError
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.report_runs import RunsError, artifact_report


def fleet_stats(fleet, playbook, run, report=None, fleet_hosts=None, outcome=None, roll_id=None, progress=None):
    """set_stats data of a run: check_fleet's ``fleet`` summed up (with the roll's ``outcome`` when given) under
    rke2_numa_fleet and rke2_numa_fleet_<run>."""
    try:
        summary = check_summary(fleet, playbook, run, report or None, fleet_hosts or None)
        if outcome:
            summary = with_roll(summary, outcome, roll_id, progress or None)
        return stats(summary, run)
    except (ArtifactError, KeyError, TypeError, ValueError) as e:
        raise AnsibleFilterError("fleet_stats: %s" % e)


def fleet_stats_merge(variables, key="rke2_numa_fleet"):
    """One summary of the runs whose artifacts ``variables`` holds (<key>_<run>: an AWX workflow node's extra vars);
    None when none."""
    try:
        return merge(dict(variables or {}), str(key))
    except (ArtifactError, TypeError, ValueError) as e:
        raise AnsibleFilterError("fleet_stats_merge: %s" % e)


def fleet_stats_report(summary, order=None, inventory="inventory.yml", kubeconfig=""):
    """The fleet's report from the merged artifacts ``summary`` (fleet_stats_merge's), no report folder:
    {fleet, line, files: {index.html, summary.md, fleet.json, run.json}} (plugin_utils/report_runs.py artifact_report)."""
    if not isinstance(summary, dict):
        raise AnsibleFilterError("fleet_stats_report: a summary of the runs' artifacts (fleet_stats_merge's), got %r" % (summary,))
    try:
        return artifact_report(summary, list(order or []), str(inventory or "inventory.yml"), str(kubeconfig or ""))
    except (ArtifactError, ReportError, RunsError, KeyError, TypeError, ValueError, IndexError) as e:
        raise AnsibleFilterError("fleet_stats_report: %s" % e)


class FilterModule(object):
    """maitred.rke2_numa artifacts filters."""

    def filters(self):
        return {"fleet_stats": fleet_stats, "fleet_stats_merge": fleet_stats_merge, "fleet_stats_report": fleet_stats_report}
