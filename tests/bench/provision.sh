#!/bin/bash
# provision.sh: provisioning benchmark (figures, never pass/fail; not in the default suite).
#   tests/bench/provision.sh [N]        N VirtualMachines (default 200; env BENCH_N too)
# Starts tests/devenv in a temporary directory, applies N VMs (best-effort-xsmall, image by display
# name, one cloud-config Secret) with one `kubectl apply`, waits (bounded) until every one is
# PoweredOn with an IP, then deletes them all and waits until they are gone. Reports, for both
# phases: wall time, vCenter calls per VM (SOAP + REST, from vmop's /metrics = vim_client_stats),
# Kubernetes requests per VM (vmop's client), and the operator's peak RSS (/proc VmHWM).
# Env: VMOP_BUILD_DIR (default build-dev), BENCH_WAIT_S (default 60 + N), BENCH_KEEP=1 keeps it up,
# VMOP_WORKERS (default 4, vmop's own). The devenv and the apply/wait/delete cycle: lib.sh.
set -euo pipefail
BENCH_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$BENCH_ROOT/tests/bench/lib.sh"
N=${1:-${BENCH_N:-200}}
WAIT_S=${BENCH_WAIT_S:-$((60 + N))}
export VMOP_BUILD_DIR=${VMOP_BUILD_DIR:-$BENCH_ROOT/build-dev}
DIR=$(mktemp -d /tmp/vmop-bench.XXXXXX)
trap 'bench_down "$DIR"' EXIT

bench_up "$DIR"
bench_vmop_cycle "$DIR" "$N" "$WAIT_S" "$DIR/result.json"

python3 - "$DIR/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = r["n"]
print("vmop provisioning benchmark: %d VMs (vCenter simulator, real kube-apiserver)" % n)
print("%-8s %10s %14s %14s %16s" % ("phase", "wall s", "vCenter/VM", "(SOAP+REST)", "kube req/VM"))
for ph in ("create", "delete"):
    print("%-8s %10.1f %14.1f %14s %16.1f" % (ph, r[ph + "_s"], r["calls_per_vm_" + ph],
                                              "%d+%d" % (r["soap_" + ph], r["rest_" + ph]),
                                              r["kube_per_vm_" + ph]))
print("ready: %d/%d, left after delete: %d, operator peak RSS: %.1f MiB" % (r["ready"], n, r["left"], r["rss_mib"]))
PY
