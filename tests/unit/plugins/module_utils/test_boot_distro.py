# -*- coding: utf-8 -*-
"""boot_distro: os-release, transactional systems; boot_plan.detect: the boot method of each distribution."""

from __future__ import annotations

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_distro import is_transactional, parse_os_release
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_plan import detect as detect_method
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import CmdlineError


def test_parse_os_release():
    text = 'NAME="SL Micro"\nVERSION="6.0"\nID="sl-micro"\nID_LIKE="suse"\n# comment\nPRETTY_NAME=\'SUSE Linux Micro 6.0\'\n'
    assert parse_os_release(text) == {"NAME": "SL Micro", "VERSION": "6.0", "ID": "sl-micro", "ID_LIKE": "suse",
                                      "PRETTY_NAME": "SUSE Linux Micro 6.0"}


@pytest.mark.parametrize("mounts, tu, expected", [
    ("/dev/vda3 / btrfs ro,relatime,subvol=/@/.snapshots/1/snapshot 0 0\n", True, True),
    ("/dev/vda3 / btrfs rw,relatime 0 0\n", True, False),
    ("/dev/vda3 / btrfs ro,relatime 0 0\n", False, False),
    ("/dev/vda3 / ext4 ro 0 0\n", True, False),
    ("", True, False),
])
def test_is_transactional(mounts, tu, expected):
    assert is_transactional(mounts, tu) is expected


@pytest.mark.parametrize("release, transactional, method", [
    ({"ID": "debian"}, False, "grub_d"),
    ({"ID": "ubuntu", "ID_LIKE": "debian"}, False, "grub_d"),
    ({"ID": "linuxmint", "ID_LIKE": "ubuntu debian"}, False, "grub_d"),
    ({"ID": "rhel", "ID_LIKE": "fedora"}, False, "grubby"),
    ({"ID": "rocky", "ID_LIKE": "rhel centos fedora"}, False, "grubby"),
    ({"ID": "almalinux"}, False, "grubby"),
    ({"ID": "centos"}, False, "grubby"),
    ({"ID": "fedora"}, False, "grubby"),
    ({"ID": "ol", "ID_LIKE": "fedora"}, False, "grubby"),
    ({"ID": "sle-micro", "ID_LIKE": "suse"}, False, "transactional_update"),
    ({"ID": "sl-micro", "ID_LIKE": "suse"}, False, "transactional_update"),
    ({"ID": "opensuse-microos", "ID_LIKE": "suse opensuse opensuse-tumbleweed"}, True, "transactional_update"),
    ({"ID": "opensuse-leap-micro", "ID_LIKE": "suse opensuse"}, True, "transactional_update"),
    ({"ID": "sles", "ID_LIKE": "suse"}, True, "transactional_update"),
])
def test_detect_method(release, transactional, method):
    assert detect_method(release, transactional) == method


@pytest.mark.parametrize("release, transactional", [
    ({"ID": "arch"}, False),
    ({"ID": "sles", "ID_LIKE": "suse"}, False),
    ({}, False),
])
def test_unsupported_distro_is_named(release, transactional):
    with pytest.raises(CmdlineError) as e:
        detect_method(release, transactional)
    msg = str(e.value)
    assert "unsupported distribution: os-release ID=%r" % release.get("ID", "") in msg
    assert "debian, ubuntu (grub_d)" in msg and "rhel, centos, rocky, almalinux, fedora (grubby)" in msg
    assert "sle-micro" in msg and "transactional_update" in msg
