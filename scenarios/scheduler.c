/*
 * scheduler.c - the deterministic scheduler (see scheduler.h for the design).
 */
#include "scheduler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum tstate {
    T_READY = 0, /* wants the turn */
    T_RUNNING,   /* holds the turn */
    T_BLOCKED,   /* waits on a condition (wait_cv) and/or a deadline */
    T_IO,        /* waits for watch data only the server releases */
    T_JOIN,      /* in pthread_join, waiting for another registered thread to end */
    T_SRV,       /* its request is held by the server (a delay), until released */
} tstate;

typedef struct sgroup sgroup;

/* The driver's delegation (scn__sched_steps): while active, the thread that
 * brings the run to rest takes the next step itself, so a step costs one
 * wake-up (of the thread picked) instead of two (of it, then of the driver
 * to pick again). */
typedef struct schain {
    bool active;
    bool busy; /* a thread is choosing the next step (mu let go around the count) */
    bool kick; /* rest was reached where no step may be taken: the driver takes it */
    long budget, taken;
    bool (*between)(void *ud);
    void *ud;
    int rc; /* what scn__sched_steps returns once inactive */
} schain;

typedef struct sthread {
    scn__sched *s;
    sgroup *group; /* the hooks it was started with */
    pthread_t tid;
    struct sthread *join_target; /* T_JOIN: the thread it waits for, NULL once it ended */
    char name[256];
    tstate state;
    bool granted;
    pthread_cond_t turn;     /* waits here for the turn */
    pthread_cond_t *wait_cv; /* T_BLOCKED: the condition notify wakes, or NULL */
    int64_t deadline;        /* T_BLOCKED: INT64_MAX = none */
    unsigned long io_leaves; /* times it left T_IO (took a line, or its stream ended) */
    struct sthread *next;
} sthread;

/* A request the server holds (a delay fault), due at a virtual time, and
 * the thread that waits for its answer (NULL: an unregistered client). */
typedef struct sheld {
    uint64_t id;
    int64_t due;
    struct sthread *t;
    struct sheld *next;
} sheld;

/* A thread that never registered, waiting on the virtual clock. */
typedef struct ext_wait {
    pthread_cond_t *cv;
    pthread_cond_t wake;
    int64_t deadline;
    bool woken;
    struct ext_wait *next;
} ext_wait;

/* Threads started through one hooks struct: one manager replica. A frozen
 * group's threads never get the turn again (a crashed process). */
struct sgroup {
    scn__sched *s;
    int id;
    bool frozen;
    ctrl_hooks hooks;
    struct sgroup *next;
};

struct scn__sched {
    pthread_mutex_t mu;
    pthread_cond_t driver; /* the running thread yielded, a thread registered or exited */
    sthread *threads;      /* every registered thread */
    sthread *running;
    int spawning;     /* threads created but not yet registered */
    int joins_waking; /* joiners whose thread ended, not yet back for a turn */
    /* An outside actor ran: the thread it fed must leave T_IO (io_leaves
     * past awaited_leaves) before anything else is picked. NULL = none. */
    sthread *awaited;
    unsigned long awaited_leaves;
    sheld *held; /* requests the server holds, in id order */
    sgroup *groups;
    int64_t now;
    uint64_t rng[4];
    ext_wait *ext;
    ctrl_clock cc;
    fakeapi_clock fc;
    scn__outside outside;
    long turn_limit_ms;
    bool free_run; /* teardown: no more turns, threads run as they please */
    schain chain;
    scn__sched_stats stats;
};

static __thread sthread *self;

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* xoshiro256**, seeded through splitmix64: the run's only source of choice. */
static uint64_t rng_next(scn__sched *s)
{
    uint64_t *r = s->rng, out = rotl(r[1] * 5, 7) * 9, t = r[1] << 17;
    r[2] ^= r[0];
    r[3] ^= r[1];
    r[1] ^= r[2];
    r[0] ^= r[3];
    r[2] ^= t;
    r[3] = rotl(r[3], 45);
    return out;
}

