/* vim_pbm.h: what vim_pbm.c exposes to vimclient's unit tests and fuzzers (not to the operator:
 * it uses the vim_pbm_* calls of vimclient.h). Every function here works on bytes only (no I/O).
 *
 * Owner: vim_pbm.c (SPBM storage policies).
 */
#ifndef VIM_PBM_H
#define VIM_PBM_H

#include "vim_internal.h"

#define VIM_PBM_NS           "urn:pbm"
#define VIM_PBM_PATH         "/pbm"
#define VIM_PBM_COOKIE_MAX   512        /* longest session cookie value we forward */
#define VIM_PBM_MAX_RESPONSE (4u << 20) /* one PBM reply body */
#define VIM_PBM_NAME_MAX     1024       /* longest profile name we keep */

/* The envelope of one PBM call: a vcSessionCookie header when cookie is non-NULL (escaped), the
 * method in urn:pbm, _this and params_xml (already escaped, may be NULL). out: initialized by
 * the caller (vbuf_init) or zeroed (then capped at VIM_MAX_REQUEST); caller frees it (secure: it
 * holds the session). */
vmop_rc vim_pbm_envelope(struct vbuf *out, const char *cookie, const char *method,
                         const struct vim_moref *this_ref, const char *params_xml);

/* Interprets one HTTP answer to method: 200 = a reply (returnval count checked against occurs),
 * 500 = a SOAP fault (typed as vim25 faults), anything else VMOP_E_HTTP. *ret_resp: caller frees
 * (vim_resp_free). */
vmop_rc vim_pbm_reply(long status, const char *body, size_t len, const char *method,
                      enum vim_occurs occurs, struct vim_resp **ret_resp, struct vmop_err *err);

/* Decoders of a parsed reply (reply nodes are read, never trusted: sizes capped). */
vmop_rc vim_pbm_decode_service_content(const struct vim_resp *r, struct vim_moref *ret_profile_mgr,
                                       struct vim_moref *ret_solver, struct vmop_err *err);
/* The profile whose profileId.uniqueId is id, else VMOP_E_NOT_FOUND. */
vmop_rc vim_pbm_decode_profile(const struct vim_resp *r, const char *id,
                               struct vim_pbm_profile **ret_profile, struct vmop_err *err);
/* Datastore hubs without error, in reply order. *ret_ds: free(). */
vmop_rc vim_pbm_decode_check(const struct vim_resp *r, struct vim_moref **ret_ds, size_t *ret_n,
                             struct vmop_err *err);

/* The value of cookie `name` in a Netscape cookie-file line list as libcurl's CURLINFO_COOKIELIST
 * gives it (lines "domain\tflag\tpath\tsecure\texpiry\tname\tvalue"; "#HttpOnly_" prefixes are
 * fine); the last one wins. VMOP_E_NOT_FOUND when absent; VMOP_E_TOOBIG over
 * VIM_PBM_COOKIE_MAX. buf gets the value (size >= VIM_PBM_COOKIE_MAX + 1). */
vmop_rc vim_pbm_cookie_from_line(const char *line, const char *name, char *buf, size_t size);

#endif
