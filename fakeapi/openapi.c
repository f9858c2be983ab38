/*
 * openapi.c - the OpenAPI documents built from the registry and the type tables:
 * /openapi/v3 and its group-versions, and /openapi/v2 (Swagger 2.0), with
 * the cache the server answers them from.
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
 * Thread-safety: any thread. The only state is the cache of the v2 and v3
 * documents' bytes, which its own mutex guards (taken before the registry
 * lock, never the other way).
 */
#include "openapi.h"

#include "openapi_pb.h"
#include "types.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* Descriptions are the project's own words, short: clients read the names and types. */
static const qparam p_dry_run = {"dryRun", "string", "All: check and answer, store nothing."};
static const qparam p_field_manager = {"fieldManager", "string", "Who makes the change."};
static const qparam p_field_validation = {"fieldValidation", "string",
                                          "Unknown or duplicate fields: Ignore, Warn or Strict."};
static const qparam p_force = {"force", "boolean", "Apply only: take over conflicting fields."};
static const qparam p_label_selector = {"labelSelector", "string",
                                        "Only objects with these labels."};
static const qparam p_field_selector = {"fieldSelector", "string",
                                        "Only objects with these fields."};
static const qparam p_limit = {"limit", "integer", "At most this many items per page."};
static const qparam p_continue = {"continue", "string", "The token of the next page."};
static const qparam p_rv = {"resourceVersion", "string", "Which version to read from."};
static const qparam p_watch = {"watch", "boolean", "Stream the changes instead of a list."};
static const qparam p_timeout = {"timeoutSeconds", "integer", "How long a list or watch may take."};
static const qparam p_grace = {"gracePeriodSeconds", "integer", "Seconds before deletion."};
static const qparam p_propagation = {"propagationPolicy", "string",
                                     "Dependents: Orphan, Background or Foreground."};

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
/* True when verbs ("get,list", NULL for every verb) has verb. */
static bool has_verb(const char *verbs, const char *verb)
{
    if (!verbs)
        return true;
    size_t vl = strlen(verb);
    for (const char *p = verbs; *p;) {
        size_t len = strcspn(p, ",");
        if (len == vl && !strncmp(p, verb, vl))
            return true;
        p += len;
        if (*p == ',')
            p++;
    }
    return false;
}

/* A path item: its path parameters plus those of the given operations the verbs allow. */
static json_t *path_item(const optarget *t, bool namespaced, bool named, const opkind *ops,
                         size_t nops, const char *verbs, bool *bad)
{
    static const char *const method[] = {"get", "post", "delete", "get", "put", "patch", "delete"};
    static const char *const verb[] = {"list",  "create", "deletecollection", "get", "update",
                                       "patch", "delete"};
    json_t *item = json_object();
    json_t *params = json_array();
    if (named)
        push(params, path_param("name", "The object's name."), bad);
    if (namespaced)
        push(params, path_param("namespace", "The namespace."), bad);
    put(item, "parameters", params, bad);
    for (size_t i = 0; i < nops; i++)
        if (has_verb(verbs, verb[ops[i]]))
            put(item, method[ops[i]], operation(t, ops[i], bad), bad);
    if (!item)
        *bad = true;
    return item;
}