static void rng_seed(scn__sched *s, uint64_t seed)
{
    for (int i = 0; i < 4; i++) {
        uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        s->rng[i] = z ^ (z >> 31);
    }
}

static void chain_advance_locked(scn__sched *s);

/* True while the thread an outside actor fed has not taken what it got. */
static bool awaiting_locked(const scn__sched *s)
{
    return s->awaited && s->awaited->io_leaves == s->awaited_leaves;
}

/* At rest (s->mu held): no thread runs, every spawned thread has
 * registered, the released line (if any) has reached its thread. */
static bool at_rest_locked(const scn__sched *s)
{
    return !s->running && s->spawning <= 0 && !awaiting_locked(s) && s->joins_waking <= 0;
}

/* Something the driver waits for may have changed (s->mu held). While the
 * driver has delegated its steps, the change that brings the run to rest
 * takes the next step: on this thread when it may call into the server
 * (here), else by waking the driver to take it (a change made inside the
 * server, which a step would re-enter). */
static void changed_locked(scn__sched *s, bool here)
{
    if (!s->chain.active || s->free_run) {
        pthread_cond_broadcast(&s->driver);
        return;
    }
    if (!at_rest_locked(s) || s->chain.busy)
        return;
    if (here) {
        chain_advance_locked(s);
    } else {
        s->chain.kick = true;
        pthread_cond_broadcast(&s->driver);
    }
}

/* ---- thread side ---- */

/* Give the turn back and wait to get it again. Called with s->mu held. */
static void yield_locked(scn__sched *s, sthread *t, tstate state)
{
    t->state = state;
    t->granted = false;
    if (s->running == t)
        s->running = NULL;
    changed_locked(s, true);
    while (!t->granted && !s->free_run)
        pthread_cond_wait(&t->turn, &s->mu);
    t->state = T_RUNNING;
    s->running = t;
}

static void wake_ext_locked(scn__sched *s, pthread_cond_t *cv, bool by_time)
{
    for (ext_wait *w = s->ext; w; w = w->next) {
        if ((cv && w->cv == cv) || (by_time && w->deadline <= s->now)) {
            w->woken = true;
            pthread_cond_signal(&w->wake);
        }
    }
}

static scn__sched *sched_of(void *ud)
{
    return ((sgroup *)ud)->s;
}

static int64_t v_now(void *ud)
{
    scn__sched *s = ud;
    pthread_mutex_lock(&s->mu);
    int64_t now = s->now;
    pthread_mutex_unlock(&s->mu);
    return now;
}

