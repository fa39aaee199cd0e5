#!/bin/sh
# e2e_kubectl.sh: drives REAL kubectl (1.32, through the gcloud dispatcher) against kube-testapi over
# TLS with a bearer token: version, api-resources, namespaces, CRD + CR apply (twice: unchanged),
# printer columns and -o wide, -o yaml/json, get -w, describe with events, patch merge/json/status,
# label/annotate, strategic merge on a CR (refused), server-side apply, delete waiting on a finalizer,
# wait --for=condition=Ready, explain, a rejected invalid object, ConfigMap re-apply (SMP).
# Usage: VMOP_TESTAPI=<path to kube-testapi> e2e_kubectl.sh   (exit 77 = skipped: no kubectl)
set -u

command -v kubectl >/dev/null 2>&1 || { echo "SKIP: kubectl not found"; exit 77; }
BIN=${VMOP_TESTAPI:?set VMOP_TESTAPI}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/e2e-kubectl.XXXXXX")
export KUBECACHEDIR="$DIR/cache"
export HOME="$DIR/home"
mkdir -p "$HOME"
SRV_PID=""
BG_PIDS=""
FAILS=0

cleanup() {
    for p in $BG_PIDS; do kill "$p" 2>/dev/null; done
    if [ -n "$SRV_PID" ]; then
        kill "$SRV_PID" 2>/dev/null
        wait "$SRV_PID" 2>/dev/null
    fi
    rm -rf "$DIR"
}
trap cleanup EXIT INT TERM HUP PIPE

"$BIN" --listen 127.0.0.1:0 --die-with-parent --tls --token "e2e-token" --kubeconfig-out "$DIR/kubeconfig" \
    >"$DIR/ready" 2>"$DIR/server.log" &
SRV_PID=$!
i=0
while [ ! -s "$DIR/ready" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$DIR/ready" ] || { echo "FAIL: server did not start"; cat "$DIR/server.log"; exit 1; }

K="kubectl --kubeconfig $DIR/kubeconfig --request-timeout=20s"

ok() { echo "ok - $1"; }
fail() { echo "FAIL - $1"; echo "---- output ----"; printf '%s\n' "$2" | head -40; FAILS=$((FAILS + 1)); }
# expect DESC NEEDLE CMD...: runs CMD, passes when it exits 0 and its output contains NEEDLE
expect() {
    desc=$1; needle=$2; shift 2
    out=$("$@" 2>&1); rc=$?
    if [ $rc -eq 0 ] && printf '%s' "$out" | grep -qF -- "$needle"; then ok "$desc"; else fail "$desc (rc=$rc)" "$out"; fi
}
# expect_fail DESC NEEDLE CMD...: passes when CMD fails and its output contains NEEDLE
expect_fail() {
    desc=$1; needle=$2; shift 2
    out=$("$@" 2>&1); rc=$?
    if [ $rc -ne 0 ] && printf '%s' "$out" | grep -qF -- "$needle"; then ok "$desc"; else fail "$desc (rc=$rc)" "$out"; fi
}
# poll_file FILE NEEDLE: waits (bounded, 15 s) until FILE contains NEEDLE
poll_file() {
    n=0
    while [ $n -lt 150 ]; do
        grep -qF -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1; n=$((n + 1))
    done
    return 1
}
# wait_pid PID: waits (bounded, 20 s) for a background command; returns its exit status
wait_pid() {
    n=0
    while kill -0 "$1" 2>/dev/null && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
    kill -0 "$1" 2>/dev/null && { kill "$1"; return 124; }
    wait "$1"
}

cat >"$DIR/crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList, shortNames: [wd], categories: [all]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: CPU, type: integer, jsonPath: .spec.cpu, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        description: "A Widget is a test resource."
        properties:
          spec:
            type: object
            description: "The desired state of the widget."
            properties:
              cpu: {type: integer, minimum: 1, description: "Number of virtual CPUs."}
              image: {type: string, description: "Image to boot."}
          status:
            type: object
            properties:
              phase: {type: string}
              observedGeneration: {type: integer}
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
                    observedGeneration: {type: integer}
                    reason: {type: string}
                    message: {type: string}
                    lastTransitionTime: {type: string}
EOF
cat >"$DIR/w1.yaml" <<'EOF'
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: e2e, labels: {app: demo}}
spec: {cpu: 2, image: debian}
EOF
cat >"$DIR/bad.yaml" <<'EOF'
apiVersion: example.com/v1
kind: Widget
metadata: {name: bad, namespace: e2e}
spec: {cpu: 0}
EOF
cat >"$DIR/cm.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: e2e}
data: {a: "1"}
EOF

