/*
 * replicaset.c - the ReplicaSet controller (kube-controller-manager's
 * pkg/controller/replicaset), as the built-in controller "replicaset".
 *
 * DESIGN
 * - Threads. reconcile runs on the controller's worker (one); the Pod
 *   informer's thread runs the expectation handler (on_pod_*) and the map
 *   from pods to ReplicaSets (pod_to_rs); the index functions run with the
 *   informers' stores locked. No threads of our own.
 * - Reads come from the cache: the ReplicaSet from its informer, its pods
 *   through two Pod indexes (by controller uid, and orphans by namespace),
 *   so a reconcile touches only the pods it may claim. Pods are read shared
 *   (ctrl_informer_by_index_shared: read-only, not unpacked again while
 *   unchanged).
 * - Every pod event reconciles its owner, so reading all its pods each time
 *   is O(pods^2) for a scale-up. The pod handler also keeps each owner's
 *   counts (podfacts.h: active, matching, labelled, ready pods); a pass
 *   that will neither release an owned pod nor delete any (the common case
 *   while pods come up) reads those counts and only the namespace's
 *   orphans. Passes that may release or delete read every pod as upstream
 *   does. Both give the same writes and the same status.
 * - Expectations (expectations.h): before creating n pods the reconcile
 *   expects n creations; before deleting, it expects the deletions and
 *   records which pods (rs_ctl.dels), so that a pod's deletionTimestamp and
 *   its final delete count once (upstream's UIDTrackingControllerExpectations).
 *   The Pod informer's handler, registered before the controller's own
 *   handlers, observes each event before the controller is told of it, so a
 *   reconcile never sees a pod event that the expectations have not.
 *   While expectations are pending, the ReplicaSet's status is still
 *   written but no pod is created or deleted.
 * - Locks: rs_ctl.mu guards dels; a leaf, never held across a call out.
 * - Writes: pods are created from spec.template with generateName
 *   "<rs>-" and a controller ownerReference, in slow-start batches (1, 2,
 *   4, ...; a failed batch stops the pass), at most BURST per pass; status
 *   with the resourceVersion read (a 409 requeues).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim.h"
#include "cluster_int.h"
#include "ctrl/conditions.h"
#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "expectations.h"
#include "podfacts.h"
#include "podutil.h"
#include "rollout.h"

#define OWNER_INDEX KC_CONTROLLER_INDEX
#define ORPHAN_INDEX KC_ORPHAN_INDEX
#define BURST 500 /* upstream's burstReplicas */

typedef struct rs_ctl {
    kc_config *cfg;
    kc_expect *exp;
    pthread_mutex_t mu;
    json_t *dels;       /* "ns/pod" -> "ns/rs": deletions expected */
    kc_podfacts *facts; /* each ReplicaSet's pods, counted from events */
    ctrl_informer *pods, *rss;
} rs_ctl;

static void rs_ctl_free(void *p)
{
    rs_ctl *s = p;
    if (!s)
        return;
    kc__expect_free(s->exp);
    kc__podfacts_free(s->facts);
    json_decref(s->dels);
    pthread_mutex_destroy(&s->mu);
    kc_config_free(s->cfg);
    free(s);
}

/* ---- indexes and events ---- */

static bool is_rs_ref(const json_t *ref)
{
    const char *k = json_string_value(json_object_get(ref, "kind"));
    const char *av = json_string_value(json_object_get(ref, "apiVersion"));
    return k && av && !strcmp(k, "ReplicaSet") && !strncmp(av, "apps/", 5);
}

static void pod_key(const json_t *pod, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", ctrl_obj_namespace(pod) ? ctrl_obj_namespace(pod) : "",
             ctrl_obj_name(pod) ? ctrl_obj_name(pod) : "");
}

/* A pod we asked to delete is going (deletionTimestamp) or gone. */
static void observe_del(rs_ctl *s, const json_t *pod)
{
    char key[512];
    pod_key(pod, key, sizeof key);
    char owner[512] = "";
    pthread_mutex_lock(&s->mu);
    const char *o = json_string_value(json_object_get(s->dels, key));
    if (o) {
        snprintf(owner, sizeof owner, "%s", o);
        json_object_del(s->dels, key);
    }
    pthread_mutex_unlock(&s->mu);
    if (*owner)
        kc__expect_observed_del(s->exp, owner);
}

