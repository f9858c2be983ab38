/*
 * test_jsonscan.c - the scan for a few string members (fakeapi/jsonscan.h)
 * answers as json_loadb + json_object_get + json_string_value would, or
 * gives up: on chosen texts, and on many mutations of real watch lines.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonscan.h"

#define NWANT 4

static const char *const paths[NWANT][4] = {
    {"type", NULL},
    {"object", "metadata", "name", NULL},
    {"object", "metadata", "resourceVersion", NULL},
    {"metadata", "resourceVersion", NULL},
};

/* What jansson says for path p of text: NULL if no string is there. */
static char *reference(const char *text, size_t len, const char *const *p, bool *parsed)
{
    json_t *doc = json_loadb(text, len, 0, NULL);
    *parsed = doc != NULL;
    json_t *v = doc;
    for (int i = 0; p[i]; i++)
        v = json_object_get(v, p[i]);
    const char *s = json_string_value(v);
    char *out = s ? strdup(s) : NULL;
    json_decref(doc);
    return out;
}

static void want_init(fakeapi__jscan_want *w)
{
    memset(w, 0, NWANT * sizeof *w);
    for (int i = 0; i < NWANT; i++)
        for (int k = 0; paths[i][k]; k++)
            w[i].path[k] = paths[i][k];
}

/* Scan text; if the scan answers, every member must be jansson's. Returns
 * whether it answered. */
static bool check(const char *text, size_t len)
{
    fakeapi__jscan_want w[NWANT];
    want_init(w);
    int rc = fakeapi__json_scan(text, len, w, NWANT);
    if (rc != 0)
        return false;
    for (int i = 0; i < NWANT; i++) {
        bool parsed;
        char *ref = reference(text, len, paths[i], &parsed);
        cr_assert(parsed, "the scan answered for a text jansson refuses: %.*s", (int)len, text);
        if (!ref) {
            cr_assert(!w[i].found, "path %d found, jansson has none: %.*s", i, (int)len, text);
        } else {
            cr_assert(w[i].found, "path %d not found, jansson has %s: %.*s", i, ref, (int)len,
                      text);
            cr_assert(w[i].len == strlen(ref) && memcmp(w[i].str, ref, w[i].len) == 0,
                      "path %d: %.*s, jansson: %s", i, (int)w[i].len, w[i].str, ref);
        }
        free(ref);
    }
    return true;
}

static bool check_str(const char *text)
{
    return check(text, strlen(text));
}

static const char *const line =
    "{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
    "\"metadata\":{\"name\":\"demo-data\",\"namespace\":\"default\",\"uid\":\"0a1b\","
    "\"resourceVersion\":\"16\",\"labels\":{\"singleton\":\"demo\"},\"ownerReferences\":"
    "[{\"apiVersion\":\"example.com/v1\",\"kind\":\"Singleton\",\"name\":\"demo\","
    "\"controller\":true,\"blockOwnerDeletion\":true}],\"managedFields\":[{\"manager\":"
    "\"singleton\",\"operation\":\"Update\",\"time\":\"2026-01-01T00:00:00Z\"}]},"
    "\"data\":{\"greeting\":\"h\\u00e9llo \\\"you\\\"\",\"n\":\"12\"},\"x\":[1,-2.5,0,"
    "true,false,null,{},[]]}}\n";

Test(jsonscan, answers_watch_lines_and_responses)
{
    cr_assert(check_str(line));
    fakeapi__jscan_want w[NWANT];
    want_init(w);
    cr_assert_eq(fakeapi__json_scan(line, strlen(line), w, NWANT), 0);
    cr_assert(w[0].found && w[0].len == 8 && !memcmp(w[0].str, "MODIFIED", 8));
    cr_assert(w[1].found && w[1].len == 9 && !memcmp(w[1].str, "demo-data", 9));
    cr_assert(w[2].found && w[2].len == 2 && !memcmp(w[2].str, "16", 2));
    cr_assert(!w[3].found);
    cr_assert(
        check_str("{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[]}"));
    cr_assert(check_str("  {}  "));
    cr_assert(check_str("{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":"
                        "\"17\",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}}"));
}

