# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The playbooks' inputs: hostile or careless values refused, every problem named at once."""
from __future__ import annotations

import time
import tracemalloc

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.playbook_inputs import (
    SERVERS_LEFT_OUT,
    fleet_hosts,
    input_errors,
    role_errors,
    run_pattern,
    run_servers,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.values import show

NOW = 1796104800.0  # 2026-12-01T06:00:00Z
GROUPS = {"all": ["gpu-a", "gpu-b", "k1"], "gpu": ["gpu-a", "gpu-b"], "servers": ["k1"], "empty": [], "ungrouped": []}
HOSTS = GROUPS["all"]
GOOD = {
    "rke2_numa_node_name": "gpu-a.example.com", "rke2_numa_kubectl": "/var/lib/rancher/rke2/bin/kubectl",
    "rke2_numa_kubeconfig": "/etc/rancher/rke2/rke2.yaml", "rke2_numa_server_group": "servers", "rke2_numa_kubectl_host": "k1",
    "rke2_numa_kured_daemonset": "kube-system/kured", "rke2_numa_foreign_node_annotations": ["weave.works/kured-reboot-in-progress"],
    "rke2_numa_probe_namespace": "rke2-numa-probe", "rke2_numa_drain_pod_selector": "app in (vllm, triton)",
    "rke2_numa_drain_timeout": 600, "rke2_numa_drain_grace_period": None, "rke2_numa_node_ready_timeout": "300",
    "rke2_numa_serial": "20%", "rke2_numa_max_fail_percentage": "0", "rke2_numa_node_minutes": "7.5",
    "rke2_numa_window_end": "2026-12-01T08:00:00+01:00", "rke2_numa_reboot_ok": "true", "rke2_numa_audit_pods": False,
    "rke2_numa_prove": True, "rke2_numa_labels_via": "kubectl", "rke2_numa_nfd_features_dir": "/etc/kubernetes/node-feature-discovery/features.d",
    "rke2_numa_labels_timeout": "180", "rke2_numa_roll_id": "awx-workflow-42", "rke2_numa_roll_lease_namespace": "rke2-numa-system",
    "rke2_numa_roll_lease_name": "rke2-numa-roll", "rke2_numa_roll_lock_wait": "600", "rke2_numa_roll_lease_seconds": 0,
}


def errors(playbook="rolling", **changes):
    return input_errors(playbook, dict(GOOD, **changes), GROUPS, HOSTS, NOW)


def test_a_number_of_5000_digits_is_refused_at_once_with_its_name_not_a_traceback():
    started = time.monotonic()
    tracemalloc.start()
    for value in ("9" * 5000, int("9" * 4000), "9" * 10 ** 6):
        found = errors(rke2_numa_drain_timeout=value)
        assert len(found) == 1 and found[0].startswith("rke2_numa_drain_timeout ") and "must be an integer from 1 to 14400 s" in found[0]
        assert len(found[0]) < 200, "the value is not printed whole"
    dummy, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert time.monotonic() - started < 1 and peak < 5 * 10 ** 6


def test_valid_inputs_pass_and_unset_ones_are_left_to_the_role_defaults():
    assert errors() == []
    assert input_errors("rolling", {}, GROUPS, HOSTS, NOW) == []
    assert errors(rke2_numa_server_group="", rke2_numa_kubectl_host="localhost", rke2_numa_kured_daemonset="",
                  rke2_numa_drain_pod_selector="", rke2_numa_kubectl="kubectl", rke2_numa_serial=[1, "10%", 5]) == []


@pytest.mark.parametrize("name", ["-l", "--selector=gpu=true", "gpu-a,gpu-b", "gpu-a/b", "GPU", "a" * 254, ""])
def test_a_node_name_that_is_not_a_name_is_refused(name):
    found = errors(rke2_numa_node_name=name)
    assert len(found) == 1 and found[0].startswith("rke2_numa_node_name %s" % repr(name)[:60]), found
    assert " is not a Node name: " in found[0]


@pytest.mark.parametrize("serial", [0, "0", -1, "-2", "abc", "0%", "101%", "%", True, [], [1, 0], None, 1.5])
def test_a_serial_that_would_roll_every_node_at_once_or_is_not_a_batch_size_is_refused(serial):
    found = errors(rke2_numa_serial=serial)
    assert len(found) == 1 and found[0].startswith("rke2_numa_serial ") and "would roll every node at once" in found[0]


@pytest.mark.parametrize("serial", [1, "1", 12, "1%", "100%", " 25 % ", [1, "50%"]])
def test_batch_sizes(serial):
    assert errors(rke2_numa_serial=serial) == []


@pytest.mark.parametrize("name, value, words", [
    ("rke2_numa_max_fail_percentage", 101, "from 0 to 100"),
    ("rke2_numa_max_fail_percentage", -1, "from 0 to 100"),
    ("rke2_numa_max_fail_percentage", "10%", "from 0 to 100"),
    ("rke2_numa_drain_timeout", 0, "0 would let kubectl drain wait forever"),
    ("rke2_numa_drain_timeout", 14401, "from 1 to 14400"),
    ("rke2_numa_drain_timeout", "10m", "from 1 to 14400"),
    ("rke2_numa_drain_grace_period", -1, "or null: each pod's own"),
    ("rke2_numa_node_ready_timeout", 0, "from 1 to 3600"),
    ("rke2_numa_node_minutes", 0, "above 0"),
    ("rke2_numa_node_minutes", "x", "above 0"),
    ("rke2_numa_reboot_ok", "maybe", "must be true or false"),
    ("rke2_numa_kubectl", "--kubeconfig=/tmp/x", "absolute path or a command name"),
    ("rke2_numa_kubeconfig", "rke2.yaml", "absolute path"),
    ("rke2_numa_kubectl_host", "elsewhere", "neither a host of the inventory nor localhost"),
    ("rke2_numa_kured_daemonset", "kured", "namespace/name"),
    ("rke2_numa_kured_daemonset", "kube-system/-kured", "namespace/name"),
    ("rke2_numa_foreign_node_annotations", "weave.works/x", "must be a list"),
    ("rke2_numa_foreign_node_annotations", ["-x"], "is not an annotation key"),
    ("rke2_numa_probe_namespace", "--all-namespaces", "is not a namespace"),
    ("rke2_numa_drain_pod_selector", "app=vllm --force", "is not a label selector"),
    ("rke2_numa_window_end", "tomorrow", "not an ISO 8601 date-time"),
    ("rke2_numa_labels_via", "sometimes", "must be one of nfd, kubectl, none"),
    ("rke2_numa_nfd_features_dir", "features.d", "must be an absolute path"),
    ("rke2_numa_labels_timeout", 0, "must be"),
    ("rke2_numa_labels_timeout", 86400, "must be"),
    ("rke2_numa_roll_id", "-lgpu=true", "is not a roll id"),
    ("rke2_numa_roll_id", "Roll/1", "is not a roll id"),
    ("rke2_numa_roll_id", "true", "is not a roll id"),
    ("rke2_numa_roll_lease_namespace", "--all-namespaces", "is not a namespace"),
    ("rke2_numa_roll_lease_name", "-x", "is not a Lease name"),
    ("rke2_numa_roll_lock_wait", -1, "from 0 to 43200"),
    ("rke2_numa_roll_lock_wait", 10 ** 6, "from 0 to 43200"),
    ("rke2_numa_roll_lease_seconds", 5, "from 120 to 28800"),
    ("rke2_numa_roll_lease_seconds", "forever", "from 120 to 28800"),
])
def test_bounds_and_forms(name, value, words):
    found = errors(**{name: value})
    assert len(found) == 1 and found[0].startswith(name) and words in found[0], found


def test_a_server_group_that_does_not_exist_is_refused_not_replaced_by_the_controller():
    assert errors(rke2_numa_server_group="server") == [
        "rke2_numa_server_group 'server' is not a group of the inventory (its groups: all, empty, gpu, servers); "
        "kubectl would run on the controller instead"]
    assert errors(rke2_numa_server_group="empty") == ["rke2_numa_server_group 'empty' has no host: no server to run kubectl on"]


def test_awx_s_credential_runs_kubectl_on_the_controller_and_a_slice_needs_no_server():
    # a slice of a sliced AWX job holds only its own hosts: the server group empty or absent - kubectl runs in the EE
    for group in ("empty", "servers-of-another-slice"):
        assert errors(rke2_numa_kubeconfig="env:K8S_AUTH", rke2_numa_server_group=group, rke2_numa_kubectl_host="localhost") == []
    # the credential is in the controller's environment: kubectl on a server would not have it
    assert errors(rke2_numa_kubeconfig="env:K8S_AUTH") == [
        "rke2_numa_kubeconfig 'env:K8S_AUTH' is AWX's Kubernetes credential in the controller's environment: kubectl runs there, "
        "so rke2_numa_kubectl_host must be localhost (or no rke2_numa_server_group), not 'k1'"]
    assert errors(rke2_numa_kubeconfig="env:K8S_AWX")[0].startswith("rke2_numa_kubeconfig 'env:K8S_AWX' must be an absolute path")
    # plays/workers.yml's run_servers: the slice's inventory has no servers group at all, or an empty one
    slice_groups = {"all": ["gpu-a"], "gpu": ["gpu-a"], "ungrouped": []}
    assert run_servers("check", slice_groups, "servers", ["gpu-a"], False, False, kubectl_here=True) == {"left_out": [], "refused": ""}
    assert "is not a group of the inventory" in run_servers("check", slice_groups, "servers", ["gpu-a"], False, False)["refused"]
    # the slice that holds the server still leaves it out
    assert run_servers("check", GROUPS, "servers", HOSTS, False, False, kubectl_here=True) == {"left_out": ["k1"], "refused": ""}


def test_a_window_that_has_ended_stops_a_roll_saying_when_but_not_a_check():
    found = errors(rke2_numa_window_end="2026-12-01T04:30:00Z")
    assert found == ["rke2_numa_window_end 2026-12-01T04:30:00Z ended 90 min ago: no node may start; set the end of this run's window"]
    assert errors("check", rke2_numa_window_end="2026-12-01T04:30:00Z") == []


def test_a_window_by_duration_is_bounded_and_never_beside_a_window_s_end():
    assert errors(rke2_numa_window_minutes=240, rke2_numa_window_end="") == []
    assert errors(rke2_numa_window_minutes="240", rke2_numa_window_end="") == []
    assert errors(rke2_numa_window_minutes=0, rke2_numa_window_end="2026-12-01T08:00:00Z") == []
    for bad in (-1, 1441, "4h", True, None):
        assert errors(rke2_numa_window_minutes=bad, rke2_numa_window_end="") == [
            "rke2_numa_window_minutes %s must be an integer from 0 to 1440 min" % show(bad)], bad
    assert errors(rke2_numa_window_minutes=240, rke2_numa_window_end="2026-12-01T08:00:00Z") == [
        "rke2_numa_window_minutes 240 and rke2_numa_window_end 2026-12-01T08:00:00Z are both set: set the window's end or its "
        "duration, not both"]


def test_every_problem_is_named_at_once():
    found = errors(rke2_numa_node_name="-l", rke2_numa_serial=0, rke2_numa_drain_timeout=0, rke2_numa_server_group="nope")
    assert [e.split(" ", 1)[0] for e in found] == ["rke2_numa_node_name", "rke2_numa_server_group", "rke2_numa_drain_timeout",
                                                   "rke2_numa_serial"]


@pytest.mark.parametrize("host", ["../x", "a/b", ".hidden", "fleet", "", "-x", "gpu a"])
def test_a_host_name_that_cannot_name_its_report_files_is_refused(host):
    found = input_errors("check", {"inventory_hostname": host}, GROUPS, HOSTS, NOW)
    assert len(found) == 1 and "cannot name its report files (<dir>/<host>.json)" in found[0]


@pytest.mark.parametrize("host", ["gpu-a", "gpu-a.example.com", "GPU_7", "10.0.0.7", "root@gpu-a", "fleet-1"])
def test_host_names_that_name_report_files(host):
    assert input_errors("plan", {"inventory_hostname": host}, GROUPS, HOSTS, NOW) == []


def test_an_unknown_playbook_is_a_programming_error():
    with pytest.raises(ValueError):
        input_errors("apply", {}, GROUPS, HOSTS, NOW)


ACCESS = {"rke2_numa_access_kubeconfig": "/etc/rancher/rke2/rke2-numa.yaml", "rke2_numa_admin_kubeconfig": "/etc/rancher/rke2/rke2.yaml",
          "rke2_numa_access_token_duration": "8h", "rke2_numa_access_namespace": "rke2-numa-system",
          "rke2_numa_probe_namespace": "rke2-numa-probe", "rke2_numa_kured_daemonset": "auto"}


@pytest.mark.parametrize("changes, words", [
    ({"rke2_numa_access_kubeconfig": ""}, "rke2_numa_access_kubeconfig is not set: name the file"),
    ({"rke2_numa_access_kubeconfig": "rke2-numa.yaml"}, "must be the absolute path of a file"),
    ({"rke2_numa_access_kubeconfig": "/etc/rancher/rke2/"}, "must be the absolute path of a file"),
    ({"rke2_numa_access_kubeconfig": "/etc/rancher/rke2/rke2.yaml"}, "is the admin kubeconfig: it would be overwritten"),
    ({"rke2_numa_access_kubeconfig": "/etc/rancher/rke2/./rke2.yaml"}, "is the admin kubeconfig: it would be overwritten"),
    ({"rke2_numa_access_kubeconfig": "/root/admin.yaml", "rke2_numa_admin_kubeconfig": "/root/admin.yaml"}, "is the admin kubeconfig"),
    ({"rke2_numa_admin_kubeconfig": "rke2.yaml"}, "rke2_numa_admin_kubeconfig 'rke2.yaml' must be an absolute path"),
    ({"rke2_numa_access_token_duration": 0}, "must be from 10m to 7d"),
    ({"rke2_numa_access_token_duration": "30d"}, "not forever"),
    ({"rke2_numa_access_namespace": "--all-namespaces"}, "rke2_numa_access_namespace '--all-namespaces' is not a namespace"),
    ({"rke2_numa_probe_namespace": "default"}, "holds other pods"),
    ({"rke2_numa_probe_namespace": "kube-system"}, "holds other pods"),
    ({"rke2_numa_probe_namespace": "rke2-numa-system"}, "must differ"),
    ({"rke2_numa_access_server": "http://127.0.0.1:6443"}, "rke2_numa_access_server 'http://127.0.0.1:6443' must be an https URL"),
    ({"rke2_numa_access_server": "https://u:p@10.0.0.1:6443"}, "must be an https URL (https://HOST[:PORT][/PATH], no user"),
    ({"rke2_numa_access_server": "https://10.0.0.1:99999"}, "rke2_numa_access_server 'https://10.0.0.1:99999' is not a URL"),
    ({"rke2_numa_access_server": ["https://10.0.0.1"]}, "is not a URL"),
    ({"rke2_numa_kured_hold": "maybe"}, "rke2_numa_kured_hold 'maybe' must be auto, true or false"),
    ({"rke2_numa_access_ca": "ca.pem"}, "rke2_numa_access_ca 'ca.pem' must be the absolute path of a PEM file"),
    ({"rke2_numa_access_ca": ["/etc/ca.pem"]}, "rke2_numa_access_ca ['/etc/ca.pem'] must be the absolute path"),
    ({"rke2_numa_access_kubeconfig_owner": "-o"}, "rke2_numa_access_kubeconfig_owner '-o' must be a user name"),
    ({"rke2_numa_access_kubeconfig_owner": "Root"}, "must be a user name"),
])
def test_access_refuses_a_target_that_is_not_ours_a_token_forever_and_a_shared_probe_namespace(changes, words):
    assert input_errors("access", ACCESS, GROUPS, HOSTS, NOW) == []
    found = input_errors("access", dict(ACCESS, **changes), GROUPS, HOSTS, NOW)
    assert len(found) == 1 and words in found[0], found
    assert input_errors("prove", dict(ACCESS, rke2_numa_probe_namespace="default"), GROUPS, HOSTS, NOW) == [], \
        "the other playbooks run probes wherever the admin says"


# ---- The run's hosts: the GPU workers by default, a server only when asked (playbooks/plays/workers.yml).

def test_by_default_a_run_leaves_the_servers_out():
    assert run_servers("plan", GROUPS, "servers", HOSTS, False, False) == {"left_out": ["k1"], "refused": ""}
    assert run_pattern(dict(GROUPS, **{SERVERS_LEFT_OUT: ["k1"]}), "") == "all:!" + SERVERS_LEFT_OUT
    # no server in the run (--limit), or no server group: nothing left out, and no pattern naming a missing group
    assert run_servers("check", GROUPS, "servers", ["gpu-a"], False, False) == {"left_out": [], "refused": ""}
    assert run_servers("check", GROUPS, "", HOSTS, False, False) == {"left_out": [], "refused": ""}
    assert run_pattern(GROUPS, "") == "all"
    assert run_pattern(GROUPS, None) == "all"


@pytest.mark.parametrize("playbook, verb", [("plan", "plan"), ("rolling", "roll"), ("check", "check"), ("prove", "probe")])
def test_a_pattern_that_takes_a_server_is_refused_naming_the_workers_and_the_flag(playbook, verb):
    result = run_servers(playbook, GROUPS, "servers", HOSTS, True, False)
    assert result["left_out"] == []
    assert result["refused"] == (
        "k1 is an RKE2 server (rke2_numa_server_group servers): %s.yml would %s it; its hosts are the GPU workers. "
        "Name them (-e rke2_numa_hosts=gpu), or add -e rke2_numa_include_servers=true to %s the server too" % (playbook, verb, verb))
    assert run_pattern(GROUPS, "all") == "all"


@pytest.mark.parametrize("include", [True, "true", "yes", 1])
def test_the_servers_are_taken_when_asked(include):
    assert run_servers("rolling", GROUPS, "servers", HOSTS, True, include) == {"left_out": [], "refused": ""}
    assert run_servers("rolling", GROUPS, "servers", HOSTS, False, include) == {"left_out": [], "refused": ""}


def test_a_pattern_of_workers_only_is_not_refused():
    assert run_servers("labels", GROUPS, "servers", GROUPS["gpu"], True, False) == {"left_out": [], "refused": ""}


@pytest.mark.parametrize("group, include, message", [
    ("nope", False, "rke2_numa_server_group 'nope' is not a group of the inventory"),
    ("empty", False, "rke2_numa_server_group 'empty' has no host"),
    ("servers", "maybe", "rke2_numa_include_servers 'maybe' must be true or false"),
])
def test_a_wrong_server_group_or_flag_stops_the_run(group, include, message):
    result = run_servers("plan", GROUPS, group, HOSTS, False, include)
    assert result["left_out"] == [] and message in result["refused"]


def test_an_unknown_playbook_has_no_servers_to_leave_out():
    with pytest.raises(ValueError):
        run_servers("access", GROUPS, "servers", HOSTS, False, False)


def test_the_common_role_s_defaults_meet_its_argument_specs():
    assert role_errors("common", {}) == []
    assert role_errors("common", {"rke2_numa_config_mode": "dropin", "rke2_numa_reboot_timeout": "900"}) == []


@pytest.mark.parametrize("values, message", [
    ({"rke2_numa_boot_method": "lilo"},
     "value of rke2_numa_boot_method must be one of: auto, grub_d, grubby, transactional_update, got: lilo"),
    ({"rke2_numa_reboot_timeout": "soon"}, "rke2_numa_reboot_timeout"),
    ({"rke2_numa_include_servers": "maybe"}, "rke2_numa_include_servers"),
    ({"rke2_numa_no_such_variable": 1, "rke2_numa_boot_method": "auto"}, ""),
])
def test_the_common_role_s_variables_are_checked_as_its_own_validation_checks_them(values, message):
    found = role_errors("common", values)
    assert (message in " ".join(found)) and bool(found) == bool(message), found


def test_a_run_that_matches_no_host_is_refused_naming_the_groups():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.playbook_inputs import no_hosts_error
    result = run_servers("check", GROUPS, "servers", [], True, False, pattern="gpu_workers")
    assert result == {"left_out": [], "refused": "rke2_numa_hosts 'gpu_workers' matches no host of the inventory (its groups: "
                                                 "gpu, servers): name a group, a host or a pattern of it"}
    assert "share no host" in run_servers("plan", GROUPS, "", [], True, False, pattern="gpu", limit="k1")["refused"]
    assert no_hosts_error("all", {"all": [], "ungrouped": []}).startswith("the inventory has no host")
    assert run_servers("plan", GROUPS, "", ["gpu-a"], True, False, pattern="gpu-a") == {"left_out": [], "refused": ""}


def test_variables_no_role_declares_are_named_with_the_closest_declared_one():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.playbook_inputs import unknown_variables
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import specs
    names = {"gpu-a": ["rke2_numa_hugepage_per_node", "rke2_numa_serial", "ansible_host", "rke2_numa_fleet_42"],
             "gpu-b": ["rke2_numa_hugepage_per_node", "rke2_numa_proof", "rke2_numa_totally_else"]}
    result = unknown_variables(names)
    assert result["warnings"] == []
    assert result["refused"].startswith(
        "rke2_numa_hugepage_per_node is not a variable of this collection; did you mean rke2_numa_hugepages_per_node? "
        "(set for gpu-a, gpu-b); rke2_numa_totally_else is not a variable of this collection (set for gpu-b). "
        "Nothing was read or written")
    warned = unknown_variables(names, "warn")
    assert warned["refused"] == "" and len(warned["warnings"]) == 2
    assert unknown_variables({"h": specs.declared()}) == {"refused": "", "warnings": []}
    assert "must be one of refuse, warn" in unknown_variables({}, "ignore")["refused"]
    many = unknown_variables(dict(("h%02d" % i, ["rke2_numa_x"]) for i in range(8)))["refused"]
    assert "(set for h00, h01, h02, h03, h04 and 3 more)" in many


def test_the_nodes_rke2_labelled_as_servers_are_left_out_without_a_server_group():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.playbook_inputs import labelled_servers, server_nodes
    reply = {"kind": "List", "items": [
        {"kind": "Node", "metadata": {"name": "cp-1", "labels": {"node-role.kubernetes.io/control-plane": "true",
                                                                 "node-role.kubernetes.io/etcd": "true"}}},
        {"kind": "Node", "metadata": {"name": "old-1", "labels": {"node-role.kubernetes.io/master": "true"}}},
        {"kind": "Node", "metadata": {"name": "gpu-a", "labels": {"node-role.kubernetes.io/worker": "true"}}},
        {"kind": "Pod", "metadata": {"name": "p", "labels": {"node-role.kubernetes.io/control-plane": "true"}}}]}
    servers = server_nodes(reply)
    assert servers == {"cp-1": ["node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/etcd"],
                       "old-1": ["node-role.kubernetes.io/master"]}
    left = labelled_servers(["h-cp", "gpu-a", "old-1"], {"h-cp": "cp-1", "gpu-a": "gpu-a"}, servers, "", False)
    assert [e["host"] for e in left] == ["h-cp", "old-1"]
    assert left[0]["why"].startswith("an RKE2 server (its Node has node-role.kubernetes.io/control-plane, "
                                     "node-role.kubernetes.io/etcd), left out")
    assert labelled_servers(["h-cp"], {"h-cp": "cp-1"}, servers, "", "true") == []
    assert labelled_servers(["h-cp"], {"h-cp": "cp-1"}, servers, "servers", False) == [], "the server group decides"


def test_a_pattern_the_operator_wrote_leaves_out_the_servers_the_run_left_out():
    assert run_pattern({SERVERS_LEFT_OUT: ["cp-1"]}, "gpu") == "gpu:!%s" % SERVERS_LEFT_OUT
    assert run_pattern({}, "gpu") == "gpu"


def test_every_input_is_a_declared_variable_with_one_rule():
    """The rules table names each variable once, each a variable some role declares (its spec: bounds, choices,
    description - the module's documented inputs are generated from them)."""
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import playbook_inputs, specs

    names = [name for name, dummy in playbook_inputs.RULES]
    assert len(names) == len(set(names)) and names[0] == "inventory_hostname"
    assert set(playbook_inputs.INPUTS) - {"inventory_hostname"} <= set(specs.declared())
    assert not set(playbook_inputs.ACCESS_INPUTS) & set(names)


def test_the_fleet_is_the_pattern_s_hosts_but_the_servers_left_out_and_always_the_run_s_own():
    groups = {"all": ["k1", "g1", "g2", "g3"], "servers": ["k1"], "gpu": ["g1", "g2", "g3"]}
    pattern = groups["all"]
    assert fleet_hosts(pattern, groups, "servers", False, ["g2"]) == ["g1", "g2", "g3"]
    assert fleet_hosts(pattern, groups, "servers", "true", ["g2"]) == ["k1", "g1", "g2", "g3"]
    assert fleet_hosts(pattern, groups, "", False, []) == ["k1", "g1", "g2", "g3"]
    # check.yml's: the hosts it left out by their Node's labels are not of the fleet; the run's own hosts always are
    assert fleet_hosts(pattern, groups, "", False, ["g1"], left_out=["k1"]) == ["g1", "g2", "g3"]
    assert fleet_hosts(["g1"], groups, "servers", False, ["g1", "k1", "g1"]) == ["g1", "k1"]
