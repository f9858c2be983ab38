/*
 * admission.c - calling admission webhooks (admission.h): which webhooks
 * match a request, the AdmissionReview v1 sent to each, and what their
 * answers do to the request.
 *
 * DESIGN
 * - Threads: the verbs call in on their connection thread, without the
 *   store lock. The only shared state is the cache of configurations
 *   (a->mu, a leaf lock: never held while the store lock is taken or a
 *   webhook is called); a call works on its own reference to the cached
 *   array, so a reload meanwhile frees nothing under it.
 * - The HTTP call itself is webhook_call.c's.
 * - Mutating webhooks run one after another, validating ones too (in
 *   kube-apiserver they run in parallel; run in order, the first denial is
 *   always the same one, which a deterministic test needs).
 * - What each outcome answers follows kube-apiserver's dispatchers: a
 *   denial is the webhook's Status with "admission webhook \"x\" denied
 *   the request: msg" (code at least 400); a webhook that cannot be called
 *   or answers nonsense is skipped under failurePolicy Ignore and is 500
 *   InternalError "failed calling webhook ..." under Fail (the default).
 */
#include "admission.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "convert.h"
#include "objmeta.h"
#include "patch.h"
#include "token.h"
#include "webhook_call.h"

#define KEY_MUTATING "admissionregistration.k8s.io/mutatingwebhookconfigurations"
#define KEY_VALIDATING "admissionregistration.k8s.io/validatingwebhookconfigurations"
#define MAX_WARNING 4096
#define MAX_REINVOKE 1

struct fakeapi__admission {
    pthread_mutex_t mu;
    bool loaded;
    unsigned long gen; /* srv->webhooks_gen the cache was loaded at */
    json_t *hooks;     /* [{"mutating": bool, "hook": webhook}], in call order */
};

fakeapi__admission *fakeapi__admission_new(void)
{
    fakeapi__admission *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    pthread_mutex_init(&a->mu, NULL);
    return a;
}

void fakeapi__admission_free(fakeapi__admission *a)
{
    if (!a)
        return;
    json_decref(a->hooks);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

bool fakeapi__admission_key(const char *store_key)
{
    return store_key && (!strcmp(store_key, KEY_MUTATING) || !strcmp(store_key, KEY_VALIDATING));
}

static int by_name(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    const char *na = fakeapi__meta_str(a, "name"), *nb = fakeapi__meta_str(b, "name");
    return strcmp(na ? na : "", nb ? nb : "");
}

/* Every webhook of one kind's configurations, by configuration name. */
static int load_kind(fakeapi_server *srv, const char *key, bool mutating, json_t *out)
{
    json_t *cfgs = json_array();
    if (!cfgs)
        return -1;
    fakeapi__store_lock(srv->store);
    int rc = fakeapi__store_load_all(srv->store, key, NULL, cfgs);
    fakeapi__store_unlock(srv->store);
    size_t n = json_array_size(cfgs);
    json_t **v = n ? calloc(n, sizeof *v) : NULL;
    if (rc < 0 || (n && !v)) {
        free(v);
        json_decref(cfgs);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(cfgs, i);
    if (n)
        qsort(v, n, sizeof *v, by_name);
    for (size_t i = 0; i < n; i++) {
        size_t j;
        json_t *w;
        json_array_foreach(json_object_get(v[i], "webhooks"), j, w)
        {
            if (json_is_object(w))
                json_array_append_new(out,
                                      json_pack("{s:b, s:O}", "mutating", mutating, "hook", w));
        }
    }
    free(v);
    json_decref(cfgs);
    return 0;
}

/* The cached webhooks (a new reference), reloaded when a configuration
 * changed. NULL on a storage or memory failure. */
static json_t *hooks_get(fakeapi_server *srv)
{
    fakeapi__admission *a = srv->admission;
    unsigned long gen = atomic_load(&srv->webhooks_gen);
    pthread_mutex_lock(&a->mu);
    if (a->loaded && a->gen == gen) {
        json_t *h = json_incref(a->hooks);
        pthread_mutex_unlock(&a->mu);
        return h;
    }
    pthread_mutex_unlock(&a->mu);
    json_t *h = json_array();
    if (!h || load_kind(srv, KEY_MUTATING, true, h) < 0 ||
        load_kind(srv, KEY_VALIDATING, false, h) < 0) {
        json_decref(h);
        return NULL;
    }
    pthread_mutex_lock(&a->mu);
    /* A write may have come meanwhile: keep the gen read before loading,
     * so the next call reloads again. */
    json_decref(a->hooks);
    a->hooks = json_incref(h);
    a->gen = gen;
    a->loaded = true;
    pthread_mutex_unlock(&a->mu);
    return h;
}

bool fakeapi__admission_active(fakeapi_server *srv)
{
    if (!srv->admission)
        return false;
    json_t *h = hooks_get(srv);
    bool any = json_array_size(h) > 0;
    json_decref(h);
    return any;
}

/* ---- matching ---- */

/* The request as the rules see it: what it is made on. */
typedef struct attrs {
    const char *op;
    const char *group, *version, *resource, *sub, *kind;
    const char *ns; /* "" for cluster-scoped objects; a Namespace's own name */
    const char *name;
    bool namespaced; /* the resource is namespaced */
    bool is_namespace;
    const json_t *obj, *old;
} attrs;

static bool str_in(const json_t *list, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        const char *e = json_string_value(v);
        if (e && (!strcmp(e, "*") || !strcmp(e, s)))
            return true;
    }
    return false;
}

/* "pods", "pods/status", "*", "*\/status", "pods/\*", "*\/\*". */
static bool resource_in(const json_t *list, const char *res, const char *sub)
{
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        const char *e = json_string_value(v);
        if (!e)
            continue;
        const char *slash = strchr(e, '/');
        size_t rn = slash ? (size_t)(slash - e) : strlen(e);
        const char *esub = slash ? slash + 1 : "";
        bool rmatch = (rn == 1 && e[0] == '*') || (strlen(res) == rn && !strncmp(e, res, rn));
        bool smatch = !strcmp(esub, "*") || !strcmp(esub, sub);
        if (rmatch && smatch)
            return true;
    }
    return false;
}

