/*
 * test_faults.c - fault actions seen from the client (docs/faults.md): one
 * test per action (errors with their Status and Retry-After, delays on the
 * real and on a virtual clock, dropped and truncated answers, lost
 * responses, compaction, stale views, closed/expired watches, withheld and
 * delayed events). Rules - matching, firing, hits, malformed rules, metrics,
 * the trace - are in test_fault_rules.c.
 *
 * Requests go through faults_client.h, which can set the User-Agent and a
 * bearer token and reports transport errors; watches through a streaming
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

#include "faults_client.h"

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
    fc_mk_cm("default", "real", "1");
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
    fc_mk_cm("default", "slow", "1");
    post_rule("{'match':{'verb':'get','name':'slow'},'action':{'delay':'300ms'}}");
    int64_t t0 = now_ms();
    json_decref(fc_req(200, "GET", CM("default") "/slow", NULL));
    int64_t took = now_ms() - t0;
    cr_assert_geq(took, 290, "a 300 ms delay took %lld ms", (long long)took);
    t0 = now_ms();
    json_decref(fc_req(200, "GET", CM("default"), NULL)); /* lists are not delayed */
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
    fc_mk_cm("default", "slow", "1");
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
    for (int i = 0; i < 4000 && !atomic_load(&b.done); i++)
        sleep_ms(5);
    cr_assert(atomic_load(&b.done), "the delay did not end when the clock reached it");
    pthread_join(b.th, NULL);
    cr_assert_eq(b.status, 200);
    int64_t took = now_ms() - t0;
    /* Seconds at most on a loaded machine, against ten real minutes. */
    cr_assert_lt(took, 20000, "a virtual 10-minute delay took %lld ms of real time",
                 (long long)took);
}

/* Held delays (deterministic runs): the server tells on_held, and answers
 * only when released, however far the clock moves; turning holding off
 * answers what is held at once. */
static atomic_ullong held_id;
static atomic_llong held_due;

static void note_held(void *ud, uint64_t id, int64_t due)
{
    (void)ud;
    atomic_store(&held_due, due);
    atomic_store(&held_id, id);
}

static void setup_held(void)
{
    atomic_store(&held_id, 0);
    start_vclock_with(&(fakeapi_options){.seed = 9, .on_held = note_held});
}

TestSuite(faults_held, .init = setup_held, .fini = teardown);

static uint64_t wait_held(void)
{
    for (int i = 0; i < 400 && !atomic_load(&held_id); i++)
        sleep_ms(5);
    uint64_t id = atomic_exchange(&held_id, 0);
    cr_assert_neq(id, 0, "on_held was not called");
    return id;
}

Test(faults_held, a_held_delay_ends_when_released)
{
    fc_mk_cm("default", "slow", "1");
    post_rule("{'match':{'verb':'get','name':'slow'},'action':{'delay':'10m'}}");
    int64_t before = fakeapi_next_deadline(srv);
    bg_req b = {.path = CM("default") "/slow"};
    cr_assert_eq(pthread_create(&b.th, NULL, bg_get, &b), 0);
    uint64_t id = wait_held();
    cr_assert_geq(atomic_load(&held_due), 1700000000LL * SEC + 10 * 60 * SEC);
    cr_assert_eq(fakeapi_next_deadline(srv), before, "a held delay is not the server's deadline");
    advance(11 * 60 * SEC);
    sleep_ms(150);
    cr_assert(!atomic_load(&b.done), "a held delay ended on the clock");
    cr_assert_eq(fakeapi_request_release(srv, id + 1000), FAKEAPI_ERR_NOT_FOUND);
    cr_assert_eq(fakeapi_request_release(srv, id), 0);
    pthread_join(b.th, NULL);
    cr_assert_eq(b.status, 200);
    cr_assert_eq(fakeapi_request_release(srv, id), FAKEAPI_ERR_NOT_FOUND, "released twice");

    /* Holding off: what is held is answered at once, and later delays end on
     * the clock again. */
    bg_req c = {.path = CM("default") "/slow"};
    cr_assert_eq(pthread_create(&c.th, NULL, bg_get, &c), 0);
    wait_held();
    fakeapi_hold_delays(srv, false);
    pthread_join(c.th, NULL);
    cr_assert_eq(c.status, 200);
    bg_req d = {.path = CM("default") "/slow"};
    cr_assert_eq(pthread_create(&d.th, NULL, bg_get, &d), 0);
    sleep_ms(150);
    cr_assert_eq(atomic_load(&held_id), 0, "held after holding was turned off");
    cr_assert(!atomic_load(&d.done));
    advance(10 * 60 * SEC);
    pthread_join(d.th, NULL);
    cr_assert_eq(d.status, 200);
}

/* A held write dropped (fakeapi_request_drop: a client that crashed while
 * the server held its request): never applied, its connection closed
 * unanswered; the id is then gone. */
typedef struct bg_post {
    pthread_t th;
    CURLcode rc;
    size_t len;
} bg_post;

static void *bg_create(void *ud)
{
    bg_post *b = ud;
    hres r =
        hdo("POST", CM("default"),
            "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'never'}}", NULL, NULL, NULL);
    b->rc = r.rc;
    b->len = r.len;
    free(r.body);
    return NULL;
}

