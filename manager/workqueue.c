/*
 * workqueue.c - client-go's rate-limited delaying work queue (ctrl/workqueue.h).
 *
 * DESIGN
 *
 * Threads: none of its own. Delayed adds sit in a min-heap ordered by
 * deadline on the queue's clock and are moved to the ready FIFO lazily, by
 * whichever thread next looks at the queue (get, len, next_deadline,
 * stats). A getter with nothing ready waits with ctrl_clock_wait_until
 * until the earliest deadline, so under a virtual clock the wait ends when
 * the clock is advanced past it (the clock signals cv), and nothing ever
 * sleeps on real time behind the clock's back.
 *
 * Lock: one mutex (mu) protects every field; one condition variable (cv),
 * always woken through ctrl_clock_notify (all waiters; a one-thread-at-a-time
 * scheduler sees every wake-up), wakes getters (an item is ready, a deadline moved
 * earlier, shutdown) and a draining shutdown (an item is done). When a
 * metrics registry is given, its lock is taken inside mu (mu, then the
 * registry's); the registry never calls back.
 *
 * State per key: one item in a hash table, holding the whole story of the
 * key: dirty (needs processing: queued, or to be queued again when done),
 * its priority while dirty, processing (handed out, not yet done), its
 * ready slot (queued), its delay slot (a pending delayed add; only the
 * earliest deadline is kept, as client-go, with the highest priority of
 * the delayed adds), and failures (the exponential backoff's exponent,
 * reset by forget). An item is freed once none of these holds. As in
 * client-go, the ready queue only ever holds dirty keys that are not being
 * processed, so one key is never handed to two getters at once.
 *
 * Ordering (controller-runtime's priority queue): ready keys come out by
 * priority, highest first, and within one priority in the order they
 * became ready. A key added again while dirty keeps one place, with the
 * higher of the two priorities (raising it moves the key up; its place
 * among equals is still the one of its first add). Delayed adds with equal
 * deadlines become ready in the order they were added. Ready keys sit in a
 * binary heap on (priority, ready sequence): O(log n) per add and get.
 */
#include "ctrl/workqueue.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/error.h"

#define DEFAULT_BASE (5 * CTRL_MILLISECOND)
#define DEFAULT_MAX (1000 * CTRL_SECOND)
#define DEFAULT_QPS 10.0
#define DEFAULT_BURST 100

typedef struct item {
    char *key;
    struct item *hnext;         /* hash chain */
    struct item *pprev, *pnext; /* processing list */
    bool dirty, processing;
    bool has_added;   /* added_at is set (queue duration) */
    int prio;         /* while dirty: the priority it is (or will be) queued with */
    size_t ready;     /* slot + 1 in the ready heap; 0 = not queued */
    uint64_t rseq;    /* ready order among equal priorities */
    size_t heap;      /* slot + 1 in the delay heap; 0 = none */
    int64_t deadline; /* when heap != 0 */
    int dprio;        /* when heap != 0: the priority it becomes ready with */
    uint64_t seq;     /* ties between equal deadlines */
    int failures;
    int64_t added_at, started_at;
} item;

/* Ready keys per priority, for workqueue_depth{priority="..."}: series
 * are kept once seen (at 0 when empty), as Prometheus gauges are. */
typedef struct depth_series {
    int prio;
    size_t n;
    char *labels; /* name="...",priority="..." */
} depth_series;
#define MAX_DEPTH_SERIES 64

struct ctrl_workqueue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    ctrl_clock clock;
    bool has_clock;
    char *name;
    char *labels; /* name="..." for metrics */
    ctrl_metrics *metrics;
    int64_t base, max;
    double qps;
    int burst;
    double tokens;
    int64_t tokens_at;

    item **table;
    size_t nbuckets, nitems;

    item **rq; /* ready heap: highest priority, then oldest, first */
    size_t flen, fcap;
    uint64_t rseq;
    depth_series depth[MAX_DEPTH_SERIES];
    size_t ndepth;

    item **heap;
    size_t hlen, hcap;
    uint64_t seq;

    item *processing; /* list head */
    size_t nprocessing;

    bool shutdown, drain;
    ctrl_workqueue_stats st;
};

