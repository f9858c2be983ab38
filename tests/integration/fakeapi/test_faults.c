/*
 * test_faults.c - fault injection seen from the client (docs/faults.md):
 * one test per action (errors with their Status and Retry-After, delays on a
 * virtual clock, dropped and truncated answers, lost responses, compaction,
 * stale views, closed/expired watches, withheld and delayed events), rule
 * matching (verb, subresource, group/resource, namespace, name, User-Agent,
 * bearer token), when rules fire (nth, first, after, probability), hit counts
 * through the C API and /fakeapi/v1/faults, removal, malformed rules, the
 * /metrics text and the trace (identical for the same seed and requests, no
 * Secret data or tokens).
 *
 * Requests go through a small libcurl helper that can set the User-Agent and
 * a bearer token and reports transport errors; watches through a streaming
 * client (one thread per watch, lines handed to the test thread).
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "fakeapi/fakeapi.h"
#define APITEST_OWN_REQUESTS /* requests go through hdo below */
#include "apitest.h"

/* ---- helpers of this file (the shared ones are in tests/support/apitest.h) -- */

/* A virtual clock the tests move by hand. */
static atomic_llong vclock_ns;

static int64_t vclock_now(void *ud)
{
    (void)ud;
    return (int64_t)atomic_load(&vclock_ns);
}

static const fakeapi_clock vclock = {.now_ns = vclock_now};

#define SEC 1000000000LL

static void advance(int64_t ns)
{
    atomic_fetch_add(&vclock_ns, ns);
    fakeapi_clock_advanced(srv);
}

static void setup_vclock(void)
{
    atomic_store(&vclock_ns, 1700000000LL * SEC);
    start(&(fakeapi_options){.seed = 4242, .clock = &vclock});
}

/* One request as a client sees it: the status, the body, the transport. */
typedef struct hres {
    CURLcode rc;
    long status;
    char *body;
    size_t len;
    char retry_after[32];
} hres;

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    hres *r = ud;
    size_t len = sz * n;
    r->body = realloc(r->body, r->len + len + 1);
    memcpy(r->body + r->len, p, len);
    r->len += len;
    r->body[r->len] = '\0';
    return len;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    hres *r = ud;
    size_t len = sz * n;
    if (len > 12 && !strncasecmp(p, "Retry-After:", 12)) {
        const char *v = p + 12;
        while (*v == ' ')
            v++;
        size_t vl = (size_t)(p + len - v);
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
            vl--;
        snprintf(r->retry_after, sizeof r->retry_after, "%.*s", (int)vl, v);
    }
    return len;
}

/*
 * Send method to path as client ua (NULL: "faults-test"), with a bearer
 * token (or NULL) and a body (JSON with single quotes for double quotes, or
 * NULL). ctype NULL means application/json when there is a body.
 */
static hres hdo(const char *method, const char *path, const char *body, const char *ua,
                const char *token, const char *ctype)
{
    hres r = {0};
    CURL *c = curl_easy_init();
    cr_assert_not_null(c);
    char url[4096];
    snprintf(url, sizeof url, "%s%s", fakeapi_url(srv), path);
    char *b = body ? strdup(body) : NULL;
    for (char *p = b; p && *p; p++)
        if (*p == '\'')
            *p = '"';
    struct curl_slist *h = curl_slist_append(NULL, "Expect:");
    if (body)
        h = curl_slist_append(h, S("Content-Type: %s", ctype ? ctype : "application/json"));
    if (token)
        h = curl_slist_append(h, S("Authorization: Bearer %s", token));
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_USERAGENT, ua ? ua : "faults-test");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (b) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, b);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(b));
    }
    r.rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    free(b);
    if (!r.body)
        r.body = calloc(1, 1);
    return r;
}

/* A request as ua that must answer want; returns the parsed body (new ref, may be NULL). */
static json_t *req_as(long want, const char *ua, const char *method, const char *path,
                      const char *body)
{
    hres r = hdo(method, path, body, ua, NULL, NULL);
    cr_assert_eq(r.rc, CURLE_OK, "%s %s: transport error %d (%s)", method, path, r.rc,
                 curl_easy_strerror(r.rc));
    cr_assert_eq(r.status, want, "%s %s: want %ld, got %ld: %.600s", method, path, want, r.status,
                 r.body);
    json_t *v = json_loads(r.body, 0, NULL);
    free(r.body);
    return v;
}

static json_t *req(long want, const char *method, const char *path, const char *body)
{
    return req_as(want, NULL, method, path, body);
}

/* The HTTP status of a request as ua (asserting it was answered). */
static long status_as(const char *ua, const char *method, const char *path)
{
    hres r = hdo(method, path, NULL, ua, NULL, NULL);
    cr_assert_eq(r.rc, CURLE_OK, "%s %s: transport error %d", method, path, r.rc);
    free(r.body);
    return r.status;
}

static unsigned long long rv_of(const json_t *obj)
{
    const char *rv = jstr(obj, "metadata.resourceVersion");
    return rv ? strtoull(rv, NULL, 10) : 0;
}

static void mk_ns(const char *name)
{
    json_decref(req(201, "POST", "/api/v1/namespaces",
                    S("{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'%s'}}", name)));
}

/* Create a ConfigMap {v: val}; returns its resourceVersion. */
static unsigned long long mk_cm(const char *ns, const char *name, const char *val)
{
    json_t *o = req(201, "POST", S("/api/v1/namespaces/%s/configmaps", ns),
                    S("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'%s'},"
                      "'data':{'v':'%s'}}",
                      name, val));
    unsigned long long rv = rv_of(o);
    json_decref(o);
    return rv;
}

static unsigned long long set_cm(const char *ns, const char *name, const char *val)
{
    hres r = hdo("PATCH", S("/api/v1/namespaces/%s/configmaps/%s", ns, name),
                 S("{'data':{'v':'%s'}}", val), NULL, NULL, "application/merge-patch+json");
    cr_assert_eq(r.status, 200, "patch %s: %ld %.300s", name, r.status, r.body);
    json_t *o = json_loads(r.body, 0, NULL);
    free(r.body);
    unsigned long long rv = rv_of(o);
    json_decref(o);
    return rv;
}

/* Add a rule as JSON through the C API (single quotes for double); asserts it took. */
static void add_json(const char *json)
{
    char *b = strdup(json);
    for (char *p = b; *p; p++)
        if (*p == '\'')
            *p = '"';
    fakeapi_error err = {0};
    int rc = fakeapi_fault_add_json(srv, b, &err);
    cr_assert_eq(rc, 0, "fakeapi_fault_add_json(%s): %d %s", b, rc, err.message);
    free(b);
}

/* Add a rule through POST /fakeapi/v1/faults; returns the id it got. */
static uint64_t post_rule(const char *json)
{
    json_t *list = req(201, "POST", "/fakeapi/v1/faults", json);
    cr_assert(json_is_array(list) && json_array_size(list) > 0);
    json_t *last = json_array_get(list, json_array_size(list) - 1);
    uint64_t id = (uint64_t)json_integer_value(json_object_get(last, "id"));
    json_decref(list);
    cr_assert_gt(id, 0);
    return id;
}

static unsigned long fired_of(uint64_t id)
{
    unsigned long m = 0, f = 0;
    cr_assert_eq(fakeapi_fault_hits(srv, id, &m, &f), 0, "rule %llu", (unsigned long long)id);
    return f;
}

/* ---- a streaming watch client --------------------------------------------- */

/* Open a watch on path (query included) as client ua (NULL: "faults-test");
 * asserts 200 promptly. */