static bool scope_ok(const json_t *rule, const attrs *at)
{
    const char *scope = json_string_value(json_object_get(rule, "scope"));
    if (!scope || !strcmp(scope, "*"))
        return true;
    /* A Namespace object is cluster-scoped, though its namespace is its name. */
    if (!strcmp(scope, "Namespaced"))
        return at->namespaced && !at->is_namespace;
    if (!strcmp(scope, "Cluster"))
        return !at->namespaced || at->is_namespace;
    return false;
}

/* version NULL: any version. */
static bool rule_matches(const json_t *rule, const attrs *at, const char *version)
{
    return str_in(json_object_get(rule, "operations"), at->op) &&
           str_in(json_object_get(rule, "apiGroups"), at->group) &&
           (!version || str_in(json_object_get(rule, "apiVersions"), version)) &&
           resource_in(json_object_get(rule, "resources"), at->resource, at->sub) &&
           scope_ok(rule, at);
}

static bool rules_match(const json_t *hook, const attrs *at, const char *version)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(hook, "rules"), i, r)
    {
        if (rule_matches(r, at, version))
            return true;
    }
    return false;
}

/* A metav1.LabelSelector against labels: matchLabels and matchExpressions
 * (In, NotIn, Exists, DoesNotExist). An empty or absent selector matches
 * everything; an unknown operator matches nothing. */
static bool selector_matches(const json_t *sel, const json_t *labels)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)json_object_get(sel, "matchLabels"), k, v)
    {
        const char *have = json_string_value(json_object_get(labels, k));
        if (!have || !json_string_value(v) || strcmp(have, json_string_value(v)))
            return false;
    }
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        const char *op = json_string_value(json_object_get(e, "operator"));
        if (!key || !op)
            return false;
        const char *have = json_string_value(json_object_get(labels, key));
        bool in = false;
        size_t j;
        json_t *val;
        json_array_foreach(json_object_get(e, "values"), j, val)
        {
            in |= have && json_string_value(val) && !strcmp(have, json_string_value(val));
        }
        if (!strcmp(op, "In")             ? !in
            : !strcmp(op, "NotIn")        ? in
            : !strcmp(op, "Exists")       ? !have
            : !strcmp(op, "DoesNotExist") ? have != NULL
                                          : true)
            return false;
    }
    return true;
}

static const json_t *labels_of(const json_t *obj)
{
    return json_object_get(json_object_get(obj, "metadata"), "labels");
}

