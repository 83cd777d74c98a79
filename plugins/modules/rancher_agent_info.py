#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rancher_agent_info
short_description: Tell whether Rancher's system-agent manages this RKE2 node, and whether it is at work
version_added: 0.3.0
description:
  - Looks for the files Rancher leaves on a node it provisions - C(config.yaml.d/50-rancher.yaml) beside RKE2's
    config file (Rancher's RKE2 settings, read after C(config.yaml)), the C(rancher-system-agent) unit, its
    configuration folder C(/etc/rancher/agent), and Rancher's restart stamp for rke2 - and the interlock files the
    agent holds while it applies a plan (C(applyinator-active), C(restart-pending)).
  - Any one of them is evidence. The rke2_config action asks this module in O(maitred.rke2_numa.rke2_config#module:mode=auto);
    M(maitred.rke2_numa.node_state_info) returns the same read.
  - Only looks at whether the files exist (and the interlocks' age); reads no content.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.node
options:
  root:
    description: Where the system's files are (C(/) on a node, a copied tree in tests).
    type: path
    default: /
  config_path:
    description: RKE2's config file; Rancher's file is looked for in C(<config_path>.d).
    type: path
    default: /etc/rancher/rke2/config.yaml
"""

EXAMPLES = r"""
- name: Is the node managed by Rancher?
  maitred.rke2_numa.rancher_agent_info:
  register: __rancher
"""

RETURN = r"""
managed_by:
  description: V(rancher) when any evidence was found, else V(none).
  returned: always
  type: str
  sample: rancher
evidence:
  description: The files found, each with what it is.
  returned: always
  type: list
  elements: str
  sample: ["/etc/rancher/rke2/config.yaml.d/50-rancher.yaml (Rancher's RKE2 settings)"]
at_work:
  description: The system-agent's interlock files present, each with what it means and its age.
  returned: always
  type: list
  elements: str
  sample: ["rancher-system-agent is applying a plan (/var/lib/rancher/agent/interlock/applyinator-active, for 12 s)"]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.maitred.rke2_numa.plugins.module_utils.rancher import read_rancher


def main():
    module = AnsibleModule(argument_spec=dict(root=dict(type="path", default="/"),
                                              config_path=dict(type="path", default="/etc/rancher/rke2/config.yaml")),
                           supports_check_mode=True)
    module.exit_json(changed=False, **read_rancher(module.params["root"], module.params["config_path"]))


if __name__ == "__main__":
    main()
