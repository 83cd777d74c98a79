#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kubelet_healthz
short_description: Wait until the kubelet's healthz has stayed ok for a window
version_added: 0.1.0
description:
  - Polls the kubelet's healthz endpoint on the node until it has answered C(200 ok) at every poll for
    O(window) seconds, or until O(timeout) seconds (wall clock) have passed.
  - One C(ok) proves nothing - the kubelet serves healthz before it validates its CPU and Memory Manager
    checkpoints and exits when it refuses them, and RKE2 starts it again every 5 seconds. So O(window)
    must be longer than that cycle.
  - Only reads. Fails when the kubelet was not healthy in time, saying how long it was ok at best and how
    often it answered and then died.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.node
options:
  url:
    description: The kubelet's healthz URL (C(http://[::1]:10248/healthz) on an IPv6 node).
    type: str
    default: http://127.0.0.1:10248/healthz
  window:
    description: Seconds healthz must stay ok without a break; more than RKE2's 5-second restart cycle.
    type: int
    default: 15
  timeout:
    description: Seconds to wait in all, at least O(window).
    type: int
    default: 180
  interval:
    description: Seconds between polls.
    type: float
    default: 0.5
"""

EXAMPLES = r"""
- name: Wait for a kubelet that stays healthy
  maitred.rke2_numa.kubelet_healthz:
    timeout: 180
  register: __healthz
"""

RETURN = r"""
healthy:
  description: Healthz answered ok at every poll for O(window) seconds.
  returned: always
  type: bool
ok_for:
  description: Seconds of the last unbroken run of ok answers.
  returned: always
  type: float
waited:
  description: Seconds waited.
  returned: always
  type: float
polls:
  description: How many times healthz was asked.
  returned: always
  type: int
drops:
  description: How often healthz answered ok and then stopped (a kubelet that came up, then died).
  returned: always
  type: int
last:
  description: The last answer - C(200 ok), another status and body, or the connection error.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.urls import open_url

from ansible_collections.maitred.rke2_numa.plugins.module_utils.healthz import RKE2_RESTART_SECONDS, wait_healthy


def probe(url):
    """(ok, what the endpoint answered)."""
    try:
        response = open_url(url, timeout=2, validate_certs=False, use_proxy=False)
        body = response.read(64).decode("utf-8", "replace").strip()
        status = response.getcode()
    except Exception as e:  # pylint: disable=broad-except
        status = getattr(e, "code", None)
        if status is None:
            return False, "no answer: %s" % e
        body = ""
    return status == 200 and body == "ok", "%s %s" % (status, body)


def main():
    module = AnsibleModule(
        argument_spec={
            "url": {"type": "str", "default": "http://127.0.0.1:10248/healthz"},
            "window": {"type": "int", "default": 15},
            "timeout": {"type": "int", "default": 180},
            "interval": {"type": "float", "default": 0.5},
        },
        supports_check_mode=True,
    )
    p = module.params
    if p["window"] <= RKE2_RESTART_SECONDS:
        module.fail_json(msg="window=%d s proves nothing: it must be longer than RKE2's %d s kubelet restart cycle"
                         % (p["window"], RKE2_RESTART_SECONDS))
    if p["timeout"] < p["window"] or not 0 < p["interval"] <= p["window"]:
        module.fail_json(msg="timeout=%d s must be at least window=%d s, and interval within (0, window]"
                         % (p["timeout"], p["window"]))
    result = wait_healthy(lambda: probe(p["url"]), p["window"], p["timeout"], p["interval"])
    if not result["healthy"]:
        module.fail_json(msg="the kubelet's healthz (%s) did not stay ok for %d s within %d s: ok for %.1f s at the end,"
                             " answered and then died %d time(s), last answer %s"
                             % (p["url"], p["window"], p["timeout"], result["ok_for"], result["drops"], result["last"]),
                         changed=False, **result)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
