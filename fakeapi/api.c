/*
 * api.c - the in-process API: apply, get, list, delete without HTTP.
 *
 * Each call builds the request an HTTP client would send and runs it through
 * fakeapi__handle(), so in-process and HTTP clients see the same semantics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "exchange.h"
#include "kh/yaml.h"
#include "record.h"
#include "router.h"
#include "selector.h"
#include "server_int.h"
#include "store.h"
#include "watch.h"

static int code_for(int http)
{
    switch (http) {
    case 400:
    case 422:
        return FAKEAPI_ERR_INVALID;
    case 403:
        return FAKEAPI_ERR_FORBIDDEN;
    case 404:
        return FAKEAPI_ERR_NOT_FOUND;
    case 405:
    case 415:
        return FAKEAPI_ERR_UNSUPPORTED;
    case 410:
        return FAKEAPI_ERR_GONE;
    default:
        return http >= 500 ? FAKEAPI_ERR_INTERNAL : FAKEAPI_ERR_INVALID;
    }
}

static int fail(fakeapi_error *err, int code, int http, const char *reason, const char *msg)
{
    if (err) {
        err->code = code;
        err->http_status = http;
        snprintf(err->reason, sizeof err->reason, "%s", reason ? reason : "");
        snprintf(err->message, sizeof err->message, "%s", msg ? msg : fakeapi_strerror(code));
    }
    return code;
}

/* Turn an error response into a code and fakeapi_error. */
static int from_status(const fakeapi__resp *resp, fakeapi_error *err)
{
    json_t *st = json_loadb(resp->body ? resp->body : "", resp->body_len, 0, NULL);
    const char *reason = json_string_value(json_object_get(st, "reason"));
    int code = code_for(resp->status);
    if (resp->status == 409)
        code = reason && !strcmp(reason, "AlreadyExists") ? FAKEAPI_ERR_ALREADY_EXISTS
                                                          : FAKEAPI_ERR_CONFLICT;
    fail(err, code, resp->status, reason, json_string_value(json_object_get(st, "message")));
    json_decref(st);
    return code;
}

/* A request of the in-process calls (text NULL: no body). */
static fakeapi__req inproc_req(const char *method, const char *path, json_t *query,
                               const char *ctype, const char *text)
{
    return (fakeapi__req){.method = method,
                          .path = path,
                          .query = query,
                          .content_type = ctype,
                          .accept = "application/json",
                          .user_agent = "fakeapi-inprocess",
                          .body = text ? text : "",
                          .body_len = text ? strlen(text) : 0};
}

/* Run one request; on 2xx store the parsed body in *out (if non-NULL). */
/* One in-process request with a body as text (NULL: none). */
static int run_text(fakeapi_server *srv, const char *method, const char *path, json_t *query,
                    const char *ctype, const char *text, json_t **out, fakeapi_error *err)
{
    json_t *q = query ? json_incref(query) : json_object();
    fakeapi__req req = inproc_req(method, path, q, ctype, text);
    fakeapi__resp resp = {0};
    fakeapi__handle(srv, &req, &resp);
    int rc = 0;
    if (resp.status >= 300) {
        rc = from_status(&resp, err);
    } else if (out) {
        json_t *obj = json_loadb(resp.body, resp.body_len, 0, NULL);
        if (!obj)
            rc = fail(err, FAKEAPI_ERR_INTERNAL, 500, "InternalError", "unparsable response");
        else
            *out = obj;
    }
    fakeapi__resp_deinit(&resp);
    json_decref(q);
    return rc;
}

static int run(fakeapi_server *srv, const char *method, const char *path, json_t *query,
               const char *ctype, const json_t *body, json_t **out, fakeapi_error *err)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    if (body && !text)
        return fail(err, FAKEAPI_ERR_NOMEM, 500, "InternalError", "out of memory");
    int rc = run_text(srv, method, path, query, ctype, text, out, err);
    free(text);
    return rc;
}

