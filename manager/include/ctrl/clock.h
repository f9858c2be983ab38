/*
 * ctrl/clock.h - time and turns, replaceable for deterministic runs.
 *
 * Every delay in libctrl (retries, backoff, requeue-after, resync, lease
 * renewal, watch timeouts) goes through a ctrl_clock, so a scenario can run
 * days of it in milliseconds under a virtual clock. Every place where two
 * actors could race (an informer dispatching one event, a worker starting
 * one reconcile) calls ctrl_hooks.before/after, so a scheduler can let one
 * actor run at a time, in an order it picks from a seed.
 *
 * Threads: the callbacks are called from any libctrl thread at once and
 * must be thread-safe.
 */
#ifndef CTRL_CLOCK_H
#define CTRL_CLOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CTRL_MILLISECOND ((int64_t)1000000)
#define CTRL_SECOND ((int64_t)1000000000)
#define CTRL_MINUTE (60 * CTRL_SECOND)
#define CTRL_HOUR (60 * CTRL_MINUTE)

/*
 * A clock. now_ns is monotonic nanoseconds. sleep_ns waits (a virtual clock
 * returns when virtual time has passed). wait_until waits on cv, with mu
 * held (released while waiting, as pthread_cond_wait), until cv is signalled
 * or the clock reaches deadline_ns; a virtual clock must signal cv (holding
 * mu) when it advances past deadline_ns. Any callback may be NULL: the real
 * one is used.
 */
typedef struct ctrl_clock {
    int64_t (*now_ns)(void *ud);
    void (*sleep_ns)(void *ud, int64_t ns);
    void (*wait_until)(void *ud, pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ns);
    /* Wake every waiter on cv (NULL: pthread_cond_broadcast). A scheduler that
     * runs one thread at a time needs to see every wake-up: libctrl never
     * signals a condition variable any other way. */
    void (*notify)(void *ud, pthread_cond_t *cv);
    void *ud;
} ctrl_clock;

/* The clock's time (real monotonic when clock or now_ns is NULL). */
int64_t ctrl_clock_now(const ctrl_clock *clock);
void ctrl_clock_sleep(const ctrl_clock *clock, int64_t ns);
/* See ctrl_clock.wait_until; deadline INT64_MAX waits for the signal only. */
void ctrl_clock_wait_until(const ctrl_clock *clock, pthread_cond_t *cv, pthread_mutex_t *mu,
                           int64_t deadline_ns);
/* Wake every waiter on cv (call with the waiters' mutex held). */
void ctrl_clock_notify(const ctrl_clock *clock, pthread_cond_t *cv);
/* Wall-clock time for timestamps written to the API (Lease renewTime,
 * Event times): the clock's time when it is virtual, real time otherwise. */
int64_t ctrl_clock_wall_ns(const ctrl_clock *clock);

/*
 * Turn hooks. before() is called by an actor just before it runs and may
 * block until the embedder lets it go; after() when it has finished.
 * actor_kind is "reconcile", "event", "list" or "lease"; actor is the
 * controller, informer or lock name; key is "namespace/name" (or "").
 *
 * For a scheduler that runs one libctrl thread at a time: the creator of a
 * thread calls thread_spawn(+1) just before pthread_create (and
 * thread_spawn(-1) if that fails); the new thread calls thread_start()
 * first (it may block until scheduled) and thread_exit() last. A thread
 * that has a watch stream open and is about to wait for its data (which only
 * the server decides to send) calls io_wait(true); it calls io_wait(false)
 * when the stream ended (it may block until scheduled). Each line it reads
 * from the stream (events, bookmarks, errors) passes before()/after() with
 * actor_kind "event". All callbacks may be NULL.
 *
 * libctrl's own helpers (manager/spawn_int.h) do all of this; see
 * ctrl__spawn().
 */
typedef struct ctrl_hooks {
    void (*before)(void *ud, const char *actor_kind, const char *actor, const char *key);
    void (*after)(void *ud, const char *actor_kind, const char *actor, const char *key);
    void (*thread_spawn)(void *ud, int delta);
    void (*thread_start)(void *ud, const char *name);
    void (*thread_exit)(void *ud);
    void (*io_wait)(void *ud, bool waiting);
    /* A thread about to pthread_join(*target) calls join(begin = true), and
     * join(begin = false) once joined (it may block until scheduled). */
    void (*join)(void *ud, const pthread_t *target, bool begin);
    void *ud;
} ctrl_hooks;

#ifdef __cplusplus
}
#endif

#endif
