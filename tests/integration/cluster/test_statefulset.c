/*
 * test_statefulset.c - the built-in StatefulSet controller
 * (cluster/statefulset.c) against an in-process fakeapi: ordinal names and
 * identity labels, PVCs from volumeClaimTemplates, ControllerRevisions,
 * OrderedReady (checked at every observed point: never pod i+1 before pod
 * i is Running and Ready; scale-down from the highest ordinal), Parallel,
 * rolling updates from the highest ordinal down (with a partition),
 * OnDelete, spec.ordinals.start, the claim retention policy, the order kept
 * when pod creates and status writes fail, and the status
 * `kubectl rollout status statefulset` waits for. Pods are made Running
 * and Ready by hand (no kubelet here).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batchtest.h"
#include "ctrl/object.h"

#define DOC "{\"controllers\":[\"statefulset\"],\"nodes\":0}"

static void setup(void)
{
    bt_start(DOC, 0);
}

TestSuite(statefulset, .init = setup, .fini = bt_stop, .timeout = 90);

static void sts(const char *name, int replicas, const char *extra_spec, const char *image)
{
    char text[2048];
    snprintf(text, sizeof text,
             "apiVersion: apps/v1\n"
             "kind: StatefulSet\n"
             "metadata: {name: %s, namespace: default}\n"
             "spec:\n"
             "  replicas: %d\n"
             "  serviceName: %s-svc\n"
             "  selector: {matchLabels: {app: %s}}\n"
             "%s"
             "  template:\n"
             "    metadata: {labels: {app: %s}}\n"
             "    spec:\n"
             "      containers: [{name: c, image: %s}]\n",
             name, replicas, name, name, extra_spec, name, image);
    bt_apply(text);
}

static json_t *pods_of(const char *set)
{
    char sel[128];
    snprintf(sel, sizeof sel, "app=%s", set);
    return bt_list("v1", "Pod", "default", sel);
}

static bool is_running_ready(const json_t *pod)
{
    json_t *c = bt_cond(pod, "Ready");
    return !strcmp(bt_str(pod, "status.phase"), "Running") && c &&
           !strcmp(bt_str(c, "status"), "True");
}

static json_t *pod_named(const json_t *pods, const char *name)
{
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p) if (!strcmp(bt_str(p, "metadata.name"), name)) return p;
    return NULL;
}

/* OrderedReady's promise at one observed point: a pod exists only when every
 * lower ordinal's pod exists and is Running and Ready. */
static void check_ordered(const char *set, const json_t *pods, int start, int max)
{
    for (int i = start + 1; i < start + max; i++) {
        char name[64], below[64];
        snprintf(name, sizeof name, "%s-%d", set, i);
        if (!pod_named(pods, name))
            continue;
        for (int j = start; j < i; j++) {
            snprintf(below, sizeof below, "%s-%d", set, j);
            const json_t *b = pod_named(pods, below);
            char *dump = b ? json_dumps(b, JSON_COMPACT) : NULL;
            cr_assert(b && is_running_ready(b), "%s exists while %s is %s (status %s)", name, below,
                      b ? "not ready" : "missing", dump ? dump : "-");
            free(dump);
        }
    }
}

/* Make every pod of the set Running and Ready, one observed state at a
 * time, until want pods are (checking the order when ordered). */
static void drive_ready(const char *set, size_t want, bool ordered, int start)
{
    int64_t deadline = bt_mono_ms() + 15000;
    for (;;) {
        json_t *pods = pods_of(set);
        if (ordered)
            check_ordered(set, pods, start, 64);
        size_t ready = 0, i;
        json_t *p;
        json_array_foreach(pods, i, p)
        {
            if (json_object_get(json_object_get(p, "metadata"), "deletionTimestamp"))
                continue;
            if (is_running_ready(p))
                ready++;
            else
                bt_pod_phase("default", bt_str(p, "metadata.name"), "Running", true);
        }
        size_t n = json_array_size(pods);
        json_decref(pods);
        if (ready == want && n == want)
            return;
        cr_assert_lt(bt_mono_ms(), deadline, "%zu of %zu pods ready", ready, want);
        bt_nap();
    }
}