static void observe_add(rs_ctl *s, const json_t *pod)
{
    const json_t *ref = ctrl_get_controller_of(pod);
    if (!is_rs_ref(ref))
        return;
    char key[512];
    snprintf(key, sizeof key, "%s/%s", ctrl_obj_namespace(pod),
             json_string_value(json_object_get(ref, "name")));
    kc__expect_observed_add(s->exp, key);
}

static void on_pod_add(const json_t *pod, bool initial, void *user)
{
    (void)initial;
    rs_ctl *s = user;
    kc__podfacts_put(s->facts, pod);
    if (ctrl_obj_deleting(pod))
        observe_del(user, pod);
    else
        observe_add(user, pod);
}

static void on_pod_update(const json_t *old, const json_t *pod, void *user)
{
    rs_ctl *s = user;
    kc__podfacts_put(s->facts, pod);
    if (ctrl_obj_deleting(pod) && !ctrl_obj_deleting(old))
        observe_del(user, pod);
}

static void on_pod_delete(const json_t *pod, bool unknown, void *user)
{
    (void)unknown;
    rs_ctl *s = user;
    kc__podfacts_remove(s->facts, pod);
    observe_del(user, pod);
}

/* Requests for a pod event: its ReplicaSet, or, for an orphan, every
 * ReplicaSet in its namespace whose selector matches it. */
static json_t *pod_to_rs(const json_t *pod, void *user)
{
    rs_ctl *s = user;
    const char *ns = ctrl_obj_namespace(pod);
    const json_t *ref = ctrl_get_controller_of(pod);
    if (ref)
        return is_rs_ref(ref) ? json_pack("[{s:s, s:O}]", "namespace", ns, "name",
                                          json_object_get(ref, "name"))
                              : NULL;
    json_t *rss = NULL, *out = json_array();
    if (!out || !ns || ctrl_informer_list(s->rss, ns, NULL, &rss) < 0) {
        json_decref(out);
        return NULL;
    }
    size_t i;
    json_t *rs;
    json_array_foreach(rss, i, rs)
    {
        if (kc__selector_matches(ctrl_obj_get(rs, "spec.selector"),
                                 ctrl_obj_get(pod, "metadata.labels")) == 1)
            json_array_append_new(
                out, json_pack("{s:s, s:s}", "namespace", ns, "name", ctrl_obj_name(rs)));
    }
    json_decref(rss);
    return out;
}

/* ---- pods ---- */

/* GetPodFromTemplate. */
static json_t *pod_for(const json_t *rs)
{
    const json_t *tm = ctrl_obj_get(rs, "spec.template.metadata");
    const json_t *spec = ctrl_obj_get(rs, "spec.template.spec");
    char gen[300];
    snprintf(gen, sizeof gen, "%s-", ctrl_obj_name(rs));
    json_t *pod =
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:O?}", "apiVersion", "v1", "kind", "Pod", "metadata",
                  "generateName", gen, "namespace", ctrl_obj_namespace(rs), "spec", spec);
    if (!pod)
        return NULL;
    json_t *md = json_object_get(pod, "metadata");
    static const char *const copied[] = {"labels", "annotations", "finalizers", NULL};
    for (const char *const *k = copied; *k; k++) {
        json_t *v = json_object_get(tm, *k);
        if (v && json_object_set_new(md, *k, json_deep_copy(v)) < 0)
            goto fail;
    }
    if (ctrl_set_controller_reference(rs, pod, NULL) < 0)
        goto fail;
    return pod;
fail:
    json_decref(pod);
    return NULL;
}

typedef struct pass {
    rs_ctl *s;
    ctrl_ctx *ctx;
    ctrl_client *c;
    const json_t *rs;
    const char *key;
    char err[1024]; /* the first failed write's message */
} pass;

static void remember(pass *p, int rc, const ctrl_error *e)
{
    if (!*p->err)
        snprintf(p->err, sizeof p->err, "%s", e && *e->message ? e->message : ctrl_strerror(rc));
}

