/*
 * ctrl/client.h - a Kubernetes REST client: verbs on any kind, discovery,
 * Status errors, retries, watches.
 *
 * Callers name objects by apiVersion and kind, as in a manifest
 * ("apps/v1", "Deployment"); discovery finds the resource path, including
 * kinds that CRDs add while the client runs (a miss re-reads the group's
 * discovery document before answering CTRL_ERR_NO_MATCH). A kind that
 * starts with a lower-case letter is taken as a resource name instead
 * ("deployments"), for callers that know the resource, not the kind.
 *
 * Namespaces: for namespaced kinds, object verbs (get, update, patch,
 * delete, create) need a namespace (CTRL_ERR_ARG without one); list, watch
 * and delete_all_of with ns NULL or "" span every namespace (delete_all_of
 * needs one). For cluster-scoped kinds ns is ignored.
 *
 * Errors: 0 or a negative ctrl_errcode (ctrl/error.h). An API error's
 * Status is kept in the optional caller-owned ctrl_error. Transport failures
 * (CTRL_ERR_TRANSPORT, CTRL_ERR_TIMEOUT) are distinct from API errors.
 *
 * Retries: 429, 500, 502, 503, 504 and dropped connections are retried with
 * exponential backoff (the server's Retry-After wins when it sends one) for
 * idempotent verbs: GET (get, list, discovery), PUT (update), DELETE, and
 * merge, strategic-merge and apply patches (sending one twice gives the same
 * object). POST (create) and JSON patches (whose "add" to a list would
 * apply twice) are retried only with retry_non_idempotent, except when the
 * connection could not even be opened (nothing was sent). Watches are never
 * retried: the caller (an informer) resumes them.
 *
 * Efficiency: curl handles come from a pool per client (shared with its
 * children, ctrl_client_new_for), so connections stay open between calls
 * (HTTP keep-alive); a handle is created only when every pooled one is busy.
 *
 * Ownership: results (*out) are new references the caller json_decrefs;
 * arguments are borrowed. On error *out is untouched.
 *
 * Threads: a ctrl_client is thread-safe: every function below may be
 * called from any thread at once, except ctrl_client_free, which must be the
 * last call once no other thread uses the client. ctrl_watch_stop may be
 * called from any thread while ctrl_client_watch runs.
 */
#ifndef CTRL_CLIENT_H
#define CTRL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "ctrl/clock.h"
#include "ctrl/config.h"
#include "ctrl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ctrl_client ctrl_client;

/* Time as the client sees it (backoff sleeps, the rate limiter, token file
 * refreshes) is a ctrl_clock (ctrl/clock.h); NULL means real time. */

/* Options: zero-initialise, then set what you need. */
typedef struct ctrl_client_options {
    const char *user_agent;    /* NULL = "kube-harness-ctrl/0.1"; copied */
    int timeout_ms;            /* whole request; 0 = 30000; < 0 = none */
    int connect_timeout_ms;    /* 0 = 10000 */
    double qps;                /* client-side rate limit; <= 0 = off (default) */
    int burst;                 /* token bucket size; 0 = max(1, qps) */
    int max_retries;           /* 0 = 5; < 0 = never retry */
    int backoff_base_ms;       /* first delay; doubles each retry; 0 = 100 */
    int backoff_max_ms;        /* 0 = 30000 */
    bool retry_non_idempotent; /* also retry POST and PATCH */
    const ctrl_clock *clock;   /* NULL = real time; copied */
    size_t max_response_bytes; /* larger answers fail (CTRL_ERR_PROTOCOL); 0 = 64 MiB */
    int max_idle_handles;      /* curl handles kept for reuse; 0 = 16 */
    /* Called after every HTTP attempt (each retry counts), on the thread
     * that made it: code is the HTTP status, 0 when no answer came; host is
     * the server's "host:port". NULL = none. For the manager's
     * rest_client_requests_total; must be thread-safe and quick. */
    void (*on_response)(void *ud, int code, const char *method, const char *host);
    void *on_response_ud;
} ctrl_client_options;

/*
 * A new client for the server and credentials of cfg (copied: cfg may be
 * freed afterwards). opts may be NULL. Calls curl_global_init once per
 * process (thread-safe). Errors: CTRL_ERR_ARG, CTRL_ERR_CONFIG (URL
 * unusable), CTRL_ERR_NOMEM.
 */
int ctrl_client_new(const ctrl_config *cfg, const ctrl_client_options *opts, ctrl_client **out,
                    ctrl_error *err);

