# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_state_info on a node's filesystem copy, and the compliance decision on what it read.

The node is made compliant with the collection's own write rules (the grub
drop-in boot_grub plans, the config.yaml merge) and the rke2 stand-in's
kubelet, which writes the checkpoints the real kubelet would; then one thing
at a time is put out of line.
"""

from __future__ import annotations

import json
import os

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.maitred.rke2_numa.plugins.modules import node_state_info
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.compliance import CHECK_FACTS, assess, check_facts
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import PLAN, nfd_features, numa_labels
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.planner import make_plan
from ansible_collections.maitred.rke2_numa.tests.fixtures.node_copy import TOKEN, comply, make_node

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


ALL_ACTIONS = ["drain", "boot_params", "reboot", "rke2_config", "reset", "verify", "uncordon", "label"]


def test_a_fresh_node_needs_everything_and_the_token_never_leaves_it(node):
    root, plan, state = node
    result = assess(plan, state())
    assert not result["compliant"] and result["actions"] == ALL_ACTIONS, result
    assert any(r.startswith("the boot configuration does not hold the plan's kernel args: add isolcpus=") for r in result["reasons"])
    assert "the running kernel does not run the plan's kernel args (reboot)" in result["reasons"]
    assert result["plan_fingerprint"] == plan["fingerprint"]


def test_a_node_that_runs_its_plan_is_compliant(node):
    root, plan, state = node
    comply(root, plan)
    result = assess(plan, state())
    assert result == {"compliant": True, "runs_plan": True, "reasons": [], "findings": [], "actions": [], "blocked": [],
                      "plan_fingerprint": plan["fingerprint"], "warnings": [],
                      "config_mode": "merge", "managed_by": "none", "managed_by_evidence": []}


def test_a_config_that_only_needs_its_mode_is_fixed_in_place_without_a_drain(node):
    """config.yaml holds the plan but is 0644 (the join token readable by all): the kubelet would see nothing new, so
    the fix is the file's mode alone - no drain, no restart (it used to drain the node and restart the agent)."""
    root, plan, state = node
    comply(root, plan)
    config = root / "etc/rancher/rke2/config.yaml"
    config.chmod(0o644)
    result = assess(plan, state())
    assert not result["compliant"] and result["actions"] == ["rke2_config"], result
    assert len(result["reasons"]) == 1 and result["reasons"][0].startswith("%s is 0644 " % config), result["reasons"]
    assert result["reasons"][0].endswith(", not 0600 root:root (it holds the join token)")
    # content and mode both off: a real change, drained and restarted as before
    text = config.read_text()
    config.write_text(text.replace("cpu-manager-policy=static", "cpu-manager-policy=none"))
    assert assess(plan, state())["actions"] == ["drain", "rke2_config", "restart", "verify", "uncordon", "label"]


