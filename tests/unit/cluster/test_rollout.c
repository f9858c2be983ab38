/*
 * test_rollout.c - the ReplicaSet and Deployment arithmetic (cluster/rollout.c)
 * against the values kube-controller-manager computes: maxSurge rounds up
 * and maxUnavailable down, both zero means one unavailable, the new
 * ReplicaSet's growth within the surge, proportional shares, template
 * equality without the hash label, and the order of scale-down victims.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "rollout.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
    cr_assert(v, "%s: %s", text, e.text);
    return v;
}

static json_t *deploy(int replicas, const char *surge, const char *unavail)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"spec\":{\"replicas\":%d,\"strategy\":{\"type\":\"RollingUpdate\","
             "\"rollingUpdate\":{\"maxSurge\":%s,\"maxUnavailable\":%s}}}}",
             replicas, surge, unavail);
    return J(buf);
}

Test(rollout, intstr_percentages_round_as_upstream)
{
    int64_t v = -1;
    json_t *p = J("\"25%\"");
    cr_assert_eq(kc__intstr_scaled(p, 10, true, &v), 0);
    cr_assert_eq(v, 3); /* 2.5 up */
    cr_assert_eq(kc__intstr_scaled(p, 10, false, &v), 0);
    cr_assert_eq(v, 2); /* 2.5 down */
    cr_assert_eq(kc__intstr_scaled(p, 1, false, &v), 0);
    cr_assert_eq(v, 0);
    cr_assert_eq(kc__intstr_scaled(p, 1, true, &v), 0);
    cr_assert_eq(v, 1);
    json_decref(p);
    json_t *i = J("7");
    cr_assert_eq(kc__intstr_scaled(i, 100, true, &v), 0);
    cr_assert_eq(v, 7);
    json_decref(i);
    const char *bad[] = {"\"25\"", "\"%\"", "\"x%\"", "\"-5%\"", "true", "[1]"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        json_t *b = J(bad[k]);
        v = 42;
        cr_assert_eq(kc__intstr_scaled(b, 10, true, &v), -1, "%s", bad[k]);
        cr_assert_eq(v, 42);
        json_decref(b);
    }
}

Test(rollout, fenceposts)
{
    json_t *d = deploy(10, "\"25%\"", "\"25%\"");
    cr_assert_eq(kc__max_surge(d), 3);
    cr_assert_eq(kc__max_unavailable(d), 2);
    json_decref(d);
    d = deploy(3, "0", "0"); /* both zero: one may be unavailable */
    cr_assert_eq(kc__max_surge(d), 0);
    cr_assert_eq(kc__max_unavailable(d), 1);
    json_decref(d);
    d = deploy(2, "1", "5"); /* capped at replicas */
    cr_assert_eq(kc__max_unavailable(d), 2);
    json_decref(d);
    d = deploy(0, "1", "1");
    cr_assert_eq(kc__max_unavailable(d), 0);
    json_decref(d);
    d = J("{\"spec\":{\"replicas\":4,\"strategy\":{\"type\":\"Recreate\"}}}");
    cr_assert_eq(kc__max_surge(d), 0);
    cr_assert_eq(kc__max_unavailable(d), 0);
    cr_assert_eq(kc__new_rs_new_replicas(d, NULL, NULL), 4);
    json_decref(d);
    d = J("{\"spec\":{\"replicas\":4}}"); /* no strategy: 25% each */
    cr_assert_eq(kc__max_surge(d), 1);
    cr_assert_eq(kc__max_unavailable(d), 1);
    json_decref(d);
    d = deploy(4, "\"many\"", "1");
    cr_assert_eq(kc__max_surge(d), -1);
    json_decref(d);
}

Test(rollout, new_replica_set_grows_within_the_surge)
{
    json_t *d = deploy(10, "3", "2");
    json_t *old = J("{\"spec\":{\"replicas\":10}}"), *nrs = J("{\"spec\":{\"replicas\":0}}");
    json_t *all = json_pack("[O,O]", old, nrs);
    cr_assert_eq(kc__new_rs_new_replicas(d, all, nrs), 3);
    json_object_set_new(json_object_get(old, "spec"), "replicas", json_integer(8));
    json_object_set_new(json_object_get(nrs, "spec"), "replicas", json_integer(3));
    cr_assert_eq(kc__new_rs_new_replicas(d, all, nrs), 5);
    json_object_set_new(json_object_get(old, "spec"), "replicas", json_integer(0));
    cr_assert_eq(kc__new_rs_new_replicas(d, all, nrs), 10); /* not past replicas */
    json_decref(all);
    json_decref(old);
    json_decref(nrs);
    json_decref(d);
}

Test(rollout, proportional_shares_as_in_the_documentation)
{
    /* Scaling 10 -> 15 mid-rollout (maxSurge 3): 13 pods in an 8/5 split
     * get 5 more, 3 to the old ReplicaSet and 2 to the new one. */
    json_t *d = deploy(15, "3", "2");
    json_object_set_new(d, "status", json_pack("{s:i}", "replicas", 13));
    json_t *old = J("{\"metadata\":{\"annotations\":{\"deployment.kubernetes.io/max-replicas\":"
                    "\"13\"}},\"spec\":{\"replicas\":8}}");
    json_t *nrs = J("{\"metadata\":{\"annotations\":{\"deployment.kubernetes.io/max-replicas\":"
                    "\"13\"}},\"spec\":{\"replicas\":5}}");
    int64_t a = kc__proportion(old, d, 5, 0);
    int64_t b = kc__proportion(nrs, d, 5, a);
    cr_assert_eq(a, 3);
    cr_assert_eq(b, 2);
    cr_assert_eq(kc__proportion(nrs, d, 5, 5), 0);
    json_decref(old);
    json_decref(nrs);
    json_decref(d);
}

