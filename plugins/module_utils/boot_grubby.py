# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The grubby method (RHEL family): the grubby commands for every kernel entry.

Reads ``grubby --info=ALL``, predicts what ``grubby --update-kernel --args
--remove-args`` makes of each entry, and plans the commands, /etc/kernel/cmdline
and the record. Pure functions: boot_params runs the commands.
"""

from __future__ import annotations

import re

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import KERNEL_CMDLINE
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_grub import rewrite_kernel_cmdline
from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_record import plan_record
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import (
    HUGEPAGE_ARGS,
    CmdlineError,
    check_kernel_arg,
    checked,
    format_arg,
    groups,
    kernel_part,
    managed_set,
    norm_arg,
    norm_name,
    owned_tokens,
    parse_arg,
    rewrite_tokens,
    split_cmdline,
    wanted_strings,
)

# Tokens grubby may get as an exact --remove-args pattern (grubby uses them in
# a sed regular expression).
_GRUBBY_SAFE = re.compile(r"^[A-Za-z0-9_.,:/=@%-]+$")


def parse_grubby_info(text):
    """``grubby --info=ALL`` output -> [{index, kernel, args (tokens), root, initrd, title, id}].

    grubby prints ``key=value`` lines per entry starting with ``index=``; values
    may be double quoted; ``root=`` is taken out of ``args`` and printed alone.
    """
    entries = []
    entry = None
    for line in (text or "").splitlines():
        key, sep, value = line.strip().partition("=")
        if not sep:
            continue
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        if key == "index":
            entry = {"index": int(value) if value.lstrip("-").isdigit() else value}
            entries.append(entry)
        elif entry is not None:
            entry[key] = value
    for entry in entries:
        entry["args"] = split_cmdline(entry.get("args", ""))
    return entries


def grubby_update_args(tokens, add, remove):
    """What ``grubby --update-kernel --args --remove-args`` makes of an entry's args.

    grubby-bls ``update_args``: each --remove-args item with ``=`` removes that
    exact token (first occurrence); a bare name removes every occurrence, bare
    or with any value. Each --args item first removes every occurrence of its
    name (any value), then all --args items are appended in order: ``--args``
    with a new value for an existing name replaces it, and never duplicates it.
    """
    tokens = list(tokens)
    for arg in remove:
        if "=" in arg:
            if arg in tokens:
                tokens.remove(arg)
        else:
            tokens = [t for t in tokens if t != arg and not t.startswith(arg + "=")]
    for arg in add:
        key = arg.rsplit("=", 1)[0] if "=" in arg else arg
        tokens = [t for t in tokens if t != key and not t.startswith(key + "=")]
    return tokens + list(add)


def _grubby_job(kernel, target, wanted, own, managed):
    """The grubby --args and --remove-args that turn one entry's args ``kernel`` into ``target``
    (rewrite_tokens), or None when its args already hold the same (groups).

    By-name args: --args gets the wanted ones (grubby-bls drops every occurrence of each name, any value,
    and appends them in order); --remove-args the bare name of each managed arg that is not wanted or is
    spelled otherwise (grubby matches names literally), and the exact old ``name=value`` token of a
    wanted arg being replaced (for older grubby builds that rewrote only the first occurrence).
    Hugepage args, only when they differ: --args by name would drop every pool, the host's too, so it
    gets them all back - the host's pools as target keeps them, then the wanted ones - and
    --remove-args the names that are left over; otherwise they are not touched.
    """
    names = managed_set(managed)

    def pairs(tokens):
        return groups([norm_arg(t) for t in tokens if norm_arg(t)[0] in names])

    if pairs(kernel) == pairs(target):
        return None
    want = dict((norm_name(n), (n, format_arg(n, v))) for n, v in wanted)
    hugepages = pairs(kernel)[1] != pairs(target)[1]
    if hugepages:
        add = _checked_kept(_grubby_kept(target, wanted, own), managed) + wanted_strings(wanted)
    else:
        add = [format_arg(n, v) for n, v in wanted if not (own["hugepages"] and norm_name(n) in HUGEPAGE_ARGS)]
    added = set(parse_arg(a)[0] for a in add)
    remove = []
    for token in kernel:
        name, value = parse_arg(token)
        key = norm_name(name)
        if key not in names:
            continue
        if own["hugepages"] and key in HUGEPAGE_ARGS:
            if hugepages and name not in added and name not in remove:
                remove.append(name)
        elif key not in want or name != want[key][0]:
            if name not in remove:
                remove.append(name)
        elif format_arg(name, value) != want[key][1] and value is not None and _GRUBBY_SAFE.match(token) and token not in remove:
            remove.append(token)
    return add, remove, hugepages


def _grubby_kept(target, wanted, own):
    """The host's hugepage args ``target`` keeps (before the wanted ones), as grubby must put them back."""
    return [t for t in target[:len(target) - len(wanted)] if own["hugepages"] and norm_arg(t)[0] in HUGEPAGE_ARGS]


