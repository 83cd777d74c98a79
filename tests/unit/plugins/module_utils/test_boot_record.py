# -*- coding: utf-8 -*-
"""boot_record: the record of the methods that edit the boot configuration in place."""

from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import RECORD
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_grub import rewrite_kernel_cmdline
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_record import (
    parse_record,
    plan_record,
    render_record,
)
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_transactional import plan_transactional
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import added_removed, ownership
from ansible_collections.maitred.rke2_numa.tests.fixtures.kernel_args_cases import FULL, HP, M, WANTED, w


def test_a_pool_written_before_is_removed_where_the_record_says_so():
    record = render_record(w(*HP), ["hugepagesz=1G", "default_hugepagesz=1G"])
    text = "root=UUID=1 ro hugepagesz=2M hugepages=1024 %s\n" % " ".join(WANTED)
    own = ownership(w(*FULL), M, previous=parse_record(record)["written"])
    assert rewrite_kernel_cmdline(text, w(*FULL), M, own) == "root=UUID=1 ro hugepagesz=2M hugepages=1024 %s\n" % " ".join(FULL)
    assert rewrite_kernel_cmdline(text, w(*FULL), M) == text.replace("\n", "").replace(" ".join(WANTED), " ".join(HP + FULL)) + "\n"
    bls = plan_transactional(None, text, w(*FULL), M, record)
    assert bls["files"][0]["after"] == "root=UUID=1 ro hugepagesz=2M hugepages=1024 %s\n" % " ".join(FULL)
    assert bls["files"][1] == {"path": RECORD, "before": record, "after": render_record([], ["hugepagesz=1G", "default_hugepagesz=1G"]),
                               "mode": 0o644}
    assert added_removed(bls["locations"], w(*FULL)) == ([], HP)


def test_the_record_is_written_only_when_there_is_something_to_record():
    assert plan_record(None, w(*FULL), M)[2] is None
    own, history, change = plan_record(None, w(*WANTED), M)
    assert change["path"] == "etc/rke2-numa/boot_params.state" and parse_record(change["after"]) == {
        "written": w(*HP), "history": [("hugepagesz", "1G"), ("default_hugepagesz", "1G")]}
    assert plan_record(change["after"], w(*WANTED), M)[2] is None
    assert parse_record("written=isolcpus=1 hugepagesz=2M\ngarbage\n")["written"] == [("hugepagesz", "2M")]
