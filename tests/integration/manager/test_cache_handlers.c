/*
 * test_cache_handlers.c - handlers and reads: resync on a manual clock,
 * late handlers and informers, and reads that are copies of the caller's
 * own.
 * Shared fixture: tests/support/cachetest.h.
 */
#include "cachetest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(cache, .init = setup, .fini = teardown, .timeout = 60);
TestSuite(cache_custom, .fini = teardown, .timeout = 60);

/* A manual clock: time moves only when the test says; waits poll. */
typedef struct manclock {
    pthread_mutex_t mu;
    int64_t now;
} manclock;

static int64_t man_now(void *ud)
{
    manclock *c = ud;
    pthread_mutex_lock(&c->mu);
    int64_t t = c->now;
    pthread_mutex_unlock(&c->mu);
    return t;
}

static void man_wait(void *ud, pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 2000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(cv, mu, &ts);
}

Test(cache, resync_delivers_old_equals_new)
{
    put_cm("default", "r1", NULL, "1");
    put_cm("default", "r2", NULL, "1");
    put_cm("default", "r3", NULL, "1");
    static manclock mc = {.mu = PTHREAD_MUTEX_INITIALIZER, .now = 1000};
    ctrl_clock clk = {.now_ns = man_now, .wait_until = man_wait, .ud = &mc};
    evlog *l = new_log();
    cm_informer(&(ctrl_cache_options){.resync_ns = 10 * CTRL_SECOND, .clock = &clk, .seed = 3},
                NULL, l);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    usleep(100000);
    cr_assert_eq(log_len(l), 3);
    /* Not yet: 9 s of 10 (+ up to 10% jitter). */
    pthread_mutex_lock(&mc.mu);
    mc.now += 9 * CTRL_SECOND;
    pthread_mutex_unlock(&mc.mu);
    usleep(100000);
    cr_assert_eq(log_len(l), 3);
    pthread_mutex_lock(&mc.mu);
    mc.now += 2 * CTRL_SECOND + 1;
    pthread_mutex_unlock(&mc.mu);
    WAIT_FOR(log_len(l) == 6, 5000);
    pthread_mutex_lock(&l->mu);
    cr_assert_eq(l->same_obj_updates, 3);
    for (size_t i = 3; i < 6; i++) {
        char key[64], o[32], n[32];
        cr_assert_eq(sscanf(l->lines[i], "UPD %63s %31s %31s", key, o, n), 3, "%s", l->lines[i]);
        cr_assert_str_eq(o, n);
    }
    pthread_mutex_unlock(&l->mu);
    /* And again a period later. */
    pthread_mutex_lock(&mc.mu);
    mc.now += 12 * CTRL_SECOND;
    pthread_mutex_unlock(&mc.mu);
    WAIT_FOR(log_len(l) == 9, 5000);
    free(l);
}

Test(cache, late_handler_gets_existing_objects)
{
    put_cm("default", "x1", NULL, "1");
    put_cm("default", "x2", NULL, "1");
    ctrl_informer *inf = cm_informer(NULL, NULL, NULL);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    evlog *l = new_log();
    cr_assert_eq(
        ctrl_informer_add_handler(inf, &(ctrl_event_handler){on_add, on_update, on_delete, l}), 0);
    cr_assert_eq(log_len(l), 2);
    cr_assert(strstr(l->lines[0], "ADD default/x1"));
    put_cm("default", "x3", NULL, "1");
    WAIT_FOR(log_len(l) == 3, 5000);
    free(l);
}

/* An informer asked for after start starts at once; an unknown kind never
 * syncs, and waiting for it times out. */
Test(cache, late_informer_and_timeout)
{
    put_cm("default", "z", NULL, "1");
    ctrl_error err = {0};
    cr_assert_eq(ctrl_cache_new(client, NULL, &cache, &err), 0);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    ctrl_informer *inf = NULL, *again = NULL;
    cr_assert_eq(ctrl_cache_informer(cache, "v1", "ConfigMap", NULL, &inf, &err), 0);
    cr_assert_eq(ctrl_cache_informer(cache, "v1", "ConfigMap", NULL, &again, &err), 0);
    cr_assert_eq(inf, again);
    cr_assert_eq(ctrl_informer_wait_for_sync(inf, 10 * CTRL_SECOND), 0);
    ctrl_informer *ghost = NULL;
    cr_assert_eq(ctrl_cache_informer(cache, "example.com/v1", "Ghost", NULL, &ghost, &err), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 200 * CTRL_MILLISECOND), CTRL_ERR_TIMEOUT);
    cr_assert_not(ctrl_informer_has_synced(ghost));
    int64_t t0 = mono_ms();
    ctrl_cache_stop(cache);
    cr_assert_lt(mono_ms() - t0, 10000, "stop took %lld ms", (long long)(mono_ms() - t0));
    cr_assert_eq(ctrl_informer_wait_for_sync(ghost, CTRL_SECOND), CTRL_ERR_CANCELLED);
    ctrl_error_deinit(&err);
}

/* Reads are copies of the caller's own: a new object every time, equal to
 * the server's, that the caller may change without changing the cache, and
 * that outlives updates and the cache itself. */
Test(cache, reads_are_copies)
{
    put_cm("default", "s1", "\"app\":\"web\"", "1");
    ctrl_informer *inf = cm_informer(NULL, NULL, NULL);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    json_t *a = NULL, *b = NULL, *all = NULL, *idx = NULL, *server = NULL;
    cr_assert_eq(fakeapi_get(api, "v1", "ConfigMap", "default", "s1", &server, NULL), 0);
    cr_assert_eq(ctrl_informer_get(inf, "default", "s1", &a), 0);
    cr_assert_eq(ctrl_informer_get(inf, "default", "s1", &b), 0);
    cr_assert_neq(a, b);
    cr_assert_eq(a->refcount, 1, "the caller's own");
    cr_assert(json_equal(a, server), "the cached object is the server's");
    cr_assert(json_equal(a, b));
    cr_assert_eq(ctrl_informer_list(inf, NULL, NULL, &all), 0);
    cr_assert_eq(ctrl_informer_by_index(inf, "namespace", "default", &idx), 0);
    cr_assert_neq(json_array_get(all, 0), a);
    cr_assert_neq(json_array_get(idx, 0), a);
    cr_assert(json_equal(json_array_get(all, 0), a));
    cr_assert(json_equal(json_array_get(idx, 0), a));
    /* Changing copies changes nothing in the cache. */
    json_object_set_new(json_object_get(a, "data"), "v", json_string("changed"));
    json_object_del(json_object_get(a, "metadata"), "labels");
    json_object_clear(json_array_get(all, 0));
    json_object_clear(json_array_get(idx, 0));
    json_decref(b);
    cr_assert_eq(ctrl_informer_get(inf, "default", "s1", &b), 0);
    cr_assert(json_equal(b, server));
    json_decref(all);
    cr_assert_eq(ctrl_informer_list(inf, NULL, "app=web", &all), 0);
    cr_assert_eq(json_array_size(all), 1);
    cr_assert(json_equal(json_array_get(all, 0), server));
    json_decref(all);
    json_decref(idx);
    /* An update: the copy read before stays as it was. */
    put_cm("default", "s1", "\"app\":\"web\"", "2");
    WAIT_FOR(replaced(inf, "default", "s1", b), 5000);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(b, "data"), "v")), "1");
    ctrl_cache_free(cache);
    cache = NULL;
    cr_assert_eq(b->refcount, 1, "the freed cache keeps no reference");
    cr_assert_str_eq(meta(b, "name"), "s1");
    json_decref(a);
    json_decref(b);
    json_decref(server);
}
