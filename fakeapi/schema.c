/*
 * schema.c - validate, default and prune custom resources against the
 * structural schema of their CustomResourceDefinition.
 *
 * The API server validates custom resources with kube-openapi and converts
 * each error into a k8s.io/apimachinery field error
 * (apiextensions-apiserver, kubeOpenAPIResultToFieldErrors). Clients show
 * those messages verbatim, so the wording here follows both layers:
 * "<field error prefix>: <path> in body <kube-openapi detail>".
 *
 * Deliberate differences from the API server, each to keep messages useful:
 * a value of the wrong type gets only the type error (no enum or composite
 * errors on top); maxProperties reports the actual count; a forbidden
 * property is reported at its own path; composite (anyOf, ...) errors carry
 * their path as field instead of "<nil>"; of failing anyOf/oneOf branches the
 * one with fewest causes is shown. Stricter than the API server, as schema.h
 * promises: 1.0 is not an integer, and format int32 checks the range.
 */
#include "schema.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

/* Paths and messages are cut at this size: only a hostile body gets there. */
#define SB_MAX (64 * 1024)

#define R_REQUIRED "FieldValueRequired"
#define R_INVALID "FieldValueInvalid"
#define R_TYPE "FieldValueTypeInvalid"
#define R_NOT_SUPPORTED "FieldValueNotSupported"
#define R_TOO_LONG "FieldValueTooLong"
#define R_TOO_MANY "FieldValueTooMany"
#define R_DUPLICATE "FieldValueDuplicate"
#define R_INTERNAL "InternalError"

/* ---- bounded string buffer ---------------------------------------------- */

typedef struct {
    char *p;
    size_t len, cap;
} sbuf;

/* Room for n more bytes plus a NUL, within SB_MAX; returns the room got. */
static size_t sb_reserve(sbuf *sb, size_t n)
{
    size_t want = sb->len + n + 1;
    if (want > SB_MAX)
        want = SB_MAX;
    if (want > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 64;
        while (cap < want)
            cap *= 2;
        if (cap > SB_MAX)
            cap = SB_MAX;
        char *p = realloc(sb->p, cap);
        if (p) {
            sb->p = p;
            sb->cap = cap;
        }
    }
    return sb->cap > sb->len ? sb->cap - sb->len - 1 : 0;
}

/* After a cut at SB_MAX: drop a partial UTF-8 sequence, or jansson rejects the text. */
static void sb_trim_partial(sbuf *sb)
{
    size_t lead = sb->len;
    while (lead > 0 && sb->len - lead < 4 && ((unsigned char)sb->p[lead - 1] & 0xc0) == 0x80)
        lead--;
    if (lead == 0)
        return;
    unsigned char ch = (unsigned char)sb->p[lead - 1];
    size_t need = ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : ch >= 0xc0 ? 2 : 1;
    if (sb->len - (lead - 1) < need) {
        sb->len = lead - 1;
        sb->p[sb->len] = '\0';
    }
}

static void sb_add(sbuf *sb, const char *s, size_t n)
{
    size_t room = sb_reserve(sb, n);
    bool cut = n > room;
    if (cut)
        n = room;
    if (!sb->p)
        return;
    memcpy(sb->p + sb->len, s, n);
    sb->len += n;
    sb->p[sb->len] = '\0';
    if (cut)
        sb_trim_partial(sb);
}

static void sb_adds(sbuf *sb, const char *s)
{
    sb_add(sb, s, strlen(s));
}

static void sb_vprintf(sbuf *sb, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    size_t room = sb_reserve(sb, (size_t)n);
    if (!sb->p)
        return;
    vsnprintf(sb->p + sb->len, room + 1, fmt, ap);
    sb->len += (size_t)n < room ? (size_t)n : room;
    if ((size_t)n > room)
        sb_trim_partial(sb);
}

