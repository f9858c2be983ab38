/*
 * audit_import.c - an audit log into a replayable scenario (scn/audit.h).
 *
 * The events (audit_event.h) are walked in the order their requests were
 * received. Objects that existed before the log (the snapshot, and what
 * reads and writes reveal of objects the log did not create) become
 * fixtures, with the fields the server sets stripped. Every successful
 * write by an actor other than the controllers under test becomes a
 * `request` step at its offset from the first event (`advance` steps in
 * between), with the recorded body made replayable: resourceVersion and
 * uid preconditions dropped, a generated name made explicit, a deprecated
 * group/version mapped to its GA one when the conversion is trivial. The
 * controllers' writes become `expectWrite` steps or comments. What cannot
 * be replayed (a Metadata-level body, a version with no trivial mapping)
 * is a comment in the scenario and a warning, never invented.
 *
 * Kinds and resources are resolved by an in-process fake API server (no
 * HTTP) that knows the built-in kinds and every CRD the snapshot or the
 * log defines. The snapshot is read by audit_snapshot.c, deprecated
 * versions are mapped by audit_versions.c. One thread, the caller's.
 */
#include "scn/audit.h"
#include "audit_event.h"
#include "audit_snapshot.h"
#include "audit_versions.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeapi/fakeapi.h"
#include "kh/yaml.h"

#define OUT_MAX ((size_t)1 << 30)
#define CONTENT_TYPE_ANNOTATION "kube-harness.dev/content-type"

/* ---- output buffer ---- */

typedef struct outbuf {
    char *s;
    size_t len, cap;
    bool failed;
} outbuf;

