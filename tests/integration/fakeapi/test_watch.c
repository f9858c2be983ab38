/*
 * test_watch.c - watch streams over HTTP (K8S-API.md sections 4 and 5): the
 * wire format, initial state and resume, concurrent writers, DELETED, selector
 * transitions, timeouts, bookmarks, sendInitialEvents, compaction (410 on
 * watches, exact lists and continue tokens), slow and vanished clients,
 * fakeapi_stop with open watches, and hold/release.
 *
 * Watches are read by a small streaming client below: one thread per watch
 * drives a curl multi handle and splits the body into lines, which the test
 * thread takes from a queue with a timeout.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fakeapi/fakeapi.h"
#define APITEST_OWN_OBJECTS /* rv_of, mk_cm and mk_ns differ here */
#include "apitest.h"

/* ---- helpers of this file (the shared ones are in tests/support/apitest.h) -- */

#define MERGE "application/merge-patch+json"

/* metadata.resourceVersion as a number (0 if missing or not decimal). */
static unsigned long long rv_of(const json_t *obj)
{
    const char *rv = jstr(obj, "metadata.resourceVersion");
    if (!rv || !*rv)
        return 0;
    char *end;
    unsigned long long n = strtoull(rv, &end, 10);
    return *end ? 0 : n;
}

static void mk_ns(const char *name)
{
    json_decref(req(201, "POST", "/api/v1/namespaces",
                    S("{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'%s'}}", name)));
}

/* Create a ConfigMap; returns its resourceVersion. */
static unsigned long long mk_cm(const char *ns, const char *name, const char *labels_json,
                                const char *val)
{
    json_t *o = req(201, "POST", S("/api/v1/namespaces/%s/configmaps", ns),
                    S("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'%s'%s%s},"
                      "'data':{'v':'%s'}}",
                      name, labels_json ? ",'labels':" : "", labels_json ? labels_json : "", val));
    unsigned long long rv = rv_of(o);
    json_decref(o);
    return rv;
}

/* Merge-patch a ConfigMap; returns its new resourceVersion. */
static unsigned long long patch_cm(const char *ns, const char *name, const char *patch)
{
    json_t *o = req_full(200, "PATCH", S("/api/v1/namespaces/%s/configmaps/%s", ns, name), MERGE,
                         patch, NULL);
    unsigned long long rv = rv_of(o);
    json_decref(o);
    return rv;
}

static void del_cm(const char *ns, const char *name)
{
    json_decref(req(200, "DELETE", S("/api/v1/namespaces/%s/configmaps/%s", ns, name), NULL));
}

/* ---- the streaming watch client (apitest.h), as this file opens it ---------- */

/* Open a watch and assert it answers 200 promptly. */
static wstream *ws_ok(const char *path)
{
    return ws_start_ok(path, "test_watch/1.0", 2000);
}

/* Expect the next event to be of type (and of name, unless NULL). New reference. */
static json_t *expect_ev(wstream *w, const char *type, const char *name)
{
    json_t *ev = ws_next(w, 3000);
    cr_assert_not_null(ev, "no %s event for %s within 3 s", type, name ? name : "(any)");
    cr_assert_str_eq(jstr(ev, "type"), type, "want %s %s, got %s %s", type, name ? name : "",
                     jstr(ev, "type"), jstr(ev, "object.metadata.name"));
    if (name)
        cr_assert_str_eq(jstr(ev, "object.metadata.name"), name);
    return ev;
}

/* Assert no event arrives within ms. */
static void expect_quiet(wstream *w, int ms)
{
    char *line = ws_line(w, ms);
    cr_assert_null(line, "unexpected event: %.300s", line);
}

static size_t watch_count(void)
{
    fakeapi_watch_info *info = NULL;
    size_t n = 0;
    cr_assert_eq(fakeapi_watches(srv, &info, &n), 0);
    free(info);
    return n;
}

