/* kube_yaml.c: YAML (kubeconfigs, Kubernetes manifests) to cJSON, on libyaml's event parser (see
 * kube_yaml.h for what is read and what is refused).
 *
 * Owns: the event loop over yaml_parser_parse, the stack of open collections (one frame each,
 * holding the pending mapping key and that mapping's keys for the duplicate check), the anchors
 * and their alias expansion under the node budget, the "<<" merge key, YAML 1.2 core resolution
 * of plain scalars, and turning libyaml's errors into vmop_err messages that name a line and
 * column and libyaml's fixed problem text, never content.
 *
 * Ownership: a collection is attached to its parent (or made the root) when it opens, so the tree
 * under p->root owns every node in it; frames only borrow theirs. Nodes outside the tree (merge
 * sources, anchored mapping keys) are owned by p->spare. Anchors live in p->anchors (a list the
 * parser frees) and are found by name through p->anchor_names (values borrowed).
 */
#include "kube_yaml.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "vmop_map.h"

#define KEY_SCAN 16 /* a mapping with more keys checks duplicates through a hash map */

struct anchor {
    struct anchor *next; /* p->anchors */
    cJSON *node;         /* borrowed: in the tree or in p->spare */
    size_t nodes;        /* nodes in the subtree: what an alias to it spends of the budget */
    int height;          /* collection levels in it (0: a scalar) */
    int done;            /* 0 while the node is still open: an alias to it would recurse */
};

struct frame {
    cJSON *node;           /* borrowed (attached to its parent or the root when opened) */
    struct anchor *anchor; /* the collection's anchor, or NULL */
    size_t nodes_at_start; /* p->nodes before this collection was counted */
    int height;            /* the largest height of a child so far */
    /* mappings only */
    char *key;              /* the pending key (owned), NULL when a key comes next */
    int merge;              /* the pending key is the merge key "<<" */
    int merged;             /* a "<<" was seen (a second one is a duplicate key) */
    yaml_mark_t merge_mark; /* where that "<<" is */
    const cJSON *merge_src; /* the "<<" value (owned by p->spare), or NULL */
    size_t nkeys;           /* members in node */
    struct vmop_map keys;   /* every key once nkeys > KEY_SCAN (values unused) */
};

struct yparser {
    struct frame stack[KUBE_YAML_MAX_DEPTH];
    int depth;
    size_t nodes;
    int documents;
    cJSON *root;
    cJSON *spare; /* an array: nodes outside the tree that anchors may point to */
    struct anchor *anchors;
    struct vmop_map anchor_names;
    struct vmop_err *err;
};

static vmop_rc yfail(struct yparser *p, vmop_rc rc, yaml_mark_t m, const char *what)
{
    return vmop_fail(p->err, rc, "kubeconfig YAML line %zu column %zu: %s", m.line + 1,
                     m.column + 1, what);
}

/* libyaml's own error. Its problem and context strings are string literals (every
 * yaml_parser_set_*_error call in reader.c, scanner.c and parser.c passes one, e.g. "found
 * unexpected end of stream", "while scanning a quoted scalar"), so they carry no content.
 * problem_value (a reader error's offending byte) is content and is not printed. */
static vmop_rc lib_fail(struct yparser *p, const yaml_parser_t *ps, const char *text, size_t len)
{
    const char *problem = ps->problem ? ps->problem : "syntax error";
    switch (ps->error) {
    case YAML_MEMORY_ERROR:
        return vmop_fail(p->err, VMOP_E_NOMEM, "out of memory parsing kubeconfig YAML");
    case YAML_READER_ERROR: {
        /* no mark: the offset is in bytes of the input */
        size_t line = 1, end = ps->problem_offset < len ? ps->problem_offset : len;
        for (size_t i = 0; i < end; i++)
            line += text[i] == '\n';
        return vmop_fail(p->err, VMOP_E_INVALID, "kubeconfig YAML line %zu: %s", line, problem);
    }
    default:
        if (ps->context)
            return vmop_fail(p->err, VMOP_E_INVALID,
                             "kubeconfig YAML line %zu column %zu: %s (%s at line %zu column %zu)",
                             ps->problem_mark.line + 1, ps->problem_mark.column + 1, problem,
                             ps->context, ps->context_mark.line + 1, ps->context_mark.column + 1);
        return vmop_fail(p->err, VMOP_E_INVALID, "kubeconfig YAML line %zu column %zu: %s",
                         ps->problem_mark.line + 1, ps->problem_mark.column + 1, problem);
    }
}

