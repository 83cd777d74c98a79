# -*- coding: utf-8 -*-
"""playbooks/plan.yml end to end through ansible-playbook: report, files, check mode, refusals.
Also keeps the documented options, the action's argument spec and the plan role's
variables in step."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.doc_fragments import plan_options
from ansible_collections.maitred.rke2_numa.plugins.modules import numa_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs
from ansible_collections.maitred.rke2_numa.tests.fixtures.inventories import with_host_vars

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAYBOOK = os.path.join(REPO, "playbooks", "plan.yml")


@pytest.fixture(scope="module")
def inventory(tmp_path_factory):
    base = tmp_path_factory.mktemp("play")
    gen_sysfs.main(["--out", str(base / "samples"), "--machine", "dgx-h100", "--machine", "l40s-offline"])
    inv = {"gpu": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                            "rke2_numa_hugepages_per_node": 8},
                   "hosts": {name: {"rke2_numa_sysfs_root": str(base / "samples" / name)}
                             for name in ("dgx-h100", "l40s-offline")}}}
    path = base / "inventory.yml"
    path.write_text(yaml.safe_dump(inv))
    return str(path)


def play(inventory, *extra, playbook=PLAYBOOK):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_DEPRECATION_WARNINGS="false")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory, playbook] + list(extra)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)


def test_plan_writes_the_same_files_with_and_without_check(inventory, tmp_path):
    outputs = {}
    for mode, extra in (("run", []), ("check", ["--check"])):
        out_dir, report_dir = tmp_path / mode, tmp_path / (mode + "-report")
        result = play(inventory, "-e", "rke2_numa_plan_dir=%s" % out_dir, "-e", "rke2_numa_report_dir=%s" % report_dir, *extra)
        assert result.returncode == 0, result.stdout + result.stderr
        # new files on the controller: changed (they used to be reported ok), also under --check - by the one task that
        # writes them for the run (on the play's first host)
        assert re.search(r"^dgx-h100 +: ok=\d+ +changed=[1-9]", result.stdout, re.M) and "failed=1" not in result.stdout, result.stdout
        assert "kubelet-arg:" in result.stdout and "biggest pod" in result.stdout
        outputs[mode] = dict((f, (out_dir / f).read_text()) for f in sorted(os.listdir(out_dir)))
        outputs[mode].update((f, (report_dir / f).read_text()) for f in sorted(os.listdir(report_dir)))
    assert sorted(outputs["run"]) == ["dgx-h100.config.yaml", "dgx-h100.json", "dgx-h100.kubelet.conf", "dra.yaml", "fleet.json", "index.html",
                                      "l40s-offline.config.yaml", "l40s-offline.json", "l40s-offline.kubelet.conf", "rancher.yaml", "run.json",
                                      "summary.md"]
    dropin = yaml.safe_load(outputs["run"]["dgx-h100.kubelet.conf"])
    assert (dropin["kind"], dropin["cpuManagerPolicy"], dropin["topologyManagerScope"]) == ("KubeletConfiguration", "static", "pod")
    assert outputs["run"] == outputs["check"]
    assert "2 hosts: 2 planned, 0 not planned; warnings on 1 host (plan.yml)." in outputs["run"]["summary.md"]
    plan = json.loads(outputs["run"]["dgx-h100.json"])
    snippet = yaml.safe_load(outputs["run"]["dgx-h100.config.yaml"])
    assert snippet == {"kubelet-arg": plan["kubelet_args"]}
    assert "reserved-cpus=0,56,112,168" in plan["kubelet_args"]
    assert "hugepages=0:8,1:8" in plan["kernel_args"]


def test_refused_plan_fails_the_host_naming_the_rule(inventory, tmp_path):
    result = play(inventory, "-e", "rke2_numa_reserved_cores=40", "-e", "rke2_numa_plan_dir=%s" % tmp_path)
    assert result.returncode != 0
    assert "reserved-cores: rke2_numa_reserved_cores=40 leaves no core to isolate: at most 30 fit" in result.stdout
    assert re.search(r"^dgx-h100 +: ok=\d+ +changed=[1-9]\d* +unreachable=0", result.stdout, re.M)  # its plan files, new
    # the refused host stays in the run: its line says why, the summary is said, and the run fails at its end naming it
    assert "not planned: no plan for this host: reserved-cores: rke2_numa_reserved_cores=40" in result.stdout
    assert "TASK [Say where the plans and the report are, and what to run next]" in result.stdout
    assert "the plan did not complete: l40s-offline: no plan for this host: reserved-cores:" in result.stdout
    assert "dgx-h100: no plan" not in result.stdout
    assert sorted(os.listdir(tmp_path)) == ["dgx-h100.config.yaml", "dgx-h100.json", "dgx-h100.kubelet.conf", "dra.yaml", "rancher.yaml"]
    assert ": dgx-h100\n" in (tmp_path / "rancher.yaml").read_text()   # the planned host's class only


def test_plan_of_another_host_is_refused(inventory, tmp_path):
    # rke2_numa_plan as an extra var beats the plan role's set_fact: it must fit this host's topology
    tmp_path.chmod(0o750)
    result = play(inventory, "-e", "rke2_numa_plan_dir=%s" % tmp_path, "--limit", "l40s-offline")
    assert result.returncode == 0, result.stdout + result.stderr
    assert oct(tmp_path.stat().st_mode & 0o777) == "0o750", "a folder of the operator's keeps its mode"
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"rke2_numa_plan": json.loads((tmp_path / "l40s-offline.json").read_text())}))
    result = play(inventory, "-e", "@%s" % foreign)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert re.search(r"^dgx-h100 +: ok=\d+ +changed=0 +unreachable=0 +failed=1", result.stdout, re.M)
    assert re.search(r"^l40s-offline +: ok=\d+ +changed=0 +unreachable=0 +failed=0", result.stdout, re.M)
    assert "plan-host: the rke2_numa_plan given" in out and "online CPUs 0-30,32-62" in out
    assert "was made for another host" in out and "(online CPUs 0-223)" in out


def test_plan_role_variables_match_the_documented_options():
    """The plan role's variables are numa_plan's options (plugins/modules/numa_plan.py, the one source), and where and
    how its files are written."""
    doc = dict(yaml.safe_load(numa_plan.DOCUMENTATION)["options"], **yaml.safe_load(plan_options.ModuleDocFragment.DOCUMENTATION)["options"])
    role = os.path.join(REPO, "roles", "plan")
    with open(os.path.join(role, "defaults", "main.yml")) as f:
        defaults = yaml.safe_load(f)
    with open(os.path.join(role, "meta", "argument_specs.yml")) as f:
        specs = yaml.safe_load(f)["argument_specs"]["main"]["options"]
    # export: the role's call sets the host's facts; options_from_vars: it takes every other option from its variable;
    # rke2_runtime: what the topology role read of the host's RKE2
    options = set(doc) - {"topology", "export", "options_from_vars", "warn", "refused_fails", "rke2_runtime", "read", "return_plan"}
    assert set(n[len("rke2_numa_"):] for n in defaults) - {"plan_dir", "rancher_machine_label", "rancher_cluster"} == options
    for name in options:
        spec, option = specs["rke2_numa_" + name], doc[name]
        assert spec["type"] == option["type"] or option["type"] == "raw", name
        assert spec.get("elements") == option.get("elements"), name
        if "choices" in spec:
            assert spec["choices"] == option["choices"], name
        # null in the role means the option is left out: the documented default (or its "Default (null) is")
        if defaults["rke2_numa_" + name] is not None:
            assert defaults["rke2_numa_" + name] == option.get("default", defaults["rke2_numa_" + name]), name
    with open(os.path.join(role, "tasks", "numa_plan.yml")) as f:
        task = yaml.safe_load(f)[0]["maitred.rke2_numa.numa_plan"]
    assert task == {"topology": "{{ rke2_numa_topology }}", "export": True, "options_from_vars": True,
                    "rke2_runtime": "{{ __rke2_numa_topology_info.rke2_runtime | default(omit) }}"}


@pytest.mark.parametrize(
    "extra_vars, fragment",
    [
        # 0 used to be dropped by the role (default(omit, true)) and planned as the default
        ({"rke2_numa_reserved_cores": 0}, "options: rke2_numa_reserved_cores must be >= 1, got 0"),
        # an unquoted 1.40 in YAML is the float 1.4; the action used to turn it into "1.4"
        ({"rke2_numa_kubernetes_version": 1.40}, "got the number 1.4"),
        ({"rke2_numa_node_taints": ["gpu=true"]}, "rke2_numa_node_taints item 'gpu=true'"),
        # from Molecule bad_input: refused by the plan, before apply.yml's first write
        ({"rke2_numa_node_labels": ["bad label=x"]}, "bad label"),
        ({"rke2_numa_extra_kubelet_args": ["max-pods 110"]}, "max-pods 110"),
    ],
    ids=["reserved-cores-0", "float-version", "taint-without-effect", "bad-label", "extra-arg-with-a-space"],
)
def test_input_that_would_make_a_wrong_plan_fails_the_host(inventory, tmp_path, extra_vars, fragment):
    result = play(inventory, "-e", json.dumps(extra_vars), "--limit", "dgx-h100", "-e", "rke2_numa_plan_dir=%s" % tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert fragment in out, out
    assert "Traceback" not in out
    assert re.search(r"^dgx-h100 +: ok=\d+ +changed=0 +unreachable=0 +failed=1", result.stdout, re.M)
    assert os.listdir(tmp_path) == []


def test_empty_reservations_are_passed_as_given(inventory, tmp_path):
    # {} and [] are what the operator wrote, not "the default"; null still is the default - for every option, those
    # whose default is not null too (numa_plan leaves a null option out)
    extra = {"rke2_numa_kube_reserved": {}, "rke2_numa_isolcpus_flags": [], "rke2_numa_reserved_cores": None,
             "rke2_numa_split_reserved": None, "rke2_numa_cpu_manager_policy": None}
    result = play(inventory, "-e", json.dumps(extra), "--limit", "dgx-h100", "-e", "rke2_numa_plan_dir=%s" % tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    plan = json.loads((tmp_path / "dgx-h100.json").read_text())
    assert "kube-reserved=memory=1Gi" not in plan["kubelet_args"]
    assert plan["kernel_args"][0].startswith("isolcpus=1-55,")
    assert plan["reserved_cpus"] == "0,56,112,168"
    assert "cpu-manager-policy=static" in plan["kubelet_args"]


def test_options_from_vars_are_each_host_s_variables_templated_and_an_option_the_task_sets_wins(inventory, tmp_path):
    # numa_plan's options_from_vars (plan.yml's call and the plan role's): every planner option from rke2_numa_<option>,
    # templated for the host (a template naming another variable, a group var); one the task sets wins; without it, none
    topology = {"maitred.rke2_numa.topology_info": {"sysfs_root": "{{ rke2_numa_sysfs_root }}"}, "register": "topo"}

    def plan(name, **options):
        return {"maitred.rke2_numa.numa_plan": dict(topology="{{ topo.topology }}", **options), "register": name}
    book = tmp_path / "book.yml"
    book.write_text(yaml.safe_dump([{
        "hosts": "dgx-h100", "gather_facts": False,
        "vars": {"cores": 4, "rke2_numa_reserved_cores": "{{ cores }}", "rke2_numa_kube_reserved": "{{ {'memory': '2Gi'} }}",
                 "rke2_numa_system_reserved": None},
        "tasks": [topology, plan("from_vars", options_from_vars=True), plan("set", options_from_vars=True, reserved_cores=2),
                  plan("plain"),
                  {"ansible.builtin.copy": {"content": "{{ [from_vars.plan, set.plan, plain.plan] | to_json }}",
                                            "dest": str(tmp_path / "plans.json")}}]}]))
    result = play(inventory, playbook=str(book))
    assert result.returncode == 0, result.stdout + result.stderr
    from_vars, given, plain = json.loads((tmp_path / "plans.json").read_text())
    assert from_vars["reserved_cpus"] == "0-1,56-57,112-113,168-169" and "kube-reserved=memory=2Gi" in from_vars["kubelet_args"]
    assert given["reserved_cpus"] == plain["reserved_cpus"] == "0,56,112,168" and "kube-reserved=memory=2Gi" in given["kubelet_args"]
    assert from_vars["hugepages"]["per_node"] == given["hugepages"]["per_node"] == {"0": 8, "1": 8} and plain["hugepages"]["per_node"] == {}
    assert "kube-reserved=memory=2Gi" not in plain["kubelet_args"]


def test_a_planner_variable_that_does_not_template_fails_its_host_naming_it(inventory, tmp_path):
    # "{{ rke2_numa_kube_reserved | default(none) }}" took a template that does not render for unset: the default plan,
    # silently. The host fails, naming the variable; the other host is planned.
    path = with_host_vars(inventory, tmp_path / "inventory.yml", {"dgx-h100": {"rke2_numa_kube_reserved": "{{ no_such_variable_anywhere }}"}})
    result = play(path, "-e", "rke2_numa_plan_dir=%s" % (tmp_path / "plans"))
    assert result.returncode != 0
    assert "rke2_numa_kube_reserved cannot be templated: 'no_such_variable_anywhere' is undefined" in result.stdout + result.stderr
    assert re.search(r"^dgx-h100 +: .* failed=1", result.stdout, re.M) and re.search(r"^l40s-offline +: .* failed=0", result.stdout, re.M)
    assert not (tmp_path / "plans" / "dgx-h100.json").exists() and (tmp_path / "plans" / "l40s-offline.json").exists()


def test_many_numa_nodes_fail_the_host_unless_opted_out(tmp_path):
    # a GB200 tray in NUMA mode: 2 CPU nodes + 4 GPUs x 8 GPU memory nodes = 34
    spec = gen_sysfs.make_spec(sockets=2, cores_per_socket=4, threads=1, gpus_per_node=2, gpu_memory_nodes=8,
                               gpu_memory_kb=180 * gen_sysfs.KB_PER_GB)
    root = gen_sysfs.write_tree(spec, str(tmp_path / "gb200"))
    inv = tmp_path / "inventory.yml"
    inv.write_text(yaml.safe_dump({"gpu": {"vars": {"ansible_connection": "local",
                                                    "ansible_python_interpreter": sys.executable},
                                           "hosts": {"gb200": {"rke2_numa_sysfs_root": root}}}}))
    result = play(str(inv))
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert "many-numa-nodes: this host has 34 NUMA nodes" in out and "32 of these are GPU memory nodes" in out, out
    assert re.search(r"^gb200 +: ok=\d+ +changed=0 +unreachable=0 +failed=1", result.stdout, re.M)
    opt_out = {"rke2_numa_allow_many_numa_nodes": True, "rke2_numa_topology_manager_policy": "none",
               "rke2_numa_memory_manager_policy": "None", "rke2_numa_plan_dir": str(tmp_path / "plans")}
    result = play(str(inv), "-e", json.dumps(opt_out))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "NUMA alignment of pods is off" in out
    plan = json.loads((tmp_path / "plans" / "gb200.json").read_text())
    assert "topology-manager-policy=none" in plan["kubelet_args"]
