/*
 * satoken.c - the service-account token controller (kube-controller-
 * manager's "serviceaccount-token" controller, the TokensController of
 * pkg/controller/serviceaccount): Secrets of type
 * kubernetes.io/service-account-token that name a ServiceAccount
 * (annotation kubernetes.io/service-account.name) get data token, ca.crt
 * and namespace and the kubernetes.io/service-account.uid annotation; such
 * Secrets whose ServiceAccount is gone (or is another one of the same
 * name: the uid annotation differs) are deleted.
 *
 * The token comes from the API server's TokenRequest (POST
 * serviceaccounts/<name>/token), bound to the Secret and valid for 2^32
 * seconds: a real JWT the server's TokenReview accepts while the Secret
 * and its ServiceAccount exist, as a legacy token is. Upstream signs a
 * legacy token itself with the service-account key; the claims differ
 * (issuer and the bound-object claims of a TokenRequest), what clients can
 * do with it does not. As upstream, a token is written only when the
 * Secret has none, ca.crt when it differs from the cluster's CA
 * (cacert.h), namespace when missing. No Secret is ever created for a
 * ServiceAccount (upstream stopped doing that in 1.24).
 *
 * A reconcile is one Secret. The ServiceAccount is read from the cache,
 * and from the server when the cache lacks it (a ServiceAccount created
 * just before its Secret), so that a Secret is deleted only when the
 * server says its ServiceAccount is gone.
 *
 * Threads: reconciles on the controller's worker; the ServiceAccount map
 * function on the ServiceAccount informer's thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cacert.h"
#include "cluster_int.h"
#include "liveclient.h"
#include "ctrl/controller.h"
#include "ctrl/object.h"

#define NAME "serviceaccount-token"
#define TOKEN_TYPE "kubernetes.io/service-account-token"
#define SA_NAME_KEY "kubernetes.io/service-account.name"
#define SA_UID_KEY "kubernetes.io/service-account.uid"
#define TOKEN_SECONDS (1LL << 32)

typedef struct satoken_ctl {
    kc_config *cfg;
    char *pem;
    char *pem64; /* base64 of pem, as Secret data holds it */
    ctrl_informer *secrets;
    ctrl_client *live; /* the existence check before a deletion (liveclient.h) */
} satoken_ctl;

static void satoken_free(void *p)
{
    satoken_ctl *t = p;
    if (!t)
        return;
    free(t->pem);
    free(t->pem64);
    ctrl_client_free(t->live);
    kc_config_free(t->cfg);
    free(t);
}

/* Standard base64 with padding: a new string, or NULL. */
static char *b64(const char *s)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s);
    char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
    if (!out)
        return NULL;
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        *o++ = tbl[(v >> 18) & 63];
        *o++ = tbl[(v >> 12) & 63];
        *o++ = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
        *o++ = i + 2 < n ? tbl[v & 63] : '=';
    }
    *o = 0;
    return out;
}

static bool is_token_secret(const json_t *s)
{
    const char *type = json_string_value(json_object_get(s, "type"));
    return type && !strcmp(type, TOKEN_TYPE);
}

static bool token_secret_event(const json_t *obj, void *user)
{
    (void)user;
    return is_token_secret(obj);
}

static bool token_secret_update(const json_t *a, const json_t *b, void *user)
{
    (void)a;
    (void)user;
    return is_token_secret(b);
}

/* A ServiceAccount changed or went: the token Secrets that name it. */
static json_t *sa_to_secrets(const json_t *sa, void *user)
{
    satoken_ctl *t = user;
    json_t *out = json_array(), *all = NULL;
    const char *ns = ctrl_obj_namespace(sa), *name = ctrl_obj_name(sa);
    if (!out || !ns || !name || ctrl_informer_list(t->secrets, ns, NULL, &all) < 0)
        return out;
    size_t i;
    json_t *s;
    json_array_foreach(all, i, s)
    {
        const char *ref = ctrl_obj_annotation(s, SA_NAME_KEY);
        if (is_token_secret(s) && ref && !strcmp(ref, name))
            json_array_append_new(
                out, json_pack("{s:s, s:s}", "namespace", ns, "name", ctrl_obj_name(s)));
    }
    json_decref(all);
    return out;
}

