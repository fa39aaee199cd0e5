#!/bin/sh
# patchmod.sh SRCDIR OUTDIR GO: prepares OUTDIR/vcsim.mod (+ vcsim.sum) for `go build -modfile`: this
# directory's go.mod with govmomi replaced by OUTDIR/govmomi, a tree of symlinks into the pinned module
# in the module cache where only three simulator files are real, patched copies (README.md, "Changes
# from 0.24"): simulator/property_filter.go with property_filter.patch, a lock-order fix for a simulator
# deadlock (govmomi PR #4109), simulator/property_collector.go with property_collector.patch, one
# full collect per WaitForUpdatesEx tick instead of one per update (the change feed was quadratic), and
# simulator/virtual_machine.go with virtual_machine.patch, a clone that keeps its clone spec's
# managedBy, as vCenter does.
# The module cache stays untouched, and go.sum still pins what is downloaded. Test infrastructure only.
# Fails loudly when a patch no longer applies (after a govmomi bump): check whether the new release
# has the fix and then drop that patch, or refresh it.
set -eu
src=$(cd "$1" && pwd) out=$2 go=$3
mkdir -p "$out"
out=$(cd "$out" && pwd)
# download is a no-op when the module cache has it; list then names its directory
(cd "$src" && "$go" mod download github.com/vmware/govmomi)
dir=$(cd "$src" && "$go" list -m -f '{{.Dir}}' github.com/vmware/govmomi)
if [ -z "$dir" ] || [ ! -f "$dir/simulator/property_filter.go" ]; then
    echo "patchmod.sh: govmomi's simulator/property_filter.go not found (module dir '$dir')" >&2
    exit 1
fi
rm -rf "$out/govmomi"
cp -rs "$dir" "$out/govmomi"
find "$out/govmomi" -type d -exec chmod u+w {} +
# each patch NAME.patch replaces simulator/NAME.go with a patched real file
for name in property_filter property_collector virtual_machine; do
    f="$out/govmomi/simulator/$name.go"
    rm -f "$f"
    cp "$dir/simulator/$name.go" "$f"
    chmod u+w "$f"
    if ! patch --quiet --no-backup-if-mismatch "$f" "$src/$name.patch"; then
        echo "patchmod.sh: $name.patch does not apply to $dir (see the comment in this script)" >&2
        exit 1
    fi
done
{
    cat "$src/go.mod"
    printf '\n// Added by patchmod.sh: the pinned module plus property_filter.patch, property_collector.patch and virtual_machine.patch.\n'
    printf 'replace github.com/vmware/govmomi => %s\n' "$out/govmomi"
} > "$out/vcsim.mod.tmp"
cp "$src/go.sum" "$out/vcsim.sum"
mv "$out/vcsim.mod.tmp" "$out/vcsim.mod"
