"""chaoslib.py: shared helpers of the chaos, fault, HA and bad-input tests and the benchmarks.

Env starts tests/devenv (vCenter simulator + real kube-apiserver, etcd and kube-controller-manager +
vmop) in a fresh temporary directory, drives it with the pinned kubectl (fresh KUBECACHEDIR), reads
vCenter back with vimc, injects API server faults through the proxy in front of the API server
(tests/cluster/faultproxy) and checks the end-state invariants:
  - every VirtualMachine resource has exactly one VM in vCenter (by vmservice.namespacedName and
    instance UUID) and status points at it;
  - no VM in vCenter that was not there at the start is without a resource, except the image cache
    templates that are current: named vmop-image-<item>-<version> for an item a library holds now at
    that content version, a template with vmop's marker (superseded ones are collected; a template
    stays cached when the VMs cloned from it are deleted);
  - no resource that is being deleted keeps its finalizer;
  - every remaining VM is powered as its spec says (PoweredOn: with an IP).
Every wait is bounded polling. Nothing secret is printed.

What is the same as in tests/e2e/e2e_vm.py (Env's devenv/up/down/vimc, check, cond, vm_obj) is
imported from there; what differs stays here: kubectl retried under injected faults, a longer
default WAIT, the start-up baseline of vCenter VMs and the sanitizer findings.
"""
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# e2e_vm reads sys.argv[1] at import as its default build dir: harmless here, every Env below is
# given its build dir explicitly.
sys.path.insert(0, os.path.join(ROOT, "tests/e2e"))
import e2e_vm as base  # noqa: E402
from e2e_vm import NS, check, cond, vm_obj  # noqa: E402,F401  (re-exported to the chaos scripts)

WAIT = float(os.environ.get("E2E_WAIT_S", "120"))
FINALIZER = "vmoperator.vmware.com/virtualmachine"


class Env(base.Env):
    """One devenv. vcsim_args: extra simulator flags; tag names the temporary directory."""

    def __init__(self, build, vcsim_args="", workers=8, tag="chaos"):
        super().__init__(build, vcsim_args=vcsim_args, workers=workers, tag=tag)
        self.extra = []  # processes started by the test itself (replicas, proxies)
        self.baseline = set()
        self.san = []

    # ---- lifecycle ----
    def up(self):
        super().up()
        # vmop's way to the API server: the fault-injecting proxy (tests/cluster/faultproxy)
        self.proxy = json.load(open(os.path.join(self.dir, "faultproxy.json")))
        self.api_port = int(self.proxy["port"])
        self.baseline = {e["moref"] for e in self.vimc("ls", "vm") or []}

    def down(self):
        for p in self.extra:
            stop_proc(p)
        super().down()

    def after_down(self):
        self.san = sanitizer_findings(self.dir)

    def operator_pid(self):
        try:
            return int(open(os.path.join(self.dir, "operator.pid")).read())
        except (OSError, ValueError):
            return None

    def kill_operator(self):
        pid = self.operator_pid()
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            wait_for(lambda: not alive(pid), "operator %d gone" % pid, timeout=10)

    def restart_operator(self):
        self.devenv("restart", self.dir, "operator")

    # ---- kubectl ----
    def kubectl(self, *args, stdin=None, check=True, timeout=90):
        """base.Env.kubectl, its error message keeping only the tail of stderr."""
        p = super().kubectl(*args, stdin=stdin, check=False, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError("kubectl %s failed: %s" % (" ".join(args[:3]), p.stderr.strip()[-300:]))
        return p

    def kubectl_retry(self, *args, stdin=None, tries=20):
        """kubectl under injected faults: retried (bounded) until it succeeds."""
        last = None
        for _ in range(tries):
            p = self.kubectl(*args, stdin=stdin, check=False)
            if p.returncode == 0:
                return p
            last = p.stderr.strip()[-300:]
            time.sleep(0.3)
        raise AssertionError("kubectl %s kept failing: %s" % (" ".join(args[:3]), last))

    def apply(self, objs):
        for o in objs:
            self.kubectl_retry("apply", "-f", "-", stdin=json.dumps(o))

    def get(self, kind, name, ns=NS):
        for _ in range(20):
            p = self.kubectl("get", kind, name, "-n", ns, "-o", "json", check=False)
            if p.returncode == 0:
                return json.loads(p.stdout)
            if "NotFound" in p.stderr or "not found" in p.stderr:
                return None
            time.sleep(0.3)  # an injected fault: try again
        raise AssertionError("kubectl get %s %s kept failing" % (kind, name))

    def list_vms(self, ns=NS):
        p = self.kubectl_retry("get", "vm", "-n", ns, "-o", "json")
        return json.loads(p.stdout)["items"]

    def events(self, name=None, ns=NS):
        args = ["get", "events", "-n", ns, "-o", "json"]
        if name:
            args += ["--field-selector", "involvedObject.name=%s" % name]
        return json.loads(self.kubectl_retry(*args).stdout)["items"]

    # ---- vCenter (vimc: base.Env's) ----
    def vc_vms(self):
        """{moref: info} of every VM not in the start-up baseline (vm info may race a destroy)."""
        refs = [e["moref"] for e in self.vimc("ls", "vm") or [] if e["moref"] not in self.baseline]
        with ThreadPoolExecutor(max_workers=6) as ex:
            infos = list(ex.map(lambda r: self.vimc("vm", "info", r, check=False), refs))
        return {r: i for r, i in zip(refs, infos) if i}

    # ---- API server faults: the proxy's control API (tests/cluster/faultproxy/README.md) ----
    def faults(self, method, body=None):
        req = urllib.request.Request(self.proxy["control"] + "/faults", method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            txt = r.read().decode()
        return json.loads(txt) if txt.strip() else None

    # ---- operator ----
    def health_port(self):
        return int(open(os.path.join(self.dir, "health.port")).read())

    def metrics(self, port=None, series=False):
        return scrape(port or self.health_port(), series)

    def operator_log(self, n=40, path=None):
        return super().operator_log(n, path)


SAN_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def sanitizer_findings(d):
    """Sanitizer reports (ASan/LSan/UBSan builds) in the logs of DIR: ['log: line', ...]."""
    out = []
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if not f.endswith(".log"):
            continue
        try:
            for ln in open(os.path.join(d, f), errors="replace"):
                if any(m in ln for m in SAN_MARKS):
                    out.append("%s: %s" % (f, ln.strip()[:200]))
        except OSError:
            pass
    return out


def scrape(port, series=False):
    """Prometheus text -> {metric name: sum over its label sets} (series: {name{labels}: value});
    {} when unreachable."""
    out = {}
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
            txt = r.read().decode()
    except OSError:
        return out
    for line in txt.splitlines():
        if not line or line.startswith("#"):
            continue
        parts = line.rsplit(" ", 1)
        if len(parts) != 2:
            continue
        name = parts[0] if series else parts[0].split("{", 1)[0]
        try:
            out[name] = out.get(name, 0.0) + float(parts[1])
        except ValueError:
            pass
    return out


def reconciles(m):
    """VirtualMachine reconciles from a scrape (the metrics registry name, else vmop.c's)."""
    return m.get("vmop_reconcile_total", m.get("vmop_vm_reconciles_total", 0))


def reconcile_errors(m):
    return m.get("vmop_reconcile_errors_total", m.get("vmop_vm_reconcile_failures_total", 0))


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child counts as gone
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def stop_proc(p):
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGCONT)
        except OSError:
            pass
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(10)


def wait_for(fn, what, timeout=WAIT, period=0.3):
    """base.wait_for with this file's longer default WAIT."""
    return base.wait_for(fn, what, timeout, period)


def secret_obj(name, data=None, ns=NS):
    o = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns}}
    if data is None:
        # the user-data canary of tests/e2e/canary.py: the harness fails a run that leaks it
        o["stringData"] = {
            "user-data": base.canary.user_data("#cloud-config\nusers:\n- name: chaos\n")}
    else:
        o["data"] = data
    return o


