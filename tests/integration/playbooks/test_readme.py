# -*- coding: utf-8 -*-
"""The top README works as written: every role option is in its variable table; its install
commands and its plan command work from an installed tarball, from git and from a clone's
collection tree; the other playbook commands of the README and of the playbooks' headers name
playbooks that exist and parse; `make demo` installs no package it does not run."""

from __future__ import annotations

import glob
import os
import re
import shlex
import subprocess
import sys

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
README = os.path.join(REPO, "README.md")
BIN = os.path.dirname(sys.executable)
SAMPLE_HOST = "l40s-offline"  # one host of inventory/sample.yml keeps the runs short


def readme():
    with open(README) as f:
        return f.read()


def docs():
    """The README and the docs it sends its readers to, as one text."""
    texts = [readme()]
    for path in sorted(glob.glob(os.path.join(REPO, "docs", "*.md"))):
        with open(path) as f:
            texts.append(f.read())
    return "\n".join(texts)


def variable_table():
    """The backquoted names in the first column of the variables table (docs/VARIABLES.md, linked from the README)."""
    assert "(docs/VARIABLES.md)" in readme()
    with open(os.path.join(REPO, "docs", "VARIABLES.md")) as f:
        section = f.read()
    names = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`(rke2_numa_\w+)`", line.split("|")[1]))
    return names


def role_options():
    options = set()
    for path in sorted(glob.glob(os.path.join(REPO, "roles", "*", "meta", "argument_specs.yml"))):
        with open(path) as f:
            for entry in (yaml.safe_load(f).get("argument_specs") or {}).values():
                options.update(entry.get("options") or {})
    return options


def test_every_role_option_is_in_the_readme_table():
    missing = sorted(role_options() - variable_table())
    assert not missing, "docs/VARIABLES.md's table lacks %s" % ", ".join(missing)


def shell_commands(text):
    """Commands of the ```sh blocks, continuation lines joined, comments dropped."""
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for command in re.sub(r"\\\n\s*", " ", block).splitlines():
            command = command.split(" # ", 1)[0].strip()
            if command and not command.startswith("#"):
                commands.append(command)
    return commands


def header_commands():
    """The commands in the playbooks' header comments (lines "#   ansible-playbook ...")."""
    commands = []
    for path in sorted(glob.glob(os.path.join(REPO, "playbooks", "*.yml"))):
        with open(path) as f:
            for line in f:
                if line.startswith("---"):
                    continue
                if not line.startswith("#"):
                    break
                match = re.match(r"#\s+((?:\S+=\S+ )*ansible-playbook .*)$", line.rstrip())
                if match:
                    commands.append(match.group(1))
    return commands


def env_without_ansible(**extra):
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith("ANSIBLE_"))
    env.update(PATH=BIN + os.pathsep + env.get("PATH", ""), ANSIBLE_NOCOLOR="1", **extra)
    return env


