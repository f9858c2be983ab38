/*
 * client.c - the verbs of ctrl_client: paths from discovery, queries and
 * bodies built here, HTTP through the transport, JSON back to the caller;
 * and watches, whose stream is cut into lines and delivered event by event.
 *
 * A client holds no mutable state of its own: its transport and discovery
 * cache are thread-safe and shared with its children, so every verb may run
 * on any thread at once.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discovery.h"
#include "kh/jsonfast.h"
#include "error_int.h"
#include "transport.h"

#define MAX_URL (1024 * 1024)
#define DEFAULT_PAGE 500

struct ctrl_client {
    ctrl__transport *t;
    ctrl__discovery *d;
    char *user_agent;
    ctrl_reader reader; /* reads from a cache; reader.get NULL = none */
};

void ctrl_client_set_reader(ctrl_client *c, const ctrl_reader *r)
{
    c->reader = r ? *r : (ctrl_reader){0};
}

struct ctrl_watch {
    ctrl__cancel *cancel;
};

/* ---- lifecycle ---- */

int ctrl_client_new(const ctrl_config *cfg, const ctrl_client_options *opts, ctrl_client **out,
                    ctrl_error *err)
{
    if (!cfg || !out)
        return ctrl__error_set(err, CTRL_ERR_ARG, "config and out are required");
    ctrl_client *c = calloc(1, sizeof *c);
    if (!c)
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    int rc = ctrl__transport_new(cfg, opts, &c->t, err);
    if (rc < 0) {
        free(c);
        return rc;
    }
    if (ctrl__discovery_new(&c->d) < 0 ||
        !(c->user_agent = strdup(ctrl__transport_user_agent(c->t)))) {
        ctrl_client_free(c);
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    }
    *out = c;
    return 0;
}

int ctrl_client_new_for(ctrl_client *parent, const char *user_agent, ctrl_client **out,
                        ctrl_error *err)
{
    if (!parent || !user_agent || !out)
        return ctrl__error_set(err, CTRL_ERR_ARG, "parent, user_agent and out are required");
    ctrl_client *c = calloc(1, sizeof *c);
    if (!c || !(c->user_agent = strdup(user_agent))) {
        free(c);
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    }
    c->t = ctrl__transport_ref(parent->t);
    c->d = ctrl__discovery_ref(parent->d);
    *out = c;
    return 0;
}

void ctrl_client_free(ctrl_client *c)
{
    if (!c)
        return;
    ctrl__transport_unref(c->t);
    ctrl__discovery_unref(c->d);
    free(c->user_agent);
    free(c);
}

const char *ctrl_client_user_agent(const ctrl_client *c)
{
    return c->user_agent;
}
const char *ctrl_client_namespace(const ctrl_client *c)
{
    return ctrl__transport_namespace(c->t);
}
const char *ctrl_client_server(const ctrl_client *c)
{
    return ctrl__transport_server(c->t);
}

int ctrl_client_resource_for(ctrl_client *c, const char *api_version, const char *kind,
                             ctrl_resource_info *out, ctrl_error *err)
{
    if (!c)
        return ctrl__error_set(err, CTRL_ERR_ARG, "client is required");
    return ctrl__discovery_lookup(c->d, c->t, api_version, kind, out, err);
}

void ctrl_client_discovery_invalidate(ctrl_client *c)
{
    ctrl__discovery_invalidate(c->d);
}

/* ---- URL building ---- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool bad; /* out of memory or over MAX_URL */
} sbuf;

static void sb_addn(sbuf *b, const char *s, size_t n)
{
    if (b->bad)
        return;
    if (b->len + n + 1 > MAX_URL) {
        b->bad = true;
        return;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->bad = true;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_add(sbuf *b, const char *s)
{
    sb_addn(b, s, strlen(s));
}

/* Percent-encode everything but RFC 3986 unreserved characters. */
static void sb_esc(sbuf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
            sb_addn(b, (const char *)&ch, 1);
        } else {
            char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};
            sb_addn(b, e, 3);
        }
    }
}

/* Append "?k=v" or "&k=v" (v escaped); NULL or empty v adds nothing. */
static void sb_query(sbuf *b, bool *first, const char *k, const char *v)
{
    if (!v || !*v)
        return;
    sb_add(b, *first ? "?" : "&");
    *first = false;
    sb_add(b, k);
    sb_add(b, "=");
    sb_esc(b, v);
}

