# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmarks (figures, not pass/fail tests).

1. Discovery: one ansible-playbook run per probe over the same inventory of
   sample machines (>= 20 hosts, the 384-CPU one included), alternating
   (a) maitred.rke2_numa.topology_info, (b) ansible.builtin.setup with
   gather_subset [hardware], (c) ansible.builtin.ping (the floor: one module
   call per host). Medians of wall time; ratios a/b and a/c. A -vvv run of (a)
   counts module executions per host (must be exactly one).
2. The reader's own work on the largest sample tree, in process (median).
3. The planner: numa_plan's pure function over 1,000 hosts (the sample
   topologies in turn), in process: the controller time of planning a fleet.
4. The fleet report: the fleet_report filter's page (index.html) and Markdown summary for 1,000 hosts (the
   sample plans in turn), in process: size and controller time; once as machines of a few shapes, and once as a real
   fleet is - each GPU with its own UUID (shown as text: the maps stay shared by shape; targets <= 3 MB, <= 5 s).
5. Skipping a compliant fleet: playbooks/rolling.yml over 12 node filesystem
   copies that already run their plan (ansible_connection=local; kubectl -
   tests/fixtures/fake_kubectl.py - answers the access check, no roll's Lease,
   and the one Node list with no cordoned node) against playbooks/plan.yml
   over the same copies, alternating; medians and the ratio (target <= 1.2).
6. A fleet of thousands: ping, playbooks/plan.yml and playbooks/check.yml over 12 and then 48 such copies
   (forks 5), alternating; the cost of each extra host ((median at 48 - median at 12) / 36) and its ratio to
   ping's (target <= 1.5: one module call per host, the rest once per run), in wall time and in the CPU time of
   the run's processes (steadier on a machine that does other work). Then the controller's peak memory
   for 1,000 hosts: their facts as the check leaves them and the fleet page rendered from them.
