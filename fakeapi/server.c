/*
 * server.c - the server object: fakeapi_start/fakeapi_stop, its options and
 * clock, and the public accessors (fakeapi.h). The HTTP front end is
 * front.c; the layers are in fakeapi/README.md.
 *
 * fakeapi_start opens the store, bootstraps it, starts the collector and
 * then the front end; fakeapi_stop ends watches first (hub), then wakes
 * every suspended connection (waker), then waits for in-process calls and
 * ends their streams (inproc.c), then stops the front end
 * (libmicrohttpd joins its threads, then the tracker goes), then the
 * collector, then closes the store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "admission.h"
#include "fault.h"
#include "front.h"
#include "gc.h"
#include "inproc.h"
#include "metrics.h"
#include "openapi.h"
#include "server_int.h"
#include "record.h"
#include "trace.h"
#include "timefmt.h"
#include "tlscert.h"
#include "token.h"
#include "waker.h"
#include "watch.h"

#define DEFAULT_MAX_BODY ((size_t)3 << 20)

static int64_t srv_now_cb(void *srv)
{
    return fakeapi__srv_now(srv);
}

/* Seed from the options, or from the OS when the embedder did not choose. */
static uint64_t pick_seed(uint64_t seed)
{
    if (seed)
        return seed;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        if (fread(&seed, sizeof seed, 1, f) != 1)
            seed = 0;
        fclose(f);
    }
    return seed ? seed : (uint64_t)fakeapi__now_ns(NULL) ^ (uint64_t)getpid();
}

int fakeapi__bootstrap(fakeapi_server *srv);

int fakeapi_start(const fakeapi_options *opts, fakeapi_server **out)
{
    static const fakeapi_options defaults = {0};
    fakeapi_server *srv = calloc(1, sizeof *srv);
    char err[512];
    int rc = FAKEAPI_ERR_NOMEM;
    if (!srv)
        return rc;
    srv->opts = opts ? *opts : defaults;
    if (srv->opts.clock) {
        srv->clock = *srv->opts.clock;
        srv->has_clock = true;
        srv->opts.clock = NULL;
    }
    srv->max_body = srv->opts.max_body_bytes ? srv->opts.max_body_bytes : DEFAULT_MAX_BODY;
    uint64_t seed = pick_seed(srv->opts.seed);
    fakeapi__rng_seed(&srv->rng, seed);
    fakeapi__token_key_init(srv->sa_key, seed);
    pthread_mutex_init(&srv->trace_mu, NULL);
    pthread_mutex_init(&srv->record_mu, NULL);
    srv->reg = fakeapi__registry_new();
    srv->hub = fakeapi__hub_new();
    srv->waker = fakeapi__waker_new(srv_now_cb, srv, fakeapi__front_suspend, fakeapi__front_resume);
    srv->faults = fakeapi__faults_new(seed);
    srv->metrics = fakeapi__metrics_new();
    srv->openapi = fakeapi__openapi_cache_new();
    srv->admission = fakeapi__admission_new();
    srv->inproc = fakeapi__inproc_new();
    if (!srv->reg || !srv->hub || !srv->waker || !srv->faults || !srv->metrics || !srv->openapi ||
        !srv->admission || !srv->inproc)
        goto fail;
    fakeapi__waker_hold(srv->waker, srv->opts.on_held != NULL);
    srv->gc_wake = fakeapi__gc_wake;
    rc = FAKEAPI_ERR_STORAGE;
    if (fakeapi__store_open(srv->opts.db_path, &srv->store, err, sizeof err) < 0 ||
        fakeapi__bootstrap(srv) < 0)
        goto fail;
    rc = FAKEAPI_ERR_INTERNAL;
    if (fakeapi__gc_start(srv) < 0)
        goto fail;
    if (srv->opts.tls && !srv->opts.no_http) {
        rc = FAKEAPI_ERR_NOMEM;
        if (!(srv->tls = calloc(1, sizeof *srv->tls)))
            goto fail;
        rc = fakeapi__tls_generate(fakeapi__srv_now(srv), srv->tls, err, sizeof err);
        if (rc < 0) {
            free(srv->tls);
            srv->tls = NULL;
            goto fail;
        }
    }
    rc = FAKEAPI_ERR_LISTEN;
    if (!srv->opts.no_http && fakeapi__front_start(srv) < 0)
        goto fail;
    *out = srv;
    return 0;
fail:
    fakeapi_stop(srv);
    return rc;
}

