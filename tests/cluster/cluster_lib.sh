# cluster_lib.sh: the shell tests' way to a real control plane (tests/cluster/cluster.sh), the
# counterpart of cluster_harness.[ch] for C tests. Source it (POSIX sh), then:
#
#   cluster_start DIR [TMP]
#                        cluster.sh up DIR (bounded by cluster.sh itself), with a reaper that runs
#                        `cluster.sh down DIR` and removes TMP (default DIR; kept with
#                        VMOP_KEEP_TMP) if this shell dies without cluster_stop (SIGKILL, a meson
#                        timeout killing the process group: the reaper has its own session).
#                        Sets KUBECTL (the pinned kubectl from build.sh, never the one in PATH),
#                        KUBECONFIG (DIR/kubeconfig, cluster admin), KUBECACHEDIR.
#   cluster_stop         cluster.sh down DIR, then releases the reaper. Idempotent; call it from
#                        the EXIT trap.
#
# Needs VMOP_CLUSTER_SH (meson: env : cluster_env). File descriptor 9 is taken: it is the write end
# of the reaper's FIFO, and commands that may outlive this shell get it closed (`9>&-`).
: "${VMOP_CLUSTER_SH:?set VMOP_CLUSTER_SH to tests/cluster/cluster.sh (meson: env : cluster_env)}"
CLUSTER_DIR=

cluster_start() {
    CLUSTER_DIR=$1
    _cl_tmp=${2:-$1}
    [ -z "${VMOP_KEEP_TMP:-}" ] || _cl_tmp=
    mkdir -p "$CLUSTER_DIR"
    mkfifo "$CLUSTER_DIR/.reaper"
    # The reaper blocks until every writer of the FIFO is gone: "q" means cluster_stop ran.
    # shellcheck disable=SC2016
    setsid sh -c 'read -r x <"$1"; [ "$x" = q ] && exit 0; "$2" down "$3"; [ -z "$4" ] || rm -rf "$4"' \
        cluster-reaper "$CLUSTER_DIR/.reaper" "$VMOP_CLUSTER_SH" "$CLUSTER_DIR" "$_cl_tmp" \
        </dev/null >/dev/null 2>&1 9>&- &
    exec 9<>"$CLUSTER_DIR/.reaper" # read-write: does not block, and counts as a writer
    "$VMOP_CLUSTER_SH" up "$CLUSTER_DIR" 9>&- || return 1
    KUBECTL="$("$(dirname "$VMOP_CLUSTER_SH")/build.sh" 9>&-)/kubectl"
    KUBECONFIG=$CLUSTER_DIR/kubeconfig
    KUBECACHEDIR=$CLUSTER_DIR/kubectl-cache
    export KUBECTL KUBECONFIG KUBECACHEDIR
}

cluster_stop() {
    [ -n "$CLUSTER_DIR" ] || return 0
    "$VMOP_CLUSTER_SH" down "$CLUSTER_DIR" 9>&- || true
    echo q >&9 2>/dev/null || true
    exec 9>&-
    CLUSTER_DIR=
}
