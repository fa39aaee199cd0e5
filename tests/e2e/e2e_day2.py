#!/usr/bin/env python3
"""e2e_day2.py: end-to-end tests of the day-2 behaviour of the VirtualMachine controller.

Starts its own tests/devenv (simulator + API test server + vmop, --resync-period 600, so anything
noticed within seconds came through the vCenter change feed) and drives it with kubectl and vimc:
  drift     power off in vCenter -> powered on again within seconds, PowerStateDrift event
  restart   spec.nextRestartTime "now" -> status.lastRestartTime set once, one Restarted event
  resize    className change while powered on -> ClassConfigurationSynced False ClassNameChanged;
            power off -> resized in vCenter; numCPU changed in vCenter while off (SOAP
            ReconfigVM_Task) -> set back within seconds, ConfigurationDrift event; power on -> True
  pool      an ipv4Pool on the network: 10 concurrent VMs get unique addresses (annotation, status,
            the guest); the pool exhausted -> NetworkReady False IPPoolExhausted; a delete frees
            an address for the waiting VM
  vanished  the VM destroyed in vCenter -> recreated with the same identity, VirtualMachineNotFound
            event (the documented behaviour, docs/user-guide.md)
Every wait is bounded polling. Usage: e2e_day2.py BUILD_DIR [TEST...]. Never prints secrets.
"""
import json
import os
import ssl
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_vm as base  # noqa: E402  (shares Env, wait_for, cond, vm_obj; reads sys.argv[1])
from e2e_vm import NS, check, vm_obj, wait_cond, wait_for, wait_running  # noqa: E402

FAST = float(os.environ.get("E2E_FEED_WAIT_S", "20"))  # "within seconds" (resync is 600 s)


def events(env, name, reason):
    p = env.kubectl("get", "events", "-n", NS, "--field-selector",
                    "involvedObject.name=%s" % name, "-o", "json")
    return [e for e in json.loads(p.stdout).get("items", []) if e.get("reason") == reason]


def event_count(env, name, reason):
    return sum(int(e.get("count") or 1) for e in events(env, name, reason))


def metrics(env):
    """vmop's /metrics as {series: value}."""
    port = int(open(os.path.join(env.dir, "health.port")).read())
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        text = r.read().decode()
    m = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            m[k] = float(v)
    return m


# ---- a minimal SOAP client for what vimc does not do (reconfigure behind vmop's back) ----------

class Soap:
    def __init__(self, env):
        self.url = env.env["VIMC_URL"]
        if not self.url.rstrip("/").endswith("/sdk"):
            self.url = self.url.rstrip("/") + "/sdk"
        self.ctx = ssl.create_default_context()
        self.ctx.check_hostname = False
        self.ctx.verify_mode = ssl.CERT_NONE  # loopback simulator only
        self.cookie = None
        self.call("Login", '<_this type="SessionManager">SessionManager</_this>'
                  '<userName>%s</userName><password>%s</password>'
                  % (env.env["VIMC_USERNAME"], env.env["VIMC_PASSWORD"]))

    def call(self, method, body):
        env = ('<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope '
               'xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" '
               'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
               '<soapenv:Body><%s xmlns="urn:vim25">%s</%s></soapenv:Body></soapenv:Envelope>'
               % (method, body, method))
        req = urllib.request.Request(self.url, data=env.encode(), method="POST")
        req.add_header("Content-Type", "text/xml; charset=utf-8")
        req.add_header("SOAPAction", "urn:vim25/8.0")
        if self.cookie:
            req.add_header("Cookie", self.cookie)
        with urllib.request.urlopen(req, context=self.ctx, timeout=30) as r:
            c = r.headers.get("Set-Cookie")
            if c:
                self.cookie = c.split(";")[0]
            return r.read().decode()

    def set_cpus(self, moref, n):
        self.call("ReconfigVM_Task", '<_this type="VirtualMachine">%s</_this>'
                  '<spec><numCPUs>%d</numCPUs></spec>' % (moref, n))


