#!/bin/bash
# demo.sh: the README's demo. Installs what it needs, builds vmop, starts the development
# environment (govmomi vCenter simulator + a real kube-apiserver, etcd and kube-controller-manager
# built from pinned modules + vmop, all on 127.0.0.1, namespace `default` bound to the simulator)
# and then, with the pinned kubectl as the tenant user (who holds only vmop's tenant role):
#   - applies a cloud-config Secret and two VirtualMachines (best-effort-small and guaranteed-small,
#     the second on StorageClass wcp-policy: a vSphere storage policy) naming their image by its
#     display name;
#   - waits (bounded) until both are PoweredOn with an IP;
#   - shows `kubectl get vm -o wide`, `kubectl describe vm`, `kubectl get vmi`;
#   - deletes them and shows that vCenter no longer has them.
# DEMO_KEEP=1 leaves everything running (and the VMs in place) and says how to use it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export VMOP_BUILD_DIR=${VMOP_BUILD_DIR:-$ROOT/build-dev}
WAIT_S=${DEMO_WAIT_S:-120}

sh tests/tools/setup.sh
# the control plane and kubectl (a cold cache builds them: about 15 minutes on 2 cores)
BIN=$(tests/cluster/build.sh)
export PATH=$BIN:$PATH
echo "demo: building vmop"
if [ ! -f "$VMOP_BUILD_DIR/build.ninja" ]; then meson setup "$VMOP_BUILD_DIR" >/dev/null; fi
ninja -C "$VMOP_BUILD_DIR" >/dev/null

WORK=$(mktemp -d /tmp/vmop-demo.XXXXXX)
cleanup() {
    if [ -z "${DEMO_KEEP:-}" ]; then
        tests/devenv down "$WORK" >/dev/null 2>&1 || true
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "Start the development environment (vCenter simulator, kube-apiserver, etcd, kube-controller-manager, vmop)"
tests/devenv up "$WORK"
# from here on: the tenant, who may use VirtualMachines in `default` and nothing of the admin side
export KUBECONFIG=$WORK/tenant-kubeconfig KUBECACHEDIR=$WORK/kubecache
run kubectl version
run kubectl auth can-i get secrets -n vmop-system || true

step "The images vmop found in the content libraries"
for ((i = 0; i < WAIT_S * 2; i++)); do
    [ "$(kubectl get vmi -o name 2>/dev/null | wc -l)" -ge 2 ] && break
    sleep 0.5
done
run kubectl get vmi
run kubectl get cvmi
run kubectl get vmclass

step "Apply a cloud-config Secret and two VMs (image by display name)"
cat >"$WORK/demo.yaml" <<'YAML'
apiVersion: v1
kind: Secret
metadata:
  name: demo-cloud-config
stringData:
  user-data: |
    #cloud-config
    users:
    - name: demo
      ssh_authorized_keys: ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDemoKeyOnlyForTheDemo demo@example"]
---
apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: demo-web
  labels: {app: demo}
spec:
  className: best-effort-small
  imageName: vmop-tiny-ovf
  storageClass: wcp-default
  bootstrap:
    cloudInit:
      rawCloudConfig: {name: demo-cloud-config, key: user-data}
---
apiVersion: vmoperator.vmware.com/v1alpha5
kind: VirtualMachine
metadata:
  name: demo-db
  labels: {app: demo}
spec:
  className: guaranteed-small
  imageName: vmop-tiny-ovf
  storageClass: wcp-policy
  network:
    hostName: demo-db
  bootstrap:
    cloudInit:
      rawCloudConfig: {name: demo-cloud-config, key: user-data}
YAML
run kubectl apply -f "$WORK/demo.yaml"

step "Wait until both are PoweredOn with an IP (at most ${WAIT_S}s)"
ok=0
for ((i = 0; i < WAIT_S * 2; i++)); do
    n=$(kubectl get vm demo-web demo-db -o 'jsonpath={range .items[*]}{.status.powerState}/{.status.network.primaryIP4}{"\n"}{end}' 2>/dev/null |
        grep -c '^PoweredOn/[0-9]' || true)
    if [ "$n" = 2 ]; then ok=1; break; fi
    sleep 0.5
done
run kubectl wait vm/demo-web vm/demo-db --for=condition=Ready --timeout=30s || true
run kubectl get vm -o wide
if [ "$ok" != 1 ]; then
    echo "the VMs did not come up within ${WAIT_S}s; operator log:"; tail -30 "$WORK/operator.log"
    exit 1
fi
run kubectl describe vm demo-db

step "Every API version reads the same VMs (vmop's conversion webhook; stored as v1alpha6)"
run kubectl get virtualmachines.v1alpha2.vmoperator.vmware.com
run kubectl get virtualmachines.v1alpha1.vmoperator.vmware.com demo-web -o jsonpath='{.apiVersion} powerState={.spec.powerState}{"\n"}'

if [ -n "${DEMO_KEEP:-}" ]; then
    step "Everything keeps running"
    echo "  export PATH=$BIN:\$PATH KUBECONFIG=$KUBECONFIG KUBECACHEDIR=$KUBECACHEDIR"
    echo "  (cluster admin: $WORK/kubeconfig)"
    echo "  kubectl get vm -o wide; kubectl describe vm demo-web"
    echo "  vCenter simulator credentials: $WORK/vcenter.json; operator log: $WORK/operator.log"
    echo "  stop it all with: tests/devenv down $WORK"
    exit 0
fi

step "Delete the VMs: vmop powers them off and destroys them in vCenter"
run kubectl delete -f "$WORK/demo.yaml" --timeout=60s
run kubectl get vm
step "Demo finished"
