/* ta_proto.c: decodes the Kubernetes protobuf request bodies kubectl's typed generators send
 * (`kubectl create namespace|configmap|secret|serviceaccount`): the "k8s\0" magic, a
 * runtime.Unknown envelope {typeMeta, raw}, and in raw the object (ObjectMeta + the few fields of
 * those kinds). Anything else is refused (the caller answers 415). Field numbers are those of
 * k8s.io/api/core/v1/generated.proto and apimachinery's meta/v1 and runtime generated.proto. */
#include "ta.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pb {
    const unsigned char *p, *end;
};

static int varint(struct pb *b, uint64_t *v)
{
    int shift = 0;
    *v = 0;
    while (b->p < b->end && shift < 64) {
        unsigned char c = *b->p++;
        *v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return 0;
        shift += 7;
    }
    return -1;
}

/* Next field: number, wire type, and for wire type 2 the sub-buffer; varints in *v. */
static int field(struct pb *b, unsigned *num, unsigned *wt, struct pb *sub, uint64_t *v)
{
    uint64_t key;
    if (varint(b, &key))
        return -1;
    *num = (unsigned)(key >> 3);
    *wt = (unsigned)(key & 7);
    switch (*wt) {
    case 0:
        return varint(b, v);
    case 1:
        if (b->end - b->p < 8)
            return -1;
        b->p += 8;
        return 0;
    case 5:
        if (b->end - b->p < 4)
            return -1;
        b->p += 4;
        return 0;
    case 2:
        if (varint(b, v) || *v > (uint64_t)(b->end - b->p))
            return -1;
        sub->p = b->p;
        sub->end = b->p + *v;
        b->p += *v;
        return 0;
    default:
        return -1;
    }
}

static cJSON *str(const struct pb *s)
{
    size_t n = (size_t)(s->end - s->p);
    char *t = malloc(n + 1);
    cJSON *j;
    if (!t)
        return NULL;
    memcpy(t, s->p, n);
    t[n] = '\0';
    j = cJSON_CreateString(t);
    free(t);
    return j;
}

static cJSON *b64(const struct pb *s)
{
    char *t = ta_b64(s->p, (size_t)(s->end - s->p));
    cJSON *j = t ? cJSON_CreateString(t) : NULL;
    free(t);
    return j;
}

/* map<string,string|bytes> entry into obj[key] */
static int map_entry(cJSON *obj, struct pb e, int bytes)
{
    struct pb k = {0}, v = {0}, sub;
    unsigned num, wt;
    uint64_t x;
    char *key;
    cJSON *val;
    while (e.p < e.end) {
        if (field(&e, &num, &wt, &sub, &x))
            return -1;
        if (num == 1 && wt == 2)
            k = sub;
        else if (num == 2 && wt == 2)
            v = sub;
    }
    if (!k.p)
        return -1;
    key = malloc((size_t)(k.end - k.p) + 1);
    if (!key)
        return -1;
    memcpy(key, k.p, (size_t)(k.end - k.p));
    key[k.end - k.p] = '\0';
    if (!v.p)
        v = k, v.p = v.end; /* empty value */
    val = bytes ? b64(&v) : str(&v);
    if (val)
        cJSON_AddItemToObject(obj, key, val);
    free(key);
    return val ? 0 : -1;
}

static cJSON *child(cJSON *o, const char *key, int array)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(o, key);
    if (c)
        return c;
    return array ? cJSON_AddArrayToObject(o, key) : cJSON_AddObjectToObject(o, key);
}

static int owner_ref(cJSON *arr, struct pb b)
{
    cJSON *r = cJSON_CreateObject();
    struct pb sub;
    unsigned num, wt;
    uint64_t x;
    if (!r)
        return -1;
    cJSON_AddItemToArray(arr, r);
    while (b.p < b.end) {
        if (field(&b, &num, &wt, &sub, &x))
            return -1;
        if (wt == 2 && (num == 1 || num == 3 || num == 4 || num == 5))
            cJSON_AddItemToObject(r,
                                  num == 1   ? "kind"
                                  : num == 3 ? "name"
                                  : num == 4 ? "uid"
                                             : "apiVersion",
                                  str(&sub));
        else if (wt == 0 && (num == 6 || num == 7))
            cJSON_AddBoolToObject(r, num == 6 ? "controller" : "blockOwnerDeletion", x != 0);
    }
    return 0;
}

