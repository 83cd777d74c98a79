# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/fixtures/code_cache: a module imported from a zip (as AnsiballZ runs one) is compiled once, then read from
the cache; a changed source is compiled anew; the code names the zip it came from this time; a cache that cannot be
written changes nothing but speed."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

from ansible_collections.maitred.rke2_numa.tests.fixtures.code_cache import rke2_numa_code_cache

PROBE = """
import sys, zipimport
import rke2_numa_code_cache
rke2_numa_code_cache.install(sys.argv[2])
sys.path.insert(0, sys.argv[1])
import payload.util as util
print(util.answer(), util.answer.__code__.co_filename, util.Inner.method.__code__.co_filename)
"""


def run(tmp_path, name, source, cache):
    archive = tmp_path / name / "ansible_x_payload.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("payload/__init__.py", "")
        handle.writestr("payload/util.py", source)
    env = dict(os.environ, PYTHONPATH=rke2_numa_code_cache.HERE, RKE2_NUMA_CODE_CACHE="")
    out = subprocess.run([sys.executable, "-c", PROBE, str(archive), str(cache)], capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout.split(), str(archive)


def source(value):
    return "def answer():\n    return %r\n\n\nclass Inner:\n    def method(self):\n        return 1\n" % value


def test_compiled_once_read_back_with_this_runs_path_and_compiled_anew_when_the_source_changes(tmp_path):
    cache = tmp_path / "cache"
    (answer, filename, inner), archive = run(tmp_path, "first", source("one"), cache)
    assert answer == "one" and filename == inner == os.path.join(archive, "payload", "util.py")
    entries = sorted(os.listdir(str(cache)))
    assert len(entries) == 2, entries   # payload/__init__.py and payload/util.py

    (answer, filename, inner), archive = run(tmp_path, "second", source("one"), cache)
    assert sorted(os.listdir(str(cache))) == entries, "read back, nothing compiled"
    assert answer == "one" and filename == inner == os.path.join(archive, "payload", "util.py"), "the path of this run's zip"

    (answer, dummy, dummy), archive = run(tmp_path, "third", source("two"), cache)
    assert answer == "two" and len(os.listdir(str(cache))) == 3, "a changed source is compiled anew"


def test_a_cache_that_cannot_be_written_is_passed_over(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    (answer, dummy, dummy), dummy = run(tmp_path, "blocked", source("three"), blocked / "cache")
    assert answer == "three"


def test_environ_puts_the_cache_first_on_pythonpath_once_and_keeps_an_off_switch():
    env = rke2_numa_code_cache.environ({"PYTHONPATH": "/x" + os.pathsep + rke2_numa_code_cache.HERE}, "/repo")
    assert env == {"PYTHONPATH": rke2_numa_code_cache.HERE + os.pathsep + "/x", "RKE2_NUMA_CODE_CACHE": "/repo/.build/code-cache"}
    assert rke2_numa_code_cache.environ({"RKE2_NUMA_CODE_CACHE": ""}, "/repo") == {"RKE2_NUMA_CODE_CACHE": ""}
