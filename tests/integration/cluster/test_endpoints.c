/*
 * test_endpoints.c - the Endpoints controller against fakeapi: subsets as
 * upstream packs them, updates as pods turn ready, unready and go, labels,
 * headless Services, hostnames, selectorless Services and deletion.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "svcfix.h"

#define EP "/api/v1/namespaces/default/endpoints/"
#define SVCS "/api/v1/namespaces/default/services"
#define WAIT_MS 30000

static void setup(void)
{
    fx_start("{\"controllers\":[\"endpoints\"],\"nodes\":0}");
}

static void teardown(void)
{
    fx_stop();
}

TestSuite(endpoints, .init = setup, .fini = teardown, .timeout = 120);

static const char *ref(const char *name, const char *uid)
{
    return fx_s("{\"kind\":\"Pod\",\"namespace\":\"default\",\"name\":\"%s\",\"uid\":\"%s\"}", name,
                uid);
}

/* Wait for the Endpoints' subsets to be want; assert they are. */
static json_t *expect_subsets(const char *name, const char *want_text)
{
    /* want_text may be in fx_s's ring: keep a copy. */
    char want[16384];
    snprintf(want, sizeof want, "%s", want_text);
    json_t *ep = fx_wait_field(fx_s(EP "%s", name), "subsets", want, WAIT_MS);
    cr_assert_not_null(ep, "no Endpoints %s", name);
    json_t *w = json_loads(want, 0, NULL);
    cr_assert_not_null(w, "bad expected JSON %s", want);
    json_t *have = json_object_get(ep, "subsets");
    char *text = have ? json_dumps(have, JSON_COMPACT) : NULL;
    cr_assert(have && json_equal(have, w), "subsets of %s:\n have %s\n want %s", name,
              text ? text : "(none)", want);
    free(text);
    json_decref(w);
    return ep;
}

