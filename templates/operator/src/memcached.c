/*
 * memcached.c - the Memcached controller (memcached.h). Reconciles run on
 * the manager's worker threads; each works on its own copies of the objects.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <ctrl/controller.h>
#include <ctrl/object.h>

#include "memcached.h"

static bool has_finalizer(const json_t *obj)
{
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "finalizers"), i, f)
    {
        if (!strcmp(json_string_value(f) ? json_string_value(f) : "", MEMCACHED_FINALIZER))
            return true;
    }
    return false;
}

/* Add or remove the finalizer and write the object back (update). */
static int set_finalizer(ctrl_client *c, json_t *obj, bool on)
{
    json_t *meta = json_object_get(obj, "metadata");
    json_t *list = json_object_get(meta, "finalizers");
    json_t *out = json_array();
    size_t i;
    json_t *f;
    json_array_foreach(list, i, f)
    {
        if (strcmp(json_string_value(f) ? json_string_value(f) : "", MEMCACHED_FINALIZER))
            json_array_append(out, f);
    }
    if (on)
        json_array_append_new(out, json_string(MEMCACHED_FINALIZER));
    json_object_set_new(meta, "finalizers", out);
    return ctrl_client_update(c, obj, NULL, NULL, NULL);
}

/* The Deployment as this Memcached wants it. */
static json_t *desired_deployment(const json_t *m, int64_t size)
{
    const char *name = ctrl_obj_meta(m, "name");
    json_t *labels = json_pack("{s:s,s:s}", "app", "memcached", "memcached", name);
    return json_pack(
        "{s:s,s:s,s:{s:s,s:s,s:O,s:[{s:s,s:s,s:s,s:s,s:b,s:b}]},"
        "s:{s:I,s:{s:O},s:{s:{s:O},s:{s:[{s:s,s:s,s:[{s:i}]}]}}}}",
        "apiVersion", "apps/v1", "kind", "Deployment", "metadata", "name", name, "namespace",
        ctrl_obj_meta(m, "namespace"), "labels", labels, "ownerReferences", "apiVersion",
        MEMCACHED_API_VERSION, "kind", MEMCACHED_KIND, "name", name, "uid",
        ctrl_obj_meta(m, "uid"), "controller", 1, "blockOwnerDeletion", 1, "spec", "replicas",
        (json_int_t)size, "selector", "matchLabels", labels, "template", "metadata", "labels",
        labels, "spec", "containers", "name", "memcached", "image", "memcached:1.6",
        "ports", "containerPort", 11211);
}

/* Create the Deployment, or bring its replicas to size. */
static int ensure_deployment(ctrl_client *c, const json_t *m, int64_t size)
{
    const char *ns = ctrl_obj_meta(m, "namespace"), *name = ctrl_obj_meta(m, "name");
    json_t *dep = NULL;
    int rc = ctrl_client_get(c, "apps/v1", "Deployment", ns, name, &dep, NULL);
    if (ctrl_err_is_not_found(rc)) {
        json_t *want = desired_deployment(m, size);
        rc = ctrl_client_create(c, want, NULL, NULL, NULL);
        json_decref(want);
        return rc;
    }
    if (rc < 0)
        return rc;
    json_int_t have = json_integer_value(json_object_get(json_object_get(dep, "spec"), "replicas"));
    json_decref(dep);
    if (have == size)
        return 0;
    json_t *patch = json_pack("{s:{s:I}}", "spec", "replicas", (json_int_t)size);
    rc = ctrl_client_patch(c, "apps/v1", "Deployment", ns, name, CTRL_PATCH_MERGE, patch, NULL,
                           NULL, NULL);
    json_decref(patch);
    return rc;
}

/* Write status.replicas and the Available condition when they changed; the
 * condition's lastTransitionTime moves only when its status does. */
static int update_status(ctrl_ctx *ctx, json_t *m, int64_t size)
{
    json_t *status = json_object_get(m, "status");
    if (!json_is_object(status)) {
        status = json_object();
        json_object_set_new(m, "status", status);
    }
    json_t *conds = json_object_get(status, "conditions");
    json_t *old = NULL;
    size_t i;
    json_t *cnd;
    json_array_foreach(conds, i, cnd)
    {
        if (!strcmp(json_string_value(json_object_get(cnd, "type")) ?: "", "Available"))
            old = cnd;
    }
    json_int_t gen = json_integer_value(json_object_get(json_object_get(m, "metadata"), "generation"));
    char msg[96];
    snprintf(msg, sizeof msg, "Deployment has %lld replicas", (long long)size);
    if (old && !strcmp(json_string_value(json_object_get(old, "status")) ?: "", "True") &&
        !strcmp(json_string_value(json_object_get(old, "message")) ?: "", msg) &&
        json_integer_value(json_object_get(old, "observedGeneration")) == gen &&
        json_integer_value(json_object_get(status, "replicas")) == size)
        return 0;
    char when[32];
    time_t secs = (time_t)(ctrl_ctx_now(ctx) / CTRL_SECOND);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    bool moved = !old || strcmp(json_string_value(json_object_get(old, "status")) ?: "", "True");
    json_t *fresh = json_pack("{s:s,s:s,s:s,s:s,s:I,s:s}", "type", "Available", "status", "True",
                              "reason", "DeploymentReconciled", "message", msg,
                              "observedGeneration", gen, "lastTransitionTime",
                              moved ? when : json_string_value(json_object_get(old, "lastTransitionTime")));
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    if (old)
        json_array_set_new(conds, i = 0, fresh), (void)i;
    json_array_foreach(conds, i, cnd)
    {
        if (old && cnd == old)
            json_array_set(conds, i, fresh);
    }
    if (!old)
        json_array_append(conds, fresh);
    json_decref(fresh);
    json_object_set_new(status, "replicas", json_integer(size));
    return ctrl_client_update_status(ctrl_ctx_client(ctx), m, NULL, NULL, NULL);
}
