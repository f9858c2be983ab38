/*
 * jsonfast.c - a recursive-descent parse of plain JSON straight into
 * jansson values (jsonfast.h). Whenever the text holds something this
 * parse does not answer exactly as jansson would, it gives up and jansson
 * parses the whole text again, so errors and their messages are jansson's.
 */
#include "kh/jsonfast.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FAST_MAX_DEPTH 512 /* jansson's limit is 2048: deeper texts go to it */
#define FAST_MAX_DIGITS 18 /* always fits in json_int_t, no ERANGE */

typedef struct fast {
    const unsigned char *p, *end;
    size_t flags;
    int depth;
    char *tmp; /* unescaped string */
    size_t tmp_cap;
} fast;

static void skip_ws(fast *f)
{
    while (f->p < f->end && (*f->p == ' ' || *f->p == '\n' || *f->p == '\r' || *f->p == '\t'))
        f->p++;
}

static bool cont(const unsigned char *p, const unsigned char *end)
{
    return p < end && (*p & 0xC0) == 0x80;
}

/* The length of the UTF-8 sequence at p that jansson accepts (no overlong
 * forms, no surrogates, nothing past U+10FFFF), or 0. */
int kh_json_utf8_len(const char *at, const char *e)
{
    const unsigned char *p = (const unsigned char *)at, *end = (const unsigned char *)e;
    unsigned char c = p[0];
    if (c >= 0xC2 && c <= 0xDF)
        return cont(p + 1, end) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (!cont(p + 1, end) || !cont(p + 2, end))
            return 0;
        if (c == 0xE0 && p[1] < 0xA0)
            return 0; /* overlong */
        if (c == 0xED && p[1] > 0x9F)
            return 0; /* a surrogate */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (!cont(p + 1, end) || !cont(p + 2, end) || !cont(p + 3, end))
            return 0;
        if (c == 0xF0 && p[1] < 0x90)
            return 0; /* overlong */
        if (c == 0xF4 && p[1] > 0x8F)
            return 0; /* past U+10FFFF */
        return 4;
    }
    return 0;
}

bool kh_json_utf8_ok(const char *s, size_t len)
{
    const char *end = s + len;
    while (s < end) {
        if (end - s >= 8 && !kh_json_word_high(s)) {
            s += 8;
            continue;
        }
        if ((unsigned char)*s < 0x80) {
            s++;
            continue;
        }
        int k = kh_json_utf8_len(s, end);
        if (k == 0)
            return false;
        s += k;
    }
    return true;
}

static bool tmp_put(fast *f, size_t *used, const unsigned char *s, size_t n)
{
    if (!n)
        return true;
    if (n > f->tmp_cap - *used) {
        size_t cap = f->tmp_cap ? f->tmp_cap : 256;
        while (n > cap - *used)
            cap *= 2;
        char *t = realloc(f->tmp, cap);
        if (!t)
            return false;
        f->tmp = t;
        f->tmp_cap = cap;
    }
    memcpy(f->tmp + *used, s, n);
    *used += n;
    return true;
}

/* A string after its opening quote: its bytes in *s (into the text, or
 * f->tmp when it had escapes, until the next string), false to give up. */
static bool string(fast *f, const char **s, size_t *n)
{
    const unsigned char *start = f->p, *q = start, *end = f->end;
    bool ascii = true;
    while (end - q >= 8 && !kh_json_word_special(q)) {
        ascii &= !kh_json_word_high(q);
        q += 8;
    }
    for (; q < end; q++) {
        unsigned char c = *q;
        if (c == '"' || c == '\\' || c < 0x20)
            break;
        ascii &= c < 0x80;
    }
    if (q >= end || *q < 0x20)
        return false;
    if (*q == '"') {
        if (!ascii && !kh_json_utf8_ok((const char *)start, (size_t)(q - start)))
            return false;
        *s = (const char *)start;
        *n = (size_t)(q - start);
        f->p = q + 1;
        return true;
    }
    size_t used = 0;
    const unsigned char *run = start;
    for (q = start;; q++) {
        if (q >= f->end || *q < 0x20)
            return false;
        if (*q == '"')
            break;
        if (*q != '\\')
            continue;
        if (!tmp_put(f, &used, run, (size_t)(q - run)) || q + 1 >= f->end)
            return false;
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *at = q[1] ? memchr(from, q[1], sizeof from - 1) : NULL;
        if (!at) /* \u escapes (surrogates, \u0000) and invalid ones: jansson's */
            return false;
        if (!tmp_put(f, &used, (const unsigned char *)&to[at - from], 1))
            return false;
        q++;
        run = q + 1;
    }
    if (!tmp_put(f, &used, run, (size_t)(q - run)))
        return false;
    if (!kh_json_utf8_ok(f->tmp, used))
        return false;
    *s = f->tmp;
    *n = used;
    f->p = q + 1;
    return true;
}

