/* schema_cel.h: x-kubernetes-validations (CEL) over a custom resource, as apiextensions' CEL
 * validator walks it (internal to apischema; the server calls as_schema_validate). */
#ifndef AS_SCHEMA_CEL_H
#define AS_SCHEMA_CEL_H

#include <cjson/cJSON.h>

#include "vmop_err.h"

/* True when the schema (or any node below it) has x-kubernetes-validations rules. */
int as_schema_has_rules(const cJSON *schema, int depth);

/* Evaluates every rule on every present value; appends causes. Transition rules (oldSelf) run only
 * where old has a correlatable value. Returns VMOP_OK, or VMOP_E_NOMEM (err filled). */
vmop_rc as_schema_cel_validate(const cJSON *schema, const cJSON *obj, const cJSON *old,
                               cJSON *causes, struct vmop_err *err);

#endif
