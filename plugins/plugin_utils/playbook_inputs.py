# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The playbooks' inputs, checked before their first cluster call and their first write.

Every value from an inventory or ``-e`` is hostile until it passes here: the
names that reach kubectl's argv are names (kube_names), the numbers are
bounded, and a value that would widen a run's reach is refused (a serial of 0
is "every host at once" to Ansible, a drain timeout of 0 "forever" to
kubectl, a server group that does not exist would silently run kubectl on
the controller). ``input_errors`` returns every problem at once, each naming
the variable and its value, so that one run tells the operator all there is
to fix.

A variable that is not set is not checked here: its role's default is.
"""

from __future__ import annotations

import collections
import difflib
import functools
import os
import re

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.kube_names import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_selector_errors,
    qualified_name_errors,
)
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import kube_credential, rbac
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.artifacts import is_artifact
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import roll_lease
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import specs
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.values import as_boolean, as_integer, as_percent, is_boolean, show
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.window import WindowError, parse_iso8601

# The bounds and choices of the variables are their argument specs' (plugin_utils/specs.py): long enough for any
# real fleet, short enough that a typo does not hold a node for a day.
PLAYBOOKS = ("check", "rolling", "labels", "prove", "plan", "access")
# A host's report and plan files are <dir>/<host>.json (and <host>.config.yaml) beside the fleet's own files.
_FILE_STEM = re.compile(r"[A-Za-z0-9_][-A-Za-z0-9_.@]*")
RESERVED_STEMS = ("fleet",)
# A command kubectl may be given as: an absolute path, or a name looked up on PATH.
_USER = re.compile(r"[a-z_][a-z0-9_-]{0,31}")   # useradd's NAME_REGEX, without the trailing $
_COMMAND = re.compile(r"/[^\x00]*|[A-Za-z0-9_.+][-A-Za-z0-9_.+]*")


def _bounded(name, value, unit, none_ok=False, none_means=""):
    """The variable's value against its spec's ``min`` and ``max``."""
    if value is None and none_ok:
        return []
    low, high = specs.bounds(name)
    number = as_integer(value)
    if number is None or not low <= number <= high:
        return ["%s %s must be an integer from %d to %d%s%s" % (
            name, show(value), low, high, unit, (" (or null: %s)" % none_means) if none_ok else "")]
    return []


def _named(name, value, errors, what):
    return ["%s %s is not %s: %s" % (name, show(value), what, "; ".join(errors))] if errors else []


def serial_errors(value):
    """Ansible's ``serial``: an int >= 1, a percentage 1%-100%, or a list of those (the batch sizes in turn)."""
    items = value if isinstance(value, list) else [value]

    def fits(item):
        number, percent = as_integer(item), as_percent(item)
        return number >= 1 if number is not None else percent is not None and 1 <= percent <= 100

    if not items or not all(fits(item) for item in items):
        return ["rke2_numa_serial %s must be a number of nodes >= 1 or a percentage from 1%% to 100%% (or a list of those); "
                "0 or less would roll every node at once" % show(value)]
    return []