/* A raw TCP connection that sends a request and then never reads. */
static int raw_watch(const char *path, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    if (rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(fakeapi_port(srv))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    const char *rq = S("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: raw\r\n\r\n", path);
    cr_assert_eq(send(fd, rq, strlen(rq), 0), (ssize_t)strlen(rq));
    return fd;
}

/* ---- format, parameters and collections ----------------------------------- */

static const char crd_gadgets[] =
    "{'apiVersion':'apiextensions.k8s.io/v1','kind':'CustomResourceDefinition',"
    "'metadata':{'name':'gadgets.example.com'},"
    "'spec':{'group':'example.com','scope':'Namespaced',"
    "'names':{'plural':'gadgets','singular':'gadget','kind':'Gadget','listKind':'GadgetList'},"
    "'versions':[{'name':'v1','served':true,'storage':true,"
    "'schema':{'openAPIV3Schema':{'type':'object','properties':{"
    "'spec':{'type':'object','x-kubernetes-preserve-unknown-fields':true}}}}}]}}";

TestSuite(watch, .init = setup, .fini = teardown, .timeout = 60);

/* One watch per (parameter spelling, collection): headers at once, JSON,
 * chunked, nothing before the first write, then one compact event a line. */
Test(watch, format_params_and_collections)
{
    mk_ns("w");
    json_decref(
        req(201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd_gadgets));
    static const char *spellings[] = {"watch=true", "watch=1", "watch=True"};
    static const struct {
        const char *path, *kind, *api_version;
    } cols[] = {
        {"/api/v1/namespaces/w/configmaps", "ConfigMap", "v1"},
        {"/api/v1/configmaps", "ConfigMap", "v1"},
        {"/api/v1/namespaces", "Namespace", "v1"},
        {"/apis/example.com/v1/namespaces/w/gadgets", "Gadget", "example.com/v1"},
    };
    int made = 0;
    for (size_t s = 0; s < 3; s++) {
        for (size_t c = 0; c < 4; c++) {
            const char *path = S("%s?%s&resourceVersion=%llu", cols[c].path, spellings[s], rev());
            wstream *w = ws_ok(path);
            cr_assert(w->headers && w->early_bytes == 0, "%s: body before headers", path);
            cr_assert_str_eq(w->ctype, "application/json", "%s: Content-Type %s", path, w->ctype);
            cr_assert(w->chunked, "%s: not chunked", path);
            expect_quiet(w, 150); /* the headers came without any event */
            char name[32];
            snprintf(name, sizeof name, "obj-%d", made++);
            if (c <= 1) {
                mk_cm("w", name, NULL, "x");
            } else if (c == 2) {
                mk_ns(name);
            } else {
                json_decref(req(201, "POST", "/apis/example.com/v1/namespaces/w/gadgets",
                                S("{'apiVersion':'example.com/v1','kind':'Gadget',"
                                  "'metadata':{'name':'%s'},'spec':{'a':1}}",
                                  name)));
            }
            char *line = ws_line(w, 3000);
            cr_assert_not_null(line, "%s: no event", path);
            json_t *ev = json_loads(line, 0, NULL);
            cr_assert_not_null(ev, "%s: not JSON: %s", path, line);
            char *again = json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER);
            cr_assert_str_eq(line, again, "%s: event not compact", path);
            cr_assert_str_eq(jstr(ev, "type"), "ADDED");
            cr_assert_str_eq(jstr(ev, "object.kind"), cols[c].kind);
            cr_assert_str_eq(jstr(ev, "object.apiVersion"), cols[c].api_version);
            cr_assert_str_eq(jstr(ev, "object.metadata.name"), name);
            free(again);
            free(line);
            json_decref(ev);
            ws_close(w);
        }
    }
}

/* resourceVersion unset or "0": the current state as ADDED first. */
Test(watch, initial_state_then_changes)
{
    mk_ns("init");
    mk_cm("init", "a", NULL, "1");
    mk_cm("init", "b", NULL, "1");
    mk_cm("init", "c", NULL, "1");
    for (int i = 0; i < 2; i++) {
        wstream *w = ws_ok(i ? "/api/v1/namespaces/init/configmaps?watch=true&resourceVersion=0"
                             : "/api/v1/namespaces/init/configmaps?watch=true");
        const char *names[] = {"a", "b", "c"};
        bool seen[3] = {false};
        for (int k = 0; k < 3; k++) {
            json_t *ev = expect_ev(w, "ADDED", NULL);
            for (int j = 0; j < 3; j++)
                if (!strcmp(jstr(ev, "object.metadata.name"), names[j]))
                    seen[j] = true;
            json_decref(ev);
        }
        cr_assert(seen[0] && seen[1] && seen[2], "initial ADDED for a, b and c");
        expect_quiet(w, 100);
        unsigned long long rv = patch_cm("init", "b", S("{'data':{'v':'%d'}}", 2 + i));
        json_t *ev = expect_ev(w, "MODIFIED", "b");
        cr_assert_eq(rv_of(jget(ev, "object")), rv);
        json_decref(ev);
        ws_close(w);
    }
}

/* ---- resume under concurrent writers -------------------------------------- */

#define WRITERS 4
#define OPS 40

typedef struct writer {
    int id;
    unsigned long long rvs[OPS * 3];
    size_t n;
    size_t ops; /* writes made (including deletes, whose rv is not returned) */
} writer;

static void *write_loop(void *ud)
{
    writer *wr = ud;
    for (int i = 0; i < OPS; i++) {
        const char *name = S("w%d-%d", wr->id, i);
        wr->rvs[wr->n++] = mk_cm("res", name, NULL, "0");
        wr->rvs[wr->n++] = patch_cm("res", name, "{'data':{'v':'1'}}");
        wr->ops += 2;
        if (i % 3 == 0) {
            del_cm("res", name);
            wr->ops++;
        }
    }
    return NULL;
}

