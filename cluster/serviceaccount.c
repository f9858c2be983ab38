/*
 * serviceaccount.c - the ServiceAccount controller (kube-controller-manager's
 * "serviceaccount" controller, pkg/controller/serviceaccount): a ServiceAccount
 * named "default" in every active namespace, made again when it is deleted.
 *
 * A reconcile is one Namespace (cluster-scoped key: its name). Namespaces
 * being deleted (status.phase Terminating or a deletionTimestamp) are left
 * alone, as upstream. The ServiceAccount is created with nothing but its
 * name: the tokens controller and the kubelet's projected tokens do the
 * rest. Creation racing a namespace's deletion (403 NamespaceTerminating,
 * 404) is not retried.
 *
 * Threads: reconciles on the controller's worker; the ServiceAccount map
 * function on the ServiceAccount informer's thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_int.h"
#include "ctrl/controller.h"
#include "ctrl/object.h"
#include "nsutil.h"

#define NAME "serviceaccount"
#define SA_NAME "default"

/* A deleted (or changed) "default" ServiceAccount: its namespace. */
static json_t *sa_to_namespace(const json_t *sa, void *user)
{
    (void)user;
    const char *name = ctrl_obj_name(sa), *ns = ctrl_obj_namespace(sa);
    json_t *out = json_array();
    if (out && name && ns && !strcmp(name, SA_NAME))
        json_array_append_new(out, json_pack("{s:s, s:s}", "namespace", "", "name", ns));
    return out;
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)user;
    ctrl_client *c = ctrl_ctx_client(ctx);
    json_t *ns = NULL, *sa = NULL;
    ctrl_result res = ctrl_done();
    int rc = ctrl_client_get(c, "v1", "Namespace", "", req->name, &ns, NULL);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done();
    if (rc < 0)
        return ctrl_err(rc);
    if (!kc__namespace_active(ns))
        goto out;
    rc = ctrl_client_get(c, "v1", "ServiceAccount", req->name, SA_NAME, &sa, NULL);
    if (rc == 0)
        goto out;
    if (!ctrl_err_is_not_found(rc)) {
        res = ctrl_err(rc);
        goto out;
    }
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "v1", "kind",
                            "ServiceAccount", "metadata", "name", SA_NAME, "namespace", req->name);
    if (!obj) {
        res = ctrl_err(CTRL_ERR_NOMEM);
        goto out;
    }
    rc = ctrl_client_create(c, obj, NULL, NULL, NULL);
    json_decref(obj);
    if (rc == 0)
        ctrl_log_info(ctx, "created the default service account");
    else if (!ctrl_err_is_already_exists(rc) && !ctrl_err_is_not_found(rc) &&
             !ctrl_err_is_forbidden(rc))
        res = ctrl_err(rc);
out:
    json_decref(sa);
    json_decref(ns);
    return res;
}

int kc__serviceaccount_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    char name[64];
    ctrl_builder *b = ctrl_builder_for(mgr, "v1", "Namespace");
    ctrl_builder_named(b, kc__controller_name(NAME, name, sizeof name));
    ctrl_builder_watches(b, "v1", "ServiceAccount", ctrl_handler_from_map(sa_to_namespace, NULL),
                         NULL);
    ctrl_builder_with_user_free(b, kc__config_unref);
    int rc = ctrl_builder_complete(b, reconcile, kc_config_ref(cfg));
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, NAME ": %s", ctrl_strerror(rc));
    return rc;
}