static void put(outbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(outbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (b->failed)
        return;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->s && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *p = cap > OUT_MAX ? NULL : realloc(b->s, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
}

/* v as a YAML block, each line indented; the first after `first`. */
static void put_yaml(outbuf *b, const char *first, const char *indent, const json_t *v)
{
    char *y = kh_yaml_dump(v);
    const char *line, *nl;
    bool head = true;

    if (!y) {
        b->failed = true;
        return;
    }
    for (line = y; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl)
            nl = line + strlen(line);
        put(b, "%s%.*s\n", head ? first : indent, (int)(nl - line), line);
        head = false;
        if (!*nl)
            break;
    }
    free(y);
}

/* text and a newline, its own line breaks turned into spaces (they would
 * end a comment). */
static void put_line_text(outbuf *b, const char *text)
{
    while (*text) {
        size_t n = strcspn(text, "\r\n");
        put(b, "%.*s", (int)n, text);
        text += n;
        if (*text) {
            put(b, " ");
            text++;
        }
    }
    put(b, "\n");
}

/* A comment line (prefix, then text): newlines in text would end it. */
static void put_note(outbuf *b, const char *prefix, const char *text)
{
    put(b, "  # %s", prefix);
    put_line_text(b, text);
}

static void put_comment(outbuf *b, const char *indent, const char *text)
{
    put(b, "%s# ", indent);
    put_line_text(b, text);
}

/* ---- the import's state ---- */

typedef struct importer {
    const scn_import_options *o;
    scn_import_stats st;
    scn__audit_log log;
    fakeapi_server *srv; /* resolves kinds; no HTTP */
    json_t *snapshot;    /* key -> object */
    json_t *fixtures;    /* key -> object (existed before the log) */
    json_t *order;       /* keys of fixtures, in the order found */
    json_t *touched;     /* key -> true once a write of the log touched it */
    json_t *gen_names;   /* key -> generateName of objects the controllers made */
    json_t *created;     /* key -> true for every object a write of the log created */
    json_t *unknown;     /* key -> true: existed before the log, nothing shows it */
    json_t *gen_values;  /* name -> true for every name the controllers had generated */
    /* --expect-state: what the log leaves */
    json_t *alive;     /* key -> true (created) or false (deleted) by the log */
    json_t *kinds;     /* "group/resource" -> [apiVersion, kind] */
    json_t *ctrl_sets; /* "group/resource/ns" the controllers under test wrote -> true */
    json_t *poisoned;  /* "group/resource/ns" a deletecollection made unknowable -> true */
    json_t *served;    /* discovery path -> {resource: true}, until a CRD is learned */
    outbuf steps;
    int64_t t0, last_ns;
    scn_error *err;
} importer;

static void warn(importer *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warn(importer *im, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (im->o->warn)
        im->o->warn(im->o->warn_ud, msg);
}

static const char *jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* ---- keys: group/resource/namespace/name ---- */

static void make_key(char *buf, size_t len, const char *group, const char *resource, const char *ns,
                     const char *name)
{
    snprintf(buf, len, "%s/%s/%s/%s", group ? group : "", resource ? resource : "", ns ? ns : "",
             name ? name : "");
}

/* An object's key, its resource found by the server's registry. */
static int object_key(importer *im, const json_t *obj, char *buf, size_t len)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const char *av = jstr(obj, "apiVersion"), *kind = jstr(obj, "kind"),
               *ns = jstr(meta, "namespace"), *name = jstr(meta, "name");
    char path[1024], group[128] = "";
    const char *slash;
    fakeapi_error ferr = {0};

    if (!av || !kind || !name)
        return -1;
    slash = strchr(av, '/');
    if (slash)
        snprintf(group, sizeof group, "%.*s", (int)(slash - av), av);
    if (fakeapi_path(im->srv, av, kind, ns ? ns : "default", name, path, sizeof path, &ferr) < 0) {
        /* a kind the server does not know (yet): its lowercase plural */
        char res[160];
        size_t i, n = strlen(kind);
        for (i = 0; i < n && i + 3 < sizeof res; i++)
            res[i] = (char)(kind[i] >= 'A' && kind[i] <= 'Z' ? kind[i] + 32 : kind[i]);
        res[i] = '\0';
        strcat(res, n && kind[n - 1] == 's' ? "es" : "s");
        make_key(buf, len, group, res, ns, name);
        return 0;
    }
    /* .../RESOURCE/NAME: the segment before the name */
    char *end = strrchr(path, '/');
    if (!end)
        return -1;
    *end = '\0';
    const char *res = strrchr(path, '/');
    bool namespaced = strstr(path, "/namespaces/") != NULL;
    make_key(buf, len, group, res ? res + 1 : "", namespaced ? ns ? ns : "default" : NULL, name);
    return 0;
}

/* ---- fixtures ---- */

/* The fields a server sets, dropped so that the object can be created again. */
static json_t *stripped(const json_t *obj)
{
    json_t *c = json_deep_copy(obj), *meta = json_object_get(c, "metadata");

    if (json_is_object(meta)) {
        static const char *const drop[] = {"uid",
                                           "resourceVersion",
                                           "creationTimestamp",
                                           "generation",
                                           "managedFields",
                                           "selfLink",
                                           "deletionTimestamp",
                                           "deletionGracePeriodSeconds",
                                           NULL};
        for (size_t i = 0; drop[i]; i++)
            json_object_del(meta, drop[i]);
    }
    return c;
}

/* Record obj as existing before the log (if nothing earlier did). */
static void add_fixture(importer *im, const char *key, const json_t *obj)
{
    if (json_object_get(im->fixtures, key) || json_object_get(im->touched, key))
        return;
    json_t *c = stripped(obj);
    const char *av = jstr(c, "apiVersion");
    char group[128] = "", version[64] = "";
    if (av && strchr(av, '/'))
        sscanf(av, "%127[^/]/%63s", group, version);
    else if (av)
        snprintf(version, sizeof version, "%s", av);
    /* the resource of the kind, as the table names them: Deployment ->
     * deployments, NetworkPolicy -> networkpolicies */
    char res[160] = "";
    const char *kind = jstr(c, "kind");
    size_t n = kind ? strlen(kind) : 0;
    for (size_t i = 0; i < n && i + 4 < sizeof res; i++)
        res[i] = (char)(kind[i] >= 'A' && kind[i] <= 'Z' ? kind[i] + 32 : kind[i]);
    if (n && n + 4 < sizeof res) {
        if (res[n - 1] == 'y')
            strcpy(res + n - 1, "ies");
        else
            strcat(res, res[n - 1] == 's' ? "es" : "s");
    }
    const scn__gv_map *m = scn__gv_find(group, version, res);
    if (m && m->to_group)
        scn__gv_convert(c, m);
    else if (m) {
        warn(im, "fixture %s: %s has no trivial conversion to a served version; left out", key, av);
        im->st.gaps++;
        json_decref(c);
        return;
    }
    json_object_set_new(im->fixtures, key, c);
    json_array_append_new(im->order, json_string(key));
}

/* Objects inside a read's answer: one object, or a List's items. */
static void reveal(importer *im, const scn__audit_event *e, const json_t *obj)
{
    char key[1024];
    const char *kind = jstr(obj, "kind");
    size_t n;

    if (!json_is_object(obj))
        return;
    if (kind && (n = strlen(kind)) > 4 && !strcmp(kind + n - 4, "List") &&
        json_is_array(json_object_get(obj, "items"))) {
        json_t *items = json_object_get(obj, "items"), *item;
        size_t i;
        char ikind[128];
        snprintf(ikind, sizeof ikind, "%.*s", (int)(n - 4), kind);
        json_array_foreach(items, i, item)
        {
            json_t *c = json_deep_copy(item);
            if (!json_object_get(c, "kind"))
                json_object_set_new(c, "kind", json_string(ikind));
            if (!json_object_get(c, "apiVersion") && jstr(obj, "apiVersion"))
                json_object_set_new(c, "apiVersion", json_string(jstr(obj, "apiVersion")));
            reveal(im, e, c);
            json_decref(c);
        }
        return;
    }
    if (!kind || !strcmp(kind, "Status") || object_key(im, obj, key, sizeof key) < 0)
        return;
    add_fixture(im, key, obj);
}

static int load_snapshot(importer *im)
{
    json_t *flat = NULL, *doc;
    size_t i;
    int rc = scn__snapshot_read(im->o->snapshot, &flat, im->err);

    if (rc != 0)
        return rc;
    /* CRDs first, so that their kinds resolve */
    for (int pass = 0; pass < 2; pass++) {
        json_array_foreach(flat, i, doc)
        {
            const char *kind = jstr(doc, "kind");
            bool crd = !strcmp(kind, "CustomResourceDefinition");
            char key[1024];
            if (crd != (pass == 0))
                continue;
            if (crd) {
                json_t *c = stripped(doc);
                char *text = json_dumps(c, JSON_COMPACT);
                fakeapi_error ferr = {0};
                if (text && fakeapi_apply(im->srv, text, strlen(text), &ferr) < 0)
                    warn(im, "%s: CustomResourceDefinition %s: %s", im->o->snapshot,
                         jstr(json_object_get(doc, "metadata"), "name"), ferr.message);
                free(text);
                json_decref(c);
            }
            if (object_key(im, doc, key, sizeof key) == 0)
                json_object_set(im->snapshot, key, doc);
        }
    }
    json_decref(flat);
    return 0;
}

/* ---- actors ---- */

static bool agent_is(const char *ua, const char *a)
{
    size_t n = strlen(a);
    return ua && !strncmp(ua, a, n) && (ua[n] == '\0' || ua[n] == '/' || ua[n] == ' ');
}

/* Which controller under test made e, or NULL. */
static const char *controller_of(const importer *im, const scn__audit_event *e)
{
    const scn_import_options *o = im->o;
    const char *first = o->n_controllers ? o->controllers[0] : "controller";

    for (size_t i = 0; i < o->n_actor_users; i++)
        if (e->username && !strcmp(e->username, o->actor_users[i]))
            return first;
    for (size_t i = 0; i < o->n_actor_agents; i++)
        if (agent_is(e->user_agent, o->actor_agents[i]))
            return first;
    if (o->n_actor_users || o->n_actor_agents)
        return NULL;
    for (size_t i = 0; i < o->n_controllers; i++) {
        const char *c = o->controllers[i];
        size_t n = strlen(c), u = e->username ? strlen(e->username) : 0;
        char scn[200];
        if (e->username && (!strcmp(e->username, c) || (u > n && e->username[u - n - 1] == ':' &&
                                                        !strcmp(e->username + u - n, c))))
            return c;
        if (agent_is(e->user_agent, c))
            return c;
        snprintf(scn, sizeof scn, "scenario/%s-", c);
        if (e->user_agent && !strncmp(e->user_agent, scn, strlen(scn)))
            return c;
    }
    return NULL;
}

/* ---- one write ---- */

/* Writes a real control plane makes that fakeapi makes itself, in the
 * same transaction as their cause: garbage collection of dependents and
 * the emptying of a deleted namespace. Replayed, they would find their
 * objects gone. */
static bool server_side(const scn__audit_event *e)
{
    static const char *const actors[] = {
        "system:serviceaccount:kube-system:generic-garbage-collector",
        "system:serviceaccount:kube-system:namespace-controller", NULL};
    for (size_t i = 0; actors[i]; i++)
        if (e->username && !strcmp(e->username, actors[i]))
            return strcmp(e->verb, "delete") == 0 || strcmp(e->verb, "deletecollection") == 0 ||
                   strcmp(e->verb, "patch") == 0 || strcmp(e->verb, "update") == 0;
    return false;
}

static bool has_directive(const json_t *v)
{
    const char *k;
    json_t *x;
    size_t i;

    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, x)
        {
            if (k[0] == '$' || has_directive(x))
                return true;
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, x) if (has_directive(x)) return true;
    }
    return false;
}

