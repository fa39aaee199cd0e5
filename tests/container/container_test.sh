#!/bin/bash
# container_test.sh: vmop is deployable: the kustomize base (manifests/kustomization.yaml) renders
# and holds every CRD, the RBAC and the Deployment, which names the image this test builds; the
# image (manifests/image/Containerfile) builds with podman and runs read-only as user 65532.
#
#   tests/container/container_test.sh <repo root>
#
# No registry is reachable here, so the Containerfile's default BUILDER_IMAGE
# (docker.io/library/debian:bookworm) cannot be pulled: the test makes an equivalent image with
# debootstrap (minbase) from this machine's Debian mirror and imports it as
# localhost/vmop-builder:bookworm. That image is kept (skipped when `podman image exists`), and
# podman's layer cache keeps the apt and compile steps, so a warm run costs seconds.
# The RUN steps reach the Debian mirror with --network=host (no CNI/iptables set up needed);
# podman 4.3 (Debian bookworm) runs as root with runc, cgroupfs and the overlay driver (see below).
#
# Environment: VMOP_BUILDER_IMAGE (a Debian bookworm image to use instead of making one),
# VMOP_IMAGE (tag to build; default: the Deployment's image), KUBECTL (default: the pinned one).
# Exit 0 pass, 1 fail, 77 skip (not root, or podman/debootstrap missing: tests/tools/setup.sh).
set -euo pipefail
ROOT=$(cd "${1:?usage: container_test.sh <repo root>}" && pwd)
START=$SECONDS
step() { echo "container_test: [$((SECONDS - START))s] $*"; }
fail() { echo "container_test: FAIL: $*" >&2; exit 1; }
skip() { echo "container_test: SKIP: $*" >&2; exit 77; }
TMP=$(mktemp -d /var/tmp/vmop-container-test.XXXXXX)
CTR=""
cleanup() {
    [ -n "$CTR" ] && podman rm -f "$CTR" >/dev/null 2>&1 || true
    rm -rf "$TMP"
}
trap cleanup EXIT

VERSION=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$ROOT/meson.build" | head -1)
[ -n "$VERSION" ] || fail "cannot read the project version from meson.build"

# --- 1. The kustomize base -------------------------------------------------------------------
step "manifests: checking manifests/kustomization.yaml"
DEPLOY_IMAGE=$(python3 - "$ROOT/manifests" "$VERSION" <<'EOF'
import glob, os, sys, yaml
m, version = sys.argv[1], sys.argv[2]
k = yaml.safe_load(open(os.path.join(m, "kustomization.yaml")))
if k.get("resources") != ["crd", "rbac", "deploy"] or k.get("components") != ["webhook", "cert-manager"]:
    sys.exit(f"kustomization.yaml: resources {k.get('resources')}, components {k.get('components')}")
# every file of crd/, rbac/ and deploy/ is listed by that directory's kustomization.yaml
for d in ("crd", "rbac", "deploy"):
    listed = yaml.safe_load(open(os.path.join(m, d, "kustomization.yaml"))).get("resources", [])
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(m, d, "*.yaml"))
                   if not p.endswith("/kustomization.yaml"))
    if sorted(listed) != files:
        sys.exit(f"{d}/kustomization.yaml lists {sorted(listed)}, the directory has {files}")
docs = [d for d in yaml.safe_load_all(open(os.path.join(m, "deploy", "operator.yaml"))) if d]
kinds = {(d["kind"], d["metadata"]["name"]) for d in docs}
for need in [("Namespace", "vmop-system"), ("ServiceAccount", "vmop"), ("Deployment", "vmop")]:
    if need not in kinds:
        sys.exit(f"deploy/operator.yaml: no {need}")
