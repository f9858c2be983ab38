/*
 * fakeapi.h - an embeddable fake Kubernetes API server.
 *
 * fakeapi_start() serves the Kubernetes REST API on 127.0.0.1 from a SQLite
 * database (in memory by default), in the calling process, on threads of its
 * own. kubectl and the official clients work against it unchanged. Tests can
 * also reach the store directly (fakeapi_apply, fakeapi_get, fakeapi_list),
 * without HTTP.
 *
 * Threads: HTTP is served by a few event-loop threads (one per core, 2 to
 * 8; libmicrohttpd with epoll), plus a waker thread that resumes suspended
 * connections (watches, delayed requests), a connection tracker thread and
 * one background thread (garbage collection, namespace deletion).
 * fakeapi_exchange serves a request on its caller's thread instead. The
 * modules and their layers: fakeapi/README.md.
 * Every function below is thread-safe unless it says otherwise; none may be
 * called from inside a clock callback.
 *
 * Ownership: objects are jansson values. Functions that return a json_t * give
 * the caller a new reference; arguments are borrowed.
 *
 * Errors: functions return 0 or a negative fakeapi_errcode. An optional
 * fakeapi_error (caller-owned) receives the details: the HTTP code, the
 * Kubernetes reason and the message the server would have answered.
 */
#ifndef FAKEAPI_FAKEAPI_H
#define FAKEAPI_FAKEAPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fakeapi_server fakeapi_server;

typedef enum fakeapi_errcode {
    FAKEAPI_OK = 0,
    FAKEAPI_ERR_NOMEM = -1,          /* out of memory */
    FAKEAPI_ERR_INVALID = -2,        /* bad argument, malformed or invalid object (400/422) */
    FAKEAPI_ERR_NOT_FOUND = -3,      /* 404 */
    FAKEAPI_ERR_CONFLICT = -4,       /* 409 Conflict: stale resourceVersion, precondition */
    FAKEAPI_ERR_ALREADY_EXISTS = -5, /* 409 AlreadyExists */
    FAKEAPI_ERR_GONE = -6,           /* 410 Expired: revision compacted */
    FAKEAPI_ERR_FORBIDDEN = -7,      /* 403: e.g. namespace terminating */
    FAKEAPI_ERR_UNSUPPORTED = -8,    /* 405/415: verb or media type not supported */
    FAKEAPI_ERR_STORAGE = -9,        /* SQLite failed */
    FAKEAPI_ERR_IO = -10,            /* a file could not be read or written */
    FAKEAPI_ERR_LISTEN = -11,        /* the HTTP server could not start */
    FAKEAPI_ERR_INTERNAL = -12,      /* a bug: please report */
} fakeapi_errcode;

/* What went wrong, as the server would have said it in a Status body. */
typedef struct fakeapi_error {
    int code;        /* fakeapi_errcode */
    int http_status; /* e.g. 404 */
    char reason[48]; /* Kubernetes reason, e.g. "NotFound" */
    char message[512];
} fakeapi_error;

/* A static description of an error code ("not found"). Never NULL. */
const char *fakeapi_strerror(int code);

/*
 * The clock every timestamp and timeout comes from. now_ns returns
 * nanoseconds since the Unix epoch; it is called from any server thread and
 * must be thread-safe. A virtual clock that jumps forward must call
 * fakeapi_clock_advanced() so that waits (watch timeouts, bookmarks, delays)
 * re-read it.
 */
typedef struct fakeapi_clock {
    int64_t (*now_ns)(void *ud);
    void *ud;
} fakeapi_clock;

