/*
 * test_badinput.c - bad input at the HTTP front door never touches data it
 * did not name: NUL and invalid UTF-8 in paths (404) and query values (400),
 * garbage parameters, two Content-Lengths, unsupported Content-Types (415),
 * and what keeps web pages out (a Host that is not this server: 403; the
 * control endpoint wants JSON). Each case checks that nothing changed.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "fakeapi/fakeapi.h"
#include "apitest.h"

TestSuite(badinput, .init = setup, .fini = teardown, .timeout = 60);

#define CMP(ns, name) S("/api/v1/namespaces/%s/configmaps/%s", ns, name)

/* ---- a raw HTTP exchange, for what curl will not send ---------------------- */

typedef struct raw_resp {
    long status;
    json_t *body; /* the body parsed as JSON, or NULL */
} raw_resp;

/* Send request (bytes, n of them) on a new connection and read the answer
 * until the server closes it (the request should ask for that). */
static raw_resp raw_send(const char *request, size_t n)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(fakeapi_port(srv))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(send(fd, request, n, 0), (ssize_t)n);
    static char buf[65536];
    size_t len = 0;
    ssize_t r;
    while (len < sizeof buf - 1 && (r = recv(fd, buf + len, sizeof buf - 1 - len, 0)) > 0)
        len += (size_t)r;
    buf[len] = '\0';
    close(fd);
    raw_resp out = {0};
    cr_assert(sscanf(buf, "HTTP/1.%*d %ld", &out.status) == 1, "no status line: %.200s", buf);
    const char *body = strstr(buf, "\r\n\r\n");
    out.body = body ? json_loads(body + 4, 0, NULL) : NULL;
    return out;
}

static raw_resp raw(const char *request)
{
    return raw_send(request, strlen(request));
}

/* A GET of path with the given Host header (NULL: 127.0.0.1:port). */
static raw_resp get_with_host(const char *path, const char *host)
{
    return raw(S("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path,
                 host ? host : S("127.0.0.1:%u", (unsigned)fakeapi_port(srv))));
}

static void expect_raw_failure(raw_resp r, long code, const char *reason)
{
    cr_assert_eq(r.status, code, "want %ld, got %ld", code, r.status);
    assert_failure(r.body, code, reason);
    json_decref(r.body);
}

static bool exists(const char *path)
{
    return !gone(path);
}

/* Names of the ConfigMaps in ns, comma-separated, in list order. */
static const char *cm_names(const char *ns)
{
    json_t *l = req(200, "GET", CM(ns), NULL);
    static char names[1024];
    names[0] = '\0';
    size_t i;
    json_t *it;
    json_array_foreach(json_object_get(l, "items"), i, it)
    {
        size_t off = strlen(names);
        snprintf(names + off, sizeof names - off, "%s%s", off ? "," : "",
                 jstr(it, "metadata.name"));
    }
    json_decref(l);
    return names;
}

static void three_cms(void)
{
    json_decref(mk_cm("default", "cm-a", "{'app':'a'}"));
    json_decref(mk_cm("default", "cm-b", "{'app':'b'}"));
    json_decref(mk_cm("default", "cm-c", "{'app':'foo'}"));
}

/* ---- 1. paths: a NUL or invalid UTF-8 is 404, never a shorter name --------- */

Test(badinput, nul_in_namespace_segment_deletes_nothing)
{
    mk_ns("victim");
    json_decref(mk_cm("victim", "keep", NULL));
    json_decref(
        req_fail(404, "NotFound", "DELETE", "/api/v1/namespaces/victim%00/configmaps/keep", NULL));
    json_decref(req_fail(404, "NotFound", "DELETE", "/api/v1/namespaces/victim%00", NULL));
    json_t *ns = req(200, "GET", "/api/v1/namespaces/victim", NULL);
    cr_assert_null(jget(ns, "metadata.deletionTimestamp"), "the namespace is being deleted");
    json_decref(ns);
    cr_assert(exists(CMP("victim", "keep")));
}

