#!/bin/sh
# e2e_vmservice.sh: the VirtualMachineService controller end to end with the pinned kubectl against
# a real kube-apiserver + etcd + kube-controller-manager (tests/cluster/cluster.sh; no vCenter: VM
# status is written through the status subresource, as the VM controller would). A LoadBalancer
# service over three VMs and a probe VM; power one off -> it leaves the ready set; relabel one ->
# it leaves the selection; the probe VM fails, then recovers; only vmop's EndpointSlice exists
# (kube-controller-manager's mirroring is told to skip); delete the service -> the garbage
# collector removes Service, Endpoints and EndpointSlice.
# Needs VMOP_CLUSTER_SH (meson: cluster_env), VMSVC_RUN (tests/operator/vmsvc_run), VMOP_SOURCE_ROOT.
set -eu
: "${VMSVC_RUN:?set VMSVC_RUN to the vmsvc_run binary}"
ROOT=${VMOP_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
: "${VMOP_CLUSTER_SH:=$ROOT/tests/cluster/cluster.sh}"
. "$(dirname "$VMOP_CLUSTER_SH")/cluster_lib.sh"
TMP=$(mktemp -d)
CTRL_PID=
cleanup() {
    if [ -n "$CTRL_PID" ]; then
        kill "$CTRL_PID" 2>/dev/null || true
        wait "$CTRL_PID" 2>/dev/null || true
    fi
    cluster_stop
    if [ -n "${VMOP_KEEP_TMP:-}" ]; then echo "kept $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
    echo "FAIL: $*" >&2
    [ -f "$TMP/ctrl.err" ] && sed 's/^/controller: /' "$TMP/ctrl.err" >&2
    exit 1
}
# wait_for [-t SECONDS] DESCRIPTION COMMAND...: polls COMMAND (bounded, default 20 s)
wait_for() {
    limit=200
    if [ "$1" = -t ]; then limit=$(($2 * 10)); shift 2; fi
    what=$1; shift; i=0
    until "$@" >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -le $limit ] || fail "timed out: $what"; sleep 0.1
    done
}

cluster_start "$TMP/cluster" "$TMP" || fail "the cluster did not start (see $TMP/cluster/*.log)"
k() { "$KUBECTL" --request-timeout=20s "$@"; }
k create namespace vmsvc-e2e >/dev/null || fail "namespace"
k config set-context --current --namespace=vmsvc-e2e >/dev/null || fail "kubeconfig namespace"

k apply -f "$ROOT/manifests/crd/vmoperator.vmware.com_virtualmachines.yaml" \
        -f "$ROOT/manifests/crd/vmoperator.vmware.com_virtualmachineservices.yaml" >/dev/null || fail "CRDs"
# kubectl wait errors out (not waits) on a CRD whose status has no conditions yet: poll it
wait_for -t 60 "CRDs Established" k wait --for=condition=Established --timeout=10s \
    crd/virtualmachines.vmoperator.vmware.com crd/virtualmachineservices.vmoperator.vmware.com
wait_for "CRDs served" k get virtualmachines,virtualmachineservices

for n in 1 2 3 4; do
    probe=""
    [ $n = 4 ] && probe="
  readinessProbe:
    tcpSocket:
      port: 22"
    cat >"$TMP/vm$n.yaml" <<YAML
apiVersion: vmoperator.vmware.com/v1alpha6
kind: VirtualMachine
metadata:
  name: vm-$n
  labels: {app: web}
spec:
  className: small
  imageName: vmi-0123456789abcdef0
  powerState: PoweredOn$probe
YAML
    k apply -f "$TMP/vm$n.yaml" >/dev/null || fail "vm-$n"
    k patch vm "vm-$n" --subresource=status --type=merge \
        -p "{\"status\":{\"powerState\":\"PoweredOn\",\"network\":{\"primaryIP4\":\"10.30.0.$n\"}}}" >/dev/null ||
        fail "status of vm-$n"
done
ready_cond() {
    k patch vm vm-4 --subresource=status --type=merge -p "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"$1\",\"reason\":\"$2\",\"message\":\"\",\"lastTransitionTime\":\"2026-11-29T00:00:0${3}Z\"}]}}" >/dev/null ||
        fail "Ready condition"
}
ready_cond False NotReady 1

