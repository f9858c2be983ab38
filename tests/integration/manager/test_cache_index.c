/*
 * test_cache_index.c - indexes, kept right through updates, and reads
 * with a label selector, and the objects update and delete handlers get
 * (with the indexes after an update).
 * Shared fixture: tests/support/cachetest.h.
 */
#include "cachetest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(cache, .init = setup, .fini = teardown, .timeout = 60);
TestSuite(cache_custom, .fini = teardown, .timeout = 60);

static json_t *by_owner(const json_t *obj, void *user)
{
    const char *o = meta(obj, "name")
                        ? json_string_value(json_object_get(
                              json_object_get(json_object_get(obj, "metadata"), "labels"), "owner"))
                        : NULL;
    return o ? json_pack("[s]", o) : NULL;
}

static json_t *by_data_keys(const json_t *obj, void *user)
{
    json_t *out = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(obj, "data"), k, v)
    {
        json_array_append_new(out, json_string(k));
    }
    return out;
}

static size_t count_by(ctrl_informer *inf, const char *index, const char *value)
{
    json_t *arr = NULL;
    cr_assert_eq(ctrl_informer_by_index(inf, index, value, &arr), 0);
    size_t n = json_array_size(arr);
    json_decref(arr);
    return n;
}

/* The first character of the cached ns/name's data.v ('-' when absent). */
static char data_v(ctrl_informer *inf, const char *ns, const char *name)
{
    json_t *o = NULL;
    if (ctrl_informer_get(inf, ns, name, &o) != 0)
        return '-';
    const char *v = json_string_value(json_object_get(json_object_get(o, "data"), "v"));
    char c = v ? v[0] : '-';
    json_decref(o);
    return c;
}

Test(cache, indexes)
{
    put_ns("ns-a");
    put_cm("default", "c1", "\"owner\":\"alice\"", "1");
    put_cm("default", "c2", "\"owner\":\"bob\"", "1");
    put_cm("ns-a", "c3", "\"owner\":\"alice\"", "1");
    ctrl_informer *inf = cm_informer(&(ctrl_cache_options){.no_watch_list = true}, NULL, NULL);
    cr_assert_eq(ctrl_informer_add_index(inf, "owner", by_owner, NULL), 0);
    cr_assert_eq(ctrl_informer_add_index(inf, "owner", by_owner, NULL), CTRL_ERR_ARG);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    cr_assert_eq(count_by(inf, "namespace", "default"), 2);
    cr_assert_eq(count_by(inf, "namespace", "ns-a"), 1);
    cr_assert_eq(count_by(inf, "namespace", "ns-b"), 0);
    cr_assert_eq(count_by(inf, "owner", "alice"), 2);
    cr_assert_eq(count_by(inf, "owner", "bob"), 1);
    json_t *arr = NULL;
    cr_assert_eq(ctrl_informer_by_index(inf, "owner", "alice", &arr), 0);
    cr_assert_str_eq(meta(json_array_get(arr, 0), "name"), "c1"); /* sorted by ns, name */
    cr_assert_str_eq(meta(json_array_get(arr, 1), "name"), "c3");
    json_decref(arr);
    cr_assert_eq(ctrl_informer_by_index(inf, "nope", "x", &arr), CTRL_ERR_ARG);
    /* An index added after sync is built from the store. */
    cr_assert_eq(ctrl_informer_add_index(inf, "datakeys", by_data_keys, NULL), 0);
    cr_assert_eq(count_by(inf, "datakeys", "v"), 3);
    /* Updates move objects between index values; deletes remove them. */
    put_cm("default", "c2", "\"owner\":\"alice\"", "2");
    WAIT_FOR(count_by(inf, "owner", "alice") == 3, 5000);
    cr_assert_eq(count_by(inf, "owner", "bob"), 0);
    cr_assert_eq(ctrl_informer_by_index(inf, "owner", "alice", &arr), 0);
    cr_assert_str_eq(meta(json_array_get(arr, 1), "name"), "c2");
    cr_assert_str_eq(
        json_string_value(json_object_get(json_object_get(json_array_get(arr, 1), "data"), "v")),
        "2", "the index hands out the object as updated");
    json_decref(arr);
    /* An update with the same index values keeps the object filed once. */
    put_cm("ns-a", "c3", "\"owner\":\"alice\"", "3");
    WAIT_FOR(data_v(inf, "ns-a", "c3") == '3', 5000);
    cr_assert_eq(count_by(inf, "owner", "alice"), 3);
    cr_assert_eq(count_by(inf, "datakeys", "v"), 3);
    del_cm("default", "c1");
    WAIT_FOR(count_by(inf, "owner", "alice") == 2, 5000);
    cr_assert_eq(count_by(inf, "namespace", "default"), 1);
    cr_assert_eq(count_by(inf, "datakeys", "v"), 2);
}

/* data.v of the one object shared reads return under owner=value. */
static const char *shared_v(ctrl_informer *inf, const char *value, json_t **arr)
{
    cr_assert_eq(ctrl_informer_by_index_shared(inf, "owner", value, arr), 0);
    cr_assert_eq(json_array_size(*arr), 1);
    return json_string_value(
        json_object_get(json_object_get(json_array_get(*arr, 0), "data"), "v"));
}

