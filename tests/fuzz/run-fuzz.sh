#!/bin/sh
# run-fuzz.sh [SECONDS]: builds every libFuzzer target with clang + ASan + UBSan and fuzzes each
# one for SECONDS (default $FUZZ_SECONDS, else 10), starting from its seed corpus. Exits non-zero
# when any target crashes, leaks, hangs or trips UBSan, naming the targets that failed; their
# inputs are kept in $FUZZ_BUILD_DIR/fuzz-artifacts/<target>/ (fix the bug, then add the input to
# the target's corpus so the replay test guards it). New inputs found while fuzzing are thrown
# away (the seed corpora stay small and reviewed).
# Environment: FUZZ_BUILD_DIR (default <source>/build-fuzz), FUZZ_TARGETS (space-separated names
# to run a subset, default all), FUZZ_SECONDS.
set -eu
secs=${1:-${FUZZ_SECONDS:-10}}
src=$(cd "$(dirname "$0")/../.." && pwd)
bdir=${FUZZ_BUILD_DIR:-$src/build-fuzz}
td=$src/testdata/fuzz

# name  binary (in the build dir)  seed corpus
all="soap tests/fuzz/fuzz_soap $src/tests/fuzz/corpus/soap
kube_watch tests/fuzz/fuzz_kube_watch $td/kube_watch
kube_status tests/fuzz/fuzz_kube_status $td/kube_status
kube_yaml tests/fuzz/fuzz_kube_yaml $td/kube_yaml
vim_rest tests/fuzz/fuzz_vim_rest $td/vim_rest
vim_vm tests/fuzz/fuzz_vim_vm $td/vim_vm
ovf tests/fuzz/fuzz_ovf $td/ovf
guestinfo tests/fuzz/fuzz_guestinfo $td/guestinfo
vim_pbm tests/fuzz/fuzz_vim_pbm $src/tests/fuzz/corpus/pbm
wh_admission tests/fuzz/fuzz_wh_admission $td/wh_admission
wh_conversion tests/fuzz/fuzz_wh_conversion $td/wh_conversion
wh_http tests/fuzz/fuzz_wh_http $td/wh_http
api_vm tests/api/fuzz_vm_libfuzzer $td/api_vm
api_convert tests/api/fuzz_convert_libfuzzer $td/api_convert"

command -v clang >/dev/null || { echo "run-fuzz.sh: clang is not installed" >&2; exit 2; }
if [ ! -f "$bdir/build.ninja" ]; then
    CC=clang meson setup "$bdir" "$src" -Dfuzz=true -Db_sanitize=address,undefined \
        -Db_lundef=false -Dc_args=-fsanitize=fuzzer-no-link >/dev/null
elif ! grep -q '"name": "b_sanitize", "value": "address,undefined"' \
        "$bdir/meson-info/intro-buildoptions.json" 2>/dev/null; then
    # a build dir from an older run-fuzz.sh (ASan only): add UBSan
    meson configure "$bdir" -Db_sanitize=address,undefined >/dev/null
fi
selected=$(echo "$all" | while read -r name bin corpus; do
    if [ -z "${FUZZ_TARGETS:-}" ] || echo " $FUZZ_TARGETS " | grep -q " $name "; then
        echo "$name $bin $corpus"
    fi
done)
[ -n "$selected" ] || { echo "run-fuzz.sh: no target matches FUZZ_TARGETS" >&2; exit 2; }
# shellcheck disable=SC2046
ninja -C "$bdir" $(echo "$selected" | awk '{print $2}') >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
failed=""
echo "$selected" >"$work/targets"
while read -r name bin corpus; do
    mkdir -p "$work/$name/new" "$work/$name/art"
    status=0
    "$bdir/$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$work/$name/art/" \
        "$work/$name/new" "$corpus" >"$work/$name/log" 2>&1 </dev/null || status=$?
    if [ "$status" -ne 0 ]; then
        mkdir -p "$bdir/fuzz-artifacts/$name"
        cp "$work/$name/art/"* "$bdir/fuzz-artifacts/$name/" 2>/dev/null || true
        tail -n 60 "$work/$name/log" >&2
        echo "run-fuzz.sh: $name FAILED (exit $status); inputs kept in $bdir/fuzz-artifacts/$name/" >&2
        failed="$failed $name"
        continue
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name/log")
    echo "run-fuzz.sh: $name ran ${secs}s without a crash (${runs:-?} executions)"
done <"$work/targets"
if [ -n "$failed" ]; then
    echo "run-fuzz.sh: FAILED targets:$failed" >&2
    exit 1
fi
echo "run-fuzz.sh: all targets passed"