/* The URL path of a kind's collection, or of one object when name is set. */
static int kind_path(fakeapi_server *srv, const char *api_version, const char *kind, const char *ns,
                     const char *name, char *buf, size_t len, fakeapi_error *err)
{
    fakeapi__resource *r = fakeapi__registry_find_kind(srv->reg, api_version, kind);
    if (!r) {
        char msg[300];
        snprintf(msg, sizeof msg, "no matches for kind \"%s\" in version \"%s\"", kind ? kind : "",
                 api_version ? api_version : "");
        return fail(err, FAKEAPI_ERR_NOT_FOUND, 404, "NotFound", msg);
    }
    int n = snprintf(
        buf, len, "/%s%s%s/%s%s%s/%s%s%s", *r->group ? "apis" : "api", *r->group ? "/" : "",
        r->group, r->version, r->namespaced && ns && *ns ? "/namespaces/" : "",
        r->namespaced && ns && *ns ? ns : "", r->plural, name ? "/" : "", name ? name : "");
    fakeapi__resource_unref(r);
    if (n < 0 || (size_t)n >= len)
        return fail(err, FAKEAPI_ERR_INVALID, 400, "BadRequest", "name too long");
    return 0;
}

static bool kind_namespaced(fakeapi_server *srv, const char *api_version, const char *kind)
{
    fakeapi__resource *r = fakeapi__registry_find_kind(srv->reg, api_version, kind);
    bool ns = r && r->namespaced;
    fakeapi__resource_unref(r);
    return ns;
}

static int apply_one(fakeapi_server *srv, json_t *obj, fakeapi_error *err)
{
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    if (!av || !kind)
        return fail(err, FAKEAPI_ERR_INVALID, 400, "BadRequest",
                    "every document needs apiVersion and kind");
    if (!ns && kind_namespaced(srv, av, kind))
        ns = "default";
    char path[1024];
    int rc = kind_path(srv, av, kind, ns, NULL, path, sizeof path, err);
    if (rc < 0)
        return rc;
    if (name) {
        char item[1300];
        snprintf(item, sizeof item, "%s/%s", path, name);
        rc = run(srv, "PATCH", item, NULL, "application/merge-patch+json", obj, NULL, err);
        if (rc != FAKEAPI_ERR_NOT_FOUND)
            return rc;
    }
    return run(srv, "POST", path, NULL, "application/json", obj, NULL, err);
}

int fakeapi_apply(fakeapi_server *srv, const char *text, size_t len, fakeapi_error *err)
{
    json_t *docs = NULL;
    kh_yaml_error yerr;
    if (kh_yaml_load(text, len, &docs, &yerr) < 0) {
        char msg[400];
        snprintf(msg, sizeof msg, "line %d column %d: %s", yerr.line, yerr.column, yerr.message);
        return fail(err, FAKEAPI_ERR_INVALID, 400, "BadRequest", msg);
    }
    int rc = 0;
    size_t i;
    json_t *doc;
    json_array_foreach(docs, i, doc)
    {
        const char *kind = json_string_value(json_object_get(doc, "kind"));
        if (kind && !strcmp(kind, "List")) {
            size_t j;
            json_t *item;
            json_array_foreach(json_object_get(doc, "items"), j, item)
            {
                if ((rc = apply_one(srv, item, err)) < 0)
                    goto out;
            }
        } else if (json_is_object(doc) && (rc = apply_one(srv, doc, err)) < 0) {
            goto out;
        }
    }
out:
    json_decref(docs);
    return rc;
}

int fakeapi_apply_file(fakeapi_server *srv, const char *path, fakeapi_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s: cannot open", path);
        return fail(err, FAKEAPI_ERR_IO, 0, "", msg);
    }
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[65536];
    int rc = 0;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n > cap) {
            cap = (len + n) * 2;
            char *p = realloc(buf, cap);
            if (!p) {
                rc = fail(err, FAKEAPI_ERR_NOMEM, 0, "", NULL);
                break;
            }
            buf = p;
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (rc == 0)
        rc = fakeapi_apply(srv, buf ? buf : "", len, err);
    free(buf);
    return rc;
}

int fakeapi_get(fakeapi_server *srv, const char *api_version, const char *kind, const char *ns,
                const char *name, json_t **out, fakeapi_error *err)
{
    char path[1024];
    if (!name || !*name)
        return fail(err, FAKEAPI_ERR_INVALID, 400, "BadRequest", "name is required");
    int rc = kind_path(srv, api_version, kind, ns, name, path, sizeof path, err);
    return rc < 0 ? rc : run(srv, "GET", path, NULL, NULL, NULL, out, err);
}

