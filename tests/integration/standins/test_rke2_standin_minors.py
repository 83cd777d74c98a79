# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rke2 stand-in as the minor its node runs ($RKE2_STANDIN_VERSION): the options its kubelet knows and gates, the
CPU Manager checkpoint it writes and reads (V2, V3, V4), the runtime RKE2 stages - and the collection reading them
as that kubelet does (module_utils/kubelet_checkpoints.py, rke2_runtime.py, plugin_utils/kubelet_rules.py)."""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.kubelet_checkpoints import cpu_manager
from ansible_collections.maitred.rke2_numa.plugins.module_utils.rke2_runtime import runtime_version
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import kubelet_rules
from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs
from ansible_collections.maitred.rke2_numa.tests.integration.standins.test_rke2_standin import GOOD, RKE2_PATH, SMALL


def standin(version, monkeypatch):
    """The stand-in module as it loads in a process started with RKE2_STANDIN_VERSION=version."""
    monkeypatch.setenv("RKE2_STANDIN_VERSION", version)
    spec = importlib.util.spec_from_file_location("rke2_standin_%s" % version.replace(".", "_").replace("+", "_"), RKE2_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def machine(tmp_path):
    root = gen_sysfs.write_tree(gen_sysfs.make_spec(**SMALL), str(tmp_path / "root"))
    return root, str(tmp_path / "kubelet")


def start(module, machine, args):
    root, kdir = machine
    return module.start_kubelet(module.parse_kubelet_flags(args, "rke2"), module.read_topology(root), kdir, {})


OPTION_CASES = [
    ("v1.33.6+rke2r1", ["--cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true"]),
    ("v1.34.2+rke2r1", ["--cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true"]),
    ("v1.35.1+rke2r1", ["--cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true", "--feature-gates=CPUManagerPolicyBetaOptions=false"]),
    ("v1.36.4+rke2r1", ["--cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true", "--feature-gates=CPUManagerPolicyBetaOptions=false"]),
    ("v1.31.9+rke2r1", ["--cpu-manager-policy-options=strict-cpu-reservation=true"]),
    ("v1.30.9+rke2r1", ["--topology-manager-policy=single-numa-node", "--topology-manager-policy-options=max-allowable-numa-nodes=8"]),
    ("v1.34.2+rke2r1", ["--topology-manager-policy=single-numa-node", "--topology-manager-policy-options=max-allowable-numa-nodes=8",
                        "--feature-gates=TopologyManagerPolicyBetaOptions=false"]),
    ("v1.35.1+rke2r1", ["--topology-manager-policy=single-numa-node", "--topology-manager-policy-options=max-allowable-numa-nodes=8",
                        "--feature-gates=TopologyManagerPolicyBetaOptions=false"]),
    ("v1.30.9+rke2r1", ["--topology-manager-policy=none", "--topology-manager-policy-options=max-allowable-numa-nodes=8"]),
    ("v1.30.9+rke2r1", ["--cpu-manager-policy-options=distribute-cpus-across-cores=true", "--feature-gates=CPUManagerPolicyAlphaOptions=true"]),
    # AllAlpha / AllBeta set every gate of their stage that is not named itself
    ("v1.33.6+rke2r1", ["--cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true", "--feature-gates=AllAlpha=true"]),
    ("v1.35.1+rke2r1", ["--cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true", "--feature-gates=AllBeta=false"]),
    ("v1.35.1+rke2r1", ["--cpu-manager-policy-options=prefer-align-cpus-by-uncorecache=true",
                        "--feature-gates=AllBeta=false,CPUManagerPolicyBetaOptions=true"]),
]


@pytest.mark.parametrize("version, extra", OPTION_CASES, ids=["%s-%d" % (c[0][:5], i) for i, c in enumerate(OPTION_CASES)])
def test_the_stand_in_s_kubelet_and_the_plan_s_rules_refuse_the_same_options_in_the_same_words(version, extra, machine, monkeypatch):
    """Two readings of the kubelet, one per side: where the stand-in of a minor refuses an option, the collection's
    rules for that minor refuse it in the same words, and where it starts, they find nothing."""
    module = standin(version, monkeypatch)
    minor = tuple(int(p) for p in version[1:].split(".")[:2])
    topology = {"cpus_online": "0-15", "cores": [[c, c + 8] for c in range(8)],
                "numa_nodes": [{"id": 0, "memory_kb": 8 * 1024 * 1024}, {"id": 1, "memory_kb": 8 * 1024 * 1024}]}
    ours = kubelet_rules.kubelet_refusals([a[2:] for a in GOOD + ["--cpu-manager-policy-options=full-pcpus-only=true"] + extra],
                                          topology, minor)
    try:
        start(module, machine, GOOD + ["--cpu-manager-policy-options=full-pcpus-only=true"] + extra)
        theirs = []
    except module.KubeletRefusal as refused:
        theirs = [refused.err]
    # the kubelet's wrapping of the manager's error ("failed to run Kubelet: ", "new static policy error: ") aside
    bare = [e.split("failed to run Kubelet: ")[-1].split("new static policy error: ")[-1] for e in theirs]
    assert bare == ours, (theirs, ours)


def test_a_1_37_kubelet_writes_v4_checkpoints_the_collection_reads_from_their_data(machine, monkeypatch):
    module = standin("v1.37.2+rke2r1", monkeypatch)
    start(module, machine, GOOD)
    with open(os.path.join(machine[1], "cpu_manager_state")) as handle:
        raw = json.load(handle)
    assert raw["checksum"] == 0 and isinstance(raw["data"], str) and "dataChecksum" in raw
    read = cpu_manager(os.path.join(machine[1], "cpu_manager_state"))
    assert (read["format"], read["valid"], read["policy"], read["default_cpu_set"]) == ("v4", True, "static", "0-15")
    # a 1.37 kubelet restarted on its own checkpoint takes it; a 1.33 one reads the inline V3 fields (checksum 0)
    start(module, machine, GOOD)
    start(standin("v1.33.6+rke2r1", monkeypatch), machine, GOOD)


def test_a_v3_checkpoint_is_corrupted_to_a_kubelet_before_1_36(machine, monkeypatch):
    start(standin("v1.36.4+rke2r1", monkeypatch), machine, GOOD + ["--feature-gates=PodLevelResourceManagers=true"])
    assert cpu_manager(os.path.join(machine[1], "cpu_manager_state"))["format"] == "v3"
    older = standin("v1.35.1+rke2r1", monkeypatch)
    with pytest.raises(older.KubeletRefusal) as refused:
        start(older, machine, GOOD)
    assert "could not restore state from checkpoint: checkpoint is corrupted" in refused.value.err


def test_the_runtime_rke2_stages_is_the_version_the_collection_reads(tmp_path, monkeypatch):
    module = standin("v1.36.4+rke2r1", monkeypatch)
    module.stage_runtime(str(tmp_path / "var/lib/rancher/rke2"))
    module.stage_runtime(str(tmp_path / "var/lib/rancher/rke2"))   # again, as at every start
    assert runtime_version(root=str(tmp_path))["version"] == "v1.36.4+rke2r1"
    standin("v1.37.2+rke2r1", monkeypatch).stage_runtime(str(tmp_path / "var/lib/rancher/rke2"))   # an upgrade
    assert runtime_version(root=str(tmp_path))["version"] == "v1.37.2+rke2r1"


# ---------------------------------------------------------------- the kubelet's drop-ins (--config-dir)

def test_the_plans_drop_in_starts_the_kubelet_with_its_policies_and_a_flag_still_wins(tmp_path, machine, monkeypatch):
    """RKE2 copies a user config-dir into its own (20-cli-config-dir/) and drops the arg; the kubelet merges the drop-ins
    over RKE2's defaults (evictionHard key by key) and the flags over them: the plan's drop-in alone starts a static
    kubelet, and a cpu-manager-policy kubelet-arg beside it wins over the file."""
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_config import kubelet_config_text
    from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
    module = standin("v1.37.2+rke2r1", monkeypatch)
    plan = make_plan(read_topology(machine[0]))
    users = tmp_path / "etc-rancher-rke2-kubelet.conf.d"
    users.mkdir()
    (users / "90-rke2-numa.conf").write_text(kubelet_config_text(plan["kubelet_args"]))
    (users / "README").write_text("not a .conf: skipped")
    config_dir = str(tmp_path / "agent-etc-kubelet.conf.d")
    rest = module.extract_config_args(["config-dir=%s" % users, "max-pods=250"], config_dir)
    assert rest == ["max-pods=250"]
    assert sorted(os.listdir(os.path.join(config_dir, "20-cli-config-dir"))) == ["90-rke2-numa.conf", "README"]
    args = module.kubelet_args(rest, {"config-dir": config_dir})
    cfg = module.parse_kubelet_flags(args, "rke2")
    assert cfg["config-files"] == [os.path.join(config_dir, "20-cli-config-dir", "90-rke2-numa.conf")]
    assert cfg["eviction-hard"] == dict({"imagefs.available": "5%", "nodefs.available": "5%"}, **dict(
        item.split("<") for item in kubelet_rules.parse_kubelet_args(plan["kubelet_args"])["eviction-hard"].split(",")))
    result = module.start_kubelet(cfg, module.read_topology(machine[0]), machine[1], {})
    assert (result["cpu_manager_policy"], result["memory_manager_policy"], result["topology_manager_policy"],
            result["reserved_cpus"]) == ("static", "Static", "single-numa-node", plan["reserved_cpus"])
    flagged = module.parse_kubelet_flags(module.kubelet_args(rest + ["cpu-manager-policy=none"], {"config-dir": config_dir}), "rke2")
    assert flagged["cpu-manager-policy"] == "none", "a command-line flag wins over every drop-in"
    (users / "90-rke2-numa.conf").write_text("cpuManagerPolicy: [static\n")
    module.extract_config_args(["config-dir=%s" % users], config_dir)
    with pytest.raises(module.KubeletRefusal) as refused:
        module.parse_kubelet_flags(args, "rke2")
    assert refused.value.err.startswith("failed to merge kubelet configs: failed to load kubelet dropin file, path: ")


def test_drop_ins_merge_in_the_order_filepath_walkdir_walks_them(tmp_path, monkeypatch):
    """WalkDir: each folder's entries in name order, a sub-folder entered where its name sorts - 20-cli-config-dir/a.conf
    before 50-x.conf, so 50-x.conf wins."""
    module = standin("v1.37.2+rke2r1", monkeypatch)
    (tmp_path / "20-cli-config-dir").mkdir()
    (tmp_path / "20-cli-config-dir" / "a.conf").write_text("cpuManagerPolicy: none\n")
    (tmp_path / "50-x.conf").write_text("cpuManagerPolicy: static\n")
    (tmp_path / "00-rke2-defaults.conf").write_text("maxPods: 110\n")
    merged, files = module.dropin_config(str(tmp_path))
    assert [os.path.relpath(f, str(tmp_path)) for f in files] == ["00-rke2-defaults.conf", "20-cli-config-dir/a.conf", "50-x.conf"]
    assert merged["cpuManagerPolicy"] == "static"


def test_a_1_36_kubelet_with_the_gate_off_reads_a_v3_checkpoint(machine, monkeypatch):
    """The 1.36 kubelet has the V3 type whatever the gate (the collection agrees: no reset)."""
    start(standin("v1.36.4+rke2r1", monkeypatch), machine, GOOD + ["--feature-gates=PodLevelResourceManagers=true"])
    start(standin("v1.36.4+rke2r1", monkeypatch), machine, GOOD)


def test_a_failure_tied_to_a_setting_follows_it_into_the_kubelet_s_file(tmp_path, monkeypatch):
    """RKE2_STANDIN_FAIL_AFTER_START_FLAG names a setting the failing kubelet runs with: set by the plan's drop-in
    (file mode) as well as by a flag."""
    module = standin("v1.37.2+rke2r1", monkeypatch)
    folder = tmp_path / "kubelet.conf.d"
    folder.mkdir()
    (folder / "90-rke2-numa.conf").write_text("systemReserved:\n  memory: 2Gi\n")
    cfg = module.parse_kubelet_flags(module.kubelet_args([], {"config-dir": str(folder)}), "rke2")
    assert module.runs_with(cfg, [], "--system-reserved=memory=2Gi")
    assert not module.runs_with(cfg, [], "--system-reserved=memory=1Gi")
    flags = ["--system-reserved=memory=1Gi"]
    assert module.runs_with(module.parse_kubelet_flags(flags, "rke2"), flags, "--system-reserved=memory=1Gi")
