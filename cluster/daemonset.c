/*
 * daemonset.c - the DaemonSet controller (kube-controller-manager's
 * daemonset controller): one pod per eligible node (nodeSelector, required
 * node affinity, taints against the template's tolerations plus the ones
 * upstream adds to every daemon pod), pinned to its node by a required
 * node affinity on matchFields metadata.name for the scheduler to bind;
 * ControllerRevisions (revision.h); RollingUpdate with maxUnavailable and
 * maxSurge, OnDelete; the status kubectl reads (docs/cluster.md,
 * "DaemonSet").
 *
 * DESIGN
 * - One libctrl controller "kc-daemonset": For(apps/v1 DaemonSet),
 *   Owns(v1 Pod), Owns(apps/v1 ControllerRevision), and Watches(v1 Node)
 *   mapped to every DaemonSet (a node change can change any set's nodes).
 *   Nodes, pods and revisions come from the cache.
 * - Each sync plans first (creates per node, deletes), raises the
 *   expectations for all of it, then writes. The rolling update is planned
 *   only when the nodes are otherwise in order (nothing else to create or
 *   delete), so one sync never both fills a node and replaces its pod.
 * - Failed pods are replaced with a backoff per DaemonSet and node
 *   (ds_backoff below, the kc_wl's extra).
 * - Threads: reconciles on the controller's workers (never two for one
 *   DaemonSet); the node map function on the Node informer's thread (reads
 *   the DaemonSet informer's cache only).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_int.h"
#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "nodematch.h"
#include "podutil.h"
#include "revision.h"
#include "workload.h"

#define HASH_LABEL "controller-revision-hash"
#define GENERATION_LABEL "pod-template-generation"
#define EXPECT_RECHECK (1 * CTRL_SECOND)
#define MAX_BURST 500                         /* pod creates per sync; the next sync does more */
#define FAILED_BACKOFF_BASE (1 * CTRL_SECOND) /* upstream's failedPodsBackoff */
#define FAILED_BACKOFF_MAX (15 * CTRL_MINUTE)

/*
 * Failed daemon pods are replaced with a backoff per DaemonSet and node, as
 * upstream's failedPodsBackoff: the first at once, then each only once the
 * previous delay (1 s doubling to 15 min) has passed since the last
 * replacement, so a pod failing in a loop does not spin. One mutex over
 * "<ns>/<name>/<node>" -> [delay, last] (the manager's clock); a leaf lock.
 */
typedef struct ds_backoff {
    pthread_mutex_t mu;
    json_t *table;
} ds_backoff;

/* 0 when the failed pod may be replaced now (the backoff is then
 * advanced), else the time left. */
static int64_t backoff_take(ds_backoff *b, const char *key, int64_t now)
{
    int64_t left = 0;
    pthread_mutex_lock(&b->mu);
    json_t *e = json_object_get(b->table, key);
    int64_t delay = json_integer_value(json_array_get(e, 0));
    int64_t last = json_integer_value(json_array_get(e, 1));
    if (e && now - last < delay) {
        left = delay - (now - last);
    } else {
        delay = e ? (delay * 2 > FAILED_BACKOFF_MAX ? FAILED_BACKOFF_MAX : delay * 2)
                  : FAILED_BACKOFF_BASE;
        json_object_set_new(b->table, key, json_pack("[I,I]", (json_int_t)delay, (json_int_t)now));
    }
    pthread_mutex_unlock(&b->mu);
    return left;
}

/* The DaemonSet ds_key is gone: forget its nodes' backoffs. */
static void backoff_forget(ds_backoff *b, const char *ds_key)
{
    size_t n = strlen(ds_key);
    pthread_mutex_lock(&b->mu);
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(b->table, tmp, k, v)
    {
        if (!strncmp(k, ds_key, n) && k[n] == '/')
            json_object_del(b->table, k);
    }
    pthread_mutex_unlock(&b->mu);
}

/* The tolerations upstream adds to every daemon pod
 * (AddOrUpdateDaemonPodTolerations). */
static const struct {
    const char *key, *effect;
} default_tolerations[] = {
    {"node.kubernetes.io/not-ready", "NoExecute"},
    {"node.kubernetes.io/unreachable", "NoExecute"},
    {"node.kubernetes.io/disk-pressure", "NoSchedule"},
    {"node.kubernetes.io/memory-pressure", "NoSchedule"},
    {"node.kubernetes.io/pid-pressure", "NoSchedule"},
    {"node.kubernetes.io/unschedulable", "NoSchedule"},
};

