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

/*
 * The writes the trace (or the record) holds, read once: used keeps, per
 * file, how far it has been read ("<p>off") and the writes found so far
 * ("<p>writes": [verb, path, status, body or null, taken]), so that each
 * expectWrite reads only what was written since the last one.
 */
static json_t *writes_of(json_t *used, const char *file, bool record)
{
    const char *p = record ? "r" : "t";
    char k_off[8], k_writes[16];
    snprintf(k_off, sizeof k_off, "%soff", p);
    snprintf(k_writes, sizeof k_writes, "%swrites", p);
    json_t *writes = json_object_get(used, k_writes);
    if (!writes) {
        writes = json_array();
        if (!writes || json_object_set_new(used, k_writes, writes) != 0)
            return NULL;
    }
    FILE *f = fopen(file, "r");
    if (!f)
        return NULL;
    long off = (long)json_integer_value(json_object_get(used, k_off));
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    if (fseek(f, off, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    while ((n = getline(&line, &cap, f)) > 0 && line[n - 1] == '\n') {
        off += (long)n;
        json_t *j = json_loads(line, 0, NULL);
        const char *verb = json_string_value(json_object_get(j, "verb")), *path = NULL;
        int code = 0;
        json_t *body = NULL;
        char pbuf[2048];
        if (record) {
            const char *uri = json_string_value(json_object_get(j, "requestURI"));
            const char *ua = json_string_value(json_object_get(j, "userAgent"));
            if (uri && !(ua && !strcmp(ua, "fakeapi-inprocess"))) { /* not the steps' own */
                snprintf(pbuf, sizeof pbuf, "%.*s", (int)strcspn(uri, "?"), uri);
                path = pbuf;
            }
            code = (int)json_integer_value(
                json_object_get(json_object_get(j, "responseStatus"), "code"));
            body = json_object_get(j, "requestObject");
        } else if (json_is_string(json_object_get(j, "kind")) &&
                   !strcmp(json_string_value(json_object_get(j, "kind")), "request")) {
            path = json_string_value(json_object_get(j, "path"));
            code = (int)json_integer_value(json_object_get(j, "code"));
        }
        if (verb && path)
            json_array_append_new(writes, json_pack("[s, s, i, O?, b]", verb, path, code, body, 0));
        json_decref(j);
    }
    free(line);
    fclose(f);
    json_object_set_new(used, k_off, json_integer(off));
    return writes;
}

int scn__find_write(const char *trace_path, const char *record_path, const scn_step *st,
                    json_t *used, char *msg, size_t len)
{
    bool record = st->manifest && record_path;
    json_t *writes = writes_of(used, record ? record_path : trace_path, record), *w;
    char near[512] = "";
    size_t i;

    if (!writes) {
        snprintf(msg, len, "cannot read the run's %s", record ? "audit record" : "trace");
        return -1;
    }
    json_array_foreach(writes, i, w)
    {
        char at[256];
        if (json_is_true(json_array_get(w, 4)) ||
            !scn__write_matches(st, json_string_value(json_array_get(w, 0)),
                                json_string_value(json_array_get(w, 1)),
                                (int)json_integer_value(json_array_get(w, 2))))
            continue;
        if (record && !scn__body_holds(st->manifest, json_array_get(w, 3), at, sizeof at)) {
            if (!near[0])
                snprintf(near, sizeof near, "; a %s of %.200s differs at %.200s", st->verb,
                         json_string_value(json_array_get(w, 1)), at[0] ? at : "its body");
            continue;
        }
        json_array_set_new(w, 4, json_true());
        return 1;
    }
    snprintf(msg, len, "no %s of %s answered %s by a controller%s%s", st->verb, st->path,
             st->status ? "with that status" : "2xx", record ? " with the body expected" : "",
             near);
    return 0;
}

bool scn__needs_record(const scn_scenario *sc)
{
    for (size_t i = 0; i < sc->n_steps; i++)
        if (sc->steps[i].kind == SCN_STEP_EXPECT_WRITE && sc->steps[i].manifest)
            return true;
    return false;
}

int scn__fixture_status(fakeapi_server *srv, const json_t *obj, char *msg, size_t len)
{
    const json_t *status = json_object_get(obj, "status");
    const json_t *meta = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    char path[1100];
    fakeapi_error err = {0};

    if (!json_is_object(status) || json_object_size(status) == 0 ||
        !json_string_value(json_object_get(meta, "name")))
        return 0;
    if (fakeapi_path(srv, json_string_value(json_object_get(obj, "apiVersion")),
                     json_string_value(json_object_get(obj, "kind")), ns ? ns : "default",
                     json_string_value(json_object_get(meta, "name")), path, sizeof path - 8,
                     &err) < 0)
        return 0; /* the apply has said what is wrong with it */
    strcat(path, "/status");
    json_t *patch = json_pack("{s:O}", "status", status);
    char *body = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
    json_decref(patch);
    int code = 0;
    json_t *out = NULL;
    int rc = body ? fakeapi_request(srv, "PATCH", path, "application/merge-patch+json", body, &code,
                                    &out)
                  : FAKEAPI_ERR_NOMEM;
    free(body);
    if (rc < 0) {
        snprintf(msg, len, "status of %s: %s", path, fakeapi_strerror(rc));
    } else if (code >= 300 && code != 404 && code != 405) { /* no status subresource: kept */
        const char *m = json_string_value(json_object_get(out, "message"));
        snprintf(msg, len, "status of %s: %d %s", path, code, m ? m : "");
        rc = -1;
    }
    json_decref(out);
    return rc < 0 ? -1 : 0;
}
