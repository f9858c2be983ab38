/*
 * test_jsonpeek.c - reading a few string members without a tree: whenever
 * the scanner answers, it answers what jansson's full parse gives, and it
 * leaves what it cannot vouch for to the caller.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "jsonpeek.h"

#define NF 4

static void fields(fakeapi__peek *f)
{
    memset(f, 0, NF * sizeof *f);
    f[0].path[0] = "type";
    f[1].path[0] = "object", f[1].path[1] = "metadata", f[1].path[2] = "resourceVersion";
    f[2].path[0] = "metadata", f[2].path[1] = "resourceVersion";
    f[3].path[0] = "metadata", f[3].path[1] = "name";
}

/* What jansson says of field i: the string, or NULL. */
static const char *full(const json_t *doc, const fakeapi__peek *f)
{
    const json_t *v = doc;
    for (int d = 0; d < FAKEAPI__PEEK_MAX_DEPTH && f->path[d]; d++)
        v = json_object_get(v, f->path[d]);
    return json_string_value(v);
}

/* Peek text; when the scanner answers, every field must agree with
 * jansson. Returns the scanner's answer. */
static int check(const char *text)
{
    fakeapi__peek f[NF];
    fields(f);
    int rc = fakeapi__json_peek(text, strlen(text), f, NF);
    if (rc != FAKEAPI__PEEK_OK)
        return rc;
    json_t *doc = json_loadb(text, strlen(text), 0, NULL);
    for (int i = 0; i < NF; i++) {
        const char *want = full(doc, &f[i]);
        cr_assert_eq(f[i].found, want != NULL, "%s: field %d", text, i);
        if (want) {
            cr_assert_eq(f[i].len, strlen(want), "%s: field %d", text, i);
            cr_assert(!memcmp(f[i].val, want, f[i].len), "%s: field %d", text, i);
        }
    }
    json_decref(doc);
    return rc;
}

Test(fakeapi_jsonpeek, reads_what_a_parse_reads)
{
    cr_assert_eq(check("{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":"
                       "\"p\",\"resourceVersion\":\"42\",\"labels\":{\"a\":\"b\"}},\"spec\":{"
                       "\"containers\":[{\"name\":\"c\",\"ports\":[1,2.5,-3]}],\"x\":null,"
                       "\"y\":true,\"z\":false}}}\n"),
                 FAKEAPI__PEEK_OK);
    fakeapi__peek f[NF];
    fields(f);
    const char *t = "{\"metadata\": {\"name\": \"web\", \"resourceVersion\": \"7\"}}";
    cr_assert_eq(fakeapi__json_peek(t, strlen(t), f, NF), FAKEAPI__PEEK_OK);
    cr_assert(f[2].found && f[2].len == 1 && f[2].val[0] == '7');
    cr_assert(f[3].found && f[3].len == 3 && !memcmp(f[3].val, "web", 3));
    cr_assert(!f[0].found && !f[1].found);
}

Test(fakeapi_jsonpeek, last_duplicate_wins_and_non_strings_are_absent)
{
    cr_assert_eq(check("{\"type\":\"A\",\"type\":\"B\"}"), FAKEAPI__PEEK_OK);
    cr_assert_eq(check("{\"type\":\"A\",\"type\":1}"), FAKEAPI__PEEK_OK);
    cr_assert_eq(check("{\"metadata\":{\"name\":\"a\"},\"metadata\":{}}"), FAKEAPI__PEEK_OK);
    cr_assert_eq(check("{\"metadata\":{\"name\":\"a\"},\"metadata\":\"x\"}"), FAKEAPI__PEEK_OK);
    cr_assert_eq(check("{\"metadata\":[{\"name\":\"a\"}]}"), FAKEAPI__PEEK_OK);
    cr_assert_eq(check("{\"metadata\":{\"name\":{\"name\":\"a\"}}}"), FAKEAPI__PEEK_OK);
    cr_assert_eq(check("[{\"type\":\"A\"}]"), FAKEAPI__PEEK_OK);
    cr_assert_eq(check("{\"x\":{\"type\":\"A\"}}"), FAKEAPI__PEEK_OK);
    cr_assert_eq(check("{\"type\":\"a\\n\\\"b\\\"\",\"x\":\"\\t\"}"), FAKEAPI__PEEK_PARSE);
    cr_assert_eq(check("{\"other\":\"a\\n\\\"b\\\"\",\"type\":\"c\"}"), FAKEAPI__PEEK_OK);
    cr_assert_eq(check("{\"typ\\u0065\":\"A\"}"), FAKEAPI__PEEK_PARSE);
    cr_assert_eq(check("{\"ty\\/pe\":\"A\"}"), FAKEAPI__PEEK_PARSE);
}

