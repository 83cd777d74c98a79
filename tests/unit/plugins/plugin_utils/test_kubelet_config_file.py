# -*- coding: utf-8 -*-
"""File mode (rke2_numa_kubelet_config=file): the plan's kubelet settings as a KubeletConfiguration drop-in that RKE2
hands the kubelet through config-dir - read on the host (module_utils/kubelet_conf.py), judged on the controller by the
same rules as the flags (compliance, verify), refused where a flag or a later drop-in would win over it."""

from __future__ import annotations

import os

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.kubelet_conf import (
    CONF_HEADER,
    READ_FIELDS,
    conf_files,
    read_conf_folder,
)
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import kubelet_rules
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.compliance import assess
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_config import (
    file_mode_args,
    kubelet_config,
    running_config_args,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import PlanError, make_plan
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.verify import check_config
from ansible_collections.maitred.rke2_numa.tests.fixtures.hwloc_dumps import HWLOC_DUMPS
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply

FOLDER = "/etc/rancher/rke2/kubelet.conf.d"


def test_the_fields_read_on_the_host_are_the_managed_ones_and_the_gates():
    assert set(READ_FIELDS) == set(kubelet_rules.MANAGED_KUBELET_FIELDS.values()) | {"featureGates"}


@pytest.mark.parametrize("name", HWLOC_DUMPS)
def test_a_node_in_file_mode_runs_the_plan_by_the_same_rules_as_flags(hwloc_root, name):
    """The drop-in's settings, merged after RKE2's defaults and read back with the flags RKE2 passes (config-dir and the
    plan's unmanaged flags), are the plan for verify - real machines."""
    try:
        plan = make_plan(read_topology(hwloc_root(name)), allow_many_numa_nodes=True)
    except PlanError:
        pytest.skip("no plan for %s" % name)
    flags, in_file = file_mode_args(plan["kubelet_args"], FOLDER)
    assert flags[-1] == "config-dir=" + FOLDER and not set(map(kubelet_rules.flag_name, flags)) & set(kubelet_rules.MANAGED_KUBELET_FLAGS)
    fields = dict((k, v) for k, v in kubelet_config(in_file).items() if k in READ_FIELDS)
    conf = {"folder": FOLDER, "files": [{"path": FOLDER + "/90-rke2-numa.conf", "exists": True, "values": fields}]}
    running = running_config_args(["--" + a for a in flags], conf)
    assert check_config(plan, running) == []
    # the same folder not handed to the kubelet (no config-dir): its files are not what the kubelet runs
    assert check_config(plan, running_config_args(["--" + a for a in flags[:-1]], conf))


def test_a_flag_wins_over_the_file_when_the_running_settings_are_read():
    conf = {"folder": FOLDER, "files": [{"path": FOLDER + "/90-rke2-numa.conf", "exists": True,
                                         "values": {"cpuManagerPolicy": "static", "featureGates": {"PodLevelResources": True}}}]}
    running = running_config_args(["--config-dir=" + FOLDER, "--cpu-manager-policy=none"], conf)
    assert kubelet_rules.kubelet_flag_values(("", a.lstrip("-")) for a in running)["cpu-manager-policy"][0] == "none"
    assert "--feature-gates=PodLevelResources=true" in running


def test_the_host_reads_the_folder_as_the_kubelet_walks_it(tmp_path):
    config = tmp_path / "rke2" / "config.yaml"
    folder = tmp_path / "rke2" / "kubelet.conf.d"
    (folder / "50-sub").mkdir(parents=True)
    (folder / "90-rke2-numa.conf").write_text(CONF_HEADER + "cpuManagerPolicy: static\nauthentication: {anonymous: {enabled: false}}\n")
    (folder / "50-sub" / "a.conf").write_text("topologyManagerPolicy: best-effort\n")
    (folder / "50-sub.conf").write_text("[broken\n")
    (folder / "README").write_text("not read\n")
    assert [os.path.relpath(p, str(folder)) for p in conf_files(str(folder))] == ["50-sub/a.conf", "50-sub.conf", "90-rke2-numa.conf"]
    read = read_conf_folder(str(config))
    assert read["folder"] == str(folder) and read["path"] == str(folder / "90-rke2-numa.conf")
    ours = read["files"][-1]
    assert ours["ours"] and ours["values"] == {"cpuManagerPolicy": "static"}  # only the fields the rules read
    assert read["files"][1]["error"].startswith("failed to load kubelet dropin file, path: %s" % (folder / "50-sub.conf"))
    assert read["files"][0]["values"] == {"topologyManagerPolicy": "best-effort"} and not read["files"][0]["ours"]


def test_a_node_in_file_mode_is_compliant_in_file_mode_and_moves_back_with_flags(node):
    root, plan, state = node
    comply(root, plan, config="file")
    rke2 = root / "etc/rancher/rke2"
    dropin = str(rke2 / "config.yaml.d" / "90-rke2-numa.yaml")
    result = assess(plan, state(), "auto", dropin, kubelet_config="file")
    assert result["compliant"] and result["config_mode"] == "dropin", result["reasons"]
    # with flags the plan goes back to config.yaml and file mode's files go: a config change and a restart
    back = assess(plan, state(), "auto", dropin, kubelet_config="flags")
    assert "rke2_config" in back["actions"] and "restart" in back["actions"] and not back["blocked"], back
    assert "%s is left from rke2_numa_kubelet_config=file: with flags the plan's settings are kubelet-args, and it goes" % (
        rke2 / "kubelet.conf.d" / "90-rke2-numa.conf") in back["reasons"]
    # another plan in the file: a change the kubelet must restart for (RKE2's files stay the same)
    (rke2 / "kubelet.conf.d" / "90-rke2-numa.conf").write_text(
        (rke2 / "kubelet.conf.d" / "90-rke2-numa.conf").read_text().replace("cpuManagerPolicy: static", "cpuManagerPolicy: none"))
    changed = assess(plan, state(), "auto", dropin, kubelet_config="file")
    assert "%s does not hold the plan's kubelet settings" % (rke2 / "kubelet.conf.d" / "90-rke2-numa.conf") in changed["reasons"]
    assert "drain" in changed["actions"] and ("restart" in changed["actions"] or "reset" in changed["actions"]), changed


def test_a_merged_node_moving_to_file_mode_is_told_why_and_a_rancher_flag_blocks_it(node):
    root, plan, state = node
    comply(root, plan)
    rke2 = root / "etc/rancher/rke2"
    dropin = str(rke2 / "config.yaml.d" / "90-rke2-numa.yaml")
    result = assess(plan, state(), "auto", dropin, kubelet_config="file")
    config, conf = rke2 / "config.yaml", rke2 / "kubelet.conf.d" / "90-rke2-numa.conf"
    assert "%s still holds kubelet-args merge mode wrote: with rke2_numa_kubelet_config=file they move to %s" % (config, conf) \
        in result["reasons"], result["reasons"]
    assert "%s does not exist yet (rke2_numa_kubelet_config=file)" % conf in result["reasons"]
    (rke2 / "config.yaml.d").mkdir(exist_ok=True)
    (rke2 / "config.yaml.d" / "50-rancher.yaml").write_text("kubelet-arg:\n- cpu-manager-policy=none\n")
    blocked = assess(plan, state(), "auto", dropin, kubelet_config="file")
    assert blocked["actions"] == [] and len(blocked["blocked"]) == 1, blocked
    assert "Rancher sets cpu-manager-policy=none" in blocked["blocked"][0] and str(conf) in blocked["blocked"][0]


def test_the_runtime_is_read_in_the_data_dir_rke2_s_files_set(node):
    """RKE2 extracts its runtime under its data-dir (config.yaml's data-dir, a drop-in's after it): the node read looks
    there, not only in /var/lib/rancher/rke2 (a node with its data on another disk read as having no RKE2)."""
    root, dummy, state = node
    data = root / "srv/rke2/data"
    (data / "v1.37.2-rke2r1-0123456789ab/bin").mkdir(parents=True)
    os.symlink("/srv/rke2/data/v1.37.2-rke2r1-0123456789ab/bin", str(root / "srv/rke2/bin"))
    assert state()["rke2_runtime"]["version"] is None
    config = root / "etc/rancher/rke2/config.yaml"
    config.write_text(config.read_text() + "data-dir: /srv/rke2\n")
    found = state()["rke2_runtime"]
    assert found["version"] == "v1.37.2+rke2r1" and found["path"] == "/srv/rke2/bin", found
