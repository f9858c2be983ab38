/*
 * decode.c - check a JSON object against a kind's table of typed fields the
 * way kube-apiserver's decoders would reject it, and word the error as each
 * of those decoders does (decode.h).
 *
 * Go's encoding/json reports the innermost struct holding the field and
 * the JSON names from the root without map keys or list positions
 * ("ObjectMeta.metadata.labels"); the value's JSON kind (string, number,
 * bool, array, object); the Go type decoded into, which inside a list or map
 * is the element's. Types whose UnmarshalJSON decodes a string first (Time)
 * lose the context ("Go value of type string").
 */
#include "decode.h"

#include <math.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

typedef struct walk {
    fakeapi__decode_error *err;
    char go[256]; /* JSON names from the root, '.'-joined */
    size_t glen;
    char full[512]; /* ".a.b[0].c" */
    size_t flen;
} walk;

/* Append to a path (cut at its size); returns the length to pop back to. */
static size_t push(char *buf, size_t cap, size_t *len, const char *sep, const char *key, long index)
{
    size_t was = *len;
    int n = key ? snprintf(buf + was, cap - was, "%s%s", sep, key)
                : snprintf(buf + was, cap - was, "[%ld]", index);
    if (n > 0)
        *len = was + (size_t)n < cap ? was + (size_t)n : cap - 1;
    return was;
}

static void pop(char *buf, size_t *len, size_t was)
{
    *len = was;
    buf[was] = '\0';
}

static const char *base_name(const char *go)
{
    const char *dot = strrchr(go, '.');
    return dot ? dot + 1 : go;
}

/* The Go type of one value of f (an element, for lists and maps). */
static const char *elem_go(const fakeapi__dfield *f)
{
    if (f->go)
        return f->go;
    switch (f->type) {
    case FAKEAPI__D_STRING:
        return "string";
    case FAKEAPI__D_BOOL:
        return "bool";
    case FAKEAPI__D_INT32:
        return "int32";
    case FAKEAPI__D_INT64:
        return "int64";
    case FAKEAPI__D_DOUBLE:
        return "float64";
    case FAKEAPI__D_BYTES:
        return "[]uint8";
    case FAKEAPI__D_TIME:
        return "v1.Time";
    case FAKEAPI__D_ANY:
        return "interface {}";
    case FAKEAPI__D_MESSAGE:
    default:
        return f->msg ? f->msg->go : "struct {}";
    }
}

/* Its reflect kind, which the unstructured converter names. */
static const char *elem_kind(const fakeapi__dfield *f)
{
    switch (f->type) {
    case FAKEAPI__D_STRING:
        return "string";
    case FAKEAPI__D_BOOL:
        return "bool";
    case FAKEAPI__D_INT32:
        return "int32";
    case FAKEAPI__D_INT64:
        return "int64";
    case FAKEAPI__D_DOUBLE:
        return "float64";
    case FAKEAPI__D_BYTES:
        return "slice";
    case FAKEAPI__D_ANY:
        return "interface";
    case FAKEAPI__D_TIME:
    case FAKEAPI__D_MESSAGE:
    default:
        return "struct";
    }
}

static int fail(walk *w, fakeapi__decode_code code, const char *holder, const char *go_type,
                const char *target, const json_t *v)
{
    fakeapi__decode_error *e = w->err;
    e->code = code;
    snprintf(e->go_struct, sizeof e->go_struct, "%s", holder);
    snprintf(e->go_path, sizeof e->go_path, "%s", w->go);
    snprintf(e->full_path, sizeof e->full_path, "%s", w->full);
    snprintf(e->go_type, sizeof e->go_type, "%s", go_type);
    snprintf(e->target, sizeof e->target, "%s", target);
    e->value = v;
    return -1;
}

void fakeapi__go_float(char *buf, size_t len, double d)
{
    if (isnan(d)) {
        snprintf(buf, len, "NaN");
        return;
    }
    if (isinf(d)) {
        snprintf(buf, len, "%cInf", d < 0 ? '-' : '+');
        return;
    }
    char e[40];
    int prec = 1;
    for (; prec < 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, d);
        if (strtod(e, NULL) == d)
            break;
    }
    snprintf(e, sizeof e, "%.*e", prec - 1, d);
    int exp = atoi(strchr(e, 'e') + 1);
    if (exp < -4 || exp >= 6)
        snprintf(buf, len, "%s", e);
    else
        snprintf(buf, len, "%.*f", prec - 1 - exp > 0 ? prec - 1 - exp : 0, d);
}