/* An unregistered thread: wait for notify or virtual time, no turns. */
static void ext_wait_until(scn__sched *s, pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline)
{
    ext_wait w = {.cv = cv, .deadline = deadline};
    pthread_cond_init(&w.wake, NULL);
    pthread_mutex_lock(&s->mu);
    w.next = s->ext;
    s->ext = &w;
    if (mu)
        pthread_mutex_unlock(mu);
    while (!w.woken && s->now < deadline) {
        if (!s->free_run) {
            pthread_cond_wait(&w.wake, &s->mu);
            continue;
        }
        /* Winding down: time no longer moves, so look again now and then.
         * A millisecond, not more: a thread that stops through a few timed
         * waits (retry back-offs, rate-limited requeues) that nothing
         * notifies paid 20 ms each, 110 ms a seed of replicaset-faults. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 1000000;
        if (ts.tv_nsec >= 1000000000)
            ts.tv_sec++, ts.tv_nsec -= 1000000000;
        if (pthread_cond_timedwait(&w.wake, &s->mu, &ts) == ETIMEDOUT) {
            /* Time moves as waits run out, so timed loops end too. */
            if (deadline > s->now && deadline != INT64_MAX)
                s->now = deadline;
            break;
        }
    }
    for (ext_wait **p = &s->ext; *p; p = &(*p)->next) {
        if (*p == &w) {
            *p = w.next;
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
    pthread_cond_destroy(&w.wake);
    if (mu)
        pthread_mutex_lock(mu);
}

static void v_wait_until(void *ud, pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline)
{
    scn__sched *s = ud;
    sthread *t = self;
    if (!t || t->s != s || s->free_run) {
        ext_wait_until(s, cv, mu, deadline);
        return;
    }
    pthread_mutex_lock(&s->mu);
    if (deadline <= s->now) {
        pthread_mutex_unlock(&s->mu);
        return;
    }
    t->wait_cv = cv;
    t->deadline = deadline;
    /* Never hold the caller's mutex while waiting for the turn. */
    if (mu)
        pthread_mutex_unlock(mu);
    yield_locked(s, t, T_BLOCKED);
    t->wait_cv = NULL;
    t->deadline = INT64_MAX;
    pthread_mutex_unlock(&s->mu);
    if (mu)
        pthread_mutex_lock(mu);
}

static void v_sleep(void *ud, int64_t ns)
{
    scn__sched *s = ud;
    v_wait_until(ud, NULL, NULL, v_now(s) + (ns > 0 ? ns : 0));
}

static void v_notify(void *ud, pthread_cond_t *cv)
{
    scn__sched *s = ud;
    pthread_mutex_lock(&s->mu);
    for (sthread *t = s->threads; t; t = t->next)
        if (t->state == T_BLOCKED && t->wait_cv == cv)
            t->state = T_READY;
    wake_ext_locked(s, cv, false);
    pthread_mutex_unlock(&s->mu);
    pthread_cond_broadcast(cv); /* threads waiting on cv outside the clock */
}

static void h_spawn(void *ud, int delta)
{
    scn__sched *s = sched_of(ud);
    pthread_mutex_lock(&s->mu);
    s->spawning += delta;
    changed_locked(s, true);
    pthread_mutex_unlock(&s->mu);
}

static void h_thread_start(void *ud, const char *name)
{
    scn__sched *s = sched_of(ud);
    sthread *t = calloc(1, sizeof *t);
    if (!t)
        abort(); /* a scheduler that lost a thread cannot go on */
    t->s = s;
    t->group = ud;
    t->tid = pthread_self();
    snprintf(t->name, sizeof t->name, "%s", name ? name : "thread");
    t->deadline = INT64_MAX;
    pthread_cond_init(&t->turn, NULL);
    self = t;
    pthread_mutex_lock(&s->mu);
    /* Keep the list sorted by name: a new thread's place never depends on
     * when exactly it got to register. */
    sthread **p = &s->threads;
    while (*p && strcmp((*p)->name, t->name) <= 0)
        p = &(*p)->next;
    t->next = *p;
    *p = t;
    s->spawning--;
    yield_locked(s, t, T_READY);
    pthread_mutex_unlock(&s->mu);
}

static void h_thread_exit(void *ud)
{
    scn__sched *s = sched_of(ud);
    sthread *t = self;
    if (!t)
        return;
    pthread_mutex_lock(&s->mu);
    /* Whoever joins this thread will be back for a turn: wait for it. */
    for (sthread *j = s->threads; j; j = j->next) {
        if (j->state == T_JOIN && j->join_target == t) {
            j->join_target = NULL;
            s->joins_waking++;
        }
    }
    for (sthread **p = &s->threads; *p; p = &(*p)->next) {
        if (*p == t) {
            *p = t->next;
            break;
        }
    }
    if (s->running == t)
        s->running = NULL;
    if (s->awaited == t)
        s->awaited = NULL; /* it ended: that is its reaction */
    for (sheld *h = s->held; h; h = h->next)
        if (h->t == t)
            h->t = NULL;
    changed_locked(s, true);
    pthread_mutex_unlock(&s->mu);
    pthread_cond_destroy(&t->turn);
    free(t);
    self = NULL;
}

/* A turn point: a registered thread waits here to be picked. */
static void h_before(void *ud, const char *kind, const char *actor, const char *key)
{
    (void)actor, (void)key;
    scn__sched *s = sched_of(ud);
    sthread *t = self;
    if (!t || t->s != s)
        return;
    pthread_mutex_lock(&s->mu);
    if (t->state == T_IO)
        t->io_leaves++; /* a line from its watch has arrived */
    yield_locked(s, t, T_READY);
    pthread_mutex_unlock(&s->mu);
}

static void h_io_wait(void *ud, bool waiting)
{
    scn__sched *s = sched_of(ud);
    sthread *t = self;
    if (!t || t->s != s)
        return;
    pthread_mutex_lock(&s->mu);
    if (waiting) {
        /* Off the turn until the server sends something (released by the driver). */
        t->state = T_IO;
        t->granted = false;
        if (s->running == t)
            s->running = NULL;
        changed_locked(s, true);
    } else {
        if (t->state == T_IO)
            t->io_leaves++; /* the end of its stream */
        yield_locked(s, t, T_READY);
    }
    pthread_mutex_unlock(&s->mu);
}

static void h_join(void *ud, const pthread_t *target, bool begin)
{
    scn__sched *s = sched_of(ud);
    sthread *t = self;
    if (!t || t->s != s)
        return;
    pthread_mutex_lock(&s->mu);
    if (begin) {
        sthread *tt = NULL;
        for (sthread *x = s->threads; x && !tt; x = x->next)
            if (pthread_equal(x->tid, *target))
                tt = x;
        if (tt) {
            /* Off the turn while the other thread runs to its end. */
            t->join_target = tt;
            t->state = T_JOIN;
            t->granted = false;
            if (s->running == t)
                s->running = NULL;
            changed_locked(s, true);
        }
    } else if (t->state == T_JOIN) {
        if (s->joins_waking > 0)
            s->joins_waking--;
        t->join_target = NULL;
        yield_locked(s, t, T_READY);
    }
    pthread_mutex_unlock(&s->mu);
}

/* ---- driver side ---- */

scn__sched *scn__sched_new(uint64_t seed, int64_t start_ns)
{
    scn__sched *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->driver, NULL);
    rng_seed(s, seed);
    s->now = start_ns;
    s->turn_limit_ms = 20000;
    s->cc = (ctrl_clock){.now_ns = v_now,
                         .sleep_ns = v_sleep,
                         .wait_until = v_wait_until,
                         .notify = v_notify,
                         .ud = s};
    if (!scn__sched_group_hooks(s, 0)) {
        scn__sched_free(s);
        return NULL;
    }
    s->fc = (fakeapi_clock){.now_ns = v_now, .ud = s};
    return s;
}

