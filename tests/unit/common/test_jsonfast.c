/*
 * test_jsonfast.c - kh_json_loadb (common/jsonfast.c) answers as json_loadb does: the
 * same document (members, order, types, bytes) or the same error, on
 * chosen texts and on 40,000 random ones (valid documents, and the same
 * with a byte changed, dropped or added).
 */
#include "kh/jsonfast.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parse text both ways with flags and assert the answers are the same. */
static void same(const char *text, size_t len, size_t flags)
{
    json_error_t ej, ef;
    json_t *j = json_loadb(text, len, flags, &ej);
    json_t *f = kh_json_loadb(text, len, flags, &ef);
    cr_assert_eq(!j, !f, "%.*s: jansson %s, fast %s", (int)len, text, j ? "parses" : ej.text,
                 f ? "parses" : ef.text);
    if (!j) {
        cr_assert_str_eq(ef.text, ej.text);
        cr_assert_eq(ef.position, ej.position);
        return;
    }
    char *dj = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    char *df = json_dumps(f, JSON_COMPACT | JSON_ENCODE_ANY);
    cr_assert(dj && df);
    cr_assert_str_eq(df, dj, "%.*s", (int)len, text);
    cr_assert(json_equal(j, f));
    free(dj);
    free(df);
    json_decref(j);
    json_decref(f);
}

static void both(const char *text)
{
    same(text, strlen(text), 0);
    same(text, strlen(text), JSON_REJECT_DUPLICATES);
}

Test(jsonfast, chosen_texts)
{
    static const char *const texts[] = {"{}",
                                        "[]",
                                        " \t\r\n{ } \n",
                                        "{\"a\":1}",
                                        "{\"a\":[1,2,{\"b\":null}],\"c\":true,\"d\":false}",
                                        "{\"a\":0}",
                                        "{\"a\":-0}",
                                        "{\"a\":01}",
                                        "{\"a\":-}",
                                        "{\"a\":1.5}",
                                        "{\"a\":1e5}",
                                        "{\"a\":1E5}",
                                        "{\"a\":123456789012345678}",
                                        "{\"a\":1234567890123456789}",
                                        "{\"a\":-9223372036854775808}",
                                        "{\"a\":99999999999999999999}",
                                        "{\"a\":1,\"a\":2}",
                                        "{\"a\":1,\"b\":2,\"a\":3}",
                                        "{\"a\":\"x\\\"y\\\\z\\/\\b\\f\\n\\r\\t\"}",
                                        "{\"a\":\"\\u00e9\"}",
                                        "{\"a\":\"\\u0000\"}",
                                        "{\"a\":\"\\ud83d\\ude00\"}",
                                        "{\"a\":\"\\ud83d\"}",
                                        "{\"a\":\"\\x\"}",
                                        "{\"a\\n\":1}",
                                        "{\"\\u0061\":1}",
                                        "{\"a\":\"caf\xc3\xa9\"}",
                                        "{\"a\":\"\xc3\"}",
                                        "{\"a\":\"\xc0\xaf\"}",
                                        "{\"a\":\"\xed\xa0\x80\"}",
                                        "{\"a\":\"\xf4\x90\x80\x80\"}",
                                        "{\"a\":\"tab\there\"}",
                                        "{\"a\":\"\x7f\"}",
                                        "{\"a\":tru}",
                                        "{\"a\":truex}",
                                        "{\"a\":nul}",
                                        "{\"a\":1}x",
                                        "{\"a\":1} {}",
                                        "{\"a\":1,}",
                                        "[1,]",
                                        "[,1]",
                                        "{,}",
                                        "{\"a\" 1}",
                                        "{\"a\":}",
                                        "{a:1}",
                                        "\xef\xbb\xbf{}",
                                        "",
                                        "   ",
                                        "1",
                                        "\"s\"",
                                        "null",
                                        "[1 2]",
                                        "[\"a\":1]",
                                        "{\"a\":[}",
                                        "[[[[[[[[[[]]]]]]]]]]",
                                        "{\"\":\"\"}",
                                        "{\"a\":\"\"}",
                                        "[-1,-12,0,7]",
                                        "[1-2]",
                                        "[--1]",
                                        "[1.]",
                                        "[.5]",
                                        "[1e]",
                                        "[\"unterminated]",
                                        "{\"a\":1",
                                        "[true,false,null]",
                                        "[truefalse]"};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        both(texts[i]);
    /* A NUL inside the buffer, in a string and between values. */
    same("{\"a\":\"x\0y\"}", 11, 0);
    same("[1,\0 2]", 7, 0);
    /* Nesting around the fast parse's limit and jansson's. */
    for (int depth = 500; depth <= 2100; depth += 800) {
        char *t = malloc((size_t)depth * 2 + 1);
        memset(t, '[', (size_t)depth);
        memset(t + depth, ']', (size_t)depth);
        t[depth * 2] = 0;
        both(t);
        free(t);
    }
}

