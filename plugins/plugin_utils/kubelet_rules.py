# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet's and the kernel's refusal rules, as checks on finished args.

The planner builds its args rule by rule; this module reads them back the way
the kubelet and the kernel parse them and reports what they would refuse, in
their own words and no more: each message says whose rule it is (``kubelet:``
or ``kernel:``), and what the kubelet accepts (reserved CPUs that split a core)
is at most a warning (``warnings``). ``make_plan`` runs it on every plan (a
refusal there is a planner bug) and again after pass-through args (a refusal
there refuses the operator's override).

It also holds the forms the kubelet accepts for what RKE2 hands it besides
``kubelet-arg``: node labels (``--node-labels``) and taints
(``--register-with-taints``), checked one item at a time before a plan is made.

Sources: pkg/kubelet/cm/cpumanager/{cpu_manager,policy_static}.go,
pkg/kubelet/cm/cpumanager/topology/topology.go (CPUsPerCore),
pkg/kubelet/cm/memorymanager/memory_manager.go (validateReservedMemory),
pkg/kubelet/cm/topologymanager/{topology_manager,policy_options}.go,
kernel/sched/isolation.c, kernel/time/tick-sched.c (tick_nohz_init),
apimachinery pkg/util/validation/validation.go (IsQualifiedName, IsValidLabelValue),
pkg/util/taints/taints.go (parseTaint), cmd/kubelet/app/options/options.go
(ValidateKubeletFlags: --node-labels in the kubernetes.io and k8s.io namespaces).
"""

from __future__ import annotations

import re
import struct

from ansible_collections.maitred.rke2_numa.plugins.module_utils.kubelet_conf import FLAG_FIELDS
from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import (
    CPU_ID_LIMIT,
    CpusetError,
    format_cpulist,
    parse_cpulist,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kube_names import label_value_errors, qualified_name_errors
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import (
    QuantityError,
    parse_bytes,
)


def _raw_flag(arg):
    """(name as written, value) of a kubelet-arg entry as RKE2 splits it (k3s pkg/util/args.go GetArgs: one leading
    ``--`` trimmed, split at the first ``=``, a bare name is ``true``)."""
    text = str(arg)
    text = text[2:] if text.startswith("--") else text
    name, sep, value = text.partition("=")
    return name, value if sep else "true"


def normal_flag_name(name):
    """A kubelet flag's name as the kubelet reads it: RKE2's append/prepend suffix dropped (GetArgs:
    ``strings.TrimRight(arg, "-+")``), ``_`` read as ``-`` (cmd/kubelet/app/server.go sets
    k8s.io/component-base/cli/flag WordSepNormalizeFunc on its flag set)."""
    return name.rstrip("-+").replace("_", "-")


def flag_name(arg):
    """``--cpu-manager-policy=static`` / ``cpu_manager_policy+=static`` -> ``cpu-manager-policy``: the flag the kubelet
    gets (normal_flag_name)."""
    return normal_flag_name(str(arg).lstrip("-").split("=", 1)[0])


def kubelet_argv(sources):
    """[(source, 'name=value')] in RKE2's kubelet-arg order -> the same in the order the kubelet gets them, names as it
    reads them. RKE2 passes them through k3s pkg/util/args.go GetArgs: grouped by the name as written (its ``+``/``-``
    suffix trimmed), ``name+=v`` appended after the earlier values of that name, ``name-=v`` put before them, a plain
    ``name=v`` after them (RKE2's own default of the name dropped - none of the flags the plan manages has one), the
    groups sorted by that name (Go's sort.Strings: byte order), each group's values in their order. The kubelet then
    reads ``_`` as ``-``: ``cpu_manager_policy`` (sorted after ``cpu-manager-policy``) comes last and wins over it."""
    groups = {}
    for source, arg in sources:
        name, value = _raw_flag(arg)
        key = name.rstrip("-+")
        if name.endswith("-") and not name.endswith("+"):   # GetArgs tests "+" first, then "-"
            groups[key] = [(source, value)] + groups.get(key, [])
        else:                                                # "+": appended; plain: after the earlier values too
            groups[key] = groups.get(key, []) + [(source, value)]
    return [(source, "%s=%s" % (normal_flag_name(key), value))
            for key in sorted(groups, key=lambda k: k.encode("utf-8")) for source, value in groups[key]]


# The Topology Manager refuses more NUMA nodes than this unless told otherwise
# (topologymanager.defaultMaxAllowableNUMANodes).
DEFAULT_MAX_NUMA_NODES = 8

# ---------------------------------------------------------------- the kubelet of each minor
# What the kubelet of each Kubernetes minor accepts, one entry per minor: the level of each CPU Manager and Topology
# Manager policy option (absent: that kubelet does not know it), and the defaults of the feature gates that decide
# whether an alpha or beta option, pod-level resource managers and the config drop-in directory are on. A rule reads
# the node's minor here, never a version compared in place.
#
# Sources: the code as stored for the releases up to 1.34 and 1.37.0-beta.0 (kubernetes/kubernetes
# pkg/kubelet/cm/cpumanager/policy_options.go
# (alphaOptions, betaOptions, stableOptions; CheckPolicyOptionAvailable), pkg/kubelet/cm/topologymanager/
# policy_options.go (the same three sets and CheckPolicyOptionAvailable), pkg/features/kube_features.go and the
# generated test/compatibility_lifecycle/reference/versioned_feature_list.yaml (the gates' defaults per version, as
# kubernetes/website content/en/docs/reference/command-line-tools-reference/feature-gates/<Gate>.md publishes them),
# and, for the level each option has in 1.35 to 1.37, the KEPs' kep.yaml milestones (kubernetes/enhancements
# keps/sig-node) with the merged promotion PRs: 2625 full-pcpus-only (beta 1.23, stable
# 1.33), 2902 distribute-cpus-across-numa (beta 1.33), 4176 distribute-cpus-across-cores (alpha 1.31), 4540
# strict-cpu-reservation (alpha 1.32, beta 1.33, stable 1.35: kubernetes#134388), 4800 prefer-align-cpus-by-uncorecache
# (alpha 1.32, beta 1.34: kubernetes#132970, stable 1.36: kubernetes#137055), 3545 prefer-closest-numa-nodes (beta
# 1.28, stable 1.32: kubernetes#128124), 4622 max-allowable-numa-nodes (beta 1.31, stable 1.35: kubernetes#134614),
# 3983 the kubelet's drop-in directory --config-dir (``config_dir``: alpha 1.28 behind a gate, beta 1.31 on by default,
# stable 1.35; cmd/kubelet/app/server.go mergeKubeletConfigurations), 2837 PodLevelResources (alpha 1.32,
# beta 1.34), 5526 PodLevelResourceManagers (alpha 1.36, beta 1.37: on by default per the website's versioned gate
# page; two release digests say off - the node's own --feature-gates always decides, see feature_gates()).
# 1.38 is in its release cycle (no tag yet): its entry is 1.37's until its tag says otherwise.
_ALPHA, _BETA, _STABLE = "alpha", "beta", "stable"
_CPU_OPTIONS_1_30 = {"full-pcpus-only": _BETA, "distribute-cpus-across-numa": _ALPHA, "align-by-socket": _ALPHA}
# distribute-cpus-across-cores: KEP-4176 says alpha 1.30, but v1.30.0-beta.0's cpumanager constants do not hold it: 1.31
_CPU_OPTIONS_1_31 = dict(_CPU_OPTIONS_1_30, **{"distribute-cpus-across-cores": _ALPHA})
_CPU_OPTIONS_1_32 = dict(_CPU_OPTIONS_1_31, **{"strict-cpu-reservation": _ALPHA, "prefer-align-cpus-by-uncorecache": _ALPHA})
_CPU_OPTIONS_1_33 = dict(_CPU_OPTIONS_1_32, **{"full-pcpus-only": _STABLE, "distribute-cpus-across-numa": _BETA,
                                               "strict-cpu-reservation": _BETA})
_CPU_OPTIONS_1_34 = dict(_CPU_OPTIONS_1_33, **{"prefer-align-cpus-by-uncorecache": _BETA})
_CPU_OPTIONS_1_35 = dict(_CPU_OPTIONS_1_34, **{"strict-cpu-reservation": _STABLE})
_CPU_OPTIONS_1_36 = dict(_CPU_OPTIONS_1_35, **{"prefer-align-cpus-by-uncorecache": _STABLE})
_TOPOLOGY_OPTIONS_1_30 = {"prefer-closest-numa-nodes": _BETA}
_TOPOLOGY_OPTIONS_1_31 = dict(_TOPOLOGY_OPTIONS_1_30, **{"max-allowable-numa-nodes": _BETA})
_TOPOLOGY_OPTIONS_1_32 = dict(_TOPOLOGY_OPTIONS_1_31, **{"prefer-closest-numa-nodes": _STABLE})
_TOPOLOGY_OPTIONS_1_35 = dict(_TOPOLOGY_OPTIONS_1_32, **{"max-allowable-numa-nodes": _STABLE})
# gate -> default; a gate the minor lacks is absent (off, and --feature-gates naming it is refused by the kubelet)
_GATES_1_30 = {"CPUManagerPolicyAlphaOptions": False, "CPUManagerPolicyBetaOptions": True,
               "TopologyManagerPolicyAlphaOptions": False, "TopologyManagerPolicyBetaOptions": True}
_GATES_1_32 = dict(_GATES_1_30, PodLevelResources=False)
_GATES_1_34 = dict(_GATES_1_32, PodLevelResources=True)
_GATES_1_36 = dict(_GATES_1_34, PodLevelResourceManagers=False)
_GATES_1_37 = dict(_GATES_1_36, PodLevelResourceManagers=True)
KUBELET_MINORS = {
    (1, 30): {"config_dir": _ALPHA, "cpu_options": _CPU_OPTIONS_1_30, "topology_options": _TOPOLOGY_OPTIONS_1_30, "gates": _GATES_1_30,
              "checkpoint": "v2", "source": "v1.30.0"},
    (1, 31): {"config_dir": _BETA, "cpu_options": _CPU_OPTIONS_1_31, "topology_options": _TOPOLOGY_OPTIONS_1_31, "gates": _GATES_1_30,
              "checkpoint": "v2", "source": "v1.31.0"},
    (1, 32): {"config_dir": _BETA, "cpu_options": _CPU_OPTIONS_1_32, "topology_options": _TOPOLOGY_OPTIONS_1_32, "gates": _GATES_1_32,
              "checkpoint": "v2", "source": "v1.32.0"},
    (1, 33): {"config_dir": _BETA, "cpu_options": _CPU_OPTIONS_1_33, "topology_options": _TOPOLOGY_OPTIONS_1_32, "gates": _GATES_1_32,
              "checkpoint": "v2", "source": "v1.33.0"},
    (1, 34): {"config_dir": _BETA, "cpu_options": _CPU_OPTIONS_1_34, "topology_options": _TOPOLOGY_OPTIONS_1_32, "gates": _GATES_1_34,
              "checkpoint": "v2", "source": "v1.34.0"},
    (1, 35): {"config_dir": _STABLE, "cpu_options": _CPU_OPTIONS_1_35, "topology_options": _TOPOLOGY_OPTIONS_1_35, "gates": _GATES_1_34,
              "checkpoint": "v2", "source": "v1.35.0"},
    # cpumanager/state/checkpoint.go: V3 (podEntries) written when PodLevelResourceManagers is on (V2 when off)
    (1, 36): {"config_dir": _STABLE, "cpu_options": _CPU_OPTIONS_1_36, "topology_options": _TOPOLOGY_OPTIONS_1_35, "gates": _GATES_1_36,
              "checkpoint": "v3", "source": "v1.36.0"},
    # CPUManagerCheckpointV4: the V3 fields inline (checksum 0) and the authoritative ``data`` with ``dataChecksum``
    (1, 37): {"config_dir": _STABLE, "cpu_options": _CPU_OPTIONS_1_36, "topology_options": _TOPOLOGY_OPTIONS_1_35, "gates": _GATES_1_37,
              "checkpoint": "v4", "source": "v1.37.0"},
    (1, 38): {"config_dir": _STABLE, "cpu_options": _CPU_OPTIONS_1_36, "topology_options": _TOPOLOGY_OPTIONS_1_35, "gates": _GATES_1_37,
              "checkpoint": "v4", "source": "as 1.37 (no 1.38 tag yet)"},
}
OLDEST_MINOR, NEWEST_MINOR = min(KUBELET_MINORS), max(KUBELET_MINORS)
# The minor a host is planned for when no version is given and none could be read (no API read, no RKE2 on the
# host - a gathered sysfs tree, the demo's sample machines): the oldest RKE2 still supported upstream, whose flags
# every newer kubelet of the table accepts.
DEFAULT_MINOR = (1, 33)


def minor_text(minor):
    """(1, 37) -> "1.37": how a plan, a report and fleet.json write a minor."""
    return "%d.%d" % tuple(minor)


def minor_of(text):
    """"1.37" (minor_text's form, as a plan holds it) -> (1, 37)."""
    return tuple(int(p) for p in str(text).split("."))


# The kubelet's gate names for the option levels (cpumanager and topologymanager CheckPolicyOptionAvailable)
_LEVEL_GATES = {"cpu": {_ALPHA: "CPUManagerPolicyAlphaOptions", _BETA: "CPUManagerPolicyBetaOptions"},
                "topology": {_ALPHA: "TopologyManagerPolicyAlphaOptions", _BETA: "TopologyManagerPolicyBetaOptions"}}
_OPTION_WORDS = {"cpu": "CPU Manager", "topology": "Topology Manager"}


def first_minor_with(kind, option):
    """The first minor of the table whose ``kind`` Manager takes ``option`` with its default gates, or None."""
    usable = [m for m in sorted(KUBELET_MINORS) if option_usable(kind, option, m)]
    return usable[0] if usable else None


def minor_entry(minor):
    """The table's entry of ``minor`` ((1, 37)); KeyError for a minor outside it."""
    return KUBELET_MINORS[tuple(minor)]


def _given_gates(flags):
    given = flags.get("feature-gates")
    return dict((str(g).strip(), str(v).strip()) for g, v in (given if isinstance(given, dict) else _pairs(given)).items())


def feature_gates(flags, minor):
    """{gate: on} as the node's kubelet runs them: the minor's defaults, then its --feature-gates (a map flag: the
    kubelet reads each value with strconv.ParseBool). A gate the minor does not have stays off (gate_refusals says
    the kubelet refuses it)."""
    defaults = minor_entry(minor)["gates"]
    given = _given_gates(flags)
    gates = dict(defaults)
    # AllAlpha and AllBeta set every alpha (beta) gate not named itself (k8s.io/component-base/featuregate
    # feature_gate.go setUnsetAlphaGates/setUnsetBetaGates); each gate of the table is alpha exactly while it is off by
    # default and beta while it is on (test_kubelet_minors checks the table against the gates' stages)
    for special, on_by_default in (("AllAlpha", False), ("AllBeta", True)):
        if special in given:
            for gate, default in defaults.items():
                if default == on_by_default and gate not in given:
                    gates[gate] = given[special].lower() in ("1", "t", "true")
    for gate, value in given.items():
        if gate in gates:
            gates[gate] = value.lower() in ("1", "t", "true")
    return gates


def gate_refusals(flags, minor):
    """--feature-gates naming a gate of the table that this minor's kubelet does not have yet: "unrecognized feature
    gate" (k8s.io/component-base/featuregate feature_gate.go Set). Gates the table does not track are not judged."""
    known = set(g for entry in KUBELET_MINORS.values() for g in entry["gates"])
    return ["unrecognized feature gate: %s" % gate for gate in sorted(_given_gates(flags))
            if gate in known and gate not in minor_entry(minor)["gates"]]


def option_refusal(kind, option, minor, gates):
    """Why the ``kind`` ("cpu" or "topology") Manager of ``minor`` refuses the policy option ``option`` under
    ``gates`` (feature_gates), in the kubelet's words (CheckPolicyOptionAvailable), or None."""
    words = _OPTION_WORDS[kind]
    level = minor_entry(minor)["%s_options" % kind].get(option)
    if level is None:
        return "unknown %s Policy option: %s" % (words, _go_quote(option))
    gate = _LEVEL_GATES[kind].get(level)
    if gate and not gates.get(gate):
        return "%s Policy %s-level Options not enabled, but option %s provided" % (words, level.capitalize(), _go_quote(option))
    return None


def option_usable(kind, option, minor, flags=None):
    """Whether the ``kind`` Manager of ``minor`` takes ``option`` with the node's gates (default: the minor's)."""
    return option_refusal(kind, option, minor, feature_gates(flags or {}, minor)) is None


TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# The kubelet refuses --node-labels in these namespaces (ValidateKubeletFlags) unless the key is one it
# sets itself or sits under kubelet.kubernetes.io / node.kubernetes.io (k8s.io/kubelet well_known_labels.go).
_KUBELET_LABELS = ("kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch", "beta.kubernetes.io/os",
                   "beta.kubernetes.io/arch", "beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type",
                   "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
                   "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region")
_KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")
# A kubelet flag name as RKE2 passes it (--name=value); the kubelet reads '_' as '-'.
_FLAG_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")


def node_label_error(label):
    """Why the kubelet refuses ``key=value`` as a --node-labels entry (RKE2 ``node-label``), or None.

    The key is a qualified name, the value a label value (both Kubernetes
    validation), and a key in the kubernetes.io or k8s.io namespaces must be one
    the kubelet may set on its own Node.
    """
    if not isinstance(label, str) or "=" not in label:
        return "must be key=value (a label value may be empty: key=)"
    key, dummy, value = label.partition("=")
    errors = ["key %r: %s" % (key, e) for e in qualified_name_errors(key)]
    errors += ["value %r: %s" % (value, e) for e in label_value_errors(value)]
    if errors:
        return "; ".join(errors)
    namespace = key.split("/", 1)[0] if "/" in key else ""
    if namespace in ("kubernetes.io", "k8s.io") or namespace.endswith((".kubernetes.io", ".k8s.io")):
        allowed = key in _KUBELET_LABELS or any(namespace == n or namespace.endswith("." + n)
                                                for n in _KUBELET_LABEL_NAMESPACES)
        if not allowed:
            return ("unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [%s]: --node-labels in "
                    "the 'kubernetes.io' namespace must begin with an allowed prefix (%s) or be in the specifically "
                    "allowed set (%s); set such labels through the API instead"
                    % (key, ", ".join(_KUBELET_LABEL_NAMESPACES), ", ".join(sorted(_KUBELET_LABELS))))
    return None


def node_taint_error(taint):
    """Why ``key[=value]:Effect`` is not a taint the kubelet registers (RKE2 ``node-taint``,
    --register-with-taints), or None. Kubernetes parseTaint: the key is a qualified name,
    the value a label value, the effect NoSchedule, PreferNoSchedule or NoExecute and
    required when a taint is added."""
    if not isinstance(taint, str):
        return "must be a string key[=value]:Effect"
    parts = taint.split(":")
    if len(parts) == 1:
        return "invalid taint spec: no effect (write key[=value]:Effect with Effect one of %s)" % ", ".join(TAINT_EFFECTS)
    if len(parts) > 2:
        return "invalid taint spec: more than one ':' (write key[=value]:Effect)"
    pair, effect = parts
    if effect not in TAINT_EFFECTS:
        return "invalid taint spec: effect %r is not one of %s" % (effect, ", ".join(TAINT_EFFECTS))
    kv = pair.split("=")
    if len(kv) > 2:
        return "invalid taint spec: more than one '=' in %r" % pair
    errors = ["key %r: %s" % (kv[0], e) for e in qualified_name_errors(kv[0])]
    if len(kv) == 2:
        errors += ["value %r: %s" % (kv[1], e) for e in label_value_errors(kv[1])]
    return "; ".join(errors) or None


def kubelet_arg_error(arg):
    """Why ``arg`` is not a ``kubelet-arg`` entry in the form the plan writes, or None.

    One ``name=value`` word: RKE2 passes each entry as a single ``--name=value``
    argument, so whitespace would end up inside the flag name or value; the name
    is a kubelet flag name (lowercase, digits, '-' or '_'), without leading dashes.
    """
    if not isinstance(arg, str) or "=" not in arg or arg.startswith(("-", "=")):
        return "must be name=value without leading dashes"
    if any(c.isspace() or not c.isprintable() for c in arg):
        return ("contains whitespace or control characters: RKE2 passes each item as one --name=value argument, "
                "so write one flag per item without spaces")
    name = flag_name(arg)
    if not _FLAG_NAME.fullmatch(name):
        return "flag name %r is not a kubelet flag name (lowercase letters, digits, '-' or '_')" % name
    return None


# Kubelet flags whose repeats merge (component-base cliflag MapStringString,
# LangleSeparatedMapStringString, ConfigurationMap): the first occurrence
# replaces the built-in map, later ones add or replace keys. reserved-memory
# accumulates every occurrence. Any other flag: the last occurrence wins.
MAP_FLAGS = {"kube-reserved": "=", "system-reserved": "=", "eviction-hard": "<", "eviction-soft": "<",
             "eviction-minimum-reclaim": "=", "eviction-soft-grace-period": "=", "feature-gates": "=",
             "cpu-manager-policy-options": "=", "topology-manager-policy-options": "=", "qos-reserved": "="}
# The kubelet flags the plan owns: rke2_config replaces them by name and keeps the rest (its managed_flags option is
# documented from this list by make specs: doc_fragments/managed_flags.py).
MANAGED_KUBELET_FLAGS = ("cpu-manager-policy", "cpu-manager-policy-options", "topology-manager-policy", "topology-manager-scope",
                         "topology-manager-policy-options", "memory-manager-policy", "reserved-cpus", "kube-reserved",
                         "system-reserved", "eviction-hard", "reserved-memory")
ACCUMULATED_FLAGS = ("reserved-memory",)
# Each managed flag's field in the kubelet's configuration file: the KubeletConfiguration drop-in the plan is in file
# mode (plugin_utils/kubelet_config.py); the table's home is module_utils/kubelet_conf.py, which reads it on the host.
MANAGED_KUBELET_FIELDS = FLAG_FIELDS


def kubelet_flag_values(sources):
    """[(source, 'name=value')] in RKE2's kubelet-arg order -> {name: (value, [sources])}, read as the kubelet reads
    them (kubelet_argv: RKE2's order and suffixes, the kubelet's names): a map flag is a dict, reserved-memory a list
    of entries, else the last."""
    out = {}
    for source, arg in kubelet_argv(sources):
        name, dummy, value = arg.partition("=")
        old, where = out.get(name, (None, []))
        if name in MAP_FLAGS:
            sep = MAP_FLAGS[name]
            pairs = dict(p.split(sep, 1) if sep in p else (p, "") for p in value.split(",") if p.strip())
            value = dict(old or {}, **pairs)
        elif name in ACCUMULATED_FLAGS:
            value = (old or []) + [e for e in value.split(";") if e.strip()]
        out[name] = (value, where + [source])
    return out


def show_flag_value(value, name=None):
    """A kubelet flag value as kubelet_flag_values reads it, written back as on the command line."""
    if isinstance(value, dict):
        return ",".join("%s%s%s" % (k, MAP_FLAGS.get(name, "="), v) for k, v in sorted(value.items()))
    if isinstance(value, list):
        return ";".join(value)
    return str(value)


def parse_kubelet_args(args):
    """``name=value`` strings -> {name: value} as the kubelet reads them (kubelet_flag_values),
    each value written back as one flag value."""
    return {name: show_flag_value(value, name) for name, (value, dummy) in kubelet_flag_values(("", a) for a in args).items()}


def _pairs(value, sep="="):
    out = {}
    for item in filter(None, (value or "").split(",")):
        key, dummy, val = item.partition(sep)
        out[key.strip()] = val.strip()
    return out


def parse_reserved_memory(value):
    """``0:memory=1Gi;1:memory=512Mi`` -> {node: {type: bytes}} (kubelet ReservedMemoryVar syntax)."""
    out = {}
    for reservation in filter(None, (value or "").split(";")):
        node, sep, types = reservation.partition(":")
        if not sep:
            raise ValueError("the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], got %s"
                             % reservation)
        for kind, quantity in _pairs(types).items():
            out.setdefault(int(node), {})
            out[int(node)][kind] = out[int(node)].get(kind, 0) + parse_bytes(quantity, "reserved-memory")
    return out


def _float32(value):
    return struct.unpack("f", struct.pack("f", value))[0]


def eviction_reservation(threshold, capacity):
    """Bytes a hard ``memory.available`` threshold withholds from Node Allocatable
    (eviction parseThresholdStatement + GetThresholdQuantity): a quantity as is; a
    percentage of the memory capacity in float32, truncated; 0% and 100% are ignored."""
    if threshold.endswith("%"):
        if threshold in ("0%", "100%"):
            return 0
        return int(float(capacity) * _float32(_float32(float(threshold[:-1])) / 100))
    return parse_bytes(threshold)


def kernel_arg_value(kernel_args, name):
    """The value of the first ``name=value`` in kernel_args, or None."""
    for arg in kernel_args:
        key, dummy, value = arg.partition("=")
        if key == name:
            return value
    return None


def split_isolcpus(value):
    """``managed_irq,domain,2-31`` -> (["managed_irq", "domain"], "2-31"): isolcpus's flags and CPU list."""
    parts = value.split(",")
    return [p for p in parts if not p[:1].isdigit()], ",".join(p for p in parts if p[:1].isdigit())


def cpus_per_core(topology):
    """The kubelet's CPUs per core (cpumanager topology ``CPUsPerCore``): ``NumCPUs / NumCores``
    in integer division over the whole machine, as cadvisor counts them - the online CPUs over
    the physical cores (sibling groups). Not the widest core: a hybrid CPU with 6 SMT2 P-cores
    and 8 E-cores has 20 / 14 = 1. 0 when no core is known, as in the kubelet."""
    cores = len(topology.get("cores") or [])
    return len(parse_cpulist(topology["cpus_online"])) // cores if cores else 0


def _reserved_cpus(flags):
    """reserved-cpus as a set, and the kubelet's error when it cannot be parsed."""
    try:
        return set(parse_cpulist(flags.get("reserved-cpus", ""), limit=CPU_ID_LIMIT)), None
    except CpusetError as e:
        return set(), "invalid reserved-cpus: %s" % e


def _split_cores(reserved, topology):
    """Online siblings of reserved CPUs that are not reserved themselves (cores split by reserved-cpus)."""
    online = set(parse_cpulist(topology["cpus_online"]))
    return set(c for core in topology["cores"] if set(core) & reserved for c in core) & online - reserved


def _go_quote(text):
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


def _max_numa_nodes(options, errors):
    """The Topology Manager's NUMA node limit (topologymanager NewPolicyOptions): 8, or
    max-allowable-numa-nodes, which must be an integer not below 8. None when refused."""
    if "max-allowable-numa-nodes" not in options:
        return DEFAULT_MAX_NUMA_NODES
    value = options["max-allowable-numa-nodes"]
    if not re.fullmatch(r"[+-]?[0-9]+", value):
        errors.append("unable to convert policy option to integer %s: strconv.Atoi: parsing %s: invalid syntax"
                      % (_go_quote("max-allowable-numa-nodes"), _go_quote(value)))
        return None
    if int(value) < DEFAULT_MAX_NUMA_NODES:
        errors.append("the minimum value of %s should not be less than %d"
                      % (_go_quote("max-allowable-numa-nodes"), DEFAULT_MAX_NUMA_NODES))
        return None
    return int(value)


def check(kubelet_args, kernel_args, topology, minor=DEFAULT_MINOR):
    """Return what the kubelet of ``minor`` or the kernel would refuse (empty: accepted), each message
    prefixed with whose rule it is: ``kubelet: `` (the kubelet's own words) or ``kernel: ``."""
    return (["kubelet: %s" % e for e in kubelet_refusals(kubelet_args, topology, minor)]
            + ["kernel: %s" % e for e in kernel_refusals(kernel_args, kubelet_args, topology)])


def warnings(kubelet_args, topology):
    """What the kubelet accepts but works against the plan: reserved CPUs that split a physical core.

    "It's legal to reserve CPUs which are not core siblings" (cpumanager policy_static.go): under
    full-pcpus-only the kubelet then keeps the siblings out of exclusive allocation; without it
    a pod's exclusive CPU shares its core with housekeeping.
    """
    flags = parse_kubelet_args(kubelet_args)
    if flags.get("cpu-manager-policy", "none") != "static":
        return []
    reserved, dummy = _reserved_cpus(flags)
    split = _split_cores(reserved, topology)
    if not split:
        return []
    full = _pairs(flags.get("cpu-manager-policy-options")).get("full-pcpus-only") == "true"
    return ["reserved-cpus %s split physical cores: their siblings %s %s" % (
        format_cpulist(reserved), format_cpulist(split),
        "are never allocated exclusively (full-pcpus-only), they serve only the shared pool" if full
        else "can go to a pod exclusively and share a core with housekeeping")]


def _cpu_manager_refusals(flags, topology, minor):
    """cpumanager: the policy name, a reservation the static policy can use, reserved-cpus online.
    Reserved CPUs that split a core are legal (see warnings), full-pcpus-only or not."""
    errors = []
    reserved, error = _reserved_cpus(flags)
    if error:
        errors.append(error)
    policy = flags.get("cpu-manager-policy", "none")
    if policy not in ("none", "static"):
        errors.append('[cpumanager] unknown policy: "%s"' % policy)
    if policy == "static":
        if not reserved and "cpu" not in _pairs(flags.get("kube-reserved")) and "cpu" not in _pairs(flags.get("system-reserved")):
            # a zero CPU reservation is dropped before the "greater than zero" check can see it
            errors.append("[cpumanager] unable to determine reserved CPU resources for static policy")
        online = set(parse_cpulist(topology["cpus_online"]))
        if not reserved <= online:
            errors.append("reserved-cpus: %s is not a subset of online-cpus %s"
                          % (format_cpulist(reserved), format_cpulist(online)))
    return errors


def _topology_manager_refusals(flags, topology, minor):
    """topologymanager: the policy and scope names, and the NUMA node limit (not read under none)."""
    errors = []
    policy = flags.get("topology-manager-policy", "none")
    if policy not in ("none", "best-effort", "restricted", "single-numa-node"):
        errors.append('unknown policy: "%s"' % policy)
    if flags.get("topology-manager-scope", "container") not in ("container", "pod"):
        errors.append('unknown scope: "%s"' % flags.get("topology-manager-scope"))
    options = _pairs(flags.get("topology-manager-policy-options"))
    if policy != "none" and "max-allowable-numa-nodes" in options and not option_usable("topology", "max-allowable-numa-nodes", minor, flags):
        return errors   # refused as an option (_policy_option_refusals): the kubelet stops there
    if policy != "none":
        limit = _max_numa_nodes(options, errors)
        if limit is not None and len(topology["numa_nodes"]) > limit:
            errors.append("unsupported on machines with more than %v NUMA Nodes".replace("%v", str(limit)))
    return errors


def _eviction_refusals(flags, topology, minor):
    """eviction-hard: an absolute threshold of 0 is refused."""
    errors = []
    for signal, threshold in sorted(_pairs(flags.get("eviction-hard"), "<").items()):
        try:
            zero = not threshold.endswith("%") and parse_bytes(threshold) == 0
        except QuantityError:
            zero = False
        if zero:
            errors.append("eviction threshold %s must be positive: 0" % signal)
    return errors


def _memory_manager_refusals(flags, topology, minor):
    """memorymanager Static: reserved-memory names existing nodes and sums, per kind, to what Node
    Allocatable withholds (kube-reserved + system-reserved + the memory.available hard threshold);
    then some memory must be reserved."""
    if flags.get("memory-manager-policy", "None") != "Static":
        return []
    errors = []
    try:
        reservations = parse_reserved_memory(flags.get("reserved-memory"))
        allocatable_reservation = {"memory": sum(
            parse_bytes(_pairs(flags.get(name)).get("memory", 0)) for name in ("kube-reserved", "system-reserved"))}
        # --eviction-hard replaces the whole default map; without the flag RKE2 (1.32+) passes its
        # own evictionHard, which has no memory.available: nothing is withheld either way.
        mem_eviction = _pairs(flags.get("eviction-hard"), "<").get("memory.available", "0")
        capacity = (topology.get("memory_kb") or sum(n.get("memory_kb", 0) for n in topology["numa_nodes"])) * 1024
        allocatable_reservation["memory"] += eviction_reservation(mem_eviction, capacity)
    except (ValueError, QuantityError) as e:
        errors.append(str(e))
        reservations, allocatable_reservation = {}, {}
    nodes = [n["id"] for n in topology["numa_nodes"]]
    for node in sorted(reservations):
        if node not in nodes:
            errors.append("the reserved memory configuration references a NUMA node %d that does not exist" % node)
    for kind in sorted(set(allocatable_reservation) | set(k for r in reservations.values() for k in r)):
        total = sum(r.get(kind, 0) for r in reservations.values())
        want = allocatable_reservation.get(kind, 0)
        if total != want:
            errors.append('the total amount "%d" of type "%s" is not equal to the value "%d" determined by Node '
                          "Allocatable feature" % (total, kind, want))
    # NewPolicyStatic, after the sum rule passed: some memory must be reserved.
    if not errors and not sum(r.get("memory", 0) for r in reservations.values()):
        errors.append("[memorymanager] you should specify the system reserved memory")
    return errors


# The static policy's options that cannot be used together (cpumanager policy_options.go NewStaticPolicyOptions).
_CPU_OPTION_CONFLICTS = (("full-pcpus-only", "distribute-cpus-across-cores"),
                         ("distribute-cpus-across-numa", "distribute-cpus-across-cores"),
                         ("prefer-align-cpus-by-uncorecache", "distribute-cpus-across-cores"),
                         ("prefer-align-cpus-by-uncorecache", "distribute-cpus-across-numa"))


def _parse_bool_error(value):
    """strconv.ParseBool's error for ``value``, or None (it takes 1, t, T, TRUE, true, True, 0, f, F, FALSE, false,
    False)."""
    if value in ("1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"):
        return None
    return "strconv.ParseBool: parsing %s: invalid syntax" % _go_quote(value)


def _policy_option_refusals(flags, topology, minor):
    """A feature gate the node's kubelet does not have, and the policy options it does not know, has behind a gate
    that is off (the minor's defaults and the node's --feature-gates), or cannot parse (cpumanager
    NewStaticPolicyOptions - read by the static policy only - and topologymanager NewPolicyOptions, read by NewManager
    unless the policy is none)."""
    gates = feature_gates(flags, minor)
    errors = gate_refusals(flags, minor)
    kinds = (("cpu", "cpu-manager-policy-options"), ("topology", "topology-manager-policy-options"))
    for kind, flag in kinds:
        if kind == "cpu" and flags.get("cpu-manager-policy", "none") != "static":
            continue
        if kind == "topology" and flags.get("topology-manager-policy", "none") == "none":
            continue   # NewManager returns the fake manager before it reads the options
        options = _pairs(flags.get(flag))
        accepted = {}
        for option in sorted(options):
            error = option_refusal(kind, option, minor, gates)
            if error is None and option != "max-allowable-numa-nodes":   # an integer: _max_numa_nodes reads it
                parse = _parse_bool_error(options[option])
                error = parse and "bad value for option %s: %s" % (_go_quote(option), parse)
            if error:
                errors.append(error)
            else:
                accepted[option] = options[option]
        if kind == "cpu" and not errors:   # NewStaticPolicyOptions returns at its first error, before the pairs
            on = set(o for o, v in accepted.items() if v.lower() in ("1", "t", "true"))
            errors += ["static policy options %s and %s can not be used at the same time" % pair
                       for pair in _CPU_OPTION_CONFLICTS if set(pair) <= on]
    return errors


# The kubelet's start-up checks, in the order it reports them: each takes the parsed flags, the topology and the
# node's minor (KUBELET_MINORS) and returns the kubelet's own error strings.
KUBELET_RULES = (_cpu_manager_refusals, _policy_option_refusals, _topology_manager_refusals, _eviction_refusals,
                 _memory_manager_refusals)


def kubelet_refusals(kubelet_args, topology, minor=DEFAULT_MINOR):
    """What the kubelet of ``minor`` refuses at start, in its own words."""
    flags = parse_kubelet_args(kubelet_args)
    return [error for rule in KUBELET_RULES for error in rule(flags, topology, tuple(minor))]


def _isolation_refusals(kernel_args, reserved, online):
    """The kernel ignores a nohz_full or rcu_nocbs that differs from isolcpus ("Housekeeping:
    nohz_full= must match isolcpus="); IRQs go to the kubelet's reserved-cpus; isolated and
    reserved CPUs split the online ones."""
    isolcpus = kernel_arg_value(kernel_args, "isolcpus")
    if isolcpus is None:
        return []
    errors = []
    isolated = set(parse_cpulist(split_isolcpus(isolcpus)[1]))
    for name in ("nohz_full", "rcu_nocbs"):
        value = kernel_arg_value(kernel_args, name)
        if value is None or set(parse_cpulist(value)) != isolated:
            errors.append("Housekeeping: %s= must match isolcpus=" % name)
    irq = kernel_arg_value(kernel_args, "irqaffinity")
    if irq is None or set(parse_cpulist(irq)) != reserved:
        errors.append("irqaffinity=%s is not reserved-cpus=%s" % (irq, format_cpulist(reserved)))
    if isolated & reserved or (isolated | reserved) != online:
        errors.append("isolcpus=%s and reserved-cpus=%s do not split the online CPUs %s"
                      % (format_cpulist(isolated), format_cpulist(reserved), format_cpulist(online)))
    return errors


def _boot_cpu_refusals(kernel_args, reserved, online):
    """tick_nohz_init clears the boot CPU from nohz_full ("NO_HZ: Clearing 0 from nohz_full
    range for timekeeping")."""
    nohz = kernel_arg_value(kernel_args, "nohz_full")
    if nohz and 0 in online and 0 in parse_cpulist(nohz):
        return ["NO_HZ: Clearing 0 from nohz_full range for timekeeping"]
    return []


KERNEL_RULES = (_isolation_refusals, _boot_cpu_refusals)


def kernel_refusals(kernel_args, kubelet_args, topology):
    """Where the kernel args do not do what the plan says (KERNEL_RULES)."""
    online = set(parse_cpulist(topology["cpus_online"]))
    reserved, dummy = _reserved_cpus(parse_kubelet_args(kubelet_args))
    return [error for rule in KERNEL_RULES for error in rule(kernel_args, reserved, online)]
