#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: boot_params
short_description: Set the kernel command line arguments the collection manages, per distribution
version_added: 0.1.0
description:
  - Makes the boot configuration hold exactly the wanted values of the kernel arguments the
    collection manages (O(managed)), by name - replacing earlier values, removing managed
    arguments that are not wanted, never duplicating one - and leaves every other argument alone.
  - Hugepage arguments are owned per pool, not by name, because the kernel takes several sizes side by side
    (C(hugepagesz=2M hugepages=512 hugepagesz=1G hugepages=0:16,1:16); a C(hugepages=) count belongs to the
    C(hugepagesz=) or C(default_hugepagesz=) it follows, or, before any, to the default size). The module owns the
    pool of each size in O(args) (its C(hugepagesz=) and the counts after it, whatever their spelling - C(1G),
    C(1024M)), the pools it wrote before and no longer plans (which it removes), and C(default_hugepagesz=) only
    when O(args) sets one. The host's pools of other sizes (a 2M pool for DPDK or SR-IOV) and its
    C(default_hugepagesz=) stay, each count right after its own C(hugepagesz=). Where replacing the host's
    C(default_hugepagesz=2M) would leave its counts without a size, they get it written out
    (C(hugepagesz=2M hugepages=512)). A count before any size on a host line that names no default size
    (C(hugepages=1024)) cannot keep its size under a planned C(default_hugepagesz=) (it would count 1G pages), so
    the task fails naming it, before anything is written - give that pool its size.
  - How the module knows a size it wrote before - with O(method=grub_d) the drop-in holds the collection's args
    and nothing is written into the host's files, so a pool no longer planned goes with the old drop-in; the
    methods that edit the boot configuration in place (grubby, transactional-update) keep a record,
    C(/etc/rke2-numa/boot_params.state) - the hugepage args written last, which the next run replaces or removes,
    and every hugepage size written on the host, for RV(reboot_required). A pool counts as the collection's only
    when it has a planned size or the record (or drop-in) names it; without a record (a pool set by hand, or the
    record deleted), a pool of a size no longer planned is the host's and stays.
  - Debian and Ubuntu (O(method=grub_d)) - writes C(/etc/default/grub.d/99-rke2-numa.cfg), a POSIX
    shell fragment that C(grub-mkconfig) sources after C(/etc/default/grub). It removes the managed
    arguments the collection owns from C(GRUB_CMDLINE_LINUX) and C(GRUB_CMDLINE_LINUX_DEFAULT) (so a hand-set
    C(isolcpus=) there is not duplicated; the hugepage args only of the planned pools, read as one command line
    in that order) and appends the wanted ones to C(GRUB_CMDLINE_LINUX); then runs C(update-grub).
  - RHEL family (O(method=grubby)) - reads every kernel entry with C(grubby --info=ALL) and runs
    C(grubby --update-kernel=ALL --args=... --remove-args=...); rewrites C(/etc/kernel/cmdline) too when it
    exists (new kernels take their arguments from it). C(grubby --args) drops every occurrence of each name it
    gets, so when the hugepage args change it gets the host's pools back in C(--args), in order, before the
    planned one; entries whose host pools differ get one command each (C(--update-kernel=<index>)).
  - SLE Micro and other transactional SUSE systems (O(method=transactional_update)) - with GRUB2, rewrites
    C(GRUB_CMDLINE_LINUX_DEFAULT) in C(/etc/default/grub) and runs C(transactional-update --continue grub.cfg),
    which writes a new C(grub.cfg) into a new snapshot (continuing a pending one); with a BLS boot loader
    (C(/etc/kernel/cmdline) exists) rewrites that file and runs C(sdbootutil update-all-entries).
    A staged change always needs a reboot.
  - Returns whether the running kernel (C(/proc/cmdline)) differs from the wanted arguments
    (RV(reboot_required)); never reboots.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.author
  - maitred.rke2_numa.boot_method.boot_params
