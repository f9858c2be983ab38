/*
 * webhook_install.c - writing webhook configurations that point at a local
 * webhook server into the API server (ctrl/webhook.h: ctrl_webhook_install,
 * ctrl_webhook_install_server), as envtest's WebhookInstallOptions does for
 * Go tests.
 *
 * Runs on the caller's thread, through the caller's client.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/webhook.h"
#include "error_int.h"
#include "kh/yaml.h"
#include "webhook_int.h"

#define ADMREG "admissionregistration.k8s.io/v1"

/* The path a webhook's clientConfig names: service.path, or the url's path. */
static const char *hook_path(const json_t *cc)
{
    const char *p = json_string_value(json_object_get(json_object_get(cc, "service"), "path"));
    if (p)
        return p;
    const char *url = json_string_value(json_object_get(cc, "url"));
    const char *host = url ? strstr(url, "://") : NULL;
    return host ? strchr(host + 3, '/') : NULL;
}

/* Point every webhook of cfg (changed in place) at base_url with ca. */
static int rewrite(json_t *cfg, const char *base_url, const char *ca64, ctrl_error *err)
{
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(cfg, "webhooks"), i, w)
    {
        const json_t *cc = json_object_get(w, "clientConfig");
        const char *path = hook_path(cc);
        const char *name = json_string_value(json_object_get(w, "name"));
        if (!path)
            return ctrl__error_set(err, CTRL_ERR_ARG,
                                   "webhook %s has no path to call (clientConfig.service.path or "
                                   "a url with a path)",
                                   name ? name : "");
        char *url = NULL;
        size_t bl = strlen(base_url);
        if (asprintf(&url, "%.*s%s", (int)(bl && base_url[bl - 1] == '/' ? bl - 1 : bl), base_url,
                     path) < 0)
            return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
        json_t *ncc = json_pack("{s:s}", "url", url);
        free(url);
        if (!ncc)
            return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
        if (ca64)
            json_object_set_new(ncc, "caBundle", json_string(ca64));
        json_object_set_new(w, "clientConfig", ncc);
    }
    return 0;
}

/* Create cfg, or replace the one of its name. */
static int put(ctrl_client *c, json_t *cfg, ctrl_error *err)
{
    const char *kind = json_string_value(json_object_get(cfg, "kind"));
    const char *name = json_string_value(json_object_get(json_object_get(cfg, "metadata"), "name"));
    json_t *cur = NULL;
    int rc = ctrl_client_get(c, ADMREG, kind, NULL, name, &cur, err);
    if (ctrl_err_is_not_found(rc))
        return ctrl_client_create(c, cfg, NULL, NULL, err);
    if (rc < 0)
        return rc;
    json_t *meta = json_object_get(cfg, "metadata");
    json_object_set(meta, "resourceVersion",
                    json_object_get(json_object_get(cur, "metadata"), "resourceVersion"));
    json_decref(cur);
    return ctrl_client_update(c, cfg, NULL, NULL, err);
}

int ctrl_webhook_install(ctrl_client *c, const json_t *configs, const char *base_url,
                         const char *ca_pem, ctrl_error *err)
{
    if (!c || !configs || !base_url)
        return ctrl__error_set(err, CTRL_ERR_ARG,
                               "webhook install: client, configs and base_url "
                               "are required");
    json_t *list =
        json_is_array(configs) ? json_deep_copy(configs) : json_pack("[O]", (json_t *)configs);
    char *ca64 = ca_pem ? ctrl__webhook_b64(ca_pem, strlen(ca_pem)) : NULL;
    int rc = 0;
    if (!list || (ca_pem && !ca64)) {
        rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
        goto out;
    }
    size_t i;
    json_t *cfg;
    json_array_foreach(list, i, cfg)
    {
        const char *av = json_string_value(json_object_get(cfg, "apiVersion"));
        const char *kind = json_string_value(json_object_get(cfg, "kind"));
        const char *name =
            json_string_value(json_object_get(json_object_get(cfg, "metadata"), "name"));
        if (!av || !kind || strcmp(av, ADMREG) || !name ||
            (strcmp(kind, "MutatingWebhookConfiguration") &&
             strcmp(kind, "ValidatingWebhookConfiguration"))) {
            rc = ctrl__error_set(err, CTRL_ERR_ARG,
                                 "webhook install: item %zu is not an %s Mutating- or "
                                 "ValidatingWebhookConfiguration with a name",
                                 i, ADMREG);
            goto out;
        }
    }
    json_array_foreach(list, i, cfg)
    {
        if ((rc = rewrite(cfg, base_url, ca64, err)) < 0 || (rc = put(c, cfg, err)) < 0)
            goto out;
    }
out:
    json_decref(list);
    free(ca64);
    return rc;
}

