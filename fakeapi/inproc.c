/*
 * inproc.c - in-process exchanges (fakeapi.h, fakeapi_exchange): a request
 * served on the caller's thread through the same steps the HTTP front end
 * takes (exchange.h), and the watch streams its caller reads.
 *
 * DESIGN
 *  - A caller that has to wait (a delayed request; a stream reader with
 *    nothing to read) is, to the waker, a connection of its own kind: its
 *    sleeper's functions (park_ops) mark it parked (suspend) and clear the
 *    mark and signal its condition variable (resume); the caller waits on
 *    that variable while parked. So a moved virtual clock, a release, a
 *    publish or a close wakes it exactly as they resume an HTTP connection.
 *  - Exactly one party resumes an armed sleeper (waker.h). A reader leaves
 *    fakeapi_stream_read only once resumed: woken by a cancel or a stop
 *    instead, it disarms its sleeper itself (fakeapi__watch_unpark) and
 *    waits for the resume still owed to it. So no resume reaches a stream
 *    that has gone, and a stream out of fakeapi_stream_read has no sleeper
 *    armed, which lets a cancel or a stop free its watch there and then.
 *  - fakeapi_stop (fakeapi__inproc_stop) waits for the calls in progress
 *    (srv->inproc_calls; the waker has stopped, so delays are over), then
 *    under the set's lock ends every open stream: marks it detached, wakes
 *    its reader, waits until no read or cancel is inside it, and frees its
 *    watch. A stream then only holds a reference to the set, so freeing it
 *    later touches nothing of the server.
 *  - Locks: the set's (set->mu), then a stream's (s->park.mu). A stream's
 *    lock is innermost: resume takes it under a watch's lock (a publisher's
 *    poke), so no watch or waker function is called while holding it.
 */
#include "inproc.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exchange.h"
#include "waker.h"
#include "watch.h"

/* A waiting caller: the waker's connection for it. */
typedef struct park {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool parked;
} park;

static void park_init(park *p)
{
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->parked = false;
}

static void park_deinit(park *p)
{
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
}

static void park_suspend(void *conn)
{
    park *p = conn;
    pthread_mutex_lock(&p->mu);
    p->parked = true;
    pthread_mutex_unlock(&p->mu);
}