def vm_ok(vm):
    """The resource agrees with its spec: power state (and an IP when on), not being deleted."""
    if not vm:
        return False
    st = vm.get("status") or {}
    want = (vm.get("spec") or {}).get("powerState") or "PoweredOn"
    if not st.get("uniqueID") or st.get("powerState") != want:
        return False
    if want == "PoweredOn" and not (st.get("network") or {}).get("primaryIP4"):
        return False
    return True


def wait_converged(env, names, timeout=WAIT):
    """All names exist and agree with their spec (one kubectl list per poll)."""
    def ok():
        vms = {v["metadata"]["name"]: v for v in env.list_vms()}
        bad = [n for n in names if not vm_ok(vms.get(n))]
        ok.bad = bad
        return not bad
    ok.bad = names
    try:
        wait_for(ok, "%d VMs converged" % len(names), timeout=timeout, period=1.0)
    except AssertionError as e:
        raise AssertionError("%s (still not: %s)\n%s" % (e, " ".join(ok.bad[:8]), "\n".join(
            describe(env.get("vm", n)) for n in ok.bad[:3])))


def describe(vm):
    """One line per stuck resource: spec vs status, generations, conditions that are not True."""
    if not vm:
        return "  (gone)"
    md, sp, st = vm["metadata"], vm.get("spec") or {}, vm.get("status") or {}
    conds = ["%s=%s %s %s (og %s)" % (c.get("type"), c.get("status"), c.get("reason"),
                                       (c.get("message") or "")[:80], c.get("observedGeneration"))
             for c in st.get("conditions") or [] if c.get("status") != "True"]
    return "  %s: gen %s rv %s spec.powerState %s status.powerState %s uniqueID %s ip %s " \
           "deleting %s; not True: %s" % (md["name"], md.get("generation"),
                                          md.get("resourceVersion"), sp.get("powerState"),
                                          st.get("powerState"), st.get("uniqueID"),
                                          (st.get("network") or {}).get("primaryIP4"),
                                          bool(md.get("deletionTimestamp")), conds)


