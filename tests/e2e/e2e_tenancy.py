#!/usr/bin/env python3
"""e2e_tenancy.py: ownership is proven, never assumed (issue 11), end to end with real kubectl.

A VM in vCenter is vmop's to act on for a VirtualMachine only when it carries vmop's marks for
exactly that resource (docs/design.md, "Identity and crash safety"). The foreign VMs here are the
simulator's own (DC0_C0_RP0_VM0, DC0_C0_RP0_VM1): vmop never made them.
  tenant      the tenant (DIR/tenant-kubeconfig) names a foreign VM's instance UUID in
              spec.instanceUUID: refused at admission (privileged-only field); the administrator's
              same create: VirtualMachineCreated False OwnershipConflict + a Warning event,
              nothing created; a spec update, a vmop restart and the tenant's delete leave the
              foreign VM as it was (power, CPU, memory, ExtraConfig, folder), and the delete
              completes with an event saying it was left untouched
  status      an administrator writes a foreign VM's MoRef into status.uniqueID (status
              subresource): while the resource's own VM exists the hint is ignored (event, status
              back to the own VM); once the own VM is gone it is a conflict and nothing is created;
              the delete completes; the foreign VM is untouched throughout
  recreate    a resource deleted from Kubernetes while its VM stayed (finalizer removed) and
              created again under the same name: with the same spec.instanceUUID (and even with
              the old status.uniqueID) it is a conflict, the old VM untouched and surviving the
              delete; with a new instance UUID vmop makes its own VM (vCenter refuses the name
              while the old VM holds it: DuplicateName, the old VM untouched) and, once the old VM
              is removed, the resource has a VM of its own, with its own vmop.uid
Every wait is bounded polling. Usage: e2e_tenancy.py BUILD_DIR [TEST...]. Never prints secrets.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_vm as base  # noqa: E402
from e2e_vm import NS, check, cond, vm_obj, wait_cond, wait_for, wait_running  # noqa: E402

REASON = "OwnershipConflict"


def foreign(env, name):
    """vimc's view of one of the simulator's own VMs."""
    return env.vimc("vm", "info", "%s/%s" % (env.sim["folder"], name))


def fingerprint(v):
    """What vmop could have changed on a VM."""
    ec = dict(v.get("extraConfig") or {})
    return {"moref": v.get("moref"), "powerState": v.get("powerState"), "numCPU": v.get("numCPU"),
            "memoryMB": v.get("memoryMB"), "instanceUuid": v.get("instanceUuid"),
            "biosUuid": v.get("biosUuid"), "folder": v.get("folder"), "extraConfig": ec,
            "cpuAllocation": v.get("cpuAllocation"), "memoryAllocation": v.get("memoryAllocation")}


def check_untouched(env, before, what):
    now = env.vimc("vm", "info", before["moref"], check=False)
    check(now is not None, "%s: the foreign VM %s is gone from vCenter" % (what, before["moref"]))
    after = fingerprint(now)
    for k in before:
        check(after[k] == before[k], "%s: the foreign VM's %s changed: %r -> %r"
              % (what, k, before[k], after[k]))
    for k in ("vmservice.namespacedName", "vmop.uid"):
        check(k not in after["extraConfig"], "%s: the foreign VM got %s" % (what, k))


def events(env, name, reason=None):
    out = json.loads(env.kubectl("get", "events", "-n", NS, "--field-selector",
                                 "involvedObject.name=%s" % name, "-o", "json").stdout)
    return [e for e in out.get("items") or [] if reason is None or e.get("reason") == reason]


def wait_event(env, name, reason, words=()):
    def ok():
        for e in events(env, name, reason):
            if all(w in (e.get("message") or "") for w in words):
                return e
        return None
    return wait_for(ok, "%s event %s %s" % (name, reason, " ".join(words)))


def vms_named(env, name):
    """MoRef values ("vm-42") of the VMs in vCenter whose vmservice.namespacedName is NS/name."""
    out = []
    for e in env.vimc("ls", "vm") or []:
        v = env.vimc("vm", "info", e["moref"], check=False)
        if v and (v.get("extraConfig") or {}).get("vmservice.namespacedName") == "%s/%s" % (NS, name):
            out.append(v["moref"].split(":")[-1])
    return out


def wait_reconciled(env, name):
    """Until VirtualMachineCreated carries the resource's current generation: vmop has looked."""
    def ok():
        vm = env.get("vm", name)
        c = cond(vm, "VirtualMachineCreated") or {}
        return vm if c.get("observedGeneration") == vm["metadata"]["generation"] else None
    return wait_for(ok, "%s reconciled at its generation" % name)


def delete_gone(env, name, kubeconfig=None):
    pre = ["--kubeconfig", kubeconfig] if kubeconfig else []
    env.kubectl(*(pre + ["delete", "vm", name, "-n", NS, "--wait=false"]))
    wait_for(lambda: env.get("vm", name) is None, "%s deleted" % name)