/* paths[key] = item, unless the verbs left it without an operation. */
static void put_item(json_t *paths, const char *key, json_t *item, bool *bad)
{
    if (item && json_object_size(item) <= 1) {
        json_decref(item);
        return;
    }
    put(paths, key, item, bad);
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

    if (!r->stored) {
        /* Reviews and bindings: POST on the collection, nothing else. */
        static const opkind create_only[] = {OP_CREATE};
        put_item(paths, coll, path_item(&t, r->namespaced, false, create_only, 1, NULL, bad), bad);
        goto out;
    }
    static const opkind coll_ops[] = {OP_LIST, OP_CREATE, OP_DELETECOLLECTION};
    static const opkind item_ops[] = {OP_GET, OP_REPLACE, OP_PATCH, OP_DELETE};
    static const opkind sub_ops[] = {OP_GET, OP_REPLACE, OP_PATCH};
    put_item(paths, coll, path_item(&t, r->namespaced, false, coll_ops, 3, r->verbs, bad), bad);

    char *item = xasprintf("%s/{name}", coll);
    put_item(paths, item, path_item(&t, r->namespaced, true, item_ops, 4, r->verbs, bad), bad);

    if (r->namespaced) {
        /* The all-namespaces list, as the real server publishes it. */
        char *across = xasprintf("%s/%s", prefix, r->plural);
        char *atail = xasprintf("%s%s%sForAllNamespaces", cg, vcap, r->kind);
        optarget at = t;
        at.opid_tail = atail;
        static const opkind list_only[] = {OP_LIST};
        if (across && atail)
            put_item(paths, across, path_item(&at, false, false, list_only, 1, r->verbs, bad), bad);
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
            put(paths, p, path_item(&st, r->namespaced, true, sub_ops, 3, NULL, bad), bad);
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
            put(paths, p, path_item(&sc, r->namespaced, true, sub_ops, 3, NULL, bad), bad);
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

/* ---- OpenAPI v3: built-in schemas from the type tables ------------------------------ */

/*
 * A built-in message's definition name, as the real server names it: the
 * proto package with its leading "k8s.io" reversed and Go's module dashes
 * back ("k8s.io.apiextensions_apiserver.pkg...JSON" ->
 * "io.k8s.apiextensions-apiserver.pkg...JSON").
 */
static void def_name(const fakeapi__tmsg *m, char *out, size_t len)
{
    const char *n = m->name;
    if (!strncmp(n, "k8s.io.", 7))
        snprintf(out, len, "io.k8s.%s", n + 7);
    else
        snprintf(out, len, "%s", n);
    for (char *p = out; *p; p++)
        if (*p == '_')
            *p = '-';
}

/* What every schema builder carries: the schemas built so far and the failure flag. */
typedef struct oactx {
    json_t *schemas;
    bool bad;
} oactx;

static void emit_msg(oactx *o, const fakeapi__tmsg *m);

/* A reference to the definition of m, which is built (once) into o->schemas. */
static json_t *msg_ref(oactx *o, const fakeapi__tmsg *m)
{
    char name[256];
    def_name(m, name, sizeof name);
    emit_msg(o, m);
    return ref_to(name);
}

static json_t *scalar_schema(uint8_t type)
{
    switch (type) {
    case FAKEAPI__T_STRING:
        return json_pack("{s:s}", "type", "string");
    case FAKEAPI__T_BOOL:
        return json_pack("{s:s}", "type", "boolean");
    case FAKEAPI__T_INT32:
        return json_pack("{s:s, s:s}", "type", "integer", "format", "int32");
    case FAKEAPI__T_INT64:
        return json_pack("{s:s, s:s}", "type", "integer", "format", "int64");
    case FAKEAPI__T_DOUBLE:
        return json_pack("{s:s, s:s}", "type", "number", "format", "double");
    case FAKEAPI__T_BYTES:
        return json_pack("{s:s, s:s}", "type", "string", "format", "byte");
    default:
        return json_object();
    }
}

/* The schema of one value of field f (one element of a list, one map value). */
static json_t *elem_schema(oactx *o, const fakeapi__tfield *f)
{
    if (f->type != FAKEAPI__T_MSG)
        return scalar_schema(f->type);
    const fakeapi__tmsg *m = fakeapi__type_at(f->msg);
    if (!m)
        return json_object();
    if (m->special == FAKEAPI__S_SLICE && m->nfields > 0) {
        /* A named Go slice (ExtraValue): its JSON is the bare array, so is its schema. */
        return json_pack("{s:s, s:o}", "type", "array", "items", elem_schema(o, &m->fields[0]));
    }
    return msg_ref(o, m);
}

static const char *list_type_name(uint8_t list)
{
    switch (list) {
    case FAKEAPI__L_ATOMIC:
        return "atomic";
    case FAKEAPI__L_SET:
        return "set";
    case FAKEAPI__L_MAP:
        return "map";
    default:
        return NULL;
    }
}

/* "a,b" -> ["a", "b"]. */
static json_t *split_keys(const char *keys)
{
    json_t *a = json_array();
    for (const char *p = keys; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        json_array_append_new(a, json_stringn(p, len));
        p = comma ? comma + 1 : NULL;
    }
    return a;
}

/* The schema of field f as its parent's property. */
static json_t *field_schema(oactx *o, const fakeapi__tfield *f)
{
    json_t *s;
    const fakeapi__tmsg *fm = f->type == FAKEAPI__T_MSG ? fakeapi__type_at(f->msg) : NULL;
    if (f->flags & FAKEAPI__F_MAP) {
        s = json_pack("{s:s, s:o}", "type", "object", "additionalProperties", elem_schema(o, f));
    } else if (f->flags & FAKEAPI__F_REPEATED) {
        s = json_pack("{s:s, s:o}", "type", "array", "items", elem_schema(o, f));
        const char *lt = list_type_name(f->list);
        if (lt)
            put(s, "x-kubernetes-list-type", json_string(lt), &o->bad);
        if (f->list == FAKEAPI__L_MAP && f->list_keys)
            put(s, "x-kubernetes-list-map-keys", split_keys(f->list_keys), &o->bad);
    } else if (fm && fm->special != FAKEAPI__S_SLICE) {
        /*
         * A message: v3 wraps the reference, as the real server does, so that
         * siblings (the patch extensions) may sit beside it. No "default": {}
         * here; it would not validate against a struct with required fields.
         */
        s = json_pack("{s:[o]}", "allOf", elem_schema(o, f));
    } else {
        s = elem_schema(o, f);
    }
    if (f->patch) {
        char strategy[64] = "";
        if (f->patch & FAKEAPI__P_MERGE)
            strcat(strategy, "merge");
        if (f->patch & FAKEAPI__P_RETAINKEYS)
            strcat(strategy, *strategy ? ",retainKeys" : "retainKeys");
        if (f->patch & FAKEAPI__P_REPLACE)
            strcat(strategy, *strategy ? ",replace" : "replace");
        put(s, "x-kubernetes-patch-strategy", json_string(strategy), &o->bad);
    }
    if (f->merge_key)
        put(s, "x-kubernetes-patch-merge-key", json_string(f->merge_key), &o->bad);
    if (!s)
        o->bad = true;
    return s;
}

/* kube-openapi's rule: a field is required unless omitempty or +optional; +required wins. */
static bool field_required(const fakeapi__tfield *f)
{
    if (f->flags & FAKEAPI__F_REQUIRED)
        return true;
    return !(f->flags & (FAKEAPI__F_OMITEMPTY | FAKEAPI__F_OPTIONAL));
}

/* The properties (and required names) of m's fields, inline fields flattened. */
static void add_fields(oactx *o, const fakeapi__tmsg *m, json_t *props, json_t *required, int depth)
{
    for (size_t i = 0; i < m->nfields; i++) {
        const fakeapi__tfield *f = &m->fields[i];
        if (f->flags & FAKEAPI__F_NOJSON)
            continue;
        if (f->flags & FAKEAPI__F_INLINE) {
            const fakeapi__tmsg *im = fakeapi__type_at(f->msg);
            if (im && depth < 8)
                add_fields(o, im, props, required, depth + 1);
            continue;
        }
        if (!*f->json)
            continue;
        put(props, f->json, field_schema(o, f), &o->bad);
        if (field_required(f))
            push(required, json_string(f->json), &o->bad);
    }
}

/*
 * The group-version-kinds m is served as: every resource row whose body or
 * list is m, without repeats. meta/v1 Status is the core "Status" kind.
 */
static json_t *msg_gvks(const fakeapi__tmsg *m)
{
    json_t *a = json_array();
    int idx = (int)(m - fakeapi__tmsgs);
    if (!strcmp(m->name, "k8s.io.apimachinery.pkg.apis.meta.v1.Status")) {
        json_array_append_new(a, gvk_obj("", "v1", "Status"));
        return a;
    }
    for (size_t i = 0; i < fakeapi__ntress; i++) {
        const fakeapi__tres *t = &fakeapi__tress[i];
        char kind[128];
        const char *gv;
        if (t->msg == idx) {
            snprintf(kind, sizeof kind, "%s", t->kind);
            gv = t->kind_group_version;
        } else if (t->list_msg == idx) {
            snprintf(kind, sizeof kind, "%s", m->short_name);
            gv = t->kind_group_version;
        } else {
            continue;
        }
        char group[128] = "";
        const char *version = gv;
        const char *slash = strchr(gv, '/');
        if (slash) {
            snprintf(group, sizeof group, "%.*s", (int)(slash - gv), gv);
            version = slash + 1;
        }
        bool dup = false;
        size_t j;
        json_t *e;
        json_array_foreach(a, j, e)
        {
            if (!strcmp(json_string_value(json_object_get(e, "group")), group) &&
                !strcmp(json_string_value(json_object_get(e, "version")), version) &&
                !strcmp(json_string_value(json_object_get(e, "kind")), kind))
                dup = true;
        }
        if (!dup)
            json_array_append_new(a, gvk_obj(group, version, kind));
    }
    return a;
}

/* The definition of a message with its own JSON form (Time, Quantity, ...). */
static json_t *special_schema(const fakeapi__tmsg *m)
{
    switch (m->special) {
    case FAKEAPI__S_TIME:
    case FAKEAPI__S_MICROTIME:
        return json_pack("{s:s, s:s}", "type", "string", "format", "date-time");
    case FAKEAPI__S_DURATION:
        return json_pack("{s:s}", "type", "string");
    case FAKEAPI__S_QUANTITY:
        return json_pack("{s:[{s:s}, {s:s}]}", "oneOf", "type", "string", "type", "number");
    case FAKEAPI__S_INTORSTRING:
        return json_pack("{s:s, s:s}", "type", "string", "format", "int-or-string");
    case FAKEAPI__S_RAW: {
        size_t len = strlen(m->name);
        /* apiextensions JSON holds any value; RawExtension and FieldsV1 are objects. */
        if (len >= 5 && !strcmp(m->name + len - 5, ".JSON"))
            return json_object();
        return json_pack("{s:s}", "type", "object");
    }
    default:
        /* JSONSchemaPropsOr*: a schema or something else; nothing to say in OpenAPI. */
        return json_object();
    }
}

/* Build m's definition into o->schemas, and what it refers to, unless already there. */
static void emit_msg(oactx *o, const fakeapi__tmsg *m)
{
    char name[256];
    def_name(m, name, sizeof name);
    if (json_object_get(o->schemas, name))
        return;
    if (m->special != FAKEAPI__S_NONE && m->special != FAKEAPI__S_SLICE) {
        put(o->schemas, name, special_schema(m), &o->bad);
        return;
    }
    /* Placed first so that recursive types (JSONSchemaProps) stop here. */
    json_t *s = json_pack("{s:s}", "type", "object");
    if (!s || json_object_set_new(o->schemas, name, s) != 0) {
        o->bad = true;
        return;
    }
    json_t *props = json_object();
    json_t *required = json_array();
    json_t *gvks = msg_gvks(m);
    if (json_array_size(gvks) > 0) {
        put(props, "apiVersion", json_pack("{s:s}", "type", "string"), &o->bad);
        put(props, "kind", json_pack("{s:s}", "type", "string"), &o->bad);
    }
    add_fields(o, m, props, required, 0);
    put(s, "properties", props, &o->bad);
    if (json_array_size(required) > 0)
        put(s, "required", required, &o->bad);
    else
        json_decref(required);
    if (json_array_size(gvks) > 0)
        put(s, "x-kubernetes-group-version-kind", gvks, &o->bad);
    else
        json_decref(gvks);
    if (m->atomic)
        put(s, "x-kubernetes-map-type", json_string("atomic"), &o->bad);
}

static void emit_named(oactx *o, const char *proto_name)
{
    const fakeapi__tmsg *m = fakeapi__type_find(proto_name);
    if (m)
        emit_msg(o, m);
    else
        o->bad = true;
}

/* The built-in message of a registry entry's kind (list: its list kind), or NULL. */
static const fakeapi__tmsg *entry_msg(const fakeapi__resource *r, bool list)
{
    if (r->custom)
        return NULL;
    if (r->row)
        return fakeapi__type_at(list ? r->row->list_msg : r->row->msg);
    if (!list)
        return fakeapi__type_of_kind(r->group_version, r->kind);
    for (size_t i = 0; i < fakeapi__ntress; i++) {
        const fakeapi__tres *t = &fakeapi__tress[i];
        if (t->list_msg >= 0 && !strcmp(t->group, r->group) && !strcmp(t->version, r->version) &&
            !strcmp(t->kind, r->kind))
            return fakeapi__type_at(t->list_msg);
    }
    return NULL;
}

/* ---- OpenAPI v3: custom resource schemas --------------------------------------------- */

static json_t *loose_object(void)
{
    return json_pack("{s:s, s:b}", "type", "object", "x-kubernetes-preserve-unknown-fields", 1);
}

/* apiVersion, kind and metadata, as every top-level kind has them. */
static void common_properties(json_t *props, bool *bad)
{
    put(props, "apiVersion", json_pack("{s:s}", "type", "string"), bad);
    put(props, "kind", json_pack("{s:s}", "type", "string"), bad);
    put(props, "metadata", json_pack("{s:[o], s:{}}", "allOf", ref_to(OBJECTMETA), "default"), bad);
}

/* A custom kind's schema: the CRD version's openAPIV3Schema, or a loose object. */
static json_t *crd_kind_schema(const fakeapi__resource *r, bool *bad)
{
    json_t *s;
    if (json_is_object(r->schema)) {
        /* The CRD's own schema with its descriptions; metadata always means ObjectMeta. */
        s = json_deep_copy(r->schema);
        if (!json_is_object(json_object_get(s, "properties")))
            put(s, "properties", json_object(), bad);
        if (!json_object_get(s, "type"))
            put(s, "type", json_string("object"), bad);
    } else {
        s = loose_object();
        put(s, "properties", json_object(), bad);
    }
    common_properties(json_object_get(s, "properties"), bad);
    put(s, "x-kubernetes-group-version-kind",
        json_pack("[o]", gvk_obj(r->group, r->version, r->kind)), bad);
    if (!s)
        *bad = true;
    return s;
}

static json_t *crd_list_schema(const fakeapi__resource *r, const char *item_schema, bool *bad)
{
    json_t *s =
        json_pack("{s:s, s:[s], s:{s:{s:s}, s:{s:s, s:o}, s:{s:s}, s:{s:[o], s:{}}}, s:[o]}",
                  "type", "object", "required", "items", "properties", "apiVersion", "type",
                  "string", "items", "type", "array", "items", ref_to(item_schema), "kind", "type",
                  "string", "metadata", "allOf", ref_to(LISTMETA), "default",
                  "x-kubernetes-group-version-kind", gvk_obj(r->group, r->version, r->list_kind));
    if (!s)
        *bad = true;
    return s;
}

/* What every document needs besides its kinds: metadata, Status, Patch. */
static void common_schemas(oactx *o, bool with_scale)
{
    emit_named(o, "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta");
    emit_named(o, "k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta");
    emit_named(o, "k8s.io.apimachinery.pkg.apis.meta.v1.Status");
    if (with_scale)
        emit_named(o, "k8s.io.api.autoscaling.v1.Scale");
    put(o->schemas, PATCH_SCHEMA, json_pack("{s:s}", "type", "object"), &o->bad);
}

/* Build the document from a snapshot; NULL if the group-version has no entry. */
static json_t *gv_doc(fakeapi__resource **all, size_t n, const char *group, const char *version)
{
    bool found = false, with_scale = false;
    json_t *paths = json_object();
    oactx o = {json_object(), false};
    for (size_t i = 0; i < n; i++) {
        const fakeapi__resource *r = all[i];
        if (strcmp(r->group, group) != 0 || strcmp(r->version, version) != 0)
            continue;
        found = true;
        const fakeapi__tmsg *km = entry_msg(r, false);
        const fakeapi__tmsg *lm = entry_msg(r, true);
        char *ks = NULL, *ls = NULL;
        if (km) {
            /* A kind without a list (Binding, the reviews) is served without list paths. */
            char name[256];
            def_name(km, name, sizeof name);
            ks = strdup(name);
            emit_msg(&o, km);
            if (lm) {
                def_name(lm, name, sizeof name);
                emit_msg(&o, lm);
            } else {
                snprintf(name, sizeof name, "%s", PATCH_SCHEMA);
            }
            ls = strdup(name);
        } else {
            ks = schema_name(r, r->kind);
            ls = schema_name(r, r->list_kind);
            if (ks && ls) {
                /* A custom kind, or a built-in the tables lack: its own schema. */
                json_t *kind = crd_kind_schema(r, &o.bad);
                if (!r->custom && kind)
                    put(kind, "x-kubernetes-preserve-unknown-fields", json_true(), &o.bad);
                put(o.schemas, ks, kind, &o.bad);
                put(o.schemas, ls, crd_list_schema(r, ks, &o.bad), &o.bad);
            }
        }
        if (!ks || !ls)
            o.bad = true;
        else
            resource_paths(paths, r, ks, ls, &o.bad);
        free(ks);
        free(ls);
        if (r->subresources & FAKEAPI__SUB_SCALE)
            with_scale = true;
    }
    if (!found) {
        json_decref(paths);
        json_decref(o.schemas);
        return NULL;
    }
    common_schemas(&o, with_scale);
    json_t *doc = json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:o}}", "openapi", "3.0.0", "info",
                            "title", "Kubernetes", "version", "v1.32.0", "paths", paths,
                            "components", "schemas", o.schemas);
    return finish(doc, o.bad || !doc);
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
        char hash[17] = "";
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