/*
 * A client that shares parent's connections, options and discovery cache
 * but sends its own User-Agent (one per controller, so that server-side
 * fault rules and audit logs can tell them apart). The parent may be freed
 * first; the shared parts live while either does.
 */
int ctrl_client_new_for(ctrl_client *parent, const char *user_agent, ctrl_client **out,
                        ctrl_error *err);

/* Free a client. NULL does nothing. */
void ctrl_client_free(ctrl_client *c);

/* The User-Agent sent (borrowed). */
const char *ctrl_client_user_agent(const ctrl_client *c);
/* The config's namespace ("default" unless the context or pod says). */
const char *ctrl_client_namespace(const ctrl_client *c);
/* The server URL (borrowed). */
const char *ctrl_client_server(const ctrl_client *c);

/* ---- discovery ---- */

/* What discovery says about a kind. */
typedef struct ctrl_resource_info {
    char group[254]; /* "" for the core group */
    char version[64];
    char resource[254]; /* plural, e.g. "deployments" */
    char kind[254];     /* e.g. "Deployment" */
    bool namespaced;
    bool has_status; /* a "<resource>/status" subresource exists */
} ctrl_resource_info;

/*
 * Map (apiVersion, kind or resource) to its resource, from the cache or,
 * on a miss, from a fresh discovery document for that group-version.
 * Errors: CTRL_ERR_NO_MATCH, transport and API errors of discovery.
 */
int ctrl_client_resource_for(ctrl_client *c, const char *api_version, const char *kind,
                             ctrl_resource_info *out, ctrl_error *err);

/* Forget every cached discovery document (they are re-read on next use). */
void ctrl_client_discovery_invalidate(ctrl_client *c);

/* ---- reads ---- */

/* GET one object. */
int ctrl_client_get(ctrl_client *c, const char *api_version, const char *kind, const char *ns,
                    const char *name, json_t **out, ctrl_error *err);
/* As ctrl_client_get, for a caller that only reads the object: from a
 * manager's cache, *out (a reference of the caller's: json_decref it) is
 * shared with the cache - READ-ONLY, never change it or anything in it
 * (ctrl_informer_get_shared) - and costs a reference instead of a copy;
 * from the server, it is the caller's own as with ctrl_client_get. */
int ctrl_client_get_shared(ctrl_client *c, const char *api_version, const char *kind,
                           const char *ns, const char *name, json_t **out, ctrl_error *err);

typedef struct ctrl_list_options {
    const char *label_selector; /* NULL = everything */
    const char *field_selector;
    int limit;                          /* page size; 0 = 500 */
    const char *resource_version;       /* NULL = most recent */
    const char *resource_version_match; /* "NotOlderThan", "Exact" or NULL */
    const char *continue_token;         /* start from this page */
    bool single_page;                   /* one page only; its continue token stays in
                                           metadata.continue */
} ctrl_list_options;

/*
 * LIST, following continue tokens to the end: *out is one List object
 * (kind "<Kind>List") holding every item, with the first page's
 * metadata.resourceVersion (the list's revision) and no continue. Items
 * carry apiVersion and kind (filled in when the server leaves them out).
 * A token that expires mid-way is CTRL_ERR_EXPIRED (list again). opts may
 * be NULL.
 */
int ctrl_client_list(ctrl_client *c, const char *api_version, const char *kind, const char *ns,
                     const ctrl_list_options *opts, json_t **out, ctrl_error *err);

/* ---- writes ---- */

typedef struct ctrl_write_options {
    bool dry_run;                 /* dryRun=All */
    const char *field_manager;    /* fieldManager */
    const char *field_validation; /* "Strict", "Warn", "Ignore" or NULL */
} ctrl_write_options;

/*
 * POST obj (apiVersion, kind, metadata.namespace and .name or .generateName
 * taken from it). *out (may be NULL: not wanted) is the created object.
 */
int ctrl_client_create(ctrl_client *c, const json_t *obj, const ctrl_write_options *opts,
                       json_t **out, ctrl_error *err);

/* PUT obj (send metadata.resourceVersion for optimistic concurrency: stale is 409). */
int ctrl_client_update(ctrl_client *c, const json_t *obj, const ctrl_write_options *opts,
                       json_t **out, ctrl_error *err);

/* PUT obj to its /status subresource: only status changes. */
int ctrl_client_update_status(ctrl_client *c, const json_t *obj, const ctrl_write_options *opts,
                              json_t **out, ctrl_error *err);