static bool valid_segment(const char *s)
{
    return s && *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/*
 * Resolve the kind and build its path: collection when name is NULL, else
 * the object, with an optional subresource. need_ns: an object verb on a
 * namespaced kind needs ns.
 */
static int build_path(ctrl_client *c, const char *api_version, const char *kind, const char *ns,
                      const char *name, const char *sub, bool need_ns, ctrl_resource_info *info,
                      sbuf *b, ctrl_error *err)
{
    int rc = ctrl__discovery_lookup(c->d, c->t, api_version, kind, info, err);
    if (rc < 0)
        return rc;
    bool use_ns = info->namespaced && ns && *ns;
    if (info->namespaced && need_ns && !use_ns)
        return ctrl__error_set(err, CTRL_ERR_ARG, "%s %s is namespaced: a namespace is required",
                               api_version, info->kind);
    if (use_ns && !valid_segment(ns))
        return ctrl__error_set(err, CTRL_ERR_ARG, "invalid namespace \"%s\"", ns);
    if (name && !valid_segment(name))
        return ctrl__error_set(err, CTRL_ERR_ARG, "invalid name \"%s\"", name);
    sb_add(b, *info->group ? "/apis/" : "/api/");
    if (*info->group) {
        sb_add(b, info->group);
        sb_add(b, "/");
    }
    sb_add(b, info->version);
    if (use_ns) {
        sb_add(b, "/namespaces/");
        sb_esc(b, ns);
    }
    sb_add(b, "/");
    sb_add(b, info->resource);
    if (name) {
        sb_add(b, "/");
        sb_esc(b, name);
        if (sub) {
            sb_add(b, "/");
            sb_add(b, sub);
        }
    }
    return b->bad ? ctrl__error_set(err, CTRL_ERR_NOMEM, "URL too long or out of memory") : 0;
}

/* An answer's document, as json_loadb(JSON_DECODE_ANY) gives it: objects
 * and arrays (every answer but a rare scalar) by the fast parse, which
 * answers as jansson does for them. */
static json_t *parse_answer(const char *body, size_t len)
{
    size_t i = 0;
    while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r'))
        i++;
    if (i < len && (body[i] == '{' || body[i] == '['))
        return kh_json_loadb(body, len, 0, NULL);
    return json_loadb(body, len, JSON_DECODE_ANY, NULL);
}

/* A request's body: json_dumps(JSON_COMPACT | JSON_ENCODE_ANY)'s text, by
 * the fast dump; jansson judges strings that are not valid UTF-8 (it
 * refuses them). */
static char *dump_body(const json_t *body, size_t *len)
{
    char *text = kh_json_dump_compact(body, len);
    if (text && kh_json_utf8_ok(text, *len))
        return text;
    free(text);
    text = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
    *len = text ? strlen(text) : 0;
    return text;
}

/*
 * One request with an optional JSON body; *out (if wanted) gets the parsed
 * answer (a JSON string when the answer is not JSON, null when empty).
 */
static int call(ctrl_client *c, const char *method, const char *path, const json_t *body,
                const char *content_type, bool idempotent, json_t **out, ctrl_error *err)
{
    char *text = NULL;
    size_t text_len = 0;
    if (body && !(text = dump_body(body, &text_len)))
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "cannot serialise the request body");
    ctrl__request req = {.method = method,
                         .path = path,
                         .content_type =
                             body ? (content_type ? content_type : "application/json") : NULL,
                         .body = text,
                         .body_len = text_len,
                         .user_agent = c->user_agent,
                         .idempotent = idempotent};
    ctrl__response resp;
    /* Details are kept even when the caller wants none: the controller
     * logs them when a reconcile fails with this code. */
    ctrl_error local = {0};
    ctrl_error *e = err ? err : &local;
    int rc = ctrl__transport_do(c->t, &req, &resp, e);
    free(text);
    if (rc < 0) {
        ctrl__failure_note(method, path, e);
        ctrl_error_deinit(&local);
        return rc;
    }
    if (out) {
        json_t *doc;
        if (!resp.len)
            doc = json_null();
        else if (!(doc = parse_answer(resp.body, resp.len)))
            doc = json_stringn_nocheck(resp.body, resp.len);
        if (!doc) {
            ctrl__response_deinit(&resp);
            return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
        }
        *out = doc;
    }
    ctrl__response_deinit(&resp);
    return 0;
}

