/*
 * test_cronjob.c - the built-in CronJob controller (cluster/cronjob.c)
 * against an in-process fakeapi, on a clock the test moves forward: Jobs
 * named "<cronjob>-<minute>" at the scheduled times with the template's
 * labels, the scheduled-timestamp annotation and the owner; status.active,
 * lastScheduleTime and lastSuccessfulTime; concurrencyPolicy Forbid and
 * Replace; startingDeadlineSeconds; suspend; the history limits. No Job
 * controller runs here: the tests finish Jobs by writing their status.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batchtest.h"

#define DOC "{\"controllers\":[\"cronjob\"],\"nodes\":0}"
#define T0 (INT64_C(1767225630) * CTRL_SECOND) /* 2026-01-01T00:00:30Z */
#define MINUTE0 INT64_C(29453760)              /* 2026-01-01T00:00:00Z in minutes */

static void setup(void)
{
    bt_start(DOC, T0);
}

TestSuite(cronjob, .init = setup, .fini = bt_stop, .timeout = 60);

static void cronjob(const char *name, const char *extra_spec)
{
    char text[2048];
    snprintf(text, sizeof text,
             "apiVersion: batch/v1\n"
             "kind: CronJob\n"
             "metadata: {name: %s, namespace: default}\n"
             "spec:\n"
             "%s"
             "  jobTemplate:\n"
             "    metadata: {labels: {team: batch}, annotations: {note: hello}}\n"
             "    spec:\n"
             "      template:\n"
             "        spec:\n"
             "          restartPolicy: OnFailure\n"
             "          containers: [{name: c, image: busybox}]\n",
             name, extra_spec);
    bt_apply(text);
}

static json_t *job_at(const char *cj, long long minute)
{
    char name[128];
    snprintf(name, sizeof name, "%s-%lld", cj, minute);
    return bt_get("batch/v1", "Job", "default", name);
}

static bool has_job_at(const char *cj, long long minute)
{
    json_t *j = job_at(cj, minute);
    json_decref(j);
    return j != NULL;
}

static size_t count_jobs(void)
{
    json_t *jobs = bt_list("batch/v1", "Job", "default", NULL);
    size_t n = json_array_size(jobs);
    json_decref(jobs);
    return n;
}

/* Finish the job at minute (its status as the Job controller would write
 * it); the completion time written goes to when_out (may be NULL). */
static void finish_job_at(const char *cj, long long minute, bool ok, char *when_out)
{
    char name[128], patch[512];
    snprintf(name, sizeof name, "%s-%lld", cj, minute);
    char when[32];
    time_t t = (time_t)(bt_now() / CTRL_SECOND);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (ok)
        snprintf(patch, sizeof patch,
                 "{\"status\":{\"startTime\":\"%s\",\"completionTime\":\"%s\",\"succeeded\":1,"
                 "\"conditions\":[{\"type\":\"SuccessCriteriaMet\",\"status\":\"True\"},"
                 "{\"type\":\"Complete\",\"status\":\"True\"}]}}",
                 when, when);
    else
        snprintf(patch, sizeof patch,
                 "{\"status\":{\"startTime\":\"%s\",\"failed\":1,"
                 "\"conditions\":[{\"type\":\"FailureTarget\",\"status\":\"True\"},"
                 "{\"type\":\"Failed\",\"status\":\"True\"}]}}",
                 when);
    bt_patch_status("batch/v1", "Job", "default", name, patch);
    if (when_out)
        strcpy(when_out, when);
}

static void finish_job(const char *cj, long long minute, bool ok)
{
    finish_job_at(cj, minute, ok, NULL);
}

static size_t active_count(const char *cj)
{
    json_t *c = bt_get("batch/v1", "CronJob", "default", cj);
    size_t n = json_array_size(json_object_get(json_object_get(c, "status"), "active"));
    json_decref(c);
    return n;
}

