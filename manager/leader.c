/*
 * leader.c - leader election on a Lease, as client-go's LeaderElector with
 * a LeaseLock.
 *
 * DESIGN
 * - One elector thread runs the loop: try to acquire every retry period
 *   (jittered up to +120%, as client-go's JitterUntil with factor 1.2)
 *   until it holds the Lease; then call on_started; then renew every
 *   retry period, each renewal retried every retry period until it
 *   succeeds or renew_deadline has passed since the cycle began, in which
 *   case leadership is lost: on_lost is called and the thread ends.
 * - One try (try_acquire_or_renew) is client-go's: GET the Lease; on 404
 *   create it (409 AlreadyExists = someone else won); else, if the record
 *   differs from the one last observed, remember it and the time we saw it
 *   change (our clock, never the record's renewTime: clocks of candidates
 *   may disagree); if another holder's record is still valid by that
 *   observation (observed time + its leaseDurationSeconds) give up; else
 *   PUT the Lease with our record and the resourceVersion we read (a
 *   concurrent writer makes it 409, which is just a failed try).
 * - le->mu protects the flags (stopping, leading, valid_until, wake_at) and
 *   the observed holder; the observed record itself belongs to the elector
 *   thread (and to _stop after it has joined that thread). mu is never
 *   held across a request or a callback; it is a leaf lock.
 * - ctrl__leader_is_leader is stricter than "we wrote the Lease last": it
 *   turns false as soon as the renewal deadline counted from the last
 *   successful try has passed, before any other candidate can see the
 *   Lease expire (lease duration > retry period + renew deadline), so two
 *   electors never both say they lead.
 */
#include "leader_int.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrl/controller.h"
#include "spawn_int.h"

#define LEASE_API "coordination.k8s.io/v1"
#define LEASE_KIND "Lease"

typedef struct record {
    char holder[256];
    long long duration_s;
    char acquire[40];
    char renew[40];
    long long transitions;
} record;

struct ctrl__leader {
    ctrl__leader_options o; /* strings below are our copies */
    char *ns, *name, *identity, *labels, *key;
    ctrl_clock clock;
    ctrl_hooks hooks;
    bool has_hooks;
    long long duration_s;

    pthread_t thread;
    bool started, joined;

    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stopping;
    bool leading;
    int64_t valid_until;
    int64_t wake_at;
    char observed_holder[256];

    /* Elector thread only. */
    record observed;
    bool have_observed;
    int64_t observed_time;
    uint64_t rng;
};

void ctrl__micro_time(int64_t wall_ns, char *buf, size_t len)
{
    time_t secs = (time_t)(wall_ns / CTRL_SECOND);
    long micros = (long)((wall_ns % CTRL_SECOND) / 1000);
    if (micros < 0) {
        secs--;
        micros += 1000000;
    }
    struct tm tm;
    gmtime_r(&secs, &tm);
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%06ldZ", day, micros);
}

