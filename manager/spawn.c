/*
 * spawn.c - see spawn_int.h.
 *
 * DESIGN: threads are kept for reuse. A thread whose function has returned
 * and that has been joined (ctrl__join) waits, idle, for the next
 * ctrl__spawn instead of exiting: creating a thread and ending it cost
 * tens of microseconds (clone, stack set-up, exit), and a program that
 * starts and stops managers run after run (a scenario campaign) starts a
 * dozen threads a run. A reused thread looks new to what it runs: it takes
 * the spawner's CPU affinity, scheduling policy and signal mask, as
 * pthread_create would give them, its last failure (error.c) is cleared, and the scheduler hooks
 * see the same calls as for a new thread (thread_start, thread_exit; join begins and ends around
 * the wait). Its pthread_t is the handle, as for any thread: a pooled thread takes new work only
 * once joined, so a handle names one live task at a time.
 *
 * One mutex (pool_mu) guards the list of pooled threads and the idle list;
 * each thread has its own mutex and condition for the hand-over and the
 * join. At most POOL_IDLE_MAX threads wait idle; past that a joined thread
 * ends. In a child of fork() no pooled thread exists: the child forgets
 * them (pthread_atfork).
 */
#include "spawn_int.h"

#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "error_int.h"

#define POOL_IDLE_MAX 64

typedef struct spawn_arg {
    const ctrl_hooks *hooks;
    /* Whole, as scenarios/scheduler.c keeps it: a scenario's scheduler
     * matches watches to informer threads by name ("informer <user agent>
     * <apiVersion>/<Kind>"). 64 bytes cut longer names short, and their
     * watches never got an event released. */
    char name[256];
    void *(*fn)(void *);
    void *arg;
    cpu_set_t cpus; /* the spawner's */
    bool has_cpus;
    sigset_t sigmask; /* the spawner's */
    int policy;       /* the spawner's scheduling policy and priority */
    struct sched_param prio;
    bool has_policy;
} spawn_arg;

typedef struct pooled {
    struct pooled *next;      /* in pool_all */
    struct pooled *next_idle; /* in pool_idle */
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    spawn_arg task;
    bool has_task;  /* handed over, not yet done */
    bool done;      /* its task returned, not yet joined */
    bool quit;      /* end instead of waiting for work */
    cpu_set_t cpus; /* its affinity, as last set (has_cpus) */
    bool has_cpus;
    int policy; /* its scheduling policy and priority, as last set (has_policy) */
    struct sched_param prio;
    bool has_policy;
} pooled;

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static pooled *pool_all;
static pooled *pool_idle;
static size_t pool_idle_n;

static void run_task(pooled *t, const spawn_arg *a)
{
    if (a->has_cpus && (!t->has_cpus || !CPU_EQUAL(&t->cpus, &a->cpus))) {
        t->has_cpus = pthread_setaffinity_np(pthread_self(), sizeof a->cpus, &a->cpus) == 0;
        t->cpus = a->cpus;
    }
    if (a->has_policy && (!t->has_policy || t->policy != a->policy ||
                          t->prio.sched_priority != a->prio.sched_priority)) {
        t->has_policy = sched_setscheduler(0, a->policy, &a->prio) == 0;
        t->policy = a->policy;
        t->prio = a->prio;
    }
    pthread_sigmask(SIG_SETMASK, &a->sigmask, NULL);
    ctrl__failure_clear();
    if (a->hooks && a->hooks->thread_start)
        a->hooks->thread_start(a->hooks->ud, a->name);
    a->fn(a->arg);
    if (a->hooks && a->hooks->thread_exit)
        a->hooks->thread_exit(a->hooks->ud);
}

