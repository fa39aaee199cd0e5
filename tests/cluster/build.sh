#!/bin/bash
# build.sh: builds the real Kubernetes control plane the tests and the demo run on, from the Go
# modules pinned in tests/cluster/kube/go.mod (kube-apiserver, kube-controller-manager, kubectl of
# one Kubernetes release) and tests/cluster/etcd/go.mod (etcd). Test infrastructure only: the
# product stays C.
#
#   tests/cluster/build.sh            build what is missing, print the bin directory on stdout
#
# Binaries go to caches keyed by the pinned versions and the go.mod/go.sum files:
#   ${VMOP_KUBE_CACHE:-$HOME/.cache/vmop/cluster}/kube-<version>-<hash>/{kube-apiserver,kube-controller-manager,kubectl}
#   ${VMOP_KUBE_CACHE:-$HOME/.cache/vmop/cluster}/etcd-<version>-<hash>/etcd
# and the bin directory printed links all four. A warm cache costs one hash of four small files. Progress goes to stderr, one line per binary with
# the time it took. Go's own caches (GOMODCACHE, GOCACHE) are shared by all builds.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE_ROOT=${VMOP_KUBE_CACHE:-${HOME:-/root}/.cache/vmop/cluster}

kube_version=$(awk '($1 == "k8s.io/kubernetes" && $2 ~ /^v/) {print $2} ($1 == "require" && $2 == "k8s.io/kubernetes") {print $3}' "$HERE/kube/go.mod" | head -1)
etcd_version=$(awk '($1 == "go.etcd.io/etcd/server/v3" && $2 ~ /^v/) {print $2} ($1 == "require" && $2 == "go.etcd.io/etcd/server/v3") {print $3}' "$HERE/etcd/go.mod" | head -1)
[ -n "$kube_version" ] && [ -n "$etcd_version" ] || { echo "build.sh: cannot read the pinned versions" >&2; exit 1; }
hash_of() { cat "$@" | sha256sum | cut -c1-12; }
kube_dir="$CACHE_ROOT/kube-$kube_version-$(hash_of "$HERE/kube/go.mod" "$HERE/kube/go.sum")"
etcd_dir="$CACHE_ROOT/etcd-$etcd_version-$(hash_of "$HERE/etcd/go.mod" "$HERE/etcd/go.sum" "$HERE/etcd/main.go")"
bin="$CACHE_ROOT/bin-$(echo "$kube_dir $etcd_dir" | sha256sum | cut -c1-12)"

link_bin() {
    mkdir -p "$bin"
    local b
    for b in kube-apiserver kube-controller-manager kubectl; do ln -sfn "$kube_dir/$b" "$bin/$b"; done
    ln -sfn "$etcd_dir/etcd" "$bin/etcd"
}
if [ -f "$kube_dir/complete" ] && [ -f "$etcd_dir/complete" ]; then
    link_bin
    echo "$bin"
    exit 0
fi
mkdir -p "$kube_dir" "$etcd_dir"

# Version stamps as Kubernetes' own build sets them (hack/lib/version.sh), so that /version and
# `kubectl version` report the release instead of v0.0.0-master.
minor=${kube_version#v1.}
minor=${minor%%.*}
build_date=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Time"])' \
    "$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$kube_version.info" 2>/dev/null || echo 1970-01-01T00:00:00Z)
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
done
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local

step() { # name out-dir module-dir package
    local t0 t1
    t0=$(date +%s)
    echo "cluster: building $1 (Kubernetes $kube_version, etcd $etcd_version; a cold build takes minutes) ..." >&2
    (cd "$3" && go build -trimpath -tags selinux,notest,grpcnotrace -ldflags "$ldflags" -o "$2/$1.tmp" "$4") >&2
    mv "$2/$1.tmp" "$2/$1"
    t1=$(date +%s)
    echo "cluster: built $1 in $((t1 - t0)) s" >&2
}

[ -x "$etcd_dir/etcd" ] || step etcd "$etcd_dir" "$HERE/etcd" .
touch "$etcd_dir/complete"
for b in kubectl kube-apiserver kube-controller-manager; do
    [ -x "$kube_dir/$b" ] || step "$b" "$kube_dir" "$HERE/kube" "k8s.io/kubernetes/cmd/$b"
done
touch "$kube_dir/complete"
link_bin
echo "$bin"
