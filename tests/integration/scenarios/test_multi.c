/*
 * test_multi.c - scenarios that run several controllers: manager replica i
 * runs every controller whose replicas are above i, and a crash, partition
 * or restart of replica i acts on all of them. The PodSet controller
 * (`replicaset`) and the CronTask controller (`cronjob`) run side by side,
 * on their own kinds, so what each did (Pods, Jobs) shows which survived.
 *
 * Each scenario is parsed from text as if it were a file in
 * scenarios/examples (its fixtures are named relative to it).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cronjob.h"
#include "replicaset.h"
#include "scn/run.h"

#ifndef KH_SCENARIOS
#define KH_SCENARIOS "scenarios/examples"
#endif

static int replicaset_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_replicaset_setup(mgr, config);
}

static int cronjob_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_cronjob_setup(mgr, config);
}

static void setup(void)
{
    static bool done;
    if (!done) {
        cr_assert_eq(scn_register_controller("replicaset", replicaset_setup, NULL), 0);
        cr_assert_eq(scn_register_controller("cronjob", cronjob_setup, NULL), 0);
    }
    done = true;
}

TestSuite(multi, .init = setup);

#define EPOCH 1767225600000000000LL /* the virtual clock's start */

#define FIXTURES                                                                                   \
    "fixtures:\n"                                                                                  \
    "  - ../../fixtures/replicaset/crd.yaml\n"                                                     \
    "  - ../../fixtures/replicaset/basic.yaml\n"                                                   \
    "  - ../../fixtures/cronjob/crd.yaml\n"                                                        \
    "  - ../../fixtures/cronjob/every-hour.yaml\n"

#define PODS(n)                                                                                    \
    "{count: {apiVersion: v1, kind: Pod, namespace: default, selector: podset=web, equals: " #n "}}"
#define JOBS(n)                                                                                    \
    "{count: {apiVersion: batch/v1, kind: Job, namespace: default, selector: crontask=hourly, "    \
    "equals: " #n "}}"

static scn_scenario *parse(const char *text)
{
    scn_scenario *sc = NULL;
    scn_error err = {0};
    int rc = scn_scenario_parse(KH_SCENARIOS "/multi.yaml", text, strlen(text), &sc, &err);
    cr_assert_eq(rc, 0, "%s:%d: %s: %s", err.file, err.line, err.field, err.message);
    return sc;
}

static scn_run_result run_seed(const scn_scenario *sc, uint64_t seed, const char *trace)
{
    scn_run_options o = {.seed = seed, .seed_given = true, .trace_path = trace};
    scn_run_result r;
    cr_assert_eq(scn_run(sc, &o, &r), 0, "seed %llu could not run", (unsigned long long)seed);
    return r;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Successful writes (2xx, not GETs) in the trace by this client or its
 * controllers' own ("scenario/cronjob-0/crontask"). */
static int writes_by(const char *trace, const char *client)
{
    char key[256];
    snprintf(key, sizeof key, "{\"client\":\"%s", client);
    int n = 0;
    for (const char *p = trace; (p = strstr(p, key)) != NULL; p++) {
        const char *rest = p + strlen(key);
        const char *eol = strchr(p, '\n');
        const char *code = strstr(p, "\"code\":2");
        const char *get = strstr(p, "\"method\":\"GET\"");
        if ((*rest == '"' || *rest == '/') && code && (!eol || code < eol) &&
            (!get || (eol && get > eol)))
            n++;
    }
    return n;
}

/* Two controllers of one replica each are one manager replica, 0: a crash
 * of replica 0 stops both (no Pods for the new scale, no Jobs in two
 * hours), and replica 1 does not exist. */
Test(multi, crash_of_replica_0_stops_every_controller_of_it)
{
    scn_scenario *sc =
        parse("name: multi-crash\n"
              "controllers: [replicaset, cronjob]\n" FIXTURES "steps:\n"
              "  - wait: {for: " PODS(
                  3) ", timeout: 1m}\n"
                     "  - crash: {replica: 0}\n"
                     "  - scale: {apiVersion: example.com/v1, kind: PodSet, namespace: "
                     "default, name: web, replicas: 5}\n"
                     "  - advance: 2h\n"
                     "  - expect: " PODS(3) "\n"
                                            "  - expect: " JOBS(0) "\n");
    for (uint64_t seed = 1; seed <= 5; seed++) {
        scn_run_result r = run_seed(sc, seed, NULL);
        cr_assert(r.passed, "seed %llu: %s", (unsigned long long)seed, r.message);
    }
    scn_scenario_free(sc);

    /* the same controllers uncrashed do both: the expectations above mean
     * something */
    sc = parse(
        "name: multi-alive\n"
        "controllers: [replicaset, cronjob]\n" FIXTURES "steps:\n"
        "  - wait: {for: " PODS(
            3) ", timeout: 1m}\n"
               "  - scale: {apiVersion: example.com/v1, kind: PodSet, namespace: default, name: "
               "web, replicas: 5}\n"
               "  - advance: 2h\n"
               "  - expect: " PODS(5) "\n"
                                      "  - expect: " JOBS(2) "\n");
    scn_run_result r = run_seed(sc, 1, NULL);
    cr_assert(r.passed, "%s", r.message);
    scn_scenario_free(sc);

    const char *bad = "name: x\ncontrollers: [replicaset, cronjob]\nsteps:\n"
                      "  - crash: {replica: 1}\n";
    scn_scenario *none = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_parse("x.yaml", bad, strlen(bad), &none, &err), SCN_ERR_INPUT);
    cr_assert(strstr(err.message, "replica 1 does not exist") != NULL, "%s", err.message);
}