/* Options: zero-initialise, then set what you need. */
typedef struct fakeapi_options {
    const char *host;           /* listen address; NULL = "127.0.0.1" */
    uint16_t port;              /* 0 = pick a free port */
    const char *db_path;        /* SQLite file; NULL = in memory */
    const fakeapi_clock *clock; /* NULL = real time; copied by fakeapi_start */
    uint64_t seed;              /* seeds uids and generated names; 0 = random */
    size_t max_body_bytes;      /* request body limit; 0 = 3 MiB */
    bool no_http;               /* in-process only: do not listen at all */
    /* Real seconds a connection may take to deliver a request (headers and
     * body), counted from its accept or its previous answer, so also how long
     * an idle keep-alive connection stays; and how long an answer may stall
     * unread. Watches and delayed requests are exempt. 0 = 60; < 0 = never. */
    int conn_timeout_s;

    /* Watch history (the events a watch can resume from). Older events are
     * compacted away automatically; a resume from before them gets 410. */
    size_t history_max_events;  /* 0 = 100,000 */
    int64_t history_max_age_ms; /* 0 = no age limit */
    /* Events a watch may have queued but unsent before it is closed as too
     * slow (the client then resumes from its last resourceVersion). */
    size_t watch_queue_len;       /* 0 = 1024 */
    int64_t bookmark_interval_ms; /* 0 = 60,000, as the real server */
    /* Deterministic runs: every new watch starts held (see fakeapi_watch_hold). */
    bool hold_new_watches;
    /* Deterministic runs: a request a delay fault holds back is answered
     * only when fakeapi_request_release() is called for it, not by the
     * server at its time. on_held is told its id and the time it is due
     * (server clock), on a server thread, while its client waits for the
     * answer. fakeapi_hold_delays(srv, false) ends this and answers every
     * held request at once. NULL = delays end at their time. */
    void (*on_held)(void *ud, uint64_t id, int64_t due_ns);
    void *on_held_ud;
    /* Deterministic runs: garbage collection and namespace deletion run on the
     * writing request's thread before it answers, not in the background. */
    bool sync_gc;
    /* The trace (fakeapi_trace_open) reaches its file when a 64 KiB buffer
     * fills and when it closes, not line by line: for runs whose trace is
     * read only once it is closed (scenarios). */
    bool trace_buffered;
    /* libmicrohttpd's event-loop threads; 0 = one per core (2 to 8). A
     * scenario run, which has one request in flight at a time, takes 1:
     * one thread fewer to start and stop, and no two threads woken for one
     * new connection. */
    unsigned http_threads;
    /* Serve https with a CA, server and client certificate made at start
     * (ECDSA, valid a year from the server's clock): the URL becomes
     * https://HOST:PORT; fakeapi_tls_ca_pem() and the client certificate
     * getters give what a kubeconfig needs. */
    bool tls;
    /* With tls: close every connection whose client did not present a
     * certificate signed by that CA (no HTTP answer: a transport error). */
    bool tls_require_client_cert;
} fakeapi_options;

/*
 * Start a server. On success returns 0 and a new server in *out (stop it with
 * fakeapi_stop). Namespaces default, kube-system and kube-public exist once
 * it returns. With a db_path that already holds a store, every object is
 * kept and the resourceVersion continues from where it was.
 * Errors: FAKEAPI_ERR_LISTEN, FAKEAPI_ERR_STORAGE, FAKEAPI_ERR_NOMEM.
 */
int fakeapi_start(const fakeapi_options *opts, fakeapi_server **out);

/*
 * Stop serving, end open watches, wait for every server thread, close the
 * database and free the server. NULL does nothing. One in-memory store (no
 * db_path) is kept by the process as the stop left it, and the next start
 * without a db_path empties and reuses it: a run that stops its server
 * does not pay for walking the whole store, and the next one not for
 * growing a new one.
 */
void fakeapi_stop(fakeapi_server *srv);

/* "http://127.0.0.1:PORT", or https with opts.tls (borrowed; valid until
 * fakeapi_stop). "" if no_http. */
const char *fakeapi_url(const fakeapi_server *srv);

/* The port listened on (0 if no_http). */
uint16_t fakeapi_port(const fakeapi_server *srv);

/*
 * With opts.tls, the PEM text of the generated CA certificate, and of the
 * client certificate (CN "fakeapi-admin", O "system:masters") and its
 * PKCS#8 key; borrowed, valid until fakeapi_stop. NULL without tls.
 */
const char *fakeapi_tls_ca_pem(const fakeapi_server *srv);
const char *fakeapi_tls_client_cert_pem(const fakeapi_server *srv);
const char *fakeapi_tls_client_key_pem(const fakeapi_server *srv);

/* The store's current revision: the resourceVersion of the latest write. */
uint64_t fakeapi_revision(fakeapi_server *srv);

