# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The output-folder filter (plugins/plugin_utils/paths.py): output_dir."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.paths import output_dir


def rke2_numa_output_dir(path):
    """The folder an output variable (rke2_numa_report_dir, rke2_numa_plan_dir) names, resolved on the controller."""
    try:
        return output_dir(None if path is None else str(path))
    except ValueError as e:
        raise AnsibleFilterError("output_dir: %s" % e)


class FilterModule(object):
    """maitred.rke2_numa output-folder filter."""

    def filters(self):
        return {"output_dir": rke2_numa_output_dir}