Test(badinput, nul_in_name_deletes_nothing)
{
    json_decref(mk_cm("default", "abc", NULL));
    json_decref(req_fail(404, "NotFound", "DELETE", CMP("default", "abc%00zzz"), NULL));
    json_decref(req_fail(404, "NotFound", "DELETE", CMP("default", "abc%00"), NULL));
    json_decref(req_fail(404, "NotFound", "GET", CMP("default", "abc%00"), NULL));
    json_decref(req_fail(404, "NotFound", "PUT", CMP("default", "abc%00"),
                         "{'metadata':{'name':'abc'},'data':{'k':'changed'}}"));
    json_t *cm = req(200, "GET", CMP("default", "abc"), NULL);
    cr_assert_str_eq(jstr(cm, "data.k"), "v");
    json_decref(cm);
}

Test(badinput, invalid_utf8_in_path_is_404)
{
    json_decref(mk_cm("default", "abc", NULL));
    /* A lone byte, a truncated sequence, an overlong '/', a surrogate. */
    const char *bad[] = {"abc%FF", "abc%C3", "%C0%AFabc", "abc%ED%A0%80", NULL};
    for (const char **b = bad; *b; b++) {
        json_decref(req_fail(404, "NotFound", "GET", CMP("default", *b), NULL));
        json_decref(req_fail(404, "NotFound", "DELETE", CMP("default", *b), NULL));
    }
    json_decref(req_fail(404, "NotFound", "GET", "/api/v1/namespaces/d%FFefault/configmaps", NULL));
    /* The same byte unescaped on the wire. */
    expect_raw_failure(raw(S("DELETE /api/v1/namespaces/default/configmaps/abc\xff HTTP/1.1\r\n"
                             "Host: 127.0.0.1\r\nConnection: close\r\n\r\n")),
                       404, "NotFound");
    cr_assert(exists(CMP("default", "abc")));
    /* Valid UTF-8 is decoded: the name is looked up as it is. */
    json_t *st = req_fail(404, "NotFound", "GET", CMP("default", "caf%C3%A9"), NULL);
    cr_assert_str_eq(jstr(st, "message"), "configmaps \"caf\xc3\xa9\" not found");
    json_decref(st);
}

Test(badinput, malformed_escape_in_path_is_400)
{
    json_decref(mk_cm("default", "abc", NULL));
    json_decref(req_fail(400, "BadRequest", "DELETE", CMP("default", "abc%zz"), NULL));
    json_decref(req_fail(400, "BadRequest", "DELETE", CMP("default", "abc%4"), NULL));
    cr_assert(exists(CMP("default", "abc")));
    /* A correct escape still names the object. */
    json_decref(req(200, "GET", CMP("default", "%61bc"), NULL));
}

/* ---- 2. query values: 400, and a deletecollection deletes nothing ---------- */

Test(badinput, invalid_utf8_in_selector_deletes_nothing)
{
    three_cms();
    json_decref(req_fail(400, "BadRequest", "DELETE",
                         S("%s?labelSelector=app%%3Dfoo%%FF", CM("default")), NULL));
    json_decref(
        req_fail(400, "BadRequest", "GET", S("%s?labelSelector=%%FF", CM("default")), NULL));
    json_decref(req_fail(400, "BadRequest", "DELETE",
                         S("%s?labelSelector=app%%3Dfoo%%zz", CM("default")), NULL));
    json_decref(req_fail(400, "BadRequest", "DELETE", S("%s?%%FF=1", CM("default")), NULL));
    cr_assert_str_eq(cm_names("default"), "cm-a,cm-b,cm-c");
}

Test(badinput, nul_in_selector_deletes_nothing)
{
    three_cms();
    json_decref(req_fail(400, "BadRequest", "DELETE",
                         S("%s?fieldSelector=metadata.name%%3Dcm-b%%00x", CM("default")), NULL));
    json_decref(req_fail(400, "BadRequest", "DELETE",
                         S("%s?labelSelector=app%%3Db%%00x", CM("default")), NULL));
    cr_assert_str_eq(cm_names("default"), "cm-a,cm-b,cm-c");
}

