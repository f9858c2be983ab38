/*
 * watch.c - the watch hub and watch streams (see watch.h for the design).
 *
 * A watch's bytes come from two places: `pending`, text already formatted
 * (the initial state or history replay, bookmarks, the ERROR of a 410), and
 * `q`, a bounded ring of events published since it registered (allocated as
 * it fills, so an idle watch holds a few slots, not the whole bound). The
 * reader drains pending first, then formats as many queued events as fit in
 * one send.
 */
#include "watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "jsonscan.h"
#include "objmeta.h"
#include "selector.h"
#include "snapshot.h"
#include "store.h"
#include "strbuf.h"
#include "accept.h"
#include "convert.h"
#include "table.h"
#include "timefmt.h"
#include "trace.h"
#include "verbs.h"
#include "waker.h"

#define WATCH_QUEUE_CAP 1024
#define WATCH_QUEUE_FIRST 8
#define WATCH_DEFAULT_TIMEOUT_S 1800 /* plus up to the same again of jitter */
#define WATCH_BOOKMARK_MS 60000
#define WATCH_RECHECK_NS 1000000000LL
#define WATCH_BATCH_BYTES 16384
#define WATCH_PENDING_KEEP 65536 /* a drained buffer bigger than this is freed */

struct fakeapi__hub {
    pthread_mutex_t mu;
    struct fakeapi__watch *head;
    size_t count;
    atomic_ullong last_rv; /* every event up to here is in its watches' queues */
    atomic_ulong slow_closed;
    bool closing;
    uint64_t next_id;
};

typedef struct queued {
    fakeapi__event *ev;
    int type; /* as this watch sees it (selector transitions) */
} queued;

struct fakeapi__watch {
    fakeapi_server *srv;
    fakeapi__hub *hub;
    struct fakeapi__watch *prev, *next; /* hub list, under hub->mu */
    bool registered;
    uint64_t id;
    void *conn;          /* the HTTP connection (front.c), NULL until attached */
    fakeapi__sleeper sl; /* armed while the connection is suspended (waker.h) */
    char *client;
    char *key;
    char *ns; /* NULL = every namespace */
    char *kind, *api_version;
    fakeapi__labelsel *lsel;
    fakeapi__fieldsel *fsel;
    bool bookmarks;

    pthread_mutex_t mu; /* guards everything below */
    queued *q;
    size_t head, count, alloc, cap; /* cap: the bound; alloc: slots allocated */
    bool closed;                    /* too slow, or the hub is closing: end after pending */
    uint64_t sent_rv;
    int64_t deadline_ns;
    int64_t next_bookmark_ns;
    fakeapi__strbuf pending;
    size_t pending_off;
    bool ending; /* the final bookmark is out; end when pending drains */
    int64_t bookmark_ns;
    size_t pending_lines;     /* complete lines in pending not yet handed out */
    size_t line_start;        /* offset in pending where the line being sent begins */
    bool sleeping;            /* the connection is suspended: whoever adds output wakes it */
    bool end_sent;            /* the stream's end has gone out (it only waits to be freed) */
    fakeapi__resource *table; /* kubectl asked for Table rows: events carry them */
    bool table_headers_sent;
    bool partial;            /* metadata-only client: events carry PartialObjectMetadata */
    fakeapi__resource *conv; /* served in another version than stored: events converted */
    bool held;               /* deterministic runs: deliver only what is released */
    size_t budget;           /* lines that may pass while held */

    /* Faults that shaped this watch (fault.h). */
    unsigned close_after;   /* end after this many events (0 = never) */
    unsigned events_out;    /* events formatted so far */
    int64_t event_delay_ns; /* deliver each event this late */
    size_t n_withhold;
    struct {
        char ns[64], name[254];
        uint64_t rule;
    } withhold[FAKEAPI__MAX_WITHHOLD];
};

/* There is output for the reader: resume its connection if suspended. Called
 * with w->mu held; an awake reader looks at its queue before it sleeps. */
static void poke(struct fakeapi__watch *w)
{
    if (!w->sleeping)
        return;
    w->sleeping = false;
    fakeapi__waker_wake(w->srv->waker, &w->sl);
}

/* New output (an event, a bookmark, the end): wake the reader only if it
 * may send it now. A held watch with nothing released would wake, find it
 * may send nothing, and sleep again: a wasted switch to its thread for
 * every write a watcher of that kind sees. The release (hub_control) pokes
 * it when it may. Called with w->mu held. */
static void poke_output(struct fakeapi__watch *w)
{
    if (!w->held || w->budget > 0)
        poke(w);
}

/* Room for one more queued event: grow the ring towards its bound. */
static bool queue_room(struct fakeapi__watch *w)
{
    if (w->count < w->alloc)
        return true;
    if (w->alloc >= w->cap)
        return false;
    size_t n = w->alloc ? w->alloc * 2 : WATCH_QUEUE_FIRST;
    if (n > w->cap)
        n = w->cap;
    queued *q = malloc(n * sizeof *q);
    if (!q)
        return false;
    for (size_t i = 0; i < w->count; i++)
        q[i] = w->q[(w->head + i) % w->alloc];
    free(w->q);
    w->q = q;
    w->head = 0;
    w->alloc = n;
    return true;
}

