/*
 * replay_run.c - running the replay steps (scenario_replay.c parses them):
 * a `request` step sends its request to the run's server in-process; an
 * `expectWrite` step looks for a matching write among the requests the
 * run's trace holds.
 *
 * Called by runner.c on the scenario's driver thread, at quiescent points.
 */
#include "replay_run.h"
#include "scn_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The namespace a path names ("/api/v1/namespaces/NS/..."), into buf. */
static const char *path_ns(const char *path, char *buf, size_t len)
{
    const char *at = strstr(path, "/namespaces/");
    if (!at)
        return NULL;
    at += strlen("/namespaces/");
    snprintf(buf, len, "%.*s", (int)strcspn(at, "/?"), at);
    return buf;
}

json_t *scn__bind_owners(fakeapi_server *srv, const json_t *obj, const char *ns)
{
    json_t *c = json_deep_copy(obj), *meta = json_object_get(c, "metadata");
    json_t *refs = json_object_get(meta, "ownerReferences"), *ref;
    const char *own_ns = json_string_value(json_object_get(meta, "namespace"));
    size_t i;

    if (own_ns)
        ns = own_ns;
    json_array_foreach(refs, i, ref)
    {
        const char *av = json_string_value(json_object_get(ref, "apiVersion"));
        const char *kind = json_string_value(json_object_get(ref, "kind"));
        const char *name = json_string_value(json_object_get(ref, "name"));
        json_t *owner = NULL;
        if (!av || !kind || !name)
            continue;
        /* namespaced owners share the dependent's namespace; cluster-scoped ones have none */
        if (fakeapi_get(srv, av, kind, ns, name, &owner, NULL) != 0 &&
            fakeapi_get(srv, av, kind, NULL, name, &owner, NULL) != 0)
            continue;
        json_t *uid = json_object_get(json_object_get(owner, "metadata"), "uid");
        if (json_is_string(uid))
            json_object_set(ref, "uid", uid);
        json_decref(owner);
    }
    return c;
}

/* The stored object's resourceVersion into body (the object at path, read
 * now); left alone if it cannot be read. */
static void set_current_rv(fakeapi_server *srv, const char *path, json_t *body)
{
    char get[2048];
    int status = 0;
    json_t *cur = NULL;

    snprintf(get, sizeof get, "%.*s", (int)strcspn(path, "?"), path);
    if (fakeapi_request(srv, "GET", get, NULL, NULL, &status, &cur) == 0 && status == 200) {
        json_t *rv = json_object_get(json_object_get(cur, "metadata"), "resourceVersion");
        json_t *meta = json_object_get(body, "metadata");
        if (json_is_string(rv) && json_is_object(meta))
            json_object_set(meta, "resourceVersion", rv);
    }
    json_decref(cur);
}

int scn__run_request(fakeapi_server *srv, const scn_step *st, char *msg, size_t len)
{
    char nsbuf[256];
    json_t *bound = NULL;
    char *body = NULL;

    if (json_is_object(st->manifest)) {
        bound = scn__bind_owners(srv, st->manifest, path_ns(st->path, nsbuf, sizeof nsbuf));
        if (bound && st->current_rv)
            set_current_rv(srv, st->path, bound);
        body = bound ? json_dumps(bound, JSON_COMPACT) : NULL;
        json_decref(bound);
    } else if (st->manifest) {
        body = json_dumps(st->manifest, JSON_COMPACT);
    }
    int status = 0;
    json_t *out = NULL;
    int rc;

    if (st->manifest && !body) {
        snprintf(msg, len, "request: out of memory");
        return -1;
    }
    rc = fakeapi_request(srv, st->method, st->path,
                         st->content_type ? st->content_type : "application/json", body, &status,
                         &out);
    free(body);
    if (rc < 0) {
        snprintf(msg, len, "request %s %s: %s", st->method, st->path, fakeapi_strerror(rc));
    } else if (st->status ? status != st->status : (status < 200 || status > 299)) {
        const char *m = json_string_value(json_object_get(out, "message"));
        if (st->status)
            snprintf(msg, len, "request %s %s: expected status %d, got %d%s%s", st->method,
                     st->path, st->status, status, m ? ": " : "", m ? m : "");
        else
            snprintf(msg, len, "request %s %s: %d%s%s", st->method, st->path, status, m ? " " : "",
                     m ? m : "");
        rc = -1;
    }
    json_decref(out);
    return rc;
}

