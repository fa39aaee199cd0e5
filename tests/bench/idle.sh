#!/bin/bash
# idle.sh: idle cost and memory (figures, never pass/fail; not in the default suite).
#   tests/bench/idle.sh [N] [WINDOW_S]   N powered-on VMs (default 1000; env BENCH_N), measured
#                                        over WINDOW_S seconds (default 600; env BENCH_WINDOW_S)
# Starts tests/devenv in a temporary directory with vmop's production periods (--resync-period and
# --image-sync-period at vmop's defaults unless VMOP_RESYNC_S / VMOP_IMAGE_SYNC_S say otherwise),
# applies N VMs (best-effort-xsmall, one cloud-config Secret) with one `kubectl apply`, waits
# (bounded) until every one is PoweredOn with an IP, lets it settle (BENCH_SETTLE_S, default 60 s),
# then measures over the window with nothing changing:
#   vCenter calls per minute by method (SOAP by method, REST by route template, from /metrics;
#   WaitForUpdatesEx, the change feed's long poll, shown apart), Kubernetes requests per minute,
#   reconciles per minute, the operator's CPU (utime+stime, % of one core), its RSS (VmRSS) and
#   peak RSS (VmHWM), the RSS split into anonymous (RssAnon) and file-backed (RssFile), threads,
#   and the allocator's heap in use and free (vmop_process_heap_{inuse,free}_bytes, glibc mallinfo2).
# Then (BENCH_GROW=0 skips it) applies N more VMs, waits, settles, and reads the RSS again: per-VM
# growth from N to 2N and the RSS projected to 10,000 VMs (linear from there).
# Prints one line per figure and writes them as JSON to BENCH_OUT (default /tmp/vmop-bench-idle.json).
# Env: VMOP_BUILD_DIR (default build-dev), BENCH_WAIT_S (default 120 + N/2), VMOP_WORKERS.
# Helpers (devenv, kubectl, /metrics): tests/chaos/chaoslib.py.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export BENCH_N=${1:-${BENCH_N:-1000}}
export BENCH_WINDOW_S=${2:-${BENCH_WINDOW_S:-600}}
export VMOP_BUILD_DIR=${VMOP_BUILD_DIR:-$ROOT/build-dev}
export VMOP_WORKERS=${VMOP_WORKERS:-4} # vmop's own default (the devenv's is 8)
export VMOP_RESYNC_S=${VMOP_RESYNC_S:-3600} VMOP_IMAGE_SYNC_S=${VMOP_IMAGE_SYNC_S:-300} # vmop's defaults
exec python3 - "$ROOT" <<'PY'
import json, os, re, sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(sys.argv[1], "tests/chaos"))
import chaoslib as cl

n = int(os.environ["BENCH_N"])
window = float(os.environ["BENCH_WINDOW_S"])
wait_s = float(os.environ.get("BENCH_WAIT_S", 120 + n / 2))
settle = float(os.environ.get("BENCH_SETTLE_S", "60"))
grow = os.environ.get("BENCH_GROW", "1") != "0"
out = os.environ.get("BENCH_OUT", "/tmp/vmop-bench-idle.json")
hz = os.sysconf("SC_CLK_TCK")
res = {"n": n, "window_s": window}


