/*
 * handler.c - route a request to discovery, OpenAPI, the control endpoint
 * or a verb on a resource. Runs on the caller's thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accept.h"
#include "discovery.h"
#include "openapi.h"
#include "openapi_pb.h"
#include "fault.h"
#include "health.h"
#include "metrics.h"
#include "selector.h"
#include "strbuf.h"
#include "verbs.h"
#include "watch.h"

static void not_served(fakeapi__resp *resp)
{
    fakeapi__resp_error(resp, 404, "NotFound", NULL,
                        "the server could not find the requested resource");
}

static void method_not_allowed(fakeapi__resp *resp)
{
    fakeapi__resp_error(resp, 405, "MethodNotAllowed", NULL,
                        "the server does not allow this method on the requested resource");
}

/* A discovery document: answer it, or 404 when the generator says NULL. */
static void answer_doc(fakeapi__resp *resp, json_t *doc)
{
    if (doc)
        fakeapi__resp_json(resp, 200, doc);
    else
        not_served(resp);
}

/* The client accepts none of the shapes fakeapi writes (protobuf or YAML only, say). */
static bool not_acceptable(const fakeapi__req *req, fakeapi__resp *resp)
{
    if (fakeapi__accept_pick(req->accept) != FAKEAPI__AS_NONE)
        return false;
    fakeapi__resp_error(resp, 406, "NotAcceptable", NULL,
                        "only the following media types are accepted: application/json");
    return true;
}

/* GET /openapi/v3 (version NULL) and its group-versions, from the server's cache. */
static void answer_openapi_v3(fakeapi_server *srv, const char *group, const char *version,
                              fakeapi__resp *resp)
{
    char *body = NULL;
    size_t len = 0;
    int rc = fakeapi__openapi_v3_body(srv->openapi, srv->reg, group, version, &body, &len);
    if (rc == 1)
        not_served(resp);
    else if (rc < 0)
        fakeapi__resp_error(resp, 500, "InternalError", NULL, "out of memory");
    else
        fakeapi__resp_take(resp, 200, body, len);
}

/* GET /openapi/v2: the cached document, JSON or protobuf as Accept asks; else 406. */
static void answer_openapi_v2(fakeapi_server *srv, const fakeapi__req *req, fakeapi__resp *resp)
{
    int form = fakeapi__openapi_v2_form(req->accept);
    if (form < 0) {
        fakeapi__resp_error(resp, 406, "NotAcceptable", NULL,
                            "only the following media types are accepted: application/json, "
                            FAKEAPI__OPENAPI_V2_PB);
        return;
    }
    char *body = NULL;
    size_t len = 0;
    if (fakeapi__openapi_v2_body(srv->openapi, srv->reg, (fakeapi__openapi_fmt)form, &body,
                                 &len) < 0) {
        fakeapi__resp_error(resp, 500, "InternalError", NULL, "out of memory");
        return;
    }
    fakeapi__resp_take(resp, 200, body, len);
    /* As the real server labels it: the asked-for type has an '@' that mime parsers refuse. */
    if (form == FAKEAPI__OPENAPI_PROTOBUF)
        resp->content_type = "application/octet-stream";
}

static void handle_info(fakeapi_server *srv, const fakeapi__req *req, const fakeapi__route *rt,
                        fakeapi__resp *resp)
{
    if (strcmp(req->method, "GET") != 0) {
        method_not_allowed(resp);
        return;
    }
    bool discovery = rt->kind == FAKEAPI__RT_API || rt->kind == FAKEAPI__RT_APIS ||
                     rt->kind == FAKEAPI__RT_GROUP || rt->kind == FAKEAPI__RT_GROUPVERSION;
    if (discovery && not_acceptable(req, resp))
        return;
    switch (rt->kind) {
    case FAKEAPI__RT_VERSION:
        answer_doc(resp, fakeapi__disc_version());
        break;
    case FAKEAPI__RT_API:
        answer_doc(resp, fakeapi__disc_api());
        break;
    case FAKEAPI__RT_APIS:
        answer_doc(resp, fakeapi__disc_apis(srv->reg));
        break;
    case FAKEAPI__RT_GROUP:
        answer_doc(resp, fakeapi__disc_group(srv->reg, rt->group));
        break;
    case FAKEAPI__RT_GROUPVERSION: {
        size_t len = 0;
        char *text = fakeapi__disc_resources_text(srv->reg, rt->group, rt->version, &len);
        if (text)
            fakeapi__resp_take(resp, 200, text, len);
        else
            not_served(resp);
        break;
    }
    case FAKEAPI__RT_OPENAPI_V3:
        answer_openapi_v3(srv, NULL, NULL, resp);
        break;
    case FAKEAPI__RT_OPENAPI_V3_GV:
        answer_openapi_v3(srv, rt->group, rt->version, resp);
        break;
    case FAKEAPI__RT_OPENAPI_V2:
        answer_openapi_v2(srv, req, resp);
        break;
    case FAKEAPI__RT_HEALTH:
        fakeapi__health_serve(srv, req, rt, resp);
        break;
    default:
        not_served(resp);
        break;
    }
}