def test_labels_that_lie_are_fixed_in_place_and_missing_labels_are_no_finding(node):
    """Our NUMA labels are part of compliance: labels of another plan or capacity send pods where they do not fit,
    so they are a finding, fixed in place (the labels role, no drain); a node without our labels only misses pods
    that select them (labels.yml labels it): not a finding. The old code called a node with stale labels compliant."""
    root, plan, state = node
    comply(root, plan)
    features = root / "etc/kubernetes/node-feature-discovery/features.d"
    path = features / "rke2-numa"
    read = dict(nfd_features_file=str(path))
    wanted = numa_labels(plan)
    # never labelled (or labels not used): compliant, nothing to say
    assert assess(plan, state(**read)) == assess(plan, state()) == {
        "compliant": True, "runs_plan": True, "reasons": [], "findings": [], "actions": [], "blocked": [], "plan_fingerprint": plan["fingerprint"],
        "warnings": [], "config_mode": "merge", "managed_by": "none", "managed_by_evidence": []}
    # the labels of another plan: a finding, fixed in place
    features.mkdir(parents=True)
    path.write_text(nfd_features(dict(wanted, **{PLAN: "0123456789abcdef"})))
    path.chmod(0o644)
    result = assess(plan, state(**read))
    assert not result["compliant"] and result["runs_plan"] and result["actions"] == ["label"], result
    assert result["reasons"] == ["%s does not hold this plan's NUMA labels (another plan or capacity: the labels would send pods "
                                 "where they do not fit)" % path]
    # with the config's mode to fix too: both in place
    (root / "etc/rancher/rke2/config.yaml").chmod(0o644)
    assert assess(plan, state(**read))["actions"] == ["rke2_config", "label"]
    (root / "etc/rancher/rke2/config.yaml").chmod(0o600)
    # the plan's labels, mode 0600: the role's copy would change the mode
    path.write_text(nfd_features(wanted))
    path.chmod(0o600)
    assert assess(plan, state(**read))["reasons"] == ["%s is 0600, not 0644" % path]
    path.chmod(0o644)
    assert assess(plan, state(**read))["compliant"]
    # a node that does not run its plan: the labels go with the roll; no warning about them
    path.unlink()
    config = root / "etc/rancher/rke2/config.yaml"
    text = config.read_text()
    config.write_text("")
    result = assess(plan, state(**read))
    assert "label" in result["actions"] and "drain" in result["actions"]
    config.write_text(text)
    # labels published with kubectl: our file left from an nfd run is a finding (the role removes it) ...
    path.write_text(nfd_features(wanted))
    result = assess(plan, state(**read), labels_via="kubectl", node_labels=dict(wanted, team="ml"))
    assert result["actions"] == ["label"] and result["reasons"] == [
        "%s is left from an earlier run with rke2_numa_labels_via=nfd (now kubectl): NFD still publishes its labels" % path]
    path.unlink()
    # ... and the Node's labels: other values are a finding; none of ours, or not read, is not
    assert assess(plan, state(**read), labels_via="kubectl", node_labels=dict(wanted, team="ml"))["compliant"]
    stale = dict(wanted, **{PLAN: "0123456789abcdef", "rke2-numa.maitred.io/hugepages-2mi-per-node": "4"})
    result = assess(plan, state(**read), labels_via="kubectl", node_labels=stale)
    assert result["actions"] == ["label"] and result["reasons"] == [
        "the Node's NUMA labels differ from this plan's: rke2-numa.maitred.io/hugepages-2mi-per-node, %s" % PLAN], result
    assert assess(plan, state(**read), labels_via="kubectl", node_labels={"team": "ml"})["compliant"]
    assert assess(plan, state(**read), labels_via="kubectl", node_labels=None) == assess(plan, state())
    assert assess(plan, state(**read), labels_via="none")["compliant"]


def test_a_pending_reboot_is_a_reboot_only(node):
    root, plan, state = node
    comply(root, plan, booted=False)
    result = assess(plan, state())
    assert result["actions"] == ["drain", "reboot", "verify", "uncordon", "label"], result
    assert any("is not on the running cmdline" in r for r in result["reasons"])


def test_a_config_without_a_planned_flag_is_a_config_change_and_a_restart(node):
    root, plan, state = node
    comply(root, plan)
    path = root / "etc/rancher/rke2/config.yaml"
    path.write_text(path.read_text().replace('  - "topology-manager-scope=pod"\n', ""))
    result = assess(plan, state())
    assert result["actions"] == ["drain", "rke2_config", "restart", "verify", "uncordon", "label"], result
    assert "kubelet flag topology-manager-scope=pod is missing in RKE2's config" in result["reasons"]


