/*
 * leader_int.h - leader election on a coordination.k8s.io/v1 Lease, with
 * client-go's algorithm (leaderelection.LeaderElector over a LeaseLock).
 *
 * Threads: ctrl__leader_start runs one elector thread; every other function
 * may be called from any thread, except _free (last, after _stop).
 */
#ifndef CTRL_LEADER_INT_H
#define CTRL_LEADER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrl/client.h"
#include "ctrl/clock.h"
#include "ctrl/metrics.h"

typedef struct ctrl__leader ctrl__leader;

typedef struct ctrl__leader_options {
    ctrl_client *client;       /* borrowed; outlives the elector */
    const char *ns;            /* the Lease's namespace (copied) */
    const char *name;          /* the Lease's name (copied) */
    const char *identity;      /* holderIdentity written (copied) */
    int64_t lease_ns;          /* leaseDurationSeconds (rounded up to whole seconds) */
    int64_t renew_deadline_ns; /* give up renewing after this */
    int64_t retry_ns;          /* between tries */
    bool release_on_cancel;    /* on stop, write holder "" and duration 1 */
    const ctrl_clock *clock;   /* borrowed; NULL = real */
    ctrl_metrics *metrics;     /* leader_election_master_status; borrowed; NULL = none */
    uint64_t seed;             /* retry jitter */
    const ctrl_hooks *hooks;   /* thread spawn, before/after "lease" per try; NULL = none */
    /* Called on the elector thread, without any elector lock held. */
    void (*on_started)(void *ud);                      /* acquired */
    void (*on_lost)(void *ud);                         /* renewal failed for renew_deadline */
    void (*log)(void *ud, int level, const char *msg); /* ctrl_log_level; NULL = none */
    void *ud;
} ctrl__leader_options;

/* A new elector (options copied as documented). CTRL_ERR_ARG, CTRL_ERR_NOMEM. */
int ctrl__leader_new(const ctrl__leader_options *opts, ctrl__leader **out);
/* Start the elector thread. Starting twice is CTRL_ERR_ARG. */
int ctrl__leader_start(ctrl__leader *le);
/* Stop the elector thread and join it; then, if it still leads and
 * release_on_cancel is set, release the Lease. Safe to call twice. */
void ctrl__leader_stop(ctrl__leader *le);
/* Stop and free. NULL does nothing. */
void ctrl__leader_free(ctrl__leader *le);

/* True while this elector holds the Lease and its last successful renewal
 * is recent enough that no other candidate can have taken it over. */
bool ctrl__leader_is_leader(ctrl__leader *le);
/* When the elector next wakes up (clock time), INT64_MAX if not waiting. */
int64_t ctrl__leader_next_deadline(ctrl__leader *le);
/* The holder last observed in the Lease ("" for none), copied into buf. */
void ctrl__leader_observed_holder(ctrl__leader *le, char *buf, size_t len);

/* A MicroTime ("2006-01-02T15:04:05.000000Z", exactly 6 fraction digits)
 * for wall-clock nanoseconds; buf of at least 32 bytes. */
void ctrl__micro_time(int64_t wall_ns, char *buf, size_t len);

#endif
