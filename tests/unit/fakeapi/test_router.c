/*
 * test_router.c - the pure URL path parser (router.h): every route kind,
 * namespaced vs cluster-scoped paths, subresources, and rejected paths.
 */
#include "router.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static fakeapi__route parse_ok(const char *path)
{
    fakeapi__route rt;
    cr_assert_eq(fakeapi__route_parse(path, &rt), 0, "parse %s", path);
    return rt;
}

static void parse_bad(const char *path)
{
    fakeapi__route rt;
    memset(&rt, 0x5a, sizeof rt);
    cr_assert_eq(fakeapi__route_parse(path, &rt), -1, "%s should not parse", path);
    cr_assert_eq(rt.kind, FAKEAPI__RT_UNKNOWN, "%s", path);
    cr_assert_str_eq(rt.resource, "", "%s: cleared on failure", path);
    cr_assert_str_eq(rt.ns, "");
}

/* Check the fields of a resource route. */
static void expect(const char *path, fakeapi__route_kind kind, const char *group,
                   const char *version, const char *ns, const char *resource, const char *name,
                   const char *sub)
{
    fakeapi__route rt = parse_ok(path);
    cr_assert_eq(rt.kind, kind, "%s: kind %d", path, rt.kind);
    cr_assert_str_eq(rt.group, group, "%s", path);
    cr_assert_str_eq(rt.version, version, "%s", path);
    cr_assert_str_eq(rt.ns, ns, "%s", path);
    cr_assert_str_eq(rt.resource, resource, "%s", path);
    cr_assert_str_eq(rt.name, name, "%s", path);
    cr_assert_str_eq(rt.sub, sub, "%s", path);
}

Test(router, info_routes)
{
    cr_assert_eq(parse_ok("/version").kind, FAKEAPI__RT_VERSION);
    cr_assert_eq(parse_ok("/healthz").kind, FAKEAPI__RT_HEALTH);
    cr_assert_eq(parse_ok("/readyz").kind, FAKEAPI__RT_HEALTH);
    cr_assert_eq(parse_ok("/livez").kind, FAKEAPI__RT_HEALTH);
    cr_assert_eq(parse_ok("/healthz/ping").kind, FAKEAPI__RT_HEALTH);
    cr_assert_eq(parse_ok("/metrics").kind, FAKEAPI__RT_METRICS);
    cr_assert_eq(parse_ok("/api").kind, FAKEAPI__RT_API);
    cr_assert_eq(parse_ok("/apis").kind, FAKEAPI__RT_APIS);
    cr_assert_eq(parse_ok("/api/").kind, FAKEAPI__RT_API, "a trailing slash is ignored");
    fakeapi__route rt = parse_ok("/apis/apps");
    cr_assert_eq(rt.kind, FAKEAPI__RT_GROUP);
    cr_assert_str_eq(rt.group, "apps");
    expect("/api/v1", FAKEAPI__RT_GROUPVERSION, "", "v1", "", "", "", "");
    expect("/apis/apps/v1", FAKEAPI__RT_GROUPVERSION, "apps", "v1", "", "", "", "");
    expect("/apis/example.com/v1alpha1", FAKEAPI__RT_GROUPVERSION, "example.com", "v1alpha1", "",
           "", "", "");
}

Test(router, openapi_routes)
{
    cr_assert_eq(parse_ok("/openapi/v2").kind, FAKEAPI__RT_OPENAPI_V2);
    cr_assert_eq(parse_ok("/openapi/v3").kind, FAKEAPI__RT_OPENAPI_V3);
    fakeapi__route rt = parse_ok("/openapi/v3/api/v1");
    cr_assert_eq(rt.kind, FAKEAPI__RT_OPENAPI_V3_GV);
    cr_assert_str_eq(rt.group, "");
    cr_assert_str_eq(rt.version, "v1");
    rt = parse_ok("/openapi/v3/apis/apps/v1");
    cr_assert_eq(rt.kind, FAKEAPI__RT_OPENAPI_V3_GV);
    cr_assert_str_eq(rt.group, "apps");
    cr_assert_str_eq(rt.version, "v1");
    parse_bad("/openapi");
    parse_bad("/openapi/v4");
    parse_bad("/openapi/v3/apis/apps");
    parse_bad("/openapi/v3/api");
}