/* Like call, but the answer must be a JSON object. */
static int call_obj(ctrl_client *c, const char *method, const char *path, const json_t *body,
                    const char *content_type, bool idempotent, json_t **out, ctrl_error *err)
{
    json_t *doc = NULL;
    int rc = call(c, method, path, body, content_type, idempotent, out ? &doc : NULL, err);
    if (rc < 0 || !out)
        return rc;
    if (!json_is_object(doc)) {
        json_decref(doc);
        return ctrl__error_set(err, CTRL_ERR_PROTOCOL, "%s %s: the answer is not a JSON object",
                               method, path);
    }
    *out = doc;
    return 0;
}

/* ---- reads ---- */

/* A get, from the reader (get_shared: read-only callers) or the server. */
static int get(ctrl_client *c, const char *api_version, const char *kind, const char *ns,
               const char *name, bool shared, json_t **out, ctrl_error *err)
{
    if (!c || !name || !out)
        return ctrl__error_set(err, CTRL_ERR_ARG, "client, name and out are required");
    int (*fn)(void *, const char *, const char *, const char *, const char *, json_t **) =
        shared && c->reader.get_shared ? c->reader.get_shared : c->reader.get;
    if (fn) {
        int rc = fn(c->reader.ud, api_version, kind, ns, name, out);
        if (rc == CTRL_ERR_NOT_FOUND)
            return ctrl__error_set(err, CTRL_ERR_NOT_FOUND, "%s \"%s\" not found (cache)",
                                   kind ? kind : "", name);
        if (rc != 1)
            return rc;
    }
    ctrl_resource_info info;
    sbuf b = {0};
    int rc = build_path(c, api_version, kind, ns, name, NULL, true, &info, &b, err);
    if (rc == 0)
        rc = call_obj(c, "GET", b.p, NULL, NULL, true, out, err);
    free(b.p);
    return rc;
}

int ctrl_client_get(ctrl_client *c, const char *api_version, const char *kind, const char *ns,
                    const char *name, json_t **out, ctrl_error *err)
{
    return get(c, api_version, kind, ns, name, false, out, err);
}

int ctrl_client_get_shared(ctrl_client *c, const char *api_version, const char *kind,
                           const char *ns, const char *name, json_t **out, ctrl_error *err)
{
    return get(c, api_version, kind, ns, name, true, out, err);
}

static void add_selectors(sbuf *b, bool *first, const ctrl_list_options *o)
{
    sb_query(b, first, "labelSelector", o->label_selector);
    sb_query(b, first, "fieldSelector", o->field_selector);
}

/* Items of a list may lack apiVersion and kind: fill them in. */
static int fill_type(json_t *items, const char *api_version, const char *kind)
{
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        if (!json_is_object(it))
            continue;
        if (!json_object_get(it, "apiVersion") &&
            json_object_set_new(it, "apiVersion", json_string(api_version)) < 0)
            return CTRL_ERR_NOMEM;
        if (!json_object_get(it, "kind") && json_object_set_new(it, "kind", json_string(kind)) < 0)
            return CTRL_ERR_NOMEM;
    }
    return 0;
}

