"""Check the `linux` lines Debian's real grub-mkconfig wrote to /boot/grub/grub.cfg.

Run on the Molecule node by ../reboot.yml before each "reboot":

    check_grub_cfg.py WANTED_JSON HOST_ARGS STANDIN

- WANTED_JSON: the plan's kernel args (a JSON list; [] before anything was planned);
- HOST_ARGS: the boot args the host had of its own (they must all stay);
- STANDIN: the update-grub stand-in the unit tests use; it is run on a copy of
  /etc/default/grub and grub.d/*.cfg and must give the same arguments as the
  real GRUB (it is the oracle of the stand-in).

Every `linux` line of 10_linux (the default entry, the advanced one and the
recovery one) must hold each planned arg exactly once, no other value of a
name the collection manages, every host arg, and each `hugepages=` right after
its `hugepagesz=`. Prints a JSON summary; exits 1 naming the first problem.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

GRUB_CFG = "/boot/grub/grub.cfg"
# The names whose values the plan decides (the pools are checked as pairs below).
SINGLE = ("isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity", "default_hugepagesz")
LINUX = re.compile(r"^\s*linux\s+(\S+)\s+(.*)$", re.M)


def linux_args(text):
    """[(kind, [arg, ...])] for each `linux` line, kind normal or recovery, args after `ro`."""
    out = []
    for _kernel, rest in LINUX.findall(text):
        words = rest.split()
        if "ro" in words:
            words = words[words.index("ro") + 1:]
        kind = "recovery" if "single" in words else "normal"
        out.append((kind, [w for w in words if w != "single"]))
    return out


def pools(words):
    """[(hugepagesz, hugepages)] in order; None for a hugepages= that does not follow a hugepagesz=."""
    out = []
    for i, w in enumerate(words):
        if w.startswith("hugepages="):
            before = words[i - 1] if i else ""
            out.append((before.partition("=")[2], w.partition("=")[2]) if before.startswith("hugepagesz=") else None)
    return out


def problems(words, wanted, host):
    names = [w.partition("=")[0] for w in words]
    for arg in wanted + host:
        if words.count(arg) != 1:
            yield "%s appears %d times" % (arg, words.count(arg))
    for name in SINGLE:
        values = [w for w in words if w.partition("=")[0] == name]
        planned = [w for w in wanted if w.partition("=")[0] == name]
        if values != planned:
            yield "%s: %s, the plan has %s" % (name, values, planned)
    expected = pools(host) + pools(wanted)
    if sorted(pools(words), key=str) != sorted(expected, key=str):
        yield "hugepage pools %s (None: a hugepages= not right after its hugepagesz=), expected %s" % (pools(words), expected)
    if names.count("hugepagesz") != len(expected):
        yield "%d hugepagesz= for %d pools" % (names.count("hugepagesz"), len(expected))


def standin_args(standin):
    """The stand-in's lines for a copy of this system's GRUB defaults."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "etc/default"))
        shutil.copy("/etc/default/grub", os.path.join(root, "etc/default/grub"))
        if os.path.isdir("/etc/default/grub.d"):
            shutil.copytree("/etc/default/grub.d", os.path.join(root, "etc/default/grub.d"))
        env = dict(os.environ, RKE2_NUMA_STANDIN_ROOT=root, RKE2_NUMA_STANDIN_LOG="")
        subprocess.run([standin], env=env, check=True, capture_output=True)
        with open(os.path.join(root, GRUB_CFG.lstrip("/")), encoding="utf-8") as f:
            return linux_args(f.read())


def main():
    wanted, host, standin = json.loads(sys.argv[1]), sys.argv[2].split(), sys.argv[3]
    with open(GRUB_CFG, encoding="utf-8") as f:
        lines = linux_args(f.read())
    kinds = [line[0] for line in lines]
    errors = []
    if "normal" not in kinds or "recovery" not in kinds:
        errors.append("%s: expected normal and recovery linux lines, found %s" % (GRUB_CFG, kinds))
    for kind, words in lines:
        errors += ["%s line %s: %s" % (kind, " ".join(words), p) for p in problems(words, wanted, host)]
    mine = dict(standin_args(standin))
    for kind, words in lines:
        if mine.get(kind) != words:
            errors.append("the update-grub stand-in disagrees with GRUB on the %s line: %s vs %s" % (kind, mine.get(kind), words))
    print(json.dumps({"lines": lines, "errors": errors}))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
