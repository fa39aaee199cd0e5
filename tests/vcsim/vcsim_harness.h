/* vcsim_harness.h: start and stop the vCenter simulator (vcsim-launcher) from C tests.
 *
 * Owns: the launcher child process (fork/exec, parent-death signal, SIGTERM then SIGKILL on stop)
 * and the parsed copy of its ready line (one JSON line on stdout, see tests/vcsim/README.md). Not
 * here: any vCenter protocol; tests talk to sim->sdk / sim->url with the code under test.
 *
 * The launcher path comes from opts->launcher, else the environment variable VMOP_VCSIM_LAUNCHER
 * (meson: pass `env : vcsim_env` and `depends : vcsim_launcher` to test()).
 *
 * Threads: call vcsim_start() and vcsim_stop() from a thread that outlives the simulator (normally
 * the test's main thread): the child gets SIGTERM when the thread that forked it exits
 * (PR_SET_PDEATHSIG), and the launcher also exits on its own when its parent process dies. Not
 * thread-safe per struct vcsim. Secrets: sim->password is a test password; do not print it.
 */
#ifndef VMOP_VCSIM_HARNESS_H
#define VMOP_VCSIM_HARNESS_H

#include <stddef.h>
#include <sys/types.h>

#include "vmop_err.h"

/* Inventory counts: 0 keeps the launcher default, VCSIM_NONE asks for zero. */
#define VCSIM_NONE (-1)

struct vcsim_opts {
    const char *launcher;             /* NULL: $VMOP_VCSIM_LAUNCHER */
    int tls;                          /* non-zero: https with the httptest certificate */
    const char *username;             /* NULL: "user" */
    const char *password;             /* NULL: "pass" */
    unsigned session_idle_timeout_ms; /* 0: sessions never expire */
    unsigned delay_ms;                /* added to every SOAP call */
    const char *method_delays;        /* "PowerOnVM_Task=1500,RetrievePropertiesEx=300" or NULL */
    int clusters, hosts, standalone_hosts, pools, portgroups, vms, datastores; /* see VCSIM_NONE */
    int no_autostart;              /* non-zero: generated VMs stay powered off */
    int no_guest_ip;               /* non-zero: no guest player (no IPs are ever published) */
    int no_seed;                   /* non-zero: no content libraries */
    const char *const *extra_args; /* NULL-terminated extra launcher flags, or NULL */
    unsigned start_timeout_ms;     /* 0: 60 s */
    const char *stderr_path;       /* launcher stderr goes here (appended); NULL: inherited */
};

struct vcsim_item {
    char *id, *name, *type; /* type: "ovf" or "vm-template" */
};

struct vcsim_library {
    char *id, *name;
    struct vcsim_item *items;
    size_t n_items;
};

/* Everything below is owned by struct vcsim and freed by vcsim_stop(). Strings are never NULL (""
 * when the launcher did not say). */
struct vcsim {
    pid_t pid;
    char *url; /* "http://127.0.0.1:PORT" (https with tls) */
    char *sdk; /* url + "/sdk" */
    char *username, *password;
    int tls;
    char *thumbprint_sha1; /* "AA:BB:..", "" without tls */
    char *thumbprint_sha256;
    char *datacenter;    /* "/DC0" */
    char *cluster;       /* "/DC0/host/DC0_C0" */
    char *resource_pool; /* "/DC0/host/DC0_C0/Resources" */
    char *folder;        /* "/DC0/vm" */
    char *datastore;     /* "/DC0/datastore/LocalDS_0" */
    char *network;       /* "/DC0/network/VM Network" */
    char *dvs_uuid;
    char *template_vm; /* inventory path of the vm-template item's template VM */
    char **portgroups; /* inventory paths, n_portgroups of them */
    size_t n_portgroups;
    char **datastore_dirs; /* the launcher's temp dirs, removed when it stops */
    size_t n_datastore_dirs;
    struct vcsim_library *libraries;
    size_t n_libraries;
    char *json;   /* the raw ready line */
    void *parsed; /* cJSON tree of the ready line (for vcsim_moref) */
};

/* Starts a simulator and waits (bounded) for its ready line. opts may be NULL (all defaults).
 * On success *ret_sim is a new struct vcsim: release it with vcsim_stop(). On failure no process
 * remains. */
vmop_rc vcsim_start(const struct vcsim_opts *opts, struct vcsim **ret_sim, struct vmop_err *err);

/* SIGTERM, waits up to 10 s, then SIGKILL; reaps the child and frees sim. NULL is a no-op.
 * Returns VMOP_E_TIMEOUT if SIGKILL was needed (the process is gone either way). */
vmop_rc vcsim_stop(struct vcsim *sim, struct vmop_err *err);

/* Test-setup shorthand (main() or a Check unchecked fixture): vcsim_start(), or prints why on
 * stderr and exits the process with EXIT_FAILURE. Returns the new simulator: release with
 * vcsim_stop(). */
struct vcsim *vcsim_start_or_exit(const struct vcsim_opts *opts);

/* Teardown shorthand: vcsim_stop(), printing a failure on stderr instead of returning it. */
void vcsim_stop_or_warn(struct vcsim *sim);

/* The launcher's morefs map entry ("datacenter", "cluster", "resource_pool", "folder", "datastore",
 * "dvs", "network", "template_vm"), or NULL. Borrowed from sim. */
const char *vcsim_moref(const struct vcsim *sim, const char *what);

/* The library item called name in any library, or NULL. Borrowed from sim; *ret_lib (if not NULL)
 * gets its library. */
const struct vcsim_item *vcsim_find_item(const struct vcsim *sim, const char *name,
                                         const struct vcsim_library **ret_lib);

#endif