def wait_gone(env, names, timeout=WAIT):
    def ok():
        have = {v["metadata"]["name"] for v in env.list_vms()}
        ok.left = sorted(have & set(names))
        return not ok.left
    ok.left = names
    try:
        wait_for(ok, "%d VMs deleted" % len(names), timeout=timeout, period=1.0)
    except AssertionError as e:
        raise AssertionError("%s (left: %s)" % (e, " ".join(ok.left[:8])))


CSRC_PREFIX = "vmop-image-"
CSRC_MARKER = "vmop image cache: library item %s, content version %s"  # operator/vm/clone_source.c


def _ic_part(s):
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in s)


def current_cache_templates(env):
    """{template name: marker} for every item the simulator's libraries hold now (clone_source.h)."""
    out = {}
    for lib in env.vimc("lib", "ls") or []:
        for it in env.vimc("lib", "items", lib["id"]) or []:
            ver = it.get("contentVersion") or ""
            name = CSRC_PREFIX + _ic_part(it["id"]) + ("-" + _ic_part(ver) if ver else "")
            out[name] = CSRC_MARKER % (it["id"], ver)
    return out


def cache_template_problem(info, current):
    """None when a vCenter VM named vmop-image-* is a current, marked cache template; else why."""
    name = info.get("name") or ""
    if name not in current:
        return "%s: not the cache template of an item the libraries hold now" % name
    if info.get("annotation") != current[name] or not info.get("template"):
        return "%s: not a template with vmop's marker" % name
    return None


def invariants(env, expect_names=None):
    """Checks the end-state invariants (see the top of this file); returns a summary dict."""
    vms = env.list_vms()
    by_name = {v["metadata"]["name"]: v for v in vms}
    vc = env.vc_vms()
    counts = {}
    leaked = []
    current = None
    for ref, info in vc.items():
        nn = (info.get("extraConfig") or {}).get("vmservice.namespacedName")
        name = info.get("name") or ""
        if nn:
            counts.setdefault(nn, []).append((ref, info))
        elif name.startswith(CSRC_PREFIX):
            current = current if current is not None else current_cache_templates(env)
            why = cache_template_problem(info, current)
            if why:
                leaked.append("%s (%s)" % (ref, why))
        else:
            leaked.append("%s (%s, no vmservice.namespacedName)" % (ref, name))
    for nn, lst in counts.items():
        ns, _, n = nn.partition("/")
        if ns != NS or n not in by_name:
            leaked.extend("%s (%s: no resource)" % (r, nn) for r, _ in lst)
    check(not leaked, "VMs in vCenter without a resource: %s" % ", ".join(leaked))
    for n, vm in by_name.items():
        md = vm["metadata"]
        check(not md.get("deletionTimestamp"),
              "%s is being deleted and still has finalizers %s" % (n, md.get("finalizers")))
        lst = counts.get("%s/%s" % (NS, n), [])
        check(len(lst) == 1, "%s/%s has %d VMs in vCenter (%s)" % (NS, n, len(lst),
                                                                    [r for r, _ in lst]))
        ref, info = lst[0]
        st = vm.get("status") or {}
        check(st.get("uniqueID") == ref.split(":")[-1] or st.get("uniqueID") == ref,
              "%s: status.uniqueID %s, vCenter %s" % (n, st.get("uniqueID"), ref))
        check(info.get("instanceUuid") == vm["spec"].get("instanceUUID"),
              "%s: instance UUID differs from spec" % n)
        want = vm["spec"].get("powerState") or "PoweredOn"
        vc_power = {"PoweredOn": "poweredOn", "PoweredOff": "poweredOff",
                    "Suspended": "suspended"}[want]
        check(info.get("powerState") == vc_power,
              "%s: vCenter power %s, spec %s" % (n, info.get("powerState"), want))
        if want == "PoweredOn":
            check((st.get("network") or {}).get("primaryIP4"), "%s: no IP" % n)
    if expect_names is not None:
        check(set(expect_names) <= set(by_name), "resources missing: %s" %
              sorted(set(expect_names) - set(by_name)))
    return {"resources": len(by_name), "vcenter_vms": len(vc)}


def delete_all(env, names):
    for n in names:
        env.kubectl_retry("delete", "vm", n, "-n", NS, "--wait=false", "--ignore-not-found")


def run_tests(tests, only, make_env):
    """Runs [(name, fn)] (fn(env)) in one env from make_env(); prints PASS/FAIL; exit code."""
    env = make_env()
    failures = base.run_in(env, tests, only, fail_secs=True)
    if env.san:
        failures.append("sanitizers")
        print("FAIL sanitizers:\n  " + "\n  ".join(env.san[:20]), flush=True)
    print("%d failed: %s" % (len(failures), " ".join(failures)) if failures else "all passed")
    return 1 if failures else 0
