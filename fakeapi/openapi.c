/*
 * openapi.c - the OpenAPI v3 documents built from the registry.
 *
 * Every call takes one snapshot of the registry (fakeapi__registry_all), builds
 * its document from that snapshot alone and releases it, so a document is
 * always self-consistent even while CRDs come and go.
 *
 * Error handling: documents are built with jansson calls that accept NULL
 * (json_object_set_new releases its value when the target is NULL, and fails
 * when the value is NULL), so a builder collects failures in one flag and
 * drops the whole document at the end instead of checking every call.
 *
 * Thread-safety: any thread; no state of its own.
 */
#include "openapi.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REF_PREFIX "#/components/schemas/"
#define META_PKG "io.k8s.apimachinery.pkg.apis.meta.v1."
#define OBJECTMETA META_PKG "ObjectMeta"
#define LISTMETA META_PKG "ListMeta"
#define STATUS_SCHEMA META_PKG "Status"
#define PATCH_SCHEMA META_PKG "Patch"
#define SCALE_SCHEMA "io.k8s.api.autoscaling.v1.Scale"

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

/* True when an entry before index i already has the same group and version. */
static bool seen_before(fakeapi__resource **all, size_t i, const char *group, const char *version)
{
    for (size_t j = 0; j < i; j++)
        if (!strcmp(all[j]->group, group) && !strcmp(all[j]->version, version))
            return true;
    return false;
}

/* ---- OpenAPI v3: schema names ------------------------------------------------------ */

/*
 * The definition-name prefix the real API server uses for a group: built-in
 * groups live under io.k8s.api.<first label> (apiextensions has its own
 * package), CRD groups are the reversed domain (stable.example.com ->
 * com.example.stable).
 */
static char *schema_prefix(const fakeapi__resource *r)
{
    const char *g = r->group;
    if (!r->custom) {
        if (!*g)
            return strdup("io.k8s.api.core");
        if (!strcmp(g, "apiextensions.k8s.io"))
            return strdup("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions");
        size_t label = strcspn(g, ".");
        return xasprintf("io.k8s.api.%.*s", (int)label, g);
    }
    size_t len = strlen(g);
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    size_t o = 0, end = len;
    /* Copy labels from the last to the first, separated by dots. */
    while (end > 0) {
        size_t start = end;
        while (start > 0 && g[start - 1] != '.')
            start--;
        if (o)
            out[o++] = '.';
        memcpy(out + o, g + start, end - start);
        o += end - start;
        end = start ? start - 1 : 0;
    }
    out[o] = '\0';
    return out;
}

static char *schema_name(const fakeapi__resource *r, const char *kind)
{
    char *prefix = schema_prefix(r);
    if (!prefix)
        return NULL;
    char *name = xasprintf("%s.%s.%s", prefix, r->version, kind);
    free(prefix);
    return name;
}

static json_t *ref_to(const char *name)
{
    char *ref = xasprintf(REF_PREFIX "%s", name ? name : "");
    json_t *o = ref ? json_pack("{s:s}", "$ref", ref) : NULL;
    free(ref);
    return o;
}

static json_t *gvk_obj(const char *group, const char *version, const char *kind)
{
    return json_pack("{s:s, s:s, s:s}", "group", group, "version", version, "kind", kind);
}

/*
 * "Apps", "CoordinationV1"-style pieces of operation ids: the group without
 * its ".k8s.io" suffix, each label capitalised ("rbac.authorization.k8s.io"
 * -> "RbacAuthorization", "" -> "Core").
 */
