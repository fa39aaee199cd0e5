#!/bin/bash
# sweep.sh: provisioning time against the number of VMs, vmop and its floor (figures, never pass/fail).
#   tests/bench/sweep.sh [OUT.png]     default docs/perf/provision.png
# Runs side_by_side.sh for N = 50, 200, 1000 (env BENCH_SWEEP_NS), each with BENCH_RUNS runs (default 3),
# one environment at a time, keeps each one's medians in BENCH_SWEEP_DIR (default
# /tmp/vmop-bench-sweep: side-by-side-N.json and side-by-side-N.txt, the printed table), then plots them
# with plot.py. Env as side_by_side.sh (VMOP_BUILD_DIR, VMOP_WORKERS, ...). Takes long: at 1000 VMs a
# run is tens of minutes on two cores.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT_PNG=${1:-$ROOT/docs/perf/provision.png}
NS=${BENCH_SWEEP_NS:-50 200 1000}
export BENCH_RUNS=${BENCH_RUNS:-3}
SWEEP=${BENCH_SWEEP_DIR:-/tmp/vmop-bench-sweep}
mkdir -p "$SWEEP" "$(dirname "$OUT_PNG")"
results=()
for n in $NS; do
    echo "sweep: $n VMs, $BENCH_RUNS run(s)" >&2
    BENCH_OUT=$SWEEP/side-by-side-$n.json "$ROOT/tests/bench/side_by_side.sh" "$n" "$BENCH_RUNS" |
        tee "$SWEEP/side-by-side-$n.txt"
    results+=("$SWEEP/side-by-side-$n.json")
done
python3 "$ROOT/tests/bench/plot.py" "${results[@]}" "$OUT_PNG"
