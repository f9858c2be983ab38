/*
 * job.c - the Job controller (kube-controller-manager's job controller,
 * with the ttl-after-finished controller folded in): pods from the
 * template for parallelism and completions, NonIndexed and Indexed
 * completion, backoffLimit, activeDeadlineSeconds, successPolicy, suspend,
 * ttlSecondsAfterFinished, and the status and conditions as upstream
 * writes them (docs/cluster.md, "Job").
 *
 * DESIGN
 * - One libctrl controller "kc-job": For(batch/v1 Job), Owns(v1 Pod).
 *   Reads come from the cache: the Job, and its pods through the Pod
 *   informer's index on the controller owner's uid (workload.h).
 * - Expectations (expectations.h) per Job, raised before pods are created
 *   or deleted and counted down by the Pod informer's events: while any are
 *   pending the Job's pods are not managed (its status still is).
 * - Counting, as upstream since 1.26: pods carry the finalizer
 *   batch.kubernetes.io/job-tracking (jobtrack.h); a finished pod is listed
 *   in status.uncountedTerminatedPods (first status write), loses the
 *   finalizer, then moves to succeeded/failed (second write). Removals the
 *   cache does not show yet are remembered, so no pod is counted twice.
 *   Indexed Jobs count completed indexes (status.completedIndexes and the
 *   pods that succeeded).
 * - Finishing, as upstream since 1.31: the interim condition first
 *   (SuccessCriteriaMet or FailureTarget), active pods deleted, then the
 *   terminal one (Complete or Failed) once no pod is active or
 *   terminating and every finished pod is counted. Complete sets
 *   completionTime.
 * - Time: wall time of the manager's clock for every timestamp; the
 *   deadline and the TTL are requeue_after, never sleeps.
 * - Threads: reconciles on the controller's workers (never two for one
 *   Job); no state of its own beyond the kc_wl (workload.h) and its
 *   kc_jobtrack (wl->extra).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_int.h"
#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "jobtrack.h"
#include "podutil.h"
#include "workload.h"

#define INDEX_KEY "batch.kubernetes.io/job-completion-index"
#define INDEX_ENV "JOB_COMPLETION_INDEX"
#define MAX_BURST 500
#define MAX_INDEXES 100000 /* the API's limit on Indexed completions */
#define EXPECT_RECHECK (1 * CTRL_SECOND)
#define BACKOFF_BASE (10 * CTRL_SECOND) /* DefaultJobPodFailureBackOff */
#define BACKOFF_MAX (360 * CTRL_SECOND) /* MaxJobPodFailureBackOff */

/* ---- completion indexes ---- */

static long pod_index(const json_t *pod)
{
    const char *s = ctrl_obj_annotation(pod, INDEX_KEY);
    if (!s)
        s = ctrl_obj_label(pod, INDEX_KEY);
    if (!s || !*s)
        return -1;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    return *end || v < 0 ? -1 : v;
}

/* Mark the indexes of "1,3-5,7" below n in set; false if malformed. */
static bool parse_intervals(const char *s, long n, bool *set)
{
    const char *p = s;
    while (p && *p) {
        char *end = NULL;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0)
            return false;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1 || b < a)
                return false;
            p = end;
        }
        for (long i = a; i <= b && i < n; i++)
            set[i] = true;
        if (*p == ',')
            p++;
        else if (*p)
            return false;
    }
    return true;
}

/* The set as "1,3-5,7" (a new string; "" when empty). */
static char *format_intervals(const bool *set, long n)
{
    size_t cap = 64, len = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    out[0] = 0;
    for (long i = 0; i < n; i++) {
        if (!set[i])
            continue;
        long j = i;
        while (j + 1 < n && set[j + 1])
            j++;
        char part[48];
        int k = j > i ? snprintf(part, sizeof part, "%s%ld-%ld", len ? "," : "", i, j)
                      : snprintf(part, sizeof part, "%s%ld", len ? "," : "", i);
        if (len + (size_t)k + 1 > cap) {
            cap = (len + (size_t)k + 1) * 2;
            char *grown = realloc(out, cap);
            if (!grown) {
                free(out);
                return NULL;
            }
            out = grown;
        }
        memcpy(out + len, part, (size_t)k + 1);
        len += (size_t)k;
        i = j;
    }
    return out;
}

/* ---- conditions (batch/v1 JobCondition: with lastProbeTime) ---- */

static json_t *conditions_of(json_t *job)
{
    json_t *st = json_object_get(job, "status");
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(job, "status", st);
    }
    json_t *c = json_object_get(st, "conditions");
    if (!json_is_array(c)) {
        c = json_array();
        json_object_set_new(st, "conditions", c);
    }
    return c;
}

static bool cond_true(const json_t *job, const char *type)
{
    const char *s = json_string_value(json_object_get(kc__condition(job, type), "status"));
    return s && !strcmp(s, "True");
}