typedef enum ctrl_patch_type {
    CTRL_PATCH_MERGE = 0, /* application/merge-patch+json (RFC 7386) */
    CTRL_PATCH_JSON,      /* application/json-patch+json (RFC 6902): patch is an array */
    CTRL_PATCH_STRATEGIC, /* application/strategic-merge-patch+json: built-in kinds only */
    CTRL_PATCH_APPLY,     /* application/apply-patch+yaml (server-side apply): needs
                             field_manager */
} ctrl_patch_type;

typedef struct ctrl_patch_options {
    bool dry_run;
    const char *field_manager;
    const char *field_validation;
    bool force; /* server-side apply: take over conflicting fields */
} ctrl_patch_options;

/* PATCH one object with patch (borrowed) of the given type. */
int ctrl_client_patch(ctrl_client *c, const char *api_version, const char *kind, const char *ns,
                      const char *name, ctrl_patch_type type, const json_t *patch,
                      const ctrl_patch_options *opts, json_t **out, ctrl_error *err);

/* PATCH the /status subresource. */
int ctrl_client_patch_status(ctrl_client *c, const char *api_version, const char *kind,
                             const char *ns, const char *name, ctrl_patch_type type,
                             const json_t *patch, const ctrl_patch_options *opts, json_t **out,
                             ctrl_error *err);

enum {
    CTRL_APPLY_FORCE = 1 << 0,   /* take over fields other managers own */
    CTRL_APPLY_DRY_RUN = 1 << 1, /* dryRun=All: answered, not stored */
    CTRL_APPLY_STATUS = 1 << 2,  /* apply to the /status subresource */
};

/*
 * Server-side apply obj (borrowed: an apply configuration with apiVersion,
 * kind, metadata.name and, for namespaced kinds, metadata.namespace) as
 * field_manager (required), with CTRL_APPLY_* flags. Creates the object
 * when missing. *out (may be NULL) gets what the server stored. A field
 * another manager owns with a different value fails with CTRL_ERR_CONFLICT
 * (ctrl_err_is_conflict) unless CTRL_APPLY_FORCE; err->message is the
 * server's ("Apply failed with 1 conflict: conflict with \"alice\": .data.a")
 * and err->causes lists the fields. Any thread.
 */
int ctrl_client_apply(ctrl_client *c, const json_t *obj, const char *field_manager, unsigned flags,
                      json_t **out, ctrl_error *err);

typedef enum ctrl_propagation {
    CTRL_PROPAGATION_DEFAULT = 0, /* the server's (Background for most kinds) */
    CTRL_PROPAGATION_BACKGROUND,
    CTRL_PROPAGATION_FOREGROUND,
    CTRL_PROPAGATION_ORPHAN,
} ctrl_propagation;

typedef struct ctrl_delete_options {
    ctrl_propagation propagation;
    bool has_grace_period; /* send grace_period_seconds */
    int64_t grace_period_seconds;
    const char *precondition_uid; /* 409 Conflict if the object's uid differs */
    const char *precondition_resource_version;
    bool dry_run;
} ctrl_delete_options;

/*
 * DELETE one object (DeleteOptions sent as the body). *out (may be NULL)
 * is what the server answered: the object (still there with a
 * deletionTimestamp when finalizers hold it) or a Status.
 */
int ctrl_client_delete(ctrl_client *c, const char *api_version, const char *kind, const char *ns,
                       const char *name, const ctrl_delete_options *opts, json_t **out,
                       ctrl_error *err);

/*
 * DELETE the collection (deletecollection) in ns (required for namespaced
 * kinds), restricted by sel's selectors (sel may be NULL: all of them).
 * *out (may be NULL) is the server's answer.
 */
int ctrl_client_delete_all_of(ctrl_client *c, const char *api_version, const char *kind,
                              const char *ns, const ctrl_list_options *sel,
                              const ctrl_delete_options *opts, json_t **out, ctrl_error *err);

/*
 * Any request: method, path with query ("/version"), an optional JSON body
 * sent with content_type (NULL = application/json). *out (may be NULL) is
 * the parsed JSON answer (a string for non-JSON answers). Retried as its
 * method says (see the file comment).
 */
int ctrl_client_request(ctrl_client *c, const char *method, const char *path, const json_t *body,
                        const char *content_type, json_t **out, ctrl_error *err);

/* ---- reads from a cache ---- */