/* What may end a number or a literal: what the grammar takes next. */
static bool ends_token(const fast *f)
{
    if (f->p >= f->end)
        return true;
    unsigned char c = *f->p;
    return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static json_t *number(fast *f)
{
    const unsigned char *q = f->p;
    bool neg = q < f->end && *q == '-';
    if (neg)
        q++;
    const unsigned char *digits = q;
    while (q < f->end && *q >= '0' && *q <= '9')
        q++;
    size_t nd = (size_t)(q - digits);
    if (!nd || nd > FAST_MAX_DIGITS || (nd > 1 && *digits == '0'))
        return NULL;
    json_int_t v = 0;
    for (const unsigned char *d = digits; d < q; d++)
        v = v * 10 + (*d - '0');
    f->p = q;
    if (!ends_token(f)) /* a fraction, an exponent, or garbage */
        return NULL;
    return json_integer(neg ? -v : v);
}

static json_t *literal(fast *f, const char *word, size_t n, json_t *v)
{
    if ((size_t)(f->end - f->p) < n || memcmp(f->p, word, n))
        return NULL;
    f->p += n;
    return ends_token(f) ? v : NULL;
}

static json_t *value(fast *f);

static json_t *object(fast *f)
{
    json_t *obj = json_object();
    if (!obj)
        return NULL;
    f->p++; /* '{' */
    skip_ws(f);
    if (f->p < f->end && *f->p == '}') {
        f->p++;
        return obj;
    }
    for (;;) {
        const char *key;
        char *own = NULL; /* an unescaped key, which the value's strings would overwrite */
        size_t klen;
        if (f->p >= f->end || *f->p != '"')
            goto fail;
        f->p++;
        if (!string(f, &key, &klen))
            goto fail;
        if (key == f->tmp) {
            if (!(own = malloc(klen ? klen : 1)))
                goto fail;
            memcpy(own, key, klen);
            key = own;
        }
        if ((f->flags & JSON_REJECT_DUPLICATES) && json_object_getn(obj, key, klen))
            goto fail_key;
        skip_ws(f);
        if (f->p >= f->end || *f->p != ':')
            goto fail_key;
        f->p++;
        skip_ws(f);
        json_t *v = value(f); /* setn_new takes it, even when it fails */
        if (!v || json_object_setn_new_nocheck(obj, key, klen, v) < 0)
            goto fail_key;
        free(own);
        skip_ws(f);
        if (f->p < f->end && *f->p == ',') {
            f->p++;
            skip_ws(f);
            continue;
        }
        if (f->p < f->end && *f->p == '}') {
            f->p++;
            return obj;
        }
        goto fail;
    fail_key:
        free(own);
        goto fail;
    }
fail:
    json_decref(obj);
    return NULL;
}

static json_t *array(fast *f)
{
    json_t *arr = json_array();
    if (!arr)
        return NULL;
    f->p++; /* '[' */
    skip_ws(f);
    if (f->p < f->end && *f->p == ']') {
        f->p++;
        return arr;
    }
    for (;;) {
        json_t *v = value(f);
        if (!v || json_array_append_new(arr, v) < 0)
            goto fail;
        skip_ws(f);
        if (f->p < f->end && *f->p == ',') {
            f->p++;
            skip_ws(f);
            continue;
        }
        if (f->p < f->end && *f->p == ']') {
            f->p++;
            return arr;
        }
        goto fail;
    }
fail:
    json_decref(arr);
    return NULL;
}

/* One value at f->p (no whitespace before it). NULL to give up. */
static json_t *value(fast *f)
{
    if (f->p >= f->end)
        return NULL;
    json_t *v = NULL;
    switch (*f->p) {
    case '{':
    case '[':
        if (++f->depth > FAST_MAX_DEPTH)
            return NULL;
        v = *f->p == '{' ? object(f) : array(f);
        f->depth--;
        return v;
    case '"': {
        const char *s;
        size_t n;
        f->p++;
        return string(f, &s, &n) ? json_stringn_nocheck(s, n) : NULL;
    }
    case 't':
        return literal(f, "true", 4, json_true());
    case 'f':
        return literal(f, "false", 5, json_false());
    case 'n':
        return literal(f, "null", 4, json_null());
    default:
        return number(f);
    }
}

json_t *kh_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *err)
{
    if ((flags & ~(size_t)JSON_REJECT_DUPLICATES) || !buf)
        return json_loadb(buf, len, flags, err);
    fast f = {
        .p = (const unsigned char *)buf, .end = (const unsigned char *)buf + len, .flags = flags};
    skip_ws(&f);
    json_t *v = NULL;
    /* The top level is an object or an array (no JSON_DECODE_ANY). */
    if (f.p < f.end && (*f.p == '{' || *f.p == '['))
        v = value(&f);
    skip_ws(&f);
    free(f.tmp);
    if (v && f.p == f.end)
        return v;
    json_decref(v);
    return json_loadb(buf, len, flags, err);
}
