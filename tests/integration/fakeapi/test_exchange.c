/*
 * test_exchange.c - in-process exchanges (fakeapi_exchange, fakeapi_stream_*):
 * the same answers, watch bytes and trace lines as over HTTP, fault actions
 * in-process (errors, drop, lost responses, truncation, delays on a virtual
 * clock, held delays), and the ends of a stream (timeout, cancel, close,
 * stop, 410).
 *
 * Two servers run side by side on one virtual clock with the same seed: A
 * is asked over HTTP (libcurl), B in-process; the same requests in the same
 * order must get the same bytes.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apitest.h"
#include "fakeapi/fakeapi.h"
#include "httpc.h"

#define SEC 1000000000LL
#define CMS "/api/v1/namespaces/default/configmaps"
#define CM_BODY "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"}}"

static atomic_llong vnow;

static int64_t vclock_now(void *ud)
{
    (void)ud;
    return (int64_t)atomic_load(&vnow);
}

static const fakeapi_clock vclock = {.now_ns = vclock_now};

static fakeapi_server *A, *B; /* A over HTTP, B in-process */

static void start_pair_with(const fakeapi_options *extra)
{
    atomic_store(&vnow, 1700000000LL * SEC);
    fakeapi_options o = extra ? *extra : (fakeapi_options){0};
    o.seed = 4242;
    o.clock = &vclock;
    cr_assert_eq(fakeapi_start(&o, &A), 0);
    o.no_http = true;
    cr_assert_eq(fakeapi_start(&o, &B), 0);
    srv = A; /* apitest's watch client talks to A */
}

static void start_pair(void)
{
    start_pair_with(NULL);
}

static void stop_pair(void)
{
    fakeapi_stop(A);
    fakeapi_stop(B);
    A = B = NULL;
    srv = NULL;
}

static void advance(int64_t ns)
{
    atomic_fetch_add(&vnow, ns);
    if (A)
        fakeapi_clock_advanced(A);
    if (B)
        fakeapi_clock_advanced(B);
}

/* JSON written with single quotes (a static ring of buffers). */
static const char *Q(const char *s)
{
    static _Thread_local char ring[8][8192];
    static _Thread_local int i;
    char *b = ring[i++ % 8];
    snprintf(b, sizeof ring[0], "%s", s);
    for (char *p = b; *p; p++)
        if (*p == '\'')
            *p = '"';
    return b;
}

static void rule(fakeapi_server *s, const char *json)
{
    fakeapi_error err;
    cr_assert_eq(fakeapi_fault_add_json(s, Q(json), &err), 0, "%s", err.message);
}

typedef struct ans {
    long status;
    char *body;
    size_t len;
    char ctype[128];
    int retry_after;
} ans;

static ans over_http(const char *method, const char *target, const char *ctype, const char *body)
{
    httpc_resp r;
    cr_assert_eq(httpc_do(method, S("%s%s", fakeapi_url(A), target), ctype, body, &r), 0,
                 "%s %s: transport error", method, target);
    ans a = {.status = r.status, .body = r.body, .len = r.len};
    snprintf(a.ctype, sizeof a.ctype, "%s", r.ctype);
    a.retry_after = atoi(r.retry_after);
    return a;
}

/* As httpc sends it: a body's type defaults to JSON; curl accepts anything. */
static fakeapi_exchange_req mkreq(const char *method, const char *target, const char *ctype,
                                  const char *body, const char *ua)
{
    return (fakeapi_exchange_req){.method = method,
                                  .target = target,
                                  .content_type = ctype || !body ? ctype : "application/json",
                                  .accept = "*/*",
                                  .user_agent = ua,
                                  .body = body,
                                  .body_len = body ? strlen(body) : 0};
}

static ans in_proc(fakeapi_server *s, const char *method, const char *target, const char *ctype,
                   const char *body, const char *ua)
{
    fakeapi_exchange_req rq = mkreq(method, target, ctype, body, ua);
    fakeapi_exchange_resp rs;
    cr_assert_eq(fakeapi_exchange(s, &rq, &rs), 0);
    cr_assert_null(rs.stream);
    ans a = {.status = rs.status, .len = rs.body_len, .retry_after = rs.retry_after};
    a.body = malloc(rs.body_len + 1);
    memcpy(a.body, rs.body ? rs.body : "", rs.body_len);
    a.body[rs.body_len] = '\0';
    snprintf(a.ctype, sizeof a.ctype, "%s",
             rs.content_type[0] ? rs.content_type : "application/json");
    fakeapi_exchange_resp_free(&rs);
    return a;
}

/* Send to both; assert the same status, type and bytes; returns A's body
 * parsed (new reference, NULL if not JSON). */
