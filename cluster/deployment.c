/*
 * deployment.c - the Deployment controller (kube-controller-manager's
 * pkg/controller/deployment), as the built-in controller "deployment".
 *
 * A Deployment owns one ReplicaSet per pod template, named
 * "<deployment>-<pod-template-hash>" (kc__template_hash with
 * status.collisionCount), whose selector, labels and template carry the
 * pod-template-hash label. The ReplicaSet whose template equals the
 * Deployment's (the hash label aside) is the new one; the others are old.
 * RollingUpdate grows the new one within maxSurge and shrinks the old ones
 * within maxUnavailable; Recreate scales the old ones to zero, waits for
 * their pods to go, then scales the new one up. `kubectl rollout undo`
 * writes an old ReplicaSet's template back into the Deployment: that
 * ReplicaSet becomes the new one again and takes the next revision.
 *
 * The order of a pass follows syncDeployment: claim ReplicaSets; a
 * Deployment being deleted only has its status written; the paused
 * condition; paused Deployments and scaling events are scaled
 * (proportionally across active ReplicaSets) without a rollout; otherwise
 * the strategy's rollout, then status and conditions (Available,
 * Progressing, ReplicaFailure), a requeue for the progress deadline, and
 * the cleanup of old ReplicaSets past revisionHistoryLimit.
 *
 * DESIGN
 * - Threads: reconcile on the controller's worker; rs_to_deployments and
 *   pod_to_deployment on the informers' threads. No threads or locks of
 *   our own.
 * - Reads from the cache. The cache lags our writes; every write of a
 *   ReplicaSet or of the Deployment carries the resourceVersion read, so
 *   a decision taken on a stale read fails with 409 and the pass is
 *   retried, as upstream relies on. Within a pass, what a write answered
 *   replaces what was read (dpass.set).
 * - The revision annotation of the Deployment is written with a merge
 *   patch of its metadata, then status with the status subresource.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim.h"
#include "cluster_int.h"
#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "podutil.h"
#include "rollout.h"

#define MAX_INT32 2147483647LL
#define MAX_REV_HISTORY_CHARS 2000

typedef struct dp_ctl {
    kc_config *cfg;
    ctrl_informer *deps, *rss, *pods;
} dp_ctl;

static void dp_ctl_free(void *p)
{
    dp_ctl *s = p;
    if (!s)
        return;
    kc_config_free(s->cfg);
    free(s);
}

/* The ReplicaSets of one pass: all (owned references), the new one
 * (borrowed from all, or NULL) and the old ones (borrowed pointers). */
typedef struct rsset {
    json_t *all;
    json_t *new_rs;
} rsset;

typedef struct dpass {
    dp_ctl *s;
    ctrl_ctx *ctx;
    ctrl_client *c;
    json_t *d; /* owned; replaced by what writes answer */
    rsset set;
    int64_t wall;
    char now[32];
    int64_t requeue_ns; /* > 0: requeue after; < 0: rate-limited requeue */
} dpass;

/* ---- small helpers ---- */

static bool has_deadline(const json_t *d)
{
    const json_t *v = ctrl_obj_get(d, "spec.progressDeadlineSeconds");
    return json_is_integer(v) && json_integer_value(v) != MAX_INT32;
}

static bool has_history_limit(const json_t *d)
{
    const json_t *v = ctrl_obj_get(d, "spec.revisionHistoryLimit");
    return json_is_integer(v) && json_integer_value(v) != MAX_INT32;
}

static int64_t spec_of(const json_t *rs)
{
    return ctrl_obj_get_int(rs, "spec.replicas", 1);
}

static int64_t status_of(const json_t *rs, const char *field)
{
    return ctrl_obj_get_int(rs, field, 0);
}

/* A new array of the elements of all except new_rs (borrowed -> new refs). */
static json_t *old_of(const rsset *set)
{
    json_t *old = json_array();
    size_t i;
    json_t *rs;
    json_array_foreach(set->all, i, rs)
    {
        if (rs != set->new_rs)
            json_array_append(old, rs);
    }
    return old;
}

static json_t *active_of(const json_t *rss)
{
    json_t *out = json_array();
    size_t i;
    json_t *rs;
    json_array_foreach(rss, i, rs)
    {
        if (rs && spec_of(rs) > 0)
            json_array_append(out, rs);
    }
    return out;
}

/* Replace old (an element of set->all) with new (taken over). */
static json_t *set_replace(rsset *set, json_t *old, json_t *new_rs)
{
    size_t i;
    json_t *rs;
    json_array_foreach(set->all, i, rs)
    {
        if (rs == old) {
            if (set->new_rs == old)
                set->new_rs = new_rs;
            json_array_set_new(set->all, i, new_rs);
            return new_rs;
        }
    }
    json_array_append_new(set->all, new_rs);
    return new_rs;
}

typedef int (*cmp_fn)(const void *, const void *);

/* The elements of arr as a C array sorted by cmp (borrowed pointers). */
static json_t **sorted(const json_t *arr, cmp_fn cmp, size_t *n)
{
    *n = json_array_size(arr);
    json_t **v = calloc(*n ? *n : 1, sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < *n; i++)
        v[i] = json_array_get(arr, i);
    qsort(v, *n, sizeof *v, cmp);
    return v;
}

static int by_oldest(const void *a, const void *b)
{
    return kc__cmp_oldest(*(json_t *const *)a, *(json_t *const *)b);
}

static int by_newest(const void *a, const void *b)
{
    return -by_oldest(a, b);
}

/* ReplicaSetsBySizeOlder / BySizeNewer: larger first, then by age. */
static int by_size_older(const void *a, const void *b)
{
    int64_t x = spec_of(*(json_t *const *)a), y = spec_of(*(json_t *const *)b);
    return x != y ? (x > y ? -1 : 1) : by_oldest(a, b);
}

static int by_size_newer(const void *a, const void *b)
{
    int64_t x = spec_of(*(json_t *const *)a), y = spec_of(*(json_t *const *)b);
    return x != y ? (x > y ? -1 : 1) : by_newest(a, b);
}

static int by_revision(const void *a, const void *b)
{
    int64_t x = kc__revision(*(json_t *const *)a), y = kc__revision(*(json_t *const *)b);
    return x != y ? (x < y ? -1 : 1) : by_oldest(a, b);
}

/* ---- Deployment conditions (apps/v1 DeploymentCondition) ---- */

static json_t *status_conditions(json_t *st)
{
    json_t *c = json_object_get(st, "conditions");
    if (!json_is_array(c)) {
        c = json_array();
        json_object_set_new(st, "conditions", c);
    }
    return c;
}

static json_t *cond_get(const json_t *st, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(st, "conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && !strcmp(t, type))
            return c;
    }
    return NULL;
}

static const char *cond_str(const json_t *c, const char *field)
{
    const char *s = json_string_value(json_object_get(c, field));
    return s ? s : "";
}

