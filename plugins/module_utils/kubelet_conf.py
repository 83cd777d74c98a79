# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet's configuration drop-ins that RKE2 hands it, read as the kubelet reads them (host and controller).

The kubelet (--config-dir, KEP-3983: beta 1.31, GA 1.35) reads every ``*.conf`` under its drop-in folder, walked as
filepath.WalkDir walks it (each folder's entries in name order, a sub-folder entered where its name sorts), and merges
each over the ones before as a JSON merge patch; a file it cannot load stops it ("failed to load kubelet dropin file,
path: %s, error: %s"): cmd/kubelet/app/server.go mergeKubeletConfigurations.

RKE2 gives its kubelet ``--config-dir=<data-dir>/agent/etc/kubelet.conf.d`` and writes its own
``00-rke2-defaults.conf`` there at each start; a user's ``kubelet-arg: config-dir=DIR`` does not reach the kubelet as
a flag - RKE2 copies DIR to ``20-cli-config-dir/`` of that folder (k3s pkg/daemons/agent/agent.go extractConfigArgs,
RKE2 1.32+: rancher/rke2#4043). File mode uses ``/etc/rancher/rke2/kubelet.conf.d`` (beside config.yaml) and names it
with that kubelet-arg; our file there is ``90-rke2-numa.conf``, recognised by its first line.

A flag on the kubelet's command line (a ``kubelet-arg``) still wins over every file.
"""

from __future__ import annotations

import os
import stat

try:
    import yaml
except ImportError:  # pragma: no cover - node_state_info reports a missing PyYAML before it reads anything
    yaml = None

CONF_DIR_NAME = "kubelet.conf.d"
CONF_FILE_NAME = "90-rke2-numa.conf"
CONF_HEADER = ("# Managed by maitred.rke2_numa (rke2_numa_kubelet_config=file): the kubelet's CPU, Memory and Topology\n"
               "# Manager settings and the reservations they need. Do not edit; a kubelet-arg naming one of them would win\n"
               "# over this file.\n")

# Each managed kubelet flag's field in the kubelet's configuration file (k8s.io/kubelet config/v1beta1 types.go
# KubeletConfiguration; cmd/kubelet/app/options/options.go AddKubeletConfigFlags binds each flag to it). The one home of
# this table: plugin_utils/kubelet_rules.py's MANAGED_KUBELET_FIELDS is this.
FLAG_FIELDS = {"cpu-manager-policy": "cpuManagerPolicy", "cpu-manager-policy-options": "cpuManagerPolicyOptions",
               "topology-manager-policy": "topologyManagerPolicy", "topology-manager-scope": "topologyManagerScope",
               "topology-manager-policy-options": "topologyManagerPolicyOptions",
               "memory-manager-policy": "memoryManagerPolicy", "reserved-cpus": "reservedSystemCPUs",
               "kube-reserved": "kubeReserved", "system-reserved": "systemReserved", "eviction-hard": "evictionHard",
               "reserved-memory": "reservedMemory"}
# The fields that leave the host: the managed ones and the feature gates the rules read beside them.
READ_FIELDS = tuple(FLAG_FIELDS.values()) + ("featureGates",)


def conf_folder(config_path):
    """The kubelet drop-in folder file mode uses: beside RKE2's config.yaml."""
    return os.path.join(os.path.dirname(config_path), CONF_DIR_NAME)


def conf_path(config_path):
    """Our KubeletConfiguration drop-in for RKE2's ``config_path``."""
    return os.path.join(conf_folder(config_path), CONF_FILE_NAME)


def is_ours_conf(text):
    """Whether a kubelet drop-in's text is one this collection wrote."""
    return bool(text) and text.startswith(CONF_HEADER)


def walk_key(folder, path):
    """A sort key that puts the files under ``folder`` in filepath.WalkDir's order: each folder's entries by name, a
    sub-folder's files where the sub-folder's name sorts - the order of their relative paths' component lists."""
    return tuple(os.path.relpath(os.path.normpath(path), os.path.normpath(folder)).split(os.sep))


def conf_files(folder):
    """The ``*.conf`` files the kubelet would read from ``folder`` on this host, in its order ([] when none); a
    folder's symlink is not entered (WalkDir does not follow it)."""
    out = []
    for top, dirs, names in os.walk(folder):
        out += [os.path.join(top, n) for n in names if n.endswith(".conf")]
    return sorted(out, key=lambda p: walk_key(folder, p))


def parse_conf(text, path):
    """A drop-in's fields (a dict); ValueError in the kubelet's words when it would refuse to load it."""
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as e:
        raise ValueError("failed to load kubelet dropin file, path: %s, error: %s" % (path, str(e).splitlines()[0]))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError("failed to load kubelet dropin file, path: %s, error: not a KubeletConfiguration (a %s)"
                         % (path, type(data).__name__))
    return data


def read_conf_file(path):
    """{"path", "exists", "mode", "owner", "group", "values" (READ_FIELDS only), "ours", "error"} of one drop-in."""
    out = {"path": path, "exists": os.path.exists(path), "mode": None, "owner": None, "group": None,
           "values": {}, "ours": False, "error": None}
    if not out["exists"]:
        return out
    st = os.stat(path)
    out["mode"] = "%04o" % stat.S_IMODE(st.st_mode)
    out["owner"], out["group"] = str(st.st_uid), str(st.st_gid)
    try:
        import grp
        import pwd
        out["owner"], out["group"] = pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name
    except (ImportError, KeyError):
        pass
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8")
        data = parse_conf(text, path)
    except (IOError, OSError) as e:
        out["error"] = "cannot read %s: %s" % (path, e.strerror)
        return out
    except (UnicodeDecodeError, ValueError) as e:
        out["error"] = str(e)
        return out
    out["values"] = dict((k, v) for k, v in data.items() if k in READ_FIELDS)
    out["ours"] = is_ours_conf(text)
    return out


def read_conf_folder(config_path):
    """{"folder", "path" (ours), "files": [read_conf_file of each *.conf, in the kubelet's order]} on this host."""
    folder = conf_folder(config_path)
    return {"folder": folder, "path": conf_path(config_path), "files": [read_conf_file(p) for p in conf_files(folder)]}


def merge_patch(base, patch):
    """RFC 7386 JSON merge patch, as the kubelet merges its drop-ins (evanphx/json-patch MergePatch): maps merge key by
    key, null deletes, anything else - a list included - replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out
