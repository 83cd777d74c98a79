#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: node_state_info
short_description: Read everything the compliance decision needs from an RKE2 GPU worker, in one call
version_added: 0.1.0
description:
  - Reads, in one module call, what the controller needs to decide whether a node already runs its plan
    (the C(maitred.rke2_numa.check) and C(maitred.rke2_numa.rolling) playbooks) - the NUMA topology with
    the running kernel command line and hugepage pools, the kubelet's CPU and Memory Manager checkpoints,
    the boot configuration the boot-parameter method plans from, and the C(kubelet-arg), C(node-label),
    C(node-taint) and C(node-ip) entries of RKE2's C(config.yaml) and C(config.yaml.d/*.yaml|*.yml).
  - The RKE2 config files are parsed on the host and only those keys leave it - the join token and every
    other key never appear in the result. A file that cannot be parsed is reported by line and column
    (and, for a duplicate key, the key's name) only, never with its text or any value.
  - Root's files (C(config.yaml), the kubelet's folder, Rancher's agent folders) are read as root (C(become)). Run
    as a user who cannot read them, the module fails before reading them - C(not checked - cannot read <places> as
    <user> (run with become)), with RV(access) - so that a node is never judged on what could not be seen.
  - Only reads. Needs PyYAML on the host for the RKE2 config (Debian C(python3-yaml), RHEL C(python3-pyyaml)).
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.node
  - maitred.rke2_numa.shared.kubelet_dir
  - maitred.rke2_numa.boot_method.node_state_info
options:
  sysfs_root:
    description: Where the running kernel's C(sys/) and C(proc/) are (a copied tree in tests).
    type: path
    default: /
  boot_root:
    description: Directory that holds the boot configuration (C(etc/default/grub), C(etc/kernel/cmdline), ...).
    type: path
    default: /
  config_path:
    description: RKE2's config file; drop-ins are read from C(<config_path>.d).
    type: path
    default: /etc/rancher/rke2/config.yaml
  units_root:
    description:
      - The root under which the per-NUMA hugepages unit of the C(maitred.rke2_numa.hugepages) role is read
        (C(etc/systemd/system/rke2-numa-hugepages.service), its C(multi-user.target.wants) link,
        C(usr/local/sbin/rke2-numa-hugepages)); C(/) on a node, a copied tree in tests.
    type: path
    default: /
  nfd_features_file:
    description:
      - The feature file the C(maitred.rke2_numa.labels) role writes for Node Feature Discovery's local source
        (C(<rke2_numa_nfd_features_dir>/rke2-numa)). Read when set, up to 64 KiB and one byte (NFD ignores a larger
        file); it holds only labels. Not read when unset (RV(nfd_features) is null).
    type: path
  rancher_root:
    description:
      - Where rancher-system-agent's files are looked for (its unit, C(/etc/rancher/agent), its interlocks, Rancher's
        restart stamp), as M(maitred.rke2_numa.rancher_agent_info) does, and RKE2's runtime link
        (C(var/lib/rancher/rke2/bin), RV(rke2_runtime)); C(/) on a node, a copied tree in tests.
        Rancher's C(50-rancher.yaml) is looked for beside O(config_path).
    type: path
    default: /
"""

EXAMPLES = r"""
- name: Read the node's state for the compliance check
  maitred.rke2_numa.node_state_info:
  register: __state
"""

RETURN = r"""
topology:
  description: As M(maitred.rke2_numa.topology_info) returns it (with C(cmdline) and per-node hugepage pools).
  returned: always
  type: dict
access:
  description:
    - C(user) (the user the module ran as) and C(denied) - the places on the way to the files it reads that this user
      cannot read (a file, or a folder it cannot search). When C(denied) is not empty the module fails, with this
      key and RV(topology) only.
  returned: always
  type: dict
  sample: {user: ops, denied: [/etc/rancher/rke2/config.yaml, /var/lib/kubelet]}
kubelet_state:
  description: C(cpu_manager) and C(memory_manager) as M(maitred.rke2_numa.kubelet_state_info) returns them.
  returned: always
  type: dict
boot:
  description:
    - C(method) and the files (and C(grubby --info=ALL) entries) that method plans from; the controller computes
      from them whether M(maitred.rke2_numa.boot_params) would change anything. C(error) when they cannot be read.
  returned: always
  type: dict
hugepages_unit:
  description:
    - The per-NUMA hugepages unit as found - C(unit), C(enabled), C(script) (whether each exists), C(sets) (the size
      and the pages per NUMA node its script sets, or null when it holds no such lines), C(error).
  returned: success
  type: dict
  sample: {unit: true, enabled: true, script: true, sets: {size_kb: 1048576, per_node: {"0": 8, "1": 8}}, error: null}
nfd_features:
  description:
    - The NFD feature file as found - C(path), C(exists), C(mode), C(text) (at most 64 KiB and one byte), C(error);
      null when O(nfd_features_file) is not set.
  returned: success
  type: dict
  sample: {path: /etc/kubernetes/node-feature-discovery/features.d/rke2-numa, exists: true, mode: "0644",
           text: "rke2-numa.maitred.io/numa-nodes=2\n", error: null}