/* A token from the server's TokenRequest bound to secret; a new string. */
static int request_token(ctrl_client *c, const json_t *secret, const char *sa, char **out)
{
    const char *ns = ctrl_obj_namespace(secret);
    char path[1024];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/serviceaccounts/%s/token", ns, sa);
    json_t *body =
        json_pack("{s:s, s:s, s:{s:I, s:{s:s, s:s, s:s, s:s}}}", "apiVersion",
                  "authentication.k8s.io/v1", "kind", "TokenRequest", "spec", "expirationSeconds",
                  (json_int_t)TOKEN_SECONDS, "boundObjectRef", "apiVersion", "v1", "kind", "Secret",
                  "name", ctrl_obj_name(secret), "uid", ctrl_obj_uid(secret));
    json_t *resp = NULL;
    if (!body)
        return CTRL_ERR_NOMEM;
    int rc = ctrl_client_request(c, "POST", path, body, NULL, &resp, NULL);
    json_decref(body);
    if (rc < 0)
        return rc;
    const char *tok = ctrl_obj_get_string(resp, "status.token");
    *out = tok && *tok ? strdup(tok) : NULL;
    rc = !tok || !*tok ? CTRL_ERR_PROTOCOL : *out ? 0 : CTRL_ERR_NOMEM;
    json_decref(resp);
    return rc;
}

/* The ServiceAccount the Secret names, if it exists with the uid the
 * Secret records (when it records one): 0 and *out (NULL = gone). */