static int check_struct(walk *w, const char *holder, const fakeapi__dfield *fields,
                        const json_t *obj);

/* One value of f (not null) inside struct holder. */
static int check_one(walk *w, const char *holder, const fakeapi__dfield *f, const json_t *v)
{
    const char *go = elem_go(f), *kind = elem_kind(f);
    switch (f->type) {
    case FAKEAPI__D_STRING:
        return json_is_string(v) ? 0 : fail(w, FAKEAPI__DECODE_TYPE, holder, go, kind, v);
    case FAKEAPI__D_BOOL:
        return json_is_boolean(v) ? 0 : fail(w, FAKEAPI__DECODE_TYPE, holder, go, kind, v);
    case FAKEAPI__D_INT32:
    case FAKEAPI__D_INT64:
        if (json_is_integer(v)) {
            json_int_t n = json_integer_value(v);
            if (f->type == FAKEAPI__D_INT64 || (n >= INT32_MIN && n <= INT32_MAX))
                return 0;
            fail(w, FAKEAPI__DECODE_NUMBER, holder, go, kind, v);
            snprintf(w->err->number, sizeof w->err->number, "%lld", (long long)n);
            return -1;
        }
        if (json_is_real(v)) {
            fail(w, FAKEAPI__DECODE_NUMBER, holder, go, kind, v);
            fakeapi__go_float(w->err->number, sizeof w->err->number, json_real_value(v));
            return -1;
        }
        return fail(w, FAKEAPI__DECODE_TYPE, holder, go, kind, v);
    case FAKEAPI__D_DOUBLE:
        return json_is_number(v) ? 0 : fail(w, FAKEAPI__DECODE_TYPE, holder, go, kind, v);
    case FAKEAPI__D_BYTES: {
        if (!json_is_string(v))
            return fail(w, FAKEAPI__DECODE_TYPE, holder, go, kind, v);
        long off = fakeapi__base64_error(json_string_value(v), json_string_length(v));
        if (off < 0)
            return 0;
        fail(w, FAKEAPI__DECODE_BASE64, holder, go, kind, v);
        w->err->offset = (size_t)off;
        return -1;
    }
    case FAKEAPI__D_TIME:
        return json_is_string(v) ? 0 : fail(w, FAKEAPI__DECODE_TIME, holder, "string", "string", v);
    case FAKEAPI__D_ANY:
        return 0;
    case FAKEAPI__D_MESSAGE:
    default:
        if (!json_is_object(v))
            return fail(w, FAKEAPI__DECODE_TYPE, holder, go, kind, v);
        if (!f->msg || !f->msg->fields)
            return 0;
        return check_struct(w, base_name(f->msg->go), f->msg->fields, v);
    }
}

static int check_field(walk *w, const char *holder, const fakeapi__dfield *f, const json_t *v)
{
    char go[160];
    if (f->shape == FAKEAPI__D_LIST) {
        if (!json_is_array(v)) {
            snprintf(go, sizeof go, "[]%s", elem_go(f));
            return fail(w, FAKEAPI__DECODE_TYPE, holder, go, "slice", v);
        }
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e)
        {
            if (json_is_null(e))
                continue;
            size_t was = push(w->full, sizeof w->full, &w->flen, "", NULL, (long)i);
            int rc = check_one(w, holder, f, e);
            pop(w->full, &w->flen, was);
            if (rc < 0)
                return -1;
        }
        return 0;
    }
    if (f->shape == FAKEAPI__D_MAP) {
        if (!json_is_object(v)) {
            snprintf(go, sizeof go, "map[string]%s", elem_go(f));
            return fail(w, FAKEAPI__DECODE_TYPE, holder, go, "map", v);
        }
        const char *k;
        json_t *e;
        json_object_foreach((json_t *)v, k, e)
        {
            if (json_is_null(e))
                continue;
            size_t was = push(w->full, sizeof w->full, &w->flen, ".", k, 0);
            int rc = check_one(w, holder, f, e);
            pop(w->full, &w->flen, was);
            if (rc < 0)
                return -1;
        }
        return 0;
    }
    return check_one(w, holder, f, v);
}