static vmop_rc nomem(struct yparser *p, yaml_mark_t m)
{
    return yfail(p, VMOP_E_NOMEM, m, "out of memory");
}

static vmop_rc count_nodes(struct yparser *p, size_t n, yaml_mark_t m)
{
    if (n > KUBE_YAML_MAX_NODES - p->nodes)
        return yfail(p, VMOP_E_TOOBIG, m, "too many nodes (aliases included)");
    p->nodes += n;
    return VMOP_OK;
}

/* Nodes in the tree n, counting no further than limit + 1. */
static size_t tree_nodes(const cJSON *n, size_t limit)
{
    size_t total = 1;
    for (const cJSON *c = n->child; c && total <= limit; c = c->next)
        total += tree_nodes(c, limit - total);
    return total;
}

/* Tags: none, the non-specific "!" and the YAML ones (tag:yaml.org,2002:...) are read; only
 * !!str and "!" change a plain scalar's meaning (to a string). Any other tag is refused. */
#define YAML_TAG_PREFIX "tag:yaml.org,2002:"

static vmop_rc check_tag(struct yparser *p, const yaml_char_t *tag, yaml_mark_t m, int *is_str)
{
    const char *t = (const char *)tag;
    *is_str = 0;
    if (!t)
        return VMOP_OK;
    if (!strcmp(t, "!") || !strcmp(t, YAML_TAG_PREFIX "str")) {
        *is_str = 1;
        return VMOP_OK;
    }
    if (!strncmp(t, YAML_TAG_PREFIX, strlen(YAML_TAG_PREFIX)))
        return VMOP_OK;
    return yfail(p, VMOP_E_UNSUPPORTED, m, "application-specific tags are not supported");
}

/* A YAML 1.2 core-schema number: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, except an
 * integer with a leading zero (0755: octal in YAML 1.1, which Kubernetes' own YAML library reads,
 * decimal in 1.2), which stays a string rather than become either number silently. */
static int is_decimal(const char *s)
{
    const char *c = s, *int_start;
    size_t int_digits = 0, frac_digits = 0;
    int frac = 0;
    if (*c == '+' || *c == '-')
        c++;
    int_start = c;
    for (; *c >= '0' && *c <= '9'; c++)
        int_digits++;
    if (*c == '.') {
        frac = 1;
        for (c++; *c >= '0' && *c <= '9'; c++)
            frac_digits++;
    }
    if (!int_digits && !frac_digits)
        return 0;
    if (*c == 'e' || *c == 'E') {
        c++;
        if (*c == '+' || *c == '-')
            c++;
        if (!(*c >= '0' && *c <= '9'))
            return 0;
        while (*c >= '0' && *c <= '9')
            c++;
    }
    if (*c)
        return 0;
    return frac || int_digits == 1 || int_start[0] != '0';
}