7. A thousand hosts as AWX runs them (issue 53 item 5): --thousand-hosts (1,000) node filesystem copies (a compliant
   one and, every tenth host, one that is not; each GPU its own UUID), ansible_connection=local, forks 20, under
   ansible-runner (AWX's job runner: its event callback, extra vars as strings). ping, check.yml (with
   rke2_numa_report_dir) and plan.yml (with rke2_numa_plan_dir and rke2_numa_report_dir), alternating,
   --thousand-rounds rounds (1). For each: wall and CPU time and their ratios to ping's (target <= 1.3 wall), the
   report tasks' time (the event's duration of the tasks of tasks/check_report.yml, tasks/report.yml and plan.yml's
   report files: <= 5 s) and index.html's size (<= 3 MB), the controller's peak RSS (the ansible-playbook process,
   sampled: <= 200 MB), the event data per host (artifacts/<ident>/job_events/*.json: <= 2 KB), and whether the
   counts of fleet.json, summary.md, the page and the job's artifacts agree.

Run from the repo root with the venv active:
  python bench/bench.py [--rounds N] [--hosts N] [--only rolling|fleet|memory|thousand] [--thousand-hosts N]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(REPO, ".build")
sys.path.insert(0, BUILD)

from ansible_collections.maitred.rke2_numa.plugins.filter.fleet_report import fleet_report  # noqa: E402
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology  # noqa: E402
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan  # noqa: E402
from ansible_collections.maitred.rke2_numa.tests.fixtures import fake_kubectl, gen_sysfs  # noqa: E402
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import comply, make_node  # noqa: E402

PROBES = {
    "a_topology_info": "maitred.rke2_numa.topology_info:\n        sysfs_root: \"{{ rke2_numa_sysfs_root }}\"",
    "b_setup_hardware": "ansible.builtin.setup:\n        gather_subset: [hardware]",
    "c_ping": "ansible.builtin.ping:",
}
LARGEST = "amd-mi300x-nps4"


def write_inputs(workdir, samples_dir, hosts):
    names = sorted(gen_sysfs.samples())
    names.remove(LARGEST)
    names.insert(0, LARGEST)
    inventory = os.path.join(workdir, "inventory.yml")
    with open(inventory, "w") as f:
        f.write("bench:\n  vars:\n    ansible_connection: local\n    ansible_python_interpreter: %s\n  hosts:\n" % sys.executable)
        for i in range(hosts):
            name = names[i % len(names)]
            f.write("    %s-%02d:\n      rke2_numa_sysfs_root: %s\n" % (name, i, os.path.join(samples_dir, name)))
    playbooks = {}
    for probe, task in PROBES.items():
        path = os.path.join(workdir, probe + ".yml")
        with open(path, "w") as f:
            f.write("- name: %s\n  hosts: bench\n  gather_facts: false\n  tasks:\n    - name: probe\n      %s\n" % (probe, task))
        playbooks[probe] = path
    return inventory, playbooks


def run(playbook, inventory, forks, verbose=False):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=BUILD, ANSIBLE_LOCALHOST_WARNING="false",
               ANSIBLE_DEPRECATION_WARNINGS="false", ANSIBLE_FORKS=str(forks))
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory, playbook]
    if verbose:
        cmd.append("-vvv")
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if out.returncode:
        sys.exit("%s failed:\n%s%s" % (playbook, out.stdout[-3000:], out.stderr[-3000:]))
    return elapsed, out.stdout


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--hosts", type=int, default=24)
    parser.add_argument("--forks", type=int, default=5)
    parser.add_argument("--plan-hosts", type=int, default=1000)
    parser.add_argument("--fleet", type=int, default=12)
    parser.add_argument("--fleet-sizes", default="12,48", help="the two fleet sizes of the per-host cost (fleet benchmark)")
    parser.add_argument("--no-memory", action="store_true", help="skip the 1,000-host memory figure (fleet benchmark)")
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    parser.add_argument("--thousand-hosts", type=int, default=1000, help="the fleet of the thousand benchmark")
    parser.add_argument("--thousand-rounds", type=int, default=1, help="rounds of the thousand benchmark")
    parser.add_argument("--thousand-forks", type=int, default=20, help="forks of the thousand benchmark")
    parser.add_argument("--thousand-profile", action="store_true", help="the thousand benchmark: each task's events, bytes, seconds")
    parser.add_argument("--only", choices=["rolling", "fleet", "memory", "thousand"],
                        help="run one benchmark: the no-op roll against plan.yml, the per-host cost of plan and check, the "
                             "controller's memory for --plan-hosts hosts, or ping, check and plan over --thousand-hosts "
                             "hosts under ansible-runner")
    args = parser.parse_args(argv)
    if args.memory_child:
        memory_child(args.memory_child, args.plan_hosts)
        return 0
    if args.only == "rolling":
        bench_rolling(args)
        return 0
    if args.only == "fleet":
        bench_fleet(args)
        return 0
    if args.only == "memory":
        bench_fleet_memory(args)
        return 0
    if args.only == "thousand":
        bench_thousand(args)
        return 0
    if args.hosts < 20:
        parser.error("--hosts must be at least 20")

    with tempfile.TemporaryDirectory() as workdir:
        samples_dir = os.path.join(BUILD, "samples")
        gen_sysfs.main(["--out", samples_dir])
        inventory, playbooks = write_inputs(workdir, samples_dir, args.hosts)

        # exactly one module call per host for topology_info
        dummy, out = run(playbooks["a_topology_info"], inventory, args.forks, verbose=True)
        calls = re.findall(r"^<([^>]+)> EXEC /bin/sh -c '\S*python\S* \S*/AnsiballZ_(\w+)\.py", out, re.M)
        per_host = {}
        for host, module in calls:
            per_host.setdefault(host, []).append(module)
        print("module executions per host (topology_info run): %s" % sorted(set(len(v) for v in per_host.values())))
        assert len(per_host) == args.hosts and all(v == ["topology_info"] for v in per_host.values()), per_host

        times = {probe: [] for probe in PROBES}
        run(playbooks["c_ping"], inventory, args.forks)  # warm caches
        for i in range(args.rounds):
            order = list(PROBES) if i % 2 == 0 else list(reversed(list(PROBES)))
            for probe in order:
                times[probe].append(run(playbooks[probe], inventory, args.forks)[0])
        med = {probe: statistics.median(values) for probe, values in times.items()}
        print("discovery over %d hosts, %d rounds, forks %d (median wall seconds):" % (args.hosts, args.rounds, args.forks))
        for probe in PROBES:
            print("  %-18s %.3f  (runs: %s)" % (probe, med[probe], " ".join("%.2f" % t for t in times[probe])))
        ab = med["a_topology_info"] / med["b_setup_hardware"]
        ac = med["a_topology_info"] / med["c_ping"]
        print("ratio a/b (topology_info / setup hardware): %.2f  (target <= 0.60)" % ab)
        print("ratio a/c (topology_info / ping):           %.2f  (target <= 1.10)" % ac)

    root = os.path.join(samples_dir, LARGEST)
    samples = []
    for dummy in range(30):
        start = time.perf_counter()
        topo = read_topology(root)
        samples.append(time.perf_counter() - start)
    print("read_topology on %s (%d CPUs, %d nodes): median %.1f ms (target well under 50 ms)" % (
        LARGEST, topo["cpu_count"], len(topo["numa_nodes"]), statistics.median(samples) * 1000))

    topologies = [read_topology(os.path.join(samples_dir, name)) for name in sorted(gen_sysfs.samples())]
    intent = {"hugepages_per_node": 4, "hugepages_size": "2M",
              "pod_shapes": [{"name": "tp1", "cpu": 8, "memory": "64Gi", "gpus": 1}]}
    runs = []
    for dummy in range(3):
        start = time.process_time()
        for i in range(args.plan_hosts):
            make_plan(topologies[i % len(topologies)], **intent)
        runs.append(time.process_time() - start)
    print("numa_plan for %d hosts: median %.2f s of controller CPU time (target < 10 s)"
          % (args.plan_hosts, statistics.median(runs)))
    bench_report(args, topologies, [make_plan(topo, **intent) for topo in topologies])
    bench_rolling(args)
    bench_fleet(args)
    bench_thousand(args)
    return 0


def bench_report(args, topologies, plans):
    import copy  # pylint: disable=import-outside-toplevel
    hosts = ["host-%04d" % i for i in range(args.plan_hosts)]
    fleets = {"identical machines": {}, "each GPU its own UUID": {}}
    for i, host in enumerate(hosts):
        topology = topologies[i % len(topologies)]
        fleets["identical machines"][host] = {"rke2_numa_topology": topology, "rke2_numa_plan": plans[i % len(plans)]}
        distinct = copy.deepcopy(topology)
        for dev in distinct["pci_devices"]:
            dev["uuid"] = "GPU-%s-%s" % (host, dev["address"])  # the host's text, not its map
        fleets["each GPU its own UUID"][host] = {"rke2_numa_topology": distinct, "rke2_numa_plan": plans[i % len(plans)]}
    for name, hostvars in fleets.items():
        figures = {}
        for output in ("html", "markdown"):
            runs = []
            for dummy in range(3):
                start = time.process_time()
                text = fleet_report(hosts, hostvars, output=output)
                runs.append(time.process_time() - start)
            figures[output] = (len(text.encode("utf-8")) / 1e6, statistics.median(runs))
        print("fleet report for %d hosts (%s): index.html %.1f MB in %.2f s, summary.md %.2f MB in %.2f s "
              "(median controller CPU time)" % (len(hosts), name, figures["html"][0], figures["html"][1],
                                                figures["markdown"][0], figures["markdown"][1]))


def compliant_fleet(base, size, kubectl):
    """An inventory of `size` node filesystem copies that run their plan (ansible_connection=local), under base."""
    hosts = {}
    for i in range(size):
        root = make_node(base / ("gpu-%02d" % i), sockets=2, cores_per_socket=8, threads=2, gpus_per_node=4)
        comply(root, make_plan(read_topology(str(root))))
        hosts["gpu-%02d" % i] = root
    inventory = base / ("inventory-%d.yml" % size)
    with open(str(inventory), "w") as f:
        f.write("gpu:\n  vars:\n    ansible_connection: local\n    ansible_python_interpreter: %s\n    rke2_numa_kubectl: %s\n  hosts:\n"
                % (sys.executable, kubectl))
        for name, root in hosts.items():
            f.write("    %s:\n      rke2_numa_sysfs_root: %s\n      rke2_numa_boot_root: %s\n      rke2_numa_kubelet_dir: %s\n"
                    "      rke2_numa_config_path: %s\n" % (name, root, root, root / "var/lib/kubelet", root / "etc/rancher/rke2/config.yaml"))
    return hosts, inventory


def bench_rolling(args):
    import pathlib  # pylint: disable=import-outside-toplevel
    with tempfile.TemporaryDirectory() as workdir:
        base = pathlib.Path(workdir)
        # An empty cluster: the access check answered with exactly the rights asked for, no roll's Lease, every read
        # (the pod audit's "get nodes,pods -A -o json") returns no item; any other call fails.
        kubectl = fake_kubectl.write(base / "kubectl")
        hosts, inventory = compliant_fleet(base, args.fleet, kubectl)
        books = {"rolling": os.path.join(REPO, "playbooks", "rolling.yml"), "plan": os.path.join(REPO, "playbooks", "plan.yml")}
        times = {name: [] for name in books}
        run(books["plan"], str(inventory), args.forks)  # warm caches
        for i in range(args.rounds):
            for name in (sorted(books) if i % 2 == 0 else sorted(books, reverse=True)):
                elapsed, out = run(books[name], str(inventory), args.forks)
                if name == "rolling":
                    assert "compliant (skipped): " + ", ".join(sorted(hosts)) in out, out[-2000:]
                times[name].append(elapsed)
        med = {name: statistics.median(values) for name, values in times.items()}
        print("compliant fleet of %d nodes, %d rounds, forks %d (median wall seconds): rolling %.2f, plan %.2f"
              % (args.fleet, args.rounds, args.forks, med["rolling"], med["plan"]))
        print("ratio rolling/plan: %.2f  (target <= 1.20)" % (med["rolling"] / med["plan"]))


def bench_fleet(args):
    import pathlib  # pylint: disable=import-outside-toplevel
    small, large = (int(n) for n in args.fleet_sizes.split(","))
    with tempfile.TemporaryDirectory() as workdir:
        base = pathlib.Path(workdir)
        kubectl = fake_kubectl.write(base / "kubectl")
        ping = base / "ping.yml"
        ping.write_text("- name: ping\n  hosts: gpu\n  gather_facts: false\n  tasks:\n    - name: ping\n      ansible.builtin.ping:\n")
        books = {"ping": str(ping), "plan": os.path.join(REPO, "playbooks", "plan.yml"),
                 "check": os.path.join(REPO, "playbooks", "check.yml")}
        inventories = {size: compliant_fleet(base / ("fleet-%d" % size), size, kubectl)[1] for size in (small, large)}
        run(books["ping"], str(inventories[small]), args.forks)  # warm caches
        times = {(name, size): [] for name in books for size in inventories}
        cpu = {(name, size): [] for name in books for size in inventories}
        for i in range(args.rounds):
            for name in (sorted(books) if i % 2 == 0 else sorted(books, reverse=True)):
                for size, inventory in inventories.items():
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    elapsed, out = run(books[name], str(inventory), args.forks)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    if name == "check":
                        assert "%d of %d compliant" % (size, size) in out, out[-2000:]
                    times[(name, size)].append(elapsed)
                    cpu[(name, size)].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        med = {key: statistics.median(values) for key, values in times.items()}
        med_cpu = {key: statistics.median(values) for key, values in cpu.items()}
        per_host = {name: (med[(name, large)] - med[(name, small)]) / (large - small) for name in books}
        # the CPU time of the run's processes (the controller's, its workers', the modules'): what an extra host costs
        # on this machine's cores, steadier than the wall clock on a machine that does other work
        cpu_per_host = {name: (med_cpu[(name, large)] - med_cpu[(name, small)]) / (large - small) for name in books}
        print("a fleet of %d then %d compliant nodes, %d rounds, forks %d (median wall seconds):" % (small, large, args.rounds, args.forks))
        for name in sorted(books):
            print("  %-6s %6.2f s at %d, %6.2f s at %d: %.3f s per extra host (CPU %.3f s)"
                  % (name, med[(name, small)], small, med[(name, large)], large, per_host[name], cpu_per_host[name]))
        for name in ("plan", "check"):
            print("ratio %s/ping per extra host: %.2f  (target <= 1.50; CPU time %.2f)"
                  % (name, per_host[name] / per_host["ping"], cpu_per_host[name] / cpu_per_host["ping"]))
    if not args.no_memory:
        bench_fleet_memory(args)


def bench_fleet_memory(args):
    """Peak memory of the controller's share for --plan-hosts hosts: their facts as check.yml leaves them (each host's
    node read, plan and decision, distinct objects as the results of as many module calls are) and the fleet page and
    summary rendered from them. In a child process, so that its peak is this and not the benchmarks before it."""
    import json  # pylint: disable=import-outside-toplevel
    import pathlib  # pylint: disable=import-outside-toplevel
    with tempfile.TemporaryDirectory() as workdir:
        base = pathlib.Path(workdir)
        kubectl = fake_kubectl.write(base / "kubectl")
        dummy, inventory = compliant_fleet(base, 1, kubectl)
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=BUILD, ANSIBLE_LOCALHOST_WARNING="false")
        state_file = base / "state.json"
        # the read's result written by the play itself (no stdout callback of another collection: ansible-core has no
        # json callback of its own, ansible.posix's is there only where Molecule installed it)
        book = base / "read.yml"
        book.write_text("- name: read\n  hosts: gpu\n  gather_facts: false\n  tasks:\n    - name: read\n"
                        "      maitred.rke2_numa.node_state_info:\n        sysfs_root: '{{ rke2_numa_sysfs_root }}'\n"
                        "        boot_root: '{{ rke2_numa_boot_root }}'\n        kubelet_dir: '{{ rke2_numa_kubelet_dir }}'\n"
                        "        config_path: '{{ rke2_numa_config_path }}'\n        rancher_root: '{{ rke2_numa_boot_root }}'\n"
                        "      register: __read\n    - name: keep it\n      ansible.builtin.copy:\n"
                        "        content: '{{ __read | to_json }}'\n        dest: %s\n        mode: '0600'\n" % state_file)
        subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory), str(book)],
                       env=env, capture_output=True, text=True, check=True)
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "--memory-child", str(state_file), "--plan-hosts", str(args.plan_hosts)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:   # its own words, not only its exit code (a CI run under load once failed here unexplained)
            raise SystemExit("the memory child failed (exit %d): %s" % (done.returncode, (done.stderr or done.stdout)[-2000:]))
        child = done.stdout.split()
    before, after, page, summary = (int(x) for x in child)
    print("controller peak memory for %d hosts (their facts as check.yml leaves them, the fleet page %.1f MB and summary "
          "%.1f MB rendered from them): %.0f MB, of which %.0f MB the interpreter and the collection's code"
          % (args.plan_hosts, page / 1e6, summary / 1e6, after / 1024, before / 1024))