static const fakeapi__dfield *find_field(const fakeapi__dfield *fields, const char *k)
{
    for (const fakeapi__dfield *f = fields; f->json; f++)
        if (!strcmp(f->json, k))
            return f;
    return NULL;
}

/* Fields in document order: Go's decoder reports the first error it meets. */
static int check_struct(walk *w, const char *holder, const fakeapi__dfield *fields,
                        const json_t *obj)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        const fakeapi__dfield *f = find_field(fields, k);
        if (!f || json_is_null(v))
            continue;
        size_t g = push(w->go, sizeof w->go, &w->glen, w->glen ? "." : "", k, 0);
        size_t fl = push(w->full, sizeof w->full, &w->flen, ".", k, 0);
        int rc = check_field(w, holder, f, v);
        pop(w->go, &w->glen, g);
        pop(w->full, &w->flen, fl);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static const fakeapi__dfield *root_fields(const fakeapi__resource *res)
{
    if (!res->custom)
        for (const fakeapi__dkind *k = fakeapi__decode_kinds; k->group; k++)
            if (!strcmp(k->group, res->group) && !strcmp(k->kind, res->kind))
                return k->fields;
    return fakeapi__decode_custom_root;
}

int fakeapi__decode_check(const fakeapi__resource *res, const json_t *obj,
                          fakeapi__decode_error *err)
{
    fakeapi__decode_error scratch;
    walk w = {.err = err ? err : &scratch};
    memset(w.err, 0, sizeof *w.err);
    /* The serializer reads apiVersion and kind first, into an unnamed struct. */
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        if ((!strcmp(k, "apiVersion") || !strcmp(k, "kind")) && !json_is_string(v) &&
            !json_is_null(v)) {
            snprintf(w.go, sizeof w.go, "%s", k);
            snprintf(w.full, sizeof w.full, ".%s", k);
            return fail(&w, FAKEAPI__DECODE_TYPEMETA, "", "string", "string", v);
        }
    }
    return check_struct(&w, res->kind, root_fields(res), obj);
}

/* ---- messages ----------------------------------------------------------- */

/* The JSON kind encoding/json names. */
static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "bool";
    case JSON_ARRAY:
        return "array";
    case JSON_OBJECT:
        return "object";
    default:
        return "null";
    }
}

/* The reflect kind of the value json.Unmarshal makes (ints preserved). */
static const char *go_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_INTEGER:
        return "int64";
    case JSON_REAL:
        return "float64";
    case JSON_ARRAY:
        return "slice";
    case JSON_OBJECT:
        return "map";
    default:
        return json_kind(v);
    }
}

static bool is_number_kind(const char *k)
{
    return !strcmp(k, "int32") || !strcmp(k, "int64") || !strcmp(k, "float64");
}

static void msg_json(const fakeapi__decode_error *e, char *buf, size_t len)
{
    switch (e->code) {
    case FAKEAPI__DECODE_NUMBER:
        snprintf(buf, len, "json: cannot unmarshal number %s into Go struct field %s.%s of type %s",
                 e->number, e->go_struct, e->go_path, e->go_type);
        break;
    case FAKEAPI__DECODE_BASE64:
        snprintf(buf, len, "illegal base64 data at input byte %zu", e->offset);
        break;
    case FAKEAPI__DECODE_TIME:
        snprintf(buf, len, "json: cannot unmarshal %s into Go value of type string",
                 json_kind(e->value));
        break;
    case FAKEAPI__DECODE_VALUE:
        if (e->number[0])
            snprintf(buf, len, "json: cannot unmarshal number %s into Go value of type %s",
                     e->number, e->go_type);
        else
            snprintf(buf, len, "json: cannot unmarshal %s into Go value of type %s",
                     json_kind(e->value), e->go_type);
        break;
    case FAKEAPI__DECODE_QUANTITY:
        snprintf(buf, len, "%s", e->text ? e->text : "");
        break;
    case FAKEAPI__DECODE_TYPEMETA:
        snprintf(buf, len,
                 "couldn't get version/kind; json parse error: json: cannot unmarshal %s into Go "
                 "struct field .%s of type string",
                 json_kind(e->value), e->go_path);
        break;
    default:
        snprintf(buf, len, "json: cannot unmarshal %s into Go struct field %s.%s of type %s",
                 json_kind(e->value), e->go_struct, e->go_path, e->go_type);
        break;
    }
}

