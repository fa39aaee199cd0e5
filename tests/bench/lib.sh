# lib.sh: what the provisioning benchmarks share (sourced by provision.sh and side_by_side.sh; figures,
# never pass/fail). Needs `set -euo pipefail` in the caller and BENCH_ROOT (the repository).
#   bench_up DIR                start tests/devenv in DIR (build dir: $VMOP_BUILD_DIR), export PATH (the
#                               pinned kubectl), KUBECONFIG, KUBECACHEDIR; wait for the images
#   bench_down DIR              tear it down and remove DIR (BENCH_KEEP=1: keep it, say how to stop it)
#   bench_operator_stop DIR     stop the devenv's vmop (by its pid file); bench_operator_start DIR again
#   bench_build_floor DIR       build floor/ (Go) into DIR/benchfloor, once
#   bench_kube_dir DIR OUT      the admin kubeconfig's server, CA and client credentials as files in OUT
#                               (what the Go program reads)
#   bench_cpu DIR               "component cpu-seconds" lines: vmop, kube-apiserver, etcd,
#                               kube-controller-manager, vcsim (utime + stime from /proc, by pid file)
#   bench_vmop_cycle DIR N WAIT_S OUT.json
#                               one vmop run: apply N VMs (best-effort-xsmall, image by display name, one
#                               cloud-config Secret) with one `kubectl apply`, wait (bounded) until every one
#                               is PoweredOn with an IP, delete them all, wait until they are gone; writes
#                               wall times, vCenter calls (SOAP + REST, per method) and Kubernetes requests
#                               from vmop's /metrics, how long the `kubectl apply` itself took, the time at
#                               which half of the VMs were ready, CPU seconds per component and phase, and
#                               the operator's peak RSS (/proc VmHWM) as one JSON object. Readiness comes from
#                               one Kubernetes watch (floor/kready.go: each VM timed to its event).
#                               BENCH_BACKLOG=1 (vmop must run with --leader-elect): the apply happens while a
#                               Lease held by "bench-hold" keeps vmop standby (webhooks answer, nothing is
#                               reconciled); then the Lease is deleted and the create is timed from vmop's
#                               acquireTime: vmop's own provisioning with the objects already in place, without
#                               the admission path of N `kubectl apply` writes competing for the 2 cores.
#                               BENCH_RATE=R (VMs per second): the gradual benchmark; instead of one `kubectl
#                               apply` the VMs are POSTed one at a time, the i-th at i / R s (floor/kcreate.go,
#                               the Secret applied before), and each VM's latency (its POST -> its ready event)
#                               is reported: lat_p50_s, lat_p90_s, lat_p99_s, lat_max_s

# vmop's --workers: its own default unless set (the devenv alone starts it with 8)
export VMOP_WORKERS=${VMOP_WORKERS:-4}

bench_now_ms() { date +%s%3N; }

bench_up() { # dir
    local dir=$1 i
    "$BENCH_ROOT/tests/devenv" up "$dir" >/dev/null
    PATH=$("$BENCH_ROOT/tests/cluster/build.sh"):$PATH # the pinned kubectl
    export PATH KUBECONFIG=$dir/kubeconfig KUBECACHEDIR=$dir/kubecache
    # images must be there before the VMs name one by display name
    for ((i = 0; i < 600; i++)); do
        [ "$(kubectl get vmi -o name 2>/dev/null | wc -l)" -ge 1 ] && return 0
        sleep 0.1
    done
    echo "bench: no VirtualMachineImage after 60 s" >&2
    return 1
}

bench_down() { # dir
    if [ -z "${BENCH_KEEP:-}" ]; then
        "$BENCH_ROOT/tests/devenv" down "$1" >/dev/null 2>&1 || true
        rm -rf "$1"
    else
        echo "kept: tests/devenv down $1"
    fi
}

bench_operator_stop() { # dir: SIGTERM, 10 s, then SIGKILL (the process devenv started, by its pid file)
    local pidf=$1/operator.pid pid i
    [ -f "$pidf" ] || return 0
    pid=$(cat "$pidf")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$pidf"
}

bench_operator_start() { # dir: a fresh vmop, ready (caches synced)
    DEVENV_NO_BUILD=1 "$BENCH_ROOT/tests/devenv" restart "$1" operator >/dev/null
}