static const double latency_buckets[] = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3,
                                         1e-2, 1e-1, 1,    10,   100,  1000};

static const ctrl_clock *clk(const ctrl_workqueue *q)
{
    return q->has_clock ? &q->clock : NULL;
}

static int64_t now(ctrl_workqueue *q)
{
    return ctrl_clock_now(clk(q));
}

/* ---- hash table of items ---- */

static size_t hash(const char *s)
{
    size_t h = 1469598103934665603ULL & SIZE_MAX;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * (1099511628211ULL & SIZE_MAX);
    return h;
}

static item *find(ctrl_workqueue *q, const char *key)
{
    for (item *it = q->table[hash(key) & (q->nbuckets - 1)]; it; it = it->hnext)
        if (strcmp(it->key, key) == 0)
            return it;
    return NULL;
}

static void grow_table(ctrl_workqueue *q)
{
    size_t nb = q->nbuckets * 2;
    item **t = calloc(nb, sizeof(*t));
    if (!t)
        return; /* longer chains, still correct */
    for (size_t i = 0; i < q->nbuckets; i++) {
        item *it = q->table[i];
        while (it) {
            item *next = it->hnext;
            size_t b = hash(it->key) & (nb - 1);
            it->hnext = t[b];
            t[b] = it;
            it = next;
        }
    }
    free(q->table);
    q->table = t;
    q->nbuckets = nb;
}

static item *find_or_create(ctrl_workqueue *q, const char *key)
{
    item *it = find(q, key);
    if (it)
        return it;
    it = calloc(1, sizeof(*it));
    if (!it)
        return NULL;
    it->key = strdup(key);
    if (!it->key) {
        free(it);
        return NULL;
    }
    if (q->nitems >= q->nbuckets * 2)
        grow_table(q);
    size_t b = hash(key) & (q->nbuckets - 1);
    it->hnext = q->table[b];
    q->table[b] = it;
    q->nitems++;
    return it;
}

/* Free the item once nothing refers to it. */
static void maybe_release(ctrl_workqueue *q, item *it)
{
    if (it->dirty || it->processing || it->ready || it->heap || it->failures)
        return;
    item **pp = &q->table[hash(it->key) & (q->nbuckets - 1)];
    while (*pp != it)
        pp = &(*pp)->hnext;
    *pp = it->hnext;
    q->nitems--;
    free(it->key);
    free(it);
}

/* ---- depth per priority ---- */

static depth_series *depth_for(ctrl_workqueue *q, int prio)
{
    for (size_t i = 0; i < q->ndepth; i++)
        if (q->depth[i].prio == prio)
            return &q->depth[i];
    if (q->ndepth == MAX_DEPTH_SERIES)
        return NULL; /* counted in the total only */
    depth_series *d = &q->depth[q->ndepth];
    if (asprintf(&d->labels, "%s,priority=\"%d\"", q->labels, prio) < 0)
        return NULL;
    d->prio = prio;
    d->n = 0;
    q->ndepth++;
    return d;
}

static void depth_add(ctrl_workqueue *q, int prio, int delta)
{
    depth_series *d = depth_for(q, prio);
    if (!d)
        return;
    d->n = (size_t)((long)d->n + delta);
    if (q->metrics)
        ctrl_metrics_set(q->metrics, "workqueue_depth", d->labels, (double)d->n);
}

/* ---- ready heap ---- */

static bool ready_less(const item *a, const item *b)
{
    return a->prio > b->prio || (a->prio == b->prio && a->rseq < b->rseq);
}

static void ready_set(ctrl_workqueue *q, size_t i, item *it)
{
    q->rq[i] = it;
    it->ready = i + 1;
}

static void ready_up(ctrl_workqueue *q, size_t i)
{
    item *it = q->rq[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!ready_less(it, q->rq[parent]))
            break;
        ready_set(q, i, q->rq[parent]);
        i = parent;
    }
    ready_set(q, i, it);
}