static void add_toleration(json_t *spec, const char *key, const char *effect)
{
    json_t *tols = json_object_get(spec, "tolerations");
    if (!json_is_array(tols)) {
        tols = json_array();
        json_object_set_new(spec, "tolerations", tols);
    }
    size_t i;
    json_t *t;
    json_array_foreach(tols, i, t)
    {
        const char *k = json_string_value(json_object_get(t, "key"));
        const char *e = json_string_value(json_object_get(t, "effect"));
        if (k && !strcmp(k, key) && e && !strcmp(e, effect))
            return;
    }
    json_array_append_new(
        tols, json_pack("{s:s, s:s, s:s}", "key", key, "operator", "Exists", "effect", effect));
}

/* The template's pod spec with the daemon tolerations (a new object). */
static json_t *daemon_spec(const json_t *ds)
{
    const json_t *ts = ctrl_obj_get(ds, "spec.template.spec");
    json_t *spec = json_is_object(ts) ? json_deep_copy(ts) : json_object();
    if (!spec)
        return NULL;
    for (size_t i = 0; i < sizeof default_tolerations / sizeof default_tolerations[0]; i++)
        add_toleration(spec, default_tolerations[i].key, default_tolerations[i].effect);
    if (json_is_true(json_object_get(spec, "hostNetwork")))
        add_toleration(spec, "node.kubernetes.io/network-unavailable", "NoSchedule");
    return spec;
}

typedef struct node_slot {
    const json_t *node;
    bool should_run, should_continue;
    json_t *pods; /* the set's pods for this node, oldest first */
} node_slot;

typedef struct ds_sync {
    ctrl_ctx *ctx;
    kc_wl *wl;
    char key[512];
    json_t *ds;
    json_t *spec; /* daemon_spec */
    const char *hash;
    int64_t min_ready, wall, wait_ns;
    node_slot *slots;
    size_t nslots;
    json_t *creates; /* node names */
    json_t *deletes; /* pods */
    json_t *orphans; /* pods for nodes that do not exist */
} ds_sync;

static bool terminating(const json_t *pod)
{
    return ctrl_obj_deleting(pod);
}

static bool updated(const ds_sync *s, const json_t *pod)
{
    const char *h = ctrl_obj_label(pod, HASH_LABEL);
    return h && !strcmp(h, s->hash);
}

static bool available(ds_sync *s, const json_t *pod)
{
    if (kc__pod_available(pod, s->min_ready, s->wall))
        return true;
    if (kc__pod_ready(pod) && s->min_ready > 0) {
        const char *t =
            json_string_value(json_object_get(kc__condition(pod, "Ready"), "lastTransitionTime"));
        int64_t since = kc__parse_time(t), at = since + s->min_ready * CTRL_SECOND - s->wall;
        if (since >= 0 && at > 0 && (s->wait_ns == 0 || at < s->wait_ns))
            s->wait_ns = at;
    }
    return false;
}

static int oldest_first(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    const char *tx = ctrl_obj_meta(x, "creationTimestamp"),
               *ty = ctrl_obj_meta(y, "creationTimestamp");
    int c = strcmp(tx ? tx : "", ty ? ty : "");
    return c ? c : strcmp(ctrl_obj_name(x), ctrl_obj_name(y));
}

static void sort_oldest_first(json_t *pods)
{
    size_t n = json_array_size(pods);
    if (n < 2)
        return;
    json_t **v = malloc(n * sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(pods, i));
    qsort(v, n, sizeof *v, oldest_first);
    json_array_clear(pods);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(pods, v[i]);
    free(v);
}

/* Pods that are not terminating (borrowed entries in a new array). */
static json_t *live_pods(const json_t *pods)
{
    json_t *out = json_array();
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p) if (!terminating(p)) json_array_append(out, p);
    return out;
}

