/* test_file.h: reading fixture files inside Check tests.
 *
 * Owns: opening, sizing and reading a whole file into a NUL-terminated buffer, failing the current
 * test (ck_assert) when it cannot. Only for use inside a running Check test.
 */
#ifndef VMOP_TEST_FILE_H
#define VMOP_TEST_FILE_H

#include <stddef.h>

/* Reads the file whose path is fmt formatted (at most 4095 bytes) into a new NUL-terminated buffer
 * (free() it). *ret_len (if not NULL) gets the byte count. Fails the current test when the path is
 * too long, the file cannot be opened or is not read whole. */
char *vmop_test_slurpf(size_t *ret_len, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