/* kubectl rollout status statefulset (polymorphichelpers' status viewer). */
static bool rollout_complete(const char *set)
{
    json_t *s = bt_get("apps/v1", "StatefulSet", "default", set);
    long long gen = bt_int(s, "metadata.generation", 0);
    long long og = bt_int(s, "status.observedGeneration", 0);
    long long replicas = bt_int(s, "spec.replicas", 1);
    long long ready = bt_int(s, "status.readyReplicas", 0);
    long long updated = bt_int(s, "status.updatedReplicas", 0);
    long long partition = bt_int(s, "spec.updateStrategy.rollingUpdate.partition", -1);
    bool ok = og != 0 && gen <= og && ready >= replicas;
    if (ok && partition >= 0)
        ok = updated >= replicas - partition;
    else if (ok)
        ok = !strcmp(bt_str(s, "status.updateRevision"), bt_str(s, "status.currentRevision"));
    json_decref(s);
    return ok;
}

static long long sts_int(const char *set, const char *path)
{
    json_t *s = bt_get("apps/v1", "StatefulSet", "default", set);
    long long v = bt_int(s, path, -1);
    json_decref(s);
    return v;
}

static bool exists(const char *av, const char *kind, const char *name)
{
    json_t *o = bt_get(av, kind, "default", name);
    json_decref(o);
    return o != NULL;
}

static size_t pod_count(const char *set)
{
    json_t *ps = pods_of(set);
    size_t n = json_array_size(ps);
    json_decref(ps);
    return n;
}

/* The image of the pod's first container ("" when there is no such pod). */
static const char *pod_image(const char *name)
{
    static char img[128];
    json_t *o = bt_get("v1", "Pod", "default", name);
    snprintf(img, sizeof img, "%s",
             o ? bt_str(json_array_get(ctrl_obj_get(o, "spec.containers"), 0), "image") : "");
    json_decref(o);
    return img;
}

static bool pod_uid_is_not(const char *name, const char *uid)
{
    json_t *o = bt_get("v1", "Pod", "default", name);
    bool ok = o && strcmp(bt_str(o, "metadata.uid"), uid);
    json_decref(o);
    return ok;
}

