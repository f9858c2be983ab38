/*
 * ctrl/controller.h - controllers: reconcile results, the reconcile
 * context, predicates, event handlers and the builder.
 *
 * A controller watches one primary kind (For), optionally the kinds it
 * owns (Owns) and any other kind (Watches); its handlers map each event to
 * requests (namespace/name) on its work queue; MaxConcurrentReconciles
 * workers take keys one at a time (never two workers on one key) and call
 * the user's reconcile function, whose result decides what happens next:
 *
 *   ctrl_done()              forget the key's failures; nothing more
 *   ctrl_requeue_after(d)    forget failures; add the key again after d
 *   ctrl_requeue()           add the key again, rate-limited (backoff)
 *   ctrl_err(rc)             an error: logged, counted, rate-limited retry
 *   ctrl_terminal(rc)        an error not worth retrying: logged, counted
 *
 * (DESIGN.md's sketch names the error result ctrl_error(rc); ctrl_error is
 * the error-details struct of ctrl/error.h, so the result is ctrl_err.)
 *
 * RecoverPanic: C has no panics to recover, and a crash (SIGSEGV, abort, a
 * failed assert) cannot be contained inside a reconcile: it takes the
 * whole process down, every controller of the manager with it. libctrl
 * installs no signal handler for that. What follows: writes the reconcile
 * already sent stay on the server (a half-done reconcile must be safe to
 * redo, as with any crash); a held leader Lease is not released, so
 * another replica takes over after lease_duration_ns (15 s by default);
 * the restarted process lists everything again and reconciles each object
 * once more (at CTRL_PRIORITY_LOW). controller_runtime_reconcile_panics_total
 * is exported for dashboards and stays 0. Each reconcile is timed instead
 * (the reconcile_time_seconds histogram, a warning for slow ones, and the
 * optional reconcile timeout below).
 *
 * ReconciliationTimeout (ctrl_controller_options.reconcile_timeout_ns): a
 * reconcile's ctx reports cancelled (ctrl_ctx_cancelled) once it has run
 * that long on the manager's clock; a reconcile that returns after its
 * deadline is counted in controller_runtime_reconcile_timeouts_total. C
 * cannot interrupt the call: the reconcile must check ctrl_ctx_cancelled
 * (or ctrl_ctx_deadline) between steps and return, and requests already
 * sent run to their own client timeout. Its result counts as usual.
 *
 * EnableWarmup: always on here. The builder creates a controller's
 * informers and registers its handlers at ctrl_builder_complete; the
 * manager starts and syncs the whole cache before it runs for leader
 * election, so a leader-election-gated controller's cache is warm and its
 * queue already holds the initial list when the manager is elected (its
 * workers start then).
 *
 * Names: a controller's name is unique per manager (it labels metrics,
 * logs and the User-Agent); ctrl_builder_complete refuses a duplicate
 * with CTRL_ERR_ARG and logs why, unless the new controller sets
 * skip_name_validation (controller-runtime's SkipNameValidation; its
 * metric series then mix with the other's). Unlike controller-runtime,
 * the check is per manager, not per process, so that tests and scenarios
 * can run several managers with the same controllers in one process.
 *
 * Threads: reconcile functions run on the controller's worker threads, up
 * to max_concurrent_reconciles at once, never two for the same key.
 * Predicates and map functions run on informer threads. Builders belong to
 * one thread and are used before the manager starts (or after, for
 * controllers added at run time).
 */
#ifndef CTRL_CONTROLLER_H
#define CTRL_CONTROLLER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "ctrl/cache.h"
#include "ctrl/client.h"
#include "ctrl/clock.h"
#include "ctrl/workqueue.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ctrl_manager ctrl_manager;

/* ---- reconcile ---- */

typedef struct ctrl_request {
    const char *ns; /* "" for cluster-scoped objects */
    const char *name;
} ctrl_request;