Test(watch, resume_sees_every_change_in_order)
{
    mk_ns("res");
    mk_cm("res", "before", NULL, "0");
    unsigned long long rv0 = rev();
    wstream *w = ws_ok(S("/api/v1/namespaces/res/configmaps?watch=true&resourceVersion=%llu", rv0));
    writer wr[WRITERS];
    pthread_t th[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        wr[i] = (writer){.id = i};
        cr_assert_eq(pthread_create(&th[i], NULL, write_loop, &wr[i]), 0);
    }
    size_t total = 0;
    for (int i = 0; i < WRITERS; i++) {
        pthread_join(th[i], NULL);
        total += wr[i].ops;
    }
    json_t *list = req(200, "GET", "/api/v1/namespaces/res/configmaps", NULL);
    unsigned long long list_rv = rv_of(list);

    /* Replay the events onto a map name -> rv and compare with the list. */
    json_t *state = json_object();
    json_object_set_new(state, "before", json_true());
    unsigned long long last = rv0;
    unsigned long long *seen = calloc(total, sizeof *seen);
    for (size_t i = 0; i < total; i++) {
        json_t *ev = ws_next(w, 5000);
        cr_assert_not_null(ev, "event %zu of %zu missing", i + 1, total);
        unsigned long long rv = rv_of(jget(ev, "object"));
        cr_assert_gt(rv, last, "event %zu: rv %llu after %llu (out of order or duplicate)", i, rv,
                     last);
        cr_assert_leq(rv, list_rv);
        last = rv;
        seen[i] = rv;
        const char *type = jstr(ev, "type"), *name = jstr(ev, "object.metadata.name");
        if (!strcmp(type, "DELETED"))
            json_object_del(state, name);
        else
            json_object_set_new(state, name, json_integer((json_int_t)rv));
        json_decref(ev);
    }
    cr_assert_eq(last, list_rv, "the last event is the list's revision");
    /* Only this test writes: the events are exactly rv0+1 .. list_rv. */
    cr_assert_eq(list_rv - rv0, total, "revisions (%llu, %llu] hold %zu writes", rv0, list_rv,
                 total);
    for (int i = 0; i < WRITERS; i++)
        for (size_t k = 0; k < wr[i].n; k++) {
            bool found = false;
            for (size_t j = 0; j < total && !found; j++)
                found = seen[j] == wr[i].rvs[k];
            cr_assert(found, "writer %d's rv %llu not delivered", i, wr[i].rvs[k]);
        }
    json_t *items = jget(list, "items");
    cr_assert_eq(json_array_size(items), json_object_size(state));
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        json_t *s = json_object_get(state, jstr(it, "metadata.name"));
        cr_assert_not_null(s, "%s listed but not in the replayed state", jstr(it, "metadata.name"));
        if (json_is_integer(s))
            cr_assert_eq((unsigned long long)json_integer_value(s), rv_of(it));
    }
    expect_quiet(w, 100);
    free(seen);
    json_decref(state);
    json_decref(list);
    ws_close(w);
}

/* DELETED carries the last state with the deletion's resourceVersion. */
Test(watch, deleted_carries_last_state)
{
    mk_ns("del");
    mk_cm("del", "x", NULL, "one");
    unsigned long long rv2 = patch_cm("del", "x", "{'data':{'v':'two'}}");
    wstream *w = ws_ok(S("/api/v1/namespaces/del/configmaps?watch=true&resourceVersion=%llu", rv2));
    del_cm("del", "x");
    unsigned long long del_rv = rev();
    json_t *ev = expect_ev(w, "DELETED", "x");
    cr_assert_str_eq(jstr(ev, "object.data.v"), "two");
    cr_assert_str_eq(jstr(ev, "object.kind"), "ConfigMap");
    cr_assert_eq(rv_of(jget(ev, "object")), del_rv);
    cr_assert_gt(del_rv, rv2);
    json_decref(ev);
    ws_close(w);
}

/* ---- selectors ------------------------------------------------------------ */

Test(watch, label_selector_transitions)
{
    mk_ns("sel");
    unsigned long long rv0 = rev();
    wstream *w = ws_ok(S("/api/v1/namespaces/sel/configmaps?watch=true&resourceVersion=%llu"
                         "&labelSelector=app%%3Dx",
                         rv0));
    mk_cm("sel", "a", "{'app':'y'}", "0");
    expect_quiet(w, 150);
    unsigned long long rv = patch_cm("sel", "a", "{'metadata':{'labels':{'app':'x'}}}");
    json_t *ev = expect_ev(w, "ADDED", "a");
    cr_assert_eq(rv_of(jget(ev, "object")), rv);
    json_decref(ev);
    patch_cm("sel", "a", "{'data':{'v':'1'}}");
    json_decref(expect_ev(w, "MODIFIED", "a"));
    rv = patch_cm("sel", "a", "{'metadata':{'labels':{'app':'z'}}}");
    ev = expect_ev(w, "DELETED", "a");
    cr_assert_eq(rv_of(jget(ev, "object")), rv);
    json_decref(ev);
    del_cm("sel", "a");
    mk_cm("sel", "b", "{'app':'x'}", "0");
    json_decref(expect_ev(w, "ADDED", "b")); /* nothing for a's deletion first */
    ws_close(w);

    /* The same transitions replayed from history. */
    w = ws_ok(S("/api/v1/namespaces/sel/configmaps?watch=true&resourceVersion=%llu"
                "&labelSelector=app%%3Dx",
                rv0));
    json_decref(expect_ev(w, "ADDED", "a"));
    json_decref(expect_ev(w, "MODIFIED", "a"));
    json_decref(expect_ev(w, "DELETED", "a"));
    json_decref(expect_ev(w, "ADDED", "b"));
    expect_quiet(w, 100);
    ws_close(w);
}

Test(watch, field_selector_transitions)
{
    mk_ns("fs");

    wstream *w = ws_ok(S("/api/v1/namespaces/fs/pods?watch=true&resourceVersion=%llu"
                         "&fieldSelector=status.phase%%3DRunning",
                         rev()));
    json_decref(req(201, "POST", "/api/v1/namespaces/fs/pods",
                    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
                    "'spec':{'containers':[{'name':'c','image':'busybox'}]}}"));
    expect_quiet(w, 150);
    json_decref(req_full(200, "PATCH", "/api/v1/namespaces/fs/pods/p/status", MERGE,
                         "{'status':{'phase':'Running'}}", NULL));
    json_decref(expect_ev(w, "ADDED", "p"));
    json_decref(req_full(200, "PATCH", "/api/v1/namespaces/fs/pods/p/status", MERGE,
                         "{'status':{'phase':'Succeeded'}}", NULL));
    json_decref(expect_ev(w, "DELETED", "p"));
    ws_close(w);

    /* metadata.name: only that object's events. */
    w = ws_ok(S("/api/v1/namespaces/fs/configmaps?watch=true&resourceVersion=%llu"
                "&fieldSelector=metadata.name%%3Dwanted",
                rev()));
    mk_cm("fs", "other", NULL, "0");
    mk_cm("fs", "wanted", NULL, "0");
    json_decref(expect_ev(w, "ADDED", "wanted"));
    del_cm("fs", "wanted");
    json_decref(expect_ev(w, "DELETED", "wanted"));
    ws_close(w);
}

