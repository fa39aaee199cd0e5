/* kube_yaml.c: the YAML subset parser for kubeconfig files (see kube_yaml.h for the subset).
 *
 * Works on lines: the input is copied, split into lines, comments are cut and blank lines dropped,
 * each line keeps its indentation. Block structure is then recursive descent over those lines;
 * scalars and single-line flow collections are parsed from the line text. Every size is bounded
 * (input, depth, node count). Messages carry line numbers only, never content.
 */
#include "kube_yaml.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube_util.h"
#include "vbuf.h"

struct yline {
    int indent;
    int lineno;
    char *s; /* points into the parser's copy; NUL-terminated, comment cut, right-trimmed */
};

struct yparser {
    struct yline *lines;
    size_t n, i;
    int depth;
    size_t nodes;
    struct vmop_err *err;
};

static cJSON *parse_block(struct yparser *p);

static vmop_rc yfail(struct yparser *p, vmop_rc rc, int lineno, const char *what)
{
    return vmop_fail(p->err, rc, "kubeconfig YAML line %d: %s", lineno, what);
}

/* An empty node (YAML null); NULL after recording NOMEM. */
static cJSON *null_node(struct yparser *p, int lineno)
{
    cJSON *v = cJSON_CreateNull();
    if (!v)
        yfail(p, VMOP_E_NOMEM, lineno, "out of memory");
    return v;
}

/* obj[key] = v, taking key and v (both freed here on failure; key always). v NULL (its failure
 * already recorded) or a key obj already holds (VMOP_E_INVALID `dup_msg`) is -1, else 0. */
static int add_member(struct yparser *p, int lineno, cJSON *obj, char *key, cJSON *v,
                      const char *dup_msg)
{
    if (!v) {
        free(key);
        return -1;
    }
    if (cJSON_GetObjectItemCaseSensitive(obj, key)) {
        free(key);
        cJSON_Delete(v);
        yfail(p, VMOP_E_INVALID, lineno, dup_msg);
        return -1;
    }
    cJSON_AddItemToObject(obj, key, v);
    free(key);
    return 0;
}

/* A finished block node at indent ind: a next line indented deeper is an error (node freed). */
static cJSON *block_end(struct yparser *p, int ind, cJSON *node)
{
    if (p->i < p->n && p->lines[p->i].indent > ind) {
        yfail(p, VMOP_E_INVALID, p->lines[p->i].lineno, "unexpected indentation");
        cJSON_Delete(node);
        return NULL;
    }
    return node;
}

static int count_node(struct yparser *p, int lineno)
{
    if (++p->nodes > KUBE_YAML_MAX_NODES) {
        yfail(p, VMOP_E_TOOBIG, lineno, "too many nodes");
        return -1;
    }
    return 0;
}