int ctrl_client_list(ctrl_client *c, const char *api_version, const char *kind, const char *ns,
                     const ctrl_list_options *opts, json_t **out, ctrl_error *err)
{
    static const ctrl_list_options none = {0};
    if (!c || !out)
        return ctrl__error_set(err, CTRL_ERR_ARG, "client and out are required");
    if (!opts)
        opts = &none;
    /* The cache answers plain lists: no field selector, no revision, no paging. */
    if (c->reader.list && !opts->field_selector && !opts->resource_version &&
        !opts->continue_token && !opts->single_page) {
        json_t *items = NULL;
        int rc = c->reader.list(c->reader.ud, api_version, kind, ns, opts->label_selector, &items);
        if (rc == 0) {
            char lk[256];
            snprintf(lk, sizeof lk, "%sList", kind ? kind : "");
            *out = json_pack("{s:s, s:s, s:{}, s:o}", "kind", lk, "apiVersion",
                             api_version ? api_version : "", "metadata", "items", items);
            return *out ? 0 : CTRL_ERR_NOMEM;
        }
        if (rc != 1)
            return rc;
    }
    ctrl_resource_info info;
    sbuf base = {0};
    json_t *result = NULL, *page = NULL;
    char *token = NULL;
    int rc = build_path(c, api_version, kind, ns, NULL, NULL, false, &info, &base, err);
    if (rc < 0)
        goto out;
    char limit[32];
    snprintf(limit, sizeof limit, "%d", opts->limit > 0 ? opts->limit : DEFAULT_PAGE);
    for (int n = 0;; n++) {
        sbuf b = {0};
        bool first = true;
        sb_add(&b, base.p);
        add_selectors(&b, &first, opts);
        sb_query(&b, &first, "limit", limit);
        if (n == 0) {
            sb_query(&b, &first, "resourceVersion", opts->resource_version);
            sb_query(&b, &first, "resourceVersionMatch", opts->resource_version_match);
            sb_query(&b, &first, "continue", opts->continue_token);
        } else {
            /* Later pages: the token carries the revision; a resourceVersion is a 400. */
            sb_query(&b, &first, "continue", token);
        }
        if (b.bad) {
            free(b.p);
            rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "URL too long or out of memory");
            goto out;
        }
        rc = call_obj(c, "GET", b.p, NULL, NULL, true, &page, err);
        free(b.p);
        if (rc < 0)
            goto out;
        json_t *items = json_object_get(page, "items");
        if (!json_is_array(items) && !json_is_null(items) && items) {
            rc = ctrl__error_set(err, CTRL_ERR_PROTOCOL, "list of %s: items is not an array",
                                 info.resource);
            goto out;
        }
        if (!result) {
            result = page;
            page = NULL;
            if (!json_is_array(json_object_get(result, "items")) &&
                json_object_set_new(result, "items", json_array()) < 0) {
                rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
                goto out;
            }
        } else if (json_is_array(items) &&
                   json_array_extend(json_object_get(result, "items"), items) < 0) {
            rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
            goto out;
        }
        json_t *meta = json_object_get(page ? page : result, "metadata");
        const char *next = json_string_value(json_object_get(meta, "continue"));
        free(token);
        token = next && *next ? strdup(next) : NULL;
        if (next && *next && !token) {
            rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
            goto out;
        }
        json_decref(page);
        page = NULL;
        if (!token || opts->single_page)
            break;
        if (n > 1000000) {
            rc = ctrl__error_set(err, CTRL_ERR_PROTOCOL, "list of %s: pagination never ends",
                                 info.resource);
            goto out;
        }
    }
    if (!opts->single_page) {
        json_t *meta = json_object_get(result, "metadata");
        if (json_is_object(meta)) {
            json_object_del(meta, "continue");
            json_object_del(meta, "remainingItemCount");
        }
    }
    if (fill_type(json_object_get(result, "items"), api_version, info.kind) < 0) {
        rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
        goto out;
    }
    *out = result;
    result = NULL;
out:
    free(token);
    json_decref(page);
    json_decref(result);
    free(base.p);
    return rc;
}

/* ---- writes ---- */

static void add_write_opts(sbuf *b, bool *first, bool dry_run, const char *field_manager,
                           const char *field_validation)
{
    if (dry_run)
        sb_query(b, first, "dryRun", "All");
    sb_query(b, first, "fieldManager", field_manager);
    sb_query(b, first, "fieldValidation", field_validation);
}

/* apiVersion, kind, namespace and name of an object to write. */
static int object_ids(const json_t *obj, const char **av, const char **kind, const char **ns,
                      const char **name, ctrl_error *err)
{
    if (!json_is_object(obj))
        return ctrl__error_set(err, CTRL_ERR_ARG, "the object must be a JSON object");
    json_t *meta = json_object_get(obj, "metadata");
    *av = json_string_value(json_object_get(obj, "apiVersion"));
    *kind = json_string_value(json_object_get(obj, "kind"));
    *ns = json_string_value(json_object_get(meta, "namespace"));
    *name = json_string_value(json_object_get(meta, "name"));
    if (!*av || !*kind)
        return ctrl__error_set(err, CTRL_ERR_ARG, "the object needs apiVersion and kind");
    return 0;
}

