/*
 * runner.c - one scenario run: a fake API server and the scenario's
 * managers on one virtual clock, driven step by step by the calling thread.
 *
 * DESIGN: the calling thread is the driver. It never runs while a libctrl
 * thread holds the turn (scheduler.h): it acts (applies a fixture, adds a
 * fault, moves the clock) only at quiescent points, so its actions fall at
 * the same place in every run with the same seed. The fake server runs on
 * its own threads but only answers requests (one at a time, since one
 * client thread runs at a time), with garbage collection done inline and
 * every watch held: the driver releases watch events one at a time, as a
 * scheduler choice. Managers run on registered threads.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cpu_pin.h"
#include "fakeapi/fakeapi.h"
#include "inproc.h"
#include "kc/cluster.h"
#include "leadership.h"
#include "replay_run.h"
#include "scheduler.h"
#include "scn/run.h"
#include "scn_int.h"

/* 2026-01-01T00:00:00Z: virtual time starts here, so timestamps look real. */
#define EPOCH_NS ((int64_t)1767225600 * CTRL_SECOND)
#define DEFAULT_MAX_STEPS 200000
#define DEFAULT_WAIT_NS (5 * CTRL_MINUTE)
#define DEFAULT_MAX_VIRTUAL_NS (24 * CTRL_HOUR)
/* The server's address given to in-process managers: never connected to. */
#define INPROC_URL "http://127.0.0.1"

/* One controller's manager in one manager replica. Manager replica k runs
 * every controller whose replicas > k, each in a manager of its own (its
 * own Lease kube-system/<controller> and User-Agent), all crashed,
 * partitioned and restarted together, as one process would be. */
typedef struct replica {
    struct run *r;
    const scn_controller_ref *ref;
    int index; /* in run.reps (controller by controller): the seed's offset */
    int k;     /* the manager replica it belongs to: what steps address */
    char ua[200];
    ctrl_manager *mgr;
    pthread_t thread;
    bool thread_started;
    atomic_bool exited;
    int rc;
    uint64_t block_rule;   /* drops all its requests (crash, partition); 0 = none */
    uint64_t watch_rule;   /* refuses its watches while it stops (restart); 0 = none */
    uint64_t crash_rule;   /* fires at the moment it must crash; 0 = none */
    bool crash_when_fired; /* crash_rule: crash once it fired (else: once it matched) */
    bool crashed;
    int group;         /* the scheduler group of its threads (one per incarnation) */
    int incarnation;   /* 1, then 2 after the first restart, ... */
    char base_ua[160]; /* "scenario/<controller>-<k>" */
} replica;

/* A crashed incarnation: frozen until teardown, then stopped and freed. It
 * keeps the fault rule that drops all it sends (block_rule) to the end: a
 * restart unblocks the new incarnation's User-Agent, never the old one. */
typedef struct zombie {
    ctrl_manager *mgr;
    pthread_t thread;
    uint64_t block_rule;
    struct zombie *next;
} zombie;

/* A watch the driver may release a line to, and the thread that reads it. */
typedef struct ready_watch {
    uint64_t id;
    char thread[512];
} ready_watch;

/* A crash armed for a whole manager replica at its nth write (atWrite):
 * with several managers in it, their writes count together. */
typedef struct crash_plan {
    long at_write;       /* n; 0 = none armed */
    unsigned long count; /* its writes counted before the rules now armed */
    bool restart;        /* start the replica again once it crashed (crash.restart) */
} crash_plan;

typedef struct run {
    const scn_scenario *sc;
    scn__sched *sched;
    fakeapi_server *srv;
    replica *reps;
    size_t nreps;
    int n_mgr;                      /* manager replicas: the most replicas any controller has */
    crash_plan *plans;              /* per manager replica */
    kc_config *kc;                  /* the scenario's cluster (sc->cluster), or NULL */
    scn_controller_ref cluster_ref; /* the cluster's replica's ref (k -1: no step names it) */
    json_t *faults;                 /* scenario name -> rule id */
    scn_run_result *res;
    long max_steps;
    uint64_t seed;
    int64_t limit_ns;
    char trace_path[512];
    bool temp_trace;
    int temp_trace_fd; /* its memory file, or -1 (temp_file) */
    bool verbose;
    zombie *zombies;
    int next_group;
    ready_watch *ready; /* outside_count's snapshot */
    size_t n_ready, ready_cap;
    fakeapi_watch_info *watches; /* outside_count's snapshot, kept from step to step */
    size_t watches_cap;
    json_t *replica_names;     /* "as" names of steps -> replica index (made when first used) */
    scn__leadership **leaders; /* per invariant: its singleLeader checker, or NULL */
    const scn_run_options *opts;
    json_t *writes_used;   /* what expectWrite steps read and took (replay_run.h) */
    char record_path[512]; /* the run's audit record (--record, expectWrite bodies); "" = none */
    bool temp_record;      /* record_path is the run's own, removed at the end */
    int temp_record_fd;    /* its memory file, or -1 (temp_file) */
    unsigned long errors_gone; /* reconcile errors of managers stopped or crashed */
    bool over_http;            /* opts->over_http or SCENARIO_TRANSPORT=http */
    ctrl_roundtripper inproc;  /* else: how managers reach srv (inproc.h) */
} run;

/* "informer UA APIVERSION/KIND", cut to len as snprintf cuts: made at every
 * step for each watch with lines waiting, so without printf. */
void scn__informer_thread_name(char *buf, size_t len, const char *user_agent,
                               const char *api_version, const char *kind)
{
    const char *parts[] = {"informer ", user_agent, " ", api_version, "/", kind};
    size_t at = 0;
    if (!len)
        return;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        size_t n = strlen(parts[i]);
        if (n > len - 1 - at)
            n = len - 1 - at;
        memcpy(buf + at, parts[i], n);
        at += n;
    }
    buf[at] = '\0';
}

static int fail(run *r, int step, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(run *r, int step, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->res->message, sizeof r->res->message, fmt, ap);
    va_end(ap);
    r->res->passed = false;
    r->res->failed_step = step;
    return -1;
}

/* ---- outside actors: held watch streams ---- */

/* The watches whose events may be released now (they have some, and the
 * informer reading each waits for them), in the order they started, and
 * the thread that reads each: one snapshot per scheduler step, so that the
 * choice and the release see the same list. */
static size_t outside_count(void *ud)
{
    run *r = ud;
    size_t n = 0;
    r->n_ready = 0;
    if (fakeapi_watches_into(r->srv, &r->watches, &r->watches_cap, &n) < 0)
        return 0;
    fakeapi_watch_info *w = r->watches;
    if (n > r->ready_cap) {
        ready_watch *p = realloc(r->ready, n * sizeof *p);
        if (!p)
            return 0;
        r->ready = p;
        r->ready_cap = n;
    }
    for (size_t j = 0; j < n; j++) {
        ready_watch *rw = &r->ready[r->n_ready];
        if (w[j].pending == 0)
            continue; /* most of them, most steps: no name to make */
        scn__informer_thread_name(rw->thread, sizeof rw->thread, w[j].client, w[j].api_version,
                                  w[j].kind);
        if (!scn__sched_io_waiting(r->sched, rw->thread))
            continue;
        rw->id = w[j].id;
        r->n_ready++;
    }
    return r->n_ready;
}

static const char *outside_thread(void *ud, size_t i)
{
    run *r = ud;
    return i < r->n_ready ? r->ready[i].thread : "";
}

