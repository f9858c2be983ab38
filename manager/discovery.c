/*
 * discovery.c - the kind -> resource cache.
 *
 * DESIGN
 * One mutex (mu) guards the list of cached group-versions; it is taken to
 * look up or to swap in a freshly fetched entry, never across HTTP. An entry
 * is immutable once published: a refresh builds a new one and replaces the
 * old under mu, so lookups copy out a ctrl_resource_info under the lock and
 * release it at once.
 *
 * Parsed documents are also remembered once per process (memo), by
 * group-version and the document's exact bytes: a client that reads a
 * document byte-identical to one already parsed (every manager of a
 * scenario run, run after run) copies the parsed entry instead of parsing
 * it again. The request is still made; only the parse is saved. The memo
 * holds at most MEMO_MAX documents (the oldest goes) and lives until the
 * process ends.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discovery.h"
#include "error_int.h"

#define MEMO_MAX 32

typedef struct gv_entry {
    struct gv_entry *next;
    char group[254];
    char version[64];
    size_t n;
    ctrl_resource_info *res;
    char (*singular)[254]; /* singularName per resource, "" if none */
} gv_entry;

struct ctrl__discovery {
    atomic_int refs;
    pthread_mutex_t mu;
    gv_entry *head;
};

static void entry_free(gv_entry *e)
{
    if (!e)
        return;
    free(e->res);
    free(e->singular);
    free(e);
}

int ctrl__discovery_new(ctrl__discovery **out)
{
    ctrl__discovery *d = calloc(1, sizeof *d);
    if (!d)
        return CTRL_ERR_NOMEM;
    atomic_init(&d->refs, 1);
    pthread_mutex_init(&d->mu, NULL);
    *out = d;
    return 0;
}

ctrl__discovery *ctrl__discovery_ref(ctrl__discovery *d)
{
    atomic_fetch_add(&d->refs, 1);
    return d;
}

static void drop_all(gv_entry *e)
{
    while (e) {
        gv_entry *next = e->next;
        entry_free(e);
        e = next;
    }
}

