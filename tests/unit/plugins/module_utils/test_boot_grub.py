# -*- coding: utf-8 -*-
"""boot_grub: the grub_d drop-in, /etc/default/grub and /etc/kernel/cmdline rewritten.

The Debian drop-in is checked against real grub files the way grub-mkconfig
uses them: /etc/default/grub and then every /etc/default/grub.d/*.cfg sourced
by sh (and by dash and bash when they are installed)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import DROPIN
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_grub import (
    dropin_args,
    plan_grub_d,
    render_grub_dropin,
    rewrite_default_grub,
    rewrite_kernel_cmdline,
    static_grub_cmdline,
)
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_grubby import plan_grubby
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import (
    CmdlineError,
    added_removed,
    split_cmdline,
)
from ansible_collections.maitred.rke2_numa.tests.fixtures.kernel_args_cases import (
    DEBIAN12_GRUB,
    FULL,
    HP,
    M,
    SHELL_CHARS,
    SHELLS,
    SLE_MICRO_GRUB,
    WANTED,
    w,
)


def source_grub(root, shell):
    """What grub-mkconfig sees: /etc/default/grub, then every grub.d/*.cfg that exists, sourced in order."""
    script = ('. ./etc/default/grub; for f in ./etc/default/grub.d/*.cfg; do if [ -e "$f" ]; then . "$f"; fi; done; '
              'printf "%s\\n" "$GRUB_CMDLINE_LINUX" "$GRUB_CMDLINE_LINUX_DEFAULT"')
    out = subprocess.run([shell, "-c", script], cwd=str(root), capture_output=True, text=True, check=True).stdout
    linux, default = out.split("\n")[:2]
    return linux, default


def write_root(tmp_path, grub=DEBIAN12_GRUB, dropins=None):
    root = tmp_path / "root"
    (root / "etc/default/grub.d").mkdir(parents=True)
    (root / "etc/default/grub").write_text(grub)
    for name, text in (dropins or {}).items():
        (root / "etc/default/grub.d" / name).write_text(text)
    return root


# ----------------------------------------------------------------- validation


@pytest.mark.parametrize("char", SHELL_CHARS, ids=repr)
def test_no_writer_renders_an_unvalidated_shell_character(char):
    bad = [("isolcpus", "1-3%sreboot" % char)]
    for render in (lambda: render_grub_dropin(bad, M), lambda: rewrite_default_grub(SLE_MICRO_GRUB, bad, M),
                   lambda: rewrite_kernel_cmdline("ro quiet\n", bad, M),
                   lambda: plan_grubby([{"kernel": "/boot/vmlinuz", "args": ["ro"]}], None, bad, M)):
        with pytest.raises(CmdlineError, match="is not allowed"):
            render()


# ----------------------------------------------------------------- grub_d against real grub files


def install_dropin(root, wanted, managed=M):
    (root / DROPIN).write_text(render_grub_dropin(wanted, managed))


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_replaces_the_hand_set_isolcpus_and_leaves_the_rest(tmp_path, shell):
    root = write_root(tmp_path)
    install_dropin(root, w(*WANTED))
    linux, default = source_grub(root, shell)
    cmdline = split_cmdline(linux + " " + default)
    for arg in WANTED:
        name = arg.partition("=")[0]
        assert [t for t in cmdline if t.partition("=")[0] == name] == [arg], name
    assert linux == " ".join(WANTED)
    assert default == "quiet"


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_against_other_dropins_user_args_and_globs(tmp_path, shell):
    cloud = 'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT console=tty1 console=ttyS0"\n'
    user = 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX foo=* nohz-full=5 hugepages=4 mitigations=off"\n'
    root = write_root(tmp_path, dropins={"50-cloudimg-settings.cfg": cloud, "60-user.cfg": user})
    (root / "x-would-match-a-glob").write_text("")
    install_dropin(root, w("isolcpus=2-7", "nohz_full=2-7"))
    linux, default = source_grub(root, shell)
    assert linux == "foo=* hugepages=4 mitigations=off isolcpus=2-7 nohz_full=2-7"  # hugepages=4: the host's pool
    assert default == "quiet console=tty1 console=ttyS0"


@pytest.mark.parametrize("shell", SHELLS)
def test_absent_dropin_removes_every_managed_arg_it_owns(tmp_path, shell):
    grub = DEBIAN12_GRUB.replace('GRUB_CMDLINE_LINUX=""', 'GRUB_CMDLINE_LINUX="nohz_full=8 hugepagesz=2M hugepages=8 rootdelay=5"')
    root = write_root(tmp_path, grub=grub)
    install_dropin(root, [])
    assert source_grub(root, shell) == ("hugepagesz=2M hugepages=8 rootdelay=5", "quiet")  # a pool it does not plan stays


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_leaves_the_shell_as_it_found_it(tmp_path, shell):
    root = write_root(tmp_path)
    install_dropin(root, w("isolcpus=2-7"))
    script = ('. ./etc/default/grub; set -f; . ./etc/default/grub.d/99-rke2-numa.cfg; echo "[$-]"; set +f; '
              '. ./etc/default/grub.d/99-rke2-numa.cfg; echo "[$-]"; set | grep -c "^__rke2_numa" || true')
    out = subprocess.run([shell, "-c", script], cwd=str(root), capture_output=True, text=True, check=True).stdout.split()
    assert "f" in out[0] and "f" not in out[1]
    assert out[2] == "0"


def test_dropin_is_posix_sh_without_bashisms():
    text = render_grub_dropin(w(*WANTED), M)
    assert text.startswith("# Managed by maitred.rke2_numa")
    for bashism in ("[[", "local ", "function ", "$'", "<<<", "${!"):
        assert bashism not in text
    if shutil.which("dash"):
        subprocess.run(["dash", "-n"], input=text, text=True, check=True)
    assert dropin_args(text) == WANTED


def test_plan_grub_d_reports_what_changes_and_is_idempotent():
    plan = plan_grub_d(DEBIAN12_GRUB, [], None, w("isolcpus=2-7"), M)
    assert plan["commands"] == [["update-grub"]]
    assert plan["files"][0]["path"] == "etc/default/grub.d/99-rke2-numa.cfg" and plan["files"][0]["mode"] == 0o644
    assert plan["locations"] == [["isolcpus=1-3"]]
    again = plan_grub_d(DEBIAN12_GRUB, [], plan["files"][0]["after"], w("isolcpus=2-7"), M)
    assert again["files"] == [] and again["commands"] == []
    assert again["locations"] == [["isolcpus=2-7"]]
    other = plan_grub_d(DEBIAN12_GRUB, [], plan["files"][0]["after"], w("isolcpus=2-5"), M)
    assert other["commands"] == [["update-grub"]] and added_removed(other["locations"], w("isolcpus=2-5")) == (
        ["isolcpus=2-5"], ["isolcpus=2-7"])


def test_static_grub_cmdline_follows_simple_assignments():
    env = static_grub_cmdline([DEBIAN12_GRUB, 'GRUB_CMDLINE_LINUX="${GRUB_CMDLINE_LINUX} hugepages=2" # note\n',
                               "GRUB_CMDLINE_LINUX_DEFAULT=\"unbalanced\n"], M)
    assert env == {"GRUB_CMDLINE_LINUX": " hugepages=2", "GRUB_CMDLINE_LINUX_DEFAULT": "isolcpus=1-3 quiet"}


# ----------------------------------------------------------------- /etc/default/grub (SLE Micro) and /etc/kernel/cmdline


def test_rewrite_default_grub_puts_the_args_in_linux_default_only():
    new = rewrite_default_grub(SLE_MICRO_GRUB, w("isolcpus=managed_irq,2-7", "nohz_full=2-7"), M)
    changed = [(a, b) for a, b in zip(SLE_MICRO_GRUB.splitlines(), new.splitlines()) if a != b]
    assert changed == [(
        'GRUB_CMDLINE_LINUX_DEFAULT="splash=silent quiet security=selinux selinux=1 isolcpus=2-3 mitigations=auto"',
        'GRUB_CMDLINE_LINUX_DEFAULT="splash=silent quiet security=selinux selinux=1 mitigations=auto '
        'isolcpus=managed_irq,2-7 nohz_full=2-7"')]
    assert rewrite_default_grub(new, w("isolcpus=managed_irq,2-7", "nohz_full=2-7"), M) == new
    assert rewrite_default_grub(new, [], M) == SLE_MICRO_GRUB.replace(" isolcpus=2-3", "")


@pytest.mark.parametrize("shell", SHELLS)
def test_rewritten_default_grub_still_sources(tmp_path, shell):
    text = SLE_MICRO_GRUB.replace('GRUB_CMDLINE_LINUX=""', "export GRUB_CMDLINE_LINUX='hugepagesz=1G hugepages=4 rd.shell=0' # note")
    root = write_root(tmp_path, grub=rewrite_default_grub(text, w("hugepagesz=1G", "hugepages=0:8"), M))
    linux, default = source_grub(root, shell)
    assert linux == "rd.shell=0"
    assert default == "splash=silent quiet security=selinux selinux=1 mitigations=auto hugepagesz=1G hugepages=0:8"


def test_rewrite_default_grub_without_a_default_line_appends_one():
    assert rewrite_default_grub('GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX="isolcpus=1"', w("isolcpus=2"), M) == (
        'GRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX=""\nGRUB_CMDLINE_LINUX_DEFAULT="isolcpus=2"\n')
    assert rewrite_default_grub("GRUB_TIMEOUT=5\n", [], M) == "GRUB_TIMEOUT=5\n"


@pytest.mark.parametrize("line", [
    'GRUB_CMDLINE_LINUX_DEFAULT="quiet\nsplash"',
    "GRUB_CMDLINE_LINUX_DEFAULT=$(cat /etc/cmdline)",
    'GRUB_CMDLINE_LINUX_DEFAULT="$(cat /etc/cmdline)"',
    "GRUB_CMDLINE_LINUX_DEFAULT=quiet splash",
])
def test_rewrite_default_grub_refuses_what_it_cannot_rewrite_safely(line):
    with pytest.raises(CmdlineError, match="etc/default/grub line 1: cannot rewrite GRUB_CMDLINE_LINUX_DEFAULT"):
        rewrite_default_grub(line + "\n", w("isolcpus=2"), M)


def test_rewrite_kernel_cmdline():
    text = "root=UUID=0a1b ro quiet isolcpus=1-3 hugepages=4\n"
    new = rewrite_kernel_cmdline(text, w("isolcpus=2-7"), M)
    assert new == "root=UUID=0a1b ro quiet hugepages=4 isolcpus=2-7\n"  # hugepages=4: the host's pool
    assert rewrite_kernel_cmdline(new, w("isolcpus=2-7"), M) is new
    assert rewrite_kernel_cmdline("ro  quiet", [], M) == "ro  quiet"


# ----------------------------------------------------------------- hugepage pools the host already has


def dropin_line(tmp_path, linux, default="quiet", wanted=tuple(WANTED), shell="sh"):
    """The brief's check: sh -c '. /etc/default/grub; . drop-in; echo "$GRUB_CMDLINE_LINUX"' (and _DEFAULT)."""
    grub = DEBIAN12_GRUB.replace('GRUB_CMDLINE_LINUX=""', 'GRUB_CMDLINE_LINUX="%s"' % linux)
    root = write_root(tmp_path, grub=grub.replace('"isolcpus=1-3 quiet"', '"%s"' % default))
    install_dropin(root, w(*wanted))
    script = '. ./etc/default/grub; . ./etc/default/grub.d/99-rke2-numa.cfg; echo "$GRUB_CMDLINE_LINUX"; echo "$GRUB_CMDLINE_LINUX_DEFAULT"'
    out = subprocess.run([shell, "-c", script], cwd=str(root), capture_output=True, text=True, check=True).stdout
    return out.split("\n")[:2]


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_keeps_the_hosts_2m_pool_and_adds_the_1g_pool_once(tmp_path, shell):
    linux, default = dropin_line(tmp_path, "hugepagesz=2M hugepages=1024 isolcpus=1-3", shell=shell)
    assert linux == "hugepagesz=2M hugepages=1024 " + " ".join(WANTED)
    assert default == "quiet"


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_without_hugepages_leaves_the_hosts_pool_and_default_alone(tmp_path, shell):
    linux, default = dropin_line(tmp_path, "default_hugepagesz=2M hugepagesz=2M hugepages=1024", default="hugepagesz=1G hugepages=2 quiet",
                                 wanted=FULL, shell=shell)
    assert linux == "default_hugepagesz=2M hugepagesz=2M hugepages=1024 " + " ".join(FULL)
    assert default == "hugepagesz=1G hugepages=2 quiet"


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_replaces_the_hosts_1g_pool_and_keeps_the_2m_pool_in_either_variable(tmp_path, shell):
    linux, default = dropin_line(tmp_path, "hugepagesz=1G hugepages=4 mitigations=off", default="quiet hugepagesz=2M hugepages=512", shell=shell)
    assert linux == "mitigations=off " + " ".join(WANTED)
    assert default == "quiet hugepagesz=2M hugepages=512"


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_keeps_the_pool_a_replaced_default_hugepagesz_sized(tmp_path, shell):
    # default_hugepagesz=2M hugepages=512: 512 pages of 2M. The plan's default_hugepagesz=1G replaces the
    # default, so the count gets its size written out: hugepagesz=2M hugepages=512.
    linux, default = dropin_line(tmp_path, "default_hugepagesz=2M hugepages=512", shell=shell)
    assert linux == "hugepagesz=2M hugepages=512 " + " ".join(WANTED)


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_keeps_a_pool_split_across_the_two_variables_paired(tmp_path, shell):
    linux, default = dropin_line(tmp_path, "hugepagesz=2M", default="hugepages=512 quiet", shell=shell)
    assert linux == "hugepagesz=2M " + " ".join(WANTED)
    assert default == "hugepagesz=2M hugepages=512 quiet"  # not counted as 1G pages after ours


@pytest.mark.parametrize("before, wanted, after", [
    ("ro hugepagesz=2M hugepages=1024 quiet", WANTED, "ro hugepagesz=2M hugepages=1024 quiet " + " ".join(WANTED)),
    ("ro default_hugepagesz=2M hugepagesz=2M hugepages=1024", FULL, "ro default_hugepagesz=2M hugepagesz=2M hugepages=1024 " + " ".join(FULL)),
    ("ro hugepagesz=1G hugepages=4 hugepagesz=2M hugepages=8", WANTED, "ro hugepagesz=2M hugepages=8 " + " ".join(WANTED)),
    ("ro default_hugepagesz=2M quiet hugepages=8", WANTED, "ro quiet hugepagesz=2M hugepages=8 " + " ".join(WANTED)),
])
def test_rewrite_kernel_cmdline_keeps_the_hosts_other_pools(before, wanted, after):
    assert rewrite_kernel_cmdline(before + "\n", w(*wanted), M) == after + "\n"


def test_rewrite_default_grub_keeps_the_hosts_other_pools():
    text = SLE_MICRO_GRUB.replace("isolcpus=2-3", "hugepagesz=2M hugepages=1024 isolcpus=2-3")
    new = rewrite_default_grub(text, w(*WANTED), M)
    assert ('GRUB_CMDLINE_LINUX_DEFAULT="splash=silent quiet security=selinux selinux=1 hugepagesz=2M hugepages=1024 '
            'mitigations=auto %s"' % " ".join(WANTED)) in new.splitlines()


def test_an_unsized_count_is_refused_when_the_plan_sets_the_default_size():
    # hugepages=1024 before any hugepagesz= counts pages of the default size (2M on x86-64): with the plan's
    # default_hugepagesz=1G they would become 1024 x 1G.
    for rewrite in (lambda: rewrite_kernel_cmdline("ro hugepages=1024\n", w(*WANTED), M),
                    lambda: plan_grubby([{"kernel": "/boot/vmlinuz", "args": ["ro", "hugepages=1024"]}], None, w(*WANTED), M)):
        with pytest.raises(CmdlineError, match=r"hugepages=1024 comes before any hugepagesz="):
            rewrite()
    assert rewrite_kernel_cmdline("ro hugepages=1024\n", w(*FULL), M) == "ro hugepages=1024 %s\n" % " ".join(FULL)


ONE_G = ["isolcpus=2-7", "hugepagesz=1G", "hugepages=0:2"]  # a 1G pool without a default size

# (GRUB_CMDLINE_LINUX, GRUB_CMDLINE_LINUX_DEFAULT, wanted) -> (the drop-in's GRUB_CMDLINE_LINUX, _DEFAULT)
POOL_CASES = [
    ("hugepagesz=2M hugepages=1024 isolcpus=1-3", "quiet", WANTED,
     ("hugepagesz=2M hugepages=1024 " + " ".join(WANTED), "quiet")),
    ("default_hugepagesz=2M hugepages=512", "quiet", WANTED, ("hugepagesz=2M hugepages=512 " + " ".join(WANTED), "quiet")),
    ("hugepages=256 default_hugepagesz=2M", "quiet", WANTED, ("hugepagesz=2M hugepages=256 " + " ".join(WANTED), "quiet")),
    ("hugepagesz=2M", "hugepages=512 quiet", WANTED, ("hugepagesz=2M " + " ".join(WANTED), "hugepagesz=2M hugepages=512 quiet")),
    ("hugepages=256", "quiet", FULL, ("hugepages=256 " + " ".join(FULL), "quiet")),
    ("hugepages=256", "quiet", WANTED, (" ".join(WANTED), "quiet")),  # refused by plan_grub_d; the sh drops it
    ("rd.shell=0", "quiet hugepages=256", ONE_G, ("rd.shell=0 " + " ".join(ONE_G), "quiet")),  # idem
    ("default_hugepagesz=1G hugepagesz=1G hugepages=4 hugepagesz=2M hugepages=8", "", WANTED,
     ("hugepagesz=2M hugepages=8 " + " ".join(WANTED), "")),
    ("hugepagesz=1024M hugepages=4 hugepagesz=2048k hugepages=8", "default-hugepagesz=2M quiet", WANTED,
     ("hugepagesz=2048k hugepages=8 " + " ".join(WANTED), "quiet")),
    ("hugepagesz=1GB hugepages=2 hugepagesz=01g hugepages=3", "", WANTED, (" ".join(WANTED), "")),
    ("hugepagesz=foo hugepages=3 hugepagesz= hugepages", "", WANTED,
     ("hugepagesz=foo hugepages=3 hugepagesz= hugepages " + " ".join(WANTED), "")),
    ("default_hugepagesz=2M", "hugepages=64 quiet", FULL, ("default_hugepagesz=2M " + " ".join(FULL), "hugepages=64 quiet")),
    ("hugepagesz=2M hugepages=64", "default_hugepagesz=2M hugepagesz=1G hugepages=9", ONE_G,
     ("hugepagesz=2M hugepages=64 " + " ".join(ONE_G), "default_hugepagesz=2M")),
    ("default_hugepagesz=1G hugepages=4", "hugepages=5", ONE_G, ("default_hugepagesz=1G " + " ".join(ONE_G), "")),  # counts of our size
    ("nohz-full=3 hugepagesz=2M hugepages=1 hugepages=2", "irqaffinity=0", [],
     ("hugepagesz=2M hugepages=1 hugepages=2", "")),
]


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("linux, default, wanted, expected", POOL_CASES)
def test_dropin_as_real_shell_under_set_e_and_its_static_read_agree(tmp_path, shell, linux, default, wanted, expected):
    grub = DEBIAN12_GRUB.replace('GRUB_CMDLINE_LINUX=""', 'GRUB_CMDLINE_LINUX="%s"' % linux)
    grub = grub.replace('"isolcpus=1-3 quiet"', '"%s"' % default)
    root = write_root(tmp_path, grub=grub)
    install_dropin(root, w(*wanted), M)
    script = ('set -e; . ./etc/default/grub; . ./etc/default/grub.d/99-rke2-numa.cfg; '
              'printf "%s\\n" "$GRUB_CMDLINE_LINUX" "$GRUB_CMDLINE_LINUX_DEFAULT"')
    out = subprocess.run([shell, "-c", script], cwd=str(root), capture_output=True, text=True, check=True).stdout
    assert tuple(out.split("\n")[:2]) == expected
    env = static_grub_cmdline([grub, (root / DROPIN).read_text()], M)
    assert (env["GRUB_CMDLINE_LINUX"], env["GRUB_CMDLINE_LINUX_DEFAULT"]) == expected


@pytest.mark.parametrize("linux, default, refused", [
    ("hugepages=256", "quiet", [WANTED]),  # the plan's default_hugepagesz=1G would make them 1G pages
    ("rd.shell=0", "quiet hugepages=256", [WANTED, ONE_G]),  # after the planned pool in GRUB_CMDLINE_LINUX: 1G pages
])
def test_plan_grub_d_refuses_a_count_of_an_unnamed_default_size_the_plan_would_change(linux, default, refused):
    grub = DEBIAN12_GRUB.replace('GRUB_CMDLINE_LINUX=""', 'GRUB_CMDLINE_LINUX="%s"' % linux).replace('"isolcpus=1-3 quiet"', '"%s"' % default)
    for wanted in (WANTED, ONE_G, FULL):
        if wanted in refused:
            with pytest.raises(CmdlineError, match=r"^kernel arg hugepages=256 comes before any hugepagesz=.*hugepagesz=<size> hugepages=256"):
                plan_grub_d(grub, [], None, w(*wanted), M)
        else:
            assert plan_grub_d(grub, [], None, w(*wanted), M)["commands"] == [["update-grub"]]


def test_the_drop_in_keeps_the_hugepage_history_and_reports_a_removed_pool():
    first = plan_grub_d(DEBIAN12_GRUB, [], None, w(*WANTED), M)
    text = first["files"][0]["after"]
    assert "\n# hugepage history: hugepagesz=1G default_hugepagesz=1G\n" in text
    assert first["history"] == [("hugepagesz", "1G"), ("default_hugepagesz", "1G")]
    second = plan_grub_d(DEBIAN12_GRUB, [], text, w(*FULL), M)
    assert added_removed(second["locations"], w(*FULL)) == ([], HP)
    assert "\n# hugepage history: hugepagesz=1G default_hugepagesz=1G\n" in second["files"][0]["after"]
    assert plan_grub_d(DEBIAN12_GRUB, [], second["files"][0]["after"], w(*FULL), M)["files"] == []


@pytest.mark.parametrize("shell", SHELLS)
def test_dropin_reads_quotes_and_escapes_as_walk_cmdline_does(tmp_path, shell):
    # A quoted or escaped managed arg is isolcpus too, a quoted value is one argument (its spaces kept),
    # and a quoted size still sizes the counts after it.
    grub = ("GRUB_CMDLINE_LINUX='\\isolcpus=1 \"isolcpus=2\" isolcpus=\"3 4\" dyndbg=\"file a.c  +p\"'\n"
            "GRUB_CMDLINE_LINUX_DEFAULT='\"hugepagesz=2M\" hugepages=8 quiet'\n")
    root = write_root(tmp_path, grub=grub)
    install_dropin(root, w(*FULL))
    linux, default = source_grub(root, shell)
    assert linux == 'dyndbg="file a.c  +p" ' + " ".join(FULL)
    assert default == '"hugepagesz=2M" hugepages=8 quiet'
    env = static_grub_cmdline([grub, (root / DROPIN).read_text()], M)
    assert (env["GRUB_CMDLINE_LINUX"], env["GRUB_CMDLINE_LINUX_DEFAULT"]) == (linux, default)