static bool first_active_is(const char *cj, const char *name)
{
    json_t *c = bt_get("batch/v1", "CronJob", "default", cj);
    json_t *a = json_array_get(json_object_get(json_object_get(c, "status"), "active"), 0);
    bool ok = a && !strcmp(bt_str(a, "name"), name);
    json_decref(c);
    return ok;
}

static bool cj_str_is(const char *cj, const char *path, const char *want)
{
    json_t *c = bt_get("batch/v1", "CronJob", "default", cj);
    bool ok = c && !strcmp(bt_str(c, path), want);
    json_decref(c);
    return ok;
}

static bool has_event(const char *reason)
{
    json_t *evs = bt_list("v1", "Event", "default", NULL);
    bool found = false;
    size_t i;
    json_t *e;
    json_array_foreach(evs, i, e) found |= !strcmp(bt_str(e, "reason"), reason);
    json_decref(evs);
    return found;
}

static void settle(void)
{
    for (int i = 0; i < 60; i++)
        bt_nap();
}

Test(cronjob, creates_jobs_on_schedule_with_upstream_names_and_status)
{
    cronjob("hello", "  schedule: '* * * * *'\n");
    settle();
    cr_assert_eq(count_jobs(), 0, "nothing before the first scheduled minute");
    bt_advance(31 * CTRL_SECOND); /* 00:01:01 */
    BT_WAIT(has_job_at("hello", MINUTE0 + 1), 10000, "hello-%lld", (long long)MINUTE0 + 1);
    json_t *cj = bt_get("batch/v1", "CronJob", "default", "hello");
    json_t *job = job_at("hello", MINUTE0 + 1);
    cr_assert_str_eq(bt_str(job, "metadata.labels.team"), "batch");
    cr_assert_str_eq(bt_str(job, "metadata.annotations.note"), "hello");
    json_t *ann = json_object_get(json_object_get(job, "metadata"), "annotations");
    cr_assert_str_eq(
        json_string_value(json_object_get(ann, "batch.kubernetes.io/cronjob-scheduled-timestamp")),
        "2026-01-01T00:01:00Z");
    json_t *ref =
        json_array_get(json_object_get(json_object_get(job, "metadata"), "ownerReferences"), 0);
    cr_assert_str_eq(bt_str(ref, "kind"), "CronJob");
    cr_assert_str_eq(bt_str(ref, "uid"), bt_str(cj, "metadata.uid"));
    cr_assert(json_is_true(json_object_get(ref, "controller")));
    cr_assert_str_eq(bt_str(job, "spec.template.spec.restartPolicy"), "OnFailure");
    json_decref(cj);

    BT_WAIT(active_count("hello") == 1, 10000, "status.active lists it");
    cj = bt_get("batch/v1", "CronJob", "default", "hello");
    json_t *a = json_array_get(json_object_get(json_object_get(cj, "status"), "active"), 0);
    cr_assert_str_eq(bt_str(a, "kind"), "Job");
    cr_assert_str_eq(bt_str(a, "apiVersion"), "batch/v1");
    cr_assert_str_eq(bt_str(a, "name"), bt_str(job, "metadata.name"));
    cr_assert_str_eq(bt_str(a, "uid"), bt_str(job, "metadata.uid"));
    cr_assert_str_eq(bt_str(cj, "status.lastScheduleTime"), "2026-01-01T00:01:00Z");
    json_decref(cj);
    json_decref(job);

    char done[32];
    finish_job_at("hello", MINUTE0 + 1, true, done);
    BT_WAIT(active_count("hello") == 0, 10000, "a finished job leaves status.active");
    BT_WAIT(cj_str_is("hello", "status.lastSuccessfulTime", done), 10000, "lastSuccessfulTime %s",
            done);
    BT_WAIT(has_event("SawCompletedJob"), 10000, "SawCompletedJob event");

    bt_advance(60 * CTRL_SECOND); /* 00:02:01 */
    BT_WAIT(has_job_at("hello", MINUTE0 + 2), 10000, "the next minute's job");
    BT_WAIT(cj_str_is("hello", "status.lastScheduleTime", "2026-01-01T00:02:00Z"), 10000,
            "lastScheduleTime moves");
    cr_assert_eq(count_jobs(), 2);
}