static void dispatch_verb(fakeapi__ctx *c)
{
    const char *m = c->req->method;
    if (!c->res->stored) {
        /* Reviews and bindings: only POST on the collection, answered, never stored. */
        if (c->rt->kind == FAKEAPI__RT_COLLECTION)
            fakeapi__do_review(c);
        else
            method_not_allowed(c->resp);
        return;
    }
    switch (c->rt->kind) {
    case FAKEAPI__RT_COLLECTION:
        if (!strcmp(m, "GET"))
            fakeapi__do_list(c);
        else if (!strcmp(m, "POST") && c->ns)
            fakeapi__do_create(c);
        else if (!strcmp(m, "DELETE") && c->ns)
            fakeapi__do_deletecollection(c);
        else
            method_not_allowed(c->resp);
        break;
    case FAKEAPI__RT_OBJECT:
        if (!strcmp(m, "GET"))
            fakeapi__do_get(c);
        else if (!strcmp(m, "PUT"))
            fakeapi__do_update(c);
        else if (!strcmp(m, "PATCH"))
            fakeapi__do_patch(c);
        else if (!strcmp(m, "DELETE"))
            fakeapi__do_delete(c);
        else
            method_not_allowed(c->resp);
        break;
    case FAKEAPI__RT_SUBRESOURCE:
        if (!fakeapi__resource_has_sub(c->res, c->rt->sub))
            not_served(c->resp);
        else if (!strcmp(c->rt->sub, "token"))
            fakeapi__do_token_request(c);
        else if (strcmp(c->rt->sub, "status") && strcmp(c->rt->sub, "scale"))
            fakeapi__do_pod_sub(c);
        else
            fakeapi__do_subresource(c);
        break;
    default:
        not_served(c->resp);
        break;
    }
}

/* The options kind a verb's query parameters decode into, for messages. */
static const char *options_kind(const char *method)
{
    if (!strcmp(method, "POST"))
        return "CreateOptions";
    if (!strcmp(method, "PUT"))
        return "UpdateOptions";
    if (!strcmp(method, "PATCH"))
        return "PatchOptions";
    if (!strcmp(method, "DELETE"))
        return "DeleteOptions";
    return "ListOptions";
}

/* 422 for one unsupported value of an options parameter, as kube-apiserver's
 * validation of ListOptions, DeleteOptions... says it. */
static void unsupported(fakeapi__resp *resp, const char *kind, const char *field, const char *value,
                        const char *supported)
{
    char cause[400];
    snprintf(cause, sizeof cause, "Unsupported value: \"%s\": supported values: %s", value,
             supported);
    json_t *details = json_pack("{s:s, s:s, s:s, s:[{s:s, s:s, s:s}]}", "name", "", "group",
                                "meta.k8s.io", "kind", kind, "causes", "reason",
                                "FieldValueNotSupported", "message", cause, "field", field);
    fakeapi__resp_error(resp, 422, "Invalid", details, "%s.meta.k8s.io \"\" is invalid: %s: %s",
                        kind, field, cause);
}

/*
 * The query parameters a verb reads, checked before it runs, so that a
 * value the server cannot read exactly is an error rather than taken as
 * absent: a deletecollection with a garbage parameter deletes nothing.
 * Answers the error itself; false then.
 */