int ctrl_client_create(ctrl_client *c, const json_t *obj, const ctrl_write_options *opts,
                       json_t **out, ctrl_error *err)
{
    static const ctrl_write_options none = {0};
    const char *av, *kind, *ns, *name;
    if (!c)
        return ctrl__error_set(err, CTRL_ERR_ARG, "client is required");
    int rc = object_ids(obj, &av, &kind, &ns, &name, err);
    if (rc < 0)
        return rc;
    if (!opts)
        opts = &none;
    ctrl_resource_info info;
    sbuf b = {0};
    rc = build_path(c, av, kind, ns, NULL, NULL, true, &info, &b, err);
    if (rc == 0) {
        bool first = true;
        add_write_opts(&b, &first, opts->dry_run, opts->field_manager, opts->field_validation);
        rc = b.bad ? ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory")
                   : call_obj(c, "POST", b.p, obj, NULL, false, out, err);
    }
    free(b.p);
    return rc;
}

static int update(ctrl_client *c, const json_t *obj, const char *sub,
                  const ctrl_write_options *opts, json_t **out, ctrl_error *err)
{
    static const ctrl_write_options none = {0};
    const char *av, *kind, *ns, *name;
    if (!c)
        return ctrl__error_set(err, CTRL_ERR_ARG, "client is required");
    int rc = object_ids(obj, &av, &kind, &ns, &name, err);
    if (rc < 0)
        return rc;
    if (!name)
        return ctrl__error_set(err, CTRL_ERR_ARG, "the object needs metadata.name");
    if (!opts)
        opts = &none;
    ctrl_resource_info info;
    sbuf b = {0};
    rc = build_path(c, av, kind, ns, name, sub, true, &info, &b, err);
    if (rc == 0) {
        bool first = true;
        add_write_opts(&b, &first, opts->dry_run, opts->field_manager, opts->field_validation);
        rc = b.bad ? ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory")
                   : call_obj(c, "PUT", b.p, obj, NULL, true, out, err);
    }
    free(b.p);
    return rc;
}

int ctrl_client_update(ctrl_client *c, const json_t *obj, const ctrl_write_options *opts,
                       json_t **out, ctrl_error *err)
{
    return update(c, obj, NULL, opts, out, err);
}

int ctrl_client_update_status(ctrl_client *c, const json_t *obj, const ctrl_write_options *opts,
                              json_t **out, ctrl_error *err)
{
    return update(c, obj, "status", opts, out, err);
}

static int patch(ctrl_client *c, const char *api_version, const char *kind, const char *ns,
                 const char *name, const char *sub, ctrl_patch_type type, const json_t *p,
                 const ctrl_patch_options *opts, json_t **out, ctrl_error *err)
{
    static const ctrl_patch_options none = {0};
    static const char *const types[] = {
        [CTRL_PATCH_MERGE] = "application/merge-patch+json",
        [CTRL_PATCH_JSON] = "application/json-patch+json",
        [CTRL_PATCH_STRATEGIC] = "application/strategic-merge-patch+json",
        [CTRL_PATCH_APPLY] = "application/apply-patch+yaml",
    };
    if (!c || !name || !p)
        return ctrl__error_set(err, CTRL_ERR_ARG, "client, name and patch are required");
    if ((unsigned)type > CTRL_PATCH_APPLY)
        return ctrl__error_set(err, CTRL_ERR_ARG, "unknown patch type %d", (int)type);
    if (type == CTRL_PATCH_JSON ? !json_is_array(p) : !json_is_object(p))
        return ctrl__error_set(err, CTRL_ERR_ARG, "a %s patch must be a JSON %s",
                               type == CTRL_PATCH_JSON ? "JSON" : "merge",
                               type == CTRL_PATCH_JSON ? "array" : "object");
    if (!opts)
        opts = &none;
    if (type == CTRL_PATCH_APPLY && !opts->field_manager)
        return ctrl__error_set(err, CTRL_ERR_ARG, "server-side apply needs a field manager");
    ctrl_resource_info info;
    sbuf b = {0};
    int rc = build_path(c, api_version, kind, ns, name, sub, true, &info, &b, err);
    if (rc == 0) {
        bool first = true;
        add_write_opts(&b, &first, opts->dry_run, opts->field_manager, opts->field_validation);
        if (type == CTRL_PATCH_APPLY && opts->force)
            sb_query(&b, &first, "force", "true");
        /* A JSON patch may add to a list each time it is sent: never resent. */
        rc = b.bad ? ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory")
                   : call_obj(c, "PATCH", b.p, p, types[type], type != CTRL_PATCH_JSON, out, err);
    }
    free(b.p);
    return rc;
}

