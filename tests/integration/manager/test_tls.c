/*
 * Integration tests of https: a fakeapi with tls (and, mostly,
 * tls_require_client_cert) on port 0, and ctrl_clients configured from
 * kubeconfig text that holds its CA and client certificate as base64 data,
 * as `fakeapi serve --tls` writes it. A client with the right CA and
 * certificate does every verb and watches; one without the certificate, with
 * a certificate of another CA, or trusting another CA gets no answer at all.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/client.h"
#include "ctrl/config.h"
#include "fakeapi/fakeapi.h"

static fakeapi_server *api;   /* the server under test */
static fakeapi_server *other; /* another TLS server: another CA */

static void stop(void)
{
    fakeapi_stop(api);
    fakeapi_stop(other);
    api = other = NULL;
}

TestSuite(tls, .fini = stop, .timeout = 60);

static void start(bool require_client_cert)
{
    fakeapi_options o = {.tls = true, .tls_require_client_cert = require_client_cert};
    cr_assert_eq(fakeapi_start(&o, &api), 0);
    cr_assert_eq(fakeapi_start(&(fakeapi_options){.tls = true}, &other), 0);
}

/* base64 of a NUL-terminated string, into a new string. */
static char *b64(const char *text)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = (const unsigned char *)text;
    size_t n = strlen(text);
    char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
    cr_assert_not_null(out);
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        *o++ = tab[v >> 18 & 63];
        *o++ = tab[v >> 12 & 63];
        *o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? tab[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

/* What a test client trusts and presents. */
typedef struct creds {
    const fakeapi_server *ca_of;   /* trust this server's CA; NULL = none */
    bool insecure;                 /* insecure-skip-tls-verify */
    const fakeapi_server *cert_of; /* present this server's client certificate; NULL = none */
} creds;

/* A client for api built from kubeconfig text; no retries, so that a refusal
 * shows at once. */
static ctrl_client *client_for(creds c)
{
    char *ca = c.ca_of ? b64(fakeapi_tls_ca_pem(c.ca_of)) : NULL;
    char *cert = c.cert_of ? b64(fakeapi_tls_client_cert_pem(c.cert_of)) : NULL;
    char *key = c.cert_of ? b64(fakeapi_tls_client_key_pem(c.cert_of)) : NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_not_null(f);
    fprintf(f,
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
            "    server: %s\n",
            fakeapi_url(api));
    if (ca)
        fprintf(f, "    certificate-authority-data: %s\n", ca);
    if (c.insecure)
        fprintf(f, "    insecure-skip-tls-verify: true\n");
    fprintf(f, "users:\n- name: u\n  user:\n");
    if (cert)
        fprintf(f, "    client-certificate-data: %s\n    client-key-data: %s\n", cert, key);
    else
        fprintf(f, "    username: nobody\n    password: none\n");
    fprintf(f, "contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n"
               "current-context: x\n");
    fclose(f);

    ctrl_config *cfg = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_config_from_kubeconfig_data(text, len, NULL, NULL, &cfg, &err), 0, "%s\n%s",
                 err.message, text);
    ctrl_client *cl = NULL;
    cr_assert_eq(ctrl_client_new(cfg, &(ctrl_client_options){.max_retries = -1}, &cl, &err), 0,
                 "%s", err.message);
    ctrl_config_free(cfg);
    ctrl_error_deinit(&err);
    free(text);
    free(ca);
    free(cert);
    free(key);
    return cl;
}

/* rc of one GET of the namespace "default". */
static int get_default_ns(ctrl_client *cl, ctrl_error *err)
{
    json_t *ns = NULL;
    int rc = ctrl_client_get(cl, "v1", "Namespace", NULL, "default", &ns, err);
    if (rc == 0)
        cr_assert_str_eq(
            json_string_value(json_object_get(json_object_get(ns, "metadata"), "name")), "default");
    json_decref(ns);
    return rc;
}

static int stop_at_first(const ctrl_watch_event *ev, void *user)
{
    json_t *md = json_object_get(ev->object, "metadata");
    snprintf(user, 64, "%s %s", ev->type_name, json_string_value(json_object_get(md, "name")));
    return 1;
}

Test(tls, material_and_url)
{
    start(true);
    cr_assert_eq(strncmp(fakeapi_url(api), "https://127.0.0.1:", 18), 0, "%s", fakeapi_url(api));
    cr_assert_eq(strncmp(fakeapi_tls_ca_pem(api), "-----BEGIN CERTIFICATE-----", 27), 0);
    cr_assert_eq(strncmp(fakeapi_tls_client_cert_pem(api), "-----BEGIN CERTIFICATE-----", 27), 0);
    cr_assert_eq(strncmp(fakeapi_tls_client_key_pem(api), "-----BEGIN PRIVATE KEY-----", 27), 0);
    /* Each server makes its own CA. */
    cr_assert_str_neq(fakeapi_tls_ca_pem(api), fakeapi_tls_ca_pem(other));

    fakeapi_server *plain = NULL;
    cr_assert_eq(fakeapi_start(&(fakeapi_options){0}, &plain), 0);
    cr_assert_eq(strncmp(fakeapi_url(plain), "http://", 7), 0);
    cr_assert_null(fakeapi_tls_ca_pem(plain));
    cr_assert_null(fakeapi_tls_client_cert_pem(plain));
    cr_assert_null(fakeapi_tls_client_key_pem(plain));
    fakeapi_stop(plain);
}

