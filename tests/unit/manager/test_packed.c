/*
 * test_packed.c - the informer store's packed form of jansson values
 * (manager/packed.c): round trips that keep types, key order, exact numbers
 * and NULs; truncated, trailing, garbage and too-deep input refused.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/error.h"
#include "../../../manager/packed_int.h"

/* The store's packed form gives back what it was given: types, key order,
 * exact numbers, strings with NULs; and refuses what is cut or too deep. */
Test(packed, round_trip)
{
    const char *docs[] = {
        "{}",
        "[]",
        "{\"a\":{\"b\":[1,-1,0,127,128,-64,-65,9223372036854775807,-9223372036854775808,0.1,"
        "1e300,-2.5e-300,true,false,null,\"\",\"h\\u00e9llo \\u2713\",[[{}]]]}}",
        "{\"z\":1,\"a\":2,\"m\":{\"y\":[],\"x\":{},\"\":\"empty key\"}}",
        "{\"nul\":\"a\\u0000b\"}",
    };
    for (size_t d = 0; d < sizeof docs / sizeof *docs; d++) {
        json_error_t e;
        json_t *v = json_loads(docs[d], JSON_ALLOW_NUL, &e);
        cr_assert_not_null(v, "%s: %s", docs[d], e.text);
        size_t n = ctrl__pack(v, NULL, 0);
        cr_assert_gt(n, 0);
        char *buf = malloc(n + 1);
        cr_assert_eq(ctrl__pack(v, buf, n), n);
        json_t *back = ctrl__unpack(buf, n);
        cr_assert(json_equal(v, back), "%s", docs[d]);
        char *t1 = json_dumps(v, JSON_COMPACT), *t2 = json_dumps(back, JSON_COMPACT);
        cr_assert_str_eq(t1, t2, "same text: same order and numbers");
        free(t1);
        free(t2);
        for (size_t cut = 0; cut < n; cut++)
            cr_assert_null(ctrl__unpack(buf, cut), "%s cut at %zu", docs[d], cut);
        buf[n] = 'n';
        cr_assert_null(ctrl__unpack(buf, n + 1), "a trailing value");
        json_t *s = NULL;
        cr_assert_eq(ctrl__pack_string(v, "head", 4, &s), 0);
        cr_assert_eq(json_string_length(s), n + 4);
        cr_assert_eq(memcmp(json_string_value(s), "head", 4), 0);
        cr_assert_eq(memcmp(json_string_value(s) + 4, buf, n), 0);
        json_decref(s);
        free(buf);
        json_decref(back);
        json_decref(v);
    }
    json_t *nul = json_loads(docs[4], JSON_ALLOW_NUL, NULL);
    char buf[64];
    size_t n = ctrl__pack(nul, buf, sizeof buf);
    json_t *back = ctrl__unpack(buf, n);
    cr_assert_eq(json_string_length(json_object_get(back, "nul")), 3);
    json_decref(back);
    json_decref(nul);
    /* Too deep to pack; garbage and absurd counts refused. */
    json_t *deep = json_array(), *in = deep;
    for (int i = 0; i < CTRL__PACK_MAX_DEPTH + 5; i++) {
        json_t *next = json_array();
        json_array_append_new(in, next);
        in = next;
    }
    json_t *s = NULL;
    cr_assert_eq(ctrl__pack(deep, NULL, 0), 0);
    cr_assert_eq(ctrl__pack_string(deep, NULL, 0, &s), CTRL_ERR_ARG);
    cr_assert_null(s);
    json_decref(deep);
    cr_assert_null(ctrl__unpack("x", 1));
    cr_assert_null(ctrl__unpack("", 0));
    cr_assert_null(ctrl__unpack("o\xff\xff\xff\xff\x0f", 6));
    cr_assert_null(ctrl__unpack("s\005abc", 5)); /* a 5-byte string, 3 there */
}
