/*
 * test_memcached.c - the Memcached controller on a real manager against a
 * fake API server in this process (libfakeapi): the Deployment it creates
 * and resizes, its finalizer, the Available condition, and deletion.
 * Every wait polls with a 10 s bound. KH_TEST_LOG=1 shows the manager's log.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ctrl/conditions.h>
#include <ctrl/controllerutil.h>
#include <ctrl/manager.h>
#include <ctrl/object.h>
#include <fakeapi/fakeapi.h>

#include "memcached.h"

static fakeapi_server *api;
static ctrl_manager *mgr;
static pthread_t thread;

static void log_sink(const char *line, void *user)
{
    (void)user;
    if (getenv("KH_TEST_LOG"))
        fprintf(stderr, "%s\n", line);
}

static void *run(void *arg)
{
    (void)arg;
    ctrl_manager_start(mgr, NULL);
    return NULL;
}

static void setup(void)
{
    cr_assert_eq(fakeapi_start(&(fakeapi_options){0}, &api), 0);
    fakeapi_error ferr = {0};
    cr_assert_eq(fakeapi_apply_file(api, CONFIG_DIR "/crd.yaml", &ferr), 0, "%s", ferr.message);
    ctrl_config *cfg = NULL;
    cr_assert_eq(ctrl_config_from_url(fakeapi_url(api), &cfg, NULL), 0);
    ctrl_error err = {0};
    cr_assert_eq(ctrl_manager_new_for_config(
                     cfg, &(ctrl_manager_options){.metrics_addr = "0", .log_sink = log_sink},
                     &mgr, &err),
                 0, "%s", err.message);
    ctrl_config_free(cfg);
    cr_assert_eq(memcached_setup(mgr), 0);
    cr_assert_eq(pthread_create(&thread, NULL, run, NULL), 0);
    cr_assert_eq(ctrl_manager_elected(mgr, 10 * CTRL_SECOND), 0);
}

static void teardown(void)
{
    ctrl_manager_stop(mgr);
    pthread_join(thread, NULL);
    ctrl_manager_free(mgr);
    fakeapi_stop(api);
}

TestSuite(memcached, .init = setup, .fini = teardown, .timeout = 60);

/* The object, or NULL once it is gone. */
static json_t *get(const char *av, const char *kind, const char *name)
{
    json_t *o = NULL;
    return fakeapi_get(api, av, kind, "default", name, &o, NULL) == 0 ? o : NULL;
}

/* Poll until pred(obj) holds (obj may be NULL: gone); 10 s at most. */
static bool eventually(const char *av, const char *kind, const char *name,
                       bool (*pred)(const json_t *o, int64_t n), int64_t n)
{
    for (int i = 0; i < 400; i++) {
        json_t *o = get(av, kind, name);
        bool ok = pred(o, n);
        json_decref(o);
        if (ok)
            return true;
        nanosleep(&(struct timespec){0, 25 * 1000 * 1000}, NULL);
    }
    return false;
}

static bool has_replicas(const json_t *dep, int64_t n)
{
    return dep && ctrl_obj_get_int(dep, "spec.replicas", -1) == n;
}

static bool observed(const json_t *m, int64_t gen)
{
    json_t *conds = ctrl_obj_get(m, "status.conditions");
    json_t *c = ctrl_condition_find(conds, "Available");
    return ctrl_condition_is_true(conds, "Available") &&
           json_integer_value(json_object_get(c, "observedGeneration")) == gen;
}

static bool gone(const json_t *o, int64_t n)
{
    (void)n;
    return o == NULL;
}

static void apply(const char *yaml)
{
    fakeapi_error ferr = {0};
    cr_assert_eq(fakeapi_apply(api, yaml, strlen(yaml), &ferr), 0, "%s", ferr.message);
}

Test(memcached, deployment_finalizer_condition_deletion)
{
    fakeapi_error ferr = {0};
    cr_assert_eq(fakeapi_apply_file(api, CONFIG_DIR "/sample.yaml", &ferr), 0, "%s", ferr.message);
    cr_assert(eventually("apps/v1", "Deployment", "sample", has_replicas, 3));
    cr_assert(eventually(MEMCACHED_API_VERSION, MEMCACHED_KIND, "sample", observed, 1));

    json_t *m = get(MEMCACHED_API_VERSION, MEMCACHED_KIND, "sample");
    json_t *dep = get("apps/v1", "Deployment", "sample");
    cr_assert(ctrl_contains_finalizer(m, MEMCACHED_FINALIZER));
    const json_t *ref = ctrl_get_controller_of(dep);
    cr_assert_not_null(ref);
    cr_assert_str_eq(json_string_value(json_object_get(ref, "uid")), ctrl_obj_uid(m));
    cr_assert_eq(ctrl_obj_get_int(m, "status.replicas", 0), 3);
    char since[32];
    snprintf(since, sizeof since, "%s",
             json_string_value(json_object_get(
                 ctrl_condition_find(ctrl_obj_get(m, "status.conditions"), "Available"),
                 "lastTransitionTime")));
    json_decref(m);
    json_decref(dep);

    apply("apiVersion: cache.example.com/v1\nkind: Memcached\n"
          "metadata: {name: sample, namespace: default}\nspec: {size: 5}\n");
    cr_assert(eventually("apps/v1", "Deployment", "sample", has_replicas, 5));
    cr_assert(eventually(MEMCACHED_API_VERSION, MEMCACHED_KIND, "sample", observed, 2));
    m = get(MEMCACHED_API_VERSION, MEMCACHED_KIND, "sample");
    cr_assert_str_eq(json_string_value(json_object_get(
                         ctrl_condition_find(ctrl_obj_get(m, "status.conditions"), "Available"),
                         "lastTransitionTime")),
                     since, "still True: the transition time stays");
    json_decref(m);

    cr_assert_eq(fakeapi_delete(api, MEMCACHED_API_VERSION, MEMCACHED_KIND, "default", "sample",
                                &ferr),
                 0, "%s", ferr.message);
    cr_assert(eventually(MEMCACHED_API_VERSION, MEMCACHED_KIND, "sample", gone, 0),
              "the finalizer was removed");
    cr_assert(eventually("apps/v1", "Deployment", "sample", gone, 0),
              "the Deployment was collected with its owner");
}
