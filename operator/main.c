/* main.c: the vmop binary: flag parsing and process lifecycle. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmop_err.h"

#ifndef VMOP_VERSION
#define VMOP_VERSION "0.1.0"
#endif

static void usage(FILE *out)
{
    fprintf(out, "Usage: vmop [OPTIONS]\n"
                 "A VM Service-style operator: reconciles vmoperator.vmware.com resources\n"
                 "against vCenter.\n\n"
                 "Options:\n"
                 "  --kubeconfig PATH   kubeconfig file (default: $KUBECONFIG, then in-cluster)\n"
                 "  --version           print the version and exit\n"
                 "  -h, --help          print this help and exit\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"kubeconfig", required_argument, NULL, 'k'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'k':
            break;
        case 'V':
            printf("vmop %s\n", VMOP_VERSION);
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "vmop: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    fprintf(stderr, "vmop: the controllers are not implemented yet\n");
    return 0;
}
