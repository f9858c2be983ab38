/*
 * verbs_sub.c - the /status and /scale subresources.
 *
 * /status reads the whole object and writes only .status (verbs_write.c does
 * the scoping). /scale presents an autoscaling/v1 Scale built from the paths
 * the registry names (.spec.replicas, .status.replicas, the selector) and
 * writes back only the desired replica count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objmeta.h"
#include "patch.h"
#include "verbs.h"

/* Follow ".a.b.c" from obj. Borrowed, or NULL. */
static json_t *path_get(const json_t *obj, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path[0] == '.' ? path + 1 : path);
    json_t *v = (json_t *)obj;
    for (char *save = NULL, *part = strtok_r(buf, ".", &save); part && v;
         part = strtok_r(NULL, ".", &save))
        v = json_object_get(v, part);
    return v;
}

/* Set ".a.b.c" in obj, creating objects on the way. */
static int path_set(json_t *obj, const char *path, json_t *value)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path[0] == '.' ? path + 1 : path);
    char *last = strrchr(buf, '.');
    json_t *parent = obj;
    if (last) {
        *last = '\0';
        for (char *save = NULL, *part = strtok_r(buf, ".", &save); part;
             part = strtok_r(NULL, ".", &save)) {
            json_t *next = json_object_get(parent, part);
            if (!json_is_object(next)) {
                next = json_object();
                json_object_set_new(parent, part, next);
            }
            parent = next;
        }
    }
    return json_object_set_new(parent, last ? last + 1 : buf, value);
}

/* A LabelSelector object as the selector string a Scale carries. */
static json_t *selector_string(const json_t *sel)
{
    if (json_is_string(sel) || !sel)
        return sel ? json_incref((json_t *)sel) : json_string("");
    char out[2048] = "";
    size_t off = 0;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(sel, "matchLabels"), k, v)
    {
        off += (size_t)snprintf(out + off, off < sizeof out ? sizeof out - off : 0, "%s%s=%s",
                                off ? "," : "", k, json_string_value(v));
    }
    return json_string(off < sizeof out ? out : "");
}

static json_t *scale_of(const fakeapi__resource *res, const json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    json_t *spec_r = path_get(obj, res->scale_spec);
    json_t *status_r = res->scale_status ? path_get(obj, res->scale_status) : NULL;
    json_t *sel = res->scale_selector ? path_get(obj, res->scale_selector) : NULL;
    json_t *scale = json_pack(
        "{s:s, s:s, s:{s:O?, s:O?, s:O?, s:O?, s:O?}, s:{s:I}, s:{s:I, s:o}}", "kind", "Scale",
        "apiVersion", "autoscaling/v1", "metadata", "name", json_object_get(meta, "name"),
        "namespace", json_object_get(meta, "namespace"), "uid", json_object_get(meta, "uid"),
        "resourceVersion", json_object_get(meta, "resourceVersion"), "creationTimestamp",
        json_object_get(meta, "creationTimestamp"), "spec", "replicas",
        (json_int_t)json_integer_value(spec_r), "status", "replicas",
        (json_int_t)json_integer_value(status_r), "selector", selector_string(sel));
    return scale;
}

/* The new Scale a PUT or PATCH asks for, or NULL having answered. */
static json_t *requested_scale(fakeapi__ctx *c, const json_t *cur_scale)
{
    if (!strcmp(c->req->method, "PUT"))
        return fakeapi__body_object(c);
    json_t *patch = json_loadb(c->req->body, c->req->body_len, 0, NULL), *out = NULL;
    int rc = -1;
    char err[256] = "";
    if (!patch)
        snprintf(err, sizeof err, "error decoding patch");
    else if (fakeapi__media_is(c->req->content_type, "application/json-patch+json"))
        rc = fakeapi__json_patch(cur_scale, patch, &out, err, sizeof err);
    else
        rc = fakeapi__merge_patch(cur_scale, patch, &out);
    json_decref(patch);
    if (rc < 0) {
        fakeapi__resp_error(c->resp, rc == -2 ? 422 : 400, NULL, NULL, "%s", err);
        return NULL;
    }
    return out;
}

