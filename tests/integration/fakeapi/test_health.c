/*
 * test_health.c - /livez, /readyz and /healthz over HTTP as kube-apiserver
 * answers them: "ok"; with ?verbose each check and "<endpoint> check
 * passed"; ?exclude; one path per check; 404 for a check the endpoint does
 * not have. (The shutdown check fails once fakeapi_stop begins, but no
 * request is answered after that: libmicrohttpd stops with the ones it
 * holds, so that is not seen over HTTP: tests/unit/fakeapi/test_health.c
 * checks it directly.)
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fakeapi/fakeapi.h"
#include "apitest.h"

TestSuite(health, .init = setup, .fini = teardown, .timeout = 60);

/* GET path; asserts status and a text/plain answer; returns the body (malloc'ed). */
static char *get_text(const char *path, long want)
{
    httpc_resp r = {0};
    cr_assert_eq(httpc_do("GET", S("%s%s", fakeapi_url(srv), path), NULL, NULL, &r), 0, "%s", path);
    cr_assert_eq(r.status, want, "%s: status %ld: %s", path, r.status, r.body);
    if (want != 404)
        cr_assert_str_eq(r.ctype, "text/plain; charset=utf-8", "%s", path);
    char *body = r.body;
    r.body = NULL;
    httpc_resp_free(&r);
    return body;
}

static void expect_text(const char *path, long want, const char *text)
{
    char *body = get_text(path, want);
    cr_assert_str_eq(body, text, "%s", path);
    free(body);
}

Test(health, endpoints)
{
    expect_text("/livez", 200, "ok");
    expect_text("/readyz", 200, "ok");
    expect_text("/healthz", 200, "ok");
    expect_text("/livez?verbose", 200, "[+]ping ok\n[+]log ok\n[+]etcd ok\nlivez check passed\n");
    expect_text("/healthz?verbose=1", 200,
                "[+]ping ok\n[+]log ok\n[+]etcd ok\nhealthz check passed\n");
    expect_text("/readyz?verbose", 200,
                "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]shutdown ok\n"
                "readyz check passed\n");
    /* verbose is read by its presence, as the real server does. */
    expect_text("/livez?verbose=false", 200,
                "[+]ping ok\n[+]log ok\n[+]etcd ok\nlivez check passed\n");
}

Test(health, exclude)
{
    expect_text("/readyz?verbose&exclude=etcd", 200,
                "[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\n[+]etcd-readiness ok\n"
                "[+]shutdown ok\nreadyz check passed\n");
    expect_text("/livez?exclude=nothing&verbose", 200,
                "[+]ping ok\n[+]log ok\n[+]etcd ok\n"
                "warn: some health checks cannot be excluded: no matches for \"nothing\"\n"
                "livez check passed\n");
    expect_text("/healthz?exclude=log", 200, "ok");
}

Test(health, single_checks)
{
    static const char *const ok[] = {"/livez/ping",
                                     "/livez/log",
                                     "/livez/etcd",
                                     "/readyz/ping",
                                     "/readyz/etcd-readiness",
                                     "/readyz/shutdown",
                                     "/healthz/etcd",
                                     "/healthz/ping/"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        expect_text(ok[i], 200, "ok");
    /* What an endpoint does not have is not found. */
    static const char *const missing[] = {"/livez/shutdown", "/livez/etcd-readiness",
                                          "/healthz/shutdown", "/readyz/nothing",
                                          "/livez/ping/more"};
    for (size_t i = 0; i < sizeof missing / sizeof *missing; i++) {
        json_t *st = req_fail(404, "NotFound", "GET", missing[i], NULL);
        json_decref(st);
    }
    json_decref(req_fail(405, "MethodNotAllowed", "POST", "/readyz", NULL));
}