typedef enum ctrl_result_kind {
    CTRL_RESULT_DONE = 0,
    CTRL_RESULT_REQUEUE,
    CTRL_RESULT_REQUEUE_AFTER,
    CTRL_RESULT_ERROR,
    CTRL_RESULT_TERMINAL,
} ctrl_result_kind;

typedef struct ctrl_result {
    ctrl_result_kind kind;
    int64_t after_ns;  /* REQUEUE_AFTER */
    int err;           /* ERROR, TERMINAL: a ctrl_errcode or any negative code */
    int priority;      /* with has_priority: see ctrl_with_priority */
    bool has_priority; /* false: a requeue keeps the key's priority */
} ctrl_result;

static inline ctrl_result ctrl_done(void)
{
    return (ctrl_result){.kind = CTRL_RESULT_DONE};
}
static inline ctrl_result ctrl_requeue(void)
{
    return (ctrl_result){.kind = CTRL_RESULT_REQUEUE};
}
static inline ctrl_result ctrl_requeue_after(int64_t ns)
{
    return (ctrl_result){.kind = CTRL_RESULT_REQUEUE_AFTER, .after_ns = ns};
}
static inline ctrl_result ctrl_err(int rc)
{
    return (ctrl_result){.kind = CTRL_RESULT_ERROR, .err = rc ? rc : -1};
}
static inline ctrl_result ctrl_terminal(int rc)
{
    return (ctrl_result){.kind = CTRL_RESULT_TERMINAL, .err = rc ? rc : -1};
}
/*
 * Priorities (the work queue is controller-runtime's priority queue,
 * ctrl/workqueue.h): keys come out highest priority first. A key is queued
 * with priority 0 for a change (create, update, delete), with
 * CTRL_PRIORITY_LOW (-100) when the initial list or a resync added it, so
 * that a controller starting on many objects still answers new changes
 * first. A requeue (requeue, requeue_after, a retried error) keeps the
 * priority the key was reconciled with, unless the result names one:
 *   return ctrl_with_priority(ctrl_requeue_after(30 * CTRL_SECOND), 10);
 */
static inline ctrl_result ctrl_with_priority(ctrl_result r, int priority)
{
    r.priority = priority;
    r.has_priority = true;
    return r;
}

/* What a reconcile can reach. Valid for the duration of the call. */
typedef struct ctrl_ctx ctrl_ctx;

/*
 * The manager's client for this controller, as controller-runtime's
 * default client. Gets and lists with at most a label selector of a kind
 * the cache holds (every kind a controller of the manager watches, matched
 * as spelled: "ConfigMap" is not "configmaps") are answered from the cache
 * once its informer has synced, as copies the caller owns and may change;
 * other kinds, a kind not synced yet, field-selector and paged lists, and
 * every write go to the API server. Cached reads can lag the reconcile's
 * own writes: a write of a stale object fails with a conflict
 * (ctrl_err_is_conflict; return ctrl_err(rc) to retry), and
 * ctrl_ctx_api_reader reads live. docs/manager.md, "Reads from the
 * cache". Its User-Agent names the controller.
 */
ctrl_client *ctrl_ctx_client(ctrl_ctx *ctx);
/* A client that always reads from the API server. */
ctrl_client *ctrl_ctx_api_reader(ctrl_ctx *ctx);
ctrl_cache *ctrl_ctx_cache(ctrl_ctx *ctx);
/* True once the manager is stopping, or the reconcile has run past its
 * timeout (reconcile_timeout_ns): finish quickly. */
bool ctrl_ctx_cancelled(ctrl_ctx *ctx);
/* When the reconcile times out, in clock time (ctrl_ctx_now); INT64_MAX
 * without a timeout. */
int64_t ctrl_ctx_deadline(ctrl_ctx *ctx);
/* The manager's clock (virtual in scenarios). */
const ctrl_clock *ctrl_ctx_clock(ctrl_ctx *ctx);
int64_t ctrl_ctx_now(ctrl_ctx *ctx);
/* The controller's name (ctrl_builder_named, or the kind in lower case). */
const char *ctrl_ctx_controller(ctrl_ctx *ctx);
/* The manager's event recorder for this controller: Events it records
 * carry source.component = the controller's name (ctrl_recorder_event,
 * ctrl/manager.h). NULL outside a manager. */
