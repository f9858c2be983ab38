/*
 * ctrl/workqueue.h - the controller work queue, as client-go's rate-limited
 * delaying queue.
 *
 *  - Deduplicating: a key added while queued is not queued twice; a key added
 *    while being processed is queued again once ctrl_workqueue_done() is
 *    called for it (so one key is never processed by two workers at once).
 *  - Delayed adds (add_after) fire on the queue's clock.
 *  - Rate-limited adds: per-item exponential backoff (base 5 ms doubling to
 *    1000 s), reset by ctrl_workqueue_forget(); combined, as
 *    controller-runtime's default, with an overall token bucket (10 qps,
 *    burst 100) taking whichever delay is longer.
 *  - Shutdown wakes every getter; with drain, getters first receive what is
 *    queued and shutdown waits for in-flight items to be done.
 *  - Priorities, as controller-runtime's priority queue (v0.20+, the default
 *    since v0.23): ready keys come out highest priority first, and in the
 *    order they became ready within one priority. A key added again while
 *    queued keeps one place, with the higher priority. The plain adds use
 *    priority 0; controllers give CTRL_PRIORITY_LOW to what the initial list
 *    and resyncs add, so that changes seen later go first.
 *    workqueue_depth has one series per priority (name="...",priority="0").
 *
 * Threads: every function is thread-safe. Keys are copied.
 */
#ifndef CTRL_WORKQUEUE_H
#define CTRL_WORKQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrl/clock.h"
#include "ctrl/metrics.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ctrl_workqueue ctrl_workqueue;

typedef struct ctrl_workqueue_options {
    const char *name;        /* for metrics (workqueue_* name label); copied */
    const ctrl_clock *clock; /* NULL = real */
    int64_t base_delay_ns;   /* 0 = 5 ms */
    int64_t max_delay_ns;    /* 0 = 1000 s */
    double bucket_qps;       /* 0 = 10; < 0 = no bucket */
    int bucket_burst;        /* 0 = 100 */
    /* Where the workqueue_* series go (label name="<name>"); borrowed, must
     * outlive the queue; NULL = none. Gauges (depth, unfinished work,
     * longest running) are refreshed on every get, done and stats_get. */
    ctrl_metrics *metrics;
} ctrl_workqueue_options;

/* controller-runtime's handler.LowPriority: the priority of keys added
 * because of the initial list or a resync, not of a change. */
#define CTRL_PRIORITY_LOW (-100)

int ctrl_workqueue_new(const ctrl_workqueue_options *opts, ctrl_workqueue **out);
void ctrl_workqueue_free(ctrl_workqueue *q);

void ctrl_workqueue_add(ctrl_workqueue *q, const char *key);
void ctrl_workqueue_add_after(ctrl_workqueue *q, const char *key, int64_t delay_ns);
void ctrl_workqueue_add_rate_limited(ctrl_workqueue *q, const char *key);
/*
 * The general add (controller-runtime's AddWithOpts): after after_ns (<= 0:
 * now), or rate-limited (the key's backoff and the bucket; with after_ns
 * too, the sooner of the two), with a priority (higher first; 0 = the
 * default). The three adds above are this with priority 0. A delayed key
 * keeps its earliest deadline and the highest priority asked for. o NULL =
 * all zero.
 */
typedef struct ctrl_workqueue_add_opts {
    int64_t after_ns;
    bool rate_limited;
    int priority;
} ctrl_workqueue_add_opts;
void ctrl_workqueue_add_with_opts(ctrl_workqueue *q, const char *key,
                                  const ctrl_workqueue_add_opts *o);
/* Forget the key's failures: its next rate-limited add starts at the base. */
void ctrl_workqueue_forget(ctrl_workqueue *q, const char *key);
/* Rate-limited adds since the last forget. */
int ctrl_workqueue_num_requeues(ctrl_workqueue *q, const char *key);
/* The delay the next rate-limited add of key would get (for tests). */
int64_t ctrl_workqueue_when(ctrl_workqueue *q, const char *key);

/*
 * Take the next ready key (blocking): 0 and a malloc'ed key in *key, or
 * CTRL_ERR_CANCELLED once the queue is shut down (and, with drain, empty).
 */
int ctrl_workqueue_get(ctrl_workqueue *q, char **key);
/* The same, also giving the priority the key was queued with (priority may
 * be NULL). */
int ctrl_workqueue_get_with_priority(ctrl_workqueue *q, char **key, int *priority);
/* The key is processed: it may be handed out again. */
void ctrl_workqueue_done(ctrl_workqueue *q, const char *key);

void ctrl_workqueue_shutdown(ctrl_workqueue *q, bool drain);
bool ctrl_workqueue_shutting_down(ctrl_workqueue *q);

/* Ready keys (not counting delayed ones or ones being processed). */
size_t ctrl_workqueue_len(ctrl_workqueue *q);
/* Keys being processed now. */
size_t ctrl_workqueue_processing(ctrl_workqueue *q);
/* The earliest pending delayed add (clock time), or INT64_MAX. */
int64_t ctrl_workqueue_next_deadline(ctrl_workqueue *q);

/* Counters for metrics (workqueue_* names). */
typedef struct ctrl_workqueue_stats {
    size_t depth;
    unsigned long adds, retries;
    double queue_seconds_sum, work_seconds_sum;
    unsigned long queue_count, work_count;
    double unfinished_work_seconds, longest_running_seconds;
    size_t failing; /* keys whose last processing failed (rate-limited adds not
                     * forgotten since): the gauge workqueue_failing_keys */
} ctrl_workqueue_stats;
void ctrl_workqueue_stats_get(ctrl_workqueue *q, ctrl_workqueue_stats *out);

#ifdef __cplusplus
}
#endif

#endif
