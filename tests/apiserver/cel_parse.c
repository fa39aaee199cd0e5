/* cel_parse.c: CEL source -> AST for the supported subset (cel.h), with compile-time checks:
 * syntax, declared identifiers (self, oldSelf, comprehension variables), known functions and
 * macros, and field references against the schema (cel_check_fields). Also the bump arena. */
#include "cel_int.h"
#include "schema_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_MIN 4096

struct cel_chunk {
    struct cel_chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

void *cel_alloc(struct cel_arena *a, size_t n)
{
    struct cel_chunk *c = a->head;
    n = (n + 15) & ~(size_t)15;
    if (n == 0)
        n = 16;
    if (a->cap && a->used + n > a->cap)
        return NULL;
    if (!c || c->size - c->used < n) {
        size_t sz = n > CHUNK_MIN ? n : CHUNK_MIN;
        if (a->head && sz < a->head->size * 2 && a->head->size * 2 <= (1u << 20))
            sz = a->head->size * 2;
        c = malloc(sizeof(*c) + sz);
        if (!c)
            return NULL;
        c->size = sz;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    a->used += n;
    memset(p, 0, n);
    return p;
}

void cel_arena_free(struct cel_arena *a)
{
    struct cel_chunk *c = a->head, *next;
    for (; c; c = next) {
        next = c->next;
        free(c);
    }
    a->head = NULL;
    a->used = 0;
}

/* ---- lexer ---- */

enum tk {
    T_EOF,
    T_INT,
    T_UINT,
    T_DOUBLE,
    T_STRING,
    T_IDENT,
    T_PUNCT, /* text in t.p, length t.n: one of ( ) [ ] { } . , : ? ! - + * / % < > <= >= == != &&
                || */
};

struct tok {
    enum tk k;
    int pos;
    const char *p;
    size_t n;
    long long i;
    unsigned long long u;
    double d;
    char *s; /* decoded string literal (arena) */
    size_t slen;
};

struct parser {
    const char *src;
    size_t len;
    size_t off;
    struct tok t;
    struct cel_arena *arena;
    struct vmop_err *err;
    int failed;
    int nodes;
    int depth;
    int uses_old;
};

static void fail_at(struct parser *ps, int pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail_at(struct parser *ps, int pos, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    int line = 1, col = 1;
    if (ps->failed)
        return;
    ps->failed = 1;
    for (int i = 0; i < pos && (size_t)i < ps->len; i++) {
        if (ps->src[i] == '\n')
            line++, col = 1;
        else
            col++;
    }
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    vmop_fail(ps->err, VMOP_E_INVALID, "ERROR: <input>:%d:%d: %s", line, col, msg);
}

static int utf8_put(char *out, unsigned long cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void lex_string(struct parser *ps, int raw)
{
    const char *s = ps->src;
    size_t i = ps->off;
    char q = s[i];
    int triple = i + 2 < ps->len && s[i + 1] == q && s[i + 2] == q;
    size_t start = i, cap;
    char *out;
    size_t n = 0;

    i += triple ? 3 : 1;
    cap = ps->len - i + 1;
    out = cel_alloc(ps->arena, cap + 1);
    if (!out) {
        fail_at(ps, (int)start, "expression too large");
        return;
    }
    for (;;) {
        if (i >= ps->len || (!triple && (s[i] == '\n' || s[i] == '\r'))) {
            fail_at(ps, (int)start, "Syntax error: token recognition error at: '%.*s'",
                    (int)(i - start > 20 ? 20 : i - start), s + start);
            return;
        }
        if (s[i] == q && (!triple || (i + 2 < ps->len && s[i + 1] == q && s[i + 2] == q))) {
            i += triple ? 3 : 1;
            break;
        }
        if (s[i] == '\\' && !raw) {
            char c = i + 1 < ps->len ? s[i + 1] : '\0';
            i += 2;
            switch (c) {
            case 'n':
                out[n++] = '\n';
                break;
            case 'r':
                out[n++] = '\r';
                break;
            case 't':
                out[n++] = '\t';
                break;
            case 'a':
                out[n++] = '\a';
                break;
            case 'b':
                out[n++] = '\b';
                break;
            case 'f':
                out[n++] = '\f';
                break;
            case 'v':
                out[n++] = '\v';
                break;
            case '\\':
            case '\'':
            case '"':
            case '`':
            case '?':
                out[n++] = c;
                break;
            case 'x':
            case 'X':
            case 'u':
            case 'U': {
                int digits = (c == 'x' || c == 'X') ? 2 : c == 'u' ? 4 : 8;
                unsigned long cp = 0;
                for (int k = 0; k < digits; k++, i++) {
                    int h = i < ps->len ? hexval(s[i]) : -1;
                    if (h < 0) {
                        fail_at(ps, (int)i, "Syntax error: invalid escape sequence");
                        return;
                    }
                    cp = cp * 16 + (unsigned long)h;
                }
                if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
                    fail_at(ps, (int)i, "Syntax error: invalid unicode code point");
                    return;
                }
                n += (size_t)utf8_put(out + n, cp);
                break;
            }
            default:
                if (c >= '0' && c <= '3' && i + 1 < ps->len && s[i] >= '0' && s[i] <= '7' &&
                    s[i + 1] >= '0' && s[i + 1] <= '7') {
                    out[n++] = (char)((c - '0') * 64 + (s[i] - '0') * 8 + (s[i + 1] - '0'));
                    i += 2;
                    break;
                }
                fail_at(ps, (int)i - 2, "Syntax error: invalid escape sequence '\\%c'", c);
                return;
            }
            continue;
        }
        out[n++] = s[i++];
    }
    out[n] = '\0';
    ps->t.k = T_STRING;
    ps->t.s = out;
    ps->t.slen = n;
    ps->off = i;
}

static void next(struct parser *ps)
{
    const char *s = ps->src;
    size_t i = ps->off;
    static const char *const two[] = {"<=", ">=", "==", "!=", "&&", "||", NULL};

    if (ps->failed) {
        ps->t.k = T_EOF;
        return;
    }
    for (;;) {
        while (i < ps->len && isspace((unsigned char)s[i]))
            i++;
        if (i + 1 < ps->len && s[i] == '/' && s[i + 1] == '/') {
            while (i < ps->len && s[i] != '\n')
                i++;
            continue;
        }
        break;
    }
    memset(&ps->t, 0, sizeof(ps->t));
    ps->t.pos = (int)i;
    ps->off = i;
    if (i >= ps->len) {
        ps->t.k = T_EOF;
        return;
    }
    char c = s[i];
    if ((c == 'r' || c == 'R') && i + 1 < ps->len && (s[i + 1] == '"' || s[i + 1] == '\'')) {
        ps->off = i + 1;
        lex_string(ps, 1);
        ps->t.pos = (int)i;
        return;
    }
    if ((c == 'b' || c == 'B') && i + 1 < ps->len && (s[i + 1] == '"' || s[i + 1] == '\'')) {
        fail_at(ps, (int)i, "bytes literals are not supported by this server");
        return;
    }
    if (c == '"' || c == '\'') {
        lex_string(ps, 0);
        return;
    }
    if (isalpha((unsigned char)c) || c == '_') {
        size_t j = i;
        while (j < ps->len && (isalnum((unsigned char)s[j]) || s[j] == '_'))
            j++;
        ps->t.k = T_IDENT;
        ps->t.p = s + i;
        ps->t.n = j - i;
        ps->off = j;
        return;
    }
    if (isdigit((unsigned char)c) ||
        (c == '.' && i + 1 < ps->len && isdigit((unsigned char)s[i + 1]))) {
        char buf[128];
        size_t j = i;
        int is_double = 0, hex = 0;
        if (c == '0' && i + 1 < ps->len && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
            hex = 1;
            j += 2;
            while (j < ps->len && isxdigit((unsigned char)s[j]))
                j++;
        } else {
            while (j < ps->len && isdigit((unsigned char)s[j]))
                j++;
            if (j < ps->len && s[j] == '.' && j + 1 < ps->len && isdigit((unsigned char)s[j + 1])) {
                is_double = 1;
                j++;
                while (j < ps->len && isdigit((unsigned char)s[j]))
                    j++;
            }
            if (j < ps->len && (s[j] == 'e' || s[j] == 'E')) {
                size_t k = j + 1;
                if (k < ps->len && (s[k] == '+' || s[k] == '-'))
                    k++;
                if (k < ps->len && isdigit((unsigned char)s[k])) {
                    is_double = 1;
                    j = k;
                    while (j < ps->len && isdigit((unsigned char)s[j]))
                        j++;
                }
            }
        }
        if (j - i >= sizeof(buf)) {
            fail_at(ps, (int)i, "Syntax error: number literal too long");
            return;
        }
        memcpy(buf, s + i, j - i);
        buf[j - i] = '\0';
        errno = 0;
        if (is_double) {
            ps->t.k = T_DOUBLE;
            ps->t.d = strtod(buf, NULL);
        } else if (j < ps->len && (s[j] == 'u' || s[j] == 'U')) {
            ps->t.k = T_UINT;
            ps->t.u = strtoull(buf, NULL, hex ? 16 : 10);
            j++;
        } else {
            ps->t.k = T_INT;
            ps->t.i = strtoll(buf, NULL, hex ? 16 : 10);
        }
        if (errno == ERANGE) {
            fail_at(ps, (int)i, "invalid int literal");
            return;
        }
        ps->off = j;
        return;
    }
    for (int k = 0; two[k]; k++) {
        if (i + 1 < ps->len && s[i] == two[k][0] && s[i + 1] == two[k][1]) {
            ps->t.k = T_PUNCT;
            ps->t.p = s + i;
            ps->t.n = 2;
            ps->off = i + 2;
            return;
        }
    }
    if (strchr("()[]{}.,:?!-+*/%<>", c)) {
        ps->t.k = T_PUNCT;
        ps->t.p = s + i;
        ps->t.n = 1;
        ps->off = i + 1;
        return;
    }
    fail_at(ps, (int)i, "Syntax error: token recognition error at: '%c'", c);
}

static int is_p(const struct parser *ps, const char *p)
{
    return ps->t.k == T_PUNCT && ps->t.n == strlen(p) && memcmp(ps->t.p, p, ps->t.n) == 0;
}

static int is_kw(const struct parser *ps, const char *kw)
{
    return ps->t.k == T_IDENT && ps->t.n == strlen(kw) && memcmp(ps->t.p, kw, ps->t.n) == 0;
}

static void tok_text(const struct parser *ps, char *buf, size_t n)
{
    if (ps->t.k == T_EOF)
        snprintf(buf, n, "<EOF>");
    else
        snprintf(buf, n, "%.*s",
                 (int)(ps->off - (size_t)ps->t.pos > 40 ? 40 : ps->off - (size_t)ps->t.pos),
                 ps->src + ps->t.pos);
}

static void expect(struct parser *ps, const char *p)
{
    char got[64];
    if (is_p(ps, p)) {
        next(ps);
        return;
    }
    tok_text(ps, got, sizeof(got));
    fail_at(ps, ps->t.pos, "Syntax error: mismatched input '%s' expecting '%s'", got, p);
}

static struct cel_node *mk(struct parser *ps, enum cel_nk k, int pos)
{
    struct cel_node *n;
    if (ps->failed)
        return NULL;
    if (++ps->nodes > CEL_MAX_NODES) {
        fail_at(ps, pos, "expression has more than %d nodes", CEL_MAX_NODES);
        return NULL;
    }
    n = cel_alloc(ps->arena, sizeof(*n));
    if (!n) {
        fail_at(ps, pos, "expression too large");
        return NULL;
    }
    n->k = k;
    n->pos = pos;
    return n;
}

static char *dup_tok(struct parser *ps)
{
    char *s = cel_alloc(ps->arena, ps->t.n + 1);
    if (!s) {
        fail_at(ps, ps->t.pos, "expression too large");
        return NULL;
    }
    memcpy(s, ps->t.p, ps->t.n);
    return s;
}

static struct cel_node *expr(struct parser *ps);

/* ExprList up to the closing token; returns the count, nodes in *ret (arena). */
static int expr_list(struct parser *ps, const char *close, struct cel_node ***ret, int pairs)
{
    struct cel_node *tmp[256];
    int n = 0;
    *ret = NULL;
    while (!ps->failed && !is_p(ps, close)) {
        if (n >= 254) {
            fail_at(ps, ps->t.pos, "too many arguments or elements");
            return 0;
        }
        tmp[n++] = expr(ps);
        if (pairs) {
            expect(ps, ":");
            tmp[n++] = expr(ps);
        }
        if (!is_p(ps, ","))
            break;
        next(ps);
    }
    expect(ps, close);
    if (ps->failed)
        return 0;
    if (n) {
        *ret = cel_alloc(ps->arena, sizeof(**ret) * (size_t)n);
        if (!*ret) {
            fail_at(ps, ps->t.pos, "expression too large");
            return 0;
        }
        memcpy(*ret, tmp, sizeof(**ret) * (size_t)n);
    }
    return n;
}

static const char *const macros[] = {"all", "exists", "exists_one", "map", "filter", NULL};

static struct cel_node *member_call(struct parser *ps, struct cel_node *target, char *name, int pos)
{
    struct cel_node *n;
    struct cel_node **args;
    int nargs;
    next(ps); /* ( */
    nargs = expr_list(ps, ")", &args, 0);
    if (ps->failed)
        return NULL;
    for (int m = 0; macros[m]; m++) {
        if (strcmp(name, macros[m]) != 0)
            continue;
        int ok = (nargs == 2) || (nargs == 3 && strcmp(name, "map") == 0);
        if (!ok || args[0]->k != CN_IDENT) {
            fail_at(ps, pos, "%s() requires a variable name and an expression", name);
            return NULL;
        }
        n = mk(ps, CN_COMPR, pos);
        if (!n)
            return NULL;
        n->str = name;
        n->var = args[0]->str;
        n->a = target;
        n->args = args + 1;
        n->nargs = nargs - 1;
        return n;
    }
    if (!cel_known_function(name, 1, nargs)) {
        fail_at(ps, pos, "found no matching overload for '%s' applied to %d argument(s)", name,
                nargs);
        return NULL;
    }
    n = mk(ps, CN_CALL, pos);
    if (!n)
        return NULL;
    n->str = name;
    n->a = target;
    n->args = args;
    n->nargs = nargs;
    return n;
}

static struct cel_node *primary(struct parser *ps)
{
    struct cel_node *n = NULL;
    int pos = ps->t.pos;
    char got[64];

    switch (ps->t.k) {
    case T_INT:
        if ((n = mk(ps, CN_INT, pos)))
            n->i = ps->t.i;
        next(ps);
        return n;
    case T_UINT:
        if ((n = mk(ps, CN_UINT, pos)))
            n->u = ps->t.u;
        next(ps);
        return n;
    case T_DOUBLE:
        if ((n = mk(ps, CN_DOUBLE, pos)))
            n->d = ps->t.d;
        next(ps);
        return n;
    case T_STRING:
        if ((n = mk(ps, CN_STRING, pos))) {
            n->str = ps->t.s;
            n->slen = ps->t.slen;
        }
        next(ps);
        return n;
    case T_IDENT: {
        if (is_kw(ps, "true") || is_kw(ps, "false")) {
            if ((n = mk(ps, CN_BOOL, pos)))
                n->i = is_kw(ps, "true");
            next(ps);
            return n;
        }
        if (is_kw(ps, "null")) {
            n = mk(ps, CN_NULL, pos);
            next(ps);
            return n;
        }
        char *name = dup_tok(ps);
        if (!name)
            return NULL;
        next(ps);
        if (is_p(ps, "(")) {
            if (strcmp(name, "has") == 0) {
                next(ps);
                struct cel_node *arg = expr(ps);
                expect(ps, ")");
                if (ps->failed)
                    return NULL;
                if (!arg || arg->k != CN_SELECT) {
                    fail_at(ps, pos, "invalid argument to has() macro");
                    return NULL;
                }
                arg->k = CN_HAS;
                return arg;
            }
            struct cel_node **args;
            int nargs;
            next(ps);
            nargs = expr_list(ps, ")", &args, 0);
            if (ps->failed)
                return NULL;
            if (!cel_known_function(name, 0, nargs)) {
                fail_at(ps, pos, "undeclared reference to '%s' (in container '')", name);
                return NULL;
            }
            if ((n = mk(ps, CN_CALL, pos))) {
                n->str = name;
                n->args = args;
                n->nargs = nargs;
            }
            return n;
        }
        if ((n = mk(ps, CN_IDENT, pos)))
            n->str = name;
        if (strcmp(name, "oldSelf") == 0)
            ps->uses_old = 1;
        return n;
    }
    case T_PUNCT:
        if (is_p(ps, "(")) {
            next(ps);
            n = expr(ps);
            expect(ps, ")");
            return n;
        }
        if (is_p(ps, "[")) {
            next(ps);
            if ((n = mk(ps, CN_LIST, pos)))
                n->nargs = expr_list(ps, "]", &n->args, 0);
            return n;
        }
        if (is_p(ps, "{")) {
            next(ps);
            if ((n = mk(ps, CN_MAP, pos)))
                n->nargs = expr_list(ps, "}", &n->args, 1);
            return n;
        }
        if (is_p(ps, ".")) {
            fail_at(ps, pos, "leading '.' names are not supported by this server");
            return NULL;
        }
        break;
    default:
        break;
    }
    tok_text(ps, got, sizeof(got));
    fail_at(ps, pos, "Syntax error: mismatched input '%s' expecting an expression", got);
    return NULL;
}

static struct cel_node *member(struct parser *ps)
{
    struct cel_node *n = primary(ps);
    while (!ps->failed && n) {
        int pos = ps->t.pos;
        if (is_p(ps, ".")) {
            next(ps);
            if (is_p(ps, "?")) {
                fail_at(ps, pos, "optional field selection '.?' is not supported by this server");
                return NULL;
            }
            if (ps->t.k != T_IDENT) {
                char got[64];
                tok_text(ps, got, sizeof(got));
                fail_at(ps, ps->t.pos, "Syntax error: mismatched input '%s' expecting IDENTIFIER",
                        got);
                return NULL;
            }
            char *name = dup_tok(ps);
            if (!name)
                return NULL;
            next(ps);
            if (is_p(ps, "(")) {
                n = member_call(ps, n, name, pos);
                continue;
            }
            struct cel_node *s = mk(ps, CN_SELECT, pos);
            if (!s)
                return NULL;
            s->a = n;
            s->str = name;
            n = s;
        } else if (is_p(ps, "[")) {
            next(ps);
            struct cel_node *ix = mk(ps, CN_INDEX, pos);
            if (!ix)
                return NULL;
            ix->a = n;
            ix->b = expr(ps);
            expect(ps, "]");
            n = ix;
        } else {
            break;
        }
    }
    return ps->failed ? NULL : n;
}

static struct cel_node *unary(struct parser *ps)
{
    int pos = ps->t.pos;
    if (is_p(ps, "!") || is_p(ps, "-")) {
        int neg = is_p(ps, "-");
        struct cel_node *n;
        next(ps);
        if (++ps->depth > CEL_MAX_NESTING) {
            fail_at(ps, pos, "expression nested too deeply");
            return NULL;
        }
        /* A negative literal is one token in CEL (-9223372036854775808 is valid). */
        if (neg && ps->t.k == T_INT && ps->t.i >= 0) {
            n = mk(ps, CN_INT, pos);
            if (n)
                n->i = -ps->t.i;
            next(ps);
            ps->depth--;
            return n;
        }
        n = mk(ps, neg ? CN_NEG : CN_NOT, pos);
        if (n)
            n->a = unary(ps);
        ps->depth--;
        return n;
    }
    return member(ps);
}

static struct cel_node *binary(struct parser *ps, int level);

static const char *const levels[][7] = {
    {"||", NULL},
    {"&&", NULL},
    {"==", "!=", "<", "<=", ">", ">=", NULL}, /* plus "in" */
    {"+", "-", NULL},
    {"*", "/", "%", NULL},
};

static struct cel_node *binary(struct parser *ps, int level)
{
    struct cel_node *l;
    if (level == 5)
        return unary(ps);
    if (++ps->depth > CEL_MAX_NESTING) {
        fail_at(ps, ps->t.pos, "expression nested too deeply");
        return NULL;
    }
    l = binary(ps, level + 1);
    while (!ps->failed) {
        const char *op = NULL;
        int pos = ps->t.pos;
        for (int k = 0; levels[level][k]; k++)
            if (is_p(ps, levels[level][k]))
                op = levels[level][k];
        if (level == 2 && is_kw(ps, "in"))
            op = "in";
        if (!op)
            break;
        next(ps);
        struct cel_node *r = binary(ps, level + 1);
        struct cel_node *n = mk(ps, level == 0 ? CN_OR : level == 1 ? CN_AND : CN_BIN, pos);
        if (!n)
            break;
        n->op = op;
        n->a = l;
        n->b = r;
        l = n;
    }
    ps->depth--;
    return ps->failed ? NULL : l;
}

static struct cel_node *expr(struct parser *ps)
{
    struct cel_node *c;
    int pos;
    if (++ps->depth > CEL_MAX_NESTING) {
        fail_at(ps, ps->t.pos, "expression nested too deeply");
        return NULL;
    }
    c = binary(ps, 0);
    pos = ps->t.pos;
    if (!ps->failed && is_p(ps, "?")) {
        struct cel_node *n = mk(ps, CN_COND, pos);
        next(ps);
        if (n) {
            n->a = c;
            n->b = binary(ps, 0);
            expect(ps, ":");
            n->c = expr(ps);
        }
        c = n;
    }
    ps->depth--;
    return ps->failed ? NULL : c;
}

/* Identifiers must be self, oldSelf or a comprehension variable in scope. */
struct scope {
    const char *name;
    const struct scope *up;
};

static int check_idents(struct parser *ps, const struct cel_node *n, const struct scope *sc)
{
    if (!n)
        return 0;
    switch (n->k) {
    case CN_IDENT: {
        if (strcmp(n->str, "self") == 0 || strcmp(n->str, "oldSelf") == 0)
            return 0;
        for (; sc; sc = sc->up)
            if (strcmp(sc->name, n->str) == 0)
                return 0;
        fail_at(ps, n->pos, "undeclared reference to '%s' (in container '')", n->str);
        return -1;
    }
    case CN_COMPR: {
        struct scope inner = {n->var, sc};
        if (check_idents(ps, n->a, sc))
            return -1;
        for (int i = 0; i < n->nargs; i++)
            if (check_idents(ps, n->args[i], &inner))
                return -1;
        return 0;
    }
    default:
        if (check_idents(ps, n->a, sc) || check_idents(ps, n->b, sc) || check_idents(ps, n->c, sc))
            return -1;
        for (int i = 0; i < n->nargs; i++)
            if (check_idents(ps, n->args[i], sc))
                return -1;
        return 0;
    }
}

vmop_rc cel_compile(const char *src, struct cel_prog **ret_prog, struct vmop_err *err)
{
    struct cel_prog *p;
    struct parser ps;
    size_t len = src ? strlen(src) : 0;

    if (len == 0)
        return vmop_fail(err, VMOP_E_INVALID, "ERROR: <input>:1:1: Syntax error: empty expression");
    if (len > CEL_MAX_SOURCE)
        return vmop_fail(err, VMOP_E_TOOBIG, "rule longer than %d bytes", CEL_MAX_SOURCE);
    p = calloc(1, sizeof(*p));
    if (!p || !(p->src = strdup(src))) {
        free(p);
        return vmop_fail(err, VMOP_E_NOMEM, "out of memory compiling a rule");
    }
    p->arena.cap = (size_t)CEL_MAX_NODES * 512;
    memset(&ps, 0, sizeof(ps));
    ps.src = p->src;
    ps.len = len;
    ps.arena = &p->arena;
    ps.err = err;
    next(&ps);
    p->root = expr(&ps);
    if (!ps.failed && ps.t.k != T_EOF) {
        char got[64];
        tok_text(&ps, got, sizeof(got));
        fail_at(&ps, ps.t.pos, "Syntax error: extraneous input '%s' expecting <EOF>", got);
    }
    if (!ps.failed)
        check_idents(&ps, p->root, NULL);
    if (ps.failed || !p->root) {
        if (!ps.failed)
            vmop_fail(err, VMOP_E_INVALID, "ERROR: <input>:1:1: Syntax error");
        cel_prog_free(p);
        return err && err->rc ? err->rc : VMOP_E_INVALID;
    }
    p->uses_old = ps.uses_old;
    *ret_prog = p;
    return VMOP_OK;
}

void cel_prog_free(struct cel_prog *p)
{
    if (!p)
        return;
    cel_arena_free(&p->arena);
    free(p->src);
    free(p);
}

int cel_prog_uses_oldself(const struct cel_prog *p)
{
    return p && p->uses_old;
}

/* ---- field references against the schema ---- */

/* The schema of the value an expression yields, when it is a self/oldSelf chain; NULL otherwise
 * (unknown: no check). An undeclared field is reported in *bad / *bad_pos. */
static const cJSON *chain_schema(const struct cel_node *n, const cJSON *root, const char **bad,
                                 int *bad_pos)
{
    const cJSON *s, *props, *ap;
    if (!n)
        return NULL;
    if (n->k == CN_IDENT)
        return (strcmp(n->str, "self") == 0 || strcmp(n->str, "oldSelf") == 0) ? root : NULL;
    if (n->k != CN_SELECT && n->k != CN_HAS && n->k != CN_INDEX)
        return NULL;
    s = chain_schema(n->a, root, bad, bad_pos);
    if (!s || *bad)
        return NULL;
    if (as_schema_flag(s, "x-kubernetes-preserve-unknown-fields") ||
        as_schema_flag(s, "x-kubernetes-int-or-string"))
        return NULL;
    if (n->k == CN_INDEX) {
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items");
        if (items)
            return items;
        ap = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
        return cJSON_IsObject(ap) ? ap : NULL;
    }
    props = cJSON_GetObjectItemCaseSensitive(s, "properties");
    ap = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
    if (cJSON_IsObject(ap))
        return ap;
    if (props) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(props, n->str);
        /* An object root always has these, declared or not. */
        if (!p && (!strcmp(n->str, "metadata") || !strcmp(n->str, "apiVersion") ||
                   !strcmp(n->str, "kind")))
            return NULL;
        if (!p) {
            *bad = n->str;
            *bad_pos = n->pos;
        }
        return p;
    }
    if (strcmp(as_schema_type(s), "object") == 0 && strcmp(n->str, "metadata") &&
        strcmp(n->str, "apiVersion") && strcmp(n->str, "kind")) {
        *bad = n->str;
        *bad_pos = n->pos;
    }
    return NULL;
}

static int walk_fields(struct parser *ps, const struct cel_node *n, const cJSON *root)
{
    const char *bad = NULL;
    int bad_pos = 0;
    if (!n)
        return 0;
    if (n->k == CN_SELECT || n->k == CN_HAS) {
        chain_schema(n, root, &bad, &bad_pos);
        if (bad) {
            fail_at(ps, bad_pos, "undefined field '%s'", bad);
            return -1;
        }
    }
    if (walk_fields(ps, n->a, root) || walk_fields(ps, n->b, root) || walk_fields(ps, n->c, root))
        return -1;
    for (int i = 0; i < n->nargs; i++)
        if (walk_fields(ps, n->args[i], root))
            return -1;
    return 0;
}

vmop_rc cel_check_fields(const struct cel_prog *p, const cJSON *schema, struct vmop_err *err)
{
    struct parser ps;
    memset(&ps, 0, sizeof(ps));
    ps.src = p->src;
    ps.len = strlen(p->src);
    ps.err = err;
    if (walk_fields(&ps, p->root, schema))
        return VMOP_E_INVALID;
    return VMOP_OK;
}