typedef struct ctrl_recorder ctrl_recorder;
ctrl_recorder *ctrl_ctx_recorder(ctrl_ctx *ctx);
/* A unique id per reconcile, on every log line it writes. */
const char *ctrl_ctx_reconcile_id(ctrl_ctx *ctx);
/* The priority the key was queued with (0, CTRL_PRIORITY_LOW, or what a
 * result asked for). */
int ctrl_ctx_priority(ctrl_ctx *ctx);

/*
 * Structured logs: a message and key/value pairs, ending the list is done
 * by the macros. Each line carries the controller, namespace/name and
 * reconcile id.
 *   ctrl_log_info(ctx, "created pod", "pod", name);
 *
 * A plain pair is two strings (a NULL value is written as ""). Values of
 * other types go through the ctrl_kv_* macros, which expand to a tagged
 * triple, and mix freely with plain pairs:
 *   ctrl_log_info(ctx, "scaled", "pod", name, ctrl_kv_int("replicas", n),
 *                 ctrl_kv_bool("ready", ok), ctrl_kv_json("spec", spec));
 * Text lines write them unquoted (replicas=3 ready=true) and JSON values as
 * compact JSON, quoted (spec="{\"a\":1}"); JSON lines write them as JSON
 * values ("replicas":3,"ready":true,"spec":{"a":1}). ctrl_kv_json borrows
 * its json_t (any type; NULL is null; a JSON string is written as that
 * string); a value too long for the line is written as a cut string.
 * Floats that JSON cannot hold are written as the strings "NaN", "+Inf",
 * "-Inf".
 */
extern const char ctrl__kv_tag[4];
#define ctrl_kv_str(key, v) (const char *)(key), (const char *)(v)
#define ctrl_kv_int(key, v) &ctrl__kv_tag[0], (const char *)(key), (long long)(v)
#define ctrl_kv_bool(key, v) &ctrl__kv_tag[1], (const char *)(key), (int)!!(v)
#define ctrl_kv_float(key, v) &ctrl__kv_tag[2], (const char *)(key), (double)(v)
#define ctrl_kv_json(key, j) &ctrl__kv_tag[3], (const char *)(key), (const json_t *)(j)
typedef enum ctrl_log_level {
    CTRL_LOG_DEBUG = 0,
    CTRL_LOG_INFO,
    CTRL_LOG_WARN,
    CTRL_LOG_ERROR,
} ctrl_log_level;
void ctrl__log_kv(ctrl_ctx *ctx, ctrl_log_level level, const char *msg, ...);
/* True when a line at level would be written: the macros test it before
 * they evaluate their arguments. */
bool ctrl__log_on(ctrl_ctx *ctx, ctrl_log_level level);
#define ctrl_log_debug(...) ctrl__log_kv_level(CTRL_LOG_DEBUG, __VA_ARGS__)
#define ctrl_log_info(...) ctrl__log_kv_level(CTRL_LOG_INFO, __VA_ARGS__)
#define ctrl_log_warn(...) ctrl__log_kv_level(CTRL_LOG_WARN, __VA_ARGS__)
#define ctrl_log_error(...) ctrl__log_kv_level(CTRL_LOG_ERROR, __VA_ARGS__)
#define ctrl__log_kv_level(level, ctx, ...)                                                        \
    (ctrl__log_on((ctx), (level)) ? ctrl__log_kv((ctx), (level), __VA_ARGS__, (const char *)0)     \
                                  : (void)0)

