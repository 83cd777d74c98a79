# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The transactional_update method (SLE Micro, openSUSE MicroOS, transactional SUSE).

Edits /etc/kernel/cmdline (BLS) or /etc/default/grub and stages the change in a
new snapshot. Pure functions: boot_params writes the files and runs the command.
"""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import DEFAULT_GRUB, KERNEL_CMDLINE
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_grub import (
    default_grub_tokens,
    rewrite_default_grub,
    rewrite_kernel_cmdline,
)
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_record import plan_record
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import (
    CmdlineError,
    checked,
    owned_tokens,
    split_cmdline,
)


def plan_transactional(default_grub, kernel_cmdline, wanted, managed, record=None):
    """SLE Micro / MicroOS: edit the boot configuration in /etc, then stage it.

    With /etc/kernel/cmdline (BLS: systemd-boot or grub2-bls through sdbootutil)
    that file holds the args and ``sdbootutil update-all-entries`` applies it.
    Otherwise GRUB2: the managed args go into GRUB_CMDLINE_LINUX_DEFAULT of
    /etc/default/grub (as transactional-update itself and SUSE's Edge Image
    Builder do) and ``transactional-update --continue grub.cfg`` regenerates
    grub.cfg in a new snapshot that extends a pending one (--continue), active
    after the next reboot. ``record``: the text of RECORD (plan_record).
    """
    wanted = checked(wanted, managed)
    own, history, record_change = plan_record(record, wanted, managed)
    records = [record_change] if record_change else []
    if kernel_cmdline is not None:
        new = rewrite_kernel_cmdline(kernel_cmdline, wanted, managed, own)
        files = [{"path": KERNEL_CMDLINE, "before": kernel_cmdline, "after": new, "mode": None}] if new != kernel_cmdline else []
        return {
            "files": files + records,
            "commands": [["sdbootutil", "update-all-entries"]] if files else [],
            "locations": [owned_tokens(split_cmdline(kernel_cmdline), wanted, managed, own)],
            "after": [split_cmdline(new)],
            "history": history,
        }
    if default_grub is None:
        raise CmdlineError("transactional_update: neither %s nor %s exists" % (DEFAULT_GRUB, KERNEL_CMDLINE))
    new = rewrite_default_grub(default_grub, wanted, managed, own=own)
    files = [{"path": DEFAULT_GRUB, "before": default_grub, "after": new, "mode": None}] if new != default_grub else []
    return {
        "files": files + records,
        "commands": [["transactional-update", "--continue", "grub.cfg"]] if files else [],
        "locations": [owned_tokens(default_grub_tokens(default_grub), wanted, managed, own)],
        "after": [default_grub_tokens(new)],
        "history": history,
    }
