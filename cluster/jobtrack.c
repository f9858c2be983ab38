/*
 * jobtrack.c - the job-tracking pod finalizer: expected removals, the
 * removal patch, and the orphan-pod controller (jobtrack.h).
 *
 * DESIGN: one mutex over one JSON object, Job key -> {pod uid: true}, the
 * removals made and not yet seen in the cache. Leaf lock: nothing is
 * called while it is held. The orphan controller's reconciles run on its
 * own worker; it reads the Pod and Job caches and, for a Job the cache
 * does not show, asks the server before it acts (the cache may lag).
 */
#include "jobtrack.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/controllerutil.h"
#include "ctrl/object.h"

#define ORPHAN_RECHECK (5 * CTRL_SECOND)

struct kc_jobtrack {
    pthread_mutex_t mu;
    json_t *rm;
};

kc_jobtrack *kc__jobtrack_new(void)
{
    kc_jobtrack *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->rm = json_object();
    if (!t->rm) {
        free(t);
        return NULL;
    }
    pthread_mutex_init(&t->mu, NULL);
    return t;
}

void kc__jobtrack_free(kc_jobtrack *t)
{
    if (!t)
        return;
    json_decref(t->rm);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

bool kc__jobtrack_has(const json_t *pod)
{
    return ctrl_contains_finalizer(pod, KC__JOB_FINALIZER);
}

static const json_t *pod_by_uid(const json_t *pods, const char *uid)
{
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        const char *u = ctrl_obj_uid(p);
        if (u && !strcmp(u, uid))
            return p;
    }
    return NULL;
}

void kc__jobtrack_settle(kc_jobtrack *t, const char *key, const json_t *pods)
{
    pthread_mutex_lock(&t->mu);
    json_t *set = json_object_get(t->rm, key);
    const char *uid;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(set, tmp, uid, v)
    {
        const json_t *p = pod_by_uid(pods, uid);
        if (!p || !kc__jobtrack_has(p))
            json_object_del(set, uid);
    }
    if (set && json_object_size(set) == 0)
        json_object_del(t->rm, key);
    pthread_mutex_unlock(&t->mu);
}

bool kc__jobtrack_expected(kc_jobtrack *t, const char *key, const char *uid)
{
    pthread_mutex_lock(&t->mu);
    bool r = uid && json_object_get(json_object_get(t->rm, key), uid) != NULL;
    pthread_mutex_unlock(&t->mu);
    return r;
}

void kc__jobtrack_forget(kc_jobtrack *t, const char *key)
{
    pthread_mutex_lock(&t->mu);
    json_object_del(t->rm, key);
    pthread_mutex_unlock(&t->mu);
}

static void expect_removed(kc_jobtrack *t, const char *key, const char *uid)
{
    pthread_mutex_lock(&t->mu);
    json_t *set = json_object_get(t->rm, key);
    if (!set) {
        set = json_object();
        if (set && json_object_set_new(t->rm, key, set) < 0)
            set = NULL;
    }
    if (set)
        json_object_set_new(set, uid, json_true());
    pthread_mutex_unlock(&t->mu);
}

int kc__jobtrack_remove(ctrl_ctx *ctx, kc_jobtrack *t, const char *key, const json_t *pod)
{
    if (!kc__jobtrack_has(pod))
        return 0;
    json_t *patch = json_pack("{s:{s:[s]}}", "metadata", "$deleteFromPrimitiveList/finalizers",
                              KC__JOB_FINALIZER);
    if (!patch)
        return CTRL_ERR_NOMEM;
    int rc = ctrl_client_patch(ctrl_ctx_client(ctx), "v1", "Pod", ctrl_obj_namespace(pod),
                               ctrl_obj_name(pod), CTRL_PATCH_STRATEGIC, patch, NULL, NULL, NULL);
    json_decref(patch);
    if (ctrl_err_is_not_found(rc))
        rc = 0;
    if (rc == 0 && t && key && ctrl_obj_uid(pod))
        expect_removed(t, key, ctrl_obj_uid(pod));
    return rc;
}