Test(cronjob, forbid_waits_for_the_running_job)
{
    cronjob("fb", "  schedule: '* * * * *'\n  concurrencyPolicy: Forbid\n");
    bt_advance(31 * CTRL_SECOND);
    BT_WAIT(has_job_at("fb", MINUTE0 + 1), 10000, "first job");
    BT_WAIT(active_count("fb") == 1, 10000, "active");
    bt_advance(60 * CTRL_SECOND); /* 00:02:01: the first still runs */
    settle();
    cr_assert_not(has_job_at("fb", MINUTE0 + 2), "Forbid: no second job while one runs");
    cr_assert_eq(count_jobs(), 1);
    finish_job("fb", MINUTE0 + 1, true);
    BT_WAIT(has_job_at("fb", MINUTE0 + 2), 10000, "the missed 00:02 run starts once it ends");
}

Test(cronjob, replace_deletes_the_running_job)
{
    cronjob("rp", "  schedule: '* * * * *'\n  concurrencyPolicy: Replace\n");
    bt_advance(31 * CTRL_SECOND);
    BT_WAIT(has_job_at("rp", MINUTE0 + 1), 10000, "first job");
    BT_WAIT(active_count("rp") == 1, 10000, "active");
    bt_advance(60 * CTRL_SECOND);
    BT_WAIT(has_job_at("rp", MINUTE0 + 2), 10000, "second job");
    BT_WAIT(!has_job_at("rp", MINUTE0 + 1), 10000, "the first was deleted");
    char want[64];
    snprintf(want, sizeof want, "rp-%lld", (long long)MINUTE0 + 2);
    BT_WAIT(active_count("rp") == 1 && first_active_is("rp", want), 10000,
            "status.active is the new job only");
}

Test(cronjob, allow_runs_concurrently)
{
    cronjob("al", "  schedule: '* * * * *'\n");
    bt_advance(31 * CTRL_SECOND);
    BT_WAIT(has_job_at("al", MINUTE0 + 1), 10000, "first job");
    bt_advance(60 * CTRL_SECOND);
    BT_WAIT(has_job_at("al", MINUTE0 + 2), 10000, "second job");
    BT_WAIT(active_count("al") == 2, 10000, "both active");
}

Test(cronjob, starting_deadline_skips_a_late_start)
{
    cronjob("late", "  schedule: '*/5 * * * *'\n  startingDeadlineSeconds: 10\n  suspend: true\n");
    settle();
    bt_advance(5 * 60 * CTRL_SECOND); /* 00:05:30: 30 s past 00:05 */
    settle();
    cr_assert_eq(count_jobs(), 0, "suspended: nothing");
    bt_patch("batch/v1", "CronJob", "default", "late", "{\"spec\":{\"suspend\":false}}");
    settle();
    cr_assert_eq(count_jobs(), 0, "00:05 is more than 10 s ago: skipped");
    bt_advance(4 * 60 * CTRL_SECOND + 31 * CTRL_SECOND); /* 00:10:01 */
    BT_WAIT(has_job_at("late", MINUTE0 + 10), 10000, "the 00:10 job");
    cr_assert_eq(count_jobs(), 1);
}

Test(cronjob, suspend_stops_scheduling)
{
    cronjob("sus", "  schedule: '* * * * *'\n  suspend: true\n");
    bt_advance(91 * CTRL_SECOND);
    settle();
    cr_assert_eq(count_jobs(), 0);
    json_t *cj = bt_get("batch/v1", "CronJob", "default", "sus");
    cr_assert_null(json_object_get(json_object_get(cj, "status"), "lastScheduleTime"));
    json_decref(cj);
}

