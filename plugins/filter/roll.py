# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rolling play's maintenance-window guard and the markers earlier rolls left (logic in plugin_utils)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.maintainers import maintainers_at_work
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.roll_markers import node_markers
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.window import WindowError, window_check


def maintenance_window(window_end, now, node_minutes, done_seconds=()):
    """{start, estimate_seconds, left_seconds, reason}: may a node start at ``now`` (epoch seconds)?"""
    try:
        return window_check(window_end, float(now), float(node_minutes), [float(s) for s in done_seconds or ()])
    except WindowError as e:
        raise AnsibleFilterError(str(e))


def maintainers(node, daemonsets, suc_pods, kured_daemonset, foreign_annotations, now):
    """Why another maintainer keeps the roll off ``node`` now (plugin_utils/maintainers.py); [] when none does."""
    return maintainers_at_work(node, daemonsets, suc_pods, kured_daemonset, foreign_annotations or [], float(now))


class FilterModule(object):
    """maitred.rke2_numa rolling filters."""

    def filters(self):
        return {"maintenance_window": maintenance_window, "node_markers": node_markers, "maintainers_at_work": maintainers}