static int object_meta(cJSON *m, struct pb b)
{
    struct pb sub;
    unsigned num, wt;
    uint64_t x;
    while (b.p < b.end) {
        if (field(&b, &num, &wt, &sub, &x))
            return -1;
        if (wt == 2 && (num == 1 || num == 2 || num == 3 || num == 5 || num == 6))
            cJSON_AddItemToObject(m,
                                  num == 1   ? "name"
                                  : num == 2 ? "generateName"
                                  : num == 3 ? "namespace"
                                  : num == 5 ? "uid"
                                             : "resourceVersion",
                                  str(&sub));
        else if (wt == 2 && (num == 11 || num == 12)) {
            if (map_entry(child(m, num == 11 ? "labels" : "annotations", 0), sub, 0))
                return -1;
        } else if (wt == 2 && num == 14) {
            cJSON_AddItemToArray(child(m, "finalizers", 1), str(&sub));
        } else if (wt == 2 && num == 13) {
            if (owner_ref(child(m, "ownerReferences", 1), sub))
                return -1;
        }
    }
    return 0;
}

/* Decodes the raw object of kind into obj. */
static int decode_kind(const char *kind, cJSON *obj, struct pb b)
{
    struct pb sub;
    unsigned num, wt;
    uint64_t x;
    int ns = strcmp(kind, "Namespace") == 0, cm = strcmp(kind, "ConfigMap") == 0,
        sec = strcmp(kind, "Secret") == 0, sa = strcmp(kind, "ServiceAccount") == 0;
    if (!ns && !cm && !sec && !sa)
        return -1;
    while (b.p < b.end) {
        if (field(&b, &num, &wt, &sub, &x))
            return -1;
        if (num == 1 && wt == 2) {
            if (object_meta(child(obj, "metadata", 0), sub))
                return -1;
        } else if (ns && num == 2 && wt == 2) {
            struct pb s2;
            cJSON *spec = child(obj, "spec", 0);
            while (sub.p < sub.end) {
                if (field(&sub, &num, &wt, &s2, &x))
                    return -1;
                if (num == 1 && wt == 2)
                    cJSON_AddItemToArray(child(spec, "finalizers", 1), str(&s2));
            }
        } else if ((cm || sec) && num == 2 && wt == 2) {
            if (map_entry(child(obj, "data", 0), sub, sec))
                return -1;
        } else if (cm && num == 3 && wt == 2) {
            if (map_entry(child(obj, "binaryData", 0), sub, 1))
                return -1;
        } else if (sec && num == 3 && wt == 2) {
            cJSON_AddItemToObject(obj, "type", str(&sub));
        } else if (sec && num == 4 && wt == 2) {
            if (map_entry(child(obj, "stringData", 0), sub, 0))
                return -1;
        } else if (((cm && num == 4) || (sec && num == 5)) && wt == 0) {
            cJSON_AddBoolToObject(obj, "immutable", x != 0);
        } else if (sa && num == 4 && wt == 0) {
            cJSON_AddBoolToObject(obj, "automountServiceAccountToken", x != 0);
        }
    }
    return 0;
}

cJSON *ta_proto_decode(const unsigned char *data, size_t n);
cJSON *ta_proto_decode(const unsigned char *data, size_t n)
{
    struct pb b = {data + 4, data + n}, sub, raw = {0};
    unsigned num, wt;
    uint64_t x;
    cJSON *obj;
    const char *kind;
    if (n < 4 || memcmp(data, "k8s\0", 4) != 0)
        return NULL;
    obj = cJSON_CreateObject();
    if (!obj)
        return NULL;
    while (b.p < b.end) {
        if (field(&b, &num, &wt, &sub, &x))
            goto fail;
        if (num == 1 && wt == 2) {
            struct pb s2;
            while (sub.p < sub.end) {
                if (field(&sub, &num, &wt, &s2, &x))
                    goto fail;
                if (wt == 2 && (num == 1 || num == 2))
                    cJSON_AddItemToObject(obj, num == 1 ? "apiVersion" : "kind", str(&s2));
            }
        } else if (num == 2 && wt == 2) {
            raw = sub;
        }
    }
    kind = ta_jstr(obj, "kind");
    if (!kind || !raw.p || decode_kind(kind, obj, raw))
        goto fail;
    return obj;
fail:
    cJSON_Delete(obj);
    return NULL;
}
