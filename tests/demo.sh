#!/bin/bash
# demo.sh: the README's demo. Installs what it needs, builds vmop, starts the govmomi vCenter
# simulator on loopback (TLS, thumbprint pinned) and shows the vimclient command-line tool working
# against it: inventory, Content Library, deploy from the library, a power cycle, destroy.
# Set DEMO_KEEP=1 to leave the simulator running at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${VMOP_BUILD_DIR:-$ROOT/build-dev}

sh tests/tools/setup.sh
if [ ! -f "$BUILD/build.ninja" ]; then meson setup "$BUILD" >/dev/null; fi
ninja -C "$BUILD" >/dev/null

WORK=$(mktemp -d /tmp/vmop-demo.XXXXXX)
cleanup() {
    if [ -z "${DEMO_KEEP:-}" ]; then
        [ -f "$WORK/vcsim.pid" ] && kill "$(cat "$WORK/vcsim.pid")" 2>/dev/null || true
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "Start the vCenter simulator (govmomi, TLS on 127.0.0.1)"
"$BUILD/tests/vcsim/vcsim-launcher" -listen 127.0.0.1:0 -tls=true -username demo@vsphere.local \
    -password "demo-$RANDOM$RANDOM" -die-with-parent=false >"$WORK/vcsim.out" 2>"$WORK/vcsim.log" </dev/null &
echo $! >"$WORK/vcsim.pid"
for _ in $(seq 1 600); do grep -q '^{' "$WORK/vcsim.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^{' "$WORK/vcsim.out" || { cat "$WORK/vcsim.log"; echo "simulator did not start"; exit 1; }
J=$(grep -m1 '^{' "$WORK/vcsim.out")
jf() { python3 -c 'import json,sys; j=json.loads(sys.argv[1]); exec("print(" + sys.argv[2] + ")")' "$J" "$1"; }
export VIMC_URL=$(jf 'j["url"]') VIMC_USERNAME=$(jf 'j["username"]') VIMC_PASSWORD=$(jf 'j["password"]')
export VIMC_THUMBPRINT=$(jf 'j["thumbprint_sha256"]')
echo "simulator at $VIMC_URL, certificate pinned by SHA-256 thumbprint $VIMC_THUMBPRINT"
VIMC="$BUILD/vimclient/tool/vimc"
POOL=$(jf 'j["resource_pool"]') FOLDER=$(jf 'j["folder"]') PG=$(jf 'j["portgroups"][0]')
LIB=$(jf 'j["libraries"][0]["name"]')
OVF_ITEM=$(jf '[i["name"] for i in j["libraries"][0]["items"] if i["type"]=="ovf"][0]')

step "Who is there"
run "$VIMC" about
step "Inventory: virtual machines and networks"
run "$VIMC" ls VirtualMachine
run "$VIMC" ls Network
step "Content Library"
run "$VIMC" lib ls
run "$VIMC" lib items "$LIB"
step "Deploy the OVF item '$OVF_ITEM' onto port group $PG"
run "$VIMC" lib deploy "$LIB/$OVF_ITEM" demo-vm --pool "$POOL" --folder "$FOLDER" --network "nic0=$PG"
VM="$FOLDER/demo-vm"
run "$VIMC" vm info "$VM"
step "Power cycle"
run "$VIMC" vm power on "$VM"
# The simulator's launcher plays the guest and reports an address shortly after power-on.
for _ in $(seq 1 50); do
    "$VIMC" vm info "$VM" | grep -q '^IP: *[0-9]' && break
    sleep 0.2
done
"$VIMC" vm info "$VM" | grep -E '^(Power|IP|Tools):'
run "$VIMC" vm power suspend "$VM"
run "$VIMC" vm power on "$VM"
run "$VIMC" vm power off "$VM"
step "Destroy"
run "$VIMC" vm destroy "$VM"
if "$VIMC" vm info "$VM" >/dev/null 2>&1; then echo "demo-vm still exists"; exit 1; fi
echo "demo-vm is gone"

if [ -n "${DEMO_KEEP:-}" ]; then
    step "The simulator keeps running"
    echo "export VIMC_URL=$VIMC_URL VIMC_USERNAME=$VIMC_USERNAME VIMC_THUMBPRINT=$VIMC_THUMBPRINT"
    echo "export VIMC_PASSWORD=... (see $WORK/vcsim.out); stop it with: kill $(cat "$WORK/vcsim.pid")"
fi
step "Demo finished"