/* ---- OpenAPI v2 (Swagger 2.0): the v3 documents, merged and rewritten --------------- */

#define V2_REF_PREFIX "#/definitions/"

static json_t *v2_schema(const json_t *s);

static json_t *v2_schema_map(const json_t *m)
{
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)m, k, v) json_object_set_new(out, k, v2_schema(v));
    return out;
}

static json_t *v2_schema_array(const json_t *a)
{
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) json_array_append_new(out, v2_schema(v));
    return out;
}

/*
 * One schema in Swagger 2.0 terms: references point into #/definitions; a
 * lone allOf around a reference becomes the reference (v2 allows no
 * siblings to $ref but extensions); nullable, oneOf, anyOf and not, which
 * v2 lacks, are dropped, a oneOf of types leaving its first type (Quantity
 * is a string in v2).
 */
static json_t *v2_schema(const json_t *s)
{
    if (!json_is_object(s))
        return json_deep_copy(s);
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)s, k, v)
    {
        if (!strcmp(k, "$ref") && json_is_string(v)) {
            const char *ref = json_string_value(v);
            size_t plen = strlen(REF_PREFIX);
            if (!strncmp(ref, REF_PREFIX, plen)) {
                char *r2 = xasprintf(V2_REF_PREFIX "%s", ref + plen);
                json_object_set_new(out, k, json_string(r2));
                free(r2);
            } else {
                json_object_set(out, k, v);
            }
        } else if ((!strcmp(k, "properties") || !strcmp(k, "patternProperties")) &&
                   json_is_object(v)) {
            json_object_set_new(out, k, v2_schema_map(v));
        } else if (!strcmp(k, "items") || !strcmp(k, "additionalProperties")) {
            json_object_set_new(out, k, json_is_array(v) ? v2_schema_array(v) : v2_schema(v));
        } else if (!strcmp(k, "allOf") && json_is_array(v)) {
            json_object_set_new(out, k, v2_schema_array(v));
        } else if (!strcmp(k, "oneOf") || !strcmp(k, "anyOf") || !strcmp(k, "not") ||
                   !strcmp(k, "nullable")) {
            continue;
        } else {
            json_object_set(out, k, v);
        }
    }
    json_t *one = json_object_get(s, "oneOf");
    if (!json_object_get(out, "type") && !json_object_get(out, "$ref") && json_is_array(one)) {
        json_t *t = json_object_get(json_array_get(one, 0), "type");
        if (json_is_string(t))
            json_object_set(out, "type", t);
    }
    json_t *all = json_object_get(out, "allOf");
    if (json_is_array(all) && json_array_size(all) == 1 &&
        json_object_get(json_array_get(all, 0), "$ref") && !json_object_get(out, "properties") &&
        !json_object_get(out, "type")) {
        json_object_set(out, "$ref", json_object_get(json_array_get(all, 0), "$ref"));
        json_object_del(out, "allOf");
        json_object_del(out, "default");
        json_object_del(out, "description");
    }
    return out;
}