Test(cronjob, history_limits_delete_the_oldest)
{
    cronjob("hist", "  schedule: '* * * * *'\n  successfulJobsHistoryLimit: 1\n"
                    "  failedJobsHistoryLimit: 1\n");
    bt_advance(31 * CTRL_SECOND);
    for (int k = 1; k <= 4; k++) {
        BT_WAIT(has_job_at("hist", MINUTE0 + k), 10000, "job %d", k);
        finish_job("hist", MINUTE0 + k, k != 2);
        BT_WAIT(active_count("hist") == 0, 10000, "job %d done", k);
        if (k < 4)
            bt_advance(60 * CTRL_SECOND);
    }
    BT_WAIT(count_jobs() == 2, 10000, "one successful and one failed job kept");
    cr_assert(has_job_at("hist", MINUTE0 + 4), "the newest successful one");
    cr_assert(has_job_at("hist", MINUTE0 + 2), "the failed one");
}

Test(cronjob, bad_schedule_and_time_zone_are_reported)
{
    bt_apply("apiVersion: batch/v1\n"
             "kind: CronJob\n"
             "metadata: {name: tz, namespace: default}\n"
             "spec:\n"
             "  schedule: '* * * * *'\n"
             "  timeZone: Europe/Paris\n"
             "  jobTemplate:\n"
             "    spec:\n"
             "      template:\n"
             "        spec:\n"
             "          restartPolicy: Never\n"
             "          containers: [{name: c, image: busybox}]\n");
    BT_WAIT(has_event("UnknownTimeZone"), 10000, "UnknownTimeZone event");
    bt_advance(60 * CTRL_SECOND);
    settle();
    cr_assert_eq(count_jobs(), 0);
}

/* With the Job controller too: Jobs run pods, finish, and the history limit
 * takes the old Jobs and their pods. */
static void setup_with_jobs(void)
{
    bt_start("{\"controllers\":[\"cronjob\",\"job\"],\"nodes\":0}", T0);
}

TestSuite(cronjob_jobs, .init = setup_with_jobs, .fini = bt_stop, .timeout = 60);

static bool run_pod_of(const char *job)
{
    char sel[128];
    snprintf(sel, sizeof sel, "job-name=%s", job);
    json_t *pods = bt_list("v1", "Pod", "default", sel);
    bool done = false;
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        if (strcmp(bt_str(p, "status.phase"), "Succeeded")) {
            bt_pod_phase("default", bt_str(p, "metadata.name"), "Succeeded", false);
            done = true;
        }
    }
    json_decref(pods);
    return done;
}

static size_t count_pods_all(void)
{
    json_t *pods = bt_list("v1", "Pod", "default", NULL);
    size_t n = json_array_size(pods);
    json_decref(pods);
    return n;
}

Test(cronjob_jobs, jobs_run_and_history_takes_their_pods)
{
    cronjob("tick", "  schedule: '* * * * *'\n  successfulJobsHistoryLimit: 1\n");
    for (int k = 1; k <= 2; k++) {
        bt_advance((k == 1 ? 31 : 60) * CTRL_SECOND);
        char name[64];
        snprintf(name, sizeof name, "tick-%lld", (long long)MINUTE0 + k);
        BT_WAIT(has_job_at("tick", MINUTE0 + k), 10000, "job %d", k);
        BT_WAIT(run_pod_of(name), 10000, "a pod of %s to finish", name);
        BT_WAIT(active_count("tick") == 0, 10000, "%s done", name);
    }
    BT_WAIT(count_jobs() == 1 && count_pods_all() == 1, 10000,
            "the older job and its pod are gone (%zu jobs, %zu pods)", count_jobs(),
            count_pods_all());
    cr_assert(has_job_at("tick", MINUTE0 + 2));
    json_t *cj = bt_get("batch/v1", "CronJob", "default", "tick");
    cr_assert_neq(bt_str(cj, "status.lastSuccessfulTime")[0], 0);
    json_decref(cj);
}
