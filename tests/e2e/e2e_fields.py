#!/usr/bin/env python3
"""e2e_fields.py: every accepted field is acted on or named (issue 11, parts 2-4; owner: fields).

Starts its own tests/devenv and drives it with the pinned kubectl; vCenter is read back with vimc:
  acted     one VM with guestID, minHardwareVersion, bootOptions (firmware, delay, retry, secure
            boot, network protocol, boot order), changeBlockTracking, bootDiskCapacity, global
            nameservers + waitOnNetwork4, on a class with CPU/memory limits and a configSpec
            (extraConfig, a NIC adapter type): read back from vCenter (vimc vm info, the decoded
            guestinfo metadata); VirtualMachineFieldsSupported True
  reported  spec.volumes, reserved.resourcePolicyName, crypto, affinity and a bootDiskCapacity
            below the image's disk: the VM runs and Ready is True, VirtualMachineFieldsSupported
            False NotSupported names each
  resize    two powered-off VMs of one class, one with vmoperator.vmware.com/same-vm-class-resize:
            an edit of the class resizes only that one, the other says ClassUpdated; a className
            change then resizes the other
  nocloudinit  a VM without a cloud-init bootstrap: a static address is named (CloudInitRequired),
            and on a network with a static IPv4 pool no pool address is allocated for it (a VM
            with cloud-init on the same network gets one)
Every wait is bounded polling. Usage: e2e_fields.py BUILD_DIR [TEST...]. Never prints secrets.
"""
import base64
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_vm as base  # noqa: E402  (Env, vm_obj, wait_running, cond, check, run_main)
from e2e_vm import NS, check, cond, vm_obj, wait_cond, wait_for, wait_running  # noqa: E402

FIELDS = "VirtualMachineFieldsSupported"
CLASS_SYNCED = "VirtualMachineClassConfigurationSynced"
RESIZE_ANNOT = "vmoperator.vmware.com/same-vm-class-resize"
LAST_RESIZED = "vmoperator.vmware.com/last-resized-vm-class"


def vmclass(name, cpus, memory="2Gi", extra=None):
    spec = {"hardware": {"cpus": cpus, "memory": memory}}
    if extra:
        spec.update(extra)
    return {"apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachineClass",
            "metadata": {"name": name, "namespace": NS}, "spec": spec}


def cloud_init(extra=None):
    ci = {"sshAuthorizedKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE2e fields@e2e"]}
    ci.update(extra or {})
    return {"cloudInit": ci}


def info(env, name):
    return env.vimc("vm", "info", env.get("vm", name)["status"]["uniqueID"])


def metadata(env, name):
    """The cloud-init metadata vmop wrote (gzip+base64), decoded. The VM has no user data."""
    keys = env.vimc("vm", "guestinfo", "--reveal", env.get("vm", name)["status"]["uniqueID"])
    check(keys.get("guestinfo.metadata.encoding") == "gzip+base64", "metadata encoding")
    return json.loads(gzip.decompress(base64.b64decode(keys["guestinfo.metadata"])))


