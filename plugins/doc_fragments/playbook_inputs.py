# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# playbook_inputs' inputs: the variables plugins/plugin_utils/playbook_inputs.py INPUTS names, each described
# as its argument spec describes it - generated from meta/argument_specs.yml by scripts/gen_specs.py (make specs):
# do not edit here.

from __future__ import annotations


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  inputs:
    description: The playbook's variables set for this host, by name (pass C(omit) for one that is not set) - each checked against its rule and its argument
      spec's bounds and choices.
    type: dict
    default: {}
    suboptions:
      inventory_hostname:
        description: The host's inventory name, given when it names report or plan files (C(<dir>/<host>.json)) - letters, digits, C(-), C(_), C(.) and
          C(@), no C(/) or leading C(.), and not C(fleet) (the fleet's own file).
        type: raw
      rke2_numa_node_name: {description: The Node's name in the cluster., type: raw}
      rke2_numa_kubectl: {description: The kubectl program on C(rke2_numa_kubectl_host) (RKE2 servers have it there)., type: raw}
      rke2_numa_kubeconfig:
        description:
          - The kubeconfig kubectl uses. RKE2's admin kubeconfig by default; the documented way is the scoped one playbooks/access.yml writes (the check
            warns when this one may do everything).
          - C(env:K8S_AUTH) - AWX's Kubernetes bearer-token credential in the controller's environment (K8S_AUTH_HOST, K8S_AUTH_API_KEY, K8S_AUTH_VERIFY_SSL,
            K8S_AUTH_SSL_CA_CERT) - kubectl then runs on the controller (the execution environment), so a slice of a sliced job needs no server among its
            hosts; a kubeconfig is written from the credential for each call (0600, in a private folder) and removed after it. A credential that does not
            verify the API server's certificate is refused. docs/AWX.md.
        type: raw
      rke2_numa_server_group: {description: The inventory group of the RKE2 servers; its first host runs kubectl by default., type: raw}
      rke2_numa_kubectl_host:
        description: The inventory host (or C(localhost)) that runs kubectl; by default the first host of the group named by C(rke2_numa_server_group),
          else C(localhost) - and C(localhost) with C(rke2_numa_kubeconfig=env:K8S_AUTH).
        type: raw
      rke2_numa_kured_daemonset:
        description:
          - kured's DaemonSet, whose lock annotation names the nodes kured reboots; while it holds any live lock no node starts.
          - C(auto) - the DaemonSet that runs kured (its labels, image or command), wherever it was installed; C(namespace/name) - that one, which must
            exist; empty - kured is not checked.
        type: raw
      rke2_numa_kured_hold:
        description:
          - Hold kured's own reboot lock while the roll has nodes out, so that kured reboots none of them meanwhile.
          - C(auto) - where the cluster has ValidatingAdmissionPolicy (access.yml then grants the patch of kured's DaemonSet, narrowed to its lock annotation)
            and the kubeconfig may patch it; C(true) - also on a cluster without the policies (access.yml grants the patch by RBAC alone, which is kured's
            pod template too); C(false) - never.
          - The roll refuses a node while kured holds its lock whatever this says.
        type: raw
      rke2_numa_foreign_node_annotations:
        description: Node annotations that say another tool is draining or rebooting the node - read before the cordon (the drain role) and again before
          each destructive step of a roll (its fence).
        type: raw
      rke2_numa_probe_namespace:
        description: Namespace of the probe pods - the collection's own (access.yml creates it with restricted Pod Security); the scoped identity may create
          and delete pods there only.
        type: raw
      rke2_numa_drain_namespaces:
        description:
          - The namespaces whose pods a roll may evict when it drains a node.
          - Empty (the default) - every namespace but C(kube-system) and the other C(kube-*) ones - C(access.yml) grants the eviction of pods cluster-wide
            (an Eviction names only its pod, so no API rule can narrow it to the node being drained); a holder of the token could then evict any such pod,
            each eviction honouring its PodDisruptionBudget.
          - Named - C(access.yml) grants evictions in these namespaces only (a RoleBinding in each), so the token can evict nowhere else, not even through
            C(kubectl drain) of a Node outside the inventory; a roll refuses, before its cordon, a node whose drain would evict a pod elsewhere, naming
            it.
          - At most 100 RFC 1123 labels, none of them C(kube-*).
        type: raw
      rke2_numa_drain_pod_selector: {description: C(--pod-selector); empty - every pod., type: raw}
      rke2_numa_drain_timeout:
        description:
          - Seconds C(kubectl drain) may take (C(--timeout)).
          - From 1 to 14400.
        type: raw
      rke2_numa_drain_grace_period:
        description:
          - C(--grace-period) in seconds; null - each pod's own.
          - From 1 to 3600.
        type: raw
      rke2_numa_node_ready_timeout:
        description:
          - Seconds to wait for the Node Ready before it returns to service.
          - From 1 to 3600.
        type: raw
      rke2_numa_serial:
        description: Nodes C(rolling.yml) rolls at a time - a number of at least 1, a percentage from 1% to 100%, or a list of those (the batch sizes in
          turn, as Ansible's C(serial)).
        type: raw
      rke2_numa_max_fail_percentage:
        description:
          - The failed nodes, in percent of those to roll, past which C(rolling.yml) starts no further batch.
          - From 0 to 100.
        type: raw
      rke2_numa_node_minutes:
        description:
          - Minutes one node is expected to take in the window (above 0), refined from the nodes done.
          - At most 1440.
        type: raw
      rke2_numa_window_end:
        description: The end of the maintenance window, ISO 8601 with C(Z) or an offset; no node starts that cannot finish before it. Empty - no window
          (or the one C(rke2_numa_window_minutes) gives). For a roll, an end already past is refused.
        type: raw
      rke2_numa_window_minutes:
        description:
          - The maintenance window as a duration - it ends this many minutes after the roll starts (when C(rolling.yml) names the roll, before its first
            write); no node starts that cannot finish before then. What a nightly schedule (AWX's workflow) sets, where a fixed C(rke2_numa_window_end)
            is past by the second night. 0 - no window by duration. Set this or C(rke2_numa_window_end), not both; the slices of a sliced roll each count
            from their own start.
          - From 0 to 1440.
        type: raw
      rke2_numa_roll_order:
        description: The order of a roll - C(idle_first) (nodes no GPU pod would leave first, then the others, each by name) or C(sorted) (by name).
        type: raw
      rke2_numa_roll_id:
        description:
          - The roll's id, in our Node marker, our kured lock entries, the summary and fleet.json - lowercase letters, digits, C(-) and C(.), at most 63.
          - Empty - AWX's C(awx_workflow_job_id) (the slices of a sliced job share it), else C(awx_job_id), else a fresh id per run. Runs that share an
            id roll together (they share the Lease).
        type: raw
      rke2_numa_roll_resume:
        description:
          - This run resumes the roll C(rke2_numa_roll_id) whose runs are gone (a controller killed, an SSH session dropped, an AWX job cancelled) - it
            holds that roll's Lease at once (the same id is the same roll), takes over the slots its dead runs had claimed, and rolls the Nodes they left
            cordoned first.
          - Only when you know no other run of that roll is alive (the refusal of another roll's Lease names the command); the runs of a sliced AWX job
            share an id and never set this.
          - Needs C(rke2_numa_roll_id).
        type: raw
      rke2_numa_roll_lease_namespace: {description: The namespace of the Lease a roll takes before its first write (one roll at a time per cluster)., type: raw}
      rke2_numa_roll_lease_name: {description: The name of that Lease., type: raw}
      rke2_numa_roll_lock_wait:
        description:
          - Seconds a roll waits for another roll's Lease before it refuses - 0 (refuse at once) to 43200.
          - From 0 to 43200.
        type: raw
      rke2_numa_roll_lease_seconds:
        description:
          - The Lease's C(leaseDurationSeconds) - 120 to 28800; 0 computes it from the longest stretch between two renewals (the drain; the reboot; the
            kubelet, Ready, probe and labels timeouts together - times the waves of a batch larger than C(--forks)), plus 120 s. A value shorter than that
            is refused before the first write.
          - A roll that dies holds the cluster until another run has watched its Lease unchanged this long (client-go's observed time); then that run takes
            over and rolls its nodes first.
          - From 120 to 28800.
        type: raw
      rke2_numa_max_unavailable:
        description:
          - The most Nodes the runs of one roll (AWX slices, C(--limit) halves that share C(rke2_numa_roll_id)) have out together - a number of Nodes, or
            a percentage (C(25%)) of the cluster's Nodes, rounded down, at least 1.
          - From 1 to 10000.
          - Each node claims a slot on the roll's Lease before its cordon and frees it after its uncordon; a node left cordoned (failed) counts as out.
            A node with no slot waits (the longest stretch a node takes, within the maintenance window), then is left for the next run.
          - Empty - C(rke2_numa_serial) (of a list, its last); a batch is never larger than a number given here.
        type: raw
      rke2_numa_labels_via:
        description: How the NUMA labels reach the Node - C(nfd) (a Node Feature Discovery feature file), C(kubectl) (kubectl label), C(none).
        type: raw
      rke2_numa_labels_timeout:
        description:
          - With C(kubectl), seconds to wait for Node Feature Discovery to let go of the collection's labels after a switch from C(nfd). The C(wait) entry
            point waits as long for the labels to appear on the Node.
          - From 1 to 3600.
        type: raw
      rke2_numa_nfd_features_dir: {description: The folder Node Feature Discovery's C(local) source reads feature files from., type: raw}
      rke2_numa_reboot_ok: {description: Reboot the host when the running kernel differs from the plan., type: raw}
      rke2_numa_audit_pods: {description: Audit the pods; false skips it., type: raw}
      rke2_numa_prove: {description: Prove the pinning with probe pods (the prove role); false skips it., type: raw}
      rke2_numa_allow_pending_pods:
        description: Drain a node even when the GPU pods it would evict fit nowhere on the rest of the fleet (Ready, schedulable Nodes outside the batch,
          allocatable minus requests). By default such a node is not drained and the roll stops, naming the pods that would be left Pending.
        type: raw
      rke2_numa_admin_kubeconfig:
        description: The admin kubeconfig playbooks/access.yml uses to create the scoped identity (only access.yml reads it).
        type: raw
      rke2_numa_access_kubeconfig:
        description: Where playbooks/access.yml writes the scoped kubeconfig (mode 0600, on C(rke2_numa_kubectl_host)). No default - the operator names
          it; never the admin kubeconfig, and never a file access.yml did not write.
        type: raw
      rke2_numa_access_token_duration:
        description: Lifetime of the scoped kubeconfig's bound token - 10m to 7d (seconds, or C(8h), C(90m), C(1d12h)).
        type: raw
      rke2_numa_access_kubeconfig_owner:
        description: The user who runs kubectl with the scoped kubeconfig - its owner (mode 0600); a file there owned by anyone else is refused.
        type: raw
      rke2_numa_access_server:
        description:
          - The API server address written into the scoped kubeconfig; empty - the admin kubeconfig's.
          - Another one must be an https URL (no user, query or fragment) whose certificate the admin kubeconfig's CA (or C(rke2_numa_access_ca)) verifies
            in a TLS handshake from C(rke2_numa_kubectl_host); refused before any token exists.
        type: raw
      rke2_numa_access_ca:
        description: A PEM CA bundle on C(rke2_numa_kubectl_host) that verifies C(rke2_numa_access_server) (written into the scoped kubeconfig); empty -
          the admin kubeconfig's CA.
        type: raw
      rke2_numa_access_namespace: {description: Namespace of the ServiceAccount C(rke2-numa)., type: raw}
"""