Test(badinput, query_decoding)
{
    three_cms();
    /* '+' is a space; a repeated parameter keeps its first value. */
    json_t *l = req(200, "GET", S("%s?labelSelector=app+in+(a,foo)", CM("default")), NULL);
    cr_assert_eq(json_array_size(jget(l, "items")), 2);
    json_decref(l);
    l = req(200, "GET", S("%s?labelSelector=app%%3Db&labelSelector=app%%3Da", CM("default")), NULL);
    cr_assert_eq(json_array_size(jget(l, "items")), 1);
    cr_assert_str_eq(jstr(l, "items.0.metadata.name"), "cm-b");
    json_decref(l);
    /* A selector that reads exactly still deletes what it names. */
    json_decref(req(200, "DELETE", S("%s?labelSelector=app%%3Dfoo", CM("default")), NULL));
    cr_assert_str_eq(cm_names("default"), "cm-a,cm-b");
}

/* ---- 3. garbage parameters -------------------------------------------------- */

Test(badinput, garbage_resource_version_is_400)
{
    three_cms();
    const char *bad[] = {"abc", "%2B1", "%201", "-1", "1x", "99999999999999999999", NULL};
    for (const char **b = bad; *b; b++) {
        json_t *st =
            req_fail(400, "BadRequest", "GET", S("%s?resourceVersion=%s", CM("default"), *b), NULL);
        cr_assert(strstr(jstr(st, "message"), "invalid resource version"), "%s: %s", *b,
                  jstr(st, "message"));
        json_decref(st);
        json_decref(req_fail(400, "BadRequest", "GET",
                             S("%s?watch=true&resourceVersion=%s", CM("default"), *b), NULL));
        json_decref(req_fail(400, "BadRequest", "DELETE",
                             S("%s?labelSelector=app%%3Dfoo&resourceVersion=%s", CM("default"), *b),
                             NULL));
    }
    cr_assert_str_eq(cm_names("default"), "cm-a,cm-b,cm-c");
    /* Good ones still work. */
    json_decref(req(200, "GET", S("%s?resourceVersion=0", CM("default")), NULL));
    json_decref(req(200, "GET", S("%s?resourceVersion=%llu", CM("default"), rev()), NULL));
}

Test(badinput, bogus_resource_version_match_is_422)
{
    three_cms();
    json_t *st =
        req_fail(422, "Invalid", "GET",
                 S("%s?resourceVersion=1&resourceVersionMatch=Bogus", CM("default")), NULL);
    cr_assert(strstr(jstr(st, "message"), "resourceVersionMatch: Unsupported value: \"Bogus\""),
              "%s", jstr(st, "message"));
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "resourceVersionMatch");
    json_decref(st);
    json_decref(req_fail(422, "Invalid", "GET",
                         S("%s?watch=1&resourceVersionMatch=exact", CM("default")), NULL));
    json_decref(req_fail(422, "Invalid", "DELETE",
                         S("%s?resourceVersionMatch=Bogus", CM("default")), NULL));
    cr_assert_str_eq(cm_names("default"), "cm-a,cm-b,cm-c");
}

Test(badinput, garbage_booleans_and_integers_are_400)
{
    const char *bad[] = {"watch=abc",
                         "watch=yes",
                         "watch=true&timeoutSeconds=abc",
                         "watch=true&timeoutSeconds=%201",
                         "watch=true&allowWatchBookmarks=maybe",
                         "limit=5x",
                         "limit=0x10",
                         NULL};
    for (const char **b = bad; *b; b++)
        json_decref(req_fail(400, "BadRequest", "GET", S("%s?%s", CM("default"), *b), NULL));
    /* strconv.ParseBool's words in any case; an empty value is true, as
     * kube-apiserver reads it. */
    const char *watches[] = {"watch=True", "watch=T", "watch=1", "watch=TRUE",
                             "watch=",     "watch",   NULL};
    for (const char **w = watches; *w; w++) {
        wstream *ws = ws_start_ok(S("%s?%s&timeoutSeconds=%%2B5", CM("default"), *w), NULL, 5000);
        cr_assert(ws->chunked, "%s: not a watch stream", *w);
        ws_close(ws);
    }
    const char *lists[] = {"watch=0", "watch=false", "watch=F", "watch=False", NULL};
    for (const char **l = lists; *l; l++) {
        json_t *v = req(200, "GET", S("%s?%s", CM("default"), *l), NULL);
        cr_assert_str_eq(jstr(v, "kind"), "ConfigMapList", "%s", *l);
        json_decref(v);
    }
}

