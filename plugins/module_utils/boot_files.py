# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where each boot method's files are (paths under a root), and the error reading or rewriting them raises.

Apart from the rewriters (boot_grub, boot_grubby, boot_transactional) so that the node read (node_state_info:
boot_config.read_boot_inputs) imports, and so compiles on every host, only what it reads - the module's own code is
compiled again on each call (Ansible ships it as source).
"""

from __future__ import annotations


class CmdlineError(ValueError):
    """Invalid input, or a boot configuration this module cannot rewrite safely."""


# GRUB's files (the grub_d method; transactional-update rewrites /etc/default/grub in place).
DEFAULT_GRUB = "etc/default/grub"
GRUB_D = "etc/default/grub.d"
DROPIN_NAME = "99-rke2-numa.cfg"
DROPIN = GRUB_D + "/" + DROPIN_NAME
# The kernel command line file of BLS systems (grubby, transactional-update on BLS).
KERNEL_CMDLINE = "etc/kernel/cmdline"
# What boot_params wrote into a boot configuration it edits in place (grubby,
# transactional-update): the hugepage args, and every hugepage size written so far.
RECORD = "etc/rke2-numa/boot_params.state"