/*
 * Make the condition of type say status/reason/message (ensureJobCondition-
 * Status): an existing entry changes its times only when the status
 * changes; a missing one is added, except a False one (nothing to say).
 * True when job changed.
 */
static bool cond_set(json_t *job, const char *type, const char *status, const char *reason,
                     const char *message, const char *now)
{
    json_t *c = kc__condition(job, type);
    if (!c) {
        if (!strcmp(status, "False"))
            return false;
        return json_array_append_new(conditions_of(job),
                                     json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", type,
                                               "status", status, "lastProbeTime", now,
                                               "lastTransitionTime", now, "reason", reason,
                                               "message", message)) == 0;
    }
    const char *os = json_string_value(json_object_get(c, "status"));
    const char *orr = json_string_value(json_object_get(c, "reason"));
    const char *om = json_string_value(json_object_get(c, "message"));
    if (os && !strcmp(os, status) && orr && !strcmp(orr, reason) && om && !strcmp(om, message))
        return false;
    if (!os || strcmp(os, status)) {
        json_object_set_new(c, "lastTransitionTime", json_string(now));
        json_object_set_new(c, "status", json_string(status));
    }
    json_object_set_new(c, "lastProbeTime", json_string(now));
    json_object_set_new(c, "reason", json_string(reason));
    json_object_set_new(c, "message", json_string(message));
    return true;
}

/* ---- one sync ---- */

typedef struct finish {
    const char *type; /* SuccessCriteriaMet, FailureTarget, Complete or Failed; NULL: none */
    char reason[64];
    char message[256];
} finish;

typedef struct sync {
    ctrl_ctx *ctx;
    kc_wl *wl;
    const json_t *job; /* as read */
    json_t *upd;       /* the status to write */
    char key[512];
    char now[32];
    int64_t wall;
    bool indexed;
    long completions; /* -1: unset */
    long parallelism;
    const json_t *pods; /* every pod of the job (borrowed) */
    json_t *active;     /* active pods (sorted by name) */
    int64_t backoff_ns; /* new pods wait this long (pod failure backoff) */
    long terminating, ready, failed, succeeded;
    bool *done_ix; /* Indexed: succeeded indexes (completions entries) */
    kc_jobtrack *tr;
    json_t *usucc, *ufail; /* status.uncountedTerminatedPods, with the newly finished */
    bool new_uncounted;    /* pods were added to them in this sync */
    int64_t base_succeeded, base_failed; /* status.succeeded / failed as read */
} sync;

static bool suspended(const json_t *job)
{
    return ctrl_obj_get_bool(job, "spec.suspend", false);
}

/* Sum of container restarts of active pods against the backoff limit, for
 * restartPolicy OnFailure (pastBackoffLimitOnFailure). */
static bool past_backoff_on_failure(const sync *s, long limit)
{
    const char *rp = ctrl_obj_get_string(s->job, "spec.template.spec.restartPolicy");
    if (!rp || strcmp(rp, "OnFailure"))
        return false;
    long restarts = 0;
    size_t i, j;
    json_t *pod, *cs;
    json_array_foreach(s->active, i, pod)
    {
        const char *lists[] = {"initContainerStatuses", "containerStatuses"};
        for (int l = 0; l < 2; l++)
            json_array_foreach(json_object_get(json_object_get(pod, "status"), lists[l]), j, cs)
                restarts += (long)json_integer_value(json_object_get(cs, "restartCount"));
    }
    return limit == 0 ? restarts > 0 : restarts >= limit;
}

/* successPolicy: the first rule that the succeeded indexes meet. */
static bool success_policy_met(const sync *s, char *msg, size_t len)
{
    const json_t *rules = ctrl_obj_get(s->job, "spec.successPolicy.rules");
    if (!s->indexed || !json_is_array(rules) || s->succeeded == 0)
        return false;
    size_t r;
    json_t *rule;
    json_array_foreach(rules, r, rule)
    {
        const char *ixs = json_string_value(json_object_get(rule, "succeededIndexes"));
        const json_t *cnt = json_object_get(rule, "succeededCount");
        bool met = false;
        if (ixs) {
            bool *req = calloc((size_t)s->completions + 1, sizeof *req);
            if (!req)
                return false;
            long want = 0, have = 0;
            if (parse_intervals(ixs, s->completions, req))
                for (long i = 0; i < s->completions; i++)
                    if (req[i]) {
                        want++;
                        have += s->done_ix[i];
                    }
            free(req);
            met =
                want > 0 && (json_is_integer(cnt) ? have >= json_integer_value(cnt) : have == want);
        } else if (json_is_integer(cnt)) {
            met = s->succeeded >= json_integer_value(cnt);
        }
        if (met) {
            snprintf(msg, len, "Matched rules at index %zu", r);
            return true;
        }
    }
    return false;
}

