# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel command line arguments: parse, compare and rewrite them per boot method.

The one home of the kernel arguments the collection owns (MANAGED_KERNEL_ARGS,
imported by the planner) and of how each distribution's boot configuration
holds them. Pure functions: the boot_params module reads and writes the files
and runs the commands these functions compute.

Rules kept here (boot parameters per distribution; "replace earlier values of
managed args; never duplicate them"; the collection owns only the hugepage
size it plans):

* A managed argument is matched by name, whatever its value; the kernel treats
  ``-`` and ``_`` in parameter names alike (``parameq``), so do we.
* Wanted arguments replace every earlier occurrence of their name; managed
  names that are not wanted are removed; every other argument is left as it is.
* Except the hugepage arguments (HUGEPAGE_ARGS), which the kernel takes for
  several sizes side by side (hugetlbpage.rst: ``hugepagesz=2M hugepages=512
  hugepagesz=1G hugepages=0:16,1:16``; a ``hugepages=`` count applies to the
  ``hugepagesz=`` or ``default_hugepagesz=`` it follows, or, before any, to
  the default size). They are owned per pool: the pool of a size the plan has
  (``hugepagesz=`` and the counts after it) or that the collection wrote
  before (``previous``: the boot_params record or the drop-in's args), and
  ``default_hugepagesz=`` only when the plan sets one (or it is the one
  written before). Pools of other sizes and the host's default stay, each
  count with its size: where a removed ``default_hugepagesz=`` or the args
  appended before it would change the size a kept count applies to, the
  count gets its size written out (``hugepagesz=2M hugepages=512``); a count
  of an unnamed default size that would change is refused (``_walk``).
* Kernel quoting (``lib/cmdline.c`` ``next_arg``): a double quote toggles
  quoting, whitespace outside quotes separates arguments, the name ends at the
  first ``=``, quotes around the value are not part of it; arguments after a
  bare ``--`` belong to init, not to the kernel.
"""

from __future__ import annotations

import re
import shlex

# kernel args the plan owns (boot_params replaces or removes these by name; the
# hugepage ones per pool, see HUGEPAGE_ARGS).
MANAGED_KERNEL_ARGS = ("isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity", "default_hugepagesz", "hugepagesz", "hugepages")
# Hugepage args: owned per pool (size), not by name. A count belongs to the size before it.
HUGEPAGE_ARGS = ("default_hugepagesz", "hugepagesz", "hugepages")
_SIZE_ARGS = ("default_hugepagesz", "hugepagesz")

# Paths under the module's root.
PROC_CMDLINE = "proc/cmdline"
PROC_MOUNTS = "proc/mounts"
OS_RELEASE = "etc/os-release"
DEFAULT_GRUB = "etc/default/grub"
GRUB_D = "etc/default/grub.d"
DROPIN_NAME = "99-rke2-numa.cfg"
DROPIN = GRUB_D + "/" + DROPIN_NAME
KERNEL_CMDLINE = "etc/kernel/cmdline"
# What boot_params wrote into a boot configuration it edits in place (grubby,
# transactional-update): the hugepage args, and every hugepage size written so far.
RECORD = "etc/rke2-numa/boot_params.state"
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
    hugepages = sorted(set(HUGEPAGE_ARGS) & _managed_set(out))
    if hugepages and hugepages not in (["hugepages", "hugepagesz"], sorted(HUGEPAGE_ARGS)):
        raise CmdlineError("managed: %s without %s: a hugepages= count belongs to the hugepagesz= before it, so the "
                           "collection manages hugepagesz and hugepages together (and default_hugepagesz only with them)"
                           % (", ".join(hugepages), " and ".join(n for n in ("hugepagesz", "hugepages") if n not in hugepages)))
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
        key = norm_name(name)
        if key in seen:
            raise CmdlineError("kernel arg %r: %s is given twice (%r and %r); give each managed argument once"
                               % (item, name, seen[key], item))
        if key in _SIZE_ARGS and not (value and _SIZE.fullmatch(value)):
            raise CmdlineError("kernel arg %r: %s=%s is not a size; give it as the kernel does, a number with K, M "
                               "or G (2M, 1G)" % (item, name, value))
        if key == "hugepages" and not any(k in seen for k in _SIZE_ARGS):
            raise CmdlineError("kernel arg %r: %s counts pages of the hugepagesz= before it (or of the default size "
                               "when none is before it, which the host's own pools may change); give hugepagesz=<size> "
                               "or default_hugepagesz=<size> before it" % (item, item))
        seen[key] = item
        out.append((name, value))
    return out


def _checked(wanted, managed):
    """``wanted`` as every writer gets it: each (name, value) passed check_kernel_arg again."""
    for name, value in wanted:
        check_kernel_arg(name if value is None else "%s=%s" % (name, value), managed)
    return wanted


def wanted_strings(wanted):
    return [format_arg(n, v) for n, v in wanted]


# ----------------------------------------------------------------- hugepage pools

# memparse suffixes (lib/cmdline.c), any case.
_UNITS = (("E", 1 << 60), ("P", 1 << 50), ("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10), ("", 1))
_SIZE = re.compile(r"[0-9]+[KMGTPEkmgtpe]?")


def size_key(text):
    """A hugepage size as the kernel's memparse reads it: leading digits and a K/M/G/T/P/E suffix (any
    case; the rest is ignored) -> bytes. ``1G``, ``1g``, ``1024M`` and ``1GB`` are the same size; text
    that does not start with a digit is its own key ("?text", never a size)."""
    m = _SIZE.match(text or "")
    if not m:
        return "?" + (text or "")
    digits = m.group(0).rstrip("KMGTPEkmgtpe")
    unit = m.group(0)[len(digits):].upper()
    return int(digits) * dict(_UNITS)[unit]


def format_size(key):
    """Bytes -> the shortest kernel spelling (1073741824 -> 1G)."""
    for unit, mult in _UNITS:
        if key and key % mult == 0:
            return "%d%s" % (key // mult, unit)
    return str(key)


def size_spellings(key):
    """Every spelling of a size as the drop-in normalises one (digits without leading zeros, upper-case unit)."""
    return ["%d%s" % (key // mult, unit) for unit, mult in reversed(_UNITS) if key % mult == 0] if key else ["0"]


def _arg(token):
    """(normalised name, value) of a token; a leading backslash (escaped in /etc/default/grub) is ignored."""
    name, value = parse_arg(token.lstrip("\\"))
    return norm_name(name), value


def pool_sizes(pairs):
    """The pool sizes and the default sizes of hugepage args [(name, value)] -> (sizes, defaults) as size_key keys.

    A pool is a ``hugepagesz=`` or a count after a ``default_hugepagesz=``; a count before any size counts
    pages of an unnamed default size and adds none.
    """
    sizes, defaults = set(), set()
    ctx = None
    for name, value in pairs:
        key = norm_name(name)
        if not value:
            continue
        if key == "hugepagesz":
            ctx = size_key(value)
            sizes.add(ctx)
        elif key == "default_hugepagesz":
            ctx = size_key(value)
            defaults.add(ctx)
        elif key == "hugepages" and ctx is not None:
            sizes.add(ctx)
    return sizes, defaults


def ownership(wanted, managed, previous=(), extra_sizes=(), extra_defaults=()):
    """Which arguments of a command line are the collection's, for _walk.

    ``full``: the managed names owned by name. ``sizes``: the hugepage pools owned - the sizes of the
    wanted pools and of ``previous`` ([(name, value)] hugepage args written before) and ``extra_sizes``.
    ``default``: the size of the wanted ``default_hugepagesz`` (every ``default_hugepagesz=`` is then
    replaced) or None; ``defaults``: other default sizes that are the collection's (written before).
    Hugepage args are handled per pool only when ``hugepagesz`` is managed (validate_names).
    """
    names = _managed_set(managed)
    active = "hugepagesz" in names
    sizes, dummy = pool_sizes(wanted)
    old_sizes, old_defaults = pool_sizes(previous)
    default = [size_key(v) for n, v in wanted if norm_name(n) == "default_hugepagesz" and v]
    return {
        "hugepages": active,
        "full": names - set(HUGEPAGE_ARGS) if active else names,
        "sizes": frozenset(sizes | old_sizes | set(extra_sizes)) if active else frozenset(),
        "default": default[0] if active and default and "default_hugepagesz" in names else None,
        "defaults": frozenset(old_defaults | set(extra_defaults)) if active and "default_hugepagesz" in names else frozenset(),
    }


def _unsized(token, own):
    return CmdlineError(
        "kernel arg %s comes before any hugepagesz=, so it counts pages of the default huge page size, which this "
        "command line does not name (the architecture's: 2M on x86-64); %s would make them pages of another size. "
        "Give that pool its size (hugepagesz=<size> %s) and run again"
        % (token, "the plan's default_hugepagesz=%s" % format_size(own["default"]) if own["default"] is not None
           else "the hugepage args this collection puts before it", token))


def _walk(parts, wanted, own, insert=0, strict=True, check=True):
    """Rewrite a kernel command line given as ``parts`` (token lists the kernel reads one after the
    other: GRUB_CMDLINE_LINUX then _DEFAULT) -> (new parts, the tokens that were the collection's).

    Drops the tokens ``own`` (ownership) says are the collection's and puts the ``wanted`` args after
    part ``insert`` (None: nowhere). Every other token stays where it is, and every kept hugepage count
    keeps its size: the walk follows the size each count applies to on the old line (``ctx``) and
    whether the new line so far gives it the same (``sync``); where not - the ``hugepagesz=`` or
    ``default_hugepagesz=`` before it was dropped, the wanted args came in between, or the default size
    changes under a count before any size - ``hugepagesz=<its size>`` goes right before the count. A
    count of an unnamed default size (no ``default_hugepagesz=`` on the line) that would change size is
    refused (``strict``) or dropped. ``check``: each token it writes passes check_kernel_arg.
    The drop-in (render_grub_dropin) is the same walk in POSIX sh; keep the two alike.
    """
    hugepages = own["hugepages"]
    first_default = None  # the host's default size: the kernel takes the first default_hugepagesz=
    for part in parts if hugepages else ():
        for token in part:
            name, value = _arg(token)
            if name == "default_hugepagesz" and value:
                first_default = value
                break
        if first_default is not None:
            break

    def drops_default(value):
        return own["default"] is not None or size_key(value) in own["defaults"]

    in_default = size_key(first_default) if first_default is not None else None
    if own["default"] is not None:
        out_default = own["default"]
    else:
        out_default = in_default if first_default is not None and not drops_default(first_default) else None
    sync = out_default == in_default
    implicit_owned = in_default is not None and in_default in own["sizes"]
    ctx = None  # the text of the size the next count applies to on the old line; None: the default size
    owned = False
    want = wanted_strings(wanted)
    want_sized = hugepages and any(norm_name(n) in _SIZE_ARGS for n, dummy in wanted)
    new_parts = []
    ours = []
    for index, part in enumerate(parts):
        out = []
        for token in part:
            name, value = _arg(token)
            if name in own["full"]:
                ours.append(token)
                continue
            if hugepages and value and name in _SIZE_ARGS:
                ctx = value
                owned = size_key(value) in own["sizes"]
                if owned if name == "hugepagesz" else drops_default(value):
                    ours.append(token)
                    sync = False
                    continue
                sync = True
            elif hugepages and value and name == "hugepages":
                if owned if ctx is not None else implicit_owned:
                    ours.append(token)
                    continue
                if not sync:
                    size = ctx if ctx is not None else first_default
                    if size is None:
                        if strict:
                            raise _unsized(token, own)
                        continue
                    sized = "hugepagesz=" + size
                    if check:
                        check_kernel_arg(sized, HUGEPAGE_ARGS)
                    out.append(sized)
                    sync = True
            out.append(token)
        if index == insert:
            out.extend(want)
            if want_sized:
                sync = False
        new_parts.append(out)
    return new_parts, ours


def host_pools(tokens, own):
    """The hugepage pool sizes and default sizes a command line keeps that are not the collection's."""
    (kept,), dummy = _walk([_kernel_part(tokens)[0]], [], own, insert=None, strict=False, check=False)
    return pool_sizes([_arg(t) for t in kept if _arg(t)[0] in HUGEPAGE_ARGS])


def running_ownership(wanted, managed, history, after):
    """Ownership for the running command line: the wanted pools, and every hugepage size the collection
    wrote on this host (``history``, [(name, value)]) unless the boot configuration after this run
    (``after``: its command lines as token lists) keeps a pool or default of that size as the host's -
    so a pool the collection removed still needs a reboot while the running kernel has it."""
    base = ownership(wanted, managed)
    sizes, defaults = pool_sizes(history)
    for tokens in after:
        kept_sizes, kept_defaults = host_pools(tokens, base)
        sizes -= kept_sizes
        defaults -= kept_defaults
    return ownership(wanted, managed, extra_sizes=sizes, extra_defaults=defaults)


def hugepage_history(*pair_lists):
    """The sizes in hugepage args [(name, value)] as ``hugepagesz=<size>`` and ``default_hugepagesz=<size>``."""
    sizes, defaults = set(), set()
    for pairs in pair_lists:
        more_sizes, more_defaults = pool_sizes(pairs)
        sizes |= more_sizes
        defaults |= more_defaults
    return (["hugepagesz=" + format_size(k) for k in sorted(k for k in sizes if isinstance(k, int))]
            + ["default_hugepagesz=" + format_size(k) for k in sorted(k for k in defaults if isinstance(k, int))])


# ----------------------------------------------------------------- comparing


def _owned(tokens, wanted, managed, own):
    own = own if own is not None else ownership(wanted, managed)
    return _walk([_kernel_part(tokens)[0]], [], own, insert=None, strict=False, check=False)[1]


def owned_tokens(tokens, wanted, managed, own=None):
    """The arguments among ``tokens`` that are the collection's (what a rewrite replaces), in order, as
    ``name=value`` strings: managed names, and the hugepage args of the pools ``own`` owns."""
    return [format_arg(*parse_arg(t)) for t in _owned(tokens, wanted, managed, own)]


def _groups(pairs):
    """(normalised name, value) pairs -> (the by-name args, the hugepage args), each in order.

    Order matters within each: ``hugepages=`` counts pages of the ``hugepagesz=`` before it. Between the
    two it does not (grubby appends the by-name args after the hugepage ones when it leaves those alone).
    """
    return ([p for p in pairs if p[0] not in HUGEPAGE_ARGS], [p for p in pairs if p[0] in HUGEPAGE_ARGS])


def needs_reboot(running_tokens, wanted, managed, own=None):
    """True when the running command line does not run exactly the wanted args as the collection's own.

    Its args that are the collection's (owned_tokens, with ``own`` - running_ownership - counting the
    pools it wrote before) must be the wanted ones: a wanted arg missing or with another value, a managed
    arg running that is not wanted (a removed pool too), one given twice, or our hugepage args in another
    order (a count on another size) all need a reboot. The host's other pools and default do not.
    """
    ours = [_arg(t) for t in _owned(running_tokens, wanted, managed, own)]
    return _groups(ours) != _groups([(norm_name(n), v) for n, v in wanted])


def rewrite_tokens(tokens, wanted, managed, own=None, strict=True, check=False):
    """Drop the collection's args (by name; hugepage args by pool, see ownership), append the wanted
    ones (before a ``--``); every other argument stays, each hugepage count with its size."""
    own = own if own is not None else ownership(wanted, managed)
    kernel, rest = _kernel_part(tokens)
    (new,), dummy = _walk([kernel], wanted, own, strict=strict, check=check)
    return new + rest


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


def _size_case(function, keys):
    """A sh function: true when the size in $1 is one of ``keys`` (size_key), whatever its spelling."""
    spellings = [sp for key in sorted(k for k in keys if isinstance(k, int)) for sp in size_spellings(key)]
    body = ['    __rke2_numa_size "$1"']
    if spellings:
        body += ["    case $__rke2_numa_k in", "        %s) return 0 ;;" % "|".join(spellings), "    esac"]
    return ["%s() {" % function] + body + ["    return 1", "}"]


def render_grub_dropin(wanted, managed, history=()):
    """The /etc/default/grub.d drop-in (POSIX sh, sourced by grub-mkconfig).

    It removes from GRUB_CMDLINE_LINUX and GRUB_CMDLINE_LINUX_DEFAULT, as set by
    /etc/default/grub and the drop-ins before it, the managed arguments by name
    and the hugepage args of the planned pools, and ``default_hugepagesz=`` when
    the plan sets one - _walk with ownership(wanted), GRUB_CMDLINE_LINUX then
    _DEFAULT as one command line - then appends the wanted ones to
    GRUB_CMDLINE_LINUX (normal and recovery entries). Pools of other sizes stay,
    each count with its size. A count of an unnamed default size that would
    change size is dropped (plan_grub_d refuses such a host first). Safe under
    grub-mkconfig's ``set -e``; globbing is off while it splits the values and
    restored. ``history``: the hugepage sizes written before (hugepage_history),
    kept in a comment for reboot_required.
    """
    wanted = _checked(wanted, managed)
    own = ownership(wanted, managed)
    args = " ".join(wanted_strings(wanted))
    order = [norm_name(n) for n in managed]
    patterns = "|".join(_case_pattern(n) for n in sorted(own["full"], key=order.index))
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
    ]
    walk = [
        "__rke2_numa_walk() {",
        "    __rke2_numa_out=",
        "    for __rke2_numa_arg in $1; do",
        "        case $__rke2_numa_arg in",
    ]
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
        ]
        walk += [
            # c: a size was set on the old line (else counts are of the default size); t: its text;
            # o: it is ours; s: the new line gives the next count the same size.
            "            hugepagesz=?*)",
            "                __rke2_numa_c=1 __rke2_numa_t=${__rke2_numa_arg#*=} __rke2_numa_o='' __rke2_numa_s=1",
            "                if __rke2_numa_owned \"$__rke2_numa_t\"; then __rke2_numa_o=1 __rke2_numa_s=''; continue; fi ;;",
            "            default[_-]hugepagesz=?*)",
            "                __rke2_numa_c=1 __rke2_numa_t=${__rke2_numa_arg#*=} __rke2_numa_o='' __rke2_numa_s=1",
            '                if __rke2_numa_owned "$__rke2_numa_t"; then __rke2_numa_o=1; fi',
            '                if [ -n "$__rke2_numa_default" ]; then __rke2_numa_s=; continue; fi ;;',
            "            hugepages=?*)",
            '                if [ -n "$__rke2_numa_c" ]; then',
            '                    if [ -n "$__rke2_numa_o" ]; then continue; fi',
            '                    if [ -z "$__rke2_numa_s" ]; then',
            "                        __rke2_numa_out=${__rke2_numa_out:+$__rke2_numa_out }hugepagesz=$__rke2_numa_t",
            "                    fi",
            "                else",
            '                    if [ -n "$__rke2_numa_io" ]; then continue; fi',
            '                    if [ -z "$__rke2_numa_s" ]; then',
            '                        if [ -z "$__rke2_numa_it" ]; then continue; fi',
            "                        __rke2_numa_out=${__rke2_numa_out:+$__rke2_numa_out }hugepagesz=$__rke2_numa_it",
            "                    fi",
            "                fi",
            "                __rke2_numa_s=1 ;;",
        ]
    walk += [
        "            *)",
        "                case ${__rke2_numa_arg%%=*} in",
        "                    %s) continue ;;" % (patterns or "__rke2_numa_none"),
        "                esac ;;",
        "        esac",
        "        __rke2_numa_out=${__rke2_numa_out:+$__rke2_numa_out }$__rke2_numa_arg",
        "    done",
        "}",
    ]
    lines += walk
    lines += [
        "case $- in *f*) __rke2_numa_noglob=1 ;; *) __rke2_numa_noglob= ;; esac",
        "set -f",
    ]
    if own["hugepages"]:
        lines += [
            "# The host's default size: the first default_hugepagesz=; counts before any size are of it.",
            "__rke2_numa_it='' __rke2_numa_io='' __rke2_numa_c='' __rke2_numa_t='' __rke2_numa_o='' __rke2_numa_s=1",
            "for __rke2_numa_arg in $GRUB_CMDLINE_LINUX $GRUB_CMDLINE_LINUX_DEFAULT; do",
            "    case $__rke2_numa_arg in default[_-]hugepagesz=?*) __rke2_numa_it=${__rke2_numa_arg#*=}; break ;; esac",
            "done",
            'if [ -n "$__rke2_numa_it" ] && __rke2_numa_owned "$__rke2_numa_it"; then __rke2_numa_io=1; fi',
            'if [ -n "$__rke2_numa_default" ]; then',
            "    __rke2_numa_s=",
            '    if [ -n "$__rke2_numa_it" ] && __rke2_numa_isdefault "$__rke2_numa_it"; then __rke2_numa_s=1; fi',
            "fi",
        ]
    lines += [
        '__rke2_numa_walk "$GRUB_CMDLINE_LINUX"',
        "for __rke2_numa_arg in $__rke2_numa_args; do",
        "    __rke2_numa_out=${__rke2_numa_out:+$__rke2_numa_out }$__rke2_numa_arg",
        "done",
        "GRUB_CMDLINE_LINUX=$__rke2_numa_out",
    ]
    if own["hugepages"] and any(norm_name(n) in _SIZE_ARGS for n, dummy in wanted):
        lines.append("__rke2_numa_s=  # the wanted pool now comes before GRUB_CMDLINE_LINUX_DEFAULT")
    lines += [
        '__rke2_numa_walk "$GRUB_CMDLINE_LINUX_DEFAULT"',
        "GRUB_CMDLINE_LINUX_DEFAULT=$__rke2_numa_out",
        '[ -n "$__rke2_numa_noglob" ] || set +f',
    ]
    if own["hugepages"]:
        lines += [
            "unset -f __rke2_numa_walk __rke2_numa_size __rke2_numa_owned __rke2_numa_isdefault",
            "unset __rke2_numa_args __rke2_numa_out __rke2_numa_arg __rke2_numa_noglob __rke2_numa_default __rke2_numa_k \\",
            "    __rke2_numa_u __rke2_numa_it __rke2_numa_io __rke2_numa_c __rke2_numa_t __rke2_numa_o __rke2_numa_s",
        ]
    else:
        lines += [
            "unset -f __rke2_numa_walk",
            "unset __rke2_numa_args __rke2_numa_out __rke2_numa_arg __rke2_numa_noglob",
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
    drop-in is applied for what it does (_walk, as its sh does; ``strict``:
    raise where the drop-in would drop a count of an unnamed default size).
    A best effort for reporting and refusing, never used to write anything.
    """
    env = {"GRUB_CMDLINE_LINUX": "", "GRUB_CMDLINE_LINUX_DEFAULT": ""}
    for text in files:
        ours = dropin_args(text)
        if ours is not None:
            wanted = [parse_arg(a) for a in ours]
            parts = [split_cmdline(env["GRUB_CMDLINE_LINUX"]), split_cmdline(env["GRUB_CMDLINE_LINUX_DEFAULT"])]
            (linux, default), dummy = _walk(parts, wanted, ownership(wanted, managed), strict=strict, check=False)
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
    the plan would change (_walk).
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
    unquoted words, command substitution) and as _walk does.
    """
    wanted = _checked(wanted, managed)
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
    new_parts, dummy = _walk(parts + ([] if targets else [[]]), wanted, own, insert=insert)
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
    new = rewrite_tokens(tokens, _checked(wanted, managed), managed, own, check=True)
    if new == tokens:
        return text
    return " ".join(new) + "\n"


# ----------------------------------------------------------------- the record (methods that edit in place)


def parse_record(text):
    """The record boot_params keeps at RECORD -> {"written": [(name, value)], "history": [(name, value)]}.

    ``written``: the hugepage args it last put into the boot configuration; ``history``: every hugepage
    size it has put there (hugepage_history). A missing or unreadable record holds nothing.
    """
    out = {"written": [], "history": []}
    for line in (text or "").splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() in out:
            out[key.strip()] = [a for a in (parse_arg(t) for t in value.split()) if norm_name(a[0]) in HUGEPAGE_ARGS]
    return out


def render_record(written, history):
    return "\n".join([
        "# Managed by maitred.rke2_numa (module boot_params). Do not edit.",
        "# written: the hugepage kernel args boot_params last put into this host's boot configuration;",
        "# the next run replaces or removes them (and only them, with the pools of the sizes it plans).",
        "# history: every hugepage size it has put there; reboot_required counts a removed pool while",
        "# the running kernel still has it.",
        "written=" + " ".join(wanted_strings(written)),
        "history=" + " ".join(history),
    ]) + "\n"


def plan_record(record, wanted, managed):
    """For a method that edits the boot configuration in place: (ownership of the collection's args in
    it - the wanted pools and those ``record`` says were written -, the new history as [(name, value)],
    the record's file change or None). No record is created while there is nothing to record."""
    old = parse_record(record)
    own = ownership(wanted, managed, previous=old["written"])
    written = [(n, v) for n, v in wanted if own["hugepages"] and norm_name(n) in HUGEPAGE_ARGS]
    history = hugepage_history(old["history"], old["written"], written)
    text = render_record(written, history)
    change = None
    if text != record and (record is not None or written or history):
        change = {"path": RECORD, "before": record, "after": text, "mode": 0o644}
    return own, [parse_arg(a) for a in history], change


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


def _grubby_job(kernel, target, wanted, own, managed):
    """The grubby --args and --remove-args that turn one entry's args ``kernel`` into ``target``
    (rewrite_tokens), or None when its args already hold the same (_groups).

    By-name args: --args gets the wanted ones (grubby-bls drops every occurrence of each name, any value,
    and appends them in order); --remove-args the bare name of each managed arg that is not wanted or is
    spelled otherwise (grubby matches names literally), and the exact old ``name=value`` token of a
    wanted arg being replaced (for older grubby builds that rewrote only the first occurrence).
    Hugepage args, only when they differ: --args by name would drop every pool, the host's too, so it
    gets them all back - the host's pools as target keeps them, then the wanted ones - and
    --remove-args the names that are left over; otherwise they are not touched.
    """
    names = _managed_set(managed)

    def pairs(tokens):
        return _groups([_arg(t) for t in tokens if _arg(t)[0] in names])

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
    return [t for t in target[:len(target) - len(wanted)] if own["hugepages"] and _arg(t)[0] in HUGEPAGE_ARGS]


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
    _groups order). Otherwise _grubby_job says what grubby needs. One ``--update-kernel=ALL`` command
    when the hugepage args stay as they are, or when every entry keeps the same host hugepage args (the
    usual case: harmless on the entries already right); otherwise one command per entry that needs it
    (``--update-kernel=<index>``), so no entry gets another entry's pools. ``record``: the text of
    RECORD (plan_record).
    """
    wanted = _checked(wanted, managed)
    own, history, record_change = plan_record(record, wanted, managed)
    jobs = []
    kept = []
    locations = []
    for entry in entries:
        if not entry.get("kernel"):
            continue
        kernel = _kernel_part(entry["args"])[0]
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


# ----------------------------------------------------------------- transactional-update (SLE Micro)


def plan_transactional(default_grub, kernel_cmdline, wanted, managed, record=None):
    """SLE Micro / MicroOS: edit the boot configuration in /etc, then stage it.

    With /etc/kernel/cmdline (BLS: systemd-boot or grub2-bls through sdbootutil)
    that file holds the args and ``sdbootutil update-all-entries`` applies it.
    Otherwise GRUB2: the managed args go into GRUB_CMDLINE_LINUX_DEFAULT of
    /etc/default/grub (as transactional-update itself and SUSE's Edge Image
    Builder do) and ``transactional-update --continue grub.cfg`` regenerates
    grub.cfg in a new snapshot that extends a pending one (--continue), active
    after the next reboot. ``record``: the text of RECORD (plan_record).
    """
    wanted = _checked(wanted, managed)
    own, history, record_change = plan_record(record, wanted, managed)
    records = [record_change] if record_change else []
    if kernel_cmdline is not None:
        new = rewrite_kernel_cmdline(kernel_cmdline, wanted, managed, own)
        files = [{"path": KERNEL_CMDLINE, "before": kernel_cmdline, "after": new, "mode": None}] if new != kernel_cmdline else []
        return {
            "files": files + records,
            "commands": [["sdbootutil", "update-all-entries"]] if files else [],
            "locations": [owned_tokens(split_cmdline(kernel_cmdline), wanted, managed, own)],
            "after": [split_cmdline(new)],
            "history": history,
        }
    if default_grub is None:
        raise CmdlineError("transactional_update: neither %s nor %s exists" % (DEFAULT_GRUB, KERNEL_CMDLINE))
    new = rewrite_default_grub(default_grub, wanted, managed, own=own)
    files = [{"path": DEFAULT_GRUB, "before": default_grub, "after": new, "mode": None}] if new != default_grub else []
    return {
        "files": files + records,
        "commands": [["transactional-update", "--continue", "grub.cfg"]] if files else [],
        "locations": [owned_tokens(default_grub_tokens(default_grub), wanted, managed, own)],
        "after": [default_grub_tokens(new)],
        "history": history,
    }
