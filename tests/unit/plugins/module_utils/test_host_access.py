# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which place on the way to root's files a user cannot pass. The kernel's answer for another user is given by
``refused`` (the places os.access would deny): the tests run as root, where it allows everything; the playbook test
(test_first_hour) runs the real thing as nobody."""

from __future__ import annotations

import os

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils import host_access


@pytest.fixture
def node(tmp_path, monkeypatch):
    (tmp_path / "etc/rancher/rke2/config.yaml.d").mkdir(parents=True)
    (tmp_path / "etc/rancher/rke2/config.yaml").write_text("token: x\n")
    (tmp_path / "var/lib/kubelet").mkdir(parents=True)
    (tmp_path / "var/lib/kubelet/cpu_manager_state").write_text("{}")
    refused = set()
    monkeypatch.setattr(host_access, "_can", lambda path, mode: os.path.abspath(path) not in refused)
    return tmp_path, refused


def test_everything_readable_is_no_place(node):
    root, refused = node
    assert host_access.denied(files=[str(root / "etc/rancher/rke2/config.yaml"), str(root / "var/lib/kubelet/cpu_manager_state")],
                              folders=[str(root / "var/lib/kubelet")]) == []


def test_a_file_it_cannot_read_and_a_folder_it_cannot_search_are_named_once(node):
    root, refused = node
    config, kubelet = str(root / "etc/rancher/rke2/config.yaml"), str(root / "var/lib/kubelet")
    refused.update((config, kubelet))
    found = host_access.denied(files=[config, kubelet + "/cpu_manager_state", kubelet + "/memory_manager_state"], folders=[kubelet])
    # the checkpoint behind an unsearchable folder looks absent to that user: the folder is named, once
    assert found == [config, kubelet]


def test_the_first_folder_on_the_way_is_named(node):
    root, refused = node
    refused.add(str(root / "etc/rancher/rke2"))
    assert host_access.blocked_at(str(root / "etc/rancher/rke2/config.yaml")) == str(root / "etc/rancher/rke2")
    assert host_access.blocked_at(str(root / "etc/rancher/rke2/config.yaml.d"), folder=True) == str(root / "etc/rancher/rke2")


def test_what_is_not_there_is_not_a_refusal(node):
    root, refused = node
    refused.add(str(root / "opt"))
    assert host_access.blocked_at(str(root / "etc/rancher/rke2/nothing.yaml")) is None
    assert host_access.blocked_at(str(root / "opt/x/y")) is None, "a folder that does not exist is not in the way"
    (root / "dangling").symlink_to(root / "gone")
    assert host_access.blocked_at(str(root / "dangling")) is None


def test_a_folder_it_may_search_but_not_list_is_named_as_a_folder_only(node, monkeypatch):
    root, refused = node
    dropins = str(root / "etc/rancher/rke2/config.yaml.d")
    monkeypatch.setattr(host_access, "_can", lambda path, mode: not (os.path.abspath(path) == dropins and mode & os.R_OK))
    assert host_access.blocked_at(dropins, folder=True) == dropins
    assert host_access.blocked_at(dropins + "/50-rancher.yaml") is None


def test_the_reason_names_the_places_the_user_and_the_way_out():
    assert host_access.denied_reason(["/etc/rancher/rke2/config.yaml", "/var/lib/kubelet"], "ops") == \
        "cannot read /etc/rancher/rke2/config.yaml, /var/lib/kubelet as ops (run with become)"
