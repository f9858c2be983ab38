/*
 * test_job.c - the built-in Job controller (cluster/job.c) against an
 * in-process fakeapi: pods from the template with the Job's labels and
 * owner, parallelism and completions, Indexed completion (annotation,
 * label, hostname, JOB_COMPLETION_INDEX in every container), backoffLimit,
 * activeDeadlineSeconds, successPolicy, suspend and resume,
 * ttlSecondsAfterFinished, and the status and conditions as upstream
 * writes them, and convergence when pod creates and status writes fail.
 * Pods are moved by hand (no kubelet here).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batchtest.h"

#define DOC "{\"controllers\":[\"job\"],\"nodes\":0}"

static void setup(void)
{
    bt_start(DOC, 0);
}

TestSuite(job, .init = setup, .fini = bt_stop, .timeout = 60);

static size_t count_pods(const char *job, const char *phase, bool active_only)
{
    char sel[128];
    snprintf(sel, sizeof sel, "job-name=%s", job);
    json_t *pods = bt_list("v1", "Pod", "default", sel);
    size_t n = 0, i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        const char *ph = bt_str(p, "status.phase");
        if (active_only && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed")))
            continue;
        if (phase && strcmp(ph, phase))
            continue;
        n++;
    }
    json_decref(pods);
    return n;
}

/* The first pod of the job in no terminal phase (a new reference), or NULL. */
static json_t *an_active_pod(const char *job)
{
    char sel[128];
    snprintf(sel, sizeof sel, "job-name=%s", job);
    json_t *pods = bt_list("v1", "Pod", "default", sel);
    json_t *found = NULL;
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        const char *ph = bt_str(p, "status.phase");
        if (strcmp(ph, "Succeeded") && strcmp(ph, "Failed") &&
            !json_object_get(json_object_get(p, "metadata"), "deletionTimestamp")) {
            found = json_incref(p);
            break;
        }
    }
    json_decref(pods);
    return found;
}

static bool has_finalizer(const json_t *pod)
{
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(json_object_get(pod, "metadata"), "finalizers"), i, f)
    {
        if (!strcmp(json_string_value(f), "batch.kubernetes.io/job-tracking"))
            return true;
    }
    return false;
}

static bool cond_is(const char *job, const char *type, const char *status)
{
    json_t *j = bt_get("batch/v1", "Job", "default", job);
    json_t *c = j ? bt_cond(j, type) : NULL;
    bool ok = c && !strcmp(json_string_value(json_object_get(c, "status")), status);
    json_decref(j);
    return ok;
}

static long long job_int(const char *job, const char *path)
{
    json_t *j = bt_get("batch/v1", "Job", "default", job);
    long long v = j ? bt_int(j, path, -1) : -2;
    json_decref(j);
    return v;
}

static bool job_gone(const char *job)
{
    json_t *j = bt_get("batch/v1", "Job", "default", job);
    json_decref(j);
    return j == NULL;
}

static const char *const PI_JOB = "apiVersion: batch/v1\n"
                                  "kind: Job\n"
                                  "metadata: {name: pi, namespace: default}\n"
                                  "spec:\n"
                                  "  completions: 3\n"
                                  "  parallelism: 2\n"
                                  "  template:\n"
                                  "    metadata: {labels: {app: pi}}\n"
                                  "    spec:\n"
                                  "      restartPolicy: Never\n"
                                  "      containers: [{name: pi, image: perl}]\n";

