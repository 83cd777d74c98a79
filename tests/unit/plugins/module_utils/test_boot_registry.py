# -*- coding: utf-8 -*-
"""boot_plan.REGISTRY: every choice of the common role's rke2_numa_boot_method (boot_methods.METHODS, generated from
the spec) has one complete declaration in its own module_utils/boot_method_<name>.py - adding a method is that file
and the spec's choice, and this test says what the file still lacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils import boot_methods, boot_plan
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import BootMethod
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import MANAGED_KERNEL_ARGS, validate_args

CHANGE_KEYS = {"files", "commands", "locations", "after", "history"}
WANTED = validate_args(["isolcpus=1-3", "hugepagesz=1G", "hugepages=4"], list(MANAGED_KERNEL_ARGS))


def plant(root, paths):
    """A marker in each path under root (a path another one is under is a folder: the marker in a .cfg file in it)."""
    for rel in paths:
        path = root / rel
        if any(other.startswith(rel + "/") for other in paths):
            path = path / "00-marker.cfg"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_dir():
            path.write_text("# marker %s #\n" % rel)


def file_problems(method, root, known):
    """The files read_inputs reads are those ``files`` lists; the plan from them writes only among them."""
    inputs = json.dumps(method.read_inputs(str(root), None))
    out = ["reads %s, not listed in files" % p for p in known - set(method.files) if "marker %s #" % p in inputs]
    out += ["lists %s but does not read it" % p for p in method.files if "marker %s #" % p not in inputs]
    change = method.plan(json.loads(inputs), WANTED, list(MANAGED_KERNEL_ARGS))
    out += ["plan returns no %s" % k for k in CHANGE_KEYS - set(change)]
    return out + ["plan writes %s, which it does not read" % f["path"] for f in change.get("files", [])
                  if not any(f["path"] == p or f["path"].startswith(p + "/") for p in method.files)]


def problems(name, method, registry, root):
    """What the declaration ``method`` registered as ``name`` lacks ([] when complete)."""
    if not isinstance(method, BootMethod) or method.name != name:
        return ["%r is not a BootMethod named %s" % (method, name)]
    out = ["%s is not callable" % f for f in ("detect", "read_inputs", "plan") if not callable(getattr(method, f))]
    out += ["verify is neither None nor callable"] if method.verify is not None and not callable(method.verify) else []
    out += ["staged is not a bool"] if not isinstance(method.staged, bool) else []
    out += ["%s is not declared in boot_method_%s" % (f, name) for f in ("detect", "read_inputs", "plan", "verify")
            if callable(getattr(method, f)) and getattr(method, f).__module__.rpartition(".")[2] != "boot_method_" + name]
    if out:
        return out
    known = set(p for m in registry.values() for p in m.files)
    plant(root, sorted(known))
    return detection_problems(name, method, registry) + file_problems(method, root, known)


def detection_problems(name, method, registry):
    """Each os-release ID it names detects it, on any system; distros (the error's text) starts with them."""
    out = [] if method.ids and all(isinstance(i, str) for i in method.ids) else ["no os-release IDs"]
    out += [] if method.distros.startswith(", ".join(method.ids)) else ["distros does not start with its ids"]
    for os_id in method.ids:
        for transactional in (False, True):
            claims = sorted((m.detect({"ID": os_id, "ID_LIKE": "suse"}, transactional), m.name) for m in registry.values())
            if claims[-1][1] != name or claims[-2][0] == claims[-1][0]:
                out.append("ID=%s (transactional: %s) is not detected as %s: %s" % (os_id, transactional, name, claims))
    return out


def test_every_spec_choice_has_a_complete_registered_method(tmp_path):
    assert sorted(boot_plan.REGISTRY) == sorted(boot_methods.METHODS)
    for name, method in boot_plan.REGISTRY.items():
        assert problems(name, method, boot_plan.REGISTRY, tmp_path / name) == [], name


def foreign_read_inputs(root, read_tool):
    return boot_plan.REGISTRY["grub_d"].read_inputs(root, read_tool)


@pytest.mark.parametrize("name, fields, problem", [
    ("grubby", dict(plan=None), "plan is not callable"),
    ("grub_d", dict(verify="update-grub"), "verify is neither None nor callable"),
    ("grub_d", dict(staged=None), "staged is not a bool"),
    ("grubby", dict(read_inputs=foreign_read_inputs), "read_inputs is not declared in boot_method_grubby"),
    ("grubby", dict(files=("etc/kernel/cmdline",)), "reads etc/rke2-numa/boot_params.state, not listed in files"),
    ("grubby", dict(files=("etc/rke2-numa/boot_params.state", "etc/kernel/cmdline", "etc/default/grub")),
     "lists etc/default/grub but does not read it"),
    ("transactional_update", dict(files=("etc/kernel/cmdline", "etc/default/grub")),
     "plan writes etc/rke2-numa/boot_params.state, which it does not read"),
    ("grub_d", dict(ids=("debian", "ubuntu", "rhel")), "ID=rhel (transactional: False) is not detected as grub_d"),
    ("grubby", dict(ids=("rhel", "arch")), "ID=arch (transactional: False) is not detected as grubby"),
    ("grubby", dict(distros="the RHEL family"), "distros does not start with its ids"),
    ("grubby", dict(name="grub"), "is not a BootMethod named grubby"),
])
def test_an_incomplete_method_is_named(tmp_path, name, fields, problem):
    """The check can fail: each field broken in turn is found."""
    registry = dict(boot_plan.REGISTRY, **{name: boot_plan.REGISTRY[name]._replace(**fields)})
    found = problems(name, registry[name], registry, tmp_path)
    assert any(problem in p for p in found), found


def test_a_declaration_without_a_field_does_not_exist():
    fields = boot_plan.REGISTRY["grub_d"]._asdict()
    del fields["verify"]
    with pytest.raises(TypeError):
        BootMethod(**fields)


def test_the_node_read_compiles_no_planner(tmp_path):
    """node_state_info reads every method's inputs through the registry: no rewriter is imported (a module call
    compiles its module_utils anew on every host)."""
    code = """
import json, sys
from ansible_collections.maitred.rke2_numa.plugins.module_utils import boot_config
for method in boot_config.REGISTRY:
    boot_config.read_boot_inputs(method, sys.argv[1])
print(json.dumps(sorted(m.rpartition(".")[2] for m in sys.modules if ".module_utils." in m)))
"""
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))).stdout
    loaded = set(json.loads(out))
    assert "boot_method_grubby" in loaded
    assert not loaded & {"boot_grub", "boot_grubby", "boot_transactional", "boot_record", "kernel_args"}, loaded