def _checked_kept(kept, managed):
    """The host's hugepage args grubby gets in --args: each passes check_kernel_arg (grubby's sed sees them)."""
    for token in kept:
        try:
            check_kernel_arg(token, managed)
        except CmdlineError as e:
            raise CmdlineError("grubby cannot put back the host's hugepage arg %s next to the planned pool: %s" % (token, e))
    return kept


def plan_grubby(entries, kernel_cmdline, wanted, managed, record=None):
    """RHEL family: the grubby commands for the kernel entries, /etc/kernel/cmdline and the record.

    An entry is left alone when its managed args already are what rewrite_tokens makes of them (in
    groups order). Otherwise _grubby_job says what grubby needs. One ``--update-kernel=ALL`` command
    when the hugepage args stay as they are, or when every entry keeps the same host hugepage args (the
    usual case: harmless on the entries already right); otherwise one command per entry that needs it
    (``--update-kernel=<index>``), so no entry gets another entry's pools. ``record``: the text of
    RECORD (plan_record).
    """
    wanted = checked(wanted, managed)
    own, history, record_change = plan_record(record, wanted, managed)
    jobs = []
    kept = []
    locations = []
    for entry in entries:
        if not entry.get("kernel"):
            continue
        kernel = kernel_part(entry["args"])[0]
        target = rewrite_tokens(kernel, wanted, managed, own, check=True)
        locations.append(owned_tokens(kernel, wanted, managed, own))
        kept.append(_grubby_kept(target, wanted, own))
        job = _grubby_job(kernel, target, wanted, own, managed)
        if job:
            jobs.append((entry, job))
    hugepages = any(job[2] for dummy, job in jobs)
    if jobs and (not hugepages or all(k == kept[0] for k in kept)):
        remove = []
        for dummy, (dummy2, job_remove, dummy3) in jobs:
            remove += [r for r in job_remove if r not in remove]
        add = _checked_kept(kept[0], managed) + wanted_strings(wanted) if hugepages else jobs[0][1][0]
        commands = [(None, add, remove)]
    else:
        commands = [(entry["index"], add, remove) for entry, (add, remove, dummy) in jobs]
    predicted = []
    for entry in entries:
        if entry.get("kernel"):
            after = entry["args"]
            for index, add, remove in commands:
                if index is None or index == entry["index"]:
                    after = grubby_update_args(after, add, remove)
            predicted.append((entry, after))
    argvs = []
    for index, add, remove in commands:
        argv = ["grubby", "--update-kernel=%s" % ("ALL" if index is None else index)]
        if add:
            argv.append("--args=" + " ".join(add))
        if remove:
            argv.append("--remove-args=" + " ".join(remove))
        if add or remove:
            argvs.append(argv)
    files = []
    after_lines = [args for dummy, args in predicted]
    if kernel_cmdline is not None:
        locations.append(owned_tokens(split_cmdline(kernel_cmdline), wanted, managed, own))
        new = rewrite_kernel_cmdline(kernel_cmdline, wanted, managed, own)
        after_lines.append(split_cmdline(new))
        if new != kernel_cmdline:
            files.append({"path": KERNEL_CMDLINE, "before": kernel_cmdline, "after": new, "mode": None})
    if record_change:
        files.append(record_change)
    return {
        "files": files,
        "commands": argvs,
        "locations": locations,
        "entries": predicted,
        "after": after_lines,
        "history": history,
    }


def grubby_entries_text(pairs):
    """One ``kernel: args`` line per entry, for diffs."""
    return "".join("%s: %s\n" % (e["kernel"], " ".join(args)) for e, args in pairs)
