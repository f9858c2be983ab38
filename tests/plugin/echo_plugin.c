/*
 * echo_plugin.c - a controller loaded with `scenario run --plugin`: it copies
 * a ConfigMap's annotation "echo" into data.echo. The plugin links nothing
 * itself; libctrl and libscenario come from the `scenario` program.
 */
#include <string.h>

#include "ctrl/controller.h"
#include "ctrl/manager.h"
#include "scn/run.h"

int scn_plugin_init(void);

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)user;
    json_t *cm = NULL;
    ctrl_client *c = ctrl_ctx_client(ctx);
    int rc = ctrl_client_get(c, "v1", "ConfigMap", req->ns, req->name, &cm, NULL);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done();
    if (rc < 0)
        return ctrl_err(rc);
    const char *want = json_string_value(
        json_object_get(json_object_get(json_object_get(cm, "metadata"), "annotations"), "echo"));
    const char *have = json_string_value(json_object_get(json_object_get(cm, "data"), "echo"));
    if (want && (!have || strcmp(want, have))) {
        json_t *patch = json_pack("{s:{s:s}}", "data", "echo", want);
        rc = ctrl_client_patch(c, "v1", "ConfigMap", req->ns, req->name, CTRL_PATCH_MERGE, patch,
                               NULL, NULL, NULL);
        json_decref(patch);
    }
    json_decref(cm);
    return rc < 0 ? ctrl_err(rc) : ctrl_done();
}

static int setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)config, (void)user;
    return ctrl_builder_complete(ctrl_builder_for(mgr, "v1", "ConfigMap"), reconcile, NULL);
}

int scn_plugin_init(void)
{
    return scn_register_controller("echo", setup, NULL);
}
