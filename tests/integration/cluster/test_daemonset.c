/*
 * test_daemonset.c - the built-in DaemonSet controller (cluster/daemonset.c)
 * against an in-process fakeapi, with Nodes made by hand: one pod per
 * eligible node (nodeSelector, required node affinity, taints and the
 * default daemon tolerations), pinned by matchFields metadata.name; node
 * changes; ControllerRevisions; RollingUpdate with maxUnavailable (at
 * every observed point at most that many nodes lack a ready pod) and with
 * maxSurge (never a node without a ready pod); OnDelete; the status
 * `kubectl rollout status daemonset` reads. Pods are made Running and
 * Ready by hand (no scheduler or kubelet here).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batchtest.h"
#include "ctrl/object.h"

#define DOC "{\"controllers\":[\"daemonset\"],\"nodes\":0}"

static void setup(void)
{
    bt_start(DOC, 0);
}

TestSuite(daemonset, .init = setup, .fini = bt_stop, .timeout = 90);

static void node(const char *name, const char *labels, const char *taints)
{
    char text[1024];
    snprintf(text, sizeof text,
             "apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: %s}\nspec: {taints: %s}\n",
             name, labels, taints);
    bt_apply(text);
}

static void daemonset(const char *name, const char *extra_spec, const char *extra_pod_spec,
                      const char *image)
{
    char text[2048];
    snprintf(text, sizeof text,
             "apiVersion: apps/v1\n"
             "kind: DaemonSet\n"
             "metadata: {name: %s, namespace: default}\n"
             "spec:\n"
             "  selector: {matchLabels: {app: %s}}\n"
             "%s"
             "  template:\n"
             "    metadata: {labels: {app: %s}}\n"
             "    spec:\n"
             "%s"
             "      containers: [{name: c, image: %s}]\n",
             name, name, extra_spec, name, extra_pod_spec, image);
    bt_apply(text);
}

static json_t *pods_of(const char *ds)
{
    char sel[128];
    snprintf(sel, sizeof sel, "app=%s", ds);
    return bt_list("v1", "Pod", "default", sel);
}

static const char *target(const json_t *pod)
{
    json_t *t = json_array_get(ctrl_obj_get(pod, "spec.affinity.nodeAffinity."
                                                 "requiredDuringSchedulingIgnoredDuringExecution."
                                                 "nodeSelectorTerms"),
                               0);
    json_t *f = json_array_get(json_object_get(t, "matchFields"), 0);
    return json_string_value(json_array_get(json_object_get(f, "values"), 0));
}

/* The nodes that have a live pod of the set, as "n1,n2," in name order. */
static void nodes_with_pods(const char *ds, char *out, size_t len)
{
    json_t *pods = pods_of(ds);
    out[0] = 0;
    const char *names[] = {"n1", "n2", "n3", "n4", "n5"};
    for (int k = 0; k < 5; k++) {
        size_t i;
        json_t *p;
        json_array_foreach(pods, i, p)
        {
            if (json_object_get(json_object_get(p, "metadata"), "deletionTimestamp"))
                continue;
            const char *t = target(p);
            if (t && !strcmp(t, names[k])) {
                strncat(out, names[k], len - strlen(out) - 1);
                strncat(out, ",", len - strlen(out) - 1);
                break;
            }
        }
    }
    json_decref(pods);
}

static bool placed_on(const char *ds, const char *want)
{
    char have[64];
    nodes_with_pods(ds, have, sizeof have);
    return !strcmp(have, want);
}

static long long ds_int(const char *ds, const char *path)
{
    json_t *d = bt_get("apps/v1", "DaemonSet", "default", ds);
    long long v = bt_int(d, path, -1);
    json_decref(d);
    return v;
}

static bool is_ready(const json_t *pod)
{
    json_t *c = bt_cond(pod, "Ready");
    return !strcmp(bt_str(pod, "status.phase"), "Running") && c &&
           !strcmp(bt_str(c, "status"), "True");
}

/* Make every live pod Running and Ready; returns how many nodes in names
 * lack a ready pod at the observed point (before marking). */