fakeapi__event *fakeapi__event_new(uint64_t rv, int type, const char *key, const char *ns,
                                   const char *name, const char *text, size_t len, json_t *obj,
                                   json_t *prev)
{
    fakeapi__event *ev = calloc(1, sizeof *ev);
    if (!ev)
        return NULL;
    atomic_init(&ev->refs, 1);
    ev->rv = rv;
    ev->type = type;
    ev->key = strdup(key);
    ev->ns = strdup(ns ? ns : "");
    ev->name = strdup(name);
    ev->text = malloc(len + 1);
    if (!ev->key || !ev->ns || !ev->name || !ev->text) {
        fakeapi__event_unref(ev);
        return NULL;
    }
    memcpy(ev->text, text, len);
    ev->text[len] = '\0';
    ev->len = len;
    ev->obj = json_incref(obj);
    ev->prev = json_incref(prev);
    return ev;
}

fakeapi__event *fakeapi__event_ref(fakeapi__event *ev)
{
    atomic_fetch_add(&ev->refs, 1);
    return ev;
}

void fakeapi__event_unref(fakeapi__event *ev)
{
    if (!ev || atomic_fetch_sub(&ev->refs, 1) != 1)
        return;
    free(ev->key);
    free(ev->ns);
    free(ev->name);
    free(ev->text);
    json_decref(ev->obj);
    json_decref(ev->prev);
    free(ev);
}

fakeapi__hub *fakeapi__hub_new(void)
{
    fakeapi__hub *hub = calloc(1, sizeof *hub);
    if (hub)
        pthread_mutex_init(&hub->mu, NULL);
    return hub;
}

static void watch_close_locked(struct fakeapi__watch *w, bool unhold)
{
    pthread_mutex_lock(&w->mu);
    w->closed = true;
    if (unhold)
        w->held = false;
    poke_output(w);
    pthread_mutex_unlock(&w->mu);
}

void fakeapi__hub_close_all(fakeapi__hub *hub)
{
    pthread_mutex_lock(&hub->mu);
    hub->closing = true;
    for (struct fakeapi__watch *w = hub->head; w; w = w->next)
        watch_close_locked(w, true); /* shutting down: held output goes too */
    pthread_mutex_unlock(&hub->mu);
}

void fakeapi__hub_free(fakeapi__hub *hub)
{
    if (!hub)
        return;
    pthread_mutex_destroy(&hub->mu);
    free(hub);
}

size_t fakeapi__hub_watch_count(fakeapi__hub *hub)
{
    pthread_mutex_lock(&hub->mu);
    size_t n = hub->count;
    pthread_mutex_unlock(&hub->mu);
    return n;
}

unsigned long fakeapi__hub_slow_closed(fakeapi__hub *hub)
{
    return atomic_load(&hub->slow_closed);
}

static bool sel_match(const struct fakeapi__watch *w, const json_t *obj)
{
    return fakeapi__labelsel_match(w->lsel,
                                   json_object_get(json_object_get(obj, "metadata"), "labels")) &&
           fakeapi__fieldsel_match(w->fsel, obj);
}

/*
 * The type this watch sees for an event, or 0 to skip it: with selectors an
 * object that starts matching is ADDED and one that stops is DELETED.
 */
static int visible_type(const struct fakeapi__watch *w, int type, const json_t *obj,
                        const json_t *prev)
{
    bool plain = fakeapi__labelsel_empty(w->lsel) && fakeapi__fieldsel_empty(w->fsel);
    if (plain)
        return type;
    bool now = sel_match(w, obj);
    if (type != FAKEAPI__EV_MODIFIED || !prev)
        return now ? type : 0;
    bool before = sel_match(w, prev);
    if (now && before)
        return FAKEAPI__EV_MODIFIED;
    if (now)
        return FAKEAPI__EV_ADDED;
    return before ? FAKEAPI__EV_DELETED : 0;
}

static bool watch_wants(const struct fakeapi__watch *w, const char *key, const char *ns)
{
    return !strcmp(w->key, key) && (!w->ns || !strcmp(w->ns, ns));
}

/* A withhold fault names the objects whose events this watch never gets. */
static uint64_t withheld_by(const struct fakeapi__watch *w, const char *ns, const char *name)
{
    for (size_t i = 0; i < w->n_withhold; i++) {
        if ((!w->withhold[i].ns[0] || !strcmp(w->withhold[i].ns, ns)) &&
            (!w->withhold[i].name[0] || !strcmp(w->withhold[i].name, name)))
            return w->withhold[i].rule;
    }
    return 0;
}

