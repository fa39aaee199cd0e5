#!/bin/bash
# latency.sh: vmop's power latencies (issue 14; figures, never pass/fail; not in the default suite).
#   tests/bench/latency.sh [N]   N rounds of the patch figure (default 100; one PoweredOff + one PoweredOn each)
# Starts tests/devenv in a temporary directory (tests/chaos/chaoslib.py's Env), creates BENCH_VMS VMs (default
# 5), waits until they converge, builds the Go program of tests/bench/floor and runs its -phase latency
# (floor/latency.go), which keeps one WaitForUpdatesEx watch over a ContainerView of the datacenter's VMs and one
# Kubernetes watch of the VirtualMachines, and measures, round robin over the VMs:
#   1. powerState patch -> vCenter acts: t0 just before the merge PATCH of spec.powerState is sent (HTTP from
#      the program, no kubectl), t1 when the watch sees runtime.powerState change; per direction (PoweredOff
#      with powerOffMode Hard, PoweredOn). Also patch -> the power task queued / started in vCenter (the task's
#      queueTime / startTime, the simulator's clock on this machine), patch -> committed (the VirtualMachine's first
#      Kubernetes watch event after t0) and patch -> status.powerState. Goal 100 ms.
#   2. out-of-band power-off -> vmop repairs it: t0 just before the program's own PowerOffVM_Task, t1 when the
#      watch sees the VM powered on again; t2 when the VirtualMachine object first changes after t0 (if it
#      does). BENCH_OOB_N samples (default 30). Goal 2 s.
# Every wait is bounded; a sample that times out is counted and reported. Prints p50/p95/p99/max per figure
# with the goal, writes the figures and every sample as JSON to BENCH_OUT (default /tmp/vmop-bench-latency.json).
# Env: VMOP_BUILD_DIR (default build-dev), VMOP_WORKERS, BENCH_VMS, BENCH_OOB_N, BENCH_OUT, BENCH_KEEP=1,
# BENCH_API_VERSION (the VirtualMachine version the PATCH and the watch use, default v1alpha5; the storage
# version v1alpha6 needs no conversion webhook calls).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export BENCH_N=${1:-${BENCH_N:-100}}
export BENCH_OOB_N=${BENCH_OOB_N:-30}
export BENCH_VMS=${BENCH_VMS:-5}
export BENCH_OUT=${BENCH_OUT:-/tmp/vmop-bench-latency.json}
export VMOP_BUILD_DIR=${VMOP_BUILD_DIR:-$ROOT/build-dev}
export VMOP_WORKERS=${VMOP_WORKERS:-4} # vmop's own default (the devenv's is 8)
BIN=$(mktemp -d /tmp/vmop-bench-latency-bin.XXXXXX)
trap 'rm -rf "$BIN"' EXIT
(cd "$ROOT/tests/bench/floor" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go build -o "$BIN/benchfloor" .)
export BENCH_FLOOR_BIN=$BIN/benchfloor
python3 - "$ROOT" <<'PY'
import base64, json, os, subprocess, sys, tempfile, time
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(sys.argv[1], "tests/chaos"))
import chaoslib as cl

n = int(os.environ["BENCH_N"])
n_oob = int(os.environ["BENCH_OOB_N"])
n_vms = int(os.environ["BENCH_VMS"])
out_path = os.environ["BENCH_OUT"]


