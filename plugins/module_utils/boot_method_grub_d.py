# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The grub_d boot method (Debian, Ubuntu): the collection's args in a drop-in that grub-mkconfig sources after
/etc/default/grub, then update-grub. Its planner: boot_grub.plan_grub_d."""

from __future__ import annotations

import os

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_distro import id_rank
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import (
    DEFAULT_GRUB,
    DROPIN,
    DROPIN_NAME,
    GRUB_D,
    BootMethod,
    path_under,
    read_text,
)

IDS = ("debian", "ubuntu")


def detect(os_release, dummy):
    return id_rank(os_release, IDS)


def read_inputs(root, dummy):
    """/etc/default/grub, the drop-in, and the other drop-ins (*.cfg, in the order grub-mkconfig sources them)."""
    grub_d = path_under(root, GRUB_D)
    names = sorted(n for n in os.listdir(grub_d) if n.endswith(".cfg") and n != DROPIN_NAME) if os.path.isdir(grub_d) else []
    return {"default_grub": read_text(path_under(root, DEFAULT_GRUB)), "dropin": read_text(path_under(root, DROPIN)),
            "others": [[n, read_text(os.path.join(grub_d, n)) or ""] for n in names]}


def plan(inputs, wanted, managed):
    from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_grub import plan_grub_d  # pylint: disable=import-outside-toplevel
    return plan_grub_d(inputs["default_grub"], [tuple(o) for o in inputs["others"]], inputs["dropin"], wanted, managed)


METHOD = BootMethod(name="grub_d", ids=IDS, distros=", ".join(IDS), detect=detect, files=(DEFAULT_GRUB, GRUB_D, DROPIN),
                    read_inputs=read_inputs, plan=plan, verify=None, staged=False)
