/*
 * replicaset.c - the PodSet controller (see replicaset.h).
 *
 * DESIGN
 * - Threads. reconcile runs on the controller's workers (up to
 *   maxConcurrentReconciles at once, never two for one PodSet); pod_owner_index
 *   runs on the Pod informer's thread. Nothing else runs here.
 * - Reads come from the cache: the PodSet from the PodSet informer, its pods
 *   from the Pod informer through an index on the controller owner's uid.
 *   The cache lags behind our own writes, so a reconcile that acts on what
 *   it reads could create (or delete) the same pods twice. Like
 *   kube-controller-manager's ControllerExpectations, every create and
 *   delete is remembered per PodSet until the cache shows it: a created pod
 *   once the informer holds it or has seen a later resourceVersion, a
 *   deleted one once the informer no longer holds it. While anything is
 *   pending the PodSet is not acted on; the pod events that settle it
 *   requeue the PodSet (Owns), and a timer is the safety net. Pending
 *   expectations older than EXPECT_TTL are dropped (a lost event).
 * - Locks. exp_mu protects exp_table, the expectations of every PodSet of
 *   every manager in the process, keyed by "<cache>/<namespace>/<name>"
 *   (the cache pointer tells managers apart; example_replicaset_setup drops
 *   entries a freed manager at the same address left behind). It is a
 *   leaf lock, never held across a call into libctrl.
 * - Writes: pods are created with generateName and deleted with a uid
 *   precondition; the PodSet's finalizer and status (replicas,
 *   observedGeneration and a "Ready" condition) are written with the
 *   resourceVersion read, so a stale read is a 409 and the reconcile
 *   returns ctrl_err (retried with backoff). Pod creates that answer 409
 *   are retried at once a few times before giving up on this pass.
 * - Owner references, finalizers, conditions and field access use libctrl's
 *   helpers (ctrl/controllerutil.h, ctrl/conditions.h, ctrl/object.h).
 */
#include "replicaset.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_options.h"
#include "ctrl/conditions.h"
#include "ctrl/controllerutil.h"
#include "ctrl/object.h"

#define OWNER_INDEX "example.com/podset-owner"
#define EXPECT_TTL (30 * CTRL_SECOND)
#define EXPECT_RECHECK (1 * CTRL_SECOND)
#define CREATE_ATTEMPTS 3
#define MAX_BURST 500 /* creates or deletes per reconcile */

/* ---- expectations ---- */

static pthread_mutex_t exp_mu = PTHREAD_MUTEX_INITIALIZER;
/* key -> {"uid": s, "since": ns, "adds": {pod: rv}, "dels": {pod: true}} */
static json_t *exp_table;

static void exp_key(ctrl_ctx *ctx, const ctrl_request *req, char *buf, size_t len)
{
    snprintf(buf, len, "%p/%s/%s", (void *)ctrl_ctx_cache(ctx), req->ns, req->name);
}

static unsigned long long rv_num(const char *rv, bool *ok)
{
    char *end = NULL;
    unsigned long long n = rv ? strtoull(rv, &end, 10) : 0;
    *ok = rv && *rv && end && !*end;
    return n;
}

static bool in_array_by_name(const json_t *pods, const char *name)
{
    size_t i;
    const json_t *p;
    json_array_foreach(pods, i, p)
    {
        const char *n = ctrl_obj_meta(p, "name");
        if (n && !strcmp(n, name))
            return true;
    }
    return false;
}

/*
 * Settle what the cache now shows (pods: the PodSet's pods in the cache;
 * last_rv: the Pod informer's last resourceVersion) and say whether
 * anything is still pending. An entry of another uid (a PodSet deleted and
 * created again) or past EXPECT_TTL is dropped.
 */