static int drive(const char *ds, const char *const *names, int n)
{
    json_t *pods = pods_of(ds);
    int missing = 0;
    for (int k = 0; k < n; k++) {
        bool ok = false;
        size_t i;
        json_t *p;
        json_array_foreach(pods, i, p)
        {
            const char *t = target(p);
            if (t && !strcmp(t, names[k]) && is_ready(p) &&
                !json_object_get(json_object_get(p, "metadata"), "deletionTimestamp"))
                ok = true;
        }
        missing += !ok;
    }
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        if (!json_object_get(json_object_get(p, "metadata"), "deletionTimestamp") && !is_ready(p))
            bt_pod_phase("default", bt_str(p, "metadata.name"), "Running", true);
    }
    json_decref(pods);
    return missing;
}

/* kubectl rollout status daemonset (polymorphichelpers' status viewer). */
static bool rollout_complete(const char *ds)
{
    json_t *d = bt_get("apps/v1", "DaemonSet", "default", ds);
    bool ok =
        bt_int(d, "metadata.generation", 0) <= bt_int(d, "status.observedGeneration", 0) &&
        bt_int(d, "status.updatedNumberScheduled", 0) >=
            bt_int(d, "status.desiredNumberScheduled", -1) &&
        bt_int(d, "status.numberAvailable", 0) >= bt_int(d, "status.desiredNumberScheduled", -1);
    json_decref(d);
    return ok;
}

Test(daemonset, one_pod_per_eligible_node)
{
    node("n1", "{disk: ssd}", "[]");
    node("n2", "{disk: hdd}", "[]");
    node("n3", "{disk: ssd}", "[{key: dedicated, value: x, effect: NoSchedule}]");
    node("n4", "{disk: ssd}", "[{key: node.kubernetes.io/not-ready, effect: NoExecute}]");
    daemonset("ds", "", "      nodeSelector: {disk: ssd}\n", "agent:1");
    BT_WAIT(placed_on("ds", "n1,n4,"), 10000, "pods on n1 and n4 (n3 tainted, n2 hdd)");
    BT_WAIT(ds_int("ds", "status.desiredNumberScheduled") == 2 &&
                ds_int("ds", "status.currentNumberScheduled") == 2 &&
                ds_int("ds", "status.updatedNumberScheduled") == 2,
            10000, "desired, current and updated 2");
    json_t *d = bt_get("apps/v1", "DaemonSet", "default", "ds");
    cr_assert_eq(bt_int(d, "status.currentNumberScheduled", -1), 2);
    cr_assert_eq(bt_int(d, "status.numberMisscheduled", -1), 0);
    cr_assert_eq(bt_int(d, "status.numberReady", -1), 0);
    cr_assert_eq(bt_int(d, "status.numberUnavailable", -1), 2);
    cr_assert_eq(bt_int(d, "status.updatedNumberScheduled", -1), 2);
    cr_assert_eq(bt_int(d, "status.observedGeneration", -1), bt_int(d, "metadata.generation", 0));
    json_t *crs = bt_list("apps/v1", "ControllerRevision", "default", NULL);
    cr_assert_eq(json_array_size(crs), 1);
    json_t *cr = json_array_get(crs, 0);
    const char *hash = json_string_value(
        json_object_get(json_object_get(json_object_get(cr, "metadata"), "labels"),
                        "controller.kubernetes.io/hash"));
    cr_assert(hash);
    char want_name[64];
    snprintf(want_name, sizeof want_name, "ds-%s", hash);
    cr_assert_str_eq(bt_str(cr, "metadata.name"), want_name);

    json_t *pods = pods_of("ds");
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        cr_assert_str_eq(bt_str(p, "metadata.generateName"), "ds-");
        json_t *labels = json_object_get(json_object_get(p, "metadata"), "labels");
        cr_assert_str_eq(json_string_value(json_object_get(labels, "controller-revision-hash")),
                         hash);
        cr_assert_str_eq(json_string_value(json_object_get(labels, "pod-template-generation")),
                         "1");
        json_t *f = json_array_get(
            json_object_get(
                json_array_get(ctrl_obj_get(p, "spec.affinity.nodeAffinity."
                                               "requiredDuringSchedulingIgnoredDuringExecution."
                                               "nodeSelectorTerms"),
                               0),
                "matchFields"),
            0);
        cr_assert_str_eq(bt_str(f, "key"), "metadata.name");
        cr_assert_str_eq(bt_str(f, "operator"), "In");
        const char *want[] = {
            "node.kubernetes.io/not-ready",     "node.kubernetes.io/unreachable",
            "node.kubernetes.io/disk-pressure", "node.kubernetes.io/memory-pressure",
            "node.kubernetes.io/pid-pressure",  "node.kubernetes.io/unschedulable"};
        for (int k = 0; k < 6; k++) {
            bool has = false;
            size_t j;
            json_t *t;
            json_array_foreach(ctrl_obj_get(p, "spec.tolerations"), j, t)
            {
                has |=
                    !strcmp(bt_str(t, "key"), want[k]) && !strcmp(bt_str(t, "operator"), "Exists");
            }
            cr_assert(has, "toleration %s", want[k]);
        }
        json_t *ref =
            json_array_get(json_object_get(json_object_get(p, "metadata"), "ownerReferences"), 0);
        cr_assert_str_eq(bt_str(ref, "kind"), "DaemonSet");
        cr_assert_str_eq(bt_str(ref, "uid"), bt_str(d, "metadata.uid"));
    }
    json_decref(pods);
    json_decref(crs);
    json_decref(d);

    const char *names[] = {"n1", "n4"};
    BT_WAIT(drive("ds", names, 2) == 0 && ds_int("ds", "status.numberReady") == 2, 10000, "ready");
    BT_WAIT(rollout_complete("ds"), 10000, "rollout status complete");
    cr_assert_eq(ds_int("ds", "status.numberUnavailable"), -1, "omitted when 0");
}

