/*
 * verbs_pod.c - the pod subresources that are actions rather than views:
 * pods/eviction (a delete that honours PodDisruptionBudgets), pods/binding
 * and POST bindings (what a scheduler does), pods/log (the simulated log),
 * and a clear 400 for what would need a kubelet (exec, attach, portforward,
 * and the proxies of pods, nodes and services).
 *
 * Facts from kube-apiserver's pod storage (eviction.go, the BindingREST and
 * LogLocation in pkg/registry/core/pod); the differences are in
 * docs/fakeapi.md ("Subresources and review APIs"). Runs on the request's thread; writes
 * go through one transaction (txn.h), so an eviction's budget check and its
 * delete are atomic with respect to every other request.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objmeta.h"
#include "selector.h"
#include "strbuf.h"
#include "timefmt.h"
#include "verbs.h"

#define PDB_KEY "policy/poddisruptionbudgets"
#define EVICT_BLOCKED "Cannot evict pod as it would violate the pod's disruption budget."

/* The simulated log: annotation LOG_ANNOTATION "-<container>", else LOG_ANNOTATION. */
#define LOG_ANNOTATION "fakeapi.kube-harness.io/log"

static const char *jstr(const json_t *v, const char *key)
{
    return json_string_value(json_object_get(v, key));
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static void method_not_allowed(fakeapi__ctx *c)
{
    fakeapi__resp_error(c->resp, 405, "MethodNotAllowed", NULL,
                        "the server does not allow this method on the requested resource");
}

/* The JSON type of v as Go's decoder names it in messages. */
static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "bool";
    default:
        return "null";
    }
}

bool fakeapi__typed(fakeapi__ctx *c, const char *kind, const char *gostruct, const char *field,
                    const json_t *v, json_type want, const char *gotype)
{
    if (!v || json_is_null(v) || json_typeof(v) == want)
        return true;
    fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                        "%s in version \"v1\" cannot be handled as a %s: json: cannot unmarshal "
                        "%s into Go struct field %s.%s of type %s",
                        kind, kind, json_kind(v), gostruct, field, gotype);
    return false;
}

/* 201 {kind: Status, status: Success}: what eviction and binding answer. */
static void answer_success(fakeapi__ctx *c)
{
    fakeapi__resp_json(c->resp, 201,
                       json_pack("{s:s, s:s, s:{}, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
                                 "metadata", "status", "Success", "code", 201));
}

/* Read the pod the route names, inside t (the store lock held). 404/500
 * answered and t aborted on failure. */
static json_t *load_pod(fakeapi__ctx *c, fakeapi__txn *t)
{
    json_t *pod = NULL;
    int rc = fakeapi__store_get(c->srv->store, "/pods", c->ns, c->rt->name, &pod);
    if (rc == 0)
        return pod;
    fakeapi__txn_abort(t);
    if (rc == 1)
        fakeapi__not_found(c, c->rt->name);
    else
        fakeapi__storage_error(c);
    return NULL;
}

/* ---- PodDisruptionBudgets ----------------------------------------------------- */

/* A label key or value as a selector term may hold it: nothing that would
 * read as selector syntax (a value "a,b" must not become two terms). */
static bool label_token(const char *s)
{
    return s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./") ==
                    strlen(s);
}

/*
 * A metav1.LabelSelector as a parsed selector. NULL when it selects nothing:
 * absent, empty (a budget with an empty selector matches no pod, as the real
 * server has it) or invalid.
 */
static fakeapi__labelsel *budget_selector(const json_t *sel)
{
    fakeapi__strbuf sb = {.max = 64 * 1024};
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(sel, "matchLabels"), k, v)
    {
        if (!*k || !label_token(k) || !label_token(json_string_value(v)))
            goto bad;
        fakeapi__strbuf_addf(&sb, "%s%s=%s", sb.len ? "," : "", k, json_string_value(v));
    }
    size_t i;
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, v)
    {
        const char *key = jstr(v, "key"), *op = jstr(v, "operator");
        if (!key || !*key || !op || !label_token(key))
            goto bad;
        const char *sep = sb.len ? "," : "";
        if (!strcmp(op, "Exists")) {
            fakeapi__strbuf_addf(&sb, "%s%s", sep, key);
        } else if (!strcmp(op, "DoesNotExist")) {
            fakeapi__strbuf_addf(&sb, "%s!%s", sep, key);
        } else if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
            fakeapi__strbuf_addf(&sb, "%s%s %s (", sep, key, !strcmp(op, "In") ? "in" : "notin");
            size_t j;
            json_t *val;
            json_array_foreach(json_object_get(v, "values"), j, val)
            {
                if (!label_token(json_string_value(val)))
                    goto bad;
                fakeapi__strbuf_addf(&sb, "%s%s", j ? "," : "", json_string_value(val));
            }
            fakeapi__strbuf_addf(&sb, ")");
        } else {
            goto bad;
        }
    }
    fakeapi__labelsel *out = NULL;
    if (sb.len && !sb.failed && fakeapi__labelsel_parse(sb.data, &out, NULL, 0) < 0)
        out = NULL;
    fakeapi__strbuf_deinit(&sb);
    return out;
