#!/usr/bin/env python3
"""e2e_vmservice_sim.py: VirtualMachineService end to end with real VMs (owner: svce2e).

Starts tests/devenv (vCenter simulator + Kubernetes API test server + vmop) in a fresh temporary
directory and drives it with real kubectl (fresh KUBECACHEDIR). The VMs are created by the operator
from the simulator's image and get their IPs from the simulator's guest player; the
VirtualMachineService controller runs inside vmop. One scenario, in order:
  - three VMs (app=web) without a probe, one with a tcpSocket probe on 127.0.0.1:PORT (a socket
    that is bound but not listening: refused) and one with a guestInfo probe (key absent);
  - a VirtualMachineService web (ClusterIP, 80 -> 8080, selector app=web) -> a selectorless
    Service owned by it, Endpoints and an EndpointSlice listing the three plain VMs as ready and
    the two probe VMs as not ready, each with its IP and a targetRef to the VM;
  - the TCP listener starts -> that VM's Ready condition is True and it is a ready address;
  - guestinfo.<key> is set on the other probe VM in vCenter (SOAP ReconfigVM_Task) -> ready;
  - one VM powered off (kubectl patch spec.powerState) -> it leaves the ready set promptly;
  - one VM relabelled -> it leaves the selection (neither ready nor not ready);
  - the TCP listener closes -> that VM is listed not ready again;
  - the VirtualMachineService is deleted -> Service, Endpoints and EndpointSlice are gone.
Every wait is bounded polling. Usage: e2e_vmservice_sim.py BUILD_DIR. Never prints secrets.
"""
import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse
from xml.sax.saxutils import escape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_vm as base  # noqa: E402  (shared check, cond, wait_for; reads sys.argv[1])
import canary  # noqa: E402  (the secrets check every e2e script runs)
from e2e_vm import check, cond  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "build-dev")
WAIT = float(os.environ.get("E2E_WAIT_S", "60"))
PROMPT = float(os.environ.get("E2E_PROMPT_S", "15"))  # bound for "promptly"
NS = "default"
SVC = "web"
PLAIN = ["web-1", "web-2", "web-3"]
TCPVM = "web-tcp"
GIVM = "web-gi"
GIKEY = "e2e.ready"  # the probe's key; vCenter key guestinfo.e2e.ready


