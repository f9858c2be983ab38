/*
 * test_sched.c - the deterministic scheduler: one thread at a time, the
 * order from the seed, virtual time that jumps when everything waits.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "scheduler.h"

#define START_NS ((int64_t)1800000000 * CTRL_SECOND)

typedef struct world {
    scn__sched *s;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char log[4096];
    int items; /* producer/consumer */
    int running_now, max_running;
} world;

typedef struct actor {
    world *w;
    char name[16];
    int rounds;
    pthread_t t;
} actor;

static void note(world *w, const char *what)
{
    pthread_mutex_lock(&w->mu);
    strncat(w->log, what, sizeof w->log - strlen(w->log) - 1);
    strncat(w->log, " ", sizeof w->log - strlen(w->log) - 1);
    pthread_mutex_unlock(&w->mu);
}

/* Each round: take a turn, note it, sleep one virtual second. */
static void *worker(void *p)
{
    actor *a = p;
    const ctrl_hooks *h = scn__sched_ctrl_hooks(a->w->s);
    h->thread_start(h->ud, a->name);
    for (int i = 0; i < a->rounds; i++) {
        h->before(h->ud, "work", a->name, "");
        pthread_mutex_lock(&a->w->mu);
        a->w->running_now++;
        if (a->w->running_now > a->w->max_running)
            a->w->max_running = a->w->running_now;
        pthread_mutex_unlock(&a->w->mu);
        note(a->w, a->name);
        pthread_mutex_lock(&a->w->mu);
        a->w->running_now--;
        pthread_mutex_unlock(&a->w->mu);
        ctrl_clock_sleep(scn__sched_ctrl_clock(a->w->s), CTRL_SECOND);
    }
    h->thread_exit(h->ud);
    return NULL;
}

static void spawn(world *w, actor *a, const char *name, int rounds, void *(*fn)(void *))
{
    a->w = w;
    a->rounds = rounds;
    snprintf(a->name, sizeof a->name, "%s", name);
    const ctrl_hooks *h = scn__sched_ctrl_hooks(w->s);
    h->thread_spawn(h->ud, +1);
    cr_assert_eq(pthread_create(&a->t, NULL, fn, a), 0);
}

/* How drive() takes its steps: one scn__sched_step at a time, or
 * delegated to the threads (scn__sched_steps), handing back to the driver
 * after every step or only when quiet. */
typedef enum drive_mode { STEPWISE, DELEGATED, DELEGATED_EACH } drive_mode;
static drive_mode mode = STEPWISE;
static long betweens;

static bool count_between(void *ud)
{
    (void)ud;
    betweens++;
    return mode == DELEGATED_EACH;
}

/* Until quiet, in the current mode; returns the steps taken. */
static long until_quiet(world *w)
{
    char err[256];
    long steps = 0, taken;
    if (mode == STEPWISE) {
        int rc;
        while ((rc = scn__sched_step(w->s, err, sizeof err)) > 0)
            steps++;
        cr_assert_eq(rc, 0, "%s", err);
        return steps;
    }
    for (;;) {
        int rc = scn__sched_steps(w->s, 10000, count_between, NULL, &taken, err, sizeof err);
        cr_assert_geq(rc, 0, "%s", err);
        if (mode == DELEGATED_EACH && rc == 1)
            cr_assert_eq(taken, 1, "handed back after %ld steps, not 1", taken);
        steps += taken;
        if (rc == 0)
            return steps;
    }
}

/* Drive until every thread has exited; returns the virtual time taken. */
static int64_t drive(world *w)
{
    int64_t t0 = scn__sched_now(w->s);
    for (int i = 0; i < 1000; i++) {
        until_quiet(w);
        if (scn__sched_advance(w->s, INT64_MAX, INT64_MAX) < 0)
            break;
    }
    return scn__sched_now(w->s) - t0;
}

