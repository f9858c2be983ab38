/*
 * cronjob.c - the CronJob controller (kube-controller-manager's cronjob
 * controller v2): Jobs named "<cronjob>-<scheduled minute since the epoch>"
 * at the times of spec.schedule (cron.h) on the manager's clock,
 * concurrencyPolicy Allow/Forbid/Replace, startingDeadlineSeconds,
 * suspend, the history limits, and status.active / lastScheduleTime /
 * lastSuccessfulTime (docs/cluster.md, "CronJob").
 *
 * DESIGN
 * - One libctrl controller "kc-cronjob": For(batch/v1 CronJob),
 *   Owns(batch/v1 Job). The CronJob and its Jobs come from the cache (Jobs
 *   through an index on the controller owner's uid, workload.h); a Job in
 *   status.active that the cache does not show is looked up on the server
 *   before it is dropped, since the cache lags behind our own creates.
 * - Time: the wall time of the manager's clock (virtual in scenarios);
 *   each sync ends with requeue_after until the next scheduled time (plus
 *   100 ms, as upstream), never a sleep.
 * - Only UTC: spec.timeZone other than UTC / Etc/UTC is refused with a
 *   Warning event UnknownTimeZone.
 * - Threads: reconciles on the controller's workers, never two for one
 *   CronJob; no state of its own beyond the config reference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster_int.h"
#include "cron.h"
#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "podutil.h"
#include "workload.h"

#define SCHEDULED_ANNOTATION "batch.kubernetes.io/cronjob-scheduled-timestamp"
#define NEXT_DELTA (100 * CTRL_MILLISECOND)
#define MAX_MISSED 100

static bool job_finished(const json_t *job, const char **how)
{
    const char *types[] = {"Complete", "Failed"};
    for (int i = 0; i < 2; i++) {
        const char *s = json_string_value(json_object_get(kc__condition(job, types[i]), "status"));
        if (s && !strcmp(s, "True")) {
            if (how)
                *how = types[i];
            return true;
        }
    }
    return false;
}

static const json_t *find_by_uid(const json_t *jobs, const char *uid)
{
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j)
    {
        const char *u = ctrl_obj_uid(j);
        if (u && uid && !strcmp(u, uid))
            return j;
    }
    return NULL;
}

static json_t *object_ref(const json_t *job)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "kind", "Job", "namespace",
                     ctrl_obj_namespace(job), "name", ctrl_obj_name(job), "uid", ctrl_obj_uid(job),
                     "apiVersion", "batch/v1", "resourceVersion",
                     ctrl_obj_resource_version(job) ? ctrl_obj_resource_version(job) : "");
}

static void format_time(int64_t t_s, char *buf, size_t len)
{
    kc__rfc3339(t_s * CTRL_SECOND, buf, len);
}

/* Like Go's time.RFC1123Z, the layout of upstream's MissSchedule event. */
static void format_rfc1123z(int64_t t_s, char *buf, size_t len)
{
    time_t t = (time_t)t_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    static const char *const wd[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *const mo[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    snprintf(buf, len, "%s, %02d %s %04d %02d:%02d:%02d +0000", wd[tm.tm_wday], tm.tm_mday,
             mo[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* Bring status.active in line with the Jobs (cache, then server for the
 * ones the cache does not show); record finished ones. */
static int sync_active(ctrl_ctx *ctx, const json_t *cj, json_t *upd, const json_t *jobs)
{
    json_t *active = ctrl_obj_get(upd, "status.active");
    json_t *kept = json_array();
    if (!kept)
        return CTRL_ERR_NOMEM;
    int rc = 0;
    size_t i;
    json_t *ref;
    json_array_foreach(active, i, ref)
    {
        const char *uid = json_string_value(json_object_get(ref, "uid"));
        const char *name = json_string_value(json_object_get(ref, "name"));
        json_t *fetched = NULL;
        const json_t *job = find_by_uid(jobs, uid);
        if (!job && name) {
            int r = ctrl_client_get(ctrl_ctx_api_reader(ctx), "batch/v1", "Job",
                                    ctrl_obj_namespace(cj), name, &fetched, NULL);
            if (r < 0 && !ctrl_err_is_not_found(r)) {
                rc = r;
                json_array_append(kept, ref);
                continue;
            }
            if (fetched && uid && ctrl_obj_uid(fetched) && !strcmp(uid, ctrl_obj_uid(fetched)))
                job = fetched;
        }
        const char *how = NULL;
        if (job && !job_finished(job, &how)) {
            json_array_append(kept, ref);
        } else if (job) {
            kc__wl_event(ctx, cj, "Normal", "SawCompletedJob",
                         "Saw completed job: %s, condition: %s", ctrl_obj_name(job), how);
            const char *done = ctrl_obj_get_string(job, "status.completionTime");
            const char *last = ctrl_obj_get_string(upd, "status.lastSuccessfulTime");
            if (!strcmp(how, "Complete") && done &&
                (!last || kc__parse_time(done) > kc__parse_time(last)))
                ctrl_obj_set(upd, "status.lastSuccessfulTime", json_string(done));
        }
        json_decref(fetched);
    }
    /* Unfinished Jobs of ours the list lacks (a status write lost after a
     * create): listed, so that Forbid and Replace see them. */
    json_t *job;
    json_array_foreach(jobs, i, job)
    {
        const char *uid = ctrl_obj_uid(job);
        bool listed = false;
        size_t k;
        json_t *r;
        json_array_foreach(kept, k, r)
        {
            const char *u = json_string_value(json_object_get(r, "uid"));
            listed |= u && uid && !strcmp(u, uid);
        }
        if (!listed && !job_finished(job, NULL) && !ctrl_obj_deleting(job))
            json_array_append_new(kept, object_ref(job));
    }
    if (json_array_size(kept))
        ctrl_obj_set(upd, "status.active", kept);
    else {
        json_decref(kept);
        ctrl_obj_remove(upd, "status.active");
    }
    return rc;
}

/* Oldest first: status.startTime, then creationTimestamp, then name. */
static int oldest_first(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    const char *sx = ctrl_obj_get_string(x, "status.startTime");
    const char *sy = ctrl_obj_get_string(y, "status.startTime");
    if (!sx)
        sx = ctrl_obj_meta(x, "creationTimestamp");
    if (!sy)
        sy = ctrl_obj_meta(y, "creationTimestamp");
    int c = strcmp(sx ? sx : "", sy ? sy : "");
    return c ? c : strcmp(ctrl_obj_name(x), ctrl_obj_name(y));
}

/* Delete finished Jobs beyond the history limits, oldest first. */
static int cleanup_history(ctrl_ctx *ctx, const json_t *cj, const json_t *jobs)
{
    const char *kinds[] = {"Complete", "Failed"};
    const char *limits[] = {"spec.successfulJobsHistoryLimit", "spec.failedJobsHistoryLimit"};
    int rc = 0;
    for (int k = 0; k < 2; k++) {
        const json_t *lim = ctrl_obj_get(cj, limits[k]);
        if (!json_is_integer(lim))
            continue;
        size_t n = 0, i;
        json_t *job;
        const json_t **v = malloc((json_array_size(jobs) + 1) * sizeof *v);
        if (!v)
            return CTRL_ERR_NOMEM;
        json_array_foreach(jobs, i, job)
        {
            const char *how = NULL;
            if (job_finished(job, &how) && !strcmp(how, kinds[k]) && !ctrl_obj_deleting(job))
                v[n++] = job;
        }
        qsort(v, n, sizeof *v, oldest_first);
        for (size_t d = 0; (json_int_t)(n - d) > json_integer_value(lim); d++) {
            ctrl_delete_options o = {.propagation = CTRL_PROPAGATION_BACKGROUND};
            int r =
                ctrl_client_delete(ctrl_ctx_client(ctx), "batch/v1", "Job",
                                   ctrl_obj_namespace(v[d]), ctrl_obj_name(v[d]), &o, NULL, NULL);
            if (r == 0)
                kc__wl_event(ctx, cj, "Normal", "SuccessfulDelete", "Deleted job %s",
                             ctrl_obj_name(v[d]));
            else if (!ctrl_err_is_not_found(r) && rc == 0)
                rc = r;
        }
        free(v);
    }
    return rc;
}

/* A Job for scheduled time t (seconds) from the CronJob's template. */
static json_t *job_for(const json_t *cj, int64_t t)
{
    const json_t *tmeta = ctrl_obj_get(cj, "spec.jobTemplate.metadata");
    const json_t *tspec = ctrl_obj_get(cj, "spec.jobTemplate.spec");
    json_t *meta = json_object();
    const char *keep[] = {"labels", "annotations"};
    for (int k = 0; k < 2; k++) {
        const json_t *m = json_object_get(tmeta, keep[k]);
        if (json_is_object(m))
            json_object_set_new(meta, keep[k], json_deep_copy(m));
    }
    char name[320], when[32];
    snprintf(name, sizeof name, "%s-%lld", ctrl_obj_name(cj), (long long)(t / 60));
    format_time(t, when, sizeof when);
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "namespace", json_string(ctrl_obj_namespace(cj)));
    json_t *job =
        json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "batch/v1", "kind", "Job", "metadata", meta,
                  "spec", json_is_object(tspec) ? json_deep_copy(tspec) : json_object());
    json_t *owner = json_deep_copy(cj);
    json_object_set_new(owner, "apiVersion", json_string("batch/v1"));
    json_object_set_new(owner, "kind", json_string("CronJob"));
    if (!job || ctrl_obj_set_annotation(job, SCHEDULED_ANNOTATION, when) < 0 ||
        ctrl_set_controller_reference(owner, job, NULL) < 0) {
        json_decref(job);
        job = NULL;
    }
    json_decref(owner);
    return job;
}

static bool has_job_named(const json_t *jobs, const json_t *active, const char *name)
{
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j) if (!strcmp(ctrl_obj_name(j), name)) return true;
    json_array_foreach(active, i, j)
    {
        const char *n = json_string_value(json_object_get(j, "name"));
        if (n && !strcmp(n, name))
            return true;
    }
    return false;
}

/* Requeue for the next scheduled time (next_s; -1: none), measured from
 * now_ns, the wall time the sync started at. */
static ctrl_result until(ctrl_ctx *ctx, int64_t next_s, int64_t now_ns)
{
    if (next_s < 0)
        return ctrl_done();
    return kc__wl_after(ctx, now_ns, next_s * CTRL_SECOND - now_ns + NEXT_DELTA);
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)user;
    json_t *cj = NULL, *jobs = NULL, *upd = NULL, *made = NULL;
    ctrl_result res = ctrl_done();
    int rc =
        ctrl_client_get(ctrl_ctx_client(ctx), "batch/v1", "CronJob", req->ns, req->name, &cj, NULL);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done();
    if (rc < 0)
        return ctrl_err(rc);
    int64_t now_ns = kc__wl_wall(ctx), now = now_ns / CTRL_SECOND;
    if ((rc = kc__wl_owned(ctx, "batch/v1", "Job", ctrl_obj_uid(cj), &jobs)) < 0 ||
        !(upd = json_deep_copy(cj))) {
        res = ctrl_err(rc < 0 ? rc : CTRL_ERR_NOMEM);
        goto out;
    }
    int act_rc = sync_active(ctx, cj, upd, jobs);
    int64_t next = -1;
    if (ctrl_obj_deleting(cj))
        goto write;

    const char *tz = ctrl_obj_get_string(cj, "spec.timeZone");
    if (tz && strcmp(tz, "UTC") && strcmp(tz, "Etc/UTC")) {
        kc__wl_event(ctx, cj, "Warning", "UnknownTimeZone",
                     "invalid timeZone: \"%s\": only UTC is supported by this cluster", tz);
        goto write;
    }
    kc_cron sched;
    char why[160];
    const char *expr = ctrl_obj_get_string(cj, "spec.schedule");
    if (kc__cron_parse(expr, &sched, why, sizeof why) < 0) {
        kc__wl_event(ctx, cj, "Warning", "UnparseableSchedule", "unparseable schedule: \"%s\" : %s",
                     expr ? expr : "", why);
        goto write;
    }
    if (ctrl_obj_get_bool(cj, "spec.suspend", false))
        goto write;
    next = kc__cron_next(&sched, now);

    /* The most recent scheduled time not yet acted on. */
    const char *lst = ctrl_obj_get_string(cj, "status.lastScheduleTime");
    int64_t earliest = kc__parse_time(lst ? lst : ctrl_obj_meta(cj, "creationTimestamp"));
    earliest = earliest < 0 ? now : earliest / CTRL_SECOND;
    const json_t *sds = ctrl_obj_get(cj, "spec.startingDeadlineSeconds");
    if (json_is_integer(sds) && now - json_integer_value(sds) > earliest)
        earliest = now - json_integer_value(sds);
    int64_t first = kc__cron_next(&sched, earliest);
    if (first < 0 || first > now)
        goto write;
    int64_t scheduled = kc__cron_prev(&sched, now);
    int missed = 0;
    for (int64_t t = first; t >= 0 && t <= now && missed <= MAX_MISSED;
         t = kc__cron_next(&sched, t))
        missed++;
    if (missed > MAX_MISSED)
        kc__wl_event(ctx, cj, "Warning", "TooManyMissedTimes",
                     "too many missed start times: > %d. Set or decrease "
                     ".spec.startingDeadlineSeconds or check clock skew",
                     MAX_MISSED);
    if (json_is_integer(sds) && scheduled + json_integer_value(sds) < now) {
        char when[64];
        format_rfc1123z(scheduled, when, sizeof when);
        kc__wl_event(ctx, cj, "Warning", "MissSchedule", "Missed scheduled time to start a job: %s",
                     when);
        goto write;
    }
    char name[320];
    snprintf(name, sizeof name, "%s-%lld", ctrl_obj_name(cj), (long long)(scheduled / 60));
    char when[32];
    format_time(scheduled, when, sizeof when);
    if (has_job_named(jobs, ctrl_obj_get(upd, "status.active"), name)) {
        /* Made by an earlier sync whose status write was lost: record it. */
        if (!lst || kc__parse_time(lst) < scheduled * CTRL_SECOND)
            ctrl_obj_set(upd, "status.lastScheduleTime", json_string(when));
        goto write;
    }
    const char *policy = ctrl_obj_get_string(cj, "spec.concurrencyPolicy");
    json_t *active = ctrl_obj_get(upd, "status.active");
    if (policy && !strcmp(policy, "Forbid") && json_array_size(active) > 0) {
        ctrl_log_debug(ctx, "not starting a job: the previous one still runs (Forbid)");
        goto write;
    }
    if (policy && !strcmp(policy, "Replace")) {
        size_t i;
        json_t *ref;
        json_array_foreach(active, i, ref)
        {
            const char *jn = json_string_value(json_object_get(ref, "name"));
            ctrl_delete_options o = {.propagation = CTRL_PROPAGATION_BACKGROUND,
                                     .precondition_uid =
                                         json_string_value(json_object_get(ref, "uid"))};
            int r = ctrl_client_delete(ctrl_ctx_client(ctx), "batch/v1", "Job", req->ns, jn, &o,
                                       NULL, NULL);
            if (r < 0 && !ctrl_err_is_not_found(r) && !ctrl_err_is_conflict(r)) {
                res = ctrl_err(r);
                goto write;
            }
            kc__wl_event(ctx, cj, "Normal", "SuccessfulDelete", "Deleted job %s", jn);
        }
        ctrl_obj_remove(upd, "status.active");
    }
    json_t *job = job_for(cj, scheduled);
    if (!job) {
        res = ctrl_err(CTRL_ERR_NOMEM);
        goto write;
    }
    rc = ctrl_client_create(ctrl_ctx_client(ctx), job, NULL, &made, NULL);
    json_decref(job);
    if (ctrl_err_is_already_exists(rc)) {
        /* Made by an earlier sync whose status write was lost: the next
         * sync lists it from the cache. */
        rc = 0;
    } else if (rc < 0) {
        kc__wl_event(ctx, cj, "Warning", "FailedCreate", "Error creating job: %s",
                     ctrl_strerror(rc));
        res = ctrl_err(rc);
        goto write;
    } else {
        kc__wl_event(ctx, cj, "Normal", "SuccessfulCreate", "Created job %s", ctrl_obj_name(made));
        json_t *list = ctrl_obj_get(upd, "status.active");
        if (!json_is_array(list)) {
            list = json_array();
            ctrl_obj_set(upd, "status.active", list);
        }
        json_array_append_new(list, object_ref(made));
    }
    ctrl_obj_set(upd, "status.lastScheduleTime", json_string(when));

write:
    rc = kc__wl_write_status(ctx, cj, upd, NULL);
    if (rc < 0 && !ctrl_err_is_not_found(rc) && res.kind != CTRL_RESULT_ERROR) {
        res = ctrl_err(rc);
    } else if (res.kind != CTRL_RESULT_ERROR) {
        int hr = ctrl_obj_deleting(cj) ? 0 : cleanup_history(ctx, cj, jobs);
        if (hr < 0)
            res = ctrl_err(hr);
        else if (act_rc < 0)
            res = ctrl_err(act_rc);
        else
            res = until(ctx, next, now_ns);
    }
out:
    json_decref(made);
    json_decref(upd);
    json_decref(jobs);
    json_decref(cj);
    return res;
}

int kc__cronjob_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    int rc = kc__wl_index(mgr, "batch/v1", "Job");
    if (rc < 0) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "cronjob: %s", ctrl_strerror(rc));
        return rc;
    }
    char name[64];
    ctrl_builder *b = ctrl_builder_for(mgr, "batch/v1", "CronJob");
    ctrl_builder_owns(b, "batch/v1", "Job");
    ctrl_builder_named(b, kc__controller_name("cronjob", name, sizeof name));
    ctrl_builder_with_user_free(b, kc__config_unref);
    rc = ctrl_builder_complete(b, reconcile, kc_config_ref(cfg));
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, "cronjob: %s", ctrl_strerror(rc));
    return rc;
}