static int outside_run(void *ud, size_t i)
{
    run *r = ud;
    if (i >= r->n_ready)
        return 0;
    return fakeapi_watch_release(r->srv, r->ready[i].id, 1) == 0 ? 1 : 0;
}

/* A request held back by a delay fault: the scheduler decides when it is
 * answered (scheduler.h). */
static void on_held(void *ud, uint64_t id, int64_t due_ns)
{
    run *r = ud;
    scn__sched_request_held(r->sched, id, due_ns);
}

static int outside_release_request(void *ud, uint64_t id)
{
    run *r = ud;
    return fakeapi_request_release(r->srv, id) == 0 ? 0 : -1;
}

/* ---- managers ---- */

static void *replica_main(void *arg)
{
    replica *rep = arg;
    rep->rc = ctrl_manager_start(rep->mgr, NULL);
    atomic_store(&rep->exited, true);
    return NULL;
}

/* Start a thread the scheduler sees from its first instruction. */
static int spawn_registered(run *r, int group, pthread_t *t, const char *name, void *(*fn)(void *),
                            void *arg);

typedef struct reg_arg {
    run *r;
    int group;
    char name[256];
    void *(*fn)(void *);
    void *arg;
} reg_arg;

static void *registered_main(void *p)
{
    reg_arg a = *(reg_arg *)p;
    free(p);
    const ctrl_hooks *h = scn__sched_group_hooks(a.r->sched, a.group);
    h->thread_start(h->ud, a.name);
    void *ret = a.fn(a.arg);
    h->thread_exit(h->ud);
    return ret;
}

static int spawn_registered(run *r, int group, pthread_t *t, const char *name, void *(*fn)(void *),
                            void *arg)
{
    reg_arg *a = malloc(sizeof *a);
    if (!a)
        return -1;
    *a = (reg_arg){.r = r, .group = group, .fn = fn, .arg = arg};
    snprintf(a->name, sizeof a->name, "%s", name);
    const ctrl_hooks *h = scn__sched_group_hooks(r->sched, group);
    h->thread_spawn(h->ud, +1);
    if (pthread_create(t, NULL, registered_main, a) != 0) {
        h->thread_spawn(h->ud, -1);
        free(a);
        return -1;
    }
    return 0;
}

static void discard_log(const char *line, void *user)
{
    (void)line, (void)user;
}

static void stderr_log(const char *line, void *user)
{
    (void)user;
    fprintf(stderr, "%s\n", line);
}

/* splitmix64's finaliser: a well-mixed 64-bit function of x. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t scn__manager_seed(uint64_t run_seed, int index, int incarnation)
{
    /* The first incarnation keeps the seed runs have always had, so that
     * traces recorded before restarts drew fresh seeds stay the same. */
    uint64_t first = run_seed * 1000003 + (uint64_t)index + 1;
    if (incarnation <= 1)
        return first;
    uint64_t s = mix64(mix64(first) ^ (uint64_t)incarnation);
    return s ? s : 1; /* 0 asks libctrl for a random seed */
}

static int start_replica(run *r, replica *rep)
{
    /* Each incarnation has its own User-Agent, so that the server's watches
     * of a crashed one are never taken for the new one's. */
    rep->incarnation++;
    if (rep->incarnation == 1)
        snprintf(rep->ua, sizeof rep->ua, "%s", rep->base_ua);
    else
        snprintf(rep->ua, sizeof rep->ua, "%s.r%d", rep->base_ua, rep->incarnation);
    ctrl_config *cfg = NULL;
    ctrl_error err = {0};
    /* Without a listener (in-process), the address only names the server. */
    const char *url = r->over_http ? fakeapi_url(r->srv) : INPROC_URL;
    int rc = ctrl_config_from_url(url, &cfg, &err);
    if (rc < 0)
        return fail(r, -1, "replica %s: config: %s", rep->ua, err.message);
    if (!r->over_http && (rc = ctrl_config_set_roundtripper(cfg, &r->inproc)) < 0) {
        ctrl_config_free(cfg);
        return fail(r, -1, "replica %s: config: in-process transport: %s", rep->ua,
                    ctrl_strerror(rc));
    }
    bool elect = rep->ref->replicas > 1;
    ctrl_manager_options o = {
        .leader_election = elect,
        .leader_election_id = rep->ref->name,
        .leader_election_namespace = "kube-system",
        .metrics_addr = "0",
        .health_probe_addr = "0",
        .user_agent = rep->ua,
        .clock = scn__sched_ctrl_clock(r->sched),
        .hooks = scn__sched_group_hooks(r->sched, rep->group = ++r->next_group),
        .seed = scn__manager_seed(r->seed, rep->index, rep->incarnation),
        .identity = rep->ua,
        .release_on_cancel = true,
        .log_level = r->verbose ? CTRL_LOG_INFO : CTRL_LOG_ERROR,
        .log_sink = r->verbose ? stderr_log : discard_log,
    };
    rc = ctrl_manager_new_for_config(cfg, &o, &rep->mgr, &err);
    ctrl_config_free(cfg);
    if (rc < 0) {
        fail(r, -1, "replica %s: manager: %s", rep->ua, err.message);
        ctrl_error_deinit(&err);
        return -1;
    }
    if (rep->ref == &r->cluster_ref) {
        char msg[512] = "";
        if ((rc = kc_setup(rep->mgr, r->kc, msg, sizeof msg)) < 0)
            return fail(r, -1, "cluster: setup failed: %s", msg[0] ? msg : kc_strerror(rc));
    } else {
        scn_setup_fn setup;
        void *user;
        scn__find_controller(rep->ref->name, &setup, &user);
        if ((rc = setup(rep->mgr, rep->ref->config, user)) < 0)
            return fail(r, -1, "controller %s: setup failed: %s", rep->ref->name,
                        ctrl_strerror(rc));
    }
    atomic_store(&rep->exited, false);
    char name[256];
    snprintf(name, sizeof name, "manager %s", rep->ua);
    if (spawn_registered(r, rep->group, &rep->thread, name, replica_main, rep) < 0)
        return fail(r, -1, "replica %s: cannot start a thread", rep->ua);
    rep->thread_started = true;
    return 0;
}

/* Let the scheduler run until quiet, crashing replicas whose crash point came. */
static int quiet(run *r, int step);

static int block_client(run *r, replica *rep)
{
    char rule[300];
    snprintf(rule, sizeof rule, "{\"match\":{\"agent\":\"%s\"},\"action\":{\"drop\":true}}",
             rep->ua);
    fakeapi_error err = {0};
    if (fakeapi_fault_add_rule_json(r->srv, rule, &rep->block_rule, &err) < 0)
        return -1;
    fakeapi_close_watches(r->srv, rep->ua);
    return 0;
}

static void unblock_client(run *r, replica *rep)
{
    if (rep->block_rule)
        fakeapi_fault_remove(r->srv, rep->block_rule);
    rep->block_rule = 0;
}

/* The sum of one metric family's series of one manager (one series a
 * controller). */
static unsigned long manager_metric_sum(ctrl_manager *mgr, const char *name)
{
    return mgr ? (unsigned long)ctrl_metrics_sum(ctrl_manager_metrics(mgr), name) : 0;
}

/* controller_runtime_reconcile_errors_total of one manager, every
 * controller of it. */
static unsigned long manager_errors(ctrl_manager *mgr)
{
    return manager_metric_sum(mgr, "controller_runtime_reconcile_errors_total");
}

/* Keys of the running controllers under test whose last reconcile failed
 * (workqueue_failing_keys), now. */
