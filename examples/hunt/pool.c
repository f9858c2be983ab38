/*
 * pool.c - the Pool controller, buggy and fixed (hunt.h): spec.replicas
 * Pods "<pool>-<i>", the count in status.replicas.
 *
 * DESIGN
 * - Threads: reconcile runs on the controller's worker; nothing else here,
 *   and no state of our own.
 * - Reads: the Pool from the cache (the client's reader); its Pods live
 *   (ctrl_ctx_api_reader, label hunt.example.com/owner, controller owner
 *   uid), so that a Pod it has just made is never missed and made twice.
 *   Pods have no informer: the controller is their only writer, and it
 *   looks again every 30 s.
 * - A scale-down happens in two rounds: the new count goes to the status
 *   first, and Pods at or beyond the count the status records are deleted
 *   in the next round (a Pod beyond it is also what a reconcile that
 *   crashed between its creates and its status write leaves behind).
 * - Writes: Pod creates (deterministic names: a create of a Pod that is
 *   there already, which a stale read can ask for, is 409 AlreadyExists,
 *   tolerated) and deletes, then
 *   status.replicas and status.observedGeneration through the status
 *   subresource with the resourceVersion read.
 * - Each Pod is labelled hunt.example.com/generation with the Pool's
 *   generation it was made for. The one difference between the variants:
 *     buggy: deletes every Pod at or beyond status.replicas as the cache
 *            shows the Pool. When that view lags behind the Pods (its own
 *            status write not seen yet), the Pod it has just created looks
 *            unrecorded, and it deletes it.
 *     fixed: leaves a Pod whose generation label is above the status's
 *            observedGeneration: that Pod was made, and counted, by a
 *            reconcile that saw more than this view does.
 */
#include "hunt.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "hunt_util.h"

#define KIND "Pool"
#define INDEX_LABEL "hunt.example.com/index"
#define GEN_LABEL "hunt.example.com/generation"
#define POLL (30 * CTRL_SECOND)
#define SETTLE (1 * CTRL_SECOND)
#define MAX_REPLICAS 64 /* the CRD's maximum */

static const hunt_variant buggy_variant = {false, "hunt-pool-buggy"};
static const hunt_variant fixed_variant = {true, "hunt-pool-fixed"};

/* A label holding a non-negative integer, or -1. */
static long long label_int(const json_t *obj, const char *key)
{
    const char *s = ctrl_obj_label(obj, key);
    char *end;
    if (!s || !*s)
        return -1;
    long long n = strtoll(s, &end, 10);
    return *end || n < 0 ? -1 : n;
}

