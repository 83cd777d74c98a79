# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The grubby boot method (RHEL family): every kernel entry from grubby --info=ALL, /etc/kernel/cmdline and the
record; grubby --update-kernel, checked by reading the entries again. Its planner: boot_grubby.plan_grubby."""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_distro import id_rank
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import (
    KERNEL_CMDLINE,
    RECORD,
    BootMethod,
    path_under,
    read_text,
)

IDS = ("rhel", "centos", "rocky", "almalinux", "fedora")


def detect(os_release, dummy):
    return id_rank(os_release, IDS)


def entries(read_tool):
    """The kernel entries grubby reports ([] when grubby is missing and not required)."""
    out = read_tool("grubby", ["--info=ALL"], "the kernel entries") if read_tool else None
    if out is None:
        return []
    from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_grubby import parse_grubby_info  # pylint: disable=import-outside-toplevel
    return parse_grubby_info(out)


def read_inputs(root, read_tool):
    return {"record": read_text(path_under(root, RECORD)), "kernel_cmdline": read_text(path_under(root, KERNEL_CMDLINE)),
            "entries": entries(read_tool)}


def plan(inputs, wanted, managed):
    from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_grubby import plan_grubby  # pylint: disable=import-outside-toplevel
    return dict(plan_grubby(inputs["entries"], inputs["kernel_cmdline"], wanted, managed, inputs["record"]), record=inputs["record"])


def verify(dummy, read_tool, change, wanted, managed):
    """After grubby ran: the entries read again must need no grubby command."""
    from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_grubby import plan_grubby  # pylint: disable=import-outside-toplevel
    left = plan_grubby(entries(read_tool), None, wanted, managed, change["record"])["commands"]
    return "grubby ran but the kernel entries still differ; grubby would still need: %s" % " ".join(left[0]) if left else None


METHOD = BootMethod(name="grubby", ids=IDS, distros=", ".join(IDS), detect=detect, files=(RECORD, KERNEL_CMDLINE),
                    read_inputs=read_inputs, plan=plan, verify=verify, staged=False)
