/*
 * hunt_util.c - setup and status writes shared by the hunt controllers
 * (see hunt_util.h). Reentrant; no state.
 */
#include "hunt_util.h"

#include "example_options.h"
#include "ctrl/object.h"
#include "hunt.h"

/* A builder for kind with config's name and options, default_name when
 * config names none. */
static int hunt_builder(ctrl_manager *mgr, const json_t *config, const char *kind,
                        const char *default_name, ctrl_builder **out)
{
    *out = NULL;
    const char *name;
    ctrl_controller_options o; /* over the manager's defaults */
    if (!mgr || example_options_from_config(config, default_name, &name, &o) < 0)
        return CTRL_ERR_ARG;
    ctrl_builder *b = ctrl_builder_for(mgr, EXAMPLE_HUNT_API_VERSION, kind);
    ctrl_builder_named(b, name);
    ctrl_builder_with_options(b, &o);
    *out = b;
    return 0;
}

int hunt_setup(ctrl_manager *mgr, const json_t *config, const char *kind, const hunt_variant *v,
               void (*watch)(ctrl_builder *b), ctrl_reconcile_fn reconcile)
{
    ctrl_builder *b;
    int rc = hunt_builder(mgr, config, kind, v->default_name, &b);
    if (rc < 0)
        return rc;
    if (watch)
        watch(b);
    /* The variants are static and never written: user outlives the controller. */
    return ctrl_builder_complete(b, reconcile, (void *)v);
}

int hunt_write_status(ctrl_client *c, const json_t *obj, json_t *status)
{
    if (!status)
        return CTRL_ERR_NOMEM;
    if (json_equal(json_object_get(obj, "status"), status)) {
        json_decref(status);
        return 0;
    }
    json_t *copy = json_deep_copy(obj);
    if (!copy) {
        json_decref(status);
        return CTRL_ERR_NOMEM;
    }
    if (json_object_set_new(copy, "status", status) < 0) { /* status freed */
        json_decref(copy);
        return CTRL_ERR_NOMEM;
    }
    int rc = ctrl_client_update_status(c, copy, NULL, NULL, NULL);
    json_decref(copy);
    return rc;
}
