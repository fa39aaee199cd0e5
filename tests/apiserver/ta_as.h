/* ta_as.h: the apischema functions kube-testapi calls (contract:
 * /work/briefs/apiserver-interface.md). With apischema linked (TA_HAVE_APISCHEMA) this is its
 * headers; otherwise the same declarations, implemented by as_fallback.c as "unsupported" so the
 * server still builds and serves plain JSON. */
#ifndef TA_AS_H
#define TA_AS_H

#ifdef TA_HAVE_APISCHEMA
#include "openapi.h"
#include "schema.h"
#include "table.h"
#else
#include <cjson/cJSON.h>
#include <stddef.h>

#include "vmop_err.h"

vmop_rc as_crd_check(const cJSON *crd, cJSON *causes, struct vmop_err *err);
vmop_rc as_schema_prune(const cJSON *schema, cJSON *obj, cJSON *unknown, struct vmop_err *err);
vmop_rc as_schema_default(const cJSON *schema, cJSON *obj, struct vmop_err *err);
vmop_rc as_schema_validate(const cJSON *schema, const cJSON *obj, const cJSON *old, cJSON *causes,
                           struct vmop_err *err);
char *as_invalid_message(const char *kind, const char *group, const char *name,
                         const cJSON *causes);
vmop_rc as_openapi_gv_doc(const char *group, const char *version, const cJSON *resources,
                          cJSON **ret_doc, struct vmop_err *err);
enum as_include { AS_INCLUDE_NONE, AS_INCLUDE_METADATA, AS_INCLUDE_OBJECT };
vmop_rc as_table_builtin_columns(const char *group, const char *plural, cJSON **ret_cols,
                                 struct vmop_err *err);
vmop_rc as_table_build(const cJSON *cols, const cJSON *items, enum as_include include,
                       int with_headers, long long now, cJSON **ret_table, struct vmop_err *err);
void as_human_duration(long long seconds, char *buf, size_t size);
#endif

#endif
