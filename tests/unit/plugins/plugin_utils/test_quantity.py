# -*- coding: utf-8 -*-
"""Kubernetes memory quantities: exact whole bytes in, whole MiB out."""

from __future__ import annotations

import pytest

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.quantity import (
    GIB,
    MIB,
    QuantityError,
    binary_si,
    device_count,
    format_mib,
    hugepage_resource,
    human,
    parse_bytes,
)


@pytest.mark.parametrize(
    "value, nbytes",
    [
        (0, 0),
        (1073741824, GIB),
        ("0", 0),
        ("1073741824", GIB),
        ("1Gi", GIB),
        ("512Mi", 512 * MIB),
        ("1G", 10 ** 9),
        ("500M", 500 * 10 ** 6),
        ("4k", 4000),
        ("4Ki", 4096),
        ("1Ti", 1024 * GIB),
        ("1.5Gi", 1536 * MIB),
        ("0.5Mi", 512 * 1024),
        (".5Ki", 512),
        ("2.", 2),
        ("+1Mi", MIB),
        (" 1Gi\n", GIB),
        ("1.5k", 1500),
    ],
)
def test_parse_bytes(value, nbytes):
    assert parse_bytes(value) == nbytes


@pytest.mark.parametrize(
    "value, fragment",
    [
        (-1, "is negative"),
        ("-1Gi", "is not a memory quantity"),
        ("1.5", "is not a whole number of bytes"),
        ("0.1Ki", "is not a whole number of bytes"),
        ("1.0000001k", "is not a whole number of bytes"),
        ("1GB", "is not a memory quantity"),
        ("1gi", "is not a memory quantity"),
        ("1 Gi", "is not a memory quantity"),
        ("Gi", "is not a memory quantity"),
        ("", "is not a memory quantity"),
        ("lots", "is not a memory quantity"),
        ("1e3", "is not a memory quantity"),
        ("0x10", "is not a memory quantity"),
        ("1m", "is not a memory quantity"),
        (None, "is not a memory quantity"),
        (True, "is not a quantity"),
        (1.5, "is not a whole number of bytes"),
    ],
)
def test_parse_bytes_refuses(value, fragment):
    with pytest.raises(QuantityError, match=fragment):
        parse_bytes(value, "kube_reserved.memory")


def test_parse_bytes_names_what_it_parses():
    with pytest.raises(QuantityError, match=r"^eviction_hard memory\.available: 'x'"):
        parse_bytes("x", "eviction_hard memory.available")


def test_quantity_error_is_a_value_error():
    assert issubclass(QuantityError, ValueError)


@pytest.mark.parametrize(
    "nbytes, text",
    [(0, "0Mi"), (MIB, "1Mi"), (GIB, "1024Mi"), (1274 * MIB, "1274Mi"), (3 * GIB + 500 * MIB, "3572Mi")],
)
def test_format_mib(nbytes, text):
    assert format_mib(nbytes) == text


@pytest.mark.parametrize("nbytes", [1, MIB - 1, MIB + 1, 10 ** 9, GIB + 512])
def test_format_mib_refuses_partial_mib(nbytes):
    with pytest.raises(QuantityError, match="%d bytes is not a whole number of MiB" % nbytes):
        format_mib(nbytes)


@pytest.mark.parametrize("text", ["1Mi", "1274Mi", "2548Mi", "1Gi", "1.5Gi", "1024Ki"])
def test_format_mib_round_trips(text):
    assert parse_bytes(format_mib(parse_bytes(text))) == parse_bytes(text)


@pytest.mark.parametrize(
    "nbytes, text",
    [(0, "0Mi"), (512 * MIB, "512Mi"), (GIB, "1.0Gi"), (1536 * MIB, "1.5Gi"), (1024 * GIB, "1024.0Gi")],
)
def test_human(nbytes, text):
    assert human(nbytes) == text


@pytest.mark.parametrize(
    "nbytes, text",
    [(0, "0"), (512, "512"), (1023, "1023"), (1024, "1Ki"), (1536, "1536"), (1536 * 1024, "1536Ki"),
     (16 * GIB, "16Gi"), (16384 * MIB, "16Gi"), (3 * MIB, "3Mi"), (1024 * GIB, "1Ti"), (2 ** 60, "1Ei"), (2 ** 70, "1024Ei")],
)
def test_binary_si_is_the_canonical_binary_quantity(nbytes, text):
    assert binary_si(nbytes) == text


# The kubelet names a hugepage size resource.NewQuantity(bytes, BinarySI): arm64 kernels with
# 4K pages offer 64K, 2M, 32M and 1G; with 64K pages 2M, 512M and 16G.
@pytest.mark.parametrize(
    "size_kb, name",
    [(64, "hugepages-64Ki"), (2048, "hugepages-2Mi"), (32768, "hugepages-32Mi"), (524288, "hugepages-512Mi"),
     (1048576, "hugepages-1Gi"), (16777216, "hugepages-16Gi"), ("16777216", "hugepages-16Gi")],
)
def test_hugepage_resource_names(size_kb, name):
    assert hugepage_resource(size_kb) == name


@pytest.mark.parametrize("value, unreadable, expected", [
    (None, 1, 0), ("2", 0, 2), (8, 0, 8), ("0", 1, 0), ("1.5", 0, 0), ("1.5", 1, 1), ("500m", 1, 1), ("", 0, 0)])
def test_a_device_count_is_a_whole_number_and_an_unreadable_one_counts_as_the_caller_says(value, unreadable, expected):
    """One reading of an extended resource's count for the audit (a pod's GPUs: an odd quantity still asks for one),
    the DRA audit and the capacity check (a Node's allocatable: an odd one offers none)."""
    assert device_count(value, unreadable) == expected