static int create_pods(pass *p, int64_t n)
{
    json_t *pod = pod_for(p->rs);
    if (!pod)
        return CTRL_ERR_NOMEM;
    kc__expect_set(p->s->exp, p->key, (int)n, 0, ctrl_ctx_now(p->ctx));
    ctrl_recorder *rec = ctrl_ctx_recorder(p->ctx);
    int first = 0;
    int64_t done = 0;
    for (int64_t batch = 1; done < n && first == 0; batch *= 2) {
        if (batch > n - done)
            batch = n - done;
        for (int64_t i = 0; i < batch; i++) {
            json_t *out = NULL;
            ctrl_error e = {0};
            int rc = ctrl_client_create(p->c, pod, NULL, &out, &e);
            if (rc == 0) {
                ctrl_recorder_event(rec, p->rs, "Normal", "SuccessfulCreate", "Created pod: %s",
                                    ctrl_obj_name(out));
            } else {
                /* The informer will never see it. */
                kc__expect_observed_add(p->s->exp, p->key);
                remember(p, rc, &e);
                ctrl_recorder_event(rec, p->rs, "Warning", "FailedCreate", "Error creating: %s",
                                    p->err);
                if (!first)
                    first = rc;
            }
            ctrl_error_deinit(&e);
            json_decref(out);
        }
        done += batch;
    }
    /* Those never tried will not be seen either. */
    for (; done < n; done++)
        kc__expect_observed_add(p->s->exp, p->key);
    json_decref(pod);
    return first;
}

static int delete_pods(pass *p, const json_t **victims, size_t n)
{
    char pk[512];
    pthread_mutex_lock(&p->s->mu);
    for (size_t i = 0; i < n; i++) {
        pod_key(victims[i], pk, sizeof pk);
        json_object_set_new(p->s->dels, pk, json_string(p->key));
    }
    pthread_mutex_unlock(&p->s->mu);
    kc__expect_set(p->s->exp, p->key, 0, (int)n, ctrl_ctx_now(p->ctx));
    ctrl_recorder *rec = ctrl_ctx_recorder(p->ctx);
    int first = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = ctrl_obj_name(victims[i]);
        ctrl_delete_options o = {.precondition_uid = ctrl_obj_uid(victims[i])};
        ctrl_error e = {0};
        int rc =
            ctrl_client_delete(p->c, "v1", "Pod", ctrl_obj_namespace(p->rs), name, &o, NULL, &e);
        if (rc == 0) {
            ctrl_recorder_event(rec, p->rs, "Normal", "SuccessfulDelete", "Deleted pod: %s", name);
        } else {
            observe_del(p->s, victims[i]);
            if (!ctrl_err_is_not_found(rc)) {
                remember(p, rc, &e);
                ctrl_recorder_event(rec, p->rs, "Warning", "FailedDelete", "Error deleting: %s",
                                    p->err);
                if (!first)
                    first = rc;
            }
        }
        ctrl_error_deinit(&e);
    }
    return first;
}

/* Every active pod of the ReplicaSets that share rs's controller (rs's
 * own included), for ranking victims by their neighbours. */
static json_t *related_pods(rs_ctl *s, const json_t *rs, const json_t *own)
{
    const json_t *ref = ctrl_get_controller_of(rs);
    const char *owner = json_string_value(json_object_get(ref, "uid"));
    json_t *siblings = NULL, *out = NULL;
    if (!owner || ctrl_informer_list(s->rss, ctrl_obj_namespace(rs), NULL, &siblings) < 0)
        return json_incref((json_t *)own);
    out = json_array();
    size_t i;
    json_t *sib;
    json_array_foreach(siblings, i, sib)
    {
        const json_t *sref = ctrl_get_controller_of(sib);
        const char *su = json_string_value(json_object_get(sref, "uid"));
        json_t *pods = NULL;
        if (!su || strcmp(su, owner) ||
            ctrl_informer_by_index_shared(s->pods, OWNER_INDEX, ctrl_obj_uid(sib), &pods) < 0)
            continue;
        json_array_extend(out, pods);
        json_decref(pods);
    }
    json_decref(siblings);
    return out;
}