/*
 * A logger handle, for code that logs with a reconcile's context but is
 * not given the ctx (helper functions, libraries): its lines carry the
 * same controller, namespace, name and reconcileID as the ctx macros, go
 * to the manager's sink, at its level and format, and take the same
 * key/value lists (plain string pairs and ctrl_kv_*).
 *
 *   static void note_scale(const ctrl_logger *lg, int n)
 *   {
 *       ctrl_logger_info(lg, "scaling", ctrl_kv_int("replicas", n));
 *   }
 *   ... note_scale(ctrl_ctx_logger(ctx), 3);
 *
 * The handle is borrowed from the ctx: valid for the reconcile call only,
 * usable from the reconciling thread and any thread it waits for. NULL
 * (no ctx) writes nothing.
 */
typedef struct ctrl_logger ctrl_logger;
ctrl_logger *ctrl_ctx_logger(ctrl_ctx *ctx);
/* True when a line at level would be written: the macros below test it
 * before they evaluate their arguments. */
bool ctrl_logger_enabled(const ctrl_logger *lg, ctrl_log_level level);
/* One line: msg, then key/value pairs up to a NULL key (the macros add it). */
void ctrl_logger_log(const ctrl_logger *lg, ctrl_log_level level, const char *msg, ...);
/* The same with a va_list, for wrappers with variadic signatures of their own. */
void ctrl_logger_logv(const ctrl_logger *lg, ctrl_log_level level, const char *msg, va_list ap);
#define ctrl_logger_debug(...) ctrl__logger_level(CTRL_LOG_DEBUG, __VA_ARGS__)
#define ctrl_logger_info(...) ctrl__logger_level(CTRL_LOG_INFO, __VA_ARGS__)
#define ctrl_logger_warn(...) ctrl__logger_level(CTRL_LOG_WARN, __VA_ARGS__)
#define ctrl_logger_error(...) ctrl__logger_level(CTRL_LOG_ERROR, __VA_ARGS__)
#define ctrl__logger_level(level, lg, ...)                                                         \
    (ctrl_logger_enabled((lg), (level))                                                            \
         ? ctrl_logger_log((lg), (level), __VA_ARGS__, (const char *)0)                            \
         : (void)0)

typedef ctrl_result (*ctrl_reconcile_fn)(ctrl_ctx *ctx, const ctrl_request *req, void *user);

/* ---- predicates ---- */

/* A filter on events; composable. Predicates are reference-counted values:
 * every function that takes one takes over the caller's reference. */
typedef struct ctrl_predicate ctrl_predicate;

typedef struct ctrl_predicate_funcs {
    bool (*create)(const json_t *obj, void *user);                            /* NULL = true */
    bool (*update)(const json_t *old_obj, const json_t *new_obj, void *user); /* NULL = true */
    bool (*remove)(const json_t *obj, void *user);                            /* NULL = true */
    void *user;
} ctrl_predicate_funcs;

ctrl_predicate *ctrl_pred_funcs(const ctrl_predicate_funcs *f);
/* Updates pass only when metadata.generation changed (creates/deletes pass). */
ctrl_predicate *ctrl_pred_generation_changed(void);
ctrl_predicate *ctrl_pred_resource_version_changed(void);
ctrl_predicate *ctrl_pred_labels_changed(void);
ctrl_predicate *ctrl_pred_annotations_changed(void);
/* Objects whose labels match selector (any event); NULL if malformed. */
ctrl_predicate *ctrl_pred_label_selector(const char *selector);
/* Combinations. A NULL operand (malformed, out of memory) gives NULL and
 * frees the other, so errors carry through to ctrl_builder_complete. */
ctrl_predicate *ctrl_pred_and(ctrl_predicate *a, ctrl_predicate *b);
ctrl_predicate *ctrl_pred_or(ctrl_predicate *a, ctrl_predicate *b);
ctrl_predicate *ctrl_pred_not(ctrl_predicate *p);
/* Another reference to p (for passing one predicate to two places). */
ctrl_predicate *ctrl_predicate_ref(ctrl_predicate *p);
/* Drop a reference. NULL does nothing. */
void ctrl_predicate_free(ctrl_predicate *p);

/* ---- event handlers: events to requests ---- */

typedef struct ctrl_handler ctrl_handler;