__attribute__((format(printf, 2, 3))) static void sb_printf(sbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

static const char *sb_str(const sbuf *sb)
{
    return sb->p ? sb->p : "";
}

static void sb_cut(sbuf *sb, size_t len)
{
    if (sb->p && len < sb->len) {
        sb->len = len;
        sb->p[len] = '\0';
    }
}

static void sb_free(sbuf *sb)
{
    free(sb->p);
    *sb = (sbuf){0};
}

/* ---- rendering values the way Go's fmt does ----------------------------- */

/* Go's %q: the API server quotes strings in messages with it. */
static void sb_quote(sbuf *sb, const char *s, size_t n)
{
    sb_adds(sb, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        const char *esc = NULL;
        switch (ch) {
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '\a':
            esc = "\\a";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        case '\v':
            esc = "\\v";
            break;
        default:
            break;
        }
        if (esc)
            sb_adds(sb, esc);
        else if (ch < 0x20 || ch == 0x7f)
            sb_printf(sb, "\\x%02x", ch);
        else
            sb_add(sb, (const char *)&ch, 1);
    }
    sb_adds(sb, "\"");
}

static void sb_quote_str(sbuf *sb, const char *s)
{
    sb_quote(sb, s, strlen(s));
}

/* Go's %v of a float64 (fakeapi__go_float). */
static void sb_gofloat(sbuf *sb, double d)
{
    char buf[64];
    fakeapi__go_float(buf, sizeof buf, d);
    sb_adds(sb, buf);
}

/* A bad value as field.Error prints it: %v for numbers, %q for strings, JSON otherwise. */
static void sb_value(sbuf *sb, const json_t *v)
{
    if (json_is_string(v)) {
        sb_quote(sb, json_string_value(v), json_string_length(v));
    } else if (json_is_integer(v)) {
        sb_printf(sb, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        sb_gofloat(sb, json_real_value(v));
    } else {
        char *js = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        if (js)
            sb_adds(sb, js);
        free(js);
    }
}

/* ---- schema helpers ------------------------------------------------------ */

static bool flag(const json_t *s, const char *key)
{
    return json_is_true(json_object_get(s, key));
}

static bool is_meta_key(const char *k)
{
    return strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0 || strcmp(k, "metadata") == 0;
}

/* The schema for property k: a declared property, else an additionalProperties schema. */
static const json_t *child_schema(const json_t *s, const char *k)
{
    const json_t *prop = json_object_get(json_object_get(s, "properties"), k);
    const json_t *addl = json_object_get(s, "additionalProperties");
    if (prop)
        return prop;
    return json_is_object(addl) ? addl : NULL;
}

static bool get_int(const json_t *s, const char *key, long long *out)
{
    const json_t *n = json_object_get(s, key);
    if (!json_is_number(n))
        return false;
    *out = json_is_integer(n) ? (long long)json_integer_value(n) : (long long)json_real_value(n);
    return true;
}

static const char *kind_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    case JSON_NULL:
        break;
    }
    return "null";
}

/* The type kube-openapi checks ("integer,string" for int-or-string), or NULL for any. */
static const char *expected_type(const json_t *s)
{
    if (flag(s, "x-kubernetes-int-or-string"))
        return "integer,string";
    return json_string_value(json_object_get(s, "type"));
}

static bool type_matches(const char *want, const json_t *v)
{
    static const char *const known[] = {"object", "array", "string", "integer", "boolean"};
    if (strcmp(want, "integer,string") == 0)
        return json_is_integer(v) || json_is_string(v);
    if (strcmp(want, "number") == 0)
        return json_is_number(v);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(want, known[i]) == 0)
            return strcmp(want, kind_name(v)) == 0;
    return true; /* an unknown type name constrains nothing */
}

/* ---- validation context and causes -------------------------------------- */

typedef struct {
    sbuf *path;     /* dotted path of the value being checked; shared with sub-contexts */
    json_t *causes; /* where causes go; may be NULL (then only counted) */
    int n;          /* causes added */
} vctx;

static size_t path_push_key(sbuf *path, const char *k)
{
    size_t mark = path->len;
    sb_printf(path, "%s%s", mark ? "." : "", k);
    return mark;
}

static size_t path_push_index(sbuf *path, size_t i)
{
    size_t mark = path->len;
    sb_printf(path, "[%zu]", i);
    return mark;
}

static void add_cause(vctx *c, const char *reason, const char *message)
{
    c->n++;
    if (!c->causes)
        return;
    json_array_append_new(c->causes, json_pack("{s:s, s:s, s:s}", "reason", reason, "message",
                                               message, "field", sb_str(c->path)));
}

__attribute__((format(printf, 3, 4))) static void cause(vctx *c, const char *reason,
                                                        const char *fmt, ...)
{
    sbuf m = {0};
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&m, fmt, ap);
    va_end(ap);
    add_cause(c, reason, sb_str(&m));
    sb_free(&m);
}

