/*
 * registry.c - built-in kinds and CRD-declared kinds.
 *
 * DESIGN: one mutex guards the entry array and the generation counter.
 * Entries are immutable once published; the array holds one reference each.
 * Lookups take the mutex, take a reference, and drop the mutex, so a handler
 * keeps a valid entry even if its CRD is deleted meanwhile.
 */
#include "registry.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fakeapi__registry {
    pthread_mutex_t mu;
    fakeapi__resource **items;
    size_t n, cap;
    unsigned long generation;
};

/* One row of the built-in table. Lists are comma-separated. */
typedef struct builtin {
    const char *group, *version, *kind, *plural, *singular;
    bool namespaced;
    const char *short_names, *categories;
    unsigned subresources;
    fakeapi__namerule name_rule;
    const char *const *fields;
} builtin;

/* Kinds that only take POST and are answered, never stored: the reviews and
 * bindings (store keys). */
static const char *const create_only_keys[] = {"/bindings",
                                               "authentication.k8s.io/selfsubjectreviews",
                                               "authentication.k8s.io/tokenreviews",
                                               "authorization.k8s.io/localsubjectaccessreviews",
                                               "authorization.k8s.io/selfsubjectaccessreviews",
                                               "authorization.k8s.io/selfsubjectrulesreviews",
                                               "authorization.k8s.io/subjectaccessreviews",
                                               NULL};

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

#define ST FAKEAPI__SUB_STATUS
#define SC FAKEAPI__SUB_SCALE
#define SUB FAKEAPI__NAME_SUBDOMAIN
#define LBL FAKEAPI__NAME_LABEL
#define SEG FAKEAPI__NAME_PATHSEGMENT
#define POD_SUBS                                                                                   \
    (ST | FAKEAPI__SUB_EVICTION | FAKEAPI__SUB_BINDING | FAKEAPI__SUB_LOG | FAKEAPI__SUB_EXEC |    \
     FAKEAPI__SUB_PROXY)
#define PX FAKEAPI__SUB_PROXY
#define AUTHN "authentication.k8s.io"
#define AUTHZ "authorization.k8s.io"

static const builtin builtins[] = {
    {"", "v1", "Namespace", "namespaces", "namespace", false, "ns", "", ST, LBL, ns_fields},
    {"", "v1", "Pod", "pods", "pod", true, "po", "all", POD_SUBS, SUB, pod_fields},
    {"", "v1", "Binding", "bindings", "binding", true, "", "", 0, SUB, NULL},
    {"", "v1", "Service", "services", "service", true, "svc", "all", ST | PX, LBL, NULL},
    {"", "v1", "Endpoints", "endpoints", "endpoints", true, "ep", "", 0, SUB, NULL},
    {"", "v1", "ConfigMap", "configmaps", "configmap", true, "cm", "", 0, SUB, NULL},
    {"", "v1", "Secret", "secrets", "secret", true, "", "", 0, SUB, secret_fields},
    {"", "v1", "ServiceAccount", "serviceaccounts", "serviceaccount", true, "sa", "",
     FAKEAPI__SUB_TOKEN, SUB, NULL},
    {"", "v1", "Event", "events", "event", true, "ev", "", 0, SEG, event_fields},
    {"", "v1", "Node", "nodes", "node", false, "no", "", ST | PX, SUB, node_fields},
    {"", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", "persistentvolumeclaim", true,
     "pvc", "", ST, SUB, NULL},
    {"apps", "v1", "Deployment", "deployments", "deployment", true, "deploy", "all", ST | SC, SUB,
     NULL},
    {"apps", "v1", "ReplicaSet", "replicasets", "replicaset", true, "rs", "all", ST | SC, SUB,
     rs_fields},
    {"apps", "v1", "StatefulSet", "statefulsets", "statefulset", true, "sts", "all", ST | SC, SUB,
     NULL},
    {"apps", "v1", "DaemonSet", "daemonsets", "daemonset", true, "ds", "all", ST, SUB, NULL},
    {"batch", "v1", "Job", "jobs", "job", true, "", "all", ST, SUB, job_fields},
    {"batch", "v1", "CronJob", "cronjobs", "cronjob", true, "cj", "all", ST, SUB, NULL},
    {"policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", "poddisruptionbudget", true,
     "pdb", "", ST, SUB, NULL},
    {AUTHN, "v1", "SelfSubjectReview", "selfsubjectreviews", "selfsubjectreview", false, "", "", 0,
     SUB, NULL},
    {AUTHN, "v1", "TokenReview", "tokenreviews", "tokenreview", false, "", "", 0, SUB, NULL},
    {AUTHZ, "v1", "LocalSubjectAccessReview", "localsubjectaccessreviews",
     "localsubjectaccessreview", true, "", "", 0, SUB, NULL},
    {AUTHZ, "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", "selfsubjectaccessreview",
     false, "", "", 0, SUB, NULL},
    {AUTHZ, "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", "selfsubjectrulesreview",
     false, "", "", 0, SUB, NULL},
    {AUTHZ, "v1", "SubjectAccessReview", "subjectaccessreviews", "subjectaccessreview", false, "",
     "", 0, SUB, NULL},
    {"coordination.k8s.io", "v1", "Lease", "leases", "lease", true, "", "", 0, SUB, NULL},
    {"events.k8s.io", "v1", "Event", "events", "event", true, "ev", "", 0, SEG, NULL},
    {"rbac.authorization.k8s.io", "v1", "Role", "roles", "role", true, "", "", 0, SEG, NULL},
    {"rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", "rolebinding", true, "", "",
     0, SEG, NULL},
    {"rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", "clusterrole", false, "", "",
     0, SEG, NULL},
    {"rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings",
     "clusterrolebinding", false, "", "", 0, SEG, NULL},
    {"apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
     "customresourcedefinition", false, "crd,crds", "api-extensions", ST, SUB, NULL},
};

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

