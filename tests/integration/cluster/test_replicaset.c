/*
 * test_replicaset.c - the built-in ReplicaSet controller (cluster/replicaset.c)
 * against an in-process fakeapi, with only it running (no nodes): pods from
 * the template with generateName, labels and a controller ownerReference;
 * status counts as pods become Ready and available (minReadySeconds);
 * scaling up and down, not-ready pods deleted first; a deleted pod
 * replaced; orphans adopted and non-matching pods released; a lagging
 * cache never doubles creations (expectations); create failures as the
 * ReplicaFailure condition, with slow-start batches.
 *
 * Every wait is a poll with a bound; nothing asserts on timing.
 */
#include "workloads.h"

static void up(void)
{
    wl_up("{\"controllers\":[\"replicaset\"],\"nodes\":0}");
}

TestSuite(replicaset, .init = up, .fini = wl_down, .timeout = 60);

static void make_rs(const char *name, int replicas, int min_ready)
{
    wl_apply("{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\"},\"spec\":{\"replicas\":%d,\"minReadySeconds\":%d,"
             "\"selector\":{\"matchLabels\":{\"app\":\"%s\"}},\"template\":{\"metadata\":"
             "{\"labels\":{\"app\":\"%s\",\"tier\":\"web\"},\"annotations\":{\"note\":\"x\"}},"
             "\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"nginx:1\"}]}}}}",
             name, replicas, min_ready, name, name);
}

static void scale_rs(const char *name, int replicas)
{
    char path[256], body[128];
    snprintf(path, sizeof path, "/apis/apps/v1/namespaces/default/replicasets/%s", name);
    snprintf(body, sizeof body, "{\"spec\":{\"replicas\":%d}}", replicas);
    cr_assert_eq(wl_merge(path, body), 200);
}

/* rs's status field equals want. */
static bool rs_status(const char *name, const char *field, long long want)
{
    json_t *rs = wl_get("apps/v1", "ReplicaSet", name);
    char path[128];
    snprintf(path, sizeof path, "status.%s", field);
    bool ok = rs && wl_int(rs, path, 0) == want;
    json_decref(rs);
    return ok;
}

Test(replicaset, creates_pods_from_the_template_and_reports_status)
{
    make_rs("web", 3, 0);
    cr_assert(WL_WAIT(wl_count("v1", "Pod", "app=web") == 3));
    json_t *rs = wl_get("apps/v1", "ReplicaSet", "web");
    json_t *pods = wl_list("v1", "Pod", "app=web");
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        const char *name = wl_str(pod, "metadata.name");
        cr_assert(!strncmp(name, "web-", 4) && strlen(name) > 4, "%s", name);
        cr_assert_str_eq(wl_str(pod, "metadata.generateName"), "web-");
        cr_assert_str_eq(wl_str(pod, "metadata.labels.tier"), "web");
        cr_assert_str_eq(wl_ann(pod, "note"), "x");
        json_t *ctr =
            json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
        cr_assert_str_eq(json_string_value(json_object_get(ctr, "image")), "nginx:1");
        json_t *ref =
            json_array_get(json_object_get(json_object_get(pod, "metadata"), "ownerReferences"), 0);
        cr_assert_str_eq(json_string_value(json_object_get(ref, "kind")), "ReplicaSet");
        cr_assert_str_eq(json_string_value(json_object_get(ref, "apiVersion")), "apps/v1");
        cr_assert_str_eq(json_string_value(json_object_get(ref, "name")), "web");
        cr_assert_str_eq(json_string_value(json_object_get(ref, "uid")),
                         wl_str(rs, "metadata.uid"));
        cr_assert(json_is_true(json_object_get(ref, "controller")));
        cr_assert(json_is_true(json_object_get(ref, "blockOwnerDeletion")));
    }
    json_decref(pods);
    json_decref(rs);
    cr_assert(
        WL_WAIT(rs_status("web", "replicas", 3) && rs_status("web", "fullyLabeledReplicas", 3)));
    cr_assert(rs_status("web", "readyReplicas", 0) && rs_status("web", "observedGeneration", 1));
    cr_assert_eq(wl_ready_pods("app=web", 2), 2);
    cr_assert(
        WL_WAIT(rs_status("web", "readyReplicas", 2) && rs_status("web", "availableReplicas", 2)));
    wl_ready_all("app=web");
    cr_assert(
        WL_WAIT(rs_status("web", "readyReplicas", 3) && rs_status("web", "availableReplicas", 3)));
    json_t *one = wl_list("v1", "Pod", "app=web");
    char msg[300];
    snprintf(msg, sizeof msg, "Created pod: %s", wl_str(json_array_get(one, 0), "metadata.name"));
    json_decref(one);
    cr_assert(WL_WAIT(wl_event("web", "SuccessfulCreate", msg)));
    /* Nothing more is created once the count is right. */
    wl_sleep_ms(200);
    cr_assert_eq(wl_count("v1", "Pod", "app=web"), 3);
}

