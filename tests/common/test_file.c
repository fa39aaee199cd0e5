/* test_file.c: whole-file reads for fixtures, asserting as they go (see test_file.h). */
#include "test_file.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

char *vmop_test_slurpf(size_t *ret_len, const char *fmt, ...)
{
    char path[4096];
    va_list ap;
    FILE *f;
    char *buf;
    long n;
    int w;

    va_start(ap, fmt);
    w = vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    ck_assert_msg(w >= 0 && (size_t)w < sizeof(path), "fixture path too long");
    f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    ck_assert_int_ge(n, 0);
    rewind(f);
    buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (ret_len)
        *ret_len = (size_t)n;
    return buf;
}