Test(statefulset, ordered_ready_identity_claims_and_status)
{
    sts("web", 3,
        "  volumeClaimTemplates:\n"
        "  - metadata: {name: www, labels: {tier: data}}\n"
        "    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n",
        "nginx:1");
    drive_ready("web", 3, true, 0);
    BT_WAIT(rollout_complete("web"), 10000, "rollout status complete");
    json_t *set = bt_get("apps/v1", "StatefulSet", "default", "web");
    const char *rev = bt_str(set, "status.updateRevision");
    cr_assert_str_eq(rev, bt_str(set, "status.currentRevision"));
    cr_assert_eq(strncmp(rev, "web-", 4), 0, "revision %s", rev);
    cr_assert_eq(bt_int(set, "status.replicas", 0), 3);
    cr_assert_eq(bt_int(set, "status.readyReplicas", 0), 3);
    cr_assert_eq(bt_int(set, "status.availableReplicas", 0), 3);
    cr_assert_eq(bt_int(set, "status.currentReplicas", 0), 3);
    cr_assert_eq(bt_int(set, "status.updatedReplicas", 0), 3);
    cr_assert_eq(bt_int(set, "status.collisionCount", -1), 0);
    cr_assert_eq(bt_int(set, "status.observedGeneration", 0),
                 bt_int(set, "metadata.generation", -1));
    json_t *pods = pods_of("web");
    for (int i = 0; i < 3; i++) {
        char name[32], ix[8], claim[32];
        snprintf(name, sizeof name, "web-%d", i);
        snprintf(ix, sizeof ix, "%d", i);
        snprintf(claim, sizeof claim, "www-web-%d", i);
        json_t *p = pod_named(pods, name);
        cr_assert(p, "%s", name);
        json_t *labels = json_object_get(json_object_get(p, "metadata"), "labels");
        cr_assert_str_eq(
            json_string_value(json_object_get(labels, "statefulset.kubernetes.io/pod-name")), name);
        cr_assert_str_eq(json_string_value(json_object_get(labels, "apps.kubernetes.io/pod-index")),
                         ix);
        cr_assert_str_eq(json_string_value(json_object_get(labels, "controller-revision-hash")),
                         rev);
        cr_assert_str_eq(bt_str(p, "spec.hostname"), name);
        cr_assert_str_eq(bt_str(p, "spec.subdomain"), "web-svc");
        json_t *vol = json_array_get(json_object_get(json_object_get(p, "spec"), "volumes"), 0);
        cr_assert_str_eq(bt_str(vol, "name"), "www");
        cr_assert_str_eq(bt_str(vol, "persistentVolumeClaim.claimName"), claim);
        json_t *ref =
            json_array_get(json_object_get(json_object_get(p, "metadata"), "ownerReferences"), 0);
        cr_assert_str_eq(bt_str(ref, "kind"), "StatefulSet");
        cr_assert_str_eq(bt_str(ref, "uid"), bt_str(set, "metadata.uid"));
        json_t *pvc = bt_get("v1", "PersistentVolumeClaim", "default", claim);
        cr_assert(pvc, "claim %s", claim);
        cr_assert_str_eq(bt_str(pvc, "metadata.labels.tier"), "data");
        cr_assert_str_eq(bt_str(pvc, "metadata.labels.app"), "web");
        cr_assert_str_eq(bt_str(pvc, "spec.resources.requests.storage"), "1Gi");
        cr_assert_null(json_object_get(json_object_get(pvc, "metadata"), "ownerReferences"),
                       "Retain: claims are not owned");
        json_decref(pvc);
    }
    json_decref(pods);
    json_t *cr = bt_get("apps/v1", "ControllerRevision", "default", rev);
    cr_assert(cr, "ControllerRevision %s", rev);
    cr_assert_eq(bt_int(cr, "revision", 0), 1);
    json_t *c0 = json_array_get(ctrl_obj_get(cr, "data.spec.template.spec.containers"), 0);
    cr_assert_str_eq(bt_str(c0, "image"), "nginx:1");
    cr_assert_str_eq(bt_str(cr, "data.spec.template.$patch"), "replace");
    json_t *ref =
        json_array_get(json_object_get(json_object_get(cr, "metadata"), "ownerReferences"), 0);
    cr_assert_str_eq(bt_str(ref, "kind"), "StatefulSet");
    json_decref(cr);
    json_decref(set);

    /* Scale down: the highest ordinal goes first, one at a time. */
    bt_patch("apps/v1", "StatefulSet", "default", "web", "{\"spec\":{\"replicas\":1}}");
    int64_t deadline = bt_mono_ms() + 15000;
    for (;;) {
        json_t *ps = pods_of("web");
        bool has1 = pod_named(ps, "web-1"), has2 = pod_named(ps, "web-2");
        size_t n = json_array_size(ps);
        json_decref(ps);
        cr_assert(!(!has1 && has2), "web-1 deleted before web-2");
        if (n == 1)
            break;
        cr_assert_lt(bt_mono_ms(), deadline, "scale down to 1");
        bt_nap();
    }
    BT_WAIT(sts_int("web", "status.replicas") == 1, 10000, "status.replicas 1");
    cr_assert(exists("v1", "PersistentVolumeClaim", "www-web-2"), "Retain keeps the claim");
}

