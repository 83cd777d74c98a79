#!/bin/sh
""":"
exec python3 "$0" "$@"
":"""
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
#
# Stand-in for the few kubectl commands the collection runs against its own
# nodes: cordon, uncordon, drain, get node (json, jsonpath, name, table), wait
# --for=condition=Ready. The cluster is a folder: one file per Node,
# <state dir>/nodes/<name>.json, written by the rke2 stand-in (Ready) and by
# this one (spec.unschedulable, evictions); a lock file per node keeps the two
# from overwriting each other. Every call is appended to a JSON-lines log so
# tests can assert the order of calls across hosts.
#
# Environment: KUBECTL_STANDIN_STATE_DIR (default /var/lib/rke2-standin, the
# rke2 stand-in's RKE2_STANDIN_STATE_DIR), KUBECTL_STANDIN_LOG (default
# <state dir>/kubectl.log), KUBECTL_STANDIN_POLL_SECONDS (wait's poll, 0.2).
#
# The first lines make the file both a shell script and Python (see the rke2
# stand-in). Standard library only; no import of the collection.

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
import re
import signal
import socket
import sys
import time

DEFAULT_STATE_DIR = "/var/lib/rke2-standin"
VERSION = "v1.33.1+rke2r1"


class KubectlError(Exception):
    """Printed to stderr as is; exit code 1."""


def state_dir():
    return os.environ.get("KUBECTL_STANDIN_STATE_DIR") or DEFAULT_STATE_DIR


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@contextlib.contextmanager
def locked_node(name, create=False):
    """Read-modify-write nodes/<name>.json under the lock the rke2 stand-in uses too."""
    directory = os.path.join(state_dir(), "nodes")
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
            if node is None and not create:
                raise KubectlError('Error from server (NotFound): nodes "%s" not found' % name)
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


def read_node(name):
    with locked_node(name) as box:
        return box["node"]


def list_nodes():
    directory = os.path.join(state_dir(), "nodes")
    try:
        names = sorted(n[:-5] for n in os.listdir(directory) if n.endswith(".json") and not n.startswith("."))
    except OSError:
        names = []
    nodes = []
    for name in names:
        with contextlib.suppress(KubectlError):
            nodes.append(read_node(name))
    return nodes


def ready_status(node, now=None):
    """The Ready condition's status: True while the kubelet posts Ready; after it stops, True for
    staleReadySeconds more (the node controller's grace period), then Unknown."""
    if node.get("ready"):
        return "True"
    since, grace = node.get("notReadySince"), float(node.get("staleReadySeconds") or 0)
    if since is not None and grace > 0 and (now or time.time()) - float(since) < grace:
        return "True"
    return "Unknown"


def node_object(node):
    """The Node as the API server returns it (the fields the collection can look at)."""
    status = ready_status(node)
    condition = {"type": "Ready", "status": status, "lastHeartbeatTime": node.get("lastHeartbeatTime"),
                 "lastTransitionTime": node.get("lastTransitionTime")}
    if status == "True":
        condition.update(reason="KubeletReady", message="kubelet is posting ready status")
    else:
        condition.update(reason="NodeStatusUnknown", message="Kubelet stopped posting node status.")
    spec = {"podCIDR": "10.42.0.0/24"}
    taints = list(node.get("taints") or [])
    if node.get("unschedulable"):
        spec["unschedulable"] = True
        taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": node.get("cordonedAt")})
    if status == "Unknown":
        taints += [{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"},
                   {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]
    if taints:
        spec["taints"] = taints
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node["name"], "labels": node.get("labels") or {}, "creationTimestamp": node.get("created")},
        "spec": spec,
        "status": {"conditions": [condition], "nodeInfo": {"kubeletVersion": node.get("kubeletVersion", VERSION)}},
    }


# ---------------------------------------------------------------- jsonpath (the subset kubectl users write)

_SEGMENT = re.compile(
    r"""\.\.?([A-Za-z0-9_\-/]+)"""  # .name
    r"""|\[(\d+|\*)\]"""  # [0] [*]
    r"""|\['([^']*)'\]"""  # ['name']
    r"""|\[\?\(@\.([A-Za-z0-9_.\-]+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|([^)\s]+))\)\]"""  # [?(@.type=="Ready")]
    r"""|\.(\*)""")  # .*


