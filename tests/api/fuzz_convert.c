/* fuzz_convert.c: fuzz target for api_convert() (ConversionReview objects arrive over the
 * network). Input: one byte choosing the desired version (v1alpha1 .. v1alpha6), then a JSON
 * object. Whatever converts must convert on to the hub and back without failing.
 * Built as a libFuzzer target with -Dfuzz=true (clang); in every build the replay main() below runs
 * the corpus in testdata/fuzz/api_convert/ (and the files given on the command line) as a test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_convert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char gv[64];
    cJSON *in, *out = NULL, *hub = NULL, *back = NULL;
    struct vmop_err err = {0};
    const char *src;

    if (size < 1 || size > (1u << 20))
        return 0;
    snprintf(gv, sizeof(gv), "vmoperator.vmware.com/v1alpha%d", 1 + data[0] % 6);
    in = cJSON_ParseWithLength((const char *)data + 1, size - 1);
    if (!in)
        return 0;
    if (api_convert(in, gv, &out, &err) == VMOP_OK) {
        src = cJSON_GetStringValue(cJSON_GetObjectItem(in, "apiVersion"));
        if (api_convert(out, API_CONVERT_HUB_GV, &hub, &err) != VMOP_OK)
            abort();
        if (api_convert(hub, src, &back, &err) != VMOP_OK)
            abort();
    }
    cJSON_Delete(back);
    cJSON_Delete(hub);
    cJSON_Delete(out);
    cJSON_Delete(in);
    return 0;
}

#ifndef VMOP_LIBFUZZER
static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n, cut;
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
    for (cut = 0; cut < n && cut < 256; cut += 7)
        LLVMFuzzerTestOneInput((const uint8_t *)buf, (size_t)cut);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "testdata/fuzz/api_convert";
    char path[1024];
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d) {
        fprintf(stderr, "fuzz_convert: no corpus directory %s\n", dir);
        return 1;
    }
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (run_file(path)) {
            fprintf(stderr, "fuzz_convert: cannot read %s\n", path);
            closedir(d);
            return 1;
        }
        n++;
    }
    closedir(d);
    printf("fuzz_convert: replayed %d inputs\n", n);
    return n > 0 ? 0 : 1;
}
#endif