int fakeapi_list(fakeapi_server *srv, const char *api_version, const char *kind, const char *ns,
                 const char *label_selector, json_t **out, fakeapi_error *err)
{
    char path[1024];
    int rc = kind_path(srv, api_version, kind, ns, NULL, path, sizeof path, err);
    if (rc < 0)
        return rc;
    json_t *q = json_object(), *list = NULL;
    if (label_selector)
        json_object_set_new(q, "labelSelector", json_string(label_selector));
    rc = run(srv, "GET", path, q, NULL, NULL, &list, err);
    json_decref(q);
    if (rc == 0) {
        *out = json_incref(json_object_get(list, "items"));
        json_decref(list);
    }
    return rc;
}

int fakeapi_delete(fakeapi_server *srv, const char *api_version, const char *kind, const char *ns,
                   const char *name, fakeapi_error *err)
{
    char path[1024];
    int rc = kind_path(srv, api_version, kind, ns, name, path, sizeof path, err);
    return rc < 0 ? rc : run(srv, "DELETE", path, NULL, NULL, NULL, NULL, err);
}

int fakeapi_patch(fakeapi_server *srv, const char *api_version, const char *kind, const char *ns,
                  const char *name, fakeapi_patch_type type, const char *patch,
                  const fakeapi_patch_options *opts, json_t **out, fakeapi_error *err)
{
    static const char *const ctypes[] = {
        "application/merge-patch+json", "application/json-patch+json",
        "application/strategic-merge-patch+json", "application/apply-patch+yaml"};
    static const fakeapi_patch_options none;
    if (!opts)
        opts = &none;
    if (!name || !*name)
        return fail(err, FAKEAPI_ERR_INVALID, 400, "BadRequest", "name is required");
    if ((unsigned)type > FAKEAPI_PATCH_APPLY || !patch)
        return fail(err, FAKEAPI_ERR_INVALID, 400, "BadRequest",
                    !patch ? "no patch" : "unknown patch type");
    if (opts->subresource && strcmp(opts->subresource, "status") &&
        strcmp(opts->subresource, "scale"))
        return fail(err, FAKEAPI_ERR_INVALID, 400, "BadRequest",
                    "subresource: \"status\", \"scale\" or none");
    char path[1100];
    int rc = kind_path(srv, api_version, kind, ns, name, path, sizeof path - 16, err);
    if (rc < 0)
        return rc;
    if (opts->subresource) {
        strcat(path, "/");
        strcat(path, opts->subresource);
    }
    json_t *q = json_object();
    if (!q)
        return fail(err, FAKEAPI_ERR_NOMEM, 500, "InternalError", "out of memory");
    if (opts->field_manager)
        json_object_set_new(q, "fieldManager", json_string(opts->field_manager));
    if (opts->force)
        json_object_set_new(q, "force", json_string("true"));
    rc = run_text(srv, "PATCH", path, q, ctypes[type], patch, out, err);
    json_decref(q);
    return rc;
}

int fakeapi_request(fakeapi_server *srv, const char *method, const char *path,
                    const char *content_type, const char *body, int *status, json_t **out)
{
    char *p = NULL;
    json_t *q = NULL;
    fakeapi__resp resp = {0};
    fakeapi__exchange ex = {0};
    /* The target decoded as the front end decodes one (exchange.h). */
    if (!fakeapi__exchange_target(path, &p, &q, &resp))
        goto answer;
    ex.req = inproc_req(method, p, q, content_type, body);
    int64_t received = fakeapi__recording(srv) ? fakeapi__srv_now(srv) : 0;
    fakeapi__handle(srv, &ex.req, &resp);
    if (fakeapi__recording(srv)) {
        fakeapi__exchange_classify(&ex);
        fakeapi__record_info info = {.target = path, .received_ns = received};
        if (!fakeapi__exchange_unfaulted(&ex))
            fakeapi__record(srv, &info, &ex.req, &ex.rt, &ex.ri, &resp);
    }
    if (resp.watch) {
        fakeapi__watch_free(resp.watch); /* watches need a connection */
        resp.status = 400;
    }
answer:
    if (status)
        *status = resp.status;
    if (out)
        *out = resp.body ? json_loadb(resp.body, resp.body_len, 0, NULL) : NULL;
    fakeapi__resp_deinit(&resp);
    free(p);
    json_decref(q);
    return 0;
}