static void ready_down(ctrl_workqueue *q, size_t i)
{
    item *it = q->rq[i];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const item *best = it;
        if (l < q->flen && ready_less(q->rq[l], best)) {
            m = l;
            best = q->rq[l];
        }
        if (r < q->flen && ready_less(q->rq[r], best))
            m = r;
        if (m == i)
            break;
        ready_set(q, i, q->rq[m]);
        i = m;
    }
    ready_set(q, i, it);
}

/* Queue a dirty item with its priority (it->prio). */
static bool ready_push(ctrl_workqueue *q, item *it)
{
    if (q->flen == q->fcap) {
        size_t cap = q->fcap ? q->fcap * 2 : 16;
        item **f = realloc(q->rq, cap * sizeof(*f));
        if (!f)
            return false;
        q->rq = f;
        q->fcap = cap;
    }
    it->rseq = q->rseq++;
    q->rq[q->flen] = it;
    it->ready = ++q->flen;
    ready_up(q, q->flen - 1);
    depth_add(q, it->prio, 1);
    return true;
}

static item *ready_pop(ctrl_workqueue *q)
{
    item *top = q->rq[0];
    top->ready = 0;
    q->flen--;
    if (q->flen > 0) {
        ready_set(q, 0, q->rq[q->flen]);
        ready_down(q, 0);
    }
    depth_add(q, top->prio, -1);
    return top;
}

/* A queued item's priority goes up: it moves towards the front. */
static void ready_raise(ctrl_workqueue *q, item *it, int prio)
{
    depth_add(q, it->prio, -1);
    it->prio = prio;
    depth_add(q, it->prio, 1);
    ready_up(q, it->ready - 1);
}

/* ---- delay heap ---- */

static bool heap_less(const item *a, const item *b)
{
    return a->deadline < b->deadline || (a->deadline == b->deadline && a->seq < b->seq);
}

static void heap_set(ctrl_workqueue *q, size_t i, item *it)
{
    q->heap[i] = it;
    it->heap = i + 1;
}

static void sift_up(ctrl_workqueue *q, size_t i)
{
    item *it = q->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!heap_less(it, q->heap[parent]))
            break;
        heap_set(q, i, q->heap[parent]);
        i = parent;
    }
    heap_set(q, i, it);
}

static void sift_down(ctrl_workqueue *q, size_t i)
{
    item *it = q->heap[i];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const item *best = it;
        if (l < q->hlen && heap_less(q->heap[l], best)) {
            m = l;
            best = q->heap[l];
        }
        if (r < q->hlen && heap_less(q->heap[r], best))
            m = r;
        if (m == i)
            break;
        heap_set(q, i, q->heap[m]);
        i = m;
    }
    heap_set(q, i, it);
}

static bool heap_push(ctrl_workqueue *q, item *it)
{
    if (q->hlen == q->hcap) {
        size_t cap = q->hcap ? q->hcap * 2 : 16;
        item **h = realloc(q->heap, cap * sizeof(*h));
        if (!h)
            return false;
        q->heap = h;
        q->hcap = cap;
    }
    q->heap[q->hlen] = it;
    it->heap = ++q->hlen;
    sift_up(q, q->hlen - 1);
    return true;
}

static item *heap_pop(ctrl_workqueue *q)
{
    item *top = q->heap[0];
    top->heap = 0;
    q->hlen--;
    if (q->hlen > 0) {
        heap_set(q, 0, q->heap[q->hlen]);
        sift_down(q, 0);
    }
    return top;
}

/* ---- metrics ---- */

static void refresh_gauges(ctrl_workqueue *q, int64_t t)
{
    double unfinished = 0, longest = 0;
    for (item *it = q->processing; it; it = it->pnext) {
        double s = (double)(t - it->started_at) / 1e9;
        unfinished += s;
        if (s > longest)
            longest = s;
    }
    q->st.depth = q->flen;
    q->st.unfinished_work_seconds = unfinished;
    q->st.longest_running_seconds = longest;
    if (q->metrics) {
        for (size_t i = 0; i < q->ndepth; i++)
            ctrl_metrics_set(q->metrics, "workqueue_depth", q->depth[i].labels,
                             (double)q->depth[i].n);
        ctrl_metrics_set(q->metrics, "workqueue_unfinished_work_seconds", q->labels, unfinished);
        ctrl_metrics_set(q->metrics, "workqueue_longest_running_processor_seconds", q->labels,
                         longest);
        ctrl_metrics_set(q->metrics, "workqueue_failing_keys", q->labels, (double)q->st.failing);
    }
}

