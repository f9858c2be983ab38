/*
 * test_deployment.c - the built-in Deployment controller (cluster/deployment.c)
 * with the ReplicaSet controller, against an in-process fakeapi (no nodes:
 * the test marks pods Ready itself, as a kubelet would): ReplicaSets named
 * by the pod-template hash, revision annotations, status and conditions as
 * kube-controller-manager writes them, scaling, a rolling update that
 * never goes past maxSurge or below maxUnavailable, Recreate, `rollout
 * undo` as kubectl does it, paused, the progress deadline, the history
 * limit, proportional scaling mid-rollout, an orphan ReplicaSet adopted,
 * ReplicaFailure passed up, and a hash collision.
 *
 * Every wait is a poll with a bound; nothing asserts on timing.
 */
#include "podutil.h"
#include "workloads.h"

static void up(void)
{
    wl_up("{\"controllers\":[\"replicaset\",\"deployment\"],\"nodes\":0}");
}

TestSuite(deployment, .init = up, .fini = wl_down, .timeout = 120);

#define DPATH "/apis/apps/v1/namespaces/default/deployments/"

static void make_deploy(const char *name, int replicas, const char *strategy, const char *extra)
{
    wl_apply("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\"},\"spec\":{\"replicas\":%d%s%s%s,"
             "\"selector\":{\"matchLabels\":{\"app\":\"%s\"}},\"template\":{\"metadata\":"
             "{\"labels\":{\"app\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":\"app\","
             "\"image\":\"nginx:1\"}]}}}}",
             name, replicas, strategy ? ",\"strategy\":" : "", strategy ? strategy : "",
             extra ? extra : "", name, name);
}

static void patch_deploy(const char *name, const char *body)
{
    char path[256];
    snprintf(path, sizeof path, DPATH "%s", name);
    cr_assert_eq(wl_merge(path, body), 200, "%s", body);
}

static void set_image(const char *name, const char *image)
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"metadata\":{\"annotations\":{\"kubernetes.io/change-cause\":\"image %s\"}},"
             "\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"app\","
             "\"image\":\"%s\"}]}}}}",
             image, image);
    patch_deploy(name, body);
}

static const char *image_of(const json_t *rs)
{
    json_t *c = json_array_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(rs, "spec"), "template"), "spec"),
            "containers"),
        0);
    return json_string_value(json_object_get(c, "image"));
}

/* The ReplicaSet whose template runs image (a new reference), or NULL. */
static json_t *rs_with_image(const char *image)
{
    json_t *l = wl_list("apps/v1", "ReplicaSet", NULL), *found = NULL;
    size_t i;
    json_t *rs;
    json_array_foreach(l, i, rs)
    {
        const char *im = image_of(rs);
        if (im && !strcmp(im, image))
            found = json_incref(rs);
    }
    json_decref(l);
    return found;
}

static long long rs_spec(const char *image)
{
    json_t *rs = rs_with_image(image);
    long long n = rs ? wl_int(rs, "spec.replicas", -1) : -1;
    json_decref(rs);
    return n;
}

static const char *cond_field(const json_t *obj, const char *type, const char *field)
{
    return json_string_value(json_object_get(wl_cond(obj, type), field));
}

static bool cond_is(const char *name, const char *type, const char *status, const char *reason)
{
    json_t *d = wl_get("apps/v1", "Deployment", name);
    const char *s = d ? cond_field(d, type, "status") : NULL;
    const char *r = d ? cond_field(d, type, "reason") : NULL;
    bool ok = s && r && !strcmp(s, status) && !strcmp(r, reason);
    json_decref(d);
    return ok;
}

/* The rollout is complete, as `kubectl rollout status` judges it. */
static bool complete(const char *name)
{
    json_t *d = wl_get("apps/v1", "Deployment", name);
    if (!d)
        return false;
    long long want = wl_int(d, "spec.replicas", 1);
    bool ok = wl_int(d, "status.observedGeneration", 0) >= wl_int(d, "metadata.generation", 0) &&
              wl_int(d, "status.updatedReplicas", 0) == want &&
              wl_int(d, "status.replicas", 0) == want &&
              wl_int(d, "status.availableReplicas", 0) == want;
    json_decref(d);
    return ok;
}

