# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""RKE2's config files read as RKE2 reads them: the one reader, on the host (node_state_info) and on the
controller (plugin_utils/rke2_config.py, the rke2_config action).

A file RKE2 might read differently from us is refused: not UTF-8, not YAML, several documents, not a mapping,
a key given twice (YAML forbids it; PyYAML would silently keep the last, Go's YAML refuses the file). Each
refusal is a ConfigError that says it twice: ``str(e)`` is the rke2_config action's refusal (it writes
nothing), ``e.finding`` is how node_state_info reports the file it only reads (by line and column, never a
value: the file holds the join token).

RKE2 reads /etc/rancher/rke2/config.yaml, then config.yaml.d/*.yaml and *.yml in name order; a later file's
``key`` replaces every earlier value, ``key+`` appends to the list (k3s pkg/configfilearg; docs.rke2.io,
"Configuration File").
"""

from __future__ import annotations

import os

try:
    import yaml
    HAS_YAML = True
except ImportError:  # pragma: no cover - node_state_info reports it (the action runs on the controller, which has it)
    yaml = None
    HAS_YAML = False

NULL_TAG = "tag:yaml.org,2002:null"

# The drop-ins RKE2 reads from config.yaml.d: by extension whatever its case, in name order, folders left out (k3s
# pkg/configfilearg/parser.go dotDFiles: os.ReadDir, util.HasSuffixI(name, ".yaml", ".yml"), !IsDir()).
DROPIN_SUFFIXES = (".yaml", ".yml")
# the same for ansible.builtin.find (use_regex: its patterns are matched against the file's name)
DROPIN_PATTERN = r"(?i)^.*\.(yaml|yml)$"


def is_dropin_name(name):
    """A config.yaml.d entry name RKE2 reads (util.HasSuffixI: the suffix compared lowercased)."""
    return name.lower().endswith(DROPIN_SUFFIXES)


class ConfigError(Exception):
    """config.yaml cannot be read as RKE2 reads it; nothing is written. ``finding``: the same as node_state_info
    reports it (the action's refusal when not given)."""

    def __init__(self, msg, finding=None):
        super(ConfigError, self).__init__(msg)
        self.finding = msg if finding is None else finding


def config_files(config_path):
    """config.yaml, then config.yaml.d/*.yaml and *.yml in name order (k3s configfilearg), as found on the host."""
    files = [config_path]
    folder = config_path + ".d"
    if os.path.isdir(folder):
        files += [os.path.join(folder, n) for n in sorted(os.listdir(folder))
                  if is_dropin_name(n) and not os.path.isdir(os.path.join(folder, n))]
    return files


def decode(data, path):
    """File bytes as text; a file that is not UTF-8 is refused (RKE2 reads UTF-8 YAML)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError("%s is not UTF-8 text (byte %d): nothing written" % (path, e.start),
                          "%s is not UTF-8 (byte %d)" % (path, e.start))


def _yaml_error(path, e):
    mark = getattr(e, "problem_mark", None)
    return ConfigError("%s is not valid YAML%s: nothing written" % (path, " at line %d" % (mark.line + 1) if mark is not None else ""),
                       "%s is not valid YAML%s: %s" % (path, " at line %d, column %d" % (mark.line + 1, mark.column + 1)
                                                       if mark is not None else "", getattr(e, "problem", None) or "parse error"))


def _not_a_mapping(path, kind):
    return ConfigError("%s is a YAML %s, not a mapping of RKE2 options: nothing written" % (path, kind),
                       "%s is not a YAML mapping" % path)


def children(node):
    """A node's keys and values (a mapping) or items (a sequence)."""
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _check_keys(node, path, seen=None):
    """Refuse duplicate keys at any depth, a mapping's own keys before what they hold. An alias is walked once (a node
    may hold itself)."""
    seen = set() if seen is None else seen
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        keys = {}
        for key, dummy in node.value:
            if isinstance(key, yaml.ScalarNode):
                if key.value in keys:
                    raise ConfigError("%s: duplicate key %r at line %d (first at line %d): nothing written"
                                      % (path, key.value, key.start_mark.line + 1, keys[key.value] + 1),
                                      "%s: duplicate key %r at line %d (first at line %d)"
                                      % (path, key.value, key.start_mark.line + 1, keys[key.value] + 1))
                keys[key.value] = key.start_mark.line
    for child in children(node):
        _check_keys(child, path, seen)


# The keys SafeLoader's constructor rewrites in the node tree it builds from (flatten_mapping): merge keys and "=".
_RESHAPING_TAGS = ("tag:yaml.org,2002:merge", "tag:yaml.org,2002:value")


def _reshaped_by_construction(root):
    """Whether a mapping of the tree holds a key that building the data would rewrite in place."""
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode) and any(key.tag in _RESHAPING_TAGS for key, dummy in node.value):
            return True
        stack.extend(children(node))
    return False


def compose(text, path):
    """The document's top-level mapping node (None when empty or null, which RKE2 reads as no option set); refuses
    what RKE2 would not read as we do."""
    try:
        docs = [d for d in yaml.compose_all(text or "", Loader=yaml.SafeLoader) if d is not None]
    except yaml.YAMLError as e:
        raise _yaml_error(path, e)
    if len(docs) > 1:
        finding = None
        try:
            yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as e:  # "but found another document", with its line and column
            finding = _yaml_error(path, e).finding
        raise ConfigError("%s holds %d YAML documents, RKE2 reads one: nothing written" % (path, len(docs)), finding)
    root = docs[0] if docs else None
    if root is None or isinstance(root, yaml.ScalarNode) and root.tag == NULL_TAG:  # "", "---", "~": no option set
        return None
    if not isinstance(root, yaml.MappingNode):
        raise _not_a_mapping(path, {yaml.SequenceNode: "list", yaml.ScalarNode: "str"}.get(type(root), type(root).__name__))
    _check_keys(root, path)
    return root


def parse(text, path):
    """(data, root): the config as a dict ({} when empty) and its top-level mapping node (None when empty)."""
    root = compose(text, path)
    if root is None:
        return {}, None
    try:
        if _reshaped_by_construction(root):  # "<<" or "=": building the data would rewrite the nodes the caller gets
            data = yaml.safe_load(text)
        else:  # the data built from the node just composed, as safe_load would build it, without parsing again
            loader = yaml.SafeLoader("")
            try:
                data = loader.construct_document(root)
            finally:
                loader.dispose()
    except yaml.YAMLError as e:  # a tag SafeLoader cannot build
        raise _yaml_error(path, e)
    if not isinstance(data, dict):  # a mapping node tagged as something else (!!set)
        raise _not_a_mapping(path, type(data).__name__)
    return data, root


def load_config(text, path):
    """Parse config.yaml text into a dict (empty text -> {}); refuses what RKE2 would not read."""
    return parse(text, path)[0]


def shared_keys(root, keys):
    """The top-level keys among ``keys`` (or their ``+`` forms) whose value shares a YAML node with another place of
    the file (an anchor and its alias): the rke2_config action cannot edit such a list in place without changing the
    other place, and refuses it."""
    if root is None:
        return []
    refs, stack = {}, [root]
    while stack:
        node = stack.pop()
        refs[id(node)] = refs.get(id(node), 0) + 1
        if refs[id(node)] == 1:
            stack.extend(children(node))

    def shared(node, visited):
        if refs.get(id(node), 0) > 1:
            return True
        if id(node) in visited:
            return False
        visited.add(id(node))
        return any(shared(child, visited) for child in children(node))

    return sorted(set(k.value for k, v in root.value
                      if isinstance(k, yaml.ScalarNode) and k.value.rstrip("+") in keys and shared(v, set())))


def as_list(value, key, path):
    """A string-list option's entries (a null: none; one string: one); anything else is refused."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return [str(v) for v in value]
    raise ConfigError("%s: %s must be a string or a list of strings: nothing written" % (path, key))


def effective_sources(files):
    """RKE2's reading of its config files, keeping where each value comes from.

    ``files`` is [(path, text)] in the order RKE2 reads them (config.yaml, then
    config.yaml.d/*.yaml and *.yml in name order; k3s pkg/configfilearg). A
    later file's ``key`` replaces every earlier value; ``key+`` appends to the
    list. Returns {key: [(path, value, appended)]}.
    """
    merged = {}
    for path, text in files:
        for key, value in load_config(text, path).items():
            if key.endswith("+"):
                merged.setdefault(key[:-1], []).append((path, as_list(value, key, path), True))
            else:
                merged[key] = [(path, value, False)]
    return merged


def effective_config(files):
    """RKE2's view of its config (see effective_sources): {key: value}."""
    out = {}
    for key, parts in effective_sources(files).items():
        if len(parts) == 1 and not parts[0][2]:
            out[key] = parts[0][1]
        else:
            out[key] = [v for path, value, dummy in parts for v in as_list(value, key, path)]
    return out
