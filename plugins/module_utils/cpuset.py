# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel cpulist and cpumask parsing and formatting.

The one home of cpulist syntax for the whole collection: the topology reader on
the host and the planner on the controller both use it.

Syntax (Documentation/admin-guide/kernel-parameters.rst, "cpu lists"):
``0-3,8,10-15`` and the strided form ``0-15:2/4`` (from ``a-b``, use the first
``used`` CPUs of every group of ``group`` CPUs). Masks (``cpumap``,
``local_cpus``) are comma-separated 32-bit hex words, most significant first.

Both parsers take a ``limit``: ids must be below it, and a list that names a
larger id is refused before it is expanded (``0-4194303`` is one range, not four
million CPUs to walk). The topology reader passes the kernel's own limits below.
"""

from __future__ import annotations

import re

_RANGE = re.compile(r"^(\d+)(?:-(\d+)(?::(\d+)/(\d+))?)?$")

# The most CPUs a Linux kernel can hold: CONFIG_NR_CPUS is at most 8192 (x86_64
# with CONFIG_MAXSMP, arch/x86/Kconfig "config NR_CPUS_RANGE_END"; arm64 and
# powerpc stop lower), so every CPU id is below 8192.
CPU_ID_LIMIT = 8192
# The most NUMA nodes: MAX_NUMNODES = 1 << CONFIG_NODES_SHIFT, and NODES_SHIFT
# is at most 10 (x86_64 MAXSMP, mm/Kconfig / arch/x86/Kconfig "config NODES_SHIFT").
NODE_ID_LIMIT = 1024


class CpusetError(ValueError):
    """A cpulist or cpumask that cannot be parsed."""


def parse_cpulist(text, limit=None):
    """Parse a kernel cpulist (``"0-3,8"``) into a sorted list of CPU ids.

    An empty or whitespace-only string is the empty set. Raises CpusetError on
    anything else that is not valid cpulist syntax, and, with ``limit``, on any
    id >= limit (checked per range before it is expanded, so it fails fast).
    """
    if text is None:
        raise CpusetError("cpulist is None")
    text = str(text).strip()
    if not text:
        return []
    cpus = set()
    for part in text.split(","):
        part = part.strip()
        m = _RANGE.match(part)
        if not m:
            raise CpusetError("invalid cpulist %s: bad element %s" % (_short(text), _short(part)))
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) is not None else first
        if last < first:
            raise CpusetError("invalid cpulist %s: range %s runs backwards" % (_short(text), _short(part)))
        if limit is not None and last >= limit:
            raise CpusetError("invalid cpulist %s: id %d in %s is beyond the kernel's limit (ids < %d)"
                              % (_short(text), last, _short(part), limit))
        if m.group(3) is not None:
            used, group = int(m.group(3)), int(m.group(4))
            if group == 0 or used == 0 or used > group:
                raise CpusetError("invalid cpulist %s: bad stride in %s" % (_short(text), _short(part)))
            for start in range(first, last + 1, group):
                cpus.update(c for c in range(start, min(start + used, last + 1)))
        else:
            cpus.update(range(first, last + 1))
    return sorted(cpus)


def format_cpulist(cpus):
    """Format CPU ids as the kernel's canonical cpulist (``"0-3,8"``)."""
    ids = sorted(set(int(c) for c in cpus))
    if any(c < 0 for c in ids):
        raise CpusetError("negative CPU id in %r" % (ids,))
    out = []
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else "%d-%d" % (ids[i], ids[j]))
        i = j + 1
    return ",".join(out)


def _short(text, room=40):
    """``text`` for a message, cut to ``room`` characters."""
    return repr(text if len(text) <= room else text[:room] + "...")


def parse_cpumask(text, limit=None):
    """Parse a kernel cpumask (``"00000000,0000ff00"``) into a sorted list of CPU ids.

    With ``limit``, a set bit at or above it is refused before the bits are walked.
    """
    if text is None:
        raise CpusetError("cpumask is None")
    words = str(text).strip().split(",")
    if words == [""]:
        return []
    cpus = []
    nbits = 0
    for word in reversed(words):
        word = word.strip()
        if word.lower().startswith("0x"):
            word = word[2:]
        if not word:
            value = 0
        else:
            try:
                value = int(word, 16)
            except ValueError:
                raise CpusetError("invalid cpumask %s: bad word %s" % (_short(text), _short(word)))
        if limit is not None and value and nbits + value.bit_length() > limit:
            raise CpusetError("invalid cpumask %s: bit %d is beyond the kernel's limit (ids < %d)"
                              % (_short(text), nbits + value.bit_length() - 1, limit))
        bit = 0
        while value:
            if value & 1:
                cpus.append(nbits + bit)
            value >>= 1
            bit += 1
        nbits += 32
    return sorted(cpus)