Test(endpoints, subsets_ports_and_updates)
{
    json_decref(fx_req(201, "POST", SVCS,
                       "{\"metadata\":{\"name\":\"web\",\"labels\":{\"tier\":\"front\"}},"
                       "\"spec\":{\"selector\":{\"app\":\"web\"},\"ports\":["
                       "{\"name\":\"http\",\"port\":80,\"targetPort\":\"web\"},"
                       "{\"name\":\"metrics\",\"port\":9090,\"targetPort\":9100}]}}"));
    const char *web_port = "[{\"name\":\"web\",\"containerPort\":8080}]";
    char ua[64], ub[64], uc[64];
    snprintf(ua, sizeof ua, "%s",
             fx_pod("default", "a", "{\"app\":\"web\"}", web_port, "{\"nodeName\":\"n1\"}",
                    "10.0.0.3", true, NULL));
    snprintf(ub, sizeof ub, "%s",
             fx_pod("default", "b", "{\"app\":\"web\"}", web_port, NULL, "10.0.0.2", false, NULL));
    /* c has no port named "web": it serves only the metrics port. */
    snprintf(uc, sizeof uc, "%s",
             fx_pod("default", "c", "{\"app\":\"web\"}", NULL, NULL, "10.0.0.1", true, NULL));
    fx_pod("default", "d", "{\"app\":\"web\"}", web_port, NULL, NULL, true, NULL); /* no IP */
    fx_pod("default", "e", "{\"app\":\"db\"}", web_port, NULL, "10.0.0.9", true, NULL);

    const char *A =
        fx_s("{\"ip\":\"10.0.0.3\",\"nodeName\":\"n1\",\"targetRef\":%s}", ref("a", ua));
    const char *B = fx_s("{\"ip\":\"10.0.0.2\",\"targetRef\":%s}", ref("b", ub));
    const char *C = fx_s("{\"ip\":\"10.0.0.1\",\"targetRef\":%s}", ref("c", uc));
    const char *HTTP = "[{\"name\":\"http\",\"port\":8080,\"protocol\":\"TCP\"}]";
    const char *METRICS = "[{\"name\":\"metrics\",\"port\":9100,\"protocol\":\"TCP\"}]";
    char a[512], b[512], c[512];
    snprintf(a, sizeof a, "%s", A);
    snprintf(b, sizeof b, "%s", B);
    snprintf(c, sizeof c, "%s", C);

    json_t *ep = expect_subsets(
        "web", fx_s("[{\"addresses\":[%s,%s],\"notReadyAddresses\":[%s],\"ports\":%s},"
                    "{\"addresses\":[%s],\"notReadyAddresses\":[%s],\"ports\":%s}]",
                    c, a, b, METRICS, a, b, HTTP));
    cr_assert_str_eq(json_string_value(fx_at(ep, "metadata.labels.tier")), "front");
    json_t *labels = fx_at(ep, "metadata.labels");
    cr_assert_str_eq(
        json_string_value(json_object_get(labels, "endpoints.kubernetes.io/managed-by")),
        "endpoint-controller");
    cr_assert_eq(json_object_size(labels), 2);
    cr_assert_null(json_object_get(ep, "ownerReferences"));
    cr_assert_not_null(json_object_get(fx_at(ep, "metadata.annotations"),
                                       "endpoints.kubernetes.io/last-change-trigger-time"));
    /* Settled: no more writes. */
    const char *rv0 = json_string_value(fx_at(ep, "metadata.resourceVersion"));
    char rv[32];
    snprintf(rv, sizeof rv, "%s", rv0);
    json_decref(ep);
    fx_sleep_ms(300);
    ep = fx_get(EP "web");
    cr_assert_str_eq(json_string_value(fx_at(ep, "metadata.resourceVersion")), rv);
    json_decref(ep);

    /* b turns ready: the trigger time is its transition. */
    fx_pod_ready("default", "b", true, "2026-01-01T00:05:00Z");
    ep = expect_subsets("web", fx_s("[{\"addresses\":[%s,%s,%s],\"ports\":%s},"
                                    "{\"addresses\":[%s,%s],\"ports\":%s}]",
                                    c, b, a, METRICS, b, a, HTTP));
    cr_assert_str_eq(
        json_string_value(json_object_get(fx_at(ep, "metadata.annotations"),
                                          "endpoints.kubernetes.io/last-change-trigger-time")),
        "2026-01-01T00:05:00Z");
    json_decref(ep);

    /* a goes. */
    json_decref(fx_req(0, "DELETE", "/api/v1/namespaces/default/pods/a", NULL));
    json_decref(expect_subsets("web", fx_s("[{\"addresses\":[%s,%s],\"ports\":%s},"
                                           "{\"addresses\":[%s],\"ports\":%s}]",
                                           c, b, METRICS, b, HTTP)));

    /* b turns unready again. */
    fx_pod_ready("default", "b", false, "2026-01-01T00:06:00Z");
    json_decref(expect_subsets("web", fx_s("[{\"addresses\":[%s],\"notReadyAddresses\":[%s],"
                                           "\"ports\":%s},"
                                           "{\"notReadyAddresses\":[%s],\"ports\":%s}]",
                                           c, b, METRICS, b, HTTP)));

    /* A pod being deleted (held by a finalizer) leaves the endpoints. */
    json_decref(fx_req(0, "PATCH", "/api/v1/namespaces/default/pods/c",
                       "{\"metadata\":{\"finalizers\":[\"example.com/hold\"]}}"));
    json_decref(fx_req(0, "DELETE", "/api/v1/namespaces/default/pods/c", NULL));
    /* One address set for both ports now: one subset. */
    json_decref(expect_subsets(
        "web", fx_s("[{\"notReadyAddresses\":[%s],\"ports\":[{\"name\":\"http\",\"port\":8080,"
                    "\"protocol\":\"TCP\"},{\"name\":\"metrics\",\"port\":9100,"
                    "\"protocol\":\"TCP\"}]}]",
                    b)));
    json_decref(fx_req(0, "PATCH", "/api/v1/namespaces/default/pods/c",
                       "{\"metadata\":{\"finalizers\":null}}"));

    /* b is relabelled out of the Service: no subsets left. */
    json_decref(fx_req(0, "PATCH", "/api/v1/namespaces/default/pods/b",
                       "{\"metadata\":{\"labels\":{\"app\":\"other\"}}}"));
    json_t *empty = fx_wait_field(EP "web", "subsets", "null", WAIT_MS);
    cr_assert_not_null(empty);
    cr_assert_null(json_object_get(empty, "subsets"), "subsets left");
    json_decref(empty);
}

Test(endpoints, headless_publish_not_ready_hostname)
{
    json_decref(fx_req(201, "POST", SVCS,
                       "{\"metadata\":{\"name\":\"db\"},\"spec\":{\"clusterIP\":\"None\","
                       "\"publishNotReadyAddresses\":true,\"selector\":{\"app\":\"db\"}}}"));
    char ux[64], uy[64];
    snprintf(ux, sizeof ux, "%s",
             fx_pod("default", "db-0", "{\"app\":\"db\"}", NULL,
                    "{\"hostname\":\"db-0\",\"subdomain\":\"db\"}", "10.1.0.2", false, NULL));
    /* Another subdomain: no hostname. */
    snprintf(uy, sizeof uy, "%s",
             fx_pod("default", "db-1", "{\"app\":\"db\"}", NULL,
                    "{\"hostname\":\"db-1\",\"subdomain\":\"other\"}", "10.1.0.1", true, NULL));
    json_t *ep =
        expect_subsets("db", fx_s("[{\"addresses\":[{\"ip\":\"10.1.0.1\",\"targetRef\":%s},"
                                  "{\"ip\":\"10.1.0.2\",\"hostname\":\"db-0\",\"targetRef\":%s}]}]",
                                  ref("db-1", uy), ref("db-0", ux)));
    json_t *labels = fx_at(ep, "metadata.labels");
    cr_assert_str_eq(json_string_value(json_object_get(labels, "service.kubernetes.io/headless")),
                     "");
    json_decref(ep);
}

