#!/bin/bash
# side_by_side.sh: vmop against its floor, in one environment (figures, never pass/fail; not in the
# default suite).
#   tests/bench/side_by_side.sh [N] [RUNS]      N VMs (default 200; env BENCH_N), RUNS runs (default 3;
#                                               env BENCH_RUNS)
# Starts one tests/devenv in a temporary directory and builds the floor (floor/: Go, the govmomi release
# the simulator is built from). Then, RUNS times, one after the other on the same simulator and API server:
#   floor   floor/ creates N VMs at vmop's create concurrency (its create slots, --max-concurrent-creates:
#           VMOP_MAX_CREATES, else 80% of VMOP_WORKERS as vmop's default) doing per VM only the
#           vCenter work vmop does (clone with identity, reconfigure with size, reservations and
#           cloud-init guestinfo, power on, read back, then the guest IP, polled for all waiting VMs in one
#           call), then powers off and destroys them; vmop is stopped meanwhile, so nothing else talks to
#           vCenter
#   vmop    a fresh vmop (tests/devenv restart ... operator); `kubectl apply` of N VMs, wait until every
#           one is PoweredOn with an IP, delete, wait until they are gone (lib.sh, as provision.sh)
# Before the first run, one unmeasured warm-up of each (2 VMs; BENCH_WARMUP=0 skips it): vmop deploys the
# image into its clone-source template once per vCenter, the floor clones a seeded template.
# Prints a table with every run and the medians, calls per VM (by method), Kubernetes requests per VM, the
# API server's conversion and admission reviews per VM (from its /metrics),
# operator's peak RSS, and the ratio vmop/floor of the median create times; writes the medians (and the
# runs) as JSON to BENCH_OUT (default /tmp/vmop-bench-side-by-side.json).
# BENCH_RATE=R: the gradual benchmark (the issue's "create VMs gradually": the machine is offered R VMs per
# second, below what its two cores sustain, instead of all N at once): the floor starts its i-th VM at
# i / R s (-rate), and vmop's VMs are POSTed one at a time at the same moments (floor/kcreate.go, no
# kubectl); each VM is timed from then to PoweredOn with an IP, and the figures are the per-VM latencies
# (p50 / p90 / p99) and their ratio vmop/floor. The floor then waits for the guest IP through a change feed
# (-ip-wait feed), as vmop does, unless BENCH_FLOOR_ARGS says otherwise.
# Env: VMOP_BUILD_DIR (default build-dev; any build dir), VMOP_WORKERS (default 4, vmop's own), VMOP_MAX_CREATES (vmop's
# --max-concurrent-creates and the floor's -c; default 80% of the workers), BENCH_WAIT_S (bound
# of each wait, default 60 + N), BENCH_KEEP=1 keeps the environment up, BENCH_FLOOR_ARGS more flags for
# the floor (e.g. "-ip-wait feed -task-wait collector": floor/main.go).
set -euo pipefail
BENCH_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$BENCH_ROOT/tests/bench/lib.sh"
N=${1:-${BENCH_N:-200}}
RUNS=${2:-${BENCH_RUNS:-3}}
WAIT_S=${BENCH_WAIT_S:-$((60 + N))}
OUT=${BENCH_OUT:-/tmp/vmop-bench-side-by-side.json}
export VMOP_BUILD_DIR=${VMOP_BUILD_DIR:-$BENCH_ROOT/build-dev}
# The same concurrency: the floor runs as many creates at once as vmop may (its create slots).
if [ -n "${VMOP_MAX_CREATES:-}" ]; then
    CREATES=$VMOP_MAX_CREATES
    export VMOP_EXTRA_ARGS="${VMOP_EXTRA_ARGS:+$VMOP_EXTRA_ARGS }--max-concurrent-creates $CREATES"
else
    CREATES=$((VMOP_WORKERS * 80 / 100)) # vmop's default (VMC_DEFAULT_CREATES_PCT)
    [ "$CREATES" -ge 1 ] || CREATES=1
