# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What plan.yml writes on the controller, for the whole run at once (logic in plugin_utils/plan_files.py)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.hostvars_view import facts_view
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kube_names import dns1123_label_errors, qualified_name_errors
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.plan_files import plan_fleet, plan_fleet_line, plan_files


def rke2_numa_plan_files(hosts, hostvars, machine_label, cluster, dropin_path):
    """rke2_numa_plan_dir's files ({name: text}) for the run's planned ``hosts``."""
    errors = qualified_name_errors(machine_label) + (dns1123_label_errors(cluster) if cluster else [])
    if errors:
        raise AnsibleFilterError("plan_files: %s" % "; ".join(errors))
    return plan_files(list(hosts), facts_view(hostvars), machine_label, cluster, dropin_path)


def rke2_numa_plan_fleet(hosts, hostvars):
    """{fleet: plan.yml's fleet.json content, line: its summary line} for the run's ``hosts``."""
    fleet = plan_fleet(list(hosts), facts_view(hostvars))
    return {"fleet": fleet, "line": plan_fleet_line(fleet)}


class FilterModule(object):
    """maitred.rke2_numa plan output filters."""

    def filters(self):
        return {"plan_files": rke2_numa_plan_files, "plan_fleet": rke2_numa_plan_fleet}