/* Wake every wait so that it re-reads the clock (see fakeapi_clock). */
void fakeapi_clock_advanced(fakeapi_server *srv);

/*
 * Send one request in-process, as an HTTP client would (method, path with
 * an optional query, percent-encoded as on the wire and decoded as the
 * front end decodes it, content type, body), without HTTP, faults, trace
 * or metrics (fakeapi_exchange has them). *status gets the HTTP status;
 * *out (if non-NULL) the parsed answer, a new reference. Returns 0
 * whatever the status.
 */
int fakeapi_request(fakeapi_server *srv, const char *method, const char *path,
                    const char *content_type, const char *body, int *status, json_t **out);

/*
 * In-process exchanges: a request served on the caller's thread exactly as
 * the HTTP front end serves it (the same handler, fault rules, trace lines,
 * metrics and audit record, the same answer bytes and watch stream bytes),
 * for a client in the same process that skips sockets (docs/fakeapi.md,
 * "In-process requests"). Only the transport differs: no connection limit,
 * no Host/Origin checks, and the audit record has no source address.
 */

/* One request, as an HTTP client would send it. Strings are borrowed for
 * the call. */
typedef struct fakeapi_exchange_req {
    const char *method;       /* "GET", "POST", ... */
    const char *target;       /* path and optional query, percent-encoded as on the wire */
    const char *content_type; /* of body, or NULL */
    const char *accept;       /* or NULL */
    const char *user_agent;   /* or NULL: the client identity faults and traces use */
    const char *token;        /* bearer token, or NULL */
    const char *body;         /* may be NULL */
    size_t body_len;
} fakeapi_exchange_req;

/* An accepted watch's stream of bytes (fakeapi_stream_read). */
typedef struct fakeapi_stream fakeapi_stream;

typedef struct fakeapi_exchange_resp {
    int status;     /* 0: the connection was dropped unanswered (a drop or lose-response
                     * fault, fakeapi_request_drop) */
    bool truncated; /* a truncate fault: body holds what was sent before the connection ended */
    char *body;     /* malloc'ed; NULL/0 for a stream */
    size_t body_len;
    char content_type[64];  /* "" = application/json */
    int retry_after;        /* seconds, 0 = none */
    char *warnings;         /* malloc'ed: each warning text ending in '\n', or NULL */
    fakeapi_stream *stream; /* an accepted watch: read it, then free it */
    bool closes;            /* over HTTP the connection would end after this answer
                             * ("Connection: close": a refused target or media type,
                             * a delayed answer, a watch, a truncated answer) */
} fakeapi_exchange_resp;

/*
 * Serve req on the calling thread; *resp is overwritten (free it with
 * fakeapi_exchange_resp_free). A delay fault blocks the caller until its
 * time on the server's clock (a virtual clock's driver moves it and calls
 * fakeapi_clock_advanced). With opts.on_held set the delay is held instead:
 * on_held is called on this thread, and the call blocks until
 * fakeapi_request_release (then it is answered) or fakeapi_request_drop
 * (status 0, nothing applied) from another thread. Returns 0 whatever the
 * status, or FAKEAPI_ERR_INVALID (a NULL argument, method or target) or
 * FAKEAPI_ERR_NOMEM. Any thread, many at once; not after fakeapi_stop has
 * begun (calls in progress then, delayed or held ones too, are woken and
 * finish before it returns).
 */
int fakeapi_exchange(fakeapi_server *srv, const fakeapi_exchange_req *req,
                     fakeapi_exchange_resp *resp);
/* Free what resp holds (the stream too, if still set). NULL does nothing. */
void fakeapi_exchange_resp_free(fakeapi_exchange_resp *resp);

/*
 * Read the next bytes of a watch stream into buf (at most max): blocks
 * until there are some (> 0), the stream ended (0: timeoutSeconds, a
 * close fault, fakeapi_close_watches, fakeapi_stop; again 0 on later
 * calls), or it was cancelled (-1). One reader thread at a time.
 */