static unsigned long run_failing(run *r)
{
    unsigned long n = 0;
    for (size_t i = 0; i < r->nreps; i++)
        if (r->reps[i].ref != &r->cluster_ref && r->reps[i].thread_started && !r->reps[i].crashed &&
            r->reps[i].mgr)
            n += manager_metric_sum(r->reps[i].mgr, "workqueue_failing_keys");
    return n;
}

/* The reconcile errors of the controllers under test so far. */
static unsigned long run_errors(run *r)
{
    unsigned long n = r->errors_gone;
    for (size_t i = 0; i < r->nreps; i++)
        if (r->reps[i].ref != &r->cluster_ref && r->reps[i].thread_started)
            n += manager_errors(r->reps[i].mgr);
    return n;
}

/* A manager leaves the run (crash, restart): keep its errors counted. */
static void count_gone(run *r, replica *rep)
{
    if (rep->ref != &r->cluster_ref && rep->mgr)
        r->errors_gone += manager_errors(rep->mgr);
}

/* A crash: the replica's threads never run again (frozen where they are, as
 * a killed process), nothing it sends arrives, its watches close. The frozen
 * incarnation is stopped and freed at teardown. */
static void crash_replica(run *r, replica *rep)
{
    if (rep->crashed || !rep->thread_started)
        return;
    rep->crashed = true;
    count_gone(r, rep);
    if (rep->crash_rule)
        fakeapi_fault_remove(r->srv, rep->crash_rule);
    rep->crash_rule = 0;
    scn__sched_freeze(r->sched, rep->group);
    block_client(r, rep);
    zombie *z = malloc(sizeof *z);
    if (z) {
        *z = (zombie){.mgr = rep->mgr,
                      .thread = rep->thread,
                      .block_rule = rep->block_rule,
                      .next = r->zombies};
        r->zombies = z;
        rep->block_rule = 0; /* the zombie's now */
    }
    rep->mgr = NULL;
    rep->thread_started = false;
}

/* Crash manager replica k: every controller's manager in it. */
static void crash_group(run *r, int k)
{
    r->plans[k].at_write = 0;
    for (size_t i = 0; i < r->nreps; i++)
        if (r->reps[i].k == k)
            crash_replica(r, &r->reps[i]);
}

static int add_crash_rule(run *r, replica *rep, json_t *rule, fakeapi_error *err)
{
    char *text = rule ? json_dumps(rule, JSON_COMPACT) : NULL;
    json_decref(rule);
    if (rep->crash_rule)
        fakeapi_fault_remove(r->srv, rep->crash_rule);
    rep->crash_rule = 0;
    int rc = text ? fakeapi_fault_add_rule_json(r->srv, text, &rep->crash_rule, err) : -1;
    free(text);
    rep->crash_when_fired = true;
    return rc;
}

/* Drop every write of rep after the next `allowed` (the crash comes before
 * the first one dropped), so nothing more it sends in the turn it crashes in
 * reaches the server. */
static int arm_write_crash(run *r, replica *rep, long allowed, fakeapi_error *err)
{
    json_t *rule = json_pack("{s:{s:s, s:s}, s:{s:I}, s:{s:b}}", "match", "agent", rep->ua, "verb",
                             "create,update,patch,delete", "when", "after", (json_int_t)allowed,
                             "action", "drop", 1);
    if (rule && allowed == 0)
        json_object_set_new(rule, "when", json_object());
    return add_crash_rule(r, rep, rule, err);
}

/* Start the crashed managers of replica k again (crash.restart), as a
 * restart step does. */
static int restart_crashed(run *r, int k)
{
    for (size_t i = 0; i < r->nreps; i++) {
        replica *rep = &r->reps[i];
        if (rep->k != k || !rep->crashed)
            continue;
        unblock_client(r, rep);
        rep->crashed = false;
        if (start_replica(r, rep) < 0)
            return -1;
    }
    return 0;
}

static int check_crash_points(run *r)
{
    for (int k = 0; k < r->n_mgr; k++) {
        bool hit = false;
        int armed = 0;
        unsigned long writes = 0;
        for (size_t i = 0; i < r->nreps && !hit; i++) {
            replica *rep = &r->reps[i];
            unsigned long matched = 0, fired = 0;
            if (rep->k != k || !rep->crash_rule ||
                fakeapi_fault_hits(r->srv, rep->crash_rule, &matched, &fired) < 0)
                continue;
            armed++;
            writes += matched;
            hit = rep->crash_when_fired ? fired > 0 : matched > 0;
        }
        if (hit) {
            bool restart = r->plans[k].restart;
            crash_group(r, k);
            if (restart && restart_crashed(r, k) < 0)
                return -1;
            continue;
        }
        /* atWrite over several managers: what one of them wrote counts for
         * all, so each one's rule is armed again with what is left (only one
         * thread runs at a time, so no other could write meanwhile). */
        crash_plan *pl = &r->plans[k];
        if (!pl->at_write || armed < 2 || writes == 0)
            continue;
        pl->count += writes;
        long left = pl->at_write - 1 - (long)pl->count;
        for (size_t i = 0; i < r->nreps; i++)
            if (r->reps[i].k == k && r->reps[i].crash_rule)
                arm_write_crash(r, &r->reps[i], left > 0 ? left : 0, NULL);
    }
    return 0;
}

/* The server's open watches, for a scheduler failure's message. */
static void describe_watches(run *r, char *buf, size_t len)
{
    fakeapi_watch_info *w = NULL;
    size_t n = 0, off = 0;
    if (fakeapi_watches(r->srv, &w, &n) < 0)
        return;
    for (size_t i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, " [%" PRIu64 " %s %s/%s pending %zu%s]",
                                w[i].id, w[i].client, w[i].api_version, w[i].kind, w[i].pending,
                                w[i].held ? " held" : "");
    free(w);
}

/* True when check_crash_points has something to do: a crash rule has
 * matched a write (it does nothing otherwise). Called between turns by
 * whichever thread took the last one (scn__sched_steps). */
static bool crash_pending(void *ud)
{
    run *r = ud;
    for (size_t i = 0; i < r->nreps; i++) {
        unsigned long matched = 0, fired = 0;
        if (r->reps[i].crash_rule &&
            fakeapi_fault_hits(r->srv, r->reps[i].crash_rule, &matched, &fired) == 0 &&
            (matched > 0 || fired > 0))
            return true;
    }
    return false;
}

/* Run until nothing is ready: step after step, crash points checked after
 * each (the scheduler asks crash_pending between steps, and hands back
 * when there is something to do). */
static int quiet(run *r, int step)
{
    char err[2048];
    for (;;) {
        if (r->res->steps >= (unsigned long)r->max_steps)
            return fail(r, step, "no quiescence after %ld scheduler steps (a livelock?)",
                        r->max_steps);
        long taken = 0;
        int rc = scn__sched_steps(r->sched, r->max_steps - (long)r->res->steps, crash_pending, r,
                                  &taken, err, sizeof err);
        r->res->steps += (unsigned long)taken;
        if (rc < 0) {
            r->res->stalled = true;
            char watches[2048] = "";
            describe_watches(r, watches, sizeof watches);
            return fail(r, step, "%s; server watches:%s", err, watches);
        }
        if (taken > 0 && check_crash_points(r) < 0)
            return -1;
        if (rc == 0)
            return 0;
    }
}

/* ---- conditions ---- */

static int lk_get(void *ud, const char *av, const char *kind, const char *ns, const char *name,
                  json_t **out)
{
    run *r = ud;
    return fakeapi_get(r->srv, av, kind, ns, name, out, NULL);
}

