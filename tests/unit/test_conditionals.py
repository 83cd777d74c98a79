# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every conditional in the collection's and the tests' YAML is a string: an unquoted
`- x is match('a: b')` list item is a YAML mapping, which ansible-core 2.19+ refuses at run
time ("Conditional expressions must be strings") - in a Molecule scenario, minutes in."""

from __future__ import annotations

import glob
import os

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEYS = ("when", "until", "failed_when", "changed_when")
# Files under the folders read below that are legitimately not plain YAML (path from the repo's root ->
# why), so their conditionals are not checked here. Empty today: Jinja templates are *.j2, never *.yml.
NOT_PLAIN_YAML = {}


def _bad(node, where, out):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("assert", "ansible.builtin.assert") and isinstance(value, dict):
                that = value.get("that")
                out += ["%s: assert %r" % (where, c) for c in (that if isinstance(that, list) else [that])
                        if not isinstance(c, str)]
            if key in KEYS:
                out += ["%s: %s %r" % (where, key, c) for c in (value if isinstance(value, list) else [value])
                        if not isinstance(c, (str, bool))]
            _bad(value, where, out)
    elif isinstance(node, list):
        for item in node:
            _bad(item, where, out)


def test_every_conditional_is_a_string():
    paths = [p for d in ("roles", "playbooks", "extensions", "tests/standins")
             for p in glob.glob(os.path.join(REPO, d, "**", "*.yml"), recursive=True)]
    assert len(paths) > 50
    out = []
    unparsed = []
    for path in paths:
        where = os.path.relpath(path, REPO)
        with open(path) as handle:
            try:
                docs = list(yaml.safe_load_all(handle))
            except yaml.YAMLError as exc:
                if where not in NOT_PLAIN_YAML:
                    unparsed.append("%s: %s" % (where, str(exc).splitlines()[0]))
                continue
        if where in NOT_PLAIN_YAML:
            unparsed.append("%s: parses as YAML now; remove it from NOT_PLAIN_YAML" % where)
        _bad(docs, where, out)
    assert unparsed == [], "a YAML file this test cannot read would hide its conditionals"
    assert sorted(NOT_PLAIN_YAML) == sorted(set(NOT_PLAIN_YAML) & {os.path.relpath(p, REPO) for p in paths})
    assert out == []
