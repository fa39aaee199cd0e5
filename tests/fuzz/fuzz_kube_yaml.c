/* fuzz_kube_yaml.c: libFuzzer target for the kubeconfig YAML subset parser (kube_yaml.h).
 *
 * kube_yaml_parse must either fail with a described error whose message names no content (it
 * starts with "kubeconfig", see kube_yaml.c) or return a tree. A tree that is an object without
 * non-finite numbers is printed as JSON and parsed again (the '{' JSON path): the result must be
 * the same tree (same members in the same order).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "kube_yaml.h"

static int all_finite(const cJSON *n, int depth)
{
    if (depth > 200)
        return 0;
    if (cJSON_IsNumber(n) && !isfinite(n->valuedouble))
        return 0;
    for (const cJSON *c = n->child; c; c = c->next)
        if (!all_finite(c, depth + 1))
            return 0;
    return 1;
}

/* Same tree, child by child in order (cJSON_Compare looks members up by name, which fails on
 * duplicate keys, which the JSON path keeps). */
static int same_tree(const cJSON *a, const cJSON *b, int depth)
{
    const cJSON *x, *y;
    if (depth > 200 || (a->type & 0xff) != (b->type & 0xff))
        return 0;
    if ((a->string == NULL) != (b->string == NULL) ||
        (a->string && strcmp(a->string, b->string) != 0))
        return 0;
    if (cJSON_IsString(a) && strcmp(a->valuestring, b->valuestring) != 0)
        return 0;
    if (cJSON_IsNumber(a) && !cJSON_Compare(a, b, 1))
        return 0;
    for (x = a->child, y = b->child; x && y; x = x->next, y = y->next)
        if (!same_tree(x, y, depth + 1))
            return 0;
    return x == NULL && y == NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *tree = NULL, *again = NULL;
    struct vmop_err err = {0};
    char *json = NULL;
    vmop_rc rc = kube_yaml_parse((const char *)data, size, &tree, &err);

    fuzz_check_err(rc, &err);
    if (rc != VMOP_OK) {
        FUZZ_REQUIRE(tree == NULL);
        FUZZ_REQUIRE(strncmp(err.msg, "kubeconfig", 10) == 0);
        return 0;
    }
    FUZZ_REQUIRE(tree != NULL);
    if (cJSON_IsObject(tree) && all_finite(tree, 0)) {
        json = cJSON_PrintUnformatted(tree);
        FUZZ_REQUIRE(json != NULL && json[0] == '{');
        rc = kube_yaml_parse(json, strlen(json), &again, &err);
        FUZZ_REQUIRE(rc == VMOP_OK);
        FUZZ_REQUIRE(same_tree(tree, again, 0));
        cJSON_Delete(again);
        free(json);
    }
    cJSON_Delete(tree);
    return 0;
}
