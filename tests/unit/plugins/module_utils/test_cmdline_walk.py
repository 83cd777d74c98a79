# -*- coding: utf-8 -*-
"""The grub_d drop-in's sh against walk_cmdline, on the same command lines.

Both are the walk of kernel_args.WALK_KINDS (and the kernel's reading of quotes): the
drop-in, sourced by each shell here after GRUB_CMDLINE_LINUX and _DEFAULT are set,
must leave exactly what walk_cmdline makes of those two lines with the same
ownership - on the real grub files, on hand-picked lines and on many generated ones
(quoted values, escapes, repeated keys, ours and others', every size spelling)."""

from __future__ import annotations

import random
import shlex
import subprocess

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_grub import render_grub_dropin, static_grub_cmdline
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import (
    WALK_KINDS,
    WHITESPACE,
    norm_arg,
    ownership,
    split_cmdline,
    walk_cmdline,
)
from ansible_collections.maitred.rke2_numa.tests.fixtures.kernel_args_cases import (
    DEBIAN12_GRUB,
    FULL,
    M,
    SHELLS,
    SLE_MICRO_GRUB,
    WANTED,
    w,
)

# The plans the drop-in is rendered for: none, by-name args only, a pool with and without a default size,
# a 2M pool, a default size alone.
PLANS = [[], FULL, WANTED, ["isolcpus=2-7", "hugepagesz=1G", "hugepages=0:2"], ["hugepagesz=2M", "hugepages=64"],
         ["nohz_full=3", "default_hugepagesz=2M", "hugepages=64"]]

# Arguments the generated lines are made of.
OURS = ["isolcpus=1-3", "isolcpus", "isolcpus=", "nohz-full=2", "nohz_full=5", "rcu_nocbs=1", "irqaffinity=0", "Isolcpus=1",
        "isolcpus=managed_irq,1-55,57-111"]
OTHERS = ["quiet", "ro", "root=UUID=0a1b", "console=ttyS0,115200", "mitigations=off", "rd.shell=0", "--", "init=/bin/sh",
          "foo=*", "x=[ab]?", "y=$HOME", "z=`id`", "it's", "a;b", "ISOLCPUS", "isolcpus_x=1", "xisolcpus=1", "=isolcpus"]
POOLS = ["hugepagesz=2M", "hugepagesz=1G", "hugepagesz=1024M", "hugepagesz=2048k", "hugepagesz=1GB", "hugepagesz=01g",
         "hugepagesz=0", "hugepagesz=foo", "hugepagesz=", "hugepagesz", "default_hugepagesz=1G", "default-hugepagesz=2M",
         "default_hugepagesz=2M", "default_hugepagesz=", "hugepages=8", "hugepages=0:16,1:16", "hugepages", "hugepages=",
         "hugepagesz==1G"]
QUOTED = ['dyndbg="file x.c +p"', 'foo="isolcpus=3 bar"', '"isolcpus=1-3"', 'isolcpus="1-3"', 'isolcpus="1 2"', '"quiet"',
          'a="b  c"', '"hugepagesz=2M"', 'hugepagesz="1G"', '"hugepages=3', '"default_hugepagesz=2M"', 'b"c"d', '"isolcpus"',
          '"', 'x="', '\\isolcpus=2', '\\\\hugepagesz=1G', 'x=\\isolcpus', '\\"isolcpus=4"']
TOKENS = OURS + OTHERS + POOLS + QUOTED
SEPARATORS = [" ", " ", " ", "  ", "\t", "\n", " \t "]


def generated(count, seed):
    rnd = random.Random(seed)

    def line(most):
        parts = [rnd.choice(TOKENS) for dummy in range(rnd.randint(0, most))]
        text = "".join(rnd.choice(SEPARATORS) + p for p in parts)
        return text + rnd.choice(["", "", " ", "\n"])
    return [(line(8), line(6)) for dummy in range(count)]