void scn__sched_free(scn__sched *s)
{
    if (!s)
        return;
    while (s->held) {
        sheld *h = s->held;
        s->held = h->next;
        free(h);
    }
    while (s->groups) {
        sgroup *g = s->groups;
        s->groups = g->next;
        free(g);
    }
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->driver);
    free(s);
}

const ctrl_clock *scn__sched_ctrl_clock(scn__sched *s)
{
    return &s->cc;
}

const ctrl_hooks *scn__sched_ctrl_hooks(scn__sched *s)
{
    return scn__sched_group_hooks(s, 0);
}

const ctrl_hooks *scn__sched_group_hooks(scn__sched *s, int id)
{
    pthread_mutex_lock(&s->mu);
    sgroup *g = s->groups;
    while (g && g->id != id)
        g = g->next;
    if (!g && (g = calloc(1, sizeof *g))) {
        g->s = s;
        g->id = id;
        g->hooks = (ctrl_hooks){.before = h_before,
                                .thread_spawn = h_spawn,
                                .thread_start = h_thread_start,
                                .thread_exit = h_thread_exit,
                                .io_wait = h_io_wait,
                                .join = h_join,
                                .ud = g};
        g->next = s->groups;
        s->groups = g;
    }
    pthread_mutex_unlock(&s->mu);
    return g ? &g->hooks : NULL;
}