fi
# gradual: the floor hears the guest IP through a change feed as vmop does (not a 200 ms poll)
[ -z "${BENCH_RATE:-}" ] || BENCH_FLOOR_ARGS=${BENCH_FLOOR_ARGS:--ip-wait feed}
[ -z "${BENCH_BACKLOG:-}" ] || export VMOP_EXTRA_ARGS="${VMOP_EXTRA_ARGS:+$VMOP_EXTRA_ARGS }--leader-elect"
case $N$RUNS in *[!0-9]*) echo "usage: side_by_side.sh [N] [RUNS]" >&2; exit 2 ;; esac
[ "$RUNS" -ge 1 ] || { echo "RUNS must be >= 1" >&2; exit 2; }
say() { echo "side_by_side: $*" >&2; }

DIR=$(mktemp -d /tmp/vmop-bench-sbs.XXXXXX)
trap 'bench_down "$DIR"' EXIT

# The floor: module mode with this machine's Go (>= 1.25, as the simulator), pinned by floor/go.sum.
GO=$(command -v go 2>/dev/null || echo /usr/local/go/bin/go)
say "building the floor"
PATH=$(dirname "$GO"):$PATH bench_build_floor "$DIR"

say "starting the devenv in $DIR (build dir $VMOP_BUILD_DIR, $VMOP_WORKERS workers, $CREATES creates at once)"
bench_up "$DIR"

floor() { # n out.json log: vmop stopped meanwhile; a failed floor run leaves its JSON (errors > 0)
    local ph
    bench_operator_stop "$DIR"
    bench_cpu "$DIR" >"$2.cpu0"
    for ph in create delete; do # two runs, so that the simulator's CPU splits by phase
        "$DIR/benchfloor" -devenv "$DIR" -phase $ph -n "$1" -c "$CREATES" -ip-timeout "${WAIT_S}s" \
            ${BENCH_RATE:+-rate "$BENCH_RATE"} \
            -phase-timeout "$((WAIT_S * 2))s" ${BENCH_FLOOR_ARGS:-} >"$2.$ph" 2>>"$3" || say "floor $ph exited with $? (see $3)"
        bench_cpu "$DIR" >"$2.cpu-$ph"
    done
    python3 - "$2" <<'PY'
import json, sys
o = sys.argv[1]
def load(p):
    try:
        return json.load(open(p))
    except (OSError, ValueError):
        return {}
def cpu(p):
    return {l.split()[0]: float(l.split()[1]) for l in open(p) if l.strip()}
c, d = load(o + ".create"), load(o + ".delete")
r = dict(d, **c)  # create's n, the union of the figures
r["errors"] = c.get("errors", 1) + d.get("errors", 1)
c0, c1, c2 = cpu(o + ".cpu0"), cpu(o + ".cpu-create"), cpu(o + ".cpu-delete")
for ph, a, b, own in (("create", c0, c1, c.get("cpu_create_s")), ("delete", c1, c2, d.get("cpu_delete_s"))):
    r["cpu_%s_s" % ph] = {"floor": own, **{k: round(b[k] - a.get(k, 0), 2) for k in b if k == "vcsim"}}
json.dump(r, open(o, "w"))
PY
    bench_operator_start "$DIR"
}

if [ "${BENCH_WARMUP:-1}" != 0 ]; then
    say "warm-up: 2 VMs each (not measured)"
    floor 2 "$DIR/floor-warmup.json" "$DIR/floor-warmup.log"
    bench_vmop_cycle "$DIR" 2 "$WAIT_S" "$DIR/vmop-warmup.json"
fi

for ((r = 1; r <= RUNS; r++)); do
    say "run $r/$RUNS: floor, $N VMs at concurrency $CREATES"
    floor "$N" "$DIR/floor-$r.json" "$DIR/floor-$r.log"
    say "run $r/$RUNS: floor $(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("create %ss, delete %ss, %s errors" % (j.get("create_s"), j.get("delete_s"), j.get("errors")))' "$DIR/floor-$r.json" 2>/dev/null || echo "gave no result")"
    say "run $r/$RUNS: vmop, $N VMs with $VMOP_WORKERS workers"
    bench_vmop_cycle "$DIR" "$N" "$WAIT_S" "$DIR/vmop-$r.json"
    say "run $r/$RUNS: vmop $(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("create %ss, delete %ss, %d/%d ready" % (j["create_s"], j["delete_s"], j["ready"], j["n"]))' "$DIR/vmop-$r.json")"