/* A v3 parameter ({"schema": {"type": ...}}) as a v2 one (the type inline). */
static json_t *v2_param(const json_t *p)
{
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)p, k, v)
    {
        if (!strcmp(k, "schema") && json_is_object(v))
            json_object_update(out, v);
        else
            json_object_set(out, k, v);
    }
    return out;
}

static json_t *v2_params(const json_t *a)
{
    json_t *out = json_array();
    size_t i;
    json_t *p;
    json_array_foreach(a, i, p) json_array_append_new(out, v2_param(p));
    return out;
}

/* The schema of the first media type of a v3 content map, converted. */
static json_t *v2_content_schema(const json_t *content)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)content, k, v)
    {
        (void)k;
        return v2_schema(json_object_get(v, "schema"));
    }
    return NULL;
}

static json_t *v2_operation(const json_t *op, bool *bad)
{
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_t *consumes = json_pack("[s]", "*/*");
    json_object_foreach((json_t *)op, k, v)
    {
        if (!strcmp(k, "parameters") || !strcmp(k, "requestBody") || !strcmp(k, "responses"))
            continue;
        json_object_set(out, k, v);
    }
    json_t *params = v2_params(json_object_get(op, "parameters"));
    json_t *body = json_object_get(op, "requestBody");
    if (body) {
        json_t *content = json_object_get(body, "content");
        json_t *types = json_array();
        const char *mt;
        json_t *x;
        json_object_foreach(content, mt, x) push(types, json_string(mt), bad);
        json_decref(consumes);
        consumes = types;
        push(params,
             json_pack("{s:s, s:s, s:b, s:o*}", "name", "body", "in", "body", "required", 1,
                       "schema", v2_content_schema(content)),
             bad);
    }
    json_t *responses = json_object();
    const char *code;
    json_t *r;
    json_object_foreach(json_object_get(op, "responses"), code, r)
    {
        json_t *nr = json_pack("{s:O*}", "description", json_object_get(r, "description"));
        json_t *content = json_object_get(r, "content");
        if (content)
            put(nr, "schema", v2_content_schema(content), bad);
        put(responses, code, nr, bad);
    }
    put(out, "consumes", consumes, bad);
    put(out, "produces",
        json_pack("[s, s, s]", "application/json", "application/yaml",
                  "application/vnd.kubernetes.protobuf"),
        bad);
    put(out, "schemes", json_pack("[s]", "https"), bad);
    put(out, "parameters", params, bad);
    put(out, "responses", responses, bad);
    if (!out)
        *bad = true;
    return out;
}