static bool exp_pending(const char *key, const char *uid, const json_t *pods, const char *last_rv,
                        int64_t now)
{
    bool ok_last;
    unsigned long long last = rv_num(last_rv, &ok_last);
    bool pending = false;
    pthread_mutex_lock(&exp_mu);
    json_t *e = exp_table ? json_object_get(exp_table, key) : NULL;
    if (!e)
        goto out;
    const char *euid = json_string_value(json_object_get(e, "uid"));
    int64_t since = json_integer_value(json_object_get(e, "since"));
    if (!euid || strcmp(euid, uid) || now - since > EXPECT_TTL) {
        json_object_del(exp_table, key);
        goto out;
    }
    json_t *adds = json_object_get(e, "adds"), *dels = json_object_get(e, "dels");
    const char *name;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(adds, tmp, name, v)
    {
        bool ok;
        unsigned long long rv = rv_num(json_string_value(v), &ok);
        if (in_array_by_name(pods, name) || (ok && ok_last && last >= rv))
            json_object_del(adds, name);
    }
    json_object_foreach_safe(dels, tmp, name, v)
    {
        if (!in_array_by_name(pods, name))
            json_object_del(dels, name);
    }
    pending = json_object_size(adds) + json_object_size(dels) > 0;
    if (!pending)
        json_object_del(exp_table, key);
out:
    pthread_mutex_unlock(&exp_mu);
    return pending;
}

/* Remember a create (rv: the created pod's) or a delete (rv NULL). */
static void exp_expect(const char *key, const char *uid, const char *pod, const char *rv,
                       int64_t now)
{
    pthread_mutex_lock(&exp_mu);
    if (!exp_table)
        exp_table = json_object();
    json_t *e = exp_table ? json_object_get(exp_table, key) : NULL;
    if (e && strcmp(json_string_value(json_object_get(e, "uid")), uid)) {
        json_object_del(exp_table, key);
        e = NULL;
    }
    if (!e && exp_table) {
        e = json_pack("{s:s, s:I, s:{}, s:{}}", "uid", uid, "since", (json_int_t)now, "adds",
                      "dels");
        if (e && json_object_set_new(exp_table, key, e) < 0)
            e = NULL;
    }
    if (e) {
        json_object_set_new(e, "since", json_integer(now));
        json_object_set_new(json_object_get(e, rv ? "adds" : "dels"), pod,
                            rv ? json_string(rv) : json_true());
    }
    pthread_mutex_unlock(&exp_mu);
}

static void exp_forget(const char *key)
{
    pthread_mutex_lock(&exp_mu);
    if (exp_table)
        json_object_del(exp_table, key);
    pthread_mutex_unlock(&exp_mu);
}

/* Drop every entry whose key starts with prefix. */
static void exp_forget_prefix(const char *prefix)
{
    size_t n = strlen(prefix);
    pthread_mutex_lock(&exp_mu);
    const char *key;
    json_t *v;
    void *tmp;
    if (exp_table)
        json_object_foreach_safe(exp_table, tmp, key, v)
        {
            if (!strncmp(key, prefix, n))
                json_object_del(exp_table, key);
        }
    pthread_mutex_unlock(&exp_mu);
}

/* ---- helpers on objects ---- */

static json_t *pod_owner_index(const json_t *obj, void *user)
{
    (void)user;
    const char *uid = ctrl_obj_controller_uid(obj, "example.com", EXAMPLE_PODSET_KIND);
    return uid ? json_pack("[s]", uid) : NULL;
}

/* Newest first: creationTimestamp (RFC 3339, compares as text), then
 * resourceVersion where it is a number (the fake server's and etcd's),
 * then the name. */
static int newest_first(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    const char *tx = ctrl_obj_meta(x, "creationTimestamp"),
               *ty = ctrl_obj_meta(y, "creationTimestamp");
    int c = strcmp(ty ? ty : "", tx ? tx : "");
    if (c)
        return c;
    bool okx, oky;
    unsigned long long rx = rv_num(ctrl_obj_meta(x, "resourceVersion"), &okx);
    unsigned long long ry = rv_num(ctrl_obj_meta(y, "resourceVersion"), &oky);
    if (okx && oky && rx != ry)
        return rx < ry ? 1 : -1;
    const char *nx = ctrl_obj_meta(x, "name"), *ny = ctrl_obj_meta(y, "name");
    return strcmp(ny ? ny : "", nx ? nx : "");
}