/* Shared reads: the same object while unchanged, a new one once updated
 * (the old one kept intact for whoever holds it), gone once deleted. */
Test(cache, shared_index_reads)
{
    put_cm("default", "s1", "\"owner\":\"carol\"", "1");
    put_cm("default", "s2", "\"owner\":\"dave\"", "1");
    ctrl_informer *inf = cm_informer(&(ctrl_cache_options){.no_watch_list = true}, NULL, NULL);
    cr_assert_eq(ctrl_informer_add_index(inf, "owner", by_owner, NULL), 0);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    json_t *a = NULL, *b = NULL, *c = NULL;
    cr_assert_str_eq(shared_v(inf, "carol", &a), "1");
    cr_assert_str_eq(shared_v(inf, "carol", &b), "1");
    cr_assert_eq(json_array_get(a, 0), json_array_get(b, 0), "unchanged: one shared object");
    json_decref(b);
    /* A shared get hands out that same object. */
    json_t *g = NULL, *g2 = NULL;
    cr_assert_eq(ctrl_informer_get_shared(inf, "default", "s1", &g), 0);
    cr_assert_eq(g, json_array_get(a, 0));
    cr_assert_eq(ctrl_informer_get_shared(inf, "default", "nope", &g2), CTRL_ERR_NOT_FOUND);
    /* An ordinary read is a copy of its own. */
    cr_assert_eq(ctrl_informer_by_index(inf, "owner", "carol", &b), 0);
    cr_assert_neq(json_array_get(a, 0), json_array_get(b, 0));
    cr_assert(json_equal(json_array_get(a, 0), json_array_get(b, 0)));
    json_decref(b);
    cr_assert_eq(ctrl_informer_by_index_shared(inf, "nope", "x", &b), CTRL_ERR_ARG);
    put_cm("default", "s1", "\"owner\":\"carol\"", "2");
    WAIT_FOR(data_v(inf, "default", "s1") == '2', 5000);
    cr_assert_str_eq(shared_v(inf, "carol", &b), "2", "an update replaces the shared object");
    cr_assert_neq(json_array_get(a, 0), json_array_get(b, 0));
    cr_assert_str_eq(
        json_string_value(json_object_get(json_object_get(json_array_get(a, 0), "data"), "v")), "1",
        "a reference taken before the update still sees its version");
    cr_assert_eq(ctrl_informer_get_shared(inf, "default", "s1", &g2), 0);
    cr_assert_eq(g2, json_array_get(b, 0), "the updated object, shared");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(g, "data"), "v")), "1");
    json_decref(g2);
    json_decref(g);
    /* Moving to another index value, and deleting. */
    put_cm("default", "s1", "\"owner\":\"dave\"", "3");
    WAIT_FOR(count_by(inf, "owner", "carol") == 0, 5000);
    cr_assert_eq(ctrl_informer_by_index_shared(inf, "owner", "dave", &c), 0);
    cr_assert_eq(json_array_size(c), 2);
    json_decref(c);
    del_cm("default", "s2");
    WAIT_FOR(count_by(inf, "owner", "dave") == 1, 5000);
    cr_assert_str_eq(shared_v(inf, "dave", &c), "3");
    json_decref(c);
    json_decref(b);
    json_decref(a);
}

static size_t list_n(ctrl_informer *inf, const char *ns, const char *sel)
{
    json_t *arr = NULL;
    int rc = ctrl_informer_list(inf, ns, sel, &arr);
    cr_assert_eq(rc, 0, "%s: %d", sel, rc);
    size_t n = json_array_size(arr);
    json_decref(arr);
    return n;
}

Test(cache, list_with_label_selector)
{
    put_ns("other");
    put_cm("default", "a", "\"app\":\"web\",\"tier\":\"front\",\"n\":\"5\"", "1");
    put_cm("default", "b", "\"app\":\"db\",\"tier\":\"back\",\"n\":\"10\"", "1");
    put_cm("default", "c", "\"app\":\"cache\"", "1");
    put_cm("default", "d", NULL, "1");
    put_cm("other", "e", "\"app\":\"web\"", "1");
    ctrl_informer *inf = cm_informer(NULL, NULL, NULL);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    cr_assert_eq(list_n(inf, NULL, NULL), 5);
    cr_assert_eq(list_n(inf, NULL, ""), 5);
    cr_assert_eq(list_n(inf, "default", NULL), 4);
    cr_assert_eq(list_n(inf, "other", NULL), 1);
    cr_assert_eq(list_n(inf, "missing", NULL), 0);
    cr_assert_eq(list_n(inf, NULL, "app=web"), 2);
    cr_assert_eq(list_n(inf, "default", "app==web"), 1);
    cr_assert_eq(list_n(inf, "default", "app!=web"), 3); /* d has no app: matches */
    cr_assert_eq(list_n(inf, "default", "app in (web, db)"), 2);
    cr_assert_eq(list_n(inf, "default", "app notin (web,db)"), 2);
    cr_assert_eq(list_n(inf, "default", "tier"), 2);
    cr_assert_eq(list_n(inf, "default", "!tier"), 2);
    cr_assert_eq(list_n(inf, "default", "app=web,tier=front"), 1);
    cr_assert_eq(list_n(inf, "default", "app=web,tier=back"), 0);
    cr_assert_eq(list_n(inf, "default", "n>6"), 1);
    cr_assert_eq(list_n(inf, "default", "n<6"), 1);
    cr_assert_eq(list_n(inf, "default", " app = web , !missing "), 1);
    const char *bad[] = {"app in (web", "app=web,", "=x", "app in web", "n>x", "!a=b", "a b"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *arr = NULL;
        cr_assert_eq(ctrl_informer_list(inf, NULL, bad[i], &arr), CTRL_ERR_ARG, "%s", bad[i]);
        cr_assert_null(arr);
    }
    json_t *arr = NULL;
    cr_assert_eq(ctrl_informer_list(inf, NULL, NULL, &arr), 0);
    const char *order[] = {"a", "b", "c", "d", "e"};
    for (size_t i = 0; i < 5; i++)
        cr_assert_str_eq(meta(json_array_get(arr, i), "name"), order[i]);
    json_decref(arr);
}

