/*
 * selector.c - Kubernetes label and field selectors: parse and match.
 *
 * The label grammar follows apimachinery's labels.Parse: a lexer that knows
 * only the symbols = == != ! ( ) , < > and treats every other run of
 * non-blank characters as an identifier; "in" and "notin" are keywords only
 * where an operator is expected (so "in=x" selects on the key "in"). Error
 * messages keep the API server's wording so clients and humans see what a
 * real cluster would say.
 *
 * Deliberate differences from apimachinery: "key in ()" is rejected (the real
 * parser quietly reads it as the set {""}), and field selectors must name a
 * field (the real one rejects "=x" only later, as an unsupported field).
 *
 * Every array grows with the input, which is capped at SEL_MAX_LEN bytes, so
 * the number of terms and values is bounded by it too.
 */
#include "selector.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

#define SEL_MAX_LEN (64 * 1024)
/* Longest token quoted back in an error message. */
#define SEL_ERR_TOKEN 64
#define LABEL_NAME_MAX 63
#define LABEL_PREFIX_MAX 253

#define MSG_NAME_CHARS                                                                             \
    "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "         \
    "alphanumeric character"

enum op { OP_IN, OP_NOTIN, OP_EXISTS, OP_NOTEXISTS, OP_GT, OP_LT };

/* '=' and '==' are stored as OP_IN with one value, '!=' as OP_NOTIN. */
struct req {
    enum op op;
    char *key;
    char **vals;
    size_t nvals, cap;
    long long num; /* the bound of OP_GT / OP_LT */
};

struct fakeapi__labelsel {
    struct req *reqs;
    size_t n, cap;
};

struct fterm {
    char *field;
    char *value;
    bool neg;
};

struct fakeapi__fieldsel {
    struct fterm *terms;
    size_t n, cap;
};

__attribute__((format(printf, 4, 0))) static void
vseterr(char *err, size_t errlen, const char *prefix, const char *fmt, va_list ap)
{
    if (!err || errlen == 0)
        return;
    int off = snprintf(err, errlen, "%s", prefix);
    if (off >= 0 && (size_t)off < errlen)
        vsnprintf(err + off, errlen - (size_t)off, fmt, ap);
}

__attribute__((format(printf, 3, 4))) static int seterr(char *err, size_t errlen, const char *fmt,
                                                        ...)
{
    va_list ap;
    va_start(ap, fmt);
    vseterr(err, errlen, "", fmt, ap);
    va_end(ap);
    return -1;
}

/*
 * Makes room for one more element of size elsz in arr (holding n of *cap).
 * Returns the array to use from now on, or NULL (arr still valid) when out of
 * memory.
 */
static void *grow(void *arr, size_t *cap, size_t n, size_t elsz)
{
    if (n < *cap)
        return arr;
    size_t ncap = *cap ? *cap * 2 : 4;
    void *p = realloc(arr, ncap * elsz);
    if (p)
        *cap = ncap;
    return p;
}

static int check_length(const char *s, char *err, size_t errlen)
{
    if (s && strnlen(s, SEL_MAX_LEN + 1) > SEL_MAX_LEN)
        return seterr(err, errlen, "selector too long: more than %d bytes", SEL_MAX_LEN);
    return 0;
}

/* Go's strconv.ParseInt(s, 10, 64): optional sign, decimal digits, no overflow. */
static bool parse_int(const char *s, long long *out)
{
    const char *digits = s + (*s == '+' || *s == '-');
    if (*digits == '\0')
        return false;
    for (const char *p = digits; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE)
        return false;
    *out = v;
    return true;
}

