# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hugepages unit as found on a node (the role's own template is rendered by test_compliance)."""
from __future__ import annotations

from ansible_collections.maitred.rke2_numa.plugins.module_utils.hugepages_unit import SCRIPT, UNIT, WANTS, parse_script, read_unit


def test_a_script_without_the_templates_lines_is_not_ours():
    assert parse_script("#!/bin/sh\necho 8 > /sys/devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages\n") is None
    assert parse_script("") is None and parse_script(None) is None
    assert parse_script("size_kb=2048\nfor want in 0:512 1:0 ; do\n") == {"size_kb": 2048, "per_node": {"0": 512, "1": 0}}


def test_read_unit_reports_each_part(tmp_path):
    assert read_unit(str(tmp_path)) == {"unit": False, "enabled": False, "script": False, "sets": None, "error": None}
    for path, text in ((UNIT, "[Unit]\n"), (SCRIPT, "size_kb=1048576\nfor want in 0:8 ; do\n")):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    (tmp_path / WANTS).parent.mkdir(parents=True)
    (tmp_path / WANTS).symlink_to("/etc/systemd/system/rke2-numa-hugepages.service")  # dangling here: lexists
    assert read_unit(str(tmp_path)) == {"unit": True, "enabled": True, "script": True,
                                        "sets": {"size_kb": 1048576, "per_node": {"0": 8}}, "error": None}