int fakeapi_record_open(fakeapi_server *srv, const char *path, const fakeapi_record_options *opts,
                        fakeapi_error *err)
{
    char msg[512];
    if (!srv)
        return FAKEAPI_ERR_INVALID;
    if (fakeapi__record_open(srv, path, opts && opts->secrets, opts ? opts->user : NULL, msg,
                             sizeof msg) < 0) {
        if (err) {
            memset(err, 0, sizeof *err);
            err->code = FAKEAPI_ERR_IO;
            snprintf(err->message, sizeof err->message, "%s", msg);
        }
        return FAKEAPI_ERR_IO;
    }
    return 0;
}

int fakeapi_path(fakeapi_server *srv, const char *api_version, const char *kind, const char *ns,
                 const char *name, char *buf, size_t len, fakeapi_error *err)
{
    return kind_path(srv, api_version, kind, ns, name, buf, len, err);
}

int fakeapi__bootstrap(fakeapi_server *srv);

/* A store that already holds CRDs (--db) serves their kinds again. */
static int serve_stored_crds(fakeapi_server *srv)
{
    json_t *crds = json_array();
    fakeapi__store_lock(srv->store);
    int rc = fakeapi__store_load_all(srv->store, "apiextensions.k8s.io/customresourcedefinitions",
                                     NULL, crds);
    fakeapi__store_unlock(srv->store);
    size_t i;
    json_t *crd;
    json_array_foreach(crds, i, crd)
    {
        char err[256];
        if (rc == 0 && fakeapi__registry_add_crd(srv->reg, crd, err, sizeof err) < 0)
            rc = -1;
    }
    json_decref(crds);
    return rc;
}

/* The namespaces every cluster has, created once per store. */
int fakeapi__bootstrap(fakeapi_server *srv)
{
    if (serve_stored_crds(srv) < 0)
        return -1;
    static const char *const names[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        json_t *ns = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                               "metadata", "name", names[i]);
        int rc = run(srv, "POST", "/api/v1/namespaces", NULL, "application/json", ns, NULL, NULL);
        json_decref(ns);
        if (rc < 0 && rc != FAKEAPI_ERR_ALREADY_EXISTS)
            return -1;
    }
    return 0;
}

/* Every stored object, each kind listed once in its storage version. */
int fakeapi_objects(fakeapi_server *srv, json_t **out, fakeapi_error *err)
{
    size_t n = 0;
    fakeapi__resource **all = fakeapi__registry_all(srv->reg, &n);
    json_t *objs = json_array();
    int rc = all && objs ? 0 : fail(err, FAKEAPI_ERR_NOMEM, 500, "InternalError", "out of memory");
    for (size_t i = 0; i < n && rc == 0; i++) {
        const fakeapi__resource *r = all[i];
        if (!r->stored || !r->storage_version || !fakeapi__resource_allows(r, "list"))
            continue;
        char path[600];
        snprintf(path, sizeof path, "/%s%s%s/%s/%s", *r->group ? "apis" : "api",
                 *r->group ? "/" : "", r->group, r->version, r->plural);
        json_t *list = NULL, *item;
        size_t k;
        if ((rc = run(srv, "GET", path, NULL, NULL, NULL, &list, err)) < 0)
            break;
        json_array_foreach(json_object_get(list, "items"), k, item)
        {
            /* list items carry no apiVersion and kind on the wire */
            json_object_set_new(item, "apiVersion", json_string(r->group_version));
            json_object_set_new(item, "kind", json_string(r->kind));
            if (json_array_append(objs, item) < 0)
                rc = fail(err, FAKEAPI_ERR_NOMEM, 500, "InternalError", "out of memory");
        }
        json_decref(list);
    }
    if (all)
        fakeapi__registry_release(all, n);
    if (rc < 0) {
        json_decref(objs);
        return rc;
    }
    *out = objs;
    return 0;
}

/* ---- fakeapi_read_list: the list straight from the store ---- */

typedef struct read_state {
    const fakeapi__resource *res;
    fakeapi__labelsel *lsel;
    bool convert; /* read through the version asked for, as the handler does */
    json_t *items; /* NULL: count only */
    size_t count;
} read_state;