/* A plain scalar, resolved: null, bool, decimal number (finite), else string. */
static cJSON *resolve_plain(const char *s)
{
    if (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"))
        return cJSON_CreateNull();
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
        return cJSON_CreateTrue();
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
        return cJSON_CreateFalse();
    if (is_decimal(s)) {
        double d = strtod(s, NULL);
        if (isfinite(d))
            return cJSON_CreateNumber(d);
    }
    return cJSON_CreateString(s);
}

/* The scalar event's node in *ret (owned by the caller), counted against the budget. */
static vmop_rc scalar_node(struct yparser *p, const yaml_event_t *ev, cJSON **ret)
{
    const char *s = (const char *)ev->data.scalar.value;
    int is_str;
    vmop_rc rc = check_tag(p, ev->data.scalar.tag, ev->start_mark, &is_str);
    if (rc)
        return rc;
    if (memchr(s, '\0', ev->data.scalar.length))
        return yfail(p, VMOP_E_UNSUPPORTED, ev->start_mark, "NUL character in a scalar");
    rc = count_nodes(p, 1, ev->start_mark);
    if (rc)
        return rc;
    if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !is_str)
        *ret = resolve_plain(s);
    else
        *ret = cJSON_CreateString(s);
    return *ret ? VMOP_OK : nomem(p, ev->start_mark);
}

/* A deep copy of n without n's member name (a copy placed in a sequence must have none). */
static cJSON *dup_node(const cJSON *n)
{
    cJSON *v = cJSON_Duplicate(n, 1);
    if (v && v->string) {
        if (!(v->type & cJSON_StringIsConst))
            cJSON_free(v->string);
        v->string = NULL;
        v->type &= ~cJSON_StringIsConst;
    }
    return v;
}

static vmop_rc add_anchor(struct yparser *p, const yaml_char_t *name, cJSON *node, int done,
                          yaml_mark_t m, struct anchor **ret)
{
    struct anchor *a = calloc(1, sizeof(*a));
    if (!a)
        return nomem(p, m);
    a->node = node;
    a->done = done;
    a->nodes = 1;
    a->next = p->anchors;
    p->anchors = a; /* freed with the parser from here on */
    if (vmop_map_put(&p->anchor_names, (const char *)name, a))
        return nomem(p, m);
    if (ret)
        *ret = a;
    return VMOP_OK;
}

/* Keeps n (owned) in p->spare, outside the tree; n is freed here on failure. */
static vmop_rc keep_spare(struct yparser *p, cJSON *n, yaml_mark_t m)
{
    if (!cJSON_AddItemToArray(p->spare, n)) {
        cJSON_Delete(n);
        return nomem(p, m);
    }
    return VMOP_OK;
}

static int has_key(const struct frame *f, const char *key)
{
    if (f->nkeys > KEY_SCAN)
        return vmop_map_has(&f->keys, key);
    for (const cJSON *c = f->node->child; c; c = c->next)
        if (!strcmp(c->string, key))
            return 1;
    return 0;
}

/* Adds v (owned, freed here on failure) to mapping f under key. */
static vmop_rc add_member(struct yparser *p, struct frame *f, const char *key, cJSON *v,
                          yaml_mark_t m)
{
    if (!cJSON_AddItemToObject(f->node, key, v)) {
        cJSON_Delete(v);
        return nomem(p, m);
    }
    f->nkeys++;
    if (f->nkeys == KEY_SCAN + 1) {
        for (const cJSON *c = f->node->child; c; c = c->next)
            if (vmop_map_put(&f->keys, c->string, NULL))
                return nomem(p, m);
    } else if (f->nkeys > KEY_SCAN && vmop_map_put(&f->keys, key, NULL)) {
        return nomem(p, m);
    }
    return VMOP_OK;
}

/* Gives v (owned; freed here on failure), of the given height, to the collection on top of the
 * stack, or makes it the document's root. */
static vmop_rc attach(struct yparser *p, cJSON *v, int height, yaml_mark_t m)
{
    vmop_rc rc = VMOP_OK;
    if (!p->depth) {
        p->root = v;
        return VMOP_OK;
    }
    struct frame *f = &p->stack[p->depth - 1];
    if (height > f->height)
        f->height = height;
    if (cJSON_IsArray(f->node)) {
        if (!cJSON_AddItemToArray(f->node, v)) {
            cJSON_Delete(v);
            return nomem(p, m);
        }
    } else if (f->merge) { /* kept outside the tree; merged when the mapping ends */
        f->merge = 0;
        rc = keep_spare(p, v, m);
        if (!rc)
            f->merge_src = v;
    } else {
        rc = add_member(p, f, f->key, v, m);
        free(f->key);
        f->key = NULL;
    }
    return rc;
}