void scn__sched_freeze(scn__sched *s, int id)
{
    pthread_mutex_lock(&s->mu);
    for (sgroup *g = s->groups; g; g = g->next)
        if (g->id == id)
            g->frozen = true;
    pthread_mutex_unlock(&s->mu);
}

const fakeapi_clock *scn__sched_fakeapi_clock(scn__sched *s)
{
    return &s->fc;
}

int64_t scn__sched_now(scn__sched *s)
{
    return v_now(s);
}

void scn__sched_set_outside(scn__sched *s, const scn__outside *o)
{
    pthread_mutex_lock(&s->mu);
    s->outside = o ? *o : (scn__outside){0};
    pthread_mutex_unlock(&s->mu);
}

void scn__sched_set_turn_limit_ms(scn__sched *s, long ms)
{
    s->turn_limit_ms = ms;
}

/* The message for a run that made no progress within the turn limit. */
static void describe_stall_locked(const scn__sched *s, char *err, size_t errlen)
{
    static const char *const names[] = {"ready", "running", "blocked",
                                        "io",    "join",    "held by the server"};
    int off = snprintf(err, errlen,
                       "scheduler: no progress for %ld ms (running: %s, spawning: %d, "
                       "waiting for a released line to reach: %s, joins: %d): a thread "
                       "blocks outside the clock;",
                       s->turn_limit_ms, s->running ? s->running->name : "none", s->spawning,
                       awaiting_locked(s) ? s->awaited->name : "none", s->joins_waking);
    for (sthread *t = s->threads; t && off > 0 && (size_t)off < errlen; t = t->next)
        off += snprintf(err + off, errlen - (size_t)off, " [%s: %s]", t->name, names[t->state]);
}

/* The real time the turn limit runs out, from now. */
static struct timespec turn_deadline(const scn__sched *s)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += s->turn_limit_ms / 1000;
    until.tv_nsec += (s->turn_limit_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    return until;
}

/* Wait (s->mu held) until the run is at rest. -1 after the limit. */
static int settle_locked(scn__sched *s, char *err, size_t errlen)
{
    struct timespec until = turn_deadline(s);
    while (!at_rest_locked(s)) {
        if (pthread_cond_timedwait(&s->driver, &s->mu, &until) == ETIMEDOUT) {
            describe_stall_locked(s, err, errlen);
            return -1;
        }
    }
    return 0;
}

static bool runnable(const sthread *t)
{
    return t->state == T_READY && !(t->group && t->group->frozen);
}

/* A held request whose time has come and whose thread may run. */
static bool held_due(const scn__sched *s, const sheld *h)
{
    return h->due <= s->now && !(h->t && h->t->group && h->t->group->frozen);
}

static size_t count_held_due_locked(scn__sched *s)
{
    size_t n = 0;
    for (sheld *h = s->held; h; h = h->next)
        n += held_due(s, h);
    return n;
}

/* Answer the i-th due held request: its thread holds the turn from the
 * moment the answer can reach it. Returns its id (0: none). */
static uint64_t take_held_locked(scn__sched *s, size_t i)
{
    for (sheld **p = &s->held; *p; p = &(*p)->next) {
        sheld *h = *p;
        if (!held_due(s, h) || i-- != 0)
            continue;
        *p = h->next;
        uint64_t id = h->id;
        if (h->t) {
            h->t->state = T_RUNNING;
            h->t->granted = true;
            h->t->deadline = INT64_MAX;
            s->running = h->t;
        }
        free(h);
        return id;
    }
    return 0;
}

static size_t count_ready_locked(scn__sched *s)
{
    size_t n = 0;
    for (sthread *t = s->threads; t; t = t->next)
        n += runnable(t);
    return n;
}

