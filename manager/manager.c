/*
 * manager.c - the Manager: runnables in controller-runtime's start order,
 * leader election, the metrics and health servers, graceful shutdown.
 *
 * DESIGN
 * - Threads. ctrl_manager_start runs on the caller's thread and blocks
 *   until the manager has stopped. Each runnable runs on a thread of its
 *   own (its start callback blocks until its stop callback is called). The
 *   elector (leader.c) has one thread; it starts the leader-elected
 *   runnables from there (on_started). Each HTTP server has one
 *   libmicrohttpd thread. The cache's informers have theirs (cache.c).
 * - Locks. mgr->mu protects the runnable list, the probes, the
 *   recorders and the state flags; mgr->cv announces every change of state
 *   (a runnable returned, stop requested, elected). Order: a ctrl_stop's mu
 *   before mgr->mu (the signal thread stops managers while holding it);
 *   mgr->mu before the elector's and the metrics' mutexes (leaf locks).
 *   mgr->mu is never held while calling a runnable, a health check, the
 *   cache, or while waiting for the elector.
 * - Start order: HTTP servers; the cache, then wait for it to sync; the
 *   runnables that need no leadership; leader election (or, without it,
 *   at once) the leader-elected runnables. Stop: leader-elected runnables,
 *   the elector (releasing the Lease if asked), the others, the cache, the
 *   servers. Each group is asked to stop as a whole, then awaited; all of
 *   it within graceful_shutdown_ns from the stop request. Runnables still
 *   running then are left behind (start returns CTRL_ERR_TIMEOUT) and
 *   joined by ctrl_manager_free.
 */
#include "manager_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "controller_int.h"
#include "health_int.h"
#include "httpserver_int.h"
#include "leader_int.h"
#include "log_int.h"
#include "recorder_int.h"
#include "cache_int.h"
#include "spawn_int.h"

#define DEFAULT_LEASE (15 * CTRL_SECOND)
#define DEFAULT_RENEW (10 * CTRL_SECOND)
#define DEFAULT_RETRY (2 * CTRL_SECOND)
#define DEFAULT_GRACE (30 * CTRL_SECOND)
#define DEFAULT_SYNC_PERIOD (10 * CTRL_HOUR)
#define CACHE_SYNC_TIMEOUT (2 * CTRL_MINUTE)
#define MAX_RUNNABLES 4096
#define MAX_RECORDERS 256

enum group { G_OTHERS, G_LEADER };
enum state { ST_NEW, ST_RUNNING, ST_DONE };

typedef struct mrun {
    ctrl_runnable r;
    char *name;
    enum group group;
    ctrl_manager *mgr;
    pthread_t thread;
    bool started;     /* thread created */
    bool entered;     /* its thread is about to call start */
    bool done;        /* start returned */
    bool stop_called; /* stop callback called */
    bool joined;
    int rc;
} mrun;

struct ctrl_stop {
    pthread_mutex_t mu;
    bool tripped;
    ctrl_manager *mgrs[64];
    size_t n;
};

struct ctrl_manager {
    ctrl_manager_options opts; /* strings point at the copies below */
    char *leader_id, *leader_ns, *identity, *metrics_addr, *health_addr, *user_agent;
    char **namespaces;
    size_t nnamespaces;
    ctrl_clock clock;
    ctrl_hooks hooks;
    bool has_hooks;
    uint64_t seed;

    ctrl_config *cfg;
    ctrl_client *client;
    ctrl_client *le_client;
    ctrl_cache *cache;
    ctrl_metrics *metrics;
    ctrl__logger *log;
    ctrl__leader *leader;
    ctrl__httpserver *metrics_srv, *health_srv;

    pthread_mutex_t mu;
    pthread_cond_t cv;
    mrun **runs;
    size_t nruns, caprun;
    ctrl__checks healthz, readyz; /* own locks (health.c) */
    ctrl__idle_probe *probes;
    size_t nprobes, capprobes;
    ctrl_recorder **recorders;
    size_t nrec, caprec;
    enum state state;
    bool others_started, elected;
    bool stop_requested;
    int stop_rc;
};

/* ---- small helpers ---- */

#define MLOG(mgr, level, ...) CTRL__LOG((mgr)->log, (level), "manager", __VA_ARGS__)

static int grow(void **v, size_t *cap, size_t n, size_t size, size_t max)
{
    if (n < *cap)
        return 0;
    if (n >= max)
        return CTRL_ERR_ARG;
    size_t nc = *cap ? *cap * 2 : 8;
    void *p = realloc(*v, nc * size);
    if (!p)
        return CTRL_ERR_NOMEM;
    *v = p;
    *cap = nc;
    return 0;
}

static char *dup_or_null(const char *s, bool *oom)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *oom = true;
    return d;
}

static uint64_t random_seed(void)
{
    uint64_t seed = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        if (fread(&seed, sizeof seed, 1, f) != 1)
            seed = 0;
        fclose(f);
    }
    if (!seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
    }
    return seed ? seed : 1;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* controller-runtime's default identity: hostname + "_" + a UUID. */
static char *default_identity(uint64_t seed)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0 || !host[0])
        snprintf(host, sizeof host, "localhost");
    uint64_t s = seed, a = splitmix(&s), b = splitmix(&s);
    char *id = malloc(strlen(host) + 40);
    if (id)
        sprintf(id, "%s_%08" PRIx32 "-%04" PRIx32 "-4%03" PRIx32 "-%04" PRIx32 "-%012" PRIx64, host,
                (uint32_t)(a >> 32), (uint32_t)(a >> 16) & 0xffff, (uint32_t)a & 0xfff,
                ((uint32_t)(b >> 48) & 0x3fff) | 0x8000, (uint64_t)(b & 0xffffffffffffULL));
    return id;
}