/* Replica 1 of [{replicaset, replicas: 2}, cronjob] runs the PodSet
 * controller only: crashing it leaves the CronTask controller (replica 0)
 * running. Restarting replica 0 restarts both of its managers, each as a
 * new incarnation. */
Test(multi, replicas_address_whole_managers)
{
    char trace[] = "/tmp/scn-multi-XXXXXX";
    int fd = mkstemp(trace);
    cr_assert_geq(fd, 0);
    close(fd);
    scn_scenario *sc =
        parse("name: multi-replicas\n"
              "controllers: [{name: replicaset, replicas: 2}, cronjob]\n" FIXTURES "steps:\n"
              "  - wait: {for: " PODS(
                  3) ", timeout: 1m}\n"
                     "  - crash: {replica: 1}\n"
                     "  - advance: 61m\n"
                     "  - expect: " JOBS(1) "\n"
                                            "  - restart: {replica: 0}\n"
                                            "  - advance: 1h\n"
                                            "  - expect: " JOBS(
                                                2) "\n"
                                                   "  - scale: {apiVersion: example.com/v1, kind: "
                                                   "PodSet, namespace: default, "
                                                   "name: web, replicas: 4}\n"
                                                   "  - wait: {for: " PODS(4) ", timeout: 1m}\n");
    for (uint64_t seed = 1; seed <= 4; seed++) {
        scn_run_result r = run_seed(sc, seed, trace);
        cr_assert(r.passed, "seed %llu: %s", (unsigned long long)seed, r.message);
        char *t = slurp(trace);
        /* both of replica 0's managers came back as .r2, the crashed
         * replica 1 did not */
        cr_assert_gt(writes_by(t, "scenario/cronjob-0.r2"), 0);
        cr_assert(strstr(t, "\"client\":\"scenario/replicaset-0.r2\"") != NULL);
        cr_assert_null(strstr(t, "\"client\":\"scenario/replicaset-1.r2\""));
        free(t);
    }
    scn_scenario_free(sc);
    unlink(trace);
}

/* A crash at replica 0's third write counts the writes of both its
 * managers: armed at 60 s, the CronTask controller writes twice at 01:00 (the Job, the
 * CronTask's status), so the PodSet controller's first write after that is
 * the third, dropped, and replica 0 is gone: no fourth Pod, no second Job. */