static int read_visit(void *ud, const char *ns, const char *name, const char *labels,
                      const char *text, size_t len)
{
    (void)ns;
    (void)name;
    read_state *rs = ud;
    if (!fakeapi__labelsel_empty(rs->lsel)) {
        json_t *l = labels ? json_loads(labels, 0, NULL) : NULL;
        bool ok = fakeapi__labelsel_match(rs->lsel, l);
        json_decref(l);
        if (!ok)
            return 0;
    }
    rs->count++;
    if (!rs->items)
        return 0;
    json_t *obj = json_loadb(text, len, 0, NULL);
    if (!obj)
        return -1;
    if (rs->convert)
        fakeapi__convert_out(rs->res, obj);
    return json_array_append_new(rs->items, obj) < 0 ? -1 : 0;
}

/*
 * The objects fakeapi_list would give (items non-NULL: appended to it), or
 * only their number (items NULL), in *count. 1 when the handler would refuse
 * the request (an unknown kind, a bad namespace or selector, a kind that
 * cannot be listed): the caller then asks fakeapi_list, so that errors are
 * its own.
 */
static int read_objects(fakeapi_server *srv, const char *api_version, const char *kind,
                        const char *ns, const char *label_selector, json_t *items, size_t *count,
                        fakeapi_error *err)
{
    /* The request fakeapi_list would send, routed as the handler routes it. */
    char path[1024];
    fakeapi__route rt;
    fakeapi_error perr;
    if (kind_path(srv, api_version, kind, ns, NULL, path, sizeof path, &perr) < 0 ||
        fakeapi__route_parse(path, &rt) < 0 || rt.kind != FAKEAPI__RT_COLLECTION || rt.watch)
        return 1;
    fakeapi__resource *res = fakeapi__registry_find(srv->reg, rt.group, rt.version, rt.resource);
    read_state rs = {.res = res, .items = items};
    char msg[512];
    int rc = 1;
    if (!res || (rt.ns[0] && !res->namespaced) || !fakeapi__resource_allows(res, "list") ||
        fakeapi__labelsel_parse(label_selector, &rs.lsel, msg, sizeof msg) < 0)
        goto out;
    rs.convert = res->custom || !res->storage_version;
    const char *sns = rt.ns[0] ? rt.ns : (res->namespaced ? NULL : "");
    fakeapi__store_lock(srv->store);
    rc = fakeapi__store_scan(srv->store, res->store_key, sns, NULL, NULL, read_visit, &rs);
    fakeapi__store_unlock(srv->store);
    if (rc < 0)
        rc = fail(err, FAKEAPI_ERR_INTERNAL, 500, "InternalError", "storage error");
    else
        *count = rs.count;
out:
    fakeapi__labelsel_free(rs.lsel);
    if (res)
        fakeapi__resource_unref(res);
    return rc < 0 ? rc : rc > 0 ? 1 : 0;
}

int fakeapi_read_list(fakeapi_server *srv, const char *api_version, const char *kind,
                      const char *ns, const char *label_selector, json_t **out, fakeapi_error *err)
{
    json_t *items = json_array();
    size_t n = 0;
    if (!items)
        return fail(err, FAKEAPI_ERR_NOMEM, 500, "InternalError", "out of memory");
    int rc = read_objects(srv, api_version, kind, ns, label_selector, items, &n, err);
    if (rc == 1) {
        json_decref(items);
        return fakeapi_list(srv, api_version, kind, ns, label_selector, out, err);
    }
    if (rc < 0) {
        json_decref(items);
        return rc;
    }
    *out = items;
    return 0;
}

int fakeapi_read_count(fakeapi_server *srv, const char *api_version, const char *kind,
                       const char *ns, const char *label_selector, size_t *count,
                       fakeapi_error *err)
{
    int rc = read_objects(srv, api_version, kind, ns, label_selector, NULL, count, err);
    if (rc != 1)
        return rc;
    json_t *items = NULL;
    if ((rc = fakeapi_list(srv, api_version, kind, ns, label_selector, &items, err)) < 0)
        return rc;
    *count = json_array_size(items);
    json_decref(items);
    return 0;
}
