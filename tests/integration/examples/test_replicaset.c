/*
 * test_replicaset.c - the PodSet controller (examples/replicaset) on a real
 * manager against an in-process fakeapi: first pods with owner references
 * and labels, scaling 0 -> 50 -> 0 through spec.replicas, pods deleted
 * behind its back, status.replicas, the finalizer path (pods deleted while
 * the PodSet is held), and 409s on 30% of pod creates and updates.
 *
 * Every wait is a poll with a 10 s bound; nothing asserts on timing.
 * Set KH_TEST_LOG=1 to see the manager's log lines.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrl/conditions.h"
#include "ctrl/manager.h"
#include "fakeapi/fakeapi.h"
#include "replicaset.h"

#define WAIT_NS (10 * CTRL_SECOND)

static fakeapi_server *api;
static ctrl_manager *mgr;
static pthread_t mgr_thread;
static bool mgr_running;
static int mgr_rc;

static void log_sink(const char *line, void *user)
{
    (void)user;
    if (getenv("KH_TEST_LOG"))
        fprintf(stderr, "%s\n", line);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * CTRL_SECOND + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void *run_mgr(void *arg)
{
    (void)arg;
    mgr_rc = ctrl_manager_start(mgr, NULL);
    return NULL;
}

static void apply(const char *text)
{
    fakeapi_error err = {0};
    int rc = fakeapi_apply(api, text, strlen(text), &err);
    cr_assert_eq(rc, 0, "apply: %s", err.message);
}

static void apply_file(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", KH_FIXTURES, name);
    fakeapi_error err = {0};
    int rc = fakeapi_apply_file(api, path, &err);
    cr_assert_eq(rc, 0, "apply %s: %s", path, err.message);
}

static void setup(void)
{
    cr_assert_eq(fakeapi_start(&(fakeapi_options){.seed = 7}, &api), 0);
    apply_file("replicaset/crd.yaml");
    ctrl_config *cfg = NULL;
    cr_assert_eq(ctrl_config_from_url(fakeapi_url(api), &cfg, NULL), 0);
    ctrl_error err = {0};
    int rc = ctrl_manager_new_for_config(
        cfg, &(ctrl_manager_options){.metrics_addr = "0", .log_sink = log_sink, .seed = 11}, &mgr,
        &err);
    ctrl_config_free(cfg);
    cr_assert_eq(rc, 0, "manager: %s", err.message);
    ctrl_error_deinit(&err);
    json_t *config = json_pack("{s:i}", "maxConcurrentReconciles", 2);
    cr_assert_eq(example_replicaset_setup(mgr, config), 0);
    json_decref(config);
    cr_assert_eq(pthread_create(&mgr_thread, NULL, run_mgr, NULL), 0);
    mgr_running = true;
}

static void teardown(void)
{
    if (mgr_running) {
        ctrl_manager_stop(mgr);
        pthread_join(mgr_thread, NULL);
        mgr_running = false;
        cr_expect_eq(mgr_rc, 0, "manager returned %d", mgr_rc);
    }
    ctrl_manager_free(mgr);
    mgr = NULL;
    fakeapi_stop(api);
    api = NULL;
}

TestSuite(replicaset, .init = setup, .fini = teardown);

/* ---- reading the server ---- */

/* The pods labelled podset=name and not being deleted; *out (may be NULL)
 * a new array of them. */
static int count_pods(const char *name, json_t **out)
{
    char sel[128];
    snprintf(sel, sizeof sel, "%s=%s", EXAMPLE_PODSET_LABEL, name);
    json_t *all = NULL;
    cr_assert_eq(fakeapi_list(api, "v1", "Pod", "default", sel, &all, NULL), 0);
    json_t *live = json_array();
    size_t i;
    json_t *p;
    json_array_foreach(all, i, p)
    {
        if (!json_object_get(json_object_get(p, "metadata"), "deletionTimestamp"))
            json_array_append(live, p);
    }
    json_decref(all);
    int n = (int)json_array_size(live);
    if (out)
        *out = live;
    else
        json_decref(live);
    return n;
}