void ctrl__discovery_unref(ctrl__discovery *d)
{
    if (!d || atomic_fetch_sub(&d->refs, 1) != 1)
        return;
    drop_all(d->head);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

void ctrl__discovery_invalidate(ctrl__discovery *d)
{
    pthread_mutex_lock(&d->mu);
    gv_entry *old = d->head;
    d->head = NULL;
    pthread_mutex_unlock(&d->mu);
    drop_all(old);
}

int ctrl__split_api_version(const char *api_version, char *group, size_t gcap, char *version,
                            size_t vcap)
{
    if (!api_version || !*api_version)
        return CTRL_ERR_ARG;
    const char *slash = strchr(api_version, '/');
    const char *v = slash ? slash + 1 : api_version;
    size_t glen = slash ? (size_t)(slash - api_version) : 0;
    if ((slash && (glen == 0 || strchr(v, '/'))) || !*v || glen >= gcap || strlen(v) >= vcap)
        return CTRL_ERR_ARG;
    memcpy(group, api_version, glen);
    group[glen] = '\0';
    snprintf(version, vcap, "%s", v);
    return 0;
}

static bool is_resource_name(const char *kind)
{
    return islower((unsigned char)kind[0]);
}

/* Find kind (or resource) in e; copy it out. Called with mu held. */
static bool entry_find(const gv_entry *e, const char *kind, ctrl_resource_info *out)
{
    bool by_resource = is_resource_name(kind);
    for (size_t i = 0; i < e->n; i++) {
        bool hit = by_resource
                       ? (!strcmp(e->res[i].resource, kind) || !strcmp(e->singular[i], kind))
                       : !strcmp(e->res[i].kind, kind);
        if (hit) {
            *out = e->res[i];
            return true;
        }
    }
    return false;
}

/* Look in the cache: 1 found, 0 group-version cached without it, -1 not cached. */
static int cache_find(ctrl__discovery *d, const char *group, const char *version, const char *kind,
                      ctrl_resource_info *out)
{
    int found = -1;
    pthread_mutex_lock(&d->mu);
    for (gv_entry *e = d->head; e; e = e->next) {
        if (!strcmp(e->group, group) && !strcmp(e->version, version)) {
            found = entry_find(e, kind, out) ? 1 : 0;
            break;
        }
    }
    pthread_mutex_unlock(&d->mu);
    return found;
}

/* Publish e, replacing an older entry for the same group-version. */
static void cache_put(ctrl__discovery *d, gv_entry *e)
{
    gv_entry *old = NULL;
    pthread_mutex_lock(&d->mu);
    for (gv_entry **pp = &d->head; *pp; pp = &(*pp)->next) {
        if (!strcmp((*pp)->group, e->group) && !strcmp((*pp)->version, e->version)) {
            old = *pp;
            e->next = old->next;
            *pp = e;
            break;
        }
    }
    if (!old) {
        e->next = d->head;
        d->head = e;
    }
    pthread_mutex_unlock(&d->mu);
    entry_free(old);
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

/* Build an entry from an APIResourceList. */
static int parse_list(json_t *doc, const char *group, const char *version, gv_entry **out,
                      ctrl_error *err)
{
    json_t *arr = json_object_get(doc, "resources");
    if (!json_is_array(arr))
        return ctrl__error_set(err, CTRL_ERR_PROTOCOL,
                               "discovery document for %s%s%s has no resources list", group,
                               *group ? "/" : "", version);
    size_t total = json_array_size(arr);
    gv_entry *e = calloc(1, sizeof *e);
    if (e) {
        e->res = calloc(total ? total : 1, sizeof *e->res);
        e->singular = calloc(total ? total : 1, sizeof *e->singular);
    }
    if (!e || !e->res || !e->singular) {
        entry_free(e);
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    }
    copy_str(e->group, sizeof e->group, group);
    copy_str(e->version, sizeof e->version, version);
    size_t i;
    json_t *r;
    json_array_foreach(arr, i, r)
    {
        const char *name = json_string_value(json_object_get(r, "name"));
        const char *kind = json_string_value(json_object_get(r, "kind"));
        if (!name || !kind || strchr(name, '/'))
            continue;
        ctrl_resource_info *ri = &e->res[e->n];
        copy_str(ri->group, sizeof ri->group, group);
        copy_str(ri->version, sizeof ri->version, version);
        copy_str(ri->resource, sizeof ri->resource, name);
        copy_str(ri->kind, sizeof ri->kind, kind);
        ri->namespaced = json_is_true(json_object_get(r, "namespaced"));
        copy_str(e->singular[e->n], sizeof e->singular[0],
                 json_string_value(json_object_get(r, "singularName")));
        e->n++;
    }
    /* Second pass: subresources ("pods/status") mark their parent. */
    json_array_foreach(arr, i, r)
    {
        const char *name = json_string_value(json_object_get(r, "name"));
        const char *slash = name ? strchr(name, '/') : NULL;
        if (!slash || strcmp(slash, "/status") != 0)
            continue;
        for (size_t k = 0; k < e->n; k++) {
            size_t l = strlen(e->res[k].resource);
            if (l == (size_t)(slash - name) && !strncmp(e->res[k].resource, name, l))
                e->res[k].has_status = true;
        }
    }
    *out = e;
    return 0;
}

/* ---- the per-process memo of parsed documents ---- */

typedef struct memo_doc {
    struct memo_doc *next;
    uint64_t hash;
    size_t len;
    char *body;
    gv_entry *parsed; /* its own copy, never published */
} memo_doc;

static pthread_mutex_t memo_mu = PTHREAD_MUTEX_INITIALIZER;
static memo_doc *memo_head; /* newest first */
static size_t memo_count;

static uint64_t body_hash(const char *p, size_t n)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

/* A copy of e (without its link), or NULL when out of memory. */
static gv_entry *entry_copy(const gv_entry *e)
{
    gv_entry *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    *c = *e;
    c->next = NULL;
    size_t n = e->n ? e->n : 1;
    c->res = malloc(n * sizeof *c->res);
    c->singular = malloc(n * sizeof *c->singular);
    if (!c->res || !c->singular) {
        entry_free(c);
        return NULL;
    }
    memcpy(c->res, e->res, e->n * sizeof *c->res);
    memcpy(c->singular, e->singular, e->n * sizeof *c->singular);
    return c;
}

/* The parsed entry of a document seen before, copied; NULL if unknown. */
static gv_entry *memo_find(const char *group, const char *version, const char *body, size_t len,
                           uint64_t hash)
{
    gv_entry *hit = NULL;
    pthread_mutex_lock(&memo_mu);
    for (memo_doc *m = memo_head; m; m = m->next) {
        if (m->hash == hash && m->len == len && !strcmp(m->parsed->group, group) &&
            !strcmp(m->parsed->version, version) && !memcmp(m->body, body, len)) {
            hit = entry_copy(m->parsed);
            break;
        }
    }
    pthread_mutex_unlock(&memo_mu);
    return hit;
}

/* Remember a freshly parsed document (best effort: nothing on no memory). */
static void memo_put(const gv_entry *e, const char *body, size_t len, uint64_t hash)
{
    memo_doc *m = calloc(1, sizeof *m);
    if (!m || !(m->body = malloc(len ? len : 1)) || !(m->parsed = entry_copy(e))) {
        if (m)
            free(m->body);
        free(m);
        return;
    }
    memcpy(m->body, body, len);
    m->len = len;
    m->hash = hash;
    memo_doc *old = NULL;
    pthread_mutex_lock(&memo_mu);
    m->next = memo_head;
    memo_head = m;
    if (++memo_count > MEMO_MAX) {
        memo_doc **pp = &memo_head;
        while ((*pp)->next)
            pp = &(*pp)->next;
        old = *pp;
        *pp = NULL;
        memo_count--;
    }
    pthread_mutex_unlock(&memo_mu);
    if (old) {
        entry_free(old->parsed);
        free(old->body);
        free(old);
    }
}

/* Parse a document, or copy its parse from the memo. */
static int parse_body(const char *path, const char *body, size_t len, const char *group,
                      const char *version, gv_entry **out, ctrl_error *err)
{
    uint64_t hash = body_hash(body, len);
    if ((*out = memo_find(group, version, body, len, hash)))
        return 0;
    json_t *doc = json_loadb(body, len, 0, NULL);
    if (!doc)
        return ctrl__error_set(err, CTRL_ERR_PROTOCOL, "GET %s: not JSON", path);
    int rc = parse_list(doc, group, version, out, err);
    json_decref(doc);
    if (rc == 0)
        memo_put(*out, body, len, hash);
    return rc;
}

static int fetch(ctrl__discovery *d, ctrl__transport *t, const char *group, const char *version,
                 ctrl_error *err)
{
    char path[512];
    if (*group)
        snprintf(path, sizeof path, "/apis/%s/%s", group, version);
    else
        snprintf(path, sizeof path, "/api/%s", version);
    ctrl__request req = {.method = "GET", .path = path, .idempotent = true};
    ctrl__response resp;
    int rc = ctrl__transport_do(t, &req, &resp, err);
    if (rc < 0)
        return rc;
    gv_entry *e = NULL;
    rc = parse_body(path, resp.body ? resp.body : "", resp.body ? resp.len : 0, group, version, &e,
                    err);
    ctrl__response_deinit(&resp);
    if (rc < 0)
        return rc;
    cache_put(d, e);
    return 0;
}

int ctrl__discovery_lookup(ctrl__discovery *d, ctrl__transport *t, const char *api_version,
                           const char *kind, ctrl_resource_info *out, ctrl_error *err)
{
    char group[254], version[64];
    if (!kind || !*kind || !out)
        return ctrl__error_set(err, CTRL_ERR_ARG, "kind is required");
    if (ctrl__split_api_version(api_version, group, sizeof group, version, sizeof version) < 0)
        return ctrl__error_set(err, CTRL_ERR_ARG, "invalid apiVersion \"%s\"",
                               api_version ? api_version : "");
    ctrl_resource_info info;
    if (cache_find(d, group, version, kind, &info) == 1) {
        *out = info;
        return 0;
    }
    /* A miss: the group-version may be new (a CRD) or have grown; re-read it. */
    ctrl_error ferr = {0};
    int rc = fetch(d, t, group, version, &ferr);
    if (rc == CTRL_ERR_NOT_FOUND) {
        ctrl_error_deinit(&ferr);
        return ctrl__error_set(err, CTRL_ERR_NO_MATCH,
                               "no matches for kind \"%s\" in version "
                               "\"%s\" (the server does not serve it)",
                               kind, api_version);
    }
    if (rc < 0) {
        if (err) {
            ctrl_error_deinit(err);
            *err = ferr;
        } else {
            ctrl_error_deinit(&ferr);
        }
        return rc;
    }
    if (cache_find(d, group, version, kind, &info) != 1)
        return ctrl__error_set(err, CTRL_ERR_NO_MATCH,
                               "no matches for kind \"%s\" in version "
                               "\"%s\"",
                               kind, api_version);
    *out = info;
    return 0;
}