static void grant_locked(scn__sched *s, size_t i)
{
    for (sthread *t = s->threads; t; t = t->next) {
        if (runnable(t) && i-- == 0) {
            t->state = T_RUNNING;
            t->granted = true;
            s->running = t;
            pthread_cond_signal(&t->turn);
            return;
        }
    }
}

typedef enum pick_kind { PICK_NONE, PICK_THREAD, PICK_HELD, PICK_OUTSIDE } pick_kind;

typedef struct pick {
    pick_kind kind;
    size_t index; /* among the ready threads, the due held requests, the outside actors */
    scn__outside out;
} pick;

/* Choose the next actor (s->mu held, the run at rest; mu is let go around
 * the outside actors' count, which calls into the server). */
static pick choose_locked(scn__sched *s)
{
    pick p = {.kind = PICK_NONE, .out = s->outside};
    size_t ready = count_ready_locked(s);
    size_t held = count_held_due_locked(s);
    pthread_mutex_unlock(&s->mu);
    size_t outside = p.out.count ? p.out.count(p.out.ud) : 0;
    pthread_mutex_lock(&s->mu);
    if (ready + held + outside == 0)
        return p;
    size_t i = (size_t)(rng_next(s) % (ready + held + outside));
    s->stats.steps++;
    if (i < ready)
        p = (pick){PICK_THREAD, i, p.out};
    else if (i < ready + held)
        p = (pick){PICK_HELD, i - ready, p.out};
    else
        p = (pick){PICK_OUTSIDE, i - ready - held, p.out};
    return p;
}

/* Start the chosen actor (s->mu held; let go around the calls into the
 * server, during which the actor may already run and even come to rest). */
static void start_locked(scn__sched *s, const pick *p)
{
    if (p->kind == PICK_THREAD) {
        s->stats.thread_turns++;
        grant_locked(s, p->index);
    } else if (p->kind == PICK_HELD) {
        s->stats.thread_turns++;
        uint64_t id = take_held_locked(s, p->index);
        pthread_mutex_unlock(&s->mu);
        if (id && p->out.release_request)
            p->out.release_request(p->out.ud, id);
        pthread_mutex_lock(&s->mu);
    } else if (p->kind == PICK_OUTSIDE) {
        s->stats.outside_turns++;
        /* Note where the fed thread stands before the release: it may react
         * before run() even returns. */
        const char *name = p->out.thread(p->out.ud, p->index);
        sthread *t = s->threads;
        while (t && !(t->state == T_IO && !strcmp(t->name, name)))
            t = t->next;
        s->awaited = t;
        s->awaited_leaves = t ? t->io_leaves : 0;
        pthread_mutex_unlock(&s->mu);
        int released = t ? p->out.run(p->out.ud, p->index) : 0;
        pthread_mutex_lock(&s->mu);
        if (released <= 0 && s->awaited == t)
            s->awaited = NULL; /* nothing went out: nobody to wait for */
    }
}

int scn__sched_step(scn__sched *s, char *err, size_t errlen)
{
    pthread_mutex_lock(&s->mu);
    if (settle_locked(s, err, errlen) < 0) {
        pthread_mutex_unlock(&s->mu);
        return -1;
    }
    s->awaited = NULL;
    pick p = choose_locked(s);
    if (p.kind == PICK_NONE) {
        pthread_mutex_unlock(&s->mu);
        return 0;
    }
    struct timespec h0, h1;
    clock_gettime(CLOCK_MONOTONIC, &h0);
    start_locked(s, &p);
    int rc = settle_locked(s, err, errlen);
    s->awaited = NULL;
    clock_gettime(CLOCK_MONOTONIC, &h1);
    s->stats.handoff_ns +=
        (int64_t)(h1.tv_sec - h0.tv_sec) * 1000000000 + (h1.tv_nsec - h0.tv_nsec);
    pthread_mutex_unlock(&s->mu);
    return rc < 0 ? -1 : 1;
}