Test(daemonset, follows_node_changes)
{
    node("n1", "{disk: ssd}", "[]");
    node("n2", "{disk: hdd}", "[]");
    daemonset("fl", "", "      nodeSelector: {disk: ssd}\n", "agent:1");
    BT_WAIT(placed_on("fl", "n1,"), 10000, "n1");
    bt_patch("v1", "Node", "", "n2", "{\"metadata\":{\"labels\":{\"disk\":\"ssd\"}}}");
    BT_WAIT(placed_on("fl", "n1,n2,"), 10000, "n2 relabelled");
    node("n3", "{disk: ssd}", "[]");
    BT_WAIT(placed_on("fl", "n1,n2,n3,"), 10000, "new node n3");
    bt_patch("v1", "Node", "", "n1",
             "{\"spec\":{\"taints\":[{\"key\":\"evict\",\"effect\":\"NoExecute\"}]}}");
    BT_WAIT(placed_on("fl", "n2,n3,"), 10000, "an untolerated NoExecute taint evicts");
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_delete(bt_api, "v1", "Node", NULL, "n3", &fe), 0);
    BT_WAIT(placed_on("fl", "n2,"), 10000, "the pod of a deleted node goes");
    BT_WAIT(ds_int("fl", "status.desiredNumberScheduled") == 1, 10000, "desired 1");
}

Test(daemonset, affinity_and_tolerations)
{
    node("n1", "{zone: a}", "[{key: dedicated, value: x, effect: NoSchedule}]");
    node("n2", "{zone: b}", "[]");
    node("n3", "{zone: a}", "[{key: other, value: y, effect: NoSchedule}]");
    daemonset(
        "af", "",
        "      tolerations: [{key: dedicated, operator: Equal, value: x, effect: NoSchedule}]\n"
        "      affinity:\n"
        "        nodeAffinity:\n"
        "          requiredDuringSchedulingIgnoredDuringExecution:\n"
        "            nodeSelectorTerms:\n"
        "            - matchExpressions: [{key: zone, operator: In, values: [a]}]\n",
        "agent:1");
    BT_WAIT(placed_on("af", "n1,"), 10000, "only n1: zone a and a tolerated taint");
    json_t *pods = pods_of("af");
    json_t *terms =
        ctrl_obj_get(json_array_get(pods, 0),
                     "spec.affinity.nodeAffinity."
                     "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms");
    cr_assert_eq(json_array_size(terms), 1, "the affinity is replaced by the node pin");
    cr_assert_null(json_object_get(json_array_get(terms, 0), "matchExpressions"));
    json_decref(pods);
}

static void set_image(const char *ds, const char *image)
{
    char p[256];
    snprintf(
        p, sizeof p,
        "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"%s\"}]}}}}",
        image);
    bt_patch("apps/v1", "DaemonSet", "default", ds, p);
}

static int count_image(const char *ds, const char *image)
{
    json_t *pods = pods_of(ds);
    int n = 0;
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        if (!json_object_get(json_object_get(p, "metadata"), "deletionTimestamp") &&
            !strcmp(bt_str(json_array_get(ctrl_obj_get(p, "spec.containers"), 0), "image"), image))
            n++;
    }
    json_decref(pods);
    return n;
}

