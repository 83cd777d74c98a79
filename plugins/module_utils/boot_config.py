# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a host's boot configuration holds, read in one place (module_utils: runs on the host).

``read_boot_inputs`` reads everything a boot-parameter method needs under a
root (its declaration's read_inputs: files, plus what a program such as
``grubby --info=ALL`` reports); boot_plan's ``plan_from_inputs`` (pure, also usable on the controller) computes
the change that would make the boot configuration hold the wanted arguments.
The boot_params module writes that change; node_state_info returns the inputs
so that the controller can judge compliance without a second round trip. The
read imports none of the rewriters: node_state_info compiles its module_utils
on every host at every call.
"""

from __future__ import annotations

import os

from ansible_collections.maitred.rke2_numa.plugins.module_utils import boot_distro
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import CmdlineError, path_under, read_text
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_plan import REGISTRY, detect


def detect_method(root, proc_root):
    """The method for the system under root, from its os-release (and whether it is transactional:
    the mounts of the running system under proc_root)."""
    os_release = read_text(path_under(root, boot_distro.OS_RELEASE))
    if os_release is None:
        raise CmdlineError("cannot tell the distribution: %s does not exist; set method" % path_under(root, boot_distro.OS_RELEASE))
    transactional = boot_distro.is_transactional(read_text(path_under(proc_root, boot_distro.PROC_MOUNTS)),
                                                 os.path.exists(path_under(root, boot_distro.TRANSACTIONAL_UPDATE)))
    return detect(boot_distro.parse_os_release(os_release), transactional)


def run_checked(module, argv, what, fail=None):
    """Run argv; when it fails, ``fail`` (default ``module.fail_json``) gets msg, rc, stdout, stderr, cmd."""
    rc, out, err = module.run_command(argv)
    if rc != 0:
        (fail or module.fail_json)(msg="%s: %s exited %d: %s" % (what, " ".join(argv), rc, (err or out).strip()),
                                   rc=rc, stdout=out, stderr=err, cmd=argv)
    return out


def tool_reader(module, required, fail=None):
    """A method's read_tool: ``read_tool(program, args, what)`` is the program's output, or None with a warning when it is
    missing and not required; when it fails, ``fail`` is called as run_checked calls it."""
    def read_tool(program, args, what):
        path = module.get_bin_path(program, required=required)
        if path is None:
            module.warn("%s not found: %s were not read; only files are checked" % (program, what))
            return None
        return run_checked(module, [path] + list(args), "cannot read " + what, fail)
    return read_tool


def read_boot_inputs(method, root, read_tool=None):
    """The files (and the programs' output, through ``read_tool``: tool_reader) ``method`` plans from, as a JSON-able dict."""
    return dict(REGISTRY[method].read_inputs(root, read_tool), method=method)
