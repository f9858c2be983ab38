/*
 * test_services_all.c - the six service, account and disruption
 * controllers in one cluster (the default set of this part): they share
 * the Pod and Service caches, and each still does its job.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "svcfix.h"

#define WAIT_MS 30000

static void setup(void)
{
    fx_start("{\"controllers\":[\"endpoints\",\"endpointslice\",\"serviceaccount\","
             "\"serviceaccount-token\",\"root-ca-cert-publisher\",\"disruption\"],\"nodes\":0}");
}

static void teardown(void)
{
    fx_stop();
}

TestSuite(services_all, .init = setup, .fini = teardown, .timeout = 90);

static bool has(const char *path, const char *field, const char *want)
{
    json_t *o = fx_wait_field(path, field, want, WAIT_MS);
    json_t *w = json_loads(want, JSON_DECODE_ANY, NULL);
    json_t *v = o ? fx_at(o, field) : NULL;
    bool ok = v && json_equal(v, w);
    json_decref(w);
    json_decref(o);
    return ok;
}

Test(services_all, together)
{
    json_decref(fx_req(201, "POST", "/api/v1/namespaces/default/services",
                       "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"selector\":{\"app\":\"web\"},"
                       "\"ports\":[{\"port\":80,\"targetPort\":8080}]}}"));
    json_decref(fx_req(201, "POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
                       "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"minAvailable\":1,"
                       "\"selector\":{\"matchLabels\":{\"app\":\"web\"}}}}"));
    fx_pod("default", "w1", "{\"app\":\"web\"}", NULL, NULL, "10.0.0.1", true, NULL);
    fx_pod("default", "w2", "{\"app\":\"web\"}", NULL, NULL, "10.0.0.2", true, NULL);

    cr_assert(has("/api/v1/namespaces/default/endpoints/web", "subsets.0.addresses.1.ip",
                  "\"10.0.0.2\""));
    bool sliced = false;
    for (int i = 0; i < WAIT_MS / 5 && !sliced; i++) {
        json_t *l = fx_get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices");
        sliced = json_array_size(fx_at(l, "items.0.endpoints")) == 2;
        json_decref(l);
        if (!sliced)
            fx_sleep_ms(5);
    }
    cr_assert(sliced, "no EndpointSlice with both pods");
    cr_assert(has("/apis/policy/v1/namespaces/default/poddisruptionbudgets/web",
                  "status.disruptionsAllowed", "1"));
    cr_assert(
        has("/api/v1/namespaces/default/serviceaccounts/default", "metadata.name", "\"default\""));
    json_t *cm = NULL;
    for (int i = 0; i < WAIT_MS / 5 && !cm; i++) {
        cm = fx_get("/api/v1/namespaces/default/configmaps/kube-root-ca.crt");
        if (!cm)
            fx_sleep_ms(5);
    }
    cr_assert_not_null(cm);
    json_decref(cm);

    /* A token for the default account, which the serviceaccount controller made. */
    json_decref(fx_req(201, "POST", "/api/v1/namespaces/default/secrets",
                       "{\"metadata\":{\"name\":\"tok\",\"annotations\":"
                       "{\"kubernetes.io/service-account.name\":\"default\"}},"
                       "\"type\":\"kubernetes.io/service-account-token\"}"));
    json_t *s = NULL;
    for (int i = 0; i < WAIT_MS / 5; i++) {
        json_decref(s);
        s = fx_get("/api/v1/namespaces/default/secrets/tok");
        if (json_object_get(json_object_get(s, "data"), "token"))
            break;
        fx_sleep_ms(5);
    }
    cr_assert_not_null(json_object_get(json_object_get(s, "data"), "token"));
    json_decref(s);
}