/* The PodSet, or NULL when it does not exist. */
static json_t *get_podset(const char *name)
{
    json_t *ps = NULL;
    int rc = fakeapi_get(api, EXAMPLE_PODSET_API_VERSION, EXAMPLE_PODSET_KIND, "default", name, &ps,
                         NULL);
    if (rc == FAKEAPI_ERR_NOT_FOUND)
        return NULL;
    cr_assert_eq(rc, 0);
    return ps;
}

/* status.replicas, or -1 when unset or the PodSet is gone. */
static int status_replicas(const char *name)
{
    json_t *ps = get_podset(name);
    json_t *r = json_object_get(json_object_get(ps, "status"), "replicas");
    int n = json_is_integer(r) ? (int)json_integer_value(r) : -1;
    json_decref(ps);
    return n;
}

static bool status_current(const char *name)
{
    json_t *ps = get_podset(name);
    json_int_t gen =
        json_integer_value(json_object_get(json_object_get(ps, "metadata"), "generation"));
    json_t *og = json_object_get(json_object_get(ps, "status"), "observedGeneration");
    bool ok = ps && json_is_integer(og) && json_integer_value(og) == gen;
    json_decref(ps);
    return ok;
}

static void create_podset(const char *name, int replicas)
{
    char doc[1024];
    snprintf(doc, sizeof doc,
             "{\"apiVersion\":\"example.com/v1\",\"kind\":\"PodSet\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\"},\"spec\":{\"replicas\":%d,\"template\":{\"metadata\":{"
             "\"labels\":{\"app\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
             "\"busybox\"}]}}}}",
             name, replicas, name);
    apply(doc);
}

static void scale(const char *name, int replicas)
{
    create_podset(name, replicas); /* apply merges into the stored one */
}

/*
 * Wait until name has want live pods, status.replicas == want for the
 * current generation, and nothing changes for a moment. *max_seen (may be
 * NULL) the most live pods seen on the way.
 */
static bool converged(const char *name, int want, int *max_seen)
{
    int64_t deadline = mono_ns() + WAIT_NS;
    int stable = 0;
    while (mono_ns() < deadline) {
        int n = count_pods(name, NULL);
        if (max_seen && n > *max_seen)
            *max_seen = n;
        if (n == want && status_replicas(name) == want && status_current(name)) {
            if (++stable >= 5) /* 5 polls in a row: 50 ms with nothing new */
                return true;
        } else {
            stable = 0;
        }
        sleep_ms(10);
    }
    return false;
}

/* ---- tests ---- */

Test(replicaset, basic_pods_owned_and_labelled)
{
    apply_file("replicaset/basic.yaml");
    cr_assert(converged("web", 3, NULL), "web: %d pods, status %d", count_pods("web", NULL),
              status_replicas("web"));

    json_t *ps = get_podset("web");
    const char *uid = json_string_value(json_object_get(json_object_get(ps, "metadata"), "uid"));
    json_t *fins = json_object_get(json_object_get(ps, "metadata"), "finalizers");
    cr_assert_eq(json_array_size(fins), 1);
    cr_assert_str_eq(json_string_value(json_array_get(fins, 0)), EXAMPLE_PODSET_FINALIZER);
    /* The Ready condition, for the current generation. */
    json_t *conds = json_object_get(json_object_get(ps, "status"), "conditions");
    json_t *ready = ctrl_condition_find(conds, "Ready");
    cr_assert(ctrl_condition_is_true(conds, "Ready"), "%s", json_dumps(conds, 0));
    cr_assert_str_eq(json_string_value(json_object_get(ready, "reason")), "AllReplicas");
    cr_assert_str_eq(json_string_value(json_object_get(ready, "message")), "3 of 3 pods");
    cr_assert_eq(json_integer_value(json_object_get(ready, "observedGeneration")),
                 json_integer_value(json_object_get(json_object_get(ps, "metadata"), "generation")));
    cr_assert_not_null(json_string_value(json_object_get(ready, "lastTransitionTime")));

    json_t *pods = NULL;
    count_pods("web", &pods);
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        json_t *meta = json_object_get(pod, "metadata");
        const char *pname = json_string_value(json_object_get(meta, "name"));
        cr_assert(!strncmp(pname, "web-", 4) && strlen(pname) > 4, "name %s", pname);
        json_t *labels = json_object_get(meta, "labels");
        cr_assert_str_eq(json_string_value(json_object_get(labels, "app")), "web");
        cr_assert_str_eq(json_string_value(json_object_get(labels, "podset")), "web");
        json_t *refs = json_object_get(meta, "ownerReferences");
        cr_assert_eq(json_array_size(refs), 1);
        json_t *ref = json_array_get(refs, 0);
        cr_assert_str_eq(json_string_value(json_object_get(ref, "apiVersion")), "example.com/v1");
        cr_assert_str_eq(json_string_value(json_object_get(ref, "kind")), "PodSet");
        cr_assert_str_eq(json_string_value(json_object_get(ref, "name")), "web");
        cr_assert_str_eq(json_string_value(json_object_get(ref, "uid")), uid);
        cr_assert(json_is_true(json_object_get(ref, "controller")));
        cr_assert(json_is_true(json_object_get(ref, "blockOwnerDeletion")));
        /* The template's spec. */
        json_t *c0 = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
        cr_assert_str_eq(json_string_value(json_object_get(c0, "image")), "nginx:1.27");
    }
    json_decref(pods);
    json_decref(ps);
}

