/*
 * packed.c - jansson values in a compact binary form (see packed_int.h).
 *
 * The form: a value is a tag byte and its payload. Counts and lengths are
 * LEB128 varints (one byte below 128), integers zigzag varints, reals the
 * 8 bytes of the double.
 *
 *   'o' count (key-length key value)*    object, keys in iteration order
 *   'a' count value*                     array
 *   's' length bytes                     string
 *   'i' zigzag                           integer
 *   'r' 8 bytes                          real
 *   't' 'f' 'n'                          true, false, null
 *
 * Why not JSON text: jansson spends most of a parse lexing and checking
 * UTF-8, and most of a dump escaping, while building the same tree from
 * lengths it already has costs about what json_deep_copy does - for a
 * 1.1 KB object, 2-3 us against ~20 us to parse and ~11 us to dump (a busy
 * 2-core machine). Sizes are about the same: a tag and a one-byte length
 * instead of quotes, colons and commas.
 */
#include "packed_int.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Keys are written and read with their lengths (they may hold NULs). */
#if JANSSON_VERSION_HEX < 0x020e00
#error "packed.c needs jansson 2.14 or later"
#endif

/* A writer that counts past cap (the size needed) but writes within it. */
typedef struct writer {
    char *buf;
    size_t cap, n;
} writer;

static void put_bytes(writer *w, const void *p, size_t len)
{
    if (len && w->n <= w->cap && len <= w->cap - w->n)
        memcpy(w->buf + w->n, p, len);
    w->n += len;
}

static inline void put_byte(writer *w, unsigned char c)
{
    if (w->n < w->cap)
        w->buf[w->n] = (char)c;
    w->n++;
}

static inline void put_varint(writer *w, uint64_t v)
{
    while (v >= 0x80) {
        put_byte(w, (unsigned char)(v | 0x80));
        v >>= 7;
    }
    put_byte(w, (unsigned char)v);
}

static bool pack_value(writer *w, const json_t *v, int depth)
{
    if (depth > CTRL__PACK_MAX_DEPTH)
        return false;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        put_byte(w, 'o');
        put_varint(w, json_object_size(v));
        /* jansson iterates only non-const objects; nothing is changed. */
        for (void *it = json_object_iter((json_t *)v); it;
             it = json_object_iter_next((json_t *)v, it)) {
            const char *key = json_object_iter_key(it);
            size_t klen = json_object_iter_key_len(it);
            put_varint(w, klen);
            put_bytes(w, key, klen);
            if (!pack_value(w, json_object_iter_value(it), depth + 1))
                return false;
        }
        return true;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        put_byte(w, 'a');
        put_varint(w, n);
        for (size_t i = 0; i < n; i++) {
            if (!pack_value(w, json_array_get(v, i), depth + 1))
                return false;
        }
        return true;
    }
    case JSON_STRING:
        put_byte(w, 's');
        put_varint(w, json_string_length(v));
        put_bytes(w, json_string_value(v), json_string_length(v));
        return true;
    case JSON_INTEGER: {
        uint64_t u = (uint64_t)json_integer_value(v);
        put_byte(w, 'i');
        put_varint(w, (u << 1) ^ (json_integer_value(v) < 0 ? UINT64_MAX : 0)); /* zigzag */
        return true;
    }
    case JSON_REAL: {
        double d = json_real_value(v);
        put_byte(w, 'r');
        put_bytes(w, &d, sizeof d);
        return true;
    }
    case JSON_TRUE:
        put_byte(w, 't');
        return true;
    case JSON_FALSE:
        put_byte(w, 'f');
        return true;
    case JSON_NULL:
        put_byte(w, 'n');
        return true;
    }
    return false;
}

size_t ctrl__pack(const json_t *v, char *buf, size_t cap)
{
    writer w = {.buf = buf, .cap = cap};
    return v && pack_value(&w, v, 0) ? w.n : 0;
}

