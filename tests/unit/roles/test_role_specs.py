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


COMMON = "common"
# Facts and inputs one role (or the play) sets for the next: declared as options
# (required or described) where a role reads them, never given a default.
SET_AT_RUN_TIME = re.compile(r"^rke2_numa_(plan|topology|config_result|reboot_required|compliance|pod_audit|labels_note|"
                             r"verify_report|prove_report|admin_cordon|roll_\w+)$")


def role_files(role):
    return [f for f in glob.glob(os.path.join(REPO, "roles", role, "*", "*"))
            if re.search(r"/roles/[^/]+/(tasks|templates|handlers)/", f)]


def expressions(text):
    """The Jinja expressions and conditions of a YAML file: what it reads (keys it sets are left out)."""
    found = re.findall(r"\{\{(.*?)\}\}", text, re.S)
    found += re.findall(r"^\s*(?:-\s+)?(?:when|that|changed_when|failed_when|until):\s*(.+)$", text, re.M)
    found += re.findall(r"^\s+-\s+(?!name:)([^:#\n]+)$", text, re.M)   # list items of when:/that: blocks
    return "\n".join(found)


def variables_read(text):
    return set(re.findall(r"\b(rke2_numa_\w+)\b", expressions(text)))


def variables_set(text):
    return set(re.findall(r"^\s+(rke2_numa_\w+):", text, re.M)) | set(re.findall(r"register:\s*(rke2_numa_\w+)", text))


def test_every_role_depends_on_the_common_role_and_no_role_loads_another_roles_defaults():
    for role in ROLES:
        if role == COMMON:
            continue
        deps = [d["role"] if isinstance(d, dict) else d for d in load(role, "meta", "main.yml").get("dependencies") or []]
        assert deps == ["maitred.rke2_numa.common"], "%s: dependencies %s" % (role, deps)
    loaders = [os.path.relpath(f, REPO) for f in glob.glob(os.path.join(REPO, "roles", "*", "tasks", "*.yml"))
               + glob.glob(os.path.join(REPO, "playbooks", "**", "*.yml"), recursive=True)
               if re.search(r"tasks_from:\s*noop", open(f).read())]
    assert not loaders, "%s load a role's defaults through a task file without tasks" % loaders
    assert not glob.glob(os.path.join(REPO, "roles", "*", "tasks", "noop.yml"))


def test_every_variable_a_role_reads_is_in_its_argument_specs_or_the_common_roles():
    common = set(options(COMMON))
    for role in ROLES:
        text = "\n".join(open(f).read() for f in role_files(role))
        declared = set(options(role)) | common | variables_set(text)
        undeclared = sorted(v for v in variables_read(text) - declared if not SET_AT_RUN_TIME.match(v))
        assert not undeclared, "roles/%s reads %s: not in its meta/argument_specs.yml nor the common role's" % (role, undeclared)


def test_the_common_role_owns_what_more_than_one_role_reads():
    """A variable read by two roles, or by a playbook's own task (not only handed to
    playbook_inputs with default(omit)), has its default in roles/common: one place."""
    owner = {name: where[0][0] for name, where in owners().items()}
    readers = {}
    for role in ROLES:
        for name in variables_read("\n".join(open(f).read() for f in role_files(role))):
            readers.setdefault(name, set()).add(role)
    for path in glob.glob(os.path.join(REPO, "playbooks", "*.yml")) + glob.glob(os.path.join(REPO, "playbooks", "tasks", "*.yml")):
        text = open(path).read()
        imported = set(re.findall(r"import_role:\s*\n\s+name:\s*maitred\.rke2_numa\.(\w+)", text))
        text = re.sub(r"rke2_numa_\w+\s*\|\s*default\(", "", text)   # read with a default of its own: not a reader
        for name in variables_read(text):
            if owner.get(name) not in imported:
                readers.setdefault(name, set()).add(os.path.relpath(path, REPO))
    shared = sorted(name for name, who in readers.items() if name in owner and owner[name] != COMMON and who != {owner[name]})
    assert not shared, "read outside their role, so the common role's: %s" % {name: sorted(readers[name]) for name in shared}


def test_no_role_reads_another_role_s_files():
    """A role reaches another role's declarations through the collection's plugins (the argument_spec lookup), never
    by a path out of its own folder (kubelet_reset's preflight read ``role_path ~ '/../' ~ item ~ '/meta/...'``)."""
    climbing = re.compile(r"role_path\s*~\s*['\"]/\.\.|\.\./(?:%s)/" % "|".join(ROLES))
    for role in ROLES:
        for path in glob.glob(os.path.join(REPO, "roles", role, "**", "*.yml"), recursive=True):
            with open(path) as f:
                assert not climbing.search(f.read()), "%s reads another role's files" % os.path.relpath(path, REPO)
