/*
 * registry.c - built-in kinds and CRD-declared kinds.
 *
 * DESIGN: one mutex guards the entry array and the generation counter.
 * Entries are immutable once published; the array holds one reference each.
 * The built-in entries are made once per process and shared by every
 * registry (builtins_build).
 * Lookups take the mutex, take a reference, and drop the mutex, so a handler
 * keeps a valid entry even if its CRD is deleted meanwhile.
 */
#include "registry.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"

struct fakeapi__registry {
    pthread_mutex_t mu;
    fakeapi__resource **items;
    size_t n, cap;
    unsigned long generation;
};

/*
 * What the type tables (types_table.c) do not say about a built-in resource:
 * the extra field selectors it accepts and how its object names are checked.
 * Everything else (plural, scope, verbs, short names, categories,
 * subresources, the kind's message) comes from the tables.
 */
typedef struct extra {
    const char *group, *plural;
    fakeapi__namerule name_rule;
    const char *const *fields;
    const char *stored_as; /* another kind's store key: a view of its objects (convert.c) */
} extra;

static const char *const pod_fields[] = {
    "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",       "spec.serviceAccountName",
    "status.phase",  "status.podIP",       "status.nominatedNodeName", NULL};
static const char *const event_fields[] = {"involvedObject.kind",
                                           "involvedObject.namespace",
                                           "involvedObject.name",
                                           "involvedObject.uid",
                                           "involvedObject.apiVersion",
                                           "involvedObject.resourceVersion",
                                           "involvedObject.fieldPath",
                                           "reason",
                                           "reportingComponent",
                                           "source",
                                           "type",
                                           NULL};
static const char *const secret_fields[] = {"type", NULL};
static const char *const node_fields[] = {"spec.unschedulable", NULL};
static const char *const ns_fields[] = {"status.phase", NULL};
static const char *const job_fields[] = {"status.successful", NULL};
static const char *const rs_fields[] = {"status.replicas", NULL};

#define SUB FAKEAPI__NAME_SUBDOMAIN
#define LBL FAKEAPI__NAME_LABEL
#define SEG FAKEAPI__NAME_PATHSEGMENT

static const extra extras[] = {
    {"", "namespaces", LBL, ns_fields, NULL},
    {"", "pods", SUB, pod_fields, NULL},
    {"", "services", LBL, NULL, NULL},
    {"", "events", SEG, event_fields, NULL},
    {"", "secrets", SUB, secret_fields, NULL},
    {"", "nodes", SUB, node_fields, NULL},
    {"apps", "replicasets", SUB, rs_fields, NULL},
    {"batch", "jobs", SUB, job_fields, NULL},
    {"events.k8s.io", "events", SEG, NULL, "/events"},
    {"rbac.authorization.k8s.io", "roles", SEG, NULL, NULL},
    {"rbac.authorization.k8s.io", "rolebindings", SEG, NULL, NULL},
    {"rbac.authorization.k8s.io", "clusterroles", SEG, NULL, NULL},
    {"rbac.authorization.k8s.io", "clusterrolebindings", SEG, NULL, NULL},
};

static const extra *extra_for(const char *group, const char *plural)
{
    for (size_t i = 0; i < sizeof extras / sizeof extras[0]; i++)
        if (!strcmp(extras[i].group, group) && !strcmp(extras[i].plural, plural))
            return &extras[i];
    return NULL;
}

/* The verbs of a custom resource: all of them. */
static const char std_verbs[] = "create,delete,deletecollection,get,list,patch,update,watch";

static char *xstrdup(const char *s)
{
    return strdup(s ? s : "");
}

static json_t *split_list(const char *csv)
{
    json_t *a = json_array();
    const char *p = csv;
    while (a && p && *p) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        json_array_append_new(a, json_stringn(p, n));
        p = comma ? comma + 1 : NULL;
    }
    return a;
}