static void camel_group(const char *group, char *out, size_t len)
{
    if (!*group) {
        snprintf(out, len, "Core");
        return;
    }
    size_t glen = strlen(group);
    const char *suffix = ".k8s.io";
    if (glen > strlen(suffix) && !strcmp(group + glen - strlen(suffix), suffix))
        glen -= strlen(suffix);
    size_t o = 0;
    bool up = true;
    for (size_t i = 0; i < glen && o + 1 < len; i++) {
        char c = group[i];
        if (c == '.' || c == '-') {
            up = true;
            continue;
        }
        if (up && c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        up = false;
        out[o++] = c;
    }
    out[o] = '\0';
}

/* ---- OpenAPI v3: operations ---------------------------------------------------------- */

typedef struct qparam {
    const char *name, *type, *desc;
} qparam;

static const qparam p_dry_run = {"dryRun", "string",
                                 "When present, indicates that modifications should not be "
                                 "persisted. Valid value: All."};
static const qparam p_field_manager = {"fieldManager", "string",
                                       "fieldManager is a name associated with the actor or entity "
                                       "that is making these changes."};
static const qparam p_field_validation = {
    "fieldValidation", "string",
    "fieldValidation instructs the server on how to handle objects in the request containing "
    "unknown or duplicate fields. Valid values are: - Ignore: silently drops unknown fields. - "
    "Warn: sends a warning for each unknown field (the default). - Strict: fails the request on "
    "unknown fields."};
static const qparam p_force = {"force", "boolean",
                               "Force is going to \"force\" Apply requests. It must be unset "
                               "for non-apply patch requests."};
static const qparam p_label_selector = {"labelSelector", "string",
                                        "A selector to restrict the list of returned objects by "
                                        "their labels. Defaults to everything."};
static const qparam p_field_selector = {"fieldSelector", "string",
                                        "A selector to restrict the list of returned objects by "
                                        "their fields. Defaults to everything."};
static const qparam p_limit = {"limit", "integer",
                               "limit is a maximum number of responses to return for a list "
                               "call; continue with the returned continue token."};
static const qparam p_continue = {"continue", "string",
                                  "The continue option should be set when retrieving more "
                                  "results from the server."};
static const qparam p_rv = {"resourceVersion", "string",
                            "resourceVersion sets a constraint on what resource versions a "
                            "request may be served from."};
static const qparam p_watch = {"watch", "boolean",
                               "Watch for changes to the described resources and return them as "
                               "a stream of add, update, and remove notifications."};
static const qparam p_timeout = {"timeoutSeconds", "integer", "Timeout for the list/watch call."};
static const qparam p_grace = {"gracePeriodSeconds", "integer",
                               "The duration in seconds before the object should be deleted."};
static const qparam p_propagation = {"propagationPolicy", "string",
                                     "Whether and how garbage collection will be performed: "
                                     "Orphan, Background or Foreground."};

static json_t *qparam_json(const qparam *p)
{
    return json_pack("{s:s, s:s, s:s, s:{s:s, s:b}}", "name", p->name, "in", "query", "description",
                     p->desc, "schema", "type", p->type, "uniqueItems", 1);
}

static json_t *path_param(const char *name, const char *desc)
{
    return json_pack("{s:s, s:s, s:s, s:b, s:{s:s, s:b}}", "name", name, "in", "path",
                     "description", desc, "required", 1, "schema", "type", "string", "uniqueItems",
                     1);
}

static json_t *json_content(const char *schema)
{
    return json_pack("{s:{s:o}}", "application/json", "schema", ref_to(schema));
}

static json_t *response(const char *desc, const char *schema)
{
    return json_pack("{s:s, s:o}", "description", desc, "content", json_content(schema));
}

typedef enum opkind {
    OP_LIST,
    OP_CREATE,
    OP_DELETECOLLECTION,
    OP_GET,
    OP_REPLACE,
    OP_PATCH,
    OP_DELETE,
} opkind;

/* What an operation is about: the kind it reads/writes and the schema that describes it. */
typedef struct optarget {
    const char *group, *version, *kind; /* the GVK of the object in the body */
    const char *schema;                 /* its components.schemas name */
    const char *list_schema;            /* for OP_LIST */
    const char *opid_tail;              /* "NamespacedPod", "NamespacedDeploymentScale" */
    const char *tag;                    /* "coreV1" */
    bool custom;                        /* no strategic merge patch */
} optarget;

static json_t *operation(const optarget *t, opkind k, bool *bad)
{
    static const char *const verbs[] = {"list",  "create", "deletecollection", "read", "replace",
                                        "patch", "delete"};
    static const char *const actions[] = {"list",  "post",  "deletecollection", "get", "put",
                                          "patch", "delete"};
    json_t *op = json_object();
    char *opid = xasprintf("%s%s", verbs[k], t->opid_tail);
    char *desc = xasprintf("%s %s", verbs[k], t->kind);
    put(op, "tags", json_pack("[s]", t->tag), bad);
    put(op, "description", json_string(desc), bad);
    put(op, "operationId", json_string(opid), bad);
    free(opid);
    free(desc);

    json_t *params = json_array();
    json_t *responses = json_object();
    switch (k) {
    case OP_LIST:
        push(params, qparam_json(&p_label_selector), bad);
        push(params, qparam_json(&p_field_selector), bad);
        push(params, qparam_json(&p_limit), bad);
        push(params, qparam_json(&p_continue), bad);
        push(params, qparam_json(&p_rv), bad);
        push(params, qparam_json(&p_timeout), bad);
        push(params, qparam_json(&p_watch), bad);
        put(responses, "200", response("OK", t->list_schema), bad);
        break;
    case OP_CREATE:
    case OP_REPLACE:
    case OP_PATCH:
        push(params, qparam_json(&p_dry_run), bad);
        push(params, qparam_json(&p_field_manager), bad);
        /* kubectl's strict validation looks for exactly this on the PATCH operation. */
        push(params, qparam_json(&p_field_validation), bad);
        if (k == OP_PATCH) {
            push(params, qparam_json(&p_force), bad);
            json_t *patch_types = json_object();
            put(patch_types, "application/json-patch+json",
                json_pack("{s:o}", "schema", ref_to(PATCH_SCHEMA)), bad);
            put(patch_types, "application/merge-patch+json",
                json_pack("{s:o}", "schema", ref_to(PATCH_SCHEMA)), bad);
            if (!t->custom)
                put(patch_types, "application/strategic-merge-patch+json",
                    json_pack("{s:o}", "schema", ref_to(PATCH_SCHEMA)), bad);
            put(patch_types, "application/apply-patch+yaml",
                json_pack("{s:o}", "schema", ref_to(PATCH_SCHEMA)), bad);
            put(op, "requestBody", json_pack("{s:o, s:b}", "content", patch_types, "required", 1),
                bad);
        } else {
            put(op, "requestBody",
                json_pack("{s:o, s:b}", "content", json_content(t->schema), "required", 1), bad);
        }
        put(responses, "200", response("OK", t->schema), bad);
        if (k != OP_PATCH)
            put(responses, "201", response("Created", t->schema), bad);
        if (k == OP_CREATE)
            put(responses, "202", response("Accepted", t->schema), bad);
        break;
    case OP_GET:
        put(responses, "200", response("OK", t->schema), bad);
        break;
    case OP_DELETE:
    case OP_DELETECOLLECTION:
        push(params, qparam_json(&p_dry_run), bad);
        push(params, qparam_json(&p_grace), bad);
        push(params, qparam_json(&p_propagation), bad);
        if (k == OP_DELETECOLLECTION) {
            push(params, qparam_json(&p_label_selector), bad);
            push(params, qparam_json(&p_field_selector), bad);
        }
        put(responses, "200", response("OK", STATUS_SCHEMA), bad);
        put(responses, "202", response("Accepted", STATUS_SCHEMA), bad);
        break;
    }
    put(responses, "401", json_pack("{s:s}", "description", "Unauthorized"), bad);
    put(op, "parameters", params, bad);
    put(op, "responses", responses, bad);
    put(op, "x-kubernetes-action", json_string(actions[k]), bad);
    put(op, "x-kubernetes-group-version-kind", gvk_obj(t->group, t->version, t->kind), bad);
    if (!op)
        *bad = true;
    return op;
}

/* A path item: its path parameters plus the given operations. */
static json_t *path_item(const optarget *t, bool namespaced, bool named, const opkind *ops,
                         size_t nops, bool *bad)
{
    static const char *const method[] = {"get", "post", "delete", "get", "put", "patch", "delete"};
    json_t *item = json_object();
    json_t *params = json_array();
    if (named)
        push(params, path_param("name", "name of the object"), bad);
    if (namespaced)
        push(params,
             path_param("namespace", "object name and auth scope, such as for teams "
                                     "and projects"),
             bad);
    put(item, "parameters", params, bad);
    for (size_t i = 0; i < nops; i++)
        put(item, method[ops[i]], operation(t, ops[i], bad), bad);
    if (!item)
        *bad = true;
    return item;
}

/* All paths of one resource, added to paths. */
static void resource_paths(json_t *paths, const fakeapi__resource *r, const char *kind_schema,
                           const char *list_schema, bool *bad)
{
    char cg[128];
    camel_group(r->group, cg, sizeof cg);
    char vcap[64];
    snprintf(vcap, sizeof vcap, "%s", r->version);
    if (vcap[0] >= 'a' && vcap[0] <= 'z')
        vcap[0] = (char)(vcap[0] - 'a' + 'A');
    char tag[256];
    snprintf(tag, sizeof tag, "%c%s%s", cg[0] >= 'A' && cg[0] <= 'Z' ? cg[0] - 'A' + 'a' : cg[0],
             cg[0] ? cg + 1 : "", vcap);

    char *prefix = *r->group ? xasprintf("/apis/%s/%s", r->group, r->version)
                             : xasprintf("/api/%s", r->version);
    char *coll = r->namespaced ? xasprintf("%s/namespaces/{namespace}/%s", prefix, r->plural)
                               : xasprintf("%s/%s", prefix, r->plural);
    char *tail = xasprintf("%s%s%s%s", cg, vcap, r->namespaced ? "Namespaced" : "", r->kind);
    if (!prefix || !coll || !tail) {
        *bad = true;
        goto out;
    }
    optarget t = {r->group, r->version, r->kind, kind_schema, list_schema, tail, tag, r->custom};

    static const opkind coll_ops[] = {OP_LIST, OP_CREATE, OP_DELETECOLLECTION};
    static const opkind item_ops[] = {OP_GET, OP_REPLACE, OP_PATCH, OP_DELETE};
    static const opkind sub_ops[] = {OP_GET, OP_REPLACE, OP_PATCH};
    put(paths, coll, path_item(&t, r->namespaced, false, coll_ops, 3, bad), bad);

    char *item = xasprintf("%s/{name}", coll);
    put(paths, item, path_item(&t, r->namespaced, true, item_ops, 4, bad), bad);

    if (r->namespaced) {
        /* The all-namespaces list, as the real server publishes it. */
        char *across = xasprintf("%s/%s", prefix, r->plural);
        char *atail = xasprintf("%s%s%sForAllNamespaces", cg, vcap, r->kind);
        optarget at = t;
        at.opid_tail = atail;
        static const opkind list_only[] = {OP_LIST};
        if (across && atail)
            put(paths, across, path_item(&at, false, false, list_only, 1, bad), bad);
        else
            *bad = true;
        free(across);
        free(atail);
    }
    if (r->subresources & FAKEAPI__SUB_STATUS) {
        char *p = xasprintf("%s/status", item);
        char *stail = xasprintf("%sStatus", tail);
        optarget st = t;
        st.opid_tail = stail;
        if (p && stail)
            put(paths, p, path_item(&st, r->namespaced, true, sub_ops, 3, bad), bad);
        else
            *bad = true;
        free(p);
        free(stail);
    }
    if (r->subresources & FAKEAPI__SUB_SCALE) {
        char *p = xasprintf("%s/scale", item);
        char *stail = xasprintf("%sScale", tail);
        optarget sc = {"autoscaling", "v1", "Scale", SCALE_SCHEMA, NULL, stail, tag, r->custom};
        if (p && stail)
            put(paths, p, path_item(&sc, r->namespaced, true, sub_ops, 3, bad), bad);
        else
            *bad = true;
        free(p);
        free(stail);
    }
    free(item);
out:
    free(prefix);
    free(coll);
    free(tail);
}

/* ---- OpenAPI v3: schemas ------------------------------------------------------------- */

/*
 * Top-level fields of the built-in kinds, "name:type" comma-separated. The
 * server does not model built-in schemas below the top level (it validates
 * what it understands and keeps the rest), so these exist for `kubectl
 * explain` and nothing else. Unlisted kinds have spec and status.
 */
typedef struct builtin_fields {
    const char *group, *kind, *fields;
} builtin_fields;

static const builtin_fields builtin_tops[] = {
    {"", "ConfigMap", "data:map,binaryData:map,immutable:boolean"},
    {"", "Secret", "data:map,stringData:map,type:string,immutable:boolean"},
    {"", "ServiceAccount",
     "secrets:array,imagePullSecrets:array,automountServiceAccountToken:boolean"},
    {"", "Endpoints", "subsets:array"},
    {"", "Event",
     "involvedObject:object,reason:string,message:string,source:object,firstTimestamp:string,"
     "lastTimestamp:string,count:integer,type:string,eventTime:string,series:object,action:string,"
     "related:object,reportingComponent:string,reportingInstance:string"},
    {"events.k8s.io", "Event",
     "eventTime:string,series:object,reportingController:string,reportingInstance:string,"
     "action:string,reason:string,regarding:object,related:object,note:string,type:string,"
     "deprecatedSource:object,deprecatedFirstTimestamp:string,deprecatedLastTimestamp:string,"
     "deprecatedCount:integer"},
    {"rbac.authorization.k8s.io", "Role", "rules:array"},
    {"rbac.authorization.k8s.io", "ClusterRole", "rules:array,aggregationRule:object"},
    {"rbac.authorization.k8s.io", "RoleBinding", "subjects:array,roleRef:object"},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding", "subjects:array,roleRef:object"},
    {"coordination.k8s.io", "Lease", "spec:object"},
};

static json_t *loose_object(void)
{
    return json_pack("{s:s, s:b}", "type", "object", "x-kubernetes-preserve-unknown-fields", 1);
}

static json_t *field_schema(const char *type, size_t tlen)
{
    if (!strncmp(type, "map", tlen) && tlen == 3)
        return json_pack("{s:s, s:{s:s}}", "type", "object", "additionalProperties", "type",
                         "string");
    if (!strncmp(type, "array", tlen) && tlen == 5)
        return json_pack("{s:s, s:o}", "type", "array", "items", loose_object());
    if (!strncmp(type, "object", tlen) && tlen == 6)
        return loose_object();
    return json_pack("{s:s%}", "type", type, tlen);
}

static void builtin_properties(json_t *props, const fakeapi__resource *r, bool *bad)
{
    const char *fields = "spec:object,status:object";
    for (size_t i = 0; i < sizeof builtin_tops / sizeof builtin_tops[0]; i++)
        if (!strcmp(builtin_tops[i].group, r->group) && !strcmp(builtin_tops[i].kind, r->kind))
            fields = builtin_tops[i].fields;
    for (const char *p = fields; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *colon = memchr(p, ':', len);
        if (colon) {
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(colon - p), p);
            put(props, name, field_schema(colon + 1, len - (size_t)(colon - p) - 1), bad);
        }
        p = comma ? comma + 1 : NULL;
    }
}