bad:
    fakeapi__strbuf_deinit(&sb);
    return NULL;
}

/* Ready: the Ready condition is True; a pod without conditions counts as
 * ready when it is Running (fakeapi has no kubelet to set conditions). */
static bool pod_ready(const json_t *pod)
{
    const json_t *st = json_object_get(pod, "status");
    size_t i;
    json_t *cond;
    json_array_foreach(json_object_get(st, "conditions"), i, cond)
    {
        const char *type = jstr(cond, "type");
        if (type && !strcmp(type, "Ready"))
            return jstr(cond, "status") && !strcmp(jstr(cond, "status"), "True");
    }
    const char *phase = jstr(st, "phase");
    return phase && !strcmp(phase, "Running");
}

/* An IntOrString against total: integers as they are, "N%" scaled and
 * rounded up. -1 for anything else. */
static long long scaled(const json_t *v, long long total)
{
    if (json_is_integer(v))
        return json_integer_value(v);
    const char *s = json_string_value(v);
    char *end;
    long long pct = s ? strtoll(s, &end, 10) : -1;
    /* More than 100% is invalid anyway; the bound keeps the product in range. */
    if (!s || end == s || strcmp(end, "%") || pct < 0 || pct > 1000000)
        return -1;
    return (pct * total + 99) / 100;
}

/* A budget's numbers, from its status or computed. */
typedef struct budget {
    long long allowed, desired, current;
    bool stored;  /* status written by a controller (or a test): use it */
    bool pending; /* stored, but for an older generation */
} budget;

/*
 * The budget's numbers. A PDB whose status carries observedGeneration has
 * been through a disruption controller, and its status is used as the real
 * server uses it. fakeapi runs no such controller, so a PDB without one gets
 * them computed here, the way the controller would, from the pods of the
 * namespace it selects: healthy = ready and not being deleted; the expected
 * count is the number of selected pods (the controller would ask their
 * owner's scale); desired = minAvailable, or expected - maxUnavailable
 * (percentages of expected, rounded up); neither = 0.
 */
static int budget_of(fakeapi__ctx *c, const json_t *pdb, const fakeapi__labelsel *sel, budget *b)
{
    const json_t *st = json_object_get(pdb, "status");
    memset(b, 0, sizeof *b);
    if (json_is_integer(json_object_get(st, "observedGeneration"))) {
        b->stored = true;
        b->allowed = json_integer_value(json_object_get(st, "disruptionsAllowed"));
        b->desired = json_integer_value(json_object_get(st, "desiredHealthy"));
        b->current = json_integer_value(json_object_get(st, "currentHealthy"));
        json_int_t gen =
            json_integer_value(json_object_get(json_object_get(pdb, "metadata"), "generation"));
        b->pending = json_integer_value(json_object_get(st, "observedGeneration")) < gen;
        return 0;
    }
    json_t *pods = json_array();
    if (!pods || fakeapi__store_load_all(c->srv->store, "/pods", c->ns, pods) < 0) {
        json_decref(pods);
        return -1;
    }
    long long expected = 0, healthy = 0;
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        if (!fakeapi__labelsel_match(sel,
                                     json_object_get(json_object_get(p, "metadata"), "labels")))
            continue;
        expected++;
        if (!fakeapi__meta_str(p, "deletionTimestamp") && pod_ready(p))
            healthy++;
    }
    json_decref(pods);
    const json_t *spec = json_object_get(pdb, "spec");
    const json_t *min = json_object_get(spec, "minAvailable");
    const json_t *max = json_object_get(spec, "maxUnavailable");
    long long desired = 0;
    if (max && !json_is_null(max)) {
        long long m = scaled(max, expected);
        desired = m < 0 ? expected : expected - m;
    } else if (min && !json_is_null(min)) {
        long long m = scaled(min, expected);
        desired = m < 0 ? expected : m;
    }
    if (desired < 0)
        desired = 0;
    b->desired = desired;
    b->current = healthy;
    b->allowed = healthy - desired > 0 ? healthy - desired : 0;
    return 0;
}