static bool selector_empty(const json_t *sel)
{
    return !json_object_size(json_object_get(sel, "matchLabels")) &&
           !json_array_size(json_object_get(sel, "matchExpressions"));
}

/* namespaceSelector: the labels of the object's namespace (of the object
 * itself for a Namespace); cluster-scoped objects always match. */
static bool namespace_matches(fakeapi_server *srv, const json_t *hook, const attrs *at)
{
    const json_t *sel = json_object_get(hook, "namespaceSelector");
    if (selector_empty(sel) || (!at->namespaced && !at->is_namespace))
        return true;
    if (at->is_namespace)
        return selector_matches(sel, labels_of(at->obj ? at->obj : at->old));
    json_t *ns = NULL;
    fakeapi__store_lock(srv->store);
    int rc = fakeapi__store_get(srv->store, "/namespaces", "", at->ns, &ns);
    fakeapi__store_unlock(srv->store);
    bool ok = selector_matches(sel, rc == 0 ? labels_of(ns) : NULL);
    json_decref(ns);
    return ok;
}

/* objectSelector: the new object's labels or the old one's. */
static bool object_matches(const json_t *hook, const attrs *at)
{
    const json_t *sel = json_object_get(hook, "objectSelector");
    if (selector_empty(sel))
        return true;
    return (at->obj && selector_matches(sel, labels_of(at->obj))) ||
           (at->old && selector_matches(sel, labels_of(at->old)));
}

/*
 * Which version of the request's resource a webhook is called with: the
 * request's own when a rule names it, else (matchPolicy Equivalent, the
 * default) another served version of the same resource a rule names (its
 * registry entry, referenced, in *equiv). false: not called.
 */
static bool hook_matches(fakeapi__ctx *c, const json_t *hook, const attrs *at,
                         fakeapi__resource **equiv)
{
    *equiv = NULL;
    if (!rules_match(hook, at, at->version)) {
        const char *policy = json_string_value(json_object_get(hook, "matchPolicy"));
        /* Only a rule that names every other part of the request makes the
         * served versions worth a look. */
        if ((policy && !strcmp(policy, "Exact")) || !rules_match(hook, at, NULL))
            return false;
        size_t n = 0;
        fakeapi__resource **all = fakeapi__registry_all(c->srv->reg, &n);
        for (size_t i = 0; all && i < n && !*equiv; i++) {
            if (!strcmp(all[i]->store_key, c->res->store_key) &&
                strcmp(all[i]->version, at->version) && rules_match(hook, at, all[i]->version))
                *equiv = fakeapi__resource_ref(all[i]);
        }
        fakeapi__registry_release(all, n);
        if (!*equiv)
            return false;
    }
    if (!namespace_matches(c->srv, hook, at) || !object_matches(hook, at)) {
        fakeapi__resource_unref(*equiv);
        *equiv = NULL;
        return false;
    }
    return true;
}

/* ---- the review ---- */

static json_t *gvk(const char *group, const char *version, const char *kind)
{
    return json_pack("{s:s, s:s, s:s}", "group", group, "version", version, "kind", kind);
}

static json_t *gvr(const char *group, const char *version, const char *resource)
{
    return json_pack("{s:s, s:s, s:s}", "group", group, "version", version, "resource", resource);
}

/* The options object of the verb, from the request's parameters (and a
 * DELETE's body). */
static json_t *options_of(const fakeapi__ctx *c, const char *op, bool dry)
{
    const char *m = c->req->method;
    const char *kind = !strcmp(op, "DELETE")   ? "DeleteOptions"
                       : !strcmp(m, "PATCH")   ? "PatchOptions"
                       : !strcmp(op, "CREATE") ? "CreateOptions"
                                               : "UpdateOptions";
    json_t *o = NULL;
    if (!strcmp(op, "DELETE") && c->req->body_len)
        o = json_loadb(c->req->body, c->req->body_len, 0, NULL);
    if (!json_is_object(o)) {
        json_decref(o);
        o = json_object();
    }
    if (!o)
        return NULL;
    json_object_set_new(o, "kind", json_string(kind));
    json_object_set_new(o, "apiVersion", json_string("meta.k8s.io/v1"));
    if (dry)
        json_object_set_new(o, "dryRun", json_pack("[s]", "All"));
    const char *fm = fakeapi__q(c->req, "fieldManager");
    if (fm && strcmp(op, "DELETE"))
        json_object_set_new(o, "fieldManager", json_string(fm));
    const char *pp = fakeapi__q(c->req, "propagationPolicy");
    if (pp && !strcmp(op, "DELETE"))
        json_object_set_new(o, "propagationPolicy", json_string(pp));
    const char *force = fakeapi__q(c->req, "force");
    if (force && !strcmp(m, "PATCH"))
        json_object_set_new(o, "force", json_boolean(!strcasecmp(force, "true")));
    return o;
}

