/*
 * server_int.h - the server object shared by the fakeapi modules.
 *
 * DESIGN (threads and locks):
 *  - libmicrohttpd runs a few event-loop threads (front.c); each runs its
 *    connections' requests through fakeapi__handle() to completion. Watches
 *    and delayed requests never block a loop thread: they suspend their
 *    connection, and a writer or the waker's thread (waker.h) resumes it.
 *  - A write that may call an admission webhook runs on a detached thread
 *    of its own (front.c) with its connection suspended; webhooks are
 *    called without the store lock (admission.h). fakeapi_stop waits for
 *    those threads (srv->offloaded) before libmicrohttpd stops.
 *  - fakeapi_exchange (inproc.c) runs a request on its caller's thread
 *    through the same steps (exchange.h); a caller that must wait (a delay,
 *    a watch with nothing to read) parks on a condition variable that the
 *    waker signals as it would resume a connection. fakeapi_stop waits for
 *    those calls (srv->inproc_calls) and ends their streams.
 *  - One background thread (gc.c) runs garbage collection and namespace
 *    deletion when woken after a delete.
 *  - One thread (conns.c) shuts down connections that wait too long for a
 *    request or whose client hung up; its lock is a leaf.
 *  - Locks, in the order they are taken: the store lock (store.h), which
 *    also guards srv->rng; then the hub lock (watch.c); then each watch's own
 *    lock. The registry lock is a leaf, taken alone.
 *  - A write holds the store lock from BEGIN until its events are handed to
 *    the hub, so watches see events in revision order, and a watch that
 *    registers under the store lock sees nothing twice and misses nothing.
 */
#ifndef FAKEAPI_SERVER_INT_H
#define FAKEAPI_SERVER_INT_H

#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "fakeapi/fakeapi.h"
#include "http.h"
#include "registry.h"
#include "rng.h"
#include "router.h"
#include "store.h"
#include "timefmt.h"

struct MHD_Daemon;
typedef struct fakeapi__hub fakeapi__hub;
typedef struct fakeapi__faults fakeapi__faults;
typedef struct fakeapi__metrics fakeapi__metrics;
struct fakeapi__reqinfo;
struct fakeapi__tls_material;
struct fakeapi__openapi_cache;
struct fakeapi__admission;

struct fakeapi_server {
    fakeapi_options opts;
    fakeapi_clock clock;
    bool has_clock;
    char url[96];
    uint16_t port;
    struct MHD_Daemon *mhd;
    /* Where it listens, for the Host check (front.c): the address, the
     * machine's name, and whether the address is loopback or any. */
    char listen_ip[48];
    char hostname[256];
    bool listen_loopback, listen_any;
    struct fakeapi__tls_material *tls; /* opts.tls: certificates (tlscert.h); else NULL */
    fakeapi__store *store;
    fakeapi__registry *reg;
    struct fakeapi__openapi_cache *openapi; /* /openapi/v2 text (openapi.h) */
    fakeapi__hub *hub;
    fakeapi__rng rng; /* under the store lock */
    size_t max_body;
    /* Signs service-account tokens (token.h); set at start, read-only after. */
    unsigned char sa_key[32];

    /* gc.c: the background thread */
    pthread_t gc_thread;
    bool gc_started;
    /* Called after a commit that deleted or finalised something (txn.c):
     * fakeapi__gc_wake, set by fakeapi_start, so that the store layer does
     * not call up into the collector. NULL = nothing to wake. */
    void (*gc_wake)(fakeapi_server *srv);
    pthread_mutex_t gc_mu;
    pthread_cond_t gc_cond;
    bool gc_stop;
    unsigned long gc_pending; /* wake-ups asked for */

    int64_t last_age_check_ns; /* under the store lock: age compaction */

    fakeapi__faults *faults;
    fakeapi__metrics *metrics;
    pthread_mutex_t trace_mu; /* guards trace (trace.c) */
    FILE *trace;
    unsigned long trace_writes; /* lines written (trace_mu) */
    int64_t trace_write_ns;     /* real time spent formatting and writing them (trace_mu) */
    /* record.c: the audit log (fakeapi_record_open). recording is read
     * without the lock, so an unrecorded server does no work per request. */
    pthread_mutex_t record_mu; /* guards record and the options below */
    FILE *record;
    atomic_bool recording;
    bool record_secrets;
    char record_user[256];
    atomic_ulong record_seq;      /* auditIDs */
    struct fakeapi__waker *waker; /* resumes suspended connections (waker.h) */
    struct fakeapi__conns *conns; /* bounds connections waiting for a request (conns.h) */

    atomic_bool stopping;
    atomic_ulong requests;

    /* Admission webhooks (admission.h): the configurations' cache, and a
     * counter txn.c bumps on each commit that wrote a configuration. */
    struct fakeapi__admission *admission;
    atomic_ulong webhooks_gen;
    /* Requests handed to a thread of their own because they may call a
     * webhook (front.c): the front end waits for them before it stops. */
    atomic_int offloaded;
    /* In-process exchanges (inproc.c): the open streams, and the calls in
     * progress, which fakeapi_stop wakes and waits for. */
    struct fakeapi__inproc *inproc;
    atomic_int inproc_calls;
};

/* Handle one API request: fills *resp (status, body, or a watch stream). */
void fakeapi__handle(fakeapi_server *srv, const fakeapi__req *req, fakeapi__resp *resp);

/* The control endpoint /fakeapi/v1/... (control.c). */
void fakeapi__control(fakeapi_server *srv, const fakeapi__req *req, const fakeapi__route *rt,
                      fakeapi__resp *resp);

/*
 * Describe a request for fault matching, metrics and the trace: the verb as
 * Kubernetes names it and the object it addresses. Strings point into rt
 * and req.
 */
void fakeapi__classify(const fakeapi__req *req, const fakeapi__route *rt,
                       struct fakeapi__reqinfo *ri);

/* Nanoseconds from the server's clock. Any thread. */
static inline int64_t fakeapi__srv_now(fakeapi_server *srv)
{
    return fakeapi__now_ns(srv->has_clock ? &srv->clock : NULL);
}

#endif