Test(endpoints, selectorless_recreate_and_delete)
{
    /* Hand-made endpoints of a Service without a selector stay as made. */
    json_decref(fx_req(201, "POST", SVCS,
                       "{\"metadata\":{\"name\":\"ext\"},\"spec\":{\"ports\":[{\"port\":5432}]}}"));
    json_t *mine = fx_req(201, "POST", "/api/v1/namespaces/default/endpoints",
                          "{\"metadata\":{\"name\":\"ext\"},\"subsets\":[{\"addresses\":"
                          "[{\"ip\":\"192.0.2.7\"}],\"ports\":[{\"port\":5432}]}]}");
    char rv[32];
    snprintf(rv, sizeof rv, "%s", json_string_value(fx_at(mine, "metadata.resourceVersion")));
    json_decref(mine);

    json_decref(fx_req(201, "POST", SVCS,
                       "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"selector\":{\"app\":\"web\"},"
                       "\"ports\":[{\"port\":80}]}}"));
    char ua[64];
    snprintf(ua, sizeof ua, "%s",
             fx_pod("default", "w", "{\"app\":\"web\"}", NULL, NULL, "10.0.0.5", true, NULL));
    const char *want = fx_s("[{\"addresses\":[{\"ip\":\"10.0.0.5\",\"targetRef\":%s}],"
                            "\"ports\":[{\"port\":80,\"protocol\":\"TCP\"}]}]",
                            ref("w", ua));
    char w[1024];
    snprintf(w, sizeof w, "%s", want);
    json_decref(expect_subsets("web", w));
    json_t *ext = fx_get(EP "ext");
    cr_assert_str_eq(json_string_value(fx_at(ext, "metadata.resourceVersion")), rv);
    cr_assert_null(fx_at(ext, "metadata.labels"));
    json_decref(ext);

    /* Deleted by hand: written again. */
    json_decref(fx_req(0, "DELETE", EP "web", NULL));
    json_decref(expect_subsets("web", w));

    /* The Service goes: so do its endpoints. */
    json_decref(fx_req(0, "DELETE", SVCS "/web", NULL));
    json_t *gone = fx_wait_field(EP "web", "metadata.name", "null", WAIT_MS);
    cr_assert_null(gone, "the Endpoints outlived its Service");
}

Test(endpoints, over_capacity_truncated)
{
    json_decref(fx_req(201, "POST", SVCS,
                       "{\"metadata\":{\"name\":\"big\"},\"spec\":{\"selector\":{\"app\":\"big\"},"
                       "\"ports\":[{\"port\":80}]}}"));
    /* 1,001 ready pods, and 5 unready ones: the ready ones come first. */
    for (int i = 0; i < 1006; i++)
        fx_pod("default", fx_s("b%04d", i), "{\"app\":\"big\"}", NULL, NULL,
               fx_s("10.3.%d.%d", i / 250, i % 250 + 1), i < 1001, NULL);
    json_t *ep = NULL;
    bool ok = false;
    for (int i = 0; i < WAIT_MS / 5 && !ok; i++) {
        json_decref(ep);
        ep = fx_get(EP "big");
        ok = ep && json_array_size(fx_at(ep, "subsets.0.addresses")) == 1000 &&
             json_object_get(fx_at(ep, "metadata.annotations"),
                             "endpoints.kubernetes.io/over-capacity");
        if (!ok)
            fx_sleep_ms(5);
    }
    cr_assert(ok, "1,000 addresses and the over-capacity annotation");
    cr_assert_eq(json_array_size(json_object_get(ep, "subsets")), 1);
    cr_assert_null(fx_at(ep, "subsets.0.notReadyAddresses"));
    cr_assert_str_eq(json_string_value(json_object_get(fx_at(ep, "metadata.annotations"),
                                                       "endpoints.kubernetes.io/over-capacity")),
                     "truncated");
    /* The first 1,000 by IP (as text): 10.3.4.1, the last of the ready ones, is cut. */
    json_t *addrs = fx_at(ep, "subsets.0.addresses");
    size_t i;
    json_t *a;
    json_array_foreach(addrs, i, a)
    {
        cr_assert_str_neq(json_string_value(json_object_get(a, "ip")), "10.3.4.1");
    }
    json_decref(ep);

    /* Back under capacity: the annotation goes. */
    for (int k = 0; k < 7; k++)
        json_decref(fx_req(0, "DELETE", fx_s("/api/v1/namespaces/default/pods/b%04d", k), NULL));
    ok = false;
    for (int k = 0; k < WAIT_MS / 5 && !ok; k++) {
        ep = fx_get(EP "big");
        ok = ep &&
             !json_object_get(fx_at(ep, "metadata.annotations"),
                              "endpoints.kubernetes.io/over-capacity") &&
             json_array_size(fx_at(ep, "subsets.0.addresses")) == 994 &&
             json_array_size(fx_at(ep, "subsets.0.notReadyAddresses")) == 5;
        json_decref(ep);
        if (!ok)
            fx_sleep_ms(5);
    }
    cr_assert(ok, "the over-capacity annotation stayed");
}