/* Mark every pod Ready until the rollout completes. */
static bool drive(const char *name)
{
    char sel[128];
    snprintf(sel, sizeof sel, "app=%s", name);
    return WL_WAIT((wl_ready_all(sel), complete(name)));
}

Test(deployment, create_rolls_out_with_status_conditions_and_annotations)
{
    make_deploy("web", 3, NULL, NULL);
    cr_assert(WL_WAIT(wl_count("apps/v1", "ReplicaSet", NULL) == 1));
    json_t *rss = wl_list("apps/v1", "ReplicaSet", NULL);
    json_t *rs = json_array_get(rss, 0);
    json_t *d = wl_get("apps/v1", "Deployment", "web");
    const char *hash = wl_str(rs, "metadata.labels.pod-template-hash");
    cr_assert(hash && strlen(hash) > 0);
    char want[128];
    snprintf(want, sizeof want, "web-%s", hash);
    cr_assert_str_eq(wl_str(rs, "metadata.name"), want);
    cr_assert_str_eq(wl_str(rs, "spec.selector.matchLabels.pod-template-hash"), hash);
    cr_assert_str_eq(wl_str(rs, "spec.selector.matchLabels.app"), "web");
    cr_assert_str_eq(wl_str(rs, "spec.template.metadata.labels.pod-template-hash"), hash);
    cr_assert_str_eq(wl_str(rs, "metadata.labels.app"), "web");
    cr_assert_str_eq(wl_ann(rs, "deployment.kubernetes.io/revision"), "1");
    cr_assert_str_eq(wl_ann(rs, "deployment.kubernetes.io/desired-replicas"), "3");
    cr_assert_str_eq(wl_ann(rs, "deployment.kubernetes.io/max-replicas"), "4"); /* 25% up */
    cr_assert_eq(wl_int(rs, "spec.replicas", -1), 3);
    json_t *ref =
        json_array_get(json_object_get(json_object_get(rs, "metadata"), "ownerReferences"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(ref, "kind")), "Deployment");
    cr_assert_str_eq(json_string_value(json_object_get(ref, "uid")), wl_str(d, "metadata.uid"));
    cr_assert(json_is_true(json_object_get(ref, "controller")));
    char rsname[128];
    snprintf(rsname, sizeof rsname, "%s", want);
    json_decref(d);
    json_decref(rss);

    /* Pods exist, none ready: not available (maxUnavailable is 25% of 3 = 0). */
    cr_assert(WL_WAIT(wl_count("v1", "Pod", "app=web") == 3));
    cr_assert(WL_WAIT(cond_is("web", "Available", "False", "MinimumReplicasUnavailable")));
    d = wl_get("apps/v1", "Deployment", "web");
    cr_assert_str_eq(cond_field(d, "Available", "message"),
                     "Deployment does not have minimum availability.");
    cr_assert_str_eq(wl_ann(d, "deployment.kubernetes.io/revision"), "1");
    json_decref(d);

    cr_assert(drive("web"));
    cr_assert(WL_WAIT(cond_is("web", "Progressing", "True", "NewReplicaSetAvailable")));
    d = wl_get("apps/v1", "Deployment", "web");
    cr_assert_eq(wl_int(d, "status.readyReplicas", 0), 3);
    cr_assert_eq(wl_int(d, "status.unavailableReplicas", 0), 0);
    cr_assert_eq(wl_int(d, "status.observedGeneration", 0), wl_int(d, "metadata.generation", -1));
    cr_assert_str_eq(cond_field(d, "Available", "status"), "True");
    cr_assert_str_eq(cond_field(d, "Available", "reason"), "MinimumReplicasAvailable");
    cr_assert_str_eq(cond_field(d, "Available", "message"), "Deployment has minimum availability.");
    char msg[256];
    snprintf(msg, sizeof msg, "ReplicaSet \"%s\" has successfully progressed.", rsname);
    cr_assert_str_eq(cond_field(d, "Progressing", "message"), msg);
    cr_assert(cond_field(d, "Progressing", "lastUpdateTime"));
    cr_assert(cond_field(d, "Progressing", "lastTransitionTime"));
    json_decref(d);
    snprintf(msg, sizeof msg, "Scaled up replica set %s from 0 to 3", rsname);
    cr_assert(WL_WAIT(wl_event("web", "ScalingReplicaSet", msg)), "%s", msg);
}

