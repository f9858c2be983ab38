/*
 * ctrl/manager.h - the Manager: create it, register controllers and
 * runnables, start it, and it runs them until a signal stops it (Go
 * controller-runtime's Manager).
 *
 * Start order: the HTTP servers (metrics, health probes), the cache (and
 * wait for it to sync), runnables that need no leadership, then leader
 * election and, once elected, the rest. Stop runs in reverse, within the
 * graceful shutdown timeout. A lost lease stops the manager with
 * CTRL_ERR_LEADERSHIP_LOST from ctrl_manager_start (a program should exit,
 * as in Go).
 *
 * Threads: ctrl_manager_start blocks the calling thread until the manager
 * stops. ctrl_manager_stop, ctrl_manager_elected, ctrl_manager_idle and the
 * getters may be called from any thread. Everything else before start, from
 * one thread (controllers may also be added while running).
 */
#ifndef CTRL_MANAGER_H
#define CTRL_MANAGER_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "ctrl/cache.h"
#include "ctrl/client.h"
#include "ctrl/clock.h"
#include "ctrl/config.h"
#include "ctrl/controller.h"
#include "ctrl/metrics.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ctrl_log_format { CTRL_LOG_TEXT = 0, CTRL_LOG_JSON } ctrl_log_format;

typedef struct ctrl_manager_options {
    /* Leader election on a coordination.k8s.io/v1 Lease. */
    bool leader_election;
    const char *leader_election_id;        /* the Lease name; required with leader_election */
    const char *leader_election_namespace; /* NULL = the config's namespace */
    const char *identity;                  /* NULL = hostname + "_" + a random suffix */
    int64_t lease_duration_ns;             /* 0 = 15 s */
    int64_t renew_deadline_ns;             /* 0 = 10 s */
    int64_t retry_period_ns;               /* 0 = 2 s */
    bool release_on_cancel;                /* write an empty holder when stopping */

    const char *metrics_addr;      /* NULL = ":8080"; "0" = off; "127.0.0.1:0" picks a port */
    const char *health_probe_addr; /* NULL or "0" = off */
    int64_t graceful_shutdown_ns;  /* 0 = 30 s */

    int64_t sync_period_ns;        /* cache resync; 0 = 10 h (jittered) */
    const char *const *namespaces; /* cache scope; NULL = all */
    ctrl_controller_options controller_defaults;

    const char *user_agent;  /* base User-Agent; controllers append their name */
    const ctrl_clock *clock; /* NULL = real */
    const ctrl_hooks *hooks; /* deterministic runs; NULL = none */
    uint64_t seed;           /* jitter, identities; 0 = random */

    ctrl_log_level log_level; /* default INFO */
    ctrl_log_format log_format;
    void (*log_sink)(const char *line, void *user); /* NULL = stderr */
    void *log_user;
} ctrl_manager_options;

/*
 * A manager for the cluster in kubeconfig (NULL: $KUBECONFIG, ~/.kube/config,
 * or in-cluster). opts may be NULL.
 */
int ctrl_manager_new(const char *kubeconfig, const ctrl_manager_options *opts,
                     ctrl_manager **out, ctrl_error *err);
/* The same for an explicit configuration (copied). */
int ctrl_manager_new_for_config(const ctrl_config *cfg, const ctrl_manager_options *opts,
                                ctrl_manager **out, ctrl_error *err);
/* Stop (if running) and free. NULL does nothing. */
void ctrl_manager_free(ctrl_manager *mgr);

/* Something the manager runs: start blocks until stop is called (or it
 * fails); stop asks it to return. */
typedef struct ctrl_runnable {
    const char *name;
    int (*start)(void *ud);
    void (*stop)(void *ud);
    void *ud;
    bool needs_leader;
} ctrl_runnable;

int ctrl_manager_add(ctrl_manager *mgr, const ctrl_runnable *r);

/* Named health checks: 0 = healthy, else unhealthy (message in buf). */
typedef int (*ctrl_check_fn)(void *user, char *buf, size_t len);
int ctrl_manager_add_healthz(ctrl_manager *mgr, const char *name, ctrl_check_fn fn, void *user);
int ctrl_manager_add_readyz(ctrl_manager *mgr, const char *name, ctrl_check_fn fn, void *user);

/* A stop signal other threads (or signal handlers) can trip. */
typedef struct ctrl_stop ctrl_stop;
/* The process's SIGINT/SIGTERM: a second signal exits at once (status 1). */
ctrl_stop *ctrl_signal_context(void);

/*
 * Run until stop trips (may be NULL), ctrl_manager_stop, a runnable fails, or
 * the lease is lost. Starting twice is CTRL_ERR_ARG. Returns 0 on a clean
 * stop.
 */
int ctrl_manager_start(ctrl_manager *mgr, ctrl_stop *stop);
void ctrl_manager_stop(ctrl_manager *mgr);

/* Wait until this manager leads (or leader election is off): 0, or
 * CTRL_ERR_TIMEOUT / CTRL_ERR_CANCELLED. */
int ctrl_manager_elected(ctrl_manager *mgr, int64_t timeout_ns);
bool ctrl_manager_is_leader(ctrl_manager *mgr);

/* No ready work item, no busy worker, every received watch event handled. */
bool ctrl_manager_idle(ctrl_manager *mgr);
/* The earliest pending timer (requeue-after, backoff, lease renewal, resync),
 * clock time, or INT64_MAX: a virtual clock jumps there when idle. */
int64_t ctrl_manager_next_deadline(ctrl_manager *mgr);

ctrl_client *ctrl_manager_client(ctrl_manager *mgr);
ctrl_cache *ctrl_manager_cache(ctrl_manager *mgr);
ctrl_metrics *ctrl_manager_metrics(ctrl_manager *mgr);
const ctrl_manager_options *ctrl_manager_options_get(ctrl_manager *mgr);
/* The metrics and health servers' ports once started (0 if off). */
int ctrl_manager_metrics_port(ctrl_manager *mgr);
int ctrl_manager_health_port(ctrl_manager *mgr);

/* ---- events (core/v1 Events about objects) ---- */

typedef struct ctrl_recorder ctrl_recorder;
/* A recorder writing Events with source.component = component (borrowed: lives
 * as long as the manager). */
ctrl_recorder *ctrl_manager_recorder(ctrl_manager *mgr, const char *component);
/* Record an Event ("Normal" or "Warning") about obj; repeats of the same
 * (object, type, reason, message) patch the count instead of creating more. */
void ctrl_recorder_event(ctrl_recorder *r, const json_t *obj, const char *type,
                         const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#ifdef __cplusplus
}
#endif

#endif
