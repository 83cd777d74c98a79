# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rke2_config: merge the plan's kubelet args into RKE2's config.

Reads the files with stat, find and slurp and plans on the controller (PyYAML is not needed on the node, every
refusal before the first write), then changes every file of the run on the node in one module call
(rke2_config_files: one module_utils/file_txn.FileTransaction): each backed up first (0600, in a 0700 folder),
written atomically 0600 root:root, or removed; a failed write puts back every file changed before it. A symlinked file
stays a symlink: its target is what is backed up and written. The result says how to undo the run exactly
(``backup_file`` and ``previous`` mode/owner/group, or ``created``); ``restore`` puts that back through the same
module. The join token never reaches the output: the files go to the module as no_log content, and the diff shown is
made here from text masked on its parsed nodes.
"""

from __future__ import annotations

import base64
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.maitred.rke2_numa.plugins.modules import rke2_config as rke2_config_doc
from ansible_collections.maitred.rke2_numa.plugins.module_utils.rke2_config_file import (
    DROPIN_PATTERN,
    ConfigError,
    decode,
    effective_config,
)
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kubelet_conf import conf_folder, conf_path, is_ours_conf
from ansible_collections.maitred.rke2_numa.plugins.module_utils.rke2_dropin import is_ours
from ansible_collections.maitred.rke2_numa.plugins.doc_fragments import config_modes as config_modes_doc
from ansible_collections.maitred.rke2_numa.plugins.doc_fragments import managed_flags as managed_flags_doc
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.argspec import argument_spec
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rancher import config_mode
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.rke2_config import (
    SECURE,
    healthz_url,
    mask,
    plan_write,
)

# The options, their types, choices and defaults: as documented in plugins/modules/rke2_config.py, mode and
# kubelet_config completed by doc_fragments/config_modes.py, managed_flags (kubelet_rules.MANAGED_KUBELET_FLAGS) in
# doc_fragments/managed_flags.py
ARGUMENT_SPEC = argument_spec(rke2_config_doc.DOCUMENTATION, fragments=(config_modes_doc.ModuleDocFragment.DOCUMENTATION,
                                                                        managed_flags_doc.ModuleDocFragment.DOCUMENTATION))


class ActionModule(ActionBase):
    """Merge or drop in the kubelet args; back up first; never show the token."""

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

    def _find(self, folder, pattern, task_vars, **find):
        """The paths of the files (not folders) in ``folder`` whose name matches ``pattern``; none when it is no folder."""
        if not self._module("ansible.builtin.stat", {"path": folder, "get_checksum": False}, task_vars)["stat"].get("isdir"):
            return []
        found = self._module("ansible.builtin.find", dict(find, paths=folder, patterns=[pattern], use_regex=True, file_type="any"), task_vars)
        return [f["path"] for f in found["files"] if not f.get("isdir")]

    def _conf_state(self, mode, path, read, task_vars):
        """File mode's kubelet drop-in folder as plan_write reads it (plugin_utils/rke2_config.py): our file's text, and
        the folder's other ``*.conf`` files (sub-folders too, as the kubelet walks it). In flags mode only our file."""
        conf, folder = conf_path(path), conf_folder(path)
        real, st = self._target(conf, task_vars)
        before = self._read(real, task_vars) if st else None
        others = []
        if mode == "file":
            others = [(p, read(p)) for p in self._find(folder, r"^.*\.conf$", task_vars, recurse=True, follow=False)
                      if os.path.normpath(p) != os.path.normpath(conf)]
        return {"mode": mode, "path": conf, "folder": folder, "before": before, "ours": is_ours_conf(before),
                "others": others, "real": real, "stat": st}

    def _host(self, state, files, args, task_vars):
        """Every file of the run changed on the host in one module call, one FileTransaction (rke2_config_files): a failed
        change puts back every file changed before it. Returns the module's result."""
        result = self._execute_module(module_name="maitred.rke2_numa.rke2_config_files", task_vars=task_vars,
                                      module_args={"state": state, "files": files, "backup_dir": args["backup_dir"]})
        if result.get("failed"):
            back = "" if result.get("backup_files") else "; every file this run had changed is back as it was"
            raise AnsibleActionFail("%s%s" % (result.get("msg"), back))
        return result

    def _undo_checked(self, args, backup, previous):
        if backup and os.path.dirname(os.path.normpath(backup)) != os.path.normpath(args["backup_dir"]):
            raise AnsibleActionFail("restore: the backup %s is not in %s; nothing written" % (backup, args["backup_dir"]))
        if backup and not (isinstance(previous, dict) and all(previous.get(k) for k in ("mode", "owner", "group"))):
            raise AnsibleActionFail("restore: the backup %s comes without the previous mode, owner and group; nothing written" % backup)

    def _restore(self, args, undo, task_vars):
        """Undo an earlier run from its result: its backups back with the previous mode and owner (the file it manages and
        the others it changed with it), or the file it created removed. Every file is checked first, so that a result
        that names another file writes nothing."""
        # auto: the mode the undone run used (its result says), or the file its result names
        mode = args["mode"]
        if mode == "auto":
            mode = undo.get("mode") if undo.get("mode") in ("merge", "dropin") else \
                "dropin" if str(undo.get("real_path") or "") == args["dropin_path"] else "merge"
        target = args["path"] if mode == "merge" else args["dropin_path"]
        real, st = self._target(target, task_vars)
        undo_path = str(undo.get("real_path") or "")
        if undo_path not in (target, real):
            raise AnsibleActionFail("restore: %s is not %s (or its symlink's target); nothing written" % (undo_path or "(none)", target))
        backup, previous, created = str(undo.get("backup_file") or ""), undo.get("previous"), bool(undo.get("created"))
        self._undo_checked(args, backup, previous)
        others = []
        for other in undo.get("also_changed") or []:
            path = str(other.get("path") or "")
            allowed = path in (args["path"], conf_path(args["path"])) or \
                os.path.dirname(os.path.normpath(path)) == os.path.normpath(args["path"] + ".d")
            other_real = self._target(path, task_vars)[0] if allowed else ""
            # a file the undone run created (file mode's drop-in) is removed; any other comes back from its backup
            made = bool(other.get("created")) and path == conf_path(args["path"]) and not other.get("backup_file")
            if not allowed or str(other.get("real_path") or "") not in (path, other_real) or not (other.get("backup_file") or made):
                raise AnsibleActionFail("restore: %s is not RKE2's config file, one of its drop-ins or the kubelet drop-in of "
                                        "file mode, or comes without its backup; nothing written" % (path or "(none)"))
            if not made:
                self._undo_checked(args, str(other["backup_file"]), other.get("previous"))
            others.append(("" if made else str(other["backup_file"]), other_real, other.get("previous")))
        out = {"changed": False, "restored": "", "removed": "", "also_restored": [], "path": target, "real_path": real}
        files = []
        if backup:
            out.update(restored=real)
            files.append(dict(previous, path=real, backup_file=backup))
        elif created and st is not None:
            out.update(removed=real)
            files.append({"path": real, "backup_file": ""})
        for other_backup, other_real, other_previous in others:
            out["also_restored"].append(other_real if other_backup else other_real + " (removed)")
            files.append(dict(other_previous or {}, path=other_real, backup_file=other_backup))
        if files:
            out["changed"] = True if self._task.check_mode else self._host("restored", files, args, task_vars)["changed"]
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
        rancher = self._module("maitred.rke2_numa.rancher_agent_info", {"root": args["rancher_root"], "config_path": path}, task_vars)
        if args["kubelet_config"] == "file":  # config.yaml is left to its owner: the drop-in carries config-dir
            mode, unmerge = ("merge" if args["mode"] == "merge" else "dropin"), True
        else:
            mode, unmerge, refusal = config_mode(args["mode"], rancher, args["dropin_path"])
            if refusal:
                raise AnsibleActionFail(refusal + ": nothing written")
        target = path if mode == "merge" else args["dropin_path"]
        # every check and read first: a refusal writes nothing
        texts = {}

        def read(p):
            if p not in texts:
                texts[p] = self._read(p, task_vars)
            return texts[p]

        try:
            real, st = self._target(target, task_vars)
            before = self._read(real, task_vars) if st else None
            # the config.yaml.d files RKE2 reads (*.yaml and *.yml, whatever the case), in its order (by name)
            dropins = sorted(self._find(path + ".d", DROPIN_PATTERN, task_vars, follow=True), key=os.path.basename)
            ours = [d for d in dropins if os.path.normpath(d) != os.path.normpath(target) and is_ours(read(d))
                    and self._target(d, task_vars)[0] == d]  # a link of ours is not removed, nor its target
            conf = self._conf_state(args["kubelet_config"], path, read, task_vars)
            new_text, report = plan_write(path, mode, target, before, read, dropins, args["kubelet_args"], args["node_labels"],
                                          args["node_taints"], managed, unmerge=unmerge, ours=ours, conf=conf)
            files = report.pop("files")
            unmerged = report.pop("unmerged")  # config.yaml's text: the join token never goes into the result
            kubelet_conf = report.pop("kubelet_config")
            url = healthz_url(effective_config(files))
            others = [(path, "unmerged", unmerged)] if unmerged is not None else []
            others += [(d, "removed", None) for d in report["removed"]]
            if kubelet_conf["change"] == "written":
                others.append((conf["path"], "kubelet_config", kubelet_conf["text"]))
            elif kubelet_conf["change"] == "removed":
                others.append((conf["path"], "removed", None))
            # file mode's drop-in was looked at by _conf_state already
            others = [(p, change, text, (conf["real"], conf["stat"]) if p == conf["path"] else self._target(p, task_vars))
                      for p, change, text in others]
        except ConfigError as e:
            raise AnsibleActionFail(str(e))

        previous = {"mode": st["mode"], "owner": st["pw_name"], "group": st["gr_name"]} if st else None
        secure = previous == SECURE
        changed = new_text is not None or (st is not None and not secure)
        also = [{"path": p, "real_path": other_real, "change": change, "backup_file": "", "created": other_st is None,
                 "previous": {"mode": other_st["mode"], "owner": other_st["pw_name"], "group": other_st["gr_name"]}
                 if other_st else None}
                for p, change, dummy, (other_real, other_st) in others]
        if (changed or others) and not self._task.check_mode:
            # our file first, then the others; every one backed up before the first write (the other files always: their
            # backup is how they come back; ours with backup, or with other files: how ours comes back)
            files = [{"path": real, "content": before if new_text is None else new_text,
                      "backup": bool(st) and (args["backup"] or bool(also))}] if changed else []
            files += [{"path": entry["real_path"], "content": None if entry["change"] == "removed" else text,
                       "backup": not entry["created"]} for entry, (dummy, dummy2, text, dummy3) in zip(also, others)]
            backups = self._host("written", files, args, task_vars)["backups"]
            if changed and files[0]["backup"]:
                result["backup_file"] = backups[0]
            for entry, backup in zip(also, backups[1 if changed else 0:]):
                entry["backup_file"] = backup
        diffs = []
        if new_text is not None:
            diffs.append({"before": mask(before or ""), "after": mask(new_text), "before_header": real, "after_header": real})
        for entry, (dummy, change, text, dummy2) in zip(also, others):
            old_text = conf["before"] if entry["path"] == conf["path"] else texts.get(entry["path"]) \
                if entry["path"] in texts else self._read(entry["real_path"], task_vars)
            diffs.append({"before": mask(old_text or ""), "after": mask(text or ""), "before_header": entry["real_path"],
                          "after_header": "(removed)" if change == "removed" else entry["real_path"]})
        if diffs and self._task.diff:
            result["diff"] = diffs if len(diffs) > 1 else diffs[0]
        if report.get("normalised"):
            self._display.warning("%s held duplicate managed kubelet flags %s; they are now set once"
                                  % (path, ", ".join(report["normalised"])))
        for warning in report["elsewhere"]:
            self._display.warning(warning)
        result.update(changed=changed or bool(also), path=target, real_path=real,
                      # the kubelet's settings move with file mode's drop-in: RKE2 restarts for it as for ours
                      content_changed=new_text is not None or any(e["path"] == conf["path"] for e in also),
                      kubelet_config=args["kubelet_config"], kubelet_config_path=conf["path"],
                      healthz_url=url,
                      created=changed and st is None,
                      previous=previous, mode=mode, report=report, also_changed=also,
                      managed_by=rancher["managed_by"], rancher_evidence=rancher["evidence"] + rancher["at_work"])
        return result