Test(router, control_routes)
{
    fakeapi__route rt = parse_ok("/fakeapi/v1/stats");
    cr_assert_eq(rt.kind, FAKEAPI__RT_CONTROL);
    cr_assert_str_eq(rt.name, "stats");
    rt = parse_ok("/fakeapi/v1/compact");
    cr_assert_str_eq(rt.name, "compact");
    rt = parse_ok("/fakeapi/v1");
    cr_assert_eq(rt.kind, FAKEAPI__RT_CONTROL);
    cr_assert_str_eq(rt.name, "");
    parse_bad("/fakeapi");
    parse_bad("/fakeapi/v2/stats");
}

Test(router, core_namespaced)
{
    expect("/api/v1/namespaces/default/pods", FAKEAPI__RT_COLLECTION, "", "v1", "default", "pods",
           "", "");
    expect("/api/v1/namespaces/default/pods/web-1", FAKEAPI__RT_OBJECT, "", "v1", "default", "pods",
           "web-1", "");
    expect("/api/v1/namespaces/default/pods/web-1/status", FAKEAPI__RT_SUBRESOURCE, "", "v1",
           "default", "pods", "web-1", "status");
    expect("/api/v1/namespaces/kube-system/configmaps/a.b.c", FAKEAPI__RT_OBJECT, "", "v1",
           "kube-system", "configmaps", "a.b.c", "");
}

Test(router, all_namespaces_and_cluster_scoped)
{
    /* A namespaced resource without a namespace: the cross-namespace list. */
    expect("/api/v1/pods", FAKEAPI__RT_COLLECTION, "", "v1", "", "pods", "", "");
    expect("/api/v1/nodes/n1", FAKEAPI__RT_OBJECT, "", "v1", "", "nodes", "n1", "");
    expect("/api/v1/nodes/n1/status", FAKEAPI__RT_SUBRESOURCE, "", "v1", "", "nodes", "n1",
           "status");
    expect("/apis/rbac.authorization.k8s.io/v1/clusterroles/admin", FAKEAPI__RT_OBJECT,
           "rbac.authorization.k8s.io", "v1", "", "clusterroles", "admin", "");
}

Test(router, namespaces_themselves)
{
    expect("/api/v1/namespaces", FAKEAPI__RT_COLLECTION, "", "v1", "", "namespaces", "", "");
    expect("/api/v1/namespaces/default", FAKEAPI__RT_OBJECT, "", "v1", "", "namespaces", "default",
           "");
    expect("/api/v1/namespaces/default/status", FAKEAPI__RT_SUBRESOURCE, "", "v1", "", "namespaces",
           "default", "status");
    expect("/api/v1/namespaces/default/finalize", FAKEAPI__RT_SUBRESOURCE, "", "v1", "",
           "namespaces", "default", "finalize");
    /* A resource called "namespaces" inside a namespace parses (the handler 404s it). */
    expect("/api/v1/namespaces/default/namespaces", FAKEAPI__RT_COLLECTION, "", "v1", "default",
           "namespaces", "", "");
}

Test(router, groups)
{
    expect("/apis/apps/v1/namespaces/default/deployments", FAKEAPI__RT_COLLECTION, "apps", "v1",
           "default", "deployments", "", "");
    expect("/apis/apps/v1/namespaces/default/deployments/web/scale", FAKEAPI__RT_SUBRESOURCE,
           "apps", "v1", "default", "deployments", "web", "scale");
    expect("/apis/apps/v1/deployments", FAKEAPI__RT_COLLECTION, "apps", "v1", "", "deployments", "",
           "");
    expect("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-1",
           FAKEAPI__RT_OBJECT, "coordination.k8s.io", "v1", "kube-node-lease", "leases", "node-1",
           "");
    expect("/apis/example.com/v1/namespaces/ns/widgets/w/status", FAKEAPI__RT_SUBRESOURCE,
           "example.com", "v1", "ns", "widgets", "w", "status");
}

Test(router, extra_slashes)
{
    expect("//api//v1/namespaces//default/pods/", FAKEAPI__RT_COLLECTION, "", "v1", "default",
           "pods", "", "");
}

Test(router, rejected_paths)
{
    parse_bad("");
    parse_bad("/");
    parse_bad("/nothing");
    parse_bad("/version/extra");
    parse_bad("/metrics/x");
    parse_bad("/apiv1");
    parse_bad("/api/v1/namespaces/default/pods/a/status/extra");
    parse_bad("/api/v1/pods/a/status/extra");
    parse_bad("/apis/apps/v1/namespaces/default/deployments/a/b/c");
    fakeapi__route rt;
    cr_assert_eq(fakeapi__route_parse(NULL, &rt), -1);
    cr_assert_eq(rt.kind, FAKEAPI__RT_UNKNOWN);
}

