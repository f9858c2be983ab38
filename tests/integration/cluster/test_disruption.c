/*
 * test_disruption.c - the disruption controller against fakeapi:
 * PodDisruptionBudget status for minAvailable and maxUnavailable as
 * integers and percentages against pods, ReplicaSets, Deployments and
 * StatefulSets; the fail-safe; disruptedPods; and evictions that the
 * status allows and refuses (what kubectl drain does).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "svcfix.h"

#define WAIT_MS 30000
#define PDBS "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
#define PODS "/api/v1/namespaces/default/pods"

static void setup(void)
{
    fx_start("{\"controllers\":[\"disruption\"],\"nodes\":0}");
}

static void teardown(void)
{
    fx_stop();
}

TestSuite(disruption, .init = setup, .fini = teardown, .timeout = 90);

static void pdb(const char *name, const char *spec)
{
    json_decref(fx_req(201, "POST", PDBS,
                       fx_s("{\"metadata\":{\"name\":\"%s\"},\"spec\":%s}", name, spec)));
}

typedef struct want {
    const char *name;
    long long healthy, desired, expected, allowed;
    const char *reason; /* of DisruptionAllowed */
} want;

static bool status_is(void *user)
{
    want *w = user;
    json_t *p = fx_get(fx_s(PDBS "/%s", w->name));
    json_t *st = json_object_get(p, "status");
    json_t *cond = fx_at(st, "conditions.0");
    const char *reason = json_string_value(json_object_get(cond, "reason"));
    bool ok = p && json_integer_value(json_object_get(st, "currentHealthy")) == w->healthy &&
              json_integer_value(json_object_get(st, "desiredHealthy")) == w->desired &&
              json_integer_value(json_object_get(st, "expectedPods")) == w->expected &&
              json_integer_value(json_object_get(st, "disruptionsAllowed")) == w->allowed &&
              json_integer_value(json_object_get(st, "observedGeneration")) ==
                  json_integer_value(fx_at(p, "metadata.generation")) &&
              reason && !strcmp(reason, w->reason);
    json_decref(p);
    return ok;
}

/* Wait for the status; assert it, with the whole status on failure. */
static void expect(const char *name, long long healthy, long long desired, long long expected,
                   long long allowed)
{
    want w = {name,     healthy, desired,
              expected, allowed, allowed > 0 ? "SufficientPods" : "InsufficientPods"};
    bool ok = fx_wait(status_is, &w, WAIT_MS);
    json_t *p = fx_get(fx_s(PDBS "/%s", name));
    char *text = json_dumps(json_object_get(p, "status"), JSON_COMPACT);
    cr_assert(ok, "%s: want healthy %lld desired %lld expected %lld allowed %lld (%s), have %s",
              name, healthy, desired, expected, allowed, w.reason, text ? text : "(none)");
    json_t *cond = fx_at(p, "status.conditions.0");
    cr_assert_str_eq(json_string_value(json_object_get(cond, "type")), "DisruptionAllowed");
    cr_assert_str_eq(json_string_value(json_object_get(cond, "status")),
                     allowed > 0 ? "True" : "False");
    cr_assert_str_eq(json_string_value(json_object_get(cond, "message")), "");
    cr_assert_eq(json_array_size(fx_at(p, "status.conditions")), 1);
    free(text);
    json_decref(p);
}

/* An owner reference (controller) to an object made by POST to path. */
static const char *make_owner(const char *path, const char *body, const char *api_version,
                              const char *kind)
{
    json_t *o = fx_req(201, "POST", path, body);
    const char *ref = fx_s("[{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"name\":\"%s\",\"uid\":\"%s\","
                           "\"controller\":true}]",
                           api_version, kind, json_string_value(fx_at(o, "metadata.name")),
                           json_string_value(fx_at(o, "metadata.uid")));
    json_decref(o);
    return ref;
}

static void owned_pod(const char *name, const char *labels, const char *owners, bool ready)
{
    fx_pod("default", name, labels, NULL, NULL, fx_s("10.9.0.%d", (int)(strlen(name) * 7 % 250)),
           ready, NULL);
    if (owners)
        json_decref(fx_req(0, "PATCH", fx_s(PODS "/%s", name),
                           fx_s("{\"metadata\":{\"ownerReferences\":%s}}", owners)));
}

static const char *rs_body(const char *name, int replicas, const char *owners)
{
    return fx_s("{\"metadata\":{\"name\":\"%s\"%s%s},\"spec\":{\"replicas\":%d,\"selector\":"
                "{\"matchLabels\":{\"rs\":\"%s\"}},\"template\":{\"metadata\":{\"labels\":"
                "{\"rs\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}}}",
                name, owners ? ",\"ownerReferences\":" : "", owners ? owners : "", replicas, name,
                name);
}

