/*
 * Unit tests for ctrl/config.h: kubeconfig parsing (contexts, tokens, token
 * files, CA/cert/key data and files, KUBECONFIG merging) and in-cluster
 * config from the environment and a service-account directory.
 *
 * Criterion runs each test in its own process, so setenv() stays local.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctrl/config.h"

static char dir[256];

static void mkdir_tmp(void)
{
    snprintf(dir, sizeof dir, "/tmp/ctrl-config-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
}

static void rm_tmp(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(config, .init = mkdir_tmp, .fini = rm_tmp);

/* Write dir/name and return its path (static buffer per call site is fine). */
static const char *write_file(const char *name, const char *text)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static ctrl_config *load_text(const char *text, const char *context)
{
    ctrl_config *cfg = NULL;
    ctrl_error err = {0};
    int rc = ctrl_config_from_kubeconfig_data(text, strlen(text), dir, context, &cfg, &err);
    cr_assert_eq(rc, 0, "load failed: %d %s", rc, err.message);
    ctrl_error_deinit(&err);
    return cfg;
}

static int load_fail(const char *text, const char *context, ctrl_error *err)
{
    ctrl_config *cfg = NULL;
    int rc = ctrl_config_from_kubeconfig_data(text, strlen(text), dir, context, &cfg, err);
    cr_assert_lt(rc, 0);
    cr_assert_null(cfg);
    return rc;
}

static const char two_contexts[] = "apiVersion: v1\n"
                                   "kind: Config\n"
                                   "current-context: dev\n"
                                   "clusters:\n"
                                   "- name: c1\n"
                                   "  cluster:\n"
                                   "    server: https://dev.example.com:6443/\n"
                                   "    insecure-skip-tls-verify: true\n"
                                   "- name: c2\n"
                                   "  cluster:\n"
                                   "    server: http://127.0.0.1:8080\n"
                                   "    tls-server-name: api.internal\n"
                                   "contexts:\n"
                                   "- name: dev\n"
                                   "  context: {cluster: c1, user: alice, namespace: team-a}\n"
                                   "- name: local\n"
                                   "  context: {cluster: c2, user: bob}\n"
                                   "users:\n"
                                   "- name: alice\n"
                                   "  user: {token: secret-token}\n"
                                   "- name: bob\n"
                                   "  user: {username: bob, password: pw}\n";

Test(config, current_context_token_namespace)
{
    ctrl_config *cfg = load_text(two_contexts, NULL);
    cr_assert_str_eq(ctrl_config_server(cfg), "https://dev.example.com:6443");
    cr_assert_str_eq(ctrl_config_context(cfg), "dev");
    cr_assert_str_eq(ctrl_config_namespace(cfg), "team-a");
    cr_assert_str_eq(ctrl_config_token(cfg), "secret-token");
    cr_assert(ctrl_config_insecure(cfg));
    size_t len = 99;
    cr_assert_null(ctrl_config_ca_data(cfg, &len));
    cr_assert_eq(len, 0);
    ctrl_config_free(cfg);
}

Test(config, named_context)
{
    ctrl_config *cfg = load_text(two_contexts, "local");
    cr_assert_str_eq(ctrl_config_server(cfg), "http://127.0.0.1:8080");
    cr_assert_str_eq(ctrl_config_namespace(cfg), "default");
    cr_assert_null(ctrl_config_token(cfg));
    cr_assert_str_eq(ctrl_config_username(cfg), "bob");
    cr_assert_str_eq(ctrl_config_password(cfg), "pw");
    cr_assert_str_eq(ctrl_config_tls_server_name(cfg), "api.internal");
    cr_assert_not(ctrl_config_insecure(cfg));
    ctrl_config *copy = ctrl_config_copy(cfg);
    ctrl_config_free(cfg);
    cr_assert_str_eq(ctrl_config_username(copy), "bob");
    ctrl_config_free(copy);
}