Test(replicaset, scales_0_to_50_and_back)
{
    create_podset("big", 0);
    cr_assert(converged("big", 0, NULL), "status %d", status_replicas("big"));

    int max_seen = 0;
    scale("big", 50);
    cr_assert(converged("big", 50, &max_seen), "big: %d pods, status %d", count_pods("big", NULL),
              status_replicas("big"));
    cr_assert_eq(max_seen, 50, "never more than asked for (saw %d)", max_seen);
    /* Every pod distinct, all still there a moment later (no double creates). */
    sleep_ms(200);
    cr_assert_eq(count_pods("big", NULL), 50);

    scale("big", 20);
    cr_assert(converged("big", 20, NULL), "big: %d pods, status %d", count_pods("big", NULL),
              status_replicas("big"));

    scale("big", 0);
    cr_assert(converged("big", 0, NULL), "big: %d pods, status %d", count_pods("big", NULL),
              status_replicas("big"));
}

Test(replicaset, deletes_newest_first)
{
    create_podset("order", 4);
    cr_assert(converged("order", 4, NULL));
    json_t *before = NULL;
    count_pods("order", &before);
    sleep_ms(1100); /* creationTimestamp has one-second resolution */
    scale("order", 6);
    cr_assert(converged("order", 6, NULL));
    scale("order", 4);
    cr_assert(converged("order", 4, NULL));
    /* The two newer pods went; the four older ones stayed. */
    json_t *after = NULL;
    count_pods("order", &after);
    size_t i;
    json_t *p;
    json_array_foreach(before, i, p)
    {
        const char *n = json_string_value(json_object_get(json_object_get(p, "metadata"), "name"));
        bool found = false;
        size_t j;
        json_t *q;
        json_array_foreach(after, j, q)
        {
            found = found || !strcmp(n, json_string_value(json_object_get(
                                            json_object_get(q, "metadata"), "name")));
        }
        cr_assert(found, "older pod %s was deleted", n);
    }
    json_decref(before);
    json_decref(after);
}

Test(replicaset, recovers_pods_deleted_behind_its_back)
{
    create_podset("heal", 10);
    cr_assert(converged("heal", 10, NULL));
    json_t *pods = NULL;
    count_pods("heal", &pods);
    char gone[4][128];
    for (size_t i = 0; i < 4; i++) {
        const char *n = json_string_value(
            json_object_get(json_object_get(json_array_get(pods, i), "metadata"), "name"));
        snprintf(gone[i], sizeof gone[i], "%s", n);
        cr_assert_eq(fakeapi_delete(api, "v1", "Pod", "default", n, NULL), 0);
    }
    json_decref(pods);
    cr_assert(converged("heal", 10, NULL), "heal: %d pods, status %d", count_pods("heal", NULL),
              status_replicas("heal"));
    for (size_t i = 0; i < 4; i++) {
        json_t *p = NULL;
        cr_assert_eq(fakeapi_get(api, "v1", "Pod", "default", gone[i], &p, NULL),
                     FAKEAPI_ERR_NOT_FOUND, "%s came back", gone[i]);
    }
}