static void cond_remove(json_t *st, const char *type)
{
    json_t *conds = json_object_get(st, "conditions");
    for (size_t i = 0; i < json_array_size(conds); i++) {
        const char *t = json_string_value(json_object_get(json_array_get(conds, i), "type"));
        if (t && !strcmp(t, type)) {
            json_array_remove(conds, i);
            i--;
        }
    }
}

/* NewDeploymentCondition. */
static json_t *cond_new(const dpass *p, const char *type, const char *status, const char *reason,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static json_t *cond_new(const dpass *p, const char *type, const char *status, const char *reason,
                        const char *fmt, ...)
{
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", type, "status", status,
                     "lastUpdateTime", p->now, "lastTransitionTime", p->now, "reason", reason,
                     "message", msg);
}

/* SetDeploymentCondition (cond taken over): nothing when status and reason
 * are unchanged; the transition time kept when the status is. */
static void cond_set(json_t *st, json_t *cond)
{
    if (!cond)
        return;
    const char *type = cond_str(cond, "type");
    json_t *cur = cond_get(st, type);
    if (cur && !strcmp(cond_str(cur, "status"), cond_str(cond, "status")) &&
        !strcmp(cond_str(cur, "reason"), cond_str(cond, "reason"))) {
        json_decref(cond);
        return;
    }
    if (cur && !strcmp(cond_str(cur, "status"), cond_str(cond, "status")))
        json_object_set(cond, "lastTransitionTime", json_object_get(cur, "lastTransitionTime"));
    cond_remove(st, type);
    json_array_append_new(status_conditions(st), cond);
}

static void tidy_status(json_t *st)
{
    json_t *c = json_object_get(st, "conditions");
    if (c && !json_array_size(c))
        json_object_del(st, "conditions");
}

/* ---- writes ---- */

/* Write st (borrowed) as the Deployment's status when it differs. */
static int write_status(dpass *p, json_t *st)
{
    tidy_status(st);
    const json_t *old = json_object_get(p->d, "status");
    if ((old ? json_equal(st, old) : !json_object_size(st)))
        return 0;
    /* p->d is the pass's own: the status is swapped in for the write, and
     * back when it fails. */
    json_t *had = json_incref(json_object_get(p->d, "status")), *out = NULL;
    int rc = json_object_set(p->d, "status", st) < 0
                 ? CTRL_ERR_NOMEM
                 : ctrl_client_update_status(p->c, p->d, NULL, &out, NULL);
    if (rc == 0) {
        json_decref(p->d);
        p->d = out;
    } else if (had) {
        json_object_set(p->d, "status", had);
    } else {
        json_object_del(p->d, "status");
    }
    json_decref(had);
    return rc;
}

/* SetDeploymentRevision, written at once (a metadata merge patch). */
static int set_d_revision(dpass *p, const char *rev)
{
    const char *cur = ctrl_obj_annotation(p->d, KC_REVISION_ANN);
    if (cur && !strcmp(cur, rev))
        return 0;
    json_t *patch = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "resourceVersion",
                              ctrl_obj_resource_version(p->d), "annotations", KC_REVISION_ANN, rev);
    json_t *out = NULL;
    int rc = patch
                 ? ctrl_client_patch(p->c, "apps/v1", "Deployment", ctrl_obj_namespace(p->d),
                                     ctrl_obj_name(p->d), CTRL_PATCH_MERGE, patch, NULL, &out, NULL)
                 : CTRL_ERR_NOMEM;
    json_decref(patch);
    if (rc == 0) {
        json_decref(p->d);
        p->d = out;
    }
    return rc;
}

/* Update rs (an element of p->set.all) to copy (taken over); *out the
 * stored one, now in the set. */
static int update_rs(dpass *p, json_t *rs, json_t *copy, json_t **out)
{
    json_t *stored = NULL;
    int rc = ctrl_client_update(p->c, copy, NULL, &stored, NULL);
    json_decref(copy);
    if (rc < 0)
        return rc;
    *out = set_replace(&p->set, rs, stored);
    return 0;
}

/* ---- annotations ---- */

static bool skip_copy(const char *k)
{
    static const char *const skip[] = {KC_LAST_APPLIED_ANN,
                                       KC_REVISION_ANN,
                                       KC_REVISION_HISTORY_ANN,
                                       KC_DESIRED_ANN,
                                       KC_MAX_ANN,
                                       KC_ROLLBACK_ANN,
                                       NULL};
    for (const char *const *s = skip; *s; s++)
        if (!strcmp(k, *s))
            return true;
    return false;
}

static bool set_ann(json_t *obj, const char *k, const char *v)
{
    const char *cur = ctrl_obj_annotation(obj, k);
    if (cur && !strcmp(cur, v))
        return false;
    ctrl_obj_set_annotation(obj, k, v);
    return true;
}

/* SetReplicasAnnotations. */
static bool set_replicas_ann(json_t *rs, int64_t desired, int64_t max)
{
    char a[24], b[24];
    snprintf(a, sizeof a, "%lld", (long long)desired);
    snprintf(b, sizeof b, "%lld", (long long)max);
    bool c1 = set_ann(rs, KC_DESIRED_ANN, a);
    bool c2 = set_ann(rs, KC_MAX_ANN, b);
    return c1 || c2;
}

static bool replicas_ann_need_update(const json_t *rs, int64_t desired, int64_t max)
{
    char a[24], b[24];
    snprintf(a, sizeof a, "%lld", (long long)desired);
    snprintf(b, sizeof b, "%lld", (long long)max);
    const char *x = ctrl_obj_annotation(rs, KC_DESIRED_ANN),
               *y = ctrl_obj_annotation(rs, KC_MAX_ANN);
    return !x || strcmp(x, a) || !y || strcmp(y, b);
}