/* rest_client_requests_total, counted per HTTP attempt by the transport. */
static void on_response(void *ud, int code, const char *method, const char *host)
{
    ctrl_manager *mgr = ud;
    char labels[512], c[16];
    if (code > 0)
        snprintf(c, sizeof c, "%d", code);
    else
        snprintf(c, sizeof c, "<error>");
    snprintf(labels, sizeof labels, "code=\"%s\",host=\"%s\",method=\"%s\"", c, host, method);
    ctrl_metrics_add(mgr->metrics, "rest_client_requests_total", labels, 1);
}

static void leader_log(void *ud, int level, const char *msg)
{
    ctrl_manager *mgr = ud;
    CTRL__LOG(mgr->log, (ctrl_log_level)level, "leaderelection", msg);
}

/* ---- runnables ---- */

static bool is_controller(const mrun *m)
{
    return m->r.start == ctrl__controller_run;
}

static void *run_thread(void *arg)
{
    mrun *m = arg;
    ctrl_manager *mgr = m->mgr;
    pthread_mutex_lock(&mgr->mu);
    m->entered = true;
    ctrl_clock_notify(&mgr->clock, &mgr->cv);
    pthread_mutex_unlock(&mgr->mu);
    int rc = m->r.start(m->r.ud);
    pthread_mutex_lock(&mgr->mu);
    m->done = true;
    m->rc = rc;
    if (rc < 0 && rc != CTRL_ERR_CANCELLED && !mgr->stop_requested) {
        mgr->stop_rc = rc;
        mgr->stop_requested = true;
    }
    ctrl_clock_notify(&mgr->clock, &mgr->cv);
    pthread_mutex_unlock(&mgr->mu);
    if (rc < 0 && rc != CTRL_ERR_CANCELLED)
        MLOG(mgr, CTRL_LOG_ERROR, "runnable failed", "runnable", m->name, "error",
             ctrl_strerror(rc));
    return NULL;
}

/*
 * Under mu: start every runnable of g not started yet, and wait until each
 * of their threads is about to call start (as controller-runtime's
 * runnable groups wait for their goroutines to signal ready), so that a
 * later group never overtakes an earlier one.
 */
static void start_group(ctrl_manager *mgr, enum group g)
{
    size_t first = mgr->nruns;
    for (size_t i = 0; i < mgr->nruns; i++) {
        mrun *m = mgr->runs[i];
        if (m->group != g || m->started)
            continue;
        if (ctrl__spawn(&m->thread, mgr->has_hooks ? &mgr->hooks : NULL, m->name, run_thread, m) !=
            0) {
            if (!mgr->stop_requested) {
                mgr->stop_rc = CTRL_ERR_NOMEM;
                mgr->stop_requested = true;
                ctrl_clock_notify(&mgr->clock, &mgr->cv);
            }
            break;
        }
        m->started = true;
        if (i < first)
            first = i;
    }
    for (size_t i = first; i < mgr->nruns; i++) {
        mrun *m = mgr->runs[i];
        while (m->group == g && m->started && !m->entered)
            ctrl_clock_wait_until(&mgr->clock, &mgr->cv, &mgr->mu, INT64_MAX);
    }
}

/*
 * Stop group g: call every stop callback (latest added first), then wait
 * until all have returned or deadline. True when all returned.
 */
static bool stop_group(ctrl_manager *mgr, enum group g, int64_t deadline)
{
    pthread_mutex_lock(&mgr->mu);
    size_t n = mgr->nruns;
    mrun **todo = malloc((n ? n : 1) * sizeof *todo);
    size_t k = 0;
    for (size_t i = n; todo && i-- > 0;) {
        mrun *m = mgr->runs[i];
        if (m->group == g && m->started && !m->stop_called) {
            m->stop_called = true;
            todo[k++] = m;
        }
    }
    pthread_mutex_unlock(&mgr->mu);
    for (size_t i = 0; i < k; i++)
        if (todo[i]->r.stop)
            todo[i]->r.stop(todo[i]->r.ud);
    free(todo);

    pthread_mutex_lock(&mgr->mu);
    bool all = false;
    for (;;) {
        all = true;
        for (size_t i = 0; i < mgr->nruns; i++) {
            mrun *m = mgr->runs[i];
            if (m->group == g && m->started && !m->done)
                all = false;
        }
        if (all || ctrl_clock_now(&mgr->clock) >= deadline)
            break;
        ctrl_clock_wait_until(&mgr->clock, &mgr->cv, &mgr->mu, deadline);
    }
    /* Join those that returned (their threads are ending now). */
    for (size_t i = 0; i < mgr->nruns; i++) {
        mrun *m = mgr->runs[i];
        if (m->group == g && m->started && m->done && !m->joined) {
            m->joined = true;
            pthread_mutex_unlock(&mgr->mu);
            ctrl__join(mgr->has_hooks ? &mgr->hooks : NULL, m->thread);
            pthread_mutex_lock(&mgr->mu);
        }
    }
    pthread_mutex_unlock(&mgr->mu);
    return all;
}

