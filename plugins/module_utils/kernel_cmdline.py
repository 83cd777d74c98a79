# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel command line arguments: parse, compare and rewrite them per boot method.

The one home of the kernel arguments the collection owns (MANAGED_KERNEL_ARGS,
imported by the planner) and of how each distribution's boot configuration
holds them. Pure functions: the boot_params module reads and writes the files
and runs the commands these functions compute.

Rules kept here (DESIGN.md rule 11, and rule 3: "replace earlier values of
managed args; never duplicate them"):

* A managed argument is matched by name, whatever its value; the kernel treats
  ``-`` and ``_`` in parameter names alike (``parameq``), so do we.
* Wanted arguments replace every earlier occurrence of their name; managed
  names that are not wanted are removed; every other argument is left as it is.
* Kernel quoting (``lib/cmdline.c`` ``next_arg``): a double quote toggles
  quoting, whitespace outside quotes separates arguments, the name ends at the
  first ``=``, quotes around the value are not part of it; arguments after a
  bare ``--`` belong to init, not to the kernel.
"""

from __future__ import annotations

import re
import shlex

# kernel args the plan owns (boot_params replaces or removes these by name).
MANAGED_KERNEL_ARGS = ("isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity", "default_hugepagesz", "hugepagesz", "hugepages")

# Paths under the module's root.
PROC_CMDLINE = "proc/cmdline"
PROC_MOUNTS = "proc/mounts"
OS_RELEASE = "etc/os-release"
DEFAULT_GRUB = "etc/default/grub"
GRUB_D = "etc/default/grub.d"
DROPIN_NAME = "99-rke2-numa.cfg"
DROPIN = GRUB_D + "/" + DROPIN_NAME
KERNEL_CMDLINE = "etc/kernel/cmdline"
TRANSACTIONAL_UPDATE = "usr/sbin/transactional-update"

METHODS = ("grub_d", "grubby", "transactional_update")

# os-release ID (or an ID_LIKE entry) -> method. SUSE IDs not listed here use
# transactional_update only on a transactional system (see detect_method).
DISTRO_METHODS = (
    ("debian", "grub_d"),
    ("ubuntu", "grub_d"),
    ("rhel", "grubby"),
    ("centos", "grubby"),
    ("rocky", "grubby"),
    ("almalinux", "grubby"),
    ("fedora", "grubby"),
    ("sle-micro", "transactional_update"),
    ("sl-micro", "transactional_update"),
    ("opensuse-microos", "transactional_update"),
    ("opensuse-leap-micro", "transactional_update"),
)
SUSE_FAMILY = ("suse", "sles", "opensuse")

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
# The characters a kernel arg this collection writes may hold (name and value):
# what the managed args use - cpulists ("managed_irq,domain,1-3,5,8-15:2/4"),
# per-node counts ("0:16,1:16"), sizes ("1G"). A whitelist: grub-mkconfig
# sources the drop-in and /etc/default/grub as root, grubby puts the args in
# sed patterns, and whitespace or quotes change how the kernel splits the line.
ARG_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789,-:/._=")
ARG_CHARS_TEXT = "ASCII letters, digits and , - : / . _ ="
# Tokens grubby may get as an exact --remove-args pattern (grubby uses them in
# a sed regular expression).
_GRUBBY_SAFE = re.compile(r"^[A-Za-z0-9_.,:/=@%-]+$")


class CmdlineError(ValueError):
    """Invalid input, or a boot configuration this module cannot rewrite safely."""


# ----------------------------------------------------------------- parsing


def split_cmdline(text):
    """Split a kernel command line into its argument tokens, as the kernel does.

    A double quote toggles quoting (the quotes stay in the token), whitespace
    outside quotes separates tokens. ``foo="a b" bar`` -> ``['foo="a b"', 'bar']``.
    """
    tokens = []
    current = []
    in_quote = False
    for char in text or "":
        if char == '"':
            in_quote = not in_quote
            current.append(char)
        elif char.isspace() and not in_quote:
            if current:
                tokens.append("".join(current))
                current = []
        else:
            current.append(char)
    if current:
        tokens.append("".join(current))
    return tokens


def parse_arg(token):
    """Return ``(name, value)`` of one token; value is None for a bare flag.

    Quotes are removed as the kernel's ``next_arg`` removes them:
    ``foo="a b"`` -> ``('foo', 'a b')``, ``"foo=a b"`` -> ``('foo', 'a b')``.
    """
    quoted = token.startswith('"')
    body = token[1:] if quoted else token
    name, sep, value = body.partition("=")
    if not sep:
        if quoted and name.endswith('"'):
            name = name[:-1]
        return name, None
    if value.startswith('"'):
        value = value[1:]
        if value.endswith('"'):
            value = value[:-1]
    elif quoted and value.endswith('"'):
        value = value[:-1]
    return name, value


def format_arg(name, value):
    """``name=value``, ``name`` for a flag; values with whitespace are quoted."""
    if value is None:
        return name
    if any(c.isspace() for c in value):
        return '%s="%s"' % (name, value)
    return "%s=%s" % (name, value)


def norm_name(name):
    """Parameter names compare with ``-`` and ``_`` alike (kernel ``parameq``)."""
    return name.replace("-", "_")


def _managed_set(managed):
    return frozenset(norm_name(n) for n in managed)


def _kernel_part(tokens):
    """Split tokens at a bare ``--``: (kernel args, the rest for init)."""
    if "--" in tokens:
        i = tokens.index("--")
        return tokens[:i], tokens[i:]
    return list(tokens), []


def managed_tokens(tokens, managed):
    """The managed arguments among ``tokens``, in order, as ``name=value`` strings."""
    names = _managed_set(managed)
    out = []
    for token in _kernel_part(tokens)[0]:
        name, value = parse_arg(token)
        if norm_name(name) in names:
            out.append(format_arg(name, value))
    return out


def values_by_name(tokens, managed):
    """{normalised managed name: [value, ...]} in command line order (None for a flag)."""
    names = _managed_set(managed)
    out = {}
    for token in _kernel_part(tokens)[0]:
        name, value = parse_arg(token)
        if norm_name(name) in names:
            out.setdefault(norm_name(name), []).append(value)
    return out


def parse_os_release(text):
    """os-release KEY=value lines (shell quoting) -> dict."""
    out = {}
    for line in (text or "").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, dummy, value = line.partition("=")
        try:
            parts = shlex.split(value)
        except ValueError:
            continue
        out[key.strip()] = parts[0] if parts else ""
    return out


def is_transactional(mounts_text, has_transactional_update):
    """A transactional system: transactional-update installed and / a read-only btrfs.

    The same test community.general's zypper module uses.
    """
    if not has_transactional_update:
        return False
    for line in (mounts_text or "").splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[1] == "/":
            return fields[2] == "btrfs" and "ro" in fields[3].split(",")
    return False


def detect_method(os_release, transactional):
    """Boot method for an os-release dict; raises CmdlineError naming an unsupported distro."""
    distro = os_release.get("ID", "")
    like = os_release.get("ID_LIKE", "").split()
    known = dict(DISTRO_METHODS)
    if distro in known:
        return known[distro]
    if transactional and any(i == f or i.startswith(f + "-") for i in [distro] + like for f in SUSE_FAMILY):
        return "transactional_update"
    for other in like:
        if other in known and known[other] != "transactional_update":
            return known[other]
    supported = {}
    for name, method in DISTRO_METHODS:
        supported.setdefault(method, []).append(name)
    raise CmdlineError(
        "unsupported distribution: os-release ID=%r (ID_LIKE=%r). Supported: %s (grub_d); %s (grubby); %s and any "
        "transactional SUSE system (transactional_update). Set method to choose one explicitly."
        % (distro, " ".join(like), ", ".join(supported["grub_d"]), ", ".join(supported["grubby"]),
           ", ".join(supported["transactional_update"])))


# ----------------------------------------------------------------- validation


def validate_names(managed):
    """The ``managed`` option: non-empty kernel parameter names."""
    out = []
    for name in managed or ():
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise CmdlineError("managed: %r is not a kernel parameter name" % (name,))
        out.append(name)
    if not out:
        raise CmdlineError("managed: the list of managed kernel argument names is empty")
    return out


def check_kernel_arg(item, managed):
    """The one rule for what may reach a boot configuration file: ``name=value`` or ``name`` -> (name, value).

    Only the characters of ARG_CHARS, a kernel parameter name that is one of
    ``managed`` (``-`` and ``_`` alike), a non-empty value after ``=``.
    Raises CmdlineError naming the arg and the first character refused.
    """
    if not isinstance(item, str) or not item:
        raise CmdlineError("kernel arg %r is not a name=value string" % (item,))
    for char in item:
        if char not in ARG_CHARS:
            raise CmdlineError("kernel arg %r: character %r is not allowed; kernel args hold only %s (the boot "
                               "configuration is sourced as shell by root)" % (item, char, ARG_CHARS_TEXT))
    name, sep, value = item.partition("=")
    if not _NAME.fullmatch(name):
        raise CmdlineError("kernel arg %r does not start with a kernel parameter name" % item)
    if sep and not value:
        raise CmdlineError("kernel arg %r has an empty value; give name=value or the bare flag %s" % (item, name))
    if norm_name(name) not in _managed_set(managed):
        raise CmdlineError("kernel arg %r: %s is not a kernel argument this collection manages (managed: %s)"
                           % (item, name, ", ".join(managed)))
    return name, (value if sep else None)


def validate_args(args, managed):
    """The ``args`` option -> [(name, value)]; raises CmdlineError naming the bad item.

    Each item passes check_kernel_arg, and each name appears once.
    """
    out = []
    seen = {}
    for item in args or ():
        name, value = check_kernel_arg(item, managed)
        if norm_name(name) in seen:
            raise CmdlineError("kernel arg %r: %s is given twice (%r and %r); give each managed argument once"
                               % (item, name, seen[norm_name(name)], item))
        seen[norm_name(name)] = item
        out.append((name, value))
    return out


def _checked(wanted, managed):
    """``wanted`` as every writer gets it: each (name, value) passed check_kernel_arg again."""
    for name, value in wanted:
        check_kernel_arg(name if value is None else "%s=%s" % (name, value), managed)
    return wanted


# ----------------------------------------------------------------- comparing


def wanted_strings(wanted):
    return [format_arg(n, v) for n, v in wanted]


def _pairs(tokens, managed):
    """Managed (normalised name, value) pairs in command line order."""
    names = _managed_set(managed)
    out = []
    for token in _kernel_part(tokens)[0]:
        name, value = parse_arg(token)
        if norm_name(name) in names:
            out.append((norm_name(name), value))
    return out


def in_order(tokens, wanted, managed):
    """Whether ``tokens`` hold exactly the wanted managed args, each once, in the wanted order.

    Order matters: ``hugepages=`` counts pages of the ``hugepagesz=`` before it.
    Other arguments between them do not matter, nor ``-`` versus ``_`` in names.
    """
    return _pairs(tokens, managed) == [(norm_name(n), v) for n, v in wanted]


def needs_reboot(running_tokens, wanted, managed):
    """True when the running command line is not exactly the wanted managed args.

    A wanted arg missing or with another value, a managed arg running that is
    not wanted, one given twice, or the managed args in another order (as
    every method writes them in the wanted order) all need a reboot.
    """
    return not in_order(running_tokens, wanted, managed)


def rewrite_tokens(tokens, wanted, managed):
    """Drop every managed argument, append the wanted ones (before a ``--``)."""
    names = _managed_set(managed)
    kernel, rest = _kernel_part(tokens)
    kept = [t for t in kernel if norm_name(parse_arg(t)[0]) not in names]
    return kept + wanted_strings(wanted) + rest


def added_removed(locations, wanted):
    """What a change adds and removes, over boot config locations.

    ``locations`` are lists of managed ``name=value`` strings as the boot
    configuration holds them now (one per kernel entry or file). ``added``:
    wanted args missing from at least one location; ``removed``: managed args
    present somewhere that are not wanted (stale names and replaced values).
    """
    want = wanted_strings(wanted)
    added = [w for w in want if any(w not in loc for loc in locations)]
    removed = []
    for loc in locations:
        for arg in loc:
            if arg not in want and arg not in removed:
                removed.append(arg)
    return added, removed


# ----------------------------------------------------------------- grub_d (Debian, Ubuntu)


def _case_pattern(name):
    """A sh case pattern matching ``name`` with ``-`` and ``_`` alike."""
    return "".join("[_-]" if c in "_-" else c for c in name)


def render_grub_dropin(wanted, managed):
    """The /etc/default/grub.d drop-in (POSIX sh, sourced by grub-mkconfig).

    It removes every managed argument, by name, from GRUB_CMDLINE_LINUX and
    GRUB_CMDLINE_LINUX_DEFAULT as set by /etc/default/grub and the drop-ins
    before it, then appends the wanted ones to GRUB_CMDLINE_LINUX (normal and
    recovery entries). Globbing is off while it splits the values and restored.
    """
    args = " ".join(wanted_strings(_checked(wanted, managed)))
    patterns = "|".join(_case_pattern(n) for n in managed)
    lines = [
        "# Managed by maitred.rke2_numa (module boot_params). Do not edit: changes are overwritten.",
        "# Sourced by grub-mkconfig (update-grub) after /etc/default/grub and the other",
        "# /etc/default/grub.d/*.cfg files. Removes the kernel arguments the collection",
        "# manages from GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT, by name and",
        "# whatever their value, then appends the wanted ones to GRUB_CMDLINE_LINUX.",
        "# managed: %s" % " ".join(managed),
        "__rke2_numa_args='%s'" % args,
        "__rke2_numa_rewrite() {",
        "    __rke2_numa_out=",
        "    for __rke2_numa_arg in $1; do",
        "        case ${__rke2_numa_arg%%=*} in",
        "            %s) ;;" % patterns,
        "            *) __rke2_numa_out=${__rke2_numa_out:+$__rke2_numa_out }$__rke2_numa_arg ;;",
        "        esac",
        "    done",
        "    for __rke2_numa_arg in $2; do",
        "        __rke2_numa_out=${__rke2_numa_out:+$__rke2_numa_out }$__rke2_numa_arg",
        "    done",
        "}",
        "case $- in *f*) __rke2_numa_noglob=1 ;; *) __rke2_numa_noglob= ;; esac",
        "set -f",
        '__rke2_numa_rewrite "$GRUB_CMDLINE_LINUX" "$__rke2_numa_args"',
        "GRUB_CMDLINE_LINUX=$__rke2_numa_out",
        '__rke2_numa_rewrite "$GRUB_CMDLINE_LINUX_DEFAULT" ""',
        "GRUB_CMDLINE_LINUX_DEFAULT=$__rke2_numa_out",
        '[ -n "$__rke2_numa_noglob" ] || set +f',
        "unset -f __rke2_numa_rewrite",
        "unset __rke2_numa_args __rke2_numa_out __rke2_numa_arg __rke2_numa_noglob",
    ]
    return "\n".join(lines) + "\n"


_DROPIN_ARGS = re.compile(r"^__rke2_numa_args='([^']*)'$", re.M)
_ASSIGN = re.compile(r"^(?P<lead>\s*(?:export\s+)?)(?P<name>GRUB_CMDLINE_LINUX(?:_DEFAULT)?)=(?P<rest>.*)$")
_VALUE = re.compile(r"^(?P<q>[\"']?)(?P<val>.*?)(?P=q)(?P<trail>\s*(?:#.*)?)$")
_VARREF = re.compile(r"\$(?:\{(GRUB_CMDLINE_LINUX(?:_DEFAULT)?)\}|(GRUB_CMDLINE_LINUX(?:_DEFAULT)?)\b)")


def dropin_args(text):
    """The args a drop-in written by render_grub_dropin appends, or None for another file."""
    m = _DROPIN_ARGS.search(text or "")
    return m.group(1).split() if m else None


def static_grub_cmdline(files, managed):
    """GRUB_CMDLINE_LINUX and _DEFAULT as a static read of the files tells.

    ``files``: texts in the order grub-mkconfig sources them. Simple shell
    assignments only (quotes, ``$GRUB_CMDLINE_LINUX`` references); our own
    drop-in is applied for what it does. A best effort for reporting, never
    used to write anything.
    """
    env = {"GRUB_CMDLINE_LINUX": "", "GRUB_CMDLINE_LINUX_DEFAULT": ""}
    for text in files:
        ours = dropin_args(text)
        if ours is not None:
            wanted = [parse_arg(a) for a in ours]
            env["GRUB_CMDLINE_LINUX"] = " ".join(rewrite_tokens(split_cmdline(env["GRUB_CMDLINE_LINUX"]), wanted, managed))
            env["GRUB_CMDLINE_LINUX_DEFAULT"] = " ".join(rewrite_tokens(split_cmdline(env["GRUB_CMDLINE_LINUX_DEFAULT"]), [], managed))
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


def plan_grub_d(default_grub, other_dropins, current, wanted, managed):
    """Debian/Ubuntu: the drop-in's new content, the command, what changes.

    ``default_grub``: /etc/default/grub text or None; ``other_dropins``:
    [(file name, text)] of the other grub.d/*.cfg; ``current``: our drop-in's
    text or None.
    """
    after = render_grub_dropin(wanted, managed)
    sources = [(DROPIN_NAME, current)] if current is not None else []
    sources = sorted(list(other_dropins) + sources)
    env = static_grub_cmdline([default_grub or ""] + [t for dummy, t in sources], managed)
    before = managed_tokens(split_cmdline(env["GRUB_CMDLINE_LINUX"] + " " + env["GRUB_CMDLINE_LINUX_DEFAULT"]), managed)
    changed = current != after
    return {
        "files": [{"path": DROPIN, "before": current, "after": after, "mode": 0o644}] if changed else [],
        "commands": [["update-grub"]] if changed else [],
        "locations": [before],
    }


# ----------------------------------------------------------------- /etc/default/grub and /etc/kernel/cmdline


def _token_name(token):
    return norm_name(parse_arg(token.lstrip("\\"))[0])


def rewrite_default_grub(text, wanted, managed, target="GRUB_CMDLINE_LINUX_DEFAULT"):
    """Rewrite /etc/default/grub: managed args out of GRUB_CMDLINE_LINUX and _DEFAULT,
    the wanted ones appended to the last ``target`` assignment (a new line when
    there is none). Lines without managed args are left byte for byte.

    Raises CmdlineError for an assignment it cannot rewrite safely (multi-line,
    unquoted words, command substitution).
    """
    names = _managed_set(managed)
    wanted = _checked(wanted, managed)
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
    targets = [i for i, m, dummy, dummy2 in found if m.group("name") == target]
    target_line = targets[-1] if targets else None
    for i, m, v, eol in found:
        tokens = v.group("val").split()
        kept = [t for t in tokens if _token_name(t) not in names]
        if i == target_line:
            kept += wanted_strings(wanted)
        if kept != tokens:
            quote = v.group("q") or '"'
            lines[i] = "%s%s=%s%s%s%s%s" % (m.group("lead"), m.group("name"), quote, " ".join(kept), quote, v.group("trail"), eol)
    out = "".join(lines)
    if target_line is None and wanted:
        if out and not out.endswith("\n"):
            out += "\n"
        out += '%s="%s"\n' % (target, " ".join(wanted_strings(wanted)))
    return out


def default_grub_tokens(text):
    """Tokens of GRUB_CMDLINE_LINUX and _DEFAULT in /etc/default/grub (static read)."""
    env = static_grub_cmdline([text or ""], ())
    return split_cmdline(env["GRUB_CMDLINE_LINUX"] + " " + env["GRUB_CMDLINE_LINUX_DEFAULT"])


def rewrite_kernel_cmdline(text, wanted, managed):
    """/etc/kernel/cmdline with the managed args replaced; unchanged text when nothing changes."""
    tokens = split_cmdline(text)
    new = rewrite_tokens(tokens, _checked(wanted, managed), managed)
    if new == tokens:
        return text
    return " ".join(new) + "\n"


# ----------------------------------------------------------------- grubby (RHEL family)


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


def plan_grubby(entries, kernel_cmdline, wanted, managed):
    """RHEL family: the grubby command for every kernel entry, and /etc/kernel/cmdline.

    An entry is left alone when its managed args are exactly the wanted ones
    in order (in_order). Otherwise --args gets every wanted arg, in order:
    grubby-bls drops every occurrence of each --args name (any value) and
    appends them all, so the managed args end up once each, together and in
    the wanted order (``hugepages=`` after its ``hugepagesz=``), like the other
    methods write them. --remove-args gets the bare name of each managed arg
    that is not wanted or is spelled otherwise (``nohz-full``: grubby matches
    names literally), which drops every value of it, and the exact old
    ``name=value`` token of a wanted arg being replaced: current grubby-bls
    already drops it through --args; the explicit token also covers older
    grubby builds that only rewrote the first ``name=`` occurrence.
    """
    names = _managed_set(managed)
    want = dict((norm_name(n), (n, format_arg(n, v))) for n, v in _checked(wanted, managed))
    add = []
    remove = []

    def put(lst, item):
        if item not in lst:
            lst.append(item)

    locations = []
    predicted = []
    for entry in entries:
        if not entry.get("kernel"):
            continue
        locations.append(managed_tokens(entry["args"], managed))
        if in_order(entry["args"], wanted, managed):
            continue
        for dummy, arg in want.values():
            put(add, arg)
        for token in _kernel_part(entry["args"])[0]:
            name, value = parse_arg(token)
            key = norm_name(name)
            if key not in names:
                continue
            if key not in want or name != want[key][0]:
                put(remove, name)
            elif format_arg(name, value) != want[key][1] and value is not None and _GRUBBY_SAFE.match(token):
                put(remove, token)
    for entry in entries:
        if entry.get("kernel"):
            after = grubby_update_args(entry["args"], add, remove) if add or remove else entry["args"]
            predicted.append((entry, after))
    command = []
    if add or remove:
        command = ["grubby", "--update-kernel=ALL"]
        if add:
            command.append("--args=" + " ".join(add))
        if remove:
            command.append("--remove-args=" + " ".join(remove))
    files = []
    if kernel_cmdline is not None:
        locations.append(managed_tokens(split_cmdline(kernel_cmdline), managed))
        new = rewrite_kernel_cmdline(kernel_cmdline, wanted, managed)
        if new != kernel_cmdline:
            files.append({"path": KERNEL_CMDLINE, "before": kernel_cmdline, "after": new, "mode": None})
    return {
        "files": files,
        "commands": [command] if command else [],
        "locations": locations,
        "entries": predicted,
    }


def grubby_entries_text(pairs):
    """One ``kernel: args`` line per entry, for diffs."""
    return "".join("%s: %s\n" % (e["kernel"], " ".join(args)) for e, args in pairs)


# ----------------------------------------------------------------- transactional-update (SLE Micro)


def plan_transactional(default_grub, kernel_cmdline, wanted, managed):
    """SLE Micro / MicroOS: edit the boot configuration in /etc, then stage it.

    With /etc/kernel/cmdline (BLS: systemd-boot or grub2-bls through sdbootutil)
    that file holds the args and ``sdbootutil update-all-entries`` applies it.
    Otherwise GRUB2: the managed args go into GRUB_CMDLINE_LINUX_DEFAULT of
    /etc/default/grub (as transactional-update itself and SUSE's Edge Image
    Builder do) and ``transactional-update --continue grub.cfg`` regenerates
    grub.cfg in a new snapshot that extends a pending one (--continue), active
    after the next reboot.
    """
    if kernel_cmdline is not None:
        new = rewrite_kernel_cmdline(kernel_cmdline, wanted, managed)
        files = [{"path": KERNEL_CMDLINE, "before": kernel_cmdline, "after": new, "mode": None}] if new != kernel_cmdline else []
        return {
            "files": files,
            "commands": [["sdbootutil", "update-all-entries"]] if files else [],
            "locations": [managed_tokens(split_cmdline(kernel_cmdline), managed)],
        }
    if default_grub is None:
        raise CmdlineError("transactional_update: neither %s nor %s exists" % (DEFAULT_GRUB, KERNEL_CMDLINE))
    new = rewrite_default_grub(default_grub, wanted, managed)
    files = [{"path": DEFAULT_GRUB, "before": default_grub, "after": new, "mode": None}] if new != default_grub else []
    return {
        "files": files,
        "commands": [["transactional-update", "--continue", "grub.cfg"]] if files else [],
        "locations": [managed_tokens(default_grub_tokens(default_grub), managed)],
    }