/* 429 TooManyRequests with the DisruptionBudget cause, as the real server. */
static void budget_blocks(fakeapi__ctx *c, int retry_after, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void budget_blocks(fakeapi__ctx *c, int retry_after, const char *fmt, ...)
{
    char cause[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cause, sizeof cause, fmt, ap);
    va_end(ap);
    json_t *details =
        json_pack("{s:[{s:s, s:s}]}", "causes", "reason", "DisruptionBudget", "message", cause);
    if (retry_after > 0)
        json_object_set_new(details, "retryAfterSeconds", json_integer(retry_after));
    fakeapi__resp_error(c->resp, 429, "TooManyRequests", details, "%s", EVICT_BLOCKED);
    c->resp->retry_after = retry_after;
}

/* Record the disruption in a stored budget's status, as the eviction
 * handler tells the disruption controller. Inside t. */
static int record_disruption(fakeapi__ctx *c, fakeapi__txn *t, json_t *pdb, long long allowed)
{
    fakeapi__resource *res = fakeapi__registry_find_key(c->srv->reg, PDB_KEY);
    json_t *next = json_deep_copy(pdb);
    int rc = -1;
    if (!res || !next)
        goto out;
    json_t *st = json_object_get(next, "status");
    char now[40];
    fakeapi__fmt_time(fakeapi__srv_now(c->srv), now, sizeof now);
    json_object_set_new(st, "disruptionsAllowed", json_integer(allowed));
    json_t *dp = json_object_get(st, "disruptedPods");
    if (!json_is_object(dp))
        json_object_set_new(st, "disruptedPods", dp = json_object());
    json_object_set_new(dp, c->rt->name, json_string(now));
    if (allowed == 0) {
        /* The DisruptionAllowed condition turns False. */
        json_t *conds = json_object_get(st, "conditions");
        if (!json_is_array(conds))
            json_object_set_new(st, "conditions", conds = json_array());
        json_t *cond = NULL, *x;
        size_t i;
        json_array_foreach(conds, i, x)
        {
            const char *type = jstr(x, "type");
            if (type && !strcmp(type, "DisruptionAllowed"))
                cond = x;
        }
        if (!cond)
            json_array_append_new(conds, cond = json_pack("{s:s}", "type", "DisruptionAllowed"));
        const char *was = jstr(cond, "status");
        if (!was || strcmp(was, "False"))
            json_object_set_new(cond, "lastTransitionTime", json_string(now));
        json_object_set_new(cond, "status", json_string("False"));
        json_object_set_new(cond, "reason", json_string("InsufficientPods"));
        json_object_set_new(cond, "message", json_string(""));
        json_object_set(cond, "observedGeneration", json_object_get(st, "observedGeneration"));
    }
    rc = fakeapi__txn_put(t, res, next, pdb);
out:
    json_decref(next);
    fakeapi__resource_unref(res);
    return rc;
}

/* ---- pods/eviction ---------------------------------------------------------------- */

typedef struct evict_opts {
    const char *policy, *pre_uid, *pre_rv;
    bool dry_run;
    int64_t grace; /* FAKEAPI__GRACE_UNSET when not given */
} evict_opts;

/* The Eviction's deleteOptions. false having answered an error. */
static bool eviction_opts(fakeapi__ctx *c, const json_t *ev, evict_opts *o)
{
    const json_t *d = json_object_get(ev, "deleteOptions");
    const json_t *pre = json_object_get(d, "preconditions");
    o->policy = jstr(d, "propagationPolicy");
    const json_t *orphan = json_object_get(d, "orphanDependents");
    if (!o->policy && json_is_boolean(orphan))
        o->policy = json_is_true(orphan) ? "Orphan" : "Background";
    o->pre_uid = jstr(pre, "uid");
    o->pre_rv = jstr(pre, "resourceVersion");
    o->dry_run = fakeapi__dry_run(c);
    const json_t *g = json_object_get(d, "gracePeriodSeconds");
    o->grace = json_is_integer(g) ? json_integer_value(g) : FAKEAPI__GRACE_UNSET;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(d, "dryRun"), i, v)
    {
        if (!json_is_string(v) || strcmp(json_string_value(v), "All")) {
            fakeapi__resp_error(c->resp, 422, "Invalid", NULL,
                                "DeleteOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported "
                                "value: \"%s\": supported values: \"All\"",
                                or_empty(json_string_value(v)));
            return false;
        }
        o->dry_run = true;
    }
    if (o->policy && strcmp(o->policy, "Background") && strcmp(o->policy, "Foreground") &&
        strcmp(o->policy, "Orphan")) {
        fakeapi__resp_error(c->resp, 422, "Invalid", NULL,
                            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: "
                            "Unsupported value: \"%s\": supported values: \"Foreground\", "
                            "\"Background\", \"Orphan\"",
                            o->policy);
        return false;
    }
    return true;
}