static int add_run(ctrl_manager *mgr, const ctrl_runnable *r)
{
    mrun *m = calloc(1, sizeof *m);
    if (!m)
        return CTRL_ERR_NOMEM;
    m->r = *r;
    m->name = strdup(r->name ? r->name : "runnable");
    m->mgr = mgr;
    m->group = r->needs_leader ? G_LEADER : G_OTHERS;
    if (!m->name) {
        free(m);
        return CTRL_ERR_NOMEM;
    }
    m->r.name = m->name;
    pthread_mutex_lock(&mgr->mu);
    int rc = 0;
    if (mgr->state == ST_DONE || mgr->stop_requested)
        rc = CTRL_ERR_ARG;
    /* Controller names are unique per manager (ctrl_builder_complete says
     * so; they name metrics series and User-Agents), unless the new one
     * skips the check; one that skipped it is not held against others
     * (controller-runtime's SkipNameValidation). */
    bool dup = false;
    if (rc == 0 && is_controller(m) && !ctrl__controller_skips_name_validation(m->r.ud))
        for (size_t i = 0; !dup && i < mgr->nruns; i++)
            dup = is_controller(mgr->runs[i]) &&
                  !ctrl__controller_skips_name_validation(mgr->runs[i]->r.ud) &&
                  !strcmp(mgr->runs[i]->name, m->name);
    if (dup)
        rc = CTRL_ERR_ARG;
    if (rc == 0)
        rc = grow((void **)&mgr->runs, &mgr->caprun, mgr->nruns, sizeof *mgr->runs, MAX_RUNNABLES);
    if (rc == 0) {
        mgr->runs[mgr->nruns++] = m;
        /* Added while running: start at once if its group already runs. */
        if (mgr->state == ST_RUNNING && ((m->group == G_OTHERS && mgr->others_started) ||
                                         (m->group == G_LEADER && mgr->elected)))
            start_group(mgr, m->group);
    }
    pthread_mutex_unlock(&mgr->mu);
    if (dup)
        MLOG(mgr, CTRL_LOG_ERROR,
             "controller names must be unique to avoid multiple controllers reporting the same "
             "metric (set skip_name_validation to allow it)",
             "controller", m->name, "error", "a controller with this name already exists");
    if (rc < 0) {
        free(m->name);
        free(m);
    }
    return rc;
}

int ctrl_manager_add(ctrl_manager *mgr, const ctrl_runnable *r)
{
    if (!mgr || !r || !r->start)
        return CTRL_ERR_ARG;
    return add_run(mgr, r);
}

/* ---- lifecycle ---- */

static int fill_options(ctrl_manager *mgr, const ctrl_manager_options *in, const ctrl_config *cfg)
{
    static const ctrl_manager_options none = {0};
    if (!in)
        in = &none;
    mgr->opts = *in;
    ctrl_manager_options *o = &mgr->opts;
    bool oom = false;
    if (o->leader_election && (!in->leader_election_id || !*in->leader_election_id))
        return CTRL_ERR_ARG;
    o->lease_duration_ns = o->lease_duration_ns > 0 ? o->lease_duration_ns : DEFAULT_LEASE;
    o->renew_deadline_ns = o->renew_deadline_ns > 0 ? o->renew_deadline_ns : DEFAULT_RENEW;
    o->retry_period_ns = o->retry_period_ns > 0 ? o->retry_period_ns : DEFAULT_RETRY;
    /* client-go's NewLeaderElector checks. */
    if (o->leader_election && (o->lease_duration_ns <= o->renew_deadline_ns ||
                               (double)o->renew_deadline_ns <= 1.2 * (double)o->retry_period_ns))
        return CTRL_ERR_ARG;
    if (o->graceful_shutdown_ns == 0)
        o->graceful_shutdown_ns = DEFAULT_GRACE;
    if (o->sync_period_ns <= 0)
        o->sync_period_ns = DEFAULT_SYNC_PERIOD;
    mgr->seed = in->seed ? in->seed : random_seed();
    o->seed = mgr->seed;
    if (in->clock)
        mgr->clock = *in->clock;
    o->clock = &mgr->clock;
    if (in->hooks) {
        mgr->hooks = *in->hooks;
        mgr->has_hooks = true;
        o->hooks = &mgr->hooks;
    }
    mgr->leader_id = dup_or_null(in->leader_election_id, &oom);
    o->leader_election_id = mgr->leader_id;
    mgr->leader_ns = dup_or_null(in->leader_election_namespace ? in->leader_election_namespace
                                                               : ctrl_config_namespace(cfg),
                                 &oom);
    o->leader_election_namespace = mgr->leader_ns;
    mgr->identity = in->identity ? dup_or_null(in->identity, &oom) : default_identity(mgr->seed);
    oom = oom || !mgr->identity;
    o->identity = mgr->identity;
    mgr->metrics_addr = dup_or_null(in->metrics_addr ? in->metrics_addr : ":8080", &oom);
    o->metrics_addr = mgr->metrics_addr;
    mgr->health_addr = dup_or_null(in->health_probe_addr, &oom);
    o->health_probe_addr = mgr->health_addr;
    mgr->user_agent = dup_or_null(in->user_agent, &oom);
    o->user_agent = mgr->user_agent;
    if (in->namespaces) {
        size_t n = 0;
        while (in->namespaces[n])
            n++;
        mgr->namespaces = calloc(n + 1, sizeof(char *));
        if (!mgr->namespaces)
            return CTRL_ERR_NOMEM;
        mgr->nnamespaces = n;
        for (size_t i = 0; i < n; i++)
            mgr->namespaces[i] = dup_or_null(in->namespaces[i], &oom);
        o->namespaces = (const char *const *)mgr->namespaces;
    }
    return oom ? CTRL_ERR_NOMEM : 0;
}