Test(tls, ca_and_client_cert_create_get_list_watch)
{
    start(true);
    ctrl_client *cl = client_for((creds){.ca_of = api, .cert_of = api});
    ctrl_error err = {0};
    json_t *cm =
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                  "metadata", "namespace", "default", "name", "over-tls", "data", "k", "v");
    json_t *created = NULL, *got = NULL, *list = NULL;
    cr_assert_eq(ctrl_client_create(cl, cm, NULL, &created, &err), 0, "%s", err.message);
    cr_assert_eq(ctrl_client_get(cl, "v1", "ConfigMap", "default", "over-tls", &got, &err), 0, "%s",
                 err.message);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(got, "data"), "k")), "v");
    cr_assert_eq(ctrl_client_list(cl, "v1", "ConfigMap", "default", NULL, &list, &err), 0, "%s",
                 err.message);
    cr_assert_eq(json_array_size(json_object_get(list, "items")), 1);

    /* A watch streams over TLS too: the existing object comes as ADDED. */
    char first[64] = "";
    ctrl_watch_options wo = {.timeout_seconds = 10, .field_selector = "metadata.name=over-tls"};
    cr_assert_eq(
        ctrl_client_watch(cl, "v1", "ConfigMap", "default", &wo, NULL, stop_at_first, first, &err),
        0, "%s", err.message);
    cr_assert_str_eq(first, "ADDED over-tls");

    /* Written through https, visible in-process. */
    json_t *direct = NULL;
    cr_assert_eq(fakeapi_get(api, "v1", "ConfigMap", "default", "over-tls", &direct, NULL), 0);
    json_decref(direct);
    json_decref(cm);
    json_decref(created);
    json_decref(got);
    json_decref(list);
    ctrl_error_deinit(&err);
    ctrl_client_free(cl);
}

Test(tls, no_client_cert_is_refused)
{
    start(true);
    ctrl_client *cl = client_for((creds){.ca_of = api});
    ctrl_error err = {0};
    cr_assert_eq(get_default_ns(cl, &err), CTRL_ERR_TRANSPORT, "%s", err.message);
    cr_assert_eq(err.http_status, 0);
    ctrl_error_deinit(&err);
    ctrl_client_free(cl);
}

Test(tls, client_cert_of_another_ca_is_refused)
{
    start(true);
    ctrl_client *cl = client_for((creds){.ca_of = api, .cert_of = other});
    ctrl_error err = {0};
    cr_assert_eq(get_default_ns(cl, &err), CTRL_ERR_TRANSPORT, "%s", err.message);
    ctrl_error_deinit(&err);
    ctrl_client_free(cl);
}

Test(tls, wrong_ca_fails_verification)
{
    start(false);
    /* Even with the right client certificate: the server's is not trusted. */
    ctrl_client *cl = client_for((creds){.ca_of = other, .cert_of = api});
    ctrl_error err = {0};
    cr_assert_eq(get_default_ns(cl, &err), CTRL_ERR_TRANSPORT, "%s", err.message);
    cr_assert(strstr(err.message, "certificate"), "%s", err.message); /* not a refusal */
    cr_assert_eq(err.http_status, 0);
    ctrl_error_deinit(&err);
    ctrl_client_free(cl);
    /* No CA at all: the system's roots do not know it either. */
    cl = client_for((creds){.cert_of = api});
    cr_assert_eq(get_default_ns(cl, &err), CTRL_ERR_TRANSPORT, "%s", err.message);
    cr_assert(strstr(err.message, "certificate"), "%s", err.message);
    ctrl_error_deinit(&err);
    ctrl_client_free(cl);
}

Test(tls, insecure_without_ca_only_when_client_certs_are_optional)
{
    start(false);
    ctrl_client *cl = client_for((creds){.insecure = true});
    ctrl_error err = {0};
    cr_assert_eq(get_default_ns(cl, &err), 0, "%s", err.message);
    ctrl_client_free(cl);
    fakeapi_stop(api);
    fakeapi_stop(other);
    api = other = NULL;

    start(true);
    cl = client_for((creds){.insecure = true});
    cr_assert_eq(get_default_ns(cl, &err), CTRL_ERR_TRANSPORT, "%s", err.message);
    ctrl_error_deinit(&err);
    ctrl_client_free(cl);
    /* insecure with the certificate passes the server's check. */
    cl = client_for((creds){.insecure = true, .cert_of = api});
    cr_assert_eq(get_default_ns(cl, &err), 0, "%s", err.message);
    ctrl_error_deinit(&err);
    ctrl_client_free(cl);
}