Test(statefulset, rolling_update_from_the_highest_ordinal)
{
    sts("ru", 3, "", "nginx:1");
    drive_ready("ru", 3, true, 0);
    BT_WAIT(rollout_complete("ru"), 10000, "first rollout");
    json_t *set = bt_get("apps/v1", "StatefulSet", "default", "ru");
    char old_rev[128];
    snprintf(old_rev, sizeof old_rev, "%s", bt_str(set, "status.currentRevision"));
    json_decref(set);

    bt_patch("apps/v1", "StatefulSet", "default", "ru",
             "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
             "\"image\":\"nginx:2\"}]}}}}");
    /* Watch the order in which ordinals reach the new revision. */
    char order[8] = "";
    size_t got = 0;
    int64_t deadline = bt_mono_ms() + 20000;
    while (got < 3) {
        json_t *ps = pods_of("ru");
        size_t i;
        json_t *p;
        json_array_foreach(ps, i, p)
        {
            const char *img =
                bt_str(json_array_get(ctrl_obj_get(p, "spec.containers"), 0), "image");
            char ord = bt_str(p, "metadata.name")[3];
            if (!strcmp(img, "nginx:2") && !strchr(order, ord)) {
                order[got++] = ord;
                order[got] = 0;
            }
            if (!json_object_get(json_object_get(p, "metadata"), "deletionTimestamp") &&
                !is_running_ready(p))
                bt_pod_phase("default", bt_str(p, "metadata.name"), "Running", true);
        }
        json_decref(ps);
        cr_assert_lt(bt_mono_ms(), deadline, "updated: %s", order);
        bt_nap();
    }
    cr_assert_str_eq(order, "210", "highest ordinal first");
    drive_ready("ru", 3, false, 0);
    BT_WAIT(rollout_complete("ru"), 10000, "rollout of the update");
    set = bt_get("apps/v1", "StatefulSet", "default", "ru");
    const char *rev = bt_str(set, "status.updateRevision");
    cr_assert_str_neq(rev, old_rev);
    cr_assert_str_eq(bt_str(set, "status.currentRevision"), rev);
    cr_assert_eq(bt_int(set, "status.updatedReplicas", 0), 3);
    json_t *cr = bt_get("apps/v1", "ControllerRevision", "default", rev);
    cr_assert_eq(bt_int(cr, "revision", 0), 2);
    json_decref(cr);
    json_decref(set);

    /* Back to the first template: its revision is renumbered, not remade. */
    bt_patch("apps/v1", "StatefulSet", "default", "ru",
             "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
             "\"image\":\"nginx:1\"}]}}}}");
    BT_WAIT(sts_int("ru", "status.observedGeneration") == sts_int("ru", "metadata.generation"),
            10000, "observed");
    set = bt_get("apps/v1", "StatefulSet", "default", "ru");
    cr_assert_str_eq(bt_str(set, "status.updateRevision"), old_rev);
    json_decref(set);
    cr = bt_get("apps/v1", "ControllerRevision", "default", old_rev);
    cr_assert_eq(bt_int(cr, "revision", 0), 3);
    json_decref(cr);
    json_t *crs = bt_list("apps/v1", "ControllerRevision", "default", NULL);
    cr_assert_eq(json_array_size(crs), 2);
    json_decref(crs);
}

Test(statefulset, partitioned_rolling_update)
{
    sts("pt", 3, "  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 2}}\n",
        "nginx:1");
    drive_ready("pt", 3, true, 0);
    bt_patch("apps/v1", "StatefulSet", "default", "pt",
             "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
             "\"image\":\"nginx:2\"}]}}}}");
    BT_WAIT((drive_ready("pt", 3, false, 0),
             sts_int("pt", "status.updatedReplicas") == 1 && rollout_complete("pt")),
            15000, "one pod updated, partitioned roll out complete");
    json_t *pods = pods_of("pt");
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "pt-%d", i);
        json_t *p = pod_named(pods, name);
        const char *img = bt_str(json_array_get(ctrl_obj_get(p, "spec.containers"), 0), "image");
        cr_assert_str_eq(img, i < 2 ? "nginx:1" : "nginx:2", "%s", name);
    }
    json_decref(pods);
    json_t *set = bt_get("apps/v1", "StatefulSet", "default", "pt");
    cr_assert_str_neq(bt_str(set, "status.currentRevision"), bt_str(set, "status.updateRevision"));
    cr_assert_eq(bt_int(set, "status.currentReplicas", 0), 2);
    json_decref(set);
}

Test(statefulset, parallel_creates_all_at_once)
{
    sts("par", 4, "  podManagementPolicy: Parallel\n", "nginx:1");
    BT_WAIT(pod_count("par") == 4, 10000, "four pods without any being ready");
    drive_ready("par", 4, false, 0);
    BT_WAIT(rollout_complete("par"), 10000, "ready");
}

