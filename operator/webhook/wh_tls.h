/* wh_tls.h: the webhook server's certificate: tls.crt + tls.key from a directory (a Secret
 * volume or cert-manager's), reloaded when the files change.
 *
 * Owns: the current OpenSSL SSL_CTX, the files' identity (device, inode, size, mtime, ctime of
 * both, through symlinks, so the Secret volume's "..data" swap is seen) and the reload rule: a
 * pair that fails to load (unreadable, not PEM, key not matching the certificate) is reported
 * once per change and the previous pair stays in use. Not here: sockets (wh_server.c).
 *
 * Threads: wh_tls_ctx_get() may be called from any thread (a mutex guards the current context).
 */
#ifndef VMOP_WH_TLS_H
#define VMOP_WH_TLS_H

#include <openssl/ssl.h>

#include "vmop_err.h"

struct wh_tls;

/* Loads dir/tls.crt (PEM chain) and dir/tls.key. Fails when the first pair does not load.
 * *ret (freed by wh_tls_free) is set on VMOP_OK only. */
vmop_rc wh_tls_new(const char *dir, struct wh_tls **ret, struct vmop_err *err);
void wh_tls_free(struct wh_tls *t); /* NULL-safe; contexts handed out stay valid (refcounted) */

/* The context to use for a new connection: +1 reference (SSL_CTX_free it; an SSL made from it
 * holds its own). Checks the files first and reloads when they changed. When a changed pair
 * fails to load, *ret_reload_err (if not NULL) gets the failure, reported only the first time
 * that version of the files is seen, and the old context is returned. Never NULL. */
SSL_CTX *wh_tls_ctx_get(struct wh_tls *t, struct vmop_err *ret_reload_err);

/* Counters: successful reloads (not counting the first load) and failed ones. */
void wh_tls_counts(struct wh_tls *t, unsigned long *ret_reloads, unsigned long *ret_failures);

#endif
