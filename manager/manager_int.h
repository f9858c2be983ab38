/*
 * manager_int.h - what the rest of libctrl (controllers, builder) needs
 * from the manager beyond ctrl/manager.h.
 *
 * Controllers register as runnables (ctrl_manager_add with start =
 * ctrl__controller_run, needs_leader unless the controller's options say
 * no_leader_election): the manager recognises them, asks them whether they
 * are idle and when their next timer fires (ctrl_manager_idle,
 * ctrl_manager_next_deadline, used by virtual clocks), refreshes their
 * gauges before a scrape, and frees them after the cache has stopped.
 * Anything else with timers or work registers an idle probe.
 *
 * Threads: every function here may be called from any thread.
 */
#ifndef CTRL_MANAGER_INT_H
#define CTRL_MANAGER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "ctrl/manager.h"

/* The manager's clock (never NULL: the options' clock copied, or the real
 * one) and turn hooks (NULL when none). Borrowed: live as long as mgr. */
const ctrl_clock *ctrl__manager_clock(ctrl_manager *mgr);
const ctrl_hooks *ctrl__manager_hooks(ctrl_manager *mgr);

/* The manager's logger (its options' level, format and sink), for the
 * controllers it runs; borrowed, lives as long as mgr. */
struct ctrl__logger;
const struct ctrl__logger *ctrl__manager_logger(ctrl_manager *mgr);

/* The manager's seed: the option, or a random draw when it was 0. */
uint64_t ctrl__manager_seed(ctrl_manager *mgr);

/* True once the manager has been asked to stop. */
bool ctrl__manager_stopping(ctrl_manager *mgr);

/*
 * Something whose quiescence the manager reports: idle() true when it has
 * no ready or running work; next_deadline() its earliest pending timer in
 * clock time (INT64_MAX for none). Both are called from any thread, with
 * no manager lock held, and must be thread-safe and quick. The probe is
 * copied; ud must outlive the manager (or be removed first).
 */
typedef struct ctrl__idle_probe {
    bool (*idle)(void *ud);
    int64_t (*next_deadline)(void *ud);
    void *ud;
} ctrl__idle_probe;

int ctrl__manager_add_probe(ctrl_manager *mgr, const ctrl__idle_probe *p);
/* Remove every probe with this ud (e.g. before freeing a controller). */
void ctrl__manager_remove_probe(ctrl_manager *mgr, void *ud);

/* Stop contexts (signal.c): a new one (NULL when out of memory), and
 * tripping it, which stops every manager started with it and every one
 * started with it later. Any thread (not async-signal-safe: signal.c trips
 * it from a thread that waits for the signals). */
ctrl_stop *ctrl__stop_new(void);
void ctrl__stop_trip(ctrl_stop *s);

#endif
