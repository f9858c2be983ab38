/*
 * scheduler.h - the deterministic scheduler: a virtual clock and one libctrl
 * thread running at a time, the next one picked by a seeded generator.
 *
 * DESIGN
 *  Every thread libctrl starts registers itself (ctrl_hooks.thread_start)
 *  and from then on runs only while it holds the turn. It gives the turn
 *  back at each blocking point: a wait on the clock (wait_until, sleep), a
 *  turn hook (before), or a wait for watch data (io_wait). Wake-ups go
 *  through the clock (ctrl_clock.notify), so the scheduler knows which
 *  waiters become ready, in a deterministic order.
 *
 *  The driver (the scenario's own thread) calls scn__sched_step(): it picks
 *  one ready actor with the seeded generator - a registered thread that is
 *  ready, or an outside actor the driver offers (a fakeapi watch with
 *  undelivered events) - gives it the turn and waits until it blocks again.
 *  When nothing is ready the system is quiescent; scn__sched_advance()
 *  then moves virtual time to the earliest deadline, waking what is due.
 *
 *  Lock: one mutex (sched->mu) guards every field; each registered thread
 *  waits for its turn on its own condition variable. A thread never holds
 *  its own mutex (the one passed to wait_until) while waiting for the turn.
 *
 *  Threads that never registered (the driver, test threads) may still use
 *  the clock: their waits end on notify or when virtual time passes the
 *  deadline, without taking turns.
 */
#ifndef SCN_SCHED_H
#define SCN_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrl/clock.h"
#include "fakeapi/fakeapi.h"

typedef struct scn__sched scn__sched;

/* start_ns: the virtual epoch (wall-clock nanoseconds the run starts at). */
scn__sched *scn__sched_new(uint64_t seed, int64_t start_ns);
void scn__sched_free(scn__sched *s);

/* The clock and hooks to give libctrl, and the clock to give fakeapi. They
 * point into s and live as long as it. */
const ctrl_clock *scn__sched_ctrl_clock(scn__sched *s);
const ctrl_hooks *scn__sched_ctrl_hooks(scn__sched *s);
/* Hooks for group id (created on first use; group 0 is scn__sched_ctrl_hooks):
 * one per manager replica, so that a crash can freeze just its threads. */
const ctrl_hooks *scn__sched_group_hooks(scn__sched *s, int id);
/* A crashed process: the group's threads never get the turn again, and their
 * deadlines no longer move the clock (they are stopped only by free_run). */
void scn__sched_freeze(scn__sched *s, int id);
const fakeapi_clock *scn__sched_fakeapi_clock(scn__sched *s);

int64_t scn__sched_now(scn__sched *s);

/*
 * Outside actors the driver offers at each step (fakeapi watches with
 * undelivered events): count() takes a snapshot of those ready now and
 * returns how many; thread(i) names the registered thread the i-th feeds
 * (it waits for watch data, io_wait); run(i) runs it (releases one line)
 * and returns 1, or 0 if nothing went out. Both index the snapshot of the
 * last count() (0-based, in a stable order). After a run, the driver waits
 * until that very thread has taken what it was sent (it leaves its io
 * wait: a line makes it call a hook, the end of a stream return from its
 * watch) before anything else is picked.
 */
typedef struct scn__outside {
    size_t (*count)(void *ud);
    const char *(*thread)(void *ud, size_t i);
    int (*run)(void *ud, size_t i);
    /* Answer a request the server holds (scn__sched_request_held). */
    int (*release_request)(void *ud, uint64_t id);
    void *ud;
} scn__outside;

/*
 * The server holds a request back (a delay fault) until it is released;
 * call from the server's thread while the client waits (fakeapi's
 * on_held). The running thread is its client: it leaves the turn and waits
 * off it; the virtual clock may move to due, and from then on answering it
 * is one of the driver's choices, after which the thread holds the turn
 * again (it runs from the moment its answer arrives until its next turn
 * point). During teardown the request is only noted.
 */
void scn__sched_request_held(scn__sched *s, uint64_t id, int64_t due);
/* Forget the held requests of frozen groups' threads (a crashed replica's,
 * never to be answered) and return how many; their ids go to ids (up to
 * max of them). The caller drops them at the server. */
size_t scn__sched_take_frozen_held(scn__sched *s, uint64_t *ids, size_t max);
void scn__sched_set_outside(scn__sched *s, const scn__outside *o);

/*
 * Run one actor: returns 1 if one ran (and has blocked again), 0 if nothing
 * is ready (quiescent), -1 if a thread failed to yield within the real-time
 * limit (its name is in the message: a libctrl thread blocking outside the
 * clock).
 */
int scn__sched_step(scn__sched *s, char *err, size_t errlen);

/*
 * Take steps until quiescent (0), until budget steps were taken or between
 * asked for the driver (1), or a thread failed to yield within the limit
 * (-1); *taken says how many. The same choices as calling
 * scn__sched_step() that many times, calling between(ud) after each step
 * and stopping when it returns true, but cheaper: the driver delegates,
 * and the thread that brings the run to rest takes the next step itself
 * (one wake-up a step, not two). between runs on whichever thread that is,
 * between turns (no actor runs): it may call into the server, it must not
 * block on the scheduler, and it must not change the run.
 */
int scn__sched_steps(scn__sched *s, long budget, bool (*between)(void *ud), void *ud,
                     long *taken, char *err, size_t errlen);
/* Run actors until quiescent, at most max_steps (-1 if exceeded). */
int scn__sched_run_until_quiet(scn__sched *s, long max_steps, char *err, size_t errlen);

/*
 * Move virtual time forward: to the earliest deadline of a waiting thread
 * or of extra_deadline (fakeapi's own timers), but not past limit_ns.
 * Returns the new time, or -1 when nothing is waiting on a deadline (time
 * would not matter).
 */
int64_t scn__sched_advance(scn__sched *s, int64_t extra_deadline, int64_t limit_ns);

/* Stop scheduling for good (teardown): every thread runs freely from now
 * on, and waits on the clock return after a short real-time nap, so that
 * stopping and joining threads cannot deadlock on turns. */
void scn__sched_free_run(scn__sched *s);

/* Move virtual time to t (>= now) unconditionally, waking what is due. */
void scn__sched_set_time(scn__sched *s, int64_t t);

/* True when the registered thread called name waits for watch data: only
 * then may the driver release a line to the watch it reads. */
bool scn__sched_io_waiting(scn__sched *s, const char *name);

/* Counters for reports and tests. */
typedef struct scn__sched_stats {
    unsigned long steps, thread_turns, outside_turns, advances;
    int64_t handoff_ns; /* real time the driver waited for actors to block again */
    size_t threads, ready, blocked, io_waiting;
} scn__sched_stats;
void scn__sched_stats_get(scn__sched *s, scn__sched_stats *out);

/* Real-time limit for one turn (default 20 s). */
void scn__sched_set_turn_limit_ms(scn__sched *s, long ms);

#endif
