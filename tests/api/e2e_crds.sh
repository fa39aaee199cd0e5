#!/bin/sh
# e2e_crds.sh: the VM Service CRDs against the project's test API server with real kubectl.
# Needs VMOP_TESTAPI (the kube-testapi binary) and VMOP_SOURCE_ROOT. Checks: every CRD and sample
# applies; `kubectl explain virtualmachine.spec` works; `kubectl get vm -o wide` shows VM Operator's
# columns; the invalid corpus (testdata/api/invalid, admission-enforced cases) is refused naming the
# field; immutability refuses updates (testdata/api/update-refused) and allowed updates pass.
set -eu
: "${VMOP_TESTAPI:?set VMOP_TESTAPI to the test API server binary}"
ROOT=${VMOP_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d)
SERVER_PID=
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }

"$VMOP_TESTAPI" --listen 127.0.0.1:0 --kubeconfig-out "$TMP/kubeconfig" --die-with-parent >"$TMP/server.out" 2>"$TMP/server.err" &
SERVER_PID=$!
i=0
while [ ! -s "$TMP/kubeconfig" ] || ! grep -q url "$TMP/server.out" 2>/dev/null; do
    i=$((i + 1)); [ $i -le 100 ] || fail "test API server did not start: $(cat "$TMP/server.err")"
    kill -0 "$SERVER_PID" 2>/dev/null || fail "test API server exited: $(cat "$TMP/server.err")"
    sleep 0.1
done
export KUBECONFIG="$TMP/kubeconfig" KUBECACHEDIR="$TMP/cache"
k() { kubectl --request-timeout=20s "$@"; }

# 1. CRDs, then wait for them to be served
k apply -f "$ROOT/manifests/crd/" >/dev/null || fail "CRDs did not apply"
i=0
until k get virtualmachines -A >/dev/null 2>&1 && k get namespacebindings -A >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -le 100 ] || fail "CRDs not served"; sleep 0.1
done
# 2. samples (the Secret/Namespace/StorageClass built-ins included), classes into the tenant namespace
for f in "$ROOT"/manifests/samples/*.yaml; do k apply -f "$f" >/dev/null || fail "sample $f"; done
k apply -n tenant-a -f "$ROOT/manifests/classes/stock-classes.yaml" >/dev/null || fail "stock classes"
[ "$(k get vmclass -n tenant-a -o name | wc -l)" -ge 17 ] || fail "classes missing"
# 3. explain
k explain virtualmachine.spec >"$TMP/explain" 2>&1 || fail "explain: $(cat "$TMP/explain")"
grep -q powerOffMode "$TMP/explain" || fail "explain lacks powerOffMode"
# 4. columns
k get vm -n tenant-a -o wide >"$TMP/wide" || fail "get -o wide"
head -1 "$TMP/wide" | grep -Eq '^NAME +POWER-STATE +CLASS +IMAGE +PRIMARY-IP4 +AGE' || fail "columns: $(head -1 "$TMP/wide")"
k get vm -n tenant-a >"$TMP/narrow"
head -1 "$TMP/narrow" | grep -Eq '^NAME +POWER-STATE +AGE *$' || fail "narrow columns: $(head -1 "$TMP/narrow")"
k get vmclass -n tenant-a best-effort-small | head -1 | grep -Eq '^NAME +CPU +MEMORY' || fail "class columns"
k get vmi -n tenant-a >/dev/null || fail "vmi shortName"
k get cvmi >/dev/null || fail "cvmi shortName"
# CRD defaults are visible at once
[ "$(k get vm -n tenant-a web-0 -o jsonpath='{.spec.powerOffMode}')" = TrySoft ] || fail "powerOffMode default"
# 5. invalid corpus: admission-enforced cases are refused and the message names the field
k create namespace tenant-a >/dev/null 2>&1 || true
n=0
for f in "$ROOT"/testdata/api/invalid/*.json; do
    exp=$(cat "${f%.json}.field")
    case "$exp" in *operator*) continue ;; esac
    if k apply -f "$f" >"$TMP/out" 2>&1; then fail "$(basename "$f") was accepted"; fi
    # kubectl names list fields with their map key or index; compare on the field's leaf name
    leaf=$(echo "$exp" | sed 's/.*\.//; s/\[.*//')
    grep -q "$leaf" "$TMP/out" || fail "$(basename "$f"): message does not name $exp: $(cat "$TMP/out")"
    n=$((n + 1))
done
[ $n -ge 10 ] || fail "only $n invalid cases ran"
# 6. immutability: refused updates, then allowed ones
k apply -f "$ROOT/testdata/api/update-refused/old.json" >/dev/null || fail "old.json"
for f in "$ROOT"/testdata/api/update-refused/*.json; do
    [ "$(basename "$f")" = old.json ] && continue
    exp=$(cat "${f%.json}.field")
    if k apply -f "$f" >"$TMP/out" 2>&1; then fail "update $(basename "$f") was accepted"; fi
done
for f in "$ROOT"/testdata/api/update-allowed/*.json; do
    k apply -f "$f" >"$TMP/out" 2>&1 || fail "allowed update $(basename "$f") refused: $(cat "$TMP/out")"
done
echo "e2e_crds: ok"
