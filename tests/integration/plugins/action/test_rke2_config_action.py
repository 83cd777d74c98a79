# -*- coding: utf-8 -*-
"""rke2_config through ansible-playbook on this machine (local connection, temp files):
modes and backups, check mode, idempotence, drop-in, and the join token never
in the output of ``-vvv --diff``."""

from __future__ import annotations

import glob
import os
import stat
import subprocess
import sys

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
TOKEN = "K10deadbeef::server:t0psecret"
PLANNED = ["cpu-manager-policy=static", "reserved-cpus=0,2"]

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="writes files as root:root, like on a node")


def run(tmp_path, *extra, **task):
    playbook = tmp_path / "play.yml"
    task.setdefault("kubelet_args", PLANNED)
    task.setdefault("backup_dir", str(tmp_path / "backup"))
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False,
                                         "tasks": [{"maitred.rke2_numa.rke2_config": task, "register": "out"},
                                                   {"ansible.builtin.debug": {"var": "out"}}]}]))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
           "-e", "ansible_python_interpreter=%s" % sys.executable, str(playbook)] + list(extra)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("server: https://10.0.0.1:9345\ntoken: %s\nkubelet-arg:\n  - max-pods=250\n  - reserved-cpus=1\n" % TOKEN)
    os.chmod(path, 0o644)  # as someone left it: the token readable by all
    return path


def test_merge_check_run_check_run(tmp_path, config):
    before = config.read_text()
    out = run(tmp_path, "--check", "--diff", "-vvv", path=str(config))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "changed=1" in out.stdout and config.read_text() == before
    assert TOKEN not in out.stdout + out.stderr and "reserved-cpus=0,2" in out.stdout

    out = run(tmp_path, "--diff", "-vvv", path=str(config))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "changed=1" in out.stdout
    assert TOKEN not in out.stdout + out.stderr, "the join token leaked into the output"
    data = yaml.safe_load(config.read_text())
    assert data["token"] == TOKEN and data["kubelet-arg"] == ["max-pods=250"] + PLANNED
    assert stat.S_IMODE(os.stat(config).st_mode) == 0o600
    backups = glob.glob(str(tmp_path / "backup" / "*~"))
    assert len(backups) == 1 and stat.S_IMODE(os.stat(backups[0]).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(str(tmp_path / "backup")).st_mode) == 0o700
    assert open(backups[0]).read() == before

    for extra in (["--check"], []):
        out = run(tmp_path, *extra, path=str(config))
        assert out.returncode == 0 and "changed=0" in out.stdout, out.stdout
    assert len(glob.glob(str(tmp_path / "backup" / "*~"))) == 1


