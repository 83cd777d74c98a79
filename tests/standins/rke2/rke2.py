#!/bin/sh
""":"
exec python3 "$0" "$@"
":"""
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
#
# Stand-in for `rke2 agent` and the kubelet it supervises, for Molecule containers.
#
# The first lines make this file both a shell script and Python: /bin/sh runs
# `exec python3 "$0" "$@"` (ansible-test accepts only a few shebangs, and
# Debian's python3 package has no /usr/bin/python); Python sees a string.
# Installed as /usr/local/bin/rke2 and run by a real rke2-agent.service.
#
# What it reproduces (README.md next to the stand-ins has the details):
# - RKE2: config.yaml then config.yaml.d/*.yaml|*.yml in name order, a later
#   key replaces an earlier one, `key+` appends; kubelet-arg turned into flags
#   the way RKE2's GetArgs does (sorted by name, repeated names kept in order,
#   `name+=` / `name-=` add to RKE2's default); RKE2's kubelet defaults
#   (evictionHard without memory.available); the kubelet restarted every 5 s
#   while the rke2 process and the unit stay up; kubelet log in
#   <data-dir>/agent/logs/kubelet.log.
# - The kubelet: flag parsing (last wins, map flags merge, reserved-memory
#   accumulates), the configuration validation, reserved-cpus, node
#   allocatable, the Topology, CPU and Memory Managers' refusals and their
#   checkpoints (cpu_manager_state, memory_manager_state) with the kubelet's own
#   error strings, healthz on 127.0.0.1:10248 only while it runs.
# - The Node object, as a file the API stand-in (kubeapi) serves.
#
# Standalone on purpose: Python 3.8+ standard library and PyYAML only, and no
# import of the collection, so it stays an independent description of what
# the real components do.

from __future__ import annotations

import base64
import contextlib
import datetime
import fcntl
import hashlib
import http.server
import json
import math
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib
from fractions import Fraction

import yaml

# The RKE2 release this stand-in runs as ($RKE2_STANDIN_VERSION, read once at start like the real binary's own): its
# kubelet is that minor's - the policy options and feature gates it knows, the CPU Manager checkpoint it writes.
VERSION = os.environ.get("RKE2_STANDIN_VERSION") or "v1.33.1+rke2r1"
if not re.match(r"^v\d+\.\d+\.\d+\+rke2r\d+$", VERSION):
    raise SystemExit("RKE2_STANDIN_VERSION must look like v1.37.2+rke2r1, got %r" % VERSION)
KUBELET_VERSION = VERSION
MINOR = int(VERSION.split(".")[1])

DEFAULT_CONFIG = "/etc/rancher/rke2/config.yaml"
DEFAULT_DATA_DIR = "/var/lib/rancher/rke2"
DEFAULT_KUBELET_DIR = "/var/lib/kubelet"
DEFAULT_STATE_DIR = "/var/lib/rke2-standin"
DEFAULT_HEALTHZ_PORT = 10248
CPU_STATE = "cpu_manager_state"
MEMORY_STATE = "memory_manager_state"

# The kubelet configuration RKE2 (1.32+) writes to
# <data-dir>/agent/etc/kubelet.conf.d/00-rke2-defaults.conf, reduced to what the
# stand-in models: no memory.available in evictionHard.
RKE2_KUBELET_CONFIG = {
    "healthz-bind-address": "127.0.0.1",
    "read-only-port": "0",
    "eviction-hard": {"imagefs.available": "5%", "nodefs.available": "5%"},
    "eviction-minimum-reclaim": {"imagefs.available": "10%", "nodefs.available": "10%"},
}
# The kubelet's own defaults (pkg/kubelet/apis/config/v1beta1/defaults_linux.go).
UPSTREAM_EVICTION_HARD = {"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%",
                          "imagefs.available": "15%", "imagefs.inodesFree": "5%"}

MAP_FLAGS = frozenset(("kube-reserved", "system-reserved", "cpu-manager-policy-options", "topology-manager-policy-options",
                       "feature-gates", "eviction-minimum-reclaim", "eviction-soft-grace-period", "qos-reserved", "node-labels"))
LANGLE_MAP_FLAGS = frozenset(("eviction-hard", "eviction-soft"))
INT_FLAGS = frozenset(("healthz-port", "read-only-port", "max-pods", "port"))
EVICTION_SIGNALS = frozenset(("memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree",
                              "containerfs.available", "containerfs.inodesFree", "allocatableMemory.available", "pid.available"))
RESERVABLE = ("cpu", "memory", "ephemeral-storage", "pid")
# The static policy's options by the minor that made them alpha, beta and stable (cpumanager/policy_options.go
# alphaOptions/betaOptions/stableOptions over the releases: KEPs 2625, 2902, 4176, 4540, 4800), and the Topology
# Manager's (topologymanager/policy_options.go: KEPs 3545, 4622). 99: not yet.
CPU_OPTION_LEVELS = {"full-pcpus-only": (22, 23, 33), "distribute-cpus-across-numa": (23, 33, 99), "align-by-socket": (25, 99, 99),
                     "distribute-cpus-across-cores": (31, 99, 99), "strict-cpu-reservation": (32, 33, 35),
                     "prefer-align-cpus-by-uncorecache": (32, 34, 36)}
TOPOLOGY_OPTION_LEVELS = {"prefer-closest-numa-nodes": (26, 28, 32), "max-allowable-numa-nodes": (31, 31, 35)}
CPU_OPTIONS = frozenset(name for name, levels in CPU_OPTION_LEVELS.items() if levels[0] <= MINOR)


def option_level(levels, name):
    """alpha, beta or stable: the option's level in this kubelet's minor; None when it does not know it."""
    alpha, beta, stable = levels.get(name, (99, 99, 99))
    return "stable" if MINOR >= stable else "beta" if MINOR >= beta else "alpha" if MINOR >= alpha else None


def feature_gate(cfg, gate):
    """A gate as this kubelet runs it: --feature-gates, else the minor's default (pkg/features/kube_features.go)."""
    given = (cfg.get("feature-gates") or {}).get(gate)
    if given is not None:
        return str(given).strip().lower() in ("1", "t", "true")
    # each gate's stage in this minor (pkg/features/kube_features.go): alpha gates are off by default, beta ones on
    stages = {"CPUManagerPolicyAlphaOptions": "alpha", "CPUManagerPolicyBetaOptions": "beta",
              "TopologyManagerPolicyAlphaOptions": "alpha", "TopologyManagerPolicyBetaOptions": "beta",
              "PodLevelResourceManagers": "beta" if MINOR >= 37 else "alpha"}
    stage = stages.get(gate, "alpha")
    # AllAlpha / AllBeta: every gate of that stage not named itself (featuregate setUnsetAlphaGates/setUnsetBetaGates)
    every = (cfg.get("feature-gates") or {}).get("AllAlpha" if stage == "alpha" else "AllBeta")
    if every is not None:
        return str(every).strip().lower() in ("1", "t", "true")
    return stage == "beta"


def option_refusal(cfg, kind, name):
    """CheckPolicyOptionAvailable of the CPU (kind "CPU") or Topology Manager, in its words, or None."""
    level = option_level(CPU_OPTION_LEVELS if kind == "CPU" else TOPOLOGY_OPTION_LEVELS, name)
    if level is None:
        return "unknown %s Manager Policy option: %s" % (kind, go_quote(name))
    gate = "%sManagerPolicy%sOptions" % ("CPU" if kind == "CPU" else "Topology", level.capitalize())
    if level != "stable" and not feature_gate(cfg, gate):
        return "%s Manager Policy %s-level Options not enabled, but option %s provided" % (kind, level.capitalize(), go_quote(name))
    return None


def cpu_checkpoint_format(cfg):
    """The CPU Manager checkpoint this kubelet writes (cpumanager/state/checkpoint.go): v4 from 1.37, v3 in 1.36
    with PodLevelResourceManagers on, v2 before."""
    if MINOR >= 37:
        return "v4"
    return "v3" if MINOR == 36 and feature_gate(cfg, "PodLevelResourceManagers") else "v2"


TOPOLOGY_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
DEFAULT_MAX_NUMA_NODES = 8


def stage_runtime(data_dir):
    """RKE2's runtime as rancher/rke2 pkg/bootstrap/bootstrap.go ``Stage`` leaves it: the runtime image's binaries
    (the kubelet's among them) in ``<data-dir>/data/<refDigest>/bin`` - ``releaseRefDigest``: the image's version tag
    (``v1.37.2-rke2r1``: an image tag holds no ``+``), ``-`` and the first 12 hex digits of the reference's SHA-256 -
    and the symlink ``<data-dir>/bin`` pointing there, rewritten at each start."""
    tag = VERSION.replace("+", "-")
    ref = "docker.io/rancher/rke2-runtime:%s" % tag
    folder = os.path.join(data_dir, "data", "%s-%s" % (tag, hashlib.sha256(ref.encode()).hexdigest()[:12]), "bin")
    with contextlib.suppress(OSError):
        os.makedirs(folder, exist_ok=True)
        link = os.path.join(data_dir, "bin")
        if os.path.islink(link) or os.path.exists(link):
            if os.path.islink(link) and os.readlink(link) == folder:
                return
            os.remove(link) if os.path.islink(link) else shutil.rmtree(link)
        os.symlink(folder, link)


def env(name, default=None):
    value = os.environ.get(name)
    return default if value in (None, "") else value


def go_quote(text):
    """Go's %q for the strings the kubelet quotes (ASCII in practice)."""
    return json.dumps(str(text), ensure_ascii=False)


def go_quote_list(items):
    """Go's %q of a []string: ["a" "b"]."""
    return "[" + " ".join(go_quote(i) for i in items) + "]"


def aggregate(errors):
    """utilerrors.NewAggregate(...).Error(): one message as is, several in brackets."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


# ---------------------------------------------------------------- cpulists

def _atoi(text):
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise ValueError("strconv.Atoi: parsing %s: invalid syntax" % go_quote(text))
    return int(text)


def parse_cpulist(text):
    """A cpulist ("0-3,8") as a frozenset, with k8s.io/utils/cpuset.Parse's errors."""
    if text == "":
        return frozenset()
    cpus = set()
    for part in text.split(","):
        bounds = part.split("-", 1)
        if len(bounds) == 1:
            cpus.add(_atoi(bounds[0]))
            continue
        start, end = _atoi(bounds[0]), _atoi(bounds[1])
        if start > end:
            raise ValueError("invalid range %s (%d > %d)" % (go_quote(part), start, end))
        cpus.update(range(start, end + 1))
    return frozenset(cpus)


def format_cpulist(cpus):
    """The kernel's and cpuset.String()'s form: sorted ranges, "a-b" for runs."""
    ids = sorted(set(cpus))
    out = []
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else "%d-%d" % (ids[i], ids[j]))
        i = j + 1
    return ",".join(out)


# ---------------------------------------------------------------- quantities

BINARY_SUFFIXES = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


