# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan the DRA way as plan.yml writes it (logic in plugin_utils/dra_plan.py)."""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.dra_plan import claim_templates_text
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import plans_of


def rke2_numa_dra_claim_templates(hosts, hostvars):
    """dra.yaml's text for the planned ``hosts`` (their rke2_numa_plan in ``hostvars``; a host without one is left out)."""
    return claim_templates_text(plans_of(hosts, hostvars))


class FilterModule(object):
    """maitred.rke2_numa DRA filters."""

    def filters(self):
        return {"dra_claim_templates": rke2_numa_dra_claim_templates}