static int service_account(ctrl_ctx *ctx, ctrl_client *live, const json_t *secret, const char *sa,
                           json_t **out)
{
    const char *ns = ctrl_obj_namespace(secret),
               *want_uid = ctrl_obj_annotation(secret, SA_UID_KEY);
    json_t *obj = NULL;
    *out = NULL;
    int rc = ctrl_client_get(ctrl_ctx_client(ctx), "v1", "ServiceAccount", ns, sa, &obj, NULL);
    if (ctrl_err_is_not_found(rc))
        rc = ctrl_client_get(live, "v1", "ServiceAccount", ns, sa, &obj, NULL);
    if (ctrl_err_is_not_found(rc))
        return 0;
    if (rc < 0)
        return rc;
    const char *uid = ctrl_obj_uid(obj);
    if (want_uid && *want_uid && (!uid || strcmp(uid, want_uid))) {
        json_decref(obj);
        return 0;
    }
    *out = obj;
    return 0;
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    satoken_ctl *t = user;
    ctrl_client *c = ctrl_ctx_client(ctx);
    json_t *secret = NULL, *sa = NULL;
    char *token = NULL, *ns64 = NULL;
    ctrl_result res = ctrl_done();
    int rc = ctrl_informer_get(t->secrets, req->ns, req->name, &secret);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done();
    if (rc < 0)
        return ctrl_err(rc);
    const char *sa_name = ctrl_obj_annotation(secret, SA_NAME_KEY);
    if (!is_token_secret(secret) || ctrl_obj_deleting(secret) || !sa_name || !*sa_name)
        goto out;
    if ((rc = service_account(ctx, t->live, secret, sa_name, &sa)) < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    if (!sa) {
        /* Its ServiceAccount is gone: so is the token. */
        ctrl_delete_options o = {.precondition_uid = ctrl_obj_uid(secret)};
        rc = ctrl_client_delete(c, "v1", "Secret", req->ns, req->name, &o, NULL, NULL);
        if (rc == 0)
            ctrl_log_info(ctx, "deleted the token of a deleted service account", "serviceaccount",
                          sa_name);
        else if (!ctrl_err_is_not_found(rc) && !ctrl_err_is_conflict(rc))
            res = ctrl_err(rc);
        goto out;
    }
    json_t *data = json_object_get(secret, "data");
    const char *have_ca = json_string_value(json_object_get(data, "ca.crt"));
    const char *have_ns = json_string_value(json_object_get(data, "namespace"));
    const char *have_tok = json_string_value(json_object_get(data, "token"));
    bool needs_ca = !have_ca || strcmp(have_ca, t->pem64);
    bool needs_ns = !have_ns || !*have_ns;
    bool needs_tok = !have_tok || !*have_tok;
    if (!needs_ca && !needs_ns && !needs_tok)
        goto out;
    if (!json_is_object(data))
        json_object_set_new(secret, "data", data = json_object());
    if (needs_ca)
        json_object_set_new(data, "ca.crt", json_string(t->pem64));
    if (needs_ns) {
        if (!(ns64 = b64(req->ns))) {
            res = ctrl_err(CTRL_ERR_NOMEM);
            goto out;
        }
        json_object_set_new(data, "namespace", json_string(ns64));
    }
    if (needs_tok) {
        char *raw = NULL;
        if ((rc = request_token(c, secret, sa_name, &raw)) < 0) {
            res = ctrl_err(rc);
            goto out;
        }
        token = b64(raw);
        free(raw);
        if (!token) {
            res = ctrl_err(CTRL_ERR_NOMEM);
            goto out;
        }
        json_object_set_new(data, "token", json_string(token));
    }
    /* (sa_name points into the annotation replaced here: not used after.) */
    ctrl_obj_set_annotation(secret, SA_NAME_KEY, ctrl_obj_name(sa));
    ctrl_obj_set_annotation(secret, SA_UID_KEY, ctrl_obj_uid(sa));
    rc = ctrl_client_update(c, secret, NULL, NULL, NULL);
    if (rc == 0)
        ctrl_log_info(ctx, "filled a service account token", "serviceaccount", ctrl_obj_name(sa));
    else if (!ctrl_err_is_not_found(rc))
        res = ctrl_err(rc);
out:
    free(token);
    free(ns64);
    json_decref(sa);
    json_decref(secret);
    return res;
}

int kc__satoken_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    int rc = 0;
    satoken_ctl *t = calloc(1, sizeof *t);
    if (!t)
        return KC_ERR_NOMEM;
    t->pem = kc__ca_pem(cfg, &rc, errbuf, errlen);
    if (!t->pem) {
        free(t);
        return rc;
    }
    t->pem64 = b64(t->pem);
    char name[64];
    kc__controller_name(NAME, name, sizeof name);
    if (t->pem64)
        rc = ctrl_cache_informer(ctrl_manager_cache(mgr), "v1", "Secret", NULL, &t->secrets, NULL);
    if (t->pem64 && rc == 0)
        rc = kc__live_client(mgr, name, &t->live);
    if (!t->pem64 || rc < 0) {
        satoken_free(t);
        return rc < 0 ? rc : KC_ERR_NOMEM;
    }
    t->cfg = kc_config_ref(cfg);
    ctrl_predicate_funcs tokens = {
        .create = token_secret_event, .update = token_secret_update, .remove = token_secret_event};
    ctrl_builder *b = ctrl_builder_for(mgr, "v1", "Secret");
    ctrl_builder_named(b, name);
    ctrl_builder_with_predicates(b, ctrl_pred_funcs(&tokens));
    ctrl_builder_watches(b, "v1", "ServiceAccount", ctrl_handler_from_map(sa_to_secrets, t), NULL);
    ctrl_builder_with_user_free(b, satoken_free);
    rc = ctrl_builder_complete(b, reconcile, t);
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, NAME ": %s", ctrl_strerror(rc));
    return rc;
}
