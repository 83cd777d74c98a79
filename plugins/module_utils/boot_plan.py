# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The change each boot method would make to what boot_config.read_boot_inputs read (pure: the boot_params module
on the host, the compliance decision on the controller). The method's module does the thinking: boot_grub,
boot_grubby or boot_transactional.
"""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_grub import plan_grub_d
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_grubby import plan_grubby
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_transactional import plan_transactional


def _grub_d(inputs, wanted, managed):
    return plan_grub_d(inputs["default_grub"], [tuple(o) for o in inputs["others"]], inputs["dropin"], wanted, managed)


def _grubby(inputs, wanted, managed):
    return dict(plan_grubby(inputs["entries"], inputs["kernel_cmdline"], wanted, managed, inputs["record"]), record=inputs["record"])


def _transactional(inputs, wanted, managed):
    return dict(plan_transactional(inputs["default_grub"], inputs["kernel_cmdline"], wanted, managed, inputs["record"]),
                record=inputs["record"])


# Each boot method (boot_methods.METHODS, the spec's choices) and its planner; test_boot_distro checks none is missing.
PLANNERS = {"grub_d": _grub_d, "grubby": _grubby, "transactional_update": _transactional}


def plan_from_inputs(inputs, wanted, managed):
    """The change (plan_grub_d, plan_grubby or plan_transactional) that makes the configuration in ``inputs`` hold ``wanted``."""
    return PLANNERS[inputs["method"]](inputs, wanted, managed)
