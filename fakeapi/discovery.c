/*
 * discovery.c - the discovery documents (/version, /api, /apis and their
 * resource lists) built from the registry. OpenAPI is in openapi.c.
 *
 * Every call takes one snapshot of the registry (fakeapi__registry_all), builds
 * its document from that snapshot alone and releases it, so a document is
 * always self-consistent even while CRDs come and go. No state is kept here.
 *
 * Error handling: documents are built with jansson calls that accept NULL
 * (json_object_set_new releases its value when the target is NULL, and fails
 * when the value is NULL), so a builder collects failures in one flag and
 * drops the whole document at the end instead of checking every call.
 */
#include "discovery.h"
#include "types.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small builders --------------------------------------------------------- */

/* json_object_set_new, remembering a failure in *bad. */
static void put(json_t *obj, const char *key, json_t *value, bool *bad)
{
    if (json_object_set_new(obj, key, value) != 0)
        *bad = true;
}

static void push(json_t *arr, json_t *value, bool *bad)
{
    if (json_array_append_new(arr, value) != 0)
        *bad = true;
}

/* Drop a document whose construction failed somewhere. */
static json_t *finish(json_t *doc, bool bad)
{
    if (bad) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

static json_t *str_array(const char *const *v, size_t n, bool *bad)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        push(a, json_string(v[i]), bad);
    if (!a)
        *bad = true;
    return a;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* ---- /version, /api ------------------------------------------------------------ */

json_t *fakeapi__disc_version(void)
{
    /* Fixed values: tests compare documents, and kubectl only parses gitVersion. */
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "major", "1", "minor", "32",
                     "gitVersion", "v1.32.0-fakeapi", "gitCommit",
                     "0000000000000000000000000000000000000000", "gitTreeState", "clean",
                     "buildDate", "2024-12-11T00:00:00Z", "goVersion", "n/a", "compiler", "gcc",
                     "platform", "linux/amd64");
}

json_t *fakeapi__disc_api(void)
{
    return json_pack("{s:s, s:[s], s:[{s:s, s:s}]}", "kind", "APIVersions", "versions", "v1",
                     "serverAddressByClientCIDRs", "clientCIDR", "0.0.0.0/0", "serverAddress",
                     "127.0.0.1");
}

/* ---- groups ------------------------------------------------------------------------ */

/* True when an entry before index i already has the same group (and version, if given). */
static bool seen_before(fakeapi__resource **all, size_t i, const char *group, const char *version)
{
    for (size_t j = 0; j < i; j++)
        if (!strcmp(all[j]->group, group) && (!version || !strcmp(all[j]->version, version)))
            return true;
    return false;
}

/*
 * The APIGroup document for group from a snapshot, NULL if no entry serves it.
 * with_kind adds kind/apiVersion, which only the stand-alone /apis/<g> carries.
 */
static json_t *group_doc(fakeapi__resource **all, size_t n, const char *group, bool with_kind)
{
    bool bad = false;
    json_t *versions = json_array();
    const char *preferred = NULL, *first = NULL;
    for (size_t i = 0; i < n; i++) {
        fakeapi__resource *r = all[i];
        if (strcmp(r->group, group) != 0)
            continue;
        if (!first)
            first = r->version;
        if (r->storage_version && !preferred)
            preferred = r->version;
        if (seen_before(all, i, group, r->version))
            continue;
        push(versions,
             json_pack("{s:s, s:s}", "groupVersion", r->group_version, "version", r->version),
             &bad);
    }
    if (!first) {
        json_decref(versions);
        return NULL;
    }
    if (!preferred)
        preferred = first;
    json_t *g = json_object();
    if (with_kind) {
        put(g, "kind", json_string("APIGroup"), &bad);
        put(g, "apiVersion", json_string("v1"), &bad);
    }
    put(g, "name", json_string(group), &bad);
    put(g, "versions", versions, &bad);
    char *gv = xasprintf("%s/%s", group, preferred);
    put(g, "preferredVersion", json_pack("{s:s?, s:s}", "groupVersion", gv, "version", preferred),
        &bad);
    free(gv);
    return finish(g, bad || !g);
}

json_t *fakeapi__disc_apis(fakeapi__registry *reg)
{
    size_t n = 0;
    fakeapi__resource **all = fakeapi__registry_all(reg, &n);
    if (!all)
        return NULL;
    bool bad = false;
    json_t *groups = json_array();
    for (size_t i = 0; i < n; i++) {
        const char *g = all[i]->group;
        if (!*g || seen_before(all, i, g, NULL))
            continue;
        push(groups, group_doc(all, n, g, false), &bad);
    }
    fakeapi__registry_release(all, n);
    json_t *doc =
        json_pack("{s:s, s:s, s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups", groups);
    return finish(doc, bad || !doc);
}

json_t *fakeapi__disc_group(fakeapi__registry *reg, const char *group)
{
    if (!group || !*group)
        return NULL;
    size_t n = 0;
    fakeapi__resource **all = fakeapi__registry_all(reg, &n);
    if (!all)
        return NULL;
    json_t *doc = group_doc(all, n, group, true);
    fakeapi__registry_release(all, n);
    return doc;
}