Test(statefulset, on_delete_waits_for_deletions)
{
    sts("od", 2, "  updateStrategy: {type: OnDelete}\n", "nginx:1");
    drive_ready("od", 2, true, 0);
    bt_patch("apps/v1", "StatefulSet", "default", "od",
             "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
             "\"image\":\"nginx:2\"}]}}}}");
    BT_WAIT(sts_int("od", "status.observedGeneration") == 2, 10000, "observed");
    for (int i = 0; i < 40; i++)
        bt_nap();
    json_t *pods = pods_of("od");
    cr_assert_eq(json_array_size(pods), 2);
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p) cr_assert_str_eq(
        bt_str(json_array_get(ctrl_obj_get(p, "spec.containers"), 0), "image"), "nginx:1");
    json_decref(pods);
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_delete(bt_api, "v1", "Pod", "default", "od-1", &fe), 0);
    BT_WAIT(!strcmp(pod_image("od-1"), "nginx:2"), 10000, "od-1 recreated at the update revision");
    BT_WAIT(sts_int("od", "status.updatedReplicas") == 1, 10000, "one updated");
}

Test(statefulset, start_ordinal_and_claim_retention_when_scaled)
{
    sts("st", 2,
        "  ordinals: {start: 5}\n"
        "  persistentVolumeClaimRetentionPolicy: {whenScaled: Delete, whenDeleted: Retain}\n"
        "  volumeClaimTemplates:\n"
        "  - metadata: {name: data}\n"
        "    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n",
        "nginx:1");
    drive_ready("st", 2, true, 5);
    cr_assert(exists("v1", "Pod", "st-5") && exists("v1", "Pod", "st-6"));
    cr_assert(exists("v1", "PersistentVolumeClaim", "data-st-6"));
    bt_patch("apps/v1", "StatefulSet", "default", "st", "{\"spec\":{\"replicas\":1}}");
    BT_WAIT(!exists("v1", "Pod", "st-6"), 10000, "st-6 deleted");
    BT_WAIT(!exists("v1", "PersistentVolumeClaim", "data-st-6"), 10000,
            "whenScaled: Delete takes its claim");
    cr_assert(exists("v1", "PersistentVolumeClaim", "data-st-5"));
}

Test(statefulset, claims_owned_when_deleted_delete)
{
    sts("wd", 1,
        "  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete}\n"
        "  volumeClaimTemplates:\n"
        "  - metadata: {name: data}\n"
        "    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n",
        "nginx:1");
    BT_WAIT(exists("v1", "PersistentVolumeClaim", "data-wd-0"), 10000, "claim");
    json_t *pvc = bt_get("v1", "PersistentVolumeClaim", "default", "data-wd-0");
    json_t *ref =
        json_array_get(json_object_get(json_object_get(pvc, "metadata"), "ownerReferences"), 0);
    cr_assert_str_eq(bt_str(ref, "kind"), "StatefulSet");
    cr_assert_str_eq(bt_str(ref, "name"), "wd");
    json_decref(pvc);
}

Test(statefulset, failed_pod_is_recreated)
{
    sts("fp", 2, "", "nginx:1");
    drive_ready("fp", 2, true, 0);
    json_t *p = bt_get("v1", "Pod", "default", "fp-0");
    char uid[64];
    snprintf(uid, sizeof uid, "%s", bt_str(p, "metadata.uid"));
    json_decref(p);
    bt_pod_phase("default", "fp-0", "Failed", false);
    BT_WAIT(pod_uid_is_not("fp-0", uid), 10000, "fp-0 recreated");
}

Test(statefulset, ordered_despite_api_errors)
{
    fakeapi_error fe = {0};
    uint64_t ids[2];
    cr_assert_eq(fakeapi_fault_add(bt_api,
                                   &(fakeapi_fault){.verb = "create",
                                                    .resource = "pods",
                                                    .first = 2,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 500},
                                   &ids[0], &fe),
                 0, "%s", fe.message);
    cr_assert_eq(fakeapi_fault_add(bt_api,
                                   &(fakeapi_fault){.verb = "update",
                                                    .subresource = "status",
                                                    .resource = "statefulsets",
                                                    .first = 3,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 409,
                                                    .reason = "Conflict"},
                                   &ids[1], &fe),
                 0, "%s", fe.message);
    sts("fl", 5, "", "nginx:1");
    drive_ready("fl", 5, true, 0);
    BT_WAIT(rollout_complete("fl"), 15000, "rollout status complete");
    for (int k = 0; k < 2; k++) {
        unsigned long matched = 0, fired = 0;
        cr_assert_eq(fakeapi_fault_hits(bt_api, ids[k], &matched, &fired), 0);
        cr_assert_gt(fired, 0, "fault %d fired (%lu matched)", k, matched);
    }
}