static int classify(ds_sync *s, const json_t *nodes, const json_t *pods)
{
    s->nslots = json_array_size(nodes);
    s->slots = calloc(s->nslots + 1, sizeof *s->slots);
    s->orphans = json_array();
    if (!s->slots || !s->orphans)
        return CTRL_ERR_NOMEM;
    for (size_t i = 0; i < s->nslots; i++) {
        node_slot *sl = &s->slots[i];
        sl->node = json_array_get(nodes, i);
        sl->pods = json_array();
        if (!sl->pods)
            return CTRL_ERR_NOMEM;
        bool fits = kc__node_fits_selectors(s->spec, sl->node);
        const json_t *tols = json_object_get(s->spec, "tolerations");
        sl->should_continue = fits && kc__tolerates_taints(tols, sl->node, "NoExecute");
        sl->should_run = sl->should_continue && kc__tolerates_taints(tols, sl->node, "NoSchedule");
    }
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        const char *target = kc__pod_target_node(pod);
        bool placed = false;
        for (size_t k = 0; target && k < s->nslots && !placed; k++)
            if (!strcmp(ctrl_obj_name(s->slots[k].node), target)) {
                json_array_append(s->slots[k].pods, pod);
                placed = true;
            }
        if (!placed && !ctrl_obj_get_string(pod, "spec.nodeName"))
            json_array_append(s->orphans, pod);
    }
    for (size_t k = 0; k < s->nslots; k++)
        sort_oldest_first(s->slots[k].pods);
    return 0;
}

static int64_t scaled(const json_t *v, int64_t total, int64_t def)
{
    if (json_is_integer(v))
        return json_integer_value(v);
    const char *s = json_string_value(v);
    if (!s || !*s)
        return def;
    char *end = NULL;
    long long pct = strtoll(s, &end, 10);
    if (*end != '%')
        return pct;
    return (pct * total + 99) / 100; /* rounded up, as upstream */
}

/* manage(): the pods each node should have. */
static void plan_nodes(ds_sync *s)
{
    int64_t surge = -1;
    for (size_t k = 0; k < s->nslots; k++) {
        node_slot *sl = &s->slots[k];
        json_t *live = live_pods(sl->pods);
        if (sl->should_run) {
            json_t *running = json_array();
            size_t i;
            json_t *p;
            json_array_foreach(live, i, p)
            {
                if (strcmp(kc__pod_phase(p), "Failed")) {
                    json_array_append(running, p);
                    continue;
                }
                /* Replaced on a later sync, once its backoff allows. */
                char bk[640];
                snprintf(bk, sizeof bk, "%s/%s", s->key, ctrl_obj_name(sl->node));
                int64_t left = backoff_take(s->wl->extra, bk, ctrl_ctx_now(s->ctx));
                if (left == 0)
                    json_array_append(s->deletes, p);
                else if (s->wait_ns == 0 || left < s->wait_ns)
                    s->wait_ns = left;
            }
            if (json_array_size(running) == 0 && json_array_size(live) == 0) {
                if (json_array_size(s->creates) < MAX_BURST)
                    json_array_append_new(s->creates, json_string(ctrl_obj_name(sl->node)));
            } else if (json_array_size(running) > 1) {
                /* Keep the oldest; during a surge update also the oldest
                 * updated one beside an old one. */
                if (surge < 0) {
                    const char *ust = ctrl_obj_get_string(s->ds, "spec.updateStrategy.type");
                    surge = ust && !strcmp(ust, "RollingUpdate")
                                ? scaled(ctrl_obj_get(s->ds,
                                                      "spec.updateStrategy.rollingUpdate.maxSurge"),
                                         (int64_t)s->nslots, 0)
                                : 0;
                }
                const json_t *keep_old = NULL, *keep_new = NULL;
                json_array_foreach(running, i, p)
                {
                    if (updated(s, p) && !keep_new && (surge > 0 || !keep_old))
                        keep_new = p;
                    else if (!updated(s, p) && !keep_old && (surge > 0 || !keep_new))
                        keep_old = p;
                    else
                        json_array_append(s->deletes, p);
                }
            }
            json_decref(running);
        } else if (!sl->should_continue) {
            json_array_extend(s->deletes, live);
        }
        json_decref(live);
    }
    size_t i;
    json_t *p;
    json_array_foreach(s->orphans, i, p) if (!terminating(p)) json_array_append(s->deletes, p);
}

