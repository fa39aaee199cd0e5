/* sim_world.h: one resource's desired VM against the shared simulator (tests/common/sim_fixture.h),
 * for the operator's vSphere-side tests (vmsync, ownership, fields): a client and its vmsync
 * context, the identity (BIOS / instance UUIDs, uid, "tenant-a/<name>") and the placement, image
 * and sizing every such test starts from. Each test then sets what it is about (NICs, power,
 * cloud-init, sizes). Test code only.
 */
#ifndef VMOP_TEST_SIM_WORLD_H
#define VMOP_TEST_SIM_WORLD_H

#include <cjson/cJSON.h>

#include "resolve.h"
#include "sim_fixture.h"
#include "vmsync.h"

struct sim_world {
    struct vim_client *c;
    struct vs_ctx *ctx;
    cJSON *addrs; /* spec.addresses of the NIC (sim_world_nic), or NULL */
    struct api_vm_nic spec;
    struct rs_desired d;
    char bios[40], inst[40], uid[40], name[64];
};

/* A world for resource n (1..99) named "<prefix>-<n>", deploying library item item_name (NULL:
 * "vmop-tiny-ovf"), its client built by simfx_client(cfg) (cfg may be NULL). tag (0..255) keeps
 * the identities of different test files apart. Powered on, 1 vCPU, 256 MiB, no NIC, no
 * cloud-init. */
void sim_world_init(struct sim_world *w, unsigned tag, const char *prefix, int n,
                    const char *item_name, const struct vim_config *cfg);
/* Gives the VM interface eth0 on the simulator's first port group; with addr (e.g.
 * "192.168.10.42/24") a static address and gateway4 gw. */
void sim_world_nic(struct sim_world *w, const char *addr, const char *gw);
/* Frees the client, the context and what sim_world_nic made; user data, when set, too. */
void sim_world_free(struct sim_world *w);

#endif