def test_a_drop_in_that_breaks_the_plan_counts(node):
    root, plan, state = node
    comply(root, plan)
    (root / "etc/rancher/rke2/config.yaml.d").mkdir()
    (root / "etc/rancher/rke2/config.yaml.d/60-gpu-operator.yaml").write_text("kubelet-arg+:\n  - cpu-manager-policy=none\n")
    result = assess(plan, state())
    assert not result["compliant"]
    assert "kubelet flag cpu-manager-policy=static is cpu-manager-policy=none in RKE2's config" in result["reasons"]
    # the rke2_config action would refuse to write (the drop-in still wins after it): blocked, no drain for nothing
    assert result["actions"] == [] and result["blocked"] == [
        "the kubelet flags RKE2 would pass do not hold the plan: cpu-manager-policy would be none, not the plan's static: "
        "%s/etc/rancher/rke2/config.yaml.d/60-gpu-operator.yaml sets it too (a later value wins)" % root], result["blocked"]


def test_a_drop_in_that_replaces_our_kubelet_args_blocks_the_node(node):
    """A later drop-in's plain kubelet-arg replaces config.yaml's: merge mode cannot reach the kubelet - blocked."""
    root, plan, state = node
    (root / "etc/rancher/rke2/config.yaml.d").mkdir()
    (root / "etc/rancher/rke2/config.yaml.d/50-site.yaml").write_text("kubelet-arg:\n  - max-pods=250\n")
    result = assess(plan, state())
    assert result["actions"] == [] and len(result["blocked"]) == 1, result
    assert "would not reach the kubelet: %s/etc/rancher/rke2/config.yaml.d/50-site.yaml sets kubelet-arg, which replaces the " \
           "earlier files' (use kubelet-arg+ there)" % root in result["blocked"][0]
    assert result["blocked"][0] in result["reasons"]
    # in drop-in mode ours is read last (99-) and appends: nothing refuses, the roll may go on
    dropin = str(root / "etc/rancher/rke2/config.yaml.d/99-rke2-numa.yaml")
    result = assess(plan, state(), "dropin", dropin)
    assert result["blocked"] == [] and "drain" in result["actions"], result
    # a drop-in path RKE2 never reads is refused by the action: blocked too
    result = assess(plan, state(), "dropin", str(root / "etc/rancher/rke2/99-rke2-numa.yaml"))
    assert result["actions"] == [] and "the only folder RKE2 reads drop-ins from" in result["blocked"][0], result


def test_what_the_action_refuses_and_the_parsed_values_hide_blocks_the_node(node):
    """An alias shared with another key, a symlink to nothing: the rke2_config action refuses them although the
    values read back look fine - check.yml must block the node, not drain it for a refused write."""
    root, plan, state = node
    config = root / "etc/rancher/rke2/config.yaml"
    config.write_text("token: %s\nbase: &args\n  - max-pods=250\nkubelet-arg: *args\n" % TOKEN)
    result = assess(plan, state())
    assert result["actions"] == [] and result["blocked"] == [
        "%s: kubelet-arg shares a YAML node with another place of the file (an anchor and its alias): the merge cannot edit it in "
        "place without changing the other (rewrite it as a plain block list)" % config], result
    assert TOKEN not in json.dumps(result)
    config.write_text("token: %s\nkubelet-arg: &a [max-pods=250, *a]\n" % TOKEN)   # holds itself: read, not a crash
    assert assess(plan, state())["blocked"]
    config.unlink()
    config.symlink_to(root / "etc/rancher/rke2/elsewhere.yaml")
    result = assess(plan, state())
    assert result["blocked"] == ["%s is a symlink to %s, which does not exist (the rke2_config action refuses to write through it)"
                                 % (config, root / "etc/rancher/rke2/elsewhere.yaml")] and result["actions"] == [], result


def test_in_drop_in_mode_our_own_unreadable_drop_in_does_not_block(node):
    """The action rewrites its drop-in without reading it: a broken one of ours is fixed, not a reason to stop."""
    root, plan, state = node
    (root / "etc/rancher/rke2/config.yaml.d").mkdir()
    dropin = root / "etc/rancher/rke2/config.yaml.d/99-rke2-numa.yaml"
    dropin.write_text("kubelet-arg+: [\n")
    result = assess(plan, state(), "dropin", str(dropin))
    assert result["blocked"] == [] and "drain" in result["actions"], result


