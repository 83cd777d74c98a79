#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

# This is a documentation stub: the work is done by the action plugin of the
# same name (plugins/action/report_files.py), on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: report_files
short_description: Write a run's report files into a folder on the controller, in one task
version_added: 0.1.0
description:
  - Writes each of O(files) into O(dest) on the controller - the plans of plan.yml, the per-host and fleet reports of
    check.yml, the assembled report of report.yml. One task for the run whatever the fleet's size, not a module run per
    file (a copy loop over 1,000 hosts runs the copy module 1,000 times).
  - A file is written only when its content differs, atomically (a temporary file beside it, synced, then renamed over
    it); a file behind a symlink is written at the link's target, so the link stays. O(mode) is given to every file
    written.
  - O(dest) is created (0755, with its missing parents) only when it is missing - a folder of the operator's (/tmp,
    $HOME) keeps its mode. No O(files) (a plan that planned no host) writes nothing and makes no folder.
  - Refuses, writing nothing, a file name that is not one plain name (no C(/), not C(.) or C(..), no leading C(-)) and a
    O(dest) that is not absolute.
  - In check mode it writes nothing and says what it would write; the playbooks' reports are local files, not host
    state, and their tasks set C(check_mode=false) to write them in check mode too.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.author
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: all
options:
  dest:
    description: The folder, an absolute path on the controller.
    type: path
    required: true
  files:
    description: The files, by name (one plain name each), and their text.
    type: dict
    required: true
  mode:
    description: The mode of every file written.
    type: str
    default: "0644"
"""

EXAMPLES = r"""
- name: Write each host's plan
  maitred.rke2_numa.report_files:
    dest: /srv/plans
    files: "{{ dict(ansible_play_hosts | map('regex_replace', '$', '.json') | zip(ansible_play_hosts | map('extract', hostvars, 'rke2_numa_plan')
              | map('to_nice_json'))) }}"
  run_once: true
  check_mode: false
"""

RETURN = r"""
written:
  description: The files written (new or changed; in check mode, that would be), by name, sorted.
  returned: always
  type: list
  elements: str
  sample: [gpu-01.json, fleet.json]
unchanged:
  description: How many files already held their content.
  returned: always
  type: int
  sample: 46
created:
  description: Whether O(dest) was created.
  returned: always
  type: bool
"""
