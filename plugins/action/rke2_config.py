# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rke2_config: merge the plan's kubelet args into RKE2's config.

Reads the file with slurp, edits it on the controller (PyYAML is not needed
on the node), then on the node: backs the file up (0600, in a 0700 folder)
before any change, content or mode, and writes it atomically, 0600
root:root. A symlinked file stays a symlink: its target is what is backed
up and written. The result says how to undo the run exactly (``backup_file``
and ``previous`` mode/owner/group, or ``created``). The join token never
reaches the output: the copy runs without diff, and the diff shown is made
here from text masked on its parsed nodes.
"""

from __future__ import annotations

import base64
import os
import time

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.maitred.rke2_numa.plugins.modules import rke2_config as rke2_config_doc
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.argspec import argument_spec
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import (
    SECURE,
    ConfigError,
    decode,
    effective_config,
    healthz_url,
    mask,
    plan_write,
)

# The options, their types, choices and defaults: as documented in plugins/modules/rke2_config.py.
ARGUMENT_SPEC = argument_spec(rke2_config_doc.DOCUMENTATION)


class ActionModule(ActionBase):
    """Merge or drop in the kubelet args; back up first; never show the token."""

    TRANSFERS_FILES = True

    def _module(self, name, args, task_vars):
        result = self._execute_module(module_name=name, module_args=args, task_vars=task_vars)
        if result.get("failed"):
            raise AnsibleActionFail("%s on %s failed: %s" % (name, args.get("path") or args.get("dest"), result.get("msg")))
        return result

    def _target(self, path, task_vars):
        """(the file to read and write, its stat or None): a symlink is followed to its target."""
        stat_args = {"get_checksum": False, "get_mime": False, "get_attributes": False}
        st = self._module("ansible.builtin.stat", dict(stat_args, path=path, follow=False), task_vars)["stat"]
        real = path
        if st["exists"] and st.get("islnk"):
            real = st["lnk_source"]
            st = self._module("ansible.builtin.stat", dict(stat_args, path=real, follow=False), task_vars)["stat"]
            if not st["exists"]:
                raise AnsibleActionFail("%s is a symlink to %s, which does not exist: nothing written" % (path, real))
        if not st["exists"]:
            return real, None
        if not st.get("isreg"):
            raise AnsibleActionFail("%s is not a regular file: nothing written" % real)
        return real, st

    def _read(self, path, task_vars):
        """Remote file content as text (refused when not UTF-8), or None when it does not exist."""
        result = self._execute_module(module_name="ansible.builtin.slurp", module_args={"src": path},
                                      task_vars=task_vars)
        if result.get("failed"):
            if "not found" in result.get("msg", "") or "No such file" in result.get("msg", ""):
                return None
            raise AnsibleActionFail("cannot read %s: %s" % (path, result.get("msg")))
        return decode(base64.b64decode(result["content"]), path)

    def _dropins(self, folder, task_vars):
        """The config.yaml.d files RKE2 reads (*.yaml and *.yml), in its order (by name)."""
        st = self._module("ansible.builtin.stat", {"path": folder, "get_checksum": False}, task_vars)["stat"]
        if not st.get("isdir"):
            return []
        found = self._module("ansible.builtin.find", {"paths": folder, "patterns": ["*.yaml", "*.yml"],
                                                      "file_type": "any", "follow": True}, task_vars)["files"]
        return sorted((f["path"] for f in found if not f.get("isdir")), key=os.path.basename)

    def _backup(self, real, backup_dir, task_vars):
        """A 0600 root copy of the file in the 0700 backup folder, before anything changes."""
        self._module("ansible.builtin.file", {"path": backup_dir, "state": "directory", "mode": "0700",
                                              "owner": "root", "group": "root"}, task_vars)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        dest = os.path.join(backup_dir, "%s.%s~" % (real.strip("/").replace("/", "_"), stamp))
        self._module("ansible.builtin.copy", {"src": real, "dest": dest, "remote_src": True, "mode": "0600",
                                              "owner": "root", "group": "root"}, task_vars)
        return dest

    def _write(self, dest, content, task_vars):
        """Atomic write through the copy action, 0600 root:root, without its (unmasked) diff."""
        task = self._task.copy()
        task.args.clear()
        task.args.update(content=content, dest=dest, mode="0600", owner="root", group="root", backup=False)
        task.diff = False
        copy = self._shared_loader_obj.action_loader.get(
            "ansible.legacy.copy", task=task, connection=self._connection, play_context=self._play_context,
            loader=self._loader, templar=self._templar, shared_loader_obj=self._shared_loader_obj)
        result = copy.run(task_vars=task_vars)
        if result.get("failed"):
            raise AnsibleActionFail("writing %s failed: %s" % (dest, result.get("msg")))
        return result

    def _restore(self, args, undo, task_vars):
        """Undo an earlier run from its result: its backup back with the previous mode and owner, or the file it
        created removed. Checked first, so that a result that names another file writes nothing."""
        target = args["path"] if args["mode"] == "merge" else args["dropin_path"]
        real, st = self._target(target, task_vars)
        undo_path = str(undo.get("real_path") or "")
        if undo_path not in (target, real):
            raise AnsibleActionFail("restore: %s is not %s (or its symlink's target); nothing written" % (undo_path or "(none)", target))
        backup, previous, created = str(undo.get("backup_file") or ""), undo.get("previous"), bool(undo.get("created"))
        if backup and os.path.dirname(os.path.normpath(backup)) != os.path.normpath(args["backup_dir"]):
            raise AnsibleActionFail("restore: the backup %s is not in %s; nothing written" % (backup, args["backup_dir"]))
        if backup and not (isinstance(previous, dict) and all(previous.get(k) for k in ("mode", "owner", "group"))):
            raise AnsibleActionFail("restore: the backup %s comes without the previous mode, owner and group; nothing written" % backup)
        out = {"changed": False, "restored": "", "removed": "", "path": target, "real_path": real}
        if backup:
            out.update(changed=True, restored=real)
            if not self._task.check_mode:
                done = self._module("ansible.builtin.copy", {"src": backup, "dest": real, "remote_src": True, "mode": previous["mode"],
                                                             "owner": previous["owner"], "group": previous["group"]}, task_vars)
                out["changed"] = bool(done.get("changed"))
        elif created and st is not None:
            out.update(changed=True, removed=real)
            if not self._task.check_mode:
                self._module("ansible.builtin.file", {"path": real, "state": "absent"}, task_vars)
        return out

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        if args["restore"] is not None:
            result.update(self._restore(args, args["restore"], task_vars))
            return result
        if args["kubelet_args"] is None:
            raise AnsibleActionFail("kubelet_args is required (unless restore is given)")
        # plain str: values from templates are tagged str subclasses
        for key in ("kubelet_args", "node_labels", "node_taints", "managed_flags"):
            args[key] = [str(v) for v in args[key]]
        managed = tuple(args["managed_flags"])
        path = args["path"]
        target = path if args["mode"] == "merge" else args["dropin_path"]
        # every check and read first: a refusal writes nothing
        try:
            real, st = self._target(target, task_vars)
            before = self._read(real, task_vars) if st else None
            dropins = self._dropins(path + ".d", task_vars)
            new_text, report = plan_write(path, args["mode"], target, before, lambda p: self._read(p, task_vars), dropins,
                                          args["kubelet_args"], args["node_labels"], args["node_taints"], managed)
            files = report.pop("files")
            url = healthz_url(effective_config(files))
        except ConfigError as e:
            raise AnsibleActionFail(str(e))

        previous = {"mode": st["mode"], "owner": st["pw_name"], "group": st["gr_name"]} if st else None
        secure = previous == SECURE
        changed = new_text is not None or (st is not None and not secure)
        if changed and not self._task.check_mode:
            if st and args["backup"]:
                result["backup_file"] = self._backup(real, args["backup_dir"], task_vars)
            if new_text is None:  # content as planned: only the secret-safe mode and owner
                self._module("ansible.builtin.file", dict(SECURE, path=real), task_vars)
            else:
                if st:  # make it 0600 before the token-holding content is rewritten
                    self._module("ansible.builtin.file", {"path": real, "mode": "0600"}, task_vars)
                else:  # a new file: config.yaml.d (or /etc/rancher/rke2) may not exist yet; copy does not create it
                    self._module("ansible.builtin.file", {"path": os.path.dirname(real), "state": "directory"}, task_vars)
                self._write(real, new_text, task_vars)
        if new_text is not None and self._task.diff:
            result["diff"] = {"before": mask(before or ""), "after": mask(new_text),
                              "before_header": real, "after_header": real}
        if report.get("normalised"):
            self._display.warning("%s held duplicate managed kubelet flags %s; they are now set once"
                                  % (path, ", ".join(report["normalised"])))
        for warning in report["elsewhere"]:
            self._display.warning(warning)
        result.update(changed=changed, content_changed=new_text is not None, path=target, real_path=real,
                      healthz_url=url,
                      created=changed and st is None,
                      previous=previous, mode=args["mode"], report=report)
        return result