static fakeapi__resource *resource_alloc(const char *group, const char *version, const char *kind,
                                         const char *plural, const char *singular)
{
    fakeapi__resource *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    atomic_init(&r->refs, 1);
    r->group = xstrdup(group);
    r->version = xstrdup(version);
    r->kind = xstrdup(kind);
    r->plural = xstrdup(plural);
    r->singular = xstrdup(singular && *singular ? singular : NULL);
    size_t gvlen = strlen(group) + strlen(version) + 2;
    r->group_version = malloc(gvlen);
    r->store_key = malloc(strlen(group) + strlen(plural) + 2);
    r->list_kind = malloc(strlen(kind) + 5);
    if (r->group_version)
        snprintf(r->group_version, gvlen, "%s%s%s", group, *group ? "/" : "", version);
    if (r->store_key)
        sprintf(r->store_key, "%s/%s", group, plural);
    if (r->list_kind)
        sprintf(r->list_kind, "%sList", kind);
    r->storage_version = true;
    if (!r->group || !r->version || !r->kind || !r->plural || !r->singular || !r->group_version ||
        !r->store_key || !r->list_kind) {
        fakeapi__resource_unref(r);
        return NULL;
    }
    return r;
}

fakeapi__resource *fakeapi__resource_ref(fakeapi__resource *r)
{
    if (r)
        atomic_fetch_add(&r->refs, 1);
    return r;
}

void fakeapi__resource_unref(fakeapi__resource *r)
{
    if (!r || atomic_fetch_sub(&r->refs, 1) != 1)
        return;
    free(r->group);
    free(r->version);
    free(r->group_version);
    free(r->kind);
    free(r->list_kind);
    free(r->plural);
    free(r->singular);
    free(r->store_key);
    free(r->scale_spec);
    free(r->scale_status);
    free(r->scale_selector);
    free(r->crd_name);
    json_decref(r->short_names);
    json_decref(r->categories);
    json_decref(r->schema);
    json_decref(r->printer_columns);
    free(r);
}

bool fakeapi__resource_allows(const fakeapi__resource *r, const char *verb)
{
    size_t n = strlen(verb);
    for (const char *p = r->verbs; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && !strncmp(p, verb, n))
            return true;
        p = comma ? comma + 1 : NULL;
    }
    return false;
}

/* The subresources the server answers, by name (verbs_sub.c, verbs_pod.c,
 * review.c); 0 for one it does not (pods/resize, pods/ephemeralcontainers). */
static unsigned sub_bit(const char *sub)
{
    static const struct {
        const char *name;
        unsigned bit;
    } subs[] = {
        {"status", FAKEAPI__SUB_STATUS},     {"scale", FAKEAPI__SUB_SCALE},
        {"eviction", FAKEAPI__SUB_EVICTION}, {"binding", FAKEAPI__SUB_BINDING},
        {"log", FAKEAPI__SUB_LOG},           {"exec", FAKEAPI__SUB_EXEC},
        {"attach", FAKEAPI__SUB_EXEC},       {"portforward", FAKEAPI__SUB_EXEC},
        {"proxy", FAKEAPI__SUB_PROXY},       {"token", FAKEAPI__SUB_TOKEN},
    };
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (!strcmp(sub, subs[i].name))
            return subs[i].bit;
    return 0;
}

bool fakeapi__resource_has_sub(const fakeapi__resource *r, const char *sub)
{
    unsigned bit = sub_bit(sub);
    return bit && (r->subresources & bit);
}

void fakeapi__resource_qualified(const fakeapi__resource *r, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s", r->plural, *r->group ? "." : "", r->group);
}

/* Append under the lock; the array takes over the caller's reference. */
static int registry_push_locked(fakeapi__registry *reg, fakeapi__resource *r)
{
    if (reg->n == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 64;
        fakeapi__resource **items = realloc(reg->items, cap * sizeof *items);
        if (!items)
            return -1;
        reg->items = items;
        reg->cap = cap;
    }
    reg->items[reg->n++] = r;
    reg->generation++;
    return 0;
}

