/*
 * cronjob.c - the CronTask controller (see cronjob.h).
 *
 * DESIGN
 * - Threads. reconcile runs on the controller's workers (never two for one
 *   CronTask); job_owner_index runs on the Job informer's thread. No state
 *   of our own, hence no locks.
 * - Reads come from the cache: the CronTask from its informer, its Jobs
 *   from the Job informer through an index on the controller owner's uid.
 *   The cache lags behind our own writes, and a stale read must never make
 *   a Job run twice or the history shrink below its limit:
 *   * the last handled time is the latest of status.lastScheduleTime, the
 *     creation time and the newest scheduled-time annotation of the Jobs
 *     seen, so a stale status alone does not schedule again;
 *   * the Job's name is a function of its scheduled time, so a create that
 *     a stale cache repeats answers AlreadyExists, which counts as done;
 *   * history is trimmed oldest first from what the cache shows plus the
 *     Job just created; Jobs already deleted but still cached are the
 *     oldest ones, so deleting them again (NotFound) never deletes a Job
 *     that should stay. Deletes carry a uid precondition.
 * - status.lastScheduleTime is written with a merge patch to the status
 *   subresource: the value only moves forward (it is a function of the
 *   clock), so there is no lost update to guard against with a
 *   resourceVersion.
 * - Time: the manager's clock, as wall time (ctrl_clock_wall_ns), in whole
 *   seconds for schedules; the requeue-after delay is computed from the
 *   same reading, in nanoseconds.
 */
#include "cronjob.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_options.h"
#include "ctrl/object.h"

#include "cron.h"

#define OWNER_INDEX "example.com/crontask-owner"
#define NONE INT64_MIN /* no such time */

/* ---- helpers on objects ---- */

static const char *meta_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

static json_t *job_owner_index(const json_t *obj, void *user)
{
    (void)user;
    const char *uid = ctrl_obj_controller_uid(obj, "example.com", EXAMPLE_CRONTASK_KIND);
    return uid ? json_pack("[s]", uid) : NULL;
}

/* A Job's scheduled time: its annotation, else its creation; NONE if neither. */
static int64_t job_scheduled(const json_t *job)
{
    const json_t *ann = json_object_get(json_object_get(job, "metadata"), "annotations");
    const char *s = json_string_value(json_object_get(ann, EXAMPLE_CRONTASK_SCHEDULED_ANNOTATION));
    int64_t t;
    if (s && example_time_parse(s, &t) == 0)
        return t;
    const char *c = meta_str(job, "creationTimestamp");
    if (c && example_time_parse(c, &t) == 0)
        return t;
    return NONE;
}

/* Oldest first: scheduled time, then name. */
static int oldest_first(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    int64_t tx = job_scheduled(x), ty = job_scheduled(y);
    if (tx != ty)
        return tx < ty ? -1 : 1;
    const char *nx = meta_str(x, "name"), *ny = meta_str(y, "name");
    return strcmp(nx ? nx : "", ny ? ny : "");
}

static bool has_job_named(const json_t *jobs, const char *name)
{
    size_t i;
    const json_t *j;
    json_array_foreach(jobs, i, j)
    {
        const char *n = meta_str(j, "name");
        if (n && !strcmp(n, name))
            return true;
    }
    return false;
}

/* Copy the string-valued entries of src (an object, or anything else: none)
 * into dst. */
static void merge_strings(json_t *dst, const json_t *src)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)src, k, v)
    {
        if (json_is_string(v))
            json_object_set(dst, k, (json_t *)v);
    }
}

/*
 * A new Job for CronTask ct (borrowed) at scheduled time sched, named name.
 * jobTemplate is Kubernetes' JobTemplateSpec ({metadata, spec}) when it has
 * a "spec" object (a Job spec has no such field), else the Job spec itself.
 */