Test(router, segment_limits)
{
    char path[2048];
    char seg[400];
    /* A 253-character name fits. */
    memset(seg, 'a', 253);
    seg[253] = '\0';
    snprintf(path, sizeof path, "/api/v1/namespaces/default/configmaps/%s", seg);
    fakeapi__route rt = parse_ok(path);
    cr_assert_eq(strlen(rt.name), 253);
    /* One past the buffer is refused, in any position. */
    memset(seg, 'a', FAKEAPI__SEG_MAX);
    seg[FAKEAPI__SEG_MAX] = '\0';
    snprintf(path, sizeof path, "/api/v1/namespaces/default/configmaps/%s", seg);
    parse_bad(path);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps", seg);
    parse_bad(path);
    snprintf(path, sizeof path, "/apis/%s/v1/things", seg);
    parse_bad(path);
    snprintf(path, sizeof path, "/api/v1/namespaces/default/%s", seg);
    parse_bad(path);
    /* Versions and subresources have smaller buffers. */
    memset(seg, 'v', 64);
    seg[64] = '\0';
    snprintf(path, sizeof path, "/api/%s", seg);
    parse_bad(path);
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/p/%s", seg);
    parse_bad(path);
    seg[63] = '\0';
    snprintf(path, sizeof path, "/api/v1/namespaces/default/pods/p/%s", seg);
    rt = parse_ok(path);
    cr_assert_eq(strlen(rt.sub), 63);
    /* Too many segments. */
    parse_bad("/a/b/c/d/e/f/g/h/i/j/k");
}

/* ---- request targets: fakeapi__url_split ---------------------------------- */

static void split_ok(const char *raw, const char *want_path, json_t **q)
{
    char *path;
    char err[256];
    cr_assert_eq(fakeapi__url_split(raw, &path, q, err, sizeof err), 0, "%s: %s", raw, err);
    cr_assert_str_eq(path, want_path, "%s", raw);
    free(path);
}

static void split_bad(const char *raw, int want)
{
    char *path = (char *)"x";
    json_t *before = json_object(), *q = before;
    char err[256] = "";
    cr_assert_eq(fakeapi__url_split(raw, &path, &q, err, sizeof err), want, "%s", raw);
    json_decref(before);
    cr_assert_null(path, "%s", raw);
    cr_assert_null(q, "%s", raw);
    cr_assert(err[0], "%s: no message", raw);
    json_t *msg = json_string(err);
    cr_assert_not_null(msg, "%s: the message is not UTF-8", raw);
    json_decref(msg);
}

Test(url_split, decodes_path_and_query)
{
    json_t *q;
    split_ok("/api/v1/namespaces/a%2Db/configmaps/caf%C3%A9?labelSelector=app%3Dx+y&watch&"
             "limit=1&limit=2&&x=%2B",
             "/api/v1/namespaces/a-b/configmaps/caf\xc3\xa9", &q);
    cr_assert_str_eq(json_string_value(json_object_get(q, "labelSelector")), "app=x y");
    cr_assert_str_eq(json_string_value(json_object_get(q, "watch")), "");
    cr_assert_str_eq(json_string_value(json_object_get(q, "limit")), "1", "the first one wins");
    cr_assert_str_eq(json_string_value(json_object_get(q, "x")), "+");
    cr_assert_eq(json_object_size(q), 4);
    json_decref(q);
    /* '+' in a path is a plus; no query is an empty object. */
    split_ok("/a+b", "/a+b", &q);
    cr_assert_eq(json_object_size(q), 0);
    json_decref(q);
}

