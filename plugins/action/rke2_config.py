# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rke2_config: merge the plan's kubelet args into RKE2's config (rule 12).

Reads the file with slurp, merges on the controller (PyYAML is not needed on
the node), writes with the copy action (atomic, 0600 root:root, backup). The
join token never reaches the output: copy runs without diff, and the diff
shown is made here from masked text.
"""

from __future__ import annotations

import base64
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import (
    MANAGED_KUBELET_FLAGS,
    ConfigError,
    dropin_config,
    mask,
    merged_config,
    owned_flags_elsewhere,
)

ARGUMENT_SPEC = {
    "path": {"type": "path", "default": "/etc/rancher/rke2/config.yaml"},
    "mode": {"type": "str", "default": "merge", "choices": ["merge", "dropin"]},
    "dropin_path": {"type": "path", "default": "/etc/rancher/rke2/config.yaml.d/50-rke2-numa.yaml"},
    "kubelet_args": {"type": "list", "elements": "str", "required": True},
    "node_labels": {"type": "list", "elements": "str", "default": []},
    "node_taints": {"type": "list", "elements": "str", "default": []},
    "managed_flags": {"type": "list", "elements": "str", "default": list(MANAGED_KUBELET_FLAGS)},
    "backup": {"type": "bool", "default": True},
}


class ActionModule(ActionBase):
    """Merge or drop in the kubelet args; never show the token."""

    TRANSFERS_FILES = True

    def _read(self, path, task_vars):
        """Remote file content as text, or None when it does not exist."""
        result = self._execute_module(module_name="ansible.builtin.slurp", module_args={"src": path},
                                      task_vars=task_vars)
        if result.get("failed"):
            if "not found" in result.get("msg", "") or "No such file" in result.get("msg", ""):
                return None
            raise AnsibleActionFail("cannot read %s: %s" % (path, result.get("msg")))
        return base64.b64decode(result["content"]).decode("utf-8")

    def _module(self, name, args, task_vars):
        result = self._execute_module(module_name=name, module_args=args, task_vars=task_vars)
        if result.get("failed"):
            raise AnsibleActionFail("%s on %s failed: %s" % (name, args.get("path") or args.get("dest"), result.get("msg")))
        return result

    def _write(self, dest, content, backup, task_vars):
        """Atomic write through the copy action, 0600 root:root, without its (unmasked) diff."""
        task = self._task.copy()
        task.args.clear()
        task.args.update(content=content, dest=dest, mode="0600", owner="root", group="root", backup=backup)
        task.diff = False
        copy = self._shared_loader_obj.action_loader.get(
            "ansible.legacy.copy", task=task, connection=self._connection, play_context=self._play_context,
            loader=self._loader, templar=self._templar, shared_loader_obj=self._shared_loader_obj)
        result = copy.run(task_vars=task_vars)
        if result.get("failed"):
            raise AnsibleActionFail("writing %s failed: %s" % (dest, result.get("msg")))
        return result

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        dummy, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        # plain str: values from templates are tagged str subclasses that PyYAML cannot represent
        for key in ("kubelet_args", "node_labels", "node_taints", "managed_flags"):
            args[key] = [str(v) for v in args[key]]
        managed = tuple(args["managed_flags"])
        path = args["path"]
        try:
            current = self._read(path, task_vars)
            if args["mode"] == "merge":
                target = path
                before = current
                new_text, report = merged_config(current, path, args["kubelet_args"], args["node_labels"],
                                                 args["node_taints"], managed)
            else:
                target = args["dropin_path"]
                before = self._read(target, task_vars)
                report = {"config_sets_managed_flags": owned_flags_elsewhere(current, path, managed)}
                new_text = dropin_config(args["kubelet_args"], args["node_labels"], args["node_taints"])
                if new_text == before:
                    new_text = None
        except ConfigError as e:
            raise AnsibleActionFail(str(e))

        changed = False
        if new_text is None:
            # content as planned: still enforce the secret-safe mode (an existing file only)
            if before is not None and not self._task.check_mode:
                changed = self._module("ansible.builtin.file", {"path": target, "mode": "0600", "owner": "root",
                                                                "group": "root"}, task_vars).get("changed", False)
        else:
            changed = True
            if not self._task.check_mode:
                if before is not None:  # the backup copy keeps the file's mode: make it 0600 first
                    self._module("ansible.builtin.file", {"path": target, "mode": "0600"}, task_vars)
                else:  # a new file: config.yaml.d (or /etc/rancher/rke2) may not exist yet; copy does not create it
                    self._module("ansible.builtin.file", {"path": os.path.dirname(target), "state": "directory"}, task_vars)
                written = self._write(target, new_text, args["backup"], task_vars)
                if written.get("backup_file"):
                    result["backup_file"] = written["backup_file"]
            if self._task.diff:
                result["diff"] = {"before": mask(before or ""), "after": mask(new_text),
                                  "before_header": target, "after_header": target}
        if report.get("normalised"):
            self._display.warning("%s held duplicate managed kubelet flags %s; they are now set once"
                                  % (path, ", ".join(report["normalised"])))
        if report.get("config_sets_managed_flags"):
            self._display.warning("%s sets %s too; the drop-in is read later, so its values win"
                                  % (path, ", ".join(report["config_sets_managed_flags"])))
        result.update(changed=changed, path=target, mode=args["mode"], report=report)
        return result
