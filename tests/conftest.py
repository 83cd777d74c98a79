# -*- coding: utf-8 -*-
"""Shared by tests/unit (in-process) and tests/integration (ansible-playbook, the stand-in servers, a browser):
the collection made importable, the real hwloc sysfs dumps unpacked once per session, the cost fixture."""

from __future__ import annotations

import fcntl
import os
import sys
import time
import tracemalloc

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
        try:
            os.symlink(REPO, link)
        except FileExistsError:
            pass  # another pytest-xdist worker made it first
    sys.path.insert(0, base)


_make_importable()


def _code_cache():
    """Every Python the tests start (ansible-playbook, the modules it runs here) caches the bytecode of the AnsiballZ
    modules in .build/code-cache (tests/fixtures/code_cache: a third less CPU per module task); RKE2_NUMA_CODE_CACHE=""
    turns it off."""
    from ansible_collections.maitred.rke2_numa.tests.fixtures.code_cache.rke2_numa_code_cache import environ

    environ(os.environ, REPO)


_code_cache()


def pytest_configure(config):
    config.addinivalue_line("markers", "integration: starts ansible-playbook, a stand-in server or a browser (tests/integration)")


def pytest_collection_modifyitems(config, items):
    """Everything under tests/integration is marked integration: ``-m "not integration"`` leaves it out."""
    for item in items:
        if "%sintegration%s" % (os.sep, os.sep) in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def hwloc_root(tmp_path_factory):
    """Return a function: dump name -> path of its unpacked fs root.

    Each dump is unpacked once per run, under a lock, in a folder the pytest-xdist
    workers share (their base temp's parent), and only read after that."""
    from ansible_collections.maitred.rke2_numa.tests.fixtures.hwloc_dumps import unpack

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    base = base / "hwloc-dumps"
    base.mkdir(exist_ok=True)
    cache = {}

    def root(name):
        if name not in cache:
            with open(str(base / (name + ".lock")), "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                done = base / (name + ".root")
                if not done.exists():
                    done.write_text(unpack(name, base / name))
                cache[name] = done.read_text()
        return cache[name]

    return root


class _Cost:
    """What ``with cost() as spent:`` measured: ``spent.bytes``, the most memory Python held at
    once, and ``spent.cpu``, this process's CPU seconds (other processes' load does not count)."""

    bytes = cpu = _cpu = None

    def __enter__(self):
        tracemalloc.start()
        self._cpu = time.process_time()
        return self

    def __exit__(self, *exc):
        self.cpu = time.process_time() - self._cpu
        self.bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return False


@pytest.fixture
def cost():
    """For "refused fast" tests: the work an input caused, in bytes held and CPU seconds of this
    process, not in wall-clock seconds (which fail on a loaded machine). Expanding a range of
    4 million CPU ids holds 300 MB; a refusal before expanding holds kilobytes."""
    return _Cost