/* runtime.DefaultUnstructuredConverter.FromUnstructured's wording. */
static void msg_unstructured(const fakeapi__decode_error *e, char *buf, size_t len)
{
    const char *src = go_kind(e->value), *dst = e->target;
    if (e->code == FAKEAPI__DECODE_BASE64)
        snprintf(buf, len, "error decoding from json: illegal base64 data at input byte %zu",
                 e->offset);
    else if (e->code == FAKEAPI__DECODE_TIME || e->code == FAKEAPI__DECODE_VALUE ||
             e->code == FAKEAPI__DECODE_QUANTITY)
        msg_json(e, buf, len);
    else if (!strcmp(dst, "map"))
        snprintf(buf, len, "cannot restore map from %s", src);
    else if (!strcmp(dst, "slice"))
        snprintf(buf, len, "cannot restore slice from %s", src);
    else if (!strcmp(dst, "struct"))
        snprintf(buf, len, "cannot restore struct from: %s", src);
    else if ((is_number_kind(src) && is_number_kind(dst)) ||
             (!strcmp(src, "int64") && !strcmp(dst, "string")))
        /* Go converts between these, but not a fraction to an integer (nor,
         * here, an int32 overflow, which Go would wrap). */
        snprintf(buf, len, "cannot convert %s to %s", src, dst);
    else
        snprintf(buf, len, "unrecognized type: %s", dst);
}

/* structured-merge-diff's wording for a typed patch object, approximated. */
static void msg_apply(const fakeapi__decode_error *e, char *buf, size_t len)
{
    if (e->code == FAKEAPI__DECODE_BASE64) {
        snprintf(buf, len, "%s: error decoding from json: illegal base64 data at input byte %zu",
                 e->full_path, e->offset);
        return;
    }
    const char *t = e->target;
    if (is_number_kind(t)) {
        const char *got = json_is_object(e->value)  ? "map[string]interface {}"
                          : json_is_array(e->value) ? "[]interface {}"
                                                    : go_kind(e->value);
        snprintf(buf, len, "%s: expected numeric (int or float), got %s", e->full_path, got);
        return;
    }
    const char *want = !strcmp(t, "slice")    ? "list"
                       : !strcmp(t, "bool")   ? "boolean"
                       : !strcmp(t, "string") ? "string"
                                              : "map";
    char *shown = fakeapi__decode_gofmt(e->value, 200);
    snprintf(buf, len, "%s: expected %s, got &{%s}", e->full_path, want, shown ? shown : "");
    free(shown);
}