static unsigned long long rng_state = 88172645463325252ULL;
static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        cr_assert_not_null(b->p);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void puts_(buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void gen_string(buf *b)
{
    static const char *const pieces[] = {
        "a",    "metadata", "x-y.z",   " ",       "\\\"",     "\\\\",         "\\n",
        "\\t",  "\\/",      "\\u0041", "\\u00e9", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
        "\x7f", "0",        "k"};
    put(b, "\"", 1);
    int n = (int)rnd(6);
    for (int i = 0; i < n; i++)
        puts_(b, pieces[rnd(sizeof pieces / sizeof *pieces)]);
    put(b, "\"", 1);
}

static void gen_value(buf *b, int depth)
{
    static const char *const ws[] = {"", "", "", " ", "\n", "\t", "\r\n  "};
    unsigned k = depth > 4 ? 3 + rnd(6) : rnd(9);
    char num[32];
    switch (k) {
    case 0:
    case 1: {
        put(b, "{", 1);
        int n = (int)rnd(5);
        for (int i = 0; i < n; i++) {
            if (i)
                puts_(b, ",");
            puts_(b, ws[rnd(7)]);
            if (rnd(8))
                snprintf(num, sizeof num, "\"k%u\"", rnd(6));
            else
                num[0] = 0;
            if (num[0])
                puts_(b, num);
            else
                gen_string(b);
            puts_(b, ws[rnd(7)]);
            puts_(b, ":");
            puts_(b, ws[rnd(7)]);
            gen_value(b, depth + 1);
        }
        puts_(b, ws[rnd(7)]);
        put(b, "}", 1);
        break;
    }
    case 2: {
        put(b, "[", 1);
        int n = (int)rnd(5);
        for (int i = 0; i < n; i++) {
            if (i)
                puts_(b, ",");
            puts_(b, ws[rnd(7)]);
            gen_value(b, depth + 1);
        }
        put(b, "]", 1);
        break;
    }
    case 3:
    case 4:
        gen_string(b);
        break;
    case 5: {
        static const char *const nums[] = {
            "0",    "-0",   "7",    "-42", "123456789012345678", "1234567890123456789",
            "1.25", "-3e2", "1E-7", "10"};
        puts_(b, nums[rnd(10)]);
        break;
    }
    case 6:
        puts_(b, "true");
        break;
    case 7:
        puts_(b, "false");
        break;
    default:
        puts_(b, "null");
        break;
    }
}

Test(jsonfast, random_texts_and_their_mutations)
{
    static const char noise[] = "{}[],:\"\\ 0-1e.atn\x01\xc3\xff";
    buf b = {0};
    for (int i = 0; i < 20000; i++) {
        b.len = 0;
        if (rnd(2))
            gen_value(&b, 0);
        else {
            put(&b, "{\"items\":", 9);
            gen_value(&b, 1);
            put(&b, "}", 1);
        }
        same(b.p, b.len, rnd(2) ? JSON_REJECT_DUPLICATES : 0);
        /* The same text with one byte changed, dropped or added. */
        size_t at = rnd((unsigned)b.len);
        char *m = malloc(b.len + 2);
        size_t mlen = b.len;
        memcpy(m, b.p, b.len);
        switch (rnd(3)) {
        case 0:
            m[at] = noise[rnd(sizeof noise - 1)];
            break;
        case 1:
            memmove(m + at, m + at + 1, b.len - at - 1);
            mlen--;
            break;
        default:
            memmove(m + at + 1, m + at, b.len - at);
            m[at] = noise[rnd(sizeof noise - 1)];
            mlen++;
            break;
        }
        same(m, mlen, rnd(2) ? JSON_REJECT_DUPLICATES : 0);
        free(m);
    }
    free(b.p);
}

/* kh_json_dump_compact writes json_dumps(JSON_COMPACT | JSON_ENCODE_ANY)'s
 * bytes: on the documents the random texts make, on scalars, escapes and
 * reals, and on strings json_stringn_nocheck made (not checked, as said). */
static void same_dump(const json_t *v)
{
    char *j = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    size_t len = 0;
    char *f = kh_json_dump_compact(v, &len);
    cr_assert(j && f);
    cr_assert(len == strlen(j) && !strcmp(f, j), "jansson %s, fast %s", j, f);
    free(j);
    free(f);
}

Test(jsonfast, dumps_as_json_dumps)
{
    buf b = {0};
    int docs = 0;
    for (int i = 0; i < 5000; i++) {
        b.len = 0;
        gen_value(&b, 0);
        json_t *v = json_loadb(b.p, b.len, 0, NULL);
        if (!v)
            continue;
        same_dump(v);
        json_decref(v);
        docs++;
    }
    free(b.p);
    cr_assert_gt(docs, 1000);
    static const char *const texts[] = {
        "{\"a\\u00e9b\":\"\\u0000\\u0001\\u001f\\\"\\\\/\\b\\f\\n\\r\\t\\u00e9\\u2028\"}",
        "[1.5,-0.0,1e300,2.5e-7,123456789012345678,-9223372036854775808]",
        "{\"z\":1,\"a\":2,\"m\":{},\"n\":[],\"t\":true,\"f\":false,\"0\":null}",
        "{\"k\\\"\\\\\\u0001\":[0,-1,9,10,99,100,-10],\"\":\"\",\"e\":{\"\\n\":[[]]}}",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        json_t *v = json_loads(texts[i], JSON_ALLOW_NUL, NULL);
        cr_assert(v, "%s", texts[i]);
        same_dump(v);
        json_decref(v);
    }
    json_t *scalars[] = {json_string("x\"y"), json_integer(-3), json_real(0.1), json_true(),
                         json_null()};
    for (size_t i = 0; i < sizeof scalars / sizeof *scalars; i++) {
        same_dump(scalars[i]);
        json_decref(scalars[i]);
    }
    /* Each byte that needs an escape at each place of a string, around the
     * eight-byte words the dump looks at: as jansson escapes it. */
    static const char specials[] = {'"', '\\', '\x01', '\n', '\x1f', '\x7f'};
    for (size_t k = 0; k < sizeof specials; k++) {
        for (size_t at = 0; at < 21; at++) {
            char t[22] = "abcdefghij\xc3\xa9lmnopqrst";
            if (at == 10 || at == 11)
                continue; /* keep the UTF-8 pair whole */
            t[at] = specials[k];
            json_t *v = json_pack("{s:s}", t, t);
            cr_assert(v, "%zu %zu", k, at);
            same_dump(v);
            json_decref(v);
        }
    }
    /* Not UTF-8: jansson refuses it, the fast dump writes the bytes. */
    json_t *bad = json_pack("{s:o}", "k", json_stringn_nocheck("\xff", 1));
    size_t len = 0;
    char *f = kh_json_dump_compact(bad, &len);
    cr_assert(!json_dumps(bad, JSON_COMPACT));
    cr_assert(f && !kh_json_utf8_ok(f, len));
    free(f);
    json_decref(bad);
}