static int evict(const char *name)
{
    return fx_status("POST", fx_s(PODS "/%s/eviction", name),
                     fx_s("{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":"
                          "{\"name\":\"%s\",\"namespace\":\"default\"}}",
                          name));
}

Test(disruption, min_available_int_and_evictions)
{
    pdb("web", "{\"minAvailable\":2,\"selector\":{\"matchLabels\":{\"app\":\"web\"}}}");
    expect("web", 0, 2, 0, 0); /* no pods yet */
    for (int i = 0; i < 3; i++)
        fx_pod("default", fx_s("web-%d", i), "{\"app\":\"web\"}", NULL, NULL,
               fx_s("10.0.0.%d", i + 1), true, NULL);
    fx_pod("default", "other", "{\"app\":\"db\"}", NULL, NULL, "10.0.0.9", true, NULL);
    expect("web", 3, 2, 3, 1);

    /* One eviction is allowed; the pod goes and the budget is spent. */
    cr_assert_eq(evict("web-0"), 201);
    expect("web", 2, 2, 2, 0);
    cr_assert_null(fx_get(PODS "/web-0"));
    cr_assert_eq(evict("web-1"), 429);
    json_t *kept = fx_get(PODS "/web-1");
    cr_assert_not_null(kept);
    json_decref(kept);

    /* A pod turning unready; then ready again and a third one. */
    fx_pod_ready("default", "web-1", false, "2026-01-01T00:01:00Z");
    expect("web", 1, 2, 2, 0);
    fx_pod_ready("default", "web-1", true, "2026-01-01T00:02:00Z");
    fx_pod("default", "web-3", "{\"app\":\"web\"}", NULL, NULL, "10.0.0.4", true, NULL);
    expect("web", 3, 2, 3, 1);
}

Test(disruption, max_unavailable_against_replicaset_scale)
{
    const char *rs = make_owner("/apis/apps/v1/namespaces/default/replicasets",
                                rs_body("front", 4, NULL), "apps/v1", "ReplicaSet");
    char owners[512];
    snprintf(owners, sizeof owners, "%s", rs);
    for (int i = 0; i < 3; i++)
        owned_pod(fx_s("front-%d", i), "{\"rs\":\"front\"}", owners, true);
    pdb("front", "{\"maxUnavailable\":1,\"selector\":{\"matchLabels\":{\"rs\":\"front\"}}}");
    /* Expected is the ReplicaSet's 4, not the 3 pods. */
    expect("front", 3, 3, 4, 0);
    json_decref(fx_req(0, "PATCH", "/apis/apps/v1/namespaces/default/replicasets/front",
                       "{\"spec\":{\"replicas\":3}}"));
    expect("front", 3, 2, 3, 1);
}

Test(disruption, percentages_against_deployment_and_statefulset)
{
    const char *dep =
        make_owner("/apis/apps/v1/namespaces/default/deployments",
                   "{\"metadata\":{\"name\":\"api\"},\"spec\":{\"replicas\":4,\"selector\":"
                   "{\"matchLabels\":{\"app\":\"api\"}},\"template\":{\"metadata\":{\"labels\":"
                   "{\"app\":\"api\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
                   "\"x\"}]}}}}",
                   "apps/v1", "Deployment");
    char dep_ref[512], rs_ref[512];
    snprintf(dep_ref, sizeof dep_ref, "%s", dep);
    snprintf(rs_ref, sizeof rs_ref, "%s",
             make_owner("/apis/apps/v1/namespaces/default/replicasets",
                        rs_body("api-1", 4, dep_ref), "apps/v1", "ReplicaSet"));
    for (int i = 0; i < 3; i++)
        owned_pod(fx_s("api-%d", i), "{\"app\":\"api\"}", rs_ref, true);
    pdb("api", "{\"minAvailable\":\"50%\",\"selector\":{\"matchLabels\":{\"app\":\"api\"}}}");
    /* ceil(50% of the Deployment's 4) = 2. */
    expect("api", 3, 2, 4, 1);

    const char *sts =
        make_owner("/apis/apps/v1/namespaces/default/statefulsets",
                   "{\"metadata\":{\"name\":\"db\"},\"spec\":{\"replicas\":5,\"serviceName\":"
                   "\"db\",\"selector\":{\"matchLabels\":{\"app\":\"db\"}},\"template\":"
                   "{\"metadata\":{\"labels\":{\"app\":\"db\"}},\"spec\":{\"containers\":"
                   "[{\"name\":\"c\",\"image\":\"x\"}]}}}}",
                   "apps/v1", "StatefulSet");
    char sts_ref[512];
    snprintf(sts_ref, sizeof sts_ref, "%s", sts);
    for (int i = 0; i < 4; i++)
        owned_pod(fx_s("db-%d", i), "{\"app\":\"db\"}", sts_ref, true);
    pdb("db", "{\"maxUnavailable\":\"30%\",\"selector\":{\"matchLabels\":{\"app\":\"db\"}}}");
    /* 5 - ceil(30% of 5) = 3. */
    expect("db", 4, 3, 5, 1);
    /* An unready pod: no disruption left. */
    fx_pod_ready("default", "db-0", false, "2026-01-01T00:03:00Z");
    expect("db", 3, 3, 5, 0);
}