/* SetNewReplicaSetAnnotations. */
static bool set_new_rs_annotations(const json_t *d, json_t *rs, int64_t new_rev, bool exists)
{
    bool changed = false;
    const char *k;
    json_t *v;
    json_object_foreach(ctrl_obj_get(d, "metadata.annotations"), k, v)
    {
        if (!skip_copy(k) && json_is_string(v))
            changed |= set_ann(rs, k, json_string_value(v));
    }
    const char *old_s = ctrl_obj_annotation(rs, KC_REVISION_ANN);
    char old_buf[32] = "";
    if (old_s)
        snprintf(old_buf, sizeof old_buf, "%s", old_s);
    int64_t old_rev = 0;
    if (*old_buf) {
        char *end = NULL;
        old_rev = strtoll(old_buf, &end, 10);
        if (*end)
            return false;
    }
    if (old_rev < new_rev) {
        char nb[24];
        snprintf(nb, sizeof nb, "%lld", (long long)new_rev);
        ctrl_obj_set_annotation(rs, KC_REVISION_ANN, nb);
        changed = true;
        if (*old_buf) {
            /* Keep the history within MAX_REV_HISTORY_CHARS, oldest out. */
            const char *h = ctrl_obj_annotation(rs, KC_REVISION_HISTORY_ANN);
            char hist[MAX_REV_HISTORY_CHARS * 2 + 64];
            if (!h || !*h) {
                snprintf(hist, sizeof hist, "%s", old_buf);
            } else {
                const char *start = h;
                size_t total = strlen(h) + strlen(old_buf) + 1;
                while (total > MAX_REV_HISTORY_CHARS && start) {
                    const char *comma = strchr(start, ',');
                    total -= (comma ? (size_t)(comma - start) : strlen(start)) + 1;
                    start = comma ? comma + 1 : NULL;
                }
                if (total <= MAX_REV_HISTORY_CHARS)
                    snprintf(hist, sizeof hist, "%s%s%s", start ? start : "",
                             start && *start ? "," : "", old_buf);
                else
                    snprintf(hist, sizeof hist, "%s", h);
            }
            ctrl_obj_set_annotation(rs, KC_REVISION_HISTORY_ANN, hist);
        }
    }
    if (!exists) {
        int64_t want = kc__spec_replicas(d);
        changed |= set_replicas_ann(rs, want, want + kc__max_surge(d));
    }
    return changed;
}

/* ---- scaling ---- */

/* scaleReplicaSet: *rsp (in the set) becomes the updated one. *scaled:
 * its size changed. */
static int scale_rs(dpass *p, json_t **rsp, int64_t scale, bool *scaled)
{
    json_t *rs = *rsp;
    int64_t want = kc__spec_replicas(p->d), max = want + kc__max_surge(p->d);
    int64_t old = spec_of(rs);
    bool size = old != scale, ann = replicas_ann_need_update(rs, want, max);
    if (scaled)
        *scaled = false;
    if (!size && !ann)
        return 0;
    json_t *copy = json_deep_copy(rs);
    if (!copy)
        return CTRL_ERR_NOMEM;
    ctrl_obj_set(copy, "spec.replicas", json_integer(scale));
    set_replicas_ann(copy, want, max);
    char name[256];
    snprintf(name, sizeof name, "%s", ctrl_obj_name(rs));
    int rc = update_rs(p, rs, copy, rsp);
    if (rc == 0 && size) {
        if (scaled)
            *scaled = true;
        ctrl_recorder_event(ctrl_ctx_recorder(p->ctx), p->d, "Normal", "ScalingReplicaSet",
                            "Scaled %s replica set %s from %lld to %lld",
                            old < scale ? "up" : "down", name, (long long)old, (long long)scale);
    }
    return rc;
}

/* scaleReplicaSetAndRecordEvent. */
static int scale_and_record(dpass *p, json_t **rsp, int64_t scale, bool *scaled)
{
    if (scaled)
        *scaled = false;
    if (spec_of(*rsp) == scale)
        return 0;
    return scale_rs(p, rsp, scale, scaled);
}

/* ---- the new ReplicaSet ---- */

static json_t *find_new(const json_t *d, const json_t *all)
{
    size_t n;
    json_t **v = sorted(all, by_oldest, &n), *found = NULL;
    for (size_t i = 0; v && i < n && !found; i++)
        if (kc__templates_equal(ctrl_obj_get(v[i], "spec.template"),
                                ctrl_obj_get(d, "spec.template")))
            found = v[i];
    free(v);
    return found;
}

static int64_t max_revision(const json_t *rss)
{
    int64_t m = 0;
    size_t i;
    json_t *rs;
    json_array_foreach(rss, i, rs)
    {
        int64_t r = kc__revision(rs);
        if (r > m)
            m = r;
    }
    return m;
}

static json_t *d_status_copy(const dpass *p)
{
    json_t *st = json_deep_copy(json_object_get(p->d, "status"));
    if (!json_is_object(st)) {
        json_decref(st);
        st = json_object();
    }
    return st;
}

/* Write one condition into the Deployment's status now. */
static int write_cond(dpass *p, json_t *cond)
{
    json_t *st = d_status_copy(p);
    if (!st) {
        json_decref(cond);
        return CTRL_ERR_NOMEM;
    }
    cond_set(st, cond);
    int rc = write_status(p, st);
    json_decref(st);
    return rc;
}

static json_t *build_new_rs(dpass *p, const char *hash)
{
    const json_t *d = p->d;
    char name[512];
    snprintf(name, sizeof name, "%s-%s", ctrl_obj_name(d), hash);
    json_t *tmpl = json_deep_copy(ctrl_obj_get(d, "spec.template"));
    json_t *sel = json_deep_copy(ctrl_obj_get(d, "spec.selector"));
    if (!tmpl || !sel)
        goto fail;
    if (ctrl_obj_set(tmpl, "metadata.labels." KC_HASH_LABEL, json_string(hash)) < 0)
        goto fail;
    if (ctrl_obj_set(sel, "matchLabels." KC_HASH_LABEL, json_string(hash)) < 0)
        goto fail;
    json_t *rs = json_pack("{s:s, s:s, s:{s:s, s:s, s:O}, s:{s:i, s:I, s:o, s:o}}", "apiVersion",
                           "apps/v1", "kind", "ReplicaSet", "metadata", "name", name, "namespace",
                           ctrl_obj_namespace(d), "labels", ctrl_obj_get(tmpl, "metadata.labels"),
                           "spec", "replicas", 0, "minReadySeconds",
                           (json_int_t)ctrl_obj_get_int(d, "spec.minReadySeconds", 0), "selector",
                           sel, "template", tmpl);
    if (rs && ctrl_set_controller_reference(d, rs, NULL) < 0) {
        json_decref(rs);
        rs = NULL;
    }
    if (rs && !ctrl_obj_get_int(d, "spec.minReadySeconds", 0))
        ctrl_obj_remove(rs, "spec.minReadySeconds");
    return rs;
fail:
    json_decref(tmpl);
    json_decref(sel);
    return NULL;
}

/* getNewReplicaSet: p->set.new_rs set (or left NULL when !create). */
/* A copy of rs whose metadata and annotations are its own and everything
 * else shared with rs: for set_new_rs_annotations alone (it changes only
 * annotations). NULL when out of memory. */
static json_t *annotations_probe(const json_t *rs)
{
    json_t *meta = json_object_get(rs, "metadata");
    json_t *c = json_copy((json_t *)rs), *m = json_copy(meta);
    json_t *ann = json_object_get(meta, "annotations");
    json_t *a = ann ? json_deep_copy(ann) : NULL;
    int rc = c && m && (!ann || a) ? 0 : -1;
    if (rc == 0 && a)
        rc = json_object_set(m, "annotations", a);
    if (rc == 0)
        rc = json_object_set(c, "metadata", m);
    json_decref(a);
    json_decref(m);
    if (rc < 0) {
        json_decref(c);
        return NULL;
    }
    return c;
}