/* A scalar where a mapping expects its key. */
static vmop_rc take_key(struct yparser *p, struct frame *f, const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    int is_str;
    vmop_rc rc = check_tag(p, ev->data.scalar.tag, ev->start_mark, &is_str);
    if (rc)
        return rc;
    if (memchr(s, '\0', ev->data.scalar.length))
        return yfail(p, VMOP_E_UNSUPPORTED, ev->start_mark, "NUL character in a mapping key");
    if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !is_str && !strcmp(s, "<<")) {
        if (f->merged)
            return yfail(p, VMOP_E_INVALID, ev->start_mark, "duplicate mapping key");
        f->merged = f->merge = 1;
        f->merge_mark = ev->start_mark;
    } else {
        if (has_key(f, s))
            return yfail(p, VMOP_E_INVALID, ev->start_mark, "duplicate mapping key");
        f->key = strdup(s);
        if (!f->key)
            return nomem(p, ev->start_mark);
    }
    if (ev->data.scalar.anchor) { /* "&k key: v": a later *k is the key as a value */
        cJSON *n = NULL;
        rc = scalar_node(p, ev, &n);
        if (!rc)
            rc = keep_spare(p, n, ev->start_mark);
        if (!rc)
            rc = add_anchor(p, ev->data.scalar.anchor, n, 1, ev->start_mark, NULL);
    }
    return rc;
}

static int expects_key(const struct yparser *p)
{
    const struct frame *f = p->depth ? &p->stack[p->depth - 1] : NULL;
    return f && cJSON_IsObject(f->node) && !f->key && !f->merge;
}

static vmop_rc on_scalar(struct yparser *p, const yaml_event_t *ev)
{
    if (expects_key(p))
        return take_key(p, &p->stack[p->depth - 1], ev);
    cJSON *v = NULL;
    vmop_rc rc = scalar_node(p, ev, &v);
    if (rc)
        return rc;
    cJSON *node = v;
    rc = attach(p, v, 0, ev->start_mark);
    if (!rc && ev->data.scalar.anchor)
        rc = add_anchor(p, ev->data.scalar.anchor, node, 1, ev->start_mark, NULL);
    return rc;
}

static vmop_rc on_alias(struct yparser *p, const yaml_event_t *ev)
{
    yaml_mark_t m = ev->start_mark;
    if (expects_key(p))
        return yfail(p, VMOP_E_UNSUPPORTED, m, "aliases as mapping keys are not supported");
    struct anchor *a = vmop_map_get(&p->anchor_names, (const char *)ev->data.alias.anchor);
    if (!a)
        return yfail(p, VMOP_E_INVALID, m, "alias to an undefined anchor");
    if (!a->done)
        return yfail(p, VMOP_E_INVALID, m, "alias to a node that contains it");
    if (p->depth + a->height > KUBE_YAML_MAX_DEPTH)
        return yfail(p, VMOP_E_TOOBIG, m, "nesting too deep (aliases included)");
    vmop_rc rc = count_nodes(p, a->nodes, m);
    if (rc)
        return rc;
    cJSON *v = dup_node(a->node);
    if (!v)
        return nomem(p, m);
    return attach(p, v, a->height, m);
}

