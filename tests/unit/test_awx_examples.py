# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""docs/awx/templates.yml - the AWX job templates and the nightly workflow an operator copies - sets only variables the
collection declares (a typo there would be silently ignored by AWX and the playbook alike), with values their specs
accept, and names playbooks that exist."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import specs
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.playbook_inputs import PLAYBOOKS, input_errors

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(REPO, "docs", "awx", "templates.yml")
PROJECT = os.path.join(REPO, "docs", "awx", "project")
# set by AWX itself or by the example's own play (its awx.awx module arguments), not by the collection
NOT_OURS = {"awx_organization", "awx_project", "awx_inventory"}


def declared():
    """Every variable of the collection's argument specs (all roles, all entry points), with its spec."""
    out = {}
    for role, entries in specs.role_specs().items():
        for entry in entries:
            out.update(specs.role_options(role, entry))
    return out


def examples():
    with open(EXAMPLES) as f:
        return yaml.safe_load(f)[0]["tasks"]


def extra_vars():
    """(where, playbook, variables) of every job template's extra_vars and every workflow node's extra_data (with its
    template's playbook)."""
    playbooks = {}
    for task in examples():
        template = task.get("awx.awx.job_template")
        if template:
            playbooks[template["name"]] = os.path.basename(template["playbook"])[:-len(".yml")]
            yield template["name"], playbooks[template["name"]], template.get("extra_vars") or {}
        workflow = task.get("awx.awx.workflow_job_template")
        for node in (workflow or {}).get("workflow_nodes") or []:
            yield ("%s/%s" % (workflow["name"], node["identifier"]), playbooks[node["unified_job_template"]["name"]],
                   node.get("extra_data") or {})


def test_every_variable_the_examples_set_is_declared_and_its_value_valid():
    options = declared()
    seen = 0
    for where, playbook, variables in extra_vars():
        unknown = sorted(set(variables) - set(options))
        assert not unknown, "%s sets variables no argument spec declares: %s" % (where, unknown)
        spec = dict((name, dict((k, v) for k, v in options[name].items() if k in ("type", "elements", "choices")))
                    for name in variables)
        result = ArgumentSpecValidator(spec).validate(dict(variables))
        assert not result.error_messages, (where, result.error_messages)
        # and the playbook's own rules (bounds, names, a window's end in ISO 8601, ...), as its first task applies them,
        # tonight and a year on: a nightly workflow runs every night (a fixed rke2_numa_window_end was refused from its
        # second night: "ended 1255 min ago")
        if playbook in PLAYBOOKS:
            for now in (time.time(), time.time() + 365 * 86400):
                assert input_errors(playbook, dict(variables), {"servers": ["server-1"]}, ["server-1"], now) == [], where
        seen += len(variables)
    assert seen >= 9


def test_the_templates_run_playbooks_of_the_collection_and_the_workflow_names_them():
    tasks = examples()
    templates = [t["awx.awx.job_template"] for t in tasks if "awx.awx.job_template" in t]
    assert {t["playbook"] for t in templates} == {"playbooks/check.yml", "playbooks/report.yml", "playbooks/rolling.yml"}
    for template in templates:   # a playbook file of the project (docs/awx/project), not of this repository
        assert os.path.isfile(os.path.join(PROJECT, template["playbook"])), template["playbook"]
    workflow = [t["awx.awx.workflow_job_template"] for t in tasks if "awx.awx.workflow_job_template" in t][0]
    names = {t["name"] for t in templates}
    nodes = dict((n["identifier"], n) for n in workflow["workflow_nodes"])
    assert {n["unified_job_template"]["name"] for n in nodes.values()} == names
    # check -> anything to roll? -> roll, each on success
    assert [s["identifier"] for s in nodes["check"]["related"]["success_nodes"]] == ["anything-to-roll"]
    assert [s["identifier"] for s in nodes["anything-to-roll"]["related"]["success_nodes"]] == ["roll"]