options:
  args:
    description:
      - The wanted kernel arguments, each V(name=value) or a bare flag V(name), as
        M(maitred.rke2_numa.numa_plan) returns them in C(plan.kernel_args).
      - Only ASCII letters, digits and the characters C(,-:/._=) - what the managed arguments use, cpulists such as
        V(managed_irq,domain,1-3,5,8-15:2/4), sizes such as V(1G) and per-node counts such as V(0:16,1:16).
        Any other character (whitespace, quotes, C(;), C(|), C($), globs and the like) is refused, naming the
        argument, before anything is read or written, with every method - C(grub-mkconfig) sources the
        files as shell, as root.
      - Each name once; every name must be in O(managed) (an argument the collection does not own is refused).
      - V(hugepagesz) and V(default_hugepagesz) take a size (V(2M), V(1G)); a V(hugepages) count must follow one of
        them (it belongs to the size before it, and the host's own pools stay on the line).
      - Required when O(state=present); an empty list removes every managed argument the collection owns, like
        O(state=absent).
    type: list
    elements: str
  managed:
    description:
      - Names of the kernel arguments the collection owns. These are replaced or removed by name - the hugepage
        ones per pool, see the description - and all other arguments are never touched. C(-) and C(_) in names are
        the same (as for the kernel).
      - V(hugepagesz) and V(hugepages) go together (a count belongs to its size); V(default_hugepagesz) only with them.
    type: list
    elements: str
    default: [isolcpus, nohz_full, rcu_nocbs, irqaffinity, default_hugepagesz, hugepagesz, hugepages]
  state:
    description:
      - V(present) makes the managed arguments exactly O(args).
      - V(absent) removes every managed argument the collection owns from the boot configuration - the hugepage
        pools it wrote; the host's own pools and C(default_hugepagesz=) stay. With O(method=grub_d) the drop-in
        stays, appending nothing, so that managed arguments set in C(/etc/default/grub) are removed too.
    type: str
    choices: [present, absent]
    default: present
  root:
    description:
      - Directory that holds the system to configure. Everything is read and written under it -
        C(<root>/proc/cmdline) (unless O(proc_root) is set), C(<root>/etc/os-release), C(<root>/etc/default/grub.d/),
        C(<root>/etc/default/grub), C(<root>/etc/kernel/cmdline) - so that tests and containers can use a copy.
      - The boot loader commands are found on E(PATH) and act on the running system; with a root other than C(/)
        set O(update_bootloader=false) unless stand-ins are on E(PATH).
    type: path
    default: /
  proc_root:
    description:
      - Directory whose C(proc/cmdline) and C(proc/mounts) show the running kernel, when that is not O(root) - an
        image tree written from its host, or a test whose running kernel is a copied tree.
      - Defaults to O(root).
    type: path
  update_bootloader:
    description:
      - Run C(update-grub), C(grubby), C(transactional-update) or C(sdbootutil) when something changed.
      - V(false) only writes the files and returns the command that would run in RV(commands) (for containers,
        where the boot loader cannot be updated). C(grubby --info=ALL) still runs to read the entries; without
        C(grubby) a warning says the entries were not read.
      - The files decide whether something changed - a later run does not repeat a command an earlier run
        with V(false) skipped.
      - When the command fails, every file the run changed is put back as it was (same bytes and mode; a file
        the run created is removed) and the task fails with the command's RV(rc) and RV(stderr), so the next
        run finds the same change and runs the command again. Its programs are looked up before anything is written.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    details: Nothing is written and no command that changes anything runs (C(grubby --info=ALL) reads the entries);
      RV(commands) lists what would run.
  diff_mode:
    support: full
    details: Before and after of each file, and of every grubby kernel entry's arguments.
  platform:
    platforms: linux
notes:
  - Boot parameters are written the way each distribution boots (GRUB drop-in, grubby, transactional-update); a reboot happens only
    where the caller allows it (the C(maitred.rke2_numa.boot_params) role's C(rke2_numa_reboot_ok)); C(reboot_required) is always reported.
  - Every method writes the wanted arguments together, once each and in the given order, after the other arguments.
    A running command line that holds a managed argument twice, or in another order, needs a reboot.
  - Hugepages - the collection owns only the hugepage pool of the size it plans; other pools on the command line stay.
  - Every existing file the module changes is first backed up next to itself (RV(backup_files)). A file that is a
    symbolic link is written at the link's target; the link stays.
  - transactional_update - edit C(/etc) before C(transactional-update) creates its snapshot; a pending snapshot
    that itself changed C(/etc/default/grub) wins over this edit. Reboot soon after a staged change.
seealso:
  - module: maitred.rke2_numa.numa_plan
  - name: transactional-update(8)
    description: C(grub.cfg) and C(--continue).
    link: https://kubic.opensuse.org/documentation/man-pages/transactional-update.8.html
  - name: grubby(8)
    description: C(--update-kernel=ALL), C(--args), C(--remove-args).
    link: https://github.com/rhboot/grubby
"""

EXAMPLES = r"""
- name: Set the kernel arguments of the plan
  maitred.rke2_numa.boot_params:
    args: "{{ rke2_numa_plan.kernel_args }}"
  register: __boot

- name: Reboot when the running kernel differs
  ansible.builtin.reboot:
  when: __boot.reboot_required

- name: Remove every managed kernel argument
  maitred.rke2_numa.boot_params:
    state: absent

- name: Write the Debian drop-in into an image tree without running update-grub
  maitred.rke2_numa.boot_params:
    args:
      - isolcpus=managed_irq,2-31
      - nohz_full=2-31
      - rcu_nocbs=2-31
      - irqaffinity=0-1
    root: /srv/images/worker
    method: grub_d
    update_bootloader: false
"""

RETURN = r"""
reboot_required:
  description:
    - Whether the running kernel (C(<root>/proc/cmdline)) differs from the wanted managed arguments - a wanted
      one missing or with another value, a managed one running that is not wanted, one running twice, or the
      managed ones in another order (C(hugepages=) counts pages of the C(hugepagesz=) before it).
    - Only the arguments the collection owns count, not the host's other hugepage pools or its
      C(default_hugepagesz=); a pool of a size it wrote before and removed counts while the running kernel still
      has it (unless the boot configuration keeps a host pool of that size).
    - With O(method=transactional_update) also true whenever a change is staged in a new snapshot.
  returned: success
  type: bool
  sample: true
running:
  description: The arguments of the running kernel the collection owns (managed names; hugepage args of the pools
    it plans or wrote), in command line order.
  returned: success
  type: list
  elements: str
  sample: ["isolcpus=1-3"]
wanted:
  description: The managed arguments the boot configuration holds after the run (empty with O(state=absent)).
  returned: success
  type: list
  elements: str
  sample: ["isolcpus=managed_irq,1-55,57-111", "nohz_full=1-55,57-111", "rcu_nocbs=1-55,57-111", "irqaffinity=0,56"]
added:
  description: Wanted arguments the boot configuration lacked (in at least one kernel entry).
  returned: success
  type: list
  elements: str
  sample: ["nohz_full=1-55,57-111"]
removed:
  description: Managed arguments the collection owns that the boot configuration held and that are not wanted (stale
    names, replaced values, the pools it wrote before and no longer plans).
  returned: success
  type: list
  elements: str
  sample: ["isolcpus=1-3"]
method:
  description: The method used.
  returned: success
  type: str
  sample: grub_d
commands:
  description:
    - The commands run (argv lists), or that would run in check mode or with O(update_bootloader=false).
  returned: success
  type: list
  elements: list
  sample: [["update-grub"]]
bootloader_updated:
  description: Whether the commands in RV(commands) ran.
  returned: success
  type: bool
  sample: true
files:
  description: Files written (or that would be written in check mode), as paths under O(root) - the boot configuration
    and, for grubby and transactional-update, the record C(/etc/rke2-numa/boot_params.state).
  returned: success
  type: list
  elements: str
  sample: ["/etc/default/grub.d/99-rke2-numa.cfg"]
backup_files:
  description:
    - The backup of each existing file the run changed (C(<path>.<pid>.<date>@<time>~), next to the file), taken
      before it was written. Empty in check mode, when nothing changed, or when only new files were written.
    - When a failed command made the run put the files back, the backups are removed with the failure (they
      hold what the files hold again).
  returned: success
  type: list
  elements: str
  sample: ["/etc/default/grub.10342.2026-03-02@11:04:57~"]
rc:
  description: Exit status of the boot loader command that failed.
  returned: failure of a boot loader command
  type: int
  sample: 1
stderr:
  description: Standard error of the boot loader command that failed.
  returned: failure of a boot loader command
  type: str
  sample: "/usr/sbin/grub-mkconfig: not found"
diff:
  description: Before and after of each file and of the grubby kernel entries' arguments.
  returned: when diff mode is on and something changes
  type: list
  elements: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.maitred.rke2_numa.plugins.module_utils import boot_config as bc
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_distro import PROC_CMDLINE
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_methods import METHODS
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_plan import REGISTRY, plan_from_inputs
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_grubby import grubby_entries_text
from ansible_collections.maitred.rke2_numa.plugins.module_utils.file_txn import FileTransaction
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import (
    MANAGED_KERNEL_ARGS,
    CmdlineError,
    added_removed,
    needs_reboot,
    owned_tokens,
    running_ownership,
    split_cmdline,
    validate_args,
    validate_names,
    wanted_strings,
)

ARGUMENT_SPEC = dict(
    args=dict(type="list", elements="str"),
    managed=dict(type="list", elements="str", default=list(MANAGED_KERNEL_ARGS)),
    state=dict(type="str", choices=["present", "absent"], default="present"),
    root=dict(type="path", default="/"),
    proc_root=dict(type="path"),
    method=dict(type="str", choices=["auto"] + list(METHODS), default="auto"),
    update_bootloader=dict(type="bool", default=True),
)


_path = bc.path_under
_read = bc.read_text


def diffs(root, change):
    out = [{"before_header": _path(root, f["path"]), "after_header": _path(root, f["path"]),
            "before": f["before"] or "", "after": f["after"]} for f in change["files"]]
    if change.get("entries") and change["commands"]:
        out.append({"before_header": "grubby --info=ALL (kernel: args)", "after_header": "grubby --info=ALL (kernel: args)",
                    "before": grubby_entries_text((e, e["args"]) for e, dummy in change["entries"]),
                    "after": grubby_entries_text(change["entries"])})
    return out


def apply_change(module, root, method, change, wanted, managed):
    """Back up and write the files, run the commands; returns (whether the commands ran, backup paths).

    The commands' programs are found before anything is written. The files are one FileTransaction (a file
    behind a symlink is written at the link's target, the link stays): when a write or a command fails, or the
    method's verify finds what the commands did short, every file is put back and the task fails.
    """
    if module.check_mode:
        return False, []
    update = bool(change["commands"]) and module.params["update_bootloader"]
    commands = [[module.get_bin_path(argv[0], required=True)] + argv[1:] for argv in change["commands"]] if update else []
    txn = FileTransaction(module)
    for f in change["files"]:
        txn.write(_path(root, f["path"]), f["after"].encode("utf-8", "surrogateescape"), f["mode"])
    for argv in commands:
        bc.run_checked(module, argv, "cannot update the boot loader", txn.fail)
    verify = REGISTRY[method].verify
    left = verify(root, bc.tool_reader(module, True, txn.fail), change, wanted, managed) if commands and verify else None
    if left:
        txn.fail(left)
    return bool(commands), txn.backups


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                           required_if=[("state", "present", ("args",))])
    p = module.params
    root = p["root"]
    proc_root = p["proc_root"] or root
    try:
        managed = validate_names(p["managed"])
        wanted = [] if p["state"] == "absent" else validate_args(p["args"], managed)
        cmdline = _read(_path(proc_root, PROC_CMDLINE))
        if cmdline is None:
            raise CmdlineError("cannot read the running kernel command line %s" % _path(proc_root, PROC_CMDLINE))
        method = bc.detect_method(root, proc_root) if p["method"] == "auto" else p["method"]
        inputs = bc.read_boot_inputs(method, root, bc.tool_reader(module, p["update_bootloader"]))
        change = plan_from_inputs(inputs, wanted, managed)
    except CmdlineError as e:
        module.fail_json(msg=to_native(e))
    except (IOError, OSError) as e:
        module.fail_json(msg="cannot read the boot configuration under %s: %s" % (root, to_native(e)))

    ran, backups = apply_change(module, root, method, change, wanted, managed)
    running = split_cmdline(cmdline)
    own = running_ownership(wanted, managed, change["history"], change["after"])
    staged = REGISTRY[method].staged and bool(change["commands"]) and p["update_bootloader"]
    added, removed = added_removed(change["locations"], wanted)
    result = dict(
        changed=bool(change["files"] or change["commands"]),
        reboot_required=needs_reboot(running, wanted, managed, own) or staged,
        running=owned_tokens(running, wanted, managed, own),
        wanted=wanted_strings(wanted),
        added=added,
        removed=removed,
        method=method,
        commands=change["commands"],
        bootloader_updated=ran,
        files=["/" + f["path"] for f in change["files"]],
        backup_files=backups,
    )
    if module._diff and result["changed"]:
        result["diff"] = diffs(root, change)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
