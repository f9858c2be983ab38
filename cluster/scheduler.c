/*
 * scheduler.c - the scheduler (the "scheduler" built-in): binds pending
 * pods to nodes through pods/binding, as kube-scheduler's default profile
 * does for the simple cases (scheduler.h has the filters and the score).
 *
 * DESIGN
 * - One controller, "kc-scheduler", For Pod (only pods without a node whose
 *   schedulerName is default-scheduler or unset), one worker: one pod at a
 *   time, as kube-scheduler's scheduling cycle, so choices do not race.
 * - Accounting: what each node has given out is kept here, not summed from
 *   the cache on every pod: a handler on the Pod informer (informer thread)
 *   adds each bound, non-terminal pod's requests to its node and takes them
 *   away when it goes or finishes; a pod we bind is "assumed" on its node at
 *   once (kube-scheduler's assume), so the next pod sees it before the
 *   cache does. mu protects acct, used and unsched; it is a leaf lock.
 * - Unschedulable pods stay Pending with PodScheduled=False (Unschedulable,
 *   the FitError message) and a FailedScheduling Event, and wait in unsched:
 *   a Node added or changed (labels, taints, allocatable, unschedulable,
 *   readiness) or a bound pod deleted or finished requeues all of them
 *   (kube-scheduler's move to the active queue), and every 5 minutes anyway
 *   (podMaxInUnschedulablePodsDuration).
 * - Ties between nodes of equal score go to the first by name, so the same
 *   cluster state always gives the same choice.
 * - Events carry source.component default-scheduler, as kube-scheduler's.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/conditions.h"
#include "ctrl/object.h"
#include "nodes.h"
#include "podutil.h"
#include "scheduler.h"

#define RETRY_UNSCHEDULABLE (5 * CTRL_MINUTE)
#define DEFAULT_SCHEDULER "default-scheduler"

typedef struct sched_state {
    kc_config *cfg;
    ctrl_recorder *rec;
    pthread_mutex_t mu;
    json_t *acct;    /* "ns/name" -> {"node": s, "assumed": b, "r": [5 ints]} */
    json_t *used;    /* node -> [cpu_m, mem, pods, cpu_m_nz, mem_nz] */
    json_t *unsched; /* "ns/name" -> true */
    size_t n_anti;   /* acct entries with anti-affinity terms */
    /* Read shared: every pod reads every node. */
    ctrl_informer *nodes;
} sched_state;

static void pod_key(const json_t *pod, char *buf, size_t len)
{
    const char *ns = ctrl_obj_namespace(pod), *name = ctrl_obj_name(pod);
    snprintf(buf, len, "%s/%s", ns ? ns : "", name ? name : "");
}

static bool terminal(const json_t *pod)
{
    const char *p = kc__pod_phase(pod);
    return !strcmp(p, "Succeeded") || !strcmp(p, "Failed");
}

static const char *node_of(const json_t *pod)
{
    const char *n = ctrl_obj_get_string(pod, "spec.nodeName");
    return n && *n ? n : NULL;
}

/* ---- accounting (mu held) ---- */

static json_t *res_array(const kc_sched_res *r)
{
    return json_pack("[I, I, I, I, I]", (json_int_t)r->cpu_m, (json_int_t)r->mem,
                     (json_int_t)r->pods, (json_int_t)r->cpu_m_nz, (json_int_t)r->mem_nz);
}

static void used_add(sched_state *s, const char *node, const json_t *r, int sign)
{
    json_t *u = json_object_get(s->used, node);
    if (!u) {
        u = json_pack("[i, i, i, i, i]", 0, 0, 0, 0, 0);
        if (!u || json_object_set_new(s->used, node, u) < 0)
            return;
    }
    for (size_t i = 0; i < 5; i++)
        json_array_set_new(u, i,
                           json_integer(json_integer_value(json_array_get(u, i)) +
                                        sign * json_integer_value(json_array_get(r, i))));
}

