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

static void dump_put(dump_buf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (n >= b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 2048;
        while (n >= cap - b->len && cap <= DUMP_MAX_BYTES)
            cap *= 2;
        char *p = cap <= DUMP_MAX_BYTES ? realloc(b->p, cap) : NULL;
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void dump_string(dump_buf *b, const char *s, size_t n)
{
    static const char plain[] = "\"\\\b\f\n\r\t", escaped[] = "\"\\bfnrt";
    dump_put(b, "\"", 1);
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != '"' && ch != '\\')
            continue;
        dump_put(b, s + from, i - from);
        from = i + 1;
        char esc[8];
        const char *p = ch ? memchr(plain, ch, sizeof plain - 1) : NULL;
        if (p)
            snprintf(esc, sizeof esc, "\\%c", escaped[p - plain]);
        else
            snprintf(esc, sizeof esc, "\\u%04X", ch);
        dump_put(b, esc, strlen(esc));
    }
    dump_put(b, s + from, n - from);
    dump_put(b, "\"", 1);
}

static void dump_value(dump_buf *b, const json_t *v, int depth)
{
    char num[32];
    if (depth > DUMP_MAX_DEPTH) {
        b->failed = true; /* or a loop, which json_dumps refuses too */
        return;
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *m;
        bool first = true;
        dump_put(b, "{", 1);
        json_object_foreach((json_t *)v, k, m)
        {
            if (!first)
                dump_put(b, ",", 1);
            first = false;
            dump_string(b, k, strlen(k));
            dump_put(b, ":", 1);
            dump_value(b, m, depth + 1);
        }
        dump_put(b, "}", 1);
        break;
    }
    case JSON_ARRAY:
        dump_put(b, "[", 1);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                dump_put(b, ",", 1);
            dump_value(b, json_array_get(v, i), depth + 1);
        }
        dump_put(b, "]", 1);
        break;
    case JSON_STRING:
        dump_string(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        dump_put(b, num,
                 (size_t)snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v)));
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