static void vinvalid(vctx *c, const char *reason, const char *shown, const char *fmt, va_list ap)
{
    sbuf m = {0};
    sb_printf(&m, "Invalid value: %s: %s in body ", shown, sb_str(c->path));
    sb_vprintf(&m, fmt, ap);
    add_cause(c, reason, sb_str(&m));
    sb_free(&m);
}

/* "Invalid value: <shown>: <path> in body <detail>": field.Invalid around a kube-openapi error. */
__attribute__((format(printf, 4, 5))) static void invalid(vctx *c, const char *reason,
                                                          const char *shown, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vinvalid(c, reason, shown, fmt, ap);
    va_end(ap);
}

/* kube-openapi reports the kind it found (or the string itself, for formats). */
static void type_error(vctx *c, const char *want, const char *got, size_t gotlen)
{
    sbuf q = {0};
    sb_quote(&q, got, gotlen);
    invalid(c, R_TYPE, sb_str(&q), "must be of type %s: %s", want, sb_str(&q));
    sb_free(&q);
}

/* The same, with v rendered as field.Error renders a bad value. */
__attribute__((format(printf, 3, 4))) static void invalid_value(vctx *c, const json_t *v,
                                                                const char *fmt, ...)
{
    sbuf shown = {0};
    sb_value(&shown, v);
    va_list ap;
    va_start(ap, fmt);
    vinvalid(c, R_INVALID, sb_str(&shown), fmt, ap);
    va_end(ap);
    sb_free(&shown);
}

/* Composite keywords fail as plain errors: the API server shows an empty value. */
__attribute__((format(printf, 2, 3))) static void composite_error(vctx *c, const char *fmt, ...)
{
    sbuf m = {0};
    sb_adds(&m, "Invalid value: \"\": ");
    sb_quote_str(&m, sb_str(c->path));
    sb_adds(&m, " ");
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&m, fmt, ap);
    va_end(ap);
    add_cause(c, R_INVALID, sb_str(&m));
    sb_free(&m);
}

/* ---- patterns ------------------------------------------------------------ */

/*
 * CRD patterns are RE2 (ECMA-like); POSIX ERE lacks \d and (?:...), so the
 * common shorthands are rewritten. Escapes inside brackets other than these
 * (\-, \]) have no ERE spelling and are passed through.
 */
static const char *re_shorthand(char ch, bool in_class)
{
    switch (ch) {
    case 'd':
        return in_class ? "0-9" : "[0-9]";
    case 's':
        return in_class ? "[:space:]" : "[[:space:]]";
    case 'w':
        return in_class ? "[:alnum:]_" : "[[:alnum:]_]";
    case 'D':
        return in_class ? NULL : "[^0-9]";
    case 'S':
        return in_class ? NULL : "[^[:space:]]";
    case 'W':
        return in_class ? NULL : "[^[:alnum:]_]";
    default:
        return NULL;
    }
}

/* Length of a bracket expression's opening ("[", "[^", "[]", "[^]"). */
static size_t class_open_len(const char *p)
{
    size_t n = 1;
    if (p[n] == '^')
        n++;
    if (p[n] == ']')
        n++;
    return n;
}

static void translate_re(const char *re, sbuf *out)
{
    bool in_class = false;
    for (const char *p = re; *p; p++) {
        const char *rep = p[0] == '\\' && p[1] ? re_shorthand(p[1], in_class) : NULL;
        if (rep) {
            sb_adds(out, rep);
            p++;
        } else if (p[0] == '\\' && p[1]) {
            /* POSIX brackets have no escapes: "\." there is just "." */
            if (in_class && strchr(".\\/+*?(){}|$_:,=&#!<>@%;'\"~`", p[1]))
                sb_add(out, p + 1, 1);
            else
                sb_add(out, p, 2);
            p++;
        } else if (!in_class && strncmp(p, "(?:", 3) == 0) {
            sb_adds(out, "(");
            p += 2;
        } else if (!in_class && p[0] == '[') {
            size_t n = class_open_len(p);
            sb_add(out, p, n);
            p += n - 1;
            in_class = true;
        } else if (in_class && p[0] == '[' && p[1] == ':' && strstr(p, ":]")) {
            const char *end = strstr(p, ":]") + 2;
            sb_add(out, p, (size_t)(end - p));
            p = end - 1;
        } else {
            if (p[0] == ']')
                in_class = false;
            sb_add(out, p, 1);
        }
    }
}