static void chain_end_locked(scn__sched *s, int rc)
{
    s->chain.active = false;
    s->chain.rc = rc;
    pthread_cond_broadcast(&s->driver);
}

/* Take steps on this thread while the run is at rest and the driver's
 * delegation lasts (s->mu held). Whichever thread finds the run at rest,
 * not being advanced by another, takes the next step: each rest point is
 * taken by exactly one thread, under mu, so the choices are those the
 * driver would make, in the same order. */
static void chain_advance_locked(scn__sched *s)
{
    while (s->chain.active && !s->free_run && !s->chain.busy && at_rest_locked(s)) {
        s->awaited = NULL;
        s->chain.busy = true;
        if (s->chain.taken > 0 && s->chain.between) {
            pthread_mutex_unlock(&s->mu);
            bool stop = s->chain.between(s->chain.ud);
            pthread_mutex_lock(&s->mu);
            if (stop) {
                s->chain.busy = false;
                chain_end_locked(s, 1);
                return;
            }
        }
        if (s->chain.taken >= s->chain.budget) {
            s->chain.busy = false;
            chain_end_locked(s, 1);
            return;
        }
        pick p = choose_locked(s);
        s->chain.busy = false;
        if (p.kind == PICK_NONE) {
            chain_end_locked(s, 0);
            return;
        }
        s->chain.taken++;
        start_locked(s, &p);
    }
}