Test(rollout, templates_equal_without_the_hash_label)
{
    json_t *a = J("{\"metadata\":{\"labels\":{\"app\":\"web\",\"pod-template-hash\":\"abc\"}},"
                  "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x:1\"}]}}");
    json_t *b = J("{\"metadata\":{\"labels\":{\"app\":\"web\"}},"
                  "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x:1\"}]}}");
    json_t *c = J("{\"metadata\":{\"labels\":{\"app\":\"web\"}},"
                  "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x:2\"}]}}");
    cr_assert(kc__templates_equal(a, b));
    cr_assert(!kc__templates_equal(a, c));
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

/* The cases at the edges of "without the hash label": labels left empty
 * count as none, metadata left empty still counts, other members of
 * metadata and of the labels count, the label's value never does. */
Test(rollout, templates_equal_edges)
{
    static const struct {
        const char *a, *b;
        bool equal;
    } cases[] = {
        {"{\"metadata\":{\"labels\":{\"pod-template-hash\":\"1\"}}}", "{\"metadata\":{}}", true},
        {"{\"metadata\":{\"labels\":{}}}", "{\"metadata\":{}}", true},
        {"{\"metadata\":{\"labels\":{\"pod-template-hash\":\"1\"}}}",
         "{\"metadata\":{\"labels\":{\"pod-template-hash\":\"2\"}}}", true},
        {"{\"metadata\":{}}", "{}", false},
        {"{\"metadata\":{\"labels\":{\"a\":\"1\"}}}", "{\"metadata\":{}}", false},
        {"{\"metadata\":{\"labels\":{\"a\":\"1\",\"pod-template-hash\":\"1\"}}}",
         "{\"metadata\":{\"labels\":{\"a\":\"2\",\"pod-template-hash\":\"1\"}}}", false},
        {"{\"metadata\":{\"labels\":{\"a\":\"1\"},\"annotations\":{\"x\":\"y\"}}}",
         "{\"metadata\":{\"labels\":{\"a\":\"1\"}}}", false},
        {"{\"metadata\":{\"labels\":\"odd\"}}", "{\"metadata\":{\"labels\":\"odd\"}}", true},
        {"{\"metadata\":{\"labels\":\"odd\"}}", "{\"metadata\":{}}", false},
        {"{\"metadata\":1}", "{\"metadata\":1}", true},
        {"{\"metadata\":{},\"spec\":{}}", "{\"metadata\":{}}", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *a = J(cases[i].a), *b = J(cases[i].b);
        cr_assert_eq(kc__templates_equal(a, b), cases[i].equal, "case %zu: %s vs %s", i, cases[i].a,
                     cases[i].b);
        cr_assert_eq(kc__templates_equal(b, a), cases[i].equal, "case %zu reversed", i);
        json_decref(a);
        json_decref(b);
    }
    cr_assert(!kc__templates_equal(NULL, NULL));
}

static json_t *pod(const char *name, const char *node, const char *phase, bool ready,
                   const char *ready_at, int restarts, const char *created)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"%s\",\"creationTimestamp\":\"%s\"},"
             "\"spec\":{\"nodeName\":\"%s\"},\"status\":{\"phase\":\"%s\","
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\","
             "\"lastTransitionTime\":\"%s\"}],\"containerStatuses\":[{\"restartCount\":%d}]}}",
             name, created, node, phase, ready ? "True" : "False", ready_at, restarts);
    return J(buf);
}

Test(rollout, victims_in_upstream_order)
{
    const char *t0 = "2026-01-01T00:00:00Z", *t1 = "2026-01-01T00:01:00Z";
    json_t *ps[] = {
        pod("a-running-ready-old", "n1", "Running", true, t0, 0, t0),
        pod("b-unassigned", "", "Pending", false, t0, 0, t0),
        pod("c-pending", "n1", "Pending", false, t0, 0, t0),
        pod("d-running-notready", "n1", "Running", false, t0, 0, t0),
        pod("e-running-ready-recent", "n1", "Running", true, t1, 0, t0),
        pod("f-notready-restarts", "n1", "Running", false, t0, 5, t0),
        pod("g-notready-newer", "n1", "Running", false, t0, 0, t1),
        pod("h-unknown", "n1", "Unknown", false, t0, 0, t0),
    };
    size_t n = sizeof ps / sizeof ps[0];
    const json_t *v[8];
    for (size_t i = 0; i < n; i++)
        v[i] = ps[n - 1 - i];
    kc__sort_victims(v, n, NULL);
    const char *want[] = {"b-unassigned",           "c-pending",          "h-unknown",
                          "f-notready-restarts",    "g-notready-newer",   "d-running-notready",
                          "e-running-ready-recent", "a-running-ready-old"};
    for (size_t i = 0; i < n; i++)
        cr_assert_str_eq(
            json_string_value(json_object_get(json_object_get(v[i], "metadata"), "name")), want[i],
            "position %zu", i);
    for (size_t i = 0; i < n; i++)
        json_decref(ps[i]);
}

Test(rollout, victims_on_crowded_nodes_first)
{
    const char *t0 = "2026-01-01T00:00:00Z";
    json_t *a = pod("a", "n1", "Running", true, t0, 0, t0);
    json_t *b = pod("b", "n2", "Running", true, t0, 0, t0);
    json_t *other = pod("z", "n2", "Running", true, t0, 0, t0);
    json_t *related = json_pack("[O,O,O]", a, b, other);
    const json_t *v[2] = {a, b};
    kc__sort_victims(v, 2, related);
    cr_assert_eq(v[0], b, "n2 holds two related pods");
    json_decref(related);
    json_decref(a);
    json_decref(b);
    json_decref(other);
}
