# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report: one self-contained HTML page and a Markdown summary for a whole run.

Pure functions, no I/O; runs on the controller (filter fleet_report). The page
needs no network: CSS, the NUMA maps (inline SVG) and the few lines of script
of the filter box are in the file. Every string a host provides (names,
addresses, warnings, reasons) goes through ``html.escape``.

Each host is an entry ``{host, plan, topology, compliance, pods, labels}``;
only ``host`` is required (a host that failed before its plan has none).
``mode`` is ``plan`` (plan.yml: a planned host is "planned") or ``check``
(check.yml: compliant or not, and why).

The DOM says what the maps show, for people and tests: a NUMA node is a
``div.numa-node`` (``.memory-only`` without CPUs) with ``data-node``; a CPU is
an SVG ``rect.cpu`` with the class of its state (``reserved``, ``isolated``,
``offline``, or ``online`` when there is no plan), grouped by core (``g.core``).
"""

from __future__ import annotations

from html import escape

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.topology_table import cpus_cell, plural, size
from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import parse_cpulist
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import human

MODES = ("plan", "check")
# At most this many hosts are shown open; a bigger fleet starts collapsed (the table comes first).
OPEN_HOSTS = 8
# Markdown: at most this many warning lines (CI job summaries are limited in size); the page has them all.
MARKDOWN_WARNINGS = 100
# The map's geometry, in px: a CPU cell, the gap between a core's threads, between cores, the memory bar.
CELL, GAP, CORE_GAP, BAR = 10, 1, 4, 14
# The narrowest node box (a memory-only node, a node of a few cores), in px: room for its captions.
NODE_WIDTH = 260


class ReportError(Exception):
    """Input the report cannot be made from."""


# ----------------------------------------------------------------- one host, as the report sees it


def _cpus(cpulist):
    return set(parse_cpulist(cpulist or ""))


def host_status(entry, mode):
    """(css class, short text, detail) of a host: planned / compliant / NOT compliant / BLOCKED (the apply chain
    would refuse it) / not planned / not checked."""
    plan, compliance = entry.get("plan"), entry.get("compliance")
    if mode == "check":
        if not compliance:
            return "failed", "not checked", "unreachable, or failed before its compliance was decided"
        if compliance.get("compliant"):
            return "compliant", "compliant", ""
        if compliance.get("blocked"):
            return "blocked", "BLOCKED", "; ".join(compliance["blocked"]) + " - the roll skips it until this is fixed by hand"
        detail = "; ".join(compliance.get("reasons") or [])
        if compliance.get("actions"):
            detail += " -> " + ", ".join(compliance["actions"])
        return "not-compliant", "NOT compliant", detail
    if not plan:
        return "failed", "not planned", "unreachable, or its plan was refused (the play's output says why)"
    return "planned", "planned", ""


def biggest_pod(plan):
    """The NUMA table row of the biggest single-NUMA Guaranteed pod (most GPUs, then CPUs, then memory), or None."""
    rows = [t for t in (plan or {}).get("numa_tables") or [] if t.get("exclusive_cpus")]
    if not rows:
        return None
    return max(rows, key=lambda t: (len(t["gpus"]), t["exclusive_cpus"], t["allocatable_memory_bytes"]))


def pod_text(table):
    """cpu / memory / hugepages / GPUs of a NUMA table row."""
    return "%d / %s / %s / %d" % (table["exclusive_cpus"], size(table["allocatable_memory_bytes"]),
                                  size(table["hugepages_bytes"]), len(table["gpus"]))


def shape_text(fit):
    """vllm-tp4: 2 (nodes 0,1) / vllm-tp4: spans NUMA nodes / vllm-tp4: none."""
    if not fit.get("fits"):
        return "%s: none" % fit["name"]
    if not fit.get("nodes"):
        return "%s: %d (%s)" % (fit["name"], fit.get("copies", 1), fit.get("note") or "spans NUMA nodes")
    return "%s: %d (node%s %s)" % (fit["name"], fit["copies"], "s" if len(fit["nodes"]) > 1 else "",
                                   ",".join(str(n) for n in fit["nodes"]))


def host_warnings(entry):
    """The host's warnings, each once: topology, plan, compliance, and the pod audit's findings."""
    plan, topology = entry.get("plan") or {}, entry.get("topology") or {}
    compliance, pods = entry.get("compliance") or {}, entry.get("pods") or {}
    found = []
    for text in (list(topology.get("warnings") or []) + list(plan.get("warnings") or [])
                 + list(compliance.get("warnings") or [])
                 + ["NOT PINNED: %s" % p for p in pods.get("unpinned") or []]
                 + ["REFUSED: %s" % p for p in pods.get("topology_errors") or []]
                 + ([pods["error"]] if pods.get("error") else [])):
        if isinstance(text, str) and text not in found:
            found.append(text)
    return found


def check_lines(entries):
    """The check play's output, a line per host and finding: ``<host>: compliant, plan <fingerprint>`` or
    ``<host>: NOT compliant: <reasons> -> <actions>`` (``not checked`` for a host that failed before), then
    ``<host>: WARNING: ...`` per compliance warning and the pod audit's ``NOT PINNED:`` and ``REFUSED:`` lines (the
    topology's and the plan's warnings were shown by their own tasks); last, each pod audit error once, with its hosts."""
    lines = []
    for entry in entries:
        host = str(entry["host"])
        status, label, detail = host_status(entry, "check")
        compliance, pods = entry.get("compliance") or {}, entry.get("pods") or {}
        if status == "compliant":
            lines.append("%s: compliant, plan %s" % (host, compliance.get("plan_fingerprint") or ""))
        else:
            lines.append("%s: %s: %s" % (host, label, detail))
        lines += ["%s: WARNING: %s" % (host, w) for w in compliance.get("warnings") or []]
        lines += ["%s: NOT PINNED: %s" % (host, p) for p in pods.get("unpinned") or []]
        lines += ["%s: REFUSED: %s" % (host, p) for p in pods.get("topology_errors") or []]
    # the pod audit's error is the cluster's, not the host's: said once, with the hosts it concerns
    errors = {}
    for entry in entries:
        error = (entry.get("pods") or {}).get("error")
        if error:
            errors.setdefault(error, []).append(str(entry["host"]))
    lines += ["%s (%s)" % (error, ", ".join(hosts)) for error, hosts in errors.items()]
    return lines


def check_fleet(entries):
    """check.yml's fleet summary (fleet.json): the hosts by what the check found, and the pod audit's totals.
    A host without a compliance decision (it failed before) is not checked; blocked hosts are among the not compliant."""
    checked = [e for e in entries if e.get("compliance")]
    names = [str(e["host"]) for e in checked]

    def hosts(test):
        return [str(e["host"]) for e in checked if test(e["compliance"], e.get("pods") or {})]

    return {
        "hosts": len(entries),
        "compliant": hosts(lambda c, p: bool(c.get("compliant"))),
        "not_compliant": hosts(lambda c, p: not c.get("compliant")),
        "blocked": hosts(lambda c, p: bool(c.get("blocked"))),
        "not_checked": [str(e["host"]) for e in entries if str(e["host"]) not in names],
        "reboot": hosts(lambda c, p: "reboot" in (c.get("actions") or [])),
        "unpinned_gpu_pods": [pod for e in checked for pod in (e.get("pods") or {}).get("unpinned") or []],
        "topology_errors": [pod for e in checked for pod in (e.get("pods") or {}).get("topology_errors") or []],
        "pods_not_audited": hosts(lambda c, p: "error" in p),
    }


def check_fleet_line(fleet):
    """The check's last line: counts, the hosts to reconfigure, blocked and not checked, the pod audit's totals."""
    def names(hosts):
        return ", ".join(hosts) or "none"

    line = ("%d of %d compliant; to reconfigure: %s (%d need a reboot); blocked (fix by hand first, never rolled): %s; "
            "not checked (unreachable or failed): %s; GPU pods that cannot be pinned: %d; pods refused with TopologyAffinityError: %d" % (
                len(fleet["compliant"]), fleet["hosts"], names([h for h in fleet["not_compliant"] if h not in fleet["blocked"]]),
                len(fleet["reboot"]), names(fleet["blocked"]), names(fleet["not_checked"]), len(fleet["unpinned_gpu_pods"]),
                len(fleet["topology_errors"])))
    if fleet["pods_not_audited"]:
        line += "; pods not audited on: " + ", ".join(fleet["pods_not_audited"])
    return line


def summarize(entries, mode):
    """Per host the fleet table's row: {host, status, label, detail, fingerprint, pod, shapes, warnings}."""
    if mode not in MODES:
        raise ReportError("mode must be one of %s, got %r" % (", ".join(MODES), mode))
    rows = []
    for entry in entries:
        if not isinstance(entry, dict) or not entry.get("host"):
            raise ReportError("each host entry needs a 'host' name, got %r" % (entry,))
        status, label, detail = host_status(entry, mode)
        plan = entry.get("plan") or {}
        table = biggest_pod(plan)
        rows.append({
            "host": str(entry["host"]),
            "status": status,
            "label": label,
            "detail": detail,
            "fingerprint": plan.get("fingerprint") or (entry.get("compliance") or {}).get("plan_fingerprint") or "",
            "pod": pod_text(table) if table else "",
            "pod_node": table["node"] if table else None,
            "shapes": [shape_text(fit) for fit in plan.get("pod_shapes") or []],
            "warnings": host_warnings(entry),
        })
    return rows


