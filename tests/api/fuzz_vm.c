/* fuzz_vm.c: fuzz target for the VirtualMachine parser (parse, default, validate, serialize) and
 * the admission decisions over it (api_admit.h: request checks, create/update rules, every kind).
 * Built as a libFuzzer target with -Dfuzz=true (clang); in every build the replay main() below runs
 * the corpus in testdata/fuzz/api_vm/ (and any files given on the command line) as a unit test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_admit.h"
#include "api_vm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static vmop_rc fuzz_random(void *arg, unsigned char *buf, size_t n, struct vmop_err *err)
{
    memset(buf, 0x5a, n);
    return VMOP_OK;
}

static vmop_rc fuzz_lookup(void *arg, const char *ns, const char *image_name,
                           char ret_kind[API_NAME_MAX], char ret_name[API_NAME_MAX],
                           struct vmop_err *err)
{
    if (strncmp(image_name, "vmi-", 4) != 0)
        return vmop_fail(err, VMOP_E_NOT_FOUND, "not found");
    snprintf(ret_kind, API_NAME_MAX, "VirtualMachineImage");
    snprintf(ret_name, API_NAME_MAX, "%s", image_name);
    return VMOP_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct api_vm *vm = NULL, *old = NULL;
    struct api_vm_default_ctx ctx = {.random_bytes = fuzz_random,
                                     .lookup_image = fuzz_lookup,
                                     .default_network = "net",
                                     .now = {1, 2}};
    struct api_admit_ctx actx = {0};
    struct vmop_err err = {0};
    struct api_ferrs fe = {0};
    cJSON *out = NULL;

    if (api_vm_parse_text((const char *)data, size, &vm, &err) != VMOP_OK)
        return 0;
    api_vm_validate(vm, NULL, &fe);
    api_vm_admit_request(NULL, vm->obj, &actx, &fe);
    api_admit_validate(API_KIND_VM, API_ADMIT_CREATE, NULL, vm->obj, &actx, &fe);
    (void)api_vm_delete_checks(vm->obj, NULL, 0);
    for (int k = API_KIND_VM_CLASS; k <= API_KIND_VC_ENDPOINT; k++)
        api_admit_validate((enum api_admit_kind)k, API_ADMIT_UPDATE, vm->obj, vm->obj, &actx, &fe);
    if (api_vm_to_json(vm, &out, &err) == VMOP_OK && api_vm_parse(out, &old, &err) == VMOP_OK) {
        (void)api_vm_default(vm, old, &ctx, NULL, NULL, &err);
        memset(&fe, 0, sizeof(fe));
        api_vm_validate(vm, old, &fe);
        api_vm_admit_request(old->obj, vm->obj, &actx, &fe);
        api_admit_validate(API_KIND_VM, API_ADMIT_UPDATE, old->obj, vm->obj, &actx, &fe);
        api_admit_validate(API_KIND_VM, API_ADMIT_UPDATE, vm->obj, old->obj, &actx, &fe);
    }
    cJSON_Delete(out);
    api_vm_free(old);
    api_vm_free(vm);
    return 0;
}

#ifndef VMOP_LIBFUZZER
static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput((const uint8_t *)buf, (size_t)n);
    /* also every prefix-truncated variant of short inputs: exercises partial JSON */
    for (long cut = 0; cut < n && cut < 256; cut += 7)
        LLVMFuzzerTestOneInput((const uint8_t *)buf, (size_t)cut);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "testdata/fuzz/api_vm";
    char path[1024];
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d) {
        fprintf(stderr, "fuzz_vm: no corpus directory %s\n", dir);
        return 1;
    }
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (run_file(path)) {
            fprintf(stderr, "fuzz_vm: cannot read %s\n", path);
            closedir(d);
            return 1;
        }
        n++;
    }
    closedir(d);
    printf("fuzz_vm: replayed %d inputs\n", n);
    return n > 0 ? 0 : 1;
}
#endif