def test_invalid_yaml_fails_and_writes_nothing(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("token: %s\nkubelet-arg: [unclosed\n" % TOKEN)
    out = run(tmp_path, "-vvv", path=str(path))
    assert out.returncode != 0 and "is not valid YAML" in out.stdout
    assert TOKEN not in out.stdout + out.stderr
    assert path.read_text() == "token: %s\nkubelet-arg: [unclosed\n" % TOKEN


def test_dropin_leaves_config_alone(tmp_path, config):
    before = config.read_text()
    dropin = tmp_path / "config.yaml.d" / "50-rke2-numa.yaml"
    os.makedirs(str(dropin.parent))
    out = run(tmp_path, "--diff", path=str(config), mode="dropin", dropin_path=str(dropin))
    assert out.returncode == 0, out.stdout + out.stderr
    assert config.read_text() == before and stat.S_IMODE(os.stat(config).st_mode) == 0o644
    assert yaml.safe_load(dropin.read_text()) == {"kubelet-arg+": PLANNED}
    assert "reserved-cpus also set in %s; the plan's value reaches the kubelet" % config in out.stdout + out.stderr
    out = run(tmp_path, path=str(config), mode="dropin", dropin_path=str(dropin))
    assert "changed=0" in out.stdout


def test_dropin_creates_its_folder(tmp_path, config):
    # RKE2 nodes rarely have config.yaml.d: the first drop-in makes it
    dropin = tmp_path / "config.yaml.d" / "50-rke2-numa.yaml"
    out = run(tmp_path, path=str(config), mode="dropin", dropin_path=str(dropin))
    assert out.returncode == 0, out.stdout + out.stderr
    assert yaml.safe_load(dropin.read_text()) == {"kubelet-arg+": PLANNED}
    assert stat.S_IMODE(os.stat(dropin).st_mode) == 0o600
    other = tmp_path / "other" / "config.yaml"
    os.makedirs(str(other.parent))
    other.write_text(config.read_text())
    out = run(tmp_path, "--check", path=str(other), mode="dropin", dropin_path=str(other) + ".d/50-rke2-numa.yaml")
    assert out.returncode == 0 and "changed=1" in out.stdout, out.stdout + out.stderr
    assert os.listdir(str(other.parent)) == ["config.yaml"]


def result_of(out):
    """The registered result, from the debug task's YAML-ish JSON output."""
    import json
    text = out.stdout[out.stdout.index('"out": {'):]
    return json.loads("{" + text[:text.index("\n}\n") + 2])["out"]


def test_a_mode_only_change_is_backed_up_first_and_says_how_to_undo_it(tmp_path, config):
    text, dummy = __import__("ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config",
                             fromlist=["x"]).merged_config(config.read_text(), "c", PLANNED)
    config.write_text(text)
    os.chmod(str(config), 0o644)
    out = run(tmp_path, path=str(config))
    assert out.returncode == 0, out.stdout + out.stderr
    res = result_of(out)
    assert res["changed"] and not res["content_changed"] and not res["created"]
    assert res["previous"] == {"mode": "0644", "owner": "root", "group": "root"}
    assert open(res["backup_file"]).read() == text == config.read_text()
    assert stat.S_IMODE(os.stat(str(config)).st_mode) == 0o600


def test_a_symlinked_config_stays_a_symlink_and_its_target_changes(tmp_path, config):
    target = tmp_path / "real" / "config.yaml"
    os.makedirs(str(target.parent))
    os.rename(str(config), str(target))
    os.symlink("real/config.yaml", str(tmp_path / "config.yaml"))
    out = run(tmp_path, path=str(config))
    assert out.returncode == 0, out.stdout + out.stderr
    assert os.readlink(str(config)) == "real/config.yaml"
    assert yaml.safe_load(target.read_text())["kubelet-arg"] == ["max-pods=250"] + PLANNED
    assert result_of(out)["real_path"] == str(target)


def test_a_dangling_symlink_is_refused(tmp_path):
    os.symlink(str(tmp_path / "nowhere.yaml"), str(tmp_path / "config.yaml"))
    out = run(tmp_path, path=str(tmp_path / "config.yaml"))
    assert out.returncode != 0 and "which does not exist: nothing written" in out.stdout
    assert not (tmp_path / "nowhere.yaml").exists() and not (tmp_path / "backup").exists()


@pytest.mark.parametrize(
    "content, message",
    [
        (b"token: %s\nkubelet-arg:\n  - max-pods=1\nkubelet-arg:\n  - x=1\n" % TOKEN.encode(),
         "duplicate key 'kubelet-arg' at line 4 (first at line 2)"),
        (b"token: %s\nnode-name: caf\xe9\n" % TOKEN.encode(), "is not UTF-8 text (byte"),
    ],
)
def test_files_we_would_misread_are_refused_and_nothing_is_written(tmp_path, content, message):
    path = tmp_path / "config.yaml"
    path.write_bytes(content)
    os.chmod(str(path), 0o644)
    out = run(tmp_path, "-vvv", "--diff", path=str(path))
    assert out.returncode != 0 and message in out.stdout, out.stdout
    assert TOKEN not in out.stdout + out.stderr
    assert path.read_bytes() == content and stat.S_IMODE(os.stat(str(path)).st_mode) == 0o644
    assert not (tmp_path / "backup").exists()


TOKEN_FORMS = [
    '"token": "%s"\nkubelet-arg: []\n',
    "'agent-token': %s\n",
    '{"server": "https://x:9345", "token": "%s"}\n',
    "token:\n  %s\n",
    "server: x\nbase: &t %s\ntoken: *t\n",
    "etcd-s3-secret-key: %s\n",
]


def test_the_token_never_shows_however_the_file_holds_it(tmp_path):
    """Each form in its own config.yaml, all merged by one task (a loop) in ONE run with -vvv --diff."""
    paths = []
    for i, content in enumerate(TOKEN_FORMS):
        folder = tmp_path / ("form%d" % i)
        folder.mkdir()
        (folder / "config.yaml").write_text(content % TOKEN)
        paths.append(str(folder / "config.yaml"))
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"maitred.rke2_numa.rke2_config": {"path": "{{ item }}", "kubelet_args": PLANNED,
                                           "backup_dir": "{{ item | dirname }}/backup"},
         "loop": paths, "register": "out"},
        {"ansible.builtin.debug": {"msg": "{{ out.results | map(attribute='changed') | list }}"}}]}]))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    out = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
                          "-e", "ansible_python_interpreter=%s" % sys.executable, str(playbook), "-vvv", "--diff"],
                         env=env, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert '"msg": [\n        true,\n        true,\n        true,\n        true,\n        true,\n        true\n    ]' in out.stdout
    assert out.stdout.count("reserved-cpus=0,2") >= len(TOKEN_FORMS)
    assert TOKEN not in out.stdout + out.stderr, "the join token leaked into the output"
    for path in paths:
        assert "reserved-cpus=0,2" in open(path).read()