Test(disruption, fail_safe_without_scale)
{
    const char *job = make_owner("/apis/batch/v1/namespaces/default/jobs",
                                 "{\"metadata\":{\"name\":\"batch\"},\"spec\":{\"template\":"
                                 "{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":"
                                 "[{\"name\":\"c\",\"image\":\"x\"}]}}}}",
                                 "batch/v1", "Job");
    char ref[512];
    snprintf(ref, sizeof ref, "%s", job);
    owned_pod("batch-0", "{\"job\":\"batch\"}", ref, true);
    owned_pod("batch-1", "{\"job\":\"batch\"}", ref, true);
    pdb("batch", "{\"maxUnavailable\":1,\"selector\":{\"matchLabels\":{\"job\":\"batch\"}}}");
    json_t *p =
        fx_wait_field(PDBS "/batch", "status.conditions.0.reason", "\"SyncFailed\"", WAIT_MS);
    cr_assert_str_eq(json_string_value(fx_at(p, "status.conditions.0.reason")), "SyncFailed");
    cr_assert_str_eq(json_string_value(fx_at(p, "status.conditions.0.status")), "False");
    cr_assert_str_eq(json_string_value(fx_at(p, "status.conditions.0.message")),
                     "jobs.batch does not implement the scale subresource");
    cr_assert_eq(json_integer_value(fx_at(p, "status.disruptionsAllowed")), 0);
    json_decref(p);
    /* An integer minAvailable needs no scale: the same pods are fine. */
    json_decref(fx_req(0, "PATCH", PDBS "/batch",
                       "{\"spec\":{\"maxUnavailable\":null,\"minAvailable\":1}}"));
    expect("batch", 2, 1, 2, 1);
}

