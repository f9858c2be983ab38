/*
 * test_steps.c - scenario steps run whole: a patch of the status
 * subresource, which the object's own endpoint ignores; a restart, whose
 * new incarnation draws a fresh seed (its jitter differs) while the same
 * run seed still gives the same trace; a crashed replica whose write the
 * server held back (a delay fault), which never reaches the server, not
 * even when the run is torn down.
 *
 * Each scenario is parsed from text as if it were a file in
 * scenarios/examples (its fixtures are named relative to it).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replicaset.h"
#include "scn/run.h"
#include "scn_int.h"

#ifndef KH_SCENARIOS
#define KH_SCENARIOS "scenarios/examples"
#endif

#define EPOCH 1767225600000000000LL /* the virtual clock's start */

static int replicaset_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_replicaset_setup(mgr, config);
}

/* "writer": for each ConfigMap labelled role=in, creates <name>-out, and
 * notes what came back, with the incarnation of the manager that asked
 * (each setup is the next incarnation: one replica here). */
#define MAX_WRITES 64
static pthread_mutex_t writes_mu = PTHREAD_MUTEX_INITIALIZER;
typedef struct noted_write {
    int incarnation, rc;
} noted_write;
static noted_write writes[MAX_WRITES];
static int n_writes, n_setups;

static ctrl_result writer_reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    int incarnation = *(int *)user;
    char name[256];
    snprintf(name, sizeof name, "%s-out", req->name);
    json_t *cm = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                           "metadata", "name", name, "namespace", req->ns);
    ctrl_error err = {0};
    int rc = cm ? ctrl_client_create(ctrl_ctx_client(ctx), cm, NULL, NULL, &err) : CTRL_ERR_NOMEM;
    json_decref(cm);
    ctrl_error_deinit(&err);
    pthread_mutex_lock(&writes_mu);
    if (n_writes < MAX_WRITES)
        writes[n_writes++] = (noted_write){.incarnation = incarnation, .rc = rc};
    pthread_mutex_unlock(&writes_mu);
    return rc == 0 || ctrl_err_is_already_exists(rc) ? ctrl_done() : ctrl_err(rc);
}

static int writer_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)config, (void)user;
    int *incarnation = malloc(sizeof *incarnation);
    if (!incarnation)
        return CTRL_ERR_NOMEM;
    pthread_mutex_lock(&writes_mu);
    *incarnation = ++n_setups;
    pthread_mutex_unlock(&writes_mu);
    ctrl_builder *b = ctrl_builder_for(mgr, "v1", "ConfigMap");
    b = ctrl_builder_with_predicates(b, ctrl_pred_label_selector("role=in"));
    b = ctrl_builder_with_user_free(b, free);
    return ctrl_builder_complete(b, writer_reconcile, incarnation);
}

static void setup(void)
{
    static bool done;
    if (!done) {
        cr_assert_eq(scn_register_controller("replicaset", replicaset_setup, NULL), 0);
        cr_assert_eq(scn_register_controller("writer", writer_setup, NULL), 0);
    }
    done = true;
}

TestSuite(steps, .init = setup);

static scn_scenario *parse(const char *text)
{
    scn_scenario *sc = NULL;
    scn_error err = {0};
    int rc = scn_scenario_parse(KH_SCENARIOS "/steps.yaml", text, strlen(text), &sc, &err);
    cr_assert_eq(rc, 0, "%s:%d: %s: %s", err.file, err.line, err.field, err.message);
    return sc;
}

static scn_run_result run_traced(const scn_scenario *sc, uint64_t seed, const char *trace)
{
    scn_run_options o = {.seed = seed, .seed_given = true, .trace_path = trace};
    scn_run_result r;
    cr_assert_eq(scn_run(sc, &o, &r), 0, "seed %llu could not run", (unsigned long long)seed);
    return r;
}

#define PODSET "apiVersion: example.com/v1, kind: PodSet, namespace: default, name: web"

/* No controller runs: only the steps write. A merge patch and a JSON patch
 * of the status subresource change .status; the same field in a patch of
 * the object is dropped (the CRD has a status subresource), while its spec
 * changes. */
