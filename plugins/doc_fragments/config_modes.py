# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# rke2_config's mode and kubelet_config options: type, choices and default as the common role's
# rke2_numa_config_mode and rke2_numa_kubelet_config declare them - generated from meta/argument_specs.yml by scripts/gen_specs.py (make specs):
# do not edit here (the module documents each choice).

from __future__ import annotations


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  mode:
    type: str
    choices: [auto, merge, dropin]
    default: auto
  kubelet_config:
    type: str
    choices: [flags, file]
    default: flags
"""
