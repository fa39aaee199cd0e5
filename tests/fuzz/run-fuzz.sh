#!/bin/sh
# run-fuzz.sh [SECONDS]: builds the SOAP fuzz target with clang + libFuzzer + ASan and fuzzes it
# for SECONDS (default 20), starting from tests/fuzz/corpus/soap. Exits non-zero on a crash, leak
# or timeout; the crashing input is kept in $FUZZ_BUILD_DIR/fuzz-artifacts/ (add it to the corpus
# once fixed). Environment: FUZZ_BUILD_DIR (default <source>/build-fuzz).
set -eu
secs=${1:-20}
src=$(cd "$(dirname "$0")/../.." && pwd)
bdir=${FUZZ_BUILD_DIR:-$src/build-fuzz}

command -v clang >/dev/null || { echo "run-fuzz.sh: clang is not installed" >&2; exit 2; }
if [ ! -f "$bdir/build.ninja" ]; then
    CC=clang meson setup "$bdir" "$src" -Dfuzz=true -Db_sanitize=address -Db_lundef=false \
        -Dc_args=-fsanitize=fuzzer-no-link >/dev/null
fi
ninja -C "$bdir" tests/fuzz/fuzz_soap >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
mkdir "$work/corpus"
status=0
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
"$bdir/tests/fuzz/fuzz_soap" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$work/" \
    "$work/corpus" "$src/tests/fuzz/corpus/soap" >"$work/log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
    mkdir -p "$bdir/fuzz-artifacts"
    cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "$bdir/fuzz-artifacts/" 2>/dev/null || true
    tail -n 60 "$work/log" >&2
    echo "run-fuzz.sh: FAILED (exit $status); inputs kept in $bdir/fuzz-artifacts/" >&2
    exit 1
fi
grep -E "^stat::number_of_executed_units|Done [0-9]+ runs" "$work/log" || true
echo "run-fuzz.sh: fuzz_soap ran ${secs}s without a crash"