Test(job, nonindexed_completes_with_parallelism_and_upstream_status)
{
    bt_apply(PI_JOB);
    json_t *job = bt_get("batch/v1", "Job", "default", "pi");
    cr_assert(job);
    char uid[64];
    snprintf(uid, sizeof uid, "%s", bt_str(job, "metadata.uid"));
    json_decref(job);
    BT_WAIT(count_pods("pi", NULL, false) == 2, 10000, "two pods for parallelism 2");
    json_t *pods = bt_list("v1", "Pod", "default", "job-name=pi");
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        cr_assert_str_eq(bt_str(p, "metadata.generateName"), "pi-");
        cr_assert_eq(strncmp(bt_str(p, "metadata.name"), "pi-", 3), 0);
        cr_assert_str_eq(bt_str(p, "metadata.labels.app"), "pi");
        cr_assert_str_eq(bt_str(p, "metadata.labels.job-name"), "pi");
        json_t *labels = json_object_get(json_object_get(p, "metadata"), "labels");
        cr_assert_str_eq(json_string_value(json_object_get(labels, "batch.kubernetes.io/job-name")),
                         "pi");
        cr_assert_str_eq(json_string_value(json_object_get(labels, "controller-uid")), uid);
        cr_assert_str_eq(
            json_string_value(json_object_get(labels, "batch.kubernetes.io/controller-uid")), uid);
        cr_assert_null(json_object_get(labels, "batch.kubernetes.io/job-completion-index"));
        json_t *ref =
            json_array_get(json_object_get(json_object_get(p, "metadata"), "ownerReferences"), 0);
        cr_assert_str_eq(json_string_value(json_object_get(ref, "kind")), "Job");
        cr_assert_str_eq(json_string_value(json_object_get(ref, "uid")), uid);
        cr_assert(json_is_true(json_object_get(ref, "controller")));
        cr_assert_null(json_object_get(json_object_get(p, "spec"), "hostname"));
        cr_assert(has_finalizer(p), "a running pod carries batch.kubernetes.io/job-tracking");
    }
    json_decref(pods);
    BT_WAIT(job_int("pi", "status.active") == 2 && job_int("pi", "status.ready") == 0, 10000,
            "status.active 2, ready 0");
    json_t *j = bt_get("batch/v1", "Job", "default", "pi");
    cr_assert_neq(bt_str(j, "status.startTime")[0], 0, "startTime set");
    json_decref(j);

    /* Readiness is counted. */
    json_t *a = an_active_pod("pi");
    bt_pod_phase("default", bt_str(a, "metadata.name"), "Running", true);
    json_decref(a);
    BT_WAIT(job_int("pi", "status.ready") == 1, 10000, "ready 1");

    /* Three successes; never more than two running at once. */
    for (int k = 0; k < 3; k++) {
        BT_WAIT((a = an_active_pod("pi")) != NULL, 10000, "an active pod (round %d)", k);
        bt_pod_phase("default", bt_str(a, "metadata.name"), "Succeeded", false);
        json_decref(a);
        cr_assert_leq(count_pods("pi", NULL, true), 2);
        BT_WAIT(job_int("pi", "status.succeeded") == k + 1, 10000, "succeeded %d", k + 1);
        cr_assert_leq(count_pods("pi", NULL, true), 2);
    }
    BT_WAIT(cond_is("pi", "Complete", "True"), 10000, "Complete");
    cr_assert_eq(count_pods("pi", "Succeeded", false), 3);
    cr_assert_eq(count_pods("pi", NULL, false), 3, "no extra pod was created");
    pods = bt_list("v1", "Pod", "default", "job-name=pi");
    json_array_foreach(pods, i, p) cr_assert_not(has_finalizer(p), "counted pods are released");
    json_decref(pods);
    j = bt_get("batch/v1", "Job", "default", "pi");
    json_t *st = json_object_get(j, "status");
    cr_assert_null(json_object_get(st, "active"));
    cr_assert_null(json_object_get(st, "failed"));
    cr_assert_eq(bt_int(j, "status.succeeded", 0), 3);
    cr_assert_eq(bt_int(j, "status.ready", -1), 0);
    cr_assert_eq(bt_int(j, "status.terminating", -1), 0);
    cr_assert(json_is_object(json_object_get(st, "uncountedTerminatedPods")));
    cr_assert_neq(bt_str(j, "status.completionTime")[0], 0);
    json_t *conds = json_object_get(st, "conditions");
    cr_assert_eq(json_array_size(conds), 2);
    json_t *c0 = json_array_get(conds, 0), *c1 = json_array_get(conds, 1);
    cr_assert_str_eq(bt_str(c0, "type"), "SuccessCriteriaMet");
    cr_assert_str_eq(bt_str(c1, "type"), "Complete");
    for (int k = 0; k < 2; k++) {
        json_t *c = k ? c1 : c0;
        cr_assert_str_eq(bt_str(c, "status"), "True");
        cr_assert_str_eq(bt_str(c, "reason"), "CompletionsReached");
        cr_assert_str_eq(bt_str(c, "message"), "Reached expected number of succeeded pods");
        cr_assert_neq(bt_str(c, "lastProbeTime")[0], 0);
        cr_assert_neq(bt_str(c, "lastTransitionTime")[0], 0);
    }
    json_decref(j);
}

