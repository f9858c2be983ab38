/*
 * webapp.c - the WebApp operator (see webapp.h).
 *
 * DESIGN
 * - Threads: reconcile runs on the controller's worker; nothing else here.
 * - Reads come from the cache (WebApps, and the Deployments and Services it
 *   owns: Owns() requeues the WebApp when they change, which is how a
 *   Deployment's rollout, or a node's loss, reaches the Ready condition).
 * - Writes: the Deployment and the Service by create-or-update with only
 *   the fields the operator decides (so the server's defaults never look
 *   like a change), then the status through the status subresource with
 *   the resourceVersion read: a stale read is a 409 and a retry.
 */
#include "webapp.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ctrl/conditions.h"
#include "ctrl/controllerutil.h"
#include "ctrl/object.h"

typedef struct variant {
    const char *name;
    bool buggy;
} variant;

static const variant fixed_variant = {"webapp", false};
static const variant buggy_variant = {"webapp-buggy", true};

/* obj[key] as an object, made if missing (borrowed). */
static json_t *child(json_t *obj, const char *key)
{
    json_t *c = json_object_get(obj, key);
    if (!json_is_object(c)) {
        c = json_object();
        if (json_object_set_new(obj, key, c) < 0)
            return NULL;
    }
    return c;
}

/* obj[key][0] as an object, the list made if missing (borrowed). */
static json_t *first_item(json_t *obj, const char *key)
{
    json_t *list = json_object_get(obj, key);
    if (!json_is_array(list)) {
        list = json_array();
        if (json_object_set_new(obj, key, list) < 0)
            return NULL;
    }
    if (json_array_size(list) == 0 && json_array_append_new(list, json_object()) < 0)
        return NULL;
    return json_array_get(list, 0);
}

static int set_str(json_t *obj, const char *key, const char *v)
{
    return obj ? json_object_set_new(obj, key, json_string(v)) : CTRL_ERR_NOMEM;
}

static int set_int(json_t *obj, const char *key, int64_t v)
{
    return obj ? json_object_set_new(obj, key, json_integer(v)) : CTRL_ERR_NOMEM;
}

static int64_t want_replicas(const json_t *app)
{
    return ctrl_obj_get_int(app, "spec.replicas", 2);
}

static int mutate_deployment(json_t *d, void *user)
{
    const json_t *app = user;
    const char *name = ctrl_obj_name(app);
    json_t *spec = child(d, "spec");
    int rc = set_int(spec, "replicas", want_replicas(app));
    json_t *sel = child(child(spec, "selector"), "matchLabels");
    rc |= set_str(sel, "app", name);
    json_t *tmpl = child(spec, "template");
    rc |= set_str(child(child(tmpl, "metadata"), "labels"), "app", name);
    json_t *c = first_item(child(tmpl, "spec"), "containers");
    rc |= set_str(c, "name", "web");
    rc |= set_str(c, "image", ctrl_obj_get_string(app, "spec.image"));
    rc |= set_int(first_item(c, "ports"), "containerPort", ctrl_obj_get_int(app, "spec.port", 80));
    if (rc)
        return CTRL_ERR_NOMEM;
    return ctrl_set_controller_reference(app, d, NULL);
}

static int mutate_service(json_t *s, void *user)
{
    const json_t *app = user;
    json_t *spec = child(s, "spec");
    int rc = set_str(child(spec, "selector"), "app", ctrl_obj_name(app));
    json_t *port = first_item(spec, "ports");
    rc |= set_str(port, "name", "http");
    rc |= set_int(port, "port", ctrl_obj_get_int(app, "spec.port", 80));
    rc |= set_int(port, "targetPort", ctrl_obj_get_int(app, "spec.port", 80));
    if (rc)
        return CTRL_ERR_NOMEM;
    return ctrl_set_controller_reference(app, s, NULL);
}

/* An owned object of the WebApp's name, brought to the spec. *out: what the
 * server holds now. */
static int ensure(ctrl_ctx *ctx, const json_t *app, const char *av, const char *kind,
                  ctrl_mutate_fn mutate, json_t **out)
{
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", av, "kind", kind, "metadata",
                            "name", ctrl_obj_name(app), "namespace", ctrl_obj_namespace(app));
    if (!obj)
        return CTRL_ERR_NOMEM;
    ctrl_op_result what = CTRL_OP_UNCHANGED;
    int rc = ctrl_create_or_update(ctrl_ctx_client(ctx), obj, mutate, (void *)app, &what, NULL);
    if (rc == 0 && what != CTRL_OP_UNCHANGED)
        ctrl_log_info(ctx, "wrote owned object", "kind", kind, "operation",
                      ctrl_op_result_string(what));
    if (rc < 0)
        json_decref(obj);
    else
        *out = obj;
    return rc;
}

