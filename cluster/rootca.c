/*
 * rootca.c - the root CA publisher (kube-controller-manager's
 * "root-ca-cert-publisher", pkg/controller/certificates/rootcacertpublisher):
 * a ConfigMap kube-root-ca.crt in every namespace holding ca.crt, the
 * cluster's CA (cacert.h), with upstream's kubernetes.io/description
 * annotation; written again when it is deleted or its data or annotation
 * change.
 *
 * A reconcile is one Namespace. As upstream, the ConfigMap's data is
 * replaced whole and other annotations and labels are kept; a creation
 * refused because the namespace is going (403, 404) is not retried;
 * namespaces being deleted are skipped.
 *
 * Threads: reconciles on the controller's worker; the ConfigMap map
 * function on the ConfigMap informer's thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cacert.h"
#include "cluster_int.h"
#include "ctrl/controller.h"
#include "ctrl/object.h"
#include "nsutil.h"

#define NAME "root-ca-cert-publisher"
#define CM_NAME "kube-root-ca.crt"
#define DESCRIPTION_KEY "kubernetes.io/description"
#define DESCRIPTION                                                                                \
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "      \
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "      \
    "guaranteed across distributions of Kubernetes clusters."

typedef struct rootca_ctl {
    kc_config *cfg;
    char *pem;
} rootca_ctl;

static void rootca_free(void *p)
{
    rootca_ctl *r = p;
    if (!r)
        return;
    free(r->pem);
    kc_config_free(r->cfg);
    free(r);
}

static json_t *cm_to_namespace(const json_t *cm, void *user)
{
    (void)user;
    const char *name = ctrl_obj_name(cm), *ns = ctrl_obj_namespace(cm);
    json_t *out = json_array();
    if (out && name && ns && !strcmp(name, CM_NAME))
        json_array_append_new(out, json_pack("{s:s, s:s}", "namespace", "", "name", ns));
    return out;
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    rootca_ctl *r = user;
    ctrl_client *c = ctrl_ctx_client(ctx);
    json_t *ns = NULL, *cm = NULL, *data = json_pack("{s:s}", "ca.crt", r->pem);
    ctrl_result res = ctrl_done();
    if (!data)
        return ctrl_err(CTRL_ERR_NOMEM);
    int rc = ctrl_client_get(c, "v1", "Namespace", "", req->name, &ns, NULL);
    if (ctrl_err_is_not_found(rc))
        goto out;
    if (rc < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    if (!kc__namespace_active(ns))
        goto out;
    rc = ctrl_client_get(c, "v1", "ConfigMap", req->name, CM_NAME, &cm, NULL);
    if (ctrl_err_is_not_found(rc)) {
        json_t *obj =
            json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:O}", "apiVersion", "v1", "kind",
                      "ConfigMap", "metadata", "name", CM_NAME, "namespace", req->name,
                      "annotations", DESCRIPTION_KEY, DESCRIPTION, "data", data);
        rc = obj ? ctrl_client_create(c, obj, NULL, NULL, NULL) : CTRL_ERR_NOMEM;
        json_decref(obj);
        if (rc < 0 && !ctrl_err_is_not_found(rc) && !ctrl_err_is_forbidden(rc) &&
            !ctrl_err_is_already_exists(rc))
            res = ctrl_err(rc);
        goto out;
    }
    if (rc < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    const char *desc = ctrl_obj_annotation(cm, DESCRIPTION_KEY);
    if (json_equal(json_object_get(cm, "data"), data) && desc && *desc)
        goto out;
    json_object_set(cm, "data", data);
    ctrl_obj_set_annotation(cm, DESCRIPTION_KEY, DESCRIPTION);
    rc = ctrl_client_update(c, cm, NULL, NULL, NULL);
    if (rc < 0 && !ctrl_err_is_not_found(rc))
        res = ctrl_err(rc);
out:
    json_decref(data);
    json_decref(cm);
    json_decref(ns);
    return res;
}

int kc__rootca_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    int rc = 0;
    rootca_ctl *r = calloc(1, sizeof *r);
    if (!r)
        return KC_ERR_NOMEM;
    r->pem = kc__ca_pem(cfg, &rc, errbuf, errlen);
    if (!r->pem) {
        free(r);
        return rc;
    }
    r->cfg = kc_config_ref(cfg);
    char name[64];
    ctrl_builder *b = ctrl_builder_for(mgr, "v1", "Namespace");
    ctrl_builder_named(b, kc__controller_name(NAME, name, sizeof name));
    ctrl_builder_watches(b, "v1", "ConfigMap", ctrl_handler_from_map(cm_to_namespace, NULL), NULL);
    ctrl_builder_with_user_free(b, rootca_free);
    rc = ctrl_builder_complete(b, reconcile, r);
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, NAME ": %s", ctrl_strerror(rc));
    return rc;
}
