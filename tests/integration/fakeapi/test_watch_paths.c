/*
 * test_watch_paths.c - the legacy watch paths over HTTP (/api/v1/watch/...,
 * /apis/<g>/<v>/watch/...), which Ruby's kubeclient and the godaddy client
 * use: the same watch as ?watch=true on the path without "watch/", with its
 * parameters; by name a watch with fieldSelector metadata.name=NAME; GET
 * only.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fakeapi/fakeapi.h"
#include "apitest.h"

TestSuite(watch_paths, .init = setup, .fini = teardown, .timeout = 60);

static wstream *ws_ok(const char *path)
{
    return ws_start_ok(path, "test_watch_paths/1.0", 2000);
}

/* The next event: of type and name (a new reference). */
static json_t *expect_ev(wstream *w, const char *type, const char *name)
{
    json_t *ev = ws_next(w, 3000);
    cr_assert_not_null(ev, "no %s event for %s within 3 s", type, name);
    cr_assert_str_eq(jstr(ev, "type"), type, "want %s %s, got %s %s", type, name, jstr(ev, "type"),
                     jstr(ev, "object.metadata.name"));
    cr_assert_str_eq(jstr(ev, "object.metadata.name"), name);
    return ev;
}

static void expect_quiet(wstream *w, int ms)
{
    char *line = ws_line(w, ms);
    cr_assert_null(line, "unexpected event: %.300s", line);
}

/* Collections: namespaced, across namespaces, cluster-scoped, another group. */
Test(watch_paths, collections)
{
    mk_ns("a");
    mk_ns("b");
    unsigned long long from = rev();
    wstream *one = ws_ok(S("/api/v1/watch/namespaces/a/configmaps?resourceVersion=%llu", from));
    wstream *all = ws_ok(S("/api/v1/watch/configmaps?resourceVersion=%llu", from));
    wstream *nss = ws_ok(S("/api/v1/watch/namespaces?resourceVersion=%llu", from));
    wstream *deps =
        ws_ok(S("/apis/apps/v1/watch/namespaces/b/deployments?resourceVersion=%llu", from));
    json_decref(mk_cm("a", "x", NULL));
    json_decref(mk_cm("b", "y", NULL));
    json_decref(req(201, "POST", "/apis/apps/v1/namespaces/b/deployments", deploy_body("d")));
    mk_ns("c");
    json_decref(expect_ev(one, "ADDED", "x"));
    expect_quiet(one, 200); /* b/y is not in a */
    json_decref(expect_ev(all, "ADDED", "x"));
    json_decref(expect_ev(all, "ADDED", "y"));
    json_t *ev = expect_ev(deps, "ADDED", "d");
    cr_assert_str_eq(jstr(ev, "object.kind"), "Deployment");
    json_decref(ev);
    json_decref(expect_ev(nss, "ADDED", "c"));
    ws_close(one);
    ws_close(all);
    ws_close(nss);
    ws_close(deps);
}

/* By name: only that object, from a resourceVersion, through its deletion;
 * a Namespace by name too. */
Test(watch_paths, by_name)
{
    json_t *x = mk_cm("default", "x", NULL);
    unsigned long long rv_x = rv_of(x);
    json_decref(x);
    json_decref(mk_cm("default", "other", NULL));
    /* From 0 (any): the object's current state first, as ?watch=true gives. */
    wstream *w = ws_ok("/api/v1/watch/namespaces/default/configmaps/x");
    json_decref(expect_ev(w, "ADDED", "x"));
    expect_quiet(w, 200);
    json_decref(req_ct(200, "PATCH", S("%s/other", CM("default")), "application/merge-patch+json",
                       "{'data':{'v':'1'}}"));
    json_decref(req_ct(200, "PATCH", S("%s/x", CM("default")), "application/merge-patch+json",
                       "{'data':{'v':'2'}}"));
    json_t *ev = expect_ev(w, "MODIFIED", "x");
    cr_assert_str_eq(jstr(ev, "object.data.v"), "2");
    json_decref(ev);
    json_decref(req(200, "DELETE", S("%s/x", CM("default")), NULL));
    json_decref(expect_ev(w, "DELETED", "x"));
    expect_quiet(w, 200);
    ws_close(w);

    /* From the create's resourceVersion: only what came after. */
    w = ws_ok(S("/api/v1/watch/namespaces/default/configmaps/x?resourceVersion=%llu", rv_x));
    json_decref(expect_ev(w, "MODIFIED", "x"));
    json_decref(expect_ev(w, "DELETED", "x"));
    ws_close(w);

    mk_ns("named");
    w = ws_ok("/api/v1/watch/namespaces/named");
    json_decref(expect_ev(w, "ADDED", "named"));
    mk_ns("unnamed");
    expect_quiet(w, 200);
    ws_close(w);
}