/* The body: a policy/v1 (or v1beta1) Eviction naming this pod. NULL having answered. */
static json_t *eviction_body(fakeapi__ctx *c)
{
    json_t *ev = fakeapi__body_object(c);
    if (!ev)
        return NULL;
    const char *kind = jstr(ev, "kind"), *av = jstr(ev, "apiVersion");
    const char *name = fakeapi__meta_str(ev, "name"), *ns = fakeapi__meta_str(ev, "namespace");
    if (!json_is_object(ev) || (kind && strcmp(kind, "Eviction"))) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "not a Eviction object: %s",
                            kind ? kind : "not an object");
    } else if (av && strcmp(av, "policy/v1") && strcmp(av, "policy/v1beta1")) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "the API version in the data (%s) does not match the expected API "
                            "version (policy/v1)",
                            av);
    } else if (!fakeapi__typed(c, "Eviction", "Eviction", "deleteOptions",
                               json_object_get(ev, "deleteOptions"), JSON_OBJECT,
                               "v1.DeleteOptions") ||
               !fakeapi__typed(c, "Eviction", "DeleteOptions", "deleteOptions.dryRun",
                               json_object_get(json_object_get(ev, "deleteOptions"), "dryRun"),
                               JSON_ARRAY, "[]string") ||
               !fakeapi__typed(
                   c, "Eviction", "DeleteOptions", "deleteOptions.preconditions",
                   json_object_get(json_object_get(ev, "deleteOptions"), "preconditions"),
                   JSON_OBJECT, "v1.Preconditions")) {
        /* answered */
    } else if (!name || strcmp(name, c->rt->name)) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "name in URL does not match name in Eviction object");
    } else if (ns && *ns && strcmp(ns, c->ns)) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "the namespace of the provided object does not match the namespace "
                            "sent on the request");
    } else {
        return ev;
    }
    json_decref(ev);
    return NULL;
}

static bool preconditions_hold(fakeapi__ctx *c, const evict_opts *o, const json_t *pod)
{
    const char *uid = fakeapi__meta_str(pod, "uid"),
               *rv = fakeapi__meta_str(pod, "resourceVersion");
    if (o->pre_uid && (!uid || strcmp(o->pre_uid, uid))) {
        fakeapi__resp_error(c->resp, 409, "Conflict", fakeapi__details(c->res, c->rt->name),
                            "Operation cannot be fulfilled on pods \"%s\": Precondition failed: "
                            "UID in precondition: %s, UID in object meta: %s",
                            c->rt->name, o->pre_uid, uid ? uid : "");
        return false;
    }
    if (o->pre_rv && (!rv || strcmp(o->pre_rv, rv))) {
        fakeapi__resp_error(c->resp, 409, "Conflict", fakeapi__details(c->res, c->rt->name),
                            "Operation cannot be fulfilled on pods \"%s\": Precondition failed: "
                            "ResourceVersion in precondition: %s, ResourceVersion in object "
                            "meta: %s",
                            c->rt->name, o->pre_rv, rv ? rv : "");
        return false;
    }
    return true;
}

/* Terminal, pending (or never given a phase) and terminating pods go
 * without a budget check: they are not running anyway. */
static bool budget_ignored(const json_t *pod)
{
    const char *phase = jstr(json_object_get(pod, "status"), "phase");
    return !phase || !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed") ||
           !strcmp(phase, "Pending") || fakeapi__meta_str(pod, "deletionTimestamp");
}

/*
 * The budget covering pod, if any: 0 and *out (a new reference, or NULL for
 * none); 1 having answered (more than one budget, as the real server refuses);
 * -1 on a storage error.
 */
static int covering_budget(fakeapi__ctx *c, const json_t *pod, json_t **out,
                           fakeapi__labelsel **sel_out)
{
    json_t *all = json_array();
    *out = NULL;
    *sel_out = NULL;
    if (!all || fakeapi__store_load_all(c->srv->store, PDB_KEY, c->ns, all) < 0) {
        json_decref(all);
        return -1;
    }
    const json_t *labels = json_object_get(json_object_get(pod, "metadata"), "labels");
    size_t i, found = 0;
    json_t *pdb;
    json_array_foreach(all, i, pdb)
    {
        fakeapi__labelsel *sel =
            budget_selector(json_object_get(json_object_get(pdb, "spec"), "selector"));
        if (!sel || !fakeapi__labelsel_match(sel, labels)) {
            fakeapi__labelsel_free(sel);
            continue;
        }
        if (found++ == 0) {
            *out = json_incref(pdb);
            *sel_out = sel;
        } else {
            fakeapi__labelsel_free(sel);
        }
    }
    json_decref(all);
    if (found > 1) {
        json_decref(*out);
        fakeapi__labelsel_free(*sel_out);
        *out = NULL;
        *sel_out = NULL;
        fakeapi__resp_error(c->resp, 500, "", NULL,
                            "This pod has more than one PodDisruptionBudget, which the eviction "
                            "subresource does not support.");
        return 1;
    }
    return 0;
}