/* A new Pod for podset ps (borrowed). */
static json_t *pod_for(const json_t *ps)
{
    const char *name = ctrl_obj_name(ps);
    const json_t *tlabels = ctrl_obj_get(ps, "spec.template.metadata.labels");
    const json_t *tspec = ctrl_obj_get(ps, "spec.template.spec");
    char gen[320];
    snprintf(gen, sizeof gen, "%s-", name);
    json_t *pod =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:o}, s:o}", "apiVersion", "v1", "kind", "Pod",
                  "metadata", "generateName", gen, "namespace", ctrl_obj_namespace(ps), "labels",
                  json_is_object(tlabels) ? json_deep_copy(tlabels) : json_object(), "spec",
                  json_is_object(tspec) ? json_deep_copy(tspec) : json_object());
    if (pod && (ctrl_obj_set_label(pod, EXAMPLE_PODSET_LABEL, name) < 0 ||
                ctrl_set_controller_reference(ps, pod, NULL) < 0)) {
        json_decref(pod);
        return NULL;
    }
    return pod;
}

/* ---- the reconcile ---- */

typedef struct pass {
    ctrl_ctx *ctx;
    ctrl_client *c;
    const ctrl_request *req;
    const char *key;
    const char *uid;
} pass;

/* Create n pods; *made counts those created. 0 or the first error. */
static int create_pods(pass *p, const json_t *ps, long n, long *made)
{
    json_t *pod = pod_for(ps);
    if (!pod)
        return CTRL_ERR_NOMEM;
    int rc = 0;
    *made = 0;
    for (long i = 0; i < n && rc == 0; i++) {
        json_t *out = NULL;
        for (int attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
            rc = ctrl_client_create(p->c, pod, NULL, &out, NULL);
            /* 409: a conflict, or a generated name taken (AlreadyExists):
             * nothing was created, try again at once. */
            if (!ctrl_err_is_conflict(rc) && !ctrl_err_is_already_exists(rc))
                break;
        }
        if (rc == 0) {
            exp_expect(p->key, p->uid, ctrl_obj_meta(out, "name"),
                       ctrl_obj_meta(out, "resourceVersion"), ctrl_ctx_now(p->ctx));
            (*made)++;
        }
        json_decref(out);
    }
    json_decref(pod);
    return rc;
}

/* Delete the first n pods of arr; 0 or the first error. */
static int delete_pods(pass *p, const json_t *arr, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const json_t *pod = json_array_get(arr, i);
        const char *name = ctrl_obj_meta(pod, "name");
        ctrl_delete_options o = {.precondition_uid = ctrl_obj_meta(pod, "uid")};
        int rc = ctrl_client_delete(p->c, "v1", "Pod", p->req->ns, name, &o, NULL, NULL);
        /* Gone already, or a pod of that name with another uid: either
         * way ours is gone. */
        if (rc == 0 || ctrl_err_is_not_found(rc) || ctrl_err_is_conflict(rc))
            exp_expect(p->key, p->uid, name, NULL, ctrl_ctx_now(p->ctx));
        else
            return rc;
    }
    return 0;
}

/* Write status.replicas, observedGeneration and the Ready condition (all
 * replicas there) when they changed. */
static int write_status(pass *p, const json_t *ps, long replicas)
{
    json_t *copy = json_deep_copy(ps);
    json_t *conds = ctrl_obj_conditions(copy);
    if (!conds) {
        json_decref(copy);
        return copy ? CTRL_ERR_ARG : CTRL_ERR_NOMEM;
    }
    int64_t gen = ctrl_obj_generation(ps), want = ctrl_obj_get_int(ps, "spec.replicas", 0);
    char msg[64];
    snprintf(msg, sizeof msg, "%ld of %lld pods", replicas, (long long)want);
    ctrl_condition ready = {"Ready",
                            replicas == want ? "True" : "False",
                            replicas == want ? "AllReplicas" : "Scaling",
                            msg,
                            gen,
                            NULL};
    bool changed = ctrl_condition_set(conds, &ready, ctrl_ctx_now(p->ctx));
    if (ctrl_obj_get_int(ps, "status.replicas", -1) != replicas ||
        ctrl_obj_get_int(ps, "status.observedGeneration", -1) != gen) {
        ctrl_obj_set(copy, "status.replicas", json_integer(replicas));
        ctrl_obj_set(copy, "status.observedGeneration", json_integer(gen));
        changed = true;
    }
    int rc = changed ? ctrl_client_update_status(p->c, copy, NULL, NULL, NULL) : 0;
    json_decref(copy);
    return rc;
}