def cpu_s(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(") ", 1)[1].split()
    return (int(f[11]) + int(f[12])) / hz


def mem_kb(pid, field):
    for line in open("/proc/%d/status" % pid):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def counters(env):
    m = env.metrics()
    s = env.metrics(series=True)
    by = {}
    for k, v in s.items():
        x = re.match(r'vmop_vcenter_calls_total\{.*method="([^"]*)"', k)
        if x:
            by[x.group(1)] = by.get(x.group(1), 0) + v
    return {"vc": m.get("vmop_vcenter_soap_calls_total", 0) + m.get("vmop_vcenter_rest_calls_total", 0),
            "kube": m.get("vmop_kube_requests_total", 0), "rec": cl.reconciles(m), "by": by,
            "heap_inuse": m.get("vmop_process_heap_inuse_bytes", 0),
            "heap_free": m.get("vmop_process_heap_free_bytes", 0)}


def apply_vms(env, first, count):
    items = [cl.vm_obj("idle-%05d" % i, cls="best-effort-xsmall", secret="bench-cc")
             for i in range(first, first + count)]
    t0 = time.monotonic()
    # one apply per 200: each object's create passes vmop's webhooks while the VMs before it are
    # being created, so 500 at a time could outlast kubectl's 90 s bound on a two-core machine
    for k in range(0, count, 200):
        env.kubectl_retry("apply", "-f", "-", stdin="\n".join(json.dumps(o) for o in items[k:k + 200]))
    cl.wait_converged(env, [o["metadata"]["name"] for o in items], timeout=wait_s)
    return time.monotonic() - t0


def pause(s):
    t = time.monotonic() + s
    while time.monotonic() < t:
        time.sleep(1)


env = cl.Env(os.environ["VMOP_BUILD_DIR"], tag="bench-idle")
try:
    env.up()
    env.apply([cl.secret_obj("bench-cc")])
    took = apply_vms(env, 0, n)
    print("idle: %d VMs PoweredOn with an IP after %.0f s" % (n, took), flush=True)
    pause(settle)
    pid = env.operator_pid()
    c0, cpu0, t0 = counters(env), cpu_s(pid), time.monotonic()
    pause(window)
    c1, cpu1, t1 = counters(env), cpu_s(pid), time.monotonic()
    mins = (t1 - t0) / 60
    by = {k: round((v - c0["by"].get(k, 0)) / mins, 2) for k, v in c1["by"].items() if v - c0["by"].get(k, 0)}
    feed = by.get("WaitForUpdatesEx", 0)
    res.update({"vc_per_min": round((c1["vc"] - c0["vc"]) / mins, 2),
                "vc_per_min_beyond_feed": round((c1["vc"] - c0["vc"]) / mins - feed, 2),
                "vc_per_min_by_method": by,
                "kube_per_min": round((c1["kube"] - c0["kube"]) / mins, 2),
                "reconciles": int(c1["rec"] - c0["rec"]),
                "cpu_pct": round(100 * (cpu1 - cpu0) / (t1 - t0), 3),
                "rss_mib": round(mem_kb(pid, "VmRSS") / 1024, 1),
                "peak_rss_mib": round(mem_kb(pid, "VmHWM") / 1024, 1),
                # RSS = anonymous (heap, stacks) + file-backed (the shared libraries' pages)
                "rss_anon_mib": round(mem_kb(pid, "RssAnon") / 1024, 1),
                "rss_file_mib": round(mem_kb(pid, "RssFile") / 1024, 1),
                "threads": int(mem_kb(pid, "Threads")),
                # the allocator's view (glibc mallinfo2): live data vs free memory it still holds
                "heap_inuse_mib": round(c1["heap_inuse"] / 1048576, 1),
                "heap_free_mib": round(c1["heap_free"] / 1048576, 1)})
    print("idle: window %.0f s with %d VMs: %d reconciles; vCenter calls/min %.2f (beyond the "
          "WaitForUpdatesEx long poll: %.2f), Kubernetes requests/min %.2f, operator CPU %.3f%% of a "
          "core, RSS %.1f MiB (peak %.1f MiB; anonymous %.1f, file-backed %.1f; %d threads; heap in "
          "use %.1f MiB, free in the heap %.1f MiB)"
          % (t1 - t0, n, res["reconciles"], res["vc_per_min"], res["vc_per_min_beyond_feed"],
             res["kube_per_min"], res["cpu_pct"], res["rss_mib"], res["peak_rss_mib"],
             res["rss_anon_mib"], res["rss_file_mib"], res["threads"], res["heap_inuse_mib"],
             res["heap_free_mib"]), flush=True)
    for k in sorted(by):
        print("  %-64s %8.2f calls/min" % (k, by[k]))  # REST methods are route templates
    if grow:
        took = apply_vms(env, n, n)
        pause(settle)
        rss2 = mem_kb(pid, "VmRSS") / 1024
        per_vm_kib = (rss2 - res["rss_mib"]) * 1024 / n
        res.update({"rss_2n_mib": round(rss2, 1), "peak_rss_2n_mib": round(mem_kb(pid, "VmHWM") / 1024, 1),
                    "per_vm_kib": round(per_vm_kib, 1),
                    "projected_10000_mib": round(res["rss_mib"] + per_vm_kib * (10000 - n) / 1024, 1)})
        print("memory: RSS %.1f MiB with %d VMs, %.1f MiB with %d (peak %.1f): %.1f KiB per VM; "
              "10,000 VMs projected: %.1f MiB"
              % (res["rss_mib"], n, rss2, 2 * n, res["peak_rss_2n_mib"], per_vm_kib,
                 res["projected_10000_mib"]), flush=True)
    with open(out, "w") as fh:
        json.dump(res, fh, indent=1)
    print("written to %s" % out)
finally:
    env.down()
PY