static void park_resume(void *conn)
{
    park *p = conn;
    pthread_mutex_lock(&p->mu);
    p->parked = false;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static const fakeapi__conn_ops park_ops = {park_suspend, park_resume};

/* The open streams of one server; referenced by the server until it stops
 * and by every stream until it is freed. */
struct fakeapi__inproc {
    pthread_mutex_t mu;
    fakeapi_stream *head; /* open streams, under mu */
    bool closed;          /* the server stopped: no stream is linked any more */
    atomic_int refs;
};

struct fakeapi_stream {
    park park; /* its mutex guards the fields below but set links */
    struct fakeapi__inproc *set;
    fakeapi_stream *prev, *next; /* under set->mu */
    bool linked;                 /* under set->mu */
    struct fakeapi__watch *w;    /* NULL once freed */
    bool busy;                   /* a read, or a cancel freeing w, is inside */
    bool cancelled;              /* the client hung up */
    bool detached;               /* the server stopped */
};

struct fakeapi__inproc *fakeapi__inproc_new(void)
{
    struct fakeapi__inproc *set = calloc(1, sizeof *set);
    if (!set)
        return NULL;
    pthread_mutex_init(&set->mu, NULL);
    atomic_init(&set->refs, 1);
    return set;
}

static void set_unref(struct fakeapi__inproc *set)
{
    if (atomic_fetch_sub(&set->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&set->mu);
    free(set);
}

static void unlink_locked(struct fakeapi__inproc *set, fakeapi_stream *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        set->head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
    s->linked = false;
}

void fakeapi__inproc_stop(fakeapi_server *srv)
{
    while (atomic_load(&srv->inproc_calls) > 0)
        usleep(1000);
    struct fakeapi__inproc *set = srv->inproc;
    if (!set)
        return;
    pthread_mutex_lock(&set->mu);
    set->closed = true;
    while (set->head) {
        fakeapi_stream *s = set->head;
        pthread_mutex_lock(&s->park.mu);
        s->detached = true;
        pthread_cond_broadcast(&s->park.cv);
        while (s->busy)
            pthread_cond_wait(&s->park.cv, &s->park.mu);
        struct fakeapi__watch *w = s->w;
        s->w = NULL;
        pthread_mutex_unlock(&s->park.mu);
        fakeapi__watch_free(w);
        unlink_locked(set, s);
    }
    pthread_mutex_unlock(&set->mu);
    srv->inproc = NULL;
    set_unref(set);
}

/* A stream for an accepted watch (taken over, freed on failure). */
static fakeapi_stream *stream_open(fakeapi_server *srv, struct fakeapi__watch *w)
{
    fakeapi_stream *s = calloc(1, sizeof *s);
    if (!s) {
        fakeapi__watch_free(w);
        return NULL;
    }
    park_init(&s->park);
    s->set = srv->inproc;
    atomic_fetch_add(&s->set->refs, 1);
    s->w = w;
    fakeapi__watch_attach(w, &s->park, &park_ops, -1);
    pthread_mutex_lock(&s->set->mu);
    if (!s->set->closed) {
        s->next = s->set->head;
        if (s->next)
            s->next->prev = s;
        s->set->head = s;
        s->linked = true;
    }
    pthread_mutex_unlock(&s->set->mu);
    return s;
}

ssize_t fakeapi_stream_read(fakeapi_stream *s, char *buf, size_t max)
{
    if (!s || !buf || !max) {
        errno = EINVAL;
        return -1;
    }
    pthread_mutex_lock(&s->park.mu);
    while (s->busy) /* a cancel freeing the watch */
        pthread_cond_wait(&s->park.cv, &s->park.mu);
    s->busy = true;
    ssize_t n;
    for (;;) {
        if (s->cancelled) {
            n = FAKEAPI__WATCH_GONE;
            break;
        }
        if (s->detached || !s->w) {
            n = FAKEAPI__WATCH_END;
            break;
        }
        struct fakeapi__watch *w = s->w;
        pthread_mutex_unlock(&s->park.mu);
        n = fakeapi__watch_read(w, buf, max);
        pthread_mutex_lock(&s->park.mu);
        if (n != 0)
            break;
        /* Nothing yet, and parked (or already resumed). */
        while (s->park.parked && !s->cancelled && !s->detached)
            pthread_cond_wait(&s->park.cv, &s->park.mu);
        if (s->park.parked) {
            /* Woken by a cancel or a stop: take the wake-up back. */
            pthread_mutex_unlock(&s->park.mu);
            fakeapi__watch_unpark(w);
            pthread_mutex_lock(&s->park.mu);
            while (s->park.parked)
                pthread_cond_wait(&s->park.cv, &s->park.mu);
        }
    }
    if (n < 0 && s->w) {
        /* The stream ended: the watch goes, as when its connection ends. */
        struct fakeapi__watch *w = s->w;
        s->w = NULL;
        pthread_mutex_unlock(&s->park.mu);
        fakeapi__watch_free(w);
        pthread_mutex_lock(&s->park.mu);
    }
    s->busy = false;
    pthread_cond_broadcast(&s->park.cv);
    pthread_mutex_unlock(&s->park.mu);
    return n == FAKEAPI__WATCH_END ? 0 : n < 0 ? -1 : n;
}

void fakeapi_stream_cancel(fakeapi_stream *s)
{
    if (!s)
        return;
    struct fakeapi__watch *w = NULL;
    pthread_mutex_lock(&s->park.mu);
    s->cancelled = true;
    if (s->w) {
        fakeapi__watch_hang_up(s->w); /* unlisted from now on */
        if (!s->busy) {
            /* No reader inside: nothing armed, the watch goes now. */
            w = s->w;
            s->w = NULL;
            s->busy = true;
        }
    }
    pthread_cond_broadcast(&s->park.cv);
    pthread_mutex_unlock(&s->park.mu);
    if (w) {
        fakeapi__watch_free(w);
        pthread_mutex_lock(&s->park.mu);
        s->busy = false;
        pthread_cond_broadcast(&s->park.cv);
        pthread_mutex_unlock(&s->park.mu);
    }
}

void fakeapi_stream_free(fakeapi_stream *s)
{
    if (!s)
        return;
    struct fakeapi__inproc *set = s->set;
    /* Under the set's lock: a server that has not stopped cannot stop
     * meanwhile (its stop takes that lock), so the watch may be freed. */
    pthread_mutex_lock(&set->mu);
    if (s->linked)
        unlink_locked(set, s);
    pthread_mutex_lock(&s->park.mu);
    struct fakeapi__watch *w = s->w;
    s->w = NULL;
    pthread_mutex_unlock(&s->park.mu);
    fakeapi__watch_free(w);
    pthread_mutex_unlock(&set->mu);
    set_unref(set);
    park_deinit(&s->park);
    free(s);
}

/* Park the caller for a delay fault until the waker resumes it: at its
 * time, or, held, at its release or drop (true). */
static bool wait_delay(fakeapi_server *srv, const fakeapi__fault_plan *plan)
{
    park p;
    park_init(&p);
    fakeapi__sleeper sl;
    fakeapi__sleeper_init(srv->waker, &sl, &p, &park_ops, -1);
    fakeapi__exchange_delay_arm(srv, &sl, plan);
    pthread_mutex_lock(&p.mu);
    while (p.parked)
        pthread_cond_wait(&p.cv, &p.mu);
    pthread_mutex_unlock(&p.mu);
    bool dropped = atomic_load(&sl.dropped);
    fakeapi__sleeper_deinit(srv->waker, &sl);
    park_deinit(&p);
    return dropped;
}

/* Hand the answer over as the HTTP front end would send it. */
static int take(fakeapi_server *srv, fakeapi__resp *resp, bool truncate, fakeapi_exchange_resp *out)
{
    out->status = resp->status;
    if (truncate && !resp->watch) {
        /* Half the body, then the connection ends: no headers but the type. */
        out->truncated = true;
        out->closes = true;
        out->body = resp->body;
        out->body_len = resp->body_len / 2;
        resp->body = NULL;
        return 0;
    }
    snprintf(out->content_type, sizeof out->content_type, "%s",
             resp->content_type ? resp->content_type : "");
    out->retry_after = resp->retry_after > 0 ? resp->retry_after : 0;
    out->warnings = resp->warnings;
    resp->warnings = NULL;
    if (resp->watch) {
        out->closes = true;
        out->stream = stream_open(srv, resp->watch);
        resp->watch = NULL;
        return out->stream ? 0 : FAKEAPI_ERR_NOMEM;
    }
    out->body = resp->body;
    out->body_len = resp->body ? resp->body_len : 0;
    resp->body = NULL;
    return 0;
}

int fakeapi_exchange(fakeapi_server *srv, const fakeapi_exchange_req *in,
                     fakeapi_exchange_resp *out)
{
    if (!out)
        return FAKEAPI_ERR_INVALID;
    memset(out, 0, sizeof *out);
    if (!srv || !in || !in->method || !in->target || (!in->body && in->body_len))
        return FAKEAPI_ERR_INVALID;
    atomic_fetch_add(&srv->inproc_calls, 1);
    int rc = FAKEAPI_ERR_NOMEM;
    int64_t received = fakeapi__recording(srv) ? fakeapi__srv_now(srv) : 0;
    fakeapi__resp resp = {0};
    fakeapi__exchange ex = {0};
    char *path = NULL;
    json_t *query = NULL;
    /* A body as the front end keeps one: NUL-terminated. */
    char *body = malloc(in->body_len + 1);
    if (!body)
        goto out;
    if (in->body_len)
        memcpy(body, in->body, in->body_len);
    body[in->body_len] = '\0';
    /* What the front end refuses before a request runs: not traced. */
    if (!fakeapi__exchange_target(in->target, &path, &query, &resp)) {
        out->closes = true; /* refused at the door, as the front end does */
        goto answer;
    }
    if (in->body_len > srv->max_body) {
        fakeapi__exchange_too_large(srv, &resp);
        goto answer;
    }
    if (!fakeapi__exchange_media_ok(path, in->method, in->content_type, false, in->body_len,
                                    &resp)) {
        out->closes = true;
        goto answer;
    }
    ex.req = (fakeapi__req){.method = in->method,
                            .path = path,
                            .query = query,
                            .content_type = in->content_type,
                            .accept = in->accept,
                            .user_agent = in->user_agent,
                            .body = body,
                            .body_len = in->body_len,
                            .token = in->token};
    fakeapi__exchange_classify(&ex);
    if (fakeapi__exchange_choose(srv, &ex)) {
        out->closes = true; /* a delayed answer ends its connection */
        if (wait_delay(srv, &ex.plan))
            ex.plan.terminal = FAKEAPI_FAULT_DROP; /* fakeapi_request_drop */
    }
    fakeapi__exchange_pre(&ex, &resp);
    if (ex.answer && !resp.status)
        fakeapi__handle(srv, &ex.req, &resp);
    fakeapi__record_info info = {.target = in->target, .received_ns = received};
    fakeapi__exchange_finish(srv, &ex, &resp, &info);
    if (!ex.answer || ex.plan.terminal == FAKEAPI_FAULT_LOSE_RESPONSE) {
        fakeapi__watch_free(resp.watch); /* closed unanswered */
        resp.watch = NULL;
        rc = 0;
        goto out;
    }
answer:
    rc = take(srv, &resp, ex.plan.terminal == FAKEAPI_FAULT_TRUNCATE, out);
out:
    fakeapi__resp_deinit(&resp);
    free(path);
    json_decref(query);
    free(body);
    atomic_fetch_sub(&srv->inproc_calls, 1);
    return rc;
}

void fakeapi_exchange_resp_free(fakeapi_exchange_resp *resp)
{
    if (!resp)
        return;
    free(resp->body);
    free(resp->warnings);
    fakeapi_stream_free(resp->stream);
    memset(resp, 0, sizeof *resp);
}