Test(job, indexed_pods_carry_their_index)
{
    bt_apply("apiVersion: batch/v1\n"
             "kind: Job\n"
             "metadata: {name: idx, namespace: default}\n"
             "spec:\n"
             "  completions: 3\n"
             "  parallelism: 3\n"
             "  completionMode: Indexed\n"
             "  template:\n"
             "    spec:\n"
             "      restartPolicy: Never\n"
             "      initContainers: [{name: init, image: busybox}]\n"
             "      containers:\n"
             "      - {name: a, image: busybox, env: [{name: X, value: 'y'}]}\n"
             "      - {name: b, image: busybox}\n");
    BT_WAIT(count_pods("idx", NULL, false) == 3, 10000, "three pods");
    json_t *pods = bt_list("v1", "Pod", "default", "job-name=idx");
    bool seen[3] = {false, false, false};
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        json_t *meta = json_object_get(p, "metadata");
        const char *ix = json_string_value(json_object_get(
            json_object_get(meta, "annotations"), "batch.kubernetes.io/job-completion-index"));
        cr_assert(ix, "the index annotation");
        int n = atoi(ix);
        cr_assert(n >= 0 && n < 3 && !seen[n], "index %s once", ix);
        seen[n] = true;
        cr_assert_str_eq(
            json_string_value(json_object_get(json_object_get(meta, "labels"),
                                              "batch.kubernetes.io/job-completion-index")),
            ix);
        char want[32];
        snprintf(want, sizeof want, "idx-%d-", n);
        cr_assert_str_eq(bt_str(p, "metadata.generateName"), want);
        snprintf(want, sizeof want, "idx-%d", n);
        cr_assert_str_eq(bt_str(p, "spec.hostname"), want);
        const char *lists[] = {"initContainers", "containers"};
        for (int l = 0; l < 2; l++) {
            size_t k, e;
            json_t *ctr, *env;
            json_array_foreach(json_object_get(json_object_get(p, "spec"), lists[l]), k, ctr)
            {
                bool has = false;
                json_array_foreach(json_object_get(ctr, "env"), e, env)
                {
                    if (strcmp(bt_str(env, "name"), "JOB_COMPLETION_INDEX"))
                        continue;
                    has = true;
                    cr_assert_str_eq(
                        bt_str(env, "valueFrom.fieldRef.fieldPath"),
                        "metadata.annotations['batch.kubernetes.io/job-completion-index']");
                }
                cr_assert(has, "JOB_COMPLETION_INDEX in %s", bt_str(ctr, "name"));
            }
        }
    }
    json_decref(pods);
}

Test(job, indexed_completed_indexes_and_complete)
{
    bt_apply("apiVersion: batch/v1\n"
             "kind: Job\n"
             "metadata: {name: ix2, namespace: default}\n"
             "spec:\n"
             "  completions: 3\n"
             "  parallelism: 3\n"
             "  completionMode: Indexed\n"
             "  template:\n"
             "    spec:\n"
             "      restartPolicy: Never\n"
             "      containers: [{name: a, image: busybox}]\n");
    BT_WAIT(count_pods("ix2", NULL, false) == 3, 10000, "three pods");
    const char *order[] = {"1", "0", "2"};
    const char *want[] = {"1", "0-1", "0-2"};
    for (int k = 0; k < 3; k++) {
        char sel[128];
        snprintf(sel, sizeof sel, "job-name=ix2,batch.kubernetes.io/job-completion-index=%s",
                 order[k]);
        json_t *pods = bt_list("v1", "Pod", "default", sel);
        cr_assert_eq(json_array_size(pods), 1);
        bt_pod_phase("default", bt_str(json_array_get(pods, 0), "metadata.name"), "Succeeded",
                     false);
        json_decref(pods);
        json_t *j = NULL;
        BT_WAIT((json_decref(j), j = bt_get("batch/v1", "Job", "default", "ix2"),
                 !strcmp(bt_str(j, "status.completedIndexes"), want[k])),
                10000, "completedIndexes %s, got \"%s\"", want[k],
                bt_str(j, "status.completedIndexes"));
        json_decref(j);
    }
    BT_WAIT(cond_is("ix2", "Complete", "True"), 10000, "Complete");
    cr_assert_eq(job_int("ix2", "status.succeeded"), 3);
    cr_assert_eq(count_pods("ix2", NULL, false), 3);
}