int scn__sched_steps(scn__sched *s, long budget, bool (*between)(void *ud), void *ud, long *taken,
                     char *err, size_t errlen)
{
    *taken = 0;
    pthread_mutex_lock(&s->mu);
    if (settle_locked(s, err, errlen) < 0) {
        pthread_mutex_unlock(&s->mu);
        return -1;
    }
    struct timespec h0, h1;
    clock_gettime(CLOCK_MONOTONIC, &h0);
    s->chain = (schain){.active = true, .budget = budget, .between = between, .ud = ud, .rc = 1};
    chain_advance_locked(s);
    unsigned long seen = s->stats.steps;
    struct timespec until = turn_deadline(s);
    while (s->chain.active) {
        if (s->chain.kick) {
            s->chain.kick = false;
            chain_advance_locked(s);
            continue;
        }
        if (pthread_cond_timedwait(&s->driver, &s->mu, &until) != ETIMEDOUT)
            continue;
        if (s->stats.steps != seen) { /* slow, not stuck */
            seen = s->stats.steps;
            until = turn_deadline(s);
            continue;
        }
        describe_stall_locked(s, err, errlen);
        chain_end_locked(s, -1);
    }
    *taken = s->chain.taken;
    int rc = s->chain.rc;
    if (rc >= 0)
        s->awaited = NULL;
    clock_gettime(CLOCK_MONOTONIC, &h1);
    s->stats.handoff_ns +=
        (int64_t)(h1.tv_sec - h0.tv_sec) * 1000000000 + (h1.tv_nsec - h0.tv_nsec);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int scn__sched_run_until_quiet(scn__sched *s, long max_steps, char *err, size_t errlen)
{
    for (long i = 0; i < max_steps; i++) {
        int rc = scn__sched_step(s, err, errlen);
        if (rc <= 0)
            return rc;
    }
    snprintf(err, errlen, "scheduler: not quiet after %ld steps (a livelock?)", max_steps);
    return -1;
}

/* Wake (s->mu held) every registered and outside waiter that is due. */
static void wake_due_locked(scn__sched *s)
{
    for (sthread *t = s->threads; t; t = t->next)
        if (t->state == T_BLOCKED && t->deadline <= s->now)
            t->state = T_READY;
    wake_ext_locked(s, NULL, true);
}

void scn__sched_free_run(scn__sched *s)
{
    pthread_mutex_lock(&s->mu);
    s->free_run = true;
    for (sthread *t = s->threads; t; t = t->next)
        pthread_cond_signal(&t->turn);
    /* Threads blocked on the clock: let them see their condition again. */
    for (sthread *t = s->threads; t; t = t->next)
        if (t->state == T_BLOCKED)
            t->granted = true, pthread_cond_signal(&t->turn);
    wake_ext_locked(s, NULL, true);
    pthread_mutex_unlock(&s->mu);
}

void scn__sched_set_time(scn__sched *s, int64_t t)
{
    pthread_mutex_lock(&s->mu);
    if (t > s->now)
        s->now = t;
    wake_due_locked(s);
    pthread_mutex_unlock(&s->mu);
}

int64_t scn__sched_advance(scn__sched *s, int64_t extra_deadline, int64_t limit_ns)
{
    pthread_mutex_lock(&s->mu);
    int64_t next = extra_deadline > s->now ? extra_deadline : INT64_MAX;
    for (sthread *t = s->threads; t; t = t->next)
        if (t->state == T_BLOCKED && t->deadline < next && !(t->group && t->group->frozen))
            next = t->deadline;
    for (ext_wait *w = s->ext; w; w = w->next)
        if (!w->woken && w->deadline < next)
            next = w->deadline;
    for (sheld *h = s->held; h; h = h->next)
        if (h->due > s->now && h->due < next && !(h->t && h->t->group && h->t->group->frozen))
            next = h->due;
    int64_t result = -1;
    if (next != INT64_MAX) {
        s->now = next < limit_ns ? next : (limit_ns > s->now ? limit_ns : s->now);
        s->stats.advances++;
        wake_due_locked(s);
        result = s->now;
    }
    pthread_mutex_unlock(&s->mu);
    return result;
}

void scn__sched_request_held(scn__sched *s, uint64_t id, int64_t due)
{
    sheld *h = calloc(1, sizeof *h);
    if (!h)
        abort(); /* a scheduler that lost a request cannot go on */
    h->id = id;
    h->due = due;
    pthread_mutex_lock(&s->mu);
    /* The request is the running thread's: it waits for the answer, off the
     * turn, until the driver picks the answer (once it is due). */
    sthread *t = s->running;
    if (t && !s->free_run) {
        h->t = t;
        t->state = T_SRV;
        t->granted = false;
        t->deadline = due;
        s->running = NULL;
    }
    sheld **p = &s->held;
    while (*p && (*p)->id < id)
        p = &(*p)->next;
    h->next = *p;
    *p = h;
    changed_locked(s, false); /* called from inside the server */
    pthread_mutex_unlock(&s->mu);
}

size_t scn__sched_take_frozen_held(scn__sched *s, uint64_t *ids, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&s->mu);
    for (sheld **p = &s->held; *p;) {
        sheld *h = *p;
        if (!(h->t && h->t->group && h->t->group->frozen) || n >= max) {
            p = &h->next;
            continue;
        }
        ids[n++] = h->id;
        *p = h->next;
        free(h);
    }
    pthread_mutex_unlock(&s->mu);
    return n;
}

bool scn__sched_io_waiting(scn__sched *s, const char *name)
{
    bool found = false;
    pthread_mutex_lock(&s->mu);
    for (sthread *t = s->threads; t && !found; t = t->next)
        found = t->state == T_IO && !(t->group && t->group->frozen) && !strcmp(t->name, name);
    pthread_mutex_unlock(&s->mu);
    return found;
}

void scn__sched_stats_get(scn__sched *s, scn__sched_stats *out)
{
    pthread_mutex_lock(&s->mu);
    *out = s->stats;
    out->threads = out->ready = out->blocked = out->io_waiting = 0;
    for (sthread *t = s->threads; t; t = t->next) {
        out->threads++;
        out->ready += t->state == T_READY;
        out->blocked += t->state == T_BLOCKED;
        out->io_waiting += t->state == T_IO;
    }
    pthread_mutex_unlock(&s->mu);
}