static void run_two(uint64_t seed, char *out, size_t len, int64_t *took)
{
    world w = {.s = scn__sched_new(seed, START_NS)};
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    actor a[3];
    spawn(&w, &a[0], "a", 5, worker);
    spawn(&w, &a[1], "b", 5, worker);
    spawn(&w, &a[2], "c", 5, worker);
    *took = drive(&w);
    for (int i = 0; i < 3; i++)
        pthread_join(a[i].t, NULL);
    cr_assert_eq(w.max_running, 1, "two threads ran at once");
    snprintf(out, len, "%s", w.log);
    scn__sched_free(w.s);
}

Test(sched, same_seed_same_order)
{
    char x[4096], y[4096];
    int64_t tx, ty;
    run_two(42, x, sizeof x, &tx);
    run_two(42, y, sizeof y, &ty);
    cr_assert_str_eq(x, y);
    cr_assert_eq(tx, ty);
}

Test(sched, different_seeds_explore_different_orders)
{
    char first[4096], other[4096];
    int64_t t;
    run_two(1, first, sizeof first, &t);
    int distinct = 0;
    for (uint64_t seed = 2; seed < 12; seed++) {
        run_two(seed, other, sizeof other, &t);
        distinct += strcmp(first, other) != 0;
    }
    cr_assert_gt(distinct, 0, "ten seeds all gave the order of seed 1: %s", first);
}

/* Delegated steps (the thread that comes to rest picks the next one) make
 * exactly the choices the driver makes step by step. */
Test(sched, delegated_steps_make_the_same_choices)
{
    for (uint64_t seed = 1; seed <= 30; seed++) {
        char a[4096], b[4096], c[4096];
        int64_t ta, tb, tc;
        mode = STEPWISE;
        run_two(seed, a, sizeof a, &ta);
        mode = DELEGATED;
        betweens = 0;
        run_two(seed, b, sizeof b, &tb);
        long delegated_betweens = betweens;
        mode = DELEGATED_EACH;
        run_two(seed, c, sizeof c, &tc);
        mode = STEPWISE;
        cr_assert_str_eq(a, b, "seed %llu", (unsigned long long)seed);
        cr_assert_str_eq(a, c, "seed %llu", (unsigned long long)seed);
        cr_assert_eq(ta, tb);
        cr_assert_eq(ta, tc);
        /* between() is asked at every rest point after a step: 15 turns
         * and the threads' starts, at least. */
        cr_assert_geq(delegated_betweens, 15, "between asked %ld times", delegated_betweens);
    }
}

Test(sched, virtual_time_jumps_and_costs_no_real_time)
{
    char log[4096];
    int64_t took;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run_two(7, log, sizeof log, &took);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* Five rounds of one-second sleeps, the three threads side by side. */
    cr_assert_eq(took, 5 * CTRL_SECOND, "virtual time %lld", (long long)took);
    double real = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_assert_lt(real, 4.0, "5 virtual seconds took %.2f s of real time", real);
    cr_assert_eq(strlen(log), 15 * 2, "every round ran: %s", log);
}

/* A consumer waiting on a condition variable through the clock; the
 * producer wakes it with notify. */
static void *consumer(void *p)
{
    actor *a = p;
    const ctrl_hooks *h = scn__sched_ctrl_hooks(a->w->s);
    const ctrl_clock *c = scn__sched_ctrl_clock(a->w->s);
    h->thread_start(h->ud, a->name);
    pthread_mutex_lock(&a->w->mu);
    for (int got = 0; got < a->rounds;) {
        while (a->w->items == 0)
            ctrl_clock_wait_until(c, &a->w->cv, &a->w->mu, INT64_MAX);
        a->w->items--;
        got++;
        strncat(a->w->log, "get ", sizeof a->w->log - strlen(a->w->log) - 1);
    }
    pthread_mutex_unlock(&a->w->mu);
    h->thread_exit(h->ud);
    return NULL;
}