/* A new pod for the job (index < 0: NonIndexed). */
static json_t *pod_for(const sync *s, long index)
{
    const json_t *job = s->job;
    const char *name = ctrl_obj_name(job);
    const json_t *tmeta = ctrl_obj_get(job, "spec.template.metadata");
    const json_t *tspec = ctrl_obj_get(job, "spec.template.spec");
    json_t *meta = json_is_object(tmeta) ? json_deep_copy(tmeta) : json_object();
    json_t *pod =
        json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "v1", "kind", "Pod", "metadata", meta,
                  "spec", json_is_object(tspec) ? json_deep_copy(tspec) : json_object());
    if (!pod)
        return NULL;
    char gen[300];
    if (index >= 0)
        snprintf(gen, sizeof gen, "%s-%ld-", name, index);
    else
        snprintf(gen, sizeof gen, "%s-", name);
    json_object_del(meta, "name");
    json_object_set_new(meta, "generateName", json_string(gen));
    json_object_set_new(meta, "namespace", json_string(ctrl_obj_namespace(job)));
    json_t *jcopy = json_deep_copy(job);
    json_object_set_new(jcopy, "apiVersion", json_string("batch/v1"));
    json_object_set_new(jcopy, "kind", json_string("Job"));
    int rc = ctrl_set_controller_reference(jcopy, pod, NULL);
    json_decref(jcopy);
    if (rc < 0 || !ctrl_add_finalizer(pod, KC__JOB_FINALIZER)) {
        json_decref(pod);
        return NULL;
    }
    if (index >= 0) {
        char ix[24];
        snprintf(ix, sizeof ix, "%ld", index);
        ctrl_obj_set_annotation(pod, INDEX_KEY, ix);
        ctrl_obj_set_label(pod, INDEX_KEY, ix);
        json_t *spec = json_object_get(pod, "spec");
        const char *host = json_string_value(json_object_get(spec, "hostname"));
        if (!host || !*host) {
            char h[300];
            snprintf(h, sizeof h, "%s-%ld", name, index);
            json_object_set_new(spec, "hostname", json_string(h));
        }
        const char *lists[] = {"initContainers", "containers"};
        for (int l = 0; l < 2; l++) {
            size_t i, j;
            json_t *ctr, *e;
            json_array_foreach(json_object_get(spec, lists[l]), i, ctr)
            {
                json_t *env = json_object_get(ctr, "env");
                if (!json_is_array(env)) {
                    env = json_array();
                    json_object_set_new(ctr, "env", env);
                }
                bool has = false;
                json_array_foreach(env, j, e)
                {
                    const char *n = json_string_value(json_object_get(e, "name"));
                    has |= n && !strcmp(n, INDEX_ENV);
                }
                if (!has)
                    json_array_append_new(env, json_pack("{s:s, s:{s:{s:s, s:s}}}", "name",
                                                         INDEX_ENV, "valueFrom", "fieldRef",
                                                         "apiVersion", "v1", "fieldPath",
                                                         "metadata.annotations['" INDEX_KEY "']"));
            }
        }
    }
    return pod;
}

static int create_pods(sync *s, const long *indexes, long n)
{
    int rc = 0;
    for (long i = 0; i < n; i++) {
        json_t *pod = pod_for(s, indexes ? indexes[i] : -1);
        json_t *made = NULL;
        int r = pod ? kc__wl_create(s->ctx, s->wl, s->key, pod, &made) : CTRL_ERR_NOMEM;
        if (!pod)
            kc__expect_observed_add(s->wl->expect, s->key);
        if (r == 0)
            kc__wl_event(s->ctx, s->job, "Normal", "SuccessfulCreate", "Created pod: %s",
                         ctrl_obj_name(made));
        else if (rc == 0)
            rc = r;
        json_decref(made);
        json_decref(pod);
    }
    return rc;
}

/*
 * Delete pods. The controller's own deletions (excess pods, suspend, a
 * success) are not failures: the tracking finalizer goes first, so they
 * are never counted (keep_finalizer false). Pods deleted because the Job
 * failed keep it, and count as failed once they stop.
 */
static int delete_pods(sync *s, const json_t *pods, bool keep_finalizer, long *deleted,
                       long *deleted_ready)
{
    int rc = 0;
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        int r = keep_finalizer ? 0 : kc__jobtrack_remove(s->ctx, s->tr, s->key, pod);
        if (r < 0)
            kc__expect_observed_del(s->wl->expect, s->key); /* not deleted */
        else
            r = kc__wl_delete(s->ctx, s->wl, s->key, pod);
        if (r == 0) {
            (*deleted)++;
            *deleted_ready += kc__pod_ready(pod);
            kc__wl_event(s->ctx, s->job, "Normal", "SuccessfulDelete", "Deleted pod: %s",
                         ctrl_obj_name(pod));
        } else if (rc == 0) {
            rc = r;
        }
    }
    return rc;
}

