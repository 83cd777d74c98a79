# -*- coding: utf-8 -*-
"""The one reader of RKE2's config (host and controller): the refusals in both wordings, RKE2's order and merge."""

from __future__ import annotations

import os

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.rke2_config_file import (
    ConfigError,
    as_list,
    config_files,
    decode,
    effective_config,
    load_config,
    parse,
    shared_keys,
)

P = "/etc/rancher/rke2/config.yaml"


def test_a_file_that_is_not_utf8_is_refused_naming_it():
    with pytest.raises(ConfigError, match=r"/etc/rancher/rke2/config.yaml is not UTF-8 text \(byte 7\)") as info:
        decode(b"token: \xff\xfe\n", "/etc/rancher/rke2/config.yaml")
    assert info.value.finding == "/etc/rancher/rke2/config.yaml is not UTF-8 (byte 7)"


@pytest.mark.parametrize("text, refusal, finding", [
    ("server: [unclosed\n", P + " is not valid YAML at line 2: nothing written",
     P + " is not valid YAML at line 2, column 1: expected ',' or ']', but got '<stream end>'"),
    ("a: 1\n---\nb: 2\n", P + " holds 2 YAML documents, RKE2 reads one: nothing written",
     P + " is not valid YAML at line 2, column 1: but found another document"),
    ("- a\n- b\n", P + " is a YAML list, not a mapping of RKE2 options: nothing written", P + " is not a YAML mapping"),
    ("just a string\n", P + " is a YAML str, not a mapping of RKE2 options: nothing written", P + " is not a YAML mapping"),
    ("!!set {a, b}\n", P + " is a YAML set, not a mapping of RKE2 options: nothing written", P + " is not a YAML mapping"),
    ("server: a\nserver: b\n", P + ": duplicate key 'server' at line 2 (first at line 1): nothing written",
     P + ": duplicate key 'server' at line 2 (first at line 1)"),
    ("a:\n  b:\n    c: 1\n    c: 2\n", P + ": duplicate key 'c' at line 4 (first at line 3): nothing written",
     P + ": duplicate key 'c' at line 4 (first at line 3)"),
    ("a: !foo x\n", P + " is not valid YAML at line 1: nothing written",
     P + " is not valid YAML at line 1, column 4: could not determine a constructor for the tag '!foo'"),
])
def test_a_file_rke2_would_read_otherwise_is_refused_in_the_action_s_words_and_reported_in_the_host_s(text, refusal, finding):
    with pytest.raises(ConfigError) as info:
        parse(text, P)
    assert str(info.value) == refusal and info.value.finding == finding


@pytest.mark.parametrize("text", ["", "# only a comment\n", "---\n", "~\n"])
def test_an_empty_or_null_document_sets_nothing(text):
    assert parse(text, P) == ({}, None) and load_config(text, P) == {}


def test_a_refusal_the_host_does_not_word_otherwise_is_the_same_on_both():
    with pytest.raises(ConfigError) as info:
        as_list({"a": "b"}, "kubelet-arg", P)
    assert info.value.finding == str(info.value) == P + ": kubelet-arg must be a string or a list of strings: nothing written"


def test_effective_config_follows_rke2_order():
    files = [("config.yaml", "token: x\nkubelet-arg:\n  - max-pods=110\n  - reserved-cpus=0\n"),
             ("config.yaml.d/10-a.yaml", "kubelet-arg+:\n  - reserved-cpus=0,4\n"),
             ("config.yaml.d/20-b.yaml", "node-label: [a=b]\n")]
    assert effective_config(files) == {"token": "x", "kubelet-arg": ["max-pods=110", "reserved-cpus=0", "reserved-cpus=0,4"],
                                       "node-label": ["a=b"]}
    assert effective_config(files + [("config.yaml.d/30-c.yaml", "kubelet-arg: [x=1]\n")])["kubelet-arg"] == ["x=1"]


def test_the_host_lists_config_yaml_then_its_yaml_and_yml_drop_ins_by_name(tmp_path):
    config = str(tmp_path / "config.yaml")
    assert config_files(config) == [config]
    folder = tmp_path / "config.yaml.d"
    folder.mkdir()
    for name in ("90-z.yml", "50-rancher.yaml", "10-a.yaml", "20-b.yaml.bak", "README", "95-x.YAML", "96-y.yMl"):
        (folder / name).write_text("")
    (folder / "70-dir.yaml").mkdir()   # a folder is not a drop-in (dotDFiles: file.IsDir())
    # k3s reads them whatever the case of their suffix (util.HasSuffixI), in name order (os.ReadDir)
    assert config_files(config) == [config] + [os.path.join(str(folder), n) for n in ("10-a.yaml", "50-rancher.yaml", "90-z.yml",
                                                                                      "95-x.YAML", "96-y.yMl")]


def test_a_list_that_shares_its_node_with_another_place_is_named():
    data, root = parse("base: &k [a=1]\nkubelet-arg: *k\nnode-label+: [x=y]\nnode-ip: &ip 10.0.0.1\nother: *ip\n", P)
    assert shared_keys(root, ("kubelet-arg", "node-label", "node-ip")) == ["kubelet-arg", "node-ip"]
    assert shared_keys(None, ("kubelet-arg",)) == []


@pytest.mark.parametrize("text", [
    "token: abc\nkubelet-arg: [cpu-manager-policy=static, 'a=b']\nnode-label+:\n  - x=y\n",
    "base: &k [a=1]\nkubelet-arg: *k\nnode-ip: &ip 10.0.0.1\nother: *ip\n",
    "n: 1\nf: 1.5\nb: yes\nnull-ish: ~\nwhen: 2026-12-05\nbin: !!binary aGk=\nnested: {a: {b: [1, 2]}}\n",
    "defaults: &d {kubelet-arg: [a=1], node-name: x}\nagent:\n  <<: *d\n  node-name: y\n",
    "<<: [{a: 1}, {b: 2}]\nc: 3\n",
    "=: value\nother: 1\n",
])
def test_the_data_is_what_safe_load_builds_and_the_nodes_stay_as_composed(text):
    # parse builds the data from the node it composed (one parse, not two); a merge key ("<<") or a value key ("=")
    # makes the constructor rewrite the nodes it builds from, so those files are built from the text instead
    yaml = pytest.importorskip("yaml")
    data, root = parse(text, P)
    assert data == yaml.safe_load(text)
    fresh = yaml.compose(text, Loader=yaml.SafeLoader)

    def shape(node):
        if isinstance(node, yaml.MappingNode):
            return [(shape(k), shape(v)) for k, v in node.value]
        if isinstance(node, yaml.SequenceNode):
            return [shape(v) for v in node.value]
        return (node.tag, node.value, node.start_mark.index)
    assert shape(root) == shape(fresh)
