# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GRUB's boot configuration files and the kernel command line file, rewritten.

The grub_d method (Debian, Ubuntu): the /etc/default/grub.d drop-in, a POSIX sh
walk of GRUB_CMDLINE_LINUX and _DEFAULT, and the static read of those files.
The in-place rewriters of /etc/default/grub (transactional-update) and of
/etc/kernel/cmdline (grubby, transactional-update on BLS). Pure functions.
"""

from __future__ import annotations

import re
import shlex

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import DEFAULT_GRUB, DROPIN, DROPIN_NAME
from ansible_collections.maitred.rke2_numa.plugins.module_utils.kernel_args import (
    DEFAULT_KIND,
    ESCAPE,
    QUOTE,
    SIZE_ARGS,
    WALK_KINDS,
    WHITESPACE,
    CmdlineError,
    checked,
    format_size,
    hugepage_history,
    norm_name,
    owned_tokens,
    ownership,
    parse_arg,
    rewrite_tokens,
    size_spellings,
    split_cmdline,
    walk_cmdline,
    wanted_strings,
)


# ----------------------------------------------------------------- grub_d (Debian, Ubuntu)


def _case_pattern(name):
    """A sh case pattern matching ``name`` with ``-`` and ``_`` alike."""
    return "".join("[_-]" if c in "_-" else c for c in name)


def _size_case(function, keys):
    """A sh function: true when the size in $1 is one of ``keys`` (size_key), whatever its spelling."""
    spellings = [sp for key in sorted(k for k in keys if isinstance(k, int)) for sp in size_spellings(key)]
    body = ['    __rke2_numa_size "$1"']
    if spellings:
        body += ["    case $__rke2_numa_k in", "        %s) return 0 ;;" % "|".join(spellings), "    esac"]
    return ["%s() {" % function] + body + ["    return 1", "}"]


def _sh_chars(chars):
    """Whitespace ``chars`` as a printf format: the drop-in stays plain text, without a literal tab or CR."""
    return "".join({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\v": "\\v", "\f": "\\f"}.get(c, c) for c in chars)


# The drop conditions of WALK_KINDS (kernel_args) in sh: __rke2_numa_o is walk_cmdline's ``owned``;
# __rke2_numa_default is set when the plan replaces the default size (the drop-in is written for
# ownership(wanted, managed): no ``defaults`` written before).
_SH_DROP = {"owned": '[ -n "$__rke2_numa_o" ]', "default": '[ -n "$__rke2_numa_default" ]'}


def _sh_arm(kind, own, order):
    """The walk's case arm for one WALK_KINDS row (its body mirrors walk_cmdline's), or [] when no name is in it."""
    if kind["names"] is None:
        names = sorted(own["full"], key=order.index)
        patterns = "|".join("%s|%s=*" % (_case_pattern(n), _case_pattern(n)) for n in names)
    elif kind["pool"] and own["hugepages"]:
        patterns = "|".join("%s=?*" % _case_pattern(n) for n in kind["names"])  # a non-empty value
    else:
        patterns = ""
    if not patterns:
        return []
    lines = ["            %s)" % patterns]
    if kind["sets"]:
        lines += ["                __rke2_numa_t=$__rke2_numa_v __rke2_numa_o=",
                  '                if __rke2_numa_owned "$__rke2_numa_t"; then __rke2_numa_o=1; fi']
    if kind["drop"] == "always":
        return lines + ["                continue ;;"]
    lines.append("                if %s; then %scontinue; fi" % (_SH_DROP[kind["drop"]], "__rke2_numa_s=; " if kind["sets"] else ""))
    if kind["sets"]:
        lines.append("                __rke2_numa_s=1")
    elif kind["sized"]:
        lines += [
            '                if [ -z "$__rke2_numa_s" ]; then',
            '                    if [ -z "$__rke2_numa_t" ]; then continue; fi',
            "                    __rke2_numa_out=${__rke2_numa_out:+$__rke2_numa_out }%s=$__rke2_numa_t" % kind["sized"],
            "                    __rke2_numa_s=1",
            "                fi",
        ]
    lines[-1] += " ;;"
    return lines


# Reading a line as the kernel does (kernel_args: WHITESPACE, QUOTE, ESCAPE), in POSIX sh: the next
# argument of $__rke2_numa_rest -> __rke2_numa_arg as written, __rke2_numa_nv its name=value (name) with
# the quotes and escapes that are not part of them taken off, __rke2_numa_v its value; false at the end.
_SH_NEXT = r"""__rke2_numa_ws=$(printf '%(ws)s.')
__rke2_numa_ws=${__rke2_numa_ws%%.}
__rke2_numa_next() {
    __rke2_numa_rest=${__rke2_numa_rest#"${__rke2_numa_rest%%%%[!$__rke2_numa_ws]*}"}
    if [ -z "$__rke2_numa_rest" ]; then return 1; fi
    __rke2_numa_arg=
    while :; do
        __rke2_numa_w=${__rke2_numa_rest%%%%[%(q)s$__rke2_numa_ws]*}
        __rke2_numa_arg=$__rke2_numa_arg$__rke2_numa_w
        __rke2_numa_rest=${__rke2_numa_rest#"$__rke2_numa_w"}
        case $__rke2_numa_rest in
            %(q)s*%(q)s*)
                __rke2_numa_rest=${__rke2_numa_rest#%(q)s}
                __rke2_numa_w=${__rke2_numa_rest%%%%%(q)s*}
                __rke2_numa_arg=$__rke2_numa_arg%(q)s$__rke2_numa_w%(q)s
                __rke2_numa_rest=${__rke2_numa_rest#*%(q)s} ;;
            %(q)s*) __rke2_numa_arg=$__rke2_numa_arg$__rke2_numa_rest __rke2_numa_rest= ; break ;;
            *) break ;;
        esac
    done
    __rke2_numa_nv=${__rke2_numa_arg#"${__rke2_numa_arg%%%%[!%(e)s]*}"} __rke2_numa_v= __rke2_numa_q=
    case $__rke2_numa_nv in %(q)s*) __rke2_numa_nv=${__rke2_numa_nv#%(q)s} __rke2_numa_q=1 ;; esac
    case $__rke2_numa_nv in
        *=*)
            __rke2_numa_v=${__rke2_numa_nv#*=}
            case $__rke2_numa_v in
                %(q)s*) __rke2_numa_v=${__rke2_numa_v#%(q)s} ; __rke2_numa_v=${__rke2_numa_v%%%(q)s} ;;
                *) if [ -n "$__rke2_numa_q" ]; then __rke2_numa_v=${__rke2_numa_v%%%(q)s}; fi ;;
            esac
            __rke2_numa_nv=${__rke2_numa_nv%%%%=*}=$__rke2_numa_v ;;
        *) if [ -n "$__rke2_numa_q" ]; then __rke2_numa_nv=${__rke2_numa_nv%%%(q)s}; fi ;;
    esac
}""" % {"ws": _sh_chars(WHITESPACE), "q": "\\" + QUOTE, "e": "\\" + ESCAPE}


def render_grub_dropin(wanted, managed, history=()):
    """The /etc/default/grub.d drop-in (POSIX sh, sourced by grub-mkconfig).

    It removes from GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT, as set by
    /etc/default/grub and the drop-ins before it, the managed arguments by name
    and the hugepage args of the planned pools, and ``default_hugepagesz=`` when
    the plan sets one - walk_cmdline with ownership(wanted), GRUB_CMDLINE_LINUX then
    _DEFAULT as one command line, rendered from the same table (WALK_KINDS, and
    the kernel's reading of quotes) - then appends the wanted ones to
    GRUB_CMDLINE_LINUX (normal and recovery entries). Pools of other sizes stay,
    each count with its size. A count of an unnamed default size that would
    change size is dropped (plan_grub_d refuses such a host first). Safe under
    grub-mkconfig's ``set -e``; no expansion is left unquoted (no globbing, no
    word splitting). ``history``: the hugepage sizes written before
    (hugepage_history), kept in a comment for reboot_required.
    """
    wanted = checked(wanted, managed)
    own = ownership(wanted, managed)
    args = " ".join(wanted_strings(wanted))
    order = [norm_name(n) for n in managed]
    lines = [
        "# Managed by maitred.rke2_numa (module boot_params). Do not edit: changes are overwritten.",
        "# Sourced by grub-mkconfig (update-grub) after /etc/default/grub and the other",
        "# /etc/default/grub.d/*.cfg files. Removes from GRUB_CMDLINE_LINUX and",
        "# GRUB_CMDLINE_LINUX_DEFAULT the kernel arguments the collection manages by name,",
        "# whatever their value, and the hugepage pool of each size it plans (hugepagesz=",
        "# and the hugepages= counts after it; default_hugepagesz= only when it plans one),",
        "# then appends the wanted ones to GRUB_CMDLINE_LINUX. Pools of other sizes stay,",
        "# each count with the size it follows.",
        "# managed: %s" % " ".join(managed),
        ("# hugepage history: " + " ".join(history)).rstrip(),
        "__rke2_numa_args='%s'" % args,
        "# An argument as the kernel reads it (quotes, GRUB's escapes).",
    ] + _SH_NEXT.split("\n")
    functions = ["__rke2_numa_next", "__rke2_numa_walk"]
    variables = ["__rke2_numa_args", "__rke2_numa_ws", "__rke2_numa_rest", "__rke2_numa_arg", "__rke2_numa_w", "__rke2_numa_nv",
                 "__rke2_numa_v", "__rke2_numa_q", "__rke2_numa_out"]
    if own["hugepages"]:
        default = ("'%s'" % format_size(own["default"])) if own["default"] is not None else "''"
        lines += [
            "# Pools: a size as the kernel reads it (memparse) -> __rke2_numa_k.",
            "__rke2_numa_size() {",
            "    __rke2_numa_k=${1%%[!0-9]*}",
            '    __rke2_numa_u=${1#"$__rke2_numa_k"}',
            "    while :; do",
            "        case $__rke2_numa_k in 0?*) __rke2_numa_k=${__rke2_numa_k#0} ;; *) break ;; esac",
            "    done",
            "    case $__rke2_numa_k in '') __rke2_numa_k='?' ; return 0 ;; esac",
            "    case $__rke2_numa_u in",
            "        [Kk]*) __rke2_numa_k=${__rke2_numa_k}K ;; [Mm]*) __rke2_numa_k=${__rke2_numa_k}M ;;",
            "        [Gg]*) __rke2_numa_k=${__rke2_numa_k}G ;; [Tt]*) __rke2_numa_k=${__rke2_numa_k}T ;;",
            "        [Pp]*) __rke2_numa_k=${__rke2_numa_k}P ;; [Ee]*) __rke2_numa_k=${__rke2_numa_k}E ;;",
            "    esac",
            "}",
        ]
        lines += _size_case("__rke2_numa_owned", own["sizes"])
        lines += _size_case("__rke2_numa_isdefault", [own["default"]] if own["default"] is not None else [])
        lines += [
            "__rke2_numa_default=%s" % default,
            "# The host's default size: the first default_hugepagesz=; counts before any size are of it.",
            "__rke2_numa_first() {",
            "    __rke2_numa_rest=$1",
            '    while [ -z "$__rke2_numa_t" ] && __rke2_numa_next; do',
            "        case $__rke2_numa_nv in %s) __rke2_numa_t=$__rke2_numa_v ;; esac"
            % "|".join("%s=?*" % _case_pattern(n) for n in DEFAULT_KIND["names"]),
            "    done",
            "}",
        ]
        functions += ["__rke2_numa_size", "__rke2_numa_owned", "__rke2_numa_isdefault", "__rke2_numa_first"]
        variables += ["__rke2_numa_default", "__rke2_numa_k", "__rke2_numa_u", "__rke2_numa_t", "__rke2_numa_o", "__rke2_numa_s"]
    # t: the size the next count fills on the old line (walk_cmdline's ctx); o: it is ours (owned);
    # s: the new line gives the next count the same size (sync).
    lines += [
        "__rke2_numa_walk() {",
        "    __rke2_numa_out= __rke2_numa_rest=$1",
        "    while __rke2_numa_next; do",
        "        case $__rke2_numa_nv in",
    ]
    for kind in WALK_KINDS:
        lines += _sh_arm(kind, own, order)
    lines += [
        "        esac",
        "        __rke2_numa_out=${__rke2_numa_out:+$__rke2_numa_out }$__rke2_numa_arg",
        "    done",
        "}",
    ]
    if own["hugepages"]:
        lines += [
            "__rke2_numa_t='' __rke2_numa_o='' __rke2_numa_s=1",
            '__rke2_numa_first "$GRUB_CMDLINE_LINUX"',
            '__rke2_numa_first "$GRUB_CMDLINE_LINUX_DEFAULT"',
            'if [ -n "$__rke2_numa_t" ] && __rke2_numa_owned "$__rke2_numa_t"; then __rke2_numa_o=1; fi',
            'if [ -n "$__rke2_numa_default" ]; then',
            "    __rke2_numa_s=",
            '    if [ -n "$__rke2_numa_t" ] && __rke2_numa_isdefault "$__rke2_numa_t"; then __rke2_numa_s=1; fi',
            "fi",
        ]
    lines.append('__rke2_numa_walk "$GRUB_CMDLINE_LINUX"')
    if args:
        lines.append("__rke2_numa_out=${__rke2_numa_out:+$__rke2_numa_out }$__rke2_numa_args")
    lines.append("GRUB_CMDLINE_LINUX=$__rke2_numa_out")
    if own["hugepages"] and any(norm_name(n) in SIZE_ARGS for n, dummy in wanted):
        lines.append("__rke2_numa_s=  # the wanted pool now comes before GRUB_CMDLINE_LINUX_DEFAULT")
    lines += [
        '__rke2_numa_walk "$GRUB_CMDLINE_LINUX_DEFAULT"',
        "GRUB_CMDLINE_LINUX_DEFAULT=$__rke2_numa_out",
        "unset -f " + " ".join(functions),
        "unset " + " ".join(variables),
    ]
    return "\n".join(lines) + "\n"


_DROPIN_ARGS = re.compile(r"^__rke2_numa_args='([^']*)'$", re.M)
_DROPIN_HISTORY = re.compile(r"^# hugepage history:(.*)$", re.M)
_ASSIGN = re.compile(r"^(?P<lead>\s*(?:export\s+)?)(?P<name>GRUB_CMDLINE_LINUX(?:_DEFAULT)?)=(?P<rest>.*)$")
_VALUE = re.compile(r"^(?P<q>[\"']?)(?P<val>.*?)(?P=q)(?P<trail>\s*(?:#.*)?)$")
_VARREF = re.compile(r"\$(?:\{(GRUB_CMDLINE_LINUX(?:_DEFAULT)?)\}|(GRUB_CMDLINE_LINUX(?:_DEFAULT)?)\b)")


def dropin_args(text):
    """The args a drop-in written by render_grub_dropin appends, or None for another file."""
    m = _DROPIN_ARGS.search(text or "")
    return m.group(1).split() if m else None


def dropin_history(text):
    """The hugepage history a drop-in keeps, as [(name, value)]."""
    m = _DROPIN_HISTORY.search(text or "")
    return [parse_arg(a) for a in m.group(1).split()] if m else []


def static_grub_cmdline(files, managed, strict=False):
    """GRUB_CMDLINE_LINUX and _DEFAULT as a static read of the files tells.

    ``files``: texts in the order grub-mkconfig sources them. Simple shell
    assignments only (quotes, ``$GRUB_CMDLINE_LINUX`` references); our own
    drop-in is applied for what it does (walk_cmdline, as its sh does; ``strict``:
    raise where the drop-in would drop a count of an unnamed default size).
    A best effort for reporting and refusing, never used to write anything.
    """
    env = {"GRUB_CMDLINE_LINUX": "", "GRUB_CMDLINE_LINUX_DEFAULT": ""}
    for text in files:
        ours = dropin_args(text)
        if ours is not None:
            wanted = [parse_arg(a) for a in ours]
            parts = [split_cmdline(env["GRUB_CMDLINE_LINUX"]), split_cmdline(env["GRUB_CMDLINE_LINUX_DEFAULT"])]
            (linux, default), dummy = walk_cmdline(parts, wanted, ownership(wanted, managed), strict=strict, check=False)
            env["GRUB_CMDLINE_LINUX"], env["GRUB_CMDLINE_LINUX_DEFAULT"] = " ".join(linux), " ".join(default)
            continue
        for line in (text or "").splitlines():
            m = _ASSIGN.match(line)
            if not m:
                continue
            try:
                parts = shlex.split(m.group("rest"), comments=True)
            except ValueError:
                continue
            value = parts[0] if parts else ""
            env[m.group("name")] = _VARREF.sub(lambda r: env[r.group(1) or r.group(2)], value)
    return env


def _grub_tokens(env):
    return split_cmdline(env["GRUB_CMDLINE_LINUX"] + " " + env["GRUB_CMDLINE_LINUX_DEFAULT"])


def plan_grub_d(default_grub, other_dropins, current, wanted, managed):
    """Debian/Ubuntu: the drop-in's new content, the command, what changes.

    ``default_grub``: /etc/default/grub text or None; ``other_dropins``:
    [(file name, text)] of the other grub.d/*.cfg; ``current``: our drop-in's
    text or None. The drop-in records what the collection owns: its args (the
    pools it planned) and their history; the host's files never hold our args,
    so a pool no longer planned is gone with the old drop-in. Raises
    CmdlineError where the host's line has a count of an unnamed default size
    the plan would change (walk_cmdline).
    """
    previous = [parse_arg(a) for a in dropin_args(current) or []]
    history = hugepage_history(dropin_history(current), previous, wanted)
    after = render_grub_dropin(wanted, managed, history)
    others = [t for dummy, t in sorted(list(other_dropins) + [(DROPIN_NAME, after)])]
    env_after = static_grub_cmdline([default_grub or ""] + others, managed, strict=True)
    sources = [(DROPIN_NAME, current)] if current is not None else []
    sources = sorted(list(other_dropins) + sources)
    env = static_grub_cmdline([default_grub or ""] + [t for dummy, t in sources], managed)
    before = owned_tokens(_grub_tokens(env), wanted, managed, ownership(wanted, managed, previous=previous))
    changed = current != after
    return {
        "files": [{"path": DROPIN, "before": current, "after": after, "mode": 0o644}] if changed else [],
        "commands": [["update-grub"]] if changed else [],
        "locations": [before],
        "after": [_grub_tokens(env_after)],
        "history": [parse_arg(a) for a in history],
    }


# ----------------------------------------------------------------- /etc/default/grub and /etc/kernel/cmdline


def rewrite_default_grub(text, wanted, managed, target="GRUB_CMDLINE_LINUX_DEFAULT", own=None):
    """Rewrite /etc/default/grub: the collection's args (``own``, ownership) out of GRUB_CMDLINE_LINUX
    and _DEFAULT, the wanted ones appended to the last ``target`` assignment (a new line when there is
    none). The assignments are walked as the kernel line they make (GRUB_CMDLINE_LINUX then _DEFAULT), so
    the host's other hugepage pools keep their counts. Lines without the collection's args are left
    byte for byte.

    Raises CmdlineError for an assignment it cannot rewrite safely (multi-line,
    unquoted words, command substitution) and as walk_cmdline does.
    """
    wanted = checked(wanted, managed)
    own = own if own is not None else ownership(wanted, managed)
    lines = (text or "").splitlines(True)
    found = []
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        m = _ASSIGN.match(body)
        if not m:
            continue
        v = _VALUE.match(m.group("rest"))
        val = v.group("val") if v else None
        if v is None or (v.group("q") == "'" and "'" in val) or (not v.group("q") and re.search(r"[\s\"'`$\\]", val)) \
                or (v.group("q") == '"' and re.search(r'(?<!\\)"|`|\$\(', val)):
            raise CmdlineError("%s line %d: cannot rewrite %s safely: %r; make it one quoted line"
                               % (DEFAULT_GRUB, i + 1, m.group("name"), body))
        found.append((i, m, v, line[len(body):]))
    # the kernel line: GRUB_CMDLINE_LINUX, then GRUB_CMDLINE_LINUX_DEFAULT (grub's 10_linux)
    found.sort(key=lambda f: (f[1].group("name") != "GRUB_CMDLINE_LINUX", f[0]))
    targets = [n for n, (dummy, m, dummy2, dummy3) in enumerate(found) if m.group("name") == target]
    parts = [v.group("val").split() for dummy, dummy2, v, dummy3 in found]
    insert = targets[-1] if targets else len(parts)
    new_parts, dummy = walk_cmdline(parts + ([] if targets else [[]]), wanted, own, insert=insert)
    for (i, m, v, eol), tokens, kept in zip(found, parts, new_parts):
        if kept != tokens:
            quote = v.group("q") or '"'
            lines[i] = "%s%s=%s%s%s%s%s" % (m.group("lead"), m.group("name"), quote, " ".join(kept), quote, v.group("trail"), eol)
    out = "".join(lines)
    if not targets and new_parts[-1]:
        if out and not out.endswith("\n"):
            out += "\n"
        out += '%s="%s"\n' % (target, " ".join(new_parts[-1]))
    return out


def default_grub_tokens(text):
    """Tokens of GRUB_CMDLINE_LINUX and _DEFAULT in /etc/default/grub (static read)."""
    return _grub_tokens(static_grub_cmdline([text or ""], ()))


def rewrite_kernel_cmdline(text, wanted, managed, own=None):
    """/etc/kernel/cmdline with the collection's args replaced; unchanged text when nothing changes."""
    tokens = split_cmdline(text)
    new = rewrite_tokens(tokens, checked(wanted, managed), managed, own, check=True)
    if new == tokens:
        return text
    return " ".join(new) + "\n"
