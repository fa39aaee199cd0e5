#!/bin/sh
# setup.sh: install (idempotently) every Debian package vmop's build, demo and tests need.
# Used by both README commands and by .ci/run. Runs as root on a bare Debian bookworm machine.
set -eu
PKGS="meson ninja-build pkg-config gcc clang libclang-rt-14-dev clang-format podman runc debootstrap
libcurl4-openssl-dev libxml2-dev libcjson-dev libssl-dev check zlib1g-dev libmicrohttpd-dev
cloud-init python3 python3-yaml jq curl ca-certificates git"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "setup: missing packages:$missing (run as root)" >&2
        exit 1
    fi
    echo "setup: installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $missing >/dev/null
fi
command -v kubectl >/dev/null 2>&1 || echo "setup: note: kubectl not found; end-to-end tests that need it will fail" >&2
exit 0