static void declare_metrics(ctrl_metrics *m)
{
    size_t nb = sizeof(latency_buckets) / sizeof(latency_buckets[0]);
    ctrl_metrics_gauge(m, "workqueue_depth", "Current depth of workqueue by priority");
    ctrl_metrics_counter(m, "workqueue_adds_total", "Total number of adds handled by workqueue");
    ctrl_metrics_histogram(m, "workqueue_queue_duration_seconds",
                           "How long in seconds an item stays in workqueue before being requested",
                           latency_buckets, nb);
    ctrl_metrics_histogram(m, "workqueue_work_duration_seconds",
                           "How long in seconds processing an item from workqueue takes.",
                           latency_buckets, nb);
    ctrl_metrics_gauge(m, "workqueue_unfinished_work_seconds",
                       "How many seconds of work has been done that is in progress and hasn't "
                       "been observed by work_duration. Large values indicate stuck threads. One "
                       "can deduce the number of stuck threads by observing the rate at which "
                       "this increases.");
    ctrl_metrics_gauge(m, "workqueue_longest_running_processor_seconds",
                       "How many seconds has the longest running processor for workqueue been "
                       "running.");
    ctrl_metrics_counter(m, "workqueue_retries_total",
                         "Total number of retries handled by workqueue");
    ctrl_metrics_gauge(m, "workqueue_failing_keys",
                       "Keys whose last processing failed, waiting for a retry (not forgotten "
                       "since); kube-harness's, not client-go's");
}

/* name="<name>" with the text format's escapes. */
static char *make_labels(const char *name)
{
    size_t n = strlen(name);
    char *s = malloc(2 * n + 16), *p = s;
    if (!s)
        return NULL;
    p += sprintf(p, "name=\"");
    for (const char *c = name; *c; c++) {
        if (*c == '"' || *c == '\\')
            *p++ = '\\';
        if (*c == '\n') {
            *p++ = '\\';
            *p++ = 'n';
            continue;
        }
        *p++ = *c;
    }
    *p++ = '"';
    *p = '\0';
    return s;
}

/* ---- lifecycle ---- */

int ctrl_workqueue_new(const ctrl_workqueue_options *opts, ctrl_workqueue **out)
{
    if (!out)
        return CTRL_ERR_ARG;
    ctrl_workqueue_options o = opts ? *opts : (ctrl_workqueue_options){0};
    if (o.base_delay_ns < 0 || o.max_delay_ns < 0 || o.bucket_burst < 0)
        return CTRL_ERR_ARG;
    ctrl_workqueue *q = calloc(1, sizeof(*q));
    if (!q)
        return CTRL_ERR_NOMEM;
    q->name = strdup(o.name ? o.name : "");
    q->labels = q->name ? make_labels(q->name) : NULL;
    q->nbuckets = 64;
    q->table = calloc(q->nbuckets, sizeof(*q->table));
    if (!q->name || !q->labels || !q->table) {
        free(q->table);
        free(q->labels);
        free(q->name);
        free(q);
        return CTRL_ERR_NOMEM;
    }
    if (o.clock) {
        q->clock = *o.clock;
        q->has_clock = true;
    }
    q->base = o.base_delay_ns ? o.base_delay_ns : DEFAULT_BASE;
    q->max = o.max_delay_ns ? o.max_delay_ns : DEFAULT_MAX;
    q->qps = o.bucket_qps == 0 ? DEFAULT_QPS : o.bucket_qps;
    q->burst = o.bucket_burst ? o.bucket_burst : DEFAULT_BURST;
    q->tokens = q->burst;
    q->tokens_at = now(q);
    q->metrics = o.metrics;
    if (q->metrics) {
        declare_metrics(q->metrics);
        /* The default priority's series exists from the start, at 0. */
        depth_add(q, 0, 0);
    }
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    *out = q;
    return 0;
}

