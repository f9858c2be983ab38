/*
 * buggy.c - the Singleton controller, buggy and fixed (see buggy.h).
 *
 * DESIGN
 * - Threads. reconcile runs on the controller's workers (up to
 *   maxConcurrentReconciles at once, never two for one Singleton). Nothing
 *   else runs here; there is no state of our own, and so no lock.
 * - Reads come from the cache: the Singleton from the Singleton informer,
 *   its ConfigMaps from the ConfigMap informer by label, kept if their
 *   controller owner is this Singleton (uid).
 * - The one difference between the variants is how the child is named and
 *   what a create the cache has not seen yet costs:
 *     buggy: generateName "<name>-"; a second create makes a second child.
 *     fixed: "<name>-data"; a second create is 409 AlreadyExists, tolerated.
 *     dedup: generateName, as buggy; a second child is deleted as soon as
 *            the cache shows it (its event brings the Singleton back).
 *   Everything else (data updates, status) is the same code, so a scenario
 *   that tells them apart tells apart exactly that.
 * - Writes: the ConfigMap's data and the Singleton's status are written
 *   with the resourceVersion read, so a stale read is a 409 and the
 *   reconcile returns ctrl_err (retried with backoff).
 */
#include "buggy.h"

#include "example_options.h"
#include "ctrl/object.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define CHILD_SUFFIX "-data"
#define RECHECK (5 * CTRL_SECOND)

typedef struct variant {
    bool fixed;
    bool dedup; /* generated names, extras deleted (buggy.h) */
    const char *default_name;
} variant;

static variant buggy_variant = {.fixed = false, .default_name = "singleton-buggy"};
static variant fixed_variant = {.fixed = true, .default_name = "singleton-fixed"};
static variant dedup_variant = {.fixed = false, .dedup = true, .default_name = "singleton-dedup"};

/* ---- helpers on objects ---- */

/* Whether obj's controller owner is the Singleton of that uid. */
static bool owned_by(const json_t *obj, const char *uid)
{
    const char *owner =
        ctrl_obj_controller_uid(obj, EXAMPLE_SINGLETON_GROUP, EXAMPLE_SINGLETON_KIND);
    return owner && !strcmp(owner, uid);
}

/* spec.data of s (borrowed), or NULL when absent. */
static const json_t *spec_data(const json_t *s)
{
    const json_t *d = json_object_get(json_object_get(s, "spec"), "data");
    return json_is_object(d) ? d : NULL;
}

/* Whether a ConfigMap's data equals want (absent and {} are equal). */
static bool data_equal(const json_t *cm, const json_t *want)
{
    const json_t *have = json_object_get(cm, "data");
    size_t nh = json_is_object(have) ? json_object_size(have) : 0;
    size_t nw = want ? json_object_size(want) : 0;
    if (nh == 0 || nw == 0)
        return nh == nw;
    return json_equal(have, want);
}

/* A new ConfigMap for Singleton s (borrowed). */
static json_t *configmap_for(const json_t *s, bool fixed)
{
    const char *name = ctrl_obj_meta(s, "name"), *ns = ctrl_obj_meta(s, "namespace");
    const json_t *want = spec_data(s);
    char cname[320];
    snprintf(cname, sizeof cname, fixed ? "%s" CHILD_SUFFIX : "%s-", name);
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:[{s:s, s:s, s:s, s:O, s:b, s:b}]}, s:o}",
                     "apiVersion", "v1", "kind", "ConfigMap", "metadata",
                     fixed ? "name" : "generateName", cname, "namespace", ns, "labels",
                     EXAMPLE_SINGLETON_LABEL, name, "ownerReferences", "apiVersion",
                     EXAMPLE_SINGLETON_API_VERSION, "kind", EXAMPLE_SINGLETON_KIND, "name", name,
                     "uid", json_object_get(json_object_get(s, "metadata"), "uid"), "controller", 1,
                     "blockOwnerDeletion", 1, "data", want ? json_deep_copy(want) : json_object());
}