def test_an_unreadable_boot_configuration_blocks_the_node(node):
    root, plan, state = node
    got = state()
    got["boot"] = dict(got["boot"], error="cannot read the kernel entries: grubby exited 3")
    result = assess(plan, got)
    assert result["blocked"] == ["boot configuration: cannot read the kernel entries: grubby exited 3"] and result["actions"] == []


def test_checkpoints_the_kubelet_would_refuse_need_a_reset(node):
    root, plan, state = node
    comply(root, plan, kubelet=False)  # the none/None checkpoints of the fresh node stay
    result = assess(plan, state())
    assert "reset" in result["actions"] and not result["compliant"], result


def test_an_unparseable_config_is_reported_without_its_text(node):
    root, plan, state = node
    comply(root, plan)
    (root / "etc/rancher/rke2/config.yaml").write_text("token: %s\nkubelet-arg: [\n" % TOKEN)
    result = assess(plan, state())
    assert not result["compliant"] and result["actions"] == [], "blocked: the rke2_config action would refuse the file"
    assert result["blocked"] and "is not valid YAML at line" in result["blocked"][0]
    assert any("is not valid YAML at line" in r for r in result["reasons"]) and TOKEN not in json.dumps(result)


def test_a_config_with_duplicate_keys_blocks_the_node_without_its_text(node):
    """PyYAML keeps the last of two keys; YAML forbids them and the rke2_config action refuses the file: blocked."""
    root, plan, state = node
    comply(root, plan)
    (root / "etc/rancher/rke2/config.yaml").write_text("token: %s\nkubelet-arg:\n  - max-pods=250\ntoken: %s\n" % (TOKEN, TOKEN))
    result = assess(plan, state())
    assert result["actions"] == [] and result["blocked"] == [
        "%s/etc/rancher/rke2/config.yaml: duplicate key 'token' at line 4 (first at line 1)" % root], result
    assert TOKEN not in json.dumps(result)


def test_a_failing_grubby_is_a_boot_error_not_a_failed_read(tmp_path, capsys, monkeypatch):
    root = make_node(tmp_path / "node", sockets=1, cores_per_socket=4, threads=2, gpus_per_node=1)
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "grubby").write_text("#!/bin/sh\necho 'grubby: no /boot/loader/entries' >&2\nexit 3\n")
    (tools / "grubby").chmod(0o755)
    monkeypatch.setenv("PATH", str(tools) + ":" + "/usr/bin:/bin")
    with patch_module_args(dict(sysfs_root=str(root), boot_root=str(root), boot_method="grubby",
                                kubelet_dir=str(root / "var/lib/kubelet"), config_path=str(root / "etc/rancher/rke2/config.yaml"))):
        with pytest.raises(SystemExit) as exc:
            node_state_info.main()
    result = json.loads(capsys.readouterr().out)
    assert exc.value.code == 0, result
    assert result["boot"]["method"] is None
    assert result["boot"]["error"] == "cannot read the kernel entries: %s --info=ALL exited 3: grubby: no /boot/loader/entries" % (tools / "grubby")


# A tool that templates config.yaml wholesale (lablabs' ansible-role-rke2, rke2-ansible), run after us.
REWRITTEN = "server: https://rke2.example:9345\ntoken: %s\nkubelet-arg:\n  - max-pods=250\n" % TOKEN


def test_a_config_rewritten_after_our_run_is_named(node):
    root, plan, state = node
    comply(root, plan)
    (root / "etc/rancher/rke2/config.yaml").write_text(REWRITTEN)
    result = assess(plan, state())
    assert "rke2_config" in result["actions"]
    warning = [w for w in result["warnings"] if "was rewritten without this collection's kubelet args" in w]
    assert warning and "rke2_kubelet_arg" in warning[0] and "rke2_numa_config_mode=dropin" in warning[0], result["warnings"]


