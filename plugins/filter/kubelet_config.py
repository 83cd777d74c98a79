# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan's kubelet settings as a KubeletConfiguration drop-in (logic in plugin_utils/kubelet_config.py)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_config import KubeletConfigError, kubelet_config_text


def rke2_numa_kubelet_config(plan):
    """The KubeletConfiguration drop-in's text of a plan (its managed kubelet flags)."""
    if not isinstance(plan, dict) or not isinstance(plan.get("kubelet_args"), list):
        raise AnsibleFilterError("kubelet_config: not a plan of maitred.rke2_numa.numa_plan (no kubelet_args)")
    try:
        return kubelet_config_text([str(a) for a in plan["kubelet_args"]], [str(f) for f in plan.get("managed_kubelet_flags") or []] or None)
    except KubeletConfigError as e:
        raise AnsibleFilterError("kubelet_config: %s" % e)


class FilterModule(object):
    """maitred.rke2_numa kubelet configuration filters."""

    def filters(self):
        return {"kubelet_config": rke2_numa_kubelet_config}
