#!/usr/bin/env python3
"""badinput.py: bad input from tenants gives a clear condition and creates nothing in vCenter.

Usage: badinput.py BUILD_DIR. One devenv; a second namespace "other" holds a Secret. For each
case a VirtualMachine is applied and the test waits (bounded) for the named condition with the
expected reason, checks Ready is False, status.uniqueID is empty, the message names the
culprit and no user data shows in status or events; at the end the VMs in vCenter are counted
against the start (nothing created), and one well-formed VM in the same namespace still comes up (the bad ones
do not block the good).
  unknown class, missing Secret key, malformed cloud-config encoding (gzip magic, broken stream),
  oversized user data (600 KiB > 512 KiB), another namespace's Secret; refused at admission with
  the field's path (the validating webhook): a network the namespace may not use, a StorageClass
  it may not use (exists, not in the binding).
"""
import base64
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chaoslib as cl  # noqa: E402
from chaoslib import NS, check  # noqa: E402

BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(cl.ROOT, "build-dev")
MARK = "bad-input-marker-7f3a"  # in every bad user data: must never show up in status or events


def b64(b):
    return base64.b64encode(b).decode()


def cases():
    ud = ("#cloud-config\n# %s\n" % MARK).encode()
    secrets = [
        cl.secret_obj("bi-nokey", data={"other-key": b64(ud)}),
        # gzip magic + deflate method, then garbage: "gzip" that does not inflate
        cl.secret_obj("bi-badgz", data={"user-data": b64(b"\x1f\x8b\x08\x00" + MARK.encode() * 8)}),
        cl.secret_obj("bi-big", data={"user-data": b64(ud + b"#" * (600 * 1024))}),
        cl.secret_obj("bi-foreign", data={"user-data": b64(ud)}, ns="other"),
    ]
    vms = [
        ("bi-class", cl.vm_obj("bi-class", cls="no-such-class"),
         "VirtualMachineClassReady", "NotFound", "no-such-class"),
        ("bi-key", cl.vm_obj("bi-key", secret="bi-nokey"),
         "VirtualMachineBootstrapReady", "RequiredKeyNotFound", "bi-nokey"),
        ("bi-gz", cl.vm_obj("bi-gz", secret="bi-badgz"),
         "VirtualMachineBootstrapReady", "Invalid", "bi-badgz"),
        ("bi-big", cl.vm_obj("bi-big", secret="bi-big"),
         "VirtualMachineBootstrapReady", "Invalid", "bi-big"),
        ("bi-foreign", cl.vm_obj("bi-foreign", secret="bi-foreign"),
         "VirtualMachineBootstrapReady", "NotFound", "bi-foreign"),
    ]
    # refused at admission (the validating webhook: what the namespace's binding does not offer),
    # with the field's path and the culprit in the message
    denied = [
        ("bi-net", cl.vm_obj("bi-net", extra={"network": {"interfaces": [
            {"name": "eth0", "network": {"name": "tenant-forbidden-net"}}]}}),
         "spec.network.interfaces[0].network.name", "tenant-forbidden-net"),
        ("bi-sc", cl.vm_obj("bi-sc", sc="wcp-forbidden"), "spec.storageClass", "wcp-forbidden"),
    ]
    return secrets, vms, denied


def test_badinput(env):
    env.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}},
               {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": "wcp-forbidden"}, "provisioner": "csi.vsphere.vmware.com"}])
    before = sorted(e["moref"] for e in env.vimc("ls", "vm") or [])
    secrets, vms, denied = cases()
    # server-side apply: a client-side apply keeps a copy of the object in an annotation, which the
    # real API server refuses for the 600 KiB Secret (annotations are capped at 256 KiB)
    for o in secrets:
        env.kubectl_retry("apply", "--server-side", "--field-manager=badinput", "-f", "-",
                          stdin=json.dumps(o))
    env.apply([o for _, o, _, _, _ in vms])
    fails = []
    for name, obj, path, word in denied:
        p = env.kubectl("apply", "-f", "-", stdin=json.dumps(obj), check=False)
        if p.returncode == 0 or path not in p.stderr or word not in p.stderr:
            fails.append("%s: not refused at admission naming %s and %r (rc %d: %s)"
                         % (name, path, word, p.returncode, p.stderr.strip()[-200:]))
        elif env.get("vm", name) is not None:
            fails.append("%s: refused, yet the object exists" % name)
        else:
            print("  %-10s refused at admission: %s" % (name, p.stderr.strip()[-160:]), flush=True)
    for name, _, ctype, reason, word in vms:
        def ok():
            vm = env.get("vm", name)
            c = cl.cond(vm, ctype)
            return (vm, c) if c and c.get("status") == "False" and c.get("reason") == reason else None
        try:
            vm, c = cl.wait_for(ok, "%s %s=False %s" % (name, ctype, reason), timeout=60)
        except AssertionError as e:
            c = cl.cond(env.get("vm", name), ctype)
            fails.append("%s: %s (have %s)" % (name, e, c and {k: c.get(k) for k in
                                                               ("status", "reason", "message")}))
            continue
        st = vm.get("status") or {}
        ready = cl.cond(vm, "Ready")
        if st.get("uniqueID"):
            fails.append("%s: has a VM %s in vCenter" % (name, st["uniqueID"]))
        if not ready or ready.get("status") != "False":
            fails.append("%s: Ready is %s" % (name, ready))
        if word not in c.get("message", ""):
            fails.append("%s: message %r does not name %r" % (name, c.get("message"), word))
        if MARK in json.dumps(vm):
            fails.append("%s: user data in the resource" % name)
        print("  %-10s %s=%s %s: %s" % (name, ctype, c["status"], reason, c.get("message")),
              flush=True)
    # a good VM next to them still comes up; then nothing else was created
    env.apply([cl.secret_obj("bi-good"), cl.vm_obj("bi-ok", secret="bi-good")])
    cl.wait_converged(env, ["bi-ok"], timeout=90)
    ok_ref = env.get("vm", "bi-ok")["status"]["uniqueID"]
    after = sorted(e["moref"] for e in env.vimc("ls", "vm") or [])
    new = [r for r in after if r not in before and r.split(":")[-1] != ok_ref]
    current = cl.current_cache_templates(env)  # only current, marked cache templates may appear
    new = [r for r in new if cl.cache_template_problem(
        env.vimc("vm", "info", r, check=False) or {}, current)]
    if new:
        fails.append("VMs created in vCenter for bad input: %s" % new)
    ev = json.dumps(env.events())
    if MARK in ev:
        fails.append("user data in events")
    check(not fails, "; ".join(fails))
    print("  vCenter VMs before %d, after %d (the good one: %s)" % (len(before), len(after), ok_ref))


def main():
    return cl.run_tests([("badinput", test_badinput)], [], lambda: cl.Env(BUILD, tag="badinput"))


if __name__ == "__main__":
    sys.exit(main())