/* apiVersion, kind and metadata, as every top-level kind has them. */
static void common_properties(json_t *props, bool *bad)
{
    put(props, "apiVersion",
        json_pack("{s:s, s:s}", "type", "string", "description",
                  "APIVersion defines the versioned schema of this representation of an "
                  "object."),
        bad);
    put(props, "kind",
        json_pack("{s:s, s:s}", "type", "string", "description",
                  "Kind is a string value representing the REST resource this object "
                  "represents."),
        bad);
    put(props, "metadata",
        json_pack("{s:[o], s:{}, s:s}", "allOf", ref_to(OBJECTMETA), "default", "description",
                  "Standard object's metadata."),
        bad);
}

static json_t *kind_schema(const fakeapi__resource *r, bool *bad)
{
    json_t *s;
    if (r->custom && json_is_object(r->schema)) {
        /* The CRD's own schema with its descriptions; metadata always means ObjectMeta. */
        s = json_deep_copy(r->schema);
        if (!json_is_object(json_object_get(s, "properties")))
            put(s, "properties", json_object(), bad);
        if (!json_object_get(s, "type"))
            put(s, "type", json_string("object"), bad);
    } else if (r->custom) {
        s = loose_object();
        put(s, "properties", json_object(), bad);
    } else {
        char *desc = xasprintf("%s is served by fakeapi; fields below the top level are kept as "
                               "sent.",
                               r->kind);
        s = json_pack("{s:s?, s:s, s:o}", "description", desc, "type", "object", "properties",
                      json_object());
        free(desc);
        builtin_properties(json_object_get(s, "properties"), r, bad);
    }
    common_properties(json_object_get(s, "properties"), bad);
    put(s, "x-kubernetes-group-version-kind",
        json_pack("[o]", gvk_obj(r->group, r->version, r->kind)), bad);
    if (!s)
        *bad = true;
    return s;
}