/* Parameters: labelSelector, timeoutSeconds, allowWatchBookmarks with
 * sendInitialEvents, a field selector that names the same object; watch=false
 * is still a watch. */
Test(watch_paths, parameters)
{
    json_decref(mk_cm("default", "l1", "{'app':'web'}"));
    json_decref(mk_cm("default", "l2", "{'app':'db'}"));
    wstream *w = ws_ok("/api/v1/watch/namespaces/default/configmaps?labelSelector=app%3Dweb"
                       "&timeoutSeconds=1&watch=false");
    json_decref(expect_ev(w, "ADDED", "l1"));
    expect_quiet(w, 200);
    cr_assert(ws_wait_done(w, 3000), "timeoutSeconds=1 ends the stream");
    ws_close(w);

    w = ws_ok("/api/v1/watch/namespaces/default/configmaps?sendInitialEvents=true"
              "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true");
    json_decref(expect_ev(w, "ADDED", "l1"));
    json_decref(expect_ev(w, "ADDED", "l2"));
    json_t *bm = ws_next(w, 3000);
    cr_assert_not_null(bm);
    cr_assert_str_eq(jstr(bm, "type"), "BOOKMARK");
    const char *end = json_string_value(
        json_object_get(jget(bm, "object.metadata.annotations"), "k8s.io/initial-events-end"));
    cr_assert_str_eq(end ? end : "", "true");
    json_decref(bm);
    ws_close(w);

    w = ws_ok("/api/v1/watch/namespaces/default/configmaps/l2?fieldSelector=metadata.name%3Dl2");
    json_decref(expect_ev(w, "ADDED", "l2"));
    ws_close(w);
}

/* What a watch path refuses: other methods (405), a field selector for
 * another name (400), bad parameters (400, as on ?watch=true), what is not
 * served (404). */
Test(watch_paths, refused)
{
    json_decref(mk_cm("default", "x", NULL));
    static const char *const methods[] = {"POST", "PUT", "PATCH", "DELETE"};
    for (size_t i = 0; i < sizeof methods / sizeof *methods; i++) {
        /* (A PATCH body's media type is checked at the front door first.) */
        const char *ct =
            !strcmp(methods[i], "PATCH") ? "application/merge-patch+json" : "application/json";
        json_decref(req_fail_ct(405, "MethodNotAllowed", methods[i],
                                "/api/v1/watch/namespaces/default/configmaps", ct,
                                "{'metadata':{'name':'y'}}"));
        json_decref(req_fail_ct(405, "MethodNotAllowed", methods[i],
                                "/api/v1/watch/namespaces/default/configmaps/x", ct,
                                "{'metadata':{'name':'x'}}"));
    }
    /* Nothing was written by them. */
    json_t *list = req(200, "GET", CM("default"), NULL);
    cr_assert_eq(json_array_size(jget(list, "items")), 1);
    cr_assert_str_eq(jstr(list, "items.0.metadata.name"), "x");
    json_decref(list);

    json_t *st = req_fail(400, "BadRequest", "GET",
                          "/api/v1/watch/namespaces/default/configmaps/x?fieldSelector="
                          "metadata.name%3Dy",
                          NULL);
    cr_assert_str_eq(jstr(st, "message"),
                     "fieldSelector metadata.name doesn't match requested name");
    json_decref(st);
    json_decref(req_fail(400, "BadRequest", "GET",
                         "/api/v1/watch/namespaces/default/configmaps/x?fieldSelector="
                         "metadata.namespace%3Ddefault",
                         NULL));
    json_decref(req_fail(400, "BadRequest", "GET",
                         "/api/v1/watch/namespaces/default/configmaps?resourceVersion=abc", NULL));
    json_decref(req_fail(400, "BadRequest", "GET",
                         "/api/v1/watch/namespaces/default/configmaps?fieldSelector=spec.x%3D1",
                         NULL));
    json_decref(
        req_fail(404, "NotFound", "GET", "/api/v1/watch/namespaces/default/nothings", NULL));
    json_decref(req_fail(404, "NotFound", "GET", "/api/v1/watch/configmaps/x", NULL));
    /* A kind that cannot be watched has no watch path (?watch=true on it is 405). */
    json_decref(req_fail(404, "NotFound", "GET", "/api/v1/watch/componentstatuses", NULL));
    json_decref(
        req_fail(405, "MethodNotAllowed", "GET", "/api/v1/componentstatuses?watch=true", NULL));
    json_decref(req_fail(404, "NotFound", "GET",
                         "/api/v1/watch/namespaces/default/configmaps/x/status", NULL));
}
