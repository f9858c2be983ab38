/*
 * test_rootca.c - the root CA publisher against fakeapi: kube-root-ca.crt
 * in every namespace with the placeholder CA or the document's caCert and
 * upstream's description, restored when changed or deleted; a bad caCert
 * is refused at start.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "cacert.h"
#include "svcfix.h"

#define WAIT_MS 30000
#define CM "/api/v1/namespaces/%s/configmaps/kube-root-ca.crt"
#define DESCRIPTION                                                                                \
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "      \
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "      \
    "guaranteed across distributions of Kubernetes clusters."

static void teardown(void)
{
    fx_stop();
}

TestSuite(rootca, .fini = teardown, .timeout = 60);

static json_t *wait_ca(const char *ns, const char *pem)
{
    json_t *cm = NULL;
    for (int i = 0; i < WAIT_MS / 5; i++) {
        cm = fx_get(fx_s(CM, ns));
        const char *have =
            json_string_value(json_object_get(json_object_get(cm, "data"), "ca.crt"));
        if (have && !strcmp(have, pem))
            break;
        json_decref(cm);
        cm = NULL;
        fx_sleep_ms(5);
    }
    cr_assert_not_null(cm, "no kube-root-ca.crt with the CA in %s", ns);
    return cm;
}

/* The ConfigMap has exactly pem as ca.crt, and the description. */
static void check(const json_t *cm, const char *pem)
{
    json_t *data = json_object_get(cm, "data");
    cr_assert_eq(json_object_size(data), 1);
    cr_assert_str_eq(json_string_value(json_object_get(data, "ca.crt")), pem);
    cr_assert_str_eq(json_string_value(json_object_get(fx_at(cm, "metadata.annotations"),
                                                       "kubernetes.io/description")),
                     DESCRIPTION);
}

Test(rootca, placeholder_everywhere_and_restored)
{
    fx_start("{\"controllers\":[\"root-ca-cert-publisher\"],\"nodes\":0}");
    const char *pem = kc__placeholder_ca_pem;
    cr_assert(strstr(pem, "-----BEGIN CERTIFICATE-----"));
    const char *nss[] = {"default", "kube-system", "kube-public"};
    for (size_t i = 0; i < 3; i++) {
        json_t *cm = wait_ca(nss[i], pem);
        check(cm, pem);
        json_decref(cm);
    }
    json_decref(fx_req(201, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"team\"}}"));
    json_t *cm = wait_ca("team", pem);
    check(cm, pem);
    json_decref(cm);

    /* Changed by hand: written back (a label someone added stays). */
    json_decref(fx_req(0, "PATCH", fx_s(CM, "team"),
                       "{\"metadata\":{\"labels\":{\"mine\":\"yes\"},\"annotations\":"
                       "{\"kubernetes.io/description\":null}},\"data\":{\"ca.crt\":\"forged\","
                       "\"extra\":\"x\"}}"));
    bool back = false;
    for (int i = 0; i < WAIT_MS / 5 && !back; i++) {
        cm = fx_get(fx_s(CM, "team"));
        back = cm && json_object_size(json_object_get(cm, "data")) == 1 &&
               json_object_get(fx_at(cm, "metadata.annotations"), "kubernetes.io/description");
        if (!back) {
            json_decref(cm);
            fx_sleep_ms(5);
        }
    }
    cr_assert(back, "kube-root-ca.crt was not restored");
    check(cm, pem);
    cr_assert_str_eq(json_string_value(fx_at(cm, "metadata.labels.mine")), "yes");
    json_decref(cm);

    /* Deleted: made again. */
    json_decref(fx_req(0, "DELETE", fx_s(CM, "default"), NULL));
    cm = wait_ca("default", pem);
    check(cm, pem);
    json_decref(cm);
}

Test(rootca, ca_from_the_document)
{
    const char *pem = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n";
    json_t *doc = json_pack("{s:[s], s:i, s:s}", "controllers", "root-ca-cert-publisher", "nodes",
                            0, "caCert", pem);
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    fx_start(text);
    free(text);
    json_t *cm = wait_ca("default", pem);
    check(cm, pem);
    json_decref(cm);
}

Test(rootca, bad_ca_refused)
{
    cr_assert_eq(fakeapi_start(&(fakeapi_options){.seed = 5}, &fx_api), 0);
    const char *docs[] = {
        "{\"controllers\":[\"root-ca-cert-publisher\"],\"nodes\":0,\"caCert\":7}",
        "{\"controllers\":[\"root-ca-cert-publisher\"],\"nodes\":0,\"caCert\":\"/"
        "nonexistent.pem\"}",
    };
    const char *why[] = {"caCert: PEM text or the name of a PEM file",
                         "caCert: /nonexistent.pem cannot be read"};
    for (size_t i = 0; i < 2; i++) {
        json_t *d = json_loads(docs[i], 0, NULL);
        kc_config *cfg = NULL;
        char err[512] = "";
        cr_assert_eq(kc_config_new(d, NULL, &cfg, err, sizeof err), 0, "%s", err);
        json_decref(d);
        kc_cluster_options co = {.config = cfg, .quiet = true};
        kc_cluster *cl = NULL;
        int rc = kc_cluster_start(fakeapi_url(fx_api), &co, &cl, err, sizeof err);
        kc_config_free(cfg);
        cr_assert_eq(rc, KC_ERR_INPUT, "rc %d", rc);
        cr_assert_null(cl);
        cr_assert_str_eq(err, why[i]);
    }
}