static json_t *list_schema(const fakeapi__resource *r, const char *item_schema, bool *bad)
{
    char *desc = xasprintf("%s is a list of %s.", r->list_kind, r->kind);
    json_t *s = json_pack(
        "{s:s?, s:s, s:[s], s:{s:{s:s}, s:{s:s, s:o}, s:{s:s}, s:{s:[o], s:{}}}, s:[o]}",
        "description", desc, "type", "object", "required", "items", "properties", "apiVersion",
        "type", "string", "items", "type", "array", "items", ref_to(item_schema), "kind", "type",
        "string", "metadata", "allOf", ref_to(LISTMETA), "default",
        "x-kubernetes-group-version-kind", gvk_obj(r->group, r->version, r->list_kind));
    free(desc);
    if (!s)
        *bad = true;
    return s;
}

static json_t *typed(const char *type, const char *desc)
{
    return json_pack("{s:s, s:s}", "type", type, "description", desc);
}

static json_t *object_meta_schema(bool *bad)
{
    json_t *p = json_object();
    put(p, "name", typed("string", "Name must be unique within a namespace."), bad);
    put(p, "generateName",
        typed("string", "An optional prefix used by the server to generate a unique name."), bad);
    put(p, "namespace",
        typed("string", "Namespace defines the space within which each name "
                        "must be unique."),
        bad);
    put(p, "uid", typed("string", "UID is the unique in time and space value for this object."),
        bad);
    put(p, "resourceVersion",
        typed("string", "An opaque value that represents the internal version of this object."),
        bad);
    put(p, "generation",
        json_pack("{s:s, s:s, s:s}", "type", "integer", "format", "int64", "description",
                  "A sequence number representing a specific generation of the desired state."),
        bad);
    put(p, "creationTimestamp",
        json_pack("{s:s, s:s, s:s}", "type", "string", "format", "date-time", "description",
                  "CreationTimestamp is a timestamp representing the server time when this "
                  "object was created."),
        bad);
    put(p, "deletionTimestamp",
        json_pack("{s:s, s:s, s:s}", "type", "string", "format", "date-time", "description",
                  "The time after which this resource will be deleted."),
        bad);
    put(p, "deletionGracePeriodSeconds",
        typed("integer", "Seconds allowed for this object to gracefully terminate."), bad);
    put(p, "labels",
        json_pack("{s:s, s:{s:s}, s:s}", "type", "object", "additionalProperties", "type", "string",
                  "description",
                  "Map of string keys and values that can be used to "
                  "organize and categorize objects."),
        bad);
    put(p, "annotations",
        json_pack("{s:s, s:{s:s}, s:s}", "type", "object", "additionalProperties", "type", "string",
                  "description", "Unstructured key value map stored with a resource."),
        bad);
    put(p, "finalizers",
        json_pack("{s:s, s:{s:s}, s:s}", "type", "array", "items", "type", "string", "description",
                  "Must be empty before the object is deleted from the registry."),
        bad);
    put(p, "ownerReferences",
        json_pack("{s:s, s:o, s:s}", "type", "array", "items", loose_object(), "description",
                  "List of objects depended by this object."),
        bad);
    put(p, "managedFields",
        json_pack("{s:s, s:o, s:s}", "type", "array", "items", loose_object(), "description",
                  "Maps workflow-id and version to the set of fields that are managed by that "
                  "workflow."),
        bad);
    json_t *s = json_pack("{s:s, s:s, s:o}", "description",
                          "ObjectMeta is metadata that all persisted resources must have.", "type",
                          "object", "properties", p);
    if (!s)
        *bad = true;
    return s;
}

