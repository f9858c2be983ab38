/*
 * test_spawn.c - libctrl's threads (manager/spawn.c): a joined thread is
 * reused by the next spawn, and what it runs sees what a new thread would:
 * the spawner's CPU affinity, scheduling policy and signal mask, the hooks
 * called in order; a child of fork() spawns threads of its own.
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../../manager/spawn_int.h"

typedef struct seen {
    pthread_t self;
    pid_t tid; /* the kernel's thread id: a new thread has a new one */
    cpu_set_t cpus;
    bool usr1_blocked;
    int policy;
    int ran;
} seen;

static void *look(void *p)
{
    seen *s = p;
    s->self = pthread_self();
    s->tid = gettid();
    sched_getaffinity(0, sizeof s->cpus, &s->cpus);
    sigset_t m;
    pthread_sigmask(SIG_BLOCK, NULL, &m);
    s->usr1_blocked = sigismember(&m, SIGUSR1) == 1;
    s->policy = sched_getscheduler(0);
    s->ran++;
    return NULL;
}

static seen spawn_and_join(const ctrl_hooks *hooks)
{
    seen s = {0};
    pthread_t t;
    cr_assert_eq(ctrl__spawn(&t, hooks, "look", look, &s), 0);
    cr_assert_eq(ctrl__join(hooks, t), 0);
    cr_assert_eq(s.ran, 1);
    cr_assert(pthread_equal(t, s.self), "the handle names the thread that ran");
    return s;
}

Test(spawn, joined_thread_is_reused_with_the_spawners_mask_and_affinity)
{
    seen first = spawn_and_join(NULL);
    seen again = spawn_and_join(NULL);
    cr_assert_eq(first.tid, again.tid, "a joined thread runs the next spawn");
    cr_assert_neq(first.tid, gettid());

    /* Signal mask: a new thread's is its spawner's, and so is a reused one's. */
    sigset_t usr1, old;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, &old);
    cr_assert(spawn_and_join(NULL).usr1_blocked);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    cr_assert(!spawn_and_join(NULL).usr1_blocked);

    /* Scheduling policy: SCHED_BATCH, then SCHED_OTHER again. */
    struct sched_param none = {0};
    cr_assert_eq(sched_setscheduler(0, SCHED_BATCH, &none), 0);
    cr_assert_eq(spawn_and_join(NULL).policy, SCHED_BATCH);
    cr_assert_eq(sched_setscheduler(0, SCHED_OTHER, &none), 0);
    seen other = spawn_and_join(NULL);
    cr_assert_eq(other.policy, SCHED_OTHER);
    cr_assert_eq(other.tid, first.tid, "still the same thread");

    /* Affinity: pinned to one CPU, then back to all of them. */
    cpu_set_t all;
    cr_assert_eq(sched_getaffinity(0, sizeof all, &all), 0);
    if (CPU_COUNT(&all) < 2)
        return;
    int cpu = -1;
    for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
        if (CPU_ISSET(i, &all))
            cpu = i;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    cr_assert_eq(sched_setaffinity(0, sizeof one, &one), 0);
    seen pinned = spawn_and_join(NULL);
    cr_assert_eq(sched_setaffinity(0, sizeof all, &all), 0);
    seen unpinned = spawn_and_join(NULL);
    cr_assert(CPU_EQUAL(&pinned.cpus, &one));
    cr_assert(CPU_EQUAL(&unpinned.cpus, &all));
}

/* The hooks of a deterministic scheduler see a reused thread as a new one:
 * spawn, then start and exit on the thread, and the join ends after the
 * exit (the join may begin before the thread starts). */
typedef struct calls {
    int spawns, starts, exits, join_begins, join_ends;
    char name[64];
    pthread_t started;
    bool order_ok;
} calls;

static void h_spawn(void *ud, int delta)
{
    ((calls *)ud)->spawns += delta;
}

static void h_start(void *ud, const char *name)
{
    calls *c = ud;
    c->started = pthread_self();
    snprintf(c->name, sizeof c->name, "%s", name);
    c->starts++;
}

static void h_exit(void *ud)
{
    ((calls *)ud)->exits++;
}

static void h_join(void *ud, const pthread_t *t, bool begin)
{
    calls *c = ud;
    if (begin) {
        c->join_begins++;
        return;
    }
    c->join_ends++;
    if (!pthread_equal(*t, c->started) || c->exits != c->join_ends || c->starts != c->exits)
        c->order_ok = false;
}

Test(spawn, hooks_called_for_each_task)
{
    calls c = {.order_ok = true};
    ctrl_hooks h = {.ud = &c,
                    .thread_spawn = h_spawn,
                    .thread_start = h_start,
                    .thread_exit = h_exit,
                    .join = h_join};
    spawn_and_join(&h);
    spawn_and_join(&h);
    cr_assert(c.order_ok);
    cr_assert_eq(c.spawns, 2);
    cr_assert_eq(c.starts, 2);
    cr_assert_eq(c.exits, 2);
    cr_assert_eq(c.join_begins, 2);
    cr_assert_eq(c.join_ends, 2);
    cr_assert_str_eq(c.name, "look");
}

/* Many at once, more than are kept idle: each runs once, all are joined. */
Test(spawn, many_threads_at_once)
{
    enum { N = 100 };
    static seen s[N];
    pthread_t t[N];
    for (int round = 0; round < 2; round++) {
        memset(s, 0, sizeof s);
        for (int i = 0; i < N; i++)
            cr_assert_eq(ctrl__spawn(&t[i], NULL, "many", look, &s[i]), 0);
        for (int i = 0; i < N; i++)
            cr_assert_eq(ctrl__join(NULL, t[i]), 0);
        for (int i = 0; i < N; i++)
            cr_assert_eq(s[i].ran, 1);
    }
}

/* A child of fork() has none of its parent's idle threads: it makes its own. */
Test(spawn, child_of_fork_spawns)
{
    spawn_and_join(NULL); /* one idle thread in the parent */
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        seen s = {0};
        pthread_t t;
        if (ctrl__spawn(&t, NULL, "child", look, &s) != 0 || ctrl__join(NULL, t) != 0 || s.ran != 1)
            _exit(1);
        _exit(0);
    }
    int status = 0;
    alarm(20); /* a child that hangs fails the test instead of the suite */
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    alarm(0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
}
