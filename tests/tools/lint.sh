#!/bin/sh
# lint.sh: source checks that need no build: every tracked C file is clang-formatted (.clang-format),
# and production code (api/, vimclient/, operator/) uses none of the banned calls (unbounded or
# unchecked: sprintf, vsprintf, strcpy, strcat, gets, atoi, atol, strtok).
# Usage: lint.sh SOURCE_ROOT
set -u
cd "${1:-.}" || exit 2
status=0
if command -v clang-format >/dev/null 2>&1; then
    files=$(git ls-files '*.c' '*.h' 2>/dev/null || find api vimclient operator tests -name '*.[ch]')
    # shellcheck disable=SC2086
    bad=$(clang-format --dry-run $files 2>&1 | grep 'warning:' | cut -d: -f1 | sort -u)
    if [ -n "$bad" ]; then
        echo "not clang-formatted (run clang-format -i):"
        echo "$bad" | sed 's/^/  /'
        status=1
    fi
else
    echo "clang-format not installed: skipping the format check"
fi
banned=$(grep -rnE '\b(sprintf|vsprintf|strcpy|strcat|gets|atoi|atol|strtok)[[:space:]]*\(' \
    --include='*.c' --include='*.h' api vimclient operator 2>/dev/null)
if [ -n "$banned" ]; then
    echo "banned calls in production code:"
    echo "$banned" | sed 's/^/  /'
    status=1
fi
[ $status = 0 ] && echo "lint: clean"
exit $status