bench_manifest() { # n: the Secret and n VirtualMachines on stdout
    python3 - "$1" <<'PY'
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
}

bench_metrics() { # dir out: vmop's /metrics into out, the API server's into out.api
    curl -sf --max-time 10 "http://127.0.0.1:$(cat "$1/health.port")/metrics" >"$2"
    kubectl get --raw /metrics >"$2.api" 2>/dev/null || : >"$2.api"
}

# names of the VMs that are PoweredOn with an IP, one a line
bench_ready_names() {
    kubectl get vm -l bench=1 -o 'jsonpath={range .items[*]}{.metadata.name} {.status.powerState}/{.status.network.primaryIP4}{"\n"}{end}' 2>/dev/null |
        awk '$2 ~ /^PoweredOn\/[0-9]/ {print $1}' || true
}

bench_build_floor() { # dir
    [ -x "$1/benchfloor" ] && return 0
    GOTOOLCHAIN=local GOFLAGS=-mod=readonly go build -C "$BENCH_ROOT/tests/bench/floor" -o "$1/benchfloor" .
}

bench_kube_dir() { # dir out
    local kc=$1/kubeconfig out=$2
    mkdir -p "$out"
    v() { kubectl --kubeconfig "$kc" config view --raw --minify -o "jsonpath={$1}"; }
    v .clusters[0].cluster.server >"$out/server"
    v '.clusters[0].cluster.certificate-authority-data' | base64 -d >"$out/ca.crt"
    if [ -n "$(v .users[0].user.token)" ]; then
        (umask 077 && v .users[0].user.token >"$out/token")
    else
        v '.users[0].user.client-certificate-data' | base64 -d >"$out/client.crt"
        (umask 077 && v '.users[0].user.client-key-data' | base64 -d >"$out/client.key")
    fi
}

bench_cpu() { # dir
    local c pid
    for c in operator kube-apiserver etcd kube-controller-manager vcsim; do
        pid=$(cat "$1/$c.pid" 2>/dev/null) || continue
        awk -v c="$c" '{ sub(/^.*\) /, ""); printf "%s %.2f\n", c, ($12 + $13) / 100 }' "/proc/$pid/stat" 2>/dev/null || true
    done
}

BENCH_LEASE_NS=vmop-system BENCH_LEASE=vmop-leader # vmop's defaults (--namespace, --lease-name)

bench_hold_lease() { # dir: restart vmop as a standby behind a Lease held by "bench-hold"
    bench_operator_stop "$1"
    kubectl delete lease -n $BENCH_LEASE_NS $BENCH_LEASE --ignore-not-found >/dev/null
    kubectl create -f - >/dev/null <<EOF
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: $BENCH_LEASE, namespace: $BENCH_LEASE_NS}
spec: {holderIdentity: bench-hold, leaseDurationSeconds: 3600, acquireTime: "$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)", renewTime: "$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)"}
EOF
    bench_operator_start "$1"
}