/* The subresources the tables give a resource ("deployments/status", ...). */
static unsigned row_subresources(const fakeapi__tres *row)
{
    unsigned subs = 0;
    size_t plen = strlen(row->resource);
    for (size_t i = 0; i < fakeapi__ntress; i++) {
        const fakeapi__tres *t = &fakeapi__tress[i];
        if (strcmp(t->group, row->group) || strcmp(t->version, row->version) ||
            strncmp(t->resource, row->resource, plen) || t->resource[plen] != '/')
            continue;
        subs |= sub_bit(t->resource + plen + 1);
    }
    return subs;
}

static fakeapi__resource *resource_from_row(const fakeapi__tres *row)
{
    char singular[128];
    size_t i = 0;
    for (; row->kind[i] && i < sizeof singular - 1; i++)
        singular[i] = (char)((row->kind[i] >= 'A' && row->kind[i] <= 'Z') ? row->kind[i] + 32
                                                                         : row->kind[i]);
    singular[i] = '\0';
    fakeapi__resource *r = resource_alloc(row->group, row->version, row->kind, row->resource,
                                          singular);
    if (!r)
        return NULL;
    const extra *x = extra_for(row->group, row->resource);
    r->row = row;
    r->type = fakeapi__type_at(row->msg);
    r->verbs = row->verbs;
    r->stored = row->list_msg >= 0;
    r->namespaced = row->namespaced;
    r->storage_version = row->storage;
    r->short_names = split_list(row->short_names);
    r->categories = split_list(row->categories);
    r->subresources = row_subresources(row);
    r->name_rule = x ? x->name_rule : FAKEAPI__NAME_SUBDOMAIN;
    r->field_selectors = x ? x->fields : NULL;
    r->update_needs_rv = !strcmp(row->kind, "Lease");
    if (x && x->stored_as) {
        free(r->store_key);
        r->store_key = strdup(x->stored_as);
        r->storage_version = false;
    }
    if (r->subresources & FAKEAPI__SUB_SCALE) {
        r->scale_spec = strdup(".spec.replicas");
        r->scale_status = strdup(".status.replicas");
        r->scale_selector = strdup(".spec.selector");
    }
    if (!r->short_names || !r->categories || !r->store_key) {
        fakeapi__resource_unref(r);
        return NULL;
    }
    return r;
}

/*
 * The built-in kinds never change: they are built once per process, the
 * first time a registry is made, and every registry then holds a reference
 * to each of them (immutable, reference counts atomic, so shared by every
 * server and thread). NULL when out of memory.
 */
static fakeapi__resource **builtins;
static size_t nbuiltins;
static pthread_once_t builtins_once = PTHREAD_ONCE_INIT;

static void builtins_build(void)
{
    fakeapi__resource **all = calloc(fakeapi__ntress ? fakeapi__ntress : 1, sizeof *all);
    size_t n = 0;
    if (!all)
        return;
    for (size_t i = 0; i < fakeapi__ntress; i++) {
        if (strchr(fakeapi__tress[i].resource, '/'))
            continue;
        if (!(all[n] = resource_from_row(&fakeapi__tress[i]))) {
            fakeapi__registry_release(all, n);
            return;
        }
        n++;
    }
    nbuiltins = n;
    builtins = all;
}

fakeapi__registry *fakeapi__registry_new(void)
{
    pthread_once(&builtins_once, builtins_build);
    if (!builtins)
        return NULL;
    fakeapi__registry *reg = calloc(1, sizeof *reg);
    fakeapi__resource **items = calloc(nbuiltins + 64, sizeof *items);
    if (!reg || !items) {
        free(reg);
        free(items);
        return NULL;
    }
    pthread_mutex_init(&reg->mu, NULL);
    for (size_t i = 0; i < nbuiltins; i++)
        items[i] = fakeapi__resource_ref(builtins[i]);
    reg->items = items;
    reg->n = nbuiltins;
    reg->cap = nbuiltins + 64;
    reg->generation = nbuiltins; /* one per kind added, as for CRD kinds */
    return reg;
}

void fakeapi__registry_free(fakeapi__registry *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->n; i++)
        fakeapi__resource_unref(reg->items[i]);
    free(reg->items);
    pthread_mutex_destroy(&reg->mu);
    free(reg);
}