# ---- tests -----------------------------------------------------------------------------------

def test_drift(env):
    env.apply([vm_obj("d2-drift")])
    vm = wait_running(env, "d2-drift")
    wait_cond(env, "d2-drift", "Ready", "True")
    uid = vm["status"]["uniqueID"]
    env.vimc("vm", "power", "off", uid)
    t0 = time.monotonic()
    wait_for(lambda: env.vimc("vm", "info", uid)["powerState"] == "poweredOn",
             "d2-drift powered on again by vmop", timeout=FAST)
    print("  power drift repaired in %.1fs" % (time.monotonic() - t0), flush=True)
    wait_for(lambda: events(env, "d2-drift", "PowerStateDrift"), "PowerStateDrift event")
    ev = events(env, "d2-drift", "PowerStateDrift")[0]
    check("expected PoweredOn" in ev.get("message", ""), "drift message %r" % ev.get("message"))
    wait_running(env, "d2-drift")
    # /metrics: the registry's families next to the older totals
    m = metrics(env)
    check(m.get('vmop_vcenter_feed_watches{endpoint="vcsim"}', 0) >= 1, "no live feed watch in /metrics")
    check(any(k.startswith("vmop_reconcile_total{") and v > 0 for k, v in m.items()),
          "no vmop_reconcile_total in /metrics")
    for k in ("vmop_vcenter_soap_calls_total", "vmop_kube_requests_total", "vmop_vm_reconciles_total",
              "vmop_vm_drift_repaired_total"):
        check(k in m, "/metrics lacks %s" % k)
    check(m["vmop_vm_drift_repaired_total"] >= 1, "drift not counted")


