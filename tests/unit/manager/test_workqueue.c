/*
 * test_workqueue.c - the rate-limited delaying work queue: dedup, one key in
 * flight, delayed adds on a fake clock, backoff, the token bucket, forget,
 * shutdown with and without drain, many threads, metrics, priorities.
 */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrl/error.h"
#include "ctrl/metrics.h"
#include "ctrl/workqueue.h"

/* ---- a fake clock: time moves only when the test says ---- */

typedef struct fclock {
    pthread_mutex_t mu;
    int64_t now;
} fclock;

static int64_t fc_now(void *ud)
{
    fclock *fc = ud;
    pthread_mutex_lock(&fc->mu);
    int64_t t = fc->now;
    pthread_mutex_unlock(&fc->mu);
    return t;
}

static void real_sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits on cv for a short real time: callers re-check (spurious wake-ups
 * are allowed), so a deadline passed by fc_advance is seen within 1 ms. */
static void fc_wait(void *ud, pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline)
{
    if (fc_now(ud) >= deadline)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(cv, mu, &ts);
}

static void fc_advance(fclock *fc, int64_t ns)
{
    pthread_mutex_lock(&fc->mu);
    fc->now += ns;
    pthread_mutex_unlock(&fc->mu);
}

static fclock fc = {PTHREAD_MUTEX_INITIALIZER, 1000 * CTRL_SECOND};
static const ctrl_clock fake = {.now_ns = fc_now, .wait_until = fc_wait, .ud = &fc};

static ctrl_workqueue *new_queue(const ctrl_workqueue_options *o)
{
    ctrl_workqueue *q = NULL;
    cr_assert_eq(ctrl_workqueue_new(o, &q), 0);
    cr_assert_not_null(q);
    return q;
}

static char *get_key(ctrl_workqueue *q)
{
    char *k = NULL;
    cr_assert_eq(ctrl_workqueue_get(q, &k), 0);
    cr_assert_not_null(k);
    return k;
}

static void expect_get(ctrl_workqueue *q, const char *want)
{
    char *k = get_key(q);
    cr_assert_str_eq(k, want);
    free(k);
}

Test(workqueue, dedup_and_fifo_order)
{
    ctrl_workqueue *q = new_queue(&(ctrl_workqueue_options){.name = "t"});
    ctrl_workqueue_add(q, "ns/a");
    ctrl_workqueue_add(q, "ns/b");
    ctrl_workqueue_add(q, "ns/a");
    cr_assert_eq(ctrl_workqueue_len(q), 2);
    expect_get(q, "ns/a");
    expect_get(q, "ns/b");
    cr_assert_eq(ctrl_workqueue_len(q), 0);
    cr_assert_eq(ctrl_workqueue_processing(q), 2);
    ctrl_workqueue_stats st;
    ctrl_workqueue_stats_get(q, &st);
    cr_assert_eq(st.adds, 2, "a deduplicated add is not counted");
    cr_assert_eq(st.queue_count, 2);
    ctrl_workqueue_done(q, "ns/a");
    ctrl_workqueue_done(q, "ns/b");
    cr_assert_eq(ctrl_workqueue_processing(q), 0);
    ctrl_workqueue_free(q);
}

Test(workqueue, readd_while_processing_waits_for_done)
{
    ctrl_workqueue *q = new_queue(NULL);
    ctrl_workqueue_add(q, "k");
    char *k = get_key(q);
    ctrl_workqueue_add(q, "k");
    ctrl_workqueue_add(q, "k");
    cr_assert_eq(ctrl_workqueue_len(q), 0, "a key being processed is not handed out again");
    ctrl_workqueue_add(q, "other");
    expect_get(q, "other");
    ctrl_workqueue_done(q, "other");
    ctrl_workqueue_done(q, k);
    cr_assert_eq(ctrl_workqueue_len(q), 1, "re-added once, after done");
    expect_get(q, "k");
    ctrl_workqueue_done(q, "k");
    cr_assert_eq(ctrl_workqueue_len(q), 0);
    /* done of an unknown key or twice is harmless */
    ctrl_workqueue_done(q, "k");
    ctrl_workqueue_done(q, "nope");
    free(k);
    ctrl_workqueue_free(q);
}