static int get_new_rs(dpass *p, bool create)
{
    int rc = 0;
    json_t *existing = find_new(p->d, p->set.all);
    p->set.new_rs = existing;
    json_t *old = old_of(&p->set);
    int64_t new_rev = max_revision(old) + 1;
    char rev[24];
    snprintf(rev, sizeof rev, "%lld", (long long)new_rev);
    if (existing) {
        int64_t mrs = ctrl_obj_get_int(p->d, "spec.minReadySeconds", 0);
        bool mr = ctrl_obj_get_int(existing, "spec.minReadySeconds", 0) != mrs;
        /* Most passes change nothing: try the annotations on a copy of them
         * alone before copying the whole ReplicaSet. */
        json_t *probe = annotations_probe(existing);
        bool ann = !probe || set_new_rs_annotations(p->d, probe, new_rev, true);
        json_decref(probe);
        json_t *copy = NULL;
        if (ann || mr) {
            if (!(copy = json_deep_copy(existing))) {
                rc = CTRL_ERR_NOMEM;
                goto out;
            }
            set_new_rs_annotations(p->d, copy, new_rev, true);
            if (mr)
                ctrl_obj_set(copy, "spec.minReadySeconds", json_integer(mrs));
            json_t *out = NULL;
            if ((rc = update_rs(p, existing, copy, &out)) < 0)
                goto out;
        }
        const char *r = ctrl_obj_annotation(p->set.new_rs, KC_REVISION_ANN);
        char rb[24];
        snprintf(rb, sizeof rb, "%s", r ? r : "");
        if ((rc = set_d_revision(p, rb)) < 0)
            goto out;
        if (has_deadline(p->d) && !cond_get(json_object_get(p->d, "status"), "Progressing"))
            rc = write_cond(p,
                            cond_new(p, "Progressing", "True", "FoundNewReplicaSet",
                                     "Found new replica set \"%s\"", ctrl_obj_name(p->set.new_rs)));
        goto out;
    }
    if (!create)
        goto out;

    const json_t *cc = ctrl_obj_get(p->d, "status.collisionCount");
    char hash[16];
    kc__template_hash(ctrl_obj_get(p->d, "spec.template"),
                      json_is_integer(cc) ? json_integer_value(cc) : -1, hash, sizeof hash);
    json_t *rs = build_new_rs(p, hash);
    if (!rs) {
        rc = CTRL_ERR_NOMEM;
        goto out;
    }
    json_array_append(old, rs);
    int64_t n = kc__new_rs_new_replicas(p->d, old, rs);
    if (n < 0)
        n = 0;
    ctrl_obj_set(rs, "spec.replicas", json_integer(n));
    set_new_rs_annotations(p->d, rs, new_rev, false);
    json_t *created = NULL;
    ctrl_error e = {0};
    bool already = false;
    rc = ctrl_client_create(p->c, rs, NULL, &created, &e);
    if (ctrl_err_is_already_exists(rc)) {
        json_t *got = NULL;
        int grc = ctrl_client_get(ctrl_ctx_api_reader(p->ctx), "apps/v1", "ReplicaSet",
                                  ctrl_obj_namespace(rs), ctrl_obj_name(rs), &got, NULL);
        if (grc == 0 && kc__controlled_by(got, ctrl_obj_uid(p->d)) &&
            kc__templates_equal(ctrl_obj_get(got, "spec.template"),
                                ctrl_obj_get(p->d, "spec.template"))) {
            created = got;
            already = true;
            rc = 0;
        } else {
            /* A hash collision: the next pass hashes with the count. */
            json_decref(got);
            json_t *st = d_status_copy(p);
            int64_t cnt = json_is_integer(cc) ? json_integer_value(cc) : 0;
            json_object_set_new(st, "collisionCount", json_integer(cnt + 1));
            int wrc = write_status(p, st);
            json_decref(st);
            ctrl_log_info(p->ctx, "found a hash collision for the deployment's new replica set",
                          "replicaset", ctrl_obj_name(rs));
            rc = wrc < 0 ? wrc : CTRL_ERR_ALREADY_EXISTS;
            json_decref(rs);
            ctrl_error_deinit(&e);
            goto out;
        }
    }
    if (rc < 0) {
        char msg[1400];
        snprintf(msg, sizeof msg, "Failed to create new replica set \"%s\": %s", ctrl_obj_name(rs),
                 *e.message ? e.message : ctrl_strerror(rc));
        if (has_deadline(p->d))
            write_cond(p, cond_new(p, "Progressing", "False", "FailedRSCreate", "%s", msg));
        ctrl_recorder_event(ctrl_ctx_recorder(p->ctx), p->d, "Warning", "FailedRSCreate", "%s",
                            msg);
        json_decref(rs);
        ctrl_error_deinit(&e);
        goto out;
    }
    ctrl_error_deinit(&e);
    json_decref(rs);
    json_array_append_new(p->set.all, created);
    p->set.new_rs = created;
    if (!already && n > 0)
        ctrl_recorder_event(ctrl_ctx_recorder(p->ctx), p->d, "Normal", "ScalingReplicaSet",
                            "Scaled up replica set %s from 0 to %lld", ctrl_obj_name(created),
                            (long long)n);
    if ((rc = set_d_revision(p, rev)) < 0)
        goto out;
    if (!already && has_deadline(p->d))
        rc = write_cond(p, cond_new(p, "Progressing", "True", "NewReplicaSetCreated",
                                    "Created new replica set \"%s\"", ctrl_obj_name(created)));
out:
    json_decref(old);
    return rc;
}

/* ---- status ---- */

static void put_int(json_t *st, const char *k, int64_t v)
{
    if (v)
        json_object_set_new(st, k, json_integer(v));
    else
        json_object_del(st, k);
}

/* calculateStatus. */
static json_t *calc_status(dpass *p)
{
    json_t *all = p->set.all;
    json_t *st = json_object();
    if (!st)
        return NULL;
    int64_t avail = kc__sum_status(all, "availableReplicas");
    int64_t total = kc__sum_spec(all);
    int64_t unavail = total - avail < 0 ? 0 : total - avail;
    put_int(st, "observedGeneration", ctrl_obj_generation(p->d));
    put_int(st, "replicas", kc__sum_status(all, "replicas"));
    put_int(st, "updatedReplicas", p->set.new_rs ? status_of(p->set.new_rs, "status.replicas") : 0);
    put_int(st, "readyReplicas", kc__sum_status(all, "readyReplicas"));
    put_int(st, "availableReplicas", avail);
    put_int(st, "unavailableReplicas", unavail);
    json_t *conds = ctrl_obj_get(p->d, "status.conditions");
    if (json_is_array(conds))
        json_object_set_new(st, "conditions", json_deep_copy(conds));
    const json_t *cc = ctrl_obj_get(p->d, "status.collisionCount");
    if (cc)
        json_object_set(st, "collisionCount", (json_t *)cc);
    int64_t want = kc__spec_replicas(p->d), mu = kc__max_unavailable(p->d);
    if (avail >= want - (mu > 0 ? mu : 0))
        cond_set(st, cond_new(p, "Available", "True", "MinimumReplicasAvailable",
                              "Deployment has minimum availability."));
    else
        cond_set(st, cond_new(p, "Available", "False", "MinimumReplicasUnavailable",
                              "Deployment does not have minimum availability."));
    return st;
}