/* ---- timeouts and bookmarks ----------------------------------------------- */

Test(watch, timeout_closes_cleanly)
{
    int64_t t0 = now_ms();
    wstream *w = ws_ok("/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1");
    cr_assert(ws_wait_done(w, 3000), "the watch did not end after timeoutSeconds=1");
    int64_t took = now_ms() - t0;
    cr_assert(took >= 900 && took <= 2200, "closed after %lld ms", (long long)took);
    cr_assert_eq(w->rc, CURLE_OK, "unclean end: %s", curl_easy_strerror(w->rc));
    cr_assert_null(ws_line(w, 0), "no bookmark without allowWatchBookmarks");
    ws_close(w);
}

TestSuite(watch_opts, .fini = teardown, .timeout = 60);

Test(watch_opts, bookmarks_periodic_and_before_close)
{
    fakeapi_options o = {.seed = 1, .bookmark_interval_ms = 100};
    start(&o);
    mk_ns("bm");
    wstream *w = ws_ok(S("/api/v1/namespaces/bm/configmaps?watch=true&resourceVersion=%llu"
                         "&allowWatchBookmarks=true&timeoutSeconds=1",
                         rev()));
    for (int i = 0; i < 5; i++) {
        mk_cm("bm", S("c%d", i), NULL, "0");
        mk_cm("default", S("elsewhere%d", i), NULL, "0");
        sleep_ms(60);
    }
    cr_assert(ws_wait_done(w, 3000));
    int bookmarks = 0, added = 0;
    unsigned long long delivered = 0, last_bm = 0;
    const char *last_type = "";
    json_t *ev;
    static char last[16];
    while ((ev = ws_next(w, 0))) {
        const char *type = jstr(ev, "type");
        unsigned long long rv = rv_of(jget(ev, "object"));
        if (!strcmp(type, "BOOKMARK")) {
            bookmarks++;
            cr_assert_str_eq(jstr(ev, "object.kind"), "ConfigMap");
            cr_assert_str_eq(jstr(ev, "object.apiVersion"), "v1");
            cr_assert_gt(rv, 0);
            cr_assert_geq(rv, delivered, "bookmark rv %llu behind a delivered event", rv);
            cr_assert_leq(rv, rev());
            cr_assert_geq(rv, last_bm);
            last_bm = rv;
        } else {
            cr_assert_str_eq(type, "ADDED");
            cr_assert_gt(rv, last_bm, "event %llu after a bookmark at %llu", rv, last_bm);
            delivered = rv;
            added++;
        }
        snprintf(last, sizeof last, "%s", type);
        last_type = last;
        json_decref(ev);
    }
    cr_assert_eq(added, 5);
    cr_assert_geq(bookmarks, 4, "only %d bookmarks in 1 s at 100 ms", bookmarks);
    cr_assert_str_eq(last_type, "BOOKMARK", "the last line before the timeout is a bookmark");
    cr_assert_eq(w->rc, CURLE_OK);
    ws_close(w);
}

Test(watch, send_initial_events)
{
    mk_ns("sie");
    mk_cm("sie", "a", NULL, "0");
    mk_cm("sie", "b", NULL, "0");
    mk_cm("sie", "c", NULL, "0");
    unsigned long long at = rev();
    wstream *w = ws_ok("/api/v1/namespaces/sie/configmaps?watch=true&sendInitialEvents=true"
                       "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true");
    for (int i = 0; i < 3; i++)
        json_decref(expect_ev(w, "ADDED", NULL));
    json_t *ev = expect_ev(w, "BOOKMARK", NULL);
    json_t *ann = jget(ev, "object.metadata.annotations");
    cr_assert_str_eq(json_string_value(json_object_get(ann, "k8s.io/initial-events-end")), "true");
    cr_assert_geq(rv_of(jget(ev, "object")), at);
    json_decref(ev);
    unsigned long long rv = mk_cm("sie", "d", NULL, "0");
    ev = expect_ev(w, "ADDED", "d");
    cr_assert_eq(rv_of(jget(ev, "object")), rv);
    json_decref(ev);
    ws_close(w);

    static const char *bad[] = {
        "/api/v1/namespaces/sie/configmaps?watch=true&sendInitialEvents=true",
        "/api/v1/namespaces/sie/configmaps?watch=true&sendInitialEvents=true"
        "&resourceVersionMatch=Exact&allowWatchBookmarks=true",
    };
    for (size_t i = 0; i < 2; i++) {
        long st = 0;
        json_t *body = req_full(0, "GET", bad[i], NULL, NULL, &st);
        cr_assert(st >= 400 && st < 500, "%s: status %ld", bad[i], st);
        cr_assert_str_eq(jstr(body, "kind"), "Status");
        json_decref(body);
    }
}

