# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan the DRA way: per host, the ResourceClaimTemplates that keep a pod's DRA GPUs, its CPUs (dra-driver-cpu)
and, where every GPU NUMA node has one, a NIC (dranet) on one NUMA node; the DeviceClasses they use; and the rules a
plan must keep when dra-driver-cpu hands out the exclusive CPUs. Output only (plan.yml's dra.yaml): nothing here is
applied to a cluster.

Why a claim: the kubelet's Topology Manager takes no hints from DRA (plugin_utils/dra.py), so on a node whose GPUs are
DRA devices only the allocator can keep a GPU with its CPUs - every device of one claim under one ``matchAttribute``
constraint on ``resource.kubernetes.io/numaNode`` (dynamic-resource-allocation structured ``matchAttributeConstraint``:
a device without the attribute is never picked, all must share its value). That needs the CPUs to be DRA devices too:
kubernetes-sigs/dra-driver-cpu (v0.2.0 README, grouped mode, the default: one device per NUMA node, its CPUs a
consumable capacity ``dra.cpu/cpu``; a request asks for a count with ``capacity.requests``).
"""

from __future__ import annotations

import hashlib
import json
import textwrap

import yaml

from ansible_collections.maitred.rke2_numa.plugins.plugin_utils import dra
from ansible_collections.maitred.rke2_numa.plugins.plugin_utils.node_labels import PREFIX

DRA_DRIVER_CPU = "dra-driver-cpu"
CPU_CAPACITY = "dra.cpu/cpu"   # dra-driver-cpu pkg/driver: the grouped device's consumable capacity
CONSTRAINT = dra.NUMA_NODE
NAME_PREFIX = "rke2-numa-"

# What a plan with dra-driver-cpu requires of the kubelet: (option, the value it must have, why). One table; the
# planner refuses a plan that breaks a row (allocator_error), naming the variable, the value and the source.
ALLOCATOR_RULES = (
    ("cpu_manager_policy", "none",
     "dra-driver-cpu and the kubelet's static CPU Manager would both hand out this node's exclusive CPUs (dra-driver-cpu "
     "README: 'The CPUManager and this DRA driver are mutually incompatible and only one can be enabled at a time on any "
     "given node'; with static its NodePrepareResources fails 'not enough cpus available to satisfy request', "
     "kubernetes-sigs/dra-driver-cpu#134)"),
    ("memory_manager_policy", "None",
     "the static Memory Manager pins a Guaranteed pod's memory to the NUMA node the Topology Manager picks from memory "
     "alone - DRA gives it no hint - not the node of the GPU and CPUs the pod's claim holds (dra-driver-cpu manages no "
     "memory, its README's 'Not Supported'); with None the kernel allocates on the node of the CPUs the pod runs on"),
)

# The oldest Kubernetes that serves what a dra-driver-cpu plan writes: its ResourceClaimTemplates and DeviceClasses are
# resource.k8s.io/v1 (template(), device_classes()), which the API server serves from 1.34 on (KEP-4381, structured
# parameters, GA in v1.34; 1.33 serves v1beta1 and v1beta2 only).
DRA_MINOR = (1, 34)
DRA_MINOR_WHY = ("its claim templates and DeviceClasses are resource.k8s.io/v1, which the API server serves from Kubernetes 1.34 "
                 "on (DRA's structured parameters went GA there, KEP-4381)")

# The DeviceClasses the templates name: one per device kind, its CEL selector by driver (dra.DRIVERS), as the drivers'
# own charts select (dra-driver-nvidia-gpu deployments/helm deviceclass-gpu.yaml: driver and type gpu; dranet: a PCI
# network device; dra-driver-cpu: its driver).
DEVICE_CLASSES = (
    (dra.GPU, NAME_PREFIX + "gpu",
     'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu" || device.driver == "gpu.amd.com"'),
    (dra.CPU, NAME_PREFIX + "cpu", 'device.driver == "dra.cpu"'),
    (dra.NIC, NAME_PREFIX + "nic", 'device.driver == "dra.net" && "pciAddress" in device.attributes["dra.net"]'),
)
CLASS_OF = dict((kind, name) for kind, name, expression in DEVICE_CLASSES)
# Why a host planned with the kubelet's CPU Manager gets no template.
KUBELET_NOTE = ("the kubelet hands out exclusive CPUs (rke2_numa_cpu_allocator=kubelet): a GPU that comes from a ResourceClaim is "
                "not aligned with them (the Topology Manager takes no DRA hints) - serve GPUs by the device plugin, or plan with "
                "rke2_numa_cpu_allocator=dra-driver-cpu")


def allocator_error(options, minor=None, source=""):
    """Why a plan's options break ALLOCATOR_RULES ('' when they keep them): dra-driver-cpu with a kubelet that would
    compete for the CPUs or pin memory elsewhere, or (``minor``: the Kubernetes minor the host is planned for, (1, 33),
    when it was given or read - ``source`` says where; None when defaulted) a Kubernetes older than DRA_MINOR."""
    if options.get("cpu_allocator") != DRA_DRIVER_CPU:
        return ""
    broken = ["rke2_numa_cpu_allocator=%s needs rke2_numa_%s=%s, and it is %s: %s" % (DRA_DRIVER_CPU, name, value, options.get(name), why)
              for name, value, why in ALLOCATOR_RULES if options.get(name) != value]
    if minor is not None and minor < DRA_MINOR:
        broken.append("rke2_numa_cpu_allocator=%s needs Kubernetes %d.%d or later, and this host is planned for %d.%d (%s): %s"
                      % ((DRA_DRIVER_CPU,) + DRA_MINOR + tuple(minor) + (source, DRA_MINOR_WHY)))
    return "; ".join(broken)


def cpu_driver_conflict(cpu_manager_policy, cpu_devices):
    """The check's finding for a node where dra.cpu publishes CPU devices (``cpu_devices``: how many) while the kubelet's
    CPU Manager runs another policy than ALLOCATOR_RULES asks for ('' when none)."""
    name, value, why = next(row for row in ALLOCATOR_RULES if row[0] == "cpu_manager_policy")
    if not cpu_devices or cpu_manager_policy in (None, value):
        return ""
    return "dra.cpu publishes %d CPU device(s) on this node while its kubelet's CPU Manager is %s, not %s: %s" % (
        cpu_devices, cpu_manager_policy, value, why)


def single_numa_shapes(options):
    """True when a pod shape must fit one NUMA node: the kubelet's single-numa-node, or dra-driver-cpu's claims (their
    constraint puts every device on one node whatever the Topology Manager's policy)."""
    return options["topology_manager_policy"] == "single-numa-node" or options["cpu_allocator"] == DRA_DRIVER_CPU


def _whole_cores(count, cpus_per_core):
    return count - count % cpus_per_core if cpus_per_core > 1 else count


def default_shapes(tables, cpus_per_core):
    """The claim shapes of a plan without pod shapes, per NUMA node with GPUs: one GPU with its share of the node's
    exclusive CPUs (whole cores), and all the node's GPUs with all of them - named by what they ask for."""
    shapes = []
    for table in tables:
        count = len(table["gpus"])
        if not count:
            continue
        share = _whole_cores(table["exclusive_cpus"] // count, cpus_per_core)
        for gpus, cpu in ((1, share), (count, _whole_cores(table["exclusive_cpus"], cpus_per_core))):
            if cpu > 0 and not any(s["gpus"] == gpus and s["cpu"] == cpu for s in shapes):
                shapes.append({"name": "%dgpu-%dcpu" % (gpus, cpu), "gpus": gpus, "cpu": cpu})
    return shapes


def _nic_on_every_gpu_node(topology, tables):
    gpu_nodes = set(t["node"] for t in tables if t["gpus"])
    nic_nodes = set(d.get("numa_node") for d in topology.get("pci_devices") or [] if d.get("kind") == dra.NIC)
    return bool(gpu_nodes) and gpu_nodes <= nic_nodes


def claim_template(name, shape, nic):
    """A ResourceClaimTemplate (resource.k8s.io/v1) for one shape: its GPUs, its CPUs as dra.cpu capacity, a NIC when
    ``nic``, all under one matchAttribute constraint on the NUMA node. No namespace: ``kubectl apply -n``."""
    requests = [{"name": "gpu", "exactly": {"deviceClassName": CLASS_OF[dra.GPU], "count": shape["gpus"]}},
                {"name": "cpu", "exactly": {"deviceClassName": CLASS_OF[dra.CPU],
                                            "capacity": {"requests": {CPU_CAPACITY: str(shape["cpu"])}}}}]
    if nic:
        requests.append({"name": "nic", "exactly": {"deviceClassName": CLASS_OF[dra.NIC], "count": 1}})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "labels": {PREFIX + "shape": shape["name"]}},
            "spec": {"spec": {"devices": {"requests": requests, "constraints": [{"matchAttribute": CONSTRAINT}]}}}}


def device_classes():
    """The DeviceClasses the templates name (cluster-scoped)."""
    return [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
             "spec": {"selectors": [{"cel": {"expression": expression}}]}} for kind, name, expression in DEVICE_CLASSES]