Test(config, unknown_context_and_missing_current)
{
    ctrl_error err = {0};
    cr_assert_eq(load_fail(two_contexts, "nope", &err), CTRL_ERR_CONFIG);
    cr_assert(strstr(err.message, "nope"), "%s", err.message);
    const char *no_current = "clusters: [{name: c, cluster: {server: 'http://x'}}]\n"
                             "contexts: [{name: a, context: {cluster: c}}]\n";
    cr_assert_eq(load_fail(no_current, NULL, &err), CTRL_ERR_CONFIG);
    ctrl_config *cfg = load_text(no_current, "a");
    cr_assert_str_eq(ctrl_config_server(cfg), "http://x");
    ctrl_config_free(cfg);
    cr_assert_eq(load_fail("contexts: [{name: a, context: {cluster: missing}}]\n", "a", &err),
                 CTRL_ERR_CONFIG);
    cr_assert_eq(load_fail("clusters: [{name: c, cluster: {}}]\n"
                           "contexts: [{name: a, context: {cluster: c}}]\n",
                           "a", &err),
                 CTRL_ERR_CONFIG);
    cr_assert_eq(load_fail("clusters: [{name: c, cluster: {server: 'ftp://x'}}]\n"
                           "contexts: [{name: a, context: {cluster: c}}]\n",
                           "a", &err),
                 CTRL_ERR_CONFIG);
    cr_assert_eq(load_fail("key: [unclosed\n", "a", &err), CTRL_ERR_CONFIG);
    ctrl_error_deinit(&err);
}

Test(config, server_without_scheme_is_https)
{
    ctrl_config *cfg = load_text("clusters: [{name: c, cluster: {server: 'k8s.local:6443'}}]\n"
                                 "contexts: [{name: a, context: {cluster: c}}]\n"
                                 "current-context: a\n",
                                 NULL);
    cr_assert_str_eq(ctrl_config_server(cfg), "https://k8s.local:6443");
    ctrl_config_free(cfg);
}

/* "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n" in base64. */
static const char ca_pem[] = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
static const char ca_b64[] =
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K";

Test(config, ca_data_base64)
{
    char text[1024];
    snprintf(text, sizeof text,
             "clusters: [{name: c, cluster: {server: 'https://h', certificate-authority-data: "
             "%s}}]\n"
             "contexts: [{name: a, context: {cluster: c}}]\ncurrent-context: a\n",
             ca_b64);
    ctrl_config *cfg = load_text(text, NULL);
    size_t len;
    const unsigned char *ca = ctrl_config_ca_data(cfg, &len);
    cr_assert_eq(len, strlen(ca_pem));
    cr_assert_eq(memcmp(ca, ca_pem, len), 0);
    ctrl_config_free(cfg);
}

Test(config, ca_data_bad_base64_and_insecure_conflict)
{
    ctrl_error err = {0};
    cr_assert_eq(load_fail("clusters: [{name: c, cluster: {server: 'https://h', "
                           "certificate-authority-data: 'not*base64'}}]\n"
                           "contexts: [{name: a, context: {cluster: c}}]\n",
                           "a", &err),
                 CTRL_ERR_CONFIG);
    cr_assert(strstr(err.message, "base64"), "%s", err.message);
    char text[1024];
    snprintf(text, sizeof text,
             "clusters: [{name: c, cluster: {server: 'https://h', insecure-skip-tls-verify: "
             "true, certificate-authority-data: %s}}]\n"
             "contexts: [{name: a, context: {cluster: c}}]\n",
             ca_b64);
    cr_assert_eq(load_fail(text, "a", &err), CTRL_ERR_CONFIG);
    ctrl_error_deinit(&err);
}

Test(config, ca_file_relative_to_kubeconfig)
{
    write_file("ca.crt", ca_pem);
    ctrl_config *cfg = load_text("clusters: [{name: c, cluster: {server: 'https://h', "
                                 "certificate-authority: ca.crt}}]\n"
                                 "contexts: [{name: a, context: {cluster: c}}]\n",
                                 "a");
    size_t len;
    const unsigned char *ca = ctrl_config_ca_data(cfg, &len);
    cr_assert_eq(len, strlen(ca_pem));
    cr_assert_eq(memcmp(ca, ca_pem, len), 0);
    ctrl_config_free(cfg);
    ctrl_error err = {0};
    cr_assert_eq(load_fail("clusters: [{name: c, cluster: {server: 'https://h', "
                           "certificate-authority: missing.crt}}]\n"
                           "contexts: [{name: a, context: {cluster: c}}]\n",
                           "a", &err),
                 CTRL_ERR_IO);
    ctrl_error_deinit(&err);
}