/* ---- compaction ----------------------------------------------------------- */

Test(watch, watch_from_compacted_rv_gets_410_event)
{
    mk_ns("cmp");
    unsigned long long old = mk_cm("cmp", "a", NULL, "0");
    patch_cm("cmp", "a", "{'data':{'v':'1'}}");
    patch_cm("cmp", "a", "{'data':{'v':'2'}}");
    cr_assert_eq(fakeapi_compact(srv, 0), 0);
    wstream *w = ws_ok(S("/api/v1/namespaces/cmp/configmaps?watch=true&resourceVersion=%llu", old));
    json_t *ev = expect_ev(w, "ERROR", NULL);
    cr_assert_str_eq(jstr(ev, "object.kind"), "Status");
    cr_assert_str_eq(jstr(ev, "object.apiVersion"), "v1");
    cr_assert_str_eq(jstr(ev, "object.status"), "Failure");
    cr_assert_str_eq(jstr(ev, "object.reason"), "Expired");
    cr_assert_eq(json_integer_value(jget(ev, "object.code")), 410);
    cr_assert_not_null(strstr(jstr(ev, "object.message"), "too old resource version"));
    json_decref(ev);
    cr_assert(ws_wait_done(w, 2000), "the stream did not close after the ERROR");
    cr_assert_null(ws_line(w, 0), "exactly one event");
    cr_assert_eq(w->rc, CURLE_OK);
    ws_close(w);

    /* From the current revision all is well. */
    w = ws_ok(S("/api/v1/namespaces/cmp/configmaps?watch=true&resourceVersion=%llu", rev()));
    patch_cm("cmp", "a", "{'data':{'v':'3'}}");
    json_decref(expect_ev(w, "MODIFIED", "a"));
    ws_close(w);

    /* The same over POST /fakeapi/v1/compact. */
    unsigned long long mid = patch_cm("cmp", "a", "{'data':{'v':'4'}}");
    patch_cm("cmp", "a", "{'data':{'v':'5'}}");
    json_decref(req_ct(200, "POST", "/fakeapi/v1/compact", "application/json", NULL));
    w = ws_ok(S("/api/v1/namespaces/cmp/configmaps?watch=true&resourceVersion=%llu", mid));
    json_decref(expect_ev(w, "ERROR", NULL));
    cr_assert(ws_wait_done(w, 2000));
    ws_close(w);
}

Test(watch, exact_list_from_history_then_410)
{
    mk_ns("ex");
    mk_cm("ex", "a", NULL, "old");
    mk_cm("ex", "b", NULL, "0");
    unsigned long long n = rev();
    del_cm("ex", "a");
    mk_cm("ex", "c", NULL, "0");
    patch_cm("ex", "b", "{'data':{'v':'new'}}");
    const char *path =
        S("/api/v1/namespaces/ex/configmaps?resourceVersion=%llu&resourceVersionMatch=Exact", n);
    json_t *l = req(200, "GET", path, NULL);
    cr_assert_eq(rv_of(l), n, "the list's resourceVersion is the one asked for");
    json_t *items = jget(l, "items");
    cr_assert_eq(json_array_size(items), 2, "a and b at %llu, got %zu items", n,
                 json_array_size(items));
    cr_assert_str_eq(jstr(items, "0.metadata.name"), "a", "a, deleted after N, is still there");
    cr_assert_str_eq(jstr(items, "0.data.v"), "old");
    cr_assert_str_eq(jstr(items, "1.metadata.name"), "b");
    cr_assert_str_eq(jstr(items, "1.data.v"), "0", "b as it was at N");
    json_decref(l);
    cr_assert_eq(fakeapi_compact(srv, 0), 0);
    json_t *st = req(410, "GET", path, NULL);
    cr_assert_str_eq(jstr(st, "reason"), "Expired");
    json_decref(st);
}

Test(watch, continue_after_compaction_is_410)
{
    mk_ns("ct");
    for (int i = 0; i < 3; i++)
        mk_cm("ct", S("c%d", i), NULL, "0");
    json_t *l = req(200, "GET", "/api/v1/namespaces/ct/configmaps?limit=1", NULL);
    const char *tok = jstr(l, "metadata.continue");
    cr_assert_not_null(tok);
    char t[1024];
    snprintf(t, sizeof t, "%s", tok);
    json_decref(l);
    patch_cm("ct", "c2", "{'data':{'v':'1'}}");
    cr_assert_eq(fakeapi_compact(srv, 0), 0);
    json_t *st =
        req(410, "GET", S("/api/v1/namespaces/ct/configmaps?limit=1&continue=%s", t), NULL);
    cr_assert_str_eq(jstr(st, "reason"), "Expired");
    cr_assert_eq(json_integer_value(jget(st, "code")), 410);
    json_decref(st);
}