static int lk_list(void *ud, const char *av, const char *kind, const char *ns, const char *selector,
                   json_t **out)
{
    run *r = ud;
    return fakeapi_read_list(r->srv, av, kind, ns, selector, out, NULL);
}

static int lk_count(void *ud, const char *av, const char *kind, const char *ns,
                    const char *selector, size_t *out)
{
    run *r = ud;
    return fakeapi_read_count(r->srv, av, kind, ns, selector, out, NULL);
}

static bool holds(run *r, const scn_cond *c, char *msg, size_t len)
{
    scn_lookup lk = {.get = lk_get, .list = lk_list, .count = lk_count, .ud = r};
    return scn_cond_eval(c, &lk, msg, len);
}

static bool single_leader_holds(run *r, size_t i, char *msg, size_t len);

/* The store's state to the caller's hook (scn_run_options.on_state). */
static void report_state(run *r, int step)
{
    json_t *objs = NULL;
    if (!r->opts->on_state || !r->srv || fakeapi_objects(r->srv, &objs, NULL) < 0)
        return;
    r->opts->on_state(r->opts->state_ud, step, scn__sched_now(r->sched) - EPOCH_NS, objs);
    json_decref(objs);
}

static int check_invariants(run *r, int step)
{
    report_state(r, step);
    for (size_t i = 0; i < r->sc->n_invariants; i++) {
        char msg[1024];
        bool trace = r->sc->invariants[i]->kind == SCN_COND_SINGLE_LEADER;
        if (!(trace ? single_leader_holds(r, i, msg, sizeof msg)
                    : holds(r, r->sc->invariants[i], msg, sizeof msg)))
            return fail(r, step, "invariant %zu (line %d) broken at %s: %s", i,
                        r->sc->invariants[i]->line, step < 0 ? "setup" : "a quiescent point", msg);
    }
    return 0;
}

/* Quiet, check invariants, then move the clock to the next deadline not past
 * limit. Returns 1 if time moved, 0 if nothing waits on time, -1 failed. */
static int settle_and_tick(run *r, int step, int64_t limit)
{
    if (quiet(r, step) < 0 || check_invariants(r, step) < 0)
        return -1;
    int64_t before = scn__sched_now(r->sched);
    int64_t t = scn__sched_advance(r->sched, fakeapi_next_deadline(r->srv), limit);
    fakeapi_clock_advanced(r->srv);
    return t > before ? 1 : 0;
}

/* ---- steps ---- */

/* Server-side apply of one object as st's field manager. */
static int ssa_object(run *r, int step, const scn_step *st, const json_t *o)
{
    const json_t *meta = json_object_get(o, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    char path[1024], full[1500];
    fakeapi_error err = {0};
    if (fakeapi_path(r->srv, json_string_value(json_object_get(o, "apiVersion")),
                     json_string_value(json_object_get(o, "kind")), ns ? ns : "default",
                     json_string_value(json_object_get(meta, "name")), path, sizeof path, &err) < 0)
        return fail(r, step, "apply: %s", err.message);
    char mgr[400];
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)st->field_manager;
         *c && n + 4 < sizeof mgr; c++) {
        bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                     (*c >= '0' && *c <= '9') || strchr("-._~", *c);
        n += (size_t)snprintf(mgr + n, sizeof mgr - n, plain ? "%c" : "%%%02X", *c);
    }
    mgr[n] = 0;
    snprintf(full, sizeof full, "%s?fieldManager=%s%s", path, mgr, st->force ? "&force=true" : "");
    char *text = json_dumps(o, JSON_COMPACT);
    int status = 0;
    json_t *out = NULL;
    int rc = text ? fakeapi_request(r->srv, "PATCH", full, "application/apply-patch+yaml", text,
                                    &status, &out)
                  : FAKEAPI_ERR_NOMEM;
    free(text);
    if (rc == 0 && status >= 300)
        rc = fail(r, step, "apply as %s: %d %s", st->field_manager, status,
                  json_string_value(json_object_get(out, "message")));
    else if (rc < 0)
        rc = fail(r, step, "apply: out of memory");
    json_decref(out);
    return rc;
}

static int apply_objects(run *r, int step, const json_t *objs)
{
    size_t i;
    json_t *o;
    /* step < 0: the fixtures, applied as kubectl apply does. */
    const scn_step *st = step >= 0 ? &r->sc->steps[step] : NULL;
    json_array_foreach(objs, i, o)
    {
        if (st && st->field_manager) {
            if (ssa_object(r, step, st, o) < 0)
                return -1;
            continue;
        }
        /* a fixture's ownerReferences take the uids of the owners that exist
         * by name (a fixture may come from another cluster's snapshot) */
        json_t *bound = step < 0 ? scn__bind_owners(r->srv, o, "default") : json_incref(o);
        char *text = bound ? json_dumps(bound, JSON_COMPACT) : NULL;
        json_decref(bound);
        fakeapi_error err = {0};
        int rc = text ? fakeapi_apply(r->srv, text, strlen(text), &err) : FAKEAPI_ERR_NOMEM;
        free(text);
        if (rc < 0)
            return fail(r, step, "apply: %s", err.message);
        char msg[768];
        if (step < 0 && scn__fixture_status(r->srv, o, msg, sizeof msg) < 0)
            return fail(r, step, "fixture: %s", msg);
    }
    return 0;
}

static int step_patch(run *r, int n, const scn_step *st, bool scale)
{
    char path[1024];
    fakeapi_error err = {0};
    if (fakeapi_path(r->srv, st->api_version, st->kind_name, st->ns, st->name, path, sizeof path,
                     &err) < 0)
        return fail(r, n, "%s: %s", scale ? "scale" : "patch", err.message);
    const char *ctype = "application/merge-patch+json";
    char *body;
    if (scale) {
        strncat(path, "/scale", sizeof path - strlen(path) - 1);
        body = NULL;
        if (asprintf(&body, "{\"spec\":{\"replicas\":%ld}}", st->replicas) < 0)
            body = NULL;
    } else {
        if (st->subresource) {
            strncat(path, "/", sizeof path - strlen(path) - 1);
            strncat(path, st->subresource, sizeof path - strlen(path) - 1);
        }
        if (st->patch_type && !strcmp(st->patch_type, "json"))
            ctype = "application/json-patch+json";
        else if (st->patch_type && !strcmp(st->patch_type, "strategic"))
            ctype = "application/strategic-merge-patch+json";
        body = json_dumps(st->manifest, JSON_COMPACT);
    }
    int status = 0;
    json_t *out = NULL;
    fakeapi_request(r->srv, "PATCH", path, ctype, body, &status, &out);
    free(body);
    int rc = 0;
    if (status >= 300)
        rc = fail(r, n, "%s %s: %d %s", scale ? "scale" : "patch", path, status,
                  json_string_value(json_object_get(out, "message")));
    json_decref(out);
    return rc;
}

static int step_fault(run *r, int n, const scn_step *st)
{
    if (st->fault_remove) {
        json_t *id = json_object_get(r->faults, st->fault_name);
        if (!id)
            return fail(r, n, "fault: no rule named %s", st->fault_name);
        fakeapi_fault_remove(r->srv, (uint64_t)json_integer_value(id));
        json_object_del(r->faults, st->fault_name);
        return 0;
    }
    char *text = json_dumps(st->rule, JSON_COMPACT);
    uint64_t id = 0;
    fakeapi_error err = {0};
    int rc = text ? fakeapi_fault_add_rule_json(r->srv, text, &id, &err) : -1;
    free(text);
    if (rc < 0)
        return fail(r, n, "fault: %s", err.message);
    if (st->fault_name)
        json_object_set_new(r->faults, st->fault_name, json_integer((json_int_t)id));
    return 0;
}