/* A write in the audit log the run records (bodies): the request line's
 * verb, path and status, then its body. */
static int find_in_record(const char *record_path, const scn_step *st, json_t *used, char *msg,
                          size_t len)
{
    FILE *f = fopen(record_path, "r");
    char *line = NULL, near[512] = "";
    size_t cap = 0;
    long n = 0;
    int found = 0;

    if (!f) {
        snprintf(msg, len, "cannot read the run's audit record");
        return -1;
    }
    while (!found && getline(&line, &cap, f) > 0) {
        char key[32], path[2048], at[256];
        json_t *ev;
        const char *uri, *ua;
        n++;
        snprintf(key, sizeof key, "r%ld", n);
        if (json_object_get(used, key))
            continue;
        ev = json_loads(line, 0, NULL);
        uri = json_string_value(json_object_get(ev, "requestURI"));
        ua = json_string_value(json_object_get(ev, "userAgent"));
        if (!uri || (ua && !strcmp(ua, "fakeapi-inprocess"))) { /* the steps' own */
            json_decref(ev);
            continue;
        }
        snprintf(path, sizeof path, "%.*s", (int)strcspn(uri, "?"), uri);
        if (scn__write_matches(st, json_string_value(json_object_get(ev, "verb")), path,
                               (int)json_integer_value(json_object_get(
                                   json_object_get(ev, "responseStatus"), "code")))) {
            if (scn__body_holds(st->manifest, json_object_get(ev, "requestObject"), at,
                                sizeof at)) {
                found = 1;
                json_object_set_new(used, key, json_true());
            } else if (!near[0]) {
                snprintf(near, sizeof near, "; a %s of %.200s differs at %.200s", st->verb, path,
                         at[0] ? at : "its body");
            }
        }
        json_decref(ev);
    }
    free(line);
    fclose(f);
    if (!found)
        snprintf(msg, len, "no %s of %s answered %s by a controller with the body expected%s",
                 st->verb, st->path, st->status ? "with that status" : "2xx", near);
    return found;
}

int scn__find_write(const char *trace_path, const char *record_path, const scn_step *st,
                    json_t *used, char *msg, size_t len)
{
    if (st->manifest && record_path)
        return find_in_record(record_path, st, used, msg, len);
    FILE *f = fopen(trace_path, "r");
    char *line = NULL;
    size_t cap = 0;
    long n = 0;
    int found = 0;

    if (!f) {
        snprintf(msg, len, "cannot read the run's trace");
        return -1;
    }
    while (!found && getline(&line, &cap, f) > 0) {
        char key[32];
        json_t *j;
        n++;
        snprintf(key, sizeof key, "%ld", n);
        if (json_object_get(used, key) || !strstr(line, "\"kind\":\"request\""))
            continue;
        j = json_loads(line, 0, NULL);
        if (j && scn__write_matches(st, json_string_value(json_object_get(j, "verb")),
                                    json_string_value(json_object_get(j, "path")),
                                    (int)json_integer_value(json_object_get(j, "code")))) {
            found = 1;
            json_object_set_new(used, key, json_true());
        }
        json_decref(j);
    }
    free(line);
    fclose(f);
    if (!found)
        snprintf(msg, len, "no %s of %s answered %s by a controller", st->verb, st->path,
                 st->status ? "with that status" : "2xx");
    return found;
}

bool scn__needs_record(const scn_scenario *sc)
{
    for (size_t i = 0; i < sc->n_steps; i++)
        if (sc->steps[i].kind == SCN_STEP_EXPECT_WRITE && sc->steps[i].manifest)
            return true;
    return false;
}
