# -*- coding: utf-8 -*-
"""config.yaml merge and drop-in (rule 12), as pure functions."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import (
    MASK,
    ConfigError,
    dropin_config,
    mask,
    merged_config,
    plan_write,
    unmerged_config,
)

TOKEN = "K10c0ffee::server:5ecret"
CONFIG = """server: https://10.0.0.1:9345
token: %s
node-label:
  - gpu=true
  - zone=a
kubelet-arg:
  - max-pods=250
  - reserved-cpus=0-1
  - --cpu-manager-policy=none
  - reserved-cpus=0-3
protect-kernel-defaults: true
""" % TOKEN
PLANNED = ["cpu-manager-policy=static", "reserved-cpus=0,56", "reserved-memory=0:memory=1274Mi;1:memory=1274Mi"]


def test_merge_keeps_every_other_key_and_flag_and_replaces_managed_ones():
    text, report = merged_config(CONFIG, "config.yaml", PLANNED, node_labels=["maitred.io/numa=true", "zone=b"])
    data = yaml.safe_load(text)
    assert data["server"] == "https://10.0.0.1:9345" and data["token"] == TOKEN
    assert data["protect-kernel-defaults"] is True
    assert data["kubelet-arg"] == ["max-pods=250"] + PLANNED
    assert data["node-label"] == ["gpu=true", "maitred.io/numa=true", "zone=b"]
    assert list(data)[:2] == ["server", "token"]  # key order kept
    assert report["normalised"] == ["reserved-cpus"]
    assert report["replaced"] == ["cpu-manager-policy", "reserved-cpus"]
    assert report["kept_kubelet_args"] == ["max-pods=250"]
    assert TOKEN not in repr(report)


def test_merge_is_idempotent():
    text, dummy = merged_config(CONFIG, "config.yaml", PLANNED)
    again, dummy = merged_config(text, "config.yaml", PLANNED)
    assert again is None


@pytest.mark.parametrize("existing", [None, "", "\n", "# only a comment\n"])
def test_merge_into_missing_or_empty_file(existing):
    text, dummy = merged_config(existing, "config.yaml", PLANNED)
    assert yaml.safe_load(text) == {"kubelet-arg": PLANNED}


def test_single_string_kubelet_arg_is_a_list_of_one():
    text, dummy = merged_config("kubelet-arg: max-pods=110\n", "config.yaml", PLANNED)
    assert yaml.safe_load(text)["kubelet-arg"] == ["max-pods=110"] + PLANNED


@pytest.mark.parametrize(
    "bad, message",
    [
        ("server: [unclosed\n", "is not valid YAML at line"),
        ("- a\n- b\n", "is a YAML list, not a mapping"),
        ("just a string\n", "is a YAML str, not a mapping"),
        ("kubelet-arg: {a: b}\n", "kubelet-arg must be a string or a list of strings"),
        # files we would read differently from RKE2
        ("kubelet-arg:\n  - a=1\ntoken: x\nkubelet-arg:\n  - b=2\n", r"duplicate key 'kubelet-arg' at line 4 \(first at line 1\)"),
        ("server: a\nserver: b\n", r"duplicate key 'server' at line 2"),
        ("a: 1\n---\nb: 2\n", "holds 2 YAML documents"),
        ("kubelet-arg:\n  - [nested]\n", "kubelet-arg must be a string or a list of strings"),
    ],
)
def test_unusable_config_is_refused_and_nothing_written(bad, message):
    with pytest.raises(ConfigError, match=message) as info:
        merged_config(bad, "/etc/rancher/rke2/config.yaml", PLANNED)
    assert "nothing written" in str(info.value)


def test_taints_replace_same_key_and_effect_only():
    text, dummy = merged_config("node-taint:\n  - gpu=true:NoSchedule\n  - gpu=true:NoExecute\n", "c",
                                PLANNED, node_taints=["gpu=numa:NoSchedule"])
    assert yaml.safe_load(text)["node-taint"] == ["gpu=true:NoExecute", "gpu=numa:NoSchedule"]


def test_dropin_appends():
    data = yaml.safe_load(dropin_config(PLANNED, node_labels=["a=b"]))
    assert data == {"kubelet-arg+": PLANNED, "node-label+": ["a=b"]}


@pytest.mark.parametrize(
    "text",
    [
        "token: %s\n" % TOKEN,
        "agent-token: '%s'\n" % TOKEN,
        "server: x\ntoken: |\n  %s\n  more\nnext: 1\n" % TOKEN,
        "etcd-s3-secret-key: %s\n" % TOKEN,
    ],
)
def test_mask_hides_secret_values(text):
    masked = mask(text)
    assert TOKEN not in masked and MASK in masked


def test_mask_keeps_the_rest():
    assert mask(CONFIG).replace(MASK, TOKEN) == CONFIG


# ---------------------------------------------------------------- the user's bytes (issue: nothing lost)

USER_FILE = """# owned by terraform: edit in git, not here
server: "https://10.0.0.1:9345"   # the LB
token: '%s'