Test(workqueue, delayed_adds_fire_on_the_clock)
{
    ctrl_workqueue *q = new_queue(&(ctrl_workqueue_options){.clock = &fake});
    int64_t t0 = fc_now(&fc);
    ctrl_workqueue_add_after(q, "a", CTRL_SECOND);
    ctrl_workqueue_add_after(q, "b", 5 * CTRL_SECOND);
    ctrl_workqueue_add_after(q, "b", 2 * CTRL_SECOND); /* earlier wins */
    ctrl_workqueue_add_after(q, "a", 3 * CTRL_SECOND); /* later is ignored */
    ctrl_workqueue_add_after(q, "now", 0);             /* no delay: ready at once */
    cr_assert_eq(ctrl_workqueue_len(q), 1);
    expect_get(q, "now");
    cr_assert_eq(ctrl_workqueue_next_deadline(q), t0 + CTRL_SECOND);
    fc_advance(&fc, CTRL_SECOND - 1);
    cr_assert_eq(ctrl_workqueue_len(q), 0);
    fc_advance(&fc, 1);
    cr_assert_eq(ctrl_workqueue_len(q), 1);
    cr_assert_eq(ctrl_workqueue_next_deadline(q), t0 + 2 * CTRL_SECOND);
    expect_get(q, "a");
    fc_advance(&fc, CTRL_SECOND);
    expect_get(q, "b");
    cr_assert_eq(ctrl_workqueue_next_deadline(q), INT64_MAX);
    ctrl_workqueue_free(q);
}

typedef struct getter {
    ctrl_workqueue *q;
    int rc;
    char *key;
    atomic_bool finished;
} getter;

static void *getter_main(void *arg)
{
    getter *g = arg;
    g->rc = ctrl_workqueue_get(g->q, &g->key);
    atomic_store(&g->finished, true);
    return NULL;
}

Test(workqueue, blocked_getter_wakes_when_the_clock_passes_the_deadline)
{
    ctrl_workqueue *q = new_queue(&(ctrl_workqueue_options){.clock = &fake});
    getter g = {.q = q};
    pthread_t th;
    pthread_create(&th, NULL, getter_main, &g);
    ctrl_workqueue_add_after(q, "late", 10 * CTRL_MINUTE);
    real_sleep_ms(30);
    cr_assert_not(atomic_load(&g.finished), "nothing is ready before the deadline");
    fc_advance(&fc, 10 * CTRL_MINUTE);
    pthread_join(th, NULL);
    cr_assert_eq(g.rc, 0);
    cr_assert_str_eq(g.key, "late");
    free(g.key);
    ctrl_workqueue_free(q);
}

/* failing: keys whose last processing failed (a rate-limited add not
 * forgotten since), what `scenario hunt` reads as a persistent error. */
Test(workqueue, failing_keys_count_until_forgotten)
{
    ctrl_workqueue *q =
        new_queue(&(ctrl_workqueue_options){.clock = &fake, .bucket_qps = -1 /* no bucket */});
    ctrl_workqueue_stats st;
    ctrl_workqueue_add_rate_limited(q, "a");
    ctrl_workqueue_add_rate_limited(q, "a");
    ctrl_workqueue_add_rate_limited(q, "b");
    ctrl_workqueue_stats_get(q, &st);
    cr_assert_eq(st.failing, 2, "two keys failing, one of them twice: %zu", st.failing);
    ctrl_workqueue_forget(q, "a");
    ctrl_workqueue_forget(q, "a");
    ctrl_workqueue_forget(q, "never-failed");
    ctrl_workqueue_stats_get(q, &st);
    cr_assert_eq(st.failing, 1, "a forgotten key is not failing: %zu", st.failing);
    ctrl_workqueue_forget(q, "b");
    ctrl_workqueue_stats_get(q, &st);
    cr_assert_eq(st.failing, 0);
    ctrl_workqueue_free(q);
}

