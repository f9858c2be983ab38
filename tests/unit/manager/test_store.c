/*
 * test_store.c - the informer's object store (manager/store.c): objects
 * kept from watch writes are handed back as the old object of the next
 * write and to shared reads, while get still hands out copies of the
 * caller's own; kept objects beyond the store's budget are dropped, the
 * oldest first, and the old object is then unpacked again.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/error.h"
#include "../../../manager/store_int.h"

static json_t *obj_of(const char *name, const char *rv, const char *label)
{
    json_t *o = json_pack("{s:s, s:{s:s, s:s, s:s, s:{s:s}}, s:{s:[i, s, {s:b}]}}", "kind", "Thing",
                          "metadata", "name", name, "namespace", "ns", "resourceVersion", rv,
                          "labels", "tier", label, "spec", "list", 1, "two", "three", true);
    cr_assert_not_null(o);
    return o;
}

static json_t *by_tier(const json_t *obj, void *user)
{
    (void)user;
    const char *t = json_string_value(
        json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), "tier"));
    return t ? json_pack("[s]", t) : NULL;
}

/* A watch write's object is kept: the next write gets it back as the old
 * object and shared reads share it, while get gives a copy of its own. */
Test(store, kept_objects)
{
    ctrl__store *s = NULL;
    cr_assert_eq(ctrl__store_new(&s), 0);
    cr_assert_eq(ctrl__store_add_index(s, "tier", by_tier, NULL), 0);
    json_t *v1 = obj_of("a", "1", "web"), *old = NULL;
    cr_assert_eq(ctrl__store_put(s, "ns/a", v1, true, &old), 0);
    cr_assert_null(old);

    json_t *got = NULL, *shared = NULL;
    cr_assert_eq(ctrl__store_get(s, "ns/a", &got), 0);
    cr_assert_neq(got, v1, "get hands out a copy");
    cr_assert(json_equal(got, v1));
    json_object_set_new(got, "changed", json_true()); /* the caller's own */
    json_decref(got);
    cr_assert_eq(ctrl__store_get_shared(s, "ns/a", false, &shared), 0);
    cr_assert_eq(shared, v1, "the kept object itself");
    json_decref(shared);
    cr_assert_eq(ctrl__store_get_shared(s, "ns/a", true, &shared), 0);
    cr_assert_eq(shared, v1);
    json_decref(shared);
    cr_assert_eq(ctrl__store_get_shared(s, "ns/b", true, &shared), CTRL_ERR_NOT_FOUND);
    json_t *arr = NULL;
    cr_assert_eq(ctrl__store_by_index_shared(s, "tier", "web", &arr), 0);
    cr_assert_eq(json_array_size(arr), 1);
    cr_assert_eq(json_array_get(arr, 0), v1);
    json_decref(arr);

    /* The next write: old is v1 itself; the index moves with the label. */
    json_t *v2 = obj_of("a", "2", "db");
    cr_assert_eq(ctrl__store_put(s, "ns/a", v2, true, &old), 0);
    cr_assert_eq(old, v1);
    cr_assert_null(json_object_get(old, "changed"));
    json_decref(old);
    cr_assert_eq(ctrl__store_by_index(s, "tier", "web", &arr), 0);
    cr_assert_eq(json_array_size(arr), 0);
    json_decref(arr);
    cr_assert_eq(ctrl__store_by_index(s, "tier", "db", &arr), 0);
    cr_assert_eq(json_array_size(arr), 1);
    cr_assert(json_equal(json_array_get(arr, 0), v2));
    cr_assert_neq(json_array_get(arr, 0), v2, "by_index hands out copies");
    json_decref(arr);

    /* A write that does not keep: the object is unpacked when needed. */
    json_t *v3 = obj_of("a", "3", "db");
    cr_assert_eq(ctrl__store_put(s, "ns/a", v3, false, &old), 0);
    cr_assert_eq(old, v2);
    json_decref(old);
    cr_assert_eq(ctrl__store_get_shared(s, "ns/a", false, &shared), 0);
    cr_assert_neq(shared, v3);
    cr_assert(json_equal(shared, v3));
    json_t *again = NULL;
    cr_assert_eq(ctrl__store_get_shared(s, "ns/a", false, &again), 0);
    cr_assert_neq(again, shared, "without keep: unpacked for each caller");
    json_decref(again);
    json_decref(shared);
    /* With keep, unpacked once and shared while unchanged. */
    cr_assert_eq(ctrl__store_get_shared(s, "ns/a", true, &shared), 0);
    cr_assert(json_equal(shared, v3));
    cr_assert_eq(ctrl__store_get_shared(s, "ns/a", true, &again), 0);
    cr_assert_eq(again, shared);
    json_decref(again);
    json_decref(shared);
    cr_assert_eq(ctrl__store_remove(s, "ns/a", &old), 0);
    cr_assert(json_equal(old, v3));
    json_decref(old);
    cr_assert_eq(ctrl__store_by_index(s, "tier", "db", &arr), 0);
    cr_assert_eq(json_array_size(arr), 0);
    json_decref(arr);
    cr_assert_eq(ctrl__store_get(s, "ns/a", &got), CTRL_ERR_NOT_FOUND);
    cr_assert_eq(ctrl__store_len(s), 0);
    json_decref(v1);
    json_decref(v2);
    json_decref(v3);
    ctrl__store_free(s);
}

/* Kept objects have a budget (4 MiB of records): beyond it the oldest are
 * dropped, and their old object is unpacked again, equal to what was put. */
Test(store, kept_budget)
{
    ctrl__store *s = NULL;
    cr_assert_eq(ctrl__store_new(&s), 0);
    size_t big = 1u << 20;
    char *filler = malloc(big + 1);
    cr_assert_not_null(filler);
    memset(filler, 'x', big);
    filler[big] = '\0';
    json_t *first[6];
    for (int i = 0; i < 6; i++) {
        char name[8], key[16];
        snprintf(name, sizeof name, "o%d", i);
        snprintf(key, sizeof key, "ns/%s", name);
        first[i] = obj_of(name, "1", "web");
        json_object_set_new(first[i], "data", json_string(filler));
        json_t *old = NULL;
        cr_assert_eq(ctrl__store_put(s, key, first[i], true, &old), 0);
        cr_assert_null(old);
    }
    for (int i = 0; i < 6; i++) {
        char name[8], key[16];
        snprintf(name, sizeof name, "o%d", i);
        snprintf(key, sizeof key, "ns/%s", name);
        json_t *next = obj_of(name, "2", "web"), *old = NULL;
        cr_assert_eq(ctrl__store_put(s, key, next, false, &old), 0);
        cr_assert(json_equal(old, first[i]), "%s", key);
        if (i < 3) /* each record is a little over 1 MiB: 3 fit */
            cr_assert_neq(old, first[i], "%s: dropped, unpacked again", key);
        else
            cr_assert_eq(old, first[i], "%s: still kept", key);
        json_decref(old);
        json_decref(next);
    }
    for (int i = 0; i < 6; i++)
        json_decref(first[i]);
    free(filler);
    ctrl__store_free(s);
}