/* Built-in groups (kubectl patches them strategically by default). */
static bool builtin_group(const char *g)
{
    size_t n = g ? strlen(g) : 0;
    return n == 0 || !strchr(g, '.') || (n > 7 && !strcmp(g + n - 7, ".k8s.io"));
}

/* The patch's media type: recorded (fakeapi's recorder keeps it in an
 * annotation), else inferred from the body, the query and the client. */
static const char *patch_type(const scn__audit_event *e, const json_t *body)
{
    const char *rec = jstr(json_object_get(e->ev, "annotations"), CONTENT_TYPE_ANNOTATION);

    if (rec)
        return rec;
    if (json_is_array(body))
        return "application/json-patch+json";
    if (jstr(body, "apiVersion") && jstr(body, "kind") && strstr(e->uri, "fieldManager="))
        return "application/apply-patch+yaml";
    if (has_directive(body))
        return "application/strategic-merge-patch+json";
    if (builtin_group(e->group) && e->user_agent && !strncmp(e->user_agent, "kubectl", 7))
        return "application/strategic-merge-patch+json";
    return "application/merge-patch+json";
}

/* What the server would refuse or take as a precondition from another
 * cluster: resourceVersion, uid, managedFields (in place). */
static void drop_preconditions(json_t *body, const char *verb)
{
    json_t *meta = json_object_get(body, "metadata");

    if (json_is_object(meta)) {
        json_object_del(meta, "resourceVersion");
        json_object_del(meta, "uid");
        json_object_del(meta, "managedFields");
        json_object_del(meta, "selfLink");
        if (!strcmp(verb, "create") || !strcmp(verb, "update")) {
            json_object_del(meta, "creationTimestamp");
            json_object_del(meta, "generation");
        }
    }
    if (!strcmp(verb, "delete") || !strcmp(verb, "deletecollection")) {
        json_object_del(body, "preconditions");
        /* as logged: meta.k8s.io/__internal, which no client sends */
        const char *av = jstr(body, "apiVersion");
        if (av && strstr(av, "__internal"))
            json_object_set_new(body, "apiVersion", json_string("meta.k8s.io/v1"));
    }
    if (json_is_array(body)) { /* JSON patch: a test of the old resourceVersion */
        for (size_t i = json_array_size(body); i-- > 0;) {
            json_t *op = json_array_get(body, i);
            const char *p = jstr(op, "path");
            if (p && (!strcmp(p, "/metadata/resourceVersion") || !strcmp(p, "/metadata/uid")))
                json_array_remove(body, i);
        }
    }
}

static const char *method_of(const char *verb)
{
    if (!strcmp(verb, "create"))
        return "POST";
    if (!strcmp(verb, "update"))
        return "PUT";
    if (!strcmp(verb, "patch"))
        return "PATCH";
    return "DELETE";
}

/* "1.5s", "250ms", "3m20.5s": a duration the scenario parser reads. */
static void put_advance(importer *im, int64_t at_ns)
{
    int64_t d = at_ns - im->last_ns;

    if (d <= 0)
        return;
    im->last_ns = at_ns;
    if (d % 1000000 == 0)
        put(&im->steps, "  - advance: %" PRId64 "ms\n", d / 1000000);
    else
        put(&im->steps, "  - advance: %" PRId64 "us\n", (d + 500) / 1000);
}

static void describe(const scn__audit_event *e, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s:%d %s %s%s%s %s%s%s by %s (%s) -> %d", e->file, e->line, e->verb,
             e->resource ? e->resource : "?", e->subresource ? "/" : "",
             e->subresource ? e->subresource : "", e->ns ? e->ns : "", e->ns ? "/" : "",
             name ? name : "", e->username ? e->username : "?",
             e->user_agent ? e->user_agent : "no user agent", e->code);
}

/* The name a create gave its object (a generated one from the answer). */
static const char *created_name(const scn__audit_event *e)
{
    const char *n =
        jstr(json_object_get(json_object_get(e->ev, "responseObject"), "metadata"), "name");
    if (n && *n)
        return n;
    if (e->name && *e->name)
        return e->name;
    n = jstr(json_object_get(json_object_get(e->ev, "requestObject"), "metadata"), "name");
    return n && *n ? n : NULL;
}

/* The path without its query. */
static void path_only(const char *uri, char *buf, size_t len)
{
    snprintf(buf, len, "%.*s", (int)strcspn(uri, "?"), uri);
}

/* What a replay cannot repeat, taken out of an expected body (in place):
 * times, names the controllers generated, and what the server sets; and
 * the mappings that are then empty (an empty one would ask for a mapping
 * where the run may send none). */
