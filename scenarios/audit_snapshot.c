/*
 * audit_snapshot.c - the objects of a cluster when an audit log starts
 * (see audit_snapshot.h): manifests as `kubectl get -A -o yaml` writes them,
 * or a fakeapi store, read through an in-process server started on a copy.
 *
 * One thread, the caller's.
 */
#include "audit_snapshot.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakeapi/fakeapi.h"
#include "kh/yaml.h"

static const char *jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* Is path a SQLite database (a fakeapi store, `fakeapi serve --db`)? */
static bool is_store(const char *path)
{
    char head[16] = {0};
    FILE *f = fopen(path, "rb");
    bool yes =
        f && fread(head, 1, sizeof head, f) == sizeof head && !memcmp(head, "SQLite format 3", 16);
    if (f)
        fclose(f);
    return yes;
}

/* GET path from srv: the answer (new), or NULL unless 200. */
static json_t *get(fakeapi_server *srv, const char *path)
{
    int status = 0;
    json_t *out = NULL;
    if (fakeapi_request(srv, "GET", path, NULL, NULL, &status, &out) != 0 || status != 200) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* Every object of every listable resource of one group version (its
 * discovery document at base) into docs, with kind and apiVersion. */
static void list_group_version(fakeapi_server *srv, const char *base, json_t *docs)
{
    json_t *rl = get(srv, base), *r;
    size_t i;
    json_array_foreach(json_object_get(rl, "resources"), i, r)
    {
        const char *name = jstr(r, "name");
        json_t *verbs = json_object_get(r, "verbs"), *v, *item;
        size_t j;
        bool listable = false;
        json_array_foreach(verbs, j, v) listable =
            listable || !strcmp(json_string_value(v), "list");
        if (!name || strchr(name, '/') || !listable)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", base, name);
        json_t *list = get(srv, path);
        json_array_foreach(json_object_get(list, "items"), j, item)
        {
            const char *iname = jstr(json_object_get(item, "metadata"), "name");
            /* the namespaces every fakeapi starts with */
            if (!strcmp(name, "namespaces") && iname &&
                (!strcmp(iname, "default") || !strcmp(iname, "kube-system") ||
                 !strcmp(iname, "kube-public")))
                continue;
            if (!json_object_get(item, "kind"))
                json_object_set_new(item, "kind", json_string(jstr(r, "kind")));
            if (!json_object_get(item, "apiVersion"))
                json_object_set_new(item, "apiVersion", json_string(jstr(rl, "groupVersion")));
            json_array_append(docs, item);
        }
        json_decref(list);
    }
    json_decref(rl);
}

/* The objects of a fakeapi store, read from a copy (the store is never
 * changed): a new array, or NULL with *err filled. */
static json_t *load_store(const char *snapshot, scn_error *err)
{
    char tmp[] = "/tmp/scn-snapshot-XXXXXX";
    int fd = mkstemp(tmp);
    FILE *in = fopen(snapshot, "rb"), *out = fd >= 0 ? fdopen(fd, "wb") : NULL;
    char buf[65536];
    size_t n;
    bool ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    if (in)
        fclose(in);
    if (out)
        ok = fclose(out) == 0 && ok;
    else if (fd >= 0)
        close(fd);
    fakeapi_options fo = {.no_http = true, .seed = 1, .db_path = tmp};
    fakeapi_server *srv = NULL;
    json_t *docs = NULL;
    if (ok && fakeapi_start(&fo, &srv) == 0) {
        docs = json_array();
        list_group_version(srv, "/api/v1", docs);
        json_t *groups = get(srv, "/apis"), *g;
        size_t i;
        json_array_foreach(json_object_get(groups, "groups"), i, g)
        {
            const char *gv = jstr(json_object_get(g, "preferredVersion"), "groupVersion");
            char base[300];
            if (!gv)
                continue;
            snprintf(base, sizeof base, "/apis/%s", gv);
            list_group_version(srv, base, docs);
        }
        json_decref(groups);
        fakeapi_stop(srv);
    }
    unlink(tmp);
    char side[sizeof tmp + 8];
    snprintf(side, sizeof side, "%s-wal", tmp);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", tmp);
    unlink(side);
    if (!docs && err) {
        memset(err, 0, sizeof *err);
        err->code = SCN_ERR_IO;
        snprintf(err->file, sizeof err->file, "%s", snapshot);
        snprintf(err->message, sizeof err->message,
                 "cannot read this fakeapi store (a copy of it would not start)");
    }
    return docs;
}

int scn__snapshot_read(const char *path, json_t **objects, scn_error *err)
{
    kh_yaml_error yerr = {0};
    json_t *docs = NULL, *doc, *flat = json_array();
    size_t i;

    if (!flat)
        return SCN_ERR_NOMEM;
    if (is_store(path)) {
        json_t *objs = load_store(path, err);
        if (!objs) {
            json_decref(flat);
            return SCN_ERR_IO;
        }
        docs = json_pack("[{s:s, s:s, s:o}]", "apiVersion", "v1", "kind", "List", "items", objs);
    } else if (kh_yaml_load_file(path, &docs, &yerr) != 0) {
        json_decref(flat);
        if (err) {
            memset(err, 0, sizeof *err);
            err->code = yerr.line ? SCN_ERR_INPUT : SCN_ERR_IO;
            snprintf(err->file, sizeof err->file, "%s", path);
            err->line = yerr.line;
            snprintf(err->message, sizeof err->message, "%s", yerr.message);
        }
        return yerr.line ? SCN_ERR_INPUT : SCN_ERR_IO;
    }
    json_array_foreach(docs, i, doc)
    {
        json_t *items = json_object_get(doc, "items"), *item;
        size_t j;
        if (json_is_null(doc))
            continue;
        if (json_is_array(items)) {
            json_array_foreach(items, j, item) json_array_append(flat, item);
        } else {
            json_array_append(flat, doc);
        }
    }
    json_decref(docs);
    json_array_foreach(flat, i, doc)
    {
        if (json_is_object(doc) && jstr(doc, "kind") && jstr(doc, "apiVersion") &&
            jstr(json_object_get(doc, "metadata"), "name"))
            continue;
        if (err) {
            memset(err, 0, sizeof *err);
            err->code = SCN_ERR_INPUT;
            snprintf(err->file, sizeof err->file, "%s", path);
            snprintf(err->field, sizeof err->field, "items[%zu]", i);
            snprintf(err->message, sizeof err->message,
                     "not an object with apiVersion, kind and metadata.name");
        }
        json_decref(flat);
        return SCN_ERR_INPUT;
    }
    *objects = flat;
    return 0;
}