int ctrl_manager_new_for_config(const ctrl_config *cfg, const ctrl_manager_options *opts,
                                ctrl_manager **out, ctrl_error *err)
{
    if (!cfg || !out) {
        if (err) {
            ctrl_error_deinit(err);
            err->code = CTRL_ERR_ARG;
            snprintf(err->message, sizeof err->message, "a config and out are required");
        }
        return CTRL_ERR_ARG;
    }
    ctrl_manager *mgr = calloc(1, sizeof *mgr);
    if (!mgr)
        return CTRL_ERR_NOMEM;
    pthread_mutex_init(&mgr->mu, NULL);
    ctrl__checks_init(&mgr->healthz);
    ctrl__checks_init(&mgr->readyz);
    pthread_cond_init(&mgr->cv, NULL);
    int rc = fill_options(mgr, opts, cfg);
    if (rc < 0) {
        if (err) {
            ctrl_error_deinit(err);
            err->code = rc;
            snprintf(err->message, sizeof err->message, "%s",
                     rc == CTRL_ERR_ARG ? "invalid manager options (leader election id and "
                                          "durations: lease > renew deadline > 1.2 x retry)"
                                        : "out of memory");
        }
        goto fail;
    }
    ctrl__log_options lo = {.level = mgr->opts.log_level,
                            .format = mgr->opts.log_format,
                            .sink = mgr->opts.log_sink,
                            .user = mgr->opts.log_user,
                            .clock = &mgr->clock};
    rc = ctrl__logger_new(&lo, &mgr->log);
    if (rc == 0)
        rc = ctrl_metrics_new(&mgr->metrics);
    if (rc == 0) {
        ctrl_metrics_counter(mgr->metrics, "rest_client_requests_total",
                             "Number of HTTP requests, partitioned by status code, method, and "
                             "host.");
        mgr->cfg = ctrl_config_copy(cfg);
        rc = mgr->cfg ? 0 : CTRL_ERR_NOMEM;
    }
    if (rc < 0)
        goto fail;
    ctrl_client_options co = {.user_agent = mgr->user_agent,
                              .clock = &mgr->clock,
                              .on_response = on_response,
                              .on_response_ud = mgr};
    rc = ctrl_client_new(mgr->cfg, &co, &mgr->client, err);
    if (rc < 0)
        goto fail;
    ctrl_cache_options cao = {.namespaces = mgr->opts.namespaces,
                              .resync_ns = mgr->opts.sync_period_ns,
                              .clock = &mgr->clock,
                              .seed = mgr->seed,
                              .hooks = mgr->has_hooks ? &mgr->hooks : NULL};
    rc = ctrl_cache_new(mgr->client, &cao, &mgr->cache, err);
    if (rc < 0)
        goto fail;
    ctrl__cache_set_logger(mgr->cache, mgr->log);
    if (mgr->opts.leader_election) {
        /* Its own client, as controller-runtime's: a User-Agent of its own
         * ("<ua>/leader-election"), no retries inside one try and a request
         * timeout well inside the renew deadline. */
        const char *ua = ctrl_client_user_agent(mgr->client);
        char *leua = malloc(strlen(ua) + 20);
        if (!leua) {
            rc = CTRL_ERR_NOMEM;
            goto fail;
        }
        sprintf(leua, "%s/leader-election", ua);
        int64_t tmo = mgr->opts.renew_deadline_ns / 2 / CTRL_MILLISECOND;
        ctrl_client_options lco = {.user_agent = leua,
                                   .clock = &mgr->clock,
                                   .max_retries = -1,
                                   .timeout_ms = (int)(tmo < 100 ? 100 : tmo),
                                   .connect_timeout_ms = (int)(tmo < 100 ? 100 : tmo),
                                   .on_response = on_response,
                                   .on_response_ud = mgr};
        rc = ctrl_client_new(mgr->cfg, &lco, &mgr->le_client, err);
        free(leua);
        if (rc < 0)
            goto fail;
    }
    *out = mgr;
    return 0;
fail:
    ctrl_manager_free(mgr);
    return rc;
}

int ctrl_manager_new(const char *kubeconfig, const ctrl_manager_options *opts, ctrl_manager **out,
                     ctrl_error *err)
{
    if (!out)
        return CTRL_ERR_ARG;
    ctrl_config *cfg = NULL;
    int rc = kubeconfig ? ctrl_config_from_kubeconfig(kubeconfig, NULL, &cfg, err)
                        : ctrl_config_load(NULL, &cfg, err);
    if (rc < 0)
        return rc;
    rc = ctrl_manager_new_for_config(cfg, opts, out, err);
    ctrl_config_free(cfg);
    return rc;
}

/* ---- HTTP ---- */

static bool verbose_arg(const char *(*query)(void *, const char *), void *qctx)
{
    const char *v = query(qctx, "verbose");
    return v && strcmp(v, "false") != 0 && strcmp(v, "0") != 0;
}

static void serve_health(void *ud, const char *method, const char *path,
                         const char *(*query)(void *qctx, const char *key), void *qctx,
                         ctrl__http_reply *out)
{
    (void)method;
    ctrl_manager *mgr = ud;
    ctrl__checks *set = NULL;
    const char *sub = NULL;
    if (strncmp(path, "/healthz", 8) == 0 && (path[8] == '\0' || path[8] == '/')) {
        set = &mgr->healthz;
        sub = path + 8;
    } else if (strncmp(path, "/readyz", 7) == 0 && (path[7] == '\0' || path[7] == '/')) {
        set = &mgr->readyz;
        sub = path + 7;
    }
    if (!set) {
        out->status = 404;
        out->body = strdup("404 page not found\n");
        return;
    }
    ctrl__checks_answer(set, sub, verbose_arg(query, qctx), query(qctx, "exclude"), out);
}