/* syncDeploymentStatus. */
static int sync_status(dpass *p)
{
    json_t *st = calc_status(p);
    if (!st)
        return CTRL_ERR_NOMEM;
    int rc = write_status(p, st);
    json_decref(st);
    return rc;
}

static bool complete(const json_t *d, const json_t *st)
{
    int64_t want = kc__spec_replicas(d);
    return json_integer_value(json_object_get(st, "updatedReplicas")) == want &&
           json_integer_value(json_object_get(st, "replicas")) == want &&
           json_integer_value(json_object_get(st, "availableReplicas")) == want &&
           json_integer_value(json_object_get(st, "observedGeneration")) >= ctrl_obj_generation(d);
}

static bool progressing(const json_t *d, const json_t *st)
{
    const json_t *old = json_object_get(d, "status");
#define F(s, f) json_integer_value(json_object_get((s), (f)))
    int64_t old_old = F(old, "replicas") - F(old, "updatedReplicas");
    int64_t new_old = F(st, "replicas") - F(st, "updatedReplicas");
    return F(st, "updatedReplicas") > F(old, "updatedReplicas") || new_old < old_old ||
           F(st, "readyReplicas") > F(old, "readyReplicas") ||
           F(st, "availableReplicas") > F(old, "availableReplicas");
#undef F
}

static bool timed_out(const dpass *p, const json_t *st)
{
    if (!has_deadline(p->d))
        return false;
    const json_t *c = cond_get(st, "Progressing");
    if (!c)
        return false;
    const char *reason = cond_str(c, "reason");
    if (!strcmp(reason, "NewReplicaSetAvailable"))
        return false;
    if (!strcmp(reason, "ProgressDeadlineExceeded"))
        return true;
    int64_t from = kc__parse_time(cond_str(c, "lastUpdateTime"));
    int64_t dl = ctrl_obj_get_int(p->d, "spec.progressDeadlineSeconds", 0) * CTRL_SECOND;
    return from >= 0 && from + dl < p->wall;
}

/* getReplicaFailures: the new ReplicaSet's ReplicaFailure first, then the
 * old ones'. */
static json_t *replica_failure(const dpass *p)
{
    json_t *v[2] = {p->set.new_rs, NULL};
    for (int pass_i = 0; pass_i < 2; pass_i++) {
        size_t i;
        json_t *rs;
        json_array_foreach(p->set.all, i, rs)
        {
            if ((pass_i == 0) != (rs == v[0]))
                continue;
            const json_t *c = kc__condition(rs, "ReplicaFailure");
            if (c)
                return json_pack("{s:s, s:s, s:O?, s:O?, s:s, s:s}", "type", "ReplicaFailure",
                                 "status", cond_str(c, "status"), "lastUpdateTime",
                                 json_object_get(c, "lastTransitionTime"), "lastTransitionTime",
                                 json_object_get(c, "lastTransitionTime"), "reason",
                                 cond_str(c, "reason"), "message", cond_str(c, "message"));
        }
    }
    return NULL;
}

/* requeueStuckDeployment. */
static void requeue_stuck(dpass *p, const json_t *st)
{
    const json_t *cur = cond_get(json_object_get(p->d, "status"), "Progressing");
    if (!has_deadline(p->d) || !cur || complete(p->d, st) ||
        !strcmp(cond_str(cur, "reason"), "ProgressDeadlineExceeded"))
        return;
    int64_t from = kc__parse_time(cond_str(cur, "lastUpdateTime"));
    if (from < 0)
        return;
    int64_t after =
        from + ctrl_obj_get_int(p->d, "spec.progressDeadlineSeconds", 0) * CTRL_SECOND - p->wall;
    p->requeue_ns = after < CTRL_SECOND ? -1 : after + CTRL_SECOND;
}

/* syncRolloutStatus. */
static int sync_rollout_status(dpass *p)
{
    json_t *st = calc_status(p);
    if (!st)
        return CTRL_ERR_NOMEM;
    const json_t *new_rs = p->set.new_rs;
    if (!has_deadline(p->d))
        cond_remove(st, "Progressing");
    const json_t *cur = cond_get(json_object_get(p->d, "status"), "Progressing");
    bool done = json_integer_value(json_object_get(st, "replicas")) ==
                    json_integer_value(json_object_get(st, "updatedReplicas")) &&
                cur && !strcmp(cond_str(cur, "reason"), "NewReplicaSetAvailable");
    if (has_deadline(p->d) && !done) {
        char what[600];
        if (new_rs)
            snprintf(what, sizeof what, "ReplicaSet \"%s\"", ctrl_obj_name(new_rs));
        else
            snprintf(what, sizeof what, "Deployment \"%s\"", ctrl_obj_name(p->d));
        if (complete(p->d, st)) {
            cond_set(st, cond_new(p, "Progressing", "True", "NewReplicaSetAvailable",
                                  "%s has successfully progressed.", what));
        } else if (progressing(p->d, st)) {
            json_t *c =
                cond_new(p, "Progressing", "True", "ReplicaSetUpdated", "%s is progressing.", what);
            /* Everything but the transition time moves. */
            json_t *old = cond_get(st, "Progressing");
            if (c && old) {
                if (!strcmp(cond_str(old, "status"), "True"))
                    json_object_set(c, "lastTransitionTime",
                                    json_object_get(old, "lastTransitionTime"));
                cond_remove(st, "Progressing");
            }
            cond_set(st, c);
        } else if (timed_out(p, st)) {
            cond_set(st, cond_new(p, "Progressing", "False", "ProgressDeadlineExceeded",
                                  "%s has timed out progressing.", what));
        }
    }
    json_t *rf = replica_failure(p);
    if (rf)
        cond_set(st, rf);
    else
        cond_remove(st, "ReplicaFailure");
    tidy_status(st);
    const json_t *old = json_object_get(p->d, "status");
    int rc = 0;
    if ((old ? json_equal(st, old) : !json_object_size(st)))
        requeue_stuck(p, st);
    else
        rc = write_status(p, st);
    json_decref(st);
    return rc;
}

/* ---- cleanup ---- */