def test_a_config_we_never_merged_is_not_called_rewritten(node):
    root, plan, state = node
    comply(root, plan, config=False, kubelet=False)
    result = assess(plan, state())
    assert "rke2_config" in result["actions"]
    assert not [w for w in result["warnings"] if "rewritten" in w], result["warnings"]


def test_a_config_rewritten_in_drop_in_mode_is_no_concern(node):
    root, plan, state = node
    comply(root, plan)
    (root / "etc/rancher/rke2/config.yaml").write_text(REWRITTEN)
    result = assess(plan, state(), "dropin", str(root / "etc/rancher/rke2/config.yaml.d/50-rke2-numa.yaml"))
    assert not [w for w in result["warnings"] if "rewritten" in w], result["warnings"]


def install_hugepages_unit(root, plan):
    """What the hugepages role does, with its own templates rendered in-process by Ansible's templar (the one its
    template module runs) into the copy: the script and the unit (enable_hugepages_unit adds the wants link)."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template

    templates = os.path.join(REPO, "roles", "hugepages", "templates")
    templar = Templar(loader=DataLoader(), variables={
        "rke2_numa_plan": plan, "rke2_numa_agent_service": "rke2-agent.service", "rke2_numa_hugepages_retries": 5,
        "rke2_numa_hugepages_sysfs_root": "/", "ansible_managed": "Ansible managed"})
    for template, dest, mode in (("rke2-numa-hugepages.sh.j2", "usr/local/sbin/rke2-numa-hugepages", 0o755),
                                 ("rke2-numa-hugepages.service.j2", "etc/systemd/system/rke2-numa-hugepages.service", 0o644)):
        with open(os.path.join(templates, template)) as f:
            text = templar.template(trust_as_template(f.read()))
        (root / dest).parent.mkdir(parents=True, exist_ok=True)
        (root / dest).write_text(text)
        os.chmod(str(root / dest), mode)


def enable_hugepages_unit(root):
    """What systemctl enable does for WantedBy=multi-user.target."""
    wants = root / "etc/systemd/system/multi-user.target.wants"
    wants.mkdir(exist_ok=True)
    (wants / "rke2-numa-hugepages.service").symlink_to("/etc/systemd/system/rke2-numa-hugepages.service")


def set_pools(root, plan):
    for node_id, pages in plan["hugepages"]["per_node"].items():
        pool = root / ("sys/devices/system/node/node%s/hugepages/hugepages-%dkB/nr_hugepages" % (node_id, plan["hugepages"]["size_kb"]))
        pool.parent.mkdir(parents=True, exist_ok=True)
        pool.write_text("%d\n" % pages)


def test_the_hugepages_unit_is_part_of_compliance(node):
    """Runtime hugepages: the role's unit must be installed, enabled and set the plan's pages (read from the script the
    role's own template renders); pools that are right today do not make a node compliant whose unit would not set
    them again at the next boot. A plan without runtime hugepages wants no unit left behind."""
    root, dummy, state = node
    plan = make_plan(state()["topology"], hugepages_per_node=2, hugepages_method="runtime")
    assert plan["hugepages"]["method"] == "runtime"
    set_pools(root, plan)
    comply(root, plan)
    missing = assess(plan, state())
    assert "the hugepages unit rke2-numa-hugepages.service is not installed: the plan's pools would not be set again at the next " \
           "boot" in missing["reasons"] and "hugepages" in missing["actions"] and "drain" in missing["actions"], missing
    install_hugepages_unit(root, plan)
    assert state()["hugepages_unit"]["sets"] == {"size_kb": plan["hugepages"]["size_kb"],
                                                 "per_node": dict((str(n), p) for n, p in plan["hugepages"]["per_node"].items())}
    disabled = assess(plan, state())
    assert disabled["reasons"] == ["the hugepages unit rke2-numa-hugepages.service is not enabled: the pools would not be set "
                                   "again at the next boot"], disabled
    enable_hugepages_unit(root)
    assert assess(plan, state())["compliant"], "the role's own files, enabled: compliant"
    bigger = make_plan(state()["topology"], hugepages_per_node=3, hugepages_method="runtime")
    set_pools(root, bigger)
    outdated = assess(bigger, state())
    assert "the hugepages unit sets node 0: 2 x 1048576 kB, node 1: 2 x 1048576 kB, the plan wants node 0: 3 x 1048576 kB, " \
           "node 1: 3 x 1048576 kB" in outdated["reasons"] and "hugepages" in outdated["actions"], outdated
    none = make_plan(state()["topology"])
    left = assess(none, state())
    assert any(r.startswith("the hugepages unit rke2-numa-hugepages.service of an earlier plan is still installed")
               for r in left["reasons"]) and "hugepages" in left["actions"], left


def test_labels_kubectl_wrote_are_a_finding_when_labels_go_another_way_now(node):
    """With rke2_numa_labels_via none or nfd, our labels kubectl wrote (NFD does not track them) stay on the Node: a
    finding fixed in place (the labels role removes them). The old check said nothing: it read no labels then."""
    root, plan, state = node
    comply(root, plan)
    wanted = numa_labels(plan)
    written = dict(wanted)   # what check.yml passes with nfd or none: our labels NFD does not track
    result = assess(plan, state(), labels_via="none", node_labels=written)
    assert not result["compliant"] and result["runs_plan"] and result["actions"] == ["label"], result
    assert result["reasons"][0].startswith("the Node carries NUMA labels kubectl wrote (an earlier rke2_numa_labels_via=kubectl) that "
                                           "rke2_numa_labels_via=none does not publish: ")
    # nfd publishes the same keys (it takes them over): only a key it will not publish is one
    assert assess(plan, state(), labels_via="nfd", node_labels=written)["reasons"] == []
    stale = dict(written, **{"rke2-numa.maitred.io/hugepages-1gi-per-node": "4"})
    assert assess(plan, state(), labels_via="nfd", node_labels=stale)["reasons"][0].endswith(
        "does not publish: rke2-numa.maitred.io/hugepages-1gi-per-node - labels.yml removes them")
    assert assess(plan, state(), labels_via="none", node_labels={})["compliant"]


# ---- Rancher-managed nodes (rancher-system-agent's 50-rancher.yaml beside config.yaml)

DROPIN = "etc/rancher/rke2/config.yaml.d/90-rke2-numa.yaml"


def rancher_node(root, kubelet_args=None):
    """Rancher's planner's file: plain keys, node-label with the machine's label (and kubelet-arg when a user set one)."""
    folder = root / "etc/rancher/rke2/config.yaml.d"
    folder.mkdir(exist_ok=True)
    data = "node-label:\n- rke.cattle.io/machine=7f3c2a1e-0d4b-4a8e-9c51-2f0c3b7d8e90\n"
    if kubelet_args:
        data += "kubelet-arg:\n" + "".join("- %s\n" % a for a in kubelet_args)
    (folder / "50-rancher.yaml").write_text(data)
    (root / "etc/systemd/system").mkdir(parents=True, exist_ok=True)
    (root / "etc/systemd/system/rancher-system-agent.service").write_text("[Service]\n")


def test_the_node_read_says_rancher_manages_it_and_why(node):
    root, plan, state = node
    assert state()["rancher"] == {"managed_by": "none", "evidence": [], "at_work": []}
    rancher_node(root)
    found = state()["rancher"]
    assert found["managed_by"] == "rancher" and len(found["evidence"]) == 2, found
    assert "50-rancher.yaml (Rancher's RKE2 settings)" in found["evidence"][0]
    assert "/etc/systemd/system/rancher-system-agent.service" in found["evidence"][1]


def test_merge_mode_on_a_rancher_node_is_blocked_naming_the_way_out(node):
    """On today's code merge was written into config.yaml, which Rancher's file shadows at its next restart."""
    root, plan, state = node
    comply(root, plan, config=False)
    rancher_node(root)
    result = assess(plan, state(), "merge", str(root / DROPIN))
    assert result["actions"] == [] and len(result["blocked"]) == 1, result
    assert "Rancher manages" in result["blocked"][0] and "rke2_numa_config_mode=auto" in result["blocked"][0]
    assert "rancher-system-agent.service" in result["blocked"][0]


def test_auto_on_a_rancher_node_writes_the_drop_in_after_rancher_s(node):
    root, plan, state = node
    comply(root, plan, config=False)
    rancher_node(root)
    result = assess(plan, state(), "auto", str(root / DROPIN))
    assert result["blocked"] == [] and "rke2_config" in result["actions"], result
    assert any("90-rke2-numa.yaml does not exist yet" in r for r in result["reasons"]), result["reasons"]


def test_a_merged_rancher_node_moves_to_the_drop_in_in_place_without_a_restart(node):
    """The plan in config.yaml (an earlier merge) holds today, but Rancher's first kubelet-arg would replace it: it moves
    to the drop-in. RKE2 would pass the same flags after the move - fixed in place, no drain, no restart."""
    root, plan, state = node
    comply(root, plan)
    rancher_node(root)
    dropin = root / DROPIN
    result = assess(plan, state(), "auto", str(dropin))
    assert not result["compliant"] and result["runs_plan"] and result["actions"] == ["rke2_config"], result
    assert any("still holds what merge mode wrote, which moves to" in r for r in result["reasons"]), result["reasons"]
    # after the move (what the action writes): compliant
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import dropin_config, unmerged_config
    config = root / "etc/rancher/rke2/config.yaml"
    config.write_text(unmerged_config(config.read_text(), str(config))[0])
    dropin.write_text(dropin_config(plan["kubelet_args"], plan["node_labels"], plan["node_taints"]))
    os.chmod(str(dropin), 0o600)
    result = assess(plan, state(), "auto", str(dropin))
    assert result["compliant"], result


def test_a_rancher_kubelet_arg_that_conflicts_with_the_plan_blocks_naming_both_values(node):
    root, plan, state = node
    comply(root, plan, config=False)
    theirs = "reserved-memory=0:memory=512Mi"
    rancher_node(root, ["max-pods=200", theirs])
    ours = next(a for a in plan["kubelet_args"] if a.startswith("reserved-memory="))
    result = assess(plan, state(), "auto", str(root / DROPIN))
    assert result["actions"] == [] and result["blocked"], result
    text = " ".join(result["blocked"])
    assert "Rancher sets reserved-memory=0:memory=512Mi" in text and ours in text and "machineSelectorConfig" in text, text


def test_a_rancher_kubelet_arg_the_plan_does_not_manage_is_kept_and_fine(node):
    root, plan, state = node
    comply(root, plan, config=False)
    rancher_node(root, ["max-pods=200"])
    result = assess(plan, state(), "auto", str(root / DROPIN))
    assert result["blocked"] == [] and "rke2_config" in result["actions"], result


def test_an_earlier_drop_in_of_ours_under_the_old_name_is_replaced(node):
    root, plan, state = node
    comply(root, plan, config=False)
    from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import dropin_config
    folder = root / "etc/rancher/rke2/config.yaml.d"
    folder.mkdir(exist_ok=True)
    old = folder / "50-rke2-numa.yaml"
    old.write_text(dropin_config(plan["kubelet_args"], plan["node_labels"], plan["node_taints"]))
    os.chmod(str(old), 0o600)
    result = assess(plan, state(), "dropin", str(root / DROPIN))
    # both would add up (reserved-memory accumulates) - but the old one is ours: it goes, nothing is blocked
    assert result["blocked"] == [] and any("earlier drop-in of ours" in r for r in result["reasons"]), result
    assert result["actions"] == ["rke2_config"], result   # RKE2 passes the same flags after: in place


def test_the_decision_says_who_manages_the_node_and_rancher_at_work_is_a_warning(node):
    root, plan, state = node
    comply(root, plan)
    result = assess(plan, state(), "auto", str(root / DROPIN), rancher_machine="m-1")
    assert result["managed_by"] == "rancher" and result["managed_by_evidence"] == ["the Node's label rke.cattle.io/machine=m-1"]
    assert result["config_mode"] == "merge" and result["compliant"], result   # the host's files decide the mode
    assert any("shows no sign of Rancher" in w for w in result["warnings"]), result["warnings"]
    lock = root / "var/lib/rancher/agent/interlock/applyinator-active"
    lock.parent.mkdir(parents=True)
    lock.write_text("")
    result = assess(plan, state(), "auto", str(root / DROPIN))
    assert result["managed_by"] == "rancher" and "applying a plan" in result["managed_by_evidence"][0], result
    assert any(w.startswith("Rancher is at work on the node: rancher-system-agent is applying a plan") for w in result["warnings"])


def test_the_check_says_what_rancher_s_next_restart_would_do_to_a_merged_node(node):
    """The plan in config.yaml, then a Rancher user sets a kubelet argument: 50-rancher.yaml's plain kubelet-arg
    replaces config.yaml's. The kubelet still runs with the plan (not restarted yet); at Rancher's restart it would
    read cpu-manager-policy none and refuse its static checkpoint - said before it happens."""
    root, plan, state = node
    comply(root, plan)
    rancher_node(root, ["max-pods=200"])
    result = assess(plan, state(), "auto", str(root / DROPIN))
    restart = [r for r in result["reasons"] if r.startswith("at the next restart of rke2")]
    assert len(restart) == 2 and "Rancher restarts it" in restart[0], result["reasons"]
    assert 'configured policy "none" differs from state checkpoint policy "static"' in restart[0]
    assert '[memorymanager] configured policy "None" differs from state checkpoint policy "Static"' in restart[1]
    # the way out: the drop-in after Rancher's, then a restart with the plan (no reset: the checkpoints hold it)
    assert result["blocked"] == [] and {"drain", "rke2_config", "restart"} <= set(result["actions"]), result


def test_check_yml_s_facts_are_the_decision_s(node):
    """check.yml's facts (numa_plan with check: compliance.check_facts): the decision, and rke2_numa_managed_by(_evidence)
    from it - Rancher's files, its interlock and the Node's machine label as evidence; a node whose root's files could
    not be read is not judged."""
    root, plan, state = node
    rancher_node(root)
    lock = root / "var/lib/rancher/agent/interlock/applyinator-active"
    lock.parent.mkdir(parents=True)
    lock.write_text("")
    read = state()
    for machine in (None, "m-1"):
        facts = check_facts(plan, {"state": read, "config_mode": "auto", "dropin_path": str(root / DROPIN), "labels_via": "nfd",
                                   "node_labels": None, "rancher_machine": machine, "pod_audit": {"unpinned": []}})
        assert sorted(facts) == sorted(CHECK_FACTS)
        decision = assess(plan, read, "auto", str(root / DROPIN), rancher_machine=machine)
        assert facts["rke2_numa_compliance"] == decision
        assert (facts["rke2_numa_managed_by"], facts["rke2_numa_managed_by_evidence"]) == ("rancher", decision["managed_by_evidence"]), facts
        assert decision["managed_by"] == "rancher" and len(decision["managed_by_evidence"]) == (3 if machine is None else 4), decision
        assert facts["rke2_numa_topology"] is read["topology"] and facts["rke2_numa_pod_audit"] == {"unpinned": []}
    unread = dict(read, access={"user": "ops", "denied": ["/var/lib/kubelet"]})
    assert check_facts(plan, {"state": unread}) == {"rke2_numa_topology": read["topology"], "rke2_numa_pod_audit": {},
                                                    "rke2_numa_compliance": {}, "rke2_numa_managed_by": "unknown",
                                                    "rke2_numa_managed_by_evidence": []}
