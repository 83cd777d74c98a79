# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The boot methods a node's kernel arguments can be written with (auto detects one of them): the choices of
the common role's rke2_numa_boot_method, generated from meta/argument_specs.yml by scripts/gen_specs.py (make specs) - do not edit here."""

from __future__ import annotations

METHODS = ('grub_d', 'grubby', 'transactional_update')