ssize_t fakeapi_stream_read(fakeapi_stream *s, char *buf, size_t max);
/* The client hangs up, as an HTTP client closing its connection: the
 * watch ends at once (fakeapi_watches no longer lists it) and a blocked or
 * later read returns -1. Any thread, until fakeapi_stream_free. */
void fakeapi_stream_cancel(fakeapi_stream *s);
/* Free the stream, by its reader once done (not while a read or cancel
 * runs). A stream still open is hung up first. Valid before and after
 * fakeapi_stop: fakeapi_stop ends every stream (a blocked read returns 0)
 * and waits for readers inside fakeapi_stream_read to return, never for a
 * free; after it, reads return 0 and the stream only waits to be freed. */
void fakeapi_stream_free(fakeapi_stream *s);

/* The URL path of a kind's collection (name NULL) or of one object, e.g.
 * "/apis/apps/v1/namespaces/default/deployments/web". */
int fakeapi_path(fakeapi_server *srv, const char *api_version, const char *kind, const char *ns,
                 const char *name, char *buf, size_t len, fakeapi_error *err);

/* End every open watch of one client: its User-Agent is client, or client
 * followed by '/' or ' ' and more (its sub-clients; the same identity as a
 * fault rule's agent). The clients see their streams close (a network
 * partition, a restart). Returns how many. */
int fakeapi_close_watches(fakeapi_server *srv, const char *client);

/* Add one rule from JSON and return its id. */
int fakeapi_fault_add_rule_json(fakeapi_server *srv, const char *json, uint64_t *id,
                                fakeapi_error *err);

/* Compact the watch history now: events up to revision (0 = the current
 * one) are dropped; watches, exact lists and continue tokens that need them
 * get 410 Expired. */
int fakeapi_compact(fakeapi_server *srv, uint64_t revision);

/* One open watch, as fakeapi_watches() reports it. */
typedef struct fakeapi_watch_info {
    uint64_t id;           /* stable for the watch's life */
    char resource[128];    /* store key: "apps/deployments", "/pods" */
    char api_version[128]; /* what the watch was asked through: "apps/v1" */
    char kind[64];         /* "Deployment" */
    char ns[64];           /* "" = every namespace or cluster-scoped */
    char client[128];      /* the request's User-Agent */
    size_t pending;        /* events written but not yet delivered */
    bool held;
} fakeapi_watch_info;

/*
 * Snapshot of the open watches: *out is a new array of *n entries (free()
 * it), in the order the watches started.
 */
int fakeapi_watches(fakeapi_server *srv, fakeapi_watch_info **out, size_t *n);
/* The same into a buffer the caller keeps from call to call: *buf (NULL
 * at first) of *cap entries, grown as needed; free() it when done. For a
 * caller that asks at every step: no allocation a call. On failure *buf
 * and *cap stay valid. */
int fakeapi_watches_into(fakeapi_server *srv, fakeapi_watch_info **buf, size_t *cap, size_t *n);

/*
 * Hold a watch's delivery (events keep queueing, nothing is sent) or let it
 * flow again. FAKEAPI_ERR_NOT_FOUND if no such watch.
 */
int fakeapi_watch_hold(fakeapi_server *srv, uint64_t id, bool hold);

/* While held, let n more events through, one line each. */
int fakeapi_watch_release(fakeapi_server *srv, uint64_t id, size_t n);

/* Answer the delayed request held with this id (fakeapi_options.on_held):
 * 0, or FAKEAPI_ERR_NOT_FOUND if no request is held with it. Any thread. */
int fakeapi_request_release(fakeapi_server *srv, uint64_t id);
/* Drop it instead, as a drop fault does: it is never applied, and its
 * connection closes unanswered (a client that crashed while the server held
 * its request must not have it reach the store). 0, or
 * FAKEAPI_ERR_NOT_FOUND. Any thread. */
int fakeapi_request_drop(fakeapi_server *srv, uint64_t id);
/* Hold delayed requests (with on_held set) or stop: every held request is
 * then answered at once, and later delays end at their time. */
void fakeapi_hold_delays(fakeapi_server *srv, bool hold);

/*
 * The earliest time (on the server's clock) something inside the server is
 * waiting for: a watch timeout or bookmark, a fault delay. INT64_MAX if none.
 * A virtual clock's driver jumps there when everything else is idle. Held
 * watches count the end of their stream as one more pending event, released
 * like the others.
 */
