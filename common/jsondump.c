/*
 * jsondump.c - compact JSON text as json_dumps writes it (kh/jsonfast.h):
 * fakeapi's stored texts, libctrl's request bodies.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kh/jsonfast.h"

/*
 * Byte for byte what json_dumps(JSON_COMPACT) writes (members in insertion
 * order, the same escapes), written straight into one buffer. jansson's own dumper decodes every
 * string one UTF-8 character at a time and hands each run to a callback: it was a quarter of the
 * instructions of a create of a 1 KB configmap.
 */
typedef struct dump_buf {
    char *p;
    size_t len, cap; /* cap > len always leaves room for the final '\0' */
    bool failed;
} dump_buf;

#define DUMP_MAX_BYTES ((size_t)1 << 30) /* far above any request body limit */
#define DUMP_MAX_DEPTH 2048              /* jansson's parser nests no deeper */

/* Room for n more bytes and the final '\0'; false (and failed) if none. */
static bool reserve(dump_buf *b, size_t n)
{
    if (b->failed)
        return false;
    if (n < b->cap - b->len)
        return true;
    size_t cap = b->cap ? b->cap : 2048;
    while (n >= cap - b->len && cap <= DUMP_MAX_BYTES)
        cap *= 2;
    char *p = cap <= DUMP_MAX_BYTES ? realloc(b->p, cap) : NULL;
    if (!p) {
        b->failed = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

static void dump_put(dump_buf *b, const char *s, size_t n)
{
    if (reserve(b, n)) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
    }
}

static void dump_char(dump_buf *b, char c)
{
    if (reserve(b, 1))
        b->p[b->len++] = c;
}

/* Does s need no escape at all (most strings: names, times, labels)? */
static bool plain(const char *s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        if (kh_json_word_special(s + i))
            return false;
    for (; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == '"' || ch == '\\')
            return false;
    }
    return true;
}

/* "s" and then tail (":" after a key, or nothing: tn bytes). */
static void dump_string(dump_buf *b, const char *s, size_t n, const char *tail, size_t tn)
{
    static const char escapes[] = "\"\\\b\f\n\r\t", letters[] = "\"\\bfnrt";
    static const char hex[] = "0123456789ABCDEF";
    if (plain(s, n)) {
        if (reserve(b, n + 2 + tn)) {
            char *o = b->p + b->len;
            *o++ = '"';
            memcpy(o, s, n);
            o += n;
            *o++ = '"';
            memcpy(o, tail, tn);
            b->len += n + 2 + tn;
        }
        return;
    }
    dump_char(b, '"');
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != '"' && ch != '\\')
            continue;
        dump_put(b, s + from, i - from);
        from = i + 1;
        const char *p = ch ? memchr(escapes, ch, sizeof escapes - 1) : NULL;
        if (p) {
            char esc[2] = {'\\', letters[p - escapes]};
            dump_put(b, esc, 2);
        } else {
            char esc[6] = {'\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15]};
            dump_put(b, esc, 6);
        }
    }
    dump_put(b, s + from, n - from);
    dump_char(b, '"');
    dump_put(b, tail, tn);
}

/* An integer in decimal, as printf's %lld writes it. */
static void dump_integer(dump_buf *b, json_int_t v)
{
    char num[24], *e = num + sizeof num, *p = e;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    dump_put(b, p, (size_t)(e - p));
}

static void dump_value(dump_buf *b, const json_t *v, int depth)
{
    if (depth > DUMP_MAX_DEPTH) {
        b->failed = true; /* or a loop, which json_dumps refuses too */
        return;
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        json_t *o = (json_t *)v;
        dump_char(b, '{');
        for (void *it = json_object_iter(o); it;) {
            dump_string(b, json_object_iter_key(it), json_object_iter_key_len(it), ":", 1);
            dump_value(b, json_object_iter_value(it), depth + 1);
            if ((it = json_object_iter_next(o, it)))
                dump_char(b, ',');
        }
        dump_char(b, '}');
        break;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        dump_char(b, '[');
        for (size_t i = 0; i < n; i++) {
            if (i)
                dump_char(b, ',');
            dump_value(b, json_array_get(v, i), depth + 1);
        }
        dump_char(b, ']');
        break;
    }
    case JSON_STRING:
        dump_string(b, json_string_value(v), json_string_length(v), "", 0);
        break;
    case JSON_INTEGER:
        dump_integer(b, json_integer_value(v));
        break;
    case JSON_REAL: {
        /* Rare in objects; jansson's formatting of doubles is its own. */
        char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        if (t)
            dump_put(b, t, strlen(t));
        else
            b->failed = true;
        free(t);
        break;
    }
    case JSON_TRUE:
        dump_put(b, "true", 4);
        break;
    case JSON_FALSE:
        dump_put(b, "false", 5);
        break;
    case JSON_NULL:
        dump_put(b, "null", 4);
        break;
    }
}

char *kh_json_dump_compact(const json_t *obj, size_t *len)
{
    dump_buf b = {0};
    dump_value(&b, obj, 0);
    if (b.failed || !b.p) {
        free(b.p);
        return NULL;
    }
    b.p[b.len] = '\0';
    *len = b.len;
    return b.p;
}