Test(workqueue, per_item_exponential_backoff)
{
    ctrl_workqueue *q =
        new_queue(&(ctrl_workqueue_options){.clock = &fake, .bucket_qps = -1 /* no bucket */});
    int64_t want = 5 * CTRL_MILLISECOND;
    for (int i = 0; i < 40; i++) {
        cr_assert_eq(ctrl_workqueue_when(q, "k"), want, "failure %d: %lld, want %lld", i,
                     (long long)ctrl_workqueue_when(q, "k"), (long long)want);
        cr_assert_eq(ctrl_workqueue_when(q, "k"), want, "when() does not count as a failure");
        cr_assert_eq(ctrl_workqueue_num_requeues(q, "k"), i);
        ctrl_workqueue_add_rate_limited(q, "k");
        want *= 2;
        if (want > 1000 * CTRL_SECOND)
            want = 1000 * CTRL_SECOND;
    }
    cr_assert_eq(ctrl_workqueue_when(q, "k"), 1000 * CTRL_SECOND);
    /* the second failure waits 10 ms, the third 20 ms... */
    ctrl_workqueue_forget(q, "k");
    cr_assert_eq(ctrl_workqueue_num_requeues(q, "k"), 0);
    cr_assert_eq(ctrl_workqueue_when(q, "k"), 5 * CTRL_MILLISECOND);
    ctrl_workqueue_add_rate_limited(q, "other");
    cr_assert_eq(ctrl_workqueue_when(q, "k"), 5 * CTRL_MILLISECOND, "failures are per key");
    ctrl_workqueue_stats st;
    ctrl_workqueue_stats_get(q, &st);
    cr_assert_eq(st.retries, 41);
    ctrl_workqueue_free(q);
}

Test(workqueue, rate_limited_add_waits_its_backoff)
{
    ctrl_workqueue *q = new_queue(&(ctrl_workqueue_options){.clock = &fake, .bucket_qps = -1});
    int64_t t0 = fc_now(&fc);
    ctrl_workqueue_add_rate_limited(q, "k");
    ctrl_workqueue_add_rate_limited(q, "j");
    ctrl_workqueue_add_rate_limited(q, "j");
    cr_assert_eq(ctrl_workqueue_len(q), 0);
    cr_assert_eq(ctrl_workqueue_next_deadline(q), t0 + 5 * CTRL_MILLISECOND);
    fc_advance(&fc, 5 * CTRL_MILLISECOND);
    cr_assert_eq(ctrl_workqueue_len(q), 2, "both k and j's first retry are due");
    expect_get(q, "k");
    expect_get(q, "j");
    ctrl_workqueue_free(q);
}

Test(workqueue, custom_backoff_bounds)
{
    ctrl_workqueue *q = new_queue(&(ctrl_workqueue_options){
        .base_delay_ns = CTRL_SECOND, .max_delay_ns = 3 * CTRL_SECOND, .bucket_qps = -1});
    cr_assert_eq(ctrl_workqueue_when(q, "k"), CTRL_SECOND);
    ctrl_workqueue_add_rate_limited(q, "k");
    cr_assert_eq(ctrl_workqueue_when(q, "k"), 2 * CTRL_SECOND);
    ctrl_workqueue_add_rate_limited(q, "k");
    cr_assert_eq(ctrl_workqueue_when(q, "k"), 3 * CTRL_SECOND);
    ctrl_workqueue_free(q);
}

Test(workqueue, token_bucket_limits_overall_rate)
{
    /* Default bucket: 10 qps, burst 100. A tiny per-item base so the bucket decides. */
    ctrl_workqueue *q =
        new_queue(&(ctrl_workqueue_options){.clock = &fake, .base_delay_ns = 1, .max_delay_ns = 1});
    char key[32];
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        cr_assert_eq(ctrl_workqueue_when(q, key), 1, "the burst is free");
        ctrl_workqueue_add_rate_limited(q, key);
    }
    int64_t t0 = fc_now(&fc);
    cr_assert_eq(ctrl_workqueue_when(q, "x"), 100 * CTRL_MILLISECOND);
    ctrl_workqueue_add_rate_limited(q, "x");
    cr_assert_eq(ctrl_workqueue_when(q, "y"), 200 * CTRL_MILLISECOND);
    fc_advance(&fc, 1);
    cr_assert_eq(ctrl_workqueue_len(q), 100);
    fc_advance(&fc, 100 * CTRL_MILLISECOND - 1);
    cr_assert_eq(ctrl_workqueue_when(q, "y"), 100 * CTRL_MILLISECOND, "tokens refill at 10/s");
    cr_assert_eq(ctrl_workqueue_len(q), 101, "x fired after 100 ms");
    (void)t0;
    /* The per-item backoff wins when it is longer. */
    ctrl_workqueue *q2 = new_queue(&(ctrl_workqueue_options){.clock = &fake});
    cr_assert_eq(ctrl_workqueue_when(q2, "z"), 5 * CTRL_MILLISECOND);
    ctrl_workqueue_free(q2);
    ctrl_workqueue_free(q);
}