Test(steps, patch_writes_the_status_subresource)
{
    scn_scenario *sc = parse(
        "name: patch-status\n"
        "fixtures: [../../fixtures/replicaset/crd.yaml, ../../fixtures/replicaset/basic.yaml]\n"
        "steps:\n"
        "  - patch: {" PODSET ", subresource: status, patch: {status: {replicas: 7}}}\n"
        "  - expect: {field: {" PODSET ", path: .status.replicas, equals: 7}}\n"
        "  - patch: {" PODSET ", patch: {spec: {replicas: 4}, status: {replicas: 9}}}\n"
        "  - expect: {field: {" PODSET ", path: .status.replicas, equals: 7}}\n"
        "  - expect: {field: {" PODSET ", path: .spec.replicas, equals: 4}}\n"
        "  - patch: {" PODSET ", subresource: status, type: json,\n"
        "            patch: [{op: replace, path: /status/replicas, value: 8}]}\n"
        "  - expect: {field: {" PODSET ", path: .status.replicas, equals: 8}}\n"
        "  - expect: {field: {" PODSET ", path: .spec.replicas, equals: 4}}\n");
    scn_run_result r = run_traced(sc, 1, NULL);
    cr_assert(r.passed, "%s", r.message);
    scn_scenario_free(sc);

    /* a kind without that subresource: the step fails with the server's
     * answer and the path it patched */
    sc = parse("name: patch-status-none\n"
               "fixtures: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: "
               "default}}]\n"
               "steps:\n"
               "  - patch: {apiVersion: v1, kind: ConfigMap, namespace: default, name: c,\n"
               "            subresource: status, patch: {data: {a: b}}}\n");
    r = run_traced(sc, 1, NULL);
    cr_assert_not(r.passed);
    cr_assert_eq(r.failed_step, 0);
    cr_assert(strstr(r.message, "patch /api/v1/namespaces/default/configmaps/c/status: 404") ==
                  r.message,
              "%s", r.message);
    scn_scenario_free(sc);
}

static char *slurp(const char *path, size_t *len)
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
    *len = (size_t)n;
    return buf;
}

/* When the client (exactly this User-Agent) watched PodSets, in seconds
 * from its first watch: the informer renews its watch after a timeout
 * drawn from the manager's seed (300 s plus up to 300 s of jitter). */
static int watch_offsets(const char *trace, const char *client, double *out, int max)
{
    char key[256];
    snprintf(key, sizeof key,
             "{\"client\":\"%s\",\"code\":200,\"kind\":\"request\",\"method\":\"GET\",\"path\":"
             "\"/apis/example.com/v1/podsets\",",
             client);
    int n = 0;
    long long first = 0;
    for (const char *p = trace; n < max && (p = strstr(p, key)) != NULL; p++) {
        const char *eol = strchr(p, '\n');
        const char *w = strstr(p, "\"verb\":\"watch\"");
        const char *t = strstr(p, "\"t\":");
        if (!w || !t || (eol && (w > eol || t > eol)))
            continue;
        long long v = strtoll(t + 4, NULL, 10);
        if (n == 0)
            first = v;
        out[n++] = (double)(v - first) / 1e9;
    }
    return n;
}