@pytest.mark.parametrize("mode", ["merge", "dropin"])
def test_another_drop_in_that_breaks_the_plan_is_refused_and_nothing_is_written(tmp_path, config, mode):
    before = config.read_text()
    folder = tmp_path / "config.yaml.d"
    os.makedirs(str(folder))
    (folder / "60-gpu-operator.yaml").write_text("kubelet-arg+:\n  - reserved-memory=0:memory=1Gi\n")
    out = run(tmp_path, path=str(config), mode=mode, dropin_path=str(folder / "50-rke2-numa.yaml"))
    assert out.returncode != 0, out.stdout
    assert "reserved-memory would be 0:memory=1Gi, not the plan's None: %s sets it too" % (folder / "60-gpu-operator.yaml") \
        in out.stdout and "nothing written" in out.stdout
    assert config.read_text() == before and sorted(os.listdir(str(folder))) == ["60-gpu-operator.yaml"]
    assert not (tmp_path / "backup").exists()


@pytest.mark.parametrize("name, text", [("95-site.yaml", "kubelet-arg+:\n  - cpu-manager-policy+=none\n"),
                                        ("50-rancher.yaml", "kubelet-arg+:\n  - cpu_manager_policy=none\n")])
def test_a_flag_spelled_as_the_kubelet_normalises_it_blocks_the_write(tmp_path, config, name, text):
    """cpu-manager-policy+=none appended by a later drop-in (RKE2 trims the '+': k3s GetArgs) and cpu_manager_policy=none
    (the kubelet reads '_' as '-', and RKE2 sorts it after ours) both reach the kubelet as cpu-manager-policy=none over
    the plan's static: refused before any write (they were read as other flags, and the write went on)."""
    before = config.read_text()
    folder = tmp_path / "config.yaml.d"
    os.makedirs(str(folder))
    (folder / name).write_text(text)
    out = run(tmp_path, path=str(config), mode="dropin", dropin_path=str(folder / "90-rke2-numa.yaml"))
    assert out.returncode != 0 and "cpu-manager-policy" in out.stdout and "nothing written" in out.stdout, out.stdout[-3000:]
    assert config.read_text() == before and sorted(os.listdir(str(folder))) == [name]


@pytest.mark.parametrize("name", ["95-x.YAML", "95-x.Yml"])
def test_a_drop_in_named_in_capitals_is_read_as_rke2_reads_it_and_blocks_the_write(tmp_path, config, name):
    """k3s reads config.yaml.d/*.yaml|*.yml whatever their case (pkg/configfilearg/parser.go dotDFiles:
    util.HasSuffixI): a 95-x.YAML with a plain kubelet-arg replaces the plan's flags at RKE2's next start. It was
    not read here (a case-sensitive match): the write went on, the plan lost unseen."""
    before = config.read_text()
    folder = tmp_path / "config.yaml.d"
    os.makedirs(str(folder))
    (folder / name).write_text("kubelet-arg:\n  - max-pods=110\n")
    out = run(tmp_path, path=str(config), mode="dropin", dropin_path=str(folder / "50-rke2-numa.yaml"))
    assert out.returncode != 0 and str(folder / name) in out.stdout and "nothing written" in out.stdout, out.stdout[-3000:]
    assert config.read_text() == before and sorted(os.listdir(str(folder))) == [name]