static json_t *both(long want, const char *method, const char *target, const char *ctype,
                    const char *body)
{
    ans h = over_http(method, target, ctype, body);
    ans p = in_proc(B, method, target, ctype, body, NULL);
    cr_assert_eq(h.status, want, "%s %s: HTTP %ld: %s", method, target, h.status, h.body);
    cr_assert_eq(p.status, h.status, "%s %s: in-process %ld, HTTP %ld", method, target, p.status,
                 h.status);
    cr_assert_str_eq(p.ctype, h.ctype, "%s %s", method, target);
    cr_assert_eq(p.len, h.len, "%s %s:\n http %s\n proc %s", method, target, h.body, p.body);
    cr_assert_eq(memcmp(p.body, h.body, h.len), 0, "%s %s:\n http %s\n proc %s", method, target,
                 h.body, p.body);
    cr_assert_eq(p.retry_after, h.retry_after);
    json_t *v = json_loads(h.body, 0, NULL);
    free(h.body);
    free(p.body);
    return v;
}

TestSuite(exchange, .init = start_pair, .fini = stop_pair);

Test(exchange, answers_as_http)
{
    json_decref(both(201, "POST", CMS, NULL,
                     Q("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'a',"
                       "'labels':{'app':'web'}},'data':{'k':'1'}}")));
    json_decref(both(201, "POST", CMS, NULL,
                     Q("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'b',"
                       "'labels':{'app':'db'}}}")));
    json_decref(both(201, "POST", CMS, "application/yaml",
                     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: gen-\n"));
    json_decref(both(200, "GET", CMS "/a", NULL, NULL));
    json_decref(both(200, "GET", CMS "?labelSelector=app%3Dweb", NULL, NULL));
    json_decref(
        both(200, "GET", "/api/v1/configmaps?labelSelector=app+in+%28web%2Cdb%29", NULL, NULL));
    json_t *page = both(200, "GET", CMS "?limit=1", NULL, NULL);
    const char *cont = jstr(page, "metadata.continue");
    cr_assert(cont && *cont);
    json_decref(both(200, "GET", S(CMS "?limit=1&continue=%s", enc(cont)), NULL, NULL));
    json_decref(page);
    /* A stale resourceVersion: 409. */
    json_decref(both(409, "PUT", CMS "/a", NULL,
                     Q("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'a',"
                       "'resourceVersion':'1'},'data':{'k':'2'}}")));
    json_decref(
        both(200, "PATCH", CMS "/a", "application/merge-patch+json", Q("{'data':{'m':'merge'}}")));
    json_decref(both(200, "PATCH", CMS "/a", "application/json-patch+json",
                     Q("[{'op':'add','path':'/data/j','value':'json'}]")));
    json_decref(both(200, "PATCH", CMS "/a", "application/strategic-merge-patch+json",
                     Q("{'data':{'s':'strategic'}}")));
    json_decref(both(422, "PATCH", CMS "/a", "application/json-patch+json",
                     Q("[{'op':'test','path':'/data/k','value':'nope'}]")));
    /* Delete with a finalizer: marked, kept. */
    json_decref(both(201, "POST", CMS, NULL,
                     Q("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'fin',"
                       "'finalizers':['example.com/keep']}}")));
    json_decref(both(200, "DELETE", CMS "/fin", NULL, NULL));
    json_decref(both(200, "GET", CMS "/fin", NULL, NULL));
    json_decref(both(200, "DELETE", CMS "/b", NULL, NULL));
    json_decref(both(404, "GET", CMS "/b", NULL, NULL));
    /* The status subresource. */
    json_decref(both(201, "POST", "/apis/apps/v1/namespaces/default/deployments", NULL,
                     Q("{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'web'},"
                       "'spec':{'replicas':2,'selector':{'matchLabels':{'app':'web'}},"
                       "'template':{'metadata':{'labels':{'app':'web'}},'spec':{'containers':"
                       "[{'name':'a','image':'nginx'}]}}}}")));
    json_decref(both(200, "PATCH", "/apis/apps/v1/namespaces/default/deployments/web/status",
                     "application/merge-patch+json", Q("{'status':{'replicas':2}}")));
    json_decref(
        both(200, "GET", "/apis/apps/v1/namespaces/default/deployments/web/status", NULL, NULL));
    /* Discovery. */
    json_decref(both(200, "GET", "/api", NULL, NULL));
    json_decref(both(200, "GET", "/apis", NULL, NULL));
    json_decref(both(200, "GET", "/api/v1", NULL, NULL));
    /* What the front door refuses: bad escapes, NUL, an unread media type. */
    json_decref(both(400, "GET", CMS "/%zz", NULL, NULL));
    json_decref(both(404, "GET", "/api/v1/namespaces/a%00b/configmaps", NULL, NULL));
    json_decref(both(400, "GET", CMS "?labelSelector=%zz", NULL, NULL));
    json_decref(both(415, "POST", CMS, "text/plain", "x"));
    json_decref(both(404, "GET", "/no/such/path", NULL, NULL));
    /* Both stores hold the same objects. */
    json_t *oa = NULL, *ob = NULL;
    cr_assert_eq(fakeapi_objects(A, &oa, NULL), 0);
    cr_assert_eq(fakeapi_objects(B, &ob, NULL), 0);
    cr_assert(json_equal(oa, ob));
    json_decref(oa);
    json_decref(ob);
}

Test(exchange, bad_arguments)
{
    fakeapi_exchange_resp rs;
    fakeapi_exchange_req rq = {.method = "GET"};
    cr_assert_eq(fakeapi_exchange(B, &rq, &rs), FAKEAPI_ERR_INVALID);
    cr_assert_eq(rs.status, 0);
    cr_assert_null(rs.body);
    rq.target = "/api";
    cr_assert_eq(fakeapi_exchange(NULL, &rq, &rs), FAKEAPI_ERR_INVALID);
    cr_assert_eq(fakeapi_exchange(B, NULL, &rs), FAKEAPI_ERR_INVALID);
    cr_assert_eq(fakeapi_exchange(B, &rq, NULL), FAKEAPI_ERR_INVALID);
    rq.body_len = 3; /* a length without a body */
    cr_assert_eq(fakeapi_exchange(B, &rq, &rs), FAKEAPI_ERR_INVALID);
    fakeapi_exchange_resp_free(NULL);
    fakeapi_stream_free(NULL);
    fakeapi_stream_cancel(NULL);
    char buf[4];
    cr_assert_eq(fakeapi_stream_read(NULL, buf, sizeof buf), -1);
}

/* ---- faults in-process ------------------------------------------------------ */

static ans get_b(const char *name)
{
    return in_proc(B, "GET", S(CMS "/%s", name), NULL, NULL, NULL);
}

static void mk_b(const char *name)
{
    ans a = in_proc(B, "POST", CMS, NULL,
                    Q(S("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'%s'},"
                        "'data':{'payload':'0123456789012345678901234567890123456789'}}",
                        name)),
                    NULL);
    cr_assert_eq(a.status, 201, "%s", a.body);
    free(a.body);
}

Test(exchange, fault_errors_with_retry_after)
{
    rule(B, "{'match':{'name':'e409'},'action':{'error':{'status':409}}}");
    rule(B, "{'match':{'name':'e500'},'action':{'error':{'status':500,'retryAfterSeconds':3}}}");
    ans a = get_b("e409");
    cr_assert_eq(a.status, 409);
    json_t *st = json_loads(a.body, 0, NULL);
    cr_assert_str_eq(jstr(st, "kind"), "Status");
    cr_assert_str_eq(jstr(st, "reason"), "Conflict");
    cr_assert_str_eq(jstr(st, "message"), "injected fault");
    cr_assert_eq(a.retry_after, 0);
    json_decref(st);
    free(a.body);
    a = get_b("e500");
    cr_assert_eq(a.status, 500);
    cr_assert_eq(a.retry_after, 3);
    free(a.body);
}

Test(exchange, drop_and_lost_response)
{
    rule(B, "{'match':{'verb':'create','agent':'dropper'},'action':{'drop':true}}");
    rule(B, "{'match':{'verb':'create','agent':'loser'},'action':{'loseResponse':true}}");
    fakeapi_exchange_req rq = mkreq("POST", CMS, NULL, S(CM_BODY, "dropped"), "dropper");
    fakeapi_exchange_resp rs;
    cr_assert_eq(fakeapi_exchange(B, &rq, &rs), 0);
    cr_assert_eq(rs.status, 0);
    cr_assert_null(rs.body);
    fakeapi_exchange_resp_free(&rs);
    ans a = get_b("dropped");
    cr_assert_eq(a.status, 404, "a dropped create is not applied");
    free(a.body);
    rq = mkreq("POST", CMS, NULL, S(CM_BODY, "lost"), "loser");
    cr_assert_eq(fakeapi_exchange(B, &rq, &rs), 0);
    cr_assert_eq(rs.status, 0);
    cr_assert_null(rs.body);
    fakeapi_exchange_resp_free(&rs);
    a = get_b("lost");
    cr_assert_eq(a.status, 200, "a lost response's write is applied");
    free(a.body);
}

Test(exchange, truncated_answer)
{
    mk_b("big");
    ans full = get_b("big");
    cr_assert_eq(full.status, 200);
    rule(B, "{'match':{'verb':'get','name':'big'},'action':{'truncate':true}}");
    fakeapi_exchange_req rq = mkreq("GET", CMS "/big", NULL, NULL, NULL);
    fakeapi_exchange_resp rs;
    cr_assert_eq(fakeapi_exchange(B, &rq, &rs), 0);
    cr_assert_eq(rs.status, 200);
    cr_assert(rs.truncated);
    cr_assert_eq(rs.body_len, full.len / 2);
    cr_assert_eq(memcmp(rs.body, full.body, rs.body_len), 0);
    fakeapi_exchange_resp_free(&rs);
    free(full.body);
}

typedef struct call {
    fakeapi_server *s;
    fakeapi_exchange_req rq;
    fakeapi_exchange_resp rs;
    atomic_bool done;
    pthread_t th;
} call;

static void *call_main(void *ud)
{
    call *c = ud;
    cr_assert_eq(fakeapi_exchange(c->s, &c->rq, &c->rs), 0);
    atomic_store(&c->done, true);
    return NULL;
}

static void call_start(call *c, fakeapi_server *s, fakeapi_exchange_req rq)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    c->rq = rq;
    cr_assert_eq(pthread_create(&c->th, NULL, call_main, c), 0);
}

static void call_join(call *c)
{
    pthread_join(c->th, NULL);
}

/* Wait up to ms of real time for flag. */
static bool wait_flag(atomic_bool *flag, int ms)
{
    for (int i = 0; i < ms && !atomic_load(flag); i++)
        usleep(1000);
    return atomic_load(flag);
}

Test(exchange, delay_waits_for_the_clock)
{
    mk_b("slow");
    rule(B, "{'match':{'verb':'get','name':'slow'},'action':{'delay':'5s'}}");
    call c;
    call_start(&c, B, mkreq("GET", CMS "/slow", NULL, NULL, NULL));
    cr_assert_not(wait_flag(&c.done, 300), "a delay ends on the server clock, not before");
    cr_assert_neq(fakeapi_next_deadline(B), INT64_MAX, "the delay is a deadline");
    advance(4 * SEC);
    cr_assert_not(wait_flag(&c.done, 200));
    advance(1 * SEC);
    cr_assert(wait_flag(&c.done, 5000), "the moved clock ends the delay");
    call_join(&c);
    cr_assert_eq(c.rs.status, 200);
    fakeapi_exchange_resp_free(&c.rs);
}

static atomic_ullong held_id;
static pthread_t held_thread;
static atomic_bool held_seen;

static void note_held(void *ud, uint64_t id, int64_t due)
{
    (void)ud, (void)due;
    held_thread = pthread_self();
    atomic_store(&held_id, id);
    atomic_store(&held_seen, true);
}

static void start_held(void)
{
    atomic_store(&held_id, 0);
    atomic_store(&held_seen, false);
    start_pair_with(&(fakeapi_options){.on_held = note_held});
}

TestSuite(exchange_held, .init = start_held, .fini = stop_pair);

Test(exchange_held, released_then_answered)
{
    mk_b("slow");
    rule(B, "{'match':{'verb':'get','name':'slow'},'action':{'delay':'10m'}}");
    call c;
    call_start(&c, B, mkreq("GET", CMS "/slow", NULL, NULL, NULL));
    cr_assert(wait_flag(&held_seen, 5000), "on_held is called");
    cr_assert(pthread_equal(held_thread, c.th), "on the caller's own thread");
    advance(3600 * SEC);
    cr_assert_not(wait_flag(&c.done, 300), "held: the clock does not end it");
    cr_assert_eq(fakeapi_request_release(B, atomic_load(&held_id)), 0);
    cr_assert(wait_flag(&c.done, 5000));
    call_join(&c);
    cr_assert_eq(c.rs.status, 200);
    fakeapi_exchange_resp_free(&c.rs);
    cr_assert_eq(fakeapi_request_release(B, atomic_load(&held_id)), FAKEAPI_ERR_NOT_FOUND);
}

Test(exchange_held, dropped_never_applied)
{
    rule(B, "{'match':{'verb':'create','agent':'holder'},'action':{'delay':'1s'}}");
    call c;
    call_start(&c, B,
               mkreq("POST", CMS, NULL,
                     Q("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'held'}}"),
                     "holder"));
    cr_assert(wait_flag(&held_seen, 5000));
    cr_assert_not(wait_flag(&c.done, 200));
    cr_assert_eq(fakeapi_request_drop(B, atomic_load(&held_id)), 0);
    cr_assert(wait_flag(&c.done, 5000));
    call_join(&c);
    cr_assert_eq(c.rs.status, 0, "dropped: unanswered");
    fakeapi_exchange_resp_free(&c.rs);
    ans a = get_b("held");
    cr_assert_eq(a.status, 404, "and never applied");
    free(a.body);
}

/* A held request still waiting when the server stops is woken, not left. */
Test(exchange_held, stop_wakes_a_held_call)
{
    mk_b("slow");
    rule(B, "{'match':{'verb':'get','name':'slow'},'action':{'delay':'1s'}}");
    call c;
    call_start(&c, B, mkreq("GET", CMS "/slow", NULL, NULL, NULL));
    cr_assert(wait_flag(&held_seen, 5000));
    fakeapi_stop(B);
    B = NULL;
    cr_assert(atomic_load(&c.done), "fakeapi_stop returns after the call");
    call_join(&c);
    fakeapi_exchange_resp_free(&c.rs);
}

/* ---- watch streams ------------------------------------------------------------ */

typedef struct lines {
    fakeapi_stream *s;
    char part[65536];
    size_t plen;
    ssize_t last; /* the last read's result */
} lines;

static fakeapi_stream *watch_b(const char *target, const char *ua)
{
    fakeapi_exchange_req rq = mkreq("GET", target, NULL, NULL, ua);
    fakeapi_exchange_resp rs;
    cr_assert_eq(fakeapi_exchange(B, &rq, &rs), 0);
    cr_assert_eq(rs.status, 200, "watch %s: %d %.*s", target, rs.status, (int)rs.body_len,
                 rs.body ? rs.body : "");
    cr_assert_not_null(rs.stream);
    cr_assert_null(rs.body);
    fakeapi_stream *s = rs.stream;
    rs.stream = NULL;
    fakeapi_exchange_resp_free(&rs);
    return s;
}

/* The next complete line (malloc'ed, without '\n'), reading as needed;
 * NULL when the stream ends (l->last 0 or -1). Blocks. */
static char *next_line(lines *l)
{
    for (;;) {
        char *nl = memchr(l->part, '\n', l->plen);
        if (nl) {
            size_t n = (size_t)(nl - l->part);
            char *line = strndup(l->part, n);
            memmove(l->part, nl + 1, l->plen - n - 1);
            l->plen -= n + 1;
            return line;
        }
        cr_assert_lt(l->plen, sizeof l->part);
        l->last = fakeapi_stream_read(l->s, l->part + l->plen, sizeof l->part - l->plen);
        if (l->last <= 0)
            return NULL;
        l->plen += (size_t)l->last;
    }
}

static void create_both(const char *name)
{
    json_decref(
        both(201, "POST", CMS, NULL,
             Q(S("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'%s'}}", name))));
}

/* The same line from both streams. */
static void same_line(wstream *h, lines *p)
{
    char *hl = ws_line(h, 5000);
    cr_assert_not_null(hl, "HTTP watch: no line");
    char *pl = next_line(p);
    cr_assert_not_null(pl, "in-process watch ended (%zd)", p->last);
    cr_assert_str_eq(pl, hl);
    free(hl);
    free(pl);
}

Test(exchange, watch_bytes_as_http)
{
    create_both("before");
    const char *t = CMS "?watch=true&allowWatchBookmarks=true&timeoutSeconds=150";
    wstream *h = ws_start_ok(t, "watcher", 5000);
    lines p = {.s = watch_b(t, "watcher")};
    same_line(h, &p); /* ADDED before */
    create_both("one");
    same_line(h, &p);
    json_decref(
        both(200, "PATCH", CMS "/one", "application/merge-patch+json", Q("{'data':{'x':'y'}}")));
    same_line(h, &p);
    json_decref(both(200, "DELETE", CMS "/one", NULL, NULL));
    same_line(h, &p);
    /* A bookmark after the interval, on the server clock. */
    advance(61 * SEC);
    same_line(h, &p);
    /* timeoutSeconds ends both, with the same last lines. */
    advance(100 * SEC);
    for (;;) {
        char *hl = ws_line(h, 5000);
        char *pl = next_line(&p);
        cr_assert_str_eq(pl ? pl : "(end)", hl ? hl : "(end)");
        free(hl);
        free(pl);
        if (!pl)
            break;
    }
    cr_assert(ws_wait_done(h, 5000));
    cr_assert_eq(p.last, 0, "the timeout ends the stream");
    char buf[16];
    cr_assert_eq(fakeapi_stream_read(p.s, buf, sizeof buf), 0, "and it stays ended");
    fakeapi_stream_free(p.s);
    ws_close(h);
    size_t n = 9;
    fakeapi_watch_info *wi = NULL;
    cr_assert_eq(fakeapi_watches(B, &wi, &n), 0);
    cr_assert_eq(n, 0);
    free(wi);
}

Test(exchange, watch_bookmark_is_a_bookmark)
{
    lines p = {.s = watch_b(CMS "?watch=true&allowWatchBookmarks=true", "bm")};
    advance(61 * SEC);
    char *l = next_line(&p);
    cr_assert_not_null(l);
    json_t *ev = json_loads(l, 0, NULL);
    cr_assert_str_eq(jstr(ev, "type"), "BOOKMARK", "%s", l);
    json_decref(ev);
    free(l);
    fakeapi_stream_free(p.s);
}

Test(exchange, watch_expired_as_http)
{
    create_both("x1");
    create_both("x2");
    cr_assert_eq(fakeapi_compact(A, 0), 0);
    cr_assert_eq(fakeapi_compact(B, 0), 0);
    const char *t = CMS "?watch=true&resourceVersion=2";
    wstream *h = ws_start_ok(t, "old", 5000);
    lines p = {.s = watch_b(t, "old")};
    char *hl = ws_line(h, 5000);
    char *pl = next_line(&p);
    cr_assert_not_null(hl);
    cr_assert_not_null(pl);
    cr_assert_str_eq(pl, hl);
    json_t *ev = json_loads(pl, 0, NULL);
    cr_assert_str_eq(jstr(ev, "type"), "ERROR");
    cr_assert_eq(jint(ev, "object.code"), 410);
    cr_assert_str_eq(jstr(ev, "object.reason"), "Expired");
    json_decref(ev);
    free(hl);
    free(pl);
    cr_assert_null(next_line(&p));
    cr_assert_eq(p.last, 0);
    fakeapi_stream_free(p.s);
    ws_close(h);
}

static size_t watch_count(fakeapi_server *s)
{
    fakeapi_watch_info *wi = NULL;
    size_t n = 0;
    cr_assert_eq(fakeapi_watches(s, &wi, &n), 0);
    free(wi);
    return n;
}

typedef struct reader {
    fakeapi_stream *s;
    pthread_t th;
    atomic_bool done;
    ssize_t rc;
    char buf[4096];
} reader;

static void *reader_main(void *ud)
{
    reader *r = ud;
    ssize_t n;
    while ((n = fakeapi_stream_read(r->s, r->buf, sizeof r->buf)) > 0)
        ;
    r->rc = n;
    atomic_store(&r->done, true);
    return NULL;
}

static void reader_start(reader *r, fakeapi_stream *s)
{
    memset(r, 0, sizeof *r);
    r->s = s;
    cr_assert_eq(pthread_create(&r->th, NULL, reader_main, r), 0);
}

Test(exchange, cancel_unblocks_a_blocked_read)
{
    reader r;
    reader_start(&r, watch_b(CMS "?watch=true", "canceller"));
    cr_assert_not(wait_flag(&r.done, 200), "nothing to read: it blocks");
    cr_assert_eq(watch_count(B), 1);
    fakeapi_stream_cancel(r.s);
    cr_assert_eq(watch_count(B), 0, "a hung-up watch is not listed");
    cr_assert(wait_flag(&r.done, 5000), "the read returns");
    pthread_join(r.th, NULL);
    cr_assert_eq(r.rc, -1);
    cr_assert_eq(fakeapi_stream_read(r.s, r.buf, sizeof r.buf), -1);
    fakeapi_stream_free(r.s);
    /* Cancelled before any read: freed at once. */
    fakeapi_stream *s = watch_b(CMS "?watch=true", "canceller");
    cr_assert_eq(watch_count(B), 1);
    fakeapi_stream_cancel(s);
    cr_assert_eq(watch_count(B), 0);
    fakeapi_stream_free(s);
    /* Freed without a cancel: hung up too. */
    s = watch_b(CMS "?watch=true", "freed");
    fakeapi_stream_free(s);
    cr_assert_eq(watch_count(B), 0);
}

Test(exchange, close_watches_ends_the_stream)
{
    reader r;
    reader_start(&r, watch_b(CMS "?watch=true", "partitioned/pods"));
    fakeapi_stream *other = watch_b(CMS "?watch=true", "other");
    cr_assert_not(wait_flag(&r.done, 200));
    cr_assert_eq(fakeapi_close_watches(B, "partitioned"), 1);
    cr_assert(wait_flag(&r.done, 5000));
    pthread_join(r.th, NULL);
    cr_assert_eq(r.rc, 0, "a closed stream ends (0)");
    fakeapi_stream_free(r.s);
    cr_assert_eq(watch_count(B), 1, "the other client's watch stays");
    fakeapi_stream_free(other);
}

Test(exchange, stop_ends_open_streams)
{
    reader r;
    reader_start(&r, watch_b(CMS "?watch=true", "stopped"));
    fakeapi_stream *unread = watch_b(CMS "?watch=true", "stopped");
    cr_assert_not(wait_flag(&r.done, 200));
    fakeapi_stop(B);
    B = NULL;
    cr_assert(wait_flag(&r.done, 5000), "a blocked read returns at stop");
    pthread_join(r.th, NULL);
    cr_assert_eq(r.rc, 0);
    char buf[8];
    cr_assert_eq(fakeapi_stream_read(unread, buf, sizeof buf), 0);
    fakeapi_stream_cancel(unread);
    /* Freed after the server has gone. */
    fakeapi_stream_free(r.s);
    fakeapi_stream_free(unread);
}

/* Many callers at once, writes and reads mixed, against one watch. */
typedef struct worker {
    pthread_t th;
    int id;
} worker;

static void *worker_main(void *ud)
{
    worker *w = ud;
    for (int i = 0; i < 20; i++) {
        char body[200];
        snprintf(
            body, sizeof body,
            "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"w%d-%d\"}}",
            w->id, i);
        fakeapi_exchange_req rq = mkreq("POST", CMS, NULL, body, S("worker-%d", w->id));
        fakeapi_exchange_resp rs;
        if (fakeapi_exchange(B, &rq, &rs) != 0 || rs.status != 201)
            abort();
        fakeapi_exchange_resp_free(&rs);
        rq = mkreq("GET", CMS, NULL, NULL, NULL);
        if (fakeapi_exchange(B, &rq, &rs) != 0 || rs.status != 200)
            abort();
        fakeapi_exchange_resp_free(&rs);
    }
    return NULL;
}

Test(exchange, concurrent_callers)
{
    lines p = {.s = watch_b(CMS "?watch=true", "all")};
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i].id = i;
        cr_assert_eq(pthread_create(&w[i].th, NULL, worker_main, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(w[i].th, NULL);
    for (int i = 0; i < 80; i++) {
        char *l = next_line(&p);
        cr_assert_not_null(l, "event %d", i);
        cr_assert(strstr(l, "\"ADDED\""), "%s", l);
        free(l);
    }
    fakeapi_stream_free(p.s);
}

/* ---- the trace ------------------------------------------------------------------ */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strdup(buf);
}

/* Deterministic runs hold watches (scenarios do): an event goes out, and is
 * traced, only when released, not at a moment two threads race for. */
static void start_held_watches(void)
{
    start_pair_with(&(fakeapi_options){.hold_new_watches = true});
}

TestSuite(exchange_trace, .init = start_held_watches, .fini = stop_pair);

static uint64_t only_watch(fakeapi_server *s)
{
    fakeapi_watch_info *wi = NULL;
    size_t n = 0;
    cr_assert_eq(fakeapi_watches(s, &wi, &n), 0);
    cr_assert_eq(n, 1);
    uint64_t id = wi[0].id;
    free(wi);
    return id;
}

/* Release one event on both servers and see the same line on both. */
static void release_line(wstream *h, lines *p)
{
    cr_assert_eq(fakeapi_watch_release(A, only_watch(A), 1), 0);
    cr_assert_eq(fakeapi_watch_release(B, only_watch(B), 1), 0);
    same_line(h, p);
}

Test(exchange_trace, trace_as_http)
{
    char ta[] = "/tmp/exchange-trace-a-XXXXXX", tb[] = "/tmp/exchange-trace-b-XXXXXX";
    int fa = mkstemp(ta), fb = mkstemp(tb);
    cr_assert(fa >= 0 && fb >= 0);
    close(fa);
    close(fb);
    cr_assert_eq(fakeapi_trace_open(A, ta, NULL), 0);
    cr_assert_eq(fakeapi_trace_open(B, tb, NULL), 0);
    rule(A, "{'match':{'verb':'get','name':'faulty'},'action':{'error':{'status':503}}}");
    rule(B, "{'match':{'verb':'get','name':'faulty'},'action':{'error':{'status':503}}}");
    rule(A, "{'match':{'verb':'get','name':'half'},'action':{'truncate':true}}");
    rule(B, "{'match':{'verb':'get','name':'half'},'action':{'truncate':true}}");
    const char *t = CMS "?watch=true";
    wstream *h = ws_start_ok(t, "tracer", 5000);
    lines p = {.s = watch_b(t, "tracer")};
    create_both("traced");
    release_line(h, &p);
    json_decref(both(200, "GET", CMS "/traced", NULL, NULL));
    json_decref(both(404, "GET", CMS "/missing", NULL, NULL));
    json_decref(both(503, "GET", CMS "/faulty", NULL, NULL));
    json_decref(both(409, "POST", CMS, NULL,
                     Q("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'traced'}}")));
    json_decref(
        both(200, "PATCH", CMS "/traced", "application/merge-patch+json", Q("{'data':{'a':'b'}}")));
    release_line(h, &p);
    /* A truncated answer: traced with its status. */
    create_both("half");
    release_line(h, &p);
    httpc_resp r;
    httpc_do("GET", S("%s%s", fakeapi_url(A), CMS "/half"), NULL, NULL, &r);
    httpc_resp_free(&r);
    ans x = in_proc(B, "GET", CMS "/half", NULL, NULL, NULL);
    free(x.body);
    json_decref(both(200, "DELETE", CMS "/traced", NULL, NULL));
    release_line(h, &p);
    fakeapi_stream_cancel(p.s);
    fakeapi_stream_free(p.s);
    ws_close(h);
    cr_assert_eq(fakeapi_trace_open(A, NULL, NULL), 0);
    cr_assert_eq(fakeapi_trace_open(B, NULL, NULL), 0);
    char *a = slurp(ta), *b = slurp(tb);
    cr_assert_gt(strlen(a), 200, "%s", a);
    cr_assert(strstr(a, "\"kind\":\"fault\""), "%s", a);
    cr_assert(strstr(a, "\"kind\":\"event\""), "%s", a);
    cr_assert_str_eq(b, a);
    free(a);
    free(b);
    unlink(ta);
    unlink(tb);
}

/* The audit log records an in-process request as the front end does, with
 * no source address. */
Test(exchange, recorded_without_source_ip)
{
    char path[] = "/tmp/exchange-record-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(fakeapi_record_open(B, path, NULL, NULL), 0);
    mk_b("audited");
    cr_assert_eq(fakeapi_record_open(B, NULL, NULL, NULL), 0);
    char *text = slurp(path);
    json_t *ev = json_loads(text, JSON_DISABLE_EOF_CHECK, NULL);
    cr_assert_not_null(ev, "%s", text);
    cr_assert_str_eq(jstr(ev, "kind"), "Event");
    cr_assert_str_eq(jstr(ev, "verb"), "create");
    cr_assert_str_eq(jstr(ev, "objectRef.name"), "audited");
    cr_assert_eq(jint(ev, "responseStatus.code"), 201);
    cr_assert_null(json_object_get(ev, "sourceIPs"));
    json_decref(ev);
    free(text);
    unlink(path);
}

/* Cancels and a stop landing while events flow: every read returns, no
 * resume reaches a freed stream (run under ASan). */
static void *writer_main(void *ud)
{
    atomic_bool *stop = ud;
    for (int i = 0; !atomic_load(stop); i++) {
        char body[200];
        snprintf(body, sizeof body, CM_BODY, S("churn-%d", i));
        fakeapi_exchange_req rq = mkreq("POST", CMS, NULL, body, "writer");
        fakeapi_exchange_resp rs;
        if (fakeapi_exchange(B, &rq, &rs) != 0)
            abort();
        fakeapi_exchange_resp_free(&rs);
    }
    return NULL;
}

Test(exchange, cancel_and_stop_while_events_flow)
{
    atomic_bool stop = false;
    pthread_t wt;
    cr_assert_eq(pthread_create(&wt, NULL, writer_main, &stop), 0);
    for (int round = 0; round < 30; round++) {
        reader r;
        reader_start(&r, watch_b(CMS "?watch=true", "churn"));
        usleep((useconds_t)(round % 5) * 1000);
        fakeapi_stream_cancel(r.s);
        cr_assert(wait_flag(&r.done, 5000), "round %d: the read returns", round);
        pthread_join(r.th, NULL);
        cr_assert_eq(r.rc, -1);
        fakeapi_stream_free(r.s);
    }
    reader last[3];
    for (int i = 0; i < 3; i++)
        reader_start(&last[i], watch_b(CMS "?watch=true", "churn"));
    usleep(2000);
    atomic_store(&stop, true);
    pthread_join(wt, NULL);
    fakeapi_stop(B);
    B = NULL;
    for (int i = 0; i < 3; i++) {
        cr_assert(wait_flag(&last[i].done, 5000));
        pthread_join(last[i].th, NULL);
        cr_assert_eq(last[i].rc, 0);
        fakeapi_stream_free(last[i].s);
    }
}

/* fakeapi_request reads its target with the same decoder. */
Test(exchange, request_decodes_as_http)
{
    mk_b("dec");
    int status = 0;
    json_t *out = NULL;
    cr_assert_eq(fakeapi_request(B, "GET", CMS "?fieldSelector=metadata.name%3Ddec", NULL, NULL,
                                 &status, &out),
                 0);
    cr_assert_eq(status, 200);
    cr_assert_eq(json_array_size(json_object_get(out, "items")), 1);
    json_decref(out);
    cr_assert_eq(fakeapi_request(B, "GET", CMS "?labelSelector=%zz", NULL, NULL, &status, &out), 0);
    cr_assert_eq(status, 400);
    cr_assert_str_eq(jstr(out, "reason"), "BadRequest");
    json_decref(out);
    cr_assert_eq(fakeapi_request(B, "GET", CMS "/d%65c", NULL, NULL, &status, NULL), 0);
    cr_assert_eq(status, 200, "the path is decoded too");
}