Test(job, backoff_limit_fails_the_job)
{
    bt_apply("apiVersion: batch/v1\n"
             "kind: Job\n"
             "metadata: {name: bad, namespace: default}\n"
             "spec:\n"
             "  backoffLimit: 2\n"
             "  template:\n"
             "    spec:\n"
             "      restartPolicy: Never\n"
             "      containers: [{name: a, image: busybox}]\n");
    /* Each replacement waits out the pod failure backoff: 10 s after the
     * first failure, 20 s after the second (far more than the real time a
     * round takes, even under sanitizers). */
    for (int k = 0; k < 3; k++) {
        json_t *a = NULL;
        BT_WAIT((a = an_active_pod("bad")) != NULL, 10000, "a pod to fail (round %d)", k);
        bt_pod_phase("default", bt_str(a, "metadata.name"), "Failed", false);
        json_decref(a);
        BT_WAIT(job_int("bad", "status.failed") == k + 1, 10000, "failed %d", k + 1);
        if (k == 2)
            break;
        for (int step = 0; step <= k; step++) {
            for (int i = 0; i < 40; i++)
                bt_nap();
            cr_assert_eq(count_pods("bad", NULL, true), 0,
                         "no new pod before the backoff (round %d, step %d)", k, step);
            if (step < k)
                bt_advance(10 * CTRL_SECOND);
        }
        bt_advance(11 * CTRL_SECOND);
    }
    BT_WAIT(cond_is("bad", "Failed", "True"), 10000, "Failed");
    json_t *j = bt_get("batch/v1", "Job", "default", "bad");
    json_t *ft = bt_cond(j, "FailureTarget"), *f = bt_cond(j, "Failed");
    cr_assert(ft && f);
    cr_assert_str_eq(bt_str(ft, "reason"), "BackoffLimitExceeded");
    cr_assert_str_eq(bt_str(f, "reason"), "BackoffLimitExceeded");
    cr_assert_str_eq(bt_str(f, "message"), "Job has reached the specified backoff limit");
    cr_assert_null(bt_cond(j, "Complete"));
    cr_assert_null(json_object_get(json_object_get(j, "status"), "completionTime"));
    cr_assert_eq(bt_int(j, "status.failed", 0), 3);
    json_decref(j);
    cr_assert_eq(count_pods("bad", NULL, false), 3, "no pod after the limit");
    cr_assert_eq(count_pods("bad", NULL, true), 0);
}

Test(job, active_deadline_exceeded)
{
    bt_apply("apiVersion: batch/v1\n"
             "kind: Job\n"
             "metadata: {name: slow, namespace: default}\n"
             "spec:\n"
             "  activeDeadlineSeconds: 30\n"
             "  parallelism: 2\n"
             "  completions: 4\n"
             "  template:\n"
             "    spec:\n"
             "      restartPolicy: Never\n"
             "      containers: [{name: a, image: busybox}]\n");
    BT_WAIT(count_pods("slow", NULL, true) == 2, 10000, "two pods");
    cr_assert_not(cond_is("slow", "Failed", "True"));
    bt_advance(31 * CTRL_SECOND);
    BT_WAIT(cond_is("slow", "Failed", "True"), 10000, "Failed after the deadline");
    json_t *j = bt_get("batch/v1", "Job", "default", "slow");
    cr_assert_str_eq(bt_str(bt_cond(j, "Failed"), "reason"), "DeadlineExceeded");
    cr_assert_str_eq(bt_str(bt_cond(j, "Failed"), "message"),
                     "Job was active longer than specified deadline");
    cr_assert_str_eq(bt_str(bt_cond(j, "FailureTarget"), "reason"), "DeadlineExceeded");
    cr_assert_null(json_object_get(json_object_get(j, "status"), "active"));
    cr_assert_eq(bt_int(j, "status.failed", 0), 2, "the running pods it deleted count as failed");
    json_decref(j);
    cr_assert_eq(count_pods("slow", NULL, false), 0, "its pods were deleted");
}