def test_a_drop_in_outside_config_yaml_d_is_refused(tmp_path, config):
    out = run(tmp_path, path=str(config), mode="dropin", dropin_path=str(tmp_path / "elsewhere" / "50-rke2-numa.yaml"))
    assert out.returncode != 0 and "the only folder RKE2 reads drop-ins from: nothing written" in out.stdout
    assert not (tmp_path / "elsewhere").exists()


def test_the_healthz_url_is_returned_for_an_ipv6_node(tmp_path, config):
    config.write_text(config.read_text() + "node-ip: fd00:10::5\n")
    out = run(tmp_path, "--check", path=str(config))
    assert out.returncode == 0, out.stdout + out.stderr
    assert result_of(out)["healthz_url"] == "http://[::1]:10248/healthz"


def test_restore_undoes_a_run_and_refuses_a_result_that_names_another_file(tmp_path, config):
    """restore= puts back the copy the run took, with the previous mode; a result naming another file, or a
    backup outside backup_dir (a hostile or stale value), is refused and writes nothing."""
    before = config.read_text()
    out = run(tmp_path, "-vvv", path=str(config))
    assert out.returncode == 0 and config.read_text() != before
    backup = glob.glob(str(tmp_path / "backup" / "*~"))[0]
    undo = {"real_path": str(config), "backup_file": backup, "previous": {"mode": "0644", "owner": "root", "group": "root"},
            "created": False}
    other = tmp_path / "other.yaml"
    other.write_text("mine: true\n")
    for bad, message in ((dict(undo, real_path=str(other)), "is not %s" % config),
                         (dict(undo, backup_file=str(other)), "is not in %s" % (tmp_path / "backup")),
                         (dict(undo, previous=None), "without the previous mode")):
        refused = run(tmp_path, path=str(config), restore=bad)
        assert refused.returncode != 0 and message in refused.stdout and "nothing written" in refused.stdout, refused.stdout
        assert other.read_text() == "mine: true\n" and stat.S_IMODE(os.stat(config).st_mode) == 0o600
    out = run(tmp_path, "-vvv", path=str(config), restore=undo)
    assert out.returncode == 0 and "changed=1" in out.stdout, out.stdout
    assert config.read_text() == before and stat.S_IMODE(os.stat(config).st_mode) == 0o644
    assert TOKEN not in out.stdout + out.stderr


def test_restore_removes_only_a_file_the_run_created(tmp_path, config):
    dropin = tmp_path / "config.yaml.d" / "50-rke2-numa.yaml"
    out = run(tmp_path, path=str(config), mode="dropin", dropin_path=str(dropin))
    assert out.returncode == 0 and dropin.exists()
    undo = {"real_path": str(dropin), "created": True, "previous": None}
    out = run(tmp_path, path=str(config), mode="dropin", dropin_path=str(dropin), restore=undo)
    assert out.returncode == 0 and not dropin.exists() and config.exists()
    out = run(tmp_path, path=str(config), mode="dropin", dropin_path=str(dropin), restore=undo)
    assert out.returncode == 0 and "changed=0" in out.stdout


# ---- Rancher-managed nodes: auto mode moves the plan from config.yaml into the drop-in, as one transaction

RANCHER = "node-label:\n- rke.cattle.io/machine=7f3c2a1e\n"


