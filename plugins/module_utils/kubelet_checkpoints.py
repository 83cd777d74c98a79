# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet's CPU and Memory Manager checkpoints, read and summarised (module_utils: runs on the host).

Used by kubelet_state_info and node_state_info; the controller decides with
plugin_utils/kubelet_state.py whether the kubelet would refuse them. The reset's writes (the
kubelet_checkpoints module) import file_txn inside, so a read compiles none of it.
"""

from __future__ import annotations

import json
import os
import stat

from ansible_collections.maitred.rke2_numa.plugins.module_utils.cpuset import (
    CpusetError,
    format_cpulist,
    parse_cpulist,
)

CPU_STATE = "cpu_manager_state"
MEMORY_STATE = "memory_manager_state"


def _load(path):
    """Return (exists, data or None, error or None)."""
    if not os.path.exists(path):
        return False, None, None
    try:
        with open(path) as f:
            data = json.load(f)
    except (IOError, OSError, ValueError) as e:
        return True, None, "cannot read %s: %s" % (path, e)
    if not isinstance(data, dict) or "policyName" not in data:
        return True, None, "%s is not a kubelet checkpoint (no policyName)" % path
    return True, data, None


def checkpoint_format(data):
    """Which CPU Manager checkpoint the kubelet wrote (pkg/kubelet/cm/cpumanager/state/checkpoint.go): ``v4``
    (CPUManagerCheckpoint of 1.37: the V3 fields inline with checksum 0, and the authoritative ``data`` - the
    serialized CPUManagerCheckpointData - with ``dataChecksum``), ``v3`` (V2 and ``podEntries``, 1.36 with
    PodLevelResourceManagers on), else ``v2`` (``entries`` pod -> container -> cpuset)."""
    if isinstance(data.get("data"), str):
        return "v4"
    return "v3" if "podEntries" in data else "v2"


def cpu_manager(path):
    """The CPU Manager checkpoint, summarised: its policy, default cpuset, the CPUs its containers (``entries``) and
    its pods (``podEntries``, pod-level resource managers: ``{pod uid: {"cpuSet": cpus}}``) hold, and its format. A V4
    checkpoint is read from its ``data``, as the kubelet reads it (CPUManagerCheckpoint.UnmarshalCheckpoint)."""
    exists, data, error = _load(path)
    out = {"path": path, "exists": exists, "valid": data is not None, "policy": None, "default_cpu_set": "",
           "assigned_cpus": "", "entries": {}, "pod_cpus": "", "pod_entries": {}, "format": None, "error": error}
    if data is None:
        return out
    try:
        out["format"] = checkpoint_format(data)
        if out["format"] == "v4":
            try:
                data = json.loads(data["data"])
            except ValueError as e:
                raise TypeError("failed to deserialize cpu manager checkpoint data: %s" % e)
            if not isinstance(data, dict):
                raise TypeError("failed to deserialize cpu manager checkpoint data: not an object")
        assigned, entries = set(), {}
        for pod_uid, containers in (data.get("entries") or {}).items():
            for container, cpus in containers.items():
                cpus = parse_cpulist(cpus)
                assigned.update(cpus)
                entries.setdefault(str(pod_uid), {})[str(container)] = format_cpulist(cpus)
        pods, pod_entries = set(), {}
        for pod_uid, entry in (data.get("podEntries") or {}).items():
            cpus = parse_cpulist((entry or {}).get("cpuSet", ""))
            pods.update(cpus)
            pod_entries[str(pod_uid)] = format_cpulist(cpus)
        out.update(policy=data.get("policyName"), default_cpu_set=format_cpulist(parse_cpulist(data.get("defaultCpuSet", ""))),
                   assigned_cpus=format_cpulist(assigned), entries=entries, pod_cpus=format_cpulist(pods), pod_entries=pod_entries)
    except (CpusetError, AttributeError, TypeError) as e:
        out.update(valid=False, error="%s: %s" % (path, e))
    return out


def memory_manager(path):
    exists, data, error = _load(path)
    out = {"path": path, "exists": exists, "valid": data is not None, "policy": None, "machine_state": None,
           "error": error}
    if data is not None:
        out.update(policy=data["policyName"], machine_state=data.get("machineState") or {})
    return out


def read_checkpoints(kubelet_dir):
    """{"cpu_manager": ..., "memory_manager": ...} as kubelet_state_info returns them."""
    return {"cpu_manager": cpu_manager(os.path.join(kubelet_dir, CPU_STATE)),
            "memory_manager": memory_manager(os.path.join(kubelet_dir, MEMORY_STATE))}


# ---- The reset's transaction: back up and delete, and the way back (the kubelet_checkpoints module).

FILES = (CPU_STATE, MEMORY_STATE)
# Written into each backup folder before any checkpoint is deleted: which checkpoints existed. Restore
# trusts only a folder that has it, and removes a checkpoint only when it says that one did not exist.
MANIFEST = "rke2-numa-checkpoints.json"


class CheckpointError(Exception):
    pass


def _previous(path):
    """The mode and owner a checkpoint has (its backup is 0600: the manifest keeps them)."""
    st = os.stat(path)
    return {"mode": stat.S_IMODE(st.st_mode), "uid": st.st_uid, "gid": st.st_gid}


def backup_and_remove(module, kubelet_dir, backup_dir, stamp):
    """In a new folder <backup_dir>/<stamp> (0700): a 0600 copy of each checkpoint that exists, named as it is, and the
    manifest (which existed, their mode and owner); then the checkpoints are deleted - one FileTransaction: nothing is
    deleted before every copy is written, and a failed delete puts back the ones deleted before it.
    {changed, backup_path, backed_up, removed}."""
    existing = [name for name in FILES if os.path.lexists(os.path.join(kubelet_dir, name))]
    # The folder and its manifest are made even when no checkpoint exists: the way back then removes what
    # the kubelet that failed wrote (the state before was their absence).
    result = {"changed": True, "backup_path": "", "backed_up": [], "removed": [os.path.join(kubelet_dir, n) for n in existing]}
    if module.check_mode:
        return result
    for name in existing:
        if not os.path.isfile(os.path.join(kubelet_dir, name)) or os.path.islink(os.path.join(kubelet_dir, name)):
            raise CheckpointError("%s is not a regular file; nothing was backed up or deleted" % os.path.join(kubelet_dir, name))
    from ansible_collections.maitred.rke2_numa.plugins.module_utils.file_txn import FileTransaction, new_folder  # pylint: disable=import-outside-toplevel

    folder = new_folder(backup_dir, stamp)
    txn = FileTransaction(module, backup_dir=folder, result={"backup_path": folder, "backed_up": result["backed_up"]})
    previous = dict((name, _previous(os.path.join(kubelet_dir, name))) for name in existing)
    for name in existing:
        result["backed_up"].append(txn.backup(os.path.join(kubelet_dir, name), name))
    fd = os.open(os.path.join(folder, MANIFEST), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"kubelet_dir": kubelet_dir, "existed": existing, "previous": previous}, f)
    result["backup_path"] = folder
    for name in existing:
        txn.remove(os.path.join(kubelet_dir, name))
    return result


def _manifest(kubelet_dir, backup_path):
    """The manifest of a backup folder this collection made for ``kubelet_dir``: (existed, previous); refused otherwise."""
    try:
        with open(os.path.join(backup_path, MANIFEST)) as f:
            manifest = json.load(f)
        existed = [name for name in manifest["existed"] if name in FILES]
    except (IOError, OSError, ValueError, KeyError, TypeError) as e:
        raise CheckpointError("%s is not a checkpoint backup of this collection (%s); nothing was restored" % (backup_path, e))
    if os.path.realpath(manifest.get("kubelet_dir") or "") != os.path.realpath(kubelet_dir):
        raise CheckpointError("%s holds the checkpoints of %s, not of %s; nothing was restored"
                              % (backup_path, manifest.get("kubelet_dir"), kubelet_dir))
    missing = [name for name in existed if not os.path.isfile(os.path.join(backup_path, name))]
    if missing:
        raise CheckpointError("%s lacks %s; nothing was restored" % (backup_path, ", ".join(missing)))
    return existed, manifest.get("previous") or {}


def restore(module, kubelet_dir, backup_path):
    """Undo backup_and_remove, as one FileTransaction: each checkpoint it backed up comes back (bytes, mode and owner);
    a checkpoint that did not exist before is removed again (the kubelet that failed wrote it). Only a folder with our
    manifest, for this kubelet_dir, is trusted. {changed, restored, removed}."""
    from ansible_collections.maitred.rke2_numa.plugins.module_utils.file_txn import backup_record, restore_recorded  # pylint: disable=import-outside-toplevel

    existed, previous = _manifest(kubelet_dir, backup_path)
    records = [backup_record(os.path.join(kubelet_dir, name), os.path.join(backup_path, name) if name in existed else "",
                             *((previous.get(name) or {}).get(key) for key in ("mode", "uid", "gid")))
               for name in sorted(FILES, key=lambda name: name not in existed)]  # the backed up first
    changed = restore_recorded(module, records)
    return {"changed": bool(changed), "restored": [r["path"] for r in records if r["path"] in changed and r["data"] is not None],
            "removed": [r["path"] for r in records if r["path"] in changed and r["data"] is None]}