static void mask(importer *im, json_t *v)
{
    const char *k;
    json_t *x;
    void *tmp;
    size_t i;

    if (json_is_object(v)) {
        json_object_foreach_safe(v, tmp, k, x)
        {
            const char *sv = json_string_value(x);
            if ((sv && (scn__parse_rfc3339(sv) >= 0 || json_object_get(im->gen_values, sv))) ||
                !strcmp(k, "uid") || !strcmp(k, "resourceVersion") || !strcmp(k, "managedFields") ||
                !strcmp(k, "selfLink") || !strcmp(k, "creationTimestamp") ||
                !strcmp(k, "generation"))
                json_object_del(v, k);
            else {
                mask(im, x);
                /* nothing left to compare: leave the mapping out too */
                if (json_is_object(x) && json_object_size(x) == 0)
                    json_object_del(v, k);
            }
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, x) mask(im, x);
    }
}

/* The body a controller's recorded write must match, or NULL. */
static json_t *expected_body(importer *im, const scn__audit_event *e)
{
    const json_t *req = json_object_get(e->ev, "requestObject");
    json_t *meta, *b;

    if (!req || !strcmp(e->verb, "delete") || !strcmp(e->verb, "deletecollection"))
        return NULL;
    b = json_deep_copy(req);
    meta = json_object_get(b, "metadata");
    /* a generated name, or a name chosen instead: how it is named is the
     * controller's business */
    if (json_is_object(meta) && jstr(meta, "generateName")) {
        json_object_del(meta, "generateName");
        json_object_del(meta, "name");
    }
    mask(im, b);
    return b;
}

static void expect_write(importer *im, const scn__audit_event *e, const char *uri)
{
    char path[2048], key[1024];
    const char *gen;

    path_only(uri, path, sizeof path);
    make_key(key, sizeof key, e->group, e->resource, e->ns, e->name);
    gen = jstr(im->gen_names, key);
    if (gen && e->name && strcmp(e->verb, "create") != 0) {
        /* a name the controller generated: any name with its prefix */
        char *at = strstr(path, e->name);
        if (at) {
            char masked[2048];
            snprintf(masked, sizeof masked, "%.*s%s*%s", (int)(at - path), path, gen,
                     at + strlen(e->name));
            snprintf(path, sizeof path, "%s", masked);
        }
    }
    json_t *step = json_pack("{s:{s:s, s:s, s:i}}", "expectWrite", "verb", e->verb, "path", path,
                             "status", e->code);
    json_t *body = expected_body(im, e);
    if (body && json_object_get(step, "expectWrite"))
        json_object_set_new(json_object_get(step, "expectWrite"), "body", body);
    else
        json_decref(body);
    put_yaml(&im->steps, "  - ", "    ", step);
    json_decref(step);
    im->st.expected++;
}

/* A namespace a replayed write needs: a fixture unless the log creates it
 * or the server has it from the start (the log shows it existed). */
static void ensure_namespace(importer *im, const char *ns)
{
    char key[1024];

    if (!ns || !*ns || !strcmp(ns, "default") || !strcmp(ns, "kube-system") ||
        !strcmp(ns, "kube-public"))
        return;
    make_key(key, sizeof key, "", "namespaces", NULL, ns);
    if (json_object_get(im->created, key) || json_object_get(im->fixtures, key))
        return;
    json_t *obj = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                            "metadata", "name", ns);
    if (obj)
        add_fixture(im, key, obj);
    json_decref(obj);
}

/* Does the importer's server (built-in kinds, and the CRDs the snapshot
 * and the log define so far) serve group/version/resource? Unknown
 * versions (no objectRef.apiVersion) are given the benefit of the doubt. */
static bool served(importer *im, const char *group, const char *version, const char *resource)
{
    char path[400];
    int status = 0;
    json_t *rl = NULL, *r;
    size_t i;
    bool yes = false;

    if (!version || !*version || !resource)
        return true;
    if (group && *group)
        snprintf(path, sizeof path, "/apis/%s/%s", group, version);
    else
        snprintf(path, sizeof path, "/api/%s", version);
    json_t *names = json_object_get(im->served, path);
    if (!names) {
        names = json_object();
        if (fakeapi_request(im->srv, "GET", path, NULL, NULL, &status, &rl) == 0 && status == 200) {
            json_array_foreach(json_object_get(rl, "resources"), i, r)
            {
                if (jstr(r, "name"))
                    json_object_set_new(names, jstr(r, "name"), json_true());
            }
        }
        json_decref(rl);
        json_object_set_new(im->served, path, names);
    }
    yes = json_object_get(names, resource) != NULL;
    return yes;
}

/* The object key of event e (a create's name from its answer). */
static void event_key(const scn__audit_event *e, char *buf, size_t len)
{
    make_key(buf, len, e->group, e->resource, e->ns,
             !strcmp(e->verb, "create") ? created_name(e) : e->name);
}

/* What a read after event i, before any other write of key, showed of the
 * object (a new reference), or NULL: the state a bodiless write left. */
static json_t *state_after(importer *im, size_t i, const char *key)
{
    for (size_t j = i + 1; j < im->log.n; j++) {
        const scn__audit_event *f = &im->log.ev[j];
        char k[1024];
        if (!f->resource || f->subresource)
            continue;
        const json_t *resp = json_object_get(f->ev, "responseObject");
        if (scn__audit_is_write(f->verb)) {
            event_key(f, k, sizeof k);
            if (!strcmp(k, key) && f->code >= 200 && f->code <= 299)
                return NULL;
            continue;
        }
        if (!strcmp(f->verb, "get") && f->code == 200 && jstr(resp, "kind") &&
            strcmp(jstr(resp, "kind"), "Status") != 0) {
            event_key(f, k, sizeof k);
            if (!strcmp(k, key))
                return json_deep_copy(resp);
        }
    }
    return NULL;
}