/* An object in another served version of its kind (for an equivalent
 * match): a new value. */
static json_t *as_version(const fakeapi__resource *from, const fakeapi__resource *to,
                          const json_t *obj)
{
    json_t *o = json_deep_copy(obj);
    if (!o || !to)
        return o;
    if (fakeapi__convert_needed(from))
        fakeapi__convert_in(from, o);
    if (fakeapi__convert_needed(to))
        fakeapi__convert_out(to, o);
    json_object_set_new(o, "apiVersion", json_string(to->group_version));
    return o;
}

/*
 * userInfo: a service account's, for a request with one of this server's
 * tokens (signature and issuer checked; the authenticator in review.c
 * checks the rest), else the administrator's, as every other request is
 * served.
 */
static json_t *request_user(const fakeapi__ctx *c)
{
    json_t *claims = NULL;
    char why[200];
    const char *tok = c->req->token;
    if (tok && *tok && fakeapi__token_verify(c->srv->sa_key, tok, &claims, why, sizeof why) == 0) {
        const char *iss = json_string_value(json_object_get(claims, "iss"));
        const char *sub = json_string_value(json_object_get(claims, "sub"));
        const char *ns = json_string_value(
            json_object_get(json_object_get(claims, "kubernetes.io"), "namespace"));
        if (iss && sub && ns && !strcmp(iss, FAKEAPI__SA_ISSUER)) {
            char g[300];
            snprintf(g, sizeof g, "system:serviceaccounts:%s", ns);
            json_t *u = json_pack("{s:s, s:[s, s, s]}", "username", sub, "groups",
                                  "system:serviceaccounts", g, "system:authenticated");
            json_decref(claims);
            return u;
        }
    }
    json_decref(claims);
    return json_pack("{s:s, s:[s, s]}", "username", "fakeapi-admin", "groups", "system:masters",
                     "system:authenticated");
}

static json_t *review_new(fakeapi__ctx *c, const attrs *at, const fakeapi__resource *equiv,
                          const json_t *obj, const json_t *old, bool dry, char *uid)
{
    const fakeapi__resource *r = equiv ? equiv : c->res;
    fakeapi__store_lock(c->srv->store);
    fakeapi__rng_uuid(&c->srv->rng, uid);
    fakeapi__store_unlock(c->srv->store);
    json_t *o = obj ? as_version(c->res, equiv, obj) : json_null();
    json_t *p = old ? as_version(c->res, equiv, old) : json_null();
    json_t *req = json_pack("{s:s, s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:o, s:b, s:o}", "uid", uid,
                            "kind", gvk(r->group, r->version, r->kind), "resource",
                            gvr(r->group, r->version, r->plural), "requestKind",
                            gvk(c->res->group, c->res->version, c->res->kind), "requestResource",
                            gvr(c->res->group, c->res->version, c->res->plural), "operation",
                            at->op, "userInfo", request_user(c), "object", o, "oldObject", p,
                            "dryRun", dry, "options", options_of(c, at->op, dry));
    if (!req)
        return NULL;
    if (at->sub[0]) {
        json_object_set_new(req, "subResource", json_string(at->sub));
        json_object_set_new(req, "requestSubResource", json_string(at->sub));
    }
    if (at->name && at->name[0])
        json_object_set_new(req, "name", json_string(at->name));
    if (at->ns[0])
        json_object_set_new(req, "namespace", json_string(at->ns));
    return json_pack("{s:s, s:s, s:o}", "apiVersion", "admission.k8s.io/v1", "kind",
                     "AdmissionReview", "request", req);
}