static vmop_rc on_collection_start(struct yparser *p, const yaml_event_t *ev, int is_map)
{
    yaml_mark_t m = ev->start_mark;
    const yaml_char_t *tag = is_map ? ev->data.mapping_start.tag : ev->data.sequence_start.tag;
    const yaml_char_t *anchor =
        is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    int is_str;
    if (expects_key(p))
        return yfail(p, VMOP_E_UNSUPPORTED, m, "only scalars are supported as mapping keys");
    vmop_rc rc = check_tag(p, tag, m, &is_str);
    if (rc)
        return rc;
    if (p->depth == KUBE_YAML_MAX_DEPTH)
        return yfail(p, VMOP_E_TOOBIG, m, "nesting too deep");
    size_t at_start = p->nodes;
    rc = count_nodes(p, 1, m);
    if (rc)
        return rc;
    cJSON *c = is_map ? cJSON_CreateObject() : cJSON_CreateArray();
    if (!c)
        return nomem(p, m);
    rc = attach(p, c, 0, m);
    if (rc)
        return rc;
    struct frame *f = &p->stack[p->depth++];
    memset(f, 0, sizeof(*f));
    vmop_map_init(&f->keys, NULL);
    f->node = c;
    f->nodes_at_start = at_start;
    if (anchor)
        rc = add_anchor(p, anchor, c, 0, m, &f->anchor);
    return rc;
}

/* Merges mapping `one`'s members that f does not have yet into f. */
static vmop_rc merge_one(struct yparser *p, struct frame *f, const cJSON *one)
{
    if (!cJSON_IsObject(one))
        return yfail(p, VMOP_E_INVALID, f->merge_mark,
                     "a merge key's value must be a mapping or a sequence of mappings");
    for (const cJSON *c = one->child; c; c = c->next) {
        if (has_key(f, c->string))
            continue;
        vmop_rc rc = count_nodes(p, tree_nodes(c, KUBE_YAML_MAX_NODES - p->nodes), f->merge_mark);
        if (rc)
            return rc;
        cJSON *v = dup_node(c);
        if (!v)
            return nomem(p, f->merge_mark);
        rc = add_member(p, f, c->string, v, f->merge_mark);
        if (rc)
            return rc;
    }
    return VMOP_OK;
}

/* Applies mapping f's "<<" value (a mapping, or a sequence of them): the members f does not have,
 * in order, so an explicit key of f (before or after the "<<") and an earlier mapping win. */
static vmop_rc apply_merges(struct yparser *p, struct frame *f)
{
    const cJSON *src = f->merge_src;
    if (!src)
        return VMOP_OK;
    if (!cJSON_IsArray(src))
        return merge_one(p, f, src);
    vmop_rc rc = VMOP_OK;
    for (const cJSON *one = src->child; one && !rc; one = one->next)
        rc = merge_one(p, f, one);
    return rc;
}

static void frame_free(struct frame *f)
{
    free(f->key);
    f->key = NULL;
    vmop_map_clear(&f->keys);
}

static vmop_rc on_collection_end(struct yparser *p)
{
    struct frame *f = &p->stack[p->depth - 1];
    vmop_rc rc = VMOP_OK;
    if (f->merged) /* libyaml ends a mapping only after a value, so no "<<" is pending here */
        rc = apply_merges(p, f);
    int height = f->height + 1;
    if (!rc && f->anchor) {
        f->anchor->nodes = p->nodes - f->nodes_at_start;
        f->anchor->height = height;
        f->anchor->done = 1;
    }
    frame_free(f);
    p->depth--;
    if (!rc && p->depth && height > p->stack[p->depth - 1].height)
        p->stack[p->depth - 1].height = height;
    return rc;
}

static vmop_rc on_event(struct yparser *p, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++p->documents > 1)
            return yfail(p, VMOP_E_UNSUPPORTED, ev->start_mark,
                         "more than one document (only the first would be read)");
        return VMOP_OK;
    case YAML_SCALAR_EVENT:
        return on_scalar(p, ev);
    case YAML_ALIAS_EVENT:
        return on_alias(p, ev);
    case YAML_SEQUENCE_START_EVENT:
        return on_collection_start(p, ev, 0);
    case YAML_MAPPING_START_EVENT:
        return on_collection_start(p, ev, 1);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return on_collection_end(p);
    default: /* stream start and end, document end */
        return VMOP_OK;
    }
}