static int addressed_replica(run *r, int n, const scn_step *st);

static int step_crash(run *r, int n, const scn_step *st)
{
    int k = addressed_replica(r, n, st);
    if (k < 0)
        return -1;
    if (st->crash_at_write <= 0 && !st->crash_after) {
        crash_group(r, k);
        return 0;
    }
    /* Arm a rule for each of its managers: at the nth write the request is
     * dropped (the crash comes before it), or after a matching request (it
     * is applied, the answer never read). */
    r->plans[k] = (crash_plan){.at_write = st->crash_at_write > 0 ? st->crash_at_write : 0,
                               .restart = st->crash_restart};
    for (size_t i = 0; i < r->nreps; i++) {
        replica *rep = &r->reps[i];
        if (rep->k != k)
            continue;
        fakeapi_error err = {0};
        int rc;
        if (st->crash_at_write > 0) {
            rc = arm_write_crash(r, rep, st->crash_at_write - 1, &err);
        } else {
            json_t *rule =
                json_pack("{s:O, s:{s:b}}", "match", st->crash_after, "action", "loseResponse", 1);
            if (rule) {
                json_object_set_new(json_object_get(rule, "match"), "agent", json_string(rep->ua));
                json_object_set_new(rule, "when", json_pack("{s:i}", "first", 1));
            }
            rc = add_crash_rule(r, rep, rule, &err);
        }
        if (rc < 0)
            return fail(r, n, "crash: %s", err.message);
    }
    return 0;
}

/* Stop the running managers of replica k, together, still under the
 * scheduler. libctrl ends an open watch by waking its thread outside the
 * turns, at a moment no seed decides; so first the replica's watches are
 * closed and new ones refused (a fault rule on each User-Agent), and the
 * run goes quiet: the informers take the ends of their streams as the
 * driver releases them and wait on the clock to watch again. Then the
 * managers stop as a process does on SIGTERM (controllers end, the Lease is
 * released), every wake-up on the clock. */
static int stop_group(run *r, int n, int k)
{
    bool any = false;
    for (size_t i = 0; i < r->nreps; i++) {
        replica *rep = &r->reps[i];
        if (rep->k != k || !rep->thread_started)
            continue;
        char rule[300];
        snprintf(rule, sizeof rule,
                 "{\"match\":{\"agent\":\"%s\",\"verb\":\"watch\"},\"action\":{\"drop\":true}}",
                 rep->ua);
        fakeapi_error err = {0};
        if (fakeapi_fault_add_rule_json(r->srv, rule, &rep->watch_rule, &err) < 0)
            return fail(r, n, "restart: %s", err.message);
        fakeapi_close_watches(r->srv, rep->ua);
        any = true;
    }
    if (!any)
        return 0;
    if (quiet(r, n) < 0)
        return -1;
    for (size_t i = 0; i < r->nreps; i++)
        if (r->reps[i].k == k && r->reps[i].thread_started) /* quiet may have crashed it */
            ctrl_manager_stop(r->reps[i].mgr);
    char err[256];
    for (int it = 0; it < 100000; it++) {
        bool running = false;
        for (size_t i = 0; i < r->nreps; i++)
            running |=
                r->reps[i].k == k && r->reps[i].thread_started && !atomic_load(&r->reps[i].exited);
        if (!running)
            break;
        if (scn__sched_step(r->sched, err, sizeof err) <= 0 &&
            scn__sched_advance(r->sched, fakeapi_next_deadline(r->srv), INT64_MAX) < 0)
            usleep(1000); /* nothing to run and no deadline: should not happen */
        fakeapi_clock_advanced(r->srv);
    }
    for (size_t i = 0; i < r->nreps; i++) {
        replica *rep = &r->reps[i];
        if (rep->k != k)
            continue;
        if (rep->thread_started) {
            pthread_join(rep->thread, NULL);
            rep->thread_started = false;
            count_gone(r, rep);
            ctrl_manager_free(rep->mgr);
            rep->mgr = NULL;
        }
        if (rep->watch_rule)
            fakeapi_fault_remove(r->srv, rep->watch_rule);
        rep->watch_rule = 0;
    }
    return 0;
}

static int step_replica(run *r, int n, const scn_step *st)
{
    int k = addressed_replica(r, n, st);
    if (k < 0 || (st->kind == SCN_STEP_RESTART && stop_group(r, n, k) < 0))
        return -1;
    for (size_t i = 0; i < r->nreps; i++) {
        replica *rep = &r->reps[i];
        if (rep->k != k)
            continue;
        switch (st->kind) {
        case SCN_STEP_RESTART:
            unblock_client(r, rep);
            rep->crashed = false;
            if (start_replica(r, rep) < 0)
                return -1;
            break;
        case SCN_STEP_PARTITION:
            if (block_client(r, rep) < 0)
                return fail(r, n, "partition failed");
            break;
        case SCN_STEP_HEAL:
            unblock_client(r, rep);
            break;
        default:
            return fail(r, n, "internal: not a replica step");
        }
    }
    if (st->kind == SCN_STEP_RESTART)
        r->plans[k].at_write = 0;
    return 0;
}

static int step_advance(run *r, int n, int64_t d)
{
    int64_t target = scn__sched_now(r->sched) + d;
    if (target > r->limit_ns)
        return fail(r, n, "advance: past the scenario's maxVirtualTime");
    for (;;) {
        int rc = settle_and_tick(r, n, target);
        if (rc < 0)
            return -1;
        if (rc == 0 || scn__sched_now(r->sched) >= target)
            break;
    }
    scn__sched_set_time(r->sched, target);
    fakeapi_clock_advanced(r->srv);
    return quiet(r, n) < 0 ? -1 : check_invariants(r, n);
}

static int step_wait(run *r, int n, const scn_step *st)
{
    int64_t deadline =
        scn__sched_now(r->sched) + (st->duration_ns ? st->duration_ns : DEFAULT_WAIT_NS);
    if (deadline > r->limit_ns)
        deadline = r->limit_ns;
    char msg[1024] = "";
    for (;;) {
        if (quiet(r, n) < 0 || check_invariants(r, n) < 0)
            return -1;
        if (holds(r, st->cond, msg, sizeof msg))
            return 0;
        if (scn__sched_now(r->sched) >= deadline)
            break;
        int64_t before = scn__sched_now(r->sched);
        scn__sched_advance(r->sched, fakeapi_next_deadline(r->srv), deadline);
        fakeapi_clock_advanced(r->srv);
        if (scn__sched_now(r->sched) == before)
            break; /* nothing left to happen */
    }
    return fail(r, n, "wait (line %d) timed out after %.1fs of virtual time: %s", st->line,
                (double)(scn__sched_now(r->sched) -
                         (deadline - (st->duration_ns ? st->duration_ns : DEFAULT_WAIT_NS))) /
                    1e9,
                msg);
}