/* ctrl__pack_string writes up to this much on the stack first. */
#define PACK_STACK 4096

int ctrl__pack_string(const json_t *v, const char *head, size_t head_len, json_t **out)
{
    char stack[PACK_STACK], *buf = stack;
    size_t cap = sizeof stack, len = 0;
    int rc = 0;
    for (;;) {
        if (head_len < cap) {
            if (head_len)
                memcpy(buf, head, head_len);
            if (!(len = ctrl__pack(v, buf + head_len, cap - head_len))) {
                rc = CTRL_ERR_ARG;
                goto out;
            }
            if (len <= cap - head_len)
                break;
        }
        if (buf != stack)
            free(buf);
        cap = head_len + (len ? len : PACK_STACK);
        if (!(buf = malloc(cap))) {
            rc = CTRL_ERR_NOMEM;
            goto out;
        }
    }
    json_t *s = json_stringn_nocheck(buf, head_len + len);
    if (!s)
        rc = CTRL_ERR_NOMEM;
    else
        *out = s;
out:
    if (buf != stack)
        free(buf);
    return rc;
}

typedef struct reader {
    const unsigned char *p, *end;
} reader;

static bool get_varint(reader *r, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64 && r->p < r->end; shift += 7) {
        unsigned char c = *r->p++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* A length or count that the rest of the buffer can hold (each item takes
 * at least min bytes). */
static inline bool get_size(reader *r, size_t min, size_t *out)
{
    uint64_t v;
    if (r->p < r->end && *r->p < 0x80) /* most lengths and counts: one byte */
        v = *r->p++;
    else if (!get_varint(r, &v))
        return false;
    if (v > (uint64_t)(r->end - r->p) / min)
        return false;
    *out = (size_t)v;
    return true;
}

static json_t *unpack_value(reader *r, int depth)
{
    if (depth > CTRL__PACK_MAX_DEPTH || r->p >= r->end)
        return NULL;
    size_t n;
    switch (*r->p++) {
    case 'o': {
        if (!get_size(r, 2, &n))
            return NULL;
        json_t *obj = json_object();
        for (size_t i = 0; obj && i < n; i++) {
            size_t klen;
            if (!get_size(r, 1, &klen)) {
                json_decref(obj);
                return NULL;
            }
            const char *key = (const char *)r->p;
            r->p += klen;
            int rc = json_object_setn_new_nocheck(obj, key, klen, unpack_value(r, depth + 1));
            if (rc < 0) { /* the value (NULL if malformed) was taken */
                json_decref(obj);
                return NULL;
            }
        }
        return obj;
    }
    case 'a': {
        if (!get_size(r, 1, &n))
            return NULL;
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < n; i++) {
            if (json_array_append_new(arr, unpack_value(r, depth + 1)) < 0) {
                json_decref(arr);
                return NULL;
            }
        }
        return arr;
    }
    case 's': {
        if (!get_size(r, 1, &n))
            return NULL;
        json_t *s = json_stringn_nocheck((const char *)r->p, n);
        r->p += n;
        return s;
    }
    case 'i': {
        uint64_t u;
        if (!get_varint(r, &u))
            return NULL;
        return json_integer((json_int_t)((u >> 1) ^ (0 - (u & 1)))); /* zigzag */
    }
    case 'r': {
        double d;
        if ((size_t)(r->end - r->p) < sizeof d)
            return NULL;
        memcpy(&d, r->p, sizeof d);
        r->p += sizeof d;
        return json_real(d);
    }
    case 't':
        return json_true();
    case 'f':
        return json_false();
    case 'n':
        return json_null();
    default:
        return NULL;
    }
}

json_t *ctrl__unpack(const char *buf, size_t len)
{
    reader r = {.p = (const unsigned char *)buf, .end = (const unsigned char *)buf + len};
    json_t *v = unpack_value(&r, 0);
    if (v && r.p != r.end) {
        json_decref(v);
        return NULL;
    }
    return v;
}
