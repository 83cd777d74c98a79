# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which distribution a host runs and which boot method holds its kernel arguments.

Distribution detection (os-release, a transactional system) -> one of boot_methods.METHODS,
and where the running system keeps what tells it (and its kernel command line).
Pure functions: boot_config and boot_params read the files.
"""

from __future__ import annotations

import shlex

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import CmdlineError

# Paths under the module's root.
PROC_CMDLINE = "proc/cmdline"
PROC_MOUNTS = "proc/mounts"
OS_RELEASE = "etc/os-release"
TRANSACTIONAL_UPDATE = "usr/sbin/transactional-update"


# os-release ID (or an ID_LIKE entry) -> method. SUSE IDs not listed here use
# transactional_update only on a transactional system (see detect_method).
DISTRO_METHODS = (
    ("debian", "grub_d"),
    ("ubuntu", "grub_d"),
    ("rhel", "grubby"),
    ("centos", "grubby"),
    ("rocky", "grubby"),
    ("almalinux", "grubby"),
    ("fedora", "grubby"),
    ("sle-micro", "transactional_update"),
    ("sl-micro", "transactional_update"),
    ("opensuse-microos", "transactional_update"),
    ("opensuse-leap-micro", "transactional_update"),
)
SUSE_FAMILY = ("suse", "sles", "opensuse")


def parse_os_release(text):
    """os-release KEY=value lines (shell quoting) -> dict."""
    out = {}
    for line in (text or "").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, dummy, value = line.partition("=")
        try:
            parts = shlex.split(value)
        except ValueError:
            continue
        out[key.strip()] = parts[0] if parts else ""
    return out


def is_transactional(mounts_text, has_transactional_update):
    """A transactional system: transactional-update installed and / a read-only btrfs.

    The same test community.general's zypper module uses.
    """
    if not has_transactional_update:
        return False
    for line in (mounts_text or "").splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[1] == "/":
            return fields[2] == "btrfs" and "ro" in fields[3].split(",")
    return False


def detect_method(os_release, transactional):
    """Boot method for an os-release dict; raises CmdlineError naming an unsupported distro."""
    distro = os_release.get("ID", "")
    like = os_release.get("ID_LIKE", "").split()
    known = dict(DISTRO_METHODS)
    if distro in known:
        return known[distro]
    if transactional and any(i == f or i.startswith(f + "-") for i in [distro] + like for f in SUSE_FAMILY):
        return "transactional_update"
    for other in like:
        if other in known and known[other] != "transactional_update":
            return known[other]
    supported = {}
    for name, method in DISTRO_METHODS:
        supported.setdefault(method, []).append(name)
    raise CmdlineError(
        "unsupported distribution: os-release ID=%r (ID_LIKE=%r). Supported: %s (grub_d); %s (grubby); %s and any "
        "transactional SUSE system (transactional_update). Set method to choose one explicitly."
        % (distro, " ".join(like), ", ".join(supported["grub_d"]), ", ".join(supported["grubby"]),
           ", ".join(supported["transactional_update"])))