int ctrl_client_patch(ctrl_client *c, const char *api_version, const char *kind, const char *ns,
                      const char *name, ctrl_patch_type type, const json_t *p,
                      const ctrl_patch_options *opts, json_t **out, ctrl_error *err)
{
    return patch(c, api_version, kind, ns, name, NULL, type, p, opts, out, err);
}

int ctrl_client_patch_status(ctrl_client *c, const char *api_version, const char *kind,
                             const char *ns, const char *name, ctrl_patch_type type,
                             const json_t *p, const ctrl_patch_options *opts, json_t **out,
                             ctrl_error *err)
{
    return patch(c, api_version, kind, ns, name, "status", type, p, opts, out, err);
}

int ctrl_client_apply(ctrl_client *c, const json_t *obj, const char *field_manager, unsigned flags,
                      json_t **out, ctrl_error *err)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    if (!av || !kind || !name)
        return ctrl__error_set(err, CTRL_ERR_ARG,
                               "an apply configuration needs apiVersion, kind and metadata.name");
    if (!field_manager || !*field_manager)
        return ctrl__error_set(err, CTRL_ERR_ARG, "server-side apply needs a field manager");
    ctrl_patch_options o = {
        .dry_run = flags & CTRL_APPLY_DRY_RUN,
        .field_manager = field_manager,
        .force = flags & CTRL_APPLY_FORCE,
    };
    return patch(c, av, kind, json_string_value(json_object_get(meta, "namespace")), name,
                 (flags & CTRL_APPLY_STATUS) ? "status" : NULL, CTRL_PATCH_APPLY, obj, &o, out,
                 err);
}