node-name: 0123
version: 1.20
debug: yes
kubelet-arg:
  # our fleet's defaults
  - max-pods=250
  - "reserved-cpus=0-1"   # old
  - --cpu-manager-policy=none
  - image-gc-high-threshold=90
protect-kernel-defaults: true  # CIS
""" % TOKEN


def test_merge_changes_only_the_managed_entries():
    text, dummy = merged_config(USER_FILE, "config.yaml", PLANNED)
    want = USER_FILE.replace('  - "reserved-cpus=0-1"   # old\n', "").replace("  - --cpu-manager-policy=none\n", "")
    want = want.replace("  - image-gc-high-threshold=90\n", "  - image-gc-high-threshold=90\n"
                        + "".join('  - "%s"\n' % a for a in PLANNED))
    assert text == want
    assert merged_config(text, "config.yaml", PLANNED)[0] is None


@pytest.mark.parametrize(
    "before, after",
    [
        # flow list, JSON-style file, single string, empty value, indentless list, no newline at the end
        ('kubelet-arg: [max-pods=1, "reserved-cpus=3"]  # x\nz: 1\n', 'kubelet-arg: [max-pods=1, "a=1"]  # x\nz: 1\n'),
        ('{"token": "t", "kubelet-arg": ["max-pods=1"]}\n', '{"token": "t", "kubelet-arg": ["max-pods=1", "a=1"]}\n'),
        ('{"token": "t"}\n', '{"token": "t", "kubelet-arg": ["a=1"]}\n'),
        ('{}\n', '{"kubelet-arg": ["a=1"]}\n'),
        ("kubelet-arg: max-pods=1\n", 'kubelet-arg: [max-pods=1, "a=1"]\n'),
        ("kubelet-arg:\nz: 1\n", 'kubelet-arg: ["a=1"]\nz: 1\n'),
        ("kubelet-arg: ~\n", 'kubelet-arg: ["a=1"]\n'),
        ("kubelet-arg:\n- max-pods=1\n- reserved-cpus=1\nz: 1", 'kubelet-arg:\n- max-pods=1\n- "a=1"\nz: 1'),
        ("z: 1", 'z: 1\nkubelet-arg:\n  - "a=1"\n'),
        ("z:\n  deep: 1\n# tail\n", 'z:\n  deep: 1\nkubelet-arg:\n  - "a=1"\n# tail\n'),
        ("kubelet-arg:\n  - max-pods=1\n...\n", 'kubelet-arg:\n  - max-pods=1\n  - "a=1"\n...\n'),
    ],
)
def test_merge_edits_every_list_style_in_place(before, after):
    assert merged_config(before, "c", ["a=1"], managed=("a", "reserved-cpus"))[0] == after


def test_kept_entries_that_mean_something_else_in_a_flow_list_are_quoted():
    text, dummy = merged_config("kubelet-arg: feature-gates=A=true,B=false\n", "c", ["a=1"], managed=("a",))
    assert yaml.safe_load(text)["kubelet-arg"] == ["feature-gates=A=true,B=false", "a=1"]


def test_labels_and_taints_are_edited_in_place_too():
    before = "node-label:\n  - gpu=true  # keep\n  - zone=a\nnode-taint: [gpu=true:NoSchedule]\n"
    text, dummy = merged_config(before, "c", [], node_labels=["zone=b"], node_taints=["gpu=numa:NoSchedule"])
    assert text == 'node-label:\n  - gpu=true  # keep\n  - "zone=b"\nnode-taint: ["gpu=numa:NoSchedule"]\n'


# ---------------------------------------------------------------- leaks: masking on parsed nodes

@pytest.mark.parametrize(
    "text",
    [
        '"token": "%s"\n' % TOKEN,
        "'token': %s\n" % TOKEN,
        '{"server": "x", "token": "%s"}\n' % TOKEN,
        "token:\n  %s\n" % TOKEN,
        "token: >-\n  %s\nnext: 1\n" % TOKEN,
        "base: &t %s\ntoken: *t\n" % TOKEN,
        "defaults:\n  x: &t %s\nnested:\n  agent-token: *t\n" % TOKEN,
        "etcd-s3-access-key: %s\n" % TOKEN,
        "db-password: %s\n" % TOKEN,
        "client-secret:\n  - %s\n" % TOKEN,
        "agent-token: !!str %s\n" % TOKEN,
    ],
)
def test_mask_finds_the_secret_however_it_is_written(text):
    masked = mask(text)
    assert TOKEN not in masked and MASK in masked


def test_mask_of_unparseable_text_shows_nothing():
    assert TOKEN not in mask("token: %s\nkubelet-arg: [unclosed\n" % TOKEN)


# ---------------------------------------------------------------- the flags RKE2 will really pass

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import (  # noqa: E402
    check_effective_kubelet_args,
    healthz_url,
    kubelet_flag_values,
)

PLAN = ["cpu-manager-policy=static", "reserved-cpus=0,56", "kube-reserved=memory=1Gi",
        "eviction-hard=memory.available<500Mi,nodefs.available<5%", "reserved-memory=0:memory=1524Mi"]
OURS = "/etc/rancher/rke2/config.yaml"
D = "/etc/rancher/rke2/config.yaml.d/"


def test_repeated_kubelet_flags_are_read_as_the_kubelet_reads_them():
    values = kubelet_flag_values([("a", "kube-reserved=cpu=1,memory=2Gi"), ("b", "kube-reserved=memory=1Gi"),
                                  ("a", "reserved-memory=0:memory=1Gi"), ("b", "reserved-memory=1:memory=1Gi"),
                                  ("a", "max-pods=10"), ("b", "max-pods=20"),
                                  ("a", "eviction-hard=memory.available<1Gi")])
    assert values["kube-reserved"] == ({"cpu": "1", "memory": "1Gi"}, ["a", "b"])
    assert values["reserved-memory"][0] == ["0:memory=1Gi", "1:memory=1Gi"]
    assert values["max-pods"][0] == "20"
    assert values["eviction-hard"][0] == {"memory.available": "1Gi"}


def test_the_plan_alone_or_with_harmless_other_files_passes():
    config = "token: x\nkubelet-arg:\n" + "".join("  - %s\n" % a for a in PLAN)
    assert check_effective_kubelet_args([(OURS, config)], PLAN, OURS) == []
    files = [(OURS, config), (D + "10-a.yaml", "kubelet-arg+: [max-pods=110, cpu-manager-policy=none]\n"),
             (D + "90-z.yaml", "kubelet-arg+: [cpu-manager-policy=static]\n")]
    assert check_effective_kubelet_args(files, PLAN, OURS) == [
        "cpu-manager-policy also set in %s10-a.yaml, %s90-z.yaml; the plan's value reaches the kubelet"
        " (it keeps the last)" % (D, D)]


@pytest.mark.parametrize(
    "other, message",
    [
        ("kubelet-arg+: [reserved-memory=1:memory=1Gi]\n",
         r"reserved-memory would be 0:memory=1524Mi;1:memory=1Gi, not the plan's 0:memory=1524Mi: .*60-x.yaml sets it"
         r" too \(reserved-memory entries add up across flags\)"),
        ("kubelet-arg+: [kube-reserved=cpu=2]\n",
         r"kube-reserved would be cpu=2,memory=1Gi, not the plan's memory=1Gi: .*60-x.yaml sets it too"
         r" \(the kubelet merges the keys of repeated kube-reserved flags\)"),
        ("kubelet-arg: [max-pods=110]\n",
         r"cpu-manager-policy would not reach the kubelet: .*60-x.yaml sets kubelet-arg, which replaces"),
    ],
)
def test_another_file_that_breaks_the_plan_is_refused_naming_it_and_the_flag(other, message):
    config = "kubelet-arg:\n" + "".join("  - %s\n" % a for a in PLAN)
    with pytest.raises(ConfigError, match=message) as info:
        check_effective_kubelet_args([(OURS, config), (D + "60-x.yaml", other)], PLAN, OURS)
    assert str(info.value).endswith("nothing written")


def test_in_dropin_mode_config_yaml_map_flags_merge_with_ours():
    ours = D + "50-rke2-numa.yaml"
    files = [(OURS, "kubelet-arg: [system-reserved=cpu=1,memory=2Gi]\n"),
             (ours, dropin_config(["system-reserved=memory=1Gi", "reserved-cpus=0"]))]
    with pytest.raises(ConfigError, match=r"system-reserved would be cpu=1,memory=1Gi.*/config.yaml sets it too"):
        check_effective_kubelet_args(files, ["system-reserved=memory=1Gi", "reserved-cpus=0"], ours)


@pytest.mark.parametrize(
    "config, url",
    [
        ({}, "http://127.0.0.1:10248/healthz"),
        ({"node-ip": "10.0.0.5"}, "http://127.0.0.1:10248/healthz"),
        ({"node-ip": "fd00::5"}, "http://[::1]:10248/healthz"),
        ({"node-ip": "fd00::5,10.0.0.5"}, "http://[::1]:10248/healthz"),
        ({"node-ip": ["10.0.0.5", "fd00::5"]}, "http://127.0.0.1:10248/healthz"),
        ({"kubelet-arg": ["healthz-port=10300", "healthz-bind-address=0.0.0.0"]}, "http://127.0.0.1:10300/healthz"),
        ({"node-ip": "10.0.0.5", "kubelet-arg": ["--healthz-bind-address=::"]}, "http://[::1]:10248/healthz"),
    ],
)
def test_the_healthz_url_follows_the_node_ip_family_as_rke2_binds_it(config, url):
    assert healthz_url(config) == url


# ---- the move from merge mode to the drop-in (Rancher-managed nodes), and Rancher's own file


def test_unmerge_takes_out_only_what_merge_mode_wrote_and_keeps_every_other_byte():
    merged, dummy = merged_config(CONFIG, "config.yaml", PLANNED, ["rke2-numa.maitred.io/numa-nodes=2"])
    new, removed = unmerged_config(merged, "config.yaml", ["rke2-numa.maitred.io/numa-nodes=2"])
    assert removed == PLANNED + ["rke2-numa.maitred.io/numa-nodes=2"], removed
    # the user's entries and every other line stay as they were, in place
    assert new == CONFIG.replace("  - reserved-cpus=0-1\n", "").replace("  - --cpu-manager-policy=none\n", "").replace(
        "  - reserved-cpus=0-3\n", ""), new
    assert unmerged_config(new, "config.yaml", ["rke2-numa.maitred.io/numa-nodes=2"]) == (None, [])


def test_unmerge_drops_a_list_it_leaves_empty_with_its_key():
    text = "# ours only\nkubelet-arg:\n  - cpu-manager-policy=static\n  - reserved-cpus=0,1\ntoken: %s\n" % TOKEN
    new, removed = unmerged_config(text, "config.yaml")
    assert new == "# ours only\ntoken: %s\n" % TOKEN and len(removed) == 2
    flow = "{token: %s, kubelet-arg: [cpu-manager-policy=static]}\n" % TOKEN
    assert yaml.safe_load(unmerged_config(flow, "config.yaml")[0]) == {"token": TOKEN, "kubelet-arg": []}


def _files(rancher_args, ours_text=None):
    files = {"/c/config.yaml": "token: %s\n" % TOKEN,
             "/c/config.yaml.d/50-rancher.yaml": "node-label: [rke.cattle.io/machine=m-1]\n" + (
                 "kubelet-arg: %s\n" % yaml.safe_dump(rancher_args, default_flow_style=True).strip() if rancher_args else "")}
    if ours_text:
        files["/c/config.yaml.d/50-rke2-numa.yaml"] = ours_text
    return files


def _plan(files, **kw):
    return plan_write("/c/config.yaml", "dropin", "/c/config.yaml.d/90-rke2-numa.yaml", None, files.get,
                      sorted(p for p in files if ".d/" in p), PLANNED, **kw)


def test_rancher_s_value_of_a_managed_flag_blocks_naming_it_ours_and_where_to_change_it():
    with pytest.raises(ConfigError) as e:
        _plan(_files(["cpu-manager-policy=none"]))
    assert "Rancher sets cpu-manager-policy=none (/c/config.yaml.d/50-rancher.yaml), the plan cpu-manager-policy=static" in str(e.value)
    assert "machineSelectorConfig" in str(e.value)
    # the same value as ours: fine, said as a warning
    dummy, report = _plan(_files(["cpu-manager-policy=static", "max-pods=200"]))
    assert report["elsewhere"] and "cpu-manager-policy also set in /c/config.yaml.d/50-rancher.yaml" in report["elsewhere"][0]


def test_an_earlier_drop_in_of_ours_goes_and_is_not_counted_twice():
    old = dropin_config(PLANNED)
    with pytest.raises(ConfigError):   # counted as someone else's: reserved-memory would add up
        _plan(_files([], old))
    new, report = _plan(_files([], old), ours=["/c/config.yaml.d/50-rke2-numa.yaml"])
    assert report["removed"] == ["/c/config.yaml.d/50-rke2-numa.yaml"] and new is not None
    assert [p for p, dummy in report["files"]] == ["/c/config.yaml", "/c/config.yaml.d/50-rancher.yaml",
                                                   "/c/config.yaml.d/90-rke2-numa.yaml"]


def test_a_label_a_later_plain_node_label_would_replace_is_refused():
    files = _files([])
    files["/c/config.yaml.d/95-other.yaml"] = "node-label: [zone=a]\n"
    with pytest.raises(ConfigError) as e:
        _plan(files, node_labels=["gpu=true"])
    assert "node-label gpu=true would not reach the Node: /c/config.yaml.d/95-other.yaml sets node-label" in str(e.value)
    dummy, report = _plan(_files([]), node_labels=["gpu=true"])   # after Rancher's, appended: fine
    assert report["removed"] == []
