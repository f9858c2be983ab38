/*
 * test_endpointslice.c - the EndpointSlice controller against fakeapi:
 * slice contents (conditions, targetRef, ports, labels, owner), updates in
 * place as pods turn ready, terminate and go, the placeholder slice,
 * grouping by port list, 100 endpoints a slice, and garbage collection.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "svcfix.h"

#define SLICES "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
#define SVCS "/api/v1/namespaces/default/services"
#define WAIT_MS 30000

static void setup(void)
{
    fx_start("{\"controllers\":[\"endpointslice\"],\"nodes\":0}");
}

static void teardown(void)
{
    fx_stop();
}

TestSuite(endpointslice, .init = setup, .fini = teardown, .timeout = 90);

/* The slices of Service svc, sorted by name (the list's order). */
static json_t *slices_of(const char *svc)
{
    json_t *l =
        fx_req(200, "GET", fx_s(SLICES "?labelSelector=kubernetes.io/service-name=%s", svc), NULL);
    json_t *items = json_incref(json_object_get(l, "items"));
    json_decref(l);
    return items;
}

typedef struct want_eps {
    const char *svc;
    const char *json; /* the endpoints of the one slice */
} want_eps;

static bool one_slice_with(void *user)
{
    want_eps *w = user;
    json_t *items = slices_of(w->svc), *want = json_loads(w->json, 0, NULL);
    json_t *eps = json_object_get(json_array_get(items, 0), "endpoints");
    bool ok = json_array_size(items) == 1 &&
              (json_array_size(want) ? json_equal(eps, want) : json_array_size(eps) == 0);
    json_decref(items);
    json_decref(want);
    return ok;
}

static json_t *expect_one(const char *svc, const char *eps_text)
{
    /* eps_text may be in fx_s's ring, which the polling reuses: copy it. */
    char *eps = strdup(eps_text);
    cr_assert_not_null(eps);
    want_eps w = {svc, eps};
    bool ok = fx_wait(one_slice_with, &w, WAIT_MS);
    json_t *items = slices_of(svc), *brief = json_array();
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        json_array_append_new(brief,
                              json_pack("{s:O?, s:O?, s:O?}", "name", fx_at(it, "metadata.name"),
                                        "endpoints", json_object_get(it, "endpoints"), "ports",
                                        json_object_get(it, "ports")));
    }
    char *text = json_dumps(brief, JSON_COMPACT);
    json_decref(brief);
    cr_assert(ok, "slices of %s:\n have %s\n want one with endpoints %s", svc, text, eps);
    free(text);
    free(eps);
    json_t *s = json_incref(json_array_get(items, 0));
    json_decref(items);
    return s;
}

static const char *ep(const char *name, const char *uid, const char *ip, bool ready, bool serving,
                      bool terminating, const char *extra)
{
    return fx_s("{\"addresses\":[\"%s\"],\"conditions\":{\"ready\":%s,\"serving\":%s,"
                "\"terminating\":%s},\"targetRef\":{\"kind\":\"Pod\",\"namespace\":\"default\","
                "\"name\":\"%s\",\"uid\":\"%s\"}%s}",
                ip, ready ? "true" : "false", serving ? "true" : "false",
                terminating ? "true" : "false", name, uid, extra ? extra : "");
}

/* The cluster's Node cache has node. */
static bool node_cached(void *user)
{
    ctrl_informer *inf = NULL;
    json_t *n = NULL;
    if (ctrl_cache_informer(ctrl_manager_cache(kc_cluster_manager(fx_cluster)), "v1", "Node", NULL,
                            &inf, NULL) < 0 ||
        ctrl_informer_get(inf, "", user, &n) < 0)
        return false;
    json_decref(n);
    return true;
}