/* Write status.configMapName and observedGeneration if they differ. */
static int write_status(ctrl_client *c, const json_t *s, const char *cm_name)
{
    const json_t *st = json_object_get(s, "status");
    json_int_t gen =
        json_integer_value(json_object_get(json_object_get(s, "metadata"), "generation"));
    const char *cur_name = json_string_value(json_object_get(st, "configMapName"));
    const json_t *cur_gen = json_object_get(st, "observedGeneration");
    if (cur_name && !strcmp(cur_name, cm_name) && cur_gen && json_integer_value(cur_gen) == gen)
        return 0;
    json_t *copy = json_deep_copy(s);
    if (!copy)
        return CTRL_ERR_NOMEM;
    json_t *nst = json_pack("{s:s, s:I}", "configMapName", cm_name, "observedGeneration", gen);
    int rc = CTRL_ERR_NOMEM;
    if (nst && json_object_set_new(copy, "status", nst) == 0)
        rc = ctrl_client_update_status(c, copy, NULL, NULL, NULL);
    json_decref(copy);
    return rc;
}

/* Make the ConfigMap cm (borrowed, from the cache) hold want. */
static int update_data(ctrl_client *c, const json_t *cm, const json_t *want)
{
    json_t *copy = json_deep_copy(cm);
    if (!copy)
        return CTRL_ERR_NOMEM;
    int rc = json_object_set_new(copy, "data", want ? json_deep_copy(want) : json_object());
    rc = rc < 0 ? CTRL_ERR_NOMEM : ctrl_client_update(c, copy, NULL, NULL, NULL);
    json_decref(copy);
    return rc;
}

/* ---- the reconcile ---- */

/* The Singleton's child as the cache shows it (a new reference), or NULL.
 * buggy: the first ConfigMap it owns, whatever its name; fixed: the one
 * named <name>-data, if it owns it. */
static int find_child(ctrl_informer *cm_inf, const ctrl_request *req, const char *uid, bool fixed,
                      json_t **child)
{
    *child = NULL;
    if (fixed) {
        char cname[320];
        snprintf(cname, sizeof cname, "%s" CHILD_SUFFIX, req->name);
        json_t *cm = NULL;
        int rc = ctrl_informer_get(cm_inf, req->ns, cname, &cm);
        if (ctrl_err_is_not_found(rc))
            return 0;
        if (rc < 0)
            return rc;
        if (owned_by(cm, uid))
            *child = cm;
        else
            json_decref(cm);
        return 0;
    }
    char sel[320];
    snprintf(sel, sizeof sel, EXAMPLE_SINGLETON_LABEL "=%s", req->name);
    json_t *arr = NULL;
    int rc = ctrl_informer_list(cm_inf, req->ns, sel, &arr);
    if (rc < 0)
        return rc;
    size_t i;
    json_t *cm;
    json_array_foreach(arr, i, cm)
    {
        if (owned_by(cm, uid)) {
            *child = json_incref(cm);
            break;
        }
    }
    json_decref(arr);
    return 0;
}

/* The dedup variant's child: of the ConfigMaps the Singleton s owns, the
 * one status.configMapName names, else the oldest (creationTimestamp, then
 * name); every other one is deleted. A new reference in *child, or NULL. */
