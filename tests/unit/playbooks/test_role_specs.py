"""Each role variable has one owner: the role whose defaults/main.yml sets it.

Its argument_specs declare it with that default; any other role that reads it
declares it with the same default (it loads the owner's defaults) or as a
required input set by an earlier role.
"""
import glob
import os
import re

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(REPO, "roles", "*")))


def load(role, *path):
    name = os.path.join(REPO, "roles", role, *path)
    if not os.path.exists(name):
        return {}
    with open(name) as f:
        return yaml.safe_load(f) or {}


def options(role):
    merged = {}
    for entry in (load(role, "meta", "argument_specs.yml").get("argument_specs") or {}).values():
        merged.update(entry.get("options") or {})
    return merged


def owners():
    found = {}
    for role in ROLES:
        for name, value in load(role, "defaults", "main.yml").items():
            found.setdefault(name, []).append((role, value))
    return found


def test_every_default_has_one_owner():
    twice = {name: [role for role, dummy in where] for name, where in owners().items() if len(where) > 1}
    assert not twice, "set in the defaults of more than one role: %s" % twice


def test_every_default_is_an_option_of_its_role():
    for role in ROLES:
        missing = sorted(set(load(role, "defaults", "main.yml")) - set(options(role)))
        assert not missing, "%s: defaults not in meta/argument_specs.yml: %s" % (role, missing)


def test_documented_defaults_are_the_owners_defaults():
    owner = {name: where[0] for name, where in owners().items()}
    for role in ROLES:
        for name, spec in options(role).items():
            if "default" in spec:
                assert name in owner, "%s documents a default for %s, which no role's defaults set" % (role, name)
                assert spec["default"] == owner[name][1], "%s: %s default %r, %s sets %r" % (
                    role, name, spec["default"], owner[name][0], owner[name][1])
            elif name in owner and owner[name][0] == role and owner[name][1] is not None \
                    and "{{" not in str(owner[name][1]):
                # null (left out) and computed defaults ("{{ inventory_hostname }}") are described in words
                raise AssertionError("%s: %s is set in its defaults but documented without a default" % (role, name))


def test_no_role_hard_codes_a_path_or_unit_another_variable_sets():
    """A path or unit name is read from its variable, never written out again (the
    hugepages unit used to name rke2-agent.service, so a renamed agent lost its order)."""
    files = [f for f in glob.glob(os.path.join(REPO, "roles", "*", "*", "*"))
             if re.search(r"/roles/[^/]+/(tasks|templates|handlers|vars)/", f)]
    for name, where in owners().items():
        value = where[0][1]
        if isinstance(value, str) and "{{" not in value and len(value) > 1 and ("/" in value or value.endswith(".service")):
            hits = [os.path.relpath(f, REPO) for f in files if value in open(f).read()]
            assert not hits, "%s hard-code %s, the value of %s" % (hits, value, name)


def test_no_role_names_a_kubelet_checkpoint_file():
    """The checkpoint file names live in module_utils/kubelet_checkpoints.py; the
    roles take each file's path from kubelet_state_info."""
    for path in glob.glob(os.path.join(REPO, "roles", "*", "tasks", "*.yml")):
        with open(path) as f:
            text = f.read()
        for name in ("cpu_manager_state", "memory_manager_state"):
            assert name not in text, "%s names %s" % (os.path.relpath(path, REPO), name)
