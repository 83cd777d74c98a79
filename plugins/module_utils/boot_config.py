# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a host's boot configuration holds, read in one place (module_utils: runs on the host).

``read_boot_inputs`` reads everything a boot-parameter method needs under a
root (files only, plus the kernel entries ``grubby --info=ALL`` reports);
boot_plan's ``plan_from_inputs`` (pure, also usable on the controller) computes
the change that would make the boot configuration hold the wanted arguments.
The boot_params module writes that change; node_state_info returns the inputs
so that the controller can judge compliance without a second round trip. The
read imports none of the rewriters: node_state_info compiles its module_utils
on every host at every call.
"""

from __future__ import annotations

import os

from ansible_collections.maitred.rke2_numa.plugins.module_utils import boot_distro
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import (
    DEFAULT_GRUB,
    DROPIN,
    DROPIN_NAME,
    GRUB_D,
    KERNEL_CMDLINE,
    RECORD,
    CmdlineError,
)


def path_under(root, rel):
    return os.path.join(root, rel)


def read_text(path):
    """File text, or None when it does not exist."""
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None


def detect_method(root, proc_root):
    """The method for the system under root, from its os-release (and whether it is transactional:
    the mounts of the running system under proc_root)."""
    os_release = read_text(path_under(root, boot_distro.OS_RELEASE))
    if os_release is None:
        raise CmdlineError("cannot tell the distribution: %s does not exist; set method" % path_under(root, boot_distro.OS_RELEASE))
    transactional = boot_distro.is_transactional(read_text(path_under(proc_root, boot_distro.PROC_MOUNTS)),
                                                 os.path.exists(path_under(root, boot_distro.TRANSACTIONAL_UPDATE)))
    return boot_distro.detect_method(boot_distro.parse_os_release(os_release), transactional)


def run_checked(module, argv, what, fail=None):
    """Run argv; when it fails, ``fail`` (default ``module.fail_json``) gets msg, rc, stdout, stderr, cmd."""
    rc, out, err = module.run_command(argv)
    if rc != 0:
        (fail or module.fail_json)(msg="%s: %s exited %d: %s" % (what, " ".join(argv), rc, (err or out).strip()),
                                   rc=rc, stdout=out, stderr=err, cmd=argv)
    return out


def grubby_entries(module, required, fail=None):
    """Every kernel entry from ``grubby --info=ALL`` ([] with a warning when grubby is missing and not
    required). When grubby fails, ``fail`` is called as run_checked calls it."""
    grubby = module.get_bin_path("grubby", required=required)
    if grubby is None:
        module.warn("grubby not found: the kernel entries were not read; only files are checked")
        return []
    # imported here: the read of a host that has no grubby compiles neither grubby's parser nor the rewriters it needs
    from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_grubby import parse_grubby_info  # pylint: disable=import-outside-toplevel
    return parse_grubby_info(run_checked(module, [grubby, "--info=ALL"], "cannot read the kernel entries", fail))


def read_boot_inputs(method, root, grubby_entries=None):
    """The files (and grubby's entries) ``method`` plans from, as a JSON-able dict.

    ``grubby_entries``: a callable returning parse_grubby_info's list (grubby needs a command).
    """
    inputs = {"method": method}
    if method == "grub_d":
        grub_d = path_under(root, GRUB_D)
        others = []
        if os.path.isdir(grub_d):
            others = [[n, read_text(os.path.join(grub_d, n)) or ""] for n in sorted(os.listdir(grub_d))
                      if n.endswith(".cfg") and n != DROPIN_NAME]
        inputs.update(default_grub=read_text(path_under(root, DEFAULT_GRUB)), others=others,
                      dropin=read_text(path_under(root, DROPIN)))
        return inputs
    inputs.update(record=read_text(path_under(root, RECORD)), kernel_cmdline=read_text(path_under(root, KERNEL_CMDLINE)))
    if method == "grubby":
        inputs["entries"] = grubby_entries() if grubby_entries else []
    else:
        inputs["default_grub"] = read_text(path_under(root, DEFAULT_GRUB))
    return inputs
