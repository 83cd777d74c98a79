# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# What the collection's modules share, written once: beside ansible.builtin.action_common_attributes,
# maitred.rke2_numa.shared.node (a module that runs on the node: its author and attributes) or .controller (an
# action that decides on the controller and never contacts the host), .author for the others, and the options more
# than one module takes.

from __future__ import annotations


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options: {}
"""

    NODE = r"""
author:
  - maitred.rke2_numa contributors (@maitred)
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
"""

    CONTROLLER = r"""
author:
  - maitred.rke2_numa contributors (@maitred)
attributes:
  check_mode:
    support: full
    details: It decides on the controller and changes nothing; check mode decides the same.
  diff_mode:
    support: none
  platform:
    platforms: all
"""

    AUTHOR = r"""
author:
  - maitred.rke2_numa contributors (@maitred)
options: {}
"""

    KUBELET_DIR = r"""
options:
  kubelet_dir:
    description: The kubelet's root directory.
    type: path
    default: /var/lib/kubelet
"""
