#!/bin/bash
# provision.sh: provisioning benchmark (figures, never pass/fail; not in the default suite).
#   tests/bench/provision.sh [N]        N VirtualMachines (default 200; env BENCH_N too)
# Starts tests/devenv in a temporary directory, applies N VMs (best-effort-xsmall, image by display
# name, one cloud-config Secret) with one `kubectl apply`, waits (bounded) until every one is
# PoweredOn with an IP, then deletes them all and waits until they are gone. Reports, for both
# phases: wall time, vCenter calls per VM (SOAP + REST, from vmop's /metrics = vim_client_stats),
# Kubernetes requests per VM (vmop's client), and the operator's peak RSS (/proc VmHWM).
# Env: VMOP_BUILD_DIR (default build-dev), BENCH_WAIT_S (default 60 + N), BENCH_KEEP=1 keeps it up,
# VMOP_WORKERS (default 8).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
N=${1:-${BENCH_N:-200}}
WAIT_S=${BENCH_WAIT_S:-$((60 + N))}
export VMOP_BUILD_DIR=${VMOP_BUILD_DIR:-$ROOT/build-dev}
DIR=$(mktemp -d /tmp/vmop-bench.XXXXXX)
cleanup() {
    if [ -z "${BENCH_KEEP:-}" ]; then
        "$ROOT/tests/devenv" down "$DIR" >/dev/null 2>&1 || true
        rm -rf "$DIR"
    else
        echo "kept: tests/devenv down $DIR"
    fi
}
trap cleanup EXIT

"$ROOT/tests/devenv" up "$DIR" >/dev/null
export PATH=$("$ROOT/tests/cluster/build.sh"):$PATH # the pinned kubectl
export KUBECONFIG=$DIR/kubeconfig KUBECACHEDIR=$DIR/kubecache
PORT=$(cat "$DIR/health.port")
PID=$(cat "$DIR/operator.pid")

# the sum over every series of a family (labelled or not)
metric() {
    curl -sf "http://127.0.0.1:$PORT/metrics" |
        awk -v m="$1" '$1 == m || index($1, m "{") == 1 {s += $NF; n++} END {if (n) printf "%d\n", s}'
}
snapshot() { echo "$(metric vmop_vcenter_soap_calls_total) $(metric vmop_vcenter_rest_calls_total) $(metric vmop_kube_requests_total)"; }
now_ms() { date +%s%3N; }
count_state() { # jsonpath filter -> number of VMs matching "PoweredOn/<ip>"
    kubectl get vm -o 'jsonpath={range .items[*]}{.status.powerState}/{.status.network.primaryIP4}{"\n"}{end}' 2>/dev/null |
        grep -c '^PoweredOn/[0-9]' || true
}

# images must be there before the VMs name one by display name
for ((i = 0; i < 600; i++)); do
    [ "$(kubectl get vmi -o name 2>/dev/null | wc -l)" -ge 1 ] && break
    sleep 0.1
done

python3 - "$N" >"$DIR/bench.yaml" <<'PY'
import sys
n = int(sys.argv[1])
print("""apiVersion: v1
kind: Secret
metadata: {name: bench-cc}
stringData:
  user-data: |
    #cloud-config
    users: [{name: bench}]""")
for i in range(n):
    print("""---
apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata: {name: bench-%04d, labels: {bench: "1"}}
spec:
  className: best-effort-xsmall
  imageName: vmop-tiny-ovf
  storageClass: wcp-default
  bootstrap: {cloudInit: {rawCloudConfig: {name: bench-cc, key: user-data}}}""" % i)
PY

read -r s0 r0 k0 < <(snapshot)
t0=$(now_ms)
kubectl apply -f "$DIR/bench.yaml" >/dev/null
up=0
for ((i = 0; i < WAIT_S * 2; i++)); do
    up=$(count_state)
    [ "$up" -ge "$N" ] && break
    sleep 0.5
done
t1=$(now_ms)
read -r s1 r1 k1 < <(snapshot)
[ "$up" -ge "$N" ] || echo "WARNING: only $up of $N VMs were PoweredOn with an IP after ${WAIT_S}s"

kubectl delete vm -l bench=1 --wait=false >/dev/null
left=$N
for ((i = 0; i < WAIT_S * 2; i++)); do
    left=$(kubectl get vm -l bench=1 -o name 2>/dev/null | wc -l)
    [ "$left" -eq 0 ] && break
    sleep 0.5
done
t2=$(now_ms)
read -r s2 r2 k2 < <(snapshot)
[ "$left" -eq 0 ] || echo "WARNING: $left VMs still present after ${WAIT_S}s"
rss_kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$PID/status")

python3 - "$N" "$up" "$left" "$t0" "$t1" "$t2" "$s0" "$r0" "$k0" "$s1" "$r1" "$k1" "$s2" "$r2" "$k2" "$rss_kb" <<'PY'
import sys
n, up, left, t0, t1, t2, s0, r0, k0, s1, r1, k1, s2, r2, k2, rss = map(int, sys.argv[1:])
print("vmop provisioning benchmark: %d VMs (vCenter simulator, real kube-apiserver)" % n)
print("%-8s %10s %14s %14s %16s" % ("phase", "wall s", "vCenter/VM", "(SOAP+REST)", "kube req/VM"))
print("%-8s %10.1f %14.1f %14s %16.1f" % ("create", (t1 - t0) / 1000, (s1 - s0 + r1 - r0) / n,
                                          "%d+%d" % (s1 - s0, r1 - r0), (k1 - k0) / n))
print("%-8s %10.1f %14.1f %14s %16.1f" % ("delete", (t2 - t1) / 1000, (s2 - s1 + r2 - r1) / n,
                                          "%d+%d" % (s2 - s1, r2 - r1), (k2 - k1) / n))
print("ready: %d/%d, left after delete: %d, operator peak RSS: %.1f MiB" % (up, n, left, rss / 1024))
PY