Test(job, success_policy_ends_the_job_early)
{
    bt_apply("apiVersion: batch/v1\n"
             "kind: Job\n"
             "metadata: {name: sp, namespace: default}\n"
             "spec:\n"
             "  completions: 5\n"
             "  parallelism: 5\n"
             "  completionMode: Indexed\n"
             "  successPolicy: {rules: [{succeededIndexes: '0-1'}]}\n"
             "  template:\n"
             "    spec:\n"
             "      restartPolicy: Never\n"
             "      containers: [{name: a, image: busybox}]\n");
    BT_WAIT(count_pods("sp", NULL, false) == 5, 10000, "five pods");
    for (int ix = 0; ix < 2; ix++) {
        char sel[128];
        snprintf(sel, sizeof sel, "job-name=sp,batch.kubernetes.io/job-completion-index=%d", ix);
        json_t *pods = bt_list("v1", "Pod", "default", sel);
        bt_pod_phase("default", bt_str(json_array_get(pods, 0), "metadata.name"), "Succeeded",
                     false);
        json_decref(pods);
    }
    BT_WAIT(cond_is("sp", "Complete", "True"), 10000, "Complete by the success policy");
    json_t *j = bt_get("batch/v1", "Job", "default", "sp");
    json_t *scm = bt_cond(j, "SuccessCriteriaMet"), *c = bt_cond(j, "Complete");
    cr_assert_str_eq(bt_str(scm, "reason"), "SuccessPolicy");
    cr_assert_str_eq(bt_str(scm, "message"), "Matched rules at index 0");
    cr_assert_str_eq(bt_str(c, "reason"), "SuccessPolicy");
    cr_assert_str_eq(bt_str(j, "status.completedIndexes"), "0-1");
    cr_assert_eq(bt_int(j, "status.succeeded", 0), 2);
    json_decref(j);
    cr_assert_eq(count_pods("sp", NULL, true), 0, "the lingering pods were deleted");
}

Test(job, suspend_and_resume)
{
    bt_apply("apiVersion: batch/v1\n"
             "kind: Job\n"
             "metadata: {name: sus, namespace: default}\n"
             "spec:\n"
             "  suspend: true\n"
             "  parallelism: 2\n"
             "  completions: 2\n"
             "  template:\n"
             "    spec:\n"
             "      restartPolicy: Never\n"
             "      containers: [{name: a, image: busybox}]\n");
    BT_WAIT(cond_is("sus", "Suspended", "True"), 10000, "Suspended");
    json_t *j = bt_get("batch/v1", "Job", "default", "sus");
    cr_assert_str_eq(bt_str(bt_cond(j, "Suspended"), "reason"), "JobSuspended");
    cr_assert_str_eq(bt_str(bt_cond(j, "Suspended"), "message"), "Job suspended");
    cr_assert_null(json_object_get(json_object_get(j, "status"), "startTime"));
    json_decref(j);
    cr_assert_eq(count_pods("sus", NULL, false), 0);

    bt_patch("batch/v1", "Job", "default", "sus", "{\"spec\":{\"suspend\":false}}");
    BT_WAIT(cond_is("sus", "Suspended", "False"), 10000, "resumed");
    BT_WAIT(count_pods("sus", NULL, true) == 2, 10000, "two pods after resuming");
    j = bt_get("batch/v1", "Job", "default", "sus");
    cr_assert_str_eq(bt_str(bt_cond(j, "Suspended"), "reason"), "JobResumed");
    cr_assert_neq(bt_str(j, "status.startTime")[0], 0);
    json_decref(j);

    /* Suspending again deletes the active pods. */
    bt_patch("batch/v1", "Job", "default", "sus", "{\"spec\":{\"suspend\":true}}");
    BT_WAIT(count_pods("sus", NULL, true) == 0, 10000, "pods deleted on suspend");
    BT_WAIT(cond_is("sus", "Suspended", "True"), 10000, "Suspended again");
    BT_WAIT(job_int("sus", "status.active") == -1, 10000, "no active pods in status");
}