def fleet_counts(rows):
    """{status: number of hosts}, in the order the summary line names them."""
    counts = {}
    for status in ("compliant", "not-compliant", "blocked", "planned", "failed"):
        counts[status] = sum(1 for r in rows if r["status"] == status)
    return counts


def summary_line(rows, mode):
    """5 hosts: 3 compliant, 2 NOT compliant, 0 not checked; warnings on 2."""
    counts = fleet_counts(rows)
    if mode == "check":
        parts = ["%d compliant" % counts["compliant"], "%d NOT compliant" % counts["not-compliant"],
                 "%d blocked" % counts["blocked"], "%d not checked" % counts["failed"]]
    else:
        parts = ["%d planned" % counts["planned"], "%d not planned" % counts["failed"]]
    return "%s: %s; warnings on %s" % (plural(len(rows), "host"), ", ".join(parts),
                                       plural(sum(1 for r in rows if r["warnings"]), "host"))


# ----------------------------------------------------------------- the NUMA map of one host (HTML + SVG)


def node_layout(topology, plan):
    """Per NUMA node: {id, cores (lists of CPUs), memory, reserved, hugepages, gpus, nics, gpu_memory}."""
    tables = dict((t["node"], t) for t in (plan or {}).get("numa_tables") or [])
    devices = topology.get("pci_devices") or []
    cores = [sorted(core) for core in topology.get("cores") or []]
    nodes = []
    for node in topology.get("numa_nodes") or []:
        nid = int(node["id"])
        cpus = _cpus(node.get("cpus"))
        mine = [core for core in cores if set(core) <= cpus]
        placed = set(cpu for core in mine for cpu in core)
        mine += [[cpu] for cpu in sorted(cpus - placed)]  # CPUs of no known core: a core each
        table = tables.get(nid, {})
        nodes.append({
            "id": nid,
            "cores": sorted(mine, key=lambda c: c[0]),
            "memory": table.get("memory_bytes", int(node.get("memory_kb") or 0) * 1024),
            "reserved_memory": table.get("reserved_memory_bytes", 0),
            "hugepages": table.get("hugepages_bytes", 0),
            "table": table,
            "gpus": [d for d in devices if d.get("kind") == "gpu" and d.get("numa_node") == nid],
            "nics": [d for d in devices if d.get("kind") == "nic" and d.get("numa_node") == nid],
            "gpu_memory": node.get("gpu_memory") is True,
        })
    return nodes


