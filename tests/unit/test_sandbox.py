# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""make sandbox's pieces that need no container: the README's steps as it parses them, and its inventory (the README's
own, with only variables the collection declares)."""
from __future__ import annotations

import os
import sys

import yaml

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import specs

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
import sandbox  # noqa: E402  pylint: disable=wrong-import-position


def test_the_readme_steps_are_its_command_block_with_their_line_numbers(tmp_path):
    steps = sandbox.readme_steps()
    with open(os.path.join(REPO, "README.md")) as f:
        lines = f.read().splitlines()
    assert len(steps) >= 6
    for number, command in steps:
        assert command.startswith("ansible-playbook -i inventory.yml maitred.rke2_numa."), command
        assert lines[number - 1].startswith(command.split(" \\")[0][:60]), (number, command)
        assert "\\" not in command and "#" not in command
    readme = tmp_path / "README.md"
    readme.write_text("x\n## Plan, access, check, roll, prove\n\n```sh\n# one\nansible-playbook a \\\n  -e b=1\n\nansible-playbook c\n```\n")
    assert sandbox.readme_steps(str(readme)) == [(6, "ansible-playbook a -e b=1"), (9, "ansible-playbook c")]


def test_the_sandbox_inventory_is_the_readme_s_with_declared_variables_only():
    inventory = yaml.safe_load(sandbox.inventory(["gpu01", "gpu02"]))
    top = inventory["all"]
    assert top["vars"]["rke2_numa_server_group"] == "servers"
    assert list(top["children"]["servers"]["hosts"]) == ["server1"]
    assert list(top["children"]["gpu_workers"]["hosts"]) == ["gpu01", "gpu02"]
    ours = [n for n in top["vars"] if n.startswith(specs.PREFIX)]
    assert ours and set(ours) <= set(specs.declared()), "make sandbox's own runs would be refused (unknown variables)"
    assert top["vars"]["rke2_numa_boot_time_command"] == "cat /run/rke2-numa-molecule-boot-id"
    assert top["vars"]["rke2_numa_hugepages_per_node"] == 2
