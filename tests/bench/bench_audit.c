/*
 * bench_audit.c - audit logs in and out of scenarios, timed. Prints one
 * JSON object a line:
 *   import:  `scenario import audit` of a generated log of N events (100,000
 *            by default: RequestReceived and ResponseComplete stages of
 *            ConfigMap creates, patches and deletes by people, a controller's
 *            status writes, reads at Metadata level) into a scenario;
 *   record:  in-process creates and reads of a ConfigMap with the audit
 *            record off and on (fakeapi_record_open), per request;
 *   replay:  an imported hour of cluster activity
 *            (tests/fixtures/audit/hour-of-activity.jsonl) run to the end,
 *            with and without the Singleton controller under test.
 *   bench_audit [--events N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buggy.h"
#include "fakeapi/fakeapi.h"
#include "scn/audit.h"
#include "scn/run.h"

#ifndef AUDIT_FIXTURES
#define AUDIT_FIXTURES "tests/fixtures/audit"
#endif
#ifndef KH_FIXTURES
#define KH_FIXTURES "fixtures"
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fixed_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_fixed_setup(mgr, config);
}

static const char event_fmt[] =
    "{\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\",\"level\":\"RequestResponse\","
    "\"auditID\":\"%08lx-0000-4000-8000-000000000000\",\"stage\":\"%s\",\"requestURI\":"
    "\"/api/v1/namespaces/default/configmaps%s\",\"verb\":\"%s\",\"user\":{\"username\":"
    "\"%s\",\"groups\":[\"system:authenticated\"]},\"sourceIPs\":[\"10.0.0.1\"],"
    "\"userAgent\":\"%s\",\"objectRef\":{\"resource\":\"configmaps\",\"namespace\":"
    "\"default\",\"name\":\"cm-%ld\",\"apiVersion\":\"v1\"},\"responseStatus\":{\"metadata\""
    ":{},\"code\":%d}%s,\"requestReceivedTimestamp\":\"2024-05-14T%02ld:%02ld:%02ld.%06ldZ\","
    "\"stageTimestamp\":\"2024-05-14T%02ld:%02ld:%02ld.%06ldZ\"}\n";

static void write_log(const char *path, long n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    for (long i = 0; i < n / 2; i++) {
        long obj = i / 3, op = i % 3, us = i * 7000;
        long h = 8 + us / 3600000000L, m = us / 60000000 % 60, s = us / 1000000 % 60,
             frac = us % 1000000;
        char uri[64], body[256];
        const char *verb = op == 0 ? "create" : op == 1 ? "patch" : "delete";
        int code = op == 0 ? 201 : 200;
        if (op == 0) {
            snprintf(uri, sizeof uri, "?fieldManager=kubectl-create");
            snprintf(body, sizeof body,
                     ",\"requestObject\":{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\","
                     "\"metadata\":{\"name\":\"cm-%ld\",\"namespace\":\"default\"},\"data\":{"
                     "\"k\":\"%ld\"}}",
                     obj, i);
        } else if (op == 1) {
            snprintf(uri, sizeof uri, "/cm-%ld", obj);
            snprintf(body, sizeof body, ",\"requestObject\":{\"data\":{\"k\":\"%ld\"}}", i);
        } else {
            snprintf(uri, sizeof uri, "/cm-%ld", obj);
            body[0] = '\0';
        }
        bool ctrl = i % 10 == 9;
        for (int stage = 0; stage < 2; stage++)
            fprintf(f, event_fmt, (unsigned long)i, stage ? "ResponseComplete" : "RequestReceived",
                    uri, verb, ctrl ? "system:serviceaccount:default:mine" : "alice",
                    ctrl ? "mine/v1" : "kubectl/v1.29.2 (linux/amd64) kubernetes/4b8e819", obj,
                    code, stage ? body : "", h, m, s, frac, h, m, s, frac);
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    long n = 100000;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--events"))
            n = atol(argv[++i]);
    char path[] = "/tmp/bench-audit-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    write_log(path, n);

    const char *files[] = {path};
    const char *ctrls[] = {"mine"};
    scn_import_options o = {.files = files,
                            .n_files = 1,
                            .controllers = ctrls,
                            .n_controllers = 1,
                            .expect_writes = true};
    scn_import_stats st;
    scn_error err = {0};
    char *yaml = NULL;
    double t0 = now_s();
    int rc = scn_audit_import(&o, &yaml, &st, &err);
    double t1 = now_s();
    unlink(path);
    if (rc != 0) {
        fprintf(stderr, "import: %s:%d: %s: %s\n", err.file, err.line, err.field, err.message);
        return 1;
    }
    printf("{\"bench\":\"audit_import\",\"events\":%zu,\"requests\":%zu,\"replayed\":%zu,"
           "\"expected\":%zu,\"yaml_bytes\":%zu,\"seconds\":%.3f,\"events_per_s\":%.0f}\n",
           st.events, st.requests, st.replayed, st.expected, strlen(yaml), t1 - t0,
           (double)st.events / (t1 - t0));
    free(yaml);

    /* the cost of recording: off, then on */
    for (int on = 0; on < 2; on++) {
        fakeapi_server *srv;
        fakeapi_options fo = {.no_http = true, .seed = 1};
        if (fakeapi_start(&fo, &srv) < 0)
            return 1;
        char rec[] = "/tmp/bench-record-XXXXXX";
        int rfd = mkstemp(rec);
        if (rfd >= 0)
            close(rfd);
        if (on && fakeapi_record_open(srv, rec, NULL, NULL) < 0)
            return 1;
        const int reqs = 20000;
        double r0 = now_s();
        for (int i = 0; i < reqs; i++) {
            char body[160], uri[160];
            int status = 0;
            if (i % 2 == 0) {
                snprintf(body, sizeof body,
                         "{\"metadata\":{\"name\":\"c%d\"},\"data\":{\"k\":\"v\"}}", i);
                fakeapi_request(srv, "POST", "/api/v1/namespaces/default/configmaps",
                                "application/json", body, &status, NULL);
            } else {
                snprintf(uri, sizeof uri, "/api/v1/namespaces/default/configmaps/c%d", i - 1);
                fakeapi_request(srv, "GET", uri, NULL, NULL, &status, NULL);
            }
        }
        double r1 = now_s();
        fakeapi_stop(srv);
        unlink(rec);
        printf("{\"bench\":\"record\",\"recording\":%s,\"requests\":%d,\"seconds\":%.3f,"
               "\"us_per_request\":%.1f}\n",
               on ? "true" : "false", reqs, r1 - r0, (r1 - r0) * 1e6 / reqs);
    }

    scn_register_controller("singleton-fixed", fixed_setup, NULL);
    const char *hour[] = {AUDIT_FIXTURES "/hour-of-activity.jsonl"};
    const char *users[] = {"system:serviceaccount:default:singleton-buggy"};
    const char *fixed[] = {"singleton-fixed"};
    for (int with = 0; with < 2; with++) {
        scn_import_options ho = {.files = hour,
                                 .n_files = 1,
                                 .snapshot = KH_FIXTURES "/singleton/crd.yaml",
                                 .controllers = with ? fixed : NULL,
                                 .n_controllers = with ? 1 : 0,
                                 .actor_users = users,
                                 .n_actor_users = with ? 1 : 0,
                                 .expect_writes = with};
        if (scn_audit_import(&ho, &yaml, &st, &err) != 0) {
            fprintf(stderr, "import: %s\n", err.message);
            return 1;
        }
        scn_scenario *sc = NULL;
        if (scn_scenario_parse("hour.yaml", yaml, strlen(yaml), &sc, &err) != 0) {
            fprintf(stderr, "parse: %d: %s\n", err.line, err.message);
            return 1;
        }
        scn_run_options ro = {.seed = 1, .seed_given = true};
        scn_run_result r;
        if (scn_run(sc, &ro, &r) != 0 || !r.passed) {
            fprintf(stderr, "replay: %s\n", r.message);
            return 1;
        }
        printf("{\"bench\":\"audit_replay_hour\",\"controller\":\"%s\",\"steps\":%zu,"
               "\"replayed\":%zu,\"virtual_s\":%.1f,\"seconds\":%.3f}\n",
               with ? "singleton-fixed" : "none", sc->n_steps, st.replayed,
               (double)r.virtual_ns / 1e9, r.real_seconds);
        scn_scenario_free(sc);
        free(yaml);
    }
    return 0;
}