def memory_child(state_file, hosts):
    """The child of bench_fleet_memory: prints its peak RSS (KiB) before and after, the page's and the summary's sizes."""
    import copy  # pylint: disable=import-outside-toplevel
    import json  # pylint: disable=import-outside-toplevel
    import resource  # pylint: disable=import-outside-toplevel
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.compliance import check_facts  # pylint: disable=import-outside-toplevel
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with open(state_file) as f:
        text = f.read()
    samples_dir = os.path.join(BUILD, "samples")
    topologies = [read_topology(os.path.join(samples_dir, name)) for name in sorted(gen_sysfs.samples())]
    hostvars, names = {}, []
    for i in range(hosts):
        state = json.loads(text)   # every host's read its own objects, as the results of as many module calls
        state["topology"] = copy.deepcopy(topologies[i % len(topologies)])
        plan = make_plan(state["topology"])
        name = "gpu-%04d" % i
        facts = {"__rke2_numa_state": state, "rke2_numa_plan": plan, "inventory_hostname": name}
        facts.update(check_facts(plan, {"state": state, "config_mode": "auto", "labels_via": "nfd", "pod_audit": {}}))
        hostvars[name] = facts
        names.append(name)
    page = fleet_report(names, hostvars, output="html", mode="check")
    summary = fleet_report(names, hostvars, output="markdown", mode="check")
    print(before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(page.encode("utf-8")), len(summary.encode("utf-8")))