static void serve_metrics(void *ud, const char *method, const char *path,
                          const char *(*query)(void *qctx, const char *key), void *qctx,
                          ctrl__http_reply *out)
{
    (void)method, (void)query, (void)qctx;
    ctrl_manager *mgr = ud;
    if (strcmp(path, "/metrics") != 0) {
        out->status = 404;
        out->body = strdup("404 page not found\n");
        return;
    }
    /* Refresh the controllers' time-based gauges first. */
    pthread_mutex_lock(&mgr->mu);
    for (size_t i = 0; i < mgr->nruns; i++)
        if (is_controller(mgr->runs[i]))
            ctrl__controller_update_metrics(mgr->runs[i]->r.ud);
    pthread_mutex_unlock(&mgr->mu);
    out->status = 200;
    out->body = ctrl_metrics_text(mgr->metrics);
    out->content_type = "text/plain; version=0.0.4; charset=utf-8";
    if (!out->body)
        out->status = 500;
}

static bool addr_off(const char *addr)
{
    return !addr || !*addr || strcmp(addr, "0") == 0;
}

static int start_servers(ctrl_manager *mgr)
{
    int rc = 0;
    char why[512];
    if (!addr_off(mgr->opts.metrics_addr)) {
        rc = ctrl__httpserver_start(mgr->opts.metrics_addr, serve_metrics, mgr, &mgr->metrics_srv,
                                    why, sizeof why);
        if (rc < 0) {
            MLOG(mgr, CTRL_LOG_ERROR, "cannot serve metrics", "addr", mgr->opts.metrics_addr,
                 "error", why[0] ? why : ctrl_strerror(rc));
            return rc;
        }
    }
    if (!addr_off(mgr->opts.health_probe_addr)) {
        rc = ctrl__httpserver_start(mgr->opts.health_probe_addr, serve_health, mgr,
                                    &mgr->health_srv, why, sizeof why);
        if (rc < 0) {
            MLOG(mgr, CTRL_LOG_ERROR, "cannot serve health probes", "addr",
                 mgr->opts.health_probe_addr, "error", why[0] ? why : ctrl_strerror(rc));
            return rc;
        }
    }
    return 0;
}

/* ---- leader election callbacks (elector thread) ---- */

static void on_started_leading(void *ud)
{
    ctrl_manager *mgr = ud;
    pthread_mutex_lock(&mgr->mu);
    if (!mgr->stop_requested) {
        mgr->elected = true;
        start_group(mgr, G_LEADER);
        ctrl_clock_notify(&mgr->clock, &mgr->cv);
    }
    pthread_mutex_unlock(&mgr->mu);
}

static void on_lost_leading(void *ud)
{
    ctrl_manager *mgr = ud;
    pthread_mutex_lock(&mgr->mu);
    if (!mgr->stop_requested) {
        mgr->stop_rc = CTRL_ERR_LEADERSHIP_LOST;
        mgr->stop_requested = true;
        ctrl_clock_notify(&mgr->clock, &mgr->cv);
    }
    pthread_mutex_unlock(&mgr->mu);
    MLOG(mgr, CTRL_LOG_ERROR, "leader election lost");
}

/* ---- stop contexts ---- */

static int stop_register(ctrl_stop *s, ctrl_manager *mgr)
{
    if (!s)
        return 0;
    pthread_mutex_lock(&s->mu);
    int rc = 0;
    if (s->tripped)
        ctrl_manager_stop(mgr);
    else if (s->n < sizeof s->mgrs / sizeof s->mgrs[0])
        s->mgrs[s->n++] = mgr;
    else
        rc = CTRL_ERR_ARG;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static void stop_unregister(ctrl_stop *s, ctrl_manager *mgr)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->n; i++)
        if (s->mgrs[i] == mgr) {
            s->mgrs[i] = s->mgrs[--s->n];
            break;
        }
    pthread_mutex_unlock(&s->mu);
}

void ctrl__stop_trip(ctrl_stop *s)
{
    pthread_mutex_lock(&s->mu);
    s->tripped = true;
    for (size_t i = 0; i < s->n; i++)
        ctrl_manager_stop(s->mgrs[i]);
    pthread_mutex_unlock(&s->mu);
}

ctrl_stop *ctrl__stop_new(void)
{
    ctrl_stop *s = calloc(1, sizeof *s);
    if (s)
        pthread_mutex_init(&s->mu, NULL);
    return s;
}

/* ---- start and stop ---- */

static int wait_cache_synced(ctrl_manager *mgr)
{
    int64_t deadline = ctrl_clock_now(&mgr->clock) + CACHE_SYNC_TIMEOUT;
    for (;;) {
        pthread_mutex_lock(&mgr->mu);
        bool stop = mgr->stop_requested;
        pthread_mutex_unlock(&mgr->mu);
        if (stop)
            return CTRL_ERR_CANCELLED;
        int64_t left = deadline - ctrl_clock_now(&mgr->clock);
        if (left <= 0)
            return CTRL_ERR_TIMEOUT;
        /* Short slices, so that a stop request is seen while waiting. */
        int rc = ctrl_cache_wait_for_sync(
            mgr->cache, left < 100 * CTRL_MILLISECOND ? left : 100 * CTRL_MILLISECOND);
        if (rc != CTRL_ERR_TIMEOUT)
            return rc;
    }
}