static int write_step(importer *im, size_t index)
{
    const scn__audit_event *e = &im->log.ev[index];
    char what[1024], key[1024];
    const char *ctrl = controller_of(im, e);
    const json_t *req = json_object_get(e->ev, "requestObject");
    json_t *body = NULL, *step;
    const scn__gv_map *m = scn__gv_find(e->group, e->version, e->resource);
    char *uri = NULL;
    const char *name = !strcmp(e->verb, "create") ? created_name(e) : e->name;
    bool ok = e->code >= 200 && e->code <= 299;

    describe(e, name, what, sizeof what);
    make_key(key, sizeof key, e->group, e->resource, e->ns, name);
    /* an object first written here existed before the log if this is no create */
    /* (a 201 to an apply or an update created the object too) */
    if (!json_object_get(im->touched, key) && strcmp(e->verb, "create") != 0 &&
        strcmp(e->verb, "deletecollection") != 0 && ok && e->code != 201) {
        const json_t *snap = json_object_get(im->snapshot, key);
        const json_t *resp = json_object_get(e->ev, "responseObject");
        if (snap)
            add_fixture(im, key, snap);
        else if (resp && jstr(resp, "kind") && strcmp(jstr(resp, "kind"), "Status") != 0 &&
                 !e->subresource)
            add_fixture(im, key, resp);
        else if (!json_object_get(im->fixtures, key))
            json_object_set_new(im->unknown, key, json_true());
    }
    if (!strcmp(e->verb, "create") || e->code == 201)
        json_object_del(im->unknown, key);
    if (strcmp(e->verb, "deletecollection") != 0)
        json_object_set_new(im->touched, key, json_true());
    if (!strcmp(e->verb, "create") && ctrl && name) {
        const char *gen = jstr(json_object_get(json_object_get(e->ev, "requestObject"), "metadata"),
                               "generateName");
        if (!gen)
            gen = jstr(json_object_get(json_object_get(e->ev, "responseObject"), "metadata"),
                       "generateName");
        if (gen && *gen) {
            json_object_set_new(im->gen_names, key, json_string(gen));
            json_object_set_new(im->gen_values, name, json_true());
        }
    }
    if (ctrl) {
        if (!im->o->expect_writes || !ok) {
            char pre[300];
            snprintf(pre, sizeof pre, "not replayed (%s, under test): ", ctrl);
            put_note(&im->steps, pre, what);
            im->st.dropped++;
            return 0;
        }
        put_comment(&im->steps, "  ", what);
        put_advance(im, e->received_ns);
        expect_write(im, e, e->uri);
        return 0;
    }
    if (ok && server_side(e)) {
        put_note(&im->steps, "not replayed (fakeapi does this itself): ", what);
        im->st.dropped++;
        return 0;
    }
    if (!ok) {
        put_note(&im->steps, "not replayed (it changed nothing): ", what);
        im->st.dropped++;
        return 0;
    }
    if (strstr(e->uri, "dryRun=")) {
        put_note(&im->steps, "not replayed (a dry run): ", what);
        im->st.dropped++;
        return 0;
    }
    if (m && !m->to_group) {
        warn(im,
             "%s:%d: %s/%s %s has no trivial conversion to a version fakeapi serves; not "
             "replayed",
             e->file, e->line, e->group, e->version, e->resource);
        put_note(&im->steps, "GAP: no trivial conversion to a served version: ", what);
        im->st.gaps++;
        return 0;
    }
    if (!served(im, m ? m->to_group : e->group, m ? m->to_version : e->version, e->resource)) {
        warn(im,
             "%s:%d: fakeapi does not serve %s%s%s %s (a custom resource? put its CRD in the "
             "snapshot); not replayed",
             e->file, e->line,
             m          ? m->to_group
             : e->group ? e->group
                        : "",
             (m ? m->to_group : e->group) && *(m ? m->to_group : e->group) ? "/" : "",
             m            ? m->to_version
             : e->version ? e->version
                          : "",
             e->resource);
        put_note(&im->steps, "GAP: a resource fakeapi does not serve: ", what);
        im->st.gaps++;
        return 0;
    }
    if (json_object_get(im->unknown, key)) {
        warn(im,
             "%s:%d: %s of %s %s, which existed before the log, but neither the snapshot "
             "nor a recorded answer shows it; not replayed",
             e->file, e->line, e->verb, e->resource, name ? name : "");
        put_note(&im->steps, "GAP: its object's state before the log is unknown: ", what);
        im->st.gaps++;
        return 0;
    }
    if (e->name && jstr(im->gen_names, key)) {
        warn(im,
             "%s:%d: %s of %s %s, a name the controllers under test generated (a replay "
             "generates another); not replayed",
             e->file, e->line, e->verb, e->resource, e->name);
        put_note(&im->steps,
                 "GAP: its object's name was generated by a controller under test: ", what);
        im->st.gaps++;
        return 0;
    }
    bool needs_body = strcmp(e->verb, "delete") != 0 && strcmp(e->verb, "deletecollection") != 0;
    const char *verb = e->verb, *from = NULL;
    json_t *state = NULL;
    if (needs_body && !req) {
        /* a bodiless write: the object it made, if something shows it */
        const json_t *snap = json_object_get(im->snapshot, key);
        if (!strcmp(e->verb, "create") && snap) {
            state = stripped(snap);
            from = "the snapshot's copy of the object";
        } else if ((state = state_after(im, index, key))) {
            json_t *st = stripped(state);
            json_decref(state);
            state = st;
            from = "the object as a later read showed it";
            if (strcmp(e->verb, "create") != 0)
                verb = "update";
        }
        if (!state) {
            warn(im, "%s:%d: %s at level %s has no request body; not replayed", e->file, e->line,
                 e->verb, e->level);
            put_note(&im->steps, "GAP: no request body at this level: ", what);
            im->st.gaps++;
            return 0;
        }
        if (!strcmp(verb, "update") && json_is_object(json_object_get(state, "metadata")))
            json_object_set_new(json_object_get(state, "metadata"), "resourceVersion",
                                json_string("0"));
    }
    body = req ? json_deep_copy(req) : state;
    bool had_rv = body && jstr(json_object_get(body, "metadata"), "resourceVersion");
    if (body)
        drop_preconditions(body, verb);
    if (body && !strcmp(e->verb, "create") && name) {
        /* a generated name is replayed as the name it got */
        json_t *meta = json_object_get(body, "metadata");
        if (json_is_object(meta) && !jstr(meta, "name"))
            json_object_set_new(meta, "name", json_string(name));
    }
    if (m) {
        uri = scn__gv_map_uri(e->uri, m);
        if (body && (!strcmp(verb, "create") || !strcmp(verb, "update")))
            scn__gv_convert(body, m);
    } else {
        uri = strdup(e->uri);
    }
    if (uri && strcmp(verb, e->verb) != 0) /* a patch replayed as an update: no patch query */
        uri[strcspn(uri, "?")] = '\0';
    if (!uri) {
        json_decref(body);
        return SCN_ERR_NOMEM;
    }
    step = json_pack("{s:{s:s, s:s}}", "request", "method", method_of(verb), "path", uri);
    json_t *r = json_object_get(step, "request");
    if (!strcmp(verb, "patch"))
        json_object_set_new(r, "contentType", json_string(patch_type(e, body)));
    if (body)
        json_object_set_new(r, "body", body);
    json_object_set_new(r, "status", json_integer(e->code));
    if (had_rv && !strcmp(verb, "update") && json_is_object(body))
        json_object_set_new(r, "currentResourceVersion", json_true());
    put_comment(&im->steps, "  ", what);
    if (from)
        put(&im->steps, "  # level %s, no body: replayed as %s %s of %s\n", e->level,
            !strcmp(verb, "update") ? "an" : "a", verb, from);
    if (m)
        put(&im->steps, "  # %s/%s mapped to %s/%s\n", m->group, m->version, m->to_group,
            m->to_version);
    put_advance(im, e->received_ns);
    put_yaml(&im->steps, "  - ", "    ", step);
    json_decref(step);
    free(uri);
    ensure_namespace(im, e->ns);
    im->st.replayed++;
    return 0;
}