Test(workqueue, shutdown_wakes_getters_and_ignores_adds)
{
    ctrl_workqueue *q = new_queue(NULL);
    getter g = {.q = q};
    pthread_t th;
    pthread_create(&th, NULL, getter_main, &g);
    real_sleep_ms(20);
    cr_assert_not(ctrl_workqueue_shutting_down(q));
    ctrl_workqueue_shutdown(q, false);
    pthread_join(th, NULL);
    cr_assert_eq(g.rc, CTRL_ERR_CANCELLED);
    cr_assert(ctrl_workqueue_shutting_down(q));
    ctrl_workqueue_add(q, "late");
    ctrl_workqueue_add_after(q, "late", CTRL_SECOND);
    ctrl_workqueue_add_rate_limited(q, "late");
    cr_assert_eq(ctrl_workqueue_len(q), 0);
    cr_assert_eq(ctrl_workqueue_next_deadline(q), INT64_MAX);
    char *k = NULL;
    cr_assert_eq(ctrl_workqueue_get(q, &k), CTRL_ERR_CANCELLED);
    cr_assert_null(k);
    ctrl_workqueue_free(q);
}

Test(workqueue, shutdown_without_drain_hands_out_nothing_more)
{
    ctrl_workqueue *q = new_queue(NULL);
    ctrl_workqueue_add(q, "a");
    ctrl_workqueue_shutdown(q, false);
    char *k = NULL;
    cr_assert_eq(ctrl_workqueue_get(q, &k), CTRL_ERR_CANCELLED);
    ctrl_workqueue_free(q);
}

typedef struct drainer {
    ctrl_workqueue *q;
    atomic_bool returned;
} drainer;

static void *drain_main(void *arg)
{
    drainer *d = arg;
    ctrl_workqueue_shutdown(d->q, true);
    atomic_store(&d->returned, true);
    return NULL;
}

Test(workqueue, shutdown_with_drain_waits_for_in_flight_items)
{
    ctrl_workqueue *q = new_queue(NULL);
    ctrl_workqueue_add(q, "a");
    ctrl_workqueue_add(q, "b");
    ctrl_workqueue_add_after(q, "delayed", CTRL_HOUR);
    char *a = get_key(q);
    drainer d = {.q = q};
    pthread_t th;
    pthread_create(&th, NULL, drain_main, &d);
    real_sleep_ms(20);
    cr_assert_not(atomic_load(&d.returned), "a is still being processed");
    expect_get(q, "b"); /* queued items are still handed out */
    ctrl_workqueue_done(q, a);
    real_sleep_ms(20);
    cr_assert_not(atomic_load(&d.returned), "b is still being processed");
    ctrl_workqueue_done(q, "b");
    pthread_join(th, NULL);
    cr_assert(atomic_load(&d.returned));
    char *k = NULL;
    cr_assert_eq(ctrl_workqueue_get(q, &k), CTRL_ERR_CANCELLED, "delayed adds are dropped");
    free(a);
    ctrl_workqueue_free(q);
}

/* ---- many threads: every key processed, never two workers on one key ---- */

#define NKEYS 64
#define NWORKERS 8
#define NPRODUCERS 4
#define ADDS_PER_PRODUCER 5000

typedef struct stress {
    ctrl_workqueue *q;
    atomic_int in_flight[NKEYS];
    atomic_int violations;
    atomic_long processed;
    atomic_int pending_after_last_add[NKEYS]; /* adds not yet followed by a get */
} stress;

static void *stress_worker(void *arg)
{
    stress *s = arg;
    char *k;
    while (ctrl_workqueue_get(s->q, &k) == 0) {
        int i = atoi(k + 1);
        atomic_store(&s->pending_after_last_add[i], 0);
        if (atomic_fetch_add(&s->in_flight[i], 1) != 0)
            atomic_fetch_add(&s->violations, 1);
        if (i % 7 == 0)
            sched_yield();
        atomic_fetch_sub(&s->in_flight[i], 1);
        atomic_fetch_add(&s->processed, 1);
        ctrl_workqueue_done(s->q, k);
        free(k);
    }
    return NULL;
}

