# -*- coding: utf-8 -*-
from __future__ import annotations


import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import (
    CPU_ID_LIMIT,
    NODE_ID_LIMIT,
    CpusetError,
    format_cpulist,
    parse_cpulist,
    parse_cpumask,
)


@pytest.mark.parametrize(
    "text, cpus",
    [
        ("", []),
        ("  \n", []),
        ("0", [0]),
        ("0-3", [0, 1, 2, 3]),
        ("0-1,8-9\n", [0, 1, 8, 9]),
        ("8,0,4", [0, 4, 8]),
        ("3,1-3", [1, 2, 3]),
        ("0-15:2/4", [0, 1, 4, 5, 8, 9, 12, 13]),
        ("0-7:1/3", [0, 3, 6]),
    ],
)
def test_parse_cpulist(text, cpus):
    assert parse_cpulist(text) == cpus


@pytest.mark.parametrize("text", ["a", "1-", "-1", "3-1", "0,,2", "0-3:0/2", "0-3:3/2", "0x3", "1 2", None])
def test_parse_cpulist_rejects(text):
    with pytest.raises(CpusetError):
        parse_cpulist(text)


@pytest.mark.parametrize(
    "cpus, text",
    [
        ([], ""),
        ([0], "0"),
        ([3, 1, 2, 0], "0-3"),
        ([0, 2, 4], "0,2,4"),
        ([0, 1, 2, 56, 57, 58, 100], "0-2,56-58,100"),
        ([5, 5, 6], "5-6"),
    ],
)
def test_format_cpulist(cpus, text):
    assert format_cpulist(cpus) == text


def test_format_rejects_negative():
    with pytest.raises(CpusetError):
        format_cpulist([-1, 0])


@pytest.mark.parametrize("cpus", [[], [0], [0, 1, 2, 3], [1, 3, 5, 7, 9], list(range(0, 384, 2)), [0, 191, 192, 383]])
def test_roundtrip(cpus):
    assert parse_cpulist(format_cpulist(cpus)) == cpus


@pytest.mark.parametrize(
    "text, cpus",
    [
        ("00000000", []),
        ("0000000f", [0, 1, 2, 3]),
        ("00000001,00000000", [32]),
        ("0000,00000000,000000ff,ff000000,00000000,00000000", list(range(88, 104))),
        ("0x000000ff,0xff000000,,0x0", list(range(88, 104))),
        ("", []),
    ],
)
def test_parse_cpumask(text, cpus):
    assert parse_cpumask(text) == cpus


@pytest.mark.parametrize("text", ["zz", "0000000g,00000000", None])
def test_parse_cpumask_rejects(text):
    with pytest.raises(CpusetError):
        parse_cpumask(text)


# ---------------------------------------------------------------- kernel limits
# The reader bounds every list by what a kernel can hold (CPU_ID_LIMIT, NODE_ID_LIMIT):
# "0-4194303" must be refused at once, not expanded into four million CPUs.


@pytest.mark.parametrize(
    "text, limit",
    [
        ("0-4194303", CPU_ID_LIMIT),
        ("8192", CPU_ID_LIMIT),
        ("0-3,8191-8192", CPU_ID_LIMIT),
        ("0-4194303:1/2", CPU_ID_LIMIT),
        ("0-99999999999999999999", CPU_ID_LIMIT),
        ("1024", NODE_ID_LIMIT),
        ("0-2", 2),
    ],
)
def test_parse_cpulist_refuses_ids_beyond_the_limit_fast(text, limit, cost):
    with cost() as spent, pytest.raises(CpusetError, match=r"beyond the kernel's limit|>= %d" % limit):
        parse_cpulist(text, limit=limit)
    assert spent.bytes < 16 * 2 ** 20 and spent.cpu < 1.0, "the ids were expanded (%d bytes, %.2f s)" % (spent.bytes, spent.cpu)


@pytest.mark.parametrize("text, limit", [("0-8191", CPU_ID_LIMIT), ("0-1023", NODE_ID_LIMIT), ("0-1", 2), ("", 1)])
def test_parse_cpulist_accepts_ids_up_to_the_limit(text, limit):
    assert parse_cpulist(text, limit=limit) == parse_cpulist(text)


def test_kernel_limits():
    # CONFIG_NR_CPUS max 8192 (x86_64 MAXSMP), CONFIG_NODES_SHIFT max 10
    assert (CPU_ID_LIMIT, NODE_ID_LIMIT) == (8192, 1024)


@pytest.mark.parametrize(
    "text",
    ["ffffffff," * 300 + "ffffffff", "1" + ",00000000" * 256, "00000001" + ",00000000" * 30000],
)
def test_parse_cpumask_refuses_bits_beyond_the_limit_fast(text, cost):
    with cost() as spent, pytest.raises(CpusetError, match="beyond the kernel's limit"):
        parse_cpumask(text, limit=CPU_ID_LIMIT)
    assert spent.bytes < 16 * 2 ** 20 and spent.cpu < 1.0, "the bits were expanded (%d bytes, %.2f s)" % (spent.bytes, spent.cpu)


def test_parse_cpumask_accepts_the_last_cpu_and_leading_zero_words():
    text = "80000000" + ",00000000" * 255  # CPU 8191 in a 8192-bit mask
    assert parse_cpumask(text, limit=CPU_ID_LIMIT) == [8191]
    assert parse_cpumask("00000000," * 400 + "00000003", limit=CPU_ID_LIMIT) == [0, 1]