/* Enqueue the object itself. */
ctrl_handler *ctrl_handler_for_object(void);
/* Enqueue the object's owner of that kind: its controller owner only
 * (only_controller), or every owner of that kind. */
ctrl_handler *ctrl_handler_for_owner(const char *owner_api_version, const char *owner_kind,
                                     bool only_controller);
/* Enqueue what fn returns: a new JSON array of {"namespace":..,"name":..}. */
typedef json_t *(*ctrl_map_fn)(const json_t *obj, void *user);
ctrl_handler *ctrl_handler_from_map(ctrl_map_fn fn, void *user);
void ctrl_handler_free(ctrl_handler *h);

/* ---- builder ---- */

typedef struct ctrl_controller_options {
    int max_concurrent_reconciles; /* 0 = 1 */
    int64_t base_delay_ns;         /* backoff; 0 = 5 ms */
    int64_t max_delay_ns;          /* 0 = 1000 s */
    int64_t slow_reconcile_ns;     /* log reconciles slower than this; 0 = 10 s */
    bool no_leader_election;       /* run without waiting for leadership */
    /* Every key at priority 0: a plain FIFO, as before controller-runtime
     * v0.20 (UsePriorityQueue=false). Results' priorities still apply. */
    bool no_priority_queue;
    /* ReconciliationTimeout: ctrl_ctx_cancelled turns true after this long
     * in one reconcile, and controller_runtime_reconcile_timeouts_total
     * counts reconciles that ran past it; 0 = none. */
    int64_t reconcile_timeout_ns;
    /* SkipNameValidation: allow a name another controller of this manager
     * already has. */
    bool skip_name_validation;
} ctrl_controller_options;

typedef struct ctrl_builder ctrl_builder;

/* Start a controller for a primary kind. Never NULL (errors surface at complete). */
ctrl_builder *ctrl_builder_for(ctrl_manager *mgr, const char *api_version, const char *kind);
/* Predicates on the primary kind (taken over). */
ctrl_builder *ctrl_builder_with_predicates(ctrl_builder *b, ctrl_predicate *p);
/* Reconcile the controller owner when an owned object changes. */
ctrl_builder *ctrl_builder_owns(ctrl_builder *b, const char *api_version, const char *kind);
ctrl_builder *ctrl_builder_owns_with(ctrl_builder *b, const char *api_version, const char *kind,
                                     ctrl_predicate *p);
/* Any kind, with a handler (taken over) and an optional predicate (taken over). */
ctrl_builder *ctrl_builder_watches(ctrl_builder *b, const char *api_version, const char *kind,
                                   ctrl_handler *h, ctrl_predicate *p);
/* A predicate on every event of every watch (taken over). */
ctrl_builder *ctrl_builder_with_event_filter(ctrl_builder *b, ctrl_predicate *p);
/* The controller's name (unique per manager; default: the kind in lower case). */
ctrl_builder *ctrl_builder_named(ctrl_builder *b, const char *name);
ctrl_builder *ctrl_builder_with_options(ctrl_builder *b, const ctrl_controller_options *o);

/*
 * A destructor for the user pointer given to ctrl_builder_complete: called
 * once, with it, when the controller is freed (ctrl_manager_free, or a
 * scenario's replica restarting), or at once when ctrl_builder_complete
 * fails. NULL (the default): the caller keeps ownership.
 */
ctrl_builder *ctrl_builder_with_user_free(ctrl_builder *b, void (*user_free)(void *user));

/*
 * Create the controller and add it to the manager; the builder is freed in
 * every case. Errors: CTRL_ERR_ARG (no kind, a duplicate name without
 * skip_name_validation, a malformed predicate, a negative option), CTRL_ERR_NO_MATCH (an unknown
 * kind, when the manager already runs), CTRL_ERR_NOMEM.
 */
int ctrl_builder_complete(ctrl_builder *b, ctrl_reconcile_fn fn, void *user);

#ifdef __cplusplus
}
#endif

#endif