static bool check_params(const fakeapi__req *req, const fakeapi__route *rt, fakeapi__resp *resp)
{
    static const char *const bools[] = {"watch", "allowWatchBookmarks", "sendInitialEvents", NULL};
    static const char *const ints[] = {"timeoutSeconds", "limit", "gracePeriodSeconds", NULL};
    bool reads = !strcmp(req->method, "GET") ||
                 (!strcmp(req->method, "DELETE") && rt->kind == FAKEAPI__RT_COLLECTION);
    const char *v;
    for (const char *const *p = bools; *p; p++) {
        bool b;
        if ((v = fakeapi__q(req, *p)) && fakeapi__parse_bool(v, &b) < 0) {
            fakeapi__resp_error(resp, 400, "BadRequest", NULL,
                                "%s: strconv.ParseBool: parsing \"%s\": invalid syntax", *p, v);
            return false;
        }
    }
    for (const char *const *p = ints; *p; p++) {
        long long n;
        if ((v = fakeapi__q(req, *p)) && fakeapi__parse_int(v, &n) < 0) {
            fakeapi__resp_error(resp, 400, "BadRequest", NULL,
                                "%s: strconv.ParseInt: parsing \"%s\": invalid syntax", *p, v);
            return false;
        }
    }
    if (reads && (v = fakeapi__q(req, "resourceVersion")) && *v) {
        /* strconv.ParseUint: digits only, no sign, no space, in range. */
        bool digits = strspn(v, "0123456789") == strlen(v);
        bool range = strlen(v) < 20 || (strlen(v) == 20 && strcmp(v, "18446744073709551615") <= 0);
        if (!digits || !range) {
            fakeapi__resp_error(resp, 400, "BadRequest", NULL,
                                "invalid resource version: resourceVersion: Invalid value: "
                                "\"%s\": strconv.ParseUint: parsing \"%s\": %s",
                                v, v, digits ? "value out of range" : "invalid syntax");
            return false;
        }
    }
    if (reads && (v = fakeapi__q(req, "resourceVersionMatch")) && *v && strcmp(v, "Exact") &&
        strcmp(v, "NotOlderThan")) {
        unsupported(resp, "ListOptions", "resourceVersionMatch", v, "\"Exact\", \"NotOlderThan\"");
        return false;
    }
    /* dryRun=all would otherwise be a real write. */
    if (strcmp(req->method, "GET") && (v = fakeapi__q(req, "dryRun")) && *v && strcmp(v, "All")) {
        unsupported(resp, options_kind(req->method), "dryRun", v, "\"All\"");
        return false;
    }
    return true;
}

static const char *verb_of(const fakeapi__req *req, const fakeapi__route *rt);

/*
 * The verbs the resource allows (componentstatuses are read-only, a
 * namespace cannot be deleted as a collection, reviews are create-only): 405
 * otherwise, as the real server. Subresources check their own verbs.
 */
static bool verb_allowed(const fakeapi__ctx *c)
{
    if (c->rt->kind == FAKEAPI__RT_SUBRESOURCE)
        return true;
    const char *verb = verb_of(c->req, c->rt);
    if (fakeapi__resource_allows(c->res, verb))
        return true;
    fakeapi__resp_error(c->resp, 405, "MethodNotAllowed", NULL,
                        "the server does not allow this method on the requested resource");
    return false;
}

/* A name as a field selector value: '\\', ',' and '=' escaped, as
 * apimachinery's EscapeValue. NULL when out of memory. */
static char *name_selector(const char *name)
{
    fakeapi__strbuf b = {.max = 4 * FAKEAPI__SEG_MAX};
    fakeapi__strbuf_adds(&b, "metadata.name=");
    for (const char *p = name; *p; p++) {
        if (*p == '\\' || *p == ',' || *p == '=')
            fakeapi__strbuf_add(&b, "\\", 1);
        fakeapi__strbuf_add(&b, p, 1);
    }
    return fakeapi__strbuf_take(&b, NULL);
}

/*
 * A legacy watch path: the watch ?watch=true makes on the same path without
 * "watch/", whatever the watch parameter says. By name it is a watch of the
 * collection with fieldSelector metadata.name=NAME, as kube-apiserver's list
 * handler serves a named watch: a client's own field selector must then
 * require that name (400 otherwise). GET only (405).
 */
static void dispatch_watch_path(fakeapi__ctx *c)
{
    if (strcmp(c->req->method, "GET") != 0) {
        method_not_allowed(c->resp);
        return;
    }
    fakeapi__route rt = *c->rt;
    json_t *q = json_copy(c->req->query);
    char *sel = NULL;
    if (!q || json_object_set_new(q, "watch", json_string("true")) < 0)
        goto nomem;
    if (rt.kind == FAKEAPI__RT_OBJECT) {
        const char *fs = fakeapi__q(c->req, "fieldSelector");
        if (fs && *fs) {
            fakeapi__fieldsel *fsel = NULL;
            char err[256];
            /* A selector that does not parse is the watch's own 400 below. */
            if (fakeapi__fieldsel_parse(fs, &fsel, err, sizeof err) == 0) {
                const char *want = fakeapi__fieldsel_requires(fsel, "metadata.name");
                bool ok = want && !strcmp(want, rt.name);
                fakeapi__fieldsel_free(fsel);
                if (!ok) {
                    fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                                        "fieldSelector metadata.name doesn't match requested "
                                        "name");
                    goto out;
                }
            }
        } else if (!(sel = name_selector(rt.name)) ||
                   json_object_set_new(q, "fieldSelector", json_string(sel)) < 0) {
            goto nomem;
        }
        rt.kind = FAKEAPI__RT_COLLECTION;
        rt.name[0] = '\0';
    }
    fakeapi__req r = *c->req;
    r.query = q;
    fakeapi__ctx wc = *c;
    wc.req = &r;
    wc.rt = &rt;
    if (check_params(&r, &rt, c->resp))
        fakeapi__do_list(&wc);
    goto out;