/* When a pod stopped: its containers' last finishedAt, else when its
 * Ready condition went False, else its creation; -1 if none is known. */
static int64_t finish_time(const json_t *pod)
{
    int64_t t = -1;
    const char *lists[] = {"initContainerStatuses", "containerStatuses"};
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *cs;
        json_array_foreach(json_object_get(json_object_get(pod, "status"), lists[l]), i, cs)
        {
            const char *f = ctrl_obj_get_string(cs, "state.terminated.finishedAt");
            int64_t v = f ? kc__parse_time(f) : -1;
            if (v > t)
                t = v;
        }
    }
    if (t >= 0)
        return t;
    const json_t *ready = kc__condition(pod, "Ready");
    const char *rs = json_string_value(json_object_get(ready, "status"));
    if (rs && strcmp(rs, "True"))
        t = kc__parse_time(json_string_value(json_object_get(ready, "lastTransitionTime")));
    return t >= 0 ? t : kc__parse_time(ctrl_obj_meta(pod, "creationTimestamp"));
}

/*
 * Upstream's pod failure backoff: after n pod failures since the last
 * success, new pods wait 10 s * 2^(n-1) (at most 6 minutes) from the last
 * failure. The time left, or 0.
 */
static int64_t backoff_left(const sync *s)
{
    int64_t last_ok = -1, last_fail = -1;
    size_t i;
    json_t *pod;
    json_array_foreach(s->pods, i, pod)
    {
        if (!strcmp(kc__pod_phase(pod), "Succeeded")) {
            int64_t t = finish_time(pod);
            if (t > last_ok)
                last_ok = t;
        }
    }
    long failures = 0;
    json_array_foreach(s->pods, i, pod)
    {
        if (strcmp(kc__pod_phase(pod), "Failed"))
            continue;
        int64_t t = finish_time(pod);
        if (t < 0 || t <= last_ok)
            continue;
        failures++;
        if (t > last_fail)
            last_fail = t;
    }
    if (failures == 0)
        return 0;
    int64_t delay = BACKOFF_BASE;
    for (long k = 1; k < failures && delay < BACKOFF_MAX; k++)
        delay *= 2;
    if (delay > BACKOFF_MAX)
        delay = BACKOFF_MAX;
    int64_t left = last_fail + delay - s->wall;
    return left > 0 ? left : 0;
}

/* Bring the active pods to what the spec wants (manageJob). */
static int manage(sync *s)
{
    long active = (long)json_array_size(s->active);
    json_t *doomed = json_array();
    long *create_ix = NULL, ncreate = 0;
    int rc = 0;
    if (!doomed)
        return CTRL_ERR_NOMEM;
    if (suspended(s->job)) {
        json_array_extend(doomed, s->active);
    } else if (!s->indexed) {
        long want;
        if (s->completions < 0)
            want = s->succeeded > 0 ? active : s->parallelism;
        else
            want = s->completions - s->succeeded;
        if (want > s->parallelism)
            want = s->parallelism;
        if (want < 0)
            want = 0;
        if (active > want) {
            json_t *sorted = json_copy(s->active);
            kc__wl_sort_for_deletion(sorted);
            for (long i = 0; i < active - want; i++)
                json_array_append(doomed, json_array_get(sorted, (size_t)i));
            json_decref(sorted);
        }
        ncreate = want > active ? want - active : 0;
    } else {
        long c = s->completions;
        bool *taken = calloc((size_t)c + 1, sizeof *taken);
        create_ix = calloc((size_t)c + 1, sizeof *create_ix);
        if (!taken || !create_ix) {
            free(taken);
            free(create_ix);
            json_decref(doomed);
            return CTRL_ERR_NOMEM;
        }
        /* Keep one active pod per pending index; the rest go. */
        json_t *kept = json_array();
        size_t i;
        json_t *pod;
        json_array_foreach(s->active, i, pod)
        {
            long ix = pod_index(pod);
            if (ix < 0 || ix >= c || s->done_ix[ix] || taken[ix]) {
                json_array_append(doomed, pod);
            } else {
                taken[ix] = true;
                json_array_append(kept, pod);
            }
        }
        long want = c - s->succeeded;
        if (want > s->parallelism)
            want = s->parallelism;
        long nkept = (long)json_array_size(kept);
        /* Too many: the highest indexes go first. */
        for (long k = nkept - 1; k >= 0 && nkept > want; k--, nkept--)
            json_array_append(doomed, json_array_get(kept, (size_t)k));
        for (long ix = 0; ix < c && nkept + ncreate < want; ix++)
            if (!taken[ix] && !s->done_ix[ix])
                create_ix[ncreate++] = ix;
        json_decref(kept);
        free(taken);
    }
    if (ncreate > MAX_BURST)
        ncreate = MAX_BURST;
    if (ncreate > 0 && (s->backoff_ns = backoff_left(s)) > 0)
        ncreate = 0; /* a later sync creates them */
    long ndel = (long)json_array_size(doomed);
    if (ncreate || ndel)
        kc__expect_set(s->wl->expect, s->key, (int)ncreate, (int)ndel, ctrl_ctx_now(s->ctx));
    long deleted = 0, deleted_ready = 0;
    if (ndel)
        rc = delete_pods(s, doomed, false, &deleted, &deleted_ready);
    if (ncreate) {
        int r = create_pods(s, s->indexed ? create_ix : NULL, ncreate);
        if (rc == 0)
            rc = r;
    }
    /* Status counts what the cache showed; the writes' events bring the
     * next sync. Pods just deleted are no longer active. */
    s->ready -= deleted_ready;
    s->terminating += deleted;
    json_t *still = json_array();
    size_t i;
    json_t *pod;
    json_array_foreach(s->active, i, pod)
    {
        bool gone = false;
        size_t j;
        json_t *d;
        json_array_foreach(doomed, j, d) gone |= d == pod;
        if (!gone)
            json_array_append(still, pod);
    }
    json_decref(s->active);
    s->active = still;
    free(create_ix);
    json_decref(doomed);
    return rc;
}