/* The subresources kube-apiserver 1.32 serves, with its discovery kinds and verbs. */
static const char *const v_sub[] = {"get", "patch", "update", NULL};
static const char *const v_create[] = {"create", NULL};
static const char *const v_get[] = {"get", NULL};
static const char *const v_connect[] = {"create", "get", NULL};
static const char *const v_proxy[] = {"create", "delete", "get", "patch", "update", NULL};
static const fakeapi__subinfo subinfos[] = {
    {FAKEAPI__SUB_EXEC, "attach", NULL, NULL, "PodAttachOptions", NULL, v_connect},
    {FAKEAPI__SUB_BINDING, "binding", NULL, NULL, "Binding", NULL, v_create},
    {FAKEAPI__SUB_EVICTION, "eviction", "policy", "v1", "Eviction", NULL, v_create},
    {FAKEAPI__SUB_EXEC, "exec", NULL, NULL, "PodExecOptions", NULL, v_connect},
    {FAKEAPI__SUB_LOG, "log", NULL, NULL, NULL, "", v_get},
    {FAKEAPI__SUB_EXEC, "portforward", NULL, NULL, "PodPortForwardOptions", NULL, v_connect},
    {FAKEAPI__SUB_PROXY, "proxy", NULL, NULL, NULL, "ProxyOptions", v_proxy},
    {FAKEAPI__SUB_SCALE, "scale", "autoscaling", "v1", "Scale", NULL, v_sub},
    {FAKEAPI__SUB_STATUS, "status", NULL, NULL, NULL, "", v_sub},
    {FAKEAPI__SUB_TOKEN, "token", "authentication.k8s.io", "v1", "TokenRequest", NULL, v_create},
};

const fakeapi__subinfo *fakeapi__subresources(size_t *n)
{
    *n = sizeof subinfos / sizeof subinfos[0];
    return subinfos;
}

bool fakeapi__resource_has_sub(const fakeapi__resource *r, const char *sub)
{
    for (size_t i = 0; i < sizeof subinfos / sizeof subinfos[0]; i++)
        if (!strcmp(sub, subinfos[i].name))
            return r->subresources & subinfos[i].bit;
    return false;
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

static fakeapi__resource *resource_from_builtin(const builtin *b)
{
    fakeapi__resource *r = resource_alloc(b->group, b->version, b->kind, b->plural, b->singular);
    if (!r)
        return NULL;
    r->namespaced = b->namespaced;
    r->short_names = split_list(b->short_names);
    r->categories = split_list(b->categories);
    r->subresources = b->subresources;
    r->name_rule = b->name_rule;
    r->field_selectors = b->fields;
    for (const char *const *k = create_only_keys; *k; k++)
        r->create_only = r->create_only || !strcmp(*k, r->store_key);
    r->update_needs_rv = !strcmp(b->kind, "Lease");
    if (b->subresources & FAKEAPI__SUB_SCALE) {
        r->scale_spec = strdup(".spec.replicas");
        r->scale_status = strdup(".status.replicas");
        r->scale_selector = strdup(".spec.selector");
    }
    if (!r->short_names || !r->categories) {
        fakeapi__resource_unref(r);
        return NULL;
    }
    return r;
}

fakeapi__registry *fakeapi__registry_new(void)
{
    fakeapi__registry *reg = calloc(1, sizeof *reg);
    if (!reg)
        return NULL;
    pthread_mutex_init(&reg->mu, NULL);
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        fakeapi__resource *r = resource_from_builtin(&builtins[i]);
        if (!r || registry_push_locked(reg, r) < 0) {
            fakeapi__resource_unref(r);
            fakeapi__registry_free(reg);
            return NULL;
        }
    }
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