static void logf_(ctrl__leader *le, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void logf_(ctrl__leader *le, int level, const char *fmt, ...)
{
    if (!le->o.log)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    le->o.log(le->o.ud, level, msg);
}

int ctrl__leader_new(const ctrl__leader_options *opts, ctrl__leader **out)
{
    if (!opts || !out || !opts->client || !opts->ns || !opts->name || !opts->identity ||
        !*opts->name || !*opts->identity || opts->lease_ns <= 0 || opts->renew_deadline_ns <= 0 ||
        opts->retry_ns <= 0)
        return CTRL_ERR_ARG;
    ctrl__leader *le = calloc(1, sizeof *le);
    if (!le)
        return CTRL_ERR_NOMEM;
    le->o = *opts;
    le->ns = strdup(opts->ns);
    le->name = strdup(opts->name);
    le->identity = strdup(opts->identity);
    size_t ll = strlen(opts->name) + 16;
    le->labels = malloc(ll);
    if (!le->ns || !le->name || !le->identity || !le->labels) {
        free(le->ns);
        free(le->name);
        free(le->identity);
        free(le->labels);
        free(le);
        return CTRL_ERR_NOMEM;
    }
    snprintf(le->labels, ll, "name=\"%s\"", opts->name);
    if (asprintf(&le->key, "%s/%s", opts->ns, opts->name) < 0)
        le->key = NULL;
    if (opts->hooks) {
        le->hooks = *opts->hooks;
        le->has_hooks = true;
    }
    if (opts->clock)
        le->clock = *opts->clock;
    le->duration_s = (long long)((opts->lease_ns + CTRL_SECOND - 1) / CTRL_SECOND);
    le->rng = opts->seed ? opts->seed : 0x9e3779b97f4a7c15ULL;
    le->wake_at = INT64_MAX;
    pthread_mutex_init(&le->mu, NULL);
    pthread_cond_init(&le->cv, NULL);
    if (opts->metrics) {
        ctrl_metrics_gauge(opts->metrics, "leader_election_master_status",
                           "Gauge of if the reporting system is master of the relevant lease, 0 "
                           "indicates backup, 1 indicates master. 'name' is the string used to "
                           "identify the lease.");
        ctrl_metrics_set(opts->metrics, "leader_election_master_status", le->labels, 0);
    }
    *out = le;
    return 0;
}

/* xorshift64*: retry jitter. */
static double rand01(ctrl__leader *le)
{
    uint64_t x = le->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    le->rng = x;
    return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / (double)(1ULL << 53);
}

/* Wait until deadline (clock time) or stop. True when stopping. */
static bool wait_until(ctrl__leader *le, int64_t deadline)
{
    pthread_mutex_lock(&le->mu);
    le->wake_at = deadline;
    while (!le->stopping && ctrl_clock_now(&le->clock) < deadline)
        ctrl_clock_wait_until(&le->clock, &le->cv, &le->mu, deadline);
    le->wake_at = INT64_MAX;
    bool stopping = le->stopping;
    pthread_mutex_unlock(&le->mu);
    return stopping;
}

static bool stopping(ctrl__leader *le)
{
    pthread_mutex_lock(&le->mu);
    bool s = le->stopping;
    pthread_mutex_unlock(&le->mu);
    return s;
}

static void str_field(const json_t *spec, const char *key, char *out, size_t len)
{
    const char *s = json_string_value(json_object_get(spec, key));
    snprintf(out, len, "%s", s ? s : "");
}

static void record_from(const json_t *lease, record *r)
{
    const json_t *spec = json_object_get(lease, "spec");
    memset(r, 0, sizeof *r);
    str_field(spec, "holderIdentity", r->holder, sizeof r->holder);
    str_field(spec, "acquireTime", r->acquire, sizeof r->acquire);
    str_field(spec, "renewTime", r->renew, sizeof r->renew);
    r->duration_s = (long long)json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
    r->transitions = (long long)json_integer_value(json_object_get(spec, "leaseTransitions"));
}

static bool record_eq(const record *a, const record *b)
{
    return strcmp(a->holder, b->holder) == 0 && a->duration_s == b->duration_s &&
           strcmp(a->acquire, b->acquire) == 0 && strcmp(a->renew, b->renew) == 0 &&
           a->transitions == b->transitions;
}

/* The Lease's spec for a record: a new object. */
static json_t *spec_of(const record *r)
{
    return json_pack("{s:s, s:I, s:s, s:s, s:I}", "holderIdentity", r->holder,
                     "leaseDurationSeconds", (json_int_t)r->duration_s, "acquireTime", r->acquire,
                     "renewTime", r->renew, "leaseTransitions", (json_int_t)r->transitions);
}

static void set_observed(ctrl__leader *le, const record *r, int64_t when)
{
    le->observed = *r;
    le->have_observed = true;
    le->observed_time = when;
    pthread_mutex_lock(&le->mu);
    snprintf(le->observed_holder, sizeof le->observed_holder, "%s", r->holder);
    pthread_mutex_unlock(&le->mu);
}

static bool try_once(ctrl__leader *le);

/* One try, as one turn of the "lease" actor for a scheduler. */
static bool try_acquire_or_renew(ctrl__leader *le)
{
    const char *key = le->key ? le->key : le->name;
    if (le->has_hooks && le->hooks.before)
        le->hooks.before(le->hooks.ud, "lease", le->name, key);
    bool ok = try_once(le);
    if (le->has_hooks && le->hooks.after)
        le->hooks.after(le->hooks.ud, "lease", le->name, key);
    return ok;
}

/* One try. True when we hold the Lease (created or updated it). */
static bool try_once(ctrl__leader *le)
{
    int64_t now = ctrl_clock_now(&le->clock);
    char stamp[40];
    ctrl__micro_time(ctrl_clock_wall_ns(&le->clock), stamp, sizeof stamp);
    record mine = {.duration_s = le->duration_s};
    snprintf(mine.holder, sizeof mine.holder, "%s", le->identity);
    snprintf(mine.acquire, sizeof mine.acquire, "%s", stamp);
    snprintf(mine.renew, sizeof mine.renew, "%s", stamp);

    ctrl_error err = {0};
    json_t *lease = NULL;
    bool ok = false;
    int rc = ctrl_client_get(le->o.client, LEASE_API, LEASE_KIND, le->ns, le->name, &lease, &err);
    if (rc == CTRL_ERR_NOT_FOUND) {
        json_t *obj =
            json_pack("{s:s, s:s, s:{s:s, s:s}, s:o}", "apiVersion", LEASE_API, "kind", LEASE_KIND,
                      "metadata", "name", le->name, "namespace", le->ns, "spec", spec_of(&mine));
        rc = obj ? ctrl_client_create(le->o.client, obj, NULL, NULL, &err) : CTRL_ERR_NOMEM;
        json_decref(obj);
        if (rc == 0) {
            set_observed(le, &mine, now);
            ok = true;
        } else {
            logf_(le, CTRL_LOG_DEBUG, "error initially creating lease %s/%s: %s", le->ns, le->name,
                  err.message);
        }
        goto out;
    }
    if (rc < 0) {
        logf_(le, CTRL_LOG_DEBUG, "error retrieving lease %s/%s: %s", le->ns, le->name,
              err.message);
        goto out;
    }
    record old;
    record_from(lease, &old);
    if (!le->have_observed || !record_eq(&old, &le->observed))
        set_observed(le, &old, ctrl_clock_now(&le->clock));
    bool i_lead = strcmp(le->observed.holder, le->identity) == 0;
    if (old.holder[0] && !i_lead &&
        le->observed_time + (int64_t)le->observed.duration_s * CTRL_SECOND > now)
        goto out; /* held by another, not expired by our observation */
    if (i_lead)
        snprintf(mine.acquire, sizeof mine.acquire, "%s", old.acquire);
    mine.transitions = i_lead ? old.transitions : old.transitions + 1;
    if (json_object_set_new(lease, "spec", spec_of(&mine)) < 0)
        goto out;
    rc = ctrl_client_update(le->o.client, lease, NULL, NULL, &err);
    if (rc < 0) {
        logf_(le, CTRL_LOG_DEBUG, "failed to update lease %s/%s: %s", le->ns, le->name,
              err.message);
        goto out;
    }
    set_observed(le, &mine, now);
    ok = true;
out:
    if (ok) {
        pthread_mutex_lock(&le->mu);
        le->valid_until = now + le->o.retry_ns + le->o.renew_deadline_ns;
        pthread_mutex_unlock(&le->mu);
    }
    json_decref(lease);
    ctrl_error_deinit(&err);
    return ok;
}

static void set_leading(ctrl__leader *le, bool on)
{
    pthread_mutex_lock(&le->mu);
    le->leading = on;
    pthread_mutex_unlock(&le->mu);
    if (le->o.metrics)
        ctrl_metrics_set(le->o.metrics, "leader_election_master_status", le->labels, on ? 1 : 0);
}

static void *run(void *arg)
{
    ctrl__leader *le = arg;
    logf_(le, CTRL_LOG_INFO, "attempting to acquire leader lease %s/%s...", le->ns, le->name);
    for (;;) {
        if (stopping(le))
            return NULL;
        if (try_acquire_or_renew(le))
            break;
        int64_t wait = le->o.retry_ns + (int64_t)(rand01(le) * 1.2 * (double)le->o.retry_ns);
        if (wait_until(le, ctrl_clock_now(&le->clock) + wait))
            return NULL;
    }
    set_leading(le, true);
    logf_(le, CTRL_LOG_INFO, "successfully acquired lease %s/%s", le->ns, le->name);
    if (le->o.on_started)
        le->o.on_started(le->o.ud);
    for (;;) {
        if (wait_until(le, ctrl_clock_now(&le->clock) + le->o.retry_ns))
            return NULL;
        int64_t deadline = ctrl_clock_now(&le->clock) + le->o.renew_deadline_ns;
        bool renewed = false;
        for (;;) {
            if (try_acquire_or_renew(le)) {
                renewed = true;
                break;
            }
            if (stopping(le))
                return NULL;
            int64_t next = ctrl_clock_now(&le->clock) + le->o.retry_ns;
            if (next >= deadline)
                break;
            if (wait_until(le, next))
                return NULL;
        }
        if (!renewed)
            break;
    }
    set_leading(le, false);
    logf_(le, CTRL_LOG_ERROR, "failed to renew lease %s/%s: timed out waiting for the condition",
          le->ns, le->name);
    if (le->o.on_lost)
        le->o.on_lost(le->o.ud);
    return NULL;
}

int ctrl__leader_start(ctrl__leader *le)
{
    if (!le)
        return CTRL_ERR_ARG;
    pthread_mutex_lock(&le->mu);
    bool again = le->started || le->stopping;
    le->started = true;
    pthread_mutex_unlock(&le->mu);
    if (again)
        return CTRL_ERR_ARG;
    if (ctrl__spawn(&le->thread, le->has_hooks ? &le->hooks : NULL, "leader-election", run, le) !=
        0) {
        pthread_mutex_lock(&le->mu);
        le->started = false;
        pthread_mutex_unlock(&le->mu);
        return CTRL_ERR_NOMEM;
    }
    return 0;
}

/* client-go's release: only when we hold it, keeping the transitions. */
static void release(ctrl__leader *le)
{
    ctrl_error err = {0};
    json_t *lease = NULL;
    if (ctrl_client_get(le->o.client, LEASE_API, LEASE_KIND, le->ns, le->name, &lease, &err) < 0)
        goto out;
    record cur;
    record_from(lease, &cur);
    if (strcmp(cur.holder, le->identity) != 0)
        goto out; /* someone else holds it now: nothing of ours to release */
    char stamp[40];
    ctrl__micro_time(ctrl_clock_wall_ns(&le->clock), stamp, sizeof stamp);
    record r = {.duration_s = 1, .transitions = cur.transitions};
    snprintf(r.acquire, sizeof r.acquire, "%s", stamp);
    snprintf(r.renew, sizeof r.renew, "%s", stamp);
    if (json_object_set_new(lease, "spec", spec_of(&r)) < 0)
        goto out;
    if (ctrl_client_update(le->o.client, lease, NULL, NULL, &err) < 0)
        logf_(le, CTRL_LOG_ERROR, "failed to release lease %s/%s: %s", le->ns, le->name,
              err.message);
    else
        logf_(le, CTRL_LOG_INFO, "released lease %s/%s", le->ns, le->name);
out:
    json_decref(lease);
    ctrl_error_deinit(&err);
}

void ctrl__leader_stop(ctrl__leader *le)
{
    if (!le)
        return;
    pthread_mutex_lock(&le->mu);
    le->stopping = true;
    ctrl_clock_notify(&le->clock, &le->cv);
    bool join = le->started && !le->joined;
    le->joined = le->joined || le->started;
    pthread_mutex_unlock(&le->mu);
    if (!join)
        return;
    ctrl__join(le->has_hooks ? &le->hooks : NULL, le->thread);
    pthread_mutex_lock(&le->mu);
    bool was_leading = le->leading;
    pthread_mutex_unlock(&le->mu);
    /* Not leading any more before the release is written: once it is, a
     * candidate may take the Lease at once. */
    set_leading(le, false);
    if (was_leading && le->o.release_on_cancel)
        release(le);
}

void ctrl__leader_free(ctrl__leader *le)
{
    if (!le)
        return;
    ctrl__leader_stop(le);
    pthread_mutex_destroy(&le->mu);
    pthread_cond_destroy(&le->cv);
    free(le->ns);
    free(le->name);
    free(le->identity);
    free(le->labels);
    free(le->key);
    free(le);
}

bool ctrl__leader_is_leader(ctrl__leader *le)
{
    if (!le)
        return false;
    int64_t now = ctrl_clock_now(&le->clock);
    pthread_mutex_lock(&le->mu);
    bool on = le->leading && now < le->valid_until;
    pthread_mutex_unlock(&le->mu);
    return on;
}

int64_t ctrl__leader_next_deadline(ctrl__leader *le)
{
    if (!le)
        return INT64_MAX;
    pthread_mutex_lock(&le->mu);
    int64_t d = le->wake_at;
    pthread_mutex_unlock(&le->mu);
    return d;
}

void ctrl__leader_observed_holder(ctrl__leader *le, char *buf, size_t len)
{
    if (!le || !buf || !len)
        return;
    pthread_mutex_lock(&le->mu);
    snprintf(buf, len, "%s", le->observed_holder);
    pthread_mutex_unlock(&le->mu);
}