/* Delete a finished Job once its TTL has passed (the ttl-after-finished
 * controller); requeue until then. */
static ctrl_result ttl_after_finished(ctrl_ctx *ctx, const json_t *job)
{
    const json_t *ttl = ctrl_obj_get(job, "spec.ttlSecondsAfterFinished");
    if (!json_is_integer(ttl) || ctrl_obj_deleting(job))
        return ctrl_done();
    const json_t *c = kc__condition(job, cond_true(job, "Complete") ? "Complete" : "Failed");
    int64_t at = kc__parse_time(json_string_value(json_object_get(c, "lastTransitionTime")));
    if (at < 0)
        return ctrl_done();
    int64_t expire = at + json_integer_value(ttl) * CTRL_SECOND, now = kc__wl_wall(ctx);
    if (now < expire)
        return ctrl_requeue_after(expire - now);
    ctrl_delete_options o = {.propagation = CTRL_PROPAGATION_FOREGROUND,
                             .precondition_uid = ctrl_obj_uid(job)};
    int rc = ctrl_client_delete(ctrl_ctx_client(ctx), "batch/v1", "Job", ctrl_obj_namespace(job),
                                ctrl_obj_name(job), &o, NULL, NULL);
    if (rc < 0 && !ctrl_err_is_not_found(rc) && !ctrl_err_is_conflict(rc))
        return ctrl_err(rc);
    ctrl_log_info(ctx, "deleted the finished job: its TTL passed");
    return ctrl_done();
}

static bool finished(const json_t *job)
{
    return cond_true(job, "Complete") || cond_true(job, "Failed");
}

static bool in_list(const json_t *list, const char *uid)
{
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) if (uid && json_is_string(v) &&
                                       !strcmp(json_string_value(v), uid)) return true;
    return false;
}

static json_t *uncounted_list(const json_t *job, const char *which)
{
    char path[64];
    snprintf(path, sizeof path, "status.uncountedTerminatedPods.%s", which);
    const json_t *l = ctrl_obj_get(job, path);
    return json_is_array(l) ? json_deep_copy(l) : json_array();
}

/*
 * Count the pods: active, terminating, ready; finished pods that still
 * carry the tracking finalizer (and whose removal we have not made) join
 * the uncounted lists. succeeded and failed are the status's counters plus
 * the uncounted (Indexed: the completed indexes).
 */
static int classify(sync *s, const json_t *pods)
{
    s->active = json_array();
    s->usucc = uncounted_list(s->job, "succeeded");
    s->ufail = uncounted_list(s->job, "failed");
    if (!s->active || !s->usucc || !s->ufail)
        return CTRL_ERR_NOMEM;
    if (s->indexed) {
        s->done_ix = calloc((size_t)s->completions + 1, sizeof *s->done_ix);
        if (!s->done_ix)
            return CTRL_ERR_NOMEM;
        const char *prev = ctrl_obj_get_string(s->job, "status.completedIndexes");
        if (prev)
            parse_intervals(prev, s->completions, s->done_ix);
    }
    kc__jobtrack_settle(s->tr, s->key, pods);
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        const char *phase = kc__pod_phase(pod), *uid = ctrl_obj_uid(pod);
        bool tracked = uid && kc__jobtrack_has(pod) && !kc__jobtrack_expected(s->tr, s->key, uid) &&
                       !in_list(s->usucc, uid) && !in_list(s->ufail, uid);
        if (!strcmp(phase, "Succeeded")) {
            long ix = pod_index(pod);
            if (s->indexed && ix >= 0 && ix < s->completions)
                s->done_ix[ix] = true;
            if (tracked) {
                json_array_append_new(s->usucc, json_string(uid));
                s->new_uncounted = true;
            }
        } else if (!strcmp(phase, "Failed")) {
            if (tracked) {
                json_array_append_new(s->ufail, json_string(uid));
                s->new_uncounted = true;
            }
        } else if (ctrl_obj_deleting(pod)) {
            s->terminating++;
            /* Deleted before it finished: a failure (upstream's isPodFailed). */
            if (tracked) {
                json_array_append_new(s->ufail, json_string(uid));
                s->new_uncounted = true;
            }
        } else {
            json_array_append(s->active, pod);
            s->ready += kc__pod_ready(pod);
        }
    }
    s->base_succeeded = ctrl_obj_get_int(s->job, "status.succeeded", 0);
    s->base_failed = ctrl_obj_get_int(s->job, "status.failed", 0);
    s->succeeded = s->base_succeeded + (long)json_array_size(s->usucc);
    s->failed = s->base_failed + (long)json_array_size(s->ufail);
    if (s->indexed) {
        s->succeeded = 0;
        for (long ix = 0; ix < s->completions; ix++)
            s->succeeded += s->done_ix[ix];
    }
    return 0;
}