def kube_files(env, d):
    """The admin kubeconfig's API server, CA and client credentials as files in d (for the Go program)."""
    cfg = json.loads(env.kubectl("config", "view", "--raw", "-o", "json").stdout)
    ctx = next(c["context"] for c in cfg["contexts"] if c["name"] == cfg["current-context"])
    cluster = next(c["cluster"] for c in cfg["clusters"] if c["name"] == ctx["cluster"])
    user = next(u["user"] for u in cfg["users"] if u["name"] == ctx["user"])
    base_dir = os.path.dirname(env.env["KUBECONFIG"])

    def put(name, data_key, file_key, src):
        if src.get(data_key):
            data = base64.b64decode(src[data_key])
        elif src.get(file_key):
            data = open(os.path.join(base_dir, src[file_key]), "rb").read()
        else:
            return False
        fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return True

    open(os.path.join(d, "server"), "w").write(cluster["server"])
    if not put("ca.crt", "certificate-authority-data", "certificate-authority", cluster):
        raise AssertionError("kubeconfig: no certificate authority")
    if user.get("token"):
        fd = os.open(os.path.join(d, "token"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(user["token"])
    elif not (put("client.crt", "client-certificate-data", "client-certificate", user)
              and put("client.key", "client-key-data", "client-key", user)):
        raise AssertionError("kubeconfig: no client certificate or token")


GOALS = [("patch_vcenter_off", "patch PoweredOff (Hard) -> vCenter poweredOff", 100),
         ("patch_committed_off", "  of which: patch -> committed (Kubernetes watch event)", None),
         ("patch_task_queued_off", "  of which: patch -> power-off task queued", 100),
         ("patch_task_started_off", "  of which: patch -> power-off task started", 100),
         ("patch_status_off", "  patch -> status.powerState PoweredOff", None),
         ("patch_vcenter_on", "patch PoweredOn -> vCenter poweredOn", 100),
         ("patch_committed_on", "  of which: patch -> committed (Kubernetes watch event)", None),
         ("patch_task_queued_on", "  of which: patch -> power-on task queued", 100),
         ("patch_task_started_on", "  of which: patch -> power-on task started", 100),
         ("patch_status_on", "  patch -> status.powerState PoweredOn", None),
         ("patch_http_off", "  the PATCH request itself (off)", None),
         ("patch_http_on", "  the PATCH request itself (on)", None),
         ("oob_seen_off", "out-of-band PowerOffVM_Task -> watch sees poweredOff", None),
         ("oob_repair_task_started", "out-of-band power-off -> vmop's power-on task started", 2000),
         ("oob_repaired", "out-of-band power-off -> vmop repaired it (poweredOn)", 2000),
         ("oob_status_changed", "out-of-band power-off -> VirtualMachine object changed", None)]

env = cl.Env(os.environ["VMOP_BUILD_DIR"], tag="bench-latency",
             workers=int(os.environ["VMOP_WORKERS"]))
kd = tempfile.mkdtemp(prefix="vmop-bench-latency-kube.")
rc = 0
try:
    env.up()
    names = ["lat-%d" % i for i in range(n_vms)]
    env.apply([cl.vm_obj(x) for x in names])
    cl.wait_converged(env, names)
    kube_files(env, kd)
    # bounded: 100 rounds take a few minutes; the sample bounds are in the program
    budget = 600 + 20 * (2 * n + n_oob)
    t = time.monotonic()
    p = subprocess.run([os.environ["BENCH_FLOOR_BIN"], "-phase", "latency", "-devenv", env.dir,
                        "-lat-kube-dir", kd, "-lat-vms", ",".join(names), "-lat-n", str(n),
                        "-lat-oob-n", str(n_oob),
                        "-lat-api-version", os.environ.get("BENCH_API_VERSION", "v1alpha5")],
                       stdout=subprocess.PIPE, text=True, timeout=budget)
    if p.returncode != 0 or not p.stdout.strip():
        raise AssertionError("benchfloor -phase latency failed (rc %d)" % p.returncode)
    res = json.loads(p.stdout.strip().splitlines()[-1])
    res["wall_s"] = round(time.monotonic() - t, 1)
    figs = res["figures_ms"]
    print("latency (%d VMs, %d patch rounds, %d out-of-band samples, API %s; ms; %.0f s)"
          % (n_vms, n, n_oob, res["api_version"], res["wall_s"]), flush=True)
    print("%-58s %4s %7s %7s %7s %7s  %s" % ("figure", "n", "p50", "p95", "p99", "max", "goal"))
    for key, label, goal in GOALS:
        f = figs.get(key) or {"n": 0}
        if not f["n"]:
            print("%-58s %4d %7s %7s %7s %7s  %s" % (label, 0, "-", "-", "-", "-", ""))
            continue
        g = ""
        if goal:
            g = "p50/p99 <= %d: %s" % (goal, "met" if f["p99"] <= goal else
                                      ("p50 met, p99 not" if f["p50"] <= goal else "not met"))
        print("%-58s %4d %7.1f %7.1f %7.1f %7.1f  %s"
              % (label, f["n"], f["p50"], f["p95"], f["p99"], f["max"], g))
    print("counts (timeouts, errors, samples without a figure): %s"
          % (json.dumps(res.get("counts") or {}, sort_keys=True)))
    print("PowerStateDrift events: %s; the benchmark's own SOAP calls: %s"
          % (res.get("power_state_drift_events"), res.get("bench_soap_calls")))
    for e in (res.get("error_samples") or [])[:10]:
        print("  note: %s" % e)
    with open(out_path, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    print("wrote %s" % out_path)
except (AssertionError, subprocess.SubprocessError, ValueError, KeyError, OSError) as e:
    print("latency: %s" % e, file=sys.stderr)
    rc = 1
finally:
    for x in os.listdir(kd):
        os.remove(os.path.join(kd, x))
    os.rmdir(kd)
    if os.environ.get("BENCH_KEEP"):
        os.environ["E2E_KEEP"] = "1"
    env.down()
sys.exit(rc)
PY