/* Pod i of Pool p (borrowed). */
static json_t *pod_for(const json_t *p, int i)
{
    const char *name = ctrl_obj_name(p);
    char pname[320], idx[32], gen[32];
    snprintf(pname, sizeof pname, "%s-%d", name, i);
    snprintf(idx, sizeof idx, "%d", i);
    snprintf(gen, sizeof gen, "%lld", (long long)ctrl_obj_generation(p));
    json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:[{s:s, s:s, "
                            "s:[s, s]}]}}",
                            "apiVersion", "v1", "kind", "Pod", "metadata", "name", pname,
                            "namespace", ctrl_obj_namespace(p), "labels", HUNT_OWNER_LABEL, name,
                            INDEX_LABEL, idx, GEN_LABEL, gen, "spec", "containers", "name",
                            "worker", "image", "busybox:1.36", "command", "sleep", "infinity");
    if (pod && ctrl_set_controller_reference(p, pod, NULL) < 0) {
        json_decref(pod);
        pod = NULL;
    }
    return pod;
}

/* The Pods Pool p controls, read live: a new array in *out. */
static int list_pods(ctrl_client *c, const json_t *p, json_t **out)
{
    char sel[320];
    snprintf(sel, sizeof sel, HUNT_OWNER_LABEL "=%s", ctrl_obj_name(p));
    json_t *list = NULL;
    int rc = ctrl_client_list(c, "v1", "Pod", ctrl_obj_namespace(p),
                              &(ctrl_list_options){.label_selector = sel}, &list, NULL);
    if (rc < 0)
        return rc;
    json_t *mine = json_array();
    size_t i;
    json_t *pod;
    json_array_foreach(json_object_get(list, "items"), i, pod)
    {
        const char *owner = ctrl_obj_controller_uid(pod, EXAMPLE_HUNT_GROUP, KIND);
        if (owner && !strcmp(owner, ctrl_obj_uid(p)) && !ctrl_obj_deleting(pod))
            json_array_append(mine, pod);
    }
    json_decref(list);
    *out = mine;
    return mine ? 0 : CTRL_ERR_NOMEM;
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    const hunt_variant *v = user;
    ctrl_client *c = ctrl_ctx_client(ctx);
    json_t *p = NULL, *pods = NULL;
    ctrl_result res = ctrl_requeue_after(POLL);
    int rc = ctrl_client_get(c, EXAMPLE_HUNT_API_VERSION, KIND, req->ns, req->name, &p, NULL);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done(); /* gone: its Pods go with it (garbage collection) */
    if (rc < 0)
        return ctrl_err(rc);
    if (ctrl_obj_deleting(p) || !ctrl_obj_uid(p))
        goto out;
    rc = list_pods(ctrl_ctx_api_reader(ctx), p, &pods);
    if (rc < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    int64_t want = ctrl_obj_get_int(p, "spec.replicas", 1);
    int64_t recorded = ctrl_obj_get_int(p, "status.replicas", 0);
    int64_t observed = ctrl_obj_get_int(p, "status.observedGeneration", 0);
    if (want < 0 || want > MAX_REPLICAS) {
        res = ctrl_terminal(CTRL_ERR_ARG); /* the CRD forbids it */
        goto out;
    }

    /* 1. Delete the Pods the status does not count. */
    int deleted = 0;
    bool have[MAX_REPLICAS] = {false};
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        long long idx = label_int(pod, INDEX_LABEL);
        if (idx >= 0 && idx < recorded) {
            if (idx < MAX_REPLICAS)
                have[idx] = true;
            continue;
        }
        if (v->fixed && label_int(pod, GEN_LABEL) > observed) {
            /* Made for a newer spec than this view's status has seen: the
             * view lags, not the Pod. */
            if (idx >= 0 && idx < MAX_REPLICAS)
                have[idx] = true;
            continue;
        }
        rc = ctrl_client_delete(c, "v1", "Pod", req->ns, ctrl_obj_name(pod), NULL, NULL, NULL);
        if (rc < 0 && !ctrl_err_is_not_found(rc)) {
            res = ctrl_err(rc);
            goto out;
        }
        ctrl_log_info(ctx, "deleted pod", "pod", ctrl_obj_name(pod));
        deleted++;
    }
    if (deleted) {
        res = ctrl_requeue_after(SETTLE); /* once the cache has seen the deletes */
        goto out;
    }

    /* 2. Create the missing ones. */
    for (int64_t k = 0; k < want; k++) {
        if (have[k])
            continue;
        json_t *np = pod_for(p, (int)k);
        rc = np ? ctrl_client_create(c, np, NULL, NULL, NULL) : CTRL_ERR_NOMEM;
        json_decref(np);
        if (rc < 0 && !ctrl_err_is_already_exists(rc)) {
            res = ctrl_err(rc);
            goto out;
        }
        if (rc == 0)
            ctrl_log_info(ctx, "created pod", ctrl_kv_int("index", k));
    }

    /* 3. Record the count. */
    rc = hunt_write_status(c, p,
                           json_pack("{s:I, s:I}", "replicas", (json_int_t)want,
                                     "observedGeneration", (json_int_t)ctrl_obj_generation(p)));
    if (rc < 0)
        res = ctrl_err(rc);
out:
    json_decref(pods);
    json_decref(p);
    return res;
}

int example_hunt_pool_buggy_setup(ctrl_manager *mgr, const json_t *config)
{
    return hunt_setup(mgr, config, KIND, &buggy_variant, NULL, reconcile);
}

int example_hunt_pool_fixed_setup(ctrl_manager *mgr, const json_t *config)
{
    return hunt_setup(mgr, config, KIND, &fixed_variant, NULL, reconcile);
}