Test(config, client_certificate_and_key)
{
    /* "CERT" and "KEY" in base64, and a key file. */
    write_file("client.key", "KEY-FROM-FILE");
    ctrl_config *cfg = load_text("clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                                 "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
                                 "users: [{name: u, user: {client-certificate-data: Q0VSVA==, "
                                 "client-key: client.key}}]\n",
                                 "a");
    size_t len;
    const unsigned char *cert = ctrl_config_cert_data(cfg, &len);
    cr_assert_eq(len, 4);
    cr_assert_eq(memcmp(cert, "CERT", 4), 0);
    const unsigned char *key = ctrl_config_key_data(cfg, &len);
    cr_assert_eq(len, strlen("KEY-FROM-FILE"));
    cr_assert_eq(memcmp(key, "KEY-FROM-FILE", len), 0);
    ctrl_config_free(cfg);

    ctrl_error err = {0};
    cr_assert_eq(load_fail("clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                           "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
                           "users: [{name: u, user: {client-certificate-data: Q0VSVA==}}]\n",
                           "a", &err),
                 CTRL_ERR_CONFIG);
    ctrl_error_deinit(&err);
}

Test(config, token_file)
{
    write_file("token", "file-token\n");
    ctrl_config *cfg = load_text("clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                                 "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
                                 "users: [{name: u, user: {tokenFile: token}}]\n",
                                 "a");
    cr_assert_str_eq(ctrl_config_token(cfg), "file-token");
    char expect[512];
    snprintf(expect, sizeof expect, "%s/token", dir);
    cr_assert_str_eq(ctrl_config_token_file(cfg), expect);
    ctrl_config_free(cfg);

    /* A token wins over a token file, as in client-go. */
    cfg = load_text("clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                    "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
                    "users: [{name: u, user: {token: inline, tokenFile: token}}]\n",
                    "a");
    cr_assert_str_eq(ctrl_config_token(cfg), "inline");
    cr_assert_null(ctrl_config_token_file(cfg));
    ctrl_config_free(cfg);
}

Test(config, exec_plugin_only_is_unsupported)
{
    ctrl_error err = {0};
    cr_assert_eq(load_fail("clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                           "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
                           "users: [{name: u, user: {exec: {command: aws}}}]\n",
                           "a", &err),
                 CTRL_ERR_UNSUPPORTED);
    ctrl_error_deinit(&err);
}

Test(config, kubeconfig_file_and_env_merge)
{
    const char *a =
        write_file("a.yaml", "clusters: [{name: c, cluster: {server: 'http://first'}}]\n"
                             "contexts: [{name: x, context: {cluster: c}}]\n");
    const char *b = write_file("b.yaml", "current-context: x\n"
                                         "clusters: [{name: c, cluster: {server: 'http://second'}},"
                                         " {name: d, cluster: {server: 'http://d'}}]\n"
                                         "contexts: [{name: x, context: {cluster: d}},"
                                         " {name: y, context: {cluster: d, namespace: why}}]\n");
    char env[2048];
    snprintf(env, sizeof env, "%s/missing.yaml:%s:%s", dir, a, b);
    setenv("KUBECONFIG", env, 1);
    ctrl_config *cfg = NULL;
    ctrl_error err = {0};
    /* First file wins for names (x -> cluster c -> http://first); current-context from b. */
    cr_assert_eq(ctrl_config_from_kubeconfig(NULL, NULL, &cfg, &err), 0, "%s", err.message);
    cr_assert_str_eq(ctrl_config_server(cfg), "http://first");
    ctrl_config_free(cfg);
    cr_assert_eq(ctrl_config_from_kubeconfig(NULL, "y", &cfg, &err), 0, "%s", err.message);
    cr_assert_str_eq(ctrl_config_server(cfg), "http://d");
    cr_assert_str_eq(ctrl_config_namespace(cfg), "why");
    ctrl_config_free(cfg);
    /* ctrl_config_load prefers KUBECONFIG over in-cluster. */
    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    cr_assert_eq(ctrl_config_load(NULL, &cfg, &err), 0, "%s", err.message);
    cr_assert_str_eq(ctrl_config_server(cfg), "http://first");
    ctrl_config_free(cfg);
    /* An explicit path reads only that file. */
    cr_assert_eq(ctrl_config_from_kubeconfig(b, NULL, &cfg, &err), 0, "%s", err.message);
    cr_assert_str_eq(ctrl_config_server(cfg), "http://d");
    ctrl_config_free(cfg);
    /* A missing explicit file is an error. */
    char missing[512];
    snprintf(missing, sizeof missing, "%s/nope", dir);
    cr_assert_eq(ctrl_config_from_kubeconfig(missing, NULL, &cfg, &err), CTRL_ERR_IO);
    ctrl_error_deinit(&err);
}