static void *stress_producer(void *arg)
{
    stress *s = arg;
    unsigned seed = (unsigned)(uintptr_t)pthread_self();
    char key[16];
    for (int n = 0; n < ADDS_PER_PRODUCER; n++) {
        int i = rand_r(&seed) % NKEYS;
        snprintf(key, sizeof(key), "k%d", i);
        atomic_store(&s->pending_after_last_add[i], 1);
        ctrl_workqueue_add(s->q, key);
    }
    return NULL;
}

Test(workqueue, many_threads_one_worker_per_key)
{
    static stress s;
    memset(&s, 0, sizeof(s));
    s.q = new_queue(&(ctrl_workqueue_options){.name = "stress"});
    pthread_t w[NWORKERS], p[NPRODUCERS];
    for (int i = 0; i < NWORKERS; i++)
        pthread_create(&w[i], NULL, stress_worker, &s);
    for (int i = 0; i < NPRODUCERS; i++)
        pthread_create(&p[i], NULL, stress_producer, &s);
    for (int i = 0; i < NPRODUCERS; i++)
        pthread_join(p[i], NULL);
    /* Wait until the queue is empty and idle, then drain-stop the workers. */
    for (int i = 0; i < 5000 && (ctrl_workqueue_len(s.q) || ctrl_workqueue_processing(s.q)); i++)
        real_sleep_ms(1);
    ctrl_workqueue_shutdown(s.q, true);
    for (int i = 0; i < NWORKERS; i++)
        pthread_join(w[i], NULL);
    cr_assert_eq(atomic_load(&s.violations), 0, "a key was processed by two workers at once");
    cr_assert_gt(atomic_load(&s.processed), 0);
    cr_assert_leq(atomic_load(&s.processed), NPRODUCERS * ADDS_PER_PRODUCER);
    for (int i = 0; i < NKEYS; i++)
        cr_assert_eq(atomic_load(&s.pending_after_last_add[i]), 0,
                     "key k%d was added but never processed after", i);
    ctrl_workqueue_stats st;
    ctrl_workqueue_stats_get(s.q, &st);
    cr_assert_eq(st.work_count, (unsigned long)atomic_load(&s.processed));
    cr_assert_eq(st.depth, 0);
    ctrl_workqueue_free(s.q);
}

Test(workqueue, metrics_series)
{
    ctrl_metrics *m = NULL;
    cr_assert_eq(ctrl_metrics_new(&m), 0);
    ctrl_workqueue *q = new_queue(
        &(ctrl_workqueue_options){.name = "demo", .clock = &fake, .metrics = m, .bucket_qps = -1});
    ctrl_workqueue_add(q, "a");
    ctrl_workqueue_add(q, "a");
    ctrl_workqueue_add(q, "b");
    cr_assert_eq(ctrl_metrics_value(m, "workqueue_adds_total", "name=\"demo\""), 2);
    cr_assert_eq(ctrl_metrics_value(m, "workqueue_depth", "name=\"demo\",priority=\"0\""), 2);
    fc_advance(&fc, 2 * CTRL_SECOND);
    char *k = get_key(q);
    fc_advance(&fc, 3 * CTRL_SECOND);
    ctrl_workqueue_stats st;
    ctrl_workqueue_stats_get(q, &st);
    cr_assert_float_eq(st.queue_seconds_sum, 2.0, 1e-9);
    cr_assert_float_eq(st.unfinished_work_seconds, 3.0, 1e-9);
    cr_assert_float_eq(st.longest_running_seconds, 3.0, 1e-9);
    cr_assert_eq(ctrl_metrics_value(m, "workqueue_depth", "name=\"demo\",priority=\"0\""), 1);
    cr_assert_float_eq(
        ctrl_metrics_value(m, "workqueue_longest_running_processor_seconds", "name=\"demo\""), 3.0,
        1e-9);
    ctrl_workqueue_done(q, k);
    ctrl_workqueue_stats_get(q, &st);
    cr_assert_float_eq(st.work_seconds_sum, 3.0, 1e-9);
    cr_assert_eq(st.work_count, 1);
    ctrl_workqueue_add_rate_limited(q, "a");
    cr_assert_eq(ctrl_metrics_value(m, "workqueue_retries_total", "name=\"demo\""), 1);
    char *text = ctrl_metrics_text(m);
    cr_assert_not_null(text);
    cr_assert_not_null(strstr(text, "# TYPE workqueue_queue_duration_seconds histogram\n"));
    cr_assert_not_null(
        strstr(text, "workqueue_queue_duration_seconds_bucket{name=\"demo\",le=\"10\"} 1\n"));
    cr_assert_not_null(
        strstr(text, "workqueue_queue_duration_seconds_bucket{name=\"demo\",le=\"1\"} 0\n"));
    cr_assert_not_null(strstr(text, "workqueue_work_duration_seconds_count{name=\"demo\"} 1\n"));
    cr_assert_not_null(strstr(text, "workqueue_adds_total{name=\"demo\"} 2\n"));
    free(text);
    free(k);
    ctrl_workqueue_free(q);
    ctrl_metrics_free(m);
}

