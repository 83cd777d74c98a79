# -*- coding: utf-8 -*-
"""boot_transactional: /etc/default/grub or /etc/kernel/cmdline, then the staging command."""

from __future__ import annotations

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_transactional import plan_transactional
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import CmdlineError
from ansible_collections.maitred.rke2_numa.tests.fixtures.kernel_args_cases import M, SLE_MICRO_GRUB, w


def test_plan_transactional_grub_and_bls():
    plan = plan_transactional(SLE_MICRO_GRUB, None, w("isolcpus=2-7"), M)
    assert plan["commands"] == [["transactional-update", "--continue", "grub.cfg"]]
    assert [f["path"] for f in plan["files"]] == ["etc/default/grub"]
    assert plan["locations"] == [["isolcpus=2-3"]]
    assert plan_transactional(plan["files"][0]["after"], None, w("isolcpus=2-7"), M)["commands"] == []
    bls = plan_transactional(SLE_MICRO_GRUB, "root=UUID=1 ro isolcpus=1\n", w("isolcpus=2-7"), M)
    assert bls["commands"] == [["sdbootutil", "update-all-entries"]]
    assert [f["path"] for f in bls["files"]] == ["etc/kernel/cmdline"]
    with pytest.raises(CmdlineError, match="neither etc/default/grub nor etc/kernel/cmdline"):
        plan_transactional(None, None, [], M)