@pytest.fixture
def rancher(tmp_path, config):
    """A node that merge mode configured (the plan in config.yaml), then found Rancher-managed (50-rancher.yaml), with an
    earlier drop-in of ours under the old default name and a drop-in of someone else's."""
    text, dummy = __import__("ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config",
                             fromlist=["x"]).merged_config(config.read_text(), "c", PLANNED)
    config.write_text(text.replace("server:", "# the join server, by hand\nserver:", 1))
    os.chmod(str(config), 0o600)
    folder = tmp_path / "config.yaml.d"
    folder.mkdir()
    (folder / "50-rancher.yaml").write_text(RANCHER)
    (folder / "50-rke2-numa.yaml").write_text(
        "# Managed by maitred.rke2_numa: kubelet args for NUMA-aligned GPU pods. Do not edit.\nnode-label+: [old=1]\n")
    (folder / "60-site.yaml").write_text("node-label+: [site=1]\n")
    return config, folder


def test_auto_on_a_rancher_node_moves_the_plan_to_the_drop_in_keeping_every_other_byte(tmp_path, rancher):
    config, folder = rancher
    before = config.read_text()
    dropin = folder / "90-rke2-numa.yaml"
    args = dict(path=str(config), dropin_path=str(dropin), rancher_root=str(tmp_path))
    out = run(tmp_path, "--check", "--diff", **args)
    assert out.returncode == 0 and "changed=1" in out.stdout, out.stdout + out.stderr
    assert not dropin.exists() and config.read_text() == before and (folder / "50-rke2-numa.yaml").exists()
    out = run(tmp_path, "--diff", "-vvv", **args)
    assert out.returncode == 0, out.stdout + out.stderr
    assert TOKEN not in out.stdout + out.stderr
    res = result_of(out)
    assert res["mode"] == "dropin" and res["managed_by"] == "rancher" and res["created"], res
    assert "50-rancher.yaml (Rancher's RKE2 settings)" in res["rancher_evidence"][0]
    assert yaml.safe_load(dropin.read_text()) == {"kubelet-arg+": PLANNED}
    # config.yaml: the managed flags gone, every other byte (comment, token, the user's max-pods) as it was
    assert config.read_text() == before.replace("  - \"cpu-manager-policy=static\"\n", "").replace("  - \"reserved-cpus=0,2\"\n", "")
    assert "max-pods=250" in config.read_text() and "# the join server, by hand" in config.read_text()
    # ours under the old name removed, Rancher's and the site's untouched
    assert sorted(os.listdir(str(folder))) == ["50-rancher.yaml", "60-site.yaml", "90-rke2-numa.yaml"]
    assert (folder / "50-rancher.yaml").read_text() == RANCHER
    changes = dict((os.path.basename(e["path"]), e["change"]) for e in res["also_changed"])
    assert changes == {"config.yaml": "unmerged", "50-rke2-numa.yaml": "removed"}, res["also_changed"]
    assert all(open(e["backup_file"]).read() for e in res["also_changed"])
    # idempotent; then the restore puts all three back as they were
    again = run(tmp_path, **args)
    assert again.returncode == 0 and "changed=0" in again.stdout, again.stdout
    undo = run(tmp_path, restore=res, **args)
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert config.read_text() == before and not dropin.exists()
    assert sorted(os.listdir(str(folder))) == ["50-rancher.yaml", "50-rke2-numa.yaml", "60-site.yaml"]


def test_an_explicit_merge_on_a_rancher_node_is_refused_writing_nothing(tmp_path, rancher):
    config, folder = rancher
    before = tree_of(tmp_path)
    out = run(tmp_path, path=str(config), mode="merge", rancher_root=str(tmp_path))
    assert out.returncode != 0 and "rke2_numa_config_mode=merge on a node Rancher manages" in out.stdout, out.stdout
    assert "nothing written" in out.stdout and tree_of(tmp_path) == before


def test_a_failed_write_in_the_move_puts_back_every_file_already_written(tmp_path, rancher):
    """config.yaml immutable (chattr +i): our drop-in is written first, then config.yaml's edit fails - the drop-in goes
    again, config.yaml and the old drop-in of ours stay as they were."""
    config, folder = rancher
    before = config.read_text()
    if subprocess.run(["chattr", "+i", str(config)], capture_output=True, check=False).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        out = run(tmp_path, path=str(config), dropin_path=str(folder / "90-rke2-numa.yaml"), rancher_root=str(tmp_path))
    finally:
        subprocess.run(["chattr", "-i", str(config)], check=False)
    assert out.returncode != 0 and "every file this run had changed is back as it was" in out.stdout, out.stdout
    assert config.read_text() == before
    assert sorted(os.listdir(str(folder))) == ["50-rancher.yaml", "50-rke2-numa.yaml", "60-site.yaml"]