/* manageReplicas: 0, or the first failed write. */
static int manage(pass *p, const json_t *pods, int64_t *diff_out)
{
    int64_t want = kc__spec_replicas(p->rs), have = (int64_t)json_array_size(pods);
    int64_t diff = have - want;
    *diff_out = diff;
    if (diff < 0)
        return create_pods(p, -diff > BURST ? BURST : -diff);
    if (diff == 0)
        return 0;
    size_t n = (size_t)(diff > BURST ? BURST : diff);
    const json_t **v = malloc((size_t)have * sizeof *v);
    json_t *related = related_pods(p->s, p->rs, pods);
    if (!v || !related) {
        free(v);
        json_decref(related);
        return CTRL_ERR_NOMEM;
    }
    for (size_t i = 0; i < (size_t)have; i++)
        v[i] = json_array_get(pods, i);
    kc__sort_victims(v, (size_t)have, related);
    int rc = delete_pods(p, v, n);
    free(v);
    json_decref(related);
    return rc;
}

/* ---- status ---- */

static void set_or_omit(json_t *st, const char *field, int64_t v)
{
    if (v)
        json_object_set_new(st, field, json_integer(v));
    else
        json_object_del(st, field);
}

/* What calculateStatus counts over the claimed pods; next_ns is how long
 * until the first ready pod becomes available (minReadySeconds), or 0. */
typedef struct tally {
    int64_t replicas, labelled, ready, avail, next_ns;
} tally;

/* One more ready pod, Ready since since (wall ns, -1 unknown). */
static void tally_ready(tally *t, int64_t since, int64_t min_ready, int64_t wall)
{
    t->ready++;
    if (min_ready <= 0 || (since >= 0 && since + min_ready * CTRL_SECOND <= wall)) {
        t->avail++;
        return;
    }
    int64_t wait = since < 0 ? min_ready * CTRL_SECOND : since + min_ready * CTRL_SECOND - wall;
    if (wait <= 0)
        wait = CTRL_SECOND;
    if (!t->next_ns || wait < t->next_ns)
        t->next_ns = wait;
}

static void tally_pods(tally *t, const json_t *rs, const json_t *pods, int64_t wall)
{
    int64_t min_ready = ctrl_obj_get_int(rs, "spec.minReadySeconds", 0);
    const json_t *tl = ctrl_obj_get(rs, "spec.template.metadata.labels");
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        t->replicas++;
        if (kc__map_matches(tl, ctrl_obj_get(pod, "metadata.labels")))
            t->labelled++;
        if (kc__pod_ready(pod))
            tally_ready(t, kc__pod_ready_since(pod), min_ready, wall);
    }
}

/* calculateStatus into a copy of the old status, at wall time wall. */
static json_t *calc_status(pass *p, const tally *t, int manage_rc, int64_t diff, int64_t wall)
{
    const json_t *rs = p->rs;
    json_t *st = json_deep_copy(json_object_get(rs, "status"));
    if (!json_is_object(st)) {
        json_decref(st);
        st = json_object();
    }
    if (!st)
        return NULL;
    json_object_set_new(st, "replicas", json_integer(t->replicas));
    set_or_omit(st, "fullyLabeledReplicas", t->labelled);
    set_or_omit(st, "readyReplicas", t->ready);
    set_or_omit(st, "availableReplicas", t->avail);
    set_or_omit(st, "observedGeneration", ctrl_obj_generation(rs));

    json_t *conds = json_object_get(st, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(st, "conditions", conds);
    }
    json_t *failure = ctrl_condition_find(conds, "ReplicaFailure");
    if (manage_rc < 0 && !failure && diff != 0) {
        char now[32];
        kc__rfc3339(wall, now, sizeof now);
        json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type",
                                               "ReplicaFailure", "status", "True", "reason",
                                               diff < 0 ? "FailedCreate" : "FailedDelete",
                                               "message", p->err, "lastTransitionTime", now));
    } else if (manage_rc == 0 && failure) {
        for (size_t k = 0; k < json_array_size(conds); k++)
            if (json_array_get(conds, k) == failure) {
                json_array_remove(conds, k);
                break;
            }
    }
    if (!json_array_size(conds))
        json_object_del(st, "conditions");
    return st;
}

/* ---- one pass ---- */

/* The pods of the pass: either every claimed pod (pods, when the pass may
 * release or delete pods, or the facts are unavailable), or the facts'
 * counts of the owned ones plus the orphans adopted now (adopted). */
typedef struct claimed {
    json_t *pods;
    json_t *adopted;
    kc_podfacts_counts facts;
    int64_t *since; /* facts: the ready owned pods' Ready times */
} claimed;

static void claimed_deinit(claimed *c)
{
    json_decref(c->pods);
    json_decref(c->adopted);
    free(c->since);
}