Test(badinput, watch_refuses_an_unsupported_field_selector_as_list_does)
{
    const char *q = "fieldSelector=spec.bogus%3Dx";
    json_t *a = req_fail(400, "BadRequest", "GET", S("%s?%s", CM("default"), q), NULL);
    json_t *b = req_fail(400, "BadRequest", "GET", S("%s?watch=true&%s", CM("default"), q), NULL);
    cr_assert_str_eq(jstr(a, "message"), jstr(b, "message"));
    json_decref(a);
    json_decref(b);
    /* A supported one is still a watch. */
    ws_close(ws_start_ok(S("%s?watch=true&fieldSelector=metadata.name%%3Dx", CM("default")), NULL,
                         5000));
}

Test(badinput, deletecollection_refuses_an_unsupported_field_selector)
{
    three_cms();
    /* spec.bogus != x would match every object if it were read at all. */
    json_decref(req_fail(400, "BadRequest", "DELETE",
                         S("%s?fieldSelector=spec.bogus!%%3Dx", CM("default")), NULL));
    cr_assert_str_eq(cm_names("default"), "cm-a,cm-b,cm-c");
}

Test(badinput, unsupported_dry_run_is_422_not_a_real_write)
{
    three_cms();
    json_decref(
        req_fail(422, "Invalid", "DELETE", S("%s?dryRun=all", CMP("default", "cm-a")), NULL));
    json_decref(req_fail(422, "Invalid", "DELETE", S("%s?dryRun=true", CM("default")), NULL));
    json_decref(req_fail(422, "Invalid", "POST", S("%s?dryRun=all", CM("default")),
                         "{'metadata':{'name':'cm-d'}}"));
    cr_assert_str_eq(cm_names("default"), "cm-a,cm-b,cm-c");
    json_decref(req(200, "DELETE", S("%s?dryRun=All", CMP("default", "cm-a")), NULL));
    cr_assert(exists(CMP("default", "cm-a")));
}

/* ---- 4. two Content-Length headers ----------------------------------------- */

Test(badinput, two_content_lengths_are_400)
{
    const char *body = "{\"metadata\":{\"name\":\"smuggled\"}}";
    size_t n = strlen(body);
    expect_raw_failure(raw(S("POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n"
                             "Host: 127.0.0.1\r\nContent-Type: application/json\r\n"
                             "Content-Length: %zu\r\nContent-Length: %zu\r\n"
                             "Connection: close\r\n\r\n%s",
                             n, n, body)),
                       400, "BadRequest");
    expect_raw_failure(raw(S("POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n"
                             "Host: 127.0.0.1\r\nContent-Type: application/json\r\n"
                             "Content-Length: %zu\r\ncontent-length: 2\r\n"
                             "Connection: close\r\n\r\n%s",
                             n, body)),
                       400, "BadRequest");
    cr_assert(gone(CMP("default", "smuggled")));
}

/* ---- 5. Content-Type --------------------------------------------------------- */

