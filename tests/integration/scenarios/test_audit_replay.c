/*
 * test_audit_replay.c - imported audit logs replayed: an hour of cluster
 * activity ends in the state the log recorded; the writes a controller made
 * in the log are expected of the controller under test (the fixed and the
 * buggy Singleton controllers make them; a controller that does not fails
 * the expectation); the trace of a real run goes to an audit log and back
 * unchanged but for what an audit log cannot hold.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buggy.h"
#include "scn/audit.h"
#include "scn/run.h"

#ifndef KH_SCENARIOS
#define KH_SCENARIOS "scenarios/examples"
#endif
#define AUDIT KH_SCENARIOS "/../../tests/fixtures/audit"
#define CRD KH_SCENARIOS "/../../fixtures/singleton/crd.yaml"

static int buggy_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_buggy_setup(mgr, config);
}

static int fixed_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_fixed_setup(mgr, config);
}

static void setup(void)
{
    static bool done;
    if (!done) {
        scn_register_controller("singleton-buggy", buggy_setup, NULL);
        scn_register_controller("singleton-fixed", fixed_setup, NULL);
    }
    done = true;
}

TestSuite(audit_replay, .init = setup);

static char *import(scn_import_options o)
{
    static const char *hour = AUDIT "/hour-of-activity.jsonl";
    char *yaml = NULL;
    scn_error err = {0};
    if (!o.files) {
        o.files = &hour;
        o.n_files = 1;
    }
    cr_assert_eq(scn_audit_import(&o, &yaml, NULL, &err), 0, "%s:%d: %s: %s", err.file, err.line,
                 err.field, err.message);
    return yaml;
}

static scn_run_result run_text(const char *text, uint64_t seed, const char *trace)
{
    scn_scenario *sc = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_parse("imported.yaml", text, strlen(text), &sc, &err), 0,
                 "%d: %s: %s", err.line, err.field, err.message);
    scn_run_options o = {.seed = seed, .seed_given = true, .trace_path = trace};
    scn_run_result r;
    cr_assert_eq(scn_run(sc, &o, &r), 0, "%s", r.message);
    scn_scenario_free(sc);
    return r;
}

/* The last state the log shows of each ConfigMap (its answers' data). */
static json_t *last_configmaps(void)
{
    FILE *f = fopen(AUDIT "/hour-of-activity.jsonl", "r");
    char *line = NULL;
    size_t cap = 0;
    json_t *last = json_object();
    cr_assert_not_null(f);
    while (getline(&line, &cap, f) > 0) {
        json_t *ev = json_loads(line, 0, NULL);
        json_t *resp = json_object_get(ev, "responseObject");
        const char *kind = json_string_value(json_object_get(resp, "kind"));
        json_int_t code =
            json_integer_value(json_object_get(json_object_get(ev, "responseStatus"), "code"));
        if (kind && !strcmp(kind, "ConfigMap") && code < 300 && json_object_get(resp, "data"))
            json_object_set(
                last, json_string_value(json_object_get(json_object_get(resp, "metadata"), "name")),
                json_object_get(resp, "data"));
        json_decref(ev);
    }
    free(line);
    fclose(f);
    return last;
}

Test(audit_replay, an_hour_of_activity_ends_as_recorded)
{
    char *yaml = import((scn_import_options){.snapshot = CRD});
    json_t *last = last_configmaps();
    cr_assert_geq(json_object_size(last), 3);
    /* the steps are the file's last section: append the checks */
    size_t len = strlen(yaml) + 8192;
    char *text = malloc(len);
    snprintf(text, len, "%s", yaml);
    const char *name;
    json_t *data;
    json_object_foreach(last, name, data)
    {
        char *d = json_dumps(data, JSON_COMPACT);
        snprintf(text + strlen(text), len - strlen(text),
                 "  - expect: {field: {apiVersion: v1, kind: ConfigMap, namespace: default, "
                 "name: %s, path: .data, equals: %s}}\n",
                 name, d);
        free(d);
    }
    strncat(text,
            "  - expect: {field: {apiVersion: example.com/v1, kind: Singleton, namespace: default,"
            " name: demo, path: .spec.data.greeting, equals: hello}}\n",
            len - strlen(text) - 1);
    scn_run_result r = run_text(text, 1, NULL);
    cr_expect(r.passed, "%s", r.message);
    /* the log spans most of an hour, replayed on the virtual clock */
    cr_expect_gt(r.virtual_ns, (int64_t)50 * 60 * 1000000000);
    json_decref(last);
    free(text);
    free(yaml);
}