done

python3 - "$DIR" "$N" "$RUNS" "$VMOP_WORKERS" "$OUT" "$CREATES" <<'PY'
import json, statistics, sys
d, n, runs, workers, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
creates = int(sys.argv[6])

def load(p):
    try:
        return json.load(open(p))
    except (OSError, ValueError):
        return {}

fl = [load("%s/floor-%d.json" % (d, r)) for r in range(1, runs + 1)]
vm = [load("%s/vmop-%d.json" % (d, r)) for r in range(1, runs + 1)]

def med(rows, key):
    xs = [x[key] for x in rows if isinstance(x.get(key), (int, float))]
    return round(statistics.median(xs), 3) if xs else None

def ratio(a, b):
    return round(a / b, 2) if a is not None and b else None

def f(x, w=8, p=1):
    return ("%*.*f" % (w, p, x)) if isinstance(x, (int, float)) else "%*s" % (w, "-")

def methods(rows, key):  # median calls per VM by method
    names = sorted({m for x in rows for m in x.get(key, {})})
    return {m: round(statistics.median([x.get(key, {}).get(m, 0) / n for x in rows]), 2) for m in names}

print("vmop vs its floor: %d VMs, %d creates at once (vmop's create slots with %d workers, floor -c), "
      "%d run(s); vCenter simulator, real kube-apiserver" % (n, creates, workers, runs))
print("%-7s | %8s %8s %6s | %8s %8s %6s | %8s %8s | %7s %7s | %8s" % (
    "run", "floor", "vmop", "ratio", "floor", "vmop", "ratio", "floor", "vmop", "floor", "vmop", "vmop"))
print("%-7s | %8s %8s %6s | %8s %8s %6s | %8s %8s | %7s %7s | %8s" % (
    "", "create s", "create s", "", "delete s", "delete s", "", "p50 rdy", "p50 rdy", "errors", "unready", "RSS MiB"))
for r in range(runs):
    a, b = fl[r], vm[r]
    unready = (b.get("n", n) - b.get("ready", 0)) if b else None
    print("%-7s | %s %s %s | %s %s %s | %s %s | %7s %7s | %s" % (
        r + 1, f(a.get("create_s")), f(b.get("create_s")), f(ratio(b.get("create_s"), a.get("create_s")), 6, 2),
        f(a.get("delete_s")), f(b.get("delete_s")), f(ratio(b.get("delete_s"), a.get("delete_s")), 6, 2),
        f(a.get("p50_ready_s")), f(b.get("p50_ready_s")), a.get("errors", "-"), unready if unready is not None else "-",
        f(b.get("rss_mib"))))
M = {"floor": {k: med(fl, k) for k in ("create_s", "delete_s", "p50_ready_s", "p50_vm_s", "p90_vm_s", "p99_vm_s",
                                      "calls_per_vm_create", "calls_per_vm_delete", "errors")},
     "vmop": {k: med(vm, k) for k in ("create_s", "apply_s", "delete_s", "p50_ready_s", "calls_per_vm_create",
                                     "calls_per_vm_delete", "kube_per_vm_create", "kube_per_vm_delete",
                                     "conversions_per_vm_create", "conversions_per_vm_delete",
                                     "admissions_per_vm_create", "admissions_per_vm_delete",
                                     "rss_mib", "ready", "left", "lat_p50_s", "lat_p90_s", "lat_p99_s",
                                     "lat_max_s", "post_p50_ms")}}
