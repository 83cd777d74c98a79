# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The transactional_update boot method (SLE Micro, openSUSE MicroOS, any transactional SUSE system):
/etc/kernel/cmdline (BLS) or /etc/default/grub, staged in a new snapshot. Its planner:
boot_transactional.plan_transactional."""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_distro import id_rank
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import (
    DEFAULT_GRUB,
    KERNEL_CMDLINE,
    RECORD,
    BootMethod,
    path_under,
    read_text,
)

IDS = ("sle-micro", "sl-micro", "opensuse-microos", "opensuse-leap-micro")
SUSE_FAMILY = ("suse", "sles", "opensuse")


def detect(os_release, transactional):
    """By ID; any transactional SUSE system (ID or ID_LIKE of the family); never by ID_LIKE alone (a SUSE system
    that is not transactional has no transactional-update)."""
    ids = [os_release.get("ID", "")] + os_release.get("ID_LIKE", "").split()
    suse = transactional and any(i == f or i.startswith(f + "-") for i in ids for f in SUSE_FAMILY)
    return max(id_rank(os_release, IDS, like=False), 2 if suse else 0)


def read_inputs(root, dummy):
    return {"record": read_text(path_under(root, RECORD)), "kernel_cmdline": read_text(path_under(root, KERNEL_CMDLINE)),
            "default_grub": read_text(path_under(root, DEFAULT_GRUB))}


def plan(inputs, wanted, managed):
    from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_transactional import plan_transactional  # pylint: disable=import-outside-toplevel
    return dict(plan_transactional(inputs["default_grub"], inputs["kernel_cmdline"], wanted, managed, inputs["record"]),
                record=inputs["record"])


METHOD = BootMethod(name="transactional_update", ids=IDS, distros=", ".join(IDS) + " and any transactional SUSE system",
                    detect=detect, files=(RECORD, KERNEL_CMDLINE, DEFAULT_GRUB), read_inputs=read_inputs, plan=plan,
                    verify=None, staged=True)