Test(deployment, scale_up_and_down)
{
    make_deploy("web", 2, NULL, NULL);
    cr_assert(drive("web"));
    cr_assert_eq(wl_request("PATCH", DPATH "web/scale", "application/merge-patch+json",
                            "{\"spec\":{\"replicas\":5}}", NULL),
                 200);
    cr_assert(WL_WAIT(rs_spec("nginx:1") == 5));
    cr_assert(drive("web"));
    json_t *rs = rs_with_image("nginx:1");
    cr_assert_str_eq(wl_ann(rs, "deployment.kubernetes.io/desired-replicas"), "5");
    cr_assert_str_eq(wl_ann(rs, "deployment.kubernetes.io/max-replicas"), "7");
    char msg[256];
    snprintf(msg, sizeof msg, "Scaled up replica set %s from 2 to 5", wl_str(rs, "metadata.name"));
    cr_assert(WL_WAIT(wl_event("web", "ScalingReplicaSet", msg)), "%s", msg);
    patch_deploy("web", "{\"spec\":{\"replicas\":1}}");
    cr_assert(WL_WAIT(rs_spec("nginx:1") == 1 && wl_count("v1", "Pod", "app=web") == 1));
    snprintf(msg, sizeof msg, "Scaled down replica set %s from 5 to 1",
             wl_str(rs, "metadata.name"));
    cr_assert(WL_WAIT(wl_event("web", "ScalingReplicaSet", msg)), "%s", msg);
    cr_assert(drive("web"));
    cr_assert_eq(wl_count("apps/v1", "ReplicaSet", NULL), 1);
    json_decref(rs);
}

/* Sum of spec.replicas over every ReplicaSet. */
static long long total_spec(void)
{
    json_t *l = wl_list("apps/v1", "ReplicaSet", NULL);
    long long n = 0;
    size_t i;
    json_t *rs;
    json_array_foreach(l, i, rs) n += wl_int(rs, "spec.replicas", 0);
    json_decref(l);
    return n;
}

static void rolling_within_bounds(const char *surge, const char *unavail, int replicas,
                                  int max_total, int min_ready)
{
    char strategy[256];
    snprintf(strategy, sizeof strategy,
             "{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxSurge\":%s,"
             "\"maxUnavailable\":%s}}",
             surge, unavail);
    make_deploy("web", replicas, strategy, NULL);
    cr_assert(drive("web"));
    set_image("web", "nginx:2");
    /* One pod becomes Ready per step; at every step the bounds hold. */
    int64_t t0 = wl_mono_ms();
    long long peak = 0;
    size_t low = 1000;
    while (!complete("web") || rs_spec("nginx:1") != 0) {
        cr_assert(wl_mono_ms() - t0 < WAIT_MS, "the rollout did not finish");
        long long total = total_spec();
        size_t ready = wl_ready_count("app=web");
        peak = total > peak ? total : peak;
        low = ready < low ? ready : low;
        cr_assert(total <= max_total, "%lld replicas wanted, max %d", total, max_total);
        cr_assert(ready >= (size_t)min_ready, "%zu pods ready, min %d", ready, min_ready);
        wl_ready_pods("app=web", 1);
        wl_sleep_ms(25);
    }
    cr_assert_eq(peak, max_total, "the surge was used");
    cr_assert_eq(rs_spec("nginx:2"), replicas);
    json_t *nrs = rs_with_image("nginx:2"), *ors = rs_with_image("nginx:1");
    json_t *d = wl_get("apps/v1", "Deployment", "web");
    cr_assert_str_eq(wl_ann(nrs, "deployment.kubernetes.io/revision"), "2");
    cr_assert_str_eq(wl_ann(ors, "deployment.kubernetes.io/revision"), "1");
    cr_assert_str_eq(wl_ann(d, "deployment.kubernetes.io/revision"), "2");
    cr_assert_str_eq(wl_ann(nrs, "kubernetes.io/change-cause"), "image nginx:2");
    cr_assert_neq(strcmp(wl_str(nrs, "metadata.name"), wl_str(ors, "metadata.name")), 0);
    json_decref(nrs);
    json_decref(ors);
    json_decref(d);
    cr_assert(WL_WAIT(cond_is("web", "Progressing", "True", "NewReplicaSetAvailable")));
    cr_assert_eq(wl_count("v1", "Pod", "app=web"), (size_t)replicas);
}

