/* fuzz_kube_yaml.c: libFuzzer target for the kubeconfig YAML parser (kube_yaml.h, on libyaml).
 *
 * kube_yaml_parse must either fail with a described error whose message names no content (it
 * starts with "kubeconfig", see kube_yaml.c) or return a tree. A tree read as YAML (input not
 * starting with '{') stays within the limits: at most KUBE_YAML_MAX_NODES nodes and
 * KUBE_YAML_MAX_DEPTH nested collections, aliases and merge keys expanded included. A tree that is
 * an object without non-finite numbers is printed as JSON and parsed again (the '{' JSON path):
 * the result must be the same tree (same members in the same order).
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

/* Nodes in the tree (collections and scalars); *depth gets the deepest nesting of collections. */
static size_t tree_size(const cJSON *n, int level, int *depth)
{
    size_t total = 1;
    if (cJSON_IsArray(n) || cJSON_IsObject(n)) {
        if (level + 1 > *depth)
            *depth = level + 1;
        for (const cJSON *c = n->child; c; c = c->next)
            total += tree_size(c, level + 1, depth);
    }
    return total;
}

static int starts_with_brace(const uint8_t *data, size_t size)
{
    size_t k = size >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3) ? 3 : 0;
    while (k < size && (data[k] == ' ' || data[k] == '\n' || data[k] == '\r' || data[k] == '\t'))
        k++;
    return k < size && data[k] == '{';
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
    if (!starts_with_brace(data, size)) {
        int depth = 0;
        FUZZ_REQUIRE(tree_size(tree, 0, &depth) <= KUBE_YAML_MAX_NODES);
        FUZZ_REQUIRE(depth <= KUBE_YAML_MAX_DEPTH);
    }
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