Test(steps, a_restarted_incarnation_draws_a_fresh_seed)
{
    /* the derivation: the first incarnation keeps the seed runs always had;
     * each later one another, the same for the same arguments */
    cr_assert_eq(scn__manager_seed(7, 0, 1), 7ULL * 1000003 + 1);
    cr_assert_eq(scn__manager_seed(7, 2, 1), 7ULL * 1000003 + 3);
    cr_assert_eq(scn__manager_seed(7, 0, 2), scn__manager_seed(7, 0, 2));
    cr_assert_neq(scn__manager_seed(7, 0, 2), scn__manager_seed(7, 0, 1));
    cr_assert_neq(scn__manager_seed(7, 0, 2), scn__manager_seed(7, 0, 3));
    cr_assert_neq(scn__manager_seed(7, 0, 2), scn__manager_seed(7, 1, 2));
    cr_assert_neq(scn__manager_seed(7, 0, 2), scn__manager_seed(8, 0, 2));

    scn_scenario *sc =
        parse("name: restart-seed\n"
              "controllers: [replicaset]\n"
              "fixtures: [../../fixtures/replicaset/crd.yaml, "
              "../../fixtures/replicaset/basic.yaml]\n"
              "steps:\n"
              "  - advance: 20m\n"
              "  - restart: {replica: 0}\n"
              "  - advance: 20m\n"
              "  - restart: {replica: 0}\n"
              "  - advance: 20m\n"
              "  - expect: {count: {apiVersion: v1, kind: Pod, namespace: default, selector: "
              "podset=web, equals: 3}}\n");
    char a[] = "/tmp/scn-steps-XXXXXX", b[] = "/tmp/scn-steps-XXXXXX";
    int fa = mkstemp(a), fb = mkstemp(b);
    cr_assert(fa >= 0 && fb >= 0);
    close(fa);
    close(fb);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        scn_run_result r1 = run_traced(sc, seed, a), r2 = run_traced(sc, seed, b);
        cr_assert(r1.passed, "seed %llu: %s", (unsigned long long)seed, r1.message);
        cr_assert(r2.passed);
        size_t la, lb;
        char *ta = slurp(a, &la), *tb = slurp(b, &lb);
        /* the same seed: the same trace, byte for byte */
        cr_assert_eq(r1.trace_hash, r2.trace_hash);
        cr_assert(la == lb && memcmp(ta, tb, la) == 0, "seed %llu: traces differ",
                  (unsigned long long)seed);
        /* each incarnation has its own identity and renews its watch on its
         * own schedule: the offsets from its start differ */
        double o1[8], o2[8], o3[8];
        int n1 = watch_offsets(ta, "scenario/replicaset-0", o1, 8);
        int n2 = watch_offsets(ta, "scenario/replicaset-0.r2", o2, 8);
        int n3 = watch_offsets(ta, "scenario/replicaset-0.r3", o3, 8);
        cr_assert(n1 >= 2 && n2 >= 2 && n3 >= 2, "seed %llu: %d %d %d watches",
                  (unsigned long long)seed, n1, n2, n3);
        cr_assert(o1[1] != o2[1] && o2[1] != o3[1] && o1[1] != o3[1],
                  "seed %llu: the first renewals came %.3f, %.3f and %.3f s after each start",
                  (unsigned long long)seed, o1[1], o2[1], o3[1]);
        free(ta);
        free(tb);
    }
    unlink(a);
    unlink(b);
    scn_scenario_free(sc);
}

/* The writer's create is held back by the server (a 30 s delay) when its
 * replica crashes; the replica restarts and its new incarnation creates the
 * ConfigMap. When the run is torn down the frozen incarnation's held create
 * is dropped, not answered: it gets no answer from the server (a transport
 * error), and neither does anything else it sends. */
Test(steps, a_crashed_replica_writes_nothing_even_in_teardown)
{
    scn_scenario *sc = parse(
        "name: frozen-writes\n"
        "controllers: [writer]\n"
        "steps:\n"
        "  - fault: {name: slow, rule: {match: {verb: create, resource: configmaps, agent: "
        "scenario/writer-0},\n"
        "            when: {first: 1}, action: {delay: 30s}}}\n"
        "  - apply: {manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: "
        "default, labels: {role: in}}}}\n"
        "  - crash: {replica: 0}\n"
        "  - restart: {replica: 0}\n"
        "  - wait: {for: {exists: {apiVersion: v1, kind: ConfigMap, namespace: default, name: "
        "a-out}}, timeout: 1m}\n");
    for (uint64_t seed = 1; seed <= 3; seed++) {
        pthread_mutex_lock(&writes_mu);
        n_writes = n_setups = 0;
        pthread_mutex_unlock(&writes_mu);
        scn_run_result r = run_traced(sc, seed, NULL);
        cr_assert(r.passed, "seed %llu: %s", (unsigned long long)seed, r.message);
        int first = 0, second = 0;
        for (int i = 0; i < n_writes; i++) {
            if (writes[i].incarnation == 1) {
                first++;
                cr_assert(ctrl_err_is_transport(writes[i].rc),
                          "seed %llu: the crashed incarnation's create got an answer: %s",
                          (unsigned long long)seed, ctrl_strerror(writes[i].rc));
            } else {
                second += writes[i].rc == 0;
            }
        }
        cr_assert_geq(first, 1, "seed %llu: its held create returned when the run ended",
                      (unsigned long long)seed);
        cr_assert_eq(second, 1, "seed %llu: the new incarnation created a-out",
                     (unsigned long long)seed);
    }
    scn_scenario_free(sc);
}
