/* api_cond.h: metav1.Condition lists with VM Operator's semantics (pkg/conditions).
 *
 * Owns: setting, reading and deleting conditions in a status.conditions JSON array, in place.
 * Rules (vm-operator.md section 4):
 *   - a True condition set with api_cond_mark_true() has reason "True" and message "";
 *   - a False/Unknown condition with no reason gets reason "False"/"Unknown";
 *   - lastTransitionTime is UTC, whole seconds, and moves only when status, reason or message
 * change;
 *   - the list is kept sorted: "Ready" first, then alphabetically by type.
 * The array is caller-owned (usually status.conditions inside an api object); these functions only
 * add, replace and remove its elements. At most API_COND_MAX conditions are kept.
 * Messages are user-visible: never put secrets into them.
 */
#ifndef VMOP_API_COND_H
#define VMOP_API_COND_H

#include <cjson/cJSON.h>
#include <time.h>

#include "vmop_err.h"

#define API_COND_MAX     64
#define API_COND_MSG_MAX 1024 /* longer messages are truncated (Kubernetes allows 32768) */

enum api_cond_status { API_COND_TRUE, API_COND_FALSE, API_COND_UNKNOWN };

/* Sets (adds or updates) condition `type`. reason NULL/"" becomes the status text; message NULL is
 * "". generation >= 0 is stored as observedGeneration (it never moves lastTransitionTime).
 * *ret_changed (may be NULL) is 1 when anything in the array changed. */
vmop_rc api_cond_set(cJSON *conds, const char *type, enum api_cond_status status,
                     const char *reason, const char *message, long long generation, time_t now,
                     int *ret_changed, struct vmop_err *err);
vmop_rc api_cond_mark_true(cJSON *conds, const char *type, long long generation, time_t now,
                           int *ret_changed, struct vmop_err *err);
/* Removes condition `type`; returns 1 if it was present. */
int api_cond_delete(cJSON *conds, const char *type);
/* Borrowed element, or NULL. */
const cJSON *api_cond_get(const cJSON *conds, const char *type);
/* 1 when condition `type` exists with status "True". */
int api_cond_is_true(const cJSON *conds, const char *type);
/* Sorts in place: "Ready" first, then by type. */
void api_cond_sort(cJSON *conds);
/* RFC 3339 UTC seconds ("2026-11-29T22:14:03Z") into buf (>= 21 bytes). */
void api_cond_format_time(time_t t, char *buf, size_t n);

#endif
