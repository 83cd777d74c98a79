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
    owned_flags_elsewhere,
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


def test_dropin_appends_and_reports_flags_config_sets_too():
    data = yaml.safe_load(dropin_config(PLANNED, node_labels=["a=b"]))
    assert data == {"kubelet-arg+": PLANNED, "node-label+": ["a=b"]}
    assert owned_flags_elsewhere(CONFIG, "config.yaml") == ["cpu-manager-policy", "reserved-cpus"]


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


def test_a_file_that_is_not_utf8_is_refused_naming_it():
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import decode
    with pytest.raises(ConfigError, match=r"/etc/rancher/rke2/config.yaml is not UTF-8 text \(byte 7\)"):
        decode(b"token: \xff\xfe\n", "/etc/rancher/rke2/config.yaml")


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