Test(faults_held, a_dropped_held_write_is_never_applied)
{
    post_rule("{'match':{'verb':'create','resource':'configmaps'},'action':{'delay':'30s'}}");
    bg_post b = {0};
    cr_assert_eq(pthread_create(&b.th, NULL, bg_create, &b), 0);
    uint64_t id = wait_held();
    cr_assert_eq(fakeapi_request_drop(srv, id + 1000), FAKEAPI_ERR_NOT_FOUND);
    cr_assert_eq(fakeapi_request_drop(srv, id), 0);
    pthread_join(b.th, NULL);
    cr_assert_eq(b.rc, CURLE_GOT_NOTHING, "want an empty reply, got %d (%s)", b.rc,
                 curl_easy_strerror(b.rc));
    cr_assert_eq(b.len, 0);
    cr_assert_eq(fakeapi_request_drop(srv, id), FAKEAPI_ERR_NOT_FOUND, "dropped twice");
    cr_assert_eq(fakeapi_request_release(srv, id), FAKEAPI_ERR_NOT_FOUND);
    json_t *o = NULL;
    cr_assert_eq(fakeapi_get(srv, "v1", "ConfigMap", "default", "never", &o, NULL),
                 FAKEAPI_ERR_NOT_FOUND, "the dropped create was applied");
    /* turning holding off afterwards answers nothing twice */
    fakeapi_hold_delays(srv, false);
}

/* ---- actions: drop, truncate, lose the response ---------------------------- */

Test(faults, drop_closes_without_an_answer)
{
    fc_mk_cm("default", "gone", "1");
    uint64_t id = post_rule("{'match':{'name':'gone'},'when':{'first':1},'action':{'drop':true}}");
    hres r = hdo("GET", CM("default") "/gone", NULL, NULL, NULL, NULL);
    cr_assert_eq(r.rc, CURLE_GOT_NOTHING, "want an empty reply, got %d (%s), status %ld", r.rc,
                 curl_easy_strerror(r.rc), r.status);
    cr_assert_eq(r.len, 0);
    free(r.body);
    cr_assert_eq(fired_of(id), 1);
    /* The server is fine, and the next try gets through. */
    json_decref(fc_req(200, "GET", CM("default") "/gone", NULL));
}

Test(faults, truncate_sends_part_of_the_body)
{
    char big[4000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    fc_mk_cm("default", "big", big);
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
    cr_assert_gt(fc_rv_of(o), before);
    json_decref(o);
    json_t *st = fc_req(409, "POST", CM("default"),
                        "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'lost'}}");
    cr_assert_str_eq(jstr(st, "reason"), "AlreadyExists");
    json_decref(st);
}

/* ---- actions: compaction --------------------------------------------------- */

Test(faults, compact_expires_old_revisions)
{
    unsigned long long rv1 = fc_mk_cm("default", "c", "1");
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
    json_decref(fc_req(410, "GET",
                       S(CM("default") "?resourceVersion=%llu&resourceVersionMatch=Exact", rv1),
                       NULL));
}

/* ---- actions: stale views -------------------------------------------------- */

/* Writes at known revisions: a=1 (rv1), a=2, b created; returns rv1. */
static unsigned long long stale_fixture(void)
{
    fc_mk_ns("st");
    unsigned long long rv1 = fc_mk_cm("st", "a", "1");
    set_cm("st", "a", "2");
    fc_mk_cm("st", "b", "1");
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
    cr_assert_eq(fc_rv_of(l), rv, "%s: list resourceVersion %llu, want %llu", ua, fc_rv_of(l), rv);
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
    fc_mk_cm("st", "c", "1");
    fc_mk_cm("st", "d", "1");
    json_t *l = req_as(200, "laggy/1", "GET", "/api/v1/namespaces/st/configmaps", NULL);
    cr_assert_eq(json_array_size(json_object_get(l, "items")), 2);
    cr_assert_str_eq(jstr(l, "items.0.data.v"), "2");
    cr_assert_eq(fc_rv_of(l), rv1 + 2);
    json_decref(l);
}

/* ---- actions: watches ------------------------------------------------------ */

Test(faults, close_watch_after_n_events)
{
    fc_mk_ns("cw");
    post_rule("{'match':{'verb':'watch','resource':'configmaps'},"
              "'action':{'closeWatchAfter':2}}");
    wstream *w =
        ws_open(S("/api/v1/namespaces/cw/configmaps?watch=true&resourceVersion=%llu", rev()), NULL);
    fc_mk_cm("cw", "one", "1");
    fc_mk_cm("cw", "two", "1");
    fc_mk_cm("cw", "three", "1");
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
    fc_mk_cm("default", "x", "1");
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
    fc_mk_ns("wh");
    uint64_t id = post_rule("{'match':{'verb':'watch','client':'client-a','namespace':'wh',"
                            "'name':'x'},'action':{'withhold':true}}");
    unsigned long long from = rev();
    wstream *a =
        ws_open(S("/api/v1/namespaces/wh/configmaps?watch=true&resourceVersion=%llu", from),
                "client-a/1.0");
    wstream *b =
        ws_open(S("/api/v1/namespaces/wh/configmaps?watch=true&resourceVersion=%llu", from),
                "client-b/1.0");
    fc_mk_cm("wh", "x", "1");
    fc_mk_cm("wh", "y", "1");
    set_cm("wh", "x", "2");
    json_decref(fc_req(200, "DELETE", "/api/v1/namespaces/wh/configmaps/x", NULL));
    fc_mk_cm("wh", "z", "1");
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
    fc_mk_cm("default", "d1", "1");
    expect_ev(prompt, "ADDED", "d1");
    expect_quiet(late, 400);
    advance(29 * SEC);
    expect_quiet(late, 400);
    advance(1 * SEC);
    expect_ev(late, "ADDED", "d1");
    /* Each event is delayed from its own write. */
    fc_mk_cm("default", "d2", "1");
    expect_ev(prompt, "ADDED", "d2");
    expect_quiet(late, 300);
    advance(30 * SEC);
    expect_ev(late, "ADDED", "d2");
    ws_close(late);
    ws_close(prompt);
}
