/* adm_convert.c: the conversion webhook's handler (see adm_convert.h). */
#include "adm_convert.h"

#include "api_convert.h"

vmop_rc adm_convert(void *ud, const cJSON *obj, const char *desired_api_version, cJSON **ret,
                    struct vmop_err *err)
{
    (void)ud;
    return api_convert(obj, desired_api_version, ret, err);
}