bench_vmop_cycle() { # dir n wait_s out.json
    local dir=$1 n=$2 wait_s=$3 out=$4 w=$1/cycle i up=0 left t0 ta t1 t2 kpid
    rm -rf "$w" && mkdir -p "$w"
    bench_build_floor "$dir"
    [ -d "$dir/kubefiles" ] || bench_kube_dir "$dir" "$dir/kubefiles"
    bench_manifest "$n" >"$w/bench.yaml"
    [ -n "${BENCH_BACKLOG:-}" ] && bench_hold_lease "$dir"
    "$dir/benchfloor" -devenv "$dir" -phase kready -lat-kube-dir "$dir/kubefiles" -lat-api-version v1alpha6 \
        -kready-n "$n" -kready-timeout "${wait_s}s" -kready-started "$w/watching" \
        -kready-lease "$BENCH_LEASE_NS/$BENCH_LEASE" >"$w/kready.json" 2>"$w/kready.log" &
    kpid=$!
    for ((i = 0; i < 300; i++)); do [ -e "$w/watching" ] && break; sleep 0.1; done
    bench_metrics "$dir" "$w/m0"
    bench_cpu "$dir" >"$w/cpu0"
    if [ -n "${BENCH_RATE:-}" ]; then # the Secret now, the VMs one at a time from t0
        # kubectl prints one JSON document per object (a List when it was one): both become one List
        kubectl create --dry-run=client -o json -f "$w/bench.yaml" | python3 -c '
import json, sys
s, d, i, items = sys.stdin.read(), json.JSONDecoder(), 0, []
while True:
    while i < len(s) and s[i].isspace():
        i += 1
    if i == len(s):
        break
    o, i = d.raw_decode(s, i)
    items += o["items"] if o.get("kind") == "List" else [o]
json.dump({"apiVersion": "v1", "kind": "List", "items": [x for x in items if x["kind"] != "Secret"]}, open(sys.argv[1], "w"))
json.dump({"apiVersion": "v1", "kind": "List", "items": [x for x in items if x["kind"] == "Secret"]}, sys.stdout)
' "$w/bench.json" | kubectl apply -f - >/dev/null
    fi
    t0=$(bench_now_ms)
    if [ -n "${BENCH_RATE:-}" ]; then
        "$dir/benchfloor" -devenv "$dir" -phase kcreate -lat-kube-dir "$dir/kubefiles" -rate "$BENCH_RATE" \
            -kcreate-file "$w/bench.json" -phase-timeout "${wait_s}s" >"$w/kcreate.json" 2>"$w/kcreate.log" ||
            echo "WARNING: kcreate failed (see $w/kcreate.log)" >&2
    else
        kubectl apply -f "$w/bench.yaml" >/dev/null
    fi
    ta=$(bench_now_ms)
    [ -n "${BENCH_BACKLOG:-}" ] && kubectl delete lease -n $BENCH_LEASE_NS $BENCH_LEASE >/dev/null
    wait "$kpid" || echo "WARNING: the readiness watch failed (see $w/kready.log)" >&2
    t1=$(bench_now_ms)
    bench_metrics "$dir" "$w/m1"
    bench_cpu "$dir" >"$w/cpu1"
    up=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("ready", 0))' "$w/kready.json" 2>/dev/null || echo 0)
    [ "$up" -ge "$n" ] || echo "WARNING: only $up of $n VMs were PoweredOn with an IP after ${wait_s}s" >&2

    kubectl delete vm -l bench=1 --wait=false >/dev/null
    left=$n
    for ((i = 0; i < wait_s * 2; i++)); do
        left=$(kubectl get vm -l bench=1 -o name 2>/dev/null | wc -l)
        [ "$left" -eq 0 ] && break
        sleep 0.5
    done
    t2=$(bench_now_ms)
    bench_metrics "$dir" "$w/m2"
    bench_cpu "$dir" >"$w/cpu2"
    [ "$left" -eq 0 ] || echo "WARNING: $left VMs still present after ${wait_s}s" >&2
    kubectl delete secret bench-cc --ignore-not-found >/dev/null
    awk '/^VmHWM:/ {print $2}' "/proc/$(cat "$dir/operator.pid")/status" >"$w/rss_kb"

    python3 - "$w" "$n" "$up" "$left" "$t0" "$ta" "$t1" "$t2" "${BENCH_BACKLOG:-}" >"$out" <<'PY'
import json, re, statistics, sys
w, backlog = sys.argv[1], sys.argv[9] != ""
n, up, left, t0, ta, t1, t2 = map(int, sys.argv[2:9])
line = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)')

def read(p):
    m = {}
    for l in open(p):
        x = line.match(l)
        if x and not l.startswith("#"):
            m[(x.group(1), x.group(2) or "")] = float(x.group(3))
    return m

def fam(m, name):
    return sum(v for (k, _), v in m.items() if k == name)

def by_method(a, b):
    d = {}
    for (k, lab), v in b.items():
        if k == "vmop_vcenter_calls_total":
            meth = re.search(r'method="([^"]*)"', lab).group(1)
            delta = v - a.get((k, lab), 0)
            if delta:
                d[meth] = d.get(meth, 0) + int(delta)
    return d

m0, m1, m2 = (read("%s/%s" % (w, f)) for f in ("m0", "m1", "m2"))
a0, a1, a2 = (read("%s/%s.api" % (w, f)) for f in ("m0", "m1", "m2"))

