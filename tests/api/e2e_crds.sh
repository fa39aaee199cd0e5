#!/bin/sh
# e2e_crds.sh: the VM Service CRDs against a real kube-apiserver (tests/cluster/cluster.sh: etcd,
# kube-apiserver, kube-controller-manager) with the pinned kubectl. Needs VMOP_CLUSTER_SH (meson:
# cluster_env) and VMOP_SOURCE_ROOT. Checks: every CRD is accepted (structural schema, CEL rules
# within the cost budget) and Established; every sample applies; `kubectl explain
# virtualmachine.spec` works; `kubectl get vm -o wide` shows VM Operator's columns; the invalid
# corpus (testdata/api/invalid, admission-enforced cases) is refused naming the field;
# immutability refuses updates (testdata/api/update-refused) and allowed updates pass.
set -eu
ROOT=${VMOP_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
: "${VMOP_CLUSTER_SH:=$ROOT/tests/cluster/cluster.sh}"
. "$(dirname "$VMOP_CLUSTER_SH")/cluster_lib.sh"
TMP=$(mktemp -d)
cleanup() {
    cluster_stop
    if [ -n "${VMOP_KEEP_TMP:-}" ]; then echo "kept $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }

cluster_start "$TMP/cluster" "$TMP" || fail "the cluster did not start (see $TMP/cluster/*.log)"
k() { "$KUBECTL" --request-timeout=20s "$@"; }

# 1. CRDs: accepted without warnings, then Established (names accepted, schema and CEL compiled)
k apply -k "$ROOT/manifests/crd" >"$TMP/crd.out" 2>&1 || fail "CRDs did not apply: $(cat "$TMP/crd.out")"
! grep -qi warning "$TMP/crd.out" || fail "CRDs applied with warnings: $(cat "$TMP/crd.out")"
# No vmop (and so no conversion webhook) runs here: the CRDs' conversion becomes None, under which
# the API server stores a v1alpha5 manifest as v1alpha6 by changing only its apiVersion (v1alpha6
# only adds fields). The schemas and CEL rules this test exercises are the v1alpha5 ones.
for c in $(k get crd -o name | grep vmoperator.vmware.com); do
    k patch "$c" --type=merge -p '{"spec":{"conversion":{"strategy":"None","webhook":null}}}' >/dev/null ||
        fail "$c: conversion not patched"
done
# kubectl wait errors out (not waits) on a CRD whose status has no conditions yet: poll it
w=0
while [ $w -lt 60 ]; do
    k wait --for=condition=Established --timeout=10s crd --all >/dev/null 2>&1 && break
    w=$((w + 1)); sleep 0.5
done
k wait --for=condition=Established --timeout=10s crd --all >/dev/null ||
    fail "CRDs not Established: $(k get crd -o jsonpath='{range .items[*]}{.metadata.name}: {.status.conditions}{"\n"}{end}')"
i=0
until k get virtualmachines -A >/dev/null 2>&1 && k get namespacebindings -A >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -le 300 ] || fail "CRDs not served"; sleep 0.1
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
