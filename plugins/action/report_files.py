# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""report_files: write a run's report files into a folder on the controller, in one task (never the host)."""

from __future__ import annotations

import os
import re

from ansible.module_utils.common.text.converters import to_bytes

from ansible_collections.maitred.rke2_numa.plugins.module_utils.file_txn import missing_dirs, replace_file
from ansible_collections.maitred.rke2_numa.plugins.modules import report_files as report_files_doc
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.argspec import argument_spec
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.controller_action import ControllerAction

ARGUMENT_SPEC = argument_spec(report_files_doc.DOCUMENTATION)
_NAME = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.@+=,-]*$")
_MODE = re.compile(r"^0?[0-7]{3}$")


def name_errors(names):
    """Why these file names cannot be written into a folder ([] when they can): one plain name each."""
    return ["%r is not one plain file name" % (n,) for n in sorted(names, key=str)
            if not isinstance(n, str) or not _NAME.match(n) or n in (".", "..") or len(n) > 255]


def write_files(dest, files, mode=0o644, check=False):
    """Write ``files`` ({name: text}) into ``dest``: only those whose content or mode differs, atomically, at a
    symlink's target; with ``check``, nothing (what would be). No ``files``: nothing, no folder. (written, unchanged,
    created)."""
    if not files:
        return [], 0, False
    created = bool(missing_dirs(dest))
    if created and not check:
        for folder in reversed(missing_dirs(dest)):
            os.mkdir(folder, 0o755)
            os.chmod(folder, 0o755)
    written, unchanged = [], 0
    for name in sorted(files):
        data = to_bytes(files[name])
        path = os.path.realpath(os.path.join(dest, name))
        try:
            with open(path, "rb") as f:
                same = f.read() == data
        except (FileNotFoundError, NotADirectoryError):
            same = False
        if same and (os.stat(path).st_mode & 0o7777) == mode:
            unchanged += 1
            continue
        written.append(name)
        if check:
            continue
        if not same:
            replace_file(path, data)
        os.chmod(path, mode)
    return written, unchanged, created


class ActionModule(ControllerAction):
    """Write files on the controller."""

    ARGUMENT_SPEC = ARGUMENT_SPEC

    def decide(self, args, task_vars, result):
        dest, files = args["dest"], args["files"]
        errors = name_errors(files) + ([] if os.path.isabs(dest) else ["dest must be an absolute path, got %r" % dest])
        errors += [] if _MODE.match(args["mode"]) else ["mode must be octal, like 0644, got %r" % args["mode"]]
        errors += ["%s: the content is not text" % n for n in sorted(files, key=str) if not name_errors([n]) and not isinstance(files[n], str)]
        if errors:
            result.update(failed=True, changed=False, msg="report_files: nothing written: " + "; ".join(errors))
            return result
        written, unchanged, created = write_files(dest, files, int(args["mode"], 8), check=bool(self._task.check_mode))
        result.update(changed=bool(written) or created, written=written, unchanged=unchanged, created=created)
        return result
