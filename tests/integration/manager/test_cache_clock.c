/*
 * test_cache_clock.c - the cache on a recording clock: backoff doubling
 * from 800 ms, Retry-After honoured, 429 retried by the client, watch-list
 * and bookmarks, and its fallback when refused.
 * Shared fixture: tests/support/cachetest.h.
 */
#include "cachetest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(cache, .init = setup, .fini = teardown, .timeout = 60);
TestSuite(cache_custom, .fini = teardown, .timeout = 60);

/* A clock whose waits return at once, moving time to the deadline and
 * recording how long each wait was. */
typedef struct autoclock {
    pthread_mutex_t mu;
    int64_t now;
    int64_t waits[64];
    size_t n;
} autoclock;

static int64_t auto_now(void *ud)
{
    autoclock *c = ud;
    pthread_mutex_lock(&c->mu);
    int64_t t = c->now;
    pthread_mutex_unlock(&c->mu);
    return t;
}

static void auto_wait(void *ud, pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline)
{
    autoclock *c = ud;
    if (deadline == INT64_MAX) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 5000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(cv, mu, &ts);
        return;
    }
    pthread_mutex_lock(&c->mu);
    if (deadline > c->now) {
        if (c->n < 64)
            c->waits[c->n++] = deadline - c->now;
        c->now = deadline;
    }
    pthread_mutex_unlock(&c->mu);
}

static void check_waits(autoclock *c, const int64_t *want, size_t n)
{
    pthread_mutex_lock(&c->mu);
    cr_assert_eq(c->n, n, "waits: %zu, want %zu", c->n, n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(c->waits[i], want[i], "wait %zu: %lld", i, (long long)c->waits[i]);
    pthread_mutex_unlock(&c->mu);
}

Test(cache_custom, backoff_doubles_from_800ms)
{
    start_api(NULL, &(ctrl_client_options){.max_retries = -1});
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "list",
                                                    .resource = "configmaps",
                                                    .first = 4,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 500},
                                   NULL, &fe),
                 0);
    static autoclock ac = {.mu = PTHREAD_MUTEX_INITIALIZER, .now = 1};
    ctrl_clock clk = {.now_ns = auto_now, .wait_until = auto_wait, .ud = &ac};
    ctrl_informer *inf =
        cm_informer(&(ctrl_cache_options){.no_watch_list = true, .clock = &clk}, NULL, NULL);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    WAIT_FOR(ctrl_informer_has_synced(inf), 10000);
    const int64_t want[] = {800 * CTRL_MILLISECOND, 1600 * CTRL_MILLISECOND,
                            3200 * CTRL_MILLISECOND, 6400 * CTRL_MILLISECOND};
    check_waits(&ac, want, 4);
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.errors, 4);
    cr_assert_eq(st.lists, 5);
}

Test(cache_custom, list_429_retry_after_honoured)
{
    start_api(NULL, &(ctrl_client_options){.max_retries = -1});
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "list",
                                                    .resource = "configmaps",
                                                    .first = 2,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 429,
                                                    .retry_after_s = 3},
                                   NULL, &fe),
                 0);
    static autoclock ac = {.mu = PTHREAD_MUTEX_INITIALIZER, .now = 1};
    ctrl_clock clk = {.now_ns = auto_now, .wait_until = auto_wait, .ud = &ac};
    ctrl_informer *inf =
        cm_informer(&(ctrl_cache_options){.no_watch_list = true, .clock = &clk}, NULL, NULL);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    WAIT_FOR(ctrl_informer_has_synced(inf), 10000);
    const int64_t want[] = {3 * CTRL_SECOND, 3 * CTRL_SECOND};
    check_waits(&ac, want, 2);
}

/* With the client's own retries (the default), a 429 is retried after the
 * server's Retry-After before the informer even sees it. */
Test(cache, list_429_retried_by_client)
{
    fakeapi_error fe = {0};
    uint64_t id;
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "list",
                                                    .resource = "configmaps",
                                                    .first = 1,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 429,
                                                    .retry_after_s = 1},
                                   &id, &fe),
                 0);
    ctrl_informer *inf = cm_informer(&(ctrl_cache_options){.no_watch_list = true}, NULL, NULL);
    int64_t t0 = mono_ms();
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    cr_assert_geq(mono_ms() - t0, 900, "synced after %lld ms", (long long)(mono_ms() - t0));
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.errors, 0);
    cr_assert_eq(st.lists, 1);
    unsigned long matched = 0, fired = 0;
    fakeapi_fault_hits(api, id, &matched, &fired);
    cr_assert_eq(fired, 1);
    cr_assert_eq(matched, 2);
}

Test(cache_custom, watch_list_and_bookmarks)
{
    start_api(&(fakeapi_options){.bookmark_interval_ms = 50}, NULL);
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        put_cm("default", name, NULL, "1");
    }
    evlog *l = new_log();
    ctrl_informer *inf = cm_informer(NULL, NULL, l);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.lists, 0, "watch-list needs no LIST");
    cr_assert_eq(st.watches, 1);
    cr_assert_eq(st.objects, 5);
    cr_assert_geq(st.bookmarks, 1);
    pthread_mutex_lock(&l->mu);
    cr_assert_eq(l->n, 5);
    for (size_t i = 0; i < 5; i++)
        cr_assert(strstr(l->lines[i], " i"), "%s", l->lines[i]);
    pthread_mutex_unlock(&l->mu);
    /* Writes to another kind move the revision: bookmarks carry it. */
    apply_json("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"namespace\":"
               "\"default\",\"name\":\"s\"}}");
    char want[32];
    snprintf(want, sizeof want, "%s", rev());
    char rv[32] = "";
    WAIT_FOR((ctrl_informer_last_rv(inf, rv, sizeof rv), !strcmp(rv, want)), 5000);
    ctrl_informer_stats_get(inf, &st);
    cr_assert_geq(st.bookmarks, 2);
    cr_assert_eq(log_len(l), 5);
    /* Events still flow on the same stream. */
    put_cm("default", "w9", NULL, "1");
    WAIT_FOR(log_len(l) == 6, 5000);
    free(l);
}

Test(cache, watch_list_refused_falls_back)
{
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "watch",
                                                    .resource = "configmaps",
                                                    .first = 1,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 400,
                                                    .reason = "BadRequest",
                                                    .message = "sendInitialEvents unsupported"},
                                   NULL, &fe),
                 0);
    put_cm("default", "a", NULL, "1");
    ctrl_informer *inf = cm_informer(NULL, NULL, NULL);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    put_cm("default", "b", NULL, "1");
    WAIT_FOR(stat_of(inf, 'o') == 2, 5000);
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.lists, 1);
    cr_assert_eq(st.errors, 0, "a refusal is not an error to back off from");
    cr_assert_eq(st.watches, 2);
}