/* Scalars may be tokens and keys: wiped before libyaml frees them. */
static void event_free(yaml_event_t *ev)
{
    if (ev->type == YAML_SCALAR_EVENT && ev->data.scalar.value)
        explicit_bzero(ev->data.scalar.value, ev->data.scalar.length);
    yaml_event_delete(ev);
}

/* libyaml's copies of the input (raw and decoded buffers), wiped before it frees them. */
static void parser_free(yaml_parser_t *ps)
{
    if (ps->raw_buffer.start)
        explicit_bzero(ps->raw_buffer.start, (size_t)(ps->raw_buffer.end - ps->raw_buffer.start));
    if (ps->buffer.start)
        explicit_bzero(ps->buffer.start, (size_t)(ps->buffer.end - ps->buffer.start));
    yaml_parser_delete(ps);
}

/* The JSON form (kubectl writes it with -o json): the whole input one cJSON value, else NULL. */
static cJSON *parse_json(const char *text, size_t len)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root)
        return NULL;
    for (size_t k = (size_t)(end - text); k < len; k++) {
        if (text[k] != ' ' && text[k] != '\n' && text[k] != '\r' && text[k] != '\t') {
            cJSON_Delete(root);
            return NULL;
        }
    }
    return root;
}

static vmop_rc parse_yaml(struct yparser *p, const char *text, size_t len)
{
    yaml_parser_t ps;
    vmop_rc rc = VMOP_OK;
    if (!yaml_parser_initialize(&ps))
        return vmop_fail(p->err, VMOP_E_NOMEM, "out of memory parsing kubeconfig YAML");
    yaml_parser_set_input_string(&ps, (const unsigned char *)text, len);
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&ps, &ev)) {
            rc = lib_fail(p, &ps, text, len);
            break;
        }
        rc = on_event(p, &ev);
        yaml_event_type_t type = ev.type;
        event_free(&ev);
        if (rc || type == YAML_STREAM_END_EVENT)
            break;
    }
    parser_free(&ps);
    if (!rc && !p->root) { /* no document: an empty file or only comments */
        p->root = cJSON_CreateNull();
        if (!p->root)
            rc = vmop_fail(p->err, VMOP_E_NOMEM, "out of memory parsing kubeconfig YAML");
    }
    return rc;
}

vmop_rc kube_yaml_parse(const char *text, size_t len, cJSON **ret, struct vmop_err *err)
{
    struct vmop_err local = {0};
    struct yparser p = {.err = err ? err : &local};
    vmop_rc rc;

    if (len > KUBE_YAML_MAX_INPUT)
        return vmop_fail(err, VMOP_E_TOOBIG, "kubeconfig larger than %zu bytes",
                         KUBE_YAML_MAX_INPUT);
    size_t k = 0;
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3))
        k = 3; /* UTF-8 byte order mark */
    while (k < len && (text[k] == ' ' || text[k] == '\n' || text[k] == '\r' || text[k] == '\t'))
        k++;
    if (k < len && text[k] == '{') {
        cJSON *root = parse_json(text + k, len - k);
        if (root) {
            *ret = root;
            return VMOP_OK;
        }
        /* not JSON: a YAML flow mapping, or an error libyaml describes */
    }
    if (memchr(text, '\0', len))
        return vmop_fail(err, VMOP_E_INVALID, "kubeconfig contains a NUL byte");

    vmop_map_init(&p.anchor_names, NULL);
    p.spare = cJSON_CreateArray();
    if (!p.spare)
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory parsing kubeconfig YAML");
    rc = parse_yaml(&p, text, len);
    while (p.depth)
        frame_free(&p.stack[--p.depth]);
    while (p.anchors) {
        struct anchor *next = p.anchors->next;
        free(p.anchors);
        p.anchors = next;
    }
    vmop_map_clear(&p.anchor_names);
    cJSON_Delete(p.spare);
    if (rc) {
        cJSON_Delete(p.root);
        return rc;
    }
    *ret = p.root;
    return VMOP_OK;
}
