/*
 * exchange.h - the steps of serving one request that do not depend on how
 * it arrived: the HTTP front end (front.c, serve) and the in-process
 * exchange (inproc.c, fakeapi_exchange) both run a request through these,
 * in this order, so that the two answer alike, trace alike and count alike:
 *
 *   fakeapi__exchange_target     the target split into path and query
 *   fakeapi__exchange_media_ok   the body's media type (415)
 *   fakeapi__exchange_classify   route and verb (fault matching, trace, metrics)
 *   fakeapi__exchange_choose     fault rules drawn, early ones applied
 *   fakeapi__exchange_delay_arm  (a delay fault) the sleeper armed, on_held told
 *   fakeapi__exchange_pre        injected errors and drops
 *   fakeapi__handle              (the caller: in place, or on a thread)
 *   fakeapi__exchange_finish     metrics, the trace line, the audit record
 *
 * What is left to the caller is the transport: reading the request, waiting
 * out a delay, sending (or not sending, or half sending) the answer.
 *
 * Threads: any; the functions keep no state of their own.
 */
#ifndef FAKEAPI_EXCHANGE_H
#define FAKEAPI_EXCHANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "fault.h"
#include "http.h"
#include "record.h"
#include "router.h"
#include "server_int.h"
#include "waker.h"

/* One request on its way. The caller fills req (without plan); the steps
 * fill the rest. ri points into rt and req: do not copy the struct. */
typedef struct fakeapi__exchange {
    fakeapi__req req;
    fakeapi__route rt;
    fakeapi__reqinfo ri;
    fakeapi__fault_plan plan;
    bool answer; /* false: the connection is dropped unanswered (set by _pre) */
} fakeapi__exchange;

/* Split a raw target (fakeapi__url_split) into *path (malloc'ed) and *query
 * (new reference): true; or false with resp filled with the Status the
 * server answers a target it cannot read (404 a path no name can have,
 * 400 a malformed escape or query, 500 out of memory). */
bool fakeapi__exchange_target(const char *target, char **path, json_t **query, fakeapi__resp *resp);

/* A body over the server's limit: resp filled with 413. */
void fakeapi__exchange_too_large(fakeapi_server *srv, fakeapi__resp *resp);

/* Is the body in a media type the server reads for this method and path?
 * false with resp filled with 415. browser: the request came with an
 * Origin header. */
bool fakeapi__exchange_media_ok(const char *path, const char *method, const char *ct, bool browser,
                                size_t body_len, fakeapi__resp *resp);

/* Route and classify ex->req. */
void fakeapi__exchange_classify(fakeapi__exchange *ex);

/* The control endpoint and /metrics: never faulted, counted by the
 * connection limit, or recorded. */
bool fakeapi__exchange_unfaulted(const fakeapi__exchange *ex);

/* Draw the fault rules into ex->plan and apply the early ones (trace
 * "fired" lines, compaction). True when the request is to be delayed
 * (ex->plan.delay_ns, the server not stopping): the caller then parks it
 * (fakeapi__exchange_delay_arm) and carries on with the same plan. */
bool fakeapi__exchange_choose(fakeapi_server *srv, fakeapi__exchange *ex);

/* Arm s (set up by the caller with its connection) for a delay of plan's
 * length from now, held when the server holds delays: on_held is then
 * called here, on the caller's thread, once a release can find it. The
 * connection has been suspended when this returns. */
void fakeapi__exchange_delay_arm(fakeapi_server *srv, fakeapi__sleeper *s,
                                 const fakeapi__fault_plan *plan);

/* Apply the plan's terminal faults before the handler: sets ex->answer and
 * ex->req.plan; an injected error fills resp (status then set: the handler
 * is not to run). */
void fakeapi__exchange_pre(fakeapi__exchange *ex, fakeapi__resp *resp);

/* After the handler: metrics, the trace line and (unless unfaulted) the
 * audit record, whose info the caller gives (target, received_ns, and what
 * it knows of the client). */
void fakeapi__exchange_finish(fakeapi_server *srv, const fakeapi__exchange *ex,
                              const fakeapi__resp *resp, const fakeapi__record_info *info);

#endif
