/* vmsvc_run.c: runs the VirtualMachineService controller alone (operator/service/vmservice.c)
 * against a kubeconfig until SIGTERM/SIGINT or until its parent dies, for e2e_vmservice.sh (no
 * vCenter, no VM controller). Prints "ready" on stdout once the informers have synced. Usage:
 * vmsvc_run KUBECONFIG */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>

#include "kube_client.h"
#include "kube_config.h"
#include "vmservice.h"

int main(int argc, char **argv)
{
    struct vmop_err err = {0};
    struct kube_config *cfg = NULL;
    struct kube_client *kc = NULL;
    struct vmsvc *vs = NULL;
    sigset_t set;
    int sig = 0, rc = EXIT_FAILURE;

    if (argc != 2) {
        fprintf(stderr, "usage: %s KUBECONFIG\n", argv[0]);
        return 2;
    }
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* inherited by every thread started below */
    if (kube_global_init(&err) != VMOP_OK ||
        kube_config_from_files(argv[1], NULL, &cfg, &err) != VMOP_OK ||
        kube_client_new(cfg, NULL, &kc, &err) != VMOP_OK ||
        vmsvc_new(kc, NULL, &vs, &err) != VMOP_OK || vmsvc_start(vs, &err) != VMOP_OK) {
        fprintf(stderr, "vmsvc_run: %s\n", err.msg);
        goto out;
    }
    printf("ready\n");
    fflush(stdout);
    sigwait(&set, &sig);
    rc = EXIT_SUCCESS;
out:
    vmsvc_free(vs);
    kube_client_free(kc);
    kube_config_free(cfg);
    kube_global_cleanup();
    return rc;
}
