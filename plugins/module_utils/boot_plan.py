# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The boot methods' registry: each choice of the common role's rke2_numa_boot_method (boot_methods.METHODS) and its
declaration (boot_files.BootMethod, one module_utils/boot_method_<name>.py each) - how a system is detected as its
own, the files it reads, its planner, what its commands leave to check. The modules (boot_params, node_state_info)
and the controller (compliance) dispatch through it; test_boot_registry checks every choice has a complete one.

The list is explicit: Ansible ships the module_utils a module imports by name. A declaration imports its rewriters
inside plan, so the node read compiles none of them.
"""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.module_utils import (
    boot_method_grub_d,
    boot_method_grubby,
    boot_method_transactional_update,
)
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import CmdlineError

REGISTRY = dict((m.METHOD.name, m.METHOD) for m in (boot_method_grub_d, boot_method_grubby, boot_method_transactional_update))


def detect(os_release, transactional):
    """The method the system claims most strongly (each method's detect); raises CmdlineError naming an unsupported distro."""
    rank, name = max((m.detect(os_release, transactional), m.name) for m in REGISTRY.values())
    if rank:
        return name
    raise CmdlineError("unsupported distribution: os-release ID=%r (ID_LIKE=%r). Supported: %s. Set method to choose one "
                       "explicitly." % (os_release.get("ID", ""), os_release.get("ID_LIKE", ""),
                                        "; ".join("%s (%s)" % (m.distros, m.name) for m in REGISTRY.values())))


def plan_from_inputs(inputs, wanted, managed):
    """The change that makes the configuration in ``inputs`` (boot_config.read_boot_inputs) hold ``wanted``."""
    return REGISTRY[inputs["method"]].plan(inputs, wanted, managed)