/* Cuts a comment ('#' at the start or after blank, outside quotes) and trailing blanks. */
static void cut_comment(char *s)
{
    char quote = 0;
    char prev = ' ';
    for (char *c = s; *c; c++) {
        if (quote) {
            if (*c == quote) {
                if (quote == '\'' && c[1] == '\'')
                    c++;
                else
                    quote = 0;
            } else if (quote == '"' && *c == '\\' && c[1]) {
                c++;
            }
        } else if ((*c == '"' || *c == '\'') && strchr(" \t:[{,-", prev)) {
            quote = *c;
        } else if (*c == '#' && (prev == ' ' || prev == '\t')) {
            *c = '\0';
            break;
        }
        prev = *c;
    }
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

static int is_seq_item(const char *s)
{
    return s[0] == '-' && (s[1] == '\0' || s[1] == ' ');
}

/* Parses a quoted scalar starting at *sp (a quote); advances *sp past the closing quote.
 * Returns a malloc'd string or NULL (error recorded). */
static char *parse_quoted(struct yparser *p, int lineno, const char **sp)
{
    const char *s = *sp;
    char q = *s++;
    struct vbuf b;
    vbuf_init(&b, KUBE_YAML_MAX_INPUT);
    for (;;) {
        if (!*s) {
            yfail(p, VMOP_E_INVALID, lineno, "unterminated quoted scalar");
            goto fail;
        }
        if (*s == q) {
            if (q == '\'' && s[1] == '\'') {
                vbuf_add(&b, "'", 1);
                s += 2;
                continue;
            }
            s++;
            break;
        }
        if (q == '"' && *s == '\\') {
            s++;
            char c = *s++;
            char out = 0;
            switch (c) {
            case 'n':
                out = '\n';
                break;
            case 't':
                out = '\t';
                break;
            case 'r':
                out = '\r';
                break;
            case '0':
                out = '\0';
                break;
            case 'b':
                out = '\b';
                break;
            case 'f':
                out = '\f';
                break;
            case 'e':
                out = 27;
                break;
            case '\\':
                out = '\\';
                break;
            case '"':
                out = '"';
                break;
            case '/':
                out = '/';
                break;
            case ' ':
                out = ' ';
                break;
            case 'x':
            case 'u':
            case 'U': {
                int nd = c == 'x' ? 2 : c == 'u' ? 4 : 8;
                unsigned long cp = 0;
                for (int k = 0; k < nd; k++) {
                    char h = s[k];
                    int v = h >= '0' && h <= '9'   ? h - '0'
                            : h >= 'a' && h <= 'f' ? h - 'a' + 10
                            : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                   : -1;
                    if (v < 0) {
                        yfail(p, VMOP_E_INVALID, lineno, "bad escape in double-quoted scalar");
                        goto fail;
                    }
                    cp = cp * 16 + (unsigned long)v;
                }
                s += nd;
                unsigned char u[4];
                size_t un;
                if (cp < 0x80) {
                    u[0] = (unsigned char)cp;
                    un = 1;
                } else if (cp < 0x800) {
                    u[0] = (unsigned char)(0xC0 | (cp >> 6));
                    u[1] = (unsigned char)(0x80 | (cp & 0x3F));
                    un = 2;
                } else if (cp < 0x10000) {
                    u[0] = (unsigned char)(0xE0 | (cp >> 12));
                    u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
                    u[2] = (unsigned char)(0x80 | (cp & 0x3F));
                    un = 3;
                } else if (cp < 0x110000) {
                    u[0] = (unsigned char)(0xF0 | (cp >> 18));
                    u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
                    u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
                    u[3] = (unsigned char)(0x80 | (cp & 0x3F));
                    un = 4;
                } else {
                    yfail(p, VMOP_E_INVALID, lineno, "bad code point in double-quoted scalar");
                    goto fail;
                }
                vbuf_add(&b, u, un);
                continue;
            }
            default:
                yfail(p, VMOP_E_INVALID, lineno, "bad escape in double-quoted scalar");
                goto fail;
            }
            if (out == '\0') {
                yfail(p, VMOP_E_UNSUPPORTED, lineno, "NUL in a quoted scalar");
                goto fail;
            }
            vbuf_add(&b, &out, 1);
            continue;
        }
        vbuf_add(&b, s, 1);
        s++;
    }
    if (vbuf_error(&b)) {
        yfail(p, vbuf_error(&b), lineno, "quoted scalar too large");
        goto fail;
    }
    *sp = s;
    char *r = vbuf_take(&b);
    if (!r)
        r = strdup("");
    if (!r)
        yfail(p, VMOP_E_NOMEM, lineno, "out of memory");
    return r;
fail:
    vbuf_free_secure(&b);
    return NULL;
}

static int is_number(const char *s)
{
    const char *c = s;
    if (*c == '+' || *c == '-')
        c++;
    if (!*c)
        return 0;
    int digits = 0, dot = 0, exp = 0;
    for (; *c; c++) {
        if (*c >= '0' && *c <= '9') {
            digits++;
        } else if (*c == '.' && !dot && !exp) {
            dot = 1;
        } else if ((*c == 'e' || *c == 'E') && digits && !exp) {
            exp = 1;
            if (c[1] == '+' || c[1] == '-')
                c++;
            if (!c[1])
                return 0;
        } else {
            return 0;
        }
    }
    return digits > 0;
}

/* A resolved plain scalar. s is NUL-terminated and trimmed. */
static cJSON *plain_scalar(struct yparser *p, int lineno, const char *s)
{
    if (count_node(p, lineno))
        return NULL;
    cJSON *v;
    if (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"))
        v = cJSON_CreateNull();
    else if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
        v = cJSON_CreateTrue();
    else if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
        v = cJSON_CreateFalse();
    else if (is_number(s))
        v = cJSON_CreateNumber(strtod(s, NULL));
    else
        v = cJSON_CreateString(s);
    if (!v)
        yfail(p, VMOP_E_NOMEM, lineno, "out of memory");
    return v;
}

static cJSON *flow_value(struct yparser *p, int lineno, const char **sp, int in_flow);

static void skip_ws(const char **sp)
{
    while (**sp == ' ' || **sp == '\t')
        (*sp)++;
}

/* A plain scalar inside a flow collection ends at , ] } or ": ". Returns malloc'd trimmed text. */
static char *flow_plain(struct yparser *p, int lineno, const char **sp, int is_key)
{
    const char *s = *sp, *start = s;
    while (*s && *s != ',' && *s != ']' && *s != '}') {
        if (*s == ':' && (s[1] == ' ' || s[1] == ',' || s[1] == '}' || s[1] == ']' || !s[1]) &&
            is_key)
            break;
        if (*s == ':' && s[1] == ' ' && !is_key)
            break;
        s++;
    }
    const char *end = s;
    while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    char *r = strndup(start, (size_t)(end - start));
    if (!r)
        yfail(p, VMOP_E_NOMEM, lineno, "out of memory");
    *sp = s;
    return r;
}

static char *flow_key(struct yparser *p, int lineno, const char **sp)
{
    if (**sp == '"' || **sp == '\'')
        return parse_quoted(p, lineno, sp);
    return flow_plain(p, lineno, sp, 1);
}

static cJSON *flow_collection(struct yparser *p, int lineno, const char **sp)
{
    char open = **sp, close = open == '{' ? '}' : ']';
    if (++p->depth > KUBE_YAML_MAX_DEPTH) {
        yfail(p, VMOP_E_TOOBIG, lineno, "nesting too deep");
        return NULL;
    }
    if (count_node(p, lineno))
        return NULL;
    cJSON *c = open == '{' ? cJSON_CreateObject() : cJSON_CreateArray();
    if (!c) {
        yfail(p, VMOP_E_NOMEM, lineno, "out of memory");
        return NULL;
    }
    (*sp)++;
    for (;;) {
        skip_ws(sp);
        if (**sp == close) {
            (*sp)++;
            break;
        }
        if (!**sp) {
            yfail(p, VMOP_E_UNSUPPORTED, lineno, "flow collection not closed on its line");
            goto fail;
        }
        if (open == '{') {
            char *key = flow_key(p, lineno, sp);
            if (!key)
                goto fail;
            skip_ws(sp);
            cJSON *v;
            if (**sp == ':') {
                (*sp)++;
                v = flow_value(p, lineno, sp, 1);
            } else {
                v = null_node(p, lineno);
            }
            if (add_member(p, lineno, c, key, v, "duplicate key in flow mapping"))
                goto fail;
        } else {
            cJSON *v = flow_value(p, lineno, sp, 1);
            if (!v)
                goto fail;
            cJSON_AddItemToArray(c, v);
        }
        skip_ws(sp);
        if (**sp == ',') {
            (*sp)++;
        } else if (!**sp) {
            yfail(p, VMOP_E_UNSUPPORTED, lineno, "flow collection not closed on its line");
            goto fail;
        } else if (**sp != close) {
            yfail(p, VMOP_E_INVALID, lineno, "expected ',' or the end of a flow collection");
            goto fail;
        }
    }
    p->depth--;
    return c;
fail:
    cJSON_Delete(c);
    return NULL;
}

static cJSON *flow_value(struct yparser *p, int lineno, const char **sp, int in_flow)
{
    skip_ws(sp);
    char c = **sp;
    if (c == '{' || c == '[')
        return flow_collection(p, lineno, sp);
    if (c == '"' || c == '\'') {
        char *s = parse_quoted(p, lineno, sp);
        if (!s)
            return NULL;
        cJSON *v = count_node(p, lineno) ? NULL : cJSON_CreateString(s);
        if (!v && p->err->rc == VMOP_OK)
            yfail(p, VMOP_E_NOMEM, lineno, "out of memory");
        vmop_free_secret(s);
        return v;
    }
    if (c == '&' || c == '*' || c == '!') {
        yfail(p, VMOP_E_UNSUPPORTED, lineno, "anchors, aliases and tags are not supported");
        return NULL;
    }
    if ((c == '|' || c == '>') && !in_flow) {
        yfail(p, VMOP_E_UNSUPPORTED, lineno, "block scalars are not supported");
        return NULL;
    }
    char *s;
    if (in_flow) {
        s = flow_plain(p, lineno, sp, 0);
    } else {
        s = strdup(*sp);
        *sp += strlen(*sp);
        if (!s)
            yfail(p, VMOP_E_NOMEM, lineno, "out of memory");
    }
    if (!s)
        return NULL;
    cJSON *v = plain_scalar(p, lineno, s);
    vmop_free_secret(s);
    return v;
}

/* A whole-line value (the rest after "key:" or "- "). */
static cJSON *inline_value(struct yparser *p, int lineno, const char *s)
{
    const char *sp = s;
    cJSON *v = flow_value(p, lineno, &sp, 0);
    if (!v)
        return NULL;
    skip_ws(&sp);
    if (*sp) {
        cJSON_Delete(v);
        yfail(p, VMOP_E_INVALID, lineno, "unexpected text after a value");
        return NULL;
    }
    return v;
}

/* Offset of the ':' that ends a mapping key on this line, or -1 when the line is not "key: ...". */
static long key_colon(const char *s)
{
    const char *c = s;
    if (*c == '{' || *c == '[' || is_seq_item(s))
        return -1;
    if (*c == '"' || *c == '\'') {
        char q = *c++;
        for (; *c; c++) {
            if (*c == q) {
                if (q == '\'' && c[1] == '\'') {
                    c++;
                    continue;
                }
                break;
            }
            if (q == '"' && *c == '\\' && c[1])
                c++;
        }
        if (!*c)
            return -1;
        c++;
        while (*c == ' ')
            c++;
        return *c == ':' && (c[1] == ' ' || !c[1]) ? c - s : -1;
    }
    for (; *c; c++)
        if (*c == ':' && (c[1] == ' ' || c[1] == '\0'))
            return c - s;
    return -1;
}

static char *parse_key(struct yparser *p, int lineno, const char *s, long colon)
{
    if (*s == '"' || *s == '\'') {
        const char *sp = s;
        return parse_quoted(p, lineno, &sp);
    }
    long n = colon;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    char *k = strndup(s, (size_t)n);
    if (!k)
        yfail(p, VMOP_E_NOMEM, lineno, "out of memory");
    return k;
}

static cJSON *parse_seq(struct yparser *p, int ind);

static cJSON *parse_map(struct yparser *p, int ind)
{
    cJSON *obj = NULL;
    if (count_node(p, p->lines[p->i].lineno))
        return NULL;
    obj = cJSON_CreateObject();
    if (!obj) {
        yfail(p, VMOP_E_NOMEM, p->lines[p->i].lineno, "out of memory");
        return NULL;
    }
    while (p->i < p->n && p->lines[p->i].indent == ind) {
        struct yline *l = &p->lines[p->i];
        long colon = key_colon(l->s);
        if (colon < 0) {
            yfail(p, VMOP_E_INVALID, l->lineno, "expected 'key: value'");
            goto fail;
        }
        char *key = parse_key(p, l->lineno, l->s, colon);
        if (!key)
            goto fail;
        const char *rest = l->s + colon + 1;
        while (*rest == ' ')
            rest++;
        int lineno = l->lineno;
        p->i++;
        cJSON *v = NULL;
        if (*rest) {
            v = inline_value(p, lineno, rest);
            /* plain multi-line scalar: more-indented continuation lines join with a space */
            if (v && p->i < p->n && p->lines[p->i].indent > ind) {
                if (!cJSON_IsString(v) || *rest == '"' || *rest == '\'') {
                    yfail(p, VMOP_E_INVALID, p->lines[p->i].lineno, "unexpected indentation");
                    cJSON_Delete(v);
                    v = NULL;
                } else {
                    struct vbuf b;
                    vbuf_init(&b, KUBE_YAML_MAX_INPUT);
                    vbuf_adds(&b, v->valuestring);
                    while (p->i < p->n && p->lines[p->i].indent > ind) {
                        vbuf_adds(&b, " ");
                        vbuf_adds(&b, p->lines[p->i].s);
                        p->i++;
                    }
                    cJSON_Delete(v);
                    v = vbuf_error(&b) ? NULL : cJSON_CreateString(vbuf_str(&b));
                    vbuf_free_secure(&b);
                    if (!v)
                        yfail(p, VMOP_E_NOMEM, lineno, "out of memory");
                }
            }
        } else if (p->i < p->n && p->lines[p->i].indent > ind) {
            v = parse_block(p);
        } else if (p->i < p->n && p->lines[p->i].indent == ind && is_seq_item(p->lines[p->i].s)) {
            v = parse_seq(p, ind);
        } else {
            v = null_node(p, lineno);
        }
        if (add_member(p, lineno, obj, key, v, "duplicate mapping key"))
            goto fail;
    }
    return block_end(p, ind, obj);
fail:
    cJSON_Delete(obj);
    return NULL;
}

static cJSON *parse_seq(struct yparser *p, int ind)
{
    if (count_node(p, p->lines[p->i].lineno))
        return NULL;
    cJSON *arr = cJSON_CreateArray();
    if (!arr) {
        yfail(p, VMOP_E_NOMEM, p->lines[p->i].lineno, "out of memory");
        return NULL;
    }
    while (p->i < p->n && p->lines[p->i].indent == ind && is_seq_item(p->lines[p->i].s)) {
        struct yline *l = &p->lines[p->i];
        char *rest = l->s + 1;
        while (*rest == ' ')
            rest++;
        cJSON *v;
        if (!*rest) {
            int lineno = l->lineno;
            p->i++;
            if (p->i < p->n && p->lines[p->i].indent > ind) {
                v = parse_block(p);
            } else {
                v = null_node(p, lineno);
            }
        } else if (is_seq_item(rest) || key_colon(rest) >= 0) {
            /* compact nested node: re-read this line as starting at the item's column */
            l->indent = ind + (int)(rest - l->s);
            l->s = rest;
            v = parse_block(p);
        } else {
            v = inline_value(p, l->lineno, rest);
            p->i++;
        }
        if (!v)
            goto fail;
        cJSON_AddItemToArray(arr, v);
    }
    return block_end(p, ind, arr);
fail:
    cJSON_Delete(arr);
    return NULL;
}

static cJSON *parse_block(struct yparser *p)
{
    struct yline *l = &p->lines[p->i];
    if (++p->depth > KUBE_YAML_MAX_DEPTH) {
        yfail(p, VMOP_E_TOOBIG, l->lineno, "nesting too deep");
        return NULL;
    }
    cJSON *v;
    if (is_seq_item(l->s)) {
        v = parse_seq(p, l->indent);
    } else if (key_colon(l->s) >= 0) {
        v = parse_map(p, l->indent);
    } else {
        v = inline_value(p, l->lineno, l->s);
        p->i++;
    }
    p->depth--;
    return v;
}

vmop_rc kube_yaml_parse(const char *text, size_t len, cJSON **ret, struct vmop_err *err)
{
    struct vmop_err local = {0};
    struct yparser p = {.err = err ? err : &local};
    char *copy = NULL;
    cJSON *root = NULL;
    vmop_rc rc = VMOP_OK;

    if (len > KUBE_YAML_MAX_INPUT)
        return vmop_fail(err, VMOP_E_TOOBIG, "kubeconfig larger than %zu bytes",
                         KUBE_YAML_MAX_INPUT);
    size_t k = 0;
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3))
        k = 3; /* UTF-8 byte order mark */
    while (k < len && (text[k] == ' ' || text[k] == '\n' || text[k] == '\r' || text[k] == '\t'))
        k++;
    if (k < len && text[k] == '{') {
        root = cJSON_ParseWithLength(text + k, len - k);
        if (!root)
            return vmop_fail(err, VMOP_E_INVALID, "kubeconfig is not valid JSON");
        *ret = root;
        return VMOP_OK;
    }
    if (memchr(text, '\0', len))
        return vmop_fail(err, VMOP_E_INVALID, "kubeconfig contains a NUL byte");

    copy = malloc(len + 1);
    size_t max_lines = 1;
    for (size_t j = 0; j < len; j++)
        max_lines += text[j] == '\n';
    p.lines = calloc(max_lines, sizeof(*p.lines));
    if (!copy || !p.lines) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory parsing kubeconfig");
        goto out;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    int lineno = 0, seen_doc_start = 0;
    for (char *s = copy + (len >= 3 && !memcmp(copy, "\xEF\xBB\xBF", 3) ? 3 : 0); s;) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        lineno++;
        size_t sl = strlen(s);
        if (sl && s[sl - 1] == '\r')
            s[sl - 1] = '\0';
        int ind = 0;
        while (s[ind] == ' ')
            ind++;
        if (s[ind] == '\t') {
            rc = yfail(&p, VMOP_E_UNSUPPORTED, lineno, "tab in indentation");
            goto out;
        }
        cut_comment(s + ind);
        char *content = s + ind;
        if (ind == 0 &&
            (!strncmp(content, "---", 3) && (content[3] == '\0' || content[3] == ' '))) {
            if (seen_doc_start || p.n) {
                rc = yfail(&p, VMOP_E_UNSUPPORTED, lineno, "multiple documents");
                goto out;
            }
            seen_doc_start = 1;
            content += 3;
            while (*content == ' ')
                content++;
            if (*content) {
                rc = yfail(&p, VMOP_E_UNSUPPORTED, lineno, "content after '---'");
                goto out;
            }
        } else if (ind == 0 && !strcmp(content, "...")) {
            break;
        } else if (ind == 0 && content[0] == '%') {
            /* directive (%YAML 1.2): ignored */
        } else if (*content) {
            p.lines[p.n].indent = ind;
            p.lines[p.n].lineno = lineno;
            p.lines[p.n].s = content;
            p.n++;
        }
        s = nl ? nl + 1 : NULL;
    }
    if (p.n == 0) {
        root = cJSON_CreateNull();
        if (!root)
            rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory parsing kubeconfig");
        goto out;
    }
    root = parse_block(&p);
    if (!root) {
        rc = p.err->rc ? p.err->rc : VMOP_E_INVALID;
        goto out;
    }
    if (p.i < p.n) {
        rc =
            yfail(&p, VMOP_E_INVALID, p.lines[p.i].lineno, "unexpected content after the document");
        goto out;
    }
out:
    if (rc) {
        cJSON_Delete(root);
        root = NULL;
    }
    if (copy)
        vmop_free_secret_n(copy, len + 1);
    free(p.lines);
    if (!rc)
        *ret = root;
    return rc;
}