Test(config, home_kube_config)
{
    char kube[512];
    snprintf(kube, sizeof kube, "%s/.kube", dir);
    cr_assert_eq(mkdir(kube, 0700), 0);
    write_file(".kube/config", "clusters: [{name: c, cluster: {server: 'http://home'}}]\n"
                               "contexts: [{name: x, context: {cluster: c}}]\n"
                               "current-context: x\n");
    setenv("HOME", dir, 1);
    ctrl_config *cfg = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_config_from_kubeconfig(NULL, NULL, &cfg, &err), 0, "%s", err.message);
    cr_assert_str_eq(ctrl_config_server(cfg), "http://home");
    ctrl_config_free(cfg);
    cr_assert_eq(ctrl_config_load(NULL, &cfg, &err), 0, "%s", err.message);
    cr_assert_str_eq(ctrl_config_server(cfg), "http://home");
    ctrl_config_free(cfg);
}

Test(config, in_cluster)
{
    write_file("token", "sa-token\n");
    write_file("ca.crt", ca_pem);
    write_file("namespace", "kube-system\n");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    ctrl_config *cfg = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_config_in_cluster(dir, &cfg, &err), 0, "%s", err.message);
    cr_assert_str_eq(ctrl_config_server(cfg), "https://10.96.0.1:443");
    cr_assert_str_eq(ctrl_config_token(cfg), "sa-token");
    cr_assert_str_eq(ctrl_config_namespace(cfg), "kube-system");
    char tf[512];
    snprintf(tf, sizeof tf, "%s/token", dir);
    cr_assert_str_eq(ctrl_config_token_file(cfg), tf);
    size_t len;
    cr_assert_not_null(ctrl_config_ca_data(cfg, &len));
    cr_assert_eq(len, strlen(ca_pem));
    ctrl_config_free(cfg);

    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    cr_assert_eq(ctrl_config_in_cluster(dir, &cfg, &err), 0, "%s", err.message);
    cr_assert_str_eq(ctrl_config_server(cfg), "https://[fd00::1]:443");
    ctrl_config_free(cfg);
}

Test(config, in_cluster_errors)
{
    ctrl_config *cfg = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_config_in_cluster(dir, &cfg, &err), CTRL_ERR_CONFIG);
    cr_assert(strstr(err.message, "KUBERNETES_SERVICE_HOST"), "%s", err.message);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    cr_assert_eq(ctrl_config_in_cluster(dir, &cfg, &err), CTRL_ERR_IO); /* no token file */
    cr_assert_null(cfg);
    ctrl_error_deinit(&err);
}

Test(config, from_url_and_setters)
{
    ctrl_config *cfg = NULL;
    cr_assert_eq(ctrl_config_from_url("http://127.0.0.1:1234/", &cfg, NULL), 0);
    cr_assert_str_eq(ctrl_config_server(cfg), "http://127.0.0.1:1234");
    cr_assert_null(ctrl_config_token(cfg));
    cr_assert_eq(ctrl_config_set_token(cfg, "t"), 0);
    cr_assert_str_eq(ctrl_config_token(cfg), "t");
    cr_assert_eq(ctrl_config_set_namespace(cfg, "ns1"), 0);
    cr_assert_str_eq(ctrl_config_namespace(cfg), "ns1");
    ctrl_config_set_insecure(cfg, true);
    cr_assert(ctrl_config_insecure(cfg));
    ctrl_config_free(cfg);
    cr_assert_eq(ctrl_config_from_url("gopher://x", &cfg, NULL), CTRL_ERR_CONFIG);
    cr_assert_eq(ctrl_config_from_url(NULL, &cfg, NULL), CTRL_ERR_ARG);
    ctrl_config_free(NULL);
}