def window_errors(value, now, rolling):
    """The window's end: ISO 8601 with an offset; for a roll, not already past."""
    if value in (None, ""):
        return []
    try:
        end = parse_iso8601(value)
    except WindowError as e:
        return [str(e)]
    if rolling and end <= now:
        return ["rke2_numa_window_end %s ended %d min ago: no node may start; set the end of this run's window"
                % (value, (now - end) // 60)]
    return []


def access_errors(inputs):
    """access.yml's own inputs: where the scoped kubeconfig goes (named by the operator, never the admin's), how
    long its token lives (bounded: never forever), the identity's and the probe's namespaces."""
    errors = []
    get = inputs.get
    admin = get("rke2_numa_admin_kubeconfig", rbac.ADMIN_KUBECONFIG)
    if not isinstance(admin, str) or not admin.startswith("/") or "\x00" in admin:
        errors.append("rke2_numa_admin_kubeconfig %s must be an absolute path" % show(admin))
    target = get("rke2_numa_access_kubeconfig")
    if target in (None, ""):
        errors.append("rke2_numa_access_kubeconfig is not set: name the file the scoped kubeconfig is written to "
                      "(e.g. -e rke2_numa_access_kubeconfig=/etc/rancher/rke2/rke2-numa.yaml)")
    elif not isinstance(target, str) or not target.startswith("/") or target.endswith("/") or "\x00" in target or "\n" in target:
        errors.append("rke2_numa_access_kubeconfig %s must be the absolute path of a file" % show(target))
    elif isinstance(admin, str) and os.path.normpath(target) in (os.path.normpath(admin), rbac.ADMIN_KUBECONFIG):
        errors.append("rke2_numa_access_kubeconfig %s is the admin kubeconfig: it would be overwritten; name another file" % show(target))
    owner = get("rke2_numa_access_kubeconfig_owner", "root")
    if not (isinstance(owner, str) and _USER.fullmatch(owner)):
        errors.append("rke2_numa_access_kubeconfig_owner %s must be a user name (lowercase letters, digits, '_' or '-', at most 32)"
                      % show(owner))
    server = get("rke2_numa_access_server", "")
    if server not in (None, "") and rbac.server_url_refusal(server):
        errors.append(rbac.server_url_refusal(server))
    ca = get("rke2_numa_access_ca", "")
    if ca not in (None, "") and not (isinstance(ca, str) and ca.startswith("/") and not ca.endswith("/") and "\x00" not in ca
                                     and "\n" not in ca):
        errors.append("rke2_numa_access_ca %s must be the absolute path of a PEM file, or empty (the admin kubeconfig's CA)" % show(ca))
    if "rke2_numa_access_token_duration" in inputs:
        dummy, error = rbac.token_seconds(get("rke2_numa_access_token_duration"))
        if error:
            errors.append(error)
    if "rke2_numa_access_namespace" in inputs:
        errors += _named("rke2_numa_access_namespace", get("rke2_numa_access_namespace"),
                         dns1123_label_errors(get("rke2_numa_access_namespace")), "a namespace")
    namespace, probe = get("rke2_numa_access_namespace", rbac.IDENTITY_NAMESPACE), get("rke2_numa_probe_namespace", rbac.PROBE_NAMESPACE)
    if not dns1123_label_errors(namespace) and not dns1123_label_errors(probe):
        errors += [e for e in rbac.manifest_errors(namespace, probe, "") if "holds other pods" in e or "must differ" in e]
    return errors


def server_group_errors(group, groups, kubectl_here=False):
    """rke2_numa_server_group: empty (kubectl on localhost), or a group of the inventory with a host - but for
    ``kubectl_here`` (AWX's credential: kubectl on the controller), where a slice of a sliced job may hold none of it
    (AWX gives a slice only its own hosts) and the group only names the servers to leave out."""
    if group in (None, ""):
        return []
    if not isinstance(group, str) or (group not in groups and not kubectl_here):
        return ["rke2_numa_server_group %s is not a group of the inventory (its groups: %s); kubectl would run "
                "on the controller instead" % (show(group), ", ".join(sorted(g for g in groups if g != "ungrouped")))]
    if not groups.get(group) and not kubectl_here:
        return ["rke2_numa_server_group %s has no host: no server to run kubectl on" % show(group)]
    return []


# The group a run puts the servers it leaves out in (playbooks/plays/workers.yml); run_pattern excludes it.
SERVERS_LEFT_OUT = "rke2_numa_servers_left_out"
# What each playbook that acts on nodes would do to a server it was given.
NODE_PLAYBOOKS = {"plan": "plan", "check": "check", "rolling": "roll", "apply": "apply the plan to", "prove": "probe",
                  "labels": "label"}


def no_hosts_error(pattern, groups, limit=None):
    """Why a run whose pattern (rke2_numa_hosts, or its default all) and --limit match no host must not pass
    (Ansible only warns "Could not match supplied host pattern" and skips the plays: exit code 0, an AWX job shown
    green having done nothing); the inventory's groups named, for the typo's sake."""
    names = sorted(g for g in groups if g not in ("all", "ungrouped") and g != SERVERS_LEFT_OUT and groups[g])
    where = "its groups: %s" % ", ".join(names) if names else "it has no group with a host"
    if limit not in (None, "") and any(groups.get("all") or []):
        return ("rke2_numa_hosts %s and --limit %s share no host of the inventory (%s): nothing to do, and a run that did "
                "nothing is not a success" % (show(pattern), show(limit), where))
    if not any(groups.get("all") or []):
        return "the inventory has no host: give it with -i (a file, a folder or a dynamic inventory)"
    return ("rke2_numa_hosts %s matches no host of the inventory (%s): name a group, a host or a pattern of it"
            % (show(pattern), where))


def run_servers(playbook, groups, server_group, hosts, explicit, include, pattern="all", limit=None, kubectl_here=False):
    """The RKE2 servers of a run of ``playbook`` (one of NODE_PLAYBOOKS): they run kubectl, the playbooks act on the
    GPU workers. Returns {left_out: the servers the run leaves out, refused: why the run must not start ('' when it
    may)}.

    ``hosts``: the hosts rke2_numa_hosts (or its default, all) matches; ``explicit``: whether rke2_numa_hosts was set;
    ``include``: rke2_numa_include_servers; ``pattern``, ``limit``: rke2_numa_hosts (or all) and --limit, named when
    they match no host (refused: a run that does nothing is not a success). Left to its default a run takes every host but the server group's; a
    pattern the operator wrote that takes a server is refused unless ``include`` says the servers are meant too.
    ``kubectl_here``: kubectl runs on the controller (AWX's credential): the server group may have no host in the run.
    """
    if playbook not in NODE_PLAYBOOKS:
        raise ValueError("unknown playbook %r" % (playbook,))
    if not hosts:
        return {"left_out": [], "refused": no_hosts_error(pattern, groups, limit)}
    include_value = as_boolean(include)
    errors = server_group_errors(server_group, groups, kubectl_here)
    if include_value is None:
        errors.append("rke2_numa_include_servers %s must be true or false" % show(include))
    if errors:
        return {"left_out": [], "refused": "; ".join(errors)}
    servers = [h for h in (groups.get(server_group) or []) if h in hosts] if server_group else []
    if include_value or not servers:
        return {"left_out": [], "refused": ""}
    if not explicit:
        return {"left_out": servers, "refused": ""}
    workers = [g for g in sorted(groups) if g not in ("all", "ungrouped", server_group) and groups[g]
               and not set(groups[g]) & set(groups[server_group])]
    return {"left_out": [], "refused": (
        "%s %s an RKE2 server (rke2_numa_server_group %s): %s.yml would %s %s; its hosts are the GPU workers. Name "
        "them (-e rke2_numa_hosts=%s), or add -e rke2_numa_include_servers=true to %s the server%s too"
        % (", ".join(servers), "is" if len(servers) == 1 else "are", server_group, playbook, NODE_PLAYBOOKS[playbook],
           "it" if len(servers) == 1 else "them", workers[0] if workers else "WORKERS", NODE_PLAYBOOKS[playbook],
           "" if len(servers) == 1 else "s"))}


def run_pattern(groups, hosts_pattern):
    """The host pattern of a play that acts on nodes: rke2_numa_hosts as written (else all), without the servers the
    run left out (run_servers; labelled_servers) - a pattern naming no group that does not exist: Ansible warns of
    those."""
    pattern = hosts_pattern if hosts_pattern not in (None, "") else "all"
    return "%s:!%s" % (pattern, SERVERS_LEFT_OUT) if groups.get(SERVERS_LEFT_OUT) else pattern


# The labels RKE2 puts on a server's Node (rke2 pkg/rke2/rke2.go, the server's node labels; k3s
# pkg/daemons/agent: node-role.kubernetes.io/control-plane=true, etcd=true for an etcd member, master=true kept for the
# older tooling) - with any of them the Node is a server, never one of the GPU workers the playbooks act on.
SERVER_ROLE_LABELS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/etcd", "node-role.kubernetes.io/master")


def _nodes(reply):
    """The Nodes of a ``kubectl get nodes[,pods] -o json`` reply (a List, or one Node)."""
    items = reply.get("items") if isinstance(reply, dict) and "items" in reply else [reply]
    return [item for item in items or [] if isinstance(item, dict) and item.get("kind") in (None, "Node")]


def server_nodes(reply):
    """{Node name: [its server role labels]} of a ``kubectl get nodes[,pods] -o json`` reply (a List, or one Node)."""
    found = {}
    for item in _nodes(reply):
        meta = item.get("metadata") or {}
        roles = [label for label in SERVER_ROLE_LABELS if label in (meta.get("labels") or {})]
        if roles and meta.get("name"):
            found[str(meta["name"])] = roles
    return found


def kubelet_versions(reply):
    """{Node name: its status.nodeInfo.kubeletVersion} of a ``kubectl get nodes[,pods] -o json`` reply (a List, or one
    Node): the kubelet each node runs, which its plan is made for (planner.node_kubelet). A Node without one is left
    out (its host's RKE2 runtime says, or the default)."""
    found = {}
    for item in _nodes(reply):
        name = (item.get("metadata") or {}).get("name")
        version = ((item.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion")
        if name and isinstance(version, str) and version:
            found[str(name)] = version
    return found


def labelled_servers(hosts, node_names, servers, server_group, include):
    """The hosts a run leaves out because their Node says it is an RKE2 server (``servers``: server_nodes), when no
    rke2_numa_server_group says which hosts are (with one, run_servers decides) and rke2_numa_include_servers is not
    true: [{host, why}]. ``node_names``: {host: its Node name}."""
    if server_group not in (None, "") or as_boolean(include):
        return []
    left = []
    for host in hosts:
        roles = servers.get(node_names.get(host) or host)
        if roles:
            left.append({"host": host, "why": "an RKE2 server (its Node has %s), left out: the playbooks act on the GPU "
                                              "workers; -e rke2_numa_include_servers=true takes it too, or name the "
                                              "servers with rke2_numa_server_group" % ", ".join(roles)})
    return left


def fleet_hosts(pattern_hosts, groups, server_group, include, run_hosts, left_out=()):
    """The fleet's hosts whatever --limit said, in the inventory's order: those rke2_numa_hosts (``pattern_hosts``: its
    hosts without --limit) names, but the servers the run leaves out (the server group's unless ``include``:
    rke2_numa_include_servers; ``left_out``: those check.yml left out by their Node's labels), and the run's own
    ``run_hosts``. A run over fewer says it covers a part of the fleet (check.yml, plan.yml)."""
    servers = set() if as_boolean(include) else set((groups or {}).get(server_group) or []) if server_group else set()
    skip = servers | set(str(h) for h in left_out or [])
    out = [h for h in dict.fromkeys(str(h) for h in pattern_hosts or []) if h not in skip]
    have = set(out)
    return out + [h for h in dict.fromkeys(str(h) for h in run_hosts or []) if h not in have]


def _when_set(rule):
    """``rule`` for a variable whose empty value (None or '') means "not set": its role's default."""
    return lambda name, value, ctx: [] if value in (None, "") else rule(name, value, ctx)


def _name_rule(check, what):
    return lambda name, value, ctx: _named(name, value, check(value), what)


def _bounds_rule(unit, none_ok=False, none_means=""):
    """The variable's spec's bounds ("From MIN to MAX." in its description)."""
    return lambda name, value, ctx: _bounded(name, value, unit, none_ok, none_means)


def _choice_rule(name, value, ctx):
    """One of the variable's spec's choices."""
    allowed = specs.choices(name)
    return [] if value in allowed else ["%s %s must be one of %s" % (name, show(value), ", ".join(allowed))]


def _boolean_rule(name, value, ctx):
    return [] if is_boolean(value) else ["%s %s must be true or false" % (name, show(value))]


def _absolute_path_rule(name, value, ctx):
    ok = isinstance(value, str) and value.startswith("/") and "\x00" not in value
    return [] if ok else ["%s %s must be an absolute path" % (name, show(value))]


def _host_name_rule(name, value, ctx):
    if isinstance(value, str) and _FILE_STEM.fullmatch(value) and value not in RESERVED_STEMS:
        return []
    return ["inventory host name %s cannot name its report files (<dir>/<host>.json): use letters, digits, '-', '_', '.' and '@', "
            "not '/' nor a leading '.', and not %s (the fleet's own file); set the machine's address in ansible_host and give "
            "the host another name" % (show(value), ", ".join(RESERVED_STEMS))]


def _kubectl_rule(name, value, ctx):
    ok = isinstance(value, str) and _COMMAND.fullmatch(value)
    return [] if ok else ["%s %s must be an absolute path or a command name" % (name, show(value))]


def _kubeconfig_rule(name, value, ctx):
    """An absolute path on rke2_numa_kubectl_host, or AWX's credential in the controller's environment - where kubectl
    then runs (plugin_utils/kube_credential.py)."""
    if value != kube_credential.FROM_ENV:
        return _absolute_path_rule(name, value, ctx)
    host = ctx.inputs.get("rke2_numa_kubectl_host", "localhost")
    if host == "localhost":
        return []
    return ["%s %s is AWX's Kubernetes credential in the controller's environment: kubectl runs there, so "
            "rke2_numa_kubectl_host must be localhost (or no rke2_numa_server_group), not %s" % (name, show(value), show(host))]


def _kubectl_host_rule(name, value, ctx):
    ok = isinstance(value, str) and (value == "localhost" or value in ctx.hosts)
    return [] if ok else ["%s %s is neither a host of the inventory nor localhost" % (name, show(value))]


def _kured_daemonset_rule(name, value, ctx):
    parts = value.split("/") if isinstance(value, str) else []
    if value in ("", "auto") or (len(parts) == 2 and not dns1123_label_errors(parts[0]) and not dns1123_subdomain_errors(parts[1])):
        return []
    return ["%s %s must be namespace/name of kured's DaemonSet (a namespace and a DaemonSet name), auto (found by its labels, "
            "image or command) or empty: not checked" % (name, show(value))]


def _kured_hold_rule(name, value, ctx):
    return [] if value == "auto" or is_boolean(value) else ["%s %s must be auto, true or false" % (name, show(value))]


def _annotation_keys_rule(name, value, ctx):
    if not isinstance(value, list):
        return ["%s %s must be a list of annotation keys" % (name, show(value))]
    return [e for key in value for e in _named(name + " entry", key, qualified_name_errors(key), "an annotation key")]


def _node_minutes_rule(name, value, ctx):
    try:
        minutes = None if isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        minutes = None
    most = specs.bounds(name)[1]
    if minutes is None or not 0 < minutes <= most:
        return ["%s %s must be a number of minutes above 0 and at most %d" % (name, show(value), most)]
    return []


def _roll_resume_rule(name, value, ctx):
    if ctx.inputs.get("rke2_numa_roll_id") in (None, "") and as_boolean(value):
        return ["rke2_numa_roll_resume is true without rke2_numa_roll_id: name the roll to resume (the refusal of its Lease names it)"]
    return []


def _lease_seconds_rule(name, value, ctx):
    return [] if as_integer(value) == 0 else _bounded(name, value, " s (or 0: computed from the timeouts)")


def _window_minutes_rule(name, value, ctx):
    """A window as a duration: its spec's bounds, and not beside a window's end (which of the two would end the roll?)."""
    errors = _bounded(name, value, " min")
    if not errors and as_integer(value) > 0 and ctx.inputs.get("rke2_numa_window_end") not in (None, ""):
        errors = ["%s %s and rke2_numa_window_end %s are both set: set the window's end or its duration, not both"
                  % (name, show(value), ctx.inputs["rke2_numa_window_end"])]
    return errors


_Context = collections.namedtuple("_Context", "playbook inputs groups hosts now")

# One rule per variable, in the order the refusal lists them: (variable, rule(name, value, context) -> [messages]).
# A rule runs when the variable is given (a variable not given is its role's default). Bounds and choices are read
# from the variable's argument spec (plugin_utils/specs.py); what a spec cannot say (a name kubectl reads, a path, a
# window, a batch size) is said here, once.
RULES = (
    ("inventory_hostname", _host_name_rule),
    ("rke2_numa_node_name", _name_rule(dns1123_subdomain_errors, "a Node name")),
    ("rke2_numa_kubectl", _kubectl_rule),
    ("rke2_numa_kubeconfig", _kubeconfig_rule),
    ("rke2_numa_server_group", lambda name, value, ctx: server_group_errors(
        value, ctx.groups, kubectl_here=ctx.inputs.get("rke2_numa_kubeconfig") == kube_credential.FROM_ENV)),
    ("rke2_numa_kubectl_host", _kubectl_host_rule),
    ("rke2_numa_kured_daemonset", _kured_daemonset_rule),
    ("rke2_numa_kured_hold", _kured_hold_rule),
    ("rke2_numa_foreign_node_annotations", _annotation_keys_rule),
    ("rke2_numa_probe_namespace", _name_rule(dns1123_label_errors, "a namespace")),
    ("rke2_numa_drain_namespaces", lambda name, value, ctx: rbac.drain_namespace_errors(value)),
    ("rke2_numa_drain_pod_selector", lambda name, value, ctx: [] if value == "" else _named(name, value, label_selector_errors(value),
                                                                                            "a label selector")),
    ("rke2_numa_drain_timeout", _bounds_rule(" s (0 would let kubectl drain wait forever)")),
    ("rke2_numa_drain_grace_period", _bounds_rule(" s", none_ok=True, none_means="each pod's own")),
    ("rke2_numa_node_ready_timeout", _bounds_rule(" s")),
    ("rke2_numa_serial", lambda name, value, ctx: serial_errors(value)),
    ("rke2_numa_max_fail_percentage", _bounds_rule(" (%)")),
    ("rke2_numa_node_minutes", _node_minutes_rule),
    ("rke2_numa_window_end", lambda name, value, ctx: window_errors(value, ctx.now, ctx.playbook == "rolling")),
    ("rke2_numa_window_minutes", _window_minutes_rule),
    ("rke2_numa_roll_order", _choice_rule),
    ("rke2_numa_roll_id", _when_set(_name_rule(roll_lease.roll_id_errors, "a roll id"))),
    ("rke2_numa_roll_resume", _roll_resume_rule),
    ("rke2_numa_roll_lease_namespace", _name_rule(dns1123_label_errors, "a namespace")),
    ("rke2_numa_roll_lease_name", _name_rule(dns1123_subdomain_errors, "a Lease name")),
    ("rke2_numa_roll_lock_wait", _bounds_rule(" s")),
    ("rke2_numa_roll_lease_seconds", _lease_seconds_rule),
    ("rke2_numa_max_unavailable", _when_set(lambda name, value, ctx: roll_lease.max_unavailable_errors(value))),
    ("rke2_numa_labels_via", _choice_rule),
    ("rke2_numa_labels_timeout", _bounds_rule(" s")),
    ("rke2_numa_nfd_features_dir", _absolute_path_rule),
    ("rke2_numa_reboot_ok", _boolean_rule),
    ("rke2_numa_audit_pods", _boolean_rule),
    ("rke2_numa_prove", _boolean_rule),
    ("rke2_numa_allow_pending_pods", _boolean_rule),
)
# access.yml's own variables, checked together (access_errors: one depends on another).
ACCESS_INPUTS = ("rke2_numa_admin_kubeconfig", "rke2_numa_access_kubeconfig", "rke2_numa_access_token_duration",
                 "rke2_numa_access_kubeconfig_owner", "rke2_numa_access_server", "rke2_numa_access_ca", "rke2_numa_access_namespace")
# Every variable playbook_inputs reads (its module's documented inputs are generated from this list and the specs).
INPUTS = tuple(name for name, dummy in RULES) + ACCESS_INPUTS


def input_errors(playbook, inputs, groups, hosts, now):
    """Every problem with the inputs of ``playbook`` (one of PLAYBOOKS), as messages; [] when all are valid.

    ``inputs``: {variable: value} of the variables set for this host; ``groups``: the inventory's groups
    ({name: [hosts]}); ``hosts``: the inventory's hosts; ``now``: epoch seconds.
    """
    if playbook not in PLAYBOOKS:
        raise ValueError("unknown playbook %r" % (playbook,))
    ctx = _Context(playbook, inputs, groups, hosts, now)
    errors = [e for name, rule in RULES if name in inputs for e in rule(name, inputs[name], ctx)]
    if playbook == "access":
        errors += access_errors(inputs)
    return errors


def role_errors(role, values):
    """Every problem of ``values`` ({variable: value} of one host) against ``role``'s main argument spec, as
    ansible-core's role validation words them (``validate_argument_spec``: a role's tasks never start on them); the
    variables not given take the spec's defaults (the role's defaults/main.yml is generated from them); other
    variables are not the role's and not looked at."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator  # pylint: disable=import-outside-toplevel

    spec = role_spec(role)
    mine = dict((name, value) for name, value in values.items() if name in spec)
    return list(ArgumentSpecValidator(spec).validate(mine, validate_role_argument_spec=True).error_messages)


@functools.lru_cache(maxsize=None)
def role_spec(role):
    """{variable: spec} of ``role``'s main entry point, read once."""
    return specs.role_options(role, "main")


# A variable of the collection's name space the collection does not declare: a typo (rke2_numa_hugepage_per_node) would
# otherwise be ignored in silence and the default planned. What rke2_numa_unknown_variables may say.
UNKNOWN_VARIABLES = specs.PREFIX + "unknown_variables"
UNKNOWN_POLICIES = specs.choices(UNKNOWN_VARIABLES)
_SHOWN_HOSTS = 5


def unknown_variables(names_by_host, policy="refuse"):
    """The variables of the ``rke2_numa_`` name space set for the run's hosts (``names_by_host``: {host: names given by
    the inventory, group/host vars or -e - not the facts a run sets}) that no role of the collection declares
    (plugin_utils/specs.py: the roles' argument specs, the one list of the collection's variables), nor publishes
    for AWX's next workflow node (artifacts.is_artifact).

    Returns {refused: one message ('' when the run may go on), warnings: [a message per variable when ``policy`` is
    warn]}; each message names the variable, the hosts it is set for and the closest declared name."""
    if policy in (None, ""):
        policy = "refuse"
    if policy not in UNKNOWN_POLICIES:
        return {"refused": "%s %s must be one of %s" % (UNKNOWN_VARIABLES, show(policy), ", ".join(UNKNOWN_POLICIES)),
                "warnings": []}
    declared = frozenset(specs.declared())
    hosts_of = {}
    for host in sorted(names_by_host):
        for name in names_by_host[host] or ():
            if isinstance(name, str) and name.startswith(specs.PREFIX) and name not in declared and not is_artifact(name):
                hosts_of.setdefault(name, []).append(host)
    messages = []
    for name in sorted(hosts_of):
        hosts = hosts_of[name]
        shown = ", ".join(hosts[:_SHOWN_HOSTS]) + (" and %d more" % (len(hosts) - _SHOWN_HOSTS) if len(hosts) > _SHOWN_HOSTS else "")
        # compared without the prefix every name shares (it would make any two names look alike)
        cut = len(specs.PREFIX)
        close = difflib.get_close_matches(name[cut:], sorted(d[cut:] for d in declared), n=1, cutoff=0.75)
        messages.append("%s is not a variable of this collection%s (set for %s)" % (
            name, "; did you mean %s%s?" % (specs.PREFIX, close[0]) if close else "", shown))
    if not messages:
        return {"refused": "", "warnings": []}
    if policy == "warn":
        return {"refused": "", "warnings": [m + "; ignored (%s=warn)" % UNKNOWN_VARIABLES for m in messages]}
    return {"refused": "%s. Nothing was read or written: fix the name, or set -e %s=warn to run with it ignored "
                       "(docs/VARIABLES.md)" % ("; ".join(messages), UNKNOWN_VARIABLES), "warnings": []}