static const json_t *pod_by_uid(const json_t *pods, const char *uid)
{
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p) if (ctrl_obj_uid(p) && !strcmp(ctrl_obj_uid(p), uid)) return p;
    return NULL;
}

/*
 * Free the uncounted pods of their finalizer; those freed (or gone) move
 * from the list to the counter. Returns how many moved; *rc the first error.
 */
static long count_uncounted(sync *s, json_t *list, int *rc)
{
    long moved = 0;
    json_t *left = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        const char *uid = json_string_value(v);
        const json_t *pod = uid ? pod_by_uid(s->pods, uid) : NULL;
        int r = pod ? kc__jobtrack_remove(s->ctx, s->tr, s->key, pod) : 0;
        if (r == 0) {
            moved++;
        } else {
            json_array_append(left, v);
            if (*rc == 0)
                *rc = r;
        }
    }
    json_array_clear(list);
    json_array_extend(list, left);
    json_decref(left);
    return moved;
}

static void set_uncounted(sync *s)
{
    json_t *u = json_object();
    if (json_array_size(s->usucc))
        json_object_set(u, "succeeded", s->usucc);
    if (json_array_size(s->ufail))
        json_object_set(u, "failed", s->ufail);
    ctrl_obj_set(s->upd, "status.uncountedTerminatedPods", u);
}

