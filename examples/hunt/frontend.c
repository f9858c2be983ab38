/*
 * frontend.c - the Frontend controller, buggy and fixed (hunt.h): a
 * Service "<frontend>" selecting app=<frontend>, with the ports of
 * spec.ports (port 80 named http when the list is absent).
 *
 * DESIGN
 * - Threads: reconcile runs on the controller's worker; nothing else here,
 *   and no state of our own.
 * - Reads come from the cache (the client's reader): the Frontend; the
 *   Service it owns by create-or-update (its events bring the Frontend
 *   back).
 * - Writes: the Service, with only the fields the controller decides
 *   (selector; each port's name, port, targetPort and protocol, so the
 *   server's defaults never look like a change), then status.serviceName,
 *   status.ports and status.observedGeneration through the status
 *   subresource.
 * - The schema lets spec.ports be absent or any list, the empty one
 *   included. The one difference between the variants is that value:
 *     buggy: an absent list means the default port, and any list is
 *            copied as it is: the empty one makes a Service without ports,
 *            which the API server refuses (422 spec.ports: Required value)
 *            on every retry. The status never catches up.
 *     fixed: no ports means nothing to expose: no Service (deleted if
 *            there), status.serviceName "".
 */
#include "hunt.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "hunt_util.h"

#define KIND "Frontend"

static const hunt_variant buggy_variant = {false, "hunt-frontend-buggy"};
static const hunt_variant fixed_variant = {true, "hunt-frontend-fixed"};

/* Whether ports (an array of Service ports) has one named name or
 * numbered port already. */
static bool taken(const json_t *ports, const char *name, json_int_t port)
{
    size_t i;
    const json_t *p;
    json_array_foreach(ports, i, p)
    {
        if (!strcmp(json_string_value(json_object_get(p, "name")), name) ||
            json_integer_value(json_object_get(p, "port")) == port)
            return true;
    }
    return false;
}

/* The Service's ports for Frontend f (borrowed): a new array. A name or a
 * port number given twice (a Service refuses both) counts the first time. */
static json_t *service_ports(const json_t *f)
{
    const json_t *ports = ctrl_obj_get(f, "spec.ports");
    if (!json_is_array(ports))
        return json_pack("[{s:s, s:i, s:i, s:s}]", "name", "http", "port", 80, "targetPort", 80,
                         "protocol", "TCP");
    json_t *out = json_array();
    size_t i;
    const json_t *p;
    json_array_foreach(ports, i, p)
    {
        const char *name = json_string_value(json_object_get(p, "name"));
        json_int_t port = json_integer_value(json_object_get(p, "port"));
        if (!name)
            name = "";
        if (out && taken(out, name, port))
            continue;
        if (!out ||
            json_array_append_new(out, json_pack("{s:s, s:I, s:I, s:s}", "name", name, "port", port,
                                                 "targetPort", port, "protocol", "TCP")) < 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

typedef struct want {
    const json_t *f;
    json_t *ports;
} want;

/* create-or-update's mutate: the Service as the Frontend wants it. */
static int mutate_service(json_t *svc, void *user)
{
    const want *w = user;
    json_t *spec = json_object_get(svc, "spec");
    if (!json_is_object(spec)) {
        spec = json_object();
        if (!spec || json_object_set_new(svc, "spec", spec) < 0)
            return CTRL_ERR_NOMEM;
    }
    json_t *sel = json_pack("{s:s}", "app", ctrl_obj_name(w->f));
    if (!sel || json_object_set_new(spec, "selector", sel) < 0 ||
        json_object_set(spec, "ports", w->ports) < 0)
        return CTRL_ERR_NOMEM;
    int rc = ctrl_obj_set_label(svc, HUNT_OWNER_LABEL, ctrl_obj_name(w->f));
    return rc < 0 ? rc : ctrl_set_controller_reference(w->f, svc, NULL);
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    const hunt_variant *v = user;
    ctrl_client *c = ctrl_ctx_client(ctx);
    json_t *f = NULL, *svc = NULL;
    want w = {0};
    ctrl_error err = {0};
    ctrl_result res = ctrl_done();
    int rc = ctrl_client_get(c, EXAMPLE_HUNT_API_VERSION, KIND, req->ns, req->name, &f, NULL);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done(); /* gone: its Service goes with it (garbage collection) */
    if (rc < 0)
        return ctrl_err(rc);
    if (ctrl_obj_deleting(f))
        goto out;
    w.f = f;
    w.ports = service_ports(f);
    if (!w.ports) {
        res = ctrl_err(CTRL_ERR_NOMEM);
        goto out;
    }
    const char *svc_name = req->name;
    if (v->fixed && json_array_size(w.ports) == 0) {
        /* Nothing to expose: no Service. */
        rc = ctrl_client_delete(c, "v1", "Service", req->ns, req->name, NULL, NULL, NULL);
        if (rc < 0 && !ctrl_err_is_not_found(rc)) {
            res = ctrl_err(rc);
            goto out;
        }
        svc_name = "";
    } else {
        svc = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "v1", "kind", "Service",
                        "metadata", "name", req->name, "namespace", req->ns);
        ctrl_op_result op;
        rc = svc ? ctrl_create_or_update(c, svc, mutate_service, &w, &op, &err) : CTRL_ERR_NOMEM;
        if (rc < 0) {
            ctrl_log_error(ctx, "service", "error", err.message);
            res = ctrl_err(rc);
            goto out;
        }
        if (op != CTRL_OP_UNCHANGED)
            ctrl_log_info(ctx, "service", "op", ctrl_op_result_string(op));
    }
    rc = hunt_write_status(c, f,
                           json_pack("{s:s, s:I, s:I}", "serviceName", svc_name, "ports",
                                     (json_int_t)json_array_size(w.ports), "observedGeneration",
                                     (json_int_t)ctrl_obj_generation(f)));
    if (rc < 0)
        res = ctrl_err(rc);
out:
    ctrl_error_deinit(&err);
    json_decref(w.ports);
    json_decref(svc);
    json_decref(f);
    return res;
}

/* What it watches beside its own kind. */
static void watch(ctrl_builder *b)
{
    ctrl_builder_owns(b, "v1", "Service");
}

int example_hunt_frontend_buggy_setup(ctrl_manager *mgr, const json_t *config)
{
    return hunt_setup(mgr, config, KIND, &buggy_variant, watch, reconcile);
}

int example_hunt_frontend_fixed_setup(ctrl_manager *mgr, const json_t *config)
{
    return hunt_setup(mgr, config, KIND, &fixed_variant, watch, reconcile);
}