Test(job, ttl_after_finished_deletes_the_job)
{
    bt_apply("apiVersion: batch/v1\n"
             "kind: Job\n"
             "metadata: {name: ttl, namespace: default}\n"
             "spec:\n"
             "  ttlSecondsAfterFinished: 100\n"
             "  template:\n"
             "    spec:\n"
             "      restartPolicy: Never\n"
             "      containers: [{name: a, image: busybox}]\n");
    json_t *a = NULL;
    BT_WAIT((a = an_active_pod("ttl")) != NULL, 10000, "a pod");
    bt_pod_phase("default", bt_str(a, "metadata.name"), "Succeeded", false);
    json_decref(a);
    BT_WAIT(cond_is("ttl", "Complete", "True"), 10000, "Complete");
    bt_advance(50 * CTRL_SECOND);
    bt_nap();
    bt_nap();
    cr_assert_not(job_gone("ttl"), "not before the TTL");
    bt_advance(51 * CTRL_SECOND);
    BT_WAIT(job_gone("ttl"), 10000, "deleted after the TTL");
    BT_WAIT(count_pods("ttl", NULL, false) == 0, 10000, "its pods go with it");
}

/* A pod deleted while it runs counts as failed (upstream's isPodFailed);
 * pods the controller deletes itself lose the finalizer first and do not. */
Test(job, replaces_deleted_pods_and_scales_with_parallelism)
{
    bt_apply("apiVersion: batch/v1\n"
             "kind: Job\n"
             "metadata: {name: sc, namespace: default}\n"
             "spec:\n"
             "  parallelism: 1\n"
             "  completions: 10\n"
             "  template:\n"
             "    spec:\n"
             "      restartPolicy: Never\n"
             "      containers: [{name: a, image: busybox}]\n");
    BT_WAIT(count_pods("sc", NULL, true) == 1, 10000, "one pod");
    bt_patch("batch/v1", "Job", "default", "sc", "{\"spec\":{\"parallelism\":4}}");
    BT_WAIT(count_pods("sc", NULL, true) == 4, 10000, "four pods");
    BT_WAIT(job_int("sc", "status.active") == 4, 10000, "active 4");
    json_t *a = an_active_pod("sc");
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_delete(bt_api, "v1", "Pod", "default", bt_str(a, "metadata.name"), &fe),
                 0);
    json_decref(a);
    BT_WAIT(job_int("sc", "status.failed") == 1, 10000,
            "a pod deleted before it finished counts as failed");
    BT_WAIT(count_pods("sc", NULL, true) == 4, 10000, "replaced");
    bt_patch("batch/v1", "Job", "default", "sc", "{\"spec\":{\"parallelism\":2}}");
    BT_WAIT(count_pods("sc", NULL, true) == 2, 10000, "scaled down to two");
    BT_WAIT(job_int("sc", "status.active") == 2, 10000, "active 2");
    cr_assert_eq(job_int("sc", "status.failed"), 1,
                 "the controller's own deletions are not failures");
}