dep = next(d for d in docs if d["kind"] == "Deployment")
pod = dep["spec"]["template"]["spec"]
c = pod["containers"][0]
psc, csc = pod.get("securityContext", {}), c.get("securityContext", {})
checks = {
    "runAsUser 65532": csc.get("runAsUser", psc.get("runAsUser")) == 65532,
    "runAsNonRoot": csc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True,
    "seccompProfile RuntimeDefault":
        csc.get("seccompProfile", psc.get("seccompProfile", {})).get("type") == "RuntimeDefault",
    "readOnlyRootFilesystem": csc.get("readOnlyRootFilesystem") is True,
    "allowPrivilegeEscalation false": csc.get("allowPrivilegeEscalation") is False,
    "drop ALL": "ALL" in csc.get("capabilities", {}).get("drop", []),
    "serviceAccountName vmop": pod.get("serviceAccountName") == "vmop",
    "/tmp is an emptyDir": any(v.get("mountPath") == "/tmp" for v in c.get("volumeMounts", [])),
    f"image tag {version}": c["image"].endswith(":" + version),
}
bad = [n for n, ok in checks.items() if not ok]
if bad:
    sys.exit(f"deploy/operator.yaml: the Deployment lacks: {', '.join(bad)}")
print(c["image"])
EOF
) || fail "manifests"
IMAGE=${VMOP_IMAGE:-$DEPLOY_IMAGE}
step "manifests: the Deployment runs $DEPLOY_IMAGE"

# the pinned kubectl (tests/cluster/build.sh; warm cache: at once), never whatever is installed
KUBECTL=${KUBECTL:-$("$ROOT/tests/cluster/build.sh")/kubectl}
if [ -x "$KUBECTL" ]; then
    "$KUBECTL" kustomize "$ROOT/manifests" > "$TMP/base.yaml" || fail "kubectl kustomize manifests"
    # Overlays (kustomize wants relative paths) as docs/operations.md shows them: the image from a registry; the stock classes into
    # a tenant namespace.
    mkdir -p "$TMP/overlay" "$TMP/classes"
    printf 'resources: [%s]\nimages:\n- {name: %s, newName: registry.example.com/vmop, newTag: "%s"}\n' \
        "$(realpath --relative-to="$TMP/overlay" "$ROOT/manifests")" "${DEPLOY_IMAGE%:*}" "$VERSION" > "$TMP/overlay/kustomization.yaml"
    printf 'resources: [%s]\nnamespace: tenant-a\n' \
        "$(realpath --relative-to="$TMP/classes" "$ROOT/manifests/classes")" > "$TMP/classes/kustomization.yaml"
    "$KUBECTL" kustomize "$TMP/overlay" > "$TMP/overlay.yaml" || fail "kubectl kustomize (image overlay)"
    "$KUBECTL" kustomize "$TMP/classes" > "$TMP/classes.yaml" || fail "kubectl kustomize (classes overlay)"
    python3 - "$TMP" "$DEPLOY_IMAGE" "$VERSION" "$ROOT/manifests/classes/stock-classes.yaml" <<'EOF' || fail "rendered manifests"
import collections, sys, yaml
tmp, image, version, stock = sys.argv[1:5]
def load(p): return [d for d in yaml.safe_load_all(open(p)) if d]
base = load(f"{tmp}/base.yaml")
kinds = collections.Counter(d["kind"] for d in base)
if kinds["CustomResourceDefinition"] != 8 or kinds["Deployment"] != 1 or kinds["Namespace"] != 1 \
        or kinds["ServiceAccount"] != 1 or kinds["Service"] != 1 or kinds["Certificate"] != 1 \
        or kinds["MutatingWebhookConfiguration"] != 1 or kinds["ValidatingWebhookConfiguration"] != 1 \
        or kinds["VirtualMachineClass"] or kinds["VirtualMachine"]:
    sys.exit(f"base renders {dict(kinds)}")
img = lambda docs: next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"]
if img(base) != image:
    sys.exit(f"base image {img(base)} != {image}")
if img(load(f"{tmp}/overlay.yaml")) != f"registry.example.com/vmop:{version}":
    sys.exit(f"overlay image {img(load(f'{tmp}/overlay.yaml'))}")
