/*
 * test_trace_line.c - a trace line (fakeapi__trace_line) is byte for byte
 * what json_pack + json_dumps(JSON_COMPACT | JSON_SORT_KEYS) wrote before
 * it: on chosen strings and on many random ones (escapes, control
 * characters, UTF-8 valid or not), and NULL wherever json_pack fails.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

/* The reference: what the trace wrote with jansson (NULL: no line). */
static char *reference(const char *client, const char *name, long long rv, long long t)
{
    json_t *o = json_pack("{s:s, s:s, s:I, s:I}", "client", client, "name", name, "rv",
                          (json_int_t)rv, "t", (json_int_t)t);
    if (!o)
        return NULL;
    json_object_set_new(o, "kind", json_string("event"));
    char *line = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
    return line;
}

static void check(const char *client, const char *name, long long rv, long long t)
{
    fakeapi__trace_field f[] = {
        {.key = "client", .str = client},       {.key = "kind", .str = "event"},
        {.key = "name", .str = name},           {.key = "rv", .is_int = true, .num = rv},
        {.key = "t", .is_int = true, .num = t},
    };
    char *got = fakeapi__trace_line(f, sizeof f / sizeof *f);
    char *want = reference(client, name, rv, t);
    if (!want) {
        cr_assert_null(got, "a line where jansson writes none: %s", got);
    } else {
        cr_assert_not_null(got, "no line where jansson writes %s", want);
        cr_assert_str_eq(got, want);
    }
    free(got);
    free(want);
}

Test(trace_line, as_jansson_wrote_it)
{
    check("scenario/singleton-fixed-0", "demo-data", 16, 1767225600000000000LL);
    check("", "", 0, 0);
    check("a\"b\\c/d", "tab\there\nnl\rcr\bbs\fff", -1, INT64_MIN);
    check("\x01\x02\x1f\x7f", "caf\xc3\xa9 \xf0\x9f\x98\x80", INT64_MAX, -5);
    check("bad \xff", "x", 1, 1);         /* invalid UTF-8: no line */
    check("x", "\xc0\xaf", 1, 1);         /* overlong */
    check("x", "\xed\xa0\x80", 1, 1);     /* a surrogate */
    check("x", "\xf4\x90\x80\x80", 1, 1); /* past U+10FFFF */
    check(NULL, "x", 1, 1);               /* json_pack refuses NULL */
    check("x", NULL, 1, 1);
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

Test(trace_line, random_strings)
{
    static const unsigned char bytes[] = {'a',  'Z',  '0',  ' ',  '"',  '\\', '/',  '\n', '\t',
                                          0x01, 0x1f, 0x7f, 0x80, 0xbf, 0xc2, 0xc3, 0xa9, 0xe0,
                                          0xed, 0xa0, 0xef, 0xf0, 0x9f, 0xf4, 0x90, 0xff};
    uint64_t seed = 0x2545F4914F6CDD1DULL;
    int lines = 0;
    for (int i = 0; i < 20000; i++) {
        char a[16], b[16];
        size_t na = next(&seed) % sizeof a, nb = next(&seed) % sizeof b;
        for (size_t k = 0; k < na; k++)
            a[k] = (char)bytes[next(&seed) % sizeof bytes];
        for (size_t k = 0; k < nb; k++)
            b[k] = (char)bytes[next(&seed) % sizeof bytes];
        a[na] = b[nb] = '\0';
        check(a, b, (long long)next(&seed), (long long)(next(&seed) % 1000));
        char *ref = reference(a, b, 0, 0);
        lines += ref != NULL;
        free(ref);
    }
    /* Both kinds occur: strings jansson takes and strings it refuses. */
    cr_assert(lines > 100 && lines < 20000, "%d lines of 20000", lines);
}