expect "kubectl version reports the server" "Server Version: v1.32" $K version
expect "api-resources lists leases" "leases" $K api-resources
expect "create namespace" "namespace/e2e created" $K create namespace e2e
expect "apply CRD" "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created" $K apply -f "$DIR/crd.yaml"
expect "CRD established" "condition met" $K wait --for condition=established crd/widgets.example.com --timeout=10s
expect "api-resources shows the CRD" "widgets" $K api-resources --api-group=example.com
expect "apply CR" "widget.example.com/w1 created" $K apply -f "$DIR/w1.yaml"
expect "apply CR again is unchanged" "widget.example.com/w1 unchanged" $K apply -f "$DIR/w1.yaml"
expect "get shows printer columns" "PHASE" $K -n e2e get wd
out=$($K -n e2e get wd -o wide 2>&1)
if printf '%s' "$out" | head -1 | grep -q "CPU" && printf '%s' "$out" | grep -q "w1 .* 2 "; then ok "get -o wide shows priority columns"; else fail "get -o wide" "$out"; fi
expect "get -o yaml" "image: debian" $K -n e2e get wd w1 -o yaml
expect "get -o json" '"cpu": 2' $K -n e2e get wd w1 -o json
expect "get -A shows namespace" "e2e" $K get wd -A
expect "get by singular name" "w1" $K -n e2e get widget w1

# get -w: a change shows up as a new row
$K -n e2e get wd -w >"$DIR/watch.out" 2>&1 &
W=$!; BG_PIDS="$BG_PIDS $W"
if poll_file "$DIR/watch.out" "w1"; then
    $K -n e2e patch wd w1 --type merge -p '{"status":{"phase":"Watched"}}' --subresource status >/dev/null 2>&1
    if poll_file "$DIR/watch.out" "Watched"; then ok "get -w sees the change"; else fail "get -w" "$(cat "$DIR/watch.out")"; fi
else
    fail "get -w initial row" "$(cat "$DIR/watch.out")"
fi
kill $W 2>/dev/null

expect "patch --type merge" "patched" $K -n e2e patch wd w1 --type merge -p '{"spec":{"cpu":3}}'
expect "patch --type json" "patched" $K -n e2e patch wd w1 --type json -p '[{"op":"replace","path":"/spec/image","value":"ubuntu"}]'
expect "patch result" "ubuntu" $K -n e2e get wd w1 -o jsonpath='{.spec.image}{" "}{.spec.cpu}'
expect_fail "strategic merge patch on a CR is refused" "not supported" $K -n e2e patch wd w1 -p '{"spec":{"cpu":4}}'
expect "label" "labeled" $K -n e2e label wd w1 tier=gold
expect "annotate" "annotated" $K -n e2e annotate wd w1 note=hello
expect "label selector" "w1" $K -n e2e get wd -l tier=gold -o name