THOUSAND_TARGETS = {"wall": 1.3, "report_s": 5.0, "page_mb": 3.0, "rss_mb": 200.0, "event_kb": 2.0}
# the tasks that write the run's report files on the controller (their events' durations are the report's time)
REPORT_TASKS = ("Write each host's report and fleet.json", "Write fleet.json and run.json",
                "Write the fleet report (index.html) and its Markdown summary (summary.md)")


def thousand_fleet(base, size, kubectl):
    """An inventory of ``size`` node filesystem copies (hard links of two nodes: one that runs its plan, every tenth
    one that does not), each GPU's UUID its own (the NVIDIA driver's information file, rewritten per host)."""
    import glob  # pylint: disable=import-outside-toplevel
    import shutil  # pylint: disable=import-outside-toplevel
    import uuid  # pylint: disable=import-outside-toplevel
    templates = {}
    for name, compliant in (("compliant", True), ("noncompliant", False)):
        root = make_node(base / ("template-" + name), sockets=2, cores_per_socket=8, threads=2, gpus_per_node=4)
        if compliant:
            comply(root, make_plan(read_topology(str(root))))
        templates[name] = root
    lines = ["gpu:", "  vars:", "    ansible_connection: local", "    ansible_python_interpreter: %s" % sys.executable,
             "    rke2_numa_kubectl: %s" % kubectl, "  hosts:"]
    for i in range(size):
        name = "gpu-%04d" % i
        root = base / name
        shutil.copytree(str(templates["noncompliant" if i % 10 == 9 else "compliant"]), str(root), symlinks=True,
                        copy_function=os.link)
        for info in glob.glob(str(root / "proc/driver/nvidia/gpus/*/information")):
            with open(info) as f:
                text = f.read()
            os.unlink(info)   # a hard link: the host's own file, not the template's
            with open(info, "w") as f:
                f.write(re.sub(r"GPU-[0-9a-f-]+", "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_URL, "bench:%s:%s" % (name, info))), text))
        lines += ["    %s:" % name, "      rke2_numa_sysfs_root: %s" % root, "      rke2_numa_boot_root: %s" % root,
                  "      rke2_numa_kubelet_dir: %s" % (root / "var/lib/kubelet"),
                  "      rke2_numa_config_path: %s" % (root / "etc/rancher/rke2/config.yaml")]
    inventory = base / "inventory.yml"
    inventory.write_text("\n".join(lines) + "\n")
    return inventory


def runner_run(base, ident, playbook, inventory, extravars, forks):
    """ansible-runner's command line as AWX runs a job (extra vars as strings, the events in artifacts/<ident>/):
    wall and CPU seconds (runner, controller, workers, modules), the controller's peak RSS (MB, the ansible-playbook
    process's VmHWM, sampled), the events, the artifacts (set_stats) and the event data's bytes."""
    import json  # pylint: disable=import-outside-toplevel
    import glob  # pylint: disable=import-outside-toplevel
    private = base / "runner"
    (private / "env").mkdir(parents=True, exist_ok=True)
    (private / "env" / "extravars").write_text(json.dumps({k: str(v) for k, v in extravars.items()}))
    (private / "env" / "envvars").write_text(json.dumps({
        "ANSIBLE_COLLECTIONS_PATH": BUILD, "ANSIBLE_LOCALHOST_WARNING": "false", "ANSIBLE_DEPRECATION_WARNINGS": "false",
        "ANSIBLE_FORKS": str(forks), "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}))
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-runner"), "run", str(private), "-p", playbook,
           "--inventory", str(inventory), "--ident", ident, "-j"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = {}
    while proc.poll() is None:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    argv = f.read().split(b"\0")
                if not any(a.endswith(b"/ansible-playbook") for a in argv[:2]):
                    continue
                with open("/proc/%s/status" % pid) as f:
                    status = dict(line.split(":", 1) for line in f if ":" in line)
            except OSError:
                continue
            peak[pid] = (int(status.get("PPid", "0")), max(peak.get(pid, (0, 0))[1], int(status.get("VmHWM", "0").split()[0])))
        time.sleep(0.25)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    err = proc.stderr.read()
    artifacts = private / "artifacts" / ident
    events = []
    size = 0
    by_task = {}
    for path in glob.glob(str(artifacts / "job_events" / "*.json")):
        size += os.path.getsize(path)
        with open(path) as f:
            events.append(json.load(f))
        task = "%s %s" % (events[-1]["event"], events[-1].get("event_data", {}).get("task", ""))
        count, total, seconds = by_task.get(task, (0, 0, 0.0))
        by_task[task] = (count + 1, total + os.path.getsize(path), seconds + (events[-1].get("event_data", {}).get("duration") or 0))
    rc = (artifacts / "rc").read_text().strip() if (artifacts / "rc").exists() else "?"
    if rc != "0":
        stdout = (artifacts / "stdout").read_text() if (artifacts / "stdout").exists() else ""
        sys.exit("%s failed under ansible-runner (rc %s):\n%s%s" % (playbook, rc, stdout[-3000:], err[-2000:]))
    # the controller: the ansible-playbook process whose parent is not one (its workers are its forks)
    controller = [hwm for pid, (ppid, hwm) in peak.items() if str(ppid) not in peak]
    stats = [e for e in events if e["event"] == "playbook_on_stats"]
    return {"wall": elapsed, "cpu": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
            "rss_mb": max(controller or [0]) / 1024, "events": events, "event_bytes": size, "by_task": by_task,
            "artifacts": (stats[0]["event_data"].get("artifact_data") or {}) if stats else {}}


def thousand_counts(out_dir, artifacts, key):
    """The counts of fleet.json, the job's artifacts, summary.md and the page ({source: {count: n}}) and their
    disagreements (empty when they agree)."""
    import json  # pylint: disable=import-outside-toplevel
    with open(os.path.join(out_dir, "fleet.json")) as f:
        fleet = json.load(f)
    stats = artifacts.get(key) or {}
    counts = {"fleet.json": dict((k, len(v) if isinstance(v, (list, dict)) else v) for k, v in fleet.items()
                                 if k in ("hosts", "compliant", "planned", "not_planned")),
              "artifacts": dict((k, v) for k, v in stats.items() if k in ("hosts", "compliant", "noncompliant", "planned", "not_planned"))}
    if "not_compliant" in fleet:
        counts["fleet.json"]["noncompliant"] = len(fleet["not_compliant"]) + len(fleet.get("blocked") or [])
    line = re.compile(r"(\d+) hosts: (\d+) compliant, (\d+) NOT compliant \\?\((\d+) blocked\\?\)")
    for name in ("summary.md", "index.html"):
        with open(os.path.join(out_dir, name)) as f:
            found = line.search(f.read())
        if found:
            counts[name] = {"hosts": int(found.group(1)), "compliant": int(found.group(2)), "noncompliant": int(found.group(3))}
    wrong = []
    for count in sorted(set(k for c in counts.values() for k in c)):
        seen = dict((source, c[count]) for source, c in counts.items() if count in c)
        if len(set(seen.values())) > 1:
            wrong.append("%s: %s" % (count, seen))
    return counts, wrong


def bench_thousand(args):
    import json  # pylint: disable=import-outside-toplevel
    import pathlib  # pylint: disable=import-outside-toplevel
    size, forks = args.thousand_hosts, args.thousand_forks
    with tempfile.TemporaryDirectory() as workdir:
        base = pathlib.Path(workdir)
        kubectl = fake_kubectl.write(base / "kubectl")
        start = time.perf_counter()
        inventory = thousand_fleet(base / "fleet", size, kubectl)
        print("a fleet of %d node copies built in %.0f s (forks %d, under ansible-runner)" % (size, time.perf_counter() - start, forks))
        ping = base / "ping.yml"
        ping.write_text("- name: ping\n  hosts: gpu\n  gather_facts: false\n  tasks:\n    - name: ping\n      ansible.builtin.ping:\n")
        books = {"ping": (str(ping), {}),
                 "check": (os.path.join(REPO, "playbooks", "check.yml"), {"rke2_numa_report_dir": base / "out-check"}),
                 "plan": (os.path.join(REPO, "playbooks", "plan.yml"), {"rke2_numa_report_dir": base / "out-plan",
                                                                        "rke2_numa_plan_dir": base / "plans"})}
        results = {name: [] for name in books}
        for i in range(args.thousand_rounds):
            for name in (("ping", "check", "plan") if i % 2 == 0 else ("plan", "check", "ping")):
                playbook, extravars = books[name]
                result = runner_run(base, "%s-%d" % (name, i), playbook, inventory, extravars, forks)
                result["report_s"] = sum(e["event_data"].get("duration") or 0 for e in result.pop("events")
                                         if e["event"] == "runner_on_ok" and e["event_data"].get("task") in REPORT_TASKS)
                results[name].append(result)
                print("  round %d %-5s wall %6.1f s, CPU %6.1f s, controller RSS %4.0f MB, events %5.2f KB a host, report %.1f s"
                      % (i + 1, name, result["wall"], result["cpu"], result["rss_mb"], result["event_bytes"] / 1024.0 / size,
                         result["report_s"]), flush=True)
                if args.thousand_profile:   # where the event data and the time go: the events of each task
                    for task, (count, total, seconds) in sorted(result["by_task"].items(), key=lambda kv: -kv[1][1])[:25]:
                        print("      %5d events %8.1f KB %7.1f s  %s" % (count, total / 1024.0, seconds, task))
        med = {name: {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu", "rss_mb", "event_bytes", "report_s")}
               for name, rs in results.items()}
        targets = THOUSAND_TARGETS
        print("%d hosts, forks %d, %d round(s) (medians):" % (size, forks, args.thousand_rounds))
        print("  %-6s %8s %6s %8s %6s %8s %9s %9s %8s" % ("", "wall s", "/ping", "CPU s", "/ping", "RSS MB", "events/h", "report s",
                                                          "page MB"))
        for name in ("ping", "check", "plan"):
            m = med[name]
            out = books[name][1].get("rke2_numa_report_dir")
            page = os.path.getsize(str(out / "index.html")) / 1e6 if out else 0
            print("  %-6s %8.1f %6.2f %8.1f %6.2f %8.0f %7.2fKB %9s %8s" % (
                name, m["wall"], m["wall"] / med["ping"]["wall"], m["cpu"], m["cpu"] / med["ping"]["cpu"], m["rss_mb"],
                m["event_bytes"] / 1024.0 / size, "%.1f" % m["report_s"] if out else "-", "%.2f" % page if out else "-"))
        print("  targets: wall <= %.1fx ping, report <= %.0f s and <= %.0f MB, controller RSS <= %.0f MB, events <= %.0f KB a host"
              % (targets["wall"], targets["report_s"], targets["page_mb"], targets["rss_mb"], targets["event_kb"]))
        for name, key in (("check", "rke2_numa_fleet"), ("plan", "rke2_numa_plans")):
            counts, wrong = thousand_counts(str(books[name][1]["rke2_numa_report_dir"]), results[name][-1]["artifacts"], key)
            print("  %s counts (%s): %s" % (name, ", ".join(sorted(counts)), "agree: " + json.dumps(counts["artifacts"], sort_keys=True)
                                            if not wrong else "DISAGREE - " + "; ".join(wrong)))


if __name__ == "__main__":
    sys.exit(main())