/* Like a wait, for a write in the trace (replay_run.h). */
static int step_expect_write(run *r, int n, const scn_step *st)
{
    int64_t deadline = scn__sched_now(r->sched) + st->duration_ns;
    if (deadline > r->limit_ns)
        deadline = r->limit_ns;
    char msg[1024] = "";
    if (!r->writes_used && !(r->writes_used = json_object()))
        return fail(r, n, "expectWrite: out of memory");
    for (;;) {
        if (quiet(r, n) < 0 || check_invariants(r, n) < 0)
            return -1;
        fakeapi_trace_flush(r->srv); /* it reads the trace so far */
        int found = scn__find_write(r->trace_path, r->record_path[0] ? r->record_path : NULL, st,
                                    r->writes_used, msg, sizeof msg);
        if (found < 0)
            return fail(r, n, "expectWrite (line %d): %s", st->line, msg);
        if (found)
            return 0;
        if (scn__sched_now(r->sched) >= deadline)
            break;
        int64_t before = scn__sched_now(r->sched);
        scn__sched_advance(r->sched, fakeapi_next_deadline(r->srv), deadline);
        fakeapi_clock_advanced(r->srv);
        if (scn__sched_now(r->sched) == before)
            break;
    }
    return fail(r, n, "expectWrite (line %d) failed after %.1fs of virtual time: %s", st->line,
                (double)st->duration_ns / 1e9, msg);
}

static int run_step(run *r, int n)
{
    const scn_step *st = &r->sc->steps[n];
    if (r->verbose)
        fprintf(stderr, "scenario: step %d (line %d): %s\n", n, st->line, st->text ? st->text : "");
    int rc = 0;
    switch (st->kind) {
    case SCN_STEP_APPLY:
        rc = apply_objects(r, n, st->manifest);
        break;
    case SCN_STEP_PATCH:
        rc = step_patch(r, n, st, false);
        break;
    case SCN_STEP_SCALE:
        rc = step_patch(r, n, st, true);
        break;
    case SCN_STEP_DELETE: {
        fakeapi_error err = {0};
        if (fakeapi_delete(r->srv, st->api_version, st->kind_name, st->ns, st->name, &err) < 0)
            rc = fail(r, n, "delete: %s", err.message);
        break;
    }
    case SCN_STEP_FAULT:
        rc = step_fault(r, n, st);
        break;
    case SCN_STEP_COMPACT:
        fakeapi_compact(r->srv, 0);
        break;
    case SCN_STEP_ADVANCE:
        return step_advance(r, n, st->duration_ns);
    case SCN_STEP_WAIT:
        return step_wait(r, n, st);
    case SCN_STEP_EXPECT: {
        char msg[1024];
        if (quiet(r, n) < 0)
            return -1;
        if (!holds(r, st->cond, msg, sizeof msg))
            rc = fail(r, n, "expect (line %d) failed: %s", st->line, msg);
        break;
    }
    case SCN_STEP_CRASH:
        rc = step_crash(r, n, st);
        break;
    case SCN_STEP_RESTART:
    case SCN_STEP_PARTITION:
    case SCN_STEP_HEAL:
        rc = step_replica(r, n, st);
        break;
    case SCN_STEP_REQUEST: {
        char msg[1024];
        if (scn__run_request(r->srv, st, msg, sizeof msg) < 0)
            rc = fail(r, n, "%s", msg);
        break;
    }
    case SCN_STEP_EXPECT_WRITE:
        return step_expect_write(r, n, st);
    default:
        rc = fail(r, n, "internal: unknown step kind %d", (int)st->kind);
        break;
    }
    if (rc < 0)
        return -1;
    return quiet(r, n) < 0 ? -1 : check_invariants(r, n);
}

/* ---- setup and teardown ---- */

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A run's own temporary file, named in path (cap bytes): a memory file
 * (memfd) named by /proc/self/fd, which needs no directory entry (creating
 * and removing one on a disk costs more than the rest of a short run's
 * teardown), or else a file made in /tmp. Its descriptor, or -1 for the
 * /tmp file, goes in *fd; temp_file_drop removes it.
 */
static int temp_file(const char *name, char *path, size_t cap, int *fd)
{
    *fd = memfd_create(name, MFD_CLOEXEC);
    if (*fd >= 0) {
        snprintf(path, cap, "/proc/self/fd/%d", *fd);
        if (access(path, W_OK) == 0)
            return 0;
        close(*fd);
        *fd = -1;
    }
    snprintf(path, cap, "/tmp/%s-XXXXXX", name);
    int tmp = mkstemp(path);
    if (tmp < 0) {
        path[0] = '\0';
        return -1;
    }
    close(tmp);
    return 0;
}

static void temp_file_drop(const char *path, int fd)
{
    if (fd >= 0)
        close(fd);
    else
        unlink(path);
}

/* The trace goes to the file asked for, or to a temporary one that only
 * its hash survives. */
static int open_trace(run *r)
{
    if (!r->trace_path[0]) {
        if (temp_file("scn-trace", r->trace_path, sizeof r->trace_path, &r->temp_trace_fd) < 0)
            return -1;
        r->temp_trace = true;
    }
    fakeapi_error err = {0};
    return fakeapi_trace_open(r->srv, r->trace_path, &err);
}

/* expectWrite bodies are checked against the run's own audit record (a
 * temporary file; recording draws nothing from the seed). */
static int open_record(run *r)
{
    if (!r->record_path[0]) {
        if (temp_file("scn-record", r->record_path, sizeof r->record_path, &r->temp_record_fd) < 0)
            return -1;
        r->temp_record = true;
    }
    return fakeapi_record_open(r->srv, r->record_path, NULL, NULL);
}

static void hash_trace(run *r)
{
    FILE *f = fopen(r->trace_path, "rb");
    uint64_t h = 1469598103934665603ULL;
    unsigned char buf[16384];
    size_t got;
    unsigned long lines = 0;
    while (f && (got = fread(buf, 1, sizeof buf, f)) > 0) {
        for (size_t i = 0; i < got; i++) {
            h = (h ^ (uint64_t)buf[i]) * 1099511628211ULL;
            lines += buf[i] == '\n';
        }
    }
    if (f)
        fclose(f);
    r->res->trace_hash = h;
    r->res->trace_lines = lines;
}

/*
 * The cluster (docs/cluster.md): the built-in controllers, nodes and kubelet
 * on a manager of their own. Its replica is the last of r->reps, after the
 * controllers under test (so that they keep their indexes, and with them
 * their seeds), and its k is -1: no crash, partition or restart step
 * addresses it.
 */
static int start_cluster(run *r)
{
    char msg[512] = "";
    int rc = kc_config_new(r->sc->cluster, r->sc->cluster_dir, &r->kc, msg, sizeof msg);
    if (rc < 0)
        return fail(r, -1, "cluster: %s", msg[0] ? msg : kc_strerror(rc));
    r->cluster_ref = (scn_controller_ref){.name = "cluster", .replicas = 1};
    replica *rep = &r->reps[r->nreps];
    *rep = (replica){.r = r, .ref = &r->cluster_ref, .index = (int)r->nreps, .k = -1};
    snprintf(rep->base_ua, sizeof rep->base_ua, "scenario/cluster");
    r->nreps++;
    return start_replica(r, rep);
}

