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
  - Debian and Ubuntu (O(method=grub_d)) - writes C(/etc/default/grub.d/99-rke2-numa.cfg), a POSIX
    shell fragment that C(grub-mkconfig) sources after C(/etc/default/grub). It removes the managed
    arguments from C(GRUB_CMDLINE_LINUX) and C(GRUB_CMDLINE_LINUX_DEFAULT) (so a hand-set C(isolcpus=)
    there is not duplicated) and appends the wanted ones to C(GRUB_CMDLINE_LINUX); then runs C(update-grub).
  - RHEL family (O(method=grubby)) - reads every kernel entry with C(grubby --info=ALL) and runs
    C(grubby --update-kernel=ALL --args=... --remove-args=...); rewrites C(/etc/kernel/cmdline) too when it
    exists (new kernels take their arguments from it).
  - SLE Micro and other transactional SUSE systems (O(method=transactional_update)) - with GRUB2, rewrites
    C(GRUB_CMDLINE_LINUX_DEFAULT) in C(/etc/default/grub) and runs C(transactional-update --continue grub.cfg),
    which writes a new C(grub.cfg) into a new snapshot (continuing a pending one); with a BLS boot loader
    (C(/etc/kernel/cmdline) exists) rewrites that file and runs C(sdbootutil update-all-entries).
    A staged change always needs a reboot.
  - Returns whether the running kernel (C(/proc/cmdline)) differs from the wanted arguments
    (RV(reboot_required)); never reboots.
author:
  - maitred.rke2_numa contributors (@maitred)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