Test(multi, crash_at_write_counts_every_manager_of_the_replica)
{
    char trace[] = "/tmp/scn-multi-XXXXXX";
    int fd = mkstemp(trace);
    cr_assert_geq(fd, 0);
    close(fd);
    scn_scenario *sc = parse(
        "name: multi-atwrite\n"
        "controllers: [replicaset, cronjob]\n" FIXTURES "steps:\n"
        "  - wait: {for: " PODS(
            3) ", timeout: 1m}\n"
               "  - advance: 1m\n"
               "  - crash: {replica: 0, atWrite: 3}\n"
               "  - advance: 61m\n"
               "  - expect: " JOBS(
                   1) "\n"
                      "  - scale: {apiVersion: example.com/v1, kind: PodSet, namespace: default, "
                      "name: web, replicas: 4}\n"
                      "  - advance: 2h\n"
                      "  - expect: " PODS(3) "\n"
                                             "  - expect: " JOBS(1) "\n");
    for (uint64_t seed = 1; seed <= 4; seed++) {
        scn_run_result r = run_seed(sc, seed, trace);
        cr_assert(r.passed, "seed %llu: %s", (unsigned long long)seed, r.message);
        char *t = slurp(trace);
        /* the writes of replica 0's two managers after the crash was armed
         * (at 60 s): two answered, then none */
        int answered = 0, dropped = 0;
        for (const char *line = t; line && *line;
             line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
            const char *eol = strchr(line, '\n');
            char one[2048];
            size_t n = eol ? (size_t)(eol - line) : strlen(line);
            snprintf(one, sizeof one, "%.*s", (int)(n < sizeof one ? n : sizeof one - 1), line);
            const char *tp = strstr(one, "\"t\":");
            if (!tp || strtoll(tp + 4, NULL, 10) <= EPOCH + 60000000000LL)
                continue;
            bool ours = strstr(one, "\"client\":\"scenario/replicaset-0") ||
                        strstr(one, "\"client\":\"scenario/cronjob-0");
            if (!ours || !strstr(one, "\"kind\":\"request\"") || strstr(one, "\"method\":\"GET\""))
                continue;
            if (strstr(one, "\"code\":2")) {
                cr_assert_eq(dropped, 0, "seed %llu: a write answered after the crash: %s",
                             (unsigned long long)seed, one);
                answered++;
            } else {
                dropped++;
            }
        }
        cr_assert_eq(answered, 2, "seed %llu", (unsigned long long)seed);
        cr_assert_geq(dropped, 1, "seed %llu", (unsigned long long)seed);
        free(t);
    }
    scn_scenario_free(sc);
    unlink(trace);
}

/* singleLeader on the PodSet controller's Lease judges that controller's
 * writes only: the CronTask controller of replica 0 writes its Jobs whoever
 * leads the PodSets, in seeds where replica 1 leads too. */
Test(multi, single_leader_judges_the_controller_of_its_lease)
{
    char trace[] = "/tmp/scn-multi-XXXXXX";
    int fd = mkstemp(trace);
    cr_assert_geq(fd, 0);
    close(fd);
    scn_scenario *sc =
        parse("name: multi-leader\n"
              "controllers: [{name: replicaset, replicas: 2}, cronjob]\n" FIXTURES "steps:\n"
              "  - wait: {for: " PODS(
                  3) ", timeout: 1m}\n"
                     "  - advance: 61m\n"
                     "  - expect: " JOBS(
                         1) "\n"
                            "invariants:\n"
                            "  - singleLeader: {namespace: kube-system, name: replicaset}\n");
    int replica_1_led = 0;
    for (uint64_t seed = 3; seed <= 6; seed++) {
        scn_run_result r = run_seed(sc, seed, trace);
        cr_assert(r.passed, "seed %llu: %s", (unsigned long long)seed, r.message);
        char *t = slurp(trace);
        replica_1_led +=
            strstr(t, "{\"client\":\"scenario/replicaset-1/leader-election\",\"code\":201,\"kind\":"
                      "\"request\",\"method\":\"POST\",\"path\":\"/apis/"
                      "coordination.k8s.io/v1/namespaces/kube-system/leases\"") != NULL;
        free(t);
    }
    cr_assert_gt(replica_1_led, 0, "in seeds 4 and 5 replica 1 creates the Lease first");
    scn_scenario_free(sc);
    unlink(trace);
}

/* The replica (0 or 1) whose manager of controller created its Lease. */
static int first_holder(const char *trace, const char *controller)
{
    for (int k = 0; k < 2; k++) {
        char key[256];
        snprintf(key, sizeof key,
                 "{\"client\":\"scenario/%s-%d/leader-election\",\"code\":201,\"kind\":\"request\","
                 "\"method\":\"POST\"",
                 controller, k);
        if (strstr(trace, key))
            return k;
    }
    return -1;
}

/* Successful writes of the Lease kube-system/<controller> by any client but
 * replica k's manager of it. */
static int lease_writes_not_by(const char *trace, const char *controller, int k)
{
    char path[256], mine[256];
    snprintf(path, sizeof path,
             "\"path\":\"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/%s\"",
             controller);
    snprintf(mine, sizeof mine, "{\"client\":\"scenario/%s-%d/", controller, k);
    int n = 0;
    for (const char *line = trace; line && *line;
         line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        const char *p = strstr(line, path), *code = strstr(line, "\"code\":2"),
                   *get = strstr(line, "\"method\":\"GET\"");
        if (p && (size_t)(p - line) < len && code && (size_t)(code - line) < len &&
            !(get && (size_t)(get - line) < len) && strncmp(line, mine, strlen(mine)) != 0)
            n++;
    }
    return n;
}