/*
 * Check the budget for evicting pod, recording the disruption in a stored
 * budget. 0 to go on with the delete, 1 having answered (blocked), -1 on a
 * storage error.
 */
static int check_budget(fakeapi__ctx *c, fakeapi__txn *t, const json_t *pod, bool dry_run)
{
    json_t *pdb = NULL;
    fakeapi__labelsel *sel = NULL;
    int rc = covering_budget(c, pod, &pdb, &sel);
    if (rc != 0 || !pdb)
        return rc;
    budget b;
    const char *name = fakeapi__meta_str(pdb, "name");
    const char *policy = jstr(json_object_get(pdb, "spec"), "unhealthyPodEvictionPolicy");
    bool unhealthy_always = policy && !strcmp(policy, "AlwaysAllow");
    if (budget_of(c, pdb, sel, &b) < 0) {
        rc = -1;
    } else if (!pod_ready(pod) && (unhealthy_always || (b.current >= b.desired && b.desired > 0))) {
        /* An unready pod does not count towards healthy: nothing to take, when
         * the budget is met (IfHealthyBudget, the default) or always. */
        rc = 0;
    } else if (b.stored && b.pending) {
        budget_blocks(c, 10, "The disruption budget %s is still being processed by the server.",
                      name);
        rc = 1;
    } else if (b.allowed < 0) {
        fakeapi__resp_error(c->resp, 403, "Forbidden",
                            json_pack("{s:s, s:s, s:s}", "name", name, "group", "policy", "kind",
                                      "poddisruptionbudget"),
                            "poddisruptionbudget.policy \"%s\" is forbidden: pdb disruptions "
                            "allowed is negative",
                            name);
        rc = 1;
    } else if (b.allowed == 0) {
        budget_blocks(c, 0,
                      "The disruption budget %s needs %lld healthy pods and has %lld currently",
                      name, b.desired, b.current);
        rc = 1;
    } else if (b.stored && !dry_run) {
        rc = record_disruption(c, t, pdb, b.allowed - 1) < 0 ? -1 : 0;
    }
    json_decref(pdb);
    fakeapi__labelsel_free(sel);
    return rc;
}

static void do_eviction(fakeapi__ctx *c)
{
    if (strcmp(c->req->method, "POST")) {
        method_not_allowed(c);
        return;
    }
    json_t *ev = eviction_body(c), *pod = NULL;
    evict_opts o = {0};
    if (!ev || !eviction_opts(c, ev, &o))
        goto out;
    fakeapi__txn t;
    if (fakeapi__txn_begin(&t, c->srv) < 0) {
        fakeapi__storage_error(c);
        goto out;
    }
    if (!(pod = load_pod(c, &t)))
        goto out;
    int rc = 0;
    if (!budget_ignored(pod))
        rc = check_budget(c, &t, pod, o.dry_run);
    if (rc == 0 && !preconditions_hold(c, &o, pod))
        rc = 1;
    if (rc == 0)
        rc = fakeapi__delete_in_txn_grace(&t, c->res, pod, o.policy, o.grace) < 0 ? -1 : 0;
    if (rc != 0 || o.dry_run) {
        fakeapi__txn_abort(&t);
        if (rc < 0)
            fakeapi__storage_error(c);
        else if (rc == 0)
            answer_success(c);
    } else if (fakeapi__txn_commit(&t) < 0) {
        fakeapi__storage_error(c);
    } else {
        answer_success(c);
    }
out:
    json_decref(pod);
    json_decref(ev);
}

/* ---- pods/binding and bindings --------------------------------------------------- */