static json_t *job_for(const json_t *ct, const char *name, int64_t sched)
{
    const char *ct_name = meta_str(ct, "name"), *ns = meta_str(ct, "namespace");
    const json_t *tmpl = json_object_get(json_object_get(ct, "spec"), "jobTemplate");
    const json_t *tspec = json_object_get(tmpl, "spec");
    const json_t *tmeta = NULL;
    if (json_is_object(tspec))
        tmeta = json_object_get(tmpl, "metadata");
    else
        tspec = tmpl;
    char stamp[32];
    example_time_format(sched, stamp, sizeof stamp);

    json_t *labels = json_object(), *annotations = json_object();
    json_t *spec = json_is_object(tspec) ? json_deep_copy(tspec) : json_object();
    if (!labels || !annotations || !spec) {
        json_decref(labels);
        json_decref(annotations);
        json_decref(spec);
        return NULL;
    }
    merge_strings(labels, json_object_get(tmeta, "labels"));
    merge_strings(annotations, json_object_get(tmeta, "annotations"));
    json_object_set_new(labels, EXAMPLE_CRONTASK_LABEL, json_string(ct_name));
    json_object_set_new(annotations, EXAMPLE_CRONTASK_SCHEDULED_ANNOTATION, json_string(stamp));
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:o, s:o, s:[{s:s, s:s, s:s, s:O, s:b, s:b}]}, s:o}",
                     "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", name, "namespace",
                     ns, "labels", labels, "annotations", annotations, "ownerReferences",
                     "apiVersion", EXAMPLE_CRONTASK_API_VERSION, "kind", EXAMPLE_CRONTASK_KIND,
                     "name", ct_name, "uid",
                     json_object_get(json_object_get(ct, "metadata"), "uid"), "controller", 1,
                     "blockOwnerDeletion", 1, "spec", spec);
}

static int patch_last_schedule(ctrl_client *c, const ctrl_request *req, int64_t t)
{
    char stamp[32];
    example_time_format(t, stamp, sizeof stamp);
    json_t *patch = json_pack("{s:{s:s}}", "status", "lastScheduleTime", stamp);
    if (!patch)
        return CTRL_ERR_NOMEM;
    int rc =
        ctrl_client_patch_status(c, EXAMPLE_CRONTASK_API_VERSION, EXAMPLE_CRONTASK_KIND, req->ns,
                                 req->name, CTRL_PATCH_MERGE, patch, NULL, NULL, NULL);
    json_decref(patch);
    return rc;
}

/* Delete the oldest of jobs (not being deleted) beyond limit. */
static int trim_history(ctrl_ctx *ctx, const ctrl_request *req, const json_t *jobs, long limit)
{
    size_t n = 0, total = json_array_size(jobs);
    const json_t **v = malloc((total ? total : 1) * sizeof *v);
    if (!v)
        return CTRL_ERR_NOMEM;
    size_t i;
    const json_t *j;
    json_array_foreach(jobs, i, j)
    {
        if (!ctrl_obj_deleting(j))
            v[n++] = j;
    }
    int rc = 0;
    if (n > (size_t)limit) {
        qsort(v, n, sizeof *v, oldest_first);
        ctrl_delete_options o = {.propagation = CTRL_PROPAGATION_BACKGROUND};
        for (size_t k = 0; k < n - (size_t)limit && rc == 0; k++) {
            const char *name = meta_str(v[k], "name");
            o.precondition_uid = meta_str(v[k], "uid");
            rc = ctrl_client_delete(ctrl_ctx_client(ctx), "batch/v1", "Job", req->ns, name, &o,
                                    NULL, NULL);
            /* Gone already, or another Job of that name: ours is gone. */
            if (ctrl_err_is_not_found(rc) || ctrl_err_is_conflict(rc))
                rc = 0;
            else if (rc == 0)
                ctrl_log_info(ctx, "deleted job beyond the history limit", "job", name);
        }
    }
    free(v);
    return rc;
}