static int cleanup(dpass *p)
{
    if (!has_history_limit(p->d))
        return 0;
    json_t *old = old_of(&p->set), *alive = json_array();
    size_t i;
    json_t *rs;
    json_array_foreach(old, i, rs)
    {
        if (!ctrl_obj_deleting(rs))
            json_array_append(alive, rs);
    }
    int64_t limit = ctrl_obj_get_int(p->d, "spec.revisionHistoryLimit", 10);
    int64_t diff = (int64_t)json_array_size(alive) - limit;
    int rc = 0;
    if (diff > 0) {
        size_t n;
        json_t **v = sorted(alive, by_revision, &n);
        for (int64_t k = 0; v && k < diff && rc == 0; k++) {
            rs = v[k];
            if (status_of(rs, "status.replicas") != 0 || spec_of(rs) != 0 ||
                ctrl_obj_generation(rs) > status_of(rs, "status.observedGeneration") ||
                ctrl_obj_deleting(rs))
                continue;
            ctrl_delete_options o = {.precondition_uid = ctrl_obj_uid(rs)};
            rc = ctrl_client_delete(p->c, "apps/v1", "ReplicaSet", ctrl_obj_namespace(rs),
                                    ctrl_obj_name(rs), &o, NULL, NULL);
            if (ctrl_err_is_not_found(rc))
                rc = 0;
        }
        free(v);
    }
    json_decref(alive);
    json_decref(old);
    return rc;
}

/* ---- scaling without a rollout ---- */

/* FindActiveOrLatest. */
static json_t *active_or_latest(dpass *p)
{
    json_t *old = old_of(&p->set);
    json_t *found = NULL;
    if (!p->set.new_rs && !json_array_size(old))
        goto out;
    json_t *all = active_of(p->set.all);
    size_t na = json_array_size(all);
    if (na == 0) {
        if (p->set.new_rs) {
            found = p->set.new_rs;
        } else {
            size_t n;
            json_t **v = sorted(old, by_newest, &n);
            found = v && n ? v[0] : NULL;
            free(v);
        }
    } else if (na == 1) {
        found = json_array_get(all, 0);
    }
    json_decref(all);
out:
    json_decref(old);
    return found;
}

static bool saturated(const dpass *p)
{
    const json_t *rs = p->set.new_rs;
    if (!rs)
        return false;
    int64_t want = kc__spec_replicas(p->d);
    const char *desired = ctrl_obj_annotation(rs, KC_DESIRED_ANN);
    return spec_of(rs) == want && desired && strtoll(desired, NULL, 10) == want &&
           status_of(rs, "status.availableReplicas") == want;
}

/* scale: proportional scaling of the active ReplicaSets. */
static int scale(dpass *p)
{
    int64_t want = kc__spec_replicas(p->d);
    int rc = 0;
    json_t *rs = active_or_latest(p);
    if (rs) {
        if (spec_of(rs) == want)
            return 0;
        return scale_and_record(p, &rs, want, NULL);
    }
    if (saturated(p)) {
        json_t *old = old_of(&p->set), *act = active_of(old);
        size_t i;
        json_t *o;
        json_array_foreach(act, i, o)
        {
            json_t *x = o;
            if ((rc = scale_and_record(p, &x, 0, NULL)) < 0)
                break;
        }
        json_decref(act);
        json_decref(old);
        return rc;
    }
    if (!kc__is_rolling(p->d))
        return 0;
    json_t *all = active_of(p->set.all);
    int64_t cur = kc__sum_spec(all);
    int64_t allowed = want > 0 ? want + kc__max_surge(p->d) : 0;
    int64_t to_add = allowed - cur, added = 0;
    size_t n;
    json_t **v = sorted(all, to_add > 0 ? by_size_newer : by_size_older, &n);
    int64_t *size = calloc(n ? n : 1, sizeof *size);
    if (!v || !size) {
        rc = CTRL_ERR_NOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        size[i] = spec_of(v[i]);
        if (to_add != 0) {
            int64_t prop = kc__proportion(v[i], p->d, to_add, added);
            size[i] += prop;
            added += prop;
        }
    }
    if (to_add != added && n > 0) {
        size[0] += to_add - added;
        if (size[0] < 0)
            size[0] = 0;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        json_t *x = v[i];
        rc = scale_rs(p, &x, size[i], NULL);
    }
out:
    free(size);
    free(v);
    json_decref(all);
    return rc;
}

/* sync: paused Deployments and scaling events. */
static int sync_scale(dpass *p)
{
    int rc = get_new_rs(p, false);
    if (rc == 0)
        rc = scale(p);
    if (rc == 0 && ctrl_obj_get_bool(p->d, "spec.paused", false))
        rc = cleanup(p);
    if (rc == 0)
        rc = sync_status(p);
    return rc;
}

/* isScalingEvent (after get_new_rs(false)). */
static bool scaling_event(const dpass *p)
{
    int64_t want = kc__spec_replicas(p->d);
    json_t *act = active_of(p->set.all);
    bool yes = false;
    size_t i;
    json_t *rs;
    json_array_foreach(act, i, rs)
    {
        const char *d = ctrl_obj_annotation(rs, KC_DESIRED_ANN);
        char *end = NULL;
        long long v = d ? strtoll(d, &end, 10) : 0;
        if (d && *d && !*end && v != want)
            yes = true;
    }
    json_decref(act);
    return yes;
}

/* ---- rollouts ---- */

/* reconcileNewReplicaSet. */
static int reconcile_new(dpass *p, bool *scaled)
{
    *scaled = false;
    json_t *rs = p->set.new_rs;
    int64_t want = kc__spec_replicas(p->d), cur = spec_of(rs);
    if (cur == want)
        return 0;
    if (cur > want)
        return scale_and_record(p, &rs, want, scaled);
    int64_t n = kc__new_rs_new_replicas(p->d, p->set.all, rs);
    if (n < 0)
        return CTRL_ERR_ARG;
    return scale_and_record(p, &rs, n, scaled);
}

/* cleanupUnhealthyReplicas over the old ReplicaSets (sorted oldest first). */
static int cleanup_unhealthy(dpass *p, json_t **v, size_t n, int64_t max, int64_t *done)
{
    *done = 0;
    for (size_t i = 0; i < n; i++) {
        if (*done >= max)
            break;
        int64_t spec = spec_of(v[i]), avail = status_of(v[i], "status.availableReplicas");
        if (spec == 0 || spec == avail)
            continue;
        int64_t down = max - *done < spec - avail ? max - *done : spec - avail;
        /* More available than wanted: a status not caught up with a
         * scale-down. Upstream fails the pass here; so do we (a 409
         * retries it). */
        if (down < 0)
            return CTRL_ERR_CONFLICT;
        int rc = scale_and_record(p, &v[i], spec - down, NULL);
        if (rc < 0)
            return rc;
        *done += down;
    }
    return 0;
}