static void do_scale(fakeapi__ctx *c, fakeapi__txn *t, json_t *cur)
{
    json_t *scale = scale_of(c->res, cur);
    if (!strcmp(c->req->method, "GET")) {
        fakeapi__txn_abort(t);
        json_decref(cur);
        fakeapi__resp_json(c->resp, 200, scale);
        return;
    }
    json_t *want = requested_scale(c, scale);
    json_decref(scale);
    json_t *replicas = json_object_get(json_object_get(want, "spec"), "replicas");
    if (want && !json_is_integer(replicas)) {
        fakeapi__resp_error(c->resp, 422, "Invalid", NULL,
                            "Scale.autoscaling \"%s\" is invalid: spec.replicas: Required value",
                            c->rt->name);
    } else if (want && json_integer_value(replicas) < 0) {
        fakeapi__resp_error(c->resp, 422, "Invalid", NULL,
                            "Scale.autoscaling \"%s\" is invalid: spec.replicas: Invalid value: "
                            "%lld: must be greater than or equal to 0",
                            c->rt->name, (long long)json_integer_value(replicas));
    } else if (want) {
        long long rv = fakeapi__meta_rv(want);
        if (rv > 0 && rv != fakeapi__meta_rv(cur)) {
            char q[300];
            fakeapi__resource_qualified(c->res, q, sizeof q);
            fakeapi__resp_error(c->resp, 409, "Conflict", fakeapi__details(c->res, c->rt->name),
                                "Operation cannot be fulfilled on %s \"%s\": the object has been "
                                "modified; please apply your changes to the latest version and "
                                "try again",
                                q, c->rt->name);
        } else {
            json_t *next = json_deep_copy(cur);
            path_set(next, c->res->scale_spec, json_incref(replicas));
            json_decref(want);
            /* finish_update answers with the object; a Scale is expected. */
            fakeapi__finish_update(c, t, cur, next, NULL);
            if (c->resp->status == 200) {
                json_t *obj = json_loadb(c->resp->body, c->resp->body_len, 0, NULL);
                fakeapi__resp_json(c->resp, 200, scale_of(c->res, obj));
                json_decref(obj);
            }
            return;
        }
    }
    json_decref(want);
    fakeapi__txn_abort(t);
    json_decref(cur);
}

void fakeapi__do_subresource(fakeapi__ctx *c)
{
    const char *m = c->req->method;
    bool scale = !strcmp(c->rt->sub, "scale");
    if (!scale) {
        if (!strcmp(m, "GET"))
            fakeapi__do_get(c);
        else if (!strcmp(m, "PUT"))
            fakeapi__do_update(c);
        else if (!strcmp(m, "PATCH"))
            fakeapi__do_patch(c);
        else
            fakeapi__resp_error(c->resp, 405, "MethodNotAllowed", NULL,
                                "the server does not allow this method on the requested "
                                "resource");
        return;
    }
    if (strcmp(m, "GET") && strcmp(m, "PUT") && strcmp(m, "PATCH")) {
        fakeapi__resp_error(c->resp, 405, "MethodNotAllowed", NULL,
                            "the server does not allow this method on the requested resource");
        return;
    }
    fakeapi__txn t;
    if (fakeapi__txn_begin(&t, c->srv) < 0) {
        fakeapi__storage_error(c);
        return;
    }
    json_t *cur = NULL;
    int rc = fakeapi__store_get(c->srv->store, c->res->store_key, c->ns, c->rt->name, &cur);
    if (rc != 0) {
        fakeapi__txn_abort(&t);
        if (rc == 1)
            fakeapi__not_found(c, c->rt->name);
        else
            fakeapi__storage_error(c);
        return;
    }
    do_scale(c, &t, cur);
}