/* Compile a CRD pattern (RE2 spelling) as POSIX ERE: regcomp's code. */
static int compile_re(const char *pattern, regex_t *re)
{
    sbuf ere = {0};
    translate_re(pattern, &ere);
    int rc = regcomp(re, sb_str(&ere), REG_EXTENDED | REG_NOSUB);
    sb_free(&ere);
    return rc;
}

int fakeapi__schema_pattern_match(const char *pattern, const char *s)
{
    regex_t re;
    if (compile_re(pattern, &re) != 0)
        return -1;
    int rc = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return rc;
}

static void check_pattern(vctx *c, const char *pattern, const json_t *v)
{
    regex_t re;
    int rc = compile_re(pattern, &re);
    if (rc != 0) {
        char err[128];
        regerror(rc, &re, err, sizeof err);
        cause(c, R_INTERNAL, "Internal error: invalid pattern '%s': %s", pattern, err);
        return;
    }
    if (regexec(&re, json_string_value(v), 0, NULL, 0) != 0)
        invalid_value(c, v, "should match '%s'", pattern);
    regfree(&re);
}

/* ---- formats ------------------------------------------------------------- */

static bool digits(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* YYYY-MM-DD; ranges are not checked (loosely, as the header says). */
static bool is_date(const char *s)
{
    return digits(s, 4) && s[4] == '-' && digits(s + 5, 2) && s[7] == '-' && digits(s + 8, 2);
}

/* RFC 3339: date, T, hh:mm:ss, optional fraction, Z or +hh:mm. */
static bool is_date_time(const char *s)
{
    if (!is_date(s) || strchr("Tt ", s[10]) == NULL || s[10] == '\0')
        return false;
    s += 11;
    if (!(digits(s, 2) && s[2] == ':' && digits(s + 3, 2) && s[5] == ':' && digits(s + 6, 2)))
        return false;
    s += 8;
    if (*s == '.' && digits(s + 1, 1))
        for (s++; *s >= '0' && *s <= '9'; s++)
            ;
    if ((*s == 'Z' || *s == 'z') && s[1] == '\0')
        return true;
    return (*s == '+' || *s == '-') && digits(s + 1, 2) && s[3] == ':' && digits(s + 4, 2) &&
           s[6] == '\0';
}

static void check_string_format(vctx *c, const char *format, const json_t *v)
{
    const char *s = json_string_value(v);
    bool ok = true;
    if (strcmp(format, "date-time") == 0)
        ok = is_date_time(s);
    else if (strcmp(format, "date") == 0)
        ok = is_date(s) && s[10] == '\0';
    if (!ok)
        type_error(c, format, s, json_string_length(v));
}

/* ---- keyword checks ------------------------------------------------------ */

static size_t utf8_len(const char *s, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            count++;
    return count;
}

static void check_string(vctx *c, const json_t *s, const json_t *v)
{
    size_t len = utf8_len(json_string_value(v), json_string_length(v));
    long long lim;
    /* kube-openapi counts characters; field.TooLong still says bytes. */
    if (get_int(s, "maxLength", &lim) && (long long)len > lim)
        cause(c, R_TOO_LONG, "Too long: may not be more than %lld %s", lim,
              lim == 1 ? "byte" : "bytes");
    if (get_int(s, "minLength", &lim) && (long long)len < lim)
        invalid_value(c, v, "should be at least %lld chars long", lim);
    const char *pattern = json_string_value(json_object_get(s, "pattern"));
    if (pattern)
        check_pattern(c, pattern, v);
    const char *format = json_string_value(json_object_get(s, "format"));
    if (format)
        check_string_format(c, format, v);
}

/* -1, 0, 1 as a < b, ==, >; integers compare exactly, anything else as doubles. */
static int num_cmp(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b)) {
        json_int_t x = json_integer_value(a), y = json_integer_value(b);
        return (x > y) - (x < y);
    }
    double x = json_number_value(a), y = json_number_value(b);
    return (x > y) - (x < y);
}

/*
 * kube-openapi compares as float64 and prints both sides with %v, so
 * 5000000 shows as 5e+06, as it does from a real server.
 */
static void bound_error(vctx *c, const json_t *v, const char *relation, const json_t *bound)
{
    sbuf shown = {0}, lim = {0};
    sb_gofloat(&shown, json_number_value(v));
    sb_gofloat(&lim, json_number_value(bound));
    invalid(c, R_INVALID, sb_str(&shown), "should be %s %s", relation, sb_str(&lim));
    sb_free(&shown);
    sb_free(&lim);
}