static json_t *v2_path_item(const json_t *item, bool *bad)
{
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)item, k, v)
    {
        if (!strcmp(k, "parameters"))
            put(out, k, v2_params(v), bad);
        else
            put(out, k, v2_operation(v, bad), bad);
    }
    return out;
}

/* Every group-version's v3 document of one snapshot, merged into one Swagger 2.0 document. */
static json_t *v2_doc(fakeapi__resource **all, size_t n)
{
    bool bad = false;
    json_t *paths = json_object();
    json_t *defs = json_object();
    for (size_t i = 0; i < n && !bad; i++) {
        const fakeapi__resource *r = all[i];
        if (seen_before(all, i, r->group, r->version))
            continue;
        json_t *doc = gv_doc(all, n, r->group, r->version);
        if (!doc) {
            bad = true;
            break;
        }
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(doc, "paths"), k, v)
            put(paths, k, v2_path_item(v, &bad), &bad);
        json_object_foreach(json_object_get(json_object_get(doc, "components"), "schemas"), k, v)
        {
            if (!json_object_get(defs, k))
                put(defs, k, v2_schema(v), &bad);
        }
        json_decref(doc);
    }
    json_t *doc = json_pack(
        "{s:s, s:{s:s, s:s}, s:o, s:o, s:{s:{s:s, s:s, s:s, s:s}}, s:[{s:[]}]}", "swagger", "2.0",
        "info", "title", "Kubernetes", "version", "v1.32.0", "paths", paths, "definitions", defs,
        "securityDefinitions", "BearerToken", "description", "Bearer Token authentication", "type",
        "apiKey", "name", "authorization", "in", "header", "security", "BearerToken");
    return finish(doc, bad || !doc);
}