int ctrl_manager_start(ctrl_manager *mgr, ctrl_stop *stop)
{
    if (!mgr)
        return CTRL_ERR_ARG;
    pthread_mutex_lock(&mgr->mu);
    if (mgr->state != ST_NEW) {
        pthread_mutex_unlock(&mgr->mu);
        return CTRL_ERR_ARG;
    }
    mgr->state = ST_RUNNING;
    pthread_mutex_unlock(&mgr->mu);
    int rc = stop_register(stop, mgr);
    bool cache_started = false, le_started = false;
    if (rc < 0)
        goto shutdown;
    MLOG(mgr, CTRL_LOG_INFO, "starting manager", "identity", mgr->opts.identity);

    rc = start_servers(mgr);
    if (rc < 0)
        goto shutdown;
    rc = ctrl_cache_start(mgr->cache);
    if (rc < 0)
        goto shutdown;
    cache_started = true;
    rc = wait_cache_synced(mgr);
    if (rc == CTRL_ERR_CANCELLED)
        rc = 0; /* stopped while syncing: a clean stop */
    if (rc < 0) {
        char kinds[1024];
        ctrl__cache_unsynced(mgr->cache, kinds, sizeof kinds);
        MLOG(mgr, CTRL_LOG_ERROR, "cache did not sync", "error", ctrl_strerror(rc), "kinds", kinds);
        goto shutdown;
    }

    pthread_mutex_lock(&mgr->mu);
    if (!mgr->stop_requested) {
        mgr->others_started = true;
        start_group(mgr, G_OTHERS);
        if (!mgr->opts.leader_election) {
            mgr->elected = true;
            start_group(mgr, G_LEADER);
            ctrl_clock_notify(&mgr->clock, &mgr->cv);
        }
    }
    bool stopping = mgr->stop_requested;
    pthread_mutex_unlock(&mgr->mu);

    if (mgr->opts.leader_election && !stopping) {
        ctrl__leader_options lo = {.client = mgr->le_client,
                                   .ns = mgr->opts.leader_election_namespace,
                                   .name = mgr->opts.leader_election_id,
                                   .identity = mgr->opts.identity,
                                   .lease_ns = mgr->opts.lease_duration_ns,
                                   .renew_deadline_ns = mgr->opts.renew_deadline_ns,
                                   .retry_ns = mgr->opts.retry_period_ns,
                                   .release_on_cancel = mgr->opts.release_on_cancel,
                                   .clock = &mgr->clock,
                                   .metrics = mgr->metrics,
                                   .seed = mgr->seed ^ 0x5bd1e995ULL,
                                   .hooks = mgr->has_hooks ? &mgr->hooks : NULL,
                                   .on_started = on_started_leading,
                                   .on_lost = on_lost_leading,
                                   .log = leader_log,
                                   .ud = mgr};
        ctrl__leader *le = NULL;
        rc = ctrl__leader_new(&lo, &le);
        if (rc == 0) {
            pthread_mutex_lock(&mgr->mu);
            mgr->leader = le;
            pthread_mutex_unlock(&mgr->mu);
            rc = ctrl__leader_start(le);
        }
        if (rc < 0)
            goto shutdown;
        le_started = true;
    }

    pthread_mutex_lock(&mgr->mu);
    while (!mgr->stop_requested)
        ctrl_clock_wait_until(&mgr->clock, &mgr->cv, &mgr->mu, INT64_MAX);
    pthread_mutex_unlock(&mgr->mu);

shutdown:;
    pthread_mutex_lock(&mgr->mu);
    mgr->stop_requested = true;
    if (rc < 0 && mgr->stop_rc == 0)
        mgr->stop_rc = rc;
    pthread_mutex_unlock(&mgr->mu);
    MLOG(mgr, CTRL_LOG_INFO, "stopping and waiting for runnables");
    int64_t grace = mgr->opts.graceful_shutdown_ns;
    int64_t now = ctrl_clock_now(&mgr->clock);
    int64_t deadline = grace < 0 || now > INT64_MAX - grace ? INT64_MAX : now + grace;
    bool in_time = stop_group(mgr, G_LEADER, deadline);
    if (le_started)
        ctrl__leader_stop(mgr->leader);
    in_time = stop_group(mgr, G_OTHERS, deadline) && in_time;
    if (cache_started)
        ctrl_cache_stop(mgr->cache);
    ctrl__httpserver_stop(mgr->metrics_srv);
    mgr->metrics_srv = NULL;
    ctrl__httpserver_stop(mgr->health_srv);
    mgr->health_srv = NULL;
    stop_unregister(stop, mgr);

    pthread_mutex_lock(&mgr->mu);
    if (!in_time && mgr->stop_rc == 0)
        mgr->stop_rc = CTRL_ERR_TIMEOUT;
    rc = mgr->stop_rc;
    mgr->state = ST_DONE;
    ctrl_clock_notify(&mgr->clock, &mgr->cv);
    pthread_mutex_unlock(&mgr->mu);
    if (!in_time)
        MLOG(mgr, CTRL_LOG_ERROR, "runnables did not stop within the graceful shutdown timeout");
    MLOG(mgr, CTRL_LOG_INFO, "manager stopped");
    return rc;
}

void ctrl_manager_stop(ctrl_manager *mgr)
{
    if (!mgr)
        return;
    pthread_mutex_lock(&mgr->mu);
    mgr->stop_requested = true;
    ctrl_clock_notify(&mgr->clock, &mgr->cv);
    pthread_mutex_unlock(&mgr->mu);
}