static void unaccount(sched_state *s, const char *key)
{
    json_t *e = json_object_get(s->acct, key);
    if (!e)
        return;
    /* account packs a pod without terms as "anti": null: count only what it
     * counted, or n_anti wrapped and every pod scanned every other pod. */
    if (json_array_size(json_object_get(e, "anti")))
        s->n_anti--;
    used_add(s, json_string_value(json_object_get(e, "node")), json_object_get(e, "r"), -1);
    json_object_del(s->acct, key);
}

/* Count pod on node. Its namespace, labels and anti-affinity terms are
 * kept too, for the InterPodAffinity check. */
static void account(sched_state *s, const char *key, const char *node, const json_t *pod,
                    const kc_sched_res *r, bool assumed)
{
    unaccount(s, key);
    const json_t *labels = ctrl_obj_get(pod, "metadata.labels");
    const json_t *anti = kc__anti_affinity_terms(pod);
    const char *ns = ctrl_obj_namespace(pod);
    json_t *e = json_pack("{s:s, s:b, s:o, s:s, s:O?, s:O?}", "node", node, "assumed", assumed, "r",
                          res_array(r), "ns", ns ? ns : "", "labels", labels, "anti", anti);
    if (e && json_object_set_new(s->acct, key, e) == 0) {
        used_add(s, node, json_object_get(e, "r"), +1);
        if (anti)
            s->n_anti++;
    }
}

static void add_domain(json_t *blocked, const char *key, const json_t *node)
{
    const char *v = json_string_value(json_object_get(ctrl_obj_get(node, "metadata.labels"), key));
    if (!v)
        return;
    json_t *vals = json_object_get(blocked, key);
    if (!vals) {
        vals = json_object();
        if (!vals || json_object_set_new(blocked, key, vals) < 0)
            return;
    }
    json_object_set_new(vals, v, json_true());
}

/*
 * The topology domains pod may not go to (mu held): {"anti": {key: {value:
 * true}}} for its own anti-affinity terms, {"existing": ...} for the terms
 * of pods already placed that select it. nodes: name -> Node.
 */
static json_t *blocked_domains(sched_state *s, const json_t *pod, const json_t *nodes)
{
    json_t *out = json_pack("{s:{}, s:{}}", "anti", "existing");
    if (!out)
        return NULL;
    const json_t *mine = kc__anti_affinity_terms(pod);
    if (!mine && s->n_anti == 0)
        return out; /* nothing to look at: the common case, kept cheap */
    const char *ns = ctrl_obj_namespace(pod);
    const json_t *labels = ctrl_obj_get(pod, "metadata.labels");
    const char *key;
    json_t *e;
    json_object_foreach(s->acct, key, e)
    {
        const json_t *node = json_object_get(nodes, json_string_value(json_object_get(e, "node")));
        if (!node)
            continue;
        const char *ens = json_string_value(json_object_get(e, "ns"));
        size_t i;
        json_t *t;
        json_array_foreach(mine, i, t)
        {
            if (kc__term_selects(t, ns, ens, json_object_get(e, "labels")))
                add_domain(json_object_get(out, "anti"),
                           json_string_value(json_object_get(t, "topologyKey")), node);
        }
        json_array_foreach(json_object_get(e, "anti"), i, t)
        {
            if (kc__term_selects(t, ens, ns, labels))
                add_domain(json_object_get(out, "existing"),
                           json_string_value(json_object_get(t, "topologyKey")), node);
        }
    }
    return out;
}

/* Is node in one of the domains of blocked ({key: {value: true}})? */
static bool in_domain(const json_t *blocked, const json_t *node)
{
    const json_t *labels = ctrl_obj_get(node, "metadata.labels");
    const char *key;
    json_t *vals;
    json_object_foreach((json_t *)blocked, key, vals)
    {
        const char *v = json_string_value(json_object_get(labels, key));
        if (v && json_object_get(vals, v))
            return true;
    }
    return false;
}

