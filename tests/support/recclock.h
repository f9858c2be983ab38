/*
 * recclock.h - a libctrl clock for transport tests that records every
 * sleep and moves its time by it, so retry back-offs and Retry-After waits
 * are seen without being waited for.
 *
 * Header only, one clock per test program (FC). Thread-safe.
 */
#ifndef TESTS_RECCLOCK_H
#define TESTS_RECCLOCK_H

#include <pthread.h>
#include <stdint.h>

#include "ctrl/clock.h"

typedef struct fake_clock {
    pthread_mutex_t mu;
    int64_t now;
    int64_t sleeps[64];
    int n;
} fake_clock;

static fake_clock FC = {.mu = PTHREAD_MUTEX_INITIALIZER, .now = 1000000000LL};

static int64_t fc_now(void *ud)
{
    fake_clock *c = ud;
    pthread_mutex_lock(&c->mu);
    int64_t n = c->now;
    pthread_mutex_unlock(&c->mu);
    return n;
}

static void fc_sleep(void *ud, int64_t ns)
{
    fake_clock *c = ud;
    pthread_mutex_lock(&c->mu);
    if (c->n < 64)
        c->sleeps[c->n++] = ns;
    c->now += ns;
    pthread_mutex_unlock(&c->mu);
}

static const ctrl_clock recording = {.now_ns = fc_now, .sleep_ns = fc_sleep, .ud = &FC};

#endif
