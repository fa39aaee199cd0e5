/* fake_sdk.h: a scripted SOAP endpoint on 127.0.0.1 for unit tests of shapes the simulator never
 * produces (paging tokens, missing returnval, tasks that are still running, HTTP 503).
 *
 * Owns: one server thread, its sockets, and copies of every request it received. Each request is
 * answered by the next script entry whose method matches the SOAP body element; a request that
 * does not match the next entry gets HTTP 500 with an InvalidRequest fault and is counted in
 * `mismatches`. Not thread-safe for the test itself: read the records after fake_sdk_stop().
 */
#ifndef FAKE_SDK_H
#define FAKE_SDK_H

#include <stddef.h>

struct fake_reply {
    const char *method; /* body element expected, e.g. "RetrievePropertiesEx" */
    int status;         /* HTTP status */
    const char *body;   /* inner XML of soapenv:Body (wrapped in an envelope), or a raw body
                         * when raw is set */
    int raw;
    const char *set_cookie; /* "vmware_soap_session=abc" or NULL */
};

#define FAKE_MAX_REQS 64

struct fake_sdk {
    char url[64];                    /* "http://127.0.0.1:PORT" */
    const struct fake_reply *script; /* borrowed */
    size_t n_script;
    size_t next; /* replies used */
    int mismatches;
    char *requests[FAKE_MAX_REQS]; /* headers + body of each request (owned) */
    size_t n_requests;
    /* private */
    int listen_fd;
    int stop;
    void *thread;
};

/* Starts the server; returns 0 or -1. */
int fake_sdk_start(struct fake_sdk *f, const struct fake_reply *script, size_t n);
/* Stops the thread and closes sockets; records stay until fake_sdk_free. */
void fake_sdk_stop(struct fake_sdk *f);
void fake_sdk_free(struct fake_sdk *f);

#endif
