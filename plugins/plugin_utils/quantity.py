# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes resource quantities (k8s.io/apimachinery resource.Quantity).

Only what the collection needs: parse ``1Gi``, ``512Mi``, ``1G``, ``1.5Gi``,
``1073741824`` into bytes, exactly (fractions of a byte are refused), format
whole MiB as ``NMi``, name hugepage sizes the way the kubelet does, and read a
CPU quantity (``2``, ``500m``, ``1.5``) exactly, to tell whole CPUs from
fractions.
"""

from __future__ import annotations

import re
from fractions import Fraction

MIB = 1024 * 1024
GIB = 1024 * MIB
_SUFFIX = {
    "": 1, "k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18,
    "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60,
}
_QUANTITY = re.compile(r"^\+?(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$")
_CPU_QUANTITY = re.compile(r"^\+?(\d+(?:\.\d*)?|\.\d+)(m|k|M|G)?$")


class QuantityError(ValueError):
    """Not a memory quantity the kubelet would take as a whole number of bytes."""


def parse_bytes(value, what="quantity"):
    """Parse a Kubernetes memory quantity (or a non-negative int) into whole bytes."""
    if isinstance(value, bool):
        raise QuantityError("%s: %r is not a quantity" % (what, value))
    if isinstance(value, int):
        if value < 0:
            raise QuantityError("%s: %r is negative" % (what, value))
        return value
    m = _QUANTITY.match(str(value).strip())
    if not m:
        raise QuantityError("%s: %r is not a memory quantity like 1Gi, 512Mi or 1073741824" % (what, value))
    amount = Fraction(m.group(1)) * _SUFFIX[m.group(2) or ""]
    if amount.denominator != 1:
        raise QuantityError("%s: %r is not a whole number of bytes" % (what, value))
    return int(amount)


def parse_cpu(value, what="cpu"):
    """A CPU quantity (``2``, ``2000m``, ``1.5``, ``500m``) as an exact Fraction of CPUs.
    The CPU Manager pins a Guaranteed container only when this is a whole number."""
    if isinstance(value, bool):
        raise QuantityError("%s: %r is not a quantity" % (what, value))
    m = _CPU_QUANTITY.match(str(value).strip())
    if not m:
        raise QuantityError("%s: %r is not a CPU quantity like 2 or 500m" % (what, value))
    scale = {"m": Fraction(1, 1000), "": 1, "k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9}[m.group(2) or ""]
    return Fraction(m.group(1)) * scale


def device_count(value, unreadable=0):
    """How many devices an extended resource's quantity counts (``nvidia.com/gpu`` in a pod's limits, a Node's
    allocatable): a whole number, as the device plugin API counts devices; none - 0; anything else - ``unreadable``
    (the scheduler would refuse it, a pod that asks that way still asks for one)."""
    if value is None:
        return 0
    try:
        return int(str(value))
    except ValueError:
        return unreadable


def format_mib(nbytes):
    """Format a whole number of MiB as ``NMi``."""
    if nbytes % MIB:
        raise QuantityError("%d bytes is not a whole number of MiB" % nbytes)
    return "%dMi" % (nbytes // MIB)


_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def binary_si(nbytes):
    """Whole bytes in the canonical form of a BinarySI ``resource.Quantity``:
    the largest binary suffix (Ki to Ei) that divides the count exactly
    (``16Gi``, not ``16384Mi``; ``1536Ki``). Below 1024 bytes the kubelet
    prints a plain number."""
    number, exponent = int(nbytes), 0
    if abs(number) >= 1024:
        while exponent < len(_BINARY_SUFFIXES) - 1 and number % 1024 == 0:
            number //= 1024
            exponent += 1
    return "%d%s" % (number, _BINARY_SUFFIXES[exponent])


def hugepage_resource(size_kb):
    """The kubelet's resource name of a hugepage size in kB (v1helper.HugePageResourceName of
    ``resource.NewQuantity(bytes, BinarySI)``): ``hugepages-2Mi``, ``hugepages-1Gi``,
    ``hugepages-512Mi``, ``hugepages-16Gi``, ``hugepages-64Ki``.

    The one place a size is named: the memory manager's checkpoint, the plan,
    verify and the reports all use it."""
    return "hugepages-" + binary_si(int(size_kb) * 1024)


def human(nbytes):
    """Bytes as a short readable string (GiB with one decimal, or MiB)."""
    if nbytes >= GIB:
        return "%.1fGi" % (nbytes / float(GIB))
    return "%dMi" % (nbytes // MIB)
