/*
 * memcached.c - the Memcached controller (memcached.h). Reconciles run on
 * the manager's worker threads; each works on its own copies of objects.
 */
#include <stdio.h>

#include <ctrl/conditions.h>
#include <ctrl/controller.h>
#include <ctrl/controllerutil.h>
#include <ctrl/object.h>

#include "memcached.h"

typedef struct want {
    const json_t *owner;
    int64_t size;
} want;

/* The Deployment as the Memcached wants it (mutate of create-or-update). */
static int deployment(json_t *dep, void *user)
{
    const want *w = user;
    const char *name = ctrl_obj_name(w->owner);
    json_t *labels = json_pack("{s:s,s:s}", "app", "memcached", "memcached", name);
    ctrl_obj_set(dep, "metadata.labels", json_deep_copy(labels));
    ctrl_obj_set(dep, "spec.replicas", json_integer(w->size));
    ctrl_obj_set(dep, "spec.selector.matchLabels", json_deep_copy(labels));
    ctrl_obj_set(dep, "spec.template.metadata.labels", labels);
    ctrl_obj_set(dep, "spec.template.spec.containers",
                 json_pack("[{s:s,s:s,s:[{s:i}]}]", "name", "memcached", "image", "memcached:1.6",
                           "ports", "containerPort", 11211));
    return ctrl_set_controller_reference(w->owner, dep, NULL);
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)user;
    ctrl_client *c = ctrl_ctx_client(ctx);
    json_t *m = NULL;
    int rc = ctrl_client_get(c, MEMCACHED_API_VERSION, MEMCACHED_KIND, req->ns, req->name, &m, NULL);
    if (rc < 0)
        return ctrl_err_is_not_found(rc) ? ctrl_done() : ctrl_err(rc);

    if (ctrl_obj_deleting(m)) {
        /* Clean up what the garbage collector would not (nothing here but
         * a log line), then let the Memcached go. */
        if (ctrl_remove_finalizer(m, MEMCACHED_FINALIZER)) {
            ctrl_log_info(ctx, "cleaned up", "memcached", req->name);
            rc = ctrl_client_update(c, m, NULL, NULL, NULL);
        }
        json_decref(m);
        return rc < 0 ? ctrl_err(rc) : ctrl_done();
    }
    if (ctrl_add_finalizer(m, MEMCACHED_FINALIZER)) {
        rc = ctrl_client_update(c, m, NULL, NULL, NULL);
        json_decref(m);
        return rc < 0 ? ctrl_err(rc) : ctrl_done(); /* the update brings us back */
    }

    want w = {m, ctrl_obj_get_int(m, "spec.size", 1)};
    json_t *dep = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "apps/v1", "kind",
                            "Deployment", "metadata", "namespace", req->ns, "name", req->name);
    ctrl_op_result done;
    rc = ctrl_create_or_update(c, dep, deployment, &w, &done, NULL);
    json_decref(dep);
    if (rc < 0) {
        json_decref(m);
        return ctrl_err(rc);
    }
    if (done != CTRL_OP_UNCHANGED)
        ctrl_log_info(ctx, "deployment", "result", ctrl_op_result_string(done));

    char msg[64];
    snprintf(msg, sizeof msg, "Deployment with %lld replicas", (long long)w.size);
    bool changed = ctrl_condition_set(ctrl_obj_conditions(m),
                                      &(ctrl_condition){.type = "Available",
                                                        .status = "True",
                                                        .reason = "Reconciled",
                                                        .message = msg,
                                                        .observed_generation =
                                                            ctrl_obj_generation(m)},
                                      ctrl_ctx_now(ctx));
    if (ctrl_obj_get_int(m, "status.replicas", -1) != w.size) {
        ctrl_obj_set(m, "status.replicas", json_integer(w.size));
        changed = true;
    }
    if (changed)
        rc = ctrl_client_update_status(c, m, NULL, NULL, NULL);
    json_decref(m);
    return rc < 0 ? ctrl_err(rc) : ctrl_done();
}

int memcached_setup(ctrl_manager *mgr)
{
    ctrl_builder *b = ctrl_builder_for(mgr, MEMCACHED_API_VERSION, MEMCACHED_KIND);
    b = ctrl_builder_owns(b, "apps/v1", "Deployment");
    return ctrl_builder_complete(b, reconcile, NULL);
}