def _walk(values, expr):
    pos = 0
    expr = expr.strip()
    if expr.startswith("$"):
        expr = expr[1:]
    if expr in ("", "."):
        return values
    while pos < len(expr):
        match = _SEGMENT.match(expr, pos)
        if not match:
            raise KubectlError("error: error parsing jsonpath {%s}, unrecognized character in action: %s" % (expr, expr[pos:]))
        pos = match.end()
        key, index, quoted, fkey, op, fval1, fval2, fval3, star = match.groups()
        out = []
        for value in values:
            if key is not None or quoted is not None:
                name = key if key is not None else quoted
                if isinstance(value, dict) and name in value:
                    out.append(value[name])
            elif index is not None:
                if isinstance(value, list):
                    if index == "*":
                        out.extend(value)
                    elif int(index) < len(value):
                        out.append(value[int(index)])
            elif star is not None:
                out.extend(value.values() if isinstance(value, dict) else value if isinstance(value, list) else [])
            else:
                wanted = next(v for v in (fval1, fval2, fval3) if v is not None)
                for item in value if isinstance(value, list) else []:
                    current = item
                    for part in fkey.split("."):
                        current = current.get(part) if isinstance(current, dict) else None
                    if (str(current) == wanted) == (op == "=="):
                        out.append(item)
        values = out
    return values


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return "" if value is None else str(value)


def jsonpath(template, obj):
    """Render a kubectl jsonpath template: literal text and {expr} blocks, matches joined with a space."""
    out = []
    pos = 0
    for match in re.finditer(r"\{([^{}]*)\}", template):
        out.append(template[pos:match.start()])
        out.append(" ".join(_text(v) for v in _walk([obj], match.group(1))))
        pos = match.end()
    out.append(template[pos:])
    return "".join(out)


# ---------------------------------------------------------------- commands

def parse_duration(text):
    """A Go duration: 30s, 2m, 1m30s, 500ms, 1h; a bare number is seconds."""
    if re.fullmatch(r"-?\d+(\.\d+)?", text):
        return float(text)
    units = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ns|us|ms|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text.lstrip("-"):
        raise KubectlError('error: invalid argument "%s" for "--timeout" flag: time: invalid duration "%s"' % (text, text))
    total = sum(float(n) * units[u] for n, u in parts)
    return -total if text.startswith("-") else total


GLOBAL_VALUE_FLAGS = ("--kubeconfig", "--context", "--cluster", "--user", "-n", "--namespace", "--request-timeout", "-s", "--server")


def parse_args(argv):
    """Split argv into positionals and options ({name: value}); global connection flags are accepted and ignored."""
    positional, options = [], {}
    items = list(argv)
    while items:
        item = items.pop(0)
        if item == "--":
            positional.extend(items)
            break
        if item.startswith("--"):
            name, sep, value = item.partition("=")
            if not sep and name in GLOBAL_VALUE_FLAGS + ("--output", "--for", "--timeout", "--grace-period", "--pod-selector",
                                                         "--selector", "--skip-wait-for-delete-timeout", "--chunk-size"):
                if not items:
                    raise KubectlError("error: flag needs an argument: %s" % name)
                value = items.pop(0)
            elif not sep:
                value = "true"
            options[name] = value
        elif item.startswith("-") and len(item) > 1:
            name, rest = item[:2], item[2:]
            if rest.startswith("="):
                rest = rest[1:]
            if name in ("-o", "-n", "-s", "-l") and not rest:
                if not items:
                    raise KubectlError("error: flag needs an argument: '%s' in %s" % (name[1], name))
                rest = items.pop(0)
            options[{"-o": "--output", "-n": "--namespace", "-s": "--server", "-l": "--selector"}.get(name, name)] = rest or "true"
        else:
            positional.append(item)
    return positional, options


def _node_name(positional, verb):
    names = []
    for item in positional:
        if "/" in item:
            kind, dummy, name = item.partition("/")
            if kind not in ("node", "nodes", "no"):
                raise KubectlError('error: the server doesn\'t have a resource type "%s"' % kind)
            names.append(name)
        elif item not in ("node", "nodes", "no"):
            names.append(item)
    if len(names) != 1:
        raise KubectlError("error: %s needs exactly one node name (stand-in)" % verb)
    return names[0]