Test(watch_opts, automatic_compaction_by_count)
{
    fakeapi_options o = {.seed = 1, .history_max_events = 50};
    start(&o);
    mk_ns("auto");
    unsigned long long old = mk_cm("auto", "a", NULL, "0");
    for (int i = 0; i < 120; i++)
        patch_cm("auto", "a", S("{'data':{'v':'%d'}}", i));
    unsigned long long recent = rev() - 10;
    /* Compaction may run on the background thread: allow it a moment. */
    json_t *ev = NULL;
    for (int tries = 0; tries < 30; tries++) {
        wstream *w =
            ws_ok(S("/api/v1/namespaces/auto/configmaps?watch=true&resourceVersion=%llu", old));
        ev = ws_next(w, 2000);
        ws_close(w);
        cr_assert_not_null(ev);
        if (!strcmp(jstr(ev, "type"), "ERROR"))
            break;
        json_decref(ev);
        ev = NULL;
        sleep_ms(100);
    }
    cr_assert_not_null(ev, "a resume from %llu still works after 120 writes", old);
    cr_assert_eq(json_integer_value(jget(ev, "object.code")), 410);
    json_decref(ev);
    /* A recent resume still works. */
    wstream *w =
        ws_ok(S("/api/v1/namespaces/auto/configmaps?watch=true&resourceVersion=%llu", recent));
    for (int i = 0; i < 10; i++)
        json_decref(expect_ev(w, "MODIFIED", "a"));
    ws_close(w);
}

/* ---- slow, vanished and stopped clients ----------------------------------- */

Test(watch_opts, slow_reader_is_closed_others_go_on)
{
    fakeapi_options o = {.seed = 1, .watch_queue_len = 16};
    start(&o);
    mk_ns("slow");
    const char *q = S("/api/v1/namespaces/slow/configmaps?watch=true&resourceVersion=%llu", rev());
    int fd = raw_watch(q, 4096);
    wstream *fast = ws_ok(q);
    for (int i = 0; i < 100 && watch_count() < 2; i++)
        sleep_ms(10);
    cr_assert_eq(watch_count(), 2);

    /* 500 objects of 12 KB: far more than the socket buffers hold. */
    static char big[12000 + 1];
    memset(big, 'x', sizeof big - 1);
    const int N = 500;
    int64_t worst = 0, t0 = now_ms();
    for (int i = 0; i < N; i++) {
        int64_t t = now_ms();
        mk_cm("slow", S("o%d", i), NULL, big);
        if (now_ms() - t > worst)
            worst = now_ms() - t;
    }
    int64_t total = now_ms() - t0;
    /* A write blocked on the slow watcher would wait for ever: the bounds
     * only tell that from a loaded machine's pauses. */
    cr_assert_lt(worst, 10000, "a write took %lld ms", (long long)worst);
    cr_assert_lt(total, 120000, "%d writes took %lld ms", N, (long long)total);
    /* The fast watcher sees every event in order. With a queue of 16 a
     * scheduling hiccup can close it too: it then resumes from its last
     * resourceVersion, as clients do, and still misses nothing. */
    unsigned long long last = 0;
    unsigned long resumes = 0;
    for (int i = 0; i < N; i++) {
        json_t *ev = ws_next(fast, 5000);
        if (!ev && fast->done && resumes < 20) {
            ws_close(fast);
            fast = ws_ok(
                S("/api/v1/namespaces/slow/configmaps?watch=true&resourceVersion=%llu", last));
            resumes++;
            i--;
            continue;
        }
        cr_assert_not_null(ev, "the fast watcher missed event %d (resumed %lu times)", i, resumes);
        cr_assert_str_eq(jstr(ev, "object.metadata.name"), S("o%d", i));
        last = rv_of(jget(ev, "object"));
        json_decref(ev);
    }
    cr_log_info("fast watcher resumed %lu times; %lu slow closes", resumes,
                fakeapi_slow_watch_closes(srv));
    cr_assert_gt(fakeapi_slow_watch_closes(srv), resumes, "the slow watch was not closed");
    json_t *stats = req(200, "GET", "/fakeapi/v1/stats", NULL);
    cr_assert_gt(json_integer_value(jget(stats, "slowWatchersClosed")), 0);
    json_decref(stats);
    close(fd);
    ws_close(fast);
}

Test(watch, client_disconnect_drops_the_watch)
{
    wstream *w = ws_ok("/api/v1/namespaces/default/configmaps?watch=true");
    cr_assert_eq(watch_count(), 1);
    json_t *stats = req(200, "GET", "/fakeapi/v1/stats", NULL);
    cr_assert_eq(json_integer_value(jget(stats, "watches")), 1);
    json_decref(stats);
    ws_close(w);
    int64_t t0 = now_ms();
    while (watch_count() > 0 && now_ms() - t0 < 1500)
        sleep_ms(10);
    cr_assert_eq(watch_count(), 0, "the watch outlived its client by %lld ms",
                 (long long)(now_ms() - t0));

    /* A raw client that vanishes without reading anything. */
    int fd = raw_watch("/api/v1/namespaces/default/configmaps?watch=true", 0);
    for (int i = 0; i < 100 && watch_count() < 1; i++)
        sleep_ms(10);
    cr_assert_eq(watch_count(), 1);
    close(fd);
    t0 = now_ms();
    while (watch_count() > 0 && now_ms() - t0 < 1500)
        sleep_ms(10);
    cr_assert_eq(watch_count(), 0);
}

/* fakeapi_watches_into lists what fakeapi_watches does, in the caller's
 * buffer: grown when the watches outnumber it, reused when they do not. */