options:
  args:
    description:
      - The wanted kernel arguments, each V(name=value) or a bare flag V(name), as
        M(maitred.rke2_numa.numa_plan) returns them in C(plan.kernel_args).
      - No whitespace, quotes or shell characters; each name once; every name must be in O(managed)
        (an argument the collection does not own is refused).
      - Required when O(state=present); an empty list removes every managed argument, like O(state=absent).
    type: list
    elements: str
  managed:
    description:
      - Names of the kernel arguments the collection owns. These are replaced or removed by name;
        all other arguments are never touched. C(-) and C(_) in names are the same (as for the kernel).
    type: list
    elements: str
    default: [isolcpus, nohz_full, rcu_nocbs, irqaffinity, default_hugepagesz, hugepagesz, hugepages]
  state:
    description:
      - V(present) makes the managed arguments exactly O(args).
      - V(absent) removes every managed argument from the boot configuration. With O(method=grub_d) the drop-in
        stays, appending nothing, so that managed arguments set in C(/etc/default/grub) are removed too.
    type: str
    choices: [present, absent]
    default: present
  root:
    description:
      - Directory that holds the system to configure. Everything is read and written under it -
        C(<root>/proc/cmdline), C(<root>/etc/os-release), C(<root>/etc/default/grub.d/),
        C(<root>/etc/default/grub), C(<root>/etc/kernel/cmdline) - so that tests and containers can use a copy.
      - The boot loader commands are found on E(PATH) and act on the running system; with a root other than C(/)
        set O(update_bootloader=false) unless stand-ins are on E(PATH).
    type: path
    default: /
  method:
    description:
      - How to change the boot configuration.
      - V(auto) chooses from C(ID) and C(ID_LIKE) in C(<root>/etc/os-release) - V(grub_d) for debian and ubuntu,
        V(grubby) for rhel, centos, rocky, almalinux and fedora, V(transactional_update) for sle-micro, sl-micro,
        opensuse-microos, opensuse-leap-micro and any SUSE system whose C(/) is a read-only btrfs with
        C(transactional-update) installed. Any other distribution fails, naming it.
    type: str
    choices: [auto, grub_d, grubby, transactional_update]
    default: auto
  update_bootloader:
    description:
      - Run C(update-grub), C(grubby), C(transactional-update) or C(sdbootutil) when something changed.
      - V(false) only writes the files and returns the command that would run in RV(commands) (for containers,
        where the boot loader cannot be updated). C(grubby --info=ALL) still runs to read the entries; without
        C(grubby) a warning says the entries were not read.
      - The files decide whether something changed - a later run does not repeat a command an earlier run
        with V(false) skipped.
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
  - Rule 11 of the collection's design - boot parameters per distribution; reboot only where the caller allows
    it (the C(maitred.rke2_numa.boot_params) role's C(rke2_numa_reboot_ok)), always report C(reboot_required).
  - Every method writes the wanted arguments together, once each and in the given order, after the other arguments.
    A running command line that holds a managed argument twice, or in another order, needs a reboot.
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
    - With O(method=transactional_update) also true whenever a change is staged in a new snapshot.
  returned: success
  type: bool
  sample: true
running:
  description: The managed arguments of the running kernel, in command line order.
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
  description: Managed arguments the boot configuration held that are not wanted (stale names and replaced values).
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
  description: Files written (or that would be written in check mode), as paths under O(root).
  returned: success
  type: list
  elements: str
  sample: ["/etc/default/grub.d/99-rke2-numa.cfg"]
diff:
  description: Before and after of each file and of the grubby kernel entries' arguments.
  returned: when diff mode is on and something changes
  type: list
  elements: dict
"""

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.maitred.rke2_numa.plugins.module_utils import kernel_cmdline as kc

ARGUMENT_SPEC = dict(
    args=dict(type="list", elements="str"),
    managed=dict(type="list", elements="str", default=list(kc.MANAGED_KERNEL_ARGS)),
    state=dict(type="str", choices=["present", "absent"], default="present"),
    root=dict(type="path", default="/"),
    method=dict(type="str", choices=["auto"] + list(kc.METHODS), default="auto"),
    update_bootloader=dict(type="bool", default=True),
)


def _path(root, rel):
    return os.path.join(root, rel)


def _read(path):
    """File text, or None when it does not exist."""
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None


def _write(module, path, text, mode):
    """Write atomically (temp file in the same folder, then atomic_move); mode for new files."""
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        os.makedirs(folder, 0o755)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".%s." % os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8", "surrogateescape"))
        module.atomic_move(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    if mode is not None:
        os.chmod(path, mode)


def _run(module, argv, check_rc_msg):
    rc, out, err = module.run_command(argv)
    if rc != 0:
        module.fail_json(msg="%s: %s exited %d: %s" % (check_rc_msg, " ".join(argv), rc, (err or out).strip()),
                         rc=rc, stdout=out, stderr=err, cmd=argv)
    return out


def _grubby_info(module, update_bootloader):
    """Every kernel entry from ``grubby --info=ALL`` ([] with a warning when grubby is missing and not needed)."""
    grubby = module.get_bin_path("grubby", required=update_bootloader)
    if grubby is None:
        module.warn("grubby not found: the kernel entries were not read; only files are checked")
        return []
    return kc.parse_grubby_info(_run(module, [grubby, "--info=ALL"], "cannot read the kernel entries"))


def detect_method(root):
    """The method for the system under root, from its os-release (and whether it is transactional)."""
    os_release = _read(_path(root, kc.OS_RELEASE))
    if os_release is None:
        raise kc.CmdlineError("cannot tell the distribution: %s does not exist; set method" % _path(root, kc.OS_RELEASE))
    transactional = kc.is_transactional(_read(_path(root, kc.PROC_MOUNTS)), os.path.exists(_path(root, kc.TRANSACTIONAL_UPDATE)))
    return kc.detect_method(kc.parse_os_release(os_release), transactional)


def plan_change(module, method, root, wanted, managed):
    """Read what the method needs under root and compute the change (kernel_cmdline does the thinking)."""
    if method == "grub_d":
        grub_d = _path(root, kc.GRUB_D)
        others = []
        if os.path.isdir(grub_d):
            others = [(n, _read(os.path.join(grub_d, n)) or "") for n in sorted(os.listdir(grub_d))
                      if n.endswith(".cfg") and n != kc.DROPIN_NAME]
        return kc.plan_grub_d(_read(_path(root, kc.DEFAULT_GRUB)), others, _read(_path(root, kc.DROPIN)), wanted, managed)
    if method == "grubby":
        entries = _grubby_info(module, module.params["update_bootloader"])
        return kc.plan_grubby(entries, _read(_path(root, kc.KERNEL_CMDLINE)), wanted, managed)
    return kc.plan_transactional(_read(_path(root, kc.DEFAULT_GRUB)), _read(_path(root, kc.KERNEL_CMDLINE)), wanted, managed)


def diffs(root, change):
    out = [{"before_header": _path(root, f["path"]), "after_header": _path(root, f["path"]),
            "before": f["before"] or "", "after": f["after"]} for f in change["files"]]
    if change.get("entries") and change["commands"]:
        out.append({"before_header": "grubby --info=ALL (kernel: args)", "after_header": "grubby --info=ALL (kernel: args)",
                    "before": kc.grubby_entries_text((e, e["args"]) for e, dummy in change["entries"]),
                    "after": kc.grubby_entries_text(change["entries"])})
    return out


def apply_change(module, root, change, wanted, managed):
    """Write the files, run the commands; returns whether the commands ran."""
    if module.check_mode:
        return False
    for f in change["files"]:
        _write(module, _path(root, f["path"]), f["after"], f["mode"])
    if not change["commands"] or not module.params["update_bootloader"]:
        return False
    for argv in change["commands"]:
        _run(module, [module.get_bin_path(argv[0], required=True)] + argv[1:], "cannot update the boot loader")
    if "entries" in change:
        left = kc.plan_grubby(_grubby_info(module, True), None, wanted, managed)["commands"]
        if left:
            module.fail_json(msg="grubby ran but the kernel entries still differ; grubby would still need: %s" % " ".join(left[0]))
    return True


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True,
                           required_if=[("state", "present", ("args",))])
    p = module.params
    root = p["root"]
    try:
        managed = kc.validate_names(p["managed"])
        wanted = [] if p["state"] == "absent" else kc.validate_args(p["args"], managed)
        cmdline = _read(_path(root, kc.PROC_CMDLINE))
        if cmdline is None:
            raise kc.CmdlineError("cannot read the running kernel command line %s" % _path(root, kc.PROC_CMDLINE))
        method = detect_method(root) if p["method"] == "auto" else p["method"]
        change = plan_change(module, method, root, wanted, managed)
    except kc.CmdlineError as e:
        module.fail_json(msg=to_native(e))
    except (IOError, OSError) as e:
        module.fail_json(msg="cannot read the boot configuration under %s: %s" % (root, to_native(e)))

    try:
        ran = apply_change(module, root, change, wanted, managed)
    except (IOError, OSError) as e:
        module.fail_json(msg="cannot write the boot configuration under %s: %s" % (root, to_native(e)))
    running = kc.split_cmdline(cmdline)
    staged = method == "transactional_update" and bool(change["commands"]) and p["update_bootloader"]
    added, removed = kc.added_removed(change["locations"], wanted)
    result = dict(
        changed=bool(change["files"] or change["commands"]),
        reboot_required=kc.needs_reboot(running, wanted, managed) or staged,
        running=kc.managed_tokens(running, managed),
        wanted=kc.wanted_strings(wanted),
        added=added,
        removed=removed,
        method=method,
        commands=change["commands"],
        bootloader_updated=ran,
        files=["/" + f["path"] for f in change["files"]],
    )
    if module._diff and result["changed"]:
        result["diff"] = diffs(root, change)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