def test_restart(env):
    name = "d2-drift"
    wait_running(env, name)
    env.kubectl("patch", "vm", name, "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"nextRestartTime": "now", "restartMode": "Hard"}}))
    vm = wait_for(lambda: (lambda v: v if (v.get("status") or {}).get("lastRestartTime") else None)(
        env.get("vm", name)), "status.lastRestartTime")
    check(vm["spec"]["nextRestartTime"] != "now", "nextRestartTime still 'now'")
    check(vm["status"]["lastRestartTime"] == vm["spec"]["nextRestartTime"],
          "lastRestartTime %r != nextRestartTime %r"
          % (vm["status"]["lastRestartTime"], vm["spec"]["nextRestartTime"]))
    wait_for(lambda: event_count(env, name, "Restarted") >= 1, "Restarted event")
    # the restart is marked in vCenter before the reset, so a crash cannot restart twice
    ec = env.vimc("vm", "info", vm["status"]["uniqueID"]).get("extraConfig") or {}
    check(ec.get("vmservice.lastRestartTime") == vm["spec"]["nextRestartTime"],
          "vmservice.lastRestartTime %r is not nextRestartTime" % ec.get("vmservice.lastRestartTime"))
    # nothing asks again: after a later reconcile (a harmless spec change bumps the generation,
    # and VirtualMachineCreated's observedGeneration shows vmop reconciled it) still one restart
    wait_running(env, name)
    env.kubectl("patch", "vm", name, "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"powerOffMode": "TrySoft"}}))
    wait_for(lambda: (lambda v: (base.cond(v, "VirtualMachineCreated") or {}).get("observedGeneration")
                      == v["metadata"]["generation"])(env.get("vm", name)),
             "a reconcile after the restart (observedGeneration)")
    check(event_count(env, name, "Restarted") == 1,
          "restarted %d times" % event_count(env, name, "Restarted"))


def test_resize(env):
    name = "d2-drift"
    wait_running(env, name)
    uid = env.get("vm", name)["status"]["uniqueID"]
    env.kubectl("patch", "vm", name, "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"className": "best-effort-large"}}))
    c = wait_cond(env, name, "VirtualMachineClassConfigurationSynced", "False", "ClassNameChanged")
    check("power" in c.get("message", ""), "message does not say a power cycle is needed: %r" % c)
    check(env.vimc("vm", "info", uid)["numCPU"] == 2, "resized while powered on")
    env.kubectl("patch", "vm", name, "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"powerState": "PoweredOff", "powerOffMode": "Hard"}}))
    wait_for(lambda: (lambda v: v["powerState"] == "poweredOff" and v["numCPU"] == 4 and
                      v["memoryMB"] == 16384)(env.vimc("vm", "info", uid)),
             "powered off and resized to best-effort-large")
    wait_cond(env, name, "VirtualMachinePowerStateSynced", "True")

    # CPU changed in vCenter behind vmop's back: set back from the feed's event, with an event
    # naming the field (the VM is off: vSphere applies CPU changes only then)
    Soap(env).set_cpus(uid, 6)
    t0 = time.monotonic()
    wait_for(lambda: env.vimc("vm", "info", uid)["numCPU"] == 4, "numCPU set back", timeout=FAST)
    print("  CPU drift repaired in %.1fs" % (time.monotonic() - t0), flush=True)
    wait_for(lambda: events(env, name, "ConfigurationDrift"), "ConfigurationDrift event")
    msg = events(env, name, "ConfigurationDrift")[0].get("message", "")
    check("numCPUs" in msg, "ConfigurationDrift message does not name numCPUs: %r" % msg)
    env.kubectl("patch", "vm", name, "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"powerState": "PoweredOn"}}))
    wait_running(env, name)
    wait_cond(env, name, "VirtualMachineClassConfigurationSynced", "True")
    vm = env.get("vm", name)
    check(vm["status"]["class"]["name"] == "best-effort-large", "status.class %r" % vm["status"]["class"])
    ann = wait_for(lambda: ((env.get("vm", name)["metadata"].get("annotations") or {})
                            .get("vmoperator.vmware.com/last-resized-vm-class")), "last-resized-vm-class")
    check(json.loads(ann).get("name") == "best-effort-large", "last-resized-vm-class %r" % ann)


POOL = {"ranges": [{"start": "10.20.0.10", "end": "10.20.0.20"}], "prefix": 24,
        "gateway": "10.20.0.1", "nameservers": ["10.20.0.2"]}  # 11 usable addresses


def pool_addr(vm):
    v = ((vm or {}).get("metadata", {}).get("annotations") or {}).get("infra.vmop.io/ipv4.eth0")
    return v.split(":", 1)[1].split("/")[0] if v else None


def test_pool(env):
    nsb = env.get("nsb", "vsphere")
    nets = nsb["spec"]["networks"]
    # VMs already on the network get an address too (those with a cloud-init bootstrap: without
    # one the guest could not receive it): 11 usable ones for this test's VMs
    existing = sum(1 for v in json.loads(env.kubectl("get", "vm", "-n", NS, "-o", "json").stdout)["items"]
                   if ((v["spec"].get("bootstrap") or {}).get("cloudInit")) is not None)
    pool = json.loads(json.dumps(POOL))
    pool["ranges"][0]["end"] = "10.20.0.%d" % (20 + existing)
    nets[0]["ipv4Pool"] = pool
    env.kubectl("patch", "nsb", "vsphere", "-n", NS, "--type=merge", "-p",
                json.dumps({"spec": {"networks": nets}}))
    names = ["d2-p%d" % i for i in range(10)]
    env.apply([base.secret_obj("d2-cc")])
    # created together (parallel applies): the allocations race in vmop's workers
    threads = [threading.Thread(target=env.apply, args=([vm_obj(n, secret="d2-cc")],))
               for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    addrs = {}
    for n in names:
        vm = wait_running(env, n)
        addrs[n] = pool_addr(vm)
        check(addrs[n] and addrs[n].startswith("10.20.0."), "%s pool annotation %r" % (n, addrs[n]))
        # the guest (simulator's guest player) applied the static address from the metadata
        check(vm["status"]["network"]["primaryIP4"] == addrs[n],
              "%s primaryIP4 %r != pool address %r" % (n, vm["status"]["network"]["primaryIP4"], addrs[n]))
        ifs = vm["status"]["network"].get("interfaces") or []
        check(any(addrs[n] in json.dumps(i) for i in ifs), "%s status.network.interfaces lacks the address" % n)
        ec = env.vimc("vm", "info", vm["status"]["uniqueID"]).get("extraConfig") or {}
        check("guestinfo.metadata" in ec, "%s has no metadata" % n)
    check(len(set(addrs.values())) == len(names), "duplicate pool addresses: %r" % addrs)
    # the 11th takes the last address; the 12th finds the pool exhausted
    env.apply([vm_obj("d2-p10", secret="d2-cc")])
    last = pool_addr(wait_running(env, "d2-p10"))
    check(last not in addrs.values(), "d2-p10 got a taken address")
    env.apply([vm_obj("d2-p11", secret="d2-cc")])
    c = wait_cond(env, "d2-p11", "VirtualMachineNetworkReady", "False", "IPPoolExhausted")
    check(not (env.get("vm", "d2-p11").get("status") or {}).get("uniqueID"), "created without an address")
    print("  exhausted: %s" % c.get("message", "")[:80], flush=True)
    # delete one: its address is released and handed to the waiting VM
    freed = addrs["d2-p3"]
    base.delete_and_wait(env, "d2-p3")
    vm = wait_running(env, "d2-p11")
    check(pool_addr(vm) == freed, "d2-p11 got %r, expected the freed %r" % (pool_addr(vm), freed))
    for n in names + ["d2-p10", "d2-p11"]:
        if n != "d2-p3":
            env.kubectl("delete", "vm", n, "-n", NS, "--wait=false")
    wait_for(lambda: all(env.get("vm", n) is None for n in names + ["d2-p10", "d2-p11"]),
             "pool VMs deleted")


def test_vanished(env):
    name = "d2-gone"
    env.apply([vm_obj(name)])
    vm = wait_running(env, name)
    uid, iu = vm["status"]["uniqueID"], vm["status"]["instanceUUID"]
    # vimc powers the VM off, then destroys it; vmop may repair the power-off in between (it is
    # drift), which makes the destroy fail with InvalidPowerState: try again (bounded)
    wait_for(lambda: env.vimc("vm", "destroy", "--force", uid, check=False) is not None,
             "%s destroyed in vCenter" % uid, timeout=FAST)
    t0 = time.monotonic()
    try:
        new = wait_for(lambda: (lambda v: v if (v.get("status") or {}).get("uniqueID")
                                not in (None, uid) else None)(env.get("vm", name)),
                       "recreated", timeout=FAST + 30)
    except AssertionError:
        print("  feed metrics: %s" % {k: v for k, v in metrics(env).items() if "feed" in k},
              flush=True)
        raise
    print("  recreated in %.1fs" % (time.monotonic() - t0), flush=True)
    check(new["status"]["instanceUUID"] == iu, "recreated with another instanceUUID")
    wait_for(lambda: events(env, name, "VirtualMachineNotFound"), "VirtualMachineNotFound event")
    counts = base.count_by_namespaced_name(env)
    check(len(counts.get("%s/%s" % (NS, name), ())) == 1, "%s has %r VMs" % (name, counts.get("%s/%s" % (NS, name))))
    wait_running(env, name)


TESTS = [("drift", test_drift), ("restart", test_restart), ("resize", test_resize),
         ("pool", test_pool), ("vanished", test_vanished)]


def main():
    def prepare(env):
        env.env["DEVENV_VCSIM_ARGS"] = ""

    return base.run_main(TESTS, prepare)


if __name__ == "__main__":
    sys.exit(main())
