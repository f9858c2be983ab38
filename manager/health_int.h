/*
 * health_int.h - health and readiness checks for the manager's probe
 * endpoints (/healthz, /readyz), answered as controller-runtime's healthz
 * handler answers them.
 *
 * Threads: a set (ctrl__checks) may be added to from any thread and
 * answered from the probe server's thread at the same time; its own lock is
 * a leaf. ctrl__health_answer is reentrant.
 */
#ifndef CTRL_HEALTH_INT_H
#define CTRL_HEALTH_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "ctrl/manager.h"
#include "httpserver_int.h"

/* A named health check (see ctrl_manager_add_healthz). */
typedef struct ctrl__check {
    const char *name;
    ctrl_check_fn fn;
    void *user;
} ctrl__check;

/* A named set of checks (the caller allocates it; init/deinit). */
typedef struct ctrl__checks {
    pthread_mutex_t mu; /* guards v, n, cap */
    ctrl__check *v;     /* names owned */
    size_t n, cap;
} ctrl__checks;

void ctrl__checks_init(ctrl__checks *c);
/* Frees the names; no answer may be in progress. */
void ctrl__checks_deinit(ctrl__checks *c);
/* Add a check (name copied). CTRL_ERR_ARG: no name, a '/' in it, no fn, a
 * check of that name already there, or 256 checks; CTRL_ERR_NOMEM. */
int ctrl__checks_add(ctrl__checks *c, const char *name, ctrl_check_fn fn, void *user);
/* ctrl__health_answer for the set's checks at this moment. */
void ctrl__checks_answer(ctrl__checks *c, const char *sub, bool verbose, const char *exclude,
                         ctrl__http_reply *out);

/*
 * Answer a health endpoint as controller-runtime's healthz.Handler does.
 * sub is the path after "/healthz" or "/readyz" ("" or "/" for the whole
 * set, "/<name>" for one check). verbose: list every check. exclude: a
 * check name to skip (NULL = none). No checks at all means one "ping"
 * check that always passes.
 */
void ctrl__health_answer(const ctrl__check *checks, size_t n, const char *sub, bool verbose,
                         const char *exclude, ctrl__http_reply *out);

#endif