static int setup(run *r)
{
    fakeapi_options fo = {
        .clock = scn__sched_fakeapi_clock(r->sched),
        .seed = r->seed,
        .hold_new_watches = true,
        .sync_gc = true,
        .trace_buffered = true,
        .http_threads = 1,
        .on_held = on_held,
        .on_held_ud = r,
    };
    const char *transport = getenv("SCENARIO_TRANSPORT");
    r->over_http = r->opts->over_http || (transport && !strcmp(transport, "http"));
    /* In-process managers never connect: no listener, no loop thread. */
    fo.no_http = !r->over_http;
    scn_run_timing *tm = &r->res->timing;
    double t = mono_s(), t1;
    if (fakeapi_start(&fo, &r->srv) < 0)
        return fail(r, -1, "the fake API server did not start");
    scn__inproc_roundtripper(r->srv, &r->inproc);
    t1 = mono_s();
    tm->fakeapi_start = t1 - t;
    t = t1;
    scn__outside out = {.count = outside_count,
                        .thread = outside_thread,
                        .run = outside_run,
                        .release_request = outside_release_request,
                        .ud = r};
    scn__sched_set_outside(r->sched, &out);
    if (open_trace(r) < 0)
        return fail(r, -1, "cannot open the trace");
    if ((r->record_path[0] || scn__needs_record(r->sc)) && open_record(r) < 0)
        return fail(r, -1, "cannot open the audit record");
    t1 = mono_s();
    tm->trace_open = t1 - t;
    t = t1;
    if (apply_objects(r, -1, r->sc->fixtures) < 0)
        return -1;
    t1 = mono_s();
    tm->fixtures = t1 - t;
    t = t1;
    size_t n = 0;
    for (size_t i = 0; i < r->sc->n_controllers; i++)
        n += (size_t)(r->sc->controllers[i].replicas > 0 ? r->sc->controllers[i].replicas : 1);
    r->n_mgr = 1;
    for (size_t i = 0; i < r->sc->n_controllers; i++)
        if (r->sc->controllers[i].replicas > r->n_mgr)
            r->n_mgr = r->sc->controllers[i].replicas;
    r->reps = calloc(n + 1, sizeof *r->reps); /* + the cluster's */
    r->plans = calloc((size_t)r->n_mgr, sizeof *r->plans);
    if (!r->reps || !r->plans)
        return fail(r, -1, "out of memory");
    for (size_t i = 0; i < r->sc->n_controllers; i++) {
        const scn_controller_ref *ref = &r->sc->controllers[i];
        if (scn__find_controller(ref->name, NULL, NULL) < 0) {
            char known[512];
            scn__list_controllers(known, sizeof known);
            return fail(r, -1, "no controller named %s (registered: %s)", ref->name, known);
        }
        for (int k = 0; k < (ref->replicas > 0 ? ref->replicas : 1); k++) {
            replica *rep = &r->reps[r->nreps];
            *rep = (replica){.r = r, .ref = ref, .index = (int)r->nreps, .k = k};
            snprintf(rep->base_ua, sizeof rep->base_ua, "scenario/%s-%d", ref->name, k);
            r->nreps++;
            if (start_replica(r, rep) < 0)
                return -1;
        }
    }
    if (r->sc->cluster && start_cluster(r) < 0)
        return -1;
    for (size_t i = 0; i < r->sc->n_start_steps; i++) {
        const scn_step *st = &r->sc->start_steps[i];
        if ((st->kind == SCN_STEP_FAULT ? step_fault(r, -1, st) : step_crash(r, -1, st)) < 0)
            return -1;
    }
    int rc = quiet(r, -1) < 0 ? -1 : check_invariants(r, -1);
    tm->managers_start = mono_s() - t;
    return rc;
}

/* After the checks: stop everything without turns (joins would deadlock). */
static void stop_all(run *r)
{
    scn__sched_free_run(r->sched);
    /* Requests held back by delays are answered now, so that their clients
     * stop; but a crashed replica's are dropped: what it sent never reaches
     * the store, not even now. Everything else it sends from now on meets
     * the rule that drops all it sends (zombie.block_rule). */
    uint64_t ids[64];
    size_t n_ids;
    while (r->srv && (n_ids = scn__sched_take_frozen_held(r->sched, ids, 64)) > 0)
        for (size_t i = 0; i < n_ids; i++)
            fakeapi_request_drop(r->srv, ids[i]);
    if (r->srv)
        fakeapi_hold_delays(r->srv, false);
    /* Let every held watch flow: informers still syncing must see their
     * events (or their streams end) to stop. */
    fakeapi_watch_info *w = NULL;
    size_t n = 0;
    if (r->srv && fakeapi_watches(r->srv, &w, &n) == 0) {
        for (size_t i = 0; i < n; i++)
            fakeapi_watch_hold(r->srv, w[i].id, false);
        free(w);
    }
    while (r->zombies) {
        zombie *z = r->zombies;
        r->zombies = z->next;
        ctrl_manager_stop(z->mgr);
        pthread_join(z->thread, NULL);
        ctrl_manager_free(z->mgr);
        free(z);
    }
    for (size_t i = 0; i < r->nreps; i++) {
        replica *rep = &r->reps[i];
        if (!rep->thread_started)
            continue;
        ctrl_manager_stop(rep->mgr);
        pthread_join(rep->thread, NULL);
        rep->thread_started = false;
        ctrl_manager_free(rep->mgr);
        rep->mgr = NULL;
    }
}

static void free_leadership(run *r);

static void teardown(run *r)
{
    free_leadership(r);
    /* The trace ends with the verdict: teardown runs without turns, so what
     * it does is not part of the run. */
    if (r->srv)
        fakeapi_trace_open(r->srv, NULL, NULL);
    if (r->srv && r->record_path[0])
        fakeapi_record_open(r->srv, NULL, NULL, NULL);
    stop_all(r);
    free(r->reps);
    free(r->plans);
    kc_config_free(r->kc); /* after the managers whose controllers held it */
    if (r->srv)
        fakeapi_trace_open(r->srv, NULL, NULL);
    double t = mono_s();
    if (r->trace_path[0])
        hash_trace(r);
    r->res->timing.trace_hash = mono_s() - t;
    if (r->temp_trace)
        temp_file_drop(r->trace_path, r->temp_trace_fd);
    if (r->temp_record)
        temp_file_drop(r->record_path, r->temp_record_fd);
    fakeapi_stop(r->srv);
    json_decref(r->faults);
    json_decref(r->writes_used);
    free(r->ready);
    free(r->watches);
}