void ctrl_manager_free(ctrl_manager *mgr)
{
    if (!mgr)
        return;
    pthread_mutex_lock(&mgr->mu);
    mgr->stop_requested = true;
    ctrl_clock_notify(&mgr->clock, &mgr->cv);
    while (mgr->state == ST_RUNNING)
        pthread_cond_wait(&mgr->cv, &mgr->mu);
    pthread_mutex_unlock(&mgr->mu);
    /* Runnables that outlived the grace period: wait for them now. */
    for (size_t i = 0; i < mgr->nruns; i++) {
        mrun *m = mgr->runs[i];
        if (m->started && !m->joined) {
            if (!m->stop_called && m->r.stop)
                m->r.stop(m->r.ud);
            ctrl__join(mgr->has_hooks ? &mgr->hooks : NULL, m->thread);
        }
    }
    ctrl_cache_stop(mgr->cache);
    for (size_t i = 0; i < mgr->nruns; i++) {
        if (is_controller(mgr->runs[i]))
            ctrl__controller_free(mgr->runs[i]->r.ud);
        free(mgr->runs[i]->name);
        free(mgr->runs[i]);
    }
    free(mgr->runs);
    ctrl__leader_free(mgr->leader);
    ctrl_cache_free(mgr->cache);
    for (size_t i = 0; i < mgr->nrec; i++)
        ctrl__recorder_free(mgr->recorders[i]);
    free(mgr->recorders);
    ctrl__checks_deinit(&mgr->healthz);
    ctrl__checks_deinit(&mgr->readyz);
    free(mgr->probes);
    ctrl_client_free(mgr->le_client);
    ctrl_client_free(mgr->client);
    ctrl_config_free(mgr->cfg);
    ctrl_metrics_free(mgr->metrics);
    ctrl__logger_free(mgr->log);
    for (size_t i = 0; i < mgr->nnamespaces; i++)
        free(mgr->namespaces[i]);
    free(mgr->namespaces);
    free(mgr->leader_id);
    free(mgr->leader_ns);
    free(mgr->identity);
    free(mgr->metrics_addr);
    free(mgr->health_addr);
    free(mgr->user_agent);
    pthread_mutex_destroy(&mgr->mu);
    pthread_cond_destroy(&mgr->cv);
    free(mgr);
}

/* ---- health checks ---- */

int ctrl_manager_add_healthz(ctrl_manager *mgr, const char *name, ctrl_check_fn fn, void *user)
{
    return mgr ? ctrl__checks_add(&mgr->healthz, name, fn, user) : CTRL_ERR_ARG;
}

int ctrl_manager_add_readyz(ctrl_manager *mgr, const char *name, ctrl_check_fn fn, void *user)
{
    return mgr ? ctrl__checks_add(&mgr->readyz, name, fn, user) : CTRL_ERR_ARG;
}

/* ---- leadership ---- */

int ctrl_manager_elected(ctrl_manager *mgr, int64_t timeout_ns)
{
    if (!mgr)
        return CTRL_ERR_ARG;
    if (!mgr->opts.leader_election)
        return 0;
    int64_t now = ctrl_clock_now(&mgr->clock);
    int64_t deadline =
        timeout_ns < 0 || now > INT64_MAX - timeout_ns ? INT64_MAX : now + timeout_ns;
    int rc;
    pthread_mutex_lock(&mgr->mu);
    for (;;) {
        if (mgr->elected) {
            rc = 0;
            break;
        }
        if (mgr->stop_requested || mgr->state == ST_DONE) {
            rc = CTRL_ERR_CANCELLED;
            break;
        }
        if (ctrl_clock_now(&mgr->clock) >= deadline) {
            rc = CTRL_ERR_TIMEOUT;
            break;
        }
        ctrl_clock_wait_until(&mgr->clock, &mgr->cv, &mgr->mu, deadline);
    }
    pthread_mutex_unlock(&mgr->mu);
    return rc;
}

bool ctrl_manager_is_leader(ctrl_manager *mgr)
{
    if (!mgr)
        return false;
    if (!mgr->opts.leader_election) {
        pthread_mutex_lock(&mgr->mu);
        bool on = mgr->elected && mgr->state == ST_RUNNING;
        pthread_mutex_unlock(&mgr->mu);
        return on;
    }
    pthread_mutex_lock(&mgr->mu);
    ctrl__leader *le = mgr->leader;
    bool running = mgr->state == ST_RUNNING;
    pthread_mutex_unlock(&mgr->mu);
    /* le is freed only by ctrl_manager_free. */
    return running && ctrl__leader_is_leader(le);
}

/* ---- quiescence ---- */

static ctrl__idle_probe *probes_snapshot(ctrl_manager *mgr, size_t *n, ctrl__controller ***ctls,
                                         size_t *nctl, ctrl__leader **le)
{
    pthread_mutex_lock(&mgr->mu);
    ctrl__idle_probe *v = malloc((mgr->nprobes ? mgr->nprobes : 1) * sizeof *v);
    ctrl__controller **c = malloc((mgr->nruns ? mgr->nruns : 1) * sizeof *c);
    *n = 0;
    *nctl = 0;
    if (v && c) {
        memcpy(v, mgr->probes, mgr->nprobes * sizeof *v);
        *n = mgr->nprobes;
        for (size_t i = 0; i < mgr->nruns; i++)
            if (is_controller(mgr->runs[i]) && mgr->runs[i]->started)
                c[(*nctl)++] = mgr->runs[i]->r.ud;
    }
    *le = mgr->leader;
    pthread_mutex_unlock(&mgr->mu);
    if (!v || !c) {
        free(v);
        free(c);
        return NULL;
    }
    *ctls = c;
    return v;
}