rke2:
  description:
    - C(files) - RKE2's config files in the order RKE2 reads them, each with C(path), C(exists), C(mode), C(owner),
      C(group), C(link) (the target of a symlink), C(values) (only C(kubelet-arg), C(node-label), C(node-taint),
      C(node-ip), C(data-dir) and their C(+) forms), C(shared) (those of these keys whose value shares a YAML node with another
      place of the file - an anchor and its alias - which the merge cannot edit in place), C(ours) (the file starts
      with the header of this collection's drop-in) and C(error).
  returned: always
  type: dict
  sample: {files: [{path: /etc/rancher/rke2/config.yaml, exists: true, mode: "0600", owner: root, group: root, link: null,
                    values: {kubelet-arg: [max-pods=250]}, shared: [], ours: false, error: null}]}
kubelet_conf:
  description:
    - The kubelet drop-in folder of C(rke2_numa_kubelet_config=file) beside O(config_path) (C(kubelet.conf.d)) -
      C(folder), C(path) (our C(90-rke2-numa.conf)) and C(files), each C(*.conf) in the kubelet's order (sub-folders
      too) with C(path), C(exists), C(mode), C(owner), C(group), C(values) (only the managed settings' fields and
      C(featureGates)), C(ours) (the file starts with this collection's header) and C(error) (the kubelet's words when
      it could not load it).
  returned: success
  type: dict
  sample: {folder: /etc/rancher/rke2/kubelet.conf.d, path: /etc/rancher/rke2/kubelet.conf.d/90-rke2-numa.conf,
           files: [{path: /etc/rancher/rke2/kubelet.conf.d/90-rke2-numa.conf, exists: true, mode: "0600", owner: root,
                    group: root, values: {cpuManagerPolicy: static}, ours: true, error: null}]}
