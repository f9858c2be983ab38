/*
 * controller_int.h - controllers inside libctrl: the reconcile loop, the
 * evaluation side of predicates and handlers (private to libctrl).
 *
 * The builder (builder.c) assembles a controller from the manager's parts;
 * the manager (manager.c) runs it as a ctrl_runnable and asks it whether it
 * is idle; tests build one directly from a cache (or none: events are then
 * pushed with ctrl__controller_event), a client, a metrics registry, a
 * clock and hooks.
 *
 * Lifecycle:
 *
 *   ctrl__controller_new ─ ctrl__controller_watch* ─ ctrl__controller_start
 *     (workers run) ─ ctrl__controller_stop ─ [stop the cache] ─ ctrl__controller_free
 *
 * or, as a runnable: ctrl__controller_run(c) blocks (wait for the watches'
 * informers to sync, start, wait for ctrl__controller_halt, stop).
 *
 * Threads: ctrl__controller_event, _idle, _next_deadline, _halt, _queue and
 * _update_metrics from any thread. _watch before _start (or while running,
 * from one thread). _start/_stop/_run/_free from one owning thread.
 * Reconcile functions run on the controller's workers.
 */
#ifndef CTRL_CONTROLLER_INT_H
#define CTRL_CONTROLLER_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "ctrl/cache.h"
#include "ctrl/controller.h"
#include "ctrl/metrics.h"
#include "ctrl/workqueue.h"
#include "log_int.h"

/* ---- predicates (predicate.c) ---- */

/* Does the event pass p? A NULL predicate passes everything. Any thread. */
bool ctrl__pred_create(const ctrl_predicate *p, const json_t *obj);
bool ctrl__pred_update(const ctrl_predicate *p, const json_t *old_obj, const json_t *new_obj);
bool ctrl__pred_delete(const ctrl_predicate *p, const json_t *obj);

/* ---- handlers (handler.c) ---- */

/* Receives each request an event maps to (ns "" for cluster-scoped). */
typedef void (*ctrl__enqueue_fn)(void *ud, const char *ns, const char *name);

/* Map an event to requests. Updates: for_object enqueues the new object;
 * owner and map handlers enqueue what both the old and the new object map
 * to. Any thread; the handler is not modified. */
void ctrl__handler_create(const ctrl_handler *h, const json_t *obj, ctrl__enqueue_fn fn, void *ud);
void ctrl__handler_update(const ctrl_handler *h, const json_t *old_obj, const json_t *new_obj,
                          ctrl__enqueue_fn fn, void *ud);
void ctrl__handler_delete(const ctrl_handler *h, const json_t *obj, ctrl__enqueue_fn fn, void *ud);
/* Owner handlers: the owner kind is cluster-scoped (requests get ns "")
 * instead of living in the owned object's namespace. Before use. */
void ctrl__handler_set_owner_cluster_scoped(ctrl_handler *h, bool cluster_scoped);
bool ctrl__handler_is_owner(const ctrl_handler *h);

/* ---- controllers (controller.c) ---- */

typedef struct ctrl__controller ctrl__controller;

/* Everything a controller uses. Pointers are borrowed and must outlive the
 * controller, except what is said to be copied. */
typedef struct ctrl__controller_config {
    const char *name; /* required; copied */
    ctrl_reconcile_fn reconcile;
    void *user;
    ctrl_controller_options options; /* zero fields take the defaults */
    ctrl_cache *cache;               /* for ctrl_ctx_cache; may be NULL */
    ctrl_client *client;             /* for ctrl_ctx_client; may be NULL */
    ctrl_client *api_reader;         /* for ctrl_ctx_api_reader; NULL = client */
    ctrl_metrics *metrics;           /* controller_runtime_* and workqueue_*; may be NULL */
    const ctrl_clock *clock;         /* NULL = real; copied */
    const ctrl_hooks *hooks;         /* NULL = none; copied */
    const ctrl__logger *logger;      /* NULL = no logs */
    uint64_t seed;                   /* reconcile ids; 0 = random */
    bool own_client;                 /* free client when the controller is freed */
    bool own_logger;                 /* free logger when the controller is freed */
    ctrl_manager *manager;           /* for ctrl_ctx_recorder; may be NULL */
} ctrl__controller_config;

