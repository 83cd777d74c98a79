# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filters of what a run gives AWX (plugins/plugin_utils/artifacts.py): fleet_stats, fleet_stats_merge."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.artifacts import ArtifactError, check_summary, merge, stats, with_roll


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


class FilterModule(object):
    """maitred.rke2_numa artifacts filters."""

    def filters(self):
        return {"fleet_stats": fleet_stats, "fleet_stats_merge": fleet_stats_merge}