static void common_schemas(json_t *schemas, bool with_scale, bool *bad)
{
    put(schemas, OBJECTMETA, object_meta_schema(bad), bad);
    put(schemas, LISTMETA,
        json_pack("{s:s, s:s, s:{s:o, s:o, s:o, s:o}}", "description",
                  "ListMeta describes metadata that synthetic resources must have.", "type",
                  "object", "properties", "resourceVersion",
                  typed("string", "The version of the list."), "continue",
                  typed("string", "Set when more results are available."), "remainingItemCount",
                  typed("integer", "The number of subsequent items in the list."), "selfLink",
                  typed("string", "Deprecated.")),
        bad);
    put(schemas, STATUS_SCHEMA,
        json_pack("{s:s, s:s, s:{s:o, s:o, s:{s:[o], s:{}}, s:o, s:o, s:o, s:o, s:o}}",
                  "description",
                  "Status is a return value for calls that don't return other "
                  "objects.",
                  "type", "object", "properties", "apiVersion", typed("string", "APIVersion"),
                  "kind", typed("string", "Kind"), "metadata", "allOf", ref_to(LISTMETA), "default",
                  "status", typed("string", "Success or Failure."), "message",
                  typed("string", "A human-readable description of the status."), "reason",
                  typed("string", "A machine-readable description of the status."), "details",
                  loose_object(), "code", typed("integer", "Suggested HTTP return code.")),
        bad);
    put(schemas, PATCH_SCHEMA,
        json_pack("{s:s, s:s}", "description",
                  "Patch is provided to give a concrete name and type to the Kubernetes PATCH "
                  "request body.",
                  "type", "object"),
        bad);
    if (with_scale)
        put(schemas, SCALE_SCHEMA,
            json_pack("{s:s, s:s, s:{s:o, s:o, s:{s:[o], s:{}}, s:{s:s, s:{s:o}}, "
                      "s:{s:s, s:{s:o, s:o}}}, s:[o]}",
                      "description", "Scale represents a scaling request for a resource.", "type",
                      "object", "properties", "apiVersion", typed("string", "APIVersion"), "kind",
                      typed("string", "Kind"), "metadata", "allOf", ref_to(OBJECTMETA), "default",
                      "spec", "type", "object", "properties", "replicas",
                      typed("integer", "desired number of instances for the scaled object."),
                      "status", "type", "object", "properties", "replicas",
                      typed("integer", "actual number of observed instances of the scaled "
                                       "object."),
                      "selector", typed("string", "label query over pods."),
                      "x-kubernetes-group-version-kind", gvk_obj("autoscaling", "v1", "Scale")),
            bad);
}