int64_t fakeapi_next_deadline(fakeapi_server *srv);

/* Watches closed so far for falling behind past watch_queue_len. */
unsigned long fakeapi_slow_watch_closes(fakeapi_server *srv);

/*
 * Faults. A rule matches requests and, when it fires, acts instead of (or
 * besides) the normal answer. docs/faults.md has the model and examples; the
 * same rules come as JSON through POST /fakeapi/v1/faults and
 * `fakeapi serve --faults FILE`.
 */
typedef enum fakeapi_fault_action {
    FAKEAPI_FAULT_ERROR = 1,     /* answer a Status: status, reason, message, retry_after_s */
    FAKEAPI_FAULT_DELAY,         /* wait delay_ms (server clock) before answering */
    FAKEAPI_FAULT_DROP,          /* close the connection without answering */
    FAKEAPI_FAULT_TRUNCATE,      /* answer with half of the body, then close */
    FAKEAPI_FAULT_LOSE_RESPONSE, /* do the request, then close without answering */
    FAKEAPI_FAULT_COMPACT,       /* compact the history now, then answer normally */
    FAKEAPI_FAULT_STALE,         /* serve reads as of revision, or lag revisions behind */
    FAKEAPI_FAULT_WATCH_CLOSE,   /* watches: end the stream after count events */
    FAKEAPI_FAULT_WATCH_EXPIRE,  /* watches: answer ERROR 410 Expired at once */
    FAKEAPI_FAULT_WITHHOLD,      /* watches: drop events for matching objects */
    FAKEAPI_FAULT_WATCH_DELAY,   /* watches: deliver each event delay_ms late */
} fakeapi_fault_action;

typedef struct fakeapi_fault {
    /* What it matches; NULL means any. */
    const char *verb;        /* get list watch create update patch delete deletecollection */
    const char *subresource; /* "status", "scale"; "" = the main resource only */
    const char *group;       /* "" = core */
    const char *resource;    /* plural, e.g. "pods" */
    const char *ns;
    const char *name;
    const char *client; /* substring of the User-Agent, or the exact bearer token */
    /* One client by its identity: the User-Agent is agent, or agent followed
     * by '/' or ' ' and more (its sub-clients, as "scenario/web-1/pods" of
     * "scenario/web-1"); "scenario/web-1" matches neither "scenario/web-10"
     * nor "scenario/web-1.r2". */
    const char *agent;
    /* When it fires (all zero: on every match). */
    unsigned nth;       /* only on the nth match (1-based) */
    unsigned first;     /* on the first k matches */
    unsigned after;     /* on every match after the first k */
    double probability; /* fire with this probability, from the server's seed */
    /* What it does. */
    fakeapi_fault_action action;
    int status;          /* ERROR: HTTP status (default 500) */
    const char *reason;  /* ERROR: Kubernetes reason (default from status) */
    const char *message; /* ERROR: message (default: "injected fault") */
    int retry_after_s;   /* ERROR: Retry-After (429 defaults to 1) */
    int64_t delay_ms;    /* DELAY, WATCH_DELAY */
    unsigned count;      /* WATCH_CLOSE: events before the close */
    uint64_t revision;   /* STALE: serve as of this revision, or */
    uint64_t lag;        /* STALE: this many revisions behind the store */
} fakeapi_fault;

/*
 * Add a rule (copied). *id (if non-NULL) gets its id. FAKEAPI_ERR_INVALID with
 * a message naming the field for a malformed rule.
 */
int fakeapi_fault_add(fakeapi_server *srv, const fakeapi_fault *rule, uint64_t *id,
                      fakeapi_error *err);
/* Add rules from JSON text (one rule object, or an array of them, in the
 * format of docs/faults.md). */
int fakeapi_fault_add_json(fakeapi_server *srv, const char *json, fakeapi_error *err);
int fakeapi_fault_remove(fakeapi_server *srv, uint64_t id);
void fakeapi_fault_clear(fakeapi_server *srv);
/* How many requests a rule matched and how many times it fired. */
int fakeapi_fault_hits(fakeapi_server *srv, uint64_t id, unsigned long *matched,
                       unsigned long *fired);