Test(replicaset, min_ready_seconds_delays_available)
{
    make_rs("slow", 2, 2);
    cr_assert(WL_WAIT(wl_count("v1", "Pod", "app=slow") == 2));
    wl_ready_all("app=slow");
    cr_assert(WL_WAIT(rs_status("slow", "readyReplicas", 2)));
    /* Ready now (in whole seconds: at most one ago): not available for at
     * least one more. */
    cr_assert(rs_status("slow", "availableReplicas", 0));
    cr_assert(WL_WAIT(rs_status("slow", "availableReplicas", 2)));
}

Test(replicaset, scales_up_and_down_deleting_not_ready_pods_first)
{
    make_rs("web", 2, 0);
    cr_assert(WL_WAIT(wl_count("v1", "Pod", "app=web") == 2));
    wl_ready_all("app=web");
    scale_rs("web", 5);
    cr_assert(WL_WAIT(wl_count("v1", "Pod", "app=web") == 5));
    cr_assert(WL_WAIT(rs_status("web", "replicas", 5) && rs_status("web", "readyReplicas", 2)));
    /* 2 ready, 3 not: scaling to 2 keeps exactly the ready ones. */
    scale_rs("web", 2);
    cr_assert(WL_WAIT(wl_count("v1", "Pod", "app=web") == 2));
    cr_assert_eq(wl_ready_count("app=web"), 2);
    cr_assert(
        WL_WAIT(rs_status("web", "replicas", 2) && rs_status("web", "observedGeneration", 3)));
    scale_rs("web", 0);
    cr_assert(WL_WAIT(wl_count("v1", "Pod", "app=web") == 0));
    cr_assert(WL_WAIT(rs_status("web", "replicas", 0)));
}

Test(replicaset, a_deleted_pod_is_replaced)
{
    make_rs("web", 2, 0);
    cr_assert(WL_WAIT(wl_count("v1", "Pod", "app=web") == 2));
    json_t *pods = wl_list("v1", "Pod", "app=web");
    char victim[256];
    snprintf(victim, sizeof victim, "%s", wl_str(json_array_get(pods, 0), "metadata.name"));
    json_decref(pods);
    cr_assert_eq(fakeapi_delete(api, "v1", "Pod", "default", victim, NULL), 0);
    json_t *gone = NULL;
    cr_assert(WL_WAIT(wl_count("v1", "Pod", "app=web") == 2 &&
                      (gone = wl_get("v1", "Pod", victim)) == NULL));
    json_decref(gone);
    wl_sleep_ms(200);
    cr_assert_eq(wl_count("v1", "Pod", "app=web"), 2);
}

/* How many ownerReferences the pod has (-1: no such pod). */
static int owner_of(const char *pod)
{
    json_t *p = wl_get("v1", "Pod", pod);
    int n =
        p ? (int)json_array_size(json_object_get(json_object_get(p, "metadata"), "ownerReferences"))
          : -1;
    json_decref(p);
    return n;
}

Test(replicaset, adopts_orphans_and_releases_pods_that_stop_matching)
{
    wl_apply("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"stray\","
             "\"namespace\":\"default\",\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":"
             "[{\"name\":\"app\",\"image\":\"nginx:0\"}]}}");
    make_rs("web", 2, 0);
    cr_assert(WL_WAIT(wl_count("v1", "Pod", "app=web") == 2));
    cr_assert(WL_WAIT(owner_of("stray") == 1));
    json_t *stray = wl_get("v1", "Pod", "stray");
    json_t *refs = json_object_get(json_object_get(stray, "metadata"), "ownerReferences");
    cr_assert_eq(json_array_size(refs), 1);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(refs, 0), "name")), "web");
    cr_assert(json_is_true(json_object_get(json_array_get(refs, 0), "controller")));
    json_decref(stray);
    wl_sleep_ms(200);
    cr_assert_eq(wl_count("v1", "Pod", "app=web"), 2, "the orphan counts as one of the two");

    /* Relabel it: released (ownerReference removed) and replaced. */
    cr_assert_eq(wl_merge("/api/v1/namespaces/default/pods/stray",
                          "{\"metadata\":{\"labels\":{\"app\":\"other\"}}}"),
                 200);
    cr_assert(WL_WAIT(wl_count("v1", "Pod", "app=web") == 2));
    cr_assert(WL_WAIT(owner_of("stray") == 0));
}