static wstream *ws_open(const char *path, const char *ua)
{
    return ws_start_ok(path, ua ? ua : "faults-test", 3000);
}

/* Expect the next event to be type for name (NULL: any name). */
static void expect_ev(wstream *w, const char *type, const char *name)
{
    json_t *ev = ws_next(w, 3000);
    cr_assert_not_null(ev, "no %s event for %s within 3 s", type, name ? name : "(any)");
    cr_assert_str_eq(jstr(ev, "type"), type, "want %s %s, got %s %s", type, name ? name : "",
                     jstr(ev, "type"), jstr(ev, "object.metadata.name"));
    if (name)
        cr_assert_str_eq(jstr(ev, "object.metadata.name"), name);
    json_decref(ev);
}

static void expect_quiet(wstream *w, int ms)
{
    json_t *ev = ws_next(w, ms);
    cr_assert_null(ev, "unexpected event: %s %s", jstr(ev, "type"),
                   jstr(ev, "object.metadata.name"));
}

static char *metrics_text(void);

#define CM(ns) "/api/v1/namespaces/" ns "/configmaps"

TestSuite(faults, .init = setup, .fini = teardown);
TestSuite(faults_vclock, .init = setup_vclock, .fini = teardown);

/* ---- actions: errors ------------------------------------------------------- */