static void rolling(const char *name, const char *strategy, int max_missing)
{
    const char *names[] = {"n1", "n2", "n3", "n4"};
    for (int k = 0; k < 4; k++)
        node(names[k], "{}", "[]");
    daemonset(name, strategy, "", "agent:1");
    BT_WAIT(placed_on(name, "n1,n2,n3,n4,"), 10000, "four pods");
    BT_WAIT(drive(name, names, 4) == 0 && rollout_complete(name), 10000, "first rollout");
    set_image(name, "agent:2");
    int64_t deadline = bt_mono_ms() + 20000;
    int worst = 0;
    while (!(count_image(name, "agent:2") == 4 && count_image(name, "agent:1") == 0 &&
             rollout_complete(name))) {
        int missing = drive(name, names, 4);
        if (missing > worst)
            worst = missing;
        cr_assert_leq(missing, max_missing, "%d nodes without a ready pod", missing);
        cr_assert_lt(bt_mono_ms(), deadline, "update: %d at agent:2", count_image(name, "agent:2"));
        bt_nap();
    }
    cr_assert_eq(ds_int(name, "status.updatedNumberScheduled"), 4);
    json_t *crs = bt_list("apps/v1", "ControllerRevision", "default", NULL);
    cr_assert_eq(json_array_size(crs), 2, "two revisions");
    json_decref(crs);
}

Test(daemonset, rolling_update_max_unavailable)
{
    rolling("mu", "  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1}}\n",
            1);
}

Test(daemonset, rolling_update_max_surge)
{
    rolling("ms",
            "  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 0, maxSurge: "
            "1}}\n",
            0);
}

Test(daemonset, on_delete)
{
    const char *names[] = {"n1", "n2"};
    node("n1", "{}", "[]");
    node("n2", "{}", "[]");
    daemonset("od", "  updateStrategy: {type: OnDelete}\n", "", "agent:1");
    BT_WAIT(placed_on("od", "n1,n2,"), 10000, "two pods");
    BT_WAIT(drive("od", names, 2) == 0, 10000, "ready");
    set_image("od", "agent:2");
    BT_WAIT(ds_int("od", "status.observedGeneration") == 2, 10000, "observed");
    for (int i = 0; i < 40; i++)
        bt_nap();
    cr_assert_eq(count_image("od", "agent:1"), 2, "OnDelete: nothing replaced");
    json_t *pods = pods_of("od");
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_delete(bt_api, "v1", "Pod", "default",
                                bt_str(json_array_get(pods, 0), "metadata.name"), &fe),
                 0);
    json_decref(pods);
    BT_WAIT(count_image("od", "agent:2") == 1 && count_image("od", "agent:1") == 1, 10000,
            "the deleted pod comes back at the new template");
    BT_WAIT(ds_int("od", "status.updatedNumberScheduled") == 1, 10000, "one updated");
}

/* The live pod of the set on its node (a new reference), or NULL. */
static json_t *live_pod(const char *ds)
{
    json_t *pods = pods_of(ds), *found = NULL;
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        if (!json_object_get(json_object_get(p, "metadata"), "deletionTimestamp")) {
            found = json_incref(p);
            break;
        }
    }
    json_decref(pods);
    return found;
}

static bool replaced(const char *ds, const char *old_name)
{
    json_t *p = live_pod(ds);
    bool ok = p && strcmp(bt_str(p, "metadata.name"), old_name) &&
              strcmp(bt_str(p, "status.phase"), "Failed");
    json_decref(p);
    return ok;
}

Test(daemonset, failed_pods_are_replaced_with_backoff)
{
    node("n1", "{}", "[]");
    daemonset("fb", "", "", "agent:1");
    char name[128];
    for (int round = 0; round < 3; round++) {
        json_t *p = NULL;
        BT_WAIT((p = live_pod("fb")) != NULL, 10000, "a pod (round %d)", round);
        snprintf(name, sizeof name, "%s", bt_str(p, "metadata.name"));
        json_decref(p);
        bt_pod_phase("default", name, "Failed", false);
        if (round == 2) {
            /* Replaced twice already: now it waits 2 s from the last one. */
            for (int i = 0; i < 60; i++)
                bt_nap();
            json_t *still = bt_get("v1", "Pod", "default", name);
            cr_assert(still, "the failed pod waits out its backoff");
            json_decref(still);
        }
        bt_advance(3 * CTRL_SECOND);
        BT_WAIT(replaced("fb", name), 10000, "replaced (round %d)", round);
    }
}