def plan_claims(options, topology, tables, fits, cpus_per_core):
    """The host's DRA plan: {cpu_allocator, templates: [{name, shape, gpus, cpu, nic, nodes, template}], note}. With the
    kubelet's CPU Manager there are no templates - a DRA GPU cannot be kept with CPUs the kubelet pins - and the note says
    so. ``fits``: the planner's pod-shape fits (fit_pod_shapes, one NUMA node each under dra-driver-cpu); without pod
    shapes, default_shapes. A shape without GPUs needs no claim; one that fits no node has none (the planner warns, or
    refuses under strict_fit, as for the kubelet path)."""
    allocator = options["cpu_allocator"]
    if allocator != DRA_DRIVER_CPU:
        return {"cpu_allocator": allocator, "templates": [], "note": KUBELET_NOTE}
    nic = _nic_on_every_gpu_node(topology, tables)
    if fits:
        shapes = [dict(name=f["name"], gpus=f["request"]["gpus"], cpu=f["request"]["cpu"], nodes=list(f["nodes"]))
                  for f in fits if f["fits"] and f["request"]["gpus"] > 0]
    else:
        shapes = []
        for shape in default_shapes(tables, cpus_per_core):
            nodes = [t["node"] for t in tables if len(t["gpus"]) >= shape["gpus"] and t["exclusive_cpus"] >= shape["cpu"]]
            shapes.append(dict(shape, nodes=nodes))
    templates = []
    for shape in shapes:
        name = NAME_PREFIX + shape["name"] + ("-nic" if nic else "")
        templates.append({"name": name, "shape": shape["name"], "gpus": shape["gpus"], "cpu": shape["cpu"], "nic": nic,
                          "nodes": shape["nodes"], "template": claim_template(name, shape, nic)})
    return {"cpu_allocator": allocator, "templates": templates, "note": "" if templates else "no pod shape with GPUs fits"}