print("%-7s | %s %s %s | %s %s %s | %s %s | %7s %7s | %s" % (
    "median", f(M["floor"]["create_s"]), f(M["vmop"]["create_s"]),
    f(ratio(M["vmop"]["create_s"], M["floor"]["create_s"]), 6, 2),
    f(M["floor"]["delete_s"]), f(M["vmop"]["delete_s"]), f(ratio(M["vmop"]["delete_s"], M["floor"]["delete_s"]), 6, 2),
    f(M["floor"]["p50_ready_s"]), f(M["vmop"]["p50_ready_s"]), "", "", f(M["vmop"]["rss_mib"])))
print("(p50 rdy: seconds from the start of the create until half of the VMs were PoweredOn with an IP;"
      " vmop's VMs are timed to their Kubernetes watch event)")
if any(x.get("backlog") for x in vm):
    print("backlog mode: vmop's create is timed from the moment it became the leader (its Lease's acquireTime), "
          "the N VMs already applied; the `kubectl apply` before it took %s s (median; per run %s)" % (
              M["vmop"]["apply_s"], ", ".join(str(x.get("apply_s")) for x in vm)))
elif any(x.get("lat_n") for x in vm):
    print("vmop's VMs were POSTed one at a time over %s s (median; per run %s)" % (
        M["vmop"]["apply_s"], ", ".join(str(x.get("apply_s")) for x in vm)))
else:
    print("vmop's create includes the `kubectl apply` itself: %s s (median; per run %s)" % (
        M["vmop"]["apply_s"], ", ".join(str(x.get("apply_s")) for x in vm)))
def cpu_per_vm(rows, ph):  # median over runs of CPU seconds per VM, per component and in total
    keys = sorted({k for x in rows for k in (x.get("cpu_%s_s" % ph) or {})})
    per = {k: [((x.get("cpu_%s_s" % ph) or {}).get(k) or 0) / n for x in rows] for k in keys}
    tot = [sum(((x.get("cpu_%s_s" % ph) or {}).get(k) or 0) for k in keys) / n for x in rows]
    d = {k: round(statistics.median(v) * 1000, 1) for k, v in per.items()}
    if tot:
        d["total"] = round(statistics.median(tot) * 1000, 1)
    return d
CPU = {side: {ph: cpu_per_vm(rows, ph) for ph in ("create", "delete")} for side, rows in (("floor", fl), ("vmop", vm))}
for ph in ("create", "delete"):
    for side in ("floor", "vmop"):
        print("CPU ms per VM, %s, %s (median): %s" % (ph, side, ", ".join(
            "%s %s" % (k, v) for k, v in CPU[side][ph].items())))
print()
print("vCenter calls per VM (median): floor create %s, delete %s (SOAP); vmop create %s, delete %s (SOAP+REST)" % (
    M["floor"]["calls_per_vm_create"], M["floor"]["calls_per_vm_delete"],
    M["vmop"]["calls_per_vm_create"], M["vmop"]["calls_per_vm_delete"]))
print("Kubernetes requests per VM (vmop, median): create %s, delete %s" % (
    M["vmop"]["kube_per_vm_create"], M["vmop"]["kube_per_vm_delete"]))
print("API server's webhook calls per VM (median; its own metrics, kubectl's and vmop's requests): "
      "conversion reviews create %s, delete %s; VirtualMachine admission reviews create %s, delete %s" % (
          M["vmop"]["conversions_per_vm_create"], M["vmop"]["conversions_per_vm_delete"],
          M["vmop"]["admissions_per_vm_create"], M["vmop"]["admissions_per_vm_delete"]))
print("floor per-VM time (median of runs): p50 %s s, p99 %s s (a worker's clone..read back + the wait for its IP)" % (
    M["floor"]["p50_vm_s"], M["floor"]["p99_vm_s"]))
for ph in ("create", "delete"):
    a, b = methods(fl, "calls_%s_by_method" % ph), methods(vm, "calls_%s_by_method" % ph)
    print("%-60s %8s %8s" % (ph + " calls per VM by method (median)", "floor", "vmop"))
    for m in sorted(set(a) | set(b)):
        print("  %-58s %8s %8s" % (m, a.get(m, "-"), b.get(m, "-")))