class Env:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="vmop-e2e-svc.")
        self.env = base.test_env(self.dir)
        self.env.update({"VMOP_BUILD_DIR": BUILD, "DEVENV_NO_BUILD": "1", "VMOP_WORKERS": "8"})
        self.vc = None
        self.sim = None
        self.scanner = None

    def devenv(self, *args):
        subprocess.run([os.path.join(ROOT, "tests/devenv")] + list(args), env=self.env,
                       check=True, stdout=subprocess.DEVNULL, timeout=240)

    def up(self):
        self.devenv("up", self.dir)
        with open(os.path.join(self.dir, "vcenter.json")) as f:
            self.vc = json.load(f)
        with open(os.path.join(self.dir, "vcsim.json")) as f:
            self.sim = json.load(f)
        self.env.update({"VIMC_URL": self.vc["url"], "VIMC_USERNAME": self.vc["username"],
                         "VIMC_PASSWORD": self.vc["password"],
                         "VIMC_THUMBPRINT": self.vc["thumbprint"]})
        self.scanner = canary.Scanner(canary.canaries_of(self.dir))

    def down(self):
        """Stops everything; returns sanitizer reports found in the component logs (an ASan build
        reports leaks and errors there when a component exits)."""
        try:
            if self.scanner:  # Events and status need the API server: before devenv down
                try:
                    canary.scan_cluster(self.scanner, lambda *a, **kw: self.kubectl(*a, **kw))
                except (AssertionError, ValueError, OSError, subprocess.SubprocessError) as e:
                    self.scanner.findings.append("scan of Events and status failed: %s" % e)
            self.devenv("down", self.dir)
            if self.scanner:  # the operator logs once the operator has stopped
                self.scanner.logs(self.dir)
            return self.sanitizer_reports()
        finally:
            if os.environ.get("E2E_KEEP"):
                print("kept", self.dir)
            else:
                shutil.rmtree(self.dir, ignore_errors=True)

    def kubectl(self, *args, stdin=None, check=True):
        p = subprocess.run(["kubectl", "--request-timeout=30s"] + list(args), env=self.env,
                           input=stdin, capture_output=True, text=True, timeout=90)
        if check and p.returncode != 0:
            raise AssertionError("kubectl %s failed: %s" % (" ".join(args[:3]), p.stderr.strip()))
        return p

    def apply(self, objs):
        # one JSON stream (concatenated objects), one kubectl run
        self.kubectl("apply", "-f", "-", stdin="\n".join(json.dumps(o) for o in objs))

    def get(self, kind, name, ns=NS):
        p = self.kubectl("get", kind, name, "-n", ns, "-o", "json", check=False)
        return json.loads(p.stdout) if p.returncode == 0 else None

    def vimc(self, *args):
        p = subprocess.run([os.path.join(BUILD, "vimclient/tool/vimc"), "--json"] + list(args),
                           env=self.env, capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise AssertionError("vimc %s failed: %s" % (" ".join(args), p.stderr.strip()))
        return json.loads(p.stdout) if p.stdout.strip() else None

    def sanitizer_reports(self):
        found = []
        for c in ("operator", "faultproxy"):
            try:
                with open(os.path.join(self.dir, c + ".log"), errors="replace") as f:
                    for line in f:
                        if "ERROR: AddressSanitizer" in line or "ERROR: LeakSanitizer" in line \
                                or "runtime error:" in line:
                            found.append("%s: %s" % (c, line.strip()[:200]))
            except OSError:
                pass
        return found

    def operator_log(self, n=40):
        try:
            with open(os.path.join(self.dir, "operator.log")) as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""


class Soap:
    """A minimal vim25 SOAP client for what vimc cannot do (ExtraConfig reconfigure). The server
    certificate is pinned by its SHA-256 thumbprint. The password goes only into the Login body."""

    def __init__(self, sdk_url, thumbprint):
        u = urllib.parse.urlsplit(sdk_url)
        self.host, self.port, self.path = u.hostname, u.port, u.path or "/sdk"
        self.thumb = thumbprint.replace(":", "").lower()
        self.cookie = None

    def call(self, body):
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE  # pinned below instead
        conn = http.client.HTTPSConnection(self.host, self.port, context=ctx, timeout=30)
        try:
            conn.connect()
            der = conn.sock.getpeercert(binary_form=True)
            if hashlib.sha256(der).hexdigest() != self.thumb:
                raise AssertionError("vCenter certificate does not match the thumbprint")
            env = ('<?xml version="1.0" encoding="UTF-8"?>'
                   '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" '
                   'xmlns:xsd="http://www.w3.org/2001/XMLSchema" '
                   'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
                   '<soapenv:Body>%s</soapenv:Body></soapenv:Envelope>' % body)
            hdr = {"Content-Type": "text/xml; charset=utf-8", "SOAPAction": "urn:vim25/7.0"}
            if self.cookie:
                hdr["Cookie"] = self.cookie
            conn.request("POST", self.path, body=env.encode(), headers=hdr)
            r = conn.getresponse()
            data = r.read(1 << 20).decode("utf-8", "replace")
            c = r.getheader("Set-Cookie")
            if c:
                self.cookie = c.split(";", 1)[0]
            if r.status != 200:
                # a fault names the method and the fault, never the request (which may hold the
                # password)
                raise AssertionError("SOAP HTTP %d: %s" % (r.status, data[:300]))
            return data
        finally:
            conn.close()

    def login(self, user, password):
        self.call('<Login xmlns="urn:vim25"><_this type="SessionManager">SessionManager</_this>'
                  '<userName>%s</userName><password>%s</password></Login>'
                  % (escape(user), escape(password)))

    def set_extra_config(self, vm_moref, key, value):
        data = self.call('<ReconfigVM_Task xmlns="urn:vim25"><_this type="VirtualMachine">%s</_this>'
                         '<spec><extraConfig><key>%s</key><value xsi:type="xsd:string">%s</value>'
                         '</extraConfig></spec></ReconfigVM_Task>'
                         % (escape(vm_moref), escape(key), escape(value)))
        check("ReconfigVM_TaskResponse" in data, "ReconfigVM_Task: unexpected answer")


T0 = time.monotonic()


def mark(msg):
    print("  [%5.1fs] %s" % (time.monotonic() - T0, msg), flush=True)


def wait_for(fn, what, timeout=WAIT):
    return base.wait_for(fn, what, timeout)


def vm_obj(name, labels, probe=None):
    spec = {"className": "best-effort-small", "imageName": "vmop-tiny-ovf",
            "storageClass": "wcp-default"}
    if probe:
        spec["readinessProbe"] = probe
    return {"apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachine",
            "metadata": {"name": name, "namespace": NS, "labels": labels}, "spec": spec}


def vmservice_obj():
    return {"apiVersion": "vmoperator.vmware.com/v1alpha5", "kind": "VirtualMachineService",
            "metadata": {"name": SVC, "namespace": NS, "labels": {"tier": "frontend"}},
            "spec": {"type": "ClusterIP", "selector": {"app": "web"},
                     "ports": [{"name": "http", "protocol": "TCP", "port": 80,
                                "targetPort": 8080}]}}


def wait_running(env, name):
    return base.wait_running(env, name, WAIT)


def wait_ready_cond(env, name, status):
    def ok():
        c = cond(env.get("vm", name), "Ready")
        return c if c and c.get("status") == status else None
    return wait_for(ok, "%s Ready=%s" % (name, status))


def published(env):
    """What the three objects say now: {"ep": (ready, notready), "slice": (ready, notready)}, each
    a dict VM name -> IP, or None when an object is missing. Checks every address's targetRef."""
    out = {}
    ep = env.get("endpoints", SVC)
    if ep is None:
        return None
    subsets = ep.get("subsets") or []
    check(len(subsets) <= 1, "Endpoints has %d subsets" % len(subsets))
    r, n = {}, {}
    for s in subsets:
        check([p.get("port") for p in s.get("ports") or []] == [8080],
              "Endpoints ports %r" % s.get("ports"))
        for key, into in (("addresses", r), ("notReadyAddresses", n)):
            for a in s.get(key) or []:
                t = a.get("targetRef") or {}
                check(t.get("kind") == "VirtualMachine" and t.get("namespace") == NS and t.get("uid"),
                      "Endpoints targetRef %r" % t)
                into[t["name"]] = a.get("ip")
    out["ep"] = (r, n)
    sl = env.get("endpointslice", SVC)
    if sl is None:
        return None
    r, n = {}, {}
    for e in sl.get("endpoints") or []:
        t = e.get("targetRef") or {}
        check(t.get("kind") == "VirtualMachine" and t.get("uid"), "slice targetRef %r" % t)
        check(len(e.get("addresses") or []) == 1, "slice addresses %r" % e.get("addresses"))
        ((r if (e.get("conditions") or {}).get("ready") is True else n))[t["name"]] = \
            e["addresses"][0]
    out["slice"] = (r, n)
    return out


def want(env, ready, notready, what, timeout=WAIT, maybe=()):
    """Waits until Endpoints and the EndpointSlice list exactly these VM names as ready / not
    ready (names in maybe: not ready or left out), with the VMs' current primary IPs. Returns the
    seconds it took."""
    t0 = time.monotonic()

    def ok():
        p = published(env)
        if not p:
            return None
        for k in ("ep", "slice"):
            nr = [n for n in p[k][1] if n not in maybe]
            if sorted(p[k][0]) != sorted(ready) or sorted(nr) != sorted(notready):
                return None
        return p
    try:
        p = wait_for(ok, what, timeout)
    except AssertionError:
        raise AssertionError("%s; now: %r" % (what, published(env)))
    for name in list(ready) + list(notready):
        vm = env.get("vm", name)
        ip = vm["status"]["network"]["primaryIP4"]
        for k in ("ep", "slice"):
            got = p[k][0].get(name) or p[k][1].get(name)
            check(got == ip, "%s: %s lists IP %s, VM has %s" % (name, k, got, ip))
    return time.monotonic() - t0


def uid_of(env, kind, name):
    return env.get(kind, name)["metadata"]["uid"]


def scenario(env, listener, port):
    plain = [vm_obj(n, {"app": "web", "e2e": "svc"}) for n in PLAIN]
    tcp = vm_obj(TCPVM, {"app": "web"},
                 {"tcpSocket": {"host": "127.0.0.1", "port": port},
                  "periodSeconds": 1, "timeoutSeconds": 1})
    gi = vm_obj(GIVM, {"app": "web"},
                {"guestInfo": [{"key": GIKEY, "value": "^yes-"}], "periodSeconds": 1})
    other = vm_obj("db-1", {"app": "db"})  # never selected
    env.apply(plain + [tcp, gi, other, vmservice_obj()])
    for n in PLAIN + [TCPVM, GIVM, "db-1"]:
        wait_running(env, n)
    wait_ready_cond(env, TCPVM, "False")
    wait_ready_cond(env, GIVM, "False")
    mark("6 VMs PoweredOn with IPs, probe VMs Ready=False")

    # the Service: selectorless, owned by the VirtualMachineService, type and ports copied
    want(env, PLAIN, [TCPVM, GIVM], "3 ready + 2 probe VMs not ready")
    mark("Endpoints and EndpointSlice: 3 ready, 2 not ready")
    vms = env.get("vmservice", SVC)
    check("vmoperator.vmware.com/virtualmachineservice" in vms["metadata"].get("finalizers", []),
          "finalizer missing")
    svc = env.get("service", SVC)
    check(svc is not None, "Service missing")
    spec = svc["spec"]
    check(spec.get("type") == "ClusterIP", "Service type %r" % spec.get("type"))
    check(not spec.get("selector"), "Service has a selector %r" % spec.get("selector"))
    ports = spec.get("ports") or []
    check(len(ports) == 1 and ports[0].get("port") == 80 and ports[0].get("targetPort") == 8080
          and ports[0].get("name") == "http", "Service ports %r" % ports)
    check((svc["metadata"].get("labels") or {}).get("tier") == "frontend", "labels not carried")
    for kind in ("service", "endpoints", "endpointslice"):
        o = env.get(kind, SVC)
        refs = o["metadata"].get("ownerReferences") or []
        check(any(r.get("kind") == "VirtualMachineService" and r.get("name") == SVC and
                  r.get("uid") == vms["metadata"]["uid"] and r.get("controller") is True
                  for r in refs), "%s ownerReferences %r" % (kind, refs))
    sl = env.get("endpointslice", SVC)
    check(sl.get("addressType") == "IPv4", "slice addressType")
    check((sl["metadata"].get("labels") or {}).get("kubernetes.io/service-name") == SVC,
          "slice service-name label")
    check([p.get("port") for p in sl.get("ports") or []] == [8080], "slice ports")
    ep = env.get("endpoints", SVC)
    for a in ep["subsets"][0]["addresses"]:
        t = a["targetRef"]
        check(t["uid"] == uid_of(env, "vm", t["name"]), "%s targetRef uid" % t["name"])
    d = env.kubectl("describe", "vmservice", SVC, "-n", NS).stdout
    check("ClusterIP" in d and "8080" in d, "describe vmservice lacks type/ports")

    # tcpSocket probe: start listening on the refused port -> Ready -> a ready address
    listener.listen(16)
    wait_ready_cond(env, TCPVM, "True")
    want(env, PLAIN + [TCPVM], [GIVM], "the tcp probe VM ready")
    mark("tcpSocket probe passes -> ready")

    # guestInfo probe: set guestinfo.<key> in vCenter -> Ready
    moref = env.get("vm", GIVM)["status"]["uniqueID"]
    soap = Soap(env.sim["sdk"], env.vc["thumbprint"])
    soap.login(env.vc["username"], env.vc["password"])
    bad, good = "e2e-nope-7f3a", "yes-e2e-4c1d"
    soap.set_extra_config(moref, "guestinfo." + GIKEY, bad)
    # vimc elides guestinfo values: the key is there
    check("guestinfo." + GIKEY in (env.vimc("vm", "info", moref).get("extraConfig") or {}),
          "vCenter lacks guestinfo.%s" % GIKEY)

    def mismatch():
        c = cond(env.get("vm", GIVM), "Ready")
        return c if c and c["status"] == "False" and "match" in c.get("message", "") else None
    c = wait_for(mismatch, "%s Ready False: value does not match" % GIVM)
    check(bad not in json.dumps(c), "the Ready condition shows the guestinfo value")
    soap.set_extra_config(moref, "guestinfo." + GIKEY, good)
    c = wait_ready_cond(env, GIVM, "True")
    check(good not in json.dumps(env.get("vm", GIVM).get("status")), "status shows the value")
    want(env, PLAIN + [TCPVM, GIVM], [], "the guestInfo probe VM ready")
    mark("guestInfo probe: mismatch -> not ready, match -> ready")

    # power one off -> leaves the ready set promptly
    env.kubectl("patch", "vm", "web-2", "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"powerState": "PoweredOff", "powerOffMode": "Hard"}}))
    dt = want(env, ["web-1", "web-3", TCPVM, GIVM], [], "powered-off VM not ready",
              timeout=PROMPT, maybe=["web-2"])
    mark("power-off left the ready set after %.1fs" % dt)
    check(env.get("vm", "web-2")["status"]["powerState"] == "PoweredOff", "web-2 not PoweredOff")

    # relabel one -> leaves the selection
    env.kubectl("label", "vm", "web-3", "-n", NS, "app=other", "--overwrite")
    dt = want(env, ["web-1", TCPVM, GIVM], [], "relabelled VM out of the selection",
              timeout=PROMPT, maybe=["web-2"])
    mark("relabel left the selection after %.1fs" % dt)

    # the TCP probe fails again -> not ready
    listener.close()
    wait_ready_cond(env, TCPVM, "False")
    want(env, ["web-1", GIVM], [TCPVM], "the tcp probe VM not ready again", timeout=PROMPT,
         maybe=["web-2"])
    mark("tcpSocket probe fails -> not ready")
    ev = json.loads(env.kubectl("get", "events", "-n", NS, "--field-selector",
                                "involvedObject.name=%s" % TCPVM, "-o", "json").stdout)
    reasons = sorted({e.get("reason", "") for e in ev.get("items") or []})
    # issue 7: an event on each Ready transition (False -> True -> False here)
    check("Ready" in reasons and "NotReady" in reasons,
          "no readiness transition events for %s (events: %s)" % (TCPVM, ", ".join(reasons)))

    # delete the VirtualMachineService -> the owned objects are gone
    env.kubectl("delete", "vmservice", SVC, "-n", NS, "--timeout=30s")
    for kind in ("vmservice", "service", "endpoints", "endpointslice"):
        wait_for(lambda k=kind: env.get(k, SVC) is None, "%s %s gone" % (kind, SVC))
    mark("VirtualMachineService deleted -> Service, Endpoints, EndpointSlice gone")
    # the VMs are untouched
    check(env.get("vm", "web-1")["status"]["powerState"] == "PoweredOn", "web-1 disturbed")


def main():
    # a bound socket that does not listen refuses connections; listen() later makes the probe pass
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    env = Env()
    rc = 1
    t0 = time.monotonic()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # meson's timeout: still devenv down
    try:
        env.up()
        mark("devenv up")
        scenario(env, listener, port)
        print("PASS vmservice (%.1fs)" % (time.monotonic() - t0), flush=True)
        rc = 0
    except Exception as e:  # noqa: BLE001 - any failure (assertion, timeout, I/O) fails the test
        print("FAIL vmservice: %s: %s" % (type(e).__name__, e), flush=True)
        print("---- operator log (tail) ----\n" + env.operator_log(), flush=True)
    finally:
        listener.close()
        reports = env.down()
    for r in reports or []:
        print("SANITIZER " + r, flush=True)
        rc = 1
    sc = env.scanner
    if sc and sc.findings:
        print("FAIL secrets: %d findings (scanned %s):\n  %s" % (
            len(sc.findings), sc.summary(), "\n  ".join(sc.findings[:20])), flush=True)
        rc = 1
    elif sc:
        print("PASS secrets: no canary (%s) in %s" % (
            ", ".join(c.label for c in sc.canaries), sc.summary()), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