static int dedup_child(ctrl_client *c, ctrl_informer *cm_inf, const ctrl_request *req,
                       const json_t *s, const char *uid, json_t **child)
{
    char sel[320];
    snprintf(sel, sizeof sel, EXAMPLE_SINGLETON_LABEL "=%s", req->name);
    json_t *arr = NULL, *cm, *keep = NULL;
    const char *named =
        json_string_value(json_object_get(json_object_get(s, "status"), "configMapName"));
    int rc = ctrl_informer_list(cm_inf, req->ns, sel, &arr);
    if (rc < 0)
        return rc;
    size_t i;
    json_array_foreach(arr, i, cm)
    {
        if (!owned_by(cm, uid) || ctrl_obj_deleting(cm))
            continue;
        const char *n = ctrl_obj_meta(cm, "name");
        if (named && n && !strcmp(n, named)) {
            keep = cm;
            break;
        }
        if (!keep)
            keep = cm;
        else {
            const char *kt = ctrl_obj_meta(keep, "creationTimestamp");
            const char *ct = ctrl_obj_meta(cm, "creationTimestamp");
            int d = strcmp(ct ? ct : "", kt ? kt : "");
            if (d < 0 || (d == 0 && strcmp(n ? n : "", ctrl_obj_meta(keep, "name")) < 0))
                keep = cm;
        }
    }
    json_array_foreach(arr, i, cm)
    {
        if (cm == keep || !owned_by(cm, uid) || ctrl_obj_deleting(cm))
            continue;
        int d = ctrl_client_delete(c, "v1", "ConfigMap", req->ns, ctrl_obj_meta(cm, "name"), NULL,
                                   NULL, NULL);
        if (d < 0 && !ctrl_err_is_not_found(d) && rc == 0)
            rc = d;
    }
    *child = keep ? json_incref(keep) : NULL;
    json_decref(arr);
    return rc;
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    const variant *v = user;
    ctrl_cache *cache = ctrl_ctx_cache(ctx);
    ctrl_client *c = ctrl_ctx_client(ctx);
    ctrl_informer *s_inf = NULL, *cm_inf = NULL;
    int rc = ctrl_cache_informer(cache, EXAMPLE_SINGLETON_API_VERSION, EXAMPLE_SINGLETON_KIND, NULL,
                                 &s_inf, NULL);
    if (rc == 0)
        rc = ctrl_cache_informer(cache, "v1", "ConfigMap", NULL, &cm_inf, NULL);
    if (rc < 0)
        return ctrl_err(rc);

    json_t *s = NULL, *child = NULL, *created = NULL;
    ctrl_result res = ctrl_done();
    rc = ctrl_informer_get(s_inf, req->ns, req->name, &s);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done(); /* gone: its ConfigMaps go with it (garbage collection) */
    if (rc < 0)
        return ctrl_err(rc);
    const char *uid = ctrl_obj_meta(s, "uid");
    if (!uid) {
        res = ctrl_terminal(CTRL_ERR_ARG);
        goto out;
    }
    if (ctrl_obj_deleting(s))
        goto out;

    rc = v->dedup ? dedup_child(c, cm_inf, req, s, uid, &child)
                  : find_child(cm_inf, req, uid, v->fixed, &child);
    if (rc < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    const json_t *want = spec_data(s);
    char cm_name[320];
    if (!child) {
        /* The cache shows no child. The buggy variant trusts that; the
         * cache may simply not have caught up with our last create. */
        json_t *cm = configmap_for(s, v->fixed);
        if (!cm) {
            res = ctrl_err(CTRL_ERR_NOMEM);
            goto out;
        }
        rc = ctrl_client_create(c, cm, NULL, &created, NULL);
        json_decref(cm);
        if (v->fixed && ctrl_err_is_already_exists(rc)) {
            /* Ours already (a lost answer, or a cache behind our create):
             * its event will bring us back if its data is stale. */
            snprintf(cm_name, sizeof cm_name, "%s" CHILD_SUFFIX, req->name);
            ctrl_log_info(ctx, "configmap exists already", "configmap", cm_name);
        } else if (rc < 0) {
            res = ctrl_err(rc);
            goto out;
        } else {
            snprintf(cm_name, sizeof cm_name, "%s", ctrl_obj_meta(created, "name"));
            ctrl_log_info(ctx, "created configmap", "configmap", cm_name);
        }
    } else {
        snprintf(cm_name, sizeof cm_name, "%s", ctrl_obj_meta(child, "name"));
        if (!data_equal(child, want)) {
            rc = update_data(c, child, want);
            if (rc < 0) {
                res = ctrl_err(rc);
                goto out;
            }
            ctrl_log_info(ctx, "updated configmap", "configmap", cm_name);
        }
    }

    rc = write_status(c, s, cm_name);
    if (rc < 0 && !ctrl_err_is_not_found(rc))
        res = ctrl_err(rc);
out:
    json_decref(created);
    json_decref(child);
    json_decref(s);
    return res;
}

/* ---- setup ---- */

static int setup(ctrl_manager *mgr, const json_t *config, variant *v)
{
    const char *name;
    ctrl_controller_options o; /* over the manager's defaults */
    if (!mgr || example_options_from_config(config, v->default_name, &name, &o) < 0)
        return CTRL_ERR_ARG;

    ctrl_builder *b = ctrl_builder_for(mgr, EXAMPLE_SINGLETON_API_VERSION, EXAMPLE_SINGLETON_KIND);
    ctrl_builder_owns(b, "v1", "ConfigMap");
    ctrl_builder_named(b, name);
    ctrl_builder_with_options(b, &o);
    /* The variants are static and never written: user outlives the controller. */
    return ctrl_builder_complete(b, reconcile, v);
}

int example_buggy_setup(ctrl_manager *mgr, const json_t *config)
{
    return setup(mgr, config, &buggy_variant);
}

int example_fixed_setup(ctrl_manager *mgr, const json_t *config)
{
    return setup(mgr, config, &fixed_variant);
}

int example_dedup_setup(ctrl_manager *mgr, const json_t *config)
{
    return setup(mgr, config, &dedup_variant);
}