/* A DeleteOptions body, or NULL when out of memory. */
static json_t *delete_body(const ctrl_delete_options *o)
{
    static const char *const policies[] = {NULL, "Background", "Foreground", "Orphan"};
    json_t *b = json_pack("{s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "v1");
    if (!b || !o)
        return b;
    int bad = 0;
    if (o->propagation > CTRL_PROPAGATION_DEFAULT && o->propagation <= CTRL_PROPAGATION_ORPHAN)
        bad |= json_object_set_new(b, "propagationPolicy", json_string(policies[o->propagation]));
    if (o->has_grace_period)
        bad |= json_object_set_new(b, "gracePeriodSeconds", json_integer(o->grace_period_seconds));
    if (o->precondition_uid || o->precondition_resource_version) {
        json_t *pre = json_object();
        if (o->precondition_uid)
            bad |= json_object_set_new(pre, "uid", json_string(o->precondition_uid));
        if (o->precondition_resource_version)
            bad |= json_object_set_new(pre, "resourceVersion",
                                       json_string(o->precondition_resource_version));
        bad |= json_object_set_new(b, "preconditions", pre);
    }
    if (o->dry_run)
        bad |= json_object_set_new(b, "dryRun", json_pack("[s]", "All"));
    if (bad) {
        json_decref(b);
        return NULL;
    }
    return b;
}

int ctrl_client_delete(ctrl_client *c, const char *api_version, const char *kind, const char *ns,
                       const char *name, const ctrl_delete_options *opts, json_t **out,
                       ctrl_error *err)
{
    if (!c || !name)
        return ctrl__error_set(err, CTRL_ERR_ARG, "client and name are required");
    ctrl_resource_info info;
    sbuf b = {0};
    json_t *body = NULL;
    int rc = build_path(c, api_version, kind, ns, name, NULL, true, &info, &b, err);
    if (rc == 0 && !(body = delete_body(opts)))
        rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    if (rc == 0)
        rc = call_obj(c, "DELETE", b.p, body, NULL, true, out, err);
    json_decref(body);
    free(b.p);
    return rc;
}

int ctrl_client_delete_all_of(ctrl_client *c, const char *api_version, const char *kind,
                              const char *ns, const ctrl_list_options *sel,
                              const ctrl_delete_options *opts, json_t **out, ctrl_error *err)
{
    static const ctrl_list_options none = {0};
    if (!c)
        return ctrl__error_set(err, CTRL_ERR_ARG, "client is required");
    if (!sel)
        sel = &none;
    ctrl_resource_info info;
    sbuf b = {0};
    json_t *body = NULL;
    int rc = build_path(c, api_version, kind, ns, NULL, NULL, false, &info, &b, err);
    if (rc == 0 && info.namespaced && (!ns || !*ns))
        rc = ctrl__error_set(err, CTRL_ERR_ARG, "delete_all_of %s needs a namespace", info.kind);
    if (rc == 0) {
        bool first = true;
        add_selectors(&b, &first, sel);
        if (b.bad || !(body = delete_body(opts)))
            rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    }
    if (rc == 0)
        rc = call(c, "DELETE", b.p, body, NULL, true, out, err);
    json_decref(body);
    free(b.p);
    return rc;
}

int ctrl_client_request(ctrl_client *c, const char *method, const char *path, const json_t *body,
                        const char *content_type, json_t **out, ctrl_error *err)
{
    if (!c || !method || !path || path[0] != '/')
        return ctrl__error_set(err, CTRL_ERR_ARG,
                               "client, method and an absolute path are "
                               "required");
    bool idempotent = !strcmp(method, "GET") || !strcmp(method, "HEAD") || !strcmp(method, "PUT") ||
                      !strcmp(method, "DELETE") || !strcmp(method, "OPTIONS");
    return call(c, method, path, body, content_type, idempotent, out, err);
}

/* ---- watch ---- */

int ctrl_watch_new(ctrl_watch **out)
{
    ctrl_watch *w = calloc(1, sizeof *w);
    if (!w || ctrl__cancel_new(&w->cancel) < 0) {
        free(w);
        return CTRL_ERR_NOMEM;
    }
    *out = w;
    return 0;
}

void ctrl_watch_stop(ctrl_watch *w)
{
    if (w)
        ctrl__cancel_fire(w->cancel);
}

bool ctrl_watch_stopped(ctrl_watch *w)
{
    return w && ctrl__cancel_fired(w->cancel);
}

void ctrl_watch_free(ctrl_watch *w)
{
    if (!w)
        return;
    ctrl__cancel_free(w->cancel);
    free(w);
}

typedef struct stream {
    ctrl_watch_fn fn;
    void *user;
    size_t max_line;
    char *line;
    size_t len, cap;
    int error_code; /* from an ERROR event */
    ctrl_error *err;
    bool protocol; /* a line that is not an event */
    char bad[128];
} stream;

static const struct {
    const char *name;
    ctrl_watch_event_type type;
} event_types[] = {
    {"ADDED", CTRL_WATCH_ADDED},     {"MODIFIED", CTRL_WATCH_MODIFIED},
    {"DELETED", CTRL_WATCH_DELETED}, {"BOOKMARK", CTRL_WATCH_BOOKMARK},
    {"ERROR", CTRL_WATCH_ERROR},
};

/* Deliver one line. Non-zero stops the stream. */
static int deliver(stream *s, const char *line, size_t len)
{
    while (len > 0 && (line[len - 1] == '\r' || isspace((unsigned char)line[len - 1])))
        len--;
    if (len == 0)
        return 0;
    json_t *ev = kh_json_loadb(line, len, 0, NULL);
    const char *type = json_string_value(json_object_get(ev, "type"));
    json_t *obj = json_object_get(ev, "object");
    int found = -1;
    for (size_t i = 0; type && i < sizeof event_types / sizeof event_types[0]; i++)
        if (!strcmp(type, event_types[i].name))
            found = (int)i;
    if (found < 0 || !json_is_object(obj)) {
        s->protocol = true;
        snprintf(s->bad, sizeof s->bad, "%.*s", (int)(len < 100 ? len : 100), line);
        json_decref(ev);
        return 1;
    }
    ctrl_watch_event e = {
        .type = event_types[found].type, .type_name = event_types[found].name, .object = obj};
    if (e.type == CTRL_WATCH_ERROR)
        s->error_code = ctrl__error_from_status(s->err, obj);
    int stop = s->fn(&e, s->user);
    json_decref(ev);
    return stop;
}

static int on_stream(const char *data, size_t len, void *ud)
{
    stream *s = ud;
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t take = nl ? (size_t)(nl - data) : len;
        if (s->len + take > s->max_line) {
            s->protocol = true;
            snprintf(s->bad, sizeof s->bad, "a line longer than %zu bytes", s->max_line);
            return 1;
        }
        if (s->len + take + 1 > s->cap) {
            size_t cap = s->cap ? s->cap : 4096;
            while (cap < s->len + take + 1)
                cap *= 2;
            char *nb = realloc(s->line, cap);
            if (!nb) {
                s->protocol = true;
                snprintf(s->bad, sizeof s->bad, "out of memory");
                return 1;
            }
            s->line = nb;
            s->cap = cap;
        }
        memcpy(s->line + s->len, data, take);
        s->len += take;
        data += take;
        len -= take;
        if (nl) {
            data++;
            len--;
            size_t l = s->len;
            s->len = 0;
            int stop = deliver(s, s->line, l);
            if (stop)
                return stop;
        }
    }
    return 0;
}