/* Two leader-elected controllers hold two Leases, sometimes from different
 * replicas. `crash: {replica: leader, controller: cronjob}` crashes the
 * replica holding the CronTask controller's Lease (another takes it over):
 * the whole replica, so the PodSet Lease changes hands too when the same
 * replica held it, and not when another did. */
Test(multi, leader_of_a_named_controller)
{
    char trace[] = "/tmp/scn-multi-XXXXXX";
    int fd = mkstemp(trace);
    cr_assert_geq(fd, 0);
    close(fd);
#define LEASE(c, rest)                                                                             \
    "{field: {apiVersion: coordination.k8s.io/v1, kind: Lease, namespace: kube-system, name: " c   \
    ", " rest "}}"
    scn_scenario *sc =
        parse(
            "name: multi-leaders\n"
            "controllers: [{name: replicaset, replicas: 2}, {name: cronjob, replicas: "
            "2}]\n" FIXTURES "steps:\n"
            "  - wait: {for: " LEASE(
                "cronjob",
                "path: .spec.holderIdentity, matches: "
                "'^scenario/cronjob-[01]$'") ", timeout: 1m}\n"
                                             "  - wait: {for: " LEASE(
                                                 "replicaset",
                                                 "path: .spec.holderIdentity, matches: "
                                                 "'^scenario/replicaset-[01]$'") ", timeout: 1m}\n"
                                                                                 "  - crash: "
                                                                                 "{replica: "
                                                                                 "leader, "
                                                                                 "controller: "
                                                                                 "cronjob, as: c}\n"
                                                                                 "  - wait: "
                                                                                 "{for: " LEASE(
                                                                                     "cronjob",
                                                                                     "path: "
                                                                                     ".spec."
                                                                                     "leaseTransiti"
                                                                                     "ons, equals: "
                                                                                     "1") ", "
                                                                                          "timeout:"
                                                                                          " 40s}\n"
                                                                                          "  - "
                                                                                          "advance:"
                                                                                          " 30s\n"
                                                                                          "  - "
                                                                                          "restart:"
                                                                                          " {"
                                                                                          "replica:"
                                                                                          " c}\n"
                                                                                          "  - "
                                                                                          "advance:"
                                                                                          " 30s\n"
                                                                                          "invarian"
                                                                                          "ts:\n"
                                                                                          "  - "
                                                                                          "singleLe"
                                                                                          "ader: "
                                                                                          "{namespa"
                                                                                          "ce: "
                                                                                          "kube-"
                                                                                          "system, "
                                                                                          "name: "
                                                                                          "replicas"
                                                                                          "et}\n"
                                                                                          "  - "
                                                                                          "singleLe"
                                                                                          "ader: "
                                                                                          "{namespa"
                                                                                          "ce: "
                                                                                          "kube-"
                                                                                          "system, "
                                                                                          "name: "
                                                                                          "cronjob}"
                                                                                          "\n");
    int apart = 0, together = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        scn_run_result r = run_seed(sc, seed, trace);
        cr_assert(r.passed, "seed %llu: %s", (unsigned long long)seed, r.message);
        char *t = slurp(trace);
        int x = first_holder(t, "cronjob"), y = first_holder(t, "replicaset");
        cr_assert(x >= 0 && y >= 0, "seed %llu", (unsigned long long)seed);
        cr_assert_gt(lease_writes_not_by(t, "cronjob", x), 0, "seed %llu: the cronjob Lease moved",
                     (unsigned long long)seed);
        if (x != y) {
            apart++;
            cr_assert_eq(lease_writes_not_by(t, "replicaset", y), 0,
                         "seed %llu: replica %d, which the crash spared, kept the PodSet Lease",
                         (unsigned long long)seed, y);
        } else {
            together++;
            cr_assert_gt(lease_writes_not_by(t, "replicaset", y), 0,
                         "seed %llu: replica %d crashed whole: its PodSet Lease moved too",
                         (unsigned long long)seed, y);
        }
        free(t);
    }
    cr_assert(apart > 0 && together > 0, "seeds 1..4 have both cases: %d apart, %d together", apart,
              together);
    scn_scenario_free(sc);
    unlink(trace);

    /* two leader-elected controllers: leader alone is ambiguous */
    const char *bad = "name: x\ncontrollers: [{name: a, replicas: 2}, {name: b, replicas: 3}]\n"
                      "steps:\n  - crash: {replica: leader}\n";
    scn_scenario *none = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_parse("x.yaml", bad, strlen(bad), &none, &err), SCN_ERR_INPUT);
    cr_assert(strstr(err.message, "or controller: NAME to say whose Lease") != NULL, "%s",
              err.message);
}