Test(jsonscan, keeps_the_last_of_repeated_keys)
{
    cr_assert(check_str("{\"type\":\"A\",\"type\":\"B\"}"));
    cr_assert(check_str("{\"type\":\"A\",\"type\":1}"));
    cr_assert(check_str("{\"object\":{\"metadata\":{\"name\":\"a\"}},\"object\":{}}"));
    cr_assert(check_str("{\"object\":{\"metadata\":{\"name\":\"a\"},\"metadata\":null}}"));
    cr_assert(check_str("{\"object\":{\"metadata\":{\"name\":\"a\"}},\"object\":[1]}"));
    cr_assert(check_str("{\"metadata\":{\"resourceVersion\":5}}"));
    cr_assert(check_str("{\"metadata\":\"x\"}"));
}

Test(jsonscan, gives_up_or_agrees_on_hard_texts)
{
    static const char *const texts[] = {
        "",
        "[]",
        "[{\"type\":\"A\"}]",
        "\"str\"",
        "{\"type\":\"A\"} x",
        "{\"type\":\"A\",}",
        "{\"type\":\"A\" \"b\":1}",
        "{\"typ\\u0065\":\"A\"}",
        "{\"type\":\"A\\u0000B\"}",
        "{\"type\":\"\\ud83d\\ude00\"}",
        "{\"type\":\"\\ud83d\"}",
        "{\"type\":\"\\x\"}",
        "{\"type\":\"tab\there\"}",
        "{\"a\":01}",
        "{\"a\":1.}",
        "{\"a\":-}",
        "{\"a\":1e400}",
        "{\"a\":123456789012345678901234567890}",
        "{\"a\":-9223372036854775809}",
        "{\"a\":1.5,\"type\":\"Z\"}",
        "{\"a\":truex}",
        "{\"a\":nul}",
        "{\"a\":tru}",
        "{\"type\":\"\xc3\xa9\"}",
        "{\"type\":\"\xc3\"}",
        "{\"type\":\"\xe0\x80\xaf\"}",
        "{\"type\":\"\xed\xa0\x80\"}",
        "{\"type\":\"\xf4\x90\x80\x80\"}",
        "{\"type\":\"\xf0\x9f\x98\x80\"}",
        "{\"type\":\"\xff\"}",
        "{\"type\":\"A\"}\n\r\t ",
        "{\"type\":\"A\"}\v",
        "\xef\xbb\xbf{\"type\":\"A\"}",
        "{'type':'A'}",
        "{\"type\":\"A\"",
        "{\"type\":}",
        "{\"a\":[1,2,]}",
        "{\"a\":[,]}",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        check_str(texts[i]);
    /* A NUL byte inside the buffer. */
    check("{\"type\":\"A\"}\0", 13);
    check("{\"type\":\"A\0\"}", 13);
    /* Deep nesting. */
    char deep[4096];
    size_t n = 0;
    deep[n++] = '{';
    memcpy(deep + n, "\"a\":", 4);
    n += 4;
    for (int i = 0; i < 1000; i++)
        deep[n++] = '[';
    for (int i = 0; i < 1000; i++)
        deep[n++] = ']';
    deep[n++] = '}';
    check(deep, n);
}

/* xorshift: the mutations are the same on every run. */
static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

Test(jsonscan, agrees_with_jansson_on_mutated_lines)
{
    static const char alphabet[] = "{}[]\":,\\u0aeE.-+ tfn\x80\xc3\xa9\x01";
    size_t base = strlen(line);
    char buf[2048];
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    int answered = 0;
    for (int round = 0; round < 20000; round++) {
        memcpy(buf, line, base);
        size_t len = base;
        int edits = 1 + (int)(next(&seed) % 3);
        for (int e = 0; e < edits && len > 1; e++) {
            size_t at = next(&seed) % len;
            switch (next(&seed) % 3) {
            case 0: /* replace a byte */
                buf[at] = alphabet[next(&seed) % (sizeof alphabet - 1)];
                break;
            case 1: /* delete one */
                memmove(buf + at, buf + at + 1, len - at - 1);
                len--;
                break;
            default: /* cut the text */
                len = at + 1;
                break;
            }
        }
        answered += check(buf, len);
    }
    /* Most mutations keep the line valid or break it: both kinds occur. */
    cr_assert(answered > 1000 && answered < 20000, "answered %d of 20000", answered);
}

/* managedFields' keys hold escaped quotes ("k:{\"name\":\"c\"}"): where no
 * wanted path leads they are read past, not given up on; an escaped key
 * where a wanted path leads still gives up (it might be the wanted one). */
Test(jsonscan, reads_past_escaped_keys_off_the_wanted_paths)
{
    static const char *const pod =
        "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"web-x\",\"namespace\":"
        "\"default\",\"resourceVersion\":\"42\",\"managedFields\":[{\"manager\":\"kubelet\","
        "\"fieldsV1\":{\"f:status\":{\"f:conditions\":{\"k:{\\\"type\\\":\\\"Ready\\\"}\":{"
        "\".\":{},\"f:status\":{}}}}}}]},\"spec\":{\"containers\":[{\"name\":\"c\"}]},"
        "\"status\":{\"k:{\\\"a\\\"}\":{\"x\\ty\":\"z\"}}}}\n";
    cr_assert(check_str(pod), "the scan answers a pod's line");
    fakeapi__jscan_want w[NWANT];
    want_init(w);
    cr_assert_eq(fakeapi__json_scan(pod, strlen(pod), w, NWANT), 0);
    cr_assert(w[1].found && w[1].len == 5 && !memcmp(w[1].str, "web-x", 5));
    cr_assert(w[2].found && w[2].len == 2 && !memcmp(w[2].str, "42", 2));
    static const char *const on_path[] = {
        "{\"typ\\u0065\":\"A\"}",
        "{\"object\":{\"metad\\u0061ta\":{\"name\":\"a\"}}}",
        "{\"object\":{\"metadata\":{\"n\\u0061me\":\"a\"}}}",
        "{\"object\":{\"metadata\":{\"name\":\"a\",\"n\\u0061me\":\"b\"}}}",
    };
    for (size_t i = 0; i < sizeof on_path / sizeof *on_path; i++) {
        want_init(w);
        cr_assert_eq(fakeapi__json_scan(on_path[i], strlen(on_path[i]), w, NWANT), -1, "%s",
                     on_path[i]);
    }
}

/* A text the server wrote itself: the scan that stops at the last wanted
 * member answers as the whole scan does, and does stop there. */
Test(jsonscan, own_text_answers_as_the_whole_scan)
{
    const char *texts[] = {
        line,
        "{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[{\"metadata\":"
        "{\"resourceVersion\":\"3\"}}]}",
        "{\"kind\":\"Status\",\"metadata\":{},\"code\":409}",
        "{\"object\":{\"metadata\":{\"name\":\"a\"}},\"type\":\"ADDED\"}",
        "{\"metadata\":{\"resourceVersion\":5}}",
    };
    for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
        json_t *doc = json_loads(texts[t], 0, NULL);
        cr_assert(doc, "%s", texts[t]);
        char *own = json_dumps(doc, JSON_COMPACT);
        json_decref(doc);
        fakeapi__jscan_want a[NWANT], b[NWANT];
        want_init(a);
        want_init(b);
        cr_assert_eq(fakeapi__json_scan(own, strlen(own), a, NWANT), 0, "%s", own);
        cr_assert_eq(fakeapi__json_scan_own(own, strlen(own), b, NWANT), 0, "%s", own);
        for (int i = 0; i < NWANT; i++) {
            cr_assert_eq(a[i].found, b[i].found, "%s: path %d", own, i);
            cr_assert(!a[i].found ||
                          (a[i].len == b[i].len && !memcmp(a[i].str, b[i].str, a[i].len)),
                      "%s: path %d", own, i);
        }
        free(own);
    }
    /* A want whose path leads through a member that has been read whole
     * is settled (a cluster-scoped object has no namespace): the scan
     * stops after metadata. */
    const char *no_ns = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"n\","
                        "\"resourceVersion\":\"4\"},\"spec\":[tru";
    fakeapi__jscan_want m[3] = {{.path = {"object", "metadata", "name"}},
                                {.path = {"object", "metadata", "namespace"}},
                                {.path = {"type"}}};
    cr_assert_eq(fakeapi__json_scan_own(no_ns, strlen(no_ns), m, 3), 0);
    cr_assert(m[0].found && m[0].len == 1 && m[0].str[0] == 'n');
    cr_assert(!m[1].found);
    cr_assert(m[2].found && m[2].len == 5);
    /* Nothing after the last wanted member is read: not even garbage. */
    const char *cut = "{\"metadata\":{\"resourceVersion\":\"9\",\"x\":[tru";
    fakeapi__jscan_want w[1] = {{.path = {"metadata", "resourceVersion"}}};
    cr_assert_eq(fakeapi__json_scan(cut, strlen(cut), w, 1), -1);
    cr_assert_eq(fakeapi__json_scan_own(cut, strlen(cut), w, 1), 0);
    cr_assert(w[0].found && w[0].len == 1 && w[0].str[0] == '9');
}
