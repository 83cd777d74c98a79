# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel command line arguments: parse, validate and compare them, hugepage pool by pool.

The one home of the kernel arguments the collection owns (MANAGED_KERNEL_ARGS,
imported by the planner) and of the rules every boot method rewrites them by:
the kernel's quoting, what may be written, the hugepage pools, which args are
the collection's (WALK_KINDS: the one table walk_cmdline and the grub_d
drop-in's sh read) and whether the running kernel has the wanted ones. Pure
functions. The boot methods build on them (boot_grub: the grub_d drop-in,
/etc/default/grub, /etc/kernel/cmdline; boot_grubby; boot_transactional),
boot_plan.detect picks one (each method's detect), and the boot_params module reads and writes the files
and runs the commands they compute.

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
  of an unnamed default size that would change is refused (``walk_cmdline``).
* Kernel quoting (``lib/cmdline.c`` ``next_arg``): a double quote toggles
  quoting, whitespace outside quotes separates arguments, the name ends at the
  first ``=``, quotes around the value are not part of it; arguments after a
  bare ``--`` belong to init, not to the kernel.
"""

from __future__ import annotations

import re

from ansible_collections.maitred.rke2_numa.plugins.module_utils.boot_files import CmdlineError

# kernel args the plan owns (boot_params replaces or removes these by name; the
# hugepage ones per pool, see HUGEPAGE_ARGS).
MANAGED_KERNEL_ARGS = ("isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity", "default_hugepagesz", "hugepagesz", "hugepages")

# ----------------------------------------------------------------- the walk's table
#
# How a command line is read and what the walk does with each argument: walk_cmdline reads this table,
# and boot_grub.render_grub_dropin renders the same table as the sh the grub_d drop-in walks
# GRUB_CMDLINE_LINUX and _DEFAULT with (tests/unit/plugins/module_utils/test_cmdline_walk.py runs the
# two side by side on the same lines). A change in a rule is a change here.
#
# Reading (the kernel's lib/cmdline.c next_arg): arguments are separated by WHITESPACE (the kernel's
# isspace) outside QUOTE; a QUOTE toggles quoting and stays in the argument; the name ends at the first
# ``=``; a QUOTE before the name or around the value is not part of either. ESCAPE: backslashes before
# an argument's name are not part of it (an argument escaped in /etc/default/grub).
WHITESPACE = " \t\n\r\v\f"
QUOTE = '"'
ESCAPE = "\\"
# What each argument is, tried in order; an argument no row takes stays where it is.
#   names: its names, ``-`` and ``_`` alike (None: the names ownership() owns by name, in ``full``);
#   pool:  a hugepage arg: it counts only when the collection owns hugepages per pool (ownership()
#          ``hugepages``) and only with a non-empty value; the collection owns it per pool, not by name;
#   sets:  its value is the size the counts after it fill on the old line (the walk's ``ctx``, at first
#          the host's default size: the value of the first "default" argument);
#   drop:  when it is the collection's: "always"; "owned" - the size ``ctx`` is a pool ownership() owns;
#          "default" - the collection replaces the host's default size (ownership() ``default`` or
#          ``defaults``). A dropped "sets" argument leaves the next count without its size on the new
#          line, a kept one gives it (the walk's ``sync``);
#   sized: a kept count whose size the new line does not give gets ``<sized>=<ctx>`` right before it
#          (none known: refused, see walk_cmdline).
WALK_KINDS = (
    {"kind": "by_name", "names": None, "pool": False, "sets": False, "drop": "always", "sized": None},
    {"kind": "default", "names": ("default_hugepagesz",), "pool": True, "sets": True, "drop": "default", "sized": None},
    {"kind": "size", "names": ("hugepagesz",), "pool": True, "sets": True, "drop": "owned", "sized": None},
    {"kind": "count", "names": ("hugepages",), "pool": True, "sets": False, "drop": "owned", "sized": "hugepagesz"},
)
# Hugepage args: owned per pool (size), not by name. A count belongs to the size before it.
HUGEPAGE_ARGS = tuple(n for k in WALK_KINDS if k["pool"] for n in k["names"])
SIZE_ARGS = tuple(n for k in WALK_KINDS if k["pool"] and k["sets"] for n in k["names"])
DEFAULT_KIND = [k for k in WALK_KINDS if k["kind"] == "default"][0]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
# The characters a kernel arg this collection writes may hold (name and value):
# what the managed args use - cpulists ("managed_irq,domain,1-3,5,8-15:2/4"),
# per-node counts ("0:16,1:16"), sizes ("1G"). A whitelist: grub-mkconfig
# sources the drop-in and /etc/default/grub as root, grubby puts the args in
# sed patterns, and whitespace or quotes change how the kernel splits the line.
ARG_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789,-:/._=")
ARG_CHARS_TEXT = "ASCII letters, digits and , - : / . _ ="


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
        if char == QUOTE:
            in_quote = not in_quote
            current.append(char)
        elif char in WHITESPACE and not in_quote:
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
    quoted = token.startswith(QUOTE)
    body = token[1:] if quoted else token
    name, sep, value = body.partition("=")
    if not sep:
        if quoted and name.endswith(QUOTE):
            name = name[:-1]
        return name, None
    if value.startswith(QUOTE):
        value = value[1:]
        if value.endswith(QUOTE):
            value = value[:-1]
    elif quoted and value.endswith(QUOTE):
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


def managed_set(managed):
    return frozenset(norm_name(n) for n in managed)


def kernel_part(tokens):
    """Split tokens at a bare ``--``: (kernel args, the rest for init)."""
    if "--" in tokens:
        i = tokens.index("--")
        return tokens[:i], tokens[i:]
    return list(tokens), []


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
    hugepages = sorted(set(HUGEPAGE_ARGS) & managed_set(out))
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
    if norm_name(name) not in managed_set(managed):
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
        if key in SIZE_ARGS and not (value and _SIZE.fullmatch(value)):
            raise CmdlineError("kernel arg %r: %s=%s is not a size; give it as the kernel does, a number with K, M "
                               "or G (2M, 1G)" % (item, name, value))
        if key == "hugepages" and not any(k in seen for k in SIZE_ARGS):
            raise CmdlineError("kernel arg %r: %s counts pages of the hugepagesz= before it (or of the default size "
                               "when none is before it, which the host's own pools may change); give hugepagesz=<size> "
                               "or default_hugepagesz=<size> before it" % (item, item))
        seen[key] = item
        out.append((name, value))
    return out


def checked(wanted, managed):
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


def norm_arg(token):
    """(normalised name, value) of a token; leading backslashes (ESCAPE) are ignored."""
    name, value = parse_arg(token.lstrip(ESCAPE))
    return norm_name(name), value


def walk_kind(name, value, own):
    """The WALK_KINDS row a token (its normalised name and value) is under ``own`` (ownership), or None."""
    for kind in WALK_KINDS:
        if kind["names"] is None:
            if name in own["full"]:
                return kind
        elif kind["pool"] and own["hugepages"] and value and name in kind["names"]:
            return kind
    return None


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
    """Which arguments of a command line are the collection's, for walk_cmdline.

    ``full``: the managed names owned by name. ``sizes``: the hugepage pools owned - the sizes of the
    wanted pools and of ``previous`` ([(name, value)] hugepage args written before) and ``extra_sizes``.
    ``default``: the size of the wanted ``default_hugepagesz`` (every ``default_hugepagesz=`` is then
    replaced) or None; ``defaults``: other default sizes that are the collection's (written before).
    Hugepage args are handled per pool only when ``hugepagesz`` is managed (validate_names).
    """
    names = managed_set(managed)
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


def walk_cmdline(parts, wanted, own, insert=0, strict=True, check=True):
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
    Each token is read and handled as WALK_KINDS says; the grub_d drop-in (render_grub_dropin) renders
    the same table as POSIX sh.
    """
    hugepages = own["hugepages"]
    first_default = None  # the host's default size: the kernel takes the first default_hugepagesz=
    for part in parts if hugepages else ():
        for token in part:
            name, value = norm_arg(token)
            if walk_kind(name, value, own) is DEFAULT_KIND:
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
    ctx = first_default  # the text of the size the next count applies to on the old line; None: unnamed
    owned = in_default is not None and in_default in own["sizes"]
    want = wanted_strings(wanted)
    want_sized = hugepages and any(norm_name(n) in SIZE_ARGS for n, dummy in wanted)
    new_parts = []
    ours = []
    for index, part in enumerate(parts):
        out = []
        for token in part:
            name, value = norm_arg(token)
            kind = walk_kind(name, value, own)
            if kind is None:
                out.append(token)
                continue
            if kind["sets"]:
                ctx = value
                owned = size_key(value) in own["sizes"]
            drop = kind["drop"]
            if drop == "always" or (drop == "owned" and owned) or (drop == "default" and drops_default(value)):
                ours.append(token)
                if kind["sets"]:
                    sync = False
                continue
            if kind["sets"]:
                sync = True
            elif kind["sized"] and not sync:
                if ctx is None:
                    if strict:
                        raise _unsized(token, own)
                    continue
                sized = "%s=%s" % (kind["sized"], ctx)
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
    (kept,), dummy = walk_cmdline([kernel_part(tokens)[0]], [], own, insert=None, strict=False, check=False)
    return pool_sizes([norm_arg(t) for t in kept if norm_arg(t)[0] in HUGEPAGE_ARGS])


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
    return walk_cmdline([kernel_part(tokens)[0]], [], own, insert=None, strict=False, check=False)[1]


def owned_tokens(tokens, wanted, managed, own=None):
    """The arguments among ``tokens`` that are the collection's (what a rewrite replaces), in order, as
    ``name=value`` strings: managed names, and the hugepage args of the pools ``own`` owns."""
    return [format_arg(*parse_arg(t)) for t in _owned(tokens, wanted, managed, own)]


def groups(pairs):
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
    ours = [norm_arg(t) for t in _owned(running_tokens, wanted, managed, own)]
    return groups(ours) != groups([(norm_name(n), v) for n, v in wanted])


def rewrite_tokens(tokens, wanted, managed, own=None, strict=True, check=False):
    """Drop the collection's args (by name; hugepage args by pool, see ownership), append the wanted
    ones (before a ``--``); every other argument stays, each hugepage count with its size."""
    own = own if own is not None else ownership(wanted, managed)
    kernel, rest = kernel_part(tokens)
    (new,), dummy = walk_cmdline([kernel], wanted, own, strict=strict, check=check)
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
