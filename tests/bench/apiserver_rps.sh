#!/bin/sh
# apiserver_rps.sh: requests per second of kube-testapi for GET (one object) and LIST (N objects),
# measured with parallel curl keep-alive loops. Prints numbers only (no pass/fail).
# Usage: VMOP_TESTAPI=<path> tests/bench/apiserver_rps.sh [N objects, default 1000] [requests, default 2000]
set -u
BIN=${VMOP_TESTAPI:?set VMOP_TESTAPI to the kube-testapi binary}
N=${1:-1000}
R=${2:-2000}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/apiserver-bench.XXXXXX")
"$BIN" --listen 127.0.0.1:0 --die-with-parent >"$DIR/ready" 2>"$DIR/log" &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$DIR"' EXIT INT TERM
i=0
while [ ! -s "$DIR/ready" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
URL=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$DIR/ready")
[ -n "$URL" ] || { echo "server did not start"; exit 1; }

now() { date +%s.%N; }
# run NAME METHOD PATH COUNT [DATA-TEMPLATE]: COUNT requests over 4 keep-alive curl processes
run() {
    name=$1; method=$2; path=$3; count=$4
    per=$((count / 4))
    : >"$DIR/urls"
    j=0
    while [ $j -lt $per ]; do printf 'url = "%s%s"\noutput = "/dev/null"\n' "$URL" "$path"; j=$((j + 1)); done >"$DIR/urls"
    t0=$(now)
    pids=""
    for k in 1 2 3 4; do
        curl -s -X "$method" -K "$DIR/urls" &
        pids="$pids $!"
    done
    for p in $pids; do wait "$p" || true; done
    t1=$(now)
    echo "$name: $((per * 4)) requests in $(echo "$t1 - $t0" | bc) s = $(echo "$per * 4 / ($t1 - $t0)" | bc) req/s"
}

# seed N configmaps with one POST per object (also measured)
t0=$(now)
j=0
while [ $j -lt "$N" ]; do
    [ $j -gt 0 ] && echo "next"
    printf 'url = "%s/api/v1/namespaces/default/configmaps"\n-X POST\n-H "Content-Type: application/json"\noutput = "/dev/null"\n' "$URL"
    printf 'data = "{\\"metadata\\":{\\"name\\":\\"cm-%05d\\"},\\"data\\":{\\"k\\":\\"v\\"}}"\n' "$j"
    j=$((j + 1))
done >"$DIR/posts"
curl -s -K "$DIR/posts"
t1=$(now)
echo "CREATE: $N objects in $(echo "$t1 - $t0" | bc) s = $(echo "$N / ($t1 - $t0)" | bc) req/s (one connection)"
run "GET one object" GET "/api/v1/namespaces/default/configmaps/cm-00000" "$R"
run "LIST $N objects" GET "/api/v1/namespaces/default/configmaps" $((R / 20 < 40 ? 40 : R / 20))
run "LIST limit=50" GET "/api/v1/namespaces/default/configmaps?limit=50" "$R"
run "LIST by label (no match)" GET "/api/v1/namespaces/default/configmaps?labelSelector=x%3Dy" $((R / 10 < 40 ? 40 : R / 10))
