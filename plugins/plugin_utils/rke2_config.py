# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Merge the plan's kubelet args into RKE2's config.yaml, on the controller.

Pure functions: text in, text out. ``config.yaml`` is the user's file and holds
the cluster join token:

- the merge is a surgical edit of the ``kubelet-arg`` (and ``node-label`` /
  ``node-taint``) sequences, located with PyYAML's node marks: every other
  byte (comments, quoting, number spellings, key order, blank lines) stays;
  the edited text is parsed again and must hold exactly the old data with
  the new lists, or nothing is written;
- a file RKE2 might read differently from us is refused before anything is
  written (module_utils/rke2_config_file.py, the one reader of RKE2's config,
  also node_state_info's on the host);
- ``mask`` blanks secret values found on the parsed nodes (any key ending in
  token, secret, password or key, at any depth, however quoted or anchored),
  never by a pattern over the text.

RKE2's order of its files and its merge (``key`` replaces, ``key+`` appends):
module_utils/rke2_config_file.py ``effective_sources``.
"""

from __future__ import annotations

import json
import os
import re

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from ansible_collections.maitred.rke2_numa.plugins.module_utils.rancher import RANCHER_CONFIG_FILE
from ansible_collections.maitred.rke2_numa.plugins.module_utils.rke2_config_file import (  # noqa: F401 - effective_config: compliance's
    ConfigError,
    as_list,
    compose,
    effective_config,
    effective_sources,
    load_config,
)
from ansible_collections.maitred.rke2_numa.plugins.module_utils.rke2_dropin import DROPIN_HEADER
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_config import CONFIG_DIR_FLAG, file_mode_args, plan_conf, running_config_args
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kubelet_rules import (  # noqa: F401 - MANAGED_KUBELET_FLAGS: the planner's
    ACCUMULATED_FLAGS,
    MANAGED_KUBELET_FIELDS,
    MANAGED_KUBELET_FLAGS,
    MAP_FLAGS,
    flag_name,
    kubelet_flag_values,
    show_flag_value,
)

SECRET_KEY = re.compile(r"(token|secret|password|passwd|key)$", re.I)
MASK = "********"
_FLOW_UNSAFE = re.compile(r"[,\[\]{}#&*!|>'\"%@`]|^[-?:]|:\s|\s$|^\s")


# config.yaml holds the join token: the mode and owner the collection keeps it at.
SECURE = {"mode": "0600", "owner": "root", "group": "root"}


def _label_key(entry, taints):
    name = entry.split("=", 1)[0].split(":", 1)[0]
    return (name, entry.rsplit(":", 1)[1]) if taints and ":" in entry else name


def duplicates(args):
    """Flag names that appear more than once."""
    seen, dup = set(), []
    for arg in args:
        name = flag_name(arg)
        if name in seen and name not in dup:
            dup.append(name)
        seen.add(name)
    return dup


# ---------------------------------------------------------------- the surgical edit

def _find(root, key):
    for knode, vnode in (root.value if root is not None else ()):
        if isinstance(knode, ScalarNode) and knode.value == key:
            return knode, vnode
    return None


def _items(vnode, key):
    """The entries of a string-list option as (text, node): a null, one string, or a list of strings
    (callers check the option's shape with _as_list first, naming the file)."""
    if isinstance(vnode, ScalarNode):
        if vnode.tag == "tag:yaml.org,2002:null":
            return []
        return [(vnode.value, vnode)]
    if isinstance(vnode, SequenceNode) and all(isinstance(n, ScalarNode) for n in vnode.value):
        return [(n.value, n) for n in vnode.value]
    raise ConfigError("%s must be a string or a list of strings: nothing written" % key)


def _end_line(node):
    """The last line a node's text stands on (a block collection: its last entry's)."""
    if isinstance(node, (MappingNode, SequenceNode)) and not node.flow_style and node.value:
        last = node.value[-1]
        return _end_line(last[1] if isinstance(node, MappingNode) else last)
    end = node.end_mark
    if end.column == 0 and end.index > node.start_mark.index:
        return end.line - 1  # block scalars end at the start of the next line
    return end.line


def _dash_line(text, item):
    """The line of a block sequence entry's ``-``, or None when the entry does not start on it."""
    i = item.start_mark.index - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    return item.start_mark.line if i >= 0 and text[i] == "-" else None


def _flow_item(text, node):
    """An entry's own source text when it means the same inside ``[...]``, else a quoted copy."""
    source = text[node.start_mark.index:node.end_mark.index]
    if node.style in ('"', "'") and "\n" not in source:
        return source
    if node.style is None and source == node.value and not _FLOW_UNSAFE.search(source):
        return source
    return json.dumps(node.value)


def _edit_list(text, root, key, keep, append):
    """Keep the entries of ``key`` for which keep(text) holds, append ``append``; touch nothing else."""
    found = _find(root, key)
    if found is None:
        if not append:
            return text
        return _insert_key(text, root, key, append)
    knode, vnode = found
    items = _items(vnode, key)
    kept = [n for value, n in items if keep(value)]
    if [n.value for n in kept] + list(append) == [value for value, dummy in items]:
        return text
    block = isinstance(vnode, SequenceNode) and not vnode.flow_style and not root.flow_style
    dashes = [_dash_line(text, n) for n in vnode.value] if block else []
    if block and None not in dashes:
        lines = text.splitlines(True)
        drop = set()
        for item, dash in zip(vnode.value, dashes):
            if item not in kept:
                drop.update(range(dash, _end_line(item) + 1))
        at = _end_line(vnode.value[-1]) + 1
        first = vnode.value[0].start_mark.index
        prefix = text[text.rfind("\n", 0, first) + 1:first]  # the first entry's "  - "
        new = [prefix + json.dumps(a) + "\n" for a in append]
        if at > 0 and at <= len(lines) and not lines[at - 1].endswith("\n"):
            lines[at - 1] += "\n"
        lines = lines[:at] + new + lines[at:]
        return "".join(line for i, line in enumerate(lines) if i not in drop)
    flow = "[" + ", ".join([_flow_item(text, n) for n in kept] + [json.dumps(a) for a in append]) + "]"
    start, end = vnode.start_mark.index, vnode.end_mark.index
    if start == end and start > 0 and text[start - 1] not in " \t":
        flow = " " + flow  # an empty value right after the colon
    return text[:start] + flow + text[end:]


def _insert_key(text, root, key, values):
    """Add ``key: [values]`` after the mapping's last entry (or to an empty document)."""
    if root is None:
        return text + ("\n" if text and not text.endswith("\n") else "") + _block(key, values, "")
    if root.flow_style:
        if root.value:
            at = root.value[-1][1].end_mark.index
            piece = ", %s: %s" % (json.dumps(key), json.dumps(values))
        else:
            at = root.start_mark.index + text[root.start_mark.index:].index("{") + 1
            piece = "%s: %s" % (json.dumps(key), json.dumps(values))
        return text[:at] + piece + text[at:]
    lines = text.splitlines(True)
    at = _end_line(root.value[-1][1]) + 1
    if not lines[at - 1].endswith("\n"):
        lines[at - 1] += "\n"
    indent = " " * root.value[0][0].start_mark.column
    return "".join(lines[:at]) + _block(key, values, indent) + "".join(lines[at:])


def _block(key, values, indent):
    return indent + key + ":\n" + "".join("%s  - %s\n" % (indent, json.dumps(v)) for v in values)


def _list_values(root, key):
    found = _find(root, key)
    return [v for v, dummy in _items(found[1], key)] if found else None


def merged_config(text, path, kubelet_args, node_labels=(), node_taints=(), managed=MANAGED_KUBELET_FLAGS):
    """config.yaml merge mode. Returns (new_text, report); new_text is None when nothing changes.

    Managed flags are replaced by name (the user's other flags stay where they
    are, the plan's are appended); labels and taints with a wanted key (and
    effect) are replaced. Only those sequence entries change in the text.
    """
    managed = set(managed)
    before = load_config(text, path)
    existing = as_list(before.get("kubelet-arg"), "kubelet-arg", path)
    edits = [("kubelet-arg", lambda a: flag_name(a) not in managed, list(kubelet_args))]
    for key, wanted, taints in (("node-label", node_labels, False), ("node-taint", node_taints, True)):
        if wanted:
            as_list(before.get(key), key, path)
            keys = set(_label_key(w, taints) for w in wanted)
            edits.append((key, lambda e, keys=keys, taints=taints: _label_key(e, taints) not in keys, list(wanted)))
    new = text or ""
    expected = {}
    for key, keep, append in edits:
        root = compose(new, path)
        expected[key] = [v for v in (_list_values(root, key) or []) if keep(v)] + append
        new = _edit_list(new, root, key, keep, append)
    dropped = [a for a in existing if flag_name(a) in managed]
    args = [a for a in existing if flag_name(a) not in managed] + list(kubelet_args)
    report = {
        "normalised": duplicates(dropped),
        "replaced": sorted(set(flag_name(a) for a in dropped) & set(flag_name(a) for a in kubelet_args)),
        "kept_kubelet_args": [a for a in args if flag_name(a) not in managed],
        "other_keys": sorted(k for k in before if k not in ("kubelet-arg", "node-label", "node-taint")),
    }
    if new == (text or ""):
        return None, report
    _check_edit(before, new, path, expected)
    return new, report


def _check_edit(before, new_text, path, expected):
    """The edited text must hold the old data with only the edited lists changed, in the same key order."""
    after = load_config(new_text, path)
    root = compose(new_text, path)
    ok = [k for k in after if k not in expected or k in before] == list(before) and all(
        after[k] == before[k] for k in before if k not in expected)
    ok = ok and all((_list_values(root, k) or []) == v for k, v in expected.items())
    if not ok:
        raise ConfigError("%s: the kubelet-arg entries cannot be edited in place without changing other"
                          " settings: nothing written (rewrite them as a plain block list)" % path)


def _drop_key(text, root, key):
    """The text without ``key`` and its value (a block mapping: their lines; a flow mapping: the value becomes [])."""
    knode, vnode = _find(root, key)
    if root.flow_style:
        return _edit_list(text, root, key, lambda dummy: False, [])
    lines = text.splitlines(True)
    return "".join(lines[:knode.start_mark.line] + lines[_end_line(vnode) + 1:])


def unmerged_config(text, path, node_labels=(), node_taints=(), managed=MANAGED_KUBELET_FLAGS):
    """Merge mode undone, when the plan moves to our drop-in: config.yaml without the entries merge mode owns - the
    managed kubelet flags, the plan's label keys and taint keys and effects (merged_config's replace rule). A list
    left empty goes with its key. Every other byte stays; the edited text is parsed again and must hold exactly the
    old data without those entries. Returns (new_text or None when nothing of ours is there, removed entries)."""
    managed = set(managed)
    before = load_config(text, path)
    rules = [("kubelet-arg", lambda a: flag_name(a) not in managed)]
    for key, wanted, taints in (("node-label", node_labels, False), ("node-taint", node_taints, True)):
        keys = set(_label_key(w, taints) for w in wanted)
        rules.append((key, lambda e, keys=keys, taints=taints: _label_key(e, taints) not in keys))
    new, removed, expected = text or "", [], {}
    for key, keep in rules:
        root = compose(new, path)
        if _find(root, key) is None:
            continue
        as_list(before.get(key), key, path)
        values = _list_values(root, key) or []
        gone = [v for v in values if not keep(v)]
        if not gone:
            continue
        removed += gone
        expected[key] = [v for v in values if keep(v)]
        new = _edit_list(new, root, key, keep, []) if expected[key] else _drop_key(new, root, key)
    if not removed:
        return None, []
    after = load_config(new, path)
    root = compose(new, path)
    ok = list(after) == [k for k in before if k in after] and all(after[k] == before[k] for k in after if k not in expected)
    ok = ok and all(k in after or not v for k, v in expected.items()) and set(before) - set(after) <= set(expected)
    ok = ok and all((_list_values(root, k) or []) == v for k, v in expected.items() if k in after)
    if not ok:
        raise ConfigError("%s: the entries merge mode wrote cannot be removed in place without changing other settings:"
                          " nothing written (rewrite them as a plain block list)" % path)
    return new, removed


def dropin_config(kubelet_args, node_labels=(), node_taints=()):
    """Drop-in mode: a config.yaml.d file of our own that appends with ``kubelet-arg+`` (config.yaml untouched)."""
    data = {"kubelet-arg+": list(kubelet_args)}
    if node_labels:
        data["node-label+"] = list(node_labels)
    if node_taints:
        data["node-taint+"] = list(node_taints)
    return DROPIN_HEADER + yaml.safe_dump(data, default_flow_style=False, sort_keys=False, width=1000)


def kubelet_arg_sources(files):
    """[(path, 'name=value')]: the ``kubelet-arg`` entries RKE2 passes, in order, with their file."""
    return [(path, flag.lstrip("-")) for path, value, dummy in effective_sources(files).get("kubelet-arg", ())
            for flag in as_list(value, "kubelet-arg", path)]


def rancher_conflicts(sources, wanted, managed=MANAGED_KUBELET_FLAGS, over=None):
    """Managed flags Rancher's file (config.yaml.d/50-rancher.yaml) sets to another value than the plan's: two owners of
    one setting. Rancher restarts rke2 with its own value whenever its plan changes, and a Rancher user who set it
    expects it - the node is blocked until the flag is changed or removed in Rancher (the cluster's
    machineSelectorConfig or machineGlobalConfig kubelet-arg). Returns [(flag name, problem)]."""
    rancher = kubelet_flag_values([(p, a) for p, a in sources if os.path.basename(p) == RANCHER_CONFIG_FILE])
    out = []
    for name in sorted(set(managed) & set(rancher)):
        value, where = rancher[name]
        planned = wanted.get(name, (None,))[0]
        if value != planned and over and name in MANAGED_KUBELET_FIELDS:
            out.append((name, "Rancher sets %s=%s (%s): a kubelet flag wins over %s, the plan's file - remove it in "
                        "Rancher (the cluster's machineSelectorConfig or machineGlobalConfig kubelet-arg for this node's "
                        "machines)" % (name, show_flag_value(value, name), ", ".join(sorted(set(where))), over)))
        elif value != planned:
            out.append((name, "Rancher sets %s=%s (%s), the plan %s: change or remove it in Rancher (the cluster's "
                       "machineSelectorConfig or machineGlobalConfig kubelet-arg for this node's machines)" % (
                           name, show_flag_value(value, name), ", ".join(sorted(set(where))),
                           "%s=%s" % (name, show_flag_value(planned, name)) if planned is not None else "does not set it")))
    return out


def check_effective_list(files, key, wanted, taints=False):
    """The plan's ``node-label`` (or ``node-taint``) entries must be what RKE2 passes for their keys: not replaced by a
    later file's plain key, not given another value after ours. Returns the problems."""
    parts = effective_sources(files).get(key, ())
    entries = [(p, str(v)) for p, value, dummy in parts for v in as_list(value, key, p)]
    problems = []
    for entry in wanted:
        same = [(p, e) for p, e in entries if _label_key(e, taints) == _label_key(entry, taints)]
        if not same:
            replaced = [p for p, dummy, appended in parts if not appended]
            problems.append("%s %s would not reach the Node: %s sets %s, which replaces the earlier files' (use %s+ there)"
                            % (key, entry, ", ".join(replaced) or "another file", key, key))
        elif same[-1][1] != entry:
            problems.append("%s would be %s, not the plan's %s: %s sets it after ours"
                            % (key, same[-1][1], entry, same[-1][0]))
    return problems


def check_effective_kubelet_args(files, planned, ours, managed=MANAGED_KUBELET_FLAGS, over=None):
    """What RKE2 will really pass must be the plan: refuse naming the file and the flag when not.

    ``files`` are all of RKE2's config files as they will be after our write
    (``ours`` is the file we write). The plan passed the kubelet's refusal
    rules, so an effective managed flag equal to the plan's passes them too;
    one that differs (an extra reserved-memory that accumulates, a map flag
    that merges keys, a later file's plain ``kubelet-arg`` that replaces ours)
    is refused. Returns the warnings: managed flags another file sets whose
    value the plan's still overrides. ``over``: file mode's KubeletConfiguration
    drop-in, which holds the managed settings - any of them still given as a
    kubelet-arg would win over it (refused, naming the file), and RKE2 must hand
    the kubelet that one folder (``config-dir``, one value).
    """
    sources = kubelet_arg_sources(files)
    effective = kubelet_flag_values(sources)
    wanted = kubelet_flag_values([(ours, a) for a in planned])
    conflicts = rancher_conflicts(sources, wanted, managed, over)
    problems, warnings = [msg for dummy, msg in conflicts], []
    for name in sorted(set(managed) & (set(effective) | set(wanted)) - set(n for n, dummy in conflicts)):
        value, where = effective.get(name, (None, []))
        others = sorted(set(w for w in where if w != ours))
        if over and name in MANAGED_KUBELET_FIELDS and name not in wanted:
            problems.append("%s=%s is given as a kubelet-arg in %s: a kubelet flag wins over %s, the plan's file - remove "
                            "it there" % (name, show_flag_value(value, name), ", ".join(sorted(set(where))), over))
            continue
        if over and name == CONFIG_DIR_FLAG:
            given = sorted(set(p for p, a in sources if flag_name(a) == name and a.partition("=")[2] != wanted[name][0]))
            if given:
                problems.append("%s names another folder in %s: RKE2 hands the kubelet one drop-in folder, and file mode's "
                                "is %s - move those files there and remove it" % (name, ", ".join(given), wanted[name][0]))
                continue
        if value == wanted.get(name, (None,))[0]:
            if others:
                warnings.append("%s also set in %s; the plan's value reaches the kubelet (it keeps the last)"
                                % (name, ", ".join(others)))
            continue
        if name not in effective:
            replaced = [p for p, dummy, appended in effective_sources(files).get("kubelet-arg", ()) if not appended]
            problems.append("%s would not reach the kubelet: %s sets kubelet-arg, which replaces the earlier files'"
                            " (use kubelet-arg+ there)" % (name, ", ".join(replaced) or "another file"))
        else:
            problems.append("%s would be %s, not the plan's %s: %s set%s it too (%s)" % (
                name, show_flag_value(value, name), show_flag_value(wanted.get(name, (None,))[0], name), ", ".join(others or where),
                "" if len(others) > 1 else "s",
                "reserved-memory entries add up across flags" if name in ACCUMULATED_FLAGS else
                "the kubelet merges the keys of repeated %s flags" % name if name in MAP_FLAGS else
                "a later value wins"))
    if problems:
        raise ConfigError("the kubelet flags RKE2 would pass do not hold the plan: %s: nothing written"
                          % "; ".join(problems))
    return warnings


def plan_write(path, mode, target, before, read, dropins, kubelet_args, node_labels=(), node_taints=(),
               managed=MANAGED_KUBELET_FLAGS, unmerge=False, ours=(), conf=None):
    """What the rke2_config action would write, and RKE2's files as they would be after it - every rule that can
    refuse, without a write. ``path``: config.yaml; ``target``: the file we manage (``path`` in merge mode, the
    drop-in in dropin mode); ``before``: its text (None when absent); ``read(p)``: the text of another of RKE2's
    files; ``dropins``: the other config.yaml.d files. Returns (new_text or None when unchanged, report) with
    report["files"] (RKE2's reading order, after the write), report["dropins"] and report["elsewhere"]
    (check_effective_kubelet_args' warnings), report["unmerged"] (config.yaml's new text when ``unmerge``: the drop-in
    takes over from merge mode, None when nothing of ours was there) and report["removed"] (``ours``: drop-ins this
    collection wrote under another name, which go - one place holds the plan). Raises ConfigError (the action's
    refusal; check.yml's "blocked").

    ``conf``: the kubelet's drop-in folder of file mode as it is - {"mode": flags or file, "path": our
    KubeletConfiguration file, "folder", "before": its text (None when absent), "ours": it is ours, "others": [(path,
    text)] of the folder's other ``*.conf`` files in the kubelet's order}. In file mode (``mode`` must be dropin) the
    managed settings go to that file (kubelet_config.plan_conf) and RKE2's files carry the rest and ``config-dir``;
    report["kubelet_config"] = {"mode", "path", "change" (written, removed or None), "text"}. In flags mode a file of
    ours there is removed (its settings are the flags now)."""
    conf_mode = (conf or {}).get("mode") or "flags"
    in_file = []
    if conf_mode == "file":
        if mode != "dropin":
            raise ConfigError("rke2_numa_kubelet_config=file leaves config.yaml to its owner (the plan's kubelet-args move to "
                              "%s and config-dir to %s): it takes mode dropin, not %s: nothing written" % (conf["path"], target, mode))
        kubelet_args, in_file = file_mode_args(kubelet_args, conf["folder"])
    folder = path + ".d"
    stale = sorted(d for d in ours if os.path.normpath(d) != os.path.normpath(target))
    dropins = [d for d in dropins if os.path.normpath(d) != os.path.normpath(target) and d not in stale]
    if mode == "merge":
        new_text, report = merged_config(before, path, kubelet_args, node_labels, node_taints, managed)
        files = [(path, before if new_text is None else new_text)]
        report["unmerged"] = None
    else:
        if os.path.dirname(os.path.normpath(target)) != os.path.normpath(folder):
            raise ConfigError("%s is not in %s, the only folder RKE2 reads drop-ins from: nothing written" % (target, folder))
        new_text = dropin_config(kubelet_args, node_labels, node_taints)
        if new_text == before:
            new_text = None
        config_text = read(path)
        unmerged = unmerged_config(config_text, path, node_labels, node_taints, managed)[0] if unmerge and config_text else None
        files = [(path, config_text if unmerged is None else unmerged)]
        dropins = sorted(dropins + [target], key=os.path.basename)
        report = {"unmerged": unmerged}
    written = before if new_text is None else new_text
    for dropin in dropins:
        files.append((dropin, written if dropin == target else read(dropin)))
    problems = []
    for key, wanted, taints in (("node-label", node_labels, False), ("node-taint", node_taints, True)):
        problems += check_effective_list(files, key, wanted, taints)
    if problems:
        raise ConfigError("RKE2 would not pass the plan's labels and taints: %s: nothing written" % "; ".join(problems))
    if conf_mode == "file":
        report["elsewhere"] = check_effective_kubelet_args(files, kubelet_args, target, tuple(managed) + (CONFIG_DIR_FLAG,),
                                                           over=conf["path"])
        conf_text, conf_refused = plan_conf(conf["path"], conf.get("before"), conf.get("others") or [], in_file)
        if conf_refused:
            raise ConfigError("the kubelet's drop-ins in %s would not hold the plan: %s: nothing written"
                              % (conf["folder"], "; ".join(conf_refused)))
        report["kubelet_config"] = {"mode": "file", "path": conf["path"], "text": conf_text,
                                    "change": "written" if conf_text is not None else None}
    else:
        report["elsewhere"] = check_effective_kubelet_args(files, kubelet_args, target, managed)
        gone = bool(conf and conf.get("ours"))
        report["kubelet_config"] = {"mode": "flags", "path": (conf or {}).get("path"), "text": None,
                                    "change": "removed" if gone else None}
    report["dropins"] = dropins
    report["removed"] = stale
    report["files"] = files
    return new_text, report


def healthz_url(config):
    """The kubelet's healthz URL on this node, from RKE2's effective config: the kubelet's own
    healthz flags when set, else 127.0.0.1 or, when the (first) node-ip is IPv6, ::1 as RKE2 binds it."""
    flags = dict((k, v[0]) for k, v in kubelet_flag_values(
        [("", a.lstrip("-")) for a in as_list(config.get("kubelet-arg"), "kubelet-arg", "config")]).items())
    port = flags.get("healthz-port", "10248")
    node_ips = as_list(config.get("node-ip"), "node-ip", "config")
    first = node_ips[0].split(",")[0].strip() if node_ips else ""
    host = flags.get("healthz-bind-address") or ("::1" if ":" in first else "127.0.0.1")
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return "http://%s:%s/healthz" % ("[%s]" % host if ":" in host else host, port)


# ---------------------------------------------------------------- masking

def _secret_spans(node, spans, secret=False, seen=None):
    """(start, end) of every scalar under a secret key, at any depth; an aliased node is masked
    where its anchor defines it (the alias itself shows no value)."""
    seen = set() if seen is None else seen
    if (id(node), secret) in seen:  # aliases may repeat a node, or nest it in itself
        return
    seen.add((id(node), secret))
    if isinstance(node, ScalarNode):
        if secret:
            spans.append((node.start_mark.index, node.end_mark.index))
    elif isinstance(node, SequenceNode):
        for item in node.value:
            _secret_spans(item, spans, secret, seen)
    elif isinstance(node, MappingNode):
        for key, value in node.value:
            hidden = secret or (isinstance(key, ScalarNode) and bool(SECRET_KEY.search(key.value)))
            _secret_spans(value, spans, hidden, seen)


def mask(text):
    """The YAML text with the value of every secret key replaced by ``MASK`` (for diffs and messages).

    Text that cannot be parsed is not shown at all."""
    if not text:
        return text
    try:
        docs = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return "# (not shown: not valid YAML, and it may hold the join token)\n"
    spans = []
    for doc in docs:
        if doc is not None:
            _secret_spans(doc, spans)
    out, pos = [], 0
    for start, end in sorted(set(spans)):
        if start < pos:
            continue
        keep_newline = text[start:end].endswith("\n")  # a block scalar ends at the next line
        out.append(text[pos:start] + MASK + ("\n" if keep_newline else ""))
        pos = end
    return "".join(out) + text[pos:]


# ---- RKE2's config as node_state_info returns it (only the keys the rules read, per file, in RKE2's order)

def state_text(values):
    """A YAML text holding only the keys node_state_info returned (what this module's rules read)."""
    plain = json.loads(json.dumps(values))  # plain types: Ansible hands the filters its own container types
    return yaml.safe_dump(plain, default_flow_style=False, sort_keys=False) if plain else ""


def state_files(state):
    """[(path, text)] of RKE2's config files that exist, in RKE2's reading order; a file's read error raises ConfigError."""
    out = []
    for f in state["rke2"]["files"]:
        if f.get("error"):
            raise ConfigError(f["error"])
        if f["exists"]:
            out.append((f["path"], state_text(f["values"])))
    return out


def state_kubelet_args(state):
    """The kubelet's settings on that node as flags (``--name=value``): those RKE2 passes (effective over config.yaml
    and its drop-ins), after those of file mode's KubeletConfiguration drop-ins when a config-dir kubelet-arg hands
    RKE2 their folder (kubelet_config.running_config_args)."""
    value = effective_config(state_files(state)).get("kubelet-arg", [])
    return running_config_args(["--" + str(a) for a in ([value] if isinstance(value, str) else value)], state.get("kubelet_conf"))