static void used_of(sched_state *s, const char *node, kc_sched_res *out)
{
    json_t *u = json_object_get(s->used, node);
    out->cpu_m = json_integer_value(json_array_get(u, 0));
    out->mem = json_integer_value(json_array_get(u, 1));
    out->pods = json_integer_value(json_array_get(u, 2));
    out->cpu_m_nz = json_integer_value(json_array_get(u, 3));
    out->mem_nz = json_integer_value(json_array_get(u, 4));
}

/* A pod as the informer now shows it. */
static void observe(sched_state *s, const json_t *pod)
{
    char key[512];
    pod_key(pod, key, sizeof key);
    const char *node = node_of(pod);
    pthread_mutex_lock(&s->mu);
    if (node && !terminal(pod)) {
        kc_sched_res r;
        kc__pod_requests(pod, &r);
        account(s, key, node, pod, &r, false);
    } else {
        json_t *e = json_object_get(s->acct, key);
        /* An older state of a pod we just bound must not undo the assume. */
        if (e && (terminal(pod) || !json_is_true(json_object_get(e, "assumed"))))
            unaccount(s, key);
    }
    pthread_mutex_unlock(&s->mu);
}

static void on_add(const json_t *obj, bool initial, void *user)
{
    (void)initial;
    observe(user, obj);
}

static void on_update(const json_t *old_obj, const json_t *new_obj, void *user)
{
    (void)old_obj;
    observe(user, new_obj);
}

static void on_delete(const json_t *obj, bool final_state_unknown, void *user)
{
    (void)final_state_unknown;
    sched_state *s = user;
    char key[512];
    pod_key(obj, key, sizeof key);
    pthread_mutex_lock(&s->mu);
    unaccount(s, key);
    pthread_mutex_unlock(&s->mu);
}

/* ---- predicates and maps ---- */

static bool ours_pending(const json_t *pod)
{
    const char *sn = ctrl_obj_get_string(pod, "spec.schedulerName");
    return !node_of(pod) && !ctrl_obj_deleting(pod) && !terminal(pod) &&
           (!sn || !*sn || !strcmp(sn, DEFAULT_SCHEDULER));
}

static bool pend_create(const json_t *obj, void *user)
{
    (void)user;
    return ours_pending(obj);
}

static bool pend_update(const json_t *old_obj, const json_t *new_obj, void *user)
{
    (void)user;
    (void)old_obj;
    return ours_pending(new_obj);
}

/* Freed room: a bound pod goes or finishes. */
static bool freed_update(const json_t *old_obj, const json_t *new_obj, void *user)
{
    (void)user;
    return node_of(old_obj) && !terminal(old_obj) && terminal(new_obj);
}

static bool freed_delete(const json_t *obj, void *user)
{
    (void)user;
    return node_of(obj) != NULL;
}

static bool never_create(const json_t *obj, void *user)
{
    (void)obj;
    (void)user;
    return false;
}

static bool same(const json_t *a, const json_t *b, const char *path)
{
    return json_equal(ctrl_obj_get(a, path), ctrl_obj_get(b, path)) ||
           (!ctrl_obj_get(a, path) && !ctrl_obj_get(b, path));
}

/* A change of what the filters look at. */
static bool node_update(const json_t *old_obj, const json_t *new_obj, void *user)
{
    (void)user;
    return !same(old_obj, new_obj, "spec") || !same(old_obj, new_obj, "metadata.labels") ||
           !same(old_obj, new_obj, "status.allocatable") ||
           strcmp(kc__node_ready_status(old_obj), kc__node_ready_status(new_obj));
}