def fleet_templates(plans):
    """The ResourceClaimTemplates of ``plans`` ({host: plan}), one per name: [(template, [hosts])], in name order. Two
    hosts whose shapes share a name and differ (per-host pod shapes) get the name with a digest of each's content."""
    by_name = {}
    for host in sorted(plans):
        for entry in (plans[host].get("dra") or {}).get("templates") or []:
            by_name.setdefault(entry["name"], []).append((host, entry["template"]))
    out = []
    for name in sorted(by_name):
        contents = {}
        for host, template in by_name[name]:
            key = json.dumps(template["spec"], sort_keys=True)
            contents.setdefault(key, (template, []))[1].append(host)
        for key, (template, hosts) in sorted(contents.items()):
            if len(contents) > 1:
                template = json.loads(json.dumps(template))
                template["metadata"]["name"] = "%s-%s" % (name, hashlib.sha256(key.encode()).hexdigest()[:6])
            out.append((template, hosts))
    return out


def claim_templates_text(plans):
    """dra.yaml as plan.yml writes it beside the plans: what each host takes (its CPU allocator, the templates that fit
    it and on which NUMA nodes, dra-driver-cpu's --reserved-cpus), how to apply them, then the DeviceClasses and the
    templates as YAML documents. Nothing in it is applied by the collection."""
    head = ["# GPUs by Dynamic Resource Allocation, NUMA-aligned by the claim (maitred.rke2_numa plan; docs/DRA.md).",
            "# Output only: nothing here was applied. A pod that takes one of these templates gets its GPUs, its CPUs",
            "# (dra-driver-cpu) and a NIC (dranet, where every GPU NUMA node has one) on one NUMA node: the constraint",
            "# matchAttribute %s holds every device of the claim to one value. The drivers must" % CONSTRAINT,
            "# publish that attribute (KEP-6072; the check reports a GPU that does not).",
            "#   kubectl apply -n <the pods' namespace> -f dra.yaml     (the DeviceClasses are cluster-scoped)",
            "#", "# Hosts:"]
    kubelet = [h for h in sorted(plans) if (plans[h].get("dra") or {}).get("cpu_allocator") != DRA_DRIVER_CPU]
    for host in sorted(set(plans) - set(kubelet)):
        claims = plans[host]["dra"]
        taken = ", ".join("%s (NUMA node %s)" % (t["name"], ", ".join(str(n) for n in t["nodes"])) for t in claims["templates"])
        head.append("#   %s: dra-driver-cpu --reserved-cpus=%s; %s" % (host, plans[host].get("reserved_cpus"), taken or claims.get("note")))
    if kubelet:   # one reason for them all
        head += ["#   %s: no templates -" % ", ".join(kubelet)]
        head += ["#     " + line for line in textwrap.wrap(KUBELET_NOTE, 110)]
    templates = fleet_templates(plans)
    docs = (device_classes() + [t for t, hosts in templates]) if templates else []
    body = "".join("---\n" + yaml.safe_dump(d, default_flow_style=False, sort_keys=False, width=1000) for d in docs)
    return "\n".join(head) + "\n" + body