Test(url_split, refuses_what_it_cannot_name_exactly)
{
    split_bad("/api/v1/namespaces/victim%00/configmaps/keep", FAKEAPI__URL_BAD_PATH);
    split_bad("/api/v1/namespaces/default/configmaps/abc%00zzz", FAKEAPI__URL_BAD_PATH);
    split_bad("/api/v1/namespaces/default/configmaps/abc%FF", FAKEAPI__URL_BAD_PATH);
    split_bad("/api/v1/namespaces/default/configmaps/abc\xff", FAKEAPI__URL_BAD_PATH);
    split_bad("/%C0%AF", FAKEAPI__URL_BAD_PATH);       /* overlong */
    split_bad("/%ED%A0%80", FAKEAPI__URL_BAD_PATH);    /* a surrogate */
    split_bad("/%F4%90%80%80", FAKEAPI__URL_BAD_PATH); /* past U+10FFFF */
    split_bad("/%E2%82", FAKEAPI__URL_BAD_PATH);       /* cut short */
    split_bad("/abc%zz", FAKEAPI__URL_MALFORMED);
    split_bad("/abc%4", FAKEAPI__URL_MALFORMED);
    split_bad("/abc%", FAKEAPI__URL_MALFORMED);
    split_bad("/x?labelSelector=app%3Dfoo%FF", FAKEAPI__URL_BAD_QUERY);
    split_bad("/x?labelSelector=%FF", FAKEAPI__URL_BAD_QUERY);
    split_bad("/x?fieldSelector=metadata.name%3Dcm-b%00x", FAKEAPI__URL_BAD_QUERY);
    split_bad("/x?a=1&%FF=1", FAKEAPI__URL_BAD_QUERY);
    split_bad("/x?a=%zz", FAKEAPI__URL_BAD_QUERY);
    split_bad("/x?a=\xff\xfe", FAKEAPI__URL_BAD_QUERY);
}

/* The legacy watch paths: the route without "watch/", marked as a watch. */
static void expect_watch(const char *path, fakeapi__route_kind kind, const char *group,
                         const char *ns, const char *resource, const char *name)
{
    fakeapi__route rt = parse_ok(path);
    cr_assert(rt.watch, "%s is a watch", path);
    cr_assert_eq(rt.kind, kind, "%s: kind %d", path, rt.kind);
    cr_assert_str_eq(rt.group, group, "%s", path);
    cr_assert_str_eq(rt.ns, ns, "%s", path);
    cr_assert_str_eq(rt.resource, resource, "%s", path);
    cr_assert_str_eq(rt.name, name, "%s", path);
    cr_assert_str_eq(rt.sub, "", "%s", path);
}

Test(router, legacy_watch_paths)
{
    expect_watch("/api/v1/watch/pods", FAKEAPI__RT_COLLECTION, "", "", "pods", "");
    expect_watch("/api/v1/watch/namespaces/ns1/pods", FAKEAPI__RT_COLLECTION, "", "ns1", "pods",
                 "");
    expect_watch("/api/v1/watch/namespaces/ns1/pods/p", FAKEAPI__RT_OBJECT, "", "ns1", "pods", "p");
    expect_watch("/api/v1/watch/namespaces", FAKEAPI__RT_COLLECTION, "", "", "namespaces", "");
    expect_watch("/api/v1/watch/namespaces/ns1", FAKEAPI__RT_OBJECT, "", "", "namespaces", "ns1");
    expect_watch("/apis/apps/v1/watch/namespaces/ns1/deployments/d", FAKEAPI__RT_OBJECT, "apps",
                 "ns1", "deployments", "d");
    expect_watch("/apis/rbac.authorization.k8s.io/v1/watch/clusterroles", FAKEAPI__RT_COLLECTION,
                 "rbac.authorization.k8s.io", "", "clusterroles", "");
    cr_assert(!parse_ok("/api/v1/namespaces/ns1/pods").watch, "not every path is a watch");
    /* No watch of a subresource, and "watch" alone names no collection. */
    parse_bad("/api/v1/watch/namespaces/ns1/pods/p/status");
    parse_bad("/api/v1/watch/namespaces/ns1/status");
    cr_assert(!parse_ok("/api/v1/watch").watch);
}

/* Health routes: the endpoint, and a check's name (which may hold '/'). */
Test(router, health_checks)
{
    fakeapi__route rt = parse_ok("/readyz");
    cr_assert_eq(rt.kind, FAKEAPI__RT_HEALTH);
    cr_assert_str_eq(rt.resource, "readyz");
    cr_assert_str_eq(rt.name, "");
    rt = parse_ok("/livez/ping/");
    cr_assert_str_eq(rt.resource, "livez");
    cr_assert_str_eq(rt.name, "ping");
    rt = parse_ok("/healthz/poststarthook/start-informers");
    cr_assert_str_eq(rt.resource, "healthz");
    cr_assert_str_eq(rt.name, "poststarthook/start-informers");
}