def tree_of(root):
    out = {}
    for base, dummy, files in os.walk(str(root)):
        for name in files:
            path = os.path.join(base, name)
            if "/backup" not in path and not name.endswith(".yml") or name == "config.yaml":
                out[path] = (open(path, "rb").read(), os.stat(path).st_mode)
    return out


# ---- file mode (rke2_numa_kubelet_config=file): the managed settings as a KubeletConfiguration drop-in

FULL_PLAN = ["cpu-manager-policy=static", "reserved-cpus=0,2", "topology-manager-policy=single-numa-node",
             "kube-reserved=cpu=1,memory=1Gi", "eviction-hard=memory.available<500Mi", "reserved-memory=0:memory=1524Mi",
             "max-pods=200"]


def test_file_mode_writes_the_kubelet_drop_in_and_moves_the_flags_out_of_config_yaml_as_one_transaction(tmp_path, config):
    """A node merge mode configured moves to file mode: kubelet.conf.d/90-rke2-numa.conf holds the managed settings,
    config.yaml.d/90-rke2-numa.yaml hands RKE2 that folder (config-dir) and the unmanaged plan flag, config.yaml loses
    only the flags merge mode wrote; check mode writes nothing; a second run changes nothing; restore puts it all back.
    Then back to flags: nothing of file mode is left."""
    text, dummy = __import__("ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config",
                             fromlist=["x"]).merged_config(config.read_text(), "c", FULL_PLAN[:-1])
    config.write_text(text)
    os.chmod(str(config), 0o600)
    before = config.read_text()
    conf, dropin = tmp_path / "kubelet.conf.d" / "90-rke2-numa.conf", tmp_path / "config.yaml.d" / "90-rke2-numa.yaml"
    args = dict(path=str(config), kubelet_config="file", kubelet_args=FULL_PLAN, dropin_path=str(dropin), rancher_root=str(tmp_path))
    out = run(tmp_path, "--check", "--diff", **args)
    assert out.returncode == 0 and "changed=1" in out.stdout, out.stdout + out.stderr
    assert not conf.parent.exists() and not dropin.exists() and config.read_text() == before
    assert "cpuManagerPolicy: static" in out.stdout  # the diff shows the drop-in to be written, under its name
    assert "+++ after: %s" % conf in out.stdout, out.stdout

    out = run(tmp_path, "--diff", "-vvv", **args)
    assert out.returncode == 0, out.stdout + out.stderr
    assert TOKEN not in out.stdout + out.stderr
    res = result_of(out)
    assert res["kubelet_config"] == "file" and res["kubelet_config_path"] == str(conf) and res["content_changed"]
    written = yaml.safe_load(conf.read_text())
    assert written == {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                       "cpuManagerPolicy": "static", "reservedSystemCPUs": "0,2", "topologyManagerPolicy": "single-numa-node",
                       "kubeReserved": {"cpu": "1", "memory": "1Gi"}, "evictionHard": {"memory.available": "500Mi"},
                       "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1524Mi"}}]}
    assert stat.S_IMODE(os.stat(str(conf)).st_mode) == 0o600
    assert yaml.safe_load(dropin.read_text()) == {"kubelet-arg+": ["max-pods=200", "config-dir=%s" % conf.parent]}
    data = yaml.safe_load(config.read_text())
    assert data["kubelet-arg"] == ["max-pods=250"] and data["token"] == TOKEN  # the user's flag stays, the token too
    changes = dict((os.path.basename(e["path"]), (e["change"], e["created"])) for e in res["also_changed"])
    assert changes == {"config.yaml": ("unmerged", False), "90-rke2-numa.conf": ("kubelet_config", True)}, res["also_changed"]

    again = run(tmp_path, **args)
    assert again.returncode == 0 and "changed=0" in again.stdout, again.stdout

    undo = run(tmp_path, restore=res, **args)
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert config.read_text() == before and not conf.exists() and not dropin.exists()

    # file, then flags again (merge mode): our conf and the drop-in carrying config-dir go, config.yaml holds the plan
    assert run(tmp_path, **args).returncode == 0 and conf.exists()
    out = run(tmp_path, "-vvv", path=str(config), kubelet_args=FULL_PLAN, dropin_path=str(dropin), rancher_root=str(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert not conf.exists() and not dropin.exists()
    assert yaml.safe_load(config.read_text())["kubelet-arg"] == ["max-pods=250"] + FULL_PLAN
    changes = dict((os.path.basename(e["path"]), e["change"]) for e in result_of(out)["also_changed"])
    assert changes == {"90-rke2-numa.yaml": "removed", "90-rke2-numa.conf": "removed"}


@pytest.mark.parametrize("where, text, message", [
    ("config.yaml.d/50-rancher.yaml", "kubelet-arg:\n  - cpu-manager-policy=none\n",
     "Rancher sets cpu-manager-policy=none"),
    ("config.yaml.d/60-site.yaml", "kubelet-arg+:\n  - reserved-cpus=1\n",
     "reserved-cpus=1 is given as a kubelet-arg in"),
    ("config.yaml.d/60-site.yaml", "kubelet-arg+:\n  - config-dir=/etc/kubelet-site\n",
     "config-dir names another folder in"),
    ("kubelet.conf.d/95-site.conf", "cpuManagerPolicy: none\n",
     "cpuManagerPolicy would be none, not the plan's static"),
    ("kubelet.conf.d/sub/10-site.conf", "memoryManagerPolicy: Static\n",
     "memoryManagerPolicy would be Static, not the plan's unset"),
    ("kubelet.conf.d/95-broken.conf", "cpuManagerPolicy: [unclosed\n",
     "95-broken.conf cannot be loaded: the kubelet would stop on it"),
])
def test_file_mode_refuses_what_would_win_over_its_file_and_writes_nothing(tmp_path, config, where, text, message):
    """A managed setting still given as a kubelet-arg (flags win over every file), another config-dir, or another kubelet
    drop-in that would change or add a managed field: refused naming the file, nothing written."""
    (tmp_path / os.path.dirname(where)).mkdir(parents=True)
    (tmp_path / where).write_text(text)
    before = tree_of(tmp_path)
    out = run(tmp_path, path=str(config), kubelet_config="file", kubelet_args=FULL_PLAN, rancher_root=str(tmp_path),
              dropin_path=str(tmp_path / "config.yaml.d" / "90-rke2-numa.yaml"))
    assert out.returncode != 0 and message in out.stdout and "nothing written" in out.stdout, out.stdout
    assert os.path.basename(where) in out.stdout
    assert tree_of(tmp_path) == before and not (tmp_path / "kubelet.conf.d" / "90-rke2-numa.conf").exists()


def test_file_mode_with_an_explicit_merge_is_refused(tmp_path, config):
    before = tree_of(tmp_path)
    out = run(tmp_path, path=str(config), kubelet_config="file", mode="merge", rancher_root=str(tmp_path))
    assert out.returncode != 0 and "it takes mode dropin, not merge" in out.stdout, out.stdout
    assert tree_of(tmp_path) == before


def test_file_mode_on_a_fresh_node_leaves_config_yaml_byte_for_byte(tmp_path):
    config = tmp_path / "config.yaml"
    text = "# by hand\nserver: https://10.0.0.1:9345\ntoken: %s\nkubelet-arg:\n  - max-pods=250\n" % TOKEN
    config.write_text(text)
    os.chmod(str(config), 0o600)
    before = os.stat(str(config))
    out = run(tmp_path, path=str(config), kubelet_config="file", kubelet_args=FULL_PLAN, rancher_root=str(tmp_path),
              dropin_path=str(tmp_path / "config.yaml.d" / "90-rke2-numa.yaml"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert config.read_text() == text and os.stat(str(config)).st_mtime_ns == before.st_mtime_ns
    assert (tmp_path / "kubelet.conf.d" / "90-rke2-numa.conf").exists()
    assert [e["path"] for e in result_of(out)["also_changed"]] == [str(tmp_path / "kubelet.conf.d" / "90-rke2-numa.conf")]