def test_acted(env):
    env.apply([vmclass("e2e-fields", 2, extra={
        "policies": {"resources": {"limits": {"cpu": "1500m", "memory": "1536Mi"}}},
        "configSpec": {"_typeName": "VirtualMachineConfigSpec",
                       "extraConfig": [{"_typeName": "OptionValue", "key": "e2e.fields.class",
                                        "value": {"_typeName": "string", "_value": "yes"}}],
                       "deviceChange": [{"_typeName": "VirtualDeviceConfigSpec", "operation": "add",
                                         "device": {"_typeName": "VirtualE1000e", "key": -100}}]}}),
               vm_obj("f-acted", cls="e2e-fields", extra={
                   "guestID": "ubuntu64Guest",
                   "minHardwareVersion": 19,
                   "bootOptions": {"firmware": "efi", "bootDelay": "3s", "bootRetry": "Enabled",
                                   "bootRetryDelay": "20s", "efiSecureBoot": "Enabled",
                                   "networkBootProtocol": "IP6",
                                   "bootOrder": [{"type": "Network", "name": "eth0"},
                                                 {"type": "Disk"}]},
                   "advanced": {"changeBlockTracking": True, "bootDiskCapacity": "2Gi"},
                   "bootstrap": cloud_init({"waitOnNetwork4": True}),
                   "network": {"nameservers": ["10.53.0.1"], "searchDomains": ["fields.example"]}})])
    vm = wait_running(env, "f-acted")
    c = wait_cond(env, "f-acted", FIELDS, "True")
    check(c.get("reason") == "True", "%s %r" % (FIELDS, c))
    v = info(env, "f-acted")
    check(v.get("guestId") == "ubuntu64Guest", "guestId %r" % v.get("guestId"))
    check(v.get("hardwareVersion") == "vmx-19", "hardwareVersion %r" % v.get("hardwareVersion"))
    check(vm["status"].get("hardwareVersion") == 19 or
          wait_for(lambda: env.get("vm", "f-acted")["status"].get("hardwareVersion") == 19,
                   "status.hardwareVersion 19"), "status.hardwareVersion")
    check(v.get("firmware") == "efi", "firmware %r" % v.get("firmware"))
    check(v.get("changeTrackingEnabled") is True, "changeTrackingEnabled %r" % v.get("changeTrackingEnabled"))
    b = v.get("bootOptions") or {}
    check(b.get("bootDelay") == 3000 and b.get("bootRetryEnabled") is True and
          b.get("bootRetryDelay") == 20000 and b.get("efiSecureBootEnabled") is True and
          b.get("networkBootProtocol") == "ipv6", "bootOptions %r" % b)
    order = b.get("bootOrder") or []
    check(len(order) == 2 and order[0]["type"].endswith("EthernetDevice") and
          order[0].get("deviceKey") == v["nics"][0]["key"] and order[1]["type"].endswith("DiskDevice") and
          order[1].get("deviceKey") == v["disks"][0]["key"], "bootOrder %r" % order)
    check(len(v["disks"]) == 1 and v["disks"][0]["capacityKB"] == 2 * 1024 * 1024,
          "disks %r" % v.get("disks"))
    # 1500m at the cluster's slowest host MHz: some limit, not unlimited
    check(v["cpuAllocation"].get("limit", -1) > 0, "cpu limit %r" % v["cpuAllocation"])
    check(v["memoryAllocation"].get("limit") == 1536, "memory limit %r" % v["memoryAllocation"])
    check((v.get("extraConfig") or {}).get("e2e.fields.class") == "yes", "class extraConfig")
    check(len(v["nics"]) == 1 and v["nics"][0]["type"] == "VirtualE1000e", "NIC %r" % v["nics"])
    md = metadata(env, "f-acted")
    check(md.get("wait-on-network") == {"ipv4": True, "ipv6": False}, "wait-on-network %r" % md.get("wait-on-network"))
    ns = md["network"]["ethernets"]["eth0"].get("nameservers") or {}
    check(ns.get("addresses") == ["10.53.0.1"] and ns.get("search") == ["fields.example"],
          "eth0 nameservers %r" % ns)


def test_reported(env):
    env.apply([vm_obj("f-reported", extra={
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "f-data"}}],
        "reserved": {"resourcePolicyName": "f-policy"},
        "crypto": {"encryptionClassName": "f-enc"},
        "affinity": {"vmAntiAffinity": {"preferredDuringSchedulingPreferredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "f"}}, "topologyKey": "kubernetes.io/hostname"}]}},
        "advanced": {"bootDiskCapacity": "512Mi"},  # the image's disk has 1 GiB
        "bootstrap": cloud_init()})])
    wait_running(env, "f-reported")
    wait_cond(env, "f-reported", "Ready", "True")

    def named():
        c = cond(env.get("vm", "f-reported"), FIELDS)
        m = (c or {}).get("message", "")
        return c if c and c["status"] == "False" and "bootDiskCapacity" in m else None
    c = wait_for(named, "%s False naming every field" % FIELDS)
    check(c["reason"] == "NotSupported", "reason %r" % c["reason"])
    for f in ("spec.volumes", "spec.reserved.resourcePolicyName", "spec.crypto", "spec.affinity",
              "spec.advanced.bootDiskCapacity (512 MiB)"):
        check(f in c["message"], "%s message lacks %s: %r" % (FIELDS, f, c["message"]))
    check(info(env, "f-reported")["disks"][0]["capacityKB"] == 1024 * 1024, "the disk was changed")
    d = env.kubectl("describe", "vm", "f-reported", "-n", NS).stdout
    check(FIELDS in d and "NotSupported" in d, "describe lacks %s" % FIELDS)


