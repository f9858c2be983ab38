/*
 * test_serviceaccount.c - the ServiceAccount controller against fakeapi:
 * a "default" ServiceAccount in every namespace, made again when deleted;
 * with the root CA publisher, a namespace's deletion is not undone.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "svcfix.h"

#define WAIT_MS 30000

static void setup(void)
{
    fx_start("{\"controllers\":[\"serviceaccount\",\"root-ca-cert-publisher\"],\"nodes\":0}");
}

static void teardown(void)
{
    fx_stop();
}

TestSuite(serviceaccount, .init = setup, .fini = teardown, .timeout = 60);

static json_t *wait_sa(const char *ns)
{
    json_t *sa = fx_wait_field(fx_s("/api/v1/namespaces/%s/serviceaccounts/default", ns),
                               "metadata.name", "\"default\"", WAIT_MS);
    cr_assert_not_null(sa, "no default ServiceAccount in %s", ns);
    return sa;
}

Test(serviceaccount, default_in_every_namespace_and_recreated)
{
    const char *nss[] = {"default", "kube-system", "kube-public"};
    for (size_t i = 0; i < 3; i++)
        json_decref(wait_sa(nss[i]));

    json_decref(fx_req(201, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"team\"}}"));
    json_t *sa = wait_sa("team");
    cr_assert_null(json_object_get(sa, "secrets"));
    char uid[64];
    snprintf(uid, sizeof uid, "%s", json_string_value(fx_at(sa, "metadata.uid")));
    json_decref(sa);

    /* Deleted: made again (a new object). */
    json_decref(fx_req(0, "DELETE", "/api/v1/namespaces/team/serviceaccounts/default", NULL));
    bool again = false;
    for (int i = 0; i < WAIT_MS / 5 && !again; i++) {
        json_t *now = fx_get("/api/v1/namespaces/team/serviceaccounts/default");
        again = now && strcmp(json_string_value(fx_at(now, "metadata.uid")), uid);
        json_decref(now);
        if (!again)
            fx_sleep_ms(5);
    }
    cr_assert(again, "the default ServiceAccount was not made again");

    /* Other ServiceAccounts are not its business. */
    json_decref(fx_req(201, "POST", "/api/v1/namespaces/team/serviceaccounts",
                       "{\"metadata\":{\"name\":\"builder\"}}"));
    json_decref(fx_req(0, "DELETE", "/api/v1/namespaces/team/serviceaccounts/builder", NULL));
    fx_sleep_ms(200);
    cr_assert_null(fx_get("/api/v1/namespaces/team/serviceaccounts/builder"));
}

/* A namespace being deleted is left alone: its ServiceAccount and CA map
 * go with it and are not made again, so the deletion finishes. */
Test(serviceaccount, deleted_namespace_not_refilled)
{
    json_decref(fx_req(201, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"gone\"}}"));
    json_decref(wait_sa("gone"));
    json_t *cm = fx_wait_field("/api/v1/namespaces/gone/configmaps/kube-root-ca.crt",
                               "metadata.name", "\"kube-root-ca.crt\"", WAIT_MS);
    cr_assert_not_null(cm);
    json_decref(cm);
    json_decref(fx_req(0, "DELETE", "/api/v1/namespaces/gone", NULL));
    bool gone = false;
    for (int i = 0; i < WAIT_MS / 5 && !gone; i++) {
        json_t *ns = fx_get("/api/v1/namespaces/gone");
        gone = ns == NULL;
        json_decref(ns);
        if (!gone)
            fx_sleep_ms(5);
    }
    cr_assert(gone, "the namespace was not deleted");
    fx_sleep_ms(200);
    cr_assert_null(fx_get("/api/v1/namespaces/gone/serviceaccounts/default"));
    cr_assert_null(fx_get("/api/v1/namespaces/gone/configmaps/kube-root-ca.crt"));
}