void fakeapi__hub_publish(fakeapi__hub *hub, fakeapi__event *ev)
{
    pthread_mutex_lock(&hub->mu);
    for (struct fakeapi__watch *w = hub->head; w; w = w->next) {
        if (!watch_wants(w, ev->key, ev->ns))
            continue;
        uint64_t rule = withheld_by(w, ev->ns, ev->name);
        if (rule) {
            fakeapi__faults_count_fired(w->srv->faults, rule);
            fakeapi__trace_fault(w->srv,
                                 &(fakeapi__reqinfo){.verb = "watch",
                                                     .sub = "",
                                                     .group = "",
                                                     .resource = ev->key,
                                                     .ns = ev->ns,
                                                     .name = ev->name,
                                                     .user_agent = w->client,
                                                     .token = ""},
                                 rule, "withheld");
            continue;
        }
        int type = visible_type(w, ev->type, ev->obj, ev->prev);
        if (!type)
            continue;
        pthread_mutex_lock(&w->mu);
        if (w->closed || w->ending || w->end_sent) {
            /* already ending: nothing more goes in (the client resumes from
             * the last resourceVersion it saw, on a new watch) */
        } else if (!queue_room(w)) {
            w->closed = true; /* too slow: the client resumes from its last rv */
            atomic_fetch_add(&hub->slow_closed, 1);
        } else {
            /* A delay fault counts from the write; the first delayed watch
             * stamps it (under hub->mu, before any reader can see the event). */
            if (w->event_delay_ns && !ev->ts)
                ev->ts = fakeapi__srv_now(w->srv);
            w->q[(w->head + w->count++) % w->alloc] = (queued){fakeapi__event_ref(ev), type};
        }
        poke_output(w);
        pthread_mutex_unlock(&w->mu);
    }
    atomic_store(&hub->last_rv, ev->rv);
    pthread_mutex_unlock(&hub->mu);
}

static const char *type_name(int type)
{
    switch (type) {
    case FAKEAPI__EV_ADDED:
        return "ADDED";
    case FAKEAPI__EV_MODIFIED:
        return "MODIFIED";
    default:
        return "DELETED";
    }
}

/* An event's object as a one-row Table (kubectl get -w). Column
 * definitions go with the first event only, as the API server does. */
static char *table_text(struct fakeapi__watch *w, const char *obj, size_t len)
{
    json_t *o = json_loadb(obj, len, 0, NULL), *items = json_array();
    if (!o || !items)
        goto fail;
    json_array_append(items, o);
    json_t *t = fakeapi__table_new(w->table, items, fakeapi__meta_str(o, "resourceVersion"), NULL,
                                   fakeapi__srv_now(w->srv));
    if (t && w->table_headers_sent)
        json_object_set_new(t, "columnDefinitions", json_array());
    w->table_headers_sent = true;
    char *text = t ? json_dumps(t, JSON_COMPACT) : NULL;
    json_decref(t);
    json_decref(items);
    json_decref(o);
    return text;
fail:
    json_decref(items);
    json_decref(o);
    return NULL;
}

/* An event's object in the watch's version (HPA read as autoscaling/v1). */
static char *converted_text(const fakeapi__resource *res, const char *obj, size_t len)
{
    json_t *o = json_loadb(obj, len, 0, NULL);
    char *text = o && fakeapi__convert_out(res, o) == 0 ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

/* An event's object as PartialObjectMetadata (metadata-only watches). */
static char *partial_text(const char *obj, size_t len)
{
    json_t *o = json_loadb(obj, len, 0, NULL);
    json_t *p = o ? fakeapi__partial_of(o) : NULL;
    char *text = p ? json_dumps(p, JSON_COMPACT) : NULL;
    json_decref(p);
    json_decref(o);
    return text;
}

static void add_line(struct fakeapi__watch *w, const char *type, const char *obj, size_t len)
{
    fakeapi__strbuf *b = &w->pending;
    if (w->ending)
        return;
    char *conv = w->conv && strcmp(type, "ERROR") ? converted_text(w->conv, obj, len) : NULL;
    if (conv) {
        obj = conv;
        len = strlen(conv);
    }
    char *table = w->table && strcmp(type, "ERROR")     ? table_text(w, obj, len)
                  : w->partial && strcmp(type, "ERROR") ? partial_text(obj, len)
                                                        : NULL;
    if (table) {
        obj = table;
        len = strlen(table);
    }
    w->pending_lines++;
    if (w->close_after && ++w->events_out >= w->close_after)
        w->ending = true; /* a close-after fault: this is the last event */
    fakeapi__strbuf_adds(b, "{\"type\":\"");
    fakeapi__strbuf_adds(b, type);
    fakeapi__strbuf_adds(b, "\",\"object\":");
    fakeapi__strbuf_add(b, obj, len);
    fakeapi__strbuf_add(b, "}\n", 2);
    free(table);
    free(conv);
}

static void add_bookmark(struct fakeapi__watch *w, uint64_t rv, bool initial_end)
{
    w->pending_lines++;
    fakeapi__strbuf_addf(&w->pending,
                         "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s\","
                         "\"metadata\":{\"resourceVersion\":\"%llu\"%s}}}\n",
                         w->partial ? "PartialObjectMetadata" : w->kind,
                         w->partial ? "meta.k8s.io/v1" : w->api_version, (unsigned long long)rv,
                         initial_end ? ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}"
                                     : "");
}