/* rollingUpdate(): replace old pods within maxUnavailable / maxSurge. */
static void plan_rolling(ds_sync *s, int64_t desired)
{
    const char *ust = ctrl_obj_get_string(s->ds, "spec.updateStrategy.type");
    if (!ust || strcmp(ust, "RollingUpdate"))
        return;
    const json_t *ru = ctrl_obj_get(s->ds, "spec.updateStrategy.rollingUpdate");
    int64_t max_surge = scaled(json_object_get(ru, "maxSurge"), desired, 0);
    int64_t max_unavail = scaled(json_object_get(ru, "maxUnavailable"), desired, 1);
    if (max_surge == 0 && max_unavail == 0)
        max_unavail = 1;
    int64_t unavailable = 0, surging = 0;
    /* First count what is already unavailable or surging. */
    for (size_t k = 0; k < s->nslots; k++) {
        node_slot *sl = &s->slots[k];
        if (!sl->should_run)
            continue;
        json_t *live = live_pods(sl->pods);
        json_t *newp = NULL, *oldp = NULL;
        size_t i;
        json_t *p;
        json_array_foreach(live, i, p)
        {
            if (updated(s, p) && !newp)
                newp = p;
            else if (!updated(s, p) && !oldp)
                oldp = p;
        }
        if (!newp && !oldp)
            unavailable++;
        else if (newp && oldp)
            surging++;
        else if (newp && !available(s, newp))
            unavailable++;
        json_decref(live);
    }
    for (size_t k = 0; k < s->nslots; k++) {
        node_slot *sl = &s->slots[k];
        if (!sl->should_run)
            continue;
        json_t *live = live_pods(sl->pods);
        json_t *newp = NULL, *oldp = NULL;
        size_t i;
        json_t *p;
        json_array_foreach(live, i, p)
        {
            if (updated(s, p) && !newp)
                newp = p;
            else if (!updated(s, p) && !oldp)
                oldp = p;
        }
        if (oldp && max_surge == 0) {
            if (!available(s, oldp)) {
                json_array_append(s->deletes, oldp); /* unavailable anyway: at once */
            } else if (unavailable < max_unavail) {
                unavailable++;
                json_array_append(s->deletes, oldp);
            }
        } else if (oldp) {
            if (!available(s, oldp)) {
                json_array_append(s->deletes, oldp);
            } else if (newp && available(s, newp)) {
                json_array_append(s->deletes, oldp); /* its replacement is up */
            } else if (!newp && surging < max_surge) {
                surging++;
                json_array_append_new(s->creates, json_string(ctrl_obj_name(sl->node)));
            }
        }
        json_decref(live);
    }
}

/* A daemon pod for node from the DaemonSet's template. */
static json_t *pod_for(const ds_sync *s, const char *node)
{
    const json_t *tm = ctrl_obj_get(s->ds, "spec.template.metadata");
    json_t *meta = json_object();
    const char *keep[] = {"labels", "annotations"};
    for (int k = 0; k < 2; k++) {
        const json_t *m = json_object_get(tm, keep[k]);
        json_object_set_new(meta, keep[k], json_is_object(m) ? json_deep_copy(m) : json_object());
    }
    char gen[320], tg[24];
    snprintf(gen, sizeof gen, "%s-", ctrl_obj_name(s->ds));
    snprintf(tg, sizeof tg, "%lld", (long long)ctrl_obj_generation(s->ds));
    json_object_set_new(meta, "generateName", json_string(gen));
    json_object_set_new(meta, "namespace", json_string(ctrl_obj_namespace(s->ds)));
    json_t *pod = json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "v1", "kind", "Pod", "metadata",
                            meta, "spec", json_deep_copy(s->spec));
    if (!pod)
        return NULL;
    json_t *spec = json_object_get(pod, "spec");
    ctrl_obj_set_label(pod, HASH_LABEL, s->hash);
    ctrl_obj_set_label(pod, GENERATION_LABEL, tg);
    /* ReplaceDaemonSetPodNodeNameNodeAffinity: pinned to the node. */
    ctrl_obj_set(spec, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
                 json_pack("{s:[{s:[{s:s, s:s, s:[s]}]}]}", "nodeSelectorTerms", "matchFields",
                           "key", "metadata.name", "operator", "In", "values", node));
    if (ctrl_set_controller_reference(s->ds, pod, NULL) < 0) {
        json_decref(pod);
        return NULL;
    }
    return pod;
}

static int act(ds_sync *s)
{
    size_t nc = json_array_size(s->creates), nd = json_array_size(s->deletes);
    if (!nc && !nd)
        return 0;
    kc__expect_set(s->wl->expect, s->key, (int)nc, (int)nd, ctrl_ctx_now(s->ctx));
    int rc = 0;
    size_t i;
    json_t *v;
    json_array_foreach(s->deletes, i, v)
    {
        int r = kc__wl_delete(s->ctx, s->wl, s->key, v);
        if (r == 0)
            kc__wl_event(s->ctx, s->ds, "Normal", "SuccessfulDelete", "Deleted pod: %s",
                         ctrl_obj_name(v));
        else if (rc == 0)
            rc = r;
    }
    json_array_foreach(s->creates, i, v)
    {
        json_t *pod = pod_for(s, json_string_value(v)), *made = NULL;
        int r = pod ? kc__wl_create(s->ctx, s->wl, s->key, pod, &made) : CTRL_ERR_NOMEM;
        if (!pod)
            kc__expect_observed_add(s->wl->expect, s->key);
        if (r == 0)
            kc__wl_event(s->ctx, s->ds, "Normal", "SuccessfulCreate", "Created pod: %s",
                         ctrl_obj_name(made));
        else if (rc == 0)
            rc = r;
        json_decref(made);
        json_decref(pod);
    }
    return rc;
}