/* What update and delete handlers get, kept (deep copies) past the call. */
typedef struct kept {
    pthread_mutex_t mu;
    json_t *upd_old, *upd_new, *del;
} kept;

static void keep_update(const json_t *old, const json_t *obj, void *user)
{
    kept *k = user;
    pthread_mutex_lock(&k->mu);
    if (!k->upd_old) {
        k->upd_old = json_deep_copy(old);
        k->upd_new = json_deep_copy(obj);
    }
    pthread_mutex_unlock(&k->mu);
}

static void keep_delete(const json_t *obj, bool unknown, void *user)
{
    kept *k = user;
    pthread_mutex_lock(&k->mu);
    if (!k->del && !unknown)
        k->del = json_deep_copy(obj);
    pthread_mutex_unlock(&k->mu);
}

static bool kept_has(kept *k, json_t **which)
{
    pthread_mutex_lock(&k->mu);
    bool has = *which != NULL;
    pthread_mutex_unlock(&k->mu);
    return has;
}

static const char *data_str(const json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "data"), "v"));
}

static const char *label_str(const json_t *o, const char *k)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(o, "metadata"), "labels"), k));
}

static json_t *by_app(const json_t *obj, void *user)
{
    const char *a = label_str(obj, "app");
    return a ? json_pack("[s]", a) : NULL;
}

/* An update hands handlers the object as cached before and as it is now;
 * a delete the object as deleted. Indexes and selectors follow. */
Test(cache, update_and_delete_handlers_get_old_and_new)
{
    put_cm("default", "h1", "\"app\":\"web\"", "1");
    static kept k = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ctrl_informer *inf = cm_informer(NULL, NULL, NULL);
    cr_assert_eq(ctrl_informer_add_index(inf, "app", by_app, NULL), 0);
    ctrl_event_handler h = {.on_update = keep_update, .on_delete = keep_delete, .user = &k};
    cr_assert_eq(ctrl_informer_add_handler(inf, &h), 0);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    json_t *before = NULL, *now = NULL;
    cr_assert_eq(ctrl_informer_get(inf, "default", "h1", &before), 0);
    put_cm("default", "h1", "\"app\":\"db\"", "2");
    WAIT_FOR(kept_has(&k, &k.upd_old), 5000);
    pthread_mutex_lock(&k.mu);
    cr_assert(json_equal(k.upd_old, before), "old is the object as it was cached");
    cr_assert_str_eq(data_str(k.upd_new), "2");
    cr_assert_str_eq(label_str(k.upd_new, "app"), "db");
    cr_assert_str_neq(meta(k.upd_new, "resourceVersion"), meta(k.upd_old, "resourceVersion"));
    cr_assert_eq(ctrl_informer_get(inf, "default", "h1", &now), 0);
    cr_assert(json_equal(now, k.upd_new), "new is what the cache now holds");
    pthread_mutex_unlock(&k.mu);
    cr_assert_eq(count_by(inf, "app", "web"), 0);
    cr_assert_eq(count_by(inf, "app", "db"), 1);
    cr_assert_eq(list_n(inf, NULL, "app=web"), 0);
    cr_assert_eq(list_n(inf, NULL, "app=db"), 1);
    del_cm("default", "h1");
    WAIT_FOR(kept_has(&k, &k.del), 5000);
    cr_assert_str_eq(data_str(k.del), "2");
    cr_assert_str_eq(meta(k.del, "name"), "h1");
    cr_assert_eq(count_by(inf, "app", "db"), 0);
    cr_assert_eq(list_n(inf, NULL, "app=db"), 0);
    cr_assert_eq(list_n(inf, NULL, NULL), 0);
    json_decref(before);
    json_decref(now);
    json_decref(k.upd_old);
    json_decref(k.upd_new);
    json_decref(k.del);
}
