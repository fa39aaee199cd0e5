#!/usr/bin/env python3
"""e2e_vm.py: end-to-end tests of the VirtualMachine controller with real kubectl.

Starts tests/devenv (vCenter simulator + Kubernetes API test server + vmop) in a fresh temporary
directory, then drives it with kubectl (fresh KUBECACHEDIR) and reads vCenter back with vimc:
  create      apply -> PoweredOn with an IP -> describe shows the conditions -> vCenter state
              (CPU, memory, reservations/limits per class, NIC backing, UUIDs, ExtraConfig)
  admission   the webhooks' defaults, finalizer and class record on create; refusals by path
  ssa         a server-side apply and its re-apply keep the finalizer and the class record
  prereqs     missing class / image / Secret / StorageClass -> the right condition, then recovery
  paused      the paused annotation -> ReconcileReady False VirtualMachineReconcilePaused
  deletecheck a delete.check annotation holds the delete in vCenter (event DeleteHeld); tenants
              may neither add nor remove one
  power       PoweredOff -> vCenter powered off, PowerOff event; PoweredOn -> IP and Ready again
  storage     StorageClass wcp-policy (a vSphere storage policy) -> runs on the binding's
              datastore (compatible); a StorageClass naming an unknown policy ID ->
              VirtualMachineStorageReady False StoragePolicyNotFound, nothing created
  delete      delete -> VM gone from vCenter, the object (finalizer) gone
  restart     SIGKILL the operator during 10 creates, restart -> exactly one VM per resource
Every wait is bounded polling. Usage: e2e_vm.py BUILD_DIR [TEST...]. Never prints secrets.

Every script on this harness (Env, run_in: the e2e and chaos scripts) also runs the secrets check
of canary.py: the vCenter password, the tenant user data (secret_obj's) and vmop's ServiceAccount
token are canaries; at the end Events, vmop's objects' status and every operator log line are
scanned for them ("secrets" fails when one shows, naming the canary and where, never the value).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import canary  # noqa: E402  (the secrets check: canaries and the scanner)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "build-dev")
ONLY = sys.argv[2:]
WAIT = float(os.environ.get("E2E_WAIT_S", "90"))
NS = "default"
FINALIZER = "vmoperator.vmware.com/virtualmachine"
LAST_RESIZED = "vmoperator.vmware.com/last-resized-vm-class"


def cluster_bin():
    """The directory of the pinned Kubernetes binaries (kubectl among them), built on first use by
    tests/cluster/build.sh (a warm cache answers at once). Tests use this kubectl, never another."""
    return subprocess.run([os.path.join(ROOT, "tests/cluster/build.sh")], check=True,
                          capture_output=True, text=True, timeout=3600).stdout.strip()


def test_env(tmpdir):
    """os.environ for a test: the pinned kubectl first in PATH, kubectl's cache in tmpdir, the
    devenv's admin kubeconfig."""
    env = dict(os.environ)
    env.update({"PATH": cluster_bin() + os.pathsep + env.get("PATH", ""),
                "KUBECONFIG": os.path.join(tmpdir, "kubeconfig"),
                "KUBECACHEDIR": os.path.join(tmpdir, "kubecache")})
    return env


