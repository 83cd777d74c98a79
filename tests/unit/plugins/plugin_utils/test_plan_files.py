# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plan.yml's files for the whole run at once (plugin_utils/plan_files.py): what the plan role's copy and template
tasks wrote per host, and its artifacts (rke2_numa_plans) merged across slices."""

from __future__ import annotations

import json

import jinja2
import pytest
import yaml

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.artifacts import check_summary, merge, stats
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.plan_files import config_snippet, plan_fleet, plan_files
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.plugins.module_utils.sysfs_topology import read_topology
from ansible_collections.maitred.rke2_numa.tests.fixtures import gen_sysfs

DROPIN = "/etc/rancher/rke2/config.yaml.d/90-maitred-numa.yaml"


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    out = tmp_path_factory.mktemp("samples")
    gen_sysfs.main(["--out", str(out)])
    names = sorted(gen_sysfs.samples())[:2]
    plans = [make_plan(read_topology(str(out / name))) for name in names]
    plans.append(make_plan(read_topology(str(out / names[0])), node_taints=["maitred.io/gpu=true:NoSchedule"]))
    return plans


def test_the_snippet_is_what_the_plan_role_s_template_wrote(plans):
    # the template as it was (roles/plan/templates/config-snippet.yaml.j2 until plan files were made in one step),
    # rendered as the template module does (trim_blocks) with ansible-core's default ansible_managed
    environment = jinja2.Environment(trim_blocks=True)
    environment.filters.update(comment=lambda text: "#\n# %s\n#" % text,
                               to_nice_yaml=lambda data: yaml.safe_dump(data, indent=2, default_flow_style=False, width=1000))
    template = environment.from_string(
        "{{ ansible_managed | comment }}\n# Planned for {{ inventory_hostname }} (plan fingerprint {{ rke2_numa_plan.fingerprint }}).\n"
        "# Kernel command line additions: {{ rke2_numa_plan.kernel_args | join(' ') }}\n"
        "{{ {'kubelet-arg': rke2_numa_plan.kubelet_args} | to_nice_yaml }}\n"
        "{%- if rke2_numa_plan.node_labels %}\n{{ {'node-label': rke2_numa_plan.node_labels} | to_nice_yaml }}\n{%- endif %}\n"
        "{%- if rke2_numa_plan.node_taints %}\n{{ {'node-taint': rke2_numa_plan.node_taints} | to_nice_yaml }}\n{%- endif %}\n")
    for plan in plans:
        expected = template.render(ansible_managed="Ansible managed", inventory_hostname="gpu-1", rke2_numa_plan=plan)
        assert config_snippet("gpu-1", plan) == expected
    assert "node-taint:\n- maitred.io/gpu=true:NoSchedule\n" in config_snippet("gpu-1", plans[2])


def test_files_for_planned_hosts_only_never_a_refused_host_s(plans):
    hostvars = {"a": {"rke2_numa_plan": plans[0]}, "b": {"rke2_numa_plan": plans[1]},
                # refused: an extra-var plan made for another host stays unwritten
                "c": {"rke2_numa_plan": plans[0], "__rke2_numa_plan_result": {"refused": "a plan made for another topology"}},
                "d": {}}
    files = plan_files(["a", "b", "c", "d"], hostvars, "example.com/class", "", DROPIN)
    assert sorted(files) == ["a.config.yaml", "a.json", "a.kubelet.conf", "b.config.yaml", "b.json", "b.kubelet.conf", "dra.yaml", "rancher.yaml"]
    assert json.loads(files["a.json"]) == plans[0] and files["a.json"].endswith("}\n")
    assert "CLUSTER-NAME" in files["rancher.yaml"] and "kind: KubeletConfiguration" in files["b.kubelet.conf"]
    assert plan_files(["c", "d"], hostvars, "example.com/class", "", DROPIN) == {}   # no host planned: no file at all


def test_the_artifacts_of_plan_slices_merge_into_the_whole_run_s(plans):
    hostvars = {"a": {"rke2_numa_plan": plans[0]}, "b": {"rke2_numa_plan": plans[1]},
                "c": {"__rke2_numa_plan_result": {"refused": "reserved_cores 0"}}, "d": {}}
    whole = check_summary(plan_fleet(["a", "b", "c", "d"], hostvars), "plan", "1")
    assert whole["hosts_by_state"] == {"planned": ["a", "b"], "not_planned": ["c", "d"], "refused": ["c"]}
    assert whole["fingerprints"] == {"a": plans[0]["fingerprint"], "b": plans[1]["fingerprint"]}
    assert sorted(stats(whole, "1")) == ["rke2_numa_plans", "rke2_numa_plans_1"]
    given = {}
    for run, hosts in (("7", ["a", "c"]), ("8", ["b", "d"])):
        given.update(stats(check_summary(plan_fleet(hosts, hostvars), "plan", run), run))
    merged = merge(given, "rke2_numa_plans")
    assert (merged["hosts_by_state"], merged["fingerprints"], merged["planned"], merged["hosts"]) == (
        whole["hosts_by_state"], whole["fingerprints"], 2, 4)