/* ---- Label keys and values ---------------------------------------------- */

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Non-empty, [A-Za-z0-9._-], starting and ending alphanumeric. */
static bool is_name_body(const char *s, size_t len)
{
    if (len == 0 || !is_alnum(s[0]) || !is_alnum(s[len - 1]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

/* DNS-1123 subdomain: dot-separated labels of [a-z0-9-], each alnum at both ends. */
static bool is_dns_subdomain(const char *s, size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '.') {
            bool ok = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-';
            if (!ok)
                return false;
            continue;
        }
        if (i == start || s[start] == '-' || s[i - 1] == '-')
            return false;
        start = i + 1;
    }
    return true;
}

/* Returns why key is not a qualified name (apimachinery's wording), or NULL. */
static const char *key_problem(const char *key, size_t len)
{
    const char *slash = memchr(key, '/', len);
    const char *name = slash ? slash + 1 : key;
    size_t namelen = len - (size_t)(name - key);

    if (slash) {
        size_t plen = (size_t)(slash - key);
        if (memchr(name, '/', namelen))
            return "a qualified name must " MSG_NAME_CHARS " with an optional DNS subdomain prefix "
                   "and '/' (e.g. 'example.com/MyName')";
        if (plen == 0)
            return "prefix part must be non-empty";
        if (plen > LABEL_PREFIX_MAX)
            return "prefix part must be no more than 253 characters";
        if (!is_dns_subdomain(key, plen))
            return "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                   "alphanumeric characters, '-' or '.', and must start and end with an "
                   "alphanumeric character";
    }
    if (namelen == 0)
        return "name part must be non-empty";
    if (namelen > LABEL_NAME_MAX)
        return "name part must be no more than 63 characters";
    if (!is_name_body(name, namelen))
        return "name part must " MSG_NAME_CHARS;
    return NULL;
}

static const char *value_problem(const char *val, size_t len)
{
    if (len > LABEL_NAME_MAX)
        return "must be no more than 63 characters";
    if (len > 0 && !is_name_body(val, len))
        return "a valid label must be an empty string or " MSG_NAME_CHARS;
    return NULL;
}

/* ---- Label lexer ---------------------------------------------------------- */

enum tok_kind {
    TK_END,
    TK_IDENT,
    TK_COMMA,
    TK_LPAREN,
    TK_RPAREN,
    TK_NOT,
    TK_EQ,
    TK_DEQ,
    TK_NEQ,
    TK_GT,
    TK_LT
};

struct token {
    enum tok_kind kind;
    const char *text;
    size_t len;
};

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_symbol(char c)
{
    return c != '\0' && strchr("=!(),<>", c) != NULL;
}

static enum tok_kind symbol_kind(const char *p, size_t *len)
{
    *len = 1;
    switch (*p) {
    case ',':
        return TK_COMMA;
    case '(':
        return TK_LPAREN;
    case ')':
        return TK_RPAREN;
    case '<':
        return TK_LT;
    case '>':
        return TK_GT;
    case '=':
        *len = p[1] == '=' ? 2 : 1;
        return *len == 2 ? TK_DEQ : TK_EQ;
    default: /* '!' */
        *len = p[1] == '=' ? 2 : 1;
        return *len == 2 ? TK_NEQ : TK_NOT;
    }
}

/* Reads the token at *pp and advances *pp past it. */
static struct token lex(const char **pp)
{
    const char *p = *pp;
    while (is_blank(*p))
        p++;
    struct token t = {TK_END, p, 0};
    if (is_symbol(*p)) {
        t.kind = symbol_kind(p, &t.len);
    } else if (*p != '\0') {
        t.kind = TK_IDENT;
        while (p[t.len] != '\0' && !is_blank(p[t.len]) && !is_symbol(p[t.len]))
            t.len++;
    }
    *pp = p + t.len;
    return t;
}

/* ---- Label parser --------------------------------------------------------- */

struct lparser {
    const char *p;
    const char *prefix; /* prepended to every error message */
    char *err;
    size_t errlen;
};

static struct token next(struct lparser *ps)
{
    return lex(&ps->p);
}

static struct token peek(const struct lparser *ps)
{
    const char *p = ps->p;
    return lex(&p);
}

__attribute__((format(printf, 2, 3))) static int fail(struct lparser *ps, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vseterr(ps->err, ps->errlen, ps->prefix, fmt, ap);
    va_end(ap);
    return -1;
}

static int fail_found(struct lparser *ps, struct token t, const char *expected)
{
    if (t.kind == TK_END)
        return fail(ps, "found 'end of string', expected: %s", expected);
    int len = t.len > SEL_ERR_TOKEN ? SEL_ERR_TOKEN : (int)t.len;
    return fail(ps, "found '%.*s', expected: %s", len, t.text, expected);
}

static int add_value(struct lparser *ps, struct req *r, const char *text, size_t len)
{
    const char *why = value_problem(text, len);
    if (why)
        return fail(ps, "<nil>: Invalid value: \"%.*s\": %s", (int)len, text, why);
    char **vals = grow(r->vals, &r->cap, r->nvals, sizeof *r->vals);
    if (!vals)
        return fail(ps, "out of memory");
    r->vals = vals;
    r->vals[r->nvals] = strndup(text, len);
    if (!r->vals[r->nvals])
        return fail(ps, "out of memory");
    r->nvals++;
    return 0;
}

/* The value after = == != < >: one identifier, or nothing (the empty value). */
static int parse_exact_value(struct lparser *ps, struct req *r)
{
    struct token t = peek(ps);
    if (t.kind == TK_END || t.kind == TK_COMMA)
        return add_value(ps, r, "", 0);
    t = next(ps);
    if (t.kind != TK_IDENT)
        return fail_found(ps, t, "identifier");
    return add_value(ps, r, t.text, t.len);
}

/* "(a, b, c)"; an item may be empty ("(a,)"), the whole set may not. */
static int parse_value_set(struct lparser *ps, struct req *r)
{
    struct token t = next(ps);
    if (t.kind != TK_LPAREN)
        return fail_found(ps, t, "'('");
    if (peek(ps).kind == TK_RPAREN)
        return fail(ps, "for 'in', 'notin' operators, values set can't be empty");
    for (;;) {
        const char *expected = "',', ')' or identifier";
        t = next(ps);
        if (t.kind == TK_IDENT) {
            if (add_value(ps, r, t.text, t.len) < 0)
                return -1;
            expected = "',' or ')'";
            t = next(ps);
        } else if (t.kind == TK_COMMA || t.kind == TK_RPAREN) {
            if (add_value(ps, r, "", 0) < 0)
                return -1;
        }
        if (t.kind == TK_RPAREN)
            return 0;
        if (t.kind != TK_COMMA)
            return fail_found(ps, t, expected);
    }
}

static bool tok_is(struct token t, const char *word)
{
    return t.kind == TK_IDENT && t.len == strlen(word) && memcmp(t.text, word, t.len) == 0;
}

static int parse_operator(struct lparser *ps, struct req *r, bool *is_set)
{
    struct token t = next(ps);
    *is_set = false;
    switch (t.kind) {
    case TK_EQ:
    case TK_DEQ:
        r->op = OP_IN;
        return 0;
    case TK_NEQ:
        r->op = OP_NOTIN;
        return 0;
    case TK_GT:
        r->op = OP_GT;
        return 0;
    case TK_LT:
        r->op = OP_LT;
        return 0;
    default:
        break;
    }
    *is_set = tok_is(t, "in") || tok_is(t, "notin");
    if (!*is_set)
        return fail_found(ps, t, "in, notin, =, ==, !=, gt, lt");
    r->op = tok_is(t, "in") ? OP_IN : OP_NOTIN;
    return 0;
}

static int parse_key(struct lparser *ps, struct req *r)
{
    struct token t = next(ps);
    if (t.kind == TK_NOT) {
        r->op = OP_NOTEXISTS;
        t = next(ps);
    }
    if (t.kind != TK_IDENT)
        return fail_found(ps, t, "identifier");
    const char *why = key_problem(t.text, t.len);
    if (why)
        return fail(ps, "<nil>: Invalid value: \"%.*s\": %s", (int)t.len, t.text, why);
    r->key = strndup(t.text, t.len);
    return r->key ? 0 : fail(ps, "out of memory");
}

/* A "!key" stops after the key; whatever follows is the caller's to reject. */
static int parse_requirement(struct lparser *ps, struct req *r)
{
    r->op = OP_EXISTS;
    if (parse_key(ps, r) < 0)
        return -1;
    enum tok_kind look = peek(ps).kind;
    if (r->op == OP_NOTEXISTS || look == TK_END || look == TK_COMMA)
        return 0;

    bool is_set;
    if (parse_operator(ps, r, &is_set) < 0)
        return -1;
    if ((is_set ? parse_value_set(ps, r) : parse_exact_value(ps, r)) < 0)
        return -1;
    if ((r->op == OP_GT || r->op == OP_LT) && !parse_int(r->vals[0], &r->num))
        return fail(ps, "for 'Gt', 'Lt' operators, the value must be an integer");
    return 0;
}

static void req_deinit(struct req *r)
{
    for (size_t i = 0; i < r->nvals; i++)
        free(r->vals[i]);
    free(r->vals);
    free(r->key);
}

static int add_requirement(struct lparser *ps, fakeapi__labelsel *sel)
{
    struct req *reqs = grow(sel->reqs, &sel->cap, sel->n, sizeof *sel->reqs);
    if (!reqs)
        return fail(ps, "out of memory");
    sel->reqs = reqs;
    struct req *r = &sel->reqs[sel->n];
    memset(r, 0, sizeof *r);
    ps->prefix = "unable to parse requirement: ";
    int rc = parse_requirement(ps, r);
    ps->prefix = "";
    if (rc < 0) {
        req_deinit(r);
        return -1;
    }
    sel->n++;
    return 0;
}

static int parse_terms(struct lparser *ps, fakeapi__labelsel *sel)
{
    struct token t = peek(ps);
    const char *expected = "!, identifier, or 'end of string'";
    if (t.kind == TK_END)
        return 0;
    for (;;) {
        if (t.kind != TK_IDENT && t.kind != TK_NOT)
            return fail_found(ps, t, expected);
        if (add_requirement(ps, sel) < 0)
            return -1;
        t = next(ps);
        if (t.kind == TK_END)
            return 0;
        if (t.kind != TK_COMMA)
            return fail_found(ps, t, "',' or 'end of string'");
        t = peek(ps);
        expected = "identifier after ','";
    }
}

int fakeapi__labelsel_parse(const char *s, fakeapi__labelsel **out, char *err, size_t errlen)
{
    if (check_length(s, err, errlen) < 0)
        return -1;
    fakeapi__labelsel *sel = calloc(1, sizeof *sel);
    if (!sel)
        return seterr(err, errlen, "out of memory");
    struct lparser ps = {s ? s : "", "", err, errlen};
    if (parse_terms(&ps, sel) < 0) {
        fakeapi__labelsel_free(sel);
        return -1;
    }
    *out = sel;
    return 0;
}

/* ---- Label matching ------------------------------------------------------- */

static bool in_values(const struct req *r, const char *v)
{
    for (size_t i = 0; v && i < r->nvals; i++)
        if (strcmp(r->vals[i], v) == 0)
            return true;
    return false;
}

/* An integer comparison fails on a missing or non-integer label. */
static bool compare_int(const struct req *r, const char *v)
{
    long long n;
    if (!v || !parse_int(v, &n))
        return false;
    return r->op == OP_GT ? n > r->num : n < r->num;
}

static bool req_match(const struct req *r, const json_t *labels)
{
    const json_t *lv = json_is_object(labels) ? json_object_get(labels, r->key) : NULL;
    const char *v = json_string_value(lv); /* NULL when missing or not a string */

    switch (r->op) {
    case OP_IN:
        return in_values(r, v);
    case OP_NOTIN:
        return !in_values(r, v);
    case OP_EXISTS:
        return lv != NULL;
    case OP_NOTEXISTS:
        return lv == NULL;
    case OP_GT:
    case OP_LT:
        return compare_int(r, v);
    }
    return false;
}

bool fakeapi__labelsel_match(const fakeapi__labelsel *sel, const json_t *labels)
{
    for (size_t i = 0; i < sel->n; i++)
        if (!req_match(&sel->reqs[i], labels))
            return false;
    return true;
}

bool fakeapi__labelsel_empty(const fakeapi__labelsel *sel)
{
    return sel->n == 0;
}

void fakeapi__labelsel_free(fakeapi__labelsel *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->n; i++)
        req_deinit(&sel->reqs[i]);
    free(sel->reqs);
    free(sel);
}

