/* log.h: the operator's structured logs: one JSON object per line on stderr, with a level.
 *
 * Owns: the log level, line formatting (ts, level, logger, key, msg, optional fields) and the
 * JSON escaping of every string. Never pass secrets (passwords, tokens, user data) to these
 * functions: the log is meant to be shared in bug reports.
 *
 * Threads: thread-safe; a line is written with one write() so lines never interleave.
 */
#ifndef VMOP_LOG_H
#define VMOP_LOG_H

#include <stdarg.h>

#include "vmop_err.h"

enum vlog_level { VLOG_DEBUG = 0, VLOG_INFO = 1, VLOG_WARN = 2, VLOG_ERROR = 3 };

/* "debug", "info", "warn" / "warning", "error" -> level; -1 when unknown. */
int vlog_level_parse(const char *s);
const char *vlog_level_str(enum vlog_level l);
void vlog_set_level(enum vlog_level l);
int vlog_enabled(enum vlog_level l);
/* Redirect output (tests); fd -1 restores stderr. */
void vlog_set_fd(int fd);

/* {"ts":"...","level":"info","logger":LOGGER,"key":KEY,"msg":"..."}; key may be NULL. */
void vlog(enum vlog_level l, const char *logger, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Same, adding "error" (the message), "code" and "fault" from err. */
void vlog_err(enum vlog_level l, const char *logger, const char *key, const struct vmop_err *err,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