void fakeapi_stop(fakeapi_server *srv)
{
    if (!srv)
        return;
    atomic_store(&srv->stopping, true);
    if (srv->hub)
        fakeapi__hub_close_all(srv->hub);
    /* libmicrohttpd must not be stopped with suspended connections: wake
     * every one (fault delays end early) before it stops. */
    fakeapi__waker_stop(srv->waker);
    /* In-process calls (their delays now over) finish, and their open
     * streams end, while the store, hub and waker are still there. */
    fakeapi__inproc_stop(srv);
    fakeapi__front_stop(srv);
    fakeapi__waker_free(srv->waker);
    fakeapi__gc_stop(srv);
    fakeapi__store_close(srv->store);
    fakeapi__hub_free(srv->hub);
    fakeapi__registry_free(srv->reg);
    fakeapi__openapi_cache_free(srv->openapi);
    fakeapi__admission_free(srv->admission);
    fakeapi__faults_free(srv->faults);
    fakeapi__metrics_free(srv->metrics);
    fakeapi__trace_close(srv);
    pthread_mutex_destroy(&srv->trace_mu);
    fakeapi__record_close(srv);
    pthread_mutex_destroy(&srv->record_mu);
    fakeapi__tls_free(srv->tls);
    free(srv->tls);
    free(srv);
}

const char *fakeapi_url(const fakeapi_server *srv)
{
    return srv->url;
}

uint16_t fakeapi_port(const fakeapi_server *srv)
{
    return srv->port;
}

const char *fakeapi_tls_ca_pem(const fakeapi_server *srv)
{
    return srv->tls ? srv->tls->ca_pem : NULL;
}

const char *fakeapi_tls_client_cert_pem(const fakeapi_server *srv)
{
    return srv->tls ? srv->tls->client_cert_pem : NULL;
}

const char *fakeapi_tls_client_key_pem(const fakeapi_server *srv)
{
    return srv->tls ? srv->tls->client_key_pem : NULL;
}

uint64_t fakeapi_revision(fakeapi_server *srv)
{
    return fakeapi__store_rev_locking(srv->store);
}

int fakeapi_compact(fakeapi_server *srv, uint64_t revision)
{
    return fakeapi__store_compact_locking(srv->store, revision) < 0 ? FAKEAPI_ERR_STORAGE : 0;
}

int fakeapi_watches(fakeapi_server *srv, fakeapi_watch_info **out, size_t *n)
{
    int64_t next;
    return fakeapi__hub_list(srv->hub, out, n, &next) < 0 ? FAKEAPI_ERR_NOMEM : 0;
}

int fakeapi_watches_into(fakeapi_server *srv, fakeapi_watch_info **buf, size_t *cap, size_t *n)
{
    int64_t next;
    return fakeapi__hub_list_into(srv->hub, buf, cap, n, &next) < 0 ? FAKEAPI_ERR_NOMEM : 0;
}

int64_t fakeapi_next_deadline(fakeapi_server *srv)
{
    fakeapi_watch_info *w = NULL;
    size_t n = 0;
    int64_t next = INT64_MAX;
    if (fakeapi__hub_list(srv->hub, &w, &n, &next) == 0)
        free(w);
    int64_t delayed = fakeapi__waker_next(srv->waker);
    return delayed < next ? delayed : next;
}

int fakeapi_watch_hold(fakeapi_server *srv, uint64_t id, bool hold)
{
    return fakeapi__hub_control(srv->hub, id, hold ? 1 : 0, 0) < 0 ? FAKEAPI_ERR_NOT_FOUND : 0;
}

int fakeapi_request_release(fakeapi_server *srv, uint64_t id)
{
    return fakeapi__waker_release(srv->waker, id, false) < 0 ? FAKEAPI_ERR_NOT_FOUND : 0;
}