/* ---- the reconcile ---- */

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)user;
    ctrl_cache *cache = ctrl_ctx_cache(ctx);
    ctrl_client *c = ctrl_ctx_client(ctx);
    ctrl_informer *ct_inf = NULL, *job_inf = NULL;
    int rc = ctrl_cache_informer(cache, EXAMPLE_CRONTASK_API_VERSION, EXAMPLE_CRONTASK_KIND, NULL,
                                 &ct_inf, NULL);
    if (rc == 0)
        rc = ctrl_cache_informer(cache, "batch/v1", "Job", NULL, &job_inf, NULL);
    if (rc < 0)
        return ctrl_err(rc);

    json_t *ct = NULL, *jobs = NULL, *job = NULL, *created = NULL;
    ctrl_result res = ctrl_done();
    rc = ctrl_informer_get(ct_inf, req->ns, req->name, &ct);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done(); /* gone: its Jobs go with it (garbage collection) */
    if (rc < 0)
        return ctrl_err(rc);
    if (ctrl_obj_deleting(ct))
        goto out;
    const char *uid = meta_str(ct, "uid");
    const json_t *spec = json_object_get(ct, "spec");
    const char *schedule = json_string_value(json_object_get(spec, "schedule"));
    example_cron cron;
    char why[256];
    if (!uid || !schedule || example_cron_parse(schedule, &cron, why, sizeof why) < 0) {
        /* Nothing to retry until the spec changes (an update event). */
        ctrl_log_error(ctx, "invalid schedule", "schedule", schedule ? schedule : "(none)", "error",
                       uid && schedule ? why : "missing field");
        res = ctrl_terminal(CTRL_ERR_ARG);
        goto out;
    }
    const json_t *jlimit = json_object_get(spec, "successfulJobsHistoryLimit");
    long limit = json_is_integer(jlimit) && json_integer_value(jlimit) >= 0
                     ? (long)json_integer_value(jlimit)
                     : EXAMPLE_CRONTASK_DEFAULT_HISTORY;
    bool suspend = json_is_true(json_object_get(spec, "suspend"));

    rc = ctrl_informer_by_index(job_inf, OWNER_INDEX, uid, &jobs);
    if (rc < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    int64_t now_ns = ctrl_clock_wall_ns(ctrl_ctx_clock(ctx));
    int64_t now = now_ns / CTRL_SECOND;

    /* The last scheduled time handled. */
    int64_t status_last = NONE, newest_job = NONE, created_at = NONE, t;
    const char *s =
        json_string_value(json_object_get(json_object_get(ct, "status"), "lastScheduleTime"));
    if (s && example_time_parse(s, &t) == 0)
        status_last = t;
    s = meta_str(ct, "creationTimestamp");
    if (s && example_time_parse(s, &t) == 0)
        created_at = t;
    size_t i;
    const json_t *j;
    json_array_foreach(jobs, i, j)
    {
        t = job_scheduled(j);
        if (t > newest_job)
            newest_job = t;
    }
    int64_t last = status_last > newest_job ? status_last : newest_job;
    int64_t earliest = last > created_at ? last : created_at;
    if (earliest == NONE)
        earliest = now; /* no creation time: from now on */

    if (!suspend) {
        int64_t sched = example_cron_prev(&cron, now);
        if (sched != -1 && sched > earliest) {
            char name[320];
            snprintf(name, sizeof name, "%s-%" PRId64, req->name, sched / 60);
            if (!has_job_named(jobs, name)) {
                job = job_for(ct, name, sched);
                if (!job) {
                    res = ctrl_err(CTRL_ERR_NOMEM);
                    goto out;
                }
                rc = ctrl_client_create(c, job, NULL, &created, NULL);
                if (rc == 0) {
                    char stamp[32];
                    example_time_format(sched, stamp, sizeof stamp);
                    ctrl_log_info(ctx, "created job", "job", name, "scheduledTime", stamp);
                    json_array_append(jobs, created);
                } else if (!ctrl_err_is_already_exists(rc)) {
                    res = ctrl_err(rc);
                    goto out;
                }
            }
            last = sched;
        }
    }
    /* Also after a status write lost to an error: the Jobs say how far we got. */
    if (last > status_last) {
        rc = patch_last_schedule(c, req, last);
        if (ctrl_err_is_not_found(rc))
            goto out;
        if (rc < 0) {
            res = ctrl_err(rc);
            goto out;
        }
    }

    rc = trim_history(ctx, req, jobs, limit);
    if (rc < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    if (!suspend) {
        int64_t next = example_cron_next(&cron, now);
        if (next != -1)
            res = ctrl_requeue_after(next * CTRL_SECOND - now_ns);
    }
out:
    json_decref(created);
    json_decref(job);
    json_decref(jobs);
    json_decref(ct);
    return res;
}

/* ---- setup ---- */

int example_cronjob_setup(ctrl_manager *mgr, const json_t *config)
{
    const char *name;
    ctrl_controller_options o; /* over the manager's defaults */
    if (!mgr || example_options_from_config(config, "crontask", &name, &o) < 0)
        return CTRL_ERR_ARG;

    ctrl_informer *jobs = NULL;
    int rc = ctrl_cache_informer(ctrl_manager_cache(mgr), "batch/v1", "Job", NULL, &jobs, NULL);
    if (rc < 0)
        return rc;
    rc = ctrl_informer_add_index(jobs, OWNER_INDEX, job_owner_index, NULL);
    if (rc < 0 && rc != CTRL_ERR_ARG) /* ARG: the index is there (a second registration) */
        return rc;

    ctrl_builder *b = ctrl_builder_for(mgr, EXAMPLE_CRONTASK_API_VERSION, EXAMPLE_CRONTASK_KIND);
    ctrl_builder_owns(b, "batch/v1", "Job");
    ctrl_builder_named(b, name);
    ctrl_builder_with_options(b, &o);
    return ctrl_builder_complete(b, reconcile, NULL);
}