/* 409 on pods/binding, as the real server words a refused assignment. */
static void binding_conflict(fakeapi__ctx *c, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void binding_conflict(fakeapi__ctx *c, const char *name, const char *fmt, ...)
{
    char why[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    fakeapi__resp_error(c->resp, 409, "Conflict",
                        json_pack("{s:s, s:s}", "name", name, "kind", "pods/binding"),
                        "Operation cannot be fulfilled on pods/binding \"%s\": %s", name, why);
}

/*
 * parent[key] as a container of parent's own (parent is one already): a
 * shallow copy of the object (or array) there, put in its place, or a new
 * empty one when there is none. What is inside stays shared: change only
 * the members themselves. NULL on ENOMEM.
 */
static json_t *own_member(json_t *parent, const char *key, bool array)
{
    json_t *v = json_object_get(parent, key);
    json_t *own = (array ? json_is_array(v) : json_is_object(v)) ? json_copy(v)
                  : array                                        ? json_array()
                                                                 : json_object();
    if (!own || json_object_set_new(parent, key, own) < 0)
        return NULL;
    return own;
}

/* Set spec.nodeName and the PodScheduled condition on the pod named name. */
static void bind_pod(fakeapi__ctx *c, const char *name, const json_t *binding)
{
    const json_t *target = json_object_get(binding, "target");
    const char *node = jstr(target, "name"), *tkind = jstr(target, "kind");
    if (!node || !*node || (tkind && *tkind && strcmp(tkind, "Node"))) {
        const char *field = !node || !*node ? "target.name" : "target.kind";
        char msg[300];
        if (!node || !*node)
            snprintf(msg, sizeof msg, "Required value");
        else
            snprintf(msg, sizeof msg, "Unsupported value: \"%s\": supported values: \"Node\"",
                     tkind);
        fakeapi__resp_error(
            c->resp, 422, "Invalid",
            json_pack("{s:s, s:s, s:[{s:s, s:s, s:s}]}", "name", name, "kind", "Binding", "causes",
                      "reason", node && *node ? "FieldValueNotSupported" : "FieldValueRequired",
                      "message", msg, "field", field),
            "Binding \"%s\" is invalid: %s: %s", name, field, msg);
        return;
    }
    fakeapi__resource *pods = fakeapi__registry_find(c->srv->reg, "", "v1", "pods");
    fakeapi__txn t;
    json_t *cur = NULL, *next = NULL;
    if (!pods || fakeapi__txn_begin(&t, c->srv) < 0) {
        fakeapi__storage_error(c);
        goto out;
    }
    /* Read only: the new state shares what it does not change with it. */
    int rc = fakeapi__store_get_shared(c->srv->store, "/pods", c->ns, name, &cur);
    const char *uid = fakeapi__meta_str(binding, "uid");
    const char *rv = fakeapi__meta_str(binding, "resourceVersion");
    const char *bound = cur ? jstr(json_object_get(cur, "spec"), "nodeName") : NULL;
    if (rc != 0) {
        fakeapi__resource *was = c->res;
        c->res = pods; /* the 404 names pods, also for POST bindings */
        if (rc == 1)
            fakeapi__not_found(c, name);
        else
            fakeapi__storage_error(c);
        c->res = was;
    } else if (fakeapi__meta_str(cur, "deletionTimestamp")) {
        binding_conflict(c, name, "pod %s is being deleted, cannot be assigned to a host", name);
    } else if (bound && *bound) {
        binding_conflict(c, name, "pod %s is already assigned to node \"%s\"", name, bound);
    } else if (json_array_size(json_object_get(json_object_get(cur, "spec"), "schedulingGates"))) {
        binding_conflict(c, name, "pod %s has non-empty .spec.schedulingGates", name);
    } else if (uid && *uid && strcmp(uid, or_empty(fakeapi__meta_str(cur, "uid")))) {
        binding_conflict(c, name,
                         "Precondition failed: UID in precondition: %s, UID in object "
                         "meta: %s",
                         uid, or_empty(fakeapi__meta_str(cur, "uid")));
    } else if (rv && *rv && strcmp(rv, or_empty(fakeapi__meta_str(cur, "resourceVersion")))) {
        binding_conflict(c, name,
                         "the object has been modified; please apply your changes to "
                         "the latest version and try again");
    } else if (!(next = json_copy(cur))) {
        fakeapi__storage_error(c);
    } else {
        /* Every container changed below is next's own copy first. */
        json_t *spec = own_member(next, "spec", false);
        json_t *meta = own_member(next, "metadata", false);
        json_t *st = own_member(next, "status", false);
        json_t *conds = st ? own_member(st, "conditions", true) : NULL;
        if (!spec || !meta || !conds) {
            fakeapi__storage_error(c);
            goto abort;
        }
        json_object_set_new(spec, "nodeName", json_string(node));
        const char *k;
        json_t *v, *ann = NULL;
        json_object_foreach(json_object_get(json_object_get(binding, "metadata"), "annotations"), k,
                            v)
        {
            if (!ann && !(ann = own_member(meta, "annotations", false))) {
                fakeapi__storage_error(c);
                goto abort;
            }
            json_object_set(ann, k, v);
        }
        json_t *cond = NULL, *x;
        size_t i, at = 0;
        json_array_foreach(conds, i, x)
        {
            if (jstr(x, "type") && !strcmp(jstr(x, "type"), "PodScheduled")) {
                cond = x;
                at = i;
            }
        }
        if (cond) {
            cond = json_copy(cond);
            if (!cond || json_array_set_new(conds, at, cond) < 0) {
                fakeapi__storage_error(c);
                goto abort;
            }
        } else {
            json_array_append_new(conds, cond = json_pack("{s:s}", "type", "PodScheduled"));
        }
        char now[40];
        fakeapi__fmt_time(fakeapi__srv_now(c->srv), now, sizeof now);
        if (!jstr(cond, "status") || strcmp(jstr(cond, "status"), "True"))
            json_object_set_new(cond, "lastTransitionTime", json_string(now));
        json_object_set_new(cond, "status", json_string("True"));
        json_object_set_new(cond, "lastProbeTime", json_null());
        json_int_t gen = json_integer_value(json_object_get(meta, "generation"));
        json_object_set_new(meta, "generation", json_integer(gen + 1));
        if (fakeapi__txn_put(&t, pods, next, cur) < 0) {
            fakeapi__storage_error(c);
        } else if (fakeapi__dry_run(c)) {
            fakeapi__txn_abort(&t);
            answer_success(c);
            goto out;
        } else {
            /* The kubelet's status write comes next: it starts from the
             * stored pod kept parsed (next is not touched again). */
            fakeapi__txn_keep(&t, next);
            if (fakeapi__txn_commit(&t) < 0) {
                fakeapi__storage_error(c);
                goto out;
            }
            answer_success(c);
            goto out;
        }
    }
abort:
    fakeapi__txn_abort(&t);
out:
    json_decref(cur);
    json_decref(next);
    fakeapi__resource_unref(pods);
}

/* The body: a core/v1 Binding. NULL having answered. */
static json_t *binding_body(fakeapi__ctx *c)
{
    json_t *b = fakeapi__body_object(c);
    const char *kind = b ? jstr(b, "kind") : NULL;
    if (b && (!json_is_object(b) || (kind && strcmp(kind, "Binding")))) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "not a Binding object: %s",
                            kind ? kind : "not an object");
    } else if (b && !fakeapi__typed(c, "Binding", "Binding", "target", json_object_get(b, "target"),
                                    JSON_OBJECT, "v1.ObjectReference")) {
        /* answered */
    } else {
        return b;
    }
    json_decref(b);
    return NULL;
}