/* scaleDownOldReplicaSetsForRollingUpdate. */
static int scale_down_old(dpass *p, json_t **v, size_t n, int64_t *done)
{
    *done = 0;
    int64_t min_avail = kc__spec_replicas(p->d) - kc__max_unavailable(p->d);
    int64_t avail = kc__sum_status(p->set.all, "availableReplicas");
    if (avail <= min_avail)
        return 0;
    int64_t total = avail - min_avail;
    for (size_t i = 0; i < n; i++) {
        if (*done >= total)
            break;
        int64_t spec = spec_of(v[i]);
        if (spec == 0)
            continue;
        int64_t down = spec < total - *done ? spec : total - *done;
        int rc = scale_and_record(p, &v[i], spec - down, NULL);
        if (rc < 0)
            return rc;
        *done += down;
    }
    return 0;
}

/* reconcileOldReplicaSets. */
static int reconcile_old(dpass *p, bool *scaled)
{
    *scaled = false;
    json_t *old = old_of(&p->set), *act = active_of(old);
    int rc = 0;
    int64_t old_pods = kc__sum_spec(act);
    if (old_pods == 0)
        goto out;
    int64_t all_pods = kc__sum_spec(p->set.all);
    int64_t min_avail = kc__spec_replicas(p->d) - kc__max_unavailable(p->d);
    const json_t *nrs = p->set.new_rs;
    int64_t new_unavail = spec_of(nrs) - status_of(nrs, "status.availableReplicas");
    int64_t max_down = all_pods - min_avail - new_unavail;
    if (max_down <= 0)
        goto out;
    size_t n;
    json_t **v = sorted(act, by_oldest, &n);
    if (!v) {
        rc = CTRL_ERR_NOMEM;
        goto out;
    }
    int64_t cleaned = 0, down = 0;
    rc = cleanup_unhealthy(p, v, n, max_down, &cleaned);
    if (rc == 0)
        rc = scale_down_old(p, v, n, &down);
    free(v);
    *scaled = cleaned + down > 0;
out:
    json_decref(act);
    json_decref(old);
    return rc;
}

static int rollout_rolling(dpass *p)
{
    int rc = get_new_rs(p, true);
    if (rc < 0 || !p->set.new_rs)
        return rc;
    bool scaled = false;
    if ((rc = reconcile_new(p, &scaled)) < 0)
        return rc;
    if (scaled)
        return sync_rollout_status(p);
    if ((rc = reconcile_old(p, &scaled)) < 0)
        return rc;
    if (scaled)
        return sync_rollout_status(p);
    if (complete(p->d, json_object_get(p->d, "status")) && (rc = cleanup(p)) < 0)
        return rc;
    return sync_rollout_status(p);
}

/* oldPodsRunning: pods of ReplicaSets other than the new one still there. */
static bool old_pods_running(dpass *p)
{
    json_t *old = old_of(&p->set);
    bool yes = kc__sum_status(old, "replicas") > 0;
    size_t i;
    json_t *rs;
    json_array_foreach(old, i, rs)
    {
        json_t *pods = NULL;
        if (yes ||
            ctrl_informer_by_index(p->s->pods, KC_CONTROLLER_INDEX, ctrl_obj_uid(rs), &pods) < 0)
            continue;
        size_t j;
        json_t *pod;
        json_array_foreach(pods, j, pod)
        {
            const char *ph = kc__pod_phase(pod);
            if (strcmp(ph, "Failed") && strcmp(ph, "Succeeded"))
                yes = true;
        }
        json_decref(pods);
    }
    json_decref(old);
    return yes;
}

static int rollout_recreate(dpass *p)
{
    int rc = get_new_rs(p, false);
    if (rc < 0)
        return rc;
    json_t *old = old_of(&p->set), *act = active_of(old);
    bool scaled = false;
    size_t i;
    json_t *rs;
    json_array_foreach(act, i, rs)
    {
        json_t *x = rs;
        bool one = false;
        if ((rc = scale_and_record(p, &x, 0, &one)) < 0)
            break;
        scaled |= one;
    }
    json_decref(act);
    json_decref(old);
    if (rc < 0)
        return rc;
    if (scaled || old_pods_running(p))
        return sync_rollout_status(p);
    if (!p->set.new_rs && (rc = get_new_rs(p, true)) < 0)
        return rc;
    if (p->set.new_rs) {
        json_t *x = p->set.new_rs;
        if ((rc = scale_and_record(p, &x, kc__spec_replicas(p->d), NULL)) < 0)
            return rc;
    }
    if (complete(p->d, json_object_get(p->d, "status")) && (rc = cleanup(p)) < 0)
        return rc;
    return sync_rollout_status(p);
}

/* checkPausedConditions. */
static int check_paused(dpass *p)
{
    if (!has_deadline(p->d))
        return 0;
    const json_t *c = cond_get(json_object_get(p->d, "status"), "Progressing");
    bool paused = ctrl_obj_get_bool(p->d, "spec.paused", false);
    /* A reported lack of progress is not overwritten by the pause. */
    if (c && !strcmp(cond_str(c, "reason"), "ProgressDeadlineExceeded"))
        return 0;
    bool has = c && !strcmp(cond_str(c, "reason"), "DeploymentPaused");
    if (paused && !has)
        return write_cond(
            p, cond_new(p, "Progressing", "Unknown", "DeploymentPaused", "Deployment is paused"));
    if (!paused && has)
        return write_cond(
            p, cond_new(p, "Progressing", "Unknown", "DeploymentResumed", "Deployment is resumed"));
    return 0;
}

static bool selector_empty(const json_t *sel)
{
    return !json_object_size(json_object_get(sel, "matchLabels")) &&
           !json_array_size(json_object_get(sel, "matchExpressions"));
}