int ctrl_webhook_install_files(ctrl_client *c, const char *const *paths, const char *base_url,
                               const char *ca_pem, ctrl_error *err)
{
    if (!paths)
        return ctrl__error_set(err, CTRL_ERR_ARG, "webhook install: no paths");
    json_t *configs = json_array();
    if (!configs)
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    int rc = 0;
    for (const char *const *p = paths; *p && rc == 0; p++) {
        json_t *docs = NULL;
        kh_yaml_error yerr = {0};
        if (kh_yaml_load_file(*p, &docs, &yerr) < 0) {
            rc = ctrl__error_set(err, CTRL_ERR_IO, "webhook install: %s:%d: %s", *p, yerr.line,
                                 yerr.message);
            break;
        }
        size_t i;
        json_t *d;
        json_array_foreach(docs, i, d)
        {
            const char *kind = json_string_value(json_object_get(d, "kind"));
            if (kind && (!strcmp(kind, "MutatingWebhookConfiguration") ||
                         !strcmp(kind, "ValidatingWebhookConfiguration")))
                json_array_append(configs, d);
        }
        json_decref(docs);
    }
    if (rc == 0 && json_array_size(configs))
        rc = ctrl_webhook_install(c, configs, base_url, ca_pem, err);
    json_decref(configs);
    return rc;
}

/* A webhook for one registered kind. */
static int hook_for(ctrl_client *c, const char *cfg_name, const char *api_version, const char *kind,
                    const char *path, bool mutating, json_t *hooks, ctrl_error *err)
{
    ctrl_resource_info ri;
    int rc = ctrl_client_resource_for(c, api_version, kind, &ri, err);
    if (rc < 0)
        return rc;
    const char *slash = strchr(api_version, '/');
    char group[256], lower[256], name[700];
    snprintf(group, sizeof group, "%.*s", slash ? (int)(slash - api_version) : 0, api_version);
    snprintf(lower, sizeof lower, "%s", kind);
    for (char *p = lower; *p; p++)
        *p = (char)((*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p);
    /* Webhook names are fully qualified: m/v + kind, the group, the configuration. */
    snprintf(name, sizeof name, "%c%s.%s.%s", mutating ? 'm' : 'v', lower,
             group[0] ? group : "core", cfg_name);
    json_t *ops = mutating ? json_pack("[s, s]", "CREATE", "UPDATE")
                           : json_pack("[s, s, s]", "CREATE", "UPDATE", "DELETE");
    json_t *w =
        json_pack("{s:s, s:{s:{s:s, s:s, s:s}}, s:[{s:o, s:[s], s:[s], s:[s]}], s:s, "
                  "s:s, s:[s]}",
                  "name", name, "clientConfig", "service", "name", "webhook-service", "namespace",
                  "system", "path", path, "rules", "operations", ops, "apiGroups", group,
                  "apiVersions", slash ? slash + 1 : api_version, "resources", ri.resource,
                  "failurePolicy", "Fail", "sideEffects", "None", "admissionReviewVersions", "v1");
    if (!w || json_array_append_new(hooks, w) < 0)
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    return 0;
}

int ctrl_webhook_install_server(ctrl_client *c, const ctrl_webhook_server *s, const char *name,
                                const char *host, const char *ca_pem, ctrl_error *err)
{
    int port = ctrl_webhook_server_port(s);
    if (!c || !name || !*name || !port)
        return ctrl__error_set(err, CTRL_ERR_ARG,
                               "webhook install: a client, a name and a started server are "
                               "required");
    json_t *mh = json_array(), *vh = json_array(), *cfgs = json_array();
    int rc = 0;
    if (!mh || !vh || !cfgs) {
        rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
        goto out;
    }
    const char *av, *kind, *path;
    bool mutating;
    for (size_t i = 0; ctrl__webhook_server_kinds(s, i, &av, &kind, &path, &mutating); i++) {
        if (av && (rc = hook_for(c, name, av, kind, path, mutating, mutating ? mh : vh, err)) < 0)
            goto out;
    }
    if (json_array_size(mh))
        json_array_append_new(cfgs, json_pack("{s:s, s:s, s:{s:s}, s:O}", "apiVersion", ADMREG,
                                              "kind", "MutatingWebhookConfiguration", "metadata",
                                              "name", name, "webhooks", mh));
    if (json_array_size(vh))
        json_array_append_new(cfgs, json_pack("{s:s, s:s, s:{s:s}, s:O}", "apiVersion", ADMREG,
                                              "kind", "ValidatingWebhookConfiguration", "metadata",
                                              "name", name, "webhooks", vh));
    char base[400];
    snprintf(base, sizeof base, "https://%s:%d", host && *host ? host : "127.0.0.1", port);
    if (json_array_size(cfgs))
        rc = ctrl_webhook_install(c, cfgs, base, ca_pem, err);
out:
    json_decref(mh);
    json_decref(vh);
    json_decref(cfgs);
    return rc;
}