fakeapi__resource *fakeapi__registry_find(fakeapi__registry *reg, const char *group,
                                          const char *version, const char *plural)
{
    fakeapi__resource *found = NULL;
    pthread_mutex_lock(&reg->mu);
    for (size_t i = 0; i < reg->n && !found; i++) {
        fakeapi__resource *r = reg->items[i];
        if (!strcmp(r->plural, plural) && !strcmp(r->version, version) && !strcmp(r->group, group))
            found = fakeapi__resource_ref(r);
    }
    pthread_mutex_unlock(&reg->mu);
    return found;
}

fakeapi__resource *fakeapi__registry_find_kind(fakeapi__registry *reg, const char *group_version,
                                               const char *kind)
{
    fakeapi__resource *found = NULL;
    pthread_mutex_lock(&reg->mu);
    for (size_t i = 0; i < reg->n && !found; i++) {
        fakeapi__resource *r = reg->items[i];
        if (!strcmp(r->kind, kind) && !strcmp(r->group_version, group_version))
            found = fakeapi__resource_ref(r);
    }
    pthread_mutex_unlock(&reg->mu);
    return found;
}

fakeapi__resource *fakeapi__registry_find_key(fakeapi__registry *reg, const char *store_key)
{
    fakeapi__resource *found = NULL;
    pthread_mutex_lock(&reg->mu);
    for (size_t i = 0; i < reg->n; i++) {
        fakeapi__resource *r = reg->items[i];
        if (!strcmp(r->store_key, store_key) && (!found || r->storage_version)) {
            fakeapi__resource_unref(found);
            found = fakeapi__resource_ref(r);
        }
    }
    pthread_mutex_unlock(&reg->mu);
    return found;
}

fakeapi__resource **fakeapi__registry_all(fakeapi__registry *reg, size_t *n)
{
    pthread_mutex_lock(&reg->mu);
    fakeapi__resource **all = malloc((reg->n ? reg->n : 1) * sizeof *all);
    *n = 0;
    if (all) {
        for (size_t i = 0; i < reg->n; i++)
            all[i] = fakeapi__resource_ref(reg->items[i]);
        *n = reg->n;
    }
    pthread_mutex_unlock(&reg->mu);
    return all;
}

void fakeapi__registry_release(fakeapi__resource **all, size_t n)
{
    for (size_t i = 0; all && i < n; i++)
        fakeapi__resource_unref(all[i]);
    free(all);
}

unsigned long fakeapi__registry_generation(fakeapi__registry *reg)
{
    pthread_mutex_lock(&reg->mu);
    unsigned long g = reg->generation;
    pthread_mutex_unlock(&reg->mu);
    return g;
}

