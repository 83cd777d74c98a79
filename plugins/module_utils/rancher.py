# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is this RKE2 node managed by Rancher (rancher-system-agent)? Read on the host, from files only.

Facts, from the sources (rancher/system-agent install.sh and pkg/applyinator, rancher/system-agent-installer-rke2
package/run.sh, rancher/rancher pkg/capr/planner):

- install.sh writes the unit ``/etc/systemd/system/rancher-system-agent.service`` and the agent's configuration in
  ``/etc/rancher/agent/`` (CATTLE_AGENT_CONFIG_DIR); its var folder is ``/var/lib/rancher/agent``
  (``/etc/rancher/agent/var`` on transactional-update systems), with ``interlock/``;
- the applyinator creates ``interlock/applyinator-active`` while it applies a plan (and ``restart-pending`` while
  the agent restarts itself): Rancher is at work on the node;
- the RKE2 installer plan records Rancher's restart stamp in
  ``/var/lib/rancher/rke2/system-agent-installer/rke2_restart_stamp`` and restarts rke2 when the stamp changes;
- the planner writes its RKE2 settings to ``config.yaml.d/50-rancher.yaml`` (plain keys: ``node-label`` always,
  ``node-taint``, ``kubelet-arg`` as soon as a Rancher user sets one), read after config.yaml.

Any one of them is evidence. The file beside RKE2's config decides RKE2's merge, so it alone marks the node.
"""

from __future__ import annotations

import os
import time

RANCHER_CONFIG_FILE = "50-rancher.yaml"
SYSTEM_AGENT_UNIT = "etc/systemd/system/rancher-system-agent.service"
AGENT_CONFIG_DIR = "etc/rancher/agent"
AGENT_VAR_DIRS = ("var/lib/rancher/agent", "etc/rancher/agent/var")
RESTART_STAMP = "var/lib/rancher/rke2/system-agent-installer/rke2_restart_stamp"
INTERLOCKS = {
    "applyinator-active": "rancher-system-agent is applying a plan",
    "restart-pending": "rancher-system-agent is restarting itself to apply a plan",
}


def rancher_config_file(config_path):
    """Where Rancher's RKE2 settings are: config.yaml.d/50-rancher.yaml beside RKE2's config file."""
    return os.path.join(config_path + ".d", RANCHER_CONFIG_FILE)


def read_rancher(root, config_path, now=None):
    """{"managed_by": "rancher"|"none", "evidence": [...], "at_work": [...]} for this host.

    ``root``: where the system's files are (``/`` on a node); ``config_path``: RKE2's config file (its
    ``config.yaml.d`` holds Rancher's file). ``evidence``: the paths found, each with what it is; ``at_work``:
    the interlock files present, each with what it means and its age in seconds."""
    now = time.time() if now is None else now
    evidence, at_work = [], []

    def under(rel):
        return os.path.join(root, rel)

    rancher_file = rancher_config_file(config_path)
    if os.path.lexists(rancher_file):
        evidence.append("%s (Rancher's RKE2 settings)" % rancher_file)
    for rel, what in ((SYSTEM_AGENT_UNIT, "rancher-system-agent's unit"), (AGENT_CONFIG_DIR, "rancher-system-agent's configuration"),
                      (RESTART_STAMP, "Rancher's restart stamp for rke2")):
        if os.path.lexists(under(rel)):
            evidence.append("/%s (%s)" % (rel, what))
    for var in AGENT_VAR_DIRS:
        for name, what in sorted(INTERLOCKS.items()):
            rel = os.path.join(var, "interlock", name)
            try:
                age = max(0, int(now - os.lstat(under(rel)).st_mtime))
            except OSError:
                continue
            at_work.append("%s (/%s, for %d s)" % (what, rel, age))
    return {"managed_by": "rancher" if evidence or at_work else "none", "evidence": evidence, "at_work": at_work}


def rancher_signs(read):
    """Every sign of Rancher in a read (read_rancher's result, or plugin_utils/rancher.managed_by's): its evidence,
    then what it is doing now - what a message that names why a node counts as Rancher's lists."""
    read = read or {}
    return list(read.get("evidence") or []) + list(read.get("at_work") or [])