/* ---- priorities ---- */

static void add_prio(ctrl_workqueue *q, const char *key, int prio)
{
    ctrl_workqueue_add_with_opts(q, key, &(ctrl_workqueue_add_opts){.priority = prio});
}

static void expect_get_prio(ctrl_workqueue *q, const char *want, int want_prio)
{
    char *k = NULL;
    int prio = 12345;
    cr_assert_eq(ctrl_workqueue_get_with_priority(q, &k, &prio), 0);
    cr_assert_str_eq(k, want);
    cr_assert_eq(prio, want_prio, "%s: priority %d, want %d", k, prio, want_prio);
    ctrl_workqueue_done(q, k);
    free(k);
}

Test(workqueue, higher_priority_first_fifo_within_a_priority)
{
    ctrl_workqueue *q = new_queue(&(ctrl_workqueue_options){.name = "p"});
    add_prio(q, "low1", CTRL_PRIORITY_LOW);
    add_prio(q, "low2", CTRL_PRIORITY_LOW);
    ctrl_workqueue_add(q, "mid1"); /* priority 0 */
    add_prio(q, "high1", 10);
    add_prio(q, "low3", CTRL_PRIORITY_LOW);
    add_prio(q, "mid2", 0);
    add_prio(q, "high2", 10);
    for (int i = 0; i < 20; i++) { /* enough to exercise the heap's order */
        char k[16];
        snprintf(k, sizeof k, "z%02d", i);
        add_prio(q, k, -5);
    }
    cr_assert_eq(ctrl_workqueue_len(q), 27);
    expect_get_prio(q, "high1", 10);
    expect_get_prio(q, "high2", 10);
    expect_get_prio(q, "mid1", 0);
    expect_get_prio(q, "mid2", 0);
    for (int i = 0; i < 20; i++) {
        char k[16];
        snprintf(k, sizeof k, "z%02d", i);
        expect_get_prio(q, k, -5);
    }
    expect_get_prio(q, "low1", CTRL_PRIORITY_LOW);
    expect_get_prio(q, "low2", CTRL_PRIORITY_LOW);
    expect_get_prio(q, "low3", CTRL_PRIORITY_LOW);
    cr_assert_eq(ctrl_workqueue_len(q), 0);
    ctrl_workqueue_free(q);
}

Test(workqueue, dedup_keeps_the_higher_priority)
{
    ctrl_workqueue *q = new_queue(&(ctrl_workqueue_options){.name = "p"});
    add_prio(q, "a", CTRL_PRIORITY_LOW);
    add_prio(q, "b", 0);
    add_prio(q, "c", 0);
    add_prio(q, "a", 5);                 /* raised: one entry, now first */
    add_prio(q, "b", CTRL_PRIORITY_LOW); /* lower: ignored */
    cr_assert_eq(ctrl_workqueue_len(q), 3);
    ctrl_workqueue_stats st;
    ctrl_workqueue_stats_get(q, &st);
    cr_assert_eq(st.adds, 3, "the repeated adds were merged");
    expect_get_prio(q, "a", 5);
    expect_get_prio(q, "b", 0);
    expect_get_prio(q, "c", 0);
    cr_assert_eq(ctrl_workqueue_len(q), 0);
    ctrl_workqueue_free(q);
}