void ctrl_workqueue_free(ctrl_workqueue *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->nbuckets; i++) {
        item *it = q->table[i];
        while (it) {
            item *next = it->hnext;
            free(it->key);
            free(it);
            it = next;
        }
    }
    free(q->table);
    free(q->rq);
    free(q->heap);
    for (size_t i = 0; i < q->ndepth; i++)
        free(q->depth[i].labels);
    free(q->labels);
    free(q->name);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

/* ---- adds ---- */

static void add_item_locked(ctrl_workqueue *q, item *it, int64_t t, int prio)
{
    if (it->dirty) {
        /* One place per key, with the higher priority. */
        if (prio > it->prio) {
            if (it->ready) {
                ready_raise(q, it, prio);
                ctrl_clock_notify(clk(q), &q->cv);
            } else {
                it->prio = prio; /* processing: queued with it when done */
            }
        }
        return;
    }
    it->dirty = true;
    it->prio = prio;
    q->st.adds++;
    if (q->metrics)
        ctrl_metrics_add(q->metrics, "workqueue_adds_total", q->labels, 1);
    if (!it->has_added) {
        it->has_added = true;
        it->added_at = t;
    }
    if (it->processing)
        return; /* queued again by done() */
    if (!ready_push(q, it)) {
        it->dirty = false; /* out of memory: as if never added */
        it->has_added = false;
        return;
    }
    ctrl_clock_notify(clk(q), &q->cv);
}

/* Move delayed adds whose time has come to the FIFO. */
static void promote_locked(ctrl_workqueue *q, int64_t t)
{
    while (q->hlen > 0 && q->heap[0]->deadline <= t) {
        item *it = heap_pop(q);
        if (!q->shutdown)
            add_item_locked(q, it, t, it->dprio);
        maybe_release(q, it);
    }
}

static void add_after_locked(ctrl_workqueue *q, const char *key, int64_t delay_ns, int prio)
{
    if (q->shutdown)
        return;
    item *it = find_or_create(q, key);
    if (!it)
        return;
    int64_t t = now(q);
    if (delay_ns <= 0) {
        add_item_locked(q, it, t, prio);
    } else {
        int64_t deadline = delay_ns > INT64_MAX - t ? INT64_MAX : t + delay_ns;
        if (it->heap) {
            if (prio > it->dprio)
                it->dprio = prio;
            if (deadline < it->deadline) { /* keep the earliest, as client-go */
                it->deadline = deadline;
                sift_up(q, it->heap - 1);
                ctrl_clock_notify(clk(q), &q->cv);
            }
        } else {
            it->deadline = deadline;
            it->dprio = prio;
            it->seq = q->seq++;
            if (heap_push(q, it))
                ctrl_clock_notify(clk(q), &q->cv); /* getters recompute their wait */
        }
    }
    maybe_release(q, it);
}

/* ---- rate limiting ---- */

static int64_t backoff(ctrl_workqueue *q, int failures)
{
    double d = (double)q->base * pow(2.0, failures);
    if (d >= (double)q->max || d >= 9.2e18)
        return q->max;
    return (int64_t)d;
}

/* The token bucket (golang.org/x/time/rate's reservation): tokens refill
 * at qps up to burst; taking one below zero costs -tokens/qps of waiting. */
static int64_t bucket_delay(ctrl_workqueue *q, int64_t t, bool take)
{
    if (q->qps < 0)
        return 0;
    double tokens = q->tokens;
    if (t > q->tokens_at) {
        tokens += (double)(t - q->tokens_at) / 1e9 * q->qps;
        if (tokens > q->burst)
            tokens = q->burst;
    }
    tokens -= 1;
    if (take) {
        q->tokens = tokens;
        if (t > q->tokens_at)
            q->tokens_at = t;
    }
    return tokens >= 0 ? 0 : (int64_t)ceil(-tokens / q->qps * 1e9);
}