def annotations(env, name):
    return (env.get("vm", name) or {}).get("metadata", {}).get("annotations") or {}


def test_resize(env):
    env.apply([vmclass("e2e-rs", 2), vmclass("e2e-rs-big", 4)])
    off = {"powerState": "PoweredOff", "bootstrap": cloud_init()}
    a = vm_obj("f-rs-a", cls="e2e-rs", extra=off)
    a["metadata"]["annotations"] = {RESIZE_ANNOT: ""}
    env.apply([a, vm_obj("f-rs-b", cls="e2e-rs", extra=off)])
    for n in ("f-rs-a", "f-rs-b"):
        # the annotation goes with the finalizer, before the VM exists: wait for both
        wait_for(lambda n=n: LAST_RESIZED in annotations(env, n) and
                 ((env.get("vm", n) or {}).get("status") or {}).get("uniqueID"),
                 "%s %s and created" % (n, LAST_RESIZED))
        check(info(env, n)["numCPU"] == 2, "%s not sized from e2e-rs" % n)
    # an edit of the class: only the annotated VM follows
    env.kubectl("patch", "vmclass", "e2e-rs", "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"hardware": {"cpus": 3}}}))
    wait_for(lambda: info(env, "f-rs-a")["numCPU"] == 3, "f-rs-a resized by the class edit")
    c = wait_cond(env, "f-rs-b", CLASS_SYNCED, "False", "ClassUpdated")
    check(RESIZE_ANNOT in c["message"], "ClassUpdated message %r" % c["message"])
    check(info(env, "f-rs-b")["numCPU"] == 2, "f-rs-b resized by an edit of its class")
    check(json.loads(annotations(env, "f-rs-b")[LAST_RESIZED])["generation"] == 1,
          "f-rs-b's last-resized-vm-class moved on")
    wait_cond(env, "f-rs-a", CLASS_SYNCED, "True")
    # a className change resizes (the VM is off: at once)
    env.kubectl("patch", "vm", "f-rs-b", "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"className": "e2e-rs-big"}}))
    wait_for(lambda: info(env, "f-rs-b")["numCPU"] == 4, "f-rs-b resized by the className change")
    wait_cond(env, "f-rs-b", CLASS_SYNCED, "True")
    wait_for(lambda: json.loads(annotations(env, "f-rs-b").get(LAST_RESIZED, "{}")).get("name") ==
             "e2e-rs-big", "last-resized-vm-class names e2e-rs-big")


POOL = {"ranges": [{"start": "10.30.0.10", "end": "10.30.0.60"}], "prefix": 24,
        "gateway": "10.30.0.1"}


def test_nocloudinit(env):
    static = vm_obj("f-static", extra={"network": {"interfaces": [
        {"name": "eth0", "network": {"name": "vm-network"}, "addresses": ["192.0.2.77/24"],
         "gateway4": "192.0.2.1"}]}})
    env.apply([static])
    c = wait_cond(env, "f-static", FIELDS, "False", "CloudInitRequired")
    check("spec.network.interfaces[eth0].addresses" in c["message"], "message %r" % c["message"])
    # a static IPv4 pool on the network: no address for a VM without cloud-init
    nsb = env.get("nsb", "vsphere")
    nets = nsb["spec"]["networks"]
    nets[0]["ipv4Pool"] = POOL
    env.kubectl("patch", "nsb", "vsphere", "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"networks": nets}}))
    env.apply([vm_obj("f-pool-none"), vm_obj("f-pool-ci", extra={"bootstrap": cloud_init()})])
    wait_for(lambda: "infra.vmop.io/ipv4.eth0" in annotations(env, "f-pool-ci"),
             "f-pool-ci pool address")
    c = wait_cond(env, "f-pool-none", FIELDS, "False", "CloudInitRequired")
    check("static IPv4 pool" in c["message"], "message %r" % c["message"])
    wait_for(lambda: (env.get("vm", "f-pool-none").get("status") or {}).get("uniqueID"),
             "f-pool-none created")
    check("infra.vmop.io/ipv4.eth0" not in annotations(env, "f-pool-none"),
          "a pool address was allocated for a VM without cloud-init")


TESTS = [("acted", test_acted), ("reported", test_reported), ("resize", test_resize),
         ("nocloudinit", test_nocloudinit)]


if __name__ == "__main__":
    sys.exit(base.run_main(TESTS))