int fakeapi_request_drop(fakeapi_server *srv, uint64_t id)
{
    return fakeapi__waker_release(srv->waker, id, true) < 0 ? FAKEAPI_ERR_NOT_FOUND : 0;
}

void fakeapi_hold_delays(fakeapi_server *srv, bool hold)
{
    fakeapi__waker_hold(srv->waker, hold && srv->opts.on_held);
}

int fakeapi_watch_release(fakeapi_server *srv, uint64_t id, size_t n)
{
    return fakeapi__hub_control(srv->hub, id, -1, n) < 0 ? FAKEAPI_ERR_NOT_FOUND : 0;
}

unsigned long fakeapi_slow_watch_closes(fakeapi_server *srv)
{
    return fakeapi__hub_slow_closed(srv->hub);
}

void fakeapi_clock_advanced(fakeapi_server *srv)
{
    fakeapi__waker_kick(srv->waker); /* timers are due on the new time */
}

static int fault_err(fakeapi_error *err, const char *msg)
{
    if (err) {
        err->code = FAKEAPI_ERR_INVALID;
        err->http_status = 400;
        snprintf(err->reason, sizeof err->reason, "BadRequest");
        snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return FAKEAPI_ERR_INVALID;
}

int fakeapi_fault_add(fakeapi_server *srv, const fakeapi_fault *rule, uint64_t *id,
                      fakeapi_error *err)
{
    char msg[300];
    if (fakeapi__faults_add(srv->faults, rule, id, msg, sizeof msg) < 0)
        return fault_err(err, msg);
    return 0;
}

int fakeapi_fault_add_json(fakeapi_server *srv, const char *text, fakeapi_error *err)
{
    char msg[400];
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (!j) {
        snprintf(msg, sizeof msg, "fault rules: %s (line %d)", jerr.text, jerr.line);
        return fault_err(err, msg);
    }
    int n = fakeapi__faults_add_json(srv->faults, j, msg, sizeof msg);
    json_decref(j);
    return n < 0 ? fault_err(err, msg) : 0;
}

int fakeapi_fault_add_rule_json(fakeapi_server *srv, const char *text, uint64_t *id,
                                fakeapi_error *err)
{
    char msg[400];
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    fakeapi_fault rule;
    int rc = 0;
    if (!j)
        snprintf(msg, sizeof msg, "fault rule: %s (line %d)", jerr.text, jerr.line), rc = -1;
    else if (fakeapi__fault_parse(j, &rule, msg, sizeof msg) < 0 ||
             fakeapi__faults_add(srv->faults, &rule, id, msg, sizeof msg) < 0)
        rc = -1;
    json_decref(j);
    return rc < 0 ? fault_err(err, msg) : 0;
}

int fakeapi_close_watches(fakeapi_server *srv, const char *client)
{
    return fakeapi__hub_close_client(srv->hub, client ? client : "");
}

int fakeapi_fault_remove(fakeapi_server *srv, uint64_t id)
{
    return fakeapi__faults_remove(srv->faults, id) < 0 ? FAKEAPI_ERR_NOT_FOUND : 0;
}

void fakeapi_fault_clear(fakeapi_server *srv)
{
    fakeapi__faults_clear(srv->faults);
}

int fakeapi_fault_hits(fakeapi_server *srv, uint64_t id, unsigned long *matched,
                       unsigned long *fired)
{
    return fakeapi__faults_hits(srv->faults, id, matched, fired) < 0 ? FAKEAPI_ERR_NOT_FOUND : 0;
}

int fakeapi_trace_open(fakeapi_server *srv, const char *path, fakeapi_error *err)
{
    char msg[300];
    if (fakeapi__trace_open(srv, path, msg, sizeof msg) < 0) {
        if (err) {
            err->code = FAKEAPI_ERR_IO;
            err->http_status = 0;
            err->reason[0] = '\0';
            snprintf(err->message, sizeof err->message, "%s", msg);
        }
        return FAKEAPI_ERR_IO;
    }
    return 0;
}
