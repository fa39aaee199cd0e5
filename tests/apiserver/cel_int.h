/* cel_int.h: internals of the CEL subset shared by cel_parse.c (source -> AST), cel_eval.c (AST ->
 * value) and cel_lib.c (functions, macros' helpers, quantities). Not for other modules. */
#ifndef AS_CEL_INT_H
#define AS_CEL_INT_H

#include <stddef.h>

#include "cel.h"

/* A bump allocator: every node of a program, every value of an evaluation, freed at once. */
struct cel_arena {
    struct cel_chunk *head;
    size_t used, cap; /* bytes handed out so far; cap = largest total allowed */
};
void *cel_alloc(struct cel_arena *a, size_t n); /* zeroed; NULL when over cap or NOMEM */
void cel_arena_free(struct cel_arena *a);

enum cel_nk {
    CN_NULL,
    CN_BOOL,
    CN_INT,
    CN_UINT,
    CN_DOUBLE,
    CN_STRING,
    CN_IDENT,  /* str: name */
    CN_SELECT, /* a.str */
    CN_HAS,    /* has(a.str): a is the operand, str the field */
    CN_INDEX,  /* a[b] */
    CN_CALL,   /* str(args) or a.str(args) when a != NULL */
    CN_LIST,   /* args */
    CN_MAP,    /* args: k0, v0, k1, v1 ... */
    CN_COND,   /* a ? b : c */
    CN_AND,
    CN_OR,
    CN_NOT,
    CN_NEG,
    CN_BIN,   /* op: one of "==" "!=" "<" "<=" ">" ">=" "+" "-" "*" "/" "%" "in" */
    CN_COMPR, /* macro on a: str = macro name (all, exists, exists_one, map, filter), var, args */
};

struct cel_node {
    enum cel_nk k;
    int pos; /* byte offset in the source, for messages */
    const char *str;
    size_t slen; /* CN_STRING length (may hold NUL bytes) */
    const char *var;
    const char *op;
    long long i;
    unsigned long long u;
    double d;
    struct cel_node *a, *b, *c;
    struct cel_node **args;
    int nargs;
};

struct cel_prog {
    struct cel_arena arena;
    struct cel_node *root;
    char *src;
    int uses_old;
};

/* Runtime values. Lists and maps are either views on JSON (j != NULL, typed by sch) or built by the
 * evaluation (items / keys+vals in the evaluation arena). */
enum cel_vk {
    CV_ERR,
    CV_NULL,
    CV_BOOL,
    CV_INT,
    CV_UINT,
    CV_DOUBLE,
    CV_STRING,
    CV_LIST,
    CV_MAP,
    CV_QUANTITY,
    CV_TYPE,
};

struct cel_val {
    enum cel_vk k;
    int b;
    long long i;
    unsigned long long u;
    double d;
    const char *s; /* CV_STRING (NUL-terminated, n bytes), CV_ERR message, CV_TYPE name */
    size_t n;      /* string bytes, or list/map length */
    const cJSON *j;
    const cJSON *sch;
    struct cel_val *items; /* built list items, or built map keys */
    struct cel_val *vals;  /* built map values */
    struct cel_quantity q;
};

struct cel_eval {
    struct cel_arena arena;
    long steps;
    const struct cel_env *env;
    struct cel_scope *scope;
};

/* Values. */
struct cel_val cel_err(struct cel_eval *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
struct cel_val cel_from_json(const cJSON *j, const cJSON *sch);
struct cel_val cel_str(struct cel_eval *e, const char *s, size_t n); /* copies */
struct cel_val cel_bool(int b);
struct cel_val cel_int(long long i);
size_t cel_len(const struct cel_val *v);
struct cel_val cel_list_at(struct cel_eval *e, const struct cel_val *l, size_t i);
struct cel_val cel_map_key(struct cel_eval *e, const struct cel_val *m, size_t i);
/* found: 1 and *ret set, 0 when absent, -1 on an unusable key type (error in *ret). */
int cel_map_get(struct cel_eval *e, const struct cel_val *m, const struct cel_val *key,
                struct cel_val *ret);
const char *cel_type_name(const struct cel_val *v);
/* 1 equal, 0 not equal (heterogeneous equality: different types are unequal, numbers by value). */
int cel_equal(struct cel_eval *e, const struct cel_val *a, const struct cel_val *b);
/* -1/0/1 into *ret, or 0 with an error value in *ret_err when the types do not compare. */
int cel_compare(struct cel_eval *e, const struct cel_val *a, const struct cel_val *b, int *ret,
                struct cel_val *ret_err);

/* Function and method calls (cel_lib.c): target NULL for global functions. */
struct cel_val cel_call(struct cel_eval *e, const char *name, struct cel_val *target,
                        struct cel_val *args, int nargs);
/* Compile-time: 1 when name/arity is a known function (method when is_method). */
int cel_known_function(const char *name, int is_method, int nargs);

#endif
