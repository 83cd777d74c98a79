# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/fixtures/code_cache: a module imported from a zip (as AnsiballZ runs one) is compiled once, then read from
the cache; a changed source is compiled anew; the code names the zip it came from this time; a cache that cannot be
written changes nothing but speed."""

from __future__ import annotations

import json
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


BUILD = """
import datetime, io, json, sys, zipfile
import rke2_numa_code_cache
rke2_numa_code_cache.install_ansiballz(sys.argv[2])
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
_AnsibleCollectionFinder(paths=[sys.argv[1]])._install()
from ansible.executor import module_common
from ansible._internal._ansiballz._builder import ExtensionManager
parses = []
real = module_common._compile_module_ast
def counted(name, source):
    parses.append(name)
    return real(name, source)
module_common._compile_module_ast = counted
path = sys.argv[1] + '/ansible_collections/ns/col/plugins/modules/m.py'
data = open(path, 'rb').read()
buf = io.BytesIO()
with zipfile.ZipFile(buf, 'w') as zf:
    metadata = module_common.recursive_finder('m', 'ansible_collections.ns.col.plugins.modules.m', data, zf,
                                              datetime.datetime(2026, 1, 1), ExtensionManager())
with zipfile.ZipFile(buf) as zf:
    files = dict((n, zf.read(n).decode()) for n in zf.namelist())
print(json.dumps({'parses': len(parses), 'util': files['ansible_collections/ns/col/plugins/module_utils/u.py'],
                  'files': sorted(files), 'profile': metadata.serialization_profile}))
"""


def build(tmp_path, cache):
    env = dict(os.environ, PYTHONPATH=rke2_numa_code_cache.HERE, RKE2_NUMA_CODE_CACHE="")
    out = subprocess.run([sys.executable, "-c", BUILD, str(tmp_path / "coll"), str(cache)], capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_payload_s_module_utils_are_found_once_then_read_back_and_found_anew_when_one_changes(tmp_path):
    """recursive_finder (what builds an AnsiballZ payload) cached: the same files and metadata, no source parsed the
    second time; a module_utils file edited since is parsed again and its new text is in the payload."""
    plugins = tmp_path / "coll" / "ansible_collections" / "ns" / "col" / "plugins"
    (plugins / "modules").mkdir(parents=True)
    (plugins / "module_utils").mkdir()
    (plugins / "modules" / "m.py").write_text("from ansible.module_utils.basic import AnsibleModule\n"
                                              "from ansible_collections.ns.col.plugins.module_utils.u import VALUE\n")
    util = plugins / "module_utils" / "u.py"
    util.write_text("VALUE = 1\n")
    cache = tmp_path / "cache"
    first = build(tmp_path, cache)
    assert first["parses"] > 10 and first["util"] == "VALUE = 1\n"
    assert [n for n in os.listdir(str(cache)) if n.startswith("ansiballz-")], "kept"
    second = build(tmp_path, cache)
    assert second == dict(first, parses=0), "read back: the same payload files and metadata, nothing parsed"
    util.write_text("VALUE = 22\n")
    third = build(tmp_path, cache)
    assert third["parses"] > 10 and third["util"] == "VALUE = 22\n" and third["files"] == first["files"]


IMPORT = """
import sys
import rke2_numa_code_cache
rke2_numa_code_cache.install_ansiballz(sys.argv[2])
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
_AnsibleCollectionFinder(paths=[sys.argv[1]])._install()
from ansible_collections.ns.col.plugins.plugin_utils import helper
print(helper.VALUE, helper.value.__code__.co_filename)
"""


def test_a_collection_file_is_compiled_once_then_read_back_and_compiled_anew_when_it_changes(tmp_path):
    """The collection loader's compile() of a collection's file (what every ansible-playbook and worker imports)
    served from the cache: the same code and file name; a changed source compiled anew."""
    utils = tmp_path / "coll" / "ansible_collections" / "ns" / "col" / "plugins" / "plugin_utils"
    utils.mkdir(parents=True)
    helper = utils / "helper.py"
    cache = tmp_path / "cache"

    def imported(text):
        helper.write_text(text)
        env = dict(os.environ, PYTHONPATH=rke2_numa_code_cache.HERE, RKE2_NUMA_CODE_CACHE="")
        out = subprocess.run([sys.executable, "-c", IMPORT, str(tmp_path / "coll"), str(cache)], capture_output=True, text=True,
                             env=env, check=False)
        assert out.returncode == 0, out.stderr
        return out.stdout.split(), sorted(n for n in os.listdir(str(cache)) if n.startswith("collection-"))

    (value, filename), first = imported("VALUE = 1\n\n\ndef value():\n    return VALUE\n")
    assert value == "1" and filename == str(helper) and len(first) >= 1
    (value, filename), second = imported("VALUE = 1\n\n\ndef value():\n    return VALUE\n")
    assert (value, filename, second) == ("1", str(helper), first), "read back"
    (value, filename), third = imported("VALUE = 2\n\n\ndef value():\n    return VALUE\n")
    assert value == "2" and len(third) == len(first) + 1, "compiled anew"
