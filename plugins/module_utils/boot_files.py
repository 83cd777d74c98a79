# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a boot method declares (BootMethod), where its files are (paths under a root), how they are read, and the
error reading or rewriting them raises.

Apart from the rewriters (boot_grub, boot_grubby, boot_transactional) so that the node read (node_state_info:
boot_config.read_boot_inputs) imports, and so compiles on every host, only what it reads - the module's own code is
compiled again on each call (Ansible ships it as source).
"""

from __future__ import annotations

import os
from collections import namedtuple

# One boot method (one module_utils/boot_method_<name>.py each, registered in boot_plan.REGISTRY). No field has a
# default: a declaration that leaves one out does not import.
#   name: its choice in the common role's rke2_numa_boot_method (boot_methods.METHODS)
#   ids: the os-release IDs that name it (its ID, or an ID_LIKE entry when detect takes those)
#   distros: what the unsupported-distribution error says it serves (starts with ids)
#   detect(os_release, transactional): how strongly the system claims it (boot_plan.detect takes the strongest; 0: not
#     at all) - 3 by ID (boot_distro.id_rank), 2 by the system's kind, at most 1 by ID_LIKE
#   files: the paths under root it reads (a folder: the files in it)
#   read_inputs(root, read_tool): what it plans from, a JSON-able dict (read_tool(program, args, what): the program's
#     output, or None when it is missing and not required - boot_config.tool_reader)
#   plan(inputs, wanted, managed): the change - files (path, before, after, mode), commands, locations, after, history;
#     it imports its rewriters inside, so that the node read compiles none
#   verify(root, read_tool, change, wanted, managed): after the commands ran, what still differs (a message) or None;
#     None when the commands' exit status is the whole check
#   staged: its commands stage the change for the next boot (a staged change always needs a reboot)
BootMethod = namedtuple("BootMethod", "name ids distros detect files read_inputs plan verify staged")


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


def path_under(root, rel):
    return os.path.join(root, rel)


def read_text(path):
    """File text, or None when it does not exist."""
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None
