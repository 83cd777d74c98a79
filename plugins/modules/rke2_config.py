#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

# This is a documentation stub: the work is done by the action plugin of the
# same name (plugins/action/rke2_config.py), which merges on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rke2_config
short_description: Merge planned kubelet args into RKE2's config.yaml, keeping everything else
version_added: 0.1.0
description:
  - Merges the kubelet flags of a M(maitred.rke2_numa.numa_plan) plan into
    C(/etc/rancher/rke2/config.yaml) by editing only the C(kubelet-arg) entries it manages (and the
    C(node-label)/C(node-taint) entries it is given) - every other byte of the file (server, token,
    comments, quoting, number spellings, key order, blank lines) stays as it was. Managed flags are
    replaced by name, duplicates of them are normalised to one and reported.
  - Or, with O(mode=dropin), writes a C(config.yaml.d) file that appends with
    C(kubelet-arg+) and leaves C(config.yaml) alone, for clusters where another tool owns it.
  - O(mode=auto) (the default) picks V(dropin) on a node Rancher manages (M(maitred.rke2_numa.rancher_agent_info) finds
    its files - C(50-rancher.yaml), read after C(config.yaml), replaces plain keys there, and Rancher restarts rke2 whenever it
    changes) and V(merge) elsewhere. Moving to the drop-in takes out of C(config.yaml) what merge mode wrote there (the
    managed flags, the given labels and taints; every other byte kept, backed up first) in the same run. An explicit
    V(merge) on a Rancher-managed node is refused, writing nothing.
  - A drop-in this collection wrote under another name (its header says so; an earlier default was
    C(50-rke2-numa.yaml)) is removed, backed up first - one place holds the plan. No other file is removed.
  - All the files one run changes change together - every one backed up before the first write; when a later write
    fails, the earlier ones are put back.
  - Refuses, writing nothing, a file it could read differently from RKE2 - not UTF-8, not valid YAML,
    several YAML documents, not a mapping, a key given twice (named with its line).
  - Before writing, computes the kubelet flags RKE2 will really pass - C(config.yaml), then every
    C(config.yaml.d/*.yaml) and C(*.yml) in name order (a later plain key replaces, C(key+) appends), read
    as the kubelet reads repeated flags (map flags such as C(kube-reserved) merge their keys,
    C(reserved-memory) adds up, other flags keep the last value). When another file would make a managed
    flag differ from the plan (an extra C(reserved-memory), a drop-in whose plain C(kubelet-arg) replaces
    ours), the task fails naming the file and the flag, and nothing is written. Since the plan passed the
    kubelet's refusal rules, effective flags equal to the plan pass them too.
  - Before any change (content, mode or owner) the file is copied, 0600 root:root, into O(backup_dir)
    (0700); it is then written atomically, mode 0600 root:root. A symlink stays a symlink, its target is
    backed up and changed. The result tells how to undo the run exactly (RV(backup_file) and RV(previous),
    or RV(created)).
  - The join token never appears in the output - the diff masks the value of every key ending in token,
    secret, password or key, found on the parsed YAML (quoted keys, flow style, anchors); the merge runs
    on the controller, so the node needs no PyYAML.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - maitred.rke2_numa.shared.author
  - maitred.rke2_numa.managed_flags
  # mode and kubelet_config: type, choices and default from the common role's variables (scripts/gen_specs.py)
  - maitred.rke2_numa.config_modes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: Secret-looking values (keys ending in token, secret, password, key) are masked.
  platform:
    platforms: posix
options:
  path:
    description: RKE2's config file.
    type: path
    default: /etc/rancher/rke2/config.yaml
  mode:
    description:
      - V(merge) edits O(path); V(dropin) writes O(dropin_path) and only reads O(path); V(auto) is V(dropin) on a node
        Rancher manages, where it also takes what merge mode wrote out of O(path), and V(merge) elsewhere.
  dropin_path:
    description:
      - The drop-in file for O(mode=dropin); it must be in the C(config.yaml.d) folder next to O(path).
      - Named to sort after Rancher's C(50-rancher.yaml) and the files before it, so that its C(kubelet-arg+) appends to theirs.
    type: path
    default: /etc/rancher/rke2/config.yaml.d/90-rke2-numa.yaml
  kubelet_config:
    description:
      - Where the managed kubelet settings go. V(flags) - as C(kubelet-arg) entries (O(mode) says in which file).
      - V(file) - as a KubeletConfiguration drop-in, C(kubelet.conf.d/90-rke2-numa.conf) beside O(path)
        (C(/etc/rancher/rke2/kubelet.conf.d/90-rke2-numa.conf)) with C(cpuManagerPolicy), C(reservedSystemCPUs),
        C(reservedMemory), C(topologyManagerPolicy) and their siblings, written in the same transaction as the RKE2 file
        (backed up, check mode, diff). RKE2 hands that folder to the kubelet only when a C(kubelet-arg) names it
        (C(config-dir=), which RKE2 copies into the kubelet's own drop-in folder - k3s C(extractConfigArgs)), so the
        plan's other kubelet args and C(config-dir) go to O(dropin_path) (O(mode=auto) and O(mode=dropin); O(mode=merge)
        is refused) and what merge mode wrote in O(path) is taken out. A managed setting still given as a
        C(kubelet-arg) in any of RKE2's files (a drop-in, Rancher's C(50-rancher.yaml)) would win over the file, and
        another C(*.conf) of the folder that sets one to another value would win or add to it - both refused, naming
        the file, writing nothing.
      - With V(flags), a drop-in of ours left in that folder by file mode is removed (backed up first).
  rancher_root:
    description: Where M(maitred.rke2_numa.rancher_agent_info) looks for rancher-system-agent's files (C(/) on a node).
    type: path
    default: /
  kubelet_args:
    description:
      - The plan's C(kubelet_args), C(name=value) strings as they go under C(kubelet-arg).
      - Required, unless O(restore) is given.
    type: list
    elements: str
  node_labels:
    description: Labels to add to C(node-label) (an entry with the same key is replaced).
    type: list
    elements: str
    default: []
  node_taints:
    description: Taints to add to C(node-taint) (an entry with the same key and effect is replaced).
    type: list
    elements: str
    default: []
  backup:
    description: Copy the previous file into O(backup_dir) (0600) before any change.
    type: bool
    default: true
  backup_dir:
    description: Folder (created 0700 root:root) for the backups.
    type: path
    default: /var/lib/rke2-numa/backup
  restore:
    description:
      - Undo an earlier run instead of merging, from the result it returned (registered) - the copy it took
        (RV(backup_file), which must be in O(backup_dir)) is put back on RV(real_path) with the RV(previous)
        mode, owner and group, or the file it created (RV(created)) is removed. Nothing else is read or written.
      - RV(real_path) must be the file O(path) (O(mode=merge)) or O(dropin_path) (O(mode=dropin)) names, or the
        target of that symlink; anything else is refused, writing nothing.
      - Returns RV(restored) (the file put back) or RV(removed) (the file removed).
    type: dict
notes:
  - RKE2 reads C(config.yaml), then C(config.yaml.d/*.yaml) in lexical order; a later
    key replaces an earlier one and C(key+) appends to a list.
seealso:
  - module: maitred.rke2_numa.numa_plan
"""

EXAMPLES = r"""
- name: Merge the plan's kubelet args into config.yaml
  maitred.rke2_numa.rke2_config:
    kubelet_args: "{{ rke2_numa_plan.kubelet_args }}"
    node_labels: "{{ rke2_numa_plan.node_labels }}"

- name: Leave config.yaml to another tool and use a drop-in
  maitred.rke2_numa.rke2_config:
    mode: dropin
    kubelet_args: "{{ rke2_numa_plan.kubelet_args }}"
"""

RETURN = r"""
path:
  description: The file written (or that would be written).
  returned: always
  type: str
  sample: /etc/rancher/rke2/config.yaml
mode:
  description: merge or dropin - the mode used (O(mode=auto) resolved).
  returned: always
  type: str
kubelet_config:
  description: flags or file - where the managed kubelet settings are (O(kubelet_config)).
  returned: unless O(restore) is given
  type: str
kubelet_config_path:
  description: File mode's KubeletConfiguration drop-in (written with V(file), removed with V(flags) when ours is there).
  returned: unless O(restore) is given
  type: str
  sample: /etc/rancher/rke2/kubelet.conf.d/90-rke2-numa.conf
managed_by:
  description: V(rancher) when Rancher manages the node (RV(rancher_evidence)), else V(none).
  returned: always
  type: str
rancher_evidence:
  description: What says Rancher manages the node - the files found, as M(maitred.rke2_numa.rancher_agent_info) returns them.
  returned: always
  type: list
  elements: str
also_changed:
  description:
    - The other files this run changed with the one it manages, each with C(path), C(real_path), C(change)
      (V(unmerged) - what merge mode wrote taken out of O(path); V(removed) - an earlier drop-in of ours, or file mode's
      KubeletConfiguration drop-in with O(kubelet_config=flags); V(kubelet_config) - file mode's drop-in written),
      C(backup_file) and C(previous) (mode, owner, group; both empty for a file this run created, C(created) true);
      O(restore) puts each back, or removes the one it created.
  returned: always
  type: list
  elements: dict
real_path:
  description: The file really written - the target of O(path) (or O(dropin_path)) when that is a symlink.
  returned: always
  type: str
  sample: /etc/rancher/rke2/config.yaml
content_changed:
  description: The settings changed (not only the mode or owner) - RKE2 must restart to read them.
  returned: always
  type: bool
created:
  description: The file did not exist before this run (undoing the run removes it; no other file is ever removed).
  returned: always
  type: bool
previous:
  description: Mode, owner and group of the file before this run (null when it did not exist).
  returned: always
  type: dict
  sample: {mode: "0644", owner: root, group: root}
backup_file:
  description: The 0600 copy of the file taken before this run changed it.
  returned: changed, the file existed and O(backup=true)
  type: str
  sample: /var/lib/rke2-numa/backup/etc_rancher_rke2_config.yaml.20261201T041700Z~
restored:
  description: With O(restore), the file put back from its backup (empty when none was); the others put back are in RV(also_restored).
  returned: O(restore) given
  type: str
removed:
  description: With O(restore), the file the undone run had created, now removed (empty when none was).
  returned: O(restore) given
  type: str
also_restored:
  description:
    - With O(restore), the other files of the undone run (its RV(also_changed)) put back from their backups; one it
      created (file mode's kubelet drop-in) removed, named with C( (removed)).
  returned: O(restore) given
  type: list
  elements: str
healthz_url:
  description:
    - The kubelet's healthz URL as RKE2 binds it, from the effective config - C([::1]) when the (first)
      C(node-ip) is IPv6, C(127.0.0.1) otherwise, or the kubelet's own C(healthz-bind-address)/C(healthz-port).
  returned: always
  type: str
  sample: http://127.0.0.1:10248/healthz
report:
  description:
    - In merge mode - C(normalised) (managed flags that appeared more than once), C(replaced)
      (managed flags whose entries were replaced), C(kept_kubelet_args) (the user's other flags),
      C(other_keys) (the other top-level keys kept, names only).
    - Always - C(dropins) (the other C(config.yaml.d) files read) and C(elsewhere) (managed flags another
      file sets too, whose value the plan's still overrides).
  returned: always
  type: dict
"""
