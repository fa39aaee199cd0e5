/* sim_world.c: one resource's desired VM against the shared simulator (see sim_world.h). */
#include "sim_world.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "guestinfo.h"

void sim_world_init(struct sim_world *w, unsigned tag, const char *prefix, int n,
                    const char *item_name, const struct vim_config *cfg)
{
    const struct vcsim_item *item =
        simfx_item(simfx_sim, item_name ? item_name : "vmop-tiny-ovf", NULL);
    struct vmop_err err = {0};

    memset(w, 0, sizeof(*w));
    w->c = simfx_client(cfg);
    ck_assert_msg(vs_ctx_new(w->c, NULL, &w->ctx, &err) == VMOP_OK, "ctx: %s", err.msg);
    snprintf(w->bios, sizeof(w->bios), "0b7f5a3e-7a44-4f4a-9d0e-3f2c1a9b%02x%02d", tag & 0xff, n);
    snprintf(w->inst, sizeof(w->inst), "4c3b2a19-0817-4e6f-8d5c-4b3a2918%02x%02d", tag & 0xff, n);
    snprintf(w->uid, sizeof(w->uid), "6d1e0c2b-3a49-4f58-9e67-7f8a9b0c%02x%02d", tag & 0xff, n);
    snprintf(w->name, sizeof(w->name), "%s-%d", prefix, n);
    w->d.datacenter = "DC0";
    w->d.resource_pool = simfx_sim->resource_pool;
    w->d.folder = simfx_sim->folder;
    w->d.datastore = simfx_sim->datastore;
    w->d.library_item_id = item->id;
    w->d.image_type = strcmp(item->type, "ovf") == 0 ? RS_IMAGE_OVF : RS_IMAGE_VM_TEMPLATE;
    w->d.size.num_cpus = 1;
    w->d.size.memory_mb = 256;
    w->d.size.cpu_limit_mhz = w->d.size.mem_limit_mb = -1;
    w->d.bios_uuid = w->bios;
    w->d.instance_uuid = w->inst;
    w->d.resource_uid = w->uid;
    snprintf(w->d.namespaced_name, sizeof(w->d.namespaced_name), "tenant-a/%s", w->name);
    w->d.power = API_POWER_ON;
    w->d.boot.delay_ms = w->d.boot.retry_delay_ms = -1;
}

void sim_world_nic(struct sim_world *w, const char *addr, const char *gw)
{
    w->spec.name = "eth0";
    if (addr) {
        w->addrs = cJSON_CreateArray();
        cJSON_AddItemToArray(w->addrs, cJSON_CreateString(addr));
        w->spec.addresses = w->addrs;
        w->spec.gateway4 = gw;
    }
    w->d.nics[0].name = "eth0";
    w->d.nics[0].network = "tenant-net";
    w->d.nics[0].port_group = simfx_sim->portgroups[0];
    w->d.nics[0].spec = &w->spec;
    w->d.n_nics = 1;
}

void sim_world_free(struct sim_world *w)
{
    vs_ctx_free(w->ctx);
    vim_client_free(w->c);
    cJSON_Delete(w->addrs);
    gi_free_secret(w->d.userdata, w->d.userdata_len);
    memset(w, 0, sizeof(*w));
}