Test(watch, watches_into_a_kept_buffer)
{
    fakeapi_watch_info *buf = NULL;
    size_t cap = 0, n = 9;
    cr_assert_eq(fakeapi_watches_into(srv, &buf, &cap, &n), 0);
    cr_assert_eq(n, 0);
    cr_assert_not_null(buf);
    wstream *w[3];
    for (int i = 0; i < 3; i++)
        w[i] = ws_ok(S("/api/v1/namespaces/ns-%d/configmaps?watch=true", i));
    cr_assert_eq(fakeapi_watches_into(srv, &buf, &cap, &n), 0);
    cr_assert_eq(n, 3);
    cr_assert_geq(cap, 3);
    fakeapi_watch_info *info = NULL;
    size_t m = 0;
    cr_assert_eq(fakeapi_watches(srv, &info, &m), 0);
    cr_assert_eq(m, 3);
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(buf[i].id, info[i].id);
        cr_assert_str_eq(buf[i].ns, S("ns-%zu", i), "oldest first");
        cr_assert_str_eq(buf[i].ns, info[i].ns);
        cr_assert_str_eq(buf[i].resource, info[i].resource);
        cr_assert_str_eq(buf[i].kind, "ConfigMap");
        cr_assert_str_eq(buf[i].client, info[i].client);
        cr_assert_eq(buf[i].pending, info[i].pending);
    }
    free(info);
    ws_close(w[1]);
    fakeapi_watch_info *was = buf;
    size_t was_cap = cap;
    int64_t t0 = now_ms();
    do {
        cr_assert_eq(fakeapi_watches_into(srv, &buf, &cap, &n), 0);
    } while (n > 2 && now_ms() - t0 < 1500 && (sleep_ms(10), 1));
    cr_assert_eq(n, 2);
    cr_assert_eq(buf, was, "fewer watches fit the same buffer");
    cr_assert_eq(cap, was_cap);
    cr_assert_str_eq(buf[0].ns, "ns-0");
    cr_assert_str_eq(buf[1].ns, "ns-2");
    ws_close(w[0]);
    ws_close(w[2]);
    free(buf);
}

Test(watch_opts, stop_with_open_watches_is_prompt)
{
    start(NULL);
    wstream *w[3];
    for (int i = 0; i < 3; i++)
        w[i] = ws_ok(S("/api/v1/namespaces/default/configmaps?watch=true%s",
                       i == 2 ? "&allowWatchBookmarks=true" : ""));
    cr_assert_eq(watch_count(), 3);
    int64_t t0 = now_ms();
    fakeapi_stop(srv);
    srv = NULL;
    int64_t took = now_ms() - t0;
    cr_assert_lt(took, 10000, "fakeapi_stop took %lld ms with open watches", (long long)took);
    for (int i = 0; i < 3; i++) {
        cr_assert(ws_wait_done(w[i], 1000), "stream %d still open after stop", i);
        ws_close(w[i]);
    }
}

/* ---- hold and release ----------------------------------------------------- */

Test(watch_opts, hold_and_release)
{
    fakeapi_options o = {.seed = 1, .hold_new_watches = true};
    start(&o);
    mk_ns("hold");
    wstream *w =
        ws_ok(S("/api/v1/namespaces/hold/configmaps?watch=true&resourceVersion=%llu", rev()));
    for (int i = 0; i < 3; i++)
        mk_cm("hold", S("h%d", i), NULL, "0");
    fakeapi_watch_info *info = NULL;
    size_t n = 0;
    cr_assert_eq(fakeapi_watches(srv, &info, &n), 0);
    cr_assert_eq(n, 1);
    cr_assert(info[0].held);
    cr_assert_eq(info[0].pending, 3, "pending %zu", info[0].pending);
    cr_assert_str_eq(info[0].resource, "/configmaps");
    cr_assert_str_eq(info[0].ns, "hold");
    cr_assert_str_eq(info[0].client, "test_watch/1.0");
    uint64_t id = info[0].id;
    free(info);
    expect_quiet(w, 300);

    cr_assert_eq(fakeapi_watch_release(srv, id, 1), 0);
    json_decref(expect_ev(w, "ADDED", "h0"));
    expect_quiet(w, 300);
    cr_assert_eq(fakeapi_watches(srv, &info, &n), 0);
    cr_assert_eq(info[0].pending, 2);
    free(info);

    cr_assert_eq(fakeapi_watch_hold(srv, id, false), 0);
    json_decref(expect_ev(w, "ADDED", "h1"));
    json_decref(expect_ev(w, "ADDED", "h2"));
    mk_cm("hold", "h3", NULL, "0");
    json_decref(expect_ev(w, "ADDED", "h3"));
    cr_assert_eq(fakeapi_watch_hold(srv, 999999, true), FAKEAPI_ERR_NOT_FOUND);
    ws_close(w);
}

/* A held watch past its timeout: the final bookmark and the end are all
 * that is left to release; a write after that is not its business (the
 * client resumes from the bookmark on a new watch), and once the end has
 * gone out the watch is no longer open, however long its connection takes
 * to be freed. Releasing to it then is refused: a driver must never wait for
 * a line that nobody will receive. */