/* Remove the finalizer from every pod of the Job (it is finished or going). */
static int release_all(sync *s, const json_t *pods)
{
    int rc = 0;
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        int r = kc__jobtrack_remove(s->ctx, s->tr, s->key, p);
        if (r < 0 && rc == 0)
            rc = r;
    }
    return rc;
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    kc_wl *wl = user;
    sync s = {.ctx = ctx, .wl = wl};
    kc__wl_key(req->ns, req->name, s.key, sizeof s.key);
    json_t *job = NULL, *pods = NULL, *written = NULL;
    ctrl_result res = ctrl_done();
    int rc =
        ctrl_client_get(ctrl_ctx_client(ctx), "batch/v1", "Job", req->ns, req->name, &job, NULL);
    if (ctrl_err_is_not_found(rc)) {
        kc__expect_delete(wl->expect, s.key);
        kc__jobtrack_forget(wl->extra, s.key);
        return ctrl_done();
    }
    if (rc < 0)
        return ctrl_err(rc);
    s.job = job;
    s.tr = wl->extra;
    if (finished(job) || ctrl_obj_deleting(job)) {
        /* Nothing more to count: no pod of it keeps the finalizer. */
        if ((rc = kc__wl_pods(ctx, ctrl_obj_uid(job), &pods)) < 0 ||
            (rc = release_all(&s, pods)) < 0)
            res = ctrl_err(rc);
        else if (finished(job))
            res = ttl_after_finished(ctx, job);
        goto out;
    }
    const char *mode = ctrl_obj_get_string(job, "spec.completionMode");
    if (mode && strcmp(mode, "NonIndexed") && strcmp(mode, "Indexed")) {
        kc__wl_event(ctx, job, "Warning", "UnknownCompletionMode",
                     "Skipped Job sync because completion mode is unknown");
        goto out;
    }
    s.indexed = mode && !strcmp(mode, "Indexed");
    s.completions = ctrl_obj_get_int(job, "spec.completions", -1);
    s.parallelism = ctrl_obj_get_int(job, "spec.parallelism", 1);
    if (s.indexed && (s.completions < 0 || s.completions > MAX_INDEXES)) {
        res = ctrl_terminal(CTRL_ERR_ARG); /* the API server refuses such Jobs */
        goto out;
    }
    s.wall = kc__wl_wall(ctx);
    kc__rfc3339(s.wall, s.now, sizeof s.now);
    s.upd = json_deep_copy(job);
    if (!s.upd) {
        res = ctrl_err(CTRL_ERR_NOMEM);
        goto out;
    }
    /* Expectations before the pods: a pod that arrives in between only
     * defers the work to the next sync. */
    bool satisfied = kc__expect_satisfied(wl->expect, s.key, ctrl_ctx_now(ctx));
    if ((rc = kc__wl_pods(ctx, ctrl_obj_uid(job), &pods)) < 0 || (rc = classify(&s, pods)) < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    s.pods = pods;
    bool susp = suspended(job);
    if (!ctrl_obj_get(job, "status.startTime") && !susp)
        ctrl_obj_set(s.upd, "status.startTime", json_string(s.now));

    /* What finishes the Job, if anything. */
    finish fin = {0};
    int64_t recheck = 0;
    const json_t *scm = kc__condition(job, "SuccessCriteriaMet");
    const json_t *ft = kc__condition(job, "FailureTarget");
    long backoff = ctrl_obj_get_int(job, "spec.backoffLimit", 6);
    if (scm && cond_true(job, "SuccessCriteriaMet")) {
        fin.type = "Complete";
        snprintf(fin.reason, sizeof fin.reason, "%s",
                 json_string_value(json_object_get(scm, "reason")));
        snprintf(fin.message, sizeof fin.message, "%s",
                 json_string_value(json_object_get(scm, "message")));
    } else if (ft && cond_true(job, "FailureTarget")) {
        fin.type = "Failed";
        snprintf(fin.reason, sizeof fin.reason, "%s",
                 json_string_value(json_object_get(ft, "reason")));
        snprintf(fin.message, sizeof fin.message, "%s",
                 json_string_value(json_object_get(ft, "message")));
    } else if (s.failed > backoff || past_backoff_on_failure(&s, backoff)) {
        fin = (finish){"FailureTarget", "BackoffLimitExceeded",
                       "Job has reached the specified backoff limit"};
    } else {
        const json_t *ads = ctrl_obj_get(job, "spec.activeDeadlineSeconds");
        int64_t start = kc__parse_time(ctrl_obj_get_string(s.upd, "status.startTime"));
        if (json_is_integer(ads) && !susp && start >= 0) {
            int64_t left = start + json_integer_value(ads) * CTRL_SECOND - s.wall;
            if (left <= 0)
                fin = (finish){"FailureTarget", "DeadlineExceeded",
                               "Job was active longer than specified deadline"};
            else
                recheck = left;
        }
    }
    if (!fin.type && success_policy_met(&s, fin.message, sizeof fin.message)) {
        fin.type = "SuccessCriteriaMet";
        snprintf(fin.reason, sizeof fin.reason, "SuccessPolicy");
    }

    int act_rc = 0;
    bool suspend_changed = false;
    if (fin.type) {
        long n = (long)json_array_size(s.active), deleted = 0, deleted_ready = 0;
        if (n)
            kc__expect_set(wl->expect, s.key, 0, (int)n, ctrl_ctx_now(ctx));
        bool failing = !strcmp(fin.type, "FailureTarget") || !strcmp(fin.type, "Failed");
        act_rc = delete_pods(&s, s.active, failing, &deleted, &deleted_ready);
        s.ready -= deleted_ready;
        s.terminating += deleted;
        bool settled = deleted == n && satisfied;
        json_array_clear(s.active);
        if (!settled) {
            fin.type = NULL; /* pods may still be on their way: not yet */
        } else if (!strcmp(fin.type, "FailureTarget") || !strcmp(fin.type, "SuccessCriteriaMet")) {
            cond_set(s.upd, fin.type, "True", fin.reason, fin.message, s.now);
            fin.type = !strcmp(fin.type, "FailureTarget") ? "Failed" : "Complete";
        }
    } else {
        bool managed = false;
        if (satisfied && !ctrl_obj_deleting(job)) {
            act_rc = manage(&s);
            managed = true;
        }
        long active = (long)json_array_size(s.active);
        bool complete = s.completions < 0 ? s.succeeded > 0 && active == 0
                                          : s.succeeded >= s.completions && active == 0;
        if (complete) {
            cond_set(s.upd, "SuccessCriteriaMet", "True", "CompletionsReached",
                     "Reached expected number of succeeded pods", s.now);
            fin = (finish){"Complete", "CompletionsReached",
                           "Reached expected number of succeeded pods"};
        } else if (managed) {
            if (susp) {
                suspend_changed =
                    cond_set(s.upd, "Suspended", "True", "JobSuspended", "Job suspended", s.now);
                if (suspend_changed)
                    kc__wl_event(ctx, job, "Normal", "Suspended", "Job suspended");
            } else {
                suspend_changed =
                    cond_set(s.upd, "Suspended", "False", "JobResumed", "Job resumed", s.now);
                if (suspend_changed) {
                    kc__wl_event(ctx, job, "Normal", "Resumed", "Job resumed");
                    ctrl_obj_set(s.upd, "status.startTime", json_string(s.now));
                }
            }
        }
    }
    kc__wl_set_int(s.upd, "active", (int64_t)json_array_size(s.active), true);
    kc__wl_set_int(s.upd, "ready", s.ready, false);
    kc__wl_set_int(s.upd, "terminating", s.terminating, false);
    if (s.indexed) {
        char *ci = format_intervals(s.done_ix, s.completions);
        if (ci && *ci)
            ctrl_obj_set(s.upd, "status.completedIndexes", json_string(ci));
        else
            ctrl_obj_remove(s.upd, "status.completedIndexes");
        free(ci);
    }
    /* Newly finished pods go to status.uncountedTerminatedPods first ... */
    json_t *base = json_incref(job);
    if (s.new_uncounted) {
        kc__wl_set_int(s.upd, "succeeded", s.indexed ? s.succeeded : s.base_succeeded, true);
        kc__wl_set_int(s.upd, "failed", s.base_failed, true);
        set_uncounted(&s);
        rc = kc__wl_write_status(ctx, job, s.upd, &written);
        if (rc < 0) {
            json_decref(base);
            res = ctrl_err_is_not_found(rc) ? ctrl_done() : ctrl_err(rc);
            goto out;
        }
        ctrl_obj_set(s.upd, "metadata.resourceVersion",
                     json_string(ctrl_obj_resource_version(written)));
        json_decref(base);
        base = written;
        written = NULL;
    }
    /* ... then lose their finalizer and move to the counters. */
    int track_rc = 0;
    long moved_s = count_uncounted(&s, s.usucc, &track_rc);
    long moved_f = count_uncounted(&s, s.ufail, &track_rc);
    kc__wl_set_int(s.upd, "succeeded", s.indexed ? s.succeeded : s.base_succeeded + moved_s, true);
    kc__wl_set_int(s.upd, "failed", s.base_failed + moved_f, true);
    set_uncounted(&s);
    bool all_counted = json_array_size(s.usucc) == 0 && json_array_size(s.ufail) == 0;
    /* The terminal condition once every pod has stopped and been counted. */
    if (fin.type && json_array_size(s.active) == 0 && s.terminating == 0 && all_counted) {
        cond_set(s.upd, fin.type, "True", fin.reason, fin.message, s.now);
        if (!strcmp(fin.type, "Complete")) {
            ctrl_obj_set(s.upd, "status.completionTime", json_string(s.now));
            kc__wl_event(ctx, job, "Normal", "Completed", "Job completed");
        } else {
            kc__wl_event(ctx, job, "Warning", fin.reason, "%s", fin.message);
        }
    }
    rc = kc__wl_write_status(ctx, base, s.upd, &written);
    json_decref(base);
    if (rc < 0 && !ctrl_err_is_not_found(rc)) {
        res = ctrl_err(rc);
        goto out;
    }
    if (act_rc == 0)
        act_rc = track_rc;
    if (act_rc < 0) {
        res = ctrl_err(act_rc);
    } else if (written && finished(written)) {
        res = ttl_after_finished(ctx, written);
    } else if (recheck > 0 || s.backoff_ns > 0) {
        res = kc__wl_after(
            ctx, s.wall,
            recheck > 0 && (s.backoff_ns == 0 || recheck < s.backoff_ns) ? recheck : s.backoff_ns);
    } else if (!satisfied || (fin.type && !finished(written))) {
        /* Events settle it; the timer is a safety net. */
        res = ctrl_requeue_after(EXPECT_RECHECK);
    }
out:
    free(s.done_ix);
    json_decref(s.usucc);
    json_decref(s.ufail);
    json_decref(s.active);
    json_decref(s.upd);
    json_decref(written);
    json_decref(pods);
    json_decref(job);
    return res;
}

static void job_free(void *user)
{
    kc_wl *wl = user;
    if (wl)
        kc__jobtrack_free(wl->extra);
    kc__wl_free(wl);
}

int kc__job_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    kc_wl *wl = NULL;
    int rc = kc__wl_setup(mgr, cfg, "batch", "Job", &wl);
    if (rc == 0 && !(wl->extra = kc__jobtrack_new())) {
        kc__wl_free(wl);
        rc = CTRL_ERR_NOMEM;
    }
    if (rc < 0) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "job: %s", ctrl_strerror(rc));
        return rc;
    }
    char name[64];
    ctrl_builder *b = ctrl_builder_for(mgr, "batch/v1", "Job");
    ctrl_builder_owns(b, "v1", "Pod");
    ctrl_builder_named(b, kc__controller_name("job", name, sizeof name));
    ctrl_builder_with_user_free(b, job_free);
    rc = ctrl_builder_complete(b, reconcile, wl);
    if (rc == 0)
        rc = kc__jobtrack_orphans_setup(mgr, cfg);
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, "job: %s", ctrl_strerror(rc));
    return rc;
}
