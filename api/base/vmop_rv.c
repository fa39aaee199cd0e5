/* vmop_rv.c: resourceVersion comparison (see vmop_rv.h). */
#include "vmop_rv.h"

#include <stdlib.h>
#include <string.h>

static int is_decimal(const char *s)
{
    if (!*s || strlen(s) > 19)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

int vmop_rv_cmp(const char *a, const char *b)
{
    if (!a || !b)
        return a == b ? 0 : -2;
    if (is_decimal(a) && is_decimal(b)) {
        unsigned long long x = strtoull(a, NULL, 10), y = strtoull(b, NULL, 10);
        return x < y ? -1 : x > y ? 1 : 0;
    }
    return strcmp(a, b) == 0 ? 0 : -2;
}