/* ---- orphans ---- */

static bool carries(const json_t *obj, void *user)
{
    (void)user;
    return kc__jobtrack_has(obj);
}

static bool carries_update(const json_t *old_obj, const json_t *new_obj, void *user)
{
    (void)old_obj;
    (void)user;
    return kc__jobtrack_has(new_obj);
}

static bool never(const json_t *obj, void *user)
{
    (void)obj;
    (void)user;
    return false;
}

/* Is the pod's Job (ref: its controller reference) still there? The cache
 * answers, except for a pod being deleted (the garbage collector's work
 * after its Job went, which the Job cache may not show yet): the server. */
static int job_exists(ctrl_ctx *ctx, const char *ns, const json_t *ref, bool deleting, bool *exists)
{
    const char *name = json_string_value(json_object_get(ref, "name"));
    const char *uid = json_string_value(json_object_get(ref, "uid"));
    *exists = false;
    if (!name || !uid)
        return 0;
    json_t *job = NULL;
    int rc = deleting
                 ? CTRL_ERR_NOT_FOUND
                 : ctrl_client_get(ctrl_ctx_client(ctx), "batch/v1", "Job", ns, name, &job, NULL);
    if (rc == 0 && ctrl_obj_uid(job) && !strcmp(ctrl_obj_uid(job), uid)) {
        *exists = true;
    } else if (rc == 0 || ctrl_err_is_not_found(rc)) {
        /* The cache may lag behind a new Job: the server decides. */
        json_decref(job);
        job = NULL;
        rc = ctrl_client_get(ctrl_ctx_api_reader(ctx), "batch/v1", "Job", ns, name, &job, NULL);
        *exists = rc == 0 && ctrl_obj_uid(job) && !strcmp(ctrl_obj_uid(job), uid);
        if (ctrl_err_is_not_found(rc))
            rc = 0;
    }
    json_decref(job);
    return rc;
}

static ctrl_result reconcile_orphan(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)user;
    json_t *pod = NULL;
    int rc = ctrl_client_get(ctrl_ctx_client(ctx), "v1", "Pod", req->ns, req->name, &pod, NULL);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done();
    if (rc < 0)
        return ctrl_err(rc);
    ctrl_result res = ctrl_done();
    if (kc__jobtrack_has(pod)) {
        const json_t *ref = ctrl_get_controller_of(pod);
        const char *kind = json_string_value(json_object_get(ref, "kind"));
        bool exists = false;
        if (ref && kind && !strcmp(kind, "Job"))
            rc = job_exists(ctx, req->ns, ref, ctrl_obj_deleting(pod), &exists);
        if (rc < 0)
            res = ctrl_err(rc);
        else if (!exists && (rc = kc__jobtrack_remove(ctx, NULL, NULL, pod)) < 0)
            res = ctrl_err(rc);
        else if (!exists)
            ctrl_log_info(ctx, "removed the job-tracking finalizer of a pod whose job is gone");
        else if (ctrl_obj_deleting(pod))
            res = ctrl_requeue_after(ORPHAN_RECHECK); /* its Job's sync frees it; a net */
    }
    json_decref(pod);
    return res;
}

int kc__jobtrack_orphans_setup(ctrl_manager *mgr, kc_config *cfg)
{
    char base[48], name[64];
    ctrl_predicate_funcs f = {.create = carries, .update = carries_update, .remove = never};
    ctrl_builder *b = ctrl_builder_for(mgr, "v1", "Pod");
    ctrl_builder_with_predicates(b, ctrl_pred_funcs(&f));
    snprintf(name, sizeof name, "%s-orphans", kc__controller_name("job", base, sizeof base));
    ctrl_builder_named(b, name);
    ctrl_builder_with_user_free(b, kc__config_unref);
    return ctrl_builder_complete(b, reconcile_orphan, kc_config_ref(cfg));
}
