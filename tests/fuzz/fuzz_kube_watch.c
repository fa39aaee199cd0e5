/* fuzz_kube_watch.c: libFuzzer target for the Kubernetes watch stream parser (kube_watch.h).
 *
 * Input: byte 0 picks the line cap (64 << (b & 7)) and a stop-after-N-lines count (b >> 3 & 7, 0 =
 * never); byte 1 seeds the chunking; the rest is the stream. The stream is fed once in one piece
 * and once in pseudo-random chunks (1..~300 bytes, also empty ones): the result code and every
 * line delivered must be the same both ways. Each line of the first pass is also decoded with
 * kube_watch_event_parse (an event owns its object; an ERROR event gives a described failure).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "kube_status.h"
#include "kube_watch.h"
#include "vbuf.h"

struct lines {
    struct vbuf rec; /* each line as <size_t len><bytes> */
    int n;
    int stop_after; /* 0 = never */
    int decode;
    size_t max_line;
};

static void decode(const char *line, size_t len)
{
    enum kube_event_type t;
    cJSON *obj = NULL;
    struct kube_status st;
    struct vmop_err err = {0};
    vmop_rc rc = kube_watch_event_parse(line, len, &t, &obj, &st, &err);
    fuzz_check_err(rc, &err);
    if (rc == VMOP_OK) {
        FUZZ_REQUIRE(cJSON_IsObject(obj));
        FUZZ_REQUIRE(strcmp(kube_event_type_str(t), "?") != 0);
        cJSON_Delete(obj);
    } else {
        FUZZ_REQUIRE(obj == NULL);
    }
}

static int on_line(void *ud, const char *line, size_t len)
{
    struct lines *l = ud;
    FUZZ_REQUIRE(len > 0);
    FUZZ_REQUIRE(!memchr(line, '\n', len));
    FUZZ_REQUIRE(len <= l->max_line);
    vbuf_add(&l->rec, &len, sizeof(len));
    vbuf_add(&l->rec, line, len);
    if (l->decode)
        decode(line, len);
    l->n++;
    return l->stop_after && l->n >= l->stop_after;
}

static uint32_t next_rand(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 16;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kube_ndjson p;
    struct lines a = {0}, b = {0};
    struct vmop_err err = {0};
    vmop_rc rc_a, rc_b = VMOP_OK;
    size_t max_line, off = 0;
    uint32_t seed;

    if (size < 2)
        return 0;
    max_line = (size_t)64 << (data[0] & 7);
    a.stop_after = b.stop_after = (data[0] >> 3) & 7;
    seed = data[1];
    data += 2;
    size -= 2;
    vbuf_init(&a.rec, VBUF_DEFAULT_MAX);
    vbuf_init(&b.rec, VBUF_DEFAULT_MAX);
    a.decode = 1;
    a.max_line = b.max_line = max_line;

    kube_ndjson_init(&p, max_line);
    rc_a = kube_ndjson_feed(&p, (const char *)data, size, on_line, &a, &err);
    if (rc_a == VMOP_OK)
        rc_a = kube_ndjson_finish(&p, on_line, &a, &err);
    if (rc_a != VMOP_E_CANCELED)
        fuzz_check_err(rc_a, &err);
    kube_ndjson_free(&p);

    vmop_err_clear(&err);
    kube_ndjson_init(&p, max_line);
    while (rc_b == VMOP_OK && off <= size) {
        size_t n = next_rand(&seed) % 300;
        if (n > size - off)
            n = size - off;
        rc_b = kube_ndjson_feed(&p, (const char *)data + off, n, on_line, &b, &err);
        off += n;
        if (off == size)
            break;
    }
    if (rc_b == VMOP_OK)
        rc_b = kube_ndjson_finish(&p, on_line, &b, &err);
    if (rc_b != VMOP_E_CANCELED)
        fuzz_check_err(rc_b, &err);
    kube_ndjson_free(&p);

    FUZZ_REQUIRE(vbuf_error(&a.rec) == VMOP_OK && vbuf_error(&b.rec) == VMOP_OK);
    FUZZ_REQUIRE(rc_a == rc_b);
    FUZZ_REQUIRE(a.n == b.n);
    FUZZ_REQUIRE(a.rec.len == b.rec.len);
    FUZZ_REQUIRE(a.rec.len == 0 || memcmp(a.rec.data, b.rec.data, a.rec.len) == 0);
    vbuf_free(&a.rec);
    vbuf_free(&b.rec);
    return 0;
}