classes = load(f"{tmp}/classes.yaml")
if len(classes) != len(load(stock)) or {d["metadata"].get("namespace") for d in classes} != {"tenant-a"}:
    sys.exit("classes overlay: not every stock class lands in tenant-a")
print(f"container_test: base: {sum(kinds.values())} objects ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})")
EOF
    step "manifests: kubectl kustomize ($("$KUBECTL" version --client 2>/dev/null | head -1)) renders the base and both overlays"
else
    step "manifests: no kubectl: rendering not checked (file lists checked above)"
fi

# --- 2. The image ----------------------------------------------------------------------------
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, rootful podman)"
command -v podman >/dev/null || skip "podman not installed (tests/tools/setup.sh installs it)"
# Flags that make podman work here (a VM without systemd, cgroups v1 with a cgroup2 hierarchy at
# /sys/fs/cgroup/unified, no CAP_SYS_RESOURCE):
# - cgroupfs, events in a file: no systemd;
# - runc: crun 1.8 refuses the hybrid layout ("cgroups in hybrid mode not supported, drop all
#   controllers from cgroupv2", even with --cgroups=disabled);
# - explicit ulimits: podman run asks for nofile and nproc 1048576 (build: nproc 32768), more than
#   podman's own hard limits here, and without CAP_SYS_RESOURCE the runtime cannot raise them
#   ("error setting rlimit type 7: operation not permitted"): ask for podman's own limits (it
#   runs with nproc at most 32768).
PODMAN=(podman --cgroup-manager=cgroupfs --events-backend=file)
command -v runc >/dev/null && PODMAN+=(--runtime=runc)
NOFILE=$(ulimit -Hn); NPROC=$(ulimit -Hu)
if [ "$NOFILE" = unlimited ] || [ "$NOFILE" -gt 1048576 ]; then NOFILE=1048576; fi
if [ "$NPROC" = unlimited ] || [ "$NPROC" -gt 32768 ]; then NPROC=32768; fi
ULIMITS=(--ulimit "nofile=$NOFILE:$NOFILE" --ulimit "nproc=$NPROC:$NPROC")

BUILDER=${VMOP_BUILDER_IMAGE:-localhost/vmop-builder:bookworm}
if "${PODMAN[@]}" image exists "$BUILDER"; then
    step "builder: $BUILDER exists (cached)"
elif [ -n "${VMOP_BUILDER_IMAGE:-}" ]; then
    fail "VMOP_BUILDER_IMAGE=$BUILDER does not exist"
