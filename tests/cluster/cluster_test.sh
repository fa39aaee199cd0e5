#!/bin/bash
# cluster_test.sh: the control plane the tests run on is the real one, and it works as a cluster:
#   - kube-apiserver, kube-controller-manager and kubectl report the pinned release (go.mod);
#   - the binaries are the module builds from tests/cluster/build.sh's cache;
#   - RBAC is enforced: an unbound user is Forbidden;
#   - the garbage collector deletes a dependent once its owner is gone (ownerReferences);
#   - deleting a namespace deletes what is in it (the namespace controller);
#   - a ServiceAccount gets a token (TokenRequest) that authenticates as that ServiceAccount;
#   - `down` leaves no process behind.
# Every wait is bounded. Prints no token.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=$(mktemp -d "${TMPDIR:-/tmp}/vmop-cluster-test.XXXXXX")
cleanup() { "$HERE/cluster.sh" down "$DIR" >/dev/null 2>&1 || true; rm -rf "$DIR"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

wait_for() { # seconds description command...
    local n=$(($1 * 5)) what=$2 i
    shift 2
    for ((i = 0; i < n; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    fail "timed out after $n polls: $what"
}

want=$(awk '($1 == "k8s.io/kubernetes" && $2 ~ /^v/) {print $2}' "$HERE/kube/go.mod" | head -1)
"$HERE/cluster.sh" up "$DIR"
BIN=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bin"])' "$DIR/cluster.json")
k() { "$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" --request-timeout=20s "$@"; }

# the pinned release, built from modules into the cache
server=$(k version -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])')
client=$("$BIN/kubectl" version --client -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["clientVersion"]["gitVersion"])')
kcm=$("$BIN/kube-controller-manager" --version | awk '{print $2}')
[ "$server" = "$want" ] && [ "$client" = "$want" ] && [ "$kcm" = "$want" ] ||
    fail "versions: apiserver $server, kubectl $client, controller-manager $kcm; pinned $want"
case $(readlink -f "$BIN/kube-apiserver") in
"${VMOP_KUBE_CACHE:-${HOME:-/root}/.cache/vmop/cluster}"/kube-"$want"-*/kube-apiserver) ;;
*) fail "kube-apiserver is not the cached module build: $(readlink -f "$BIN/kube-apiserver")" ;;
esac
ok "kube-apiserver, kube-controller-manager and kubectl are $want from k8s.io/kubernetes"

# RBAC: a user with a valid certificate and no bindings may do nothing
"$HERE/cluster.sh" user "$DIR" nobody
out=$("$BIN/kubectl" --kubeconfig "$DIR/nobody.kubeconfig" get configmaps -n default 2>&1 || true)
case $out in *orbidden*) ;; *) fail "an unbound user was not refused: $out" ;; esac
ok "RBAC: an unbound user is Forbidden"

# garbage collection of dependents
k create configmap gc-owner -n default --from-literal=a=b >/dev/null
uid=$(k get configmap gc-owner -n default -o jsonpath='{.metadata.uid}')
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: gc-dependent
  namespace: default
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: gc-owner, uid: "$uid"}]
data: {c: d}
EOF
k delete configmap gc-owner -n default >/dev/null
gone() { ! k get configmap "$1" -n "${2:-default}" >/dev/null 2>&1; }
wait_for 60 "the garbage collector deletes gc-dependent" gone gc-dependent
ok "garbage collector: the dependent went with its owner"

# namespace deletion
k create namespace ns-doomed >/dev/null
wait_for 30 "the default ServiceAccount in ns-doomed" k get serviceaccount default -n ns-doomed
k create configmap inside -n ns-doomed --from-literal=x=y >/dev/null
k delete namespace ns-doomed --wait=false >/dev/null
ns_gone() { ! k get namespace ns-doomed >/dev/null 2>&1; }
wait_for 60 "namespace ns-doomed deleted" ns_gone
ok "namespace controller: the namespace and its contents are gone"

# ServiceAccount tokens
k create serviceaccount probe -n default >/dev/null
token=$(k create token probe -n default --duration 10m)
who=$("$BIN/kubectl" --server "https://127.0.0.1:$(cat "$DIR/apiserver.port")" \
    --certificate-authority "$DIR/pki/ca.crt" --token "$token" auth whoami -o jsonpath='{.status.userInfo.username}')
[ "$who" = "system:serviceaccount:default:probe" ] || fail "the token authenticates as '$who'"
ok "TokenRequest: the token is system:serviceaccount:default:probe"

# down leaves nothing behind
pids=$(cat "$DIR"/etcd.pid "$DIR"/kube-apiserver.pid "$DIR"/kube-controller-manager.pid)
"$HERE/cluster.sh" down "$DIR"
for p in $pids; do
    ! kill -0 "$p" 2>/dev/null || fail "process $p still runs after down"
done
ok "down: etcd, kube-apiserver and kube-controller-manager stopped"
