/* test_schema_util.h: helpers for the apischema unit tests: JSON written with ' for ", and the
 * whole validation chain (prune, default, validate) returning kube-apiserver's 422 message. */
#ifndef AS_TEST_SCHEMA_UTIL_H
#define AS_TEST_SCHEMA_UTIL_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check_main.h"
#include "schema.h"

/* Parses JSON written with ' for " (test literals); aborts the test when it does not parse. */
static inline cJSON *J(const char *src)
{
    size_t n = strlen(src);
    char *s = malloc(n + 1);
    cJSON *j;
    ck_assert_ptr_nonnull(s);
    for (size_t i = 0; i <= n; i++)
        s[i] = src[i] == '\'' ? '"' : src[i];
    j = cJSON_Parse(s);
    free(s);
    ck_assert_msg(j != NULL, "test JSON does not parse: %s", src);
    return j;
}

/* Validates obj (and old) against schema; returns the malloc'd 422 message of a VirtualMachine
 * "vm0" in example.com, or NULL when the object is valid. *ret_causes (optional) gets the causes.
 */
static inline char *validate_msg(const char *schema, const char *obj, const char *old,
                                 cJSON **ret_causes)
{
    cJSON *s = J(schema), *o = J(obj), *ol = old ? J(old) : NULL, *causes = cJSON_CreateArray();
    struct vmop_err err = {0};
    char *msg = NULL;
    ck_assert_int_eq(as_schema_validate(s, o, ol, causes, &err), VMOP_OK);
    if (cJSON_GetArraySize(causes) > 0)
        msg = as_invalid_message("VirtualMachine", "example.com", "vm0", causes);
    if (ret_causes)
        *ret_causes = causes;
    else
        cJSON_Delete(causes);
    cJSON_Delete(s);
    cJSON_Delete(o);
    cJSON_Delete(ol);
    return msg;
}

#define ASSERT_INVALID(schema, obj, old, want)                                                     \
    do {                                                                                           \
        char *m_ = validate_msg(schema, obj, old, NULL);                                           \
        ck_assert_msg(m_ != NULL, "expected invalid: %s", want);                                   \
        ck_assert_str_eq(m_, want);                                                                \
        free(m_);                                                                                  \
    } while (0)

#define ASSERT_VALID(schema, obj, old)                                                             \
    do {                                                                                           \
        char *m_ = validate_msg(schema, obj, old, NULL);                                           \
        ck_assert_msg(m_ == NULL, "unexpected: %s", m_ ? m_ : "");                                 \
        free(m_);                                                                                  \
    } while (0)

static inline int run_suite(Suite *s)
{
    return vmop_check_run(s);
}

#endif