static json_t *unschedulable_pods(const json_t *obj, void *user)
{
    (void)obj;
    sched_state *s = user;
    json_t *reqs = json_array();
    const char *key;
    json_t *v;
    pthread_mutex_lock(&s->mu);
    json_object_foreach(s->unsched, key, v)
    {
        const char *slash = strchr(key, '/');
        if (!slash)
            continue;
        json_t *r =
            json_pack("{s:s%, s:s}", "namespace", key, (size_t)(slash - key), "name", slash + 1);
        if (r)
            json_array_append_new(reqs, r);
    }
    pthread_mutex_unlock(&s->mu);
    return reqs;
}

/* ---- the reconcile ---- */

static void set_unsched(sched_state *s, const char *key, bool on)
{
    pthread_mutex_lock(&s->mu);
    if (on)
        json_object_set_new(s->unsched, key, json_true());
    else
        json_object_del(s->unsched, key);
    pthread_mutex_unlock(&s->mu);
}

static bool field_is(const json_t *o, const char *k, const char *want)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v && !strcmp(v, want);
}

/* PodScheduled=False with reason and message, when it differs. */
static int write_unscheduled(ctrl_ctx *ctx, const json_t *pod, const char *reason, const char *msg)
{
    const json_t *have = kc__condition(pod, "PodScheduled");
    if (have && field_is(have, "status", "False") && field_is(have, "reason", reason) &&
        field_is(have, "message", msg))
        return 0;
    json_t *copy = json_deep_copy(pod);
    json_t *conds = copy ? ctrl_obj_conditions(copy) : NULL;
    if (!conds) {
        json_decref(copy);
        return CTRL_ERR_NOMEM;
    }
    ctrl_condition c = {"PodScheduled", "False", reason, msg, 0, NULL};
    ctrl_condition_set(conds, &c, ctrl_clock_wall_ns(ctrl_ctx_clock(ctx)));
    json_object_set_new(ctrl_condition_find(conds, "PodScheduled"), "lastProbeTime", json_null());
    int rc = ctrl_client_update_status(ctrl_ctx_client(ctx), copy, NULL, NULL, NULL);
    json_decref(copy);
    return rc;
}

static int bind(ctrl_ctx *ctx, const json_t *pod, const char *node)
{
    const char *ns = ctrl_obj_namespace(pod), *name = ctrl_obj_name(pod);
    char path[1024];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/binding", ns, name);
    json_t *body = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}}", "apiVersion", "v1",
                             "kind", "Binding", "metadata", "name", name, "namespace", ns, "uid",
                             ctrl_obj_uid(pod) ? ctrl_obj_uid(pod) : "", "target", "apiVersion",
                             "v1", "kind", "Node", "name", node);
    int rc = body ? ctrl_client_request(ctrl_ctx_client(ctx), "POST", path, body, NULL, NULL, NULL)
                  : CTRL_ERR_NOMEM;
    json_decref(body);
    return rc;
}

/* Every Node as {"items": [...]}: once the cache has them, the cache's own
 * read-only copies (nothing here changes a node), not one unpacked copy
 * of each per pod; before, a list through the client. */