/* An injected error is a proper Status with the code's reason and the message. */
Test(faults, error_codes_answer_a_status)
{
    static const struct {
        int code;
        const char *reason;
    } cases[] = {{409, "Conflict"}, {500, "InternalError"}, {503, "ServiceUnavailable"},
                 {504, "Timeout"},  {403, "Forbidden"},     {404, "NotFound"},
                 {422, "Invalid"},  {502, "InternalError"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int code = cases[i].code;
        post_rule(S("{'match':{'verb':'get','resource':'configmaps','name':'e%d'},"
                    "'action':{'error':{'status':%d}}}",
                    code, code));
        hres r = hdo("GET", S(CM("default") "/e%d", code), NULL, NULL, NULL, NULL);
        cr_assert_eq(r.rc, CURLE_OK);
        cr_assert_eq(r.status, code, "want %d, got %ld", code, r.status);
        json_t *st = json_loads(r.body, 0, NULL);
        cr_assert_str_eq(jstr(st, "kind"), "Status", "%s", r.body);
        cr_assert_str_eq(jstr(st, "apiVersion"), "v1");
        cr_assert_str_eq(jstr(st, "status"), "Failure");
        cr_assert_str_eq(jstr(st, "reason"), cases[i].reason, "%d: %s", code, r.body);
        cr_assert_str_eq(jstr(st, "message"), "injected fault");
        cr_assert_eq(json_integer_value(json_object_get(st, "code")), code);
        cr_assert_str_eq(r.retry_after, "", "no Retry-After on %d", code);
        json_decref(st);
        free(r.body);
    }
    /* The error comes instead of the answer: a real object is hidden too. */
    mk_cm("default", "real", "1");
    post_rule("{'match':{'name':'real'},'action':{'error':{'status':500}}}");
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/real"), 500);
}

Test(faults, error_429_carries_retry_after)
{
    post_rule("{'match':{'name':'busy'},'action':{'error':{'status':429,'retryAfterSeconds':7,"
              "'message':'slow down, please'}}}");
    post_rule("{'match':{'name':'busy1'},'action':{'error':{'status':429}}}");
    hres r = hdo("GET", CM("default") "/busy", NULL, NULL, NULL, NULL);
    cr_assert_eq(r.status, 429);
    cr_assert_str_eq(r.retry_after, "7");
    json_t *st = json_loads(r.body, 0, NULL);
    cr_assert_str_eq(jstr(st, "reason"), "TooManyRequests");
    cr_assert_str_eq(jstr(st, "message"), "slow down, please");
    json_decref(st);
    free(r.body);
    r = hdo("GET", CM("default") "/busy1", NULL, NULL, NULL, NULL);
    cr_assert_eq(r.status, 429);
    cr_assert_str_eq(r.retry_after, "1", "429 defaults to Retry-After: 1");
    free(r.body);
}

Test(faults, error_custom_code_reason_and_message)
{
    post_rule("{'match':{'verb':'create','resource':'configmaps'},'action':{'error':"
              "{'status':507,'reason':'InsufficientStorage','message':'the disk is full'}}}");
    hres r =
        hdo("POST", CM("default"), "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'x'}}",
            NULL, NULL, NULL);
    cr_assert_eq(r.status, 507);
    json_t *st = json_loads(r.body, 0, NULL);
    cr_assert_str_eq(jstr(st, "kind"), "Status");
    cr_assert_str_eq(jstr(st, "reason"), "InsufficientStorage");
    cr_assert_str_eq(jstr(st, "message"), "the disk is full");
    cr_assert_eq(json_integer_value(json_object_get(st, "code")), 507);
    json_decref(st);
    free(r.body);
    /* Nothing was created. */
    json_t *o = NULL;
    cr_assert_eq(fakeapi_get(srv, "v1", "ConfigMap", "default", "x", &o, NULL),
                 FAKEAPI_ERR_NOT_FOUND);
}

/* ---- actions: delay -------------------------------------------------------- */

Test(faults, delay_on_the_real_clock)
{
    mk_cm("default", "slow", "1");
    post_rule("{'match':{'verb':'get','name':'slow'},'action':{'delay':'300ms'}}");
    int64_t t0 = now_ms();
    json_decref(req(200, "GET", CM("default") "/slow", NULL));
    int64_t took = now_ms() - t0;
    cr_assert_geq(took, 290, "a 300 ms delay took %lld ms", (long long)took);
    t0 = now_ms();
    json_decref(req(200, "GET", CM("default"), NULL)); /* lists are not delayed */
    cr_assert_lt(now_ms() - t0, 250);
}

typedef struct bg_req {
    pthread_t th;
    const char *path;
    long status;
    atomic_bool done;
} bg_req;

static void *bg_get(void *ud)
{
    bg_req *b = ud;
    hres r = hdo("GET", b->path, NULL, NULL, NULL, NULL);
    b->status = r.rc == CURLE_OK ? r.status : -1;
    free(r.body);
    atomic_store(&b->done, true);
    return NULL;
}

/* A 10-minute delay on a virtual clock costs no real time: it ends when the
 * clock has moved 10 minutes, not before. */
Test(faults_vclock, delay_follows_the_virtual_clock)
{
    mk_cm("default", "slow", "1");
    uint64_t id = post_rule("{'match':{'verb':'get','name':'slow'},'action':{'delay':'10m'}}");
    int64_t t0 = now_ms();
    bg_req b = {.path = CM("default") "/slow"};
    cr_assert_eq(pthread_create(&b.th, NULL, bg_get, &b), 0);
    for (int i = 0; i < 200 && fired_of(id) == 0; i++)
        sleep_ms(5);
    cr_assert_eq(fired_of(id), 1);
    sleep_ms(150); /* into the wait */
    cr_assert(!atomic_load(&b.done), "the delay ended without the clock moving");
    advance(9 * 60 * SEC);
    sleep_ms(150);
    cr_assert(!atomic_load(&b.done), "the delay ended after 9 of its 10 minutes");
    advance(60 * SEC);
    for (int i = 0; i < 200 && !atomic_load(&b.done); i++)
        sleep_ms(5);
    pthread_join(b.th, NULL);
    cr_assert_eq(b.status, 200);
    int64_t took = now_ms() - t0;
    cr_assert_lt(took, 1000, "a virtual 10-minute delay took %lld ms of real time",
                 (long long)took);
}

/* ---- actions: drop, truncate, lose the response ---------------------------- */

Test(faults, drop_closes_without_an_answer)
{
    mk_cm("default", "gone", "1");
    uint64_t id = post_rule("{'match':{'name':'gone'},'when':{'first':1},'action':{'drop':true}}");
    hres r = hdo("GET", CM("default") "/gone", NULL, NULL, NULL, NULL);
    cr_assert_eq(r.rc, CURLE_GOT_NOTHING, "want an empty reply, got %d (%s), status %ld", r.rc,
                 curl_easy_strerror(r.rc), r.status);
    cr_assert_eq(r.len, 0);
    free(r.body);
    cr_assert_eq(fired_of(id), 1);
    /* The server is fine, and the next try gets through. */
    json_decref(req(200, "GET", CM("default") "/gone", NULL));
}

Test(faults, truncate_sends_part_of_the_body)
{
    char big[4000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    mk_cm("default", "big", big);
    hres full = hdo("GET", CM("default") "/big", NULL, NULL, NULL, NULL);
    cr_assert_eq(full.rc, CURLE_OK);
    post_rule("{'match':{'verb':'get','name':'big'},'action':{'truncate':true}}");
    hres r = hdo("GET", CM("default") "/big", NULL, NULL, NULL, NULL);
    cr_assert_eq(r.rc, CURLE_PARTIAL_FILE, "want a partial transfer, got %d (%s)", r.rc,
                 curl_easy_strerror(r.rc));
    cr_assert_eq(r.status, 200);
    cr_assert_gt(r.len, 0);
    cr_assert_lt(r.len, full.len);
    cr_assert(!memcmp(r.body, full.body, r.len), "the part sent is the start of the answer");
    cr_assert_null(json_loads(r.body, 0, NULL), "a truncated body does not parse");
    free(r.body);
    free(full.body);
}

/* The write is applied, the client never hears: a retry sees AlreadyExists. */
Test(faults, lose_response_leaves_the_object_created)
{
    uint64_t id = post_rule("{'match':{'verb':'create','resource':'configmaps'},"
                            "'when':{'first':1},'action':{'loseResponse':true}}");
    unsigned long long before = rev();
    hres r = hdo("POST", CM("default"),
                 "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'lost'},"
                 "'data':{'v':'1'}}",
                 NULL, NULL, NULL);
    cr_assert_neq(r.rc, CURLE_OK, "the client got an answer: %ld %s", r.status, r.body);
    cr_assert_eq(r.len, 0);
    free(r.body);
    cr_assert_eq(fired_of(id), 1);
    json_t *o = NULL;
    cr_assert_eq(fakeapi_get(srv, "v1", "ConfigMap", "default", "lost", &o, NULL), 0,
                 "the lost create was applied");
    cr_assert_str_eq(jstr(o, "data.v"), "1");
    cr_assert_gt(rv_of(o), before);
    json_decref(o);
    json_t *st = req(409, "POST", CM("default"),
                     "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'lost'}}");
    cr_assert_str_eq(jstr(st, "reason"), "AlreadyExists");
    json_decref(st);
}

/* ---- actions: compaction --------------------------------------------------- */

Test(faults, compact_expires_old_revisions)
{
    unsigned long long rv1 = mk_cm("default", "c", "1");
    set_cm("default", "c", "2");
    /* Before: a watch from rv1 replays the change. */
    wstream *w = ws_open(S(CM("default") "?watch=true&resourceVersion=%llu", rv1), NULL);
    expect_ev(w, "MODIFIED", "c");
    ws_close(w);
    post_rule("{'match':{'verb':'get','name':'trigger'},'action':{'compact':true}}");
    /* The triggering request is answered normally (here: 404). */
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/trigger"), 404);
    w = ws_open(S(CM("default") "?watch=true&resourceVersion=%llu", rv1), NULL);
    json_t *ev = ws_next(w, 3000);
    cr_assert_not_null(ev);
    cr_assert_str_eq(jstr(ev, "type"), "ERROR");
    cr_assert_eq(json_integer_value(jget(ev, "object.code")), 410);
    cr_assert_str_eq(jstr(ev, "object.reason"), "Expired");
    json_decref(ev);
    cr_assert(ws_wait_done(w, 3000), "the expired watch ends");
    ws_close(w);
    json_decref(req(410, "GET",
                    S(CM("default") "?resourceVersion=%llu&resourceVersionMatch=Exact", rv1),
                    NULL));
}

/* ---- actions: stale views -------------------------------------------------- */

/* Writes at known revisions: a=1 (rv1), a=2, b created; returns rv1. */
static unsigned long long stale_fixture(void)
{
    mk_ns("st");
    unsigned long long rv1 = mk_cm("st", "a", "1");
    set_cm("st", "a", "2");
    mk_cm("st", "b", "1");
    return rv1;
}

/* What client ua sees: a's value, whether b exists, the list's names and rv. */
static void expect_view(const char *ua, const char *a_val, bool b_exists, unsigned long long rv)
{
    json_t *a = req_as(200, ua, "GET", "/api/v1/namespaces/st/configmaps/a", NULL);
    cr_assert_str_eq(jstr(a, "data.v"), a_val, "%s sees a=%s", ua, jstr(a, "data.v"));
    json_decref(a);
    cr_assert_eq(status_as(ua, "GET", "/api/v1/namespaces/st/configmaps/b"), b_exists ? 200 : 404,
                 "%s: b %s", ua, b_exists ? "exists" : "does not exist yet");
    json_t *l = req_as(200, ua, "GET", "/api/v1/namespaces/st/configmaps", NULL);
    cr_assert_eq(json_array_size(json_object_get(l, "items")), b_exists ? 2 : 1, "%s: list", ua);
    cr_assert_str_eq(jstr(l, "items.0.data.v"), a_val);
    cr_assert_eq(rv_of(l), rv, "%s: list resourceVersion %llu, want %llu", ua, rv_of(l), rv);
    json_decref(l);
}

Test(faults, stale_revision_serves_the_old_state_to_one_client)
{
    unsigned long long rv1 = stale_fixture();
    unsigned long long now = rev();
    post_rule(S("{'match':{'client':'laggy'},'action':{'stale':{'revision':%llu}}}", rv1));
    expect_view("laggy-controller/1.0", "1", false, rv1);
    expect_view("fresh-client/1.0", "2", true, now);
    /* A new watch of the stale client starts from the old state, then catches up. */
    wstream *w = ws_open("/api/v1/namespaces/st/configmaps?watch=true", "laggy-controller/1.0");
    json_t *ev = ws_next(w, 3000);
    cr_assert_not_null(ev);
    cr_assert_str_eq(jstr(ev, "type"), "ADDED");
    cr_assert_str_eq(jstr(ev, "object.metadata.name"), "a");
    cr_assert_str_eq(jstr(ev, "object.data.v"), "1");
    json_decref(ev);
    expect_ev(w, "MODIFIED", "a");
    expect_ev(w, "ADDED", "b");
    ws_close(w);
}

Test(faults, stale_lag_trails_the_store)
{
    unsigned long long rv1 = stale_fixture(); /* rv1, rv1+1 (a=2), rv1+2 (b) */
    cr_assert_eq(rev(), rv1 + 2);
    post_rule("{'match':{'client':'laggy'},'action':{'stale':{'lag':2}}}");
    expect_view("laggy/1", "1", false, rv1);
    expect_view("fresh/1", "2", true, rv1 + 2);
    /* The lag follows the store: two writes later, the laggy client sees a=2 and b. */
    mk_cm("st", "c", "1");
    mk_cm("st", "d", "1");
    json_t *l = req_as(200, "laggy/1", "GET", "/api/v1/namespaces/st/configmaps", NULL);
    cr_assert_eq(json_array_size(json_object_get(l, "items")), 2);
    cr_assert_str_eq(jstr(l, "items.0.data.v"), "2");
    cr_assert_eq(rv_of(l), rv1 + 2);
    json_decref(l);
}

/* ---- actions: watches ------------------------------------------------------ */

Test(faults, close_watch_after_n_events)
{
    mk_ns("cw");
    post_rule("{'match':{'verb':'watch','resource':'configmaps'},"
              "'action':{'closeWatchAfter':2}}");
    wstream *w =
        ws_open(S("/api/v1/namespaces/cw/configmaps?watch=true&resourceVersion=%llu", rev()), NULL);
    mk_cm("cw", "one", "1");
    mk_cm("cw", "two", "1");
    mk_cm("cw", "three", "1");
    expect_ev(w, "ADDED", "one");
    expect_ev(w, "ADDED", "two");
    cr_assert(ws_wait_done(w, 3000), "the stream ends after 2 events");
    cr_assert_null(ws_next(w, 100), "nothing after the 2nd event");
    cr_assert_eq(w->rc, CURLE_OK, "a clean end of the stream");
    ws_close(w);
    /* Initial events count too. */
    w = ws_open("/api/v1/namespaces/cw/configmaps?watch=true", NULL);
    expect_ev(w, "ADDED", "one");
    expect_ev(w, "ADDED", "three");
    cr_assert(ws_wait_done(w, 3000));
    cr_assert_null(ws_next(w, 100));
    ws_close(w);
}

Test(faults, expire_watch_sends_410)
{
    mk_cm("default", "x", "1");
    post_rule("{'match':{'verb':'watch'},'when':{'first':1},'action':{'expireWatch':true}}");
    wstream *w = ws_open(S(CM("default") "?watch=true&resourceVersion=%llu", rev()), NULL);
    json_t *ev = ws_next(w, 3000);
    cr_assert_not_null(ev);
    cr_assert_str_eq(jstr(ev, "type"), "ERROR");
    cr_assert_str_eq(jstr(ev, "object.kind"), "Status");
    cr_assert_eq(json_integer_value(jget(ev, "object.code")), 410);
    cr_assert_str_eq(jstr(ev, "object.reason"), "Expired");
    json_decref(ev);
    cr_assert(ws_wait_done(w, 3000));
    ws_close(w);
    /* The next watch (first: 1) is normal. */
    w = ws_open(CM("default") "?watch=true", NULL);
    expect_ev(w, "ADDED", "x");
    ws_close(w);
}

/* Unobserved state: client A never hears about x; client B does. */
Test(faults, withhold_hides_one_objects_events_from_one_client)
{
    mk_ns("wh");
    uint64_t id = post_rule("{'match':{'verb':'watch','client':'client-a','namespace':'wh',"
                            "'name':'x'},'action':{'withhold':true}}");
    unsigned long long from = rev();
    wstream *a =
        ws_open(S("/api/v1/namespaces/wh/configmaps?watch=true&resourceVersion=%llu", from),
                "client-a/1.0");
    wstream *b =
        ws_open(S("/api/v1/namespaces/wh/configmaps?watch=true&resourceVersion=%llu", from),
                "client-b/1.0");
    mk_cm("wh", "x", "1");
    mk_cm("wh", "y", "1");
    set_cm("wh", "x", "2");
    json_decref(req(200, "DELETE", "/api/v1/namespaces/wh/configmaps/x", NULL));
    mk_cm("wh", "z", "1");
    expect_ev(b, "ADDED", "x");
    expect_ev(b, "ADDED", "y");
    expect_ev(b, "MODIFIED", "x");
    expect_ev(b, "DELETED", "x");
    expect_ev(b, "ADDED", "z");
    expect_ev(a, "ADDED", "y");
    expect_ev(a, "ADDED", "z");
    expect_quiet(a, 300);
    cr_assert_eq(fired_of(id), 3, "one firing per withheld event");
    /* A's view of the list is unaffected: withholding acts on its watches. */
    json_t *l = req_as(200, "client-a/1.0", "GET", "/api/v1/namespaces/wh/configmaps", NULL);
    cr_assert_eq(json_array_size(json_object_get(l, "items")), 2);
    json_decref(l);
    ws_close(a);
    ws_close(b);
}

/* Events reach the delayed client only once the (virtual) clock has moved. */
Test(faults_vclock, delay_events_follows_the_clock)
{
    post_rule("{'match':{'verb':'watch','client':'late'},'action':{'delayEvents':'30s'}}");
    unsigned long long from = rev();
    wstream *late = ws_open(S(CM("default") "?watch=true&resourceVersion=%llu", from), "late/1");
    wstream *prompt = ws_open(S(CM("default") "?watch=true&resourceVersion=%llu", from), "ok/1");
    mk_cm("default", "d1", "1");
    expect_ev(prompt, "ADDED", "d1");
    expect_quiet(late, 400);
    advance(29 * SEC);
    expect_quiet(late, 400);
    advance(1 * SEC);
    expect_ev(late, "ADDED", "d1");
    /* Each event is delayed from its own write. */
    mk_cm("default", "d2", "1");
    expect_ev(prompt, "ADDED", "d2");
    expect_quiet(late, 300);
    advance(30 * SEC);
    expect_ev(late, "ADDED", "d2");
    ws_close(late);
    ws_close(prompt);
}

/* ---- matching -------------------------------------------------------------- */

Test(faults, match_by_verb)
{
    mk_cm("default", "m", "1");
    post_rule("{'match':{'verb':'update'},'action':{'error':{'status':409}}}");
    json_t *o = req(200, "GET", CM("default") "/m", NULL);
    char *body = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    hres r = hdo("PUT", CM("default") "/m", body, NULL, NULL, NULL);
    cr_assert_eq(r.status, 409);
    free(r.body);
    free(body);
    cr_assert_eq(status_as(NULL, "GET", CM("default")), 200);
    cr_assert_eq(status_as(NULL, "DELETE", CM("default") "/m"), 200);
}

Test(faults, match_by_subresource)
{
    json_decref(req(201, "POST", "/api/v1/namespaces/default/pods",
                    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
                    "'spec':{'containers':[{'name':'c','image':'i'}]}}"));
    uint64_t sub =
        post_rule("{'match':{'subresource':'status'},'action':{'error':{'status':503}}}");
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/default/pods/p/status"), 503);
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/default/pods/p"), 200);
    cr_assert_eq(fakeapi_fault_remove(srv, sub), 0);
    /* "" is the main resource only. */
    post_rule("{'match':{'subresource':'','resource':'pods'},'action':{'error':{'status':503}}}");
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/default/pods/p/status"), 200);
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/default/pods/p"), 503);
}

Test(faults, match_by_group_and_resource)
{
    post_rule("{'match':{'group':'apps','resource':'deployments'},"
              "'action':{'error':{'status':500}}}");
    cr_assert_eq(status_as(NULL, "GET", "/apis/apps/v1/namespaces/default/deployments"), 500);
    cr_assert_eq(status_as(NULL, "GET", "/apis/apps/v1/namespaces/default/replicasets"), 200);
    cr_assert_eq(status_as(NULL, "GET", CM("default")), 200);
    post_rule("{'match':{'group':'','resource':'secrets'},'action':{'error':{'status':500}}}");
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/default/secrets"), 500);
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/default/pods"), 200);
}

Test(faults, match_by_namespace_and_name)
{
    mk_ns("ns1");
    mk_ns("ns2");
    post_rule("{'match':{'namespace':'ns1','name':'n'},'action':{'error':{'status':500}}}");
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/ns1/configmaps/n"), 500);
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/ns2/configmaps/n"), 404);
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/ns1/configmaps/other"), 404);
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/ns1/configmaps"), 200);
}

Test(faults, match_by_user_agent_substring)
{
    post_rule("{'match':{'client':'kubectl'},'action':{'error':{'status':503}}}");
    cr_assert_eq(status_as("kubectl/v1.32.0 (linux/amd64) kubernetes/abc", "GET", CM("default")),
                 503);
    cr_assert_eq(status_as("my-operator/0.1", "GET", CM("default")), 200);
}

Test(faults, match_by_bearer_token)
{
    post_rule("{'match':{'client':'tok-controller-7'},'action':{'error':{'status':403}}}");
    hres r = hdo("GET", CM("default"), NULL, "same-agent/1", "tok-controller-7", NULL);
    cr_assert_eq(r.status, 403);
    free(r.body);
    r = hdo("GET", CM("default"), NULL, "same-agent/1", "tok-someone-else", NULL);
    cr_assert_eq(r.status, 200);
    free(r.body);
    r = hdo("GET", CM("default"), NULL, "same-agent/1", NULL, NULL);
    cr_assert_eq(r.status, 200);
    free(r.body);
    /* The token matches exactly, not as a substring. */
    r = hdo("GET", CM("default"), NULL, "same-agent/1", "tok-controller-70", NULL);
    cr_assert_eq(r.status, 200);
    free(r.body);
}

/* ---- when rules fire ------------------------------------------------------- */

static void expect_pattern(uint64_t id, const char *path, const char *pattern)
{
    for (const char *p = pattern; *p; p++) {
        long st = status_as(NULL, "GET", path);
        cr_assert_eq(st, *p == 'x' ? 500 : 200, "request %d of %s: got %ld", (int)(p - pattern) + 1,
                     pattern, st);
    }
    unsigned long m = 0, f = 0;
    cr_assert_eq(fakeapi_fault_hits(srv, id, &m, &f), 0);
    cr_assert_eq(m, strlen(pattern));
    size_t want = 0;
    for (const char *p = pattern; *p; p++)
        want += *p == 'x';
    cr_assert_eq(f, want);
    cr_assert_eq(fakeapi_fault_remove(srv, id), 0);
}

Test(faults, when_nth_first_after)
{
    uint64_t id = 0;
    cr_assert_eq(
        fakeapi_fault_add(
            srv,
            &(fakeapi_fault){.resource = "configmaps", .nth = 3, .action = FAKEAPI_FAULT_ERROR},
            &id, NULL),
        0);
    expect_pattern(id, CM("default"), "..x...");
    cr_assert_eq(
        fakeapi_fault_add(
            srv,
            &(fakeapi_fault){.resource = "configmaps", .first = 2, .action = FAKEAPI_FAULT_ERROR},
            &id, NULL),
        0);
    expect_pattern(id, CM("default"), "xx...");
    cr_assert_eq(
        fakeapi_fault_add(
            srv,
            &(fakeapi_fault){.resource = "configmaps", .after = 2, .action = FAKEAPI_FAULT_ERROR},
            &id, NULL),
        0);
    expect_pattern(id, CM("default"), "..xxx");
    cr_assert_eq(fakeapi_fault_add(
                     srv, &(fakeapi_fault){.resource = "configmaps", .action = FAKEAPI_FAULT_ERROR},
                     &id, NULL),
                 0);
    expect_pattern(id, CM("default"), "xxx");
    /* Requests that do not match are not counted. */
    cr_assert_eq(
        fakeapi_fault_add(
            srv,
            &(fakeapi_fault){.resource = "configmaps", .nth = 2, .action = FAKEAPI_FAULT_ERROR},
            &id, NULL),
        0);
    cr_assert_eq(status_as(NULL, "GET", "/api/v1/namespaces/default/secrets"), 200);
    expect_pattern(id, CM("default"), ".x.");
}

Test(faults, when_probability)
{
    uint64_t id = post_rule("{'match':{'resource':'configmaps'},'when':{'probability':0.5},"
                            "'action':{'error':{'status':500}}}");
    int errors = 0;
    for (int i = 0; i < 200; i++)
        errors += status_as(NULL, "GET", CM("default")) == 500;
    unsigned long m = 0, f = 0;
    cr_assert_eq(fakeapi_fault_hits(srv, id, &m, &f), 0);
    cr_assert_eq(m, 200);
    cr_assert_eq(f, (unsigned long)errors);
    cr_assert(errors > 60 && errors < 140, "p=0.5 fired %d times in 200", errors);
    cr_assert_eq(fakeapi_fault_remove(srv, id), 0);
    id = post_rule("{'match':{'resource':'configmaps'},'when':{'probability':1},"
                   "'action':{'error':{'status':500}}}");
    for (int i = 0; i < 10; i++)
        cr_assert_eq(status_as(NULL, "GET", CM("default")), 500);
}

/* ---- hit counts, listing, removal ------------------------------------------ */

Test(faults, hits_through_the_c_api_and_the_endpoint)
{
    uint64_t id = 0;
    fakeapi_error err = {0};
    cr_assert_eq(fakeapi_fault_add(srv,
                                   &(fakeapi_fault){.verb = "get",
                                                    .name = "h",
                                                    .after = 1,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 503,
                                                    .message = "try later"},
                                   &id, &err),
                 0, "%s", err.message);
    for (int i = 0; i < 4; i++)
        status_as(NULL, "GET", CM("default") "/h");
    status_as(NULL, "GET", CM("default") "/other");
    unsigned long m = 0, f = 0;
    cr_assert_eq(fakeapi_fault_hits(srv, id, &m, &f), 0);
    cr_assert_eq(m, 4);
    cr_assert_eq(f, 3);
    cr_assert_eq(fakeapi_fault_hits(srv, id + 100, &m, &f), FAKEAPI_ERR_NOT_FOUND);
    json_t *list = req(200, "GET", "/fakeapi/v1/faults", NULL);
    cr_assert_eq(json_array_size(list), 1);
    json_t *r = json_array_get(list, 0);
    cr_assert_eq(json_integer_value(json_object_get(r, "id")), (json_int_t)id);
    cr_assert_eq(json_integer_value(json_object_get(r, "matched")), 4);
    cr_assert_eq(json_integer_value(json_object_get(r, "fired")), 3);
    /* The listing is the rule in its JSON form. */
    cr_assert_str_eq(jstr(r, "match.verb"), "get");
    cr_assert_str_eq(jstr(r, "match.name"), "h");
    cr_assert_eq(json_integer_value(jget(r, "when.after")), 1);
    cr_assert_eq(json_integer_value(jget(r, "action.error.status")), 503);
    cr_assert_str_eq(jstr(r, "action.error.message"), "try later");
    /* ... which can be posted back as it is. */
    char *again = json_dumps(r, JSON_COMPACT);
    json_decref(list);
    list = req(201, "POST", "/fakeapi/v1/faults", again);
    free(again);
    cr_assert_eq(json_array_size(list), 2);
    cr_assert_eq(json_integer_value(jget(list, "1.matched")), 0);
    cr_assert_eq(json_integer_value(jget(list, "1.action.error.status")), 503);
    json_decref(list);
}

Test(faults, yaml_rules_through_the_endpoint)
{
    hres r = hdo("POST", "/fakeapi/v1/faults",
                 "- match: {verb: get, name: y1}\n"
                 "  action:\n"
                 "    error: {status: 503, message: from yaml}\n"
                 "- match: {verb: get, name: y2}\n"
                 "  when: {nth: 1}\n"
                 "  action: {delay: 10ms}\n",
                 NULL, NULL, "application/yaml");
    cr_assert_eq(r.status, 201, "%s", r.body);
    json_t *list = json_loads(r.body, 0, NULL);
    free(r.body);
    cr_assert_eq(json_array_size(list), 2);
    cr_assert_eq(json_integer_value(jget(list, "1.action.delay")), 10);
    json_decref(list);
    json_t *st = req(503, "GET", CM("default") "/y1", NULL);
    cr_assert_str_eq(jstr(st, "message"), "from yaml");
    json_decref(st);
}

Test(faults, remove_and_clear)
{
    uint64_t a = 0, b = 0;
    cr_assert_eq(fakeapi_fault_add(
                     srv, &(fakeapi_fault){.name = "a", .action = FAKEAPI_FAULT_ERROR}, &a, NULL),
                 0);
    cr_assert_eq(fakeapi_fault_add(
                     srv, &(fakeapi_fault){.name = "b", .action = FAKEAPI_FAULT_ERROR}, &b, NULL),
                 0);
    cr_assert_neq(a, b);
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/a"), 500);
    cr_assert_eq(fakeapi_fault_remove(srv, a), 0);
    cr_assert_eq(fakeapi_fault_remove(srv, a), FAKEAPI_ERR_NOT_FOUND);
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/a"), 404);
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/b"), 500);
    fakeapi_fault_clear(srv);
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/b"), 404);
    json_t *list = req(200, "GET", "/fakeapi/v1/faults", NULL);
    cr_assert_eq(json_array_size(list), 0);
    json_decref(list);
    /* The same through the endpoint: DELETE one, then all. */
    uint64_t c = post_rule("{'match':{'name':'c'},'action':{'error':{'status':500}}}");
    post_rule("{'match':{'name':'d'},'action':{'error':{'status':500}}}");
    cr_assert_neq(c, b, "ids are never reused");
    list = req(200, "DELETE", S("/fakeapi/v1/faults/%llu", (unsigned long long)c), NULL);
    cr_assert_eq(json_array_size(list), 1);
    json_decref(list);
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/c"), 404);
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/d"), 500);
    json_decref(req(404, "DELETE", S("/fakeapi/v1/faults/%llu", (unsigned long long)c), NULL));
    json_decref(req(404, "DELETE", "/fakeapi/v1/faults/nonsense", NULL));
    list = req(200, "DELETE", "/fakeapi/v1/faults", NULL);
    cr_assert_eq(json_array_size(list), 0);
    json_decref(list);
    cr_assert_eq(status_as(NULL, "GET", CM("default") "/d"), 404);
}

/* A rule that matches everything spares the control endpoint and /metrics:
 * the way to remove it stays open. */
Test(faults, catch_all_rules_spare_the_control_endpoint)
{
    cr_assert_eq(fakeapi_fault_add_json(srv, "{\"action\":{\"drop\":true}}", NULL), 0);
    hres r = hdo("GET", CM("default"), NULL, NULL, NULL, NULL);
    cr_assert_eq(r.rc, CURLE_GOT_NOTHING);
    free(r.body);
    r = hdo("GET", "/api", NULL, NULL, NULL, NULL);
    cr_assert_eq(r.rc, CURLE_GOT_NOTHING, "discovery can be faulted");
    free(r.body);
    json_t *list = req(200, "GET", "/fakeapi/v1/faults", NULL);
    cr_assert_eq(json_array_size(list), 1);
    json_decref(list);
    char *t = metrics_text();
    free(t);
    json_decref(req(200, "DELETE", "/fakeapi/v1/faults", NULL));
    cr_assert_eq(status_as(NULL, "GET", CM("default")), 200);
}

/* ---- malformed rules ------------------------------------------------------- */

Test(faults, malformed_rules_are_400_naming_the_field)
{
    static const struct {
        const char *body, *field;
    } cases[] = {
        {"{'match':{'verb':'frobnicate'},'action':{'drop':true}}", "match.verb"},
        {"{'match':{'colour':'red'},'action':{'drop':true}}", "match.colour"},
        {"{'match':{'name':7},'action':{'drop':true}}", "match.name"},
        {"{'match':[],'action':{'drop':true}}", "match"},
        {"{'when':{'probability':2},'action':{'drop':true}}", "when.probability"},
        {"{'when':{'probability':'often'},'action':{'drop':true}}", "when.probability"},
        {"{'when':{'nth':0},'action':{'drop':true}}", "when.nth"},
        {"{'when':{'first':-3},'action':{'drop':true}}", "when.first"},
        {"{'when':{'after':'x'},'action':{'drop':true}}", "when.after"},
        {"{'when':{'sometimes':true},'action':{'drop':true}}", "when.sometimes"},
        {"{'when':{'nth':1,'first':2},'action':{'drop':true}}", "when"},
        {"{'match':{'verb':'get'}}", "action"},
        {"{'action':{'explode':true}}", "action.explode"},
        {"{'action':{'drop':true,'truncate':true}}", "action"},
        {"{'action':{'drop':false}}", "action.drop"},
        {"{'action':{'error':{'status':200}}}", "action.error.status"},
        {"{'action':{'error':{'status':'teapot'}}}", "action.error.status"},
        {"{'action':{'error':{'status':429,'retryAfterSeconds':-1}}}",
         "action.error.retryAfterSeconds"},
        {"{'action':{'error':503}}", "action.error"},
        {"{'action':{'delay':'soon'}}", "action.delay"},
        {"{'action':{'delay':0}}", "action.delay"},
        {"{'action':{'delayEvents':'-2s'}}", "action.delayEvents"},
        {"{'action':{'stale':{}}}", "action.stale"},
        {"{'action':{'stale':{'lag':'two'}}}", "action.stale"},
        {"{'action':{'closeWatchAfter':0}}", "action.closeWatchAfter"},
        {"{'action':{'drop':true},'colour':'red'}", "colour"},
        {"[{'action':{'drop':true}},{'action':{'bogus':true}}]",
         "rule 1: fault rule: action.bogus"},
        {"42", "rule"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hres r = hdo("POST", "/fakeapi/v1/faults", cases[i].body, NULL, NULL, NULL);
        cr_assert_eq(r.status, 400, "%s: want 400, got %ld: %s", cases[i].body, r.status, r.body);
        json_t *st = json_loads(r.body, 0, NULL);
        cr_assert_str_eq(jstr(st, "kind"), "Status", "%s", r.body);
        cr_assert_str_eq(jstr(st, "reason"), "BadRequest");
        const char *msg = jstr(st, "message");
        cr_assert_not_null(msg);
        cr_assert(strstr(msg, cases[i].field), "%s: the message \"%s\" does not name %s",
                  cases[i].body, msg, cases[i].field);
        json_decref(st);
        free(r.body);
    }
    hres r = hdo("POST", "/fakeapi/v1/faults", "{not json: [", NULL, NULL, NULL);
    cr_assert_eq(r.status, 400, "%s", r.body);
    free(r.body);
    /* Nothing was added, not even the good half of the array. */
    json_t *list = req(200, "GET", "/fakeapi/v1/faults", NULL);
    cr_assert_eq(json_array_size(list), 0);
    json_decref(list);
}

Test(faults, malformed_rules_through_the_c_api)
{
    static const struct {
        fakeapi_fault rule;
        const char *field;
    } cases[] = {
        {{.action = 0}, "action"},
        {{.action = 99}, "action"},
        {{.verb = "frobnicate", .action = FAKEAPI_FAULT_DROP}, "match.verb"},
        {{.probability = 1.5, .action = FAKEAPI_FAULT_DROP}, "when.probability"},
        {{.probability = -0.1, .action = FAKEAPI_FAULT_DROP}, "when.probability"},
        {{.nth = 1, .after = 1, .action = FAKEAPI_FAULT_DROP}, "when"},
        {{.action = FAKEAPI_FAULT_ERROR, .status = 302}, "action.error.status"},
        {{.action = FAKEAPI_FAULT_DELAY}, "action.delay"},
        {{.action = FAKEAPI_FAULT_WATCH_CLOSE}, "action.closeWatchAfter"},
        {{.action = FAKEAPI_FAULT_STALE}, "action.stale"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fakeapi_error err = {0};
        uint64_t id = 777;
        cr_assert_eq(fakeapi_fault_add(srv, &cases[i].rule, &id, &err), FAKEAPI_ERR_INVALID,
                     "case %zu", i);
        cr_assert_eq(id, 777, "case %zu: *id untouched on error", i);
        cr_assert_eq(err.code, FAKEAPI_ERR_INVALID);
        cr_assert_eq(err.http_status, 400);
        cr_assert(strstr(err.message, cases[i].field), "case %zu: \"%s\" does not name %s", i,
                  err.message, cases[i].field);
    }
    fakeapi_error err = {0};
    cr_assert_eq(fakeapi_fault_add_json(srv, "{\"action\":{\"delay\":\"soon\"}}", &err),
                 FAKEAPI_ERR_INVALID);
    cr_assert(strstr(err.message, "action.delay"), "%s", err.message);
    cr_assert_eq(fakeapi_fault_add_json(srv, "{oops", &err), FAKEAPI_ERR_INVALID);
    cr_assert_eq(fakeapi_fault_add_json(srv, "[{\"action\":{\"drop\":true}}]", &err), 0);
    json_t *list = req(200, "GET", "/fakeapi/v1/faults", NULL);
    cr_assert_eq(json_array_size(list), 1, "only the good rule");
    json_decref(list);
}

/* ---- metrics --------------------------------------------------------------- */

/* The value of the sample named exactly series in the text; -1 if absent. */
static double metric(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *line = text; line && *line;
         line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (!strncmp(line, series, n) && line[n] == ' ')
            return strtod(line + n + 1, NULL);
    }
    return -1;
}

static char *metrics_text(void)
{
    hres r = hdo("GET", "/metrics", NULL, NULL, NULL, NULL);
    cr_assert_eq(r.status, 200);
    return r.body;
}

Test(faults, metrics_count_requests_watches_and_faults)
{
    mk_cm("default", "m1", "1");
    uint64_t id = post_rule("{'match':{'name':'boom'},'action':{'error':{'status':503}}}");
    for (int i = 0; i < 3; i++)
        status_as(NULL, "GET", CM("default") "/m1");
    status_as(NULL, "GET", CM("default") "/boom");
    status_as(NULL, "GET", CM("default") "/boom");
    status_as(NULL, "GET", CM("default") "/missing");
    status_as(NULL, "GET", "/apis/apps/v1/namespaces/default/deployments");
    wstream *w1 = ws_open(CM("default") "?watch=true", NULL);
    wstream *w2 = ws_open(CM("default") "?watch=true", NULL);
    char *t = metrics_text();
    cr_assert(strstr(t, "# TYPE fakeapi_requests_total counter"), "%s", t);
    cr_assert_eq(metric(t, "fakeapi_requests_total{verb=\"get\",group=\"\",resource=\"configmaps\","
                           "code=\"200\"}"),
                 3, "%s", t);
    cr_assert_eq(metric(t, "fakeapi_requests_total{verb=\"get\",group=\"\",resource=\"configmaps\","
                           "code=\"503\"}"),
                 2, "%s", t);
    cr_assert_eq(metric(t, "fakeapi_requests_total{verb=\"get\",group=\"\",resource=\"configmaps\","
                           "code=\"404\"}"),
                 1, "%s", t);
    cr_assert_eq(metric(t, "fakeapi_requests_total{verb=\"create\",group=\"\",resource="
                           "\"configmaps\",code=\"201\"}"),
                 1, "%s", t);
    cr_assert_eq(metric(t, "fakeapi_requests_total{verb=\"list\",group=\"apps\",resource="
                           "\"deployments\",code=\"200\"}"),
                 1, "%s", t);
    cr_assert(strstr(t, "# TYPE fakeapi_open_watches gauge"), "%s", t);
    cr_assert_eq(metric(t, "fakeapi_open_watches"), 2, "%s", t);
    cr_assert_eq(metric(t, "fakeapi_slow_watchers_closed_total"), 0, "%s", t);
    cr_assert(strstr(t, "# TYPE fakeapi_faults_fired_total counter"), "%s", t);
    cr_assert_eq(metric(t, S("fakeapi_faults_fired_total{rule=\"%llu\"}", (unsigned long long)id)),
                 2, "%s", t);
    free(t);
    ws_close(w1);
    ws_close(w2);
    for (int i = 0; i < 100; i++) {
        t = metrics_text();
        double open = metric(t, "fakeapi_open_watches");
        free(t);
        if (open == 0)
            break;
        sleep_ms(20);
    }
    t = metrics_text();
    cr_assert_eq(metric(t, "fakeapi_open_watches"), 0, "closed watches leave the gauge: %s", t);
    /* Watches are counted as watch requests. */
    cr_assert_eq(metric(t, "fakeapi_requests_total{verb=\"watch\",group=\"\",resource="
                           "\"configmaps\",code=\"200\"}"),
                 2, "%s", t);
    free(t);
}

/* ---- the trace ------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return b;
}

/*
 * One run of a fixed plan: a server with seed on a virtual clock, two rules
 * firing with probability 0.5, the same requests one after another from this
 * thread. The client-visible statuses go to pattern (one letter a request).
 */
static void run_plan(uint64_t seed, const char *trace, char *pattern, size_t cap)
{
    atomic_store(&vclock_ns, 1700000000LL * SEC);
    start(&(fakeapi_options){.seed = seed, .clock = &vclock});
    fakeapi_error err = {0};
    cr_assert_eq(fakeapi_trace_open(srv, trace, &err), 0, "%s", err.message);
    add_json("[{'match':{'verb':'create','resource':'configmaps'},'when':{'probability':0.5},"
             "'action':{'error':{'status':503,'message':'flaky create'}}},"
             "{'match':{'verb':'get'},'when':{'probability':0.5},"
             "'action':{'error':{'status':409}}},"
             "{'match':{'verb':'patch'},'when':{'nth':3},'action':{'error':{'status':500}}}]");
    size_t k = 0;
    for (int i = 0; i < 30; i++) {
        advance(SEC);
        const char *name = S("cm-%d", i);
        hres r = hdo("POST", CM("default"),
                     S("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'%s'}}", name),
                     "planner/1", NULL, NULL);
        pattern[k++] = r.status == 201 ? 'c' : r.status == 503 ? 'E' : '?';
        free(r.body);
        advance(SEC / 2);
        r = hdo("GET", S(CM("default") "/%s", name), NULL, "planner/1", NULL, NULL);
        pattern[k++] = r.status == 200 ? 'g' : r.status == 409 ? 'X' : r.status == 404 ? 'n' : '?';
        free(r.body);
        if (i % 5 == 0) {
            r = hdo("PATCH", S(CM("default") "/%s", name), "{'data':{'k':'v'}}", "planner/1", NULL,
                    "application/merge-patch+json");
            pattern[k++] = r.status == 200 ? 'p' : r.status == 500 ? 'P' : 'q';
            free(r.body);
        }
        cr_assert_lt(k, cap - 3);
    }
    pattern[k] = '\0';
    teardown();
}

Test(faults_trace, same_seed_same_trace_other_seed_other_faults)
{
    char dir[] = "/tmp/faults-trace-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char t1[256], t2[256], t3[256];
    snprintf(t1, sizeof t1, "%s/one.jsonl", dir);
    snprintf(t2, sizeof t2, "%s/two.jsonl", dir);
    snprintf(t3, sizeof t3, "%s/three.jsonl", dir);
    char p1[256], p2[256], p3[256];
    run_plan(1234, t1, p1, sizeof p1);
    run_plan(1234, t2, p2, sizeof p2);
    run_plan(98765, t3, p3, sizeof p3);
    size_t n1, n2, n3;
    char *a = slurp(t1, &n1), *b = slurp(t2, &n2), *c = slurp(t3, &n3);
    cr_assert_str_eq(p1, p2, "the same seed fired differently");
    cr_assert(strchr(p1, 'E') && strchr(p1, 'c') && strchr(p1, 'X') && strchr(p1, 'g') &&
                  strchr(p1, 'P'),
              "both outcomes of each rule: %s", p1);
    cr_assert_eq(n1, n2);
    cr_assert(!memcmp(a, b, n1), "the traces of the same seed differ:\n%s\n---\n%s", a, b);
    cr_assert_str_neq(p1, p3, "another seed fired the same faults: %s", p1);
    cr_assert(n1 != n3 || memcmp(a, c, n1), "another seed gave the same trace");

    /* Every line is JSON with the virtual time; requests, then their faults. */
    size_t requests = 0, faults = 0;
    long long last_t = 0;
    char *save = NULL;
    for (char *line = strtok_r(a, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_t *j = json_loads(line, 0, NULL);
        cr_assert_not_null(j, "not JSON: %s", line);
        long long t = json_integer_value(json_object_get(j, "t"));
        cr_assert_geq(t, 1700000000LL * SEC, "not the virtual clock: %s", line);
        cr_assert_lt(t, 1700000000LL * SEC + 100 * SEC, "not the virtual clock: %s", line);
        cr_assert_geq(t, last_t, "time goes back: %s", line);
        last_t = t;
        const char *kind = jstr(j, "kind");
        if (!strcmp(kind, "request")) {
            requests++;
            cr_assert_str_eq(jstr(j, "client"), "planner/1");
            cr_assert_not_null(jstr(j, "verb"));
            cr_assert_not_null(jstr(j, "path"));
            cr_assert(json_is_integer(json_object_get(j, "code")));
            cr_assert_not_null(jstr(j, "rv"));
        } else {
            cr_assert_str_eq(kind, "fault", "%s", line);
            faults++;
            cr_assert(json_integer_value(json_object_get(j, "rule")) >= 1);
            cr_assert_str_eq(jstr(j, "action"), "fired");
        }
        json_decref(j);
    }
    cr_assert_eq(requests, strlen(p1));
    size_t want_faults = 0;
    for (const char *p = p1; *p; p++)
        want_faults += *p == 'E' || *p == 'X' || *p == 'P';
    cr_assert_eq(faults, want_faults);
    free(a);
    free(b);
    free(c);
    unlink(t1);
    unlink(t2);
    unlink(t3);
    rmdir(dir);
}

/* The trace names requests and events, never Secret data or tokens. */
Test(faults, trace_has_no_secret_values_or_tokens)
{
    char path[] = "/tmp/faults-secret-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(fakeapi_trace_open(srv, path, NULL), 0);
    post_rule("{'match':{'verb':'get','name':'nope'},'action':{'error':{'status':500}}}");
    wstream *w =
        ws_open(S("/api/v1/namespaces/default/secrets?watch=true&resourceVersion=%llu", rev()),
                "watcher/1");
    hres r = hdo("POST", "/api/v1/namespaces/default/secrets",
                 "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'creds'},"
                 "'type':'Opaque','data':{'password':'aHVudGVyMi10b3BzZWNyZXQ='},"
                 "'stringData':{'token':'plain-hunter3-words'}}",
                 "writer/1", "tok-very-private-123", NULL);
    cr_assert_eq(r.status, 201, "%s", r.body);
    free(r.body);
    expect_ev(w, "ADDED", "creds");
    r = hdo("GET", "/api/v1/namespaces/default/secrets/creds", NULL, "reader/1",
            "tok-very-private-123", NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "aHVudGVyMi10b3BzZWNyZXQ="), "the client does get the data");
    free(r.body);
    status_as(NULL, "GET", "/api/v1/namespaces/default/secrets/nope");
    ws_close(w);
    cr_assert_eq(fakeapi_trace_open(srv, NULL, NULL), 0); /* stop: the file is complete */
    char *t = slurp(path, NULL);
    cr_assert_null(strstr(t, "aHVudGVy"), "Secret data in the trace:\n%s", t);
    cr_assert_null(strstr(t, "hunter2"), "Secret data in the trace:\n%s", t);
    cr_assert_null(strstr(t, "hunter3"), "Secret stringData in the trace:\n%s", t);
    cr_assert_null(strstr(t, "tok-very-private"), "a token in the trace:\n%s", t);
    /* ... but it has the requests, the fault and the event. */
    cr_assert(strstr(t, "\"kind\":\"request\""), "%s", t);
    cr_assert(strstr(t, "\"path\":\"/api/v1/namespaces/default/secrets\""), "%s", t);
    cr_assert(strstr(t, "\"client\":\"writer/1\""), "%s", t);
    cr_assert(strstr(t, "\"kind\":\"fault\""), "%s", t);
    cr_assert(strstr(t, "\"kind\":\"event\""), "%s", t);
    cr_assert(strstr(t, "\"client\":\"watcher/1\""), "%s", t);
    cr_assert(strstr(t, "\"type\":\"ADDED\""), "%s", t);
    free(t);
    unlink(path);
}

/* A withheld event is in the trace as what the fault did, to which client. */
Test(faults, trace_records_withheld_events)
{
    char path[] = "/tmp/faults-withheld-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(fakeapi_trace_open(srv, path, NULL), 0);
    uint64_t id = post_rule("{'match':{'verb':'watch','client':'blind','name':'x'},"
                            "'action':{'withhold':true}}");
    wstream *w = ws_open(S(CM("default") "?watch=true&resourceVersion=%llu", rev()), "blind/1");
    mk_cm("default", "x", "1");
    mk_cm("default", "y", "1");
    expect_ev(w, "ADDED", "y");
    ws_close(w);
    cr_assert_eq(fakeapi_trace_open(srv, NULL, NULL), 0);
    char *t = slurp(path, NULL);
    bool withheld = false, delivered_y = false, delivered_x = false;
    char *save = NULL;
    for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_t *j = json_loads(line, 0, NULL);
        cr_assert_not_null(j, "%s", line);
        const char *kind = jstr(j, "kind");
        if (!strcmp(kind, "fault") && !strcmp(jstr(j, "action"), "withheld")) {
            withheld = true;
            cr_assert_eq(json_integer_value(json_object_get(j, "rule")), (json_int_t)id);
            cr_assert_str_eq(jstr(j, "name"), "x");
            cr_assert_str_eq(jstr(j, "client"), "blind/1");
        }
        if (!strcmp(kind, "event")) {
            delivered_x |= !strcmp(jstr(j, "name"), "x");
            delivered_y |= !strcmp(jstr(j, "name"), "y");
        }
        json_decref(j);
    }
    cr_assert(withheld, "no withheld line");
    cr_assert(delivered_y && !delivered_x);
    free(t);
    unlink(path);
}
