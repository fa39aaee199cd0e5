#!/bin/bash
# cluster.sh: a real Kubernetes control plane on loopback for tests and the demo: etcd,
# kube-apiserver and kube-controller-manager built from the pinned modules (build.sh), with a
# throwaway PKI, RBAC enforced and ServiceAccount tokens.
#
#   tests/cluster/cluster.sh up DIR      start all three, wait (bounded) until ready, write:
#       DIR/kubeconfig                   cluster admin (client certificate, O=system:masters)
#       DIR/pki/                         ca.crt (client and serving CA), apiserver.{crt,key}, sa.{key,pub},
#                                        admin.token (a static cluster-admin bearer token), ...
#       DIR/cluster.json                 {"url":..,"port":..,"bin":..}
#       DIR/{etcd,kube-apiserver,kube-controller-manager}.{pid,log}
#   tests/cluster/cluster.sh user DIR NAME [GROUP]   DIR/NAME.kubeconfig: a client certificate user
#   tests/cluster/cluster.sh down DIR    stop what `up` started (by process ID)
#
# Everything listens on 127.0.0.1 only. Nothing secret is printed. kube-apiserver runs with
# --authorization-mode=Node,RBAC and the default admission plugins; kube-controller-manager runs the
# controllers listed in KCM_CONTROLLERS below.
# CLUSTER_WAIT_S bounds each wait (default 90). CLUSTER_APISERVER_ARGS adds kube-apiserver flags.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
WAIT_S=${CLUSTER_WAIT_S:-90}
# The controllers that judge what vmop does (owner references, namespace deletion, ServiceAccounts
# and their tokens, aggregated RBAC roles, Endpoints/EndpointSlices and mirroring, quotas,
# Deployments). No scheduler or kubelet runs, so Pods stay Pending.
KCM_CONTROLLERS=garbage-collector-controller,namespace-controller,serviceaccount-controller
KCM_CONTROLLERS+=,serviceaccount-token-controller,root-ca-certificate-publisher-controller
KCM_CONTROLLERS+=,clusterrole-aggregation-controller,endpoints-controller,endpointslice-controller
KCM_CONTROLLERS+=,endpointslice-mirroring-controller,resourcequota-controller
KCM_CONTROLLERS+=,deployment-controller,replicaset-controller

die() { echo "cluster: $*" >&2; exit 1; }
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# ---- PKI (openssl) ----
ossl() { openssl "$@" >/dev/null 2>&1 || die "openssl $1 failed"; }

make_ca() { # pki
    [ -f "$1/ca.crt" ] && return 0
    ossl genrsa -out "$1/ca.key" 2048
    ossl req -x509 -new -key "$1/ca.key" -subj "/CN=vmop-test-ca" -days 3650 -out "$1/ca.crt" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
}

sign() { # pki name subject extensions
    local pki=$1 name=$2
    [ -f "$pki/$name.crt" ] && return 0
    ossl genrsa -out "$pki/$name.key" 2048
    ossl req -new -key "$pki/$name.key" -subj "$3" -out "$pki/$name.csr"
    printf '%s\n' "$4" >"$pki/$name.ext"
    ossl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
        -days 3650 -extfile "$pki/$name.ext" -out "$pki/$name.crt"
    rm -f "$pki/$name.csr" "$pki/$name.ext"
    chmod 600 "$pki/$name.key"
}

client_cert() { # pki name subject
    sign "$1" "$2" "$3" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
}

b64() { base64 -w0 <"$1"; }