int ctrl_client_watch(ctrl_client *c, const char *api_version, const char *kind, const char *ns,
                      const ctrl_watch_options *opts, ctrl_watch *w, ctrl_watch_fn fn, void *user,
                      ctrl_error *err)
{
    static const ctrl_watch_options none = {0};
    if (!c || !fn)
        return ctrl__error_set(err, CTRL_ERR_ARG, "client and callback are required");
    if (!opts)
        opts = &none;
    if (w && ctrl__cancel_fired(w->cancel))
        return ctrl__error_set(err, CTRL_ERR_CANCELLED, "watch stopped");
    ctrl_resource_info info;
    sbuf b = {0};
    int rc = build_path(c, api_version, kind, ns, NULL, NULL, false, &info, &b, err);
    if (rc < 0) {
        free(b.p);
        return rc;
    }
    bool first = true;
    char tos[32];
    sb_query(&b, &first, "watch", "true");
    sb_query(&b, &first, "labelSelector", opts->label_selector);
    sb_query(&b, &first, "fieldSelector", opts->field_selector);
    sb_query(&b, &first, "resourceVersion", opts->resource_version);
    if (opts->timeout_seconds > 0) {
        snprintf(tos, sizeof tos, "%d", opts->timeout_seconds);
        sb_query(&b, &first, "timeoutSeconds", tos);
    }
    if (opts->allow_bookmarks || opts->send_initial_events)
        sb_query(&b, &first, "allowWatchBookmarks", "true");
    if (opts->send_initial_events) {
        sb_query(&b, &first, "sendInitialEvents", "true");
        sb_query(&b, &first, "resourceVersionMatch", "NotOlderThan");
    }
    if (b.bad) {
        free(b.p);
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "URL too long or out of memory");
    }
    stream s = {.fn = fn, .user = user, .max_line = 64u << 20, .err = err};
    ctrl__request req = {.method = "GET",
                         .path = b.p,
                         .user_agent = c->user_agent,
                         .no_retry = true,
                         .sink = on_stream,
                         .sink_ud = &s,
                         .cancel = w ? w->cancel : NULL,
                         .on_open = opts->on_open,
                         .on_open_ud = user,
                         /* The server ends the watch; the margin covers a late close. */
                         .timeout_ms =
                             opts->timeout_seconds > 0 ? (opts->timeout_seconds + 30) * 1000 : -1};
    ctrl__response resp;
    rc = ctrl__transport_do(c->t, &req, &resp, err);
    if (rc == 0 && !resp.stopped_by_sink && s.len > 0 && !s.protocol) {
        /* A last line without its newline. */
        size_t l = s.len;
        s.len = 0;
        deliver(&s, s.line, l);
    }
    ctrl__response_deinit(&resp);
    free(s.line);
    free(b.p);
    if (rc < 0)
        return rc;
    if (s.protocol)
        return ctrl__error_set(err, CTRL_ERR_PROTOCOL, "watch of %s: not an event: %s",
                               info.resource, s.bad);
    if (s.error_code)
        return s.error_code;
    return 0;
}