static int list_nodes(sched_state *s, ctrl_client *c, json_t **out)
{
    if (!s->nodes || !ctrl_informer_has_synced(s->nodes))
        return ctrl_client_list(c, "v1", "Node", NULL, NULL, out, NULL);
    json_t *items = NULL;
    int rc = ctrl_informer_by_index_shared(s->nodes, "namespace", "", &items);
    if (rc < 0)
        return rc;
    *out = json_pack("{s:o}", "items", items);
    return *out ? 0 : CTRL_ERR_NOMEM;
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    sched_state *s = user;
    ctrl_client *c = ctrl_ctx_client(ctx);
    char key[512];
    snprintf(key, sizeof key, "%s/%s", req->ns, req->name);
    json_t *pod = NULL, *nodes = NULL, *reasons = NULL, *hist = NULL, *preempt = NULL;
    json_t *by_name = NULL, *blocked = NULL;
    char *msg = NULL;
    ctrl_result res = ctrl_done();
    /* Read only (a condition is written on a copy; account keeps references
     * to its labels and terms, which nothing changes). */
    int rc = ctrl_client_get_shared(c, "v1", "Pod", req->ns, req->name, &pod, NULL);
    if (rc < 0 || !ours_pending(pod)) {
        set_unsched(s, key, false);
        json_decref(pod);
        return rc < 0 && !ctrl_err_is_not_found(rc) ? ctrl_err(rc) : ctrl_done();
    }
    if (json_array_size(ctrl_obj_get(pod, "spec.schedulingGates"))) {
        rc = write_unscheduled(ctx, pod, "SchedulingGated",
                               "Scheduling is blocked due to non-empty scheduling gates");
        res = rc < 0 ? ctrl_err(rc) : ctrl_done();
        goto out;
    }
    if ((rc = list_nodes(s, c, &nodes)) < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    json_t *items = json_object_get(nodes, "items");
    reasons = json_array();
    hist = json_object();
    preempt = json_object();
    if (!reasons || !hist || !preempt) {
        res = ctrl_err(CTRL_ERR_NOMEM);
        goto out;
    }
    const char *best = NULL;
    int64_t best_score = -1;
    size_t i;
    json_t *node;
    by_name = json_object();
    json_array_foreach(items, i, node)
    {
        if (by_name && ctrl_obj_name(node))
            json_object_set(by_name, ctrl_obj_name(node), node);
    }
    pthread_mutex_lock(&s->mu);
    blocked = by_name ? blocked_domains(s, pod, by_name) : NULL;
    if (!blocked) {
        pthread_mutex_unlock(&s->mu);
        res = ctrl_err(CTRL_ERR_NOMEM);
        goto out;
    }
    json_array_foreach(items, i, node)
    {
        const char *nn = ctrl_obj_name(node);
        if (!nn || ctrl_obj_deleting(node))
            continue;
        kc_sched_res used;
        used_of(s, nn, &used);
        bool unresolvable = false;
        json_array_clear(reasons);
        int rejected = kc__sched_filter(pod, node, &used, reasons, &unresolvable);
        /* InterPodAffinity comes after the filters above (kube-scheduler's
         * order), and only when they passed. */
        if (!rejected && in_domain(json_object_get(blocked, "anti"), node)) {
            json_array_append_new(reasons,
                                  json_string("node(s) didn't match pod anti-affinity rules"));
            rejected = 1;
        } else if (!rejected && in_domain(json_object_get(blocked, "existing"), node)) {
            json_array_append_new(
                reasons, json_string("node(s) didn't satisfy existing pods anti-affinity rules"));
            rejected = 1;
        }
        if (rejected) {
            size_t j;
            json_t *r;
            json_array_foreach(reasons, j, r)
            {
                const char *k = json_string_value(r);
                json_object_set_new(hist, k,
                                    json_integer(json_integer_value(json_object_get(hist, k)) + 1));
            }
            const char *pk = unresolvable ? "Preemption is not helpful for scheduling"
                                          : "No preemption victims found for incoming pod";
            json_object_set_new(preempt, pk,
                                json_integer(json_integer_value(json_object_get(preempt, pk)) + 1));
            continue;
        }
        int64_t score = kc__sched_score(pod, node, &used);
        if (score > best_score || (score == best_score && strcmp(nn, best) < 0)) {
            best = nn;
            best_score = score;
        }
    }
    if (best) {
        /* Assume before binding: the next pod must see this one. */
        kc_sched_res r;
        kc__pod_requests(pod, &r);
        account(s, key, best, pod, &r, true);
    }
    pthread_mutex_unlock(&s->mu);

    if (!best) {
        size_t n = json_array_size(items);
        msg =
            n ? kc__sched_message(n, hist, preempt) : strdup("no nodes available to schedule pods");
        if (!msg) {
            res = ctrl_err(CTRL_ERR_NOMEM);
            goto out;
        }
        set_unsched(s, key, true);
        ctrl_recorder_event(s->rec, pod, "Warning", "FailedScheduling", "%s", msg);
        rc = write_unscheduled(ctx, pod, "Unschedulable", msg);
        res = rc < 0 ? ctrl_err(rc) : ctrl_requeue_after(RETRY_UNSCHEDULABLE);
        goto out;
    }
    rc = bind(ctx, pod, best);
    if (rc < 0) {
        pthread_mutex_lock(&s->mu);
        unaccount(s, key);
        pthread_mutex_unlock(&s->mu);
        /* 409: bound already, or going: nothing for us. */
        res = ctrl_err_is_conflict(rc) || ctrl_err_is_not_found(rc) ? ctrl_done() : ctrl_err(rc);
        goto out;
    }
    set_unsched(s, key, false);
    ctrl_log_info(ctx, "bound pod", "node", best);
    ctrl_recorder_event(s->rec, pod, "Normal", "Scheduled", "Successfully assigned %s/%s to %s",
                        req->ns, req->name, best);
out:
    free(msg);
    json_decref(by_name);
    json_decref(blocked);
    json_decref(reasons);
    json_decref(hist);
    json_decref(preempt);
    json_decref(nodes);
    json_decref(pod);
    return res;
}

static void state_free(void *user)
{
    sched_state *s = user;
    if (!s)
        return;
    kc_config_free(s->cfg);
    json_decref(s->acct);
    json_decref(s->used);
    json_decref(s->unsched);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

int kc__scheduler_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    sched_state *s = calloc(1, sizeof *s);
    if (!s)
        return KC_ERR_NOMEM;
    pthread_mutex_init(&s->mu, NULL);
    s->cfg = kc_config_ref(cfg);
    s->acct = json_object();
    s->used = json_object();
    s->unsched = json_object();
    s->rec = ctrl_manager_recorder(mgr, DEFAULT_SCHEDULER);
    ctrl_informer *inf = NULL;
    int rc = (!s->acct || !s->used || !s->unsched) ? CTRL_ERR_NOMEM : 0;
    if (rc == 0)
        rc = ctrl_cache_informer(ctrl_manager_cache(mgr), "v1", "Pod", NULL, &inf, NULL);
    ctrl_event_handler h = {on_add, on_update, on_delete, s};
    if (rc == 0)
        rc = ctrl_informer_add_handler(inf, &h);
    if (rc == 0)
        rc = ctrl_cache_informer(ctrl_manager_cache(mgr), "v1", "Node", NULL, &s->nodes, NULL);
    if (rc < 0) {
        /* The handler, if added, is never called before the manager runs. */
        state_free(s);
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "scheduler: %s", ctrl_strerror(rc));
        return rc;
    }
    char name[64];
    ctrl_predicate_funcs pending = {pend_create, pend_update, NULL, NULL};
    ctrl_predicate_funcs freed = {never_create, freed_update, freed_delete, NULL};
    ctrl_predicate_funcs nodes = {NULL, node_update, NULL, NULL};
    ctrl_controller_options o = {.max_concurrent_reconciles = 1};
    ctrl_builder *b = ctrl_builder_for(mgr, "v1", "Pod");
    ctrl_builder_named(b, kc__controller_name("scheduler", name, sizeof name));
    ctrl_builder_with_predicates(b, ctrl_pred_funcs(&pending));
    ctrl_builder_watches(b, "v1", "Node", ctrl_handler_from_map(unschedulable_pods, s),
                         ctrl_pred_funcs(&nodes));
    ctrl_builder_watches(b, "v1", "Pod", ctrl_handler_from_map(unschedulable_pods, s),
                         ctrl_pred_funcs(&freed));
    ctrl_builder_with_options(b, &o);
    ctrl_builder_with_user_free(b, state_free);
    rc = ctrl_builder_complete(b, reconcile, s);
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, "scheduler: %s", ctrl_strerror(rc));
    return rc;
}