/* A CRD the log creates: the importer's server learns its kinds. */
static void learn_crd(importer *im, const scn__audit_event *e)
{
    const json_t *obj = json_object_get(e->ev, "responseObject");
    if (!jstr(obj, "kind"))
        obj = json_object_get(e->ev, "requestObject");
    /* a whole CRD only (a patch's body is not one) */
    if (!obj || !e->resource || strcmp(e->resource, "customresourcedefinitions") != 0 ||
        !jstr(obj, "kind") || strcmp(jstr(obj, "kind"), "CustomResourceDefinition") != 0)
        return;
    json_t *c = stripped(obj);
    char *text = json_dumps(c, JSON_COMPACT);
    fakeapi_error ferr = {0};
    if (text)
        fakeapi_apply(im->srv, text, strlen(text), &ferr);
    free(text);
    json_decref(c);
    json_object_clear(im->served); /* its kinds are served now */
}

/* The kind of an object's resource, as any object of it shows. */
static void learn_kind(importer *im, const char *group, const char *resource, const json_t *obj)
{
    char gr[400];
    const char *av = jstr(obj, "apiVersion"), *kind = jstr(obj, "kind");
    if (!av || !kind || !resource || !strcmp(kind, "Status") || !strcmp(kind, "Scale") ||
        !strcmp(kind, "DeleteOptions"))
        return;
    snprintf(gr, sizeof gr, "%s/%s", group ? group : "", resource);
    if (!json_object_get(im->kinds, gr))
        json_object_set_new(im->kinds, gr, json_pack("[s, s]", av, kind));
}

/* What a successful write does to the set of objects (--expect-state). */
static void track_state(importer *im, const scn__audit_event *e)
{
    char key[1024], set[800];
    const char *name = !strcmp(e->verb, "create") ? created_name(e) : e->name;

    if (e->code < 200 || e->code > 299 || strstr(e->uri, "dryRun="))
        return;
    snprintf(set, sizeof set, "%s/%s/%s", e->group ? e->group : "", e->resource,
             e->ns ? e->ns : "");
    if (!e->subresource) {
        learn_kind(im, e->group, e->resource, json_object_get(e->ev, "requestObject"));
        learn_kind(im, e->group, e->resource, json_object_get(e->ev, "responseObject"));
    }
    if (controller_of(im, e))
        json_object_set_new(im->ctrl_sets, set, json_true());
    make_key(key, sizeof key, e->group, e->resource, e->ns, name);
    if (e->subresource)
        return;
    if (!strcmp(e->verb, "create") || e->code == 201)
        json_object_set_new(im->alive, key, json_true());
    else if (!strcmp(e->verb, "delete"))
        json_object_set_new(im->alive, key, json_false());
    else if (!strcmp(e->verb, "deletecollection"))
        json_object_set_new(im->poisoned, set, json_true());
}

/* --expect-state: the last steps expect as many objects of each kind the
 * controllers under test wrote (in each namespace) as the log left. */
static void expect_state(importer *im)
{
    const char *set, *key;
    json_t *v, *x;

    json_object_foreach(im->ctrl_sets, set, v)
    {
        char gr[800];
        const char *slash = strrchr(set, '/');
        snprintf(gr, sizeof gr, "%.*s", (int)(slash - set), set);
        const char *ns = slash + 1;
        json_t *kind = json_object_get(im->kinds, gr);
        if (json_object_get(im->poisoned, set) || !kind) {
            warn(im, "%s in %s: %s; no expectation of how many there are at the end", gr,
                 *ns ? ns : "the cluster",
                 kind ? "a deletecollection leaves it unknown" : "no recorded body names its kind");
            continue;
        }
        size_t n = 0, plen = strlen(set);
        /* keys are group/resource/ns/name: those of this set, alive at the end */
        json_object_foreach(im->alive, key, x)
        {
            if (!strncmp(key, set, plen) && key[plen] == '/' && json_is_true(x))
                n++;
        }
        json_object_foreach(im->fixtures, key, x)
        {
            if (!strncmp(key, set, plen) && key[plen] == '/' && !json_object_get(im->alive, key))
                n++;
        }
        json_t *step = json_pack("{s:{s:{s:O, s:O, s:I}}}", "expect", "count", "apiVersion",
                                 json_array_get(kind, 0), "kind", json_array_get(kind, 1), "equals",
                                 (json_int_t)n);
        if (*ns)
            json_object_set_new(json_object_get(json_object_get(step, "expect"), "count"),
                                "namespace", json_string(ns));
        put(&im->steps, "  # the log ends with %zu of %s in %s\n", n, gr, *ns ? ns : "the cluster");
        put_yaml(&im->steps, "  - ", "    ", step);
        json_decref(step);
        im->st.expected++;
    }
}

