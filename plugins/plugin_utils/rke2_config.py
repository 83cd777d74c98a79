# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Merge the plan's kubelet args into RKE2's config.yaml (rule 12), on the controller.

Pure functions: text in, text out. ``config.yaml`` holds the cluster join
token, so nothing here ever returns a secret in a message, and ``mask``
blanks secret values for diffs.

RKE2 reads /etc/rancher/rke2/config.yaml, then config.yaml.d/*.yaml in
lexical order; a later file's key replaces an earlier one, and ``key+``
appends to a list (docs.rke2.io, "Configuration File").
"""

from __future__ import annotations

import re

import yaml

# kubelet flags the plan owns; rke2_config replaces them by name and keeps the rest.
MANAGED_KUBELET_FLAGS = (
    "cpu-manager-policy", "cpu-manager-policy-options", "topology-manager-policy",
    "topology-manager-scope", "topology-manager-policy-options", "memory-manager-policy",
    "reserved-cpus", "kube-reserved", "system-reserved", "eviction-hard", "reserved-memory",
)
SECRET_KEY = re.compile(r"(token|secret|password|passwd|key)$", re.I)
MASK = "********"
HEADER = "# Managed in part by maitred.rke2_numa: its kubelet-arg entries are replaced by name; other keys are kept.\n"
DROPIN_HEADER = "# Managed by maitred.rke2_numa: kubelet args for NUMA-aligned GPU pods. Do not edit.\n"


class ConfigError(Exception):
    """config.yaml cannot be merged safely; nothing is written."""


def load_config(text, path):
    """Parse config.yaml text into a dict (empty text -> {}); refuses what RKE2 would not read."""
    if text is None or not text.strip():
        return {}
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = " at line %d" % (mark.line + 1) if mark is not None else ""
        raise ConfigError("%s is not valid YAML%s: nothing written" % (path, where))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("%s is a YAML %s, not a mapping of RKE2 options: nothing written" % (path, type(data).__name__))
    return data


def _as_list(value, key, path):
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return [str(v) for v in value]
    raise ConfigError("%s: %s must be a string or a list of strings: nothing written" % (path, key))


def flag_name(arg):
    """``--cpu-manager-policy=static`` / ``cpu-manager-policy=static`` -> ``cpu-manager-policy``."""
    return arg.lstrip("-").split("=", 1)[0]


def merge_kubelet_args(existing, planned, managed):
    """Keep the user's flags in order, drop every managed one, append the plan's.

    Returns (args, dropped) where dropped lists the managed entries that were
    removed (duplicates among them are what "normalised" reports).
    """
    kept, dropped = [], []
    for arg in existing:
        (dropped if flag_name(arg) in managed else kept).append(arg)
    return kept + list(planned), dropped


def merge_labels(existing, wanted, taints=False):
    """Add wanted labels/taints, replacing an existing entry with the same key (and effect for taints)."""
    def key(entry):
        name = entry.split("=", 1)[0].split(":", 1)[0]
        return (name, entry.rsplit(":", 1)[1]) if taints and ":" in entry else name
    wanted_keys = set(key(w) for w in wanted)
    return [e for e in existing if key(e) not in wanted_keys] + list(wanted)


def duplicates(args):
    """Managed flag names that appear more than once."""
    seen, dup = set(), []
    for arg in args:
        name = flag_name(arg)
        if name in seen and name not in dup:
            dup.append(name)
        seen.add(name)
    return dup


def dump(data, header):
    return header + yaml.safe_dump(data, default_flow_style=False, sort_keys=False, width=1000)


def merged_config(text, path, kubelet_args, node_labels=(), node_taints=(), managed=MANAGED_KUBELET_FLAGS):
    """config.yaml merge mode. Returns (new_text, report); new_text is None when nothing changes."""
    data = load_config(text, path)
    existing = _as_list(data.get("kubelet-arg"), "kubelet-arg", path)
    args, dropped = merge_kubelet_args(existing, kubelet_args, managed)
    new = dict(data)
    new["kubelet-arg"] = args
    if node_labels:
        new["node-label"] = merge_labels(_as_list(data.get("node-label"), "node-label", path), node_labels)
    if node_taints:
        new["node-taint"] = merge_labels(_as_list(data.get("node-taint"), "node-taint", path), node_taints, taints=True)
    report = {
        "normalised": [n for n in duplicates(dropped) if n in managed],
        "replaced": sorted(set(flag_name(a) for a in dropped) & set(flag_name(a) for a in kubelet_args)),
        "kept_kubelet_args": [a for a in args if flag_name(a) not in managed],
        "other_keys": sorted(k for k in data if k not in ("kubelet-arg", "node-label", "node-taint")),
    }
    if new == data:
        return None, report
    return dump(new, HEADER), report


def dropin_config(kubelet_args, node_labels=(), node_taints=()):
    """Drop-in mode: a config.yaml.d file that appends with ``kubelet-arg+`` (config.yaml untouched)."""
    data = {"kubelet-arg+": list(kubelet_args)}
    if node_labels:
        data["node-label+"] = list(node_labels)
    if node_taints:
        data["node-taint+"] = list(node_taints)
    return dump(data, DROPIN_HEADER)


def owned_flags_elsewhere(config_text, path, managed=MANAGED_KUBELET_FLAGS):
    """In drop-in mode: managed flags that config.yaml sets too. RKE2 appends both, the kubelet
    takes the last, so ours wins; report them so the operator knows."""
    data = load_config(config_text, path)
    return sorted(set(flag_name(a) for a in _as_list(data.get("kubelet-arg"), "kubelet-arg", path)) & set(managed))


def effective_config(files):
    """RKE2's view of its config: ``files`` is [(path, text)] in the order RKE2 reads them
    (config.yaml, then config.yaml.d/*.yaml sorted). A later key replaces an earlier one;
    ``key+`` appends to the list of ``key``."""
    merged = {}
    for path, text in files:
        for key, value in load_config(text, path).items():
            if key.endswith("+"):
                base = key[:-1]
                merged[base] = _as_list(merged.get(base), base, path) + _as_list(value, key, path)
            else:
                merged[key] = value
    return merged


def mask(text):
    """The YAML text with every secret-looking key's value replaced (for diffs and messages)."""
    if not text:
        return text
    out = []
    block_indent = None  # inside a block scalar (token: |) whose lines are all secret
    for line in text.splitlines(True):
        indent = len(line) - len(line.lstrip(" "))
        if block_indent is not None:
            if line.strip() and indent > block_indent:
                out.append(" " * indent + MASK + "\n")
                continue
            block_indent = None
        m = re.match(r"^(\s*-?\s*)([\w.+-]+)(\s*:\s*)(.*?)(\s*)$", line)
        if m and SECRET_KEY.search(m.group(2)) and m.group(4):
            if m.group(4)[:1] in ("|", ">"):
                block_indent = indent
                out.append(line)
                continue
            line = "%s%s%s%s%s" % (m.group(1), m.group(2), m.group(3), MASK, "\n" if line.endswith("\n") else "")
        out.append(line)
    return "".join(out)