/* ---- resource lists ---------------------------------------------------------------- */

static const char *const sub_verbs[] = {"get", "patch", "update"};

/* A comma-separated list ("get,list") as a JSON array. */
static json_t *csv_array(const char *csv, bool *bad)
{
    json_t *a = json_array();
    for (const char *p = csv; a && p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        push(a, json_stringn(p, len), bad);
        p = comma ? comma + 1 : NULL;
    }
    if (!a)
        *bad = true;
    return a;
}

static json_t *resource_entry(const fakeapi__resource *r, bool *bad)
{
    json_t *e = json_object();
    put(e, "name", json_string(r->plural), bad);
    put(e, "singularName", json_string(r->singular), bad);
    put(e, "namespaced", json_boolean(r->namespaced), bad);
    put(e, "kind", json_string(r->kind), bad);
    put(e, "verbs", csv_array(r->verbs, bad), bad);
    /* Clients treat a present-but-empty list like an absent one; real servers omit it. */
    if (json_array_size(r->short_names))
        put(e, "shortNames", json_deep_copy(r->short_names), bad);
    if (json_array_size(r->categories))
        put(e, "categories", json_deep_copy(r->categories), bad);
    if (!e)
        *bad = true;
    return e;
}

static json_t *subresource_entry(const fakeapi__resource *r, const char *sub, bool *bad)
{
    json_t *e = json_object();
    char *name = xasprintf("%s/%s", r->plural, sub);
    put(e, "name", json_string(name), bad);
    free(name);
    put(e, "singularName", json_string(""), bad);
    put(e, "namespaced", json_boolean(r->namespaced), bad);
    if (!strcmp(sub, "scale")) {
        put(e, "group", json_string("autoscaling"), bad);
        put(e, "version", json_string("v1"), bad);
        put(e, "kind", json_string("Scale"), bad);
    } else {
        put(e, "kind", json_string(r->kind), bad);
    }
    put(e, "verbs", str_array(sub_verbs, sizeof sub_verbs / sizeof sub_verbs[0], bad), bad);
    if (!e)
        *bad = true;
    return e;
}

/* A built-in's subresource as the type tables give it ("pods/eviction" is a policy/v1 Eviction). */
static json_t *table_subresource_entry(const fakeapi__resource *r, const fakeapi__tres *t,
                                       bool *bad)
{
    json_t *e = json_object();
    put(e, "name", json_string(t->resource), bad);
    put(e, "singularName", json_string(""), bad);
    put(e, "namespaced", json_boolean(r->namespaced), bad);
    if (strcmp(t->kind_group_version, r->group_version)) {
        const char *slash = strchr(t->kind_group_version, '/');
        put(e, "group",
            slash ? json_stringn(t->kind_group_version, (size_t)(slash - t->kind_group_version))
                  : json_string(""),
            bad);
        put(e, "version", json_string(slash ? slash + 1 : t->kind_group_version), bad);
    }
    put(e, "kind", json_string(t->kind), bad);
    put(e, "verbs", csv_array(t->verbs, bad), bad);
    if (!e)
        *bad = true;
    return e;
}

static void push_subresources(json_t *resources, const fakeapi__resource *r, bool *bad)
{
    if (!r->row) {
        if (r->subresources & FAKEAPI__SUB_STATUS)
            push(resources, subresource_entry(r, "status", bad), bad);
        if (r->subresources & FAKEAPI__SUB_SCALE)
            push(resources, subresource_entry(r, "scale", bad), bad);
        return;
    }
    size_t plen = strlen(r->plural);
    for (size_t i = 0; i < fakeapi__ntress; i++) {
        const fakeapi__tres *t = &fakeapi__tress[i];
        if (!strcmp(t->group, r->group) && !strcmp(t->version, r->version) &&
            !strncmp(t->resource, r->plural, plen) && t->resource[plen] == '/')
            push(resources, table_subresource_entry(r, t, bad), bad);
    }
}

json_t *fakeapi__disc_resources(fakeapi__registry *reg, const char *group, const char *version)
{
    if (!group || !version)
        return NULL;
    size_t n = 0;
    fakeapi__resource **all = fakeapi__registry_all(reg, &n);
    if (!all)
        return NULL;
    bool bad = false, found = false;
    const char *gv = NULL;
    json_t *resources = json_array();
    for (size_t i = 0; i < n; i++) {
        fakeapi__resource *r = all[i];
        if (strcmp(r->group, group) != 0 || strcmp(r->version, version) != 0)
            continue;
        found = true;
        gv = r->group_version;
        push(resources, resource_entry(r, &bad), &bad);
        push_subresources(resources, r, &bad);
    }
    json_t *doc = NULL;
    if (found)
        doc = json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList", "apiVersion", "v1",
                        "groupVersion", gv, "resources", resources);
    else
        json_decref(resources);
    fakeapi__registry_release(all, n);
    return finish(doc, bad || !doc);
}