/*
 * Trace every request, fired fault and delivered watch event as JSON lines
 * to path (NULL stops tracing). Times come from the server's clock; Secret
 * data and tokens are never written.
 */
int fakeapi_trace_open(fakeapi_server *srv, const char *path, fakeapi_error *err);
/* Trace lines written since the server started, and the real time spent
 * formatting and writing them (for benchmarks). */
void fakeapi_trace_stats(fakeapi_server *srv, unsigned long *lines, int64_t *ns);
/* Write what a buffered trace (trace_buffered) holds to its file now. */
void fakeapi_trace_flush(fakeapi_server *srv);

/*
 * Record every request as an audit.k8s.io/v1 Event, one JSON line each, to
 * path (NULL stops), as kube-apiserver's log backend writes them at level
 * RequestResponse: at ResponseComplete (watches at ResponseStarted, without
 * bodies), with the server's clock; the request's Content-Type in the
 * annotation "kube-harness.dev/content-type". `scenario import audit` reads
 * the file back into a scenario. Requests the server answers in-process
 * (fakeapi_request) are recorded too; the control endpoint is not.
 * Recording costs nothing while it is off.
 */
typedef struct fakeapi_record_options {
    bool secrets;     /* keep Secrets' data and stringData (default: redacted) */
    const char *user; /* the username of requests without a service-account token or
                       * client certificate; NULL = "system:anonymous" */
} fakeapi_record_options;

/* opts may be NULL. FAKEAPI_ERR_IO (message in err) if path cannot be written. */
int fakeapi_record_open(fakeapi_server *srv, const char *path, const fakeapi_record_options *opts,
                        fakeapi_error *err);

/*
 * Apply a manifest, as `kubectl apply` would: YAML or JSON, one or many
 * documents, `kind: List` expanded. Each object is created, or, if it exists,
 * merged into the stored one (a merge patch; status is left alone). Namespaced
 * objects without a namespace go to "default". Documents are applied in order;
 * the first failure stops and is returned (earlier documents stay applied).
 */
int fakeapi_apply(fakeapi_server *srv, const char *text, size_t len, fakeapi_error *err);

/* fakeapi_apply the contents of a file. */
int fakeapi_apply_file(fakeapi_server *srv, const char *path, fakeapi_error *err);

/*
 * Get one object by apiVersion ("v1", "apps/v1", "example.com/v1"), kind,
 * namespace (NULL or "" for cluster-scoped kinds) and name. On success
 * *out is a new reference. FAKEAPI_ERR_NOT_FOUND if there is no such kind or
 * object.
 */
int fakeapi_get(fakeapi_server *srv, const char *api_version, const char *kind, const char *ns,
                const char *name, json_t **out, fakeapi_error *err);

/*
 * List objects of a kind, sorted by namespace then name: ns NULL means every
 * namespace; label_selector may be NULL. On success *out is a new JSON array
 * of the objects.
 */
int fakeapi_list(fakeapi_server *srv, const char *api_version, const char *kind, const char *ns,
                 const char *label_selector, json_t **out, fakeapi_error *err);

/*
 * The same objects as fakeapi_list, in the same order and version, read
 * straight from the store rather than through a request: no list text is
 * written and parsed back, and no request is counted. Errors are
 * fakeapi_list's own (what it refuses goes through the request).
 */
int fakeapi_read_list(fakeapi_server *srv, const char *api_version, const char *kind,
                      const char *ns, const char *label_selector, json_t **out,
                      fakeapi_error *err);

/*
 * The number of objects fakeapi_list (and fakeapi_read_list) would give, in
 * *count: read from the store without parsing the objects. Errors are
 * fakeapi_list's own.
 */
int fakeapi_read_count(fakeapi_server *srv, const char *api_version, const char *kind,
                       const char *ns, const char *label_selector, size_t *count,
                       fakeapi_error *err);

/*
 * Delete one object as a client's DELETE with default options would
 * (background propagation; finalizers only set deletionTimestamp).
 */
int fakeapi_delete(fakeapi_server *srv, const char *api_version, const char *kind, const char *ns,
                   const char *name, fakeapi_error *err);

