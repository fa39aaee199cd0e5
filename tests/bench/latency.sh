#!/bin/bash
# latency.sh: latency from a powerState patch to the change in vCenter (figures, never pass/fail;
# not in the default suite).
#   tests/bench/latency.sh [N]   N samples each way (default 20; env BENCH_N)
# Starts tests/devenv in a temporary directory, creates BENCH_VMS VMs (default 5), waits until they
# run, then N times: patches one VM (round robin) to PoweredOff (Hard) with kubectl and polls
# vCenter (vimc vm info, ~20 ms apart) until it reports poweredOff; then back to PoweredOn. Reports
# median / p95 / max per direction. The time includes kubectl's own round trip (~50-100 ms) and the
# vimc polling granularity. Env: VMOP_BUILD_DIR (default build-dev), VMOP_WORKERS.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export BENCH_N=${1:-${BENCH_N:-20}}
export VMOP_BUILD_DIR=${VMOP_BUILD_DIR:-$ROOT/build-dev}
exec python3 - "$ROOT" <<'PY'
import json, os, statistics, sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(sys.argv[1], "tests/chaos"))
import chaoslib as cl

n = int(os.environ["BENCH_N"])
n_vms = int(os.environ.get("BENCH_VMS", "5"))


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


env = cl.Env(os.environ["VMOP_BUILD_DIR"], tag="bench-latency")
try:
    env.up()
    names = ["lat-%d" % i for i in range(n_vms)]
    env.apply([cl.vm_obj(x) for x in names])
    cl.wait_converged(env, names)
    refs = {x: env.get("vm", x)["status"]["uniqueID"] for x in names}
    res = {"poweredOff": [], "poweredOn": []}
    kc = []  # the kubectl patch call itself (process start + round trip)
    for i in range(n):
        x = names[i % n_vms]
        for spec, want in ((({"powerState": "PoweredOff", "powerOffMode": "Hard"}), "poweredOff"),
                           (({"powerState": "PoweredOn"}), "poweredOn")):
            t0 = time.monotonic()
            env.kubectl("patch", "vm", x, "-n", cl.NS, "--type=merge", "-p",
                        json.dumps({"spec": spec}))
            kc.append(time.monotonic() - t0)
            cl.wait_for(lambda: env.vimc("vm", "info", refs[x])["powerState"] == want,
                        "%s %s in vCenter" % (x, want), timeout=60, period=0.02)
            res[want].append(time.monotonic() - t0)
            if want == "poweredOn":  # next round starts from a converged resource
                cl.wait_converged(env, [x])
    for k, v in res.items():
        print("latency patch -> vCenter %s: n=%d median %.0f ms, p95 %.0f ms, max %.0f ms"
              % (k, len(v), 1000 * statistics.median(v), 1000 * pct(v, 95), 1000 * max(v)),
              flush=True)
    print("of which the kubectl patch call: median %.0f ms" % (1000 * statistics.median(kc)))
finally:
    env.down()
PY