static int walk(importer *im)
{
    for (size_t i = 0; i < im->log.n; i++) {
        const scn__audit_event *e = &im->log.ev[i];
        int rc;
        if (scn__audit_is_write(e->verb)) {
            /* a CRD made or changed (an apply is a patch): its kinds are served */
            if (e->code >= 200 && e->code <= 299 && strcmp(e->verb, "delete") != 0 &&
                strcmp(e->verb, "deletecollection") != 0)
                learn_crd(im, e);
            if ((rc = write_step(im, i)) != 0)
                return rc;
            track_state(im, e);
        } else if ((!strcmp(e->verb, "get") || !strcmp(e->verb, "list")) && e->code >= 200 &&
                   e->code <= 299) {
            reveal(im, e, json_object_get(e->ev, "responseObject"));
        }
    }
    return 0;
}

static int fixture_rank(const json_t *obj)
{
    const char *kind = jstr(obj, "kind");
    if (kind && !strcmp(kind, "Namespace"))
        return 0;
    if (kind && !strcmp(kind, "CustomResourceDefinition"))
        return 1;
    return 2;
}

/* "Kind/namespace/name" of a fixture, or of the owner a reference names
 * (in the dependent's namespace, or cluster-scoped). */
static void owner_id(char *buf, size_t len, const char *kind, const char *ns, const char *name)
{
    snprintf(buf, len, "%s/%s/%s", kind ? kind : "", ns ? ns : "", name ? name : "");
}

/* The fixture an ownerReference names, or NULL. */
static json_t *owner_of(json_t *ids, const json_t *ref, const char *ns)
{
    char id[800];
    json_t *k;
    owner_id(id, sizeof id, jstr(ref, "kind"), ns, jstr(ref, "name"));
    if ((k = json_object_get(ids, id)))
        return k;
    owner_id(id, sizeof id, jstr(ref, "kind"), NULL, jstr(ref, "name"));
    return json_object_get(ids, id);
}

/* The fixtures in the order they are applied: Namespaces, CRDs, then owners
 * before their dependents (a replay binds a reference to its owner by name
 * when the dependent is applied, so the owner must be there). A reference
 * to an owner that is no fixture is left out with a warning: its uid is
 * another cluster's, and the replay's garbage collector would delete the
 * dependent at once. A new array of keys. */
static json_t *fixture_order(importer *im)
{
    json_t *ids = json_object(), *placed = json_object(), *out = json_array(), *key;
    size_t i;

    json_array_foreach(im->order, i, key)
    {
        json_t *obj = json_object_get(im->fixtures, json_string_value(key));
        const json_t *meta = json_object_get(obj, "metadata");
        char id[800];
        owner_id(id, sizeof id, jstr(obj, "kind"), jstr(meta, "namespace"), jstr(meta, "name"));
        json_object_set(ids, id, key);
    }
    json_array_foreach(im->order, i, key)
    {
        json_t *obj = json_object_get(im->fixtures, json_string_value(key));
        json_t *meta = json_object_get(obj, "metadata");
        json_t *refs = json_object_get(meta, "ownerReferences");
        for (size_t r = json_array_size(refs); r-- > 0;) {
            json_t *ref = json_array_get(refs, r);
            if (owner_of(ids, ref, jstr(meta, "namespace")))
                continue;
            warn(im,
                 "fixture %s: its owner %s %s is no fixture; the ownerReference is left out "
                 "(the replay's garbage collector would delete it)",
                 json_string_value(key), jstr(ref, "kind") ? jstr(ref, "kind") : "?",
                 jstr(ref, "name") ? jstr(ref, "name") : "?");
            json_array_remove(refs, r);
        }
        if (refs && json_array_size(refs) == 0)
            json_object_del(meta, "ownerReferences");
    }
    for (int rank = 0; rank < 3; rank++) {
        bool progress = true;
        while (progress) {
            progress = false;
            json_array_foreach(im->order, i, key)
            {
                const char *k = json_string_value(key);
                json_t *obj = json_object_get(im->fixtures, k);
                json_t *meta = json_object_get(obj, "metadata"), *ref;
                size_t r;
                bool ready = true;
                if (fixture_rank(obj) != rank || json_object_get(placed, k))
                    continue;
                json_array_foreach(json_object_get(meta, "ownerReferences"), r, ref)
                {
                    json_t *owner = owner_of(ids, ref, jstr(meta, "namespace"));
                    if (owner && !json_object_get(placed, json_string_value(owner)))
                        ready = false;
                }
                if (!ready)
                    continue;
                json_object_set_new(placed, k, json_true());
                json_array_append(out, key);
                progress = true;
            }
        }
        /* a cycle of owners: the rest in the order found */
        json_array_foreach(im->order, i, key)
        {
            const char *k = json_string_value(key);
            if (fixture_rank(json_object_get(im->fixtures, k)) == rank &&
                !json_object_get(placed, k)) {
                json_object_set_new(placed, k, json_true());
                json_array_append(out, key);
            }
        }
    }
    json_decref(ids);
    json_decref(placed);
    return out;
}