json_t *fakeapi__openapi_v2(fakeapi__registry *reg)
{
    size_t n = 0;
    fakeapi__resource **all = fakeapi__registry_all(reg, &n);
    if (!all)
        return NULL;
    json_t *doc = v2_doc(all, n);
    fakeapi__registry_release(all, n);
    return doc;
}

/* ---- the v2 cache -------------------------------------------------------------------- */

/* One form of the document: its bytes and the generation they were built at. */
typedef struct v2_form {
    bool valid;
    unsigned long generation; /* the registry's, read before the document was built */
    char *bytes;
    size_t len;
} v2_form;

/* The v3 documents of one registry generation: the root's text and each group-version's. */
typedef struct v3_set {
    bool valid;
    unsigned long generation;
    char *root;
    size_t root_len;
    json_t *docs; /* "api/v1", "apis/apps/v1" -> the document's compact text (a string) */
} v3_set;

struct fakeapi__openapi_cache {
    pthread_mutex_t mu;
    v2_form form[2]; /* indexed by fakeapi__openapi_fmt */
    v3_set v3;
};

fakeapi__openapi_cache *fakeapi__openapi_cache_new(void)
{
    fakeapi__openapi_cache *c = calloc(1, sizeof *c);
    if (c && pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        return NULL;
    }
    return c;
}

