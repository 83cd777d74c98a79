# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""hostvars as the fleet filters read it (the report, the check's summary and lines, the plan files): once per host
and per run, over every host, so what one read costs is paid a thousand times.

Ansible's ``hostvars[host][name]`` templates the value each time it is read - it walks the whole of a host's topology,
plan and decision (dicts of a few KB) looking for templates: ~2 ms a value, seconds a pass at 1,000 hosts, and the
check made five passes. Those values are facts the collection's actions set and results they returned - data, never
templates (a template from a host's files is not to be rendered anyway). ``facts_view`` reads a host's variables as
they are stored (``HostVars.raw_get``: ~0.4 ms a host) and gives its dicts and lists as they are; a text, a number or
a boolean - an inventory's variable may be a template - through Ansible's templating, as ``hostvars`` would.
A mapping without ``raw_get`` (a dict: report_runs' hostvars of runs read back, the unit tests') is given as it is.
"""

from __future__ import annotations

from collections.abc import Mapping


def facts_view(hostvars):
    """``hostvars`` for reading facts in bulk (see the module's text); a plain mapping as it is."""
    if hostvars is None or isinstance(hostvars, FactsView) or not callable(getattr(hostvars, "raw_get", None)):
        return hostvars
    return FactsView(hostvars)


class FactsView(Mapping):
    """{host: HostFacts} over Ansible's hostvars."""

    def __init__(self, hostvars):
        self._hostvars = hostvars

    def __getitem__(self, host):
        data = self._hostvars.raw_get(host)
        if not isinstance(data, Mapping):   # an undefined host (Ansible's marker): as hostvars says it
            return self._hostvars[host]
        return HostFacts(data, self._hostvars, host)

    def __contains__(self, host):
        return host in self._hostvars

    def __iter__(self):
        return iter(self._hostvars)

    def __len__(self):
        return len(self._hostvars)


class HostFacts(Mapping):
    """One host's variables: dicts and lists as stored, the rest templated (hostvars[host][name])."""

    def __init__(self, data, hostvars, host):
        self._data, self._hostvars, self._host, self._templated = data, hostvars, host, None

    def __getitem__(self, name):
        value = self._data[name]
        if isinstance(value, (dict, list)):
            return value
        if self._templated is None:
            self._templated = self._hostvars[self._host]
        return self._templated[name]

    def __contains__(self, name):
        return name in self._data

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)
