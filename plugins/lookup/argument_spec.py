# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""argument_spec: a role's options as its meta/argument_specs.yml declares them (plugin_utils/specs.py)."""

from __future__ import annotations

DOCUMENTATION = r"""
name: argument_spec
author:
  - maitred.rke2_numa contributors (@maitred)
version_added: 0.1.0
short_description: The options of one of the collection's roles, as its argument specs declare them
description:
  - The C(options) of one entry point of a role's C(meta/argument_specs.yml), ready for
    M(ansible.builtin.validate_argument_spec). A role checks the variables of the roles that run after it without
    reading their files itself (the apply chain's preflight checks every role that writes before the first write).
  - Read on the controller from the installed collection; the extension keys C(min) and C(max) are left in (the
    validator ignores them).
options:
  _terms:
    description: The role's name (C(common), C(boot_params), ...).
    type: list
    elements: str
    required: true
  entry_point:
    description: The entry point (C(main), C(release) ...).
    type: str
    default: main
"""

EXAMPLES = r"""
- name: Check the variables of the roles that write, against their argument specs
  ansible.builtin.validate_argument_spec:
    argument_spec: "{{ lookup('maitred.rke2_numa.argument_spec', item) }}"
  loop: [common, boot_params]
"""

RETURN = r"""
_raw:
  description: "One C({option: spec}) mapping per role named."
  type: list
  elements: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import specs


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        entry_point = self.get_option("entry_point")
        found = []
        for role in terms:
            if role not in specs.role_specs():
                raise AnsibleLookupError("argument_spec: %r is not a role of maitred.rke2_numa (%s)" % (role, ", ".join(sorted(specs.role_specs()))))
            try:
                found.append(specs.role_options(role, entry_point))
            except KeyError:
                raise AnsibleLookupError("argument_spec: the role %s has no entry point %r" % (role, entry_point))
        return found
