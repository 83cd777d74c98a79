# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run ``molecule test`` for each scenario, MOLECULE_JOBS (default 2) at a time, and time it.

``make molecule`` runs this from the collection root. Each scenario runs in its
own ``molecule test -s NAME`` (after ``molecule destroy -s NAME`` when an interrupted run left its containers or
state; the scenarios' test sequences start at create) (never ``--all --workers N``: Molecule's parallel
mode assumes instances shared between scenarios), whatever the others do; the
scenarios' containers and volumes have names of their own, so two run side by
side (much of a scenario's time is waiting on its stand-ins, not on the CPU).
The biggest scenarios (by the length of their converge.yml) start first. With
one job the output is passed through as it comes; with more, each scenario's
output is printed whole when it ends. Then it prints the wall
clock time of each action (from Molecule's ``[NAME > ACTION] Executing`` line
to its ``Executed`` line) and ends with one plain line
``molecule: N passed, M failed`` (a scenario passes when ``molecule test``
exits 0 and its whole output never holds the fake join token of
``extensions/molecule/shared/vars/main.yml``; a line that holds it is echoed
with the token blanked). Exits 1 when any scenario failed.

Usage: ``python scripts/molecule_test.py [SCENARIO ...]`` (default: every
``extensions/molecule/*/molecule.yml``, in name order).
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Molecule 25+ announces each action as "[NAME > ACTION] Executing" and then
# "[NAME > ACTION] Executed: Successful" (or Failed, ...), and with colours on
# as "NAME \u279c ACTION: Executing".
ACTION = re.compile(r"(?:\[(?P<s1>[\w./-]+) > (?P<a1>[\w-]+)\]|(?P<s2>[\w./-]+) \u279c (?P<a2>[\w-]+):) "
                    r"(?P<what>Executing|Executed)(?:: (?P<result>\w+))?")


def scenarios_in(root="extensions/molecule"):
    """Names of the scenario folders under root that hold a molecule.yml."""
    return sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(root, "*", "molecule.yml")))


def shared_token(path="extensions/molecule/shared/vars/main.yml"):
    """The fake join token every apply scenario writes into config.yaml."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("__rke2_numa_molecule_token:"):
                return line.split(":", 1)[1].strip()
    raise SystemExit("molecule_test: no __rke2_numa_molecule_token in %s" % path)


def biggest_first(scenarios, root="extensions/molecule"):
    """The scenarios, the longest converge.yml first (the longest runs should not start last)."""
    def size(name):
        try:
            with open(os.path.join(root, name, "converge.yml"), encoding="utf-8") as f:
                return len(f.readlines())
        except OSError:
            return 0
    return sorted(scenarios, key=lambda name: (-size(name), name))


def state_dir(scenario):
    """Molecule's ephemeral folder of one scenario (its state.yml, inventory and keys): ours, under .build."""
    return os.path.join(REPO, ".build", "molecule", scenario)


def leftovers(scenario, names=None):
    """What an interrupted run of ``scenario`` left: its containers (rke2-numa-SCENARIO and rke2-numa-SCENARIO-*,
    config.yml's naming) and a Molecule state that says they were created. ``names``: the containers there are."""
    if names is None:
        out = subprocess.run(["podman", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True, check=False)
        names = out.stdout.split()
    prefix = "rke2-numa-" + scenario
    found = [n for n in names if n == prefix or n.startswith(prefix + "-")]
    try:
        with open(os.path.join(state_dir(scenario), "state.yml"), encoding="utf-8") as f:
            if re.search(r"^created: true$", f.read(), re.M):
                found.append("state.yml: created")
    except OSError:
        pass
    return found


def run(scenario, env, rows, token, out):
    """Run one scenario, pass each line of its output to out, append (scenario, action, seconds, result)
    to rows; return its exit code, or 1 when the output held the token. An interrupted run's leftovers are
    destroyed first (the test sequences start at create: a destroy that finds nothing costs 4 CPU-s a scenario)."""
    start = {}
    leaks = 0
    molecule = os.path.join(os.path.dirname(sys.executable), "molecule")
    env = dict(env, MOLECULE_EPHEMERAL_DIRECTORY=state_dir(scenario))
    left = leftovers(scenario)
    if left:
        out("molecule_test: %s left by an earlier run: molecule destroy -s %s first\n" % (", ".join(left), scenario))
        done = subprocess.run([molecule, "destroy", "-s", scenario], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, encoding="utf-8", errors="replace", check=False)
        out(done.stdout)
        if done.returncode:
            return done.returncode
    proc = subprocess.Popen([molecule, "test", "-s", scenario], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, encoding="utf-8", errors="replace", bufsize=1)
    for line in proc.stdout:
        if token in line:
            leaks += 1
            line = "LEAK (join token blanked): " + line.replace(token, "<TOKEN>")
        out(line)
        m = ACTION.search(ANSI.sub("", line))
        if not m or (m["s1"] or m["s2"]) != scenario:
            continue
        action, now = m["a1"] or m["a2"], time.monotonic()
        if m["what"] == "Executing":
            start[action] = now
        elif action in start:
            rows.append((scenario, action, now - start.pop(action), m["result"] or ""))
    rc = proc.wait()
    if leaks:
        out("molecule_test: the join token appeared on %d line(s) of scenario %s\n" % (leaks, scenario))
        return rc or 1
    return rc


def echo(line):
    sys.stdout.write(line)
    sys.stdout.flush()


def main():
    scenarios = sys.argv[1:] or scenarios_in()
    if not scenarios:
        raise SystemExit("molecule_test: no scenario in extensions/molecule/*/molecule.yml")
    env = dict(os.environ)
    # the modules Ansible runs on this machine cache their bytecode (the containers' Python does it by its image)
    sys.path.insert(0, os.path.join(REPO, "tests", "fixtures", "code_cache"))
    import rke2_numa_code_cache  # pylint: disable=import-outside-toplevel,import-error

    rke2_numa_code_cache.environ(env, REPO)
    # Molecule runs ansible-playbook and friends from PATH: this venv's first.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    if not sys.stdout.isatty():
        # Plain text in CI logs and pipes (Molecule colours whenever TERM says xterm),
        # and wide enough that Ansible's task lines are not wrapped at 80 columns.
        env.setdefault("NO_COLOR", "1")
        env.setdefault("ANSIBLE_NOCOLOR", "1")
        env.setdefault("COLUMNS", "160")
    jobs = max(1, int(os.environ.get("MOLECULE_JOBS", "2")))
    rows, results, token, lock = [], {}, shared_token(), threading.Lock()

    def one(scenario):
        s0 = time.monotonic()
        if jobs == 1:
            print("==== molecule test -s %s" % scenario, flush=True)
            rc = run(scenario, env, rows, token, echo)
        else:
            lines = []
            rc = run(scenario, env, rows, token, lines.append)
            with lock:
                echo("==== molecule test -s %s\n%s" % (scenario, "".join(lines)))
        results[scenario] = (rc, time.monotonic() - s0)

    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(one, biggest_first(scenarios)))

    print("\n==== molecule: time of each action (%d at a time)" % jobs)
    for scenario, action, seconds, result in sorted(rows, key=lambda row: row[0]):
        print("%-16s %-12s %7.1f s  %s" % (scenario, action, seconds, result))
    for scenario, (rc, seconds) in sorted(results.items()):
        print("%-16s %-12s %7.1f s  %s" % (scenario, "total", seconds, "passed" if rc == 0 else "FAILED (exit %d)" % rc))
    print("%-16s %-12s %7.1f s" % ("all", "", time.monotonic() - t0))
    failed = sorted(s for s, (rc, _seconds) in results.items() if rc != 0)
    if failed:
        print("failed scenarios: %s" % " ".join(failed))
    print("molecule: %d passed, %d failed" % (len(results) - len(failed), len(failed)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