static void watch_destroy(struct fakeapi__watch *w)
{
    for (size_t i = 0; i < w->count; i++)
        fakeapi__event_unref(w->q[(w->head + i) % w->alloc].ev);
    free(w->q);
    free(w->key);
    free(w->ns);
    free(w->kind);
    free(w->api_version);
    fakeapi__labelsel_free(w->lsel);
    fakeapi__fieldsel_free(w->fsel);
    fakeapi__strbuf_deinit(&w->pending);
    fakeapi__resource_unref(w->table);
    fakeapi__resource_unref(w->conv);
    free(w->client);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

void fakeapi__watch_free(struct fakeapi__watch *w)
{
    if (!w)
        return;
    if (w->conn)
        fakeapi__sleeper_deinit(w->srv->waker, &w->sl);
    if (w->registered) {
        fakeapi__hub *hub = w->hub;
        pthread_mutex_lock(&hub->mu);
        if (w->prev)
            w->prev->next = w->next;
        else
            hub->head = w->next;
        if (w->next)
            w->next->prev = w->prev;
        hub->count--;
        pthread_mutex_unlock(&hub->mu);
    }
    watch_destroy(w);
}

/* Called with the store lock held: current objects as ADDED. */
static int initial_visit(void *ud, const char *ns, const char *name, const char *labels,
                         const char *text, size_t len)
{
    (void)ns, (void)name, (void)labels;
    struct fakeapi__watch *w = ud;
    if (!fakeapi__labelsel_empty(w->lsel) || !fakeapi__fieldsel_empty(w->fsel)) {
        json_t *obj = json_loadb(text, len, 0, NULL);
        bool ok = obj && sel_match(w, obj);
        json_decref(obj);
        if (!ok)
            return 0;
    }
    add_line(w, "ADDED", text, len);
    return w->pending.failed ? -1 : w->ending ? 1 : 0;
}

/* Called with the store lock held: history after the client's revision. */
static int history_visit(void *ud, uint64_t rv, int type, const char *key, const char *ns,
                         const char *name, const char *text, const char *prev)
{
    (void)key, (void)name, (void)rv;
    struct fakeapi__watch *w = ud;
    if (w->ns && strcmp(w->ns, ns))
        return 0;
    int vt = type;
    if (!fakeapi__labelsel_empty(w->lsel) || !fakeapi__fieldsel_empty(w->fsel)) {
        json_t *o = json_loads(text, 0, NULL), *p = prev ? json_loads(prev, 0, NULL) : NULL;
        vt = o ? visible_type(w, type, o, p) : 0;
        json_decref(o);
        json_decref(p);
    }
    if (vt && !withheld_by(w, ns, name))
        add_line(w, type_name(vt), text, strlen(text));
    return w->pending.failed ? -1 : w->ending ? 1 : 0;
}

/* Parse the watch's options; answers 400 itself. */
static struct fakeapi__watch *watch_new(fakeapi_server *srv, const fakeapi__req *req,
                                        const fakeapi__resource *res, const char *ns,
                                        fakeapi__resp *resp)
{
    struct fakeapi__watch *w = calloc(1, sizeof *w);
    char err[512];
    if (!w)
        return NULL;
    pthread_mutex_init(&w->mu, NULL);
    w->srv = srv;
    w->hub = srv->hub;
    w->cap = srv->opts.watch_queue_len ? srv->opts.watch_queue_len : WATCH_QUEUE_CAP;
    w->bookmark_ns =
        (srv->opts.bookmark_interval_ms ? srv->opts.bookmark_interval_ms : WATCH_BOOKMARK_MS) *
        (int64_t)1000000;
    w->held = srv->opts.hold_new_watches;
    w->client = strdup(req->user_agent ? req->user_agent : "");
    w->key = strdup(res->store_key);
    w->ns = ns && *ns ? strdup(ns) : NULL;
    w->kind = strdup(res->kind);
    w->api_version = strdup(res->group_version);
    w->bookmarks = fakeapi__q_bool(req, "allowWatchBookmarks");
    fakeapi__as as = fakeapi__accept_pick(req->accept);
    if (as == FAKEAPI__AS_TABLE)
        w->table = fakeapi__resource_ref((fakeapi__resource *)res);
    w->partial = as == FAKEAPI__AS_PARTIAL;
    if (fakeapi__convert_needed(res))
        w->conv = fakeapi__resource_ref((fakeapi__resource *)res);
    if (!w->key || !w->kind || !w->api_version || !w->client) {
        fakeapi__resp_error(resp, 500, "InternalError", NULL, "out of memory");
        goto fail;
    }
    if (fakeapi__labelsel_parse(fakeapi__q(req, "labelSelector"), &w->lsel, err, sizeof err) < 0 ||
        fakeapi__fieldsel_parse(fakeapi__q(req, "fieldSelector"), &w->fsel, err, sizeof err) < 0 ||
        fakeapi__fieldsel_check_res(res, w->fsel, err, sizeof err) < 0) {
        fakeapi__resp_error(resp, 400, "BadRequest", NULL, "%s", err);
        goto fail;
    }
    return w;
fail:
    watch_destroy(w);
    return NULL;
}

/* 200 with one ERROR event carrying a 410 Expired Status, then the end. */
static void expire(struct fakeapi__watch *w, unsigned long long asked, uint64_t oldest)
{
    char msg[128];
    snprintf(msg, sizeof msg, "too old resource version: %llu (%llu)", asked,
             (unsigned long long)oldest);
    json_t *st = fakeapi__status_new(410, "Expired", msg, NULL);
    char *text = json_dumps(st, JSON_COMPACT);
    json_decref(st);
    if (text)
        add_line(w, "ERROR", text, strlen(text));
    free(text);
    w->closed = true;
}

static int64_t default_timeout_ns(fakeapi_server *srv)
{
    /* Jitter as the real server: between the default and twice it. */
    uint64_t jitter = fakeapi__rng_next(&srv->rng) % WATCH_DEFAULT_TIMEOUT_S;
    return (int64_t)(WATCH_DEFAULT_TIMEOUT_S + jitter) * 1000000000;
}

void fakeapi__watch_start(fakeapi_server *srv, const fakeapi__req *req,
                          const fakeapi__resource *res, const char *ns, fakeapi__resp *resp)
{
    struct fakeapi__watch *w = watch_new(srv, req, res, ns, resp);
    if (!w)
        return;
    const char *rvs = fakeapi__q(req, "resourceVersion");
    bool initial_events = fakeapi__q_bool(req, "sendInitialEvents");
    const char *match = fakeapi__q(req, "resourceVersionMatch");
    char *end = NULL;
    unsigned long long rv = rvs && *rvs ? strtoull(rvs, &end, 10) : 0;
    if (end && *end) {
        fakeapi__resp_error(resp, 400, "BadRequest", NULL, "invalid resource version: %s", rvs);
        watch_destroy(w);
        return;
    }
    if (initial_events && (!match || strcmp(match, "NotOlderThan"))) {
        fakeapi__resp_error(resp, 422, "Invalid", NULL,
                            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: "
                            "Forbidden: sendInitialEvents requires setting resourceVersionMatch "
                            "to NotOlderThan");
        watch_destroy(w);
        return;
    }
    long long timeout = fakeapi__q_int(req, "timeoutSeconds", -1);
    const fakeapi__fault_plan *plan = req->plan;
    if (plan) {
        w->close_after = plan->close_after;
        w->event_delay_ns = plan->event_delay_ns;
        w->n_withhold = plan->n_withhold;
        memcpy(w->withhold, plan->withhold, sizeof w->withhold);
    }
    fakeapi__store_lock(srv->store);
    int64_t now_ns = fakeapi__srv_now(srv);
    uint64_t now = fakeapi__store_rev(srv->store);
    uint64_t compacted = fakeapi__store_compacted(srv->store);
    if (timeout > 10LL * 365 * 24 * 3600)
        timeout = 10LL * 365 * 24 * 3600; /* ten years is forever enough, and cannot overflow */
    w->deadline_ns = now_ns + (timeout >= 0 ? timeout * 1000000000 : default_timeout_ns(srv));
    w->next_bookmark_ns = now_ns + w->bookmark_ns;
    int rc = 0;
    uint64_t stale = plan ? fakeapi__stale_rev(srv->store, plan->stale_rv, plan->stale_lag) : 0;
    if (plan && plan->expire) {
        expire(w, rv ? rv : now, now + 1);
    } else if (stale && (initial_events || rv == 0)) {
        /* A stale view: the state of an older revision, then catching up. */
        rc = fakeapi__snapshot_scan(srv->store, w->key, w->ns, stale, NULL, NULL, initial_visit, w);
        if (rc == 0)
            rc = fakeapi__store_history(srv->store, w->key, stale, history_visit, w);
        if (initial_events)
            add_bookmark(w, now, true);
        w->sent_rv = now;
    } else if (initial_events || rv == 0) {
        rc = fakeapi__store_scan(srv->store, w->key, w->ns, NULL, NULL, initial_visit, w);
        if (initial_events)
            add_bookmark(w, now, true);
        w->sent_rv = now;
    } else if (rv < compacted) {
        expire(w, rv, compacted + 1);
    } else {
        rc = fakeapi__store_history(srv->store, w->key, rv, history_visit, w);
        w->sent_rv = now > rv ? now : rv;
    }
    /* An expired watch is registered too, though nothing more goes in: a
     * held one is listed with its ERROR and its end, which a driver
     * releases like any other lines. */
    if (rc == 0) {
        pthread_mutex_lock(&srv->hub->mu);
        w->next = srv->hub->head;
        if (w->next)
            w->next->prev = w;
        srv->hub->head = w;
        srv->hub->count++;
        w->registered = true;
        w->id = ++srv->hub->next_id;
        if (srv->hub->closing)
            w->closed = true;
        pthread_mutex_unlock(&srv->hub->mu);
    }
    fakeapi__store_unlock(srv->store);
    if (rc < 0 || w->pending.failed) {
        fakeapi__watch_free(w);
        fakeapi__resp_error(resp, 500, "InternalError", NULL, "could not start the watch");
        return;
    }
    resp->status = 200;
    resp->watch = w;
}

/* Record a line as it goes to the client (not when it is queued): with held
 * watches that is the moment the driver released it, so traces repeat. The
 * line's members are scanned for (jsonscan.h), or parsed when the scan
 * cannot answer. */
static void trace_line(struct fakeapi__watch *w, const char *line, size_t len)
{
    if (!fakeapi__tracing(w->srv))
        return;
    fakeapi__jscan_want want[4] = {
        {.path = {"object", "metadata", "resourceVersion"}},
        {.path = {"type"}},
        {.path = {"object", "metadata", "namespace"}},
        {.path = {"object", "metadata", "name"}},
    };
    char buf[4][256];
    const char *v[4] = {NULL, NULL, NULL, NULL};
    json_t *ev = NULL;
    bool scanned = fakeapi__json_scan_own(line, len, want, 4) == 0; /* a line of ours */
    for (int i = 0; i < 4 && scanned; i++) {
        if (want[i].found && want[i].len >= sizeof buf[i])
            scanned = false; /* too long to copy here: parse instead */
        else if (want[i].found) {
            memcpy(buf[i], want[i].str, want[i].len);
            buf[i][want[i].len] = '\0';
            v[i] = buf[i];
        }
    }
    if (!scanned) {
        ev = json_loadb(line, len, 0, NULL);
        json_t *meta = json_object_get(json_object_get(ev, "object"), "metadata");
        v[0] = json_string_value(json_object_get(meta, "resourceVersion"));
        v[1] = json_string_value(json_object_get(ev, "type"));
        v[2] = json_string_value(json_object_get(meta, "namespace"));
        v[3] = json_string_value(json_object_get(meta, "name"));
    }
    fakeapi__trace_event(w->srv, w->id, w->client, v[1] ? v[1] : "?", w->key, v[2] ? v[2] : "",
                         v[3] ? v[3] : "", v[0] ? strtoull(v[0], NULL, 10) : 0);
    json_decref(ev);
}

/* Move bytes from pending to buf; while held, at most one released line. */
static size_t drain_pending(struct fakeapi__watch *w, char *buf, size_t max)
{
    size_t avail = w->pending.len - w->pending_off;
    const char *from = w->pending.data + w->pending_off;
    if (w->held) {
        const char *nl = memchr(from, '\n', avail);
        if (nl)
            avail = (size_t)(nl - from) + 1;
    }
    size_t n = avail < max ? avail : max;
    memcpy(buf, from, n);
    for (const char *nl = memchr(from, '\n', n); nl;
         nl = memchr(nl + 1, '\n', n - (size_t)(nl + 1 - from))) {
        size_t end = w->pending_off + (size_t)(nl - from) + 1;
        trace_line(w, w->pending.data + w->line_start, end - w->line_start);
        w->line_start = end;
        w->pending_lines--;
        if (w->held && w->budget)
            w->budget--;
    }
    w->pending_off += n;
    if (w->pending_off == w->pending.len) {
        w->pending.len = 0;
        w->pending_off = 0;
        w->line_start = 0;
        if (w->pending.cap > WATCH_PENDING_KEEP) {
            size_t limit = w->pending.max;
            fakeapi__strbuf_deinit(&w->pending); /* an initial list's worth: give it back */
            w->pending.max = limit;
        }
    }
    return n;
}

/* The timeout and bookmark timers, at the clock's time: true if they added
 * something to send. Called with w->mu held, from the reader and from
 * fakeapi_watches() (so a virtual clock's jump shows at once). */
static bool timers(struct fakeapi__watch *w)
{
    if (w->ending || w->pending.len > w->pending_off || w->count)
        return false;
    int64_t now = fakeapi__srv_now(w->srv);
    uint64_t progress = atomic_load(&w->hub->last_rv);
    if (progress > w->sent_rv)
        w->sent_rv = progress;
    if (now >= w->deadline_ns) {
        if (w->bookmarks)
            add_bookmark(w, w->sent_rv, false);
        w->ending = true;
        return true;
    }
    if (w->bookmarks && now >= w->next_bookmark_ns) {
        add_bookmark(w, w->sent_rv, false);
        w->next_bookmark_ns = now + w->bookmark_ns;
        return true;
    }
    return false;
}

/* Next step of the stream when nothing is pending: queue, bookmark, end. */
static bool refill(struct fakeapi__watch *w)
{
    /* Format every queued event that fits in one send: a busy watch costs one
     * write per batch, not one per event. */
    bool moved = false;
    while (w->count > 0 && w->pending.len < WATCH_BATCH_BYTES && !w->ending) {
        queued item = w->q[w->head];
        if (w->event_delay_ns && fakeapi__srv_now(w->srv) < item.ev->ts + w->event_delay_ns)
            break; /* a delay fault: not yet */
        w->head = (w->head + 1) % w->alloc;
        w->count--;
        add_line(w, type_name(item.type), item.ev->text, item.ev->len);
        w->sent_rv = item.ev->rv;
        fakeapi__event_unref(item.ev);
        moved = true;
    }
    if (moved || w->count > 0)
        return moved;
    /* A held watch's timers fire only when its driver looks
     * (fakeapi_watches), at a point of the driver's choosing: this thread
     * runs freely and would add a bookmark at a racy moment. */
    return w->held ? false : timers(w);
}

/* When a sleeping reader must look again by itself: its timers (none while
 * held: those fire when the driver looks), or a delayed event's time. */
static int64_t wake_time(const struct fakeapi__watch *w)
{
    int64_t until = INT64_MAX;
    if (!w->held) {
        until = w->deadline_ns;
        if (w->bookmarks && w->next_bookmark_ns < until)
            until = w->next_bookmark_ns;
    }
    if (w->count && w->event_delay_ns && w->q[w->head].ev->ts + w->event_delay_ns < until)
        until = w->q[w->head].ev->ts + w->event_delay_ns;
    /* A due timer that cannot fire yet (output is held back) must not make
     * the reader spin: look again a while later, or on a write or release. */
    int64_t now = fakeapi__srv_now(w->srv);
    if (until <= now)
        until = now > INT64_MAX - WATCH_RECHECK_NS ? INT64_MAX : now + WATCH_RECHECK_NS;
    return until;
}

ssize_t fakeapi__watch_read(struct fakeapi__watch *w, char *buf, size_t max)
{
    ssize_t n = 0;
    pthread_mutex_lock(&w->mu);
    w->sleeping = false;
    if (!w->conn || atomic_load(&w->sl.hung_up)) {
        n = FAKEAPI__WATCH_GONE; /* the client hung up: end now, freeing everything */
        goto out;
    }
    for (;;) {
        bool may_send = !w->held || w->budget > 0;
        if (w->pending.len > w->pending_off && may_send) {
            n = (ssize_t)drain_pending(w, buf, max);
            break;
        }
        bool drained = w->pending.len == w->pending_off;
        if (drained && (w->ending || (w->count == 0 && w->closed))) {
            /* A held watch's end is released like an event, so a scheduler
             * sees the stream close at the moment it chooses. */
            if (!w->held || w->budget > 0) {
                if (w->held)
                    w->budget--;
                w->end_sent = true;
                n = FAKEAPI__WATCH_END;
                break;
            }
        } else if (drained && refill(w)) {
            continue;
        }
        /* Nothing to send: suspend the connection until a write, a release,
         * a close, a timer or a hang-up resumes it. */
        w->sl.until = wake_time(w);
        w->sleeping = true;
        fakeapi__waker_arm(w->srv->waker, &w->sl); /* suspends the connection */
        break;
    }
out:
    pthread_mutex_unlock(&w->mu);
    /* The connection still holds its socket: stop watching it now. */
    if (n < 0 && w->conn)
        fakeapi__sleeper_deinit(w->srv->waker, &w->sl);
    return n;
}

void fakeapi__watch_attach(struct fakeapi__watch *w, void *conn, const fakeapi__conn_ops *ops,
                           int fd)
{
    pthread_mutex_lock(&w->mu);
    w->conn = conn;
    fakeapi__sleeper_init(w->srv->waker, &w->sl, conn, ops, fd);
    pthread_mutex_unlock(&w->mu);
}

void fakeapi__watch_hang_up(struct fakeapi__watch *w)
{
    atomic_store(&w->sl.hung_up, true);
}

void fakeapi__watch_unpark(struct fakeapi__watch *w)
{
    fakeapi__waker_wake(w->srv->waker, &w->sl);
}

static struct fakeapi__watch *find_locked(fakeapi__hub *hub, uint64_t id)
{
    for (struct fakeapi__watch *w = hub->head; w; w = w->next)
        if (w->id == id)
            return w;
    return NULL;
}

int fakeapi__hub_control(fakeapi__hub *hub, uint64_t id, int hold, size_t release)
{
    int rc = -1;
    pthread_mutex_lock(&hub->mu);
    struct fakeapi__watch *w = find_locked(hub, id);
    if (w) {
        pthread_mutex_lock(&w->mu);
        /* A stream whose end has gone out sends nothing more: a release
         * there would be a line nobody ever receives. */
        if (!(release > 0 && (w->end_sent || atomic_load(&w->sl.hung_up)))) {
            if (hold >= 0)
                w->held = hold;
            w->budget += release;
            poke(w);
            rc = 0;
        }
        pthread_mutex_unlock(&w->mu);
    }
    pthread_mutex_unlock(&hub->mu);
    return rc;
}

/* Queued events the reader may send now: all of them, or with a delay
 * fault those whose time has come. Called with w->mu held. */
static size_t due_count(const struct fakeapi__watch *w, int64_t now, int64_t *next_due)
{
    if (!w->event_delay_ns)
        return w->count;
    size_t n = 0;
    while (n < w->count && w->q[(w->head + n) % w->alloc].ev->ts + w->event_delay_ns <= now)
        n++;
    if (n < w->count) {
        int64_t t = w->q[(w->head + n) % w->alloc].ev->ts + w->event_delay_ns;
        if (t < *next_due)
            *next_due = t;
    }
    return n;
}

/* snprintf(buf, len, "%s", s) without the formatting: a driver lists the
 * watches at every scheduler step. */
static void copy_cut(char *buf, size_t len, const char *s)
{
    size_t n = strlen(s);
    if (n >= len)
        n = len - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
}

int fakeapi__hub_list(fakeapi__hub *hub, fakeapi_watch_info **out, size_t *n,
                      int64_t *next_deadline)
{
    fakeapi_watch_info *arr = NULL;
    size_t cap = 0;
    if (fakeapi__hub_list_into(hub, &arr, &cap, n, next_deadline) < 0)
        return -1;
    *out = arr;
    return 0;
}

int fakeapi__hub_list_into(fakeapi__hub *hub, fakeapi_watch_info **buf, size_t *cap, size_t *n,
                           int64_t *next_deadline)
{
    *next_deadline = INT64_MAX;
    pthread_mutex_lock(&hub->mu);
    /* A buffer big enough for every watch, the caller's when it is: a new
     * one at every scheduler step was an allocation large enough for
     * malloc to sweep its small free chunks each time. */
    size_t want = hub->count ? hub->count : 1;
    fakeapi_watch_info *arr = *buf;
    if (!arr || *cap < want) {
        arr = realloc(arr, want * sizeof *arr);
        if (arr) {
            *buf = arr;
            *cap = want;
        }
    }
    size_t i = hub->count, skipped = 0;
    if (arr) {
        /* The list is newest first; report oldest first. Every field of
         * an entry is set (its strings up to their NUL). */
        for (struct fakeapi__watch *w = hub->head; w; w = w->next) {
            pthread_mutex_lock(&w->mu);
            /* A stream that has ended (its end went out, or its client hung
             * up) only waits to be freed, on a loop thread at a moment that
             * depends on the machine's load: it is not open any more, and
             * must not show, or a driver's choices would depend on it. */
            if (w->end_sent || atomic_load(&w->sl.hung_up)) {
                pthread_mutex_unlock(&w->mu);
                skipped++;
                continue;
            }
            fakeapi_watch_info *info = &arr[--i];
            info->id = w->id;
            copy_cut(info->resource, sizeof info->resource, w->key);
            copy_cut(info->api_version, sizeof info->api_version, w->api_version);
            copy_cut(info->kind, sizeof info->kind, w->kind);
            copy_cut(info->ns, sizeof info->ns, w->ns ? w->ns : "");
            copy_cut(info->client, sizeof info->client, w->client);
            if (timers(w))
                poke_output(w);
            /* The end of the stream counts until it has gone out; a watch
             * stays listed until its connection is torn down. */
            int64_t now = fakeapi__srv_now(w->srv);
            bool end = w->ending || (w->closed && w->count == 0);
            info->pending = due_count(w, now, next_deadline) + w->pending_lines + (end ? 1 : 0);
            /* Only a live watch's future timers, and a due timer waiting
             * for output to drain fires when it does. */
            if (!w->ending && !w->end_sent) {
                if (w->deadline_ns > now && w->deadline_ns < *next_deadline)
                    *next_deadline = w->deadline_ns;
                if (w->bookmarks && w->next_bookmark_ns > now &&
                    w->next_bookmark_ns < *next_deadline)
                    *next_deadline = w->next_bookmark_ns;
            }
            info->held = w->held;
            pthread_mutex_unlock(&w->mu);
        }
        /* Ended streams left their slots at the front: close the gap. */
        if (skipped)
            memmove(arr, arr + skipped, (hub->count - skipped) * sizeof *arr);
        *n = hub->count - skipped;
    }
    pthread_mutex_unlock(&hub->mu);
    return arr ? 0 : -1;
}

int fakeapi__hub_close_client(fakeapi__hub *hub, const char *client)
{
    int n = 0;
    pthread_mutex_lock(&hub->mu);
    for (struct fakeapi__watch *w = hub->head; w; w = w->next) {
        if (fakeapi__agent_is(w->client, client)) {
            watch_close_locked(w, false);
            n++;
        }
    }
    pthread_mutex_unlock(&hub->mu);
    return n;
}