Test(job, converges_despite_api_errors)
{
    fakeapi_error fe = {0};
    uint64_t ids[2];
    cr_assert_eq(fakeapi_fault_add(bt_api,
                                   &(fakeapi_fault){.verb = "create",
                                                    .resource = "pods",
                                                    .first = 2,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 409,
                                                    .reason = "Conflict"},
                                   &ids[0], &fe),
                 0, "%s", fe.message);
    cr_assert_eq(fakeapi_fault_add(bt_api,
                                   &(fakeapi_fault){.verb = "update",
                                                    .subresource = "status",
                                                    .resource = "jobs",
                                                    .first = 3,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 500},
                                   &ids[1], &fe),
                 0, "%s", fe.message);
    bt_apply("apiVersion: batch/v1\n"
             "kind: Job\n"
             "metadata: {name: flaky, namespace: default}\n"
             "spec:\n"
             "  completions: 6\n"
             "  parallelism: 3\n"
             "  template:\n"
             "    spec:\n"
             "      restartPolicy: Never\n"
             "      containers: [{name: a, image: busybox}]\n");
    int done = 0;
    int64_t deadline = bt_mono_ms() + 30000;
    while (!cond_is("flaky", "Complete", "True")) {
        cr_assert_leq(count_pods("flaky", NULL, true), 3, "never more than parallelism");
        json_t *a = an_active_pod("flaky");
        if (a && done < 6) {
            bt_pod_phase("default", bt_str(a, "metadata.name"), "Succeeded", false);
            done++;
        }
        json_decref(a);
        cr_assert_lt(bt_mono_ms(), deadline, "complete: %d succeeded", done);
        bt_nap();
    }
    cr_assert_eq(done, 6);
    cr_assert_eq(count_pods("flaky", NULL, false), 6, "no pod beyond the completions");
    cr_assert_eq(job_int("flaky", "status.succeeded"), 6);
    for (int k = 0; k < 2; k++) {
        unsigned long matched = 0, fired = 0;
        cr_assert_eq(fakeapi_fault_hits(bt_api, ids[k], &matched, &fired), 0);
        cr_assert_gt(fired, 0, "fault %d fired (%lu matched)", k, matched);
    }
}

Test(job, counts_survive_pod_deletion)
{
    bt_apply("apiVersion: batch/v1\n"
             "kind: Job\n"
             "metadata: {name: keep, namespace: default}\n"
             "spec:\n"
             "  completions: 2\n"
             "  parallelism: 1\n"
             "  template:\n"
             "    spec:\n"
             "      restartPolicy: Never\n"
             "      containers: [{name: a, image: busybox}]\n");
    json_t *a = NULL;
    BT_WAIT((a = an_active_pod("keep")) != NULL, 10000, "first pod");
    char first[128];
    snprintf(first, sizeof first, "%s", bt_str(a, "metadata.name"));
    json_decref(a);
    bt_pod_phase("default", first, "Succeeded", false);
    BT_WAIT(job_int("keep", "status.succeeded") == 1, 10000, "counted");
    json_t *p = NULL;
    BT_WAIT((json_decref(p), p = bt_get("v1", "Pod", "default", first), p && !has_finalizer(p)),
            10000, "released once counted");
    json_decref(p);
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_delete(bt_api, "v1", "Pod", "default", first, &fe), 0);
    BT_WAIT((a = an_active_pod("keep")) != NULL, 10000, "second pod");
    bt_pod_phase("default", bt_str(a, "metadata.name"), "Succeeded", false);
    json_decref(a);
    BT_WAIT(cond_is("keep", "Complete", "True"), 10000, "Complete");
    cr_assert_eq(job_int("keep", "status.succeeded"), 2, "the deleted pod still counts");
    cr_assert_eq(count_pods("keep", NULL, false), 1);
}

Test(job, pods_of_a_deleted_job_are_released)
{
    bt_apply("apiVersion: batch/v1\n"
             "kind: Job\n"
             "metadata: {name: gone, namespace: default}\n"
             "spec:\n"
             "  parallelism: 2\n"
             "  completions: 2\n"
             "  template:\n"
             "    spec:\n"
             "      restartPolicy: Never\n"
             "      containers: [{name: a, image: busybox}]\n");
    BT_WAIT(count_pods("gone", NULL, true) == 2, 10000, "two pods");
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_delete(bt_api, "batch/v1", "Job", "default", "gone", &fe), 0);
    BT_WAIT(count_pods("gone", NULL, false) == 0, 10000,
            "the garbage collector's deletes complete once the finalizer goes");
}