Test(endpointslice, contents_and_updates_in_place)
{
    json_decref(fx_req(201, "POST", "/api/v1/nodes",
                       "{\"metadata\":{\"name\":\"n1\",\"labels\":"
                       "{\"topology.kubernetes.io/zone\":\"z1\"}}}"));
    static char n1[] = "n1";
    cr_assert(fx_wait(node_cached, n1, WAIT_MS));
    json_t *svc = fx_req(201, "POST", SVCS,
                         "{\"metadata\":{\"name\":\"web\",\"labels\":{\"tier\":\"front\"}},"
                         "\"spec\":{\"selector\":{\"app\":\"web\"},\"ports\":["
                         "{\"name\":\"http\",\"port\":80,\"targetPort\":8080}]}}");
    char svc_uid[64];
    snprintf(svc_uid, sizeof svc_uid, "%s", json_string_value(fx_at(svc, "metadata.uid")));
    json_decref(svc);
    char u1[64], u2[64], e1[1024], e2[1024];
    snprintf(u1, sizeof u1, "%s",
             fx_pod("default", "p1", "{\"app\":\"web\"}", NULL, "{\"nodeName\":\"n1\"}", "10.0.0.1",
                    true, NULL));
    snprintf(u2, sizeof u2, "%s",
             fx_pod("default", "p2", "{\"app\":\"web\"}", NULL, NULL, "10.0.0.2", false, NULL));
    fx_pod("default", "p3", "{\"app\":\"web\"}", NULL, NULL, NULL, true, NULL); /* no IP */
    json_decref(fx_req(0, "PATCH", "/api/v1/namespaces/default/pods/p3/status",
                       "{\"status\":{\"phase\":\"Succeeded\",\"podIP\":\"10.0.0.3\"}}"));

    snprintf(e1, sizeof e1, "%s",
             ep("p1", u1, "10.0.0.1", true, true, false, ",\"nodeName\":\"n1\",\"zone\":\"z1\""));
    snprintf(e2, sizeof e2, "%s", ep("p2", u2, "10.0.0.2", false, false, false, NULL));
    json_t *s = expect_one("web", fx_s("[%s,%s]", e1, e2));
    char name[128];
    snprintf(name, sizeof name, "%s", json_string_value(fx_at(s, "metadata.name")));
    cr_assert_eq(strncmp(name, "web-", 4), 0, "name %s", name);
    cr_assert_str_eq(json_string_value(fx_at(s, "metadata.generateName")), "web-");
    cr_assert_str_eq(json_string_value(json_object_get(s, "addressType")), "IPv4");
    json_t *wports =
        json_loads("[{\"name\":\"http\",\"port\":8080,\"protocol\":\"TCP\"}]", 0, NULL);
    cr_assert(json_equal(json_object_get(s, "ports"), wports));
    json_decref(wports);
    json_t *labels = fx_at(s, "metadata.labels");
    cr_assert_eq(json_object_size(labels), 3);
    cr_assert_str_eq(json_string_value(json_object_get(labels, "kubernetes.io/service-name")),
                     "web");
    cr_assert_str_eq(
        json_string_value(json_object_get(labels, "endpointslice.kubernetes.io/managed-by")),
        "endpointslice-controller.k8s.io");
    cr_assert_str_eq(json_string_value(json_object_get(labels, "tier")), "front");
    json_t *owner = fx_at(s, "metadata.ownerReferences.0");
    cr_assert_str_eq(json_string_value(json_object_get(owner, "kind")), "Service");
    cr_assert_str_eq(json_string_value(json_object_get(owner, "apiVersion")), "v1");
    cr_assert_str_eq(json_string_value(json_object_get(owner, "uid")), svc_uid);
    cr_assert(json_is_true(json_object_get(owner, "controller")));
    cr_assert(json_is_true(json_object_get(owner, "blockOwnerDeletion")));
    char rv[32];
    snprintf(rv, sizeof rv, "%s", json_string_value(fx_at(s, "metadata.resourceVersion")));
    json_decref(s);
    /* Settled: no more writes. */
    fx_sleep_ms(300);
    s = slices_of("web");
    cr_assert_eq(json_array_size(s), 1);
    cr_assert_str_eq(json_string_value(fx_at(s, "0.metadata.resourceVersion")), rv);
    json_decref(s);

    /* p2 turns ready: the same slice, updated. */
    fx_pod_ready("default", "p2", true, "2026-01-01T00:07:00Z");
    snprintf(e2, sizeof e2, "%s", ep("p2", u2, "10.0.0.2", true, true, false, NULL));
    s = expect_one("web", fx_s("[%s,%s]", e1, e2));
    cr_assert_str_eq(json_string_value(fx_at(s, "metadata.name")), name);
    cr_assert_str_eq(json_string_value(json_object_get(fx_at(s, "metadata.annotations"),
                                                       "endpoints.kubernetes.io/"
                                                       "last-change-trigger-time")),
                     "2026-01-01T00:07:00Z");
    json_decref(s);

    /* p1 terminates (a finalizer holds it): serving, not ready. */
    json_decref(fx_req(0, "PATCH", "/api/v1/namespaces/default/pods/p1",
                       "{\"metadata\":{\"finalizers\":[\"example.com/hold\"]}}"));
    json_decref(
        fx_req(0, "DELETE", "/api/v1/namespaces/default/pods/p1?gracePeriodSeconds=0", NULL));
    snprintf(e1, sizeof e1, "%s",
             ep("p1", u1, "10.0.0.1", false, true, true, ",\"nodeName\":\"n1\",\"zone\":\"z1\""));
    json_decref(expect_one("web", fx_s("[%s,%s]", e1, e2)));

    /* Both go: one empty placeholder slice stays. */
    json_decref(fx_req(0, "PATCH", "/api/v1/namespaces/default/pods/p1",
                       "{\"metadata\":{\"finalizers\":null}}"));
    json_decref(
        fx_req(0, "DELETE", "/api/v1/namespaces/default/pods/p2?gracePeriodSeconds=0", NULL));
    s = expect_one("web", "[]");
    cr_assert_eq(json_array_size(json_object_get(s, "ports")), 0);
    json_decref(s);

    /* The Service goes: the garbage collector takes its slices. */
    json_decref(fx_req(0, "DELETE", SVCS "/web", NULL));
    bool gone = false;
    for (int i = 0; i < 6000 && !gone; i++) {
        json_t *items = slices_of("web");
        gone = json_array_size(items) == 0;
        json_decref(items);
        if (!gone)
            fx_sleep_ms(5);
    }
    cr_assert(gone, "slices outlived their Service");
}