Test(deployment, rolling_update_within_surge_and_unavailable_ints)
{
    rolling_within_bounds("1", "1", 4, 5, 3);
}

Test(deployment, rolling_update_within_surge_and_unavailable_percentages)
{
    /* 10 replicas: 30% surge rounds up to 3, 25% unavailable down to 2. */
    rolling_within_bounds("\"30%\"", "\"25%\"", 10, 13, 8);
}

Test(deployment, rolling_update_with_no_unavailable)
{
    rolling_within_bounds("1", "0", 3, 4, 3);
}

Test(deployment, recreate_stops_old_pods_before_new_ones)
{
    make_deploy("web", 3, "{\"type\":\"Recreate\"}", NULL);
    cr_assert(drive("web"));
    json_t *ors = rs_with_image("nginx:1");
    char old_hash[64], sel_old[128];
    snprintf(old_hash, sizeof old_hash, "%s", wl_str(ors, "metadata.labels.pod-template-hash"));
    snprintf(sel_old, sizeof sel_old, "pod-template-hash=%s", old_hash);
    json_decref(ors);
    set_image("web", "nginx:2");
    int64_t t0 = wl_mono_ms();
    while (!complete("web") || rs_spec("nginx:1") != 0) {
        cr_assert(wl_mono_ms() - t0 < WAIT_MS, "the rollout did not finish");
        /* One read of the pods: two counts taken one after the other would
         * see a pod deleted between them as an old pod beside a new one. */
        json_t *pods = wl_list("v1", "Pod", "app=web");
        size_t all = json_array_size(pods), old = 0, i;
        json_t *pod;
        json_array_foreach(pods, i, pod)
        {
            const char *h = wl_str(pod, "metadata.labels.pod-template-hash");
            old += h && !strcmp(h, old_hash);
        }
        json_decref(pods);
        cr_assert(old == 0 || old == all, "%zu old pods beside %zu new ones", old, all - old);
        wl_ready_all("app=web");
        wl_sleep_ms(10);
    }
    cr_assert_eq(rs_spec("nginx:2"), 3);
    cr_assert_eq(wl_count("v1", "Pod", sel_old), 0);
}