Test(workqueue, priority_of_a_key_added_while_processing)
{
    ctrl_workqueue *q = new_queue(NULL);
    add_prio(q, "k", 3);
    char *k = NULL;
    int prio = 0;
    cr_assert_eq(ctrl_workqueue_get_with_priority(q, &k, &prio), 0);
    cr_assert_eq(prio, 3);
    add_prio(q, "k", CTRL_PRIORITY_LOW);
    add_prio(q, "k", 1); /* the higher of the two re-adds */
    add_prio(q, "other", 0);
    ctrl_workqueue_done(q, k);
    free(k);
    expect_get_prio(q, "k", 1);
    expect_get_prio(q, "other", 0);
    /* Once handed out, a key's next add starts afresh (a low add stays low). */
    add_prio(q, "k", CTRL_PRIORITY_LOW);
    add_prio(q, "x", 0);
    expect_get_prio(q, "x", 0);
    expect_get_prio(q, "k", CTRL_PRIORITY_LOW);
    ctrl_workqueue_free(q);
}

Test(workqueue, delayed_and_rate_limited_adds_carry_their_priority)
{
    ctrl_workqueue *q =
        new_queue(&(ctrl_workqueue_options){.name = "p", .clock = &fake, .bucket_qps = -1});
    ctrl_workqueue_add_with_opts(
        q, "later", &(ctrl_workqueue_add_opts){.after_ns = CTRL_SECOND, .priority = 7});
    /* A second delayed add: earliest deadline, highest priority. */
    ctrl_workqueue_add_with_opts(
        q, "later", &(ctrl_workqueue_add_opts){.after_ns = 500 * CTRL_MILLISECOND, .priority = 2});
    ctrl_workqueue_add(q, "now");
    /* Rate-limited with an after: the sooner of the two (5 ms backoff). */
    ctrl_workqueue_add_with_opts(q, "retry",
                                 &(ctrl_workqueue_add_opts){.after_ns = 10 * CTRL_SECOND,
                                                            .rate_limited = true,
                                                            .priority = 4});
    cr_assert_eq(ctrl_workqueue_num_requeues(q, "retry"), 1);
    cr_assert_eq(ctrl_workqueue_len(q), 1);
    fc_advance(&fc, 500 * CTRL_MILLISECOND);
    cr_assert_eq(ctrl_workqueue_len(q), 3);
    expect_get_prio(q, "later", 7);
    expect_get_prio(q, "retry", 4);
    expect_get_prio(q, "now", 0);
    ctrl_workqueue_free(q);
}

Test(workqueue, depth_metric_by_priority)
{
    ctrl_metrics *m = NULL;
    cr_assert_eq(ctrl_metrics_new(&m), 0);
    ctrl_workqueue *q = new_queue(&(ctrl_workqueue_options){.name = "d", .metrics = m});
    cr_assert_eq(ctrl_metrics_value(m, "workqueue_depth", "name=\"d\",priority=\"0\""), 0);
    add_prio(q, "a", CTRL_PRIORITY_LOW);
    add_prio(q, "b", CTRL_PRIORITY_LOW);
    add_prio(q, "c", 0);
    cr_assert_eq(ctrl_metrics_value(m, "workqueue_depth", "name=\"d\",priority=\"-100\""), 2);
    cr_assert_eq(ctrl_metrics_value(m, "workqueue_depth", "name=\"d\",priority=\"0\""), 1);
    add_prio(q, "a", 0); /* raised: moves from one series to the other */
    cr_assert_eq(ctrl_metrics_value(m, "workqueue_depth", "name=\"d\",priority=\"-100\""), 1);
    cr_assert_eq(ctrl_metrics_value(m, "workqueue_depth", "name=\"d\",priority=\"0\""), 2);
    /* Raised, it keeps the place of its first add among its new equals. */
    expect_get_prio(q, "a", 0);
    expect_get_prio(q, "c", 0);
    expect_get_prio(q, "b", CTRL_PRIORITY_LOW);
    cr_assert_eq(ctrl_metrics_value(m, "workqueue_depth", "name=\"d\",priority=\"-100\""), 0);
    cr_assert_eq(ctrl_metrics_value(m, "workqueue_depth", "name=\"d\",priority=\"0\""), 0);
    char *text = ctrl_metrics_text(m);
    cr_assert_not_null(strstr(text, "workqueue_depth{name=\"d\",priority=\"-100\"} 0\n"), "%s",
                       text);
    free(text);
    ctrl_workqueue_free(q);
    ctrl_metrics_free(m);
}