Test(badinput, unsupported_content_type_is_415)
{
    json_decref(mk_cm("default", "abc", NULL));
    const char *bad[] = {"text/plain",          "application/xml",
                         "image/png",           "application/x-www-form-urlencoded",
                         "multipart/form-data", NULL};
    for (const char **ct = bad; *ct; ct++) {
        json_decref(req_fail_ct(415, "UnsupportedMediaType", "POST", CM("default"), *ct,
                                "{'metadata':{'name':'new'}}"));
        json_decref(req_fail_ct(415, "UnsupportedMediaType", "PUT", CMP("default", "abc"), *ct,
                                "{'metadata':{'name':'abc'},'data':{'k':'changed'}}"));
        json_decref(req_fail_ct(415, "UnsupportedMediaType", "PATCH", CMP("default", "abc"), *ct,
                                "{'data':{'k':'changed'}}"));
    }
    /* No Content-Type at all from a browser (a Blob body needs no preflight). */
    const char *body = "{\"metadata\":{\"name\":\"new\"}}";
    expect_raw_failure(raw(S("POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n"
                             "Host: 127.0.0.1\r\nOrigin: http://127.0.0.1:%u\r\n"
                             "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                             (unsigned)fakeapi_port(srv), strlen(body), body)),
                       415, "UnsupportedMediaType");
    cr_assert(gone(CMP("default", "new")));
    json_t *cm = req(200, "GET", CMP("default", "abc"), NULL);
    cr_assert_str_eq(jstr(cm, "data.k"), "v");
    json_decref(cm);
    /* What clients send still works. */
    json_decref(req_ct(201, "POST", CM("default"), "application/json; charset=utf-8",
                       "{'metadata':{'name':'j'}}"));
    json_decref(req_ct(201, "POST", CM("default"), "application/yaml", "metadata: {name: y}"));
    json_decref(req_ct(200, "PATCH", CMP("default", "abc"), "application/merge-patch+json",
                       "{'data':{'k':'w'}}"));
    /* No Content-Type from a client that is not a browser is read as JSON,
     * as kube-apiserver does (kubectl create --raw sends none). */
    raw_resp r = raw(S("POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n"
                       "Host: 127.0.0.1\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
                       strlen(body), body));
    cr_assert_eq(r.status, 201);
    json_decref(r.body);
}

/* ---- 6. cross-site requests: the control endpoint and the Host header ------ */

Test(badinput, control_endpoint_wants_json)
{
    const char *rule = "{'match':{'verb':'get'},'action':{'error':{'status':500}}}";
    const char *bad[] = {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                         NULL};
    for (const char **ct = bad; *ct; ct++) {
        json_decref(
            req_fail_ct(415, "UnsupportedMediaType", "POST", "/fakeapi/v1/faults", *ct, rule));
        json_decref(
            req_fail_ct(415, "UnsupportedMediaType", "POST", "/fakeapi/v1/compact", *ct, ""));
    }
    /* A browser's fetch() without a body sends no Content-Type, but an
     * Origin; even a same-origin one would need the Content-Type. */
    expect_raw_failure(raw("POST /fakeapi/v1/compact HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           "Origin: http://evil.example\r\nConnection: close\r\n\r\n"),
                       403, "Forbidden");
    expect_raw_failure(raw(S("POST /fakeapi/v1/compact HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             "Origin: http://localhost:%u\r\nConnection: close\r\n\r\n",
                             (unsigned)fakeapi_port(srv))),
                       415, "UnsupportedMediaType");
    /* A bare POST (curl -X POST) needs one too. */
    expect_raw_failure(raw("POST /fakeapi/v1/compact HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           "Connection: close\r\n\r\n"),
                       415, "UnsupportedMediaType");
    json_t *faults = req(200, "GET", "/fakeapi/v1/faults", NULL);
    cr_assert_eq(json_array_size(faults), 0, "a fault rule was installed");
    json_decref(faults);
    json_t *stats = req(200, "GET", "/fakeapi/v1/stats", NULL);
    cr_assert_eq(jint(stats, "compacted"), 0, "the store was compacted");
    json_decref(stats);
    json_decref(req_ct(200, "POST", "/fakeapi/v1/compact", "application/json", NULL));
    json_decref(req_ct(201, "POST", "/fakeapi/v1/faults", "application/json", rule));
    /* kubectl create --raw sends no Content-Type, and no Origin. */
    const char *one = "{\"match\":{\"verb\":\"watch\"},\"action\":{\"error\":{\"status\":500}}}";
    raw_resp r = raw(S("POST /fakeapi/v1/faults HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                       strlen(one), one));
    cr_assert_eq(r.status, 201);
    cr_assert_eq(json_array_size(r.body), 2);
    json_decref(r.body);
}

/* tmpl with its 'P' replaced by port. */
static void with_port(char *out, size_t cap, const char *tmpl, unsigned port)
{
    const char *p = strchr(tmpl, 'P');
    if (p)
        snprintf(out, cap, "%.*s%u%s", (int)(p - tmpl), tmpl, port, p + 1);
    else
        snprintf(out, cap, "%s", tmpl);
}

Test(badinput, host_that_is_not_this_server_is_403)
{
    json_decref(mk_cm("default", "abc", NULL));
    unsigned port = fakeapi_port(srv);
    /* What a DNS-rebound page sends: its own name (and our port). */
    const char *bad[] = {"evil.example:P",
                         "evil.example",
                         "127.0.0.1:1P",
                         "localhost.evil.example:P",
                         "[::2]:P",
                         "127.0.0.1:P0",
                         NULL};
    for (const char **f = bad; *f; f++) {
        char h[128];
        with_port(h, sizeof h, *f, port);
        expect_raw_failure(get_with_host("/api/v1/namespaces", h), 403, "Forbidden");
        expect_raw_failure(raw(S("DELETE /api/v1/namespaces/default/configmaps/abc HTTP/1.1\r\n"
                                 "Host: %s\r\nConnection: close\r\n\r\n",
                                 h)),
                           403, "Forbidden");
        expect_raw_failure(raw(S("POST /fakeapi/v1/compact HTTP/1.1\r\nHost: %s\r\n"
                                 "Content-Type: application/json\r\nConnection: close\r\n\r\n",
                                 h)),
                           403, "Forbidden");
    }
    cr_assert(exists(CMP("default", "abc")));
    const char *good[] = {"127.0.0.1:P", "localhost:P", "LOCALHOST:P", "[::1]:P",
                          "127.0.0.1",   "localhost",   NULL};
    for (const char **f = good; *f; f++) {
        char h[128];
        with_port(h, sizeof h, *f, port);
        raw_resp r = get_with_host("/api/v1/namespaces", h);
        cr_assert_eq(r.status, 200, "Host %s: %ld", h, r.status);
        json_decref(r.body);
    }
}

Test(badinput, localhost_is_a_host_to_listen_on)
{
    teardown();
    fakeapi_options o = {.seed = 1, .host = "localhost"};
    start(&o);
    cr_assert_str_eq(fakeapi_url(srv), S("http://127.0.0.1:%u", (unsigned)fakeapi_port(srv)));
    json_decref(req(200, "GET", "/api/v1/namespaces", NULL));
}

Test(badinput, cross_origin_request_is_403)
{
    unsigned port = fakeapi_port(srv);
    const char *body = "{\"metadata\":{\"name\":\"xsite\"}}";
    const char *bad[] = {"http://evil.example",
                         "null",
                         "http://evil.example:P",
                         "https://127.0.0.1.evil.example:P",
                         "file://",
                         "http://127.0.0.1:P/x",
                         NULL};
    for (const char **f = bad; *f; f++) {
        char o[128];
        with_port(o, sizeof o, *f, port);
        expect_raw_failure(raw(S("POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n"
                                 "Host: 127.0.0.1:%u\r\nOrigin: %s\r\n"
                                 "Content-Type: application/json\r\nContent-Length: %zu\r\n"
                                 "Connection: close\r\n\r\n%s",
                                 port, o, strlen(body), body)),
                           403, "Forbidden");
        expect_raw_failure(raw(S("GET /api/v1/namespaces/default/secrets HTTP/1.1\r\n"
                                 "Host: 127.0.0.1:%u\r\nOrigin: %s\r\nConnection: close\r\n\r\n",
                                 port, o)),
                           403, "Forbidden");
    }
    cr_assert(gone(CMP("default", "xsite")));
    /* Its own origin passes. */
    raw_resp r = raw(S("POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n"
                       "Host: 127.0.0.1:%u\r\nOrigin: http://localhost:%u\r\n"
                       "Content-Type: application/json\r\nContent-Length: %zu\r\n"
                       "Connection: close\r\n\r\n%s",
                       port, port, strlen(body), body));
    cr_assert_eq(r.status, 201);
    json_decref(r.body);
}