def cpu_state(cpu, reserved, planned):
    """The class of an online CPU's cell."""
    if not planned:
        return "online"
    return "reserved" if cpu in reserved else "isolated"


def cores_per_row(count):
    """Cores on one row of a node's grid: rows about 3.5 times as wide as the grid is tall, evenly
    filled (56 cores: 4 rows of 14; 24: 3 of 8; 72: 5 of 15)."""
    width = 1
    while width * width < count * 3.5:
        width += 1
    rows = (count + width - 1) // width
    return max(1, (count + rows - 1) // rows)


def cores_svg(cores, reserved, planned, offline=False):
    """The cells of some cores as an inline SVG, wrapped into rows; (svg, width)."""
    threads = max(len(c) for c in cores)
    per_row = cores_per_row(len(cores))
    core_w = threads * CELL + (threads - 1) * GAP
    width = per_row * core_w + (per_row - 1) * CORE_GAP
    rows = (len(cores) + per_row - 1) // per_row
    height = rows * CELL + (rows - 1) * CORE_GAP
    parts = ['<svg class="cores" width="%d" height="%d" viewBox="0 0 %d %d">' % (width, height, width, height)]
    for i, core in enumerate(cores):
        x0, y = (i % per_row) * (core_w + CORE_GAP), (i // per_row) * (CELL + CORE_GAP)
        what = "CPU" if len(core) == 1 else "core, CPUs"
        parts.append('<g class="core"><title>%s %s</title>' % (what, ",".join(str(c) for c in core)))
        for j, cpu in enumerate(core):
            state = "offline" if offline else cpu_state(cpu, reserved, planned)
            parts.append('<rect class="cpu %s" x="%d" y="%d"/>' % (state, x0 + j * (CELL + GAP), y))
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts), width


def memory_svg(node, width):
    """The node's memory as a bar: reserved, hugepages, the rest; (svg, caption as HTML with the bar's colours)."""
    total = node["memory"]
    parts = ['<svg class="memory" width="%d" height="%d" viewBox="0 0 %d %d">' % (width, BAR, width, BAR),
             '<rect class="mem free" x="0" y="0" width="%d" height="%d"/>' % (width, BAR)]
    x = 0.0
    for cls, nbytes in (("reserved", node["reserved_memory"]), ("hugepages", node["hugepages"])):
        if total and nbytes:
            w = max(2.0, width * float(nbytes) / total)
            parts.append('<rect class="mem %s" x="%.1f" y="0" width="%.1f" height="%d"><title>%s %s</title></rect>'
                         % (cls, x, w, BAR, human(nbytes), cls))
            x += w
    parts.append("</svg>")
    caption = "memory %s" % human(total)
    for cls, nbytes in (("reserved", node["reserved_memory"]), ("hugepages", node["hugepages"])):
        if nbytes:
            caption += ' <span><i class="%s"></i>%s %s</span>' % (cls, human(nbytes), cls)
    return "".join(parts), caption


def device_chips(node):
    """The GPUs and NICs attached to the node, as lstopo draws PCI devices under their node."""
    chips = []
    for dev in node["gpus"]:
        chips.append('<span class="dev gpu" title="%s">GPU %s</span>' % (
            escape(" ".join(str(dev.get(k)) for k in ("vendor", "device", "driver", "uuid") if dev.get(k))),
            escape(str(dev.get("address", "?")))))
    for dev in node["nics"]:
        names = " ".join(dev.get("interfaces") or []) or dev.get("address", "?")
        chips.append('<span class="dev nic" title="%s">NIC %s</span>' % (escape(str(dev.get("address", "?"))), escape(str(names))))
    return '<div class="devs">%s</div>' % "".join(chips) if chips else ""


def node_box(node, reserved, planned, gpu_count):
    """One NUMA node: a box with its cores' cells, its memory bar, its devices and its biggest pod."""
    cpu_total = sum(len(c) for c in node["cores"])
    if node["cores"]:
        cells, width = cores_svg(node["cores"], reserved, planned)
        head = "%s, %s" % (plural(cpu_total, "CPU"), plural(len(node["cores"]), "core"))
    else:
        cells, width = "", NODE_WIDTH
        head = "memory only"
        if node["gpu_memory"]:
            head += ", GPU memory" + (" (the host's only GPU)" if gpu_count == 1 else "")
    width = max(width, NODE_WIDTH)
    memory, caption = memory_svg(node, width) if node["memory"] else ("", "no memory (an empty node)")
    pod, table = "", node["table"]
    if table.get("exclusive_cpus"):
        pod = '<div class="pod">biggest pod: %s, %s memory, %s hugepages, %s</div>' % (
            plural(table["exclusive_cpus"], "CPU"), size(table["allocatable_memory_bytes"]), size(table["hugepages_bytes"]),
            plural(len(table["gpus"]), "GPU"))
    return ('<div class="numa-node%s" data-node="%d" style="width:%dpx"><div class="node-head"><b>node %d</b> %s</div>%s'
            '<div class="mem-bar">%s<div>%s</div></div>%s%s</div>'
            % ("" if node["cores"] else " memory-only", node["id"], width, node["id"], escape(head), cells, memory,
               caption, device_chips(node), pod))


def offline_box(offline):
    """Offline CPUs belong to no NUMA node while offline: a box of their own."""
    cells, dummy = cores_svg([[cpu] for cpu in sorted(offline)], set(), False, offline=True)
    return ('<div class="offline-cpus"><div class="node-head"><b>offline</b> %s (no NUMA node while offline)</div>%s</div>'
            % (escape(plural(len(offline), "CPU")), cells))


def host_map(topology, plan):
    """The host's NUMA map: one box per node, wrapped, then the offline CPUs."""
    if not topology or not topology.get("numa_nodes"):
        return '<p class="no-map">no topology was read</p>'
    planned = bool(plan)
    reserved = _cpus((plan or {}).get("reserved_cpus"))
    gpu_count = sum(1 for d in topology.get("pci_devices") or [] if d.get("kind") == "gpu")
    boxes = [node_box(node, reserved, planned, gpu_count) for node in node_layout(topology, plan)]
    offline = _cpus(topology.get("cpus_offline")) | _cpus((plan or {}).get("offline_cpus"))
    if offline:
        boxes.append(offline_box(offline))
    return '<div class="map">%s</div>' % "".join(boxes)


def host_facts(topology, plan):
    """One line: nodes, CPUs, cores, SMT, kernel; the plan's reserved / isolated / offline CPUs."""
    facts = []
    if topology:
        nodes = topology.get("numa_nodes") or []
        facts.append("%s (%d with CPUs), %s in %s, SMT %s, kernel %s" % (
            plural(len(nodes), "NUMA node"), sum(1 for n in nodes if n.get("has_cpu")),
            plural(len(_cpus(topology.get("cpus_online"))), "online CPU"), plural(len(topology.get("cores") or []), "core"),
            "on" if topology.get("smt_active") else "off", topology.get("kernel_release") or "unknown"))
    lines = ["<p>%s</p>" % escape(f) for f in facts]
    if plan:  # the line doubles as the map's legend
        lines.append('<p class="legend"><i class="reserved"></i>reserved CPUs %s <i class="isolated"></i>isolated %s%s</p>' % (
            escape(cpus_cell(plan.get("reserved_cpus", "")) or "none"), escape(cpus_cell(plan.get("isolated_cpus", "")) or "none"),
            ' <i class="offline"></i>offline %s' % escape(cpus_cell(plan["offline_cpus"])) if plan.get("offline_cpus") else ""))
    return "".join(lines)


def _list(title, items, cls=""):
    if not items:
        return ""
    return '<div class="%s"><b>%s</b><ul>%s</ul></div>' % (cls, escape(title), "".join("<li>%s</li>" % escape(i) for i in items))


def host_section(index, entry, row, is_open, map_html):
    """A host's details: status, facts, map (``map_html``), pod shapes, labels, warnings."""
    plan, topology = entry.get("plan") or {}, entry.get("topology") or {}
    labels = entry.get("labels") or []
    body = [
        '<p class="status %s">%s: %s</p>' % (row["status"], escape(row["label"]), escape(row["detail"])) if row["detail"] else "",
        host_facts(topology, plan),
        map_html,
        _list("pod shapes (copies at once)", row["shapes"], "shapes"),
        # What the node is labelled with: its RKE2 node-label entries and the NUMA capacity labels.
        '<div class="labels"><b>labels</b> %s</div>' % (escape(", ".join(labels)) if labels else "none planned"),
        _list("warnings", row["warnings"], "warnings"),
    ]
    return ('<details class="host" id="host-%d" data-host="%s" data-filter="%s"%s><summary><b>%s</b> '
            '<span class="status %s">%s</span> %s</summary>%s</details>'
            % (index, escape(row["host"]), escape(filter_text(row)), " open" if is_open else "", escape(row["host"]),
               row["status"], escape(row["label"]), escape(plural(len(row["warnings"]), "warning")) if row["warnings"] else "",
               "".join(body)))


def shared_maps(entries, rows):
    """Each host's map, every distinct map drawn once: a fleet of identical machines would otherwise repeat
    the same hundreds of cells per host. A later host with the same map says which host shows it, and the
    page's script copies that map in when the host is opened."""
    first, out = {}, []
    for i, entry in enumerate(entries):
        html = host_map(entry.get("topology"), entry.get("plan"))
        if 'class="map"' not in html:
            out.append(html)
            continue
        owner = first.setdefault(html, i)
        if owner == i:
            out.append('<div data-map="%d">%s</div>' % (i, html))
        else:
            out.append('<div class="same-map" data-same="%d">same NUMA map as <a href="#host-%d">%s</a></div>'
                       % (owner, owner, escape(rows[owner]["host"])))
    return out


def filter_text(row):
    """What the filter box matches: host name, status, plan fingerprint (lower case)."""
    return " ".join((row["host"], row["label"], row["fingerprint"])).lower()


# ----------------------------------------------------------------- the page

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:20px;margin:0 0 4px}
table{border-collapse:collapse;margin:8px 0}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3}
.status.compliant,.status.planned{color:#1a7f37}.status.not-compliant,.status.blocked,.status.failed{color:#c62828;font-weight:bold}
.legend span{display:inline-block;margin-right:12px}
details.host p{margin:4px 0}
.legend i{display:inline-block;width:12px;height:12px;margin:0 4px 0 8px;vertical-align:-2px;border:1px solid #888}
details.host{border:1px solid #bbb;border-radius:4px;margin:6px 0;padding:4px 8px}
details.host>summary{cursor:pointer}
.map{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start;margin:6px 0}
.numa-node,.offline-cpus{border:2px solid #5a6b7b;border-radius:4px;padding:4px;background:#f7f9fb}
.numa-node.memory-only{border-style:dashed;background:#fbfbf4}
.offline-cpus{border-color:#999;border-style:dotted}
.node-head{margin-bottom:3px}
svg{display:block}
rect.cpu{width:10px;height:10px;stroke:#333;stroke-width:.5}
.cpu.reserved,i.reserved{fill:#e8743b;background:#e8743b}
.cpu.isolated,i.isolated{fill:#4e9a5a;background:#4e9a5a}
.cpu.offline,i.offline{fill:#fff;background:#fff;stroke-dasharray:2 1}
.cpu.online,i.online{fill:#8fa8c0;background:#8fa8c0}
.mem-bar{margin-top:4px;font-size:12px}
.mem-bar span{white-space:nowrap}
.mem-bar i{display:inline-block;width:9px;height:9px;margin:0 3px 0 6px;border:1px solid #888}
.mem.free,i.free{fill:#cfd8e3;background:#cfd8e3}
.mem.reserved{fill:#e8743b}
.mem.hugepages,i.hugepages{fill:#7b5ea7;background:#7b5ea7}
.devs{margin-top:3px}
.dev{display:inline-block;font-size:12px;border:1px solid #777;border-radius:3px;padding:0 4px;margin:2px 2px 0 0}
.dev.gpu{background:#d9f0d3}.dev.nic{background:#dde7f5}
.pod{font-size:12px;margin-top:2px}
.warnings li{color:#8a4b00}
#filter{width:24em;padding:3px}
"""

LEGEND = ('<p class="legend"><span><i class="reserved"></i>reserved CPU (housekeeping)</span>'
          '<span><i class="isolated"></i>isolated CPU (for pinned pods)</span><span><i class="offline"></i>offline CPU</span>'
          '<span><i class="online"></i>online CPU, not planned</span><span><i class="free"></i>memory</span>'
          '<span><i class="reserved"></i>reserved memory</span><span><i class="hugepages"></i>hugepages</span></p>')

# The filter box: hides the table rows and host sections whose data-filter lacks the text. An opened
# host whose map another host shows gets a copy of it.
SCRIPT = """
(function () {
  function fill(d) {
    d.querySelectorAll('.same-map').forEach(function (slot) {
      var map = document.querySelector('[data-map="' + slot.getAttribute('data-same') + '"] > .map');
      if (map && !slot.querySelector('.map')) { slot.appendChild(map.cloneNode(true)); }
    });
  }
  document.querySelectorAll('details.host').forEach(function (d) {
    if (d.open) { fill(d); }
    d.addEventListener('toggle', function () { if (d.open) { fill(d); } });
  });
  var box = document.getElementById('filter'), shown = document.getElementById('shown');
  box.addEventListener('input', function () {
    var q = box.value.trim().toLowerCase(), n = 0;
    document.querySelectorAll('#fleet tbody tr').forEach(function (tr) {
      tr.hidden = q !== '' && tr.getAttribute('data-filter').indexOf(q) < 0;
      if (!tr.hidden) { n += 1; }
    });
    document.querySelectorAll('details.host').forEach(function (d) {
      d.hidden = q !== '' && d.getAttribute('data-filter').indexOf(q) < 0;
    });
    shown.textContent = n + ' of ' + shown.getAttribute('data-total') + ' hosts';
  });
})();
"""


def fleet_table(rows):
    """The fleet table: a row per host, linking to its section."""
    out = ['<table id="fleet"><thead><tr><th>host</th><th>status</th><th>plan</th>'
           '<th>biggest single-NUMA pod<br>cpu / memory / hugepages / GPUs</th><th>pod shapes: copies</th>'
           '<th>warnings</th></tr></thead><tbody>']
    for i, row in enumerate(rows):
        out.append('<tr data-host="%s" data-filter="%s"><td><a href="#host-%d">%s</a></td><td class="status %s">%s%s</td>'
                   '<td><code>%s</code></td><td>%s</td><td>%s</td><td>%s</td></tr>' % (
                       escape(row["host"]), escape(filter_text(row)), i, escape(row["host"]), row["status"],
                       escape(row["label"]), "<br>" + escape(row["detail"]) if row["detail"] else "",
                       escape(row["fingerprint"]) or "-",
                       escape("%s (node %s)" % (row["pod"], row["pod_node"])) if row["pod"] else "-",
                       "<br>".join(escape(s) for s in row["shapes"]) or "-", len(row["warnings"]) or "-"))
    out.append("</tbody></table>")
    return "".join(out)


def render_html(entries, mode="plan", title="RKE2 NUMA fleet report"):
    """The whole page for the run: summary, filter box, fleet table, then each host's details and map."""
    rows = summarize(entries, mode)
    is_open = len(rows) <= OPEN_HOSTS
    sections = [host_section(i, entry, row, is_open, map_html)
                for i, (entry, row, map_html) in enumerate(zip(entries, rows, shared_maps(entries, rows)))]
    return "".join([
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>%s</title><style>%s</style></head><body>\n" % (escape(title), CSS),
        '<h1>%s</h1><p class="summary">%s (%s)</p>' % (escape(title), escape(summary_line(rows, mode)),
                                                       "check.yml" if mode == "check" else "plan.yml"),
        LEGEND,
        '<p><input id="filter" type="search" placeholder="filter: host, status or plan" aria-label="filter hosts"> '
        '<span id="shown" data-total="%d">%d of %d hosts</span></p>\n' % (len(rows), len(rows), len(rows)),
        fleet_table(rows), "\n",
        '<section id="hosts">%s</section>\n' % "\n".join(sections),
        "<script>%s</script></body></html>\n" % SCRIPT,
    ])


# ----------------------------------------------------------------- Markdown


# Inline Markdown: emphasis, code, links and images ([text](url), ![alt](url)), strikethrough, table cells.
_MD_INLINE = frozenset("\\`*_[]()!|~")
# GFM autolinks bare URLs, www. names and e-mail addresses: a zero-width space keeps them text.
_AUTOLINKS = (("://", ":\u200b//"), ("www.", "www\u200b."), ("@", "@\u200b"))


def md_cell(text):
    """Untrusted text (host, pod and warning text) for a Markdown line or table cell, on one line: HTML-escaped, and
    nothing in it renders as a link, an image, emphasis or a cell break, so the summary is safe to paste into a CI
    job summary or a ticket."""
    flat = escape(" ".join(str(text).split()), quote=False)
    for old, new in _AUTOLINKS:
        flat = flat.replace(old, new)
    return "".join("\\" + c if c in _MD_INLINE else c for c in flat)


def render_markdown(entries, mode="plan", title="RKE2 NUMA fleet report"):
    """The summary beside the page: the summary line, the fleet table, the warnings (capped)."""
    rows = summarize(entries, mode)
    playbook = "check.yml" if mode == "check" else "plan.yml"
    lines = ["# %s" % md_cell(title), "", "%s (%s)." % (md_cell(summary_line(rows, mode)), playbook), "",
             "| host | status | plan | biggest single-NUMA pod (cpu / memory / hugepages / GPUs) | pod shapes: copies | warnings |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        lines.append("| %s | %s | %s | %s | %s | %d |" % (
            md_cell(row["host"]), md_cell(row["label"] + (": " + row["detail"] if row["detail"] else "")),
            "`%s`" % md_cell(row["fingerprint"]) if row["fingerprint"] else "-",
            md_cell(row["pod"]) if row["pod"] else "-", md_cell(", ".join(row["shapes"])) if row["shapes"] else "-",
            len(row["warnings"])))
    warnings = [(row["host"], w) for row in rows for w in row["warnings"]]
    if warnings:
        lines += ["", "## Warnings", ""]
        lines += ["- **%s**: %s" % (md_cell(host), md_cell(w)) for host, w in warnings[:MARKDOWN_WARNINGS]]
        if len(warnings) > MARKDOWN_WARNINGS:
            lines.append("- ... %d more in index.html" % (len(warnings) - MARKDOWN_WARNINGS))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- prove.yml's reports

PROVE_VERDICTS = ("failed", "inconclusive", "proven")


def prove_fleet(reports):
    """prove.yml's fleet.json from each host's report ({host: rke2_numa_prove_report, or None when the host did not
    get to judge its probes}): {hosts, proven, failed, inconclusive, not_run} - a host is failed when a probe
    failed, inconclusive when none failed and one could not tell, proven when every probe was."""
    fleet = {"hosts": len(reports), "proven": [], "failed": [], "inconclusive": [], "not_run": []}
    for host in sorted(reports):
        report = reports[host]
        if not report:
            fleet["not_run"].append(host)
        elif not report.get("ok"):
            fleet["failed"].append(host)
        elif report.get("inconclusive"):
            fleet["inconclusive"].append(host)
        else:
            fleet["proven"].append(host)
    return fleet


def render_prove_markdown(reports, title="RKE2 NUMA proof"):
    """prove.yml's summary.md: the fleet line, then a row per probe (host, probe, verdict, what it got or why not);
    every untrusted text through md_cell."""
    fleet = prove_fleet(reports)
    lines = ["# %s" % md_cell(title), "",
             "%d hosts: %d proven, %d failed, %d inconclusive, %d not run (prove.yml)." % (
                 fleet["hosts"], len(fleet["proven"]), len(fleet["failed"]), len(fleet["inconclusive"]), len(fleet["not_run"])),
             "", "| host | probe | verdict | what it got, or why not |", "|---|---|---|---|"]
    for host in sorted(reports):
        report = reports[host] or {}
        results = report.get("results") or []
        if not results:
            why = "; ".join(report.get("reasons") or []) or "the host did not get to judge its probes (see the run)"
            lines.append("| %s | - | %s | %s |" % (md_cell(host), "failed" if report else "not run", md_cell(why)))
        for result in results:
            verdict = result.get("verdict") or ("proven" if result.get("ok") else "failed")
            lines.append("| %s | %s | %s | %s |" % (md_cell(host), md_cell(result.get("name", "")), verdict,
                                                    md_cell(result.get("summary") or "")))
    return "\n".join(lines) + "\n"