/* A new, stopped controller with its work queue. Errors: CTRL_ERR_ARG (no
 * name or reconcile function), CTRL_ERR_NOMEM. On error nothing is taken
 * over (own_client and own_logger take effect only on success). */
int ctrl__controller_new(const ctrl__controller_config *cfg, ctrl__controller **out);

/*
 * Watch: events from inf pass p (taken over; NULL = all), h (taken over,
 * required) maps them to requests on the queue. inf NULL: no informer, the
 * caller pushes events with ctrl__controller_event(c, *index, ...). index
 * may be NULL. On error h and p are freed. Registers the handler on inf at
 * once (events before start wait in the queue).
 */
int ctrl__controller_watch(ctrl__controller *c, ctrl_informer *inf, ctrl_handler *h,
                           ctrl_predicate *p, int *index);

typedef enum ctrl__event_type {
    CTRL__EVENT_ADD,
    CTRL__EVENT_UPDATE,
    CTRL__EVENT_DELETE,
} ctrl__event_type;
/* Push one event through watch index (old_obj only for updates). */
void ctrl__controller_event(ctrl__controller *c, int index, ctrl__event_type type,
                            const json_t *old_obj, const json_t *obj);

/* Wait until every watched informer has synced (timeout on the informers'
 * clock): 0, CTRL_ERR_TIMEOUT, CTRL_ERR_CANCELLED. */
int ctrl__controller_wait_synced(ctrl__controller *c, int64_t timeout_ns);
/* Start max_concurrent_reconciles workers; returns at once. CTRL_ERR_ARG
 * if started before. */
int ctrl__controller_start(ctrl__controller *c);
/* Stop: reconciles in flight finish (their ctx reports cancelled), queued
 * keys are dropped, workers are joined. Idempotent. */
void ctrl__controller_stop(ctrl__controller *c);
/* Free a stopped controller. Its handlers stay registered on the informers
 * (cache.h has no removal), so free it only after the cache has stopped.
 * NULL does nothing. */
void ctrl__controller_free(ctrl__controller *c);

/*
 * The ctrl_runnable callbacks (ud = the controller): run waits for sync
 * (2 minutes on the controller's clock, as controller-runtime's
 * CacheSyncTimeout; a halt meanwhile ends it and run returns 0), starts,
 * blocks until halt, stops and returns 0. The manager can tell a controller's
 * runnable by r->start == ctrl__controller_run, and then owns r->ud: it
 * must ctrl__controller_free it after stopping the cache.
 */
int ctrl__controller_run(void *c);
void ctrl__controller_halt(void *c);

/* No ready key and no busy worker (delayed keys do not count). */
bool ctrl__controller_idle(ctrl__controller *c);
/* The earliest delayed add (requeue-after, backoff), clock time, or INT64_MAX. */
int64_t ctrl__controller_next_deadline(ctrl__controller *c);

const char *ctrl__controller_name(const ctrl__controller *c);
/* Its options' skip_name_validation: the manager does not hold its name
 * against other controllers'. */
bool ctrl__controller_skips_name_validation(const ctrl__controller *c);
/* While on, ctrl__controller_run waits (before it waits for the informers
 * to sync) until it is turned off or the controller is halted: the builder
 * turns it on before it adds the controller to a running manager and off
 * once the watches are registered. Any thread. */
void ctrl__controller_set_configuring(ctrl__controller *c, bool on);
/* Call user_free(user) when c is freed (NULL: nothing). Before c starts. */
void ctrl__controller_set_user_free(ctrl__controller *c, void (*user_free)(void *user));
ctrl_workqueue *ctrl__controller_queue(ctrl__controller *c);
/* Refresh the time-based gauges (workqueue_unfinished_work_seconds,
 * workqueue_longest_running_processor_seconds): call before a scrape. */
void ctrl__controller_update_metrics(ctrl__controller *c);

#endif