def cmd_cordon(positional, options, unschedulable):
    name = _node_name(positional, "cordon" if unschedulable else "uncordon")
    with locked_node(name) as box:
        node = box["node"]
        if bool(node.get("unschedulable")) == unschedulable:
            print("node/%s already %s" % (name, "cordoned" if unschedulable else "uncordoned"))
            return 0
        node["unschedulable"] = unschedulable
        node["cordonedAt"] = _now() if unschedulable else None
    print("node/%s %s" % (name, "cordoned" if unschedulable else "uncordoned"))
    return 0


DRAIN_FLAGS = ("--ignore-daemonsets", "--delete-emptydir-data", "--delete-local-data", "--force", "--timeout", "--grace-period",
               "--disable-eviction", "--skip-wait-for-delete-timeout", "--pod-selector", "--selector", "--chunk-size", "--dry-run")


def _flag(options, name):
    return str(options.get(name, "false")).lower() in ("true", "1", "")


def cmd_drain(positional, options):
    for name in options:
        if name.startswith("--") and name not in DRAIN_FLAGS + GLOBAL_VALUE_FLAGS + ("--output",):
            raise KubectlError("error: unknown flag: %s\nSee 'kubectl drain --help' for usage." % name)
    if "--timeout" in options:
        parse_duration(options["--timeout"])
    name = _node_name(positional, "drain")
    with locked_node(name) as box:
        node = box["node"]
        if node.get("unschedulable"):
            print("node/%s already cordoned" % name)
        else:
            node["unschedulable"] = True
            node["cordonedAt"] = _now()
            print("node/%s cordoned" % name)
    # The lock is released between cordon and eviction, as kubectl's are two API calls.
    with locked_node(name) as box:
        node = box["node"]
        pods = list(node.get("pods") or [])
        daemonset = ["%s/%s" % (p["namespace"], p["name"]) for p in pods if p.get("owner") == "DaemonSet"]
        problems = []
        if daemonset and not _flag(options, "--ignore-daemonsets"):
            problems.append("cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): " + ", ".join(daemonset))
        movable = [p for p in pods if p.get("owner") != "DaemonSet" and not p.get("mirror")]
        local = ["%s/%s" % (p["namespace"], p["name"]) for p in movable if p.get("emptyDir")]
        if local and not (_flag(options, "--delete-emptydir-data") or _flag(options, "--delete-local-data")):
            problems.append("cannot delete Pods with local storage (use --delete-emptydir-data to override): " + ", ".join(local))
        bare = ["%s/%s" % (p["namespace"], p["name"]) for p in movable if not p.get("owner")]
        if bare and not _flag(options, "--force"):
            problems.append("cannot delete Pods that declare no controller (use --force to override): " + ", ".join(bare))
        if problems:
            raise KubectlError('error: unable to drain node "%s" due to error: %s, continuing command...\n'
                               "There are pending nodes to be drained:\n %s\n%s" % (name, problems[0], name, "\n".join(problems)))
        if daemonset:
            print("Warning: ignoring DaemonSet-managed Pods: " + ", ".join(daemonset))
        for pod in movable:
            print("evicting pod %s/%s" % (pod["namespace"], pod["name"]))
        for pod in movable:
            print("pod/%s evicted" % pod["name"])
        node["pods"] = [p for p in pods if p not in movable]
        node.setdefault("evictions", []).append({"time": _now(), "pods": ["%s/%s" % (p["namespace"], p["name"]) for p in movable]})
        node["drainedAt"] = _now()
    print("node/%s drained" % name)
    return 0


