/*
 * backup.c - the Backup controller, buggy and fixed (hunt.h): one Job per
 * Backup, its name and phase in the Backup's status.
 *
 * DESIGN
 * - Threads: reconcile runs on the controller's worker; nothing else here,
 *   and no state of our own.
 * - Reads come from the cache (the client's reader): the Backup, and its
 *   Job by the name its status records. The Job's events bring the Backup
 *   back (its phase follows the Job's conditions), except its creation: the
 *   controller made it and records it itself, so a predicate drops Job
 *   ADDED events (and with them the classic race of a Job event arriving
 *   before the status write that names it).
 * - Writes: the Job (create), then status.jobName and status.phase through
 *   the status subresource with the resourceVersion read.
 * - The one difference between the variants is the Job's name:
 *     buggy: generateName "<backup>-": the status is the only record of
 *            which Job is the Backup's. A crash between the create and the
 *            status write (or a status write that never lands) leaves a
 *            Job nobody recorded, and the next incarnation makes another.
 *     fixed: "<backup>-backup": the create is idempotent; AlreadyExists
 *            means an earlier, interrupted reconcile made it.
 */
#include "hunt.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "hunt_util.h"

#define KIND "Backup"
#define JOB_SUFFIX "-backup"

static const hunt_variant buggy_variant = {false, "hunt-backup-buggy"};
static const hunt_variant fixed_variant = {true, "hunt-backup-fixed"};

/* A new Job for Backup b (borrowed): pg_dump of spec.database. */
static json_t *job_for(const json_t *b, bool fixed)
{
    const char *name = ctrl_obj_name(b);
    const char *db = ctrl_obj_get_string(b, "spec.database");
    char jname[320], file[320];
    snprintf(jname, sizeof jname, fixed ? "%s" JOB_SUFFIX : "%s-", name);
    snprintf(file, sizeof file, "--file=/backups/%s.sql", name);
    json_t *job = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:i, s:{s:{s:{s:s}}, s:{s:s, s:[{s:s, s:s, "
        "s:[s, s, s]}]}}}}",
        "apiVersion", "batch/v1", "kind", "Job", "metadata", fixed ? "name" : "generateName", jname,
        "namespace", ctrl_obj_namespace(b), "labels", HUNT_OWNER_LABEL, name, "spec",
        "backoffLimit", 2, "template", "metadata", "labels", HUNT_OWNER_LABEL, name, "spec",
        "restartPolicy", "Never", "containers", "name", "dump", "image", "postgres:16", "command",
        "pg_dump", db ? db : "", file);
    if (job && ctrl_set_controller_reference(b, job, NULL) < 0) {
        json_decref(job);
        job = NULL;
    }
    return job;
}

/* The phase a Job's conditions say: Succeeded, Failed or Running. */
static const char *job_phase(const json_t *job)
{
    const json_t *conds = ctrl_obj_get(job, "status.conditions");
    size_t i;
    const json_t *cond;
    json_array_foreach(conds, i, cond)
    {
        const char *type = json_string_value(json_object_get(cond, "type"));
        const char *st = json_string_value(json_object_get(cond, "status"));
        if (!type || !st || strcmp(st, "True"))
            continue;
        if (!strcmp(type, "Complete"))
            return "Succeeded";
        if (!strcmp(type, "Failed"))
            return "Failed";
    }
    return "Running";
}

static int write_status(ctrl_client *c, const json_t *b, const char *job, const char *phase)
{
    return hunt_write_status(c, b,
                             json_pack("{s:s, s:s, s:I}", "jobName", job, "phase", phase,
                                       "observedGeneration", (json_int_t)ctrl_obj_generation(b)));
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    const hunt_variant *v = user;
    ctrl_client *c = ctrl_ctx_client(ctx);
    json_t *b = NULL, *job = NULL, *created = NULL;
    ctrl_result res = ctrl_done();
    int rc = ctrl_client_get(c, EXAMPLE_HUNT_API_VERSION, KIND, req->ns, req->name, &b, NULL);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done(); /* gone: its Jobs go with it (garbage collection) */
    if (rc < 0)
        return ctrl_err(rc);
    if (ctrl_obj_deleting(b))
        goto out;

    const char *recorded = ctrl_obj_get_string(b, "status.jobName");
    if (recorded) {
        /* Started already: follow the Job. A Job the cache does not show
         * yet shows up with its first update. */
        rc = ctrl_client_get(c, "batch/v1", "Job", req->ns, recorded, &job, NULL);
        if (rc == 0)
            rc = write_status(c, b, recorded, job_phase(job));
        else if (ctrl_err_is_not_found(rc))
            rc = 0;
        if (rc < 0)
            res = ctrl_err(rc);
        goto out;
    }

    /* Not started: make the Job, then record it. */
    json_t *want = job_for(b, v->fixed);
    if (!want) {
        res = ctrl_err(CTRL_ERR_NOMEM);
        goto out;
    }
    rc = ctrl_client_create(c, want, NULL, &created, NULL);
    json_decref(want);
    char jname[320];
    if (v->fixed && ctrl_err_is_already_exists(rc)) {
        /* An earlier reconcile made it and never recorded it. */
        snprintf(jname, sizeof jname, "%s" JOB_SUFFIX, req->name);
        ctrl_log_info(ctx, "job exists already", "job", jname);
    } else if (rc < 0) {
        res = ctrl_err(rc);
        goto out;
    } else {
        snprintf(jname, sizeof jname, "%s", ctrl_obj_name(created));
        ctrl_log_info(ctx, "created job", "job", jname);
    }
    rc = write_status(c, b, jname, "Running");
    if (rc < 0)
        res = ctrl_err(rc);
out:
    json_decref(created);
    json_decref(job);
    json_decref(b);
    return res;
}

/* Job creations are ours: the reconcile that made one records it. */
static bool not_a_create(const json_t *obj, void *user)
{
    (void)obj, (void)user;
    return false;
}

/* What it watches beside its own kind. */
static void watch(ctrl_builder *b)
{
    ctrl_builder_owns_with(b, "batch/v1", "Job",
                           ctrl_pred_funcs(&(ctrl_predicate_funcs){.create = not_a_create}));
}

int example_hunt_backup_buggy_setup(ctrl_manager *mgr, const json_t *config)
{
    return hunt_setup(mgr, config, KIND, &buggy_variant, watch, reconcile);
}

int example_hunt_backup_fixed_setup(ctrl_manager *mgr, const json_t *config)
{
    return hunt_setup(mgr, config, KIND, &fixed_variant, watch, reconcile);
}