static void write_counts(ds_sync *s, json_t *upd)
{
    int64_t desired = 0, current = 0, miss = 0, ready = 0, avail = 0, upd_n = 0;
    for (size_t k = 0; k < s->nslots; k++) {
        node_slot *sl = &s->slots[k];
        json_t *live = live_pods(sl->pods);
        const json_t *first = json_array_get(live, 0);
        if (sl->should_run) {
            desired++;
            if (first) {
                current++;
                ready += kc__pod_ready(first);
                avail += available(s, first);
                size_t i;
                json_t *p;
                bool any_updated = false;
                json_array_foreach(live, i, p) any_updated |= updated(s, p);
                upd_n += any_updated;
            }
        } else if (first) {
            miss++;
        }
        json_decref(live);
    }
    kc__wl_set_int(upd, "desiredNumberScheduled", desired, false);
    kc__wl_set_int(upd, "currentNumberScheduled", current, false);
    kc__wl_set_int(upd, "numberMisscheduled", miss, false);
    kc__wl_set_int(upd, "numberReady", ready, false);
    kc__wl_set_int(upd, "numberAvailable", avail, true);
    kc__wl_set_int(upd, "numberUnavailable", desired - avail, true);
    kc__wl_set_int(upd, "updatedNumberScheduled", upd_n, true);
    kc__wl_set_int(upd, "observedGeneration", ctrl_obj_generation(s->ds), false);
}

