# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# The boot method option of boot_params (.boot_params) and node_state_info (.node_state_info), as the common
# role's rke2_numa_boot_method declares it - generated from meta/argument_specs.yml by scripts/gen_specs.py (make specs):
# do not edit here.

from __future__ import annotations


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options: {}
"""

    BOOT_PARAMS = r"""
options:
  method:
    description:
      - How to change the boot configuration.
      - V(auto) chooses from C(ID) and C(ID_LIKE) in C(<root>/etc/os-release) - V(grub_d) for debian and ubuntu, V(grubby) for rhel, centos, rocky, almalinux
        and fedora, V(transactional_update) for sle-micro, sl-micro, opensuse-microos, opensuse-leap-micro and any SUSE system whose C(/) is a read-only
        btrfs with C(transactional-update) installed. Any other distribution fails, naming it.
    type: str
    choices: [auto, grub_d, grubby, transactional_update]
    default: auto
"""

    NODE_STATE_INFO = r"""
options:
  boot_method:
    description:
      - How to change the boot configuration.
      - V(auto) chooses from C(ID) and C(ID_LIKE) in C(<root>/etc/os-release) - V(grub_d) for debian and ubuntu, V(grubby) for rhel, centos, rocky, almalinux
        and fedora, V(transactional_update) for sle-micro, sl-micro, opensuse-microos, opensuse-leap-micro and any SUSE system whose C(/) is a read-only
        btrfs with C(transactional-update) installed. Any other distribution fails, naming it.
    type: str
    choices: [auto, grub_d, grubby, transactional_update]
    default: auto
"""
