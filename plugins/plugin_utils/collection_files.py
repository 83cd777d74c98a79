# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's own files that controller code reads, declared in one place (controller side).

plugin_utils sits two folders below the collection's root in every layout it runs from (the working tree, an
installed collection, the execution environment); each file controller code opens is named here, relative to that
root, so that a move is one edit and tests/unit/test_layers.py can check that nothing else walks the tree.
"""

from __future__ import annotations

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# name -> path under the collection's root
FILES = {
    # the check/plan report's page: HTML, CSS, SVG and script in one Jinja2 file (plugin_utils/report.py renders it)
    "fleet_report_page": "playbooks/templates/fleet_report.html.j2",
    # the roles: each one's meta/argument_specs.yml declares its variables (plugin_utils/specs.py reads them)
    "roles": "roles",
}


def collection_file(name):
    """The absolute path of the declared file ``name``."""
    return os.path.join(ROOT, *FILES[name].split("/"))