void fakeapi__openapi_cache_free(fakeapi__openapi_cache *c)
{
    if (!c)
        return;
    pthread_mutex_destroy(&c->mu);
    for (size_t i = 0; i < 2; i++)
        free(c->form[i].bytes);
    free(c->v3.root);
    json_decref(c->v3.docs);
    free(c);
}

/*
 * Every v3 document of one snapshot, and the root that lists them with
 * their hashes (as fakeapi__openapi_v3_root builds it), into v.
 */
static int v3_build(v3_set *v, fakeapi__registry *reg, unsigned long gen)
{
    size_t n = 0;
    fakeapi__resource **all = fakeapi__registry_all(reg, &n);
    if (!all)
        return -1;
    bool bad = false;
    json_t *paths = json_object();
    json_t *docs = json_object();
    for (size_t i = 0; i < n && !bad; i++) {
        const fakeapi__resource *r = all[i];
        if (seen_before(all, i, r->group, r->version))
            continue;
        json_t *doc = gv_doc(all, n, r->group, r->version);
        char hash[17] = "";
        char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
        if (!text || doc_hash(doc, hash) < 0)
            bad = true;
        json_decref(doc);
        char *key = *r->group ? xasprintf("apis/%s/%s", r->group, r->version)
                              : xasprintf("api/%s", r->version);
        char *url = key ? xasprintf("/openapi/v3/%s?hash=%s", key, hash) : NULL;
        if (!bad && key && url) {
            put(paths, key, json_pack("{s:s}", "serverRelativeURL", url), &bad);
            put(docs, key, json_string(text), &bad);
        } else {
            bad = true;
        }
        free(text);
        free(key);
        free(url);
    }
    fakeapi__registry_release(all, n);
    json_t *root = json_pack("{s:o}", "paths", paths);
    char *root_text = root && !bad ? json_dumps(root, JSON_COMPACT) : NULL;
    json_decref(root);
    if (!root_text) {
        json_decref(docs);
        return -1;
    }
    free(v->root);
    json_decref(v->docs);
    v->root = root_text;
    v->root_len = strlen(root_text);
    v->docs = docs;
    v->generation = gen;
    v->valid = true;
    return 0;
}