void ctrl_workqueue_add_with_opts(ctrl_workqueue *q, const char *key,
                                  const ctrl_workqueue_add_opts *o)
{
    if (!q || !key)
        return;
    ctrl_workqueue_add_opts opts = o ? *o : (ctrl_workqueue_add_opts){0};
    pthread_mutex_lock(&q->mu);
    if (q->shutdown)
        goto out;
    int64_t d = opts.after_ns;
    if (opts.rate_limited) {
        item *it = find_or_create(q, key);
        if (!it)
            goto out;
        int64_t rl = backoff(q, it->failures);
        if (it->failures++ == 0)
            q->st.failing++;
        int64_t b = bucket_delay(q, now(q), true);
        if (b > rl)
            rl = b;
        q->st.retries++;
        if (q->metrics)
            ctrl_metrics_add(q->metrics, "workqueue_retries_total", q->labels, 1);
        if (d <= 0 || rl < d) /* the sooner of the two, as controller-runtime */
            d = rl;
        maybe_release(q, it);
    }
    add_after_locked(q, key, d, opts.priority);
out:
    pthread_mutex_unlock(&q->mu);
}

void ctrl_workqueue_add(ctrl_workqueue *q, const char *key)
{
    ctrl_workqueue_add_with_opts(q, key, NULL);
}

void ctrl_workqueue_add_after(ctrl_workqueue *q, const char *key, int64_t delay_ns)
{
    ctrl_workqueue_add_with_opts(q, key, &(ctrl_workqueue_add_opts){.after_ns = delay_ns});
}

void ctrl_workqueue_add_rate_limited(ctrl_workqueue *q, const char *key)
{
    ctrl_workqueue_add_with_opts(q, key, &(ctrl_workqueue_add_opts){.rate_limited = true});
}

void ctrl_workqueue_forget(ctrl_workqueue *q, const char *key)
{
    if (!q || !key)
        return;
    pthread_mutex_lock(&q->mu);
    item *it = find(q, key);
    if (it) {
        if (it->failures > 0)
            q->st.failing--;
        it->failures = 0;
        maybe_release(q, it);
    }
    pthread_mutex_unlock(&q->mu);
}

int ctrl_workqueue_num_requeues(ctrl_workqueue *q, const char *key)
{
    if (!q || !key)
        return 0;
    pthread_mutex_lock(&q->mu);
    item *it = find(q, key);
    int n = it ? it->failures : 0;
    pthread_mutex_unlock(&q->mu);
    return n;
}

int64_t ctrl_workqueue_when(ctrl_workqueue *q, const char *key)
{
    if (!q || !key)
        return 0;
    pthread_mutex_lock(&q->mu);
    item *it = find(q, key);
    int64_t d = backoff(q, it ? it->failures : 0);
    int64_t b = bucket_delay(q, now(q), false);
    pthread_mutex_unlock(&q->mu);
    return b > d ? b : d;
}

/* ---- get / done ---- */

int ctrl_workqueue_get(ctrl_workqueue *q, char **key)
{
    return ctrl_workqueue_get_with_priority(q, key, NULL);
}

