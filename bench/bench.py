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
   sample plans in turn), in process: size and controller time; once as such a fleet is (identical machines
   share one drawn map) and once with every host's map different (the worst case).
5. Skipping a compliant fleet: playbooks/rolling.yml over 12 node filesystem
   copies that already run their plan (ansible_connection=local; kubectl -
   tests/fixtures/fake_kubectl.py - answers the access check, no roll's Lease,
   and the one Node list with no cordoned node) against playbooks/plan.yml
   over the same copies, alternating; medians and the ratio (target <= 1.3).

Run from the repo root with the venv active: python bench/bench.py [--rounds N] [--hosts N] [--only rolling]
"""

from __future__ import annotations

import argparse
import os
import re
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
    parser.add_argument("--only", choices=["rolling"], help="run one benchmark: the no-op roll against plan.yml")
    args = parser.parse_args(argv)
    if args.only == "rolling":
        bench_rolling(args)
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
    return 0


def bench_report(args, topologies, plans):
    import copy  # pylint: disable=import-outside-toplevel
    hosts = ["host-%04d" % i for i in range(args.plan_hosts)]
    fleets = {"identical machines": {}, "every map different": {}}
    for i, host in enumerate(hosts):
        topology = topologies[i % len(topologies)]
        fleets["identical machines"][host] = {"rke2_numa_topology": topology, "rke2_numa_plan": plans[i % len(plans)]}
        distinct = copy.deepcopy(topology)
        for dev in distinct["pci_devices"]:
            dev["uuid"] = "GPU-%s-%s" % (host, dev["address"])  # shown on the map: no two maps alike
        fleets["every map different"][host] = {"rke2_numa_topology": distinct, "rke2_numa_plan": plans[i % len(plans)]}
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


def bench_rolling(args):
    import pathlib  # pylint: disable=import-outside-toplevel
    with tempfile.TemporaryDirectory() as workdir:
        base = pathlib.Path(workdir)
        hosts = {}
        for i in range(args.fleet):
            root = make_node(base / ("gpu-%02d" % i), sockets=2, cores_per_socket=8, threads=2, gpus_per_node=4)
            comply(root, make_plan(read_topology(str(root))))
            hosts["gpu-%02d" % i] = root
        # An empty cluster: the access check answered with exactly the rights asked for, no roll's Lease, every read
        # (the pod audit's "get nodes,pods -A -o json") returns no item; any other call fails.
        kubectl = fake_kubectl.write(base / "kubectl")
        inventory = base / "inventory.yml"
        with open(str(inventory), "w") as f:
            f.write("gpu:\n  vars:\n    ansible_connection: local\n    ansible_python_interpreter: %s\n    rke2_numa_kubectl: %s\n  hosts:\n"
                    % (sys.executable, kubectl))
            for name, root in hosts.items():
                f.write("    %s:\n      rke2_numa_sysfs_root: %s\n      rke2_numa_boot_root: %s\n      rke2_numa_kubelet_dir: %s\n"
                        "      rke2_numa_config_path: %s\n" % (name, root, root, root / "var/lib/kubelet", root / "etc/rancher/rke2/config.yaml"))
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
        print("ratio rolling/plan: %.2f  (target <= 1.30)" % (med["rolling"] / med["plan"]))


if __name__ == "__main__":
    sys.exit(main())