Test(deployment, undo_reuses_the_old_replica_set_as_the_next_revision)
{
    make_deploy("web", 2, NULL, NULL);
    cr_assert(drive("web"));
    set_image("web", "nginx:2");
    cr_assert(drive("web"));
    cr_assert(WL_WAIT(rs_spec("nginx:1") == 0 && rs_spec("nginx:2") == 2));

    /* kubectl rollout undo: revision 1's template (without its hash
     * label) written back into the Deployment with a JSON patch. */
    json_t *ors = rs_with_image("nginx:1");
    char old_name[128];
    snprintf(old_name, sizeof old_name, "%s", wl_str(ors, "metadata.name"));
    json_t *tmpl = json_deep_copy(json_object_get(json_object_get(ors, "spec"), "template"));
    json_object_del(json_object_get(json_object_get(tmpl, "metadata"), "labels"),
                    "pod-template-hash");
    json_t *patch =
        json_pack("[{s:s, s:s, s:o}]", "op", "replace", "path", "/spec/template", "value", tmpl);
    char *body = json_dumps(patch, JSON_COMPACT);
    cr_assert_eq(wl_request("PATCH", DPATH "web", "application/json-patch+json", body, NULL), 200);
    free(body);
    json_decref(patch);
    json_decref(ors);

    cr_assert(drive("web"));
    cr_assert(WL_WAIT(rs_spec("nginx:1") == 2 && rs_spec("nginx:2") == 0));
    cr_assert_eq(wl_count("apps/v1", "ReplicaSet", NULL), 2, "no third ReplicaSet");
    ors = rs_with_image("nginx:1");
    cr_assert_str_eq(wl_str(ors, "metadata.name"), old_name);
    cr_assert_str_eq(wl_ann(ors, "deployment.kubernetes.io/revision"), "3");
    cr_assert_str_eq(wl_ann(ors, "deployment.kubernetes.io/revision-history"), "1");
    json_decref(ors);
    json_t *d = wl_get("apps/v1", "Deployment", "web");
    cr_assert_str_eq(wl_ann(d, "deployment.kubernetes.io/revision"), "3");
    json_decref(d);
}

static long long dstatus(const char *name, const char *field)
{
    json_t *d = wl_get("apps/v1", "Deployment", name);
    char path[128];
    snprintf(path, sizeof path, "status.%s", field);
    long long v = d ? wl_int(d, path, 0) : -1;
    json_decref(d);
    return v;
}

Test(deployment, paused_deployments_scale_but_do_not_roll_out)
{
    make_deploy("web", 2, NULL, NULL);
    cr_assert(drive("web"));
    patch_deploy("web", "{\"spec\":{\"paused\":true}}");
    cr_assert(WL_WAIT(cond_is("web", "Progressing", "Unknown", "DeploymentPaused")));
    json_t *d = wl_get("apps/v1", "Deployment", "web");
    cr_assert_str_eq(cond_field(d, "Progressing", "message"), "Deployment is paused");
    json_decref(d);
    set_image("web", "nginx:2");
    patch_deploy("web", "{\"spec\":{\"replicas\":3}}");
    cr_assert(WL_WAIT(rs_spec("nginx:1") == 3));
    /* The status follows (a paused rollout has no new ReplicaSet, so no
     * updated replicas). */
    cr_assert(WL_WAIT((wl_ready_all("app=web"), dstatus("web", "availableReplicas") == 3 &&
                                                    dstatus("web", "updatedReplicas") == 0)));
    wl_sleep_ms(300);
    cr_assert_eq(wl_count("apps/v1", "ReplicaSet", NULL), 1, "no rollout while paused");
    d = wl_get("apps/v1", "Deployment", "web");
    cr_assert_eq(wl_int(d, "status.observedGeneration", 0), wl_int(d, "metadata.generation", -1));
    json_decref(d);

    patch_deploy("web", "{\"spec\":{\"paused\":false}}");
    cr_assert(WL_WAIT(rs_spec("nginx:2") >= 1));
    cr_assert(drive("web"));
    cr_assert(WL_WAIT(rs_spec("nginx:1") == 0));
    cr_assert(WL_WAIT(cond_is("web", "Progressing", "True", "NewReplicaSetAvailable")));
}

Test(deployment, progress_deadline_exceeded)
{
    make_deploy("web", 2, NULL, ",\"progressDeadlineSeconds\":1");
    cr_assert(WL_WAIT(cond_is("web", "Progressing", "False", "ProgressDeadlineExceeded")));
    json_t *d = wl_get("apps/v1", "Deployment", "web");
    json_t *rs = rs_with_image("nginx:1");
    char msg[256];
    snprintf(msg, sizeof msg, "ReplicaSet \"%s\" has timed out progressing.",
             wl_str(rs, "metadata.name"));
    cr_assert_str_eq(cond_field(d, "Progressing", "message"), msg);
    cr_assert_str_eq(cond_field(d, "Available", "status"), "False");
    json_decref(rs);
    json_decref(d);
    /* Pods come up after all: progressed. */
    cr_assert(drive("web"));
    cr_assert(WL_WAIT(cond_is("web", "Progressing", "True", "NewReplicaSetAvailable")));
}