nomem:
    fakeapi__resp_error(c->resp, 500, "InternalError", NULL, "out of memory");
out:
    free(sel);
    json_decref(q);
}

static void handle_resource(fakeapi_server *srv, const fakeapi__req *req, const fakeapi__route *rt,
                            fakeapi__resp *resp)
{
    fakeapi__resource *res = fakeapi__registry_find(srv->reg, rt->group, rt->version, rt->resource);
    if (!res) {
        not_served(resp);
        return;
    }
    fakeapi__ctx c = {.srv = srv, .req = req, .resp = resp, .rt = rt, .res = res};
    bool has_ns = rt->ns[0] != '\0';
    if (has_ns && !res->namespaced) {
        not_served(resp);
    } else if (!has_ns && res->namespaced && rt->kind != FAKEAPI__RT_COLLECTION) {
        not_served(resp);
    } else {
        /* A namespaced collection without a namespace lists everywhere. */
        c.ns = res->namespaced ? (has_ns ? rt->ns : NULL) : "";
        if (!has_ns && res->namespaced && strcmp(req->method, "GET") != 0)
            method_not_allowed(resp);
        else if (rt->watch && !fakeapi__resource_allows(res, "watch"))
            not_served(resp); /* kube-apiserver registers no watch/ path for it */
        else if (!not_acceptable(req, resp) && verb_allowed(&c)) {
            if (rt->watch)
                dispatch_watch_path(&c);
            else if (check_params(req, rt, resp))
                dispatch_verb(&c);
        }
    }
    fakeapi__resource_unref(res);
}

void fakeapi__handle(fakeapi_server *srv, const fakeapi__req *req, fakeapi__resp *resp)
{
    fakeapi__route rt;
    atomic_fetch_add(&srv->requests, 1);
    if (fakeapi__route_parse(req->path, &rt) < 0) {
        not_served(resp);
        return;
    }
    switch (rt.kind) {
    case FAKEAPI__RT_COLLECTION:
    case FAKEAPI__RT_OBJECT:
    case FAKEAPI__RT_SUBRESOURCE:
        handle_resource(srv, req, &rt, resp);
        break;
    case FAKEAPI__RT_CONTROL:
        fakeapi__control(srv, req, &rt, resp);
        break;
    case FAKEAPI__RT_METRICS:
        fakeapi__metrics_serve(srv, resp);
        break;
    default:
        handle_info(srv, req, &rt, resp);
        break;
    }
}

static const char *verb_of(const fakeapi__req *req, const fakeapi__route *rt)
{
    const char *m = req->method;
    bool coll = rt->kind == FAKEAPI__RT_COLLECTION;
    if (rt->watch)
        return !strcmp(m, "GET") ? "watch" : "other";
    if (!strcmp(m, "GET"))
        return !coll ? "get" : fakeapi__q_bool(req, "watch") ? "watch" : "list";
    if (!strcmp(m, "POST"))
        return "create";
    if (!strcmp(m, "PUT"))
        return "update";
    if (!strcmp(m, "PATCH"))
        return "patch";
    if (!strcmp(m, "DELETE"))
        return coll ? "deletecollection" : "delete";
    return "other";
}

void fakeapi__classify(const fakeapi__req *req, const fakeapi__route *rt, fakeapi__reqinfo *ri)
{
    bool api = rt->kind == FAKEAPI__RT_COLLECTION || rt->kind == FAKEAPI__RT_OBJECT ||
               rt->kind == FAKEAPI__RT_SUBRESOURCE;
    *ri = (fakeapi__reqinfo){
        .verb = api ? verb_of(req, rt) : "other",
        .sub = rt->sub,
        .group = rt->group,
        .resource = rt->resource,
        .ns = rt->ns,
        .name = rt->kind == FAKEAPI__RT_CONTROL ? "" : rt->name,
        .user_agent = req->user_agent ? req->user_agent : "",
        .token = req->token ? req->token : "",
    };
    /* A namespace object is addressed as namespaces/<name>. */
    if (!strcmp(rt->resource, "namespaces") && !rt->ns[0] && rt->name[0])
        ri->ns = rt->name;
}
