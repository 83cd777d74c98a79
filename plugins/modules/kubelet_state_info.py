#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kubelet_state_info
short_description: Read the kubelet's CPU and Memory Manager checkpoints
version_added: 0.1.0
description:
  - Reads C(cpu_manager_state) and C(memory_manager_state) from the kubelet's root
    directory and returns them parsed, so the controller can decide whether the
    kubelet would refuse them with a new configuration.
  - Only reads; a missing checkpoint is reported as such, an unreadable one as not valid.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.node
  - maitred.rke2_numa.shared.kubelet_dir
"""

EXAMPLES = r"""
- name: Read the kubelet checkpoints
  maitred.rke2_numa.kubelet_state_info:
  register: __state
"""

RETURN = r"""
cpu_manager:
  description:
    - C(cpu_manager_state) - its C(path), C(exists), C(valid), C(policy), C(default_cpu_set) and C(assigned_cpus)
      (cpulists), C(error).
    - C(entries) - the exclusive CPUs per pod UID and container, as cpulists.
    - C(pod_entries) and C(pod_cpus) - the CPUs the pod-level resource managers hold per pod UID (the checkpoint's
      C(podEntries), Kubernetes 1.36+), and all of them, as cpulists.
    - C(format) - V(v2), V(v3) (with C(podEntries)) or V(v4) (Kubernetes 1.37's, read from its C(data) as the kubelet
      reads it).
  returned: always
  type: dict
  sample: {path: /var/lib/kubelet/cpu_manager_state, exists: true, valid: true, policy: static, default_cpu_set: "0-1,4-223", assigned_cpus: "2-3",
           entries: {"6f1c2b1e-5d0a-4c1e-9a51-2f0c3b7d8e90": {vllm: "2-3"}}, pod_cpus: "", pod_entries: {}, format: v2, error: null}
memory_manager:
  description: C(memory_manager_state) - its C(path), C(exists), C(valid), C(policy), C(machine_state) (as the kubelet wrote it), C(error).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.maitred.rke2_numa.plugins.module_utils.kubelet_checkpoints import read_checkpoints


def main():
    module = AnsibleModule(argument_spec=dict(kubelet_dir=dict(type="path", default="/var/lib/kubelet")),
                           supports_check_mode=True)
    module.exit_json(changed=False, **read_checkpoints(module.params["kubelet_dir"]))


if __name__ == "__main__":
    main()
