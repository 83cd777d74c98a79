# -*- coding: utf-8 -*-
"""Shared fixtures: the real hwloc sysfs dumps, unpacked once per session."""

from __future__ import annotations

import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _make_importable():
    """Let ``ansible_collections.maitred.rke2_numa`` import from a plain checkout.

    Inside a real ``ansible_collections/maitred/rke2_numa`` tree (ansible-test,
    an installed collection) nothing is done; otherwise .build/ holds a symlink
    tree (the Makefile makes the same one) that goes first on sys.path.
    """
    parts = REPO.split(os.sep)
    if parts[-3:-2] == ["ansible_collections"]:
        sys.path.insert(0, os.sep.join(parts[:-3]) or os.sep)
        return
    base = os.path.join(REPO, ".build")
    link = os.path.join(base, "ansible_collections", "maitred", "rke2_numa")
    if not os.path.islink(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(REPO, link)
    sys.path.insert(0, base)


_make_importable()


@pytest.fixture(scope="session")
def hwloc_root(tmp_path_factory):
    """Return a function: dump name -> path of its unpacked fs root (unpacked once)."""
    from ansible_collections.maitred.rke2_numa.tests.fixtures.hwloc_dumps import unpack

    base = tmp_path_factory.mktemp("hwloc")
    cache = {}

    def root(name):
        if name not in cache:
            cache[name] = unpack(name, base / name)
        return cache[name]

    return root