static const char *jstr(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* Strip the leading '.' of a CRD JSON path, keep it NULL when absent. */
static char *scale_path(const json_t *scale, const char *key)
{
    const char *p = jstr(scale, key);
    return p ? strdup(p) : NULL;
}

static fakeapi__resource *resource_from_crd_version(const json_t *crd, const json_t *ver)
{
    const json_t *spec = json_object_get(crd, "spec");
    const json_t *names = json_object_get(spec, "names");
    const char *singular = jstr(names, "singular");
    char lower[256] = "";
    if (!singular || !*singular) {
        const char *kind = jstr(names, "kind");
        size_t i = 0;
        for (; kind && kind[i] && i < sizeof lower - 1; i++)
            lower[i] = (char)((kind[i] >= 'A' && kind[i] <= 'Z') ? kind[i] + 32 : kind[i]);
        lower[i] = '\0';
        singular = lower;
    }
    fakeapi__resource *r = resource_alloc(jstr(spec, "group"), jstr(ver, "name"),
                                          jstr(names, "kind"), jstr(names, "plural"), singular);
    if (!r)
        return NULL;
    const char *list_kind = jstr(names, "listKind");
    if (list_kind) {
        free(r->list_kind);
        r->list_kind = strdup(list_kind);
    }
    r->custom = true;
    r->verbs = std_verbs;
    r->stored = true;
    r->namespaced = !jstr(spec, "scope") || strcmp(jstr(spec, "scope"), "Cluster") != 0;
    json_t *sn = json_object_get(names, "shortNames"), *cat = json_object_get(names, "categories");
    r->short_names = json_is_array(sn) ? json_deep_copy(sn) : json_array();
    r->categories = json_is_array(cat) ? json_deep_copy(cat) : json_array();
    r->storage_version = json_is_true(json_object_get(ver, "storage"));
    r->schema = json_deep_copy(json_object_get(json_object_get(ver, "schema"), "openAPIV3Schema"));
    json_t *cols = json_object_get(ver, "additionalPrinterColumns");
    r->printer_columns = json_is_array(cols) ? json_deep_copy(cols) : NULL;
    const json_t *subs = json_object_get(ver, "subresources");
    if (json_object_get(subs, "status"))
        r->subresources |= FAKEAPI__SUB_STATUS;
    const json_t *scale = json_object_get(subs, "scale");
    if (scale) {
        r->subresources |= FAKEAPI__SUB_SCALE;
        r->scale_spec = scale_path(scale, "specReplicasPath");
        r->scale_status = scale_path(scale, "statusReplicasPath");
        r->scale_selector = scale_path(scale, "labelSelectorPath");
    }
    r->crd_name = xstrdup(jstr(json_object_get(crd, "metadata"), "name"));
    if (!r->short_names || !r->categories || !r->crd_name) {
        fakeapi__resource_unref(r);
        return NULL;
    }
    return r;
}

static void remove_crd_locked(fakeapi__registry *reg, const char *name)
{
    size_t out = 0;
    for (size_t i = 0; i < reg->n; i++) {
        fakeapi__resource *r = reg->items[i];
        if (r->crd_name && !strcmp(r->crd_name, name))
            fakeapi__resource_unref(r);
        else
            reg->items[out++] = r;
    }
    if (out != reg->n)
        reg->generation++;
    reg->n = out;
}

int fakeapi__registry_add_crd(fakeapi__registry *reg, const json_t *crd, char *err, size_t errlen)
{
    const json_t *spec = json_object_get(crd, "spec");
    const json_t *names = json_object_get(spec, "names");
    const char *name = jstr(json_object_get(crd, "metadata"), "name");
    const json_t *versions = json_object_get(spec, "versions");
    if (!name || !jstr(spec, "group") || !jstr(names, "kind") || !jstr(names, "plural") ||
        !json_is_array(versions)) {
        snprintf(err, errlen,
                 "CustomResourceDefinition needs metadata.name, spec.group, "
                 "spec.names.kind, spec.names.plural and spec.versions");
        return -1;
    }
    size_t nv = json_array_size(versions);
    fakeapi__resource **fresh = calloc(nv ? nv : 1, sizeof *fresh);
    size_t nf = 0;
    if (!fresh)
        goto nomem;
    for (size_t i = 0; i < nv; i++) {
        const json_t *ver = json_array_get(versions, i);
        if (!json_is_true(json_object_get(ver, "served")) || !jstr(ver, "name"))
            continue;
        if (!(fresh[nf] = resource_from_crd_version(crd, ver)))
            goto nomem;
        nf++;
    }
    pthread_mutex_lock(&reg->mu);
    remove_crd_locked(reg, name);
    for (size_t i = 0; i < nf; i++) {
        if (registry_push_locked(reg, fresh[i]) < 0) {
            pthread_mutex_unlock(&reg->mu);
            for (size_t j = i; j < nf; j++)
                fakeapi__resource_unref(fresh[j]);
            free(fresh);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    reg->generation++;
    pthread_mutex_unlock(&reg->mu);
    free(fresh);
    return 0;
nomem:
    if (fresh)
        fakeapi__registry_release(fresh, nf);
    snprintf(err, errlen, "out of memory");
    return -1;
}

void fakeapi__registry_remove_crd(fakeapi__registry *reg, const char *name)
{
    pthread_mutex_lock(&reg->mu);
    remove_crd_locked(reg, name);
    pthread_mutex_unlock(&reg->mu);
}