static void emit(importer *im, outbuf *out)
{
    const scn_import_options *o = im->o;
    size_t i;
    json_t *key;

    put(out, "# Imported from an audit log:\n#   scenario import audit");
    for (i = 0; i < o->n_files; i++)
        put(out, " %s", o->files[i]);
    if (o->snapshot)
        put(out, " --snapshot %s", o->snapshot);
    for (i = 0; i < o->n_controllers; i++)
        put(out, " --controller %s", o->controllers[i]);
    for (i = 0; i < o->n_actor_users; i++)
        put(out, " --actor-user %s", o->actor_users[i]);
    for (i = 0; i < o->n_actor_agents; i++)
        put(out, " --actor-agent '%s'", o->actor_agents[i]);
    if (o->expect_writes)
        put(out, " --expect-writes");
    if (o->expect_state)
        put(out, " --expect-state");
    if (o->name)
        put(out, " --name %s", o->name);
    put(out,
        "\n# %zu events, %zu requests; %zu fixtures, %zu writes replayed, %zu expected, "
        "%zu not replayed, %zu gaps.\n",
        im->st.events, im->st.requests, im->st.fixtures, im->st.replayed, im->st.expected,
        im->st.dropped, im->st.gaps);
    put(out, "# Virtual time 0 is the first event's requestReceivedTimestamp.\n");
    json_t *nm = json_string(o->name ? o->name : "imported");
    char *name = json_dumps(nm, JSON_ENCODE_ANY);
    json_decref(nm);
    put(out, "name: %s\n", name ? name : "\"imported\"");
    free(name);
    if (o->n_controllers) {
        put(out, "controllers:\n");
        for (i = 0; i < o->n_controllers; i++) {
            json_t *s = json_string(o->controllers[i]);
            char *t = json_dumps(s, JSON_ENCODE_ANY);
            put(out, "  - %s\n", t ? t : "\"\"");
            free(t);
            json_decref(s);
        }
    }
    int64_t span = im->log.n ? im->log.ev[im->log.n - 1].received_ns - im->t0 : 0;
    if (span > 23 * 3600 * INT64_C(1000000000))
        put(out, "maxVirtualTime: %" PRId64 "s\n", span / 1000000000 + 3600);
    if (json_array_size(im->order)) {
        json_t *order = fixture_order(im);
        put(out, "fixtures:\n");
        json_array_foreach(order, i, key)
            put_yaml(out, "  - ", "    ", json_object_get(im->fixtures, json_string_value(key)));
        json_decref(order);
    }
    put(out, "steps:\n");
    if (im->steps.len)
        put(out, "%s", im->steps.s);
    if (!im->st.replayed && !im->st.expected)
        put(out, "  - advance: 0s\n");
}

int scn_audit_import(const scn_import_options *o, char **yaml, scn_import_stats *stats,
                     scn_error *err)
{
    importer im = {.o = o, .err = err};
    fakeapi_options fo = {.no_http = true, .seed = 1};
    outbuf out = {0};
    int rc = 0;

    if (!o || !yaml || o->n_files == 0)
        return SCN_ERR_INPUT;
    im.snapshot = json_object();
    im.fixtures = json_object();
    im.order = json_array();
    im.touched = json_object();
    im.gen_names = json_object();
    im.unknown = json_object();
    im.gen_values = json_object();
    im.alive = json_object();
    im.kinds = json_object();
    im.ctrl_sets = json_object();
    im.poisoned = json_object();
    im.served = json_object();
    if (!im.served || !im.alive || !im.kinds || !im.ctrl_sets || !im.poisoned || !im.unknown ||
        !im.gen_values || !im.snapshot || !im.fixtures || !im.order || !im.touched ||
        !im.gen_names) {
        rc = SCN_ERR_NOMEM;
        goto out;
    }
    im.log.lean = true;
    for (size_t i = 0; i < o->n_files && rc == 0; i++)
        rc = scn__audit_read(&im.log, o->files[i], err);
    if (rc != 0)
        goto out;
    if (im.log.n == 0 && scn__audit_requests(&im.log) == 0) {
        if (err) {
            memset(err, 0, sizeof *err);
            err->code = SCN_ERR_INPUT;
            snprintf(err->file, sizeof err->file, "%s", o->files[0]);
            snprintf(err->message, sizeof err->message, "holds no audit events");
        }
        rc = SCN_ERR_INPUT;
        goto out;
    }
    scn__audit_sort(&im.log);
    im.st.events = im.log.raw;
    im.st.requests = scn__audit_requests(&im.log);
    if (fakeapi_start(&fo, &im.srv) < 0) {
        rc = SCN_ERR_SETUP;
        goto out;
    }
    if (o->snapshot && (rc = load_snapshot(&im)) != 0)
        goto out;
    im.t0 = im.log.first_ns; /* the first event, kept or not */
    im.last_ns = im.t0;
    /* The snapshot's objects exist from the start, unless the log creates them. */
    const char *k;
    json_t *v;
    json_t *created = im.created = json_object();
    if (!created) {
        rc = SCN_ERR_NOMEM;
        goto out;
    }
    for (size_t i = 0; i < im.log.n; i++) {
        const scn__audit_event *e = &im.log.ev[i];
        if ((!strcmp(e->verb, "create") && e->code >= 200 && e->code <= 299) ||
            (scn__audit_is_write(e->verb) && e->code == 201)) {
            char key[1024];
            make_key(key, sizeof key, e->group, e->resource, e->ns, created_name(e));
            json_object_set_new(created, key, json_true());
        }
    }
    json_object_foreach(im.snapshot, k, v)
    {
        if (json_object_get(created, k)) {
            warn(&im,
                 "%s: %s is created by the log; the snapshot's copy is not a fixture (was the "
                 "snapshot taken after the log?)",
                 o->snapshot, k);
            continue;
        }
        add_fixture(&im, k, v);
    }
    if ((rc = walk(&im)) != 0)
        goto out;
    if (o->expect_state)
        expect_state(&im);
    im.st.fixtures = json_array_size(im.order);
    emit(&im, &out);
    if (im.steps.failed || out.failed) {
        rc = SCN_ERR_NOMEM;
        goto out;
    }
    *yaml = out.s;
    out.s = NULL;
    if (stats)
        *stats = im.st;
out:
    free(out.s);
    free(im.steps.s);
    fakeapi_stop(im.srv);
    scn__audit_log_free(&im.log);
    json_decref(im.snapshot);
    json_decref(im.fixtures);
    json_decref(im.order);
    json_decref(im.touched);
    json_decref(im.gen_names);
    json_decref(im.created);
    json_decref(im.unknown);
    json_decref(im.gen_values);
    json_decref(im.alive);
    json_decref(im.kinds);
    json_decref(im.ctrl_sets);
    json_decref(im.poisoned);
    json_decref(im.served);
    return rc;
}
