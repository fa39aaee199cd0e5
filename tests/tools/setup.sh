#!/bin/sh
# setup.sh: install (idempotently) every Debian package vmop's build, demo and tests need.
# Used by both README commands and by .ci/run. Runs as root on a bare Debian bookworm machine.
set -eu
PKGS="meson ninja-build pkg-config gcc clang libclang-rt-14-dev clang-format podman runc debootstrap
libcurl4-openssl-dev libxml2-dev libcjson-dev libssl-dev check zlib1g-dev libmicrohttpd-dev libpcre2-dev libyaml-dev
cloud-init python3 python3-yaml jq curl ca-certificates git openssl"
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
# Go builds the test infrastructure (simulator, control plane, fault proxy) from pinned modules;
# Debian's golang-go (1.19) is too old for them: the machine's own Go 1.26 is needed.
gov=$(go env GOVERSION 2>/dev/null || echo none)
case $gov in
go1.2[6-9]* | go1.[3-9][0-9]* | go[2-9]*) ;;
*) echo "setup: Go 1.26 or newer is needed first in PATH (found: $gov)" >&2; exit 1 ;;
esac
exit 0
