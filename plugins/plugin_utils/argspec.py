# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An action plugin's argument spec, read from its module's DOCUMENTATION.

The options' names, types, choices and defaults live in the documentation
stub only (plugins/modules/<name>.py); the action validates against what
``ansible-doc`` shows, as ansible-creator's action template does.
"""

from __future__ import annotations

import functools

import yaml

# libyaml's safe loader when PyYAML has it, else PyYAML's own: the same documents, ten times faster. Every worker
# Ansible forks for a task of ours reads the specs again (a worker does not keep what it read).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# The keys of a documented option that are also keys of an argument spec
# (ansible.module_utils.common.arg_spec).
_SPEC_KEYS = ("type", "elements", "required", "default", "choices", "aliases", "no_log")


def safe_load(stream):
    """yaml.safe_load, with libyaml's loader when there is one."""
    return yaml.load(stream, Loader=_LOADER)  # nosec B506 - a safe loader (CSafeLoader or SafeLoader)


@functools.lru_cache(maxsize=None)
def doc_options(documentation):
    """The ``options`` of a module's DOCUMENTATION string, parsed once."""
    return safe_load(documentation)["options"]


def argument_spec(documentation, without_choices=(), fragments=()):
    """The argument spec of DOCUMENTATION's options (nested ``suboptions`` included).

    ``without_choices``: options whose choices are checked by the caller itself
    (to give a better message than the generic one); their spec has none.
    ``fragments``: the DOCUMENTATION of doc fragments the module extends, merged as ansible-doc merges them (an option
    both document has the keys of both, the module's winning).
    """
    options = dict(doc_options(documentation))
    for fragment in fragments:
        for name, doc in doc_options(fragment).items():
            options[name] = dict(doc, **options[name]) if name in options else doc
    return _spec(options, frozenset(without_choices))


def options_argument_spec(options, without_choices=()):
    """The argument spec of documented ``options`` ({name: doc}, e.g. a role's argument spec options)."""
    return _spec(options, frozenset(without_choices))


def _spec(options, without_choices):
    spec = {}
    for name, doc in options.items():
        entry = dict((k, doc[k]) for k in _SPEC_KEYS if k in doc)
        if name in without_choices:
            entry.pop("choices", None)
        if "suboptions" in doc:
            entry["options"] = _spec(doc["suboptions"], without_choices)
        spec[name] = entry
    return spec