def run(argv, cwd, env):
    result = subprocess.run(argv, cwd=str(cwd), env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, "%s\n%s%s" % (" ".join(argv), result.stdout, result.stderr)
    return result


def readme_command(prefix):
    found = [c for c in shell_commands(readme()) if c.startswith(prefix)]
    assert found, "no README command starts with %r" % prefix
    return found[0]


def plan_argv(command, workdir):
    """The README's plan command against the bundled sample inventory, one host."""
    argv = shlex.split(os.path.expandvars(command))
    argv[argv.index("-i") + 1] = os.path.join(REPO, "inventory", "sample.yml")
    return argv + ["--limit", SAMPLE_HOST]


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """inventory/sample.yml reads its trees from .build/samples (make samples), written here when missing."""
    root = os.path.join(REPO, ".build", "samples", SAMPLE_HOST)
    if not os.path.isdir(root):
        subprocess.run([sys.executable, os.path.join(REPO, "tests", "fixtures", "gen_sysfs.py"),
                        "--out", os.path.join(REPO, ".build", "samples"), "--machine", SAMPLE_HOST], check=True)
    return root


@pytest.fixture(scope="module")
def tarball_install(tmp_path_factory):
    """`ansible-galaxy collection build`, then the README's tarball install command with -p."""
    base = tmp_path_factory.mktemp("tarball")
    env = env_without_ansible()
    run(["ansible-galaxy", "collection", "build", "--output-path", str(base / "dist"), REPO], base, env)
    tarball, = glob.glob(str(base / "dist" / "maitred-rke2_numa-*.tar.gz"))
    command = readme_command("ansible-galaxy collection install maitred-rke2_numa-")
    argv = shlex.split(command)
    assert os.path.basename(tarball) == argv[-1], "the README names %s, the build writes %s" % (argv[-1], tarball)
    run(argv + ["-p", str(base / "collections")], base / "dist", env)
    return base / "collections"


def test_readme_plan_command_from_the_installed_tarball(tarball_install, samples, tmp_path):
    del samples
    env = env_without_ansible(ANSIBLE_COLLECTIONS_PATH=str(tarball_install))
    command = readme_command("ansible-playbook -i inventory.yml maitred.rke2_numa.plan")
    run(plan_argv(command, tmp_path), tmp_path, env)
    plan_dir = tmp_path / re.search(r"rke2_numa_plan_dir=(\S+)", command).group(1)
    assert sorted(os.listdir(plan_dir)) == ["dra.yaml", SAMPLE_HOST + ".config.yaml", SAMPLE_HOST + ".json", SAMPLE_HOST + ".kubelet.conf", "rancher.yaml"]


def parse_playbook_argv(argv):
    """ansible-playbook's own option parser on argv (in process): SystemExit on an unknown or bad option."""
    from ansible.cli.playbook import PlaybookCLI

    cli = PlaybookCLI(["ansible-playbook"] + argv)
    cli.init_parser()
    options = cli.parser.parse_args(argv)
    return options.args


def test_readme_and_header_playbook_commands_name_playbooks_that_parse(tarball_install, tmp_path):
    """Every command of the README and docs/ (and the playbooks' headers): its options parse as ansible-playbook's (in process), and the playbooks they name
    pass --syntax-check: one run for the installed collection's, one for the clone's files."""
    env = env_without_ansible(ANSIBLE_COLLECTIONS_PATH=str(tarball_install))
    commands = [c for c in shell_commands(docs()) + header_commands() if "ansible-playbook" in c]
    assert len(commands) >= 6
    installed, files = [], []
    for command in commands:
        argv = shlex.split(os.path.expandvars(command.split("ansible-playbook", 1)[1]))
        try:
            playbooks = parse_playbook_argv(argv)
        except SystemExit:
            pytest.fail("ansible-playbook refuses the options of: %s" % command)
        assert playbooks, command
        for playbook in playbooks:
            if playbook.startswith("playbooks/"):
                # the clone way (plan.yml's header says how): the playbook file, the collection from .build
                assert "ANSIBLE_COLLECTIONS_PATH=$PWD/.build" in command, command
                files.append(playbook)
            else:
                installed.append(playbook)
    inventory = ["-i", os.path.join(REPO, "inventory", "sample.yml")]
    run(["ansible-playbook", "--syntax-check"] + inventory + sorted(set(files)), REPO,
        dict(env, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build")))
    run(["ansible-playbook", "--syntax-check"] + inventory + sorted(set(installed)), tmp_path, env)


def test_install_from_git_and_requirements(tmp_path, samples):
    """From a clone: `ansible-galaxy collection install git+file://$PWD` and the README's requirements.yml
    (its git URL pointed at this clone) install what is committed, and the plan runs from there."""
    del samples
    env = env_without_ansible()
    run(["ansible-galaxy", "collection", "install", "git+file://%s" % REPO, "-p", str(tmp_path / "git")], REPO, env)
    requirements = yaml.safe_load(re.search(r"```yaml\n(collections:.*?)```", readme(), re.S).group(1))
    requirements["collections"][0]["name"] = "file://%s" % REPO
    requirements["collections"][0]["version"] = "HEAD"
    (tmp_path / "requirements.yml").write_text(yaml.safe_dump(requirements))
    run(["ansible-galaxy", "collection", "install", "-r", "requirements.yml", "-p", str(tmp_path / "req")], tmp_path, env)
    for where in ("git", "req"):
        installed = tmp_path / where / "ansible_collections" / "maitred" / "rke2_numa"
        assert (installed / "playbooks" / "plan.yml").is_file() and (installed / "MANIFEST.json").is_file(), where
    env["ANSIBLE_COLLECTIONS_PATH"] = str(tmp_path / "git")
    command = readme_command("ansible-playbook -i inventory.yml maitred.rke2_numa.plan")
    run(plan_argv(command, tmp_path), tmp_path, env)


def test_clone_collection_tree_runs_the_sample_plan(samples, tmp_path):
    """The clone way of the README: make collection-tree, ANSIBLE_COLLECTIONS_PATH=$PWD/.build, its plan command."""
    del samples
    assert "make collection-tree" in shell_commands(readme())
    assert "export ANSIBLE_COLLECTIONS_PATH=$PWD/.build" in shell_commands(readme())
    run(["make", "-s", "collection-tree"], REPO, env_without_ansible())
    env = env_without_ansible(ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".build"))
    command = readme_command("ansible-playbook -i inventory/sample.yml maitred.rke2_numa.plan")
    argv = shlex.split(command) + ["--limit", SAMPLE_HOST, "-e", "rke2_numa_plan_dir=%s" % (tmp_path / "plans")]
    run(argv, REPO, env)
    assert sorted(os.listdir(tmp_path / "plans")) == [
        "dra.yaml", SAMPLE_HOST + ".config.yaml", SAMPLE_HOST + ".json", SAMPLE_HOST + ".kubelet.conf", "rancher.yaml"]


def test_make_demo_installs_only_what_it_runs():
    result = run(["make", "-n", "demo"], REPO, env_without_ansible())
    for package in ("podman", "runc", "debootstrap", "hwloc", "shellcheck", "kubernetes-client"):
        assert package not in result.stdout, package
    # the demo's output settings are the README's advice: what a user sets to see the same
    settings = sorted(set(re.findall(r"\b(ANSIBLE_[A-Z_]+=\S+)", result.stdout)) - {"ANSIBLE_COLLECTIONS_PATH=%s" % os.path.join(REPO, ".build")})
    assert "ANSIBLE_CALLBACK_RESULT_FORMAT=yaml" in settings
    missing = [setting for setting in settings if setting not in readme()]
    assert not missing, "README.md does not say what make demo sets: %s" % missing


def test_shipped_text_speaks_to_users(tarball_install):
    """What the tarball ships names no design-document rule number and no file it does not ship."""
    root = tarball_install / "ansible_collections" / "maitred" / "rke2_numa"
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".yml", ".yaml", ".md", ".j2", ".rst", ".txt"):
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if re.search(r"\b[Rr]ules? \d+\b|DESIGN\.md|STYLE\.md|\.\./shared", line):
                    found.append("%s:%d: %s" % (path.relative_to(root), number, line.strip()))
    assert not found, "\n".join(found)