else
    command -v debootstrap >/dev/null || skip "debootstrap not installed (tests/tools/setup.sh installs it)"
    # The mirror apt uses here (deb822 URIs: or a one-line deb entry), not the security archive.
    MIRROR=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
        awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}
             /^deb / && $0 ~ / bookworm / {for (i = 2; i <= NF; i++) if ($i ~ /^https?:.*\/debian\/?$/) {print $i; exit}}' || true)
    MIRROR=${MIRROR:-http://deb.debian.org/debian}
    step "builder: debootstrap --variant=minbase bookworm from $MIRROR"
    debootstrap --variant=minbase bookworm "$TMP/rootfs" "$MIRROR" > "$TMP/debootstrap.log" 2>&1 ||
        { tail -20 "$TMP/debootstrap.log" >&2; fail "debootstrap"; }
    # Like debian:bookworm: updates and security suites, no package cache.
    SECURITY=${MIRROR%/debian*}/debian-security
    case $MIRROR in http://deb.debian.org/*|https://deb.debian.org/*) ;; *) SECURITY=http://deb.debian.org/debian-security;; esac
    printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s bookworm-security main\n' \
        "$MIRROR" "$MIRROR" "$SECURITY" > "$TMP/rootfs/etc/apt/sources.list"
    rm -rf "$TMP"/rootfs/var/cache/apt/archives/*.deb "$TMP"/rootfs/var/lib/apt/lists/*
    step "builder: importing as $BUILDER"
    tar -C "$TMP/rootfs" --numeric-owner -c . |
        "${PODMAN[@]}" import --change 'CMD ["/bin/bash"]' - "$BUILDER" > "$TMP/import.log" 2>&1 ||
        { cat "$TMP/import.log" >&2; fail "podman import"; }
    rm -rf "$TMP/rootfs"
fi

step "build: podman build -f manifests/image/Containerfile -t $IMAGE"
T0=$SECONDS
"${PODMAN[@]}" build "${ULIMITS[@]}" --network=host --build-arg "BUILDER_IMAGE=$BUILDER" \
    -f "$ROOT/manifests/image/Containerfile" -t "$IMAGE" "$ROOT" > "$TMP/build.log" 2>&1 ||
    { tail -40 "$TMP/build.log" >&2; fail "podman build"; }
step "build: done in $((SECONDS - T0))s ($(grep -c 'Using cache' "$TMP/build.log" || true) cached steps)"

# --- 3. The image holds what it should and runs read-only as 65532 ---------------------------
CONFIG=$("${PODMAN[@]}" image inspect --format '{{.Config.User}} {{json .Config.Entrypoint}}' "$IMAGE")
[ "$CONFIG" = '65532:65532 ["/vmop"]' ] || fail "image config: user/entrypoint are $CONFIG"
CTR=$("${PODMAN[@]}" create "$IMAGE")
"${PODMAN[@]}" export "$CTR" | tar -t > "$TMP/files" || fail "podman export"
"${PODMAN[@]}" rm "$CTR" >/dev/null; CTR=""
# Only vmop, shared libraries, the loader, the CA bundle, passwd/group/nsswitch.conf, /tmp (plus
# the mount points podman itself creates: /dev /proc /sys /run /etc/hosts /etc/resolv.conf ...).
UNEXPECTED=$(sed 's|^\./||; s|/$||' "$TMP/files" | grep -vE '^(|vmop|tmp|etc|etc/(passwd|group|nsswitch\.conf|hosts|hostname|resolv\.conf|ssl|ssl/certs|ssl/certs/ca-certificates\.crt)|(usr/)?lib(64|/[a-z0-9_]+-linux-gnu)?|(usr/)?lib(64|/[a-z0-9_]+-linux-gnu)?/[^/]+\.so[.0-9]*|dev|dev/.*|proc|sys|run|run/.*)$' || true)
[ -z "$UNEXPECTED" ] || fail "unexpected files in the image: $(echo $UNEXPECTED)"
step "image: $(grep -c '\.so' "$TMP/files") shared objects, $("${PODMAN[@]}" image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.1f MB", $1 / 1e6}')"

OUT=$("${PODMAN[@]}" run "${ULIMITS[@]}" --rm --network=none --read-only --read-only-tmpfs=false --user 65532 \
    --cap-drop=ALL --security-opt=no-new-privileges "$IMAGE" --version 2>&1) ||
    fail "podman run --version: $OUT"
[ "$OUT" = "vmop $VERSION" ] || fail "podman run --version printed '$OUT', want 'vmop $VERSION'"
step "run: --read-only --user 65532: $OUT"
# The process starts for real: no kubeconfig and no in-cluster service account here, so it must
# stop with a JSON log line and exit 1 (not 127 for a missing library, not a crash).
set +e
OUT=$("${PODMAN[@]}" run "${ULIMITS[@]}" --rm --network=none --read-only --user 65532 --cap-drop=ALL \
    --security-opt=no-new-privileges "$IMAGE" --kubeconfig=/nonexistent --health-addr=127.0.0.1:8081 2>&1)
RC=$?
set -e
ERRLINE=$(printf '%s\n' "$OUT" | grep -m1 '^{"ts":.*"level":"error"' || true)
[ "$RC" -ge 1 ] && [ "$RC" -lt 126 ] || fail "vmop without a cluster exited $RC: $OUT"
[ -n "$ERRLINE" ] || fail "vmop without a cluster: no JSON error line: $OUT"
step "run: without a cluster vmop exits $RC: $ERRLINE"
step "PASS"
