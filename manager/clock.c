/*
 * clock.c - the real clock behind ctrl_clock's NULL callbacks.
 */
#include "ctrl/clock.h"

#include <errno.h>
#include <time.h>

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * CTRL_SECOND + ts.tv_nsec;
}

int64_t ctrl_clock_now(const ctrl_clock *clock)
{
    return clock && clock->now_ns ? clock->now_ns(clock->ud) : mono_ns();
}

void ctrl_clock_sleep(const ctrl_clock *clock, int64_t ns)
{
    if (clock && clock->sleep_ns) {
        clock->sleep_ns(clock->ud, ns);
        return;
    }
    if (ns <= 0)
        return;
    struct timespec ts = {.tv_sec = ns / CTRL_SECOND, .tv_nsec = ns % CTRL_SECOND};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

void ctrl_clock_wait_until(const ctrl_clock *clock, pthread_cond_t *cv, pthread_mutex_t *mu,
                           int64_t deadline_ns)
{
    if (clock && clock->wait_until) {
        clock->wait_until(clock->ud, cv, mu, deadline_ns);
        return;
    }
    if (deadline_ns == INT64_MAX) {
        pthread_cond_wait(cv, mu);
        return;
    }
    /* Condition variables here use CLOCK_REALTIME: convert the remaining time. */
    int64_t left = deadline_ns - ctrl_clock_now(clock);
    if (left <= 0)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = ts.tv_nsec + left % CTRL_SECOND;
    ts.tv_sec += (time_t)(left / CTRL_SECOND + ns / CTRL_SECOND);
    ts.tv_nsec = ns % CTRL_SECOND;
    pthread_cond_timedwait(cv, mu, &ts);
}

int64_t ctrl_clock_wall_ns(const ctrl_clock *clock)
{
    if (clock && clock->now_ns)
        return clock->now_ns(clock->ud);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * CTRL_SECOND + ts.tv_nsec;
}

void ctrl_clock_notify(const ctrl_clock *clock, pthread_cond_t *cv)
{
    if (clock && clock->notify)
        clock->notify(clock->ud, cv);
    else
        pthread_cond_broadcast(cv);
}