Test(deployment, revision_history_limit_removes_old_replica_sets)
{
    make_deploy("web", 1, NULL, ",\"revisionHistoryLimit\":1");
    cr_assert(drive("web"));
    const char *images[] = {"nginx:2", "nginx:3", "nginx:4"};
    for (int i = 0; i < 3; i++) {
        set_image("web", images[i]);
        cr_assert(WL_WAIT(rs_spec(images[i]) == 1));
        cr_assert(drive("web"));
    }
    cr_assert(WL_WAIT(wl_count("apps/v1", "ReplicaSet", NULL) == 2));
    json_t *kept = rs_with_image("nginx:3");
    cr_assert(kept, "the newest old ReplicaSet is kept");
    cr_assert_str_eq(wl_ann(kept, "deployment.kubernetes.io/revision"), "3");
    json_decref(kept);
    cr_assert_null(rs_with_image("nginx:1"));
    cr_assert_null(rs_with_image("nginx:2"));
}

Test(deployment, proportional_scaling_mid_rollout)
{
    /* The documentation's example: 10 replicas, maxSurge 3, maxUnavailable
     * 2, an image that never becomes ready, then scaled to 15. */
    make_deploy("web", 10,
                "{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxSurge\":3,"
                "\"maxUnavailable\":2}}",
                NULL);
    cr_assert(drive("web"));
    set_image("web", "nginx:bad");
    cr_assert(WL_WAIT(rs_spec("nginx:1") == 8 && rs_spec("nginx:bad") == 5));
    wl_sleep_ms(200);
    cr_assert(rs_spec("nginx:1") == 8 && rs_spec("nginx:bad") == 5, "stuck at 8/5");
    patch_deploy("web", "{\"spec\":{\"replicas\":15}}");
    cr_assert(WL_WAIT(rs_spec("nginx:1") == 11 && rs_spec("nginx:bad") == 7));
    json_t *rs = rs_with_image("nginx:bad");
    cr_assert_str_eq(wl_ann(rs, "deployment.kubernetes.io/desired-replicas"), "15");
    cr_assert_str_eq(wl_ann(rs, "deployment.kubernetes.io/max-replicas"), "18");
    json_decref(rs);
}

static bool rs_observed(const char *name)
{
    json_t *rs = wl_get("apps/v1", "ReplicaSet", name);
    bool ok = rs && wl_int(rs, "status.observedGeneration", 0) >= 1;
    json_decref(rs);
    return ok;
}

Test(deployment, adopts_an_orphan_replica_set_with_its_template)
{
    wl_apply(
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":"
        "\"web-manual\",\"namespace\":\"default\",\"labels\":{\"app\":\"web\","
        "\"pod-template-hash\":\"manual\"}},\"spec\":{\"replicas\":1,\"selector\":"
        "{\"matchLabels\":{\"app\":\"web\",\"pod-template-hash\":\"manual\"}},"
        "\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\",\"pod-template-hash\":"
        "\"manual\"}},\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"nginx:1\"}]}}}}");
    /* Once the ReplicaSet controller has written its status, the cluster's
     * cache (one for both controllers) holds it: the Deployment's first
     * pass sees it. */
    cr_assert(WL_WAIT(rs_observed("web-manual")));
    make_deploy("web", 2, NULL, NULL);
    cr_assert(drive("web"));
    cr_assert_eq(wl_count("apps/v1", "ReplicaSet", NULL), 1, "no second ReplicaSet");
    json_t *rs = wl_get("apps/v1", "ReplicaSet", "web-manual");
    json_t *d = wl_get("apps/v1", "Deployment", "web");
    json_t *ref =
        json_array_get(json_object_get(json_object_get(rs, "metadata"), "ownerReferences"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(ref, "uid")), wl_str(d, "metadata.uid"));
    cr_assert(json_is_true(json_object_get(ref, "controller")));
    cr_assert_eq(wl_int(rs, "spec.replicas", -1), 2);
    cr_assert_str_eq(wl_ann(rs, "deployment.kubernetes.io/revision"), "1");
    json_decref(rs);
    json_decref(d);
}