# describe with events (core/v1 Event pointing at the widget's uid)
UID_W1=$($K -n e2e get wd w1 -o jsonpath='{.metadata.uid}')
cat >"$DIR/ev.yaml" <<EOF
apiVersion: v1
kind: Event
metadata: {name: w1.e2e1, namespace: e2e}
involvedObject: {apiVersion: example.com/v1, kind: Widget, name: w1, namespace: e2e, uid: "$UID_W1"}
reason: Provisioned
message: widget provisioned on host h1
type: Normal
source: {component: widget-operator}
firstTimestamp: "2025-01-01T00:00:00Z"
lastTimestamp: "2025-01-01T00:00:00Z"
count: 1
EOF
expect "create event" "event/w1.e2e1 created" $K create -f "$DIR/ev.yaml"
expect "describe shows the event" "widget provisioned on host h1" $K -n e2e describe wd w1
expect "kubectl events" "Provisioned" $K -n e2e events

# wait --for=condition=Ready, satisfied by a status patch while it waits
$K -n e2e wait --for=condition=Ready wd/w1 --timeout=20s >"$DIR/wait.out" 2>&1 &
WP=$!; BG_PIDS="$BG_PIDS $WP"
GEN=$($K -n e2e get wd w1 -o jsonpath='{.metadata.generation}')
$K -n e2e patch wd w1 --subresource status --type merge \
    -p "{\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"observedGeneration\":$GEN}]}}" >/dev/null 2>&1
if wait_pid $WP && grep -q "condition met" "$DIR/wait.out"; then ok "wait --for=condition=Ready"; else fail "wait --for=condition=Ready" "$(cat "$DIR/wait.out")"; fi
expect "status shows in columns" "Running" $K -n e2e get wd w1

expect "explain uses OpenAPI" "Number of virtual CPUs" $K explain widgets.spec
expect_fail "invalid object is rejected with the field path" "spec.cpu" $K apply -f "$DIR/bad.yaml"

expect "server-side apply" "serverside-applied" $K apply --server-side -f "$DIR/w1.yaml" --force-conflicts

expect "configmap apply" "configmap/cfg created" $K apply -f "$DIR/cm.yaml"
sed -i 's/a: "1"/a: "2"/' "$DIR/cm.yaml"
expect "configmap re-apply (strategic merge)" "configmap/cfg configured" $K apply -f "$DIR/cm.yaml"
expect "configmap value" "2" $K -n e2e get cm cfg -o jsonpath='{.data.a}'

expect "create configmap (protobuf body)" "configmap/gen created" $K -n e2e create configmap gen --from-literal=k=v
expect "configmap from protobuf" "v" $K -n e2e get cm gen -o jsonpath='{.data.k}'
expect "create secret (protobuf body)" "secret/sec created" $K -n e2e create secret generic sec --from-literal=p=x
expect "secret data is base64" "eA==" $K -n e2e get secret sec -o jsonpath='{.data.p}'

# delete waits on a finalizer until it is removed
expect "add finalizer" "patched" $K -n e2e patch wd w1 --type merge -p '{"metadata":{"finalizers":["example.com/cleanup"]}}'
$K -n e2e delete wd w1 --timeout=20s >"$DIR/delete.out" 2>&1 &
DP=$!; BG_PIDS="$BG_PIDS $DP"
n=0
while [ -z "$($K -n e2e get wd w1 -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
if kill -0 $DP 2>/dev/null; then ok "delete blocks while the finalizer is there"; else fail "delete did not wait" "$(cat "$DIR/delete.out")"; fi
$K -n e2e patch wd w1 --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
if wait_pid $DP && grep -q "deleted" "$DIR/delete.out"; then ok "delete finishes after the finalizer is removed"; else fail "delete after finalizer" "$(cat "$DIR/delete.out")"; fi
expect_fail "object is gone" "NotFound" $K -n e2e get wd w1

expect "delete namespace" "deleted" $K delete namespace e2e --timeout=20s

if [ $FAILS -ne 0 ]; then
    echo "$FAILS check(s) failed; server log:"; tail -20 "$DIR/server.log"
    exit 1
fi
echo "all kubectl checks passed"
exit 0
