# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""facts_view over Ansible's own HostVars (an inventory, a VariableManager with each host's facts as an action sets
them): the same values hostvars gives, a host's facts as stored (not templated anew at every read), an inventory
template still rendered, a plain mapping given as it is."""

from __future__ import annotations

import time

from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.vars.hostvars import HostVars
from ansible.vars.manager import VariableManager

from ansible_collections.maitred.rke2_numa.plugins.filter.fleet_report import fleet_report, fleet_summary
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.hostvars_view import facts_view


def hostvars_of(tmp_path, hosts, facts):
    inventory = tmp_path / "inventory.yml"
    inventory.write_text("gpu:\n  vars:\n    rke2_numa_node_name: '{{ inventory_hostname }}-node'\n  hosts:\n"
                         + "".join("    %s:\n" % host for host in hosts))
    loader = DataLoader()
    manager = InventoryManager(loader=loader, sources=[str(inventory)])
    variables = VariableManager(loader=loader, inventory=manager)
    for host in hosts:
        variables.set_nonpersistent_facts(host, facts(host))
    return HostVars(inventory=manager, variable_manager=variables, loader=loader)


def facts(host):
    nodes = [{"id": i, "cpus": "%d-%d" % (i * 64, i * 64 + 63), "distances": list(range(8))} for i in range(8)]
    return {"rke2_numa_topology": {"numa_nodes": nodes, "cpu_count": 512, "host": host},
            "rke2_numa_plan": {"kernel_args": ["isolcpus=managed_irq,1-63"], "warnings": []}}


def test_the_view_reads_what_hostvars_reads(tmp_path):
    hosts = ["gpu-%02d" % i for i in range(3)]
    hostvars = hostvars_of(tmp_path, hosts, facts)
    view = facts_view(hostvars)
    for host in hosts:
        assert host in view and view[host]["rke2_numa_topology"] == hostvars[host]["rke2_numa_topology"] == facts(host)["rke2_numa_topology"]
        assert view[host].get("rke2_numa_plan") == facts(host)["rke2_numa_plan"]
        # an inventory's template: rendered, as hostvars renders it
        assert view[host]["rke2_numa_node_name"] == hostvars[host]["rke2_numa_node_name"] == host + "-node"
        assert view[host].get("rke2_numa_compliance") is None and "rke2_numa_compliance" not in view[host]
    assert "gpu-99" not in view
    assert facts_view({"a": {}}) == {"a": {}} and facts_view(view) is view


def test_a_pass_over_the_fleet_does_not_template_every_host_s_facts(tmp_path):
    """The report's pass over 300 hosts: through the view, a fraction of what hostvars' templating of each host's
    topology and plan costs (five such passes made the check's reports 54 s at 1,000 hosts)."""
    hosts = ["gpu-%03d" % i for i in range(300)]
    hostvars = hostvars_of(tmp_path, hosts, facts)

    def one_pass(mapping):
        start = time.process_time()
        for host in hosts:
            mapping[host].get("rke2_numa_topology")
            mapping[host].get("rke2_numa_plan")
        return time.process_time() - start

    templated, viewed = one_pass(hostvars), one_pass(facts_view(hostvars))
    assert viewed < templated / 2, (viewed, templated)
    # and the filters give what they gave
    assert fleet_summary(hosts, hostvars) == fleet_summary(hosts, dict((h, dict(hostvars[h])) for h in hosts))
    assert fleet_report(hosts[:5], hostvars, output="markdown") == fleet_report(hosts[:5], dict((h, dict(hostvars[h])) for h in hosts[:5]),
                                                                                output="markdown")
