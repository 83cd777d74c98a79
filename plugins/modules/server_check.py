#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: server_check
short_description: Check that an API server proves itself with the CA before a token goes there
version_added: 0.3.0
description:
  - A TCP connection and a TLS handshake with the URL's host and port - the certificate verified against the CA and the
    host name (or O(tls_server_name)). No HTTP request and no credentials are sent.
  - access.yml asks it before the token request when C(rke2_numa_access_server) is another server than the admin
    kubeconfig's; a server that does not prove itself is refused, and nothing is written.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.author
attributes:
  check_mode:
    support: full
    details: It only connects; check mode connects too.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  url:
    description: The https URL of the API server.
    type: str
    required: true
  ca_data:
    description: The CA as a kubeconfig's C(certificate-authority-data) (base64 of PEM) - the admin kubeconfig's.
    type: str
    default: ""
  ca_path:
    description: A PEM CA bundle on the host (C(rke2_numa_access_ca)); used instead of O(ca_data) when given.
    type: path
  tls_server_name:
    description: The name the certificate must carry, when not the URL's host (a kubeconfig's C(tls-server-name)).
    type: str
  timeout:
    description: Seconds for the connection and the handshake.
    type: int
    default: 10
"""

EXAMPLES = r"""
- name: Shake hands with the other server
  maitred.rke2_numa.server_check:
    url: https://api.example.com:6443
    ca_path: /etc/ssl/cluster-ca.pem
"""

RETURN = r"""
ca_data:
  description: The CA the server was verified with (base64 of its PEM), for the scoped kubeconfig.
  returned: success
  type: str
"""

import base64

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.maitred.rke2_numa.plugins.module_utils.tls_check import ca_pem, handshake_refusal


def main():
    module = AnsibleModule(
        argument_spec={"url": {"type": "str", "required": True}, "ca_data": {"type": "str", "default": ""},
                       "ca_path": {"type": "path"}, "tls_server_name": {"type": "str"}, "timeout": {"type": "int", "default": 10}},
        supports_check_mode=True)
    params = module.params
    if not 1 <= params["timeout"] <= 120:
        module.fail_json(msg="timeout %d is not 1 to 120 seconds" % params["timeout"])
    pem, why = ca_pem(params["ca_data"], params["ca_path"])
    if why:
        module.fail_json(msg="%s - no token was requested, nothing was written" % why)
    refusal = handshake_refusal(params["url"], pem, params["tls_server_name"], params["timeout"])
    if refusal:
        module.fail_json(msg="%s - no token was requested, nothing was written" % refusal)
    module.exit_json(changed=False, ca_data=base64.b64encode(pem.encode("ascii")).decode("ascii"))


if __name__ == "__main__":
    main()