/* Build the document from a snapshot; NULL if the group-version has no entry. */
static json_t *gv_doc(fakeapi__resource **all, size_t n, const char *group, const char *version)
{
    bool bad = false, found = false, with_scale = false;
    json_t *paths = json_object();
    json_t *schemas = json_object();
    for (size_t i = 0; i < n; i++) {
        const fakeapi__resource *r = all[i];
        if (strcmp(r->group, group) != 0 || strcmp(r->version, version) != 0)
            continue;
        found = true;
        char *ks = schema_name(r, r->kind);
        char *ls = schema_name(r, r->list_kind);
        if (!ks || !ls) {
            bad = true;
        } else {
            put(schemas, ks, kind_schema(r, &bad), &bad);
            put(schemas, ls, list_schema(r, ks, &bad), &bad);
            resource_paths(paths, r, ks, ls, &bad);
        }
        free(ks);
        free(ls);
        if (r->subresources & FAKEAPI__SUB_SCALE)
            with_scale = true;
    }
    if (!found) {
        json_decref(paths);
        json_decref(schemas);
        return NULL;
    }
    common_schemas(schemas, with_scale, &bad);
    json_t *doc = json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:o}}", "openapi", "3.0.0", "info",
                            "title", "Kubernetes", "version", "v1.32.0", "paths", paths,
                            "components", "schemas", schemas);
    return finish(doc, bad || !doc);
}

