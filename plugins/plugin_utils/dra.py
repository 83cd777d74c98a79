# -*- coding: utf-8 -*-
# Copyright: (c) 2026, maitred.rke2_numa contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Dynamic Resource Allocation (resource.k8s.io/v1, GA in Kubernetes 1.34) as the collection reads it: the devices a
node publishes in its ResourceSlices, which of them are GPUs, NICs and CPUs, on which NUMA node each sits (and whether
that agrees with the node's sysfs), the devices a pod holds through its ResourceClaims, and whether a claim keeps its
GPU on one NUMA node with its CPUs or NICs.

Why it matters: the kubelet's Topology Manager gets no hints from DRA (pkg/kubelet/cm/container_manager_linux.go
``NewContainerManager`` registers the device, CPU and memory managers with ``AddHintProvider``, never the DRA manager;
the DRA manager prepares a pod's claims in ``kuberuntime_manager.go`` ``SyncPod`` after admission), so
``single-numa-node`` does not put a DRA GPU on the NUMA node of the pod's exclusive CPUs. Alignment on DRA comes from
the claim: a ``matchAttribute`` constraint across its requests (staging/src/k8s.io/dynamic-resource-allocation
structured ``matchAttributeConstraint.add``: a device without the attribute is never picked; the first device fixes the
value, every other device of the named requests - all requests when none are named - must equal it; only within one
claim).

Object shapes: staging/src/k8s.io/api/resource/v1/types.go (v1.34): a ResourceSlice's ``spec.devices[]`` carry
``attributes`` (qualified name -> exactly one of int, bool, string, version; the list forms ints/bools/strings/versions
from 1.36 with DRAListTypeAttributes) directly, without v1beta1's ``basic``; a name without a domain is in the driver's
domain.
"""

from __future__ import annotations

STANDARD_DOMAIN = "resource.kubernetes.io"
# deviceattribute.StandardDeviceAttributeNUMANode (KEP-6072, Kubernetes 1.37), ...PCIeRoot (1.34: "pci<domain>:<bus>"),
# ...PCIBusID (1.36: "0000:3b:00.0") - staging/src/k8s.io/dynamic-resource-allocation/deviceattribute/attribute.go
NUMA_NODE = STANDARD_DOMAIN + "/numaNode"
PCIE_ROOT = STANDARD_DOMAIN + "/pcieRoot"
PCI_BUS_ID = STANDARD_DOMAIN + "/pciBusID"

GPU, NIC, CPU = "gpu", "nic", "cpu"

# The DRA drivers the collection knows: what their devices are, and which attributes say a device's NUMA node, PCI
# address and identity - the standard attribute first, then the driver's own, as each release publishes them.
# - gpu.nvidia.com (kubernetes-sigs/dra-driver-nvidia-gpu v25.12.0 cmd/gpu-kubelet-plugin deviceinfo.go GetDevice,
#   partitions.go PartDevAttributes): type gpu|mig|vfio, uuid, resource.kubernetes.io/pciBusID (v25.8: its own
#   pcieBusID), pcieRoot; a NUMA node only for vfio devices (numa) and, unreleased, resource.kubernetes.io/numaNode
#   (main 3b59d66 addNumaNodeAttribute); device names gpu-<minor> (GpuInfo.CanonicalName).
# - dra.net (kubernetes-sigs/dranet v1.4.0 pkg/apis/attributes.go): numaNode, pciAddress, rdma, pcieRoot.
# - dra.cpu (kubernetes-sigs/dra-driver-cpu v0.2.0 pkg/driver/attributes.go): numaNodeID, and dra.net/numaNode for
#   dranet's constraints (pkg/device/attributes.go SetCompatibilityAttributes).
DRIVERS = {
    "gpu.nvidia.com": {"kind": GPU, "types": {"gpu": GPU, "mig": GPU, "vfio": GPU}, "type_attribute": "gpu.nvidia.com/type",
                       "numa": (NUMA_NODE, "gpu.nvidia.com/numa"), "pci": (PCI_BUS_ID, "gpu.nvidia.com/pcieBusID"),
                       "uuid": "gpu.nvidia.com/uuid"},
    "gpu.amd.com": {"kind": GPU, "numa": (NUMA_NODE,), "pci": (PCI_BUS_ID,), "uuid": None},
    "dra.net": {"kind": NIC, "numa": (NUMA_NODE, "dra.net/numaNode"), "pci": (PCI_BUS_ID, "dra.net/pciAddress"), "uuid": None},
    "dra.cpu": {"kind": CPU, "numa": (NUMA_NODE, "dra.cpu/numaNodeID", "dra.net/numaNode"), "pci": (), "uuid": None},
}
# The attributes a matchAttribute constraint may name to keep devices on one NUMA node: the NUMA node itself, or one
# PCIe root (devices behind one root complex share its NUMA node).
ALIGNING_ATTRIBUTES = (NUMA_NODE, PCIE_ROOT, "dra.net/numaNode", "dra.cpu/numaNodeID")

VALUE_KEYS = ("int", "bool", "string", "version")
LIST_KEYS = ("ints", "bools", "strings", "versions")


def attribute_value(attribute):
    """A DeviceAttribute's value: the one of int/bool/string/version set, or a list (ints ...); None when none is."""
    if not isinstance(attribute, dict):
        return None
    for key in VALUE_KEYS:
        if key in attribute:
            return attribute[key]
    for key in LIST_KEYS:
        if key in attribute:
            return list(attribute[key] or [])
    return None


def qualified(driver, name):
    """A device's attribute name as the allocator looks it up: one without a domain is in the driver's domain."""
    return name if "/" in name else "%s/%s" % (driver, name)


def device_attributes(driver, device):
    """{qualified name: value} of a ResourceSlice device (v1: ``attributes``; v1beta1's ``basic.attributes`` too)."""
    raw = device.get("attributes")
    if raw is None:
        raw = (device.get("basic") or {}).get("attributes")
    return dict((qualified(driver, str(name)), attribute_value(value)) for name, value in (raw or {}).items())


def _first(attributes, names):
    for name in names:
        value = attributes.get(name)
        if value is not None and value != []:
            return name, value
    return None, None


def _numa(value):
    """A NUMA node id from an attribute value: an int, or a list's first (KEP-6072's list form: the device's own node
    first, then its same-socket neighbours)."""
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def device_kind(driver, attributes):
    """gpu, nic, cpu or None (a driver the collection does not know, or a type it does not count)."""
    known = DRIVERS.get(driver)
    if not known:
        return None
    if "types" in known:
        return known["types"].get(attributes.get(known["type_attribute"]))
    return known["kind"]


def read_device(driver, pool, device):
    """One ResourceSlice device as the collection reports it."""
    attributes = device_attributes(driver, device)
    known = DRIVERS.get(driver) or {"numa": (NUMA_NODE,), "pci": (PCI_BUS_ID,), "uuid": None}
    numa_from, numa = _first(attributes, known["numa"])
    dummy, pci = _first(attributes, known["pci"])
    return {"driver": driver, "pool": pool, "device": str(device.get("name") or ""), "kind": device_kind(driver, attributes),
            "numa_node": _numa(numa), "numa_attribute": numa_from, "pcie_root": attributes.get(PCIE_ROOT),
            "pci_address": str(pci).lower() if pci else None,
            "uuid": attributes.get(known["uuid"]) if known.get("uuid") else None, "attributes": attributes}


def node_slices(slices, node_name):
    """The ResourceSlices of ``node_name`` (``spec.nodeName``), only each pool's newest generation (dynamic-resource-
    allocation structured ``GatherPools`` keeps the highest ``pool.generation``)."""
    mine = [s for s in slices if (s.get("spec") or {}).get("nodeName") == node_name]
    newest = {}
    for s in mine:
        spec = s["spec"]
        key = (spec.get("driver"), (spec.get("pool") or {}).get("name"))
        newest[key] = max(newest.get(key, 0), int((spec.get("pool") or {}).get("generation") or 0))
    return [s for s in mine if int((s["spec"].get("pool") or {}).get("generation") or 0)
            == newest[(s["spec"].get("driver"), (s["spec"].get("pool") or {}).get("name"))]]


def node_devices(slices, node_name):
    """Every device ``node_name`` publishes, in slice order."""
    out = []
    for s in node_slices(slices, node_name):
        spec = s["spec"]
        for device in spec.get("devices") or []:
            out.append(read_device(str(spec.get("driver") or ""), str((spec.get("pool") or {}).get("name") or ""), device))
    return out


def match_sysfs(device, pci_devices):
    """The sysfs PCI device (topology_info's ``pci_devices``) a DRA device is: by PCI address, then GPU UUID, then an
    NVIDIA ``gpu-<minor>`` name; None when none matches."""
    for dev in pci_devices or []:
        if device.get("pci_address") and str(dev.get("address") or "").lower() == device["pci_address"]:
            return dev
    for dev in pci_devices or []:
        if device.get("uuid") and dev.get("uuid") == device["uuid"]:
            return dev
    if device.get("driver") == "gpu.nvidia.com" and device["device"].startswith("gpu-") and device["device"][4:].isdigit():
        minor = int(device["device"][4:])
        for dev in pci_devices or []:
            if dev.get("kind") == GPU and dev.get("minor") is not None and int(dev["minor"]) == minor:
                return dev
    return None


def inventory(devices, pci_devices, plugin_gpus=0):
    """A node's DRA devices matched with its sysfs, the counts per kind, and the findings: a device whose slice says
    another NUMA node than sysfs, a DRA GPU no claim constraint can align (no NUMA node, no PCIe root published).
    ``plugin_gpus``: the GPUs the node serves by device plugin (its allocatable nvidia.com/gpu)."""
    out, findings = [], []
    for device in devices:
        if device["kind"] is None:
            continue
        sysfs = match_sysfs(device, pci_devices)
        entry = dict((k, v) for k, v in device.items() if k != "attributes")
        entry.update(sysfs_address=sysfs.get("address") if sysfs else None, sysfs_numa_node=sysfs.get("numa_node") if sysfs else None)
        ident = "%s %s/%s" % (device["driver"], device["pool"], device["device"])
        if sysfs and device["numa_node"] is not None and sysfs.get("numa_node") is not None and device["numa_node"] != sysfs["numa_node"]:
            findings.append("%s: its ResourceSlice says NUMA node %d (%s), sysfs says %d (%s) - a claim constrained on it "
                            "aligns with the wrong node" % (ident, device["numa_node"], device["numa_attribute"], sysfs["numa_node"], sysfs["address"]))
        if device["kind"] == GPU and device["numa_node"] is None and not device["pcie_root"]:
            findings.append("%s: publishes neither %s nor %s - no claim constraint can keep it on one NUMA node with CPUs or NICs"
                            % (ident, NUMA_NODE, PCIE_ROOT))
        out.append(entry)
    counts = dict((kind, sum(1 for d in out if d["kind"] == kind)) for kind in (GPU, NIC, CPU))
    return {"devices": out, "counts": counts, "gpu_path": gpu_path(plugin_gpus, counts[GPU]), "findings": findings}


def gpu_path(plugin_gpus, dra_gpus):
    """How a node serves its GPUs: device-plugin, dra, both or none."""
    return {(True, True): "both", (True, False): "device-plugin", (False, True): "dra", (False, False): "none"}[
        (bool(plugin_gpus), bool(dra_gpus))]


def claims_planned(plan):
    """Whether ``plan`` (a numa_plan result) carries ResourceClaimTemplates: only a plan whose exclusive CPUs
    dra-driver-cpu hands out does (dra_plan.plan_claims) - its probes are DRA probes, its DRA GPUs are aligned by claim."""
    return bool(((plan or {}).get("dra") or {}).get("templates"))


# ---------------------------------------------------------------- claims and pods

def pod_claims(pod):
    """{the pod's claim entry name: the ResourceClaim's name} - ``resourceClaimName`` as given; a template's claim as
    the pod's ``status.resourceClaimStatuses`` names it (core/v1 PodResourceClaim, PodResourceClaimStatus); an entry
    whose claim is not made yet is left out."""
    generated = dict((s.get("name"), s.get("resourceClaimName")) for s in (pod.get("status") or {}).get("resourceClaimStatuses") or [])
    out = {}
    for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
        name = entry.get("resourceClaimName") or generated.get(entry.get("name"))
        if name:
            out[entry.get("name")] = name
    return out


def claim_results(claim):
    """The devices a claim was allocated: [{request, driver, pool, device}] (status.allocation.devices.results)."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return [dict((k, str(r.get(k) or "")) for k in ("request", "driver", "pool", "device"))
            for r in (allocation.get("devices") or {}).get("results") or []]


def _request_of(result_request):
    """A result's request as a constraint names it: ``req/sub`` (firstAvailable) belongs to ``req``."""
    return result_request.split("/", 1)[0]


def aligning_constraints(claim):
    """The claim's matchAttribute constraints that keep devices on one NUMA node: [(attribute, requests or None)]."""
    out = []
    for constraint in ((claim.get("spec") or {}).get("devices") or {}).get("constraints") or []:
        if constraint.get("matchAttribute") in ALIGNING_ATTRIBUTES:
            out.append((constraint["matchAttribute"], set(constraint.get("requests") or []) or None))
    return out


def claim_alignment(claim, devices):
    """How one allocated claim holds its GPUs with its CPUs and NICs. ``devices``: {(driver, pool, device): device
    (read_device)}. Returns {gpus, others, aligned_by, numa_nodes, finding}: aligned_by names the constraint that covers
    every GPU request with every CPU/NIC request (None when there is none); finding when a GPU shares the claim with
    CPUs or NICs and no constraint aligns them."""
    meta = claim.get("metadata") or {}
    ident = "%s/%s" % (meta.get("namespace"), meta.get("name"))
    held = []
    for result in claim_results(claim):
        device = devices.get((result["driver"], result["pool"], result["device"])) or read_device(result["driver"], result["pool"], {"name": result["device"]})
        held.append((_request_of(result["request"]), device))
    gpus = [(r, d) for r, d in held if d["kind"] == GPU]
    others = [(r, d) for r, d in held if d["kind"] in (CPU, NIC)]
    requests = set(r for r, d in gpus + others)
    aligned_by = next((attribute for attribute, named in aligning_constraints(claim) if named is None or requests <= named), None)
    numa = sorted(set(d["numa_node"] for r, d in held if d["kind"] is not None and d["numa_node"] is not None))
    finding = None
    if gpus and others and not aligned_by:
        finding = ("ResourceClaim %s asks for a GPU (%s) with %s without a matchAttribute constraint on %s or %s across them: the "
                   "allocator may place them on different NUMA nodes%s"
                   % (ident, ", ".join(sorted(set(r for r, d in gpus))), ", ".join(sorted(set("%s (%s)" % (r, d["kind"]) for r, d in others))),
                      NUMA_NODE, PCIE_ROOT, landed(held)))
    return {"claim": ident, "gpus": [d for r, d in gpus], "others": [d for r, d in others], "aligned_by": aligned_by,
            "numa_nodes": numa, "finding": finding}


def landed(held):
    """'' or '; they landed on NUMA nodes 0 (gpu-0), 1 (pci-0000-3b-00-0)' when the devices are on more than one."""
    nodes = sorted(set(d["numa_node"] for r, d in held if d["numa_node"] is not None))
    if len(nodes) < 2:
        return ""
    return "; they landed on NUMA nodes %s" % ", ".join(
        "%d (%s)" % (n, ", ".join(sorted(d["device"] for r, d in held if d["numa_node"] == n))) for n in nodes)