/* What kubectl rollout status waits for: the current spec observed, every
 * replica updated and available, no old ones left. */
static bool rolled_out(const json_t *d, int64_t want, const char **why)
{
    if (ctrl_obj_get_int(d, "status.observedGeneration", 0) < ctrl_obj_generation(d)) {
        *why = "the Deployment has not observed the current spec";
        return false;
    }
    if (ctrl_obj_get_int(d, "status.updatedReplicas", 0) < want) {
        *why = "not every replica runs the current spec";
        return false;
    }
    if (ctrl_obj_get_int(d, "status.replicas", 0) > want) {
        *why = "old replicas are still terminating";
        return false;
    }
    if (ctrl_obj_get_int(d, "status.availableReplicas", 0) < want) {
        *why = "not every replica is available";
        return false;
    }
    return true;
}

static int write_status(ctrl_ctx *ctx, const json_t *app, const json_t *dep, const variant *v)
{
    int64_t want = want_replicas(app);
    const char *why = "";
    bool ready = v->buggy ? true : rolled_out(dep, want, &why);
    json_t *copy = json_deep_copy(app);
    json_t *status = copy ? child(copy, "status") : NULL;
    if (!status) {
        json_decref(copy);
        return CTRL_ERR_NOMEM;
    }
    int64_t gen = ctrl_obj_generation(app);
    json_object_set_new(status, "availableReplicas",
                        json_integer(ctrl_obj_get_int(dep, "status.availableReplicas", 0)));
    json_object_set_new(status, "observedGeneration", json_integer(gen));
    bool was_ready = ctrl_condition_is_true(
        json_object_get(json_object_get(app, "status"), "conditions"), "Ready");
    ctrl_condition c = {
        .type = "Ready",
        .status = ready ? "True" : "False",
        .reason = ready ? "Available" : "Progressing",
        .message = ready ? "every replica is available" : why,
        .observed_generation = gen,
    };
    ctrl_condition_set(ctrl_obj_conditions(copy), &c, ctrl_clock_wall_ns(ctrl_ctx_clock(ctx)));
    int rc = 0;
    if (!json_equal(copy, app)) {
        rc = ctrl_client_update_status(ctrl_ctx_client(ctx), copy, NULL, NULL, NULL);
        if (rc == 0 && ready != was_ready)
            ctrl_log_info(ctx, "Ready changed", "ready", ready ? "True" : "False", "why", why);
    }
    json_decref(copy);
    return rc;
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    const variant *v = user;
    json_t *app = NULL, *dep = NULL, *svc = NULL;
    int rc = ctrl_client_get(ctrl_ctx_client(ctx), EXAMPLE_WEBAPP_API_VERSION, EXAMPLE_WEBAPP_KIND,
                             req->ns, req->name, &app, NULL);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done(); /* its Deployment and Service go with it (owner references) */
    if (rc < 0)
        return ctrl_err(rc);
    if (ctrl_obj_deleting(app))
        goto out;
    if ((rc = ensure(ctx, app, "apps/v1", "Deployment", mutate_deployment, &dep)) < 0 ||
        (rc = ensure(ctx, app, "v1", "Service", mutate_service, &svc)) < 0)
        goto out;
    rc = write_status(ctx, app, dep, v);
out:
    json_decref(svc);
    json_decref(dep);
    json_decref(app);
    return rc < 0 ? ctrl_err(rc) : ctrl_done();
}

static int setup(ctrl_manager *mgr, const variant *v)
{
    ctrl_builder *b = ctrl_builder_for(mgr, EXAMPLE_WEBAPP_API_VERSION, EXAMPLE_WEBAPP_KIND);
    ctrl_builder_named(b, v->name);
    ctrl_builder_owns(b, "apps/v1", "Deployment");
    ctrl_builder_owns(b, "v1", "Service");
    return ctrl_builder_complete(b, reconcile, (void *)v);
}

int example_webapp_setup(ctrl_manager *mgr, const json_t *config)
{
    (void)config;
    return setup(mgr, &fixed_variant);
}

int example_webapp_buggy_setup(ctrl_manager *mgr, const json_t *config)
{
    (void)config;
    return setup(mgr, &buggy_variant);
}