static int sync_deployment(dpass *p)
{
    const json_t *sel = ctrl_obj_get(p->d, "spec.selector");
    if (selector_empty(sel)) {
        ctrl_recorder_event(ctrl_ctx_recorder(p->ctx), p->d, "Warning", "SelectorRequired",
                            "This deployment is selecting all pods. A non-empty selector is "
                            "required.");
        if (ctrl_obj_get_int(p->d, "status.observedGeneration", 0) < ctrl_obj_generation(p->d)) {
            json_t *st = d_status_copy(p);
            json_object_set_new(st, "observedGeneration", json_integer(ctrl_obj_generation(p->d)));
            int rc = write_status(p, st);
            json_decref(st);
            return rc;
        }
        return 0;
    }
    if (kc__selector_matches(sel, NULL) < 0) {
        ctrl_log_error(p->ctx, "malformed spec.selector");
        return 0;
    }
    json_t *owned = NULL, *orphans = NULL, *cands = json_array();
    int rc = ctrl_informer_by_index(p->s->rss, KC_CONTROLLER_INDEX, ctrl_obj_uid(p->d), &owned);
    if (rc == 0)
        rc = ctrl_informer_by_index(p->s->rss, KC_ORPHAN_INDEX, ctrl_obj_namespace(p->d), &orphans);
    if (rc == 0 && cands) {
        json_array_extend(cands, owned);
        json_array_extend(cands, orphans);
        kc_claim cl = {
            .writer = p->c,
            .reader = ctrl_ctx_api_reader(p->ctx),
            .owner = p->d,
            .selector = sel,
            .api_version = "apps/v1",
            .kind = "ReplicaSet",
        };
        rc = kc__claim(&cl, cands, &p->set.all);
    } else if (!cands) {
        rc = CTRL_ERR_NOMEM;
    }
    json_decref(owned);
    json_decref(orphans);
    json_decref(cands);
    if (rc < 0)
        return rc;

    if (ctrl_obj_deleting(p->d)) {
        if ((rc = get_new_rs(p, false)) < 0)
            return rc;
        return sync_status(p);
    }
    if ((rc = check_paused(p)) < 0)
        return rc;
    if (ctrl_obj_get_bool(p->d, "spec.paused", false))
        return sync_scale(p);
    if ((rc = get_new_rs(p, false)) < 0)
        return rc;
    if (scaling_event(p))
        return sync_scale(p);
    return kc__is_rolling(p->d) ? rollout_rolling(p) : rollout_recreate(p);
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    dp_ctl *s = user;
    dpass p = {.s = s, .ctx = ctx, .c = ctrl_ctx_client(ctx)};
    int rc = ctrl_informer_get(s->deps, req->ns, req->name, &p.d);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done();
    if (rc < 0)
        return ctrl_err(rc);
    /* Owner references and Events need the kind. */
    if (!ctrl_obj_kind(p.d)) {
        json_object_set_new(p.d, "apiVersion", json_string("apps/v1"));
        json_object_set_new(p.d, "kind", json_string("Deployment"));
    }
    p.wall = ctrl_clock_wall_ns(ctrl_ctx_clock(ctx));
    kc__rfc3339(p.wall, p.now, sizeof p.now);
    rc = sync_deployment(&p);
    json_decref(p.set.all);
    json_decref(p.d);
    if (ctrl_err_is_conflict(rc))
        return ctrl_requeue();
    if (ctrl_err_is_not_found(rc))
        return ctrl_done();
    if (rc < 0)
        return ctrl_err(rc);
    if (p.requeue_ns < 0)
        return ctrl_requeue();
    return p.requeue_ns > 0 ? ctrl_requeue_after(p.requeue_ns) : ctrl_done();
}

/* ---- events to requests ---- */

static bool is_ref(const json_t *ref, const char *kind)
{
    const char *k = json_string_value(json_object_get(ref, "kind"));
    const char *av = json_string_value(json_object_get(ref, "apiVersion"));
    return k && av && !strcmp(k, kind) && !strncmp(av, "apps/", 5);
}

/* A ReplicaSet's Deployment; for an orphan, every Deployment in its
 * namespace whose selector matches it. */
static json_t *rs_to_deployments(const json_t *rs, void *user)
{
    dp_ctl *s = user;
    const char *ns = ctrl_obj_namespace(rs);
    const json_t *ref = ctrl_get_controller_of(rs);
    if (ref)
        return is_ref(ref, "Deployment") ? json_pack("[{s:s, s:O}]", "namespace", ns, "name",
                                                     json_object_get(ref, "name"))
                                         : NULL;
    json_t *deps = NULL, *out = json_array();
    if (!out || !ns || ctrl_informer_list(s->deps, ns, NULL, &deps) < 0) {
        json_decref(out);
        return NULL;
    }
    size_t i;
    json_t *d;
    json_array_foreach(deps, i, d)
    {
        const json_t *sel = ctrl_obj_get(d, "spec.selector");
        if (!selector_empty(sel) &&
            kc__selector_matches(sel, ctrl_obj_get(rs, "metadata.labels")) == 1)
            json_array_append_new(
                out, json_pack("{s:s, s:s}", "namespace", ns, "name", ctrl_obj_name(d)));
    }
    json_decref(deps);
    return out;
}

/* A deleted pod's Deployment, when that one is Recreate (it waits for the
 * old pods to go). */
static json_t *pod_to_deployment(const json_t *pod, void *user)
{
    dp_ctl *s = user;
    const json_t *ref = ctrl_get_controller_of(pod);
    const char *ns = ctrl_obj_namespace(pod);
    json_t *rs = NULL, *d = NULL, *out = NULL;
    if (!ns || !is_ref(ref, "ReplicaSet") ||
        ctrl_informer_get(s->rss, ns, json_string_value(json_object_get(ref, "name")), &rs) < 0)
        return NULL;
    const json_t *dref = ctrl_get_controller_of(rs);
    const char *dname = json_string_value(json_object_get(dref, "name"));
    if (is_ref(dref, "Deployment") && dname && ctrl_informer_get(s->deps, ns, dname, &d) == 0 &&
        !kc__is_rolling(d))
        out = json_pack("[{s:s, s:s}]", "namespace", ns, "name", dname);
    json_decref(d);
    json_decref(rs);
    return out;
}

static bool no(const json_t *obj, void *user)
{
    (void)obj;
    (void)user;
    return false;
}

static bool no2(const json_t *a, const json_t *b, void *user)
{
    (void)a;
    (void)b;
    (void)user;
    return false;
}

/* ---- setup ---- */

int kc__deployment_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    ctrl_cache *cache = ctrl_manager_cache(mgr);
    dp_ctl *s = calloc(1, sizeof *s);
    if (!s)
        return KC_ERR_NOMEM;
    s->cfg = kc_config_ref(cfg);
    int rc;
    if ((rc = ctrl_cache_informer(cache, "apps/v1", "Deployment", NULL, &s->deps, NULL)) < 0 ||
        (rc = ctrl_cache_informer(cache, "apps/v1", "ReplicaSet", NULL, &s->rss, NULL)) < 0 ||
        (rc = ctrl_cache_informer(cache, "v1", "Pod", NULL, &s->pods, NULL)) < 0 ||
        (rc = kc__add_claim_indexes(s->rss)) < 0 || (rc = kc__add_claim_indexes(s->pods)) < 0) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "deployment: %s", ctrl_strerror(rc));
        dp_ctl_free(s);
        return rc;
    }
    char name[64];
    ctrl_builder *b = ctrl_builder_for(mgr, "apps/v1", "Deployment");
    ctrl_builder_named(b, kc__controller_name("deployment", name, sizeof name));
    ctrl_builder_watches(b, "apps/v1", "ReplicaSet", ctrl_handler_from_map(rs_to_deployments, s),
                         ctrl_pred_resource_version_changed());
    ctrl_builder_watches(
        b, "v1", "Pod", ctrl_handler_from_map(pod_to_deployment, s),
        ctrl_pred_funcs(&(ctrl_predicate_funcs){.create = no, .update = no2, .remove = NULL}));
    ctrl_builder_with_user_free(b, dp_ctl_free);
    rc = ctrl_builder_complete(b, reconcile, s);
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, "deployment: %s", ctrl_strerror(rc));
    return rc;
}