def fam_vm(m, name, pat):  # a family of the API server's, over the series whose labels match pat
    return sum(v for (k, lab), v in m.items() if k == name and re.search(pat, lab))
kr = json.load(open(w + "/kready.json"))
start = kr.get("lease_acquire_ms") if backlog else t0  # backlog: from the moment vmop became the leader
seen = [x - start for x in kr.get("ready_ms", [])] if start else []
r = {"n": n, "ready": up, "left": left, "backlog": backlog,
     "create_s": round(max(seen) / 1000, 3) if seen and up >= n else round((t1 - t0) / 1000, 3),
     "apply_s": round((ta - t0) / 1000, 3),
     "delete_s": round((t2 - t1) / 1000, 3),
     "p50_ready_s": round(statistics.median(seen) / 1000, 3) if seen else None}
try:
    kc = json.load(open(w + "/kcreate.json"))
except (OSError, ValueError):
    kc = None
if kc is not None:  # gradual: each VM from its POST to its ready event
    by, lat = kr.get("ready_by", {}), []
    for name, t in kc.get("posted_ms", {}).items():
        if name in by:
            lat.append((by[name] - t) / 1000)
    lat.sort()
    q = lambda p: round(lat[min(len(lat) - 1, int(p * (len(lat) - 1) + 0.5))], 3) if lat else None
    r.update({"rate": kc.get("rate"), "posted": kc.get("posted"), "post_errors": kc.get("errors"),
              "post_p50_ms": kc.get("post_p50_ms"), "lat_n": len(lat), "lat_p50_s": q(0.5),
              "lat_p90_s": q(0.9), "lat_p99_s": q(0.99), "lat_max_s": q(1.0)})
if backlog:
    r["leader_after_apply_s"] = round((start - ta) / 1000, 3) if start else None
def cpu(p):
    return {l.split()[0]: float(l.split()[1]) for l in open(p) if l.strip()}
c0, c1, c2 = (cpu("%s/%s" % (w, f)) for f in ("cpu0", "cpu1", "cpu2"))
r["cpu_create_s"] = {k: round(c1[k] - c0.get(k, 0), 2) for k in c1}
r["cpu_delete_s"] = {k: round(c2[k] - c1.get(k, 0), 2) for k in c2 if k in c1}
for ph, a, b in (("create", m0, m1), ("delete", m1, m2)):
    soap = fam(b, "vmop_vcenter_soap_calls_total") - fam(a, "vmop_vcenter_soap_calls_total")
    rest = fam(b, "vmop_vcenter_rest_calls_total") - fam(a, "vmop_vcenter_rest_calls_total")
    kube = fam(b, "vmop_kube_requests_total") - fam(a, "vmop_kube_requests_total")
    r["soap_" + ph], r["rest_" + ph], r["kube_" + ph] = int(soap), int(rest), int(kube)
    r["calls_per_vm_" + ph] = round((soap + rest) / n, 2) if n else None
    r["kube_per_vm_" + ph] = round(kube / n, 2) if n else None
    r["calls_%s_by_method" % ph] = by_method(a, b)
    # the API server's side of the VirtualMachine writes: conversion reviews it sent (every write
    # is converted for each other served version's watch cache) and admission reviews
    aa, ab = {"create": (a0, a1), "delete": (a1, a2)}[ph]
    conv = (fam_vm(ab, "apiserver_crd_conversion_webhook_duration_seconds_count", 'crd_name="virtualmachines\\.')
            - fam_vm(aa, "apiserver_crd_conversion_webhook_duration_seconds_count", 'crd_name="virtualmachines\\.'))
    adm_pat = r'name="default\.(mutating|validating)\.virtualmachine\.'
    adm = (fam_vm(ab, "apiserver_admission_webhook_request_total", adm_pat)
           - fam_vm(aa, "apiserver_admission_webhook_request_total", adm_pat))
    r["conversions_per_vm_" + ph] = round(conv / n, 2) if n else None
    r["admissions_per_vm_" + ph] = round(adm / n, 2) if n else None
r["rss_mib"] = round(int(open(w + "/rss_kb").read().strip() or 0) / 1024, 1)
print(json.dumps(r))
PY
}