bool ctrl_manager_idle(ctrl_manager *mgr)
{
    if (!mgr)
        return true;
    size_t n = 0, nctl = 0;
    ctrl__controller **ctls = NULL;
    ctrl__leader *le = NULL;
    ctrl__idle_probe *v = probes_snapshot(mgr, &n, &ctls, &nctl, &le);
    if (!v)
        return false;
    bool idle = true;
    for (size_t i = 0; i < n && idle; i++)
        if (v[i].idle && !v[i].idle(v[i].ud))
            idle = false;
    for (size_t i = 0; i < nctl && idle; i++)
        if (!ctrl__controller_idle(ctls[i]))
            idle = false;
    /* Every watch line an informer received has been handled (so its
     * handlers have queued what they queue). */
    if (idle && mgr->cache && !ctrl__cache_idle(mgr->cache))
        idle = false;
    free(v);
    free(ctls);
    return idle;
}

int64_t ctrl_manager_next_deadline(ctrl_manager *mgr)
{
    if (!mgr)
        return INT64_MAX;
    size_t n = 0, nctl = 0;
    ctrl__controller **ctls = NULL;
    ctrl__leader *le = NULL;
    ctrl__idle_probe *v = probes_snapshot(mgr, &n, &ctls, &nctl, &le);
    if (!v)
        return INT64_MAX;
    int64_t d = ctrl__leader_next_deadline(le);
    for (size_t i = 0; i < n; i++)
        if (v[i].next_deadline) {
            int64_t x = v[i].next_deadline(v[i].ud);
            d = x < d ? x : d;
        }
    for (size_t i = 0; i < nctl; i++) {
        int64_t x = ctrl__controller_next_deadline(ctls[i]);
        d = x < d ? x : d;
    }
    /* TODO(cache): the informers' timers (resync, watch timeout, backoff)
     * once the cache exposes them. */
    free(v);
    free(ctls);
    return d;
}

int ctrl__manager_add_probe(ctrl_manager *mgr, const ctrl__idle_probe *p)
{
    if (!mgr || !p)
        return CTRL_ERR_ARG;
    pthread_mutex_lock(&mgr->mu);
    int rc = grow((void **)&mgr->probes, &mgr->capprobes, mgr->nprobes, sizeof *mgr->probes,
                  MAX_RUNNABLES);
    if (rc == 0)
        mgr->probes[mgr->nprobes++] = *p;
    pthread_mutex_unlock(&mgr->mu);
    return rc;
}

void ctrl__manager_remove_probe(ctrl_manager *mgr, void *ud)
{
    if (!mgr)
        return;
    pthread_mutex_lock(&mgr->mu);
    size_t k = 0;
    for (size_t i = 0; i < mgr->nprobes; i++)
        if (mgr->probes[i].ud != ud)
            mgr->probes[k++] = mgr->probes[i];
    mgr->nprobes = k;
    pthread_mutex_unlock(&mgr->mu);
}

/* ---- getters ---- */

ctrl_client *ctrl_manager_client(ctrl_manager *mgr)
{
    return mgr ? mgr->client : NULL;
}

ctrl_cache *ctrl_manager_cache(ctrl_manager *mgr)
{
    return mgr ? mgr->cache : NULL;
}

ctrl_metrics *ctrl_manager_metrics(ctrl_manager *mgr)
{
    return mgr ? mgr->metrics : NULL;
}

const ctrl_manager_options *ctrl_manager_options_get(ctrl_manager *mgr)
{
    return mgr ? &mgr->opts : NULL;
}

int ctrl_manager_metrics_port(ctrl_manager *mgr)
{
    if (!mgr)
        return 0;
    pthread_mutex_lock(&mgr->mu);
    int p = ctrl__httpserver_port(mgr->metrics_srv);
    pthread_mutex_unlock(&mgr->mu);
    return p;
}

int ctrl_manager_health_port(ctrl_manager *mgr)
{
    if (!mgr)
        return 0;
    pthread_mutex_lock(&mgr->mu);
    int p = ctrl__httpserver_port(mgr->health_srv);
    pthread_mutex_unlock(&mgr->mu);
    return p;
}

const ctrl_clock *ctrl__manager_clock(ctrl_manager *mgr)
{
    return &mgr->clock;
}

const ctrl_hooks *ctrl__manager_hooks(ctrl_manager *mgr)
{
    return mgr->has_hooks ? &mgr->hooks : NULL;
}

const struct ctrl__logger *ctrl__manager_logger(ctrl_manager *mgr)
{
    return mgr->log;
}

uint64_t ctrl__manager_seed(ctrl_manager *mgr)
{
    return mgr->seed;
}

bool ctrl__manager_stopping(ctrl_manager *mgr)
{
    pthread_mutex_lock(&mgr->mu);
    bool s = mgr->stop_requested;
    pthread_mutex_unlock(&mgr->mu);
    return s;
}

/* ---- events ---- */

ctrl_recorder *ctrl_manager_recorder(ctrl_manager *mgr, const char *component)
{
    if (!mgr || !component)
        return NULL;
    pthread_mutex_lock(&mgr->mu);
    ctrl_recorder *r = NULL;
    for (size_t i = 0; i < mgr->nrec && !r; i++)
        if (strcmp(ctrl__recorder_component(mgr->recorders[i]), component) == 0)
            r = mgr->recorders[i];
    if (!r && grow((void **)&mgr->recorders, &mgr->caprec, mgr->nrec, sizeof *mgr->recorders,
                   MAX_RECORDERS) == 0) {
        char host[256] = "";
        if (gethostname(host, sizeof host - 1) != 0)
            host[0] = '\0';
        r = ctrl__recorder_new(mgr->client, &mgr->clock, component, host[0] ? host : NULL);
        if (r)
            mgr->recorders[mgr->nrec++] = r;
    }
    pthread_mutex_unlock(&mgr->mu);
    return r;
}