Test(endpointslice, groups_by_port_list)
{
    json_decref(fx_req(201, "POST", SVCS,
                       "{\"metadata\":{\"name\":\"api\"},\"spec\":{\"selector\":{\"app\":\"api\"},"
                       "\"ports\":[{\"name\":\"http\",\"port\":80,\"targetPort\":\"web\"}]}}"));
    fx_pod("default", "q1", "{\"app\":\"api\"}", "[{\"name\":\"web\",\"containerPort\":8080}]",
           NULL, "10.0.1.1", true, NULL);
    fx_pod("default", "q2", "{\"app\":\"api\"}", "[{\"name\":\"web\",\"containerPort\":9090}]",
           NULL, "10.0.1.2", true, NULL);
    json_t *items = NULL;
    bool ok = false;
    for (int i = 0; i < 6000 && !ok; i++) {
        json_decref(items);
        items = slices_of("api");
        ok = json_array_size(items) == 2 && json_array_size(fx_at(items, "0.endpoints")) == 1 &&
             json_array_size(fx_at(items, "1.endpoints")) == 1;
        if (!ok)
            fx_sleep_ms(5);
    }
    cr_assert(ok, "two slices of one endpoint each");
    long long seen = 0;
    for (size_t i = 0; i < 2; i++) {
        json_t *s = json_array_get(items, i);
        const char *pod = json_string_value(fx_at(s, "endpoints.0.targetRef.name"));
        long long port = json_integer_value(fx_at(s, "ports.0.port"));
        cr_assert((!strcmp(pod, "q1") && port == 8080) || (!strcmp(pod, "q2") && port == 9090),
                  "%s with port %lld", pod, port);
        seen += port;
    }
    cr_assert_eq(seen, 8080 + 9090);

    /* A slice deleted by hand is made again (under a new name). */
    char was[128];
    snprintf(was, sizeof was, "%s", json_string_value(fx_at(items, "0.metadata.name")));
    json_decref(items);
    items = NULL;
    json_decref(fx_req(0, "DELETE", fx_s(SLICES "/%s", was), NULL));
    ok = false;
    for (int i = 0; i < 6000 && !ok; i++) {
        json_decref(items);
        items = slices_of("api");
        const char *n0 = json_string_value(fx_at(items, "0.metadata.name"));
        const char *n1 = json_string_value(fx_at(items, "1.metadata.name"));
        ok = json_array_size(items) == 2 && n0 && n1 && strcmp(n0, was) && strcmp(n1, was) &&
             json_array_size(fx_at(items, "0.endpoints")) == 1 &&
             json_array_size(fx_at(items, "1.endpoints")) == 1;
        if (!ok)
            fx_sleep_ms(5);
    }
    cr_assert(ok, "the deleted slice was not made again");
    json_decref(items);
    items = NULL;

    /* The Service's port changes: one port list for both, one slice. */
    json_decref(fx_req(0, "PATCH", SVCS "/api",
                       "{\"spec\":{\"ports\":[{\"name\":\"http\",\"port\":80,"
                       "\"targetPort\":7000}]}}"));
    ok = false;
    for (int i = 0; i < 6000 && !ok; i++) {
        json_decref(items);
        items = slices_of("api");
        ok = json_array_size(items) == 1 && json_array_size(fx_at(items, "0.endpoints")) == 2 &&
             json_integer_value(fx_at(items, "0.ports.0.port")) == 7000;
        if (!ok)
            fx_sleep_ms(5);
    }
    cr_assert(ok, "not one slice of both pods on port 7000");
    json_decref(items);
}