cat >"$TMP/svc.yaml" <<'YAML'
apiVersion: vmoperator.vmware.com/v1alpha6
kind: VirtualMachineService
metadata:
  name: web
spec:
  type: LoadBalancer
  selector: {app: web}
  ports:
  - {name: http, protocol: TCP, port: 80, targetPort: 8080}
YAML
k apply -f "$TMP/svc.yaml" >/dev/null || fail "VirtualMachineService"

"$VMSVC_RUN" "$KUBECONFIG" >"$TMP/ctrl.out" 2>"$TMP/ctrl.err" 9>&- &
CTRL_PID=$!
wait_for "controller ready" grep -q ready "$TMP/ctrl.out"

# endpoints_are READY NOTREADY: the stored Endpoints list exactly these VM names
endpoints_are() {
    r=$(k get endpoints web -o jsonpath='{.subsets[0].addresses[*].targetRef.name}')
    n=$(k get endpoints web -o jsonpath='{.subsets[0].notReadyAddresses[*].targetRef.name}')
    [ "$r" = "$1" ] && [ "$n" = "$2" ]
}
wait_for "three ready, probe VM not ready" endpoints_are "vm-1 vm-2 vm-3" "vm-4"
[ "$(k get svc web -o jsonpath='{.spec.type}')" = LoadBalancer ] || fail "Service type"
[ -z "$(k get svc web -o jsonpath='{.spec.selector}')" ] || fail "Service has a selector"
[ "$(k get svc web -o jsonpath='{.metadata.ownerReferences[0].kind}')" = VirtualMachineService ] || fail "owner"
[ "$(k get endpointslice web -o jsonpath='{.metadata.labels.kubernetes\.io/service-name}')" = web ] || fail "slice label"
[ "$(k get endpoints web -o jsonpath='{.metadata.labels.endpointslice\.kubernetes\.io/skip-mirror}')" = true ] ||
    fail "Endpoints lack skip-mirror: kube-controller-manager would mirror them into a second slice"
[ "$(k get vmservice web -o jsonpath='{.metadata.finalizers[0]}')" = vmoperator.vmware.com/virtualmachineservice ] || fail "finalizer"

k patch vm vm-2 --subresource=status --type=merge -p '{"status":{"powerState":"PoweredOff"}}' >/dev/null
wait_for "powered-off VM not ready" endpoints_are "vm-1 vm-3" "vm-2 vm-4"

k label vm vm-3 app=other --overwrite >/dev/null
wait_for "relabeled VM out of the selection" endpoints_are "vm-1" "vm-2 vm-4"

ready_cond True Ready 2
wait_for "probe VM ready" endpoints_are "vm-1 vm-4" "vm-2"
ready_cond False NotReady 3
wait_for "probe VM not ready again" endpoints_are "vm-1" "vm-2 vm-4"
ready_cond True Ready 4
wait_for "probe VM recovered" endpoints_are "vm-1 vm-4" "vm-2"
slice_ready() { [ "$(k get endpointslice web -o jsonpath='{.endpoints[?(@.conditions.ready==true)].targetRef.name}')" = "vm-1 vm-4" ]; }
wait_for "slice ready set" slice_ready
# seconds after the Endpoints were written, kube-controller-manager has mirrored nothing
[ "$(k get endpointslice -l kubernetes.io/service-name=web -o name | wc -l)" -eq 1 ] ||
    fail "EndpointSlices of web: $(k get endpointslice -l kubernetes.io/service-name=web -o name)"

k delete vmservice web --timeout=20s >/dev/null || fail "delete"
gone() { ! k get "$1" web >/dev/null 2>&1; }
# the garbage collector finds a new CRD's resource at its next discovery sync (every 30 s): the
# dependents of a just-created CRD's object can take that long
wait_for -t 90 "Service gone" gone service
wait_for -t 90 "Endpoints gone" gone endpoints
wait_for -t 90 "EndpointSlice gone" gone endpointslice
echo "e2e_vmservice: OK"