/* Active pods of list (shared, read-only) appended to cands. */
static int add_active(json_t *cands, const json_t *list)
{
    size_t i;
    json_t *pod;
    json_array_foreach(list, i, pod)
    {
        if (kc__pod_active(pod) && json_array_append(cands, pod) < 0)
            return CTRL_ERR_NOMEM;
    }
    return 0;
}

/*
 * claimPods. The owned pods come from the facts when they say that no owned
 * pod is to be released and the pass cannot have more pods than it wants
 * (no deletion to choose victims for): then only the namespace's orphans
 * are read and claimed. Otherwise every candidate is read and claimed, as
 * upstream does. The writes are the same either way: the owned pods that
 * match cause none.
 */
static int claim_pods(rs_ctl *s, ctrl_ctx *ctx, const json_t *rs, bool may_delete, claimed *out)
{
    const char *ns = ctrl_obj_namespace(rs);
    const json_t *sel = ctrl_obj_get(rs, "spec.selector");
    json_t *owned = NULL, *orphans = NULL, *cands = NULL;
    kc_claim cl = {
        .writer = ctrl_ctx_client(ctx),
        .reader = ctrl_ctx_api_reader(ctx),
        .owner = rs,
        .selector = sel,
        .api_version = "v1",
        .kind = "Pod",
    };
    bool want_since = ctrl_obj_get_int(rs, "spec.minReadySeconds", 0) > 0;
    int rc = kc__podfacts_count(s->facts, ctrl_obj_uid(rs), sel,
                                ctrl_obj_get(rs, "spec.template.metadata.labels"), &out->facts,
                                want_since ? &out->since : NULL);
    bool use_facts = rc == 0 && out->facts.not_matching == 0;
    /* Shared (read-only) pods: nothing here changes them. */
    if ((rc = ctrl_informer_by_index_shared(s->pods, ORPHAN_INDEX, ns, &orphans)) < 0)
        goto out;
    if (!(cands = json_array())) {
        rc = CTRL_ERR_NOMEM;
        goto out;
    }
    if ((rc = add_active(cands, orphans)) < 0)
        goto out;
    int64_t want = kc__spec_replicas(rs);
    if (use_facts && may_delete && out->facts.matching + (int64_t)json_array_size(cands) > want)
        use_facts = false;
    if (use_facts) {
        rc = kc__claim(&cl, cands, &out->adopted);
        goto out;
    }
    free(out->since);
    out->since = NULL;
    memset(&out->facts, 0, sizeof out->facts);
    json_array_clear(cands);
    if ((rc = ctrl_informer_by_index_shared(s->pods, OWNER_INDEX, ctrl_obj_uid(rs), &owned)) < 0 ||
        (rc = add_active(cands, owned)) < 0 || (rc = add_active(cands, orphans)) < 0)
        goto out;
    rc = kc__claim(&cl, cands, &out->pods);
out:
    json_decref(cands);
    json_decref(orphans);
    json_decref(owned);
    return rc;
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    rs_ctl *s = user;
    char key[512];
    snprintf(key, sizeof key, "%s/%s", req->ns, req->name);
    json_t *rs = NULL, *st = NULL;
    claimed cp = {0};
    ctrl_result res = ctrl_done();
    int rc = ctrl_informer_get(s->rss, req->ns, req->name, &rs);
    if (ctrl_err_is_not_found(rc)) {
        kc__expect_delete(s->exp, key);
        return ctrl_done();
    }
    if (rc < 0)
        return ctrl_err(rc);
    /* Owner references and Events need the kind. */
    if (!ctrl_obj_kind(rs)) {
        json_object_set_new(rs, "apiVersion", json_string("apps/v1"));
        json_object_set_new(rs, "kind", json_string("ReplicaSet"));
    }
    bool need_sync = kc__expect_satisfied(s->exp, key, ctrl_ctx_now(ctx));
    const json_t *sel = ctrl_obj_get(rs, "spec.selector");
    if (kc__selector_matches(sel, NULL) < 0) {
        ctrl_log_error(ctx, "malformed spec.selector");
        goto out;
    }
    bool sync = need_sync && !ctrl_obj_deleting(rs);
    if ((rc = claim_pods(s, ctx, rs, sync, &cp)) < 0) {
        res = ctrl_err(rc);
        goto out;
    }

    pass p = {.s = s, .ctx = ctx, .c = ctrl_ctx_client(ctx), .rs = rs, .key = key};
    int64_t diff = 0;
    int manage_rc = 0;
    if (sync && cp.pods) {
        manage_rc = manage(&p, cp.pods, &diff);
    } else if (sync) {
        /* No deletion here (claim_pods): at most creations. */
        diff = cp.facts.matching + (int64_t)json_array_size(cp.adopted) - kc__spec_replicas(rs);
        if (diff < 0)
            manage_rc = create_pods(&p, -diff > BURST ? BURST : -diff);
    }

    int64_t wall = ctrl_clock_wall_ns(ctrl_ctx_clock(ctx));
    tally t = {0};
    if (cp.pods) {
        tally_pods(&t, rs, cp.pods, wall);
    } else {
        int64_t min_ready = ctrl_obj_get_int(rs, "spec.minReadySeconds", 0);
        t.replicas = cp.facts.matching;
        t.labelled = cp.facts.labelled;
        for (int64_t i = 0; i < cp.facts.ready; i++)
            tally_ready(&t, cp.since ? cp.since[i] : -1, min_ready, wall);
        tally_pods(&t, rs, cp.adopted, wall);
    }
    st = calc_status(&p, &t, manage_rc, diff, wall);
    if (!st) {
        res = ctrl_err(CTRL_ERR_NOMEM);
        goto out;
    }
    const json_t *old = json_object_get(rs, "status");
    if (!(old ? json_equal(st, old) : !json_object_size(st))) {
        json_object_set(rs, "status", st);
        rc = ctrl_client_update_status(p.c, rs, NULL, NULL, NULL);
        if (ctrl_err_is_conflict(rc)) {
            res = ctrl_requeue();
            goto out;
        }
        if (rc < 0 && !ctrl_err_is_not_found(rc)) {
            res = ctrl_err(rc);
            goto out;
        }
    }
    if (manage_rc < 0)
        res = ctrl_err(manage_rc);
    else if (t.next_ns > 0)
        res = ctrl_requeue_after(t.next_ns);
out:
    json_decref(st);
    claimed_deinit(&cp);
    json_decref(rs);
    return res;
}