Test(audit_replay, the_controllers_writes_are_expected_of_the_controller_under_test)
{
    const char *const fixed[] = {"singleton-fixed"};
    const char *const users[] = {"system:serviceaccount:default:singleton-buggy"};
    char *yaml = import((scn_import_options){.snapshot = CRD,
                                             .controllers = fixed,
                                             .n_controllers = 1,
                                             .actor_users = users,
                                             .n_actor_users = 1,
                                             .expect_writes = true});
    cr_assert(strstr(yaml, "expectWrite:"));
    for (uint64_t seed = 1; seed <= 3; seed++) {
        scn_run_result r = run_text(yaml, seed, NULL);
        cr_expect(r.passed, "seed %llu: %s", (unsigned long long)seed, r.message);
    }
    free(yaml);
}

Test(audit_replay, a_write_the_controller_does_not_make_fails_its_expectation)
{
    /* kube-controller-manager's writes of the session, expected of the
     * Singleton controller, which makes none of them */
    static const char *session = AUDIT "/kubectl-session.jsonl";
    const char *const ctrls[] = {"singleton-fixed"};
    const char *const agents[] = {"kube-controller-manager/v1.29.2"};
    char *yaml = import((scn_import_options){.files = &session,
                                             .n_files = 1,
                                             .snapshot = AUDIT "/snapshot.yaml",
                                             .controllers = ctrls,
                                             .n_controllers = 1,
                                             .actor_agents = agents,
                                             .n_actor_agents = 1,
                                             .expect_writes = true});
    scn_run_result r = run_text(yaml, 1, NULL);
    cr_expect_not(r.passed);
    cr_expect(strstr(r.message, "expectWrite") &&
                  strstr(r.message, "no create of /apis/apps/v1/namespaces/default/replicasets"),
              "%s", r.message);
    free(yaml);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

Test(audit_replay, a_runs_trace_goes_to_an_audit_log_and_back)
{
    char trace[] = "/tmp/scn-audit-trace-XXXXXX";
    int fd = mkstemp(trace);
    cr_assert_geq(fd, 0);
    close(fd);
    scn_scenario *sc = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_load(KH_SCENARIOS "/singleton-buggy.yaml", &sc, &err), 0);
    scn_run_options o = {.seed = 9, .seed_given = true, .trace_path = trace};
    scn_run_result r;
    cr_assert_eq(scn_run(sc, &o, &r), 0);
    scn_scenario_free(sc);

    char *audit = NULL, *back = NULL;
    size_t skipped = 0;
    cr_assert_eq(scn_trace_to_audit(trace, &audit, &skipped, &err), 0, "%s", err.message);
    char apath[] = "/tmp/scn-audit-log-XXXXXX";
    fd = mkstemp(apath);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, audit, strlen(audit)), (ssize_t)strlen(audit));
    close(fd);
    cr_assert_eq(scn_audit_to_trace(apath, &back, &err), 0, "%s", err.message);

    /* the trace without its watch-event lines (and the faults of watches) */
    char *orig = slurp(trace), *want = calloc(1, strlen(orig) + 1), *save = NULL;
    size_t events = 0;
    for (char *l = strtok_r(orig, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (strstr(l, "\"kind\":\"event\"") ||
            (strstr(l, "\"kind\":\"fault\"") && strstr(l, "\"verb\":\"watch\""))) {
            events++;
            continue;
        }
        strcat(want, l);
        strcat(want, "\n");
    }
    cr_expect_gt(events, 0);
    cr_expect_eq(skipped, events);
    cr_expect(strstr(want, "\"kind\":\"fault\""), "seed 9 fires a fault (docs/scenarios.md)");
    cr_expect_str_eq(back, want);
    free(orig);
    free(want);
    free(audit);
    free(back);
    unlink(trace);
    unlink(apath);
}