class Env:
    """One devenv in a fresh temporary directory. build: the build dir (default BUILD, from the
    command line); vcsim_args: extra simulator flags (the default slows clones a little so the
    restart test kills vmop mid-create); tag names the directory. Also the base of
    tests/chaos/chaoslib.py's Env."""

    def __init__(self, build=None, vcsim_args="-method-delay CloneVM_Task=400", workers=8,
                 tag="e2e"):
        self.build = build or BUILD
        self.dir = tempfile.mkdtemp(prefix="vmop-%s." % tag)
        self.env = test_env(self.dir)
        self.env.update({"VMOP_BUILD_DIR": self.build, "DEVENV_NO_BUILD": "1",
                         "VMOP_WORKERS": str(workers),
                         "DEVENV_VCSIM_ARGS": vcsim_args})
        self.scanner = None  # canary.Scanner once up; its findings fail the run ("secrets")

    def devenv(self, *args):
        subprocess.run([os.path.join(ROOT, "tests/devenv")] + list(args), env=self.env,
                       check=True, stdout=subprocess.DEVNULL, timeout=240)

    def up(self):
        self.devenv("up", self.dir)
        vc = json.load(open(os.path.join(self.dir, "vcenter.json")))
        self.sim = json.load(open(os.path.join(self.dir, "vcsim.json")))
        self.env.update({"VIMC_URL": vc["url"], "VIMC_USERNAME": vc["username"],
                         "VIMC_PASSWORD": vc["password"], "VIMC_THUMBPRINT": vc["thumbprint"]})
        self.scanner = canary.Scanner(canary.canaries_of(self.dir))
        have = {c.label for c in self.scanner.canaries}
        for want in ("vCenter password", "tenant user data", "ServiceAccount token"):
            if want not in have:
                self.scanner.findings.append("no %s canary in %s" % (want, self.dir))

    def down(self):
        try:
            if self.scanner:  # Events and status need the API server: before devenv down
                try:
                    canary.scan_cluster(self.scanner, lambda *a, **kw: self.kubectl(*a, **kw))
                except (AssertionError, ValueError, OSError, subprocess.SubprocessError) as e:
                    self.scanner.findings.append("scan of Events and status failed: %s" % e)
            self.devenv("down", self.dir)
        finally:
            if self.scanner:  # the operator logs once the operator has stopped
                self.scanner.logs(self.dir)
            self.after_down()
            if os.environ.get("E2E_KEEP"):
                print("kept", self.dir)
            else:
                shutil.rmtree(self.dir, ignore_errors=True)

    def after_down(self):
        """Hook: runs after devenv down, before the directory (and its logs) is removed."""

    def kubectl(self, *args, stdin=None, check=True, timeout=90):
        p = subprocess.run(["kubectl", "--request-timeout=30s"] + list(args), env=self.env,
                           input=stdin, capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError("kubectl %s failed: %s" % (" ".join(args[:3]), p.stderr.strip()))
        return p

    def apply(self, objs):
        for o in objs:
            self.kubectl("apply", "-f", "-", stdin=json.dumps(o))

    def get(self, kind, name, ns=NS):
        p = self.kubectl("get", kind, name, "-n", ns, "-o", "json", check=False)
        return json.loads(p.stdout) if p.returncode == 0 else None

    def vimc(self, *args, check=True):
        p = subprocess.run([os.path.join(self.build, "vimclient/tool/vimc"), "--json"] + list(args),
                           env=self.env, capture_output=True, text=True, timeout=60)
        if check and p.returncode != 0:
            raise AssertionError("vimc %s failed: %s" % (" ".join(args), p.stderr.strip()))
        return json.loads(p.stdout) if p.returncode == 0 and p.stdout.strip() else None

    def operator_log(self, n=30, path=None):
        try:
            return "".join(open(path or os.path.join(self.dir, "operator.log")).readlines()[-n:])
        except OSError:
            return ""


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def wait_for(fn, what, timeout=WAIT, period=0.3):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(period)
    raise AssertionError("timed out after %.0fs waiting for %s" % (timeout, what))


def cond(vm, ctype):
    for c in ((vm or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def vm_obj(name, cls="best-effort-small", image="vmop-tiny-ovf", sc="wcp-default", secret=None,
           extra=None, ns=NS):
    spec = {"className": cls, "imageName": image, "storageClass": sc}
    if secret:
        spec["bootstrap"] = {"cloudInit": {"rawCloudConfig": {"name": secret, "key": "user-data"}}}
    if extra:
        spec.update(extra)
    return {"apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachine",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


def secret_obj(name):
    """A bootstrap Secret; its user data carries the user-data canary (canary.py)."""
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": NS},
            "stringData": {"user-data": canary.user_data("#cloud-config\nusers:\n- name: e2e\n")}}


def wait_running(env, name, timeout=WAIT):
    def ok():
        vm = env.get("vm", name)
        st = (vm or {}).get("status") or {}
        if st.get("powerState") == "PoweredOn" and (st.get("network") or {}).get("primaryIP4"):
            return vm
        return None
    return wait_for(ok, "%s PoweredOn with an IP" % name, timeout)


def wait_cond(env, name, ctype, status, reason=None):
    def ok():
        c = cond(env.get("vm", name), ctype)
        if c and c.get("status") == status and (reason is None or c.get("reason") == reason):
            return c
        return None
    return wait_for(ok, "%s %s=%s%s" % (name, ctype, status, " " + reason if reason else ""))


def delete_and_wait(env, name):
    env.kubectl("delete", "vm", name, "-n", NS, "--wait=false", "--ignore-not-found")
    wait_for(lambda: env.get("vm", name) is None, "%s deleted" % name)


# ---- tests -----------------------------------------------------------------------------------

def vmop_counter(env, name, label=""):
    """A counter from vmop's /metrics (label: text the series' labels contain), 0 when absent."""
    port = open(os.path.join(env.dir, "health.port")).read().strip()
    text = subprocess.run(["curl", "-sf", "http://127.0.0.1:%s/metrics" % port],
                          capture_output=True, text=True, timeout=30).stdout
    return sum(float(ln.split()[-1]) for ln in text.splitlines()
               if ln.startswith(name) and (ln[len(name)] in " {") and label in ln)


def test_create(env):
    finds0 = vmop_counter(env, "vmop_vcenter_calls_total", 'method="FindByUuid"')
    env.apply([secret_obj("e2e-cc"), vm_obj("e2e-be", secret="e2e-cc"),
               vm_obj("e2e-gu", cls="guaranteed-small", secret="e2e-cc",
                      extra={"network": {"hostName": "e2e-gu-host"}})])
    be = wait_running(env, "e2e-be")
    gu = wait_running(env, "e2e-gu")
    # one identity lookup per create: the passes after a create whose status write waited for the
    # IP read the VM it made by its moref (pacing.h, held creates)
    finds = vmop_counter(env, "vmop_vcenter_calls_total", 'method="FindByUuid"') - finds0
    check(finds <= 2, "%d FindByUuid calls for 2 creates" % finds)
    for vm in (be, gu):
        for t in ("VirtualMachineCreated", "VirtualMachinePowerStateSynced",
                  "VirtualMachineReconcileReady", "VirtualMachineClassReady",
                  "VirtualMachineImageReady", "VirtualMachineStorageReady",
                  "VirtualMachineBootstrapReady"):
            c = cond(vm, t)
            check(c and c["status"] == "True", "%s: %s not True: %s" % (vm["metadata"]["name"], t, c))
        st = vm["status"]
        check(st["uniqueID"].startswith("vm-"), "uniqueID %r" % st.get("uniqueID"))
        check(st["class"] == {"apiVersion": "vmoperator.vmware.com/v1alpha6",
                              "kind": "VirtualMachineClass", "name": vm["spec"]["className"]},
              "status.class %r" % st.get("class"))
        check(st.get("hardwareVersion", 0) > 0, "hardwareVersion")
        check(st["instanceUUID"] == vm["spec"]["instanceUUID"], "instanceUUID differs from spec")
        check(st["biosUUID"] == vm["spec"]["biosUUID"], "biosUUID differs from spec")
    wait_cond(env, "e2e-gu", "Ready", "True")
    d = env.kubectl("describe", "vm", "e2e-gu", "-n", NS).stdout
    for word in ("VirtualMachineCreated", "VirtualMachinePowerStateSynced", "Ready", "Created",
                 "PoweredOn", "192.0.2."):
        check(word in d, "describe lacks %r" % word)
    check("#cloud-config" not in d and "e2e\n" not in d.split("Events:")[-1],
          "describe shows user data")

    # vCenter state, read back with vimc
    pg_key = env.sim["portgroup_keys"][0]
    for vm, cpu_res, mem_res in ((be, False, 0), (gu, True, 4096)):
        v = env.vimc("vm", "info", vm["status"]["uniqueID"])
        name = vm["metadata"]["name"]
        check(v["numCPU"] == 2 and v["memoryMB"] == 4096, "%s sizing %s/%s" % (name, v["numCPU"], v["memoryMB"]))
        ca, ma = v["cpuAllocation"], v["memoryAllocation"]
        if cpu_res:
            check(ca["reservation"] > 0 and ca["limit"] == -1, "%s cpu allocation %r" % (name, ca))
        else:
            check(ca.get("reservation", 0) == 0 and ca.get("limit", -1) == -1, "%s cpu allocation %r" % (name, ca))
        check(ma.get("reservation", 0) == mem_res and ma.get("limit", -1) == -1,
              "%s memory allocation %r" % (name, ma))
        check(v["instanceUuid"] == vm["spec"]["instanceUUID"], "%s instanceUuid" % name)
        check(v["biosUuid"] == vm["spec"]["biosUUID"], "%s biosUuid" % name)
        check(len(v["nics"]) == 1 and v["nics"][0]["type"] == "VirtualVmxnet3" and
              v["nics"][0].get("portgroupKey") == pg_key, "%s NIC %r" % (name, v["nics"]))
        ec = v.get("extraConfig") or {}
        check(ec.get("vmservice.namespacedName") == "%s/%s" % (NS, name), "%s namespacedName" % name)
        for k in ("guestinfo.metadata", "guestinfo.metadata.encoding", "guestinfo.userdata",
                  "guestinfo.userdata.encoding"):
            check(k in ec, "%s lacks ExtraConfig %s" % (name, k))
    check(env.vimc("vm", "info", gu["status"]["uniqueID"]).get("hostName") == "e2e-gu-host",
          "guest hostname from cloud-init metadata")


def test_prereqs(env):
    # the binding allows a StorageClass that does not exist yet
    env.kubectl("patch", "nsb", "vsphere", "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"storageClasses": ["wcp-default", "wcp-late"]}}))
    # an imageName no image has is refused at admission (VM Operator's mutating webhook), with
    # the field in the message; a VM naming its image object directly waits for it instead
    p = env.kubectl("apply", "-f", "-", check=False,
                    stdin=json.dumps(vm_obj("e2e-noimage", image="e2e-late-image")))
    check(p.returncode != 0 and "spec.imageName" in p.stderr and "e2e-late-image" in p.stderr,
          "an unknown imageName was not refused: rc %d, %r" % (p.returncode, p.stderr[-300:]))
    noimage = vm_obj("e2e-noimage", image="vmi-e2elate0000000000")
    noimage["spec"]["image"] = {"kind": "VirtualMachineImage", "name": "vmi-e2elate0000000000"}
    env.apply([vm_obj("e2e-noclass", cls="e2e-late-class"),
               noimage,
               vm_obj("e2e-nosecret", secret="e2e-late-secret"),
               vm_obj("e2e-nosc", sc="wcp-late")])
    wait_cond(env, "e2e-noclass", "VirtualMachineClassReady", "False", "NotFound")
    wait_cond(env, "e2e-noimage", "VirtualMachineImageReady", "False")
    wait_cond(env, "e2e-nosecret", "VirtualMachineBootstrapReady", "False", "NotFound")
    wait_cond(env, "e2e-nosc", "VirtualMachineStorageReady", "False", "NotFound")
    for n in ("e2e-noclass", "e2e-noimage", "e2e-nosecret", "e2e-nosc"):
        vm = env.get("vm", n)
        check(not (vm.get("status") or {}).get("uniqueID"), "%s was created in vCenter" % n)
        check(cond(vm, "Ready")["status"] == "False", "%s Ready not False" % n)
    d = env.kubectl("describe", "vm", "e2e-noclass", "-n", NS).stdout
    check("VirtualMachineClassReady" in d and "NotFound" in d, "describe lacks the class condition")

    # fix each one
    cls = env.get("vmclass", "best-effort-small")
    env.apply([{"apiVersion": cls["apiVersion"], "kind": "VirtualMachineClass",
                "metadata": {"name": "e2e-late-class", "namespace": NS}, "spec": cls["spec"]}])
    env.apply([secret_obj("e2e-late-secret")])
    env.apply([{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": "wcp-late"}, "provisioner": "csi.vsphere.vmware.com"}])
    # an image with that display name: a hand-made VirtualMachineImage for the seeded item
    vmis = json.loads(env.kubectl("get", "vmi", "-n", NS, "-o", "json").stdout)["items"]
    src = [i for i in vmis if (i.get("status") or {}).get("name") == "vmop-tiny-ovf"][0]
    env.apply([{"apiVersion": src["apiVersion"], "kind": "VirtualMachineImage",
                "metadata": {"name": "vmi-e2elate0000000000", "namespace": NS},
                "spec": src["spec"]}])
    st = dict(src["status"])
    st["name"] = "e2e-late-image"
    env.kubectl("patch", "vmi", "vmi-e2elate0000000000", "-n", NS, "--subresource=status",
                "--type=merge", "-p", json.dumps({"status": st}))
    for n in ("e2e-noclass", "e2e-noimage", "e2e-nosecret", "e2e-nosc"):
        wait_running(env, n)


def test_paused(env):
    env.kubectl("annotate", "vm", "e2e-be", "-n", NS, "vmoperator.vmware.com/paused=true")
    c = wait_cond(env, "e2e-be", "VirtualMachineReconcileReady", "False",
                  "VirtualMachineReconcilePaused")
    check("paused" in c.get("message", ""), "paused message")
    env.kubectl("annotate", "vm", "e2e-be", "-n", NS, "vmoperator.vmware.com/paused-")
    wait_cond(env, "e2e-be", "VirtualMachineReconcileReady", "True")


def test_delete(env):
    vm = env.get("vm", "e2e-be")
    uid = vm["status"]["uniqueID"]
    check(env.vimc("vm", "info", uid) is not None, "VM not in vCenter before delete")
    delete_and_wait(env, "e2e-be")
    check(env.vimc("vm", "info", uid, check=False) is None, "VM %s still in vCenter" % uid)
    ev = env.kubectl("get", "events", "-n", NS, "--field-selector",
                     "involvedObject.name=e2e-be", "-o", "json").stdout
    check("Deleted" in ev, "no Deleted event")


def count_by_namespaced_name(env):
    counts = {}
    for e in env.vimc("ls", "vm") or []:
        v = env.vimc("vm", "info", e["moref"], check=False)
        if not v:
            continue
        nn = (v.get("extraConfig") or {}).get("vmservice.namespacedName")
        if nn:
            counts.setdefault(nn, set()).add(v["instanceUuid"])
    return counts


def test_restart(env):
    names = ["e2e-r%d" % i for i in range(10)]
    env.apply([secret_obj("e2e-cc")])
    for n in names:
        env.kubectl("apply", "-f", "-", stdin=json.dumps(vm_obj(n, secret="e2e-cc")))
    # kill as soon as the first of the batch exists in vCenter
    wait_for(lambda: any(((env.get("vm", n) or {}).get("status") or {}).get("uniqueID")
                         for n in names[:3]), "the first creates", timeout=60)
    pid = int(open(os.path.join(env.dir, "operator.pid")).read())
    os.kill(pid, signal.SIGKILL)
    done = sum(1 for n in names if ((env.get("vm", n) or {}).get("status") or {}).get("uniqueID"))
    print("  killed vmop with %d of %d VMs reported created" % (done, len(names)), flush=True)
    env.devenv("restart", env.dir, "operator")
    for n in names:
        wait_running(env, n)
    counts = count_by_namespaced_name(env)
    for n in names:
        key = "%s/%s" % (NS, n)
        check(len(counts.get(key, ())) == 1, "%s has %d VMs in vCenter" % (key, len(counts.get(key, ()))))
        vm = env.get("vm", n)
        check(vm["status"]["instanceUUID"] in counts[key], "%s status points at another VM" % n)
    check(len(counts.get("%s/e2e-gu" % NS, ())) == 1, "e2e-gu count changed by the restart")
    for n in names:
        env.kubectl("delete", "vm", n, "-n", NS, "--wait=false")
    wait_for(lambda: all(env.get("vm", n) is None for n in names), "batch deleted")


def test_power(env):
    name = "e2e-gu"
    env.kubectl("patch", "vm", name, "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"powerState": "PoweredOff", "powerOffMode": "Hard"}}))
    # the condition is True before the patch too (message poweredOn): wait for the new one
    c = wait_for(lambda: (lambda c: c if c and c.get("status") == "True" and
                          c.get("message") == "poweredOff" else None)(
        cond(env.get("vm", name), "VirtualMachinePowerStateSynced")),
        "%s VirtualMachinePowerStateSynced True poweredOff" % name)
    vm = env.get("vm", name)
    check(vm["status"]["powerState"] == "PoweredOff", "status.powerState")
    check(env.vimc("vm", "info", vm["status"]["uniqueID"])["powerState"] == "poweredOff",
          "vCenter power state")
    ev = env.kubectl("get", "events", "-n", NS, "--field-selector",
                     "involvedObject.name=%s" % name, "-o", "json").stdout
    check("PowerOff" in ev, "no PowerOff event")
    env.kubectl("patch", "vm", name, "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"powerState": "PoweredOn"}}))
    wait_running(env, name)
    wait_cond(env, name, "Ready", "True")
    # an existing VM may be suspended (only a new one may not): vCenter suspends it
    env.kubectl("patch", "vm", name, "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"powerState": "Suspended", "suspendMode": "Hard"}}))
    wait_for(lambda: (env.get("vm", name).get("status") or {}).get("powerState") == "Suspended",
             "%s status.powerState Suspended" % name)
    check(env.vimc("vm", "info", vm["status"]["uniqueID"])["powerState"] == "suspended",
          "vCenter power state after suspend")
    rr = cond(env.get("vm", name), "VirtualMachineReconcileReady")
    check(not rr or rr.get("reason") != "InvalidSpec", "suspend reported as invalid: %s" % rr)
    env.kubectl("patch", "vm", name, "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"powerState": "PoweredOn"}}))
    wait_running(env, name)
    wait_cond(env, name, "Ready", "True")


def test_storage_policy(env):
    bad_id = "0badc0de-0000-4000-8000-000000000000"
    nsb = env.get("nsb", "vsphere")
    old = list(((nsb or {}).get("spec") or {}).get("storageClasses") or [])
    allowed = old + [c for c in ("wcp-policy", "e2e-policy-unknown") if c not in old]
    env.kubectl("patch", "nsb", "vsphere", "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"storageClasses": allowed}}))
    env.apply([{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": "e2e-policy-unknown"}, "provisioner": "csi.vsphere.vmware.com",
                "parameters": {"storagePolicyID": bad_id}},
               vm_obj("e2e-policy", sc="wcp-policy"),
               vm_obj("e2e-policy-bad", sc="e2e-policy-unknown")])
    try:
        vm = wait_running(env, "e2e-policy")
        c = cond(vm, "VirtualMachineStorageReady")
        check(c and c["status"] == "True", "e2e-policy StorageReady %r" % c)
        v = env.vimc("vm", "info", vm["status"]["uniqueID"])
        want = env.sim["morefs"]["datastore"]
        check(want in (v.get("datastore") or ""),
              "e2e-policy on %r, want the binding's datastore %r" % (v.get("datastore"), want))

        c = wait_cond(env, "e2e-policy-bad", "VirtualMachineStorageReady", "False",
                      "StoragePolicyNotFound")
        msg = c.get("message") or ""
        check(bad_id in msg and "e2e-policy-unknown" in msg, "StorageReady message %r" % msg)
        bad = env.get("vm", "e2e-policy-bad")
        check(not (bad.get("status") or {}).get("uniqueID"), "e2e-policy-bad was created")
        check(cond(bad, "Ready")["status"] == "False", "e2e-policy-bad Ready not False")
        check("%s/e2e-policy-bad" % NS not in count_by_namespaced_name(env),
              "a VM for e2e-policy-bad exists in vCenter")
        c = cond(bad, "VirtualMachineCreated")
        check(c and c["status"] == "False" and c.get("reason") == "StoragePolicyNotFound",
              "e2e-policy-bad VirtualMachineCreated %r" % c)
        wait_for(lambda: (lambda d: "CreateFailed" in d and bad_id in d)(
            env.kubectl("describe", "vm", "e2e-policy-bad", "-n", NS).stdout),
            "the CreateFailed event in kubectl describe")
    finally:
        for n in ("e2e-policy", "e2e-policy-bad"):
            delete_and_wait(env, n)
        env.kubectl("delete", "storageclass", "e2e-policy-unknown", "--wait=false", check=False)
        env.kubectl("patch", "nsb", "vsphere", "-n", NS, "--type=merge", "-p",
                    json.dumps({"spec": {"storageClasses": old}}), check=False)


def webhook_requests(env):
    """vmop's /metrics text and its vmop_webhook_requests_total."""
    port = open(os.path.join(env.dir, "health.port")).read().strip()
    text = subprocess.run(["curl", "-sf", "http://127.0.0.1:%s/metrics" % port],
                          capture_output=True, text=True, timeout=30).stdout
    reqs = [float(ln.split()[1]) for ln in text.splitlines()
            if ln.startswith("vmop_webhook_requests_total ")]
    check(reqs, "no vmop_webhook_requests_total in /metrics")
    return text, reqs[0]


def vm_webhook_counts(env):
    """The API server's counts for the VirtualMachine webhooks: (UPDATE requests sent to them,
    requests their matchConditions excluded)."""
    text = env.kubectl("get", "--raw", "/metrics").stdout
    sent = excluded = 0.0
    for ln in text.splitlines():
        if "virtualmachine.v1alpha6" not in ln and 'name="default.validating.virtualmachine.' \
                not in ln:
            continue
        if ln.startswith("apiserver_admission_webhook_request_total{") and \
                'operation="UPDATE"' in ln:
            sent += float(ln.split()[-1])
        elif ln.startswith("apiserver_admission_match_condition_exclusions_total{"):
            excluded += float(ln.split()[-1])
    return sent, excluded


def test_admission(env):
    """The admission webhooks: `kubectl create -o ...` already carries VM Operator's defaults
    (before any reconcile), for the tenant, and on a server-side dry run too; an immutable field's
    change and a tenant's own instanceUUID are refused with the field's path."""
    tk = os.path.join(env.dir, "tenant-kubeconfig")
    vm = vm_obj("e2e-adm", secret="e2e-adm-cc")
    env.kubectl("--kubeconfig", tk, "apply", "-f", "-", stdin=json.dumps(secret_obj("e2e-adm-cc")))
    p = env.kubectl("--kubeconfig", tk, "create", "-f", "-", "-o", "jsonpath={.spec.instanceUUID}",
                    stdin=json.dumps(vm))
    check(re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
                       p.stdout.strip()),
          "kubectl create printed instanceUUID %r, not a v4 UUID" % p.stdout)
    try:
        got = env.get("vm", "e2e-adm")
        spec = got["spec"]
        check(spec.get("biosUUID") and spec["biosUUID"] != spec["instanceUUID"], "biosUUID %r"
              % spec.get("biosUUID"))
        ci = ((spec.get("bootstrap") or {}).get("cloudInit") or {})
        check(ci.get("instanceID") == spec["biosUUID"], "cloudInit.instanceID %r" % ci.get("instanceID"))
        check(spec.get("powerState") == "PoweredOn" and spec.get("powerOffMode") == "TrySoft",
              "power defaults %r %r" % (spec.get("powerState"), spec.get("powerOffMode")))
        img = spec.get("image") or {}
        check(img.get("kind") == "VirtualMachineImage" and img.get("name", "").startswith("vmi-"),
              "spec.image %r not resolved from imageName" % img)
        nics = (spec.get("network") or {}).get("interfaces") or []
        check(nics and nics[0].get("name") == "eth0", "no default eth0: %r" % nics)
        # the webhook's, not the controller's: the object's one and only spec write was the create
        fields = [m.get("manager") for m in got["metadata"].get("managedFields") or []
                  if m.get("operation") == "Update" and not m.get("manager", "").startswith("kubectl")
                  and "f:spec" in json.dumps(m.get("fieldsV1"))]
        check(not fields, "spec was written after the create by %r" % fields)
        # the finalizer and the class record come with the create too (no write of vmop's first)
        check(FINALIZER in (got["metadata"].get("finalizers") or []),
              "no finalizer from the create: %r" % got["metadata"].get("finalizers"))
        rs = json.loads((got["metadata"].get("annotations") or {}).get(LAST_RESIZED) or "{}")
        check(rs.get("name") == "best-effort-small" and rs.get("uid"),
              "last-resized-vm-class %r" % rs)
        # a server-side dry run is defaulted too, and creates nothing
        dry = json.loads(env.kubectl("--kubeconfig", tk, "create", "--dry-run=server", "-f", "-",
                                     "-o", "json", stdin=json.dumps(vm_obj("e2e-adm-dry"))).stdout)
        check(dry["spec"].get("instanceUUID"), "a dry run got no instanceUUID")
        check(env.get("vm", "e2e-adm-dry") is None, "the dry run created e2e-adm-dry")
        wait_running(env, "e2e-adm")
        # the validating webhook: an immutable field, refused with its path
        p = env.kubectl("--kubeconfig", tk, "patch", "vm", "e2e-adm", "-n", NS, "--type=merge",
                        "-p", json.dumps({"spec": {"imageName": "vmop-tiny-tmpl"}}), check=False)
        check(p.returncode != 0 and "spec.imageName" in p.stderr and "immutable" in p.stderr,
              "an imageName change was not refused: rc %d, %r" % (p.returncode, p.stderr[-300:]))
        # the webhook counts what it answered
        text, reqs = webhook_requests(env)
        check(reqs >= 3, "vmop_webhook_requests_total %r" % reqs)
        check("# TYPE vmop_webhook_requests_total counter" in text, "webhook metric not typed")
        # and a tenant's own instanceUUID on create (privileged-only)
        p = env.kubectl("--kubeconfig", tk, "create", "-f", "-", check=False, stdin=json.dumps(
            vm_obj("e2e-adm-iu", extra={"instanceUUID": "4c3b2a19-0817-4e6f-8d5c-4b3a29180716"})))
        check(p.returncode != 0 and "spec.instanceUUID" in p.stderr,
              "a tenant's instanceUUID was not refused: rc %d, %r" % (p.returncode, p.stderr[-300:]))
        # vmop's own write (the finalizer's removal after the delete) is not reviewed: the
        # webhooks' matchConditions leave vmop's ServiceAccount out (the API server's counts)
        before = vm_webhook_counts(env)
        delete_and_wait(env, "e2e-adm")
        after = vm_webhook_counts(env)
        check(after[0] == before[0], "VirtualMachine UPDATEs were reviewed during the delete: "
              "%r -> %r" % (before[0], after[0]))
        check(after[1] >= before[1] + 2, "the webhooks' matchConditions excluded %r -> %r requests "
              "(want vmop's finalizer removal, by both webhooks)" % (before[1], after[1]))
    finally:
        delete_and_wait(env, "e2e-adm")


def test_server_side_apply(env):
    """A VM created and applied again with `kubectl apply --server-side` (the manifest names no
    finalizer or class record: the webhook added them at create, so the apply's field manager owns
    them) keeps both, and vmop never writes them; it is deleted as usual."""
    name = "e2e-ssa"
    text = json.dumps(vm_obj(name))
    try:
        env.kubectl("apply", "--server-side", "--field-manager=tenant-ssa", "-f", "-", stdin=text)
        wait_running(env, name)
        again = json.loads(env.kubectl("apply", "--server-side", "--field-manager=tenant-ssa",
                                       "-f", "-", "-o", "json", stdin=text).stdout)
        md = again["metadata"]
        check(FINALIZER in (md.get("finalizers") or []),
              "a server-side re-apply took the finalizer off: %r" % md.get("finalizers"))
        check(LAST_RESIZED in (md.get("annotations") or {}),
              "a server-side re-apply took last-resized-vm-class off: %r" % md.get("annotations"))
        writers = [m.get("manager") for m in md.get("managedFields") or []
                   if m.get("manager") == "vmop" and "f:finalizers" in json.dumps(m.get("fieldsV1"))]
        check(not writers, "vmop wrote the finalizer itself: %r" % writers)
    finally:
        delete_and_wait(env, name)


def test_delete_check(env):
    """Opt-in deletion protection: with a delete.check.vmoperator.vmware.com/<component>
    annotation (administrators only) the VM is not deleted from vCenter and an event says why;
    a tenant can neither add nor remove one; once removed, the delete completes."""
    tk = os.path.join(env.dir, "tenant-kubeconfig")
    key = "delete.check.vmoperator.vmware.com/backup"
    name = "e2e-hold"
    env.apply([vm_obj(name)])
    wait_running(env, name)
    p = env.kubectl("--kubeconfig", tk, "annotate", "vm", name, "-n", NS, key + "=tenant",
                    check=False)
    check(p.returncode != 0 and key in p.stderr, "a tenant added a delete check: %r"
          % p.stderr[-200:])
    env.kubectl("annotate", "vm", name, "-n", NS, key + "=in-progress")
    env.kubectl("--kubeconfig", tk, "delete", "vm", name, "-n", NS, "--wait=false")

    def held():
        out = json.loads(env.kubectl("get", "events", "-n", NS, "--field-selector",
                                     "involvedObject.name=%s" % name, "-o", "json").stdout)
        return [e for e in out.get("items") or []
                if e.get("reason") == "DeleteHeld" and key in (e.get("message") or "")]
    wait_for(held, "a DeleteHeld event naming %s" % key)
    check("%s/%s" % (NS, name) in count_by_namespaced_name(env),
          "the VM was deleted from vCenter while a delete check was present")
    check((env.get("vm", name) or {}).get("metadata", {}).get("deletionTimestamp"),
          "the resource is gone while its delete is held")
    p = env.kubectl("--kubeconfig", tk, "annotate", "vm", name, "-n", NS, key + "-",
                    check=False)
    check(p.returncode != 0, "a tenant removed the delete check")
    env.kubectl("annotate", "vm", name, "-n", NS, key + "-")
    wait_for(lambda: env.get("vm", name) is None, "%s deleted once the check is removed" % name)
    check("%s/%s" % (NS, name) not in count_by_namespaced_name(env),
          "the VM is still in vCenter after the delete")


TESTS = [("create", test_create), ("admission", test_admission), ("ssa", test_server_side_apply),
         ("deletecheck", test_delete_check), ("prereqs", test_prereqs), ("paused", test_paused),
         ("power", test_power), ("storage", test_storage_policy),
         ("delete", test_delete), ("restart", test_restart)]


def run_in(env, tests, only, fail_secs=False):
    """Starts env, runs the (name, fn) tests named in only (all when empty) printing PASS/FAIL
    lines (fail_secs: FAIL lines give the duration too), stops env; returns the failed names.
    Shared with tests/chaos/chaoslib.py."""
    failed = []
    # meson stops a test that runs over its timeout with SIGTERM: leave through the finally below,
    # so that devenv down stops the simulator and the control plane (they run in sessions of
    # their own and would outlive this process)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        env.up()
        for name, fn in tests:
            if only and name not in only:
                continue
            t0 = time.monotonic()
            try:
                fn(env)
                print("PASS %s (%.1fs)" % (name, time.monotonic() - t0), flush=True)
            except AssertionError as e:
                failed.append(name)
                took = " (%.1fs)" % (time.monotonic() - t0) if fail_secs else ""
                print("FAIL %s%s: %s" % (name, took, e), flush=True)
                print("---- operator log (tail) ----\n" + env.operator_log(), flush=True)
    finally:
        env.down()
    if env.scanner:
        sc = env.scanner
        if sc.findings:
            failed.append("secrets")
            print("FAIL secrets: %d findings (scanned %s):\n  %s" % (
                len(sc.findings), sc.summary(), "\n  ".join(sc.findings[:20])), flush=True)
        else:
            print("PASS secrets: no canary (%s, the tenant Secrets' user data) in %s" % (
                ", ".join(c.label for c in sc.canaries if not c.label.startswith("user data of")),
                sc.summary()), flush=True)
    return failed


def run_main(tests, prepare=None):
    """Runs the (name, fn) tests (those named on the command line, or all) against one devenv,
    printing PASS/FAIL lines. prepare(env) may adjust the environment before it starts. Returns
    the exit status. Shared by the e2e scripts that import this module."""
    env = Env()
    if prepare:
        prepare(env)
    failed = run_in(env, tests, ONLY)
    print("%d failed: %s" % (len(failed), " ".join(failed)) if failed else "all passed")
    return 1 if failed else 0


def main():
    return run_main(TESTS)


if __name__ == "__main__":
    sys.exit(main())