def _print_table(nodes):
    rows = [("NAME", "STATUS", "ROLES", "AGE", "VERSION")]
    for node in nodes:
        status = {"True": "Ready", "False": "NotReady", "Unknown": "NotReady"}[ready_status(node)]
        if node.get("unschedulable"):
            status += ",SchedulingDisabled"
        rows.append((node["name"], status, "<none>", "1d", node.get("kubeletVersion", VERSION)))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for row in rows:
        print("   ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())


def cmd_get(positional, options):
    if not positional or positional[0].split("/")[0] not in ("node", "nodes", "no"):
        raise KubectlError('error: the server doesn\'t have a resource type "%s" (stand-in: nodes only)' % (positional[0] if positional else ""))
    names = [p.partition("/")[2] for p in positional if "/" in p] + positional[1:]
    output = options.get("--output", "")
    if names:
        objects = [read_node(n) for n in names]
    else:
        objects = list_nodes()
    if output == "json":
        objs = [node_object(n) for n in objects]
        doc = objs[0] if len(names) == 1 else {"apiVersion": "v1", "kind": "List", "items": objs, "metadata": {"resourceVersion": ""}}
        print(json.dumps(doc, indent=4))
    elif output.startswith("jsonpath="):
        template = output[len("jsonpath="):]
        if len(template) >= 2 and template[0] == template[-1] and template[0] in "'\"":
            template = template[1:-1]
        objs = [node_object(n) for n in objects]
        doc = objs[0] if len(names) == 1 else {"apiVersion": "v1", "kind": "List", "items": objs}
        sys.stdout.write(jsonpath(template, doc))
    elif output == "name":
        for node in objects:
            print("node/" + node["name"])
    elif output in ("", "wide"):
        if not objects:
            sys.stderr.write("No resources found\n")
            return 0
        _print_table(objects)
    else:
        raise KubectlError('error: unable to match a printer suitable for the output format "%s" (stand-in)' % output)
    return 0


def cmd_wait(positional, options):
    condition = options.get("--for", "")
    match = re.fullmatch(r"condition=([A-Za-z]+)(?:=(\w+))?", condition)
    if not match:
        raise KubectlError("error: unrecognized condition: %s (stand-in: condition=Ready[=value] only)" % condition)
    kind, wanted = match.group(1), (match.group(2) or "True").lower()
    if kind != "Ready":
        raise KubectlError("error: the stand-in knows the Ready condition only, not %s" % kind)
    name = _node_name(positional, "wait")
    timeout = parse_duration(options.get("--timeout", "30s"))
    poll = float(os.environ.get("KUBECTL_STANDIN_POLL_SECONDS") or 0.2)
    deadline = time.time() + (timeout if timeout >= 0 else 7 * 86400)
    while True:
        node = read_node(name)
        if ready_status(node).lower() == wanted:
            print("node/%s condition met" % name)
            return 0
        if time.time() >= deadline:
            raise KubectlError("error: timed out waiting for the condition on nodes/%s" % name)
        time.sleep(min(poll, max(0.0, deadline - time.time())))


def cmd_version(options):
    if options.get("--client", "false") == "true" or "--client" in options:
        print("Client Version: %s\nKustomize Version: v5.6.0" % VERSION)
    else:
        print("Client Version: %s\nKustomize Version: v5.6.0\nServer Version: %s" % (VERSION, VERSION))
    return 0


def run(argv):
    positional, options = parse_args(argv)
    kubeconfig = options.get("--kubeconfig")
    if kubeconfig and not os.path.exists(kubeconfig):
        # client-go's loader: an explicit kubeconfig that does not exist is an error.
        raise KubectlError("error: stat %s: no such file or directory" % kubeconfig)
    if not positional:
        raise KubectlError("error: the stand-in needs a command: cordon, uncordon, drain, get, wait, version")
    verb, rest = positional[0], positional[1:]
    if verb == "cordon":
        return cmd_cordon(rest, options, True)
    if verb == "uncordon":
        return cmd_cordon(rest, options, False)
    if verb == "drain":
        return cmd_drain(rest, options)
    if verb == "get":
        return cmd_get(rest, options)
    if verb == "wait":
        return cmd_wait(rest, options)
    if verb == "version":
        return cmd_version(options)
    raise KubectlError('error: unknown command "%s" for "kubectl" (stand-in)' % verb)


def record(entry):
    path = os.environ.get("KUBECTL_STANDIN_LOG") or os.path.join(state_dir(), "kubectl.log")
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(json.dumps(entry, sort_keys=True) + "\n")
        fcntl.flock(handle, fcntl.LOCK_UN)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    entry = {"time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds"), "argv": argv,
             "host": socket.gethostname(), "pid": os.getpid()}

    def interrupted(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, interrupted)
    code = 1
    try:
        code = run(argv)
    except KubectlError as exc:
        sys.stdout.flush()
        sys.stderr.write(str(exc) + "\n")
        code = 1
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        entry["rc"] = code
        entry["end"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")
        record(entry)
    return code


if __name__ == "__main__":
    sys.exit(main())