/* The webhook's answer, checked: its "response" (borrowed from body). */
static const json_t *check_answer(const json_t *body, const char *uid, fakeapi__webhook_err *e)
{
    const char *av = json_string_value(json_object_get(body, "apiVersion"));
    const char *kind = json_string_value(json_object_get(body, "kind"));
    if (!av || !kind || strcmp(av, "admission.k8s.io/v1") || strcmp(kind, "AdmissionReview")) {
        fakeapi__webhook_fail(e,
                              "received invalid webhook response: expected webhook response of "
                              "admission.k8s.io/v1, Kind=AdmissionReview, got %s, Kind=%s",
                              av ? av : "", kind ? kind : "");
        return NULL;
    }
    const json_t *r = json_object_get(body, "response");
    if (!json_is_object(r)) {
        fakeapi__webhook_fail(e, "received invalid webhook response: webhook response was absent");
        return NULL;
    }
    const char *got = json_string_value(json_object_get(r, "uid"));
    if (!got || strcmp(got, uid)) {
        fakeapi__webhook_fail(
            e, "received invalid webhook response: expected response.uid=\"%s\", got \"%s\"", uid,
            got ? got : "");
        return NULL;
    }
    return r;
}

/* Warnings become Warning headers: one line each, bounded. */
static void add_warnings(fakeapi__ctx *c, const json_t *r)
{
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(r, "warnings"), i, w)
    {
        const char *s = json_string_value(w);
        if (!s || !*s)
            continue;
        char text[MAX_WARNING];
        snprintf(text, sizeof text, "%s", s);
        for (char *p = text; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = ' ';
        fakeapi__resp_warn(c->resp, text);
    }
}

/* A denial: the webhook's Status, as kube-apiserver's ToStatusErr shapes it. */
static void answer_denied(fakeapi__ctx *c, const char *name, const json_t *r)
{
    const json_t *st = json_object_get(r, "status");
    json_t *out = json_is_object(st) ? json_deep_copy(st) : json_object();
    if (!out) {
        fakeapi__resp_error(c->resp, 500, "InternalError", NULL, "out of memory");
        return;
    }
    json_int_t code = json_integer_value(json_object_get(out, "code"));
    if (code < 400)
        json_object_set_new(out, "code", json_integer(code = 400));
    if (code > 599)
        json_object_set_new(out, "code", json_integer(code = 400));
    const char *status = json_string_value(json_object_get(out, "status"));
    if (!status || !*status || !strcmp(status, "Success"))
        json_object_set_new(out, "status", json_string("Failure"));
    const char *msg = json_string_value(json_object_get(out, "message"));
    const char *reason = json_string_value(json_object_get(out, "reason"));
    char *text = NULL;
    int n;
    if (msg && *msg)
        n = asprintf(&text, "admission webhook \"%s\" denied the request: %s", name, msg);
    else if (reason && *reason)
        n = asprintf(&text, "admission webhook \"%s\" denied the request: %s", name, reason);
    else
        n = asprintf(&text, "admission webhook \"%s\" denied the request without explanation",
                     name);
    if (n >= 0)
        json_object_set_new(out, "message", json_string(text));
    free(text);
    json_object_set_new(out, "kind", json_string("Status"));
    json_object_set_new(out, "apiVersion", json_string("v1"));
    if (!json_is_object(json_object_get(out, "metadata")))
        json_object_set_new(out, "metadata", json_object());
    fakeapi__resp_json(c->resp, (int)code, out);
}

/* failurePolicy Fail: 500 with the call's error as its cause. */
static void answer_call_failed(fakeapi__ctx *c, const char *name, const fakeapi__webhook_err *e)
{
    char msg[1400];
    snprintf(msg, sizeof msg, "failed calling webhook \"%s\": %s", name, e->msg);
    fakeapi__resp_error(c->resp, 500, "InternalError",
                        json_pack("{s:[{s:s}]}", "causes", "message", msg),
                        "Internal error occurred: %s", msg);
}

static bool ignores_failures(const json_t *hook)
{
    const char *p = json_string_value(json_object_get(hook, "failurePolicy"));
    return p && !strcmp(p, "Ignore");
}

static bool accepts_v1(const json_t *hook)
{
    const json_t *vs = json_object_get(hook, "admissionReviewVersions");
    if (!vs)
        return true; /* defaulted by the API server */
    size_t i;
    json_t *v;
    json_array_foreach(vs, i, v)
    {
        if (json_string_value(v) && !strcmp(json_string_value(v), "v1"))
            return true;
    }
    return false;
}