Test(fakeapi_jsonpeek, leaves_what_it_cannot_vouch_for)
{
    static const char *const texts[] = {
        "",
        "   ",
        "\"str\"",
        "12",
        "{",
        "{\"type\":\"A\"",
        "{\"type\":\"A\"} x",
        "{\"type\":\"A\",}",
        "{\"type\" \"A\"}",
        "{\"a\":01}",
        "{\"a\":1.}",
        "{\"a\":-}",
        "{\"a\":1e5}",
        "{\"a\":123456789012345678901234}",
        "{\"a\":tru}",
        "{\"a\":\"\xc3\xa9\"}",
        "{\"a\":\"x\x01\"}",
        "{\"a\":\"\\x\"}",
        "{'a':1}",
        "[1,2,]",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        cr_assert_eq(check(texts[i]), FAKEAPI__PEEK_PARSE, "%s", texts[i]);
}

/* Random texts built from pieces (valid and broken): the scanner either
 * agrees with jansson or passes. */
Test(fakeapi_jsonpeek, agrees_with_jansson_on_random_texts)
{
    static const char *const keys[] = {"\"type\"", "\"object\"",          "\"metadata\"",
                                       "\"name\"", "\"resourceVersion\"", "\"x\"",
                                       "\"\""};
    static const char *const atoms[] = {
        "\"A\"", "\"\"",  "1", "-2.5",      "true",        "null", "\"\\n\"",     "[]",
        "{}",    "\"5\"", "0", "[1,\"a\"]", "\"\\u0041\"", "01",   "\"\xc3\xa9\""};
    unsigned r = 7;
    int answered = 0;
    for (int n = 0; n < 20000; n++) {
        char buf[2048];
        size_t len = 0;
        int depth = 0;
        bool need_value = false;
        buf[len++] = '{';
        depth++;
        bool first = true;
        for (int step = 0; step < 40 && len < sizeof buf - 64 && depth > 0; step++) {
            r = r * 1103515245u + 12345u;
            unsigned pick = (r >> 16) % 10;
            if (need_value) {
                if (pick < 3) {
                    buf[len++] = '{';
                    depth++;
                    first = true;
                } else {
                    const char *a = atoms[(r >> 8) % (sizeof atoms / sizeof atoms[0])];
                    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s", a);
                    first = false;
                }
                need_value = false;
                continue;
            }
            if (pick < 2) {
                buf[len++] = '}';
                depth--;
                first = false;
                continue;
            }
            const char *k = keys[(r >> 8) % (sizeof keys / sizeof keys[0])];
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s:", first ? "" : ",", k);
            need_value = true;
        }
        if (need_value)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "1");
        while (depth-- > 0 && len < sizeof buf - 1)
            buf[len++] = '}';
        r = r * 1103515245u + 12345u;
        if ((r >> 16) % 5 == 0 && len > 2) /* break it somewhere */
            buf[(r >> 4) % len] = "{}[],:\" x"[(r >> 8) % 9];
        buf[len] = '\0';
        if (check(buf) == FAKEAPI__PEEK_OK)
            answered++;
    }
    cr_assert_gt(answered, 5000, "the scanner should answer most valid texts (%d)", answered);
}