static void *producer(void *p)
{
    actor *a = p;
    const ctrl_hooks *h = scn__sched_ctrl_hooks(a->w->s);
    const ctrl_clock *c = scn__sched_ctrl_clock(a->w->s);
    h->thread_start(h->ud, a->name);
    for (int i = 0; i < a->rounds; i++) {
        ctrl_clock_sleep(c, 10 * CTRL_MILLISECOND);
        pthread_mutex_lock(&a->w->mu);
        a->w->items++;
        strncat(a->w->log, "put ", sizeof a->w->log - strlen(a->w->log) - 1);
        ctrl_clock_notify(c, &a->w->cv);
        pthread_mutex_unlock(&a->w->mu);
    }
    h->thread_exit(h->ud);
    return NULL;
}

Test(sched, notify_wakes_waiters_through_the_scheduler)
{
    world w = {.s = scn__sched_new(3, START_NS)};
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    actor a[2];
    spawn(&w, &a[0], "consumer", 4, consumer);
    spawn(&w, &a[1], "producer", 4, producer);
    int64_t took = drive(&w);
    pthread_join(a[0].t, NULL);
    pthread_join(a[1].t, NULL);
    cr_assert_str_eq(w.log, "put get put get put get put get ");
    cr_assert_eq(took, 40 * CTRL_MILLISECOND);
    scn__sched_free(w.s);
}

/* A thread that blocks outside the clock is reported, not waited on forever. */
static void *stuck(void *p)
{
    actor *a = p;
    const ctrl_hooks *h = scn__sched_ctrl_hooks(a->w->s);
    h->thread_start(h->ud, a->name);
    pthread_mutex_lock(&a->w->mu);
    while (a->w->items == 0)
        pthread_cond_wait(&a->w->cv, &a->w->mu); /* not through the clock */
    pthread_mutex_unlock(&a->w->mu);
    h->thread_exit(h->ud);
    return NULL;
}

/* A world with one "stuck" thread, the turn limit at limit_ms. */
static void start_stuck(world *w, actor *a, long limit_ms)
{
    *w = (world){.s = scn__sched_new(3, START_NS)};
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    scn__sched_set_turn_limit_ms(w->s, limit_ms);
    spawn(w, a, "stuck", 1, stuck);
}

/* Let the stuck thread go, and end. */
static void end_stuck(world *w, actor *a)
{
    pthread_mutex_lock(&w->mu);
    w->items = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(a->t, NULL);
    scn__sched_free(w->s);
}

Test(sched, a_thread_blocking_outside_the_clock_is_reported)
{
    world w;
    actor a;
    start_stuck(&w, &a, 200);
    char err[256] = "";
    /* On a loaded machine the thread may not have registered within one
     * limit ("spawning: 1"): look again until it is the one reported. */
    for (int i = 0; i < 20; i++) {
        cr_assert_eq(scn__sched_run_until_quiet(w.s, 10, err, sizeof err), -1);
        if (strstr(err, "stuck"))
            break;
    }
    cr_assert(strstr(err, "stuck"), "%s", err);
    end_stuck(&w, &a);
}

/* Delegated steps: the thread picked blocks outside the clock, and the
 * driver, which took no step itself, still notices. */
Test(sched, delegated_a_thread_blocking_outside_the_clock_is_reported)
{
    world w;
    actor a;
    start_stuck(&w, &a, 300);
    char err[256] = "";
    long taken = 0;
    /* Until the thread has registered (a loaded machine may take longer
     * than one limit), then the step that picks it. */
    for (int i = 0; i < 20 && taken == 0; i++)
        cr_assert_eq(scn__sched_steps(w.s, 10, NULL, NULL, &taken, err, sizeof err), -1);
    cr_assert_eq(taken, 1, "%s", err);
    cr_assert(strstr(err, "no progress") && strstr(err, "[stuck: running]"), "%s", err);
    end_stuck(&w, &a);
}
