# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Our RKE2 drop-in: how it starts, so that a file of ours is known as ours on the host and on the controller.

RKE2 reads config.yaml, then config.yaml.d/*.yaml and *.yml in name order (k3s pkg/configfilearg). Our drop-in
starts with DROPIN_HEADER: a file that does is one this collection wrote (under any name - an earlier default was
50-rke2-numa.yaml), which it may replace or remove; any other file is never removed.
"""

from __future__ import annotations

DROPIN_HEADER = "# Managed by maitred.rke2_numa: kubelet args for NUMA-aligned GPU pods. Do not edit.\n"


def is_ours(text):
    """Whether a drop-in's text is one this collection wrote."""
    return bool(text) and text.startswith(DROPIN_HEADER)
