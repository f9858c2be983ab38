/*
 * test_cache_scope.c - what a cache watches: namespace and label-selector
 * scoping, and a transform applied on both sync paths.
 * Shared fixture: tests/support/cachetest.h.
 */
#include "cachetest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(cache, .init = setup, .fini = teardown, .timeout = 60);
TestSuite(cache_custom, .fini = teardown, .timeout = 60);

static size_t watches_in(const char *ns, const char *resource)
{
    fakeapi_watch_info *w = NULL;
    size_t n = 0, count = 0;
    cr_assert_eq(fakeapi_watches(api, &w, &n), 0);
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(w[i].ns, ns) && strstr(w[i].resource, resource))
            count++;
    }
    free(w);
    return count;
}

Test(cache, namespace_scoping)
{
    put_ns("ns-a");
    put_ns("ns-b");
    put_ns("ns-c");
    put_cm("ns-a", "one", NULL, "1");
    put_cm("ns-b", "two", NULL, "1");
    put_cm("ns-c", "three", NULL, "1");
    const char *const nss[] = {"ns-a", "ns-b", NULL};
    evlog *l = new_log();
    ctrl_informer *inf =
        cm_informer(&(ctrl_cache_options){.namespaces = nss, .no_watch_list = true}, NULL, l);
    ctrl_informer *nsinf = NULL;
    cr_assert_eq(ctrl_cache_informer(cache, "v1", "Namespace", NULL, &nsinf, NULL), 0);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    json_t *all = NULL;
    cr_assert_eq(ctrl_informer_list(inf, NULL, NULL, &all), 0);
    cr_assert_eq(json_array_size(all), 2);
    cr_assert_str_eq(meta(json_array_get(all, 0), "name"), "one");
    cr_assert_str_eq(meta(json_array_get(all, 1), "name"), "two");
    json_decref(all);
    WAIT_FOR(watches_in("ns-a", "configmaps") == 1 && watches_in("ns-b", "configmaps") == 1, 5000);
    cr_assert_eq(watches_in("ns-c", "configmaps"), 0);
    cr_assert_eq(watches_in("", "configmaps"), 0);
    /* A cluster-scoped kind is watched once, whatever the namespaces. */
    WAIT_FOR(watches_in("", "namespaces") == 1, 5000);
    cr_assert_eq(ctrl_informer_list(nsinf, NULL, NULL, &all), 0);
    cr_assert_geq(json_array_size(all), 6); /* default, kube-*, ns-a, ns-b, ns-c */
    json_decref(all);
    json_t *nsobj = NULL;
    cr_assert_eq(ctrl_informer_get(nsinf, NULL, "ns-c", &nsobj), 0);
    json_decref(nsobj);

    put_cm("ns-c", "four", NULL, "1");
    put_cm("ns-b", "five", NULL, "1");
    WAIT_FOR(log_len(l) == 3, 5000);
    usleep(50000);
    cr_assert_eq(log_len(l), 3);
    cr_assert(strstr(l->lines[2], "ADD ns-b/five"), "%s", l->lines[2]);
    char rv[32];
    ctrl_informer_last_rv(inf, rv, sizeof rv);
    cr_assert_str_eq(rv, rev());
    free(l);
}

Test(cache, label_selector_scoping)
{
    put_cm("default", "web1", "\"app\":\"web\"", "1");
    put_cm("default", "db1", "\"app\":\"db\"", "1");
    evlog *l = new_log();
    ctrl_informer *inf =
        cm_informer(NULL, &(ctrl_informer_options){.label_selector = "app=web"}, l);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    json_t *o = NULL;
    cr_assert_eq(ctrl_informer_get(inf, "default", "web1", &o), 0);
    json_decref(o);
    cr_assert_eq(ctrl_informer_get(inf, "default", "db1", &o), CTRL_ERR_NOT_FOUND);
    put_cm("default", "web2", "\"app\":\"web\"", "1");
    put_cm("default", "db2", "\"app\":\"db\"", "1");
    /* web1 stops matching: the server sends DELETED. */
    put_cm("default", "web1", "\"app\":\"db\"", "2");
    WAIT_FOR(log_len(l) == 3, 5000);
    usleep(50000);
    cr_assert_eq(log_len(l), 3);
    cr_assert(strstr(l->lines[1], "ADD default/web2"), "%s", l->lines[1]);
    cr_assert(strstr(l->lines[2], "DEL default/web1"), "%s", l->lines[2]);
    json_t *all = NULL;
    cr_assert_eq(ctrl_informer_list(inf, NULL, NULL, &all), 0);
    cr_assert_eq(json_array_size(all), 1);
    cr_assert_str_eq(meta(json_array_get(all, 0), "name"), "web2");
    json_decref(all);
    free(l);
}

static int transformed;
static void drop_managed(json_t *obj, void *user)
{
    json_object_del(json_object_get(obj, "metadata"), "managedFields");
    json_object_set_new(json_object_get(obj, "metadata"), "transformed", json_true());
    __atomic_add_fetch((int *)user, 1, __ATOMIC_SEQ_CST);
}

/* Returns how many objects the transform saw (each asserted above). */
static int transform_drops_managed_fields(bool no_watch_list)
{
    const char *mf = "\"managedFields\":[{\"manager\":\"test\",\"operation\":\"Update\","
                     "\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{}}]";
    apply_json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":"
               "\"default\",\"name\":\"m1\",%s},\"data\":{\"a\":\"b\"}}",
               mf);
    transformed = 0;
    ctrl_informer *inf = cm_informer(
        &(ctrl_cache_options){.no_watch_list = no_watch_list},
        &(ctrl_informer_options){.transform = drop_managed, .transform_user = &transformed}, NULL);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    apply_json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":"
               "\"default\",\"name\":\"m2\",%s},\"data\":{\"a\":\"b\"}}",
               mf);
    json_t *o = NULL;
    WAIT_FOR(ctrl_informer_get(inf, "default", "m2", &o) == 0, 5000);
    json_decref(o);
    const char *names[] = {"m1", "m2"};
    for (int i = 0; i < 2; i++) {
        json_t *server = NULL;
        cr_assert_eq(fakeapi_get(api, "v1", "ConfigMap", "default", names[i], &server, NULL), 0);
        cr_log_info("server keeps managedFields: %d",
                    json_object_get(json_object_get(server, "metadata"), "managedFields") != NULL);
        json_decref(server);
        cr_assert_eq(ctrl_informer_get(inf, "default", names[i], &o), 0);
        cr_assert_null(json_object_get(json_object_get(o, "metadata"), "managedFields"));
        cr_assert(json_is_true(json_object_get(json_object_get(o, "metadata"), "transformed")));
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "data"), "a")), "b");
        json_decref(o);
    }
    cr_assert_eq(__atomic_load_n(&transformed, __ATOMIC_SEQ_CST), 2, "once per object");
    return __atomic_load_n(&transformed, __ATOMIC_SEQ_CST);
}

Test(cache, transform_drops_managed_fields)
{
    /* m1 from watch-list's initial events */
    cr_assert_eq(transform_drops_managed_fields(false), 2);
}

Test(cache, transform_drops_managed_fields_list)
{
    cr_assert_eq(transform_drops_managed_fields(true), 2); /* m1 from a LIST */
}