static void check_multiple_of(vctx *c, const json_t *s, const json_t *v)
{
    const json_t *m = json_object_get(s, "multipleOf");
    if (!json_is_number(m) || json_number_value(m) <= 0)
        return;
    bool ok;
    if (json_is_integer(v) && json_is_integer(m))
        ok = json_integer_value(v) % json_integer_value(m) == 0;
    else {
        double q = json_number_value(v) / json_number_value(m);
        ok = isfinite(q) && q == floor(q);
    }
    if (!ok)
        bound_error(c, v, "a multiple of", m);
}

static void check_number(vctx *c, const json_t *s, const json_t *v)
{
    check_multiple_of(c, s, v);
    const json_t *max = json_object_get(s, "maximum");
    const json_t *min = json_object_get(s, "minimum");
    if (json_is_number(max)) {
        bool excl = flag(s, "exclusiveMaximum");
        int cmp = num_cmp(v, max);
        if (cmp > 0 || (excl && cmp == 0))
            bound_error(c, v, excl ? "less than" : "less than or equal to", max);
    }
    if (json_is_number(min)) {
        bool excl = flag(s, "exclusiveMinimum");
        int cmp = num_cmp(v, min);
        if (cmp < 0 || (excl && cmp == 0))
            bound_error(c, v, excl ? "greater than" : "greater than or equal to", min);
    }
    /* Not checked by kube-openapi; a loose extra so int32 fields stay int32. */
    const char *format = json_string_value(json_object_get(s, "format"));
    json_int_t i = json_integer_value(v);
    if (format && strcmp(format, "int32") == 0 && json_is_integer(v) &&
        (i < INT32_MIN || i > INT32_MAX)) {
        sbuf shown = {0};
        sb_value(&shown, v);
        invalid(c, R_TYPE, sb_str(&shown), "must be of type int32");
        sb_free(&shown);
    }
}

/* "Too many: <actual>: must have at most <max> item(s)", as field.TooMany. */
static void too_many(vctx *c, size_t actual, long long max)
{
    cause(c, R_TOO_MANY, "Too many: %zu: must have at most %lld %s", actual, max,
          max == 1 ? "item" : "items");
}

static void check_count(vctx *c, const json_t *s, size_t n, const char *what)
{
    long long lim;
    char key[32];
    snprintf(key, sizeof key, "max%s", what);
    if (get_int(s, key, &lim) && (long long)n > lim)
        too_many(c, n, lim);
    snprintf(key, sizeof key, "min%s", what);
    if (get_int(s, key, &lim) && (long long)n < lim) {
        char shown[32];
        snprintf(shown, sizeof shown, "%zu", n);
        invalid(c, R_INVALID, shown, "should have at least %lld %s", lim,
                strcmp(what, "Items") == 0 ? "items" : "properties");
    }
}

static void validate_node(vctx *c, const json_t *s, const json_t *v, bool root);

/* One item's identity for x-kubernetes-list-type: the item (set) or the
 * object of its key fields that it has (map). */
typedef struct {
    char *text; /* compact JSON, keys sorted */
    size_t index;
} list_key;