int scn_run(const scn_scenario *sc, const scn_run_options *opts, scn_run_result *result)
{
    static const scn_run_options defaults = {0};
    if (!opts)
        opts = &defaults;
    memset(result, 0, sizeof *result);
    result->failed_step = -1;
    run r = {.sc = sc,
             .res = result,
             .max_steps = opts->max_steps > 0 ? opts->max_steps : DEFAULT_MAX_STEPS,
             .verbose = opts->verbose,
             .opts = opts,
             .faults = json_object()};
    r.seed = (sc->has_seed && !opts->seed_given) ? sc->seed : opts->seed;
    result->seed = r.seed;
    r.sched = scn__sched_new(r.seed, EPOCH_NS);
    if (!r.sched || !r.faults) {
        json_decref(r.faults);
        scn__sched_free(r.sched);
        return SCN_ERR_NOMEM;
    }
    r.limit_ns = EPOCH_NS + (sc->max_virtual_ns ? sc->max_virtual_ns : DEFAULT_MAX_VIRTUAL_NS);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = 0;
    if (opts->trace_path)
        snprintf(r.trace_path, sizeof r.trace_path, "%s", opts->trace_path);
    if (opts->record_path)
        snprintf(r.record_path, sizeof r.record_path, "%s", opts->record_path);
    struct timespec cpu0, cpu1;
    struct rusage ru0, ru1;
    unsigned long http0, http1, tw0 = 0, tw1 = 0;
    long long http_ns0, http_ns1;
    int64_t tw_ns0 = 0, tw_ns1 = 0;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
    getrusage(RUSAGE_SELF, &ru0);
    ctrl_transport_totals(&http0, &http_ns0);
    scn__cpu_pin pin;
    scn__cpu_pin_here(&pin); /* before setup: every thread of the run inherits it */
    if (setup(&r) == 0) {
        double ts = mono_s();
        result->passed = true;
        unsigned long before_last = 0;
        for (size_t i = 0; i < sc->n_steps && result->passed; i++) {
            if (i + 1 == sc->n_steps)
                before_last = run_errors(&r);
            if (run_step(&r, (int)i) < 0)
                result->passed = false;
        }
        result->reconcile_errors = run_errors(&r);
        result->failing_keys = run_failing(&r);
        if (sc->n_steps > 0)
            result->reconcile_errors_last_step = result->reconcile_errors - before_last;
        result->timing.steps = mono_s() - ts;
    } else if (!result->message[0]) {
        rc = SCN_ERR_SETUP;
    }
    if (rc == 0)
        report_state(&r, (int)sc->n_steps);
    result->virtual_ns = scn__sched_now(r.sched) - EPOCH_NS;
    if (r.srv)
        fakeapi_trace_stats(r.srv, &tw1, &tw_ns1);
    ctrl_transport_totals(&http1, &http_ns1);
    double td = mono_s();
    teardown(&r);
    scn__cpu_unpin(&pin);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
    getrusage(RUSAGE_SELF, &ru1);
    result->real_seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    scn_run_timing *tm = &result->timing;
    tm->teardown = mono_s() - td - tm->trace_hash;
    tm->cpu = (double)(cpu1.tv_sec - cpu0.tv_sec) + (cpu1.tv_nsec - cpu0.tv_nsec) / 1e9;
    tm->ctx_voluntary = ru1.ru_nvcsw - ru0.ru_nvcsw;
    tm->ctx_involuntary = ru1.ru_nivcsw - ru0.ru_nivcsw;
    tm->http_requests = http1 - http0;
    tm->http_seconds = (double)(http_ns1 - http_ns0) / 1e9;
    tm->trace_writes = tw1 - tw0;
    tm->trace_write_seconds = (double)(tw_ns1 - tw_ns0) / 1e9;
    scn__sched_stats ss;
    scn__sched_stats_get(r.sched, &ss);
    tm->thread_turns = ss.thread_turns;
    tm->outside_turns = ss.outside_turns;
    tm->advances = ss.advances;
    tm->handoff_wait = (double)ss.handoff_ns / 1e9;
    scn__sched_free(r.sched);
    return rc;
}

/* ---- leadership: the singleLeader invariant, and steps addressed to the leader ---- */

/* Whose writes a singleLeader invariant judges: the run, and when its Lease
 * is the one a scenario controller's managers elect on (kube-system/<name>),
 * that controller alone (another controller in the same manager replica
 * elects on its own Lease, or none). */
typedef struct leader_scope {
    run *r;
    const scn_controller_ref *only; /* NULL: every controller */
} leader_scope;

/* The manager replica a client belongs to, exactly (scn__client_is). */
static int replica_of_client(void *ud, const char *client, char *identity, size_t len)
{
    const leader_scope *sc = ud;
    for (size_t i = 0; i < sc->r->nreps; i++)
        if ((!sc->only || sc->r->reps[i].ref == sc->only) &&
            scn__client_is(sc->r->reps[i].base_ua, client, identity, len))
            return sc->r->reps[i].k;
    return -1;
}

static bool single_leader_holds(run *r, size_t i, char *msg, size_t len)
{
    if (!r->leaders && !(r->leaders = calloc(r->sc->n_invariants, sizeof *r->leaders))) {
        snprintf(msg, len, "out of memory");
        return false;
    }
    const scn_cond *c = r->sc->invariants[i];
    fakeapi_trace_flush(r->srv); /* it reads the trace so far */
    if (!r->leaders[i] && scn__leadership_new(c, r->trace_path, EPOCH_NS, &r->leaders[i]) < 0) {
        snprintf(msg, len, "cannot read the trace %s", r->trace_path);
        return false;
    }
    leader_scope scope = {.r = r};
    for (size_t k = 0; k < r->sc->n_controllers && c->ns && c->name; k++)
        if (strcmp(c->ns, "kube-system") == 0 && strcmp(c->name, r->sc->controllers[k].name) == 0)
            scope.only = &r->sc->controllers[k];
    return scn__leadership_check(r->leaders[i], replica_of_client, &scope, msg, len);
}

static void free_leadership(run *r)
{
    for (size_t i = 0; r->leaders && i < r->sc->n_invariants; i++)
        scn__leadership_free(r->leaders[i]);
    free(r->leaders);
    r->leaders = NULL;
    json_decref(r->replica_names);
    r->replica_names = NULL;
}

/* The manager replica whose manager of the controller called name (NULL:
 * the one leader-elected controller, which the parser checked there is)
 * holds its Lease and runs: not crashed, and its manager has not exited (as
 * it does when it loses the Lease). -1 and a failure otherwise. */
static int leader_replica(run *r, int n, const char *name)
{
    const scn_controller_ref *ref = NULL;
    for (size_t i = 0; i < r->sc->n_controllers && !ref; i++)
        if (name ? strcmp(r->sc->controllers[i].name, name) == 0
                 : r->sc->controllers[i].replicas > 1)
            ref = &r->sc->controllers[i];
    if (!ref)
        return fail(r, n, "replica: leader: no controller %s%s",
                    name ? "named " : "is leader-elected", name ? name : "");
    json_t *lease = NULL;
    if (fakeapi_get(r->srv, "coordination.k8s.io/v1", "Lease", "kube-system", ref->name, &lease,
                    NULL) < 0)
        return fail(r, n, "replica: leader: no Lease kube-system/%s yet", ref->name);
    const char *holder =
        json_string_value(json_object_get(json_object_get(lease, "spec"), "holderIdentity"));
    int found = -1;
    for (size_t i = 0; i < r->nreps && holder && found < 0; i++)
        if (r->reps[i].ref == ref && r->reps[i].thread_started && !r->reps[i].crashed &&
            !atomic_load(&r->reps[i].exited) && strcmp(r->reps[i].ua, holder) == 0)
            found = r->reps[i].k;
    if (found < 0)
        fail(r, n, "replica: leader: Lease kube-system/%s is held by %s, no running replica",
             ref->name, holder && *holder ? holder : "nobody");
    json_decref(lease);
    return found;
}

/* The manager replica a crash, restart, partition or heal step addresses:
 * an index, the leader now, or a name an earlier step gave; named "as" if
 * asked. -1 (and a failure) if there is none. */
static int addressed_replica(run *r, int n, const scn_step *st)
{
    int k;
    json_t *named = NULL;
    if (!r->replica_names && !(r->replica_names = json_object()))
        return fail(r, n, "out of memory");
    if (!st->replica_ref)
        k = st->replica;
    else if (strcmp(st->replica_ref, "leader") == 0)
        k = leader_replica(r, n, st->replica_controller);
    else if ((named = json_object_get(r->replica_names, st->replica_ref)))
        k = (int)json_integer_value(named);
    else
        return fail(r, n, "no replica is named %s", st->replica_ref);
    if (k < 0)
        return -1;
    if (k >= r->n_mgr)
        return fail(r, n, "no replica %d (the scenario runs %d)", k, r->n_mgr);
    if (st->replica_as)
        json_object_set_new(r->replica_names, st->replica_as, json_integer(k));
    if (r->verbose) {
        fprintf(stderr, "scenario: step %d addresses replica %d:", n, k);
        for (size_t i = 0; i < r->nreps; i++)
            if (r->reps[i].k == k)
                fprintf(stderr, " %s", r->reps[i].ua);
        fprintf(stderr, "\n");
    }
    return k;
}