Test(disruption, disrupted_pods_expire)
{
    for (int i = 0; i < 3; i++)
        fx_pod("default", fx_s("q-%d", i), "{\"app\":\"q\"}", NULL, NULL, fx_s("10.0.1.%d", i + 1),
               true, NULL);
    pdb("q", "{\"minAvailable\":1,\"selector\":{\"matchLabels\":{\"app\":\"q\"}}}");
    expect("q", 3, 1, 3, 2);
    /* A disruption recorded just now (as an eviction records it) keeps q-0
     * out of the healthy count; one older than two minutes is dropped. */
    json_t *p = fx_get(PDBS "/q");
    json_t *st = json_object_get(p, "status");
    char now[40], old[40];
    time_t t = time(NULL);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    t -= 600;
    strftime(old, sizeof old, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    json_object_set_new(st, "disruptedPods",
                        json_pack("{s:s, s:s, s:s}", "q-0", now, "q-1", old, "gone", now));
    json_object_set_new(st, "disruptionsAllowed", json_integer(1));
    char *body = json_dumps(p, JSON_COMPACT);
    json_decref(p);
    json_decref(fx_req(200, "PUT", PDBS "/q/status", body));
    free(body);
    expect("q", 2, 1, 3, 1);
    p = fx_get(PDBS "/q");
    json_t *dp = fx_at(p, "status.disruptedPods");
    cr_assert_eq(json_object_size(dp), 1);
    cr_assert_str_eq(json_string_value(json_object_get(dp, "q-0")), now);
    json_decref(p);
}

/* Run kubectl against fakeapi with a throw-away kubeconfig: its exit
 * status, and its output in out. */
static int kubectl(const char *args, char *out, size_t len)
{
    char dir[] = "/tmp/kc-drain-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char kc[128], log[128];
    snprintf(kc, sizeof kc, "%s/kubeconfig", dir);
    snprintf(log, sizeof log, "%s/out", dir);
    FILE *f = fopen(kc, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "apiVersion: v1\nkind: Config\nclusters:\n- name: f\n  cluster:\n    server: %s\n"
            "users:\n- name: u\n  user: {}\ncontexts:\n- name: c\n  context:\n    cluster: f\n"
            "    user: u\ncurrent-context: c\n",
            fakeapi_url(fx_api));
    fclose(f);
    int st = system(
        fx_s("kubectl --kubeconfig %s --cache-dir %s/cache %s > %s 2>&1", kc, dir, args, log));
    f = fopen(log, "r");
    size_t n = f ? fread(out, 1, len - 1, f) : 0;
    out[n] = 0;
    if (f)
        fclose(f);
    cr_assert_eq(system(fx_s("rm -rf %s", dir)), 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(disruption, kubectl_drain_honours_the_budget)
{
    if (system("kubectl version --client > /dev/null 2>&1") != 0)
        cr_skip_test("no kubectl");
    json_decref(fx_req(201, "POST", "/api/v1/nodes", "{\"metadata\":{\"name\":\"n1\"}}"));
    json_decref(fx_req(201, "POST", "/api/v1/nodes", "{\"metadata\":{\"name\":\"n2\"}}"));
    const char *nodes[] = {"n1", "n1", "n2"};
    for (int i = 0; i < 3; i++)
        fx_pod("default", fx_s("d-%d", i), "{\"app\":\"d\"}", NULL,
               fx_s("{\"nodeName\":\"%s\"}", nodes[i]), fx_s("10.0.2.%d", i + 1), true, NULL);
    pdb("d", "{\"minAvailable\":1,\"selector\":{\"matchLabels\":{\"app\":\"d\"}}}");
    expect("d", 3, 1, 3, 2);

    /* n1's two pods fit the budget: drained. */
    char out[8192];
    int rc = kubectl("drain n1 --force --grace-period=0 --timeout=30s", out, sizeof out);
    cr_assert_eq(rc, 0, "kubectl drain n1: %d\n%s", rc, out);
    cr_assert_null(fx_get(PODS "/d-0"));
    cr_assert_null(fx_get(PODS "/d-1"));
    json_t *n1 = fx_get("/api/v1/nodes/n1");
    cr_assert(json_is_true(fx_at(n1, "spec.unschedulable")));
    json_decref(n1);
    expect("d", 1, 1, 1, 0);

    /* The last pod would break it: drain gives up, the pod stays. */
    rc = kubectl("drain n2 --force --grace-period=0 --timeout=3s", out, sizeof out);
    cr_assert_neq(rc, 0, "kubectl drain n2 succeeded:\n%s", out);
    cr_assert(strstr(out, "Cannot evict pod as it would violate the pod's disruption budget"), "%s",
              out);
    json_t *left = fx_get(PODS "/d-2");
    cr_assert_not_null(left);
    json_decref(left);
}

/* Set a DisruptionTarget condition on pod (since: its lastTransitionTime). */
static void disruption_target(const char *pod, const char *reason, const char *since)
{
    json_decref(fx_req(0, "PATCH", fx_s(PODS "/%s/status", pod),
                       fx_s("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
                            "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"},{\"type\":"
                            "\"DisruptionTarget\",\"status\":\"True\",\"reason\":\"%s\","
                            "\"lastTransitionTime\":\"%s\"}]}}",
                            reason, since)));
}

static const char *target_status(const char *pod)
{
    static char out[16];
    json_t *p = fx_get(fx_s(PODS "/%s", pod));
    json_t *c;
    size_t i;
    snprintf(out, sizeof out, "(none)");
    json_array_foreach(fx_at(p, "status.conditions"), i, c)
    {
        if (!strcmp(json_string_value(json_object_get(c, "type")), "DisruptionTarget"))
            snprintf(out, sizeof out, "%s", json_string_value(json_object_get(c, "status")));
    }
    json_decref(p);
    return out;
}

Test(disruption, stale_disruption_target_reset)
{
    char now[40], old[40];
    time_t t = time(NULL);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    t -= 300;
    strftime(old, sizeof old, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    fx_pod("default", "stale", "{\"app\":\"s\"}", NULL, NULL, "10.0.3.1", true, NULL);
    fx_pod("default", "fresh", "{\"app\":\"s\"}", NULL, NULL, "10.0.3.2", true, NULL);
    fx_pod("default", "kubelet", "{\"app\":\"s\"}", NULL, NULL, "10.0.3.3", true, NULL);
    disruption_target("stale", "EvictionByEvictionAPI", old);
    disruption_target("fresh", "EvictionByEvictionAPI", now);
    disruption_target("kubelet", "TerminationByKubelet", old);
    bool reset = false;
    for (int i = 0; i < WAIT_MS / 5 && !reset; i++) {
        reset = !strcmp(target_status("stale"), "False");
        if (!reset)
            fx_sleep_ms(5);
    }
    cr_assert(reset, "the stale DisruptionTarget condition stayed True");
    json_t *p = fx_get(PODS "/stale");
    cr_assert_str_eq(json_string_value(fx_at(p, "status.conditions.0.type")), "Ready");
    json_decref(p);
    /* Two minutes have not passed, and the kubelet's is never stale. */
    fx_sleep_ms(300);
    cr_assert_str_eq(target_status("fresh"), "True");
    cr_assert_str_eq(target_status("kubelet"), "True");
}
