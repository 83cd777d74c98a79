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