/* A dry run may only call webhooks that say they have no side effects. */
static bool dry_run_ok(const json_t *hook)
{
    const char *se = json_string_value(json_object_get(hook, "sideEffects"));
    return se && (!strcmp(se, "None") || !strcmp(se, "NoneOnDryRun"));
}

static void attrs_init(attrs *at, fakeapi__ctx *c, const char *op, const json_t *obj,
                       const json_t *old)
{
    const json_t *o = obj ? obj : old;
    at->op = op;
    at->group = c->res->group;
    at->version = c->res->version;
    at->resource = c->res->plural;
    at->kind = c->res->kind;
    at->sub = c->rt && c->rt->sub[0] ? c->rt->sub : "";
    at->namespaced = c->res->namespaced;
    at->is_namespace = !strcmp(c->res->store_key, "/namespaces");
    at->name = c->generated_name && !strcmp(op, "CREATE") ? "" : fakeapi__meta_str(o, "name");
    if (!at->name || !*at->name)
        at->name = c->rt ? c->rt->name : "";
    at->ns = at->is_namespace ? at->name : c->res->namespaced && c->ns ? c->ns : "";
    at->obj = obj;
    at->old = old;
}

/* ?dryRun=All, or a DELETE's DeleteOptions body saying so (as
 * fakeapi__dry_run, which is a layer up). */
static bool dry_run(const fakeapi__ctx *c)
{
    const char *d = fakeapi__q(c->req, "dryRun");
    if (d && !strcmp(d, "All"))
        return true;
    if (strcmp(c->req->method, "DELETE") != 0 || !c->req->body_len)
        return false;
    json_t *opts = json_loadb(c->req->body, c->req->body_len, 0, NULL);
    bool dry = false;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(opts, "dryRun"), i, v)
    {
        dry |= json_string_value(v) && !strcmp(json_string_value(v), "All");
    }
    json_decref(opts);
    return dry;
}

/* Outcome of one call. */
enum { CALL_ALLOWED = 0, CALL_SKIPPED = 1, CALL_ANSWERED = -1 };

/*
 * Call one webhook that matched: CALL_ALLOWED (with *patched, a new value
 * or NULL, for a mutating webhook that patched), CALL_SKIPPED (it failed
 * and its failurePolicy is Ignore), or CALL_ANSWERED (c->resp filled).
 */
static int call_hook(fakeapi__ctx *c, const json_t *hook, const attrs *at, fakeapi__resource *equiv,
                     bool mutating, const json_t *obj, json_t **patched)
{
    const char *name = json_string_value(json_object_get(hook, "name"));
    name = name ? name : "";
    bool dry = dry_run(c);
    *patched = NULL;
    if (dry && !dry_run_ok(hook)) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "admission webhook \"%s\" does not support dry run", name);
        return CALL_ANSWERED;
    }
    fakeapi__webhook_err e = {{0}};
    char uid[40];
    json_t *review = NULL, *answer = NULL;
    int rc = CALL_ANSWERED;
    if (!accepts_v1(hook)) {
        fakeapi__webhook_fail(&e, "webhook does not accept known AdmissionReview versions");
        goto failed;
    }
    review = review_new(c, at, equiv, obj, at->old, dry, uid);
    if (!review) {
        fakeapi__resp_error(c->resp, 500, "InternalError", NULL, "out of memory");
        goto out;
    }
    if (fakeapi__webhook_post(c->srv, hook, review, &answer, &e) < 0)
        goto failed;
    const json_t *r = check_answer(answer, uid, &e);
    if (!r)
        goto failed;
    add_warnings(c, r);
    if (!json_is_true(json_object_get(r, "allowed"))) {
        answer_denied(c, name, r);
        goto out;
    }
    const char *patch64 = json_string_value(json_object_get(r, "patch"));
    if (!mutating || !patch64 || !*patch64 || !obj) {
        rc = CALL_ALLOWED;
        goto out;
    }
    const char *pt = json_string_value(json_object_get(r, "patchType"));
    if (!pt) {
        fakeapi__webhook_fail(
            &e, "received invalid webhook response: webhook returned response.patch but "
                "not response.patchType");
        goto failed;
    }
    if (strcmp(pt, "JSONPatch")) {
        fakeapi__webhook_fail(&e,
                              "received invalid webhook response: webhook returned invalid "
                              "response.patchType of \"%s\"",
                              pt);
        goto failed;
    }
    size_t plen = 0;
    char *ptext = fakeapi__b64_decode(patch64, &plen);
    json_error_t jerr;
    json_t *patch = ptext ? json_loadb(ptext, plen, 0, &jerr) : NULL;
    free(ptext);
    json_t *versioned = as_version(c->res, equiv, obj), *out = NULL;
    char perr[512] = "";
    if (!json_is_array(patch) || !versioned ||
        fakeapi__json_patch(versioned, patch, &out, perr, sizeof perr) < 0 ||
        !json_is_object(out)) {
        fakeapi__resp_error(c->resp, 500, "InternalError", NULL,
                            "Internal error occurred: admission webhook \"%s\" returned a patch "
                            "that cannot be applied: %s",
                            name, perr[0] ? perr : "not a JSON patch");
        json_decref(out);
    } else {
        *patched = equiv ? as_version(equiv, c->res, out) : json_incref(out);
        json_object_set_new(*patched, "apiVersion", json_string(c->res->group_version));
        json_decref(out);
        rc = CALL_ALLOWED;
    }
    json_decref(patch);
    json_decref(versioned);
    goto out;