int ctrl_workqueue_get_with_priority(ctrl_workqueue *q, char **key, int *priority)
{
    if (!q || !key)
        return CTRL_ERR_ARG;
    int rc = 0;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        int64_t t = now(q);
        promote_locked(q, t);
        if (q->shutdown && (!q->drain || q->flen == 0)) {
            rc = CTRL_ERR_CANCELLED;
            break;
        }
        if (q->flen > 0) {
            item *it = q->rq[0];
            char *k = strdup(it->key);
            if (!k) {
                rc = CTRL_ERR_NOMEM;
                break;
            }
            ready_pop(q);
            if (priority)
                *priority = it->prio;
            it->dirty = false;
            it->processing = true;
            it->started_at = t;
            it->pprev = NULL;
            it->pnext = q->processing;
            if (q->processing)
                q->processing->pprev = it;
            q->processing = it;
            q->nprocessing++;
            if (it->has_added) {
                double s = (double)(t - it->added_at) / 1e9;
                q->st.queue_seconds_sum += s;
                q->st.queue_count++;
                if (q->metrics)
                    ctrl_metrics_observe(q->metrics, "workqueue_queue_duration_seconds", q->labels,
                                         s);
                it->has_added = false;
            }
            refresh_gauges(q, t);
            *key = k;
            break;
        }
        int64_t deadline = q->hlen > 0 && !q->shutdown ? q->heap[0]->deadline : INT64_MAX;
        ctrl_clock_wait_until(clk(q), &q->cv, &q->mu, deadline);
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

void ctrl_workqueue_done(ctrl_workqueue *q, const char *key)
{
    if (!q || !key)
        return;
    pthread_mutex_lock(&q->mu);
    item *it = find(q, key);
    if (it && it->processing) {
        int64_t t = now(q);
        it->processing = false;
        if (it->pprev)
            it->pprev->pnext = it->pnext;
        else
            q->processing = it->pnext;
        if (it->pnext)
            it->pnext->pprev = it->pprev;
        it->pprev = it->pnext = NULL;
        q->nprocessing--;
        double s = (double)(t - it->started_at) / 1e9;
        q->st.work_seconds_sum += s;
        q->st.work_count++;
        if (q->metrics)
            ctrl_metrics_observe(q->metrics, "workqueue_work_duration_seconds", q->labels, s);
        if (it->dirty && !ready_push(q, it))
            it->dirty = false;
        refresh_gauges(q, t);
        maybe_release(q, it);
        ctrl_clock_notify(clk(q), &q->cv);
    }
    pthread_mutex_unlock(&q->mu);
}

/* ---- shutdown and inspection ---- */

void ctrl_workqueue_shutdown(ctrl_workqueue *q, bool drain)
{
    if (!q)
        return;
    pthread_mutex_lock(&q->mu);
    if (!q->shutdown) {
        q->shutdown = true;
        q->drain = drain;
        /* Delayed adds will never fire: drop them. */
        while (q->hlen > 0) {
            item *it = heap_pop(q);
            maybe_release(q, it);
        }
    }
    ctrl_clock_notify(clk(q), &q->cv);
    if (drain)
        while (q->nprocessing > 0 || (q->drain && q->flen > 0))
            ctrl_clock_wait_until(clk(q), &q->cv, &q->mu, INT64_MAX);
    pthread_mutex_unlock(&q->mu);
}

bool ctrl_workqueue_shutting_down(ctrl_workqueue *q)
{
    if (!q)
        return true;
    pthread_mutex_lock(&q->mu);
    bool s = q->shutdown;
    pthread_mutex_unlock(&q->mu);
    return s;
}

size_t ctrl_workqueue_len(ctrl_workqueue *q)
{
    if (!q)
        return 0;
    pthread_mutex_lock(&q->mu);
    promote_locked(q, now(q));
    size_t n = q->flen;
    pthread_mutex_unlock(&q->mu);
    return n;
}

size_t ctrl_workqueue_processing(ctrl_workqueue *q)
{
    if (!q)
        return 0;
    pthread_mutex_lock(&q->mu);
    size_t n = q->nprocessing;
    pthread_mutex_unlock(&q->mu);
    return n;
}

int64_t ctrl_workqueue_next_deadline(ctrl_workqueue *q)
{
    if (!q)
        return INT64_MAX;
    pthread_mutex_lock(&q->mu);
    promote_locked(q, now(q));
    int64_t d = q->hlen > 0 ? q->heap[0]->deadline : INT64_MAX;
    pthread_mutex_unlock(&q->mu);
    return d;
}

void ctrl_workqueue_stats_get(ctrl_workqueue *q, ctrl_workqueue_stats *out)
{
    if (!q || !out)
        return;
    pthread_mutex_lock(&q->mu);
    int64_t t = now(q);
    promote_locked(q, t);
    refresh_gauges(q, t);
    *out = q->st;
    pthread_mutex_unlock(&q->mu);
}
