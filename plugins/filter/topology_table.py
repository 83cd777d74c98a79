# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render a topology (from topology_info) as a readable NUMA table."""

from __future__ import annotations

DOCUMENTATION = r"""
name: topology_table
short_description: Render a topology as a readable NUMA table
version_added: 0.1.0
description:
  - Turns the C(topology) returned by M(maitred.rke2_numa.topology_info) into
    a plain-text table, one line per NUMA node, with its CPUs, physical cores,
    memory, hugepages, GPUs and NICs, followed by the GPUs and NICs themselves
    and any warnings.
author:
  - maitred.rke2_numa contributors
positional: _input
options:
  _input:
    description: The topology dict.
    type: dict
    required: true
  warnings:
    description:
      - Whether to end with the topology's warnings. M(maitred.rke2_numa.topology_info)
        already prints them as task warnings, so a play that shows the table right
        after it passes V(false) to print each warning once.
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Print the NUMA table
  ansible.builtin.debug:
    msg: "{{ __topo.topology | maitred.rke2_numa.topology_table }}"

- name: Print it as a list of lines (readable with the default callback), warnings left to the module
  ansible.builtin.debug:
    msg: "{{ (__topo.topology | maitred.rke2_numa.topology_table(warnings=false)).split('\\n') }}"
"""

RETURN = r"""
_value:
  description: The table, lines joined by newlines.
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import topology_table as table


def topology_table(topology, warnings=True):
    """The table (plugin_utils/topology_table.py); a bad input is a filter error."""
    try:
        return table.topology_table(topology, warnings)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from exc


class FilterModule(object):
    """maitred.rke2_numa topology filters."""

    def filters(self):
        return {"topology_table": topology_table}
