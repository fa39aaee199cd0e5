/* schema_fmt.h: string `format` checks for CRD validation and timestamps (internal to apischema).
 */
#ifndef AS_SCHEMA_FMT_H
#define AS_SCHEMA_FMT_H

/* 1 when s is valid for format (unknown formats: always 1). */
int as_format_ok(const char *format, const char *s);
/* 1 when s is an RFC 3339 date-time. */
int as_format_datetime(const char *s);

#endif