void fakeapi__do_binding(fakeapi__ctx *c)
{
    json_t *b = binding_body(c);
    if (!b)
        return;
    const char *name = fakeapi__meta_str(b, "name");
    const char *ns = fakeapi__meta_str(b, "namespace");
    if (!name || !*name)
        fakeapi__resp_error(c->resp, 422, "Invalid", NULL,
                            "Binding \"\" is invalid: metadata.name: Required value: name or "
                            "generateName is required");
    else if (ns && *ns && strcmp(ns, c->ns))
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "the namespace of the provided object does not match the namespace "
                            "sent on the request");
    else
        bind_pod(c, name, b);
    json_decref(b);
}

static void do_pod_binding(fakeapi__ctx *c)
{
    if (strcmp(c->req->method, "POST")) {
        method_not_allowed(c);
        return;
    }
    json_t *b = binding_body(c);
    if (!b)
        return;
    const char *name = fakeapi__meta_str(b, "name");
    if (!name || strcmp(name, c->rt->name))
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "name in URL does not match name in Binding object");
    else
        bind_pod(c, name, b);
    json_decref(b);
}

/* ---- pods/log ------------------------------------------------------------------------ */

/* True if the pod has a container (or init or ephemeral container) named name. */
static bool has_container(const json_t *pod, const char *name)
{
    static const char *const lists[] = {"containers", "initContainers", "ephemeralContainers"};
    const json_t *spec = json_object_get(pod, "spec");
    for (size_t l = 0; l < 3; l++) {
        size_t i;
        json_t *ct;
        json_array_foreach(json_object_get(spec, lists[l]), i, ct)
        {
            if (jstr(ct, "name") && !strcmp(jstr(ct, "name"), name))
                return true;
        }
    }
    return false;
}

/* "a, b" of the names in spec.<list>. */
static void container_names(const json_t *pod, const char *list, char *out, size_t len)
{
    size_t off = 0, i;
    json_t *ct;
    out[0] = '\0';
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), list), i, ct)
    {
        if (off < len)
            off += (size_t)snprintf(out + off, len - off, "%s%s", i ? " " : "",
                                    or_empty(jstr(ct, "name")));
    }
}

/* The container a log request reads, or NULL having answered 400. */
static const char *log_container(fakeapi__ctx *c, const json_t *pod)
{
    const char *want = fakeapi__q(c->req, "container");
    if (want && *want) {
        if (has_container(pod, want))
            return want;
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "container %s is not valid for pod %s", want, c->rt->name);
        return NULL;
    }
    const json_t *cts = json_object_get(json_object_get(pod, "spec"), "containers");
    if (json_array_size(cts) == 1)
        return or_empty(jstr(json_array_get(cts, 0), "name"));
    if (json_array_size(cts) == 0) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "a container name must be specified for pod %s", c->rt->name);
        return NULL;
    }
    char names[1024], inits[1024];
    container_names(pod, "containers", names, sizeof names);
    container_names(pod, "initContainers", inits, sizeof inits);
    fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                        "a container name must be specified for pod %s, choose one of: [%s]%s%s%s",
                        c->rt->name, names, *inits ? " or one of the init containers: [" : "",
                        inits, *inits ? "]" : "");
    return NULL;
}