write_kubeconfig() { # out url pki cert-name user [namespace]
    local out=$1 url=$2 pki=$3 name=$4 user=$5 ns=${6:-default}
    (
        umask 077
        cat >"$out" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: vmop-test
  cluster:
    server: $url
    certificate-authority-data: $(b64 "$pki/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(b64 "$pki/$name.crt")
    client-key-data: $(b64 "$pki/$name.key")
contexts:
- name: $user@vmop-test
  context: {cluster: vmop-test, user: $user, namespace: $ns}
current-context: $user@vmop-test
EOF
    )
}

# ---- processes ----
start_bg() { # dir name cmd...
    local dir=$1 name=$2
    shift 2
    setsid "$@" </dev/null >>"$dir/$name.log" 2>&1 &
    echo $! >"$dir/$name.pid"
}

alive_or_die() { # dir name
    kill -0 "$(cat "$1/$2.pid")" 2>/dev/null || { tail -30 "$1/$2.log" >&2; die "$2 exited during start-up"; }
}

wait_until() { # dir name description command...
    local dir=$1 name=$2 what=$3 i
    shift 3
    for ((i = 0; i < WAIT_S * 10; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        alive_or_die "$dir" "$name"
        sleep 0.1
    done
    tail -30 "$dir/$name.log" >&2
    die "$name: $what not reached within ${WAIT_S}s (see $dir/$name.log)"
}

# Like wait_until, but returns 2 (instead of dying) when the process exited because its port was
# taken meanwhile: free_port() only finds a port that was free a moment ago, and a test running
# in parallel may bind it first. The caller picks a new port and starts again.
wait_started() { # dir name description command...
    local dir=$1 name=$2 what=$3 i
    shift 3
    for ((i = 0; i < WAIT_S * 10; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        if ! kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null; then
            grep -q "address already in use" "$dir/$name.log" 2>/dev/null && return 2
            tail -30 "$dir/$name.log" >&2
            die "$name exited during start-up"
        fi
        sleep 0.1
    done
    tail -30 "$dir/$name.log" >&2
    die "$name: $what not reached within ${WAIT_S}s (see $dir/$name.log)"
}

# A port taken meanwhile: a new one (once per start, at most 3 tries), else give up.
port_taken() { # dir name portfile... ; uses/changes $tries
    local dir=$1 name=$2 f
    shift 2
    tries=$((tries + 1))
    [ "$tries" -lt 3 ] || die "$name: its port was taken $tries times (see $dir/$name.log)"
    echo "cluster: $name's port was taken meanwhile; trying another" >&2
    : >"$dir/$name.log"
    for f in "$@"; do free_port >"$dir/$f"; done
}

stop_one() { # dir name
    local pidf="$1/$2.pid" pid i
    [ -f "$pidf" ] || return 0
    pid=$(cat "$pidf")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$pidf"
}

admin_curl() { # dir path
    local pki=$1/pki
    curl -sf --max-time 5 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
        "https://127.0.0.1:$(cat "$1/apiserver.port")$2"
}

up() { # dir
    local dir=$1 bin pki eport epeer aport kport
    bin=$("$HERE/build.sh")
    pki=$dir/pki
    mkdir -p "$pki" "$dir/etcd-data"
    chmod 700 "$pki"
    for c in etcd kube-apiserver kube-controller-manager; do
        if [ -f "$dir/$c.pid" ] && kill -0 "$(cat "$dir/$c.pid")" 2>/dev/null; then
            die "$c already runs in $dir (cluster.sh down $dir first)"
        fi
    done

    make_ca "$pki"
    sign "$pki" apiserver "/CN=kube-apiserver" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
    client_cert "$pki" admin "/O=system:masters/CN=vmop-test-admin"
    client_cert "$pki" controller-manager "/CN=system:kube-controller-manager"
    # A static bearer token for cluster admin (--token-auth-file), for clients that test token
    # authentication through the fault proxy (a proxy cannot forward a client certificate).
    [ -f "$pki/admin.token" ] || (umask 077; head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$pki/admin.token")
    (umask 077; printf '%s,vmop-test-token-admin,vmop-test-token-admin,"system:masters"\n' \
        "$(cat "$pki/admin.token")" >"$pki/tokens.csv")
    [ -f "$pki/sa.key" ] || { ossl genrsa -out "$pki/sa.key" 2048; ossl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub"; }
    chmod 600 "$pki"/*.key

    eport=$(cat "$dir/etcd.port" 2>/dev/null || free_port)
    epeer=$(cat "$dir/etcd-peer.port" 2>/dev/null || free_port)
    aport=$(cat "$dir/apiserver.port" 2>/dev/null || free_port)
    kport=$(cat "$dir/controller-manager.port" 2>/dev/null || free_port)
    echo "$eport" >"$dir/etcd.port"
    echo "$epeer" >"$dir/etcd-peer.port"
    echo "$aport" >"$dir/apiserver.port"
    echo "$kport" >"$dir/controller-manager.port"

    echo "cluster: starting etcd, kube-apiserver, kube-controller-manager ($("$bin/kube-apiserver" --version 2>/dev/null))" >&2
    local tries=0 rc
    while :; do
        eport=$(cat "$dir/etcd.port") epeer=$(cat "$dir/etcd-peer.port")
        start_bg "$dir" etcd "$bin/etcd" --name vmop-test --data-dir "$dir/etcd-data" \
            --listen-client-urls "http://127.0.0.1:$eport" --advertise-client-urls "http://127.0.0.1:$eport" \
            --listen-peer-urls "http://127.0.0.1:$epeer" --initial-advertise-peer-urls "http://127.0.0.1:$epeer" \
            --initial-cluster "vmop-test=http://127.0.0.1:$epeer" --listen-metrics-urls "" \
            --unsafe-no-fsync --log-level warn
        rc=0
        wait_started "$dir" etcd "health" curl -sf --max-time 2 "http://127.0.0.1:$eport/health" || rc=$?
        [ "$rc" = 2 ] || break
        port_taken "$dir" etcd etcd.port etcd-peer.port
    done

    tries=0
    while :; do
        aport=$(cat "$dir/apiserver.port")
        # shellcheck disable=SC2086
        start_bg "$dir" kube-apiserver "$bin/kube-apiserver" \
            --etcd-servers "http://127.0.0.1:$eport" \
            --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$aport" \
            --endpoint-reconciler-type none \
            --cert-dir "$dir/apiserver-certs" \
            --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
            --client-ca-file "$pki/ca.crt" --token-auth-file "$pki/tokens.csv" \
            --service-account-issuer https://kubernetes.default.svc \
            --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
            --authorization-mode Node,RBAC \
            --service-cluster-ip-range 10.96.0.0/16 \
            --allow-privileged=true --profiling=false \
            ${CLUSTER_APISERVER_ARGS:-}
        rc=0
        wait_started "$dir" kube-apiserver "/readyz" admin_curl "$dir" /readyz || rc=$?
        [ "$rc" = 2 ] || break
        port_taken "$dir" kube-apiserver apiserver.port
    done

    write_kubeconfig "$dir/kubeconfig" "https://127.0.0.1:$aport" "$pki" admin vmop-test-admin
    write_kubeconfig "$dir/controller-manager.kubeconfig" "https://127.0.0.1:$aport" "$pki" \
        controller-manager system:kube-controller-manager

    tries=0
    while :; do
        kport=$(cat "$dir/controller-manager.port")
        start_bg "$dir" kube-controller-manager "$bin/kube-controller-manager" \
            --kubeconfig "$dir/controller-manager.kubeconfig" \
            --authentication-kubeconfig "$dir/controller-manager.kubeconfig" \
            --authorization-kubeconfig "$dir/controller-manager.kubeconfig" \
            --bind-address 127.0.0.1 --secure-port "$kport" --cert-dir "$dir/controller-manager-certs" \
            --authorization-always-allow-paths /healthz,/readyz,/livez,/metrics \
            --leader-elect=false \
            --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
            --use-service-account-credentials=true \
            --controllers "$KCM_CONTROLLERS"
        rc=0
        wait_started "$dir" kube-controller-manager "/healthz" \
            curl -skf --max-time 2 "https://127.0.0.1:$kport/healthz" || rc=$?
        [ "$rc" = 2 ] || break
        port_taken "$dir" kube-controller-manager controller-manager.port
    done
    # The ServiceAccount admission plugin needs the namespace's `default` ServiceAccount, which the
    # serviceaccount controller creates: wait for it in `default` so that the first write succeeds.
    wait_until "$dir" kube-controller-manager "the default ServiceAccount" \
        admin_curl "$dir" /api/v1/namespaces/default/serviceaccounts/default

    python3 -c 'import json,sys; print(json.dumps({"url": "https://127.0.0.1:" + sys.argv[1], "port": int(sys.argv[1]), "bin": sys.argv[2], "ca": sys.argv[3]}))' \
        "$aport" "$bin" "$pki/ca.crt" >"$dir/cluster.json"
    echo "cluster: ready at https://127.0.0.1:$aport" >&2
}

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: cluster.sh up|down DIR | cluster.sh user DIR NAME [GROUP]"
case $cmd in
up)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    up "$dir"
    ;;
user)
    dir=$(cd "$dir" && pwd)
    name=${3:?user name}
    subj="/CN=$name"
    [ -n "${4:-}" ] && subj="/O=$4/CN=$name"
    client_cert "$dir/pki" "user-$name" "$subj"
    write_kubeconfig "$dir/$name.kubeconfig" "https://127.0.0.1:$(cat "$dir/apiserver.port")" "$dir/pki" \
        "user-$name" "$name"
    ;;
down)
    [ -d "$dir" ] || exit 0
    for c in kube-controller-manager kube-apiserver etcd; do stop_one "$dir" "$c"; done
    ;;
*) die "unknown command '$cmd'" ;;
esac