/* ---- setup ---- */

int kc__replicaset_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    ctrl_cache *cache = ctrl_manager_cache(mgr);
    rs_ctl *s = calloc(1, sizeof *s);
    if (!s)
        return KC_ERR_NOMEM;
    pthread_mutex_init(&s->mu, NULL);
    s->cfg = kc_config_ref(cfg);
    s->exp = kc__expect_new(0);
    s->dels = json_object();
    s->facts = kc__podfacts_new();
    int rc = KC_ERR_NOMEM;
    if (!s->exp || !s->dels || !s->facts)
        goto fail;
    if ((rc = ctrl_cache_informer(cache, "v1", "Pod", NULL, &s->pods, NULL)) < 0 ||
        (rc = ctrl_cache_informer(cache, "apps/v1", "ReplicaSet", NULL, &s->rss, NULL)) < 0)
        goto fail;
    if ((rc = kc__add_claim_indexes(s->pods)) < 0)
        goto fail;
    /* Before the controller's own handlers: expectations first. */
    rc = ctrl_informer_add_handler(s->pods, &(ctrl_event_handler){.on_add = on_pod_add,
                                                                  .on_update = on_pod_update,
                                                                  .on_delete = on_pod_delete,
                                                                  .user = s});
    if (rc < 0)
        goto fail;
    char name[64];
    ctrl_builder *b = ctrl_builder_for(mgr, "apps/v1", "ReplicaSet");
    ctrl_builder_named(b, kc__controller_name("replicaset", name, sizeof name));
    /* A resync (the same resourceVersion) changes nothing, as upstream's
     * updatePod. */
    ctrl_builder_watches(b, "v1", "Pod", ctrl_handler_from_map(pod_to_rs, s),
                         ctrl_pred_resource_version_changed());
    ctrl_builder_with_user_free(b, rs_ctl_free);
    rc = ctrl_builder_complete(b, reconcile, s);
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, "replicaset: %s", ctrl_strerror(rc));
    return rc;
fail:
    if (errbuf && errlen)
        snprintf(errbuf, errlen, "replicaset: %s", ctrl_strerror(rc));
    rs_ctl_free(s);
    return rc;
}
