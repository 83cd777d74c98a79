# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for a run's hosts: the GPU workers by default, the servers only when asked (plugin_utils/playbook_inputs.py)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.playbook_inputs import (
    SERVERS_LEFT_OUT,
    fleet_hosts,
    kubelet_versions,
    labelled_servers,
    run_pattern,
    run_servers,
    server_nodes,
    unknown_variables,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import kube_credential, roll_pick
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.specs import PREFIX

# Ansible forks a worker for each host of each task from the process that templates the plays' hosts (this filter
# runs there, for every play of the collection's playbooks), and a worker has what that process imported. The actions
# that run once per host (node_check, numa_plan) plan and judge with these: imported here, once for the run, not in
# every worker (some 40 ms of a worker's CPU each, for a fleet's every host; tests/unit/plugins/filter/test_run_hosts.py).
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import compliance, node_inputs, planner  # noqa: F401 pylint: disable=unused-import


def rke2_numa_run_servers(groups, playbook, server_group, hosts, explicit, include=False, pattern="all", limit=None, kubeconfig=""):
    """{left_out, refused, group} of a run of ``playbook``: see plugin_utils.playbook_inputs.run_servers (``kubeconfig``:
    rke2_numa_kubeconfig; AWX's credential runs kubectl on the controller)."""
    try:
        result = run_servers(str(playbook), dict((str(k), [str(h) for h in v]) for k, v in (groups or {}).items()),
                             server_group, [str(h) for h in hosts or []], bool(explicit), include,
                             pattern=str(pattern or "all"), limit=None if limit in (None, "") else str(limit),
                             kubectl_here=kubeconfig == kube_credential.FROM_ENV)
    except ValueError as e:
        raise AnsibleFilterError("run_servers: %s" % e)
    return dict(result, group=SERVERS_LEFT_OUT)


def rke2_numa_run_pattern(groups, hosts_pattern=""):
    """The host pattern of a play that acts on nodes."""
    return run_pattern(groups or {}, hosts_pattern)


def rke2_numa_run_groups(groups, names):
    """Those of the groups ``names`` that hold a host, as a play's ``hosts`` list: a group a run did not fill (no node
    to fix, none blocked) is left out rather than named - Ansible warns of a pattern that matches no group."""
    return [str(name) for name in names or [] if (groups or {}).get(name)]


def _fact_names(hostvars, host):
    """The names a run set for ``host`` as facts or registered results (set_fact, register: an earlier play of the same
    run - a site playbook that imports check.yml, then rolling.yml - or a fact cache), not given by the operator.
    ansible-core keeps them apart from the inventory and -e in its VariableManager (ansible/vars/manager.py:
    set_nonpersistent_facts -> _nonpersistent_fact_cache, set_host_facts -> _fact_cache), which HostVars holds."""
    manager = getattr(hostvars, "_variable_manager", None)
    names = set()
    for cache in (getattr(manager, "_nonpersistent_fact_cache", None), getattr(manager, "_fact_cache", None)):
        if cache is None:
            continue
        try:
            names.update(cache.get(host) or {})
        except (KeyError, TypeError):  # a fact cache plugin without this host
            continue
    return names


def rke2_numa_unknown_variables(hostvars, hosts, policy="refuse"):
    """{refused, warnings}: the rke2_numa_ variables set for ``hosts`` (inventory, group/host vars, -e) that the
    collection does not declare; see plugin_utils.playbook_inputs.unknown_variables."""
    names_by_host = {}
    for host in hosts or []:
        host = str(host)
        if host not in hostvars:
            continue
        facts = _fact_names(hostvars, host)
        names_by_host[host] = [name for name in hostvars[host] if str(name).startswith(PREFIX) and name not in facts]
    return unknown_variables(names_by_host, None if policy is None else str(policy))


def rke2_numa_fleet_hosts(pattern_hosts, groups, server_group="", include=False, run_hosts=None, left_out=None):
    """The fleet's hosts whatever --limit said (plugin_utils.playbook_inputs.fleet_hosts)."""
    return fleet_hosts(pattern_hosts, groups, server_group, include, run_hosts, left_out)


def rke2_numa_server_nodes(reply):
    """{Node name: [its server role labels]} of a kubectl get nodes reply (plugin_utils.playbook_inputs.server_nodes)."""
    return server_nodes(reply or {})


def rke2_numa_kubelet_versions(reply):
    """{Node name: its kubeletVersion} of a kubectl get nodes reply (plugin_utils.playbook_inputs.kubelet_versions)."""
    return kubelet_versions(reply or {})


def rke2_numa_labelled_servers(hostvars, hosts, servers, server_group="", include=False):
    """[{host, why}]: the hosts whose Node is an RKE2 server, left out when no server group names the servers."""
    hosts = [str(h) for h in hosts or []]
    names = dict((h, str(roll_pick.node_name(hostvars, h))) for h in hosts if h in hostvars)
    return labelled_servers(hosts, names, dict(servers or {}), server_group, include)


class FilterModule(object):
    """maitred.rke2_numa run-hosts filters."""

    def filters(self):
        return {"run_servers": rke2_numa_run_servers, "run_pattern": rke2_numa_run_pattern, "run_groups": rke2_numa_run_groups,
                "unknown_variables": rke2_numa_unknown_variables, "server_nodes": rke2_numa_server_nodes,
                "labelled_servers": rke2_numa_labelled_servers,
                "fleet_hosts": rke2_numa_fleet_hosts, "kubelet_versions": rke2_numa_kubelet_versions}
