#!/bin/bash
# idle.sh: idle-cost benchmark (figures, never pass/fail; not in the default suite).
#   tests/bench/idle.sh [N] [WINDOW_S]   N powered-on VMs (default 1000; env BENCH_N), measured
#                                        over WINDOW_S seconds (default 120; env BENCH_WINDOW_S)
# Starts tests/devenv in a temporary directory, applies N VMs (best-effort-xsmall) with one
# `kubectl apply`, waits (bounded) until every one is PoweredOn with an IP, lets it settle
# (BENCH_SETTLE_S, default 60 s),
# then measures over the window with nothing changing: vCenter calls per minute (SOAP + REST, from
# vmop's /metrics), Kubernetes requests per minute, reconciles per minute, and the operator's CPU
# (utime+stime from /proc/PID/stat, in % of one core) and peak RSS.
# Env: VMOP_BUILD_DIR (default build-dev), BENCH_WAIT_S (default 120 + N/2), VMOP_WORKERS.
# Helpers (devenv, kubectl, /metrics): tests/chaos/chaoslib.py.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export BENCH_N=${1:-${BENCH_N:-1000}}
export BENCH_WINDOW_S=${2:-${BENCH_WINDOW_S:-120}}
export VMOP_BUILD_DIR=${VMOP_BUILD_DIR:-$ROOT/build-dev}
exec python3 - "$ROOT" <<'PY'
import json, os, sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(sys.argv[1], "tests/chaos"))
import chaoslib as cl

n = int(os.environ["BENCH_N"])
window = float(os.environ["BENCH_WINDOW_S"])
wait_s = float(os.environ.get("BENCH_WAIT_S", 120 + n / 2))
hz = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(") ", 1)[1].split()
    return (int(f[11]) + int(f[12])) / hz


def counters(env):
    m = env.metrics()
    return {"vc": m.get("vmop_vcenter_soap_calls_total", 0) + m.get("vmop_vcenter_rest_calls_total", 0),
            "soap": m.get("vmop_vcenter_soap_calls_total", 0),
            "kube": m.get("vmop_kube_requests_total", 0),
            "rec": cl.reconciles(m),
            "rss": m.get("vmop_process_peak_rss_bytes", 0)}


env = cl.Env(os.environ["VMOP_BUILD_DIR"], tag="bench-idle")
try:
    env.up()
    env.apply([cl.secret_obj("bench-cc")])
    items = [cl.vm_obj("idle-%04d" % i, cls="best-effort-xsmall", secret="bench-cc") for i in range(n)]
    t0 = time.monotonic()
    env.kubectl_retry("apply", "-f", "-", stdin="\n".join(json.dumps(o) for o in items))
    names = [o["metadata"]["name"] for o in items]
    cl.wait_converged(env, names, timeout=wait_s)
    print("idle: %d VMs PoweredOn with an IP after %.0f s" % (n, time.monotonic() - t0), flush=True)
    t_settle = time.monotonic() + float(os.environ.get("BENCH_SETTLE_S", "60"))
    while time.monotonic() < t_settle:
        time.sleep(1)
    pid = env.operator_pid()
    c0, cpu0, t0 = counters(env), cpu_s(pid), time.monotonic()
    t_end = t0 + window
    while time.monotonic() < t_end:
        time.sleep(1)
    c1, cpu1, t1 = counters(env), cpu_s(pid), time.monotonic()
    mins = (t1 - t0) / 60
    print("idle: window %.0f s with %d VMs: vCenter calls/min %.1f (SOAP %.1f), Kubernetes "
          "requests/min %.1f, reconciles/min %.1f, operator CPU %.2f%% of a core, peak RSS %.1f MiB"
          % (t1 - t0, n, (c1["vc"] - c0["vc"]) / mins, (c1["soap"] - c0["soap"]) / mins,
             (c1["kube"] - c0["kube"]) / mins, (c1["rec"] - c0["rec"]) / mins,
             100 * (cpu1 - cpu0) / (t1 - t0), c1["rss"] / 1048576), flush=True)
finally:
    env.down()
PY
