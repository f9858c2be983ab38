/*
 * test_health.c - the health checks (health.h) called directly, for what
 * HTTP cannot show: once fakeapi_stop has begun (srv->stopping), /readyz
 * fails its shutdown check, while /livez and /healthz, which do not list
 * it, still pass. The endpoints over HTTP are in
 * tests/integration/fakeapi/test_health.c.
 */
#include "health.h"

#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fakeapi/fakeapi.h"

static fakeapi_server *srv;

static void start(void)
{
    fakeapi_options o = {.no_http = true, .seed = 1};
    cr_assert_eq(fakeapi_start(&o, &srv), 0);
}

static void stop(void)
{
    fakeapi_stop(srv);
    srv = NULL;
}

TestSuite(health, .init = start, .fini = stop);

/* Serve path (no leading '/'; query as "verbose" or NULL); the status, and
 * the body in *body (malloc'ed). */
static int serve(const char *path, const char *query_key, char **body)
{
    fakeapi__route rt;
    cr_assert_eq(fakeapi__route_parse(path, &rt), 0, "%s", path);
    cr_assert_eq(rt.kind, FAKEAPI__RT_HEALTH);
    json_t *q = json_object();
    if (query_key)
        json_object_set_new(q, query_key, json_string(""));
    fakeapi__req req = {.method = "GET", .path = path, .query = q};
    fakeapi__resp resp = {0};
    fakeapi__health_serve(srv, &req, &rt, &resp);
    json_decref(q);
    *body = strndup(resp.body ? resp.body : "", resp.body_len);
    int status = resp.status;
    fakeapi__resp_deinit(&resp);
    return status;
}

Test(health, shutdown_fails_readiness_only)
{
    char *body;
    cr_assert_eq(serve("/readyz/shutdown", NULL, &body), 200);
    cr_assert_str_eq(body, "ok");
    free(body);

    atomic_store(&srv->stopping, true);
    cr_assert_eq(serve("/readyz", "verbose", &body), 500);
    cr_assert_str_eq(body, "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n"
                           "[-]shutdown failed: reason withheld\nreadyz check failed\n");
    free(body);
    /* A failure is listed whether or not verbose was asked. */
    cr_assert_eq(serve("/readyz", NULL, &body), 500);
    cr_assert(strstr(body, "[-]shutdown failed: reason withheld\n"), "%s", body);
    free(body);
    cr_assert_eq(serve("/readyz/shutdown", NULL, &body), 500);
    cr_assert_str_eq(body, "internal server error: process is shutting down\n");
    free(body);
    /* Excluded, it does not count. */
    json_t *q = json_pack("{s:s}", "exclude", "shutdown");
    fakeapi__route rt;
    fakeapi__route_parse("/readyz", &rt);
    fakeapi__req req = {.method = "GET", .path = "/readyz", .query = q};
    fakeapi__resp resp = {0};
    fakeapi__health_serve(srv, &req, &rt, &resp);
    cr_assert_eq(resp.status, 200);
    fakeapi__resp_deinit(&resp);
    json_decref(q);

    cr_assert_eq(serve("/livez", NULL, &body), 200);
    cr_assert_str_eq(body, "ok");
    free(body);
    cr_assert_eq(serve("/healthz", "verbose", &body), 200);
    cr_assert_str_eq(body, "[+]ping ok\n[+]log ok\n[+]etcd ok\nhealthz check passed\n");
    free(body);
}