/* An expected body is compared with what the controller sent. */
Test(audit_replay, an_expected_body_must_be_what_the_controller_wrote)
{
    static const char tmpl[] =
        "name: bodies\n"
        "controllers: [singleton-fixed]\n"
        "fixtures: [%s/../../fixtures/singleton/crd.yaml, %s/../../fixtures/singleton/basic.yaml]\n"
        "steps:\n"
        "  - expectWrite: {verb: create, path: /api/v1/namespaces/default/configmaps, status: "
        "201,\n"
        "                  timeout: 10s, body: {metadata: {labels: {singleton: demo}}, data: "
        "%s}}\n";
    char text[2048];
    snprintf(text, sizeof text, tmpl, KH_SCENARIOS, KH_SCENARIOS, "{greeting: hello}");
    scn_run_result r = run_text(text, 1, NULL);
    cr_expect(r.passed, "%s", r.message);
    snprintf(text, sizeof text, tmpl, KH_SCENARIOS, KH_SCENARIOS, "{greeting: bonjour}");
    r = run_text(text, 1, NULL);
    cr_expect_not(r.passed);
    cr_expect(strstr(r.message, "differs at .data.greeting"), "%s", r.message);
}

/* The incident, replayed with --expect-state: the buggy controller makes a
 * ConfigMap too many in some interleavings, the fixed one in none. */
Test(audit_replay, the_imported_incident_catches_the_buggy_controller)
{
    const char *const users[] = {"system:serviceaccount:default:singleton-buggy"};
    const char *const buggy[] = {"singleton-buggy"}, *const fixed[] = {"singleton-fixed"};
    scn_import_options o = {.snapshot = CRD,
                            .controllers = buggy,
                            .n_controllers = 1,
                            .actor_users = users,
                            .n_actor_users = 1,
                            .expect_writes = true,
                            .expect_state = true};
    char *yb = import(o);
    o.controllers = fixed;
    char *yf = import(o);
    cr_assert(strstr(yb, "kind: ConfigMap\n        equals: 5"), "%s", yb);
    uint64_t failing = 0;
    for (uint64_t seed = 1; seed <= 12 && !failing; seed++) {
        scn_run_result r = run_text(yb, seed, NULL);
        if (!r.passed) {
            failing = seed;
            cr_expect(strstr(r.message, "expected count of ConfigMap in default to be 5, found 6"),
                      "%s", r.message);
        }
    }
    cr_expect_neq(failing, 0, "no seed in 1..12 shows the duplicate ConfigMap");
    for (uint64_t seed = 1; seed <= 12; seed++) {
        scn_run_result r = run_text(yf, seed, NULL);
        cr_expect(r.passed, "fixed, seed %llu: %s", (unsigned long long)seed, r.message);
    }
    free(yb);
    free(yf);
}

/* A real kube-apiserver log (tests/fixtures/audit/README.md): its node-status
 * strategic merge patches replay onto the snapshot's Nodes. */
Test(audit_replay, a_real_logs_node_status_patches_replay)
{
    static const char *real = AUDIT "/real-gce-scale-1.14.jsonl";
    char *yaml = import((scn_import_options){
        .files = &real, .n_files = 1, .snapshot = AUDIT "/real-gce-scale-1.14-snapshot.yaml"});
    size_t len = strlen(yaml) + 2048;
    char *text = malloc(len);
    snprintf(
        text, len,
        "%s"
        "  - expect: {field: {apiVersion: v1, kind: Node, name: gce-scale-cluster-minion-group-"
        "3-nt8d, path: .status.conditions, matches: '\"reason\":\"KernelHasNoDeadlock\"'}}\n"
        /* $setElementOrder: MemoryPressure, DiskPressure, PIDPressure, Ready (the
         * two in the middle new, with only a heartbeat) */
        "  - expect: {field: {apiVersion: v1, kind: Node, name: gce-scale-cluster-minion-group-"
        "00mv, path: '.status.conditions[3]', equals: {type: Ready, status: \"True\", reason: "
        "KubeletReady, lastHeartbeatTime: \"2019-01-02T15:01:16Z\", lastTransitionTime: "
        "\"2019-01-02T08:10:00Z\"}}}\n"
        "  - expect: {field: {apiVersion: v1, kind: Node, name: gce-scale-cluster-minion-group-"
        "00mv, path: '.status.conditions[1]', equals: {type: DiskPressure, lastHeartbeatTime: "
        "\"2019-01-02T15:01:16Z\"}}}\n",
        yaml);
    scn_run_result r = run_text(text, 1, NULL);
    cr_expect(r.passed, "%s", r.message);
    free(text);
    free(yaml);
}

/* A snapshot lists dependents before their owners (as `kubectl get -A -o
 * yaml pods,replicasets` does) and names owners it does not hold: owners are
 * applied first and bound by name, dangling references left out, so no
 * fixture is collected as garbage. */
