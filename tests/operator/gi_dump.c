/* gi_dump.c: test tool: builds the guestinfo keys vmop would write for one interface and prints
 * them as KEY<TAB>VALUE lines, for cloudinit_decode.py to feed to cloud-init's VMware datasource.
 * Usage: gi_dump INSTANCE_ID HOSTNAME MAC static:CIDR:GATEWAY|dhcp USERDATA_FILE|- */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guestinfo.h"

static char *slurp(const char *path, size_t *ret_len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    if (!f)
        return NULL;
    do {
        if (n + 4096 > cap) {
            char *p = realloc(buf, cap = n + 65536);
            if (!p) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = p;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *ret_len = n;
    return buf;
}

int main(int argc, char **argv)
{
    struct vmop_err err = {0};
    struct gi_iface f = {0};
    struct gi_meta m = {0};
    const char *addr[1];
    char *mode, *json = NULL, *md = NULL;
    if (argc != 6) {
        fprintf(stderr, "usage: gi_dump INSTANCE_ID HOSTNAME MAC static:CIDR:GW|dhcp USERDATA|-\n");
        return 2;
    }
    f.name = "eth0";
    f.mac = argv[3];
    mode = argv[4];
    if (strncmp(mode, "static:", 7) == 0) {
        char *cidr = mode + 7, *gw = strchr(cidr, ':');
        if (!gw)
            return 2;
        *gw++ = '\0';
        addr[0] = cidr;
        f.addresses = addr;
        f.n_addresses = 1;
        f.gateway4 = gw;
    } else {
        f.dhcp4 = 1;
    }
    m.instance_id = argv[1];
    m.hostname = argv[2];
    m.wait_on_network4 = -1;
    m.wait_on_network6 = -1;
    m.ifaces = &f;
    m.n_ifaces = 1;
    if (gi_metadata_json(&m, &json, &err) || gi_encode_gzip_base64(json, strlen(json), &md, &err))
        goto fail;
    printf("%s\t%s\n%s\t%s\n", GI_KEY_METADATA, md, GI_KEY_METADATA_ENCODING,
           GI_ENCODING_GZIP_BASE64);
    if (strcmp(argv[5], "-") != 0) {
        size_t n = 0, plain_len = 0;
        char *raw = slurp(argv[5], &n), *plain = NULL, *ud = NULL;
        if (!raw) {
            fprintf(stderr, "gi_dump: cannot read %s\n", argv[5]);
            return 1;
        }
        if (gi_userdata_normalize(raw, n, &plain, &plain_len, &err) ||
            gi_encode_gzip_base64(plain, plain_len, &ud, &err))
            goto fail;
        printf("%s\t%s\n%s\t%s\n", GI_KEY_USERDATA, ud, GI_KEY_USERDATA_ENCODING,
               GI_ENCODING_GZIP_BASE64);
        free(raw);
        gi_free_secret(plain, plain_len);
        free(ud);
    }
    free(json);
    free(md);
    return 0;
fail:
    fprintf(stderr, "gi_dump: %s\n", err.msg);
    return 1;
}