def test_a_variable_the_collection_does_not_declare_is_caught():
    assert "rke2_numa_serail" not in declared() and "rke2_numa_serial" in declared()
    assert not NOT_OURS & set(declared())


def test_the_project_runs_each_playbook_of_the_collection_by_its_name_at_the_collection_s_version():
    """AWX runs a playbook file of its project: one wrapper per playbook of the collection, each importing the one of its
    own name (a job template naming playbooks/check.yml of a project that only requires the collection found nothing)."""
    with open(os.path.join(REPO, "galaxy.yml")) as f:
        galaxy = yaml.safe_load(f)
    ours = sorted(n for n in os.listdir(os.path.join(REPO, "playbooks")) if n.endswith(".yml"))
    assert sorted(os.listdir(os.path.join(PROJECT, "playbooks"))) == ours
    for name in ours:
        with open(os.path.join(PROJECT, "playbooks", name)) as f:
            plays = yaml.safe_load(f)
        assert [p["ansible.builtin.import_playbook"] for p in plays] == ["%s.%s.%s" % (galaxy["namespace"], galaxy["name"], name[:-4])]
    with open(os.path.join(PROJECT, "collections", "requirements.yml")) as f:
        required = yaml.safe_load(f)["collections"]
    assert required == [{"name": "%s.%s" % (galaxy["namespace"], galaxy["name"]), "version": galaxy["version"]}]
    # the execution environment installs the tarball ansible-galaxy collection build names after the version
    with open(os.path.join(REPO, "docs", "execution-environment.yml")) as f:
        ee = yaml.safe_load(f)
    assert [c["name"] for c in ee["dependencies"]["galaxy"]["collections"]] == [
        "collections/%s-%s-%s.tar.gz" % (galaxy["namespace"], galaxy["name"], galaxy["version"])]


def test_the_execution_environment_pins_its_base_image_and_what_it_installs(tmp_path):
    """The base image by digest, ansible-core and ansible-runner at the versions the tests run (requirements-dev.txt),
    and ansible-builder makes its build context from the file as written (a tag or a range installs whatever is newest
    on the day of the build)."""
    with open(os.path.join(REPO, "docs", "execution-environment.yml")) as f:
        ee = yaml.safe_load(f)
    assert re.match(r"^[a-z0-9.-]+(/[a-z0-9._-]+)+@sha256:[0-9a-f]{64}$", ee["images"]["base_image"]["name"]), ee["images"]
    with open(os.path.join(REPO, "requirements-dev.txt")) as f:
        tested = dict(re.match(r"^([a-z-]+)==([0-9.]+)", line).groups() for line in f
                      if re.match(r"^ansible-(core|runner)==[0-9.]+(;.*>= \"3.12\")?\s*$", line))
    assert ee["dependencies"]["ansible_core"]["package_pip"] == "ansible-core==%s" % tested["ansible-core"]
    assert ee["dependencies"]["ansible_runner"]["package_pip"] == "ansible-runner==%s" % tested["ansible-runner"]
    builder = shutil.which("ansible-builder", path=os.path.dirname(sys.executable))
    if builder is None:
        pytest.skip("ansible-builder is not installed (requirements-dev.txt)")
    shutil.copy(os.path.join(REPO, "docs", "execution-environment.yml"), tmp_path)
    with open(os.path.join(REPO, "galaxy.yml")) as f:
        galaxy = yaml.safe_load(f)
    (tmp_path / ("%s-%s-%s.tar.gz" % (galaxy["namespace"], galaxy["name"], galaxy["version"]))).write_bytes(b"")
    out = subprocess.run([builder, "create", "-f", "execution-environment.yml", "--context", "context"], cwd=str(tmp_path),
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    containerfile = (tmp_path / "context" / "Containerfile").read_text()
    assert ee["images"]["base_image"]["name"] in containerfile