Test(replicaset, delete_runs_the_finalizer)
{
    create_podset("fin", 5);
    cr_assert(converged("fin", 5, NULL));

    /* Hold the PodSet: every update of it (the finalizer's removal) is
     * refused, so only the controller can have deleted the pods (the
     * garbage collector waits for the owner to go). */
    uint64_t hold = 0;
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "update",
                                                    .resource = "podsets",
                                                    .subresource = "",
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 409,
                                                    .reason = "Conflict"},
                                   &hold, NULL),
                 0);
    cr_assert_eq(fakeapi_delete(api, EXAMPLE_PODSET_API_VERSION, EXAMPLE_PODSET_KIND, "default",
                                "fin", NULL),
                 0);
    int64_t deadline = mono_ns() + WAIT_NS;
    json_t *all = NULL;
    for (;;) {
        cr_assert_eq(fakeapi_list(api, "v1", "Pod", "default", "podset=fin", &all, NULL), 0);
        size_t n = json_array_size(all);
        json_decref(all);
        if (n == 0)
            break;
        cr_assert(mono_ns() < deadline, "%zu pods left", n);
        sleep_ms(10);
    }
    json_t *ps = get_podset("fin");
    cr_assert(ps, "the PodSet is held by its finalizer");
    cr_assert(json_object_get(json_object_get(ps, "metadata"), "deletionTimestamp"));
    json_decref(ps);

    /* Let the controller remove its finalizer: the PodSet goes. */
    cr_assert_eq(fakeapi_fault_remove(api, hold), 0);
    deadline = mono_ns() + WAIT_NS;
    while ((ps = get_podset("fin")) != NULL) {
        json_decref(ps);
        cr_assert(mono_ns() < deadline, "the PodSet is still there");
        sleep_ms(10);
    }
    cr_assert_eq(count_pods("fin", NULL), 0);
}

Test(replicaset, converges_despite_conflicts)
{
    uint64_t ids[2];
    const char *verbs[2] = {"create", "update"};
    for (int i = 0; i < 2; i++)
        cr_assert_eq(fakeapi_fault_add(api,
                                       &(fakeapi_fault){.verb = verbs[i],
                                                        .resource = "pods",
                                                        .probability = 0.3,
                                                        .action = FAKEAPI_FAULT_ERROR,
                                                        .status = 409,
                                                        .reason = "Conflict"},
                                       &ids[i], NULL),
                     0);
    create_podset("flaky", 30);
    int max_seen = 0;
    cr_assert(converged("flaky", 30, &max_seen), "flaky: %d pods, status %d",
              count_pods("flaky", NULL), status_replicas("flaky"));
    cr_assert_eq(max_seen, 30);
    unsigned long matched = 0, fired = 0;
    cr_assert_eq(fakeapi_fault_hits(api, ids[0], &matched, &fired), 0);
    cr_assert_gt(fired, 0, "the fault fired (%lu of %lu creates)", fired, matched);
    cr_assert_eq(matched - fired, 30, "30 creates went through (%lu matched, %lu fired)", matched,
                 fired);

    scale("flaky", 5);
    cr_assert(converged("flaky", 5, NULL), "flaky: %d pods, status %d", count_pods("flaky", NULL),
              status_replicas("flaky"));
    scale("flaky", 12);
    cr_assert(converged("flaky", 12, NULL), "flaky: %d pods, status %d", count_pods("flaky", NULL),
              status_replicas("flaky"));
}

Test(replicaset, setup_rejects_bad_config)
{
    json_t *bad = json_pack("{s:s}", "maxConcurrentReconciles", "many");
    cr_assert_eq(example_replicaset_setup(mgr, bad), CTRL_ERR_ARG);
    json_decref(bad);
    bad = json_pack("[]");
    cr_assert_eq(example_replicaset_setup(mgr, bad), CTRL_ERR_ARG);
    json_decref(bad);
    /* The name is taken by the one setup() registered. */
    cr_assert_eq(example_replicaset_setup(mgr, NULL), CTRL_ERR_ARG);
}