Test(endpointslice, at_most_100_a_slice)
{
    json_decref(fx_req(201, "POST", SVCS,
                       "{\"metadata\":{\"name\":\"big\"},\"spec\":{\"selector\":{\"app\":\"big\"},"
                       "\"ports\":[{\"port\":80}]}}"));
    for (int i = 0; i < 150; i++)
        fx_pod("default", fx_s("m%03d", i), "{\"app\":\"big\"}", NULL, NULL,
               fx_s("10.2.%d.%d", i / 200, i % 200 + 1), true, NULL);
    json_t *items = NULL;
    bool ok = false;
    for (int i = 0; i < 2000 && !ok; i++) {
        json_decref(items);
        items = slices_of("big");
        size_t a = json_array_size(fx_at(items, "0.endpoints")),
               b = json_array_size(fx_at(items, "1.endpoints"));
        ok = json_array_size(items) == 2 && a + b == 150;
        if (!ok)
            fx_sleep_ms(5);
    }
    if (!ok) {
        size_t k;
        json_t *it;
        json_array_foreach(items, k, it)
        {
            cr_log_error("slice %s: %zu endpoints, rv %s",
                         json_string_value(fx_at(it, "metadata.name")),
                         json_array_size(json_object_get(it, "endpoints")),
                         json_string_value(fx_at(it, "metadata.resourceVersion")));
        }
    }
    cr_assert(ok, "two slices holding 150 endpoints, not %zu", json_array_size(items));
    size_t sizes[2];
    json_t *seen = json_object();
    for (size_t i = 0; i < 2; i++) {
        json_t *eps = fx_at(items, fx_s("%zu.endpoints", i));
        sizes[i] = json_array_size(eps);
        const char *prev = "";
        size_t j;
        json_t *e;
        json_array_foreach(eps, j, e)
        {
            const char *n = json_string_value(fx_at(e, "targetRef.name"));
            cr_assert_gt(strcmp(n, prev), 0, "sorted by pod name");
            cr_assert_null(json_object_get(seen, n), "%s twice", n);
            json_object_set_new(seen, n, json_true());
            prev = n;
        }
    }
    cr_assert_eq(json_object_size(seen), 150);
    cr_assert((sizes[0] == 100 && sizes[1] == 50) || (sizes[0] == 50 && sizes[1] == 100),
              "sizes %zu and %zu", sizes[0], sizes[1]);
    json_decref(seen);
    json_decref(items);
}