Test(audit_replay, snapshot_owners_come_first_and_bind_by_name)
{
    char dir[] = "/tmp/scn-owners-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char snap[128], log[128];
    snprintf(snap, sizeof snap, "%s/snap.yaml", dir);
    snprintf(log, sizeof log, "%s/audit.jsonl", dir);
    FILE *f = fopen(snap, "w");
    cr_assert_not_null(f);
    fputs("apiVersion: v1\nkind: List\nitems:\n"
          "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: web-1-abcde\n"
          "    namespace: default\n    uid: 11111111-1111-4111-8111-111111111111\n"
          "    ownerReferences:\n    - {apiVersion: apps/v1, kind: ReplicaSet, name: web-1,\n"
          "       uid: 22222222-2222-4222-8222-222222222222, controller: true}\n"
          "  spec: {containers: [{name: c, image: nginx}]}\n"
          "- apiVersion: apps/v1\n  kind: ReplicaSet\n  metadata:\n    name: web-1\n"
          "    namespace: default\n    uid: 22222222-2222-4222-8222-222222222222\n"
          "    ownerReferences:\n    - {apiVersion: apps/v1, kind: Deployment, name: web,\n"
          "       uid: 33333333-3333-4333-8333-333333333333, controller: true}\n"
          "  spec:\n    selector: {matchLabels: {app: web}}\n"
          "    template:\n      metadata: {labels: {app: web}}\n"
          "      spec: {containers: [{name: c, image: nginx}]}\n",
          f);
    fclose(f);
    f = fopen(log, "w");
    cr_assert_not_null(f);
    fputs("{\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\",\"level\":\"Metadata\","
          "\"auditID\":\"1\",\"stage\":\"ResponseComplete\",\"requestURI\":\"/api/v1/namespaces/"
          "default/pods/web-1-abcde\",\"verb\":\"delete\",\"user\":{\"username\":\"bob\"},"
          "\"objectRef\":{\"resource\":\"pods\",\"namespace\":\"default\",\"name\":\"web-1-abcde\","
          "\"apiVersion\":\"v1\"},\"responseStatus\":{\"code\":200},"
          "\"requestReceivedTimestamp\":\"2024-05-14T09:00:05Z\"}\n",
          f);
    fclose(f);
    const char *files[] = {log};
    char *yaml = import((scn_import_options){.files = files, .n_files = 1, .snapshot = snap});
    /* the ReplicaSet first; the Deployment reference, dangling, gone */
    cr_expect_lt(strstr(yaml, "kind: ReplicaSet"), strstr(yaml, "kind: Pod"), "%s", yaml);
    cr_expect_null(strstr(yaml, "kind: Deployment"), "%s", yaml);
    /* before bob's delete the Pod is there, owned by the run's ReplicaSet */
    char *steps = strstr(yaml, "steps:\n");
    cr_assert_not_null(steps);
    size_t len = strlen(yaml) + 1024;
    char *text = malloc(len);
    snprintf(text, len,
             "%.*ssteps:\n"
             "  - expect: {exists: {apiVersion: v1, kind: Pod, namespace: default, name: "
             "web-1-abcde}}\n"
             "  - expect: {field: {apiVersion: v1, kind: Pod, namespace: default, name: "
             "web-1-abcde, path: '.metadata.ownerReferences[0].uid', equalsField: {apiVersion: "
             "apps/v1, kind: ReplicaSet, namespace: default, name: web-1, path: .metadata.uid}}}\n"
             "%s"
             "  - expect: {absent: {apiVersion: v1, kind: Pod, namespace: default, name: "
             "web-1-abcde}}\n",
             (int)(steps - yaml), yaml, steps + strlen("steps:\n"));
    scn_run_result r = run_text(text, 1, NULL);
    cr_expect(r.passed, "%s\n%s", r.message, text);
    free(text);
    free(yaml);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The request step, by hand: its status is checked; an update takes the
 * stored resourceVersion when asked; an owner is bound by name. */
Test(audit_replay, request_steps_send_what_they_say)
{
    static const char ok[] =
        "name: requests\n"
        "steps:\n"
        "  - request: {method: POST, path: /api/v1/namespaces/default/configmaps, status: 201,\n"
        "              body: {apiVersion: v1, kind: ConfigMap, metadata: {name: owner}}}\n"
        "  - request: {method: POST, path: "
        "'/api/v1/namespaces/default/configmaps?fieldManager=x',\n"
        "              body: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, "
        "ownerReferences:\n"
        "                [{apiVersion: v1, kind: ConfigMap, name: owner, uid: from-elsewhere}]},\n"
        "                data: {a: '1'}}}\n"
        "  - request: {method: PUT, path: /api/v1/namespaces/default/configmaps/c,\n"
        "              currentResourceVersion: true, status: 200,\n"
        "              body: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, "
        "resourceVersion: '1',\n"
        "                ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: "
        "x}]},\n"
        "                data: {a: '2'}}}\n"
        "  - request: {method: PATCH, path: /api/v1/namespaces/default/configmaps/c,\n"
        "              contentType: application/json-patch+json,\n"
        "              body: [{op: add, path: /data/b, value: '3'}]}\n"
        "  - expect: {field: {apiVersion: v1, kind: ConfigMap, namespace: default, name: c,\n"
        "                     path: .data, equals: {a: '2', b: '3'}}}\n"
        "  - expect: {field: {apiVersion: v1, kind: ConfigMap, namespace: default, name: c,\n"
        "                     path: '.metadata.ownerReferences[0].uid',\n"
        "                     equalsField: {apiVersion: v1, kind: ConfigMap, namespace: default,\n"
        "                                   name: owner, path: .metadata.uid}}}\n"
        "  - request: {method: DELETE, path: /api/v1/namespaces/default/configmaps/c}\n"
        "  - expect: {absent: {apiVersion: v1, kind: ConfigMap, namespace: default, name: c}}\n";
    scn_run_result r = run_text(ok, 1, NULL);
    cr_expect(r.passed, "%s", r.message);

    static const char conflict[] =
        "name: conflict\n"
        "steps:\n"
        "  - request: {method: POST, path: /api/v1/namespaces/default/configmaps, status: 201,\n"
        "              body: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}}\n"
        "  - request: {method: POST, path: /api/v1/namespaces/default/configmaps, status: 201,\n"
        "              body: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}}\n";
    r = run_text(conflict, 1, NULL);
    cr_expect_not(r.passed);
    cr_expect_eq(r.failed_step, 1);
    cr_expect(strstr(r.message, "expected status 201, got 409"), "%s", r.message);
}

/* Rotated logs: the same requests split over two files import the same. */
Test(audit_replay, several_files_are_one_log)
{
    static const char *session = AUDIT "/kubectl-session.jsonl";
    char a[] = "/tmp/scn-split-a-XXXXXX", b[] = "/tmp/scn-split-b-XXXXXX";
    int fa = mkstemp(a), fb = mkstemp(b);
    cr_assert(fa >= 0 && fb >= 0);
    FILE *in = fopen(session, "r"), *oa = fdopen(fa, "w"), *ob = fdopen(fb, "w");
    char *line = NULL;
    size_t cap = 0;
    int n = 0;
    while (getline(&line, &cap, in) > 0)
        fputs(line, n++ % 2 ? oa : ob); /* interleaved, as two servers' logs */
    free(line);
    fclose(in);
    fclose(oa);
    fclose(ob);
    const char *files[] = {a, b};
    char *one = import((scn_import_options){.files = &session, .n_files = 1});
    char *two = import((scn_import_options){.files = files, .n_files = 2});
    /* the same steps (the comments name other files and lines) */
    const char *s1 = strstr(one, "steps:"), *s2 = strstr(two, "steps:");
    size_t k1 = 0, k2 = 0;
    for (const char *p = s1; (p = strstr(p, "\n  - ")); p++)
        k1++;
    for (const char *p = s2; (p = strstr(p, "\n  - ")); p++)
        k2++;
    cr_expect_eq(k1, k2);
    cr_expect_gt(k1, 5);
    free(one);
    free(two);
    unlink(a);
    unlink(b);
}

/* A fixture's status (a snapshot's objects have one) survives the create,
 * which drops it, through the status subresource; kinds without one keep
 * it as it is. */
Test(audit_replay, a_fixtures_status_is_kept)
{
    static const char text[] =
        "name: status\n"
        "fixtures:\n"
        "  - {apiVersion: apps/v1, kind: Deployment, metadata: {name: d, namespace: default},\n"
        "     spec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}},\n"
        "            spec: {containers: [{name: c, image: i}]}}},\n"
        "     status: {replicas: 3, readyReplicas: 2}}\n"
        "  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default},\n"
        "     data: {a: '1'}}\n"
        "steps:\n"
        "  - expect: {field: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: d,\n"
        "                     path: .status.readyReplicas, equals: 2}}\n";
    scn_run_result r = run_text(text, 1, NULL);
    cr_expect(r.passed, "%s", r.message);
}