void fakeapi__decode_message(const fakeapi__decode_error *err, fakeapi__decode_dialect d, char *buf,
                             size_t len)
{
    if (!len)
        return;
    if (d == FAKEAPI__DIALECT_UNSTRUCTURED)
        msg_unstructured(err, buf, len);
    else if (d == FAKEAPI__DIALECT_APPLY)
        msg_apply(err, buf, len);
    else
        msg_json(err, buf, len);
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void gofmt(const json_t *v, fakeapi__strbuf *b, int depth)
{
    if (b->failed)
        return;
    if (depth > 64) {
        fakeapi__strbuf_adds(b, "...");
        return;
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        /* Go prints map keys sorted. */
        size_t n = json_object_size(v), i = 0;
        const char **keys = calloc(n ? n : 1, sizeof *keys);
        const char *k;
        json_t *e;
        if (!keys) {
            b->failed = true;
            return;
        }
        json_object_foreach((json_t *)v, k, e)
        {
            keys[i++] = k;
        }
        qsort(keys, n, sizeof *keys, key_cmp);
        fakeapi__strbuf_adds(b, "map[");
        for (i = 0; i < n; i++) {
            fakeapi__strbuf_addf(b, "%s%s:", i ? " " : "", keys[i]);
            gofmt(json_object_get(v, keys[i]), b, depth + 1);
        }
        fakeapi__strbuf_adds(b, "]");
        free(keys);
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *e;
        fakeapi__strbuf_adds(b, "[");
        json_array_foreach(v, i, e)
        {
            if (i)
                fakeapi__strbuf_adds(b, " ");
            gofmt(e, b, depth + 1);
        }
        fakeapi__strbuf_adds(b, "]");
        break;
    }
    case JSON_STRING:
        fakeapi__strbuf_add(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        fakeapi__strbuf_addf(b, "%lld", (long long)json_integer_value(v));
        break;
    case JSON_REAL: {
        char num[48];
        fakeapi__go_float(num, sizeof num, json_real_value(v));
        fakeapi__strbuf_adds(b, num);
        break;
    }
    case JSON_TRUE:
        fakeapi__strbuf_adds(b, "true");
        break;
    case JSON_FALSE:
        fakeapi__strbuf_adds(b, "false");
        break;
    default:
        fakeapi__strbuf_adds(b, "<nil>");
        break;
    }
}

char *fakeapi__decode_gofmt(const json_t *v, size_t max)
{
    /* Past max the text is cut (with "..."), not refused. */
    fakeapi__strbuf b = {0};
    gofmt(v, &b, 0);
    char *s = fakeapi__strbuf_take(&b, NULL);
    if (s && strlen(s) > max && max >= 3)
        memcpy(s + max - 3, "...", 4);
    return s;
}

void fakeapi__go_quote(fakeapi__strbuf *b, const char *s)
{
    static const char esc[] = "\a\b\f\n\r\t\v", letters[] = "abfnrtv";
    fakeapi__strbuf_adds(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        const char *e = *p ? strchr(esc, *p) : NULL;
        if (*p == '"' || *p == '\\')
            fakeapi__strbuf_addf(b, "\\%c", *p);
        else if (e)
            fakeapi__strbuf_addf(b, "\\%c", letters[e - esc]);
        else if (*p < 0x20 || *p == 0x7f)
            fakeapi__strbuf_addf(b, "\\x%02x", *p);
        else
            fakeapi__strbuf_add(b, p, 1);
    }
    fakeapi__strbuf_adds(b, "\"");
}

/* ---- base64 ------------------------------------------------------------- */

static int b64_value(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+')
        return 62;
    if (ch == '/')
        return 63;
    return -1;
}

static size_t skip_newlines(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/* Go's decodeQuantum, quantum after quantum, keeping only where it fails. */
long fakeapi__base64_error(const char *s, size_t n)
{
    size_t si = 0;
    for (;;) {
        for (int j = 0; j < 4; j++) {
            if (si == n)
                return j == 0 ? -1 : (long)si - j;
            unsigned char in = (unsigned char)s[si++];
            if (b64_value(in) >= 0)
                continue;
            if (in == '\n' || in == '\r') {
                j--;
                continue;
            }
            if (in != '=' || j < 2)
                return (long)(si - 1);
            if (j == 2) {
                /* "==" is expected; the first '=' is consumed. */
                si = skip_newlines(s, n, si);
                if (si == n)
                    return (long)n;
                if (s[si] != '=')
                    return (long)(si - 1);
                si++;
            }
            si = skip_newlines(s, n, si);
            return si < n ? (long)si : -1;
        }
    }
}

char *fakeapi__base64_encode(const void *p, size_t n, size_t *len)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *b = p;
    size_t o = 0;
    char *s = malloc((n + 2) / 3 * 4 + 1);
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t w = (uint32_t)b[i] << 16;
        if (i + 1 < n)
            w |= (uint32_t)b[i + 1] << 8;
        if (i + 2 < n)
            w |= b[i + 2];
        s[o++] = alphabet[(w >> 18) & 63];
        s[o++] = alphabet[(w >> 12) & 63];
        s[o++] = i + 1 < n ? alphabet[(w >> 6) & 63] : '=';
        s[o++] = i + 2 < n ? alphabet[w & 63] : '=';
    }
    s[o] = '\0';
    if (len)
        *len = o;
    return s;
}