/* Add (add true) or remove our finalizer; *out the object written. */
static int set_finalizer(pass *p, const json_t *ps, bool add, json_t **out)
{
    json_t *copy = json_deep_copy(ps);
    if (!copy)
        return CTRL_ERR_NOMEM;
    if (add)
        ctrl_add_finalizer(copy, EXAMPLE_PODSET_FINALIZER);
    else
        ctrl_remove_finalizer(copy, EXAMPLE_PODSET_FINALIZER);
    int rc = ctrl_client_update(p->c, copy, NULL, out, NULL);
    json_decref(copy);
    return rc;
}

static void log_count(ctrl_ctx *ctx, const char *msg, long n)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", n);
    ctrl_log_info(ctx, msg, "count", buf);
}

/* The PodSet is going: delete its pods, then let it go. */
static ctrl_result finalize(pass *p, const json_t *ps, const json_t *pods)
{
    if (!ctrl_contains_finalizer(ps, EXAMPLE_PODSET_FINALIZER))
        return ctrl_done();
    if (json_array_size(pods) > 0) {
        size_t n = json_array_size(pods);
        int rc = delete_pods(p, pods, n);
        if (rc < 0)
            return ctrl_err(rc);
        log_count(p->ctx, "deleting pods before the podset goes", (long)n);
        /* The finalizer goes once the cache shows them gone. */
        return ctrl_requeue_after(EXPECT_RECHECK);
    }
    int rc = set_finalizer(p, ps, false, NULL);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done();
    if (rc < 0)
        return ctrl_err(rc);
    exp_forget(p->key);
    ctrl_log_info(p->ctx, "pods deleted, finalizer removed");
    return ctrl_done();
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)user;
    ctrl_cache *cache = ctrl_ctx_cache(ctx);
    ctrl_informer *ps_inf = NULL, *pod_inf = NULL;
    int rc = ctrl_cache_informer(cache, EXAMPLE_PODSET_API_VERSION, EXAMPLE_PODSET_KIND, NULL,
                                 &ps_inf, NULL);
    if (rc == 0)
        rc = ctrl_cache_informer(cache, "v1", "Pod", NULL, &pod_inf, NULL);
    if (rc < 0)
        return ctrl_err(rc);

    char key[512];
    exp_key(ctx, req, key, sizeof key);
    json_t *ps = NULL, *owned = NULL, *active = NULL, *written = NULL;
    ctrl_result res = ctrl_done();
    rc = ctrl_informer_get(ps_inf, req->ns, req->name, &ps);
    if (ctrl_err_is_not_found(rc)) {
        exp_forget(key); /* gone: its pods go with it (garbage collection) */
        return ctrl_done();
    }
    if (rc < 0)
        return ctrl_err(rc);
    const char *uid = ctrl_obj_uid(ps);
    if (!uid) {
        res = ctrl_terminal(CTRL_ERR_ARG);
        goto out;
    }
    pass p = {.ctx = ctx, .c = ctrl_ctx_client(ctx), .req = req, .key = key, .uid = uid};

    /* Read the informer's position before its contents: whatever it has
     * seen up to last_rv is then in the list. */
    char last_rv[64];
    ctrl_informer_last_rv(pod_inf, last_rv, sizeof last_rv);
    rc = ctrl_informer_by_index(pod_inf, OWNER_INDEX, uid, &owned);
    if (rc < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    if (exp_pending(key, uid, owned, last_rv, ctrl_ctx_now(ctx))) {
        /* The pod events that settle it requeue us; the timer is a net. */
        res = ctrl_requeue_after(EXPECT_RECHECK);
        goto out;
    }
    active = json_array();
    if (!active) {
        res = ctrl_err(CTRL_ERR_NOMEM);
        goto out;
    }
    size_t i;
    json_t *pod;
    json_array_foreach(owned, i, pod)
    {
        if (!ctrl_obj_deleting(pod))
            json_array_append(active, pod);
    }

    if (ctrl_obj_deleting(ps)) {
        res = finalize(&p, ps, owned);
        goto out;
    }
    const json_t *cur = ps;
    if (!ctrl_contains_finalizer(ps, EXAMPLE_PODSET_FINALIZER)) {
        rc = set_finalizer(&p, ps, true, &written);
        if (rc < 0) {
            res = ctrl_err(rc);
            goto out;
        }
        cur = written;
    }

    int64_t want = ctrl_obj_get_int(cur, "spec.replicas", 0);
    long have = (long)json_array_size(active);
    long diff = (long)want - have;
    int act_rc = 0;
    if (diff > 0) {
        long made = 0;
        act_rc = create_pods(&p, cur, diff > MAX_BURST ? MAX_BURST : diff, &made);
        if (made)
            log_count(ctx, "created pods", made);
    } else if (diff < 0) {
        size_t n = (size_t)-diff > MAX_BURST ? MAX_BURST : (size_t)-diff;
        json_t *sorted = json_array();
        json_t **v = malloc((size_t)have * sizeof *v);
        if (!sorted || !v) {
            json_decref(sorted);
            free(v);
            res = ctrl_err(CTRL_ERR_NOMEM);
            goto out;
        }
        for (long k = 0; k < have; k++)
            v[k] = json_array_get(active, (size_t)k);
        qsort(v, (size_t)have, sizeof *v, newest_first);
        for (size_t k = 0; k < n; k++)
            json_array_append(sorted, v[k]);
        free(v);
        act_rc = delete_pods(&p, sorted, n);
        json_decref(sorted);
        if (act_rc == 0)
            log_count(ctx, "deleted pods", (long)n);
    }

    /* Status says what the cache showed at the start of this pass (as a
     * ReplicaSet's does): the events of our writes bring the next pass. */
    rc = write_status(&p, cur, have);
    if (act_rc < 0)
        res = ctrl_err(act_rc);
    else if (rc < 0 && !ctrl_err_is_not_found(rc))
        res = ctrl_err(rc);
out:
    json_decref(written);
    json_decref(active);
    json_decref(owned);
    json_decref(ps);
    return res;
}