Test(watch_opts, held_watch_past_its_end)
{
    fakeapi_options o = {.seed = 1, .hold_new_watches = true};
    start(&o);
    mk_ns("end");
    wstream *w = ws_ok(S("/api/v1/namespaces/end/configmaps?watch=true&allowWatchBookmarks=true"
                         "&timeoutSeconds=1&resourceVersion=%llu",
                         rev()));
    sleep_ms(1100);
    fakeapi_watch_info *info = NULL;
    size_t n = 0;
    cr_assert_eq(fakeapi_watches(srv, &info, &n), 0);
    cr_assert_eq(n, 1);
    cr_assert_eq(info[0].pending, 2, "the final bookmark and the end: %zu", info[0].pending);
    uint64_t id = info[0].id;
    free(info);
    mk_cm("end", "late", NULL, "0");
    cr_assert_eq(fakeapi_watches(srv, &info, &n), 0);
    cr_assert_eq(n, 1);
    cr_assert_eq(info[0].pending, 2, "a write after the timeout went into the ending watch");
    free(info);
    cr_assert_eq(fakeapi_watch_release(srv, id, 2), 0);
    json_decref(expect_ev(w, "BOOKMARK", NULL));
    cr_assert(ws_wait_done(w, 2000), "the released end did not close the stream");
    cr_assert_eq(fakeapi_watches(srv, &info, &n), 0);
    free(info);
    cr_assert_eq(n, 0, "a watch whose end went out is still listed as open");
    cr_assert_eq(fakeapi_watch_release(srv, id, 1), FAKEAPI_ERR_NOT_FOUND);
    ws_close(w);
}

/* A held watch from a compacted revision is listed with its ERROR and its
 * end, and a driver releases them like any other lines: unlisted, its
 * client would wait for them forever. */
Test(watch_opts, held_expired_watch_is_released)
{
    fakeapi_options o = {.seed = 1, .hold_new_watches = true};
    start(&o);
    mk_ns("exp");
    unsigned long long old = rev();
    mk_cm("exp", "a", NULL, "0");
    mk_cm("exp", "b", NULL, "0");
    cr_assert_eq(fakeapi_compact(srv, 0), 0);
    wstream *w = ws_ok(S("/api/v1/namespaces/exp/configmaps?watch=true&resourceVersion=%llu", old));
    fakeapi_watch_info *info = NULL;
    size_t n = 0;
    cr_assert_eq(fakeapi_watches(srv, &info, &n), 0);
    cr_assert_eq(n, 1, "the expired watch is not listed");
    cr_assert_eq(info[0].pending, 2, "its ERROR and its end: %zu", info[0].pending);
    uint64_t id = info[0].id;
    free(info);
    expect_quiet(w, 200);
    cr_assert_eq(fakeapi_watch_release(srv, id, 1), 0);
    json_t *ev = expect_ev(w, "ERROR", NULL);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(ev, "object"), "code")), 410);
    json_decref(ev);
    cr_assert_eq(fakeapi_watch_release(srv, id, 1), 0);
    cr_assert(ws_wait_done(w, 2000), "the released end did not close the stream");
    ws_close(w);
}

/* A held watch with delayed events: an event counts as pending only once
 * its time has come, and its time is the server's next deadline, so a
 * driver moves the clock there instead of releasing a line that cannot go
 * out yet. */
Test(watch_opts, held_watch_counts_delayed_events_when_due)
{
    fakeapi_options o = {.seed = 1, .hold_new_watches = true};
    start(&o);
    mk_ns("late");
    cr_assert_eq(
        fakeapi_fault_add(
            srv,
            &(fakeapi_fault){.verb = "watch", .action = FAKEAPI_FAULT_WATCH_DELAY, .delay_ms = 700},
            NULL, NULL),
        0);
    wstream *w =
        ws_ok(S("/api/v1/namespaces/late/configmaps?watch=true&resourceVersion=%llu", rev()));
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t before = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    mk_cm("late", "slow", NULL, "0");
    fakeapi_watch_info *info = NULL;
    size_t n = 0;
    cr_assert_eq(fakeapi_watches(srv, &info, &n), 0);
    cr_assert_eq(n, 1);
    cr_assert_eq(info[0].pending, 0, "a delayed event counted before its time");
    uint64_t id = info[0].id;
    free(info);
    int64_t next = fakeapi_next_deadline(srv);
    cr_assert_geq(next, before + 700 * 1000000LL);
    cr_assert_lt(next, before + 2000 * 1000000LL, "the delayed event's time is not a deadline");
    sleep_ms(800);
    cr_assert_eq(fakeapi_watches(srv, &info, &n), 0);
    cr_assert_eq(info[0].pending, 1);
    free(info);
    cr_assert_eq(fakeapi_watch_release(srv, id, 1), 0);
    json_decref(expect_ev(w, "ADDED", "slow"));
    ws_close(w);
}

/* Later pages of a paginated list show the state at the first page's revision. */
Test(watch, continue_pages_are_consistent)
{
    mk_ns("pg");
    mk_cm("pg", "a", NULL, "0");
    mk_cm("pg", "b", NULL, "0");
    mk_cm("pg", "c", NULL, "0");
    json_t *l = req(200, "GET", "/api/v1/namespaces/pg/configmaps?limit=1", NULL);
    unsigned long long at = rv_of(l);
    char tok[1024];
    snprintf(tok, sizeof tok, "%s", jstr(l, "metadata.continue"));
    json_decref(l);
    del_cm("pg", "b");
    patch_cm("pg", "c", "{'data':{'v':'new'}}");
    mk_cm("pg", "d", NULL, "0");
    l = req(200, "GET", S("/api/v1/namespaces/pg/configmaps?limit=5&continue=%s", tok), NULL);
    cr_assert_eq(rv_of(l), at, "every page has the first page's resourceVersion");
    json_t *items = jget(l, "items");
    cr_assert_eq(json_array_size(items), 2, "b and c as at %llu", at);
    cr_assert_str_eq(jstr(items, "0.metadata.name"), "b");
    cr_assert_str_eq(jstr(items, "1.metadata.name"), "c");
    cr_assert_str_eq(jstr(items, "1.data.v"), "0");
    json_decref(l);
}