json_t *fakeapi__openapi_v3_gv(fakeapi__registry *reg, const char *group, const char *version)
{
    if (!group || !version)
        return NULL;
    size_t n = 0;
    fakeapi__resource **all = fakeapi__registry_all(reg, &n);
    if (!all)
        return NULL;
    json_t *doc = gv_doc(all, n, group, version);
    fakeapi__registry_release(all, n);
    return doc;
}

/* FNV-1a 64 of the canonical (sorted, compact) serialisation. */
static int doc_hash(const json_t *doc, char out[17])
{
    char *text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text)
        return -1;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    free(text);
    snprintf(out, 17, "%016llX", (unsigned long long)h);
    return 0;
}

json_t *fakeapi__openapi_v3_root(fakeapi__registry *reg)
{
    size_t n = 0;
    fakeapi__resource **all = fakeapi__registry_all(reg, &n);
    if (!all)
        return NULL;
    bool bad = false;
    json_t *paths = json_object();
    for (size_t i = 0; i < n && !bad; i++) {
        const fakeapi__resource *r = all[i];
        if (seen_before(all, i, r->group, r->version))
            continue;
        /*
         * Hashing the document itself (rather than the registry generation)
         * keeps a group-version's URL stable while other groups change, so
         * clients re-fetch only what changed.
         */
        json_t *doc = gv_doc(all, n, r->group, r->version);
        char hash[17];
        if (!doc || doc_hash(doc, hash) < 0) {
            json_decref(doc);
            bad = true;
            break;
        }
        json_decref(doc);
        char *key = *r->group ? xasprintf("apis/%s/%s", r->group, r->version)
                              : xasprintf("api/%s", r->version);
        char *url = key ? xasprintf("/openapi/v3/%s?hash=%s", key, hash) : NULL;
        if (key && url)
            put(paths, key, json_pack("{s:s}", "serverRelativeURL", url), &bad);
        else
            bad = true;
        free(key);
        free(url);
    }
    fakeapi__registry_release(all, n);
    json_t *doc = json_pack("{s:o}", "paths", paths);
    return finish(doc, bad || !doc);
}