/* How fakeapi_patch reads the patch (the Content-Type a client would send). */
typedef enum fakeapi_patch_type {
    FAKEAPI_PATCH_MERGE = 0, /* application/merge-patch+json (RFC 7386) */
    FAKEAPI_PATCH_JSON,      /* application/json-patch+json (RFC 6902) */
    FAKEAPI_PATCH_STRATEGIC, /* application/strategic-merge-patch+json */
    FAKEAPI_PATCH_APPLY,     /* application/apply-patch+yaml: server-side apply; needs
                              * field_manager */
} fakeapi_patch_type;

typedef struct fakeapi_patch_options {
    const char *subresource;   /* "status", "scale", or NULL for the object */
    const char *field_manager; /* NULL = none (required by APPLY) */
    bool force;                /* APPLY: take over conflicting fields */
} fakeapi_patch_options;

/*
 * Patch one object as a client's PATCH would: patch is the body (JSON text;
 * YAML or JSON for APPLY), borrowed. opts may be NULL. On success *out (if
 * non-NULL) is a new reference to the object as stored. Errors as a client
 * sees them: FAKEAPI_ERR_NOT_FOUND, FAKEAPI_ERR_CONFLICT (an apply conflict:
 * the fields in err's message), FAKEAPI_ERR_INVALID (a malformed patch, or
 * one that leaves an invalid object, which is not stored), and the message
 * and reason in err.
 */
int fakeapi_patch(fakeapi_server *srv, const char *api_version, const char *kind, const char *ns,
                  const char *name, fakeapi_patch_type type, const char *patch,
                  const fakeapi_patch_options *opts, json_t **out, fakeapi_error *err);

/*
 * Every stored object of every kind (each kind once, in the version it is
 * stored in; apiVersion and kind set on each), grouped by kind in the
 * registry's order, then sorted by namespace and name: the whole cluster
 * state, e.g. for comparing two runs. Not traced. On success *out is a new
 * JSON array.
 */
int fakeapi_objects(fakeapi_server *srv, json_t **out, fakeapi_error *err);

/*
 * Custom resource schemas, without a server: what a create or update of a
 * custom resource does with its body against its version's
 * openAPIV3Schema (a CustomResourceDefinition's
 * spec.versions[].schema.openAPIV3Schema), by the same code the server
 * runs. The supported keywords: docs/fakeapi.md, "Custom resource
 * schemas". Reentrant; the schema is only read.
 */

/*
 * The stored form of obj, in place: fields the schema does not declare
 * pruned (unless x-kubernetes-preserve-unknown-fields), nulls it neither
 * allows (nullable) nor defaults pruned, then defaults applied. 0, or
 * FAKEAPI_ERR_INVALID (obj untouched) if schema is not a JSON object or
 * obj is NULL.
 */
int fakeapi_schema_store(const json_t *schema, json_t *obj);

/*
 * Validate obj (any JSON value; the stored form, see fakeapi_schema_store)
 * against schema; at the root, apiVersion, kind and metadata are not
 * checked. 0 if valid. FAKEAPI_ERR_INVALID if not, with, when causes_out is
 * non-NULL, *causes_out a new JSON array of the causes the server's 422
 * Status carries in details.causes, e.g.
 *   {"reason":"FieldValueRequired","message":"Required value","field":"spec.size"}
 * FAKEAPI_ERR_INVALID with *causes_out NULL if schema is not a JSON object
 * or obj is NULL; FAKEAPI_ERR_NOMEM. obj is not modified.
 */
int fakeapi_schema_validate(const json_t *schema, const json_t *obj, json_t **causes_out);

/* fakeapi_schema_store, then fakeapi_schema_validate: the whole write. */
int fakeapi_schema_admit(const json_t *schema, json_t *obj, json_t **causes_out);

/*
 * Does s match pattern, a schema's "pattern" (RE2 spelling, searched, not
 * anchored), as validation matches it? 1 yes, 0 no; FAKEAPI_ERR_INVALID if
 * the pattern does not compile or an argument is NULL.
 */
int fakeapi_schema_pattern_match(const char *pattern, const char *s);

#ifdef __cplusplus
}
#endif

#endif