rc = ratio(M["vmop"]["create_s"], M["floor"]["create_s"])
gradual = any(x.get("lat_n") for x in vm)
lat = {}
if gradual:
    rate = vm[0].get("rate")
    print()
    print("gradual: %s VMs per second offered to each; per-VM latency, due -> PoweredOn + IP (floor: its "
          "worker's clone .. guest IP; vmop: its POST .. its ready watch event), s" % rate)
    print("%-7s | %7s %7s %7s | %7s %7s %7s | %6s %6s" % ("run", "fl p50", "fl p90", "fl p99", "vm p50", "vm p90",
                                                         "vm p99", "r p50", "r p99"))
    for r in range(runs):
        a, b = fl[r], vm[r]
        print("%-7s | %s %s %s | %s %s %s | %s %s" % (
            r + 1, f(a.get("p50_vm_s"), 7, 3), f(a.get("p90_vm_s"), 7, 3), f(a.get("p99_vm_s"), 7, 3),
            f(b.get("lat_p50_s"), 7, 3), f(b.get("lat_p90_s"), 7, 3), f(b.get("lat_p99_s"), 7, 3),
            f(ratio(b.get("lat_p50_s"), a.get("p50_vm_s")), 6, 2), f(ratio(b.get("lat_p99_s"), a.get("p99_vm_s")), 6, 2)))
    lat = {"rate": rate, "p50": ratio(M["vmop"]["lat_p50_s"], M["floor"]["p50_vm_s"]),
           "p90": ratio(M["vmop"]["lat_p90_s"], M["floor"]["p90_vm_s"]),
           "p99": ratio(M["vmop"]["lat_p99_s"], M["floor"]["p99_vm_s"])}
    print("%-7s | %s %s %s | %s %s %s | %s %s" % (
        "median", f(M["floor"]["p50_vm_s"], 7, 3), f(M["floor"]["p90_vm_s"], 7, 3), f(M["floor"]["p99_vm_s"], 7, 3),
        f(M["vmop"]["lat_p50_s"], 7, 3), f(M["vmop"]["lat_p90_s"], 7, 3), f(M["vmop"]["lat_p99_s"], 7, 3),
        f(lat["p50"], 6, 2), f(lat["p99"], 6, 2)))
    print("vmop's POST round trip p50 %s ms (median of runs)" % M["vmop"]["post_p50_ms"])
print()
if gradual:
    print("ratio vmop/floor of the median per-VM latencies at %s VMs/s: p50 %s, p90 %s, p99 %s (goal <= 1.3)" % (
        lat["rate"], lat["p50"], lat["p90"], lat["p99"]))
print("ratio vmop/floor of the median create times (%s -> PoweredOn + IP): %s (goal <= 1.3)" % (
    "first due -> last" if gradual else "apply", rc))
# The issue's measure where the machine's CPU is the bottleneck: each program's own CPU per VM created
own = ratio(CPU["vmop"]["create"].get("operator", 0), CPU["floor"]["create"].get("floor", 0))
print("ratio vmop/floor of the own CPU per VM created (the operator's process / the floor program's): %s" % own)
res = {"n": n, "workers": workers, "creates": creates, "runs": runs, "floor": M["floor"], "vmop": M["vmop"],
       "ratio_create": rc, "ratio_own_cpu_create": own, "ratio_latency": lat or None, "cpu_ms_per_vm": CPU, "ratio_delete": ratio(M["vmop"]["delete_s"], M["floor"]["delete_s"]),
       "floor_methods_per_vm": {ph: methods(fl, "calls_%s_by_method" % ph) for ph in ("create", "delete")},
       "vmop_methods_per_vm": {ph: methods(vm, "calls_%s_by_method" % ph) for ph in ("create", "delete")},
       "per_run": {"floor": fl, "vmop": vm}}
with open(out, "w") as fh:
    json.dump(res, fh, indent=1)
print("medians written to %s" % out)
PY