int fakeapi__openapi_v3_body(fakeapi__openapi_cache *c, fakeapi__registry *reg, const char *group,
                             const char *version, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    pthread_mutex_lock(&c->mu);
    /* As for v2: the generation first, then the snapshot. */
    unsigned long gen = fakeapi__registry_generation(reg);
    if ((!c->v3.valid || c->v3.generation != gen) && v3_build(&c->v3, reg, gen) < 0) {
        pthread_mutex_unlock(&c->mu);
        return -1;
    }
    const char *text = c->v3.root;
    size_t n = c->v3.root_len;
    if (version) {
        char key[320];
        if (group && *group)
            snprintf(key, sizeof key, "apis/%s/%s", group, version);
        else
            snprintf(key, sizeof key, "api/%s", version);
        json_t *doc = json_object_get(c->v3.docs, key);
        if (!doc) {
            pthread_mutex_unlock(&c->mu);
            return 1;
        }
        text = json_string_value(doc);
        n = json_string_length(doc);
    }
    char *copy = malloc(n + 1);
    if (copy) {
        memcpy(copy, text, n);
        copy[n] = '\0';
        *out = copy;
        *len = n;
    }
    pthread_mutex_unlock(&c->mu);
    return copy ? 0 : -1;
}

/* The document in form fmt, newly built. */
static char *build_form(fakeapi__registry *reg, fakeapi__openapi_fmt fmt, size_t *len)
{
    json_t *doc = fakeapi__openapi_v2(reg);
    if (!doc)
        return NULL;
    char *bytes;
    if (fmt == FAKEAPI__OPENAPI_PROTOBUF) {
        bytes = fakeapi__openapi_v2_protobuf(doc, len);
    } else {
        bytes = json_dumps(doc, JSON_COMPACT);
        *len = bytes ? strlen(bytes) : 0;
    }
    json_decref(doc);
    return bytes;
}

int fakeapi__openapi_v2_body(fakeapi__openapi_cache *c, fakeapi__registry *reg,
                             fakeapi__openapi_fmt fmt, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (fmt != FAKEAPI__OPENAPI_JSON && fmt != FAKEAPI__OPENAPI_PROTOBUF)
        return -1;
    v2_form *f = &c->form[fmt];
    pthread_mutex_lock(&c->mu);
    /*
     * The generation is read before the snapshot is taken: a CRD that comes
     * in between makes the cached bytes newer than their key, never older,
     * so the next call rebuilds rather than serving a stale document.
     */
    unsigned long gen = fakeapi__registry_generation(reg);
    if (!f->valid || f->generation != gen) {
        size_t n = 0;
        char *bytes = build_form(reg, fmt, &n);
        if (!bytes) {
            pthread_mutex_unlock(&c->mu);
            return -1;
        }
        free(f->bytes);
        f->bytes = bytes;
        f->len = n;
        f->generation = gen;
        f->valid = true;
    }
    char *copy = malloc(f->len + 1);
    if (copy) {
        memcpy(copy, f->bytes, f->len);
        copy[f->len] = '\0';
        *out = copy;
        *len = f->len;
    }
    pthread_mutex_unlock(&c->mu);
    return copy ? 0 : -1;
}

/* The media range p (len bytes, parameters cut off) names this form, or -1. */
static int range_form(const char *p, size_t len)
{
    static const struct {
        const char *type;
        int form;
    } known[] = {
        {"application/json", FAKEAPI__OPENAPI_JSON},
        {"application/*", FAKEAPI__OPENAPI_JSON},
        {"*/*", FAKEAPI__OPENAPI_JSON},
        {FAKEAPI__OPENAPI_V2_PB, FAKEAPI__OPENAPI_PROTOBUF},
        /* the older spelling, before the '@' */
        {"application/com.github.proto-openapi.spec.v2.v1.0+protobuf", FAKEAPI__OPENAPI_PROTOBUF},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (len == strlen(known[i].type) && !strncasecmp(p, known[i].type, len))
            return known[i].form;
    return -1;
}

int fakeapi__openapi_v2_form(const char *accept)
{
    if (!accept)
        return FAKEAPI__OPENAPI_JSON;
    bool any = false;
    for (const char *p = accept; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p)
            break;
        const char *end = p + strcspn(p, ",");
        size_t len = strcspn(p, ";,");
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        any = true;
        /* The client's order is its preference (q values are not weighed). */
        int f = range_form(p, len);
        if (f >= 0)
            return f;
        p = end;
    }
    return any ? -1 : FAKEAPI__OPENAPI_JSON;
}