/* ---- setup ---- */

int example_replicaset_setup(ctrl_manager *mgr, const json_t *config)
{
    const char *name;
    ctrl_controller_options o; /* over the manager's defaults */
    if (!mgr || example_options_from_config(config, "podset", &name, &o) < 0)
        return CTRL_ERR_ARG;

    ctrl_cache *cache = ctrl_manager_cache(mgr);
    ctrl_informer *pods = NULL;
    int rc = ctrl_cache_informer(cache, "v1", "Pod", NULL, &pods, NULL);
    if (rc < 0)
        return rc;
    rc = ctrl_informer_add_index(pods, OWNER_INDEX, pod_owner_index, NULL);
    if (rc == 0) {
        /* The first registration on this cache: a manager freed earlier
         * may have left expectations under the same address. */
        char prefix[64];
        snprintf(prefix, sizeof prefix, "%p/", (void *)cache);
        exp_forget_prefix(prefix);
    } else if (rc != CTRL_ERR_ARG) { /* ARG: the index is there (a second registration) */
        return rc;
    }

    ctrl_builder *b = ctrl_builder_for(mgr, EXAMPLE_PODSET_API_VERSION, EXAMPLE_PODSET_KIND);
    ctrl_builder_owns(b, "v1", "Pod");
    ctrl_builder_named(b, name);
    ctrl_builder_with_options(b, &o);
    return ctrl_builder_complete(b, reconcile, NULL);
}