static bool dcond_reason(const char *name, const char *type, const char *reason)
{
    json_t *d = wl_get("apps/v1", "Deployment", name);
    const char *r = d ? cond_field(d, type, "reason") : NULL;
    bool ok = reason ? r && !strcmp(r, reason) : !r;
    json_decref(d);
    return ok;
}

Test(deployment, replica_failure_reaches_the_deployment)
{
    uint64_t id = 0;
    fakeapi_error err = {0};
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){
                                       .verb = "create",
                                       .resource = "pods",
                                       .subresource = "",
                                       .action = FAKEAPI_FAULT_ERROR,
                                       .status = 403,
                                       .reason = "Forbidden",
                                       .message = "pods is forbidden: exceeded quota: q",
                                   },
                                   &id, &err),
                 0, "%s", err.message);
    make_deploy("web", 2, NULL, NULL);
    cr_assert(WL_WAIT(dcond_reason("web", "ReplicaFailure", "FailedCreate")));
    json_t *d = wl_get("apps/v1", "Deployment", "web");
    cr_assert_str_eq(cond_field(d, "ReplicaFailure", "status"), "True");
    cr_assert_str_eq(cond_field(d, "ReplicaFailure", "message"),
                     "pods is forbidden: exceeded quota: q");
    json_decref(d);
    cr_assert_eq(fakeapi_fault_remove(api, id), 0);
    cr_assert(drive("web"));
    cr_assert(WL_WAIT(dcond_reason("web", "ReplicaFailure", NULL)));
}

Test(deployment, a_hash_collision_bumps_collision_count)
{
    /* Paused: no ReplicaSet yet; the stored (defaulted) template gives the
     * hash the controller will use. */
    make_deploy("web", 1, NULL, ",\"paused\":true");
    json_t *d = NULL;
    cr_assert(WL_WAIT((d = wl_get("apps/v1", "Deployment", "web")) != NULL));
    char hash0[16], hash1[16];
    kc__template_hash(json_object_get(json_object_get(d, "spec"), "template"), -1, hash0,
                      sizeof hash0);
    kc__template_hash(json_object_get(json_object_get(d, "spec"), "template"), 1, hash1,
                      sizeof hash1);
    json_decref(d);
    cr_assert_str_neq(hash0, hash1);
    /* Someone else's ReplicaSet holds the name (another template, labels
     * the Deployment does not select). */
    wl_apply("{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":"
             "\"web-%s\",\"namespace\":\"default\",\"labels\":{\"app\":\"other\"}},\"spec\":"
             "{\"replicas\":0,\"selector\":{\"matchLabels\":{\"app\":\"other\"}},\"template\":"
             "{\"metadata\":{\"labels\":{\"app\":\"other\"}},\"spec\":{\"containers\":[{\"name\":"
             "\"app\",\"image\":\"busybox\"}]}}}}",
             hash0);
    patch_deploy("web", "{\"spec\":{\"paused\":false}}");
    cr_assert(drive("web"));
    d = wl_get("apps/v1", "Deployment", "web");
    cr_assert_eq(wl_int(d, "status.collisionCount", 0), 1);
    json_decref(d);
    char name[64];
    snprintf(name, sizeof name, "web-%s", hash1);
    json_t *rs = wl_get("apps/v1", "ReplicaSet", name);
    cr_assert(rs, "the new ReplicaSet is %s", name);
    cr_assert_str_eq(wl_str(rs, "metadata.labels.pod-template-hash"), hash1);
    json_decref(rs);
    snprintf(name, sizeof name, "web-%s", hash0);
    rs = wl_get("apps/v1", "ReplicaSet", name);
    cr_assert_str_eq(wl_str(rs, "metadata.labels.app"), "other", "the other one is untouched");
    json_decref(rs);
}