static int list_nodes(ctrl_ctx *ctx, json_t **out)
{
    ctrl_informer *inf = NULL;
    int rc = ctrl_cache_informer(ctrl_ctx_cache(ctx), "v1", "Node", NULL, &inf, NULL);
    return rc < 0 ? rc : ctrl_informer_list(inf, NULL, NULL, out);
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    ds_sync s = {.ctx = ctx, .wl = user};
    kc__wl_key(req->ns, req->name, s.key, sizeof s.key);
    json_t *nodes = NULL, *pods = NULL, *revisions = NULL, *update_rev = NULL, *upd = NULL;
    ctrl_result res = ctrl_done();
    int rc = ctrl_client_get(ctrl_ctx_client(ctx), "apps/v1", "DaemonSet", req->ns, req->name,
                             &s.ds, NULL);
    if (ctrl_err_is_not_found(rc)) {
        kc__expect_delete(s.wl->expect, s.key);
        backoff_forget(s.wl->extra, s.key);
        return ctrl_done();
    }
    if (rc < 0)
        return ctrl_err(rc);
    if (ctrl_obj_deleting(s.ds))
        goto out;
    json_object_set_new(s.ds, "apiVersion", json_string("apps/v1"));
    json_object_set_new(s.ds, "kind", json_string("DaemonSet"));
    s.wall = kc__wl_wall(ctx);
    s.min_ready = ctrl_obj_get_int(s.ds, "spec.minReadySeconds", 0);
    int64_t collision = ctrl_obj_get_int(s.ds, "status.collisionCount", 0);
    if ((rc = kc__rev_sync(ctx, s.ds, &collision, &revisions, &update_rev)) < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    s.hash = kc__rev_hash(update_rev);
    s.spec = daemon_spec(s.ds);
    s.creates = json_array();
    s.deletes = json_array();
    bool satisfied = kc__expect_satisfied(s.wl->expect, s.key, ctrl_ctx_now(ctx));
    if (!s.spec || !s.creates || !s.deletes || (rc = list_nodes(ctx, &nodes)) < 0 ||
        (rc = kc__wl_pods(ctx, ctrl_obj_uid(s.ds), &pods)) < 0 ||
        (rc = classify(&s, nodes, pods)) < 0) {
        res = ctrl_err(rc < 0 ? rc : CTRL_ERR_NOMEM);
        goto out;
    }
    int act_rc = 0;
    if (satisfied) {
        plan_nodes(&s);
        if (!json_array_size(s.creates) && !json_array_size(s.deletes)) {
            int64_t desired = 0;
            for (size_t k = 0; k < s.nslots; k++)
                desired += s.slots[k].should_run;
            plan_rolling(&s, desired);
        }
        act_rc = act(&s);
    }
    upd = json_deep_copy(s.ds);
    write_counts(&s, upd);
    if (collision)
        kc__wl_set_int(upd, "collisionCount", collision, false);
    rc = kc__wl_write_status(ctx, s.ds, upd, NULL);
    if (rc < 0 && !ctrl_err_is_not_found(rc)) {
        res = ctrl_err(rc);
        goto out;
    }
    /* Revisions a pod still uses are kept. */
    json_t *live = json_object();
    json_object_set_new(live, ctrl_obj_name(update_rev), json_true());
    size_t i, j;
    json_t *r, *p;
    json_array_foreach(revisions, i, r)
    {
        json_array_foreach(pods, j, p)
        {
            const char *h = ctrl_obj_label(p, HASH_LABEL);
            if (h && !strcmp(h, kc__rev_hash(r)))
                json_object_set_new(live, ctrl_obj_name(r), json_true());
        }
    }
    rc = kc__rev_truncate(ctx, revisions, live,
                          ctrl_obj_get_int(s.ds, "spec.revisionHistoryLimit", 10));
    json_decref(live);
    if (act_rc < 0)
        res = ctrl_err(act_rc);
    else if (rc < 0)
        res = ctrl_err(rc);
    else if (!satisfied)
        res = ctrl_requeue_after(EXPECT_RECHECK);
    else if (s.wait_ns > 0)
        res = kc__wl_after(ctx, s.wall, s.wait_ns);
out:
    for (size_t k = 0; k < s.nslots; k++)
        json_decref(s.slots[k].pods);
    free(s.slots);
    json_decref(s.orphans);
    json_decref(s.creates);
    json_decref(s.deletes);
    json_decref(s.spec);
    json_decref(update_rev);
    json_decref(revisions);
    json_decref(upd);
    json_decref(pods);
    json_decref(nodes);
    json_decref(s.ds);
    return res;
}

/* A node changed: every DaemonSet may gain or lose it. */
static json_t *all_daemonsets(const json_t *obj, void *user)
{
    (void)obj;
    ctrl_informer *inf = NULL;
    json_t *sets = NULL, *out = json_array();
    if (!out || ctrl_cache_informer(user, "apps/v1", "DaemonSet", NULL, &inf, NULL) < 0 ||
        ctrl_informer_list(inf, NULL, NULL, &sets) < 0)
        return out;
    size_t i;
    json_t *d;
    json_array_foreach(sets, i, d) json_array_append_new(
        out, json_pack("{s:s, s:s}", "namespace", ctrl_obj_namespace(d), "name", ctrl_obj_name(d)));
    json_decref(sets);
    return out;
}

static void ds_free(void *user)
{
    kc_wl *wl = user;
    ds_backoff *b = wl ? wl->extra : NULL;
    if (b) {
        json_decref(b->table);
        pthread_mutex_destroy(&b->mu);
        free(b);
    }
    kc__wl_free(wl);
}

int kc__daemonset_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    kc_wl *wl = NULL;
    int rc = kc__wl_index(mgr, "apps/v1", "ControllerRevision");
    if (rc == 0)
        rc = kc__wl_setup(mgr, cfg, "apps", "DaemonSet", &wl);
    if (rc == 0) {
        ds_backoff *b = calloc(1, sizeof *b);
        if (b && (b->table = json_object()) != NULL) {
            pthread_mutex_init(&b->mu, NULL);
            wl->extra = b;
        } else {
            free(b);
            kc__wl_free(wl);
            rc = CTRL_ERR_NOMEM;
        }
    }
    if (rc < 0) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "daemonset: %s", ctrl_strerror(rc));
        return rc;
    }
    char name[64];
    ctrl_builder *b = ctrl_builder_for(mgr, "apps/v1", "DaemonSet");
    ctrl_builder_owns(b, "v1", "Pod");
    ctrl_builder_owns(b, "apps/v1", "ControllerRevision");
    ctrl_builder_watches(b, "v1", "Node",
                         ctrl_handler_from_map(all_daemonsets, ctrl_manager_cache(mgr)), NULL);
    ctrl_builder_named(b, kc__controller_name("daemonset", name, sizeof name));
    ctrl_builder_with_user_free(b, ds_free);
    rc = ctrl_builder_complete(b, reconcile, wl);
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, "daemonset: %s", ctrl_strerror(rc));
    return rc;
}
