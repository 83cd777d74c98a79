# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan the DRA way as plan.yml writes it (logic in plugin_utils/dra_plan.py)."""

from __future__ import annotations

import json

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.dra_plan import claim_templates_text


def rke2_numa_dra_claim_templates(hosts, hostvars):
    """dra.yaml's text for the planned ``hosts`` (their rke2_numa_plan in ``hostvars``; a host without one is left out)."""
    # plain types: Ansible hands filters its own (tagged) strings, which YAML cannot represent
    plans = json.loads(json.dumps(dict((str(h), hostvars[h]["rke2_numa_plan"]) for h in hosts
                                       if isinstance((hostvars[h] if h in hostvars else {}).get("rke2_numa_plan"), dict))))
    return claim_templates_text(plans)


class FilterModule(object):
    """maitred.rke2_numa DRA filters."""

    def filters(self):
        return {"dra_claim_templates": rke2_numa_dra_claim_templates}
