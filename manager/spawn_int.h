/*
 * spawn_int.h - starting libctrl threads so a deterministic scheduler can
 * see them (ctrl_hooks thread_spawn/start/exit), and waiting on condition
 * variables through the clock. Every thread libctrl creates goes through
 * ctrl__spawn().
 */
#ifndef CTRL_SPAWN_INT_H
#define CTRL_SPAWN_INT_H

#include <pthread.h>

#include "ctrl/clock.h"

/*
 * Start fn(arg) on a thread of its own named name (copied): a new thread,
 * or one whose last task was joined (spawn.c keeps them), with the
 * caller's CPU affinity and signal mask either way. fn must return (not
 * pthread_exit), and its thread is joined with ctrl__join only. hooks may
 * be NULL. Returns 0 or an errno value from pthread_create.
 */
int ctrl__spawn(pthread_t *t, const ctrl_hooks *hooks, const char *name, void *(*fn)(void *),
                void *arg);

/* pthread_join(t), telling hooks (which may be NULL) before and after. */
int ctrl__join(const ctrl_hooks *hooks, pthread_t t);

#endif
