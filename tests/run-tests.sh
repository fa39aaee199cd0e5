#!/bin/bash
# run-tests.sh: the whole test suite (the README's test command; .ci/run calls it).
#
# 1. installs what the build and tests need (tests/tools/setup.sh, idempotent),
# 2. builds the real Kubernetes control plane and kubectl from the pinned modules
#    (tests/cluster/build.sh; cached: a cold build takes about 15 minutes, a warm one nothing),
# 3. builds twice: a normal build and an ASan+UBSan build (build-test/, build-asan/),
# 4. runs every meson test (unit, integration against the simulator and the real API server,
#    end-to-end with the pinned kubectl, chaos, fuzz corpus replays) in the ASan+UBSan build, and
#    all but the e2e and chaos suites in the normal build too,
# 5. runs the libFuzzer targets for a few seconds each (clang),
# 6. prints one line per test and ends with "N passed, N failed, N skipped".
# A skipped test counts as a failure under CI (CI=true): every tool the tests need is installed.
# Exit status: 0 when nothing failed.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
FUZZ_SECONDS=${FUZZ_SECONDS:-8}

sh tests/tools/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
t0=$(date +%s)
if ! tests/cluster/build.sh >/dev/null; then
    echo "the Kubernetes binaries could not be built (tests/cluster/build.sh)"
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
fi
echo "cluster binaries ready in $(($(date +%s) - t0)) s"

passed=0
failed=0
skipped=0
failed_names=()
failed_logs=() # files holding the output of failed tests, printed just before the summary

record() { # name status (0 pass, 1 fail, 2 skip)
    if [ "$2" = 0 ]; then
        passed=$((passed + 1)); echo "PASS: $1"
    elif [ "$2" = 2 ] && [ "${CI:-}" != true ]; then
        skipped=$((skipped + 1)); echo "SKIP: $1"
    elif [ "$2" = 2 ]; then
        failed=$((failed + 1)); failed_names+=("$1 (skipped under CI)"); echo "FAIL: $1 (skipped under CI)"
    else
        failed=$((failed + 1)); failed_names+=("$1"); echo "FAIL: $1"
    fi
}

run_build() { # dir label "meson-test-args" meson-setup-args...
    local dir=$1 label=$2 targs=$3; shift 3
    if [ ! -f "$dir/build.ninja" ]; then
        meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; record "$label: meson setup" 1; return 1; }
    fi
    if ! ninja -C "$dir" >"$dir.build.log" 2>&1; then
        tail -50 "$dir.build.log"; record "$label: build" 1; return 1
    fi
    record "$label: build" 0
    # meson runs tests in parallel (2 cores); each test bounds itself with a timeout.
    # shellcheck disable=SC2086 # targs: words on purpose
    meson test -C "$dir" --num-processes 2 --print-errorlogs $targs >"$dir.test.log" 2>&1
    python3 - "$dir/meson-logs/testlog.json" "$label" "$dir.failed.log" >"$dir.results" <<'PY'
import json, sys
path, label, failed_log = sys.argv[1], sys.argv[2], sys.argv[3]
with open(failed_log, "w") as out:
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        t = json.loads(line)
        ok = t["result"] in ("OK", "EXPECTEDFAIL")
        st = "0" if ok else ("2" if t["result"] == "SKIP" else "1")
        print(st + "\t" + label + ": " + t["name"]
              + "\t" + t["result"] + "\t" + "%.1fs" % t.get("duration", 0))
        if st == "1":  # the failed test's own output (its tail), for the end of the report
            text = (t.get("stdout") or "") + (t.get("stderr") or "")
            out.write("---- %s: %s (%s) ----\n" % (label, t["name"], t["result"]))
            out.write("\n".join(text.splitlines()[-120:]) + "\n")
PY
    while IFS=$'\t' read -r st name res dur; do
        record "$name ($res, $dur)" "$st"
    done <"$dir.results"
    [ -s "$dir.failed.log" ] && failed_logs+=("$dir.failed.log")
    return 0
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The end-to-end and chaos suites (whole environments driven by kubectl, minutes each) run once, in
# the ASan+UBSan build, where a memory or UB error in a real flow is caught; the normal build runs
# every other suite. This keeps the command near 15 minutes on 2 cores instead of over 20.
run_build build-test "normal" "--no-suite e2e --no-suite chaos"
run_build build-asan "asan+ubsan" "" -Db_sanitize=address,undefined -Db_lundef=false

if FUZZ_SECONDS=$FUZZ_SECONDS tests/fuzz/run-fuzz.sh >build-fuzz.log 2>&1; then
    record "fuzz: libFuzzer targets (${FUZZ_SECONDS}s each)" 0
else
    tail -30 build-fuzz.log; record "fuzz: libFuzzer targets" 1
fi

echo
for f in "${failed_logs[@]}"; do cat "$f"; done
if [ "$failed" -gt 0 ]; then
    echo "Failed:"; printf '  %s\n' "${failed_names[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