def patch_status(env, name, status):
    env.kubectl("patch", "vm", name, "-n", NS, "--subresource=status", "--type=merge", "-p",
                json.dumps({"status": status}))


# ---- tests -----------------------------------------------------------------------------------

def test_tenant(env):
    tk = os.path.join(env.dir, "tenant-kubeconfig")
    f = foreign(env, "DC0_C0_RP0_VM0")
    before = fingerprint(f)
    name = "ten-foreign"
    # asks for everything a takeover would do: other size, other power state
    vm = vm_obj(name, extra={"instanceUUID": f["instanceUuid"],
                             "powerState": "PoweredOff" if f["powerState"] == "poweredOn"
                             else "PoweredOn"})
    # at admission: a tenant may not choose an instance UUID (VM Operator's privileged-only field)
    p = env.kubectl("--kubeconfig", tk, "apply", "-f", "-", stdin=json.dumps(vm), check=False)
    check(p.returncode != 0 and "spec.instanceUUID" in p.stderr and "privileged" in p.stderr,
          "the tenant's create with a foreign instanceUUID was not refused naming the field: "
          "rc %d, %r" % (p.returncode, p.stderr.strip()[-300:]))
    check(env.get("vm", name) is None, "the refused create left an object")
    # a privileged user (here the administrator; or a cluster without vmop's webhooks): the
    # controller still never touches the VM
    env.apply([vm])
    c = wait_cond(env, name, "VirtualMachineCreated", "False", REASON)
    msg = c.get("message") or ""
    check(f["moref"].split(":")[-1] in msg and "spec.instanceUUID" in msg,
          "VirtualMachineCreated message %r does not name the VM and the cause" % msg)
    got = env.get("vm", name)
    check(not (got.get("status") or {}).get("uniqueID"), "the foreign VM went into status")
    check((cond(got, "Ready") or {}).get("status") == "False", "Ready is not False")
    wait_event(env, name, REASON, ("spec.instanceUUID",))
    check(vms_named(env, name) == [], "a VM was created for %s" % name)
    check_untouched(env, before, "create")
    d = env.kubectl("describe", "vm", name, "-n", NS).stdout
    check(REASON in d, "kubectl describe does not show %s" % REASON)

    # an update by the tenant: still nothing done to it
    env.kubectl("--kubeconfig", tk, "patch", "vm", name, "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"powerOffMode": "Hard", "className": "best-effort-large"}}))
    wait_reconciled(env, name)
    check_untouched(env, before, "update")

    # after a restart of vmop: the same verdict, from vCenter's marks alone
    env.devenv("restart", env.dir, "operator")
    env.kubectl("--kubeconfig", tk, "patch", "vm", name, "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"powerOffMode": "TrySoft"}}))
    vm = wait_reconciled(env, name)
    c = cond(vm, "VirtualMachineCreated")
    check(c["status"] == "False" and c["reason"] == REASON, "after restart: %r" % c)
    check_untouched(env, before, "restart")
    check(len(events(env, name, REASON)) >= 1, "no %s event" % REASON)

    # the tenant's delete completes without touching it
    delete_gone(env, name, kubeconfig=tk)
    check_untouched(env, before, "delete")
    wait_event(env, name, REASON, ("left untouched",))
    check(not events(env, name, "Deleted"), "a Deleted event for a VM vmop did not delete")


def test_status(env):
    f = foreign(env, "DC0_C0_RP0_VM1")
    before = fingerprint(f)
    fref = f["moref"].split(":")[-1]
    name = "adm-forged"
    env.apply([vm_obj(name)])
    own = wait_running(env, name)["status"]["uniqueID"]

    # (1) the resource's own VM exists: the forged hint is ignored, status goes back
    patch_status(env, name, {"uniqueID": fref})
    wait_for(lambda: ((env.get("vm", name) or {}).get("status") or {}).get("uniqueID") == own,
             "status.uniqueID back to the resource's own VM %s" % own)
    wait_event(env, name, REASON, ("status.uniqueID", fref, "ignored"))
    vm = env.get("vm", name)
    check((cond(vm, "VirtualMachineCreated") or {}).get("status") == "True", "own VM not Created")
    check_untouched(env, before, "hint ignored")

    # (2) the own VM gone (vmop paused meanwhile) and status naming the foreign VM: a conflict,
    # nothing created in its place
    env.kubectl("annotate", "vm", name, "-n", NS, "vmoperator.vmware.com/paused=true")
    wait_cond(env, name, "VirtualMachineReconcileReady", "False", "VirtualMachineReconcilePaused")
    env.vimc("vm", "destroy", "--force", own)
    patch_status(env, name, {"uniqueID": fref})
    env.kubectl("annotate", "vm", name, "-n", NS, "vmoperator.vmware.com/paused-")
    c = wait_cond(env, name, "VirtualMachineCreated", "False", REASON)
    check(fref in (c.get("message") or "") and "status.uniqueID" in c.get("message", ""),
          "VirtualMachineCreated message %r" % c.get("message"))
    wait_event(env, name, REASON, (fref, "status.uniqueID"))
    check(vms_named(env, name) == [], "a VM was created in place of the foreign one")
    check_untouched(env, before, "conflict")

    delete_gone(env, name)
    check_untouched(env, before, "delete")
    wait_event(env, name, REASON, ("left untouched",))


def test_recreate(env):
    name = "re-same"
    env.apply([vm_obj(name)])
    old = wait_running(env, name)
    old_ref = old["status"]["uniqueID"]
    old_uid = old["metadata"]["uid"]
    before = fingerprint(env.vimc("vm", "info", old_ref))
    check(before["extraConfig"].get("vmop.uid") == old_uid, "vmop.uid is not metadata.uid")
    # gone from Kubernetes while its VM stays (as when vmop is down): the finalizer removed
    env.kubectl("annotate", "vm", name, "-n", NS, "vmoperator.vmware.com/paused=true")
    wait_cond(env, name, "VirtualMachineReconcileReady", "False", "VirtualMachineReconcilePaused")
    env.kubectl("patch", "vm", name, "-n", NS, "--type=merge", "-p",
                json.dumps({"metadata": {"finalizers": None}}))
    delete_gone(env, name)
    check(env.vimc("vm", "info", old_ref, check=False) is not None, "the old VM went too")
    before = fingerprint(env.vimc("vm", "info", old_ref))

    try:
        # (1) created again from a backup: same spec identity, even the old status
        again = vm_obj(name, cls="best-effort-large",
                       extra={"instanceUUID": old["spec"]["instanceUUID"],
                              "biosUUID": old["spec"]["biosUUID"], "powerState": "PoweredOff"})
        env.apply([again])
        c = wait_cond(env, name, "VirtualMachineCreated", "False", REASON)
        check("vmop.uid" in (c.get("message") or ""), "message %r does not name vmop.uid" % c)
        check(env.get("vm", name)["metadata"]["uid"] != old_uid, "same uid?")
        patch_status(env, name, {"uniqueID": old_ref})
        wait_for(lambda: (lambda m: "vmop.uid" in m and old_ref in m)(
            (cond(env.get("vm", name), "VirtualMachineCreated") or {}).get("message") or ""),
            "the conflict with the old status too")
        check(vms_named(env, name) == [old_ref], "VMs named %s: %r" % (name, vms_named(env, name)))
        check_untouched_own(env, before, "recreated with the old identity")
        delete_gone(env, name)
        check_untouched_own(env, before, "delete of the recreated resource")

        # (2) created again with a new identity: vmop makes a VM of its own, which vCenter
        # refuses while the old VM holds the name in the folder (DuplicateName); the old VM is
        # untouched, and once an administrator removes it the resource gets its own
        env.apply([vm_obj(name)])

        def refused_or_running():
            vm = env.get("vm", name)
            c = cond(vm, "VirtualMachineCreated") or {}
            if c.get("status") == "False" and c.get("reason") == "DuplicateName":
                return "refused"
            st = (vm or {}).get("status") or {}
            if st.get("powerState") == "PoweredOn" and (st.get("network") or {}).get("primaryIP4"):
                return "running"  # a simulator that allows duplicate names (real vCenter does not)
            return None
        how = wait_for(refused_or_running, "%s refused (DuplicateName) or running" % name)
        if how == "refused":
            check(vms_named(env, name) == [old_ref],
                  "VMs named %s: %r" % (name, vms_named(env, name)))
        check_untouched_own(env, before, "recreated with a new identity")
        env.vimc("vm", "destroy", "--force", old_ref)
        new = wait_running(env, name, timeout=base.WAIT * 2)
        new_ref = new["status"]["uniqueID"]
        check(new_ref != old_ref, "the new resource has the old VM's MoRef")
        check(env.vimc("vm", "info", new_ref)["extraConfig"].get("vmop.uid") ==
              new["metadata"]["uid"], "the new VM's vmop.uid is not the new resource's uid")
        delete_gone(env, name)
        check(env.vimc("vm", "info", new_ref, check=False) is None, "the new VM was not deleted")
    finally:
        env.vimc("vm", "destroy", "--force", old_ref, check=False)


def check_untouched_own(env, before, what):
    """As check_untouched, for an old vmop VM (it carries vmop's marks of its first resource)."""
    now = env.vimc("vm", "info", before["moref"], check=False)
    check(now is not None, "%s: the old VM %s is gone" % (what, before["moref"]))
    after = fingerprint(now)
    for k in before:
        check(after[k] == before[k], "%s: the old VM's %s changed: %r -> %r"
              % (what, k, before[k], after[k]))


TESTS = [("tenant", test_tenant), ("status", test_status), ("recreate", test_recreate)]


if __name__ == "__main__":
    sys.exit(base.run_main(TESTS))