/*
 * A reader answers gets and lists in place of the server: a manager installs
 * one on each controller's client so that reads of the kinds its cache
 * holds come from the cache. get returns 0 (a new reference the caller may
 * modify), CTRL_ERR_NOT_FOUND, or 1 for "not mine: ask the server"; list
 * returns 0 with a new array of items, or 1. get_shared (may be NULL: get
 * then answers ctrl_client_get_shared) is get for read-only callers: *out a
 * reference the caller must never change, shared with the cache. Called on
 * the caller's thread.
 */
typedef struct ctrl_reader {
    int (*get)(void *ud, const char *api_version, const char *kind, const char *ns,
               const char *name, json_t **out);
    int (*list)(void *ud, const char *api_version, const char *kind, const char *ns,
                const char *label_selector, json_t **items);
    void *ud;
    int (*get_shared)(void *ud, const char *api_version, const char *kind, const char *ns,
                      const char *name, json_t **out);
} ctrl_reader;

/* Install (copied) or remove (NULL) c's reader; c's children do not inherit
 * it. Call before c is shared between threads. */
void ctrl_client_set_reader(ctrl_client *c, const ctrl_reader *r);

/* ---- watch ---- */

typedef enum ctrl_watch_event_type {
    CTRL_WATCH_ADDED,
    CTRL_WATCH_MODIFIED,
    CTRL_WATCH_DELETED,
    CTRL_WATCH_BOOKMARK,
    CTRL_WATCH_ERROR, /* object is a Status (e.g. 410 Expired) */
} ctrl_watch_event_type;

typedef struct ctrl_watch_event {
    ctrl_watch_event_type type;
    const char *type_name; /* "ADDED", ... */
    json_t *object;        /* borrowed for the callback; json_incref to keep it */
} ctrl_watch_event;

/* Called once per event, in order, on the thread running ctrl_client_watch.
 * Return 0 to go on, anything else to end the watch (ctrl_client_watch then
 * returns 0). */
typedef int (*ctrl_watch_fn)(const ctrl_watch_event *ev, void *user);

typedef struct ctrl_watch_options {
    const char *label_selector;
    const char *field_selector;
    const char *resource_version; /* NULL or "0": current state as ADDED first */
    int timeout_seconds;          /* server closes after this; 0 = server's default */
    bool allow_bookmarks;
    bool send_initial_events; /* watch-list: adds resourceVersionMatch=NotOlderThan */
    /* Called on the watching thread once the server has accepted the watch
     * (its 200 headers arrived), before any event. NULL = not told. */
    void (*on_open)(void *user);
} ctrl_watch_options;

/* A stop switch for watches: one per watcher, reusable across its watches. */
typedef struct ctrl_watch ctrl_watch;

/* A new stop switch (CTRL_ERR_NOMEM). */
int ctrl_watch_new(ctrl_watch **out);
/*
 * Stop: the watch running with w (if any) ends within milliseconds, and
 * every later ctrl_client_watch with w returns at once. Any thread.
 */
void ctrl_watch_stop(ctrl_watch *w);
/* True once ctrl_watch_stop was called. Any thread. */
bool ctrl_watch_stopped(ctrl_watch *w);
/* Free the switch; no watch may be running with it. NULL does nothing. */
void ctrl_watch_free(ctrl_watch *w);

/*
 * WATCH a kind (ns NULL or "" = every namespace), delivering each event to
 * fn as its line arrives. Blocks until the stream ends. w (may be NULL) lets
 * another thread stop it. Returns:
 *   0                  the server closed the stream (timeout_seconds, or
 *                      it ended the watch), or fn asked to stop;
 *   CTRL_ERR_CANCELLED ctrl_watch_stop;
 *   an API code        the server refused the watch, or sent an ERROR event
 *                      (delivered to fn first): 410 is CTRL_ERR_EXPIRED, so
 *                      ctrl_err_is_gone(rc) means relist;
 *   CTRL_ERR_TRANSPORT the connection broke; CTRL_ERR_PROTOCOL a line was
 *                      not a JSON event.
 * No request timeout applies beyond timeout_seconds (plus a margin).
 */
int ctrl_client_watch(ctrl_client *c, const char *api_version, const char *kind, const char *ns,
                      const ctrl_watch_options *opts, ctrl_watch *w, ctrl_watch_fn fn, void *user,
                      ctrl_error *err);

/* Requests other than watches made by every client of this process since
 * it started, and the real time spent in them (curl's perform call, or the
 * round-tripper's of ctrl/roundtrip.h; retries counted apart): for
 * benchmarks. Thread-safe. */
void ctrl_transport_totals(unsigned long *requests, long long *ns);

#ifdef __cplusplus
}
#endif

#endif