failed:
    if (ignores_failures(hook))
        rc = CALL_SKIPPED;
    else
        answer_call_failed(c, name, &e);
out:
    json_decref(review);
    json_decref(answer);
    return rc;
}

static int run(fakeapi__ctx *c, bool mutating, const char *op, json_t **objp, const json_t *old,
               bool *changed)
{
    if (changed)
        *changed = false;
    /* Webhooks never see writes to the admission configuration kinds, so a
     * bad webhook cannot lock out its own removal (as kube-apiserver). */
    if (!c->srv->admission || !c->res || !strcmp(c->res->group, "admissionregistration.k8s.io"))
        return 0;
    json_t *hooks = hooks_get(c->srv);
    if (!hooks) {
        fakeapi__resp_error(c->resp, 500, "InternalError", NULL,
                            "storage error: cannot read the webhook configurations");
        return -1;
    }
    size_t n = json_array_size(hooks);
    /* For reinvocation: which mutating webhooks ran, and the last to change the object. */
    bool *ran = n ? calloc(n, sizeof *ran) : NULL;
    long last_change = -1;
    int rc = 0;
    for (int pass = 0; rc == 0 && pass <= (mutating ? MAX_REINVOKE : 0); pass++) {
        long changed_before = last_change;
        for (size_t i = 0; i < n && rc == 0; i++) {
            const json_t *e = json_array_get(hooks, i);
            const json_t *hook = json_object_get(e, "hook");
            if (json_is_true(json_object_get(e, "mutating")) != mutating)
                continue;
            if (pass > 0) {
                /* reinvocationPolicy IfNeeded: once more if a later webhook changed it. */
                const char *rp = json_string_value(json_object_get(hook, "reinvocationPolicy"));
                if (!ran || !ran[i] || !rp || strcmp(rp, "IfNeeded") || (long)i >= changed_before)
                    continue;
            }
            attrs at;
            attrs_init(&at, c, op, objp ? *objp : NULL, old);
            fakeapi__resource *equiv = NULL;
            if (!hook_matches(c, hook, &at, &equiv))
                continue;
            json_t *patched = NULL;
            int r = call_hook(c, hook, &at, equiv, mutating, objp ? *objp : NULL, &patched);
            fakeapi__resource_unref(equiv);
            if (ran)
                ran[i] = true;
            if (r == CALL_ANSWERED) {
                rc = -1;
            } else if (patched && !json_equal(patched, *objp)) {
                json_decref(*objp);
                *objp = patched;
                last_change = (long)i;
                if (changed)
                    *changed = true;
            } else {
                json_decref(patched);
            }
        }
        if (last_change == changed_before)
            break; /* nothing changed in this pass: no reinvocation */
    }
    free(ran);
    json_decref(hooks);
    return rc;
}

int fakeapi__admission_mutate(fakeapi__ctx *c, const char *op, json_t **obj, const json_t *old,
                              bool *changed)
{
    return run(c, true, op, obj, old, changed);
}

int fakeapi__admission_validate(fakeapi__ctx *c, const char *op, const json_t *obj,
                                const json_t *old)
{
    json_t *o = obj ? json_incref((json_t *)obj) : NULL;
    int rc = run(c, false, op, obj ? &o : NULL, old, NULL);
    json_decref(o);
    return rc;
}