/* The id of an open pod watch other than not (0: none). */
static uint64_t pod_watch(uint64_t not )
{
    fakeapi_watch_info *w = NULL;
    size_t n = 0;
    uint64_t id = 0;
    if (fakeapi_watches(api, &w, &n) == 0)
        for (size_t i = 0; i < n; i++)
            if (!strcmp(w[i].kind, "Pod") && w[i].id != not )
                id = w[i].id;
    free(w);
    return id;
}

Test(replicaset, a_lagging_cache_never_doubles_creations)
{
    /* Every pod event reaches the cluster's watch 300 ms late. */
    fakeapi_error err = {0};
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "watch",
                                                    .resource = "pods",
                                                    .action = FAKEAPI_FAULT_WATCH_DELAY,
                                                    .delay_ms = 300},
                                   NULL, &err),
                 0, "%s", err.message);
    /* The cluster's pod watch started before the rule: end it, so that the
     * informer's next one is delayed. */
    /* Count pod creates (a 1 ms delay: the rule's matches are the count). */
    uint64_t creates = 0;
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "create",
                                                    .resource = "pods",
                                                    .subresource = "",
                                                    .action = FAKEAPI_FAULT_DELAY,
                                                    .delay_ms = 1},
                                   &creates, &err),
                 0, "%s", err.message);
    uint64_t first = 0;
    cr_assert(WL_WAIT((first = pod_watch(0)) != 0));
    cr_assert(fakeapi_close_watches(api, "kube-harness-cluster") > 0);
    cr_assert(WL_WAIT(pod_watch(first) != 0));
    make_rs("web", 4, 0);
    cr_assert(WL_WAIT(wl_count("v1", "Pod", "app=web") == 4));
    scale_rs("web", 6);
    cr_assert(WL_WAIT(wl_count("v1", "Pod", "app=web") == 6));
    cr_assert(WL_WAIT(rs_status("web", "replicas", 6)));
    wl_sleep_ms(800);
    cr_assert_eq(wl_count("v1", "Pod", "app=web"), 6);
    unsigned long matched = 0, fired = 0;
    cr_assert_eq(fakeapi_fault_hits(api, creates, &matched, &fired), 0);
    cr_assert_eq(matched, 6, "%lu pods created for 6 replicas", matched);
}

static bool has_failure(const char *name)
{
    json_t *rs = wl_get("apps/v1", "ReplicaSet", name);
    bool yes = rs && wl_cond(rs, "ReplicaFailure");
    json_decref(rs);
    return yes;
}

Test(replicaset, create_failures_set_replica_failure_in_slow_start_batches)
{
    /* The first pod create succeeds; every later one is forbidden. */
    fakeapi_error err = {0};
    uint64_t id = 0;
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){
                                       .verb = "create",
                                       .resource = "pods",
                                       .subresource = "",
                                       .after = 1,
                                       .action = FAKEAPI_FAULT_ERROR,
                                       .status = 403,
                                       .reason = "Forbidden",
                                       .message = "pods \"web-\" is forbidden: exceeded quota: q",
                                   },
                                   &id, &err),
                 0, "%s", err.message);
    make_rs("web", 50, 0);
    cr_assert(WL_WAIT(has_failure("web")));
    json_t *rs = wl_get("apps/v1", "ReplicaSet", "web");
    json_t *c = wl_cond(rs, "ReplicaFailure");
    cr_assert_str_eq(json_string_value(json_object_get(c, "status")), "True");
    cr_assert_str_eq(json_string_value(json_object_get(c, "reason")), "FailedCreate");
    cr_assert_str_eq(json_string_value(json_object_get(c, "message")),
                     "pods \"web-\" is forbidden: exceeded quota: q");
    cr_assert(json_object_get(c, "lastTransitionTime"));
    json_decref(rs);
    cr_assert(WL_WAIT(wl_event("web", "FailedCreate",
                               "Error creating: pods \"web-\" is forbidden: exceeded quota: q")));
    /* Slow start: 1 created, then a batch of 2 failed and the pass
     * stopped; each retry fails its batch of 1. Without batches the first
     * pass alone would have tried 50. */
    unsigned long matched = 0, fired = 0;
    cr_assert_eq(fakeapi_fault_hits(api, id, &matched, &fired), 0);
    cr_assert_eq(wl_count("v1", "Pod", "app=web"), 1);
    cr_assert(matched >= 3 && matched < 30, "%lu create attempts", matched);

    /* The quota is lifted: every pod comes, the condition goes. */
    cr_assert_eq(fakeapi_fault_remove(api, id), 0);
    cr_assert(WL_WAIT(wl_count("v1", "Pod", "app=web") == 50));
    cr_assert(WL_WAIT(rs_status("web", "replicas", 50) && !has_failure("web")));
}