rke2_runtime:
  description:
    - The RKE2 the node runs, read under O(rancher_root) in the C(data-dir) RKE2's files set (else
      C(/var/lib/rancher/rke2)) as M(maitred.rke2_numa.topology_info) reads it (its
      RV(maitred.rke2_numa.topology_info#module:rke2_runtime)) - C(version), C(path), C(link), C(error).
    - The plan is made for this kubelet's minor when C(rke2_numa_kubernetes_version) is not given and the check did not
      read the node's C(status.nodeInfo.kubeletVersion) from the API.
  returned: success
  type: dict
  sample: {version: v1.37.2+rke2r1, path: /var/lib/rancher/rke2/bin,
           link: /var/lib/rancher/rke2/data/v1.37.2-rke2r1-0123456789ab/bin, error: null}
rancher:
  description: Whether Rancher's system-agent manages the node, as M(maitred.rke2_numa.rancher_agent_info) returns it.
  returned: success
  type: dict
  sample: {managed_by: rancher, evidence: ["/etc/rancher/rke2/config.yaml.d/50-rancher.yaml (Rancher's RKE2 settings)"], at_work: []}
"""

import grp
import json
import os
import pwd
import stat

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.maitred.rke2_numa.plugins.module_utils import boot_config as bc
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_methods import METHODS
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import CmdlineError
from ansible_collections.maitred.rke2_numa.plugins.module_utils.host_access import denied, denied_reason, user_name
from ansible_collections.maitred.rke2_numa.plugins.module_utils.hugepages_unit import read_unit
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kubelet_checkpoints import CPU_STATE, MEMORY_STATE, read_checkpoints
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kubelet_conf import conf_folder, read_conf_folder
from ansible_collections.maitred.rke2_numa.plugins.module_utils.rancher import AGENT_VAR_DIRS, read_rancher
from ansible_collections.maitred.rke2_numa.plugins.module_utils.rke2_config_file import (
    HAS_YAML,
    ConfigError,
    config_files,
    decode,
    parse,
    shared_keys,
)
from ansible_collections.maitred.rke2_numa.plugins.module_utils.rke2_dropin import is_ours
from ansible_collections.maitred.rke2_numa.plugins.module_utils.rke2_runtime import DEFAULT_DATA_DIR, runtime_version
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import TopologyError, read_topology

# The only RKE2 config keys that leave the host (with their "+" forms: k3s configfilearg appends them); data-dir: where
# the RKE2 runtime the kubelet runs from is (rke2_runtime).
RKE2_KEYS = ("kubelet-arg", "node-label", "node-taint", "node-ip", "data-dir")


def data_dir(files):
    """RKE2's data-dir as its files set it (a plain key: the last file that sets it wins), else its default."""
    value = None
    for f in files:
        if f["exists"] and not f["error"] and isinstance(f["values"].get("data-dir"), str) and f["values"]["data-dir"].strip():
            value = f["values"]["data-dir"].strip()
    return value or DEFAULT_DATA_DIR


def _owner(uid, gid):
    try:
        owner = pwd.getpwuid(uid).pw_name
    except KeyError:
        owner = str(uid)
    try:
        group = grp.getgrgid(gid).gr_name
    except KeyError:
        group = str(gid)
    return owner, group


def read_rke2_file(path):
    """The file's metadata and its RKE2_KEYS entries; never any other key, never its text."""
    out = {"path": path, "exists": os.path.exists(path), "mode": None, "owner": None, "group": None,
           "link": os.readlink(path) if os.path.islink(path) else None, "values": {}, "shared": [], "ours": False, "error": None}
    if not out["exists"]:
        return out
    st = os.stat(path)
    out["mode"] = "%04o" % stat.S_IMODE(st.st_mode)
    out["owner"], out["group"] = _owner(st.st_uid, st.st_gid)
    try:
        with open(path, "rb") as handle:
            text = decode(handle.read(), path)
        data, root = parse(text, path)
    except ConfigError as e:
        out["error"] = e.finding
        return out
    except (IOError, OSError) as e:
        out["error"] = "cannot read %s: %s" % (path, e.strerror)
        return out
    values = {k: v for k, v in data.items() if isinstance(k, str) and k.rstrip("+") in RKE2_KEYS}
    try:
        json.dumps(values)
    except ValueError:  # an alias inside the node it names: no finite value (nor can RKE2 read one)
        out["error"] = "%s: a YAML alias refers to a node that holds it" % path
        return out
    out["values"], out["shared"], out["ours"] = values, shared_keys(root, RKE2_KEYS), is_ours(text)
    return out


# NFD's local source ignores a feature file above 64 kB: one byte more tells the controller it is too big.
FEATURE_FILE_READ = 64 * 1024 + 1


def read_feature_file(path):
    """{"path", "exists", "mode", "text", "error"} of the labels role's NFD feature file (it holds only labels)."""
    out = {"path": path, "exists": os.path.lexists(path), "mode": None, "text": None, "error": None}
    if not out["exists"]:
        return out
    try:
        out["mode"] = "%04o" % stat.S_IMODE(os.stat(path).st_mode)
        with open(path, "rb") as handle:
            out["text"] = handle.read(FEATURE_FILE_READ).decode("utf-8", "replace")
    except (IOError, OSError) as e:
        out["error"] = "cannot read %s: %s" % (path, e.strerror)
    return out


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sysfs_root=dict(type="path", default="/"),
            boot_root=dict(type="path", default="/"),
            boot_method=dict(type="str", choices=["auto"] + list(METHODS), default="auto"),
            kubelet_dir=dict(type="path", default="/var/lib/kubelet"),
            config_path=dict(type="path", default="/etc/rancher/rke2/config.yaml"),
            units_root=dict(type="path", default="/"),
            nfd_features_file=dict(type="path"),
            rancher_root=dict(type="path", default="/"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    try:
        topology = read_topology(p["sysfs_root"])
    except TopologyError as e:
        module.fail_json(msg="cannot read the topology: %s" % e)

    # root's files (config.yaml is 0600, /var/lib/kubelet and Rancher's agent folders root's): asked before they are
    # read - a node read as a user who cannot read them is not judged on what could not be seen
    access = {"user": user_name(), "denied": denied(
        files=[p["config_path"], p["nfd_features_file"]]
        + [os.path.join(p["kubelet_dir"], name) for name in (CPU_STATE, MEMORY_STATE)],
        folders=[p["config_path"] + ".d", conf_folder(p["config_path"]), p["kubelet_dir"]]
        + [os.path.join(p["rancher_root"], var, "interlock") for var in AGENT_VAR_DIRS])}
    if access["denied"]:
        module.fail_json(msg="not checked: " + denied_reason(access["denied"], access["user"]), access=access, topology=topology)

    if not HAS_YAML:
        module.fail_json(msg=missing_required_lib("PyYAML", reason="to read RKE2's config on the host"))

    def cannot_read(msg, **dummy):
        raise CmdlineError(msg)

    try:
        method = bc.detect_method(p["boot_root"], p["sysfs_root"]) if p["boot_method"] == "auto" else p["boot_method"]
        boot = bc.read_boot_inputs(method, p["boot_root"], bc.tool_reader(module, False, cannot_read))
        boot["error"] = None
    except (CmdlineError, IOError, OSError) as e:
        boot = {"method": None, "error": str(e)}
    files = [read_rke2_file(f) for f in config_files(p["config_path"])]
    module.exit_json(changed=False, topology=topology, access=access, kubelet_state=read_checkpoints(p["kubelet_dir"]), boot=boot,
                     rke2={"files": files},
                     kubelet_conf=read_conf_folder(p["config_path"]),
                     hugepages_unit=read_unit(p["units_root"]), rancher=read_rancher(p["rancher_root"], p["config_path"]),
                     rke2_runtime=runtime_version(data_dir(files), root=p["rancher_root"]),
                     nfd_features=read_feature_file(p["nfd_features_file"]) if p["nfd_features_file"] else None)


if __name__ == "__main__":
    main()