class Quantity:
    """A resource.Quantity: an exact value and the format its String() uses."""

    __slots__ = ("value", "fmt")

    def __init__(self, value=0, fmt="DecimalSI"):
        self.value = Fraction(value)
        self.fmt = fmt

    def add(self, other):
        """q.Add(y): a zero q takes y's format."""
        return Quantity(self.value + other.value, other.fmt if self.value == 0 else self.fmt)

    def is_zero(self):
        return self.value == 0

    def bytes(self):
        """Value(): rounded up to an integer."""
        return math.ceil(self.value)

    def __eq__(self, other):
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return "Quantity(%s)" % self

    def __str__(self):
        value, fmt = self.value, self.fmt
        if fmt == "BinarySI" and (-1024 < value < 1024 or value.denominator != 1):
            fmt = "DecimalSI"
        if fmt == "BinarySI":
            number, exponent = int(value), 0
            while exponent < 6 and number % 1024 == 0:
                number //= 1024
                exponent += 1
            return "%d%s" % (number, ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")[exponent])
        if value == 0:
            return "0"
        scale = 0
        while (value * 10 ** scale).denominator != 1 and scale < 40:
            scale += 1
        amount, exponent = int(value * 10 ** scale), -scale
        while amount % 10 == 0:
            amount //= 10
            exponent += 1
        shift = exponent % 3
        amount, exponent = amount * 10 ** shift, exponent - shift
        if fmt == "DecimalExponent":
            return "%d%s" % (amount, "e%d" % exponent if exponent else "")
        names = {v: k for k, v in DECIMAL_SUFFIXES.items()}
        return "%d%s" % (amount, names.get(exponent, "e%d" % exponent))


def parse_quantity(text):
    """resource.ParseQuantity for the forms flags use: 1Gi, 500M, 1.5Gi, 100, 1e3, 500m."""
    match = re.fullmatch(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)", text.strip() if isinstance(text, str) else str(text))
    if not text or not match or not (match.group(2) or match.group(3)):
        raise ValueError(QUANTITY_FORMAT_ERROR)
    sign, whole, frac, suffix = match.groups()
    number = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
    if sign == "-":
        number = -number
    if suffix in BINARY_SUFFIXES:
        return Quantity(number * 1024 ** BINARY_SUFFIXES[suffix], "BinarySI")
    if suffix in DECIMAL_SUFFIXES:
        return Quantity(number * Fraction(10) ** DECIMAL_SUFFIXES[suffix], "DecimalSI")
    exp = re.fullmatch(r"[eE]([+-]?[0-9]+)", suffix)
    if exp:
        return Quantity(number * Fraction(10) ** int(exp.group(1)), "DecimalExponent")
    raise ValueError("unable to parse quantity's suffix")


def float32(value):
    return struct.unpack("f", struct.pack("f", value))[0]


def hugepage_resource(size_kb):
    """The kubelet's resource name of a page size: hugepages-2Mi, hugepages-1Gi."""
    return "hugepages-" + str(Quantity(size_kb * 1024, "BinarySI"))


# ---------------------------------------------------------------- RKE2 configuration

class ConfigError(Exception):
    """config.yaml or a drop-in that RKE2 refuses to start with."""


def config_files(config_path, dropin_dir):
    """config.yaml (when present) then config.yaml.d/*.yaml|*.yml in name order, like RKE2."""
    files = [config_path] if os.path.isfile(config_path) else []
    try:
        names = sorted(os.listdir(dropin_dir))
    except OSError:
        names = []
    for name in names:
        path = os.path.join(dropin_dir, name)
        if os.path.isfile(path) and name.lower().endswith((".yaml", ".yml")):
            files.append(path)
    return files


def _as_list(value):
    return list(value) if isinstance(value, list) else [value]


def load_config(files):
    """Merge the files: a later key replaces an earlier one, ``key+`` appends to ``key``."""
    values = {}
    for path in files:
        try:
            with open(path, "rb") as handle:
                data = yaml.safe_load(handle)
        except yaml.YAMLError as exc:
            raise ConfigError("failed to parse config file %s: yaml: %s" % (path, " ".join(str(exc).split())))
        except OSError as exc:
            raise ConfigError("failed to read config file %s: %s" % (path, exc))
        if data is None:
            continue
        if not isinstance(data, dict):
            raise ConfigError("failed to parse config file %s: yaml: unmarshal errors: cannot unmarshal !!%s into yaml.MapSlice"
                              % (path, {list: "seq", str: "str", int: "int", float: "float", bool: "bool"}.get(type(data), "value")))
        for key, value in data.items():
            key = str(key)
            append = key.endswith("+")
            key = key[:-1] if append else key
            if append and key in values:
                values[key] = _as_list(values[key]) + _as_list(value)
            else:
                values[key] = value
    return values


def _flag_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def extract_config_args(user_args, config_dir):
    """k3s pkg/daemons/agent/agent.go ``extractConfigArgs`` (RKE2 1.32+, rancher/rke2#4043): a user ``config=FILE``
    kubelet-arg is copied to ``<config-dir>/10-cli-config.conf`` and ``config-dir=DIR`` to
    ``<config-dir>/20-cli-config-dir/`` (its files and folders), and both leave the command line - the kubelet gets
    RKE2's own ``--config-dir``, which it walks recursively. Returns the other kubelet-args."""
    rest = []
    for raw in user_args:
        text = _flag_text(raw)
        text = text[2:] if text.startswith("--") else text
        name, sep, value = text.partition("=")
        name = name.rstrip("+-").replace("_", "-")
        if name not in ("config", "config-dir") or not sep:
            rest.append(raw)
            continue
        with contextlib.suppress(OSError):
            os.makedirs(config_dir, exist_ok=True)
            if name == "config":
                shutil.copyfile(value, os.path.join(config_dir, "10-cli-config.conf"))
            else:
                target = os.path.join(config_dir, "20-cli-config-dir")
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(value, target)
    return rest


# A KubeletConfiguration field's flag (k8s.io/kubelet config/v1beta1 types.go; options.go AddKubeletConfigFlags binds
# each flag to its field), for the ones the stand-in models.
CONFIG_FIELDS = {"cpuManagerPolicy": "cpu-manager-policy", "cpuManagerPolicyOptions": "cpu-manager-policy-options",
                 "topologyManagerPolicy": "topology-manager-policy", "topologyManagerScope": "topology-manager-scope",
                 "topologyManagerPolicyOptions": "topology-manager-policy-options", "memoryManagerPolicy": "memory-manager-policy",
                 "reservedSystemCPUs": "reserved-cpus", "kubeReserved": "kube-reserved", "systemReserved": "system-reserved",
                 "evictionHard": "eviction-hard", "reservedMemory": "reserved-memory", "featureGates": "feature-gates",
                 "healthzPort": "healthz-port", "healthzBindAddress": "healthz-bind-address", "readOnlyPort": "read-only-port",
                 "maxPods": "max-pods"}


def _merge_patch(base, patch):
    """RFC 7386 JSON merge patch (evanphx/json-patch MergePatch): maps merge key by key, null deletes, anything else -
    a list included - replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge_patch(out.get(key), value)
    return out


def dropin_config(config_dir):
    """The kubelet's drop-ins (cmd/kubelet/app/server.go mergeKubeletConfigurations): every ``*.conf`` under
    ``--config-dir``, walked as filepath.WalkDir does (lexical order, into sub-folders), each merged over the ones before
    as a JSON merge patch. Returns (the merged fields, the files read); KubeletRefusal with the kubelet's words for a
    file it cannot load."""
    merged, files = {}, []

    def walk(folder):   # filepath.WalkDir: each folder's entries in name order, a sub-folder entered where it sorts
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if os.path.isdir(path):
                yield from walk(path)
            elif name.endswith(".conf"):
                yield path

    for path in walk(config_dir):
        try:
            with open(path) as handle:
                data = yaml.safe_load(handle) or {}
            if not isinstance(data, dict):
                raise ValueError("not a KubeletConfiguration")
        except (OSError, ValueError, yaml.YAMLError) as exc:
            err = "failed to merge kubelet configs: failed to load kubelet dropin file, path: %s, error: %s" % (path, exc)
            raise KubeletRefusal(err, [klog("E", "run.go:72", "command failed", err=err)])
        merged = _merge_patch(merged, data)
        files.append(path)
    return merged, files


def _config_value(flag, value):
    """A drop-in field's value as parse_kubelet_flags holds the flag's: maps of strings, reserved-memory entries."""
    if flag == "reserved-memory":
        return [{"numaNode": int(r.get("numaNode", 0)), "limits": dict((k, parse_quantity(str(v))) for k, v in (r.get("limits") or {}).items())}
                for r in value or []]
    if isinstance(value, dict):
        return dict((str(k), str(v).lower() if isinstance(v, bool) else str(v)) for k, v in value.items())
    if flag in INT_FLAGS:
        return int(value)
    return str(value)


def kubelet_args(user_args, defaults):
    """RKE2's GetArgs: ``--name=value`` strings, sorted by name, repeated names in their order.

    A user flag replaces RKE2's flag of the same name; ``name+=v`` appends ``v``
    as one more occurrence after the default, ``name-=v`` puts it before.
    """
    initial = dict(defaults)
    multi = {}
    for raw in user_args:
        text = _flag_text(raw)
        text = text[2:] if text.startswith("--") else text
        name, sep, value = text.partition("=")
        value = value if sep else "true"
        clean = name.rstrip("+-")
        existing = multi.get(clean, [])
        if name.endswith("+"):
            new = ([initial[clean]] if clean in initial else []) + existing + [value]
        elif name.endswith("-"):
            new = [value] + ([initial[clean]] if clean in initial else []) + existing
        else:
            new = existing + [value]
        initial.pop(clean, None)
        multi[clean] = new
    for name, value in initial.items():
        multi[name] = [value]
    return ["--%s=%s" % (name, value) for name in sorted(multi) for value in multi[name]]


# ---------------------------------------------------------------- the kubelet's flags

class KubeletRefusal(Exception):
    """The kubelet exits: ``err`` is its error; ``lines`` the klog lines it writes."""

    def __init__(self, err, lines):
        Exception.__init__(self, err)
        self.err = err
        self.lines = lines


def _parse_map(value, sep):
    result = {}
    for item in value.split(","):
        if not item:
            continue
        pair = item.split(sep, 1)
        if len(pair) != 2:
            raise ValueError("malformed pair, expect string%sstring" % sep)
        result[pair[0].strip()] = pair[1].strip()
    return result


def _parse_reserved_memory(value):
    """The kubelet's ReservedMemoryVar.Set: ``0:memory=1Gi,hugepages-1Gi=2Gi;1:memory=1Gi``."""
    out = []
    for reservation in value.split(";"):
        parts = reservation.split(":")
        if len(parts) != 2:
            raise ValueError("the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], got %s" % reservation)
        try:
            node = int(parts[0])
        except ValueError:
            raise ValueError("failed to convert the NUMA node ID, exptected integer, got %s" % parts[0])
        limits = {}
        for item in parts[1].split(","):
            limit = item.split("=")
            if len(limit) != 2:
                raise ValueError("the reserved limit has incorrect value, expected type=quantatity, got %s" % item)
            if limit[0] != "memory" and not limit[0].startswith("hugepages-"):
                raise ValueError("memory type conversion error, unknown type: %s" % go_quote(limit[0]))
            try:
                limits[limit[0]] = parse_quantity(limit[1])
            except ValueError:
                raise ValueError("failed to parse the quatity, expected quatity, got %s" % limit[1])
        out.append({"numaNode": node, "limits": limits})
    return out


def runs_with(cfg, args, flag):
    """Whether the kubelet runs with the setting ``flag`` (``--name=value``) - on its command line, or from its
    configuration files (a KubeletConfiguration drop-in sets it as well as the flag does)."""
    if flag in args:
        return True
    name = flag[2:].partition("=")[0].replace("_", "-")
    return name in cfg and cfg[name] == parse_kubelet_flags([flag]).get(name)


def parse_kubelet_flags(args, eviction_defaults="rke2", node_ip=""):
    """Apply ``--name=value`` flags over the configuration RKE2 gives the kubelet.

    RKE2 binds healthz to ::1 instead of 127.0.0.1 when the first of its
    ``node-ip`` addresses is IPv6 (k3s pkg/daemons/agent/agent_linux.go).

    Map flags: the first occurrence replaces the configured map, later ones add
    keys; --reserved-memory accumulates; anything else: the last one wins.
    Flags the stand-in does not model are kept but not checked.
    """
    cfg = {
        "cpu-manager-policy": "none", "cpu-manager-policy-options": {}, "reserved-cpus": "",
        "topology-manager-policy": "none", "topology-manager-scope": "container", "topology-manager-policy-options": {},
        "memory-manager-policy": "None", "reserved-memory": [], "kube-reserved": {}, "system-reserved": {},
        "eviction-hard": dict(UPSTREAM_EVICTION_HARD), "healthz-port": DEFAULT_HEALTHZ_PORT, "healthz-bind-address": "127.0.0.1",
        "root-dir": None, "kube-reserved-cgroup": "", "system-reserved-cgroup": "",
    }
    if eviction_defaults == "rke2":
        for name, value in RKE2_KUBELET_CONFIG.items():
            cfg[name] = dict(value) if isinstance(value, dict) else value
        if ":" in str(node_ip).split(",", maxsplit=1)[0]:
            cfg["healthz-bind-address"] = "::1"
    # the drop-ins of --config-dir over the defaults (RKE2's 00-rke2-defaults.conf sorts first), the flags over them
    config_dir = [a.partition("=")[2] for a in args if a.startswith("--config-dir=")]
    if config_dir and os.path.isdir(config_dir[-1]):
        fields, files = dropin_config(config_dir[-1])
        for field, value in fields.items():
            flag = CONFIG_FIELDS.get(field)
            if flag is None:
                continue
            value = _config_value(flag, value)
            cfg[flag] = _merge_patch(cfg.get(flag), value) if isinstance(value, dict) else value
        cfg["config-files"] = files
    seen = set()
    for arg in args:
        name, dummy, value = arg[2:].partition("=")
        # the kubelet's flag set reads '_' as '-' (cmd/kubelet/app/server.go: cleanFlagSet.SetNormalizeFunc(
        # cliflag.WordSepNormalizeFunc), k8s.io/component-base/cli/flag/flags.go)
        name = name.replace("_", "-")
        first = name not in seen
        seen.add(name)
        try:
            if name in MAP_FLAGS or name in LANGLE_MAP_FLAGS:
                parsed = _parse_map(value, "<" if name in LANGLE_MAP_FLAGS else "=")
                cfg[name] = parsed if first else dict(cfg.get(name) or {}, **parsed)
            elif name == "reserved-memory":
                cfg[name] = (_parse_reserved_memory(value) if value else []) if first else cfg[name] + (_parse_reserved_memory(value) if value else [])
            elif name in INT_FLAGS:
                if not re.fullmatch(r"[+-]?[0-9]+", value):
                    raise ValueError("strconv.ParseInt: parsing %s: invalid syntax" % go_quote(value))
                cfg[name] = int(value)
            else:
                cfg[name] = value
        except ValueError as exc:
            err = "invalid argument %s for %s flag: %s" % (go_quote(value), go_quote("--" + name), exc)
            raise KubeletRefusal("failed to parse kubelet flag: " + err,
                                 [klog("E", "server.go:233", "Failed to parse kubelet flag", err=err),
                                  klog("E", "run.go:72", "command failed", err="failed to parse kubelet flag: " + err)])
    return cfg


def validate_kubelet_config(cfg):
    """The part of ValidateKubeletConfiguration the stand-in models; [] when valid."""
    errors = []
    port = cfg["healthz-port"]
    if port != 0 and not 1 <= port <= 65535:
        errors.append("invalid configuration: healthzPort (--healthz-port) %d must be between 1 and 65535, inclusive" % port)
    if cfg["topology-manager-policy"] not in TOPOLOGY_POLICIES:
        errors.append("invalid configuration: topologyManagerPolicy (--topology-manager-policy) %s must be one of: %s"
                      % (go_quote(cfg["topology-manager-policy"]), go_quote_list(TOPOLOGY_POLICIES)))
    if cfg["topology-manager-scope"] not in ("container", "pod"):
        errors.append("invalid configuration: topologyManagerScope (--topology-manager-scope) %s must be one of: %s, or %s"
                      % (go_quote(cfg["topology-manager-scope"]), go_quote("container"), go_quote("pod")))
    if cfg["reserved-cpus"]:
        if cfg["system-reserved-cgroup"] or cfg["kube-reserved-cgroup"]:
            errors.append("invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup "
                          "(--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)")
        try:
            parse_cpulist(cfg["reserved-cpus"])
        except ValueError as exc:
            errors.append("invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) %s, error: %s" % (cfg["reserved-cpus"], exc))
    seen = set()
    for reservation in cfg["reserved-memory"]:
        node = reservation["numaNode"]
        for resource_name, quantity in reservation["limits"].items():
            if quantity.is_zero():
                errors.append("invalid configuration: reserved memory may not be zero for NUMA node %d and resource %s" % (node, go_quote(resource_name)))
            if (node, resource_name) in seen:
                errors.append("invalid configuration: the reserved memory has a duplicate value for NUMA node %d and resource %s"
                              % (node, go_quote(resource_name)))
            seen.add((node, resource_name))
    return errors


# ---------------------------------------------------------------- topology (what cAdvisor reports)

def _read(path, default=None):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return default


def _meminfo_kb(path, key):
    text = _read(path, "") or ""
    match = re.search(r"(?m)^(?:Node \d+ )?%s:\s+(\d+) kB" % re.escape(key), text)
    return int(match.group(1)) if match else None


def _hugepages(directory):
    pages = {}
    try:
        names = os.listdir(directory)
    except OSError:
        return pages
    for name in names:
        match = re.fullmatch(r"hugepages-(\d+)kB", name)
        if match:
            pages[int(match.group(1))] = int(_read(os.path.join(directory, name, "nr_hugepages"), "0") or 0)
    return pages


def read_topology(root):
    """The machine as the kubelet sees it through cAdvisor, from a sysfs/procfs tree."""
    cpu_dir = os.path.join(root, "sys", "devices", "system", "cpu")
    node_dir = os.path.join(root, "sys", "devices", "system", "node")
    online_text = _read(os.path.join(cpu_dir, "online"))
    if online_text is None:
        raise OSError("cannot read %s" % os.path.join(cpu_dir, "online"))
    online = parse_cpulist(online_text)
    siblings, packages = {}, {}
    for cpu in online:
        topo = os.path.join(cpu_dir, "cpu%d" % cpu, "topology")
        text = _read(os.path.join(topo, "thread_siblings_list"))
        siblings[cpu] = (parse_cpulist(text) & online) if text else frozenset((cpu,))
        packages[cpu] = int(_read(os.path.join(topo, "physical_package_id"), "0") or 0)
    nodes = {}
    try:
        names = os.listdir(node_dir)
    except OSError:
        names = []
    for name in names:
        match = re.fullmatch(r"node(\d+)", name)
        if not match:
            continue
        nid = int(match.group(1))
        path = os.path.join(node_dir, name)
        text = _read(os.path.join(path, "cpulist"))
        if text is None:
            cpus = frozenset(int(n[3:]) for n in os.listdir(path) if re.fullmatch(r"cpu\d+", n))
        else:
            cpus = parse_cpulist(text)
        nodes[nid] = {"cpus": cpus & online, "memory": (_meminfo_kb(os.path.join(path, "meminfo"), "MemTotal") or 0) * 1024,
                      "hugepages": _hugepages(os.path.join(path, "hugepages"))}
    mem_total = _meminfo_kb(os.path.join(root, "proc", "meminfo"), "MemTotal")
    if not nodes:  # no NUMA information: cAdvisor reports one node 0
        nodes[0] = {"cpus": online, "memory": (mem_total or 0) * 1024,
                    "hugepages": _hugepages(os.path.join(root, "sys", "kernel", "mm", "hugepages"))}
    capacity = mem_total * 1024 if mem_total is not None else sum(n["memory"] for n in nodes.values())
    return {"online": online, "siblings": siblings, "packages": packages, "nodes": nodes, "memory_capacity": capacity}


def take_by_topology(topology, count):
    """Reserved CPUs without --reserved-cpus: whole low-numbered cores first (takeByTopology, simplified)."""
    cores = sorted({topology["siblings"][c] for c in topology["online"]}, key=lambda core: (topology["packages"][min(core)], min(core)))
    taken = []
    for core in cores:
        if len(taken) + len(core) <= count:
            taken.extend(sorted(core))
    for core in cores:
        for cpu in sorted(core):
            if len(taken) < count and cpu not in taken:
                taken.append(cpu)
    return frozenset(taken)


# ---------------------------------------------------------------- checkpoints

class CheckpointError(Exception):
    """A checkpoint the checkpoint manager cannot load."""


def checksum(data):
    """The stand-in's checksum: CRC-32 of the canonical JSON of everything but ``checksum``.

    (The kubelet hashes its Go structs; a stand-in cannot, so its checkpoints
    carry this instead and it verifies only its own.)
    """
    body = {k: v for k, v in data.items() if k != "checksum"}
    return zlib.crc32(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")) & 0xFFFFFFFF


def read_checkpoint(path, verify=True):
    """The checkpoint as a dict; None when there is none; CheckpointError when it is unusable."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CheckpointError(str(exc))
    if not raw.strip():
        raise CheckpointError("unexpected end of JSON input")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise CheckpointError("invalid character in checkpoint: %s" % exc)
    if not isinstance(data, dict):
        raise CheckpointError("json: cannot unmarshal %s into Go value of type checkpoint" % type(data).__name__)
    if verify and data.get("checksum") != checksum(data):
        raise CheckpointError("checkpoint is corrupted")
    return data


def _store(path, data):
    """Written like the kubelet's file store: temporary file, then rename; mode 0600."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = "%s.tmp.%d" % (path, os.getpid())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(json.dumps(data, separators=(",", ":")))
    os.replace(tmp, path)


def write_checkpoint(path, data):
    """The checkpoint with the stand-in's checksum, stored as the kubelet stores it."""
    data = dict(data)
    data["checksum"] = checksum(data)
    _store(path, data)
    return data


V2_FIELDS = ("policyName", "defaultCpuSet", "entries", "checksum")


def write_cpu_checkpoint(path, data, fmt):
    """The CPU Manager's checkpoint in the format its kubelet writes: v2 as ever; v3 with ``podEntries`` in the
    checksum; v4 (CPUManagerCheckpoint.MarshalCheckpoint) the V3 fields inline with checksum 0 and the authoritative
    ``data`` - the serialized fields - with ``dataChecksum`` (the stand-in's CRC of the string)."""
    if fmt == "v2":
        return write_checkpoint(path, data)
    data = dict(data, podEntries=dict(data.get("podEntries") or {}))
    if fmt == "v3":
        return write_checkpoint(path, data)
    body = dict((k, data[k]) for k in ("policyName", "defaultCpuSet", "entries", "podEntries") if k in data)
    text = json.dumps(body, separators=(",", ":"))
    _store(path, dict(body, checksum=0, data=text, dataChecksum=zlib.crc32(text.encode("utf-8")) & 0xFFFFFFFF))
    return body


def read_cpu_checkpoint(path, verify, fmt):
    """The CPU Manager's checkpoint as this kubelet reads it: v4 from ``data`` (its dataChecksum verified); a kubelet
    that writes v2 reads only the V2 fields and their checksum - a V3 file's checksum covers podEntries too, so it is
    "checkpoint is corrupted" to it (an empty checksum is accepted, as the V4 files keep inline)."""
    try:
        with open(path, "rb") as handle:
            raw = json.loads(handle.read() or b"null")
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return read_checkpoint(path, verify)   # its own words for a file it cannot read
    if isinstance(raw, dict) and isinstance(raw.get("data"), str) and fmt == "v4":
        if verify and raw.get("dataChecksum") != zlib.crc32(raw["data"].encode("utf-8")) & 0xFFFFFFFF:
            raise CheckpointError("checkpoint is corrupted")
        return json.loads(raw["data"])
    if isinstance(raw, dict) and raw.get("checksum") == 0:
        return dict((k, v) for k, v in raw.items() if k in V2_FIELDS + ("podEntries",))
    if isinstance(raw, dict) and MINOR < 36 and "podEntries" in raw:   # before the kubelet that has the V3 type
        if verify and raw.get("checksum") != checksum(dict((k, v) for k, v in raw.items() if k in V2_FIELDS)):
            raise CheckpointError("checkpoint is corrupted")
        return dict((k, v) for k, v in raw.items() if k in V2_FIELDS)
    return read_checkpoint(path, verify)


def cpu_checkpoint(policy, default_cpus, entries=None):
    data = {"policyName": policy, "defaultCpuSet": default_cpus if isinstance(default_cpus, str) else format_cpulist(default_cpus)}
    if entries:
        data["entries"] = entries
    return data


def memory_checkpoint(policy, machine_state, entries=None):
    data = {"policyName": policy, "machineState": machine_state}
    if entries:
        data["entries"] = entries
    return data


def default_machine_state(topology, system_reserved):
    """The Static policy's getDefaultMachineState: per node, hugepages first, then regular memory."""
    state = {}
    for nid in sorted(topology["nodes"]):
        node = topology["nodes"][nid]
        reserved = system_reserved.get(nid, {})
        memory_map = {}
        hugepages_total = 0
        for size_kb in sorted(node["hugepages"]):
            name = hugepage_resource(size_kb)
            total = node["hugepages"][size_kb] * size_kb * 1024
            allocatable = (total - reserved.get(name, 0)) % 2 ** 64
            memory_map[name] = {"total": total, "systemReserved": reserved.get(name, 0), "allocatable": allocatable,
                                "reserved": 0, "free": allocatable}
            hugepages_total += total
        allocatable = (node["memory"] - reserved.get("memory", 0) - hugepages_total) % 2 ** 64
        memory_map["memory"] = {"total": node["memory"], "systemReserved": reserved.get("memory", 0), "allocatable": allocatable,
                                "reserved": 0, "free": allocatable}
        state[str(nid)] = {"numberOfAssignments": 0, "memoryMap": dict(sorted(memory_map.items())), "cells": [nid]}
    return state


def expected_machine_state(topology, system_reserved, entries):
    """The default machine state minus what the checkpoint's assignments hold (validateState)."""
    state = default_machine_state(topology, system_reserved)
    for pod, containers in sorted((entries or {}).items()):
        for container, blocks in sorted(containers.items()):
            for block in blocks or []:
                size = int(block.get("size", 0))
                affinity = [int(n) for n in block.get("numaAffinity", [])]
                for nid in affinity:
                    node = state.get(str(nid))
                    if node is None:
                        raise ValueError("[memorymanager] (pod: %s, container: %s) the memory assignment uses the NUMA that does not exist"
                                         % (pod, container))
                    node["numberOfAssignments"] += 1
                    node["cells"] = affinity
                    table = node["memoryMap"].get(block.get("type"))
                    if table is None:
                        raise ValueError("[memorymanager] (pod: %s, container: %s) the memory assignment uses memory resource that does not exist"
                                         % (pod, container))
                    if size == 0 or table["free"] <= 0:
                        continue
                    used = min(size, table["free"])
                    table["reserved"] += used
                    table["free"] -= used
                    size -= used
    return state


def machine_states_equal(first, second):
    """areMachineStatesEqual: same nodes, assignments, cells (as sets) and every table field."""
    if not isinstance(first, dict) or set(first) != set(second):
        return False
    for nid, one in first.items():
        two = second[nid]
        if not isinstance(one, dict) or one.get("numberOfAssignments", 0) != two["numberOfAssignments"]:
            return False
        if sorted(one.get("cells") or []) != sorted(two["cells"]):
            return False
        tables = one.get("memoryMap") or {}
        if set(tables) != set(two["memoryMap"]):
            return False
        for name, table in tables.items():
            for key in ("total", "systemReserved", "allocatable", "reserved", "free"):
                if (table or {}).get(key, 0) != two["memoryMap"][name][key]:
                    return False
    return True


# ---------------------------------------------------------------- logging

def klog(level, where, msg, **kv):
    """A klog structured line: E0623 14:02:03.123456    1234 file.go:12] "msg" key="value"."""
    now = datetime.datetime.now()
    text = "%s%s %s %7d %s] %s" % (level, now.strftime("%m%d"), now.strftime("%H:%M:%S.%f"), os.getpid(), where, go_quote(msg))
    for key, value in kv.items():
        text += " %s=%s" % (key, go_quote(value) if isinstance(value, str) else json.dumps(value))
    return text


def logrus(level, msg):
    """RKE2's own log line (logrus text format), as the journal shows it."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return 'time="%s" level=%s msg=%s' % (stamp, level, go_quote(msg))


# ---------------------------------------------------------------- the kubelet's start

def _refuse_run(err, before=()):
    """An error returned from the kubelet's run(): logged by the command wrapper, exit 1."""
    raise KubeletRefusal("failed to run Kubelet: " + err, list(before) + [klog("E", "run.go:72", "command failed", err="failed to run Kubelet: " + err)])


def _refuse_start(err, before=()):
    """An error from ContainerManager.Start: logged, then the kubelet exits."""
    raise KubeletRefusal(err, list(before) + [klog("E", "kubelet.go:1703", "Failed to start ContainerManager", err=err)])


def node_allocatable_reservation(cfg, topology, reserved_cpus):
    """GetNodeAllocatableReservation: system + kube reserved + hard eviction, zero values left out."""
    try:
        kube = {k: parse_quantity(v) for k, v in cfg["kube-reserved"].items()} if _check_reservable(cfg["kube-reserved"]) else {}
        system = {k: parse_quantity(v) for k, v in cfg["system-reserved"].items()} if _check_reservable(cfg["system-reserved"]) else {}
    except ValueError as exc:
        _refuse_run(str(exc))
    if reserved_cpus:
        kube.pop("cpu", None)
        system["cpu"] = Quantity(len(reserved_cpus))
    for name, reservation in (("kube-reserved", kube), ("system-reserved", system)):
        for key, quantity in reservation.items():
            if quantity.value < 0:
                _refuse_run("resource quantity for %s cannot be negative: %s" % (go_quote(key), cfg[name].get(key)))
    eviction = hard_eviction_memory(cfg, topology)
    result = {}
    for key in ("cpu", "memory"):
        total = Quantity(0)
        for part in (system.get(key), kube.get(key), eviction if key == "memory" else None):
            if part is not None:
                total = total.add(part)
        if not total.is_zero():
            result[key] = total
    return result


def _check_reservable(resources):
    for key, value in resources.items():
        if key not in RESERVABLE:
            raise ValueError("cannot reserve %s resource" % go_quote(key))
        try:
            parse_quantity(value)
        except ValueError as exc:
            raise ValueError("failed to parse quantity %s for %s resource: %s" % (go_quote(value), go_quote(key), exc))
    return True


def hard_eviction_memory(cfg, topology):
    """The memory the hard memory.available threshold withholds (ParseThresholdConfig + hardEvictionReservation)."""
    reservation = None
    for signal_name, value in sorted(cfg["eviction-hard"].items()):
        if signal_name not in EVICTION_SIGNALS:
            _refuse_run("unsupported eviction signal %s" % signal_name)
        if value.endswith("%"):
            if value in ("0%", "100%"):
                continue
            try:
                percent = float32(float32(float(value[:-1])) / 100)
            except ValueError:
                _refuse_run("strconv.ParseFloat: parsing %s: invalid syntax" % go_quote(value[:-1]))
            if percent < 0:
                _refuse_run("eviction percentage threshold %s must be >= 0%%: %s" % (signal_name, value))
            if percent > 1:
                _refuse_run("eviction percentage threshold %s must be <= 100%%: %s" % (signal_name, value))
            if signal_name == "memory.available":
                reservation = Quantity(int(topology["memory_capacity"] * percent), "BinarySI")
            continue
        try:
            quantity = parse_quantity(value)
        except ValueError as exc:
            _refuse_run(str(exc))
        if quantity.value <= 0:
            _refuse_run("eviction threshold %s must be positive: %s" % (signal_name, quantity))
        if signal_name == "memory.available":
            reservation = quantity
    return reservation


def start_kubelet(cfg, topology, kubelet_dir, options):
    """One start of the kubelet, up to a running container manager.

    Returns a summary of what it runs with; raises KubeletRefusal with the
    kubelet's error otherwise. Writes checkpoints as the kubelet does.
    """
    errors = validate_kubelet_config(cfg)
    if errors:
        err = "failed to validate kubelet configuration, error: " + aggregate(errors)
        raise KubeletRefusal(err, [klog("E", "run.go:72", "command failed", err=err)])

    all_cpus = topology["online"]
    reserved = frozenset()
    if cfg["reserved-cpus"]:
        reserved = parse_cpulist(cfg["reserved-cpus"])
        if not reserved <= all_cpus:
            _refuse_run("reserved-cpus: %s is not a subset of online-cpus: %s" % (cfg["reserved-cpus"], format_cpulist(all_cpus)))
    allocatable = node_allocatable_reservation(cfg, topology, reserved)

    # NewContainerManager: the Topology Manager first.
    policy = cfg["topology-manager-policy"]
    max_nodes = DEFAULT_MAX_NUMA_NODES
    if policy != "none":
        for name, value in sorted(cfg["topology-manager-policy-options"].items()):
            refused = option_refusal(cfg, "Topology", name)
            if refused:
                _refuse_run(refused)
            if name == "max-allowable-numa-nodes":
                if not re.fullmatch(r"[+-]?[0-9]+", value):
                    _refuse_run("bad value for option %s: strconv.Atoi: parsing %s: invalid syntax" % (go_quote(name), go_quote(value)))
                if int(value) < DEFAULT_MAX_NUMA_NODES:
                    _refuse_run("the minimum value of %s should not be less than %d" % (go_quote(name), DEFAULT_MAX_NUMA_NODES))
                max_nodes = int(value)
            elif name == "prefer-closest-numa-nodes":
                if value not in ("1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"):
                    _refuse_run("bad value for option %s: strconv.ParseBool: parsing %s: invalid syntax" % (go_quote(name), go_quote(value)))
            else:
                _refuse_run("unknown Topology Manager Policy option: %s" % go_quote(name))
        if len(topology["nodes"]) > max_nodes:
            _refuse_run("unsupported on machines with more than %d NUMA Nodes" % max_nodes)

    # The CPU Manager.
    cpu_policy = cfg["cpu-manager-policy"]
    cpu_options = {}
    warnings = []
    strict = False

    def cpu_manager_failed(err):
        _refuse_run(err, [klog("E", "container_manager_linux.go:332", "Failed to initialize cpu manager", err=err)])

    if cpu_policy == "none":
        if cfg["cpu-manager-policy-options"]:
            cpu_manager_failed("new none policy error: None policy: cannot accept options")
    elif cpu_policy == "static":
        for name, value in sorted(cfg["cpu-manager-policy-options"].items()):
            refused = option_refusal(cfg, "CPU", name)
            if refused:
                cpu_manager_failed("new static policy error: " + refused)
            if value not in ("1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"):
                cpu_manager_failed("new static policy error: bad value for option %s: strconv.ParseBool: parsing %s: invalid syntax"
                                   % (go_quote(name), go_quote(value)))
            cpu_options[name] = value.lower() in ("1", "t", "true")
        strict = cpu_options.get("strict-cpu-reservation", False)
        if "cpu" not in allocatable:
            # GetNodeAllocatableReservation leaves zero values out, so a zero reservation ends here too.
            cpu_manager_failed("[cpumanager] unable to determine reserved CPU resources for static policy")
        count = math.ceil(allocatable["cpu"].value)
        if count <= 0:
            cpu_manager_failed("[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero")
        if not reserved:
            reserved = take_by_topology(topology, count)
        if len(reserved) != count:
            cpu_manager_failed("new static policy error: [cpumanager] unable to reserve the required amount of CPUs (size of %s did not equal %d)"
                               % (format_cpulist(reserved), count))
        if cpu_options.get("full-pcpus-only"):
            split = sorted({cpu for r in reserved for cpu in topology["siblings"][r]} - reserved)
            if split:
                message = ("reserved cpus %s split physical cores: their siblings %s cannot be allocated exclusively (full-pcpus-only)"
                           % (format_cpulist(reserved), format_cpulist(split)))
                if options.get("strict_smt"):
                    cpu_manager_failed("new static policy error: SMT Alignment Error: " + message)
                warnings.append(message)
    else:
        cpu_manager_failed("unknown policy: \"%s\"" % cpu_policy)

    # The Memory Manager.
    memory_policy = cfg["memory-manager-policy"]
    system_reserved = {}
    if memory_policy == "Static":
        system_reserved = _static_memory_reservation(cfg, topology, allocatable)
    elif memory_policy != "None":
        err = "unknown policy: \"%s\"" % memory_policy
        _refuse_run(err, [klog("E", "container_manager_linux.go:345", "Failed to initialize memory manager", err=err)])

    # ContainerManager.Start: the CPU Manager's checkpoint, then the Memory Manager's.
    verify = options.get("verify_checksum", True)
    cpu_file = os.path.join(kubelet_dir, CPU_STATE)
    memory_file = os.path.join(kubelet_dir, MEMORY_STATE)
    start_cpus = all_cpus - reserved if strict else all_cpus
    cpu_format = cpu_checkpoint_format(cfg)
    cpu_state = _start_cpu_manager(cpu_file, cpu_policy, reserved, start_cpus, strict, verify, cpu_format)
    memory_state = _start_memory_manager(memory_file, memory_policy, topology, system_reserved, verify)

    capacity = {"cpu": Quantity(len(all_cpus)), "memory": Quantity(topology["memory_capacity"], "BinarySI")}
    problems = ["Resource %s has a reservation of %s but capacity of %s. Expected capacity >= reservation." % (go_quote(k), v, capacity[k])
                for k, v in sorted(allocatable.items()) if v.value > capacity[k].value]
    if problems:
        _refuse_start("invalid Node Allocatable configuration. " + " ".join(problems))
    return {
        "cpu_manager_policy": cpu_policy, "cpu_manager_policy_options": cpu_options, "reserved_cpus": format_cpulist(reserved),
        "topology_manager_policy": policy, "topology_manager_scope": cfg["topology-manager-scope"], "max_allowable_numa_nodes": max_nodes,
        "memory_manager_policy": memory_policy, "node_allocatable_reservation": {k: str(v) for k, v in allocatable.items()},
        "numa_nodes": len(topology["nodes"]), "online_cpus": format_cpulist(all_cpus), "cpu_manager_state": cpu_state,
        "memory_manager_state": memory_state, "warnings": warnings, "cpu_checkpoint_format": cpu_format,
    }


def _static_memory_reservation(cfg, topology, allocatable):
    """NewManager(Static): validateReservedMemory, then the per-node reservation; must not be 0 in total."""
    def fail(err):
        _refuse_run(err, [klog("E", "container_manager_linux.go:345", "Failed to initialize memory manager", err=err)])

    totals = {}
    for reservation in cfg["reserved-memory"]:
        if reservation["numaNode"] not in topology["nodes"]:
            fail("the reserved memory configuration references a NUMA node %d that does not exist on this machine" % reservation["numaNode"])
        for name, quantity in reservation["limits"].items():
            totals[name] = quantity.add(totals[name]) if name in totals else quantity
    types = set(totals) | {k for k in allocatable if k == "memory" or k.startswith("hugepages-")}
    for name in sorted(types, key=lambda n: (n != "memory", n)):
        wanted = Quantity(0).add(allocatable[name]) if name in allocatable else Quantity(0)
        have = Quantity(0).add(totals[name]) if name in totals else Quantity(0)
        if wanted != have:
            fail("the total amount %s of type %s is not equal to the value %s determined by Node Allocatable feature"
                 % (go_quote(have), go_quote(name), go_quote(wanted)))
    per_node = {nid: {} for nid in topology["nodes"]}
    for reservation in cfg["reserved-memory"]:
        for name, quantity in reservation["limits"].items():
            per_node[reservation["numaNode"]][name] = quantity.bytes()
    if sum(node.get("memory", 0) for node in per_node.values()) <= 0:
        fail("[memorymanager] you should specify the system reserved memory")
    return per_node


def _start_cpu_manager(path, policy, reserved, all_cpus, strict, verify, fmt="v2"):
    def restore_failed(err):
        full = ("start cpu manager error: could not restore state from checkpoint: %s, please drain this node and delete "
                "the CPU manager checkpoint file %s before restarting Kubelet" % (err, go_quote(path)))
        _refuse_start(full, [klog("E", "cpu_manager.go:223", "Could not initialize checkpoint manager, please drain node and remove policy state file",
                                  err=full[len("start cpu manager error: "):])])

    def invalid(err):
        _refuse_start("start cpu manager error: " + err, [
            klog("E", "policy_static.go:223", "Static policy invalid state, please drain node and remove policy state file", err=err),
            klog("E", "cpu_manager.go:232", "Policy start error", err=err)])

    try:
        data = read_cpu_checkpoint(path, verify, fmt)
    except CheckpointError as exc:
        restore_failed(str(exc))
    if data is None:
        return write_cpu_checkpoint(path, cpu_checkpoint(policy, all_cpus if policy == "static" else ""), fmt)
    if data.get("policyName") != policy:
        restore_failed("configured policy %s differs from state checkpoint policy %s" % (go_quote(policy), go_quote(data.get("policyName", ""))))
    default_text = data.get("defaultCpuSet", "")
    try:
        default = parse_cpulist(default_text)
    except ValueError as exc:
        restore_failed("could not parse default cpu set %s: %s" % (go_quote(default_text), exc))
    assigned = []
    for pod, containers in sorted((data.get("entries") or {}).items()):
        for container, text in sorted(containers.items()):
            try:
                assigned.append((pod, container, parse_cpulist(text)))
            except ValueError as exc:
                restore_failed("could not parse cpuset %s for container %s in pod %s: %s" % (go_quote(text), go_quote(container), go_quote(pod), exc))
    if policy != "static":
        return data
    if not default:
        if assigned:
            invalid("default cpuset cannot be empty")
        return write_cpu_checkpoint(path, cpu_checkpoint(policy, all_cpus), fmt)
    if strict:
        if reserved & default:
            invalid("some of strictly reserved cpus: %s are present in defaultCpuSet: %s"
                    % (go_quote(format_cpulist(reserved & default)), go_quote(format_cpulist(default))))
    elif not reserved <= default:
        invalid("not all reserved cpus: %s are present in defaultCpuSet: %s" % (go_quote(format_cpulist(reserved)), go_quote(format_cpulist(default))))
    for pod, container, cpus in assigned:
        if cpus & default:
            invalid("pod: %s, container: %s cpuset: %s overlaps with default cpuset %s"
                    % (pod, container, go_quote(format_cpulist(cpus)), go_quote(format_cpulist(default))))
    known = set(default)
    for dummy, dummy2, cpus in assigned:
        known |= cpus
    for entry in (data.get("podEntries") or {}).values():   # the pods' own sets (a kubelet with the V3 type reads them)
        with contextlib.suppress(ValueError, AttributeError):
            known |= parse_cpulist((entry or {}).get("cpuSet") or "")
    if known != set(all_cpus):
        invalid("current set of available CPUs %s doesn't match with CPUs in state %s" % (go_quote(format_cpulist(all_cpus)), go_quote(format_cpulist(known))))
    return data


def _start_memory_manager(path, policy, topology, system_reserved, verify):
    def restore_failed(err):
        full = ("start memory manager error: could not restore state from checkpoint: %s, please drain this node and delete "
                "the memory manager checkpoint file %s before restarting Kubelet" % (err, go_quote(path)))
        _refuse_start(full, [klog("E", "memory_manager.go:186", "Could not initialize checkpoint manager, please drain node and remove policy state file",
                                  err=full[len("start memory manager error: "):])])

    def invalid(err):
        _refuse_start("start memory manager error: " + err, [klog("E", "memory_manager.go:193", "Policy start error", err=err)])

    try:
        data = read_checkpoint(path, verify)
    except CheckpointError as exc:
        restore_failed(str(exc))
    if data is None:
        state = default_machine_state(topology, system_reserved) if policy == "Static" else {}
        return write_checkpoint(path, memory_checkpoint(policy, state))
    if data.get("policyName") != policy:
        restore_failed("[memorymanager] configured policy %s differs from state checkpoint policy %s"
                       % (go_quote(policy), go_quote(data.get("policyName", ""))))
    if policy != "Static":
        return data
    machine_state = data.get("machineState") or {}
    entries = data.get("entries") or {}
    if not machine_state:
        if entries:
            invalid("[memorymanager] machine state can not be empty when it has memory assignments")
        return write_checkpoint(path, memory_checkpoint(policy, default_machine_state(topology, system_reserved)))
    try:
        expected = expected_machine_state(topology, system_reserved, entries)
    except ValueError as exc:
        invalid(str(exc))
    if not machine_states_equal(machine_state, expected):
        invalid("[memorymanager] the expected machine state is different from the real one")
    return data


# ---------------------------------------------------------------- the Node object (served by the API stand-in)

@contextlib.contextmanager
def locked_node(state_dir, name):
    """Read-modify-write nodes/<name>.json under an exclusive lock; box["node"] is None when absent."""
    directory = os.path.join(state_dir, "nodes")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name + ".json")
    with open(os.path.join(directory, "." + name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            try:
                with open(path) as handle:
                    node = json.load(handle)
            except (OSError, ValueError):
                node = None
            box = {"node": node}
            before = json.dumps(node, sort_keys=True)
            yield box
            if box["node"] is not None and json.dumps(box["node"], sort_keys=True) != before:
                tmp = "%s.tmp.%d" % (path, os.getpid())
                with open(tmp, "w") as handle:
                    json.dump(box["node"], handle, indent=2, sort_keys=True)
                    handle.write("\n")
                os.replace(tmp, path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_node(name, seed_pods=True):
    """The Node as it is after registration; the pods every RKE2 node runs, and one workload."""
    pods = []
    if seed_pods:
        pods = [
            {"namespace": "kube-system", "name": "rke2-canal-" + name, "owner": "DaemonSet"},
            {"namespace": "kube-system", "name": "kube-proxy-" + name, "owner": "Node", "mirror": True},
            {"namespace": "default", "name": "sample-workload-" + name, "owner": "ReplicaSet", "emptyDir": True},
        ]
    return {"name": name, "created": _now(), "ready": False, "unschedulable": False, "labels": {}, "taints": [],
            "pods": pods, "evictions": [], "kubeletVersion": KUBELET_VERSION}


# ---------------------------------------------------------------- Node Feature Discovery (its local source and master)

NFD_FEATURE_LABELS = "nfd.node.kubernetes.io/feature-labels"
NFD_DEFAULT_NS = "feature.node.kubernetes.io"
NFD_FILE_LIMIT = 64 * 1024


def nfd_local_features(features_dir):
    """nfd-worker's local source: each file of the folder (not hidden, at most 64 KiB), a feature a line,
    ``name=value`` or ``name`` (value "true"), ``#`` comments and ``# +`` directives skipped; a name without a
    prefix goes under feature.node.kubernetes.io. {label: value}; {} when the folder is missing."""
    labels = {}
    try:
        names = sorted(os.listdir(features_dir))
    except OSError:
        return labels
    for fname in names:
        path = os.path.join(features_dir, fname)
        if fname.startswith(".") or not os.path.isfile(path) or os.path.getsize(path) > NFD_FILE_LIMIT:
            continue
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError):
            continue
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#") or line.startswith("-"):
                continue
            name, sep, value = line.partition("=")
            labels[name if "/" in name else "%s/%s" % (NFD_DEFAULT_NS, name)] = value if sep else "true"
    return labels


def nfd_master_update(node, labels):
    """nfd-master's updateNodeObject on a Node record (node-feature-discovery pkg/nfd-master/nfd-master.go):
    the keys it tracked (annotation nfd.node.kubernetes.io/feature-labels) that its feature set no longer has are
    removed from the Node, the features' labels are added or replaced (AllowOverwrite, the default), and the
    annotation lists the keys it now owns (without the default namespace), or goes when there are none."""
    annotations = node.get("annotations") or {}
    tracked = [k.strip() for k in str(annotations.get(NFD_FEATURE_LABELS) or "").split(",") if k.strip()]
    tracked = [k if "/" in k else "%s/%s" % (NFD_DEFAULT_NS, k) for k in tracked]
    node_labels_now = dict(node.get("labels") or {})
    for key in tracked:
        if key in node_labels_now and key not in labels:
            del node_labels_now[key]
    node_labels_now.update(labels)
    if labels:
        prefix = NFD_DEFAULT_NS + "/"
        annotations[NFD_FEATURE_LABELS] = ",".join(sorted(k[len(prefix):] if k.startswith(prefix) else k for k in labels))
    else:
        annotations.pop(NFD_FEATURE_LABELS, None)
    node["labels"] = node_labels_now
    node["annotations"] = annotations


def nfd_pass(cluster_dir, node_name, features_dir):
    """One pass of NFD for a node: nfd-worker reads the features, nfd-master updates the Node."""
    labels = nfd_local_features(features_dir)
    with locked_node(cluster_dir, node_name) as box:
        if box["node"] is not None:
            nfd_master_update(box["node"], labels)


def node_labels(config):
    labels = {"kubernetes.io/hostname": None, "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "rke2"}
    for item in _as_list(config.get("node-label") or []):
        key, dummy, value = str(item).partition("=")
        labels[key] = value
    return labels


def node_taints(config):
    taints = []
    for item in _as_list(config.get("node-taint") or []):
        key_value, dummy, effect = str(item).partition(":")
        key, dummy, value = key_value.partition("=")
        taints.append({"key": key, "value": value, "effect": effect} if value else {"key": key, "effect": effect})
    return taints


# ---------------------------------------------------------------- pods: the kubelet's admission and a small runtime

GPU_VENDOR = "0x10de"
FINISHED = ("Succeeded", "Failed")
LOG_CAP = 1024 * 1024
CONTAINER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
STANDIN_STOPPED = "the rke2 stand-in stopped; its containers stop with it"


class AdmissionError(Exception):
    """A pod the kubelet rejects: ``reason`` (the status reason) and ``message`` (the event; the status adds "Pod was rejected: ")."""

    def __init__(self, reason, message):
        Exception.__init__(self, message)
        self.reason, self.message = reason, message


def unexpected(err):
    """admission.GetPodAdmitResult for an error without a type of its own."""
    return AdmissionError("UnexpectedAdmissionError", "Allocate failed due to %s, which is unexpected" % err)


def read_gpus(root, node_name):
    """The NVIDIA GPUs of the machine, as the NVIDIA device plugin lists them: id (the driver's GPU UUID, else a
    stable made-up one), PCI address, NUMA node (None when sysfs says -1 or nothing), NVML index (the
    position in PCI bus order: what the plugin's ``index`` id strategy hands out), device minor (the driver's
    ``Device Minor``, else the index: the N of /dev/nvidiaN) and the driver's information text; sorted by address."""
    bus = os.path.join(root, "sys", "bus", "pci", "devices")
    try:
        names = sorted(os.listdir(bus))
    except OSError:
        return []
    gpus = []
    for address in names:
        path = os.path.join(bus, address)
        if (_read(os.path.join(path, "vendor"), "") or "").lower() != GPU_VENDOR:
            continue
        if not (_read(os.path.join(path, "class"), "") or "").lower().startswith("0x03"):
            continue
        info = _read(os.path.join(root, "proc", "driver", "nvidia", "gpus", address, "information"), "") or ""
        match = re.search(r"(?m)^GPU UUID:\s*(\S+)", info)
        if match:
            ident = match.group(1)
        else:
            digest = zlib.crc32(("%s/%s" % (node_name, address)).encode()) & 0xFFFFFFFF
            ident = "GPU-%08x-0000-4000-8000-%012x" % (digest, int(re.sub(r"[^0-9a-f]", "", address.lower()) or "0", 16) & 0xFFFFFFFFFFFF)
        numa = _read(os.path.join(path, "numa_node"))
        numa = int(numa) if numa is not None and re.fullmatch(r"-?[0-9]+", numa) and int(numa) >= 0 else None
        minor = re.search(r"(?m)^Device Minor:\s*([0-9]+)", info)
        gpus.append({"id": ident, "address": address, "numa": numa, "index": len(gpus),
                     "minor": int(minor.group(1)) if minor else len(gpus), "information": info})
    return gpus


def dra_gpu_addresses(value, gpus):
    """RKE2_STANDIN_DRA_GPUS: the GPUs the DRA driver serves - "all", or a comma list of PCI addresses."""
    value = (value or "").strip().lower()
    if value == "all":
        return frozenset(g["address"] for g in gpus)
    return frozenset(a.strip() for a in value.split(",") if a.strip())


class PrepareError(Exception):
    """The DRA manager cannot prepare a pod's claims (yet): the pod waits in ContainerCreating."""


def allocation_node(allocation):
    """The node an AllocationResult's nodeSelector names (matchFields metadata.name In [node]), else None."""
    for term in ((allocation or {}).get("nodeSelector") or {}).get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and field.get("values"):
                return field["values"][0]
    return None


def slice_device_attributes(slices, result):
    """{qualified name: value} of the device a result names, from the newest ResourceSlice of its driver and pool
    (a bare attribute name is in the driver's domain)."""
    best, generation = {}, -1
    for item in slices:
        spec = item.get("spec") or {}
        pool = spec.get("pool") or {}
        if spec.get("driver") != result.get("driver") or pool.get("name") != result.get("pool"):
            continue
        for device in spec.get("devices") or []:
            if device.get("name") == result.get("device") and int(pool.get("generation") or 0) > generation:
                generation = int(pool.get("generation") or 0)
                best = {}
                for name, value in (device.get("attributes") or {}).items():
                    key = name if "/" in name else "%s/%s" % (spec.get("driver"), name)
                    best[key] = next((value[k] for k in ("int", "string", "bool", "version") if isinstance(value, dict) and k in value), None)
                    if "/" not in name:
                        best[name] = best[key]
    return best


def _quantity(value):
    try:
        return parse_quantity(str(value)).value
    except ValueError:
        return Fraction(0)


def container_resources(container):
    """requests and limits as exact numbers; requests default to limits (the API server's defaulting)."""
    resources = container.get("resources") or {}
    limits = {str(k): _quantity(v) for k, v in (resources.get("limits") or {}).items()}
    requests = dict(limits)
    requests.update({str(k): _quantity(v) for k, v in (resources.get("requests") or {}).items()})
    return requests, limits


def pod_resources(spec):
    """A pod's own budget (``spec.resources``, KEP-2837 PodLevelResources: beta and on by default from 1.34) as exact
    (requests, limits) of cpu and memory - the only resources it may name -, requests defaulting to limits (the API
    server's defaulting); None when the pod has none or this kubelet's minor does not read it."""
    pod_level = spec.get("resources") if isinstance(spec.get("resources"), dict) else None
    if MINOR < 34 or not pod_level or not (pod_level.get("requests") or pod_level.get("limits")):
        return None
    limits = {str(k): _quantity(v) for k, v in (pod_level.get("limits") or {}).items() if str(k) in ("cpu", "memory")}
    requests = dict(limits)
    requests.update({str(k): _quantity(v) for k, v in (pod_level.get("requests") or {}).items() if str(k) in ("cpu", "memory")})
    return dict((k, v) for k, v in requests.items() if v > 0), dict((k, v) for k, v in limits.items() if v > 0)


def pod_qos(spec):
    """GetPodQOS (pkg/apis/core/v1/helper/qos ComputePodQOS): only cpu and memory count; Guaranteed when every container
    limits both and requests equal limits - or, for a pod with its own budget, when that budget does (it alone decides)."""
    own = pod_resources(spec)
    if own is not None:
        requests, limits = own
        if not requests and not limits:
            return "BestEffort"
        guaranteed = set(limits) >= {"cpu", "memory"} and all(limits.get(k) == v for k, v in requests.items())
        return "Guaranteed" if guaranteed and len(requests) == len(limits) else "Burstable"
    requests, limits, guaranteed = {}, {}, True
    for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        creq, clim = container_resources(container)
        for name in ("cpu", "memory"):
            if creq.get(name):
                requests[name] = requests.get(name, 0) + creq[name]
            if clim.get(name):
                limits[name] = limits.get(name, 0) + clim[name]
        if not (clim.get("cpu") and clim.get("memory")):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(limits.get(k) == v for k, v in requests.items()) and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"


def pod_requests(spec):
    """What the scheduler's Fits counts: max(sum of the app containers, any init container), per resource; a pod's own
    budget replaces them for cpu and memory (component-helpers resource.PodRequests)."""
    total = {}
    for container in spec.get("containers") or []:
        for name, value in container_resources(container)[0].items():
            total[name] = total.get(name, 0) + value
    for container in spec.get("initContainers") or []:
        for name, value in container_resources(container)[0].items():
            total[name] = max(total.get(name, 0), value)
    own = pod_resources(spec)
    if own is not None:
        total.update(own[0])
    return total


def _is_extended(name):
    """IsExtendedResourceName: a domain other than kubernetes.io, not requests.*."""
    return "/" in name and not name.split("/", 1)[0].endswith("kubernetes.io") and not name.startswith("requests.")


def _iso(epoch=None):
    return datetime.datetime.fromtimestamp(time.time() if epoch is None else epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class PodRuntime:
    """The kubelet's pod side while it runs healthy: admission (resource fit, Topology/CPU/Memory/Device Managers),
    assignments in the checkpoints, and each container's command run as a child process."""

    def __init__(self, agent, cfg, topology, result, kubelet_dir):
        self.agent = agent
        self.node_name = agent.node_name
        self.cfg, self.topology, self.kubelet_dir = cfg, topology, kubelet_dir
        self.cpu_file = os.path.join(kubelet_dir, CPU_STATE)
        self.memory_file = os.path.join(kubelet_dir, MEMORY_STATE)
        self.pods_dir = os.path.join(agent.state_dir, "pods")
        self.static_cpu = result["cpu_manager_policy"] == "static"
        self.cpu_format = result.get("cpu_checkpoint_format", "v2")
        self.full_pcpus = bool(result["cpu_manager_policy_options"].get("full-pcpus-only"))
        self.strict = bool(result["cpu_manager_policy_options"].get("strict-cpu-reservation"))
        self.reserved = parse_cpulist(result["reserved_cpus"])
        self.static_memory = result["memory_manager_policy"] == "Static"
        self.policy, self.scope = result["topology_manager_policy"], result["topology_manager_scope"]
        self.threads = max(len(s) for s in topology["siblings"].values()) if topology["siblings"] else 1
        explicit = parse_cpulist(cfg["reserved-cpus"]) if cfg["reserved-cpus"] else frozenset()
        reservation = node_allocatable_reservation(cfg, topology, explicit)
        self.system_reserved = _static_memory_reservation(cfg, topology, reservation) if self.static_memory else {}
        self.gpu_resource = env("RKE2_STANDIN_GPU_RESOURCE", "nvidia.com/gpu")
        self.gpu_topology = env("RKE2_STANDIN_GPU_TOPOLOGY", "true").lower() not in ("0", "false", "no")
        # The machine's GPUs; those RKE2_STANDIN_DRA_GPUS names (PCI addresses, or "all") the NVIDIA DRA driver
        # (gpu.nvidia.com) serves, so the device plugin neither advertises nor allocates them.
        self.all_gpus = read_gpus(agent.sysfs_root, self.node_name)
        self.dra_gpus = dra_gpu_addresses(env("RKE2_STANDIN_DRA_GPUS", ""), self.all_gpus)
        self.gpus = [g for g in self.all_gpus if g["address"] not in self.dra_gpus]
        # The NVIDIA device plugin's --device-list-strategy and --device-id-strategy (k8s-device-plugin
        # internal/plugin/server.go getAllocateResponse), and whether the runtime delegates the cpuset controller.
        self.device_list_strategy = env("RKE2_STANDIN_DEVICE_LIST_STRATEGY", "envvar")
        self.device_id_strategy = env("RKE2_STANDIN_DEVICE_ID_STRATEGY", "uuid")
        self.cpuset_delegated = env("RKE2_STANDIN_CPUSET_DELEGATED", "true").lower() not in ("0", "false", "no")
        self.procs = {}
        self.capacity, self.allocatable = self._node_resources(reservation)
        # KEP-5526: the CPU, Memory and Topology Managers serve a pod's own budget (alpha 1.36, on from 1.37)
        self.pod_level_managers = feature_gate(cfg, "PodLevelResourceManagers")

    # -- the Node's capacity and allocatable (the kubelet's node status)
    def _node_resources(self, reservation):
        hugepages = {}
        for node in self.topology["nodes"].values():
            for size_kb, count in node["hugepages"].items():
                name = hugepage_resource(size_kb)
                hugepages[name] = hugepages.get(name, 0) + count * size_kb * 1024
        capacity = {"cpu": Fraction(len(self.topology["online"])), "memory": Fraction(self.topology["memory_capacity"]),
                    "pods": Fraction(int(self.cfg.get("max-pods") or 110)), "ephemeral-storage": Fraction(100 * 1024 ** 3)}
        capacity.update({k: Fraction(v) for k, v in hugepages.items()})
        if self.gpus:
            capacity[self.gpu_resource] = Fraction(len(self.gpus))
        allocatable = dict(capacity)
        for name in ("cpu", "memory"):
            if name in reservation:
                allocatable[name] = max(Fraction(0), allocatable[name] - reservation[name].value)
        allocatable["memory"] = max(Fraction(0), allocatable["memory"] - sum(hugepages.values()))
        return capacity, allocatable

    def node_status(self):
        def show(name, value):
            if name == "cpu" and value.denominator != 1:
                return "%dm" % int(value * 1000)
            return str(Quantity(value, "BinarySI" if name == "memory" or name.startswith("hugepages-") else "DecimalSI"))
        return ({k: show(k, v) for k, v in sorted(self.capacity.items())}, {k: show(k, v) for k, v in sorted(self.allocatable.items())})

    # -- checkpoints: the CPU and Memory Managers' state
    def _cpu_state(self):
        try:
            data = read_cpu_checkpoint(self.cpu_file, False, self.cpu_format)
        except CheckpointError:
            data = None
        base = self.topology["online"] - self.reserved if self.strict else self.topology["online"]
        if not data or not self.static_cpu:
            return {"policyName": "static" if self.static_cpu else "none", "defaultCpuSet": format_cpulist(base) if self.static_cpu else "",
                    "entries": {}}
        data.setdefault("entries", {})
        return data

    def _write_cpu_state(self, data):
        if self.static_cpu:
            body = cpu_checkpoint("static", data["defaultCpuSet"], data.get("entries"))
            if data.get("podEntries"):
                body["podEntries"] = data["podEntries"]
            write_cpu_checkpoint(self.cpu_file, body, self.cpu_format)

    def _memory_entries(self):
        try:
            data = read_checkpoint(self.memory_file, False)
        except CheckpointError:
            data = None
        return dict((data or {}).get("entries") or {})

    def _write_memory_entries(self, entries):
        if self.static_memory:
            state = expected_machine_state(self.topology, self.system_reserved, entries)
            write_checkpoint(self.memory_file, memory_checkpoint("Static", state, entries))

    def release(self, uids):
        """removeStaleState: the pods' exclusive CPUs and memory go back; their checkpoint entries go."""
        uids = set(uids)
        cpu = self._cpu_state()
        pods = cpu.get("podEntries") or {}
        held = [parse_cpulist(text) for uid in uids for text in (cpu["entries"].get(uid) or {}).values()]
        held += [parse_cpulist((pods.get(uid) or {}).get("cpuSet") or "") for uid in uids]
        if any(uid in cpu["entries"] or uid in pods for uid in uids):
            default = parse_cpulist(cpu["defaultCpuSet"])
            for cpus in held:
                default |= cpus
            cpu["defaultCpuSet"] = format_cpulist(default)
            cpu["entries"] = {k: v for k, v in cpu["entries"].items() if k not in uids}
            if pods:
                cpu["podEntries"] = {k: v for k, v in pods.items() if k not in uids}
            self._write_cpu_state(cpu)
        entries = self._memory_entries()
        if any(uid in entries for uid in uids):
            self._write_memory_entries({k: v for k, v in entries.items() if k not in uids})

    # -- the sync loop (every ~0.5 s while healthy)
    def sync(self, stopping=False):
        with locked_node(self.agent.cluster_dir, self.node_name) as box:
            node = box["node"]
            if node is None:
                return
            pods = [p for p in node.get("pods") or [] if isinstance(p, dict) and isinstance(p.get("spec"), dict) and p.get("uid")]
            present = {str(p["uid"]) for p in pods}
            gone = (set(self.procs) | set(self._pod_dirs())) - present
            for uid in sorted(gone):
                self._kill(uid)
            if gone:
                self.release(gone)
                for uid in gone:
                    shutil.rmtree(os.path.join(self.pods_dir, uid), ignore_errors=True)
            for pod in pods:
                uid = str(pod["uid"])
                if pod.get("phase") == "Running" and pod.get("started") and "exitCode" not in pod and uid not in self.procs:
                    self._finish(pod, 137, STANDIN_STOPPED)  # started by an earlier run of the stand-in
                elif uid in self.procs:
                    self._poll(pod, stopping)
            if stopping:
                return
            for pod in pods:   # admitted, their claims not prepared yet: the kubelet's next syncPod tries again
                if pod.get("phase", "Pending") == "Pending" and pod.get("admitted") and pod.get("draWaiting") and not pod.get("started"):
                    self._prepare_and_start(node, pod)
            pending = [p for p in pods if p.get("phase", "Pending") == "Pending" and not p.get("admitted")]
            pending.sort(key=lambda p: (str(p.get("created") or ""), int(p.get("seq") or 0)))
            for pod in pending:
                self._admit_and_start(node, pod)

    def stop(self):
        """Agent stop: the containers stop too (their pods fail); checkpoints keep their entries until the next allocation."""
        for proc in self.procs.values():
            with contextlib.suppress(OSError):
                os.killpg(proc["proc"].pid, signal.SIGKILL)
        self.sync(stopping=True)

    def _pod_dirs(self):
        try:
            return [n for n in os.listdir(self.pods_dir) if os.path.isdir(os.path.join(self.pods_dir, n))]
        except OSError:
            return []

    def _kill(self, uid):
        proc = self.procs.pop(uid, None)
        if proc is not None:
            with contextlib.suppress(OSError):
                os.killpg(proc["proc"].pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                proc["proc"].wait(5)

    # -- containers
    def _read_log(self, path):
        try:
            with open(path, "rb") as handle:
                handle.seek(0, os.SEEK_END)
                size = handle.tell()
                handle.seek(max(0, size - LOG_CAP))
                return handle.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def _poll(self, pod, stopping):
        proc = self.procs[str(pod["uid"])]
        code = proc["proc"].poll()
        pod["log"] = self._read_log(proc["log"])
        if code is None and not stopping:
            return
        if code is None:
            with contextlib.suppress(Exception):
                proc["proc"].wait(5)
            code = proc["proc"].returncode
        del self.procs[str(pod["uid"])]
        pod["log"] = self._read_log(proc["log"])
        self._finish(pod, 137 if stopping else (128 - code if code < 0 else code), STANDIN_STOPPED if stopping else None)

    def _finish(self, pod, code, message=None):
        """The container exited: the phase as getPhase derives it (the stand-in never restarts a container)."""
        policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
        pod["exitCode"] = code
        pod["finished"] = _iso()
        pod["containerReason"] = "Completed" if code == 0 else "Error"
        if message:
            pod["containerMessage"] = message
        if policy == "Always" or (policy == "OnFailure" and code != 0):
            pod["phase"] = "Running"
            pod["restartSuppressed"] = True
        else:
            pod["phase"] = "Succeeded" if code == 0 else "Failed"

    def _admit_and_start(self, node, pod):
        pod["admitted"] = _iso()
        pod["qosClass"] = pod_qos(pod["spec"])
        try:
            assignment = self.admit(node, pod)
        except AdmissionError as exc:
            pod.update(phase="Failed", reason=exc.reason, message="Pod was rejected: " + exc.message, event=exc.message)
            pod.setdefault("startTime", pod["admitted"])
            self.agent.kubelet_lines([klog("W", "kubelet.go:2418", "Pod admission denied", pod="%s/%s" % (pod["namespace"], pod["name"]),
                                           reason=exc.reason, message=exc.message)])
            return
        pod["assignment"] = assignment
        pod["startTime"] = pod["admitted"]
        if pod["spec"].get("resourceClaims"):
            self._prepare_and_start(node, pod)
            return
        self._start(pod)

    def _prepare_and_start(self, node, pod):
        """syncPod's PrepareDynamicResources before the sandbox (pkg/kubelet/kuberuntime/kuberuntime_manager.go
        SyncPod): when it fails the pod keeps waiting in ContainerCreating with a FailedPrepareDynamicResources event
        ("Failed to prepare dynamic resources: ..."), and the next sync tries again."""
        try:
            pod["dra"] = self.prepare_claims(node, pod)
        except PrepareError as exc:
            text = "Failed to prepare dynamic resources: prepare dynamic resources: %s" % exc
            if pod.get("event") != text:
                self.agent.kubelet_lines([klog("E", "pod_workers.go:1301", "Error syncing pod, skipping", err=text,
                                               pod="%s/%s" % (pod["namespace"], pod["name"]), podUID=pod["uid"])])
            pod["event"] = text
            pod["draWaiting"] = True
            return
        pod.pop("draWaiting", None)
        pod.pop("event", None)
        self._start(pod)

    # -- Dynamic Resource Allocation: the DRA manager and the kubelet plugins of gpu.nvidia.com and dra.cpu
    def _claims_file(self, plural):
        """The API stand-in's stored objects (<cluster dir>/objects/<plural>.json), read under their lock."""
        folder = os.path.join(self.agent.cluster_dir, "objects")
        if not os.path.exists(os.path.join(folder, plural + ".json")):
            return []
        with open(os.path.join(folder, "." + plural + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_SH)
            try:
                with open(os.path.join(folder, plural + ".json")) as handle:
                    records = json.load(handle)
            except (OSError, ValueError):
                records = []
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
        return [r for r in records if isinstance(r, dict) and isinstance(r.get("metadata"), dict)] if isinstance(records, list) else []

    def prepare_claims(self, node, pod):
        """The DRA manager's PrepareResources (pkg/kubelet/cm/dra/manager.go, v1.34) and the drivers' NodePrepareResources.

        Each spec.resourceClaims entry's claim (its resourceClaimName, or the one status.resourceClaimStatuses names)
        must exist, be allocated for this node and reserved for the pod; else PrepareError, and the pod waits. The DRA
        manager gives the Topology Manager no hints (container_manager_linux.go registers only the device, CPU and
        memory managers as hint providers): what the drivers prepare is independent of the kubelet's placement.

        - gpu.nvidia.com (dra-driver-nvidia-gpu cmd/gpu-kubelet-plugin, cdi.go CreateClaimSpecFile): device gpu-<minor>,
          or the GPU its ResourceSlice's pciBusID names; the claim's CDI spec gives the container /dev/nvidia<minor> and
          the common edits' NVIDIA_VISIBLE_DEVICES=void; procfs is not masked under CDI.
        - dra.cpu (dra-driver-cpu pkg/driver dra_hooks.go prepareGroupedResourceClaim, grouped by NUMA node): the
          result's consumedCapacity dra.cpu/cpu CPUs from its device's NUMA node (dra.cpu/numaNodeID), out of the
          shared CPUs - neither the reserved CPUs nor those another prepared claim holds -, whole cores first
          (TakeByTopologyNUMAPacked); the CDI env DRA_CPUSET_<claim UID>=<cpus>, and the driver's NRI hook sets the
          container's cpuset to them. With the kubelet's cpuManagerPolicy static the CPU Manager owns every CPU the
          driver would hand out: "not enough cpus available to satisfy request" (dra-driver-cpu issue #134).

        Returns {"claims": [{"name", "uid"}], "gpus": [PCI address], "cpus": cpulist ("" without dra.cpu),
        "claimCpus": {claim uid: cpulist}, "env": {...}}."""
        namespace = pod["namespace"]
        statuses = dict((s.get("name"), s.get("resourceClaimName")) for s in pod.get("resourceClaimStatuses") or [] if isinstance(s, dict))
        names = []
        for entry in pod["spec"].get("resourceClaims") or []:
            name = entry.get("resourceClaimName") or statuses.get(entry.get("name"))
            if not name:
                raise PrepareError('pod "%s/%s": ResourceClaim not created yet' % (namespace, pod["name"]))
            names.append(name)
        claims = dict(((c["metadata"].get("namespace"), c["metadata"].get("name")), c) for c in self._claims_file("resourceclaims"))
        slices = self._claims_file("resourceslices")
        active = [p for p in node.get("pods") or [] if p is not pod and isinstance(p.get("dra"), dict) and p.get("phase") not in FINISHED
                  and not p.get("deletionTimestamp")]
        held = frozenset()
        prepared = {}
        for other in active:
            held |= parse_cpulist(other["dra"].get("cpus") or "")
            prepared.update(other["dra"].get("claimCpus") or {})
        out = {"claims": [], "gpus": [], "cpus": "", "claimCpus": {}, "env": {}}
        cpus = frozenset()
        for name in names:
            claim = claims.get((namespace, name))
            if claim is None:
                raise PrepareError('failed to fetch ResourceClaim %s referenced by pod %s: resourceclaims.resource.k8s.io "%s" not found'
                                   % (name, pod["name"], name))
            uid = str(claim["metadata"].get("uid") or "")
            status = claim.get("status") or {}
            if not any(r.get("uid") == pod["uid"] for r in status.get("reservedFor") or []) or not status.get("allocation"):
                raise PrepareError("pod %s(%s) is not allowed to use resource claim %s(%s)" % (pod["name"], pod["uid"], name, uid))
            where = allocation_node(status["allocation"])
            if where not in (None, self.node_name):
                raise PrepareError("NodePrepareResources failed for ResourceClaim %s: the claim is allocated on node %s" % (name, where))
            out["claims"].append({"name": name, "uid": uid})
            mine = frozenset()
            for result in (status["allocation"].get("devices") or {}).get("results") or []:
                attributes = slice_device_attributes(slices, result)
                if result.get("driver") == "gpu.nvidia.com":
                    gpu = self._dra_gpu(result, attributes)
                    if gpu is None:
                        raise PrepareError("NodePrepareResources failed for ResourceClaim %s: error preparing devices for claim %s/%s:%s: "
                                           "requested GPU is not allocatable: %s" % (name, namespace, name, uid, result.get("device")))
                    out["gpus"].append(gpu["address"])
                    out["env"]["NVIDIA_VISIBLE_DEVICES"] = "void"
                elif result.get("driver") == "dra.cpu":
                    if uid in prepared:   # a claim another pod prepared already: its CPUs again
                        mine = parse_cpulist(prepared[uid])
                        continue
                    try:
                        mine |= self._dra_cpus(result, attributes, held | cpus | mine)
                    except PrepareError as exc:
                        raise PrepareError("NodePrepareResources failed for ResourceClaim %s: %s" % (name, exc)) from None
            if mine:
                cpus |= mine
                out["claimCpus"][uid] = format_cpulist(mine)
                out["env"]["DRA_CPUSET_%s" % uid] = format_cpulist(mine)
        out["cpus"] = format_cpulist(cpus) if cpus else ""
        return out

    def _dra_gpu(self, result, attributes):
        address = attributes.get("resource.kubernetes.io/pciBusID") or attributes.get("pciBusID")
        for gpu in self.all_gpus:
            if address and gpu["address"].lower() == str(address).lower():
                return gpu
        match = re.fullmatch(r"gpu-([0-9]+)", str(result.get("device") or ""))
        return next((g for g in self.all_gpus if match and g["minor"] == int(match.group(1))), None)

    def _dra_cpus(self, result, attributes, held):
        amount = (result.get("consumedCapacity") or {}).get("dra.cpu/cpu")
        if amount is None:
            raise PrepareError('CPU capacity "dra.cpu/cpu" for device "%s" is missing' % result.get("device"))
        count = _quantity(amount)
        if count <= 0 or count.denominator != 1:
            raise PrepareError('CPU capacity for device "%s" must be a whole number, got %s' % (result.get("device"), amount))
        numa = attributes.get("dra.cpu/numaNodeID")
        if numa is None:
            match = re.search(r"numa0*([0-9]+)$", str(result.get("device") or ""))
            numa = int(match.group(1)) if match else None
        if numa is None or int(numa) not in self.topology["nodes"]:
            raise PrepareError('no valid NUMA node ID found for device %s' % result.get("device"))
        if self.static_cpu:   # the kubelet's CPU Manager owns the CPUs: the driver's shared pool is empty
            free = frozenset()
        else:
            free = (self.topology["nodes"][int(numa)]["cpus"] & self.topology["online"]) - self.reserved - held
        if len(free) < int(count):
            raise PrepareError("not enough cpus available to satisfy request")
        taken = []
        for core in self._whole_cores(free):
            if len(taken) + len(core) <= int(count):
                taken.extend(sorted(core))
        taken += [c for c in sorted(free) if c not in taken][:int(count) - len(taken)]
        return frozenset(taken)

    def _start(self, pod):
        uid = str(pod["uid"])
        spec = pod["spec"]
        container = (spec.get("containers") or [{}])[0]
        name = str(container.get("name") or "")
        cdir = os.path.join(self.pods_dir, uid, name)
        placed = pod["assignment"]["containers"][name]
        paths, devices_env = self._container_paths(cdir, placed, pod.get("dra"))
        argv = [str(a) for a in (container.get("command") or [])] + [str(a) for a in (container.get("args") or [])]
        if not argv:
            argv = [sys.executable, "-c", "import time\nwhile True:\n    time.sleep(3600)\n"]
        for path, folder in paths:
            argv = [a.replace(path, folder) for a in argv]
        environ = {"PATH": CONTAINER_PATH, "HOSTNAME": str(pod["name"])}
        for item in container.get("env") or []:
            if isinstance(item, dict) and item.get("name"):
                environ[str(item["name"])] = str(item.get("value") or "")
        environ.update(devices_env)
        log = os.path.join(self.pods_dir, uid, name + ".log")
        with open(log, "wb") as out:
            try:
                proc = subprocess.Popen(argv, cwd=cdir, env=environ, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                        start_new_session=True)
            except OSError as exc:
                out.write(("exec: %s\n" % exc).encode())
                proc = None
        pod["started"] = _iso()
        pod["containerID"] = "containerd://" + hashlib.sha256(("%s/%s" % (uid, name)).encode()).hexdigest()
        if proc is None:
            pod["log"] = self._read_log(log)
            self._finish(pod, 128)
            return
        pod["phase"] = "Running"
        pod["pid"] = proc.pid
        self.procs[uid] = {"proc": proc, "log": log}

    def _container_paths(self, cdir, placed, dra=None):
        """What the container sees at the paths a probe reads, each as a folder of the container's own
        (the stand-in's stand-in for a mount namespace), and the device plugin's environment:

        - /sys/fs/cgroup: the container's cgroup, with its cpuset files as the kernel writes them (none
          when the runtime does not delegate the cpuset controller);
        - /proc/self/status: Cpus_allowed_list and Mems_allowed_list, the task's masks, which the kernel
          keeps equal to its cpuset;
        - the GPUs (the allocated device ids in the order allocated): NVIDIA_VISIBLE_DEVICES with UUIDs
          or indices (envvar), or naming /var/run/nvidia-container-devices, whose files are the ids
          (volume-mounts); nothing (cdi-cri: the runtime injects the CDI devices). The runtime creates
          /dev/nvidiaN for each GPU. The NVIDIA container runtime shows only the container's GPUs in
          /proc/driver/nvidia/gpus; under CDI the driver's procfs is not masked: every GPU is listed.
        - ``dra`` (prepare_claims): the claims' GPUs as their CDI specs give them (/dev/nvidiaN, the drivers' env,
          procfs unmasked), and dra.cpu's CPUs as the container's cpuset.
        """
        dra = dra or {}
        if dra.get("cpus"):
            placed = dict(placed, cpus=dra["cpus"])
        root = os.path.join(cdir, "root")
        cgroup = os.path.join(cdir, "cgroup")
        for folder in (cgroup, root):
            os.makedirs(folder, exist_ok=True)
        if self.cpuset_delegated:
            for fname, value in (("cpuset.cpus.effective", placed["cpus"]), ("cpuset.cpus", placed["cpus"]),
                                 ("cpuset.mems.effective", placed["mems"]), ("cpuset.mems", placed["mems"])):
                with open(os.path.join(cgroup, fname), "w") as handle:
                    handle.write(value + "\n")
        status = os.path.join(root, "status")
        with open(status, "w") as handle:
            handle.write("Name:\tsh\nCpus_allowed_list:\t%s\nMems_allowed_list:\t%s\n" % (placed["cpus"], placed["mems"]))
        by_id = dict((g["id"], g) for g in self.gpus)
        allocated = [by_id[d] for d in placed.get("devices") or [] if d in by_id]
        claimed = [g for g in self.all_gpus if g["address"] in (dra.get("gpus") or [])]
        ids = [str(g["index"]) if self.device_id_strategy == "index" else g["id"] for g in allocated]
        devices, mounts, procfs = (os.path.join(root, name) for name in ("dev", "nvidia-container-devices", "gpus"))
        for folder in (devices, mounts, procfs):
            os.makedirs(folder, exist_ok=True)
        environ = {}
        if allocated and self.device_list_strategy == "envvar":
            environ["NVIDIA_VISIBLE_DEVICES"] = ",".join(ids)
        elif allocated and self.device_list_strategy == "volume-mounts":
            environ["NVIDIA_VISIBLE_DEVICES"] = "/var/run/nvidia-container-devices"
            for ident in ids:
                open(os.path.join(mounts, ident), "w").close()
        for gpu in allocated + claimed:
            open(os.path.join(devices, "nvidia%d" % gpu["minor"]), "w").close()
        for key, value in (dra.get("env") or {}).items():
            if key not in environ:
                environ[key] = value
        listed = allocated
        if self.device_list_strategy.startswith("cdi") and allocated:
            listed = self.gpus
        if claimed:
            listed = self.all_gpus
        for gpu in listed:
            os.makedirs(os.path.join(procfs, gpu["address"]), exist_ok=True)
            with open(os.path.join(procfs, gpu["address"], "information"), "w") as handle:
                handle.write(gpu["information"])
        paths = [("/sys/fs/cgroup", cgroup), ("/proc/self/status", status), ("/var/run/nvidia-container-devices", mounts),
                 ("/proc/driver/nvidia/gpus", procfs), ("/dev/nvidia", os.path.join(devices, "nvidia"))]
        return paths, environ

    # -- admission
    def admit(self, node, pod):
        spec = pod["spec"]
        uid = str(pod["uid"])
        active = [p for p in node.get("pods") or [] if p is not pod and p.get("phase", "Running") not in FINISHED
                  and not p.get("deletionTimestamp")]
        self._fit(spec, [p for p in active if isinstance(p.get("spec"), dict) and p.get("admitted")], len(active))
        # removeStaleState at the next allocation: finished pods give back what they held.
        finished = {str(p["uid"]) for p in node.get("pods") or [] if p.get("uid") and p.get("phase") in FINISHED and p.get("assignment")}
        if finished:
            self.release(finished)
            for p in node.get("pods") or []:
                if str(p.get("uid")) in finished:
                    p["assignment"]["released"] = True
        qos = pod_qos(spec)
        used_devices = {d for p in active for c in ((p.get("assignment") or {}).get("containers") or {}).values()
                        for d in c.get("devices") or []}
        state = {"cpu": self._cpu_state(), "memory": self._memory_entries(), "devices": set(used_devices)}
        containers = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
        own = pod_resources(spec)
        if own is not None and self.pod_level_managers and qos == "Guaranteed":
            placed, numa = self._allocate_pod(uid, containers, own[0], state)
            numa_used = [numa]
        else:
            # without the pod-level managers a pod with its own budget gets nothing exclusive (policy_static.go:
            # "CPU Manager allocation skipped, pod is using pod-level resources which are not supported")
            units = [containers] if self.scope == "pod" else [[c] for c in containers]
            placed, numa_used = {}, []
            for unit in units:
                needs = [self._needs(c, "Burstable" if own is not None else qos) for c in unit]
                numa = self._hint(needs, state)
                numa_used.append(numa)
                for container, need in zip(unit, needs):
                    placed[str(container.get("name") or "")] = self._allocate(uid, container, need, numa, state)
        if any(c.get("exclusive") for c in placed.values()):
            self._write_cpu_state(state["cpu"])
        if any(c.get("memory") for c in placed.values()):
            self._write_memory_entries(state["memory"])
        default = state["cpu"]["defaultCpuSet"] if self.static_cpu else format_cpulist(self.topology["online"])
        for entry in placed.values():
            if not entry["cpus"]:
                entry["cpus"] = default
        return {"qosClass": qos, "numaNode": numa_used[0] if len(numa_used) == 1 else numa_used, "containers": placed,
                "topologyManagerPolicy": self.policy, "topologyManagerScope": self.scope, "gpuTopology": self.gpu_topology}

    def _fit(self, spec, admitted, count):
        """The predicate admit handler's noderesources.Fits; the first failure is the reason."""
        max_pods = int(self.allocatable["pods"])
        if count + 1 > max_pods:
            raise AdmissionError("OutOfpods", "Node didn't have enough resource: pods, requested: 1, used: %d, capacity: %d" % (count, max_pods))
        wanted = pod_requests(spec)
        used = {}
        for other in admitted:
            for name, value in pod_requests(other["spec"]).items():
                used[name] = used.get(name, 0) + value
        names = [n for n in ("cpu", "memory", "ephemeral-storage") if n in wanted]
        names += sorted(n for n in wanted if n not in ("cpu", "memory", "ephemeral-storage", "pods"))
        for name in names:
            if name not in self.allocatable and _is_extended(name):
                continue  # removeMissingExtendedResources: an extended resource no device plugin registered is not counted
            scale = 1000 if name == "cpu" else 1
            request = math.ceil(wanted[name] * scale)
            held = math.ceil(used.get(name, 0) * scale)
            capacity = math.floor(self.allocatable.get(name, 0) * scale)
            if request > 0 and request > capacity - held:
                raise AdmissionError("OutOf" + name, "Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d"
                                     % (name, request, held, capacity))

    def _needs(self, container, qos):
        requests, limits = container_resources(container)
        cpu = requests.get("cpu", 0)
        exclusive = int(cpu) if self.static_cpu and qos == "Guaranteed" and cpu.denominator == 1 and cpu > 0 else 0
        memory = {}
        if self.static_memory and qos == "Guaranteed":
            memory = {k: int(v) for k, v in sorted(requests.items()) if (k == "memory" or k.startswith("hugepages-")) and v > 0}
        gpus = int(limits.get(self.gpu_resource, 0)) if self.gpus else 0
        return {"cpus": exclusive, "memory": memory, "gpus": gpus}

    def _free_cpus(self, state):
        return parse_cpulist(state["cpu"]["defaultCpuSet"]) - self.reserved

    def _whole_cores(self, free, cpus=None):
        cores = sorted({self.topology["siblings"][c] for c in free if cpus is None or c in cpus}, key=min)
        return [core for core in cores if core <= free and (cpus is None or core <= cpus)]

    def _cpus_fit(self, count, state, cpus):
        free = self._free_cpus(state) & cpus
        if self.full_pcpus:
            return sum(len(c) for c in self._whole_cores(free)) >= count
        return len(free) >= count

    def _memory_free(self, state):
        return expected_machine_state(self.topology, self.system_reserved, state["memory"])

    def _hint(self, needs, state):
        """The Topology Manager: the NUMA node every hint provider can serve (single-numa-node), else None."""
        if self.policy == "none":
            return None
        cpus = sum(n["cpus"] for n in needs)
        memory = {}
        for need in needs:
            for name, size in need["memory"].items():
                memory[name] = memory.get(name, 0) + size
        gpus = sum(n["gpus"] for n in needs)
        gpu_hints = gpus > 0 and self.gpu_topology and any(g["numa"] is not None for g in self.gpus)
        if not cpus and not memory and not gpu_hints:
            return None  # no provider has a preference
        machine = self._memory_free(state) if memory else {}
        for nid in sorted(self.topology["nodes"]):
            if cpus and not self._cpus_fit(cpus, state, self.topology["nodes"][nid]["cpus"]):
                continue
            tables = (machine.get(str(nid)) or {}).get("memoryMap") or {}
            if any(name not in tables or tables[name]["free"] < size for name, size in memory.items()):
                continue
            if gpu_hints and sum(1 for g in self.gpus if g["numa"] == nid and g["id"] not in state["devices"]) < gpus:
                continue
            return nid
        if self.policy in ("best-effort", "restricted"):
            return None
        raise AdmissionError("TopologyAffinityError", "Resources cannot be allocated with Topology locality")

    def _allocate(self, uid, container, need, numa, state):
        name = str(container.get("name") or "")
        entry = {"cpus": "", "mems": "", "exclusive": False, "devices": [], "memory": []}
        if need["cpus"]:
            entry["cpus"] = self._take_cpus(uid, name, need["cpus"], numa, state)
            entry["exclusive"] = True
        if need["memory"]:
            entry["memory"] = self._take_memory(uid, name, need["memory"], numa, state)
        mems = sorted({n for block in entry["memory"] for n in block["numaAffinity"]})
        if not mems:
            mems = sorted(n for n, node in self.topology["nodes"].items() if node["memory"] > 0)
        entry["mems"] = format_cpulist(mems)
        if need["gpus"]:
            entry["devices"] = self._take_devices(need["gpus"], numa, state)
        return entry

    def _allocate_pod(self, uid, containers, budget, state):
        """KEP-5526 (PodLevelResourceManagers), a Guaranteed pod with its own budget: one Topology Manager hint for the
        pod, its whole CPUs taken as the pod's set (``podEntries``: {uid: {"cpuSet"}}) and its memory from that NUMA
        node; a container that is Guaranteed on its own (whole CPUs, requests equal to limits for cpu and memory) gets an
        exclusive slice of the pod's set, every other container the rest - the pod's shared pool -, each written to
        ``entries`` ("the manager pre-computes and writes the specific assignment for every container to the state
        file"). The pod's memory blocks are recorded with its first container in the shared pool (the stand-in's
        memory checkpoint has no pod entries). Returns (placed, the NUMA node)."""
        cpu = budget.get("cpu", 0)
        need = {"cpus": int(cpu) if self.static_cpu and cpu.denominator == 1 and cpu > 0 else 0,
                "memory": {"memory": int(budget["memory"])} if self.static_memory and budget.get("memory") else {},
                "gpus": sum(self._needs(c, "Burstable")["gpus"] for c in containers)}
        numa = self._hint([need], state)
        pool = parse_cpulist(self._take_cpus(uid, None, need["cpus"], numa, state)) if need["cpus"] else frozenset()
        placed, shared = {}, []
        for container in containers:
            name = str(container.get("name") or "")
            requests, limits = container_resources(container)
            own_cpu = requests.get("cpu", 0)
            alone = (pool and own_cpu > 0 and own_cpu.denominator == 1 and requests.get("cpu") == limits.get("cpu")
                     and limits.get("memory") and requests.get("memory") == limits.get("memory"))
            entry = {"cpus": "", "mems": "", "exclusive": bool(pool), "devices": [], "memory": []}
            if alone:
                taken = [c for core in self._whole_cores(pool) for c in sorted(core)][:int(own_cpu)]
                taken += [c for c in sorted(pool) if c not in taken][:int(own_cpu) - len(taken)]
                pool = pool - frozenset(taken)
                entry["cpus"] = format_cpulist(taken)
                state["cpu"]["entries"].setdefault(uid, {})[name] = entry["cpus"]
            else:
                shared.append(name)
            gpus = self._needs(container, "Burstable")["gpus"]
            if gpus:
                entry["devices"] = self._take_devices(gpus, numa, state)
            placed[name] = entry
        for name in shared:
            placed[name]["cpus"] = format_cpulist(pool)
            if pool:
                state["cpu"]["entries"].setdefault(uid, {})[name] = format_cpulist(pool)
        if need["memory"]:
            holder = (shared or list(placed))[0]
            placed[holder]["memory"] = self._take_memory(uid, holder, need["memory"], numa, state)
        mems = sorted({n for entry in placed.values() for block in entry["memory"] for n in block["numaAffinity"]})
        for entry in placed.values():
            entry["mems"] = format_cpulist(mems or sorted(n for n, node in self.topology["nodes"].items() if node["memory"] > 0))
        return placed, numa

    def _take_cpus(self, uid, name, count, numa, state):
        if self.full_pcpus:
            if count % self.threads:
                raise AdmissionError("SMTAlignmentError", "SMT Alignment Error: requested %d cpus not multiple cpus per core = %d"
                                     % (count, self.threads))
            available = sum(len(c) for c in self._whole_cores(self._free_cpus(state)))
            if count > available:
                raise AdmissionError("SMTAlignmentError", "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = %d, "
                                     "requested CPUs = %d, CPUs per core = %d" % (available, count, self.threads))
        free = self._free_cpus(state)
        if len(free) < count:
            raise unexpected("not enough cpus available to satisfy request: requested=%d, available=%d" % (count, len(free)))
        groups = [self.topology["nodes"][numa]["cpus"]] if numa is not None else \
            [self.topology["nodes"][n]["cpus"] for n in sorted(self.topology["nodes"]) if self._cpus_fit(count, state, self.topology["nodes"][n]["cpus"])]
        groups.append(self.topology["online"])
        for cpus in groups:
            taken = []
            for core in self._whole_cores(free, cpus):
                if len(taken) + len(core) <= count:
                    taken.extend(sorted(core))
            if not self.full_pcpus:
                for cpu in sorted(free & cpus):
                    if len(taken) < count and cpu not in taken:
                        taken.append(cpu)
            if len(taken) == count:
                break
        chosen = frozenset(taken)
        state["cpu"]["defaultCpuSet"] = format_cpulist(parse_cpulist(state["cpu"]["defaultCpuSet"]) - chosen)
        if name is None:  # the pod's own set (pod-level resource managers)
            state["cpu"].setdefault("podEntries", {})[uid] = {"cpuSet": format_cpulist(chosen)}
        else:
            state["cpu"]["entries"].setdefault(uid, {})[name] = format_cpulist(chosen)
        return format_cpulist(chosen)

    def _take_memory(self, uid, name, wanted, numa, state):
        machine = self._memory_free(state)

        def fits(nids):
            return all(sum(((machine[str(n)]["memoryMap"].get(t) or {}).get("free", 0) for n in nids)) >= size for t, size in wanted.items())

        if numa is not None:
            nodes = [numa]
        else:
            singles = [n for n in sorted(self.topology["nodes"]) if fits([n])]
            nodes = singles[:1] or sorted(self.topology["nodes"])
            if not fits(nodes):
                raise unexpected("[memorymanager] failed to find NUMA nodes to extend the current topology hint")
        blocks = [{"numaAffinity": nodes, "type": t, "size": size} for t, size in sorted(wanted.items())]
        state["memory"].setdefault(uid, {})[name] = blocks
        return blocks

    def _take_devices(self, count, numa, state):
        free = [g for g in self.gpus if g["id"] not in state["devices"]]
        if len(free) < count:
            raise unexpected("requested number of devices unavailable for %s. Requested: %d, Available: %d" % (self.gpu_resource, count, len(free)))
        if numa is not None and self.gpu_topology:
            order = [g for g in free if g["numa"] == numa] + [g for g in free if g["numa"] is None] + \
                [g for g in free if g["numa"] is not None and g["numa"] != numa]
        else:
            order = sorted(free, key=lambda g: g["address"], reverse=True)
        chosen = [g["id"] for g in order[:count]]
        state["devices"].update(chosen)
        return chosen


# ---------------------------------------------------------------- the agent process

class HealthHandler(http.server.BaseHTTPRequestHandler):
    """/healthz -> 200 "ok", like the kubelet's healthz server."""

    # TCP_NODELAY, as the kubelet's Go server has it (net/tcpsock.go SetNoDelay: "The default is true"): no response
    # held for the client's delayed ACK
    disable_nagle_algorithm = True

    def do_GET(self):
        if self.path.split("?")[0] == "/healthz":
            body, code = b"ok", 200
        else:
            body, code = b"404 page not found\n", 404
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        return


class HealthServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class HealthServer6(HealthServer):
    address_family = socket.AF_INET6


class Agent:
    """`rke2 agent`: loads the configuration once, then runs (and restarts) its kubelet."""

    def __init__(self, config_path=None):
        self.config_path = config_path or env("RKE2_STANDIN_CONFIG", env("RKE2_CONFIG_FILE", DEFAULT_CONFIG))
        self.dropin_dir = env("RKE2_STANDIN_CONFIG_DIR", self.config_path + ".d")
        self.sysfs_root = env("RKE2_STANDIN_SYSFS_ROOT", "/")
        self.state_dir = env("RKE2_STANDIN_STATE_DIR", DEFAULT_STATE_DIR)
        # The cluster's side (nodes/<name>.json): shared by every node of a test cluster and the API stand-in.
        self.cluster_dir = env("RKE2_STANDIN_CLUSTER_DIR", self.state_dir)
        self.restart_seconds = float(env("RKE2_STANDIN_KUBELET_RESTART_SECONDS", "5"))
        self.blip_seconds = float(env("RKE2_STANDIN_HEALTHZ_BLIP_SECONDS", "0"))
        self.stale_ready_seconds = float(env("RKE2_STANDIN_STALE_READY_SECONDS", "0"))
        self.options = {
            "strict_smt": env("RKE2_STANDIN_STRICT_SMT", "false").lower() in ("1", "true", "yes"),
            "verify_checksum": env("RKE2_STANDIN_VERIFY_CHECKSUM", "true").lower() not in ("0", "false", "no"),
        }
        self.eviction_defaults = env("RKE2_STANDIN_EVICTION_DEFAULTS", "rke2")
        self.node_ip = ""
        self.seed_pods = env("RKE2_STANDIN_SEED_PODS", "true").lower() not in ("0", "false", "no")
        # Node Feature Discovery on this node: the features.d folder its local source reads (empty: no NFD), and
        # nfd-worker's sleep-interval (60 s by default).
        self.nfd_features_dir = env("RKE2_STANDIN_NFD_FEATURES_DIR", "")
        self.nfd_interval = float(env("RKE2_STANDIN_NFD_INTERVAL", "60"))
        # A fault for tests: with this kubelet flag, the kubelet fails after its checkpoints are written
        # and healthz has answered, as when the container manager cannot start (kubelet.go exits).
        self.fail_after_start = env("RKE2_STANDIN_FAIL_AFTER_START", "")
        self.fail_after_start_flag = env("RKE2_STANDIN_FAIL_AFTER_START_FLAG", "")
        self.stop = threading.Event()
        self.server = None
        self.node_name = None
        self.kubelet_log = None
        self.status = {"pid": os.getpid(), "version": VERSION, "started": _now(), "healthy": False, "attempts": 0, "error": None}
        self.config = {}

    # -- output
    def journal(self, level, msg):
        sys.stderr.write(logrus(level, msg) + "\n")
        sys.stderr.flush()

    def kubelet_lines(self, lines):
        text = "".join(line + "\n" for line in lines)
        sys.stderr.write(text)
        sys.stderr.flush()
        os.makedirs(os.path.dirname(self.kubelet_log), exist_ok=True)
        with open(self.kubelet_log, "a") as handle:
            handle.write(text)

    def write_status(self, **changes):
        self.status.update(changes)
        self.status["updated"] = _now()
        os.makedirs(self.state_dir, exist_ok=True)
        path = os.path.join(self.state_dir, "rke2-status.json")
        tmp = path + ".tmp"
        with open(tmp, "w") as handle:
            json.dump(self.status, handle, indent=2, sort_keys=True)
            handle.write("\n")
        os.replace(tmp, path)

    def set_node(self, ready=None, register=False, resources=None):
        with locked_node(self.cluster_dir, self.node_name) as box:
            node = box["node"]
            if node is None:
                node = new_node(self.node_name, self.seed_pods)
            if resources is not None:
                node["capacity"], node["allocatable"] = resources
            if register:
                labels = node_labels(self.config)
                labels["kubernetes.io/hostname"] = self.node_name
                node["labels"] = dict(node.get("labels") or {}, **labels)
                node["taints"] = node_taints(self.config)
                node["kubeletVersion"] = KUBELET_VERSION
            if ready is not None:
                if node.get("ready") and not ready:
                    node["notReadySince"] = time.time()
                if ready:
                    node["notReadySince"] = None
                    node["lastHeartbeatTime"] = _now()
                if bool(node.get("ready")) != ready:
                    node["lastTransitionTime"] = _now()
                node["ready"] = ready
            node["staleReadySeconds"] = self.stale_ready_seconds
            box["node"] = node

    # -- healthz
    def serve_healthz(self, address, port):
        if port == 0 or self.server is not None:
            return True
        try:
            self.server = (HealthServer6 if ":" in address else HealthServer)((address, port), HealthHandler)
        except OSError as exc:
            self.kubelet_lines([klog("E", "server.go:1262", "Failed to start healthz server", err="listen tcp %s:%d: %s" % (address, port, exc))])
            return False
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        return True

    def close_healthz(self):
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def notify_ready(self):
        address = os.environ.get("NOTIFY_SOCKET")
        if not address:
            return
        if address.startswith("@"):
            address = "\0" + address[1:]
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.sendto(b"READY=1", address)

    # -- main loop
    def run(self):
        signal.signal(signal.SIGTERM, lambda *a: self.stop.set())
        signal.signal(signal.SIGINT, lambda *a: self.stop.set())
        self.journal("info", "Starting rke2 agent %s (stand-in)" % VERSION)
        files = config_files(self.config_path, self.dropin_dir)
        try:
            self.config = load_config(files)
        except ConfigError as exc:
            self.journal("fatal", str(exc))
            return 1
        for path in files:
            self.journal("info", "Loaded configuration file %s" % path)
        data_dir = str(self.config.get("data-dir") or env("RKE2_STANDIN_DATA_DIR", DEFAULT_DATA_DIR))
        stage_runtime(data_dir)
        self.kubelet_log = os.path.join(data_dir, "agent", "logs", "kubelet.log")
        self.node_name = env("RKE2_STANDIN_NODE_NAME") or str(self.config.get("node-name") or socket.gethostname()).lower()
        # RKE2 1.32+ gives the kubelet its defaults (evictionHard, ...) in a config file, see
        # parse_kubelet_flags; on the command line it sets where things are.
        flag_defaults = {"config-dir": os.path.join(data_dir, "agent", "etc", "kubelet.conf.d"),
                         "kubeconfig": os.path.join(data_dir, "agent", "kubelet.kubeconfig"),
                         "hostname-override": self.node_name}
        labels = [str(item) for item in _as_list(self.config.get("node-label") or [])]
        if labels:
            flag_defaults["node-labels"] = ",".join(labels)
        self.node_ip = ",".join(str(ip) for ip in _as_list(self.config.get("node-ip") or []))
        user_args = extract_config_args(_as_list(self.config.get("kubelet-arg") or []), flag_defaults["config-dir"])
        args = kubelet_args(user_args, flag_defaults)
        self.journal("info", "Running kubelet " + " ".join(args))
        self.write_status(node=self.node_name, config_files=files, kubelet_args=args, kubelet_log=self.kubelet_log, healthy=False)
        self.set_node(ready=False, register=True)
        self.notify_ready()
        try:
            self.supervise(args)
        finally:
            self.close_healthz()
            self.set_node(ready=False)
            self.write_status(healthy=False, stopped=_now())
            self.journal("info", "Shutting down rke2 agent (stand-in)")
        return 0

    def supervise(self, args):
        """Start the kubelet; while it refuses, start it again every few seconds, re-reading checkpoints and topology."""
        while not self.stop.is_set():
            self.status["attempts"] += 1
            self.kubelet_lines([klog("I", "server.go:527", "Kubelet version", kubeletVersion=KUBELET_VERSION),
                                klog("I", "server.go:529", "Golang settings", GOGC="", GOMAXPROCS="", GOTRACEBACK="")])
            try:
                cfg = parse_kubelet_flags(args, self.eviction_defaults, self.node_ip)
                kubelet_dir = cfg["root-dir"] or env("RKE2_STANDIN_KUBELET_DIR", DEFAULT_KUBELET_DIR)
                try:
                    topology = read_topology(self.sysfs_root)
                except (OSError, ValueError) as exc:
                    _refuse_run("failed to get machine info: %s" % exc)
                result = start_kubelet(cfg, topology, kubelet_dir, self.options)
                if self.fail_after_start and (not self.fail_after_start_flag or runs_with(cfg, args, self.fail_after_start_flag)):
                    err = "Failed to start ContainerManager: " + self.fail_after_start
                    raise KubeletRefusal(err, [klog("E", "kubelet.go:1649", "Failed to start ContainerManager",
                                                    err=self.fail_after_start)])
            except KubeletRefusal as refusal:
                self.refused(refusal, args)
                continue
            port = int(env("RKE2_STANDIN_HEALTHZ_PORT", str(cfg["healthz-port"]))) if cfg["healthz-port"] else 0
            lines = [klog("I", "kubelet.go:1703", "Started kubelet")]
            lines += [klog("W", "policy_static.go:140", w) for w in result["warnings"]]
            self.kubelet_lines(lines)
            serving = self.serve_healthz(cfg["healthz-bind-address"], port)
            runtime = PodRuntime(self, cfg, topology, result, kubelet_dir)
            self.set_node(ready=True, resources=runtime.node_status())
            self.write_status(healthy=True, error=None, kubelet=result, healthz_port=port, kubelet_dir=kubelet_dir)
            self.journal("info", "kubelet is running (stand-in), node %s Ready" % self.node_name)
            # The pod side: admit, run and reap pods every half second (see PodRuntime).
            ticks = 0
            nfd_due = time.monotonic()
            try:
                while not self.stop.wait(0.5):
                    runtime.sync()
                    ticks += 1
                    if self.nfd_features_dir and time.monotonic() >= nfd_due:
                        # NFD's DaemonSet runs on the node while its kubelet does: a pass every interval.
                        nfd_pass(self.cluster_dir, self.node_name, self.nfd_features_dir)
                        nfd_due = time.monotonic() + self.nfd_interval
                    if not serving and ticks % 10 == 0:
                        serving = self.serve_healthz(cfg["healthz-bind-address"], port)
            finally:
                runtime.stop()
            return

    def refused(self, refusal, args):
        self.kubelet_lines(refusal.lines)
        self.write_status(healthy=False, error=refusal.err, kubelet=None, last_failure=_now())
        self.set_node(ready=False)
        if self.blip_seconds > 0 and not refusal.err.startswith(("failed to run Kubelet", "failed to parse", "failed to validate")):
            # The real kubelet's healthz comes up before the container manager starts: a short "ok".
            cfg = parse_kubelet_flags(args, self.eviction_defaults, self.node_ip)
            port = int(env("RKE2_STANDIN_HEALTHZ_PORT", str(cfg["healthz-port"]))) if cfg["healthz-port"] else 0
            if self.serve_healthz(cfg["healthz-bind-address"], port):
                self.stop.wait(self.blip_seconds)
                self.close_healthz()
        self.journal("error", "Kubelet exited: exit status 1")
        self.stop.wait(self.restart_seconds)


# ---------------------------------------------------------------- Rancher's system-agent

# What rancher-system-agent does with a plan from Rancher's planner (rancher/rancher pkg/capr/planner,
# rancher/system-agent pkg/applyinator, rancher/system-agent-installer-rke2 package/run.sh):
# - the applyinator holds <var>/interlock/applyinator-active while it applies the plan;
# - the plan's file config.yaml.d/50-rancher.yaml is the planner's json.MarshalIndent(config, "", "  ") of plain
#   keys (Go's encoding/json sorts map keys): node-label always (rke.cattle.io/machine=<id> among them), node-taint
#   when the machine has taints, kubelet-arg once a Rancher user set a kubelet argument;
# - the installer's run.sh compares the plan's RESTART_STAMP with <data-dir>/system-agent-installer/rke2_restart_stamp
#   and, when it differs, writes it and runs `systemctl --no-block restart rke2-<type>`. The stamp is the planner's
#   restartStamp (pkg/capr/planner: sha256 of the control plane's spec.provisionGeneration, the installer image, each
#   non-dynamic plan file's path and base64 content, and status.configGeneration): rke2 restarts when any of them
#   changes - a new installer image (an RKE2 upgrade), a provisioning generation bumped in the UI, a registries file -
#   not only when 50-rancher.yaml does;
# - nothing touches the kubelet's checkpoints, and nothing drains the node here (Rancher's drain is the
#   management cluster's, only with upgradeStrategy drain options).
RANCHER_FILE = "50-rancher.yaml"
RANCHER_MACHINE_LABEL = "rke.cattle.io/machine"


def rancher_plan_file(machine, kubelet_args=(), node_labels=(), node_taints=()):
    """The text of 50-rancher.yaml as the planner writes it."""
    config = {"node-label": ["%s=%s" % (RANCHER_MACHINE_LABEL, machine)] + list(node_labels)}
    if node_taints:
        config["node-taint"] = list(node_taints)
    if kubelet_args:
        config["kubelet-arg"] = list(kubelet_args)
    return json.dumps(config, indent=2, sort_keys=True)


RANCHER_INSTALLER_IMAGE = "rancher/system-agent-installer-rke2:v1.35.2-rke2r1"


def rancher_restart_stamp(files, provision_generation=0, image=RANCHER_INSTALLER_IMAGE, config_generation=1):
    """The planner's restartStamp (rancher/rancher pkg/capr/planner restartStamp): sha256 over the provisioning
    generation (decimal), the installer image, each plan file's path and base64 content in the plan's order (``files``:
    [(path, text)], the non-dynamic ones), and the config generation (decimal); hex."""
    stamp = hashlib.sha256()
    stamp.update(str(int(provision_generation)).encode())
    stamp.update(str(image).encode())
    for path, text in files:
        stamp.update(str(path).encode())
        stamp.update(base64.b64encode(text.encode()))
    stamp.update(str(int(config_generation)).encode())
    return stamp.hexdigest()


def rancher_apply(config_path, root, machine, kubelet_args=(), node_labels=(), node_taints=(), hold=None, provision_generation=0,
                  image=RANCHER_INSTALLER_IMAGE, config_generation=1):
    """Apply a Rancher plan on the node: 50-rancher.yaml beside ``config_path``, the restart stamp under ``root``
    (``/`` on a node). Returns True when rke2 must restart (the stamp changed: the plan file, or the provisioning
    generation, the installer image or the config generation - rancher_restart_stamp). ``hold``: a callable run while
    the applyinator's interlock is held (tests look at the node then)."""
    interlock = os.path.join(root, "var/lib/rancher/agent/interlock")
    os.makedirs(interlock, mode=0o700, exist_ok=True)
    active = os.path.join(interlock, "applyinator-active")
    with open(active, "w"):
        pass
    try:
        if hold is not None:
            hold()
        text = rancher_plan_file(machine, kubelet_args, node_labels, node_taints)
        folder = config_path + ".d"
        os.makedirs(folder, exist_ok=True)
        target = os.path.join(folder, RANCHER_FILE)
        with open(target + ".tmp", "w") as handle:
            handle.write(text)
        os.chmod(target + ".tmp", 0o600)
        os.replace(target + ".tmp", target)
        stamp = rancher_restart_stamp([(target, text)], provision_generation, image, config_generation)
        stamp_file = os.path.join(root, "var/lib/rancher/rke2/system-agent-installer/rke2_restart_stamp")
        os.makedirs(os.path.dirname(stamp_file), exist_ok=True)
        prior = _read(stamp_file, "").strip()
        if prior == stamp:
            return False
        with open(stamp_file, "w") as handle:
            handle.write(stamp + "\n")
        return True
    finally:
        os.unlink(active)


def kubelet_start(config_path, sysfs_root, kubelet_dir, options=None):
    """What one start of `rke2 agent` gives its kubelet, once: RKE2's config files read in order, the kubelet-arg as
    flags, the kubelet started on the checkpoints it finds (KubeletRefusal when it refuses them)."""
    config = load_config(config_files(config_path, config_path + ".d"))
    args = kubelet_args(_as_list(config.get("kubelet-arg") or []), {})
    cfg = parse_kubelet_flags(args)
    return start_kubelet(cfg, read_topology(sysfs_root), kubelet_dir, options or {})


def rancher_command(argv):
    """`rke2 standin-rancher-apply --machine ID [--kubelet-arg A]... [--node-label L]... [--node-taint T]...`:
    rancher-system-agent applying a plan; restarts rke2-agent (systemctl --no-block) when the stamp changed."""
    opts = {"--machine": [], "--kubelet-arg": [], "--node-label": [], "--node-taint": [], "--config": [], "--root": [],
            "--provision-generation": [], "--installer-image": [], "--config-generation": []}
    rest = list(argv)
    while rest:
        item = rest.pop(0)
        name, eq, value = item.partition("=")
        if name not in opts or (not eq and not rest):
            sys.stderr.write("usage: rke2 standin-rancher-apply --machine ID [--kubelet-arg A]... [--node-label L]... "
                             "[--node-taint T]... [--config FILE] [--root DIR] [--provision-generation N] [--installer-image IMAGE] "
                             "[--config-generation N]\n")
            return 2
        opts[name].append(value if eq else rest.pop(0))
    config_path = (opts["--config"] or [env("RKE2_STANDIN_CONFIG", DEFAULT_CONFIG)])[-1]
    restart = rancher_apply(config_path, (opts["--root"] or ["/"])[-1], (opts["--machine"] or ["standin-machine"])[-1],
                            opts["--kubelet-arg"], opts["--node-label"], opts["--node-taint"],
                            provision_generation=int((opts["--provision-generation"] or ["0"])[-1]),
                            image=(opts["--installer-image"] or [RANCHER_INSTALLER_IMAGE])[-1],
                            config_generation=int((opts["--config-generation"] or ["1"])[-1]))
    if restart:
        return subprocess.call(["systemctl", "--no-block", "restart", "rke2-agent"])
    return 0


# ---------------------------------------------------------------- command line

def fix_checksum(paths):
    """`rke2 standin-fix-checksum FILE...`: give hand-made checkpoints the stand-in's checksum."""
    for path in paths:
        with open(path) as handle:
            data = json.load(handle)
        data["checksum"] = checksum(data)
        with open(path, "w") as handle:
            json.dump(data, handle, separators=(",", ":"))
    return 0


USAGE = """usage: rke2 agent [--config FILE]
       rke2 --version
       rke2 standin-fix-checksum CHECKPOINT...   (stand-in only)
       rke2 standin-rancher-apply --machine ID [--kubelet-arg A]...   (stand-in only: Rancher's system-agent)
"""


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("--version", "-v", "version"):
        print("rke2 version %s (stand-in)\ngo version go1.24.4 X:boringcrypto" % VERSION)
        return 0
    if argv and argv[0] == "standin-fix-checksum":
        return fix_checksum(argv[1:])
    if argv and argv[0] == "standin-rancher-apply":
        return rancher_command(argv[1:])
    if not argv or argv[0] != "agent":
        sys.stderr.write(USAGE)
        return 2
    config_path = None
    rest = argv[1:]
    while rest:
        item = rest.pop(0)
        if item in ("-c", "--config") and rest:
            config_path = rest.pop(0)
        elif item.startswith("--config="):
            config_path = item.split("=", 1)[1]
    return Agent(config_path).run()


if __name__ == "__main__":
    sys.exit(main())
