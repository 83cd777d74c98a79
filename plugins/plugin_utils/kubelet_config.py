# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan's kubelet settings as a KubeletConfiguration drop-in, and back (controller side).

The kubelet's flags for these settings are deprecated in favour of its configuration file ("This parameter should be
set via the config file specified by the Kubelet's --config flag": cmd/kubelet/app/options/options.go), and its drop-in
directory (--config-dir, KEP-3983: beta 1.31, GA 1.35) takes ``*.conf`` files in name order, each merged over the ones
before as a JSON merge patch - a map key by key, a list as a whole (cmd/kubelet/app/server.go
mergeKubeletConfigurations). RKE2 gives its kubelet ``--config-dir=<data-dir>/agent/etc/kubelet.conf.d``, rewrites
``00-rke2-defaults.conf`` there at every start, and copies ``/etc/rancher/rke2/kubelet.conf.d`` after it (rancher/rke2#4043,
k3s pkg/daemons/agent). A flag on the command line still wins over every file.

Each managed flag has its field (kubelet_rules.MANAGED_KUBELET_FIELDS); the values are written as the kubelet's
v1beta1 types read them: maps of strings, ``evictionHard`` keyed by signal (``memory.available: 500Mi``, the flag's
``<`` gone), ``reservedMemory`` a list of ``{numaNode, limits}`` (MemoryReservation).
"""

from __future__ import annotations

import os

import yaml

from ansible_collections.maitred.rke2_numa.plugins.module_utils.kubelet_conf import CONF_HEADER, merge_patch, parse_conf, walk_key
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_rules import (
    ACCUMULATED_FLAGS,
    MANAGED_KUBELET_FIELDS,
    MAP_FLAGS,
    flag_name,
    kubelet_flag_values,
)

API_VERSION = "kubelet.config.k8s.io/v1beta1"
KIND = "KubeletConfiguration"
# The kubelet-arg that makes RKE2 hand our folder to the kubelet (module_utils/kubelet_conf.py): file mode owns it.
CONFIG_DIR_FLAG = "config-dir"


class KubeletConfigError(ValueError):
    """A managed value that has no KubeletConfiguration form."""


def _reserved_memory(entries):
    """``0:memory=1Gi,hugepages-1Gi=2Gi`` entries -> [{numaNode: 0, limits: {memory: 1Gi, ...}}] (cliflag
    ReservedMemoryVar's syntax, the MemoryReservation list it fills), in the flag's order."""
    out = []
    for entry in entries:
        node, sep, types = entry.partition(":")
        if not sep or not node.strip().isdigit():
            raise KubeletConfigError("reserved-memory entry %r is not numaNodeID:type=quantity[,type=quantity...]" % entry)
        limits = {}
        for item in filter(None, types.split(",")):
            kind, sep, quantity = item.partition("=")
            if not sep:
                raise KubeletConfigError("reserved-memory entry %r: %r is not type=quantity" % (entry, item))
            limits[kind.strip()] = quantity.strip()
        out.append({"numaNode": int(node), "limits": limits})
    return out


def kubelet_config(kubelet_args, managed=None):
    """The KubeletConfiguration of the managed flags among ``kubelet_args`` (name=value, the plan's), as a dict:
    apiVersion, kind, then each field the args set."""
    managed = tuple(managed or MANAGED_KUBELET_FIELDS)
    values = kubelet_flag_values(("", str(a)) for a in kubelet_args)
    config = {"apiVersion": API_VERSION, "kind": KIND}
    for flag in managed:
        if flag not in values:
            continue
        value, dummy = values[flag]
        if flag not in MANAGED_KUBELET_FIELDS:
            raise KubeletConfigError("%s is not a setting the plan manages (%s)" % (flag, ", ".join(MANAGED_KUBELET_FIELDS)))
        field = MANAGED_KUBELET_FIELDS[flag]
        if flag in ACCUMULATED_FLAGS:
            config[field] = _reserved_memory(value)
        elif flag in MAP_FLAGS:
            config[field] = dict((str(k).strip(), str(v).strip()) for k, v in value.items())
        else:
            config[field] = str(value)
    return config


def kubelet_config_text(kubelet_args, managed=None):
    """The drop-in's text: the header, then the configuration as YAML (the kubelet reads YAML or JSON)."""
    return CONF_HEADER + yaml.safe_dump(kubelet_config(kubelet_args, managed), default_flow_style=False, sort_keys=False)


def config_kubelet_args(config):
    """A KubeletConfiguration (dict) back to the managed flags it sets (name=value), as kubelet_rules reads flags:
    how the file's settings are judged by the same rules as the flags'."""
    fields = dict((field, flag) for flag, field in MANAGED_KUBELET_FIELDS.items())
    fields["featureGates"] = "feature-gates"  # read beside them by the rules (gates of policy options, pod-level)
    args = []
    for field, value in (config or {}).items():
        flag = fields.get(field)
        if flag is None:
            continue
        if flag in ACCUMULATED_FLAGS:
            args.append("%s=%s" % (flag, ";".join("%d:%s" % (int(r["numaNode"]), ",".join("%s=%s" % kv for kv in sorted((r.get("limits") or {}).items())))
                                                  for r in value or [])))
        elif flag in MAP_FLAGS:
            args.append("%s=%s" % (flag, ",".join("%s%s%s" % (k, MAP_FLAGS[flag], str(v).lower() if isinstance(v, bool) else v)
                                                  for k, v in sorted((value or {}).items()))))
        else:
            args.append("%s=%s" % (flag, value))
    return args


def file_mode_args(kubelet_args, folder):
    """File mode's split of the plan's kubelet args: (the kubelet-args RKE2 still passes - those with no field in the
    file, then ``config-dir=<folder>`` - and the managed ones, which go to the drop-in)."""
    flags = [str(a) for a in kubelet_args if flag_name(str(a)) not in MANAGED_KUBELET_FIELDS]
    in_file = [str(a) for a in kubelet_args if flag_name(str(a)) in MANAGED_KUBELET_FIELDS]
    return flags + ["%s=%s" % (CONFIG_DIR_FLAG, folder)], in_file


def conf_problems(files, ours, planned):
    """The kubelet drop-ins of our folder as they will be (``files``: [(path, fields or None when unreadable)] in the
    kubelet's order, ours among them holding ``planned``): what keeps the kubelet from taking the plan's fields from our
    file - another file it cannot load (the kubelet stops on it), another file that sets a managed field to another
    value after ours, or one ours does not set (a JSON merge patch keeps it). Returns the problems, each naming the
    file."""
    problems, merged, where = [], {}, {}
    for path, fields in files:
        if fields is None:
            problems.append("%s cannot be loaded: the kubelet would stop on it" % path)
            continue
        merged = merge_patch(merged, fields)
        for field in fields:
            where.setdefault(field, []).append(path)
    for field in sorted(set(MANAGED_KUBELET_FIELDS.values()) & set(merged)):
        if merged.get(field) != planned.get(field):
            others = [p for p in where.get(field, []) if os.path.normpath(p) != os.path.normpath(ours)]
            problems.append("%s would be %s, not the plan's %s: %s set%s it too (the kubelet merges its drop-ins in name "
                            "order)" % (field, _show(merged.get(field)), _show(planned.get(field)), ", ".join(others),
                                        "" if len(others) > 1 else "s"))
    return problems


def _show(value):
    return "unset" if value is None else yaml.safe_dump(value, default_flow_style=True, width=1000).strip().replace("\n...", "")


def plan_conf(path, before, others, kubelet_args):
    """File mode's drop-in: (its new text, None when it already holds it; the problems that refuse the write, in
    conf_problems' words). ``before``: its text (None when absent); ``others``: [(path, text)] of the folder's other
    ``*.conf`` files (under it, in sub-folders too)."""
    text = kubelet_config_text(kubelet_args)
    planned = kubelet_config(kubelet_args)
    folder = os.path.dirname(os.path.normpath(path))
    files = []
    for other, other_text in sorted(list(others) + [(path, None)], key=lambda f: walk_key(folder, f[0])):
        if other == path:
            files.append((path, planned))
            continue
        try:
            files.append((other, parse_conf(other_text or "", other)))
        except ValueError:
            files.append((other, None))
    return (None if text == before else text), conf_problems(files, path, planned)


def running_config_args(kubelet_args, conf):
    """The kubelet's managed settings on a node as flags (``--name=value``): those of the drop-in folder file mode uses
    (node_state_info's ``kubelet_conf``: its ``*.conf`` merged in the kubelet's order) when a ``config-dir`` kubelet-arg
    hands RKE2 that folder, then ``kubelet_args`` (the flags RKE2 passes, which win over every file). Another folder
    named by config-dir was not read: its files are not counted."""
    folders = [a.partition("=")[2] for a in kubelet_args if flag_name(a) == CONFIG_DIR_FLAG]
    if not conf or not folders or os.path.normpath(folders[-1]) != os.path.normpath(conf.get("folder") or ""):
        return list(kubelet_args)
    merged = {}
    for f in conf.get("files") or []:
        if f.get("exists") and not f.get("error"):
            merged = merge_patch(merged, f.get("values") or {})
    flags = set(flag_name(a.lstrip("-")) for a in kubelet_args)
    # a flag replaces the file's value (the kubelet parses its flags over the merged configuration)
    return ["--" + a for a in config_kubelet_args(merged) if flag_name(a) not in flags] + list(kubelet_args)