static int list_key_cmp(const void *a, const void *b)
{
    const list_key *x = a, *y = b;
    int c = strcmp(x->text, y->text);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

static json_t *map_key(const json_t *keys, const json_t *el)
{
    json_t *k = json_object();
    size_t i;
    const json_t *name;
    json_array_foreach(keys, i, name)
    {
        const json_t *v = json_object_get(el, json_string_value(name));
        if (json_string_value(name) && v)
            json_object_set(k, json_string_value(name), (json_t *)v);
    }
    return k;
}

/*
 * x-kubernetes-list-type set and map: items (or their keys) must be
 * unique. As the API server (apiextensions-apiserver's listtype
 * validation), each duplicated value is reported once, at its second
 * appearance: "Duplicate value: <value>", the value a map key object
 * ({"name":"a"}). Sorted rather than compared pairwise, so a long list costs
 * n log n.
 */
static void check_list_type(vctx *c, const json_t *s, const json_t *v)
{
    const char *type = json_string_value(json_object_get(s, "x-kubernetes-list-type"));
    const json_t *keys = json_object_get(s, "x-kubernetes-list-map-keys");
    bool set = type && !strcmp(type, "set"), map = type && !strcmp(type, "map");
    size_t n = json_array_size(v), i;
    if ((!set && !map) || n < 2)
        return;
    list_key *lk = calloc(n, sizeof *lk);
    bool *dup = calloc(n, sizeof *dup);
    json_t **shown = calloc(n, sizeof *shown);
    if (!lk || !dup || !shown)
        goto out;
    for (i = 0; i < n; i++) {
        const json_t *el = json_array_get(v, i);
        shown[i] = map && json_is_object(el) ? map_key(keys, el)
                   : map                     ? json_object()
                                             : json_incref((json_t *)el);
        lk[i].text = json_dumps(shown[i], JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        lk[i].index = i;
        if (!lk[i].text)
            goto out;
    }
    qsort(lk, n, sizeof *lk, list_key_cmp);
    for (i = 1; i < n; i++)
        if (!strcmp(lk[i].text, lk[i - 1].text) && (i < 2 || strcmp(lk[i].text, lk[i - 2].text)))
            dup[lk[i].index] = true;
    for (i = 0; i < n; i++) {
        if (!dup[i])
            continue;
        sbuf m = {0};
        size_t mark = path_push_index(c->path, i);
        sb_adds(&m, "Duplicate value: ");
        sb_value(&m, shown[i]);
        add_cause(c, R_DUPLICATE, sb_str(&m));
        sb_cut(c->path, mark);
        sb_free(&m);
    }
out:
    for (i = 0; lk && shown && i < n; i++) {
        free(lk[i].text);
        json_decref(shown[i]);
    }
    free(lk);
    free(dup);
    free(shown);
}

static void check_array(vctx *c, const json_t *s, const json_t *v)
{
    const json_t *items = json_object_get(s, "items");
    size_t i;
    const json_t *el;
    json_array_foreach(v, i, el)
    {
        size_t mark = path_push_index(c->path, i);
        validate_node(c, items, el, false);
        sb_cut(c->path, mark);
    }
    check_count(c, s, json_array_size(v), "Items");
    check_list_type(c, s, v);
}

static void check_required(vctx *c, const json_t *s, const json_t *v, bool root)
{
    size_t i;
    const json_t *name;
    json_array_foreach(json_object_get(s, "required"), i, name)
    {
        const char *k = json_string_value(name);
        if (!k || (root && is_meta_key(k)) || json_object_get(v, k))
            continue;
        size_t mark = path_push_key(c->path, k);
        cause(c, R_REQUIRED, "Required value");
        sb_cut(c->path, mark);
    }
}

/* additionalProperties: false (the API server's field is the parent; see the top). */
static void forbidden(vctx *c, const char *k)
{
    sbuf q = {0};
    sb_quote_str(&q, k);
    invalid(c, R_INVALID, sb_str(&q), "is a forbidden property");
    sb_free(&q);
}

static void check_object(vctx *c, const json_t *s, const json_t *v, bool root)
{
    check_count(c, s, json_object_size(v), "Properties");
    check_required(c, s, v, root);
    bool closed = json_is_false(json_object_get(s, "additionalProperties"));
    const char *k;
    json_t *child;
    json_object_foreach((json_t *)v, k, child)
    {
        if (root && is_meta_key(k))
            continue;
        const json_t *cs = child_schema(s, k);
        size_t mark = path_push_key(c->path, k);
        if (cs)
            validate_node(c, cs, child, false);
        else if (closed)
            forbidden(c, k);
        sb_cut(c->path, mark);
    }
}

static void check_enum(vctx *c, const json_t *s, const json_t *v)
{
    const json_t *e = json_object_get(s, "enum");
    size_t i;
    const json_t *allowed;
    if (json_array_size(e) == 0)
        return;
    json_array_foreach(e, i, allowed)
    {
        if (json_equal(allowed, v))
            return;
    }

    sbuf m = {0};
    sb_adds(&m, "Unsupported value: ");
    sb_value(&m, v);
    sb_adds(&m, ": supported values: ");
    json_array_foreach(e, i, allowed)
    {
        sbuf one = {0};
        sb_value(&one, allowed);
        if (i > 0)
            sb_adds(&m, ", ");
        /* strings are quoted as they are; other values as their quoted JSON */
        if (json_is_string(allowed))
            sb_add(&m, sb_str(&one), one.len);
        else
            sb_quote(&m, sb_str(&one), one.len);
        sb_free(&one);
    }
    add_cause(c, R_NOT_SUPPORTED, sb_str(&m));
    sb_free(&m);
}

/* ---- composite keywords -------------------------------------------------- */

/* Validate v against one branch into a scratch list (*out, caller frees). */
static int run_branch(vctx *c, const json_t *s, const json_t *v, bool root, json_t **out)
{
    vctx sub = {.path = c->path, .causes = json_array(), .n = 0};
    validate_node(&sub, s, v, root);
    *out = sub.causes;
    return sub.n;
}

static void merge(vctx *c, json_t *causes, int n)
{
    c->n += n;
    if (c->causes && causes)
        json_array_extend(c->causes, causes);
}

/*
 * anyOf and oneOf: the causes of the best failing branch (fewest causes) tell
 * the user most; kube-openapi picks the branch with most passing checks.
 */
static void check_alternatives(vctx *c, const json_t *list, const json_t *v, bool root, bool one)
{
    json_t *best = NULL;
    int best_n = 0, valid = 0;
    size_t i;
    const json_t *branch;
    json_array_foreach(list, i, branch)
    {
        json_t *got;
        int n = run_branch(c, branch, v, root, &got);
        if (n == 0)
            valid++;
        if (n > 0 && valid == 0 && (!best || n < best_n)) {
            json_decref(best);
            best = got;
            best_n = n;
        } else {
            json_decref(got);
        }
        if (valid > 0 && !one)
            break;
    }
    if (one && valid == 0)
        composite_error(c, "must validate one and only one schema (oneOf). Found none valid");
    else if (one && valid > 1)
        composite_error(
            c, "must validate one and only one schema (oneOf). Found %d valid alternatives", valid);
    else if (!one && valid == 0)
        composite_error(c, "must validate at least one schema (anyOf)");
    if (valid == 0)
        merge(c, best, best_n);
    json_decref(best);
}

static void check_all_of(vctx *c, const json_t *list, const json_t *v, bool root)
{
    size_t i, failed = 0;
    const json_t *branch;
    json_array_foreach(list, i, branch)
    {
        int before = c->n;
        validate_node(c, branch, v, root);
        failed += c->n > before;
    }
    if (failed == json_array_size(list) && failed > 0)
        composite_error(c, "must validate all the schemas (allOf). None validated");
    else if (failed > 0)
        composite_error(c, "must validate all the schemas (allOf)");
}

static void check_composites(vctx *c, const json_t *s, const json_t *v, bool root)
{
    const json_t *negated = json_object_get(s, "not");
    if (json_array_size(json_object_get(s, "anyOf")) > 0)
        check_alternatives(c, json_object_get(s, "anyOf"), v, root, false);
    if (json_array_size(json_object_get(s, "oneOf")) > 0)
        check_alternatives(c, json_object_get(s, "oneOf"), v, root, true);
    check_all_of(c, json_object_get(s, "allOf"), v, root);
    if (json_is_object(negated)) {
        json_t *got;
        if (run_branch(c, negated, v, root, &got) == 0)
            composite_error(c, "must not validate the schema (not)");
        json_decref(got);
    }
}

/* ---- validation ---------------------------------------------------------- */

/*
 * null passes where the schema allows it, where there is no type to check,
 * and where a default is declared: defaulting replaces such a null first.
 */
static void check_null(vctx *c, const json_t *s)
{
    const char *want = expected_type(s);
    if (!want || flag(s, "nullable") || json_object_get(s, "default"))
        return;
    type_error(c, want, "null", 4);
}

static void validate_node(vctx *c, const json_t *s, const json_t *v, bool root)
{
    if (!json_is_object(s))
        return;
    if (json_is_null(v)) {
        check_null(c, s);
        return;
    }
    const char *want = expected_type(s);
    if (want && !type_matches(want, v)) {
        const char *got = kind_name(v);
        type_error(c, want, got, strlen(got));
        return;
    }
    check_composites(c, s, v, root);
    if (json_is_string(v))
        check_string(c, s, v);
    else if (json_is_number(v))
        check_number(c, s, v);
    else if (json_is_array(v))
        check_array(c, s, v);
    check_enum(c, s, v);
    if (json_is_object(v))
        check_object(c, s, v, root);
}

int fakeapi__schema_validate(const json_t *schema, const json_t *obj, json_t *causes)
{
    sbuf path = {0};
    vctx c = {.path = &path, .causes = json_is_array(causes) ? causes : NULL, .n = 0};
    if (obj)
        validate_node(&c, schema, obj, true);
    sb_free(&path);
    return c.n;
}

/* ---- defaulting ---------------------------------------------------------- */

/* A fresh copy of s's default when v is a null that s does not allow, else NULL. */
static json_t *default_for_null(const json_t *s, const json_t *v)
{
    const json_t *def = json_object_get(s, "default");
    if (!def || !json_is_null(v) || flag(s, "nullable"))
        return NULL;
    return json_deep_copy(def);
}

static void default_node(const json_t *s, json_t *v);

static void default_object(const json_t *s, json_t *v)
{
    const char *k;
    json_t *ps, *child;
    json_object_foreach(json_object_get(s, "properties"), k, ps)
    {
        const json_t *def = json_object_get(ps, "default");
        if (def && !json_object_get(v, k))
            json_object_set_new(v, k, json_deep_copy(def));
    }
    /* Replacing a value in place keeps jansson's iteration valid. */
    json_object_foreach(v, k, child)
    {
        const json_t *cs = child_schema(s, k);
        json_t *def = default_for_null(cs, child);
        if (def) {
            json_object_set_new(v, k, def);
            child = def;
        }
        default_node(cs, child);
    }
}

static void default_array(const json_t *s, json_t *v)
{
    const json_t *items = json_object_get(s, "items");
    size_t i;
    json_t *el;
    json_array_foreach(v, i, el)
    {
        json_t *def = default_for_null(items, el);
        if (def) {
            json_array_set_new(v, i, def);
            el = def;
        }
        default_node(items, el);
    }
}

static void default_node(const json_t *s, json_t *v)
{
    if (!json_is_object(s))
        return;
    if (json_is_object(v))
        default_object(s, v);
    else if (json_is_array(v))
        default_array(s, v);
}

void fakeapi__schema_default(const json_t *schema, json_t *obj)
{
    default_node(schema, obj);
}

/* ---- pruning ------------------------------------------------------------- */

/*
 * preserve: unknown fields stay at this level (x-kubernetes-preserve-unknown-
 * fields here, or on the array holding this element), but known ones are
 * still pruned inside. A value with no schema at all keeps no fields, as in
 * the API server.
 */
static void prune_node(const json_t *s, json_t *v, bool root, bool preserve);

static void prune_object(const json_t *s, json_t *v, bool root, bool preserve)
{
    bool keep_meta = root || flag(s, "x-kubernetes-embedded-resource");
    bool open = json_is_true(json_object_get(s, "additionalProperties"));
    const char *k;
    json_t *child;
    void *tmp;
    json_object_foreach_safe(v, tmp, k, child)
    {
        if (keep_meta && is_meta_key(k))
            continue;
        const json_t *cs = child_schema(s, k);
        if (cs)
            prune_node(cs, child, false, false);
        else if (!preserve && !open)
            json_object_del(v, k);
    }
}

static void prune_node(const json_t *s, json_t *v, bool root, bool preserve)
{
    preserve = preserve || flag(s, "x-kubernetes-preserve-unknown-fields");
    if (json_is_object(v)) {
        prune_object(s, v, root, preserve);
    } else if (json_is_array(v)) {
        const json_t *items = json_object_get(s, "items");
        size_t i;
        json_t *el;
        json_array_foreach(v, i, el)
        {
            prune_node(items, el, false, preserve);
        }
    }
}

void fakeapi__schema_prune(const json_t *schema, json_t *obj)
{
    if (json_is_object(schema))
        prune_node(schema, obj, true, false);
}

/* ---- nulls --------------------------------------------------------------- */

static void prune_nulls_node(const json_t *s, json_t *v)
{
    if (json_is_object(v)) {
        const char *k;
        json_t *child;
        void *tmp;
        json_object_foreach_safe(v, tmp, k, child)
        {
            const json_t *cs = child_schema(s, k);
            if (json_is_null(child) && json_is_object(cs) && !flag(cs, "nullable") &&
                !json_object_get(cs, "default"))
                json_object_del(v, k);
            else
                prune_nulls_node(cs, child);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *el;
        json_array_foreach(v, i, el)
        {
            prune_nulls_node(json_object_get(s, "items"), el);
        }
    }
}

void fakeapi__schema_prune_nulls(const json_t *schema, json_t *obj)
{
    if (json_is_object(schema))
        prune_nulls_node(schema, obj);
}