static void *pooled_main(void *p)
{
    pooled *t = p;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (!t->has_task && !t->quit)
            pthread_cond_wait(&t->cv, &t->mu);
        if (t->quit)
            break;
        spawn_arg a = t->task;
        pthread_mutex_unlock(&t->mu);
        run_task(t, &a);
        pthread_mutex_lock(&t->mu);
        t->has_task = false;
        t->done = true;
        pthread_cond_broadcast(&t->cv);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* In a child of fork(): the pooled threads stayed in the parent. */
static void pool_forget(void)
{
    pthread_mutex_init(&pool_mu, NULL);
    while (pool_all) {
        pooled *t = pool_all;
        pool_all = t->next;
        free(t);
    }
    pool_idle = NULL;
    pool_idle_n = 0;
}

static void pool_init(void)
{
    pthread_atfork(NULL, NULL, pool_forget);
}

/* A pooled thread for a, idle or new; NULL with *rc set on failure. */
static pooled *pool_take(const spawn_arg *a, int *rc)
{
    pthread_once(&pool_once, pool_init);
    pthread_mutex_lock(&pool_mu);
    pooled *t = pool_idle;
    if (t) {
        pool_idle = t->next_idle;
        pool_idle_n--;
    }
    pthread_mutex_unlock(&pool_mu);
    if (t) {
        pthread_mutex_lock(&t->mu);
        t->task = *a;
        t->has_task = true;
        pthread_cond_broadcast(&t->cv);
        pthread_mutex_unlock(&t->mu);
        return t;
    }
    if (!(t = calloc(1, sizeof *t))) {
        *rc = 12; /* ENOMEM */
        return NULL;
    }
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    t->task = *a;
    t->has_task = true;
    /* A new thread has its spawner's affinity and policy already. */
    t->cpus = a->cpus;
    t->has_cpus = a->has_cpus;
    t->policy = a->policy;
    t->prio = a->prio;
    t->has_policy = a->has_policy;
    if ((*rc = pthread_create(&t->tid, NULL, pooled_main, t)) != 0) {
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
        free(t);
        return NULL;
    }
    pthread_mutex_lock(&pool_mu);
    t->next = pool_all;
    pool_all = t;
    pthread_mutex_unlock(&pool_mu);
    return t;
}

int ctrl__spawn(pthread_t *t, const ctrl_hooks *hooks, const char *name, void *(*fn)(void *),
                void *arg)
{
    spawn_arg a = {.hooks = hooks, .fn = fn, .arg = arg};
    snprintf(a.name, sizeof a.name, "%s", name ? name : "thread");
    a.has_cpus = sched_getaffinity(0, sizeof a.cpus, &a.cpus) == 0;
    pthread_sigmask(SIG_BLOCK, NULL, &a.sigmask);
    /* The kernel's word (0: this thread): glibc's pthread_getschedparam
     * keeps its own copy, which sched_setscheduler does not update. */
    a.policy = sched_getscheduler(0);
    a.has_policy = a.policy >= 0 && sched_getparam(0, &a.prio) == 0;
    if (hooks && hooks->thread_spawn)
        hooks->thread_spawn(hooks->ud, +1);
    int rc = 0;
    pooled *p = pool_take(&a, &rc);
    if (!p) {
        if (hooks && hooks->thread_spawn)
            hooks->thread_spawn(hooks->ud, -1);
        return rc;
    }
    *t = p->tid;
    return 0;
}

/* The pooled thread whose handle is t, or NULL (not one of ours). */
static pooled *pool_find(pthread_t t)
{
    pthread_mutex_lock(&pool_mu);
    pooled *p = pool_all;
    while (p && !pthread_equal(p->tid, t))
        p = p->next;
    pthread_mutex_unlock(&pool_mu);
    return p;
}

/* t's task is joined: t waits for the next, or ends if enough wait. */
static void pool_give_back(pooled *t)
{
    pthread_mutex_lock(&pool_mu);
    bool keep = pool_idle_n < POOL_IDLE_MAX;
    if (keep) {
        t->next_idle = pool_idle;
        pool_idle = t;
        pool_idle_n++;
    } else {
        for (pooled **pp = &pool_all; *pp; pp = &(*pp)->next)
            if (*pp == t) {
                *pp = t->next;
                break;
            }
    }
    pthread_mutex_unlock(&pool_mu);
    if (keep)
        return;
    pthread_mutex_lock(&t->mu);
    t->quit = true;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->tid, NULL);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

int ctrl__join(const ctrl_hooks *hooks, pthread_t t)
{
    if (hooks && hooks->join)
        hooks->join(hooks->ud, &t, true);
    pooled *p = pool_find(t);
    int rc = 0;
    if (p) {
        pthread_mutex_lock(&p->mu);
        while (!p->done)
            pthread_cond_wait(&p->cv, &p->mu);
        p->done = false;
        pthread_mutex_unlock(&p->mu);
        pool_give_back(p);
    } else {
        rc = pthread_join(t, NULL);
    }
    if (hooks && hooks->join)
        hooks->join(hooks->ud, &t, false);
    return rc;
}