# (GRUB_CMDLINE_LINUX, GRUB_CMDLINE_LINUX_DEFAULT) picked by hand: repeated keys, a pool split across the
# two, counts before any size, a default size after its count, quotes left open.
HAND = [
    ("", ""),
    ("isolcpus=1 isolcpus=2 nohz_full=3 nohz-full=4", "isolcpus=5"),
    ("hugepagesz=2M hugepages=1024 isolcpus=1-3", "quiet"),
    ("default_hugepagesz=2M hugepages=512", "quiet"),
    ("hugepages=256 default_hugepagesz=2M", "quiet"),
    ("hugepagesz=2M", "hugepages=512 quiet"),
    ("hugepages=256", "quiet"),
    ("rd.shell=0", "quiet hugepages=256"),
    ("default_hugepagesz=1G hugepagesz=1G hugepages=4 hugepagesz=2M hugepages=8", ""),
    ("hugepagesz=1G hugepages=4 hugepages=5 hugepagesz=1G hugepages=6", "hugepagesz=2M hugepages=7 hugepages=8"),
    ("default_hugepagesz=1G hugepages=4", "hugepages=5"),
    ('foo="a isolcpus=1', 'b" isolcpus=2'),
    ('"isolcpus=1-3 quiet', "nohz_full=1"),
    ("a\tb\n isolcpus=1 \r c\vd\fe", " x "),
]


def sh_result(shell, dropin, lines, tmp_path):
    """What each shell leaves in GRUB_CMDLINE_LINUX and _DEFAULT after sourcing the drop-in on each pair of lines."""
    (tmp_path / "dropin.cfg").write_text(dropin)
    script = "set -e\n" + "".join(
        "GRUB_CMDLINE_LINUX=%s GRUB_CMDLINE_LINUX_DEFAULT=%s\n. ./dropin.cfg\n"
        "printf '%%s\\0%%s\\0' \"$GRUB_CMDLINE_LINUX\" \"$GRUB_CMDLINE_LINUX_DEFAULT\"\n" % (shlex.quote(a), shlex.quote(b))
        for a, b in lines)
    out = subprocess.run([shell, "-c", script], cwd=str(tmp_path), capture_output=True, check=True).stdout.decode()
    values = out.split("\0")[:-1]
    return list(zip(values[0::2], values[1::2]))


def python_result(wanted, lines):
    """walk_cmdline on the same pairs, with the ownership the drop-in is rendered for, joined as the sh joins them."""
    own = ownership(wanted, M)
    out = []
    for linux, default in lines:
        (a, b), dummy = walk_cmdline([split_cmdline(linux), split_cmdline(default)], wanted, own, strict=False, check=False)
        out.append((" ".join(a), " ".join(b)))
    return out


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("plan", PLANS, ids=lambda p: " ".join(p) or "none")
def test_the_dropin_and_walk_cmdline_agree(tmp_path, shell, plan):
    wanted = w(*plan)
    lines = HAND + generated(300, seed=len(plan)) + [(t, t) for t in TOKENS]
    got = sh_result(shell, render_grub_dropin(wanted, M), lines, tmp_path)
    expected = python_result(wanted, lines)
    wrong = [(line, sh, py) for line, sh, py in zip(lines, got, expected) if sh != py]
    assert len(got) == len(lines)
    assert wrong == [], "%d of %d lines differ; the first: %r" % (len(wrong), len(lines), wrong[:3])


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("grub", [DEBIAN12_GRUB, SLE_MICRO_GRUB], ids=["debian12", "sle-micro"])
@pytest.mark.parametrize("plan", PLANS, ids=lambda p: " ".join(p) or "none")
def test_on_the_real_grub_files(tmp_path, shell, grub, plan):
    wanted = w(*plan)
    (tmp_path / "grub").write_text(grub)
    (tmp_path / "dropin.cfg").write_text(render_grub_dropin(wanted, M))
    out = subprocess.run([shell, "-c", 'set -e; . ./grub; . ./dropin.cfg; printf "%s\\0%s\\0" "$GRUB_CMDLINE_LINUX" "$GRUB_CMDLINE_LINUX_DEFAULT"'],
                         cwd=str(tmp_path), capture_output=True, check=True).stdout.decode()
    env = static_grub_cmdline([grub], ())
    assert tuple(out.split("\0")[:2]) == python_result(wanted, [(env["GRUB_CMDLINE_LINUX"], env["GRUB_CMDLINE_LINUX_DEFAULT"])])[0]


def test_the_lines_cover_every_row_of_the_table_and_every_whitespace():
    for kind in WALK_KINDS:
        for name in kind["names"] or M[:1]:
            assert any(norm_arg(t)[0] == name and norm_arg(t)[1] for t in TOKENS), name
    assert set(WHITESPACE) <= set("".join(SEPARATORS) + "".join(a + b for a, b in HAND))
