/* adm_convert.h: the CRD conversion webhook's handler: one object of a ConversionReview to the
 * desired version through the v1alpha6 hub (api_convert(), api/api_convert.h: pure, lossless
 * round trips). Stateless and thread-safe; served on every replica at ADM_CONVERT_PATH, the path
 * VM Operator's CRDs name. */
#ifndef VMOP_ADM_CONVERT_H
#define VMOP_ADM_CONVERT_H

#include <cjson/cJSON.h>

#include "vmop_err.h"

#define ADM_CONVERT_PATH "/convert"

/* wh_convert_fn (operator/webhook/wh_server.h); ud is unused. */
vmop_rc adm_convert(void *ud, const cJSON *obj, const char *desired_api_version, cJSON **ret,
                    struct vmop_err *err);

#endif