/* ---- Field selectors ------------------------------------------------------ */

/* Length of the term at p: up to the first ',' not escaped by a backslash. */
static size_t term_length(const char *p)
{
    size_t i = 0;
    while (p[i] != '\0' && p[i] != ',') {
        if (p[i] == '\\' && p[i + 1] != '\0')
            i++;
        i++;
    }
    return i;
}

/* Like apimachinery's splitTerm: the first "!=", "==" or "=", escapes or not. */
static bool split_term(const char *t, size_t len, size_t *at, size_t *oplen, bool *neg)
{
    for (size_t i = 0; i < len; i++) {
        bool two = i + 1 < len && t[i + 1] == '=';
        if (t[i] == '=' || (t[i] == '!' && two)) {
            *at = i;
            *oplen = (t[i] == '!' || two) ? 2 : 1;
            *neg = t[i] == '!';
            return true;
        }
    }
    return false;
}

/* Undoes \, \= and \\; a bare ',' or '=' or any other escape is an error. */
static char *unescape(const char *v, size_t len, char *err, size_t errlen)
{
    char *out = malloc(len + 1);
    size_t n = 0;
    if (!out) {
        seterr(err, errlen, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < len; i++) {
        char c = v[i];
        bool escaped = c == '\\';
        if (escaped && (i + 1 == len || !strchr("\\,=", v[i + 1]))) {
            int shown = i + 1 < len ? 1 : 0;
            seterr(err, errlen, "invalid field selector: invalid escape sequence: '\\%.*s'", shown,
                   v + i + 1);
            goto fail;
        }
        if (!escaped && (c == '=' || c == ',')) {
            seterr(err, errlen, "invalid field selector: unescaped character '%c' in value", c);
            goto fail;
        }
        out[n++] = escaped ? v[++i] : c;
    }
    out[n] = '\0';
    return out;
fail:
    free(out);
    return NULL;
}

static int add_field_term(fakeapi__fieldsel *sel, const char *t, size_t len, char *err,
                          size_t errlen)
{
    size_t at, oplen;
    bool neg;
    int show = len > SEL_ERR_TOKEN ? SEL_ERR_TOKEN : (int)len;
    if (!split_term(t, len, &at, &oplen, &neg))
        return seterr(err, errlen,
                      "invalid field selector: can't understand '%.*s': expected field=value, "
                      "field==value or field!=value",
                      show, t);
    if (at == 0)
        return seterr(err, errlen, "invalid field selector: no field name in '%.*s'", show, t);
    struct fterm *terms = grow(sel->terms, &sel->cap, sel->n, sizeof *sel->terms);
    if (!terms)
        return seterr(err, errlen, "out of memory");
    sel->terms = terms;

    struct fterm *ft = &sel->terms[sel->n];
    ft->neg = neg;
    ft->value = unescape(t + at + oplen, len - at - oplen, err, errlen);
    if (!ft->value)
        return -1;
    ft->field = strndup(t, at);
    if (!ft->field) {
        free(ft->value);
        return seterr(err, errlen, "out of memory");
    }
    sel->n++;
    return 0;
}

/* Empty terms ("a=b,,c=d", a trailing ',') are skipped, as apimachinery does. */
int fakeapi__fieldsel_parse(const char *s, fakeapi__fieldsel **out, char *err, size_t errlen)
{
    if (check_length(s, err, errlen) < 0)
        return -1;
    fakeapi__fieldsel *sel = calloc(1, sizeof *sel);
    if (!sel)
        return seterr(err, errlen, "out of memory");
    for (const char *p = s ? s : ""; *p != '\0';) {
        size_t len = term_length(p);
        if (len > 0 && add_field_term(sel, p, len, err, errlen) < 0) {
            fakeapi__fieldsel_free(sel);
            return -1;
        }
        p += len + (p[len] == ',');
    }
    *out = sel;
    return 0;
}

int fakeapi__fieldsel_check(const fakeapi__fieldsel *sel, const char *const *allowed, char *err,
                            size_t errlen)
{
    for (size_t i = 0; i < sel->n; i++) {
        const char *const *a = allowed;
        while (a && *a && strcmp(*a, sel->terms[i].field) != 0)
            a++;
        if (!a || !*a)
            return seterr(err, errlen, "field label not supported: %s", sel->terms[i].field);
    }
    return 0;
}

/* Follows a dotted path through JSON objects; NULL when any step is missing. */
static const json_t *walk(const json_t *obj, const char *path)
{
    for (;;) {
        const char *dot = strchr(path, '.');
        size_t len = dot ? (size_t)(dot - path) : strlen(path);
        obj = json_is_object(obj) ? json_object_getn(obj, path, len) : NULL;
        if (!obj || !dot)
            return obj;
        path = dot + 1;
    }
}

/*
 * The field's text as the API server compares it, or NULL for floats, arrays
 * and objects, which no supported field holds and which equal no value.
 */
static const char *field_text(const json_t *v, char *buf, size_t buflen)
{
    if (!v || json_is_null(v))
        return "";
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_boolean(v))
        return json_is_true(v) ? "true" : "false";
    if (!json_is_integer(v))
        return NULL;
    snprintf(buf, buflen, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    return buf;
}

bool fakeapi__fieldsel_match(const fakeapi__fieldsel *sel, const json_t *obj)
{
    char buf[32];
    for (size_t i = 0; i < sel->n; i++) {
        const struct fterm *ft = &sel->terms[i];
        const char *text = field_text(walk(obj, ft->field), buf, sizeof buf);
        bool equal = text && strcmp(text, ft->value) == 0;
        if (equal == ft->neg)
            return false;
    }
    return true;
}

bool fakeapi__fieldsel_empty(const fakeapi__fieldsel *sel)
{
    return sel->n == 0;
}

const char *fakeapi__fieldsel_name(const fakeapi__fieldsel *sel)
{
    if (sel->n != 1 || sel->terms[0].neg || strcmp(sel->terms[0].field, "metadata.name") != 0)
        return NULL;
    return sel->terms[0].value;
}

const char *fakeapi__fieldsel_requires(const fakeapi__fieldsel *sel, const char *field)
{
    for (size_t i = 0; sel && i < sel->n; i++) {
        if (!sel->terms[i].neg && !strcmp(sel->terms[i].field, field))
            return sel->terms[i].value;
    }
    return NULL;
}

void fakeapi__fieldsel_free(fakeapi__fieldsel *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->n; i++) {
        free(sel->terms[i].field);
        free(sel->terms[i].value);
    }
    free(sel->terms);
    free(sel);
}

int fakeapi__fieldsel_check_res(const struct fakeapi__resource *res, const fakeapi__fieldsel *sel,
                                char *err, size_t errlen)
{
    /* metadata.name and metadata.namespace on every kind, plus the kind's own. */
    const char *allowed[32] = {"metadata.name", "metadata.namespace"};
    size_t n = 2;
    for (const char *const *p = res->field_selectors; p && *p && n < 31; p++)
        allowed[n++] = *p;
    allowed[n] = NULL;
    return fakeapi__fieldsel_check(sel, allowed, err, errlen);
}