/* A PodLogOptions integer: -2 having answered (garbage or negative), -1 absent. */
static long long log_option(fakeapi__ctx *c, const char *name)
{
    const char *v = fakeapi__q(c->req, name);
    long long n;
    if (!v)
        return -1;
    if (fakeapi__parse_int(v, &n) < 0) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "%s: strconv.ParseInt: parsing \"%s\": invalid syntax", name, v);
        return -2;
    }
    if (n < 0 || (n == 0 && strcmp(name, "tailLines"))) {
        fakeapi__resp_error(c->resp, 422, "Invalid", NULL,
                            "PodLogOptions \"%s\" is invalid: %s: Invalid value: %lld: must be "
                            "greater than %s0",
                            c->rt->name, name, n, n == 0 ? "" : "or equal to ");
        return -2;
    }
    return n;
}

/*
 * The log: the annotation LOG_ANNOTATION-<container>, else LOG_ANNOTATION,
 * else nothing (fakeapi runs no containers). follow returns what there is
 * and ends: there is no process to wait for.
 */
static void do_log(fakeapi__ctx *c)
{
    if (strcmp(c->req->method, "GET")) {
        method_not_allowed(c);
        return;
    }
    long long tail = log_option(c, "tailLines");
    long long limit = tail == -2 ? -2 : log_option(c, "limitBytes");
    if (tail == -2 || limit == -2 || log_option(c, "sinceSeconds") == -2)
        return;
    json_t *pod = NULL;
    fakeapi__store_lock(c->srv->store);
    int rc = fakeapi__store_get(c->srv->store, "/pods", c->ns, c->rt->name, &pod);
    fakeapi__store_unlock(c->srv->store);
    if (rc != 0) {
        if (rc == 1)
            fakeapi__not_found(c, c->rt->name);
        else
            fakeapi__storage_error(c);
        return;
    }
    const char *ct = log_container(c, pod);
    if (ct && fakeapi__q_bool(c->req, "previous")) {
        /* No container ever ran, so none has terminated (the kubelet's words). */
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "previous terminated container \"%s\" in pod \"%s\" not found", ct,
                            c->rt->name);
        ct = NULL;
    }
    if (!ct) {
        json_decref(pod);
        return;
    }
    const json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
    char key[512];
    snprintf(key, sizeof key, "%s-%s", LOG_ANNOTATION, ct);
    const char *text = jstr(ann, key);
    if (!text)
        text = jstr(ann, LOG_ANNOTATION);
    if (!text)
        text = "";
    size_t len = strlen(text);
    const char *start = text;
    if (tail >= 0) {
        /* The last tail lines; a final newline ends a line, it does not start one. */
        size_t end = len && text[len - 1] == '\n' ? len - 1 : len, from = end;
        long long seen = 0;
        if (tail == 0)
            from = len;
        while (tail > 0 && from > 0 && !(text[from - 1] == '\n' && ++seen == tail))
            from--;
        start = text + from;
    }
    size_t n = len - (size_t)(start - text);
    if (limit > 0 && (size_t)limit < n)
        n = (size_t)limit;
    char *body = malloc(n + 1);
    if (!body) {
        json_decref(pod);
        fakeapi__storage_error(c);
        return;
    }
    memcpy(body, start, n);
    body[n] = '\0';
    json_decref(pod);
    c->resp->content_type = "text/plain";
    fakeapi__resp_take(c->resp, 200, body, n);
}

/* ---- what needs a kubelet ------------------------------------------------------------ */

static void not_supported(fakeapi__ctx *c)
{
    const char *why = !strcmp(c->res->plural, "pods")    ? "fakeapi does not run containers"
                      : !strcmp(c->res->plural, "nodes") ? "fakeapi has no kubelets"
                                                         : "fakeapi has no endpoints to proxy to";
    json_t *obj = NULL;
    fakeapi__store_lock(c->srv->store);
    int rc = fakeapi__store_get(c->srv->store, c->res->store_key, c->ns, c->rt->name, &obj);
    fakeapi__store_unlock(c->srv->store);
    json_decref(obj);
    if (rc == 1)
        fakeapi__not_found(c, c->rt->name);
    else if (rc < 0)
        fakeapi__storage_error(c);
    else
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "%s: %s/%s is not supported", why,
                            c->res->plural, c->rt->sub);
}

void fakeapi__do_pod_sub(fakeapi__ctx *c)
{
    const char *sub = c->rt->sub;
    if (!strcmp(sub, "eviction"))
        do_eviction(c);
    else if (!strcmp(sub, "binding"))
        do_pod_binding(c);
    else if (!strcmp(sub, "log"))
        do_log(c);
    else
        not_supported(c);
}
